"""The ``algorank`` command line: parse, call one :mod:`algorank.api` function, print its result.

No logic lives here.  A command prints the result's text (:func:`algorank.results.to_text`) or one
JSON object (``--json``), then writes its files under ``--out`` (checked before any work; a write
failure is one ``error: cannot write ...`` line, nothing half-written is left).  An
:class:`~algorank.metadata.errors.InputError` is one line ``error: ...`` and exit 2, any other
:class:`~algorank.metadata.errors.AlgorankError` exit 1, an interrupt exit 130.  To add a command:
``_add_NAME(sub)`` (its arguments), ``_run_NAME(args)`` (calls its API function), one ``_COMMANDS`` entry.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Callable, Sequence

from algorank.metadata.errors import AlgorankError, InputError
from algorank.metadata.io import check_out_dir, json_dumps, output_folder
from algorank.metadata.text import escape, escaping_handler, terminal_text

__all__ = ["main", "build_parser"]


class _Version(argparse.Action):
    def __call__(self, parser, *_):  # the version comes from the API only when asked for (--help stays light)
        from algorank.api import version

        print(version())
        parser.exit()


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose usage errors are one line ``error: ...`` and exit 2."""

    def error(self, message: str):  # noqa: D401 - argparse API
        raise InputError(f"{self.prog.split()[-1] if ' ' in self.prog else self.prog}: {message}")


# ---------------------------------------------------------------- shared arguments and rendering
def _add_common(p: argparse.ArgumentParser, *, meta: bool = True, out: bool = False) -> None:
    if meta:
        p.add_argument("--meta", metavar="PATH", action="append",
                       help="meta-data file (.parquet or .csv), an ASlib scenario folder, or an embedded set: broad, "
                            "uci, lcdb, oboe (default: broad); repeat to join several with distinct datasets")
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


def _items(values) -> list[str] | None:
    """Space- and comma-separated values of a repeatable option (None when not given)."""
    if values is None:
        return None
    return [x.strip() for item in values for x in str(item).split(",") if x.strip()]


def _numbers(values, *, option: str):
    """``_items`` as floats (a one-line error naming ``option`` otherwise)."""
    out = []
    for x in _items(values) or []:
        try:
            out.append(float(x))
        except ValueError:
            raise InputError(f"{option} must be numbers of seconds; got {x!r}") from None
    return out or None


def _check_out(args):
    """``--out`` checked before any work (a folder that is, or can become, writable); None without it."""
    return check_out_dir(args.out) if getattr(args, "out", None) else None


def _finish(args, result, out=None, code: int = 0) -> int:
    """Print ``result`` (text, or one JSON object naming the files to come), then write its files under ``out``."""
    from algorank.results import output_files, saved_files, to_text, write_files

    names = output_files(result) if out is not None else []
    if args.json:
        d = result.to_dict()
        if isinstance(d, dict) and args.func in _WRITERS and "written" not in d:
            d["written"] = saved_files(result) + [str(out / n) for n in names]  # printed first, then written
        print(json_dumps(d))
    else:
        print(terminal_text(to_text(result)))  # no control character from data reaches the terminal
    if names:
        sys.stdout.flush()
        with output_folder(out) as folder:
            written = write_files(result, folder)
        if not args.json:
            print(terminal_text("\n".join(f"wrote {w}" for w in written)))
    return code


# ---------------------------------------------------------------- info
def _add_info(sub) -> None:
    p = sub.add_parser("info", help="summarise a meta-dataset (default: the embedded broad set)")
    _add_common(p)
    p.set_defaults(func=_run_info)


def _run_info(args) -> int:
    from algorank.api import info

    return _finish(args, info(args.meta))


