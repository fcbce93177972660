"""OBOE and TensorOboe as strategies (specs ``oboe`` and ``oboe:design=greedy``).

Paper: C. Yang, Y. Akimoto, D. W. Kim and M. Udell, "OBOE: Collaborative Filtering for AutoML Model
Selection", KDD 2019; TensorOboe: C. Yang, J. Fan, Z. Wu and M. Udell, "AutoML Pipeline Selection:
Efficiently Navigating the Combinatorial Space", KDD 2020.  Code followed: ``udellgroup/oboe``
(``oboe/auto_learner.py``, ``AutoLearner.fit`` and ``_fit`` with ``method='Oboe'``, ``selection_method='ED'``,
``scalarization='D'``; ``oboe/linalg.py``: ``approx_matrix_rank``, ``pca``, ``impute``;
``oboe/experiment_design.py``: ``solve``, ``pivot_columns_time``, ``greedy_stepwise_selection_with_time``;
``oboe/convex_opt.py``: ``RuntimePredictor``).

What it does, per new dataset (hyperparameters are OBOE's):

1. **Error matrix and its PCA.**  ``E`` = 1 - accuracy, prior datasets x learners; ``Y`` = its right
   singular vectors (``pca``).  The initial rank ``k`` is ``approx_matrix_rank(E, threshold=0.05)``: the
   number of singular values at least 0.05 times the largest.
2. **Runtime prediction** (``RuntimePredictor``, degree 3, ``LinearRegression``): per learner, a linear
   regression of the log seconds on the degree-3 polynomial features of (rows, columns, log rows) of
   the prior datasets; the prediction for the new dataset is ``exp`` of it.
3. **Doubling** (``fit``): the first round's time target is ``t = max(1, 2 ** floor(log2(sum of the
   int(1.1 k) smallest predicted times)))``; after each round ``t`` doubles, and the rank grows by one
   when the round's loss is the smallest so far (here: the best error found, which never gets worse,
   so every completed round raises it; at most ``min(E.shape) - 1``).  Rounds go on while the time
   spent is below ``budget - t``.
4. **One round** (``_fit``):

   * *design*: among the learners predicted to take at most ``n_cores t / 2``, the relaxed
     D-optimal design ``minimise -log det(sum_i v_i y_i y_i^T)`` over ``0 <= v <= 1`` with
     ``sum_i t_i v_i <= n_cores t / 4`` (``solve``: SLSQP, ``v0 = 0.5``, ``maxiter = 30``); the learners
     with ``v_i > 0.9`` are tested.  If none is chosen before any test, the fastest learners whose
     cumulative predicted time fits in ``t / 4`` are tested instead.
   * *imputation* (``impute``): the new row is the least-squares fit ``x Y_k`` to the errors known so far.
     As in OBOE's code, the imputed row then replaces the stored row, so the values of learners tested
     in an earlier design step enter later imputations as imputed values, while learners tested in a
     candidate step keep their measured errors.
   * *candidates*: the best tested learner (by the imputed row) and then, in imputed order, every
     learner whose predicted time plus that of the candidates so far fits in the round's remaining
     time ``n_cores (t - seconds spent in the design step)``; the untested ones are tested.

``oboe:design=greedy`` replaces the design step by TensorOboe's (``_fit`` with ``method='tensoroboe'``):
learners predicted to take at most ``n_cores t / 8``; ``pivot_columns_time`` (QR with column pivoting
on the learners predicted to take at most ``t / (16 k)``, ``k`` columns; or, when fewer than ``k``
qualify, the fastest learners within ``t / 8``), then ``greedy_stepwise_selection_with_time``:
repeatedly add the learner with the largest ``y_i^T X^{-1} y_i / t_i`` (information per second) that
still fits in ``t / 8``.

Deviations, each with its reason:

* **Single learners, no ensemble.**  OBOE builds a greedy ensemble of the candidates after each
  round and measures the round's loss on a 15 % validation split; the benchmark scores the best
  single learner found, so the round's loss is the best error found and no ensemble time is charged.
* **No subsampling of large data.**  OBOE subsamples datasets with more than 10,000 rows and a
  rows/columns ratio above 100 to at most 5,000 rows; the meta-data holds full-data results only.
* **Run order within a batch.**  OBOE runs a batch in a process pool (``n_cores`` at a time); here
  tests are sequential (``n_cores = 1``, OBOE's default): design learners fastest first, candidates in
  imputed order.  ``n_cores`` only scales the time targets, as in OBOE.
* **No time limit by default.**  OBOE's ``runtime_limit`` default is 512 s; the benchmark measures
  anytime performance over the whole run, so ``budget`` defaults to unlimited (``oboe:budget=512`` is
  OBOE's default).  When a round adds no learner and every untested one has no finite predicted time,
  those are run in imputed order (without this the doubling would never reach them).
* **Missing cells.**  OBOE's error matrix is complete.  Timed-out cells count as the dataset's
  baseline accuracy (as for every strategy, ``MetaArrays.censored_as_baseline``); other missing cells
  get the learner's mean error for the PCA and are left out of its runtime regression.  Missing
  rows or columns of a dataset get the prior datasets' median.  Learners are sized by
  ``n_features`` (OBOE trains its runtime model on its preprocessed column count, class column
  included, and predicts with the feature count).
* **Exact gradient and one shortcut in the design.**  SLSQP gets the exact gradient of
  ``-log det`` (``-y_i^T M^{-1} y_i``) instead of finite differences, which makes a design
  faster; when every valid learner fits in the time target the optimum is ``v = 1``
  (adding a learner never lowers ``log det``), and it is taken without running SLSQP.  A test failure
  leaves the learner out of the imputation (TensorOboe's handling; OBOE's code has none).
* **The design's solver** (``solver``, default ``auto``).  OBOE stops SLSQP after 30 iterations; on
  OBOE's 219 configurations that is before convergence in most designs (scipy status 9), and each
  design costs about 0.25 s (SLSQP's quadratic subproblems grow with the cube of the learners), so
  ``oboe`` took about 2 s per dataset there.  ``solver=exact`` solves the same problem (same objective,
  constraints and selection cut ``v > 0.9``) to optimality with :func:`solve_design_exact`, a barrier
  method, in about 40 ms per design.  With many more learners than latent dimensions the optimum is a
  face, not a point, so solvers that agree on the objective pick different sets: on 106 designs of
  OBOE's training part the selected set differed from SLSQP-30's in 62 (and from SLSQP run to
  convergence in 8 of 27), the exact objective never worse than SLSQP-30's at a feasible point
  (SLSQP-30 once stopped at an infeasible ``v``).  ``auto`` keeps OBOE's SLSQP up to 64 candidate
  learners (so broad's and LCDB's 20 learners see no change) and uses the exact solver above;
  ``solver=slsqp`` is OBOE's solver everywhere.
* **TensorOboe** is applied to the learners-by-datasets matrix, not to its pipeline tensor: the
  latent vectors come from the matrix SVD and the rank rule is OBOE's.

Everything the policy tests is a test in the trace, so simulation charges every design column.
"""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np
from scipy.linalg import qr
from scipy.optimize import minimize

