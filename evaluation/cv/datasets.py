"""Load a classification or regression dataset for the evaluator from a file, scikit-learn or OpenML.

:func:`load_dataset` understands one string ``spec``:

* a path ending in ``.arff`` (read with liac-arff), ``.csv`` or ``.parquet``;
* ``sklearn:iris``, ``sklearn:wine``, ``sklearn:breast_cancer``, ``sklearn:digits``
  (bundled with scikit-learn, works offline);
* ``openml:ID`` (needs the internet the first time; ``openml`` caches downloads
  and is imported lazily because its import is slow).

Target choice (``target=None``):

1. an attribute named ``class`` or ``target`` (any case; the last one if several);
2. else the last attribute, when it is nominal, or when ``task="regression"``;
3. else the only nominal attribute, when there is exactly one (e.g. spectf, whose
   class is the first column); a warning names it;
4. else the last attribute, when it is numeric and reads as a quantity under the rule of
   :mod:`algorank.evaluation.cv.task` (a regression target);
5. else :class:`~algorank.metadata.errors.InputError` "no nominal target", listing the
   nominal candidates for the target.

Rule 3 narrows the usual "else the last nominal attribute": when the last column
is numeric and several nominal columns exist (e.g. StatLib's analcatdata_aids:
Sex, Age, Race, then numeric counts) the file is a regression dataset, and
silently training "predict Race" would be a nonsense task (rule 4 reads it as the
regression it is).  The user can always name a target explicitly.

Nominal means: an ARFF nominal or string attribute; in CSV/Parquet a non-numeric
column (object, string, category, bool).  A numeric target (named explicitly, or
``class`` / ``target``) is read by the rule of :mod:`algorank.evaluation.cv.task`:
whole numbers with few distinct values are class labels; any other numeric target
is a regression target (``task="classification"`` reads whole numbers as labels whatever
their number).  Rows whose label is missing (for regression: not a finite number) are
dropped, with a warning saying how many (``meta_features["dropped_rows"]``).

Feature columns are then checked by the rules of :mod:`algorank.evaluation.cv.columns`:
id-like and free-text columns are dropped, dates become numeric columns, and the user's
``keep_columns`` / ``drop_columns`` come first (:attr:`LoadedDataset.columns` records what
was done to each column).

Values a classifier cannot compute with are refused or repaired up front, with one message:
finite numbers beyond :data:`MAX_ABS_VALUE` in magnitude become missing values with a warning
(numbers beyond the float range are read as infinite; the preprocessing treats those as missing
values with its own warning); a dataset without feature columns, a column holding lists or other
nested values, and a target where more than half of the rows are the only row of their class
(every class a singleton included) are errors (:func:`check_class_sizes`).
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from algorank.evaluation.cv.columns import apply_plan, log_plan, plan_changes, plan_columns
from algorank.evaluation.cv.task import check_task, numeric_target_task
from algorank.metadata.errors import InputError
from algorank.metadata.io import check_dataset_file
from algorank.metadata.text import escape

__all__ = ["LoadedDataset", "load_dataset", "dataset_from_frame", "as_dataset", "check_class_sizes", "SKLEARN_DATASETS",
           "MAX_ABS_VALUE"]

logger = logging.getLogger(__name__)

#: Names accepted after ``sklearn:``.
SKLEARN_DATASETS = ("iris", "wine", "breast_cancer", "digits")
_TARGET_NAMES = ("class", "target")
#: Finite feature values larger than this in magnitude are treated as missing, with a warning: squaring them
#: (a variance, a distance) would overflow to inf and then NaN.  Infinite ones (``1e309`` in a CSV) become
#: missing values in the preprocessing, with its own warning.
MAX_ABS_VALUE = 1e150


@dataclass(frozen=True, eq=False)
class LoadedDataset:
    """A classification or regression dataset ready for the evaluator.

    Attributes
    ----------
    name : str
        Short id used as ``dataset`` in the runs table (file stem, ``iris``, ``openml-31``).
    source : str
        Where it came from (``file:/path/x.arff``, ``sklearn:iris``, ``openml:31``).
    X : DataFrame
        Features: numeric columns as float, nominal columns as pandas ``category``
        (missing values as NaN).
    y : Series
        Class labels as strings (no missing values), aligned with ``X``; for a regression the
        target as float (finite values only).
    target : str
        Name of the target attribute.
    classes : tuple of str
        Sorted distinct labels present in ``y`` (empty for a regression).
    meta_features : dict
        ``n_instances``, ``n_features``, ``n_classes``, ``majority_fraction``,
        ``n_nominal_features``, ``missing_fraction``, ``dropped_rows``.
    columns : tuple of ColumnDecision
        What was done to each feature column as read (:func:`~algorank.evaluation.cv.columns.plan_columns`);
        empty when the dataset was built otherwise.
    task : str
        ``"classification"`` or ``"regression"``.
    task_detection : str
        How the task was decided, in words (empty when not recorded).
    """

    name: str
    source: str
    X: pd.DataFrame = field(repr=False)
    y: pd.Series = field(repr=False)
    target: str = ""
    classes: tuple = ()
    meta_features: dict = field(default_factory=dict)
    columns: tuple = field(default=(), repr=False)
    task: str = "classification"
    task_detection: str = ""

    def columns_dict(self) -> list:
        """What was done to each feature column, JSON-ready (``column``, ``action``, ``reason``, ``new_columns``)."""
        return [d.to_dict() for d in self.columns]

    @property
    def y_codes(self) -> np.ndarray:
        """Labels as integer codes ``0 .. n_classes - 1`` (index into :attr:`classes`)."""
        return np.searchsorted(np.asarray(self.classes, dtype=object), self.y.to_numpy(dtype=object)).astype(np.int64)

    def fingerprint(self) -> str:
        """SHA-256 of the data content (features, labels, column names): a key for stores (computed once)."""
        cached = self.__dict__.get("_fingerprint")
        if cached is None:
            cached = self._hash()
            object.__setattr__(self, "_fingerprint", cached)  # a cache on a frozen dataclass
        return cached

    def _hash(self) -> str:
        import hashlib

        h = hashlib.sha256()
        h.update(repr(list(self.X.columns)).encode())
        h.update(repr(self.target).encode())
        h.update(pd.util.hash_pandas_object(self.X, index=False).to_numpy().tobytes())
        h.update(pd.util.hash_pandas_object(self.y, index=False).to_numpy().tobytes())
        return h.hexdigest()


# ------------------------------------------------------------------ public
def load_dataset(spec, *, target: str | None = None, task: str = "auto", keep_columns=(),
                 drop_columns=()) -> LoadedDataset:
    """Load a classification or regression dataset.

    Parameters
    ----------
    spec : str or path-like
        A file path (``.arff``, ``.csv``, ``.parquet``; a string or a :class:`pathlib.Path`), ``sklearn:NAME`` or
        ``openml:ID``.
    target : str, optional
        Name of the target attribute; default: see the module docstring.
    task : {"auto", "classification", "regression"}
        How a numeric target is read (:mod:`algorank.evaluation.cv.task`): labels or a quantity.
    keep_columns, drop_columns : sequence of str
        Feature columns kept as read, or dropped (:mod:`algorank.evaluation.cv.columns`).

    Returns
    -------
    LoadedDataset

    Raises
    ------
    InputError
        Missing/empty/unparseable file, unknown format, no nominal target, numeric
        target, unknown target name, or fewer than two classes.
    """
    if isinstance(spec, os.PathLike):
        spec = os.fspath(spec)
    if not isinstance(spec, str) or not spec.strip():
        raise InputError(f"dataset must be a file path, sklearn:NAME or openml:ID; got {spec!r}")
    spec = spec.strip()
    options = {"task": task, "keep_columns": keep_columns, "drop_columns": drop_columns}
    if spec.startswith("sklearn:"):
        return _load_sklearn(spec[len("sklearn:"):], target=target, **options)
    if spec.startswith("openml:"):
        return _load_openml(spec[len("openml:"):], target=target, **options)
    return _load_file(Path(spec), target=target, **options)


def as_dataset(data, target: str | None = None, *, y=None, name: str | None = None, task: str = "auto",
               keep_columns=(), drop_columns=()) -> LoadedDataset:
    """Whatever a data scientist holds, as a :class:`LoadedDataset`.

    Parameters
    ----------
    data : str, path, DataFrame, array-like or LoadedDataset
        A file path / ``sklearn:NAME`` / ``openml:ID`` (see :func:`load_dataset`); a DataFrame
        holding the features and the target column ``target`` (default: the rules of the module
        docstring); or the features ``X`` (DataFrame or 2-D array) when ``y`` is given.
    target : str, optional
        Target column of ``data`` (a path or a DataFrame without ``y``).
    y : array-like, optional
        Class labels aligned with ``data`` (then ``data`` holds features only).
    name : str, optional
        Dataset name in results (default: the file stem, ``frame`` or ``arrays``).
    task : {"auto", "classification", "regression"}
        How a numeric target is read (:mod:`algorank.evaluation.cv.task`): labels or a quantity.
    keep_columns, drop_columns : sequence of str
        Feature columns kept as read, or dropped (:mod:`algorank.evaluation.cv.columns`).  The
        automatic column rules (ids, free text, dates written as text) apply to files and to a DataFrame
        holding the target, not to features given with ``y=`` (the user chose those columns); a column of a
        datetime dtype is expanded into year, month, day of week and ordinal day everywhere, as no estimator
        fits a timestamp as it is.

    Raises
    ------
    InputError
        Conflicting arguments, mismatched lengths, or anything :func:`dataset_from_frame` rejects.
    """
    import os

    options = {"task": task, "keep_columns": keep_columns, "drop_columns": drop_columns}
    if isinstance(data, LoadedDataset):
        if y is not None or target is not None:
            raise InputError("y and target must be None when data is already a LoadedDataset")
        if keep_columns or drop_columns:
            raise InputError("keep_columns and drop_columns apply when data is read; data is already a LoadedDataset")
        return data
    if isinstance(data, (str, os.PathLike)):
        if y is not None:
            raise InputError("y must be None when data is a path or spec (the file holds the target)")
        return load_dataset(str(data), target=target, **options)
    if y is None:
        if not isinstance(data, pd.DataFrame):
            raise InputError(f"data must be a path, a DataFrame with a target column, or X with y=; "
                             f"got {type(data).__name__} without y")
        return dataset_from_frame(data, name=name or "frame", source="frame", target=target, **options)
    if target is not None:
        raise InputError("target names a column of a DataFrame holding the labels; with y= leave it None")
    X = data if isinstance(data, pd.DataFrame) else pd.DataFrame(np.asarray(data))
    if X.ndim != 2:
        raise InputError(f"X must be 2-D; got shape {getattr(data, 'shape', None)}")
    X = X.copy()
    X.columns = [str(c) for c in X.columns]
    labels = pd.Series(np.asarray(y, dtype=object).ravel() if not isinstance(y, pd.Series) else y.to_numpy(object))
    if len(labels) != len(X):
        raise InputError(f"X and y have different numbers of rows: {len(X)} and {len(labels)}")
    col = "target" if "target" not in X.columns else "__target__"
    frame = X.reset_index(drop=True).assign(**{col: labels.to_numpy()})
    nominal = {c: not pd.api.types.is_numeric_dtype(frame[c]) or pd.api.types.is_bool_dtype(frame[c])
               for c in frame.columns}
    nominal[col] = True  # the labels, whatever their dtype
    task = check_task(task)
    numeric = pd.api.types.is_numeric_dtype(labels.infer_objects()) and not pd.api.types.is_bool_dtype(
        labels.infer_objects())
    if numeric and task != "classification":  # numbers: labels or quantities, by the rule of the task module
        nominal[col] = False
    elif task == "regression":
        raise InputError("task='regression' was asked for, but y holds class labels, not quantities")
    return dataset_from_frame(frame, name=name or "arrays", source="arrays", target=col, nominal=nominal,
                              task=task, keep_columns=keep_columns, drop_columns=drop_columns,
                              column_rules=False)


def dataset_from_frame(
    frame: pd.DataFrame,
    *,
    name: str,
    source: str,
    target: str | None = None,
    nominal: dict | None = None,
    task: str = "auto",
    keep_columns=(),
    drop_columns=(),
    column_rules: bool = True,
) -> LoadedDataset:
    """Build a :class:`LoadedDataset` from a DataFrame holding features and target.

    Parameters
    ----------
    frame : DataFrame
        Features and the target column.
    name, source : str
        See :class:`LoadedDataset`.
    target : str, optional
        Target column; default: the rules of the module docstring.
    nominal : dict, optional
        ``column -> bool`` (nominal or not) as declared by the file format; by
        default inferred from the dtypes.
    task : {"auto", "classification", "regression"}
        How to read a numeric target (:mod:`algorank.evaluation.cv.task`): labels or a quantity.
    keep_columns, drop_columns : sequence of str
        Feature columns kept as read, or dropped (:mod:`algorank.evaluation.cv.columns`).
    column_rules : bool
        Apply the automatic column rules (ids and free text dropped, dates expanded).
    """
    if frame.shape[0] == 0 or frame.shape[1] == 0:
        raise InputError(f"dataset {name!r} is empty ({frame.shape[0]} rows, {frame.shape[1]} columns)")
    frame = frame.copy()
    frame.columns = [str(c) for c in frame.columns]
    if len(set(frame.columns)) != len(frame.columns):
        dups = sorted({c for c in frame.columns if list(frame.columns).count(c) > 1})
        raise InputError(f"dataset {name!r} has duplicated column names {dups[:5]}")
    if nominal is None:  # from the dtypes (no Series per column: files with thousands of columns)
        numeric = _numeric_dtypes(frame.dtypes)
        nominal = {c: not numeric[dt] for c, dt in frame.dtypes.items()}
    task = check_task(task)
    target = _choose_target(frame, nominal, target, name, task=task)
    col = frame[target]
    if not nominal[target]:
        values = pd.to_numeric(col, errors="coerce")
        detected, why = numeric_target_task(values)
        integral = not why.endswith("not all whole numbers")
        if task == "regression" or (task == "auto" and detected == "regression"):
            how = ("as asked" if task == "regression" else
                   f"target {escape(target)!r} is numeric with {why}; override with --task, task= in Python")
            return _regression_dataset(frame, values, name=name, source=source, target=target, nominal=nominal,
                                       task_text=f"regression ({how})", keep_columns=keep_columns,
                                       drop_columns=drop_columns, column_rules=column_rules)
        if not integral:  # task="classification" on fractional values
            raise InputError(f"target {target!r} of dataset {name!r} has values that are not whole numbers ({why}): "
                             "they cannot be class labels; leave the task to auto, or pass task='regression'")
        task_text = (f"classification (as asked: the values of the numeric target {target!r} read as class labels)"
                     if task == "classification" else
                     f"classification (target {target!r} is numeric with {why}; override with --task, task= in "
                     "Python)")
        col = values.astype("Int64")
    else:
        if task == "regression":
            raise InputError(f"task='regression' was asked for target {target!r} of dataset {name!r}, which is "
                             "nominal: it holds class labels, not quantities")
        task_text = f"classification (target {target!r} is nominal)"
    labels = col.astype(object).where(col.notna(), None)
    missing = labels.isna().to_numpy()
    dropped = int(missing.sum())
    if dropped:
        logger.warning("dataset %s: dropped %d row(s) whose target %r is missing", name, dropped, target)
    keep = ~missing
    y = pd.Series([str(v).strip() for v in labels[keep]], name=target, dtype=object)
    if len(y) == 0:
        raise InputError(f"dataset {name!r} has no rows with a target value (target {target!r})")
    X, plan, nominal = _features(frame, keep, name=name, target=target, nominal=nominal, keep_columns=keep_columns,
                                 drop_columns=drop_columns, column_rules=column_rules)
    classes = tuple(sorted(y.unique()))
    if len(classes) < 2:
        raise InputError(
            f"target {target!r} of dataset {name!r} has a single class ({classes[0]!r} in all {len(y)} rows): "
            "classification needs at least two"
        )
    counts = y.value_counts()
    check_class_sizes(counts.to_numpy(), name=name, target=target)
    meta = _loader_meta(X, y, nominal, n_classes=len(classes), majority_fraction=float(counts.max() / len(y)),
                        dropped=dropped)
    return LoadedDataset(name=name, source=source, X=X, y=y, target=target, classes=classes, meta_features=meta,
                         columns=plan, task="classification", task_detection=task_text)


def _regression_dataset(frame: pd.DataFrame, values: pd.Series, *, name: str, source: str, target: str, nominal: dict,
                        task_text: str, keep_columns, drop_columns, column_rules: bool) -> LoadedDataset:
    """A regression :class:`LoadedDataset`: ``y`` the numeric target as float, rows without a finite target dropped.

    Its meta-features are those of a classification dataset with ``n_classes = 0`` and the baseline score
    ``majority_fraction = 0.0`` (the R² of predicting the mean), plus ``target_std`` and ``target_skewness``.
    """
    v = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    missing = ~np.isfinite(v)
    dropped = int(missing.sum())
    if dropped:
        logger.warning("dataset %s: dropped %d row(s) whose target %r is missing or not finite", name, dropped,
                       escape(target))
    keep = ~missing
    y = pd.Series(v[keep], name=target, dtype=float)
    if len(y) == 0:
        raise InputError(f"dataset {name!r} has no rows with a target value (target {target!r})")
    if len(np.unique(y)) < 2:
        raise InputError(f"target {target!r} of dataset {name!r} has a single value ({y.iloc[0]:g} in all {len(y)} "
                         "rows): there is nothing to predict")
    X, plan, nominal = _features(frame, keep, name=name, target=target, nominal=nominal, keep_columns=keep_columns,
                                 drop_columns=drop_columns, column_rules=column_rules)
    from scipy.stats import skew

    meta = {**_loader_meta(X, y, nominal, n_classes=0, majority_fraction=0.0, dropped=dropped),
            "target_std": float(np.std(y.to_numpy())), "target_skewness": float(skew(y.to_numpy()))}
    return LoadedDataset(name=name, source=source, X=X, y=y, target=target, classes=(), meta_features=meta,
                         columns=plan, task="regression", task_detection=task_text)


def _features(frame: pd.DataFrame, keep: np.ndarray, *, name: str, target: str, nominal: dict, keep_columns,
              drop_columns, column_rules: bool) -> tuple[pd.DataFrame, list, dict]:
    """The feature columns of the rows ``keep``, after the column rules: ``(X, plan, nominal)``.

    The columns are planned (:mod:`algorank.evaluation.cv.columns`) and the plan applied, nested values
    refused, each column typed by ``nominal`` and out-of-range numbers read as missing; ``nominal`` gains
    the columns a date expands into.

    Raises
    ------
    InputError
        No feature column is left, or a column holds nested values.
    """
    X = frame.loc[keep, [c for c in frame.columns if c != target]].reset_index(drop=True)
    plan = plan_columns(frame.loc[keep], target=target, keep_columns=keep_columns, drop_columns=drop_columns,
                        rules=column_rules)
    if plan_changes(plan):
        log_plan(plan, name)
        X = apply_plan(X, plan)
        nominal = {**nominal, **{c: False for d in plan if d.action == "date-expanded" for c in d.new_columns}}
    if X.shape[1] == 0:
        raise InputError(f"dataset {name!r} has no feature columns, only the target {target!r}: there is nothing "
                         "to learn from")
    _refuse_nested(X, nominal, name)
    return _out_of_range_as_missing(_typed_features(X, nominal), name), plan, nominal


def _loader_meta(X: pd.DataFrame, y: pd.Series, nominal: dict, *, n_classes: int, majority_fraction: float,
                 dropped: int) -> dict:
    """The loader's meta-features of the features ``X`` and the target ``y``."""
    n_cells = X.shape[0] * X.shape[1]
    return {
        "n_instances": int(len(y)),
        "n_features": int(X.shape[1]),
        "n_classes": n_classes,
        "majority_fraction": majority_fraction,
        "n_nominal_features": int(sum(bool(nominal[c]) for c in X.columns)),
        "missing_fraction": float(X.isna().to_numpy().sum() / n_cells) if n_cells else 0.0,
        "dropped_rows": dropped,
    }


