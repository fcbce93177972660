"""``recommend`` on a regression target without regression meta-data, end to end: scikit-learn's diabetes
data written to CSV.  The embedded ``regression`` set is hidden here, so the regressors run in their fixed
order; ``test_regression_ranked.py`` covers the ranked path."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import Ridge
from sklearn.model_selection import KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from algorank import cli
from algorank.evaluation.cv.resampling import derive_seed
from algorank.metadata.errors import InputError
from algorank.recommender.live.regression import PRIOR_FREE_NOTE


@pytest.fixture(scope="module", autouse=True)
def no_regression_meta():
    """As on an install without the embedded regression set."""
    from algorank.metadata import snapshot

    real = snapshot.embedded_available
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(snapshot, "embedded_available", lambda name: False if name == "regression" else real(name))
        yield


@pytest.fixture(scope="module")
def diabetes_csv(tmp_path_factory):
    from sklearn.datasets import load_diabetes

    path = tmp_path_factory.mktemp("data") / "diabetes.csv"
    load_diabetes(as_frame=True).frame.to_csv(path, index=False)  # the target: 214 distinct whole numbers
    return path


@pytest.fixture(scope="module")
def live_json(diabetes_csv, tmp_path_factory):
    """One live run through the command line: two regressors, a budget they fit in, the model saved."""
    model = tmp_path_factory.mktemp("model") / "best.joblib"
    out = tmp_path_factory.mktemp("out")
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = cli.main(["recommend", str(diabetes_csv), "--budget", "300", "--top", "2", "--json", "--quiet",
                         "--save-model", str(model), "--out", str(out)])
    return code, json.loads(buf.getvalue()), model, out


def test_diabetes_runs_as_regression_and_reports_r2_and_rmse(live_json):
    code, d, _, _ = live_json
    assert code == 0
    assert d["task"] == "regression" and d["metric"] == "r2" and d["higher_is_better"] is True
    assert d["task_detection"] == ("regression (target 'target' is numeric with 214 distinct values in 442 rows; "
                                   "override with --task, task= in Python)")
    assert d["notes"] == [PRIOR_FREE_NOTE] and d["strategy"] == "fixed regression order"
    assert [r["short"] for r in d["trace"]] == ["ridge-reg", "hist-gradient-boosting-reg"]
    assert all(r["status"] == "ok" for r in d["trace"])
    best = max(d["trace"], key=lambda r: r["r2"])
    assert d["best"]["learner"] == best["learner"]
    assert d["best"]["r2"] == best["r2"] and d["best"]["rmse"] == best["rmse"] and d["best"]["mae"] == best["mae"]
    assert "R² " in d["summary"] and "RMSE" in d["summary"]


def test_the_r2_and_rmse_equal_scikit_learns_cross_validation_with_the_same_folds(live_json, diabetes_csv):
    _, d, _, _ = live_json
    frame = pd.read_csv(diabetes_csv)
    X, y = frame.drop(columns="target"), frame["target"].to_numpy(dtype=float)
    folds = KFold(5, shuffle=True, random_state=derive_seed(0, 0))  # --seed 0, repetition 0
    pipe = make_pipeline(StandardScaler(), Ridge())
    ridge = next(r for r in d["trace"] if r["learner"] == "sklearn.linear_model.Ridge")
    assert ridge["r2"] == pytest.approx(cross_val_score(pipe, X, y, cv=folds, scoring="r2").mean(), abs=1e-9)
    rmse = -cross_val_score(pipe, X, y, cv=folds, scoring="neg_root_mean_squared_error").mean()
    mae = -cross_val_score(pipe, X, y, cv=folds, scoring="neg_mean_absolute_error").mean()
    assert ridge["rmse"] == pytest.approx(rmse, abs=1e-9) and ridge["mae"] == pytest.approx(mae, abs=1e-9)


def test_saved_model_report_and_table(live_json, diabetes_csv):
    import joblib

    _, d, model_path, out = live_json
    model = joblib.load(model_path)
    assert model.algorank_info_["task"] == "regression" and model.algorank_info_["learner"] == d["best"]["learner"]
    X = pd.read_csv(diabetes_csv).drop(columns="target")
    pred = model.predict(X.head(4))
    assert pred.dtype == float and np.all(np.isfinite(pred)) and len(set(np.round(pred, 6))) == 4
    table = pd.read_csv(out / "trace.csv")
    assert list(table.columns[:5]) == ["learner", "short", "r2", "rmse", "mae"]
    assert {"report.html", "accuracy_vs_time.png"} <= {p.name for p in out.iterdir()}
    assert "R²" in (out / "report.html").read_text(encoding="utf-8")


def test_text_output_says_the_task_and_the_order(diabetes_csv, capsys):
    assert cli.main(["recommend", str(diabetes_csv), "--dry-run", "--top", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("task: regression (target 'target' is numeric with 214 distinct values")
    assert lines[1] == f"planned order (3 learners): {PRIOR_FREE_NOTE}"
    assert [l.split()[1] for l in lines[3:6]] == ["ridge-reg", "hist-gradient-boosting-reg", "random-forest-reg"]


def test_task_classification_forces_the_old_reading(diabetes_csv, capsys):
    assert cli.main(["recommend", str(diabetes_csv), "--dry-run", "--json", "--task", "classification",
                     "--top", "2"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["task"] == "classification" and d["dataset_info"]["n_classes"] == 214 and d["metric"] == "accuracy"


@pytest.mark.parametrize("argv, message", [
    (["--metric", "accuracy"], "error: metric 'accuracy' measures classification; this is a regression task (its "
                               "metrics: r2, rmse, mae)\n"),
    (["--metric", "log_loss"], "error: metric 'log_loss' measures classification; this is a regression task (its "
                               "metrics: r2, rmse, mae)\n"),
    (["--meta", "uci"], "error: the meta-data holds classification runs; a regression task is never ranked by them. "
                        "Give regression meta-data, or leave the meta-data out\n"),
])
def test_a_classification_metric_or_meta_data_is_refused(diabetes_csv, capsys, argv, message):
    assert cli.main(["recommend", str(diabetes_csv), "--dry-run", *argv]) == 2
    assert capsys.readouterr().err == message


def test_a_regression_metric_on_a_classification_is_refused(capsys):
    assert cli.main(["recommend", "sklearn:iris", "--dry-run", "--metric", "rmse"]) == 2
    assert capsys.readouterr().err.startswith("error: metric 'rmse' measures regression; this is a classification "
                                              "task")


def test_api_metric_rmse_chooses_the_lowest_rmse(diabetes_csv):
    from algorank.recommender.live.regression import recommend_regression
    from algorank.evaluation.cv.datasets import load_dataset

    data = load_dataset(str(diabetes_csv))
    rec = recommend_regression(data, budget=None, learners=["knn-reg", "ridge-reg"], metric="rmse", refit=True,
                               cv=3)
    board = rec.leaderboard
    assert list(board.columns[:5]) == ["learner", "short", "rmse", "r2", "mae"]
    assert rec.best.learner == board.loc[board.rmse.idxmin(), "learner"] == "sklearn.linear_model.Ridge"
    assert rec.to_dict()["higher_is_better"] is False and rec.model is not None
    with pytest.raises(InputError, match="is not a regressor"):
        recommend_regression(data, budget=None, learners=["sklearn.svm.SVC"], dry_run=True)


def test_a_strategy_is_refused_for_a_regression(diabetes_csv, capsys):
    assert cli.main(["recommend", str(diabetes_csv), "--dry-run", "--strategy", "eiu"]) == 2
    assert capsys.readouterr().err.startswith("error: a strategy ranks learners from meta-data, and there is no "
                                              "regression meta-data: leave the strategy out")


def test_evaluate_runs_regressors_with_their_errors(diabetes_csv, capsys):
    assert cli.main(["evaluate", str(diabetes_csv), "--learners", "ridge-reg", "sklearn.dummy.DummyRegressor",
                     "--cv", "3", "--no-store", "--quiet", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["task"] == "regression"
    ridge, dummy = d["learners"]["sklearn.linear_model.Ridge"], d["learners"]["sklearn.dummy.DummyRegressor"]
    assert ridge["short"] == "ridge-reg" and 0.4 < ridge["r2_mean"] < 0.6 and ridge["rmse_mean"] > 0
    assert dummy["r2_mean"] < 0.01 and dummy["accuracy_mean"] >= 0  # the score is max(R², 0) per fold
    assert cli.main(["evaluate", str(diabetes_csv), "--learners", "lda", "--cv", "3", "--no-store", "--quiet"]) == 2
    assert "error: learner 'lda' is a classifier; it cannot run on a regression task" in capsys.readouterr().err
