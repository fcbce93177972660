"""Blocking Ctrl-C (SIGINT) in the calling thread while processes start, so that they start with it pending."""

from __future__ import annotations

import contextlib
import signal

__all__ = ["sigint_blocked"]


@contextlib.contextmanager
def sigint_blocked():
    """Block SIGINT in the calling thread while the block runs (POSIX; a no-op elsewhere).

    Processes started meanwhile from this thread start with SIGINT blocked (a signal mask survives
    ``fork`` and ``exec``), so a Ctrl-C while they start stays pending in them: the workers of
    :func:`watched_executor` then ignore it.  In the main thread a Ctrl-C arriving meanwhile is
    handled when the block ends.
    """
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