from algorank.metadata.errors import InputError
from algorank.recommender.peers._common import (
    TimedPeer,
    PlannedPolicy,
    dataset_rows,
    history_state,
    info_number,
    pop_choice,
    time_model_spec,
    training_arrays,
    quiet_nan,
    single_threaded,
)

__all__ = ["Oboe", "approx_matrix_rank", "impute", "solve_design", "solve_design_exact", "AUTO_EXACT_ABOVE",
           "pivot_columns_time",
           "greedy_selection_with_time", "RuntimeRegression", "from_spec"]

#: OBOE's thresholds: the initial rank (``AutoLearner.fit``) and the design's selection cut (``_fit``).
RANK_THRESHOLD = 0.05
SELECT_CUT = 0.9
#: How the ``design=ed`` problem is solved: OBOE's SLSQP (30 iterations), the exact barrier solver, or
#: SLSQP up to :data:`AUTO_EXACT_ABOVE` candidate learners and the exact solver above.
SOLVERS = ("auto", "slsqp", "exact")
#: Floor of recorded seconds before the log (a 0 s cell would give log 0).
_SECONDS_FLOOR = 1e-6


def approx_matrix_rank(a: np.ndarray, threshold: float = 0.03) -> int:
    """Number of singular values of ``a`` at least ``threshold`` times the largest (``linalg.approx_matrix_rank``)."""
    s = np.linalg.svd(np.asarray(a, dtype=float), compute_uv=False)
    return int((s >= threshold * s[0]).sum())


