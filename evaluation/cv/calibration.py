"""Machine-speed calibration: put run times measured on one machine on another machine's scale.

:func:`calibrate_machine` times a fixed reference workload (:data:`CALIBRATION_WORKLOAD`:
fixed-seed numpy and scikit-learn fits, a fraction of a second, median of 3).  Times measured on machine
A are put on machine B's scale by multiplying them by ``calib_B / calib_A``
(:func:`rescale_times`), e.g. when meta-data from two machines are joined or when a live run
predicts its own test times from meta-data built elsewhere.
"""

from __future__ import annotations

import math
import time
import warnings

import numpy as np
import pandas as pd

from algorank.metadata.errors import InputError

__all__ = ["CALIBRATION_WORKLOAD", "calibrate_machine", "rescale_times"]

#: Version tag of the calibration workload: times calibrated with different workloads do not compare.
CALIBRATION_WORKLOAD = ("v1: decision tree, logistic regression, 5-NN and a 10-tree forest on 3000x20 Gaussian data; "
                        "ten 300x300 matrix products")


def _reference_workload() -> None:
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(12345)
    X = rng.normal(size=(3000, 20))
    y = (X[:, 0] + X[:, 1] ** 2 - X[:, 2] * X[:, 3] + rng.normal(size=3000) > 1).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        DecisionTreeClassifier(random_state=0).fit(X, y)
        LogisticRegression(max_iter=200).fit(X, y)
        KNeighborsClassifier().fit(X[:2000], y[:2000]).predict(X[2000:])
        RandomForestClassifier(n_estimators=10, random_state=0, n_jobs=1).fit(X, y)
    a = rng.normal(size=(300, 300))
    for _ in range(10):
        a = np.tanh(a @ a / 300.0)


def calibrate_machine(*, repeats: int = 3) -> float:
    """Seconds the calling machine takes for a fixed reference workload (median of ``repeats`` runs).

    The workload (:data:`CALIBRATION_WORKLOAD`) is fixed-seed numpy and scikit-learn
    work of the kinds the portfolio does (a tree, a linear model, nearest neighbours,
    a small forest, a matrix product), a fraction of a second, run in the
    calling process with its thread settings (single-threaded for the build).  Times
    from machine A are put on machine B's scale with ``calib_B / calib_A``
    (:func:`rescale_times`).

    Parameters
    ----------
    repeats : int
        Runs timed; the median is returned.
    """
    if isinstance(repeats, bool) or not isinstance(repeats, (int, np.integer)) or repeats < 1:
        raise InputError(f"repeats must be an integer >= 1, got {repeats!r}")
    import sklearn.ensemble  # noqa: F401 - imports outside the timing
    import sklearn.linear_model  # noqa: F401
    import sklearn.neighbors  # noqa: F401

    times = []
    for _ in range(int(repeats)):
        t0 = time.perf_counter()
        _reference_workload()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def rescale_times(runs: pd.DataFrame, *, from_calibration: float, to_calibration: float) -> pd.DataFrame:
    """Put run times measured on one machine on another machine's scale.

    ``fit_time`` and ``predict_time`` are multiplied by ``to_calibration /
    from_calibration`` (both from :func:`calibrate_machine`, same workload version).

    Returns
    -------
    DataFrame
        A copy of ``runs`` with scaled times.
    """
    for name, v in (("from_calibration", from_calibration), ("to_calibration", to_calibration)):
        if not isinstance(v, (int, float, np.floating)) or not math.isfinite(v) or v <= 0:
            raise InputError(f"{name} must be a positive number of seconds, got {v!r}")
    factor = float(to_calibration) / float(from_calibration)
    out = runs.copy()
    for col in ("fit_time", "predict_time"):
        if col in out.columns:
            out[col] = out[col] * factor
    return out

