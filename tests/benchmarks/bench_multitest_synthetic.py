"""Benchmark: the synthetic experiment of Ulas, Yildiz and Alpaydin (2012), Section 4.6.

Run on demand (not collected by pytest)::

    python tests/benchmarks/bench_multitest_synthetic.py [--trials 1000] [--seed 0]

Three learners numbered in decreasing prior preference have error rates
``0.5 + 2L``, ``0.5`` and ``0.5 - 2L``.  A classifier with error probability p is
simulated as in the paper: N = 100 uniform draws, an error when the draw is below
p, error rate = errors / N.  The paper leaves the resampling design of the
per-fold errors implicit (its MultiTest uses 5x2 cv); here every learner gets 10
such error rates (a 5x2 cv layout) per trial and MultiTest uses the one-sided
combined 5x2 cv t test with Holm's correction at alpha = 0.05 (and, for
comparison, Dietterich's 5x2 cv t).  For each L the fractions of the orders found
over ``--trials`` trials are printed.  Expected: at L = 0 the prior 1-2-3 in the
large majority of trials; at L = 0.1 the order 3-2-1.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from algorank.recommender.multitest import multitest  # noqa: E402

ORDERS = ["1-2-3", "1-3-2", "2-1-3", "2-3-1", "3-1-2", "3-2-1"]


def run(lam: float, trials: int, seed: int, test: str, n: int = 100) -> collections.Counter:
    rng = np.random.default_rng(seed)
    p = np.array([0.5 + 2 * lam, 0.5, 0.5 - 2 * lam])
    counts = collections.Counter()
    for _ in range(trials):
        errors = (rng.random((3, 10, n)) < p[:, None, None]).mean(axis=2)
        res = multitest(errors, [0, 1, 2], labels=["1", "2", "3"], pairwise=test, higher_is_better=False)
        counts["-".join(res.order)] += 1
    return counts


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--lambdas", default="0,0.02,0.04,0.06,0.08,0.1")
    args = ap.parse_args(argv)
    lambdas = [float(x) for x in args.lambdas.split(",")]
    for test in ("combined_5x2cv_t", "dietterich_5x2cv_t"):
        print(f"\n{test}, {args.trials} trials, N = 100, Holm, alpha = 0.05")
        print(f"{'L':>6}" + "".join(f"{o:>8}" for o in ORDERS) + f"{'s':>7}")
        for lam in lambdas:
            t0 = time.perf_counter()
            c = run(lam, args.trials, args.seed, test)
            dt = time.perf_counter() - t0
            print(f"{lam:>6.2f}" + "".join(f"{c[o] / args.trials:>8.3f}" for o in ORDERS) + f"{dt:>7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
