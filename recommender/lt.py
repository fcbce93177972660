"""The ``lt`` strategy: loss-time optimised orders, weighted by dataset similarity.

AR-A3R averages *ranks*, a proxy; the benchmark scores the mean interval loss
(MIL) of the loss-time curve.  :class:`LossTimeOrder` (spec ``lt``) builds the
order that minimises the (weighted) mean MIL over the prior datasets directly,
replaying every candidate order on every prior dataset with that dataset's own
accuracies and times:

* **Rollout construction.**  Start from the AR-A3R order with exponent ``p``.
  For position 1, 2, ... try every remaining learner there, completing the
  order with the current continuation, and keep the learner whose full order
  has the smallest weighted mean MIL.  ``passes`` repeats this with the new
  order as the continuation (each pass can only lower the in-sample MIL of
  the order it starts from).  Learners missing on a prior dataset cost 0 s and
  change nothing there.  With more than ``candidates`` learners (default 20, the
  size of the embedded portfolio; OBOE's meta-data has 219) a position tries only
  the first ``candidates`` remaining learners of the continuation: trying all of
  them costs O(learners^3 x datasets) per order (minutes for one order on
  OBOE's 219 x 418), the window O(learners x candidates^2 x datasets).
* **Similarity weights.**  A prior dataset ``d_i`` gets the weight
  ``exp(-dist_i ** 2 / (2 h ** 2))`` where ``dist_i`` is the root mean squared
  difference of standardised simple meta-features (``log10 n_instances``,
  ``log10 n_features``, ``log10 n_classes``, ``majority_fraction``) between the
  new dataset and ``d_i``, over the features known for both (a dataset with no
  known feature in common gets weight 0 unless ``h = inf``; if every weight is 0
  the rollout falls back to equal weights).
  ``h = inf`` weighs every prior dataset the same (the order then does not
  depend on the new dataset).
* **Nested selection** (``h=auto``).  The bandwidth is chosen from ``h_grid``
  using the prior datasets only: ``inner`` datasets drawn (seeded) from the
  training meta-data are each held out in turn, the order is built from the
  other training datasets for every candidate ``h``, and the ``h`` with the
  smallest mean inner MIL wins (ties: first in the grid).  The dataset being
  recommended for, or held out by the benchmark, is never part of this
  selection.

The MIL window is the benchmark's (``needs_window``; it sets it through
:meth:`LossTimeOrder.with_window`); used live, the default window is
``[tmin, tmax]`` given at construction.
"""

from __future__ import annotations

import logging
import math
from typing import Mapping, Sequence

import numpy as np

from algorank.recommender.kernel.threads import one_blas_thread
from algorank.recommender.kernel.environments import MetaArrays, meta_arrays, require_times
from algorank.recommender.kernel.labels import format_p
from algorank.recommender.kernel.time_model import TimeModel
from algorank.metadata.errors import InputError
from algorank.recommender.a3r import TIME_FLOOR
from algorank.recommender.average_ranking import AverageRanking
from algorank.recommender.base import OrderPolicy, StrategyBase, time_model_spec
from algorank.recommender.similarity import feature_center_scale, meta_feature_matrix, similarity_weights

__all__ = ["LossTimeOrder", "batch_mil", "rollout_order", "DEFAULT_H_GRID", "from_spec"]

logger = logging.getLogger(__name__)

#: Bandwidths tried by ``h=auto`` (inf = every prior dataset weighs the same).
DEFAULT_H_GRID = (0.5, 1.0, 2.0, math.inf)


def batch_mil(orders: np.ndarray, acc: np.ndarray, sec: np.ndarray, baseline: np.ndarray, best: np.ndarray,
              *, lo: float, hi: float) -> np.ndarray:
    """MIL of several full orders on several datasets at once (exact step-function integral).

    Parameters
    ----------
    orders : int array (n_orders, n_learners)
        Learner columns in test order.
    acc : array (n_datasets, n_learners)
        Accuracies, ``-inf`` where a learner has no result (it then changes nothing).
    sec : array (n_datasets, n_learners)
        Times, 0 where a learner has no result.
    baseline, best : array (n_datasets,)
        Accuracy before the first test, and the best accuracy on each dataset.
    lo, hi : float
        ``log10`` of the window.

    Returns
    -------
    array (n_datasets, n_orders)
        Mean loss (percentage points) over ``[10**lo, 10**hi]`` on a log time axis.
    """
    a = acc[:, orders]
    cum = np.cumsum(sec[:, orders], axis=2)
    with np.errstate(divide="ignore"):
        x = np.clip(np.log10(cum), lo, hi)
    found = np.maximum(np.maximum.accumulate(a, axis=2), baseline[:, None, None])
    loss = best[:, None, None] - found
    initial = (best - baseline)[:, None]
    # area = initial * (x_1 - lo) + sum_i loss_i * (x_{i+1} - x_i) + loss_L * (hi - x_L)
    area = initial * (x[:, :, 0] - lo)
    area = area + (loss[:, :, :-1] * np.diff(x, axis=2)).sum(axis=2)
    area = area + loss[:, :, -1] * (hi - x[:, :, -1])
    return 100.0 * area / (hi - lo)


