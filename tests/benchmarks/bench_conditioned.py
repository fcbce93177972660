"""How good are the conditioned strategy's models, and does it generalise? (run on demand)

Three reports, each on data that no choice of the strategy was tuned on when ``--test`` names a
meta-dataset other than ``--train``:

1. **Runtime model**, leave-one-dataset-out on ``--train``: median |log10(predicted/measured)|
   and the share within 2x, against the dataset-independent baseline (each learner's median
   time over the other datasets, what ``recommend`` showed before).
2. **Accuracy model**, leave-one-dataset-out on ``--train``: mean absolute error of the predicted
   accuracy of the untested learners before any test and after 1, 3 and 5 tests (taken in the
   policy's own order), against the prior-mean baseline (each learner's mean accuracy over the
   other datasets).
3. **Time to a near-best learner** on every dataset of ``--test`` (strategies fitted on
   ``--train``, minus datasets of the same name): seconds until the best accuracy found is
   within ``--eps`` of the best of all learners, replaying the recorded runs; a failed test costs
   its recorded time and finds nothing.  Faster / tied / slower against ``--reference``, sign
   test, summed times and the oracle (cheapest learner within eps).

Example (train on the 63-dataset uci set, test on the broad evaluator set)::

    python tests/benchmarks/bench_conditioned.py --train uci --test metadata/data/broad \
        --strategy ar:p=0 --strategy ar:p=1/16 --strategy ei --out results/conditioned.csv
"""

from __future__ import annotations

import argparse
import logging
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from algorank.api import load_meta
from algorank.recommender.kernel.environments import meta_arrays
from algorank.recommender.kernel.time_model import live_model_for
from algorank.recommender.kernel.trace import Observation
from algorank.metadata.dataset import MetaDataset
from algorank.recommender.accuracy_model import from_gain, to_gain
from algorank.recommender.ei import ConditionedStrategy
from algorank.recommender.live.recommend import live_strategy
from algorank.recommender.runtime_model import fit_runtime_model, runtime_features

logger = logging.getLogger("bench_conditioned")


def load(source: str) -> MetaDataset:
    """An embedded name, a file, or a folder of per-dataset Parquet files (the broad build's output)."""
    path = Path(source)
    if path.is_dir():
        parts = [MetaDataset.load(p) for p in sorted(path.glob("*.parquet"))]
        if not parts:
            raise SystemExit(f"error: no .parquet files in {path}")
        return MetaDataset.concat(parts)
    return load_meta(source)


def runtime_report(meta: MetaDataset, *, time_kind: str) -> dict:
    arrays = meta_arrays(meta, time_kind=time_kind)
    datasets, learners = list(arrays.datasets), list(arrays.learners)
    seconds, censored = arrays.seconds, arrays.censored & np.isfinite(arrays.seconds)
    table = meta.datasets.set_index("dataset").reindex(datasets)
    feats = runtime_features(table.reset_index().to_dict("records"))
    err_model, err_base = [], []
    for i in range(len(datasets)):
        keep = np.arange(len(datasets)) != i
        model = fit_runtime_model(seconds[keep], feats[keep], learners, censored=censored[keep])
        pred = 10 ** model.predict_log10(feats[i])[0]
        with np.errstate(all="ignore"):
            base = np.nanmedian(seconds[keep] * np.where(censored[keep], np.nan, 1.0), axis=0)
        ok = np.isfinite(arrays.seconds[i]) & (arrays.seconds[i] > 0)
        meas = arrays.seconds[i, ok]
        err_model += list(np.abs(np.log10(pred[ok] / meas)))
        err_base += list(np.abs(np.log10(base[ok] / meas)))
    em, eb = np.asarray(err_model), np.asarray(err_base)
    eb = eb[np.isfinite(eb)]
    return {"tests": int(len(em)), "median_abs_log10": float(np.median(em)), "within_2x": float(np.mean(em <= math.log10(2))),
            "baseline_median_abs_log10": float(np.median(eb)), "baseline_within_2x": float(np.mean(eb <= math.log10(2)))}


def accuracy_report(meta: MetaDataset, strategy: ConditionedStrategy, *, steps=(0, 1, 3, 5)) -> dict:
    arrays = meta_arrays(meta, time_kind=strategy.time_kind)
    datasets = list(arrays.datasets)
    errs = {k: [] for k in steps}
    base = {k: [] for k in steps}
    for i, d in enumerate(datasets):
        train = meta.exclude(datasets=[d])
        fitted = ConditionedStrategy(h=strategy.h, p=strategy.p, shrink=strategy.shrink,
                                     time_kind=strategy.time_kind).fit(train)
        info = meta.dataset_info(d)
        policy = fitted.policy(info)
        truth = {l: arrays.accuracy[i, j] for j, l in enumerate(arrays.learners) if np.isfinite(arrays.accuracy[i, j])}
        prior_mean = np.nanmean(meta_arrays(train).accuracy, axis=0)
        prior_index = {l: j for j, l in enumerate(meta_arrays(train).learners)}
        history = []
        for k in range(max(steps) + 1):
            if k in steps:
                _, mean, _, _ = policy.scores(history)
                acc = from_gain(mean, policy.majority)
                tested = {o.learner for o in history}
                for l, a in truth.items():
                    if l in tested or l not in policy.index or l not in prior_index:
                        continue
                    errs[k].append(abs(acc[policy.index[l]] - a))
                    base[k].append(abs(prior_mean[prior_index[l]] - a))
            nxt = policy.next(history)
            if nxt is None:
                break
            a = truth.get(nxt, math.nan)
            history.append(Observation(nxt, a, 1.0, "ok" if a == a else "error"))
    return {f"mae_after_{k}": float(np.mean(errs[k])) for k in steps} | {
        f"baseline_mae_after_{k}": float(np.mean(base[k])) for k in steps}


