"""The exact smallest-MIL order on one dataset, knowing its results (the oracle lower bound).

Used by :class:`algorank.recommender.baselines.Oracle` (the oracle as a strategy) and by the
user-facing metrics (:mod:`algorank.evaluation.meta.user_metrics`), which report the oracle
bound of every metric.

Search (exact)
--------------
Only the dataset's (time, accuracy) Pareto front matters: in any order, replace each
test that raises the best accuracy found so far by a front learner that is at least
as fast and at least as accurate and drop every other test; no test finishes later
and the best accuracy found by any time is no lower, so the loss is nowhere higher
(the loss counts the majority-class baseline as found at time 0, so it never
increases).  On the front, accuracy grows with time, so a useful subset is run in
increasing time.  The search over subsets is a dynamic programme over the front in
increasing time whose states (finish time ``t``, integral so far ``C``) for the same
last learner are pruned by exact dominance: state A beats B when ``t_A <= t_B`` and
``C_A - L*u(t_A) <= C_B - L*u(t_B)`` (``u = log10`` clipped to the window, ``L`` the
loss after that learner).  The learners not chosen follow by accuracy (descending),
then time.
"""

from __future__ import annotations

import math

import numpy as np

from algorank.recommender.kernel.loss_time import check_window, row_chunks, take_rows
from algorank.metadata.errors import InputError

__all__ = ["oracle_order", "pareto_fronts", "oracle_mils"]


def _sorted_by_time(acc: np.ndarray, sec: np.ndarray, avail: np.ndarray) -> np.ndarray:
    """Per row, column indices by (unavailable last, time, accuracy descending, index)."""
    idx = np.broadcast_to(np.arange(acc.shape[1]), acc.shape)
    return np.lexsort((idx, np.where(avail, -acc, 0.0), np.where(avail, sec, 0.0), ~avail), axis=-1)


def _by_time(acc: np.ndarray, sec: np.ndarray, avail: np.ndarray) -> np.ndarray:
    """:func:`_sorted_by_time`, by one stable sort on the time where a row has no two available learners of equal
    time (then accuracy cannot decide anything); rows with such ties are sorted by all keys."""
    key = np.where(avail, sec, np.inf)
    order = np.argsort(key, axis=1, kind="stable")  # unavailable last in index order, times ascending, index
    if order.shape[1] > 1:
        sk = take_rows(key, order)
        tied = np.flatnonzero(((sk[:, 1:] == sk[:, :-1]) & np.isfinite(sk[:, 1:])).any(axis=1))
        if tied.size:
            order[tied] = _sorted_by_time(acc[tied], sec[tied], avail[tied])
    return order


def pareto_fronts(accuracy, seconds) -> list[np.ndarray]:
    """The (time, accuracy) Pareto front of every row, in increasing time, computed for all rows at once.

    Parameters
    ----------
    accuracy, seconds : array (n_rows, n_learners)
        NaN (or an infinite time) = no result.

    Returns
    -------
    list of int arrays
        Per row, the learners of its front: in the order by (time, accuracy descending, index), each
        learner more accurate than every one before it.
    """
    acc = np.atleast_2d(np.asarray(accuracy, dtype=float))
    sec = np.atleast_2d(np.asarray(seconds, dtype=float))
    fronts = []
    for c in row_chunks(*acc.shape):  # a block of rows at a time
        a, s = acc[c], sec[c]
        avail = np.isfinite(a) & np.isfinite(s)
        order = _by_time(a, s, avail)
        sa = np.take_along_axis(np.where(avail, a, -np.inf), order, axis=1)
        top = np.full(sa.shape, -np.inf)
        if sa.shape[1] > 1:
            top[:, 1:] = np.maximum.accumulate(sa, axis=1)[:, :-1]
        on = np.take_along_axis(avail, order, axis=1) & (sa > top)
        fronts += [order[i, on[i]] for i in range(order.shape[0])]
    return fronts


def _front_search(acc: list, sec: list, ids: list, best: float, baseline: float, a: float, b: float, *,
                  extend_past_window: bool = True):
    """Smallest integral of the loss over ``[a, b]`` (log10 seconds) by a subset of the front run in
    increasing time: ``(integral, path)`` (module docstring).

    ``extend_past_window=False`` does not extend a state that ends at or after the window: its
    extensions add nothing to the integral and end later, so the smallest integral is the same (the
    path found among equal ones may differ; :func:`oracle_mils` needs only the value).
    """
    log10 = math.log10

    def loss(x: float) -> float:
        return 100.0 * max(0.0, best - max(baseline, x))

    def u(t: float) -> float:
        return a if t <= 0 else min(max(log10(t), a), b)

    initial = loss(-math.inf)
    # states[i]: list of (t, C, path, u(t)) ending with front[i]; start state separately.
    start = (0.0, 0.0, (), u(0.0))
    best_total, best_path = initial * (b - a), ()
    states: list[list] = []
    losses = [loss(x) for x in acc]
    for i, j in enumerate(ids):
        lj = losses[i]
        sj = sec[i]
        cands = []
        for prev_loss, plist in [(initial, [start])] + [(losses[q], states[q]) for q in range(i)]:
            for t, c, path, ut in plist:
                if ut >= b and not extend_past_window:
                    continue
                t2 = t + sj
                u2 = a if t2 <= 0 else min(max(log10(t2), a), b)
                cands.append((t2, c + prev_loss * (u2 - ut), path, u2))
        cands.sort(key=lambda s: (s[0], s[1]))
        kept, best_v = [], math.inf
        for t2, c2, path, u2 in cands:
            v = c2 - lj * u2
            if v < best_v:
                kept.append((t2, c2, path + (j,), u2))
                best_v = v
        states.append(kept)
        for t2, c2, path, u2 in kept:
            total = c2 + lj * (b - u2)
            if total < best_total:
                best_total, best_path = total, path
    return best_total, best_path


