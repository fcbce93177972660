"""Ensemble selection over the live tests' out-of-fold probabilities (recommender/live/ensemble.py)."""

import math

import numpy as np
import pandas as pd
import pytest

from algorank.metadata.errors import InputError
from algorank.recommender.live.ensemble import (EnsembleClassifier, choose_ensemble, proba_score,
                                                 select_ensemble)

# Four rows, two classes.  A is right on rows 0 and 1 (accuracy 0.5), B on rows 0, 1 and 2... (0.75), C predicts
# class 0 everywhere (0.5).  Averaged, A and B are right on every row.
Y = np.array([0, 1, 0, 1])


def _binary(p1):
    p1 = np.asarray(p1, dtype=float)
    return np.column_stack([1 - p1, p1])


A = _binary([0.4, 0.9, 0.6, 0.4])
B = _binary([0.1, 0.45, 0.3, 0.8])
C = _binary([0.2, 0.2, 0.2, 0.2])


def test_proba_score_by_hand():
    assert proba_score("accuracy", Y, A) == 0.5
    assert proba_score("accuracy", Y, B) == 0.75
    # balanced accuracy of B: class 0 rows both right (1.0), class 1 rows one of two (0.5)
    assert proba_score("balanced_accuracy", Y, B) == pytest.approx(0.75)
    # exp(-log loss): the geometric mean of the true class's probability
    assert proba_score("log_loss", Y, B) == pytest.approx((0.9 * 0.45 * 0.7 * 0.8) ** 0.25)
    # AUC of B: positives score 0.45 and 0.8, negatives 0.1 and 0.3: every pair ordered
    assert proba_score("roc_auc", Y, B) == pytest.approx(1.0)
    with pytest.raises(InputError, match="classification metric"):
        proba_score("r2", Y, B)


def test_greedy_selection_by_hand():
    # round 1: B alone (0.75); round 2: B + A averaged is right on all four rows (B + B: 0.75, B + C: 0.5)
    choice = select_ensemble({"A": A, "B": B, "C": C}, Y, rounds=2)
    assert choice.weights == {"B": 0.5, "A": 0.5}
    assert choice.score == 1.0
    assert (choice.best_learner, choice.best_score) == ("B", 0.75)
    assert choice.candidates == ("B", "A", "C")  # better alone first, then by id
    # more rounds keep the pair: each further pick keeps every row right and ties go to B, then A
    many = select_ensemble({"A": A, "B": B, "C": C}, Y, rounds=10)
    assert set(many.weights) == {"A", "B"} and many.score == 1.0
    assert sum(many.weights.values()) == pytest.approx(1.0)


def test_selection_is_deterministic_and_order_free():
    first = select_ensemble({"A": A, "B": B, "C": C}, Y, rounds=7)
    second = select_ensemble({"C": C, "B": B, "A": A}, Y, rounds=7)
    assert first == second


def test_selection_rejects_bad_input():
    with pytest.raises(InputError, match="at least one"):
        select_ensemble({}, Y)
    with pytest.raises(InputError, match="n_rows, n_classes"):
        select_ensemble({"A": A, "B": B[:3]}, Y)
    with pytest.raises(InputError, match="rounds"):
        select_ensemble({"A": A}, Y, rounds=0)


def test_choose_keeps_an_ensemble_that_beats_the_best_test():
    kept = choose_ensemble({"A": A, "B": B, "C": C}, Y, best_score=0.8, rounds=2)
    assert kept.kept and kept.members == ("B", "A")
    # the best test (a learner without probabilities) already scores 1.0: nothing to gain
    not_kept = choose_ensemble({"A": A, "B": B, "C": C}, Y, best_score=1.0, rounds=2)
    assert not not_kept.kept and "not above" in not_kept.reason
    assert choose_ensemble({"A": A}, Y, best_score=0.5) is None  # one learner: no selection


