"""Which score a meta-dataset's ``accuracy`` column holds.

The runs schema requires an ``accuracy`` column.  A source that recorded only balanced
accuracy (OBOE, :mod:`algorank.metadata.oboe`) stores it in both ``accuracy`` and
``balanced_accuracy``; every strategy and benchmark then ranks by it through the default
metric, and :func:`primary_metric` tells a live run which score to measure so that what it
sees is comparable with what the meta-data expects.
"""

from __future__ import annotations

import numpy as np

__all__ = ["primary_metric", "METRIC_LABELS"]

#: Display labels of the scores a live test can report.
METRIC_LABELS = {"accuracy": "accuracy", "balanced_accuracy": "balanced accuracy"}


def primary_metric(meta) -> str:
    """``"balanced_accuracy"`` when ``meta``'s ``accuracy`` column IS its balanced accuracy, else ``"accuracy"``.

    The rule: the runs have a ``balanced_accuracy`` column and, on every successful run, it equals
    ``accuracy`` exactly (e.g. the embedded ``oboe`` set).  Meta-data measured by algorank's
    evaluator records both scores, which differ on most folds; joined with such meta-data, OBOE's
    runs no longer make the columns equal and the answer is ``"accuracy"``.

    Parameters
    ----------
    meta : MetaDataset

    Returns
    -------
    str
    """
    runs = meta.runs
    if "balanced_accuracy" not in runs.columns:
        return "accuracy"
    ok = (runs["status"] == "ok").to_numpy()
    if not ok.any():
        return "accuracy"
    acc = runs["accuracy"].to_numpy(dtype=float)[ok]
    bal = runs["balanced_accuracy"].to_numpy(dtype=float)[ok]
    return "balanced_accuracy" if np.array_equal(acc, bal) else "accuracy"
