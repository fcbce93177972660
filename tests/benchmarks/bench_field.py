"""The field side by side: the published peer methods, algorank's strategies and the oracle bound.

Runs, with algorank's own ``benchmark`` command, every peer (``oboe``, ``oboe:design=greedy``, ``portfolio``,
``portfolio:rank``, ``pmf``, ``pmf:per_second``, ``zeroshot``), ``ar:p=0``, ``ar`` with its ``P`` tuned by
``tune-p`` on the training part, ``lt``, ``fastest`` and the default ``ei`` (the reference of the W/T/L
and sign tests), and writes one table: summed and median time to within ``--eps`` points of the best
learner, loss at 1, 10 and 60 s, MIL, and W/T/L with the sign-test p of the time to eps against the
default; the oracle bound is the last row.

Two modes:

* default: **training part only** -- leave-one-dataset-out on the datasets outside the frozen held-out
  split of ``--meta`` (the split's datasets are excluded; ``tune-p --exclude-heldout`` tunes ``ar``'s P on
  the same datasets, so that row is tuned in-sample);
* ``--heldout``: fitted on the training part, scored once on the frozen held-out split (``benchmark
  --heldout``), ``ar`` tuned on the training part.  Record every such look in the README.

Run:  python tests/benchmarks/bench_field.py --meta oboe [--heldout] [--time-model live] [--out DIR]
      [--strategies SPEC ...] [--time-each]  (default DIR: tests/benchmarks/results/field_<meta>_<mode>)

Writes ``field.md`` (the table), ``field.csv``, ``runtime.csv`` (seconds of the benchmark command; with
``--time-each`` also of one command per strategy) and the benchmark command's own outputs under ``runs/``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

PEERS = ["oboe", "oboe:design=greedy", "portfolio", "portfolio:rank", "pmf", "pmf:per_second", "zeroshot"]
OURS = ["ar:p=0", "lt", "fastest"]
DEFAULT = "ei"


def _cli(args, *, log):
    """Run ``python -m algorank ARGS``; returns the wall seconds (raises on failure, with the output)."""
    cmd = [sys.executable, "-m", "algorank", *args, "--quiet"]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=str(ROOT))
    wall = time.perf_counter() - t0
    log.write(f"$ {' '.join(cmd)}\n{done.stdout}{done.stderr}\n[{wall:.1f} s]\n")
    log.flush()
    if done.returncode:
        raise SystemExit(f"command failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr}")
    return wall


def _heldout_ids(meta: str) -> list:
    from algorank.metadata.splits import heldout

    return list(heldout(meta))


def _tuned_p(meta: str, common: list, out: Path, log) -> str:
    """``ar``'s P with the smallest mean MIL in ``tune-p`` on the training part."""
    folder = out / "runs" / "tune_p"
    _cli(["tune-p", "--meta", meta, "--strategy", "ar", "--exclude-heldout", *common, "--out", str(folder)], log=log)
    sweep = pd.read_csv(folder / "p_sweep.csv")
    col = "mean_mil" if "mean_mil" in sweep.columns else [c for c in sweep.columns if "mil" in c.lower()][0]
    best = sweep.loc[sweep[col].idxmin()]
    return str(best["p"] if "p" in sweep.columns else best.iloc[0])


