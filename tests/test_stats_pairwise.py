"""Pairwise tests (two learners, one dataset): hand-computed values, scipy cross-checks, edge cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from algorank.evaluation.stats import (
    combined_5x2cv_f,
    combined_5x2cv_t,
    corrected_repeated_kfold_t,
    corrected_resampled_t,
    dietterich_5x2cv_t,
    mcnemar,
    mcnemar_from_counts,
    paired_t,
)
from algorank.metadata.errors import InputError

# A 5x2 cv example computed by hand.  Differences p_i^(j) (replication i, fold j):
#   (0.02, 0.04), (0.01, 0.03), (0.03, 0.03), (0.00, 0.02), (0.05, 0.01)
# row means 0.03, 0.02, 0.03, 0.01, 0.03 -> s_i^2 = 0.0002, 0.0002, 0, 0.0002, 0.0008; sum = 0.0014
# Dietterich t = 0.02 / sqrt(0.0014 / 5) = 0.02 / 0.0167332 = 1.195229
# combined F  = sum p^2 / (2 * 0.0014) = 0.0078 / 0.0028 = 2.785714
# combined t  = mean p / sqrt(0.0014 / 5 / 10) = 0.024 / 0.0052915 = 4.535574
P52 = np.array([[0.02, 0.04], [0.01, 0.03], [0.03, 0.03], [0.00, 0.02], [0.05, 0.01]])
Y52 = np.full((5, 2), 0.80)
X52 = Y52 + P52


def test_dietterich_5x2cv_t_hand_value():
    r = dietterich_5x2cv_t(X52, Y52)
    assert r.statistic == pytest.approx(1.195229, abs=1e-6)
    assert r.df == 5
    assert r.pvalue == pytest.approx(2 * stats.t.sf(1.195229, 5), rel=1e-5)
    assert dietterich_5x2cv_t(X52, Y52, alternative="greater").pvalue == pytest.approx(stats.t.sf(1.195229, 5), rel=1e-5)


def test_combined_5x2cv_f_hand_value():
    r = combined_5x2cv_f(X52, Y52)
    assert r.statistic == pytest.approx(2.785714, abs=1e-6)
    assert r.df == (10, 5)
    assert r.pvalue == pytest.approx(stats.f.sf(2.785714, 10, 5), rel=1e-5)
    # two-sided only: swapping the learners gives the same F
    assert combined_5x2cv_f(Y52, X52).statistic == pytest.approx(r.statistic)


def test_combined_5x2cv_t_hand_value_and_sign():
    r = combined_5x2cv_t(X52.ravel(), Y52.ravel(), alternative="greater")
    assert r.statistic == pytest.approx(4.535574, abs=1e-6)
    assert r.pvalue == pytest.approx(stats.t.sf(4.535574, 5), rel=1e-6)
    flipped = combined_5x2cv_t(Y52, X52, alternative="greater")
    assert flipped.statistic == pytest.approx(-4.535574, abs=1e-6)
    assert flipped.pvalue > 0.99


def test_five_by_two_zero_variance_edge_cases():
    same = np.full(10, 0.7)
    for f in (dietterich_5x2cv_t, combined_5x2cv_t, combined_5x2cv_f):
        assert f(same, same).pvalue == 1.0
    shifted = same + 0.05  # every difference 0.05: zero variance, non-zero mean
    assert combined_5x2cv_t(shifted, same).pvalue == 0.0
    assert combined_5x2cv_t(shifted, same, alternative="less").pvalue == 1.0
    assert combined_5x2cv_f(shifted, same).pvalue == 0.0
    assert dietterich_5x2cv_t(shifted, same).statistic == math.inf


def test_five_by_two_needs_ten_scores():
    with pytest.raises(InputError, match="5 replications x 2 folds"):
        combined_5x2cv_t(np.ones(25), np.ones(25))


def test_corrected_resampled_t_hand_value():
    # d = (0.02, 0.04, 0.00, 0.06): mean 0.03, var = 0.002 / 3; (1/4 + 0.25) * var = 0.000333...
    # t = 0.03 / sqrt(0.0003333) = 1.643168, df = 3
    y = np.full(4, 0.5)
    x = y + np.array([0.02, 0.04, 0.00, 0.06])
    r = corrected_resampled_t(x, y, test_train_ratio=0.25)
    assert r.statistic == pytest.approx(1.643168, abs=1e-6)
    assert r.df == 3
    assert r.pvalue == pytest.approx(2 * stats.t.sf(1.643168, 3), rel=1e-5)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1, 1, allow_nan=False), min_size=3, max_size=30), st.floats(0.01, 2.0),
       st.sampled_from(["two-sided", "less", "greater"]))
def test_corrected_t_is_paired_t_shrunk(diffs, ratio, alternative):
    d = np.array(diffs)
    if np.ptp(d) < 1e-6:
        return
    y = np.zeros_like(d)
    plain = paired_t(d, y, alternative=alternative)
    ref = stats.ttest_rel(d, y, alternative=alternative)
    assert plain.statistic == pytest.approx(ref.statistic, rel=1e-9)
    assert plain.pvalue == pytest.approx(ref.pvalue, rel=1e-7, abs=1e-12)
    corr = corrected_resampled_t(d, y, test_train_ratio=ratio, alternative=alternative)
    j = d.size
    assert corr.statistic == pytest.approx(plain.statistic * math.sqrt((1 / j) / (1 / j + ratio)), rel=1e-9)
    assert corr.df == j - 1


def test_corrected_repeated_kfold_is_resampled_with_one_over_k_minus_one():
    rng = np.random.default_rng(3)
    x, y = rng.random(30), rng.random(30)
    a = corrected_repeated_kfold_t(x, y, n_folds=10)
    b = corrected_resampled_t(x, y, test_train_ratio=1 / 9)
    assert a.statistic == pytest.approx(b.statistic) and a.pvalue == pytest.approx(b.pvalue)
    with pytest.raises(InputError, match="n_folds"):
        corrected_repeated_kfold_t(x[:29], y[:29], n_folds=10)


def test_t_tests_all_zero_differences_give_p_one():
    x = np.full(8, 0.9)
    assert paired_t(x, x).pvalue == 1.0
    assert corrected_resampled_t(x, x, test_train_ratio=0.2).pvalue == 1.0


def test_nan_policy():
    x = np.array([0.1, 0.2, np.nan, 0.4])
    y = np.array([0.0, 0.1, 0.2, 0.2])
    assert math.isnan(paired_t(x, y).pvalue)
    assert paired_t(x, y, nan_policy="omit").n == 3
    with pytest.raises(InputError, match="nan_policy"):
        paired_t(x, y, nan_policy="raise")


@pytest.mark.parametrize("kwargs, match", [
    ({"alternative": "bigger"}, "alternative"),
    ({"test_train_ratio": 0}, "test_train_ratio"),
    ({"test_train_ratio": -1}, "test_train_ratio"),
])
def test_bad_parameters_name_the_parameter(kwargs, match):
    kwargs = {"test_train_ratio": 0.1, **kwargs}
    with pytest.raises(InputError, match=match):
        corrected_resampled_t([0.1, 0.2, 0.3], [0.2, 0.2, 0.2], **kwargs)


def test_mcnemar_exact_hand_value():
    # b = 10, c = 2: 2 * P(X >= 10 | n = 12) = 2 * (66 + 12 + 1) / 4096 = 0.0385742
    r = mcnemar_from_counts(10, 2)
    assert r.method.startswith("McNemar exact")
    assert r.pvalue == pytest.approx(158 / 4096, rel=1e-9)


def test_mcnemar_chi_square_hand_value():
    # b = 30, c = 12 (b + c >= 25): (|30 - 12| - 1)^2 / 42 = 289 / 42 = 6.880952
    r = mcnemar_from_counts(30, 12)
    assert r.statistic == pytest.approx(289 / 42)
    assert r.pvalue == pytest.approx(stats.chi2.sf(289 / 42, 1))
    assert mcnemar_from_counts(30, 12, correction=False).statistic == pytest.approx(18 ** 2 / 42)


def test_mcnemar_from_correctness_vectors():
    a = np.array([1] * 10 + [0] * 2 + [1] * 50 + [0] * 8, bool)
    b = np.array([0] * 10 + [1] * 2 + [1] * 50 + [0] * 8, bool)
    assert mcnemar(a, b).pvalue == pytest.approx(mcnemar_from_counts(10, 2).pvalue)
    assert mcnemar(a, a).pvalue == 1.0
    with pytest.raises(InputError, match="two-sided"):
        mcnemar_from_counts(30, 12, exact=False, alternative="greater")


def test_t_test_rows_is_the_scalar_tests_vectorised():
    # MultiTest runs every pair at once through t_test_rows; the scalar tests are the same code
    from algorank.evaluation.stats.pairwise import t_test_rows

    rng = np.random.default_rng(7)
    y = np.full(10, 0.5)
    rows = [rng.normal(0, 0.02, 10), np.zeros(10), np.full(10, 0.05), -np.full(10, 0.05)]
    rows[0] = (y + rows[0]) - y  # exactly the differences the scalar tests see
    scalar = {"paired_t": lambda x, **kw: paired_t(x, y, **kw),
              "corrected_resampled_t": lambda x, **kw: corrected_resampled_t(x, y, test_train_ratio=0.3, **kw),
              "corrected_kfold_t": lambda x, **kw: corrected_repeated_kfold_t(x, y, n_folds=5, **kw),
              "dietterich_5x2cv_t": lambda x, **kw: dietterich_5x2cv_t(x, y, **kw),
              "combined_5x2cv_t": lambda x, **kw: combined_5x2cv_t(x, y, **kw)}
    for test, f in scalar.items():
        for alternative in ("two-sided", "greater", "less"):
            t, p, _ = t_test_rows(np.array(rows), test, alternative=alternative, test_train_ratio=0.3, n_folds=5)
            for i, d in enumerate(rows):
                r = f(y + d, alternative=alternative)
                assert (t[i], p[i]) == (r.statistic, r.pvalue)
            # zero differences: p = 1 whatever the alternative; constant 0.05: p = 0 except against it
            assert p[1] == 1.0 and t[1] == 0.0
            assert p[2] == (1.0 if alternative == "less" else 0.0) and t[2] == math.inf
            assert p[3] == (1.0 if alternative == "greater" else 0.0) and t[3] == -math.inf
