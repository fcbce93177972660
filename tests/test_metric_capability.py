"""A learner that cannot give the chosen metric is not tested, for that reason, and the reason is stated:
never "predicted to take longer than the budget left" (``recommend sklearn:wine --metric log_loss``)."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from algorank import api
from algorank.metadata.dataset import MetaDataset
from algorank.metadata.learners import LEARNERS
from algorank.recommender.kernel.trace import Observation
from algorank.recommender.live.capability import SkipWithoutMetric, learners_without_metric

NO_PROBA = {"SVC_linear", "SVC_poly", "SVC_rbf", "SVC_sigmoid", "sklearn.linear_model.PassiveAggressiveClassifier",
            "sklearn.linear_model.Perceptron", "sklearn.linear_model.RidgeClassifier",
            "sklearn.linear_model.SGDClassifier"}


def test_which_portfolio_learners_give_each_metric(caplog):
    with caplog.at_level(logging.WARNING):
        missing = learners_without_metric(sorted(LEARNERS), "log_loss")
    assert set(missing) == NO_PROBA
    assert missing["SVC_rbf"] == "gives no class probabilities, which log loss needs"
    assert "8 learner(s) not tested: they give no class probabilities, which log loss needs" in caplog.text
    # every portfolio learner has probabilities or decision values (ROC AUC) and class predictions
    for metric in ("roc_auc", "accuracy", "balanced_accuracy", "f1_macro"):
        assert learners_without_metric(sorted(LEARNERS), metric) == {}
    # an id that does not build is left to its test, which says what went wrong
    assert learners_without_metric(["no.such.Learner"], "log_loss") == {}


def test_skip_wrapper_hands_out_only_the_others():
    class Order:
        def __init__(self):
            self.seen = []

        def next(self, history):
            self.seen = list(history)
            done = {o.learner for o in history}
            return next((l for l in ("a", "b", "c") if l not in done), None)

    inner = Order()
    policy = SkipWithoutMetric(inner, {"a": "gives no class probabilities, which log loss needs"})
    assert policy.next([]) == "b"
    assert inner.seen[0].learner == "a" and inner.seen[0].status == "error" and inner.seen[0].seconds == 0.0
    assert policy.next([Observation("b", 0.9, 0.1)]) == "c"


def _meta() -> MetaDataset:
    """lda fast; svc-rbf and ridge recorded as very slow (so that a budget check would skip them first)."""
    rows = []
    for d, n in enumerate((150, 300, 600)):
        for learner, seconds, loss in (("sklearn.discriminant_analysis.LinearDiscriminantAnalysis", 0.3, 0.2),
                                       ("SVC_rbf", 5000.0, np.nan),
                                       ("sklearn.linear_model.RidgeClassifier", 4000.0, np.nan)):
            rows.append({"dataset": f"d{d}", "learner": learner, "repeat": 0, "fold": 0, "accuracy": 0.9,
                         "log_loss": loss, "fit_time": seconds})
    ds = pd.DataFrame({"dataset": ["d0", "d1", "d2"], "n_instances": [150, 300, 600], "n_features": 13,
                       "n_classes": 3, "majority_fraction": 0.4})
    return MetaDataset(pd.DataFrame(rows), ds)


def test_recommend_states_the_metric_reason():
    rec = api.recommend("sklearn:wine", meta=_meta(), metric="log_loss", budget=60, refit=False)
    assert list(rec.trace.learners) == ["sklearn.discriminant_analysis.LinearDiscriminantAnalysis"]
    assert "predicted to take longer" not in rec.summary
    assert rec.summary.endswith("; 2 learner(s) not tested: they give no class probabilities, which log loss "
                                "needs (svc-rbf, ridge)")
    out = rec.to_dict()
    assert out["not_tested"] == [{"learner": "SVC_rbf", "reason": "gives no class probabilities, which log loss needs"},
                                 {"learner": "sklearn.linear_model.RidgeClassifier",
                                  "reason": "gives no class probabilities, which log loss needs"}]
    assert out["skipped"] == []
    assert rec.summary in rec.to_text()
