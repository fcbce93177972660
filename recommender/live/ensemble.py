"""Ensemble selection over the learners a recommendation tested (Caruana et al., 2004).

Every live test cross-validates its learner, so each finished test leaves out-of-fold predictions: class
probabilities for a classification, predicted values for a regression, one prediction per row of the user's data,
made by a model that did not see that row
(:attr:`~algorank.recommender.live.environment.LiveEnvironment.predictions`).  Greedy ensemble selection
combines them at no extra test cost:

1. start from an empty ensemble;
2. in each of ``rounds`` rounds, add the learner (repeats allowed) whose addition gives the averaged
   predictions the best out-of-fold score under the recommendation's metric; ties go to the learner with the
   better score on its own, then to the lower id;
3. each learner's weight is the share of the rounds that picked it.

How a score is computed follows the tests.  A classification scores the pooled out-of-fold rows
(:func:`proba_score`; with folds of equal size this is the mean over the folds for accuracy).  A regression's R²,
RMSE and MAE are computed fold by fold and averaged (:func:`regression_score`), as each test's value is, so that
the ensemble and the best single learner are compared on the same scale: R² of pooled rows, or RMSE over all
rows, would differ from the mean over the folds even for a single learner.

This is selection *with replacement* and without the sorted initialisation, as in auto-sklearn (Feurer et al.,
2015), which uses 50 rounds; :data:`ROUNDS` is that number.

The ensemble is kept only when it is worth its refit:

* it has at least two distinct learners;
* its out-of-fold score is above the best single learner's, both the best among the candidates and the best
  test of the recommendation (which may be a learner without probabilities, such as a linear SVC);
* with a budget, refitting its members is expected to take at most :data:`REFIT_SHARE` of the budget more than
  refitting the best learner alone.  A member's refit is expected to take its mean fold fit time times
  ``k / (k - 1)`` for ``k`` folds (it fits on all the rows instead of ``(k - 1) / k`` of them); while the
  ensemble is over that limit, its most expensive candidate is left out and the selection runs again.

The out-of-fold score of the chosen ensemble is measured on the rows it was chosen on, so it is optimistic;
the rule only asks that it beat the best single learner.  The refitted members are combined by
:class:`EnsembleClassifier` (the weighted mean of their class probabilities) or :class:`EnsembleRegressor` (the
weighted mean of their predictions).

References
----------
Caruana, R., Niculescu-Mizil, A., Crew, G. and Ksikes, A. (2004). Ensemble selection from libraries of
models. ICML.

Feurer, M., Klein, A., Eggensperger, K., Springenberg, J., Blum, M. and Hutter, F. (2015). Efficient and
robust automated machine learning. NeurIPS.
"""

from __future__ import annotations

import logging
import math
from dataclasses import asdict, dataclass, field
from typing import Mapping, Sequence

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin

from algorank.metadata.errors import InputError
from algorank.metadata.text import escape

__all__ = ["ROUNDS", "REFIT_SHARE", "EnsembleChoice", "EnsembleClassifier", "EnsembleRegressor", "proba_score",
           "regression_score", "select_ensemble", "choose_ensemble", "select_after_tests", "ensemble_model",
           "weights_text"]

logger = logging.getLogger(__name__)

#: Rounds of greedy selection (auto-sklearn's default ensemble size).
ROUNDS = 50

#: Share of the budget that refitting an ensemble may take beyond refitting the best learner alone.
REFIT_SHARE = 0.1

_LOG_EPS = 1e-15


def weights_text(weights: Mapping[str, float], *, sep: str = ", ", short: bool = True) -> str:
    """An ensemble's learners with their weights, in the order given: ``"logreg 0.86, knn 0.10"`` (short names
    unless ``short`` is False)."""
    from algorank.metadata.learners import short_name

    return sep.join(f"{short_name(l) if short else l} {w:.2f}" for l, w in weights.items())


