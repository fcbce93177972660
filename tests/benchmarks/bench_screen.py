"""How far a first-fold screen shortens the search: ``eiu`` at several ``screen`` values, training parts only.

``screen=Z`` stops a test after its first fold when that fold scores more than Z binomial standard errors of
one fold below the best accuracy so far (``recommender/ei.py``, point 6).  This script scores ``eiu`` with every
value of ``--grid`` (``inf``: no screen) by leave-one-dataset-out on the training part of each ``--meta`` (the
frozen held-out datasets removed before anything is fitted), with live test times, and writes one row per set
and value: summed and median time to within ``--eps`` points of the best learner, its ratio to the oracle
bound, the mean loss at 10 s, the mean MIL, and the wins/ties/losses and sign-test p of the time against
``eiu:screen=inf`` (the strategy without the screen)::

    python tests/benchmarks/bench_screen.py --meta broad lcdb --grid inf 1 1.5 2 2.5 3

Output: ``tests/benchmarks/results/screen_grid.csv`` and ``screen_grid.md``.  OBOE records one mean per
test (no folds), so a screen changes nothing there; ask for it with ``--meta oboe`` to see the identical rows.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from algorank.api import load_meta, time_model_arrays  # noqa: E402
from algorank.evaluation.meta.scoring import _prepare, _score, _sequences, _window, start_seconds  # noqa: E402
from algorank.evaluation.meta.user_metrics import metrics_report  # noqa: E402
from algorank.metadata.splits import heldout  # noqa: E402
from algorank.recommender.base import capability  # noqa: E402
from algorank.recommender.registry import parse_strategy  # noqa: E402


def training_results(name: str, specs, *, eps: float = 1.0, budgets=(1.0, 10.0, 60.0), reference: str | None = None):
    """``(report, train, arrays, rows)``: ``specs`` and the oracle scored by leave-one-dataset-out on the training
    part of ``name`` (the frozen held-out datasets removed first), live test times, landmarkers charged to the
    strategies that read them; ``report`` their user metrics against ``reference`` (default the first spec)."""
    meta = load_meta(name)
    train = meta.exclude(datasets=list(heldout(name)))
    arrays, model, kind, words = time_model_arrays(train, time_model="live")
    lo, hi = _window(arrays, None, None)
    rows = np.flatnonzero(arrays.available.any(axis=1))
    results = []
    for spec in list(specs) + ["oracle"]:
        t0 = time.process_time()
        strategy = _prepare(parse_strategy(spec), lo, hi)
        if capability(strategy, "time_model_aware"):
            strategy = strategy.with_time_model(time_overhead=model.overhead, time_scale=model.scale, time_kind=kind)
        seq, path, charges = _sequences(strategy, train, arrays, rows, np.ones(len(arrays.datasets), dtype=bool),
                                        fast=True, progress=False)
        results.append(_score(strategy, arrays, seq, rows, lo, hi, spec, path, axis="time", charges=charges,
                              start=start_seconds(strategy, train, arrays)))
        print(f"{name} {spec}: {time.process_time() - t0:.1f} CPU s", file=sys.stderr, flush=True)
    report = metrics_report(results, arrays, eps=eps, budgets=budgets, reference=reference or specs[0],
                            time_axis=words)
    return report, train, arrays, rows


def score_set(name: str, grid, *, eps: float = 1.0, base: str = "eiu") -> list[dict]:
    """Rows of the table for one meta-dataset's training part."""
    specs = [f"{base}:screen={z}" for z in grid]
    reference = f"{base}:screen=inf" if "inf" in [str(z) for z in grid] else specs[0]
    report, _, _, rows = training_results(name, specs, eps=eps, reference=reference)
    bound = report.oracle.totals()["time_to_eps_sum"]
    comp = {c.strategy: c for c in report.comparisons if c.metric == "time_to_eps"}
    out = []
    for m in report.metrics:
        t = m.totals()
        c = comp.get(m.strategy)
        versus = c is not None and m.strategy != reference
        out.append({"meta": name, "datasets": len(rows), "strategy": m.strategy,
                    "t_eps_sum_s": t["time_to_eps_sum"], "x_oracle_bound": t["time_to_eps_sum"] / bound,
                    "t_eps_median_s": t["time_to_eps_median"], "loss@10s": t["loss@10s_mean"],
                    "mil": float(np.mean(m.mil)),
                    "wtl_vs_no_screen": f"{c.wins}/{c.ties}/{c.losses}" if versus else "",
                    "sign_p": float(c.sign.pvalue) if versus else float("nan")})
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--meta", nargs="+", default=["broad", "lcdb"], choices=("broad", "lcdb", "oboe"))
    ap.add_argument("--grid", nargs="+", default=["inf", "1", "1.5", "2", "2.5", "3"])
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--out", type=Path, default=ROOT / "tests" / "benchmarks" / "results")
    args = ap.parse_args(argv)
    rows = [r for name in args.meta for r in score_set(name, args.grid, eps=args.eps)]
    frame = pd.DataFrame(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    frame.to_csv(args.out / "screen_grid.csv", index=False)
    lines = [f"**`eiu` by `screen`, training parts (leave-one-dataset-out, live test times, eps {args.eps:g} point); "
             "W/T/L: faster / tied / slower than without the screen**", "",
             "| set | strategy | time to eps: sum | × oracle bound | median | loss@10s | MIL | W/T/L | sign p |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        p = "" if r["sign_p"] != r["sign_p"] else f"{r['sign_p']:.2g}"
        lines.append(f"| {r['meta']} ({r['datasets']}) | {r['strategy']} | {r['t_eps_sum_s']:.1f} s | "
                     f"{r['x_oracle_bound']:.2f} | {r['t_eps_median_s']:.3g} s | {r['loss@10s']:.3f} | "
                     f"{r['mil']:.3f} | {r['wtl_vs_no_screen']} | {p} |")
    (args.out / "screen_grid.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
