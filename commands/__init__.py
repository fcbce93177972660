"""The commands of ``algorank``: one module each, registered by one line of :data:`algorank.cli.COMMANDS`.

A command module ``commands/NAME.py`` is the subcommand ``NAME`` (``-`` for ``_``: ``tune_p.py`` is ``tune-p``)
and declares

* ``HELP``: its line in ``algorank --help``;
* ``add_arguments(parser)``: its argparse arguments (:mod:`algorank.commands.options` has the shared ones;
  ``add_common(parser, out=True)`` gives the ``--out`` folder of files: checked before any work, written after
  printing, listed under ``"written"`` in ``--json``);
* ``run(args)``: calls one :mod:`algorank.api` function and returns its result, or ``(result, exit_code)``;
  a result None means nothing more to print;
* optionally ``check(args)``: input checks before the ``--out`` check.

:mod:`algorank.cli` prints the result (``to_text()`` or ``to_dict()``), writes its files and turns errors
into one ``error: ...`` line.  Like the CLI, a command imports only the API, the result and plot modules and
the error, I/O and text helpers, and imports the API inside ``run`` (``--help`` stays light).
"""

__all__: list[str] = []
