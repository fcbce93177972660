"""Which learners can give the metric a recommendation ranks by, and a policy wrapper that skips the others.

Accuracy, balanced accuracy and macro F1 need class predictions, which every classifier gives.  ROC
AUC needs class scores: probabilities (``predict_proba``) or decision values
(``decision_function``).  Log loss needs class probabilities.  A learner whose estimator has
neither (a support vector classifier built without ``probability=True``, a ridge classifier, a
perceptron) is not tested for that metric: its test could only fail.  It is skipped for that
reason, and the reason is stated (progress, table, JSON), never mistaken for a test predicted to
take longer than the budget left.
"""

from __future__ import annotations

import logging

from algorank.metadata.learners import make_estimator, short_name
from algorank.recommender.kernel.trace import ForwardsLimit, Observation

__all__ = ["NEEDS", "missing_output", "learners_without_metric", "SkipWithoutMetric"]

logger = logging.getLogger(__name__)

#: Metric -> (what it needs, in words; the estimator methods of which one is enough).
NEEDS = {
    "roc_auc": ("class scores (probabilities or decision values)", ("predict_proba", "decision_function")),
    "log_loss": ("class probabilities", ("predict_proba",)),
}


def missing_output(learner: str, metric: str, *, allow_modules=()) -> str | None:
    """What ``learner`` lacks to give ``metric`` (``"class probabilities"``), or None when it gives it or
    cannot be built here (its test then says what went wrong)."""
    need = NEEDS.get(metric)
    if need is None:
        return None
    try:
        est = make_estimator(learner, allow_modules=allow_modules)
        gives = any(hasattr(est, method) for method in need[1])
    except Exception:  # an id that does not build, a check that needs a fitted model: the live test reports it
        return None
    return None if gives else need[0]


def learners_without_metric(learners, metric: str, *, allow_modules=()) -> dict:
    """``{learner: reason}`` for the learners that cannot give ``metric`` (see the module docstring)."""
    from algorank.metadata.metric import METRICS

    out = {}
    for learner in learners:
        lacks = missing_output(learner, metric, allow_modules=allow_modules)
        if lacks is not None:
            out[learner] = f"gives no {lacks}, which {METRICS[metric].label} needs"
    if out:
        names = ", ".join(short_name(l) for l in list(out)[:5]) + (f" and {len(out) - 5} more" if len(out) > 5 else "")
        logger.warning("%d learner(s) not tested: they give no %s, which %s needs (%s)", len(out), NEEDS[metric][0],
                       METRICS[metric].label, names)
    return out


class SkipWithoutMetric(ForwardsLimit):
    """Policy wrapper that never hands out a learner of ``reasons`` (learner -> why it is not tested).

    The wrapped policy sees each as a failed test of zero seconds with its reason (so it moves on);
    the trace never contains it.
    """

    def __init__(self, policy, reasons: dict) -> None:
        self.policy, self.reasons = policy, dict(reasons)

    def next(self, history):
        seen = list(history)
        while True:
            learner = self.policy.next(seen)
            if learner is None or learner not in self.reasons:
                return learner
            seen.append(Observation(learner, float("nan"), 0.0, "error", f"not tested: {self.reasons[learner]}"))
