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
from algorank.metadata.learners import short_name, short_names
from algorank.metadata.text import EscapingFormatter, escape, terminal_text

__all__ = ["main", "build_parser"]

logger = logging.getLogger("algorank")


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose usage errors are one line ``error: ...`` and exit 2."""

    def error(self, message: str):  # noqa: D401 - argparse API
        raise InputError(f"{self.prog.split()[-1] if ' ' in self.prog else self.prog}: {message}")


# ---------------------------------------------------------------- rendering helpers
def _emit_json(obj) -> None:
    sys.stdout.write(json_dumps(obj) + "\n")  # JSON escapes every control character itself


def _emit(text: str) -> None:
    sys.stdout.write(terminal_text(text.rstrip("\n")) + "\n")


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
                       help="meta-data file (.parquet or .csv), an ASlib scenario folder, or an embedded set: lcdb, uci, broad, oboe "
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
                f"  with time       {d.cells_with_time}",
                f"  without time    {d.cells_without_time}"
                + ("  (accuracy only: rank --p 0, benchmark --axis tests, multitest --cost none or a learner order)"
                   if d.cells_with_time == 0 else ""),
                f"runs              {d.runs} ({d.failed_runs} failed; median {d.repeats_per_cell_median:g} per cell)",
                f"fit time          {_fmt_seconds(d.fit_time_min)} .. {_fmt_seconds(d.fit_time_max)} "
                f"(median {_fmt_seconds(d.fit_time_median)})" if d.runs_with_time else "fit time          none recorded",
            ]
        )
    )


# ---------------------------------------------------------------- snapshot
def _add_snapshot(sub) -> None:
    p = sub.add_parser("snapshot", help="rebuild the embedded meta-data (LCDB snapshot, OBOE matrices)")
    ssub = p.add_subparsers(dest="snapshot_command", required=True, parser_class=_Parser)
    b = ssub.add_parser("build", help="rebuild the snapshot and the growth table from the lcdb package (pip install 'algorank[lcdb]')")
    b.add_argument("--out", metavar="DIR", help="folder to write to (default: the installed package's data folder)")
    b.add_argument("--lcdb-dir", metavar="DIR", help="folder of LCDB's CSV files (default: the installed lcdb package)")
    b.add_argument("--json", action="store_true", help="print the written record as JSON")
    b.add_argument("--quiet", action="store_true", help="no log messages")
    b.set_defaults(func=_run_snapshot_build)
    o = ssub.add_parser("build-oboe", help="rebuild the embedded 'oboe' set from OBOE's matrices "
                                           "(e.g. ../shared/metadata/oboe)")
    o.add_argument("source", metavar="DIR", help="folder holding OBOE's error_matrix.csv, runtime_matrix.csv, "
                                                 "dataset_sizes.csv, classification.json and LICENSE.txt")
    o.add_argument("--out", metavar="DIR", help="folder to write to (default: the installed package's data folder)")
    o.add_argument("--json", action="store_true", help="print the written record as JSON")
    o.add_argument("--quiet", action="store_true", help="no log messages")
    o.set_defaults(func=_run_snapshot_build_oboe)


def _run_snapshot_build_oboe(args) -> None:
    from algorank.metadata.oboe import build_oboe

    record = build_oboe(args.source, args.out)
    if args.json:
        _emit_json(record)
    else:
        _emit("\n".join(f"{k:<15}{v}" for k, v in record.items() if k != "inputs"))


def _run_snapshot_build(args) -> None:
    from algorank.metadata.growth import build_growth
    from algorank.metadata.snapshot import build_snapshot

    record = build_snapshot(args.out, lcdb_dir=args.lcdb_dir)
    growth = build_growth(args.out, lcdb_dir=args.lcdb_dir)
    if args.json:
        _emit_json({**record, "growth": growth})
    else:
        _emit("\n".join(f"{k:<10}{v}" for k, v in record.items()))
        _emit(f"{'growth':<10}{growth['file']} ({growth['learners']} learners, {growth['excluded']})")


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


def _pull_options(args) -> dict:
    """The keyword arguments of :func:`algorank.api.pull` from ``algorank pull``'s arguments."""
    from algorank.metadata.openml_http import DEFAULT_SERVER, RetryPolicy

    from algorank.metadata.checks import check_url

    if args.server is not None:
        check_url(args.server, name="--server")
    suite = int(args.suite) if args.suite is not None and args.suite.isdigit() else args.suite
    return dict(suite=suite, tasks=args.tasks, tag=args.tag, flows=args.flows, top_flows=args.top_flows,
                measure=args.measure, runtime_measure=args.runtime_measure, cache_dir=args.cache,
                offline=args.offline, server=args.server or DEFAULT_SERVER, page_size=args.page_size,
                retry=RetryPolicy(attempts=args.retries, backoff=args.backoff, timeout=args.timeout),
                out=args.out, progress=not args.quiet)


def _render_pull(c) -> str:
    """The coverage report of a pull as a table (at most 20 gaps listed)."""
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
    return "\n".join(lines)


