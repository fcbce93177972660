"""Choosing a strategy per dataset by meta-features, as auto-sklearn 2.0's policy selector does (training parts only).

auto-sklearn 2.0 (Feurer et al., JMLR 2022) picks one of several AutoML policies for a new dataset with a
one-vs-one random-forest selector on two meta-features, the number of features and the number of rows
(``automl/auto-sklearn``, ``autosklearn/experimental/selector.py``: ``OVORF`` inside ``FallbackWrapper``, trained
by ``askl2.py`` from ``balanced_accuracy/askl2_training_data.json``).  This script asks whether the same selector,
choosing among algorank's strategies, reaches a near-best learner sooner than the default alone:

1. every candidate strategy is scored by leave-one-dataset-out on the training part of ``--meta`` (the frozen
   held-out datasets removed first), with live test times: per dataset, the time to within ``--eps`` points of
   the best learner (lower is better);
2. the selector is scored by a second leave-one-dataset-out on those results: for each training dataset it is
   fitted on the other datasets' results and meta-features and picks one candidate, whose result on that dataset
   is charged.

The selector follows auto-sklearn 2.0's with the hyperparameters it ships for balanced accuracy:

* one pair model per pair of candidates ``(i, j)``: a random forest (500 trees, ``bootstrap=False``,
  ``max_depth=6``, ``max_features=1``, ``min_samples_leaf=9``, ``min_samples_split=19``, seeded 1) predicting
  whether ``i``'s loss is smaller than ``j``'s, each dataset weighted by ``|y_i - y_j|`` after scaling the losses
  of that dataset to [0, 1] by their minimum and maximum over all candidates (normalisation ``"y"``); a pair on
  which one candidate always wins is a constant;
* hard votes, the candidate with most wins; ties broken as ``OneVSOneSelector`` does (the tied candidates vote
  again among themselves, then the tie-break order decides);
* the fallback: when no training dataset has at least as many rows *and* features as the new one, the first
  candidate of the tie-break order is chosen.

Deviations: the loss is the time to within ``eps`` points of the best learner (auto-sklearn 2.0's is the test
loss after the time budget); the tie-break order is the candidates sorted by their mean scaled loss on the
training datasets (auto-sklearn 2.0 ships a fixed order); the features are counted before one-hot encoding, as
auto-sklearn 2.0 counts ``X.shape[1]``.  The candidates' results for dataset ``e`` come from strategies whose
prior included the dataset the selector is then scored on (one level of leave-one-out, not two), which favours
the selector slightly.

Output: ``tests/benchmarks/results/selector.md`` and ``selector.csv``::

    python tests/benchmarks/bench_selector.py --meta broad lcdb \\
        --set eiu lt:h=inf fastest portfolio --set eiu eiu:p=0.5 eiu:p=1
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import binomtest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_screen import training_results  # noqa: E402

#: auto-sklearn 2.0's selector hyperparameters (balanced accuracy) and forest size.
FOREST = {"n_estimators": 500, "bootstrap": False, "max_depth": 6, "max_features": 1, "min_samples_leaf": 9,
          "min_samples_split": 19}
SEED = 1


class PairwiseSelector:
    """auto-sklearn 2.0's one-vs-one random-forest policy selector with its fallback (module docstring).

    Parameters
    ----------
    forest : dict
        Random-forest parameters of every pair model.
    seed : int
        Seed of the forests.
    """

    def __init__(self, *, forest=None, seed: int = SEED) -> None:
        self.forest = dict(FOREST if forest is None else forest)
        self.seed = seed

    def fit(self, X, Y) -> "PairwiseSelector":
        """``X`` (datasets, meta-features); ``Y`` (datasets, candidates) losses, lower is better."""
        from sklearn.ensemble import RandomForestClassifier

        X, Y = np.asarray(X, dtype=float), np.asarray(Y, dtype=float)
        lo, hi = np.nanmin(Y, axis=1), np.nanmax(Y, axis=1)
        span = np.where(hi - lo == 0, 1.0, hi - lo)
        scaled = (Y - lo[:, None]) / span[:, None]
        self.X_ = X
        k = Y.shape[1]
        self.order_ = [int(j) for j in np.argsort(np.nanmean(scaled, axis=0), kind="stable")]
        self.models_ = {}
        rng = np.random.RandomState(self.seed)
        for i, j in itertools.combinations(range(k), 2):
            mask = np.isfinite(Y[:, i]) & np.isfinite(Y[:, j])
            if not mask.any():
                continue
            label = Y[mask, i] < Y[mask, j]
            if label.all() or not label.any():
                self.models_[i, j] = bool(label[0])
                continue
            model = RandomForestClassifier(random_state=rng, **self.forest)
            model.fit(X[mask], label, sample_weight=np.abs(scaled[mask, i] - scaled[mask, j]))
            self.models_[i, j] = model
        self.k_ = k
        return self

    def _vote(self, x, i, j) -> bool:
        model = self.models_.get((i, j))
        if model is None:
            return self.order_.index(i) < self.order_.index(j)
        if isinstance(model, bool):
            return model
        return bool(model.predict(x[None, :])[0])

    def choose(self, x) -> int:
        """The candidate (column of ``Y``) for meta-features ``x``."""
        x = np.asarray(x, dtype=float)
        if not np.all(self.X_ >= x, axis=1).any():
            return self.order_[0]  # outside what the training datasets cover: the fallback
        wins = np.zeros(self.k_)
        for i, j in itertools.combinations(range(self.k_), 2):
            wins[i if self._vote(x, i, j) else j] += 1
        previous = np.inf
        while True:
            tied = np.flatnonzero(wins == wins.max())
            if len(tied) == 1:
                return int(tied[0])
            if len(tied) == previous:  # the tied candidates' own votes did not separate them
                return min(tied, key=self.order_.index)
            previous = len(tied)
            for i, j in itertools.combinations(tied, 2):
                wins[i if self._vote(x, i, j) else j] += 1


def candidate_times(name: str, specs, *, eps: float) -> tuple[pd.DataFrame, float, list]:
    """Per training dataset of ``name``: each candidate's time to ``eps`` (leave-one-dataset-out), the oracle
    bound's sum, and the dataset names."""
    report, train, arrays, rows = training_results(name, specs, eps=eps, budgets=(10.0,))
    names = [arrays.datasets[r] for r in rows]
    times = pd.DataFrame({m.strategy: np.asarray(m.time_to_eps, dtype=float) for m in report.metrics}, index=names)
    table = train.datasets.set_index("dataset")
    times["n_features"] = [float(table.loc[n, "n_features"]) for n in names]
    times["n_instances"] = [float(table.loc[n, "n_instances"]) for n in names]
    return times, float(report.oracle.totals()["time_to_eps_sum"]), names