def check_class_sizes(counts, *, name: str, target: str | None = None) -> None:
    """Refuse a target no classifier can be cross-validated on: most rows are the only row of their class.

    A row whose class has a single row is never in the training part when it is tested (whatever
    the scheme: k-fold, holdout, bootstrap, leave-one-out), so no learner can get it right.  When
    such rows are more than half of the rows (every class a singleton, or an id-like target with a
    few repeated values), the accuracy of every learner is mostly that artefact and the ranking
    means nothing: the target is refused.  A few one-row classes among larger ones (real datasets
    have them: 17 of the 188 classification datasets in ``shared/datasets``) are kept.  Classes
    with fewer rows than folds are kept too, with the chosen number of folds, as scikit-learn's
    ``StratifiedKFold`` does: they are simply not in every test fold.

    Parameters
    ----------
    counts : array-like of int
        Rows per class.
    name : str
        Dataset name (for the message).
    target : str, optional
        Target column (for the message).

    Raises
    ------
    InputError
        ``target ... of dataset ... has N classes of one row each: ...`` (every class), or
        ``target ... of dataset ...: A of N rows are the only row of their class ...`` (more than half).
    """
    counts = np.asarray(counts, dtype=np.int64)
    counts = counts[counts > 0]
    what = f"target {target!r} of dataset {name!r}" if target is not None else f"the target of dataset {name!r}"
    if len(counts) >= 2 and counts.max() < 2:
        raise InputError(f"{what} has {len(counts)} classes of one row each: no class has two rows to train on "
                         "one and test on the other (is it an id column?)")
    alone, total = int(counts[counts < 2].sum()), int(counts.sum())
    if len(counts) >= 2 and 2 * alone > total:
        raise InputError(f"{what}: {alone} of {total} rows are the only row of their class, more than half; such a "
                         "row is never in training when it is tested, so no learner can get it right (is it an id "
                         "column? drop or merge the classes of one row, or choose another target)")


