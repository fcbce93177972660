"""``recommend`` and ``AlgorankRegressor`` ranking the regressors from regression meta-data.

The embedded ``regression`` set ranks them by default; a strategy spec, another regression meta-data
file and the landmarkers work as for classification, and the two tasks never mix.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.datasets import load_diabetes

import algorank
from algorank import cli
from algorank.metadata.errors import InputError
from algorank.metadata.snapshot import embedded_available, load_meta

pytestmark = pytest.mark.skipif(not embedded_available("regression"), reason="the regression set is not assembled")


@pytest.fixture(scope="module")
def diabetes():
    return load_diabetes(as_frame=True, scaled=False).frame  # the target: 214 distinct whole numbers


@pytest.fixture(scope="module")
def diabetes_csv(tmp_path_factory, diabetes):
    path = tmp_path_factory.mktemp("data") / "diabetes.csv"
    diabetes.to_csv(path, index=False)
    return path


def test_the_default_ranks_the_regressors_by_the_embedded_regression_set(diabetes):
    rec = algorank.recommend(diabetes, "target", dry_run=True)
    meta = load_meta("regression")
    assert rec.task == "regression" and rec.strategy == "eiu" and rec.metric == "r2"
    assert sorted(p.learner for p in rec.plan) == sorted(meta.learner_ids)  # all 16, none rank-only
    assert rec.rank_only == () and rec.notes == ()
    assert all(np.isfinite(p.expected_seconds) and p.expected_seconds > 0 for p in rec.plan)
    # what the plan shows is relative to the best learner, in R² points of the score max(R², 0)
    assert set(rec.plan.relative) == set(meta.learner_ids)
    assert 0.0 <= rec.plan.best[0] <= 1.0


def test_a_live_run_reports_each_tests_r2_rmse_and_mae_and_refits_a_regressor(diabetes):
    X, y = diabetes.drop(columns="target"), diabetes["target"]
    rec = algorank.recommend(X, y=y, budget=None, top=3, cv=3, task="regression")
    tested = [o.learner for o in rec.trace.observations]
    assert len(tested) == 3 and set(rec.errors) == set(tested)
    for o in rec.trace.observations:  # the live score of a test is its mean R² over the folds
        assert o.accuracy == pytest.approx(rec.errors[o.learner]["r2"])
        assert rec.errors[o.learner]["rmse"] > 0 and rec.errors[o.learner]["mae"] > 0
    assert rec.best.learner == max(rec.trace.observations, key=lambda o: o.accuracy).learner
    pred = rec.model.predict(X.head(5))
    assert pred.dtype.kind == "f" and len(np.unique(pred)) > 1  # a regressor, not 214 classes


def test_metric_rmse_picks_the_lowest_rmse_and_ranks_by_the_score(diabetes):
    rec = algorank.recommend(diabetes, "target", budget=None, top=3, cv=3, metric="rmse")
    assert rec.metric == "rmse"
    lowest = min(rec.errors, key=lambda l: rec.errors[l]["rmse"])
    assert rec.best.learner == lowest


def test_a_strategy_spec_and_another_regression_file_are_accepted(diabetes, tmp_path):
    meta = load_meta("regression")
    small = meta.exclude(datasets=[d for d in meta.dataset_ids][: len(meta.dataset_ids) // 2])
    path = tmp_path / "mine.parquet"
    small.save(path)
    rec = algorank.recommend(diabetes, "target", meta=str(path), strategy="ar:p=1/16", dry_run=True)
    assert rec.strategy.startswith("ar") and rec.task == "regression"
    assert len(rec.plan) == len(small.learner_ids)


def test_the_tasks_never_mix(diabetes):
    with pytest.raises(InputError, match="the meta-data holds classification runs; a regression task is never "
                                         "ranked by them"):
        algorank.recommend(diabetes, "target", meta="uci", dry_run=True)
    with pytest.raises(InputError, match="the meta-data holds regression runs but the dataset is a classification "
                                         "task"):
        algorank.recommend("sklearn:iris", meta="regression", dry_run=True)


def test_landmarkers_of_a_regression_are_r2_of_the_regression_landmarkers(diabetes):
    from algorank.evaluation.cv.datasets import as_dataset
    from algorank.evaluation.cv.metafeatures import regression_meta_features

    rec = algorank.recommend(diabetes, "target", strategy="eiu:landmarks=yes", budget=None, dry_run=True)
    direct = regression_meta_features(as_dataset(diabetes, "target"))
    assert rec.dataset_info["landmark_1nn"] == pytest.approx(direct["landmark_1nn"])
    assert rec.dataset_info["landmark_stump"] == pytest.approx(direct["landmark_stump"])
    assert rec.dataset_info["landmark_stump"] < 1.0  # an R², not an accuracy of 214 classes


def test_cli_json_says_the_strategy_and_the_task(diabetes_csv, capsys):
    assert cli.main(["recommend", str(diabetes_csv), "--budget", "60", "--top", "2", "--cv", "3", "--json",
                     "--quiet"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["task"] == "regression" and d["strategy"] == "eiu" and d["metric"] == "r2"
    assert len(d["trace"]) == 2 and all({"r2", "rmse", "mae"} <= set(r) for r in d["trace"])
    assert d["best"]["r2"] == max(r["r2"] for r in d["trace"])


def test_algorank_regressor_ranks_from_the_meta_data(diabetes):
    X, y = diabetes.drop(columns="target"), diabetes["target"]
    reg = algorank.AlgorankRegressor(budget=120, top=2, cv=3).fit(X, y)
    assert reg.recommendation_.strategy == "eiu"
    assert reg.best_learner_ in {o.learner for o in reg.trace_.observations}
    with pytest.raises(InputError, match="learners fixes the order"):
        algorank.AlgorankRegressor(learners=["ridge-reg"], strategy="eiu").fit(X, y)


def test_research_commands_read_the_embedded_regression_set(capsys):
    assert cli.main(["compare", "--meta", "regression", "--learners", "ridge-reg", "knn-reg", "--quiet"]) == 0
    flat = " ".join(capsys.readouterr().out.split())
    assert "metric score (R²)" in flat and "2 learners on 52 datasets" in flat
    assert "mean rank by score (R²) over the datasets" in flat and "higher score (R²) is better" in flat
    assert cli.main(["rank", "--meta", "regression", "--json", "--quiet"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert len(d["order"]) == 19 and d["n_datasets"] == 52 and d["order"][0] == "sklearn.linear_model.Ridge"


def test_report_plots_and_saved_model_of_a_ranked_regression(diabetes_csv, tmp_path, capsys):
    import joblib

    out, model = tmp_path / "out", tmp_path / "model.joblib"
    assert cli.main(["recommend", str(diabetes_csv), "--budget", "60", "--top", "2", "--cv", "3", "--quiet",
                     "--out", str(out), "--save-model", str(model)]) == 0
    assert {p.name for p in out.iterdir()} >= {"report.html", "trace.csv", "accuracy_vs_time.png",
                                               "predicted_vs_realised.png"}
    assert "R²" in (out / "report.html").read_text(encoding="utf-8")
    fitted = joblib.load(model)
    assert fitted.algorank_info_["task"] == "regression"
    frame = __import__("pandas").read_csv(diabetes_csv)
    assert fitted.predict(frame.drop(columns="target").head(3)).dtype.kind == "f"
