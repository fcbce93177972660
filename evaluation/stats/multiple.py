"""Many learners over many datasets: Friedman (+ Iman-Davenport) and post hoc procedures.

Post hoc tests work on average ranks (Demsar 2006; Garcia and Herrera 2008):
``z_ij = (R_i - R_j) / sqrt(k (k + 1) / (6 N))``, two-sided ``p = 2 (1 - Phi(|z|))``
over the ``m = k (k - 1) / 2`` pairs, then

* ``nemenyi``: studentized range, ``CD = q_alpha sqrt(k (k + 1) / (6 N))`` with
  ``q_alpha = studentized_range.ppf(1 - alpha, k, inf) / sqrt(2)``;
* ``bonferroni-dunn``: every learner versus one control, Bonferroni over ``k - 1``;
* ``holm``: Holm's step-down over all pairs;
* ``shaffer``: Shaffer's static procedure (Holm with ``m - i + 1`` replaced by the
  largest number of hypotheses that can be simultaneously true, from ``S(k)``);
* ``bergmann``: Bergmann-Hommel's procedure over all exhaustive sets (the
  within-block pairs of every set partition of the k learners, ``Bell(k) - 1``
  sets), exact up to ``k = 10`` (115,974 sets); above that it falls back to
  Shaffer, which it dominates in power only slightly, and says so in the result.
"""

from __future__ import annotations

import functools
import logging
import math
from itertools import combinations

import numpy as np
from scipy import stats

from algorank.metadata.errors import InputError

from ._result import FriedmanResult, PosthocResult
from ._validate import (as_float_array, check_alpha, check_choice, check_labels, check_n_datasets,
                        check_rank_test)

__all__ = [
    "POSTHOC_METHODS",
    "BERGMANN_MAX_EXACT_K",
    "friedman",
    "rank_rows",
    "posthoc",
    "nemenyi_q",
    "critical_difference",
    "pairwise_z",
    "holm_adjust",
    "shaffer_sets",
    "shaffer_adjust",
    "bell_number",
    "exhaustive_sets",
    "bergmann_hommel_adjust",
]

logger = logging.getLogger(__name__)

POSTHOC_METHODS = ("nemenyi", "bonferroni-dunn", "holm", "shaffer", "bergmann")
#: Largest k for which Bergmann-Hommel enumerates the exhaustive sets (Bell(10) - 1 = 115,974).
BERGMANN_MAX_EXACT_K = 10


# ---------------------------------------------------------------- Friedman
def rank_rows(scores, *, lower_is_better: bool = False) -> np.ndarray:
    """Rank each row (1 = best; ties get the mean of the tied positions); NaN stays NaN.

    Parameters
    ----------
    scores : array_like of shape (n_rows, n_cols) or (n_cols,)
        NaN marks a missing cell, which is not ranked.
    lower_is_better : bool
        Rank 1 goes to the largest value (default) or the smallest.

    Returns
    -------
    ndarray of float, same shape
        In a row with ``m`` non-NaN entries (infinities included) the ranks are 1..m with ties
        averaged: :func:`scipy.stats.rankdata` with ``nan_policy="omit"`` along the last axis.
    """
    scores = np.asarray(scores, dtype=float)
    return stats.rankdata(scores if lower_is_better else -scores, axis=-1, nan_policy="omit")


