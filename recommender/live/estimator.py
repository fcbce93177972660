"""``AlgorankClassifier``: the recommend loop as a scikit-learn estimator.

``fit(X, y)`` ranks the learners for this data from the meta-data, really tests them in that
order by stratified cross-validation within ``budget`` seconds (:func:`recommend`), picks the
one with the best CV accuracy, refits it on all the data and predicts with it.  It works in
``clone``, ``Pipeline``, ``cross_val_score`` and ``GridSearchCV`` like any classifier.
"""

from __future__ import annotations

import logging
import math
import time

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from algorank.evaluation.cv.datasets import as_dataset
from algorank.evaluation.cv.preprocessing import final_pipeline, resolve_learner
from algorank.metadata.checks import check_budget, check_folds, check_seed
from algorank.metadata.errors import AlgorankError, InputError
from algorank.metadata.snapshot import DEFAULT_META, load_meta
from algorank.recommender.live.recommend import recommend

__all__ = ["AlgorankClassifier", "NothingTestedError", "UNTESTED_CHOICES", "PROBABILITY_CHOICES"]

#: Values of ``AlgorankClassifier(on_untested=...)``.
UNTESTED_CHOICES = ("raise", "warn")
#: Values of ``AlgorankClassifier(probability=...)``.
PROBABILITY_CHOICES = ("native", "calibrate", "require")


class NothingTestedError(AlgorankError):
    """``fit`` tested no learner successfully within the budget, so there is nothing it could choose on merit."""

logger = logging.getLogger(__name__)


def _has_predict_proba(learner: str, *, allow_modules=()) -> bool:
    """Whether the fitted model of ``learner`` has ``predict_proba`` (read from the unfitted estimator: an SVC
    without ``probability=True``, a ridge, perceptron or hinge-loss SGD classifier has none)."""
    try:
        return hasattr(final_pipeline(resolve_learner(learner, allow_modules=allow_modules), random_state=0),
                       "predict_proba")
    except (AlgorankError, ImportError, TypeError, ValueError):  # a learner that cannot be built here is never run
        return False


def _warn_if_a_quantity(y) -> None:
    """Log a warning when numeric labels read as a quantity by ``recommend``'s rule (many distinct whole numbers):
    the classifier takes each value as a class, as scikit-learn's classifiers do, and names the regressor."""
    from algorank.evaluation.cv.task import numeric_target_task

    y = np.asarray(y)
    if not np.issubdtype(y.dtype, np.number) or np.issubdtype(y.dtype, np.bool_):
        return
    task, why = numeric_target_task(pd.Series(y))
    if task == "regression":
        logger.warning("y is numeric with %s: it reads as a quantity; AlgorankClassifier takes each value as a "
                       "class (as scikit-learn's classifiers do); AlgorankRegressor fits a regression", why)


def _refit_choice(trace, *, folds: int, seconds_left: float, calibrated=frozenset()) -> str | None:
    """The most accurate tested learner whose estimated refit fits in ``seconds_left`` (else the cheapest).

    A learner in ``calibrated`` is refitted with its calibration: ``folds`` fits on ``(folds - 1) / folds`` of the
    rows, about what its test cost."""
    if trace is None:
        return None
    ok = [o for o in trace.observations if o.status == "ok" and o.accuracy == o.accuracy]
    if not ok:
        return None
    cost = {o.learner: o.seconds if o.learner in calibrated else _refit_seconds(o.seconds, folds) for o in ok}
    best = trace.best()
    fitting = sorted((o for o in ok if cost[o.learner] <= seconds_left), key=lambda o: -o.accuracy)
    chosen = fitting[0] if fitting else min(ok, key=lambda o: cost[o.learner])
    if chosen.learner != best.learner:
        logger.warning("refitting %s (CV accuracy %.4f) instead of the most accurate %s (%.4f): its refit (about "
                       "%.3g s) would not fit in the %.3g s left of the budget", chosen.learner, chosen.accuracy,
                       best.learner, best.accuracy, cost[best.learner], max(seconds_left, 0.0))
    return chosen.learner


