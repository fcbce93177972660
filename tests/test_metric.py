"""Ranking and testing by the user's metric: which metrics each meta-data holds, scores (log loss:
lower is better), live tests, the majority-class warning, and the command line end to end."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from algorank import cli
from algorank.api import load_meta
from algorank.metadata.errors import InputError
from algorank.metadata.metric import (available_metrics, baseline_warning, check_metric, from_score,
                                      meta_for_metric, score_from_runs, to_score)


def test_scores_are_higher_is_better_and_invert_exactly():
    assert to_score("log_loss", [0.0, math.log(2)]).tolist() == pytest.approx([1.0, 0.5])
    assert from_score("log_loss", 0.5) == pytest.approx(math.log(2))
    assert from_score("log_loss", 1.0) == 0.0 and math.copysign(1, from_score("log_loss", 1.0)) == 1  # no -0.0
    assert to_score("roc_auc", [0.7]).tolist() == [0.7] and from_score("accuracy", 0.9) == 0.9


def test_each_embedded_set_offers_what_it_records():
    assert available_metrics(load_meta("broad")) == ["accuracy", "balanced_accuracy", "roc_auc", "log_loss"]
    assert available_metrics(load_meta("lcdb")) == ["accuracy"]
    # OBOE's accuracy column IS its balanced accuracy: accuracy is not on offer
    assert available_metrics(load_meta("oboe")) == ["balanced_accuracy"]


def test_a_metric_the_meta_data_lacks_is_an_error_naming_what_it_has():
    lcdb = load_meta("lcdb")
    with pytest.raises(InputError, match=r"does not record ROC AUC \(roc_auc\); it records accuracy"):
        check_metric(lcdb, "roc_auc")
    with pytest.raises(InputError, match="unknown metric 'speed'; choose one of accuracy, balanced_accuracy"):
        check_metric(lcdb, "speed")
    with pytest.raises(InputError, match="it records accuracy, balanced_accuracy, roc_auc, log_loss"):
        check_metric(load_meta("broad"), "f1_macro")  # no embedded set records macro F1
    assert check_metric(load_meta("broad"), "AUC") == "roc_auc" and check_metric(lcdb, None) == "accuracy"


def test_meta_for_log_loss_ranks_by_exp_minus_log_loss_and_drops_runs_without_it():
    broad = load_meta("broad").subset(datasets=["iris", "wine"])
    ranked = meta_for_metric(broad, "log_loss")
    runs, orig = ranked.runs, broad.runs
    ok = (orig["status"] == "ok") & orig["log_loss"].notna()
    assert np.allclose(runs.loc[ok, "accuracy"], np.exp(-orig.loc[ok, "log_loss"]))
    no_proba = (orig["status"] == "ok") & orig["log_loss"].isna()  # e.g. ridge: no probabilities
    assert no_proba.any() and (runs.loc[no_proba, "status"] == "error").all()
    # the cell value is the mean of the per-fold scores; its order is the reverse of the mean log loss here
    cell = runs[(runs.dataset == "iris") & (runs.learner == orig.loc[ok, "learner"].iloc[0]) & ok]
    assert ranked.matrix("accuracy").loc["iris", cell.learner.iloc[0]] == pytest.approx(cell.accuracy.mean())
    assert meta_for_metric(broad, "accuracy") is broad


def test_score_of_a_live_test_is_the_mean_of_the_fold_scores():
    runs = pd.DataFrame({"status": ["ok", "ok"], "log_loss": [0.1, 0.3], "auc": [0.8, 0.9]})
    assert score_from_runs(runs, "log_loss") == pytest.approx((math.exp(-0.1) + math.exp(-0.3)) / 2)
    assert score_from_runs(runs, "roc_auc") == pytest.approx(0.85)
    assert math.isnan(score_from_runs(runs.assign(status=["ok", "timeout"]), "roc_auc"))
    assert math.isnan(score_from_runs(runs.assign(log_loss=[0.1, np.nan]), "log_loss"))


def test_majority_baseline_warning_by_hand():
    # p = 0.99 over 1000 rows: noise = 2 sqrt(0.99 x 0.01 / 1000) = 0.00629
    note = baseline_warning("accuracy", 0.995, majority_fraction=0.99, n_rows=1000)
    assert note is not None and "0.0063" in note and "balanced accuracy can" in note and "\n" not in note
    assert baseline_warning("accuracy", 0.9963, majority_fraction=0.99, n_rows=1000) is None
    assert baseline_warning("balanced_accuracy", 0.5, majority_fraction=0.99, n_rows=1000) is None


def test_live_log_loss_matches_the_evaluator_and_learners_without_probabilities_fail():
    from algorank.evaluation.cv.datasets import load_dataset
    from algorank.evaluation.cv.evaluator import Evaluator
    from algorank.recommender.live.environment import LiveEnvironment

    iris = load_dataset("sklearn:iris")
    env = LiveEnvironment(iris, cv=3, random_state=0, metric="log_loss")
    ok = env.test("sklearn.linear_model.LogisticRegression")
    runs = Evaluator(cv=3, repeats=1, random_state=0, progress=False).evaluate(
        iris, ["sklearn.linear_model.LogisticRegression"]).runs
    assert ok.status == "ok" and ok.accuracy == pytest.approx(np.mean(np.exp(-runs["log_loss"])))
    ridge = env.test("sklearn.linear_model.RidgeClassifier")
    assert ridge.status == "error" and "no log loss" in ridge.message


def test_recommend_by_log_loss_picks_the_lowest_log_loss():
    from algorank.api import recommend

    r = recommend("sklearn:iris", meta="broad", budget=30, top=3, cv=3, metric="log_loss", refit=False,
                  exclude_datasets=["iris"])
    board = r.leaderboard
    assert "log_loss" in board.columns and "accuracy" not in board.columns
    ok = board[board.status == "ok"]
    assert r.to_dict()["best"]["log_loss"] == pytest.approx(ok["log_loss"].min())
    assert r.to_dict()["higher_is_better"] is False and "with log loss" in r.summary


@pytest.mark.shared
def test_abalone19_by_balanced_accuracy_end_to_end(shared_dir, capsys):
    path = str(shared_dir / "datasets" / "keel" / "abalone19.csv")
    code = cli.main(["recommend", path, "--metric", "balanced_accuracy", "--budget", "20", "--top", "4",
                     "--exclude-dataset", "abalone19", "--json", "--quiet"])
    assert code == 0
    d = json.loads(capsys.readouterr().out)
    assert d["metric"] == "balanced_accuracy" and d["notes"] == [] and d["suggested_metric"] is None
    ok = [t for t in d["trace"] if t["status"] == "ok"]
    assert ok and all(0.0 <= t["balanced_accuracy"] <= 1.0 for t in ok) and "accuracy" not in ok[0]
    assert d["best"]["balanced_accuracy"] == max(t["balanced_accuracy"] for t in ok)
    assert all("expected_balanced_accuracy" in o for o in d["order"])
    # without --metric: accuracy, and the one-line majority-class warning
    code = cli.main(["recommend", path, "--budget", "20", "--top", "3", "--exclude-dataset", "abalone19", "--quiet"])
    out = capsys.readouterr().out
    warnings = [l for l in out.splitlines() if l.startswith("warning:")]
    assert code == 0 and len(warnings) == 1 and "majority class" in warnings[0]
    assert warnings[0].endswith("try --metric balanced_accuracy")


def test_cli_metric_the_meta_data_lacks_is_one_line_exit_2(capsys):
    code = cli.main(["recommend", "sklearn:iris", "--meta", "lcdb", "--metric", "log_loss", "--dry-run"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("error: the meta-data does not record log loss")


def test_macro_f1_is_measured_per_fold_like_scikit_learn():
    from sklearn.metrics import f1_score
    from sklearn.model_selection import StratifiedKFold

    from algorank.evaluation.cv.datasets import load_dataset
    from algorank.evaluation.cv.evaluator import Evaluator

    wine = load_dataset("sklearn:wine")
    res = Evaluator(cv=3, repeats=1, random_state=0, progress=False).evaluate(
        wine, ["sklearn.naive_bayes.GaussianNB"])
    assert res.runs["f1_macro"].between(0, 1).all() and res.summary["f1_macro_mean"].iloc[0] > 0.9
    # a learner predicting one class everywhere: F1 of that class, 0 for the others
    from algorank.evaluation.cv.evaluator import evaluate_fold
    from algorank.evaluation.cv.preprocessing import encode_dataset, resolve_learner
    from algorank.evaluation.cv.resampling import Split

    X, nominal, _ = encode_dataset(wine)
    y = wine.y_codes
    train, test = next(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    rec = evaluate_fold(resolve_learner("sklearn.dummy.DummyClassifier"), X, y, Split(0, 0, train, test),
                        n_classes=3, random_state=0, nominal=nominal)
    pred = np.full(len(test), np.bincount(y[train]).argmax())
    assert rec.f1_macro == pytest.approx(f1_score(y[test], pred, average="macro", zero_division=0))


def test_recommend_by_macro_f1_on_meta_data_that_records_it():
    from algorank.api import evaluate, recommend
    from algorank.metadata.dataset import MetaDataset

    learners = ["sklearn.naive_bayes.GaussianNB", "sklearn.tree.DecisionTreeClassifier",
                "sklearn.neighbors.KNeighborsClassifier"]
    metas = [evaluate(f"sklearn:{d}", learners=learners, cv=3).to_meta() for d in ("wine", "breast_cancer")]
    meta = MetaDataset.concat(metas)
    assert "f1_macro" in available_metrics(meta)
    r = recommend("sklearn:iris", meta=meta, metric="f1_macro", budget=30, cv=3, strategy="ar:p=0", refit=False)
    ok = r.leaderboard[r.leaderboard.status == "ok"]
    assert len(ok) == 3 and ok["f1_macro"].between(0.8, 1).all()
    assert r.to_dict()["best"]["f1_macro"] == pytest.approx(ok["f1_macro"].max())


def test_the_fold_store_keeps_macro_f1_and_upgrades_an_older_store(tmp_path):
    import sqlite3

    from algorank.evaluation.cv.store import FoldRecord, FoldStore

    path = tmp_path / "old.sqlite"
    con = sqlite3.connect(path)  # the schema before macro F1 was measured, with one fold
    con.execute("""CREATE TABLE folds (config TEXT NOT NULL, learner TEXT NOT NULL, repeat INTEGER NOT NULL,
                   fold INTEGER NOT NULL, status TEXT NOT NULL, accuracy REAL, balanced_accuracy REAL, auc REAL,
                   log_loss REAL, fit_time REAL, predict_time REAL, model_bytes REAL, message TEXT, scores BLOB,
                   created REAL, PRIMARY KEY (config, learner, repeat, fold))""")
    con.execute("INSERT INTO folds VALUES ('k', 'lda', 0, 0, 'ok', 0.9, 0.8, 0.95, 0.3, 0.1, 0.01, 100, '', ?, 0)",
                (np.zeros(2).tobytes(),))
    con.commit()
    con.close()
    with FoldStore(path) as store:
        old = store.get("k", "lda")[(0, 0)]
        assert old.accuracy == 0.9 and math.isnan(old.f1_macro)
        new = FoldRecord("lda", 0, 1, "ok", 0.9, 0.8, 0.95, 0.3, 0.1, 0.01, 100.0, "", np.zeros(2), f1_macro=0.75)
        assert store.put("k", new)
        assert store.get("k", "lda")[(0, 1)].f1_macro == 0.75
    with FoldStore(tmp_path / "new.sqlite") as store:  # a fresh store has the column from the start
        assert store.put("k", new) and store.get("k", "lda")[(0, 1)].f1_macro == 0.75