def proba_score(metric: str, y: np.ndarray, proba: np.ndarray) -> float:
    """Score (higher is better) of class probabilities ``proba`` for class codes ``y`` under ``metric``.

    Accuracy, balanced accuracy and macro F1 score the most probable class (the first on ties); ROC AUC is the
    one-against-rest mean; log loss is given as ``exp(-log loss)``, the score a recommendation ranks by.

    Raises
    ------
    InputError
        ``metric`` is not a classification metric.
    """
    from algorank.evaluation.cv.fold import _auc_ovr, _balanced_accuracy, _f1_macro

    y = np.asarray(y, dtype=int)
    proba = np.asarray(proba, dtype=float)
    if metric == "log_loss":
        total = proba.sum(axis=1)
        true = proba[np.arange(len(y)), y] / np.where(total > 0, total, 1.0)
        return float(np.exp(np.mean(np.log(np.clip(true, _LOG_EPS, 1.0)))))
    if metric == "roc_auc":
        return float(_auc_ovr(y, proba))
    pred = np.argmax(proba, axis=1)
    if metric == "accuracy":
        return float(np.mean(pred == y))
    if metric == "balanced_accuracy":
        return float(_balanced_accuracy(y, pred))
    if metric == "f1_macro":
        return float(_f1_macro(y, pred))
    raise InputError(f"metric must be a classification metric (accuracy, balanced_accuracy, roc_auc, log_loss, "
                     f"f1_macro); got {metric!r}")


def _is_regression(metric: str) -> bool:
    from algorank.metadata.metric import REGRESSION_METRICS

    return metric in REGRESSION_METRICS


def regression_score(metric: str, y, predictions, folds) -> float:
    """Score (higher is better) of predicted values for targets ``y``: the metric computed on each fold's rows,
    then averaged over the folds, as a live test's value is.

    Parameters
    ----------
    metric : {"r2", "rmse", "mae"}
        R² as scikit-learn's ``r2_score`` (a fold with a constant target scores 1 when predicted exactly, else
        0); RMSE and MAE are given negated, as scores.
    y : array of float
    predictions : array of float
        ``(n_rows,)`` or ``(n_rows, 1)``.
    folds : array of int
        The test fold of each row.

    Raises
    ------
    InputError
        ``metric`` is not a regression metric.
    """
    pred = np.asarray(predictions, dtype=float).reshape(1, -1)
    return float(_regression_scores(metric, np.asarray(y, dtype=float), pred, np.asarray(folds))[0])


def _regression_scores(metric: str, y: np.ndarray, pred: np.ndarray, folds: np.ndarray) -> np.ndarray:
    """:func:`regression_score` of each row of ``pred`` (``(k, n_rows)``), computed together."""
    if not _is_regression(metric):
        raise InputError(f"metric must be a regression metric (r2, rmse, mae); got {metric!r}")
    order = np.argsort(folds, kind="stable")
    sorted_folds = folds[order]
    starts = np.flatnonzero(np.r_[True, sorted_folds[1:] != sorted_folds[:-1]])
    counts = np.diff(np.r_[starts, len(order)]).astype(float)
    resid = pred[:, order] - y[order]
    if metric == "mae":
        per_fold = -np.add.reduceat(np.abs(resid), starts, axis=1) / counts
    else:
        sse = np.add.reduceat(resid ** 2, starts, axis=1)
        if metric == "rmse":
            per_fold = -np.sqrt(sse / counts)
        else:
            ys = y[order]
            means = np.add.reduceat(ys, starts) / counts
            sst = np.add.reduceat((ys - np.repeat(means, counts.astype(int))) ** 2, starts)
            with np.errstate(divide="ignore", invalid="ignore"):
                per_fold = np.where(sst > 0, 1.0 - sse / np.where(sst > 0, sst, 1.0), np.where(sse == 0, 1.0, 0.0))
    return per_fold.mean(axis=1)


