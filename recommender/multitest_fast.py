"""MultiTest's per-dataset pass for many learners: the order without a p-value per pair.

Multi2Test's first pass needs, per dataset, only MultiTest's order.  With ``k`` learners that is
``k (k - 1) / 2`` one-sided paired t tests, a multiple-comparison correction and the ordering:
at 1,000 learners half a million tests per dataset.  :func:`multitest_order` gives the same order as
:func:`~algorank.recommender.multitest.multitest` for the tests whose statistic is a mean over a
standard deviation (``paired_t``, ``corrected_resampled_t``, ``corrected_kfold_t``), in three
compiled passes over the pairs:

1. **Statistics in one pass.**  With the scores centred per learner once, the differences of a
   pair are centred too, so its sum of squares is one subtract-square-add per fold, in a loop over
   the costlier learners that the compiler vectorises.  Where that sum is below ``1e-9`` of the two
   learners' own (e.g. two learners with equal fold scores), the pair is recomputed from its
   differences as :func:`~algorank.evaluation.stats.pairwise.t_test_rows` does, zero variance
   included (all differences equal: ``t = +-inf``, or p = 1 when they are all 0).
2. **The correction in t space.**  Every test of a dataset has the same degrees of freedom, so a
   p-value is below a level exactly when the statistic is above that level's critical value.
   Bonferroni and no correction are one critical value.  Holm's step-down rejects the hypotheses
   with the ``R`` smallest p-values, ``R`` the first ``j`` with ``p_(j+1) > alpha / (m - j)``;
   all pairs above the Bonferroni value ``c(alpha / m)`` are rejected, none below
   ``c(alpha / (m - N))`` is (``N`` the pairs above ``c(alpha)``), and only the pairs between
   those two values get p-values (SciPy's ``t.sf``), sorted, to find ``R``.
3. **The order** (:func:`~algorank.recommender.multitest.order_from_significance`): repeatedly the
   cheapest remaining learner that no remaining costlier learner significantly beats, by counting
   each learner's significant costlier winners and releasing it when the last is taken.

The passes are compiled with Numba when it is installed (``nogil``, so datasets run on threads);
without it the same functions run as plain Python, slowly.  The decisions equal p-value based
ones except for a statistic within rounding of a critical value (the two sum in different
orders); tests compare the orders with :func:`multitest` on random and degenerate data.
"""

from __future__ import annotations

import functools
import importlib.util
import math

import numpy as np

__all__ = ["FAST_TESTS", "multitest_order", "HAVE_NUMBA"]

#: Whether Numba is installed (then the passes are compiled on first use, and cached on disk).
HAVE_NUMBA = importlib.util.find_spec("numba") is not None


@functools.lru_cache(maxsize=None)
def _compiled(fn):
    """``fn`` compiled by Numba (``nogil``, cached on disk), or ``fn`` itself without Numba.  Compiling
    on first use keeps Numba out of every command that does not run this pass."""
    if not HAVE_NUMBA:  # pragma: no cover - the test environment has Numba
        return fn
    import numba

    # numpy's error model: a division by zero gives inf or NaN (those pairs are recomputed), and the loops
    # with a division are vectorised
    return numba.njit(cache=True, nogil=True, error_model="numpy")(fn)


#: Tests :func:`multitest_order` handles (their statistic is ``mean / sqrt(c * variance)``).
FAST_TESTS = ("paired_t", "corrected_resampled_t", "corrected_kfold_t")

_RELATIVE_FLOOR = 1e-9  # below this share of G_ii + G_jj a variance is recomputed from the differences
_BLOCK = 4  # rows of the statistics computed together