def impute(vt: np.ndarray, row: np.ndarray, known, rank: int) -> np.ndarray:
    """The least-squares completion ``x Y_k`` of ``row`` from its entries at ``known`` (``linalg.impute``).

    Parameters
    ----------
    vt : ndarray (r, n_learners)
        Right singular vectors of the error matrix, largest first (``Y_k = vt[:rank]``).
    row : ndarray (n_learners,)
        The new row (only ``row[known]`` is read).
    known : sequence of int
    rank : int
    """
    y = vt[:rank]
    known = list(known)
    x = np.linalg.lstsq(y[:, known].T, np.asarray(row, dtype=float)[known], rcond=None)[0]
    return x @ y


def _design_inputs(t_predicted, t_max: float, n_cores: int, Y):
    """``(t, cap, Y, trivial)`` of a design problem; ``trivial`` is its answer when no solver is needed
    (no candidates, or the time constraint is inactive: ``v = 1`` is optimal, log det grows with every
    ``v_i``), else None."""
    t = np.asarray(t_predicted, dtype=float)
    cap = t_max * n_cores
    if len(t) == 0:
        return t, cap, Y, np.zeros(0)
    if np.all(np.isfinite(t)) and t.sum() <= cap:
        return t, cap, Y, np.ones(len(t))
    return t, cap, np.asarray(Y, dtype=float), None


def solve_design(t_predicted: np.ndarray, t_max: float, n_cores: int, Y: np.ndarray, *,
                 maxiter: int = 30) -> np.ndarray:
    """OBOE's relaxed D-optimal design (``experiment_design.solve``, scalarization ``D``).

    ``minimise -log det(Y diag(v) Y^T)`` subject to ``0 <= v <= 1`` and ``t_predicted @ v <= t_max n_cores``,
    by SLSQP from ``v = 0.5`` with at most ``maxiter`` iterations (exact gradient).  Returns ``v``.
    """
    t, cap, Y, trivial = _design_inputs(t_predicted, t_max, n_cores, Y)
    if trivial is not None:
        return trivial
    n = len(t)

    def objective(v):
        sign, logdet = np.linalg.slogdet((Y * v) @ Y.T)
        return float(-logdet) if sign > 0 and np.isfinite(logdet) else 1e300

    def gradient(v):
        M = (Y * v) @ Y.T
        try:
            Mi = np.linalg.inv(M)
        except np.linalg.LinAlgError:
            Mi = np.linalg.pinv(M)
        g = -np.einsum("ij,ik,kj->j", Y, Mi, Y)
        return np.where(np.isfinite(g), g, 0.0)

    res = minimize(objective, np.full(n, 0.5), jac=gradient, method="SLSQP", bounds=[(0.0, 1.0)] * n,
                   options={"maxiter": maxiter},
                   constraints={"type": "ineq", "fun": lambda v: cap - t @ v, "jac": lambda v: -t})
    return np.asarray(res.x, dtype=float)


#: Designs with more candidate learners than this are solved by :func:`solve_design_exact` under
#: ``solver=auto`` (OBOE's 30-iteration SLSQP costs about 0.25 s per design at 219 learners).
AUTO_EXACT_ABOVE = 64


