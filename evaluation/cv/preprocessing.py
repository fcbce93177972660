"""Learner resolution and the per-fold preprocessing pipeline.

Every learner runs as ``Pipeline([("prep", ColumnTransformer), ("model", estimator)])``
and the whole pipeline is cloned and fitted on each training fold only, so no
statistic of a test fold (imputation medians, category sets, scaling ranges)
leaks into training:

* numeric columns: median imputation, then scaling where the learner needs it
  (:attr:`~algorank.metadata.learners.LearnerSpec.needs_scaling` -> standardisation,
  :attr:`~algorank.metadata.learners.LearnerSpec.needs_nonnegative` -> min-max to [0, 1],
  clipped so unseen test values stay non-negative);
* nominal columns: most-frequent imputation, then one-hot encoding (categories
  unseen in training are ignored: an all-zero row).

Memory.  A nominal column keeps at most :data:`MAX_LEVELS` levels, its most frequent
ones; all other levels share one ``other`` level (a one-line warning names the
columns).  The one-hot block of a column therefore has at most ``MAX_LEVELS + 1``
columns, and a fold's dense feature matrix at most ``rows x (numeric columns +
(MAX_LEVELS + 1) x nominal columns)`` float64 values (a 10,000-row file with one
10,000-level column: 8 MB per copy instead of 800 MB).

Learners are portfolio ids (``sklearn.tree.DecisionTreeClassifier``, ``SVC_rbf``,
short names such as ``knn``) or any estimator as an import path with optional JSON
parameters appended: ``sklearn.dummy.DummyClassifier{"strategy": "most_frequent"}``.
Import-path learners are standardised (the safe default for unknown estimators);
add ``"__scaling__": "none" | "standard" | "minmax"`` to the JSON to change that.
A JSON object with a ``"__class__"`` key is a nested estimator (e.g. the one-vs-rest
logistic regressions of the embedded ``oboe`` set), checked like the outer class; every
``random_state`` the id does not set, nested ones included, gets the evaluation's seed.
"""

from __future__ import annotations

import json
import logging
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin

from algorank.metadata.errors import InputError
from algorank.metadata.regressors import is_regressor_id
from algorank.metadata.learners import (LEARNERS, estimator_from_path, make_estimator, portfolio_spec, seed_estimator,
                                       short_name)

__all__ = ["LearnerRecipe", "resolve_learner", "fit_quietly", "encode_features", "encode_dataset", "FoldPreprocessor",
           "FrameEncoder", "RawPreprocessor", "make_preprocessor", "make_pipeline", "final_pipeline", "SCALINGS",
           "MAX_LEVELS"]

logger = logging.getLogger(__name__)

#: Scaling choices of the numeric columns.
SCALINGS = ("none", "standard", "minmax")

#: Levels kept per nominal column (the most frequent); the others share one "other" level.
MAX_LEVELS = 100


@dataclass(frozen=True)
class LearnerRecipe:
    """How to build one learner's estimator (picklable, cheap to send to workers).

    Attributes
    ----------
    id : str
        The id as given (used as ``learner`` in the runs table; portfolio short
        names are expanded to the full LCDB id).
    path : str or None
        Import path for non-portfolio estimators.
    params_json : str
        JSON parameters of an import-path estimator (``"{}"`` when none).
    scaling : str
        One of :data:`SCALINGS`.
    allow_modules : tuple of str
        Packages allowed besides scikit-learn for ``path`` (checked again at build time,
        also in worker processes).
    task : str
        ``"classification"`` (a classifier) or ``"regression"`` (a regressor).
    """

    id: str
    path: str | None
    params_json: str
    scaling: str
    allow_modules: tuple = ()
    task: str = "classification"

    def build(self, *, random_state: int | None):
        """Return a fresh, unfitted estimator (``random_state`` set where the estimator has one)."""
        if self.path is None:
            return make_estimator(self.id, random_state=random_state)
        params = json.loads(self.params_json)
        est = estimator_from_path(self.path, params, allow_modules=self.allow_modules, task=self.task)
        return seed_estimator(est, params, random_state)  # nested estimators too, unless the id sets it


