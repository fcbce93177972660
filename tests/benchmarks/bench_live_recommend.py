"""Live check of the time-aware recommendation on real datasets (run on demand, not collected by pytest).

Three phases.

1. **Measure** (slow, ~20 min with two workers on 2 cores for the 63 datasets): on each dataset
   of ``../shared/datasets`` selected by :func:`manifest_datasets` (a fixed rule, no hand
   picking; the target is the one MANIFEST.csv names) every portfolio learner is really run
   once (stratified 5-fold CV, one repetition, in-process), and one row per (dataset, learner)
   is appended to the raw CSV (``--raw``) as soon as it is measured: accuracy, wall-clock
   seconds of the whole test (what a user waits for), status, mean fit and predict time per
   fold and the dataset's simple meta-features (JSON).  With ``--runs`` the per-fold rows go
   to a second CSV in the MetaDataset runs schema.  Re-running resumes; ``--worker I/N``
   splits the list between processes (the committed results: two workers, one BLAS thread
   each)::

       OMP_NUM_THREADS=1 python tests/benchmarks/bench_live_recommend.py --measure-only \
           --raw w0_raw.csv --runs w0_runs.csv --worker 0/2     # and --worker 1/2 beside it

2. **Build** the embedded ``uci`` meta-dataset from the per-fold rows::

       python tests/benchmarks/bench_live_recommend.py --replay-only --measure-only \
           --raw raw.csv --runs runs.csv --build-meta metadata/data

3. **Replay** (seconds): the orders of several strategies are replayed on the measured
   results (the same policy objects as in ``recommend``, prepared by
   :func:`algorank.recommender.live.recommend.live_strategy`, fed the real observations).  Strategies are
   given as ``META@SPEC`` (``uci@ar:p=1/16``, ``lcdb@ar:p=0``; ``ar:p=tuned`` tunes P on the
   training datasets under the live time model); each dataset's order comes from the
   meta-data without that dataset.  For each strategy we report

   * ``t_1pp``: cumulative seconds until the best accuracy found is within 1 percentage
     point of the best accuracy of *all* learners;
   * against each reference (``--ref``, the accuracy-only orders ``uci@ar:p=0`` and
     ``lcdb@ar:p=0``): faster / tied / slower counts, the sign test and the Wilcoxon
     signed-rank test on log time ratios::

       python tests/benchmarks/bench_live_recommend.py --replay-only \
           --raw tests/benchmarks/results/live_raw.csv [--out t1pp.csv]
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from algorank.recommender.kernel.trace import Observation, run_policy  # noqa: E402
from algorank.metadata.learners import learner_ids  # noqa: E402

#: The 14 datasets of the previous round's (hand-picked) list, kept to report that subset separately.
PREVIOUS_ROUND = ["uci/anneal.arff", "uci/balance.scale.arff", "uci/car.arff", "uci/colic.arff", "uci/credit.a.arff",
            "uci/diabetes.arff", "uci/ecoli.arff", "uci/glass.arff", "uci/heart.statlog.arff",
            "uci/hypothyroid.arff", "uci/kr.vs.kp.arff", "uci/cylinder.bands.arff", "uci/optdigits.arff",
            "uci/mushroom.arff"]
STRATEGIES = ["uci@ar:p=0", "uci@ar:p=1/16", "uci@ar:p=tuned", "uci@ar:p=1/4", "uci@at:p=1/16,sim=tested",
              "uci@lt:h=inf", "lcdb@ar:p=0", "lcdb@ar:p=1/4"]
#: Near-copies of another MANIFEST dataset, left out so that leave-one-dataset-out does not leak.
DUPLICATES = {"uci/anneal.orig.arff", "uci/bridges.version2.arff", "statlib/prnn_fglass.arff",
              "statlib/cars_with_names.arff"}


def manifest_datasets(shared: Path, *, min_rows: int = 100, max_rows: int = 10_000) -> list:
    """The fixed selection rule: every MANIFEST classification dataset that parses, with at least two
    classes and ``min_rows``..``max_rows`` rows, minus :data:`DUPLICATES` (in MANIFEST order)."""
    m = pd.read_csv(shared / "datasets" / "MANIFEST.csv")
    ok = m["note"].isna() & (m["classes"] >= 2) & m["instances"].between(min_rows, max_rows)
    return [f for f in m.loc[ok, "file"] if f not in DUPLICATES]


def manifest_targets(shared: Path) -> dict:
    """path -> the target attribute MANIFEST.csv names for it (when it names one)."""
    manifest = shared / "datasets" / "MANIFEST.csv"
    if not manifest.is_file():
        return {}
    m = pd.read_csv(manifest)
    return {f: t for f, t in zip(m["file"], m["target"]) if isinstance(t, str) and t}


RAW_COLUMNS = ["path", "dataset", "learner", "accuracy", "seconds", "status", "fit_time_mean",
               "predict_time_mean", "folds", "message", "info"]


class Replay:
    """Environment answering from measured live results: learner -> (accuracy, seconds, status)."""

    def __init__(self, results):
        self.results = results

    def test(self, learner):
        acc, sec, status = self.results.get(learner, (float("nan"), 0.0, "error"))
        return Observation(learner, acc, sec, "ok" if status == "ok" else "error")


def time_to_within(trace, best, tol=0.01):
    """Cumulative seconds until the best accuracy found is within ``tol`` of ``best`` (NaN: never)."""
    cum = 0.0
    found = -np.inf
    for o in trace.observations:
        cum += o.seconds
        if o.status == "ok":
            found = max(found, o.accuracy)
        if found >= best - tol:
            return cum
    return float("nan")


# ---------------------------------------------------------------------- measure
def _done(raw: Path) -> set:
    if not raw.exists():
        return set()
    df = pd.read_csv(raw, dtype={"path": str, "learner": str})
    return set(zip(df["path"], df["learner"]))


def measure(paths, raw: Path, shared: Path, runs: Path | None = None) -> None:
    """Run every learner on every dataset, appending one CSV row per test (resumable).

    With ``runs``, the per-fold rows of each test (MetaDataset runs schema plus
    ``path``) are appended there too, *before* the test's row in ``raw``; a
    test counts as done only once its ``raw`` row exists, so an interrupted
    test is re-run and its partial fold rows are dropped by :func:`load_runs`.
    """
    from algorank.evaluation.cv.datasets import load_dataset
    from algorank.evaluation.cv.evaluator import Evaluator
    from algorank.recommender.live.recommend import _dataset_info

    done = _done(raw)
    targets = manifest_targets(shared)
    ev = Evaluator(scheme="cv", cv=5, repeats=1, random_state=0, progress=False)
    new = not raw.exists()
    run_fh = None
    if runs is not None:
        new_runs = not runs.exists()
        run_fh = open(runs, "a", newline="")
    with open(raw, "a", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=RAW_COLUMNS)
        if new:
            w.writeheader()
            fh.flush()
        for rel in paths:
            todo = [l for l in learner_ids() if (rel, l) not in done]
            if not todo:
                print(f"{rel}: already measured", flush=True)
                continue
            try:
                data = load_dataset(str(shared / "datasets" / rel), target=targets.get(rel))
            except Exception as exc:  # noqa: BLE001 - a benchmark keeps going; the reason is printed
                print(f"{rel}: skipped ({str(exc).splitlines()[0]})", flush=True)
                continue
            info = json.dumps({k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                               for k, v in _dataset_info(data).items()})
            for l in todo:
                s = time.perf_counter()
                result = ev.evaluate(data, [l])
                sec = time.perf_counter() - s
                r = result.summary.iloc[0]
                if run_fh is not None:
                    fold_rows = result.runs.assign(path=rel)
                    fold_rows.to_csv(run_fh, header=new_runs, index=False, float_format="%.9g")
                    new_runs = False
                    run_fh.flush()
                w.writerow({"path": rel, "dataset": data.name, "learner": l, "accuracy": float(r["accuracy_mean"]),
                            "seconds": sec, "status": str(r["status"]), "fit_time_mean": float(r["fit_time_mean"]),
                            "predict_time_mean": float(r["predict_time_mean"]), "folds": int(r["folds"]),
                            "message": str(r.get("message") or "")[:200], "info": info})
                fh.flush()
            print(f"{rel}: measured {len(todo)} learner(s)", flush=True)
    if run_fh is not None:
        run_fh.close()


def load_runs(raw: Path, runs: Path) -> pd.DataFrame:
    """Per-fold rows of the tests completed in ``raw`` (partial tests dropped, last write wins)."""
    done = _done(raw)
    df = pd.read_csv(runs, dtype={"path": str, "learner": str, "message": str}, keep_default_na=True)
    keep = [(p, l) in done for p, l in zip(df["path"], df["learner"])]
    df = df[keep]
    return df.drop_duplicates(["path", "learner", "repeat", "fold"], keep="last").reset_index(drop=True)


UCI_SOURCE = ("algorank evaluator (stratified 5-fold CV x1, seed 0) on the UCI/StatLib datasets of "
              "shared/datasets (bench_live_recommend.py)")


def make_meta(raw: Path, runs: Path):
    """The ``uci`` MetaDataset of the measured tests.

    The runs table holds the per-fold rows of every completed test (MetaDataset runs
    schema plus balanced_accuracy, auc, log_loss, model_bytes, message); the datasets
    table holds the simple meta-features the evaluator computed, with ``source`` the
    path under ``shared/datasets``.
    """
    from algorank.metadata.dataset import OPTIONAL_RUN_COLUMNS, RUN_COLUMNS, MetaDataset

    fold_rows = load_runs(raw, runs)
    table = pd.read_csv(raw, dtype={"path": str, "learner": str, "message": str})
    rows = []
    for path, g in table.groupby("path", sort=True):
        info = json.loads(g["info"].iloc[0])
        info["source"] = f"shared/datasets/{path}"
        rows.append(info)
    datasets = pd.DataFrame(rows)
    cols = [c for c in list(RUN_COLUMNS) + list(OPTIONAL_RUN_COLUMNS) if c in fold_rows.columns]
    fold_rows = fold_rows[cols].copy()
    fold_rows["message"] = fold_rows["message"].fillna("").astype(str)
    return MetaDataset(fold_rows, datasets, source=UCI_SOURCE)


def build_meta(raw: Path, runs: Path, out_dir: Path) -> dict:
    """Write the embedded ``uci`` meta-dataset (Parquet + JSON record, see :func:`make_meta`)."""
    from algorank.metadata.io import atomic_write_text
    from algorank.metadata.snapshot import EMBEDDED, file_sha256

    meta = make_meta(raw, runs)
    file, record_file = EMBEDDED["uci"]
    target = meta.save(Path(out_dir) / file)
    desc = meta.describe()
    record = {"file": file, "sha256": file_sha256(target), "datasets": desc.datasets, "learners": desc.learners,
              "cells": desc.cells, "runs": desc.runs, "source": UCI_SOURCE,
              "selection": "MANIFEST.csv rows that parse, >= 2 classes, 100..10000 rows, minus near-copies "
                           f"({', '.join(sorted(DUPLICATES))})",
              "protocol": "every learner of metadata.LEARNERS, one test each, in-process, one thread per process"}
    atomic_write_text(Path(out_dir) / record_file, json.dumps(record, indent=2) + "\n")
    return record


# ---------------------------------------------------------------------- replay
def load_raw(raw: Path) -> dict:
    """path -> (info dict, {learner: (accuracy, seconds, status)})."""
    df = pd.read_csv(raw, dtype={"path": str, "learner": str, "message": str})
    out = {}
    for path, g in df.groupby("path", sort=False):
        info = {k: (math.nan if v is None else v) for k, v in json.loads(g["info"].iloc[0]).items()}
        out[path] = (info, {r.learner: (float(r.accuracy), float(r.seconds), str(r.status))
                            for r in g.itertuples()})
    return out


def replay(measured: dict, specs, metas: dict) -> pd.DataFrame:
    """One row per dataset: best accuracy, time of running everything, t_1pp and first learner per strategy.

    ``specs`` are ``META@SPEC`` strings (``uci@ar:p=1/4``, ``lcdb@ar:p=0``).  Each strategy is
    prepared exactly as :func:`algorank.recommender.live.recommend.recommend` does (live time model) and
    fitted on the meta-data *without the dataset it is replayed on* (leave-one-dataset-out:
    the evaluator-built ``uci`` set contains every measured dataset; LCDB ids never
    match and LCDB is fitted once).
    """
    from algorank.recommender.live.recommend import live_strategy

    fitted = {}
    known = {name: set(m.dataset_ids) for name, m in metas.items()}
    rows = []
    for path, (info, results) in measured.items():
        if len(results) < len(learner_ids()):
            continue  # incomplete (measurement still running)
        best = max(a for a, _, st in results.values() if st == "ok")
        row = {"dataset": info["dataset"], "n": info["n_instances"], "d": info["n_features"], "best_acc": best,
               "all_learners_s": sum(s for _, s, _ in results.values())}
        for full in specs:
            meta_name, _, spec = full.partition("@")
            meta = metas[meta_name]
            held_out = info["dataset"] in known[meta_name]
            key = (full, info["dataset"] if held_out else None)
            if key not in fitted:
                train = meta.exclude(datasets=[info["dataset"]]) if held_out else meta
                if spec == "ar:p=tuned":
                    spec = f"ar:p={_tuned_p(train)}"  # nested: P tuned without the held-out dataset
                strat, _, _, _ = live_strategy(spec, train)
                if spec.startswith("lt:") and strat.needs_window:
                    strat = strat.with_window(*_live_window(train))
                fitted[key] = strat.fit(train)
            tr = run_policy(fitted[key].policy(info), Replay(results))
            row[f"t_1pp[{full}]"] = time_to_within(tr, best)
            row[f"first[{full}]"] = tr.observations[0].learner.split(".")[-1]
        rows.append(row)
    return pd.DataFrame(rows)


def _tuned_p(meta) -> str:
    """The P of AR-A3R with the best leave-one-dataset-out MIL on ``meta`` under the live time model
    (the grid and window of ``bench_live_time_p.py``), as a spec value."""
    from algorank.evaluation.meta.benchmark import PAPER_P_GRID, p_sweep
    from algorank.recommender.kernel.time_model import live_arrays
    from algorank.recommender.average_ranking import format_p
    from algorank.recommender.registry import make_ar

    sweep = p_sweep(live_arrays(meta)[0], make_strategy=make_ar, grid=(1.0, 1 / 2) + PAPER_P_GRID)
    return format_p(sweep.best_p)


def _live_window(meta) -> tuple:
    """MIL window of ``lt`` under the live time model: the default window rule on live test times."""
    from algorank.evaluation.meta.benchmark import default_window
    from algorank.recommender.kernel.time_model import live_arrays

    return default_window(live_arrays(meta)[0])


def summarize(df: pd.DataFrame, specs, refs) -> str:
    """Per strategy: median and total t_1pp; against each reference: faster/tied/slower counts, the
    two-sided sign test (ties dropped) and the Wilcoxon signed-rank test on log time ratios."""
    from scipy import stats

    lines = []
    for name in specs:
        c = df[f"t_1pp[{name}]"].to_numpy(dtype=float)
        lines.append(f"{name:28s} median t_1pp {np.median(c):7.2f} s; total {c.sum():8.1f} s")
        for ref in refs:
            if ref == name:
                continue
            r = df[f"t_1pp[{ref}]"].to_numpy(dtype=float)
            win, tie, loss = int((c < r).sum()), int((c == r).sum()), int((c > r).sum())
            sign = stats.binomtest(win, win + loss).pvalue if win + loss else float("nan")
            ratio = np.log(c / r)
            ratio = ratio[ratio != 0]
            wil = stats.wilcoxon(ratio).pvalue if len(ratio) else float("nan")
            lines.append(f"{'':28s}   vs {ref}: faster {win}/{len(df)}, ties {tie}, slower {loss}; "
                         f"sign test p = {sign:.2g}; Wilcoxon (log ratio) p = {wil:.2g}; "
                         f"median ratio {np.exp(np.median(np.log(c / r))):.2f}")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=str(ROOT.parent / "shared"))
    ap.add_argument("--raw", default="live_raw.csv", help="raw per-(dataset, learner) results (appended, resumed)")
    ap.add_argument("--runs", default=None, help="also append the per-fold runs (MetaDataset schema) here")
    ap.add_argument("--out", default=None, help="per-dataset t_1pp table (CSV)")
    ap.add_argument("--datasets", nargs="*", default=None,
                    help="dataset paths under <shared>/datasets; default: the MANIFEST rule (manifest_datasets)")
    ap.add_argument("--worker", default=None, metavar="I/N", help="measure only every N-th dataset starting at I")
    ap.add_argument("--strategies", nargs="*", default=STRATEGIES)
    ap.add_argument("--ref", nargs="*", default=["uci@ar:p=0", "lcdb@ar:p=0"],
                    help="accuracy-only references every strategy is compared with")
    ap.add_argument("--replay-only", action="store_true")
    ap.add_argument("--measure-only", action="store_true")
    ap.add_argument("--build-meta", default=None, metavar="DIR",
                    help="write the embedded 'uci' meta-dataset (uci_evaluator.parquet/.json) to DIR from --raw/--runs")
    args = ap.parse_args(argv)
    raw = Path(args.raw)
    if args.datasets is None:
        args.datasets = manifest_datasets(Path(args.shared))
    if args.worker:
        i, n = (int(v) for v in args.worker.split("/"))
        args.datasets = args.datasets[i::n]
    if not args.replay_only:
        measure(args.datasets, raw, Path(args.shared), None if args.runs is None else Path(args.runs))
    if args.build_meta:
        if args.runs is None:
            ap.error("--build-meta needs --runs")
        print(json.dumps(build_meta(raw, Path(args.runs), Path(args.build_meta)), indent=2))
    if args.measure_only:
        return
    from algorank.metadata.snapshot import load_embedded

    metas = {"lcdb": load_embedded("lcdb"),
             "uci": load_embedded("uci") if args.runs is None else make_meta(raw, Path(args.runs))}
    specs = list(dict.fromkeys(args.strategies + list(args.ref)))
    df = replay(load_raw(raw), specs, metas)
    pd.set_option("display.width", 250)
    cols = ["dataset", "n", "d", "best_acc", "all_learners_s"] + [f"t_1pp[{s}]" for s in specs]
    print(df[cols].round(3).to_string(index=False))
    print(summarize(df, specs, args.ref))
    names = {Path(rel).stem for rel in PREVIOUS_ROUND}
    sub = df[df["dataset"].isin(names)]
    if 0 < len(sub) < len(df):
        print(f"\non the {len(sub)} datasets of the previous round's list:")
        print(summarize(sub, specs, args.ref))
    if args.out:
        df.to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
