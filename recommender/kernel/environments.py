"""Simulated environments: test a learner by looking it up in held-out meta-data (contract 3).

:class:`SimulatedEnvironment` answers ``test(learner)`` with the mean accuracy and the
mean time of that learner on one dataset of a :class:`~algorank.metadata.dataset.MetaDataset`.
Every leave-one-dataset-out benchmark runs policies in it.

A learner *has a result* on a dataset when both its mean accuracy and its mean time
are known there (successful runs with a time).  Learners without a result cannot be
tested on that dataset: :class:`SkipUnavailable` wraps a policy so that they are
skipped (the wrapped policy sees them as failed tests, the trace does not contain
them).

Accuracy-only meta-data (no times, or some cells without one): a cell with an
accuracy but no time keeps its accuracy in :class:`MetaArrays` (``has_accuracy``) and
only its time is NaN, so what needs no time (average ranking with P = 0, best
accuracy first, random, the loss curve by number of tests, :func:`tests_axis`) still
uses it; what needs time calls :func:`require_times`, which raises an InputError
naming the missing column.

Censored tests (timeouts)
-------------------------
A cell with a run of status ``timeout`` is *censored*: the test was stopped at a time
cap, so its recorded time is a lower bound and it produced no model.  It is never
treated as missing:

* in the arrays its accuracy is NaN, its time the mean over **all** its runs (the
  timed-out folds included, whose recorded time is the cap's share: "at least that
  slow"), and ``censored`` marks it; ``testable = available | censored``;
* a simulated test of it costs that time and finds nothing (an observation of status
  ``"timeout"``, accuracy NaN);
* strategies learn from :meth:`MetaArrays.censored_as_baseline`: the censored cell
  counts as a result whose time is the lower bound and whose accuracy is the
  dataset's baseline (the majority-class fraction, else the worst learner's accuracy),
  i.e. "took at least this long and gave nothing better than the default model".

:class:`MetaArrays` is the dense, array form of the same lookups for all datasets at
once (datasets x learners), used by the vectorised fast paths of the benchmark and the
strategies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Sequence

import numpy as np
import pandas as pd

from algorank.metadata.errors import InputError
from algorank.recommender.kernel.trace import ForwardsLimit, Observation

__all__ = ["MetaArrays", "meta_arrays", "SimulatedEnvironment", "SkipUnavailable", "TIME_KINDS", "require_times",
           "tests_axis"]

#: Time columns a simulation can charge per test.
TIME_KINDS = ("fit_time", "fit_predict_time")


@dataclass(frozen=True)
class MetaArrays:
    """Dense datasets x learners view of a meta-dataset.

    Attributes
    ----------
    datasets : tuple of str
        Row labels (sorted dataset ids).
    learners : tuple of str
        Column labels (sorted learner ids).
    accuracy : ndarray of shape (n_datasets, n_learners)
        Mean of the metric over successful runs; NaN where the learner has none
        (a cell with an accuracy but no time keeps its accuracy).
    seconds : ndarray of shape (n_datasets, n_learners)
        Mean time per test; NaN where there is no result or no time.
    majority : ndarray of shape (n_datasets,)
        Majority-class fraction of each dataset (NaN when unknown).
    metric, time_kind : str
        What ``accuracy`` and ``seconds`` hold.
    censored : bool ndarray (n_datasets, n_learners), optional
        Timed-out tests: accuracy NaN, ``seconds`` a lower bound (default: none).
    first_accuracy, first_seconds : ndarray (n_datasets, n_learners), optional
        The accuracy of each test's first fold and what running only that fold costs, on the axis of
        ``seconds`` (:func:`~algorank.recommender.kernel.time_model.live_arrays` fills them); NaN where a
        test has a single run or is not available.  A simulated test can stop after its first fold
        (:meth:`SimulatedEnvironment.test`'s ``screen``) only where they are given.
    """

    datasets: tuple
    learners: tuple
    accuracy: np.ndarray = field(repr=False)
    seconds: np.ndarray = field(repr=False)
    majority: np.ndarray = field(repr=False)
    metric: str = "accuracy"
    time_kind: str = "fit_time"
    censored: np.ndarray = field(default=None, repr=False)
    first_accuracy: np.ndarray | None = field(default=None, repr=False)
    first_seconds: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.censored is None:
            object.__setattr__(self, "censored", np.zeros(np.shape(self.accuracy), dtype=bool))

    @property
    def available(self) -> np.ndarray:
        """Boolean (n_datasets, n_learners): the learner has a result (accuracy and time) there."""
        return np.isfinite(self.accuracy) & np.isfinite(self.seconds)

    @property
    def has_accuracy(self) -> np.ndarray:
        """Boolean (n_datasets, n_learners): the learner has an accuracy there (with or without a time)."""
        return np.isfinite(self.accuracy)

    @property
    def has_times(self) -> bool:
        """Whether any cell has a time (False for accuracy-only meta-data)."""
        return bool(np.isfinite(self.seconds).any())

    @property
    def testable(self) -> np.ndarray:
        """Boolean (n_datasets, n_learners): a test can be simulated (a result, or a censored timeout)."""
        return self.available | (self.censored & np.isfinite(self.seconds))

    def baselines(self) -> np.ndarray:
        """Accuracy before any test per dataset: the majority fraction, else the worst result (NaN if none)."""
        with np.errstate(all="ignore"):
            worst = np.min(np.where(self.available, self.accuracy, np.inf), axis=1)
        worst = np.where(np.isfinite(worst), worst, np.nan)
        return np.where(np.isnan(self.majority), worst, self.majority)

    def censored_as_baseline(self) -> "MetaArrays":
        """The arrays strategies learn from: every censored cell becomes a result with its lower-bound
        time and the dataset's baseline accuracy (0 when the dataset has no baseline at all).

        Returns ``self`` when nothing is censored.
        """
        cens = self.censored & np.isfinite(self.seconds)
        if not cens.any():
            return self
        base = np.nan_to_num(self.baselines(), nan=0.0)
        acc = np.where(cens, base[:, None], self.accuracy)
        return replace(self, accuracy=acc, censored=np.zeros(self.accuracy.shape, dtype=bool))

    def take(self, rows) -> "MetaArrays":
        """The arrays of the datasets at ``rows`` (indices or a boolean mask), in that order."""
        idx = np.flatnonzero(rows) if np.asarray(rows).dtype == bool else np.asarray(rows, dtype=int)
        first = {} if self.first_accuracy is None else {"first_accuracy": self.first_accuracy[idx],
                                                         "first_seconds": self.first_seconds[idx]}
        return replace(self, datasets=tuple(self.datasets[i] for i in idx), accuracy=self.accuracy[idx],
                       seconds=self.seconds[idx], majority=self.majority[idx], censored=self.censored[idx], **first)

    @property
    def shape(self) -> tuple:
        return self.accuracy.shape

    def row(self, dataset: str) -> int:
        """Row index of ``dataset`` (InputError when unknown)."""
        try:
            return self.datasets.index(str(dataset))
        except ValueError:
            raise InputError(f"unknown dataset id {dataset!r}") from None


def meta_arrays(meta, *, metric: str = "accuracy", time_kind: str = "fit_time") -> MetaArrays:
    """Build the :class:`MetaArrays` of a MetaDataset.

    Parameters
    ----------
    meta : MetaDataset
        Prior runs.
    metric : str
        Higher-is-better metric column (default accuracy).
    time_kind : {"fit_time", "fit_predict_time"}
        Seconds charged per test.  ``fit_predict_time`` treats a missing predict
        time as 0.

    Returns
    -------
    MetaArrays
        ``seconds`` is NaN where the accuracy or the time is missing; ``accuracy``
        only where the accuracy is (see ``available`` and ``has_accuracy``).  A cell with a
        ``timeout`` run is censored: accuracy NaN, time = the mean over all its runs
        (missing times count as 0), ``censored`` True.
    """
    if time_kind not in TIME_KINDS:
        raise InputError(f"time_kind must be one of {', '.join(TIME_KINDS)}; got {time_kind!r}")
    acc = meta.matrix(metric, "mean")
    sec = meta.matrix(time_kind, "mean")
    a = acc.to_numpy(dtype=float, copy=True)
    s = sec.to_numpy(dtype=float, copy=True)
    a[~np.isfinite(a)] = np.nan
    s[~(np.isfinite(a) & np.isfinite(s))] = np.nan
    censored = np.zeros(a.shape, dtype=bool)
    runs = meta.runs
    timeout = (runs["status"] == "timeout").to_numpy()
    if timeout.any():
        cells = runs.loc[timeout, ["dataset", "learner"]].drop_duplicates()
        key = pd.MultiIndex.from_frame(runs[["dataset", "learner"]])
        sub = runs[key.isin(pd.MultiIndex.from_frame(cells))]
        t = sub["fit_time"].astype(float).fillna(0.0)
        if time_kind == "fit_predict_time":
            t = t + sub["predict_time"].astype(float).fillna(0.0)
        mean = t.groupby([sub["dataset"], sub["learner"]]).mean()
        rows = {d: i for i, d in enumerate(acc.index)}
        cols = {l: j for j, l in enumerate(acc.columns)}
        for (d, l), v in mean.items():
            i, j = rows[d], cols[l]
            censored[i, j] = True
            a[i, j] = np.nan
            s[i, j] = float(v)
    # the score before any test: the majority fraction, or for meta-data re-scored by another metric
    # (algorank.metadata.metric.meta_for_metric) the majority-class predictor's score under it
    column = "score_baseline" if "score_baseline" in meta.datasets.columns else "majority_fraction"
    ds = meta.datasets.set_index("dataset")[column]
    majority = ds.reindex(list(acc.index)).to_numpy(dtype=float)
    return MetaArrays(
        datasets=tuple(str(d) for d in acc.index),
        learners=tuple(str(l) for l in acc.columns),
        accuracy=a,
        seconds=s,
        majority=majority,
        metric=metric,
        time_kind=time_kind,
        censored=censored,
    )


def require_times(arrays: MetaArrays, *, who: str) -> None:
    """Raise an InputError naming the time column when ``arrays`` has no time at all.

    Parameters
    ----------
    arrays : MetaArrays
    who : str
        What needs the times (e.g. ``"ar:p=1/16"``), for the message.
    """
    if not arrays.has_times:
        column = arrays.time_kind.partition(":")[0]
        column = "fit_time" if column == "fit_predict_time" else column
        raise InputError(
            f"{who} needs test times, but the meta-data has no '{column}' values (accuracy only); "
            "use what needs no time: ar:p=0, best-accuracy, random, or the benchmark with axis='tests'"
        )


def tests_axis(arrays: MetaArrays) -> MetaArrays:
    """The same arrays with every test costing one unit: the x axis counts tests.

    Cells with an accuracy become available whether or not they have a time
    (``seconds = 1``), so the loss by number of tests works on accuracy-only
    meta-data.  ``time_kind`` becomes ``"tests"``.
    """
    from dataclasses import replace

    ones = np.where(np.isfinite(arrays.accuracy), 1.0, np.nan)
    return replace(arrays, seconds=ones, time_kind="tests")


class SimulatedEnvironment:
    """Test learners on one dataset by looking up their results in meta-data.

    Parameters
    ----------
    meta : MetaDataset or MetaArrays
        Meta-data holding the dataset.
    dataset : str
        The held-out dataset id.
    metric : str
        Higher-is-better metric (default accuracy); ignored for MetaArrays.
    time_kind : {"fit_time", "fit_predict_time"}
        Seconds charged per test; ignored for MetaArrays.

    Attributes
    ----------
    available : tuple of str
        Learners that can be tested on ``dataset`` (sorted): those with a result and
        the censored (timed-out) ones, whose test costs its lower-bound time and finds
        nothing (status ``"timeout"``).
    best_accuracy : float
        Highest mean accuracy among them.
    baseline : float
        Accuracy available before any test: the majority-class fraction, or the
        worst available learner's accuracy when that is unknown (``baseline_kind``
        says which: ``"majority"`` or ``"worst-learner"``).
    """

    def __init__(self, meta, dataset: str, *, metric: str = "accuracy", time_kind: str = "fit_time") -> None:
        arrays = meta if isinstance(meta, MetaArrays) else meta_arrays(meta, metric=metric, time_kind=time_kind)
        i = arrays.row(dataset)
        self.dataset = str(dataset)
        avail = arrays.available[i]
        if not avail.any():
            raise InputError(f"dataset {dataset!r} has no learner with a result; it cannot be simulated")
        testable = arrays.testable[i]
        self._acc = {l: float(arrays.accuracy[i, j]) for j, l in enumerate(arrays.learners) if avail[j]}
        self._sec = {l: float(arrays.seconds[i, j]) for j, l in enumerate(arrays.learners) if testable[j]}
        self.censored = tuple(l for j, l in enumerate(arrays.learners) if testable[j] and not avail[j])
        self._first = {}  # learner -> (first fold's accuracy, seconds of that fold alone)
        if arrays.first_accuracy is not None:
            fa, fs = arrays.first_accuracy[i], arrays.first_seconds[i]
            self._first = {l: (float(fa[j]), float(fs[j])) for j, l in enumerate(arrays.learners)
                           if avail[j] and np.isfinite(fa[j]) and np.isfinite(fs[j])}
        #: Whether a test can stop after its first fold (``screen``): the arrays record first folds.
        self.screens = bool(self._first)
        self.available = tuple(l for j, l in enumerate(arrays.learners) if testable[j])
        self.best_accuracy = max(self._acc.values())
        maj = float(arrays.majority[i])
        if math.isnan(maj):
            self.baseline, self.baseline_kind = min(self._acc.values()), "worst-learner"
        else:
            self.baseline, self.baseline_kind = maj, "majority"

    def accuracy(self, learner: str) -> float:
        """Mean accuracy of an available learner (NaN for a censored one)."""
        return self._acc.get(learner, float("nan")) if learner in self._sec else self._acc[learner]

    def seconds(self, learner: str) -> float:
        """Mean time of an available learner."""
        return self._sec[learner]

    def test(self, learner: str, *, limit: float | None = None, screen: float | None = None) -> Observation:
        """Look up ``learner``'s result.

        Parameters
        ----------
        learner : str
        limit : float, optional
            A test whose recorded seconds exceed this is stopped there: it costs ``limit`` seconds, finds
            nothing and is ``capped`` (status ``"timeout"``).
        screen : float, optional
            An accuracy bar for the test's first fold: where the arrays record first folds and that fold
            scored below the bar, the test stops after it (when that fold alone fits in ``limit``), costs what
            that fold costs, finds nothing and is ``screened`` (and ``capped``, status ``"timeout"``).

        Raises
        ------
        InputError
            When the learner has no result on this dataset (wrap the policy in
            :class:`SkipUnavailable` to skip such learners).
        """
        if learner not in self._sec:
            raise InputError(f"learner {learner!r} has no result on dataset {self.dataset!r}; it cannot be tested")
        first = self._first.get(learner) if screen is not None else None
        if first is not None and first[0] < screen and (limit is None or first[1] <= limit):
            return Observation(learner=learner, accuracy=float("nan"), seconds=first[1], status="timeout",
                               message=f"stopped after its first fold: accuracy {first[0]:.4f} below the bar "
                                       f"{screen:.4f}", capped=True, screened=True, fold_accuracy=first[0])
        if limit is not None and self._sec[learner] > limit:
            return Observation(learner=learner, accuracy=float("nan"), seconds=float(limit), status="timeout",
                               message=f"stopped at its limit of {limit:.3g} s", capped=True)
        if learner not in self._acc:  # censored: at least this slow, no model
            return Observation(learner=learner, accuracy=float("nan"), seconds=self._sec[learner], status="timeout",
                               message="timed out in the meta-data (time is a lower bound)")
        return Observation(learner=learner, accuracy=self._acc[learner], seconds=self._sec[learner])


class SkipUnavailable(ForwardsLimit):
    """Wrap a policy so that learners outside ``available`` are skipped, not tested.

    The wrapped policy is told about each skipped learner as a failed observation
    (accuracy NaN, 0 seconds, status ``"error"``) so that it moves on; those
    observations never reach the trace.

    Parameters
    ----------
    policy : Policy
        The policy to wrap.
    available : iterable of str
        Learners that can be tested.
    """

    def __init__(self, policy, available) -> None:
        self.policy = policy
        self.available = frozenset(available)
        self.skipped: list[Observation] = []

    def next(self, history: Sequence[Observation]) -> str | None:
        while True:
            learner = self.policy.next(list(history) + self.skipped)
            if learner is None or learner in self.available:
                return learner
            if any(o.learner == learner for o in self.skipped):
                return None  # the policy insists on an untestable learner: stop instead of looping
            self.skipped.append(
                Observation(learner=learner, accuracy=float("nan"), seconds=0.0, status="error",
                            message="no result on this dataset")
            )
