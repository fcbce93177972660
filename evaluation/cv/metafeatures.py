"""Meta-features and landmarkers of a dataset: what the meta-data build records and ``recommend`` measures live.

:func:`dataset_meta_features` gives the loader's meta-features (``n_instances``,
``n_features``, ``n_classes``, ``majority_fraction``, ``n_nominal_features``,
``missing_fraction``, ``dropped_rows``) plus ``n_features_onehot`` (columns after one-hot
encoding the nominal features), ``nominal_fraction``, ``class_entropy`` (bits) and
``class_entropy_normalized`` (divided by log2 of the number of classes), and two landmarkers on
a random subsample of at most 2,000 rows (seed 0) scored by stratified 5-fold CV with the
evaluator's preprocessing: ``landmark_1nn`` (1-NN accuracy) and ``landmark_stump`` (depth-1
decision tree accuracy), their CPU cost ``landmark_1nn_time`` / ``landmark_stump_time``
(seconds for the 5 folds) and ``landmark_rows``.

:func:`expected_landmark_seconds` predicts their cost on a new dataset from the times recorded
in a meta-dataset, so that a budgeted ``recommend`` can decide whether to pay for them.
"""

from __future__ import annotations

import math
import time
import warnings

import numpy as np

__all__ = ["dataset_meta_features", "regression_meta_features", "expected_landmark_seconds", "LANDMARK_ROWS"]

#: Rows of the random subsample the landmarkers run on.
LANDMARK_ROWS = 2000
_FOLDS = 5
_SEED = 0


def _entropy_bits(counts: np.ndarray) -> float:
    p = counts[counts > 0] / counts.sum()
    return float(-(p * np.log2(p)).sum()) if len(p) else 0.0


