"""One control learner (e.g. a new method) against all others (Garcia, Fernandez, Luengo, Herrera 2010).

From the average ranks over N datasets, ``z_j = (R_j - R_c) / sqrt(k (k + 1) / (6 N))``
for every learner j against the control c (or the Skillings-Mack standardised
differences when cells are missing: ``z=``), two-sided ``p_j = 2 (1 - Phi(|z_j|))``, and
the ``m = k - 1`` p-values are adjusted by

* ``bonferroni-dunn``: ``min(1, m p_j)`` (single step; on complete data the same as
  comparing ``|R_j - R_c|`` with the Bonferroni-Dunn critical difference);
* ``holm`` (step-down): ``adj_(i) = max_{j <= i} min(1, (m - j + 1) p_(j))``;
* ``hochberg`` (step-up, Hochberg 1988): ``adj_(i) = min_{j >= i} min(1, (m - j + 1) p_(j))``
  (Garcia et al. print a ``max`` here; the step-up procedure takes the minimum, as
  ``statsmodels``' ``simes-hochberg`` does);
* ``finner`` (step-down, Finner 1993): ``adj_(i) = max_{j <= i} min(1, 1 - (1 - p_(j))^(m / j))``;

with ``p_(1) <= ... <= p_(m)`` the sorted p-values.  A learner differs significantly
from the control when its adjusted p-value is at most alpha.  Holm, Hochberg and
Finner are uniformly more powerful than Bonferroni-Dunn; Hochberg and Finner
more than Holm.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np
from scipy import stats

from algorank.metadata.errors import InputError
from algorank.metadata.io import to_plain

from ._validate import as_float_array, check_labels, check_n_datasets, check_rank_test

__all__ = [
    "CONTROL_METHODS",
    "ControlResult",
    "control_vs_all",
    "bonferroni_adjust",
    "hochberg_adjust",
    "finner_adjust",
]

#: Adjustments of :func:`control_vs_all`.
CONTROL_METHODS = ("bonferroni-dunn", "holm", "hochberg", "finner")


def _p(pvalues) -> np.ndarray:
    p = as_float_array("pvalues", pvalues).ravel()
    if np.isnan(p).any() or (p < 0).any() or (p > 1).any():
        raise InputError("pvalues must lie in [0, 1] without NaN")
    return p


def bonferroni_adjust(pvalues) -> np.ndarray:
    """``min(1, m p)``."""
    p = _p(pvalues)
    return np.minimum(1.0, p.size * p)


def hochberg_adjust(pvalues) -> np.ndarray:
    """Hochberg's step-up adjusted p-values ``min_{j >= i} min(1, (m - j + 1) p_(j))``."""
    p = _p(pvalues)
    m = p.size
    order = np.argsort(p, kind="stable")
    raw = np.minimum(1.0, np.arange(m, 0, -1) * p[order])
    adj = np.minimum.accumulate(raw[::-1])[::-1]
    out = np.empty(m)
    out[order] = adj
    return out


def finner_adjust(pvalues) -> np.ndarray:
    """Finner's step-down adjusted p-values ``max_{j <= i} min(1, 1 - (1 - p_(j))^(m / j))``."""
    p = _p(pvalues)
    m = p.size
    order = np.argsort(p, kind="stable")
    j = np.arange(1, m + 1)
    raw = np.minimum(1.0, 1.0 - (1.0 - p[order]) ** (m / j))
    adj = np.maximum.accumulate(raw)
    out = np.empty(m)
    out[order] = adj
    return out


def _holm(p: np.ndarray) -> np.ndarray:
    from .multiple import holm_adjust

    return holm_adjust(p)


