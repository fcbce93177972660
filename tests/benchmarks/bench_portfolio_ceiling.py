"""How good could a choice among algorank's candidates be? One fit of each learner on the end-to-end split, in hindsight.

``bench_end_to_end.py`` asks what a tool returns within a budget.  This benchmark asks what the candidates themselves
can reach on the same data: every named learner is fitted once on the same stratified 75/25 split (seed 0) of each
table of an end-to-end collection, exactly as ``recommend`` refits the learner it chose (algorank's own preprocessing,
one thread), and scored by its accuracy on the 25 % holdout.  Each fit runs in a fresh process of its own under a hard
wall cap (``--fit-cap``, default 600 s), with the end-to-end benchmark's child runner.

Before the fit, each learner is cross-validated on the training part (``--cv``, default 5 folds, as ``recommend``'s
own test; ``--cv 0`` skips it).  The report gives two numbers per learner set:

* **chosen by cross-validation**: per dataset, the holdout accuracy of the learner with the highest cross-validation
  accuracy: what ``recommend`` would return with no time limit, had it tested every learner of the set;
* **best in hindsight**: per dataset, the highest holdout accuracy of any learner of the set.  It is chosen on the
  holdout itself, so it is an optimistic bound on what any choice among those learners could return, not a result a
  tool can reach.  If the bound of a candidate set is not above another tool's accuracy, no strategy that chooses
  among those candidates can be ahead of that tool on that collection.

Learner sets (``--group``, repeatable; or ``--learner ID``, repeatable):

* ``lcdb``: LCDB's 20 scikit-learn learners at their defaults;
* ``defaults``: HistGradientBoosting, LightGBM, XGBoost and CatBoost at the libraries' defaults;
* ``ag2023-boosting``: the 15 LightGBM, XGBoost and CatBoost configurations of AutoGluon's 2023 zero-shot portfolio;
* ``ag2023-trees``, ``flaml``, ``askl2``: the portfolio's other published configurations.

::

    OMP_NUM_THREADS=1 python tests/benchmarks/bench_portfolio_ceiling.py --collection large --group defaults \\
        --group ag2023-boosting
    python tests/benchmarks/bench_portfolio_ceiling.py --report \\
        --e2e tests/benchmarks/results/end_to_end_paired.csv --budget 60

Results are appended row by row to ``--out`` (default ``results/portfolio_ceiling.csv``); a rerun skips every
(dataset, learner) already recorded (``--retry-failed`` reruns the failed ones).  ``--report`` prints per collection
the mean holdout accuracy (higher is better) of each set's choice by cross-validation and best in hindsight, of each
learner, and, with ``--e2e``, of the end-to-end tools at ``--budget``, over the datasets where every one of them has a
result.  The tables are the end-to-end collections' test data: a portfolio or strategy choice made after reading this
report is tuned on them.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import threading
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "results" / "portfolio_ceiling.csv"
FIELDS = ("collection", "dataset", "learner", "status", "accuracy", "wall_s", "cv_accuracy", "cv_s", "process_s",
          "n_train", "n_test", "message")
#: End-to-end tools compared in the report, with their labels.
E2E_TOOLS = ("algorank", "flaml", "hgb", "lgbm", "rf")
#: Two accuracies within this band are level (as in the end-to-end benchmark).
TIE = 0.001


def _e2e():
    """The end-to-end benchmark module (its collections, split, child runner and results file helpers)."""
    name = "bench_end_to_end"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, HERE / "bench_end_to_end.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def group_learners(group: str) -> list[str]:
    """The learner ids of a named set of the modern portfolio (see the module docstring)."""
    from algorank.metadata.learners import learner_ids

    modern = learner_ids(portfolio="modern")
    if group == "lcdb":
        return learner_ids(portfolio="lcdb")
    families = {"defaults": ("histgb", "lgbm", "xgb", "catboost"), "ag2023-boosting": ("lgbm", "xgb", "catboost"),
                "ag2023-trees": ("rf", "extra-trees")}
    tags = {"defaults": "default", "ag2023-boosting": "ag2023", "ag2023-trees": "ag2023", "flaml": "flaml",
            "askl2": "askl2"}
    if group not in tags:
        raise ValueError(f"group must be one of lcdb, {', '.join(tags)}; got {group!r}")
    out = []
    for i in modern:
        family, _, config = i.partition(":")
        if not config or config.split("-")[0] != tags[group]:
            continue
        if group in families and family not in families[group]:
            continue
        out.append(i)
    return out


def pending(collection: str, datasets, learners, rows: list[dict], *, retry_failed: bool = False,
            cv: bool = False) -> list:
    """(dataset, learner) pairs still to run: not recorded yet, recorded as failed (with ``retry_failed``), or, with
    ``cv``, recorded without a cross-validation accuracy."""
    last = {(r["collection"], r["dataset"], r["learner"]): r for r in rows}
    todo = []
    for d in datasets:
        for lrn in learners:
            r = last.get((collection, d, lrn))
            if (r is None or (retry_failed and r["status"] != "ok")
                    or (cv and r["status"] == "ok" and r.get("cv_accuracy") in ("", None))):
                todo.append((d, lrn))
    return todo


def _acc(row, column: str = "accuracy") -> float | None:
    return _e2e()._acc(row, column)


def _best_in_hindsight(last: dict, dataset: str, ids) -> float | None:
    """The highest holdout accuracy of the learners of ``ids`` on ``dataset``; None until every one of them has a row
    (a failed fit counts as no result)."""
    if any((dataset, i) not in last for i in ids):
        return None
    return max((a for a in (_acc(last[(dataset, i)]) for i in ids) if a is not None), default=None)


def _chosen_by_cv(last: dict, dataset: str, ids) -> float | None:
    """Holdout accuracy of the learner of ``ids`` with the highest cross-validation accuracy on ``dataset`` (the first
    in ``ids`` order on a tie), among those with both numbers; None until every learner of ``ids`` has a row."""
    if any((dataset, i) not in last for i in ids):
        return None
    scored = [(c, a) for c, a in ((_acc(last[(dataset, i)], "cv_accuracy"), _acc(last[(dataset, i)])) for i in ids)
              if c is not None and a is not None]
    if not scored:
        return None
    best = max(c for c, _ in scored)
    return next(a for c, a in scored if c == best)


def summarise(rows: list[dict], collection: str, *, sets: dict[str, list[str]] | None = None,
              e2e_rows: list[dict] | None = None, budget: str | None = None) -> dict:
    """One collection's numbers.

    Parameters
    ----------
    rows : list of dict
        This benchmark's results (the last row of a (dataset, learner) counts).
    collection : str
    sets : dict, optional
        Name -> learner ids whose best in hindsight, and (where the fits were cross-validated) whose choice by
        cross-validation, are reported (default: every learner recorded, as ``all``).
    e2e_rows : list of dict, optional
        The end-to-end benchmark's results; its tools at ``budget`` (single fits at any budget) are compared.
    budget : str, optional
        The end-to-end budget, as its results file writes it (``"60"``).

    Returns
    -------
    dict
        ``datasets`` (those where every compared entry has a result), ``entries`` (label -> mean accuracy over them,
        and per dataset), ``learners`` (per learner: mean accuracy over the datasets it has a result on, mean wall
        seconds, datasets with a result, datasets where it is best within ``TIE``) and ``best`` (per dataset: the
        learners best in hindsight).
    """
    last = {}
    for r in rows:
        if r["collection"] == collection:
            last[(r["dataset"], r["learner"])] = r
    learners = sorted({k[1] for k in last})
    datasets = sorted({k[0] for k in last})
    sets = sets or {"all": learners}
    per_set = {}
    for name, ids in sets.items():
        per_set[f"best of {name} in hindsight"] = {d: _best_in_hindsight(last, d, ids) for d in datasets}
    for name, ids in sets.items():
        if any(_acc(r, "cv_accuracy") is not None for k, r in last.items() if k[1] in ids):
            per_set[f"{name}, chosen by cross-validation"] = {d: _chosen_by_cv(last, d, ids) for d in datasets}
    if e2e_rows is not None:
        e2e = _e2e()
        latest = e2e.latest(e2e_rows)
        for t in E2E_TOOLS:
            if t in e2e.BUDGETED and budget is None:
                continue
            key_budget = e2e.budget_key(t, budget)
            label = e2e.LABELS[t] + (f", {budget} s" if t in e2e.BUDGETED else "")
            per_set[label] = {d: _acc(latest.get((collection, d, key_budget, t))) for d in datasets}
    complete = [d for d in datasets if all(v[d] is not None for v in per_set.values())]
    entries = {label: {"mean_accuracy": (sum(v[d] for d in complete) / len(complete)) if complete else None,
                       "per_dataset": {d: v[d] for d in datasets}} for label, v in per_set.items()}
    best = {}
    for d in datasets:
        accs = {i: _acc(last.get((d, i))) for i in learners}
        top = max((a for a in accs.values() if a is not None), default=None)
        best[d] = [] if top is None else [i for i, a in accs.items() if a is not None and a >= top - TIE - 1e-12]
    table = {}
    for i in learners:
        got = [(d, _acc(last.get((d, i)))) for d in datasets if (d, i) in last]
        ok = [(d, a) for d, a in got if a is not None]
        walls = [float(last[(d, i)]["wall_s"]) for d, a in ok]
        table[i] = {"datasets": len(ok), "failed": len(got) - len(ok),
                    "mean_accuracy": sum(a for _, a in ok) / len(ok) if ok else None,
                    "mean_wall_s": sum(walls) / len(walls) if walls else None,
                    "best_on": sum(1 for d in datasets if i in best[d])}
    return {"collection": collection, "budget": budget, "datasets": complete, "entries": entries,
            "learners": table, "best": best}


def format_summary(s: dict) -> str:
    lines = [f"### {s['collection']}: {len(s['datasets'])} datasets with every entry's result",
             "",
             "Mean holdout accuracy: higher is better. 'Best in hindsight' picks, per dataset, the learner with the "
             "highest holdout accuracy: an optimistic bound on any choice among those learners, not a result a tool "
             "can reach. 'Chosen by cross-validation' picks the learner with the highest cross-validation accuracy on "
             "the training part, as recommend would with no time limit.",
             "",
             "| entry | mean accuracy |", "|---|---|"]
    for label, v in s["entries"].items():
        acc = "n/a" if v["mean_accuracy"] is None else f"{v['mean_accuracy']:.4f}"
        lines.append(f"| {label} | {acc} |")
    lines += ["", "Per learner (its mean over the datasets it has a result on; 'best on': datasets where it is within "
              f"{TIE:g} of the best in hindsight):", "",
              "| learner | datasets | failed | mean accuracy | mean wall s | best on |", "|---|---|---|---|---|---|"]
    for i, v in sorted(s["learners"].items(), key=lambda kv: -(kv[1]["mean_accuracy"] or 0)):
        acc = "n/a" if v["mean_accuracy"] is None else f"{v['mean_accuracy']:.4f}"
        wall = "n/a" if v["mean_wall_s"] is None else f"{v['mean_wall_s']:.1f}"
        lines.append(f"| `{i}` | {v['datasets']} | {v['failed']} | {acc} | {wall} | {v['best_on']} |")
    return "\n".join(lines)


def _err(msg: str, code: int = 2) -> int:
    print(f"error: {msg}", file=sys.stderr)
    return code


def main(argv=None) -> int:
    e2e = _e2e()
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--collection", choices=("mid", "large"), default="mid")
    ap.add_argument("--group", action="append", help="a learner set (repeatable): lcdb, defaults, ag2023-boosting, "
                                                     "ag2023-trees, flaml, askl2")
    ap.add_argument("--learner", action="append", help="a learner id (repeatable)")
    ap.add_argument("--dataset", action="append", help="only these datasets of the collection (repeatable)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results CSV (appended; resumes)")
    ap.add_argument("--data", type=Path, default=Path.home() / ".cache" / "algorank" / "end_to_end",
                    help="where the tables of the large collection are written")
    ap.add_argument("--manifest", type=Path, default=e2e.SHARED / "MANIFEST.csv")
    ap.add_argument("--fit-cap", type=float, default=600.0,
                    help="wall cap of one learner's child (its cross-validation and its fit), in seconds (default 600)")
    ap.add_argument("--cv", type=int, default=5, help="folds of the cross-validation on the training part before the "
                                                      "fit (default 5, as recommend's test; 0: none)")
    ap.add_argument("--retry-failed", action="store_true")
    ap.add_argument("--workers", type=int, default=1, help="children at once (default 1; each single-threaded)")
    ap.add_argument("--report", action="store_true", help="print the tables of --out and run nothing")
    ap.add_argument("--e2e", type=Path, help="with --report: an end-to-end results file whose tools are compared")
    ap.add_argument("--budget", help="with --report --e2e: the end-to-end budget compared (e.g. 60)")
    ap.add_argument("--json", action="store_true", help="with --report: the tables as JSON")
    args = ap.parse_args(argv)
    args.manifest, args.data = args.manifest.resolve(), args.data.resolve()

    try:
        sets = {g: group_learners(g) for g in (args.group or [])}
    except ValueError as exc:
        return _err(f"--{exc}")
    if args.learner:
        sets["the named learners"] = list(args.learner)

    if args.report:
        rows = e2e.read_results(args.out)
        if not rows:
            return _err(f"no results in {args.out}")
        e2e_rows = None
        if args.e2e is not None:
            e2e_rows = e2e.read_results(args.e2e)
            if not e2e_rows:
                return _err(f"no results in --e2e {args.e2e}")
        if len(sets) > 1:  # and their union
            sets["all of them"] = list(dict.fromkeys(i for ids in sets.values() for i in ids))
        collections = sorted({r["collection"] for r in rows})
        out = [summarise(rows, c, sets=sets or None, e2e_rows=e2e_rows, budget=args.budget) for c in collections]
        print(json.dumps(out, indent=1) if args.json else "\n\n".join(format_summary(s) for s in out))
        return 0

    if not sets:
        return _err("name the learners to fit with --group or --learner")
    if args.workers < 1:
        return _err("--workers must be at least 1")
    if not args.fit_cap > 0:
        return _err("--fit-cap must be a positive number of seconds")
    if args.cv < 0 or args.cv == 1:
        return _err("--cv must be 0 (none) or at least 2 folds")
    from algorank.metadata.learners import is_runnable

    learners = list(dict.fromkeys(i for ids in sets.values() for i in ids))
    missing = [i for i in learners if not is_runnable(i)]
    if missing:
        return _err(f"learner {missing[0]!r} cannot run here (unknown, or its library is not installed)")
    items = e2e.select_mid(args.manifest) if args.collection == "mid" else e2e.select_large(args.data)
    if args.dataset:
        unknown = sorted(set(args.dataset) - {i["name"] for i in items})
        if unknown:
            return _err(f"--dataset {unknown[0]!r} is not in the {args.collection} collection")
        items = [i for i in items if i["name"] in args.dataset]
    by_name = {i["name"]: i for i in items}
    todo = pending(args.collection, list(by_name), learners, e2e.read_results(args.out),
                   retry_failed=args.retry_failed, cv=args.cv > 0)
    print(f"{len(todo)} fit(s) to do, results in {args.out}", file=sys.stderr)
    lock, stopping = threading.Lock(), threading.Event()

    def one(job):
        name, learner = job
        if stopping.is_set():
            return
        item = by_name[name]
        spec = {"path": item["path"], "target": item["target"], "tool": "learner", "learner": learner,
                "budget": None, "excluded": [], "cv": args.cv}
        res = e2e.run_child(spec, args.fit_cap)
        if stopping.is_set():
            return
        res.pop("correct", None)
        res.pop("returned", None)
        row = {"collection": args.collection, "dataset": name, "learner": learner, **res}
        for k in ("accuracy", "wall_s", "cv_accuracy", "cv_s", "process_s"):
            if isinstance(row.get(k), float):
                row[k] = f"{row[k]:.6g}"
        with lock:
            e2e.append_row(args.out, row, fields=FIELDS)
            print(f"{name} {learner}: {row['status']} accuracy {row.get('accuracy', '')} wall {row.get('wall_s', '')} s "
                  f"{row.get('message', '')}", file=sys.stderr)

    return e2e.run_jobs(todo, one, workers=args.workers, stopping=stopping)


if __name__ == "__main__":
    sys.exit(main())
