"""Leave-one-dataset-out scoring of one strategy: its test sequences (fast or generic path) and their MIL.

P sweeps and nested tuning are in :mod:`algorank.evaluation.meta.tuning`, the comparison statistics in
:mod:`algorank.evaluation.meta.comparison`, several strategies with user metrics in
:mod:`algorank.evaluation.meta.benchmark`.

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
  row), and the benchmark scores them vectorised; a strategy that declares ``fast_loo_fit = True``
  (``ei``, ``lt``) has ``loo_sequences(meta, scoring, rows, train)``, which prepares the meta-data once
  and gives every held-out test sequence the generic path would.  The tests check that both paths agree
  exactly.

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

:func:`~algorank.evaluation.meta.benchmark.benchmark_strategies` also computes the user-facing metrics
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
import threading
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from algorank.recommender.base import capability, strategy_name
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
    row_chunks,
    spearman_of_ranks,
    spearman_rows,
    take_rows,
    twice_ranks,
)
from algorank.recommender.kernel.time_model import live_test_arrays
from algorank.recommender.kernel.trace import encode, pack, run_policy
from algorank.metadata.errors import InputError
from algorank.metadata.progress import progress_bar

__all__ = [
    "AXES",
    "mean_loss_over_tests",
    "default_window",
    "MilSummary",
    "BenchmarkResult",
    "leave_one_dataset_out",
    "join_test_meta",
    "start_seconds",
]

logger = logging.getLogger(__name__)

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


class MilSummary:
    """``mean_mil`` and ``median_mil`` of a result's per-dataset ``mil`` array."""

    mil: np.ndarray

    @property
    def mean_mil(self) -> float:
        return float(np.mean(self.mil))

    @property
    def median_mil(self) -> float:
        return float(np.median(self.mil))


@dataclass(frozen=True, eq=False)
class BenchmarkResult(MilSummary):
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
    sequences : int ndarray (n_datasets, width)
        Tested learner indices in order, padded with -1 (``width`` is the number of learners, or more
        when a strategy tests a learner again after a capped test; ``traces`` knows which tests were capped).
    seconds, accuracies : ndarray (n_datasets, n_learners)
        Per test (0 / NaN padding); gathered from the scored arrays when read (``traces``
        holds what they are gathered from), so a result does not keep copies of them.
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
    traces: "_Traces" = field(repr=False)
    best: np.ndarray = field(repr=False)
    baseline: np.ndarray = field(repr=False)
    baseline_kind: tuple = field(repr=False)
    path: str = "fast"
    axis: str = "time"

    @property
    def accuracies(self) -> np.ndarray:
        """Accuracy of every test in order (NaN: found nothing, or padding)."""
        return self.traces.accuracies(self.sequences)

    @property
    def seconds(self) -> np.ndarray:
        """Seconds of every test in order (0 padding)."""
        return self.traces.seconds(self.sequences)

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
        one = self.traces.take([i])
        return LossTimeCurve(
            dataset=self.datasets[i],
            learners=tuple(self.learners[j] for j in self.sequences[i, :n]),
            accuracies=one.accuracies(self.sequences[i:i + 1])[0, :n].copy(),
            seconds=one.seconds(self.sequences[i:i + 1])[0, :n].copy(),
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
            "capped_tests": self.capped_tests,
        }

    @property
    def capped_tests(self) -> int:
        """How many tests the strategy stopped at their time limit (each charged what it used)."""
        charges = self.traces.charges
        return 0 if charges is None else int(np.isfinite(charges).sum())


def _prepare(strategy, tmin, tmax):
    if capability(strategy, "needs_window"):
        strategy = strategy.with_window(tmin, tmax)
    return strategy


def _compact(arrays: MetaArrays, orders: np.ndarray) -> np.ndarray:
    """Keep, in order, the learners testable on each row's dataset (a result or a censored timeout);
    -1 padding at the end."""
    orders = np.asarray(orders, dtype=np.int64)
    out = np.empty(orders.shape, dtype=np.int64)
    testable = arrays.testable
    pos = np.arange(orders.shape[1])
    for c in row_chunks(*orders.shape):
        o = orders[c]
        valid = o >= 0
        keep = valid & take_rows(testable[c], np.where(valid, o, 0))
        moved = np.argsort(~keep, axis=1, kind="stable")  # the kept entries first, each group in its order
        block = take_rows(o, moved)
        block[pos[None, :] >= keep.sum(axis=1)[:, None]] = -1
        out[c] = block
    return out