@dataclass(frozen=True)
class ControlResult:
    """Result of :func:`control_vs_all`.

    Attributes
    ----------
    method : str
        The adjustment (one of :data:`CONTROL_METHODS`).
    alpha : float
    control : str
        The control learner.
    labels : tuple of str
        The other learners, in input order (the rows of the arrays below).
    average_ranks : ndarray of shape (k,)
        Input average ranks (all learners, input order).
    n_datasets : int
    z : ndarray of shape (k - 1,)
        ``(R_j - R_c) / SE`` (negative: j ranks better than the control).
    pvalues, adjusted : ndarray of shape (k - 1,)
        Two-sided raw and adjusted p-values.
    significant : ndarray of bool, shape (k - 1,)
        ``adjusted <= alpha``.
    critical_difference : float or None
        Bonferroni-Dunn's CD on complete data (``z`` not given); None otherwise.
    note : str
    """

    method: str
    alpha: float
    control: str
    labels: tuple
    average_ranks: np.ndarray = field(repr=False)
    n_datasets: int
    z: np.ndarray = field(repr=False)
    pvalues: np.ndarray = field(repr=False)
    adjusted: np.ndarray = field(repr=False)
    significant: np.ndarray = field(repr=False)
    critical_difference: float | None = None
    note: str = ""

    def better_than_control(self) -> list[str]:
        """Learners significantly better (lower rank) than the control."""
        return [l for l, s, z in zip(self.labels, self.significant, self.z) if s and z < 0]

    def worse_than_control(self) -> list[str]:
        """Learners significantly worse than the control."""
        return [l for l, s, z in zip(self.labels, self.significant, self.z) if s and z > 0]

    def to_dict(self) -> dict:
        """JSON-friendly dict of all fields plus one record per learner."""
        d = to_plain(asdict(self))
        d["comparisons"] = [{"learner": l, "z": float(z), "pvalue": float(p), "adjusted": float(a),
                             "significant": bool(s)}
                            for l, z, p, a, s in zip(self.labels, self.z, self.pvalues, self.adjusted,
                                                     self.significant)]
        return d


def control_vs_all(average_ranks, n_datasets: int, *, control: int | str, method: str = "holm",
                   alpha: float = 0.05, labels=None, z=None) -> ControlResult:
    """Compare one control learner with every other learner (see the module docstring).

    Parameters
    ----------
    average_ranks : array_like of shape (k,)
        Average ranks (1 = best), e.g. ``friedman(...).average_ranks``.
    n_datasets : int
        N.
    control : int or str
        Index or label of the control.  Choose it before looking at the results
        (a new method, a default); picking the best-ranked learner afterwards
        makes the p-values too small.
    method : {"bonferroni-dunn", "holm", "hochberg", "finner"}
    alpha : float
    labels : sequence of str, optional
        Learner names (default ``"0" .. "k-1"``).
    z : array_like of shape (k, k), optional
        Standardised pairwise differences to use instead of the Friedman ones
        (e.g. ``skillings_mack(...).pairwise_z`` with missing cells); row ``j``,
        column ``control`` is used.

    Returns
    -------
    ControlResult
    """
    alpha, r = check_rank_test(method, CONTROL_METHODS, alpha, average_ranks)
    k = r.size
    n = check_n_datasets(n_datasets)
    labels = check_labels(labels, k)
    if isinstance(control, str) and control in labels:
        c = labels.index(control)
    elif isinstance(control, (int, np.integer)) and not isinstance(control, bool) and 0 <= int(control) < k:
        c = int(control)
    else:
        raise InputError(f"control must be a learner index in [0, {k}) or one of the labels; got {control!r}")
    others = [j for j in range(k) if j != c]
    cd = None
    if z is None:
        se = math.sqrt(k * (k + 1) / (6.0 * n))
        zc = (r[others] - r[c]) / se
        if method == "bonferroni-dunn":
            cd = float(stats.norm.isf(alpha / (2.0 * (k - 1)))) * se
    else:
        zm = as_float_array("z", z, ndim=2)
        if zm.shape != (k, k):
            raise InputError(f"z must be a k x k = {k} x {k} matrix; got shape {zm.shape}")
        zc = zm[others, c]
    p = np.minimum(1.0, 2.0 * stats.norm.sf(np.abs(zc)))
    adj = {"bonferroni-dunn": bonferroni_adjust, "holm": _holm, "hochberg": hochberg_adjust,
           "finner": finner_adjust}[method](p)
    return ControlResult(method=method, alpha=alpha, control=labels[c], labels=tuple(labels[j] for j in others),
                         average_ranks=r, n_datasets=n, z=zc, pvalues=p, adjusted=adj, significant=adj <= alpha,
                         critical_difference=cd,
                         note="" if z is None else "z from the given standardised differences (incomplete design)")