def _run_pull(args) -> None:
    from algorank.api import pull
    from algorank.metadata.openml_http import OpenMLUnreachable
    from algorank.metadata.openml_pull import OfflineCacheMiss

    try:
        result = pull(**_pull_options(args))
    except OfflineCacheMiss as exc:  # the library names its parameters; say which flag that is
        raise InputError(f"{exc} (run it again without --offline)") from exc
    except OpenMLUnreachable as exc:
        raise InputError(f"{exc} (--offline, --cache DIR)") from exc
    if args.json:
        _emit_json(result.coverage.to_dict())
        return
    _emit(_render_pull(result.coverage))


# ---------------------------------------------------------------- multitest
def _add_multitest(sub) -> None:
    p = sub.add_parser("multitest", help="Multi2Test: cost-conscious learner order with statistics (Ulas et al. 2012)")
    _add_common(p, out=True)
    p.add_argument("--learners", nargs="+", metavar="ID", help="learners to compare (ids or short names, "
                   "space- or comma-separated; default: all)")
    p.add_argument("--cost", default="fit_time", metavar="KIND|LIST",
                   help="cost prior: fit_time (default), fit_predict_time, model_bytes, none (equal costs: "
                        "accuracy-only meta-data), or a comma-separated learner order, cheapest first")
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
    p.add_argument("--missing", choices=("auto", "drop"), default="auto",
                   help="datasets where some learner has no runs: auto (default) uses them with Durbin or "
                        "Skillings-Mack; drop keeps only complete datasets and Friedman")
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
                     progress=not args.quiet, missing=args.missing)

    def cd_diagram(folder):
        import matplotlib

        matplotlib.use("Agg")
        from algorank.evaluation.stats.cd_plot import plot_cd

        return [_save_figure(plot_cd(res, label_formatter=short_name), folder / "cd_diagram.png")]

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
             f"omnibus: {res.omnibus_method} chi2 = {fr.statistic:.2f}, p = {fr.pvalue:.3g}"
             + (f", Kendall's W = {fr.kendall_w:.3f}" if fr.kendall_w == fr.kendall_w else "")
             + "; post hoc: " + ("none" if res.posthoc is None else res.posthoc.method),
             "",
             f"{'#':>3}  {'learner':<22}{'avg rank':>9}{'avg cost':>10}  reason for the next step"]
    ranks = res.average_ranks
    cost = d["average_cost"]
    for i, l in enumerate(res.order):
        rec = res.reasons[i] if i < len(res.reasons) else None
        reason = "" if rec is None else (
            f"significantly more accurate than {short_name(rec['second'])}" if rec["reason"] == "significant"
            else f"not significantly different from {short_name(rec['second'])}; cheaper" if rec["reason"] == "cost"
            else rec["text"])
        c = cost.get(l)
        lines.append(f"{i + 1:>3}  {short_name(l):<22}{ranks[l]:>9.2f}{'' if c is None else f'{c:>10.3f}':>10}  {reason}")
    for note in res.notes:
        lines.append(f"note: {note}")
    _emit("\n".join(lines))
    if out:
        sys.stdout.flush()
        _emit("\n".join(f"wrote {w}" for w in _write_outputs(out, [cd_diagram])))


# ---------------------------------------------------------------- compare
def _add_compare(sub) -> None:
    p = sub.add_parser("compare", help="compare learners over datasets: Friedman / Skillings-Mack, post hoc, effect "
                                       "sizes, intervals, Bayesian signed-rank")
    _add_common(p, out=True)
    p.add_argument("--learners", nargs="+", metavar="ID", help="learners to compare (ids or short names; default: all)")
    p.add_argument("--metric", default="accuracy", help="higher-is-better metric column (default accuracy)")
    p.add_argument("--control", metavar="ID", help="compare this learner with every other one instead of all pairs")
    p.add_argument("--posthoc", default="holm", metavar="METHOD",
                   help="all pairs: nemenyi, bonferroni-dunn, holm (default), shaffer, bergmann")
    p.add_argument("--control-method", default="holm", metavar="METHOD",
                   help="with --control: holm (default), hochberg, finner, bonferroni-dunn")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--ci", choices=("t", "bootstrap"), default="t", help="interval of mean differences (default t)")
    p.add_argument("--confidence", type=float, default=0.95, help="interval level (default 0.95)")
    p.add_argument("--rope", type=float, default=0.01, help="Bayesian ROPE half-width (default 0.01 = 1 point)")
    p.add_argument("--bayes-samples", type=int, default=10000, metavar="N", help="Bayesian posterior samples")
    p.add_argument("--no-bayes", action="store_true", help="skip the Bayesian signed-rank test")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap and the Bayesian sampling")
    p.set_defaults(func=_run_compare)