def _generic_sequences(strategy, meta, arrays: MetaArrays, rows: np.ndarray, train: np.ndarray, *,
                       progress: bool) -> np.ndarray:
    if isinstance(meta, MetaArrays):
        raise InputError(
            f"strategy {strategy_name(strategy)!r} has no fast path (loo_orders); "
            "the generic leave-one-dataset-out path needs a MetaDataset"
        )
    index = {l: j for j, l in enumerate(arrays.learners)}
    encoded = {}
    sees = capability(strategy, "sees_held_out")
    fitted = strategy.fit(meta) if sees else None
    on_all_train = None  # datasets outside the training set (test meta-data) share one fit on all of it
    for d in progress_bar(rows, total=len(rows), desc=strategy_name(strategy), enabled=progress):
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
        encoded[int(d)] = encode(trace, index)
    return pack(encoded, *arrays.shape)


def _with_charges(out) -> tuple[np.ndarray, np.ndarray | None]:
    """``(sequences, charges)`` of what ``loo_sequences`` returned (an array, or both when a test was capped)."""
    return out if isinstance(out, tuple) else (out, None)


def _sequences(strategy, meta, arrays, rows, train, *, fast: bool, progress: bool,
               time_model=None, scoring: MetaArrays | None = None) -> tuple[np.ndarray, str, np.ndarray | None]:
    """``(sequences, path, charges)``: the test sequences, which path gave them, and the seconds charged for each
    capped test (None when none was: :func:`~algorank.recommender.kernel.trace.pack`).  ``arrays`` are what
    strategies rank with, ``scoring`` what the tests cost (default the same)."""
    scoring = arrays if scoring is None else scoring
    if fast and capability(strategy, "fast_loo"):
        # the arrays already carry the (live) test times the strategy ranks with; a strategy that sees the
        # held-out dataset (the oracle) optimises what is scored
        source = scoring if capability(strategy, "sees_held_out") else arrays
        return _compact(scoring, strategy.loo_orders(source, train=train)), "fast", None
    if time_model is not None and capability(strategy, "time_model_aware"):
        # fitted on the MetaDataset, the strategy must apply the same time model itself
        strategy = strategy.with_time_model(time_overhead=time_model.overhead, time_scale=time_model.scale,
                                            time_kind=_base_time_kind(arrays))
    if fast and capability(strategy, "fast_loo_fit") and not isinstance(meta, MetaArrays) \
            and not capability(strategy, "sees_held_out"):
        seq, charges = _with_charges(strategy.loo_sequences(meta, scoring, rows, train))
        return seq, "fast", charges
    seq, charges = _generic_sequences(strategy, meta, scoring, rows, train, progress=progress)
    return seq, "generic", charges


def _base_time_kind(arrays: MetaArrays) -> str:
    """The meta-data time kind of (possibly time-model transformed) arrays (``fit_time:5 x fit + 0.2 s``)."""
    return arrays.time_kind.partition(":")[0]


_SHARED = threading.local()  # per thread, per scored arrays (the last ones only): what every strategy's scoring reads


def _shared(arrays: MetaArrays, what: str, make):
    """``make(arrays)``, kept while the same arrays are scored (a P sweep scores one set of arrays 8 times).

    Kept per thread, so that two threads scoring different arrays never read each other's values."""
    kept = getattr(_SHARED, "kept", None)
    if kept is None or kept.get("arrays") is not arrays:
        kept = _SHARED.kept = {"arrays": arrays}
    if what not in kept:
        kept[what] = make(arrays)
    return kept[what]


