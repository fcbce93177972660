"""Wilcoxon signed-rank test of every strategy vs a reference, from a benchmark's per_dataset.csv.

``algorank benchmark ... --out DIR`` writes DIR/per_dataset.csv (strategy, dataset, mil, ...).
This prints mean/median MIL, wins/ties/losses against ``--ref`` and the two-sided Wilcoxon
p-value (scipy, zero differences dropped), Holm-adjusted over the comparisons.

Usage::

    python tests/benchmarks/bench_strategy_significance.py DIR/per_dataset.csv --ref ar:p=1/16
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from scipy.stats import wilcoxon


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("per_dataset")
    ap.add_argument("--ref", default="ar:p=1/16")
    args = ap.parse_args(argv)
    df = pd.read_csv(args.per_dataset)
    mil = df.pivot(index="dataset", columns="strategy", values="mil")
    ref = mil[args.ref]
    rows = []
    for s in mil.columns:
        if s == args.ref:
            continue
        d = mil[s] - ref
        p = wilcoxon(mil[s], ref).pvalue if (d != 0).any() else 1.0
        rows.append({"strategy": s, "mean_mil": mil[s].mean(), "median_mil": mil[s].median(),
                     "better": int((d < 0).sum()), "ties": int((d == 0).sum()), "worse": int((d > 0).sum()),
                     "wilcoxon_p": p})
    out = pd.DataFrame(rows)
    order = np.argsort(out["wilcoxon_p"].to_numpy())
    m = len(out)
    adj = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * out["wilcoxon_p"].iloc[i]))
        adj[i] = running
    out["holm_p"] = adj
    print(f"reference {args.ref}: mean MIL {ref.mean():.3f}, median {ref.median():.3f}, {len(ref)} datasets")
    print(out.to_string(index=False, float_format=lambda x: f"{x:.4g}"))


if __name__ == "__main__":
    main()
