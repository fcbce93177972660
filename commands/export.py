"""``algorank export``: write meta-data as an ASlib scenario folder and/or a .parquet/.csv file."""

from algorank.commands.options import add_common

__all__ = ["HELP", "add_arguments", "run"]

HELP = "write meta-data as an ASlib scenario folder and/or a .parquet/.csv file"


def add_arguments(p) -> None:
    add_common(p)
    p.add_argument("--aslib", metavar="DIR", help="write an ASlib scenario (description.txt, algorithm_runs.arff, "
                                                 "feature_values.arff, feature_runstatus.arff, cv.arff)")
    p.add_argument("--scenario-id", metavar="ID", help="ASlib scenario_id (default: the folder name)")
    p.add_argument("--folds", type=int, default=10, metavar="K", help="cv.arff folds when none are recorded (10)")
    p.add_argument("--seed", type=int, default=0, help="seed of that split")
    p.add_argument("--out", metavar="PATH", help="save the meta-data to a .parquet or .csv file")
    p.add_argument("--force", action="store_true", help="let --out replace an existing file that is not meta-data "
                   "algorank saved (an input, a folder or a device never)")


def run(args):
    from algorank.api import export

    return export(args.meta, aslib=args.aslib, out=args.out, scenario_id=args.scenario_id,
                  folds=args.folds, random_state=args.seed, force=args.force)