def _run_compare(args) -> None:
    from pathlib import Path

    from algorank.evaluation.stats.compare import compare_learners
    from algorank.recommender.multitest import resolve_learners

    meta = _load_meta(args)
    learners = None
    if args.learners:
        learners = resolve_learners([x for item in args.learners for x in item.split(",") if x.strip()],
                                    meta.learner_ids)
    control = resolve_learners([args.control], meta.learner_ids)[0] if args.control else None
    res = compare_learners(meta, learners=learners, metric=args.metric, control=control, posthoc_method=args.posthoc,
                           control_method=args.control_method, alpha=args.alpha, confidence=args.confidence,
                           ci_method=args.ci, bayes=not args.no_bayes, rope=args.rope, nsamples=args.bayes_samples,
                           random_state=args.seed, progress=not args.quiet)
    written = []
    if args.out:
        import matplotlib

        matplotlib.use("Agg")
        from algorank.evaluation.stats import plot_posterior

        out = Path(args.out)
        if res.posthoc is not None:
            from algorank.evaluation.stats.cd_plot import plot_cd

            written.append(_save_figure(plot_cd(res.posthoc, label_formatter=short_name), out / "cd_diagram.png"))
        for (a, b), bres in list(res.bayes_results.items())[:20]:
            name = f"bayes_{short_name(a)}_vs_{short_name(b)}.png".replace("/", "_")
            written.append(_save_figure(plot_posterior(bres, names=(short_name(a), short_name(b))), out / name))
    if args.json:
        d = res.to_dict()
        d["written"] = written
        _emit_json(d)
        return
    fr = res.omnibus
    lines = [f"{len(res.labels)} learners on {fr.n_datasets} datasets ({res.dropped_datasets} left out), "
             f"metric {res.metric}, alpha = {res.alpha:g}",
             f"omnibus: {res.omnibus_method}: chi2 = {fr.statistic:.2f}, df = {fr.df}, p = {fr.pvalue:.3g}"
             + (f", Kendall's W = {fr.kendall_w:.3f}" if fr.kendall_w == fr.kendall_w else ""),
             "", f"{'learner':<26}{'avg rank':>9}"]
    ranks = res.average_ranks
    for l in sorted(res.labels, key=lambda l: (ranks[l], l)):
        lines.append(f"{short_name(l):<26}{ranks[l]:>9.2f}")
    if res.control is not None:
        c = res.control
        lines += ["", f"control {short_name(c.control)} versus all ({c.method}):"]
        for l, z, pa, sig in zip(c.labels, c.z, c.adjusted, c.significant):
            verdict = ("better than control" if z < 0 else "worse than control") if sig else "not significant"
            lines.append(f"  {short_name(l):<24} z = {z:+.2f}  adjusted p = {pa:.3g}  {verdict}")
    elif res.posthoc is not None:
        ph = res.posthoc
        pairs = ph.significant_pairs()
        lines += ["", f"post hoc ({ph.method}): {len(pairs)} significant pair(s)"]
        lines += [f"  {short_name(a)} > {short_name(b)}" for a, b in pairs[:30]]
    lines += ["", f"pairs a - b: mean difference [{res.pairs[0].get('confidence', args.confidence):.0%} "
                  f"{args.ci}], Wilcoxon p, rank-biserial r, Cliff's delta"
              + ("" if args.no_bayes else f"; Bayesian signed-rank P(a) / P(rope {args.rope:g}) / P(b)")]
    for pr in res.pairs[:60]:
        if "mean_difference" not in pr:
            lines.append(f"  {short_name(pr['a'])} - {short_name(pr['b'])}: {pr.get('note', '')}")
            continue
        text = (f"  {short_name(pr['a'])} - {short_name(pr['b'])}: {pr['mean_difference']:+.4f} "
                f"[{pr['ci_low']:+.4f}, {pr['ci_high']:+.4f}], p = {pr['wilcoxon_pvalue']:.3g}, "
                f"r = {pr['rank_biserial']:+.2f}, delta = {pr['cliffs_delta']:+.2f} ({pr['magnitude']})")
        if "bayes" in pr:
            bz = pr["bayes"]
            text += f"; {bz['p_left']:.3f} / {bz['p_rope']:.3f} / {bz['p_right']:.3f}"
        lines.append(text)
    if len(res.pairs) > 60:
        lines.append(f"  ... {len(res.pairs) - 60} more pairs in --json")
    lines += [f"note: {n}" for n in res.notes]
    lines += [f"wrote {w}" for w in written]
    _emit("\n".join(lines))


# ---------------------------------------------------------------- export
def _add_export(sub) -> None:
    p = sub.add_parser("export", help="write meta-data as an ASlib scenario folder and/or a .parquet/.csv file")
    _add_common(p)
    p.add_argument("--aslib", metavar="DIR", help="write an ASlib scenario (description.txt, algorithm_runs.arff, "
                                                 "feature_values.arff, feature_runstatus.arff, cv.arff)")
    p.add_argument("--scenario-id", metavar="ID", help="ASlib scenario_id (default: the folder name)")
    p.add_argument("--folds", type=int, default=10, metavar="K", help="cv.arff folds when none are recorded (10)")
    p.add_argument("--seed", type=int, default=0, help="seed of that split")
    p.add_argument("--out", metavar="PATH", help="also save the meta-data to a .parquet or .csv file")
    p.set_defaults(func=_run_export)


