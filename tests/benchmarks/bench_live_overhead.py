"""Measure the per-test overhead of a live test (run on demand; result -> algorank.recommender.kernel.time_model.LIVE_OVERHEAD).

Every portfolio learner is run with the live default evaluation (stratified 5-fold, one
repetition, in-process) on four datasets shipped with scikit-learn that are NOT in the
live benchmark set (iris, wine, breast_cancer, digits).  For each test the overhead is
``wall-clock seconds - 5 x mean fit time per fold`` (prediction, scoring and
bookkeeping); the constant is the median over all tests.  Raw rows go to ``--out``.

Usage::

    python tests/benchmarks/bench_live_overhead.py [--out overhead.csv]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import pandas as pd  # noqa: E402

from algorank.evaluation.cv.datasets import load_dataset  # noqa: E402
from algorank.evaluation.cv.evaluator import Evaluator  # noqa: E402
from algorank.recommender.kernel.time_model import calibrate_overhead  # noqa: E402
from algorank.metadata.learners import learner_ids, short_name  # noqa: E402

DATASETS = ["sklearn:iris", "sklearn:wine", "sklearn:breast_cancer", "sklearn:digits"]


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    ap.add_argument("--datasets", nargs="*", default=DATASETS)
    args = ap.parse_args(argv)
    ev = Evaluator(scheme="cv", cv=5, repeats=1, random_state=0, progress=False)
    rows = []
    for spec in args.datasets:
        data = load_dataset(spec)
        for l in learner_ids():
            s = time.perf_counter()
            r = ev.evaluate(data, [l]).summary.iloc[0]
            sec = time.perf_counter() - s
            rows.append({"dataset": spec, "learner": short_name(l), "seconds": sec, "status": str(r["status"]),
                         "fit_time_mean": float(r["fit_time_mean"]), "predict_time_mean": float(r["predict_time_mean"]),
                         "folds": int(r["folds"])})
    df = pd.DataFrame(rows)
    df["overhead"] = df["seconds"] - df["folds"] * df["fit_time_mean"]
    df["fixed"] = df["overhead"] - df["folds"] * df["predict_time_mean"]
    pd.set_option("display.width", 200)
    print(df.groupby("dataset")[["seconds", "overhead", "fixed"]].median().round(3).to_string())
    print(f"overhead (median over {len(df)} tests) = "
          f"{calibrate_overhead(df['seconds'], df['fit_time_mean'], df['folds']):.3f} s; "
          f"of which fixed (not predict) median {df['fixed'].median():.3f} s")
    if args.out:
        df.to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
