"""Benchmark: Bergmann-Hommel's exact procedure for k = 4 .. 10 learners.

Run on demand (not collected by pytest)::

    python tests/benchmarks/bench_bergmann_hommel.py [--repeats 5]

For each k it reports the number of exhaustive sets (Bell(k) - 1), the time to
enumerate them the first time (cold: set partitions as restricted growth strings,
vectorised with numpy, then cached) and the median time of one post hoc call with
the sets cached (warm).  Target: k = 9 completes in seconds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from algorank.evaluation.stats import bell_number, exhaustive_sets, friedman, posthoc  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--n-datasets", type=int, default=40)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    print(f"{'k':>3}{'sets':>10}{'Bell-1':>10}{'cold enumerate s':>18}{'warm posthoc s':>16}{'significant pairs':>19}")
    for k in range(4, 11):
        exhaustive_sets.cache_clear()
        t0 = time.perf_counter()
        n_sets = len(exhaustive_sets(k))
        cold = time.perf_counter() - t0
        scores = rng.random((args.n_datasets, k)) + np.linspace(0, 1, k)  # learners drift apart
        ranks = friedman(scores).average_ranks
        times = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            ph = posthoc(ranks, args.n_datasets, method="bergmann")
            times.append(time.perf_counter() - t0)
        assert n_sets == bell_number(k) - 1 and ph.exact
        print(f"{k:>3}{n_sets:>10}{bell_number(k) - 1:>10}{cold:>18.4f}{statistics.median(times):>16.4f}"
              f"{int(ph.significant.sum() // 2):>19}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
