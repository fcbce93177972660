"""Fit every learner of the modern portfolio, as published, on two tiny datasets (binary and three-class).

Checks that each configuration builds, fits, gives class probabilities that sum to one and does no worse
than a constant on its own training rows, and that no library writes a file.  It takes minutes of CPU
(the published configurations hold thousands of rounds or hundreds of trees), so it is a script to run
on demand after upgrading LightGBM, XGBoost, CatBoost or scikit-learn, not part of the unit tests
(which fit one configuration of each kind)::

    python tests/benchmarks/check_portfolio_fits.py
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

import numpy as np


def tiny(n: int = 60, classes: int = 2, seed: int = 0):
    """``n`` rows of 4 features; the classes are quantile bins of a linear score (as in the unit tests)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    score = X[:, 0] + 0.5 * X[:, 1]
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, classes + 1)[1:-1]))
    return X, y


def main() -> int:
    from algorank.metadata.learners import make_estimator
    from algorank.metadata.portfolio import portfolio_ids

    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        for classes in (2, 3):
            X, y = tiny(classes=classes)
            for lid in portfolio_ids():
                start = time.process_time()
                try:
                    est = make_estimator(lid, random_state=0).fit(X, y)
                    proba = est.predict_proba(X)
                    ok = proba.shape == (len(y), classes) and np.allclose(proba.sum(axis=1), 1)
                    ok = ok and (est.predict(X) == y).mean() >= 1 / classes
                except Exception as exc:  # report every learner, then fail
                    ok, proba = False, exc
                cpu = time.process_time() - start
                print(f"{classes} classes  {lid:<32} {'ok' if ok else 'FAILED'}  {cpu:6.2f} s CPU", flush=True)
                if not ok:
                    failures.append((classes, lid))
        if os.listdir(tmp):
            print(f"files written: {os.listdir(tmp)}")
            failures.append(("files", tmp))
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
