"""Multi2Test's paired table: every dataset's fold scores of the compared learners, from fold runs.

:func:`paired_array` gives one row per (dataset, repeat, fold) with a successful run of a compared
learner, sorted, and one column per learner: the table ``pivot_table(index=[dataset, repeat, fold],
columns=learner)`` gives, without pandas.  When the (dataset, repeat, fold) keys fit a table of about
the runs' size (the usual case: a few repeats and folds), each run goes straight to its row through
that table, in two compiled passes over the runs and no sorting; otherwise the runs are sorted by a
combined integer key (:func:`sort_rows`).
"""

from __future__ import annotations

import numpy as np

from algorank.recommender.multitest_fast import _compiled

__all__ = ["paired_array", "sort_rows"]


def sort_rows(*columns: np.ndarray) -> np.ndarray:
    """``np.lexsort(columns[::-1])`` (first column the primary key), as one stable sort of a combined integer
    key when the columns are non-negative integers whose ranges fit one (faster on many rows)."""
    key = np.zeros(len(columns[0]), dtype=np.int64)
    span = 1
    for col in columns:
        col = np.asarray(col)
        if col.size and (col.dtype.kind not in "iu" or int(col.min()) < 0):
            return np.lexsort(columns[::-1])
        width = int(col.max()) + 1 if col.size else 1
        span *= width
        if span >= 2 ** 62:
            return np.lexsort(columns[::-1])
        key = key * width + col
    return np.argsort(key, kind="stable")


def _mark(dataset, learner, column_of, repeat, fold, ok, v, n_folds, n_evals, present):
    """``present[slot] = True`` for the slot ``dataset * n_evals + repeat * n_folds + fold`` of every kept run
    (successful, of a compared learner (``column_of[learner] >= 0``), with a value)."""
    for i in range(dataset.shape[0]):
        if ok[i] and column_of[learner[i]] >= 0 and not np.isnan(v[i]):
            present[dataset[i] * n_evals + repeat[i] * n_folds + fold[i]] = True


def _fill(dataset, learner, column_of, repeat, fold, ok, v, n_folds, n_evals, row_of, values):
    """``values[row_of[slot], column_of[learner]] = v`` for every kept run."""
    for i in range(dataset.shape[0]):
        if ok[i] and column_of[learner[i]] >= 0 and not np.isnan(v[i]):
            values[row_of[dataset[i] * n_evals + repeat[i] * n_folds + fold[i]], column_of[learner[i]]] = v[i]


def paired_array(runs, learners: list, metric: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, list]:
    """All datasets' paired runs of ``learners`` at once: ``(values, evaluations, row starts, dataset ids)``.

    Parameters
    ----------
    runs : FoldRuns
        The runs (:class:`~algorank.metadata.fold_runs.FoldRuns`); one per (dataset, learner, repeat, fold).
    learners : list of str
        The columns of ``values``.
    metric : str
        A numeric run column.

    Returns
    -------
    tuple
        ``values`` has one row per (dataset, repeat, fold) with a successful run of one of the learners,
        sorted, and one column per learner (NaN: no successful run there); the rows of dataset ``ids[d]``
        are ``rows[d]:rows[d + 1]``, and ``evaluations`` holds each row's (repeat, fold).
    """
    (dc, ds), (lc, ls) = runs.id_codes("dataset"), runs.id_codes("learner")
    col_of = np.full(len(ls), -1, dtype=np.int64)
    where = {l: i for i, l in enumerate(ls)}
    for j, l in enumerate(learners):
        if l in where:
            col_of[where[l]] = j
    v = runs.column(metric)
    rep, fold = runs.repeat, runs.fold
    n_folds = int(fold.max()) + 1 if len(fold) else 1
    n_evals = (int(rep.max()) + 1 if len(rep) else 1) * n_folds
    n_slots = len(ds) * n_evals
    if len(dc) and n_slots <= 4 * len(dc) + 1_000_000:
        present = np.zeros(n_slots, dtype=np.bool_)
        args = (dc, lc, col_of, rep, fold, runs.ok, v, n_folds, n_evals)
        _compiled(_mark)(*args, present)
        slots = np.flatnonzero(present)
        row_of = np.full(n_slots, -1, dtype=np.int64)
        row_of[slots] = np.arange(len(slots))
        values = np.full((len(slots), len(learners)), np.nan)
        _compiled(_fill)(*args, row_of, values)
        row_d, e = np.divmod(slots, n_evals)
        evaluations = np.column_stack(np.divmod(e, n_folds)).astype(np.int64)
    else:
        col = col_of[lc]
        keep = runs.ok & (col >= 0) & ~np.isnan(v)
        v, d, col, rep, fold = v[keep], dc[keep], col[keep], rep[keep], fold[keep]
        order = sort_rows(d, rep, fold)
        d, rep, fold, col, v = d[order], rep[order], fold[order], col[order], v[order]
        new = np.ones(len(d), dtype=bool)
        new[1:] = (d[1:] != d[:-1]) | (rep[1:] != rep[:-1]) | (fold[1:] != fold[:-1])
        row = np.cumsum(new) - 1
        values = np.full((int(row[-1]) + 1 if len(row) else 0, len(learners)), np.nan)
        values[row, col] = v  # one run per (dataset, learner, repeat, fold): validated
        starts = np.flatnonzero(new)
        row_d = d[starts]
        evaluations = np.column_stack([rep[starts], fold[starts]]) if len(starts) else np.zeros((0, 2), np.int64)
    n_rows = len(values)
    firsts = np.flatnonzero(np.r_[True, row_d[1:] != row_d[:-1]]) if n_rows else np.zeros(0, dtype=np.int64)
    return values, evaluations, np.r_[firsts, n_rows], [ds[i] for i in row_d[firsts]]
