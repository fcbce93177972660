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

:class:`MetaArrays` is the dense, array form of the same lookups for all datasets at
once (datasets x learners), used by the vectorised fast paths of the benchmark and the
strategies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from algorank.metadata.errors import InputError
from algorank.evaluation.meta.trace import Observation

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
    """

    datasets: tuple
    learners: tuple
    accuracy: np.ndarray = field(repr=False)
    seconds: np.ndarray = field(repr=False)
    majority: np.ndarray = field(repr=False)
    metric: str = "accuracy"
    time_kind: str = "fit_time"

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
        only where the accuracy is (see ``available`` and ``has_accuracy``).
    """
    if time_kind not in TIME_KINDS:
        raise InputError(f"time_kind must be one of {', '.join(TIME_KINDS)}; got {time_kind!r}")
    acc = meta.matrix(metric, "mean")
    sec = meta.matrix(time_kind, "mean")
    a = acc.to_numpy(dtype=float, copy=True)
    s = sec.to_numpy(dtype=float, copy=True)
    a[~np.isfinite(a)] = np.nan
    s[~(np.isfinite(a) & np.isfinite(s))] = np.nan
    ds = meta.datasets.set_index("dataset")["majority_fraction"]
    majority = ds.reindex(list(acc.index)).to_numpy(dtype=float)
    return MetaArrays(
        datasets=tuple(str(d) for d in acc.index),
        learners=tuple(str(l) for l in acc.columns),
        accuracy=a,
        seconds=s,
        majority=majority,
        metric=metric,
        time_kind=time_kind,
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
        Learners with a result on ``dataset`` (sorted).
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
        self._acc = {l: float(arrays.accuracy[i, j]) for j, l in enumerate(arrays.learners) if avail[j]}
        self._sec = {l: float(arrays.seconds[i, j]) for j, l in enumerate(arrays.learners) if avail[j]}
        self.available = tuple(l for j, l in enumerate(arrays.learners) if avail[j])
        self.best_accuracy = max(self._acc.values())
        maj = float(arrays.majority[i])
        if math.isnan(maj):
            self.baseline, self.baseline_kind = min(self._acc.values()), "worst-learner"
        else:
            self.baseline, self.baseline_kind = maj, "majority"

    def accuracy(self, learner: str) -> float:
        """Mean accuracy of an available learner."""
        return self._acc[learner]

    def seconds(self, learner: str) -> float:
        """Mean time of an available learner."""
        return self._sec[learner]

    def test(self, learner: str) -> Observation:
        """Look up ``learner``'s result.

        Raises
        ------
        InputError
            When the learner has no result on this dataset (wrap the policy in
            :class:`SkipUnavailable` to skip such learners).
        """
        if learner not in self._acc:
            raise InputError(f"learner {learner!r} has no result on dataset {self.dataset!r}; it cannot be tested")
        return Observation(learner=learner, accuracy=self._acc[learner], seconds=self._sec[learner])


class SkipUnavailable:
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