def _segment_areas(cands: np.ndarray, acc: np.ndarray, sec: np.ndarray, start_time: np.ndarray,
                   found: np.ndarray, best: np.ndarray, *, lo: float, hi: float) -> np.ndarray:
    """Loss area of several orderings of the same learners, from a common state up to their common end.

    Every row of ``cands`` orders the same ``k`` learner columns; the tests start at
    ``start_time`` with ``found`` already known.  All orderings end at the same time with the
    same best found, so the area after the last test is common to them and left out.

    Returns
    -------
    array (n_datasets, n_orders)
        Area under the loss (accuracy units x log10 seconds), not normalised.
    """
    a = acc[:, cands]
    cum = start_time[:, None, None] + np.cumsum(sec[:, cands], axis=2)
    with np.errstate(divide="ignore"):
        x = np.clip(np.log10(cum), lo, hi)
        x0 = np.clip(np.log10(start_time), lo, hi)
    reached = np.maximum(np.maximum.accumulate(a, axis=2), found[:, None, None])
    loss = best[:, None, None] - reached
    area = (best - found)[:, None] * (x[:, :, 0] - x0[:, None])
    return area + (loss[:, :, :-1] * np.diff(x, axis=2)).sum(axis=2)


def _windowed_rollout(order: list[int], acc: np.ndarray, sec: np.ndarray, baseline: np.ndarray, best: np.ndarray,
                      w: np.ndarray, *, lo: float, hi: float, passes: int, candidates: int) -> list[int]:
    """Rollout construction trying, at each position, the first ``candidates`` remaining learners of the
    continuation (see :func:`rollout_order`).

    Exact for that candidate set: the candidates differ only in the order of those learners, so the loss
    after the last of them, and before the position, is common and skipped; datasets whose loss is
    already 0, whose time is past the window, or whose weight is 0 add nothing and are dropped.
    """
    n = acc.shape[0]
    for _ in range(passes):
        remaining = list(order)
        prefix: list[int] = []
        t = np.zeros(n)
        found = baseline.astype(float).copy()
        while remaining:
            active = np.flatnonzero((w > 0) & (found < best) & (t < 10.0 ** hi))
            if len(remaining) == 1 or active.size == 0:
                prefix.extend(remaining)  # every candidate scores the same: keep the continuation
                break
            win = remaining[:candidates]
            cands = np.array([[c] + [r for r in win if r != c] for c in win])
            values = w[active] @ _segment_areas(cands, acc[active], sec[active], t[active], found[active],
                                                best[active], lo=lo, hi=hi)
            pick = win[int(np.argmin(values))]
            prefix.append(pick)
            remaining.remove(pick)
            t = t + sec[:, pick]
            found = np.maximum(found, acc[:, pick])
        order = prefix
    return order


def rollout_order(start: Sequence[int], acc: np.ndarray, sec: np.ndarray, baseline: np.ndarray,
                  best: np.ndarray, weights: np.ndarray, *, lo: float, hi: float, passes: int = 2,
                  candidates: int | None = None) -> list[int]:
    """Order minimising the weighted mean MIL over datasets by rollout construction.

    See the module docstring; ties go to the candidate earlier in the continuation.  With
    ``candidates`` set and more learners than that, each position tries only the first
    ``candidates`` remaining learners of the continuation (:func:`_windowed_rollout`): a step
    then costs ``O(candidates**2 x datasets)`` instead of ``O(learners**2 x datasets)``, the
    whole construction ``O(learners x candidates**2 x datasets)`` instead of cubic in the
    learners.  Each pass still never raises the in-sample MIL of the order it starts from.
    """
    order = [int(j) for j in start]
    w = np.asarray(weights, dtype=float)
    w = w / w.sum() if w.sum() > 0 else np.full(len(w), 1.0 / max(len(w), 1))
    if candidates is not None and len(order) > candidates:
        return _windowed_rollout(order, acc, sec, baseline, best, w, lo=lo, hi=hi, passes=passes,
                                 candidates=int(candidates))
    for _ in range(passes):
        prefix: list[int] = []
        cont = list(order)
        for _step in range(len(order)):
            rem = [c for c in cont if c not in prefix]
            if len(rem) == 1:
                prefix.append(rem[0])
                break
            cands = np.array([prefix + [c] + [r for r in rem if r != c] for c in rem])
            values = w @ batch_mil(cands, acc, sec, baseline, best, lo=lo, hi=hi)
            prefix.append(rem[int(np.argmin(values))])
        order = prefix
    return order


