"""PMF: probabilistic matrix factorisation with expected improvement (specs ``pmf`` and ``pmf:per_second``).

Paper: N. Fusi, R. Sheth and H. M. Elibol, "Probabilistic Matrix Factorization for Automated Machine
Learning", NeurIPS 2018.  Code followed: ``rsheth80/pmf-automl`` (``run.py``: the model set-up and
``bo_search``; ``bo.py``: ``ei`` and ``init_l1``; ``gplvm.py``: ``GP.posterior``; ``kernels.py``).

* **Latent learners.**  Every learner has latent coordinates ``x_j`` in ``Q = 20`` dimensions (``run.py``'s
  ``Q``; fewer when the meta-data has fewer learners or datasets): the PCA of the datasets' (standardised)
  accuracies after mean imputation of missing cells (``SimpleImputer(strategy='mean')`` then
  ``PCA(Q).fit_transform``, learners as samples), which is how ``run.py`` initialises the GP-LVM.
* **One GP per dataset over the latent learners**, zero mean, kernel ``RBF + White`` plus Gaussian noise,
  hyperparameters shared by all datasets.
* **Warm start** (``init_l1``, ``bo_n_init = 5``): the 5 prior datasets nearest to the new one in L1
  distance over the raw dataset features; among the learners with a result on all 5, the 5 with the
  best mean rank there are tested first (best first).
* **Then expected improvement** (``ei``, ``xi = 0.01``, maximisation) of the GP posterior on the new
  dataset's observations, one learner at a time, until every learner is tested.
  ``pmf:per_second`` divides it by the predicted seconds (expected improvement per second).

Deviations, each with its reason (the issue allows a closed-form GP in place of the SGD-trained GP-LVM):

* **No GP-LVM training.**  ``run.py`` refines the latent coordinates and the kernel by SGD (``lr = 1e-7``,
  300 epochs of 50-dataset batches, on 42,000 pipelines x 464 datasets).  Here the latent coordinates
  stay at their PCA initialisation and the hyperparameters (one RBF lengthscale shared by the ``Q``
  dimensions instead of one per dimension, signal and noise variance) maximise the summed marginal
  likelihood of the prior datasets (L-BFGS-B, exact gradient, at most 100 iterations): with 20 to 219
  learners the SGD set-up is neither needed nor stable, and the shared lengthscale keeps the fit to 3
  parameters (the PCA coordinates already carry their scales).  The White kernel and the noise are one
  variance (they add up on the diagonal and only the sum is identifiable).
* **Normalisation.**  The authors' matrix holds per-dataset normalised balanced accuracies; the
  normalisation of the new dataset used the full new column.  Here each prior dataset's accuracies are
  standardised (mean 0, sd 1 over its learners) and the new dataset's observations use the mean over
  the prior datasets of those means and sds (the new column is unknown before testing).
* **Dataset features** are the numeric columns of the datasets table that the new dataset has and most
  prior datasets have (missing prior values: the column median), without landmarkers or any measured
  time (``landmark*``, ``NaiveBayes*``, ``*_time``, build bookkeeping): nothing has to be run to get
  them, so nothing has to be charged.  Without any shared feature, the warm start ranks over all prior
  datasets.
* **Predicted seconds** (``per_second`` only; PMF models no time): the geometric mean of the learner's
  time on the 5 nearest prior datasets, corrected after each test by the GP posterior mean (same kernel)
  of the log ratios measured/predicted of the tests so far.
* A failed or timed-out test adds no observation (``bo_search`` skips NaN results) and the learner is
  not proposed again.
"""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from scipy.optimize import minimize
from scipy.stats import norm, rankdata

from algorank.metadata.errors import InputError
from algorank.recommender.peers._common import (
    TimedPeer,
    PlannedPolicy,
    dataset_rows,
    history_state,
    time_model_spec,
    training_arrays,
    quiet_nan,
    single_threaded,
)

__all__ = ["PMF", "init_l1", "expected_improvement", "latent_coordinates", "fit_kernel", "gp_posterior",
           "feature_columns", "from_spec"]

#: PMF's settings (``run.py``, ``bo.py``).
Q = 20
N_INIT = 5
XI = 0.01
#: Columns of the datasets table that are not free meta-features (measured by running something, or bookkeeping).
_EXCLUDED = ("landmark", "naivebayes", "_time", "build_", "calibration", "dropped_rows", "from_train_size")


