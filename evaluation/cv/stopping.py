"""When to stop repeating cross-validation (Raeder, Hoens and Chawla 2010).

After each full repetition a :class:`StoppingRule` sees the repetition's
per-instance scores and its accuracy estimate, and says whether to stop:

``rank`` (:class:`RankConvergence`)
    keep, per instance, the running mean of the score of the true class (the
    predicted probability; the decision value or 0/1 correctness for learners
    without probabilities); stop when Spearman's rho between the running means
    after two successive repetitions is at least ``threshold`` (paper: 1 - 1e-4).
    Instances not yet scored (holdout, bootstrap) are left out of the correlation.
    Two identical vectors count as rho = 1; a constant vector (rho undefined) does
    not stop.
``ks`` (:class:`KSConvergence`)
    Kolmogorov-Smirnov D between the repetition estimates of odd and even
    repetitions; stop when D <= ``threshold`` (paper: 0.1 or 0.2).
``fixed`` (:class:`FixedRepetitions`)
    a fixed number of repetitions.

Every rule also honours ``min_repeats`` (never stop before) and ``max_repeats``
(always stop at).  :func:`reproducibility` is Raeder's R between two learners.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from algorank.metadata.errors import InputError

__all__ = [
    "STOP_RULES",
    "StoppingRule",
    "RankConvergence",
    "KSConvergence",
    "FixedRepetitions",
    "make_rule",
    "ks_odd_even",
    "reproducibility",
    "default_threshold",
]

#: Names of the stopping rules.
STOP_RULES = ("rank", "ks", "fixed")


def default_threshold(stop: str) -> float:
    """Default threshold of a rule: 1 - 1e-4 for ``rank``, 0.1 for ``ks``, unused for ``fixed``."""
    return {"rank": 1 - 1e-4, "ks": 0.1}.get(stop, math.nan)


@dataclass
class StoppingRule:
    """Base class: counts repetitions and applies ``min_repeats`` / ``max_repeats``.

    Parameters
    ----------
    min_repeats, max_repeats : int
        Bounds on the number of repetitions (``1 <= min_repeats <= max_repeats``).
    """

    min_repeats: int = 2
    max_repeats: int = 50
    repeats: int = field(default=0, init=False)
    statistic: float = field(default=math.nan, init=False)
    history: list = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        for name in ("min_repeats", "max_repeats"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise InputError(f"{name} must be an integer >= 1, got {v!r}")
        if self.min_repeats > self.max_repeats:
            raise InputError(f"min_repeats ({self.min_repeats}) must not exceed max_repeats ({self.max_repeats})")

    def update(self, scores: np.ndarray, estimate: float) -> bool:
        """Record one repetition; return True when no further repetition is needed.

        Parameters
        ----------
        scores : ndarray of shape (n_instances,)
            Score of the true class per instance in this repetition (NaN where the
            instance was not tested in it).
        estimate : float
            The repetition's accuracy estimate.
        """
        self.repeats += 1
        self.statistic = self._observe(np.asarray(scores, dtype=float), float(estimate))
        self.history.append(self.statistic)
        if self.repeats >= self.max_repeats:
            return True
        return self.repeats >= self.min_repeats and self._converged()

    def _observe(self, scores: np.ndarray, estimate: float) -> float:
        return math.nan

    def _converged(self) -> bool:
        return False


@dataclass
class FixedRepetitions(StoppingRule):
    """Stop after exactly ``max_repeats`` repetitions (``min_repeats`` is ignored)."""

    def __post_init__(self) -> None:
        self.min_repeats = self.max_repeats
        super().__post_init__()


@dataclass
class RankConvergence(StoppingRule):
    """Stop when Spearman's rho of successive running means reaches ``threshold``."""

    threshold: float = 1 - 1e-4
    _sum: np.ndarray | None = field(default=None, init=False, repr=False)
    _count: np.ndarray | None = field(default=None, init=False, repr=False)
    _previous: np.ndarray | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not -1 <= self.threshold <= 1:
            raise InputError(f"threshold of the rank rule must lie in [-1, 1], got {self.threshold!r}")

    def _observe(self, scores: np.ndarray, estimate: float) -> float:
        if self._sum is None:
            self._sum = np.zeros_like(scores)
            self._count = np.zeros_like(scores)
        seen = ~np.isnan(scores)
        self._sum[seen] += scores[seen]
        self._count[seen] += 1
        with np.errstate(invalid="ignore", divide="ignore"):
            current = np.where(self._count > 0, self._sum / np.maximum(self._count, 1), np.nan)
        previous, self._previous = self._previous, current
        if previous is None:
            return math.nan
        return running_mean_rho(previous, current)

    def _converged(self) -> bool:
        return bool(self.statistic >= self.threshold)


