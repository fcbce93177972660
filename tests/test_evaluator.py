"""The evaluator: Kohavi's LOO case, determinism, pairing, metrics, failures, MetaDataset output."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from algorank.evaluation.cv.datasets import load_dataset
from algorank.api import parse_repeats
from algorank.evaluation.cv.evaluator import Evaluator, evaluate_fold
from algorank.evaluation.cv.preprocessing import encode_features, resolve_learner
from algorank.evaluation.cv.resampling import make_resampler
from algorank.metadata.dataset import MetaDataset
from algorank.metadata.errors import InputError

MAJORITY = 'sklearn.dummy.DummyClassifier{"strategy": "most_frequent"}'
FAIL = "helpers_estimators.FailingClassifier"
SLOW = 'helpers_estimators.SlowClassifier{"delay": 30}'


@pytest.fixture(scope="module")
def iris():
    return load_dataset("sklearn:iris")


def test_kohavi_majority_learner_on_iris_loo_scores_zero(iris):
    res = Evaluator(scheme="loo", progress=False).evaluate(iris, [MAJORITY])
    assert res.summary.loc[MAJORITY, "accuracy_mean"] == 0.0
    assert len(res.runs) == 150 and (res.runs["accuracy"] == 0).all()
    # while 10-fold stratified CV gives the majority learner about 1/3
    cv = Evaluator(cv=10, progress=False).evaluate(iris, [MAJORITY])
    assert cv.summary.loc[MAJORITY, "accuracy_mean"] == pytest.approx(1 / 3, abs=0.02)


def test_same_seed_same_result_bit_for_bit(iris):
    learners = ["decision-tree", "knn", "extra-tree"]
    a = Evaluator(cv=3, repeats=2, random_state=5, progress=False).evaluate(iris, learners)
    b = Evaluator(cv=3, repeats=2, random_state=5, progress=False).evaluate(iris, learners)
    cols = ["learner", "repeat", "fold", "accuracy", "balanced_accuracy", "auc", "log_loss", "model_bytes"]
    assert a.runs[cols].equals(b.runs[cols])
    c = Evaluator(cv=3, repeats=2, random_state=6, progress=False).evaluate(iris, learners)
    assert not a.runs["accuracy"].equals(c.runs["accuracy"])


def test_learners_see_identical_splits(iris):
    """The majority learner's per-fold accuracy is a function of the test fold only: check it against the splits."""
    ev = Evaluator(cv=4, repeats=2, random_state=11, progress=False)
    res = ev.evaluate(iris, ["lda", MAJORITY])
    y = iris.y_codes
    rs = make_resampler("cv", cv=4, n_rows=150, random_state=11)
    for r in range(2):
        for s in rs.repetition(r, y):
            majority = np.argmax(np.bincount(y[s.train], minlength=3))
            expected = np.mean(y[s.test] == majority)
            got = res.runs.query("learner == @MAJORITY and repeat == @r and fold == @s.fold")["accuracy"].item()
            assert got == expected
    keys = res.runs.groupby("learner")[["repeat", "fold"]].apply(lambda d: sorted(map(tuple, d.values)))
    assert keys.iloc[0] == keys.iloc[1]


def test_fold_metrics_match_sklearn(iris):
    from sklearn.metrics import log_loss, roc_auc_score
    from sklearn.naive_bayes import GaussianNB

    X, nominal = encode_features(iris.X)
    y = iris.y_codes
    split = make_resampler("cv", cv=3, n_rows=150, random_state=0).repetition(0, y)[0]
    rec = evaluate_fold(resolve_learner("sklearn.naive_bayes.GaussianNB{\"__scaling__\": \"none\"}"), X, y, split,
                        n_classes=3, random_state=0, nominal=nominal)
    model = GaussianNB().fit(X[split.train], y[split.train])
    proba = model.predict_proba(X[split.test])
    assert rec.status == "ok"
    assert rec.accuracy == pytest.approx(np.mean(model.predict(X[split.test]) == y[split.test]))
    assert rec.auc == pytest.approx(roc_auc_score(y[split.test], proba, multi_class="ovr"))
    assert rec.log_loss == pytest.approx(log_loss(y[split.test], proba, labels=[0, 1, 2]), rel=1e-6)
    assert rec.model_bytes > 0 and rec.fit_time >= 0
    assert np.allclose(rec.scores, proba[np.arange(len(split.test)), y[split.test]])


