"""Benchmark: the full AR-A3R P sweep (paper grid, 8 values) by leave-one-dataset-out.

Run on demand (not collected by pytest)::

    python tests/benchmarks/bench_p_sweep.py [--repeats 5] [--synthetic-datasets 2000 --synthetic-learners 200]

Reports, for the embedded LCDB snapshot (248 x 20) and a synthetic meta-dataset
(default 2000 datasets x 200 learners, 14% missing cells, one run per cell):
the median wall time of the sweep over ``--repeats`` runs (from a loaded MetaDataset,
including the conversion to arrays; and from the arrays alone), the time to build the
synthetic MetaDataset, the peak traced memory of one sweep (tracemalloc) and the
process's peak RSS, plus the sweep table.  Targets: snapshot well under 1 s,
synthetic under 10 s and 2 GB.
"""

from __future__ import annotations

import argparse
import gc
import resource
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from algorank.evaluation.meta.benchmark import PAPER_P_GRID, p_sweep  # noqa: E402
from algorank.recommender.kernel.environments import meta_arrays  # noqa: E402
from algorank.metadata.dataset import MetaDataset  # noqa: E402
from algorank.metadata.snapshot import load_snapshot  # noqa: E402
from algorank.recommender.registry import make_ar  # noqa: E402


def synthetic_meta(n_datasets: int, n_learners: int, *, missing: float = 0.14, seed: int = 0) -> MetaDataset:
    """Learners with a latent quality and speed; datasets with a difficulty and a size."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(0, 1, n_learners)
    speed = rng.normal(0, 1, n_learners) + 0.5 * quality  # better learners tend to be slower
    difficulty = rng.uniform(0.55, 0.95, n_datasets)
    size = rng.normal(0, 1, n_datasets)
    acc = np.clip(difficulty[:, None] + 0.04 * quality[None, :] + rng.normal(0, 0.03, (n_datasets, n_learners)), 0, 1)
    sec = 10 ** (-2 + speed[None, :] + 1.2 * size[:, None] + rng.normal(0, 0.3, (n_datasets, n_learners)))
    keep = rng.random((n_datasets, n_learners)) >= missing
    keep[:, 0] = True
    d_idx, l_idx = np.nonzero(keep)
    runs = pd.DataFrame({
        "dataset": np.char.add("d", d_idx.astype(str)),
        "learner": np.char.add("L", l_idx.astype(str)),
        "repeat": 0, "fold": 0,
        "accuracy": acc[keep], "fit_time": sec[keep], "predict_time": 0.0, "status": "ok",
    })
    datasets = pd.DataFrame({"dataset": [f"d{i}" for i in range(n_datasets)],
                             "majority_fraction": rng.uniform(0.3, 0.6, n_datasets)})
    return MetaDataset(runs, datasets, source="synthetic")


def _median_time(fn, repeats: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def _peak_traced(fn) -> float:
    gc.collect()
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def run(label: str, meta: MetaDataset, repeats: int) -> None:
    def from_meta():
        meta._cache.clear()  # count the conversion to arrays every time
        return p_sweep(meta, make_strategy=make_ar, grid=PAPER_P_GRID)

    arrays = meta_arrays(meta)
    t_meta, sweep = _median_time(from_meta, repeats)
    t_arrays, _ = _median_time(lambda: p_sweep(arrays, make_strategy=make_ar, grid=PAPER_P_GRID), repeats)
    peak = _peak_traced(from_meta)
    n_d, n_l = arrays.shape
    print(f"\n== {label}: {n_d} datasets x {n_l} learners, window [{sweep.tmin:g} s, {sweep.tmax:g} s]")
    print(f"P sweep (8 P values), median of {repeats}: {t_meta:.3f} s from the MetaDataset, "
          f"{t_arrays:.3f} s from arrays; peak traced memory {peak:.0f} MiB")
    table = sweep.table()
    table.insert(1, "P", [("0" if p == 0 else f"1/{round(1 / p)}") for p in table["p"]])
    print(table.drop(columns="p").to_string(index=False, float_format=lambda x: f"{x:.3f}"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--synthetic-datasets", type=int, default=2000)
    ap.add_argument("--synthetic-learners", type=int, default=200)
    args = ap.parse_args()
    run("embedded LCDB snapshot", load_snapshot(), args.repeats)
    t0 = time.perf_counter()
    meta = synthetic_meta(args.synthetic_datasets, args.synthetic_learners)
    print(f"\n(synthetic MetaDataset built and validated in {time.perf_counter() - t0:.1f} s, {len(meta)} runs)")
    run("synthetic", meta, args.repeats)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak RSS of the whole process: {rss:.0f} MiB")


if __name__ == "__main__":
    main()