def _run_export(args) -> None:
    if not args.aslib and not args.out:
        raise InputError("export: give --aslib DIR and/or --out FILE")
    meta = _load_meta(args)
    written = []
    if args.aslib:
        from algorank.metadata.aslib import write_aslib

        written += [str(p) for p in write_aslib(meta, args.aslib, scenario_id=args.scenario_id, folds=args.folds,
                                                  random_state=args.seed)]
    if args.out:
        written.append(str(meta.save(args.out)))
    d = meta.describe()
    if args.json:
        _emit_json({"datasets": d.datasets, "learners": d.learners, "runs": d.runs, "source": d.source,
                    "written": written})
        return
    _emit("\n".join([f"exported {d.datasets} datasets x {d.learners} learners ({d.runs} runs) from {d.source}"]
                     + [f"wrote {w}" for w in written]))


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
        _emit_json({"p": ar.p, "n_datasets": ar.n_datasets_, "order": ar.order_, "short": short_names(ar.order_),
                    "scores": {l: ar.average_rank_[l] for l in ar.order_},
                    "coverage": {l: ar.coverage_[l] for l in ar.order_}})
        return
    lines = [f"AR-A3R ranking, P = {args.p} ({ar.p:g}), {ar.n_datasets_} datasets; score = mean rank (1 = best)",
             f"{'#':>3}  {'learner':<24}{'mean rank':>10}{'datasets':>10}"]
    for i, l in enumerate(ar.order_):
        lines.append(f"{i + 1:>3}  {short_name(l):<24}{ar.average_rank_[l]:>10.2f}{ar.coverage_[l]:>10}")
    _emit("\n".join(lines))


# ---------------------------------------------------------------- benchmark
def _add_metrics_options(p: argparse.ArgumentParser, *, reference_help: str) -> None:
    p.add_argument("--eps", type=float, default=1.0, metavar="POINTS",
                   help="time to reach within POINTS accuracy points of the best learner (default 1)")
    p.add_argument("--budgets", nargs="+", default=None, metavar="S",
                   help="budgets in seconds of test time for the loss at budget and the MIL from the cheapest "
                        "test to the budget (default 1 10 60; space- or comma-separated)")
    p.add_argument("--reference", default=None, metavar="SPEC", help=reference_help)
    p.add_argument("--exclude-dataset", action="append", default=[], metavar="ID",
                   help="leave this dataset out of the (training) meta-data (repeatable)")


def _budgets(args):
    if args.budgets is None:
        return (1.0, 10.0, 60.0)
    out = []
    for item in args.budgets:
        for x in item.split(","):
            if x.strip():
                try:
                    out.append(float(x))
                except ValueError:
                    raise InputError(f"--budgets must be numbers of seconds; got {x!r}") from None
    return out


def _add_benchmark(sub) -> None:
    p = sub.add_parser("benchmark", help="loss-time benchmark of ordering strategies (leave-one-dataset-out, a "
                                         "frozen held-out split, or other test meta-data)")
    _add_common(p, out=True)
    p.add_argument("--strategy", action="append", required=True, metavar="SPEC",
                   help="ei, ar:p=1/16, ar:p=0, at:p=1/16, lt, random:seed=0, fastest, best-accuracy, oracle (repeat for several)")
    p.add_argument("--test-meta", action="append", default=None, metavar="FILE",
                   help="fit the strategies on --meta and score them on every dataset of this meta-data (file or "
                        "embedded name; repeatable); a dataset in both is an error unless --exclude-dataset")
    p.add_argument("--heldout", nargs="?", const=True, default=None, metavar="NAME|FILE",
                   help="train on the rest of --meta and score its frozen held-out datasets (the split of the "
                        "embedded set named by --meta, or a split name, or a file of dataset ids)")
    _add_metrics_options(p, reference_help="strategy the others are compared with (default: the first --strategy; "
                                           "added when not among them)")
    _add_window(p)
    _add_time_model(p)
    p.add_argument("--seed", type=int, default=0, help="seed for strategies with randomness when the spec gives none")
    p.add_argument("--axis", choices=("time", "tests"), default="time",
                   help="x axis: time (loss-time curves, MIL; default) or tests (loss by number of tests, score = "
                        "mean loss over tests 1..K; needs no times)")
    p.add_argument("--max-tests", type=int, default=None, metavar="K",
                   help="--axis tests: K of the mean loss over tests 1..K (default: the number of learners)")
    p.set_defaults(func=_run_benchmark)


def _metrics_lines(report) -> list[str]:
    """The user-facing metrics as text: totals per strategy and the oracle, then the tests against the reference."""
    from algorank.evaluation.meta.user_metrics import budget_label

    bl = [budget_label(b) for b in report.budgets]
    last = bl[-1]
    lines = ["", f"user-facing metrics (time on the benchmark's axis: {report.time_axis}); eps = {report.eps:g} "
                 f"accuracy point(s); losses in points",
             f"{'strategy':<28}{'t_eps sum':>11}{'median':>9}{'not reached':>12}"
             + "".join(f"{'loss@' + b:>11}" for b in bl) + f"{'MIL to ' + last:>12}{'MIL':>8}"]
    for m in (*report.metrics, report.oracle):
        t = m.totals()
        lines.append(f"{m.strategy[:27]:<28}{_fmt_seconds(t['time_to_eps_sum']):>11}"
                     f"{_fmt_seconds(t['time_to_eps_median']):>9}{t['eps_not_reached']:>12d}"
                     + "".join(f"{t[f'loss@{b}_mean']:>11.3f}" for b in bl)
                     + f"{t[f'mil_to_{last}_mean']:>12.3f}{t['mil_mean']:>8.3f}")
    if report.comparisons:
        lines += ["", f"against the reference {report.reference} (lower is better; W/T/L = datasets where the "
                      f"strategy is better / tied / worse; p: sign test, Wilcoxon; gap = share of the reference's "
                      f"distance to the oracle closed)",
                  f"{'strategy':<28}{'metric':<14}{'W/T/L':>11}{'sign p':>9}{'Wilcoxon p':>12}{'gap':>8}"]
        for c in report.comparisons:
            if c.metric.startswith("mil_to_") and c.metric != f"mil_to_{last}":
                continue
            gap = "n/a" if c.gap_closed != c.gap_closed else f"{c.gap_closed:.2f}"
            lines.append(f"{c.strategy[:27]:<28}{c.metric:<14}{f'{c.wins}/{c.ties}/{c.losses}':>11}"
                         f"{c.sign.pvalue:>9.3g}{c.wilcoxon.pvalue:>12.3g}{gap:>8}")
    return lines


