"""Getting the model: ``predict_proba`` of a winner without probabilities (calibrated, or an error that says what
to do), and the command line saying how to keep the model it does not keep by default."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import load_iris

from algorank import AlgorankClassifier, cli
from algorank.metadata.errors import InputError
from algorank.metadata.snapshot import load_meta

SVC_POLY = "SVC_poly"


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return X, np.array(["setosa", "versicolor", "virginica"])[y]  # labels that are not the codes


def _forced(meta_learners, **kw):
    """An estimator whose only candidates are ``meta_learners``; ``on_untested='warn'`` fits the planned learner
    even when a loaded machine makes its first test miss its limit, so the winner is forced either way."""
    meta = load_meta("uci").subset(learners=meta_learners)
    return AlgorankClassifier(**{"budget": 20.0, "meta": meta, "cv": 3, "random_state": 0, "on_untested": "warn",
                                 **kw})


def test_a_winner_without_probabilities_says_why_and_what_to_do(iris, caplog):
    X, y = iris
    with caplog.at_level(logging.ERROR):
        clf = _forced([SVC_POLY]).fit(X, y)
    assert clf.best_learner_ == SVC_POLY
    assert not hasattr(clf, "predict_proba")  # scikit-learn's convention: absent, not broken
    with pytest.raises(AttributeError) as err:
        clf.predict_proba(X)
    text = str(err.value)
    assert "svc-poly" in text and "probability='calibrate'" in text and "probability='require'" in text
    assert set(clf.predict(X)) <= set(y)


def test_calibrate_gives_probabilities_for_that_winner(iris):
    X, y = iris
    clf = _forced([SVC_POLY], probability="calibrate").fit(X, y)
    assert clf.best_learner_ == SVC_POLY
    assert isinstance(clf.best_estimator_, CalibratedClassifierCV)
    proba = clf.predict_proba(X)
    assert proba.shape == (len(X), 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert ((proba >= 0) & (proba <= 1)).all()
    # columns follow classes_: the most probable class is the right one on most of iris
    assert np.mean(clf.classes_[proba.argmax(axis=1)] == y) > 0.85


def test_require_tests_and_chooses_only_learners_with_probabilities(iris):
    X, y = iris
    clf = _forced([SVC_POLY, "sklearn.linear_model.RidgeClassifier", "sklearn.naive_bayes.BernoulliNB"],
                  probability="require").fit(X, y)
    assert clf.best_learner_ == "sklearn.naive_bayes.BernoulliNB"
    assert set(clf.leaderboard_.learner) <= {"sklearn.naive_bayes.BernoulliNB"}
    np.testing.assert_allclose(clf.predict_proba(X[:5]).sum(axis=1), 1.0)


def test_probability_must_be_a_known_choice(iris):
    X, y = iris
    with pytest.raises(InputError, match="probability must be one of native, calibrate, require"):
        _forced([SVC_POLY], probability="yes").fit(X, y)


def test_the_command_says_how_to_get_the_model(capsys, tmp_path):
    code = cli.main(["recommend", "sklearn:iris", "--budget", "30", "--top", "1", "--quiet", "--meta", "uci",
                     "--strategy", "ar:p=0"])
    out = capsys.readouterr().out
    if code == cli.EXIT_NOTHING_TESTED:  # a loaded machine: nothing to keep, so nothing to point to
        assert "--save-model" not in out
        return
    assert code == 0
    line = [l for l in out.splitlines() if l.startswith("model:")]
    assert len(line) == 1 and "--save-model PATH" in line[0]
    model = tmp_path / "m.joblib"
    code = cli.main(["recommend", "sklearn:iris", "--budget", "30", "--top", "1", "--quiet", "--meta", "uci",
                     "--strategy", "ar:p=0", "--save-model", str(model)])
    out = capsys.readouterr().out
    if code == 0:
        assert model.is_file() and not any(l.startswith("model:") for l in out.splitlines())
