"""Integer codes of a runs table's ids and per-cell aggregates on them, vectorised.

A meta-dataset of 10,000 datasets x 1,000 learners holds millions of runs; grouping them by
``(dataset, learner)`` strings with pandas takes seconds per metric.  These helpers factorize the ids
once (codes in the sorted order of the ids, as ``sorted(set(ids))`` gives) and aggregate on integer cell
indices.  :func:`cell_means` gives pandas' ``groupby(["dataset", "learner"]).mean()`` bit for bit, so
nothing computed from the tables changes.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

__all__ = ["sorted_codes", "dictionary_codes", "dictionary_column", "read_parquet_runs", "cell_means", "has_duplicate_keys"]


def sorted_codes(values) -> tuple[np.ndarray, list]:
    """``(codes, ids)``: ``ids`` the distinct values sorted as Python sorts them, ``codes[i]`` the position
    of ``values[i]`` in ``ids`` (int64)."""
    codes, uniques = pd.factorize(values, sort=False, use_na_sentinel=False)
    uniques = [str(u) for u in uniques]
    order = sorted(range(len(uniques)), key=uniques.__getitem__)
    rank = np.empty(len(uniques), dtype=np.int64)
    rank[order] = np.arange(len(uniques), dtype=np.int64)
    return rank[codes], [uniques[i] for i in order]


def dictionary_codes(chunked) -> tuple[np.ndarray, list]:
    """``(codes, ids)`` of a dictionary-encoded Arrow string column without missing values, as
    :func:`sorted_codes` gives them, from the dictionary indices (the strings are not hashed again)."""
    chunked = chunked.unify_dictionaries() if chunked.num_chunks > 1 else chunked
    values = [str(v) for v in chunked.chunk(0).dictionary.to_pylist()]
    indices = np.concatenate([c.indices.to_numpy(zero_copy_only=False) for c in chunked.chunks])
    used = np.flatnonzero(np.bincount(indices, minlength=len(values)) > 0)
    order = sorted(used.tolist(), key=values.__getitem__)
    rank = np.full(len(values), -1, dtype=np.int64)
    rank[order] = np.arange(len(order), dtype=np.int64)
    return rank[indices], [values[i] for i in order]


def dictionary_column(chunked) -> tuple[pd.Series, tuple[np.ndarray, list] | None]:
    """A dictionary-encoded Arrow string column as ``(pandas str Series, sorted codes)``.

    The codes (as :func:`sorted_codes` gives them) come from :func:`dictionary_codes`; None when the
    column has missing values (validation reports those).
    """
    import pyarrow as pa

    chunked = chunked.unify_dictionaries() if chunked.num_chunks > 1 else chunked
    series = chunked.cast(pa.string()).to_pandas()
    if chunked.null_count or chunked.num_chunks == 0:
        return series, None
    return series, dictionary_codes(chunked)


def read_parquet_runs(path, *, index_names: Sequence[str] = ()) -> tuple[pd.DataFrame, dict, dict]:
    """``(runs, codes, key-value metadata)`` of a runs table saved as Parquet.

    Columns are read by name, never by position, and the rows get a fresh ``RangeIndex`` in file
    order: an index pandas stored with the table (``df.iloc[::-1].to_parquet(p)``, a filtered or
    sorted frame, a ``RangeIndex`` that does not start at 0) is ignored, except that a stored index
    level whose name is in ``index_names`` and which no column of the table carries is read as that
    column (a table written with ``runs.set_index(["dataset", "learner"])``).  String columns
    ``dataset``, ``learner`` and ``status`` are read dictionary-encoded (Parquet stores them so):
    reading is about twice as fast, and the dataset and learner codes come with them.
    """
    import pyarrow.parquet as pq

    from algorank.metadata.allocator import arrow_pool

    arrow_pool()  # the command line reads through jemalloc (fewer page faults); a library caller's pool is kept
    schema = pq.read_schema(path)
    names = _data_columns(schema, index_names)
    strings = [c for c in ("dataset", "learner", "status") if c in names and _is_string(schema.field(c).type)]
    table = pq.read_table(path, columns=list(names), read_dictionary=strings, use_pandas_metadata=False)
    meta = dict(table.schema.metadata or {})
    codes, columns = {}, {}
    for c in strings:
        columns[c], code = dictionary_column(table.column(c))
        if code is not None and c != "status":
            codes[names[c]] = code
    rest = table.drop_columns(strings)
    # no pandas metadata: no stored index, no column taken from it; the arrays as pandas reads them
    runs = rest.to_pandas(ignore_metadata=True) if rest.num_columns else pd.DataFrame(index=range(table.num_rows))
    runs = runs.set_axis(pd.RangeIndex(table.num_rows), axis=0)
    runs.columns = [names[c] for c in rest.column_names]
    for c in strings:
        runs[names[c]] = columns[c].set_axis(runs.index)
    return runs[[names[c] for c in table.column_names]], codes, meta


def _is_string(t) -> bool:
    """Whether an Arrow type holds strings (plain or dictionary-encoded, as pandas writes a category)."""
    import pyarrow as pa

    if pa.types.is_dictionary(t):
        t = t.value_type
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def _data_columns(schema, index_names: Sequence[str]) -> dict:
    """``{field name: column name}`` of the Parquet columns that hold data, in file order: every field
    but a stored pandas index, except index levels named in ``index_names`` that no data column carries."""
    from .textfile import check_unique_names

    check_unique_names(schema.names, what="the Parquet file")
    pandas_meta = schema.pandas_metadata or {}
    stored = [c for c in pandas_meta.get("index_columns", []) if isinstance(c, str)]  # dicts: RangeIndex, no field
    level_names = {c.get("field_name"): c.get("name") for c in pandas_meta.get("columns", [])
                   if c.get("field_name") in stored}
    out = {f: f for f in schema.names if f not in stored}
    for f in stored:
        name = level_names.get(f)
        if isinstance(name, str) and name in index_names and name not in out.values() and f in schema.names:
            out[f] = name
    return {f: out[f] for f in schema.names if f in out}


def cell_means(cell: np.ndarray, values: np.ndarray, n_cells: int, *, single: bool | None = None) -> np.ndarray:
    """Mean of ``values`` per cell index (NaN values and rows of a negative cell skipped; NaN for a cell
    without values).

    pandas' own ``groupby(...).mean()`` on the integer cell index, which sums exactly as the groupby
    on the ``(dataset, learner)`` strings does (the same rows of a cell, the same compensated sums) at a
    fraction of the cost; a table with one value per cell needs no grouping at all (``0.0 + v``: the
    mean of one value, signed zeros included).  ``single``: whether the whole table has at most one value
    per cell, when the caller knows (it gives a part of the table at a time).
    """
    values = np.asarray(values, dtype=float)
    cell = np.asarray(cell, dtype=np.int64)
    out = np.full(n_cells, np.nan)
    keep = ~np.isnan(values)
    if cell.size and int(cell.min()) < 0:
        keep &= cell >= 0
    if single is None:
        single = bool(cell.size) and np.bincount(cell[keep], minlength=n_cells).max(initial=0) <= 1
    if single:
        out[cell[keep]] = 0.0 + values[keep]
        return out
    means = pd.Series(values[keep]).groupby(cell[keep], sort=False).mean()
    out[means.index.to_numpy()] = means.to_numpy()
    return out


def has_duplicate_keys(*columns: np.ndarray) -> bool:
    """Whether two rows share the same values in all the given non-negative integer columns (of any integer
    type).  Keys that fit a byte map (the usual case) are marked there a block of rows at a time, so 90 M
    rows need no key array and no sort."""
    n = len(columns[0])
    if n < 2:
        return False
    widths = [int(np.max(c)) + 1 for c in columns]
    if len(columns) > 2:  # most tables have one run per (dataset, learner): count those first
        cells = widths[0] * widths[1]
        if cells <= 4 * n + 1_000_000 and _distinct(cells, columns[:2], widths[:2]) == n:
            return False
    span = 1
    for width in widths:
        span *= width
        if span >= 2 ** 62:  # too wide for one integer key: let pandas hash the columns
            frame = pd.DataFrame({i: np.asarray(c) for i, c in enumerate(columns)})
            return bool(frame.duplicated().any())
    if span <= 8 * n + 1_000_000:  # a byte per possible key: mark them, count the marks (no sorting)
        return _distinct(span, columns, widths) != n
    key = _keys(columns, widths, 0, n)
    if bool((key[1:] > key[:-1]).all()):  # a table written in key order: no sorting
        return False
    key.sort()  # faster than hashing 10 M keys (about 6 x)
    return bool((key[1:] == key[:-1]).any())


_ROWS = 8_000_000  # rows per block of keys


def _keys(columns, widths, lo: int, hi: int) -> np.ndarray:
    """The combined int64 key of rows ``lo:hi`` (first column the most significant)."""
    key = np.asarray(columns[0][lo:hi]).astype(np.int64)
    for col, width in zip(columns[1:], widths[1:]):
        key *= width
        np.add(key, col[lo:hi], out=key, casting="unsafe")  # integer-valued columns of any type
    return key


def _distinct(span: int, columns, widths) -> int:
    """How many distinct keys the rows have (a byte map over the ``span`` possible keys)."""
    seen = np.zeros(span, dtype=bool)
    n = len(columns[0])
    for lo in range(0, n, _ROWS):
        seen[_keys(columns, widths, lo, min(n, lo + _ROWS))] = True
    return int(np.count_nonzero(seen))