def _run_benchmark(args) -> None:
    from algorank.api import benchmark

    _check_numbers(args)
    out = _check_out(args)
    suite = benchmark(args.strategy, meta=args.meta, test_meta=args.test_meta, heldout=args.heldout,
                      exclude_datasets=[x for item in args.exclude_dataset for x in item.split(",") if x.strip()],
                      reference=args.reference, eps=args.eps, budgets=_budgets(args), tmin=args.tmin, tmax=args.tmax,
                      time_model=args.time_model, cv=args.cv, time_overhead=args.time_overhead,
                      random_state=args.seed, progress=not args.quiet and sys.stderr.isatty(),
                      axis=args.axis, max_tests=args.max_tests)
    words = suite.time_model
    files = ["per_dataset.csv"] + (["user_metrics.csv", "user_metrics_tests.csv"] if suite.metrics is not None else [])
    files += (["loss_time.png"] if suite.axis == "time" else []) + ["loss_by_tests.png"]

    def write(folder):
        import matplotlib

        matplotlib.use("Agg")
        from algorank.evaluation.meta.plots import plot_loss_by_tests, plot_loss_time
        from algorank.metadata.io import atomic_path

        written = []
        tables = [("per_dataset.csv", suite.per_dataset_table())]
        if suite.metrics is not None:
            tables += [("user_metrics.csv", suite.metrics.summary_table()),
                       ("user_metrics_tests.csv", suite.metrics.comparison_table())]
        for fname, frame in tables:
            with atomic_path(folder / fname) as tmp:
                frame.to_csv(tmp, index=False, float_format="%.10g")
            written.append(str(folder / fname))
        if suite.axis == "time":
            written.append(_save_figure(plot_loss_time(suite.results), folder / "loss_time.png"))
        written.append(_save_figure(plot_loss_by_tests(suite.results), folder / "loss_by_tests.png"))
        return written

    d = suite.to_dict()
    if args.json:
        d["written"] = [str(out / f) for f in files] if out else []  # printed first, then written
        _emit_json(d)
        if out:
            _write_outputs(out, [write])
        return
    where = (f"leave-one-dataset-out on {len(suite.results[0].datasets)} datasets" if suite.n_train is None
             else suite.setting)
    if suite.axis == "tests":
        lines = [f"{where}, x axis = number of tests; "
                 f"score = mean loss over tests 1..{int(suite.tmax)} (accuracy points)",
                 f"{'strategy':<20}{'mean loss':>10}{'median':>12}{'Spearman':>10}   loss after 1, 2, 3, 5, 10 tests"]
        for r in suite.results:
            curve = r.mean_loss_by_tests()
            at = " ".join(f"{curve[min(i, curve.size - 1)]:.2f}" for i in (1, 2, 3, 5, 10))
            lines.append(f"{r.strategy:<20}{r.mean_mil:>10.3f}{r.median_mil:>12.3f}{r.mean_spearman:>10.3f}   {at}")
    else:
        lines = [f"{where} ({words}), "
                 f"MIL window tmin = {suite.tmin:g} s, tmax = {suite.tmax:g} s (loss in accuracy points)",
                 f"{'strategy':<20}{'mean MIL':>10}{'median MIL':>12}{'Spearman':>10}"]
        for r in suite.results:
            lines.append(f"{r.strategy:<20}{r.mean_mil:>10.3f}{r.median_mil:>12.3f}{r.mean_spearman:>10.3f}")
    if suite.comparison is not None:
        c = suite.comparison
        lines.append(f"{c.test.method}: statistic = {c.test.statistic:.3f}, p = {c.test.pvalue:.3g}"
                     + (f", Kendall's W = {c.kendall_w:.3f}" if c.kendall_w == c.kendall_w else ""))
        lines.append("effect sizes (a - b over datasets): mean difference [95% t interval], rank-biserial r, "
                     "Cliff's delta")
        for e in c.effects:
            if "mean_difference" in e:
                lines.append(f"  {e['a']} - {e['b']}: {e['mean_difference']:+.3f} [{e['ci_low']:+.3f}, "
                             f"{e['ci_high']:+.3f}], r = {e['rank_biserial']:+.2f}, delta = {e['cliffs_delta']:+.2f} "
                             f"({e['magnitude']})")
        if c.posthoc is not None:
            lines.append(f"post hoc ({c.posthoc.method}), significant pairs at alpha = {c.posthoc.alpha:g}:")
            k = len(c.names)
            pairs = [f"  {c.names[i]} vs {c.names[j]}: p = {c.posthoc.adjusted[i, j]:.3g}"
                     for i in range(k) for j in range(i + 1, k) if c.posthoc.significant[i, j]]
            lines.extend(pairs or ["  none"])
    if suite.metrics is not None:
        lines += _metrics_lines(suite.metrics)
    if any(r.strategy.strip().startswith("oracle") for r in suite.results):
        lines.append("note: 'oracle' sees the held-out dataset; it is a lower bound, not a usable strategy")
    _emit("\n".join(lines))
    if out:
        sys.stdout.flush()
        _emit("\n".join(f"wrote {w}" for w in _write_outputs(out, [write])))


