"""The learner-id -> estimator mapping: every id constructs and fits on a tiny dataset."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import is_classifier
from sklearn.preprocessing import MinMaxScaler, StandardScaler

from algorank.metadata import LEARNERS, InputError, estimator_from_path, learner_ids, make_estimator, short_name


def _tiny():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    return X, y


def test_portfolio_is_lcdbs_twenty():
    assert len(learner_ids()) == 20
    assert {"SVC_linear", "SVC_poly", "SVC_rbf", "SVC_sigmoid"} <= set(learner_ids())
    assert "sklearn.linear_model.PassiveAggressiveClassifier" in learner_ids()


def test_portfolio_matches_snapshot_learners(snapshot):
    assert snapshot.learner_ids == learner_ids()


@pytest.mark.parametrize("learner", sorted(LEARNERS))
def test_every_id_constructs_and_fits(learner):
    X, y = _tiny()
    spec = LEARNERS[learner]
    if spec.needs_nonnegative:
        X = MinMaxScaler().fit_transform(X)
    elif spec.needs_scaling:
        X = StandardScaler().fit_transform(X)
    est = make_estimator(learner, random_state=0)
    assert is_classifier(est)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)  # no deprecated estimator may be returned
        warnings.simplefilter("ignore", UserWarning)
        warnings.filterwarnings("ignore", category=Warning, message=".*(converge|collinear).*")
        est.fit(X, y)
    acc = (est.predict(X) == y).mean()
    assert 0.5 <= acc <= 1.0


def test_default_settings_are_kept():
    assert make_estimator("SVC_poly").get_params()["kernel"] == "poly"
    assert make_estimator("SVC_sigmoid").get_params()["C"] == 1.0
    knn = make_estimator("sklearn.neighbors.KNeighborsClassifier")
    assert knn.get_params()["n_neighbors"] == 5
    rf = make_estimator("sklearn.ensemble.RandomForestClassifier", random_state=3)
    assert rf.get_params()["random_state"] == 3 and rf.get_params()["n_estimators"] == 100


def test_passive_aggressive_maps_to_something_that_runs_on_this_version():
    est = make_estimator("sklearn.linear_model.PassiveAggressiveClassifier")
    params = est.get_params()
    if type(est).__name__ == "SGDClassifier":  # the replacement named by the deprecation warning
        assert (params["loss"], params["penalty"], params["learning_rate"], params["eta0"]) == ("hinge", None, "pa1", 1.0)
    else:
        assert type(est).__name__ == "PassiveAggressiveClassifier"


def test_short_names_and_unknown_ids():
    assert short_name("sklearn.neighbors.KNeighborsClassifier") == "knn"
    assert type(make_estimator("knn")).__name__ == "KNeighborsClassifier"
    assert short_name("weka.J48") == "weka.J48"
    with pytest.raises(InputError, match="unknown learner id 'nope'"):
        make_estimator("nope")


def test_short_names_of_parameterised_scikit_learn_ids():
    for lid in learner_ids():  # portfolio names unchanged
        assert short_name(lid) == LEARNERS[lid].short
    assert short_name('sklearn.ensemble.RandomForestClassifier{"n_estimators": 500}') == "random-forest(n=500)"
    assert short_name("sklearn.naive_bayes.GaussianNB") == "sklearn.naive_bayes.GaussianNB"  # bare paths: as they are
    assert short_name('sklearn.naive_bayes.GaussianNB{"var_smoothing": 1e-08}') == "gaussian-nb(var_smoothing=1e-08)"
    assert short_name('sklearn.svm.SVC{"C": 0.5, "gamma": "auto", "kernel": "poly"}') == "svc(C=0.5,gamma=auto,poly)"
    assert short_name('sklearn.ensemble.GradientBoostingClassifier{"max_features": null}') == "gradient-boosting(mf=null)"
    assert short_name('sklearn.dummy.DummyClassifier{"strategy": "prior", "__scaling__": "none"}') == "dummy(strategy=prior)"
    assert short_name("weka.J48{\"C\": 0.25}") == "weka.J48{\"C\": 0.25}"  # outside scikit-learn: as it is
    assert short_name("sklearn.tree.DecisionTreeClassifier{not json") == "sklearn.tree.DecisionTreeClassifier{not json"


def test_estimator_from_path():
    est = estimator_from_path("sklearn.dummy.DummyClassifier", {"strategy": "most_frequent"})
    assert est.get_params()["strategy"] == "most_frequent"
    with pytest.raises(InputError, match="cannot import estimator"):
        estimator_from_path("sklearn.nothing.Here")
    with pytest.raises(InputError, match="bad parameters"):
        estimator_from_path("sklearn.dummy.DummyClassifier", {"colour": "red"})


def test_any_import_path_is_a_learner_id():
    est = make_estimator("sklearn.naive_bayes.GaussianNB")
    assert type(est).__name__ == "GaussianNB"
    with pytest.raises(InputError, match="cannot import estimator"):
        make_estimator("sklearn.naive_bayes.NoSuchNB")
