"""Resampling schemes: holdout, (repeated) stratified k-fold, 5x2, leave-one-out, .632 bootstrap.

A :class:`Resampler` produces, for repetition ``r``, a list of :class:`Split`.  The
splits of repetition ``r`` depend only on ``(random_state, r)`` (through
``numpy.random.SeedSequence([random_state, r])``), never on how many repetitions
are requested or on the learner: every learner sees identical splits (paired
evaluations), a run with 10 repetitions is a prefix of a run with 50, and an
adaptive run can add repetitions one at a time.

Schemes (``Resampler.scheme``):

``cv``
    stratified k-fold, reshuffled per repetition (repeated n x k CV); for regression
    (``stratify=False``) scikit-learn's ``KFold(k, shuffle=True)`` with the repetition's seed.
``5x2``
    ``cv`` with ``k = 2`` (Dietterich's 5x2 with 5 repetitions).
``holdout``
    one stratified split per repetition, ``train_fraction`` (2/3) for training.
``loo``
    leave-one-out: one repetition of n folds (deterministic; repetitions are
    meaningless, requesting more than one is an error).
``bootstrap``
    one bootstrap sample per repetition (n draws with replacement); the test set
    is the out-of-bag rows.  The evaluator scores the .632 estimate
    ``0.632 * acc_oob + 0.368 * acc_resubstitution``.

Also here: :func:`wilson_interval`, Kohavi's holdout interval (the roots of the
quadratic of the normal approximation).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from algorank.metadata.checks import check_folds
from algorank.metadata.errors import InputError

__all__ = ["Split", "Resampler", "SCHEMES", "wilson_interval", "make_resampler", "derive_seed"]

#: Resampling schemes understood by :class:`Resampler`.
SCHEMES = ("cv", "5x2", "holdout", "loo", "bootstrap")


def derive_seed(*keys: int) -> int:
    """A 32-bit seed derived from integer keys by :class:`numpy.random.SeedSequence`.

    The one seeding routine of the base level: the resampler's seed of each repetition is
    ``derive_seed(random_state, repeat)``, the evaluator's learner seed of each fold is
    ``derive_seed(random_state, repeat, fold, 7) >> 1``.  Different keys give independent seeds;
    the same keys the same seed on every platform (the seeds are part of what a run reproduces).
    """
    return int(np.random.SeedSequence([int(k) for k in keys]).generate_state(1)[0])


@dataclass(frozen=True, eq=False)
class Split:
    """One train/test split.

    Attributes
    ----------
    repeat, fold : int
        Position in the design (``fold = 0`` for holdout and bootstrap).
    train, test : ndarray of int
        Row indices (``train`` may repeat rows for the bootstrap).
    """

    repeat: int
    fold: int
    train: np.ndarray = field(repr=False)
    test: np.ndarray = field(repr=False)


@dataclass(frozen=True)
class Resampler:
    """Seeded splits of ``n`` rows with labels ``y`` (see the module docstring).

    Parameters
    ----------
    scheme : str
        One of :data:`SCHEMES`.
    n_splits : int
        Folds per repetition for ``cv`` (2 for ``5x2``; n for ``loo``; 1 otherwise).
    train_fraction : float
        Training share of a holdout split.
    random_state : int
        Seed of every split.
    stratify : bool
        Stratify by the labels (classification); False (regression): plain shuffled k-fold and
        shuffled holdout splits, seeded the same way.
    """

    scheme: str
    n_splits: int
    train_fraction: float = 2 / 3
    random_state: int = 0
    stratify: bool = True

    @property
    def folds_per_repeat(self) -> int:
        """Number of splits in one repetition."""
        return self.n_splits if self.scheme in ("cv", "5x2", "loo") else 1

    def seed(self, repeat: int) -> int:
        """The 32-bit seed of repetition ``repeat``."""
        return derive_seed(self.random_state, repeat)

    def repetition(self, repeat: int, y: np.ndarray) -> list[Split]:
        """The splits of repetition ``repeat`` of labels ``y`` (integer codes)."""
        y = np.asarray(y)
        n = len(y)
        if repeat < 0:
            raise InputError(f"repeat must be >= 0, got {repeat}")
        if self.scheme in ("cv", "5x2"):
            from sklearn.model_selection import StratifiedKFold

            k = self.n_splits
            _check_rows(n, k, self.scheme)
            if not self.stratify or np.bincount(y).max() < k:
                # every class has fewer rows than folds: plain shuffled k-fold
                from sklearn.model_selection import KFold

                splitter = KFold(k, shuffle=True, random_state=self.seed(repeat))
            else:
                splitter = StratifiedKFold(k, shuffle=True, random_state=self.seed(repeat))
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # "least populated class has only m members"
                return [Split(repeat, i, np.sort(tr), np.sort(te))
                        for i, (tr, te) in enumerate(splitter.split(np.zeros(n), y))]
        if self.scheme == "loo":
            if repeat > 0:
                raise InputError("leave-one-out has exactly one repetition (it is deterministic)")
            _check_rows(n, 2, "loo")
            idx = np.arange(n)
            return [Split(0, i, np.delete(idx, i), np.array([i])) for i in range(n)]
        if self.scheme == "holdout":
            return [self._holdout(repeat, y)]
        if self.scheme == "bootstrap":
            rng = np.random.default_rng(self.seed(repeat))
            _check_rows(n, 2, "bootstrap")
            for _ in range(1000):
                train = np.sort(rng.integers(0, n, size=n))
                oob = np.setdiff1d(np.arange(n), train)
                if len(oob):
                    return [Split(repeat, 0, train, oob)]
            raise InputError(f"bootstrap: no out-of-bag rows after 1000 draws of n={n}")  # pragma: no cover
        raise InputError(f"scheme must be one of {', '.join(SCHEMES)}, got {self.scheme!r}")

    def _holdout(self, repeat: int, y: np.ndarray) -> Split:
        n = len(y)
        _check_rows(n, 2, "holdout")
        n_test = max(1, min(n - 1, int(round(n * (1 - self.train_fraction)))))
        rng = np.random.default_rng(self.seed(repeat))
        classes, counts = np.unique(y, return_counts=True)
        if self.stratify and counts.min() >= 2 and n_test >= len(classes) and n - n_test >= len(classes):
            from sklearn.model_selection import StratifiedShuffleSplit

            sss = StratifiedShuffleSplit(1, test_size=n_test, random_state=self.seed(repeat))
            tr, te = next(sss.split(np.zeros(n), y))
        else:
            perm = rng.permutation(n)
            te, tr = perm[:n_test], perm[n_test:]
        return Split(repeat, 0, np.sort(tr), np.sort(te))


def _check_rows(n: int, k: int, scheme: str) -> None:
    if n < k:
        raise InputError(f"scheme {scheme!r} needs at least {k} rows (one per fold); the dataset has {n}")


def make_resampler(scheme: str, *, cv: int = 5, n_rows: int, train_fraction: float = 2 / 3,
                   random_state: int = 0, stratify: bool = True) -> Resampler:
    """Validate the options and return a :class:`Resampler` for ``n_rows`` rows.

    Raises
    ------
    InputError
        Unknown scheme, ``cv < 2``, fewer rows than folds, ``train_fraction`` outside (0, 1).
    """
    if scheme not in SCHEMES:
        raise InputError(f"scheme must be one of {', '.join(SCHEMES)}, got {scheme!r}")
    check_folds(cv)
    if not 0 < train_fraction < 1:
        raise InputError(f"train_fraction must lie in (0, 1), got {train_fraction!r}")
    k = {"cv": int(cv), "5x2": 2, "loo": int(n_rows), "holdout": 1, "bootstrap": 1}[scheme]
    if scheme == "cv":
        check_folds(k, n_rows=n_rows)
    elif scheme == "5x2":
        _check_rows(n_rows, k, f"{scheme} with {k} folds")
    else:
        _check_rows(n_rows, 2, scheme)
    return Resampler(scheme=scheme, n_splits=k, train_fraction=float(train_fraction), random_state=int(random_state),
                     stratify=bool(stratify))


def wilson_interval(accuracy: float, n: int, *, confidence: float = 0.95) -> tuple[float, float]:
    """Kohavi's holdout confidence interval for an accuracy measured on ``n`` test instances.

    The roots of ``(acc - p)^2 = z^2 p (1 - p) / n`` in ``p`` (the normal approximation
    of the binomial), i.e. the Wilson score interval:
    ``(2 n acc + z^2 -+ z sqrt(4 n acc + z^2 - 4 n acc^2)) / (2 (n + z^2))``.

    Examples
    --------
    >>> [round(v, 3) for v in wilson_interval(0.83, 200)]
    [0.772, 0.876]
    """
    from scipy.stats import norm

    if not 0 <= accuracy <= 1 or not math.isfinite(accuracy):
        raise InputError(f"accuracy must lie in [0, 1], got {accuracy!r}")
    if n < 1:
        raise InputError(f"n (test instances) must be >= 1, got {n!r}")
    if not 0 < confidence < 1:
        raise InputError(f"confidence must lie in (0, 1), got {confidence!r}")
    z = float(norm.ppf(0.5 + confidence / 2))
    z2 = z * z
    centre = 2 * n * accuracy + z2
    half = z * math.sqrt(max(0.0, 4 * n * accuracy + z2 - 4 * n * accuracy * accuracy))
    denom = 2 * (n + z2)
    return (max(0.0, (centre - half) / denom), min(1.0, (centre + half) / denom))
