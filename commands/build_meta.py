"""``algorank build-meta``: build the broad evaluator meta-data from ../shared/datasets (one file per dataset,
resumable), or assemble the embedded 'broad' set; ``--task regression``: the same for the regression meta-data.
"""

__all__ = ["HELP", "add_arguments", "run"]

HELP = ("build the broad evaluator meta-data from ../shared/datasets (one file per dataset, resumable), or assemble "
        "the embedded 'broad' set; --task regression: the regression meta-data and the embedded 'regression' set")


def add_arguments(p) -> None:
    p.add_argument("--shared", metavar="DIR", help="folder with datasets/MANIFEST.csv "
                   "(default $ALGORANK_SHARED, else ../shared)")
    p.add_argument("--out", metavar="DIR", help="per-dataset files (default metadata/data/broad, "
                   "metadata/data/regression with --task regression); "
                   "datasets whose file exists are skipped")
    p.add_argument("--cap", type=float, default=120.0, metavar="S", help="seconds per test (a learner's folds); "
                   "a test beyond it is killed and recorded as 'timeout' with the cap as a lower bound (120)")
    p.add_argument("--folds", type=int, default=5, metavar="K",
                   help="CV folds (5): stratified for classification, shuffled for regression")
    p.add_argument("--portfolio", choices=("lcdb", "modern"), default="lcdb", help="learners: LCDB's 20 (default), "
                   "or those and the modern portfolio's gradient boosting and published configurations "
                   "(needs 'algorank[boosting]'; files default to metadata/data/modern)")
    p.add_argument("--task", choices=("classification", "regression"), default="classification",
                   help="classification (default: the broad set) or regression (the 19 regressors on the frozen "
                   "regression list, each target named; files default to metadata/data/regression, --assemble "
                   "writes the embedded 'regression' set)")
    p.add_argument("--n-jobs", type=int, default=1, metavar="N", help="datasets built in parallel (-1: all cores)")
    p.add_argument("--datasets", nargs="+", metavar="ID", help="build only these dataset ids (default: the rule)")
    p.add_argument("--no-calibrate", action="store_true", help="skip the machine-speed calibration per dataset")
    p.add_argument("--list", action="store_true", help="print the selected datasets, cheapest first, and exit")
    p.add_argument("--assemble", action="store_true", help="do not build: concatenate the files under --out into "
                   "broad_evaluator.parquet + .json (the embedded 'broad' set)")
    p.add_argument("--assemble-to", metavar="DIR", help="--assemble: where to write (default metadata/data)")
    p.add_argument("--json", action="store_true", help="print exactly one JSON object")
    p.add_argument("--quiet", action="store_true", help="no progress bar or log messages")


def run(args):
    import logging

    from algorank.api import build_meta

    if not args.quiet:  # one log line per finished dataset (the build runs for hours, often under nohup)
        logging.getLogger("algorank.evaluation.cv.metabuild").setLevel(logging.INFO)
        logging.getLogger("algorank.evaluation.cv.regression_build").setLevel(logging.INFO)
    return build_meta(shared_dir=args.shared, out_dir=args.out, datasets=args.datasets, cap=args.cap,
                      folds=args.folds, n_jobs=args.n_jobs, calibrate=not args.no_calibrate,
                      list_only=args.list, assemble=args.assemble, assemble_to=args.assemble_to,
                      progress=not args.quiet, portfolio=args.portfolio, task=args.task)
