"""Ensemble selection against the best learner alone, within the same recommendation.

For each dataset: the stratified 75/25 split of the end-to-end benchmark (``bench_end_to_end.py``), the dataset and
its near-copies left out of the default meta-data by the same rules, one ``algorank.recommend`` on the training part
(``--budget`` seconds, one job), and two holdout accuracies: the model it returned (the ensemble where it kept one)
and its best learner alone, refitted on the training part.  Both come from the same tests, so the difference is the
ensemble's alone.

    OMP_NUM_THREADS=1 python tests/benchmarks/bench_ensemble.py --budget 20 \\
        --out tests/benchmarks/results/ensemble_training.csv

The default datasets are 14 of the shared datasets with 600 to 5,000 rows, from the training part of the
``modern`` set (none held out, none a copy of a held-out dataset, none in the end-to-end collections), chosen
before the first run.  Rows are appended one dataset at a time; a rerun skips the datasets already in ``--out``.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import logging
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATASETS = ("car", "hypothyroid", "kr.vs.kp", "sick", "analcatdata_halloffame", "yeast1", "Isolet", "abalone19",
            "anneal", "tic-tac-toe", "analcatdata_authorship", "mammographic", "wisconsin", "balance.scale")
FIELDS = ("dataset", "rows", "best", "cv_best", "kept", "ens_oof", "members", "acc_single", "acc_returned", "wall",
          "excluded")


def _bench():
    spec = importlib.util.spec_from_file_location("bench_end_to_end", HERE / "bench_end_to_end.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run_one(path: Path, target: str, name: str, budget: float, meta0, bench) -> dict:
    """One dataset: recommend on the training part, score the returned model and the best learner alone."""
    import numpy as np

    import algorank
    from algorank.evaluation.cv.datasets import as_dataset, load_dataset
    from algorank.recommender.live.recommend import refit_best

    data = load_dataset(path, target=target)
    Xtr, Xte, ytr, yte = bench._split(data)
    excluded = [d for d, _ in bench.excluded_priors(meta0, name, data)]
    meta = meta0.exclude(datasets=excluded) if excluded else meta0
    t0 = time.perf_counter()
    rec = algorank.recommend(Xtr, y=ytr, budget=budget, n_jobs=1, meta=meta, started=t0)
    wall = time.perf_counter() - t0
    truth = yte.astype(str).to_numpy()

    def accuracy(model) -> float:
        return float(np.mean(truth == np.array([str(p) for p in model.predict(Xte)], dtype=object)))

    returned = accuracy(rec.model)
    chosen = rec.ensemble or {}
    if chosen.get("kept"):
        single = accuracy(refit_best(as_dataset(Xtr, y=ytr, task="classification"), rec.best.learner, random_state=0))
    else:
        single = returned
    return {"dataset": name, "rows": len(data.y), "best": rec.best.learner, "cv_best": rec.best.accuracy,
            "kept": bool(chosen.get("kept")), "ens_oof": chosen.get("score"), "members": len(chosen.get("weights", {})),
            "acc_single": single, "acc_returned": returned, "wall": round(wall, 1), "excluded": len(excluded)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("datasets", nargs="*", default=list(DATASETS), help="shared dataset names (default: the 14)")
    ap.add_argument("--budget", type=float, default=20.0)
    ap.add_argument("--shared", type=Path, default=HERE.parents[2] / "shared")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "ensemble_training.csv")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    import pandas as pd

    import algorank

    bench = _bench()
    manifest = pd.read_csv(args.shared / "datasets" / "MANIFEST.csv")
    done = set()
    if args.out.is_file():
        with open(args.out, newline="") as f:
            done = {r["dataset"] for r in csv.DictReader(f)}
    meta0 = algorank.load_meta()
    for name in args.datasets:
        if name in done:
            continue
        hit = manifest[manifest["file"].str.contains("/" + name + ".", regex=False)]
        if hit.empty:
            print(f"error: {name!r} is not in the shared manifest", file=sys.stderr)
            return 2
        item = hit.iloc[0]
        row = run_one(args.shared / "datasets" / item["file"], item["target"], name, args.budget, meta0, bench)
        print(row, flush=True)
        new = not args.out.is_file()
        with open(args.out, "a", newline="") as f:
            w = csv.DictWriter(f, fieldnames=FIELDS)
            if new:
                w.writeheader()
            w.writerow(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
