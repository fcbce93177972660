"""Leave-one-dataset-out calibration of what the plan expects before any test.

For every dataset of the meta-data (default the embedded ``broad`` set), the prior is fitted on the other datasets
and predicts the held-out one; the script prints, over all (dataset, learner) cells with a result:

* the gap to the best learner (:class:`~algorank.recommender.live.prior.RelativePrior`): mean absolute error in
  points and the coverage of its 90 % interval;
* the best score on the dataset: the same;
* for comparison, the strategy's own absolute expected accuracy (``predictions()`` of the default strategy, the
  numbers the plan showed before): mean absolute error and the coverage of its 90 % interval.

Run::

    OMP_NUM_THREADS=1 python tests/benchmarks/bench_prior_calibration.py [--meta broad] [--strategy eiu]

A few seconds of CPU on broad.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main(argv=None) -> None:
    from algorank.metadata.snapshot import load_meta
    from algorank.recommender.ei import _attempted, _Prepared
    from algorank.recommender.kernel.environments import meta_arrays
    from algorank.recommender.live.prior import LEVEL, check_calibration, strategy_bandwidth
    from algorank.recommender.live.recommend import live_strategy

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--meta", default="broad")
    ap.add_argument("--strategy", default="eiu")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    meta = load_meta(args.meta)
    strat = live_strategy(args.strategy, meta)[0]
    h = strategy_bandwidth(strat)
    check = check_calibration(meta, strat)
    arrays = meta_arrays(meta)
    n, m = arrays.accuracy.shape
    table = meta.datasets.set_index("dataset").reindex(list(arrays.datasets))
    infos = [dict(r, dataset=d) for d, r in zip(arrays.datasets, table.to_dict("records"))]
    # the strategy's own absolute predictions, left out the same way
    own_err, own_in = [], []
    if hasattr(strat, "_fit_prepared") and hasattr(strat, "predictions"):  # ei and its family
        prep = _Prepared.of(meta, meta_arrays(meta, time_kind=strat.time_kind),
                            _attempted(meta, list(arrays.datasets), list(arrays.learners)))
        sa = prep.arrays
        for d in range(n):
            strat._fit_prepared(prep.take(np.flatnonzero(np.arange(n) != d)))
            for p in strat.predictions(infos[d]):
                j = sa.learners.index(p.learner) if p.learner in sa.learners else None
                if j is None or not np.isfinite(sa.accuracy[d, j]):
                    continue
                own_err.append(abs(p.accuracy - sa.accuracy[d, j]))
                own_in.append(p.accuracy_low <= sa.accuracy[d, j] <= p.accuracy_high)
    print(f"meta-data {args.meta}: {n} datasets, {m} learners; strategy {args.strategy} (bandwidth h = {h:g}); "
          f"{100 * LEVEL:.0f} % intervals; leave-one-dataset-out")
    print(f"gap to the best learner: MAE {100 * check['gap_mae']:.2f} points, coverage "
          f"{100 * check['gap_coverage']:.1f} % ({check['gap_cells']} cells)")
    print(f"best score of the dataset: MAE {100 * check['best_mae']:.2f} points, coverage "
          f"{100 * check['best_coverage']:.1f} % ({check['best_datasets']} datasets)")
    if own_err:
        print(f"strategy's own absolute expected accuracy: MAE {100 * np.mean(own_err):.2f} points, coverage "
              f"{100 * np.mean(own_in):.1f} % ({len(own_err)} cells)")
    print(f"{time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