@dataclass(frozen=True)
class EnsembleChoice:
    """What ensemble selection found.

    Attributes
    ----------
    weights : dict
        learner -> weight (share of the rounds that picked it), largest first; they sum to 1.
    score : float
        Out-of-fold score of the ensemble (higher is better; ``exp(-log loss)`` for log loss, the negated value
        for RMSE and MAE).
    best_learner : str
        The best single learner among the candidates.
    best_score : float
        Its out-of-fold score.
    candidates : tuple of str
        Learners the selection chose from.
    rounds : int
    kept : bool
        Whether the recommendation returns the ensemble (see :func:`choose_ensemble`).
    reason : str
        Why it is kept or not, in words.
    refit_seconds : float
        Expected seconds to refit the members (NaN when unknown).
    left_out : tuple of str
        Candidates left out, most expensive first, because the ensemble's refit would have taken too long.
    """

    weights: dict
    score: float
    best_learner: str
    best_score: float
    candidates: tuple
    rounds: int = ROUNDS
    kept: bool = False
    reason: str = ""
    refit_seconds: float = math.nan
    left_out: tuple = field(default=())

    @property
    def members(self) -> tuple:
        """The distinct learners of the ensemble, largest weight first."""
        return tuple(self.weights)

    def to_dict(self) -> dict:
        """JSON-ready dict."""
        out = asdict(self)
        out["candidates"] = list(self.candidates)
        out["left_out"] = list(self.left_out)
        out["members"] = list(self.members)
        return out

    def describe(self) -> str:
        """One line: the members with their weights and the scores."""
        parts = weights_text(self.weights, short=False)
        return f"{parts} (out-of-fold score {self.score:.4f} against {self.best_score:.4f} for {self.best_learner})"


def select_ensemble(predictions: Mapping[str, np.ndarray], y, *, metric: str = "accuracy",
                    rounds: int = ROUNDS, folds=None) -> EnsembleChoice:
    """Greedy ensemble selection with replacement over out-of-fold ``predictions``.

    Parameters
    ----------
    predictions : mapping
        learner -> out-of-fold predictions, the same rows for all: ``(n_rows, n_classes)`` class probabilities
        (the same classes for all), or for a regression metric ``(n_rows, 1)`` predicted values.
    y : array
        Class codes ``0 .. n_classes - 1`` of the rows, or a regression's target values.
    metric : str
        Metric the selection maximises: a classification metric (see :func:`proba_score`) or ``r2``, ``rmse``,
        ``mae`` (see :func:`regression_score`).
    rounds : int
        Rounds of selection (the ensemble's size, counting repeats).
    folds : array of int, optional
        Regression: the test fold of each row, by which the scores are averaged (default: one fold).

    Returns
    -------
    EnsembleChoice
        With ``kept=False``; :func:`choose_ensemble` decides whether it is used.

    Raises
    ------
    InputError
        No predictions, predictions of different shapes, or a ``rounds`` below 1.
    """
    if isinstance(rounds, bool) or not isinstance(rounds, (int, np.integer)) or rounds < 1:
        raise InputError(f"rounds must be an integer >= 1, got {rounds!r}")
    regression = _is_regression(metric)
    y = np.asarray(y, dtype=float if regression else int)
    if regression:
        folds = np.zeros(len(y), dtype=int) if folds is None else np.asarray(folds, dtype=int)
        if folds.shape != y.shape:
            raise InputError(f"folds must give one fold per row; got {folds.shape[0] if folds.ndim else 0} "
                             f"for {len(y)} rows")
    if not predictions:
        raise InputError("predictions must hold at least one learner's out-of-fold probabilities")
    shapes = {np.shape(p) for p in predictions.values()}
    if len(shapes) != 1 or len(next(iter(shapes))) != 2 or next(iter(shapes))[0] != len(y):
        raise InputError(f"predictions must all be (n_rows, n_classes) arrays with one row per label; got shapes "
                         f"{sorted(shapes)} for {len(y)} labels")
    if regression and next(iter(shapes))[1] != 1:
        raise InputError(f"a regression's predictions must be (n_rows, 1) arrays; got shape {next(iter(shapes))}")
    dtype = np.float64 if regression else np.float32
    stack = np.stack([np.asarray(p, dtype=dtype) for p in predictions.values()])
    if regression:
        alone = {l: float(v) for l, v in zip(predictions, _regression_scores(metric, y, stack[:, :, 0], folds))}
    else:
        alone = {learner: proba_score(metric, y, p) for learner, p in predictions.items()}
    order = sorted(predictions, key=lambda learner: (-alone[learner], learner))  # the tie-break order
    position = {learner: i for i, learner in enumerate(predictions)}
    stack = stack[[position[learner] for learner in order]]
    total = np.zeros(stack.shape[1:], dtype=np.float64)
    counts = np.zeros(len(order), dtype=int)
    score = -math.inf
    for r in range(rounds):
        scores = (_regression_candidates(metric, y, total, stack, r + 1, folds) if regression
                  else _candidate_scores(metric, y, total, stack, r + 1))
        pick = int(np.argmax(scores))  # the first of the best: better alone, then the lower id
        counts[pick] += 1
        total += stack[pick]
        score = float(scores[pick])
    weights = {order[i]: float(counts[i] / rounds) for i in np.argsort(-counts, kind="stable") if counts[i]}
    return EnsembleChoice(weights=weights, score=float(score), best_learner=order[0], best_score=alone[order[0]],
                          candidates=tuple(order), rounds=int(rounds))


