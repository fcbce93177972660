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

import io
import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from .cells import cell_means, dictionary_codes
from .dataset import (COST_KINDS, OPTIONAL_RUN_COLUMNS, RUN_COLUMNS, MetaDataset, _PARQUET_KEY, _SOURCE_KEY,
                      _validate_datasets)
from .errors import InputError, ValidationError
from .run_checks import (STATUSES, check_ids_present, check_run_values, check_unique_runs, index_column_error,
                         status_error)

__all__ = ["FoldRuns", "read_fold_runs", "load_fold_runs", "fold_runs_of"]

logger = logging.getLogger(__name__)

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
        cell = self.dataset.astype(np.int64) * n_l + self.learner
        means = cell_means(cell[self.ok], values[self.ok], n_d * n_l)
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


def _read(pf, name: str, *, dictionary: bool = False):
    try:  # the file was opened with the string columns read as dictionaries
        return pf.read(columns=[name], use_pandas_metadata=False).column(0)
    except Exception as exc:  # pyarrow raises many types; the general loader words the error
        raise _NotHere(str(exc)) from exc


def _ids(pf, name: str) -> tuple[np.ndarray, list]:
    """(codes, sorted ids) of a string column; its missing values are an error (as the general loader says)."""
    import pyarrow as pa

    chunked = _read(pf, name, dictionary=True)
    if not pa.types.is_dictionary(chunked.type):
        raise _NotHere(f"{name} is not read as a dictionary")
    if chunked.null_count:
        check_ids_present(name, np.asarray(chunked.is_null().to_numpy(zero_copy_only=False)))
    return dictionary_codes(chunked)


def _integers(pf, name: str) -> np.ndarray:
    """``repeat`` or ``fold``: integers >= 0."""
    chunked = _read(pf, name)
    if chunked.null_count:
        raise _NotHere(f"{name} has missing values")  # the general loader reads them as floats and names them
    values = chunked.to_numpy().astype(np.int64, copy=False)
    bad = np.flatnonzero(values < 0)
    if len(bad):
        raise index_column_error(name, bad, values[bad[:5]].tolist())
    return values


def _numbers(pf, name: str) -> np.ndarray:
    return _read(pf, name).to_numpy(zero_copy_only=False).astype(float, copy=False)


def _status(pf, n: int) -> np.ndarray:
    """The success mask of the ``status`` column; an unknown status is an error."""
    chunked = _read(pf, "status", dictionary=True)
    if chunked.null_count:
        raise _NotHere("status has missing values")  # the general loader names them as strings
    chunked = chunked.unify_dictionaries() if chunked.num_chunks > 1 else chunked
    values = [str(v) for v in chunked.chunk(0).dictionary.to_pylist()] if chunked.num_chunks else []
    indices = (np.concatenate([c.indices.to_numpy(zero_copy_only=False) for c in chunked.chunks])
               if chunked.num_chunks else np.zeros(0, dtype=np.int32))
    unknown = [i for i, v in enumerate(values) if v not in STATUSES]
    if unknown:
        bad = np.flatnonzero(np.isin(indices, unknown))
        if len(bad):
            raise status_error(bad, (values[i] for i in set(indices[bad].tolist())))
    ok = [i for i, v in enumerate(values) if v == "ok"]
    return indices == ok[0] if ok else np.zeros(n, dtype=bool)


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

    from .allocator import arrow_pool

    path = Path(path)
    if path.suffix.lower() != ".parquet" or not path.is_file():
        return None
    arrow_pool()
    try:
        schema = pq.read_schema(path)
        pf = pq.ParquetFile(path, read_dictionary=[c for c in ("dataset", "learner", "status") if c in schema.names])
        meta = dict(schema.metadata or {})
        pandas_meta = json.loads(meta.get(b"pandas", b"{}"))
        datasets = None
        if _PARQUET_KEY in meta:
            datasets = pd.read_json(io.StringIO(meta[_PARQUET_KEY].decode()), orient="split", dtype={"dataset": str})
        stored_source = meta.get(_SOURCE_KEY, b"").decode()
        return _read_checked(pf, schema, pandas_meta, datasets, columns,
                             source if source is not None else (stored_source or f"file:{path.name}"))
    except _NotHere as exc:
        logger.debug("%s: read by the general loader (%s)", path, exc)
        return None
    except ValidationError:
        raise
    except Exception as exc:  # an unreadable file: the general loader words the error
        logger.debug("%s: read by the general loader (%s: %s)", path, type(exc).__name__, exc)
        return None


def _read_checked(pf, schema, pandas_meta: dict, datasets, keep, source: str) -> FoldRuns:
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
    dataset = _ids(pf, "dataset")
    learner = _ids(pf, "learner")
    repeat, fold = _integers(pf, "repeat"), _integers(pf, "fold")
    ok = _status(pf, n) if "status" in names else np.ones(n, dtype=bool)
    values = {c: _numbers(pf, c) for c in _NUMERIC if c in names}
    if "fit_time" not in values:
        values["fit_time"] = np.full(n, np.nan)
    if "predict_time" not in values:
        values["predict_time"] = np.full(n, 0.0 if (~np.isnan(values["fit_time"])).any() else np.nan)
    check_run_values(values, ok)
    check_unique_runs(dataset, learner, repeat, fold)
    _validate_datasets(datasets, dataset[1])
    kept = {c: v for c, v in values.items() if keep is None or c in keep}
    return FoldRuns(dataset_ids=tuple(dataset[1]), learner_ids=tuple(learner[1]), dataset=dataset[0],
                    learner=learner[0], repeat=repeat, fold=fold, ok=ok, columns=kept, source=source)


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
