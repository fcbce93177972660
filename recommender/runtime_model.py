"""Per-learner runtime model: how long a learner's test takes on THIS dataset.

For each learner ``l``, ``log10 seconds = b0_l + b1_l log10 n + b2_l log10 d + b3_l log10 k``
``+ b4_l (log10 n - 3)^2 + b5_l (log10 n - 3)(log10 d - 1)`` (``n`` rows, ``d`` features after
one-hot encoding, ``k`` classes of the dataset), fitted on the meta-data's datasets; the curvature
terms let time grow faster on large data than the fixed costs of small data suggest.
Learners that boost one round at a time over the classes (gradient boosting:
:func:`~algorank.metadata.learners.boosts_per_class`) have a seventh term,
``b6_l (log10 k - 0.5)(log10 d - 1)``: each round grows a tree per class over all features, so their time grows
with classes and features together, most on data with many of both.  The term is fitted for these learners only;
for all others its coefficient is zero.
Each learner's slopes are shrunk towards the slopes shared by all learners (a ridge penalty
``lam * ||b_l - b_pooled||^2``), so a learner measured on few datasets still extrapolates
sensibly to larger data.  A dataset-independent model (every learner's median time, what
``recommend`` used to show) cannot say that an SVM costs 50 times more on 20,000 rows than on
300; this one can.

Censored times: a test that hit the time cap (status ``timeout``) records the cap as a lower
bound.  Such cells enter the fit as ``max(cap, prediction)``, re-estimated three times (a simple
EM-like treatment of right-censoring), never as missing.

Beyond the meta-data's sizes (rows above the 95th percentile of its datasets, ``rows_hi``), a
learner with a known *growth exponent* ``a`` (``time ~ rows ** a`` within one dataset, from LCDB's
learning curves: :func:`algorank.metadata.growth.load_growth`) is extrapolated from the model's
prediction at ``rows_hi`` along that exponent instead of along the fitted curve: a slope across
datasets mixes size with features, classes and difficulty, and the few largest datasets of a
meta-dataset pin it down poorly (measured in the benchmark record, *Runtime model beyond the
meta-data's sizes*).

Predictions carry a per-learner residual standard deviation (log10 units), and a live run can
rescale all predictions by the median measured/predicted ratio of the tests so far
(:func:`observed_ratio`).

**A physical range.**  Fitted on a few datasets, six coefficients can extrapolate to any number of
seconds, even on a dataset as small as those they were fitted on.  Every prediction is therefore clamped,
in log10 units, to the learner's observed times widened by a factor of :data:`CLAMP_MARGIN` (10)
either way and scaled by how far the dataset lies outside the meta-data's sizes:

* upper bound: the learner's longest observed time x 10, times ``(rows / largest rows) ** 3``,
  ``(features / most features) ** 2`` and ``classes / most classes`` for each size above the
  meta-data's largest (a kernel SVM's time grows with the cube of the rows at most);
* lower bound: the learner's shortest observed time / 10, times ``rows / fewest rows``,
  ``features / fewest features`` and ``classes / fewest classes`` for each size below the smallest.

A learner without an observed time uses the range of all learners.  A prediction outside these
bounds is replaced by the nearest bound, with a logged warning naming the learners: the model was
asked far outside its data and its number means nothing there.
"""

from __future__ import annotations

import logging
import math
import warnings
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from algorank.metadata.errors import InputError

__all__ = ["RuntimeModel", "fit_runtime_model", "runtime_features", "observed_ratio", "TIME_FLOOR_S",
           "CLAMP_MARGIN", "CLAMP_POWERS"]

logger = logging.getLogger(__name__)

#: Seconds below which times are raised before taking logs.
TIME_FLOOR_S = 1e-4
#: Factor by which a prediction may leave a learner's observed range of times on the meta-data's sizes.
CLAMP_MARGIN = 10.0
#: Powers of rows, features and classes by which the upper bound grows beyond the meta-data's largest
#: sizes (the lower bound falls with power 1 below its smallest).
CLAMP_POWERS = (3.0, 2.0, 1.0)
_FEATURES = ("n_instances", "n_features", "n_classes")
_ONEHOT_ALIASES = ("n_features_onehot", "NumberOfFeaturesAfterBinarization")


