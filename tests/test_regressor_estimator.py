"""AlgorankRegressor: a scikit-learn regressor around the live loop of a regression."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.datasets import load_diabetes
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils.estimator_checks import parametrize_with_checks

import algorank
from algorank import AlgorankRegressor
from algorank.recommender.live.estimator import NothingTestedError


def _fast(**kw):
    """Two cheap regressors, a budget they always fit in: the choice never depends on the machine's speed."""
    return AlgorankRegressor(**{"budget": 60.0, "top": 2, "cv": 3, "learners": ["ridge-reg", "knn-reg"],
                                "random_state": 0, **kw})


@parametrize_with_checks([_fast()])
def test_sklearn_compatible(estimator, check):
    logging.disable(logging.WARNING)
    try:
        check(estimator)
    finally:
        logging.disable(logging.NOTSET)


def test_public_and_documented():
    assert "AlgorankRegressor" in algorank.__all__ and algorank.AlgorankRegressor is AlgorankRegressor


def test_works_in_clone_pipeline_and_grid_search():
    X, y = load_diabetes(return_X_y=True)
    est = _fast()
    assert clone(est).get_params() == est.get_params()
    pipe = make_pipeline(FunctionTransformer(lambda a: a * 10.0), _fast(top=1))
    assert pipe.fit(X, y).score(X, y) > 0.45  # ridge on diabetes, in-sample
    grid = GridSearchCV(_fast(), {"top": [1, 2]}, cv=KFold(3, shuffle=True, random_state=0)).fit(X, y)
    assert grid.best_params_["top"] in (1, 2) and hasattr(grid.best_estimator_, "best_estimator_")
    assert grid.best_score_ > 0.4


def test_fit_chooses_the_best_cv_r2_and_refits_it():
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    reg = _fast(ensemble=False).fit(X, y)  # the best learner alone (the ensemble: tests/test_ensemble_regression.py)
    lb = reg.leaderboard_
    assert list(lb.columns[:5]) == ["learner", "short", "r2", "rmse", "mae"]
    ok = lb[lb.status == "ok"]
    assert len(ok) == 2
    assert reg.best_learner_ == ok.loc[ok.r2.idxmax(), "learner"] == "sklearn.linear_model.Ridge"
    assert type(reg.best_estimator_[-1]).__name__ == "Ridge"
    pred = reg.predict(X.head(7))
    assert pred.shape == (7,) and pred.dtype == float
    # the CV R² is that of scikit-learn's own cross-validation with the same folds
    from sklearn.linear_model import Ridge
    from sklearn.preprocessing import StandardScaler

    from algorank.evaluation.cv.resampling import derive_seed

    ref = cross_val_score(make_pipeline(StandardScaler(), Ridge()), X, y, scoring="r2",
                          cv=KFold(3, shuffle=True, random_state=derive_seed(0, 0))).mean()
    assert ok.loc[ok.learner == "sklearn.linear_model.Ridge", "r2"].iloc[0] == pytest.approx(ref, abs=1e-9)


def test_rmse_metric_and_whole_number_target_stay_regression():
    X, y = load_diabetes(return_X_y=True)
    y_int = np.round(y).astype(int) % 7  # 7 distinct whole numbers: class labels to task="auto", not here
    reg = _fast(metric="rmse").fit(X, y_int)
    assert reg.recommendation_.task == "regression" and reg.recommendation_.metric == "rmse"
    ok = reg.leaderboard_[reg.leaderboard_.status == "ok"]
    assert reg.best_learner_ == ok.loc[ok.rmse.idxmin(), "learner"]
    with pytest.raises(ValueError, match="metric 'accuracy' measures classification"):
        _fast(metric="accuracy").fit(X, y)


def test_mixed_frame_with_categories_and_missing_values():
    rng = np.random.default_rng(0)
    n = 200
    color = rng.choice(["red", "green", "blue"], size=n)
    x = rng.normal(size=n)
    y = np.where(color == "red", 3.0, 0.0) + 2 * x + rng.normal(scale=0.1, size=n)
    x_missing = x.copy()
    x_missing[::17] = np.nan
    X = pd.DataFrame({"color": pd.Categorical(color), "x": x_missing})
    reg = _fast().fit(X, y)
    new = pd.DataFrame({"color": pd.Categorical(["red", "purple"]), "x": [0.0, 1.0]})
    pred = reg.predict(new)
    assert np.all(np.isfinite(pred)) and pred[0] == pytest.approx(3.0, abs=0.5)


def test_nothing_tested_raises_or_warns():
    X, y = load_diabetes(return_X_y=True)
    with pytest.raises(NothingTestedError, match="no learner finished"):
        _fast(budget=1e-3).fit(X, y)
    reg = _fast(budget=1e-3, on_untested="warn").fit(X, y)
    assert reg.best_learner_ == "sklearn.linear_model.Ridge"  # the first of the order, fitted without a test


@pytest.mark.parametrize("params, message", [
    ({"top": 0}, "top must be an integer >= 1"),
    ({"learners": ["lda"]}, "learner 'lda' is a classifier"),
    ({"learners": []}, "learners must be a non-empty list"),
    ({"metric": "f1_macro"}, "metric 'f1_macro' measures classification"),
    ({"budget": -1.0}, "budget"),
])
def test_bad_parameters_are_named(params, message):
    X, y = load_diabetes(return_X_y=True)
    with pytest.raises(ValueError, match=message):
        _fast(**params).fit(X[:60], y[:60])


def test_class_labels_are_refused_in_words():
    """Text labels used to fail deep in scikit-learn's validation ("dtype='numeric' is not compatible with arrays of
    bytes/strings"); the error now says what y holds and which estimator fits it."""
    X, _ = load_diabetes(return_X_y=True)
    with pytest.raises(ValueError, match=r"^y holds class labels, not numbers: AlgorankRegressor fits a numeric "
                                         r"target; AlgorankClassifier fits class labels$"):
        _fast().fit(X[:60], np.array(["a", "b"] * 30))
    for y in (np.arange(60).astype(str).astype(object), np.arange(60).astype(str)):  # numbers written as text
        assert _fast().fit(X[:60], y).predict(X[:2]).dtype == float
