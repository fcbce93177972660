"""Dataset-conditioned, adaptive recommendation (spec ``ei``): expected improvement per expected second.

A3R average ranking gives every dataset the same order.  This strategy plans for THIS dataset
and re-plans after every test:

1. **Runtime model** (:mod:`~algorank.recommender.runtime_model`): each learner's test time on
   this dataset from its rows, features and classes (per-learner log-log regression, censored
   timeouts as lower bounds), rescaled during the run by the median measured/predicted ratio of
   the tests so far.
2. **Accuracy model** (:mod:`~algorank.recommender.accuracy_model`): each learner's gain over the
   majority class, a multivariate normal whose prior is similarity-weighted over the prior
   datasets and which is conditioned on the accuracies observed so far.  Where the meta-data
   records landmarkers (1-NN and decision-stump accuracy on a subsample, :data:`LANDMARKS`), they
   are extra columns of that normal, and a new dataset's own landmarkers (cheap to compute)
   condition the prediction before any real test.
3. **Failure-aware**: the probability that the learner fails here (from the prior datasets'
   ``error`` / ``timeout`` runs); a failed test costs its time and gains nothing.
4. **Policy**: the next learner maximises ``(1 - p_fail) * EI / cost ** p`` where ``EI`` is the
   expected improvement over the best gain found so far (the majority class before any test)
   and ``cost`` the predicted seconds; ``p = 1`` is expected improvement per second, ``p < 1``
   leans towards accuracy as A3R's ``P`` does.  With ``stop > 0`` it stops (and says so, via
   :attr:`EIPolicy.stop_reason`) once no remaining learner beats the best by ``eps`` with
   probability ``stop``.
   ``acq=near`` scores ``q / cost ** p`` instead, with ``q`` the probability that the learner is
   within ``eps`` of the best of all learners while no tested one is yet (Monte Carlo over the
   conditioned normal and the failure probabilities, common random numbers from ``seed``): the
   index that minimises the expected time to the first success when successes are independent
   (the user-facing "time to a near-best model"); once every draw says a near-best learner has
   been found it falls back to expected improvement per second.

Spec: ``ei`` or ``ei:h=1,p=1,shrink=0.1,stop=0,eps=0.01,acq=ei,landmarks=yes,growth=yes`` (+ ``overhead=``/
``scale=`` of the live time model).  References: OBOE (Yang et al., KDD 2019) and TensorOboe (low-rank completion plus
runtime models under a time budget); Fusi, Sheth and Elibol (NeurIPS 2018, probabilistic matrix
factorisation with expected improvement); auto-sklearn 1.0's meta-feature similarity; A3R
(Abdulrahman et al., MLJ 2018) for the accuracy/time trade-off.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
from scipy.stats import norm

from algorank.recommender.kernel.environments import meta_arrays
from algorank.recommender.kernel.time_model import TimeModel
from algorank.metadata.errors import InputError
from algorank.metadata.growth import load_growth
from algorank.recommender.base import StrategyBase, time_model_spec
from algorank.recommender.accuracy_model import AccuracyModel, fit_accuracy_model, from_gain, to_gain
from algorank.recommender.runtime_model import RuntimeModel, fit_runtime_model, observed_ratio, runtime_features
from algorank.recommender.similarity import feature_center_scale, meta_feature_matrix, similarity_weights

__all__ = ["ConditionedStrategy", "EIPolicy", "LearnerPrediction", "from_spec", "LANDMARKS"]

#: Datasets-table columns used as landmarker accuracies when most prior datasets have them.
LANDMARKS = ("landmark_1nn", "landmark_stump")


@dataclass(frozen=True)
class LearnerPrediction:
    """What the models expect of one learner on the new dataset (before any test)."""

    learner: str
    accuracy: float
    accuracy_low: float
    accuracy_high: float
    seconds: float
    fail_probability: float


class ConditionedStrategy(StrategyBase):
    """Dataset-conditioned expected-improvement-per-second strategy (see the module docstring).

    Parameters
    ----------
    h : float
        Similarity bandwidth over standardised meta-features (``inf``: all prior datasets alike).
    p : float
        Cost exponent: ``EI / cost ** p``.
    shrink : float
        Covariance shrinkage towards the diagonal.  0.1 was fixed before any held-out result; 0
        reached a near-best learner sooner in leave-one-dataset-out on the training parts of all three
        large sets, but on the frozen held-out splits only on OBOE (2.1 h vs 6.2 h summed) and later on
        broad (3.8 min vs 68 s) and LCDB (12.8 h vs 9.6 h), so the default stays 0.1 (README).
    stop : float
        Stop when no remaining learner beats the best by ``eps`` with this probability (0: never).
    eps : float
        Accuracy tolerance of the stopping rule and of ``acq="near"``.
    acq : {"ei", "near"}
        Acquisition: expected improvement per second, or probability of being within ``eps`` of
        the best learner per second (module docstring).
    draws : int
        Monte Carlo draws of ``acq="near"``.
    seed : int
        Seed of those draws (same seed, same order).
    time_kind : {"fit_time", "fit_predict_time"}
        Meta-data time the runtime model predicts.
    time_overhead, time_scale : float
        Live time model ``T = time_scale * t + time_overhead``.
    landmarks : bool
        Use landmarker columns of the meta-data when present (:data:`LANDMARKS`).
    growth : bool
        Extrapolate times beyond the meta-data's sizes with LCDB's within-dataset growth
        exponents (:func:`~algorank.metadata.growth.load_growth`) where a learner has one.
    name : str, optional
        Display name (default: the spec).
    """

    #: Capabilities, declared (the benchmark and ``recommend`` read these, never probe).
    needs_window = False
    sees_held_out = False
    adaptive = True
    conditions_on_landmarks = True
    p_upper = 2.0
    p_grid = (2.0, 1.5, 1.0, 0.5, 0.25, 0.0)
    predicts = True
    time_model_aware = True

    def __init__(self, *, h: float = 1.0, p: float = 1.0, shrink: float = 0.1, stop: float = 0.0, eps: float = 0.01,
                 time_kind: str = "fit_time", time_overhead: float = 0.0, time_scale: float = 1.0,
                 landmarks: bool = True, growth: bool = True, acq: str = "ei", draws: int = 512, seed: int = 0,
                 name: str | None = None) -> None:
        for key, value, ok in (("h", h, h > 0), ("p", p, 0 <= p <= 2), ("shrink", shrink, 0 <= shrink <= 1),
                               ("stop", stop, 0 <= stop < 1), ("eps", eps, 0 <= eps < 1)):
            if not (isinstance(value, (int, float)) and ok):
                raise InputError(f"strategy 'ei': {key} out of range; got {value!r}")
        self.h, self.p, self.shrink, self.stop, self.eps = float(h), float(p), float(shrink), float(stop), float(eps)
        self.time_kind = time_kind
        self.time_model = TimeModel(overhead=time_overhead, scale=time_scale)
        self.landmarks = bool(landmarks)
        self.growth = bool(growth)
        if acq not in ("ei", "near"):
            raise InputError(f"strategy 'ei': acq must be ei or near; got {acq!r}")
        if not (isinstance(draws, (int, np.integer)) and 16 <= draws <= 100_000):
            raise InputError(f"strategy 'ei': draws must be an integer in [16, 100000]; got {draws!r}")
        self.acq, self.draws, self.seed = acq, int(draws), int(seed)
        self._name = name

    def default_name(self) -> str:
        parts = [f"h={self.h:g}", f"p={self.p:g}"]
        if self.shrink != 0.1:
            parts.append(f"shrink={self.shrink:g}")
        if self.stop:
            parts.append(f"stop={self.stop:g}")
        if self.eps != 0.01:
            parts.append(f"eps={self.eps:g}")
        if not self.landmarks:
            parts.append("landmarks=no")
        if not self.growth:
            parts.append("growth=no")
        if self.acq != "ei":
            parts.append(f"acq={self.acq}")
            if self.draws != 512:
                parts.append(f"draws={self.draws}")
            if self.seed:
                parts.append(f"seed={self.seed}")
        return "ei:" + ",".join(parts) + time_model_spec(self.time_model)

    def __repr__(self) -> str:
        return f"ConditionedStrategy({self.name})"

    def with_time_model(self, *, time_overhead: float = 0.0, time_scale: float = 1.0,
                        time_kind: str | None = None) -> "ConditionedStrategy":
        """An unfitted copy that predicts live test times ``time_scale * t + time_overhead``."""
        return ConditionedStrategy(h=self.h, p=self.p, shrink=self.shrink, stop=self.stop, eps=self.eps,
                                   time_kind=time_kind or self.time_kind, time_overhead=time_overhead,
                                   time_scale=time_scale, landmarks=self.landmarks, growth=self.growth,
                                   acq=self.acq, draws=self.draws, seed=self.seed, name=self.name)

    # ------------------------------------------------------------------ fit
    def fit(self, meta) -> "ConditionedStrategy":
        """Fit the runtime, accuracy and failure models on prior meta-data."""
        arrays = meta_arrays(meta, time_kind=self.time_kind)
        datasets, learners = list(arrays.datasets), list(arrays.learners)
        # the arrays already carry timeouts as censored cells (time = the lower bound, accuracy NaN)
        attempted = _attempted(meta, datasets, learners)
        failed = attempted & ~arrays.has_accuracy
        seconds, censored = arrays.seconds, arrays.censored & np.isfinite(arrays.seconds)
        table = meta.datasets.set_index("dataset").reindex(datasets)
        rows = [dict(r, dataset=d) for d, r in zip(datasets, table.to_dict("records"))]
        self.learners_ = tuple(learners)
        self.runtime_: RuntimeModel = fit_runtime_model(seconds, runtime_features(rows), learners, censored=censored,
                                                        growth=load_growth() if self.growth else None)
        marks = [c for c in LANDMARKS if c in table.columns
                 and np.isfinite(table[c].to_numpy(dtype=float)).mean() >= 0.5] if self.landmarks else []
        self.landmarks_ = tuple(marks)
        acc, fail, att = arrays.accuracy, failed, attempted
        if marks:
            extra = table[marks].to_numpy(dtype=float)
            acc = np.column_stack([acc, extra])
            fail = np.column_stack([fail, np.zeros(extra.shape, dtype=bool)])
            att = np.column_stack([att, np.isfinite(extra)])
        self.accuracy_: AccuracyModel = fit_accuracy_model(acc, arrays.majority, learners + marks, failed=fail,
                                                           attempted=att, shrink=self.shrink)
        self.features_ = meta_feature_matrix(rows)
        self.center_, self.scale_ = feature_center_scale(self.features_)
        with np.errstate(all="ignore"):
            self.majority_ = float(np.nanmean(arrays.majority)) if np.isfinite(arrays.majority).any() else 0.0
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "runtime_"):
            raise InputError("strategy 'ei' is not fitted: call fit(meta) first")

    def _weights(self, info: Mapping) -> np.ndarray:
        query = meta_feature_matrix([info])[0]
        w = similarity_weights(self.features_, query, h=self.h, center=self.center_, scale=self.scale_)
        return w if (w > 0).any() else np.ones(len(w))

    def _seconds(self, info: Mapping) -> np.ndarray:
        t = self.runtime_.predict(info)
        return self.time_model.scale * t + self.time_model.overhead

    def predictions(self, dataset_info: Mapping | None = None) -> list[LearnerPrediction]:
        """Per learner: expected accuracy with a 90 % interval, seconds and failure probability."""
        self._check_fitted()
        info = dict(dataset_info or {})
        w = self._weights(info)
        maj = _majority(info, self.majority_)
        mu, cov = self.accuracy_.prior(w)
        mu, sd = self.accuracy_.condition(mu, cov, *self._landmark_obs(info, maj))
        fail = self.accuracy_.fail_probability(w)
        sec = self._seconds(info)
        lo, hi = from_gain(mu - 1.645 * sd, maj), from_gain(mu + 1.645 * sd, maj)
        acc = from_gain(mu, maj)
        return [LearnerPrediction(l, float(np.clip(acc[j], 0, 1)), float(np.clip(lo[j], 0, 1)),
                                  float(np.clip(hi[j], 0, 1)), float(sec[j]), float(fail[j]))
                for j, l in enumerate(self.learners_)]

    def _policy_inputs(self, dataset_info: Mapping | None) -> tuple[dict, dict]:
        """``(info, inputs)``: the dataset's information and the prior a policy starts from (``mu``, ``cov``,
        ``fail``, ``majority``, ``given`` landmarker observations), shared by every policy built on this model."""
        self._check_fitted()
        info = dict(dataset_info or {})
        w = self._weights(info)
        mu, cov = self.accuracy_.prior(w)
        maj = _majority(info, self.majority_)
        seen, values = self._landmark_obs(info, maj)
        return info, {"mu": mu, "cov": cov, "fail": self.accuracy_.fail_probability(w)[: len(self.learners_)],
                      "majority": maj, "given": (seen, values)}

    def policy(self, dataset_info: Mapping | None = None) -> "EIPolicy":
        """The adaptive policy for one new dataset."""
        info, inputs = self._policy_inputs(dataset_info)
        return EIPolicy(self, seconds=self._seconds(info), **inputs)

    def _landmark_obs(self, info: Mapping, majority: float) -> tuple[list, list]:
        """Column indices and gains of the new dataset's landmarkers (when it has them)."""
        seen, values = [], []
        for k, name in enumerate(self.landmarks_):
            try:
                v = float(info.get(name, math.nan))
            except (TypeError, ValueError):
                v = math.nan
            if math.isfinite(v):
                seen.append(len(self.learners_) + k)
                values.append(float(to_gain(v, majority)))
        return seen, values


