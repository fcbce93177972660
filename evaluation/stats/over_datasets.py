"""Two learners compared over many datasets: Wilcoxon signed-rank and sign test.

Each dataset contributes one paired observation (for example the mean accuracy
of learner x and of learner y on that dataset), as in Demsar (2006).
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from ._result import TestResult
from ._validate import check_alternative, check_choice, paired_arrays
from .effect_size import paired_difference_ci

__all__ = ["wilcoxon_signed_rank", "sign_test", "wilcoxon_exact_distribution"]

_ZERO_METHODS = ("pratt", "wilcox", "zsplit")
_EXACT_MAX_N = 50


def wilcoxon_exact_distribution(doubled_ranks) -> np.ndarray:
    """Exact null distribution of ``2 * R+`` for the given doubled (integer) ranks.

    Under H0 every sign pattern is equally likely, so ``R+`` is the sum of a
    uniformly random subset of the ranks.  Doubled ranks are integers even with
    mid-ranks for ties, so the distribution is a subset-sum count (dynamic
    programming, O(n * sum)), exact with or without ties.

    Returns
    -------
    ndarray
        ``pmf[s] = P(2 R+ = s)`` for ``s = 0 .. sum(doubled_ranks)``.
    """
    r = np.asarray(doubled_ranks, dtype=np.int64)
    total = int(r.sum())
    counts = np.zeros(total + 1, dtype=float)
    counts[0] = 1.0
    for v in r:
        if v == 0:
            counts = counts * 2.0
            continue
        shifted = np.zeros_like(counts)
        shifted[v:] = counts[:-v] if v > 0 else counts
        counts = counts + shifted
    return counts / counts.sum()


def wilcoxon_signed_rank(x, y, *, alternative: str = "two-sided", zero_method: str = "pratt",
                         correction: bool = False, method: str = "auto",
                         nan_policy: str = "propagate", confidence: float = 0.95) -> TestResult:
    """Wilcoxon signed-rank test on paired samples (``d = x - y``).

    Parameters
    ----------
    x, y : array_like of shape (n,)
        Paired values (e.g. the accuracies of two learners on n datasets).
    alternative : {"two-sided", "less", "greater"}
        ``"greater"``: the differences ``x - y`` are shifted above zero.
    zero_method : {"pratt", "wilcox", "zsplit"}
        ``"pratt"`` ranks zeros with the others and then drops them from the
        sums; ``"wilcox"`` drops zeros first; ``"zsplit"`` (Demsar 2006) splits
        the ranks of zero differences evenly between R+ and R-.  Same meaning
        as in :func:`scipy.stats.wilcoxon`.
    correction : bool
        Continuity correction of the normal approximation.
    method : {"auto", "exact", "asymptotic"}
        ``"exact"`` enumerates the null distribution of R+ over sign patterns
        (exact also with ties and zeros); ``"auto"`` uses it when at most 50
        differences are non-zero, else the normal approximation with tie and
        zero corrections (the same formulas as scipy).
    nan_policy : {"propagate", "omit", "raise"}
    confidence : float
        Level of the t interval of the mean difference reported in the result.

    Returns
    -------
    TestResult
        ``statistic`` is ``min(R+, R-)`` for two-sided tests and ``R+`` otherwise
        (scipy's convention); ``n`` the number of non-zero differences;
        ``effect_size`` the matched-pairs rank-biserial correlation
        ``(R+ - R-) / (R+ + R-)`` with the same zero handling
        (:func:`~evaluation.stats.rank_biserial`); ``ci_low``/``ci_high`` the t
        interval of the mean of ``x - y`` (:func:`~evaluation.stats.paired_difference_ci`).

    Notes
    -----
    All differences zero: ``statistic = 0``, ``pvalue = 1`` (no evidence either way).
    """
    check_alternative(alternative)
    check_choice("zero_method", zero_method, _ZERO_METHODS)
    check_choice("method", method, ("auto", "exact", "asymptotic"))
    x, y, has_nan = paired_arrays(x, y, nan_policy=nan_policy, min_n=1)
    name = f"Wilcoxon signed-rank ({zero_method} zeros)"
    if has_nan:
        return TestResult(np.nan, np.nan, name, alternative, n=int(x.size), note="NaN in input (nan_policy='propagate')")
    d = x - y
    zeros = d == 0
    n_nonzero = int((~zeros).sum())
    effect = {"effect_size_name": f"rank-biserial r ({zero_method} zeros)"}
    if d.size >= 2:
        ci = paired_difference_ci(x, y, confidence=confidence, method="t")
        effect.update(ci_low=ci.low, ci_high=ci.high, ci_method=f"{ci.confidence:.0%} t interval of the mean difference")
    if n_nonzero == 0:
        return TestResult(0.0, 1.0, name, alternative, n=0, estimate=0.0,
                          note="all differences are zero: p = 1", effect_size=0.0, **effect)
    dd = d[~zeros] if zero_method == "wilcox" else d
    ranks = stats.rankdata(np.abs(dd))
    pos, neg, zz = dd > 0, dd < 0, dd == 0
    r_plus = float(ranks[pos].sum())
    r_minus = float(ranks[neg].sum())
    if zero_method == "zsplit":
        half = float(ranks[zz].sum()) / 2.0
        r_plus += half
        r_minus += half
    use_exact = method == "exact" or (method == "auto" and n_nonzero <= _EXACT_MAX_N)
    if use_exact:
        shift2 = int(round(2 * (r_plus - float(ranks[pos].sum()))))  # zsplit constant, doubled
        pmf = wilcoxon_exact_distribution(np.rint(2 * ranks[pos | neg]).astype(np.int64))
        obs2 = int(round(2 * r_plus)) - shift2
        cdf = np.cumsum(pmf)
        p_less = float(cdf[obs2])
        p_greater = float(pmf[obs2:].sum())
        if alternative == "less":
            p = p_less
        elif alternative == "greater":
            p = p_greater
        else:
            p = min(1.0, 2.0 * min(p_less, p_greater))
        used = "exact"
    else:
        count = float(dd.size)
        mn = count * (count + 1) / 4.0
        var = count * (count + 1) * (2 * count + 1)
        _, tie_sizes = np.unique(ranks[~zz] if zero_method == "pratt" else ranks, return_counts=True)
        if zero_method == "pratt":
            nz = float(zz.sum())
            mn -= nz * (nz + 1) / 4.0
            var -= nz * (nz + 1) * (2 * nz + 1)
        var -= float((tie_sizes ** 3 - tie_sizes).sum()) / 2.0
        se = np.sqrt(var / 24.0)
        z = (r_plus - mn) / se
        if correction:
            sign = {"greater": 1.0, "less": -1.0}.get(alternative, float(np.sign(z)))
            z -= sign * 0.5 / se
        if alternative == "less":
            p = float(stats.norm.cdf(z))
        elif alternative == "greater":
            p = float(stats.norm.sf(z))
        else:
            p = float(min(1.0, 2.0 * stats.norm.sf(abs(z))))
        used = "normal approximation" + (" with continuity correction" if correction else "")
    stat = min(r_plus, r_minus) if alternative == "two-sided" else r_plus
    return TestResult(float(stat), float(p), f"{name}, {used}", alternative, n=n_nonzero,
                      estimate=float(np.median(d)), effect_size=(r_plus - r_minus) / (r_plus + r_minus), **effect)


def sign_test(x, y, *, alternative: str = "two-sided", ties: str = "split",
              nan_policy: str = "propagate") -> TestResult:
    """Sign test over datasets: counts of wins of ``x`` over ``y`` against Binomial(n, 1/2).

    Parameters
    ----------
    x, y : array_like of shape (n,)
        Paired values, higher is better (e.g. accuracies on n datasets).
    alternative : {"two-sided", "less", "greater"}
        ``"greater"``: x wins more often than y.
    ties : {"split", "drop"}
        ``"split"`` (Demsar 2006): ties count half for each learner; with an
        odd number of ties one is ignored.  ``"drop"``: ties are discarded.
    nan_policy : {"propagate", "omit", "raise"}

    Returns
    -------
    TestResult
        ``statistic`` = number of wins of x (ties included as described),
        ``n`` = number of trials, ``estimate`` = wins / n.  The p-value equals
        ``scipy.stats.binomtest(wins, n, 0.5, alternative).pvalue``.
        ``effect_size`` is the matched-pairs dominance ``(#(x > y) - #(x < y)) / n_pairs``
        over all pairs (ties count zero; :func:`~evaluation.stats.paired_dominance`).
    """
    check_alternative(alternative)
    check_choice("ties", ties, ("split", "drop"))
    x, y, has_nan = paired_arrays(x, y, nan_policy=nan_policy, min_n=1)
    name = f"sign test ({ties} ties)"
    if has_nan:
        return TestResult(np.nan, np.nan, name, alternative, n=int(x.size), note="NaN in input (nan_policy='propagate')")
    wins = int((x > y).sum())
    losses = int((x < y).sum())
    n_ties = int((x == y).sum())
    if ties == "split":
        wins += n_ties // 2
        losses += n_ties // 2
    n = wins + losses
    effect = {"effect_size": float((np.sum(x > y) - np.sum(x < y)) / x.size),
              "effect_size_name": "matched-pairs dominance (wins - losses) / pairs"}
    if n == 0:
        return TestResult(0.0, 1.0, name, alternative, n=0, note="no informative pairs (all ties): p = 1", **effect)
    p = float(stats.binomtest(wins, n, 0.5, alternative=alternative).pvalue)
    return TestResult(float(wins), p, name, alternative, n=n, estimate=wins / n,
                      note=f"{n_ties} tie(s)" if n_ties else "", **effect)
