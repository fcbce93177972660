"""``algorank multitest``: Multi2Test: cost-conscious learner order with statistics (Ulas et al. 2012)."""

from algorank.commands.options import add_common, add_verbose, items

__all__ = ["HELP", "add_arguments", "run"]

HELP = "Multi2Test: cost-conscious learner order with statistics (Ulas et al. 2012)"


def add_arguments(p) -> None:
    add_common(p, out=True)
    add_verbose(p, detail="every significant pair of the post hoc test")
    p.add_argument("--learners", nargs="+", metavar="ID", help="learners to compare (ids or short names, "
                   "space- or comma-separated; default: all)")
    p.add_argument("--cost", default="fit_time", metavar="KIND|LIST",
                   help="cost prior: fit_time (default), fit_predict_time, model_bytes, none (equal costs: "
                        "accuracy-only meta-data), or a comma-separated learner order, cheapest first")
    p.add_argument("--pairwise", default="auto", metavar="TEST",
                   help="first-pass one-sided test: auto (from the folds), corrected_resampled_t, corrected_kfold_t, "
                        "combined_5x2cv_t, dietterich_5x2cv_t, paired_t")
    p.add_argument("--posthoc", default="bergmann", metavar="METHOD",
                   help="second-pass post hoc test: nemenyi, bonferroni-dunn, holm, shaffer, bergmann (default; "
                        "falls back to shaffer above 10 learners)")
    p.add_argument("--correction", default="holm", metavar="METHOD", help="first-pass correction: holm, bonferroni, none")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level in (0, 1) (default 0.05)")
    p.add_argument("--test-train-ratio", type=float, default=None, metavar="R",
                   help="n_test/n_train of repeated holdout splits (default: LCDB's 0.1/0.81)")
    p.add_argument("--missing", choices=("auto", "drop"), default="auto",
                   help="datasets where some learner has no runs: auto (default) uses them with Durbin or "
                        "Skillings-Mack; drop keeps only complete datasets and Friedman")
    p.add_argument("--n-jobs", type=int, default=None, metavar="N",
                   help="threads of the per-dataset pass (default: the CPUs, at most 8; -1: all); "
                        "the result does not depend on it")


def run(args):
    from algorank.api import multitest

    return multitest(args.meta, learners=items(args.learners), cost=args.cost, pairwise=args.pairwise,
                     posthoc_method=args.posthoc, correction=args.correction, alpha=args.alpha,
                     test_train_ratio=args.test_train_ratio, missing=args.missing, progress=not args.quiet,
                     n_jobs=args.n_jobs)
