"""algorank.metadata.openml_flows: OpenML flow names -> runnable learner ids."""

from __future__ import annotations

import pytest

from algorank.metadata.learners import LEARNERS
from algorank.metadata.openml_flows import flow_to_learner, split_flow_name


@pytest.mark.parametrize("name, expected", [
    ("sklearn.tree._classes.DecisionTreeClassifier(1)", "sklearn.tree.DecisionTreeClassifier"),
    ("sklearn.tree.tree.DecisionTreeClassifier", "sklearn.tree.DecisionTreeClassifier"),
    ("sklearn.ensemble.forest.RandomForestClassifier(1)", "sklearn.ensemble.RandomForestClassifier"),
    ("sklearn.ensemble.RandomForestClassifier", "sklearn.ensemble.RandomForestClassifier"),
    ("sklearn.svm.classes.SVC(12)", "SVC_rbf"),
    ("sklearn.neighbors.classification.KNeighborsClassifier(3)", "sklearn.neighbors.KNeighborsClassifier"),
    ("sklearn.pipeline.Pipeline(imputation=sklearn.impute._base.SimpleImputer,"
     "estimator=sklearn.tree._classes.DecisionTreeClassifier)(1)", "sklearn.tree.DecisionTreeClassifier"),
    ("sklearn.pipeline.Pipeline(cat_handling=sklearn.compose._column_transformer.ColumnTransformer("
     "cat=sklearn.preprocessing._encoders.OneHotEncoder),imp=sklearn.impute._base.SimpleImputer,"
     "classifier=sklearn.naive_bayes.BernoulliNB)(2)", "sklearn.naive_bayes.BernoulliNB"),
    # not runnable: tuned, non-sklearn, unknown class, non-preprocessing step, test-server prefix
    ("sklearn.model_selection._search.GridSearchCV(estimator=sklearn.pipeline.Pipeline("
     "imputer=sklearn.impute._base.SimpleImputer,classifier=sklearn.tree._classes.DecisionTreeClassifier))(1)", None),
    ("weka.J48(2)", None),
    ("sklearn.dummy.DummyClassifier(1)", None),
    ("sklearn.pipeline.Pipeline(pca=sklearn.decomposition.PCA,clf=sklearn.svm.SVC)(1)", None),
    ("TEST5b99b6a6b2sklearn.pipeline.Pipeline(imp=sklearn.impute._base.SimpleImputer,"
     "classifier=sklearn.dummy.DummyClassifier)(1)", None),
])
def test_flow_to_learner(name, expected):
    got = flow_to_learner(name)
    assert got == expected
    if got is not None:
        assert got in LEARNERS


def test_split_flow_name_respects_nesting():
    head, parts = split_flow_name("a.P(x=b.C(y=d.E,z=f.G),w=h.I)")
    assert head == "a.P" and parts == [("x", "b.C(y=d.E,z=f.G)"), ("w", "h.I")]
    assert split_flow_name("weka.J48") == ("weka.J48", [])
