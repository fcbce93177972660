"""``algorank compare``: compare learners over datasets: Friedman / Skillings-Mack, post hoc, effect sizes,
intervals, Bayesian signed-rank.
"""

from algorank.commands.options import add_common, items

__all__ = ["HELP", "add_arguments", "run"]

HELP = "compare learners over datasets: Friedman / Skillings-Mack, post hoc, effect sizes, intervals, Bayesian signed-rank"


def add_arguments(p) -> None:
    add_common(p, out=True)
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


def run(args):
    from algorank.api import compare

    return compare(args.meta, learners=items(args.learners), metric=args.metric, control=args.control,
                   posthoc_method=args.posthoc, control_method=args.control_method, alpha=args.alpha,
                   confidence=args.confidence, ci_method=args.ci, bayes=not args.no_bayes, rope=args.rope,
                   nsamples=args.bayes_samples, random_state=args.seed, progress=not args.quiet)
