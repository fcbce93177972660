"""``AlgorankRegressor``: the recommend loop of a regression as a scikit-learn estimator.

``fit(X, y)`` tests the regressors on this data by shuffled K-fold cross-validation within
``budget`` seconds, in the order the regression meta-data ranks them for this data
(:func:`~algorank.recommender.live.recommend.recommend` with the embedded ``regression`` set; without
regression meta-data, :func:`~algorank.recommender.live.regression.recommend_regression`'s fixed
order), picks the one with the best CV value of
``metric`` (R² by default), refits it on all the data and predicts with it; or, where greedy ensemble selection
over the tests' out-of-fold predictions beats it, the weighted ensemble of the tested regressors.  It works in ``clone``,
``Pipeline``, ``cross_val_score`` and ``GridSearchCV`` like any regressor.
"""

from __future__ import annotations

import logging
import time

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_array, check_is_fitted, column_or_1d

from algorank.evaluation.cv.datasets import as_dataset
from algorank.evaluation.cv.preprocessing import final_pipeline, resolve_learner
from algorank.metadata.checks import check_budget, check_folds, check_seed
from algorank.metadata.errors import InputError
from algorank.metadata.regressors import PRIOR_FREE_ORDER
from algorank.recommender.live.estimator import (UNTESTED_CHOICES, AlgorankClassifier, NothingTestedError,
                                                 _affordable_ensemble, _fit_ensemble, _refit_choice)
from algorank.recommender.live.recommend import recommend
from algorank.recommender.live.regression import recommend_regression, regression_meta

__all__ = ["AlgorankRegressor"]

logger = logging.getLogger(__name__)


def _all_numbers(y) -> bool:
    """Whether every value of an object or text array reads as a number (missing values aside)."""
    if y.dtype.kind == "b":
        return False
    values = pd.Series(y, dtype=object)
    return bool(pd.to_numeric(values.dropna(), errors="coerce").notna().all())


