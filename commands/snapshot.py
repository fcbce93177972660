"""``algorank snapshot``: rebuild the embedded meta-data (LCDB snapshot, OBOE matrices)."""

__all__ = ["HELP", "add_arguments", "run"]

HELP = "rebuild the embedded meta-data (LCDB snapshot, OBOE matrices)"


def add_arguments(p) -> None:
    ssub = p.add_subparsers(dest="snapshot_command", required=True, parser_class=type(p))
    b = ssub.add_parser("build", help="rebuild the snapshot and the growth table from the lcdb package (pip install 'algorank[lcdb]')")
    b.add_argument("--lcdb-dir", metavar="DIR", help="folder of LCDB's CSV files (default: the installed lcdb package)")
    o = ssub.add_parser("build-oboe", help="rebuild the embedded 'oboe' set from OBOE's matrices "
                                           "(e.g. ../shared/metadata/oboe)")
    o.add_argument("source", metavar="DIR", help="folder holding OBOE's error_matrix.csv, runtime_matrix.csv, "
                                                 "dataset_sizes.csv, classification.json and LICENSE.txt")
    for q in (b, o):
        q.add_argument("--out", metavar="DIR", help="folder to write to (default: the installed package's data folder)")
        q.add_argument("--json", action="store_true", help="print the written record as JSON")
        q.add_argument("--quiet", action="store_true", help="no log messages")


def run(args):
    from algorank.api import build_oboe, build_snapshot

    if args.snapshot_command == "build":
        return build_snapshot(out_dir=args.out, lcdb_dir=args.lcdb_dir)
    return build_oboe(args.source, out_dir=args.out)