def test_choose_leaves_out_members_whose_refit_breaks_the_budget():
    # limit: 10 % of 20 s beyond B's own refit of 1 s = 3 s; A + B would take 11 s, so A is left out, and then
    # the selection keeps B alone (B + B: 0.75 beats B + C: 0.5)
    chosen = choose_ensemble({"A": A, "B": B, "C": C}, Y, best_score=0.75, rounds=2,
                             refit_seconds={"A": 10.0, "B": 1.0, "C": 1.0}, budget=20.0, best_learner="B")
    assert chosen.left_out == ("A",)
    assert not chosen.kept and chosen.members == ("B",)
    assert "one learner" in chosen.reason
    # without a budget the refit is not limited
    free = choose_ensemble({"A": A, "B": B, "C": C}, Y, best_score=0.75, rounds=2,
                           refit_seconds={"A": 10.0, "B": 1.0, "C": 1.0}, budget=None, best_learner="B")
    assert free.kept and free.refit_seconds == 11.0


def test_the_ensemble_class_is_public():
    import algorank

    assert "EnsembleClassifier" in algorank.__all__ and algorank.EnsembleClassifier is EnsembleClassifier


def test_ensemble_classifier_averages_probabilities():
    from sklearn.datasets import load_iris
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB

    X, y = load_iris(return_X_y=True)
    lr, nb = LogisticRegression(max_iter=500).fit(X, y), GaussianNB().fit(X, y)
    ens = EnsembleClassifier([("lr", lr), ("nb", nb)], [3, 1])
    np.testing.assert_allclose(ens.predict_proba(X), 0.75 * lr.predict_proba(X) + 0.25 * nb.predict_proba(X))
    np.testing.assert_array_equal(ens.predict(X), np.argmax(ens.predict_proba(X), axis=1))
    np.testing.assert_array_equal(ens.classes_, [0, 1, 2])
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(ens)  # scikit-learn's tools see a fitted classifier
    other = GaussianNB().fit(X[y > 0], y[y > 0])
    with pytest.raises(InputError, match="same classes_"):
        EnsembleClassifier([("lr", lr), ("nb", other)], [1, 1]).predict(X)
    with pytest.raises(InputError, match="same length"):
        EnsembleClassifier([("lr", lr)], [1, 1]).predict(X)


def test_evaluator_out_of_fold_probabilities_match_the_folds():
    from sklearn.datasets import load_iris

    import algorank

    X, y = load_iris(return_X_y=True, as_frame=True)
    res = algorank.evaluate(X, y=y, learners=["lda", "knn", "ridge"], cv=5, random_state=0)
    assert set(res.oof) == {"sklearn.discriminant_analysis.LinearDiscriminantAnalysis",
                            "sklearn.neighbors.KNeighborsClassifier"}  # ridge gives no probabilities
    codes = pd.Categorical(y.astype(str)).codes  # the class codes: the labels' sorted order
    for learner, oof in res.oof.items():
        assert oof.shape == (150, 3) and oof.dtype == np.float32
        np.testing.assert_allclose(oof.sum(axis=1), 1.0, rtol=1e-5)
        # every row is predicted once, out of fold: the pooled accuracy is the mean of the five equal folds'
        pooled = float(np.mean(np.argmax(oof, axis=1) == codes))
        assert pooled == pytest.approx(res.summary.loc[learner, "accuracy_mean"])


def test_recommend_returns_the_kept_ensemble(tmp_path):
    from sklearn.datasets import load_breast_cancer

    import algorank
    from algorank.recommender.live.ensemble import EnsembleClassifier as Ens

    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    X, y = X.iloc[::2].reset_index(drop=True), y.iloc[::2].reset_index(drop=True)
    learners = ["sklearn.discriminant_analysis.LinearDiscriminantAnalysis", "sklearn.neighbors.KNeighborsClassifier",
                "sklearn.linear_model.LogisticRegression", "sklearn.tree.DecisionTreeClassifier",
                "sklearn.linear_model.RidgeClassifier"]
    meta = algorank.load_meta("lcdb").subset(learners=learners)
    rec = algorank.recommend(X, y=y, meta=meta, budget=None, save_model=tmp_path / "m.joblib")
    chosen = rec.ensemble
    assert chosen is not None and set(chosen["candidates"]) <= set(rec.trace.learners)
    # logistic regression is the best test; averaged with kNN and LDA it gets more rows right out of fold
    assert chosen["kept"] and chosen["members"][0] == "sklearn.linear_model.LogisticRegression"
    assert rec.best.learner == "sklearn.linear_model.LogisticRegression"
    assert isinstance(rec.model, Ens)
    assert [name for name, _ in rec.model.members] == chosen["members"]
    assert chosen["score"] > rec.best.accuracy
    info = __import__("joblib").load(tmp_path / "m.joblib").algorank_info_
    assert info["ensemble"]["weights"] == chosen["weights"]
    assert info["learner"] == rec.best.learner
    assert set(np.unique(rec.model.predict(X))) <= set(y.unique())
    assert rec.to_dict()["ensemble"]["kept"] == chosen["kept"]
    assert "sklearn.linear_model.RidgeClassifier" not in chosen["candidates"]  # no probabilities
    single = algorank.recommend(X, y=y, meta=meta, budget=None, ensemble=False)
    assert single.ensemble is None and not isinstance(single.model, Ens)
    assert single.best.learner == rec.best.learner