def test_failing_and_slow_learners_do_not_stop_the_run(iris):
    ev = Evaluator(cv=2, repeats=3, timeout=1.0, progress=False, allow_modules=["helpers_estimators"])
    res = ev.evaluate(iris, ["lda", FAIL, SLOW])
    s = res.summary
    assert s.loc["sklearn.discriminant_analysis.LinearDiscriminantAnalysis", "status"] == "ok"
    assert s.loc["sklearn.discriminant_analysis.LinearDiscriminantAnalysis", "repetitions"] == 3
    assert s.loc[FAIL, "status"] == "error" and "deliberate failure" in s.loc[FAIL, "message"]
    assert s.loc[SLOW, "status"] == "timeout"
    assert {f["learner"]: f["status"] for f in res.failures} == {FAIL: "error", SLOW: "timeout"}
    # a failed learner stops after its first repetition; its folds are recorded, not lost
    assert (res.runs.query("learner == @SLOW")["status"] == "timeout").sum() == 2
    assert res.runs.query("learner == @SLOW")["fit_time"].max() < 5  # really abandoned, not waited for
    # after its first fold times out, the learner's other fold is not run at all (n_jobs=1)
    assert res.runs.query("learner == @SLOW")["message"].str.startswith("not run").sum() == 1
    meta = res.to_meta()
    assert isinstance(meta, MetaDataset) and meta.describe().failed_runs == 4


def test_to_meta_and_summary(iris):
    res = Evaluator(cv=5, repeats=4, progress=False).evaluate(iris, ["lda", "decision-tree"])
    meta = res.to_meta()
    assert meta.dataset_ids == ["iris"] and len(meta) == 2 * 4 * 5
    info = meta.dataset_info("iris")
    assert info["n_instances"] == 150 and info["source"] == "sklearn:iris"
    row = res.summary.loc["sklearn.tree.DecisionTreeClassifier"]
    est = res.estimates["sklearn.tree.DecisionTreeClassifier"]
    assert row.repetitions == 4 and row.accuracy_mean == pytest.approx(est.mean())
    assert row.accuracy_median == pytest.approx(np.median(est))
    assert row.interval_low < row.accuracy_mean < row.interval_high
    m = meta.matrix("accuracy")
    assert m.loc["iris", "sklearn.tree.DecisionTreeClassifier"] == pytest.approx(row.accuracy_mean)
    assert 0 <= res.reproducibility.iloc[0, 1] <= 1


def test_bootstrap_632_and_holdout(iris):
    res = Evaluator(scheme="bootstrap", repeats=3, progress=False).evaluate(iris, ["decision-tree"])
    # a fully grown tree is perfect on its training sample: .632 estimate = 0.632 oob + 0.368
    acc = res.runs["accuracy"].to_numpy()
    oob = (acc - 0.368) / 0.632
    assert np.all((oob >= 0) & (oob <= 1)) and len(acc) == 3
    hold = Evaluator(scheme="holdout", progress=False).evaluate(iris, ["lda"])
    assert len(hold.runs) == 1


