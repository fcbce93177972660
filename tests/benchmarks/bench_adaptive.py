"""Adaptive (rank, ks) vs fixed 10 / fixed 50 repetitions on real datasets (Raeder et al., Table III).

For each dataset, run every learner for ``--pool`` repetitions of k-fold CV once
(seeded), then replay each termination criterion ``--orderings`` times on random
orderings of those repetitions (as the paper does with its 500 runs): the rank rule
sees the per-instance running means in that order, KS the repetition estimates.
Reported per criterion and learner group: mean repetitions (= fits / k) and Raeder's
reproducibility R of the pairwise comparisons, where R is computed from the final
estimates the criterion produced over the orderings (1 = the pair's order never flips).

Run:  python tests/benchmarks/bench_adaptive.py [--pool 100] [--orderings 20] [--cv 5] [--max-repeats 50]

The pool must be larger than 50, or fixed-50 would always use the same repetitions
(R = 1 trivially); adaptive rules are capped at ``--max-repeats``.
Needs ../shared/datasets.  Learners are fast ones (GaussianNB and LDA stable; a
decision tree and kNN unstable) so the whole run takes a few minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import warnings
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from algorank.evaluation.cv.stopping import make_rule, reproducibility  # noqa: E402
from algorank.evaluation.cv.datasets import load_dataset  # noqa: E402
from algorank.evaluation.cv.preprocessing import encode_features, resolve_learner  # noqa: E402
from algorank.evaluation.cv.fold import evaluate_fold, fold_seed as _fold_seed  # noqa: E402
from algorank.evaluation.cv.resampling import make_resampler  # noqa: E402

DATASETS = ["uci/iris.arff", "uci/wine.arff", "uci/glass.arff", "uci/heart.statlog.arff", "uci/ecoli.arff",
            "uci/diabetes.arff", "uci/column3C.arff", "uci/haberman.arff", "uci/breast.cancer.arff",
            "uci/credit.a.arff", "uci/vote.arff", "uci/tae.arff"]
LEARNERS = {"sklearn.naive_bayes.GaussianNB": "stable", "lda": "stable", "decision-tree": "unstable",
            "knn": "unstable"}
CRITERIA = {"rank": dict(stop="rank"), "ks-0.1": dict(stop="ks", threshold=0.1),
            "fixed-10": dict(stop="fixed", repeats=10), "fixed-50": dict(stop="fixed", repeats=50)}


def pool_runs(dataset, learners, *, pool, cv, seed):
    """learner -> (repetition estimates (pool,), per-instance scores (pool, n))."""
    X, nominal = encode_features(dataset.X)
    y = dataset.y_codes
    rs = make_resampler("cv", cv=cv, n_rows=len(y), random_state=seed)
    out = {}
    for lid in learners:
        rec = resolve_learner(lid)
        est = np.empty(pool)
        scores = np.full((pool, len(y)), np.nan)
        for r in range(pool):
            accs = []
            for s in rs.repetition(r, y):
                f = evaluate_fold(rec, X, y, s, n_classes=len(dataset.classes), nominal=nominal,
                                  random_state=_fold_seed(seed, r, s.fold))
                accs.append(f.accuracy)
                scores[r, s.test] = f.scores
            est[r] = np.mean(accs)
        out[rec.id] = (est, scores)
    return out


def replay(est, scores, order, criterion, max_repeats):
    rule = make_rule(max_repeats=max_repeats, **criterion) if criterion["stop"] != "fixed" else make_rule(**criterion)
    for i, r in enumerate(order):
        if rule.update(scores[r], est[r]):
            break
    used = rule.repeats
    return float(np.mean(est[order[:used]])), used


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pool", type=int, default=100)
    ap.add_argument("--max-repeats", type=int, default=50, help="cap of the adaptive rules")
    ap.add_argument("--orderings", type=int, default=20)
    ap.add_argument("--cv", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shared", default=str(ROOT.parent / "shared"))
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore", RuntimeWarning)  # scipy ks_2samp: exact -> asymptotic
    base = Path(args.shared) / "datasets"
    rng = np.random.default_rng(args.seed)
    rows = []
    t0 = time.perf_counter()
    for name in DATASETS:
        d = load_dataset(str(base / name))
        pooled = pool_runs(d, list(LEARNERS), pool=args.pool, cv=args.cv, seed=args.seed)
        ids = list(pooled)
        groups = dict(zip(ids, LEARNERS.values()))
        for crit, cfg in CRITERIA.items():
            finals = {lid: [] for lid in ids}
            used = {lid: [] for lid in ids}
            for _ in range(args.orderings):
                order = rng.permutation(args.pool)
                for lid in ids:
                    e, u = replay(*pooled[lid], order, cfg, args.max_repeats)
                    finals[lid].append(e)
                    used[lid].append(u)
            for i, a in enumerate(ids):
                rows.append({"dataset": d.name, "criterion": crit, "learner": a, "group": groups[a],
                             "repetitions": np.mean(used[a])})
                for b in ids[i + 1:]:
                    pair = "stable" if groups[a] == groups[b] == "stable" else (
                        "unstable" if groups[a] == groups[b] == "unstable" else "mixed")
                    rows.append({"dataset": d.name, "criterion": crit, "pair": f"{a}|{b}", "pair_group": pair,
                                 "R": reproducibility(finals[a], finals[b])})
        print(f"{d.name}: done ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    df = pd.DataFrame(rows)
    reps = df.dropna(subset=["repetitions"]).pivot_table(index="criterion", columns="group", values="repetitions",
                                                         aggfunc="mean")
    rep_r = df.dropna(subset=["R"]).pivot_table(index="criterion", columns="pair_group", values="R", aggfunc="mean")
    table = reps.add_prefix("reps ").join(rep_r.add_prefix("R "))
    table["fits per learner (k x reps)"] = args.cv * df.dropna(subset=["repetitions"]).groupby(
        "criterion")["repetitions"].mean()
    print(f"{len(DATASETS)} datasets, {args.cv}-fold CV, pool {args.pool} repetitions, {args.orderings} orderings, "
          f"{time.perf_counter() - t0:.0f} s")
    print(table.loc[list(CRITERIA)].round(3).to_string())
    per_ds = df.dropna(subset=["repetitions"]).query("criterion == 'rank'").pivot_table(
        index="dataset", columns="group", values="repetitions")
    print("\nrank rule, mean repetitions per dataset:")
    print(per_ds.round(1).to_string())
    return table


if __name__ == "__main__":
    main()