# ---------------------------------------------------------------- tune-p
def _add_tune_p(sub) -> None:
    p = sub.add_parser("tune-p", help="sweep the A3R exponent P (or the cost exponent of at, lt, ei) by "
                                      "leave-one-dataset-out MIL (optionally nested)")
    _add_common(p, out=True)
    p.add_argument("--strategy", default="ar", metavar="FAMILY",
                   help="whose P is swept: ar (default), at, lt or ei, other knobs fixed after a colon "
                        "(lt:h=inf, ei:h=inf)")
    p.add_argument("--p-grid", nargs="+", default=None, metavar="P",
                   help="P values (default the paper's 1/4 1/8 1/16 1/32 1/64 1/128 1/256 0; for ei 2 1.5 1 1/2 1/4 0)")
    _add_window(p)
    p.add_argument("--nested", action="store_true",
                   help="also estimate the MIL of tuned P honestly by nested leave-one-dataset-out")
    p.add_argument("--exclude-heldout", nargs="?", const=True, default=None, metavar="NAME|FILE",
                   help="leave the frozen held-out split out of all tuning (the split of the embedded set named by "
                        "--meta, or a split name, or a file of dataset ids)")
    _add_metrics_options(p, reference_help="P the others are compared with in the user-facing metrics "
                                           "(default: the first of the grid)")
    _add_time_model(p)
    p.set_defaults(func=_run_tune_p)


def _run_tune_p(args) -> None:
    from algorank.api import tune_p
    from algorank.recommender.average_ranking import format_p

    _check_numbers(args)
    out = _check_out(args)
    grid = None if args.p_grid is None else [x for item in args.p_grid for x in item.split(",") if x.strip()]
    res = tune_p(args.meta, strategy=args.strategy, grid=grid, nested=args.nested, tmin=args.tmin, tmax=args.tmax,
                 time_model=args.time_model, cv=args.cv, time_overhead=args.time_overhead,
                 exclude_heldout=args.exclude_heldout,
                 exclude_datasets=[x for item in args.exclude_dataset for x in item.split(",") if x.strip()],
                 reference=args.reference, eps=args.eps, budgets=_budgets(args),
                 progress=not args.quiet and sys.stderr.isatty())
    sweep, nested, words = res.sweep, res.nested, res.time_model
    table = sweep.table()
    files = ("p_sweep.csv", "mil_boxplots.png", "loss_time.png")

    def write(folder):
        import matplotlib

        matplotlib.use("Agg")
        from algorank.evaluation.meta.plots import plot_loss_time, plot_mil_boxplots
        from algorank.metadata.io import atomic_path

        target = folder / files[0]
        with atomic_path(target) as tmp:
            res.to_frame().to_csv(tmp, index=False, float_format="%.10g")
        return [str(target), _save_figure(plot_mil_boxplots(sweep), folder / files[1]),
                _save_figure(plot_loss_time(sweep.results), folder / files[2])]

    if args.json:
        d = res.to_dict()
        d["written"] = [str(out / f) for f in files] if out else []  # printed first, then written
        _emit_json(d)
        if out:
            _write_outputs(out, [write])
        return
    label = "AR-A3R" if res.strategy == "ar" else f"{args.strategy}"
    lines = [f"{label} P sweep, leave-one-dataset-out on {len(sweep.results[0].datasets)} datasets ({words}), "
             f"MIL window tmin = {sweep.tmin:g} s, tmax = {sweep.tmax:g} s"]
    if res.excluded:
        lines.append(f"left out of all tuning: {len(res.excluded)} datasets (held-out split / --exclude-dataset)")
    lines.append(f"{'P':>8}{'mean MIL':>10}{'median MIL':>12}{'Spearman':>10}")
    for r in table.itertuples():
        mark = "  <- best" if r.p == sweep.best_p else ""
        lines.append(f"{format_p(r.p):>8}{r.mean_mil:>10.3f}{r.median_mil:>12.3f}{r.mean_spearman:>10.3f}{mark}")
    lines.append(f"best P (chosen on all datasets): {format_p(sweep.best_p)}")
    if nested is not None:
        counts = ", ".join(f"{format_p(p)}: {c}" for p, c in nested.p_counts().items() if c)
        lines.append(f"nested leave-one-dataset-out (P tuned without the scored dataset): mean MIL "
                     f"{nested.mean_mil:.3f}, median {nested.median_mil:.3f}; P chosen {counts}")
    if res.metrics is not None:
        lines += _metrics_lines(res.metrics)
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


