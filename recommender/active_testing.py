"""Active testing with A3R (Leite, Brazdil and Vanschoren 2012; the A3R version of Abdulrahman, Brazdil, van Rijn and Vanschoren 2018).

Active testing chooses the next learner to test on a new dataset from what has
been observed on it so far:

1. Test the top learner of the AR-A3R ranking (same ``P``); it becomes the
   incumbent ``a_best``.  (If it fails, the next learner of the ranking is
   tested, until one succeeds.)
2. For every untested learner ``a_k`` the estimated gain over the incumbent is::

       gain(a_k) = sum_i  max(0, A3R_i(a_k vs a_best) - 1) * Sim(d_new, d_i)
       A3R_i(a_k vs a_best) = (SR_ik / SR_ib) / (T_ik / T_ib) ** P

   over the prior datasets ``d_i`` that have results for both learners (the
   others are skipped).  ``P = 0`` gives the accuracy-only version (AT0 in the
   paper's naming uses ``Sim = 1``).
3. The learner with the largest gain is tested next; ties (in particular when
   no learner has any positive gain left) are broken by the AR-A3R order.  If
   it beats the incumbent's accuracy it becomes the incumbent.  Repeat until
   every learner has been tested.

Similarity (our choice, the 2018 text only outlines it):

* ``sim="none"``: ``Sim = 1`` for every prior dataset.
* ``sim="tested"``: agreement of pairwise orderings.  For every pair of
  learners already tested successfully on the new dataset whose accuracies
  differ, count the prior datasets where the pair is ordered the same way; with
  ``n`` comparable pairs and ``a`` agreements on ``d_i``,
  ``Sim_i = ((a + 1) / (n + 2)) ** sharpness`` (Laplace-smoothed, so that one
  pair cannot zero a dataset out; ``sharpness`` > 1 concentrates the weight on
  the datasets that agree best).  With fewer than two tested learners every
  ``Sim_i`` is the same, which is ``Sim = 1`` up to a constant.

Times are clipped to ``min_time`` seconds and accuracies to ``min_accuracy``
before any ratio or power.  Everything is vectorised over the datasets x
learners accuracy and time matrices of the meta-data, since the
leave-one-dataset-out benchmark calls the policy for every held-out dataset
and every step.
"""

from __future__ import annotations

import logging
from typing import Mapping, Sequence

import numpy as np

from algorank.recommender.kernel.environments import MetaArrays, meta_arrays, require_times
from algorank.recommender.kernel.labels import format_p
from algorank.recommender.kernel.time_model import TimeModel
from algorank.recommender.kernel.trace import Observation
from algorank.metadata.errors import InputError
from algorank.recommender.a3r import TIME_FLOOR, check_p
from algorank.recommender.average_ranking import AverageRanking
from algorank.recommender.base import StrategyBase, time_model_spec

__all__ = ["ActiveTesting", "ActiveTestingPolicy", "SIM_MODES", "pairwise_similarity", "estimated_gain", "from_spec"]

logger = logging.getLogger(__name__)

#: Accepted values of ``sim``.
SIM_MODES = ("none", "tested")
_SIM_ALIASES = {"none": "none", "1": "none", "tested": "tested"}


def estimated_gain(
    acc: np.ndarray,
    time: np.ndarray,
    best: int,
    candidates: np.ndarray,
    weights: np.ndarray,
    *,
    p: float,
) -> np.ndarray:
    """Active-testing gain of each candidate over the incumbent (vectorised).

    Parameters
    ----------
    acc, time : ndarray of shape (n_datasets, n_learners)
        Prior accuracies and (clipped, positive) times; NaN where not run.
    best : int
        Column of the incumbent.
    candidates : ndarray of int
        Columns of the untested learners.
    weights : ndarray of shape (n_datasets,)
        ``Sim(d_new, d_i)``.
    p : float
        The A3R exponent ``P``.

    Returns
    -------
    ndarray of shape (len(candidates),)
        ``sum_i max(0, A3R_i(k vs best) - 1) * weights_i`` over the datasets
        where both learners have a result.
    """
    ref_acc = acc[:, [best]]
    ref_time = time[:, [best]]
    cand_acc = acc[:, candidates]
    cand_time = time[:, candidates]
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = (cand_acc / ref_acc) / (cand_time / ref_time) ** p
    excess = np.where(np.isnan(ratio), 0.0, np.maximum(ratio - 1.0, 0.0))
    return weights @ excess