def _front_value(acc: list, sec: list, best: float, baseline: float, a: float, b: float) -> float:
    """The smallest integral of :func:`_front_search` with ``extend_past_window=False``, without the paths.

    The same states, candidates and arithmetic as :func:`_front_search`, so the same value bit for bit:
    with no path in a state, sorting the states ``(t, C, u)`` as tuples is the order by ``(t, C)`` (``u`` is a
    function of ``t``); a state that ends at or after the window is not kept for extension."""
    log10 = math.log10
    initial = 100.0 * max(0.0, best - max(baseline, -math.inf))
    best_total = initial * (b - a)
    groups = [(initial, [(0.0, 0.0, a)])]  # (loss after the group's learner, its states that end before b)
    for x, sj in zip(acc, sec):
        lj = 100.0 * max(0.0, best - max(baseline, x))
        cands = []
        add = cands.append
        for prev_loss, plist in groups:
            for t, c, ut in plist:
                t2 = t + sj
                u2 = a if t2 <= 0 else min(max(log10(t2), a), b)
                add((t2, c + prev_loss * (u2 - ut), u2))
        cands.sort()
        kept, best_v = [], math.inf
        for state in cands:
            t2, c2, u2 = state
            v = c2 - lj * u2
            if v < best_v:
                best_v = v
                total = c2 + lj * (b - u2)
                if total < best_total:
                    best_total = total
                if u2 < b:
                    kept.append(state)
        groups.append((lj, kept))
    return best_total


def oracle_order(accuracy, seconds, *, baseline: float, tmin: float, tmax: float) -> tuple[np.ndarray, float]:
    """The order of smallest MIL on one dataset, by exact search over its Pareto front.

    Parameters
    ----------
    accuracy, seconds : array (n_learners,)
        True results on the dataset; NaN = no result (such learners are left out).
    baseline : float
        Accuracy known before any test (majority fraction or worst learner).
    tmin, tmax : float
        The MIL window.

    Returns
    -------
    order : int array
        Indices of the learners with a result: the chosen front subset in
        increasing time, then the others by accuracy (desc), time, index.
    mil : float
        The MIL of that order (percentage points).
    """
    lo, hi = check_window(tmin, tmax)
    a, b = math.log10(lo), math.log10(hi)
    acc = np.asarray(accuracy, dtype=float)
    sec = np.asarray(seconds, dtype=float)
    ok = np.isfinite(acc) & np.isfinite(sec)
    avail = np.flatnonzero(ok)
    if avail.size == 0:
        raise InputError("oracle_order: no learner has a result on this dataset")
    best = float(acc[avail].max())
    front = pareto_fronts(acc[None, :], sec[None, :])[0]
    total, path = _front_search(acc[front].tolist(), sec[front].tolist(), front.tolist(), best, float(baseline), a, b)
    rest = avail[~np.isin(avail, np.array(path, dtype=np.int64))]
    rest = rest[np.lexsort((rest, sec[rest], -acc[rest]))]
    return np.concatenate([np.array(path, dtype=np.int64), rest]), total / (b - a)


def oracle_mils(accuracy, seconds, baseline, windows) -> np.ndarray:
    """The oracle's (smallest) MIL of every row over several windows, the fronts found once for all rows.

    Parameters
    ----------
    accuracy, seconds : array (n_rows, n_learners)
        NaN = no result; every row needs one.
    baseline : array (n_rows,)
        Accuracy known before any test.
    windows : sequence of (tmin, tmax)
        Each ``tmin`` and ``tmax`` a number or one per row.  A row whose ``tmin >= tmax`` gets NaN.

    Returns
    -------
    ndarray (n_rows, len(windows))
        The same values as :func:`oracle_order`'s MIL, row by row.
    """
    acc = np.atleast_2d(np.asarray(accuracy, dtype=float))
    sec = np.atleast_2d(np.asarray(seconds, dtype=float))
    n = acc.shape[0]
    base = np.broadcast_to(np.asarray(baseline, dtype=float), (n,))
    ok = np.isfinite(acc) & np.isfinite(sec)
    if not ok.any(axis=1).all():
        raise InputError("oracle_order: no learner has a result on this dataset")
    best = np.max(np.where(ok, acc, -np.inf), axis=1)
    fronts = pareto_fronts(acc, sec)
    bounds = [(np.broadcast_to(np.asarray(lo, dtype=float), (n,)), np.broadcast_to(np.asarray(hi, dtype=float), (n,)))
              for lo, hi in windows]
    for lo, hi in bounds:
        good = lo < hi
        check_window(float(np.min(lo[good])) if good.any() else 1.0, float(np.max(hi[good])) if good.any() else 2.0)
    out = np.full((n, len(bounds)), np.nan)
    for i in range(n):
        f = fronts[i]
        fa, fs, ids = acc[i, f].tolist(), sec[i, f].tolist(), f.tolist()
        for w, (lo, hi) in enumerate(bounds):
            if lo[i] < hi[i]:
                a, b = math.log10(float(lo[i])), math.log10(float(hi[i]))
                out[i, w] = _front_value(fa, fs, float(best[i]), float(base[i]), a, b) / (b - a)
    return out
