"""The ``algorank`` command line: parse, call one library function, render.

No logic lives here.  Every subcommand parses its arguments, calls one library
function, and renders the result: a readable table by default, exactly one JSON
object with ``--json``, files under ``--out``.  Only algorank's own exceptions
are caught: :class:`~algorank.metadata.errors.InputError` (a user mistake) prints one
line ``error: ...`` and exits 2; any other :class:`~algorank.metadata.errors.AlgorankError`
exits 1.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from typing import Callable, Sequence

from algorank.metadata.errors import AlgorankError, InputError
from algorank.metadata.io import json_dumps

__all__ = ["main", "build_parser"]

logger = logging.getLogger("algorank")


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose usage errors are one line ``error: ...`` and exit 2."""

    def error(self, message: str):  # noqa: D401 - argparse API
        raise InputError(f"{self.prog.split()[-1] if ' ' in self.prog else self.prog}: {message}")


# ---------------------------------------------------------------- rendering helpers
def _emit_json(obj) -> None:
    sys.stdout.write(json_dumps(obj) + "\n")


def _emit(text: str) -> None:
    sys.stdout.write(text.rstrip("\n") + "\n")


def _fmt_seconds(s: float) -> str:
    if s != s:  # NaN
        return "n/a"
    if s < 1:
        return f"{s * 1000:.3g} ms"
    if s < 120:
        return f"{s:.3g} s"
    if s < 7200:
        return f"{s / 60:.3g} min"
    return f"{s / 3600:.3g} h"


def _add_common(p: argparse.ArgumentParser, *, meta: bool = True, out: bool = False, meta_default: str = "lcdb") -> None:
    if meta:
        p.add_argument("--meta", metavar="PATH", action="append",
                       help="meta-data file (.parquet or .csv) or an embedded set: lcdb, uci "
                            f"(default: {meta_default}); repeat to join several with distinct datasets")
        p.set_defaults(meta_default=meta_default)
    p.add_argument("--json", action="store_true", help="print exactly one JSON object")
    if out:
        p.add_argument("--out", metavar="DIR", help="write plots and tables to this folder")
    p.add_argument("--quiet", action="store_true", help="no progress bars or log messages")