def pairwise_similarity(
    prior: np.ndarray, observed: np.ndarray, *, sharpness: float = 1.0
) -> np.ndarray:
    """Similarity of each prior dataset to the new one from pairwise orderings.

    Parameters
    ----------
    prior : ndarray of shape (n_datasets, m)
        Prior accuracies of the ``m`` learners tested on the new dataset (NaN = not run).
    observed : ndarray of shape (m,)
        Their accuracies on the new dataset.
    sharpness : float
        Exponent applied to the smoothed agreement (1 = plain agreement).

    Returns
    -------
    ndarray of shape (n_datasets,)
        ``((agreements + 1) / (comparable pairs + 2)) ** sharpness``; a pair is
        comparable on ``d_i`` when both learners were run there and their
        accuracies differ on the new dataset (ties on ``d_i`` count as disagreement).
    """
    prior = np.asarray(prior, dtype=float)
    observed = np.asarray(observed, dtype=float)
    m = observed.shape[0]
    n_datasets = prior.shape[0]
    if m < 2:
        return np.full(n_datasets, 0.5**sharpness)
    iu, iv = np.triu_indices(m, k=1)
    new_sign = np.sign(observed[iu] - observed[iv])
    keep = new_sign != 0
    iu, iv, new_sign = iu[keep], iv[keep], new_sign[keep]
    diff = prior[:, iu] - prior[:, iv]  # (n_datasets, pairs)
    valid = ~np.isnan(diff)
    agree = (np.sign(np.where(valid, diff, 0.0)) == new_sign) & valid
    a = agree.sum(axis=1)
    n = valid.sum(axis=1)
    return ((a + 1.0) / (n + 2.0)) ** sharpness


class ActiveTestingPolicy:
    """The active-testing policy for one new dataset (see the module docstring).

    Parameters
    ----------
    learners : sequence of str
        Learner ids (columns of ``acc`` and ``time``).
    acc, time : ndarray of shape (n_datasets, n_learners)
        Prior accuracies and clipped times (NaN = not run).
    rank_order : sequence of int
        Column indices in AR-A3R order (first = best); ties of the gain are
        broken by it.
    p : float
        The A3R exponent.
    sim : {"none", "tested"}
        How prior datasets are weighted.
    sharpness : float
        Exponent of the pairwise similarity.
    allowed : set of str, optional
        Restrict the candidates to these learners.
    prior : ndarray of shape (n_datasets,), optional
        1 for the rows of ``acc`` that are prior datasets, 0 for rows to ignore
        (the leave-one-dataset-out fast path zeroes the held-out row); default all 1.
    """

    def __init__(
        self,
        learners: Sequence[str],
        acc: np.ndarray,
        time: np.ndarray,
        rank_order: Sequence[int],
        *,
        p: float,
        sim: str = "none",
        sharpness: float = 1.0,
        allowed: set | None = None,
        prior: np.ndarray | None = None,
    ) -> None:
        self.learners = list(learners)
        self._index = {l: i for i, l in enumerate(self.learners)}
        self._acc = acc
        self._time = time
        self._order = np.asarray(rank_order, dtype=int)
        # position of each column in the AR-A3R order (tie-breaker: lower is better)
        self._position = np.empty(len(self.learners), dtype=int)
        self._position[self._order] = np.arange(len(self._order))
        self.p = float(p)
        self.sim = sim
        self.sharpness = float(sharpness)
        self._allowed = None if allowed is None else {l for l in allowed if l in self._index}
        self._prior = np.ones(acc.shape[0]) if prior is None else np.asarray(prior, dtype=float)

    def _candidates(self, tried: set) -> list[int]:
        return [
            int(j)
            for j in self._order
            if self.learners[j] not in tried and (self._allowed is None or self.learners[j] in self._allowed)
        ]

    def gains(self, history: Sequence[Observation]) -> dict[str, float]:
        """Estimated gain of every untested learner given ``history`` (empty before the first success)."""
        tried = {o.learner for o in history}
        cand = self._candidates(tried)
        ok = [o for o in history if o.status == "ok" and o.accuracy == o.accuracy and o.learner in self._index]
        if not ok or not cand:
            return {}
        incumbent = max(ok, key=lambda o: o.accuracy)  # first of equal accuracies
        weights = self._weights(ok)
        g = estimated_gain(
            self._acc, self._time, self._index[incumbent.learner], np.asarray(cand), weights, p=self.p
        )
        return {self.learners[j]: float(v) for j, v in zip(cand, g)}

    def _weights(self, ok: Sequence[Observation]) -> np.ndarray:
        if self.sim == "none":
            return self._prior
        cols = np.array([self._index[o.learner] for o in ok])
        observed = np.array([o.accuracy for o in ok], dtype=float)
        return self._prior * pairwise_similarity(self._acc[:, cols], observed, sharpness=self.sharpness)

    def next(self, history: Sequence[Observation]) -> str | None:
        """The next learner to test, or None when every learner has been tested."""
        tried = {o.learner for o in history}
        cand = self._candidates(tried)
        if not cand:
            return None
        gains = self.gains(history)
        if not gains:  # nothing succeeded yet: follow AR-A3R
            return self.learners[cand[0]]
        values = np.array([gains[self.learners[j]] for j in cand])
        # cand is in AR-A3R order, and argmax returns the first maximum: ties -> AR-A3R order
        return self.learners[cand[int(np.argmax(values))]]