#: Bytes of the (candidates, rows, classes) block scored at once by accuracy.
_BLOCK_BYTES = 64 * 2**20


def _regression_candidates(metric: str, y: np.ndarray, total: np.ndarray, stack: np.ndarray, size: int,
                           folds: np.ndarray) -> np.ndarray:
    """Score of ``(total + stack[j]) / size`` for every candidate ``j`` of a regression, in blocks of candidates."""
    k, n = stack.shape[:2]
    step = max(1, _BLOCK_BYTES // max(n * 8, 1))
    out = np.empty(k)
    for start in range(0, k, step):
        block = (stack[start:start + step, :, 0] + total[:, 0]) / size
        out[start:start + step] = _regression_scores(metric, y, block, folds)
    return out


def _candidate_scores(metric: str, y: np.ndarray, total: np.ndarray, stack: np.ndarray, size: int) -> np.ndarray:
    """Score of ``(total + stack[j]) / size`` for every candidate ``j``.  Accuracy, the common case, is computed
    for a block of candidates at once (the most probable class does not depend on ``size``); the other metrics one
    candidate at a time with :func:`proba_score`."""
    if metric != "accuracy":
        return np.array([proba_score(metric, y, (total + p) / size) for p in stack])
    k, n, c = stack.shape
    if c == 2:  # class 1 wins a row when its summed probability is strictly larger (argmax takes the first on ties)
        margin = (stack[:, :, 1] - stack[:, :, 0]) + (total[:, 1] - total[:, 0]).astype(np.float32)
        return ((margin > 0) == (y == 1)).mean(axis=1)
    step = max(1, _BLOCK_BYTES // max(n * c * 4, 1))
    base = total.astype(np.float32)
    out = np.empty(k)
    for start in range(0, k, step):
        block = stack[start:start + step] + base  # (step, n, c)
        out[start:start + step] = (np.argmax(block, axis=2) == y).mean(axis=1)
    return out


def choose_ensemble(predictions: Mapping[str, np.ndarray], y, *, metric: str = "accuracy", best_score: float,
                    refit_seconds: Mapping[str, float] | None = None, budget: float | None = None,
                    best_learner: str | None = None, rounds: int = ROUNDS, folds=None) -> EnsembleChoice | None:
    """Ensemble selection with the rules that decide whether its ensemble replaces the best single learner.

    Parameters
    ----------
    predictions : mapping
        learner -> out-of-fold predictions of its test (see :func:`select_ensemble`).
    y : array
    metric : str
    best_score : float
        Score of the recommendation's best test (it may have no probabilities, hence no entry in ``predictions``).
    refit_seconds : mapping, optional
        learner -> expected seconds of its refit on all the rows (NaN or absent: unknown, counted as 0).
    budget : float, optional
        The recommendation's budget in seconds; None: no limit on the refit.
    best_learner : str, optional
        The learner of ``best_score``, whose refit the ensemble's is compared with.
    rounds : int
    folds : array of int, optional
        Regression: the test fold of each row (see :func:`select_ensemble`).

    Returns
    -------
    EnsembleChoice or None
        None when fewer than two learners have out-of-fold predictions; else the choice, ``kept`` saying
        whether it is used and ``reason`` why.
    """
    if len(predictions) < 2:
        return None
    cost = {learner: float((refit_seconds or {}).get(learner, math.nan)) for learner in predictions}
    cost = {k: (v if math.isfinite(v) else 0.0) for k, v in cost.items()}
    own = float((refit_seconds or {}).get(best_learner, math.nan)) if best_learner is not None else math.nan
    limit = None if budget is None else REFIT_SHARE * float(budget) + (own if math.isfinite(own) else 0.0)
    pool = dict(predictions)
    left_out: list[str] = []
    while True:
        choice = select_ensemble(pool, y, metric=metric, rounds=rounds, folds=folds)
        seconds = sum(cost[m] for m in choice.members)
        if limit is None or seconds <= limit or len(pool) <= 2:
            break
        dearest = max(choice.members, key=lambda m: (cost[m], m))
        left_out.append(dearest)
        del pool[dearest]
    target = max(float(best_score), choice.best_score)
    if len(choice.members) < 2:
        kept, reason = False, f"the selection kept one learner only ({choice.best_learner})"
    elif limit is not None and seconds > limit:
        kept, reason = False, (f"refitting its members would take about {seconds:.3g} s, more than "
                               f"{REFIT_SHARE:.0%} of the budget beyond the best learner's refit")
    elif not choice.score > target:
        kept, reason = False, (f"its out-of-fold score {choice.score:.4f} is not above the best single "
                               f"learner's {target:.4f}")
    else:
        kept, reason = True, (f"its out-of-fold score {choice.score:.4f} is above the best single learner's "
                              f"{target:.4f}")
    return EnsembleChoice(weights=choice.weights, score=choice.score, best_learner=choice.best_learner,
                          best_score=choice.best_score, candidates=choice.candidates, rounds=choice.rounds,
                          kept=kept, reason=reason, refit_seconds=float(seconds), left_out=tuple(left_out))


def select_after_tests(env, trace, data, *, metric: str, budget: float | None, refit: bool):
    """Ensemble selection over a finished live loop: ``(chosen, trace, refit)``.

    ``chosen`` is :func:`choose_ensemble`'s choice over the successful tests' out-of-fold predictions (held by the
    live environment ``env``; None when fewer than two have them), with a member's refit expected to take its mean
    fold fit time × k / (k − 1).  After a Ctrl-C during it: no choice, the trace marked interrupted and no refit
    (the tests are done; their best is kept).
    """
    from algorank.recommender.kernel.trace import Trace

    try:  # no test time: the tests' own out-of-fold predictions
        return _select(env, trace, data, metric=metric, budget=budget), trace, refit
    except KeyboardInterrupt:
        logger.warning("interrupted during the ensemble selection: the best learner is kept")
        return None, Trace(dataset=trace.dataset, observations=trace.observations, stopped="interrupted"), False


def _select(env, trace, data, *, metric: str, budget: float | None):
    """Ensemble selection over the successful tests' out-of-fold predictions (None when fewer than two have
    them); logs what it found."""
    ok = {o.learner for o in trace.observations if o.status == "ok"}
    predictions = {l: p for l, p in env.predictions.items() if l in ok}
    folds = env._folds()
    refit_seconds = {l: float(env.results.get(l, {}).get("fit_time_mean", math.nan)) * folds / max(folds - 1, 1)
                     for l in predictions}
    best = trace.best()
    regression = data.task == "regression"
    y = data.y.to_numpy(dtype=float) if regression else data.y_codes
    chosen = choose_ensemble(predictions, y, metric=metric, best_score=best.accuracy,
                             refit_seconds=refit_seconds, budget=budget, best_learner=best.learner,
                             folds=env.evaluator.test_folds(data) if regression else None)
    if chosen is not None:
        logger.info("ensemble selection: %s; %s: %s", escape(chosen.describe()),
                    "kept" if chosen.kept else "not kept", chosen.reason)
    return chosen


def ensemble_model(weights: Mapping[str, float], fit, *, regression: bool = False):
    """The ensemble of ``weights`` (learner -> weight, in member order) as a model: each member fitted by
    ``fit(learner)``, combined by :class:`EnsembleRegressor` for a regression, else :class:`EnsembleClassifier`."""
    members = [(learner, fit(learner)) for learner in weights]
    return (EnsembleRegressor if regression else EnsembleClassifier)(members, [weights[l] for l in weights])


class _WeightedMembers(BaseEstimator):
    """Fitted members with weights: what :class:`EnsembleClassifier` and :class:`EnsembleRegressor` share."""

    def __init__(self, members: Sequence = (), weights: Sequence[float] = ()) -> None:
        self.members = members
        self.weights = weights

    def __sklearn_is_fitted__(self) -> bool:
        """Fitted when it has members (they come fitted; :meth:`fit` refits them)."""
        return len(self.members) > 0

    def _check(self) -> np.ndarray:
        """The weights normalised to sum to 1, after checking members and weights."""
        if len(self.members) == 0 or len(self.members) != len(self.weights):
            raise InputError(f"members and weights must be non-empty and of the same length; got "
                             f"{len(self.members)} members and {len(self.weights)} weights")
        w = np.asarray(self.weights, dtype=float)
        if not (np.isfinite(w).all() and (w >= 0).all() and w.sum() > 0):
            raise InputError(f"weights must be non-negative numbers with a positive sum; got {list(self.weights)}")
        return w / w.sum()

    def fit(self, X, y):
        """Refit every member on ``(X, y)`` (the weights stay)."""
        from sklearn.base import clone

        self._check()
        self.members = [(name, clone(model).fit(X, y)) for name, model in self.members]
        return self


class EnsembleClassifier(ClassifierMixin, _WeightedMembers):
    """A weighted average of fitted classifiers' probabilities (the ensemble a recommendation returns).

    Parameters
    ----------
    members : list of (str, estimator)
        Learner ids and fitted classifiers with ``predict_proba`` and the same ``classes_``.
    weights : list of float
        One weight per member (normalised to sum to 1).

    Attributes
    ----------
    classes_ : ndarray
        The members' classes.

    Examples
    --------
    >>> from algorank import EnsembleClassifier
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.naive_bayes import GaussianNB
    >>> X, y = load_iris(return_X_y=True)
    >>> ens = EnsembleClassifier([("lr", LogisticRegression(max_iter=500).fit(X, y)),
    ...                           ("nb", GaussianNB().fit(X, y))], [0.5, 0.5])
    >>> ens.predict(X[:3]).tolist()
    [0, 0, 0]
    """

    @property
    def classes_(self) -> np.ndarray:
        self._check()
        return np.asarray(self.members[0][1].classes_)

    def _check(self) -> np.ndarray:
        w = super()._check()
        first = np.asarray(self.members[0][1].classes_)
        for name, model in self.members[1:]:
            if not np.array_equal(np.asarray(model.classes_), first):
                raise InputError(f"members must have the same classes_; {name!r} differs from {self.members[0][0]!r}")
        return w

    def predict_proba(self, X) -> np.ndarray:
        """Weighted mean of the members' probabilities, ``(n_rows, n_classes)``."""
        w = self._check()
        return sum(weight * np.asarray(model.predict_proba(X), dtype=float)
                   for weight, (_, model) in zip(w, self.members))

    def predict(self, X) -> np.ndarray:
        """The class with the largest averaged probability."""
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


class EnsembleRegressor(RegressorMixin, _WeightedMembers):
    """A weighted average of fitted regressors' predictions (the ensemble a regression's recommendation returns).

    Parameters
    ----------
    members : list of (str, estimator)
        Learner ids and fitted regressors.
    weights : list of float
        One weight per member (normalised to sum to 1).

    Examples
    --------
    >>> from algorank import EnsembleRegressor
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.linear_model import Ridge
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> X, y = load_diabetes(return_X_y=True)
    >>> ens = EnsembleRegressor([("ridge", Ridge().fit(X, y)),
    ...                          ("tree", DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, y))], [3, 1])
    >>> ens.predict(X[:2]).shape
    (2,)
    """

    def predict(self, X) -> np.ndarray:
        """Weighted mean of the members' predictions, ``(n_rows,)``."""
        w = self._check()
        return sum(weight * np.asarray(model.predict(X), dtype=float).ravel()
                   for weight, (_, model) in zip(w, self.members))