def resolve_learner(learner: str, *, allow_modules=(), task: str = "classification") -> LearnerRecipe:
    """Turn a learner string into a :class:`LearnerRecipe`.

    A learner string is data: an import path is accepted only when it names a
    scikit-learn-compatible estimator class inside an allowed package
    (:func:`algorank.metadata.learners.estimator_class`), and its JSON parameters are passed to
    that class only.  Nothing outside the allowed packages is imported or called.

    Parameters
    ----------
    learner : str
        Portfolio id, short name, or ``package.module.Class{"json": "params"}``.
    allow_modules : sequence of str
        Packages allowed besides scikit-learn.
    task : {"classification", "regression"}
        The task the learner must do: a classifier, or a regressor (the regression portfolio of
        :mod:`algorank.metadata.regressors`, or a regressor class path).

    Raises
    ------
    InputError
        Unknown id, bad JSON, a refused or unimportable path, bad parameters, or a learner of the
        other task.
    """
    if not isinstance(learner, str) or not learner.strip():
        raise InputError(f"learner must be a portfolio id or an import path, got {learner!r}")
    text = learner.strip()
    if task == "regression" or is_regressor_id(text):
        return _regression_recipe(text, task=task, allow_modules=allow_modules)
    if ":" in text and "{" not in text and portfolio_spec(text) is not None:
        make_estimator(text)  # a missing library is the registry's InputError, naming the extra
        return LearnerRecipe(id=text, path=None, params_json="{}", scaling="none")
    if text in LEARNERS or "." not in text.split("{")[0]:
        full = _full_id(text)
        spec = LEARNERS[full]
        scaling = "minmax" if spec.needs_nonnegative else ("standard" if spec.needs_scaling else "none")
        return LearnerRecipe(id=full, path=None, params_json="{}", scaling=scaling)
    path, params, scaling = _path_params(text)
    params_json = json.dumps(params, sort_keys=True)
    recipe = LearnerRecipe(id=text, path=path.strip(), params_json=params_json, scaling=scaling,
                           allow_modules=tuple(allow_modules or ()))
    recipe.build(random_state=None)  # fail early on a bad path or bad parameters
    return recipe


def _regression_recipe(text: str, *, task: str, allow_modules) -> LearnerRecipe:
    """The recipe of a regressor id (portfolio id, short name or class path with JSON parameters)."""
    from algorank.metadata.regressors import REGRESSORS, REGRESSORS_BY_SHORT

    spec = REGRESSORS.get(text) or REGRESSORS_BY_SHORT.get(text)
    if task != "regression":
        raise InputError(f"learner {text!r} is a regressor; it cannot run on a classification task")
    if spec is not None:
        from algorank.metadata.boosting import BOOSTING_EXTRA, library_available

        missing = [r for r in spec.requires if not library_available(r)]
        if missing:
            raise InputError(f"learner {text!r} needs {', '.join(missing)}, which is not installed; "
                             f"{BOOSTING_EXTRA} installs it")
        return LearnerRecipe(id=spec.id, path=None, params_json="{}",
                             scaling="standard" if spec.needs_scaling else "none", task="regression")
    if text in LEARNERS or any(short_name(full) == text for full in LEARNERS):
        raise InputError(f"learner {text!r} is a classifier; it cannot run on a regression task (the regressors: "
                         f"{', '.join(sorted(REGRESSORS_BY_SHORT))})")
    if "." not in text.split("{")[0]:
        raise InputError(f"unknown regressor id {text!r}; known ids: {', '.join(sorted(REGRESSORS_BY_SHORT))} "
                         "(short names), their full ids, or a scikit-learn regressor class path")
    path, params, scaling = _path_params(text)
    recipe = LearnerRecipe(id=text, path=path.strip(), params_json=json.dumps(params, sort_keys=True),
                           scaling=scaling, allow_modules=tuple(allow_modules or ()), task="regression")
    recipe.build(random_state=None)  # fail early on a bad path, a classifier or bad parameters
    return recipe


