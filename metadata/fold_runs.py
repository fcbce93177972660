"""Fold runs: the runs table as integer codes and number arrays, read straight from Parquet.

Multi2Test pairs every learner's runs per dataset and split; it needs the ids, the split, the status,
one metric and the cost columns, never the runs table's string columns.  On 10,000 datasets x 1,000
learners x 10 folds (90 million runs) building those string columns takes most of the time and
memory of loading.  :class:`FoldRuns` holds the same runs as arrays: the dataset and learner ids as
codes into their sorted lists, ``repeat`` and ``fold`` as integers, a success mask and the numeric
columns.

:func:`read_fold_runs` reads a Parquet runs file (as :meth:`MetaDataset.save
<algorank.metadata.dataset.MetaDataset.save>` writes it) column by column into these arrays, the ids through the file's dictionaries.
It checks everything :meth:`MetaDataset.load <algorank.metadata.dataset.MetaDataset.load>` checks, with
the same rules (:mod:`algorank.metadata.run_checks`) in the same order, so a bad file gets the same
one-line error.  A file it does not read the same way (CSV, column types other than strings, integers
and floats, missing values where the general loader makes strings of them, unreadable or empty files)
goes to the general loader: :func:`load_fold_runs` then builds the arrays from the
:class:`~algorank.metadata.dataset.MetaDataset` (:meth:`FoldRuns.from_meta`), so either way the result,
or the error, is the same.
"""

from __future__ import annotations

import collections
import io
import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from .cells import cell_means
from .dataset import (COST_KINDS, OPTIONAL_RUN_COLUMNS, RUN_COLUMNS, MetaDataset, _PARQUET_KEY, _SOURCE_KEY,
                      _validate_datasets)
from .errors import InputError, ValidationError
from .run_checks import (STATUSES, check_run_values, check_unique_runs, index_column_error,
                         status_error)

__all__ = ["FoldRuns", "read_fold_runs", "load_fold_runs", "fold_runs_of"]

logger = logging.getLogger(__name__)

_BLOCK_RUNS = 10_000_000  # runs per block of the cost means

#: The numeric run columns, in the order the rules check them.
_NUMERIC = ("accuracy", "fit_time", "predict_time") + tuple(c for c in OPTIONAL_RUN_COLUMNS if c != "message")