# ---------------------------------------------------------------- snapshot
def _add_snapshot(sub) -> None:
    p = sub.add_parser("snapshot", help="rebuild the embedded meta-data (LCDB snapshot, OBOE matrices)")
    ssub = p.add_subparsers(dest="snapshot_command", required=True, parser_class=_Parser)
    b = ssub.add_parser("build", help="rebuild the snapshot and the growth table from the lcdb package (pip install 'algorank[lcdb]')")
    b.add_argument("--lcdb-dir", metavar="DIR", help="folder of LCDB's CSV files (default: the installed lcdb package)")
    b.set_defaults(func=_run_snapshot_build)
    o = ssub.add_parser("build-oboe", help="rebuild the embedded 'oboe' set from OBOE's matrices "
                                           "(e.g. ../shared/metadata/oboe)")
    o.add_argument("source", metavar="DIR", help="folder holding OBOE's error_matrix.csv, runtime_matrix.csv, "
                                                 "dataset_sizes.csv, classification.json and LICENSE.txt")
    o.set_defaults(func=_run_snapshot_build_oboe)
    for q in (b, o):
        q.add_argument("--out", metavar="DIR", help="folder to write to (default: the installed package's data folder)")
        q.add_argument("--json", action="store_true", help="print the written record as JSON")
        q.add_argument("--quiet", action="store_true", help="no log messages")


def _run_snapshot_build(args) -> int:
    from algorank.api import build_snapshot

    return _finish(args, build_snapshot(out_dir=args.out, lcdb_dir=args.lcdb_dir))


def _run_snapshot_build_oboe(args) -> int:
    from algorank.api import build_oboe

    return _finish(args, build_oboe(args.source, out_dir=args.out))


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


def _run_pull(args) -> int:
    from algorank.api import pull

    result = pull(out=args.out, suite=args.suite, tasks=args.tasks, tag=args.tag, flows=args.flows,
                  top_flows=args.top_flows, measure=args.measure, runtime_measure=args.runtime_measure,
                  cache_dir=args.cache, offline=args.offline, server=args.server, page_size=args.page_size,
                  retries=args.retries, backoff=args.backoff, timeout=args.timeout, progress=not args.quiet)
    return _finish(args, result.coverage)


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


def _run_multitest(args) -> int:
    from algorank.api import multitest

    out = _check_out(args)
    res = multitest(args.meta, learners=_items(args.learners), cost=args.cost, pairwise=args.pairwise,
                    posthoc_method=args.posthoc, correction=args.correction, alpha=args.alpha,
                    test_train_ratio=args.test_train_ratio, missing=args.missing, progress=not args.quiet)
    return _finish(args, res, out)


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


def _run_compare(args) -> int:
    from algorank.api import compare

    out = _check_out(args)
    res = compare(args.meta, learners=_items(args.learners), metric=args.metric, control=args.control,
                  posthoc_method=args.posthoc, control_method=args.control_method, alpha=args.alpha,
                  confidence=args.confidence, ci_method=args.ci, bayes=not args.no_bayes, rope=args.rope,
                  nsamples=args.bayes_samples, random_state=args.seed, progress=not args.quiet)
    return _finish(args, res, out)


# ---------------------------------------------------------------- export
def _add_export(sub) -> None:
    p = sub.add_parser("export", help="write meta-data as an ASlib scenario folder and/or a .parquet/.csv file")
    _add_common(p)
    p.add_argument("--aslib", metavar="DIR", help="write an ASlib scenario (description.txt, algorithm_runs.arff, "
                                                 "feature_values.arff, feature_runstatus.arff, cv.arff)")
    p.add_argument("--scenario-id", metavar="ID", help="ASlib scenario_id (default: the folder name)")
    p.add_argument("--folds", type=int, default=10, metavar="K", help="cv.arff folds when none are recorded (10)")
    p.add_argument("--seed", type=int, default=0, help="seed of that split")
    p.add_argument("--out", metavar="PATH", help="save the meta-data to a .parquet or .csv file")
    p.set_defaults(func=_run_export)


def _run_export(args) -> int:
    from algorank.api import export

    return _finish(args, export(args.meta, aslib=args.aslib, out=args.out, scenario_id=args.scenario_id,
                                folds=args.folds, random_state=args.seed))


