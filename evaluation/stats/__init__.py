"""Statistical tests for comparing learners (scipy.stats style: validate -> statistic -> frozen result).

* two learners, one dataset: :mod:`.pairwise`
* two learners, many datasets: :mod:`.over_datasets`
* many learners, many datasets: :mod:`.multiple` (Friedman, post hoc procedures)
* ... with missing cells: :mod:`.skillings_mack` (Skillings-Mack, Durbin, ``omnibus``)
* effect sizes and intervals: :mod:`.effect_size`
* one control against all others (Holm, Hochberg, Finner, Bonferroni-Dunn): :mod:`.control`
* Bayesian signed-rank and correlated t-tests with a ROPE: :mod:`.bayesian`

Bad input raises :class:`algorank.metadata.errors.InputError` naming the parameter.
"""

from ._result import FriedmanResult, PosthocResult, TestResult
from .multiple import (
    BERGMANN_MAX_EXACT_K,
    POSTHOC_METHODS,
    bell_number,
    bergmann_hommel_adjust,
    critical_difference,
    exhaustive_sets,
    friedman,
    holm_adjust,
    nemenyi_q,
    pairwise_z,
    posthoc,
    rank_rows,
    shaffer_adjust,
    shaffer_sets,
)
from .bayesian import (
    DEFAULT_ROPE,
    BayesianResult,
    bayesian_correlated_t,
    bayesian_signed_rank,
    plot_posterior,
)
from .control import (
    CONTROL_METHODS,
    ControlResult,
    bonferroni_adjust,
    control_vs_all,
    finner_adjust,
    hochberg_adjust,
)
from .effect_size import (
    CI_METHODS,
    ConfidenceInterval,
    cliffs_delta,
    kendall_w,
    magnitude,
    paired_difference_ci,
    paired_dominance,
    rank_biserial,
)
from .skillings_mack import (
    IncompleteBlockResult,
    bibd_parameters,
    durbin,
    omnibus,
    omnibus_pairwise_z,
    rescaled_average_ranks,
    skillings_mack,
)
from .over_datasets import sign_test, wilcoxon_exact_distribution, wilcoxon_signed_rank
from .pairwise import (
    combined_5x2cv_f,
    combined_5x2cv_t,
    corrected_repeated_kfold_t,
    corrected_resampled_t,
    dietterich_5x2cv_t,
    mcnemar,
    mcnemar_from_counts,
    paired_t,
    t_pvalue,
)

__all__ = [
    "TestResult",
    "FriedmanResult",
    "PosthocResult",
    "IncompleteBlockResult",
    "CONTROL_METHODS",
    "ControlResult",
    "bonferroni_adjust",
    "control_vs_all",
    "finner_adjust",
    "hochberg_adjust",
    "DEFAULT_ROPE",
    "BayesianResult",
    "bayesian_correlated_t",
    "bayesian_signed_rank",
    "plot_posterior",
    "CI_METHODS",
    "ConfidenceInterval",
    "cliffs_delta",
    "kendall_w",
    "magnitude",
    "paired_difference_ci",
    "paired_dominance",
    "rank_biserial",
    "bibd_parameters",
    "durbin",
    "omnibus",
    "omnibus_pairwise_z",
    "rescaled_average_ranks",
    "skillings_mack",
    "BERGMANN_MAX_EXACT_K",
    "POSTHOC_METHODS",
    "bell_number",
    "bergmann_hommel_adjust",
    "critical_difference",
    "exhaustive_sets",
    "friedman",
    "holm_adjust",
    "nemenyi_q",
    "pairwise_z",
    "posthoc",
    "rank_rows",
    "shaffer_adjust",
    "shaffer_sets",
    "sign_test",
    "wilcoxon_exact_distribution",
    "wilcoxon_signed_rank",
    "combined_5x2cv_f",
    "combined_5x2cv_t",
    "corrected_repeated_kfold_t",
    "corrected_resampled_t",
    "dietterich_5x2cv_t",
    "mcnemar",
    "mcnemar_from_counts",
    "paired_t",
    "t_pvalue",
]
