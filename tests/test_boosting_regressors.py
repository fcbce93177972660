"""LightGBM, XGBoost and CatBoost regressors at their defaults (``lgbm-reg``, ``xgb-reg``, ``catboost-reg``)."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from sklearn.datasets import make_regression

from algorank.metadata.boosting import BoostingRegressor
from algorank.metadata.errors import InputError
from algorank.evaluation.cv.preprocessing import resolve_learner
from algorank.metadata.learners import is_runnable
from algorank.metadata.portfolio import missing_library_note

X, Y = make_regression(n_samples=120, n_features=5, noise=5.0, random_state=0)


@pytest.mark.parametrize("library", ["lightgbm", "xgboost", "catboost"])
def test_predictions_equal_the_librarys_own_regressor(library, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # CatBoost would write catboost_info here if it were allowed to
    ours = BoostingRegressor(library=library, random_state=3).fit(X, Y).predict(X[:7])
    if library == "lightgbm":
        from lightgbm import LGBMRegressor
        ref = LGBMRegressor(n_jobs=1, verbose=-1, random_state=3)
    elif library == "xgboost":
        from xgboost import XGBRegressor
        ref = XGBRegressor(n_jobs=1, random_state=3)
    else:
        from catboost import CatBoostRegressor
        ref = CatBoostRegressor(thread_count=1, logging_level="Silent", random_seed=3, allow_writing_files=False)
    np.testing.assert_allclose(ours, ref.fit(X, Y).predict(X[:7]), rtol=1e-6)
    assert list(tmp_path.iterdir()) == []  # no catboost_info folder


def test_the_portfolio_ids_resolve_to_the_wrapper_at_library_defaults():
    for short, library in (("lgbm-reg", "lightgbm"), ("xgb-reg", "xgboost"), ("catboost-reg", "catboost")):
        recipe = resolve_learner(short, task="regression")
        assert recipe.id == f"{short}:default"
        est = recipe.build(random_state=None)
        assert isinstance(est, BoostingRegressor) and est.library == library and not est.params
        assert is_runnable(recipe.id, task="regression") and not is_runnable(recipe.id)  # not a classifier


def test_threads_files_and_callbacks_are_never_taken_from_data():
    with pytest.raises(InputError, match="'n_jobs' cannot be set from data"):
        BoostingRegressor(library="lightgbm", params={"n_jobs": 8}).fit(X, Y)
    with pytest.raises(InputError, match="'train_dir' cannot be set from data"):
        BoostingRegressor(library="catboost", params={"train_dir": "/tmp/x"}).fit(X, Y)


def test_a_missing_library_makes_the_regressor_rank_only(monkeypatch):
    monkeypatch.setitem(sys.modules, "catboost", None)  # Python's mark for "cannot be imported"
    assert not is_runnable("catboost-reg:default", task="regression")
    assert is_runnable("lgbm-reg:default", task="regression")
    note = missing_library_note(["catboost-reg:default", "sklearn.linear_model.Ridge"])
    assert note.startswith("1 learner(s) need catboost, not installed")
    with pytest.raises(InputError, match="needs catboost, which is not installed"):
        resolve_learner("catboost-reg", task="regression")