class AlgorankRegressor(RegressorMixin, BaseEstimator):
    """Regressor that picks its learner by testing regressors live within a budget, then refits it.

    Parameters
    ----------
    budget : float
        Wall-clock seconds of ``fit``, the refit included: the live tests get ``(cv - 1) / cv`` of it
        (counted from the call), and the refit goes to the best tested learner whose refit, estimated
        from its test (``seconds x cv / (cv - 1)^2``), fits in what is left; when none does, to the one
        with the cheapest refit (a warning says so).
    cv : int
        Folds of the shuffled K-fold CV of each test (lowered to the number of rows on tiny data).
    top : int, optional
        Test at most this many learners.
    learners : sequence of str, optional
        The regressors to test, in this order: ids or short names of the regression portfolio
        (``"ridge-reg"``, ``"hist-gradient-boosting-reg"``, ...) or scikit-learn regressor class paths
        with JSON parameters.  Default: the meta-data's regressors, in the order ``strategy`` ranks
        them for this data.
    strategy : str, optional
        How the meta-data ranks the regressors (a spec of :mod:`algorank.recommender.registry`;
        default that of :func:`~algorank.recommender.live.recommend.recommend`).  Not with ``learners``.
    meta : str, path or MetaDataset, optional
        Regression meta-data (default: the embedded ``regression`` set; when it is not installed, the
        whole regression portfolio in its fixed order,
        :data:`algorank.metadata.regressors.PRIOR_FREE_ORDER`).
    random_state : int, optional
        Seed of the CV splits and the learners (None: 0, so ``fit`` is deterministic).
    allow_modules : tuple of str
        Packages besides scikit-learn whose estimator classes ``learners`` may name.
    metric : {"r2", "rmse", "mae"}, optional
        What the choice optimises: R² (default, maximised), RMSE or MAE (minimised).
    on_untested : {"raise", "warn"}
        When no learner finished its test within the budget: raise
        :class:`~algorank.recommender.live.estimator.NothingTestedError` (default), or (``"warn"``)
        log a warning and fit the first learner of the order without a test.
    n_jobs : int
        Tests run at once (``-1``: one per CPU).
    ensemble : bool
        Fit the weighted ensemble of the tested regressors that greedy ensemble selection over their out-of-fold
        predictions keeps (:mod:`algorank.recommender.live.ensemble`) instead of the best one alone, when its
        refit, estimated like a single refit, fits in what is left of the budget.

    Attributes
    ----------
    best_estimator_ : sklearn Pipeline or EnsembleRegressor
        The chosen learner with its preprocessing, fitted on all of ``X``, or the weighted ensemble of such
        pipelines that :attr:`ensemble_` describes.
    best_learner_ : str
        Its learner id (for an ensemble: the best learner alone).
    ensemble_ : dict or None
        The ensemble selection's choice (``Recommendation.ensemble``: ``weights``, ``score``, ``kept``, ...)
        when :attr:`best_estimator_` is that ensemble, else None.
    leaderboard_ : DataFrame
        learner, short, the metric's CV value (a column named after it), the other two of ``r2``,
        ``rmse``, ``mae``, seconds, cumulative_seconds, status, message, in test order.
    trace_ : Trace or None
        The loop's trace (None when the data were too small to cross-validate).
    recommendation_ : Recommendation or None
        The whole result of the loop.
    n_features_in_, feature_names_in_
        As in scikit-learn.

    Notes
    -----
    The target is used as given: no transform is applied behind the user's back (a target transform
    is a learner of its own, e.g. ``sklearn.compose.TransformedTargetRegressor`` with a nested regressor;
    see :mod:`algorank.metadata.regressors`).  With fewer than two rows no CV exists: the first learner
    of the order is fitted without a test (a warning says so).

    Examples
    --------
    >>> from algorank import AlgorankRegressor
    >>> from sklearn.datasets import load_diabetes
    >>> X, y = load_diabetes(return_X_y=True, as_frame=True)
    >>> reg = AlgorankRegressor(budget=20, learners=["ridge-reg", "knn-reg"]).fit(X, y)  # doctest: +SKIP
    >>> reg.best_learner_  # doctest: +SKIP
    'sklearn.linear_model.Ridge'
    >>> reg.predict(X.head(2)).shape  # doctest: +SKIP
    (2,)
    """

    def __init__(self, budget: float = 30.0, *, cv: int = 5, top: int | None = None, learners=None,
                 strategy: str | None = None, meta=None, random_state: int | None = None, allow_modules: tuple = (),
                 metric: str | None = None, on_untested: str = "raise", n_jobs: int = 1, ensemble: bool = True):
        self.budget = budget
        self.strategy = strategy
        self.meta = meta
        self.cv = cv
        self.top = top
        self.learners = learners
        self.random_state = random_state
        self.allow_modules = allow_modules
        self.metric = metric
        self.on_untested = on_untested
        self.n_jobs = n_jobs
        self.ensemble = ensemble

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        tags.non_deterministic = False
        return tags

    _validate = AlgorankClassifier._validate

    def fit(self, X, y):
        """Test the regressors on ``(X, y)`` within the budget and refit the best on all of it.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Features (numeric, categorical or text columns; missing values allowed).
        y : array-like of shape (n_samples,)
            The numeric target.

        Returns
        -------
        self
        """
        started = time.perf_counter()
        check_budget(self.budget, name="budget", none_ok=False)
        if y is None:
            raise ValueError("AlgorankRegressor requires y to be passed, but the target y is None")
        if self.on_untested not in UNTESTED_CHOICES:
            raise InputError(f"on_untested must be one of {', '.join(UNTESTED_CHOICES)}; got {self.on_untested!r}")
        frame = self._validate(X, reset=True)
        y = column_or_1d(y, warn=True)
        if y.dtype.kind in "OUSb":
            if not _all_numbers(y):
                raise InputError("y holds class labels, not numbers: AlgorankRegressor fits a numeric target; "
                                 "AlgorankClassifier fits class labels")
            y = pd.to_numeric(pd.Series(y, dtype=object)).to_numpy(dtype=float)  # numbers written as text
        y = check_array(y, ensure_2d=False, dtype="numeric", input_name="y")
        y = np.asarray(y, dtype=float)
        if len(y) != len(frame):
            raise ValueError(f"X and y have inconsistent numbers of samples: {len(frame)} and {len(y)}")
        seed = 0 if self.random_state is None else check_seed(self.random_state)
        check_folds(self.cv)
        meta = None
        if self.learners is None:
            meta = regression_meta(self.meta)
            order = list(PRIOR_FREE_ORDER)
        else:
            if self.strategy is not None or self.meta is not None:
                raise InputError("learners fixes the order: give either learners, or strategy and meta")
            order = list(self.learners)
            if isinstance(self.learners, str) or not order:
                raise InputError("learners must be a non-empty list of regressor ids")
        if meta is None and self.strategy is not None:
            raise InputError("strategy ranks the regressors from regression meta-data, and there is none: "
                             "give meta, or leave strategy out")
        folds = min(int(self.cv), len(y))
        learner = chosen = None
        self.recommendation_, self.trace_, self.leaderboard_ = None, None, None
        if folds >= 2 and len(np.unique(y)) >= 2:
            data = as_dataset(frame, y=y, name="fit", task="regression")
            budget = float(self.budget) * (folds - 1) / folds
            if meta is not None:
                rec = recommend(data, strategy=self.strategy, meta=meta, refit=False, budget_seconds=budget,
                                top=self.top, cv=folds, random_state=seed, allow_modules=self.allow_modules,
                                metric=self.metric, started=started, n_jobs=self.n_jobs, task="regression",
                                ensemble=bool(self.ensemble))
                planned = [p.learner for p in rec.plan]
                order = planned + [l for l in order if l not in planned]
            else:
                rec = recommend_regression(data, refit=False, budget=budget, top=self.top, cv=folds,
                                           random_state=seed, allow_modules=self.allow_modules, metric=self.metric,
                                           started=started, n_jobs=self.n_jobs, learners=order,
                                           ensemble=bool(self.ensemble))
            self.recommendation_, self.trace_, self.leaderboard_ = rec, rec.trace, rec.leaderboard
            left = float(self.budget) - (time.perf_counter() - started)
            chosen = _affordable_ensemble(rec, folds=folds, seconds_left=left)
            learner = _refit_choice(rec.trace, folds=folds, seconds_left=left)
            if learner is None:
                if self.on_untested == "raise":
                    tried = ", ".join(f"{o.learner} ({o.status})" for o in (rec.trace.observations if rec.trace else ()))
                    raise NothingTestedError(
                        f"no learner finished its test within the budget of {float(self.budget):g} s "
                        f"(tried: {tried or 'none'}): raise the budget, or pass on_untested='warn' to fit the "
                        "first learner of the order without a test")
                logger.warning("no learner finished its test within the budget; fitting the first of the order, %s",
                               order[0])
        else:
            logger.warning("too few rows or a constant target: no cross-validation possible; fitting the first "
                           "learner of the order without a test")
        if learner is None:
            learner = order[0]
        recipe = resolve_learner(str(learner), allow_modules=self.allow_modules, task="regression")
        self.best_learner_ = recipe.id
        self.ensemble_ = chosen
        if chosen is not None:
            self.best_estimator_ = _fit_ensemble(chosen, frame, y, seed=seed, allow_modules=self.allow_modules,
                                                 task="regression")
            return self
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1):  # as in the tests it was chosen by, so its refit time is predictable
            self.best_estimator_ = final_pipeline(recipe, random_state=seed).fit(frame, y)
        return self

    def predict(self, X):
        """Predicted target values of ``X`` (same columns as in ``fit``).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self, "best_estimator_")
        return np.asarray(self.best_estimator_.predict(self._validate(X, reset=False)), dtype=float).ravel()
