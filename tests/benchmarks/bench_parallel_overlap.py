"""When do parallel tests first overlap, and how soon is the best model found?  ``--n-jobs 1`` against ``N``.

For each dataset and each ``--n-jobs`` value this runs, ``--repeats`` times and alternating the values, a fresh
process as a user would::

    python -m algorank recommend DATASET --budget B --n-jobs N --json --exclude-dataset ID

and reads the trace of the JSON output (each test's ``started`` and ``ended``, seconds since the process
started).  Per run it reports

* ``first overlap``: the first moment two tests run at once (the start of the first test that starts while
  another one has not ended; none with one job);
* ``first test``: when the first test started (imports, loading, planning are before it);
* ``overlap after first``: the first overlap less the first test's start (0: two tests from the first one);
* ``to best``: when the test that found the run's best score ended;
* ``to 1-job best``: when the run first had a score at least the best of the one-job runs of that dataset
  (the median over its repeats), the measure of "the same model, sooner";
* ``wall``: the whole process, against the promise ``budget x 1.1 + 1 s``.

Medians over the repeats are printed as a Markdown table (lower is better in every time column) and, with
``--json``, written as JSON.  Defaults: two shared datasets of the sizes of vehicle (846 rows) and spambase
(4,601 rows), each left out of the meta-data, ``--budget 20``, ``--n-jobs 1 --n-jobs 2``, two repeats::

    OMP_NUM_THREADS=1 python tests/benchmarks/bench_parallel_overlap.py
    # on a machine with OpenML access and 16 cores, the large-collection measurement:
    OMP_NUM_THREADS=1 python tests/benchmarks/bench_parallel_overlap.py --dataset openml:54 \\
        --dataset openml:44 --n-jobs 1 --n-jobs 8 --budget 60 --repeats 3 --json overlap.json
    # the large collection's seven tables (bench_end_to_end.py writes them), as many runs at once as the cores
    # hold: the seven one-job runs together, then the eight-job runs two at a time (about 6 minutes on 16 cores)
    OMP_NUM_THREADS=1 python tests/benchmarks/bench_parallel_overlap.py --large ~/.cache/algorank/end_to_end \\
        --n-jobs 1 --n-jobs 8 --budget 60 --repeats 1 --cores 16 --json overlap_large.json

A dataset is ``SPEC`` or ``SPEC=EXCLUDED_ID`` (the prior dataset to leave out of the meta-data; a shared
file's own name by default).  ``--large DIR`` adds the large collection's tables from ``DIR`` (none of them is a
prior dataset).  ``--cores C`` runs ``C // n_jobs`` processes at once for each ``--n-jobs`` value (all the runs of
one value, then the next), so that every run has the cores it asks for and no more; without it the runs go one at
a time, alternating the values.  ``--code LABEL=PATH`` (repeatable) runs algorank from ``PATH`` (put first on
``PYTHONPATH``), alternating with the other codes, e.g. to compare two versions under the same load.  Runs on a
busy machine are slower and noisier: say how busy it was.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED = next((p for p in (ROOT.parent / "shared" / "datasets", Path("/work/shared/datasets")) if p.is_dir()),
              Path("/work/shared/datasets"))
#: Shared datasets of about vehicle's size (841 rows, 4 classes) and spambase's (3,196 rows, 2 classes).
DEFAULT_DATASETS = (f"{SHARED / 'statlib' / 'analcatdata_authorship.arff'}=analcatdata_authorship",
                    f"{SHARED / 'uci' / 'kr.vs.kp.arff'}=kr.vs.kp")


def first_overlap(trace) -> float:
    """The first moment two tests of ``trace`` (dicts with ``started`` and ``ended``) run at once (NaN: never)."""
    spans = sorted((t["started"], t["ended"]) for t in trace if t.get("started") is not None)
    latest_end = -math.inf
    for start, end in spans:
        if start < latest_end:
            return float(start)
        latest_end = max(latest_end, end)
    return math.nan


def time_to(trace, score: float) -> float:
    """When a test with at least ``score`` first ended (NaN: never)."""
    ends = [t["ended"] for t in trace if t.get("accuracy") is not None and t["status"] == "ok"
            and t["accuracy"] >= score - 1e-12]
    return float(min(ends)) if ends else math.nan


def best_score(trace) -> float:
    scores = [t["accuracy"] for t in trace if t["status"] == "ok" and t.get("accuracy") is not None]
    return max(scores) if scores else math.nan


def run_once(spec: str, excluded: str | None, n_jobs: int, budget: float, strategy: str | None,
             path: str | None = None, target: str | None = None) -> dict:
    cmd = [sys.executable, "-m", "algorank", "recommend", spec, "--budget", str(budget), "--n-jobs", str(n_jobs),
           "--json", "--quiet"] + (["--target", target] if target else [])
    if excluded:
        cmd += ["--exclude-dataset", excluded]
    if strategy:
        cmd += ["--strategy", strategy]
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
    if path:
        env["PYTHONPATH"] = os.pathsep.join([path] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - t0
    if out.returncode not in (0, 3):
        raise SystemExit(f"error: {' '.join(cmd)} exited {out.returncode}: {out.stderr.strip()[-500:]}")
    trace = json.loads(out.stdout)["trace"]
    best = best_score(trace)
    starts = [t["started"] for t in trace if t.get("started") is not None]
    first = min(starts) if starts else math.nan
    return {"n_jobs": n_jobs, "wall": wall, "tests": len(trace), "best": best,
            "first_test": first, "first_overlap": first_overlap(trace),
            "overlap_after_first": first_overlap(trace) - first,
            "to_best": time_to(trace, best) if math.isfinite(best) else math.nan, "trace": trace}


#: The target column of a dataset spec, where it is known (the large collection's tables).
TARGETS: dict[str, str] = {}


def large_tables(folder: Path) -> list[str]:
    """The large collection's tables in ``folder`` (written by ``bench_end_to_end.py --collection large``), as
    dataset specs: none of them is a prior dataset of the meta-data, so none excludes one."""
    from algorank.metadata.large_collection import LARGE_TABLES

    names = [f"{t[0]}-{t[1]}" for t in LARGE_TABLES]
    missing = [n for n in names if not (folder / f"{n}.parquet").is_file()]
    if missing:
        raise SystemExit(f"error: {folder} lacks {', '.join(missing)}: write them with "
                         "bench_end_to_end.py --collection large --data DIR first")
    for t, n in zip(LARGE_TABLES, names):
        TARGETS[str(folder / f"{n}.parquet")] = t[2]
    return [str(folder / f"{n}.parquet") for n in names]


def run_all(items, configs, args) -> dict:
    """Every run, ``(spec, label, n_jobs) -> [run, ...]``: one at a time, alternating the configurations between
    repeats, or with ``args.cores`` as many at once as the cores hold (``cores // n_jobs``)."""
    from concurrent.futures import ThreadPoolExecutor

    done: dict = {}

    def one(spec, excluded, label, path, n, rep):
        r = run_once(spec, excluded, n, args.budget, args.strategy, path, TARGETS.get(spec))
        print(f"{Path(spec).name} {label} n_jobs={n} repeat {rep}: first test {r['first_test']:.2f} s, "
              f"first overlap {r['first_overlap']:.2f} s, to best {r['to_best']:.2f} s, best {r['best']:.4f}, "
              f"wall {r['wall']:.1f} s", file=sys.stderr, flush=True)
        return (spec, label, n), {"dataset": spec, "code": label, "repeat": rep, **r}

    if args.cores is None:
        for spec, excluded in items:
            for rep in range(args.repeats):
                for label, path, n in (configs if rep % 2 == 0 else list(reversed(configs))):
                    key, r = one(spec, excluded, label, path, n, rep)
                    done.setdefault(key, []).append(r)
        return done
    for label, path, n in configs:  # all the runs of one configuration, as many at once as the cores hold
        with ThreadPoolExecutor(max_workers=max(1, args.cores // n)) as pool:
            futures = [pool.submit(one, spec, excluded, label, path, n, rep)
                       for rep in range(args.repeats) for spec, excluded in items]
            for f in futures:
                key, r = f.result()
                done.setdefault(key, []).append(r)
    return done


def _median(values) -> float:
    values = [v for v in values if isinstance(v, (int, float)) and math.isfinite(v)]
    return statistics.median(values) if values else math.nan


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dataset", action="append", default=[], metavar="SPEC[=EXCLUDED_ID]")
    p.add_argument("--n-jobs", action="append", type=int, default=[], metavar="N")
    p.add_argument("--budget", type=float, default=20.0)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--strategy", default=None, help="default: recommend's default")
    p.add_argument("--json", metavar="PATH", help="also write every run and the medians here")
    p.add_argument("--code", action="append", default=[], metavar="LABEL=PATH",
                   help="run algorank from PATH (first on PYTHONPATH); repeatable, runs alternate")
    p.add_argument("--large", metavar="DIR", help="add the large collection's tables, written as Parquet in DIR")
    p.add_argument("--cores", type=int, metavar="C", help="run C // n_jobs processes at once for each --n-jobs value")
    args = p.parse_args(argv)
    if args.cores is not None and args.cores < 1:
        raise SystemExit("error: --cores must be at least 1")
    datasets = list(args.dataset) + (large_tables(Path(args.large).expanduser()) if args.large else [])
    datasets = datasets or list(DEFAULT_DATASETS)
    jobs = args.n_jobs or [1, 2]
    if 1 not in jobs:
        jobs = [1] + jobs  # the reference
    codes = [tuple(c.split("=", 1)) if "=" in c else (c, c) for c in args.code] or [("this", None)]
    configs = [(label, path, n) for label, path in codes for n in jobs]
    rows, runs = [], []
    items = []
    for item in datasets:
        spec, _, excluded = item.partition("=")
        if not excluded and Path(spec).exists() and not args.large:
            excluded = Path(spec).stem
        items.append((spec, excluded or None))
    done = run_all(items, configs, args)
    for spec, _ in items:
        per = {(label, n): done.get((spec, label, n), []) for label, _, n in configs}
        for label, _, n in configs:
            rs = per[label, n]
            reference = _median([r["best"] for r in per[label, 1]])  # the same code's one-job runs
            for r in rs:
                r["to_reference"] = time_to(r["trace"], reference) if math.isfinite(reference) else math.nan
                runs.append(r)
            row = {"dataset": Path(spec).name, "code": label, "n_jobs": n}
            for key in ("first_test", "first_overlap", "overlap_after_first", "to_best", "to_reference", "best",
                        "tests", "wall"):
                row[key] = _median([r[key] for r in rs])
            row["within_budget"] = all(r["wall"] <= args.budget * 1.1 + 1 for r in rs)
            rows.append(row)
    one_job = {(r["dataset"], r["code"]): r["to_reference"] for r in rows if r["n_jobs"] == 1}
    for r in rows:  # how many times sooner than one job the run reached the one-job runs' best (higher is better)
        ref = one_job.get((r["dataset"], r["code"]), math.nan)
        r["sooner"] = ref / r["to_reference"] if r["to_reference"] > 0 else math.nan
    print(f"budget {args.budget:g} s, {args.repeats} repeat(s), {os.cpu_count()} CPU(s), load average "
          f"{os.getloadavg()[0]:.1f} at the end; medians, seconds since the process started (lower is better)\n")
    print("| dataset | code | n_jobs | first test | first overlap | overlap after first | to best | to 1-job best | "
          "times sooner than 1 job (higher is better) | best (higher is better) | tests | wall | "
          "wall <= budget x 1.1 + 1 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['dataset']} | {r['code']} | {r['n_jobs']} | {r['first_test']:.2f} | {r['first_overlap']:.2f} | "
              f"{r['overlap_after_first']:.2f} | {r['to_best']:.2f} | {r['to_reference']:.2f} | {r['sooner']:.2f} | "
              f"{r['best']:.4f} | {r['tests']:g} | {r['wall']:.1f} | {'yes' if r['within_budget'] else 'no'} |")
    ratios = [r["sooner"] for r in rows if r["n_jobs"] != 1 and math.isfinite(r["sooner"])]
    if ratios:
        print(f"\ngeometric mean of 'times sooner than 1 job' over the runs with more jobs: "
              f"{math.exp(statistics.fmean(math.log(v) for v in ratios)):.2f} ({len(ratios)} rows)")
    if args.json:
        for r in runs:
            r.pop("trace", None)
        Path(args.json).write_text(json.dumps({"budget": args.budget, "repeats": args.repeats, "rows": rows,
                                               "runs": runs}, indent=1, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