class EIPolicy:
    """Re-plans after every test: the learner with the highest ``(1 - p_fail) EI / cost ** p`` goes next.

    Attributes
    ----------
    stop_reason : str or None
        Set when the policy stops because no remaining learner is likely to improve by ``eps``.
    """

    def __init__(self, strategy: ConditionedStrategy, *, mu, cov, fail, seconds, majority: float,
                 given=((), ())) -> None:
        self.s = strategy
        self.given = (list(given[0]), list(given[1]))
        self.mu, self.cov, self.fail, self.seconds = mu, cov, fail, seconds
        self.majority = majority
        self.index = {l: j for j, l in enumerate(strategy.learners_)}
        self.stop_reason: str | None = None
        self._reset()
        if strategy.acq == "near":  # common random numbers: one set of draws for every step of this dataset
            rng = np.random.default_rng(strategy.seed)
            m = len(strategy.learners_)
            self._normal = rng.standard_normal((m, strategy.draws))
            self._fails = rng.random((m, strategy.draws)) < np.asarray(fail, dtype=float)[:, None]

    def _reset(self) -> None:
        self._done: list = []  # the observations already folded into the accumulators below
        self._tried: set = set()
        self._seen, self._values = list(self.given[0]), list(self.given[1])
        self._measured: list = []
        self._predicted: list = []

    def _absorb(self, history: Sequence) -> None:
        """Fold new observations into the accumulators (a history that is not an extension of the
        last one starts them again), so a run of k tests costs O(k) conversions, not O(k^2)."""
        n = len(self._done)
        if len(history) < n or any(a is not b for a, b in zip(history[:n], self._done)):
            self._reset()
            n = 0
        for o in history[n:]:
            self._done.append(o)
            j = self.index.get(o.learner)
            if j is None:
                continue
            self._tried.add(j)
            if getattr(o, "status", "ok") == "ok" and o.accuracy == o.accuracy:
                self._seen.append(j)
                self._values.append(float(to_gain(o.accuracy, self.majority)))
            if o.seconds > 0:
                self._measured.append(float(o.seconds))
                self._predicted.append(float(self.seconds[j]))

    def scores(self, history: Sequence) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """(score, conditional mean gain, sd, best gain so far) of every learner given ``history``."""
        self._absorb(history)
        tried, seen, values = self._tried, self._seen, self._values
        measured, predicted = self._measured, self._predicted
        m = len(self.s.learners_)
        mean, sd = self.s.accuracy_.condition(self.mu, self.cov, seen, values)
        mean, sd = mean[:m], sd[:m]
        found = [v for j, v in zip(seen, values) if j < m]  # landmarkers inform, they are no model
        best = max([0.0] + found)
        cost = np.maximum(self.seconds * observed_ratio(measured, predicted), 1e-6)
        t = (mean - best) / sd
        ei = sd * (t * norm.cdf(t) + norm.pdf(t))
        score = (1.0 - self.fail) * ei / cost ** self.s.p
        if self.s.acq == "near":
            q = self._near_probability(seen, values, tried)
            if q.max() > 0:
                score = q / cost ** self.s.p
        score[list(tried)] = -np.inf
        return score, mean, sd, best

    def _near_probability(self, seen, values, tried) -> np.ndarray:
        """Per learner: the share of posterior draws in which it is within ``eps`` of the best learner
        and no tested learner is (0 for tested learners)."""
        m = len(self.s.learners_)
        mean, cov = self.s.accuracy_.condition_full(self.mu, self.cov, seen, values)
        mean, cov = mean[:m], cov[:m, :m]
        w, v = np.linalg.eigh(cov)  # a square root that tolerates the exact zeros of tested learners
        root = v * np.sqrt(np.clip(w, 0.0, None))
        draws = mean[:, None] + root @ self._normal
        tested = np.zeros(m, dtype=bool)
        tested[list(tried)] = True
        ok = np.zeros(m, dtype=bool)
        observed = {j: val for j, val in zip(seen, values) if j < m}
        ok[list(observed)] = True
        draws[ok] = np.array([observed[j] for j in np.flatnonzero(ok)])[:, None]
        failed = np.where(tested[:, None], ~ok[:, None], self._fails)
        draws = np.where(failed, -np.inf, draws)
        top = draws.max(axis=0)
        gap = self.s.eps / max(1.0 - self.majority, 1e-6)
        near = np.isfinite(draws) & (draws >= top - gap)
        reached = (near & tested[:, None]).any(axis=0)
        q = (near & ~reached[None, :]).mean(axis=1)
        q[tested] = 0.0
        return q

    def next(self, history: Sequence) -> str | None:
        score, mean, sd, best = self.scores(history)
        self.last_scores_ = score  # what the choice below was made on (explanations read it)
        if not np.isfinite(score).any():
            return None
        if self.s.stop > 0 and history:
            gap = self.s.eps / max(1.0 - self.majority, 1e-6)
            chance = (1.0 - self.fail) * norm.sf((best + gap - mean) / sd)
            chance[~np.isfinite(score)] = 0.0
            if chance.max() < self.s.stop:
                self.stop_reason = (f"no remaining learner beats the best by {self.s.eps:g} with probability "
                                    f">= {self.s.stop:g}")
                return None
        return self.s.learners_[int(np.argmax(score))]


