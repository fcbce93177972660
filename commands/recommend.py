"""``algorank recommend``: rank learners for a dataset from the meta-data, then really run them."""

import sys

from algorank.commands.options import add_common, add_data_options, items

__all__ = ["HELP", "EXIT_NOTHING_TESTED", "add_arguments", "run"]

HELP = "rank learners for a dataset from the meta-data, then really run them"
#: Exit code of ``recommend`` when no learner was tested successfully (budget used up, or every test failed).
EXIT_NOTHING_TESTED = 3



def _folds(text: str):
    """``--cv``: an integer, or ``auto`` (checked further by the recommendation)."""
    import argparse

    if text.strip().lower() == "auto":
        return "auto"
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 2 or 'auto'; got {text!r}") from None


def add_arguments(p) -> None:
    p.add_argument("dataset", metavar="DATASET",
                   help="file (.arff/.csv/.tsv/.parquet; a text file may be compressed: .gz/.bz2/.xz/.zip), "
                        "sklearn:NAME or openml:ID")
    p.add_argument("--target", metavar="NAME", help="target column (default: class/target, else the last nominal, else a numeric last "
                   "column that reads as a quantity)")
    p.add_argument("--strategy", default=None, metavar="SPEC",
                   help="eiu (default), ei, ar:p=1/16, ar:p=0, at:p=1/16,sim=tested, lt:h=inf, random, ...")
    p.add_argument("--budget", type=float, default=60.0, metavar="SECONDS", help="wall-clock budget (default 60)")
    p.add_argument("--top", type=int, default=None, metavar="K", help="test at most K learners")
    p.add_argument("--dry-run", action="store_true", help="only print the planned order")
    p.add_argument("--exclude-dataset", action="append", default=[], metavar="ID",
                   help="leave this prior dataset out of the meta-data (repeatable)")
    p.add_argument("--cv", type=_folds, default=None, metavar="K|auto",
                   help="folds of the live CV (stratified, or shuffled K-fold for a regression); 'auto': 5, or 2 when rows "
                        "x features are large for the budget (default: 5 for a classification, auto for a regression)")
    p.add_argument("--seed", type=int, default=0, metavar="N", help="seed of the live evaluation")
    p.add_argument("--time-model", choices=("live", "fit"), default="live",
                   help="rank with a live test's time, CV x (fit+predict, or fit) + overhead (default), or the fit time")
    p.add_argument("--time-overhead", type=float, default=None, metavar="SECONDS",
                   help="seconds a live test costs on top of its fits and predictions (default: the calibrated constant)")
    p.add_argument("--allow-module", action="append", default=[], metavar="PACKAGE", help="also run estimator classes "
                   "of this package named by learner ids (default: scikit-learn only; learner ids are data, never code)")
    p.add_argument("--metric", metavar="NAME", help="rank and test by accuracy, balanced_accuracy, roc_auc, log_loss "
                   "or f1_macro, where the meta-data records it (default: what it ranks by; accuracy for modern); "
                   "a regression: r2 (default), rmse or mae")
    p.add_argument("--save-model", metavar="PATH", help="refit the best learner on all the data and save it with "
                   "joblib (joblib.load; load only files you trust: unpickling runs code); without it the command "
                   "keeps no model. It saves the weighted ensemble of the tested learners instead when it beats "
                   "the best one out of fold (see --no-ensemble)")
    p.add_argument("--no-ensemble", dest="ensemble", action="store_false", help="with --save-model: save the best "
                   "learner alone, never an ensemble of the tested learners")
    p.add_argument("--force", action="store_true", help="let --save-model replace an existing file that is not a "
                   "model algorank saved (the dataset, a folder or a device never)")
    p.add_argument("--n-jobs", type=int, default=1, metavar="N",
                   help="tests run at once (default 1; -1: one per CPU; at most the number of cores)")
    add_data_options(p)
    add_common(p, out=True)


def run(args):
    """The recommendation and the exit code (130 interrupted, :data:`EXIT_NOTHING_TESTED`); None instead of the
    result after a dry run's plan (printed while planning) unless ``--json``."""
    from dataclasses import replace

    from algorank.api import check_model_path, fork_fold_server, process_start, recommend, save_model
    from algorank.recommender.live.report import Progress

    model_path = None  # checked before any work, written after the results are printed (cli._finish)
    if args.save_model is not None:
        model_path = check_model_path(args.save_model, force=args.force, inputs=(args.dataset,))

    if args.started is None and not args.dry_run:  # a command process that has run nothing yet: safe to fork
        fork_fold_server()

    progress = Progress(plan_stream=None if args.json else sys.stdout, test_stream=None if args.quiet else sys.stderr,
                        gap=not args.dry_run)
    result = recommend(args.dataset, args.target, strategy=args.strategy, budget=args.budget, meta=args.meta,
                       cv=args.cv, top=args.top, random_state=args.seed, dry_run=args.dry_run,
                       exclude_datasets=args.exclude_dataset, allow_modules=args.allow_module, metric=args.metric,
                       time_model=args.time_model, time_overhead=args.time_overhead,
                       refit=model_path is not None, ensemble=args.ensemble and model_path is not None,
                       n_jobs=args.n_jobs, task=args.task, keep_columns=items(args.keep_columns) or (),
                       drop_columns=items(args.drop_columns) or (), on_plan=progress.on_plan,
                       on_start=None if args.dry_run else progress.on_start,
                       on_observation=progress.on_observation, started=process_start() if args.started is None else args.started)
    if model_path is not None and result.model is not None:
        if args.json:  # the JSON names the file, printed first, then written
            result = replace(result, saved_model=str(model_path))
        args.write_after_print = lambda: [save_model(result, model_path)]
    untested = result.trace is not None and result.best is None  # the run tested nothing successfully
    code = 130 if result.stop_reason == "interrupted" else EXIT_NOTHING_TESTED if untested else 0
    if result.trace is None and not args.json:
        return None, code  # a dry run: the plan was printed
    return result, code
