"""The MetaDataset: prior runs of learners on datasets.

A :class:`MetaDataset` is one tidy table of *runs* (one row per dataset, learner,
repeat and fold) plus one table of *datasets* (one row per dataset, with simple
meta-features).  Rows that share ``(dataset, repeat, fold)`` are paired: every
learner saw the same train/test split.  Sources with aggregated values only use
``repeat = fold = 0``.

Missing cells (a learner never run on a dataset) are normal; every accessor
returns ``NaN`` for them instead of dropping rows silently.
"""

from __future__ import annotations

import io
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from .cells import cell_means, read_parquet_runs, sorted_codes
from .errors import InputError, ValidationError
from .io import PARQUET_DATASETS_KEY, atomic_path
from .task import REGRESSION_RUN_COLUMNS, check_task_column, score_from_r2
from .run_checks import (MAX_LISTED as _MAX_LISTED, STATUSES, check_ids_present, check_run_values, check_unique_runs,
                         fmt_rows as _fmt_rows, index_column_error, numeric_error, status_error)

__all__ = [
    "check_metadata_target",
    "RUN_COLUMNS",
    "OPTIONAL_RUN_COLUMNS",
    "DATASET_COLUMNS",
    "STATUSES",
    "COST_KINDS",
    "MetaDataset",
    "MetaDescription",
    "PairedScores",
]

#: Required columns of the runs table, in their canonical order.
RUN_COLUMNS = ("dataset", "learner", "repeat", "fold", "accuracy", "fit_time", "predict_time", "status")
#: Optional metric columns of the runs table.
OPTIONAL_RUN_COLUMNS = ("balanced_accuracy", "auc", "log_loss", "model_bytes", "message", "f1_macro", "r2", "rmse",
                        "mae")
#: Required columns of the datasets table.
DATASET_COLUMNS = ("dataset", "name", "source", "n_instances", "n_features", "n_classes", "majority_fraction")
#: Kinds of cost understood by :meth:`MetaDataset.cost`.
COST_KINDS = ("fit_time", "fit_predict_time", "model_bytes")

_PARQUET_KEY = PARQUET_DATASETS_KEY
_SOURCE_KEY = b"algorank.source"


@dataclass(frozen=True)
class MetaDescription:
    """Summary counts of a :class:`MetaDataset` (what ``algorank info`` prints).

    Attributes
    ----------
    datasets, learners : int
        Number of distinct datasets and learners in the runs table.
    cells : int
        Number of (dataset, learner) pairs with at least one successful run.
    cells_with_time : int
        Those of ``cells`` with a ``fit_time`` on at least one successful run
        (``cells - cells_with_time`` have an accuracy but no time).
    runs : int
        Number of rows in the runs table.
    missing_fraction : float
        ``1 - cells / (datasets * learners)``.
    failed_runs : int
        Rows whose status is not ``ok``.
    repeats_per_cell_median : float
        Median number of successful evaluations per non-empty cell.
    fit_time_min, fit_time_median, fit_time_max : float
        Range of the per-run fit times in seconds (successful runs).
    source : str
        Where the meta-data came from.
    runs_with_time : int
        Successful runs with a ``fit_time``.
    task : str
        ``"classification"`` or ``"regression"`` (:attr:`MetaDataset.task`).

    Examples
    --------
    >>> import algorank
    >>> d = algorank.load_meta("uci").describe()
    >>> d.datasets, d.learners
    (63, 20)
    """

    datasets: int
    learners: int
    cells: int
    runs: int
    missing_fraction: float
    failed_runs: int
    repeats_per_cell_median: float
    fit_time_min: float
    fit_time_median: float
    fit_time_max: float
    source: str
    cells_with_time: int = 0
    runs_with_time: int = 0
    task: str = "classification"

    @property
    def cells_without_time(self) -> int:
        """Cells with an accuracy but no fit time."""
        return self.cells - self.cells_with_time

    def to_dict(self) -> dict:
        """Return the description as a JSON-serialisable dict (with ``cells_without_time``)."""
        d = asdict(self)
        d["cells_without_time"] = self.cells_without_time
        return d

    def to_text(self) -> str:
        """What ``algorank info`` prints: one line per count."""
        from algorank.metadata.text import escape, format_seconds as fs

        only = ("  (accuracy only: rank --p 0, benchmark --axis tests, multitest --cost none or a learner order)"
                if self.cells_with_time == 0 else "")
        fit = (f"{fs(self.fit_time_min)} .. {fs(self.fit_time_max)} (median {fs(self.fit_time_median)})"
               if self.runs_with_time else "none recorded")
        task = ("regression (score = max(R², 0) in the accuracy column)" if self.task == "regression"
                else self.task)
        rows = [("source", escape(self.source)), ("task", task), ("datasets", self.datasets),
                ("learners", self.learners),
                ("cells", f"{self.cells} of {self.datasets * self.learners} (missing {self.missing_fraction:.1%})"),
                ("  with time", self.cells_with_time), ("  without time", f"{self.cells_without_time}{only}"),
                ("runs", f"{self.runs} ({self.failed_runs} failed; median {self.repeats_per_cell_median:g} per cell)"),
                ("fit time", fit)]
        return "\n".join(f"{k:<18}{v}" for k, v in rows)


