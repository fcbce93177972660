"""Benchmark: the meta-level commands on synthetic meta-data from 1,000 x 100 to 10,000 x 1,000.

Run on demand (not collected by pytest)::

    python tests/benchmarks/bench_scale.py [--sizes 1000x100 2000x200 ...] [--commands tune-p rank ...]
        [--repeats 3] [--timeout 600] [--csv tests/benchmarks/results/scale.csv] [--data-dir DIR]

For each size ``n x k`` a synthetic meta-dataset is written once (``n`` datasets, ``k`` learners, 10 % of
the cells missing, fixed seed; learner 0 everywhere): accuracies from a dataset difficulty plus a
learner skill plus noise, times from a dataset size times a learner speed (log-normal, about six
decades).  Each command runs as its own process of the CLI (``python -m algorank ... --meta FILE
--json``), so the figures are what a user waits for: start-up, loading, computing and printing.  Per
run the script records the wall seconds, the CPU seconds (user + system) and the peak resident memory
of that process (``os.wait4``), appended to the CSV as soon as the run ends: an interrupted
benchmark resumes where it stopped (rows already in the CSV are not run again).  A run over
``--timeout`` seconds is killed and recorded as such.

``multitest`` pairs runs per fold, so it runs on a set with ``--folds`` runs per cell (default 10, one
repeat of 10-fold cross-validation: fold accuracies scattered around the cell's accuracy, fold times
around its time; ``synthetic_NxK_fF.parquet``).  Its first pass tests every pair of learners on every
dataset (``k (k - 1) / 2`` paired t tests per dataset), so its cost grows with datasets x learners**2 x
folds: ``--multitest-learners K`` (default 40) caps the learners of its sets, and its rows are recorded
with their own size.  ``lt`` and the default ``eiu`` use their leave-one-dataset-out fast path (prepared
once, fitted per held-out dataset on arrays); they follow a sequential policy over every learner on every
dataset, so they take minutes from 1,000 x 100 on (give them ``--timeout``).

The summary (medians over the repeats) is printed as a Markdown table with, per command, the growth
exponent in cells: the slope of log(wall seconds) against log(n k) by least squares over the sizes
that finished (1 = linear).
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]

SIZES = ("1000x100", "2000x200", "5000x500", "10000x1000")
#: Command name -> CLI arguments (``--meta FILE --json`` are added).
COMMANDS = {
    "tune-p": ["tune-p"],
    "benchmark ar:p=1/16": ["benchmark", "--strategy", "ar:p=1/16"],
    "benchmark lt": ["benchmark", "--strategy", "lt"],
    "benchmark eiu (default)": ["benchmark", "--strategy", "eiu"],
    "multitest": ["multitest"],
    "rank": ["rank"],
}
FIELDS = ["size", "n_datasets", "n_learners", "cells", "command", "repeat", "status", "wall_s", "cpu_s", "peak_mb"]


def parse_size(text: str) -> tuple[int, int]:
    try:
        n, k = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise SystemExit(f"error: a size is DATASETSxLEARNERS, such as 2000x200; got {text!r}") from None
    if n < 2 or k < 2:
        raise SystemExit(f"error: a size needs at least 2 datasets and 2 learners; got {text!r}")
    return n, k


def synthetic_meta(n: int, k: int, *, seed: int = 0, missing: float = 0.1, folds: int = 1):
    """The synthetic meta-dataset of one size (see the module docstring); ``folds > 1``: that many runs per cell
    (fold 0..folds-1 of repeat 0), accuracies and times scattered around the cell's."""
    import pandas as pd

    from algorank.metadata.dataset import MetaDataset

    rng = np.random.default_rng(seed)
    skill = rng.normal(0.0, 0.05, k)
    difficulty = rng.uniform(0.55, 0.9, n)
    acc = np.clip(difficulty[:, None] + skill[None, :] + rng.normal(0.0, 0.04, (n, k)), 0.0, 1.0).round(4)
    speed = rng.normal(0.0, 1.0, k)
    size = rng.normal(0.0, 1.0, n)
    seconds = 10.0 ** (speed[None, :] + size[:, None] + rng.normal(0.0, 0.3, (n, k)))
    keep = rng.random((n, k)) >= missing
    keep[:, 0] = True
    d, j = np.nonzero(keep)
    a, t, fold = acc[d, j], seconds[d, j], np.zeros(len(d), dtype=np.int64)
    if folds > 1:
        d, j, a, t = (np.repeat(x, folds) for x in (d, j, a, t))
        fold = np.tile(np.arange(folds), len(d) // folds)
        a = np.clip(a + rng.normal(0.0, 0.02, len(a)), 0.0, 1.0).round(4)
        t = t * 10.0 ** rng.normal(0.0, 0.05, len(t))
    # ids as categoricals (Parquet dictionaries): 100 million runs need no 100 million strings
    dataset = pd.Categorical.from_codes(d, categories=[f"d{i}" for i in range(n)])
    learner = pd.Categorical.from_codes(j, categories=[f"L{i}" for i in range(k)])
    runs = pd.DataFrame({"dataset": dataset, "learner": learner,
                         "repeat": 0, "fold": fold, "accuracy": a, "fit_time": t,
                         "predict_time": 0.0, "status": "ok"})
    datasets = pd.DataFrame({"dataset": [f"d{i}" for i in range(n)],
                             "majority_fraction": rng.uniform(0.3, 0.6, n).round(3)})
    return MetaDataset(runs, datasets)


def data_file(folder: Path, n: int, k: int, folds: int = 1) -> Path:
    path = folder / (f"synthetic_{n}x{k}.parquet" if folds == 1 else f"synthetic_{n}x{k}_f{folds}.parquet")
    if not path.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        print(f"writing {path}", file=sys.stderr, flush=True)
        synthetic_meta(n, k, folds=folds).save(path)
    return path


def run_once(args: list[str], timeout: float, env: dict) -> tuple[str, float, float, float]:
    """(status, wall s, cpu s, peak MB) of one CLI process; its output is discarded."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "algorank", *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=env, start_new_session=True)
    status = "ok"
    deadline = start + timeout
    while True:
        pid, code, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            _, code, usage = os.wait4(proc.pid, 0)
            status = "timeout"
            break
        time.sleep(0.05)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(code)
    err = proc.stderr.read().decode(errors="replace").strip().splitlines() if proc.stderr else []
    proc.stderr.close()
    if status == "ok" and proc.returncode != 0:
        status = f"exit {proc.returncode}: {err[-1][:120] if err else ''}"
    return status, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0


def load_rows(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def growth_exponent(cells: list[float], wall: list[float]) -> float:
    """Least-squares slope of log(wall) on log(cells); NaN with fewer than two sizes."""
    if len(cells) < 2:
        return float("nan")
    x, y = np.log(np.asarray(cells, dtype=float)), np.log(np.asarray(wall, dtype=float))
    return float(np.polyfit(x, y, 1)[0])


def summary(rows: list[dict], sizes: list[str], commands: list[str]) -> str:
    """Markdown table: median wall s (CPU s, peak MB) per command and size, and the growth exponent."""
    head = ["command", *(s.replace("x", " × ") for s in sizes), "exponent (wall, CPU)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for command in commands:
        cells, walls, cpus, out = [], [], [], []
        for size in sizes:
            n = size.split("x")[0]
            runs = [r for r in rows if r["command"] == command and (r["size"] == size or (
                command == "multitest" and r["size"].count("x") == 2 and r["n_datasets"] == n))]
            ok = [r for r in runs if r["status"] == "ok"]
            if ok:
                wall = float(np.median([float(r["wall_s"]) for r in ok]))
                cpu = float(np.median([float(r["cpu_s"]) for r in ok]))
                peak = max(float(r["peak_mb"]) for r in ok)
                where = "" if ok[0]["size"] == size else f" on {ok[0]['size'].replace('x', ' × ')}"
                out.append(f"{wall:.1f} s ({cpu:.1f} s CPU, {peak / 1024:.2f} GB){where}")
                cells.append(float(ok[0]["cells"]))
                walls.append(wall)
                cpus.append(cpu)
            elif runs:
                out.append(f"> {float(runs[0]['wall_s']):.0f} s ({runs[0]['status']})"
                           if runs[0]["status"] == "timeout" else runs[0]["status"])
            else:
                out.append("not run")
        e, c = growth_exponent(cells, walls), growth_exponent(cells, cpus)
        fmt = lambda x: "n/a" if math.isnan(x) else f"{x:.2f}"  # noqa: E731
        lines.append(f"| {command} | " + " | ".join(out) + f" | {fmt(e)}, {fmt(c)} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", default=list(SIZES), metavar="NxK")
    ap.add_argument("--commands", nargs="+", default=list(COMMANDS), metavar="NAME", choices=list(COMMANDS))
    ap.add_argument("--repeats", type=int, default=1, help="runs per command and size (the table shows medians)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds before a run is killed (default 600)")
    ap.add_argument("--csv", type=Path, default=ROOT / "tests" / "benchmarks" / "results" / "scale.csv")
    ap.add_argument("--folds", type=int, default=10, help="runs per cell of the multitest sets (default 10)")
    ap.add_argument("--multitest-learners", type=int, default=40, metavar="K",
                    help="learners of the multitest sets (at most; default 40)")
    ap.add_argument("--data-dir", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "algorank-bench-scale")
    args = ap.parse_args(argv)
    sizes = [f"{n}x{k}" for n, k in (parse_size(s) for s in args.sizes)]
    env = dict(os.environ)
    rows = load_rows(args.csv)
    done = {(r["size"], r["command"], r["repeat"]) for r in rows}
    args.csv.parent.mkdir(parents=True, exist_ok=True)
    new_file = not args.csv.is_file()
    with args.csv.open("a", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS)
        if new_file:
            writer.writeheader()
        for size in sizes:
            for command in args.commands:
                n, k = parse_size(size)
                folds = 1
                if command == "multitest":
                    k, folds = min(k, args.multitest_learners), args.folds
                label = f"{n}x{k}" if folds == 1 else f"{n}x{k}x{folds}"
                for rep in range(args.repeats):
                    if (label, command, str(rep)) in done:
                        continue
                    path = data_file(args.data_dir, n, k, folds)
                    status, wall, cpu, peak = run_once([*COMMANDS[command], "--meta", str(path), "--json"],
                                                       args.timeout, env)
                    row = {"size": label, "n_datasets": n, "n_learners": k, "cells": n * k, "command": command,
                           "repeat": rep, "status": status, "wall_s": f"{wall:.3f}", "cpu_s": f"{cpu:.3f}",
                           "peak_mb": f"{peak:.1f}"}
                    writer.writerow(row)
                    fh.flush()
                    rows.append({k2: str(v) for k2, v in row.items()})
                    print(f"{label:>13} {command:<24} {status:<8} {wall:8.1f} s wall {cpu:8.1f} s cpu "
                          f"{peak:8.0f} MB", file=sys.stderr, flush=True)
    print(summary(rows, sizes, args.commands))
    return 0


if __name__ == "__main__":
    sys.exit(main())
