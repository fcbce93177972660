"""``algorank evaluate``: run learners on a dataset with repeated cross-validation (resumable)."""

from algorank.commands.options import add_common, add_data_options, items

__all__ = ["HELP", "add_arguments", "check", "run"]

HELP = "run learners on a dataset with repeated cross-validation (resumable)"


def add_arguments(p) -> None:
    p.add_argument("dataset", metavar="DATASET",
                   help="file (.arff/.csv/.tsv/.parquet; a text file may be compressed: .gz/.bz2/.xz/.zip), "
                        "sklearn:NAME or openml:ID")
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
    add_data_options(p)
    add_common(p, meta=False, out=True)


def check(args) -> None:
    """A bad ``--repeats`` is an error before any work (before the ``--out`` check too)."""
    from algorank.api import parse_repeats

    parse_repeats(args.repeats, args.stop)


def run(args):
    from algorank.api import evaluate

    return evaluate(args.dataset, args.target, learners=args.learners, scheme=args.scheme, cv=args.cv,
                    repeats=args.repeats, stop=args.stop, threshold=args.threshold, min_repeats=args.min_repeats,
                    max_repeats=args.max_repeats, timeout=args.timeout, n_jobs=args.n_jobs,
                    store=False if args.no_store else (args.store or True), random_state=args.seed,
                    allow_modules=args.allow_module, progress=not args.quiet, task=args.task,
                    keep_columns=items(args.keep_columns) or (), drop_columns=items(args.drop_columns) or ())