@dataclass(frozen=True, eq=False)
class FoldRuns:
    """Runs of learners on datasets as arrays, one entry per run (file order).

    Build it with :func:`load_fold_runs` (a file, an embedded set's name or a MetaDataset) or
    :meth:`from_meta`; it is what :func:`~algorank.recommender.multitest.multi2test` works on.

    Attributes
    ----------
    dataset_ids, learner_ids : tuple of str
        Sorted ids of the datasets and learners that have runs.
    dataset, learner : ndarray of int
        Each run's position in ``dataset_ids`` / ``learner_ids``.
    repeat, fold : ndarray of int64
        Each run's split.
    ok : ndarray of bool
        Whether the run's status is ``ok``.
    columns : dict of str to ndarray of float
        Numeric run columns (``accuracy``, ``fit_time``, ...; NaN: no value).  A loader may keep only
        some of them (:func:`load_fold_runs`'s ``columns``); all were checked.
    source : str
        Where the runs came from.
    """

    dataset_ids: tuple
    learner_ids: tuple
    dataset: np.ndarray = field(repr=False)
    learner: np.ndarray = field(repr=False)
    repeat: np.ndarray = field(repr=False)
    fold: np.ndarray = field(repr=False)
    ok: np.ndarray = field(repr=False)
    columns: dict = field(repr=False)
    source: str = ""

    def __len__(self) -> int:
        return len(self.dataset)

    def id_codes(self, column: str) -> tuple[np.ndarray, list]:
        """``(codes, ids)`` of ``dataset`` or ``learner``, as :meth:`MetaDataset.id_codes
        <algorank.metadata.dataset.MetaDataset.id_codes>` gives them."""
        if column == "dataset":
            return self.dataset, list(self.dataset_ids)
        if column == "learner":
            return self.learner, list(self.learner_ids)
        raise InputError(f"id_codes: column must be dataset or learner; got {column!r}")

    def column(self, name: str) -> np.ndarray:
        """The numeric run column ``name`` (float, NaN: no value)."""
        if name not in self.columns:
            raise InputError(f"unknown metric {name!r}")
        return self.columns[name]

    def cost(self, kind: str = "fit_time") -> pd.DataFrame:
        """Datasets x learners mean cost over the successful runs, as :meth:`MetaDataset.cost
        <algorank.metadata.dataset.MetaDataset.cost>` gives it (the same numbers, the same errors)."""
        if kind not in COST_KINDS:
            raise InputError(f"cost kind must be one of {', '.join(COST_KINDS)}; got {kind!r}")
        if kind == "model_bytes" and "model_bytes" not in self.columns:
            raise InputError("cost kind 'model_bytes' needs a model_bytes column, which this meta-data lacks")
        if kind == "fit_predict_time":
            predict = self.column("predict_time")
            values = self.column("fit_time") + np.where(np.isnan(predict), 0.0, predict)
        else:
            values = self.column(kind)
        n_d, n_l = len(self.dataset_ids), len(self.learner_ids)
        # a block of datasets at a time (about 10 million runs): each cell's runs in the same order, the same
        # sums, with a tenth of the grouping's memory at 90 million runs
        use = self.ok & ~np.isnan(values)
        step = max(1, n_d * _BLOCK_RUNS // max(len(self), 1))
        starts = range(0, n_d, step)

        def cells(lo: int):
            rows = np.flatnonzero(use & (self.dataset >= lo) & (self.dataset < lo + step)) if step < n_d else \
                np.flatnonzero(use)
            return rows, (self.dataset[rows].astype(np.int64) - lo) * n_l + self.learner[rows]

        # one value per cell in the whole table (then no grouping at all): settled by the first block with more
        single = all(np.bincount(cells(lo)[1]).max(initial=0) <= 1 for lo in starts)
        means = np.full(n_d * n_l, np.nan)
        for lo in starts:
            rows, cell = cells(lo)
            means[lo * n_l:(lo + step) * n_l] = cell_means(cell, values[rows], min(step, n_d - lo) * n_l,
                                                           single=single)
        return pd.DataFrame(means.reshape(n_d, n_l), index=pd.Index(list(self.dataset_ids), name="dataset"),
                            columns=pd.Index(list(self.learner_ids), name="learner"))

    @classmethod
    def from_meta(cls, meta: MetaDataset, *, columns: Iterable[str] | None = None) -> "FoldRuns":
        """The runs of a :class:`~algorank.metadata.dataset.MetaDataset` as arrays (``columns``: the
        numeric columns to keep; default all)."""
        runs = meta.runs
        (dc, ds), (lc, ls) = meta.id_codes("dataset"), meta.id_codes("learner")
        names = [c for c in _NUMERIC if c in runs.columns and (columns is None or c in columns)]
        return cls(dataset_ids=tuple(ds), learner_ids=tuple(ls), dataset=dc, learner=lc,
                   repeat=runs["repeat"].to_numpy(), fold=runs["fold"].to_numpy(),
                   ok=(runs["status"] == "ok").to_numpy(),
                   columns={c: runs[c].to_numpy(dtype=float) for c in names}, source=meta.source)


class _NotHere(Exception):
    """The file needs the general loader (MetaDataset.load)."""


def _is_string(t) -> bool:
    import pyarrow as pa

    if pa.types.is_dictionary(t):
        t = t.value_type
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def _small_int(pf, name: str):
    """The smallest integer type that holds ``name`` by the file's statistics (int64 without them)."""
    meta = pf.metadata
    j = pf.schema_arrow.get_field_index(name)
    high = 0
    for g in range(meta.num_row_groups):
        stats = meta.row_group(g).column(j).statistics
        if stats is None or not stats.has_min_max:
            return np.int64
        high = max(high, int(stats.max))
    for dtype in (np.int8, np.int16, np.int32):
        if high <= np.iinfo(dtype).max:
            return dtype
    return np.int64


class _Ids:
    """A string column as codes, built row group by row group from the groups' dictionaries."""

    def __init__(self, n: int) -> None:
        self.codes = np.empty(n, dtype=np.int16)  # int32 once there are more ids than int16 holds
        self.index: dict = {}
        self.used = np.zeros(0, dtype=bool)

    def add(self, chunk, at: int) -> None:
        values = chunk.dictionary.to_pylist()
        lut = np.fromiter((self.index.setdefault(str(v), len(self.index)) for v in values), dtype=np.int64,
                          count=len(values))
        if len(self.index) > np.iinfo(self.codes.dtype).max:
            self.codes = self.codes.astype(np.int32)
        lut = lut.astype(self.codes.dtype)
        indices = chunk.indices.to_numpy(zero_copy_only=False)
        self.codes[at:at + len(chunk)] = lut[indices]
        if len(self.used) < len(self.index):
            self.used = np.r_[self.used, np.zeros(len(self.index) - len(self.used), dtype=bool)]
        self.used[lut[np.bincount(indices, minlength=len(values)) > 0]] = True

    def finish(self) -> tuple[np.ndarray, list]:
        """``(codes, ids)`` as :func:`~algorank.metadata.cells.sorted_codes` gives them."""
        names = list(self.index)
        order = sorted(np.flatnonzero(self.used).tolist(), key=names.__getitem__)
        rank = np.full(len(names), -1, dtype=np.int16 if len(order) < 2 ** 15 else np.int32)
        rank[order] = np.arange(len(order))
        codes = rank[self.codes]
        self.codes = None
        return codes, [names[i] for i in order]


def _row_groups(pf, opener, columns: list):
    """The row groups of ``pf`` as tables, in order; the next two are read ahead on two threads (decoding
    releases the GIL), each with its own file (``opener()``)."""
    import concurrent.futures
    import threading

    local = threading.local()

    def read(g: int):
        if getattr(local, "file", None) is None:
            local.file = opener()
        return local.file.read_row_group(g, columns=columns, use_pandas_metadata=False, use_threads=False)

    n = pf.metadata.num_row_groups
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        pending = collections.deque(pool.submit(read, g) for g in range(min(2, n)))
        for g in range(n):
            try:
                table = pending.popleft().result()
            except Exception as exc:  # pyarrow raises many types; the general loader words the error
                raise _NotHere(str(exc)) from exc
            if g + 2 < n:
                pending.append(pool.submit(read, g + 2))
            yield table


def _read_checked(pf, opener, schema, pandas_meta: dict, datasets, keep, source: str) -> FoldRuns:
    """Read the columns row group by row group into compact arrays, then check them in the general
    loader's order (:func:`~algorank.metadata.dataset._validate_runs`)."""
    import pyarrow as pa

    names = list(schema.names)
    n = pf.metadata.num_rows
    if n == 0 or len(set(names)) != len(names):
        raise _NotHere("an empty table or repeated column names")
    if any(isinstance(c, str) for c in pandas_meta.get("index_columns", [])):
        raise _NotHere("a stored pandas index")
    for c in names:
        t = schema.field(c).type
        if c in ("dataset", "learner", "status") and not _is_string(t):
            raise _NotHere(f"{c} is not a string column")
        if c in ("repeat", "fold") and not (pa.types.is_integer(t) and not pa.types.is_uint64(t)):
            raise _NotHere(f"{c} is not an integer column")
        if c in _NUMERIC and not (pa.types.is_integer(t) or pa.types.is_float64(t) or pa.types.is_float32(t)):
            raise _NotHere(f"{c} is not a number column")
    missing = [c for c in RUN_COLUMNS if c not in names and c not in ("fit_time", "predict_time", "status")]
    if missing:
        raise ValidationError(f"runs table is missing required column(s): {', '.join(missing)}")
    numeric = [c for c in _NUMERIC if c in names]
    # dense: the columns kept and accuracy (its rule needs every row); the others are only checked, by their
    # rows out of [0, 1] or infinite (the only values a rule can refuse), and read again in full if there are any
    dense = [c for c in numeric if c == "accuracy" or keep is None or c in keep]
    ids = {c: _Ids(n) for c in ("dataset", "learner")}
    ints = {c: np.empty(n, dtype=_small_int(pf, c)) for c in ("repeat", "fold")}
    negative: dict = {"repeat": [], "fold": []}
    ok = np.ones(n, dtype=bool)
    unknown: list = []
    values = {c: np.empty(n) for c in dense}
    suspect = {c: False for c in numeric if c not in dense}
    columns = ["dataset", "learner", "repeat", "fold"] + (["status"] if "status" in names else []) + numeric
    at = 0
    for table in _row_groups(pf, opener, columns):
        for c in ("dataset", "learner"):
            for pos, chunk in _chunks(table, c, at):
                if chunk.null_count:
                    raise _NotHere("missing ids")  # the general loader names their rows
                ids[c].add(chunk, pos)
        for c in ("repeat", "fold"):
            for pos, chunk in _chunks(table, c, at):
                if chunk.null_count:
                    raise _NotHere(f"{c} has missing values")  # the general loader reads them as floats
                v = chunk.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
                bad = np.flatnonzero(v < 0)
                if len(bad) or (len(v) and int(v.max()) > np.iinfo(ints[c].dtype).max):
                    negative[c].extend(zip((bad + pos).tolist(), v[bad].tolist()))
                    ints[c] = ints[c].astype(np.int64) if ints[c].dtype != np.int64 else ints[c]
                ints[c][pos:pos + len(v)] = v
        if "status" in names:
            for pos, chunk in _chunks(table, "status", at):
                if chunk.null_count:
                    raise _NotHere("status has missing values")  # the general loader names them as strings
                words = [str(v) for v in chunk.dictionary.to_pylist()]
                indices = chunk.indices.to_numpy(zero_copy_only=False)
                good = np.array([w == "ok" for w in words] + [False])
                ok[pos:pos + len(chunk)] = good[indices]
                strange = [i for i, w in enumerate(words) if w not in STATUSES]
                if strange:
                    bad = np.flatnonzero(np.isin(indices, strange))
                    unknown.extend((int(r) + pos, words[indices[r]]) for r in bad)
        for c in numeric:
            for pos, chunk in _chunks(table, c, at):
                v = chunk.to_numpy(zero_copy_only=False).astype(float, copy=False)
                if c in values:
                    values[c][pos:pos + len(v)] = v
                elif not suspect[c]:
                    suspect[c] = bool(((v < 0) | (v > 1) | np.isinf(v)).any())
        at += table.num_rows
    if at != n:
        raise _NotHere("row groups do not add up to the rows")
    for c in ("repeat", "fold"):
        if negative[c]:
            rows = np.array([r for r, _ in negative[c]])
            bad = np.sort(rows)
            shown = dict(negative[c])
            raise index_column_error(c, bad, [shown[r] for r in bad[:5].tolist()])
    if unknown:
        raise status_error(np.array(sorted(r for r, _ in unknown)), (w for _, w in unknown))
    for c, flagged in suspect.items():
        # a column with no value out of [0, 1] and none infinite passes every rule: checked as an empty column
        values[c] = _read_column(pf, c) if flagged else np.zeros(0)
    values = {c: values[c] for c in numeric}  # the rules' order
    if "fit_time" not in values:
        values["fit_time"] = np.full(n, np.nan)
    if "predict_time" not in values:
        values["predict_time"] = np.full(n, 0.0 if (~np.isnan(values["fit_time"])).any() else np.nan)
    check_run_values(values, ok)
    dataset, learner = ids["dataset"].finish(), ids["learner"].finish()
    check_unique_runs(dataset, learner, ints["repeat"], ints["fold"])
    _validate_datasets(datasets, dataset[1])
    kept = {c: v for c, v in values.items() if (keep is None or c in keep) and len(v) == n}
    return FoldRuns(dataset_ids=tuple(dataset[1]), learner_ids=tuple(learner[1]), dataset=dataset[0],
                    learner=learner[0], repeat=ints["repeat"], fold=ints["fold"], ok=ok, columns=kept, source=source)


def _chunks(table, name: str, at: int) -> list:
    """``[(first row, chunk), ...]`` of one column of a row group that starts at row ``at``."""
    out, pos = [], at
    for chunk in table.column(name).chunks:
        out.append((pos, chunk))
        pos += len(chunk)
    return out


def _read_column(pf, name: str) -> np.ndarray:
    try:
        return pf.read(columns=[name], use_pandas_metadata=False).column(0).to_numpy(
            zero_copy_only=False).astype(float, copy=False)
    except Exception as exc:
        raise _NotHere(str(exc)) from exc


def read_fold_runs(path: str | os.PathLike, *, columns: Iterable[str] | None = None,
                   source: str | None = None) -> FoldRuns | None:
    """Read a Parquet runs file into :class:`FoldRuns`, checked as :meth:`MetaDataset.load
    <algorank.metadata.dataset.MetaDataset.load>` checks it.

    Parameters
    ----------
    path : path-like
        A ``.parquet`` runs file.
    columns : iterable of str, optional
        Numeric columns to keep (all are read and checked; default: keep all).
    source : str, optional
        Provenance (default: the file's own, else ``file:NAME``).

    Returns
    -------
    FoldRuns or None
        None when the file is one the general loader must read (see the module docstring).

    Raises
    ------
    ValidationError
        The runs or datasets table breaks a rule (the same message as the general loader's).
    """
    import pyarrow.parquet as pq

    from .allocator import arrow_pool, heap_pool

    path = Path(path)
    if path.suffix.lower() != ".parquet" or not path.is_file():
        return None
    arrow_pool()
    heap_pool()
    try:
        schema = pq.read_schema(path)
        strings = [c for c in ("dataset", "learner", "status") if c in schema.names]

        def opener():
            return pq.ParquetFile(path, read_dictionary=strings)

        pf = opener()
        meta = dict(schema.metadata or {})
        pandas_meta = json.loads(meta.get(b"pandas", b"{}"))
        datasets = None
        if _PARQUET_KEY in meta:
            datasets = pd.read_json(io.StringIO(meta[_PARQUET_KEY].decode()), orient="split", dtype={"dataset": str})
        stored_source = meta.get(_SOURCE_KEY, b"").decode()
        return _read_checked(pf, opener, schema, pandas_meta, datasets, None if columns is None else set(columns),
                             source if source is not None else (stored_source or f"file:{path.name}"))
    except _NotHere as exc:
        logger.debug("%s: read by the general loader (%s)", path, exc)
        return None
    except ValidationError:
        raise
    except Exception as exc:  # an unreadable file: the general loader words the error
        logger.debug("%s: read by the general loader (%s: %s)", path, type(exc).__name__, exc)
        return None


def load_fold_runs(source=None, *, columns: Iterable[str] | None = None) -> FoldRuns:
    """Fold runs from a Parquet file (read as arrays), or from whatever :func:`~algorank.metadata.snapshot.load_meta`
    loads (a CSV file, an embedded set's name, an ASlib folder, a MetaDataset, a list of these).

    Parameters
    ----------
    source : str, path, MetaDataset, FoldRuns or sequence, optional
        What to load (None: the embedded default set).
    columns : iterable of str, optional
        Numeric run columns to keep (default all; every one is checked).

    Raises
    ------
    InputError
        As :func:`~algorank.metadata.snapshot.load_meta` raises it (unknown name, missing or invalid file).
    """
    from .snapshot import EMBEDDED, load_meta

    if isinstance(source, FoldRuns):
        return source
    if isinstance(source, (list, tuple)) and len(source) == 1:  # the command line's --meta, given once
        source = source[0]
        if isinstance(source, FoldRuns):
            return source
    if isinstance(source, (str, os.PathLike)) and not (isinstance(source, str) and source in EMBEDDED
                                                       and not Path(source).exists()):
        runs = read_fold_runs(source, columns=columns)
        if runs is not None:
            return runs
    return FoldRuns.from_meta(load_meta(source), columns=columns)


def fold_runs_of(meta, *, columns: Sequence[str] | None = None) -> FoldRuns:
    """``meta`` as :class:`FoldRuns`: itself, or the arrays of a MetaDataset (:meth:`FoldRuns.from_meta`)."""
    if isinstance(meta, FoldRuns):
        return meta
    if isinstance(meta, MetaDataset):
        return FoldRuns.from_meta(meta, columns=columns)
    return load_fold_runs(meta, columns=columns)