@dataclass(frozen=True)
class PairedScores:
    """Per-evaluation scores of several learners on one dataset, aligned by split.

    Attributes
    ----------
    dataset : str
        Dataset id.
    metric : str
        Name of the metric in ``values``.
    learners : tuple of str
        Row labels of ``values``.
    evaluations : tuple of (int, int)
        Column labels of ``values``: ``(repeat, fold)``.
    values : ndarray of shape (n_learners, n_evaluations)
        Scores; only evaluations that every listed learner has are kept.
    dropped : int
        Evaluations dropped because some learner lacked them.
    """

    dataset: str
    metric: str
    learners: tuple
    evaluations: tuple
    values: np.ndarray = field(repr=False)
    dropped: int = 0


def _known_ids(ids: Iterable, known, kind: str) -> list[str]:
    """``ids`` as strings; an id not among ``known`` is an error naming the ``kind`` of id."""
    ids = [str(i) for i in ids]
    unknown = sorted(set(ids) - set(known))
    if unknown:
        raise InputError(f"unknown {kind} id(s): {', '.join(unknown[:_MAX_LISTED])}")
    return ids


def _unique_columns(frame: pd.DataFrame, what: str) -> None:
    """A column name given twice is an error: a lookup by name would get two columns."""
    if not frame.columns.is_unique:
        from .textfile import check_unique_names

        try:
            check_unique_names(list(frame.columns), what=what)
        except InputError as exc:
            raise ValidationError(str(exc)) from None


def _validate_runs(runs: pd.DataFrame, codes: dict | None = None) -> tuple[pd.DataFrame, dict]:
    """The validated runs table and the :func:`~algorank.metadata.cells.sorted_codes` of its dataset and
    learner columns (``codes``: those already known, e.g. read with the table)."""
    if not isinstance(runs, pd.DataFrame):
        raise ValidationError(f"runs must be a pandas DataFrame, got {type(runs).__name__}")
    _unique_columns(runs, "runs table")
    missing = [c for c in RUN_COLUMNS if c not in runs.columns]
    # predict_time and status have natural defaults; the others are required.
    runs = runs.copy(deep=False)  # copy-on-write: the caller's frame is never changed, and nothing is copied
    if "fit_time" in missing:
        # accuracy-only meta-data (ASlib scenarios, published result tables): no times at all
        runs["fit_time"] = np.nan
        missing.remove("fit_time")
    if "predict_time" in missing:
        runs["predict_time"] = 0.0 if runs["fit_time"].notna().any() else np.nan
        missing.remove("predict_time")
    if "status" in missing:
        runs["status"] = "ok"
        missing.remove("status")
    if missing:
        raise ValidationError(f"runs table is missing required column(s): {', '.join(missing)}")
    runs = runs.reset_index(drop=True)
    for col in ("dataset", "learner"):
        check_ids_present(col, runs[col].isna().to_numpy())
        runs[col] = runs[col].astype(str)
    for col in ("repeat", "fold"):
        if runs[col].dtype == np.int64:
            values = runs[col]  # plain integers (what Parquet and save give): only the sign to check
            bad = np.flatnonzero((values < 0).to_numpy())
        else:
            values = pd.to_numeric(runs[col], errors="coerce")
            bad = np.flatnonzero((values.isna() | (values < 0) | (values != np.floor(values))).to_numpy())
        if len(bad):
            raise index_column_error(col, bad, runs[col].iloc[bad[:_MAX_LISTED]].tolist())
        runs[col] = values.astype(np.int64)
    status = runs["status"].astype(str)
    bad = np.flatnonzero(~status.isin(STATUSES).to_numpy())
    if len(bad):
        raise status_error(bad, status.iloc[bad])
    runs["status"] = status
    ok = (status == "ok").to_numpy()
    numeric_cols = ["accuracy", "fit_time", "predict_time"] + [
        c for c in OPTIONAL_RUN_COLUMNS if c in runs.columns and c != "message"
    ]
    for col in numeric_cols:
        if runs[col].dtype == np.float64:
            continue  # already floats: nothing to convert, nothing non-numeric
        values = pd.to_numeric(runs[col], errors="coerce")
        bad = np.flatnonzero((values.isna() & runs[col].notna()).to_numpy())
        if len(bad):
            raise numeric_error(col, bad)
        runs[col] = values.astype(float)
    # Missing times on successful runs are allowed (some sources have none) but not negative.
    check_run_values({c: runs[c].to_numpy() for c in numeric_cols}, ok)
    codes = dict(codes or {})
    for col in ("dataset", "learner"):
        if col not in codes:
            codes[col] = sorted_codes(runs[col])
    check_unique_runs(codes["dataset"], codes["learner"], runs["repeat"].to_numpy(), runs["fold"].to_numpy())
    ordered = list(RUN_COLUMNS) + [c for c in runs.columns if c not in RUN_COLUMNS]
    return runs[ordered], codes


