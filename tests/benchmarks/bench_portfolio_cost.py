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
    python tests/benchmarks/bench_portfolio_cost.py --out cost.jsonl subset.jsonl --summary
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


def summary(paths: list[Path]) -> None:
    """Per-learner CPU seconds, and the extrapolated cost of a 5-fold build over the shared datasets.

    The first dataset (fewest rows) must have every learner; the others may hold a subset.  A learner
    not measured on a larger dataset gets its small-dataset seconds times the geometric mean ratio of
    the measured learners of its family (the id's prefix).  The build's datasets (``select_datasets``)
    are costed by rows: below 1,000 like the small dataset, below 3,500 like the middle one, above
    that like the largest, scaled linearly in rows.  A rough model, stated as such.
    """
    import math

    from algorank.evaluation.cv.metabuild import select_datasets

    rows = [json.loads(l) for p in paths for l in p.read_text().splitlines()]
    datasets = sorted({r["dataset"] for r in rows}, key=lambda d: next(r["rows"] for r in rows if r["dataset"] == d))
    by = {(r["dataset"], r["learner"]): r for r in rows}
    small = datasets[0]
    learners = [r["learner"] for r in rows if r["dataset"] == small]
    size = {d: next(r["rows"] for r in rows if r["dataset"] == d) for d in datasets}
    est: dict = {}
    for d in datasets:
        ratios: dict = {}
        for l in learners:
            if (d, l) in by and by[(small, l)]["cpu_s"] > 0:
                ratios.setdefault(l.split(":")[0], []).append(by[(d, l)]["cpu_s"] / by[(small, l)]["cpu_s"])
        for l in learners:
            if (d, l) in by:
                est[(d, l)] = by[(d, l)]["cpu_s"]
            else:
                rs = ratios.get(l.split(":")[0]) or [r for v in ratios.values() for r in v]
                est[(d, l)] = by[(small, l)]["cpu_s"] * math.exp(sum(map(math.log, rs)) / len(rs))
    print("CPU seconds of one fold's fit + predict, one thread (lower is better); * = estimated from its family")
    print("learner".ljust(30) + "".join(f"{d.split('/')[-1][:14]} ({size[d]})".rjust(24) for d in datasets))
    for l in learners:
        cells = []
        for d in datasets:
            r = by.get((d, l))
            mark = "" if r is not None else "*"
            over = " (cap)" if r is not None and r["status"] != "ok" else ""
            cells.append(f"{est[(d, l)]:.2f}{mark}{over}")
        print(l.ljust(30) + "".join(c.rjust(24) for c in cells))
    per = {d: sum(est[(d, l)] for l in learners) for d in datasets}
    print("all".ljust(30) + "".join(f"{per[d]:.0f}".rjust(24) for d in datasets))
    items = select_datasets()
    mid, large = (datasets[1], datasets[-1]) if len(datasets) > 2 else (datasets[-1], datasets[-1])
    total = 0.0
    for it in items:
        n = it.instances
        total += per[small] if n < 1000 else per[mid] if n < 3500 else per[large] * n / size[large]
    print(f"\n5-fold build over the {len(items)} datasets of build-meta's selection "
          f"({sum(i.instances for i in items):,} rows): about {5 * total / 3600:.1f} CPU hours")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True, nargs="+", help="JSON-lines file(s); one to measure into")
    ap.add_argument("--dataset", action="append", default=[])
    ap.add_argument("--learners", nargs="*")
    ap.add_argument("--cap", type=float, default=120.0)
    ap.add_argument("--summary", action="store_true")
    args = ap.parse_args(argv)
    if args.summary:
        summary(args.out)
        return 0
    from algorank.metadata.portfolio import portfolio_ids

    measure(args.out[0], args.dataset, args.learners or portfolio_ids(), args.cap)
    return 0


if __name__ == "__main__":
    sys.exit(main())