def _refuse_nested(X: pd.DataFrame, nominal: dict, name: str) -> None:
    """Refuse columns holding lists, arrays or mappings (e.g. a Parquet list column)."""
    for c, dt in X.dtypes.items():
        if dt != object:
            continue
        kind = pd.api.types.infer_dtype(X[c], skipna=True)
        if kind in ("string", "empty", "boolean", "integer", "floating", "mixed-integer-float", "decimal", "bytes",
                    "datetime", "date", "time", "categorical"):
            continue
        if any(isinstance(v, (list, tuple, dict, set, np.ndarray)) for v in X[c].to_numpy()):
            raise InputError(f"column {c!r} of dataset {name!r} holds lists or other nested values; algorank needs "
                             "one number or category per cell (flatten or drop the column)")


def _out_of_range_as_missing(X: pd.DataFrame, name: str) -> pd.DataFrame:
    """Finite numeric values beyond :data:`MAX_ABS_VALUE` in magnitude become NaN, with a warning."""
    cols = [c for c, dt in X.dtypes.items() if dt == float]
    if not cols:
        return X
    values = X[cols].to_numpy(dtype=float, copy=True)
    with np.errstate(invalid="ignore"):
        bad = np.isfinite(values) & (np.abs(values) > MAX_ABS_VALUE)
    if not bad.any():
        return X
    hit = [c for c, b in zip(cols, bad.any(axis=0)) if b]
    values[bad] = np.nan
    X = X.copy()
    X[cols] = values
    logger.warning("dataset %s: %d value(s) beyond +-%g (too large to compute with) in %d column(s) (%s) are "
                   "treated as missing", escape(name), int(bad.sum()), MAX_ABS_VALUE, len(hit),
                   _listing([escape(c) for c in hit], 5))
    return X


