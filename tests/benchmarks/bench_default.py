"""Training-part numbers of the candidate default policies: leave-one-dataset-out on the datasets
OUTSIDE the frozen held-out splits only (the held-out datasets are removed from the meta-data
before anything is fitted or scored; this script never scores them).

Run on demand (not collected by pytest)::

    python tests/benchmarks/bench_default.py                          # broad, lcdb, oboe; all strategies
    python tests/benchmarks/bench_default.py --meta broad lcdb --strategy ei eit
    python tests/benchmarks/bench_default.py --meta oboe --every 4    # every 4th training dataset (exploration)

For each set and strategy the learner order of every scored training dataset is written to
``<out>/<set>/<strategy>/<dataset>.json`` as soon as it is computed, so a rerun resumes where the
last one stopped (``--force`` recomputes).  Strategies with a leave-one-dataset-out fast path
(``ar``, ``fastest``, the oracle) are computed in one go.  Every strategy is fitted on the training
part minus the scored dataset, with live test times (5-fold, ``5 x t + overhead``), and scored on
those times: time to within 1 accuracy point of the best learner (summed, median), loss at 1, 10,
60 s and the MIL over the set's default window, plus the oracle bound of each.  ``--every K``
scores every K-th training dataset (still fitted on all the others of the training part): use it
for exploration only and say so.  Writes ``<out>/default_training.md`` (one table per set).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from algorank.api import load_meta, time_model_arrays  # noqa: E402
from algorank.evaluation.meta.scoring import _compact, _prepare, _score, _window  # noqa: E402
from algorank.evaluation.meta.user_metrics import metrics_report  # noqa: E402
from algorank.metadata.splits import heldout  # noqa: E402
from algorank.recommender.base import capability  # noqa: E402
from algorank.recommender.kernel.trace import pack  # noqa: E402
from algorank.recommender.registry import parse_strategy  # noqa: E402
from bench_field import cached_order  # noqa: E402  (this folder is on the path when run as a script)

SETS = ("broad", "lcdb", "oboe")
STRATEGIES = ("ar:p=0", "ar:tuned", "fastest", "ei", "eit", "lt:h=inf", "oracle")
#: ``ar:tuned``: A3R with the P that ``algorank tune-p --meta SET --exclude-heldout --time-model live`` picks
#: (leave-one-dataset-out MIL on the training part only).
TUNED_P = {"broad": "1/4", "lcdb": "1/8", "oboe": "1/4"}
BUDGETS = (1.0, 10.0, 60.0)
DEFAULT_OUT = ROOT / "tests" / "benchmarks" / "results" / "default"


def _file(folder: Path, dataset: str) -> Path:
    return folder / (hashlib.sha1(dataset.encode()).hexdigest()[:16] + ".json")


def sequences(spec: str, meta, arrays, model, kind, rows, lo, hi, *, out: Path, force: bool):
    """``(orders, charges)``: leave-one-dataset-out learner orders (rows of ``arrays``' learner indices, -1 padded)
    and the seconds charged for capped tests (None when none was)."""
    strategy = _prepare(parse_strategy(spec), lo, hi)
    train = np.ones(len(arrays.datasets), dtype=bool)
    if capability(strategy, "fast_loo"):
        source = arrays
        return _compact(arrays, strategy.loo_orders(source, train=train)), None
    if capability(strategy, "time_model_aware"):
        strategy = strategy.with_time_model(time_overhead=model.overhead, time_scale=model.scale, time_kind=kind)
    folder = out / spec.replace(":", "_").replace(",", "_").replace("=", "-").replace("/", "-")
    folder.mkdir(parents=True, exist_ok=True)
    index = {l: j for j, l in enumerate(arrays.learners)}
    encoded = {}
    t0 = time.time()
    for k, d in enumerate(rows):
        dataset = arrays.datasets[d]
        order, charges = cached_order(_file(folder, dataset), spec,
                             lambda: strategy.fit(meta.subset(datasets=[x for x in arrays.datasets if x != dataset])),
                             lambda: meta.dataset_info(dataset), arrays, dataset, force=force)
        encoded[int(d)] = ([index[l] for l in order], charges)
        if k % 25 == 0:
            print(f"  {spec}: {k + 1}/{len(rows)} datasets, {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    return pack(encoded, *arrays.shape)


def run_set(name: str, specs, *, every: int, out: Path, force: bool):
    meta = load_meta(name).exclude(datasets=heldout(name))  # the training part: held-out datasets never enter
    arrays, model, kind, words = time_model_arrays(meta, time_model="live")
    lo, hi = _window(arrays, None, None)
    has = arrays.available.any(axis=1)
    rows = np.flatnonzero(has)[::every]
    results = []
    specs = [f"ar:p={TUNED_P[name]}" if s == "ar:tuned" else s for s in specs]
    for spec in specs:
        t0 = time.time()
        seq, charges = sequences(spec, meta, arrays, model, kind, rows, lo, hi, out=out / name, force=force)
        results.append(_score(parse_strategy(spec), arrays, seq, rows, lo, hi, spec, "loo", axis="time",
                              charges=charges))
        print(f"{name} {spec}: {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    report = metrics_report(results, arrays, eps=1.0, budgets=BUDGETS, reference=specs[0], time_axis=words)
    return report, results, len(rows), int(has.sum())


def _fmt(s: float) -> str:
    if s >= 3600:
        return f"{s / 3600:.2f} h"
    return f"{s:.1f} s" if s >= 1 else f"{s * 1000:.0f} ms"


def table(name, report, results, n_scored, n_train) -> str:
    oracle_sum = report.oracle.totals()["time_to_eps_sum"]
    head = (f"**{name}, training part** ({n_scored} of {n_train} training datasets scored, leave-one-dataset-out "
            f"within the training part; live test times)\n\n"
            "| strategy | time to 1 pt: sum | × oracle | median | loss@1s | loss@10s | loss@60s | MIL |\n"
            "|---|---|---|---|---|---|---|---|\n")
    lines = []
    mil = {r.strategy: float(np.mean(r.mil)) for r in results}
    for m in (*report.metrics, report.oracle):
        t = m.totals()
        lines.append(f"| {m.strategy} | {_fmt(t['time_to_eps_sum'])} | {t['time_to_eps_sum'] / oracle_sum:.2f} | "
                     f"{_fmt(t['time_to_eps_median'])} | {t['loss@1s_mean']:.2f} | {t['loss@10s_mean']:.2f} | "
                     f"{t['loss@60s_mean']:.2f} | {mil.get(m.strategy, t['mil_mean']):.2f} |")
    return head + "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--meta", nargs="+", default=list(SETS), choices=SETS)
    ap.add_argument("--strategy", nargs="+", default=list(STRATEGIES))
    ap.add_argument("--every", type=int, default=1, help="score every K-th training dataset (exploration only)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--force", action="store_true")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    parts = []
    for name in args.meta:
        report, results, n_scored, n_train = run_set(name, args.strategy, every=args.every, out=args.out,
                                                     force=args.force)
        text = table(name, report, results, n_scored, n_train)
        print(text, flush=True)
        parts.append(text)
    suffix = "" if args.every == 1 else f"_every{args.every}"
    (args.out / f"default_training_{'_'.join(args.meta)}{suffix}.md").write_text("\n".join(parts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
