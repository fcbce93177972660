"""Leave-one-dataset-out benchmarks, P sweeps, strategy comparisons and nested P tuning.

Every dataset of the meta-data in turn is the *new* dataset: the strategy is fitted on
the others, its policy is followed on the held-out dataset in a
:class:`~algorank.evaluation.meta.environments.SimulatedEnvironment` (learners without a result there
are skipped), and the resulting loss-time curve gives the dataset's MIL
(:mod:`algorank.evaluation.meta.loss_time`) and the Spearman correlation between the tested order and
the ideal order (by accuracy, and by the strategy's own score when it has one).

Two paths give the same result:

* **generic** (reference, any strategy): ``strategy.fit(meta without d).policy(info)``
  run through :func:`~algorank.evaluation.meta.trace.run_policy`;
* **fast** (duck-typed): a strategy with ``loo_orders(arrays, *, train=None)`` returns all
  held-out orders at once (average ranking: total rank sums minus the held-out row), and
  the benchmark scores them vectorised.  The tests check that both paths agree exactly.

Strategies with ``sees_held_out = True`` (the oracle) are fitted on the full meta-data;
those with ``needs_window = True`` get the window through ``with_window(tmin, tmax)``.

Default window (:func:`default_window`): ``tmin`` is the median over datasets of the
fastest learner's time, ``tmax`` the median over datasets of the time to run every
learner, rounded outwards to powers of ten.  On the embedded LCDB snapshot (single-fit
train times) this gives [0.001 s, 100 s].  The window used is in every result.
"""

from __future__ import annotations

import logging
import math
import sys
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from algorank.evaluation.meta.environments import MetaArrays, SimulatedEnvironment, SkipUnavailable, meta_arrays
from algorank.evaluation.meta.loss_time import (
    LossTimeCurve,
    MeanLossTimeCurve,
    check_window,
    loss_steps,
    mean_loss_by_tests,
    mean_loss_time_curve,
    mil_rows,
    spearman_rows,
)
from algorank.evaluation.meta.trace import run_policy
from algorank.metadata.errors import InputError

__all__ = [
    "PAPER_P_GRID",
    "default_window",
    "BenchmarkResult",
    "leave_one_dataset_out",
    "PSweepResult",
    "p_sweep",
    "ComparisonResult",
    "compare_strategies",
    "NestedTuneResult",
    "tune_p_nested",
    "BenchmarkSuite",
    "benchmark_strategies",
]

logger = logging.getLogger(__name__)

#: The P grid of seed 004 (Table 2): 1/4 ... 1/256 and 0.
PAPER_P_GRID = (1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256, 0.0)


def _progress(iterable, *, total: int, desc: str, enabled: bool):
    if not enabled or not sys.stderr.isatty():
        return iterable
    from tqdm import tqdm

    return tqdm(iterable, total=total, desc=desc, file=sys.stderr, leave=False)


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
    sec = np.where(arrays.available, arrays.seconds, np.nan)
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
        """``(cumulative, losses, initial)`` of every dataset (see :func:`~algorank.evaluation.meta.loss_time.loss_steps`)."""
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
        }


def _prepare(strategy, tmin, tmax):
    if getattr(strategy, "needs_window", False):
        strategy = strategy.with_window(tmin, tmax)
    return strategy


def _compact(arrays: MetaArrays, orders: np.ndarray) -> np.ndarray:
    """Keep, in order, the learners with a result on each row's dataset; -1 padding at the end."""
    orders = np.asarray(orders, dtype=np.int64)
    valid = orders >= 0
    g = np.where(valid, orders, 0)
    keep = valid & np.take_along_axis(arrays.available, g, axis=1)
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
    fitted = strategy.fit(meta) if getattr(strategy, "sees_held_out", False) else None
    for d in _progress(rows, total=len(rows), desc=str(getattr(strategy, "name", "benchmark")), enabled=progress):
        dataset = arrays.datasets[d]
        env = SimulatedEnvironment(arrays, dataset)
        if fitted is None or not getattr(strategy, "sees_held_out", False):
            keep = [arrays.datasets[e] for e in np.flatnonzero(train) if e != d]
            if not keep:
                raise InputError("leave-one-dataset-out needs at least 2 datasets")
            fitted = strategy.fit(meta.subset(datasets=keep))
        policy = fitted.policy(meta.dataset_info(dataset))
        trace = run_policy(SkipUnavailable(policy, env.available), env, dataset=dataset)
        idx = [index[o.learner] for o in trace.observations]
        seq[d, : len(idx)] = idx
    return seq


