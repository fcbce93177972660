"""Frozen result objects of the statistical tests (scipy.stats style).

Every test returns one of these; ``statistic``, ``pvalue`` and ``method`` are
always present, the extras depend on the test.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from algorank.metadata.io import to_plain

__all__ = ["TestResult", "FriedmanResult", "PosthocResult"]


@dataclass(frozen=True)
class TestResult:
    """Result of a test comparing two learners (on one dataset or over datasets).

    Attributes
    ----------
    statistic : float
        The test statistic (t, F, chi-square, W, number of wins, ...).
    pvalue : float
        p-value for ``alternative``.
    method : str
        Human-readable name of the test and the variant used.
    alternative : str
        ``"two-sided"``, ``"less"`` or ``"greater"``; ``"less"`` means the
        alternative hypothesis is that ``x`` is *smaller* than ``y``.
    df : float or tuple of float or None
        Degrees of freedom of the reference distribution (None when not a t/F/chi2 test).
    n : int
        Number of paired observations used (after ``nan_policy="omit"`` or zero handling).
    estimate : float
        Point estimate of the effect (mean difference ``x - y`` for t tests,
        ``nan`` when the test has none).
    note : str
        Anything the caller must know (zero variance, exact vs asymptotic, ...).
    effect_size : float
        How large the difference is, on a scale that does not grow with n
        (``effect_size_name`` says which: rank-biserial r for Wilcoxon, the
        matched-pairs dominance for the sign test, Cohen's d_z for the plain
        paired t test); NaN when the test reports none.
    effect_size_name : str
    ci_low, ci_high : float
        Confidence interval of the mean difference ``x - y`` (``ci_method`` says
        how and at which level; for the corrected resampled t tests it uses the
        corrected variance); NaN when none.
    ci_method : str
    """

    __test__ = False  # not a pytest class

    statistic: float
    pvalue: float
    method: str
    alternative: str = "two-sided"
    df: float | tuple | None = None
    n: int = 0
    estimate: float = float("nan")
    note: str = ""
    effect_size: float = float("nan")
    effect_size_name: str = ""
    ci_low: float = float("nan")
    ci_high: float = float("nan")
    ci_method: str = ""

    def to_dict(self) -> dict:
        """JSON-friendly dict of all fields."""
        return to_plain(asdict(self))


@dataclass(frozen=True)
class FriedmanResult:
    """Result of :func:`~evaluation.stats.friedman`.

    Attributes
    ----------
    statistic : float
        Friedman's chi-square statistic ``chi2_F`` (see ``tie_correction``).
    pvalue : float
        Upper tail of chi-square with ``k - 1`` degrees of freedom.
    average_ranks : ndarray of shape (k,)
        Mean rank of each learner (1 = best; ties get the mean rank).
    n_datasets, n_learners : int
        N and k actually used (after ``nan_policy="omit"``).
    iman_davenport_statistic : float
        ``F_F = (N - 1) chi2_F / (N (k - 1) - chi2_F)`` (``inf`` under perfect agreement).
    iman_davenport_pvalue : float
        Upper tail of F with ``(k - 1, (k - 1)(N - 1))`` degrees of freedom.
    df : int
        ``k - 1``.
    tie_correction : bool
        Whether the statistic was divided by scipy's tie-correction factor.
    method : str
        Name of the test.
    dropped_datasets : int
        Rows removed by ``nan_policy="omit"``.
    kendall_w : float
        Kendall's coefficient of concordance ``W = chi2_F / (N (k - 1))`` with the
        statistic *without* tie correction (the effect size of Friedman's test:
        0 = the datasets do not agree on an order, 1 = all rank the learners alike).
    """

    statistic: float
    pvalue: float
    average_ranks: np.ndarray = field(repr=False)
    n_datasets: int
    n_learners: int
    iman_davenport_statistic: float
    iman_davenport_pvalue: float
    df: int
    tie_correction: bool = False
    method: str = "Friedman"
    dropped_datasets: int = 0
    kendall_w: float = float("nan")

    def to_dict(self) -> dict:
        """JSON-friendly dict of all fields."""
        return to_plain(asdict(self))


@dataclass(frozen=True)
class PosthocResult:
    """Result of :func:`~evaluation.stats.posthoc` (all-pairwise or versus a control).

    Attributes
    ----------
    method : str
        Procedure actually used (``"shaffer"`` when ``"bergmann"`` fell back).
    requested : str
        Procedure asked for.
    alpha : float
        Family-wise significance level.
    average_ranks : ndarray of shape (k,)
        The input average ranks.
    n_datasets : int
        N.
    z : ndarray of shape (k, k)
        ``z_ij = (R_i - R_j) / sqrt(k (k + 1) / (6 N))``.
    pvalues : ndarray of shape (k, k)
        Unadjusted two-sided p-values (diagonal 1).
    adjusted : ndarray of shape (k, k)
        Adjusted p-values, symmetric, diagonal 1; pairs not tested (versus a
        control) are 1.
    significant : ndarray of shape (k, k) of bool
        ``adjusted <= alpha`` (for Nemenyi equivalently ``|R_i - R_j| > CD``).
    critical_difference : float or None
        CD for ``nemenyi`` and ``bonferroni-dunn``; None otherwise.
    control : int or None
        Index of the control learner (``bonferroni-dunn`` only).
    labels : tuple of str
        Learner names (``"0".."k-1"`` when none were given).
    exact : bool
        False when Bergmann-Hommel fell back to Shaffer.
    note : str
        Fallback and other remarks (empty when nothing to say).
    """

    method: str
    requested: str
    alpha: float
    average_ranks: np.ndarray = field(repr=False)
    n_datasets: int
    z: np.ndarray = field(repr=False)
    pvalues: np.ndarray = field(repr=False)
    adjusted: np.ndarray = field(repr=False)
    significant: np.ndarray = field(repr=False)
    critical_difference: float | None = None
    control: int | None = None
    labels: tuple = ()
    exact: bool = True
    note: str = ""

    def significant_pairs(self) -> list[tuple[str, str]]:
        """``(better, worse)`` label pairs that differ significantly.

        Better = negative ``z`` (the lower average rank for Friedman ranks; the
        lower Skillings-Mack rank sum when ``z`` came from an incomplete design).
        """
        out = []
        k = len(self.average_ranks)
        for i in range(k):
            for j in range(i + 1, k):
                if self.significant[i, j]:
                    a, b = (i, j) if self.z[i, j] < 0 else (j, i)
                    out.append((self.labels[a], self.labels[b]))
        return out

    def to_dict(self) -> dict:
        """JSON-friendly dict of all fields."""
        return to_plain(asdict(self))