class LossTimeOrder(StrategyBase):
    """Order learners to minimise the mean MIL on similar prior datasets (spec ``lt``).

    Parameters
    ----------
    h : float or "auto"
        Similarity bandwidth (``inf`` = every prior dataset counts the same);
        ``"auto"`` picks it from ``h_grid`` by nested validation on the prior data.
    p : float
        A3R exponent of the starting AR-A3R order.
    passes : int
        Rollout passes (>= 1).
    tmin, tmax : float
        MIL window in seconds (the benchmark replaces it by its own).
    h_grid : sequence of float
        Candidates for ``h="auto"``.
    inner : int
        Number of prior datasets held out in turn by ``h="auto"``.
    random_state : int
        Seed of the inner draw.
    candidates : int
        Learners tried per position when there are more than this many (>= 2; see the
        module docstring).  With at most this many learners every one is tried.
    time_overhead, time_scale : float
        Live time model ``T = time_scale * t + time_overhead`` applied to the meta-data
        times before anything else (defaults: the recorded times; see :mod:`algorank.recommender.kernel.time_model`).
    name : str, optional
        Display name (default: the spec of the parameters set away from their defaults).
    """

    needs_window = True
    time_model_aware = True
    fast_loo_fit = True
    p_upper = 1.0

    def __init__(self, *, h="inf", p: float = 1 / 16, passes: int = 2, tmin: float = 1e-3, tmax: float = 100.0,
                 h_grid: Sequence[float] = DEFAULT_H_GRID, inner: int = 40, random_state: int = 0,
                 metric: str = "accuracy", time_kind: str = "fit_time", time_overhead: float = 0.0,
                 time_scale: float = 1.0, candidates: int = 20, name: str | None = None) -> None:
        self.time_model = TimeModel(overhead=time_overhead, scale=time_scale)
        self.auto = str(h).strip().lower() == "auto"
        if not self.auto:
            try:
                h = float(h)
            except (TypeError, ValueError):
                raise InputError(f"lt: h must be a positive number, inf or auto; got {h!r}") from None
            if not h > 0:
                raise InputError(f"lt: h must be a positive number, inf or auto; got {h!r}")
        self.h = h
        self.p = float(p)
        if int(passes) < 1:
            raise InputError(f"lt: passes must be an integer >= 1; got {passes!r}")
        self.passes = int(passes)
        if not (0 < tmin < tmax):
            raise InputError(f"lt: the window needs 0 < tmin < tmax; got [{tmin!r}, {tmax!r}]")
        self.tmin, self.tmax = float(tmin), float(tmax)
        self.h_grid = tuple(float(x) for x in h_grid)
        if int(inner) < 2:
            raise InputError(f"lt: inner must be an integer >= 2; got {inner!r}")
        self.inner = int(inner)
        self.random_state = int(random_state)
        if isinstance(candidates, bool) or int(candidates) != candidates or int(candidates) < 2:
            raise InputError(f"lt: cands must be an integer >= 2; got {candidates!r}")
        self.candidates = int(candidates)
        self.metric, self.time_kind = metric, time_kind
        self._name = name

    def default_name(self) -> str:
        h = "auto" if self.auto else ("inf" if math.isinf(self.h) else f"{self.h:g}")
        extra = "".join(f",{key}={value}" for key, value, default in (("passes", self.passes, 2),
                                                                      ("inner", self.inner, 40))
                        if value != default)
        return f"lt:h={h},p={format_p(self.p)}{extra}{time_model_spec(self.time_model)}"

    def _copy(self, *, tmin: float, tmax: float, time_model: TimeModel, time_kind: str) -> "LossTimeOrder":
        return LossTimeOrder(h="auto" if self.auto else self.h, p=self.p, passes=self.passes, tmin=tmin, tmax=tmax,
                             h_grid=self.h_grid, inner=self.inner, random_state=self.random_state,
                             metric=self.metric, time_kind=time_kind, time_overhead=time_model.overhead,
                             time_scale=time_model.scale, candidates=self.candidates, name=self.name)

    def with_window(self, tmin: float, tmax: float) -> "LossTimeOrder":
        """A copy using the MIL window ``[tmin, tmax]`` (same name)."""
        return self._copy(tmin=tmin, tmax=tmax, time_model=self.time_model, time_kind=self.time_kind)

    def with_time_model(self, *, time_overhead: float = 0.0, time_scale: float = 1.0,
                        time_kind: str | None = None) -> "LossTimeOrder":
        """An unfitted copy using the live time model ``T = time_scale * t + time_overhead`` (``t``: the
        ``time_kind`` time, default unchanged; same name)."""
        return self._copy(tmin=self.tmin, tmax=self.tmax, time_model=TimeModel(overhead=time_overhead, scale=time_scale),
                          time_kind=time_kind or self.time_kind)

    # ------------------------------------------------------------------ data
    def _prepare(self, arrays: MetaArrays, features: np.ndarray) -> dict:
        require_times(arrays, who=f"the loss-time order ({self.name})")
        avail = arrays.available
        acc = np.where(avail, arrays.accuracy, -np.inf)
        sec = np.where(avail, np.maximum(np.nan_to_num(arrays.seconds), TIME_FLOOR), 0.0)
        best = np.max(acc, axis=1)
        worst = np.min(np.where(avail, arrays.accuracy, np.inf), axis=1)
        baseline = np.where(np.isnan(arrays.majority), worst, arrays.majority)
        return {"acc": acc, "sec": sec, "best": best, "baseline": baseline, "features": features,
                "rows": avail.any(axis=1)}

    def _order_for(self, data: dict, train: np.ndarray, start: Sequence[int], query: np.ndarray,
                   h: float) -> list[int]:
        rows = np.flatnonzero(train & data["rows"])
        feats = data["features"][rows]
        center, scale = feature_center_scale(feats)
        w = similarity_weights(feats, query, h=h, center=center, scale=scale)
        return rollout_order(start, data["acc"][rows], data["sec"][rows], data["baseline"][rows],
                             data["best"][rows], w, lo=math.log10(self.tmin), hi=math.log10(self.tmax),
                             passes=self.passes, candidates=self.candidates)

    def _choose_h(self, data: dict, arrays: MetaArrays, train: np.ndarray) -> float:
        """Nested selection of h on the training rows only."""
        rows = np.flatnonzero(train & data["rows"])
        rng = np.random.default_rng(self.random_state)
        held = rng.choice(rows, size=min(self.inner, len(rows)), replace=False) if len(rows) > 1 else rows
        ar = AverageRanking(self.metric, p=self.p, time_kind=self.time_kind)
        starts = ar.loo_orders(arrays, train=train)
        lo, hi = math.log10(self.tmin), math.log10(self.tmax)
        means = []
        for h in self.h_grid:
            mils = []
            for e in held:
                inner_train = train.copy()
                inner_train[e] = False
                start = [int(j) for j in starts[e] if j >= 0]
                order = self._order_for(data, inner_train, start, data["features"][e], h)
                mils.append(batch_mil(np.array([order]), data["acc"][[e]], data["sec"][[e]],
                                      data["baseline"][[e]], data["best"][[e]], lo=lo, hi=hi)[0, 0])
            means.append(float(np.mean(mils)))
        k = int(np.argmin(means))
        logger.debug("lt: inner MIL per h %s -> h=%g", dict(zip(self.h_grid, means)), self.h_grid[k])
        return self.h_grid[k]

    @staticmethod
    def _features(meta, arrays: MetaArrays) -> np.ndarray:
        if hasattr(meta, "datasets") and hasattr(meta.datasets, "set_index"):
            table = meta.datasets.set_index("dataset")
            rows = [table.loc[d].to_dict() if d in table.index else {} for d in arrays.datasets]
        else:
            rows = [{} for _ in arrays.datasets]
        return meta_feature_matrix(rows)

    # ------------------------------------------------------------------ Strategy API
    def fit(self, meta, *, features: np.ndarray | None = None) -> "LossTimeOrder":
        """Keep the prior datasets' results and meta-features; choose h when ``h=auto``."""
        arrays = meta if isinstance(meta, MetaArrays) else meta_arrays(meta, metric=self.metric,
                                                                          time_kind=self.time_kind)
        feats = self._features(meta, arrays) if features is None else np.asarray(features, dtype=float)
        arrays = self.time_model.arrays(arrays).censored_as_baseline()  # timeouts: slow, find nothing
        self._data = self._prepare(arrays, feats)
        self.learners_ = tuple(arrays.learners)
        train = np.ones(len(arrays.datasets), dtype=bool)
        ar = AverageRanking(self.metric, p=self.p, time_kind=self.time_kind).fit(arrays)
        self._start = [self.learners_.index(l) for l in ar.order_]
        self.h_ = self._choose_h(self._data, arrays, train) if self.auto else self.h
        self._train = train
        return self

    def loo_sequences(self, meta, scoring, rows, train) -> np.ndarray:
        """``fast_loo_fit``: every leave-one-dataset-out test sequence, from one preparation of ``meta``.

        The same sequences as fitting on ``meta.subset(datasets=others)`` for every held-out dataset (the
        benchmark's generic path): the prepared arrays and meta-features are row-wise, so the others' rows
        of the whole meta-data's are what a refit prepares; the starting AR-A3R orders come from
        :meth:`AverageRanking.loo_orders`, which equals refitting; ``h=auto`` chooses on the same rows.
        Each order is followed on the held-out dataset in a simulated environment of ``scoring``.

        Returns
        -------
        int ndarray (n_datasets, n_learners)
            Tested learner indices (columns of ``scoring``) in order, padded with -1.
        """
        from algorank.recommender.kernel.environments import SimulatedEnvironment, SkipUnavailable
        from algorank.recommender.kernel.trace import run_policy

        arrays = meta_arrays(meta, metric=self.metric, time_kind=self.time_kind)
        if tuple(arrays.datasets) != tuple(scoring.datasets):
            raise InputError("loo_sequences: the scoring arrays must hold the meta-data's datasets in order")
        feats = self._features(meta, arrays)
        prepared = self.time_model.arrays(arrays).censored_as_baseline()
        data = self._prepare(prepared, feats)
        train = np.asarray(train, dtype=bool)
        starts = AverageRanking(self.metric, p=self.p, time_kind=self.time_kind).loo_orders(prepared, train=train)
        index = {l: j for j, l in enumerate(scoring.learners)}
        seq = np.full(scoring.shape, -1, dtype=np.int64)
        with one_blas_thread():  # hundreds of small products: threads only spin (kernel.threads)
            for d in rows:
                keep = train.copy()
                keep[d] = False
                if not (keep & data["rows"]).any():
                    raise InputError("leave-one-dataset-out needs at least 2 datasets")
                start = [int(j) for j in starts[d] if j >= 0]
                h = self._choose_h(data, prepared, keep) if self.auto else self.h
                order = self._order_for(data, keep, start, feats[d], h)
                dataset = scoring.datasets[d]
                env = SimulatedEnvironment(scoring, dataset)
                policy = OrderPolicy([arrays.learners[j] for j in order])
                trace = run_policy(SkipUnavailable(policy, env.available), env, dataset=dataset)
                idx = [index[o.learner] for o in trace.observations]
                seq[d, : len(idx)] = idx
        return seq

    def order_for(self, dataset_info: Mapping | None = None) -> list[str]:
        """The recommended order for a new dataset described by ``dataset_info``."""
        if not hasattr(self, "_data"):
            raise InputError("lt: fit the strategy on meta-data before asking for a policy")
        query = meta_feature_matrix([dict(dataset_info or {})])[0]
        order = self._order_for(self._data, self._train, self._start, query, self.h_)
        return [self.learners_[j] for j in order]

    def policy(self, dataset_info: Mapping | None = None) -> OrderPolicy:
        """Follow :meth:`order_for` on the new dataset."""
        return OrderPolicy(self.order_for(dataset_info))


def from_spec(params: dict, random_state=None, name: str | None = None) -> LossTimeOrder:
    """Registry factory for ``lt:h=inf|<number>|auto,p=1/16,passes=2,inner=40,cands=20[,overhead=O,scale=S]``."""
    from algorank.recommender.spec import parse_p, pop_number, pop_time_model, seed_from

    h = params.pop("h", "inf")
    p = parse_p(params.pop("p", "1/16"))
    out = {key: pop_number(params, key, default, strategy="lt", kind=int, rule="an integer")
           for key, default in (("passes", 2), ("inner", 40), ("cands", 20))}
    return LossTimeOrder(h=h, p=p, passes=out["passes"], inner=out["inner"], random_state=seed_from(random_state),
                         candidates=out["cands"], **pop_time_model(params, "lt"), name=name)
