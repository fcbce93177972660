"""Many learners over many datasets with missing cells: Skillings-Mack, Durbin, and the automatic choice.

Meta-data is rarely complete (LCDB: 14 % of the cells are empty), and Friedman's
test needs every learner on every dataset.  Dropping every dataset with a gap
throws most of the evidence away; these tests use all of it.

**Skillings-Mack** (Skillings and Mack 1981, Technometrics 23:171-177).  In each
dataset (block) i with ``k_i >= 2`` learners observed, rank them (1 = best, mid
ranks for ties) and weight the centred ranks::

    A_j = sum_i sqrt(12 / (k_i + 1)) * (r_ij - (k_i + 1) / 2)

(sum over the blocks where learner j is observed).  Under H0 (and without ties)
``Cov(A) = Sigma`` with ``Sigma_jl = -lambda_jl`` (``lambda_jl`` = number of blocks
holding both j and l) and ``Sigma_jj = sum_{l != j} lambda_jl``.  The statistic is
``T = A' Sigma^- A`` (here: drop the last learner, invert the rest), referred to
chi-square with ``k - 1`` degrees of freedom.  Blocks with fewer than two observed
learners carry no ranking information and are dropped (counted in
``dropped_datasets``).  The design must be *connected* (every pair of learners
linked through blocks they share), otherwise ``Sigma`` has rank below ``k - 1``
and the test is undefined: that is an :class:`~algorank.metadata.errors.InputError`.

*Relation to Friedman (exact).*  On complete data ``A_j = sqrt(12 / (k + 1)) (R_j -
N (k + 1) / 2)`` with rank sums ``R_j`` and ``Sigma = N (k I - J)``, whose
generalised inverse on the sum-zero space is ``I / (N k)``, so ``T = 12 / (N k (k +
1)) sum_j (R_j - N (k + 1) / 2)^2``: Friedman's ``chi2_F`` *without* tie correction
(:func:`~evaluation.stats.friedman` with ``tie_correction=False``, the default),
with or without ties.

*Relation to Durbin (exact).*  On a balanced incomplete block design without
ties, ``T`` equals Durbin's ``T1``.

**Durbin** (Durbin 1951; Conover 1999, section 5.9) for a balanced incomplete
block design (every block has the same number ``m`` of learners, every learner
appears in the same number ``r`` of blocks, every pair together in the same number
of blocks)::

    T1 = (k - 1) sum_j (R_j - r (m + 1) / 2)^2 / (A - C),   C = b m (m + 1)^2 / 4

with ``A`` the sum of the squared ranks (``tie_correction=True``, Conover's form)
or its no-ties value ``b m (m + 1) (2 m + 1) / 6`` (``tie_correction=False``), and
the F version ``T2 = (T1 / (k - 1)) / ((b (m - 1) - T1) / (b m - b - k + 1))``.

**Post hoc on incomplete data.**  ``pairwise_z[j, l] = (A_j - A_l) / sqrt(Sigma_jj +
Sigma_ll - 2 Sigma_jl)``; on complete data this is exactly the
``(R_j - R_l) / sqrt(k (k + 1) / (6 N))`` of :func:`~evaluation.stats.pairwise_z`, so
:func:`~evaluation.stats.posthoc` (``z=``) applies Holm, Shaffer or
Bergmann-Hommel to it unchanged.

**Average ranks shown** (CD diagrams, tables): the rescaled rule of the average
ranking (:mod:`algorank.recommender.average_ranking`): with ``k_i`` learners observed, rank
``r`` becomes ``(r - 1) / (k_i - 1)`` in [0, 1]; the mean over the learner's blocks is
reported on the 1..k scale as ``1 + mean * (k - 1)``.  On complete data these are
the ordinary average ranks.

:func:`omnibus` picks the test from the missing-cell pattern: Friedman when
complete, Durbin for a balanced incomplete design, Skillings-Mack otherwise, and
says which in ``method``.
"""

from __future__ import annotations

import logging
import math
from dataclasses import asdict, dataclass, field

import numpy as np
from scipy import stats