def _numeric_dtypes(dtypes: pd.Series) -> dict:
    """dtype -> numeric and not bool, decided once per distinct dtype."""
    return {dt: pd.api.types.is_numeric_dtype(dt) and not pd.api.types.is_bool_dtype(dt) for dt in set(dtypes)}


def _typed_features(X: pd.DataFrame, nominal: dict) -> pd.DataFrame:
    """Nominal columns as ``category``, the others as float (unparseable values -> NaN).

    Columns that already have a numeric dtype are converted in one block, the others one by
    one, and the frame is assembled once: a file with thousands of columns loads in a
    fraction of a second instead of seconds.
    """
    dtypes = X.dtypes
    numeric = _numeric_dtypes(dtypes)
    block = [c for c, dt in dtypes.items() if not nominal[c] and numeric[dt]]
    parts = []
    if block:
        parts.append(pd.DataFrame(X[block].to_numpy(dtype=float, na_value=np.nan), columns=block, index=X.index))
    rest = {}
    block_set = set(block)
    for c in X.columns:
        if c in block_set:
            continue
        s = X[c]
        if nominal[c]:
            rest[c] = s.astype(object).where(s.notna(), np.nan).astype("category")
        else:
            rest[c] = pd.to_numeric(s, errors="coerce").astype(float)
    if rest:
        parts.append(pd.DataFrame(rest, index=X.index))
    if not parts:
        return X
    out = pd.concat(parts, axis=1) if len(parts) > 1 else parts[0]
    return out[list(X.columns)] if list(out.columns) != list(X.columns) else out


