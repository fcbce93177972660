"""The ``algorank`` command line: parse, call one library function, render.

No logic lives here.  Every subcommand parses its arguments, calls one library
function, and renders the result: a readable table by default, exactly one JSON
object with ``--json``, files under ``--out``.  Only algorank's own exceptions
are caught: :class:`~metadata.errors.InputError` (a user mistake) prints one
line ``error: ...`` and exits 2; any other :class:`~metadata.errors.AlgorankError`
exits 1.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Callable, Sequence

from metadata.errors import AlgorankError, InputError
from metadata.io import json_dumps

__all__ = ["main", "build_parser"]

logger = logging.getLogger("algorank")


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose usage errors are one line ``error: ...`` and exit 2."""

    def error(self, message: str):  # noqa: D401 - argparse API
        raise InputError(f"{self.prog.split()[-1] if ' ' in self.prog else self.prog}: {message}")


# ---------------------------------------------------------------- rendering helpers
def _emit_json(obj) -> None:
    sys.stdout.write(json_dumps(obj) + "\n")


def _emit(text: str) -> None:
    sys.stdout.write(text.rstrip("\n") + "\n")


def _fmt_seconds(s: float) -> str:
    if s != s:  # NaN
        return "n/a"
    if s < 1:
        return f"{s * 1000:.3g} ms"
    if s < 120:
        return f"{s:.3g} s"
    if s < 7200:
        return f"{s / 60:.3g} min"
    return f"{s / 3600:.3g} h"


def _add_common(p: argparse.ArgumentParser, *, meta: bool = True, out: bool = False) -> None:
    if meta:
        p.add_argument("--meta", metavar="PATH", help="meta-data file (.parquet or .csv); default: the embedded LCDB snapshot")
    p.add_argument("--json", action="store_true", help="print exactly one JSON object")
    if out:
        p.add_argument("--out", metavar="DIR", help="write plots and tables to this folder")
    p.add_argument("--quiet", action="store_true", help="no progress bars or log messages")


def _load_meta(args):
    from metadata.snapshot import load_meta

    return load_meta(args.meta)


# ---------------------------------------------------------------- info
def _add_info(sub) -> None:
    p = sub.add_parser("info", help="summarise a meta-dataset (default: the embedded snapshot)")
    _add_common(p)
    p.set_defaults(func=_run_info)


def _run_info(args) -> None:
    meta = _load_meta(args)
    d = meta.describe()
    if args.json:
        _emit_json(d.to_dict())
        return
    _emit(
        "\n".join(
            [
                f"source            {d.source}",
                f"datasets          {d.datasets}",
                f"learners          {d.learners}",
                f"cells             {d.cells} of {d.datasets * d.learners} (missing {d.missing_fraction:.1%})",
                f"runs              {d.runs} ({d.failed_runs} failed; median {d.repeats_per_cell_median:g} per cell)",
                f"fit time          {_fmt_seconds(d.fit_time_min)} .. {_fmt_seconds(d.fit_time_max)} "
                f"(median {_fmt_seconds(d.fit_time_median)})",
            ]
        )
    )


# ---------------------------------------------------------------- snapshot
def _add_snapshot(sub) -> None:
    p = sub.add_parser("snapshot", help="manage the embedded LCDB snapshot")
    ssub = p.add_subparsers(dest="snapshot_command", required=True, parser_class=_Parser)
    b = ssub.add_parser("build", help="rebuild the snapshot from the lcdb package (pip install 'algorank[lcdb]')")
    b.add_argument("--out", metavar="DIR", help="folder to write to (default: the installed package's data folder)")
    b.add_argument("--lcdb-dir", metavar="DIR", help="folder of LCDB's CSV files (default: the installed lcdb package)")
    b.add_argument("--json", action="store_true", help="print the written record as JSON")
    b.add_argument("--quiet", action="store_true", help="no log messages")
    b.set_defaults(func=_run_snapshot_build)


def _run_snapshot_build(args) -> None:
    from metadata.snapshot import build_snapshot

    record = build_snapshot(args.out, lcdb_dir=args.lcdb_dir)
    if args.json:
        _emit_json(record)
    else:
        _emit("\n".join(f"{k:<10}{v}" for k, v in record.items()))


# ---------------------------------------------------------------- wiring
# Each entry adds one subcommand; keep one function per subcommand above.
_COMMANDS: list[Callable] = [
    _add_info,
    _add_snapshot,
]


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser (one subcommand per entry of ``_COMMANDS``)."""
    parser = _Parser(prog="algorank", description="Which learners should I try first on this dataset?")
    parser.add_argument("--verbose", "-v", action="store_true", help="log debug messages")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND")
    for add in _COMMANDS:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (0 ok, 1 failure, 2 bad input, 130 interrupted)."""
    try:
        args = build_parser().parse_args(argv)
        level = logging.DEBUG if args.verbose else (logging.ERROR if getattr(args, "quiet", False) else logging.WARNING)
        logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
        args.func(args)
        return 0
    except InputError as exc:
        sys.stderr.write(f"error: {_one_line(exc)}\n")
        return 2
    except AlgorankError as exc:
        sys.stderr.write(f"error: {_one_line(exc)}\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130
    except BrokenPipeError:  # e.g. `algorank rank | head`
        return 0


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return " ".join(text.split())


if __name__ == "__main__":
    sys.exit(main())
