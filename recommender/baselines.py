"""Baseline strategies: random, fastest-first, best-accuracy-first, and the oracle.

* ``RandomOrder(seed)``: a random order of the known learners, drawn per new
  dataset from ``numpy.random.default_rng([seed, crc32(dataset id)])`` (same seed,
  same dataset -> same order, bit for bit; different datasets get different orders).
* ``Fastest()``: mean time over the prior datasets, ascending.
* ``BestAccuracy()``: mean accuracy over the prior datasets, descending.
* ``Oracle(tmin, tmax)``: **a lower bound, not a strategy one can use**: it looks at
  the held-out dataset's true accuracies and times and returns the order with the
  smallest MIL over ``[tmin, tmax]``.

Mean-based baselines average over the datasets where a learner has a result, and
break ties by learner id.  Their means are accumulated as fixed-point integers
(accuracy in units of 2**-32, seconds in units of 2**-24 s) so that the
leave-one-dataset-out fast path (totals minus the held-out row) equals refitting bit
for bit.

Oracle search: :func:`algorank.recommender.kernel.oracle.oracle_order` (exact, over the
dataset's Pareto front).

Censored (timed-out) cells
--------------------------
Every baseline learns from :meth:`~algorank.recommender.kernel.environments.MetaArrays.censored_as_baseline`:
a timed-out test counts with its lower-bound time and the dataset's baseline accuracy
("at least that slow, nothing better than the default model").  The oracle never
chooses a timed-out learner (it finds nothing); it appends them after the others,
fastest first.
"""

from __future__ import annotations

import math
import zlib
from typing import Mapping

import numpy as np

from algorank.recommender.kernel.environments import MetaArrays, meta_arrays, require_times
from algorank.recommender.kernel.loss_time import check_window
from algorank.recommender.kernel.oracle import oracle_order
from algorank.metadata.errors import InputError
from algorank.recommender.base import OrderPolicy, StrategyBase

__all__ = ["RandomOrder", "Fastest", "BestAccuracy", "Oracle", "oracle_order"]

_ACC_UNITS = 2.0**32
_SEC_UNITS = 2.0**24


def _arrays(meta, metric: str, time_kind: str) -> MetaArrays:
    return meta if isinstance(meta, MetaArrays) else meta_arrays(meta, metric=metric, time_kind=time_kind)


def _mean_orders(values: np.ndarray, present: np.ndarray, *, descending: bool) -> np.ndarray:
    """Orders of learners by the mean of integer ``values`` over ``present`` rows (-1 padded)."""
    values = np.atleast_2d(values)
    present = np.atleast_2d(present)
    known = present > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(known, values / np.where(known, present, 1), 0.0)
    key = -mean if descending else mean
    idx = np.broadcast_to(np.arange(values.shape[1]), values.shape)
    order = np.lexsort((idx, key, ~known), axis=-1)
    return np.where(np.take_along_axis(known, order, axis=1), order, -1)


class _MeanBaseline(StrategyBase):
    """Order by the mean of one per-cell quantity (fixed-point sums, exact LOO)."""

    fast_loo = True
    _spec = "mean"
    _descending = False

    def __init__(self, *, metric: str = "accuracy", time_kind: str = "fit_time", name: str | None = None) -> None:
        self.metric = metric
        self.time_kind = time_kind
        self._name = name

    def default_name(self) -> str:
        return self._spec

    def _units(self, arrays: MetaArrays) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def fit(self, meta) -> "_MeanBaseline":
        arrays = _arrays(meta, self.metric, self.time_kind).censored_as_baseline()
        units, present = self._units(arrays)
        order = _mean_orders(units.sum(axis=0)[None, :], present.sum(axis=0)[None, :], descending=self._descending)[0]
        self.order_ = [arrays.learners[j] for j in order if j >= 0]
        return self

    def policy(self, dataset_info: Mapping | None = None) -> OrderPolicy:
        if not hasattr(self, "order_"):
            raise InputError(f"{type(self).__name__}.policy called before fit")
        return OrderPolicy(self.order_)

    def loo_orders(self, arrays: MetaArrays, *, train: np.ndarray | None = None) -> np.ndarray:
        """Leave-one-dataset-out orders (row d: fitted on ``train`` minus d), -1 padded."""
        units, present = self._units(arrays.censored_as_baseline())
        t = np.ones(units.shape[0], dtype=bool) if train is None else np.asarray(train, dtype=bool)
        tu = np.where(t[:, None], units, 0)
        tp = (present & t[:, None]).astype(np.int64)
        return _mean_orders(tu.sum(axis=0)[None, :] - tu, tp.sum(axis=0)[None, :] - tp, descending=self._descending)


class Fastest(_MeanBaseline):
    """Fastest first: mean time over prior datasets, ascending (ties: learner id)."""

    _spec = "fastest"

    def _units(self, arrays):
        require_times(arrays, who="the 'fastest' baseline")
        avail = arrays.available
        return np.where(avail, np.rint(np.nan_to_num(arrays.seconds) * _SEC_UNITS), 0).astype(np.int64), avail


class BestAccuracy(_MeanBaseline):
    """Most accurate first: mean accuracy over prior datasets, descending (ties: learner id)."""

    _spec = "best-accuracy"
    _descending = True

    def _units(self, arrays):
        avail = arrays.has_accuracy  # needs no time
        return np.where(avail, np.rint(np.nan_to_num(arrays.accuracy) * _ACC_UNITS), 0).astype(np.int64), avail