# ------------------------------------------------------------------ target choice
def _choose_target(frame: pd.DataFrame, nominal: dict, target: str | None, name: str, *, task: str = "auto") -> str:
    columns = list(frame.columns)
    nominal_cols = [c for c in columns if nominal.get(c)]
    if target is not None:
        if target in columns:
            return target
        folded = [c for c in columns if c.lower() == target.lower()]
        if len(folded) == 1:
            return folded[0]
        import difflib

        close = difflib.get_close_matches(target, columns, n=1, cutoff=0.6)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise InputError(
            f"target {target!r} is not an attribute of dataset {name!r}; {hint}attributes: {_listing(columns)}"
        )
    named = [c for c in columns if c.lower() in _TARGET_NAMES]
    if named:
        return named[-1]
    if nominal.get(columns[-1]):
        return columns[-1]
    if task == "regression":
        return columns[-1]  # a quantity was asked for: the last attribute, numeric
    if len(nominal_cols) == 1:
        logger.warning("dataset %s: no attribute named class/target and the last one is numeric; "
                       "using the only nominal attribute %r as the target", name, nominal_cols[0])
        return nominal_cols[0]
    if task == "auto" and numeric_target_task(frame[columns[-1]])[0] == "regression":
        return columns[-1]  # a quantity, and no single nominal attribute is the class
    hint = f"nominal attributes: {_listing(nominal_cols)}" if nominal_cols else "it has no nominal attribute"
    task, why = numeric_target_task(frame[columns[-1]])
    what = (f"numeric ({why}: a regression target? pass task='regression')" if task == "regression" else
            f"numeric ({why})")
    raise InputError(
        f"no nominal target in dataset {name!r}: no attribute is named class/target and the last attribute "
        f"{columns[-1]!r} is {what}; choose one as the target ({hint})"
    )


