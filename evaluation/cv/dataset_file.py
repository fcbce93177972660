"""The checks of a dataset path that need no data library: the command line runs them before heavy imports.

A missing, empty or unreadable dataset file is the user's most common first mistake; it is
reported at once (this module imports nothing beyond the standard library), with the closest
file names of that folder when the name looks misspelt.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from algorank.metadata.errors import InputError
from algorank.metadata.text import escape

__all__ = ["check_dataset_file", "is_spec", "DATASET_SUFFIXES"]

#: File suffixes the dataset reader understands.
DATASET_SUFFIXES = (".arff", ".csv", ".txt", ".tsv", ".parquet", ".pq")


def is_spec(text: str) -> bool:
    """Whether ``text`` names a dataset that is not a file (``sklearn:NAME``, ``openml:ID``)."""
    return text.strip().startswith(("sklearn:", "openml:"))


def check_dataset_file(path) -> Path:
    """``path`` as a :class:`~pathlib.Path` when it is a non-empty file; else one :class:`InputError`.

    A missing file's error suggests the closest names in its folder (``did you mean 'iris.csv'?``).
    """
    p = Path(path)
    if not p.exists():
        hint = ""
        folder = p.parent if str(p.parent) else Path(".")
        try:
            names = [c.name for c in folder.iterdir() if c.suffix.lower() in DATASET_SUFFIXES][:5000]
        except OSError:
            names = []
        close = difflib.get_close_matches(p.name, names, n=1, cutoff=0.75)
        if close:
            hint = f"; did you mean {escape(str(folder / close[0]))!r}?"
        raise InputError(f"dataset file not found: {escape(str(p))!r}{hint}")
    if p.is_dir():
        raise InputError(f"dataset path is a directory, not a file: {escape(str(p))!r}")
    if p.stat().st_size == 0:
        raise InputError(f"dataset file is empty: {escape(str(p))!r}")
    return p