def _refit_seconds(test_seconds: float, folds: int) -> float:
    """Estimated seconds of a refit on all rows from the seconds of a ``folds``-fold test: ``folds`` fits on
    ``(folds - 1) / folds`` of the rows, and a fit on all rows that costs up to quadratically more than a fold's."""
    return test_seconds * folds / (folds - 1) ** 2


def _ensemble_refit_seconds(trace, members, *, folds: int) -> float:
    """Estimated seconds to refit ``members`` on all rows (:func:`_refit_seconds` of each one's last successful
    test), summed."""
    last = {o.learner: o.seconds for o in trace.observations if o.status == "ok"}
    return float(sum(_refit_seconds(last.get(m, math.inf), folds) for m in members))


def _affordable_ensemble(rec, *, folds: int, seconds_left: float) -> dict | None:
    """The ensemble ``rec`` kept (its ``ensemble`` dict) when its refit, estimated like one learner's, fits in
    ``seconds_left``; else None (logged)."""
    chosen = rec.ensemble if rec.ensemble and rec.ensemble.get("kept") else None
    if chosen is not None:
        cost = _ensemble_refit_seconds(rec.trace, chosen["members"], folds=folds)
        if not cost <= seconds_left:
            logger.info("the ensemble's refit (about %.3g s) would not fit in the %.3g s left of the budget: "
                        "refitting one learner", cost, max(seconds_left, 0.0))
            return None
    return chosen


def _fit_ensemble(chosen: dict, X, y, *, seed: int, allow_modules=(), task: str = "classification"):
    """The members of ensemble ``chosen`` fitted on ``(X, y)`` with the live tests' preprocessing, one thread,
    combined with its weights (an :class:`~algorank.recommender.live.ensemble.EnsembleClassifier` or
    :class:`~algorank.recommender.live.ensemble.EnsembleRegressor`)."""
    from threadpoolctl import threadpool_limits

    from algorank.recommender.live.ensemble import ensemble_model

    with threadpool_limits(limits=1):
        return ensemble_model(chosen["weights"], lambda m: final_pipeline(
            resolve_learner(m, allow_modules=allow_modules, task=task), random_state=seed).fit(X, y),
            regression=task == "regression")


class _available_with_reason:
    """Like :func:`sklearn.utils.metaestimators.available_if`, but the ``AttributeError`` the check raises reaches
    the user with its own message (``hasattr`` is False either way)."""

    def __init__(self, check):
        self.check = check

    def __call__(self, fn):
        self.fn = fn
        self.__doc__ = fn.__doc__
        return self

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self.fn
        try:
            self.check(obj)
        except AttributeError:
            raise
        except Exception as exc:  # not fitted: no attribute, as scikit-learn's available_if says
            raise AttributeError(f"This {type(obj).__name__!r} has no attribute {self.name!r}") from exc
        import types

        return types.MethodType(self.fn, obj)


