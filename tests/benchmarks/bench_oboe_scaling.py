"""Benchmark: the strategies on OBOE's 219 configurations (the embedded ``--meta oboe``, 418 datasets).

Run on demand (not collected by pytest)::

    python tests/benchmarks/bench_oboe_scaling.py [--skip-lt] [--strategies ar:p=0 ar:p=1/16 ...]

For each strategy: leave-one-dataset-out on the recorded per-fold times (the benchmark's default
window), its mean and median MIL, the wall and CPU seconds it took (``time.process_time`` of this
process), and the peak RSS.  Then the nested P tuning and, unless ``--skip-lt``, one ``lt`` order
(the rollout) with the windowed candidates and, for comparison, with every learner as a candidate
(``--full-rollout``; about 5 minutes here).  The README's OBOE timings come from the CLI runs of
the same commands; this script repeats them in one process.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from algorank.evaluation.meta.benchmark import PAPER_P_GRID, benchmark_strategies, tune_p_nested  # noqa: E402
from algorank.metadata.snapshot import load_meta  # noqa: E402
from algorank.recommender.registry import make_ar, parse_strategy  # noqa: E402

DEFAULT = ["ar:p=0", "ar:p=1/16", "oracle", "fastest", "best-accuracy", "random:seed=0", "at:p=1/16"]


def _timed(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--strategies", nargs="+", default=DEFAULT)
    ap.add_argument("--skip-lt", action="store_true", help="leave out the lt benchmark (minutes)")
    ap.add_argument("--full-rollout", action="store_true", help="also time one lt order with every candidate")
    args = ap.parse_args(argv)
    meta, wall, cpu = _timed(lambda: load_meta("oboe"))
    d = meta.describe()
    print(f"oboe: {d.datasets} datasets x {d.learners} learners, loaded in {wall:.2f} s")
    specs = list(args.strategies) + ([] if args.skip_lt else ["lt"])
    print(f"{'strategy':<22}{'mean MIL':>10}{'median MIL':>12}{'wall s':>9}{'cpu s':>9}")
    for spec in specs:
        suite, wall, cpu = _timed(lambda: benchmark_strategies([parse_strategy(spec)], meta))
        r = suite.results[0]
        print(f"{spec:<22}{r.mean_mil:>10.3f}{r.median_mil:>12.3f}{wall:>9.1f}{cpu:>9.1f}", flush=True)
    nested, wall, cpu = _timed(lambda: tune_p_nested(meta, make_strategy=make_ar, grid=PAPER_P_GRID))
    print(f"{'tune-p --nested':<22}{nested.mean_mil:>10.3f}{nested.median_mil:>12.3f}{wall:>9.1f}{cpu:>9.1f}")
    if args.full_rollout:
        for cands in (20, 219):
            s = parse_strategy(f"lt:cands={cands}").with_window(1e-3, 100.0)
            s.fit(meta)
            _, wall, cpu = _timed(lambda: s.order_for({}))
            print(f"one lt order, cands={cands:<4}{'':>22}{wall:>9.1f}{cpu:>9.1f}", flush=True)
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
