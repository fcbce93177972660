"""Live against simulated: how long a user really waits for a near-best learner (run on demand).

For each frozen held-out dataset of the ``broad`` meta-data
(``metadata/data/splits/broad_heldout.txt``; files under ``../shared/datasets`` as listed in
``broad_datasets.csv``, target from ``MANIFEST.csv``) this runs, in a fresh process::

    python -m algorank recommend FILE --target T --budget 30 --exclude-dataset ID --json --quiet [--n-jobs N]

and compares

* the **live** time to 1 point: the ``ended`` time (seconds since the command started, what the
  user waits for, imports and loading included) of the first test whose accuracy is within 1
  point of the best recorded accuracy on that dataset (the recorded runs use the same 5-fold
  splits, seed 0); the dataset is *unsolved* live when no test gets there within the budget;
* the **simulated** time to 1 point of the same policy (the default strategy, fitted on the
  meta-data without this dataset, ranking with the live time model) replayed on the dataset's
  recorded runs, each test charged ``5 x (fit + predict) + overhead`` as in the benchmark.

It prints the ratio live / simulated per dataset, its median and spread (quartiles), and how many
datasets the simulation solves within 10 s that stay unsolved live.

Two ratios, so that nobody is misled.  The simulation charges the tests, and the landmarkers to a strategy
that reads them (the default does not), as the benchmark does: nothing for starting Python, importing,
loading the data and the meta-data or planning, a fixed cost the user pays once per command whatever the
strategy.  The **headline** ratio counts the live time
from the command's start (what the user waits for); the second one (``ratio_tests``) counts it
from the start of the first test, i.e. it leaves out that fixed start cost (column ``start``, also
reported).  The simulated side is the same in both: the benchmark's time model is not changed.  Every dataset's row is
appended to ``--out`` as soon as it is measured (CSV); re-running skips the datasets already there
for the same budget and ``--n-jobs`` (resumable).  ``--every K`` takes every K-th held-out dataset
(alphabetical order) to run a fixed subset::

    python tests/benchmarks/bench_live_vs_sim.py --budget 30 --every 4 --out live_vs_sim.csv
    python tests/benchmarks/bench_live_vs_sim.py --budget 30 --every 4 --n-jobs 2 --out live_vs_sim.csv

With two ``--n-jobs`` values in the file, ``--report`` also sums the live time to 1 point per
setting over the datasets both solved (the parallel speed-up).

Column ``cpu``: the CPU seconds of the command and of the processes it waited for (its fold
server and fold processes; loky workers ended at the command's end are not counted).

``--split train`` runs the broad set's *training* datasets instead (every ``--every``-th from
``--offset``): the ones to measure on while working on the live speed, the held-out ones being
kept for the recorded looks::

    python tests/benchmarks/bench_live_vs_sim.py --split train --every 8 --out train.csv

``--strategy SPEC`` runs that strategy on both sides instead of the default (a column of ``--out``); with
several strategies in one file ``--report`` also sums, per strategy, the live and simulated time to 1 point
over the datasets every strategy solved live (e.g. the default against ``eiu:screen=inf``)::

    python tests/benchmarks/bench_live_vs_sim.py --split train --every 8 --budget 10 --out screen.csv
    python tests/benchmarks/bench_live_vs_sim.py --split train --every 8 --budget 10 --out screen.csv \
        --strategy eiu:screen=inf
    python tests/benchmarks/bench_live_vs_sim.py --report --out screen.csv
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "datasets" if (ROOT.parent / "shared").exists() else Path("/work/shared/datasets")
SPLITS = ROOT / "metadata" / "data" / "splits"
EPS = 0.01

COLUMNS = ["dataset", "budget", "n_jobs", "live_t1", "live_reached", "sim_t1", "sim_reached", "ratio", "wall",
           "first_result", "tests", "best_recorded", "best_live", "stop_reason", "timings", "start", "ratio_tests",
           "load_avg", "cpu", "strategy"]


def heldout(every: int = 1) -> list[str]:
    ids = [l.strip() for l in (SPLITS / "broad_heldout.txt").read_text().splitlines()
           if l.strip() and not l.startswith("#")]
    return sorted(ids)[::every]


def training(every: int = 1, offset: int = 0) -> list[str]:
    """Every ``every``-th dataset of the broad set's *training* part (not held out), alphabetical, from ``offset``.

    For working on the live speed: the held-out datasets are kept for the recorded looks.
    """
    import pandas as pd

    out = set(heldout())
    ids = sorted(str(d) for d in pd.read_csv(SPLITS / "broad_datasets.csv")["dataset"] if str(d) not in out)
    return ids[offset::every]


def chosen(args) -> list[str]:
    """The datasets of this run: ``--datasets``, else every ``--every``-th of the ``--split``."""
    if args.datasets:
        return list(args.datasets)
    return training(args.every, args.offset) if args.split == "train" else heldout(args.every)[args.offset:]


def files() -> dict:
    import pandas as pd

    table = pd.read_csv(SPLITS / "broad_datasets.csv")
    manifest = pd.read_csv(SHARED / "MANIFEST.csv").set_index("file")
    out = {}
    for _, row in table.iterrows():
        target = manifest["target"].get(row["file"]) if row["file"] in manifest.index else None
        out[str(row["dataset"])] = (SHARED / row["file"], None if target is None else str(target))
    return out


def simulated(dataset: str, meta, spec: str | None = None) -> tuple[float, bool, float]:
    """(time to 1 point, reached, best recorded accuracy) of the strategy ``spec`` (default: the default strategy)
    replayed on the recorded runs, each test charged what the live time model says a live test costs (a test
    stopped after its first fold: that fold and the overhead)."""
    from algorank.evaluation.meta.scoring import start_seconds
    from algorank.recommender.kernel.environments import SimulatedEnvironment, SkipUnavailable, meta_arrays
    from algorank.recommender.kernel.time_model import live_test_arrays
    from algorank.recommender.kernel.trace import run_policy
    from algorank.recommender.live.recommend import DEFAULT_STRATEGY, live_strategy

    train = meta.exclude(datasets=[dataset])
    strat, _, kind, live = live_strategy(spec or DEFAULT_STRATEGY, train, time_model="live", cv=5)
    strat.fit(train)
    info = meta.dataset_info(dataset)
    arrays = live_test_arrays(live, meta_arrays(meta, time_kind=kind), meta, time_kind=kind)
    env = SimulatedEnvironment(arrays, dataset)
    trace = run_policy(SkipUnavailable(strat.policy(info), env.available), env)
    target = env.best_accuracy - EPS - 1e-9
    start = start_seconds(strat, meta, arrays)  # the landmarkers, for a strategy that reads them (as the benchmark)
    spent = 0.0 if start is None else float(start[arrays.row(dataset)])
    for o in trace.observations:
        spent += o.seconds
        if o.status == "ok" and o.accuracy >= target:
            return spent, True, env.best_accuracy
    return spent, False, env.best_accuracy


def live(dataset: str, path: Path, target: str | None, *, budget: float, n_jobs: int, best: float,
         spec: str | None = None) -> dict:
    cmd = [sys.executable, "-m", "algorank", "recommend", str(path), "--budget", f"{budget:g}", "--exclude-dataset",
           dataset, "--json", "--quiet", "--n-jobs", str(n_jobs)] + (["--strategy", spec] if spec else [])
    if target:
        cmd += ["--target", target]
    t0, r0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=budget * 3 + 60)
    wall, r1 = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)  # the command and the processes it waited for
    if proc.returncode not in (0, 3) or not proc.stdout.strip():
        raise RuntimeError(f"{dataset}: exit {proc.returncode}: {proc.stderr.strip()[-500:]}")
    d = json.loads(proc.stdout)
    hits = [t["ended"] for t in d["trace"] if t["status"] == "ok" and t["accuracy"] >= best - EPS - 1e-9]
    oks = [t for t in d["trace"] if t["status"] == "ok"]
    start = min((t["started"] for t in d["trace"]), default=math.nan)  # the fixed start cost before the first test
    return {"live_t1": min(hits) if hits else math.nan, "live_reached": bool(hits), "wall": wall, "cpu": cpu,
            "start": start,
            "first_result": min((t["ended"] for t in d["trace"]), default=math.nan), "tests": len(d["trace"]),
            "best_live": max((t["accuracy"] for t in oks), default=math.nan), "stop_reason": d["stop_reason"],
            "timings": json.dumps({k: round(v, 3) for k, v in d.get("timings", {}).items()})}


def measure(args) -> None:
    import pandas as pd

    from algorank.metadata.snapshot import load_meta

    out = Path(args.out)
    done = set()
    if out.exists():
        prev = pd.read_csv(out)
        if list(prev.columns) != COLUMNS:  # written by an earlier version: same rows, today's columns
            prev.reindex(columns=COLUMNS).to_csv(out, index=False)
        done = {(str(r.dataset), float(r.budget), int(r.n_jobs), _spec(r.strategy)) for r in prev.reindex(
            columns=COLUMNS).itertuples()}
    meta = load_meta("broad")
    where = files()
    for dataset in chosen(args):
        if (dataset, float(args.budget), int(args.n_jobs), _spec(args.strategy)) in done:
            continue
        path, target = where[dataset]
        sim_t1, sim_reached, best = simulated(dataset, meta, args.strategy)
        row = {"dataset": dataset, "budget": args.budget, "n_jobs": args.n_jobs, "sim_t1": sim_t1,
               "sim_reached": sim_reached, "best_recorded": best, "strategy": _spec(args.strategy)}
        row.update(live(dataset, path, target, budget=args.budget, n_jobs=args.n_jobs, best=best,
                        spec=args.strategy))
        both = row["live_reached"] and sim_reached and sim_t1 > 0
        row["ratio"] = row["live_t1"] / sim_t1 if both else math.nan
        row["ratio_tests"] = (row["live_t1"] - row["start"]) / sim_t1 if both else math.nan
        row["load_avg"] = os.getloadavg()[0]
        pd.DataFrame([row]).reindex(columns=COLUMNS).to_csv(out, mode="a", header=not out.exists(), index=False)
        print(f"{dataset:<28} live {row['live_t1']:7.2f} s  sim {sim_t1:7.2f} s  ratio {row['ratio']:6.2f}  "
              f"from the first test {row['ratio_tests']:6.2f}  start {row['start']:5.2f} s  first result "
              f"{row['first_result']:5.2f} s  wall {row['wall']:5.1f} s  cpu {row['cpu']:5.1f} s  "
              f"load {row['load_avg']:.1f}", flush=True)


def _spec(value) -> str:
    """The strategy a row was measured with ("": the default strategy; rows written before the column: the same)."""
    return "" if value is None or value != value else str(value)


def report(path: str) -> None:
    import numpy as np
    import pandas as pd

    table = pd.read_csv(path).reindex(columns=COLUMNS)  # files written before the two-ratio columns lack them
    table["strategy"] = [_spec(v) or "default" for v in table["strategy"]]

    def spread(r) -> str:
        r = r.dropna()
        if not len(r):
            return "n/a"
        q1, med, q3 = np.percentile(r, [25, 50, 75])
        return f"median {med:.2f} (quartiles {q1:.2f}-{q3:.2f}, range {r.min():.2f}-{r.max():.2f})"

    for (spec, budget, n_jobs), g in table.groupby(["strategy", "budget", "n_jobs"]):
        lost = g[(g["sim_reached"]) & (g["sim_t1"] <= 10) & (~g["live_reached"].astype(bool))]
        print(f"{spec}, budget {budget:g} s, n_jobs {n_jobs}: {len(g)} datasets, summed live time to 1 point "
              f"{g['live_t1'].sum():.1f} s (simulated {g['sim_t1'].sum():.1f} s), live/simulated time to 1 point from the "
              f"command's start: {spread(g['ratio'])}; from the first test's start: {spread(g['ratio_tests'])}; "
              f"start cost (command start to first test) median {g['start'].median():.2f} s; first result median "
              f"{g['first_result'].median():.2f} s; load average median {g['load_avg'].median():.1f}; solved by the "
              f"simulation within 10 s but not live: {len(lost)} {list(lost['dataset'])}")
    specs = sorted(table["strategy"].unique())
    if len(specs) > 1:  # the same datasets, budget and n_jobs under several strategies: live and simulated sums
        for (budget, n_jobs), g in table.groupby(["budget", "n_jobs"]):
            live_t = g.pivot_table(index="dataset", columns="strategy", values="live_t1").dropna()
            sim_t = g.pivot_table(index="dataset", columns="strategy", values="sim_t1").reindex(live_t.index)
            if len(live_t.columns) > 1 and not live_t.empty:
                print(f"budget {budget:g} s, n_jobs {n_jobs}, the {len(live_t)} datasets every strategy solved live: "
                      + ", ".join(f"{c}: live {live_t[c].sum():.1f} s, simulated {sim_t[c].sum():.1f} s"
                                  for c in live_t.columns))
    table = table[table["strategy"] == "default"]
    settings = sorted(table["n_jobs"].unique())
    if len(settings) > 1:
        table["after_start"] = table["live_t1"] - table["start"]
        for column, what in (("live_t1", "from the command's start"), ("after_start", "from the first test's start")):
            both = table.pivot_table(index="dataset", columns="n_jobs", values=column).reindex(columns=settings)
            solved = both.dropna()
            if solved.empty:
                continue
            sums = {n: float(solved[n].sum()) for n in settings}
            print(f"summed live time to 1 point {what} over the {len(solved)} datasets solved in every setting: "
                  + ", ".join(f"n_jobs={n}: {s:.1f} s" for n, s in sums.items())
                  + f"; ratio {sums[settings[-1]] / sums[settings[0]]:.2f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--budget", type=float, default=30.0)
    p.add_argument("--n-jobs", type=int, default=1)
    p.add_argument("--strategy", default=None, metavar="SPEC",
                   help="the strategy of both sides (default: the default strategy); a column of --out")
    p.add_argument("--split", choices=("heldout", "train"), default="heldout",
                   help="the broad set's frozen held-out datasets (default; the recorded looks) or its training part")
    p.add_argument("--every", type=int, default=1, help="every K-th dataset of the split (alphabetical)")
    p.add_argument("--offset", type=int, default=0, help="start the every-K-th selection at this position")
    p.add_argument("--datasets", nargs="*", default=None)
    p.add_argument("--out", default=str(ROOT / "tests" / "benchmarks" / "results" / "live_vs_sim.csv"))
    p.add_argument("--report", action="store_true", help="only summarise --out")
    args = p.parse_args()
    if not args.report:
        measure(args)
    report(args.out)


if __name__ == "__main__":
    main()