def test_bad_arguments(iris):
    with pytest.raises(InputError, match="scheme"):
        Evaluator(scheme="nope")
    with pytest.raises(InputError, match="repeats"):
        Evaluator(repeats=0)
    with pytest.raises(InputError, match="timeout"):
        Evaluator(timeout=-1)
    with pytest.raises(InputError, match="loo"):
        Evaluator(scheme="loo", stop="rank")
    with pytest.raises(InputError, match="unknown learner"):
        Evaluator(progress=False).evaluate(iris, ["no-such-learner"])
    with pytest.raises(InputError, match="outside the allowed packages"):
        Evaluator(progress=False).evaluate(iris, ["nowhere.Classifier"])
    with pytest.raises(InputError, match="cannot import"):
        Evaluator(progress=False).evaluate(iris, ["sklearn.nowhere.Classifier"])
    with pytest.raises(InputError, match="distinct"):
        Evaluator(progress=False).evaluate(iris, ["lda", "sklearn.discriminant_analysis.LinearDiscriminantAnalysis"])
    with pytest.raises(InputError, match="at least 200 rows"):
        Evaluator(cv=200, progress=False).evaluate(iris, ["lda"])
    assert parse_repeats("auto", None) == (None, "rank")
    assert parse_repeats("7", None) == (7, "fixed")
    with pytest.raises(InputError):
        parse_repeats("auto", "fixed")


def test_parallel_workers_give_the_same_folds(iris):
    # n_jobs=2 (joblib workers, results arrive unordered) equals the sequential run fold by fold
    learners = ["lda", "decision-tree"]
    seq = Evaluator(cv=3, repeats=2, progress=False, n_jobs=1).evaluate(iris, learners)
    par = Evaluator(cv=3, repeats=2, progress=False, n_jobs=2).evaluate(iris, learners)
    key = ["learner", "repeat", "fold"]
    a = seq.runs.sort_values(key).reset_index(drop=True)
    b = par.runs.sort_values(key).reset_index(drop=True)
    assert len(a) == 12
    for col in ("accuracy", "balanced_accuracy", "auc", "log_loss"):
        np.testing.assert_array_equal(a[col].to_numpy(), b[col].to_numpy())
    pd.testing.assert_series_equal(seq.summary["accuracy_mean"], par.summary["accuracy_mean"])


def test_fold_auc_and_macro_f1_equal_scikit_learns_on_random_folds_with_ties():
    from sklearn.metrics import f1_score, roc_auc_score

    from algorank.evaluation.cv.fold import _auc_ovr, _f1_macro

    rng = np.random.default_rng(0)
    checked = 0
    for trial in range(400):
        n, k = int(rng.integers(2, 40)), int(rng.integers(2, 5))
        y = rng.integers(0, k, n)
        present = np.unique(y)
        scores = rng.random((n, k))
        if trial % 2:
            scores = np.round(scores, 1)  # many tied scores
        pred = rng.integers(0, k + 1, n)  # a class absent from the fold may be predicted
        assert _f1_macro(y, pred) == pytest.approx(f1_score(y, pred, average="macro", zero_division=0), abs=1e-12)
        if len(present) < 2:
            assert math.isnan(_auc_ovr(y, scores))
            continue
        expected = (roc_auc_score(y == 1, scores[:, 1]) if k == 2 and len(present) == 2
                    else np.mean([roc_auc_score(y == c, scores[:, c]) for c in present]))
        assert _auc_ovr(y, scores) == pytest.approx(expected, abs=1e-12)
        checked += 1
    assert checked > 300
    scores[0, :] = np.nan  # a non-finite score is an error, as in scikit-learn (the fold is then recorded as failed)
    with pytest.raises(ValueError):
        _auc_ovr(np.array([0, 1] * (len(scores) // 2) + [0] * (len(scores) % 2)), scores)


def test_on_fold_sees_every_fold_record_as_it_comes_back(iris):
    seen = []
    res = Evaluator(cv=3, repeats=2, random_state=1, progress=False).evaluate(iris, ["lda", MAJORITY],
                                                                              on_fold=seen.append)
    assert len(seen) == 2 * 3 * 2
    got = {(r.learner, r.repeat, r.fold): r.accuracy for r in seen}
    assert len(got) == len(seen)  # each fold once
    runs = res.runs.set_index(["learner", "repeat", "fold"])["accuracy"]
    assert got == pytest.approx({k: float(v) for k, v in runs.items()})