def _listing(cols, limit: int = 8) -> str:
    shown = ", ".join(cols[:limit])
    return shown + (f" and {len(cols) - limit} more" if len(cols) > limit else "")


# ------------------------------------------------------------------ readers
def _load_file(path: Path, *, target: str | None, **options) -> LoadedDataset:
    from algorank.metadata.textfile import COMPRESSIONS, decompress

    check_dataset_file(path)
    suffix = path.suffix.lower()
    name = path.stem
    source = f"file:{path}"
    raw = None
    if suffix in COMPRESSIONS:  # data.csv.gz: the text it holds, read as data.csv
        inner = Path(path.stem).suffix.lower()
        if inner not in (".arff", ".csv", ".txt", ".tsv"):
            raise InputError(f"unknown dataset format {inner + suffix!r} of {str(path)!r}: a compressed dataset is "
                             f"an .arff, .csv, .txt or .tsv file compressed as {', '.join(COMPRESSIONS)}")
        raw = decompress(path, what="dataset file")
        suffix, name = inner, Path(path.stem).stem
    if suffix == ".arff":
        frame, nominal = _read_arff(path, raw=raw)
    elif suffix in (".csv", ".txt", ".tsv"):
        frame, nominal = _read_csv(path, sep="\t" if suffix == ".tsv" else ",", raw=raw), None
    elif suffix in (".parquet", ".pq"):
        try:
            frame, nominal = pd.read_parquet(path), None
        except Exception as exc:  # pyarrow raises several types
            raise InputError(f"cannot read Parquet file {str(path)!r}: {type(exc).__name__}: {exc}") from exc
    else:
        hint = "; save a spreadsheet as CSV" if suffix in (".xlsx", ".xls", ".ods") else ""
        raise InputError(f"unknown dataset format {suffix!r} of {str(path)!r}: expected .arff, .csv, .tsv, .txt or "
                         f".parquet (a text file may be compressed: {', '.join(COMPRESSIONS)}){hint}")
    return dataset_from_frame(frame, name=name, source=source, target=target, nominal=nominal, **options)