def solve_design_exact(t_predicted: np.ndarray, t_max: float, n_cores: int, Y: np.ndarray, *,
                       gap: float = 1e-6) -> np.ndarray:
    """The same relaxed D-optimal design as :func:`solve_design`, solved to optimality.

    ``minimise -log det(Y diag(v) Y^T)`` subject to ``0 <= v <= 1`` and ``t_predicted @ v <= t_max n_cores``
    by a log-barrier interior-point method (Boyd and Vandenberghe, *Convex Optimization*, 11.3; the book
    OBOE's ``experiment_design`` cites for this problem): Newton steps on
    ``-log det M(v) - mu (sum log v + sum log(1 - v) + log(cap - t @ v))`` with the exact Hessian
    ``(Y^T M^-1 Y)^2`` (elementwise) plus the barrier's, ``mu`` from 0.1 down by 0.02 until the duality
    gap bound ``mu (2n + 1)`` is below ``gap``.

    With more learners than latent dimensions the optimum is usually not unique (a face of the
    polytope); the barrier path ends at that face's analytic centre, a choice that does not depend on
    the solver's iteration count.  Falls back to :func:`solve_design` when ``Y`` has fewer than its
    rows' rank of usable columns (``log det`` is then ``-inf`` everywhere).  Returns ``v``.
    """
    t, cap, Y, trivial = _design_inputs(t_predicted, t_max, n_cores, Y)
    if trivial is not None:
        return trivial
    n = len(t)
    if not (np.all(np.isfinite(t)) and np.all(t > 0) and cap > 0) or np.linalg.matrix_rank(Y) < Y.shape[0]:
        return solve_design(t, t_max, n_cores, Y)
    v = np.full(n, 0.5)
    if t @ v >= cap:
        v *= 0.5 * cap / (t @ v)

    def phi(v, mu):
        s = cap - t @ v
        if s <= 0 or np.any(v <= 0) or np.any(v >= 1):
            return math.inf
        sign, logdet = np.linalg.slogdet((Y * v) @ Y.T)
        if sign <= 0:
            return math.inf
        return -logdet - mu * (np.log(v).sum() + np.log1p(-v).sum() + math.log(s))

    mu = 0.1
    diag = np.diag_indices(n)
    while True:
        f = phi(v, mu)
        for _ in range(200):
            try:
                Z = np.linalg.solve(np.linalg.cholesky((Y * v) @ Y.T), Y)
            except np.linalg.LinAlgError:
                return solve_design(t, t_max, n_cores, Y)
            P = Z.T @ Z  # Y^T M^-1 Y
            s = cap - t @ v
            g = -np.diag(P) - mu / v + mu / (1.0 - v) + mu * t / s
            H = P * P
            H[diag] += mu / v ** 2 + mu / (1.0 - v) ** 2
            H += (mu / s ** 2) * np.outer(t, t)
            d = -np.linalg.solve(H, g)
            dec = -(g @ d)  # the squared Newton decrement
            if dec / 2.0 < 1e-12:
                break
            step = 1.0
            down, up = d < 0, d > 0
            if down.any():
                step = min(step, 0.99 * float(np.min(-v[down] / d[down])))
            if up.any():
                step = min(step, 0.99 * float(np.min((1.0 - v[up]) / d[up])))
            if t @ d > 0:
                step = min(step, 0.99 * s / float(t @ d))
            while step >= 1e-12:
                fn = phi(v + step * d, mu)
                if fn <= f - 0.25 * step * dec:
                    break
                step *= 0.5
            if step < 1e-12:
                break
            v = v + step * d
            f = fn
        if mu * (2 * n + 1) < gap:
            return v
        mu *= 0.02


