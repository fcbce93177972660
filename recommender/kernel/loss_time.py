"""Loss curves, loss-time curves and the mean interval loss (MIL) of Abdulrahman, Brazdil, van Rijn and Vanschoren 2018.

Following an order on a dataset ``d``, test ``i`` finishes at the cumulative time
``t_i = s_1 + ... + s_i``.  The loss at time ``t`` is, in percentage points::

    loss(t) = 100 * max(0, best_d - max(baseline_d, best accuracy among tests finished by t))

``best_d`` is the highest accuracy on ``d`` among all learners with a result there;
``baseline_d`` is the accuracy the user has before any test: the majority-class
fraction, or the worst available learner's accuracy when the majority fraction is
unknown (recorded as ``baseline_kind="worst-learner"``).  Before the first test
finishes the loss is therefore ``100 * (best_d - baseline_d)``.
Counting the baseline as "found at time 0" (our choice; the paper leaves the case
open) keeps the curve non-increasing when a tested learner is worse than the
majority-class predictor: the user would keep the default model.  The same rule makes
the oracle's Pareto-front search exact (see :mod:`algorank.recommender.baselines`).

The curve is a right-continuous step function of ``t``.  The MIL over
``[tmin, tmax]`` is the mean of ``loss(10 ** u)`` for ``u`` uniform on
``[log10 tmin, log10 tmax]``, computed exactly from the steps (no sampling)::

    MIL = sum_i L_i * |[log10 t_i, log10 t_{i+1}) & [log10 tmin, log10 tmax]| / (log10 tmax - log10 tmin)

with ``t_0 = 0`` (``log10 0 = -inf``) and ``t_{n+1} = inf``.  Tests that finish
after ``tmax`` contribute nothing; a test of 0 seconds finishes at ``t = 0`` and
counts from ``tmin`` on.  Sums use sequential accumulation (``np.cumsum``) so a row
padded with zero-time, no-result entries gives bit-for-bit the same MIL as the
compact row: the batched fast path and the per-trace path agree exactly.

The mean loss-time curve over datasets is the pointwise mean; it is again a step
function (breakpoints: the union of all the curves' breakpoints) and, by linearity,
its MIL equals the mean of the per-dataset MILs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from algorank.metadata.errors import InputError

__all__ = [
    "check_window",
    "loss_steps",
    "mil_rows",
    "spearman_rows",
    "spearman_of_ranks",
    "LossTimeCurve",
    "loss_time_curve",
    "MeanLossTimeCurve",
    "mean_loss_time_curve",
    "mean_loss_by_tests",
    "row_chunks",
    "take_rows",
    "twice_ranks",
]

#: Rows processed at a time by the batched scoring: bounds the temporaries of large meta-data (and keeps
#: them in cache).  Rows are independent, so the block size never changes a result.
CHUNK_CELLS = 1 << 18


def row_chunks(n_rows: int, n_cols: int) -> list[slice]:
    """Slices of at most :data:`CHUNK_CELLS` cells (one row at least) covering ``range(n_rows)``."""
    step = max(1, CHUNK_CELLS // max(1, n_cols))
    return [slice(i, min(i + step, n_rows)) for i in range(0, n_rows, step)]


def check_window(tmin: float, tmax: float) -> tuple[float, float]:
    """Validate a time window: ``0 < tmin < tmax < inf``; return it as floats."""
    try:
        lo, hi = float(tmin), float(tmax)
    except (TypeError, ValueError):
        raise InputError(f"tmin and tmax must be numbers of seconds; got tmin={tmin!r}, tmax={tmax!r}") from None
    if not (math.isfinite(lo) and lo > 0):
        raise InputError(f"tmin must be a finite number of seconds > 0; got {tmin!r}")
    if not math.isfinite(hi):
        raise InputError(f"tmax must be a finite number of seconds; got {tmax!r}")
    if lo >= hi:
        raise InputError(f"tmin must be smaller than tmax; got tmin={lo:g} >= tmax={hi:g}")
    return lo, hi


def _seqsum(x: np.ndarray) -> np.ndarray:
    """Left-to-right sum over the last axis (exactly unchanged by trailing zeros).

    The values of ``np.cumsum(x, axis=-1)[..., -1]``, bit for bit: a 2-D block is summed in column-major
    layout, where numpy adds the columns one after another (no pairwise summation), starting from
    ``-0.0`` (``-0.0 + v == v`` for every ``v``, signed zeros included)."""
    if x.shape[-1] == 0:
        return np.zeros(x.shape[:-1])
    if x.ndim != 2 or x.shape[0] < 2:  # one row: numpy would sum it pairwise
        return np.cumsum(x, axis=-1)[..., -1]
    return np.add.reduce(np.asfortranarray(x), axis=1, initial=-0.0)


def take_rows(source: np.ndarray, idx: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """``np.take_along_axis(source[rows], idx, axis=1)`` for a 2-D ``source`` and non-negative ``idx`` (rows
    ``0 .. len(idx) - 1`` when ``rows`` is None), by one flat gather (no copy of the rows, about twice as fast)."""
    source = np.asarray(source)
    idx = np.asarray(idx, dtype=np.int64)
    base = np.arange(idx.shape[0], dtype=np.int64) if rows is None else np.asarray(rows, dtype=np.int64)
    if source.flags.c_contiguous:
        return source.reshape(-1).take(idx + (base * source.shape[1])[:, None])
    if source.flags.f_contiguous:  # column-major: cell (r, j) is element r + j * n_rows
        return source.T.reshape(-1).take(idx * source.shape[0] + base[:, None])
    return np.take_along_axis(source[base], idx, axis=1)


def loss_steps(accuracy: np.ndarray, seconds: np.ndarray, best: np.ndarray, baseline: np.ndarray):
    """Cumulative finish times and losses of test sequences (rows).

    Parameters
    ----------
    accuracy : array (n_rows, n_tests)
        Accuracy of each test in order; NaN for a failed test or padding.
    seconds : array (n_rows, n_tests)
        Time of each test (0 for padding).
    best, baseline : array (n_rows,)
        Best accuracy on the dataset and the accuracy known before any test.

    Returns
    -------
    cumulative : ndarray (n_rows, n_tests)
        Finish time of each test.
    losses : ndarray (n_rows, n_tests)
        Loss (percentage points) once each test has finished.
    initial : ndarray (n_rows,)
        Loss before the first test finishes.
    """
    acc = np.atleast_2d(np.asarray(accuracy, dtype=float))
    sec = np.atleast_2d(np.asarray(seconds, dtype=float))
    best = np.atleast_1d(np.asarray(best, dtype=float))
    baseline = np.atleast_1d(np.asarray(baseline, dtype=float))
    cum = np.cumsum(sec, axis=1)
    run = np.fmax.accumulate(np.where(np.isnan(acc), -np.inf, acc), axis=1) if acc.shape[1] else acc
    found = np.maximum(run, baseline[:, None])
    losses = 100.0 * np.maximum(0.0, best[:, None] - found)
    initial = 100.0 * np.maximum(0.0, best - baseline)
    return cum, losses, initial


def mil_rows(cumulative: np.ndarray, losses: np.ndarray, initial: np.ndarray, *, tmin, tmax: float) -> np.ndarray:
    """Exact MIL over ``[tmin, tmax]`` of step functions (one per row).

    Parameters
    ----------
    cumulative, losses, initial
        As returned by :func:`loss_steps`.
    tmin : float or array (n_rows,)
        Start of the window in seconds, one for all rows or one per row (each ``0 < tmin < tmax``).
    tmax : float
        End of the window in seconds.

    Returns
    -------
    ndarray (n_rows,)
        Mean interval loss in percentage points.
    """
    cum = np.atleast_2d(cumulative)
    n_rows = cum.shape[0]
    if np.ndim(tmin) == 0:
        lo, hi = check_window(tmin, tmax)
        a = np.full((n_rows, 1), math.log10(lo))
    else:
        starts = np.asarray(tmin, dtype=float)
        lo, hi = check_window(float(starts.min()) if starts.size else 1.0, tmax)
        if starts.shape != (n_rows,) or not (starts < hi).all():
            raise InputError(f"tmin must be one number or one per row, each below tmax = {hi:g}")
        a = np.array([[math.log10(t)] for t in starts.tolist()]).reshape(n_rows, 1)
    b = math.log10(hi)
    with np.errstate(divide="ignore"):
        u = np.clip(np.log10(cum), a, b)
    edges = np.concatenate([a, u, np.full((n_rows, 1), b)], axis=1)
    widths = np.diff(edges, axis=1)
    values = np.concatenate([np.atleast_1d(initial)[:, None], np.atleast_2d(losses)], axis=1)
    return _seqsum(values * widths) / (b - a[:, 0])


def twice_ranks(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-row mid ranks (1 = highest score) as the integers ``2 (r - 1)``, a block of rows at a time.

    The ranks of :func:`~algorank.evaluation.stats.multiple.rank_rows` (ties get the mean of their
    positions; NaN is not ranked), computed without a per-row loop (scipy's ``rankdata`` with
    ``nan_policy="omit"`` is about three times slower on large arrays).

    Returns
    -------
    twice : int64 array
        ``2 (r - 1)``; 0 where NaN.
    present : bool array
        Where a cell was ranked (not NaN).
    """
    scores = np.atleast_2d(np.asarray(scores, dtype=float))
    n, k = scores.shape
    present = ~np.isnan(scores)
    twice = np.zeros((n, k), dtype=np.int64)
    pos = np.arange(k)
    for c in row_chunks(n, k):
        key = -scores[c]
        miss = ~present[c]
        rows = key.shape[0]
        offsets = (np.arange(rows, dtype=np.int64) * k)[:, None]
        if not (miss.any(axis=1) & (key == np.inf).any(axis=1)).any():
            key[miss] = np.inf  # sorts last like NaN, on numpy's fast path; no ranked +inf to tie with
        order = np.argsort(key, axis=1)  # ties are ranked alike: no stable sort needed
        flat = order + offsets
        v = key.reshape(-1).take(flat)
        new = np.ones(v.shape, dtype=bool)
        np.not_equal(v[:, 1:], v[:, :-1], out=new[:, 1:])  # a tie group starts here
        new |= miss.reshape(-1).take(flat)  # a missing cell is never tied
        block = np.empty(rows * k, dtype=np.int64)
        if new.all():  # no ties: every cell is its own group, 2 (r - 1) = 2 * position
            block[flat] = 2 * pos
        else:
            first = np.maximum.accumulate(np.where(new, pos, 0), axis=1)
            end = np.ones(v.shape, dtype=bool)
            end[:, :-1] = new[:, 1:]
            last = np.minimum.accumulate(np.where(end, pos, k)[:, ::-1], axis=1)[:, ::-1]
            block[flat] = first + last  # 2 (mid rank - 1), 0-based positions
        block = block.reshape(rows, k)
        block[miss] = 0
        twice[c] = block
    return twice, present


