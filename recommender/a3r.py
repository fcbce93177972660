"""A3R and A3R': accuracy and runtime combined into one score (Abdulrahman, Brazdil, van Rijn and Vanschoren 2018, eq. 3 and 4).

* A3R of learner ``j`` against a reference learner ``ref`` on one dataset::

      A3R = (SR_j / SR_ref) / (T_j / T_ref) ** P

* A3R' (fixed reference ``SR_ref = T_ref = 1``)::

      A3R' = SR_j / T_j ** P

With a fixed reference per dataset A3R is A3R' times the positive constant
``T_ref ** P / SR_ref``, so both rank the learners of a dataset identically; the
library ranks with A3R'.  ``P = 0`` ignores time (AR0).

Times are clipped to ``time_floor`` seconds (default :data:`TIME_FLOOR` = 1e-6 s, well
below any measured fit time) before any ratio or power, so a recorded time of 0 gives
a large but finite score instead of a division by zero.

Success rates are raised to ``score_floor`` (default :data:`SCORE_FLOOR` = 1e-6) in the same
way.  An accuracy is never 0 in practice, but a regression score ``max(R², 0)`` is 0 for every
learner no better than predicting the mean.  Without the floor all of them would score exactly 0
whatever their time (and a ratio against such a reference would divide by zero); with it, a
learner that gives nothing still ranks below any learner that gives something (a score of
``1e-6`` needs a time ``10**(6/P)`` times shorter to catch up with a score of 1), and among the
learners that give nothing the fastest comes first, since it wastes the least time.
"""

from __future__ import annotations

import math

import numpy as np

from algorank.metadata.errors import InputError

__all__ = ["TIME_FLOOR", "SCORE_FLOOR", "check_p", "clip_time", "clip_score", "a3r", "a3r_prime"]

#: Smallest time (seconds) used in A3R; smaller times, including 0, are raised to it.
TIME_FLOOR = 1e-6
#: Smallest success rate used in A3R; smaller scores (a regression score of 0) are raised to it.
SCORE_FLOOR = 1e-6


def check_p(p, *, given=None, upper: float = 1.0) -> float:
    """Validate the A3R exponent: a finite number in [0, ``upper``] (default 1); return it as float.

    The one place of P's error messages (:func:`algorank.recommender.spec.parse_p` parses the text
    forms and calls this); ``given`` is what the user typed, named in the message (default ``p``).
    ``upper`` is 2 for the cost exponent of ``ei``.
    """
    shown = p if given is None else given
    try:
        value = float(p)
    except (TypeError, ValueError):
        raise InputError(f"P must be a number in [0, {upper:g}] such as 1/64, 0.015625 or 0; got {shown!r}") from None
    if not (math.isfinite(value) and 0.0 <= value <= upper):
        raise InputError(f"P must lie in [0, {upper:g}]; got {shown!r}")
    return value


def clip_time(seconds, *, time_floor: float = TIME_FLOOR) -> np.ndarray:
    """Raise times below ``time_floor`` (including 0) to it; NaN stays NaN."""
    if not (time_floor > 0):
        raise InputError(f"time_floor must be > 0 seconds; got {time_floor!r}")
    t = np.asarray(seconds, dtype=float)
    return np.where(np.isnan(t), np.nan, np.maximum(t, time_floor))


def clip_score(sr, *, score_floor: float = SCORE_FLOOR) -> np.ndarray:
    """Raise success rates below ``score_floor`` (including 0) to it; NaN stays NaN."""
    s = np.asarray(sr, dtype=float)
    return np.where(np.isnan(s), np.nan, np.maximum(s, score_floor))


def a3r(sr, seconds, sr_ref, seconds_ref, *, p: float, time_floor: float = TIME_FLOOR) -> np.ndarray:
    """A3R of learners against a reference: ``(SR / SR_ref) / (T / T_ref) ** P``.

    Parameters
    ----------
    sr, seconds : array-like
        Success rate (accuracy, or any higher-is-better score in [0, 1], raised to
        :data:`SCORE_FLOOR`) and time of the learners.
    sr_ref, seconds_ref : array-like
        The reference learner's success rate and time (broadcast).
    p : float
        Weight of time, in [0, 1].
    time_floor : float
        Times are clipped to this before the ratio.
    """
    p = check_p(p)
    t = clip_time(seconds, time_floor=time_floor)
    t_ref = clip_time(seconds_ref, time_floor=time_floor)
    return (clip_score(sr) / clip_score(sr_ref)) / (t / t_ref) ** p


def a3r_prime(sr, seconds, *, p: float, time_floor: float = TIME_FLOOR) -> np.ndarray:
    """A3R' = ``SR / T ** P`` (A3R with a fixed reference of SR = T = 1).

    Missing cells (NaN in either input) give NaN; scores are raised to :data:`SCORE_FLOOR` first.
    """
    p = check_p(p)
    t = clip_time(seconds, time_floor=time_floor)
    return clip_score(sr) / t**p