def friedman(scores, *, lower_is_better: bool = False, tie_correction: bool = False,
             nan_policy: str = "raise") -> FriedmanResult:
    """Friedman's test of equal average ranks, with the Iman-Davenport F version.

    Parameters
    ----------
    scores : array_like of shape (n_datasets, k)
        One row per dataset, one column per learner.
    lower_is_better : bool
        False for accuracies (rank 1 = highest), True for errors, costs or ranks.
    tie_correction : bool
        Convention choice.  False (default) is the textbook formula of
        Demsar (2006):
        ``chi2_F = 12 N / (k (k + 1)) * (sum_j R_j^2 - k (k + 1)^2 / 4)``.
        True divides it by ``1 - sum(t^3 - t) / (N k (k^2 - 1))`` over tie groups,
        which is what :func:`scipy.stats.friedmanchisquare` reports.  The two
        agree exactly when no row has ties.
    nan_policy : {"raise", "omit", "propagate"}
        Rows (datasets) with a NaN: error (default, so that sparse meta-data is
        never dropped silently), dropped (counted in ``dropped_datasets``), or a
        NaN result.

    Returns
    -------
    FriedmanResult

    Notes
    -----
    Every row all tied: ``statistic = 0`` and ``pvalue = 1``.  Perfect agreement
    (``chi2_F = N (k - 1)``): the Iman-Davenport statistic is ``inf``, p = 0.
    """
    check_choice("nan_policy", nan_policy, ("raise", "omit", "propagate"))
    scores = as_float_array("scores", scores, ndim=2)
    n, k = scores.shape
    if k < 2:
        raise InputError(f"scores must have at least 2 columns (learners); got {k}")
    dropped = 0
    bad = np.isnan(scores).any(axis=1)
    if bad.any():
        if nan_policy == "raise":
            raise InputError(
                f"scores has NaN in {int(bad.sum())} row(s) (datasets where a learner is missing); "
                "pass nan_policy='omit' to restrict to complete datasets"
            )
        if nan_policy == "propagate":
            nan_ranks = np.full(k, np.nan)
            return FriedmanResult(np.nan, np.nan, nan_ranks, n, k, np.nan, np.nan, k - 1, tie_correction)
        scores = scores[~bad]
        dropped = int(bad.sum())
        n = scores.shape[0]
    if n < 2:
        raise InputError(f"scores must have at least 2 complete rows (datasets); got {n}")
    ranks = rank_rows(scores, lower_is_better=lower_is_better)
    avg = ranks.mean(axis=0)
    chi2 = 12.0 * n / (k * (k + 1)) * (float(np.sum(avg ** 2)) - k * (k + 1) ** 2 / 4.0)
    chi2 = max(chi2, 0.0)  # rounding
    w = min(chi2 / (n * (k - 1)), 1.0)  # Kendall's W, from the statistic without tie correction
    method = "Friedman chi-square (no tie correction)"
    if tie_correction:
        ties = 0.0
        for row in ranks:
            _, t = np.unique(row, return_counts=True)
            ties += float((t ** 3 - t).sum())
        c = 1.0 - ties / (n * k * (k * k - 1))
        chi2 = 0.0 if c <= 0 else chi2 / c
        method = "Friedman chi-square (tie-corrected, as scipy)"
    p = float(stats.chi2.sf(chi2, k - 1)) if chi2 > 0 else 1.0
    denom = n * (k - 1) - chi2
    if denom <= 1e-12 * n * k:
        ff, pf = math.inf, 0.0
    else:
        ff = (n - 1) * chi2 / denom
        pf = float(stats.f.sf(ff, k - 1, (k - 1) * (n - 1))) if ff > 0 else 1.0
    return FriedmanResult(
        statistic=float(chi2), pvalue=p, average_ranks=avg, n_datasets=int(n), n_learners=int(k),
        iman_davenport_statistic=float(ff), iman_davenport_pvalue=pf, df=k - 1,
        tie_correction=bool(tie_correction), method=method, dropped_datasets=dropped, kendall_w=float(w),
    )


# ---------------------------------------------------------------- critical differences
def nemenyi_q(k: int, alpha: float = 0.05) -> float:
    """``q_alpha = studentized_range.ppf(1 - alpha, k, inf) / sqrt(2)`` (Demsar's table)."""
    alpha = check_alpha(alpha)
    if int(k) < 2:
        raise InputError(f"k must be at least 2; got {k}")
    return float(stats.studentized_range.ppf(1.0 - alpha, int(k), np.inf) / math.sqrt(2.0))


