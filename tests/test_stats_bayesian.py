"""Bayesian signed-rank and correlated t-tests: cross-checked against baycomp on 60 random inputs each
(same seed and sample count for the Monte Carlo signed-rank test; the correlated t is analytic), a
hand-computed posterior, invariants and the plot."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from algorank.evaluation.stats.bayesian import (
    DEFAULT_ROPE,
    BayesianResult,
    bayesian_correlated_t,
    bayesian_signed_rank,
    plot_posterior,
)
from algorank.metadata.errors import InputError

baycomp = pytest.importorskip("baycomp", reason="baycomp (test extra) is needed for the cross-checks")

SEEDS = range(60)


def _scores(seed, n_lo=5, n_hi=30):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(n_lo, n_hi))
    x = rng.uniform(0.6, 0.95, n)
    y = x + rng.normal(rng.normal(0, 0.015), 0.02, n)
    if seed % 3 == 0:  # ties and exact zeros
        x, y = np.round(x, 2), np.round(y, 2)
    return x, y


@pytest.mark.parametrize("seed", SEEDS)
def test_signed_rank_equals_baycomp_with_the_same_seed(seed):
    x, y = _scores(seed)
    rope = [0.0, 0.005, 0.01, 0.02][seed % 4]
    ours = bayesian_signed_rank(x, y, rope=rope, nsamples=1000, random_state=seed)
    sample = baycomp.SignedRankTest.sample(x, y, rope, nsamples=1000, random_state=seed)
    np.testing.assert_allclose(ours.samples, sample, rtol=0, atol=1e-12)
    # what baycomp.SignedRankTest.probs returns, from the same sample (its sampling loop is slow)
    ref = baycomp.multiple.Posterior(sample).probs(rope > 0)
    if rope > 0:
        assert ours.probabilities == pytest.approx(tuple(ref), abs=1e-12)
    else:  # baycomp returns (p_left, p_right) without a rope
        assert (ours.p_left, ours.p_right) == pytest.approx(tuple(ref), abs=1e-12) and ours.p_rope == 0
    assert sum(ours.probabilities) == pytest.approx(1.0)


@pytest.mark.parametrize("seed", SEEDS)
def test_correlated_t_equals_baycomp(seed):
    rng = np.random.default_rng(1000 + seed)
    runs, folds = int(rng.integers(1, 4)), int(rng.integers(2, 11))
    x = rng.uniform(0.7, 0.9, runs * folds)
    y = x + rng.normal(rng.normal(0, 0.01), 0.015, x.size)
    rope = [0.0, 0.01, 0.03][seed % 3]
    ours = bayesian_correlated_t(x, y, rope=rope, runs=runs)
    ref = baycomp.CorrelatedTTest.probs(x, y, rope, runs=runs)
    if rope > 0:
        assert ours.probabilities == pytest.approx(tuple(ref), abs=1e-12)
    else:
        assert (ours.p_left, ours.p_right) == pytest.approx(tuple(ref), abs=1e-12)
    mean, var, df = baycomp.CorrelatedTTest.compute_statistics(x, y, runs=runs)
    assert (ours.loc, ours.scale ** 2, ours.df) == pytest.approx((mean, var, df), rel=1e-12)


def test_correlated_t_by_hand():
    # d = y - x = (0.01, 0.03, 0.02, 0.00) over 4 folds of one 4-fold CV: mean 0.015, var 1/6000,
    # rho = 1/3: scale^2 = (1/4 + 1/3) / 6000; P(right) = P(T_3 > (0.01 - 0.015) / scale)
    x = np.zeros(4)
    y = np.array([0.01, 0.03, 0.02, 0.0])
    res = bayesian_correlated_t(x, y, rope=0.01, runs=1)
    scale = math.sqrt((1 / 4 + 1 / 3) * np.var(y, ddof=1))
    assert res.scale == pytest.approx(scale) and res.correction == pytest.approx(1 / 3)
    assert res.p_right == pytest.approx(stats.t.sf((0.01 - 0.015) / scale, 3))
    assert res.p_left == pytest.approx(stats.t.cdf((-0.01 - 0.015) / scale, 3))
    assert res.mean_difference == pytest.approx(-0.015)
    # an explicit n_test/n_train replaces the k-fold rule
    alt = bayesian_correlated_t(x, y, rope=0.01, test_train_ratio=0.1 / 0.81)
    assert alt.scale == pytest.approx(math.sqrt((1 / 4 + 0.1 / 0.81) * np.var(y, ddof=1)))


def test_signed_rank_hand_posterior_with_one_dataset():
    # one dataset with z = y - x = 0.05 > 2 rope: pairs (0,0) -> rope, (0,1),(1,0): z = .05 > .02 -> right,
    # (1,1): .1 -> right.  theta_right = 2 w0 w1 + w1^2, theta_rope = w0^2 with (w0, w1) ~ Dirichlet(.5, 1)
    res = bayesian_signed_rank([0.80], [0.85], rope=0.01, nsamples=4000, random_state=0)
    w = np.random.RandomState(0).dirichlet([0.5, 1.0], 4000)
    np.testing.assert_allclose(res.samples[:, 2], 2 * w[:, 0] * w[:, 1] + w[:, 1] ** 2, atol=1e-14)
    np.testing.assert_allclose(res.samples[:, 1], w[:, 0] ** 2, atol=1e-14)
    assert res.p_left == 0.0
    # theta_rope > theta_right  <=>  w0 > 1/sqrt(2)... w0^2 > 1 - w0^2
    assert res.p_rope == pytest.approx(np.mean(w[:, 0] ** 2 > 1 - w[:, 0] ** 2))


def test_invariants_and_reproducibility():
    x, y = _scores(5)
    a = bayesian_signed_rank(x, y, random_state=3, nsamples=1000)
    b = bayesian_signed_rank(x, y, random_state=3, nsamples=1000)
    assert a.probabilities == b.probabilities and np.array_equal(a.samples, b.samples)
    swapped = bayesian_signed_rank(y, x, random_state=3, nsamples=1000)
    assert swapped.probabilities == pytest.approx((a.p_right, a.p_rope, a.p_left))
    t1, t2 = bayesian_correlated_t(x, y), bayesian_correlated_t(y, x)
    assert (t1.p_left, t1.p_rope, t1.p_right) == pytest.approx((t2.p_right, t2.p_rope, t2.p_left))
    # clearly better learner: the decision follows
    big = bayesian_signed_rank(x + 0.1, x, random_state=0, nsamples=1000)
    assert big.decision() == "left" and big.to_dict()["decision_95"] == "left"
    same = bayesian_correlated_t(x, x + 1e-4, rope=0.01)
    assert same.decision() == "rope"
    assert "samples" not in a.to_dict() and a.to_dict()["nsamples"] == 1000
    assert DEFAULT_ROPE == 0.01 and a.rope == 0.01


def test_zero_variance_correlated_t_is_a_point_mass():
    x = np.full(10, 0.8)
    assert bayesian_correlated_t(x, x + 0.02).probabilities == (0.0, 0.0, 1.0)
    assert bayesian_correlated_t(x, x + 0.005).probabilities == (0.0, 1.0, 0.0)
    assert bayesian_correlated_t(x, x, rope=0).probabilities == (0.5, 0.0, 0.5)


def test_bad_input():
    with pytest.raises(InputError, match="rope"):
        bayesian_signed_rank([1, 2], [1, 2], rope=-1)
    with pytest.raises(InputError, match="nsamples"):
        bayesian_signed_rank([1, 2], [1, 2], nsamples=0)
    with pytest.raises(InputError, match="runs"):
        bayesian_correlated_t([1, 2, 3], [1, 2, 3], runs=3)
    with pytest.raises(InputError, match="same length"):
        bayesian_correlated_t([1, 2, 3], [1, 2])
    with pytest.raises(InputError, match="BayesianResult"):
        plot_posterior("nope")


def test_plots_draw_without_showing(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    x, y = _scores(7)
    ax = plot_posterior(bayesian_signed_rank(x, y, nsamples=500, random_state=0), names=("A", "B"))
    assert "p(A)" in ax.texts[0].get_text() and "Bayesian signed-rank" in ax.get_title()
    ax.figure.savefig(tmp_path / "simplex.png")
    ax2 = plot_posterior(bayesian_correlated_t(x, y), names=("A", "B"))
    assert ax2.get_xlabel() == "mean difference A - B"
    assert isinstance(bayesian_correlated_t(x, y), BayesianResult)