def _small_problem():
    from sklearn.datasets import load_breast_cancer

    import algorank

    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    learners = ["sklearn.discriminant_analysis.LinearDiscriminantAnalysis", "sklearn.neighbors.KNeighborsClassifier",
                "sklearn.linear_model.LogisticRegression", "sklearn.tree.DecisionTreeClassifier"]
    return X.iloc[::2].reset_index(drop=True), y.iloc[::2].reset_index(drop=True), \
        algorank.load_meta("lcdb").subset(learners=learners)


def test_parallel_tests_hand_back_their_out_of_fold_probabilities():
    import algorank

    X, y, meta = _small_problem()
    serial = algorank.recommend(X, y=y, meta=meta, budget=None)
    parallel = algorank.recommend(X, y=y, meta=meta, budget=None, n_jobs=2)
    # the same tests with the same folds and seeds: the same out-of-fold probabilities, so the same ensemble
    assert parallel.ensemble is not None
    assert parallel.ensemble["weights"] == serial.ensemble["weights"]
    assert parallel.ensemble["score"] == pytest.approx(serial.ensemble["score"])


def test_the_answer_names_the_ensemble():
    import algorank
    from algorank.recommender.live.story import answer_lines

    X, y, meta = _small_problem()
    rec = algorank.recommend(X, y=y, meta=meta, budget=None)
    assert rec.ensemble["kept"]
    text = " ".join(answer_lines(rec))
    assert "weighted ensemble of 3 tested learners" in text and "logreg 0.86" in text
    # the one-line summary the command prints says so too
    assert rec.summary.endswith("the model refitted is a weighted ensemble of 3 tested learners (logreg 0.86, "
                                "knn 0.10, lda 0.04), accuracy 0.9895 out of fold")
    single = algorank.recommend(X, y=y, meta=meta, budget=None, ensemble=False)
    assert "ensemble" not in " ".join(answer_lines(single)) and "ensemble" not in single.summary


@pytest.mark.parametrize("n_classes", [2, 3])
def test_block_scoring_equals_one_candidate_at_a_time(n_classes):
    # the vectorised accuracy of every candidate (and the two-class shortcut) against proba_score one by one
    from algorank.recommender.live.ensemble import _candidate_scores

    rng = np.random.default_rng(1)
    y = rng.integers(0, n_classes, 200)
    stack = rng.dirichlet(np.ones(n_classes), (7, 200)).astype(np.float32)
    total = stack[2].astype(np.float64) + stack[5]
    fast = _candidate_scores("accuracy", y, total, stack, 3)
    slow = [proba_score("accuracy", y, (total + p) / 3) for p in stack]
    np.testing.assert_allclose(fast, slow)


def test_the_estimator_fits_the_kept_ensemble_within_its_budget():
    import algorank
    from algorank.recommender.live.ensemble import EnsembleClassifier as Ens

    X, y, meta = _small_problem()
    clf = algorank.AlgorankClassifier(budget=60, meta=meta).fit(X, y)
    assert isinstance(clf.best_estimator_, Ens) and clf.ensemble_["kept"]
    assert [m for m, _ in clf.best_estimator_.members] == clf.ensemble_["members"]
    assert clf.best_learner_ == "sklearn.linear_model.LogisticRegression"
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[np.argmax(proba, axis=1)])
    alone = algorank.AlgorankClassifier(budget=60, meta=meta, ensemble=False).fit(X, y)
    assert alone.ensemble_ is None and not isinstance(alone.best_estimator_, Ens)
    assert alone.best_learner_ == clf.best_learner_
