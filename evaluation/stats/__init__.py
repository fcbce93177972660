"""Statistical tests for comparing learners (scipy.stats style: validate -> statistic -> frozen result).

* two learners, one dataset: :mod:`.pairwise`
* two learners, many datasets: :mod:`.over_datasets`
* many learners, many datasets: :mod:`.multiple` (Friedman, post hoc procedures)

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