def replay_times(meta_test: MetaDataset, strategies: dict, *, eps: float, live: bool, cv: int) -> pd.DataFrame:
    """Seconds to within ``eps`` of the best learner, per (strategy, dataset), failures charged."""
    kind = "fit_predict_time"
    tm, kind = live_model_for(meta_test, folds=cv) if live else (None, "fit_time")
    runs = meta_test.runs
    t = runs["fit_time"].astype(float) + (runs["predict_time"].astype(float).fillna(0) if kind == "fit_predict_time"
                                           else 0.0)
    cell = runs.assign(_t=t).groupby(["dataset", "learner"]).agg(
        t=("_t", "mean"), ok=("status", lambda s: bool((s == "ok").all())))
    acc = meta_test.matrix("accuracy", "mean")
    rows = []
    for d in meta_test.dataset_ids:
        a = acc.loc[d].dropna()
        if a.empty:
            continue
        target = a.max() - eps
        info = meta_test.dataset_info(d)
        secs = {l: (tm.scale * v.t + tm.overhead if tm is not None else v.t) for (dd, l), v in cell.loc[[d]].iterrows()}
        okmap = {l: v.ok for (dd, l), v in cell.loc[[d]].iterrows()}
        oracle = min(secs[l] for l in a.index[a >= target])
        rows.append({"strategy": "oracle", "dataset": d, "t_eps": oracle, "tests": 1, "reached": True})
        for name, fitted in strategies.items():
            policy = fitted.policy(info)
            history, spent, reached = [], 0.0, False
            for _ in range(len(secs) + 5):
                nxt = policy.next(history)
                if nxt is None:
                    break
                if nxt not in secs:  # never run on this dataset: skip at no cost
                    history.append(Observation(nxt, math.nan, 0.0, "error", "not in test meta-data"))
                    continue
                spent += secs[nxt]
                good = okmap[nxt] and nxt in a.index
                history.append(Observation(nxt, float(a[nxt]) if good else math.nan, secs[nxt],
                                           "ok" if good else "error"))
                if good and a[nxt] >= target:
                    reached = True
                    break
            rows.append({"strategy": name, "dataset": d, "t_eps": spent, "tests": len(history), "reached": reached})
    return pd.DataFrame(rows)


def compare(times: pd.DataFrame, reference: str) -> pd.DataFrame:
    wide = times.pivot(index="dataset", columns="strategy", values="t_eps")
    out = []
    for name in wide.columns:
        if name == reference:
            continue
        a, b = wide[name], wide[reference]
        tied = np.isclose(a, b, rtol=0.05, atol=0.05)
        faster, slower = int(((a < b) & ~tied).sum()), int(((a > b) & ~tied).sum())
        n = faster + slower
        p = float(stats.binomtest(faster, n).pvalue) if n else 1.0
        out.append({"strategy": name, "vs": reference, "faster": faster, "tied": int(tied.sum()), "slower": slower,
                    "sign_p": p, "sum_s": float(a.sum()), "ref_sum_s": float(b.sum()),
                    "median_ratio": float(np.median(a / b))})
    return pd.DataFrame(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--train", default="uci")
    ap.add_argument("--test", default=None, help="test meta-data (default: only the LOO model reports on --train)")
    ap.add_argument("--strategy", action="append", default=None)
    ap.add_argument("--reference", default="ar:p=0")
    ap.add_argument("--eps", type=float, default=0.01)
    ap.add_argument("--cv", type=int, default=5)
    ap.add_argument("--fit-time", action="store_true", help="times as recorded instead of the live test model")
    ap.add_argument("--skip-models", action="store_true")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    train = load(args.train)
    live = not args.fit_time
    kind = "fit_predict_time" if live else "fit_time"
    if not args.skip_models:
        _, kind_train = live_model_for(train, folds=args.cv)
        print("runtime model (LOO on train):", runtime_report(train, time_kind=kind_train if live else "fit_time"))
        print("accuracy model (LOO on train):", accuracy_report(train, ConditionedStrategy(time_kind=kind_train)))
    if args.test is None:
        return 0
    test = load(args.test)
    names = {str(n).lower() for n in test.datasets.get("name", pd.Series(test.dataset_ids))}
    overlap = [d for d, n in zip(train.datasets["dataset"], train.datasets.get("name", train.datasets["dataset"]))
               if str(n).lower() in names or d in set(test.dataset_ids)]
    train = train.exclude(datasets=overlap) if overlap else train
    print(f"train: {len(train.dataset_ids)} datasets ({len(overlap)} dropped: same name as a test dataset); "
          f"test: {len(test.dataset_ids)} datasets")
    fitted = {}
    for spec in args.strategy or ["ar:p=0", "ar:p=1/16", "ei"]:
        strat, *_ = live_strategy(spec, train, time_model="live" if live else "fit", cv=args.cv)
        fitted[spec] = strat.fit(train)
    times = replay_times(test, fitted, eps=args.eps, live=live, cv=args.cv)
    table = compare(times, args.reference)
    oracle_sum = times.query("strategy == 'oracle'")["t_eps"].sum()
    print(table.to_string(index=False))
    print(f"oracle sum {oracle_sum:.1f} s; reached eps: " + ", ".join(
        f"{k}: {v}" for k, v in times.groupby("strategy")["reached"].sum().items()))
    if args.out:
        times.to_csv(args.out, index=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
