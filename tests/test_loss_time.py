"""Loss curves, loss-time curves and exact MIL: hand-computed cases and invariants."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import spearmanr

from algorank.recommender.kernel.loss_time import (
    LossTimeCurve,
    check_window,
    loss_steps,
    mean_loss_by_tests,
    mean_loss_time_curve,
    mil_rows,
    spearman_rows,
)
from algorank.metadata.errors import InputError


def curve(acc, sec, best, baseline):
    return LossTimeCurve("d", tuple(f"L{i}" for i in range(len(acc))), np.array(acc, float), np.array(sec, float),
                         best, baseline)


def test_hand_computed_curve():
    # best 0.9, majority 0.5; tests: 0.6 in 0.1 s, 0.9 in 100 s, 0.8 in 10 s.
    # finish times 0.1, 100.1, 110.1; losses 30, 0, 0; initial 40.
    c = curve([0.6, 0.9, 0.8], [0.1, 100.0, 10.0], 0.9, 0.5)
    assert c.cumulative_seconds.tolist() == pytest.approx([0.1, 100.1, 110.1])
    assert c.losses.tolist() == pytest.approx([30.0, 0.0, 0.0])
    assert c.initial_loss == pytest.approx(40.0)
    assert c.loss_by_tests().tolist() == pytest.approx([40.0, 30.0, 0.0, 0.0])
    assert c.loss_at([0.05, 0.1, 50, 100.1, 1e6]).tolist() == pytest.approx([40, 30, 30, 0, 0])
    # Window [1, 1000] s = u in [0, 3]: loss 30 on [0, log10 100.1], then 0.
    assert c.mil(tmin=1, tmax=1000) == pytest.approx(30 * math.log10(100.1) / 3, rel=1e-14)
    # Window [0.01, 1000]: 40 on [-2, -1], 30 on [-1, log10 100.1], 0 after; length 5.
    assert c.mil(tmin=0.01, tmax=1000) == pytest.approx((40 * 1 + 30 * (math.log10(100.1) + 1)) / 5, rel=1e-14)


def test_first_test_after_tmax_gives_the_initial_loss():
    c = curve([0.9], [5000.0], 0.9, 0.6)
    assert c.mil(tmin=1, tmax=1000) == pytest.approx(30.0)
    # finishing exactly at tmax: the 0 loss covers a zero-width interval
    assert curve([0.9], [1000.0], 0.9, 0.6).mil(tmin=1, tmax=1000) == pytest.approx(30.0)


def test_tests_before_tmin_are_clipped():
    # Everything done by 0.5 s: the whole window [1, 100] sees the final loss 5.
    c = curve([0.7, 0.85], [0.2, 0.3], 0.9, 0.5)
    assert c.mil(tmin=1, tmax=100) == pytest.approx(5.0)


def test_zero_times():
    # A 0-second test finishes at t = 0 (log10 = -inf) and counts from tmin on.
    c = curve([0.8, 0.9], [0.0, 10.0], 0.9, 0.5)
    # u in [0, 2]: loss 10 on [0, 1], 0 on [1, 2] -> 5
    assert c.mil(tmin=1, tmax=100) == pytest.approx(5.0)
    assert c.loss_at(0.0) == pytest.approx(10.0)


def test_baseline_counts_as_found_and_loss_never_increases():
    # A first learner worse than the majority class does not raise the loss.
    c = curve([0.4, 0.9], [1.0, 1.0], 0.9, 0.6)
    assert c.loss_by_tests().tolist() == pytest.approx([30.0, 30.0, 0.0])
    # Majority above every learner: no loss at all.
    assert curve([0.5], [1.0], 0.5, 0.7).loss_by_tests().tolist() == [0.0, 0.0]


def test_failed_tests_do_not_count():
    c = curve([np.nan, 0.9], [3.0, 1.0], 0.9, 0.5)
    assert c.loss_by_tests().tolist() == pytest.approx([40.0, 40.0, 0.0])


@pytest.mark.parametrize("tmin,tmax", [(10, 10), (100, 10), (0, 10), (-1, 10), (1, float("inf")), ("a", 3)])
def test_bad_window(tmin, tmax):
    with pytest.raises(InputError, match="tmin|tmax"):
        check_window(tmin, tmax)


def test_exact_mil_matches_dense_sampling():
    rng = np.random.default_rng(0)
    acc = rng.uniform(0.5, 0.9, 6)
    c = curve(acc, 10 ** rng.uniform(-2, 2, 6), 0.95, 0.4)
    u = np.linspace(-1, 3, 400_001)
    sampled = c.loss_at(10 ** u).mean()
    assert c.mil(tmin=0.1, tmax=1000) == pytest.approx(sampled, abs=1e-3)


def test_single_and_padded_batch_agree_bit_for_bit():
    rng = np.random.default_rng(1)
    for _ in range(20):
        n = int(rng.integers(1, 9))
        acc, sec = rng.uniform(0.5, 1, n), 10 ** rng.uniform(-3, 3, n)
        c = curve(acc, sec, float(acc.max()), 0.5)
        pad = 5
        cum, losses, init = loss_steps(np.append(acc, [np.nan] * pad)[None], np.append(sec, [0.0] * pad)[None],
                                       [acc.max()], [0.5])
        assert mil_rows(cum, losses, init, tmin=0.01, tmax=100)[0] == c.mil(tmin=0.01, tmax=100)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.tuples(st.floats(0.3, 1.0), st.floats(0.0, 500.0)), min_size=1, max_size=6),
                min_size=1, max_size=6))
def test_mean_curve_mil_equals_mean_mil(rows):
    k = max(len(r) for r in rows)
    acc = np.full((len(rows), k), np.nan)
    sec = np.zeros((len(rows), k))
    for i, r in enumerate(rows):
        acc[i, : len(r)] = [a for a, _ in r]
        sec[i, : len(r)] = [s for _, s in r]
    best = np.nanmax(acc, axis=1)
    cum, losses, init = loss_steps(acc, sec, best, np.full(len(rows), 0.3))
    mils = mil_rows(cum, losses, init, tmin=0.5, tmax=1000)
    mean = mean_loss_time_curve(cum, losses, init)
    assert mean.mil(tmin=0.5, tmax=1000) == pytest.approx(mils.mean(), abs=1e-9)
    assert mean.loss_at(1e9) == pytest.approx(losses[:, -1].mean())


def test_mean_loss_by_tests_keeps_last_loss():
    losses = np.array([[10.0, 0.0, 0.0], [5.0, 5.0, 0.0]])
    out = mean_loss_by_tests(losses, np.array([20.0, 30.0]), np.array([2, 3]))
    assert out.tolist() == pytest.approx([25.0, 7.5, 2.5, 0.0])


def test_spearman_matches_scipy_with_ties_and_padding():
    rng = np.random.default_rng(5)
    for _ in range(30):
        n = int(rng.integers(2, 9))
        vals = rng.choice([0.6, 0.7, 0.8, 0.9], size=n)
        pad = np.append(vals, [np.nan] * 3)
        valid = np.append(np.ones(n, bool), np.zeros(3, bool))
        got = spearman_rows(pad[None], valid[None])[0]
        # the ideal order puts high accuracy first: correlate positions with ranks of -accuracy
        expect = spearmanr(np.arange(n), -vals).statistic if len(set(vals)) > 1 else np.nan
        if np.isnan(expect):
            assert np.isnan(got)
        else:
            assert got == pytest.approx(expect, abs=1e-12)