def _se(k: int, n: int) -> float:
    return math.sqrt(k * (k + 1) / (6.0 * n))


def critical_difference(k: int, n_datasets: int, *, alpha: float = 0.05, method: str = "nemenyi") -> float:
    """Critical difference of average ranks for ``nemenyi`` or ``bonferroni-dunn``.

    ``bonferroni-dunn`` uses ``q = Phi^-1(1 - alpha / (2 (k - 1)))`` (comparisons
    with one control).
    """
    check_choice("method", method, ("nemenyi", "bonferroni-dunn"))
    alpha = check_alpha(alpha)
    k, n_datasets = int(k), int(n_datasets)
    if k < 2:
        raise InputError(f"k must be at least 2; got {k}")
    if n_datasets < 1:
        raise InputError(f"n_datasets must be at least 1; got {n_datasets}")
    if method == "nemenyi":
        q = nemenyi_q(k, alpha)
    else:
        q = float(stats.norm.isf(alpha / (2.0 * (k - 1))))
    return q * _se(k, n_datasets)


def pairwise_z(average_ranks, n_datasets: int) -> tuple[np.ndarray, np.ndarray]:
    """``z_ij`` and unadjusted two-sided p-values for all pairs (k x k matrices)."""
    r = np.asarray(average_ranks, dtype=float)
    z = (r[:, None] - r[None, :]) / _se(r.size, int(n_datasets))
    p = 2.0 * stats.norm.sf(np.abs(z))
    np.fill_diagonal(p, 1.0)
    return z, np.minimum(p, 1.0)


# ---------------------------------------------------------------- step-down procedures
def _step_down(p: np.ndarray, multipliers: np.ndarray) -> np.ndarray:
    """Adjusted p-values of a step-down procedure: ``max_{j<=i} min(1, c_j p_(j))``."""
    order = np.argsort(p, kind="stable")
    adj_sorted = np.maximum.accumulate(np.minimum(1.0, multipliers * p[order]))
    out = np.empty_like(p)
    out[order] = adj_sorted
    return out


def holm_adjust(pvalues) -> np.ndarray:
    """Holm's step-down adjusted p-values: ``max_{j<=i} min(1, (m - j + 1) p_(j))``."""
    p = np.asarray(pvalues, dtype=float).ravel()
    m = p.size
    return _step_down(p, np.arange(m, 0, -1, dtype=float))