def running_mean_rho(previous: np.ndarray, current: np.ndarray) -> float:
    """Spearman's rho between two running-mean vectors over the instances scored in both."""
    from scipy.stats import spearmanr

    both = ~np.isnan(previous) & ~np.isnan(current)
    a, b = previous[both], current[both]
    if len(a) < 2:
        return math.nan
    if np.array_equal(a, b):
        return 1.0
    if np.all(a == a[0]) or np.all(b == b[0]):
        return math.nan
    return float(spearmanr(a, b).statistic)


@dataclass
class KSConvergence(StoppingRule):
    """Stop when the KS distance between odd and even repetition estimates is at most ``threshold``."""

    threshold: float = 0.1
    estimates: list = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.min_repeats < 2:
            raise InputError(f"the ks rule needs min_repeats >= 2 (odd and even repetitions), got {self.min_repeats}")
        if not 0 <= self.threshold <= 1:
            raise InputError(f"threshold of the ks rule must lie in [0, 1], got {self.threshold!r}")

    def _observe(self, scores: np.ndarray, estimate: float) -> float:
        self.estimates.append(estimate)
        return ks_odd_even(self.estimates)

    def _converged(self) -> bool:
        return bool(self.statistic <= self.threshold)


def ks_odd_even(estimates) -> float:
    """Kolmogorov-Smirnov D between odd (1st, 3rd, ...) and even repetition estimates (NaN if < 2)."""
    from scipy.stats import ks_2samp

    e = np.asarray(estimates, dtype=float)
    if len(e) < 2:
        return math.nan
    import warnings

    with warnings.catch_warnings():  # only D is used; the p-value method does not matter
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(ks_2samp(e[0::2], e[1::2]).statistic)


def make_rule(stop: str, *, repeats: int | None = None, threshold: float | None = None,
              min_repeats: int | None = None, max_repeats: int | None = None) -> StoppingRule:
    """Build a fresh rule.

    Parameters
    ----------
    stop : {"rank", "ks", "fixed"}
    repeats : int, optional
        Number of repetitions of ``fixed`` (default 1); for the adaptive rules it is
        the default of ``max_repeats``.
    threshold : float, optional
        Default :func:`default_threshold`.
    min_repeats, max_repeats : int, optional
        Defaults: ``rank`` 2 and 50, ``ks`` 4 and 50.
    """
    if stop not in STOP_RULES:
        raise InputError(f"stop must be one of {', '.join(STOP_RULES)}, got {stop!r}")
    if stop == "fixed":
        n = repeats if repeats is not None else (max_repeats if max_repeats is not None else 1)
        return FixedRepetitions(min_repeats=n, max_repeats=n)
    mx = max_repeats if max_repeats is not None else (repeats if repeats is not None else 50)
    mn = min_repeats if min_repeats is not None else min(mx, 2 if stop == "rank" else 4)
    t = default_threshold(stop) if threshold is None else float(threshold)
    cls = RankConvergence if stop == "rank" else KSConvergence
    return cls(min_repeats=mn, max_repeats=mx, threshold=t)


def reproducibility(e_i, e_j) -> float:
    """Raeder's reproducibility R of the comparison of two learners.

    ``R' = mean(I(e_i > e_j))`` over paired repetition estimates, ties counting 1/2;
    ``R = max(2R' - 1, 2(1 - R') - 1)`` in [0, 1]: 1 when one learner wins every
    repetition, 0 when each wins half the time.  NaN when there are no pairs.
    """
    a = np.asarray(e_i, dtype=float)
    b = np.asarray(e_j, dtype=float)
    if a.shape != b.shape:
        raise InputError(f"paired estimates must have the same length, got {a.shape} and {b.shape}")
    ok = ~np.isnan(a) & ~np.isnan(b)
    if not ok.any():
        return math.nan
    r1 = float(np.mean(np.where(a[ok] > b[ok], 1.0, np.where(a[ok] == b[ok], 0.5, 0.0))))
    return max(2 * r1 - 1, 2 * (1 - r1) - 1)
