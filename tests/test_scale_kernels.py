"""The faster kernels of the large-scale ``tune-p`` give bit for bit what the plain numpy and Python references
give: the flat gather against ``take_along_axis``, the column-major sequential sum against ``cumsum``
(signed zeros, infinities, NaN, trailing zeros), the tie-free ranks against the general tie path, the oracle's
value-only front search against the search with paths, the one-sort time order against the four-key
``lexsort``, the compaction of test sequences against a per-row loop, and the Spearman correlation of AR's own
scores from the ranks it holds against the one computed from the scores in test order."""

from __future__ import annotations

import math

import numpy as np
import pytest

from algorank.evaluation.meta.scoring import _compact, leave_one_dataset_out
from algorank.recommender.average_ranking import AverageRanking
from algorank.recommender.kernel.environments import MetaArrays
from algorank.recommender.kernel.loss_time import _seqsum, take_rows, twice_ranks
from algorank.recommender.kernel.oracle import _by_time, _front_search, _front_value, _sorted_by_time, pareto_fronts


@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_take_rows_is_take_along_axis(layout):
    rng = np.random.default_rng(0)
    base = rng.random((30, 17))
    source = {"C": base, "F": np.asfortranarray(base), "strided": base[:, ::2]}[layout]
    idx = rng.integers(0, source.shape[1], (12, 5))
    rows = rng.integers(0, source.shape[0], 12)
    assert np.array_equal(take_rows(source, idx, rows), np.take_along_axis(source[rows], idx, axis=1))
    assert np.array_equal(take_rows(source[:12], idx), np.take_along_axis(source[:12], idx, axis=1))


