"""Effect sizes and paired-difference intervals, each cross-checked on 60 random inputs against scipy
or a hand (brute-force) computation, plus their place in the test results."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from algorank.evaluation.stats import (
    cliffs_delta,
    corrected_resampled_t,
    friedman,
    kendall_w,
    magnitude,
    paired_difference_ci,
    paired_dominance,
    paired_t,
    rank_biserial,
    sign_test,
    wilcoxon_signed_rank,
)
from algorank.metadata.errors import InputError

SEEDS = range(60)


def _pair(seed, ties=False):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 40))
    x = rng.normal(0.8, 0.05, n)
    y = x + rng.normal(rng.normal(0, 0.02), 0.03, n)
    if ties:
        x, y = np.round(x, 2), np.round(y, 2)
    return x, y


@pytest.mark.parametrize("seed", SEEDS)
def test_cliffs_delta_brute_force_and_mann_whitney(seed):
    rng = np.random.default_rng(seed)
    x = np.round(rng.normal(0, 1, rng.integers(1, 30)), 1)  # ties across the samples
    y = np.round(rng.normal(0.3, 1, rng.integers(1, 30)), 1)
    brute = np.mean([np.sign(a - b) for a, b in itertools.product(x, y)])
    assert cliffs_delta(x, y) == pytest.approx(brute, abs=1e-12)
    u = stats.mannwhitneyu(x, y).statistic  # U of x, ties count 1/2
    assert cliffs_delta(x, y) == pytest.approx(2 * u / (x.size * y.size) - 1, abs=1e-12)
    assert cliffs_delta(y, x) == pytest.approx(-cliffs_delta(x, y), abs=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_rank_biserial_against_scipy_wilcoxon(seed):
    x, y = _pair(seed, ties=seed % 2 == 1)
    d = x - y
    nz = d[d != 0]
    if nz.size == 0:
        pytest.skip("all differences zero")
    # scipy's one-sided statistic is R+ (zeros dropped with zero_method="wilcox")
    r_plus = stats.wilcoxon(x, y, zero_method="wilcox", alternative="greater").statistic
    total = nz.size * (nz.size + 1) / 2
    assert rank_biserial(x, y) == pytest.approx((2 * r_plus - total) / total, abs=1e-12)
    # the Wilcoxon result carries r with its own zero handling
    for zm in ("wilcox", "pratt", "zsplit"):
        res = wilcoxon_signed_rank(x, y, zero_method=zm)
        assert res.effect_size == pytest.approx(rank_biserial(x, y, zero_method=zm), abs=1e-12)
        assert zm in res.effect_size_name
    assert -1 <= rank_biserial(x, y) <= 1


def test_rank_biserial_hand_example():
    # d = 3, -1, 2, 0 -> wilcox drops 0: |d| ranks 3, 1, 2 -> R+ = 5, R- = 1 -> r = 4/6
    x, y = np.array([4.0, 1.0, 5.0, 2.0]), np.array([1.0, 2.0, 3.0, 2.0])
    assert rank_biserial(x, y) == pytest.approx(4 / 6)
    # pratt: ranks with the zero 4, 2, 3, (1) -> R+ = 7, R- = 2 -> 5/9; zsplit: (7.5 - 2.5) / 10 = 0.5
    assert rank_biserial(x, y, zero_method="pratt") == pytest.approx(5 / 9)
    assert rank_biserial(x, y, zero_method="zsplit") == pytest.approx(0.5)
    assert rank_biserial(x, x) == 0.0


@pytest.mark.parametrize("seed", SEEDS)
def test_kendall_w_formula_friedman_and_mean_spearman(seed):
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(2, 20)), int(rng.integers(3, 8))
    scores = rng.random((n, k)) + np.linspace(0, rng.random(), k)
    w = kendall_w(scores)
    ranks = stats.rankdata(-scores, axis=1)
    s = ((ranks.sum(axis=0) - n * (k + 1) / 2) ** 2).sum()
    assert w == pytest.approx(12 * s / (n**2 * (k**3 - k)), rel=1e-12)
    fr = friedman(scores)
    assert fr.kendall_w == pytest.approx(w, rel=1e-12)
    assert w == pytest.approx(stats.friedmanchisquare(*scores.T).statistic / (n * (k - 1)), rel=1e-10)
    # no ties: mean pairwise Spearman correlation between datasets = (N W - 1) / (N - 1)
    rhos = [stats.spearmanr(scores[i], scores[j]).statistic for i in range(n) for j in range(i + 1, n)]
    assert np.mean(rhos) == pytest.approx((n * w - 1) / (n - 1), abs=1e-10)
    assert 0 <= w <= 1


def test_kendall_w_extremes():
    agree = np.tile([0.9, 0.8, 0.7, 0.6], (5, 1))
    assert kendall_w(agree) == pytest.approx(1.0) and friedman(agree).kendall_w == pytest.approx(1.0)
    assert kendall_w(np.full((4, 3), 0.5)) == 0.0
    with pytest.raises(InputError, match="NaN"):
        kendall_w(np.array([[1, 2], [np.nan, 1]]))


@pytest.mark.parametrize("seed", SEEDS)
def test_t_interval_equals_scipy_ttest_rel(seed):
    x, y = _pair(seed)
    for conf in (0.9, 0.95):
        ours = paired_difference_ci(x, y, confidence=conf)
        ref = stats.ttest_rel(x, y).confidence_interval(confidence_level=conf)
        assert ours.low == pytest.approx(ref.low, rel=1e-10, abs=1e-14)
        assert ours.high == pytest.approx(ref.high, rel=1e-10, abs=1e-14)
        assert ours.estimate == pytest.approx(np.mean(x - y))
    res = paired_t(x, y)
    ref = stats.ttest_rel(x, y).confidence_interval()
    assert (res.ci_low, res.ci_high) == pytest.approx((ref.low, ref.high), rel=1e-10)
    assert res.effect_size == pytest.approx(np.mean(x - y) / np.std(x - y, ddof=1), rel=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_bootstrap_interval_equals_scipy_bootstrap_with_the_same_generator(seed):
    x, y = _pair(seed)
    ours = paired_difference_ci(x, y, method="bootstrap", n_resamples=999, random_state=seed)
    ref = stats.bootstrap((x - y,), np.mean, method="percentile", n_resamples=999,
                          rng=np.random.default_rng(seed)).confidence_interval
    assert ours.low == pytest.approx(ref.low, rel=1e-12, abs=1e-15)
    assert ours.high == pytest.approx(ref.high, rel=1e-12, abs=1e-15)
    again = paired_difference_ci(x, y, method="bootstrap", n_resamples=999, random_state=seed)
    assert (again.low, again.high) == (ours.low, ours.high)  # same seed, same interval, bit for bit


def test_corrected_interval_uses_the_corrected_variance():
    rng = np.random.default_rng(0)
    x, y = rng.random(25), rng.random(25)
    d = x - y
    res = corrected_resampled_t(x, y, test_train_ratio=0.1 / 0.81)
    half = stats.t.ppf(0.975, 24) * np.sqrt((1 / 25 + 0.1 / 0.81) * d.var(ddof=1))
    assert (res.ci_low, res.ci_high) == pytest.approx((d.mean() - half, d.mean() + half), rel=1e-12)
    assert "corrected" in res.ci_method


def test_sign_test_reports_matched_pairs_dominance():
    x = np.array([0.9, 0.8, 0.7, 0.7, 0.6])
    y = np.array([0.8, 0.9, 0.6, 0.7, 0.5])  # 3 wins, 1 loss, 1 tie
    res = sign_test(x, y)
    assert res.effect_size == pytest.approx(2 / 5) == paired_dominance(x, y)


def test_magnitude_labels_and_errors():
    assert [magnitude(v) for v in (0.1, -0.2, 0.4, 0.9)] == ["negligible", "small", "medium", "large"]
    with pytest.raises(InputError, match="confidence"):
        paired_difference_ci([1, 2, 3], [1, 1, 1], confidence=1.5)
    with pytest.raises(InputError, match="method"):
        paired_difference_ci([1, 2, 3], [1, 1, 1], method="bca")
    with pytest.raises(InputError, match="NaN"):
        cliffs_delta([1, np.nan], [1, 2])


def test_benchmark_comparison_and_multitest_report_effects():
    from test_benchmark import synthetic_meta
    from test_multitest import _meta

    from algorank.evaluation.meta.benchmark import compare_strategies, leave_one_dataset_out
    from algorank.recommender.multitest import multi2test
    from algorank.recommender.registry import make_ar

    meta = synthetic_meta(n_datasets=15, seed=2)
    res = [leave_one_dataset_out(make_ar(p), meta, tmin=0.01, tmax=100) for p in (0, 1 / 16, 1 / 4)]
    c = compare_strategies(res)
    x = np.column_stack([r.mil for r in res])
    assert c.kendall_w == pytest.approx(kendall_w(x, lower_is_better=True))
    e = c.effects[1]  # ar:p=0 vs ar:p=1/4
    assert (e["a"], e["b"], e["n"]) == ("ar:p=0", "ar:p=1/4", 15)
    assert e["cliffs_delta"] == pytest.approx(cliffs_delta(x[:, 0], x[:, 2]))
    assert e["mean_difference"] == pytest.approx(np.mean(x[:, 0] - x[:, 2]))
    ref = stats.ttest_rel(x[:, 0], x[:, 2]).confidence_interval()
    assert (e["ci_low"], e["ci_high"]) == pytest.approx((ref.low, ref.high))
    d = c.to_dict()
    assert d["kendall_w"] == pytest.approx(c.kendall_w) and len(d["effects"]) == 3
    two = compare_strategies(res[:2]).test
    assert two.effect_size == pytest.approx(rank_biserial(x[:, 0], x[:, 1], zero_method="pratt"))
    m = multi2test(_meta(), posthoc_method="holm").to_dict()
    assert 0 <= m["omnibus"]["kendall_w"] <= 1