def feature_columns(table_columns, info: Mapping, prior_values: dict) -> list:
    """Numeric meta-feature columns usable for the L1 warm start (see the module docstring)."""
    out = []
    for c in table_columns:
        low = str(c).lower()
        if c in ("dataset", "name", "source") or any(x in low for x in _EXCLUDED):
            continue
        v = prior_values.get(c)
        if v is None or np.isfinite(v).mean() < 0.5:
            continue
        try:
            q = float(info.get(c, math.nan))
        except (TypeError, ValueError):
            continue
        if math.isfinite(q):
            out.append(c)
    return out


def init_l1(accuracy: np.ndarray, features: np.ndarray, query: np.ndarray, n_init: int = N_INIT) -> list:
    """``bo.init_l1``: the ``n_init`` learners with the best mean rank on the ``n_init`` prior datasets
    nearest to ``query`` in L1 distance, among the learners with a result on all of them.

    ``accuracy`` is datasets x learners (NaN = no result); ``features`` datasets x features.
    """
    dis = np.abs(np.asarray(features, dtype=float) - np.asarray(query, dtype=float)).sum(axis=1)
    closest = np.argsort(dis, kind="stable")[:n_init]
    sub = np.asarray(accuracy, dtype=float)[closest]
    ok = np.flatnonzero(np.isfinite(sub).all(axis=0))
    if len(ok) == 0:
        return []
    ranks = np.apply_along_axis(rankdata, 1, sub[:, ok])  # per dataset, ascending: best = highest rank
    mean_rank = ranks.mean(axis=0)
    order = ok[np.argsort(mean_rank, kind="stable")[::-1]]
    return [int(j) for j in order[:n_init]]


def expected_improvement(mean: np.ndarray, var: np.ndarray, ybest: float, xi: float = XI,
                         eps: float = 1e-12) -> np.ndarray:
    """``bo.ei``: ``sd (Phi(g) g + phi(g))`` with ``g = (mean - ybest - xi) / sd``, ``sd = sqrt(var) + eps``."""
    sd = np.sqrt(np.maximum(var, 0.0)) + eps
    g = (mean - ybest - xi) / sd
    return sd * (norm.cdf(g) * g + norm.pdf(g))


def latent_coordinates(z: np.ndarray, q: int = Q) -> np.ndarray:
    """Learners' latent coordinates: PCA (``q`` components) of the learners x datasets matrix after
    mean imputation per dataset (``run.py``)."""
    from sklearn.decomposition import PCA
    from sklearn.impute import SimpleImputer

    Y = np.asarray(z, dtype=float).T  # learners x datasets, as in run.py
    keep = np.isfinite(Y).any(axis=0)
    Y = SimpleImputer(missing_values=np.nan, strategy="mean").fit_transform(Y[:, keep])
    q = max(1, min(q, Y.shape[0], Y.shape[1]))
    return PCA(q, random_state=0).fit_transform(Y)


def _rbf(X: np.ndarray, X2: np.ndarray, lengthscale: float) -> np.ndarray:
    d = ((X[:, None, :] - X2[None, :, :]) ** 2).sum(axis=2)
    return np.exp(-0.5 * d / lengthscale**2), d


def fit_kernel(X: np.ndarray, z: np.ndarray, *, maxiter: int = 100) -> tuple[float, float, float]:
    """``(lengthscale, signal variance, noise variance)`` maximising the summed marginal likelihood of
    the datasets' standardised accuracies ``z`` (datasets x learners, NaN = not observed)."""
    z = np.asarray(z, dtype=float)
    obs = np.isfinite(z)
    groups: dict = {}
    for d in range(z.shape[0]):
        if obs[d].sum() >= 2:
            groups.setdefault(obs[d].tobytes(), []).append(d)
    packs = []
    for key, rows in groups.items():
        idx = np.flatnonzero(obs[rows[0]])
        Zg = z[np.ix_(rows, idx)]
        packs.append((idx, len(rows), Zg.T @ Zg))
    D0 = _rbf(X, X, 1.0)[1]

    def nll(theta):
        ell, sf2, sn2 = np.exp(theta)
        Kr = np.exp(-0.5 * D0 / ell**2)
        total, grad = 0.0, np.zeros(3)
        for idx, n_d, S in packs:
            Krg = Kr[np.ix_(idx, idx)]
            K = sf2 * Krg + (sn2 + 1e-8) * np.eye(len(idx))
            try:
                c = cho_factor(K, lower=True)
            except np.linalg.LinAlgError:
                return 1e300, np.zeros(3)
            Ki = cho_solve(c, np.eye(len(idx)))
            logdet = 2.0 * np.log(np.diag(c[0])).sum()
            total += 0.5 * n_d * logdet + 0.5 * np.sum(Ki * S)
            W = n_d * Ki - Ki @ S @ Ki  # d nll / dK = W / 2
            Dg = D0[np.ix_(idx, idx)]
            grad[0] += 0.5 * np.sum(W * sf2 * Krg * Dg / ell**2)
            grad[1] += 0.5 * np.sum(W * sf2 * Krg)
            grad[2] += 0.5 * np.trace(W) * sn2
        return total, grad

    if not packs:
        return 1.0, 1.0, 1.0
    theta0 = np.log([max(np.sqrt(np.median(D0[D0 > 0])) if (D0 > 0).any() else 1.0, 1e-3), 1.0, 1.0])
    res = minimize(nll, theta0, jac=True, method="L-BFGS-B", bounds=[(-7, 7), (-7, 5), (-9, 3)],
                   options={"maxiter": maxiter})
    ell, sf2, sn2 = np.exp(res.x)
    return float(ell), float(sf2), float(sn2)


