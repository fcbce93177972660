"""Fit and predict seconds of every modern-portfolio learner on one fold, one thread: the build's cost.

For each dataset (a ``shared/datasets`` file of MANIFEST.csv) and each learner, the first fold of the
build's stratified 5-fold CV is fitted and predicted with the build's preprocessing and one thread, in
this process, and a line with its CPU and wall seconds is appended to a JSON-lines file (resumable: pairs
already in the file are skipped).  ``--summary`` prints, per learner and dataset, the seconds and the extrapolated
cost of a 5-fold build over all shared classification datasets (seconds per fold scaled linearly in
rows x features from the measured datasets: a rough model, reported as such).

Usage::

    OMP_NUM_THREADS=1 python tests/benchmarks/bench_portfolio_cost.py --out cost.jsonl \\
        --dataset keel/breast.csv --dataset keel/poker-8-9_vs_5.csv [--cap 120] [--learners lgbm:default ...]
    python tests/benchmarks/bench_portfolio_cost.py --out cost.jsonl --summary
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from pathlib import Path


class _OverCap(Exception):
    pass


def _alarm(signum, frame):
    raise _OverCap


def measure(out: Path, datasets: list[str], learners: list[str], cap: float) -> None:
    """One fold per (dataset, learner), in this process with one thread: CPU and wall seconds of fit + predict.

    CPU seconds (``time.process_time``) are the cost on a dedicated core; wall seconds on a shared machine are
    larger by the load.  A test still running after ``cap`` CPU seconds is stopped (SIGPROF, between two
    boosting rounds or trees; a library that trains in one native call finishes first) and recorded as
    ``over_cap``.
    """
    import signal

    import numpy as np
    from threadpoolctl import threadpool_limits

    from algorank.evaluation.cv.datasets import load_dataset
    from algorank.evaluation.cv.metabuild import default_shared_dir
    from algorank.evaluation.cv.preprocessing import encode_features, make_pipeline, resolve_learner
    from algorank.evaluation.cv.resampling import make_resampler

    shared = default_shared_dir()
    done = set()
    if out.exists():
        done = {(r["dataset"], r["learner"]) for r in map(json.loads, out.read_text().splitlines())}
    signal.signal(signal.SIGPROF, _alarm)
    for file in datasets:
        data = load_dataset(str(shared / "datasets" / file))
        y = data.y_codes
        X, nominal = encode_features(data.X)
        split = make_resampler("cv", cv=5, n_rows=len(y), random_state=0).repetition(0, y)[0]
        train, test = split.train, split.test
        for lid in learners:
            if (file, lid) in done:
                continue
            pipe = make_pipeline(resolve_learner(lid), nominal, random_state=0)
            cpu, wall = time.process_time(), time.perf_counter()
            status, accuracy = "ok", None
            signal.setitimer(signal.ITIMER_PROF, cap)  # CPU seconds of this process, not wall
            try:
                with threadpool_limits(1):
                    pipe.fit(X[train], y[train])
                    accuracy = float(np.mean(pipe.predict(X[test]) == y[test]))
            except _OverCap:
                status = "over_cap"
            finally:
                signal.setitimer(signal.ITIMER_PROF, 0)
            line = {"dataset": file, "rows": int(len(y)), "columns": int(X.shape[1]), "classes": len(data.classes),
                    "learner": lid, "status": status, "cpu_s": time.process_time() - cpu,
                    "wall_s": time.perf_counter() - wall, "accuracy": accuracy,
                    "load_average": os.getloadavg()[0], "cpus": os.cpu_count()}
            with out.open("a") as fh:
                fh.write(json.dumps(line) + "\n")
            print(f"{file} {lid}: {status} {line['cpu_s']:.2f} CPU s", file=sys.stderr)


def summary(out: Path) -> None:
    from algorank.evaluation.cv.metabuild import default_shared_dir

    rows = [json.loads(l) for l in out.read_text().splitlines()]
    manifest = list(csv.DictReader((default_shared_dir() / "datasets" / "MANIFEST.csv").open()))
    sizes = [int(m["instances"]) * int(m["features"]) for m in manifest
             if m["classes"] not in ("", "0") and not m["file"].startswith("regression")]
    datasets = sorted({r["dataset"] for r in rows}, key=lambda d: next(r["rows"] for r in rows if r["dataset"] == d))
    print("CPU seconds of one fold's fit + predict, one thread (lower is better); 'cap' = stopped at the cap")
    print("learner".ljust(28) + "".join(d.split("/")[-1][:16].rjust(18) for d in datasets))
    by = {(r["dataset"], r["learner"]): r for r in rows}
    learners = list(dict.fromkeys(r["learner"] for r in rows))
    for lid in learners:
        cells = []
        for d in datasets:
            r = by.get((d, lid))
            cells.append("-" if r is None else ("cap" if r["status"] != "ok" else
                                                f"{r['cpu_s']:.2f}"))
        print(lid.ljust(28) + "".join(c.rjust(18) for c in cells))
    # extrapolation: seconds per (row x column) of the largest measured dataset, times every dataset's size
    big = datasets[-1]
    per_cell = sum(by[(big, l)]["cpu_s"] for l in learners if (big, l) in by)
    size = next(r["rows"] * r["columns"] for r in rows if r["dataset"] == big)
    total = per_cell / size * sum(sizes) * 5 * 5 / 4  # 5 folds; a fold trains on 4/5 of the rows already counted
    print(f"\nall learners measured on {big}: {per_cell:.0f} s per fold; extrapolated linearly in rows x columns to a "
          f"5-fold build over the {len(sizes)} shared classification datasets: {total / 3600:.1f} CPU hours")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--dataset", action="append", default=[])
    ap.add_argument("--learners", nargs="*")
    ap.add_argument("--cap", type=float, default=120.0)
    ap.add_argument("--summary", action="store_true")
    args = ap.parse_args(argv)
    if args.summary:
        summary(args.out)
        return 0
    from algorank.metadata.portfolio import portfolio_ids

    measure(args.out, args.dataset, args.learners or portfolio_ids(), args.cap)
    return 0


if __name__ == "__main__":
    sys.exit(main())
