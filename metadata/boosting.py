"""Gradient-boosting libraries (LightGBM, XGBoost, CatBoost) as inert, single-threaded learners.

Three pieces:

* :class:`BoostingClassifier`, a scikit-learn classifier around one of the three libraries (and
  :class:`BoostingRegressor`, its regression counterpart, with the same parameter rules).  It
  encodes the labels itself (so a training part that lacks a class, or string labels, work the same
  for every library), sets the library's thread count from ``n_jobs`` (one thread unless told
  otherwise: left alone, these libraries take every core), silences the library, keeps CatBoost from
  writing its ``catboost_info`` folder, and, where a published configuration relies on it, stops
  early with the library's own early stopping on a holdout carved from the training data it is given
  (:data:`EARLY_STOPPING`).
* The inert-parameter rules of the three libraries (:data:`LIBRARY_PARAMS`): the parameters data may
  set, each with a closed value type (integer, real, boolean or a fixed set of choices), and
  :data:`LIBRARY_FORCED`, the ones algorank sets itself.  File, directory, callback, thread, device
  and logging parameters are in neither list, so data can never set them.
* :func:`library_available` and :data:`BOOSTING_EXTRA`: whether a library can be imported without
  importing it, and the install command that brings all three.

The libraries are imported only when a model is fitted.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import os
import sys
from typing import Any, Mapping

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin

from .errors import InputError
from .text import escape

__all__ = ["BoostingClassifier", "BoostingRegressor", "LIBRARIES", "LIBRARY_PARAMS", "LIBRARY_FORCED", "EARLY_STOPPING",
           "BOOSTING_EXTRA", "library_available", "check_library_params", "autogluon_holdout_fraction",
           "autogluon_patience", "library_of_class"]

#: The libraries :class:`BoostingClassifier` wraps.
LIBRARIES = ("lightgbm", "xgboost", "catboost")
#: The install command that brings the three libraries.
BOOSTING_EXTRA = "pip install 'algorank[boosting]'"
#: Early-stopping protocols a configuration may ask for (None: the configured number of trees).
EARLY_STOPPING = ("autogluon",)
_MAX_INT = 10 ** 6

_INT, _REAL, _BOOL = "int", "real", "bool"

#: Parameters data may set, per library, with their closed value types: ``"int"``, ``"real"``,
#: ``"bool"`` or a tuple of the allowed choices.  Every other parameter is refused.
LIBRARY_PARAMS: Mapping[str, Mapping[str, Any]] = {
    "lightgbm": {
        "boosting_type": ("gbdt", "dart", "rf"), "num_leaves": _INT, "max_depth": _INT, "learning_rate": _REAL,
        "n_estimators": _INT, "subsample_for_bin": _INT, "class_weight": ("balanced", None),
        "min_split_gain": _REAL, "min_child_weight": _REAL, "min_child_samples": _INT, "subsample": _REAL,
        "subsample_freq": _INT, "colsample_bytree": _REAL, "reg_alpha": _REAL, "reg_lambda": _REAL,
        "max_bin": _INT, "extra_trees": _BOOL, "path_smooth": _REAL, "min_data_per_group": _INT,
        "cat_smooth": _REAL, "max_cat_to_onehot": _INT,
    },
    "xgboost": {
        "max_depth": _INT, "max_leaves": _INT, "max_bin": _INT, "grow_policy": ("depthwise", "lossguide"),
        "learning_rate": _REAL, "n_estimators": _INT, "booster": ("gbtree", "dart"),
        "tree_method": ("hist", "approx", "exact", "auto"), "gamma": _REAL, "min_child_weight": _REAL,
        "max_delta_step": _REAL, "subsample": _REAL, "sampling_method": ("uniform",), "colsample_bytree": _REAL,
        "colsample_bylevel": _REAL, "colsample_bynode": _REAL, "reg_alpha": _REAL, "reg_lambda": _REAL,
        "scale_pos_weight": _REAL, "num_parallel_tree": _INT, "max_cat_to_onehot": _INT,
    },
    "catboost": {
        "iterations": _INT, "learning_rate": _REAL, "depth": _INT, "l2_leaf_reg": _REAL,
        "grow_policy": ("SymmetricTree", "Depthwise", "Lossguide"), "max_ctr_complexity": _INT,
        "one_hot_max_size": _INT, "border_count": _INT, "random_strength": _REAL, "bagging_temperature": _REAL,
        "bootstrap_type": ("Bayesian", "Bernoulli", "MVS", "No"), "subsample": _REAL, "min_data_in_leaf": _INT,
        "max_leaves": _INT, "rsm": _REAL, "leaf_estimation_iterations": _INT,
        "auto_class_weights": ("Balanced", "SqrtBalanced", None),
    },
}

#: Parameters algorank sets itself for each library (``{threads}`` is the thread count of a test);
#: a value from data is refused, and these values always win.
LIBRARY_FORCED: Mapping[str, Mapping[str, Any]] = {
    "lightgbm": {"n_jobs": "{threads}", "verbose": -1},
    "xgboost": {"n_jobs": "{threads}", "verbosity": 0, "device": "cpu"},
    "catboost": {"thread_count": "{threads}", "allow_writing_files": False, "logging_level": "Silent",
                 "save_snapshot": False},
}


def library_of_class(cls) -> str | None:
    """The wrapped library a class belongs to (``"lightgbm"`` for ``lightgbm.sklearn.LGBMClassifier``), else None."""
    root = (getattr(cls, "__module__", "") or "").split(".")[0]
    return root if root in LIBRARIES else None


def library_available(name: str) -> bool:
    """Whether ``name`` can be imported, without importing it (a ``None`` entry in ``sys.modules`` is
    Python's mark for a module that must not be imported)."""
    if name in sys.modules:
        return sys.modules[name] is not None
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _import_library(name: str):
    if not library_available(name):
        raise ImportError(f"{name} is not installed; {BOOSTING_EXTRA} installs it")
    return importlib.import_module(name)


def _closed(value, kind) -> bool:
    if kind == _BOOL:
        return isinstance(value, bool)
    if kind == _INT:
        return isinstance(value, int) and not isinstance(value, bool) and abs(value) <= _MAX_INT
    if kind == _REAL:
        return (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
                and abs(value) <= _MAX_INT)
    return any(value is c or (isinstance(value, str) and value == c) for c in kind)


def check_library_params(library: str, params: Mapping[str, Any] | None, *, owner: str | None = None) -> dict:
    """Check parameters from data for one boosting library; return them as a new dict.

    Every key must be one of :data:`LIBRARY_PARAMS` ``[library]`` and its value of that parameter's
    closed type: an integer, a finite real, a boolean or one of a fixed set of choices.  Threads,
    logging, devices, files, directories, callbacks and everything else the table does not name are
    refused (algorank sets the first ones itself, :data:`LIBRARY_FORCED`).

    Parameters
    ----------
    library : {"lightgbm", "xgboost", "catboost"}
    params : mapping or None
    owner : str, optional
        Name used in messages (defaults to the library).

    Raises
    ------
    InputError
        An unknown library, or the first refused parameter.
    """
    if library not in LIBRARY_PARAMS:
        raise InputError(f"library must be one of {', '.join(LIBRARIES)}; got {escape(repr(library))}")
    allowed = LIBRARY_PARAMS[library]
    who = owner or library
    if params is None:
        return {}
    if not isinstance(params, Mapping):
        raise InputError(f"bad parameters for {who}: params must be a JSON object")
    out = {}
    for key, value in params.items():
        where = f"bad parameters for {who}: {escape(str(key))!r}"
        if not isinstance(key, str) or key not in allowed:
            forced = " (algorank sets it itself)" if key in LIBRARY_FORCED[library] else ""
            raise InputError(f"{where} cannot be set from data{forced}; settable: {', '.join(sorted(allowed))}")
        kind = allowed[key]
        if not _closed(value, kind):
            want = (f"one of {', '.join(map(str, kind))}" if isinstance(kind, tuple)
                    else {"int": "an integer", "real": "a finite number", "bool": "a boolean"}[kind])
            raise InputError(f"{where} must be {want}")
        out[key] = value
    return out


def forced_values(library: str, threads: int) -> dict:
    """:data:`LIBRARY_FORCED` ``[library]`` with the thread count filled in."""
    return {k: (int(threads) if v == "{threads}" else v) for k, v in LIBRARY_FORCED[library].items()}


def autogluon_holdout_fraction(n_rows: int) -> float:
    """AutoGluon's default holdout fraction for ``n_rows`` training rows (its ``default_holdout_frac``):
    ``max(0.1, min(0.2, 500 / n))`` below 5,000 rows, else ``max(0.01, min(0.1, 2500 / n))``."""
    n = max(int(n_rows), 1)
    if n < 5000:
        return max(0.1, min(0.2, 500.0 / n))
    return max(0.01, min(0.1, 2500.0 / n))


def autogluon_patience(n_rows: int) -> int:
    """AutoGluon's early-stopping patience for ``n_rows`` training rows (its ``simple`` rule, the lower
    bound of its adaptive one): ``max(round(300 * min(1, 10000 / n)), 20)``."""
    n = max(int(n_rows), 1)
    modifier = 1.0 if n <= 10000 else 10000.0 / n
    return max(round(modifier * 300), 20)


def _threads(n_jobs) -> int:
    if n_jobs is None:
        return 1
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0:
        raise ValueError(f"n_jobs must be None or a non-zero integer; got {n_jobs!r}")
    n_jobs = int(n_jobs)
    return n_jobs if n_jobs > 0 else max(1, (os.cpu_count() or 1) + 1 + n_jobs)


def _holdout(y: np.ndarray, fraction: float, rng: np.random.RandomState) -> tuple[np.ndarray, np.ndarray]:
    """Stratified holdout indices (fit, stop): each class keeps at least one row in the fit part."""
    fit_idx, stop_idx = [], []
    for c in np.unique(y):
        rows = np.flatnonzero(y == c)
        rng.shuffle(rows)
        k = min(int(round(fraction * len(rows))), len(rows) - 1)
        stop_idx.append(rows[:k])
        fit_idx.append(rows[k:])
    fit_idx, stop_idx = np.sort(np.concatenate(fit_idx)), np.sort(np.concatenate(stop_idx))
    return fit_idx, stop_idx


class _LibraryModel:
    """What the boosting classifier and regressor share: the library's seed and the trees a fit kept."""

    def _seed(self):
        rs = self.random_state
        if rs is None:
            return None
        if isinstance(rs, np.random.RandomState):
            return int(rs.randint(0, 2 ** 31 - 1))
        return int(rs)

    def _iterations(self, model, stopped: bool) -> int:
        if self.library == "lightgbm":
            best = getattr(model, "best_iteration_", None)
            return int(best) if stopped and best else int(model.n_estimators_)
        if self.library == "xgboost":
            if stopped and getattr(model, "best_iteration", None) is not None:
                return int(model.best_iteration) + 1
            return int(model.get_booster().num_boosted_rounds())
        return int(model.tree_count_)


class BoostingClassifier(_LibraryModel, ClassifierMixin, BaseEstimator):
    """A LightGBM, XGBoost or CatBoost classifier with inert parameters and a fixed thread count.

    Parameters
    ----------
    library : {"lightgbm", "xgboost", "catboost"}
        The library (imported at ``fit``).
    params : dict, optional
        Parameters of the library's scikit-learn interface (``LGBMClassifier``, ``XGBClassifier``,
        ``CatBoostClassifier``), checked by :func:`check_library_params`: closed value types only, and
        never threads, files, directories, callbacks or logging.
    early_stopping : {None, "autogluon"}
        None: train the configured number of trees.  ``"autogluon"``: AutoGluon's protocol with the
        library's own early stopping: a stratified holdout of :func:`autogluon_holdout_fraction` of
        the rows given to ``fit`` is set aside, the model is trained on the rest for at most the
        configured number of trees, stopping after :func:`autogluon_patience` rounds without a lower
        classification error on the holdout, and the best iteration is kept (the model is not refit
        on the holdout).
    n_jobs : int, optional
        Threads of the library; None means one.
    random_state : int, optional
        Seed of the library and of the holdout split.

    Attributes
    ----------
    classes_ : ndarray
        The class labels.
    model_ : object
        The fitted library model (trained on encoded labels ``0 .. n_classes - 1``).
    n_iter_ : int
        Trees (boosting rounds) kept: the best iteration under early stopping.

    References
    ----------
    Ke et al., "LightGBM: A Highly Efficient Gradient Boosting Decision Tree", NeurIPS 2017.
    Chen and Guestrin, "XGBoost: A Scalable Tree Boosting System", KDD 2016.
    Prokhorenkova et al., "CatBoost: unbiased boosting with categorical features", NeurIPS 2018.
    Erickson et al., "AutoGluon-Tabular: Robust and Accurate AutoML for Structured Data", 2020.
    """

    def __init__(self, library: str = "lightgbm", params: dict | None = None, early_stopping: str | None = None,
                 n_jobs: int | None = None, random_state: int | None = None):
        self.library = library
        self.params = params
        self.early_stopping = early_stopping
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _build(self, n_classes: int, threads: int, seed, patience):
        lib = _import_library(self.library)
        params = check_library_params(self.library, self.params, owner=f"{self.library} learner")
        params.update(forced_values(self.library, threads))
        if self.library == "lightgbm":
            if seed is not None:
                params["random_state"] = seed
            if patience is not None:
                params["metric"] = "binary_error" if n_classes == 2 else "multi_error"
            return lib.LGBMClassifier(**params)
        if self.library == "xgboost":
            if seed is not None:
                params["random_state"] = seed
            if patience is not None:
                params["eval_metric"] = "error" if n_classes == 2 else "merror"
                params["early_stopping_rounds"] = patience
            return lib.XGBClassifier(**params)
        if seed is not None:
            params["random_seed"] = seed
        if patience is not None:
            params["eval_metric"] = "Accuracy"
        return lib.CatBoostClassifier(**params)

    def fit(self, X, y):
        """Fit on ``X`` (numeric matrix) and ``y`` (any labels); returns ``self``."""
        from sklearn.preprocessing import LabelEncoder

        if self.early_stopping not in (None, *EARLY_STOPPING):
            raise ValueError(f"early_stopping must be None or one of {EARLY_STOPPING}; got {self.early_stopping!r}")
        X = np.asarray(X, dtype=float)
        if X.ndim != 2:
            raise ValueError(f"X must be a 2-d matrix; got shape {X.shape}")
        encoder = LabelEncoder()
        codes = encoder.fit_transform(np.asarray(y))
        self.classes_ = encoder.classes_
        self.n_features_in_ = X.shape[1]
        n_classes = len(self.classes_)
        if n_classes < 2:
            raise ValueError("the training data hold a single class; a classifier needs at least two")
        threads, seed = _threads(self.n_jobs), self._seed()
        fit_idx = stop_idx = None
        patience = None
        if self.early_stopping == "autogluon":
            rng = np.random.RandomState(0 if seed is None else seed)
            fit_idx, stop_idx = _holdout(codes, autogluon_holdout_fraction(len(codes)), rng)
            if len(stop_idx) == 0:
                fit_idx = stop_idx = None
            else:
                patience = autogluon_patience(len(fit_idx))
        model = self._build(n_classes, threads, seed, patience)
        if patience is None:
            model.fit(X, codes)
        else:
            Xf, yf, Xs, ys = X[fit_idx], codes[fit_idx], X[stop_idx], codes[stop_idx]
            if self.library == "lightgbm":
                import inspect

                lgb = importlib.import_module("lightgbm")
                stop = [lgb.early_stopping(patience, verbose=False)]
                if "eval_X" in inspect.signature(model.fit).parameters:  # LightGBM 4.7 renamed eval_set
                    model.fit(Xf, yf, eval_X=(Xs,), eval_y=(ys,), callbacks=stop)
                else:
                    model.fit(Xf, yf, eval_set=[(Xs, ys)], callbacks=stop)
            elif self.library == "xgboost":
                model.fit(Xf, yf, eval_set=[(Xs, ys)], verbose=False)
            else:
                model.fit(Xf, yf, eval_set=(Xs, ys), early_stopping_rounds=patience, use_best_model=True)
        self.model_ = model
        self.n_iter_ = self._iterations(model, patience is not None)
        return self

    def predict_proba(self, X):
        """Class probabilities, one column per entry of ``classes_``."""
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "model_")
        proba = np.asarray(self.model_.predict_proba(np.asarray(X, dtype=float)), dtype=float)
        if proba.ndim == 1:  # pragma: no cover - every wrapped library returns one column per class
            proba = np.column_stack([1.0 - proba, proba])
        return proba

    def predict(self, X):
        """Predicted class labels."""
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