def _task_of(datasets) -> str:
    """The one task of a datasets table as given (before validation): its ``task`` column, classification without it."""
    if isinstance(datasets, pd.DataFrame) and "task" in datasets.columns:
        ids = datasets["dataset"] if "dataset" in datasets.columns else range(len(datasets))
        return check_task_column(ids.tolist() if hasattr(ids, "tolist") else list(ids), datasets["task"].tolist())
    return "classification"


def _regression_runs(runs):
    """Regression runs: ``accuracy`` derived from ``r2`` (``max(r2, 0)``) when the column is absent; else checked."""
    if not isinstance(runs, pd.DataFrame):
        return runs
    if "r2" in runs.columns:  # before the score is derived from it (a score above 1 would hide the cause)
        r2 = pd.to_numeric(runs["r2"], errors="coerce").to_numpy(dtype=float)
        bad = np.flatnonzero(r2 > 1.0 + 1e-12)
        if len(bad):
            raise ValidationError(f"column 'r2' must be at most 1; bad values {r2[bad[:_MAX_LISTED]].tolist()} in "
                                  f"{_fmt_rows(bad)}")
    if "accuracy" not in runs.columns:
        if "r2" not in runs.columns:
            raise ValidationError("regression runs need an 'r2' or an 'accuracy' column (the score, max(R², 0))")
        runs = runs.copy(deep=False)
        runs["accuracy"] = score_from_r2(pd.to_numeric(runs["r2"], errors="coerce").to_numpy(dtype=float))
    return runs


def _check_regression_values(runs: pd.DataFrame) -> None:
    """The score equal to ``max(R², 0)`` where both are known (R² at most 1: :func:`_regression_runs`; errors
    finite and >= 0: run_checks)."""
    if "r2" not in runs.columns:
        return
    r2 = runs["r2"].to_numpy(dtype=float)
    acc = runs["accuracy"].to_numpy(dtype=float)
    both = ~np.isnan(r2) & ~np.isnan(acc)
    bad = np.flatnonzero(both & (np.abs(acc - np.maximum(r2, 0.0)) > 1e-9))
    if len(bad):
        raise ValidationError(f"regression runs: column 'accuracy' must hold the score max(r2, 0); it differs in "
                              f"{_fmt_rows(bad)}")


