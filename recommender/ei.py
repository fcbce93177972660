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

5. **Capped tests** (``cap``, off by default): a test still running at ``cap`` times its predicted seconds
   (at least :data:`CAP_FLOOR`) is stopped and costs what it used; the learner is tested again, without a
   limit, once every other learner has been tested.  A runtime model that predicts a second for a test
   that takes hours then loses ``cap`` seconds, not hours.
6. **Screened tests** (``screen``, off by default): once a learner has been tested, every later test
   stops after its first fold when that fold's accuracy is below the best accuracy so far minus
   ``screen`` binomial standard errors of one fold (``sqrt(b (1 - b) folds / rows)``, ``b`` the best
   accuracy, ``folds`` the live test's, ``rows`` the dataset's): racing over folds, as F-race and SMAC's
   intensification race configurations over instances.  A learner whose mean is below the best so far
   cannot be the first near-best one, so a correct stop loses nothing; a wrong one is undone because a
   screened learner, like a capped one, is tested again in full once every other learner has been.  It
   costs that fold and the test's overhead; the fold's accuracy conditions the other learners as a reading
   of the learner's accuracy with one fold's binomial variance (never as a result: it is no model).  It
   needs an environment that can stop a test after its first fold: live sequential tests with the accuracy
   metric, and the simulation of meta-data with several runs per test (broad, LCDB, the evaluator-built
   sets; not OBOE, which records one mean per test).  Parallel live tests set the bar from the tests that have
   finished (the policy's state also holds stand-ins for the running ones).

Spec: ``ei`` or ``ei:h=1,p=1,shrink=0.1,stop=0,eps=0.01,acq=ei,landmarks=yes,growth=yes,cap=inf,screen=inf`` (+
``overhead=``/``scale=`` of the live time model).  References: OBOE (Yang et al., KDD 2019) and TensorOboe (low-rank completion plus
runtime models under a time budget); Fusi, Sheth and Elibol (NeurIPS 2018, probabilistic matrix
factorisation with expected improvement); auto-sklearn 1.0's meta-feature similarity; A3R
(Abdulrahman et al., MLJ 2018) for the accuracy/time trade-off.
"""

from __future__ import annotations

import bisect
import math
import operator
from dataclasses import dataclass, replace
from typing import Mapping, Sequence

import numpy as np
from scipy.special import ndtr
from scipy.stats import norm

from algorank.recommender.kernel.threads import one_blas_thread
from algorank.recommender.kernel.environments import meta_arrays
from algorank.recommender.kernel.time_model import TimeModel
from algorank.metadata.errors import InputError
from algorank.metadata.growth import load_growth
from algorank.recommender.base import StrategyBase, time_model_spec
from algorank.recommender.accuracy_model import AccuracyModel, fit_accuracy_model, from_gain, to_gain
from algorank.recommender.runtime_model import RuntimeModel, fit_runtime_model, runtime_features
from algorank.recommender.similarity import feature_center_scale, meta_feature_matrix, similarity_weights

__all__ = ["ConditionedStrategy", "EIPolicy", "LearnerPrediction", "from_spec", "LANDMARKS", "CAP_FLOOR"]

#: Seconds below which no capped test is stopped (``cap``).
CAP_FLOOR = 1.0
#: Datasets-table columns used as landmarker accuracies when most prior datasets have them.
LANDMARKS = ("landmark_1nn", "landmark_stump")
_SQRT_2PI = np.sqrt(2 * np.pi)


def landmark_columns(table: Mapping) -> tuple[str, ...]:
    """The landmarker columns (:data:`LANDMARKS`, in that order) that ``table`` (column -> values over the prior
    datasets) has for at least half of its datasets: the ones a fitted strategy reads."""
    return tuple(c for c in LANDMARKS if c in table and np.isfinite(np.asarray(table[c], dtype=float)).mean() >= 0.5)


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
        Covariance shrinkage towards the diagonal.
        The default 0.1 was fixed before any held-out result; the benchmark record of the documentation
        compares it with 0.
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
    cap : float
        Stop a test still running at ``cap`` times its predicted seconds (the point prediction times the
        live ratio, at least :data:`CAP_FLOOR` seconds); a stopped learner is tested again, without a limit,
        once every other learner has been tested (``inf``, the default: no limit).
    screen : float
        Stop a test after its first fold when that fold scores more than ``screen`` standard errors below the
        best accuracy so far (module docstring, point 6); ``inf``, the default: never.
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
    fast_loo_fit = True
    #: ``cap`` and ``screen`` when the spec does not set them.
    default_cap = math.inf
    default_screen = math.inf
    #: Landmarkers read by default (a subclass may default to none).
    default_landmarks = True

    def __init__(self, *, h: float = 1.0, p: float = 1.0, shrink: float = 0.1, stop: float = 0.0, eps: float = 0.01,
                 time_kind: str = "fit_time", time_overhead: float = 0.0, time_scale: float = 1.0,
                 landmarks: bool = True, growth: bool = True, acq: str = "ei", draws: int = 512, seed: int = 0,
                 cap: float = math.inf, screen: float = math.inf, name: str | None = None) -> None:
        for key, value, ok in (("h", h, h > 0), ("p", p, 0 <= p <= 2), ("shrink", shrink, 0 <= shrink <= 1),
                               ("stop", stop, 0 <= stop < 1), ("eps", eps, 0 <= eps < 1), ("cap", cap, cap >= 1),
                               ("screen", screen, screen >= 0)):
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
        self.cap = float(cap)
        self.screen = float(screen)
        self._name = name

    def default_name(self) -> str:
        parts = [f"h={self.h:g}", f"p={self.p:g}"]
        if self.shrink != 0.1:
            parts.append(f"shrink={self.shrink:g}")
        if self.stop:
            parts.append(f"stop={self.stop:g}")
        if self.eps != 0.01:
            parts.append(f"eps={self.eps:g}")
        if self.landmarks != self.default_landmarks:
            parts.append("landmarks=yes" if self.landmarks else "landmarks=no")
        if not self.growth:
            parts.append("growth=no")
        if self.acq != "ei":
            parts.append(f"acq={self.acq}")
            if self.draws != 512:
                parts.append(f"draws={self.draws}")
            if self.seed:
                parts.append(f"seed={self.seed}")
        if self.cap != self.default_cap:
            parts.append(f"cap={self.cap:g}")
        if self.screen != self.default_screen:
            parts.append(f"screen={self.screen:g}")
        return "ei:" + ",".join(parts) + time_model_spec(self.time_model)

    def __repr__(self) -> str:
        return f"ConditionedStrategy({self.name})"

    def with_time_model(self, *, time_overhead: float = 0.0, time_scale: float = 1.0,
                        time_kind: str | None = None) -> "ConditionedStrategy":
        """An unfitted copy that predicts live test times ``time_scale * t + time_overhead``."""
        return ConditionedStrategy(h=self.h, p=self.p, shrink=self.shrink, stop=self.stop, eps=self.eps,
                                   time_kind=time_kind or self.time_kind, time_overhead=time_overhead,
                                   time_scale=time_scale, landmarks=self.landmarks, growth=self.growth,
                                   acq=self.acq, draws=self.draws, seed=self.seed, cap=self.cap,
                                   screen=self.screen, name=self.name)

    # ------------------------------------------------------------------ fit
    def fit(self, meta) -> "ConditionedStrategy":
        """Fit the runtime, accuracy and failure models on prior meta-data."""
        arrays = meta_arrays(meta, time_kind=self.time_kind)
        # the arrays already carry timeouts as censored cells (time = the lower bound, accuracy NaN)
        attempted = _attempted(meta, list(arrays.datasets), list(arrays.learners))
        return self._fit_prepared(_Prepared.of(meta, arrays, attempted))

    def _fit_prepared(self, prep: "_Prepared") -> "ConditionedStrategy":
        """Fit on prepared meta-data (what :meth:`fit` and :meth:`loo_sequences` share)."""
        arrays, attempted, table = prep.arrays, prep.attempted, prep.table
        from algorank.metadata.learners import boosts_per_class  # the learner catalogue, only once fitting

        learners = list(arrays.learners)
        failed = attempted & ~arrays.has_accuracy
        seconds, censored = arrays.seconds, arrays.censored & np.isfinite(arrays.seconds)
        self.learners_ = tuple(learners)
        self.runtime_: RuntimeModel = fit_runtime_model(seconds, prep.runtime_x, learners, censored=censored,
                                                        growth=load_growth() if self.growth else None,
                                                        per_class=[boosts_per_class(l) for l in learners])
        marks = list(landmark_columns(table)) if self.landmarks else []
        self.landmarks_ = tuple(marks)
        acc, fail, att = arrays.accuracy, failed, attempted
        if marks:
            extra = np.column_stack([table[c] for c in marks])
            acc = np.column_stack([acc, extra])
            fail = np.column_stack([fail, np.zeros(extra.shape, dtype=bool)])
            att = np.column_stack([att, np.isfinite(extra)])
        self.accuracy_: AccuracyModel = fit_accuracy_model(acc, arrays.majority, learners + marks, failed=fail,
                                                           attempted=att, shrink=self.shrink)
        self.features_ = prep.meta_x
        self.center_, self.scale_ = feature_center_scale(self.features_)
        with np.errstate(all="ignore"):
            self.majority_ = float(np.nanmean(arrays.majority)) if np.isfinite(arrays.majority).any() else 0.0
        return self

    def loo_sequences(self, meta, scoring, rows, train) -> np.ndarray:
        """``fast_loo_fit``: every leave-one-dataset-out test sequence, from one preparation of ``meta``.

        The same sequences as fitting on ``meta.subset(datasets=others)`` and following the policy in
        a :class:`~algorank.recommender.kernel.environments.SimulatedEnvironment` of ``scoring`` for
        every held-out dataset (the generic path of the benchmark): the models are fitted on the rows
        and learners of the prepared arrays that subset would give, without building a MetaDataset,
        its arrays and its tables once per dataset.

        Parameters
        ----------
        meta : MetaDataset
            All datasets.
        scoring : MetaArrays
            What the tests cost and find (``meta``'s datasets, in the same order).
        rows : int array
            Rows of ``scoring`` to follow the policy on.
        train : bool array
            Rows the models may be fitted on (a held-out row of ``train`` is left out of its own fit).

        Returns
        -------
        int ndarray (n_datasets, width), or (it, charges) when a test was capped
            Tested learner indices (columns of ``scoring``) in order, padded with -1, and the seconds charged
            for each capped test (:func:`~algorank.recommender.kernel.trace.pack`).
        """
        from algorank.recommender.kernel.environments import SimulatedEnvironment, SkipUnavailable
        from algorank.recommender.kernel.trace import encode, pack, run_policy

        arrays = meta_arrays(meta, time_kind=self.time_kind)
        if tuple(arrays.datasets) != tuple(scoring.datasets):
            raise InputError("loo_sequences: the scoring arrays must hold the meta-data's datasets in order")
        prep = _Prepared.of(meta, arrays, _attempted(meta, list(arrays.datasets), list(arrays.learners)))
        infos = prep.infos()
        index = {l: j for j, l in enumerate(scoring.learners)}
        encoded = {}
        fitted_on = None  # the held-out row the current fit leaves out (-1: none, a row outside ``train``)
        with one_blas_thread():  # hundreds of small products: threads only spin (kernel.threads)
            for d in rows:
                key = int(d) if train[d] else -1
                if key != fitted_on:
                    keep = np.flatnonzero(train)
                    keep = keep[keep != d]
                    if keep.size == 0:
                        raise InputError("leave-one-dataset-out needs at least 2 datasets")
                    self._fit_prepared(prep.take(keep))
                    fitted_on = key
                dataset = scoring.datasets[d]
                env = SimulatedEnvironment(scoring, dataset)
                trace = run_policy(SkipUnavailable(self.policy(infos[d]), env.available), env, dataset=dataset)
                encoded[int(d)] = encode(trace, index)
        seq, charges = pack(encoded, *scoring.shape)
        return seq if charges is None else (seq, charges)

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
                      "majority": maj, "given": (seen, values), "rows": _rows(info)}

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

    With a finite ``cap`` of its strategy, :meth:`limit` gives each test a time limit; a capped test finds
    nothing, does not enter the live ratio, and its learner is tested again without a limit once every other
    learner has been tested (in the order they were stopped).

    Attributes
    ----------
    stop_reason : str or None
        Set when the policy stops because no remaining learner is likely to improve by ``eps``.
    """

    def __init__(self, strategy: ConditionedStrategy, *, mu, cov, fail, seconds, majority: float,
                 given=((), ()), rows: float = math.nan) -> None:
        self.s = strategy
        self.rows = float(rows)
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
        self._done_ids: set = set()
        self._tried: set = set()
        self._tried_mask = np.zeros(len(self.s.learners_), dtype=bool)
        self._best = max([0.0] + [v for j, v in zip(*self.given) if j < len(self.s.learners_)])
        self._seen, self._values = list(self.given[0]), list(self.given[1])
        self._noise: list = [None] * len(self._seen)  # per observation: its variance, None for the model's own
        self._best_accuracy = math.nan  # the best accuracy a learner's (full) test found
        self._measured: list = []
        self._predicted: list = []
        self._log_ratios: list = []  # sorted log(measured / predicted) of the valid pairs (observed_ratio)
        self._capped: list = []  # learners whose test was stopped at its limit, in that order
        self._retried: set = set()  # ... and tested again since
        self._post = None  # the posterior given _seen, updated one observation at a time

    def _absorb(self, history: Sequence) -> None:
        """Fold new observations into the accumulators, so a run of k tests costs O(k) updates, not O(k^2).

        A history that holds every observation already folded in (the same objects, e.g. the tests so
        far followed by the skipped learners of :class:`~algorank.recommender.kernel.environments.
        SkipUnavailable`) only adds its new ones, in their order; any other history starts again.
        """
        n = len(self._done)
        if len(history) >= n and all(map(operator.is_, history[:n], self._done)):
            fresh = history[n:]
        elif self._done_ids <= {id(o) for o in history}:
            fresh = [o for o in history if id(o) not in self._done_ids]
        else:
            self._reset()
            fresh = history
        for o in fresh:
            self._done.append(o)
            self._done_ids.add(id(o))
            j = self.index.get(o.learner)
            if j is None:
                continue
            if j in self._tried and j in self._capped:
                self._retried.add(j)
            self._tried.add(j)
            self._tried_mask[j] = True
            if getattr(o, "capped", False):
                if j not in self._capped:
                    self._capped.append(j)
                fold = getattr(o, "fold_accuracy", None)
                if getattr(o, "screened", False) and fold is not None and math.isfinite(fold):
                    noise = self._fold_variance(fold)  # one fold: a noisy reading of the learner's accuracy
                    if noise is not None:
                        self._seen.append(j)
                        self._values.append(_gain(fold, self.majority))
                        self._noise.append(noise)
                continue  # a lower bound found nothing: not a ratio of measured to predicted seconds
            if getattr(o, "status", "ok") == "ok" and o.accuracy == o.accuracy:
                self._seen.append(j)
                self._values.append(_gain(o.accuracy, self.majority))
                self._noise.append(None)
                if j < len(self.s.learners_):
                    self._best = max(self._best, self._values[-1])
                    self._best_accuracy = float(np.fmax(self._best_accuracy, o.accuracy))
            if o.seconds > 0:
                m, p = float(o.seconds), float(self.seconds[j])
                self._measured.append(m)
                self._predicted.append(p)
                if p > 0 and math.isfinite(m) and math.isfinite(p):
                    bisect.insort(self._log_ratios, math.log(m / p))

    def _ratio(self) -> float:
        """:func:`~algorank.recommender.runtime_model.observed_ratio` of the tests so far (from the sorted
        log ratios kept by :meth:`_absorb`: the same number without a pass over the history)."""
        r = self._log_ratios
        if not r:
            return 1.0
        n = len(r)
        med = np.float64(r[n // 2]) if n % 2 else np.mean(np.array(r[n // 2 - 1:n // 2 + 1]))
        return min(max(float(np.exp(med)), 1.0 / 20.0), 20.0)

    def _posterior(self):
        """The :class:`~algorank.recommender.accuracy_model.SequentialPosterior` of every gain given the
        observed ``_seen``/``_values`` (landmarkers included), one update per new observation."""
        if self._post is None:
            self._post = self.s.accuracy_.posterior(self.mu, self.cov)
        post = self._post
        for j, v, e in zip(self._seen[post.t:], self._values[post.t:], self._noise[post.t:]):
            post.add(j, v, e)
        return post

    def scores(self, history: Sequence) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """(score, conditional mean gain, sd, best gain so far) of every learner given ``history``."""
        self._absorb(history)
        tried, seen, values = self._tried, self._seen, self._values
        m = len(self.s.learners_)
        mean, sd = self._conditioned(seen, values)
        mean, sd = mean[:m], sd[:m]
        best = self._best  # the best gain found by a learner (landmarkers inform, they are no model)
        cost = np.maximum(self.seconds * self._ratio(), 1e-6)
        t = (mean - best) / sd
        ei = sd * (t * ndtr(t) + np.exp(-t ** 2 / 2.0) / _SQRT_2PI)  # scipy's norm.cdf and norm.pdf
        score = (1.0 - self.fail) * ei / cost ** self.s.p
        if self.s.acq == "near":
            q = self._near_probability(seen, values, tried)
            if q.max() > 0:
                score = q / cost ** self.s.p
        score[self._tried_mask] = -np.inf
        return score, mean, sd, best

    def _conditioned(self, seen, values) -> tuple[np.ndarray, np.ndarray]:
        """Mean and standard deviation of every gain given the observations (observed cells: their value, sd
        0 up to the floor), as :meth:`~algorank.recommender.accuracy_model.AccuracyModel.condition`."""
        if not seen:
            return self.mu.copy(), np.sqrt(np.maximum(np.diag(self.cov), 1e-12))
        post = self._posterior()
        mean, var = post.mean.copy(), post.var.copy()
        mean[seen] = values
        var[seen] = 0.0
        return mean, np.sqrt(np.maximum(var, 1e-12))

    def _near_probability(self, seen, values, tried) -> np.ndarray:
        """Per learner: the share of posterior draws in which it is within ``eps`` of the best learner
        and no tested learner is (0 for tested learners)."""
        m = len(self.s.learners_)
        if seen:
            post = self._posterior()
            cov = post.covariance()
            mean, cov = post.mean.copy(), 0.5 * (cov + cov.T)
            mean[seen] = values
            cov[seen, :] = 0.0
            cov[:, seen] = 0.0
        else:
            mean, cov = self.mu.copy(), self.cov.copy()
        mean, cov = mean[:m], cov[:m, :m]
        w, v = np.linalg.eigh(cov)  # a square root that tolerates the exact zeros of tested learners
        root = v * np.sqrt(np.clip(w, 0.0, None))
        draws = mean[:, None] + root @ self._normal
        tested = np.zeros(m, dtype=bool)
        tested[list(tried)] = True
        ok = np.zeros(m, dtype=bool)
        observed = {j: val for j, val, e in zip(seen, values, self._noise) if j < m and e is None}  # full tests
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

    def limit(self, learner: str) -> float:
        """Seconds after which the test of ``learner`` is stopped: ``cap`` times its predicted seconds (the point
        prediction times the live ratio of the tests so far), at least :data:`CAP_FLOOR`; ``inf`` without a cap
        and for a learner whose test was stopped before."""
        j = self.index.get(learner)
        if not math.isfinite(self.s.cap) or j is None or j in self._capped:
            return math.inf
        return max(self.s.cap * float(self.seconds[j]) * self._ratio(), CAP_FLOOR)

    def screen(self, learner: str, *, best: float | None = None) -> float | None:
        """The accuracy the first fold of ``learner``'s test must reach for the test to go on: the best accuracy
        found so far (``best`` when given, else the one this policy has seen) minus ``screen`` binomial standard
        errors of one fold (module docstring, point 6); None without ``screen``, before any learner has a result,
        when the dataset's rows are unknown, and for a learner whose test was stopped before (tested again in
        full)."""
        j = self.index.get(learner)
        best = self._best_accuracy if best is None else float(best)
        if not math.isfinite(self.s.screen) or j is None or j in self._capped or not math.isfinite(best):
            return None
        se = self._fold_se(best)
        return None if se is None else best - self.s.screen * se

    def _fold_se(self, accuracy: float) -> float | None:
        """Binomial standard error of one fold's accuracy around ``accuracy`` (None when the rows are unknown)."""
        if not (self.rows >= 2):
            return None
        b = min(max(float(accuracy), 1e-3), 1.0 - 1e-3)
        return math.sqrt(b * (1.0 - b) * max(self.s.time_model.scale, 2.0) / self.rows)

    def _fold_variance(self, accuracy: float) -> float | None:
        """Variance of one fold's accuracy in gain units (what conditioning on a screened test's fold uses), on top
        of the model's own observation noise."""
        se = self._fold_se(accuracy)
        if se is None:
            return None
        scale = 1.0 - self.majority if math.isfinite(self.majority) and self.majority < 1.0 else 1.0
        return (se / scale) ** 2 + self.s.accuracy_.noise

    def next(self, history: Sequence) -> str | None:
        score, mean, sd, best = self.scores(history)
        # what the choice below was made on, and the conditional mean gain of every learner then (explanations and
        # the results table read them)
        self.last_scores_, self.last_mean_ = score, mean
        self.last_seconds_ = self.seconds * self._ratio()  # the point predictions, rescaled by this dataset's tests
        if not np.isfinite(score).any():
            again = [j for j in self._capped if j not in self._retried]
            return self.s.learners_[again[0]] if again else None
        if self.s.stop > 0 and history:
            gap = self.s.eps / max(1.0 - self.majority, 1e-6)
            chance = (1.0 - self.fail) * norm.sf((best + gap - mean) / sd)
            chance[~np.isfinite(score)] = 0.0
            if chance.max() < self.s.stop:
                self.stop_reason = (f"no remaining learner beats the best by {self.s.eps:g} with probability "
                                    f">= {self.s.stop:g}")
                return None
        return self.s.learners_[int(np.argmax(score))]


@dataclass(frozen=True)
class _Prepared:
    """What :meth:`ConditionedStrategy.fit` reads from meta-data, as arrays: its arrays, the attempted cells,
    the runtime and similarity features and the landmarker columns of each dataset (rows of ``arrays``)."""

    arrays: object
    attempted: np.ndarray
    runtime_x: np.ndarray
    meta_x: np.ndarray
    table: dict  # landmarker column -> float values per dataset
    records: tuple = ()

    @classmethod
    def of(cls, meta, arrays, attempted) -> "_Prepared":
        datasets = list(arrays.datasets)
        table = meta.datasets.set_index("dataset").reindex(datasets)
        rows = [dict(r, dataset=d) for d, r in zip(datasets, table.to_dict("records"))]
        marks = {c: table[c].to_numpy(dtype=float) for c in LANDMARKS if c in table.columns}
        return cls(arrays, attempted, runtime_features(rows), meta_feature_matrix(rows), marks,
                   tuple(meta.datasets.to_dict("records")))

    def infos(self) -> list:
        """The datasets-table row of each dataset of the arrays (what ``meta.dataset_info`` gives)."""
        by_id = {str(r["dataset"]): r for r in self.records}
        return [dict(by_id[d]) for d in self.arrays.datasets]

    def take(self, keep: np.ndarray) -> "_Prepared":
        """The preparation of ``meta.subset(datasets=...)`` of the rows ``keep``: those rows and the learners
        with a run on one of them (the subset's learners)."""
        cols = np.flatnonzero(self.attempted[keep].any(axis=0))
        a = self.arrays.take(keep)
        if cols.size < len(a.learners):
            a = replace(a, learners=tuple(a.learners[j] for j in cols), accuracy=a.accuracy[:, cols],
                        seconds=a.seconds[:, cols], censored=a.censored[:, cols])
        return _Prepared(a, self.attempted[np.ix_(keep, cols)], self.runtime_x[keep], self.meta_x[keep],
                         {c: v[keep] for c, v in self.table.items()})


def _gain(acc: float, majority: float) -> float:
    """:func:`~algorank.recommender.accuracy_model.to_gain` of one accuracy (the same float, in plain Python)."""
    acc, maj = float(acc), float(majority)
    return (acc - maj) / (1.0 - maj) if math.isfinite(maj) and maj < 1.0 else acc


def _rows(info: Mapping) -> float:
    """The dataset's rows from its information (NaN when unknown)."""
    try:
        rows = float(info.get("n_instances", math.nan))
    except (TypeError, ValueError):
        return math.nan
    return rows if math.isfinite(rows) and rows > 0 else math.nan


def _majority(info: Mapping, fallback: float) -> float:
    """The score before any test: ``score_baseline`` (a metric other than accuracy), else the majority fraction."""
    try:
        v = float(info.get("score_baseline", info.get("majority_fraction", math.nan)))
    except (TypeError, ValueError):
        v = math.nan
    return v if 0 <= v < 1 else fallback  # 0: the regression baseline (predicting the mean)


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
    ``cap``, ``screen``, ``landmarks``, ``growth``, ``overhead``, ``scale``); ``seed`` defaults to an integer ``random_state``."""
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
    def pop_or_inf(key: str, least: float) -> float:  # a number >= least; absent, inf or none: no such rule
        raw = params.pop(key, None)
        if raw is None or str(raw).strip().lower() in ("inf", "none"):
            return math.inf
        return pop_number({key: raw}, key, None, strategy="ei", rule=f"a number >= {least:g}, inf or none",
                          valid=lambda v: v >= least)

    cap, screen = pop_or_inf("cap", 1.0), pop_or_inf("screen", 0.0)
    flags = {"acq": acq, "draws": draws, "seed": seed, "cap": cap, "screen": screen}
    for key in ("landmarks", "growth"):
        value = str(params.pop(key, "yes")).strip().lower()
        if value not in ("yes", "no"):
            raise InputError(f"strategy 'ei': {key} must be yes or no; got {value!r}")
        flags[key] = value == "yes"
    return ConditionedStrategy(h=h, p=p, shrink=shrink, stop=stop, eps=eps, **flags,
                               **pop_time_model(params, "ei"), name=name)