# ---------------------------------------------------------------- rank
def _add_rank(sub) -> None:
    p = sub.add_parser("rank", help="AR-A3R average ranking of the learners (Abdulrahman et al. 2018)")
    _add_common(p)
    p.add_argument("--p", default="1/16", metavar="P",
                   help="A3R time exponent in [0, 1]: 1/64, 0.015625, 0 (accuracy only) ... (default 1/16)")
    p.add_argument("--exclude-dataset", nargs="+", default=[], metavar="ID", help="leave these datasets out of the ranking")
    p.add_argument("--min-coverage", type=float, default=0.5, metavar="F",
                   help="fraction of datasets a learner needs results on to be ranked on merit (default 0.5)")
    p.set_defaults(func=_run_rank)


def _run_rank(args) -> int:
    from algorank.api import rank

    return _finish(args, rank(args.meta, p=args.p, exclude_datasets=_items(args.exclude_dataset) or (),
                              min_coverage=args.min_coverage))


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
    p.add_argument("--per-dataset", action="store_true", help="--json: also every value per dataset (large)")


def _add_benchmark(sub) -> None:
    p = sub.add_parser("benchmark", help="loss-time benchmark of ordering strategies (leave-one-dataset-out, a "
                                         "frozen held-out split, or other test meta-data)")
    _add_common(p, out=True)
    p.add_argument("--strategy", action="append", required=True, metavar="SPEC",
                   help="ei, ar:p=1/16, ar:p=0, at:p=1/16, lt, random:seed=0, fastest, best-accuracy, oracle, oboe, portfolio, pmf, zeroshot (repeat)")
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


def _run_benchmark(args) -> int:
    from algorank.api import benchmark

    out = _check_out(args)
    suite = benchmark(args.strategy, meta=args.meta, test_meta=args.test_meta, heldout=args.heldout,
                      exclude_datasets=_items(args.exclude_dataset) or (), reference=args.reference, eps=args.eps,
                      budgets=_numbers(args.budgets, option="--budgets") or (1.0, 10.0, 60.0), tmin=args.tmin,
                      tmax=args.tmax, time_model=args.time_model, cv=args.cv, time_overhead=args.time_overhead,
                      random_state=args.seed, progress=not args.quiet and sys.stderr.isatty(), axis=args.axis,
                      max_tests=args.max_tests, per_dataset=args.per_dataset)
    return _finish(args, suite, out)


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


def _run_tune_p(args) -> int:
    from algorank.api import tune_p

    out = _check_out(args)
    res = tune_p(args.meta, strategy=args.strategy, grid=_items(args.p_grid), nested=args.nested, tmin=args.tmin,
                 tmax=args.tmax, time_model=args.time_model, cv=args.cv, time_overhead=args.time_overhead,
                 exclude_heldout=args.exclude_heldout, exclude_datasets=_items(args.exclude_dataset) or (),
                 reference=args.reference, eps=args.eps,
                 budgets=_numbers(args.budgets, option="--budgets") or (1.0, 10.0, 60.0),
                 progress=not args.quiet and sys.stderr.isatty(), per_dataset=args.per_dataset)
    return _finish(args, res, out)


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
    p.add_argument("--allow-module", action="append", default=[], metavar="PACKAGE", help="also run estimator classes "
                   "of this package named by learner ids (default: scikit-learn only; learner ids are data, never code)")
    _add_common(p, meta=False, out=True)
    p.set_defaults(func=_run_evaluate)


def _run_evaluate(args) -> int:
    from algorank.api import evaluate, parse_repeats

    parse_repeats(args.repeats, args.stop)  # a bad --repeats is an error before any work
    out = _check_out(args)
    result = evaluate(args.dataset, args.target, learners=args.learners, scheme=args.scheme, cv=args.cv,
                      repeats=args.repeats, stop=args.stop, threshold=args.threshold, min_repeats=args.min_repeats,
                      max_repeats=args.max_repeats, timeout=args.timeout, n_jobs=args.n_jobs,
                      store=False if args.no_store else (args.store or True), random_state=args.seed,
                      allow_modules=args.allow_module, progress=not args.quiet)
    return _finish(args, result, out)


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