def _path_params(text: str) -> tuple[str, dict, str]:
    """An import-path learner id's class path, its JSON parameters and its ``__scaling__`` (default standard)."""
    path, brace, rest = text.partition("{")
    params: dict[str, Any] = {}
    if brace:
        try:
            params = json.loads("{" + rest)
        except json.JSONDecodeError as exc:
            raise InputError(f"learner {text!r}: parameters after the import path must be a JSON object: {exc}") from exc
        if not isinstance(params, dict):
            raise InputError(f"learner {text!r}: parameters must be a JSON object")
    scaling = str(params.pop("__scaling__", "standard"))
    if scaling not in SCALINGS:
        raise InputError(f"learner {text!r}: __scaling__ must be one of {', '.join(SCALINGS)}, got {scaling!r}")
    return path, params, scaling


def _full_id(text: str) -> str:
    if text in LEARNERS:
        return text
    for full in LEARNERS:
        if short_name(full) == text:
            return full
    make_estimator(text)  # raises the registry's InputError naming the known ids
    raise InputError(f"unknown learner id {text!r}")  # pragma: no cover - make_estimator raised


def encode_features(X: pd.DataFrame, *, max_levels: int = MAX_LEVELS, warn: bool = True
                    ) -> tuple[np.ndarray, tuple[bool, ...]]:
    """Features as one float matrix plus a nominal-column mask.

    Numeric columns are copied as float; nominal (category/object) columns become
    their category codes as float (missing -> NaN).  The code vocabulary is the
    set of category *names* of the whole file (no statistic of any fold), so this
    is done once per dataset; everything fitted (medians, scales, the categories
    seen in training) is fitted per training fold by :class:`FoldPreprocessor`.
    A nominal column with more than ``max_levels`` levels keeps its ``max_levels``
    most frequent ones (ties: the first in category order); the others get one shared
    code, ``max_levels`` ("other"), and one warning line names those columns.  Numeric
    +-inf values are missing values (imputed per training fold like NaN), with one warning
    line naming those columns.
    """
    matrix, mask, _ = _encode(X, max_levels=max_levels, warn=warn)
    return matrix, mask


def _encode(X: pd.DataFrame, *, max_levels: int, warn: bool) -> tuple[np.ndarray, tuple[bool, ...], tuple]:
    """:func:`encode_features` plus the notes of what it changed (for store keys)."""
    cols = []
    mask = []
    capped = []
    infinite: list[str] = []
    dtypes = X.dtypes
    floats = [c for c in X.columns if dtypes[c] == np.float64]  # most columns: one block, no Series each
    block = dict(zip(floats, X[floats].to_numpy(dtype=float).T)) if floats else {}
    for c in X.columns:
        if c in block:
            cols.append(_finite_or_nan(block[c], c, infinite))
            mask.append(False)
            continue
        s = X[c]
        if _is_nominal(s):  # category, object, string or bool (a loaded dataset has category only)
            cat = s.astype("category")
            codes = cat.cat.codes.to_numpy()
            kept = _level_codes(codes, len(cat.cat.categories), max_levels)
            if kept is not None:
                capped.append(f"{c} ({len(cat.cat.categories)} levels)")
                codes = np.where(codes >= 0, kept[np.maximum(codes, 0)], -1)
            codes = codes.astype(float)
            codes[codes < 0] = np.nan
            cols.append(codes)
            mask.append(True)
        else:
            cols.append(_finite_or_nan(pd.to_numeric(s, errors="coerce").to_numpy(dtype=float), c, infinite))
            mask.append(False)
    if infinite and warn:
        logger.warning("numeric column(s) with +-inf values: treated as missing (imputed with the training "
                       "median): %s", ", ".join(_clip_names(infinite)))
    if capped and warn:
        logger.warning("nominal column(s) with more than %d levels keep their %d most frequent levels, the others "
                       "become one 'other' level: %s", max_levels, max_levels, ", ".join(_clip_names(capped)))
    matrix = np.column_stack(cols) if cols else np.zeros((len(X), 0))
    notes = ((f"levels<={max_levels}",) if capped else ()) + (("inf=missing",) if infinite else ())
    return np.ascontiguousarray(matrix, dtype=float), tuple(mask), notes