def pivot_columns_time(A: np.ndarray, t: np.ndarray, t_max: float, rank: int) -> tuple[list, float, str]:
    """TensorOboe's initial design (``experiment_design.pivot_columns_time``, ``column_picking_threshold="rank"``).

    Returns ``(columns, their predicted seconds, case)``: ``rank`` QR-pivot columns among those with
    ``t <= t_max / (2 rank)`` (``"qr_initialization"``), or, when fewer than ``rank`` qualify, the fastest
    columns whose cumulative time stays within ``t_max`` (``"greedy_initialization"``).
    """
    t = np.asarray(t, dtype=float)
    valid = np.flatnonzero(t <= t_max / (2 * rank))
    r: list = []
    t_sum = 0.0
    if len(valid) < rank:
        for idx in np.argsort(t, kind="stable"):
            if t_sum + t[idx] <= t_max:
                r.append(int(idx))
                t_sum += t[idx]
            else:
                break
        return r, t_sum, "greedy_initialization"
    pivots = qr(np.asarray(A, dtype=float)[:, valid], pivoting=True)[2]
    for p in pivots[:rank]:
        r.append(int(valid[p]))
        t_sum += t[valid[p]]
    return r, t_sum, "qr_initialization"


def greedy_selection_with_time(Y: np.ndarray, t: np.ndarray, initialization, t_elapsed: float,
                               t_max: float) -> list:
    """TensorOboe's greedy D-optimal design (``experiment_design.greedy_stepwise_selection_with_time``):
    from ``initialization``, repeatedly add the column with the largest ``y_i^T X^{-1} y_i / t_i`` among
    those that still fit in ``t_max``, ``X`` the information matrix of the columns chosen so far."""
    Y = np.asarray(Y, dtype=float)
    t = np.asarray(t, dtype=float)
    if t_elapsed >= t_max:
        return []
    selected = [int(i) for i in initialization]
    X = Y[:, selected] @ Y[:, selected].T
    t_sum = t_elapsed
    while t_sum <= t_max:
        to_select = [i for i in range(Y.shape[1]) if i not in set(selected)]
        if not to_select:
            break
        try:
            Xi = np.linalg.inv(X)
        except np.linalg.LinAlgError:
            break
        cand = Y[:, to_select]
        with np.errstate(divide="ignore", invalid="ignore"):
            obj = np.einsum("ij,ik,kj->j", cand, Xi, cand) / t[to_select]
        if np.all(np.isnan(obj)):
            break
        fits = np.flatnonzero(t_sum + t[to_select] <= t_max)
        if len(fits) == 0:
            break
        add = to_select[int(fits[np.nanargmax(obj[fits])])]
        X = X + np.outer(Y[:, add], Y[:, add])
        selected.append(add)
        t_sum += t[add]
    return selected


class RuntimeRegression:
    """OBOE's ``RuntimePredictor`` (``LinearRegression``, degree 3): per learner, log seconds regressed on
    the degree-3 polynomial features of (rows, columns, log rows)."""

    def __init__(self, degree: int = 3) -> None:
        self.degree = int(degree)

    @staticmethod
    def _design(sizes: np.ndarray, degree: int) -> np.ndarray:
        from sklearn.preprocessing import PolynomialFeatures

        sizes = np.asarray(sizes, dtype=float)
        x = np.column_stack([sizes, np.log(sizes[:, 0])])
        return PolynomialFeatures(degree).fit_transform(x)

    def fit(self, sizes: np.ndarray, log_seconds: np.ndarray) -> "RuntimeRegression":
        from sklearn.linear_model import LinearRegression

        Z = self._design(sizes, self.degree)
        y = np.asarray(log_seconds, dtype=float)
        ok = np.isfinite(y)
        self.models_: list = [None] * y.shape[1]
        full = np.flatnonzero(ok.all(axis=0))
        if len(full):
            shared = LinearRegression().fit(Z, y[:, full])
            coef = np.atleast_2d(shared.coef_)
            for pos, j in enumerate(full):
                self.models_[j] = (coef[pos], float(np.atleast_1d(shared.intercept_)[pos]))
        for j in np.flatnonzero(~ok.all(axis=0)):
            rows = ok[:, j]
            if not rows.any():
                continue
            m = LinearRegression().fit(Z[rows], y[rows, j])
            self.models_[j] = (np.asarray(m.coef_), float(m.intercept_))
        return self

    def predict(self, size) -> np.ndarray:
        """Predicted seconds of every learner on a dataset of ``size = (rows, columns)``
        (``inf`` where a learner has no model or the prediction overflows)."""
        z = self._design(np.asarray(size, dtype=float).reshape(1, 2), self.degree)[0]
        out = np.full(len(self.models_), np.inf)
        for j, m in enumerate(self.models_):
            if m is not None:
                out[j] = float(z @ m[0] + m[1])
        with np.errstate(over="ignore", invalid="ignore"):
            sec = np.exp(out)
        return np.where(np.isnan(sec), np.inf, sec)