@functools.lru_cache(maxsize=8)
def shaffer_sets(k: int) -> tuple[int, ...]:
    """S(k): the possible numbers of simultaneously true hypotheses among all pairs of k.

    ``S(k) = union_{j=1..k} {C(j, 2) + x : x in S(k - j)}``, ``S(0) = S(1) = {0}``
    (Shaffer 1986).  ``S(4) = (0, 1, 2, 3, 6)``.  Computed bottom-up with each ``S(i)`` as the bits of
    one integer (bit ``s`` set when ``s`` is in the set), so 1,000 learners take about two seconds
    and no recursion.
    """
    k = int(k)
    if k <= 1:
        return (0,)
    sets = [1, 1]  # S(0), S(1): {0}
    for i in range(2, k + 1):
        bits = 0
        for j in range(1, i + 1):
            bits |= sets[i - j] << (j * (j - 1) // 2)
        sets.append(bits)
    top = sets[k]
    raw = np.frombuffer(top.to_bytes((top.bit_length() + 7) // 8, "little"), dtype=np.uint8)
    return tuple(np.flatnonzero(np.unpackbits(raw, bitorder="little")).tolist())


def shaffer_adjust(pvalues, k: int) -> np.ndarray:
    """Shaffer's static adjusted p-values for the ``m = k (k - 1) / 2`` pairwise hypotheses.

    Like Holm, with ``m - i + 1`` replaced by ``t_i = max{s in S(k) : s <= m - i + 1}``.
    """
    p = np.asarray(pvalues, dtype=float).ravel()
    m = k * (k - 1) // 2
    if p.size != m:
        raise InputError(f"pvalues must have k(k-1)/2 = {m} entries for k = {k}; got {p.size}")
    s = np.asarray(shaffer_sets(k), dtype=np.int64)
    remaining = np.arange(m, 0, -1)
    t = s[np.searchsorted(s, remaining, side="right") - 1].astype(float)
    return _step_down(p, t)


# ---------------------------------------------------------------- Bergmann-Hommel
def bell_number(k: int) -> int:
    """Number of set partitions of k elements (Bell triangle)."""
    k = int(k)
    row = [1]
    for _ in range(k):
        new = [row[-1]]
        for v in row:
            new.append(new[-1] + v)
        row = new
    return row[0]


def _restricted_growth_strings(k: int) -> np.ndarray:
    """All set partitions of k elements as restricted growth strings (Bell(k) x k, int8)."""
    rows = np.zeros((1, 1), dtype=np.int8)
    maxes = np.zeros(1, dtype=np.int8)
    for _ in range(1, k):
        counts = maxes.astype(np.int64) + 2
        rows = np.repeat(rows, counts, axis=0)
        starts = np.repeat(np.cumsum(counts) - counts, counts)
        vals = (np.arange(int(counts.sum())) - starts).astype(np.int8)
        maxes = np.maximum(np.repeat(maxes, counts), vals)
        rows = np.concatenate([rows, vals[:, None]], axis=1)
    return rows


@functools.lru_cache(maxsize=4)
def exhaustive_sets(k: int) -> np.ndarray:
    """Exhaustive sets of the pairwise hypotheses among k learners.

    A set of hypotheses ``mu_i = mu_j`` can be simultaneously true exactly when
    it is the set of within-block pairs of some partition of the learners.
    Every partition except the all-singletons one gives a non-empty set.

    Returns
    -------
    ndarray of bool, shape (Bell(k) - 1, k (k - 1) / 2)
        Row = one exhaustive set; column = pair in ``itertools.combinations(range(k), 2)``
        order.  Read-only (cached).
    """
    k = int(k)
    if k < 2:
        raise InputError(f"k must be at least 2; got {k}")
    if k > BERGMANN_MAX_EXACT_K + 2:
        raise InputError(f"exhaustive sets are enumerated only up to k = {BERGMANN_MAX_EXACT_K + 2}; got {k}")
    rgs = _restricted_growth_strings(k)
    ii, jj = np.array(list(combinations(range(k), 2))).T
    mask = rgs[:, ii] == rgs[:, jj]
    mask = mask[mask.any(axis=1)]
    mask.setflags(write=False)
    return mask


def bergmann_hommel_adjust(pvalues, k: int, *, monotone: bool = True) -> np.ndarray:
    """Bergmann-Hommel adjusted p-values for the pairwise hypotheses of k learners.

    ``adjusted_i = max over exhaustive sets I containing i of min(1, |I| * min_{j in I} p_j)``;
    hypothesis i is rejected at level alpha iff ``adjusted_i <= alpha``, which is
    the same as: i belongs to no exhaustive set I with ``min_I p > alpha / |I|``.

    Two versions (both control the family-wise error rate):

    * ``monotone=True`` (default, as R's ``scmamp``): the adjusted p-values are
      made non-decreasing in the raw p-values, ``adj_(i) = max_{j <= i} adj_(j)``
      in raw-p order (ties of raw p share the largest).  A pair is then never
      rejected while a pair with a smaller raw p-value is kept.  It can only raise
      adjusted values, so it rejects a subset of what the raw version rejects.
    * ``monotone=False``: the set-wise maxima above as they are (Bergmann and
      Hommel's definition, ``exact`` closed-testing shortcut of Garcia and Herrera
      2008); at some alpha it can reject a pair with a larger raw p-value and keep
      one with a smaller raw p-value.

    Parameters
    ----------
    pvalues : array_like of shape (k (k - 1) / 2,)
        Unadjusted p-values in ``itertools.combinations(range(k), 2)`` order.
    k : int
        Number of learners (at most :data:`BERGMANN_MAX_EXACT_K`).
    monotone : bool
        See above.
    """
    p = np.asarray(pvalues, dtype=float).ravel()
    m = k * (k - 1) // 2
    if p.size != m:
        raise InputError(f"pvalues must have k(k-1)/2 = {m} entries for k = {k}; got {p.size}")
    if k > BERGMANN_MAX_EXACT_K:
        raise InputError(f"Bergmann-Hommel is exact only up to k = {BERGMANN_MAX_EXACT_K}; got k = {k} "
                         "(use posthoc(..., method='bergmann'), which falls back to Shaffer)")
    sets = exhaustive_sets(k)
    # min p over each set: walk the hypotheses in increasing p; the first member found is the minimum.
    order = np.argsort(p, kind="stable")
    first = np.argmax(sets[:, order], axis=1)
    minp = p[order][first]
    value = np.minimum(1.0, sets.sum(axis=1) * minp)
    adjusted = np.zeros(m)
    for col in range(m):
        adjusted[col] = value[sets[:, col]].max()
    if monotone:
        adjusted = _monotone_in(p, adjusted)
    return adjusted


def _monotone_in(p: np.ndarray, adjusted: np.ndarray) -> np.ndarray:
    """Running maximum of ``adjusted`` in increasing ``p`` (equal p share the group maximum)."""
    order = np.argsort(p, kind="stable")
    run = np.maximum.accumulate(adjusted[order])
    ps = p[order]
    # equal raw p-values: every member gets the maximum of the tie group
    last = np.r_[np.flatnonzero(np.diff(ps) != 0), ps.size - 1]
    group_max = np.repeat(run[last], np.diff(np.r_[-1, last]))
    out = np.empty_like(adjusted)
    out[order] = group_max
    return out


# ---------------------------------------------------------------- posthoc
def _to_matrix(values: np.ndarray, k: int, diag: float = 1.0) -> np.ndarray:
    out = np.full((k, k), diag, dtype=float)
    ii, jj = np.array(list(combinations(range(k), 2))).T
    out[ii, jj] = values
    out[jj, ii] = values
    return out


def posthoc(average_ranks, n_datasets: int, *, method: str = "holm", alpha: float = 0.05,
            labels=None, control: int | str | None = None,
            max_exact_k: int = BERGMANN_MAX_EXACT_K, z=None, monotone: bool = True) -> PosthocResult:
    """Post hoc comparison of k learners from their average ranks over N datasets.

    Parameters
    ----------
    average_ranks : array_like of shape (k,)
        Average ranks (1 = best), e.g. ``friedman(...).average_ranks``.
    n_datasets : int
        N, the number of datasets the ranks were averaged over.
    method : {"nemenyi", "bonferroni-dunn", "holm", "shaffer", "bergmann"}
        See the module docstring.
    alpha : float
        Family-wise level in (0, 1).
    labels : sequence of str, optional
        Learner names for the result (default ``"0" .. "k-1"``).
    control : int or str, optional
        Control learner (index or label) for ``bonferroni-dunn``.  Default: the
        learner with the best average rank; for a valid test, choose the control
        before looking at the data.
    max_exact_k : int
        Bergmann-Hommel enumerates exhaustive sets up to this k (at most 10);
        above it the result is Shaffer's static procedure, ``exact = False`` and
        ``note`` says so.
    z : array_like of shape (k, k), optional
        Standardised pairwise differences to test instead of the Friedman
        ``(R_i - R_j) / sqrt(k (k + 1) / (6 N))``, e.g. the ``pairwise_z`` of a
        Skillings-Mack or Durbin result (missing cells).  Must be antisymmetric;
        negative ``z[i, j]`` means i is better.  No critical difference exists
        then (``critical_difference`` is None; Nemenyi and Bonferroni-Dunn decide
        by their adjusted p-values).
    monotone : bool
        Bergmann-Hommel only: monotone adjusted p-values (default; see
        :func:`bergmann_hommel_adjust`).

    Returns
    -------
    PosthocResult
    """
    alpha, r = check_rank_test(method, POSTHOC_METHODS, alpha, average_ranks)
    k = r.size
    if not (1.0 - 1e-9 <= r.min() and r.max() <= k + 1e-9):
        raise InputError(f"average_ranks must lie in [1, k] = [1, {k}]; got range [{r.min():g}, {r.max():g}]")
    n = check_n_datasets(n_datasets)
    labels = check_labels(labels, k)
    if z is None:
        z, p = pairwise_z(r, n)
        given_z = False
    else:
        z = as_float_array("z", z, ndim=2)
        if z.shape != (k, k):
            raise InputError(f"z must be a k x k = {k} x {k} matrix; got shape {z.shape}")
        if np.isnan(z).any() or not np.allclose(z, -z.T, rtol=0, atol=1e-9):
            raise InputError("z must be antisymmetric (z[i, j] = -z[j, i]) without NaN")
        p = np.minimum(2.0 * stats.norm.sf(np.abs(z)), 1.0)
        np.fill_diagonal(p, 1.0)
        given_z = True
    ii, jj = np.array(list(combinations(range(k), 2))).T
    pv = p[ii, jj]
    used, note, exact, cd, ctrl = method, "", True, None, None
    if method == "nemenyi":
        adj_v = stats.studentized_range.sf(np.abs(z[ii, jj]) * math.sqrt(2.0), k, np.inf)
        adjusted = _to_matrix(np.clip(adj_v, 0.0, 1.0), k)
        if given_z:
            significant = adjusted <= alpha
        else:
            cd = critical_difference(k, n, alpha=alpha, method="nemenyi")
            significant = np.abs(r[:, None] - r[None, :]) > cd
    elif method == "bonferroni-dunn":
        cd = None if given_z else critical_difference(k, n, alpha=alpha, method="bonferroni-dunn")
        if control is None:
            ctrl = int(np.argmin(r))
        elif isinstance(control, str) and control in labels:
            ctrl = labels.index(control)
        elif isinstance(control, (int, np.integer)) and 0 <= int(control) < k:
            ctrl = int(control)
        else:
            raise InputError(f"control must be a learner index in [0, {k}) or one of the labels; got {control!r}")
        adjusted = np.ones((k, k))
        row = np.minimum(1.0, (k - 1) * p[ctrl])
        adjusted[ctrl, :] = row
        adjusted[:, ctrl] = row
        adjusted[ctrl, ctrl] = 1.0
        significant = adjusted <= alpha
    else:
        if method == "bergmann" and k > min(int(max_exact_k), BERGMANN_MAX_EXACT_K):
            used, exact = "shaffer", False
            note = (f"Bergmann-Hommel is computed exactly only up to k = {min(int(max_exact_k), BERGMANN_MAX_EXACT_K)} "
                    f"learners (Bell(k) - 1 exhaustive sets); with k = {k} Shaffer's static procedure was used instead")
            logger.info(note)
        if used == "holm":
            adj_v = holm_adjust(pv)
        elif used == "shaffer":
            adj_v = shaffer_adjust(pv, k)
        else:
            adj_v = bergmann_hommel_adjust(pv, k, monotone=monotone)
        adjusted = _to_matrix(adj_v, k)
        significant = adjusted <= alpha
    np.fill_diagonal(significant, False)
    return PosthocResult(
        method=used, requested=method, alpha=alpha, average_ranks=r, n_datasets=n, z=z, pvalues=p,
        adjusted=adjusted, significant=significant, critical_difference=cd, control=ctrl, labels=labels,
        exact=exact, note=note,
    )
