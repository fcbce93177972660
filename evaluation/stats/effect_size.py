"""Effect sizes and confidence intervals of paired differences: how much better, not only whether.

* :func:`cliffs_delta` (Cliff 1993): ``P(X > Y) - P(X < Y)`` over all pairs of one value of
  ``x`` and one of ``y`` (the two samples as groups; over datasets, "how often is a
  score of x above a score of y").  Equals ``2 U / (n m) - 1`` with the Mann-Whitney
  ``U`` of x (ties count one half).  In [-1, 1]; Romano et al.'s thresholds |d| < 0.147
  negligible, < 0.33 small, < 0.474 medium, else large (:func:`magnitude`).
* :func:`paired_dominance`: the matched-pairs version, ``(#(x_i > y_i) - #(x_i < y_i)) / n``.
* :func:`rank_biserial` (matched pairs, Kerby 2014): ``(R+ - R-) / (R+ + R-)`` from the
  Wilcoxon signed ranks of ``d = x - y``, with the same zero handling as
  :func:`~evaluation.stats.wilcoxon_signed_rank`.  In [-1, 1]; +1 when every
  non-zero difference favours x.
* :func:`kendall_w` (Kendall's coefficient of concordance) of a datasets x learners
  table: ``W = chi2_F / (N (k - 1))`` with Friedman's statistic without tie
  correction, i.e. ``12 S / (N^2 (k^3 - k))``, ``S = sum_j (R_j - N (k + 1) / 2)^2``.
  0 = no agreement between datasets on the order of the learners, 1 = all datasets
  rank them the same.  Without ties the mean Spearman correlation between the
  datasets' rankings is ``(N W - 1) / (N - 1)``.
* :func:`paired_difference_ci`: confidence interval of the mean of ``d = x - y``:
  ``"t"`` (``mean +- t_{(1+c)/2, n-1} s / sqrt(n)``, as
  ``scipy.stats.ttest_rel(...).confidence_interval``) or ``"bootstrap"`` (percentile
  bootstrap of the mean with ``n_resamples`` resamples drawn by
  ``numpy.random.default_rng(random_state).integers(0, n, (n_resamples, n))``: the same
  draws, hence the same interval, as ``scipy.stats.bootstrap(..., method="percentile")``
  with the same generator).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats

from algorank.metadata.errors import InputError
from algorank.metadata.io import to_plain

from ._validate import as_float_array, check_choice, check_confidence, paired_arrays

__all__ = [
    "ConfidenceInterval",
    "CI_METHODS",
    "cliffs_delta",
    "paired_dominance",
    "rank_biserial",
    "kendall_w",
    "paired_difference_ci",
    "magnitude",
]

#: Methods of :func:`paired_difference_ci`.
CI_METHODS = ("t", "bootstrap")


@dataclass(frozen=True)
class ConfidenceInterval:
    """A confidence interval of the mean paired difference ``x - y``.

    Attributes
    ----------
    low, high : float
        The interval.
    estimate : float
        Mean difference.
    confidence : float
        Confidence level in (0, 1).
    method : str
        ``"t"`` or ``"bootstrap"`` with its details.
    n : int
        Number of pairs.
    """

    low: float
    high: float
    estimate: float
    confidence: float
    method: str
    n: int

    def to_dict(self) -> dict:
        """JSON-friendly dict of all fields."""
        return to_plain(asdict(self))


def _sample(name: str, x) -> np.ndarray:
    a = as_float_array(name, x).ravel()
    if np.isnan(a).any():
        raise InputError(f"{name} contains NaN; remove the missing values first")
    if a.size == 0:
        raise InputError(f"{name} must not be empty")
    return a


def cliffs_delta(x, y) -> float:
    """Cliff's delta ``P(X > Y) - P(X < Y)`` of two samples (all ``n * m`` pairs, O((n + m) log m)).

    Parameters
    ----------
    x, y : array_like
        The two samples (any lengths; no NaN).

    Returns
    -------
    float
        In [-1, 1]; positive when x tends to be larger.
    """
    a, b = _sample("x", x), _sample("y", y)
    b = np.sort(b)
    below = np.searchsorted(b, a, side="left")  # y values < x_i
    above = b.size - np.searchsorted(b, a, side="right")  # y values > x_i
    return float((below.sum() - above.sum()) / (a.size * b.size))


def paired_dominance(x, y) -> float:
    """Matched-pairs dominance ``(#(x_i > y_i) - #(x_i < y_i)) / n`` (ties count zero)."""
    a, b, _ = paired_arrays(x, y, nan_policy="raise", min_n=1)
    return float((np.sum(a > b) - np.sum(a < b)) / a.size)


def rank_biserial(x, y, *, zero_method: str = "wilcox") -> float:
    """Matched-pairs rank-biserial correlation ``(R+ - R-) / (R+ + R-)`` of ``d = x - y``.

    Parameters
    ----------
    x, y : array_like of shape (n,)
        Paired values.
    zero_method : {"wilcox", "pratt", "zsplit"}
        As in :func:`~evaluation.stats.wilcoxon_signed_rank`: drop zero differences
        before ranking (``"wilcox"``, default), rank them and drop them from both
        sums (``"pratt"``), or split their ranks evenly (``"zsplit"``, which
        shrinks r towards 0).

    Returns
    -------
    float
        In [-1, 1]; 0 when every difference is zero.
    """
    check_choice("zero_method", zero_method, ("wilcox", "pratt", "zsplit"))
    a, b, _ = paired_arrays(x, y, nan_policy="raise", min_n=1)
    d = a - b
    if zero_method == "wilcox":
        d = d[d != 0]
    if d.size == 0 or not np.any(d != 0):
        return 0.0
    r = stats.rankdata(np.abs(d))
    plus, minus = float(r[d > 0].sum()), float(r[d < 0].sum())
    total = plus + minus + (float(r[d == 0].sum()) if zero_method == "zsplit" else 0.0)
    return (plus - minus) / total


def kendall_w(scores, *, lower_is_better: bool = False) -> float:
    """Kendall's W of a complete datasets x learners table (no tie correction; see the module docstring).

    Parameters
    ----------
    scores : array_like of shape (N, k)
        One row per dataset (rater), one column per learner (item); no NaN.
    lower_is_better : bool
        Direction of the scores (W itself does not depend on it).
    """
    s = as_float_array("scores", scores, ndim=2)
    if np.isnan(s).any():
        raise InputError("scores contains NaN: Kendall's W needs complete rows (drop incomplete datasets)")
    n, k = s.shape
    if n < 1 or k < 2:
        raise InputError(f"scores must have at least 1 row and 2 columns; got shape {s.shape}")
    ranks = stats.rankdata(s if lower_is_better else -s, axis=1)
    total = ranks.sum(axis=0)
    big_s = float(((total - n * (k + 1) / 2.0) ** 2).sum())
    return 12.0 * big_s / (n * n * (k ** 3 - k))


def paired_difference_ci(x, y, *, confidence: float = 0.95, method: str = "t", n_resamples: int = 9999,
                         random_state=None) -> ConfidenceInterval:
    """Confidence interval of the mean paired difference ``x - y``.

    Parameters
    ----------
    x, y : array_like of shape (n,)
        Paired values (pairs with a NaN are dropped).
    confidence : float
        Level in (0, 1).
    method : {"t", "bootstrap"}
        Student t interval, or the percentile bootstrap of the mean.
    n_resamples : int
        Bootstrap resamples.
    random_state : int or numpy Generator, optional
        Seed of the bootstrap (same seed, same interval, bit for bit).

    Returns
    -------
    ConfidenceInterval
        A zero-width interval when every difference is equal.
    """
    check_choice("method", method, CI_METHODS)
    c = check_confidence(confidence)
    a, b, _ = paired_arrays(x, y, nan_policy="omit", min_n=2)
    d = a - b
    n = d.size
    mean = float(d.mean())
    if method == "t":
        se = float(d.std(ddof=1)) / math.sqrt(n)
        half = float(stats.t.ppf((1.0 + c) / 2.0, n - 1)) * se
        return ConfidenceInterval(mean - half, mean + half, mean, c, "t (Student, n - 1 df)", n)
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 1:
        raise InputError(f"n_resamples must be a positive integer; got {n_resamples!r}")
    rng = random_state if isinstance(random_state, np.random.Generator) else np.random.default_rng(random_state)
    idx = rng.integers(0, n, (int(n_resamples), n))
    means = d[idx].mean(axis=-1)
    alpha = (1.0 - c) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return ConfidenceInterval(float(low), float(high), mean, c,
                              f"percentile bootstrap of the mean ({int(n_resamples)} resamples)", n)


def magnitude(delta: float) -> str:
    """Romano et al. (2006) label of a Cliff's delta: negligible, small, medium or large."""
    a = abs(float(delta))
    if math.isnan(a):
        return "n/a"
    return "negligible" if a < 0.147 else "small" if a < 0.33 else "medium" if a < 0.474 else "large"
