"""Small synthetic meta-data shared by the tests of the live loop, its budget and learner-id safety."""

from __future__ import annotations

import json

import pandas as pd

from algorank.metadata.dataset import MetaDataset

__all__ = ["slow", "meta_for", "small_meta", "interrupted_at"]


def slow(delay: float) -> str:
    """The id of a test learner that sleeps ``delay`` seconds in ``fit``."""
    return "helpers_estimators.SlowClassifier" + json.dumps({"delay": delay})


def meta_for(learners, *, rows=(150, 300, 600, 1000), fit_time=0.001, step=0.1) -> MetaDataset:
    """Meta-data in which every learner looks fast (``fit_time``) and accurate in the given order
    (accuracy 0.95, then ``step`` less for each next learner), on datasets of ``rows`` rows."""
    runs = [{"dataset": f"d{d}", "learner": l, "repeat": 0, "fold": 0, "accuracy": 0.95 - step * i,
             "fit_time": fit_time} for d in range(len(rows)) for i, l in enumerate(learners)]
    ds = pd.DataFrame({"dataset": [f"d{d}" for d in range(len(rows))], "n_instances": list(rows),
                       "n_features": 4, "n_classes": 3, "majority_fraction": 0.34})
    return MetaDataset(pd.DataFrame(runs), ds)


def small_meta(learners, *, source=None) -> MetaDataset:
    """Three datasets on which the learners rank in the given order (0.99, 0.98, ...) and the first is fastest."""
    rows = [{"dataset": f"d{d}", "learner": l, "repeat": 0, "fold": 0, "accuracy": 0.99 - 0.01 * i,
             "fit_time": 0.001 * (i + 1)} for d in range(3) for i, l in enumerate(learners)]
    ds = pd.DataFrame({"dataset": [f"d{d}" for d in range(3)], "n_instances": [150, 300, 600],
                       "n_features": 4, "n_classes": 3, "majority_fraction": 0.34})
    return MetaDataset(pd.DataFrame(rows), ds, source=source)


def interrupted_at(call: int):
    """A stand-in for ``LiveEnvironment.test``: every test scores 0.8 in 0.1 s, and the ``call``-th is interrupted
    (Ctrl-C)."""
    from algorank.recommender.kernel.trace import Observation

    calls = []

    def test(self, learner):
        calls.append(learner)
        if len(calls) == call:
            raise KeyboardInterrupt
        return Observation(learner, 0.8, 0.1)

    return test
