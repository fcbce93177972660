"""Baseline table: every meta-dataset on its frozen held-out split and by in-sample leave-one-dataset-out.

Run on demand (not collected by pytest)::

    python tests/benchmarks/bench_baselines.py                      # lcdb, uci, broad, oboe (absent ones skipped)
    python tests/benchmarks/bench_baselines.py --meta lcdb uci --force

For each embedded meta-dataset that exists (``lcdb`` and ``uci`` today; ``broad`` and ``oboe`` once
their embedded sets are there, skipped with a message until then), two settings:

* **frozen split**: strategies fitted on the datasets outside ``metadata/data/splits/<set>_heldout.txt``
  and scored on the held-out ones (:func:`algorank.benchmark` with ``heldout=True``); the A3R P is
  tuned by leave-one-dataset-out MIL on the training part only;
* **in-sample LOO**: leave-one-dataset-out over all datasets, P tuned by leave-one-dataset-out on all
  of them (the usual, flattering, protocol).

Strategies: ``ar:p=0``, ``ar`` with the tuned P, ``at`` (active testing, ``sim=none``) and ``lt``
(loss-time rollout) with the same P, ``fastest``, ``best-accuracy``, ``random:seed=0`` and the
``oracle`` strategy (the smallest-MIL order knowing the dataset), plus the oracle *bound* of every
metric.  ``lt`` runs with ``h=inf`` (every prior dataset weighs the same): ``h=auto`` refits its
bandwidth by an inner leave-out per scored dataset, about 20 minutes for the in-sample LOO on LCDB
on this 2-core machine.  Times are live-test times (``--time-model live``: 5-fold CV, ``5 x t +
overhead``); budgets 1, 10, 60 s; eps 1 accuracy point; reference ``ar:p=0``.  Both settings of a
meta-dataset use the same MIL window (the default window of the whole meta-data), so their numbers
compare.

Writes, under ``--out`` (default ``tests/benchmarks/results``), one summary CSV and one per-dataset
CSV per (meta-dataset, setting) as each finishes (a rerun skips those present unless ``--force``),
and ``baselines.md`` with the markdown tables that the benchmark record (docs/benchmarks/) shows.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import algorank  # noqa: E402
from algorank.evaluation.meta.benchmark import default_window  # noqa: E402
from algorank.recommender.kernel.time_model import live_arrays  # noqa: E402
from algorank.metadata.errors import InputError  # noqa: E402
from algorank.metadata.io import atomic_path  # noqa: E402
from algorank.recommender.average_ranking import format_p  # noqa: E402
from algorank.recommender.registry import make_ar, parse_strategy  # noqa: E402

SETS = ("lcdb", "uci", "broad", "oboe")
SETTINGS = ("frozen split", "in-sample LOO")
BUDGETS = (1.0, 10.0, 60.0)
EPS = 1.0
REFERENCE = "ar:p=0"
DEFAULT_OUT = ROOT / "tests" / "benchmarks" / "results"


def strategies(p: float) -> list:
    """The baseline strategies with the tuned P (display names say which P)."""
    label = format_p(p)
    tuned = make_ar(p, name=f"ar:p={label} (LOO-tuned)")
    return [parse_strategy(REFERENCE), tuned, parse_strategy("ei"), parse_strategy(f"at:p={label}"), parse_strategy(f"lt:h=inf,p={label}"),
            parse_strategy("fastest"), parse_strategy("best-accuracy"), parse_strategy("random:seed=0"),
            parse_strategy("oracle")]


def summary_rows(suite, *, meta_name: str, setting: str, p: float, wall: float) -> pd.DataFrame:
    """One row per strategy (and the oracle bound): totals and the tests against the reference."""
    report = suite.metrics
    table = report.summary_table()
    comps = report.comparison_table()
    for metric in report.labels:
        sub = comps[comps["metric"] == metric].set_index("strategy")
        table[f"{metric}_wtl"] = [f"{sub.at[s, 'wins']}/{sub.at[s, 'ties']}/{sub.at[s, 'losses']}" if s in sub.index
                                  else "" for s in table["strategy"]]
        for col in ("sign_pvalue", "wilcoxon_pvalue", "gap_closed"):
            table[f"{metric}_{col}"] = [sub.at[s, col] if s in sub.index else float("nan") for s in table["strategy"]]
    table.insert(0, "meta", meta_name)
    table.insert(1, "setting", setting)
    table.insert(2, "n_scored", len(suite.results[0].datasets))
    table.insert(3, "n_train", suite.n_train if suite.n_train is not None else len(suite.results[0].datasets) - 1)
    table.insert(4, "tuned_p", format_p(p))
    table.insert(5, "tmin", suite.tmin)
    table.insert(6, "tmax", suite.tmax)
    table.insert(7, "time_axis", suite.time_model)
    table["wall_s"] = wall
    return table


def run_one(meta_name: str, setting: str, out: Path, *, force: bool) -> pd.DataFrame | None:
    slug = setting.replace(" ", "_").replace("-", "")
    target = out / f"baselines_{meta_name}_{slug}.csv"
    if target.is_file() and not force:
        print(f"{meta_name}, {setting}: kept {target.name} (use --force to recompute)", flush=True)
        return pd.read_csv(target, dtype={"tuned_p": str})
    meta = algorank.load_meta(meta_name)
    arrays, _, _ = live_arrays(meta)
    tmin, tmax = default_window(arrays)
    t0 = time.perf_counter()
    if setting == "frozen split":
        p = algorank.tune_p(meta, exclude_heldout=meta_name, time_model="live", tmin=tmin, tmax=tmax).best_p
        suite = algorank.benchmark(strategies(p), meta=meta, heldout=meta_name, time_model="live", tmin=tmin,
                                   tmax=tmax, eps=EPS, budgets=BUDGETS, reference=REFERENCE)
    else:
        p = algorank.tune_p(meta, time_model="live", tmin=tmin, tmax=tmax).best_p
        suite = algorank.benchmark(strategies(p), meta=meta, time_model="live", tmin=tmin, tmax=tmax, eps=EPS,
                                   budgets=BUDGETS, reference=REFERENCE)
    wall = time.perf_counter() - t0
    table = summary_rows(suite, meta_name=meta_name, setting=setting, p=p, wall=wall)
    out.mkdir(parents=True, exist_ok=True)
    per = suite.metrics.per_dataset_table()
    with atomic_path(out / f"baselines_{meta_name}_{slug}_per_dataset.csv") as tmp:
        per.to_csv(tmp, index=False, float_format="%.10g")
    with atomic_path(target) as tmp:
        table.to_csv(tmp, index=False, float_format="%.10g")
    print(f"{meta_name}, {setting}: {len(suite.results[0].datasets)} datasets scored, P = {format_p(p)}, "
          f"{wall:.0f} s", flush=True)
    return table


def _s(x: float) -> str:
    if x != x:
        return "n/a"
    if x < 1:
        return f"{x * 1000:.0f} ms"
    if x < 120:
        return f"{x:.1f} s"
    if x < 7200:
        return f"{x / 60:.1f} min"
    return f"{x / 3600:.1f} h"


def _p(x: float) -> str:
    return "" if x != x else (f"{x:.2g}" if x >= 0.001 else f"{x:.0e}")


def markdown(table: pd.DataFrame) -> str:
    """One markdown table of a (meta-dataset, setting) summary."""
    first = table.iloc[0]
    last = f"{BUDGETS[-1]:g}s"
    head = (f"**{first['meta']}, {first['setting']}**: {int(first['n_scored'])} datasets scored, "
            f"{'trained on ' + str(int(first['n_train'])) + ' others' if first['setting'] == 'frozen split' else 'each fitted on all the others'}; "
            f"LOO-tuned P = {first['tuned_p']}; times: {first['time_axis']}; MIL window "
            f"[{first['tmin']:g} s, {first['tmax']:g} s]; losses in accuracy points; W/T/L against {REFERENCE} "
            f"(sign test p, Wilcoxon p)\n")
    cols = ["strategy", "time to 1 pt: sum", "median", "not reached", "loss@1s", "loss@10s", f"loss@{last}",
            f"MIL [cheapest, {last}]", "MIL", "time to 1 pt W/T/L (p, p)", f"loss@10s W/T/L (p, p)",
            f"MIL [cheapest, {last}] W/T/L (p, p)"]
    lines = [head, "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in table.itertuples(index=False):
        r = r._asdict()
        get = {k: v for k, v in zip(table.columns, r.values())}

        def wtl(metric):
            w = get.get(f"{metric}_wtl")
            if not isinstance(w, str) or not w:
                return ""
            return f"{w} ({_p(get[f'{metric}_sign_pvalue'])}, {_p(get[f'{metric}_wilcoxon_pvalue'])})"

        lines.append("| " + " | ".join([
            get["strategy"], _s(get["time_to_eps_sum"]), _s(get["time_to_eps_median"]), str(int(get["eps_not_reached"])),
            f"{get['loss@1s_mean']:.2f}", f"{get['loss@10s_mean']:.2f}", f"{get[f'loss@{last}_mean']:.2f}",
            f"{get[f'mil_to_{last}_mean']:.2f}", f"{get['mil_mean']:.2f}", wtl("time_to_eps"), wtl("loss@10s"),
            wtl(f"mil_to_{last}")]) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--meta", nargs="+", default=list(SETS), help="embedded meta-datasets (default: all four)")
    ap.add_argument("--out", default=str(DEFAULT_OUT), help="folder for the CSV files and baselines.md")
    ap.add_argument("--force", action="store_true", help="recompute results that are already written")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)
    out = Path(args.out)
    parts = []
    t0 = time.perf_counter()
    for name in args.meta:
        try:
            algorank.load_meta(name)
        except InputError as exc:
            print(f"{name}: skipped, the embedded meta-data is not available ({exc})", flush=True)
            continue
        for setting in SETTINGS:
            parts.append(markdown(run_one(name, setting, out, force=args.force)))
    if parts:
        text = ("<!-- written by tests/benchmarks/bench_baselines.py -->\n\n" + "\n".join(parts))
        with atomic_path(out / "baselines.md") as tmp:
            Path(tmp).write_text(text, encoding="utf-8")
        print(f"wrote {out / 'baselines.md'} ({time.perf_counter() - t0:.0f} s in all)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