class ActiveTesting(StrategyBase):
    """Active testing with A3R as a strategy (spec ``at:p=1/64,sim=none``).

    Parameters
    ----------
    p : float
        The A3R exponent ``P`` (0 = accuracy only), used both for the starting
        AR-A3R ranking and for the gain.
    sim : {"none", "tested"}
        ``"none"``: every prior dataset counts the same (``Sim = 1``, AT0);
        ``"tested"``: weight prior datasets by how well they agree with the
        pairwise orderings of the learners already tested on the new dataset.
        ``"1"`` is accepted as an alias of ``"none"``.
    sharpness : float
        Exponent of the pairwise similarity (only with ``sim="tested"``).
    min_time : float
        Floor (seconds) applied to times before ratios and powers (default
        :data:`algorank.recommender.a3r.TIME_FLOOR`, as in AR-A3R).
    min_accuracy : float
        Floor applied to accuracies before ratios.
    metric, time_kind : str
        Meta-data columns used (as in :class:`~algorank.recommender.average_ranking.AverageRanking`).
    time_overhead, time_scale : float
        Live time model ``T = time_scale * t + time_overhead`` applied to the meta-data
        times before the ranking and the gains (defaults: the recorded times; see
        :mod:`algorank.recommender.kernel.time_model`).
    name : str, optional
        Display name (default: the spec of the parameters, ``"at:p=<P>,sim=<sim>"`` plus those set
        away from their defaults, the time model included).
    """

    adaptive = True
    time_model_aware = True
    fast_loo = True
    p_upper = 1.0

    def __init__(
        self,
        *,
        p: float = 1 / 64,
        sim: str = "none",
        sharpness: float = 1.0,
        min_time: float = TIME_FLOOR,
        min_accuracy: float = 1e-6,
        metric: str = "accuracy",
        time_kind: str = "fit_time",
        time_overhead: float = 0.0,
        time_scale: float = 1.0,
        name: str | None = None,
    ) -> None:
        self.time_model = TimeModel(overhead=time_overhead, scale=time_scale)
        p = check_p(p)
        key = str(sim).strip().lower()
        if key not in _SIM_ALIASES:
            raise InputError(f"at: sim must be one of {', '.join(SIM_MODES)} (or 1 for none); got {sim!r}")
        if not (np.isfinite(sharpness) and sharpness > 0):
            raise InputError(f"at: sharpness must be a positive number; got {sharpness!r}")
        if not (min_time > 0):
            raise InputError(f"at: min_time must be > 0; got {min_time!r}")
        self.p = p
        self.sim = _SIM_ALIASES[key]
        self.sharpness = float(sharpness)
        self.min_time = float(min_time)
        self.min_accuracy = float(min_accuracy)
        self.metric = metric
        self.time_kind = time_kind
        self._fitted = False
        self._name = name

    def default_name(self) -> str:
        extra = f",sharpness={self.sharpness:g}" if self.sim == "tested" and self.sharpness != 1 else ""
        return f"at:p={format_p(self.p)},sim={self.sim}{extra}{time_model_spec(self.time_model)}"

    def with_time_model(self, *, time_overhead: float = 0.0, time_scale: float = 1.0,
                        time_kind: str | None = None) -> "ActiveTesting":
        """An unfitted copy using the live time model ``T = time_scale * t + time_overhead`` (``t``: the
        ``time_kind`` time, default unchanged; same name)."""
        return ActiveTesting(p=self.p, sim=self.sim, sharpness=self.sharpness, min_time=self.min_time,
                             min_accuracy=self.min_accuracy, metric=self.metric, time_kind=time_kind or self.time_kind,
                             time_overhead=time_overhead, time_scale=time_scale, name=self.name)

    def fit(self, meta) -> "ActiveTesting":
        """Read the accuracy and time matrices and the AR-A3R order from ``meta``.

        ``meta`` is a MetaDataset or a :class:`~algorank.recommender.kernel.environments.MetaArrays`.
        """
        arrays = meta if isinstance(meta, MetaArrays) else meta_arrays(meta, metric=self.metric,
                                                                          time_kind=self.time_kind)
        require_times(arrays, who=f"active testing ({self.name})")
        arrays = self.time_model.arrays(arrays).censored_as_baseline()
        self.learners_ = list(arrays.learners)
        self.acc_, self.time_ = self._matrices(arrays)
        ranked = AverageRanking(self.metric, p=self.p, time_kind=self.time_kind, time_floor=self.min_time).fit(
            arrays).order_
        self.order_ = self._full_order([self.learners_.index(l) for l in ranked])
        self._fitted = True
        return self

    def _matrices(self, arrays: MetaArrays) -> tuple[np.ndarray, np.ndarray]:
        avail = arrays.available
        acc = np.where(avail, np.maximum(np.nan_to_num(arrays.accuracy), self.min_accuracy), np.nan)
        time = np.where(avail, np.maximum(np.nan_to_num(arrays.seconds), self.min_time), np.nan)
        return acc, time

    def _full_order(self, ranked: Sequence[int]) -> list[int]:
        """AR-A3R order followed by the learners it does not rank (no prior result), by index."""
        ranked = [int(j) for j in ranked if j >= 0]
        seen = set(ranked)
        return ranked + [j for j in range(len(self.learners_)) if j not in seen]

    def loo_orders(self, arrays: MetaArrays, *, train: np.ndarray | None = None) -> np.ndarray:
        """Leave-one-dataset-out test sequences for every dataset at once (benchmark fast path).

        Row ``d`` is the sequence active testing follows on dataset ``d`` when fitted on
        ``train`` minus ``d``, simulated with ``d``'s own results; learners without a
        result on ``d`` are skipped exactly as :class:`~algorank.recommender.kernel.environments.SkipUnavailable`
        does (the policy sees them as failed tests); a censored (timed-out) learner on ``d`` is
        tested: it costs its time and the policy sees a ``timeout`` observation.  Prior datasets
        count their timeouts as :meth:`~algorank.recommender.kernel.environments.MetaArrays.censored_as_baseline`
        says.  Same sequences as refitting per dataset.
        """
        n, k = arrays.shape
        t = np.ones(n, dtype=bool) if train is None else np.asarray(train, dtype=bool)
        require_times(arrays, who=f"active testing ({self.name})")
        raw = self.time_model.arrays(arrays)
        arrays = raw.censored_as_baseline()
        self.learners_ = list(arrays.learners)
        acc, time = self._matrices(arrays)
        ar = AverageRanking(self.metric, p=self.p, time_kind=self.time_kind, time_floor=self.min_time)
        ar_orders = ar.loo_orders(arrays, train=t)
        out = np.full((n, k), -1, dtype=np.int64)
        for d in range(n):
            avail = raw.available[d]
            timed_out = raw.testable[d] & ~avail
            if not avail.any():
                continue
            prior = t.astype(float)
            prior[d] = 0.0
            policy = ActiveTestingPolicy(self.learners_, acc, time, self._full_order(ar_orders[d]), p=self.p,
                                         sim=self.sim, sharpness=self.sharpness, prior=prior)
            history: list[Observation] = []
            pos = 0
            while True:
                learner = policy.next(history)
                if learner is None:
                    break
                j = self.learners_.index(learner)
                if avail[j]:
                    history.append(Observation(learner, float(raw.accuracy[d, j]), float(raw.seconds[d, j])))
                    out[d, pos] = j
                    pos += 1
                elif timed_out[j]:
                    history.append(Observation(learner, float("nan"), float(raw.seconds[d, j]), "timeout",
                                               "timed out in the meta-data"))
                    out[d, pos] = j
                    pos += 1
                else:
                    history.append(Observation(learner, float("nan"), 0.0, "error", "no result on this dataset"))
        return out

    def policy(self, dataset_info: Mapping | None = None) -> ActiveTestingPolicy:
        """A fresh active-testing policy for one new dataset.

        ``dataset_info`` may hold ``learners`` (ids that can be tested there);
        other keys are not used by active testing.
        """
        if not self._fitted:
            raise InputError("at: fit the strategy on meta-data before asking for a policy")
        allowed = None
        if dataset_info is not None and dataset_info.get("learners") is not None:
            allowed = set(dataset_info["learners"])
        return ActiveTestingPolicy(
            self.learners_, self.acc_, self.time_, self.order_, p=self.p, sim=self.sim,
            sharpness=self.sharpness, allowed=allowed,
        )


def from_spec(params: dict, random_state=None, name: str | None = None) -> ActiveTesting:
    """Registry factory for ``at:p=1/64,sim=none|tested[,sharpness=S][,overhead=O,scale=S]`` (pops what it uses)."""
    from algorank.recommender.spec import parse_p, pop_number, pop_time_model

    p = parse_p(params.pop("p", "1/64"))
    sim = params.pop("sim", "none")
    sharpness = pop_number(params, "sharpness", 1.0, strategy="at", rule="a positive number")
    return ActiveTesting(p=p, sim=sim, sharpness=sharpness, **pop_time_model(params, "at"), name=name)