def spearman_rows(ideal: np.ndarray, valid: np.ndarray, *, higher_is_better: bool = True) -> np.ndarray:
    """Spearman correlation between test order and the ideal order, per row.

    Parameters
    ----------
    ideal : array (n_rows, n_tests)
        For each test in the order it was run, the value the ideal order sorts
        by (e.g. the learner's true accuracy on the dataset).
    valid : bool array (n_rows, n_tests)
        Which entries are real tests; the valid entries must come first in each
        row (padding at the end).
    higher_is_better : bool
        The ideal order puts the largest value first (default).

    Returns
    -------
    ndarray (n_rows,)
        Pearson correlation between the positions 1..n and the ideal ranks (ties
        averaged); NaN with fewer than two tests or when all ideal values tie.
    """
    ideal = np.atleast_2d(np.asarray(ideal, dtype=float))
    valid = np.atleast_2d(np.asarray(valid, dtype=bool))
    twice, ranked = twice_ranks(np.where(valid, ideal if higher_is_better else -ideal, np.nan))
    return spearman_of_ranks(twice, ranked, valid)


def spearman_of_ranks(twice: np.ndarray, ranked: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """:func:`spearman_rows` from the ideal ranks of the tests (:func:`twice_ranks` of the valid entries):
    the ranks of a row's tests among themselves, e.g. gathered from the ranks of a whole dataset when every
    learner of it was tested."""
    valid = np.atleast_2d(np.asarray(valid, dtype=bool))
    ideal = valid  # only the shape is read below
    r = np.where(ranked, twice / 2.0 + 1.0, np.nan)  # the mid ranks of rank_rows, exactly (halves)
    n = valid.sum(axis=1).astype(float)
    pos = np.where(valid, np.arange(1, ideal.shape[1] + 1, dtype=float)[None, :], 0.0)
    r = np.where(valid, r, 0.0)
    mean = (n + 1.0) / 2.0
    dx = np.where(valid, pos - mean[:, None], 0.0)
    dy = np.where(valid, r - mean[:, None], 0.0)
    sxy = _seqsum(dx * dy)
    sxx = _seqsum(dx * dx)
    syy = _seqsum(dy * dy)
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = sxy / np.sqrt(sxx * syy)
    rho[(n < 2) | (syy == 0)] = np.nan
    return rho


@dataclass(frozen=True)
class LossTimeCurve:
    """The loss-time step function of one order followed on one dataset.

    Attributes
    ----------
    dataset : str
        Dataset id.
    learners : tuple of str
        Learners in test order.
    accuracies, seconds : ndarray
        Per test (NaN accuracy for a failed test).
    best : float
        Best accuracy on the dataset among learners with a result.
    baseline : float
        Accuracy known before any test.
    baseline_kind : str
        ``"majority"`` or ``"worst-learner"`` (majority fraction unknown).
    """

    dataset: str
    learners: tuple
    accuracies: np.ndarray = field(repr=False)
    seconds: np.ndarray = field(repr=False)
    best: float = float("nan")
    baseline: float = float("nan")
    baseline_kind: str = "majority"

    def _steps(self):
        cum, losses, initial = loss_steps(self.accuracies[None, :], self.seconds[None, :], [self.best], [self.baseline])
        return cum[0], losses[0], float(initial[0])

    @property
    def cumulative_seconds(self) -> np.ndarray:
        """Finish time of each test."""
        return self._steps()[0]

    @property
    def losses(self) -> np.ndarray:
        """Loss (percentage points) once each test has finished."""
        return self._steps()[1]

    @property
    def initial_loss(self) -> float:
        """Loss before the first test finishes."""
        return self._steps()[2]

    def loss_by_tests(self) -> np.ndarray:
        """Loss after 0, 1, ..., n tests (length n + 1): the plain loss curve."""
        _, losses, initial = self._steps()
        return np.concatenate([[initial], losses])

    def loss_at(self, t) -> np.ndarray:
        """Loss at time(s) ``t`` (right-continuous: a test counts from the moment it finishes)."""
        cum, losses, initial = self._steps()
        values = np.concatenate([[initial], losses])
        return values[np.searchsorted(cum, np.asarray(t, dtype=float), side="right")]

    def mil(self, *, tmin: float, tmax: float) -> float:
        """Exact mean interval loss over ``[tmin, tmax]``."""
        cum, losses, initial = self._steps()
        return float(mil_rows(cum[None, :], losses[None, :], np.array([initial]), tmin=tmin, tmax=tmax)[0])


def loss_time_curve(trace, env) -> LossTimeCurve:
    """The loss-time curve of a :class:`~algorank.recommender.kernel.trace.Trace` run in ``env``.

    Parameters
    ----------
    trace : Trace
        What was tested, in order.
    env : SimulatedEnvironment
        Supplies ``best_accuracy``, ``baseline`` and ``baseline_kind`` of the dataset.
    """
    acc = np.array([o.accuracy if o.status == "ok" else np.nan for o in trace.observations], dtype=float)
    return LossTimeCurve(
        dataset=trace.dataset,
        learners=tuple(trace.learners),
        accuracies=acc,
        seconds=trace.seconds,
        best=float(env.best_accuracy),
        baseline=float(env.baseline),
        baseline_kind=env.baseline_kind,
    )


@dataclass(frozen=True)
class MeanLossTimeCurve:
    """Pointwise mean of several loss-time curves, kept exact as a step function.

    Attributes
    ----------
    times : ndarray
        Sorted breakpoints (union of the curves' finish times).
    losses : ndarray
        Mean loss from each breakpoint on.
    initial : float
        Mean loss before the first breakpoint.
    n_curves : int
        Number of curves averaged.
    """

    times: np.ndarray = field(repr=False)
    losses: np.ndarray = field(repr=False)
    initial: float
    n_curves: int

    def loss_at(self, t) -> np.ndarray:
        """Mean loss at time(s) ``t``."""
        values = np.concatenate([[self.initial], self.losses])
        return values[np.searchsorted(self.times, np.asarray(t, dtype=float), side="right")]

    def on_grid(self, grid) -> np.ndarray:
        """The mean curve on a grid of times (e.g. ``np.logspace``)."""
        return self.loss_at(grid)

    def mil(self, *, tmin: float, tmax: float) -> float:
        """Exact MIL of the mean curve (equals the mean of the curves' MILs)."""
        return float(
            mil_rows(self.times[None, :], self.losses[None, :], np.array([self.initial]), tmin=tmin, tmax=tmax)[0]
        )


def mean_loss_time_curve(cumulative: np.ndarray, losses: np.ndarray, initial: np.ndarray) -> MeanLossTimeCurve:
    """Exact pointwise mean of step functions given as rows (see :func:`loss_steps`).

    Rows may be padded at the end with repeated last times and losses.
    """
    cum = np.atleast_2d(np.asarray(cumulative, dtype=float))
    los = np.atleast_2d(np.asarray(losses, dtype=float))
    init = np.atleast_1d(np.asarray(initial, dtype=float))
    n = cum.shape[0]
    if n == 0:
        raise InputError("cannot average zero loss-time curves")
    times = np.unique(cum[np.isfinite(cum)])
    total = np.zeros(times.size)
    for i in range(n):
        values = np.concatenate([[init[i]], los[i]])
        total += values[np.searchsorted(cum[i], times, side="right")]
    return MeanLossTimeCurve(times=times, losses=total / n, initial=float(init.mean()), n_curves=n)


def mean_loss_by_tests(losses: np.ndarray, initial: np.ndarray, n_tests: np.ndarray) -> np.ndarray:
    """Mean loss after 0, 1, ..., m tests over rows; a row that ran out keeps its last loss.

    Parameters
    ----------
    losses : array (n_rows, m)
        Loss after each test (padding ignored).
    initial : array (n_rows,)
        Loss before any test.
    n_tests : array of int (n_rows,)
        Number of real tests per row.
    """
    los = np.atleast_2d(np.asarray(losses, dtype=float))
    init = np.atleast_1d(np.asarray(initial, dtype=float))
    n_tests = np.atleast_1d(np.asarray(n_tests, dtype=int))
    full = np.concatenate([init[:, None], los], axis=1)
    idx = np.minimum(np.arange(full.shape[1])[None, :], n_tests[:, None])
    return np.take_along_axis(full, idx, axis=1).mean(axis=0)
