"""Live check of the time-aware recommendation on real datasets (run on demand, not collected by pytest).

Two phases.

1. **Measure** (slow, ~15-25 min on 2 cores for 14 datasets): on each dataset every
   portfolio learner is really run once (stratified 5-fold CV, one repetition,
   in-process), and one row per (dataset, learner) is appended to the raw CSV
   (``--raw``, default ``live_raw.csv``) as soon as it is measured: accuracy, wall-clock
   seconds of the whole test (what a user waits for), status, mean fit and predict time
   per fold, and the dataset's simple meta-features (JSON).  Re-running resumes: learners
   already in the CSV for a dataset are not run again.
2. **Replay** (milliseconds): the orders of several strategies fitted on the embedded
   snapshot are replayed on the measured results (the same policy objects as in
   ``recommend``, fed the real observations).  For each strategy we report

   * ``t_1pp``: cumulative seconds until the best accuracy found is within 1 percentage
     point of the best accuracy of *all* learners;
   * whether the time-aware strategy (``--key``) got there faster than the accuracy-only
     order (``--ref``, ar:p=0); ties (same seconds) are counted separately.

Usage::

    python tests/benchmarks/bench_live_recommend.py [--shared ../shared] [--raw live_raw.csv] [--out t1pp.csv]
    python tests/benchmarks/bench_live_recommend.py --replay-only --raw live_raw.csv \
        --strategies ar:p=0 ar:p=1/16 "ar:p=1/4,live=1"
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from evaluation.trace import Observation, run_policy  # noqa: E402
from metadata.learners import learner_ids  # noqa: E402

DATASETS = ["uci/anneal.arff", "uci/balance.scale.arff", "uci/car.arff", "uci/colic.arff", "uci/credit.a.arff",
            "uci/diabetes.arff", "uci/ecoli.arff", "uci/glass.arff", "uci/heart.statlog.arff",
            "uci/hypothyroid.arff", "uci/kr.vs.kp.arff", "uci/cylinder.bands.arff", "uci/optdigits.arff",
            "uci/mushroom.arff"]
STRATEGIES = ["ar:p=0", "ar:p=1/16", "ar:p=1/4,overhead=0.26,scale=5", "at:p=1/16,sim=tested",
              "at:p=1/4,sim=tested,overhead=0.26,scale=5", "lt:h=inf", "lt:h=auto,overhead=0.26,scale=5"]
RAW_COLUMNS = ["path", "dataset", "learner", "accuracy", "seconds", "status", "fit_time_mean",
               "predict_time_mean", "folds", "message", "info"]


class Replay:
    """Environment answering from measured live results: learner -> (accuracy, seconds, status)."""

    def __init__(self, results):
        self.results = results

    def test(self, learner):
        acc, sec, status = self.results.get(learner, (float("nan"), 0.0, "error"))
        return Observation(learner, acc, sec, "ok" if status == "ok" else "error")


def time_to_within(trace, best, tol=0.01):
    """Cumulative seconds until the best accuracy found is within ``tol`` of ``best`` (NaN: never)."""
    cum = 0.0
    found = -np.inf
    for o in trace.observations:
        cum += o.seconds
        if o.status == "ok":
            found = max(found, o.accuracy)
        if found >= best - tol:
            return cum
    return float("nan")


# ---------------------------------------------------------------------- measure
def _done(raw: Path) -> set:
    if not raw.exists():
        return set()
    df = pd.read_csv(raw, dtype={"path": str, "learner": str})
    return set(zip(df["path"], df["learner"]))


def measure(paths, raw: Path, shared: Path) -> None:
    """Run every learner on every dataset, appending one CSV row per test (resumable)."""
    from evaluation.datasets import load_dataset
    from evaluation.evaluator import Evaluator
    from recommender.recommend import _dataset_info

    done = _done(raw)
    ev = Evaluator(scheme="cv", cv=5, repeats=1, random_state=0, progress=False)
    new = not raw.exists()
    with open(raw, "a", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=RAW_COLUMNS)
        if new:
            w.writeheader()
            fh.flush()
        for rel in paths:
            todo = [l for l in learner_ids() if (rel, l) not in done]
            if not todo:
                print(f"{rel}: already measured", flush=True)
                continue
            data = load_dataset(str(shared / "datasets" / rel))
            info = json.dumps({k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                               for k, v in _dataset_info(data).items()})
            for l in todo:
                s = time.perf_counter()
                r = ev.evaluate(data, [l]).summary.iloc[0]
                sec = time.perf_counter() - s
                w.writerow({"path": rel, "dataset": data.name, "learner": l, "accuracy": float(r["accuracy_mean"]),
                            "seconds": sec, "status": str(r["status"]), "fit_time_mean": float(r["fit_time_mean"]),
                            "predict_time_mean": float(r["predict_time_mean"]), "folds": int(r["folds"]),
                            "message": str(r.get("message") or "")[:200], "info": info})
                fh.flush()
            print(f"{rel}: measured {len(todo)} learner(s)", flush=True)


# ---------------------------------------------------------------------- replay
def load_raw(raw: Path) -> dict:
    """path -> (info dict, {learner: (accuracy, seconds, status)})."""
    df = pd.read_csv(raw, dtype={"path": str, "learner": str, "message": str})
    out = {}
    for path, g in df.groupby("path", sort=False):
        info = {k: (math.nan if v is None else v) for k, v in json.loads(g["info"].iloc[0]).items()}
        out[path] = (info, {r.learner: (float(r.accuracy), float(r.seconds), str(r.status))
                            for r in g.itertuples()})
    return out


def replay(measured: dict, strategies: dict) -> pd.DataFrame:
    """One row per dataset: best accuracy, time of running everything, t_1pp and first learner per strategy."""
    rows = []
    for path, (info, results) in measured.items():
        if len(results) < len(learner_ids()):
            continue  # incomplete (measurement still running)
        best = max(a for a, _, st in results.values() if st == "ok")
        row = {"dataset": info["dataset"], "n": info["n_instances"], "d": info["n_features"], "best_acc": best,
               "all_learners_s": sum(s for _, s, _ in results.values())}
        for name, strat in strategies.items():
            tr = run_policy(strat.policy(info), Replay(results))
            row[f"t_1pp[{name}]"] = time_to_within(tr, best)
            row[f"first[{name}]"] = tr.observations[0].learner.split(".")[-1]
        rows.append(row)
    return pd.DataFrame(rows)


def fit_strategies(specs, meta) -> dict:
    from recommender.registry import parse_strategy

    out = {}
    for s in specs:
        strat = parse_strategy(s)
        if s.startswith("lt:") and hasattr(strat, "with_window"):
            # the snapshot's default MIL window, for recorded or live test times (bench_live_time_p.py)
            strat = strat.with_window(*((0.1, 1000.0) if "overhead=" in s else (1e-3, 100.0)))
        out[s] = strat.fit(meta)
    return out


def summarize(df: pd.DataFrame, specs, ref: str) -> str:
    refc = f"t_1pp[{ref}]"
    lines = []
    for name in specs:
        c = f"t_1pp[{name}]"
        lines.append(f"{name:28s} median t_1pp {df[c].median():7.2f} s; total {df[c].sum():8.1f} s; vs {ref}: "
                     f"faster {int((df[c] < df[refc]).sum())}/{len(df)}, ties {int((df[c] == df[refc]).sum())}, "
                     f"slower {int((df[c] > df[refc]).sum())}")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=str(ROOT.parent / "shared"))
    ap.add_argument("--raw", default="live_raw.csv", help="raw per-(dataset, learner) results (appended, resumed)")
    ap.add_argument("--out", default=None, help="per-dataset t_1pp table (CSV)")
    ap.add_argument("--datasets", nargs="*", default=DATASETS)
    ap.add_argument("--strategies", nargs="*", default=STRATEGIES)
    ap.add_argument("--ref", default="ar:p=0")
    ap.add_argument("--replay-only", action="store_true")
    args = ap.parse_args(argv)
    raw = Path(args.raw)
    if not args.replay_only:
        measure(args.datasets, raw, Path(args.shared))
    from metadata.snapshot import load_snapshot

    specs = list(dict.fromkeys(args.strategies + [args.ref]))
    df = replay(load_raw(raw), fit_strategies(specs, load_snapshot()))
    pd.set_option("display.width", 250)
    cols = ["dataset", "n", "d", "best_acc", "all_learners_s"] + [f"t_1pp[{s}]" for s in specs]
    print(df[cols].round(3).to_string(index=False))
    print(summarize(df, specs, args.ref))
    if args.out:
        df.to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
