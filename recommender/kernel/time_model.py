"""What a live test costs, from meta-data times: the live time model.

The meta-data (LCDB) records the time of ONE fit of a learner on a dataset and no
predict time.  A live test in :func:`algorank.recommender.live.recommend.recommend` is a ``k``-fold
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
  none of which is in the live benchmark set.  It is a property of the hardware and
  of the evaluator, not of any learner: no per-learner predict time is invented.

Meta-data measured by algorank's evaluator (the embedded ``uci`` set, or any
``algorank evaluate`` output) records the predict time too; then ``t`` is fit plus
predict time and the overhead is only the fixed part, :data:`LIVE_FIXED_OVERHEAD`
(:func:`default_overhead` picks the constant for the time kind).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from algorank.metadata.checks import check_folds
from algorank.metadata.errors import InputError

__all__ = ["TimeModel", "LIVE_OVERHEAD", "LIVE_FIXED_OVERHEAD", "default_overhead", "calibrate_overhead",
           "live_time_model", "meta_time_kind", "live_model_for", "live_arrays",
           "live_test_arrays", "first_fold_arrays"]

#: Seconds a live 5-fold test costs on top of its 5 fits, predictions included: median ``overhead``
#: of bench_live_overhead.py over 160 tests on sklearn iris/wine/breast_cancer/digits (two concurrent
#: single-thread processes, the conditions under which the embedded ``uci`` set was timed): 0.017 s.
#: (Measured again after the live path got faster; the first measurement, with the evaluator as it was then,
#: gave 0.078 s, and one with multi-threaded BLAS beside another job 0.26 s.)
LIVE_OVERHEAD = 0.017

#: Seconds a live 5-fold test costs on top of its 5 fits AND 5 predictions (splitting, cloning,
#: preprocessing, scoring, bookkeeping), for meta-data that records predict times: median ``fixed``
#: over the same 160 tests, 0.013 s (first measurement 0.070 s).  Raw rows:
#: tests/benchmarks/results/live_overhead.csv.  A live ``recommend`` on breast_cancer agrees: its cheap tests took
#: 22-40 ms where ``5 x (fit + predict)`` of the same learners in broad's ``wdbc`` plus 0.07 s gave 80-97 ms.
LIVE_FIXED_OVERHEAD = 0.013

#: Short names of the meta-data time kinds in :meth:`TimeModel.describe`.
_TIME_LABELS = {"fit_time": "fit", "fit_predict_time": "fit+predict"}


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
        """A copy of a :class:`~algorank.recommender.kernel.environments.MetaArrays` whose seconds are live test times.

        Used to simulate live tests in the leave-one-dataset-out benchmark (pass the result
        as the meta-data); the identity returns ``arrays`` itself.
        """
        if self.is_identity:
            return arrays
        label = f"{arrays.time_kind}:{self.describe(arrays.time_kind)}"
        return replace(arrays, seconds=self.apply(arrays.seconds), time_kind=label)

    def describe(self, time_kind: str = "fit_time") -> str:
        """Short text, e.g. ``5 x fit + 0.25 s`` or, for ``time_kind="fit_predict_time"``,
        ``5 x (fit+predict) + 0.013 s``."""
        kind = _TIME_LABELS.get(time_kind, time_kind)
        if self.is_identity:
            return kind
        term = kind if "+" not in kind else f"({kind})"
        return f"{self.scale:g} x {term} + {self.overhead:g} s"


def live_time_model(folds: int, *, overhead: float = LIVE_OVERHEAD) -> TimeModel:
    """The live time model of a ``folds``-fold test: ``folds x t + overhead``."""
    return TimeModel(overhead=overhead, scale=check_folds(folds, name="folds"))


def default_overhead(time_kind: str = "fit_time") -> float:
    """The calibrated per-test overhead on top of ``folds x`` the ``time_kind`` time.

    :data:`LIVE_OVERHEAD` for fit times (it then also covers prediction), and
    :data:`LIVE_FIXED_OVERHEAD` for fit plus predict times (meta-data measured by the
    evaluator, e.g. the embedded ``uci`` set).
    """
    if time_kind == "fit_time":
        return LIVE_OVERHEAD
    if time_kind == "fit_predict_time":
        return LIVE_FIXED_OVERHEAD
    raise InputError(f"time_kind must be fit_time or fit_predict_time; got {time_kind!r}")


def calibrate_overhead(seconds, fit_time_mean, folds, predict_time_mean=None) -> float:
    """Per-test overhead from live tests: median of ``seconds - folds * fit_time_mean``, at least 0.

    With ``predict_time_mean``, the fixed part: median of
    ``seconds - folds * (fit_time_mean + predict_time_mean)``.

    Parameters
    ----------
    seconds : array-like
        Wall-clock seconds of each live test.
    fit_time_mean : array-like
        Mean fit time per fold measured in that test.
    folds : int or array-like
        Folds of each test.
    predict_time_mean : array-like, optional
        Mean predict time per fold measured in each test.

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
    if predict_time_mean is not None:
        pt = np.asarray(predict_time_mean, dtype=float)
        if pt.shape != s.shape:
            raise InputError(f"seconds and predict_time_mean must have the same length; got {s.shape} and {pt.shape}")
        f = f + pt
    extra = s - k * f
    extra = extra[np.isfinite(extra)]
    if extra.size == 0:
        raise InputError("calibrate_overhead needs at least one test with finite seconds and fit time")
    return float(max(0.0, np.median(extra)))


