"""The new dataset's landmarkers, measured only when they pay for themselves.

A strategy that conditions on landmarkers (1-NN and decision-stump accuracies, see
:func:`algorank.evaluation.cv.metafeatures.dataset_meta_features`) plans better with them, but
they are paid from the budget like everything else: on BASEHOCK (1,993 rows x 4,862 features)
they take 5 s on a quiet machine and more than 10 s on a busy one.  :func:`measure_landmarks`
therefore

1. predicts their cost for a subsample of ``r`` rows from the prior datasets' recorded
   landmarker times (:func:`~algorank.evaluation.cv.metafeatures.expected_landmark_seconds`) and
   takes the largest ``r`` (2,000, 1,000, 500 or 250, at most the dataset's rows) whose
   prediction, times :data:`LANDMARK_SAFETY`, fits in :data:`LANDMARK_BUDGET_SHARE` of the budget;
   when not even 250 rows fit, the landmarkers are skipped (*predicted* cost);
2. computes them on that random subsample (the one-hot count and class entropy too) in a
   background thread, and waits at most that share of the budget: a computation still running
   then is abandoned (*measured* cost; the daemon thread finishes on its own, nothing waits
   for it) and the strategy plans without landmarkers.

``info["landmarks_skipped"]`` says why when they are skipped; ``landmark_seconds`` and
``landmark_rows`` record what was paid otherwise.  Without a budget they are computed in full.

They run with one BLAS/OpenMP thread, like the live tests: the 1-NN's distance computations use
OpenMP, whose threads spin while they wait for each other, and on a busy machine that makes the
landmarkers of a small dataset many times slower (with the same values either way).
"""

from __future__ import annotations

import logging
import math
import threading
import time

import numpy as np

__all__ = ["LANDMARK_BUDGET_SHARE", "LANDMARK_SAFETY", "LANDMARK_ROWS", "landmark_rows", "measure_landmarks"]

logger = logging.getLogger(__name__)

#: Share of the budget the landmarkers may take; beyond it (predicted or measured) they are skipped.
LANDMARK_BUDGET_SHARE = 0.1

#: The predicted cost times this must fit in the share (a busy machine is slower than the recorded runs).
LANDMARK_SAFETY = 2.0

#: Subsample sizes tried, largest first (2,000 is what the meta-data's landmarkers used at most).
LANDMARK_ROWS = (2000, 1000, 500, 250)

_KEEP_FROM_LOADER = ("n_instances", "n_features", "n_classes", "majority_fraction")


def landmark_rows(predict, n_rows: int, allowed: float, *, safety: float = LANDMARK_SAFETY) -> int | None:
    """The largest subsample of :data:`LANDMARK_ROWS` (capped at ``n_rows``) whose predicted seconds
    ``predict(rows)`` times ``safety`` fit in ``allowed`` seconds; None when none does.

    An unknown (NaN) prediction counts as fitting: nothing recorded says it is expensive, and the
    measured cost still stops it.
    """
    sizes = sorted({min(int(n_rows), r) for r in LANDMARK_ROWS}, reverse=True)
    for rows in sizes:
        seconds = float(predict(rows))
        if not math.isfinite(seconds) or seconds * safety <= allowed:
            return rows
    return None


def _subsample(data, rows: int, random_state: int):
    """``data`` restricted to ``rows`` random rows (all of them when it has no more); loader meta-features kept."""
    from algorank.evaluation.cv.datasets import LoadedDataset

    n = len(data.y)
    if rows >= n:
        return data
    keep = np.sort(np.random.default_rng(random_state).choice(n, size=rows, replace=False))
    return LoadedDataset(name=data.name, source=data.source, X=data.X.iloc[keep].reset_index(drop=True),
                         y=data.y.iloc[keep].reset_index(drop=True), target=data.target, classes=data.classes,
                         meta_features=dict(data.meta_features), task=getattr(data, "task", "classification"))


def measure_landmarks(info: dict, data, meta, *, budget: float | None, random_state: int = 0,
                      share: float = LANDMARK_BUDGET_SHARE, left: float | None = None, clock=time.perf_counter) -> None:
    """Add the dataset's landmarkers (and one-hot feature count, class entropy, ...) to ``info``.

    Parameters
    ----------
    info : dict
        The dataset's meta-features; updated in place.
    data : LoadedDataset
    meta : MetaDataset
        Prior runs: their datasets' recorded landmarker times predict the cost.
    budget : float or None
        The command's budget in seconds (None: compute in full, no limit).
    random_state : int
        Seed of the subsample and of the landmarkers' folds.
    share : float
        Share of ``budget`` they may take.
    left : float, optional
        Seconds left of the budget: they never take more than that.
    """
    from algorank.evaluation.cv.children import limit_threads
    from algorank.evaluation.cv.metafeatures import (dataset_meta_features, expected_landmark_seconds,
                                                     regression_meta_features)

    if getattr(data, "task", "classification") == "regression":  # the landmarkers as regressors, scored by R²
        dataset_meta_features = regression_meta_features  # noqa: F811
    if budget is None:
        start = clock()
        with limit_threads(1):  # one BLAS/OpenMP thread, like the live tests (module docstring)
            _update(info, dataset_meta_features(data, random_state=random_state))
        info["landmark_seconds"] = clock() - start
        return
    allowed = share * budget if left is None else min(share * budget, max(float(left), 0.0))
    if allowed <= 0:
        _skip(info, f"no time left of the {budget:g} s budget")
        return
    n, d = len(data.y), data.X.shape[1]
    rows = landmark_rows(lambda r: expected_landmark_seconds(meta.datasets, r, d), n, allowed)
    if rows is None:
        expected = expected_landmark_seconds(meta.datasets, min(n, LANDMARK_ROWS[-1]), d)
        _skip(info, f"expected {expected:.2g} s on {min(n, LANDMARK_ROWS[-1])} rows (x{LANDMARK_SAFETY:g} for safety), "
                    f"more than {share:.0%} of the {budget:g} s budget")
        return
    sample = _subsample(data, rows, random_state)
    box: dict = {}

    def work():
        try:
            with limit_threads(1):  # in this thread: OpenMP's thread count is set per thread
                box["mf"] = dataset_meta_features(sample, max_rows=rows, random_state=random_state)
        except Exception as exc:  # noqa: BLE001 - landmarkers are optional: plan without them
            box["error"] = exc

    start = clock()
    thread = threading.Thread(target=work, name="algorank-landmarkers", daemon=True)
    thread.start()
    thread.join(allowed)
    seconds = clock() - start
    if thread.is_alive():
        _skip(info, f"still running after {seconds:.2g} s, {share:.0%} of the {budget:g} s budget: abandoned")
        return
    if "error" in box:
        _skip(info, f"failed: {box['error']}")
        return
    _update(info, box["mf"])
    info["landmark_seconds"] = seconds
    info["landmark_rows"] = int(min(rows, n))


def _update(info: dict, mf: dict) -> None:
    info.update({k: v for k, v in mf.items() if k not in _KEEP_FROM_LOADER})


def _skip(info: dict, why: str) -> None:
    info["landmarks_skipped"] = why
    logger.info("landmarkers skipped: %s", why)
