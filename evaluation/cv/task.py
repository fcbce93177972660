"""Is the target a class label or a quantity?  The task of a dataset, detected or forced.

``task="auto"`` (the default) reads the target column:

* a nominal target (text, category, bool; an ARFF nominal or string attribute) is
  **classification**;
* a numeric target is **classification** only when its values look like class labels: every
  value is a whole number, and there are at most :data:`MAX_LABEL_VALUES` (20) distinct values,
  or at most :data:`MAX_LABEL_VALUES_SHARE` (100) distinct values that make up at most
  :data:`MAX_LABEL_SHARE` (5 %) of the rows (e.g. 0/1 codes, a 1-5 rating, a digit);
* any other numeric target (fractional values, or many distinct whole numbers such as a count
  or a price) is **regression**.

``task="classification"`` reads the values of a numeric target as class labels when they are
whole numbers (fractional values cannot be labels: an error says so), whatever their number.
``task="regression"`` asks for regression (a nominal target is then an error: class labels are not
quantities).

A target detected, or asked for, as regression runs the regressors
(:mod:`algorank.recommender.live.regression`), never a classification with hundreds of classes; the
detection is one line of the output, with the way to force the other reading.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from algorank.metadata.errors import InputError
from algorank.metadata.text import escape

__all__ = ["TASKS", "check_task", "numeric_target_task", "MAX_LABEL_VALUES", "MAX_LABEL_VALUES_SHARE",
           "MAX_LABEL_SHARE"]

#: Accepted values of ``task``.
TASKS = ("auto", "classification", "regression")
#: A numeric target of whole numbers with at most this many distinct values reads as class labels.
MAX_LABEL_VALUES = 20
#: ... or with at most this many distinct values when they make up at most :data:`MAX_LABEL_SHARE` of the rows.
MAX_LABEL_VALUES_SHARE = 100
#: Largest share of distinct values (distinct / rows) of a many-valued whole-number target read as labels.
MAX_LABEL_SHARE = 0.05


def check_task(task) -> str:
    """``task`` validated (one of :data:`TASKS`; None means ``auto``)."""
    if task is None:
        return "auto"
    if not isinstance(task, str) or task.strip().lower() not in TASKS:
        raise InputError(f"task must be one of {', '.join(TASKS)}; got {task!r}")
    return task.strip().lower()


def numeric_target_task(values: pd.Series) -> tuple[str, str]:
    """``(task, why)`` of a numeric target under ``task="auto"`` (the rule of the module docstring).

    Parameters
    ----------
    values : Series
        The target's values as numbers (missing values ignored).

    Returns
    -------
    task : {"classification", "regression"}
    why : str
        The evidence in words (``"3 distinct whole numbers"``, ``"214 distinct values"``).
    """
    v = pd.to_numeric(values, errors="coerce").dropna().to_numpy(dtype=float)
    n, distinct = len(v), int(len(np.unique(v))) if len(v) else 0
    whole = bool(n) and bool(np.all(np.isfinite(v))) and bool(np.all(v == np.floor(v)))
    if not whole:
        return "regression", f"{distinct} distinct values, not all whole numbers"
    if distinct <= MAX_LABEL_VALUES or (distinct <= MAX_LABEL_VALUES_SHARE and distinct <= MAX_LABEL_SHARE * n):
        return "classification", f"{distinct} distinct whole numbers in {n} rows: class labels"
    return "regression", f"{distinct} distinct values in {n} rows"