def gp_posterior(X: np.ndarray, seen: list, y: np.ndarray, kernel: tuple, *, targets=None, gram=None):
    """Posterior mean and variance of the latent function at ``X[targets]`` (all learners by default)
    given ``y`` at ``X[seen]`` (``GP.posterior``: zero prior mean, noise on the observations only).

    ``gram`` is the precomputed ``sf2 * RBF(X, X)`` (the same values, computed once per dataset).
    """
    ell, sf2, sn2 = kernel
    targets = np.arange(len(X)) if targets is None else np.asarray(targets, dtype=int)
    if not seen:
        return np.zeros(len(targets)), np.full(len(targets), sf2)
    G = sf2 * _rbf(X, X, ell)[0] if gram is None else gram
    K = G[np.ix_(seen, seen)] + (sn2 + 1e-8) * np.eye(len(seen))
    Ks = G[np.ix_(seen, targets)]
    c = cho_factor(K, lower=True)
    mean = Ks.T @ cho_solve(c, np.asarray(y, dtype=float))
    var = sf2 - np.sum(Ks * cho_solve(c, Ks), axis=0)
    return mean, np.maximum(var, 0.0)


def _nanmean0(a: np.ndarray) -> np.ndarray:
    """Column means over the finite cells (NaN for a column without any), without warnings."""
    ok = np.isfinite(a)
    n = ok.sum(axis=0)
    total = np.where(ok, a, 0.0).sum(axis=0)
    return np.where(n > 0, total / np.maximum(n, 1), np.nan)


