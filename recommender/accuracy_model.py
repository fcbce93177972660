"""Accuracy model: how good each learner is likely to be on THIS dataset, before and after tests.

Accuracies are modelled as *gain over the majority class*, ``z = (acc - maj) / (1 - maj)``
(0 = no better than always predicting the majority class, 1 = perfect), which removes most of
the between-dataset spread that a plain mean of accuracies carries.  The vector of ``z`` of all
learners on a dataset is treated as multivariate normal:

* **Prior (before any test).**  Mean and covariance are similarity-weighted over the prior
  datasets (Gaussian kernel on standardised meta-features with bandwidth ``h``, as in
  :func:`~algorank.recommender.similarity.similarity_weights`; ``h = inf`` weighs all the same),
  the covariance shrunk towards its diagonal (``shrink``).  Missing cells are imputed by an
  additive dataset + learner model before the covariance is taken.
* **Conditioning (after tests).**  The accuracies observed so far on the new dataset update the
  others by Gaussian conditioning (a noise term ``noise`` for the CV estimate), the closed form of
  what low-rank / probabilistic matrix factorisation does in OBOE and Fusi et al. (2018): a
  learner that correlates with one that did well is expected to do well.

Failure probability: the similarity-weighted share of prior datasets where the learner was run
and failed (status ``error`` / ``timeout``), with a Beta(0.5, 0.5)-like prior.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from algorank.metadata.errors import InputError

__all__ = ["AccuracyModel", "SequentialPosterior", "fit_accuracy_model", "to_gain", "from_gain"]


def to_gain(acc, majority):
    """``(acc - maj) / (1 - maj)``; with ``maj`` NaN or 1 the accuracy itself."""
    acc = np.asarray(acc, dtype=float)
    maj = np.asarray(majority, dtype=float)
    ok = np.isfinite(maj) & (maj < 1.0)
    with np.errstate(all="ignore"):
        return np.where(ok, (acc - np.where(ok, maj, 0.0)) / np.where(ok, 1.0 - maj, 1.0), acc)


def from_gain(z, majority):
    """Inverse of :func:`to_gain`."""
    z = np.asarray(z, dtype=float)
    maj = np.asarray(majority, dtype=float)
    ok = np.isfinite(maj) & (maj < 1.0)
    return np.where(ok, np.where(ok, maj, 0.0) + z * np.where(ok, 1.0 - maj, 1.0), z)


@dataclass(frozen=True)
class AccuracyModel:
    """Prior datasets' gains, ready to be weighted and conditioned for a new dataset.

    Attributes
    ----------
    learners : tuple of str
    gain : ndarray (n_datasets, n_learners)
        Gain over the majority class, imputed where missing.
    observed : ndarray of bool
        Cells that were really measured (not imputed).
    failed : ndarray of bool
        Cells run and failed.
    attempted : ndarray of bool
        Cells run at all (ok or failed).
    shrink, noise : float
        Covariance shrinkage to the diagonal; variance of a CV estimate (gain units).
    """

    learners: tuple
    gain: np.ndarray = field(repr=False)
    observed: np.ndarray = field(repr=False)
    failed: np.ndarray = field(repr=False)
    attempted: np.ndarray = field(repr=False)
    shrink: float = 0.1
    noise: float = 1e-4

    def prior(self, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Weighted mean and shrunk covariance of the gains (``weights`` over prior datasets)."""
        w = np.asarray(weights, dtype=float)
        if not (w > 0).any():
            w = np.ones(len(self.gain))
        w = w / w.sum()
        mu = w @ self.gain
        centred = self.gain - mu
        cov = (centred * w[:, None]).T @ centred
        ess = 1.0 / float((w ** 2).sum())
        cov = cov * ess / max(ess - 1.0, 1.0)
        diag = np.diag(np.diag(cov))
        cov = (1.0 - self.shrink) * cov + self.shrink * diag + 1e-8 * np.eye(len(mu))
        return mu, cov

    def fail_probability(self, weights: np.ndarray) -> np.ndarray:
        """Probability that each learner fails on the new dataset."""
        w = np.asarray(weights, dtype=float)
        if not (w > 0).any():
            w = np.ones(len(self.gain))
        w = w / w.max()
        num = w @ self.failed.astype(float) + 0.05
        den = w @ self.attempted.astype(float) + 1.0
        return np.clip(num / den, 0.0, 0.99)

    def _conditioned_mean(self, mu: np.ndarray, cov: np.ndarray, seen: Sequence[int], values: Sequence[float]):
        """``(seen indices, cross-covariances K, solution of [v - mu_s, K^T], conditional mean)``."""
        s = np.asarray(seen, dtype=int)
        v = np.asarray(values, dtype=float)
        k = cov[:, s]
        koo = cov[np.ix_(s, s)] + self.noise * np.eye(len(s))
        sol = np.linalg.solve(koo, np.column_stack([v - mu[s], k.T]))
        mean = mu + k @ sol[:, 0]
        mean[s] = v
        return s, k, sol, mean

    def condition(self, mu: np.ndarray, cov: np.ndarray, seen: Sequence[int], values: Sequence[float]
                  ) -> tuple[np.ndarray, np.ndarray]:
        """Mean and standard deviation of every learner's gain given observed gains of ``seen``."""
        if len(seen) == 0:
            return mu.copy(), np.sqrt(np.maximum(np.diag(cov), 1e-12))
        s, k, sol, mean = self._conditioned_mean(mu, cov, seen, values)
        var = np.diag(cov) - np.einsum("ij,ji->i", k, sol[:, 1:])
        var[s] = 0.0
        return mean, np.sqrt(np.maximum(var, 1e-12))

    def posterior(self, mu: np.ndarray, cov: np.ndarray) -> "SequentialPosterior":
        """A :class:`SequentialPosterior` starting from the prior ``(mu, cov)``, with this model's noise."""
        return SequentialPosterior(mu, cov, self.noise)

    def condition_full(self, mu: np.ndarray, cov: np.ndarray, seen: Sequence[int], values: Sequence[float]
                       ) -> tuple[np.ndarray, np.ndarray]:
        """Mean and full covariance of every learner's gain given observed gains of ``seen``.

        Observed cells keep their values and a zero row/column of covariance.
        """
        if len(seen) == 0:
            return mu.copy(), cov.copy()
        s, k, sol, mean = self._conditioned_mean(mu, cov, seen, values)
        post = cov - k @ sol[:, 1:]
        post = 0.5 * (post + post.T)
        post[s, :] = 0.0
        post[:, s] = 0.0
        return mean, post


