"""The one progress-bar helper: tqdm on stderr, off when quiet or when stderr is not a terminal."""

from __future__ import annotations

import sys

__all__ = ["progress_bar"]


def progress_bar(iterable=None, *, total: int | None = None, desc: str = "", unit: str = "it",
                 enabled: bool = True):
    """A tqdm bar on stderr that is removed when done.

    Parameters
    ----------
    iterable : iterable, optional
        Wrapped and yielded from; without it, drive the bar with ``update(n)`` (``total`` may grow).
    total : int, optional
        Number of steps, when ``len(iterable)`` does not say.
    desc, unit : str
        Label and unit of the bar (the label may hold a dataset name: it is escaped).
    enabled : bool
        False (``--quiet``, ``progress=False``) turns it off; so does a stderr that is not a terminal
        (pipes, files, CI logs).  A bar that is off yields the iterable unchanged and its ``update``
        and ``close`` do nothing, so callers never branch on it.
    """
    from tqdm import tqdm

    from algorank.metadata.text import escape

    return tqdm(iterable, total=total, desc=escape(desc), unit=unit, file=sys.stderr, leave=False,
                disable=not enabled or not sys.stderr.isatty())
