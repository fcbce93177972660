"""Average ranking with A3R (AR-A3R; Abdulrahman, Brazdil, van Rijn and Vanschoren 2018): rank learners per dataset, average the ranks.

On every prior dataset the learners with a result there are ranked by
A3R' = accuracy / time ** P (rank 1 = best, ties get the mean position; ``P = 0`` is
accuracy only, AR0).  A learner's score is its mean rank over the datasets where it
has a result; the recommended order is by that mean rank, best first.

Missing cells (documented rule)
-------------------------------
* A learner is ranked only among the learners present on a dataset.
* Ranks are rescaled to the number present: with ``m`` learners present, rank ``r``
  becomes ``u = (r - 1) / (m - 1)`` in [0, 1] (0 = best; ``u = 0.5`` when ``m = 1``),
  so that being 3rd of 5 and 9th of 17 weigh the same.  Reported average ranks are
  ``1 + mean(u) * (k - 1)`` on the usual 1..k scale (``k`` learners).
* A learner with results on fewer than ``min_coverage`` (a fraction, default 0.5) of
  the prior datasets cannot win by luck on a handful of datasets: it is placed after
  every sufficiently covered learner (still in order of its own mean rank).
  Learners with no result on any prior dataset are not recommended at all.
* Ties in the mean rank are broken by learner id (ascending), so orders are stable.
  "Tie" means exactly equal: the mean ranks are compared as exact fractions (below),
  never after a rounding.
* ``P = 0`` needs no time: a cell with an accuracy but no time counts as a result.
  ``P > 0`` on meta-data without any time is an InputError naming the time column.

* A timed-out (censored) test is never missing: it is ranked with its lower-bound time
  and the dataset's baseline accuracy (majority-class fraction), see
  :meth:`~algorank.recommender.kernel.environments.MetaArrays.censored_as_baseline`.

Live time model
---------------
``time_overhead`` and ``time_scale`` (keyword-only, defaults 0 and 1 = the recorded
time) turn each meta-data time ``t`` into the time of a live test before A3R:
``T = time_scale * t + time_overhead`` (see :mod:`algorank.recommender.kernel.time_model`; for a live
5-fold test ``time_scale = 5`` and ``time_overhead`` the calibrated per-test cost).
Do not combine them with meta-data whose times were already transformed
(:meth:`algorank.recommender.kernel.time_model.TimeModel.arrays`): that would count the overhead twice.

Exactness
---------
The rescaled ranks ``u = (r - 1) / (m - 1)`` are rationals: mid ranks make ``2 (r - 1)`` an
integer, so ``u = num / den`` with ``den = 2 (m_d - 1)`` per dataset (kept as int64 arrays,
computed a block of datasets at a time without Python objects).  A learner's mean rank is
ordered in three steps, so that only an exact tie goes to the learner id:

* the float sums of the ``u`` (over the training datasets, minus the held-out one for
  :meth:`AverageRanking.loo_orders`) are within ``(n^2 + 2n) 2**-53`` of the exact sums, and
  the means within that over the count plus one rounding;
* the floats sort each row; neighbours further apart than twice that bound are in exact order,
  and so is everything on either side of them;
* a run of neighbours closer than that (in practice exact ties) is sorted again exactly:
  the datasets are grouped by ``den``, the group totals are integers, and a learner's exact sum
  is the Python integer ``sum_g T_g (D / den_g)`` over ``D = lcm(den_g)``, computed only for the
  learners in such runs.

Refitting on each training set and the leave-one-dataset-out fast path (total sums minus the
held-out row, counts minus its indicator) therefore give the same orders, whatever the summation
order of the floats.
"""

from __future__ import annotations

import logging
import math
from fractions import Fraction
from typing import Mapping

import numpy as np