def _finite_or_nan(values: np.ndarray, column, infinite: list) -> np.ndarray:
    """``values`` with +-inf replaced by NaN (a copy only when there is one); notes the column."""
    inf = np.isinf(values)
    if inf.any():
        values = np.where(inf, np.nan, values)
        infinite.append(f"{column} ({int(inf.sum())} values)")
    return values


def _level_codes(codes: np.ndarray, n_levels: int, max_levels: int) -> np.ndarray | None:
    """Map of old code -> new code keeping the ``max_levels`` most frequent levels (None: nothing to cap)."""
    if n_levels <= max_levels:
        return None
    counts = np.bincount(codes[codes >= 0], minlength=n_levels)
    keep = np.sort(np.argsort(-counts, kind="stable")[:max_levels])
    new = np.full(n_levels, max_levels, dtype=np.int64)  # "other"
    new[keep] = np.arange(max_levels)
    return new


def _clip_names(items: list[str], limit: int = 5) -> list[str]:
    return items[:limit] + ([f"... ({len(items) - limit} more)"] if len(items) > limit else [])


def encode_dataset(dataset) -> tuple[np.ndarray, tuple[bool, ...], tuple]:
    """:func:`encode_features` of ``dataset.X``, computed (and warned about) once per dataset object.

    The live loop evaluates one learner at a time on the same dataset; the encoding and its
    warnings do not repeat for every test.

    Returns
    -------
    X, nominal
        As :func:`encode_features`.
    notes : tuple of str
        What the encoding changed in the data (capped levels, ...): empty for most data;
        part of the fold store's key, so results of an older encoding are not reused.
    """
    cached = dataset.__dict__.get("_encoded_features")
    if cached is None:
        cached = _encode(dataset.X, max_levels=MAX_LEVELS, warn=True)
        object.__setattr__(dataset, "_encoded_features", cached)  # a cache on a frozen dataclass
    return cached


class FoldPreprocessor(TransformerMixin, BaseEstimator):
    """Impute, one-hot encode and scale; fitted on a training fold only (numpy, fast).

    Parameters
    ----------
    nominal : tuple of bool
        Which columns hold nominal codes (from :func:`encode_features`).
    scaling : {"none", "standard", "minmax"}
        Numeric scaling: none, standardisation (zero-variance columns are only
        centred), or min-max to [0, 1] clipped at transform time.

    Notes
    -----
    Numeric missing values (NaN and +-inf) get the training median (0 when a column is entirely
    missing); nominal ones the training mode (smallest code on ties).  Nominal
    values not seen in training encode as an all-zero block.  This does what
    ``ColumnTransformer(SimpleImputer, OneHotEncoder, StandardScaler)`` does, at a
    small fraction of its per-fold overhead, which dominates the cost of fast
    learners.
    """

    def __init__(self, nominal=(), scaling: str = "standard"):
        self.nominal = nominal
        self.scaling = scaling

    def fit(self, X, y=None):
        X = _inf_as_nan(np.asarray(X, dtype=float))
        if self.scaling not in SCALINGS:
            raise InputError(f"scaling must be one of {', '.join(SCALINGS)}, got {self.scaling!r}")
        mask = np.zeros(X.shape[1], dtype=bool)
        mask[: len(self.nominal)] = np.asarray(self.nominal, dtype=bool)[: X.shape[1]]
        self.mask_ = mask
        num = X[:, ~mask]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            med = np.nanmedian(num, axis=0) if num.shape[0] else np.zeros(num.shape[1])
        self.median_ = np.where(np.isnan(med), 0.0, med)
        filled = np.where(np.isnan(num), self.median_, num)
        if self.scaling == "standard":
            self.offset_ = filled.mean(axis=0) if len(filled) else np.zeros(num.shape[1])
            sd = filled.std(axis=0) if len(filled) else np.ones(num.shape[1])
            self.scale_ = np.where(sd > 0, sd, 1.0)
        elif self.scaling == "minmax":
            lo = filled.min(axis=0) if len(filled) else np.zeros(num.shape[1])
            hi = filled.max(axis=0) if len(filled) else np.ones(num.shape[1])
            self.offset_ = lo
            self.scale_ = np.where(hi > lo, hi - lo, 1.0)
        else:
            self.offset_ = np.zeros(num.shape[1])
            self.scale_ = np.ones(num.shape[1])
        self.categories_ = []
        self.modes_ = []
        for j in np.flatnonzero(mask):
            col = X[:, j]
            seen = col[~np.isnan(col)]
            cats, counts = np.unique(seen, return_counts=True)
            self.categories_.append(cats)
            self.modes_.append(cats[np.argmax(counts)] if len(cats) else np.nan)
        self.n_features_in_ = X.shape[1]
        return self

    def transform(self, X):
        X = _inf_as_nan(np.asarray(X, dtype=float))
        num = X[:, ~self.mask_]
        num = (np.where(np.isnan(num), self.median_, num) - self.offset_) / self.scale_
        if self.scaling == "minmax":
            num = np.clip(num, 0.0, 1.0)
        blocks = [num]
        for j, cats, mode in zip(np.flatnonzero(self.mask_), self.categories_, self.modes_):
            col = X[:, j]
            col = np.where(np.isnan(col), mode, col)
            blocks.append((col[:, None] == cats[None, :]).astype(float))
        return np.hstack(blocks) if blocks else np.zeros((len(X), 0))