def test_seqsum_is_the_last_cumulative_sum_bit_for_bit():
    rng = np.random.default_rng(1)
    for trial in range(60):
        n, k = int(rng.integers(1, 40)), int(rng.integers(1, 300))
        x = rng.standard_normal((n, k)) * 10.0 ** rng.integers(-8, 8, (n, k))
        x[rng.random((n, k)) < 0.3] = 0.0
        x[rng.random((n, k)) < 0.3] = -0.0
        x[:, k // 2:] *= trial % 2  # trailing zeros
        if trial % 5 == 0:
            x[rng.random((n, k)) < 0.02] = np.inf
        if trial % 7 == 0:
            x[rng.random((n, k)) < 0.02] = np.nan
        assert _seqsum(x).tobytes() == np.cumsum(x, axis=1)[:, -1].tobytes(), trial
    signed = np.array([[-0.0, -0.0], [-0.0, 0.0], [0.0, -0.0]])
    assert _seqsum(signed).tobytes() == np.array([-0.0, 0.0, 0.0]).tobytes()
    # a sum that pairwise summation would round differently: 1 + 2**-53 + ... left to right stays 1
    tiny = np.array([[1.0] + [2.0**-53] * 20, [0.0] * 21])
    assert _seqsum(tiny)[0] == 1.0


def test_twice_ranks_without_ties_are_twice_the_positions():
    scores = np.array([[0.3, 0.9, np.nan, 0.5], [0.1, 0.2, 0.3, 0.4]])
    twice, ranked = twice_ranks(scores)
    assert twice.tolist() == [[4, 0, 0, 2], [6, 4, 2, 0]]
    assert ranked.tolist() == [[True, True, False, True], [True] * 4]
    mixed = np.array([[0.3, 0.3, 0.1], [0.2, 0.1, 0.3]])  # one row tied: the block takes the tie path
    assert twice_ranks(mixed)[0].tolist() == [[1, 1, 4], [2, 4, 0]]


def test_front_value_is_the_front_search_value():
    rng = np.random.default_rng(2)
    for trial in range(200):
        k = int(rng.integers(1, 40))
        acc, sec = rng.random(k), 10.0 ** rng.uniform(-4, 3, k)
        if trial % 2:
            acc, sec = np.round(acc, 1), np.round(sec, 2)
        front = pareto_fronts(acc[None, :], sec[None, :])[0]
        best, base = float(acc.max()), float(rng.random() * 0.5)
        a, b = math.log10(10.0 ** rng.uniform(-4, -1)), math.log10(10.0 ** rng.uniform(0, 3))
        fa, fs = acc[front].tolist(), sec[front].tolist()
        want = _front_search(fa, fs, front.tolist(), best, base, a, b, extend_past_window=False)[0]
        assert _front_value(fa, fs, best, base, a, b) == want


def test_time_order_by_one_sort_is_the_lexsort():
    rng = np.random.default_rng(3)
    acc = np.round(rng.random((50, 30)), 1)
    sec = rng.random((50, 30))
    sec[::2] = np.round(sec[::2], 1)  # ties in time on every other row
    sec[1, :2] = [0.0, -0.0]
    avail = rng.random((50, 30)) > 0.2
    assert np.array_equal(_by_time(acc, sec, avail), _sorted_by_time(acc, sec, avail))


def test_compact_keeps_each_rows_testable_learners_in_order():
    rng = np.random.default_rng(4)
    n, k = 20, 9
    acc = np.where(rng.random((n, k)) < 0.3, np.nan, rng.random((n, k)))
    arrays = MetaArrays(datasets=tuple(f"d{i}" for i in range(n)), learners=tuple(f"l{j}" for j in range(k)),
                        accuracy=acc, seconds=rng.random((n, k)), majority=np.full(n, np.nan))
    orders = np.argsort(rng.random((n, k)), axis=1)
    orders[::3, -2:] = -1
    want = np.full((n, k), -1)
    for i in range(n):
        kept = [j for j in orders[i] if j >= 0 and arrays.testable[i, j]]
        want[i, :len(kept)] = kept
    assert np.array_equal(_compact(arrays, orders), want)


class _NoHeldRanks(AverageRanking):
    has_score_ranks = False


def test_own_score_spearman_from_held_ranks_equals_the_one_from_the_scores(monkeypatch):
    rng = np.random.default_rng(5)
    n, k = 40, 12
    acc = np.where(rng.random((n, k)) < 0.2, np.nan, np.round(rng.random((n, k)), 2))
    acc[:, 0] = 0.5
    arrays = MetaArrays(datasets=tuple(f"d{i}" for i in range(n)), learners=tuple(f"l{j}" for j in range(k)),
                        accuracy=acc, seconds=np.round(10.0 ** rng.uniform(-2, 2, (n, k)), 1),
                        majority=np.full(n, 0.3))
    given = []
    held_ranks = AverageRanking.score_ranks
    monkeypatch.setattr(AverageRanking, "score_ranks", lambda self, a: given.append(held_ranks(self, a)) or given[-1])
    for p in (1 / 4, 1 / 64):
        assert AverageRanking(p=p).score_ranks(arrays) is None  # nothing held before its orders are computed
        held = leave_one_dataset_out(AverageRanking(p=p), arrays, tmin=0.01, tmax=100.0)
        assert given[-1] is not None  # the held ranks were used
        plain = leave_one_dataset_out(_NoHeldRanks(p=p), arrays, tmin=0.01, tmax=100.0)
        assert held.spearman_score.tobytes() == plain.spearman_score.tobytes()
        assert np.isfinite(held.spearman_score).sum() > n // 2


def test_the_allocator_helpers():
    import subprocess
    import sys

    import pyarrow as pa

    from algorank.metadata import allocator

    code = "from algorank.metadata.allocator import keep_freed_memory; print(keep_freed_memory())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ("True" if sys.platform.startswith("linux") else "False")
    before = pa.default_memory_pool()
    allocator.arrow_pool()  # not asked for (the command line asks): nothing changes
    assert pa.default_memory_pool().backend_name == before.backend_name
    try:
        allocator._STATE["arrow"] = True
        allocator.arrow_pool()
        assert pa.default_memory_pool().backend_name in ("jemalloc", before.backend_name)
        assert allocator._STATE["arrow"] is False  # once
    finally:
        allocator._STATE["arrow"] = False
        pa.set_memory_pool(before)