def _read_csv(path: Path, *, sep: str, raw: bytes | None = None) -> pd.DataFrame:
    """A dataset CSV (``raw``: the bytes of a compressed one), its separator and decimal mark from its first lines
    (:func:`~algorank.metadata.textfile.csv_dialect`)."""
    import io
    import warnings

    from algorank.metadata.textfile import WHITESPACE, check_unique_names, csv_dialect, decode_error, \
        header_names, text_encoding

    if raw is None:
        with open(path, "rb") as fh:
            head = fh.read(1 << 16)
    else:
        head = raw[: 1 << 16]
    encoding = text_encoding(head, what="dataset file", label=str(path))  # one read serves both

    def source():  # a fresh reader of the text each time
        return path if raw is None else io.BytesIO(raw)

    try:
        sep, decimal = csv_dialect(head.decode(encoding, errors="replace"), sep=sep)
        if sep != "," or decimal != ".":
            logger.warning("dataset file %s: read with %s as the separator%s", escape(str(path)),
                           {"\t": "a tab", WHITESPACE: "runs of blanks"}.get(sep, repr(sep)),
                           " and a decimal comma" if decimal == "," else "")
        names = header_names(source(), sep=sep, encoding=encoding)
        check_unique_names(names, what=f"dataset file {str(path)!r}")
        # index_col=False: rows with one field more than the header never shift the columns onto an index
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", pd.errors.ParserWarning)
            frame = pd.read_csv(source(), sep=sep, decimal=decimal, na_values=["?"], skipinitialspace=True,
                                encoding=encoding, index_col=False)
        for message in {str(w.message) for w in caught if issubclass(w.category, pd.errors.ParserWarning)}:
            if message.startswith("Length of header or names does not match length of data"):
                message = "some rows have more fields than the header; their extra fields are left out"
            logger.warning("dataset file %s: %s", escape(str(path)), escape(" ".join(message.split())))
    except pd.errors.EmptyDataError as exc:
        raise InputError(f"dataset file is empty: {str(path)!r}") from exc
    except UnicodeError as exc:
        raise decode_error(path, exc, encoding, what="dataset file") from None
    except (pd.errors.ParserError, ValueError) as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(f"cannot parse CSV file {str(path)!r}: {type(exc).__name__}: {exc}") from exc
    return _without_row_index(frame, names, path)