def _inf_as_nan(X: np.ndarray) -> np.ndarray:
    return np.where(np.isinf(X), np.nan, X) if np.isinf(X).any() else X


def make_preprocessor(nominal=(), *, scaling: str = "standard") -> FoldPreprocessor:
    """Unfitted :class:`FoldPreprocessor` for a nominal-column mask."""
    if scaling not in SCALINGS:
        raise InputError(f"scaling must be one of {', '.join(SCALINGS)}, got {scaling!r}")
    return FoldPreprocessor(nominal=tuple(bool(v) for v in nominal), scaling=scaling)


def make_pipeline(recipe: LearnerRecipe, nominal=(), *, random_state: int | None):
    """Unfitted ``Pipeline(prep, model)`` for one learner (``nominal`` from :func:`encode_features`)."""
    from sklearn.pipeline import Pipeline

    return Pipeline([("prep", make_preprocessor(nominal, scaling=recipe.scaling)),
                     ("model", recipe.build(random_state=random_state))])


class FrameEncoder(TransformerMixin, BaseEstimator):
    """Raw features (DataFrame or array) -> the float matrix :func:`encode_features` gives.

    Fitted once on the training features: nominal columns (category, object, string, bool)
    keep their category vocabulary, so new data is coded exactly like the data the model
    was trained on; categories not seen at ``fit`` and missing values become NaN (imputed
    by :class:`FoldPreprocessor` with the training mode); numeric columns are cast to float
    with +-inf treated as missing.  Columns are matched by name (a DataFrame) or position
    (an array with as many columns).  A column with more than :data:`MAX_LEVELS` levels
    keeps its most frequent ones, like :func:`encode_features`; its other levels, seen or
    not, share the code ``MAX_LEVELS`` ("other", listed in ``capped_``).
    """

    def fit(self, X, y=None):
        frame = self._frame(X, fitting=True)
        self.columns_ = list(frame.columns)
        self.categories_ = {}
        self.capped_ = []
        for c in frame.columns:
            s = frame[c]
            if _is_nominal(s):
                cat = s.astype("category")
                levels = list(cat.cat.categories)
                kept = _level_codes(cat.cat.codes.to_numpy(), len(levels), MAX_LEVELS)
                if kept is not None:
                    levels = [lv for lv, code in zip(levels, kept) if code < MAX_LEVELS]
                    self.capped_.append(c)
                self.categories_[c] = levels
        self.nominal_ = tuple(c in self.categories_ for c in self.columns_)
        self.n_features_in_ = len(self.columns_)
        return self

    def transform(self, X):
        frame = self._frame(X, fitting=False)
        cols = []
        for c in self.columns_:
            s = frame[c]
            if c in self.categories_:
                index = {cat: float(i) for i, cat in enumerate(self.categories_[c])}
                v = s.astype(object).map(index).to_numpy(dtype=float, copy=True)  # unseen / missing -> NaN
                if c in getattr(self, "capped_", ()):
                    v[np.isnan(v) & s.notna().to_numpy()] = float(MAX_LEVELS)  # a level outside the kept ones
                cols.append(v)
            else:
                v = pd.to_numeric(s, errors="coerce").to_numpy(dtype=float, copy=True)
                v[~np.isfinite(v)] = np.nan
                cols.append(v)
        out = np.column_stack(cols) if cols else np.zeros((len(frame), 0))
        return np.ascontiguousarray(out, dtype=float)

    def _frame(self, X, *, fitting: bool) -> pd.DataFrame:
        if isinstance(X, pd.DataFrame):
            frame = X.copy()
            frame.columns = [str(c) for c in frame.columns]
        else:
            arr = np.asarray(X, dtype=object if np.asarray(X).dtype == object else None)
            if arr.ndim != 2:
                raise ValueError(f"Expected 2D array, got {arr.ndim}D array instead")
            names = [str(i) for i in range(arr.shape[1])] if fitting else self.columns_[: arr.shape[1]]
            if not fitting and arr.shape[1] != len(self.columns_):
                raise ValueError(f"X has {arr.shape[1]} features, but FrameEncoder is expecting "
                                 f"{len(self.columns_)} features as input")
            frame = pd.DataFrame(arr, columns=names)
            if fitting:
                for c in frame.columns:
                    converted = pd.to_numeric(frame[c], errors="coerce")
                    if converted.notna().sum() == frame[c].notna().sum():
                        frame[c] = converted
        if not fitting:
            missing = [c for c in self.columns_ if c not in frame.columns]
            if missing:
                raise ValueError(f"X lacks the column(s) the model was fitted on: {missing[:5]}")
        return frame