class SequentialPosterior:
    """Gaussian conditioning one noisy observation at a time (what an adaptive policy needs after each test).

    Folding observations in one by one gives the mean and variances of
    :meth:`AccuracyModel.condition` on all of them (the same Gaussian posterior; they agree to rounding,
    about 1e-12).  The posterior covariance is kept as the prior minus ``sum_t g_t k_t^T`` (``k_t`` the
    covariance column of the t-th observed cell before it, ``g_t = k_t / (k_t[j] + noise)``), so an
    observation costs ``O(t n)`` and no ``n x n`` matrix is formed unless :meth:`covariance` is asked for.

    Parameters
    ----------
    mu, cov : ndarray
        Prior mean and covariance.
    noise : float
        Variance of an observation around the true value.

    Attributes
    ----------
    mean, var : ndarray
        Posterior mean and variances of every cell (observed ones included: not overwritten).
    """

    def __init__(self, mu: np.ndarray, cov: np.ndarray, noise: float) -> None:
        self.cov0 = np.asarray(cov, dtype=float)
        self.noise = float(noise)
        self.mean = np.array(mu, dtype=float)
        self.var = np.diag(self.cov0).copy()
        n = len(self.mean)
        self._g = np.empty((8, n))
        self._k = np.empty((8, n))
        self.t = 0

    def add(self, j: int, value: float, noise: float | None = None) -> None:
        """Condition on one more observed value of cell ``j`` (``noise``: its variance, when not :attr:`noise`)."""
        t = self.t
        col = self.cov0[:, j] - self._k[:t, j] @ self._g[:t] if t else self.cov0[:, j].copy()
        g = col / (col[j] + (self.noise if noise is None else float(noise)))
        self.mean = self.mean + g * (value - self.mean[j])
        self.var = self.var - g * col
        if t == len(self._g):
            self._g = np.concatenate([self._g, np.empty_like(self._g)])
            self._k = np.concatenate([self._k, np.empty_like(self._k)])
        self._g[t], self._k[t] = g, col
        self.t = t + 1

    def covariance(self) -> np.ndarray:
        """The full posterior covariance."""
        t = self.t
        return self.cov0 - self._g[:t].T @ self._k[:t] if t else self.cov0.copy()


