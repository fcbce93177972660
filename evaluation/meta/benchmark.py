"""Leave-one-dataset-out benchmarks, P sweeps, strategy comparisons and nested P tuning.

Every dataset of the meta-data in turn is the *new* dataset: the strategy is fitted on
the others, its policy is followed on the held-out dataset in a
:class:`~algorank.recommender.kernel.environments.SimulatedEnvironment` (learners without a result there
are skipped), and the resulting loss-time curve gives the dataset's MIL
(:mod:`algorank.recommender.kernel.loss_time`) and the Spearman correlation between the tested order and
the ideal order (by accuracy, and by the strategy's own score when it has one).

Two paths give the same result:

* **generic** (reference, any strategy): ``strategy.fit(meta without d).policy(info)``
  run through :func:`~algorank.recommender.kernel.trace.run_policy`;
* **fast**: a strategy that declares ``fast_loo = True`` has ``loo_orders(arrays, *, train=None)``,
  which returns all held-out orders at once (average ranking: total rank sums minus the held-out
  row), and the benchmark scores them vectorised.  The tests check that both paths agree exactly.

Strategies declare their capabilities as class attributes (``algorank.recommender.base.CAPABILITIES``;
an undeclared one is False) and the benchmark reads those, it does not probe for methods:
``sees_held_out = True`` (the oracle) is fitted on the full meta-data; ``needs_window = True``
gets the window through ``with_window(tmin, tmax)``; ``time_model_aware = True`` gets a live
time model through ``with_time_model``; ``has_dataset_scores = True`` is also scored against
its own ``dataset_scores``.

Two x axes (``axis``): ``"time"`` (default) charges each test its recorded time and
scores the MIL over the log-time window; ``"tests"`` counts tests (every test costs one
unit, :func:`~algorank.recommender.kernel.environments.tests_axis`): the paper's loss curve by number of
tests, and the per-dataset score (kept in the ``mil`` field, ``axis`` says which) is the
*mean loss over tests 1..K* (K = ``max_tests``, default the number of learners; a dataset
with fewer learners keeps its last loss).  The tests axis needs no time at all, so it
runs on accuracy-only meta-data; the time axis there is an InputError naming the
missing time column.  Strategies still rank with their own data (AR with P > 0 uses
the recorded times on either axis, and fails on meta-data without any).

Train on one set, score another: with ``test_datasets`` (a frozen held-out split,
:mod:`algorank.metadata.splits`, or test meta-data joined by :func:`join_test_meta`) every
strategy is fitted on the datasets outside the list and followed on each listed dataset in the
same simulated environment (adaptive strategies query its recorded runs); the fast paths get
``train`` as the mask of prior datasets, so both settings share one code path.

:func:`benchmark_strategies` also computes the user-facing metrics
(:mod:`algorank.evaluation.meta.user_metrics`) from the same traces.  A timed-out test
(status ``timeout``) is in the traces: it costs its lower-bound time and finds nothing.

Default window (:func:`default_window`): ``tmin`` is the median over datasets of the
fastest learner's time, ``tmax`` the median over datasets of the time to run every
learner, rounded outwards to powers of ten.  On the embedded LCDB snapshot (single-fit
train times) this gives [0.001 s, 100 s].  The window used is in every result.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from itertools import combinations
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from algorank.recommender.kernel.environments import (
    MetaArrays,
    SimulatedEnvironment,
    SkipUnavailable,
    meta_arrays,
    tests_axis,
)
from algorank.recommender.kernel.loss_time import (
    LossTimeCurve,
    MeanLossTimeCurve,
    check_window,
    loss_steps,
    mean_loss_by_tests,
    mean_loss_time_curve,
    mil_rows,
    spearman_rows,
)
from algorank.recommender.kernel.trace import run_policy
from algorank.evaluation.meta.user_metrics import (
    DEFAULT_BUDGETS,
    DEFAULT_EPS,
    check_budgets,
    check_eps,
    metrics_report,
)
from algorank.metadata.errors import InputError
from algorank.metadata.progress import progress_bar

__all__ = [
    "PAPER_P_GRID",
    "AXES",
    "mean_loss_over_tests",
    "default_window",
    "BenchmarkResult",
    "leave_one_dataset_out",
    "PSweepResult",
    "p_sweep",
    "ComparisonResult",
    "compare_strategies",
    "pair_effects",
    "NestedTuneResult",
    "tune_p_nested",
    "BenchmarkSuite",
    "benchmark_strategies",
    "join_test_meta",
]

logger = logging.getLogger(__name__)

#: The P grid of seed 004 (Table 2): 1/4 ... 1/256 and 0.
PAPER_P_GRID = (1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256, 0.0)
#: x axes of a leave-one-dataset-out benchmark.
AXES = ("time", "tests")


def _as_arrays(meta, metric: str, time_kind: str) -> MetaArrays:
    return meta if isinstance(meta, MetaArrays) else meta_arrays(meta, metric=metric, time_kind=time_kind)


def default_window(meta, *, metric: str = "accuracy", time_kind: str = "fit_time") -> tuple[float, float]:
    """The default MIL window of a meta-dataset, chosen from its times.

    ``tmin = 10 ** floor(log10(median_d min_j T_dj))`` and
    ``tmax = 10 ** ceil(log10(median_d sum_j T_dj))`` over the learners with a result
    on each dataset (times of 0 are ignored for the minimum).  If that leaves
    ``tmin >= tmax``, ``tmax = 1000 * tmin``.
    """
    arrays = _as_arrays(meta, metric, time_kind)
    sec = np.where(arrays.testable, arrays.seconds, np.nan)
    rows = arrays.available.any(axis=1)
    if not rows.any():
        raise InputError("no dataset has a learner with a result: cannot choose a time window")
    positive = np.where(sec > 0, sec, np.nan)[rows]
    fastest = np.nanmin(np.where(np.isnan(positive), np.inf, positive), axis=1)
    fastest = fastest[np.isfinite(fastest)]
    total = np.nansum(sec[rows], axis=1)
    total = total[total > 0]
    if fastest.size == 0 or total.size == 0:
        return 1.0, 1000.0
    tmin = 10.0 ** math.floor(math.log10(float(np.median(fastest))))
    tmax = 10.0 ** math.ceil(math.log10(float(np.median(total))))
    if tmin >= tmax:
        tmax = tmin * 1000.0
    return tmin, tmax


@dataclass(frozen=True, eq=False)
class BenchmarkResult:
    """Leave-one-dataset-out result of one strategy.

    Attributes
    ----------
    strategy : str
        Strategy name/spec.
    tmin, tmax : float
        The MIL window (seconds).
    datasets : tuple of str
        Evaluated datasets (those with at least one learner result).
    learners : tuple of str
        Learner ids (column indices of ``sequences``).
    mil : ndarray (n_datasets,)
        MIL per dataset (percentage points).
    spearman : ndarray (n_datasets,)
        Spearman correlation of the tested order with the ideal order by accuracy.
    spearman_score : ndarray (n_datasets,)
        The same with the ideal order by the strategy's own per-dataset score
        (NaN when the strategy has no ``dataset_scores``).
    sequences : int ndarray (n_datasets, n_learners)
        Tested learner indices in order, padded with -1.
    seconds, accuracies : ndarray (n_datasets, n_learners)
        Per test (0 / NaN padding).
    best, baseline : ndarray (n_datasets,)
        Best accuracy and pre-test accuracy per dataset.
    baseline_kind : tuple of str
        ``"majority"`` or ``"worst-learner"`` per dataset.
    path : str
        ``"fast"`` or ``"generic"``.
    axis : str
        ``"time"``: ``mil`` is the MIL over ``[tmin, tmax]`` seconds; ``"tests"``:
        ``mil`` is the mean loss over tests 1..K with ``tmin = 1``, ``tmax = K``
        and ``seconds`` = 1 per test.
    """

    strategy: str
    tmin: float
    tmax: float
    datasets: tuple
    learners: tuple
    mil: np.ndarray = field(repr=False)
    spearman: np.ndarray = field(repr=False)
    spearman_score: np.ndarray = field(repr=False)
    sequences: np.ndarray = field(repr=False)
    seconds: np.ndarray = field(repr=False)
    accuracies: np.ndarray = field(repr=False)
    best: np.ndarray = field(repr=False)
    baseline: np.ndarray = field(repr=False)
    baseline_kind: tuple = field(repr=False)
    path: str = "fast"
    axis: str = "time"

    @property
    def mean_mil(self) -> float:
        return float(np.mean(self.mil))

    @property
    def median_mil(self) -> float:
        return float(np.median(self.mil))

    @property
    def mean_spearman(self) -> float:
        s = self.spearman[~np.isnan(self.spearman)]
        return float(s.mean()) if s.size else float("nan")

    @property
    def n_tests(self) -> np.ndarray:
        return (self.sequences >= 0).sum(axis=1)

    def steps(self):
        """``(cumulative, losses, initial)`` of every dataset (see :func:`~algorank.recommender.kernel.loss_time.loss_steps`)."""
        return loss_steps(self.accuracies, self.seconds, self.best, self.baseline)

    def curve(self, dataset: str) -> LossTimeCurve:
        """The loss-time curve on one dataset."""
        try:
            i = self.datasets.index(str(dataset))
        except ValueError:
            raise InputError(f"dataset {dataset!r} is not in this benchmark result") from None
        n = int(self.n_tests[i])
        return LossTimeCurve(
            dataset=self.datasets[i],
            learners=tuple(self.learners[j] for j in self.sequences[i, :n]),
            accuracies=self.accuracies[i, :n].copy(),
            seconds=self.seconds[i, :n].copy(),
            best=float(self.best[i]),
            baseline=float(self.baseline[i]),
            baseline_kind=self.baseline_kind[i],
        )

    def mean_curve(self) -> MeanLossTimeCurve:
        """Exact pointwise mean loss-time curve over the datasets."""
        return mean_loss_time_curve(*self.steps())

    def mean_loss_by_tests(self) -> np.ndarray:
        """Mean loss after 0, 1, ... tests (a dataset that ran out keeps its last loss)."""
        _, losses, initial = self.steps()
        return mean_loss_by_tests(losses, initial, self.n_tests)

    def per_dataset(self) -> pd.DataFrame:
        """One row per dataset: mil, spearman, spearman_score, n_tests, baseline_kind, first learner."""
        return pd.DataFrame(
            {
                "dataset": list(self.datasets),
                "mil": self.mil,
                "spearman": self.spearman,
                "spearman_score": self.spearman_score,
                "n_tests": self.n_tests,
                "baseline_kind": list(self.baseline_kind),
                "first": [self.learners[s[0]] if s[0] >= 0 else "" for s in self.sequences],
            }
        )

    def summary(self) -> dict:
        """JSON-friendly summary (no per-dataset arrays)."""
        return {
            "strategy": self.strategy,
            "tmin": self.tmin,
            "tmax": self.tmax,
            "n_datasets": len(self.datasets),
            "mean_mil": self.mean_mil,
            "median_mil": self.median_mil,
            "mean_spearman": self.mean_spearman,
            "worst_learner_baseline_datasets": int(sum(k == "worst-learner" for k in self.baseline_kind)),
            "path": self.path,
            "axis": self.axis,
        }


def _prepare(strategy, tmin, tmax):
    if getattr(strategy, "needs_window", False):
        strategy = strategy.with_window(tmin, tmax)
    return strategy


def _compact(arrays: MetaArrays, orders: np.ndarray) -> np.ndarray:
    """Keep, in order, the learners testable on each row's dataset (a result or a censored timeout);
    -1 padding at the end."""
    orders = np.asarray(orders, dtype=np.int64)
    valid = orders >= 0
    g = np.where(valid, orders, 0)
    keep = valid & np.take_along_axis(arrays.testable, g, axis=1)
    perm = np.argsort(~keep, axis=1, kind="stable")
    out = np.take_along_axis(np.where(keep, orders, -1), perm, axis=1)
    return out


def _generic_sequences(strategy, meta, arrays: MetaArrays, rows: np.ndarray, train: np.ndarray, *,
                       progress: bool) -> np.ndarray:
    if isinstance(meta, MetaArrays):
        raise InputError(
            f"strategy {getattr(strategy, 'name', strategy)!r} has no fast path (loo_orders); "
            "the generic leave-one-dataset-out path needs a MetaDataset"
        )
    index = {l: j for j, l in enumerate(arrays.learners)}
    seq = np.full(arrays.shape, -1, dtype=np.int64)
    sees = getattr(strategy, "sees_held_out", False)
    fitted = strategy.fit(meta) if sees else None
    on_all_train = None  # datasets outside the training set (test meta-data) share one fit on all of it
    for d in progress_bar(rows, total=len(rows), desc=str(getattr(strategy, "name", "benchmark")), enabled=progress):
        dataset = arrays.datasets[d]
        env = SimulatedEnvironment(arrays, dataset)
        if not sees:
            if not train[d] and on_all_train is not None:
                fitted = on_all_train
            else:
                keep = [arrays.datasets[e] for e in np.flatnonzero(train) if e != d]
                if not keep:
                    raise InputError("leave-one-dataset-out needs at least 2 datasets")
                fitted = strategy.fit(meta.subset(datasets=keep))
                if not train[d]:
                    on_all_train = fitted
        policy = fitted.policy(meta.dataset_info(dataset))
        trace = run_policy(SkipUnavailable(policy, env.available), env, dataset=dataset)
        idx = [index[o.learner] for o in trace.observations]
        seq[d, : len(idx)] = idx
    return seq


def _sequences(strategy, meta, arrays, rows, train, *, fast: bool, progress: bool,
               time_model=None, scoring: MetaArrays | None = None) -> tuple[np.ndarray, str]:
    """Test sequences; ``arrays`` are what strategies rank with, ``scoring`` what the tests cost (default the same)."""
    scoring = arrays if scoring is None else scoring
    if fast and getattr(strategy, "fast_loo", False):
        # the arrays already carry the (live) test times the strategy ranks with; a strategy that sees the
        # held-out dataset (the oracle) optimises what is scored
        source = scoring if getattr(strategy, "sees_held_out", False) else arrays
        return _compact(scoring, strategy.loo_orders(source, train=train)), "fast"
    if time_model is not None and getattr(strategy, "time_model_aware", False):
        # fitted on the MetaDataset, the strategy must apply the same time model itself
        strategy = strategy.with_time_model(time_overhead=time_model.overhead, time_scale=time_model.scale,
                                            time_kind=_base_time_kind(arrays))
    return _generic_sequences(strategy, meta, scoring, rows, train, progress=progress), "generic"


def _base_time_kind(arrays: MetaArrays) -> str:
    """The meta-data time kind of (possibly time-model transformed) arrays (``fit_time:5 x fit + 0.2 s``)."""
    return arrays.time_kind.partition(":")[0]


def _baselines(arrays: MetaArrays):
    avail = arrays.available
    acc = np.where(avail, arrays.accuracy, np.nan)
    with np.errstate(all="ignore"):
        best = np.nanmax(np.where(avail, acc, -np.inf), axis=1)
        worst = np.nanmin(np.where(avail, acc, np.inf), axis=1)
    unknown = np.isnan(arrays.majority)
    baseline = np.where(unknown, worst, arrays.majority)
    kind = np.where(unknown, "worst-learner", "majority")
    return best, baseline, kind


def mean_loss_over_tests(losses: np.ndarray, n_tests: np.ndarray, max_tests: int) -> np.ndarray:
    """Per row, the mean of the loss after tests 1..``max_tests`` (a row that ran out keeps its last loss)."""
    los = np.atleast_2d(np.asarray(losses, dtype=float))
    n_tests = np.atleast_1d(np.asarray(n_tests, dtype=int))
    if los.shape[1] == 0:
        return np.full(los.shape[0], np.nan)
    idx = np.minimum(np.arange(max_tests)[None, :], np.maximum(n_tests, 1)[:, None] - 1)
    return np.take_along_axis(los, idx, axis=1).mean(axis=1)


def _score(strategy, arrays: MetaArrays, seq: np.ndarray, rows: np.ndarray, tmin: float, tmax: float, name: str,
           path: str, axis: str = "time") -> BenchmarkResult:
    seq = seq[rows]
    valid = seq >= 0
    g = np.where(valid, seq, 0)
    acc = np.where(valid, np.take_along_axis(arrays.accuracy[rows], g, axis=1), np.nan)
    sec = np.where(valid, np.take_along_axis(arrays.seconds[rows], g, axis=1), 0.0)
    best, baseline, kind = _baselines(arrays)
    best, baseline, kind = best[rows], baseline[rows], kind[rows]
    cum, losses, initial = loss_steps(acc, sec, best, baseline)
    if axis == "tests":
        mil = mean_loss_over_tests(losses, valid.sum(axis=1), int(tmax))
    else:
        mil = mil_rows(cum, losses, initial, tmin=tmin, tmax=tmax)
    nothing = valid & np.isnan(acc)  # timed-out tests found nothing: last in the ideal order
    rho = spearman_rows(np.where(nothing, -np.inf, acc), valid)
    if getattr(strategy, "has_dataset_scores", False):
        scores = np.where(nothing, -np.inf, strategy.dataset_scores(np.where(nothing, 0.0, acc), sec))
        rho_s = spearman_rows(np.where(valid, scores, np.nan), valid)
    else:
        rho_s = np.full(len(rows), np.nan)
    return BenchmarkResult(
        strategy=name,
        tmin=tmin,
        tmax=tmax,
        datasets=tuple(arrays.datasets[d] for d in rows),
        learners=tuple(arrays.learners),
        mil=mil,
        spearman=rho,
        spearman_score=rho_s,
        sequences=seq,
        seconds=sec,
        accuracies=acc,
        best=best,
        baseline=baseline,
        baseline_kind=tuple(str(k) for k in kind),
        path=path,
        axis=axis,
    )


def _window(arrays, tmin, tmax):
    dmin, dmax = default_window(arrays)
    return check_window(dmin if tmin is None else tmin, dmax if tmax is None else tmax)


def _rows(arrays: MetaArrays) -> np.ndarray:
    if len(arrays.datasets) < 2:
        raise InputError(
            f"leave-one-dataset-out needs at least 2 datasets; the meta-data has {len(arrays.datasets)}"
        )
    rows = np.flatnonzero(arrays.available.any(axis=1))
    if rows.size < 2:
        raise InputError("leave-one-dataset-out needs at least 2 datasets with learner results")
    return rows


def _check_axis(arrays: MetaArrays, axis: str) -> None:
    """The axis is known, and the time axis has times to work with."""
    if axis not in AXES:
        raise InputError(f"axis must be one of {', '.join(AXES)}; got {axis!r}")
    if axis == "time" and not arrays.has_times:
        column = arrays.time_kind.partition(":")[0]
        raise InputError(f"loss-time curves and MIL need test times, but the meta-data has no '{column}' values "
                         "(accuracy only); the loss curve by number of tests needs none: axis='tests'")


def _axis_setup(arrays: MetaArrays, axis: str, tmin, tmax, max_tests) -> tuple[MetaArrays, float, float]:
    """(scoring arrays, lo, hi) for an axis; validates the axis and the window or the number of tests."""
    if axis not in AXES:
        raise InputError(f"axis must be one of {', '.join(AXES)}; got {axis!r}")
    if axis == "tests":
        scoring = tests_axis(arrays)
        k = len(arrays.learners)
        if max_tests is None:
            max_tests = k
        if isinstance(max_tests, bool) or not isinstance(max_tests, (int, np.integer)) or max_tests < 1:
            raise InputError(f"max_tests must be a positive integer (number of tests); got {max_tests!r}")
        return scoring, 1.0, float(int(max_tests))
    _check_axis(arrays, axis)
    lo, hi = _window(arrays, tmin, tmax)
    return arrays, lo, hi


def leave_one_dataset_out(
    strategy,
    meta,
    *,
    tmin: float | None = None,
    tmax: float | None = None,
    metric: str = "accuracy",
    time_kind: str = "fit_time",
    fast: bool = True,
    progress: bool = False,
    time_model=None,
    axis: str = "time",
    max_tests: int | None = None,
    test_datasets: Sequence[str] | None = None,
) -> BenchmarkResult:
    """Benchmark a strategy by leave-one-dataset-out on a meta-dataset (or on test datasets).

    Parameters
    ----------
    strategy : Strategy
        Any object with ``name``, ``fit(meta)`` and ``policy(dataset_info)``; declared
        capabilities (module docstring) switch on ``loo_orders`` (fast path), ``dataset_scores``,
        ``with_window`` and ``with_time_model``.
    meta : MetaDataset or MetaArrays
        All datasets (MetaArrays only works with the fast path).
    tmin, tmax : float, optional
        MIL window in seconds; default :func:`default_window`.
    metric, time_kind : str
        What the simulated tests report.
    fast : bool
        Use the strategy's ``loo_orders`` when it declares ``fast_loo`` (default); False forces
        the generic fit-per-dataset path.
    progress : bool
        Show a progress bar on stderr (generic path, terminals only).
    time_model : TimeModel, optional
        Simulate live tests: every ``time_kind`` time ``t`` becomes ``scale * t + overhead``
        (:mod:`algorank.recommender.kernel.time_model`), both in what the tests cost and in what strategies rank
        with (fast paths rank on the transformed arrays; generic ``time_model_aware`` strategies
        get ``with_time_model``).  Default: the recorded times.
    axis : {"time", "tests"}
        x axis of the loss curve and what ``mil`` holds (module docstring).
    max_tests : int, optional
        ``axis="tests"``: K of the mean loss over tests 1..K (default: the number
        of learners).  Ignored on the time axis.

    Returns
    -------
    BenchmarkResult

    Raises
    ------
    InputError
        Fewer than two datasets, or a bad window (``tmin >= tmax``, ``tmin <= 0``),
        or the time axis on meta-data without times.
    """
    arrays = _as_arrays(meta, metric, time_kind)
    if time_model is not None:
        arrays = time_model.arrays(arrays)
    _check_axis(arrays, axis)
    scoring = tests_axis(arrays) if axis == "tests" else arrays
    rows, train = _split_rows(scoring, test_datasets)
    scope = scoring if test_datasets is None else scoring.take(rows)
    _, lo, hi = _axis_setup(scope, axis, tmin, tmax, max_tests)
    return _run(strategy, meta, arrays, rows, train, lo, hi, fast=fast, progress=progress, time_model=time_model,
                scoring=scoring, axis=axis)


def _run(strategy, meta, arrays: MetaArrays, rows, train, lo, hi, *, fast: bool, progress: bool,
         time_model, scoring: MetaArrays | None = None, axis: str = "time") -> BenchmarkResult:
    scoring = arrays if scoring is None else scoring
    strategy = _prepare(strategy, lo, hi)
    seq, path = _sequences(strategy, meta, arrays, rows, train, fast=fast, progress=progress, time_model=time_model,
                           scoring=scoring)
    name = str(getattr(strategy, "name", type(strategy).__name__))
    return _score(strategy, scoring, seq, rows, lo, hi, name, path, axis=axis)


def _split_rows(arrays: MetaArrays, test_datasets) -> tuple[np.ndarray, np.ndarray]:
    """(rows to score, training mask): leave-one-dataset-out over all datasets, or train on the datasets
    outside ``test_datasets`` and score those."""
    n = len(arrays.datasets)
    if test_datasets is None:
        return _rows(arrays), np.ones(n, dtype=bool)
    test = [str(d) for d in test_datasets]
    unknown = sorted(set(test) - set(arrays.datasets))
    if unknown:
        raise InputError(f"test dataset(s) {', '.join(unknown[:5])} are not in the meta-data")
    is_test = np.zeros(n, dtype=bool)
    is_test[[arrays.row(d) for d in test]] = True
    train = ~is_test
    has = arrays.available.any(axis=1)
    if not (train & has).any():
        raise InputError("no training dataset left: every dataset of the meta-data is a test dataset")
    rows = np.flatnonzero(is_test & has)
    if rows.size == 0:
        raise InputError("no test dataset has a learner with a result: nothing to score")
    skipped = int((is_test & ~has).sum())
    if skipped:
        logger.warning("%d test dataset(s) without any learner result are not scored", skipped)
    return rows, train


def join_test_meta(train, tests: Sequence) -> tuple:
    """One meta-dataset of the training meta-data and the test meta-data, and the test dataset ids.

    Parameters
    ----------
    train : MetaDataset
        What strategies are fitted on.
    tests : sequence of MetaDataset
        Scored with their recorded runs (adaptive strategies query them as their environment).

    Returns
    -------
    (MetaDataset, list of str)

    Raises
    ------
    InputError
        A dataset id in both the training and a test meta-data (exclude it from the training
        meta-data first), or in two test meta-datasets.
    """
    tests = list(tests)
    if not tests:
        raise InputError("give at least one test meta-dataset")
    have = set(train.dataset_ids)
    both = sorted({d for t in tests for d in t.dataset_ids} & have)
    if both:
        more = f" and {len(both) - 5} more" if len(both) > 5 else ""
        raise InputError(f"dataset(s) {', '.join(both[:5])}{more} are in both the training and the test meta-data; "
                         f"exclude them from the training meta-data (exclude_datasets=)")
    from algorank.metadata.dataset import MetaDataset

    test_ids = sorted({d for t in tests for d in t.dataset_ids})
    return MetaDataset.concat([train, *tests]), test_ids


@dataclass(frozen=True, eq=False)
class PSweepResult:
    """Leave-one-dataset-out results of AR-A3R over a grid of P.

    Attributes
    ----------
    grid : tuple of float
        The P values, in the order run.
    results : tuple of BenchmarkResult
        One per P.
    tmin, tmax : float
        The window.
    """

    grid: tuple
    results: tuple
    tmin: float
    tmax: float

    def table(self) -> pd.DataFrame:
        """Columns p, mean_mil, median_mil, mean_spearman (one row per P)."""
        return pd.DataFrame(
            {
                "p": list(self.grid),
                "mean_mil": [r.mean_mil for r in self.results],
                "median_mil": [r.median_mil for r in self.results],
                "mean_spearman": [r.mean_spearman for r in self.results],
            }
        )

    @property
    def best_p(self) -> float:
        """P with the smallest mean MIL (first in grid order on ties)."""
        means = [r.mean_mil for r in self.results]
        return float(self.grid[int(np.argmin(means))])

    def mil_matrix(self) -> np.ndarray:
        """Per-dataset MIL, shape (n_datasets, len(grid))."""
        return np.column_stack([r.mil for r in self.results])


def _check_grid(grid, upper: float = 1.0) -> tuple:
    grid = tuple(float(p) for p in grid)
    if not grid:
        raise InputError("the P grid is empty")
    bad = [p for p in grid if not (0.0 <= p <= upper)]
    if bad:
        raise InputError(f"every P of the grid must lie in [0, {upper:g}]; got {bad}")
    return grid


def p_sweep(
    meta,
    *,
    make_strategy: Callable[[float], object],
    grid: Sequence[float] = PAPER_P_GRID,
    tmin: float | None = None,
    tmax: float | None = None,
    metric: str = "accuracy",
    time_kind: str = "fit_time",
    fast: bool = True,
    time_model=None,
    upper: float = 1.0,
    progress: bool = False,
) -> PSweepResult:
    """Leave-one-dataset-out MIL for every P of ``grid``.

    Parameters
    ----------
    meta : MetaDataset or MetaArrays
        A MetaDataset when a strategy has no fast path (it is refitted without each dataset).
    make_strategy : callable
        ``make_strategy(p)`` returns the strategy for one P (e.g. ``AverageRanking(p=p)``).
    grid : sequence of float
        P values (default the paper's 1/4 ... 1/256, 0).
    tmin, tmax, metric, time_kind, fast, time_model, progress
        As in :func:`leave_one_dataset_out`.
    upper : float
        Largest P allowed (1 for A3R; 2 for the cost exponent of ``ei``).
    """
    grid = _check_grid(grid, upper)
    arrays = _as_arrays(meta, metric, time_kind)
    if time_model is not None:
        arrays = time_model.arrays(arrays)
    _, lo, hi = _axis_setup(arrays, "time", tmin, tmax, None)
    results = tuple(
        leave_one_dataset_out(make_strategy(p), arrays if fast and time_model is None else meta, tmin=lo, tmax=hi,
                              metric=metric, time_kind=time_kind, fast=fast, time_model=time_model,
                              progress=progress)
        for p in grid
    )
    return PSweepResult(grid=grid, results=results, tmin=lo, tmax=hi)


@dataclass(frozen=True, eq=False)
class ComparisonResult:
    """Several strategies compared over the same datasets by their per-dataset MIL.

    Attributes
    ----------
    names : tuple of str
    mean_mil, median_mil : ndarray (k,)
    test : object
        ``wilcoxon_signed_rank`` result for two strategies, ``friedman`` result for more.
    posthoc : object or None
        All-pairwise post hoc on the Friedman average ranks (more than two strategies).
    average_ranks : ndarray (k,)
        Mean rank of each strategy's MIL over datasets (1 = lowest MIL; rescaled
        ranks when some MIL is missing).
    n_datasets : int
    omnibus_method : str
        Friedman, Durbin or Skillings-Mack (missing MILs): the rank test behind
        ``average_ranks`` and the post hoc.
    effects : tuple of dict
        One per pair ``(a, b)`` of strategies (in input order): ``mean_difference``
        of MIL ``a - b`` with its 95 % t interval (``ci_low``, ``ci_high``),
        ``rank_biserial`` r of the paired MILs (positive: a has the larger MIL),
        ``cliffs_delta`` of the two MIL samples and its ``magnitude``, over the
        datasets where both have a MIL (``n``).
    kendall_w : float
        Kendall's W of the strategies' MIL ranks (NaN when some MIL is missing).
    """

    names: tuple
    mean_mil: np.ndarray
    median_mil: np.ndarray
    test: object
    posthoc: object
    average_ranks: np.ndarray
    n_datasets: int
    omnibus_method: str = "Friedman"
    effects: tuple = ()
    kendall_w: float = float("nan")

    def to_dict(self) -> dict:
        out = {
            "strategies": list(self.names),
            "n_datasets": self.n_datasets,
            "mean_mil": dict(zip(self.names, self.mean_mil.tolist())),
            "average_rank": dict(zip(self.names, self.average_ranks.tolist())),
            "omnibus_method": self.omnibus_method,
            "test": {"method": self.test.method, "statistic": float(self.test.statistic),
                     "pvalue": float(self.test.pvalue)},
            "kendall_w": None if not np.isfinite(self.kendall_w) else float(self.kendall_w),
            "effects": [dict(e) for e in self.effects],
        }
        if self.posthoc is not None:
            out["posthoc"] = {
                "method": self.posthoc.method,
                "adjusted_pvalues": {
                    f"{self.names[i]} vs {self.names[j]}": float(self.posthoc.adjusted[i, j])
                    for i in range(len(self.names)) for j in range(i + 1, len(self.names))
                },
            }
        return out


def compare_strategies(results: Sequence[BenchmarkResult], *, posthoc_method: str = "holm",
                       alpha: float = 0.05) -> ComparisonResult:
    """Test whether strategies differ in per-dataset MIL.

    Two strategies: Wilcoxon signed-rank (Pratt zero handling) on the paired MILs.
    More: Friedman (lower MIL = better rank) and an all-pairwise post hoc on the
    average ranks (``posthoc_method``, default Holm).  All results must cover the
    same datasets (same meta-data).  A NaN MIL (a strategy without a score on a
    dataset) is a missing cell: the omnibus test is then Durbin or Skillings-Mack
    (:func:`evaluation.stats.omnibus`), the post hoc works on its standardised
    differences, and ``omnibus_method`` says which test was used.
    """
    from algorank.evaluation.stats import posthoc, wilcoxon_signed_rank
    from algorank.evaluation.stats.skillings_mack import omnibus, omnibus_pairwise_z

    results = list(results)
    if len(results) < 2:
        raise InputError(f"comparing strategies needs at least 2 results; got {len(results)}")
    ds = results[0].datasets
    for r in results[1:]:
        if r.datasets != ds:
            raise InputError("benchmark results to compare must cover the same datasets")
    names = tuple(r.strategy for r in results)
    if len(set(names)) != len(names):
        raise InputError(f"strategy names must be distinct to compare them; got {list(names)}")
    x = np.column_stack([r.mil for r in results])
    fr = omnibus(x, lower_is_better=True, labels=list(names))
    if len(results) == 2:
        test, ph = wilcoxon_signed_rank(x[:, 0], x[:, 1], zero_method="pratt", nan_policy="omit"), None
    else:
        test = fr
        z = None if fr.method.startswith("Friedman") else omnibus_pairwise_z(fr)
        ph = posthoc(fr.average_ranks, fr.n_datasets, method=posthoc_method, alpha=alpha, labels=list(names), z=z)
    with np.errstate(invalid="ignore"):
        return ComparisonResult(
            names=names,
            mean_mil=np.nanmean(x, axis=0),
            median_mil=np.nanmedian(x, axis=0),
            test=test,
            posthoc=ph,
            average_ranks=np.asarray(fr.average_ranks, dtype=float),
            n_datasets=len(ds),
            omnibus_method=str(fr.method),
            effects=tuple(pair_effects(x, names)),
            kendall_w=float(getattr(fr, "kendall_w", float("nan"))),
        )


def pair_effects(x: np.ndarray, names: Sequence[str], *, confidence: float = 0.95) -> list[dict]:
    """Effect sizes of every pair of columns of ``x`` (datasets x compared things), NaN rows skipped per pair.

    Returns one dict per pair ``(a, b)``, ``a`` before ``b`` in ``names``: ``n``,
    ``mean_difference`` (a - b) with its t interval ``ci_low``/``ci_high``,
    ``rank_biserial`` (matched pairs, Wilcoxon zeros dropped), ``cliffs_delta`` and its
    ``magnitude``.
    """
    from algorank.evaluation.stats import cliffs_delta, magnitude, paired_difference_ci, rank_biserial

    out = []
    for i, j in combinations(range(len(names)), 2):
        both = ~(np.isnan(x[:, i]) | np.isnan(x[:, j]))
        a, b = x[both, i], x[both, j]
        rec = {"a": str(names[i]), "b": str(names[j]), "n": int(both.sum())}
        if a.size >= 2:
            ci = paired_difference_ci(a, b, confidence=confidence)
            delta = cliffs_delta(a, b)
            rec.update(mean_difference=ci.estimate, ci_low=ci.low, ci_high=ci.high, confidence=confidence,
                       rank_biserial=rank_biserial(a, b), cliffs_delta=delta, magnitude=magnitude(delta))
        out.append(rec)
    return out


@dataclass(frozen=True, eq=False)
class NestedTuneResult:
    """Nested leave-one-dataset-out tuning of P.

    For each outer held-out dataset ``d``, P is chosen by the mean MIL of an inner
    leave-one-dataset-out over the other datasets only, then ``d`` is scored with the
    strategy fitted on all other datasets with that P.  ``mil`` is therefore an honest
    estimate: no P was chosen on the dataset it is scored on.

    Attributes
    ----------
    grid : tuple of float
    datasets : tuple of str
    chosen_p : ndarray (n_datasets,)
        P chosen for each outer dataset.
    mil : ndarray (n_datasets,)
        Outer MIL per dataset.
    tmin, tmax : float
    result : BenchmarkResult
        The outer traces (each dataset scored with its chosen P), named ``name``; the
        user-facing metrics are computed from it.
    """

    grid: tuple
    datasets: tuple
    chosen_p: np.ndarray
    mil: np.ndarray
    tmin: float
    tmax: float
    result: object = None

    @property
    def mean_mil(self) -> float:
        return float(np.mean(self.mil))

    @property
    def median_mil(self) -> float:
        return float(np.median(self.mil))

    def p_counts(self) -> dict:
        """How often each P was chosen."""
        return {p: int(np.sum(self.chosen_p == p)) for p in self.grid}


def tune_p_nested(
    meta,
    *,
    make_strategy: Callable[[float], object],
    grid: Sequence[float] = PAPER_P_GRID,
    tmin: float | None = None,
    tmax: float | None = None,
    metric: str = "accuracy",
    time_kind: str = "fit_time",
    progress: bool = False,
    name: str = "nested (P tuned per dataset)",
) -> NestedTuneResult:
    """Choose P by nested leave-one-dataset-out and report the outer MIL.

    Ties in the inner mean MIL go to the first P in grid order.  Uses the
    strategies' ``loo_orders(arrays, train=...)`` fast path when present (one call
    per outer dataset and P); otherwise it refits per inner dataset (slow).
    """
    grid = _check_grid(grid)
    arrays = _as_arrays(meta, metric, time_kind)
    _, lo, hi = _axis_setup(arrays, "time", tmin, tmax, None)
    rows = _rows(arrays)
    strategies = [_prepare(make_strategy(p), lo, hi) for p in grid]
    n = len(arrays.datasets)
    in_rows = np.zeros(n, dtype=bool)
    in_rows[rows] = True
    chosen = np.empty(len(rows))
    outer = np.empty(len(rows))
    outer_seq = np.full(arrays.shape, -1, dtype=np.int64)
    for i, d in enumerate(progress_bar(rows, total=len(rows), desc="nested P tuning", enabled=progress)):
        train = in_rows.copy()
        train[d] = False
        inner_rows = np.flatnonzero(train)
        inner_means = []
        outer_mils = []
        outer_rows = []
        for s in strategies:
            seq, path = _sequences(s, meta, arrays, inner_rows, train, fast=True, progress=False)
            if path == "generic":  # row d is not in inner_rows: compute it too
                seq[d] = _generic_sequences(s, meta, arrays, np.array([d]), train, progress=False)[d]
            both = np.append(inner_rows, d)
            r = _score(s, arrays, seq, both, lo, hi, "", path)
            inner_means.append(float(np.mean(r.mil[:-1])))
            outer_mils.append(float(r.mil[-1]))
            outer_rows.append(seq[d].copy())
        k = int(np.argmin(inner_means))
        chosen[i] = grid[k]
        outer[i] = outer_mils[k]
        outer_seq[d] = outer_rows[k]
    traces = _score(None, arrays, outer_seq, rows, lo, hi, name, "fast")
    return NestedTuneResult(
        grid=grid,
        datasets=tuple(arrays.datasets[d] for d in rows),
        chosen_p=chosen,
        mil=outer,
        tmin=lo,
        tmax=hi,
        result=traces,
    )


@dataclass(frozen=True, eq=False)
class BenchmarkSuite:
    """Several strategies benchmarked on the same meta-data and window.

    Attributes
    ----------
    results : tuple of BenchmarkResult
    comparison : ComparisonResult or None
        Significance test over datasets (None for a single strategy).
    tmin, tmax : float
    time_model : str
        How test times were obtained, in words (``recorded fit times``, ``live tests, 5 x fit + 0.08 s``).
    """

    results: tuple
    comparison: object
    tmin: float
    tmax: float
    axis: str = "time"
    time_model: str = "recorded fit times"
    metrics: object = None
    setting: str = "leave-one-dataset-out"
    n_train: int | None = None

    def to_frame(self) -> pd.DataFrame:
        """Same as :meth:`per_dataset_table`."""
        return self.per_dataset_table()

    def to_dict(self) -> dict:
        """``{"tmin", "tmax", "axis", "time_model", "setting", "strategies": {name: {mean_mil, median_mil,
        mean_spearman, per_dataset}}, "comparison", "user_metrics"}``; on the tests axis each strategy also has
        ``mean_loss_by_tests`` (after 0, 1, ... tests) and ``mean_mil`` is the mean loss over tests 1..K."""
        out = {
            "tmin": self.tmin,
            "tmax": self.tmax,
            "time_model": self.time_model,
            "axis": self.axis,
            "setting": self.setting,
            "n_datasets": len(self.results[0].datasets),
            "n_train_datasets": self.n_train,
            "strategies": {
                r.strategy: {
                    "mean_mil": r.mean_mil,
                    "median_mil": r.median_mil,
                    "mean_spearman": r.mean_spearman,
                    "n_datasets": len(r.datasets),
                    "worst_learner_baseline_datasets": int(sum(k == "worst-learner" for k in r.baseline_kind)),
                    "per_dataset": dict(zip(r.datasets, r.mil.tolist())),
                    **({"mean_loss_by_tests": r.mean_loss_by_tests().tolist()} if self.axis == "tests" else {}),
                }
                for r in self.results
            },
        }
        if self.comparison is not None:
            out["comparison"] = self.comparison.to_dict()
        if self.metrics is not None:
            out["user_metrics"] = self.metrics.to_dict()
        return out

    def per_dataset_table(self) -> pd.DataFrame:
        """Long table: strategy, dataset, mil, spearman, spearman_score, n_tests, baseline_kind, first, and
        the user-facing metrics (time_to_eps, eps_reached, loss@B, mil_to_B, total_time) when computed."""
        frames = []
        for r in self.results:
            f = r.per_dataset()
            if self.metrics is not None:
                m = self.metrics.get(r.strategy).per_dataset().drop(columns=["dataset", "mil"])
                f = pd.concat([f, m], axis=1)
            f.insert(0, "strategy", r.strategy)
            frames.append(f)
        return pd.concat(frames, ignore_index=True)


def benchmark_strategies(
    strategies: Sequence,
    meta,
    *,
    tmin: float | None = None,
    tmax: float | None = None,
    metric: str = "accuracy",
    time_kind: str = "fit_time",
    posthoc_method: str = "holm",
    progress: bool = False,
    time_model=None,
    axis: str = "time",
    max_tests: int | None = None,
    test_datasets: Sequence[str] | None = None,
    eps: float = DEFAULT_EPS,
    budgets: Sequence[float] = DEFAULT_BUDGETS,
    reference: str | None = None,
    time_words: str = "recorded fit times",
    setting: str | None = None,
) -> BenchmarkSuite:
    """Benchmark several strategies on the same datasets: MIL, a significance test, user-facing metrics.

    Leave-one-dataset-out over ``meta`` by default; with ``test_datasets``, every strategy is
    fitted on the other datasets and scored on those (see :func:`leave_one_dataset_out`).
    Two strategies are compared with the Wilcoxon signed-rank test on per-dataset MIL,
    more with Friedman and an all-pairwise post hoc (see :func:`compare_strategies`).
    ``time_model`` simulates live test times, ``axis`` and ``max_tests`` choose the x
    axis, as in :func:`leave_one_dataset_out`.

    The user-facing metrics (:mod:`algorank.evaluation.meta.user_metrics`: time to ``eps``
    accuracy points of the best, loss at each of ``budgets`` seconds, MIL from the cheapest test
    to each budget) are computed from the same traces on the time axis, with the oracle bounds
    and the comparison of every strategy against ``reference`` (a strategy name; default the first).
    """
    strategies = list(strategies)
    if not strategies:
        raise InputError("give at least one strategy to benchmark")
    names = [str(getattr(s, "name", type(s).__name__)) for s in strategies]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InputError(f"strategies must be distinct; repeated: {', '.join(dup)}")
    if reference is not None and str(reference) not in names:
        raise InputError(f"reference must name one of the strategies ({', '.join(names)}); got {reference!r}")
    eps = check_eps(eps)
    budgets = check_budgets(budgets)
    arrays = _as_arrays(meta, metric, time_kind)
    live = time_model.arrays(arrays) if time_model is not None else arrays
    _check_axis(live, axis)
    scoring = tests_axis(live) if axis == "tests" else live
    rows, train = _split_rows(scoring, test_datasets)
    _, lo, hi = _axis_setup(scoring if test_datasets is None else scoring.take(rows), axis, tmin, tmax, max_tests)
    results = []
    for s in strategies:
        logger.info("benchmarking %s (%s)", getattr(s, "name", type(s).__name__),
                    "leave-one-dataset-out" if test_datasets is None else "on the test datasets")
        results.append(_run(s, meta, live, rows, train, lo, hi, fast=True, progress=progress,
                            time_model=time_model, scoring=scoring, axis=axis))
    # the MIL comparison needs two datasets (a single test dataset still gets its metrics)
    comparison = compare_strategies(results, posthoc_method=posthoc_method) if len(results) > 1 and len(rows) > 1 \
        else None
    report = (metrics_report(results, live, eps=eps, budgets=budgets, reference=reference, time_axis=time_words)
              if axis == "time" else None)
    if setting is None:
        setting = ("leave-one-dataset-out" if test_datasets is None else
                   f"trained on {int(train.sum())} datasets, scored on {len(rows)} test datasets")
    return BenchmarkSuite(results=tuple(results), comparison=comparison, tmin=lo, tmax=hi, axis=axis,
                          time_model=time_words if axis == "time" else "tests (each test counts 1)",
                          metrics=report, setting=setting,
                          n_train=int(train.sum()) if test_datasets is not None else None)
