"""Two learners on one dataset: paired t tests for resampled designs and McNemar.

All t tests work on the paired differences ``d = x - y`` of per-split scores
(accuracies or errors, it does not matter as long as both use the same), so
``alternative="greater"`` is "x is larger than y".

Zero variance (all differences equal): ``p = 1`` when every difference is 0,
otherwise the statistic is +-inf and p is 0 (or 1 for the opposite one-sided
alternative).  This follows METHODS.md for the 5x2 cv tests and is applied to
every t test here.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from algorank.metadata.errors import InputError

from ._result import TestResult
from ._validate import as_float_array, check_alternative, check_choice, paired_arrays

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
]


def t_pvalue(t: float, df: float, alternative: str) -> float:
    """p-value of a t statistic with ``df`` degrees of freedom (infinite t allowed)."""
    if alternative == "greater":
        return float(stats.t.sf(t, df))
    if alternative == "less":
        return float(stats.t.cdf(t, df))
    return float(min(1.0, 2.0 * stats.t.sf(abs(t), df)))


def _degenerate(mean: float, alternative: str) -> tuple[float, float, str]:
    """Statistic and p-value when the variance estimate is zero."""
    if mean == 0:
        return 0.0, 1.0, "all differences are zero: p = 1"
    t = math.copysign(math.inf, mean)
    if alternative == "two-sided":
        p = 0.0
    elif alternative == "greater":
        p = 0.0 if mean > 0 else 1.0
    else:
        p = 0.0 if mean < 0 else 1.0
    return t, p, "zero variance of the differences with a non-zero mean: p = 0 (or 1 in the opposite direction)"


def _t_from(d: np.ndarray, var_factor: float, df: float, alternative: str, name: str) -> TestResult:
    mean = float(d.mean())
    var = float(d.var(ddof=1))
    if var <= 1e-300 or np.ptp(d) == 0:
        t, p, note = _degenerate(mean, alternative)
        return TestResult(t, p, name, alternative, df=df, n=int(d.size), estimate=mean, note=note)
    t = mean / math.sqrt(var_factor * var)
    return TestResult(t, t_pvalue(t, df, alternative), name, alternative, df=df, n=int(d.size), estimate=mean)


def paired_t(x, y, *, alternative: str = "two-sided", nan_policy: str = "propagate") -> TestResult:
    """Ordinary paired t test (``scipy.stats.ttest_rel``): ``t = dbar / sqrt(var(d) / n)``, df = n - 1.

    Too liberal for overlapping training sets (resampling, CV): use
    :func:`corrected_resampled_t` or :func:`corrected_repeated_kfold_t` there.
    """
    check_alternative(alternative)
    x, y, nan = paired_arrays(x, y, nan_policy=nan_policy)
    if nan:
        return TestResult(np.nan, np.nan, "paired t", alternative, n=int(x.size))
    d = x - y
    return _t_from(d, 1.0 / d.size, d.size - 1, alternative, "paired t")


def corrected_resampled_t(x, y, *, test_train_ratio: float, alternative: str = "two-sided",
                          nan_policy: str = "propagate") -> TestResult:
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
    return _t_from(d, 1.0 / d.size + ratio, d.size - 1, alternative, name)


def corrected_repeated_kfold_t(x, y, *, n_folds: int, alternative: str = "two-sided",
                               nan_policy: str = "propagate") -> TestResult:
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
                                nan_policy=nan_policy)
    return TestResult(res.statistic, res.pvalue, f"corrected repeated {n_folds}-fold cv t", res.alternative,
                      res.df, res.n, res.estimate, res.note)


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
    check_alternative(alternative)
    p = _five_by_two(x, y)
    s2 = _five_by_two_var(p)
    name = "Dietterich 5x2 cv t"
    if s2 <= 1e-300:
        t, pv, note = _degenerate(float(p[0, 0]) if np.any(p) else 0.0, alternative)
        return TestResult(t, pv, name, alternative, df=5, n=10, estimate=float(p.mean()), note=note)
    t = float(p[0, 0]) / math.sqrt(s2 / 5.0)
    return TestResult(t, t_pvalue(t, 5, alternative), name, alternative, df=5, n=10, estimate=float(p.mean()))


def combined_5x2cv_t(x, y, *, alternative: str = "two-sided") -> TestResult:
    """Combined 5x2 cv t test: the mean of all ten differences over its estimated standard error.

    ``t = pbar / sqrt(sigma2 / 10)`` with ``sigma2 = sum_i s_i^2 / 5`` (5 df), i.e.
    Dietterich's variance estimate applied to the mean of the ten differences
    instead of the single ``p_1^(1)``; referred to t with 5 df.  Signed, so it
    can answer MultiTest's one-sided question.
    """
    check_alternative(alternative)
    p = _five_by_two(x, y)
    s2 = _five_by_two_var(p)
    name = "combined 5x2 cv t"
    mean = float(p.mean())
    if s2 <= 1e-300:
        t, pv, note = _degenerate(mean, alternative)
        return TestResult(t, pv, name, alternative, df=5, n=10, estimate=mean, note=note)
    t = mean / math.sqrt(s2 / 5.0 / 10.0)
    return TestResult(t, t_pvalue(t, 5, alternative), name, alternative, df=5, n=10, estimate=mean)


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
