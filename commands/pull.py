"""``algorank pull``: build a meta-dataset from prior runs on OpenML (cached, resumable)."""

__all__ = ["HELP", "add_arguments", "run"]

HELP = "build a meta-dataset from prior runs on OpenML (cached, resumable)"


def add_arguments(p) -> None:
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
    p.add_argument("--force", action="store_true", help="let --out replace an existing file that is not meta-data "
                   "algorank saved")
    p.add_argument("--server", default=None, metavar="URL", help="OpenML API URL (default: www.openml.org)")
    p.add_argument("--page-size", type=int, default=10000, metavar="N", help="rows per listing page")
    p.add_argument("--retries", type=int, default=4, metavar="N", help="attempts per request")
    p.add_argument("--backoff", type=float, default=1.0, metavar="S", help="first retry wait (doubles)")
    p.add_argument("--timeout", type=float, default=120.0, metavar="S", help="seconds per request")
    p.add_argument("--json", action="store_true", help="print the coverage report as one JSON object")
    p.add_argument("--quiet", action="store_true", help="no progress bar or log messages")


def run(args):
    from algorank.api import pull

    result = pull(out=args.out, suite=args.suite, tasks=args.tasks, tag=args.tag, flows=args.flows,
                  top_flows=args.top_flows, measure=args.measure, runtime_measure=args.runtime_measure,
                  cache_dir=args.cache, offline=args.offline, server=args.server, page_size=args.page_size,
                  retries=args.retries, backoff=args.backoff, timeout=args.timeout, progress=not args.quiet,
                  force=args.force)
    return result.coverage