def _sequences(strategy, meta, arrays, rows, train, *, fast: bool, progress: bool,
               time_model=None) -> tuple[np.ndarray, str]:
    if fast and hasattr(strategy, "loo_orders"):
        # the arrays already carry the (live) test times the strategy ranks with
        return _compact(arrays, strategy.loo_orders(arrays, train=train)), "fast"
    if time_model is not None and hasattr(strategy, "with_time_model"):
        # fitted on the MetaDataset, the strategy must apply the same time model itself
        strategy = strategy.with_time_model(time_overhead=time_model.overhead, time_scale=time_model.scale,
                                            time_kind=_base_time_kind(arrays))
    return _generic_sequences(strategy, meta, arrays, rows, train, progress=progress), "generic"


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


def _score(strategy, arrays: MetaArrays, seq: np.ndarray, rows: np.ndarray, tmin: float, tmax: float, name: str,
           path: str) -> BenchmarkResult:
    seq = seq[rows]
    valid = seq >= 0
    g = np.where(valid, seq, 0)
    acc = np.where(valid, np.take_along_axis(arrays.accuracy[rows], g, axis=1), np.nan)
    sec = np.where(valid, np.take_along_axis(arrays.seconds[rows], g, axis=1), 0.0)
    best, baseline, kind = _baselines(arrays)
    best, baseline, kind = best[rows], baseline[rows], kind[rows]
    cum, losses, initial = loss_steps(acc, sec, best, baseline)
    mil = mil_rows(cum, losses, initial, tmin=tmin, tmax=tmax)
    rho = spearman_rows(acc, valid)
    if hasattr(strategy, "dataset_scores"):
        rho_s = spearman_rows(np.where(valid, strategy.dataset_scores(acc, sec), np.nan), valid)
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
) -> BenchmarkResult:
    """Benchmark a strategy by leave-one-dataset-out on a meta-dataset.

    Parameters
    ----------
    strategy : Strategy
        Any object with ``fit(meta)`` and ``policy(dataset_info)``; optionally
        ``loo_orders`` (fast path), ``dataset_scores``, ``sees_held_out``, ``needs_window``.
    meta : MetaDataset or MetaArrays
        All datasets (MetaArrays only works with the fast path).
    tmin, tmax : float, optional
        MIL window in seconds; default :func:`default_window`.
    metric, time_kind : str
        What the simulated tests report.
    fast : bool
        Use the strategy's ``loo_orders`` when it has one (default); False forces
        the generic fit-per-dataset path.
    progress : bool
        Show a progress bar on stderr (generic path, terminals only).
    time_model : TimeModel, optional
        Simulate live tests: every ``time_kind`` time ``t`` becomes ``scale * t + overhead``
        (:mod:`algorank.evaluation.meta.time_model`), both in what the tests cost and in what strategies rank
        with (fast paths rank on the transformed arrays; generic strategies get
        ``with_time_model``).  Default: the recorded times.

    Returns
    -------
    BenchmarkResult

    Raises
    ------
    InputError
        Fewer than two datasets, or a bad window (``tmin >= tmax``, ``tmin <= 0``).
    """
    arrays = _as_arrays(meta, metric, time_kind)
    if time_model is not None:
        arrays = time_model.arrays(arrays)
    rows = _rows(arrays)
    lo, hi = _window(arrays, tmin, tmax)
    strategy = _prepare(strategy, lo, hi)
    train = np.ones(len(arrays.datasets), dtype=bool)
    seq, path = _sequences(strategy, meta, arrays, rows, train, fast=fast, progress=progress, time_model=time_model)
    name = str(getattr(strategy, "name", type(strategy).__name__))
    return _score(strategy, arrays, seq, rows, lo, hi, name, path)


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