def _validate_datasets(datasets: pd.DataFrame | None, ids: Sequence[str], task: str = "classification") -> pd.DataFrame:
    if datasets is None:
        datasets = pd.DataFrame({"dataset": list(ids)})
    if not isinstance(datasets, pd.DataFrame):
        raise ValidationError(f"datasets must be a pandas DataFrame, got {type(datasets).__name__}")
    _unique_columns(datasets, "datasets table")
    if "dataset" not in datasets.columns:
        raise ValidationError("datasets table is missing required column: dataset")
    datasets = datasets.copy().reset_index(drop=True)
    datasets["dataset"] = datasets["dataset"].astype(str)
    dup = datasets["dataset"].duplicated(keep=False)
    if dup.any():
        raise ValidationError(
            f"datasets table has duplicated dataset ids {sorted(set(datasets.loc[dup, 'dataset']))[:_MAX_LISTED]}"
        )
    known = set(datasets["dataset"])
    extra = [d for d in ids if d not in known]
    if extra:
        datasets = pd.concat([datasets, pd.DataFrame({"dataset": extra})], ignore_index=True)
    for col in DATASET_COLUMNS:
        if col not in datasets.columns:
            datasets[col] = datasets["dataset"] if col == "name" else (
                "" if col == "source" else np.nan
            )
    name = datasets["name"].astype(object)
    datasets["name"] = name.where(name.notna(), datasets["dataset"]).astype(str)
    source = datasets["source"].astype(object)
    datasets["source"] = source.where(source.notna(), "").astype(str)
    for col in ("n_instances", "n_features", "n_classes", "majority_fraction"):
        datasets[col] = pd.to_numeric(datasets[col], errors="coerce").astype(float)
    if "task" in datasets.columns or task != "classification":
        datasets["task"] = task  # one task per meta-dataset (checked before): rows added for runs get it too
    if task == "regression":  # the baseline score: predicting the mean scores 0
        mf = datasets["majority_fraction"]
        bad = datasets.index[mf.notna() & (mf != 0.0)]
        if len(bad):
            raise ValidationError(
                f"column 'majority_fraction' of a regression datasets table holds the baseline score, 0 (predicting "
                f"the mean); bad values {mf[bad[:_MAX_LISTED]].tolist()} in {_fmt_rows(bad)}")
        datasets["majority_fraction"] = mf.fillna(0.0)
    mf = datasets["majority_fraction"]
    bad = datasets.index[(mf < 0) | (mf > 1)]
    if len(bad):
        raise ValidationError(
            f"column 'majority_fraction' of the datasets table must lie in [0, 1]; bad values "
            f"{mf[bad[:_MAX_LISTED]].tolist()} in {_fmt_rows(bad)}"
        )
    ordered = list(DATASET_COLUMNS) + [c for c in datasets.columns if c not in DATASET_COLUMNS]
    return datasets[ordered].sort_values("dataset", kind="stable").reset_index(drop=True)


def _read_table_csv(path: Path, dtype: dict, *, what: str) -> pd.DataFrame:
    """A runs or datasets table from CSV, read by column name: the encoding from the file's bytes, a
    repeated column name an error, and columns without a name (the row index pandas writes unless told
    ``index=False``) left out."""
    from .textfile import check_unique_names, decode_error, header_names, text_encoding

    encoding = text_encoding(path, what=what)
    try:
        names = header_names(path, sep=",", encoding=encoding)
        check_unique_names(names, what=f"{what} {str(path)!r}")
        # index_col=False: rows with one field more than the header (a trailing comma) never shift the
        # columns onto an index
        frame = pd.read_csv(path, dtype=dtype, encoding=encoding, index_col=False)
    except UnicodeError as exc:
        raise decode_error(path, exc, encoding, what=what) from None
    unnamed = [c for c, n in zip(frame.columns, names) if not n.strip()]
    return frame.drop(columns=unnamed) if unnamed else frame