def select_loo(times: pd.DataFrame, specs) -> np.ndarray:
    """The candidate the selector picks for each dataset, fitted on all the others."""
    X = times[["n_features", "n_instances"]].to_numpy()
    Y = times[list(specs)].to_numpy()
    picks = np.empty(len(times), dtype=int)
    for d in range(len(times)):
        keep = np.arange(len(times)) != d
        picks[d] = PairwiseSelector().fit(X[keep], Y[keep]).choose(X[d])
    return picks


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--meta", nargs="+", default=["broad", "lcdb"], choices=("broad", "lcdb", "oboe"))
    ap.add_argument("--set", nargs="+", action="append", dest="sets",
                    help="candidate strategies (the first is the reference); repeat for several sets")
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--out", type=Path, default=ROOT / "tests" / "benchmarks" / "results")
    args = ap.parse_args(argv)
    sets = args.sets or [["eiu", "lt:h=inf", "fastest", "portfolio"], ["eiu", "eiu:p=0.5", "eiu:p=1"]]
    rows = []
    for name in args.meta:
        for specs in sets:
            times, bound, names = candidate_times(name, specs, eps=args.eps)
            picks = select_loo(times, specs)
            Y = times[list(specs)].to_numpy()
            chosen = Y[np.arange(len(Y)), picks]
            ref = Y[:, 0]
            faster = int(np.sum(chosen < ref * 0.99)) ; slower = int(np.sum(chosen > ref * 1.01))
            p = binomtest(faster, faster + slower).pvalue if faster + slower else 1.0
            rows.append({"meta": name, "datasets": len(Y), "candidates": " ".join(specs),
                         "selector_sum_s": chosen.sum(), "selector_x_bound": chosen.sum() / bound,
                         "reference_x_bound": ref.sum() / bound,
                         "best_single_x_bound": Y.sum(axis=0).min() / bound,
                         "per_dataset_best_x_bound": Y.min(axis=1).sum() / bound,
                         "picks": " ".join(f"{s}={int(np.sum(picks == k))}" for k, s in enumerate(specs)),
                         "faster_slower_vs_reference": f"{faster}/{slower}", "sign_p": p})
    frame = pd.DataFrame(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    frame.to_csv(args.out / "selector.csv", index=False)
    lines = [f"**auto-sklearn 2.0's policy selector over algorank's strategies, training parts (nested "
             f"leave-one-dataset-out, live test times, eps {args.eps:g} point); × the oracle bound of the summed "
             "time to eps; faster/slower: datasets against the first candidate alone**", "",
             "| set | candidates | selector | first candidate | best single | best per dataset (no selector can beat) "
             "| picks | faster/slower | sign p |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['meta']} ({r['datasets']}) | {r['candidates']} | {r['selector_x_bound']:.2f} "
                     f"({r['selector_sum_s']:.1f} s) | {r['reference_x_bound']:.2f} | {r['best_single_x_bound']:.2f} | "
                     f"{r['per_dataset_best_x_bound']:.2f} | {r['picks']} | {r['faster_slower_vs_reference']} | "
                     f"{r['sign_p']:.2g} |")
    (args.out / "selector.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