def _seed_for(seed: int, dataset: str) -> np.random.Generator:
    return np.random.default_rng([int(seed), zlib.crc32(str(dataset).encode("utf-8"))])


class RandomOrder(StrategyBase):
    """A random order of the learners known from prior data, seeded per dataset.

    Parameters
    ----------
    seed : int
        Base seed (non-negative).
    name : str, optional
        Display name (default ``"random:seed=<seed>"``).
    """

    fast_loo = True

    def __init__(self, seed: int = 0, *, name: str | None = None) -> None:
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise InputError(f"random seed must be a non-negative integer; got {seed!r}")
        self.seed = int(seed)
        self._name = name
        self.metric = "accuracy"
        self.time_kind = "fit_time"

    def default_name(self) -> str:
        return f"random:seed={self.seed}"

    def fit(self, meta) -> "RandomOrder":
        arrays = _arrays(meta, self.metric, self.time_kind)
        known = (arrays.has_accuracy | arrays.testable).any(axis=0)
        self.learners_ = [l for l, k in zip(arrays.learners, known) if k]
        return self

    def _order(self, learners: list, dataset: str) -> list:
        perm = _seed_for(self.seed, dataset).permutation(len(learners))
        return [learners[i] for i in perm]

    def policy(self, dataset_info: Mapping | None = None) -> OrderPolicy:
        if not hasattr(self, "learners_"):
            raise InputError("RandomOrder.policy called before fit")
        dataset = (dataset_info or {}).get("dataset", "")
        return OrderPolicy(self._order(self.learners_, dataset))

    def loo_orders(self, arrays: MetaArrays, *, train: np.ndarray | None = None) -> np.ndarray:
        avail = arrays.has_accuracy | arrays.testable
        n, k = avail.shape
        t = np.ones(n, dtype=bool) if train is None else np.asarray(train, dtype=bool)
        counts = (avail & t[:, None]).sum(axis=0)[None, :] - (avail & t[:, None])
        out = np.full((n, k), -1, dtype=np.int64)
        for d in range(n):
            known = np.flatnonzero(counts[d] > 0)
            order = self._order(list(known), arrays.datasets[d])
            out[d, : len(order)] = order
        return out


class Oracle(StrategyBase):
    """LOWER BOUND, not a usable strategy: the best order knowing the held-out dataset's results.

    It is fitted on the *full* meta-data (the benchmark does this because
    ``sees_held_out`` is True) and needs the MIL window (``needs_window``).

    Parameters
    ----------
    tmin, tmax : float, optional
        The MIL window; set by the benchmark through :meth:`with_window`.
    name : str, optional
        Display name (default ``"oracle"``).
    """

    sees_held_out = True
    needs_window = True
    fast_loo = True

    def __init__(self, tmin: float | None = None, tmax: float | None = None, *, metric: str = "accuracy",
                 time_kind: str = "fit_time", name: str | None = None) -> None:
        self.tmin, self.tmax = tmin, tmax
        if tmin is not None or tmax is not None:
            self.tmin, self.tmax = check_window(tmin, tmax)
        self.metric, self.time_kind = metric, time_kind
        self._name = name

    def default_name(self) -> str:
        return "oracle"

    def with_window(self, tmin: float, tmax: float) -> "Oracle":
        """A copy of this oracle for the window ``[tmin, tmax]`` (same name)."""
        return Oracle(tmin, tmax, metric=self.metric, time_kind=self.time_kind, name=self.name)

    def _check(self):
        if self.tmin is None:
            raise InputError("the oracle needs a window: use Oracle(tmin, tmax) or with_window")

    def fit(self, meta) -> "Oracle":
        self._arrays = _arrays(meta, self.metric, self.time_kind)
        require_times(self._arrays, who="the oracle")
        return self

    def _row_order(self, arrays: MetaArrays, d: int) -> np.ndarray:
        acc, sec = arrays.accuracy[d], arrays.seconds[d]
        avail = arrays.available[d]
        maj = arrays.majority[d]
        baseline = float(np.min(acc[avail])) if math.isnan(maj) else float(maj)
        order = oracle_order(np.where(avail, acc, np.nan), sec, baseline=baseline, tmin=self.tmin, tmax=self.tmax)[0]
        timed_out = np.flatnonzero(arrays.testable[d] & ~avail)
        if timed_out.size:  # they find nothing: last, fastest first
            order = np.concatenate([order, timed_out[np.lexsort((timed_out, sec[timed_out]))]])
        return order

    def policy(self, dataset_info: Mapping | None = None) -> OrderPolicy:
        self._check()
        if not hasattr(self, "_arrays"):
            raise InputError("Oracle.policy called before fit")
        d = self._arrays.row((dataset_info or {}).get("dataset", ""))
        return OrderPolicy([self._arrays.learners[j] for j in self._row_order(self._arrays, d)])

    def loo_orders(self, arrays: MetaArrays, *, train: np.ndarray | None = None) -> np.ndarray:
        self._check()
        require_times(arrays, who="the oracle")
        n, k = arrays.shape
        out = np.full((n, k), -1, dtype=np.int64)
        for d in range(n):
            if arrays.available[d].any():
                order = self._row_order(arrays, d)
                out[d, : order.size] = order
        return out
