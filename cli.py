"""The ``algorank`` command line: parse, call one :mod:`algorank.api` function, print its result.

No logic lives here.  A command prints the result's text (:func:`algorank.results.to_text`) or one
JSON object (``--json``), then writes its files under ``--out`` (checked before any work; a write
failure is one ``error: cannot write ...`` line, nothing half-written is left).  An
:class:`~algorank.metadata.errors.InputError` is one line ``error: ...`` and exit 2, any other
:class:`~algorank.metadata.errors.AlgorankError` exit 1, an interrupt exit 130.  To add a command: one module under
``commands/`` (its arguments, its API call: see :mod:`algorank.commands`) and one line of :data:`COMMANDS`.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from typing import Sequence

from algorank.metadata.errors import AlgorankError, InputError
from algorank.metadata.io import check_out_dir, json_dumps, output_folder
from algorank.metadata.text import escape, escaping_handler, terminal_text

__all__ = ["main", "build_parser", "command_name", "COMMANDS", "EXIT_NOTHING_TESTED"]


class _Version(argparse.Action):
    def __call__(self, parser, *_):  # the version comes from the API only when asked for (--help stays light)
        from algorank.api import version

        print(version())
        parser.exit()


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose usage errors are one line ``error: ...`` and exit 2."""

    def error(self, message: str):  # noqa: D401 - argparse API
        raise InputError(f"{self.prog.split()[-1] if ' ' in self.prog else self.prog}: {_suggest_choice(message)}")

    def parse_args(self, args=None, namespace=None):  # noqa: D401 - argparse API
        """As argparse's, with a did-you-mean for each unrecognized option (the command's and the global ones)."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            sub = getattr(self, "commands", {}).get(getattr(parsed, "command", None))
            raise InputError(f"{self.prog}: {_unrecognized(extras, [self, sub])}")
        return parsed


def _options(parsers) -> list[str]:
    """The long option strings of ``parsers`` (None entries skipped)."""
    return [s for p in parsers if p is not None for a in p._actions for s in a.option_strings if s.startswith("--")]


def _unrecognized(extras: list, parsers) -> str:
    """``unrecognized arguments: ...`` with the closest option to each misspelt one (difflib's close matches)."""
    import difflib

    options = {o.lstrip("-"): o for o in _options(parsers)}  # compared without the dashes
    hints = []
    for token in extras:
        flag = str(token).split("=", 1)[0]
        if flag.startswith("-") and len(flag.lstrip("-")) > 1:
            close = difflib.get_close_matches(flag.lstrip("-"), list(options), n=1, cutoff=0.7)
            if close and options[close[0]] not in hints:
                hints.append(options[close[0]])
    text = "unrecognized arguments: " + " ".join(str(t) for t in extras)
    return text + (f"; did you mean {' or '.join(hints)}?" if hints else "")


def _suggest_choice(message: str) -> str:
    """argparse's ``invalid choice: 'X' (choose from ...)`` with the closest choice added (a misspelt command)."""
    import difflib
    import re

    m = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if not m:
        return message
    choices = [c.strip().strip("'\"") for c in m.group(2).split(",")]
    close = difflib.get_close_matches(m.group(1), choices, n=1, cutoff=0.6)
    return message + (f"; did you mean {close[0]!r}?" if close else "")


def _check_out(args):
    """``--out`` checked before any work (a folder that is, or can become, writable); None without it."""
    return check_out_dir(args.out) if getattr(args, "out", None) else None


def _finish(args, result, out=None, code: int = 0) -> int:
    """Print ``result`` (text, or one JSON object naming the files to come), then write its files under ``out``."""
    from algorank.results import output_files, saved_files, to_text, write_files

    names = output_files(result) if out is not None else []
    if args.json:
        d = result.to_dict()
        if isinstance(d, dict) and args.out_files and "written" not in d:
            d["written"] = saved_files(result) + [str(out / n) for n in names]  # printed first, then written
        print(json_dumps(d))
    else:
        print(terminal_text(to_text(result, verbose=getattr(args, "verbose", False))))  # no raw control character
    later = getattr(args, "write_after_print", None)  # a file of the command's own (recommend --save-model)
    if later is not None:
        sys.stdout.flush()
        saved = later()
        if not args.json:
            print(terminal_text("\n".join(f"wrote {w}" for w in saved)))
        if saved and getattr(result, "saved_model", "") is None:  # the report below names the file just written
            from dataclasses import replace

            result = replace(result, saved_model=str(saved[0]))
    if names:
        sys.stdout.flush()
        with output_folder(out) as folder:
            written = write_files(result, folder)
        if not args.json:
            print(terminal_text("\n".join(f"wrote {w}" for w in written)))
    return code


# ---------------------------------------------------------------- the commands
#: The commands, in ``--help`` order: one line each, naming the module that declares it (:mod:`algorank.commands`).
COMMANDS: list[str] = [
    # the main job first, then the research commands, then the meta-data's own
    "algorank.commands.recommend",
    "algorank.commands.evaluate",
    "algorank.commands.rank",
    "algorank.commands.benchmark",
    "algorank.commands.tune_p",
    "algorank.commands.compare",
    "algorank.commands.multitest",
    "algorank.commands.info",
    "algorank.commands.pull",
    "algorank.commands.build_meta",
    "algorank.commands.snapshot",
    "algorank.commands.export",
]
#: Exit code of ``recommend`` when no learner was tested successfully (budget used up, or every test failed).
EXIT_NOTHING_TESTED = 3


def command_name(module: str) -> str:
    """The subcommand of a command module: its file name with ``-`` for ``_`` (``algorank.commands.tune_p``: tune-p)."""
    return module.rpartition(".")[2].replace("_", "-")


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser (one subcommand per entry of :data:`COMMANDS`)."""
    parser = _Parser(prog="algorank", description="Which learners should I try first on this dataset?")
    parser.add_argument("--verbose", "-v", action="store_true",
                        help="log debug messages; benchmark, tune-p and multitest also print their detail")
    parser.add_argument("--version", action=_Version, nargs=0, help="print algorank's version and exit")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND")
    parser.commands = {}  # name -> its parser, for the did-you-mean of a misspelt option
    for module in COMMANDS:
        command = importlib.import_module(module)
        p = sub.add_parser(command_name(module), help=command.HELP)
        p.set_defaults(command_module=command, out_files=False)  # out_files: add_common(p, out=True)
        command.add_arguments(p)
        parser.commands[command_name(module)] = p
    return parser


def _check_early(args) -> None:
    """Inputs checked before any heavy import: the ``DATASET`` file of a command that reads one."""
    from algorank.metadata.io import check_dataset_file, is_dataset_spec

    dataset = getattr(args, "dataset", None)
    if isinstance(dataset, str) and dataset.strip() and not is_dataset_spec(dataset):
        check_dataset_file(dataset.strip())


def _run(args) -> int:
    """Run the parsed command: its input checks, the ``--out`` check, its API call, then print and write."""
    command = args.command_module
    if hasattr(command, "check"):
        command.check(args)
    out = _check_out(args) if args.out_files else None
    from algorank.metadata.io import protected_inputs

    with protected_inputs(*(getattr(args, n, None) for n in ("dataset", "datasets", "meta"))):  # never written
        result = command.run(args)
        result, code = result if isinstance(result, tuple) else (result, 0)
        return code if result is None else _finish(args, result, out, code)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (0 ok, 1 failure, 2 bad input, 3 ``recommend`` tested nothing
    successfully (:data:`EXIT_NOTHING_TESTED`), 130 interrupted).

    Without ``argv`` (the process's command line) budgets count from the start of the process and an
    interrupted command exits at once; with ``argv`` (tests, other programs) budgets count from the call.
    """
    started = None if argv is None else time.perf_counter()  # None: the budget counts from the process start
    try:  # everything, imports included, is inside: an interrupt at any moment exits 130 without a traceback
        import logging

        args = build_parser().parse_args(argv)
        args.started = started
        _check_early(args)  # a missing dataset file is reported before the data libraries are imported
        if argv is None:  # a whole process of its own (not --help or a usage error, which end above)
            from algorank.api import end_with_this_process
            from algorank.metadata.allocator import keep_freed_memory

            keep_freed_memory()  # large temporaries reuse freed memory
            end_with_this_process()  # whatever the command starts ends with it, SIGKILL included
        level = logging.DEBUG if args.verbose else (logging.ERROR if getattr(args, "quiet", False) else logging.WARNING)
        logging.basicConfig(level=level, handlers=[escaping_handler(sys.stderr)])
        code = int(_run(args))  # a command may return its own code (130: interrupted, results kept)
        if code == 130:  # the results so far went to stdout; stderr, where the progress went, says why it ended
            sys.stderr.write("interrupted\n")
        return _exit_now(code) if argv is None and (code == 130 or args.command == "recommend") else code
    except AlgorankError as exc:  # InputError: the user's mistake (2); anything else of algorank's (1)
        sys.stderr.write(f"error: {_one_line(exc)}\n")
        return 2 if isinstance(exc, InputError) else 1
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return _exit_now(130) if argv is None else 130
    except RuntimeError as exc:  # Ctrl-C inside a class body's __set_name__ (an import) arrives wrapped in one
        if not _from_interrupt(exc):
            raise
        sys.stderr.write("interrupted\n")
        return _exit_now(130) if argv is None else 130
    except BrokenPipeError:  # e.g. `algorank rank | head`
        return 0


def _from_interrupt(exc: BaseException) -> bool:
    """Whether ``exc`` was raised by a KeyboardInterrupt (its ``__cause__`` or ``__context__`` chain holds one)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def _exit_now(code: int) -> int:
    """End the process at once after Ctrl-C or ``recommend`` (its budget counts until the process has ended): Python's
    shutdown of numpy, pandas, scikit-learn takes up to a second; output, log handlers, finalizers are done here."""
    import logging
    import os

    try:
        if "algorank.api" in sys.modules:  # a fold server or worker pool still warming up would hold the pipes open
            sys.modules["algorank.api"].stop_processes()
        sys.stdout.flush()
        sys.stderr.flush()
        logging.shutdown()
        from multiprocessing import util

        util._exit_function()
    finally:
        os._exit(code)
    return code  # pragma: no cover - not reached


#: The library names its parameters; a message about one of them names the flag here (the one mapping from
#: Python parameters to flags; a parameter not listed is its name with ``-`` for ``_``).
_FLAGS = {"random_state": "--seed", "cv": "--cv", "budget_seconds": "--budget", "top": "--top", "folds": "--folds",
          "timeout": "--timeout", "n_jobs": "--n-jobs", "alpha": "--alpha", "save_model": "--save-model",
          "repeats": "--repeats", "stop": "--stop", "aslib": "--aslib", "out": "--out", "offline": "--offline",
          "cache_dir": "--cache", "server": "--server", "assemble_to": "--assemble-to", "store": "--store",
          "exclude_heldout": "--exclude-heldout", "heldout": "--heldout", "test_meta": "--test-meta"}


def _flag(name: str) -> str:
    return _FLAGS.get(name) or "--" + name.replace("_", "-")


def _flags_for_parameters(text: str, parameters) -> str:
    """``name=`` of each parameter an :class:`InputError` names, as its flag: ``repeats='auto'`` -> ``--repeats
    auto``, ``offline=True`` -> ``--offline``, ``aslib=`` -> ``--aslib`` (only the names the error lists)."""
    import re

    for name in parameters:
        def flag(m, f=_flag(name)):
            if m.group(1):  # name=True: a switch
                return f
            if m.group(2):  # name='word': the word as typed on the command line
                return f"{f} {m.group(2)}"
            return f + (" " if m.group(3) and (m.group(3).isalnum() or m.group(3) in "'\"") else "")

        text = re.sub(rf"(?<![\w.-]){re.escape(name)}=(?:(True)\b|'([\w./-]+)'|(?=(.?)))", flag, text)
    return text


#: Python parameters named inside a message, and the flags the command line says instead.
_PHRASES = (("task='classification'", "--task classification"), ("task='regression'", "--task regression"),
            ("keep_columns", "--keep-columns"), ("drop_columns", "--drop-columns"), ("(target=)", "(--target)"))


def _one_line(exc: BaseException) -> str:
    text = " ".join((str(exc).strip() or type(exc).__name__).split())
    text = _flags_for_parameters(text, getattr(exc, "parameters", ()))
    for param, flag in _PHRASES:
        text = text.replace(param, flag)
    text = text.replace("force=True", "--force")
    head, sep, rest = text.partition(" ")
    flag = _FLAGS.get(head) if rest.startswith(("must ", "(number of folds) must ", "'", "cannot ")) else None
    return escape((flag or head) + sep + rest)


if __name__ == "__main__":
    sys.exit(main())