class AlgorankClassifier(ClassifierMixin, BaseEstimator):
    """Classifier that picks its learner with algorank's recommend loop, then refits it.

    Parameters
    ----------
    budget : float
        Wall-clock seconds of ``fit``, the refit included: the live tests get ``(cv - 1) / cv``
        of it (counted from the call), and the refit goes to the most accurate tested learner
        whose refit, estimated from its test (``seconds x cv / (cv - 1)^2``: a fit on all rows
        that costs up to quadratically more than a fold's), fits in what is left; when none
        does, to the one with the cheapest refit (a warning says so).
    strategy : str, optional
        Strategy spec (default: ``recommend``'s default).
    meta : str or MetaDataset
        Prior runs: an embedded set's name (``"broad"``, default; ``"uci"``, ``"lcdb"``, ``"oboe"``), a file, or a MetaDataset.
    cv : int
        Folds of the stratified CV of each test (lowered to the smallest class count on tiny data).
    top : int, optional
        Test at most this many learners.
    random_state : int, optional
        Seed of the CV splits and the learners (None: 0, so ``fit`` is deterministic).
    allow_modules : tuple of str
        Packages besides scikit-learn whose estimator classes meta-data learner ids may name.
    metric : str, optional
        What the tests measure and the choice maximises: ``accuracy``, ``balanced_accuracy``,
        ``roc_auc``, ``log_loss`` (minimised) or ``f1_macro``, where the meta-data records it
        (default: the one the meta-data ranks by; accuracy for ``broad``).
    on_untested : {"raise", "warn"}
        When no learner finished its test within the budget: raise :class:`NothingTestedError`
        (default), or (``"warn"``, opt-in) log a warning and fit the learner expected to be
        fastest without a test.
    n_jobs : int
        Tests run at once (``-1``: one per CPU) on the engine joblib is configured with (loky
        processes by default; ``joblib.parallel_config(backend="dask")`` for a Dask cluster).
    probability : {"native", "calibrate", "require"}
        What :meth:`predict_proba` gives when the chosen learner has no probabilities of its own
        (an SVC, ridge, perceptron, passive-aggressive or hinge-loss SGD classifier):

        * ``"native"`` (default): nothing is added; ``predict_proba`` then raises an
          ``AttributeError`` that names the chosen learner and the two options below
          (``hasattr(clf, "predict_proba")`` is False, as scikit-learn expects);
        * ``"calibrate"``: such a learner is refitted inside scikit-learn's
          :class:`~sklearn.calibration.CalibratedClassifierCV` (Platt's sigmoid, on ``cv``
          stratified folds; Platt 1999), so ``predict_proba`` is always there; the refit then
          costs about as much as the learner's test, which the budget's refit share accounts for;
        * ``"require"``: only learners with their own ``predict_proba`` are tested and chosen.
    ensemble : bool
        Fit the weighted ensemble of the tested learners that greedy ensemble selection over their
        out-of-fold probabilities keeps (:mod:`algorank.recommender.live.ensemble`) instead of the best
        learner alone, when refitting its learners (estimated as for the best learner) fits in what is left
        of the budget.  False: the best learner alone.

    Attributes
    ----------
    best_estimator_ : sklearn Pipeline, CalibratedClassifierCV or EnsembleClassifier
        The chosen learner with its preprocessing, fitted on all of ``X`` (with
        ``probability="calibrate"`` and a learner without probabilities, that pipeline inside a
        fitted :class:`~sklearn.calibration.CalibratedClassifierCV`), or the weighted ensemble of such
        pipelines that :attr:`ensemble_` describes.
    best_learner_ : str
        Its learner id (for an ensemble: the best learner alone).
    ensemble_ : dict or None
        The ensemble selection's choice (``Recommendation.ensemble``: ``weights``, ``score``, ``kept``, ...)
        when :attr:`best_estimator_` is that ensemble, else None.
    classes_ : ndarray
        The class labels.
    leaderboard_ : DataFrame
        learner, short, the metric's CV value (a column named after it, e.g. ``accuracy``), seconds,
        cumulative_seconds, status, message, in test order.
    trace_ : Trace or None
        The loop's trace (None when the data were too small to cross-validate).
    recommendation_ : Recommendation or None
        The whole result of :func:`recommend`.
    n_features_in_, feature_names_in_
        As in scikit-learn.

    Notes
    -----
    When a class has a single sample, no stratified CV exists: the first learner of the
    planned order is fitted without a test (``leaderboard_`` is then empty and a warning says so).

    scikit-learn's ``check_estimator`` passes in full in the test suite (``tests/test_estimator.py``);
    sparse input is refused with scikit-learn's standard error (the evaluator works on dense frames).

    Examples
    --------
    >>> from algorank import AlgorankClassifier
    >>> from sklearn.datasets import load_breast_cancer
    >>> X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    >>> clf = AlgorankClassifier(budget=20).fit(X, y)  # doctest: +SKIP
    >>> clf.predict(X.head())  # doctest: +SKIP
    """

    def __init__(self, budget: float = 30.0, *, strategy: str | None = None, meta=DEFAULT_META, cv: int = 5,
                 top: int | None = None, random_state: int | None = None, allow_modules: tuple = (),
                 metric: str | None = None, on_untested: str = "raise", n_jobs: int = 1,
                 probability: str = "native", ensemble: bool = True):
        self.budget = budget
        self.strategy = strategy
        self.meta = meta
        self.cv = cv
        self.top = top
        self.random_state = random_state
        self.allow_modules = allow_modules
        self.metric = metric
        self.on_untested = on_untested
        self.n_jobs = n_jobs
        self.probability = probability
        self.ensemble = ensemble

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        tags.non_deterministic = False
        return tags

    # ------------------------------------------------------------------
    def fit(self, X, y):
        """Run the recommend loop on ``(X, y)`` and refit the best learner on all of it.

        Returns
        -------
        self
        """
        started = time.perf_counter()
        check_budget(self.budget, name="budget", none_ok=False)
        if y is None:
            raise ValueError("AlgorankClassifier requires y to be passed, but the target y is None")
        if self.on_untested not in UNTESTED_CHOICES:
            raise InputError(f"on_untested must be one of {', '.join(UNTESTED_CHOICES)}; got {self.on_untested!r}")
        if self.probability not in PROBABILITY_CHOICES:
            raise InputError(f"probability must be one of {', '.join(PROBABILITY_CHOICES)}; got {self.probability!r}")
        frame = self._validate(X, reset=True)
        from sklearn.utils.multiclass import check_classification_targets
        from sklearn.utils.validation import column_or_1d

        y = column_or_1d(y, warn=True)

        check_classification_targets(y)
        _warn_if_a_quantity(y)
        if len(y) != len(frame):
            raise ValueError(f"X and y have inconsistent numbers of samples: {len(frame)} and {len(y)}")
        self.classes_, codes = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(f"Classifier can't train when only one class is present ({self.classes_[0]!r})")
        seed = 0 if self.random_state is None else check_seed(self.random_state)
        check_folds(self.cv)
        data = as_dataset(frame, y=codes.astype(np.int64), name="fit", task="classification")  # codes of y
        smallest = int(np.bincount(codes).min())
        folds = min(int(self.cv), smallest)
        meta = load_meta(self.meta)  # the loader of every front door: a name, a file, a MetaDataset, a list
        if self.probability == "require":
            keep = [l for l in meta.learner_ids if _has_predict_proba(l, allow_modules=self.allow_modules)]
            if not keep:
                raise InputError("probability='require': no learner of the meta-data has predict_proba")
            meta = meta.subset(learners=keep)
        if folds >= 2:
            rec = recommend(data, strategy=self.strategy, meta=meta, refit=False,  # refit below, within the budget
                            budget_seconds=float(self.budget) * (folds - 1) / folds, top=self.top, cv=folds,
                            random_state=seed, allow_modules=self.allow_modules, started=started, metric=self.metric,
                            n_jobs=self.n_jobs, ensemble=bool(self.ensemble))
            self.recommendation_, self.trace_ = rec, rec.trace
            self.leaderboard_ = rec.leaderboard
            left = float(self.budget) - (time.perf_counter() - started)
            calibrated = frozenset() if self.probability != "calibrate" else frozenset(
                o.learner for o in (rec.trace.observations if rec.trace else ())
                if not _has_predict_proba(o.learner, allow_modules=self.allow_modules))
            chosen = _affordable_ensemble(rec, folds=folds, seconds_left=left)  # its refit must fit in what is left
            learner = _refit_choice(rec.trace, folds=folds, seconds_left=left, calibrated=calibrated)
            if learner is None:
                runnable = [p for p in rec.plan if p.learner not in rec.rank_only]
                if self.on_untested == "raise":
                    tried = ", ".join(f"{o.learner} ({o.status})" for o in (rec.trace.observations if rec.trace else ()))
                    raise NothingTestedError(
                        f"no learner finished its test within the budget of {float(self.budget):g} s "
                        f"(tried: {tried or 'none'}): raise the budget, or pass on_untested='warn' to fit the "
                        "learner expected to be fastest without a test")
                if runnable:
                    learner = min(runnable, key=lambda p: p.expected_seconds if math.isfinite(p.expected_seconds)
                                  else math.inf).learner
                    logger.warning("no learner finished its test within the budget; fitting the one expected to be "
                                   "fastest, %s", learner)
        else:
            logger.warning("a class has a single sample: no cross-validation possible; fitting the first planned "
                           "learner without a test")
            rec = recommend(data, strategy=self.strategy, meta=meta, dry_run=True, refit=False, cv=2,
                            random_state=seed, allow_modules=self.allow_modules, metric=self.metric)
            chosen = None
            self.recommendation_, self.trace_ = rec, None
            self.leaderboard_ = rec.leaderboard
            learner = None
        if learner is None:
            learner = next((p.learner for p in rec.plan if p.learner not in rec.rank_only), None)
            if learner is None:
                raise InputError("the meta-data names no learner that can be run here")
        self.best_learner_ = learner
        from threadpoolctl import threadpool_limits

        self.ensemble_ = chosen
        if chosen is not None:
            self.best_estimator_ = _fit_ensemble(chosen, frame, codes, seed=seed, allow_modules=self.allow_modules)
            return self
        recipe = resolve_learner(learner, allow_modules=self.allow_modules)

        model = final_pipeline(recipe, random_state=seed)
        if self.probability == "calibrate" and not hasattr(model, "predict_proba"):
            if smallest >= 2:
                from sklearn.calibration import CalibratedClassifierCV
                from sklearn.model_selection import StratifiedKFold

                model = CalibratedClassifierCV(model, method="sigmoid", cv=StratifiedKFold(
                    min(int(self.cv), smallest), shuffle=True, random_state=seed))
            else:
                logger.warning("a class has a single sample: %s cannot be calibrated, so it has no predict_proba",
                               learner)
        with threadpool_limits(limits=1):  # as in the tests it was chosen by, so its refit time is predictable
            self.best_estimator_ = model.fit(frame, codes)
        return self

    def predict(self, X):
        """Class labels of ``X`` (same columns as in ``fit``)."""
        check_is_fitted(self, "best_estimator_")
        codes = np.asarray(self.best_estimator_.predict(self._validate(X, reset=False)), dtype=np.int64)
        return self.classes_[codes]

    def _has_proba(self):
        check_is_fitted(self, "best_estimator_")
        if hasattr(self.best_estimator_, "predict_proba"):
            return True
        from algorank.metadata.learners import short_name

        raise AttributeError(
            f"the chosen learner {short_name(self.best_learner_)} ({self.best_learner_}) has no predict_proba: "
            "pass probability='calibrate' to calibrate it at refit (CalibratedClassifierCV), or "
            "probability='require' to test and choose only learners with probabilities")

    @_available_with_reason(_has_proba)
    def predict_proba(self, X):
        """Class probabilities, columns in the order of :attr:`classes_`.

        Available when the chosen learner has probabilities of its own, or was calibrated
        (``probability="calibrate"``); otherwise an ``AttributeError`` names the learner and the
        options (see ``probability``).
        """
        proba = self.best_estimator_.predict_proba(self._validate(X, reset=False))
        out = np.zeros((proba.shape[0], len(self.classes_)))
        out[:, np.asarray(self.best_estimator_.classes_, dtype=np.int64)] = proba
        return out

    # ------------------------------------------------------------------
    def _validate(self, X, *, reset: bool) -> pd.DataFrame:
        """Features as a DataFrame (mixed types kept); sets/checks ``n_features_in_`` like scikit-learn."""
        if isinstance(X, pd.DataFrame):
            validate_data(self, X, reset=reset, skip_check_array=True)
            if len(X) == 0:
                raise ValueError("Found array with 0 sample(s) (shape=(0, %d)) while a minimum of 1 is required."
                                 % X.shape[1])
            frame = X.copy()
            frame.columns = [str(c) for c in frame.columns]
            return frame.reset_index(drop=True)
        arr = validate_data(self, X, reset=reset, dtype=None, ensure_all_finite="allow-nan", accept_sparse=False)
        if arr.dtype.kind not in "biuf":
            arr = arr.astype(object)
        return pd.DataFrame(arr, columns=[str(i) for i in range(arr.shape[1])])