from algorank.metadata.errors import InputError
from algorank.metadata.io import to_plain

from ._result import FriedmanResult
from ._validate import as_float_array
from .multiple import friedman, pairwise_z

__all__ = [
    "IncompleteBlockResult",
    "skillings_mack",
    "durbin",
    "bibd_parameters",
    "omnibus",
    "rescaled_average_ranks",
    "omnibus_pairwise_z",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class IncompleteBlockResult:
    """Result of :func:`skillings_mack` or :func:`durbin` (same field names as :class:`FriedmanResult`).

    Attributes
    ----------
    statistic : float
        Skillings-Mack ``T`` or Durbin ``T1`` (chi-square scale).
    pvalue : float
        Upper tail of chi-square with ``df`` degrees of freedom.
    average_ranks : ndarray of shape (k,)
        Rescaled average ranks on the 1..k scale (see the module docstring);
        the ordinary average ranks on complete data.
    n_datasets : int
        Blocks (datasets) used: those with at least two learners observed.
    n_learners : int
        k.
    df : int
        ``k - 1``.
    method : str
        ``"Skillings-Mack"`` or ``"Durbin"`` with the convention used.
    dropped_datasets : int
        Blocks with fewer than two observed learners (no ranking information).
    missing_cells : int
        Empty (dataset, learner) cells among the blocks used.
    adjusted_rank_sums : ndarray of shape (k,)
        Skillings-Mack's ``A_j`` (lower = better).
    covariance : ndarray of shape (k, k)
        ``Sigma``, the null covariance of ``A`` without ties.
    pairwise_z : ndarray of shape (k, k)
        Standardised differences ``(A_j - A_l) / sd(A_j - A_l)`` (negative: j better);
        feed to :func:`~evaluation.stats.posthoc` as ``z``.
    coverage : ndarray of shape (k,)
        Number of blocks used in which each learner is observed.
    f_statistic, f_pvalue : float
        Durbin's ``T2`` and its F p-value (``df`` = ``f_df``); NaN for Skillings-Mack.
    f_df : tuple of int or None
    design : str
        ``"complete"``, ``"bibd"`` or ``"incomplete"``: what the observed pattern is.
    tie_correction : bool
        Whether the statistic was corrected for ties (Durbin only; Skillings-Mack
        never is).
    kendall_w : float
        NaN: Kendall's W is defined for complete tables only (use
        :func:`~evaluation.stats.kendall_w` on the complete datasets).
    """

    statistic: float
    pvalue: float
    average_ranks: np.ndarray = field(repr=False)
    n_datasets: int
    n_learners: int
    df: int
    method: str
    dropped_datasets: int = 0
    missing_cells: int = 0
    adjusted_rank_sums: np.ndarray = field(default=None, repr=False)
    covariance: np.ndarray = field(default=None, repr=False)
    pairwise_z: np.ndarray = field(default=None, repr=False)
    coverage: np.ndarray = field(default=None, repr=False)
    f_statistic: float = float("nan")
    f_pvalue: float = float("nan")
    f_df: tuple | None = None
    design: str = "incomplete"
    tie_correction: bool = False
    kendall_w: float = float("nan")

    @property
    def iman_davenport_statistic(self) -> float:
        """Alias of ``f_statistic`` (Durbin's T2 reduces to Iman-Davenport on complete data)."""
        return self.f_statistic

    @property
    def iman_davenport_pvalue(self) -> float:
        """Alias of ``f_pvalue``."""
        return self.f_pvalue

    def to_dict(self) -> dict:
        """JSON-friendly dict of all fields."""
        return to_plain(asdict(self))


# ---------------------------------------------------------------- helpers
def _prepare(scores, lower_is_better: bool):
    """Validate; return (ranks with NaN for missing, observed mask, used-row mask)."""
    s = as_float_array("scores", scores, ndim=2)
    n, k = s.shape
    if k < 2:
        raise InputError(f"scores must have at least 2 columns (learners); got {k}")
    obs = ~np.isnan(s)
    used = obs.sum(axis=1) >= 2
    key = s if lower_is_better else -s
    ranks = np.full(s.shape, np.nan)
    for i in np.flatnonzero(used):
        o = obs[i]
        ranks[i, o] = stats.rankdata(key[i, o])
    return ranks, obs, used


def rescaled_average_ranks(ranks, observed=None) -> np.ndarray:
    """Mean rescaled rank of each learner on the 1..k scale (see the module docstring).

    Parameters
    ----------
    ranks : array_like of shape (n, k)
        Within-row ranks among the observed learners (1 = best), NaN where missing.
    observed : array_like of bool, optional
        Default ``~isnan(ranks)``.  Rows with fewer than two observed are ignored.
    """
    r = np.asarray(ranks, dtype=float)
    obs = ~np.isnan(r) if observed is None else np.asarray(observed, bool)
    k = r.shape[1]
    m = obs.sum(axis=1, keepdims=True).astype(float)
    use = obs & (m >= 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        u = np.where(use, (r - 1.0) / (m - 1.0), 0.0)
        cnt = use.sum(axis=0)
        mean = np.where(cnt > 0, u.sum(axis=0) / np.maximum(cnt, 1), np.nan)
    return 1.0 + mean * (k - 1)


def _sm_core(ranks: np.ndarray, obs: np.ndarray, used: np.ndarray):
    """(A, Sigma, lambda) of Skillings-Mack from ranks of the used rows."""
    r = ranks[used]
    o = obs[used]
    m = o.sum(axis=1).astype(float)
    w = np.sqrt(12.0 / (m + 1.0))
    centred = np.where(o, r - ((m + 1.0) / 2.0)[:, None], 0.0)
    a = (w[:, None] * centred).sum(axis=0)
    oi = o.astype(float)
    lam = oi.T @ oi
    np.fill_diagonal(lam, 0.0)
    sigma = -lam.copy()
    np.fill_diagonal(sigma, lam.sum(axis=1))
    return a, sigma, lam


def _check_connected(lam: np.ndarray, coverage: np.ndarray, labels=None) -> None:
    k = lam.shape[0]
    name = (lambda j: str(labels[j])) if labels is not None else (lambda j: f"column {j}")
    absent = [name(j) for j in range(k) if coverage[j] == 0]
    if absent:
        raise InputError(
            f"scores: learner(s) {', '.join(absent[:5])} have no dataset shared with another learner; "
            "drop them before the test"
        )
    seen = {0}
    frontier = [0]
    adj = lam > 0
    while frontier:
        j = frontier.pop()
        for l in np.flatnonzero(adj[j]):
            if int(l) not in seen:
                seen.add(int(l))
                frontier.append(int(l))
    if len(seen) < k:
        other = [name(j) for j in range(k) if j not in seen]
        raise InputError(
            "scores: the design is disconnected (some learners never share a dataset, even indirectly, with "
            f"the others: {', '.join(other[:5])}); the Skillings-Mack statistic is undefined"
        )


def _sm_pairwise_z(a: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    d = np.diag(sigma)
    var = d[:, None] + d[None, :] - 2.0 * sigma
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(var > 0, (a[:, None] - a[None, :]) / np.sqrt(np.where(var > 0, var, 1.0)), 0.0)
    np.fill_diagonal(z, 0.0)
    return z


def bibd_parameters(observed) -> dict | None:
    """``{"b", "k", "m", "r", "lambda"}`` when the observed pattern is a balanced incomplete block design.

    ``observed`` is a boolean (blocks x learners) mask.  A design counts as a BIBD
    when every block has the same number ``m`` (2 <= m < k) of learners, every
    learner is in the same number ``r`` of blocks and every pair of learners shares
    the same number ``lambda >= 1`` of blocks.  Returns None otherwise (also for
    complete data).
    """
    o = np.asarray(observed, dtype=bool)
    if o.ndim != 2 or o.shape[0] == 0:
        return None
    b, k = o.shape
    sizes = o.sum(axis=1)
    reps = o.sum(axis=0)
    if np.unique(sizes).size != 1 or np.unique(reps).size != 1:
        return None
    m, r = int(sizes[0]), int(reps[0])
    if not (2 <= m < k):
        return None
    oi = o.astype(np.int64)
    lam = oi.T @ oi
    off = lam[~np.eye(k, dtype=bool)]
    if np.unique(off).size != 1 or off[0] < 1:
        return None
    return {"b": b, "k": k, "m": m, "r": r, "lambda": int(off[0])}


# ---------------------------------------------------------------- tests
def skillings_mack(scores, *, lower_is_better: bool = False, labels=None) -> IncompleteBlockResult:
    """Skillings-Mack test of equal treatment (learner) effects in blocks with missing cells.

    Parameters
    ----------
    scores : array_like of shape (n_datasets, k)
        One row per dataset, one column per learner, NaN where a learner was not run.
    lower_is_better : bool
        False for accuracies (rank 1 = highest), True for errors, costs or ranks.
    labels : sequence of str, optional
        Learner names, only used in error messages.

    Returns
    -------
    IncompleteBlockResult
        ``method = "Skillings-Mack"``.

    Raises
    ------
    InputError
        Fewer than 2 learners or 2 usable datasets, a learner that shares no
        dataset with another, or a disconnected design.

    Notes
    -----
    Equals :func:`~evaluation.stats.friedman` (``tie_correction=False``) on
    complete data, and Durbin's ``T1`` on a balanced incomplete design without
    ties (module docstring).  Every observed cell all tied gives ``T = 0``, p = 1.
    """
    ranks, obs, used = _prepare(scores, lower_is_better)
    n_used = int(used.sum())
    if n_used < 2:
        raise InputError(f"scores must have at least 2 rows (datasets) with 2 or more learners observed; got {n_used}")
    k = ranks.shape[1]
    a, sigma, lam = _sm_core(ranks, obs, used)
    coverage = obs[used].sum(axis=0)
    _check_connected(lam, coverage, labels)
    t = float(a[:-1] @ np.linalg.solve(sigma[:-1, :-1], a[:-1]))
    t = max(t, 0.0)
    p = float(stats.chi2.sf(t, k - 1)) if t > 0 else 1.0
    design = "complete" if obs[used].all() else ("bibd" if bibd_parameters(obs[used]) else "incomplete")
    return IncompleteBlockResult(
        statistic=t, pvalue=p, average_ranks=rescaled_average_ranks(ranks, obs), n_datasets=n_used,
        n_learners=k, df=k - 1, method="Skillings-Mack", dropped_datasets=int((~used).sum()),
        missing_cells=int((~obs[used]).sum()), adjusted_rank_sums=a, covariance=sigma,
        pairwise_z=_sm_pairwise_z(a, sigma), coverage=coverage, design=design,
    )


def durbin(scores, *, lower_is_better: bool = False, tie_correction: bool = True, labels=None) -> IncompleteBlockResult:
    """Durbin's test for a balanced incomplete block design (Conover's T1 and T2).

    Parameters
    ----------
    scores : array_like of shape (b, k)
        One row per block (dataset), NaN where a learner was not run; the
        observed pattern must be a BIBD (:func:`bibd_parameters`).
    lower_is_better : bool
        False for accuracies, True for errors or ranks.
    tie_correction : bool
        True (default, Conover 1999 and R's ``PMCMRplus::durbinTest``): ``A`` is the
        actual sum of squared ranks.  False: its no-ties value, which makes ``T1``
        equal to the Skillings-Mack statistic on the same data.
    labels : sequence of str, optional
        Learner names for error messages.

    Returns
    -------
    IncompleteBlockResult
        ``statistic = T1`` (chi-square, ``k - 1`` df), ``f_statistic = T2`` with
        ``f_df = (k - 1, b m - b - k + 1)``.

    Raises
    ------
    InputError
        When the observed pattern is not a balanced incomplete block design.
    """
    ranks, obs, used = _prepare(scores, lower_is_better)
    if not used.all():
        raise InputError("durbin: every row (block) must have at least 2 learners observed")
    params = bibd_parameters(obs)
    if params is None:
        raise InputError("durbin needs a balanced incomplete block design (same number of learners per dataset, "
                         "of datasets per learner, and of shared datasets per pair); use skillings_mack")
    b, k, m, r = params["b"], params["k"], params["m"], params["r"]
    rank_sums = np.nansum(ranks, axis=0)
    c = b * m * (m + 1) ** 2 / 4.0
    a_sq = float(np.nansum(ranks ** 2)) if tie_correction else b * m * (m + 1) * (2 * m + 1) / 6.0
    if a_sq - c <= 0:
        t1 = 0.0
    else:
        t1 = (k - 1) * float(np.sum((rank_sums - r * (m + 1) / 2.0) ** 2)) / (a_sq - c)
    p = float(stats.chi2.sf(t1, k - 1)) if t1 > 0 else 1.0
    d2 = b * m - b - k + 1
    denom = b * (m - 1) - t1
    if d2 <= 0:
        t2, p2 = float("nan"), float("nan")
    elif denom <= 1e-12 * b * m:
        t2, p2 = math.inf, 0.0
    else:
        t2 = (t1 / (k - 1)) / (denom / d2)
        p2 = float(stats.f.sf(t2, k - 1, d2)) if t2 > 0 else 1.0
    a, sigma, lam = _sm_core(ranks, obs, used)
    _check_connected(lam, obs.sum(axis=0), labels)
    return IncompleteBlockResult(
        statistic=float(t1), pvalue=p, average_ranks=rescaled_average_ranks(ranks, obs), n_datasets=b,
        n_learners=k, df=k - 1,
        method="Durbin (tie-corrected, Conover)" if tie_correction else "Durbin (no tie correction)",
        missing_cells=int((~obs).sum()), adjusted_rank_sums=a, covariance=sigma,
        pairwise_z=_sm_pairwise_z(a, sigma), coverage=obs.sum(axis=0), f_statistic=float(t2), f_pvalue=p2,
        f_df=(k - 1, d2), design="bibd", tie_correction=bool(tie_correction),
    )


def omnibus(scores, *, lower_is_better: bool = False, tie_correction: bool = False,
            labels=None) -> FriedmanResult | IncompleteBlockResult:
    """The omnibus rank test that fits the missing-cell pattern of ``scores``.

    * no missing cell (after dropping rows with fewer than two learners):
      :func:`~evaluation.stats.friedman`;
    * a balanced incomplete block design: :func:`durbin`;
    * anything else: :func:`skillings_mack`.

    Rows with fewer than two observed learners are dropped first (they carry
    no ranking information) and counted in ``dropped_datasets``.  ``method`` of
    the result names the test used.  ``tie_correction`` is passed to Friedman and
    Durbin (default False: the textbook formulas, which Skillings-Mack
    generalises exactly).
    """
    s = as_float_array("scores", scores, ndim=2)
    if s.shape[1] < 2:
        raise InputError(f"scores must have at least 2 columns (learners); got {s.shape[1]}")
    obs = ~np.isnan(s)
    keep = obs.sum(axis=1) >= 2
    dropped = int((~keep).sum())
    sub = s[keep]
    if not np.isnan(sub).any():
        res = friedman(sub, lower_is_better=lower_is_better, tie_correction=tie_correction)
        if dropped:
            from dataclasses import replace

            res = replace(res, dropped_datasets=dropped)
        return res
    if bibd_parameters(~np.isnan(sub)) is not None:
        from dataclasses import replace

        res = durbin(sub, lower_is_better=lower_is_better, tie_correction=tie_correction, labels=labels)
        return replace(res, dropped_datasets=dropped)
    return skillings_mack(s, lower_is_better=lower_is_better, labels=labels)


def omnibus_pairwise_z(result) -> np.ndarray:
    """Pairwise z matrix of an omnibus result (Friedman: from average ranks; else ``pairwise_z``)."""
    if isinstance(result, IncompleteBlockResult):
        return result.pairwise_z
    return pairwise_z(result.average_ranks, result.n_datasets)[0]
