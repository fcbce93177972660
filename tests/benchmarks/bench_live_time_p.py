"""Which P of AR-A3R is best when tests cost what a LIVE test costs (run on demand, ~1 min).

Leave-one-dataset-out on an embedded meta-dataset (``--meta lcdb`` or ``uci``, or a file)
with the live time model of :mod:`algorank.recommender.kernel.time_model` applied to the simulated test
times AND (through the same meta-data) to the times the strategies rank with:
``T = folds x t + overhead``, ``t`` the fit time (LCDB) or fit + predict time (meta-data
with predict times, e.g. ``uci``), as :func:`algorank.recommender.live.recommend.recommend` does.
Reports the plain P sweep, the P chosen by nested leave-one-dataset-out
(:func:`algorank.evaluation.meta.benchmark.tune_p_nested`) and its outer MIL.  The MIL window is the
default rule applied to the live times.

Usage::

    python tests/benchmarks/bench_live_time_p.py [--meta uci] [--overhead 0.25] [--folds 5]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from algorank.evaluation.meta.benchmark import PAPER_P_GRID, p_sweep, tune_p_nested  # noqa: E402
from algorank.recommender.kernel.time_model import live_arrays  # noqa: E402
from algorank.metadata.snapshot import load_meta  # noqa: E402
from algorank.recommender.average_ranking import AverageRanking, format_p  # noqa: E402

GRID = (1.0, 1 / 2) + PAPER_P_GRID


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--meta", default="lcdb", help="embedded name (lcdb, uci) or file")
    ap.add_argument("--overhead", type=float, default=None, help="default: the calibrated constant for the time kind")
    ap.add_argument("--folds", type=int, default=5)
    args = ap.parse_args(argv)
    meta = load_meta(args.meta)
    arrays, model, kind = live_arrays(meta, folds=args.folds, overhead=args.overhead)
    sweep = p_sweep(arrays, make_strategy=lambda p: AverageRanking(p=p), grid=GRID)
    print(f"meta {args.meta} ({len(meta.dataset_ids)} datasets); live time model: "
          f"{model.describe(kind)}; "
          f"MIL window [{sweep.tmin:g}, {sweep.tmax:g}] s")
    for p, r in zip(sweep.grid, sweep.results):
        print(f"  ar:p={format_p(p):6s} mean MIL {r.mean_mil:.3f}  median {r.median_mil:.3f}")
    nested = tune_p_nested(arrays, make_strategy=lambda p: AverageRanking(p=p), grid=GRID)
    counts = Counter(format_p(p) for p in nested.chosen_p)
    print(f"nested P choice: mean outer MIL {nested.mean_mil:.3f}; chosen P counts {dict(counts.most_common())}")


if __name__ == "__main__":
    main()