class BoostingRegressor(_LibraryModel, RegressorMixin, BaseEstimator):
    """A LightGBM, XGBoost or CatBoost regressor with inert parameters and a fixed thread count.

    The regression counterpart of :class:`BoostingClassifier`: the same parameter rules
    (:func:`check_library_params`), the same forced values (one thread unless ``n_jobs`` says otherwise,
    the library silenced, no files written) and the library's squared-error objective.  It trains the
    configured number of trees (no early stopping).

    Parameters
    ----------
    library : {"lightgbm", "xgboost", "catboost"}
        The library (imported at ``fit``).
    params : dict, optional
        Parameters of the library's scikit-learn interface (``LGBMRegressor``, ``XGBRegressor``,
        ``CatBoostRegressor``), checked by :func:`check_library_params`.
    n_jobs : int, optional
        Threads of the library; None means one.
    random_state : int, optional
        Seed of the library.

    Attributes
    ----------
    model_ : object
        The fitted library model.
    n_iter_ : int
        Trees (boosting rounds) trained.

    References
    ----------
    Ke et al., "LightGBM: A Highly Efficient Gradient Boosting Decision Tree", NeurIPS 2017.
    Chen and Guestrin, "XGBoost: A Scalable Tree Boosting System", KDD 2016.
    Prokhorenkova et al., "CatBoost: unbiased boosting with categorical features", NeurIPS 2018.
    """

    def __init__(self, library: str = "lightgbm", params: dict | None = None, n_jobs: int | None = None,
                 random_state: int | None = None):
        self.library = library
        self.params = params
        self.n_jobs = n_jobs
        self.random_state = random_state

    def fit(self, X, y):
        """Fit on ``X`` (numeric matrix) and ``y`` (numbers); returns ``self``."""
        X = np.asarray(X, dtype=float)
        if X.ndim != 2:
            raise ValueError(f"X must be a 2-d matrix; got shape {X.shape}")
        y = np.asarray(y, dtype=float).ravel()
        lib = _import_library(self.library)
        params = check_library_params(self.library, self.params, owner=f"{self.library} learner")
        params.update(forced_values(self.library, _threads(self.n_jobs)))
        seed = self._seed()
        if seed is not None:
            params["random_seed" if self.library == "catboost" else "random_state"] = seed
        cls = {"lightgbm": "LGBMRegressor", "xgboost": "XGBRegressor", "catboost": "CatBoostRegressor"}[self.library]
        model = getattr(lib, cls)(**params)
        model.fit(X, y)
        self.model_ = model
        self.n_features_in_ = X.shape[1]
        self.n_iter_ = self._iterations(model, False)
        return self

    def predict(self, X):
        """Predicted target values."""
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "model_")
        return np.asarray(self.model_.predict(np.asarray(X, dtype=float)), dtype=float).ravel()