def runtime_features(rows: Sequence[Mapping]) -> np.ndarray:
    """``(len(rows), 3)`` array of log10 rows, features, classes (NaN when unknown or not positive).

    ``n_features_onehot`` (features after one-hot encoding, recorded by the evaluator-built
    meta-data and measured by ``recommend``) or, failing that, OpenML's
    ``NumberOfFeaturesAfterBinarization`` (which LCDB records) is used instead of ``n_features``
    when a row has it: a learner's cost follows the columns it is fitted on, and one categorical
    with 70,000 levels makes 231 features 71,678 columns.
    """
    out = np.full((len(rows), len(_FEATURES)), np.nan)
    for i, row in enumerate(rows):
        for j, key in enumerate(_FEATURES):
            v = np.nan
            for alias in _ONEHOT_ALIASES if key == "n_features" else ():
                try:
                    v = float(row.get(alias, np.nan))
                except (TypeError, ValueError):
                    v = np.nan
                if v == v and v > 0:
                    break
            if not (v == v and v > 0):
                try:
                    v = float(row.get(key, np.nan))
                except (TypeError, ValueError):
                    v = np.nan
            out[i, j] = math.log10(v) if v == v and v > 0 else np.nan
    return out


@dataclass(frozen=True)
class RuntimeModel:
    """Fitted per-learner log-log runtime regressions.

    Attributes
    ----------
    learners : tuple of str
    coef : ndarray of shape (n_learners, 7)
        Intercept, slopes on log10 rows, features, classes, the two curvature terms, and the classes x features
        term (zero for learners that do not boost per class).  Six columns are read as a model without that
        term.
    sigma : ndarray of shape (n_learners,)
        Residual standard deviation of log10 seconds.
    fill : ndarray of shape (3,)
        Feature values used when a query's feature is unknown (training means).
    growth : ndarray of shape (n_learners,) or None
        Growth exponent of time in rows per learner (NaN: none), used above ``rows_hi``.
    rows_hi : float
        log10 rows above which ``growth`` extrapolates (``inf``: never).
    seconds_range : ndarray of shape (n_learners, 2) or None
        log10 of each learner's shortest and longest observed time (the physical range of the
        module docstring; None: no clamping).
    size_range : ndarray of shape (3, 2) or None
        Smallest and largest log10 rows, features and classes of the meta-data's datasets.
    """

    learners: tuple
    coef: np.ndarray = field(repr=False)
    sigma: np.ndarray = field(repr=False)
    fill: np.ndarray = field(repr=False)
    growth: np.ndarray | None = field(default=None, repr=False)
    rows_hi: float = math.inf
    seconds_range: np.ndarray | None = field(default=None, repr=False)
    size_range: np.ndarray | None = field(default=None, repr=False)

    def predict_log10(self, features: np.ndarray) -> np.ndarray:
        """log10 seconds of every learner (columns) for each query row of ``runtime_features``, clamped to the
        physical range of the module docstring."""
        x = np.atleast_2d(np.asarray(features, dtype=float))
        x = np.where(np.isnan(x), self.fill, x)
        width = self.coef.shape[1]
        out = _design(x)[:, :width] @ self.coef.T
        beyond = x[:, 0] > self.rows_hi
        if self.growth is not None and beyond.any():
            anchored = x[beyond].copy()
            excess = anchored[:, 0] - self.rows_hi
            anchored[:, 0] = self.rows_hi
            along = _design(anchored)[:, :width] @ self.coef.T + excess[:, None] * self.growth[None, :]
            known = np.isfinite(self.growth)[None, :]
            out[beyond] = np.where(known, along, out[beyond])
        return self._clamped(out, x)

    def bounds_log10(self, features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(lower, upper)``: the physical range of log10 seconds of every learner (columns) for each query
        row of ``runtime_features`` (unknown sizes at the training means); ``-inf, inf`` without one."""
        x = np.atleast_2d(np.asarray(features, dtype=float))
        x = np.where(np.isnan(x), self.fill, x)
        shape = (len(x), len(self.learners))
        if self.seconds_range is None or self.size_range is None:
            return np.full(shape, -np.inf), np.full(shape, np.inf)
        small, large = self.size_range[:, 0], self.size_range[:, 1]
        with np.errstate(invalid="ignore"):  # a size the meta-data never records: -inf/inf, no scaling
            above = np.nan_to_num(np.maximum(x - large, 0.0)) @ np.asarray(CLAMP_POWERS)
            below = np.nan_to_num(np.maximum(small - x, 0.0)).sum(axis=1)
        margin = math.log10(CLAMP_MARGIN)
        upper = self.seconds_range[None, :, 1] + margin + above[:, None]
        lower = self.seconds_range[None, :, 0] - margin - below[:, None]
        return lower, upper

    def _clamped(self, out: np.ndarray, x: np.ndarray) -> np.ndarray:
        lower, upper = self.bounds_log10(x)
        with np.errstate(invalid="ignore"):
            outside = ~((out >= lower) & (out <= upper))  # NaN too: a nonsense fit gives no number of seconds
        if not outside.any():
            return out
        _note_clamped(self.learners, out, outside)
        return np.where(outside, np.clip(np.nan_to_num(out, nan=np.inf), lower, upper), out)

    def predict(self, info: Mapping) -> np.ndarray:
        """Predicted seconds of every learner on the dataset described by ``info``."""
        return 10.0 ** self.predict_log10(runtime_features([info]))[0]


def fit_runtime_model(seconds: np.ndarray, features: np.ndarray, learners: Sequence[str], *,
                      censored: np.ndarray | None = None, lam: float = 1.0, weights: np.ndarray | None = None,
                      growth: Mapping[str, float] | None = None, rows_quantile: float = 0.95,
                      per_class: Sequence[bool] | None = None) -> RuntimeModel:
    """Fit :class:`RuntimeModel` on a datasets x learners table of seconds.

    Parameters
    ----------
    seconds : ndarray (n_datasets, n_learners)
        Time per test; NaN where unknown.  For censored cells, the lower bound.
    features : ndarray (n_datasets, 3)
        :func:`runtime_features` of each dataset.
    learners : sequence of str
    censored : ndarray of bool, optional
        Cells whose time is only a lower bound (timeouts).
    lam : float
        Ridge strength pulling each learner's slopes towards the pooled slopes.
    weights : ndarray (n_datasets,), optional
        Dataset weights (default equal).
    growth : mapping learner -> float, optional
        Growth exponents of time in rows (within-dataset, e.g. LCDB's learning curves); learners
        without one keep the fitted curve everywhere.
    rows_quantile : float
        Quantile of the training datasets' rows above which ``growth`` extrapolates.
    per_class : sequence of bool, optional
        Per learner: it boosts one round at a time over the classes, and gets the classes x features term of
        the module docstring (default: no learner).  These learners are fitted with the term in the design of
        every learner, their slopes shrunk towards the slopes shared by all learners on that design; the others
        are fitted without it.

    Raises
    ------
    InputError
        Shapes disagree or no cell has a time.
    """
    # C order whatever the caller's layout: numpy's sums along an axis add in an order that depends on the
    # memory layout, and the same table must give the same fit to the last bit
    y = np.log10(np.maximum(np.ascontiguousarray(seconds, dtype=float), TIME_FLOOR_S))
    x = np.ascontiguousarray(features, dtype=float)
    n, m = y.shape
    if x.shape != (n, len(_FEATURES)) or len(learners) != m:
        raise InputError(f"runtime model: seconds {y.shape}, features {x.shape} and {len(learners)} learners disagree")
    flags = np.zeros(m, dtype=bool) if per_class is None else np.asarray(per_class, dtype=bool)
    if flags.shape != (m,):
        raise InputError(f"runtime model: per_class has {flags.size} values for {m} learners")
    if not np.isfinite(y).any():
        raise InputError("runtime model: no cell has a time")
    cens = np.zeros_like(y, dtype=bool) if censored is None else np.ascontiguousarray(censored, dtype=bool) & np.isfinite(y)
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    with np.errstate(all="ignore"):
        fill = np.array([np.nanmean(x[:, j]) if np.isfinite(x[:, j]).any() else 0.0 for j in range(x.shape[1])])
    xf = np.where(np.isnan(x), fill, x)
    design = _design(xf)
    coef, sigma = _fit_coefficients(design[:, :-1], y, cens, w, lam)
    coef = np.column_stack([coef, np.zeros(m)])
    if flags.any():
        with_term, spread = _fit_coefficients(design, y, cens, w, lam)
        coef[flags], sigma[flags] = with_term[flags], spread[flags]
    seconds_range, size_range = _observed_ranges(y, x, w)
    g, hi = None, math.inf
    if growth:
        g = np.array([float(growth.get(str(l), np.nan)) for l in learners])
        rows = x[np.isfinite(x[:, 0]) & (w > 0), 0]
        if np.isfinite(g).any() and len(rows):
            hi = float(np.quantile(rows, rows_quantile))
        else:
            g = None
    return RuntimeModel(learners=tuple(str(l) for l in learners), coef=coef, sigma=np.maximum(sigma, 0.05), fill=fill,
                        growth=g, rows_hi=hi, seconds_range=seconds_range, size_range=size_range)


def _fit_coefficients(design: np.ndarray, y: np.ndarray, cens: np.ndarray, w: np.ndarray,
                      lam: float) -> tuple[np.ndarray, np.ndarray]:
    """Every learner's coefficients on ``design`` and residual spread (0.5 for a learner with 4 times or fewer);
    censored cells enter as ``max(cap, prediction)``, re-estimated three times."""
    m = y.shape[1]
    target = y.copy()
    coef = np.zeros((m, design.shape[1]))
    sigma = np.full(m, 0.5)
    for _ in range(3 if cens.any() else 1):
        pooled = _pooled_slopes(design, target, w)
        ok = np.isfinite(target) & (w > 0)[:, None]
        coef = _ridge_towards_all(design, target, ok, w, pooled, lam)
        resid = np.where(ok, target - design @ coef.T, 0.0)
        okw = ok * w[:, None]
        fitted = ok.sum(axis=0) > 4
        with np.errstate(all="ignore"):
            spread = np.sqrt((okw * resid ** 2).sum(axis=0) / okw.sum(axis=0))
        sigma = np.where(fitted, spread, sigma)
        if cens.any():  # right-censored cells: at least the cap, at least the prediction
            pred = design @ coef.T
            target = np.where(cens, np.maximum(y, pred), y)
    return coef, sigma


def _observed_ranges(y: np.ndarray, x: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each learner's shortest and longest log10 time (timeouts, lower bounds, count; a learner without
    a time gets all learners' range), and the smallest and largest log10 sizes of the datasets in the fit
    (``-inf, inf`` for a size none records)."""
    used = w > 0
    cells = np.where(used[:, None], y, np.nan)
    have = np.isfinite(cells).any(axis=0)
    everyone = [np.nanmin(cells), np.nanmax(cells)] if have.any() else [-np.inf, np.inf]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns: replaced just below
        seconds = np.column_stack([np.nanmin(cells, axis=0), np.nanmax(cells, axis=0)])
    seconds = np.where(have[:, None], seconds, np.asarray(everyone)[None, :])
    sizes = np.tile([-np.inf, np.inf], (x.shape[1], 1))
    for j in range(x.shape[1]):
        col = x[used & np.isfinite(x[:, j]), j]
        if len(col):
            sizes[j] = col.min(), col.max()
    return seconds, sizes


#: Learner sets whose clamping was already reported (one warning per process and set).
_NOTED: set = set()


def _note_clamped(learners, out: np.ndarray, outside: np.ndarray) -> None:
    """Warn, once per process and set of learners, that predictions were clamped."""
    which = np.flatnonzero(outside.any(axis=0))
    key = tuple(learners[i] for i in which)
    if key in _NOTED:
        return
    _NOTED.add(key)
    values = np.where(outside, out, np.nan)[:, which]
    far = np.nan_to_num(np.abs(values), nan=-1.0)
    row, col = np.unravel_index(int(np.argmax(far)), far.shape)
    v = float(values[row, col])
    shown = "no number of seconds" if not math.isfinite(v) else f"1e{v:+.0f} s" if abs(v) > 300 else f"{10.0 ** v:.3g} s"
    names = ", ".join(key[:5]) + (f" and {len(key) - 5} more" if len(key) > 5 else "")
    logger.warning("the runtime model extrapolates far outside its meta-data for %d learner(s) (%s; %s predicted for "
                   "%s): their predicted seconds are clamped to the range observed, scaled by the dataset's size",
                   len(key), names, shown, key[col])


def _design(x: np.ndarray) -> np.ndarray:
    """Intercept, log10 rows/features/classes, the curvature terms (log10 rows - 3)^2 and
    (log10 rows - 3) * (log10 features - 1) (fixed costs dominate small data, so time grows
    faster than any single power of the rows once the data is large), and last the classes x features
    term (log10 classes - 0.5) * (log10 features - 1) of the learners that boost per class."""
    n, d = x[:, 0] - 3.0, x[:, 1] - 1.0
    return np.column_stack([np.ones(len(x)), x, n * n, n * d, (x[:, 2] - 0.5) * d])


def _pooled_slopes(design: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Slopes shared by all learners (each learner keeps its own intercept).

    Solved by within-learner centring (Frisch-Waugh-Lovell): the weighted least-squares slopes of
    ``y ~ learner intercepts + X`` equal those of the learner-centred ``y`` on the learner-centred
    ``X``, so the one-hot block (219 columns on OBOE) never enters the solve.
    """
    ok = np.isfinite(y) & (w > 0)[:, None]
    rows, cols = np.nonzero(ok)
    if len(rows) < design.shape[1]:
        return np.zeros(design.shape[1] - 1)
    okw = np.where(ok, w[:, None], 0.0)
    total = okw.sum(axis=0)
    safe = np.where(total > 0, total, 1.0)
    x = design[:, 1:]
    mean_x = (okw.T @ x) / safe[:, None]
    mean_t = (okw * np.where(ok, y, 0.0)).sum(axis=0) / safe
    sw = np.sqrt(w)
    xc = (x[rows] - mean_x[cols]) * sw[rows, None]
    tc = (y[rows, cols] - mean_t[cols]) * sw[rows]
    sol, *_ = np.linalg.lstsq(xc, tc, rcond=None)
    return sol


def _ridge_towards(design: np.ndarray, y: np.ndarray, w: np.ndarray, prior_slopes: np.ndarray, lam: float):
    """Weighted least squares with ``lam * ||slopes - prior_slopes||^2`` (intercept free)."""
    if len(y) == 0:
        return np.concatenate([[0.0], prior_slopes])
    k = design.shape[1]
    penalty = np.diag([0.0] + [lam] * (k - 1))
    xtw = design.T * w
    lhs = xtw @ design + penalty + 1e-9 * np.eye(k)
    rhs = xtw @ y + penalty @ np.concatenate([[0.0], prior_slopes])
    return np.linalg.solve(lhs, rhs)


def _ridge_towards_all(design: np.ndarray, y: np.ndarray, ok: np.ndarray, w: np.ndarray, prior_slopes: np.ndarray,
                       lam: float) -> np.ndarray:
    """:func:`_ridge_towards` of every learner (column of ``y``, rows ``ok``) at once: one batched solve."""
    n, k = design.shape
    m = y.shape[1]
    okw = ok * w[:, None]
    penalty = np.diag([0.0] + [lam] * (k - 1))
    outer = (design[:, :, None] * design[:, None, :]).reshape(n, k * k)
    lhs = (okw.T @ outer).reshape(m, k, k) + penalty + 1e-9 * np.eye(k)
    prior = np.concatenate([[0.0], prior_slopes])
    rhs = (okw * np.where(ok, y, 0.0)).T @ design + penalty @ prior
    coef = np.linalg.solve(lhs, rhs[:, :, None])[:, :, 0]
    return np.where(ok.any(axis=0)[:, None], coef, prior[None, :])


def observed_ratio(measured: Sequence[float], predicted: Sequence[float], *, clip: float = 20.0) -> float:
    """Median measured/predicted ratio (geometric), clipped to ``[1/clip, clip]``; 1 without data."""
    pairs = [(m, p) for m, p in zip(measured, predicted) if m > 0 and p > 0 and math.isfinite(m) and math.isfinite(p)]
    if not pairs:
        return 1.0
    r = float(np.exp(np.median([math.log(m / p) for m, p in pairs])))
    return min(max(r, 1.0 / clip), clip)