def _add_window(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tmin", type=float, default=None, metavar="S", help="MIL window start in seconds (default: from the data)")
    p.add_argument("--tmax", type=float, default=None, metavar="S", help="MIL window end in seconds (default: from the data)")


def _add_time_model(p: argparse.ArgumentParser) -> None:
    p.add_argument("--time-model", choices=("fit", "live"), default="fit",
                   help="test times: as recorded (default), or what a live K-fold test costs, K x t + overhead")
    p.add_argument("--cv", type=int, default=5, metavar="K", help="--time-model live: folds of a live test (5)")
    p.add_argument("--time-overhead", type=float, default=None, metavar="SECONDS",
                   help="--time-model live: seconds per test on top of K x t (default: the calibrated constant)")


def _time_model(args, meta):
    """(arrays-or-meta for the sweep, TimeModel or None, time kind, words) from the --time-model flags."""
    if args.time_model == "fit":
        return meta, None, "fit_time", "recorded fit times"
    from algorank.evaluation.meta.time_model import live_arrays

    arrays, model, kind = live_arrays(meta, folds=args.cv, overhead=args.time_overhead)
    words = "live tests, " + model.describe(kind)
    return arrays, model, kind, words


def _save_figure(ax, target) -> str:
    """Save ``ax``'s figure to ``target`` atomically (PNG), close it, return the path."""
    import matplotlib.pyplot as plt

    from algorank.metadata.io import atomic_path

    with atomic_path(target) as tmp:
        ax.figure.savefig(tmp, dpi=150, bbox_inches="tight")
    plt.close(ax.figure)
    return str(target)


def _check_numbers(args, *, cv: bool = True) -> None:
    """``--seed`` and ``--cv`` with the one shared validation (before any work)."""
    from algorank.metadata.checks import check_folds, check_seed

    if getattr(args, "seed", None) is not None:
        check_seed(args.seed, name="--seed")
    if cv and getattr(args, "cv", None) is not None:
        check_folds(args.cv, name="--cv")


def _check_out(args):
    """``--out`` checked before any work (a folder that is, or can become, writable); None without it."""
    from algorank.metadata.io import check_out_dir

    return check_out_dir(args.out) if getattr(args, "out", None) else None


def _write_outputs(out, writers) -> list[str]:
    """Run ``writers`` (callables taking the folder, returning the paths written) inside ``out``.

    Called after the results were printed.  Any OSError becomes one ``error: cannot write ...``
    (exit 2 for a path, 1 for a full disk) and what was created is removed again.
    """
    from algorank.metadata.io import output_folder

    written: list[str] = []
    with output_folder(out) as folder:
        for write in writers:
            written.extend(write(folder))
    return written


def _load_meta(args):
    from algorank.metadata.snapshot import load_meta

    return load_meta(args.meta, default=getattr(args, "meta_default", "lcdb"))


# ---------------------------------------------------------------- info
def _add_info(sub) -> None:
    p = sub.add_parser("info", help="summarise a meta-dataset (default: the embedded snapshot)")
    _add_common(p)
    p.set_defaults(func=_run_info)


def _run_info(args) -> None:
    meta = _load_meta(args)
    d = meta.describe()
    if args.json:
        _emit_json(d.to_dict())
        return
    _emit(
        "\n".join(
            [
                f"source            {d.source}",
                f"datasets          {d.datasets}",
                f"learners          {d.learners}",
                f"cells             {d.cells} of {d.datasets * d.learners} (missing {d.missing_fraction:.1%})",
                f"runs              {d.runs} ({d.failed_runs} failed; median {d.repeats_per_cell_median:g} per cell)",
                f"fit time          {_fmt_seconds(d.fit_time_min)} .. {_fmt_seconds(d.fit_time_max)} "
                f"(median {_fmt_seconds(d.fit_time_median)})",
            ]
        )
    )


# ---------------------------------------------------------------- snapshot
def _add_snapshot(sub) -> None:
    p = sub.add_parser("snapshot", help="manage the embedded LCDB snapshot")
    ssub = p.add_subparsers(dest="snapshot_command", required=True, parser_class=_Parser)
    b = ssub.add_parser("build", help="rebuild the snapshot from the lcdb package (pip install 'algorank[lcdb]')")
    b.add_argument("--out", metavar="DIR", help="folder to write to (default: the installed package's data folder)")
    b.add_argument("--lcdb-dir", metavar="DIR", help="folder of LCDB's CSV files (default: the installed lcdb package)")
    b.add_argument("--json", action="store_true", help="print the written record as JSON")
    b.add_argument("--quiet", action="store_true", help="no log messages")
    b.set_defaults(func=_run_snapshot_build)


def _run_snapshot_build(args) -> None:
    from algorank.metadata.snapshot import build_snapshot

    record = build_snapshot(args.out, lcdb_dir=args.lcdb_dir)
    if args.json:
        _emit_json(record)
    else:
        _emit("\n".join(f"{k:<10}{v}" for k, v in record.items()))


# ---------------------------------------------------------------- pull
def _add_pull(sub) -> None:
    p = sub.add_parser("pull", help="build a meta-dataset from prior runs on OpenML (cached, resumable)")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--suite", metavar="ID", help="benchmark suite id or alias (e.g. 99 = OpenML-CC18)")
    src.add_argument("--tasks", metavar="ID", type=int, nargs="+", help="OpenML task ids")
    src.add_argument("--tag", metavar="TAG", help="all classification tasks with this tag")
    fl = p.add_mutually_exclusive_group(required=True)
    fl.add_argument("--flows", metavar="ID", type=int, nargs="+", help="OpenML flow ids")
    fl.add_argument("--top-flows", metavar="N", type=int, help="the N flows with runs on most of the tasks")
    p.add_argument("--measure", default="predictive_accuracy", help="measure for the accuracy column")
    p.add_argument("--runtime-measure", default="auto", metavar="NAME",
                   help="auto (usercpu_time_millis_training, else wall_clock_time_millis_training, else "
                        "usercpu_time_millis, else wall_clock_time_millis), none, or one of those names")
    p.add_argument("--cache", metavar="DIR", help="page cache (default $ALGORANK_CACHE or ~/.cache/algorank/openml)")
    p.add_argument("--offline", action="store_true", help="use the cache only; name what is missing")
    p.add_argument("--out", metavar="PATH", required=True, help="meta-data file (.parquet or .csv); "
                   "the coverage report goes to PATH.coverage.json")
    p.add_argument("--server", default=None, metavar="URL", help="OpenML API URL (default: www.openml.org)")
    p.add_argument("--page-size", type=int, default=10000, metavar="N", help="rows per listing page")
    p.add_argument("--retries", type=int, default=4, metavar="N", help="attempts per request")
    p.add_argument("--backoff", type=float, default=1.0, metavar="S", help="first retry wait (doubles)")
    p.add_argument("--timeout", type=float, default=120.0, metavar="S", help="seconds per request")
    p.add_argument("--json", action="store_true", help="print the coverage report as one JSON object")
    p.add_argument("--quiet", action="store_true", help="no progress bar or log messages")
    p.set_defaults(func=_run_pull)


def _run_pull(args) -> None:
    from algorank.metadata.openml_http import DEFAULT_SERVER, RetryPolicy
    from algorank.metadata.openml_pull import pull_openml

    from algorank.metadata.checks import check_url

    if args.server is not None:
        check_url(args.server, name="--server")
    suite = int(args.suite) if args.suite is not None and args.suite.isdigit() else args.suite
    result = pull_openml(
        suite=suite, tasks=args.tasks, tag=args.tag, flows=args.flows, top_flows=args.top_flows,
        measure=args.measure, runtime_measure=args.runtime_measure, cache_dir=args.cache, offline=args.offline,
        server=args.server or DEFAULT_SERVER, page_size=args.page_size,
        retry=RetryPolicy(attempts=args.retries, backoff=args.backoff, timeout=args.timeout), out=args.out,
        progress=not args.quiet and sys.stderr.isatty(),
    )
    c = result.coverage
    if args.json:
        _emit_json(c.to_dict())
        return
    lines = [
        f"wrote             {c.output} (+ .coverage.json)",
        f"selection         {c.selection}; flows {', '.join(map(str, c.flows))}",
        f"datasets          {c.datasets}",
        f"learners          {c.learners}",
        f"cells             {c.cells} ({c.with_runtime} with runtime, {c.with_folds} with per-fold values)",
        f"task x flow       {c.pairs_with_accuracy} of {c.pairs} with {c.measure}, {c.pairs_with_runtime} with "
        f"runtime, {c.pairs_with_folds} with folds",
        f"pages             {c.pages['fetched']} fetched, {c.pages['cache']} from cache, "
        f"{c.pages['corrupt']} corrupt refetched",
    ]
    for m in c.missing[:20]:
        where = f"task {m['task']}" + (f", flow {m['flow']}" if m["flow"] is not None else "")
        lines.append(f"missing {m['what']:<9} {where}: {m['reason']}")
    if len(c.missing) > 20:
        lines.append(f"... and {len(c.missing) - 20} more gaps (see the .coverage.json)")
    _emit("\n".join(lines))


# ---------------------------------------------------------------- multitest
def _add_multitest(sub) -> None:
    p = sub.add_parser("multitest", help="Multi2Test: cost-conscious learner order with statistics (Ulas et al. 2012)")
    _add_common(p, out=True)
    p.add_argument("--learners", nargs="+", metavar="ID", help="learners to compare (ids or short names, "
                   "space- or comma-separated; default: all)")
    p.add_argument("--cost", default="fit_time", metavar="KIND|LIST",
                   help="cost prior: fit_time (default), fit_predict_time, model_bytes, or a comma-separated "
                        "learner order, cheapest first")
    p.add_argument("--pairwise", default="auto", metavar="TEST",
                   help="first-pass one-sided test: auto (from the folds), corrected_resampled_t, corrected_kfold_t, "
                        "combined_5x2cv_t, dietterich_5x2cv_t, paired_t")
    p.add_argument("--posthoc", default="bergmann", metavar="METHOD",
                   help="second-pass post hoc test: nemenyi, bonferroni-dunn, holm, shaffer, bergmann (default; "
                        "falls back to shaffer above 10 learners)")
    p.add_argument("--correction", default="holm", metavar="METHOD", help="first-pass correction: holm, bonferroni, none")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level in (0, 1) (default 0.05)")
    p.add_argument("--test-train-ratio", type=float, default=None, metavar="R",
                   help="n_test/n_train of repeated holdout splits (default: LCDB's 0.1/0.81)")
    p.set_defaults(func=_run_multitest)


def _run_multitest(args) -> None:
    from algorank.recommender.multitest import multi2test

    learners = None
    if args.learners:
        learners = [x for item in args.learners for x in item.split(",") if x.strip()]
    out = _check_out(args)
    meta = _load_meta(args)
    res = multi2test(meta, learners=learners, cost=args.cost, pairwise=args.pairwise, posthoc_method=args.posthoc,
                     correction=args.correction, alpha=args.alpha, test_train_ratio=args.test_train_ratio,
                     progress=not args.quiet and sys.stderr.isatty())
    def cd_diagram(folder):
        import matplotlib

        matplotlib.use("Agg")
        from algorank.evaluation.stats.cd_plot import plot_cd

        return [_save_figure(plot_cd(res, label_formatter=_safe_short), folder / "cd_diagram.png")]

    d = res.to_dict()
    if args.json:
        d["written"] = [str(out / "cd_diagram.png")] if out else []  # printed first, then written
        _emit_json(d)
        if out:
            _write_outputs(out, [cd_diagram])
        return
    fr = res.friedman
    lines = [f"Multi2Test on {fr.n_datasets} datasets ({len(res.dropped)} dropped), cost prior: {res.cost}, "
             f"alpha = {res.alpha:g}",
             f"pairwise: {'; '.join(res.pairwise_tests)} ({res.correction})",
             f"Friedman chi2 = {fr.statistic:.2f}, p = {fr.pvalue:.3g}; post hoc: "
             + ("none" if res.posthoc is None else res.posthoc.method),
             "",
             f"{'#':>3}  {'learner':<22}{'avg rank':>9}{'avg cost':>10}  reason for the next step"]
    ranks = res.average_ranks
    cost = d["average_cost"]
    for i, l in enumerate(res.order):
        rec = res.reasons[i] if i < len(res.reasons) else None
        reason = "" if rec is None else (
            f"significantly more accurate than {_safe_short(rec['second'])}" if rec["reason"] == "significant"
            else f"not significantly different from {_safe_short(rec['second'])}; cheaper" if rec["reason"] == "cost"
            else rec["text"])
        c = cost.get(l)
        lines.append(f"{i + 1:>3}  {_safe_short(l):<22}{ranks[l]:>9.2f}{'' if c is None else f'{c:>10.3f}':>10}  {reason}")
    for note in res.notes:
        lines.append(f"note: {note}")
    _emit("\n".join(lines))
    if out:
        sys.stdout.flush()
        _emit("\n".join(f"wrote {w}" for w in _write_outputs(out, [cd_diagram])))


def _safe_short(learner_id: str) -> str:
    from algorank.metadata.learners import short_name

    try:
        return short_name(learner_id)
    except Exception:  # ids outside the learner registry are shown as they are
        return learner_id


# ---------------------------------------------------------------- rank
def _add_rank(sub) -> None:
    p = sub.add_parser("rank", help="AR-A3R average ranking of the learners (seed 004)")
    _add_common(p)
    p.add_argument("--p", default="1/16", metavar="P",
                   help="A3R time exponent in [0, 1]: 1/64, 0.015625, 0 (accuracy only) ... (default 1/16)")
    p.add_argument("--exclude-dataset", nargs="+", default=[], metavar="ID", help="leave these datasets out of the ranking")
    p.add_argument("--min-coverage", type=float, default=0.5, metavar="F",
                   help="fraction of datasets a learner needs results on to be ranked on merit (default 0.5)")
    p.set_defaults(func=_run_rank)


def _run_rank(args) -> None:
    from algorank.recommender.registry import make_ar

    meta = _load_meta(args)
    if args.exclude_dataset:
        meta = meta.exclude(datasets=[x for item in args.exclude_dataset for x in item.split(",") if x.strip()])
    ar = make_ar(args.p, min_coverage=args.min_coverage).fit(meta)
    if args.json:
        _emit_json({"p": ar.p, "n_datasets": ar.n_datasets_, "order": ar.order_,
                    "scores": {l: ar.average_rank_[l] for l in ar.order_},
                    "coverage": {l: ar.coverage_[l] for l in ar.order_}})
        return
    lines = [f"AR-A3R ranking, P = {args.p} ({ar.p:g}), {ar.n_datasets_} datasets; score = mean rank (1 = best)",
             f"{'#':>3}  {'learner':<24}{'mean rank':>10}{'datasets':>10}"]
    for i, l in enumerate(ar.order_):
        lines.append(f"{i + 1:>3}  {_safe_short(l):<24}{ar.average_rank_[l]:>10.2f}{ar.coverage_[l]:>10}")
    _emit("\n".join(lines))


# ---------------------------------------------------------------- benchmark
def _add_benchmark(sub) -> None:
    p = sub.add_parser("benchmark", help="leave-one-dataset-out loss-time benchmark of ordering strategies")
    _add_common(p, out=True)
    p.add_argument("--strategy", action="append", required=True, metavar="SPEC",
                   help="ar:p=1/16, ar:p=0, random:seed=0, fastest, best-accuracy, oracle (repeat for several)")
    _add_window(p)
    _add_time_model(p)
    p.add_argument("--seed", type=int, default=0, help="seed for strategies with randomness when the spec gives none")
    p.set_defaults(func=_run_benchmark)


def _run_benchmark(args) -> None:
    from algorank.evaluation.meta.benchmark import benchmark_strategies
    from algorank.recommender.registry import parse_strategy

    _check_numbers(args)
    strategies = [parse_strategy(s, random_state=args.seed) for s in args.strategy]
    out = _check_out(args)
    meta = _load_meta(args)
    _, model, kind, words = _time_model(args, meta)
    suite = benchmark_strategies(strategies, meta, tmin=args.tmin, tmax=args.tmax, time_kind=kind, time_model=model,
                                 progress=not args.quiet and sys.stderr.isatty())
    files = ("per_dataset.csv", "loss_time.png", "loss_by_tests.png")

    def write(folder):
        import matplotlib

        matplotlib.use("Agg")
        from algorank.evaluation.meta.plots import plot_loss_by_tests, plot_loss_time
        from algorank.metadata.io import atomic_path

        target = folder / files[0]
        with atomic_path(target) as tmp:
            suite.per_dataset_table().to_csv(tmp, index=False, float_format="%.10g")
        return [str(target), _save_figure(plot_loss_time(suite.results), folder / files[1]),
                _save_figure(plot_loss_by_tests(suite.results), folder / files[2])]

    d = suite.to_dict()
    if args.json:
        d["written"] = [str(out / f) for f in files] if out else []  # printed first, then written
        d["time_model"] = words
        _emit_json(d)
        if out:
            _write_outputs(out, [write])
        return
    lines = [f"leave-one-dataset-out on {len(suite.results[0].datasets)} datasets ({words}), "
             f"MIL window tmin = {suite.tmin:g} s, tmax = {suite.tmax:g} s (loss in accuracy points)",
             f"{'strategy':<20}{'mean MIL':>10}{'median MIL':>12}{'Spearman':>10}"]
    for r in suite.results:
        lines.append(f"{r.strategy:<20}{r.mean_mil:>10.3f}{r.median_mil:>12.3f}{r.mean_spearman:>10.3f}")
    if suite.comparison is not None:
        c = suite.comparison
        lines.append(f"{c.test.method}: statistic = {c.test.statistic:.3f}, p = {c.test.pvalue:.3g}")
        if c.posthoc is not None:
            lines.append(f"post hoc ({c.posthoc.method}), significant pairs at alpha = {c.posthoc.alpha:g}:")
            k = len(c.names)
            pairs = [f"  {c.names[i]} vs {c.names[j]}: p = {c.posthoc.adjusted[i, j]:.3g}"
                     for i in range(k) for j in range(i + 1, k) if c.posthoc.significant[i, j]]
            lines.extend(pairs or ["  none"])
    if any(s.strip().startswith("oracle") for s in args.strategy):
        lines.append("note: 'oracle' sees the held-out dataset; it is a lower bound, not a usable strategy")
    _emit("\n".join(lines))
    if out:
        sys.stdout.flush()
        _emit("\n".join(f"wrote {w}" for w in _write_outputs(out, [write])))


# ---------------------------------------------------------------- tune-p
def _add_tune_p(sub) -> None:
    p = sub.add_parser("tune-p", help="sweep the A3R exponent P by leave-one-dataset-out MIL (optionally nested)")
    _add_common(p, out=True)
    p.add_argument("--p-grid", nargs="+", default=None, metavar="P",
                   help="P values (default the paper's 1/4 1/8 1/16 1/32 1/64 1/128 1/256 0)")
    _add_window(p)
    p.add_argument("--nested", action="store_true",
                   help="also estimate the MIL of tuned P honestly by nested leave-one-dataset-out")
    _add_time_model(p)
    p.set_defaults(func=_run_tune_p)


def _run_tune_p(args) -> None:
    from algorank.evaluation.meta.benchmark import PAPER_P_GRID, p_sweep, tune_p_nested
    from algorank.recommender.average_ranking import format_p
    from algorank.recommender.registry import make_ar, parse_p

    _check_numbers(args)
    grid = PAPER_P_GRID if args.p_grid is None else [parse_p(x) for item in args.p_grid for x in item.split(",") if x.strip()]
    out = _check_out(args)
    meta, _, _, words = _time_model(args, _load_meta(args))
    sweep = p_sweep(meta, make_strategy=make_ar, grid=grid, tmin=args.tmin, tmax=args.tmax)
    nested = None
    if args.nested:
        nested = tune_p_nested(meta, make_strategy=make_ar, grid=grid, tmin=sweep.tmin, tmax=sweep.tmax,
                               progress=not args.quiet and sys.stderr.isatty())
    table = sweep.table()
    files = ("p_sweep.csv", "mil_boxplots.png", "loss_time.png")

    def write(folder):
        import matplotlib

        matplotlib.use("Agg")
        from algorank.evaluation.meta.plots import plot_loss_time, plot_mil_boxplots
        from algorank.metadata.io import atomic_path

        target = folder / files[0]
        with atomic_path(target) as tmp:
            table.to_csv(tmp, index=False, float_format="%.10g")
        return [str(target), _save_figure(plot_mil_boxplots(sweep), folder / files[1]),
                _save_figure(plot_loss_time(sweep.results), folder / files[2])]

    written = [str(out / f) for f in files] if out else []  # printed first, then written
    if args.json:
        d = {"tmin": sweep.tmin, "tmax": sweep.tmax, "n_datasets": len(sweep.results[0].datasets),
             "results": [{"p": float(r.p), "p_label": format_p(r.p), "mean_mil": float(r.mean_mil),
                          "median_mil": float(r.median_mil), "mean_spearman": float(r.mean_spearman)}
                         for r in table.itertuples()],
             "best_p": sweep.best_p, "time_model": words, "written": written}
        if nested is not None:
            d["nested"] = {"mean_mil": nested.mean_mil, "median_mil": nested.median_mil,
                           "p_counts": {format_p(p): c for p, c in nested.p_counts().items()}}
        _emit_json(d)
        if out:
            _write_outputs(out, [write])
        return
    lines = [f"AR-A3R P sweep, leave-one-dataset-out on {len(sweep.results[0].datasets)} datasets ({words}), "
             f"MIL window tmin = {sweep.tmin:g} s, tmax = {sweep.tmax:g} s",
             f"{'P':>8}{'mean MIL':>10}{'median MIL':>12}{'Spearman':>10}"]
    for r in table.itertuples():
        mark = "  <- best" if r.p == sweep.best_p else ""
        lines.append(f"{format_p(r.p):>8}{r.mean_mil:>10.3f}{r.median_mil:>12.3f}{r.mean_spearman:>10.3f}{mark}")
    lines.append(f"best P (chosen on all datasets): {format_p(sweep.best_p)}")
    if nested is not None:
        counts = ", ".join(f"{format_p(p)}: {c}" for p, c in nested.p_counts().items() if c)
        lines.append(f"nested leave-one-dataset-out (P tuned without the scored dataset): mean MIL "
                     f"{nested.mean_mil:.3f}, median {nested.median_mil:.3f}; P chosen {counts}")
    _emit("\n".join(lines))
    if out:
        sys.stdout.flush()
        _emit("\n".join(f"wrote {w}" for w in _write_outputs(out, [write])))


# ---------------------------------------------------------------- evaluate
def _add_evaluate(sub) -> None:
    p = sub.add_parser("evaluate", help="run learners on a dataset with repeated cross-validation (resumable)")
    p.add_argument("dataset", metavar="DATASET", help="file (.arff/.csv/.parquet), sklearn:NAME or openml:ID")
    p.add_argument("--target", metavar="NAME", help="target attribute (default: class/target, else the last nominal)")
    p.add_argument("--learners", nargs="+", metavar="ID",
                   help="portfolio ids/short names or import paths with JSON params (default: the whole portfolio)")
    p.add_argument("--cv", type=int, default=5, metavar="K", help="folds per repetition (default 5)")
    p.add_argument("--repeats", metavar="N|auto", help="repetitions (fixed), the maximum (rank/ks), or auto")
    p.add_argument("--stop", choices=["rank", "ks", "fixed"], help="stopping rule (default fixed; rank with auto)")
    p.add_argument("--threshold", type=float, help="rank: Spearman threshold (1-1e-4); ks: D threshold (0.1)")
    p.add_argument("--min-repeats", type=int, metavar="N", help="adaptive rules: minimum repetitions")
    p.add_argument("--max-repeats", type=int, metavar="N", help="adaptive rules: maximum repetitions (50)")
    p.add_argument("--scheme", choices=["cv", "5x2", "holdout", "bootstrap", "loo"], default="cv")
    p.add_argument("--timeout", type=float, metavar="S", help="seconds per fold fit+predict (killed beyond)")
    p.add_argument("--n-jobs", type=int, default=1, metavar="N", help="joblib workers (-1: all cores)")
    p.add_argument("--store", metavar="PATH", help="SQLite fold store (default ~/.cache/algorank/evaluate.sqlite)")
    p.add_argument("--no-store", action="store_true", help="keep nothing on disk (no resume)")
    p.add_argument("--seed", type=int, default=0, metavar="N", help="random_state of splits and learners")
    p.add_argument("--allow-module", action="append", default=[], metavar="PACKAGE",
                   help="also run estimator classes of this package named by learner ids (default: scikit-learn "
                        "only; learner ids are data and never run code outside the allowed packages)")
    _add_common(p, meta=False, out=True)
    p.set_defaults(func=_run_evaluate)


def _run_evaluate(args) -> None:
    from algorank.evaluation.cv.datasets import load_dataset
    from algorank.evaluation.cv.evaluator import Evaluator, default_store_path, parse_repeats, write_runs
    from algorank.metadata.learners import learner_ids

    _check_numbers(args, cv=args.scheme == "cv")
    repeats, stop = parse_repeats(args.repeats, args.stop)
    out = _check_out(args)
    store = None if args.no_store else (args.store or default_store_path())
    evaluator = Evaluator(scheme=args.scheme, cv=args.cv, repeats=repeats, stop=stop, threshold=args.threshold,
                          min_repeats=args.min_repeats, max_repeats=args.max_repeats, timeout=args.timeout,
                          n_jobs=args.n_jobs, store=store, random_state=args.seed, progress=not args.quiet,
                          allow_modules=args.allow_module)
    dataset = load_dataset(args.dataset, target=args.target)
    result = evaluator.evaluate(dataset, args.learners or learner_ids())
    files = ("runs.csv", "runs.datasets.csv", "summary.csv")
    written = [str(out / f) for f in files] if out else []  # printed first, then written: nothing is lost

    def write(folder):
        return write_runs(result, folder)

    if args.json:
        d = result.to_dict()
        keep = ("accuracy_mean", "accuracy_median", "accuracy_std", "interval_low", "interval_high", "skewness",
                "repetitions", "fit_time_mean", "predict_time_mean", "auc_mean", "log_loss_mean",
                "balanced_accuracy_mean", "model_bytes_mean", "status", "message", "stop_reason")
        d["learners"] = {k: {f: v[f] for f in keep} for k, v in d["learners"].items()}
        d["written"] = written
        _emit_json(d)
        if out:
            _write_outputs(out, [write])
        return
    from algorank.metadata.learners import short_name

    s = result.summary
    lines = [f"{dataset.name}: {dataset.meta_features['n_instances']} rows, {dataset.meta_features['n_features']} "
             f"features, {dataset.meta_features['n_classes']} classes (target {dataset.target}); scheme "
             f"{args.scheme}, stop {stop}",
             f"{'learner':<28}{'acc mean':>9}{'median':>8}{'95% interval':>16}{'reps':>6}{'fit time':>10}  status"]
    for lid, r in s.sort_values("accuracy_mean", ascending=False, na_position="last").iterrows():
        name = short_name(lid) if len(short_name(lid)) <= 27 else short_name(lid)[:24] + "..."
        interval = f"[{r.interval_low:.3f}, {r.interval_high:.3f}]" if r.repetitions else ""
        lines.append(f"{name:<28}{r.accuracy_mean:>9.4f}{r.accuracy_median:>8.4f}{interval:>16}{r.repetitions:>6d}"
                     f"{_fmt_seconds(r.fit_time_mean):>10}  {r.status}")
    for f in result.failures:
        lines.append(f"failed: {short_name(f['learner'])}: {f['status']}: {f['message']}")
    if result.store:
        lines.append(f"store: {result.store}")
    _emit("\n".join(lines))
    if out:
        sys.stdout.flush()
        _emit("\n".join(f"wrote {w}" for w in _write_outputs(out, [write])))


# ---------------------------------------------------------------- recommend
def _add_recommend(sub) -> None:
    p = sub.add_parser("recommend", help="rank learners for a dataset from the meta-data, then really run them")
    p.add_argument("dataset", metavar="DATASET", help="file (.arff/.csv/.parquet), sklearn:NAME or openml:ID")
    p.add_argument("--target", metavar="NAME", help="target column (default: class/target, else the last nominal)")
    p.add_argument("--strategy", default=None, metavar="SPEC",
                   help="ar:p=1/16 (default), ar:p=0, at:p=1/16,sim=tested, lt:h=inf, random, ...")
    p.add_argument("--budget", type=float, default=60.0, metavar="SECONDS", help="wall-clock budget (default 60)")
    p.add_argument("--top", type=int, default=None, metavar="K", help="test at most K learners")
    p.add_argument("--dry-run", action="store_true", help="only print the planned order")
    p.add_argument("--exclude-dataset", action="append", default=[], metavar="ID",
                   help="leave this prior dataset out of the meta-data (repeatable)")
    p.add_argument("--cv", type=int, default=5, metavar="K", help="folds of the live stratified CV (default 5)")
    p.add_argument("--seed", type=int, default=0, metavar="N", help="seed of the live evaluation")
    p.add_argument("--time-model", choices=("live", "fit"), default="live",
                   help="rank with the time of a live test, CV x (fit+predict) + overhead (default; fit only when "
                        "the meta-data has no predict times), or the recorded fit time")
    p.add_argument("--time-overhead", type=float, default=None, metavar="SECONDS",
                   help="seconds a live test costs on top of its fits and predictions (default: the calibrated "
                        "constant)")
    p.add_argument("--allow-module", action="append", default=[], metavar="PACKAGE",
                   help="also run estimator classes of this package named by learner ids (default: scikit-learn "
                        "only; learner ids are data and never run code outside the allowed packages)")
    _add_common(p, out=True, meta_default="uci")
    p.set_defaults(func=_run_recommend)


def _process_start() -> float:
    """:func:`time.perf_counter` value of this process's start (Linux; else now): the budget counts from it."""
    import os

    now = time.perf_counter()
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            start_ticks = float(f.read().rpartition(")")[2].split()[19])  # field 22, starttime
        with open("/proc/uptime", encoding="ascii") as f:
            uptime = float(f.read().split()[0])
        age = uptime - start_ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return now
    return now - min(max(age, 0.0), 60.0)  # a clock oddity never eats more than a minute


def _fmt_acc(a: float) -> str:
    return "n/a" if a != a else f"{a:.4f}"


def _run_recommend(args) -> None:
    from algorank.recommender.live.recommend import DEFAULT_STRATEGY, recommend
    from algorank.metadata.learners import short_name

    talk = not args.quiet
    _check_numbers(args)
    out = _check_out(args)
    plan_text: list[str] = []

    def on_plan(plan):
        lines = [f"planned order ({len(plan)} learners; expected accuracy and test time from the most similar "
                 f"prior datasets)",
                 f"{'#':>3}  {'learner':<20}{'exp. accuracy':>14}{'exp. time':>12}"]
        lines += [f"{i:>3}  {short_name(t.learner):<20}{_fmt_acc(t.expected_accuracy):>14}"
                  f"{_fmt_seconds(t.expected_seconds):>12}" for i, t in enumerate(plan, 1)]
        plan_text.append("\n".join(lines))
        if not args.json:
            _emit(plan_text[-1])
            if not args.dry_run:
                _emit("")
            sys.stdout.flush()

    def on_start(learner):
        if talk:
            sys.stderr.write(f"testing {short_name(learner)} ...\n")
            sys.stderr.flush()

    cum = [0.0]

    def on_observation(o):
        cum[0] += o.seconds
        if talk:
            res = _fmt_acc(o.accuracy) if o.status == "ok" else f"{o.status}: {o.message}"
            sys.stderr.write(f"  {short_name(o.learner):<20}{res:>10}  {_fmt_seconds(o.seconds):>9}"
                             f"  (total {_fmt_seconds(cum[0])})\n")
            sys.stderr.flush()

    result = recommend(args.dataset, strategy=args.strategy or DEFAULT_STRATEGY, meta=_load_meta(args),
                       budget_seconds=args.budget, top=args.top, exclude_datasets=args.exclude_dataset,
                       target=args.target, cv=args.cv, random_state=args.seed, dry_run=args.dry_run,
                       time_model=args.time_model, time_overhead=args.time_overhead, on_plan=on_plan,
                       on_start=None if args.dry_run else on_start, on_observation=on_observation,
                       allow_modules=args.allow_module, started=args.started)
    if out is None or result.trace is None:
        out = None
    files = ("trace.csv", "accuracy_vs_time.png")

    def write(folder):
        import matplotlib

        matplotlib.use("Agg")
        from algorank.recommender.live.plot import plot_recommendation
        from algorank.metadata.io import atomic_path

        with atomic_path(folder / files[0]) as tmp:
            result.trace.to_frame().to_csv(tmp, index=False)
        return [str(folder / files[0]), _save_figure(plot_recommendation(result.trace), folder / files[1])]

    interrupted = 130 if result.stop_reason == "interrupted" else 0  # partial results are shown, then exit 130
    if args.json:
        d = result.to_dict()
        d["written"] = [str(out / f) for f in files] if out else []  # printed first, then written
        _emit_json(d)
        if out:
            _write_outputs(out, [write])
        return interrupted
    if result.trace is None:
        return 0
    lines = [f"results on {result.dataset} ({args.cv}-fold stratified CV, strategy {result.strategy}, "
             f"test time model {result.time_model})",
             f"{'#':>3}  {'learner':<20}{'accuracy':>10}{'time':>11}{'total':>11}  status"]
    for i, r in enumerate(result.trace.to_records(), 1):
        lines.append(f"{i:>3}  {short_name(r['learner']):<20}{_fmt_acc(r['accuracy']):>10}"
                     f"{_fmt_seconds(r['seconds']):>11}{_fmt_seconds(r['cumulative_seconds']):>11}  {r['status']}")
    lines += ["", result.summary]
    _emit("\n".join(lines))
    if out:
        sys.stdout.flush()
        _emit("\n".join(f"wrote {w}" for w in _write_outputs(out, [write])))
    return interrupted


# ---------------------------------------------------------------- wiring
# Each entry adds one subcommand; keep one function per subcommand above.
_COMMANDS: list[Callable] = [
    _add_info,
    _add_snapshot,
    _add_pull,
    _add_multitest,
    _add_rank,
    _add_benchmark,
    _add_tune_p,
    _add_evaluate,
    _add_recommend,
]


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser (one subcommand per entry of ``_COMMANDS``)."""
    parser = _Parser(prog="algorank", description="Which learners should I try first on this dataset?")
    parser.add_argument("--verbose", "-v", action="store_true", help="log debug messages")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND")
    for add in _COMMANDS:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (0 ok, 1 failure, 2 bad input, 130 interrupted).

    Called without ``argv`` it is the process's command line: budgets count from the start of
    the process, and an interrupted command exits at once.  Called with ``argv`` (tests, other
    programs) budgets count from the call.
    """
    started = _process_start() if argv is None else time.perf_counter()
    try:
        args = build_parser().parse_args(argv)
        args.started = started
        level = logging.DEBUG if args.verbose else (logging.ERROR if getattr(args, "quiet", False) else logging.WARNING)
        logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
        code = int(args.func(args) or 0)  # a command may return its own code (130: interrupted, results kept)
        return _exit_now(code) if code == 130 and argv is None else code
    except InputError as exc:
        sys.stderr.write(f"error: {_one_line(exc)}\n")
        return 2
    except AlgorankError as exc:
        sys.stderr.write(f"error: {_one_line(exc)}\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return _exit_now(130) if argv is None else 130
    except BrokenPipeError:  # e.g. `algorank rank | head`
        return 0


def _exit_now(code: int) -> int:
    """End the process at once after Ctrl-C (the command line only: ``main()`` without ``argv``).

    Python's normal shutdown tears down every module (numpy, pandas, scikit-learn, ...), which
    takes from a few tenths of a second to more than one on a loaded machine; an interrupted
    command must stop within a second.  What matters is done explicitly: output flushed, log
    handlers closed, multiprocessing's finalizers run (the fold server's socket folder removed,
    daemonic children ended); then the process exits.
    """
    import os

    try:
        sys.stdout.flush()
        sys.stderr.flush()
        logging.shutdown()
        from multiprocessing import util

        util._exit_function()
    finally:
        os._exit(code)
    return code  # pragma: no cover - not reached


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return " ".join(text.split())


if __name__ == "__main__":
    sys.exit(main())