def _fmt_s(x: float) -> str:
    if x != x:
        return "n/a"
    if x >= 3600:
        return f"{x / 3600:.2f} h"
    if x >= 60:
        return f"{x / 60:.1f} min"
    return f"{x:.3g} s"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--meta", default="oboe", help="embedded meta-data with a frozen split: broad, lcdb, oboe")
    ap.add_argument("--heldout", action="store_true", help="score the frozen held-out split (record it)")
    ap.add_argument("--time-model", default="live", choices=("fit", "live"))
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--strategies", nargs="+", default=None, help="default: every peer, ar:p=0, tuned ar, lt, "
                                                                    "fastest (the default ei is always the reference)")
    ap.add_argument("--out", default=None)
    ap.add_argument("--time-each", action="store_true", help="also time every strategy in a command of its own")
    args = ap.parse_args(argv)
    mode = "heldout" if args.heldout else "training"
    out = Path(args.out or ROOT / "tests" / "benchmarks" / "results" / f"field_{args.meta}_{mode}")
    (out / "runs").mkdir(parents=True, exist_ok=True)
    log = open(out / "commands.log", "w", encoding="utf-8")
    common = ["--time-model", args.time_model]
    strategies = list(args.strategies) if args.strategies else PEERS + OURS + ["ar-tuned"]
    if "ar-tuned" in strategies:
        p = _tuned_p(args.meta, common, out, log)
        strategies[strategies.index("ar-tuned")] = f"ar:p={p}"
    split = ["--heldout"] if args.heldout else ["--exclude-dataset", ",".join(_heldout_ids(args.meta))]
    specs = [DEFAULT] + [s for s in strategies if s != DEFAULT]
    runtime = []
    folder = out / "runs" / "field"
    args_all = [x for spec in specs for x in ("--strategy", spec)]
    wall = _cli(["benchmark", "--meta", args.meta, *args_all, "--reference", DEFAULT, *split, *common,
                 "--eps", str(args.eps), "--out", str(folder)], log=log)
    runtime.append({"strategy": "all (one command)", "wall_s": wall})
    if args.time_each:  # each strategy alone (the oracle bound and metrics included in every command)
        for spec in specs:
            alone = out / "runs" / ("alone_" + spec.replace(":", "_").replace("=", "-").replace("/", "_")
                                    .replace(",", "+"))
            runtime.append({"strategy": spec, "wall_s": _cli(["benchmark", "--meta", args.meta, "--strategy", spec,
                                                              *split, *common, "--eps", str(args.eps),
                                                              "--out", str(alone)], log=log)})
    table = pd.read_csv(folder / "user_metrics.csv")
    oracle = table[table["strategy"].str.contains("oracle")]
    table = pd.concat([table[~table["strategy"].str.contains("oracle")], oracle.iloc[:1]])
    comp = pd.read_csv(folder / "user_metrics_tests.csv")
    comp = comp[comp["metric"] == "time_to_eps"].drop_duplicates("strategy").set_index("strategy")
    loss_cols = [c for c in table.columns if c.startswith("loss@") and c.endswith("_mean")]
    rows = []
    for _, r in table.iterrows():
        c = comp.loc[r["strategy"]] if r["strategy"] in comp.index else None
        rows.append({"strategy": r["strategy"], "t_eps_sum_s": r["time_to_eps_sum"],
                     "t_eps_median_s": r["time_to_eps_median"], "not_reached": int(r["eps_not_reached"]),
                     **{c_.replace("_mean", ""): r[c_] for c_ in loss_cols}, "mil": r["mil_mean"],
                     "wtl_vs_default": "" if c is None else f"{int(c['wins'])}/{int(c['ties'])}/{int(c['losses'])}",
                     "sign_p": float("nan") if c is None else float(c["sign_pvalue"])})
    frame = pd.DataFrame(rows)
    frame.to_csv(out / "field.csv", index=False)
    pd.DataFrame(runtime).to_csv(out / "runtime.csv", index=False)
    label = ("frozen held-out split" if args.heldout else
             "training part only (leave-one-dataset-out on the datasets outside the frozen held-out split)")
    lines = [f"# {args.meta}: {label}; time model {args.time_model}; eps {args.eps:g} point(s); "
             f"W/T/L and sign test of the time to eps against {DEFAULT}", "",
             "| strategy | t_eps sum | t_eps median | not reached | " + " | ".join(c.replace("_mean", "") for c in loss_cols)
             + " | MIL | W/T/L vs ei | sign p |",
             "|" + "---|" * (7 + len(loss_cols))]
    for r in rows:
        lines.append(f"| {r['strategy']} | {_fmt_s(r['t_eps_sum_s'])} | {_fmt_s(r['t_eps_median_s'])} | "
                     f"{r['not_reached']} | " + " | ".join(f"{r[c.replace('_mean', '')]:.3f}" for c in loss_cols)
                     + f" | {r['mil']:.3f} | {r['wtl_vs_default']} | "
                     + ("" if r["sign_p"] != r["sign_p"] else f"{r['sign_p']:.3g}") + " |")
    (out / "field.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    print("\n" + "\n".join(f"{r['strategy']}: {r['wall_s']:.1f} s" for r in runtime))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