def meta_time_kind(meta) -> str:
    """``"fit_predict_time"`` when the meta-data records predict times (finite and positive in at least
    95 % of its successful runs, e.g. the evaluator-built ``uci`` set), else ``"fit_time"`` (e.g. LCDB,
    whose predict times are NaN, or a table without the column, where they default to 0)."""
    runs = meta.runs
    ok = runs["status"] == "ok"
    if not ok.any():
        return "fit_time"
    pt = runs.loc[ok, "predict_time"].to_numpy(dtype=float)
    recorded = np.isfinite(pt) & (pt > 0)
    return "fit_predict_time" if recorded.mean() >= 0.95 else "fit_time"


def live_model_for(meta, *, folds: int = 5, overhead: float | None = None) -> tuple[TimeModel, str]:
    """The live time model of a ``folds``-fold test for this meta-data, and the time kind it applies to.

    ``T = folds x t + overhead`` with ``t`` the time :func:`meta_time_kind` picks and
    ``overhead`` by default :func:`default_overhead` for it.
    """
    kind = meta_time_kind(meta)
    return live_time_model(folds, overhead=default_overhead(kind) if overhead is None else overhead), kind


def live_arrays(meta, *, folds: int = 5, overhead: float | None = None, metric: str = "accuracy"):
    """Meta-data arrays whose seconds are live test times (:func:`live_model_for`), for simulating
    live tests.

    Returns
    -------
    arrays : MetaArrays
        Pass as the meta-data of the leave-one-dataset-out functions.
    model : TimeModel
    time_kind : str
    """
    from algorank.recommender.kernel.environments import meta_arrays

    model, kind = live_model_for(meta, folds=folds, overhead=overhead)
    return live_test_arrays(model, meta_arrays(meta, metric=metric, time_kind=kind), meta, metric=metric,
                            time_kind=kind), model, kind


def live_test_arrays(model: TimeModel, arrays, meta, *, metric: str = "accuracy", time_kind: str = "fit_time"):
    """``model.arrays(arrays)`` with each test's first fold (:func:`first_fold_arrays`, its seconds plus the
    test's overhead) when a test has several folds (``scale > 1``), the metric is accuracy (the one a live test
    screens on) and ``meta`` is a MetaDataset with its runs: what a simulated test that stops after its first
    fold finds and costs.  ``arrays`` are ``meta``'s."""
    live = model.arrays(arrays)
    if model.scale <= 1.0 or metric != "accuracy" or not hasattr(meta, "runs"):
        return live
    acc, sec = first_fold_arrays(meta, live, metric=metric, time_kind=time_kind)
    return replace(live, first_accuracy=acc, first_seconds=sec + model.overhead)


def first_fold_arrays(meta, arrays, *, metric: str = "accuracy", time_kind: str = "fit_time"):
    """``(accuracy, seconds)`` of each test's first run (the smallest repeat, then fold) on the rows and columns of
    ``arrays``: what a test that stops after its first fold finds and spends (its meta-data time, without any
    overhead).  NaN where a cell has fewer than two runs (nothing to stop early: OBOE records one mean per
    cell), a failed run, or no result in ``arrays``.
    """
    import pandas as pd

    runs = meta.runs
    shape = np.shape(arrays.accuracy)
    acc, sec = np.full(shape, np.nan), np.full(shape, np.nan)
    if runs.empty or metric not in runs.columns:
        return acc, sec
    t = runs["fit_time"].astype(float)
    if time_kind == "fit_predict_time" and "predict_time" in runs.columns:
        t = t + runs["predict_time"].astype(float).fillna(0.0)
    frame = pd.DataFrame({"dataset": runs["dataset"].astype(str), "learner": runs["learner"].astype(str),
                          "repeat": runs["repeat"], "fold": runs["fold"], "ok": runs["status"] == "ok",
                          "value": runs[metric].astype(float), "t": t})
    cells = frame.groupby(["dataset", "learner"], sort=False)
    size, all_ok = cells["ok"].transform("size"), cells["ok"].transform("all")
    first = frame[(size >= 2) & all_ok].sort_values(["dataset", "learner", "repeat", "fold"], kind="stable")
    first = first.drop_duplicates(["dataset", "learner"], keep="first")
    rows = {d: i for i, d in enumerate(arrays.datasets)}
    cols = {l: j for j, l in enumerate(arrays.learners)}
    i = first["dataset"].map(rows).to_numpy(dtype=float)
    j = first["learner"].map(cols).to_numpy(dtype=float)
    keep = np.isfinite(i) & np.isfinite(j)
    i, j = i[keep].astype(int), j[keep].astype(int)
    acc[i, j] = first["value"].to_numpy(dtype=float)[keep]
    sec[i, j] = first["t"].to_numpy(dtype=float)[keep]
    bad = ~(np.isfinite(acc) & np.isfinite(sec) & np.isfinite(arrays.accuracy) & np.isfinite(arrays.seconds))
    acc[bad], sec[bad] = np.nan, np.nan
    return acc, sec
