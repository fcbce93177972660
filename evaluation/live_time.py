"""What a live test costs, from meta-data times: the live time model.

The meta-data (LCDB) records the time of ONE fit of a learner on a dataset and no
predict time.  A live test in :func:`recommender.recommend.recommend` is a ``k``-fold
cross-validation: ``k`` fits, ``k`` predictions, plus a fixed cost per test (splitting,
cloning, scoring several metrics, bookkeeping).  Ranking with the single-fit time makes
learners whose cost is mostly prediction (kNN) or whose fit is a few milliseconds look
almost free, while live each of them still costs a fraction of a second.

:class:`TimeModel` maps a meta-data time ``t`` to the time of a live test::

    T = scale * t + overhead

with ``scale`` the number of folds and ``overhead`` the seconds a live test costs on top of
its fits.  The identity (``scale = 1``, ``overhead = 0``) is the plain meta-data time.

``overhead`` is calibrated, not fitted to the datasets it is judged on:

* :func:`calibrate_overhead` estimates it from live tests (wall-clock seconds minus
  ``folds x`` the measured mean fit time, median over tests) - e.g. from the user's own
  first tests;
* :data:`LIVE_OVERHEAD` is that estimate measured once on four small datasets shipped
  with scikit-learn (iris, wine, breast_cancer, digits; every learner of the portfolio,
  stratified 5-fold, one repetition; see ``tests/benchmarks/bench_live_overhead.py``),
  none of which is in the live benchmark set.  It is a property of this machine class and
  of the evaluator, not of any learner: no per-learner predict time is invented.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from metadata.errors import InputError

__all__ = ["TimeModel", "LIVE_OVERHEAD", "calibrate_overhead", "live_time_model"]

#: Seconds a live 5-fold test costs on top of its 5 fits (median over the 80 tests of
#: bench_live_overhead.py on sklearn iris/wine/breast_cancer/digits: 0.262 s; 2-core machine, loaded).
LIVE_OVERHEAD = 0.26


@dataclass(frozen=True)
class TimeModel:
    """``T = scale * t + overhead``: the time of a test from a meta-data time ``t``.

    Parameters
    ----------
    overhead : float
        Seconds added to every test (>= 0).
    scale : float
        Multiplier of the meta-data time (> 0), e.g. the number of CV folds.
    """

    overhead: float = 0.0
    scale: float = 1.0

    def __post_init__(self) -> None:
        o, s = float(self.overhead), float(self.scale)
        if not (math.isfinite(o) and o >= 0):
            raise InputError(f"time_overhead must be a finite number of seconds >= 0; got {self.overhead!r}")
        if not (math.isfinite(s) and s > 0):
            raise InputError(f"time_scale must be a finite number > 0; got {self.scale!r}")
        object.__setattr__(self, "overhead", o)
        object.__setattr__(self, "scale", s)

    @property
    def is_identity(self) -> bool:
        """True for ``scale = 1``, ``overhead = 0`` (times used as recorded)."""
        return self.overhead == 0.0 and self.scale == 1.0

    def apply(self, seconds) -> np.ndarray:
        """``scale * seconds + overhead`` elementwise (NaN stays NaN; identity returns the values unchanged)."""
        t = np.asarray(seconds, dtype=float)
        if self.is_identity:
            return t
        return t * self.scale + self.overhead

    def arrays(self, arrays):
        """A copy of a :class:`~evaluation.environments.MetaArrays` whose seconds are live test times.

        Used to simulate live tests in the leave-one-dataset-out benchmark (pass the result
        as the meta-data); the identity returns ``arrays`` itself.
        """
        if self.is_identity:
            return arrays
        return replace(arrays, seconds=self.apply(arrays.seconds), time_kind=f"{arrays.time_kind}:{self.describe()}")

    def describe(self) -> str:
        """Short text, e.g. ``5 x fit + 0.25 s``."""
        if self.is_identity:
            return "fit"
        return f"{self.scale:g} x fit + {self.overhead:g} s"


def live_time_model(folds: int, *, overhead: float = LIVE_OVERHEAD) -> TimeModel:
    """The live time model of a ``folds``-fold test: ``folds x t + overhead``."""
    if isinstance(folds, bool) or int(folds) != folds or folds < 1:
        raise InputError(f"folds must be an integer >= 1; got {folds!r}")
    return TimeModel(overhead=overhead, scale=int(folds))


def calibrate_overhead(seconds, fit_time_mean, folds) -> float:
    """Per-test overhead from live tests: median of ``seconds - folds * fit_time_mean``, at least 0.

    Parameters
    ----------
    seconds : array-like
        Wall-clock seconds of each live test.
    fit_time_mean : array-like
        Mean fit time per fold measured in that test.
    folds : int or array-like
        Folds of each test.

    Returns
    -------
    float

    Raises
    ------
    InputError
        When no test has finite values.
    """
    s = np.asarray(seconds, dtype=float)
    f = np.asarray(fit_time_mean, dtype=float)
    k = np.broadcast_to(np.asarray(folds, dtype=float), s.shape)
    if s.shape != f.shape:
        raise InputError(f"seconds and fit_time_mean must have the same length; got {s.shape} and {f.shape}")
    extra = s - k * f
    extra = extra[np.isfinite(extra)]
    if extra.size == 0:
        raise InputError("calibrate_overhead needs at least one test with finite seconds and fit time")
    return float(max(0.0, np.median(extra)))
