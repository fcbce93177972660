"""The field side by side: the published peer methods, algorank's strategies, the default and the oracle.

One command per meta-dataset regenerates the table and the critical-difference diagram::

    python tests/benchmarks/bench_field.py --meta broad                 # training part (in-sample tuning)
    python tests/benchmarks/bench_field.py --meta oboe --every 4        # every 4th training dataset scored
    python tests/benchmarks/bench_field.py --meta lcdb --heldout        # the frozen held-out split: record it

Strategies: every peer (``oboe``, ``oboe:design=greedy``, ``portfolio``, ``portfolio:rank``, ``pmf``,
``pmf:per_second``, ``zeroshot``) with one knob each tuned on the training part (``KNOBS``), ``ar:p=0``,
``ar`` with the P that ``tune-p --exclude-heldout`` picks, ``lt:h=inf``, ``fastest``, the default ``eiu``
(the reference of W/T/L and the sign tests) and the oracle (its order, and the oracle bound of every
metric as the last row).

Three modes:

* **training** (default): leave-one-dataset-out on the datasets outside the frozen held-out split of
  ``--meta``; the held-out datasets are removed before anything is fitted.  Every value of every peer's
  knob is scored (``evaluation.meta.tuning.KnobSweepResult``: the smallest mean MIL wins, as ``tune-p``
  picks P); the table shows the chosen value, so those rows are tuned in-sample.  The choices are
  written to ``tuned.json``.  ``--every K`` scores every K-th training dataset (each still fitted on all
  the others of the training part): said in the table's title.
* ``--heldout``: every strategy fitted once on the training part and scored on the frozen held-out split,
  the peers with the knobs in the training run's ``tuned.json`` (run the training mode first).  Record
  every such held-out evaluation in the benchmark record (docs/benchmarks/).
* ``--test-meta FILE``: every strategy fitted once on all of ``--meta`` (as ``recommend`` is), the peers with
  the knobs of the training run's ``tuned.json``, and scored on the datasets of FILE, a collection outside
  every embedded set (``fresh_rdatasets.py`` builds one).  Results under ``results/field_<meta>_on_<stem>``.
  Record every such held-out evaluation in the benchmark record (docs/benchmarks/) too::

    python tests/benchmarks/bench_field.py --meta broad --test-meta metadata/data/fresh_rdatasets.parquet

``--extra SPEC`` (repeatable) scores a candidate strategy beside the field with its knobs as given (a row of
the table, its W/T/L against the default); ``--pooled SPEC`` then writes ``field_pooled_training.md``: the
sign tests of that candidate against every other strategy on the training datasets of the three sets,
per set and pooled, and the candidate's summed time over the oracle bound's and over the best other sum with
dataset-bootstrap intervals (it reads the three training tables' ``per_dataset.csv``; nothing is scored)::

    python tests/benchmarks/bench_field.py --meta oboe --every 8 --extra eiu
    python tests/benchmarks/bench_field.py --pooled eiu
    python tests/benchmarks/bench_field.py --pooled eiu --heldout     # the same on the held-out tables
    python tests/benchmarks/bench_field.py --meta oboe --every 1 --extra eiu \\
        --out tests/benchmarks/results/field_oboe_training_all          # all 313 (about 20 CPU minutes)
    python tests/benchmarks/bench_field.py --pooled eiu --pooled-oboe field_oboe_training_all
    python tests/benchmarks/bench_field.py --pooled eiu --heldout --pooled-also field_broad_on_fresh_rdatasets

Per strategy and dataset the learner order is cached (``results/.cache/field_<meta>_<mode>/<code>/<strategy>/<hash>.json``,
gitignored; ``<code>`` is a hash of the package's code and embedded meta-data, so a change of either computes
every order anew) as soon as it is computed, so a rerun resumes.  Writes under ``tests/benchmarks/results/field_<meta>_<mode>``:
``field.md`` and ``field.csv`` (summed and median time to ``--eps`` points, loss at 1, 10, 60 s, MIL, W/T/L
and sign-test p of the time to eps against the default), ``per_dataset.csv``, ``knobs.csv`` (training),
``cd.png`` and ``cd.txt`` (Friedman on the per-dataset time to eps, then Holm's all-pairs post hoc), and
``runtime.csv`` (CPU seconds per strategy).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import resource
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from algorank.api import load_meta, time_model_arrays  # noqa: E402
from algorank.evaluation.meta.scoring import _compact, _prepare, _score, _window, start_seconds  # noqa: E402
from algorank.evaluation.meta.tuning import KnobSweepResult, knob_spec  # noqa: E402
from algorank.evaluation.meta.user_metrics import metrics_report  # noqa: E402
from algorank.metadata.splits import heldout  # noqa: E402
from algorank.recommender.kernel.environments import SimulatedEnvironment, SkipUnavailable  # noqa: E402
from algorank.recommender.kernel.trace import pack, run_policy  # noqa: E402
from algorank.recommender.base import capability  # noqa: E402
from algorank.recommender.registry import parse_strategy  # noqa: E402

DEFAULT = "eiu"
#: Each peer's tuned knob and its grid (the authors' value included: threshold 0.05, budget = the
#: benchmark window's upper end, n_init 5, regret 0.01).
KNOBS = {
    "oboe": ("threshold", ("0.02", "0.05", "0.1")),
    "oboe:design=greedy": ("threshold", ("0.02", "0.05", "0.1")),
    "portfolio": ("budget", ("10", "60", "WINDOW")),
    "portfolio:rank": ("budget", ("10", "60", "WINDOW")),
    "pmf": ("n_init", ("1", "3", "5")),
    "pmf:per_second": ("n_init", ("1", "3", "5")),
    "zeroshot": ("regret", ("0", "0.01", "0.05")),
}
#: A3R's P as ``algorank tune-p --meta SET --exclude-heldout --time-model live`` picks it (training part).
TUNED_P = {"broad": "1/4", "lcdb": "1/8", "oboe": "1/4", "modern": "1/4"}
OURS = ("ar:p=0", "ar:tuned", "lt:h=inf", "fastest")
BUDGETS = (1.0, 10.0, 60.0)


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def code_fingerprint() -> str:
    """A hash of the package's code and embedded meta-data (every ``.py`` outside ``tests/``, every file under
    ``metadata/data``): cached orders are reused only by the code and data that computed them."""
    def ours(p: Path) -> bool:  # not the tests, a virtual environment, a build or any hidden folder
        parts = p.relative_to(ROOT).parts
        return not (parts[0] in ("tests", "build", "docs") or any(x.startswith(".") or x == "__pycache__"
                                                                  or x.endswith(".egg-info") for x in parts))

    h = hashlib.sha1()
    files = [p for p in ROOT.rglob("*.py") if ours(p)]
    files += [p for p in (ROOT / "metadata" / "data").rglob("*") if p.is_file() and ours(p)]
    for p in sorted(set(files)):
        h.update(str(p.relative_to(ROOT)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:12]


def _folder(cache: Path, spec: str) -> Path:
    return cache / spec.replace(":", "_").replace(",", "_").replace("=", "-").replace("/", "-")


def cached_order(f: Path, spec: str, fit, info, arrays, dataset: str, *, force: bool = False) -> tuple[list, list]:
    """The learner order of ``spec`` on ``dataset`` and the seconds charged for each capped test (NaN for the
    others): read from the cache file ``f`` (unless ``force``), else run in simulation (``fit()``: the fitted
    strategy, ``info()``: what its policy knows of the dataset) and written to ``f`` atomically, so an
    interrupted run resumes."""
    if f.exists() and not force:
        got = json.loads(f.read_text())
        charges = got.get("charges", [None] * len(got["order"]))
        return got["order"], [math.nan if c is None else float(c) for c in charges]
    env = SimulatedEnvironment(arrays, dataset)
    trace = run_policy(SkipUnavailable(fit().policy(info()), env.available), env, dataset=dataset)
    charges = [o.seconds if o.capped else None for o in trace.observations]  # JSON has no NaN: None
    tmp = f.with_suffix(".tmp")
    tmp.write_text(json.dumps({"dataset": dataset, "strategy": spec, "order": trace.learners, "charges": charges}))
    tmp.replace(f)
    return trace.learners, [math.nan if c is None else c for c in charges]


def sequences(spec, meta_train, arrays, rows, lo, hi, model, kind, *, cache: Path, loo: bool):
    """``(orders, charges)``: learner orders (rows of ``arrays``' learner indices, -1 padded) of ``spec`` on
    ``rows`` and the seconds charged for capped tests (None when none was), fitted on the training part
    without the scored dataset (``loo``) or once on the whole training part."""
    strategy = _prepare(parse_strategy(spec), lo, hi)
    if (loo or capability(strategy, "sees_held_out")) and capability(strategy, "fast_loo"):  # the oracle
        return _compact(arrays, strategy.loo_orders(arrays, train=np.ones(len(arrays.datasets), dtype=bool))), None
    if capability(strategy, "time_model_aware"):
        strategy = strategy.with_time_model(time_overhead=model.overhead, time_scale=model.scale, time_kind=kind)
    folder = _folder(cache, spec)
    folder.mkdir(parents=True, exist_ok=True)
    index = {l: j for j, l in enumerate(arrays.learners)}
    encoded = {}
    fitted_once = None
    names = list(meta_train.datasets["dataset"]) if hasattr(meta_train, "datasets") else None
    for d in rows:
        dataset = arrays.datasets[d]
        f = folder / (hashlib.sha1(dataset.encode()).hexdigest()[:16] + ".json")

        def fit(dataset=dataset):
            nonlocal fitted_once
            if loo:
                return strategy.fit(meta_train.subset(datasets=[x for x in names if x != dataset]))
            fitted_once = fitted_once or strategy.fit(meta_train)
            return fitted_once

        order, charges = cached_order(f, spec, fit, lambda: arrays_info(meta_all, dataset), arrays, dataset)
        encoded[int(d)] = ([index[l] for l in order], charges)
    return pack(encoded, *arrays.shape)


meta_all = None  # the whole meta-data (dataset rows for the policies; set in main)


def arrays_info(meta, dataset):
    return meta.dataset_info(dataset)


def _fmt(s: float) -> str:
    if s != s:
        return "n/a"
    if s >= 3600:
        return f"{s / 3600:.2f} h"
    if s >= 60:
        return f"{s / 60:.1f} min"
    return f"{s:.3g} s"


def cd_diagram(report, out: Path, title: str) -> str:
    """Friedman on the per-dataset time to eps (lower is better), Holm's all-pairs post hoc, the diagram."""
    from algorank.evaluation.stats.cd_plot import plot_cd
    from algorank.evaluation.stats.multiple import friedman, posthoc

    labels = [m.strategy for m in report.metrics]
    scores = np.column_stack([np.asarray(m.time_to_eps, dtype=float) for m in report.metrics])
    fr = friedman(scores, lower_is_better=True)
    ph = posthoc(fr.average_ranks, scores.shape[0], method="holm", labels=labels)
    lines = [f"{title}", f"Friedman on the time to eps: N = {scores.shape[0]}, k = {len(labels)}, "
             f"p = {fr.pvalue:.3g}; Holm's all-pairs post hoc (alpha 0.05)", "", "| strategy | average rank |",
             "|---|---|"]
    for i in np.argsort(fr.average_ranks, kind="stable"):
        lines.append(f"| {labels[i]} | {fr.average_ranks[i]:.2f} |")
    try:
        import matplotlib

        matplotlib.use("Agg", force=True)
        import matplotlib.pyplot as plt

        ax = plot_cd(ph)
        ax.set_title(title + "\n" + ax.get_title(), fontsize=8)
        ax.figure.savefig(out / "cd.png", dpi=130, bbox_inches="tight")
        plt.close(ax.figure)
    except ImportError:  # no matplotlib: the ranks and the groups are still in cd.txt
        pass
    from algorank.evaluation.stats.cd_plot import cd_groups

    groups = cd_groups(fr.average_ranks, ph.significant)
    lines += ["", "Groups not significantly different: " + "; ".join(
        "{" + ", ".join(labels[i] for i in g) + "}" for g in groups)]
    text = "\n".join(lines) + "\n"
    (out / "cd.txt").write_text(text, encoding="utf-8")
    return text


def _family(spec: str, meta: str) -> str:
    """A strategy's name without its tuned knob (``pmf:per_second,n_init=1`` -> ``pmf:per_second``), so that the
    same strategy is one column over the three sets; A3R with the tuned P is ``ar:tuned``."""
    name, _, params = spec.partition(":")
    if name == "ar" and spec != "ar:p=0":
        return "ar:tuned"
    if name in ("ar", "oracle", "lt", "fastest") or name not in {k.split(":")[0] for k in KNOBS}:
        return spec
    knob = KNOBS[name][0]
    kept = [p for p in params.split(",") if p and not p.startswith(knob + "=")]
    return name + (":" + ",".join(kept) if kept else "")


def bootstrap_sums(spec: str, files: dict, *, draws: int = 10_000, seed: int = 0) -> list:
    """Lines of a table: per set, ``spec``'s summed time to eps over the oracle bound's, and over the summed time
    of the other strategy with the smallest sum (``spec``'s own variants, ``spec:...``, are not others), each with
    a 95 % percentile interval from resampling the datasets (``draws`` resamples, ``seed``): how much of a
    difference in sums a few datasets could make."""
    rng = np.random.default_rng(seed)
    out = [f"**Summed time to 1 point of {spec}, with 95 % intervals from resampling the datasets "
           f"({draws:,} resamples, seed {seed})**", "",
           f"| set | datasets | {spec} / oracle bound | other with the smallest sum | {spec} / its sum |",
           "|---|---|---|---|---|"]
    for meta, f in files.items():
        table = pd.read_csv(f, dtype={"dataset": str}).pivot(index="dataset", columns="strategy",
                                                            values="time_to_eps")
        others = [c for c in table.columns if c not in (spec, "oracle", "oracle bound")
                  and not c.startswith(spec + ":")]
        best = min(others, key=lambda c: table[c].sum())
        x, bound, y = (table[c].to_numpy(dtype=float) for c in (spec, "oracle bound", best))
        idx = rng.integers(0, len(x), (draws, len(x)))
        cells = []
        for other in (bound, y):
            lo, hi = np.percentile(x[idx].sum(axis=1) / other[idx].sum(axis=1), [2.5, 97.5])
            cells.append(f"{x.sum() / other.sum():.2f} ({lo:.2f}–{hi:.2f})")
        out.append(f"| {meta} | {len(x)} | {cells[0]} | {best} | {cells[1]} |")
    return out


def pooled(spec: str, eps: float = 1.0, *, oboe: str = "field_oboe_training", mode: str = "training",
           also: tuple = ()) -> str:
    """Sign tests of ``spec``'s time to ``eps`` against every other strategy of the field tables of broad, LCDB
    and OBOE (``mode``: ``training`` or ``heldout``), per set and on their datasets pooled (ties: within 5 % or
    0.05 s, as ``benchmark``'s W/T/L).  ``oboe`` names OBOE's training results folder; ``also`` adds the tables
    of ``--test-meta`` runs (their results folders, ``field_<meta>_on_<stem>``) as sets named ``<stem>``.
    Writes ``field_pooled_<mode>.md`` (``..._<oboe folder's suffix>.md`` for another training folder,
    ``..._with_<stems>.md`` with ``also``) next to the tables."""
    from scipy.stats import binomtest

    results = ROOT / "tests" / "benchmarks" / "results"
    tables = {meta: (meta, oboe if meta == "oboe" and mode == "training" else f"field_{meta}_{mode}")
              for meta in ("broad", "lcdb", "oboe")}
    added = []
    for folder in also:
        fitted_on, _, stem = folder.removeprefix("field_").partition("_on_")
        if not stem:
            raise SystemExit(f"error: {folder!r} is not the results folder of a --test-meta run (field_<meta>_on_<stem>)")
        tables[stem] = (fitted_on, folder)
        added.append(stem)
    frames = []
    for name, (meta, folder) in tables.items():
        f = results / folder / "per_dataset.csv"
        if not f.exists():
            raise SystemExit(f"error: run the {mode} mode of {meta} with --extra {spec} first ({f} is missing)")
        d = pd.read_csv(f, dtype={"dataset": str})
        d = d[~d["strategy"].isin(["oracle", "oracle bound"])]
        d["strategy"] = [s if s == spec else _family(s, meta) for s in d["strategy"]]
        d["dataset"] = name + ":" + d["dataset"]
        d["set"] = name
        frames.append(d)
    data = pd.concat(frames)
    table = data.pivot(index="dataset", columns="strategy", values="time_to_eps")
    sets = data.drop_duplicates("dataset").set_index("dataset")["set"].reindex(table.index)
    if spec not in table.columns or table[spec].isna().any():
        raise SystemExit(f"error: {spec} is not in every {mode} table (run each with --extra {spec})")
    where = ("training parts (leave-one-dataset-out)" if mode == "training"
             else "frozen held-out splits (fitted on the training parts)")
    if added:
        where += " and " + ", ".join(f"the {n} collection" for n in added)
    lines = [f"**{spec} against every other strategy, time to {eps:g} point, {where}: "
             f"wins/ties/losses of {spec} and the sign-test p**", "",
             "| strategy | " + " | ".join(tables) + " | pooled | pooled sign p |",
             "|---|" + "---|" * (len(tables) + 2)]
    for other in sorted(c for c in table.columns if c != spec):
        x, y = table[spec], table[other]
        tie = (x - y).abs() <= np.maximum(0.05, 0.05 * np.minimum(x, y))
        cells = []
        for part in (*tables, None):
            rows = (sets == part) if part else np.ones(len(x), dtype=bool)
            ok = rows & x.notna() & y.notna()
            w, t, l = int((ok & ~tie & (x < y)).sum()), int((ok & tie).sum()), int((ok & ~tie & (x > y)).sum())
            cells.append(f"{w}/{t}/{l}")
        p = binomtest(w, w + l).pvalue if w + l else 1.0
        lines.append(f"| {other} | " + " | ".join(cells) + f" | {p:.2g} |")
    lines += ["", *bootstrap_sums(spec, {n: results / folder / "per_dataset.csv" for n, (_, folder) in tables.items()})]
    text = "\n".join(lines) + "\n"
    suffix = oboe.removeprefix("field_oboe_training") if mode == "training" else ""
    suffix += "_with_" + "_".join(added) if added else ""
    (results / f"field_pooled_{mode}{suffix}.md").write_text(text, encoding="utf-8")
    return text


def main(argv=None) -> int:
    global meta_all
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--meta", default="broad", choices=("broad", "lcdb", "oboe", "modern"))
    ap.add_argument("--heldout", action="store_true", help="score the frozen held-out split (record the look)")
    ap.add_argument("--every", type=int, default=1, help="training mode: score every K-th training dataset")
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--default", default=DEFAULT, help="the reference strategy (default: eiu, the default strategy)")
    ap.add_argument("--extra", action="append", default=[], metavar="SPEC",
                    help="a candidate strategy scored beside the field, no knob tuned (repeatable)")
    ap.add_argument("--pooled", metavar="SPEC", default=None,
                    help="no scoring: the sign tests of SPEC (an --extra of earlier training runs) against every "
                         "other strategy on the training datasets of broad, LCDB and OBOE pooled")
    ap.add_argument("--pooled-oboe", default="field_oboe_training", metavar="NAME",
                    help="--pooled: the results folder of OBOE's training table (e.g. the one of an --every 1 run "
                         "written with --out)")
    ap.add_argument("--test-meta", type=Path, default=None, metavar="FILE",
                    help="score on the datasets of this meta-data file, every strategy fitted once on all of --meta "
                         "(the peers with the knobs of the training run's tuned.json): a fresh collection such as "
                         "metadata/data/fresh_rdatasets.parquet (record the look)")
    ap.add_argument("--pooled-also", action="append", default=[], metavar="FOLDER",
                    help="--pooled: also pool the table of a --test-meta run (its results folder, e.g. "
                         "field_broad_on_fresh_rdatasets); repeatable")
    ap.add_argument("--score-reserve", action="store_true",
                    help="--test-meta: allow a collection whose record marks it as a reserve (kept unscored for the "
                         "next claim that a default is ahead: score it once and record the look)")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    if args.test_meta is not None and args.heldout:
        raise SystemExit("error: give either --heldout or --test-meta, not both")
    record = args.test_meta.with_suffix(".json") if args.test_meta is not None else None
    if record is not None and record.is_file() and json.loads(record.read_text()).get("reserve") \
            and not args.score_reserve:
        raise SystemExit(f"error: {args.test_meta.name} is a reserve, kept unscored for the next claim that a default "
                         "is ahead; give --score-reserve to score it (once) and record the held-out evaluation in the benchmark record, docs/benchmarks/")
    if args.pooled:
        text = pooled(args.pooled, args.eps, oboe=args.pooled_oboe, mode="heldout" if args.heldout else "training",
                      also=tuple(args.pooled_also))
        print(text)
        return 0
    scored_elsewhere = args.heldout or args.test_meta is not None  # fitted once, scored on datasets not fitted on
    mode = "heldout" if args.heldout else (f"on_{args.test_meta.stem}" if args.test_meta is not None else "training")
    out = args.out or ROOT / "tests" / "benchmarks" / "results" / f"field_{args.meta}_{mode}"
    out.mkdir(parents=True, exist_ok=True)
    cache = ROOT / "tests" / "benchmarks" / "results" / ".cache" / f"field_{args.meta}_{mode}" / code_fingerprint()
    meta_all = load_meta(args.meta)
    held = list(heldout(args.meta))
    train = meta_all.exclude(datasets=held)
    if args.test_meta is not None:  # fitted on all of --meta, as a user's recommend is
        from algorank.evaluation.meta.scoring import join_test_meta

        train = meta_all
        meta_all, held = join_test_meta(train, [load_meta(str(args.test_meta))])
    if scored_elsewhere:
        scored_meta = meta_all
        tuned_file = out.parent / f"field_{args.meta}_training" / "tuned.json"
        if not tuned_file.exists():
            raise SystemExit(f"error: run the training mode first ({tuned_file} is missing)")
        tuned = json.loads(tuned_file.read_text())
    else:
        scored_meta = train
    arrays, model, kind, words = time_model_arrays(scored_meta, time_model="live")
    lo, hi = _window(arrays, None, None)
    has = arrays.available.any(axis=1)
    if scored_elsewhere:
        is_held = np.isin(np.asarray(arrays.datasets, dtype=object), held)
        rows = np.flatnonzero(has & is_held)
    else:
        rows = np.flatnonzero(has)[:: args.every]
    runtime = []

    def run(spec):
        t0 = _cpu()
        seq, charges = sequences(spec, train, arrays, rows, lo, hi, model, kind, cache=cache, loo=not scored_elsewhere)
        strategy = parse_strategy(spec)
        res = _score(strategy, arrays, seq, rows, lo, hi, spec, "loo", axis="time", charges=charges,
                     start=start_seconds(strategy, scored_meta, arrays))
        runtime.append({"strategy": spec, "cpu_s": round(_cpu() - t0, 2)})
        print(f"{args.meta} {mode} {spec}: {runtime[-1]['cpu_s']} CPU s", file=sys.stderr, flush=True)
        return res

    results = [run(args.default)] + [run(spec) for spec in args.extra]
    knob_rows = []
    chosen = {}
    for peer, (knob, grid) in KNOBS.items():
        values = tuple(dict.fromkeys(f"{hi:g}" if v == "WINDOW" else v for v in grid))  # the window may be 10 or 60
        if scored_elsewhere:
            spec = tuned[peer]
            results.append(run(spec))
            continue
        specs = tuple(knob_spec(peer, knob, v) for v in values)
        sweep = KnobSweepResult(family=peer, knob=knob, grid=values, specs=specs,
                                results=tuple(run(s) for s in specs))
        chosen[peer] = sweep.best_spec
        best = sweep.results[sweep.specs.index(sweep.best_spec)]
        results.append(best)
        nested = sweep.nested_mil()
        for v, s, r in zip(values, specs, sweep.results):
            knob_rows.append({"peer": peer, "knob": knob, "value": v, "spec": s, "mean_mil": float(np.mean(r.mil)),
                              "chosen": s == sweep.best_spec, "nested_mean_mil": float(np.mean(nested))})
    for spec in OURS:
        results.append(run(f"ar:p={TUNED_P[args.meta]}" if spec == "ar:tuned" else spec))
    results.append(run("oracle"))
    if not scored_elsewhere:
        (out / "tuned.json").write_text(json.dumps(chosen, indent=1) + "\n")
        pd.DataFrame(knob_rows).to_csv(out / "knobs.csv", index=False)
    names = [r.strategy for r in results]
    report = metrics_report(results, arrays, eps=args.eps, budgets=BUDGETS, reference=names[0], time_axis=words)
    comp = {c.strategy: c for c in report.comparisons if c.metric == "time_to_eps"}
    comp10 = {c.strategy: c for c in report.comparisons if c.metric.startswith("loss@10")}
    oracle_sum = report.oracle.totals()["time_to_eps_sum"]
    rows_out = []
    for m in (*report.metrics, report.oracle):
        t = m.totals()
        c = comp.get(m.strategy) if m is not report.oracle else None
        c10 = comp10.get(m.strategy) if m is not report.oracle else None
        label = m.strategy + (" (default)" if m.strategy == names[0] else "")
        if m is report.oracle:
            label = "oracle bound"
        rows_out.append({
            "strategy": label, "t_eps_sum_s": t["time_to_eps_sum"], "x_oracle": t["time_to_eps_sum"] / oracle_sum,
            "t_eps_median_s": t["time_to_eps_median"], "not_reached": int(m.n_censored),
            "loss@1s": t["loss@1s_mean"], "loss@10s": t["loss@10s_mean"], "loss@60s": t["loss@60s_mean"],
            "mil": float(np.mean(m.mil)),
            "wtl_t_eps": "" if c is None or m.strategy == names[0] else f"{c.wins}/{c.ties}/{c.losses}",
            "sign_p_t_eps": float("nan") if c is None or m.strategy == names[0] else float(c.sign.pvalue),
            "wtl_loss10": "" if c10 is None or m.strategy == names[0] else f"{c10.wins}/{c10.ties}/{c10.losses}",
        })
    frame = pd.DataFrame(rows_out)
    frame.to_csv(out / "field.csv", index=False)
    report.per_dataset_table().to_csv(out / "per_dataset.csv", index=False)
    pd.DataFrame(runtime).to_csv(out / "runtime.csv", index=False)
    n_all = int(has.sum()) if not scored_elsewhere else len(rows)
    label = (f"fresh collection {args.test_meta.stem} ({len(rows)} datasets, every strategy fitted on all "
             f"{len(train.datasets)} datasets of {args.meta}, peers' knobs tuned on its training part)"
             if args.test_meta is not None else
             f"frozen held-out split ({len(rows)} datasets, fitted on the {len(meta_all.datasets) - len(held)} "
             f"training datasets, peers' knobs tuned on the training part)" if args.heldout else
             f"training part, in-sample for any tuning ({len(rows)} of {n_all} training datasets scored, "
             f"leave-one-dataset-out within the training part{'' if args.every == 1 else f', every {args.every}th'})")
    title = f"{args.meta}: {label}; live test times; eps {args.eps:g} point"
    lines = [f"**{title}**; W/T/L (win = faster / smaller loss than {names[0]}) and sign-test p against "
             f"{names[0]}", "",
             "| strategy | time to 1 pt: sum | x oracle | median | not reached | loss@1s | loss@10s | loss@60s | MIL "
             "| t_eps W/T/L vs default | sign p | loss@10s W/T/L |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows_out:
        p = "" if r["sign_p_t_eps"] != r["sign_p_t_eps"] else f"{r['sign_p_t_eps']:.2g}"
        lines.append(f"| {r['strategy']} | {_fmt(r['t_eps_sum_s'])} | {r['x_oracle']:.2f} | {_fmt(r['t_eps_median_s'])} "
                     f"| {r['not_reached']} | {r['loss@1s']:.2f} | {r['loss@10s']:.2f} | {r['loss@60s']:.2f} "
                     f"| {r['mil']:.2f} | {r['wtl_t_eps']} | {p} | {r['wtl_loss10']} |")
    text = "\n".join(lines) + "\n"
    cd = cd_diagram(report, out, title)
    (out / "field.md").write_text(text + "\n" + cd, encoding="utf-8")
    print(text + "\n" + cd)
    print(f"CPU seconds: {sum(r['cpu_s'] for r in runtime):.0f}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
