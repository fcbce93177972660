"""``algorank benchmark``: loss-time benchmark of ordering strategies (leave-one-dataset-out, a frozen held-out
split, or other test meta-data).
"""

import sys

from algorank.commands.options import add_common, add_verbose, add_heldout, add_window, add_time_model, add_metrics_options, items, numbers

__all__ = ["HELP", "add_arguments", "run"]

HELP = "loss-time benchmark of ordering strategies (leave-one-dataset-out, a frozen held-out split, or other test meta-data)"


def add_arguments(p) -> None:
    add_common(p, out=True)
    add_verbose(p, detail="the median MIL, Spearman, the tests over datasets with effect sizes and every comparison")
    p.add_argument("--strategy", action="append", required=True, metavar="SPEC",
                   help="eiu (recommend's default), ei, ar:p=1/16, ar:p=0, at:p=1/16, lt, random:seed=0, fastest, "
                        "best-accuracy, oracle, oboe, portfolio, pmf, zeroshot (repeat: --strategy eiu --strategy lt)")
    p.add_argument("--test-meta", action="append", default=None, metavar="FILE",
                   help="fit the strategies on --meta and score them on every dataset of this meta-data (file or "
                        "embedded name; repeatable); a dataset in both is an error unless --exclude-dataset")
    add_heldout(p, "--heldout", use="train on the rest of --meta and score its frozen held-out datasets")
    add_metrics_options(p, reference_help="strategy the others are compared with (default: the first --strategy; "
                                           "added when not among them)")
    add_window(p)
    add_time_model(p)
    p.add_argument("--seed", type=int, default=0, help="seed for strategies with randomness when the spec gives none")
    p.add_argument("--axis", choices=("time", "tests"), default="time",
                   help="x axis: time (loss-time curves, MIL; default) or tests (loss by number of tests, score = "
                        "mean loss over tests 1..K; needs no times)")
    p.add_argument("--max-tests", type=int, default=None, metavar="K",
                   help="--axis tests: K of the mean loss over tests 1..K (default: the number of learners)")


def run(args):
    from algorank.api import benchmark

    return benchmark(args.strategy, meta=args.meta, test_meta=args.test_meta, heldout=args.heldout,
                     exclude_datasets=items(args.exclude_dataset) or (), reference=args.reference, eps=args.eps,
                     budgets=numbers(args.budgets, option="--budgets") or (1.0, 10.0, 60.0), tmin=args.tmin,
                     tmax=args.tmax, time_model=args.time_model, cv=args.cv, time_overhead=args.time_overhead,
                     random_state=args.seed, progress=not args.quiet and sys.stderr.isatty(), axis=args.axis,
                     max_tests=args.max_tests, per_dataset=args.per_dataset)
