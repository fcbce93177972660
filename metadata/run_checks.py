"""The validation rules of a runs table, on arrays: one source for every loader.

:class:`~algorank.metadata.dataset.MetaDataset` checks a pandas runs table and
:func:`~algorank.metadata.fold_runs.read_fold_runs` checks columns read straight from Parquet; both
call these functions, in the same order, so a bad file gets the same one-line
:class:`~algorank.metadata.errors.ValidationError` whichever reads it.  Rows are numbered from 0 in
file order.
"""

from __future__ import annotations

from typing import Iterable, Mapping

import numpy as np

from .cells import has_duplicate_keys
from .errors import ValidationError

__all__ = ["STATUSES", "BOUNDED_METRICS", "NONNEGATIVE", "MAX_LISTED", "fmt_rows", "check_ids_present",
           "index_column_error", "status_error", "numeric_error", "check_run_values", "duplicate_rows",
           "check_unique_runs"]

#: Allowed values of ``status``.
STATUSES = ("ok", "error", "timeout")
#: Run columns that must lie in [0, 1].
BOUNDED_METRICS = ("accuracy", "balanced_accuracy", "auc", "f1_macro")
#: Run columns that must be finite and >= 0.
NONNEGATIVE = ("fit_time", "predict_time", "model_bytes", "log_loss", "rmse", "mae")
#: How many rows or values an error message lists.
MAX_LISTED = 5


def fmt_rows(index: Iterable) -> str:
    """``rows 3, 7, 9 and 2 more``: the first :data:`MAX_LISTED` row numbers of an error."""
    rows = list(index)
    shown = ", ".join(str(r) for r in rows[:MAX_LISTED])
    more = f" and {len(rows) - MAX_LISTED} more" if len(rows) > MAX_LISTED else ""
    return f"rows {shown}{more}"


def check_ids_present(col: str, missing: np.ndarray) -> None:
    """An id column (``dataset``, ``learner``) without missing values (``missing``: a mask of rows)."""
    bad = np.flatnonzero(missing)
    if len(bad):
        raise ValidationError(f"column '{col}' has missing values in {fmt_rows(bad)}")


def index_column_error(col: str, bad: np.ndarray, shown: list) -> ValidationError:
    """The error of a ``repeat`` / ``fold`` column with values that are not non-negative integers
    (``bad``: their rows; ``shown``: the values of the first :data:`MAX_LISTED` of them)."""
    return ValidationError(f"column '{col}' must hold non-negative integers; bad values {list(shown)} in "
                           f"{fmt_rows(bad)}")


def status_error(bad: np.ndarray, values: Iterable[str]) -> ValidationError:
    """The error of a ``status`` column with unknown values (``bad``: their rows; ``values``: those values)."""
    return ValidationError(f"column 'status' must be one of {', '.join(STATUSES)}; unknown values "
                           f"{sorted(set(values))[:MAX_LISTED]} in {fmt_rows(bad)}")


def numeric_error(col: str, bad: np.ndarray) -> ValidationError:
    """The error of a metric column with values that are not numbers (``bad``: their rows)."""
    return ValidationError(f"column '{col}' must be numeric; non-numeric values in {fmt_rows(bad)}")


def check_run_values(columns: Mapping[str, np.ndarray], ok: np.ndarray) -> None:
    """The value rules of the numeric run columns (float arrays by name), in this order: ``accuracy`` on
    every successful run (``ok``), the metrics in [0, 1], the times, sizes and log losses finite and >= 0
    (NaN: no value, allowed)."""
    bad = np.flatnonzero(ok & np.isnan(columns["accuracy"]))
    if len(bad):
        raise ValidationError(f"column 'accuracy' is required for status 'ok' but missing in {fmt_rows(bad)}")
    for col in BOUNDED_METRICS:
        if col in columns:
            v = columns[col]
            bad = np.flatnonzero((v < 0) | (v > 1))
            if len(bad):
                raise ValidationError(f"column '{col}' must lie in [0, 1]; bad values "
                                      f"{v[bad[:MAX_LISTED]].tolist()} in {fmt_rows(bad)}")
    for col in NONNEGATIVE:
        if col in columns:
            v = columns[col]
            bad = np.flatnonzero((v < 0) | np.isinf(v))
            if len(bad):
                raise ValidationError(f"column '{col}' must be finite and >= 0; bad values "
                                      f"{v[bad[:MAX_LISTED]].tolist()} in {fmt_rows(bad)}")


def duplicate_rows(*columns: np.ndarray) -> np.ndarray:
    """Rows (ascending) whose values in all the given integer columns occur in another row too (pandas'
    ``duplicated(keep=False)``)."""
    order = np.lexsort(columns[::-1])
    same = np.ones(len(order) - 1 if len(order) else 0, dtype=bool)
    for col in columns:
        c = np.asarray(col)[order]
        same &= c[1:] == c[:-1]
    dup = np.zeros(len(order), dtype=bool)
    dup[1:] |= same
    dup[:-1] |= same
    return np.sort(order[dup])


def check_unique_runs(dataset: tuple[np.ndarray, list], learner: tuple[np.ndarray, list], repeat: np.ndarray,
                      fold: np.ndarray) -> None:
    """One run per (dataset, learner, repeat, fold); ``dataset`` and ``learner`` as ``(codes, ids)``."""
    (dc, ds), (lc, ls) = dataset, learner
    if not has_duplicate_keys(dc, lc, repeat, fold):
        return
    bad = duplicate_rows(dc, lc, repeat, fold)
    i = bad[0]
    first = (ds[dc[i]], ls[lc[i]], int(repeat[i]), int(fold[i]))
    raise ValidationError(f"duplicated (dataset, learner, repeat, fold) in {fmt_rows(bad)}, e.g. {first}")