class PMF(TimedPeer):
    """PMF with an L1 warm start and expected improvement (module docstring).

    Parameters
    ----------
    per_second : bool
        Divide the expected improvement by the predicted seconds.
    n_init : int
        Warm-start learners and nearest prior datasets (``bo.init_l1``; PMF's 5).
    """

    adaptive = True

    def __init__(self, *, per_second: bool = False, n_init: int = N_INIT, **kw) -> None:
        if not (isinstance(n_init, (int, np.integer)) and n_init >= 1):
            raise InputError(f"strategy 'pmf': n_init must be an integer >= 1; got {n_init!r}")
        super().__init__(per_second=bool(per_second), n_init=int(n_init), **kw)
        self.per_second = bool(per_second)
        self.n_init = int(n_init)

    def default_name(self) -> str:
        spec = (("per_second" if self.per_second else "") + ("" if self.n_init == N_INIT else f",n_init={self.n_init}")
                + time_model_spec(self.time_model))
        return "pmf" + (":" + spec.lstrip(",") if spec else "")

    def fit(self, meta) -> "PMF":
        """Latent coordinates, kernel hyperparameters and the prior datasets' features."""
        with single_threaded():
            return self._fit(meta)

    def _fit(self, meta) -> "PMF":
        arrays = training_arrays(meta, time_kind=self.time_kind, time_model=self.time_model,
                                 need_times=self.per_second, who=f"strategy {self.name!r}")
        known = arrays.has_accuracy.any(axis=0)
        if arrays.shape[0] < 2 or known.sum() < 2:
            raise InputError(f"strategy {self.name!r} needs at least 2 prior datasets and 2 learners with results")
        self.learners_ = tuple(l for l, k in zip(arrays.learners, known) if k)
        acc = arrays.accuracy[:, known]
        with quiet_nan():
            mu = np.nanmean(acc, axis=1)
            sd = np.nanstd(acc, axis=1)
        sd = np.where(np.isfinite(sd) & (sd > 0), sd, 1.0)
        z = (acc - mu[:, None]) / sd[:, None]
        ok = np.isfinite(mu)
        self.center_ = float(np.mean(mu[ok])) if ok.any() else 0.0
        self.scale_ = float(np.mean(sd[ok])) if ok.any() else 1.0
        self.accuracy_ = acc
        self.X_ = latent_coordinates(z)
        self.kernel_ = fit_kernel(self.X_, z)
        self.seconds_ = np.where(np.isfinite(arrays.seconds[:, known]) & (arrays.seconds[:, known] > 0),
                                 arrays.seconds[:, known], np.nan)
        rows = dataset_rows(meta, arrays.datasets)
        self.columns_ = [c for c in meta.datasets.columns if c != "dataset"]
        self.prior_values_ = {}
        for c in self.columns_:
            try:
                self.prior_values_[c] = np.array([float(r.get(c)) for r in rows], dtype=float)
            except (TypeError, ValueError):
                continue
        return self

    def _warm_start(self, info: Mapping) -> tuple[list, np.ndarray]:
        cols = feature_columns(self.columns_, info, self.prior_values_)
        n = self.accuracy_.shape[0]
        if cols:
            F = np.column_stack([self.prior_values_[c] for c in cols])
            med = np.nanmedian(F, axis=0)
            F = np.where(np.isfinite(F), F, med[None, :])
            q = np.array([float(info[c]) for c in cols])
        else:
            F, q = np.zeros((n, 1)), np.zeros(1)
        near = np.argsort(np.abs(F - q).sum(axis=1), kind="stable")[:self.n_init]
        return init_l1(self.accuracy_, F, q, n_init=self.n_init), near

    def policy(self, dataset_info: Mapping | None = None) -> PlannedPolicy:
        """Warm start, then expected improvement (per second) on one new dataset."""
        self._check_fitted()
        info = dict(dataset_info or {})
        first, near = self._warm_start(info)
        base_log_t = None
        if self.per_second:
            logs = np.log(self.seconds_)
            lt, fill = _nanmean0(logs[near]), _nanmean0(logs)
            base_log_t = np.where(np.isfinite(lt), lt, np.where(np.isfinite(fill), fill, 0.0))
        state = {"init": False, "gram": self.kernel_[1] * _rbf(self.X_, self.X_, self.kernel_[0])[0]}
        policy = PlannedPolicy(self.learners_, lambda history: self._plan(history, policy.index, first, state,
                                                                          base_log_t))
        return policy

    def _plan(self, history, index, first, state, base_log_t):
        if not state["init"]:
            state["init"] = True
            if first:
                return list(first)
        tried, ok, _ = history_state(history, index)
        seen = sorted(ok)
        y = [(ok[j] - self.center_) / self.scale_ for j in seen]
        rest = [j for j in range(len(self.learners_)) if j not in tried]
        if not rest:
            return None
        if not seen:  # bo.BO.next without observations: any candidate (here the first, deterministic)
            return [rest[0]]
        mean, var = gp_posterior(self.X_, seen, np.array(y), self.kernel_, targets=rest, gram=state["gram"])
        score = expected_improvement(mean, var, max(y))
        if self.per_second:
            timed = [(index[o.learner], o.seconds) for o in history
                     if o.learner in index and math.isfinite(o.seconds) and o.seconds > 0 and o.status != "error"]
            if timed:
                js = [j for j, _ in timed]
                resid = np.array([math.log(s) - base_log_t[j] for j, s in timed])
                corr, _ = gp_posterior(self.X_, js, resid, self.kernel_, targets=rest, gram=state["gram"])
            else:
                corr = np.zeros(len(rest))
            score = score / np.exp(base_log_t[rest] + corr)
        return [rest[int(np.argmax(score))]]


def from_spec(params: dict, random_state=None, name: str | None = None) -> PMF:
    """Build from spec parameters: ``per_second`` (a flag, or ``per_second=yes|no``), ``n_init`` (warm-start
    learners, default 5), ``overhead``, ``scale``."""
    from algorank.recommender.spec import pop_number, pop_time_model

    raw = params.pop("per_second", None)
    if raw is None:
        per_second = False
    else:
        raw = str(raw).strip().lower()
        if raw not in ("", "yes", "no"):
            raise InputError(f"strategy 'pmf': per_second must be yes or no; got {raw!r}")
        per_second = raw != "no"
    n_init = pop_number(params, "n_init", N_INIT, strategy="pmf", kind=int, rule="an integer >= 1",
                        valid=lambda v: v >= 1)
    return PMF(per_second=per_second, n_init=n_init, **pop_time_model(params, "pmf"), name=name)