def _check_grid(grid) -> tuple:
    grid = tuple(float(p) for p in grid)
    if not grid:
        raise InputError("the P grid is empty")
    bad = [p for p in grid if not (0.0 <= p <= 1.0)]
    if bad:
        raise InputError(f"every P of the grid must lie in [0, 1]; got {bad}")
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
) -> PSweepResult:
    """Leave-one-dataset-out MIL for every P of ``grid``.

    Parameters
    ----------
    meta : MetaDataset or MetaArrays
    make_strategy : callable
        ``make_strategy(p)`` returns the strategy for one P (e.g. ``AverageRanking(p=p)``).
    grid : sequence of float
        P values (default the paper's 1/4 ... 1/256, 0).
    tmin, tmax, metric, time_kind, fast
        As in :func:`leave_one_dataset_out`.
    """
    grid = _check_grid(grid)
    arrays = _as_arrays(meta, metric, time_kind)
    lo, hi = _window(arrays, tmin, tmax)
    results = tuple(
        leave_one_dataset_out(make_strategy(p), arrays if fast else meta, tmin=lo, tmax=hi, metric=metric,
                              time_kind=time_kind, fast=fast)
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
        Mean rank of each strategy's MIL over datasets (1 = lowest MIL).
    n_datasets : int
    """

    names: tuple
    mean_mil: np.ndarray
    median_mil: np.ndarray
    test: object
    posthoc: object
    average_ranks: np.ndarray
    n_datasets: int

    def to_dict(self) -> dict:
        out = {
            "strategies": list(self.names),
            "n_datasets": self.n_datasets,
            "mean_mil": dict(zip(self.names, self.mean_mil.tolist())),
            "average_rank": dict(zip(self.names, self.average_ranks.tolist())),
            "test": {"method": self.test.method, "statistic": float(self.test.statistic),
                     "pvalue": float(self.test.pvalue)},
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
    same datasets (same meta-data).
    """
    from algorank.evaluation.stats import friedman, posthoc, wilcoxon_signed_rank

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
    fr = friedman(x, lower_is_better=True)
    if len(results) == 2:
        test, ph = wilcoxon_signed_rank(x[:, 0], x[:, 1], zero_method="pratt"), None
    else:
        test = fr
        ph = posthoc(fr.average_ranks, fr.n_datasets, method=posthoc_method, alpha=alpha, labels=list(names))
    return ComparisonResult(
        names=names,
        mean_mil=x.mean(axis=0),
        median_mil=np.median(x, axis=0),
        test=test,
        posthoc=ph,
        average_ranks=np.asarray(fr.average_ranks, dtype=float),
        n_datasets=len(ds),
    )


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
    """

    grid: tuple
    datasets: tuple
    chosen_p: np.ndarray
    mil: np.ndarray
    tmin: float
    tmax: float

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
) -> NestedTuneResult:
    """Choose P by nested leave-one-dataset-out and report the outer MIL.

    Ties in the inner mean MIL go to the first P in grid order.  Uses the
    strategies' ``loo_orders(arrays, train=...)`` fast path when present (one call
    per outer dataset and P); otherwise it refits per inner dataset (slow).
    """
    grid = _check_grid(grid)
    arrays = _as_arrays(meta, metric, time_kind)
    rows = _rows(arrays)
    lo, hi = _window(arrays, tmin, tmax)
    strategies = [_prepare(make_strategy(p), lo, hi) for p in grid]
    n = len(arrays.datasets)
    in_rows = np.zeros(n, dtype=bool)
    in_rows[rows] = True
    chosen = np.empty(len(rows))
    outer = np.empty(len(rows))
    for i, d in enumerate(_progress(rows, total=len(rows), desc="nested P tuning", enabled=progress)):
        train = in_rows.copy()
        train[d] = False
        inner_rows = np.flatnonzero(train)
        inner_means = []
        outer_mils = []
        for s in strategies:
            seq, path = _sequences(s, meta, arrays, inner_rows, train, fast=True, progress=False)
            if path == "generic":  # row d is not in inner_rows: compute it too
                seq[d] = _generic_sequences(s, meta, arrays, np.array([d]), train, progress=False)[d]
            both = np.append(inner_rows, d)
            r = _score(s, arrays, seq, both, lo, hi, "", path)
            inner_means.append(float(np.mean(r.mil[:-1])))
            outer_mils.append(float(r.mil[-1]))
        k = int(np.argmin(inner_means))
        chosen[i] = grid[k]
        outer[i] = outer_mils[k]
    return NestedTuneResult(
        grid=grid,
        datasets=tuple(arrays.datasets[d] for d in rows),
        chosen_p=chosen,
        mil=outer,
        tmin=lo,
        tmax=hi,
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
    time_model: str = "recorded fit times"

    def to_frame(self) -> pd.DataFrame:
        """Same as :meth:`per_dataset_table`."""
        return self.per_dataset_table()

    def to_dict(self) -> dict:
        """``{"tmin", "tmax", "time_model", "strategies": {name: {mean_mil, ..., per_dataset}}, "comparison"}``."""
        out = {
            "tmin": self.tmin,
            "tmax": self.tmax,
            "time_model": self.time_model,
            "strategies": {
                r.strategy: {
                    "mean_mil": r.mean_mil,
                    "median_mil": r.median_mil,
                    "mean_spearman": r.mean_spearman,
                    "n_datasets": len(r.datasets),
                    "worst_learner_baseline_datasets": int(sum(k == "worst-learner" for k in r.baseline_kind)),
                    "per_dataset": dict(zip(r.datasets, r.mil.tolist())),
                }
                for r in self.results
            },
        }
        if self.comparison is not None:
            out["comparison"] = self.comparison.to_dict()
        return out

    def per_dataset_table(self) -> pd.DataFrame:
        """Long table: strategy, dataset, mil, spearman, spearman_score, n_tests, baseline_kind, first."""
        frames = []
        for r in self.results:
            f = r.per_dataset()
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
) -> BenchmarkSuite:
    """Leave-one-dataset-out benchmark of several strategies plus a significance test.

    Two strategies are compared with the Wilcoxon signed-rank test on per-dataset MIL,
    more with Friedman and an all-pairwise post hoc (see :func:`compare_strategies`).
    ``time_model`` simulates live test times as in :func:`leave_one_dataset_out`.
    """
    strategies = list(strategies)
    if not strategies:
        raise InputError("give at least one strategy to benchmark")
    names = [str(getattr(s, "name", type(s).__name__)) for s in strategies]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InputError(f"strategies must be distinct; repeated: {', '.join(dup)}")
    arrays = _as_arrays(meta, metric, time_kind)
    if time_model is not None:
        live = time_model.arrays(arrays)
    else:
        live = arrays
    _rows(live)
    lo, hi = _window(live, tmin, tmax)
    results = []
    for s in strategies:
        logger.info("benchmarking %s (leave-one-dataset-out)", getattr(s, "name", type(s).__name__))
        source = arrays if hasattr(s, "loo_orders") else meta
        results.append(leave_one_dataset_out(s, source, tmin=lo, tmax=hi, metric=metric, time_kind=time_kind,
                                             progress=progress, time_model=time_model))
    comparison = compare_strategies(results, posthoc_method=posthoc_method) if len(results) > 1 else None
    return BenchmarkSuite(results=tuple(results), comparison=comparison, tmin=lo, tmax=hi)