def _run_build_meta(args) -> int:
    import logging

    from algorank.api import build_meta

    if not args.quiet:  # one log line per finished dataset (the build runs for hours, often under nohup)
        logging.getLogger("algorank.evaluation.cv.metabuild").setLevel(logging.INFO)
    return _finish(args, build_meta(shared_dir=args.shared, out_dir=args.out, datasets=args.datasets, cap=args.cap,
                                    folds=args.folds, n_jobs=args.n_jobs, calibrate=not args.no_calibrate,
                                    list_only=args.list, assemble=args.assemble, assemble_to=args.assemble_to,
                                    progress=not args.quiet))


# ---------------------------------------------------------------- recommend
def _add_recommend(sub) -> None:
    p = sub.add_parser("recommend", help="rank learners for a dataset from the meta-data, then really run them")
    p.add_argument("dataset", metavar="DATASET", help="file (.arff/.csv/.parquet), sklearn:NAME or openml:ID")
    p.add_argument("--target", metavar="NAME", help="target column (default: class/target, else the last nominal)")
    p.add_argument("--strategy", default=None, metavar="SPEC",
                   help="ei (default), ar:p=1/16, ar:p=0, at:p=1/16,sim=tested, lt:h=inf, random, ...")
    p.add_argument("--budget", type=float, default=60.0, metavar="SECONDS", help="wall-clock budget (default 60)")
    p.add_argument("--top", type=int, default=None, metavar="K", help="test at most K learners")
    p.add_argument("--dry-run", action="store_true", help="only print the planned order")
    p.add_argument("--exclude-dataset", action="append", default=[], metavar="ID",
                   help="leave this prior dataset out of the meta-data (repeatable)")
    p.add_argument("--cv", type=int, default=5, metavar="K", help="folds of the live stratified CV (default 5)")
    p.add_argument("--seed", type=int, default=0, metavar="N", help="seed of the live evaluation")
    p.add_argument("--time-model", choices=("live", "fit"), default="live",
                   help="rank with a live test's time, CV x (fit+predict, or fit) + overhead (default), or the fit time")
    p.add_argument("--time-overhead", type=float, default=None, metavar="SECONDS",
                   help="seconds a live test costs on top of its fits and predictions (default: the calibrated constant)")
    p.add_argument("--allow-module", action="append", default=[], metavar="PACKAGE", help="also run estimator classes "
                   "of this package named by learner ids (default: scikit-learn only; learner ids are data, never code)")
    p.add_argument("--metric", metavar="NAME", help="rank and test by accuracy, balanced_accuracy, roc_auc, log_loss "
                   "or f1_macro, where the meta-data records it (default: what it ranks by; accuracy for broad)")
    p.add_argument("--save-model", metavar="PATH", help="save the refitted best learner with joblib (joblib.load; "
                   "load only files you trust: unpickling runs code)")
    p.add_argument("--n-jobs", type=int, default=1, metavar="N", help="tests run at once (default 1; -1: one per CPU)")
    _add_common(p, out=True)
    p.set_defaults(func=_run_recommend)


def _run_recommend(args) -> int:
    from algorank.api import process_start, recommend
    from algorank.recommender.live.report import Progress

    out = _check_out(args)
    progress = Progress(plan_stream=None if args.json else sys.stdout, test_stream=None if args.quiet else sys.stderr,
                        gap=not args.dry_run)
    result = recommend(args.dataset, args.target, strategy=args.strategy, budget=args.budget, meta=args.meta,
                       cv=args.cv, top=args.top, random_state=args.seed, refit=False, dry_run=args.dry_run,
                       exclude_datasets=args.exclude_dataset, allow_modules=args.allow_module, metric=args.metric,
                       time_model=args.time_model, time_overhead=args.time_overhead, save_model=args.save_model,
                       n_jobs=args.n_jobs, on_plan=progress.on_plan, on_start=None if args.dry_run else progress.on_start,
                       on_observation=progress.on_observation, started=process_start() if args.started is None else args.started)
    untested = result.trace is not None and result.best is None  # the run tested nothing successfully
    code = 130 if result.stop_reason == "interrupted" else EXIT_NOTHING_TESTED if untested else 0
    if result.trace is None and not args.json:
        return code  # a dry run: the plan was printed
    return _finish(args, result, out, code)


