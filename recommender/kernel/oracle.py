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

from algorank.recommender.kernel.loss_time import check_window
from algorank.metadata.errors import InputError

__all__ = ["oracle_order"]


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
    avail = np.flatnonzero(np.isfinite(acc) & np.isfinite(sec))
    if avail.size == 0:
        raise InputError("oracle_order: no learner has a result on this dataset")
    best = float(acc[avail].max())

    def loss(x: float) -> float:
        return 100.0 * max(0.0, best - max(baseline, x))

    def u(t: float) -> float:
        return a if t <= 0 else min(max(math.log10(t), a), b)

    by_time = sorted(avail.tolist(), key=lambda j: (sec[j], -acc[j], j))
    front, top = [], -math.inf
    for j in by_time:
        if acc[j] > top:
            front.append(j)
            top = acc[j]
    initial = loss(-math.inf)
    # states[i]: list of (t, C, path) ending with front[i]; start state separately.
    start = (0.0, 0.0, ())
    best_total, best_path = initial * (b - a), ()
    states: list[list] = []
    for i, j in enumerate(front):
        lj = loss(acc[j])
        cands = []
        for prev_loss, plist in [(initial, [start])] + [(loss(acc[front[q]]), states[q]) for q in range(i)]:
            for t, c, path in plist:
                t2 = t + sec[j]
                cands.append((t2, c + prev_loss * (u(t2) - u(t)), path + (j,)))
        cands.sort(key=lambda s: (s[0], s[1]))
        kept, best_v = [], math.inf
        for t2, c2, path in cands:
            v = c2 - lj * u(t2)
            if v < best_v:
                kept.append((t2, c2, path))
                best_v = v
        states.append(kept)
        for t2, c2, path in kept:
            total = c2 + lj * (b - u(t2))
            if total < best_total:
                best_total, best_path = total, path
    rest = sorted((j for j in avail.tolist() if j not in best_path), key=lambda j: (-acc[j], sec[j], j))
    return np.array(list(best_path) + rest, dtype=np.int64), best_total / (b - a)