from algorank.recommender.kernel.environments import MetaArrays, meta_arrays, require_times
from algorank.recommender.kernel.labels import format_p
from algorank.recommender.kernel.loss_time import row_chunks, twice_ranks
from algorank.recommender.kernel.time_model import TimeModel
from algorank.metadata.errors import InputError
from algorank.recommender.a3r import TIME_FLOOR, a3r_prime, check_p
from algorank.recommender.base import OrderPolicy, StrategyBase, time_model_spec

__all__ = ["AverageRanking", "rank_unit_fractions", "rescaled_rank_units", "exact_mean_orders",
           "format_p"]  # format_p: re-exported

logger = logging.getLogger(__name__)

_EXACT_FLOAT = 2**53


def rank_unit_fractions(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-row ranks among present learners, rescaled to [0, 1], as exact fractions ``num / den``.

    Returns
    -------
    num : int64 array (n_rows, n_cols)
        ``2 (r - 1)`` (1 when the learner is alone on its row), 0 where missing.
    den : int64 array (n_rows,)
        ``2 (m - 1)`` with ``m`` learners present on the row (2 when ``m <= 1``).
    present : bool array
    """
    twice, present = twice_ranks(scores)
    m = present.sum(axis=1).astype(np.int64)
    den = np.where(m >= 2, 2 * (m - 1), 2).astype(np.int64)
    num = np.where(present & (m[:, None] < 2), 1, twice).astype(np.int64)
    return num, den, present


def rescaled_rank_units(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Per-row ranks among present learners, rescaled to [0, 1], as exact integers over one denominator.

    Parameters
    ----------
    scores : array (n_datasets, n_learners)
        Higher is better; NaN = no result.

    Returns
    -------
    units : int64 array (object array of Python ints when ``n * denominator`` could exceed 2**53)
        ``(r - 1) / (m - 1) * denominator`` exactly (``denominator / 2`` when ``m = 1``),
        0 where missing.
    present : bool array
        Where a learner was ranked.
    denominator : int
        ``lcm{2 (m - 1)}`` over the rows with ``m >= 2`` learners present (2 when none).
    """
    num, den, present = rank_unit_fractions(scores)
    m = present.sum(axis=1)
    denominator = math.lcm(*(2 * (int(v) - 1) for v in np.unique(m) if v >= 2)) or 2
    n = num.shape[0]
    if n * denominator < _EXACT_FLOAT:
        units = num * (denominator // den)[:, None]
    else:
        factor = np.array([denominator // int(q) for q in den], dtype=object)
        units = num.astype(object) * factor[:, None]
    return np.where(present, units, 0), present, denominator


def exact_mean_orders(sums: np.ndarray, counts: np.ndarray, below: np.ndarray) -> np.ndarray:
    """Per row, column indices ordered by (unknown last, ``below`` last, mean ``sums / counts``, index).

    Means are compared exactly: the float quotient orders them (it is correctly
    rounded, hence monotone in the exact value), and neighbours whose floats are
    equal are compared as fractions, so the column index decides only exact ties.

    Parameters
    ----------
    sums : int array (n_rows, k)
        Integer sums (int64 below 2**53, or Python ints).
    counts : int array (n_rows, k)
    below : bool array (n_rows, k)
        Placed after the others (e.g. insufficient coverage).

    Returns
    -------
    int64 array (n_rows, k)
        Column indices; columns with ``counts == 0`` come last.
    """
    sums = np.atleast_2d(sums)
    counts = np.atleast_2d(counts)
    known = counts > 0
    if sums.dtype == object:  # a float division of Python ints is correctly rounded too
        mean = np.array([[int(s) / int(c) if c > 0 else 0.0 for s, c in zip(rs, rc)]
                         for rs, rc in zip(sums, counts)], dtype=float).reshape(sums.shape)
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(known, sums / np.where(known, counts, 1), 0.0)

    def exact(row, cols):
        return [Fraction(int(sums[row, j]), int(counts[row, j])) for j in cols]

    return _ordered(mean, np.zeros(mean.shape[0]), known, below, exact)


def _ordered(mean: np.ndarray, err: np.ndarray, known: np.ndarray, below: np.ndarray, exact) -> np.ndarray:
    """Column indices per row by (unknown last, ``below`` last, exact mean, index), from float approximations.

    ``mean`` approximates each exact mean (a value in [0, 1]) within ``err`` (one bound per row; 0 when
    the floats are correctly rounded quotients, hence monotone in the exact value).  The floats sort the
    row; a run of neighbours closer than twice the bound (equal floats when it is 0) may be out of exact
    order, so it is sorted again by ``exact(row, cols)`` (exact, comparable values) and the index.
    Outside such runs the float order is the exact order: a neighbour more than twice the bound above
    is above everything before it.
    """
    n, k = mean.shape
    if k == 0:
        return np.zeros((n, 0), dtype=np.int64)
    key = np.where(known, mean + 2.0 * below, np.inf)  # below-coverage learners come after the others
    order = np.argsort(key, axis=1)
    sk = np.take_along_axis(key, order, axis=1)
    # adding 2 rounds by at most 2**-52; the bound holds for the row's every entry
    tol = 2.0 * np.asarray(err, dtype=float) + 2.0**-50
    tol = np.where(np.asarray(err) > 0, tol, 0.0)
    close = (sk[:, 1:] - sk[:, :-1] <= tol[:, None]) & np.isfinite(sk[:, 1:])
    for row in np.flatnonzero(close.any(axis=1)):
        c = close[row]
        starts = np.flatnonzero(c & ~np.concatenate(([False], c[:-1])))
        for s in starts:
            e = s + 1
            while e < k - 1 and c[e]:
                e += 1
            cols = order[row, s:e + 1]
            values = exact(row, cols)
            keyed = sorted(zip((bool(below[row, j]) for j in cols), values, (int(j) for j in cols)))
            order[row, s:e + 1] = [j for _, _, j in keyed]
    return order


class _RankUnits:
    """Rescaled ranks ``num / den`` of every cell (exact) and their float values."""

    def __init__(self, num: np.ndarray, den: np.ndarray, present: np.ndarray) -> None:
        self.num, self.den, self.present = num, den, present
        self.value = num / den[:, None]  # 0 where missing (num = 0 there)


class _ExactSums:
    """Exact rank sums over a training mask, as integers over one common denominator, computed on demand.

    Rows are grouped by their denominator ``2 (m - 1)``; a learner's sum is ``sum_g T_gj / q_g`` with
    integer group totals ``T_gj``, i.e. the integer ``sum_g T_gj (D / q_g)`` over ``D = lcm(q_g)``.
    Only learners whose float means are too close to call are ever asked for.
    """

    def __init__(self, units: _RankUnits, train: np.ndarray) -> None:
        self._units = units
        self._train = train
        self._totals = None
        self._cache: dict[int, int] = {}

    def _setup(self) -> None:
        if self._totals is not None:
            return
        rows = np.flatnonzero(self._train)
        den = self._units.den[rows]
        qs, inverse = np.unique(den, return_inverse=True)
        by_group = np.argsort(inverse, kind="stable")
        starts = np.searchsorted(inverse[by_group], np.arange(len(qs)))
        num = self._units.num[rows[by_group]]
        self._totals = (np.add.reduceat(num, starts, axis=0) if rows.size else
                        np.zeros((0, num.shape[1]), dtype=np.int64))
        d = math.lcm(*(int(q) for q in qs)) if qs.size else 2
        self._denominator = d
        self._factors = [d // int(q) for q in qs]

    @property
    def denominator(self) -> int:
        """``D``, the common denominator of the training rows' rescaled ranks."""
        self._setup()
        return self._denominator

    def numerators(self, cols) -> list[int]:
        """``D`` times the exact rank sum of each learner in ``cols`` over the whole training mask."""
        self._setup()
        out = []
        for j in cols:
            j = int(j)
            if j not in self._cache:
                self._cache[j] = sum(int(t) * f for t, f in zip(self._totals[:, j].tolist(), self._factors))
            out.append(self._cache[j])
        return out

    def numerator(self, j: int, held: int | None = None) -> int:
        """``D`` times the exact rank sum of learner ``j``, without row ``held`` (a training row) if given."""
        total = self.numerators([j])[0]
        if held is None:
            return total
        return total - int(self._units.num[held, j]) * (self._denominator // int(self._units.den[held]))


class AverageRanking(StrategyBase):
    """AR-A3R: order learners by their mean rank of A3R' over prior datasets.

    Parameters
    ----------
    metric : str
        Higher-is-better metric of the meta-data (default ``"accuracy"``).
    p : float
        A3R exponent in [0, 1]; 0 ranks by the metric alone (AR0).
    time_kind : {"fit_time", "fit_predict_time"}
        Time used in A3R.
    min_coverage : float
        Fraction of prior datasets (in [0, 1]) a learner needs results on to be
        ranked on merit; others follow the covered learners.
    time_floor : float
        Times are clipped to this many seconds before the power.
    name : str, optional
        Display name (default: the spec of the parameters, ``"ar:p=<P>"`` plus those set away from
        their defaults).
    time_overhead : float
        Seconds added to every meta-data time before A3R (default 0).
    time_scale : float
        Multiplier of every meta-data time before A3R (default 1), e.g. the number of CV folds.

    Attributes
    ----------
    order_ : list of str
        Recommended order after :meth:`fit`, best first.
    average_rank_ : dict
        Learner -> mean rank on the 1..k scale.
    coverage_ : dict
        Learner -> number of prior datasets with a result.
    """

    time_model_aware = True
    fast_loo = True
    p_upper = 1.0
    has_dataset_scores = True
    has_score_ranks = True

    def __init__(
        self,
        metric: str = "accuracy",
        p: float = 0.0,
        *,
        time_kind: str = "fit_time",
        min_coverage: float = 0.5,
        time_floor: float = TIME_FLOOR,
        name: str | None = None,
        time_overhead: float = 0.0,
        time_scale: float = 1.0,
    ) -> None:
        self.time_model = TimeModel(overhead=time_overhead, scale=time_scale)
        self.metric = metric
        self.p = check_p(p)
        self.time_kind = time_kind
        mc = float(min_coverage)
        if not (0.0 <= mc <= 1.0):
            raise InputError(f"min_coverage must be a fraction in [0, 1]; got {min_coverage!r}")
        self.min_coverage = mc
        if not (float(time_floor) > 0):
            raise InputError(f"time_floor must be > 0 seconds; got {time_floor!r}")
        self.time_floor = float(time_floor)
        self._name = name
        self._cache: tuple | None = None

    def default_name(self) -> str:
        extra = "" if self.min_coverage == 0.5 else f",min_coverage={self.min_coverage:g}"
        extra += "" if self.time_kind == "fit_time" else f",time={self.time_kind}"
        return f"ar:p={format_p(self.p)}{extra}{time_model_spec(self.time_model)}"

    def __repr__(self) -> str:
        extra = "" if self.time_model.is_identity else f", time={self.time_model.describe()!r}"
        return (f"AverageRanking(metric={self.metric!r}, p={format_p(self.p)}, min_coverage={self.min_coverage:g}"
                f"{extra})")

    @property
    def time_overhead(self) -> float:
        """Seconds added to every meta-data time before A3R."""
        return self.time_model.overhead

    @property
    def time_scale(self) -> float:
        """Multiplier of every meta-data time before A3R."""
        return self.time_model.scale

    def with_time_model(self, *, time_overhead: float = 0.0, time_scale: float = 1.0,
                        time_kind: str | None = None) -> "AverageRanking":
        """An unfitted copy ranking with ``T = time_scale * t + time_overhead`` (same name); ``t`` is the
        ``time_kind`` time (default: unchanged)."""
        return AverageRanking(self.metric, p=self.p, time_kind=time_kind or self.time_kind,
                              min_coverage=self.min_coverage,
                              time_floor=self.time_floor, name=self.name, time_overhead=time_overhead,
                              time_scale=time_scale)

    # ------------------------------------------------------------------ scores
    def dataset_scores(self, accuracy, seconds) -> np.ndarray:
        """A3R' of learners on one or more datasets (higher is better): the ideal order's key.

        ``seconds`` are meta-data times; the time model is applied to them first.
        """
        return a3r_prime(accuracy, self.time_model.apply(seconds), p=self.p, time_floor=self.time_floor)

    def score_ranks(self, arrays: MetaArrays):
        """The ranks of :meth:`dataset_scores` over each dataset's testable learners, from the ranks this strategy
        already holds for ``arrays`` (its leave-one-dataset-out orders were computed on them), or None.

        Available when P > 0 and nothing is censored: then the ranked cells are exactly the testable ones and
        their scores are those of :meth:`dataset_scores`.

        Returns
        -------
        (twice, ranked) or None
            As :func:`~algorank.recommender.kernel.loss_time.twice_ranks` (a row with one learner has 1 for its
            twice rank; it has no Spearman correlation anyway).
        """
        if not self.uses_time or self._cache is None or self._cache[1] is not arrays:
            return None
        if (arrays.censored & np.isfinite(arrays.seconds)).any():
            return None
        units = self._cache[2]
        return units.num, units.present

    @property
    def uses_time(self) -> bool:
        """Whether the ranking needs test times (``P > 0``)."""
        return self.p > 0

    def _units(self, arrays: MetaArrays) -> "_RankUnits":
        key = (id(arrays), arrays.shape)
        if self._cache is not None and self._cache[0] == key and self._cache[1] is arrays:
            return self._cache[2]
        prior = arrays.censored_as_baseline()  # a timeout: at least that slow, no better than the default
        if self.uses_time:
            require_times(prior, who=f"average ranking with P = {format_p(self.p)} ({self.name})")
            ok = prior.available
        else:  # accuracy only: a cell without a time is still a result
            ok = prior.has_accuracy
        n, k = ok.shape
        num, den, present = np.empty((n, k), dtype=np.int64), np.empty(n, dtype=np.int64), np.empty((n, k), dtype=bool)
        for c in row_chunks(n, k):  # datasets are ranked independently: a block of rows at a time
            if self.uses_time:
                scores = np.where(ok[c], self.dataset_scores(prior.accuracy[c], prior.seconds[c]), np.nan)
            else:
                scores = np.where(ok[c], prior.accuracy[c], np.nan)
            num[c], den[c], present[c] = rank_unit_fractions(scores)
        units = _RankUnits(num, den, present)
        self._cache = (key, arrays, units)
        return units

    def _rank_orders(self, units: "_RankUnits", train: np.ndarray, *, loo: bool) -> tuple[np.ndarray, object]:
        """Orders (rows) by exact mean rank over ``train`` (minus each row's own dataset when ``loo``);
        -1 pads unknown learners at the end.  Also returns the exact sums (for the reported mean ranks)."""
        t = np.asarray(train, dtype=bool)
        n, k = units.present.shape
        total = np.zeros(k)
        ctot = np.zeros(k, dtype=np.int64)
        for c in row_chunks(n, k):
            tc = t[c, None]
            total += np.where(tc, units.value[c], 0.0).sum(axis=0)  # any order: the error bound covers it
            ctot += (units.present[c] & tc).sum(axis=0)
        n_sum = int(t.sum())
        # |float sum - exact sum| <= (n^2 + 2n) 2**-53 (n units in [0, 1] rounded and summed, then the held-out
        # row subtracted); the division adds a relative 2**-53 (means lie in [0, 1])
        bound = (float(n_sum) ** 2 + 2.0 * n_sum + 2.0) * 2.0**-53
        exact = _ExactSums(units, t)
        if not loo:
            return self._order_block(total[None, :], ctot[None, :], np.array([float(n_sum)]), bound, exact, None), exact
        out = np.empty((n, k), dtype=np.int64)
        for c in row_chunks(n, k):  # each row: the totals minus its own dataset
            tc = t[c, None]
            sums = total[None, :] - np.where(tc, units.value[c], 0.0)
            counts = ctot[None, :] - (units.present[c] & tc)
            n_train = (n_sum - t[c].astype(np.int64)).astype(float)
            held = np.where(t[c], np.arange(c.start, c.stop), -1)
            out[c] = self._order_block(sums, counts, n_train, bound, exact, held)
        return out, exact

    def _order_block(self, sums, counts, n_train, bound, exact, held) -> np.ndarray:
        """Orders of a block of rows from float rank sums (within ``bound`` of the exact ones) and counts.

        ``held``: per row of the block, the training row (of the whole meta-data) subtracted from the
        totals, or -1 (None: nothing subtracted)."""
        known = counts > 0
        below = counts < self.min_coverage * n_train[:, None]
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = sums / np.where(known, counts, 1)
        smallest = np.where(known, counts, np.iinfo(np.int64).max).min(axis=1) if counts.shape[1] else np.ones(1)
        err = bound / np.maximum(smallest, 1) + 2.0**-52

        def exact_means(row, cols):
            r = None if held is None or held[row] < 0 else int(held[row])
            return [Fraction(exact.numerator(int(j), r), int(counts[row, j])) for j in cols]

        order = _ordered(mean, err, known, below, exact_means)
        return np.where(np.take_along_axis(known, order, axis=1), order, -1)

    # ------------------------------------------------------------------ Strategy API
    def fit(self, meta) -> "AverageRanking":
        """Rank on a MetaDataset (or :class:`MetaArrays`) of prior datasets."""
        arrays = meta if isinstance(meta, MetaArrays) else meta_arrays(meta, metric=self.metric, time_kind=self.time_kind)
        units = self._units(arrays)
        n_train = len(arrays.datasets)
        orders, exact = self._rank_orders(units, np.ones(n_train, dtype=bool), loo=False)
        order = orders[0]
        counts = units.present.sum(axis=0)
        k = len(arrays.learners)
        self.learners_ = tuple(arrays.learners)
        self.order_ = [arrays.learners[j] for j in order if j >= 0]
        covered = np.flatnonzero(counts > 0)
        numerators = exact.numerators(covered)
        self.average_rank_ = {
            arrays.learners[j]: float(1 + Fraction(numerators[i], int(counts[j]) * exact.denominator) * (k - 1))
            for i, j in enumerate(covered)
        }
        self.coverage_ = {l: int(counts[j]) for j, l in enumerate(arrays.learners)}
        self.n_datasets_ = n_train
        unranked = [arrays.learners[j] for j in order if j >= 0 and counts[j] < self.min_coverage * n_train]
        if unranked:
            logger.info("%d learner(s) below min_coverage=%g placed last: %s", len(unranked), self.min_coverage,
                        ", ".join(unranked))
        self._cache = None
        return self

    def policy(self, dataset_info: Mapping | None = None) -> OrderPolicy:
        """Follow the fitted order on the new dataset."""
        if not hasattr(self, "order_"):
            raise InputError("AverageRanking.policy called before fit")
        return OrderPolicy(self.order_)

    # ------------------------------------------------------------------ fast path
    def loo_orders(self, arrays: MetaArrays, *, train: np.ndarray | None = None) -> np.ndarray:
        """Leave-one-dataset-out orders for every dataset at once, without refitting.

        Parameters
        ----------
        arrays : MetaArrays
            All datasets.
        train : bool array (n_datasets,), optional
            Datasets allowed as prior data (default all).  Row ``d`` of the result
            is the order fitted on ``train`` minus ``d``.

        Returns
        -------
        int array (n_datasets, n_learners)
            Learner indices best first, padded with -1 (learners unknown in training).
        """
        units = self._units(arrays)
        t = np.ones(units.present.shape[0], dtype=bool) if train is None else np.asarray(train, dtype=bool)
        return self._rank_orders(units, t, loo=True)[0]
