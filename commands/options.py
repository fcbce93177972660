"""Arguments shared by several commands, and the parsing of repeatable list options."""

from __future__ import annotations

import argparse

from algorank.metadata.errors import InputError

__all__ = ["add_common", "add_verbose", "add_data_options", "add_window", "add_time_model", "add_metrics_options",
           "add_heldout", "items", "numbers"]


def add_common(p: argparse.ArgumentParser, *, meta: bool = True, out: bool = False) -> None:
    """``--meta`` (with ``meta``), ``--json``, ``--quiet``, and with ``out`` the ``--out`` folder of files: the
    command line checks it before any work, writes the result's files there after printing, and lists them under
    ``"written"`` in ``--json``."""
    if meta:
        p.add_argument("--meta", metavar="PATH", action="append",
                       help="meta-data file (.parquet or .csv), an ASlib scenario folder, or an embedded set: modern, "
                            "broad, uci, lcdb, oboe, rdatasets, regression (default: modern); repeat to join several "
                            "with distinct datasets")
    p.add_argument("--json", action="store_true", help="print exactly one JSON object")
    if out:
        p.add_argument("--out", metavar="DIR", help="write plots and tables to this folder")
        p.set_defaults(out_files=True)
    p.add_argument("--quiet", action="store_true", help="no progress bars or log messages")


def add_verbose(p: argparse.ArgumentParser, *, detail: str) -> None:
    """``--verbose`` after the command too (``algorank benchmark ... --verbose``), the same switch as before it:
    the result's detail (``detail``) and debug messages.  Its default is suppressed so that it never resets a
    ``--verbose`` given before the command."""
    p.add_argument("--verbose", "-v", action="store_true", default=argparse.SUPPRESS,
                   help=f"also show {detail}, and debug messages")


def add_data_options(p: argparse.ArgumentParser) -> None:
    """``--task``, ``--keep-columns``, ``--drop-columns``: how a dataset file is read (commands that read one)."""
    p.add_argument("--task", choices=("auto", "classification", "regression"), default="auto",
                   help="auto (default): a numeric target is regression unless its values look like class labels "
                        "(whole numbers, few distinct values); classification: read whole numbers as class labels; "
                        "regression: read the target as a quantity")
    p.add_argument("--keep-columns", action="append", default=None, metavar="NAMES",
                   help="keep these columns as read (no id, free-text or date rule; space- or comma-separated, "
                        "repeatable)")
    p.add_argument("--drop-columns", action="append", default=None, metavar="NAMES",
                   help="drop these columns (space- or comma-separated, repeatable)")


def add_window(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tmin", type=float, default=None, metavar="S", help="MIL window start in seconds (default: from the data)")
    p.add_argument("--tmax", type=float, default=None, metavar="S", help="MIL window end in seconds (default: from the data)")


def add_time_model(p: argparse.ArgumentParser) -> None:
    p.add_argument("--time-model", choices=("fit", "live"), default="fit",
                   help="test times: as recorded (default), or what a live K-fold test costs, K x t + overhead")
    p.add_argument("--cv", type=int, default=5, metavar="K", help="--time-model live: folds of a live test (5)")
    p.add_argument("--time-overhead", type=float, default=None, metavar="SECONDS",
                   help="--time-model live: seconds per test on top of K x t (default: the calibrated constant)")


def add_metrics_options(p: argparse.ArgumentParser, *, reference_help: str) -> None:
    p.add_argument("--eps", type=float, default=1.0, metavar="POINTS",
                   help="time to reach within POINTS accuracy points (R² points for regression) of the best learner "
                        "(default 1)")
    p.add_argument("--budgets", nargs="+", default=None, metavar="S",
                   help="budgets in seconds of test time for the loss at budget and the MIL from the cheapest "
                        "test to the budget (default 1 10 60; space- or comma-separated)")
    p.add_argument("--reference", default=None, metavar="SPEC", help=reference_help)
    p.add_argument("--exclude-dataset", action="append", default=[], metavar="ID",
                   help="leave this dataset out of the (training) meta-data (repeatable)")
    p.add_argument("--per-dataset", action="store_true", help="--json: also every value per dataset (large)")


def add_heldout(p: argparse.ArgumentParser, flag: str, *, use: str) -> None:
    """``flag`` naming a frozen held-out split (``flag`` alone: the split of the embedded set named by --meta)."""
    p.add_argument(flag, nargs="?", const=True, default=None, metavar="NAME|FILE",
                   help=f"{use} (the split of the embedded set named by --meta, or a split name, or a file of "
                        "dataset ids)")


def items(values) -> list[str] | None:
    """Space- and comma-separated values of a repeatable option (None when not given)."""
    if values is None:
        return None
    return [x.strip() for item in values for x in str(item).split(",") if x.strip()]


def numbers(values, *, option: str):
    """:func:`items` as floats (a one-line error naming ``option`` otherwise)."""
    out = []
    for x in items(values) or []:
        try:
            out.append(float(x))
        except ValueError:
            raise InputError(f"{option} must be numbers of seconds; got {x!r}") from None
    return out or None
