"""``algorank rank``: AR-A3R average ranking of the learners (Abdulrahman et al. 2018)."""

from algorank.commands.options import add_common, items

__all__ = ["HELP", "add_arguments", "run"]

HELP = "AR-A3R average ranking of the learners (Abdulrahman et al. 2018)"


def add_arguments(p) -> None:
    add_common(p)
    p.add_argument("--p", default="1/16", metavar="P",
                   help="A3R time exponent in [0, 1]: 1/64, 0.015625, 0 (accuracy only) ... (default 1/16)")
    p.add_argument("--exclude-dataset", nargs="+", default=[], metavar="ID", help="leave these datasets out of the ranking")
    p.add_argument("--min-coverage", type=float, default=0.5, metavar="F",
                   help="fraction of datasets a learner needs results on to be ranked on merit (default 0.5)")


def run(args):
    from algorank.api import rank

    return rank(args.meta, p=args.p, exclude_datasets=items(args.exclude_dataset) or (),
                min_coverage=args.min_coverage)