class Oboe(TimedPeer):
    """OBOE's time-constrained experiment design with low-rank completion (module docstring).

    Parameters
    ----------
    design : {"ed", "greedy"}
        OBOE's relaxed D-optimal design (SLSQP), or TensorOboe's QR start plus greedy information per second.
    threshold : float
        OBOE's singular-value threshold of the initial rank (``approx_matrix_rank``; 0.05).
    solver : {"auto", "slsqp", "exact"}
        How the ``ed`` design is solved (module docstring): ``slsqp`` is OBOE's 30-iteration SLSQP, ``exact``
        :func:`solve_design_exact`, ``auto`` SLSQP up to 64 candidate learners and exact above.
    budget : float
        OBOE's ``runtime_limit`` in seconds of testing (default unlimited; OBOE's default is 512).
    n_cores : int
        OBOE's ``n_cores`` (scales the time targets; default 1 as in OBOE).
    time_kind, time_overhead, time_scale, name
        Meta-data time, live time model ``T = scale t + overhead``, display name.
    """

    adaptive = True

    def __init__(self, *, design: str = "ed", budget: float = math.inf, n_cores: int = 1, solver: str = "auto",
                 threshold: float = RANK_THRESHOLD, **kw) -> None:
        if not (isinstance(threshold, (int, float)) and 0 < threshold <= 1):
            raise InputError(f"strategy 'oboe': threshold must be a number in (0, 1]; got {threshold!r}")
        if design not in ("ed", "greedy"):
            raise InputError(f"strategy 'oboe': design must be ed or greedy; got {design!r}")
        if not (isinstance(budget, (int, float)) and budget > 0):
            raise InputError(f"strategy 'oboe': budget must be a number of seconds > 0; got {budget!r}")
        if not (isinstance(n_cores, (int, np.integer)) and n_cores >= 1):
            raise InputError(f"strategy 'oboe': n_cores must be an integer >= 1; got {n_cores!r}")
        if solver not in SOLVERS:
            raise InputError(f"strategy 'oboe': solver must be one of {', '.join(SOLVERS)}; got {solver!r}")
        super().__init__(design=design, budget=float(budget), n_cores=int(n_cores), solver=solver,
                         threshold=float(threshold), **kw)
        self.threshold = float(threshold)
        self.design, self.budget, self.n_cores, self.solver = design, float(budget), int(n_cores), solver

    def default_name(self) -> str:
        parts = []
        if self.design != "ed":
            parts.append(f"design={self.design}")
        if math.isfinite(self.budget):
            parts.append(f"budget={self.budget:g}")
        if self.n_cores != 1:
            parts.append(f"n_cores={self.n_cores}")
        if self.solver != "auto":
            parts.append(f"solver={self.solver}")
        if self.threshold != RANK_THRESHOLD:
            parts.append(f"threshold={self.threshold:g}")
        spec = ",".join(parts) + time_model_spec(self.time_model)
        return "oboe" + (":" + spec.lstrip(",") if spec else "")

    def fit(self, meta) -> "Oboe":
        """PCA of the error matrix, the initial rank and the runtime regressions."""
        with single_threaded():
            return self._fit(meta)

    def _fit(self, meta) -> "Oboe":
        arrays = training_arrays(meta, time_kind=self.time_kind, time_model=self.time_model, who="strategy 'oboe'")
        known = arrays.available.any(axis=0)
        if not known.any() or arrays.shape[0] < 2:
            raise InputError("strategy 'oboe' needs at least 2 prior datasets with results")
        self.learners_ = tuple(l for l, k in zip(arrays.learners, known) if k)
        err = 1.0 - arrays.accuracy[:, known]
        err = np.where(arrays.available[:, known], err, np.nan)
        with quiet_nan():
            col_mean = np.nanmean(err, axis=0)
        self.error_ = np.where(np.isnan(err), col_mean[None, :], err)
        _, s, vt = np.linalg.svd(self.error_, full_matrices=False)
        self.vt_ = vt
        self.rank0_ = int((s >= self.threshold * s[0]).sum())
        self.max_rank_ = max(1, min(self.error_.shape) - 1)
        rows = dataset_rows(meta, arrays.datasets)
        sizes = np.array([[info_number(r, "n_instances"), info_number(r, "n_features")] for r in rows], dtype=float)
        with quiet_nan():
            fill = np.nanmedian(sizes, axis=0)
        self.size_fill_ = np.where(np.isfinite(fill), fill, 1.0)
        sizes = np.where(np.isfinite(sizes), sizes, self.size_fill_[None, :])
        sizes = np.maximum(sizes, 1.0)
        sec = np.where(arrays.available[:, known], arrays.seconds[:, known], np.nan)
        with np.errstate(divide="ignore", invalid="ignore"):
            log_sec = np.log(np.maximum(sec, _SECONDS_FLOOR))
        self.runtime_ = RuntimeRegression(3).fit(sizes, log_sec)
        return self

    def predicted_seconds(self, dataset_info: Mapping | None = None) -> np.ndarray:
        """The runtime regressions' seconds for the new dataset (one per learner of ``learners_``)."""
        self._check_fitted()
        info = dict(dataset_info or {})
        size = [info_number(info, "n_instances"), info_number(info, "n_features")]
        size = [v if math.isfinite(v) and v > 0 else f for v, f in zip(size, self.size_fill_)]
        return self.runtime_.predict(np.maximum(size, 1.0))

    def policy(self, dataset_info: Mapping | None = None) -> PlannedPolicy:
        """OBOE's doubling rounds on one new dataset."""
        t_pred = self.predicted_seconds(dataset_info)
        plan = _OboePlan(self, t_pred)
        policy = PlannedPolicy(self.learners_, plan)
        plan.index = policy.index
        return policy