def _statistics(x, factor, floor=-np.inf, matrix=True):
    """The statistics ``T[i, j]`` (i < j, rows in prior order) of "learner j scores higher than i"; ``-inf``
    where p = 1 (all differences 0).

    ``matrix``: returns ``(T, -, -, -)`` with ``T`` the ``k x k`` matrix (``-inf`` below the diagonal).
    Otherwise ``(-, I, J, V)``: only the pairs with ``T >= floor``, row by row (no other pair can be
    rejected when ``floor`` is the level's one-sided critical value, whatever the correction), so that
    the correction and the order read those few pairs instead of the whole matrix."""
    k, n = x.shape
    mu = np.empty(k)
    for i in range(k):
        s = 0.0
        for f in range(n):
            s += x[i, f]
        mu[i] = s / n
    xc = np.empty((n, k))  # centred scores, fold-major so the loop over j is contiguous
    own = np.zeros(k)  # each learner's sum of squares about its mean
    for i in range(k):
        for f in range(n):
            xc[f, i] = x[i, f] - mu[i]
            own[i] += xc[f, i] ** 2
    t = np.empty((k, k)) if matrix else np.empty((1, k))
    size = 0 if matrix else max(1, k * (k - 1) // 2)
    cand_i = np.empty(size, dtype=np.int32)
    cand_j = np.empty(size, dtype=np.int32)
    cand_t = np.empty(size)
    found = 0
    ss = np.empty((_BLOCK, k))
    d = np.empty(n)
    for i0 in range(0, k, _BLOCK):
        # the sums of squares of rows i0 .. i0 + 3 against every later j at once: each loaded score serves
        # four pairs, and the loop over j (from 0, contiguous) is vectorised; every pair sums its folds in
        # order, as one pair at a time would
        lo = i0 + 1
        m = k - lo
        q0 = ss[0, lo:]
        q1 = ss[1, lo:]
        q2 = ss[2, lo:]
        q3 = ss[3, lo:]
        q0[:] = 0.0
        q1[:] = 0.0
        q2[:] = 0.0
        q3[:] = 0.0
        for f in range(n):
            r = xc[f, lo:]
            a0 = xc[f, i0]
            a1 = xc[f, min(i0 + 1, k - 1)]  # rows past the end (the last block) are computed and not used
            a2 = xc[f, min(i0 + 2, k - 1)]
            a3 = xc[f, min(i0 + 3, k - 1)]
            for jj in range(m):
                v = r[jj]
                q0[jj] += (v - a0) ** 2  # the differences' sum of squares about their mean
                q1[jj] += (v - a1) ** 2
                q2[jj] += (v - a2) ** 2
                q3[jj] += (v - a3) ** 2
        for b in range(min(_BLOCK, k - i0)):
            i = i0 + b
            q = ss[b, i + 1:]  # the pairs (i, j > i), indexed from 0 so that the loops are vectorised
            if matrix:
                t[i, :i + 1] = -np.inf
                row = t[i, i + 1:]
            else:
                row = t[0, i + 1:]
            mu_j = mu[i + 1:]
            own_j = own[i + 1:]
            low = 0
            for jj in range(k - i - 1):
                scale = math.sqrt(factor * q[jj] / (n - 1))
                row[jj] = (mu_j[jj] - mu[i]) / scale if scale > 0.0 else 0.0  # 0: recomputed below
                low += not (q[jj] > _RELATIVE_FLOOR * (own[i] + own_j[jj]) and q[jj] > 1e-290)
            for j in range(i + 1, k if low else i + 1):
                if q[j - i - 1] > _RELATIVE_FLOOR * (own[i] + own[j]) and q[j - i - 1] > 1e-290:
                    continue
                # (nearly) constant differences: computed from the differences, as t_test_rows does
                lo_d = math.inf
                hi_d = -math.inf
                s = 0.0
                for f in range(n):
                    d[f] = x[j, f] - x[i, f]
                    s += d[f]
                    lo_d = min(lo_d, d[f])
                    hi_d = max(hi_d, d[f])
                mean = s / n
                s2 = 0.0
                for f in range(n):
                    s2 += (d[f] - mean) ** 2
                s2 /= n - 1
                if s2 <= 1e-300 or hi_d == lo_d:
                    row[j - i - 1] = -np.inf if mean == 0.0 else (np.inf if mean > 0 else -np.inf)
                else:
                    row[j - i - 1] = mean / math.sqrt(factor * s2)
            if not matrix:
                for jj in range(k - i - 1):  # written always, kept when at or above the floor: no branch
                    cand_i[found] = i
                    cand_j[found] = i + 1 + jj
                    cand_t[found] = row[jj]
                    found += row[jj] >= floor
    return t, cand_i[:found], cand_j[:found], cand_t[:found]


def _count(t, low, high):
    """Pairs with ``t >= low``, and pairs with ``t >= high``."""
    k = t.shape[0]
    above_low = 0
    above_high = 0
    for i in range(k - 1):
        row = t[i, i + 1:]  # indexed from 0: the loop is vectorised
        for jj in range(k - i - 1):
            above_low += row[jj] >= low
            above_high += row[jj] >= high
    return above_low, above_high


def _band(t, low, high, size):
    """The statistics in ``[low, high)`` (at most ``size`` of them)."""
    k = t.shape[0]
    band = np.empty(size)
    b = 0
    for i in range(k - 1):
        row = t[i, i + 1:]
        for jj in range(k - i - 1):
            if low <= row[jj] < high:
                band[b] = row[jj]
                b += 1
    return band[:b]


def _order_of(k, cand_i, cand_j, cand_t, threshold):
    """Positions in MultiTest's order from the pairs with a statistic at or above the level's critical value
    (all that can be significant): j significantly beats cheaper i when its ``cand_t >= threshold``;
    repeatedly the cheapest learner with no remaining such winner is taken."""
    waiting = np.zeros(k, dtype=np.int64)
    beats = np.zeros((k, k), dtype=np.uint8)  # beats[j, i] (i < j): j significantly beats i, rows contiguous
    for p in range(cand_t.shape[0]):
        if cand_t[p] >= threshold:
            waiting[cand_i[p]] += 1
            beats[cand_j[p], cand_i[p]] = 1
    taken = np.zeros(k, dtype=np.bool_)
    order = np.empty(k, dtype=np.int64)
    first = 0
    for step in range(k):
        while taken[first]:
            first += 1
        c = first
        while taken[c] or waiting[c] > 0:
            c += 1
        order[step] = c
        taken[c] = True
        released = beats[c]
        for i in range(c):
            waiting[i] -= released[i]
    return order


def _critical(level: float, df: int) -> float:
    """The one-sided critical value of Student's t, ``P(T >= c) = level`` (``scipy.stats.t.isf``'s own
    formula, without its per-call checks)."""
    from scipy import special

    return float(-special.stdtrit(df, level))


def _holm_threshold(t: np.ndarray, alpha: float, df: int) -> float:
    """The smallest statistic Holm's step-down rejects (``inf``: none), from the matrix of statistics."""
    k = t.shape[0]
    m = k * (k - 1) // 2
    c_any, c_first = _critical(alpha, df), _critical(alpha / m, df)
    n_any, n_first = _compiled(_count)(t, c_any, c_first)
    if n_any == 0:
        return math.inf
    return _holm_step(lambda low: _compiled(_band)(t, low, c_first, n_any - n_first), m, n_any, n_first, alpha, df)


def _holm_on_pairs(cand_t: np.ndarray, m: int, alpha: float, df: int) -> float:
    """:func:`_holm_threshold` from the statistics at or above ``c(alpha)`` (all that Holm can reject)."""
    n_any = cand_t.size
    if n_any == 0:
        return math.inf
    c_first = _critical(alpha / m, df)
    n_first = int(np.count_nonzero(cand_t >= c_first))
    return _holm_step(lambda low: cand_t[(cand_t >= low) & (cand_t < c_first)], m, n_any, n_first, alpha, df)


def _holm_step(band_of, m: int, n_any: int, n_first: int, alpha: float, df: int) -> float:
    """Holm's stopping point, given the ``n_any`` statistics above ``c(alpha)``, the ``n_first`` of them
    above ``c(alpha / m)``, and ``band_of(low)``: the statistics in ``[low, c(alpha / m))``."""
    from scipy import special

    c_any = _critical(alpha, df)
    c_first = _critical(alpha / m, df)
    # the rejections are at most the n_any pairs above c_any, so the last step's level is at most
    # alpha / (m - n_any + 1): nothing below c(alpha / (m - n_any)) is rejected
    c_low = c_any if n_any >= m else _critical(alpha / (m - n_any), df)
    # the band between, by decreasing statistic, is rejected while p_(j) <= alpha / (m - j + 1) holds
    # (j counted over all pairs, the n_first above c_first first)
    band = np.sort(band_of(c_low))[::-1]
    p = special.stdtr(df, -band)  # scipy.stats.t.sf(band, df)
    j = n_first + 1 + np.arange(band.size)
    fails = np.flatnonzero(p > alpha / (m - j + 1))
    taken = int(fails[0]) if fails.size else band.size
    if taken:
        return float(band[taken - 1])
    return float(c_first) if n_first else math.inf


def multitest_order(scores: np.ndarray, *, test: str, n_folds: int | None = None,
                    test_train_ratio: float | None = None, correction: str = "holm",
                    alpha: float = 0.05) -> np.ndarray:
    """MultiTest's order of the learners of one dataset, rows of ``scores`` in prior order.

    Parameters
    ----------
    scores : ndarray of shape (k, n)
        Paired scores, higher is better, row 0 the cheapest learner (the cost prior's order),
        no NaN, ``k >= 2``, ``n >= 2``.
    test : {"paired_t", "corrected_resampled_t", "corrected_kfold_t"}
        The pairwise test (as :func:`~algorank.evaluation.stats.pairwise.t_test_rows` computes it).
    n_folds, test_train_ratio : optional
        ``k`` of the corrected k-fold test; ``n_test / n_train`` of the corrected resampled test.
    correction : {"holm", "bonferroni", "none"}
    alpha : float

    Returns
    -------
    ndarray of int
        Row indices, best first: the order :func:`~algorank.recommender.multitest.multitest`
        gives for the same input.
    """
    x = np.ascontiguousarray(scores, dtype=float)
    k, n = x.shape
    extra = {"paired_t": 0.0, "corrected_resampled_t": test_train_ratio or 0.0,
             "corrected_kfold_t": 1.0 / ((n_folds or 2) - 1)}[test]
    df = n - 1
    m = k * (k - 1) // 2
    # only the pairs at or above c(alpha) can be rejected, whatever the correction: the statistics keep those
    _, cand_i, cand_j, cand_t = _compiled(_statistics)(x, 1.0 / n + extra, _critical(alpha, df), False)
    if correction == "holm":
        threshold = _holm_on_pairs(cand_t, m, alpha, df)
    else:
        threshold = _critical(alpha / m if correction == "bonferroni" else alpha, df)
    return _compiled(_order_of)(k, cand_i, cand_j, cand_t, threshold)
