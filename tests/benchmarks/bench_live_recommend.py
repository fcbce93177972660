"""Live check of the time-aware recommendation on real datasets (run on demand, not collected by pytest).

For each dataset every portfolio learner is really run once (stratified 5-fold CV, one
repetition, in-process, wall-clock seconds).  The orders of several strategies fitted on
the embedded snapshot are then replayed on these measured results (the same policy
objects as in `recommend`, fed the real observations), and for each we report:

* ``t_1pp``: cumulative seconds until the best accuracy found is within 1 percentage
  point of the best accuracy of *all* learners;
* whether the time-aware strategy got there faster than the accuracy-only order (ar:p=0).

Usage::

    python tests/benchmarks/bench_live_recommend.py [--shared ../shared] [--out results.csv]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from evaluation.datasets import load_dataset  # noqa: E402
from evaluation.evaluator import Evaluator  # noqa: E402
from evaluation.trace import Observation, run_policy  # noqa: E402
from metadata.learners import learner_ids  # noqa: E402
from metadata.snapshot import load_snapshot  # noqa: E402
from recommender.recommend import _dataset_info  # noqa: E402
from recommender.registry import parse_strategy  # noqa: E402

DATASETS = ["uci/anneal.arff", "uci/balance.scale.arff", "uci/car.arff", "uci/colic.arff", "uci/credit.a.arff",
            "uci/diabetes.arff", "uci/ecoli.arff", "uci/glass.arff", "uci/heart.statlog.arff",
            "uci/hypothyroid.arff", "uci/kr.vs.kp.arff", "uci/cylinder.bands.arff", "uci/optdigits.arff",
            "uci/mushroom.arff"]
STRATEGIES = ["ar:p=1/16", "at:p=1/16,sim=tested", "lt:h=inf", "ar:p=0"]


class Replay:
    def __init__(self, results):
        self.results = results

    def test(self, learner):
        acc, sec, status = self.results.get(learner, (float("nan"), 0.0, "error"))
        return Observation(learner, acc, sec, "ok" if status == "ok" else "error")


def time_to_within(trace, best, tol=0.01):
    cum = 0.0
    found = -np.inf
    for o in trace.observations:
        cum += o.seconds
        if o.status == "ok":
            found = max(found, o.accuracy)
        if found >= best - tol:
            return cum
    return float("nan")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=str(ROOT.parent / "shared"))
    ap.add_argument("--out", default=None)
    ap.add_argument("--datasets", nargs="*", default=DATASETS)
    args = ap.parse_args(argv)
    meta = load_snapshot()
    strategies = {s: parse_strategy(s).fit(meta) for s in STRATEGIES}
    strategies["lt:h=inf"] = strategies["lt:h=inf"].with_window(1e-3, 100.0).fit(meta)
    ev = Evaluator(scheme="cv", cv=5, repeats=1, random_state=0, progress=False)
    rows = []
    for rel in args.datasets:
        path = Path(args.shared) / "datasets" / rel
        data = load_dataset(str(path))
        results = {}
        t0 = time.perf_counter()
        for l in learner_ids():
            s = time.perf_counter()
            r = ev.evaluate(data, [l]).summary.iloc[0]
            results[l] = (float(r["accuracy_mean"]), time.perf_counter() - s, str(r["status"]))
        total = time.perf_counter() - t0
        best = max(a for a, _, st in results.values() if st == "ok")
        info = _dataset_info(data)
        row = {"dataset": data.name, "n": info["n_instances"], "d": info["n_features"], "best_acc": best,
               "all_learners_s": total}
        for name, strat in strategies.items():
            tr = run_policy(strat.policy(info), Replay(results))
            row[f"t_1pp[{name}]"] = time_to_within(tr, best)
            row[f"first[{name}]"] = tr.observations[0].learner.split(".")[-1]
        rows.append(row)
        print(pd.DataFrame([row]).to_string(index=False), flush=True)
    df = pd.DataFrame(rows)
    key, ref = "t_1pp[ar:p=1/16]", "t_1pp[ar:p=0]"
    df["faster_than_ar0"] = df[key] < df[ref]
    pd.set_option("display.width", 250)
    print(df[["dataset", "n", "d", "best_acc", "all_learners_s"] + [c for c in df.columns if c.startswith("t_1pp")]
             + ["faster_than_ar0"]].round(3).to_string(index=False))
    for name in STRATEGIES:
        c = f"t_1pp[{name}]"
        print(f"{name:24s} median t_1pp {df[c].median():.2f} s; faster than ar:p=0 on "
              f"{int((df[c] < df[ref]).sum())}/{len(df)}; ties {int((df[c] == df[ref]).sum())}")
    if args.out:
        df.to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