def fit_accuracy_model(accuracy: np.ndarray, majority: np.ndarray, learners: Sequence[str], *,
                       failed: np.ndarray | None = None, attempted: np.ndarray | None = None,
                       shrink: float = 0.1, noise: float = 1e-4) -> AccuracyModel:
    """Fit :class:`AccuracyModel` on a datasets x learners accuracy table.

    Parameters
    ----------
    accuracy : ndarray (n_datasets, n_learners)
        Mean accuracy of successful runs; NaN where none.
    majority : ndarray (n_datasets,)
        Majority-class fraction (NaN when unknown: the worst learner's accuracy stands in).
    learners : sequence of str
    failed, attempted : ndarray of bool, optional
        Cells run and failed / run at all (default: none failed, attempted = has accuracy).
    shrink, noise : float
        See :class:`AccuracyModel`.
    """
    # C order whatever the caller's layout (a table read from a pivot is often in Fortran order): numpy's sums
    # along an axis add in an order that depends on the memory layout, and the same table must give the same
    # model to the last bit (a near-tie between learners must not turn on how the table was built)
    acc = np.ascontiguousarray(accuracy, dtype=float)
    n, m = acc.shape
    if len(learners) != m or len(majority) != n:
        raise InputError("accuracy model: table, majority and learners disagree in size")
    maj = np.asarray(majority, dtype=float).copy()
    with np.errstate(all="ignore"):
        worst = np.nanmin(np.where(np.isfinite(acc), acc, np.inf), axis=1)
    maj = np.where(np.isfinite(maj), maj, np.where(np.isfinite(worst), worst, np.nan))
    gain = np.clip(to_gain(acc, maj[:, None]), -1.0, 1.0)
    observed = np.isfinite(gain)
    filled = _impute_additive(gain, observed)
    failed = np.zeros((n, m), dtype=bool) if failed is None else np.ascontiguousarray(failed, dtype=bool)
    attempted = observed | failed if attempted is None else np.ascontiguousarray(attempted, dtype=bool) | observed | failed
    return AccuracyModel(learners=tuple(str(l) for l in learners), gain=filled, observed=observed, failed=failed,
                         attempted=attempted, shrink=float(shrink), noise=float(noise))


def _impute_additive(z: np.ndarray, observed: np.ndarray, iterations: int = 10) -> np.ndarray:
    """Fill missing cells with dataset effect + learner effect fitted on the observed cells."""
    if observed.all():
        return z.copy()
    zz = np.where(observed, z, 0.0)
    cnt_r = np.maximum(observed.sum(axis=1), 1)
    cnt_c = np.maximum(observed.sum(axis=0), 1)
    row = np.zeros(z.shape[0])
    col = zz.sum(axis=0) / cnt_c
    for _ in range(iterations):
        row = (np.where(observed, zz - col[None, :], 0.0)).sum(axis=1) / cnt_r
        col = (np.where(observed, zz - row[:, None], 0.0)).sum(axis=0) / cnt_c
    return np.where(observed, z, row[:, None] + col[None, :])