class _OboePlan:
    """The state of OBOE's doubling on one dataset; called for the next batch of learner indices."""

    def __init__(self, s: Oboe, t_pred: np.ndarray) -> None:
        self.s = s
        self.t_pred = t_pred
        n = len(t_pred)
        self.k = min(s.rank0_, s.max_rank_)
        finite = np.sort(t_pred[np.isfinite(t_pred)])
        first = finite[: int(1.1 * self.k)].sum()
        self.t = max(1.0, 2.0 ** math.floor(math.log2(first))) if first > 0 else 1.0
        self.new_row = np.zeros(n)  # OBOE's self.new_row: measured, then overwritten by imputations
        self.sampled: set = set()  # successful tests so far
        self.losses = [math.inf]
        self.phase = "design"
        self.round_start = 0.0
        self.round_added = False
        self.index: dict = {}

    def _record(self, tried_ok: dict) -> None:
        for j, acc in tried_ok.items():
            if j not in self.sampled:
                self.new_row[j] = 1.0 - acc
                self.sampled.add(j)

    def _design(self, tried: set) -> list:
        s, t, k = self.s, self.t, self.k
        tp = self.t_pred
        if s.design == "ed":
            valid = np.flatnonzero(tp <= s.n_cores * t / 2)
            exact = s.solver == "exact" or (s.solver == "auto" and len(valid) > AUTO_EXACT_ABOVE)
            v = (solve_design_exact if exact else solve_design)(tp[valid], t / 4, s.n_cores, s.vt_[:k, valid])
            chosen = list(valid[v > SELECT_CUT])
        else:
            valid = np.flatnonzero(tp <= s.n_cores * t / 8)
            chosen = []
            if len(valid):
                Y = s.vt_[:k, valid]
                cols, t_sum, case = pivot_columns_time(Y, tp[valid], t / 8, rank=Y.shape[0])
                if case == "greedy_initialization":
                    chosen = list(valid[cols])
                else:
                    chosen = list(valid[greedy_selection_with_time(Y, tp[valid], cols, t_sum, t / 8)])
        if not chosen and not tried:
            order = np.argsort(tp, kind="stable")
            n = int((np.cumsum(tp[order]) <= t / 4).sum())
            chosen = list(order[:n])
        return sorted((int(j) for j in chosen if j not in tried), key=lambda j: (tp[j], j))

    def _candidates(self, tried: set, spent_in_round: float) -> list:
        known = sorted(self.sampled)
        self.new_row = impute(self.s.vt_, self.new_row, known, self.k)
        remaining = (self.t - spent_in_round) * self.s.n_cores
        best = known[int(np.argmin(self.new_row[known]))]
        cands = [best]
        for i in np.argsort(self.new_row, kind="stable"):
            if self.t_pred[i] + self.t_pred[cands].sum() <= remaining:
                cands.append(int(i))
        out = []
        for j in cands:
            if j not in tried and j not in out:
                out.append(j)
        return out

    def _end_round(self) -> None:
        if self.sampled:
            loss = self._best_error
            self.losses.append(loss)
            if loss == min(self.losses):
                self.k = min(self.k + 1, self.s.max_rank_)
        self.t *= 2.0

    def __call__(self, history) -> list | None:
        tried, ok, spent = history_state(history, self.index)
        self._record(ok)
        self._best_error = 1.0 - max(ok.values()) if ok else math.inf
        n = len(self.t_pred)
        for _ in range(4096):
            if self.phase == "design":
                if not spent < self.s.budget - self.t:
                    return None
                batch = self._design(tried)
                self.round_start = spent
                self.round_added = bool(batch)
                self.phase = "sampled"
                if batch:
                    return batch
                continue
            if self.phase == "sampled":
                self.phase = "fitted"
                if self.sampled:
                    batch = self._candidates(tried, spent - self.round_start)
                    self.round_added |= bool(batch)
                    if batch:
                        return batch
                continue
            # phase "fitted": the round is over
            if self.sampled:
                self._end_round()
            else:
                self.t *= 2.0
            self.phase = "design"
            if not self.round_added:
                untried = [j for j in range(n) if j not in tried]
                if untried and all(not np.isfinite(self.t_pred[j]) for j in untried):
                    return sorted(untried, key=lambda j: (self.new_row[j], j))
        return None


def from_spec(params: dict, random_state=None, name: str | None = None) -> Oboe:
    """Build from spec parameters ``design`` (ed | greedy), ``budget``, ``n_cores``, ``solver``
    (auto | slsqp | exact), ``threshold`` (initial rank's singular-value threshold), ``overhead``, ``scale``."""
    from algorank.recommender.spec import pop_number, pop_time_model

    design = pop_choice(params, "design", "ed", ("ed", "greedy"), strategy="oboe")
    budget = pop_number(params, "budget", math.inf, strategy="oboe", rule="a number of seconds > 0",
                        valid=lambda v: v > 0)
    n_cores = pop_number(params, "n_cores", 1, strategy="oboe", kind=int, rule="an integer >= 1",
                         valid=lambda v: v >= 1)
    solver = pop_choice(params, "solver", "auto", SOLVERS, strategy="oboe")
    threshold = pop_number(params, "threshold", RANK_THRESHOLD, strategy="oboe", rule="a number in (0, 1]",
                           valid=lambda v: 0 < v <= 1)
    return Oboe(design=design, budget=budget, n_cores=n_cores, solver=solver, threshold=threshold,
                **pop_time_model(params, "oboe"),
                name=name)