class MetaDataset:
    """Prior runs of learners on datasets, validated on construction.

    Parameters
    ----------
    runs : DataFrame
        One row per ``(dataset, learner, repeat, fold)``; columns
        :data:`RUN_COLUMNS` (``status`` defaults to ``"ok"`` when absent; a
        missing ``fit_time`` column makes *accuracy-only* meta-data, every time
        NaN; ``predict_time`` defaults to 0, or NaN without fit times) plus any of
        :data:`OPTIONAL_RUN_COLUMNS`.  A run whose time is missing still counts
        as a result: everything that needs no time (average ranking with P = 0,
        the loss curve by number of tests, Multi2Test with a user cost order,
        the statistical tests) uses it; what needs time says so with an
        :class:`~algorank.metadata.errors.InputError` naming the column.
    datasets : DataFrame, optional
        One row per dataset with :data:`DATASET_COLUMNS` plus meta-features.
        Datasets that have runs but no row here get a row of NaN.
    source : str, optional
        Free-text provenance (e.g. ``"lcdb 0.1.0 (embedded snapshot)"``).

    Raises
    ------
    ValidationError
        Naming the column, the rule and the offending rows/values.

    Examples
    --------
    >>> import algorank
    >>> meta = algorank.load_meta("uci")
    >>> acc = meta.matrix("accuracy")  # datasets x learners, NaN where a learner has no result
    >>> acc.shape
    (63, 20)
    >>> meta.subset(learners=meta.learner_ids[:3]).describe().learners
    3
    """

    def __init__(self, runs: pd.DataFrame, datasets: pd.DataFrame | None = None, *, source: str = "") -> None:
        self._setup(runs, datasets, source, None)

    def _setup(self, runs, datasets, source, codes) -> None:
        task = _task_of(datasets)
        if task == "regression":
            runs = _regression_runs(runs)
        elif isinstance(runs, pd.DataFrame) and "accuracy" not in runs.columns and "r2" in runs.columns:
            raise ValidationError("runs table is missing required column: accuracy (runs with an 'r2' column are "
                                  "regression runs: give the datasets table a column 'task' holding 'regression')")
        runs, codes = _validate_runs(runs, codes)
        if runs.empty:
            raise ValidationError("runs table is empty: a MetaDataset needs at least one run")
        if task == "regression":
            _check_regression_values(runs)
        self._runs = runs
        self._cache: dict = {"codes": codes}
        self._datasets = _validate_datasets(datasets, self.dataset_ids, task)
        self.source = str(source)

    # ------------------------------------------------------------------ basics
    @property
    def runs(self) -> pd.DataFrame:
        """The runs table (a copy is not made: do not modify it in place)."""
        return self._runs

    @property
    def datasets(self) -> pd.DataFrame:
        """The datasets table, one row per dataset id (sorted)."""
        return self._datasets

    @property
    def dataset_ids(self) -> list[str]:
        """Sorted ids of the datasets that have runs."""
        return list(self._codes("dataset")[1])

    @property
    def learner_ids(self) -> list[str]:
        """Sorted ids of the learners that have runs."""
        return list(self._codes("learner")[1])

    def id_codes(self, column: str) -> tuple[np.ndarray, list]:
        """``(codes, ids)`` of the ``dataset`` or ``learner`` column: each run's position in
        :attr:`dataset_ids` or :attr:`learner_ids` (int64), and those ids (do not modify them)."""
        if column not in ("dataset", "learner"):
            raise InputError(f"id_codes: column must be dataset or learner; got {column!r}")
        return self._codes(column)

    def _codes(self, column: str) -> tuple[np.ndarray, list]:
        """:func:`~algorank.metadata.cells.sorted_codes` of the ``dataset`` or ``learner`` column (cached)."""
        codes = self._cache.setdefault("codes", {})
        if column not in codes:
            codes[column] = sorted_codes(self._runs[column])
        return codes[column]

    @property
    def task(self) -> str:
        """``"classification"`` or ``"regression"``: the task of every dataset (the datasets table's ``task``
        column; classification without it).  For regression the ``accuracy`` column holds the score
        ``max(R², 0)``."""
        ds = self._datasets
        return str(ds["task"].iloc[0]) if "task" in ds.columns and len(ds) else "classification"

    @property
    def metrics(self) -> list[str]:
        """Metric columns present in the runs table."""
        extra = REGRESSION_RUN_COLUMNS if self.task == "regression" else ("balanced_accuracy", "auc", "log_loss")
        return ["accuracy"] + [c for c in extra if c in self._runs.columns]

    def __len__(self) -> int:
        return len(self._runs)

    def __repr__(self) -> str:
        return (
            f"MetaDataset({len(self.dataset_ids)} datasets, {len(self.learner_ids)} learners, "
            f"{len(self._runs)} runs, source={self.source!r})"
        )

    def dataset_info(self, dataset: str) -> dict:
        """Return the datasets-table row of ``dataset`` as a dict (NaN for unknown values)."""
        row = self._datasets.loc[self._datasets["dataset"] == str(dataset)]
        if row.empty:
            raise InputError(f"unknown dataset id {dataset!r}")
        return row.iloc[0].to_dict()

    # ------------------------------------------------------------------ views
    def _ok_runs(self) -> pd.DataFrame:
        return self._runs[self._runs["status"] == "ok"]

    def matrix(self, metric: str = "accuracy", agg: str = "mean") -> pd.DataFrame:
        """Datasets x learners table of ``metric`` aggregated over evaluations.

        Parameters
        ----------
        metric : str
            A run column: ``accuracy``, ``fit_time``, ``predict_time``,
            ``fit_predict_time`` (the sum), ``model_bytes``, or another metric.
        agg : {"mean", "median", "min", "max", "std", "count"}
            Aggregation over the successful evaluations of a cell.

        Returns
        -------
        DataFrame
            Index: every dataset id (sorted), columns: every learner id (sorted);
            NaN where a learner has no successful run on a dataset.
        """
        if agg not in ("mean", "median", "min", "max", "std", "count"):
            raise InputError(f"agg must be one of mean, median, min, max, std, count; got {agg!r}")
        key = (metric, agg)
        if key in self._cache:
            return self._cache[key].copy()
        runs = self._runs if agg == "mean" else self._ok_runs()
        if metric == "fit_predict_time":
            values = runs["fit_time"] + runs["predict_time"].fillna(0.0)
        elif metric in runs.columns and metric not in ("dataset", "learner", "status", "message"):
            values = runs[metric]
        else:
            raise InputError(f"unknown metric {metric!r}; available: {', '.join(self._numeric_columns())}")
        if agg == "mean":  # on integer cell codes, identical to the pandas groupby below (metadata.cells)
            (dc, ds), (lc, ls) = self._codes("dataset"), self._codes("learner")
            ok = (runs["status"] == "ok").to_numpy()
            means = cell_means((dc * len(ls) + lc)[ok], values.to_numpy(dtype=float)[ok], len(ds) * len(ls))
            table = pd.DataFrame(means.reshape(len(ds), len(ls)), index=pd.Index(ds, name="dataset"),
                                 columns=pd.Index(ls, name="learner"))
        else:
            frame = pd.DataFrame({"dataset": runs["dataset"], "learner": runs["learner"], "v": values.astype(float)})
            table = frame.groupby(["dataset", "learner"], sort=True)["v"].agg(agg).unstack("learner")
            table = table.reindex(index=self.dataset_ids, columns=self.learner_ids)
            table.index.name, table.columns.name = "dataset", "learner"
        self._cache[key] = table
        return table.copy()

    def _numeric_columns(self) -> list[str]:
        cols = [c for c in self._runs.columns if c not in ("dataset", "learner", "status", "message", "repeat", "fold")]
        return cols + ["fit_predict_time"]

    def cost(self, kind: str = "fit_time", agg: str = "mean") -> pd.DataFrame:
        """Datasets x learners cost table (lower is cheaper).

        Parameters
        ----------
        kind : {"fit_time", "fit_predict_time", "model_bytes"}
            Fit time, fit plus predict time (seconds), or pickled model size.
        agg : str
            As in :meth:`matrix`.
        """
        if kind not in COST_KINDS:
            raise InputError(f"cost kind must be one of {', '.join(COST_KINDS)}; got {kind!r}")
        if kind == "model_bytes" and "model_bytes" not in self._runs.columns:
            raise InputError("cost kind 'model_bytes' needs a model_bytes column, which this meta-data lacks")
        return self.matrix(kind, agg)

    def paired(self, dataset: str, metric: str = "accuracy", *, learners: Sequence[str] | None = None) -> PairedScores:
        """Per-evaluation scores of ``learners`` on ``dataset``, aligned by (repeat, fold).

        Only the evaluations that every requested learner has (successful) are
        kept; the number dropped is reported in the result.

        Raises
        ------
        InputError
            For an unknown dataset or learner, or a learner with no run on ``dataset``.
        """
        dataset = str(dataset)
        runs = self._ok_runs()
        sub = runs[runs["dataset"] == dataset]
        if sub.empty:
            raise InputError(f"dataset {dataset!r} has no successful runs")
        present = sorted(sub["learner"].unique())
        learners = present if learners is None else [str(l) for l in learners]
        absent = [l for l in learners if l not in present]
        if absent:
            raise InputError(f"learner(s) {', '.join(absent)} have no successful run on dataset {dataset!r}")
        if metric not in sub.columns:
            raise InputError(f"unknown metric {metric!r}")
        table = sub[sub["learner"].isin(learners)].pivot(index=["repeat", "fold"], columns="learner", values=metric)
        table = table.reindex(columns=learners)
        complete = table.dropna(how="any")
        return PairedScores(
            dataset=dataset,
            metric=metric,
            learners=tuple(learners),
            evaluations=tuple((int(r), int(f)) for r, f in complete.index),
            values=complete.to_numpy(dtype=float).T.copy(),
            dropped=int(len(table) - len(complete)),
        )

    # ------------------------------------------------------------------ subsets
    def subset(self, *, datasets: Iterable[str] | None = None, learners: Iterable[str] | None = None) -> "MetaDataset":
        """Keep only the given datasets and/or learners (unknown ids are an error)."""
        runs = self._runs
        ds = self._datasets
        if datasets is not None:
            datasets = _known_ids(datasets, self.dataset_ids, "dataset")
            runs = runs[runs["dataset"].isin(datasets)]
            ds = ds[ds["dataset"].isin(datasets)]
        if learners is not None:
            runs = runs[runs["learner"].isin(_known_ids(learners, self.learner_ids, "learner"))]
            ds = ds[ds["dataset"].isin(runs["dataset"].unique())]
        if runs.empty:
            raise InputError("the selection leaves no runs")
        return MetaDataset._of_valid_rows(runs, ds, source=self.source)

    @classmethod
    def _of_valid_rows(cls, runs: pd.DataFrame, datasets: pd.DataFrame, *, source: str) -> "MetaDataset":
        """A MetaDataset of rows taken from validated tables (a selection stays valid: not validated again,
        which on 1.5 million runs takes seconds of a live budget)."""
        out = cls.__new__(cls)
        out._runs = runs.reset_index(drop=True)
        out._datasets = datasets.reset_index(drop=True)
        out.source = str(source)
        out._cache = {}
        return out

    def exclude(self, *, datasets: Iterable[str] | None = None, learners: Iterable[str] | None = None) -> "MetaDataset":
        """Drop the given datasets and/or learners (unknown ids are an error)."""
        keep_d = None
        keep_l = None
        if datasets is not None:
            datasets = set(_known_ids(datasets, self.dataset_ids, "dataset"))
            keep_d = [d for d in self.dataset_ids if d not in datasets]
        if learners is not None:
            learners = set(_known_ids(learners, self.learner_ids, "learner"))
            keep_l = [l for l in self.learner_ids if l not in learners]
        return self.subset(datasets=keep_d, learners=keep_l)

    @classmethod
    def concat(cls, metas: Sequence["MetaDataset"]) -> "MetaDataset":
        """One meta-dataset from several with disjoint dataset ids (e.g. the embedded ``uci`` set plus
        the ``runs.csv`` of ``algorank evaluate`` on your own datasets).

        Runs keep their own columns (a metric one source lacks is NaN there, ``message`` is
        empty); the datasets tables are stacked; the sources are joined with ``" + "``.

        Raises
        ------
        InputError
            No meta-data given, or a dataset id occurs in more than one of them (exclude it
            from all but one first).
        """
        metas = list(metas)
        if not metas:
            raise InputError("concat needs at least one MetaDataset")
        if len(metas) == 1:
            return metas[0]
        seen: dict = {}
        for i, m in enumerate(metas):
            for d in m.dataset_ids:
                seen.setdefault(d, []).append(i)
        shared = sorted(d for d, where in seen.items() if len(where) > 1)
        if shared:
            raise InputError(
                f"dataset id(s) {', '.join(shared[:_MAX_LISTED])}{' ...' if len(shared) > _MAX_LISTED else ''} "
                f"occur in more than one meta-data source; exclude them from all but one"
            )
        runs = pd.concat([m.runs for m in metas], ignore_index=True, sort=False)
        if "message" in runs.columns:
            runs["message"] = runs["message"].fillna("")
        datasets = pd.concat([m.datasets for m in metas], ignore_index=True, sort=False)
        return cls(runs, datasets, source=" + ".join(m.source or "?" for m in metas))

    # ------------------------------------------------------------------ summary
    def describe(self) -> MetaDescription:
        """Counts, missing-cell fraction and fit-time range."""
        ok = self._ok_runs()
        n_d, n_l = len(self.dataset_ids), len(self.learner_ids)
        per_cell = ok.groupby(["dataset", "learner"]).size()
        timed = ok[ok["fit_time"].notna()]
        times = timed["fit_time"]
        return MetaDescription(
            datasets=n_d,
            learners=n_l,
            cells=int(len(per_cell)),
            runs=int(len(self._runs)),
            missing_fraction=float(1.0 - len(per_cell) / (n_d * n_l)),
            failed_runs=int((self._runs["status"] != "ok").sum()),
            repeats_per_cell_median=float(per_cell.median()) if len(per_cell) else 0.0,
            fit_time_min=float(times.min()) if len(times) else float("nan"),
            fit_time_median=float(times.median()) if len(times) else float("nan"),
            fit_time_max=float(times.max()) if len(times) else float("nan"),
            source=self.source,
            cells_with_time=int(timed.groupby(["dataset", "learner"]).ngroups),
            runs_with_time=int(len(timed)),
            task=self.task,
        )

    # ------------------------------------------------------------------ persistence
    def save(self, path: str | os.PathLike) -> Path:
        """Save to Parquet (``.parquet``) or CSV (``.csv``), atomically.

        Parquet keeps both tables in one file (the datasets table travels in the
        file's key-value metadata).  CSV writes the runs to ``path`` and the
        datasets table to a sidecar ``<stem>.datasets.csv``.
        """
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = Path(path)
        suffix = path.suffix.lower()
        if suffix == ".parquet":
            table = pa.Table.from_pandas(self._runs, preserve_index=False)
            meta = dict(table.schema.metadata or {})
            meta[_PARQUET_KEY] = self._datasets.to_json(orient="split", index=False, double_precision=15).encode()
            meta[_SOURCE_KEY] = self.source.encode()
            table = table.replace_schema_metadata(meta)
            with atomic_path(path) as tmp:
                pq.write_table(table, tmp, compression="zstd")
        elif suffix == ".csv":
            side = path.with_name(path.stem + ".datasets.csv")
            with atomic_path(path) as tmp, atomic_path(side) as tmp_side:
                self._runs.to_csv(tmp, index=False, float_format="%.17g")
                self._datasets.to_csv(tmp_side, index=False, float_format="%.17g")
        else:
            raise InputError(f"cannot save meta-data to {str(path)!r}: use a .parquet or .csv file name")
        return path

    @classmethod
    def _with_codes(cls, runs: pd.DataFrame, datasets, *, source: str, codes: dict) -> "MetaDataset":
        """``cls(runs, datasets, source=source)`` given the dataset and learner codes of ``runs`` (read with
        the table: :func:`~algorank.metadata.cells.read_parquet_runs`)."""
        out = cls.__new__(cls)
        out._setup(runs, datasets, source, codes)
        return out

    @classmethod
    def load(cls, path: str | os.PathLike, *, source: str | None = None) -> "MetaDataset":
        """Load meta-data saved by :meth:`save` (Parquet, or CSV in the runs schema).

        Raises
        ------
        InputError
            When the file does not exist, cannot be read, or is not valid meta-data.
        """
        path = Path(path)
        if path.is_dir():
            raise InputError(f"meta-data path is a folder, not a file: {path} (give the runs file inside it, "
                             f"e.g. {path / 'runs.csv'})")
        if not path.is_file():
            raise InputError(f"meta-data file not found: {path}")
        suffix = path.suffix.lower()
        datasets = None
        codes: dict = {}
        stored_source = ""
        try:
            if suffix == ".parquet":
                runs, codes, meta = read_parquet_runs(path, index_names=RUN_COLUMNS + OPTIONAL_RUN_COLUMNS)
                if _PARQUET_KEY in meta:
                    datasets = pd.read_json(
                        io.StringIO(meta[_PARQUET_KEY].decode()), orient="split", dtype={"dataset": str}
                    )
                stored_source = meta.get(_SOURCE_KEY, b"").decode()
            elif suffix == ".csv":
                runs = _read_table_csv(path, {"dataset": str, "learner": str}, what="meta-data file")
                side = path.with_name(path.stem + ".datasets.csv")
                if side.is_file():
                    datasets = _read_table_csv(side, {"dataset": str}, what="datasets file")
            else:
                raise InputError(f"cannot read meta-data from {str(path)!r}: expected a .parquet or .csv file")
        except InputError:
            raise
        except Exception as exc:  # pyarrow/pandas raise many types for corrupt files
            raise InputError(f"cannot read meta-data file {path}: {type(exc).__name__}: {exc}".splitlines()[0]) from exc
        for col in ("dataset", "learner"):
            if col in runs.columns and col not in codes:
                runs[col] = runs[col].astype(str)
        return cls._with_codes(runs, datasets, codes=codes,
                               source=source if source is not None else (stored_source or f"file:{path.name}"))


def check_metadata_target(path, *, option: str = "--out", force: bool = False, inputs=()) -> Path:
    """Check, before any work, that :meth:`MetaDataset.save` may write ``path`` (and a CSV's sidecar).

    The name must end in ``.parquet`` or ``.csv``; an existing file is replaced only when it is
    meta-data algorank saved (:func:`~algorank.metadata.io.is_algorank_metadata`) or with ``force``,
    never when it is one of ``inputs``, a folder or a device (:func:`~algorank.metadata.io.check_out_file`).

    Raises
    ------
    InputError
        What is wrong with ``path``.
    """
    from .io import check_out_file, is_algorank_metadata

    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in (".parquet", ".csv"):
        raise InputError(f"cannot save meta-data to {str(p)!r}: use a .parquet or .csv file name")
    ours = p.exists() and is_algorank_metadata(p)
    check_out_file(p, option=option, force=force, inputs=inputs, replaces=is_algorank_metadata)
    if suffix == ".csv":
        check_out_file(p.with_name(p.stem + ".datasets.csv"), option=option, force=force or ours, inputs=inputs)
    return p