def _majority(info: Mapping, fallback: float) -> float:
    """The score before any test: ``score_baseline`` (a metric other than accuracy), else the majority fraction."""
    try:
        v = float(info.get("score_baseline", info.get("majority_fraction", math.nan)))
    except (TypeError, ValueError):
        v = math.nan
    return v if 0 < v < 1 else fallback


def _attempted(meta, datasets, learners) -> np.ndarray:
    """Cells of the arrays' grid with at least one run (ok, error or timeout)."""
    cells = meta.runs[["dataset", "learner"]].drop_duplicates()
    di = {d: i for i, d in enumerate(datasets)}
    lj = {l: j for j, l in enumerate(learners)}
    out = np.zeros((len(datasets), len(learners)), dtype=bool)
    i = cells["dataset"].astype(str).map(di)
    j = cells["learner"].astype(str).map(lj)
    keep = i.notna() & j.notna()
    out[i[keep].astype(int).to_numpy(), j[keep].astype(int).to_numpy()] = True
    return out


def from_spec(params: dict, random_state=None, name: str | None = None) -> ConditionedStrategy:
    """Build from spec parameters (``h``, ``p``, ``shrink``, ``stop``, ``eps``, ``acq``, ``draws``, ``seed``,
    ``landmarks``, ``growth``, ``overhead``, ``scale``); ``seed`` defaults to an integer ``random_state``."""
    from algorank.recommender.spec import parse_p, pop_number, pop_time_model

    h_raw = params.pop("h", None)
    h = 1.0 if h_raw is None else (math.inf if str(h_raw).strip().lower() == "inf" else None)
    if h is None:
        h = pop_number({"h": h_raw}, "h", None, strategy="ei", rule="a number > 0 or inf", valid=lambda v: v > 0)
    p = parse_p(params.pop("p"), upper=2.0) if "p" in params else 1.0  # 1/2 as well as 0.5, as for A3R's P
    shrink = pop_number(params, "shrink", 0.1, strategy="ei", rule="a number in [0, 1]", valid=lambda v: 0 <= v <= 1)
    stop = pop_number(params, "stop", 0.0, strategy="ei", rule="a number in [0, 1)", valid=lambda v: 0 <= v < 1)
    eps = pop_number(params, "eps", 0.01, strategy="ei", rule="a number in [0, 1)", valid=lambda v: 0 <= v < 1)
    acq = str(params.pop("acq", "ei")).strip().lower()
    draws = pop_number(params, "draws", 512, strategy="ei", kind=int, rule="an integer in [16, 100000]",
                       valid=lambda v: 16 <= v <= 100_000)
    default_seed = int(random_state) if isinstance(random_state, (int, np.integer)) and random_state >= 0 else 0
    seed = pop_number(params, "seed", default_seed, strategy="ei", kind=int, rule="an integer >= 0",
                      valid=lambda v: v >= 0)
    flags = {"acq": acq, "draws": draws, "seed": seed}
    for key in ("landmarks", "growth"):
        value = str(params.pop(key, "yes")).strip().lower()
        if value not in ("yes", "no"):
            raise InputError(f"strategy 'ei': {key} must be yes or no; got {value!r}")
        flags[key] = value == "yes"
    return ConditionedStrategy(h=h, p=p, shrink=shrink, stop=stop, eps=eps, **flags,
                               **pop_time_model(params, "ei"), name=name)