# ---------------------------------------------------------------- wiring
#: Exit code of ``recommend`` when no learner was tested successfully (budget used up, or every test failed).
EXIT_NOTHING_TESTED = 3
#: Commands whose --out is a folder of files: their JSON lists them under "written" ([] without --out).
_WRITERS = (_run_recommend, _run_evaluate, _run_benchmark, _run_tune_p, _run_multitest, _run_compare)
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
    parser.add_argument("--version", action=_Version, nargs=0, help="print algorank's version and exit")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND")
    for add in _COMMANDS:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (0 ok, 1 failure, 2 bad input, 3 ``recommend`` tested nothing
    successfully (:data:`EXIT_NOTHING_TESTED`), 130 interrupted).

    Without ``argv`` (the process's command line) budgets count from the start of the process and an
    interrupted command exits at once; with ``argv`` (tests, other programs) budgets count from the call.
    """
    started = None if argv is None else time.perf_counter()  # None: the budget counts from the process start
    try:  # everything, imports included, is inside: an interrupt at any moment exits 130 without a traceback
        import logging
        args = build_parser().parse_args(argv)
        args.started = started
        if argv is None:  # this process is the command: whatever it starts ends with it, SIGKILL included
            from algorank.api import end_with_this_process

            end_with_this_process()
        level = logging.DEBUG if args.verbose else (logging.ERROR if getattr(args, "quiet", False) else logging.WARNING)
        logging.basicConfig(level=level, handlers=[escaping_handler(sys.stderr)])
        code = int(args.func(args) or 0)  # a command may return its own code (130: interrupted, results kept)
        return _exit_now(code) if argv is None and (code == 130 or args.command == "recommend") else code
    except AlgorankError as exc:  # InputError: the user's mistake (2); anything else of algorank's (1)
        sys.stderr.write(f"error: {_one_line(exc)}\n")
        return 2 if isinstance(exc, InputError) else 1
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return _exit_now(130) if argv is None else 130
    except BrokenPipeError:  # e.g. `algorank rank | head`
        return 0


def _exit_now(code: int) -> int:
    """End the process at once after Ctrl-C or ``recommend`` (its budget counts until the process has ended): Python's
    shutdown of numpy, pandas, scikit-learn takes up to a second; output, log handlers, finalizers are done here."""
    import logging
    import os
    try:
        if "algorank.api" in sys.modules:  # a fold server or worker pool still warming up would hold the pipes open
            sys.modules["algorank.api"].stop_processes()
        sys.stdout.flush()
        sys.stderr.flush()
        logging.shutdown()
        from multiprocessing import util
        util._exit_function()
    finally:
        os._exit(code)
    return code  # pragma: no cover - not reached


#: The library names its parameters; a message about one of them names the flag here.
_FLAGS = {"random_state": "--seed", "cv": "--cv", "budget_seconds": "--budget", "top": "--top", "folds": "--folds",
          "timeout": "--timeout", "n_jobs": "--n-jobs", "alpha": "--alpha", "save_model": "--save-model"}


def _one_line(exc: BaseException) -> str:
    text = " ".join((str(exc).strip() or type(exc).__name__).split())
    head, sep, rest = text.partition(" ")
    flag = _FLAGS.get(head) if rest.startswith(("must ", "(number of folds) must ", "'")) else None
    return escape((flag or head) + sep + rest)


if __name__ == "__main__":
    sys.exit(main())
