"""Two learners on one dataset: paired t tests for resampled designs and McNemar.

All t tests work on the paired differences ``d = x - y`` of per-split scores
(accuracies or errors, it does not matter as long as both use the same), so
``alternative="greater"`` is "x is larger than y".

Zero variance (all differences equal): ``p = 1`` when every difference is 0,
otherwise the statistic is +-inf and p is 0 (or 1 for the opposite one-sided
alternative).  This is the convention we use for the 5x2 cv tests (Dietterich 1998;
Alpaydin 1999) and apply to every t test here.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from algorank.metadata.errors import InputError

from ._result import TestResult
from ._validate import as_float_array, check_alternative, check_choice, check_confidence, paired_arrays

__all__ = [
    "paired_t",
    "corrected_resampled_t",
    "corrected_repeated_kfold_t",
    "dietterich_5x2cv_t",
    "combined_5x2cv_t",
    "combined_5x2cv_f",
    "mcnemar",
    "mcnemar_from_counts",
    "t_pvalue",
    "T_TESTS",
    "t_test_rows",
]

#: The paired t tests :func:`t_test_rows` runs on many rows of differences at once.
T_TESTS = ("paired_t", "corrected_resampled_t", "corrected_kfold_t", "dietterich_5x2cv_t", "combined_5x2cv_t")


def _t_pvalues(t, df, alternative: str) -> np.ndarray:
    if alternative == "greater":
        return stats.t.sf(t, df)
    if alternative == "less":
        return stats.t.cdf(t, df)
    return np.minimum(1.0, 2.0 * stats.t.sf(np.abs(t), df))


def t_pvalue(t: float, df: float, alternative: str) -> float:
    """p-value of a t statistic with ``df`` degrees of freedom (infinite t allowed)."""
    return float(_t_pvalues(t, df, alternative))


_ZERO_NOTE = "all differences are zero: p = 1"
_DEGENERATE_NOTE = "zero variance of the differences with a non-zero mean: p = 0 (or 1 in the opposite direction)"


def t_test_rows(d, test: str, *, alternative: str = "two-sided", test_train_ratio: float | None = None,
                n_folds: int | None = None) -> tuple[np.ndarray, np.ndarray, int]:
    """The paired t tests of this module on every row of differences at once.

    The one implementation of the statistics: :func:`paired_t`, :func:`corrected_resampled_t`,
    :func:`corrected_repeated_kfold_t`, :func:`dietterich_5x2cv_t` and :func:`combined_5x2cv_t`
    call it with one row; MultiTest calls it with one row per pair of learners.

    Parameters
    ----------
    d : array_like of shape (m, n)
        Paired differences ``x - y``, one test per row (5x2 tests: ``n = 10``, replication-major).
    test : str
        One of :data:`T_TESTS`.
    alternative : {"two-sided", "greater", "less"}
        ``"greater"``: x is larger than y.
    test_train_ratio : float
        ``n_test / n_train`` of the corrected resampled t test.
    n_folds : int
        k of the corrected repeated k-fold cv t test (``n_test / n_train = 1 / (k - 1)``).

    Returns
    -------
    t, p : ndarray of shape (m,)
        Statistics and p-values; a row with zero variance (module docstring) has ``t = 0, p = 1``
        when its mean (Dietterich: its first difference) is 0, else ``t = +-inf``.
    df : int
    """
    check_choice("test", test, T_TESTS)
    check_alternative(alternative)
    d = np.atleast_2d(np.asarray(d, dtype=float))
    m, n = d.shape
    if test in ("dietterich_5x2cv_t", "combined_5x2cv_t"):
        p5 = d.reshape(m, 5, 2)
        s2 = ((p5 - p5.mean(axis=2, keepdims=True)) ** 2).sum(axis=(1, 2))
        combined = test == "combined_5x2cv_t"
        num = p5.mean(axis=(1, 2)) if combined else p5[:, 0, 0]
        scale2 = s2 / 5.0 / 10.0 if combined else s2 / 5.0
        df = 5
    else:
        num = d.mean(axis=1)
        s2 = d.var(axis=1, ddof=1) if n > 1 else np.zeros(m)
        extra = {"paired_t": 0.0, "corrected_resampled_t": test_train_ratio or 0.0,
                 "corrected_kfold_t": 1.0 / ((n_folds or 2) - 1)}[test]
        scale2 = (1.0 / n + extra) * s2
        df = n - 1
    zero = (s2 <= 1e-300) | (np.ptp(d, axis=1) == 0 if n else True)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(zero, np.copysign(np.inf, num), num / np.sqrt(np.where(zero, 1.0, scale2)))
    t = np.where(zero & (num == 0), 0.0, t)
    p = np.asarray(_t_pvalues(t, df, alternative), dtype=float)  # t = +-inf: p = 0 or 1
    return t, np.where(zero & (num == 0), 1.0, p), df


def _t_from(d: np.ndarray, test: str, alternative: str, name: str, *, test_train_ratio: float = 0.0,
            confidence: float = 0.95, cohen: bool = False) -> TestResult:
    """A resampled t test of mean(d) (:func:`t_test_rows`), plus the matching two-sided CI of the mean."""
    c = check_confidence(confidence)
    t, p, df = t_test_rows(d[None, :], test, alternative=alternative, test_train_ratio=test_train_ratio)
    t, p = float(t[0]), float(p[0])
    mean = float(d.mean())
    var = float(d.var(ddof=1))
    ci_name = f"{c:.0%} t interval of the mean difference" + ("" if test == "paired_t" else " (corrected variance)")
    extra = {"effect_size_name": "Cohen's d_z (mean / sd of the differences)" if cohen else "",
             "ci_method": ci_name}
    if not math.isfinite(t) or (t == 0 and np.ptp(d) == 0):
        note = _ZERO_NOTE if mean == 0 else _DEGENERATE_NOTE
        dz = float("nan") if not cohen else (0.0 if mean == 0 else math.copysign(math.inf, mean))
        return TestResult(t, p, name, alternative, df=df, n=int(d.size), estimate=mean, note=note,
                          effect_size=dz, ci_low=mean, ci_high=mean, **extra)
    se = math.sqrt((1.0 / d.size + test_train_ratio) * var)
    half = float(stats.t.ppf((1.0 + c) / 2.0, df)) * se
    return TestResult(t, p, name, alternative, df=df, n=int(d.size), estimate=mean,
                      effect_size=mean / math.sqrt(var) if cohen else float("nan"),
                      ci_low=mean - half, ci_high=mean + half, **extra)


def paired_t(x, y, *, alternative: str = "two-sided", nan_policy: str = "propagate",
             confidence: float = 0.95) -> TestResult:
    """Ordinary paired t test (``scipy.stats.ttest_rel``): ``t = dbar / sqrt(var(d) / n)``, df = n - 1.

    Too liberal for overlapping training sets (resampling, CV): use
    :func:`corrected_resampled_t` or :func:`corrected_repeated_kfold_t` there.
    The result carries Cohen's ``d_z = dbar / sd(d)`` and the ``confidence`` t
    interval of the mean difference (``ttest_rel(...).confidence_interval``).
    """
    check_alternative(alternative)
    x, y, nan = paired_arrays(x, y, nan_policy=nan_policy)
    if nan:
        return TestResult(np.nan, np.nan, "paired t", alternative, n=int(x.size))
    d = x - y
    return _t_from(d, "paired_t", alternative, "paired t", confidence=confidence, cohen=True)


def corrected_resampled_t(x, y, *, test_train_ratio: float, alternative: str = "two-sided",
                          nan_policy: str = "propagate", confidence: float = 0.95) -> TestResult:
    """Corrected resampled t test (Nadeau and Bengio 2003; Weka Experimenter).

    ``t = dbar / sqrt((1/J + n_test/n_train) var(d))`` with df = J - 1 over J
    paired random train/test splits.

    Parameters
    ----------
    x, y : array_like of shape (J,)
        Paired per-split scores.
    test_train_ratio : float
        ``n_test / n_train`` of one split (> 0).  For LCDB's splits (test 10 %
        of the data, training on up to 90 % of the remaining 90 %) it is
        ``0.1 / 0.81``; see :data:`algorank.recommender.multitest.LCDB_TEST_TRAIN_RATIO`.
    confidence : float
        Level of the interval of the mean difference in the result, built with the
        same corrected variance: ``dbar +- t_{(1+c)/2, J-1} sqrt((1/J + ratio) var(d))``.
    """
    check_alternative(alternative)
    try:
        ratio = float(test_train_ratio)
    except (TypeError, ValueError):
        raise InputError(f"test_train_ratio must be a positive number; got {test_train_ratio!r}") from None
    if not ratio > 0 or not math.isfinite(ratio):
        raise InputError(f"test_train_ratio must be a positive number (n_test / n_train); got {test_train_ratio!r}")
    x, y, nan = paired_arrays(x, y, nan_policy=nan_policy)
    name = f"corrected resampled t (Nadeau-Bengio, n_test/n_train = {ratio:.4g})"
    if nan:
        return TestResult(np.nan, np.nan, name, alternative, n=int(x.size))
    d = x - y
    return _t_from(d, "corrected_resampled_t", alternative, name, test_train_ratio=ratio, confidence=confidence)


def corrected_repeated_kfold_t(x, y, *, n_folds: int, alternative: str = "two-sided",
                               nan_policy: str = "propagate", confidence: float = 0.95) -> TestResult:
    """Corrected repeated k-fold cv t test (Bouckaert and Frank 2004).

    The corrected resampled t test with ``J = r * k`` fold results and
    ``n_test / n_train = 1 / (k - 1)``; df = ``J - 1``.

    Parameters
    ----------
    x, y : array_like of shape (r * k,)
        Paired per-fold scores of r repetitions of k-fold cross-validation.
    n_folds : int
        k (at least 2); the length of ``x`` must be a multiple of it.
    """
    if not isinstance(n_folds, (int, np.integer)) or n_folds < 2:
        raise InputError(f"n_folds must be an integer >= 2; got {n_folds!r}")
    xs = np.asarray(x).ravel()
    if xs.size % int(n_folds):
        raise InputError(f"x must hold r * n_folds values (complete repetitions); got {xs.size} with n_folds = {n_folds}")
    res = corrected_resampled_t(x, y, test_train_ratio=1.0 / (int(n_folds) - 1), alternative=alternative,
                                nan_policy=nan_policy, confidence=confidence)
    from dataclasses import replace

    return replace(res, method=f"corrected repeated {n_folds}-fold cv t")


def _five_by_two(x, y) -> np.ndarray:
    x = as_float_array("x", x)
    y = as_float_array("y", y)
    if x.shape != y.shape:
        raise InputError(f"x and y must have the same shape; got {x.shape} and {y.shape}")
    if x.size != 10:
        raise InputError(f"5x2 cv tests need exactly 5 replications x 2 folds = 10 paired scores; got {x.size}")
    p = (x - y).reshape(5, 2)
    if np.isnan(p).any():
        raise InputError("5x2 cv tests need all 10 paired scores; got NaN")
    return p


def _five_by_two_var(p: np.ndarray) -> float:
    """``sum_i s_i^2`` with ``s_i^2 = sum_j (p_i^(j) - pbar_i)^2``."""
    return float(((p - p.mean(axis=1, keepdims=True)) ** 2).sum())


def dietterich_5x2cv_t(x, y, *, alternative: str = "two-sided") -> TestResult:
    """Dietterich's 5x2 cv paired t test: ``t = p_1^(1) / sqrt(sum_i s_i^2 / 5)`` ~ t5.

    Parameters
    ----------
    x, y : array_like of shape (5, 2) or (10,)
        Per-fold scores, replication-major (``[r0f0, r0f1, r1f0, ...]``).
    """
    return _five_by_two_t(x, y, "dietterich_5x2cv_t", "Dietterich 5x2 cv t", alternative)


def combined_5x2cv_t(x, y, *, alternative: str = "two-sided") -> TestResult:
    """Combined 5x2 cv t test: the mean of all ten differences over its estimated standard error.

    ``t = pbar / sqrt(sigma2 / 10)`` with ``sigma2 = sum_i s_i^2 / 5`` (5 df), i.e.
    Dietterich's variance estimate applied to the mean of the ten differences
    instead of the single ``p_1^(1)``; referred to t with 5 df.  Signed, so it
    can answer MultiTest's one-sided question.
    """
    return _five_by_two_t(x, y, "combined_5x2cv_t", "combined 5x2 cv t", alternative)


def _five_by_two_t(x, y, test: str, name: str, alternative: str) -> TestResult:
    check_alternative(alternative)
    p = _five_by_two(x, y)
    t, pv, df = t_test_rows(p.reshape(1, 10), test, alternative=alternative)
    t, pv = float(t[0]), float(pv[0])
    note = ""
    if not math.isfinite(t):
        note = _DEGENERATE_NOTE
    elif _five_by_two_var(p) <= 1e-300:
        note = _ZERO_NOTE
    return TestResult(t, pv, name, alternative, df=df, n=10, estimate=float(p.mean()), note=note)


def combined_5x2cv_f(x, y) -> TestResult:
    """Alpaydin's combined 5x2 cv F test (two-sided only).

    ``f = sum_ij (p_i^(j))^2 / (2 sum_i s_i^2)`` ~ F(10, 5).  The statistic is a
    sum of squares, so it has no direction: for a one-sided question use
    :func:`combined_5x2cv_t` or :func:`dietterich_5x2cv_t`.
    """
    p = _five_by_two(x, y)
    s2 = _five_by_two_var(p)
    name = "combined 5x2 cv F"
    num = float((p ** 2).sum())
    if s2 <= 1e-300:
        f, pv = (0.0, 1.0) if num == 0 else (math.inf, 0.0)
        note = "all differences are zero: p = 1" if num == 0 else "zero within-replication variance: p = 0"
        return TestResult(f, pv, name, "two-sided", df=(10, 5), n=10, estimate=float(p.mean()), note=note)
    f = num / (2.0 * s2)
    return TestResult(f, float(stats.f.sf(f, 10, 5)), name, "two-sided", df=(10, 5), n=10, estimate=float(p.mean()))


def mcnemar_from_counts(b: int, c: int, *, exact: bool | str = "auto", correction: bool = True,
                        alternative: str = "two-sided") -> TestResult:
    """McNemar's test from the discordant counts.

    Parameters
    ----------
    b : int
        Test instances that learner x got right and y got wrong.
    c : int
        Instances that y got right and x got wrong.
    exact : bool or "auto"
        Exact binomial test of ``b ~ Binomial(b + c, 1/2)``; ``"auto"`` uses it
        when ``b + c < 25``, otherwise the chi-square statistic
        ``(|b - c| - 1)^2 / (b + c)`` (without the ``- 1`` if ``correction`` is
        False), 1 df.
    alternative : {"two-sided", "less", "greater"}
        ``"greater"``: x is more accurate.  The chi-square version is two-sided only.

    Notes
    -----
    Continuity correction convention (``correction=True``): the statistic is
    ``max(|b - c| - 1, 0)^2 / (b + c)``, so ``b == c`` gives ``chi2 = 0`` and
    ``p = 1`` (no evidence of a difference, and the correction never makes the
    statistic negative or positive out of nothing).  ``statsmodels``'
    ``mcnemar(..., exact=False, correction=True)`` computes ``(|b - c| - 1)^2 /
    (b + c)`` without the ``max``, which for ``b == c`` gives ``1 / (b + c)``
    (e.g. b = c = 13: 0.0385, p = 0.845; b = c = 1 would be exact here).  The two
    agree whenever ``b != c``.  We keep ours: the corrected ``|b - c|`` is a
    distance and cannot fall below 0.
    """
    check_alternative(alternative)
    check_choice("exact", exact, (True, False, "auto"))
    for name, v in (("b", b), ("c", c)):
        if not isinstance(v, (int, np.integer)) or v < 0:
            raise InputError(f"{name} must be a non-negative integer count; got {v!r}")
    b, c = int(b), int(c)
    n = b + c
    use_exact = exact is True or (exact == "auto" and n < 25)
    if n == 0:
        return TestResult(0.0, 1.0, "McNemar", alternative, n=0, note="no discordant pairs: p = 1")
    if use_exact:
        p = float(stats.binomtest(b, n, 0.5, alternative=alternative).pvalue)
        return TestResult(float(b), p, "McNemar exact (binomial)", alternative, n=n, estimate=(b - c) / n)
    if alternative != "two-sided":
        raise InputError("alternative must be 'two-sided' for McNemar's chi-square version; use exact=True")
    num = max(abs(b - c) - (1.0 if correction else 0.0), 0.0) ** 2
    chi2 = num / n
    name = "McNemar chi-square" + (" (continuity corrected)" if correction else "")
    return TestResult(chi2, float(stats.chi2.sf(chi2, 1)), name, "two-sided", df=1, n=n, estimate=(b - c) / n)


def mcnemar(x_correct, y_correct, *, exact: bool | str = "auto", correction: bool = True,
            alternative: str = "two-sided") -> TestResult:
    """McNemar's test from per-instance correctness of two learners on one test set.

    Parameters
    ----------
    x_correct, y_correct : array_like of bool, shape (n,)
        Whether learner x (y) classified each test instance correctly.

    See :func:`mcnemar_from_counts` for the other parameters.
    """
    a = np.asarray(x_correct)
    bb = np.asarray(y_correct)
    if a.shape != bb.shape or a.ndim != 1:
        raise InputError(f"x_correct and y_correct must be 1-d of equal length; got shapes {a.shape} and {bb.shape}")
    if not (np.isin(a, (0, 1)).all() and np.isin(bb, (0, 1)).all()):
        raise InputError("x_correct and y_correct must hold booleans (or 0/1)")
    a, bb = a.astype(bool), bb.astype(bool)
    return mcnemar_from_counts(int((a & ~bb).sum()), int((~a & bb).sum()), exact=exact,
                               correction=correction, alternative=alternative)
