"""Ensemble selection for a regression: out-of-fold predicted values, scored fold by fold like the tests."""

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_diabetes
from sklearn.metrics import mean_absolute_error, mean_squared_error, r2_score

import algorank
from algorank.metadata.errors import InputError
from algorank.recommender.live.ensemble import (EnsembleRegressor, _regression_candidates, choose_ensemble,
                                                 regression_score, select_ensemble)

# Four rows in two folds.  A errs by +1, -1, +1, -1 and B by the opposite: averaged they are exact.
Y = np.array([0.0, 2.0, 1.0, 5.0])
FOLDS = np.array([0, 0, 1, 1])
WAVE = np.array([1.0, -1.0, 1.0, -1.0])
A = (Y + WAVE)[:, None]
B = (Y - WAVE)[:, None]
C = np.full((4, 1), 2.0)  # the mean of Y


def test_regression_score_by_hand():
    # fold 0: y (0, 2), mean 1, SST 2; A predicts (1, 1): SSE 2, R² 0.  Fold 1: y (1, 5), mean 3, SST 8; A predicts
    # (2, 4): SSE 2, R² 0.75.  Mean R² 0.375; RMSE 1 in both folds; MAE 1 in both
    assert regression_score("r2", Y, A, FOLDS) == pytest.approx(0.375)
    assert regression_score("rmse", Y, A, FOLDS) == pytest.approx(-1.0)
    assert regression_score("mae", Y, A, FOLDS) == pytest.approx(-1.0)
    # C predicts 2 everywhere: fold 0 SSE 4 (R² -1), fold 1 SSE 10 (R² -0.25)
    assert regression_score("r2", Y, C, FOLDS) == pytest.approx(-0.625)
    # a fold with a constant target: R² 1 when predicted exactly, else 0 (scikit-learn's convention)
    flat = np.array([3.0, 3.0, 1.0, 5.0])
    assert regression_score("r2", flat, np.array([3.0, 3.0, 1.0, 5.0]), FOLDS) == 1.0
    assert regression_score("r2", flat, np.array([3.0, 2.0, 1.0, 5.0]), FOLDS) == 0.5
    with pytest.raises(InputError, match="regression metric"):
        regression_score("accuracy", Y, A, FOLDS)


def test_regression_score_matches_scikit_learn_fold_by_fold():
    rng = np.random.default_rng(0)
    y = rng.normal(size=60)
    pred = y + rng.normal(scale=0.4, size=60)
    folds = rng.permutation(np.repeat(np.arange(4), 15))
    for metric, fn, sign in (("r2", r2_score, 1), ("rmse", lambda a, b: mean_squared_error(a, b) ** 0.5, -1),
                             ("mae", mean_absolute_error, -1)):
        ref = np.mean([fn(y[folds == k], pred[folds == k]) for k in range(4)])
        assert regression_score(metric, y, pred, folds) == pytest.approx(sign * ref)


def test_greedy_selection_of_regressors_by_hand():
    # A and B score the same alone (R² 0.375 each; A first by id); averaged they are exact (R² 1)
    choice = select_ensemble({"A": A, "B": B, "C": C}, Y, metric="r2", rounds=2, folds=FOLDS)
    assert choice.weights == {"A": 0.5, "B": 0.5}
    assert choice.score == pytest.approx(1.0)
    assert choice.best_learner == "A" and choice.best_score == pytest.approx(0.375)
    assert choice.candidates == ("A", "B", "C")
    rmse = select_ensemble({"A": A, "B": B, "C": C}, Y, metric="rmse", rounds=2, folds=FOLDS)
    assert rmse.weights == {"A": 0.5, "B": 0.5} and rmse.score == pytest.approx(0.0)
    kept = choose_ensemble({"A": A, "B": B, "C": C}, Y, metric="r2", best_score=0.375, rounds=2, folds=FOLDS)
    assert kept.kept and kept.members == ("A", "B")


def test_regression_selection_rejects_bad_input():
    with pytest.raises(InputError, match=r"\(n_rows, 1\)"):
        select_ensemble({"A": np.column_stack([Y, Y])}, Y, metric="r2", folds=FOLDS)
    with pytest.raises(InputError, match="one fold per row"):
        select_ensemble({"A": A}, Y, metric="r2", folds=FOLDS[:3])


def test_block_scoring_of_regressors_equals_one_at_a_time():
    rng = np.random.default_rng(2)
    y = rng.normal(size=90)
    folds = rng.integers(0, 3, 90)
    stack = (y[None, :, None] + rng.normal(size=(6, 90, 1)))
    total = stack[1] + stack[4]
    for metric in ("r2", "rmse", "mae"):
        fast = _regression_candidates(metric, y, total, stack, 3, folds)
        slow = [regression_score(metric, y, (total + p) / 3, folds) for p in stack]
        np.testing.assert_allclose(fast, slow)