def parse_repeats(text: str | int | None, stop: str | None) -> tuple[int | None, str]:
    """Interpret ``--repeats N|auto`` together with ``--stop`` -> ``(repeats, stop)`` of the Evaluator.

    ``auto`` means adaptive: ``stop`` defaults to ``rank`` (``fixed`` with ``auto`` is
    an error).  A number with ``fixed`` (the default) is the number of repetitions;
    with ``rank``/``ks`` it is the maximum.
    """
    if text is None:
        return None, stop or "fixed"
    if isinstance(text, str) and text.strip().lower() == "auto":
        if stop == "fixed":
            raise InputError("--repeats auto needs an adaptive --stop (rank or ks), not fixed")
        return None, stop or "rank"
    try:
        n = int(str(text))
    except ValueError:
        n = 0
    if n < 1:
        raise InputError(f"--repeats must be a positive integer or 'auto', got {text!r}")
    return n, stop or "fixed"


def default_store_path():
    """Default fold store of ``algorank evaluate``: ``$ALGORANK_STORE`` or ``~/.cache/algorank/evaluate.sqlite``."""
    import os
    from pathlib import Path

    env = os.environ.get("ALGORANK_STORE")
    if env:
        return Path(env)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "algorank" / "evaluate.sqlite"


def _run_evaluate(args) -> None:
    from algorank.evaluation.cv.datasets import load_dataset
    from algorank.evaluation.cv.evaluator import Evaluator, write_runs
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
        keep = ("short", "accuracy_mean", "accuracy_median", "accuracy_std", "interval_low", "interval_high", "skewness",
                "repetitions", "fit_time_mean", "predict_time_mean", "auc_mean", "log_loss_mean",
                "balanced_accuracy_mean", "model_bytes_mean", "status", "message", "stop_reason")
        d["learners"] = {k: {f: v[f] for f in keep} for k, v in d["learners"].items()}
        d["written"] = written
        _emit_json(d)
        if out:
            _write_outputs(out, [write])
        return
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


# ---------------------------------------------------------------- build-meta
def _add_build_meta(sub) -> None:
    p = sub.add_parser("build-meta", help="build the broad evaluator meta-data from ../shared/datasets "
                       "(one file per dataset, resumable), or assemble the embedded 'broad' set")
    p.add_argument("--shared", metavar="DIR", help="folder with datasets/MANIFEST.csv "
                   "(default $ALGORANK_SHARED, else ../shared)")
    p.add_argument("--out", metavar="DIR", help="per-dataset files (default metadata/data/broad); "
                   "datasets whose file exists are skipped")
    p.add_argument("--cap", type=float, default=120.0, metavar="S", help="seconds per test (a learner's folds); "
                   "a test beyond it is killed and recorded as 'timeout' with the cap as a lower bound (120)")
    p.add_argument("--folds", type=int, default=5, metavar="K", help="stratified CV folds (5)")
    p.add_argument("--n-jobs", type=int, default=1, metavar="N", help="datasets built in parallel (-1: all cores)")
    p.add_argument("--datasets", nargs="+", metavar="ID", help="build only these dataset ids (default: the rule)")
    p.add_argument("--no-calibrate", action="store_true", help="skip the machine-speed calibration per dataset")
    p.add_argument("--list", action="store_true", help="print the selected datasets, cheapest first, and exit")
    p.add_argument("--assemble", action="store_true", help="do not build: concatenate the files under --out into "
                   "broad_evaluator.parquet + .json (the embedded 'broad' set)")
    p.add_argument("--assemble-to", metavar="DIR", help="--assemble: where to write (default metadata/data)")
    p.add_argument("--json", action="store_true", help="print exactly one JSON object")
    p.add_argument("--quiet", action="store_true", help="no progress bar or log messages")
    p.set_defaults(func=_run_build_meta)


