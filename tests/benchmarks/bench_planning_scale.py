"""Planning with many learners keeps the budget (run on demand).

Builds meta-data files with ``m`` learners (``--learners``, default 250, 500, 1000, 2000: the
embedded ``broad`` runs of the decision tree, copied under distinct runnable ids with jittered
accuracies and times) and runs, in a fresh process each::

    python -m algorank recommend uci/tic-tac-toe.arff --meta FILE --budget 10 --json --quiet

reporting the wall time (goal: at most ``budget x 1.1 + 1`` s), the phases (``load``, ``plan``,
``tests``) and the number of tests.  The planned-order dry run is cut where the expected seconds
reach the budget and at 10 % of the budget, so planning grows with the learners only through
fitting the strategy and one policy step per planned test::

    python tests/benchmarks/bench_planning_scale.py --budget 10
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FILE = Path("/work/shared/datasets/uci/tic-tac-toe.arff")


def build(m: int, path: Path) -> None:
    import numpy as np
    import pandas as pd

    from algorank.metadata.dataset import MetaDataset
    from algorank.metadata.snapshot import load_meta

    meta = load_meta("broad")
    base = meta.runs[meta.runs["learner"] == "sklearn.tree.DecisionTreeClassifier"]
    rng = np.random.default_rng(0)
    parts = []
    for i in range(m):
        r = base.copy()
        r["learner"] = "sklearn.tree.DecisionTreeClassifier" + json.dumps({"max_depth": 1 + i % 40,
                                                                            "min_samples_leaf": 1 + i // 40})
        r["accuracy"] = np.clip(r["accuracy"].to_numpy() + rng.normal(0, 0.02, len(r)), 0, 1)
        r["fit_time"] = r["fit_time"] * np.exp(rng.normal(0, 0.3, len(r)))
        parts.append(r)
    MetaDataset(pd.concat(parts, ignore_index=True), meta.datasets, source=f"{m} learners").save(path)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--budget", type=float, default=10.0)
    p.add_argument("--learners", type=int, nargs="*", default=[250, 500, 1000, 2000])
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for m in args.learners:
            path = Path(tmp) / f"meta{m}.parquet"
            build(m, path)
            cmd = [sys.executable, "-m", "algorank", "recommend", str(FILE), "--meta", str(path), "--budget",
                   f"{args.budget:g}", "--json", "--quiet", "--exclude-dataset", "tic-tac-toe"]
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            wall = time.perf_counter() - t0
            d = json.loads(proc.stdout)
            t = d["timings"]
            ok = wall <= args.budget * 1.1 + 1
            print(f"{m:>5} learners: wall {wall:6.2f} s ({'within' if ok else 'OVER'} budget x 1.1 + 1 s); "
                  f"import {t['import']:.2f} s, load {t['load']:.2f} s, plan {t['plan']:.2f} s, landmark {t['landmark']:.2f} s, "
                  f"tests {t['tests']:.2f} s, total {t['total']:.2f} s; {len(d['trace'])} tests, {len(d['order'])} planned; "
                  f"exit {proc.returncode}", flush=True)


if __name__ == "__main__":
    main()
