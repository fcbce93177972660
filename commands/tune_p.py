"""``algorank tune-p``: sweep the A3R exponent P (or the cost exponent of at, lt, ei) by leave-one-dataset-out
MIL (optionally nested).
"""

import sys

from algorank.commands.options import add_common, add_verbose, add_heldout, add_window, add_time_model, add_metrics_options, items, numbers

__all__ = ["HELP", "add_arguments", "run"]

HELP = "sweep the A3R exponent P (or the cost exponent of at, lt, ei) by leave-one-dataset-out MIL (optionally nested)"


def add_arguments(p) -> None:
    add_common(p, out=True)
    add_verbose(p, detail="the sweep table (median MIL, Spearman) and every comparison")
    p.add_argument("--strategy", default="ar", metavar="FAMILY",
                   help="whose P is swept: ar (default), at, lt or ei, other knobs fixed after a colon "
                        "(lt:h=inf, ei:h=inf)")
    p.add_argument("--p-grid", nargs="+", default=None, metavar="P",
                   help="P values (default the paper's 1/4 1/8 1/16 1/32 1/64 1/128 1/256 0; for ei 2 1.5 1 1/2 1/4 0)")
    add_window(p)
    p.add_argument("--nested", action="store_true",
                   help="also estimate the MIL of tuned P honestly by nested leave-one-dataset-out")
    add_heldout(p, "--exclude-heldout", use="leave the frozen held-out split out of all tuning")
    add_metrics_options(p, reference_help="P the others are compared with in the user-facing metrics "
                                           "(default: the first of the grid)")
    add_time_model(p)


def run(args):
    from algorank.api import tune_p

    return tune_p(args.meta, strategy=args.strategy, grid=items(args.p_grid), nested=args.nested, tmin=args.tmin,
                  tmax=args.tmax, time_model=args.time_model, cv=args.cv, time_overhead=args.time_overhead,
                  exclude_heldout=args.exclude_heldout, exclude_datasets=items(args.exclude_dataset) or (),
                  reference=args.reference, eps=args.eps,
                  budgets=numbers(args.budgets, option="--budgets") or (1.0, 10.0, 60.0),
                  progress=not args.quiet and sys.stderr.isatty(), per_dataset=args.per_dataset)