def _without_row_index(frame: pd.DataFrame, names: list, path: Path) -> pd.DataFrame:
    """Leave out a column without a name that holds distinct whole numbers: the row index pandas writes by
    default (``df.to_csv(path)``).  Row numbers are no feature, and in a file sorted by class they give the
    label away."""
    drop = []
    for i, (column, name) in enumerate(zip(frame.columns, names)):
        if name.strip():
            continue
        values = pd.to_numeric(frame[column], errors="coerce")
        whole = values.notna().all() and bool(np.all(values == np.floor(values)))
        if whole and values.is_unique:
            drop.append(column)
            logger.warning("dataset file %s: column %d has no name and holds distinct whole numbers (a row index, "
                           "as pandas writes one by default): left out, not a feature", escape(str(path)), i + 1)
    return frame.drop(columns=drop) if drop else frame


def _read_arff(path: Path, *, raw: bytes | None = None) -> tuple[pd.DataFrame, dict]:
    import io

    import arff  # liac-arff

    from algorank.metadata.textfile import decode_error, text_encoding

    encoding = text_encoding(path if raw is None else raw, what="dataset file", label=str(path))
    try:
        if raw is None:
            with open(path, encoding=encoding) as fh:
                data = arff.load(fh)
        else:
            data = arff.load(io.StringIO(raw.decode(encoding)))
    except UnicodeError as exc:
        raise decode_error(path, exc, encoding, what="dataset file") from None
    except Exception as exc:  # liac-arff raises its own ArffException subclasses and ValueError
        raise InputError(f"cannot parse ARFF file {str(path)!r}: {type(exc).__name__}: {exc}") from exc
    attributes = data.get("attributes") or []
    if not attributes:
        raise InputError(f"ARFF file {str(path)!r} declares no attributes")
    names = [a for a, _ in attributes]  # liac-arff refuses a repeated attribute name
    frame = pd.DataFrame(data.get("data") or [], columns=names)
    if frame.empty:
        raise InputError(f"ARFF file {str(path)!r} has no data rows")
    nominal = {a: isinstance(kind, list) or str(kind).upper() == "STRING" for a, kind in attributes}
    return frame, nominal


def _load_sklearn(key: str, *, target: str | None, **options) -> LoadedDataset:
    import sklearn.datasets as skd

    if key not in SKLEARN_DATASETS:
        raise InputError(f"unknown scikit-learn dataset {key!r}: choose one of {', '.join(SKLEARN_DATASETS)}")
    bunch = getattr(skd, f"load_{key}")(as_frame=True)
    frame = bunch.frame.copy()
    tname = bunch.target.name if hasattr(bunch.target, "name") else "target"
    frame[tname] = np.asarray(bunch.target_names, dtype=object)[np.asarray(bunch.target)]
    nominal = {c: c == tname for c in frame.columns}
    return dataset_from_frame(frame, name=key, source=f"sklearn:{key}", target=target or tname, nominal=nominal,
                              **options)


def _load_openml(key: str, *, target: str | None, **options) -> LoadedDataset:
    if not re.fullmatch(r"\d+", key):
        raise InputError(f"openml dataset id must be a positive integer, got {key!r}")
    try:
        import openml  # slow import: only here
    except ImportError as exc:  # pragma: no cover - openml is a dependency
        raise InputError("openml:ID needs the 'openml' package (pip install openml)") from exc
    try:
        ds = openml.datasets.get_dataset(int(key), download_data=True, download_qualities=False,
                                         download_features_meta_data=False)
        frame, *_ = ds.get_data(dataset_format="dataframe")
    except Exception as exc:  # network errors, unknown ids: openml raises many types
        raise InputError(f"cannot load openml:{key} (unknown id, or offline and not cached): "
                         f"{type(exc).__name__}: {exc}") from exc
    target = target or (ds.default_target_attribute or "").split(",")[0] or None
    return dataset_from_frame(frame, name=f"openml-{key}", source=f"openml:{key}", target=target, **options)
