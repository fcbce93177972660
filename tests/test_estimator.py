"""AlgorankClassifier: a scikit-learn estimator around the recommend loop."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils.estimator_checks import parametrize_with_checks

from algorank import AlgorankClassifier
from algorank.metadata.snapshot import load_embedded

UCI = load_embedded("uci")



def _fast(**kw):
    return AlgorankClassifier(**{"budget": 5.0, "top": 2, "cv": 3, "meta": "uci", "random_state": 0, **kw})


# A budget the two tests on these tiny arrays never come near (they take well under a second): the checks that fit
# twice and compare the predictions then never see a starved fit fall back to another learner on a loaded machine.
@parametrize_with_checks([_fast(budget=60.0)])
def test_sklearn_compatible(estimator, check):
    logging.disable(logging.WARNING)
    try:
        check(estimator)
    finally:
        logging.disable(logging.NOTSET)


def _mixed(n=240, seed=0):
    rng = np.random.default_rng(seed)
    color = rng.choice(["red", "green", "blue"], size=n)
    x = rng.normal(size=n)
    y = np.where((color == "red") ^ (x > 0.5), "yes", "no")
    return pd.DataFrame({"color": pd.Categorical(color), "x": x, "noise": rng.normal(size=n)}), y


def test_works_in_clone_pipeline_cross_val_score_and_grid_search():
    X, y = load_iris(return_X_y=True)
    est = _fast(top=3)
    assert clone(est).get_params() == est.get_params()
    scores = cross_val_score(est, X, y, cv=3)
    assert scores.shape == (3,) and scores.min() > 0.85  # iris: any sensible learner
    pipe = make_pipeline(FunctionTransformer(lambda a: a * 10.0), _fast(top=2))
    assert pipe.fit(X, y).score(X, y) > 0.9
    grid = GridSearchCV(_fast(), {"top": [1, 3]}, cv=3).fit(X, y)
    assert grid.best_params_["top"] in (1, 3) and hasattr(grid.best_estimator_, "best_estimator_")


def test_fit_exposes_the_loop_and_refits_the_best():
    X, y = load_breast_cancer(return_X_y=True)
    labels = np.where(y == 1, "benign", "malignant")
    clf = _fast(top=4, budget=20.0).fit(X, labels)
    lb = clf.leaderboard_
    assert list(lb.columns[:4]) == ["learner", "short", "accuracy", "seconds"]
    assert len(lb) == len(clf.trace_.observations) == 4
    ok = lb[lb.status == "ok"]
    assert clf.best_learner_ == ok.loc[ok.accuracy.idxmax(), "learner"]  # best CV accuracy wins
    assert set(clf.classes_) == {"benign", "malignant"} and set(clf.predict(X)) <= set(clf.classes_)
    # the refitted model is the kept ensemble of tested learners, or else the chosen learner fitted on all rows
    if clf.ensemble_ is not None:
        assert [name for name, _ in clf.best_estimator_.members] == clf.ensemble_["members"]
        assert set(clf.ensemble_["members"]) <= set(ok.learner)
    else:
        assert type(clf.best_estimator_[-1]).__name__ in clf.best_learner_ or clf.best_learner_.startswith("SVC")
    assert clf.score(X, labels) >= ok.accuracy.max() - 0.05
    alone = _fast(top=4, budget=20.0, ensemble=False).fit(X, labels)
    assert alone.ensemble_ is None
    assert type(alone.best_estimator_[-1]).__name__ in alone.best_learner_ or alone.best_learner_.startswith("SVC")


def test_mixed_dataframe_with_unseen_categories():
    X, y = _mixed()
    clf = _fast(top=3, strategy="ar:p=0").fit(X, y)
    new = X.head(5).copy()
    new["color"] = pd.Categorical(["purple", "red", None, "blue", "green"])  # unseen and missing categories
    new.loc[0, "x"] = np.inf  # +-inf is treated as missing
    pred = clf.predict(new)
    assert pred.shape == (5,) and set(pred) <= {"yes", "no"}
    assert clf.score(X, y) > 0.8  # the interaction is learnable from the encoded colour
    with pytest.raises(ValueError, match="feature names"):
        clf.predict(X[["x", "noise"]])


def test_numbers_that_read_as_a_quantity_are_flagged(caplog):
    """A whole-number target with many values is a class per value for a classifier, as in scikit-learn, but the
    classifier says that it reads as a quantity and names the regressor."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    from algorank.recommender.live.estimator import _warn_if_a_quantity

    with caplog.at_level(logging.WARNING):
        _warn_if_a_quantity((X[:, 0] * 50 + 100).round())
    assert "y is numeric with 87 distinct values in 120 rows: it reads as a quantity; AlgorankClassifier takes " \
           "each value as a class (as scikit-learn's classifiers do); AlgorankRegressor fits a regression" \
           in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        _warn_if_a_quantity(np.arange(120) % 3)  # three labels
        _warn_if_a_quantity(np.array(["a", "b"] * 60))
    assert caplog.text == ""
