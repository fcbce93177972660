"""When does the first result arrive?  algorank's first test against a plain scikit-learn script (on demand).

On a shared dataset of about 1,000 rows (``uci/tic-tac-toe.arff``, 958 rows, excluded from the
meta-data) this alternates, ``--repeats`` times each, two fresh processes:

* ``python -m algorank recommend FILE --budget 30 --top 1 --json --quiet --exclude-dataset tic-tac-toe``:
  the first test's ``ended`` time, seconds since the process started (imports, loading the data
  and the meta-data, landmarkers, planning and the test itself);
* a plain script that imports pandas, SciPy and scikit-learn, reads the same ARFF file, and runs
  ``cross_val_score`` (stratified 5-fold, seed 0) of the same learner (the class algorank tested
  first, default parameters) in a pipeline with one-hot encoding and scaling; it prints the seconds
  since its own process started when the scores are in.

It reports the medians and their ratio (the goal: algorank at most 1.5 x the plain script), and the
median of each of algorank's phases.  Process start is read from ``/proc`` (Linux) in both::

    python tests/benchmarks/bench_first_test.py --repeats 5 [--strategy eiu --strategy eiu:landmarks=yes]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

FILE = Path("/work/shared/datasets/uci/tic-tac-toe.arff")

PLAIN = r'''
import os, sys, time
def since_start():
    with open("/proc/self/stat") as f:
        ticks = float(f.read().rpartition(")")[2].split()[19])
    with open("/proc/uptime") as f:
        up = float(f.read().split()[0])
    return up - ticks / os.sysconf("SC_CLK_TCK")
import importlib
import numpy as np
import pandas as pd
from scipy.io import arff
from sklearn.compose import ColumnTransformer
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
data, _ = arff.loadarff(sys.argv[1])
frame = pd.DataFrame(data)
for c in frame.columns:
    if frame[c].dtype.kind in "OS":
        frame[c] = frame[c].str.decode("utf-8")
y = frame.pop(sys.argv[2])
nominal = [c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])]
module, _, name = sys.argv[3].rpartition(".")
model = getattr(importlib.import_module(module), name)()
prep = ColumnTransformer([("nom", OneHotEncoder(handle_unknown="ignore"), nominal)], remainder=StandardScaler())
scores = cross_val_score(make_pipeline(prep, model), frame, y, cv=StratifiedKFold(5, shuffle=True, random_state=0))
print(since_start(), scores.mean())
'''


def algorank_run(file: Path, strategy: str | None = None) -> dict:
    cmd = [sys.executable, "-m", "algorank", "recommend", str(file), "--budget", "30", "--top", "1", "--json",
           "--quiet", "--exclude-dataset", file.stem] + ([] if strategy is None else ["--strategy", strategy])
    d = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=120).stdout)
    first = d["trace"][0]
    return {"learner": first["learner"], "first_result": first["ended"], "accuracy": first["accuracy"],
            "timings": d["timings"], "started": first["started"]}


def plain_run(script: Path, file: Path, target: str, learner: str) -> float:
    out = subprocess.run([sys.executable, str(script), str(file), target, learner], capture_output=True, text=True,
                         check=True, timeout=120).stdout.split()
    return float(out[0])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--file", default=str(FILE))
    p.add_argument("--target", default="Class")
    p.add_argument("--strategy", action="append", default=None,
                   help="strategy of algorank's runs (repeat to alternate several; default: the default strategy)")
    args = p.parse_args()
    file = Path(args.file)
    strategies = args.strategy or [None]
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "plain_cv.py"
        script.write_text(PLAIN)
        ours = {s: [] for s in strategies}
        phases = {s: [] for s in strategies}
        theirs, learners = [], set()
        for i in range(args.repeats):
            for strategy in strategies:
                r = algorank_run(file, strategy)
                learner = r["learner"].split("{")[0]
                learners.add(r["learner"])
                ours[strategy].append(r["first_result"])
                phases[strategy].append(r["timings"])
                print(f"run {i + 1}: algorank ({strategy or 'default'}) first result {ours[strategy][-1]:.2f} s "
                      f"(test started {r['started']:.2f} s; {r['learner']})", flush=True)
            theirs.append(plain_run(script, file, args.target, learner))
            print(f"run {i + 1}: plain script {theirs[-1]:.2f} s", flush=True)
    b = statistics.median(theirs)
    for strategy in strategies:
        a = statistics.median(ours[strategy])
        print(f"median first result: algorank ({strategy or 'default'}) {a:.2f} s, plain scikit-learn {b:.2f} s, "
              f"ratio {a / b:.2f} (goal <= 1.5); learners {sorted(learners)}")
        keys = [k for k in phases[strategy][0] if k != "total"]
        print("  median phases: " + ", ".join(f"{k} {statistics.median(ph[k] for ph in phases[strategy]):.2f} s"
                                              for k in keys))


if __name__ == "__main__":
    main()
