"""The regression portfolio, regressor ids under the inert-id rules, and the evaluator's regression folds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import RegressorMixin
from sklearn.metrics import mean_absolute_error, mean_squared_error, r2_score
from sklearn.model_selection import KFold

from algorank.evaluation.cv.datasets import as_dataset
from algorank.evaluation.cv.evaluator import Evaluator
from algorank.evaluation.cv.preprocessing import resolve_learner
from algorank.evaluation.cv.resampling import derive_seed, make_resampler
from algorank.evaluation.cv.store import FoldStore
from algorank.metadata.errors import InputError
from algorank.metadata.learners import LEARNERS, is_runnable, make_estimator, short_name
from algorank.metadata.regressors import PRIOR_FREE_ORDER, REGRESSORS, REGRESSORS_BY_SHORT, is_regressor_id

FAMILIES = {"LinearRegression", "Ridge", "Lasso", "ElasticNet", "HuberRegressor", "KNeighborsRegressor", "SVR",
            "DecisionTreeRegressor", "ExtraTreeRegressor", "RandomForestRegressor", "ExtraTreesRegressor",
            "GradientBoostingRegressor", "HistGradientBoostingRegressor", "MLPRegressor"}


def test_portfolio_is_the_scikit_learn_families_with_defaults():
    boosting = {lid for lid, spec in REGRESSORS.items() if spec.requires}
    assert sorted(boosting) == ["catboost-reg:default", "lgbm-reg:default", "xgb-reg:default"]
    built = {lid: make_estimator(lid) for lid in REGRESSORS if lid not in boosting}
    assert {type(e).__name__ for e in built.values()} == FAMILIES
    assert all(isinstance(e, RegressorMixin) for e in built.values())
    assert sorted(e.kernel for lid, e in built.items() if lid.startswith("SVR_")) == ["linear", "poly", "rbf"]
    for lid, est in built.items():  # defaults: nothing set but the SVR kernel
        default = type(est)().get_params()
        changed = {k for k, v in est.get_params().items() if v != default[k]}
        assert changed == ({"kernel"} if lid in ("SVR_linear", "SVR_poly") else set()), lid
    # short names: one per id, none shared with a classifier
    assert len(REGRESSORS_BY_SHORT) == len(REGRESSORS) == 19
    assert not set(REGRESSORS_BY_SHORT) & {s.short for s in LEARNERS.values()}
    assert short_name("sklearn.linear_model.Ridge") == "ridge-reg" and short_name("SVR_rbf") == "svr-rbf"
    assert sorted(PRIOR_FREE_ORDER) == sorted(set(REGRESSORS) - boosting)  # the extra's regressors need meta-data


def test_scaling_follows_the_family():
    assert resolve_learner("ridge-reg", task="regression").scaling == "standard"
    assert resolve_learner("svr-rbf", task="regression").scaling == "standard"
    assert resolve_learner("random-forest-reg", task="regression").scaling == "none"
    assert resolve_learner("sklearn.ensemble.HistGradientBoostingRegressor", task="regression").scaling == "none"


def test_ids_are_checked_against_the_task():
    assert is_regressor_id("ridge-reg") and not is_regressor_id("ridge")
    with pytest.raises(InputError, match="is a regressor; it cannot run on a classification task"):
        resolve_learner("ridge-reg")
    with pytest.raises(InputError, match="is not a regressor"):
        resolve_learner("sklearn.naive_bayes.GaussianNB", task="regression")
    with pytest.raises(InputError, match="is a classifier; it cannot run on a regression task"):
        resolve_learner("sklearn.linear_model.LogisticRegression", task="regression")  # a classification id
    with pytest.raises(InputError, match="learner 'knn' is a classifier; it cannot run on a regression task"):
        resolve_learner("knn", task="regression")
    with pytest.raises(InputError, match="unknown regressor id 'knn-regression'"):
        resolve_learner("knn-regression", task="regression")
    assert is_runnable("sklearn.linear_model.BayesianRidge", task="regression")
    assert not is_runnable("sklearn.linear_model.BayesianRidge")  # not a classifier
    assert not is_runnable("sklearn.linear_model.LogisticRegression", task="regression")
    assert is_runnable("knn-reg", task="regression") and not is_runnable("knn", task="regression")


@pytest.mark.parametrize("learner, why", [
    ("os.system", "outside the allowed packages"),
    ("sklearn.utils._testing.MinimalRegressor", "private, test or build module"),
    ('sklearn.linear_model.Ridge{"solver": "rm -rf /"}', "fixed choices"),
    ('sklearn.compose.TransformedTargetRegressor{"regressor": {"__class__": "sklearn.linear_model.Ridge"}, '
     '"func": "numpy.log1p"}', "cannot come from data|fixed choices"),
    ('sklearn.compose.TransformedTargetRegressor{"regressor": {"__class__": "os.system"}}', "outside the allowed"),
    ('sklearn.compose.TransformedTargetRegressor{"transformer": {"__class__": '
     '"sklearn.feature_extraction.text.TfidfVectorizer", "input": "filename"}}', "preprocessing transformer"),
])
def test_regressor_ids_are_data_never_code(learner, why):
    with pytest.raises(InputError, match=why):
        resolve_learner(learner, task="regression")


def test_a_target_transform_is_a_learner_of_its_own():
    lid = ('sklearn.compose.TransformedTargetRegressor{"regressor": {"__class__": "sklearn.linear_model.Ridge"}, '
           '"transformer": {"__class__": "sklearn.preprocessing.StandardScaler"}}')
    est = resolve_learner(lid, task="regression").build(random_state=3)
    assert type(est).__name__ == "TransformedTargetRegressor"
    assert type(est.regressor).__name__ == "Ridge" and est.regressor.random_state == 3
    assert type(est.transformer).__name__ == "StandardScaler"
    assert short_name(lid) == "transformed-target-regressor(ridge-reg,standard-scaler)"


def _linear_data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n)})
    y = 3.0 * X["a"] - 2.0 * X["b"] + 0.5 + rng.normal(scale=0.3, size=n)
    return X, y.to_numpy()


def test_folds_are_shuffled_kfold_and_scores_equal_scikit_learn():
    X, y = _linear_data()
    data = as_dataset(X, y=y, task="regression")
    res = Evaluator(cv=3, repeats=2, progress=False).evaluate(
        data, ["sklearn.dummy.DummyRegressor", "sklearn.linear_model.LinearRegression"])
    runs = res.runs
    assert list(runs.columns) == ["dataset", "learner", "repeat", "fold", "accuracy", "fit_time", "predict_time",
                                  "status", "model_bytes", "message", "r2", "rmse", "mae"]
    for repeat in (0, 1):
        splits = list(KFold(3, shuffle=True, random_state=derive_seed(0, repeat)).split(X))
        for fold, (train, test) in enumerate(splits):
            mean = y[train].mean()  # the dummy predicts the training mean
            row = runs[(runs.learner == "sklearn.dummy.DummyRegressor") & (runs.repeat == repeat)
                       & (runs.fold == fold)].iloc[0]
            pred = np.full(len(test), mean)
            assert row.r2 == pytest.approx(r2_score(y[test], pred), abs=1e-12)
            assert row.rmse == pytest.approx(np.sqrt(mean_squared_error(y[test], pred)), abs=1e-12)
            assert row.mae == pytest.approx(mean_absolute_error(y[test], pred), abs=1e-12)
            assert row.r2 < 0 and row.accuracy == 0.0  # the score is max(R², 0); the raw R² is kept
    lin = runs[runs.learner == "sklearn.linear_model.LinearRegression"]
    assert (lin.accuracy == lin.r2).all() and lin.r2.min() > 0.95 and lin.rmse.max() < 0.5
    summary = res.summary.loc["sklearn.linear_model.LinearRegression"]
    assert summary.r2_mean == pytest.approx(lin.r2.mean()) and summary.rmse_mean == pytest.approx(lin.rmse.mean())
    assert np.isnan(summary.interval_low)  # no binomial interval for R²


def test_regression_resampler_is_unstratified():
    y = np.arange(20.0)
    got = make_resampler("cv", cv=4, n_rows=20, random_state=5, stratify=False).repetition(1, y)
    want = list(KFold(4, shuffle=True, random_state=derive_seed(5, 1)).split(np.zeros(20)))
    assert [s.test.tolist() for s in got] == [sorted(te.tolist()) for _, te in want]


def test_store_keeps_regression_folds_and_a_rerun_resumes(tmp_path):
    X, y = _linear_data()
    data = as_dataset(X, y=y, task="regression")
    path = tmp_path / "folds.sqlite"
    first = Evaluator(cv=3, repeats=1, progress=False, store=path).evaluate(data, ["ridge-reg"])
    with FoldStore(path) as store:
        assert store.count() == 3
    again = Evaluator(cv=3, repeats=1, progress=False, store=path).evaluate(data, ["ridge-reg"])
    pd.testing.assert_frame_equal(first.runs, again.runs)  # read back: the same R², RMSE, MAE and times
    with FoldStore(path) as store:
        assert store.count() == 3
    # the same table read as a classification never reuses these folds
    labels = as_dataset(X, y=(y > 0.5).astype(int), task="classification")
    Evaluator(cv=3, repeats=1, progress=False, store=path).evaluate(labels, ["lda"])
    with FoldStore(path) as store:
        assert store.count() == 6


def test_classifiers_refused_on_a_regression_and_loo_refused():
    X, y = _linear_data()
    data = as_dataset(X, y=y, task="regression")
    with pytest.raises(InputError, match="learner .lda. is a classifier"):
        Evaluator(cv=3, progress=False).evaluate(data, ["lda"])
    with pytest.raises(InputError, match="scheme 'loo' is not available for regression"):
        Evaluator(scheme="loo", progress=False).evaluate(data, ["ridge-reg"])


def test_a_failing_regressor_is_a_recorded_error():
    X, y = _linear_data()
    data = as_dataset(X, y=-np.abs(y) - 1, task="regression")  # Poisson needs a non-negative target
    res = Evaluator(cv=3, progress=False).evaluate(data, ["sklearn.linear_model.PoissonRegressor"])
    assert (res.runs.status == "error").all() and res.summary.loc[
        "sklearn.linear_model.PoissonRegressor", "status"] == "error"


def test_target_choice_takes_a_numeric_last_column_that_reads_as_a_quantity(tmp_path):
    from algorank.evaluation.cv.datasets import load_dataset

    p = tmp_path / "q.csv"
    p.write_text("a,kind,other,amount\n" + "".join(f"{i},k{i % 2},o{i % 3},{i * 1.5 + 0.25}\n" for i in range(30)))
    d = load_dataset(str(p))  # no column named class/target, two nominal columns, a fractional last column
    assert d.task == "regression" and d.target == "amount" and d.y.iloc[:2].tolist() == [0.25, 1.75]
    one = tmp_path / "one.csv"  # exactly one nominal column: it is the class (the rule that reads spectf)
    one.write_text("a,kind,amount\n" + "".join(f"{i},k{i % 2},{i * 1.5 + 0.25}\n" for i in range(30)))
    assert load_dataset(str(one)).target == "kind"
    assert load_dataset(str(one), task="regression").target == "amount"  # unless a quantity is asked for
