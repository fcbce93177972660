"""Where the user's seconds go: the phases of one recommend call, counted from the command's start.

:class:`PhaseClock` splits the wall-clock time from ``started`` (the start of the command, or of
the call) into the phases of :data:`PHASES`: ``import`` (from ``started`` to the call: starting
Python and importing algorank; 0 for a call from Python), ``load`` (the dataset and the
meta-data), ``landmark`` (the dataset's landmarkers), ``plan`` (fitting the strategy, its
predictions and the planned order), ``tests`` (the live loop) and ``refit`` (the best learner
on all the data).  ``total`` is their sum.  ``Recommendation.timings`` holds them.
"""

from __future__ import annotations

import time
from typing import Callable

__all__ = ["PHASES", "PhaseClock"]

#: The phases, in the order they happen.
PHASES = ("import", "load", "landmark", "plan", "tests", "refit")


class PhaseClock:
    """Seconds spent in each phase since ``started``.

    Parameters
    ----------
    started : float
        ``clock()`` value of the start of the command (everything before the call is ``import``).
    clock : callable
        Time source.
    """

    def __init__(self, started: float, clock: Callable[[], float] = time.perf_counter) -> None:
        self.started, self.clock = float(started), clock
        self._mark = clock()
        self.seconds = {phase: 0.0 for phase in PHASES}
        self.seconds["import"] = max(self._mark - self.started, 0.0)

    def lap(self, phase: str) -> float:
        """Charge the time since the last lap to ``phase``; return it."""
        if phase not in self.seconds:
            raise ValueError(f"unknown phase {phase!r}")
        now = self.clock()
        spent = max(now - self._mark, 0.0)
        self.seconds[phase] += spent
        self._mark = now
        return spent

    def elapsed(self) -> float:
        """Seconds since ``started``."""
        return self.clock() - self.started

    def left(self, budget: float | None) -> float | None:
        """Seconds left of ``budget`` (None without one)."""
        return None if budget is None else budget - self.elapsed()

    def to_dict(self) -> dict:
        """Phase -> seconds, plus ``total``."""
        return {**{k: float(v) for k, v in self.seconds.items()}, "total": float(sum(self.seconds.values()))}