def _is_nominal(s: pd.Series) -> bool:
    return (isinstance(s.dtype, pd.CategoricalDtype) or s.dtype == object or pd.api.types.is_string_dtype(s)
            or pd.api.types.is_bool_dtype(s))


class RawPreprocessor(TransformerMixin, BaseEstimator):
    """:class:`FrameEncoder` then :class:`FoldPreprocessor`, for raw features (what a user predicts on).

    Parameters
    ----------
    scaling : {"none", "standard", "minmax"}
        Numeric scaling of the learner (:attr:`LearnerRecipe.scaling`).
    """

    def __init__(self, scaling: str = "standard"):
        self.scaling = scaling

    def fit(self, X, y=None):
        self.encoder_ = FrameEncoder().fit(X)
        self.prep_ = make_preprocessor(self.encoder_.nominal_, scaling=self.scaling).fit(self.encoder_.transform(X))
        self.n_features_in_ = self.encoder_.n_features_in_
        return self

    def transform(self, X):
        return self.prep_.transform(self.encoder_.transform(X))


def fit_quietly(model, X, y, *, what: str):
    """``model.fit(X, y)``, the learner's own warnings (a solver that did not converge, ...) kept off the user's
    stderr as the live tests keep them: the first is logged (INFO), with how many there were.  Returns the model."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X, y)
    if caught:
        first = caught[0]
        logger.info("%s: %d warning(s) from the learner, the first: %s: %s", what, len(caught),
                    first.category.__name__, " ".join(str(first.message).split())[:300])
    return model


def final_pipeline(recipe: LearnerRecipe, *, random_state: int | None):
    """Unfitted ``Pipeline(prep, model)`` on raw features: the model handed to users.

    Unlike :func:`make_pipeline` (used on folds already coded by :func:`encode_features`), its
    first step, :class:`RawPreprocessor`, learns the category vocabulary at ``fit`` and codes new
    data with it (unseen categories and +-inf as missing).
    """
    from sklearn.pipeline import Pipeline

    return Pipeline([("prep", RawPreprocessor(scaling=recipe.scaling)),
                     ("model", recipe.build(random_state=random_state))])