def _ideal_ranks(arrays: MetaArrays) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(twice ranks, ranked, count)``: every testable learner's rank by accuracy on each dataset (a timed-out
    test last), and how many learners each dataset has to test.  A sequence that tests all of them has
    exactly these ranks among its tests."""
    testable = arrays.testable
    ideal = np.where(testable, np.where(arrays.available, arrays.accuracy, -np.inf), np.nan)
    twice, ranked = twice_ranks(ideal)
    return twice, ranked, testable.sum(axis=1)


def _baselines(arrays: MetaArrays):
    return _shared(arrays, "baselines", _baselines_of)


def _baselines_of(arrays: MetaArrays):
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


@dataclass(frozen=True, eq=False)
class _Traces:
    """Where the accuracies and seconds of test sequences are read from: the scored arrays' rows, and for a
    capped test (``charges`` finite at its position) the seconds it was charged and no accuracy."""

    acc_source: np.ndarray
    sec_source: np.ndarray
    rows: np.ndarray
    charges: np.ndarray | None = None
    start: np.ndarray | None = None  # per row: seconds spent before the first test, added to its seconds

    def take(self, idx) -> "_Traces":
        idx = np.asarray(idx, dtype=np.int64)
        return _Traces(self.acc_source, self.sec_source, self.rows[idx],
                       None if self.charges is None else self.charges[idx],
                       None if self.start is None else self.start[idx])

    def _gather(self, source: np.ndarray, seq: np.ndarray, pad: float, *, capped: float | None) -> np.ndarray:
        out = np.empty(seq.shape)
        for c in row_chunks(seq.shape[0], seq.shape[1]):
            s = seq[c]
            valid = s >= 0
            got = np.where(valid, take_rows(source, np.where(valid, s, 0), self.rows[c]), pad)
            if self.charges is not None:
                charge = self.charges[c]
                got = np.where(np.isfinite(charge), charge if capped is None else capped, got)
            out[c] = got
        return out

    def accuracies(self, seq: np.ndarray) -> np.ndarray:
        return self._gather(self.acc_source, seq, np.nan, capped=np.nan)

    def seconds(self, seq: np.ndarray) -> np.ndarray:
        out = self._gather(self.sec_source, seq, 0.0, capped=None)
        if self.start is not None and out.shape[1]:
            out[:, 0] += np.where(seq[:, 0] >= 0, self.start, 0.0)  # what ran before the first test
        return out


def _without_capped(s: np.ndarray, charge: np.ndarray, acc: np.ndarray, sec: np.ndarray):
    """``(s, acc, sec)`` of rows of tests without their capped tests (the others in order, then padding): a
    learner tested again after a capped test counts once in the rank correlations."""
    keep = (s >= 0) & ~np.isfinite(charge)
    moved = np.argsort(~keep, axis=1, kind="stable")
    gone = np.arange(s.shape[1])[None, :] >= keep.sum(axis=1)[:, None]
    return (np.where(gone, -1, take_rows(s, moved)), np.where(gone, np.nan, take_rows(acc, moved)),
            np.where(gone, 0.0, take_rows(sec, moved)))


def start_seconds(strategy, meta, arrays: MetaArrays, train: np.ndarray | None = None) -> np.ndarray | None:
    """Seconds ``strategy`` spends on each dataset of ``arrays`` before its first test, or None when nothing.

    A strategy that conditions on landmarkers (capability ``conditions_on_landmarks`` with its ``landmarks``
    option on: ``ei``, ``eit``, ``eiu:landmarks=yes``, ``pstart``) has them measured on the new dataset before it plans, as ``recommend``
    does (:mod:`~algorank.recommender.live.landmarks`), and a strategy that does not never pays for them.  The
    simulation charges the dataset's recorded landmarker seconds (``landmark_1nn_time``, ``landmark_stump_time``:
    the 5 folds on the subsample of at most 2,000 rows that ``recommend`` measures without a budget) for each
    landmarker the strategy reads: those most ``train`` datasets have (the rule of
    :meth:`~algorank.recommender.ei.ConditionedStrategy.fit`) and this dataset has.  Meta-data without
    landmarkers (LCDB, OBOE) charge nothing.
    """
    if not capability(strategy, "conditions_on_landmarks") or not getattr(strategy, "landmarks", False) \
            or isinstance(meta, MetaArrays) or not hasattr(meta, "datasets"):
        return None
    from algorank.recommender.ei import landmark_columns

    table = meta.datasets.set_index("dataset").reindex(list(arrays.datasets))
    prior = np.ones(len(arrays.datasets), dtype=bool) if train is None else np.asarray(train, dtype=bool)
    if not prior.any():
        return None
    start = np.zeros(len(arrays.datasets))
    for c in landmark_columns(table[prior]):  # the rule the strategy fits by, on the prior datasets
        if f"{c}_time" not in table.columns:
            continue
        value = table[c].to_numpy(dtype=float)
        seconds = table[f"{c}_time"].to_numpy(dtype=float)
        start += np.where(np.isfinite(value) & np.isfinite(seconds) & (seconds > 0), seconds, 0.0)
    return start if start.any() else None


def _score(strategy, arrays: MetaArrays, seq: np.ndarray, rows: np.ndarray, tmin: float, tmax: float, name: str,
           path: str, axis: str = "time", charges: np.ndarray | None = None,
           start: np.ndarray | None = None) -> BenchmarkResult:
    """Score the test sequences ``seq`` (rows of ``arrays``); ``charges`` the seconds of capped tests, ``start``
    (per dataset of ``arrays``, :func:`start_seconds`) what ran before the first test, charged on the time axis."""
    seq = seq[rows]
    charges = None if charges is None or not np.isfinite(charges[rows]).any() else charges[rows]
    start = None if start is None or axis != "time" else np.asarray(start, dtype=float)[rows]
    traces = _Traces(arrays.accuracy, arrays.seconds, np.asarray(rows, dtype=np.int64), charges, start)
    best, baseline, kind = _baselines(arrays)
    best, baseline, kind = best[rows], baseline[rows], kind[rows]
    n = len(rows)
    mil, rho, rho_s = np.empty(n), np.empty(n), np.full(n, np.nan)
    scores = capability(strategy, "has_dataset_scores")
    # the strategy's own ranks of its scores, when it holds them for these arrays: gathered for fully tested rows
    score_ranks = strategy.score_ranks(arrays) if scores and capability(strategy, "has_score_ranks") else None
    for c in row_chunks(n, seq.shape[1]):  # rows are independent: score them a block at a time
        s = seq[c]
        valid = s >= 0
        part = traces.take(np.arange(n)[c])
        acc, sec = part.accuracies(s), part.seconds(s)
        cum, losses, initial = loss_steps(acc, sec, best[c], baseline[c])
        if axis == "tests":
            mil[c] = mean_loss_over_tests(losses, valid.sum(axis=1), int(tmax))
        else:
            mil[c] = mil_rows(cum, losses, initial, tmin=tmin, tmax=tmax)
        if charges is not None and np.isfinite(charges[c]).any():
            s, acc, sec = _without_capped(s, charges[c], acc, sec)
            valid = s >= 0
        nothing = valid & np.isnan(acc)  # timed-out tests found nothing: last in the ideal order
        twice, ranked, count = _shared(arrays, "ideal_ranks", _ideal_ranks)
        rc = traces.rows[c]
        full = valid.sum(axis=1) == count[rc]  # every testable learner tested: the dataset's own ranks
        rho[c] = np.nan
        if full.any():
            pick = np.where(valid[full], s[full], 0)
            rho[np.arange(n)[c][full]] = spearman_of_ranks(take_rows(twice, pick, rc[full]),
                                                          take_rows(ranked, pick, rc[full]) & valid[full],
                                                          valid[full])
        if not full.all():
            rho[np.arange(n)[c][~full]] = spearman_rows(np.where(nothing, -np.inf, acc)[~full], valid[~full])
        if scores:
            rest = np.ones(len(rc), dtype=bool)
            if score_ranks is not None and full.any():
                pick = np.where(valid[full], s[full], 0)
                rho_s[np.arange(n)[c][full]] = spearman_of_ranks(take_rows(score_ranks[0], pick, rc[full]),
                                                                take_rows(score_ranks[1], pick, rc[full])
                                                                & valid[full], valid[full])
                rest = ~full
            if rest.any():
                a, v = acc[rest], valid[rest]
                gone = nothing[rest]
                own = np.where(gone, -np.inf, strategy.dataset_scores(np.where(gone, 0.0, a), sec[rest]))
                rho_s[np.arange(n)[c][rest]] = spearman_rows(np.where(v, own, np.nan), v)
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
        traces=traces,
        best=best,
        baseline=baseline,
        baseline_kind=tuple(str(k) for k in kind),
        path=path,
        axis=axis,
    )


def _window(arrays, tmin, tmax):
    dmin, dmax = default_window(arrays) if tmin is None or tmax is None else (tmin, tmax)
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
        arrays = live_test_arrays(time_model, arrays, meta, metric=metric, time_kind=time_kind)
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
    seq, path, charges = _sequences(strategy, meta, arrays, rows, train, fast=fast, progress=progress,
                                    time_model=time_model, scoring=scoring)
    name = strategy_name(strategy)
    return _score(strategy, scoring, seq, rows, lo, hi, name, path, axis=axis, charges=charges,
                  start=start_seconds(strategy, meta, scoring, train))


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