def _landmark(X: np.ndarray, nominal: tuple, y: np.ndarray, estimator, *, folds: int, random_state: int,
              regression: bool = False):
    """(score, seconds) of ``estimator`` behind the evaluator's preprocessing: its accuracy under stratified
    k-fold CV, or (``regression``) the R² of its pooled out-of-fold predictions under shuffled k-fold CV."""
    from sklearn.metrics import r2_score
    from sklearn.model_selection import KFold, StratifiedKFold
    from sklearn.pipeline import Pipeline

    from algorank.evaluation.cv.preprocessing import make_preprocessor

    t0 = time.perf_counter()
    pred = np.empty(len(y), dtype=float if regression else y.dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cv = (KFold if regression else StratifiedKFold)(n_splits=folds, shuffle=True, random_state=random_state)
        for train, test in cv.split(X, y):
            pipe = Pipeline([("prep", make_preprocessor(nominal, scaling="standard")), ("model", estimator)])
            pipe.fit(X[train], y[train])
            pred[test] = pipe.predict(X[test])
    score = float(r2_score(y, pred)) if regression else int(np.sum(pred == y)) / len(y)
    return score, time.perf_counter() - t0


def _with_landmarks(data, y: np.ndarray, landmarkers, *, target_features: dict, regression: bool, max_rows: int,
                    random_state: int) -> dict:
    """The loader's meta-features, the one-hot and nominal columns, ``target_features``, then the landmarkers.

    ``landmarkers`` are ``(name, estimator)`` pairs, each scored on the same random subsample of at most
    ``max_rows`` rows (NaN, 0 seconds, where the subsample is too small for 2 folds or has a single value).
    """
    from algorank.evaluation.cv.preprocessing import encode_features, make_preprocessor

    mf = dict(data.meta_features)
    X, nominal = encode_features(data.X)
    n, d = X.shape
    onehot = make_preprocessor(nominal, scaling="none").fit(X).transform(X[:1]).shape[1] if n else 0
    mf.update({"n_features_onehot": int(onehot), "nominal_fraction": float(sum(nominal) / d) if d else 0.0,
               **target_features})
    rows = np.arange(n)
    if n > max_rows:
        rows = np.sort(np.random.default_rng(random_state).choice(n, size=max_rows, replace=False))
    Xs, ys = X[rows], y[rows]
    # StratifiedKFold needs n_splits <= the largest class
    folds = min(_FOLDS, len(rows) if regression else int(np.bincount(ys).max()))
    mf["landmark_rows"] = int(len(rows))
    for name, est in landmarkers:
        if folds >= 2 and len(np.unique(ys)) >= 2:
            score, sec = _landmark(Xs, nominal, ys, est, folds=folds, random_state=random_state, regression=regression)
        else:
            score, sec = math.nan, 0.0
        mf[name], mf[f"{name}_time"] = float(score), float(sec)
    return mf


def expected_landmark_seconds(datasets, n_rows: float, n_features: float) -> float:
    """Seconds :func:`dataset_meta_features` is expected to take on ``n_rows`` x ``n_features`` data.

    ``a + b r^2 d + c r d`` (``r`` landmarker rows, at most 2,000; ``d`` one-hot features; 1-NN
    compares every pair of rows, the stump sorts every feature), fitted by non-negative least
    squares to the recorded landmarker times (``landmark_1nn_time + landmark_stump_time``) of the
    prior datasets, so the largest of them pin it down (broad without BASEHOCK predicts 3.4 s for
    its 1,993 x 4,862; recorded 4.1 s).  NaN when fewer than 5 prior datasets record the times.

    Parameters
    ----------
    datasets : DataFrame
        A meta-dataset's datasets table.
    n_rows, n_features : float
        The new dataset's rows and features (after one-hot encoding when known).
    """
    from scipy.optimize import nnls

    if not {"landmark_1nn_time", "landmark_stump_time"} <= set(datasets.columns):
        return math.nan
    t = datasets["landmark_1nn_time"].to_numpy(dtype=float) + datasets["landmark_stump_time"].to_numpy(dtype=float)
    rows = (datasets["landmark_rows"] if "landmark_rows" in datasets.columns
            else np.minimum(datasets["n_instances"], LANDMARK_ROWS)).to_numpy(dtype=float)
    cols = (datasets["n_features_onehot"] if "n_features_onehot" in datasets.columns
            else datasets["n_features"]).to_numpy(dtype=float)
    ok = np.isfinite(t) & (t > 0) & np.isfinite(rows) & (rows > 0) & np.isfinite(cols) & (cols > 0)
    if ok.sum() < 5 or not (n_rows > 0 and n_features > 0):
        return math.nan
    r, d = rows[ok], cols[ok]
    coef, _ = nnls(np.column_stack([np.ones(len(r)), r * r * d, r * d]), t[ok])
    r_new = min(float(n_rows), LANDMARK_ROWS)
    return float(coef @ np.array([1.0, r_new * r_new * n_features, r_new * n_features]))


def dataset_meta_features(data, *, max_rows: int = LANDMARK_ROWS, random_state: int = _SEED) -> dict:
    """Meta-features of a :class:`~algorank.evaluation.cv.datasets.LoadedDataset` (see the module docstring).

    Parameters
    ----------
    data : LoadedDataset
    max_rows : int
        Rows of the random subsample the landmarkers run on.
    random_state : int
        Seed of the subsample and the landmarkers' folds.

    Returns
    -------
    dict
        The loader's meta-features plus ``n_features_onehot``, ``nominal_fraction``,
        ``class_entropy``, ``class_entropy_normalized``, ``landmark_1nn``,
        ``landmark_stump`` (NaN when the data is too small for 2-fold CV), their
        ``*_time`` and ``landmark_rows``.
    """
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.tree import DecisionTreeClassifier

    y = data.y_codes
    k = len(data.classes)
    entropy = _entropy_bits(np.bincount(y, minlength=k).astype(float))
    return _with_landmarks(data, y,
                           (("landmark_1nn", KNeighborsClassifier(n_neighbors=1)),
                            ("landmark_stump", DecisionTreeClassifier(max_depth=1, random_state=random_state))),
                           target_features={"class_entropy": entropy,
                                            "class_entropy_normalized": entropy / math.log2(k) if k > 1 else 0.0},
                           regression=False, max_rows=max_rows, random_state=random_state)


def regression_meta_features(data, *, max_rows: int = LANDMARK_ROWS, random_state: int = _SEED) -> dict:
    """Meta-features of a regression :class:`~algorank.evaluation.cv.datasets.LoadedDataset`.

    The loader's meta-features (``n_classes = 0``, ``majority_fraction = 0.0``, the R² of predicting the
    mean; ``target_std``, ``target_skewness``) plus ``n_features_onehot``, ``nominal_fraction`` and the
    two landmarkers of :func:`dataset_meta_features` as regressors, scored by R² of the out-of-fold
    predictions (shuffled 5-fold CV on a random subsample of at most ``max_rows`` rows):
    ``landmark_1nn`` (1-nearest-neighbour regression), ``landmark_stump`` (depth-1 regression tree),
    their ``*_time`` and ``landmark_rows``.  The columns keep the classification names so that
    :func:`expected_landmark_seconds` reads their cost the same way; a meta-dataset holds one task, so
    an accuracy and an R² never share a column.

    Parameters
    ----------
    data : LoadedDataset
        A dataset loaded with ``task="regression"``.
    max_rows : int
        Rows of the random subsample the landmarkers run on.
    random_state : int
        Seed of the subsample and the landmarkers' folds.

    Returns
    -------
    dict
    """
    from sklearn.neighbors import KNeighborsRegressor
    from sklearn.tree import DecisionTreeRegressor

    return _with_landmarks(data, data.y.to_numpy(dtype=float),
                           (("landmark_1nn", KNeighborsRegressor(n_neighbors=1)),
                            ("landmark_stump", DecisionTreeRegressor(max_depth=1, random_state=random_state))),
                           target_features={}, regression=True, max_rows=max_rows, random_state=random_state)