def test_ensemble_regressor_averages_predictions():
    from sklearn.linear_model import Ridge
    from sklearn.tree import DecisionTreeRegressor

    X, y = load_diabetes(return_X_y=True)
    ridge, tree = Ridge().fit(X, y), DecisionTreeRegressor(max_depth=2, random_state=0).fit(X, y)
    ens = EnsembleRegressor([("ridge", ridge), ("tree", tree)], [3, 1])
    np.testing.assert_allclose(ens.predict(X[:5]), 0.75 * ridge.predict(X[:5]) + 0.25 * tree.predict(X[:5]))
    assert ens.fit(X, y) is ens and ens.members[0][1] is not ridge  # refitted clones
    assert algorank.EnsembleRegressor is EnsembleRegressor
    with pytest.raises(InputError, match="non-negative"):
        EnsembleRegressor([("ridge", ridge)], [-1]).predict(X)


def test_evaluator_out_of_fold_values_give_each_tests_score():
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    res = algorank.evaluate(X, y=y, learners=["ridge-reg", "knn-reg"], cv=5, random_state=0, task="regression")
    from algorank.evaluation.cv.resampling import make_resampler

    folds = np.zeros(len(y), dtype=int)
    for split in make_resampler("cv", cv=5, n_rows=len(y), stratify=False).repetition(0, y.to_numpy(dtype=float)):
        folds[split.test] = split.fold
    assert len(res.oof) == 2
    for learner, oof in res.oof.items():
        assert oof.shape == (len(y), 1) and oof.dtype == np.float64
        for metric in ("r2", "rmse", "mae"):
            sign = 1 if metric == "r2" else -1
            assert regression_score(metric, y, oof, folds) == pytest.approx(sign * res.summary.loc[learner,
                                                                                                   f"{metric}_mean"])


def _regression_meta():
    learners = ["sklearn.linear_model.Ridge", "sklearn.neighbors.KNeighborsRegressor",
                "sklearn.tree.DecisionTreeRegressor", "sklearn.linear_model.Lasso"]
    return algorank.load_meta("regression").subset(learners=learners)


def test_recommend_returns_the_ensemble_of_regressors(tmp_path):
    import joblib

    X, y = load_diabetes(return_X_y=True, as_frame=True)
    rec = algorank.recommend(X, y=y, task="regression", meta=_regression_meta(), budget=None, cv=5,
                             save_model=tmp_path / "m.joblib")
    chosen = rec.ensemble
    assert chosen is not None and chosen["kept"]
    assert isinstance(rec.model, EnsembleRegressor)
    assert [name for name, _ in rec.model.members] == chosen["members"]
    # the candidates are scored as the tests were: the best one's score is its test's value
    assert chosen["best_learner"] == rec.best.learner
    assert chosen["best_score"] == pytest.approx(rec.best.accuracy)
    assert chosen["score"] > rec.best.accuracy
    assert "weighted ensemble of" in rec.summary and "R² " in rec.summary
    info = joblib.load(tmp_path / "m.joblib").algorank_info_
    assert info["ensemble"]["weights"] == chosen["weights"] and info["task"] == "regression"
    single = algorank.recommend(X, y=y, task="regression", meta=_regression_meta(), budget=None, cv=5,
                                ensemble=False)
    assert single.ensemble is None and not isinstance(single.model, EnsembleRegressor)
    assert single.best.learner == rec.best.learner


def test_the_fixed_order_without_meta_data_selects_too():
    from algorank.evaluation.cv.datasets import as_dataset
    from algorank.recommender.live.regression import recommend_regression

    X, y = load_diabetes(return_X_y=True, as_frame=True)
    data = as_dataset(X, y=y, task="regression")
    rec = recommend_regression(data, budget=None, learners=["ridge-reg", "knn-reg", "lasso-reg"])
    assert rec.ensemble is not None and set(rec.ensemble["candidates"]) == set(rec.trace.learners)
    assert isinstance(rec.model, EnsembleRegressor) == bool(rec.ensemble["kept"])
    off = recommend_regression(data, budget=None, learners=["ridge-reg", "knn-reg"], ensemble=False)
    assert off.ensemble is None


def test_the_regressor_estimator_fits_the_kept_ensemble():
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    reg = algorank.AlgorankRegressor(budget=60, meta=_regression_meta(), random_state=0).fit(X, y)
    assert isinstance(reg.best_estimator_, EnsembleRegressor) and reg.ensemble_["kept"]
    assert [m for m, _ in reg.best_estimator_.members] == reg.ensemble_["members"]
    pred = reg.predict(X.head(4))
    w = reg.ensemble_["weights"]
    parts = sum(w[m] * model.predict(X.head(4)) for m, model in reg.best_estimator_.members)
    np.testing.assert_allclose(pred, parts)
    alone = algorank.AlgorankRegressor(budget=60, meta=_regression_meta(), random_state=0, ensemble=False).fit(X, y)
    assert alone.ensemble_ is None and not isinstance(alone.best_estimator_, EnsembleRegressor)
    assert alone.best_learner_ == reg.best_learner_
    assert isinstance(pd.Series(pred).sum(), float)


def test_parallel_tests_hand_back_their_out_of_fold_values():
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    serial = algorank.recommend(X, y=y, task="regression", meta=_regression_meta(), budget=None, cv=5)
    parallel = algorank.recommend(X, y=y, task="regression", meta=_regression_meta(), budget=None, cv=5, n_jobs=2)
    # the same tests with the same folds and seeds: the same out-of-fold values, so the same ensemble
    assert parallel.ensemble is not None
    assert parallel.ensemble["weights"] == serial.ensemble["weights"]
    assert parallel.ensemble["score"] == pytest.approx(serial.ensemble["score"])
