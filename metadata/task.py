"""The task of a meta-dataset (classification or regression) and the regression score.

The datasets table of a :class:`~algorank.metadata.dataset.MetaDataset` may carry a ``task``
column, ``"classification"`` or ``"regression"``; a table without it, and an empty cell, mean
classification, so every file written before regression existed keeps its meaning.  One
meta-dataset holds one task: ranks, loss curves and tests compare learners by one score, and an
R² is not an accuracy.

Regression runs keep the runs schema and add per-fold ``r2``, ``rmse`` and ``mae`` columns.  Their
``accuracy`` column holds the *score* every meta-level method ranks by (higher is better, in
[0, 1]):

    score = max(R², 0)

with R² scikit-learn's ``r2_score`` on the test fold.  Predicting the training mean scores about
0, so 0 plays the part the majority-class accuracy plays in classification (the baseline a
learner has to beat, the datasets table's ``majority_fraction`` for regression); a learner worse
than the mean scores 0, no worse, so that one hopeless fold cannot outweigh the others in a mean
over folds and every score lies in the same [0, 1] range as an accuracy.  The raw ``r2`` column
keeps its negative values.
"""

from __future__ import annotations

import numpy as np

from .errors import ValidationError

__all__ = ["TASKS", "REGRESSION_RUN_COLUMNS", "LOWER_IS_BETTER", "check_task_column", "score_from_r2",
           "lower_is_better", "score_label", "points_word", "check_meta_task"]

#: The tasks a meta-dataset can hold.
TASKS = ("classification", "regression")
#: Per-fold error columns of regression runs (``r2`` higher is better; ``rmse`` and ``mae`` lower).
REGRESSION_RUN_COLUMNS = ("r2", "rmse", "mae")
#: Run columns where a lower value is better.
LOWER_IS_BETTER = ("log_loss", "rmse", "mae")
_MAX_LISTED = 5


def lower_is_better(column: str) -> bool:
    """Whether a lower value of the run column ``column`` is better (log loss, RMSE, MAE)."""
    return str(column) in LOWER_IS_BETTER


def points_word(task: str) -> str:
    """The unit of losses in points: ``"accuracy"`` points, or ``"R²"`` points for regression (0.01 of the score)."""
    return "R²" if task == "regression" else "accuracy"


def score_label(task: str) -> str:
    """What the ``accuracy`` column holds, in words: ``"accuracy"`` or ``"score (R²)"``."""
    return "score (R²)" if task == "regression" else "accuracy"


def score_from_r2(r2):
    """The regression score of R² values: ``max(R², 0)`` (NaN stays NaN)."""
    r = np.asarray(r2, dtype=float)
    return np.where(np.isnan(r), np.nan, np.maximum(r, 0.0))


def check_task_column(ids, tasks) -> str:
    """The one task of a datasets table, from its ``task`` column.

    Parameters
    ----------
    ids : sequence of str
        Dataset ids, one per row.
    tasks : sequence
        The ``task`` column: ``"classification"``, ``"regression"``, or missing (NaN, None or
        ``""``: classification).

    Returns
    -------
    str
        ``"classification"`` or ``"regression"``.

    Raises
    ------
    ValidationError
        An unknown task, or datasets of both tasks (the message names some of each).
    """
    seen: dict = {}
    bad = []
    for d, t in zip(ids, tasks):
        key = "" if t is None or (isinstance(t, float) and np.isnan(t)) else str(t).strip().lower()
        key = key or "classification"
        if key not in TASKS:
            bad.append(f"{d}: {t!r}")
            continue
        seen.setdefault(key, []).append(str(d))
    if bad:
        raise ValidationError(f"column 'task' of the datasets table must be classification or regression; "
                              f"bad values {', '.join(bad[:_MAX_LISTED])}")
    if len(seen) > 1:
        def some(key):
            ds = sorted(seen[key])
            more = f" and {len(ds) - _MAX_LISTED} more" if len(ds) > _MAX_LISTED else ""
            return f"{key} ({', '.join(ds[:_MAX_LISTED])}{more})"

        raise ValidationError(f"the meta-data mixes tasks: {some('classification')} and {some('regression')}; "
                              f"one meta-dataset holds one task (rank, compare and benchmark them apart)")
    return next(iter(seen), "classification")


def check_meta_task(meta, task: str) -> None:
    """Refuse meta-data of another task than the dataset's (a recommendation never turns one task into the other).

    Parameters
    ----------
    meta : MetaDataset
    task : {"classification", "regression"}
        The task of the dataset at hand.

    Raises
    ------
    InputError
        The meta-data holds runs of the other task (the message says which meta-data would fit).
    """
    from .errors import InputError

    have = getattr(meta, "task", "classification")
    if have != task:
        raise InputError(f"the meta-data holds {have} runs but the dataset is a {task} task: give {task} "
                         f"meta-data (the meta-data option), or read the target as {have} (the task option)")
