"""The one progress-bar helper: tqdm on stderr, off when quiet or when stderr is not a terminal."""

from __future__ import annotations

import sys

__all__ = ["progress_bar"]


class _Off:
    """A bar that is off: yields the iterable unchanged, counts nothing, draws nothing.

    Not a disabled tqdm: tqdm creates a ``multiprocessing`` lock (a named semaphore) even when
    disabled, and a pool worker that is killed at the end of a budget leaves it to the resource
    tracker, which then warns about "leaked semaphore objects" on the command's stderr.
    """

    disable = True

    def __init__(self, iterable=None, total=None):
        self.iterable, self.total, self.n = iterable, total, 0

    def __iter__(self):
        return iter(self.iterable if self.iterable is not None else ())

    def __len__(self):
        return len(self.iterable) if self.iterable is not None else int(self.total or 0)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, n=1):
        self.n += n

    def close(self):
        pass

    def refresh(self, *args, **kwargs):
        pass

    def set_description(self, *args, **kwargs):
        pass

    def set_postfix(self, *args, **kwargs):
        pass


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
        False (``progress=False``; the command line's quiet option) turns it off; so does a stderr that is not a terminal
        (pipes, files, CI logs).  A bar that is off yields the iterable unchanged and its ``update``
        and ``close`` do nothing, so callers never branch on it (and it is not a tqdm: see :class:`_Off`).
    """
    if not enabled or not sys.stderr.isatty():
        return _Off(iterable, total)
    from tqdm import tqdm

    from algorank.metadata.text import escape

    return tqdm(iterable, total=total, desc=escape(desc), unit=unit, file=sys.stderr, leave=False)