def _run_build_meta(args) -> None:
    from algorank.evaluation.cv import metabuild

    if not args.quiet:  # one log line per finished dataset (the build runs for hours, often under nohup)
        logging.getLogger(metabuild.__name__).setLevel(logging.INFO)
    if args.list:
        items = metabuild.select_datasets(args.shared, only=args.datasets)
        if args.json:
            _emit_json([vars(i) | {"source": i.source} for i in items])
            return
        w = max([7] + [len(i.dataset) for i in items]) + 2
        f = max([6] + [len(i.family) for i in items]) + 2
        lines = [f"{'dataset':<{w}}{'collection':<12}{'kind':<13}{'family':<{f}}{'rows':>7}{'features':>10}"]
        lines += [f"{i.dataset:<{w}}{i.collection:<12}{i.kind:<13}{i.family:<{f}}{i.instances:>7}{i.features:>10}"
                  for i in items]
        lines.append(f"{len(items)} datasets")
        _emit("\n".join(lines))
        return
    if args.assemble:
        record = metabuild.assemble_broad(args.out, args.assemble_to, shared_dir=args.shared)
        if args.json:
            _emit_json(record)
            return
        keys = ("file", "sha256", "bytes", "datasets", "learners", "cells", "runs", "ok_runs", "error_runs",
                "timeout_runs", "timeout_tests", "collections", "complete")
        lines = [f"{k:<14}{record[k]}" for k in keys]
        if record["missing"]:
            lines.append(f"{'missing':<14}{len(record['missing'])}: {', '.join(record['missing'][:10])}"
                         f"{' ...' if len(record['missing']) > 10 else ''}")
        _emit("\n".join(lines))
        return
    summary = metabuild.build_meta(only=args.datasets, shared_dir=args.shared, out_dir=args.out, cap=args.cap,
                                   folds=args.folds, n_jobs=args.n_jobs, calibrate=not args.no_calibrate,
                                   progress=not args.quiet)
    if args.json:
        _emit_json(summary.to_dict())
        return
    lines = [f"built {len(summary.built)}, skipped {len(summary.skipped)} (already built), failed "
             f"{len(summary.failed)} of {summary.selected} datasets in {_fmt_seconds(summary.wall_s)}; "
             f"files in {summary.out_dir}"]
    lines += [f"failed: {f['dataset']}: {f['message']}" for f in summary.failed]
    _emit("\n".join(lines))


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
    p.add_argument("--n-jobs", type=int, default=1, metavar="N",
                   help="tests run at once (default 1; -1: one per CPU), in local worker processes")
    _add_common(p, out=True, meta_default="broad")
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
    from algorank.metadata.metric import METRIC_LABELS, primary_metric

    talk = not args.quiet
    _check_numbers(args)
    out = _check_out(args)
    plan_text: list[str] = []
    meta = _load_meta(args)
    metric = primary_metric(meta)  # balanced accuracy for --meta oboe: the score it ranks by, measured live too
    label = "bal. acc." if metric == "balanced_accuracy" else METRIC_LABELS[metric]
    width = [20]  # learner column: OBOE's configurations have longer names than the portfolio

    def on_plan(plan):
        width[0] = max([20] + [len(short_name(t.learner)) + 2 for t in plan])
        w = width[0]
        modelled = any(t.accuracy_low == t.accuracy_low for t in plan)
        source = ("the strategy's models for this dataset" if modelled else "the most similar prior datasets")
        lines = [f"planned order ({len(plan)} learners; expected {METRIC_LABELS[metric]} and test time from {source})",
                 f"{'#':>3}  {'learner':<{w}}{'exp. ' + label:>14}{'exp. time':>12}"
                 + (f"{'90% interval':>18}{'p(fail)':>9}" if modelled else "")]
        for i, t in enumerate(plan, 1):
            line = (f"{i:>3}  {short_name(t.learner):<{w}}{_fmt_acc(t.expected_accuracy):>14}"
                    f"{_fmt_seconds(t.expected_seconds):>12}")
            if modelled:
                line += f"{'[' + _fmt_acc(t.accuracy_low) + ', ' + _fmt_acc(t.accuracy_high) + ']':>18}"
                line += f"{t.fail_probability:>9.2f}"
            lines.append(line)
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
            sys.stderr.write(f"  {short_name(o.learner):<{width[0]}}{res:>10}  {_fmt_seconds(o.seconds):>9}"
                             f"  (total {_fmt_seconds(cum[0])})\n")
            sys.stderr.flush()

    result = recommend(args.dataset, strategy=args.strategy or DEFAULT_STRATEGY, meta=meta,
                       budget_seconds=args.budget, top=args.top, exclude_datasets=args.exclude_dataset,
                       target=args.target, cv=args.cv, random_state=args.seed, dry_run=args.dry_run,
                       time_model=args.time_model, time_overhead=args.time_overhead, on_plan=on_plan,
                       on_start=None if args.dry_run else on_start, on_observation=on_observation,
                       allow_modules=args.allow_module, metric=metric, started=args.started, n_jobs=args.n_jobs)
    if out is None or result.trace is None:
        out = None
    files = ("trace.csv", "accuracy_vs_time.png", "predicted_vs_realised.png")

    def write(folder):
        import matplotlib

        matplotlib.use("Agg")
        from algorank.recommender.live.plot import plot_predicted_vs_realised, plot_recommendation
        from algorank.metadata.io import atomic_path

        with atomic_path(folder / files[0]) as tmp:
            result.trace.to_frame().to_csv(tmp, index=False)
        return [str(folder / files[0]), _save_figure(plot_recommendation(result.trace), folder / files[1]),
                _save_figure(plot_predicted_vs_realised(result), folder / files[2])]

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
             f"{'#':>3}  {'learner':<{width[0]}}{label:>10}{'predicted':>11}{'time':>11}{'predicted':>11}"
             f"{'total':>11}  status"]
    for i, r in enumerate(result.leaderboard.to_dict("records"), 1):
        lines.append(f"{i:>3}  {short_name(r['learner']):<{width[0]}}{_fmt_acc(r['accuracy']):>10}"
                     f"{_fmt_acc(r['predicted_accuracy']):>11}{_fmt_seconds(r['seconds']):>11}"
                     f"{_fmt_seconds(r['predicted_seconds']):>11}{_fmt_seconds(r['cumulative_seconds']):>11}"
                     f"  {r['status']}")
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
    _add_compare,
    _add_export,
    _add_rank,
    _add_benchmark,
    _add_tune_p,
    _add_evaluate,
    _add_build_meta,
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
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(EscapingFormatter("%(levelname)s %(name)s: %(message)s"))
        logging.basicConfig(level=level, handlers=[handler])
        code = int(args.func(args) or 0)  # a command may return its own code (130: interrupted, results kept)
        if argv is None and (code == 130 or args.command == "recommend"):
            if args.command == "recommend":  # its fork server may still be warming up: it ends with the command
                from algorank.recommender.live.environment import stop_fold_server

                stop_fold_server()
            return _exit_now(code)  # recommend: the budget counts until the process has ended, not its teardown
        return code
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
    return escape(" ".join(text.split()))


if __name__ == "__main__":
    sys.exit(main())
