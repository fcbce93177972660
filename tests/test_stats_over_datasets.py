"""Wilcoxon signed-rank and sign test over datasets: cross-checks against scipy, edge cases."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from algorank.evaluation.stats import sign_test, wilcoxon_exact_distribution, wilcoxon_signed_rank
from algorank.metadata.errors import InputError

ALTS = ["two-sided", "less", "greater"]
ZEROS = ["pratt", "wilcox", "zsplit"]


@pytest.mark.parametrize("alternative", ALTS)
@pytest.mark.parametrize("zero_method", ZEROS)
def test_wilcoxon_exact_matches_scipy_without_ties(alternative, zero_method):
    rng = np.random.default_rng(7)
    x, y = rng.normal(size=25), rng.normal(size=25) + 0.4
    ours = wilcoxon_signed_rank(x, y, alternative=alternative, zero_method=zero_method)
    ref = stats.wilcoxon(x, y, alternative=alternative, zero_method=zero_method, method="exact")
    assert ours.statistic == ref.statistic
    assert ours.pvalue == pytest.approx(ref.pvalue, rel=1e-10)


def _brute_force_pvalue(d, alternative, zero_method):
    """Enumerate all 2^n sign patterns of the non-zero differences (independent of our DP)."""
    d = np.asarray(d, float)
    dd = d[d != 0] if zero_method == "wilcox" else d
    ranks = stats.rankdata(np.abs(dd))
    nz = dd != 0
    const = ranks[dd == 0].sum() / 2 if zero_method == "zsplit" else 0.0
    obs = ranks[dd > 0].sum() + const
    r = ranks[nz]
    signs = (np.arange(2 ** r.size)[:, None] >> np.arange(r.size)) & 1
    null = signs @ r + const
    le, ge = np.mean(null <= obs + 1e-9), np.mean(null >= obs - 1e-9)
    return {"less": le, "greater": ge, "two-sided": min(1.0, 2 * min(le, ge))}[alternative]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(-3, 3), min_size=2, max_size=10), st.sampled_from(ALTS), st.sampled_from(ZEROS))
def test_wilcoxon_exact_with_ties_and_zeros_matches_enumeration(diffs, alternative, zero_method):
    d = np.array(diffs, dtype=float)
    if not np.any(d):
        return
    ours = wilcoxon_signed_rank(d, np.zeros_like(d), alternative=alternative, zero_method=zero_method)
    assert ours.pvalue == pytest.approx(_brute_force_pvalue(d, alternative, zero_method), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("diffs", [[1, 1, 2, -1, 3, 0, 2], [0, 0, -2, 2, 3, 3, 3, -1], [2, -2, 1, 1, 1]])
@pytest.mark.parametrize("zero_method", ZEROS)
def test_wilcoxon_with_ties_and_zeros_matches_scipy_permutation(diffs, zero_method):
    # n <= 13 with ties/zeros: scipy enumerates every sign pattern, as our subset-sum count does.
    d = np.array(diffs, dtype=float)
    for alternative in ALTS:
        ours = wilcoxon_signed_rank(d, np.zeros_like(d), alternative=alternative, zero_method=zero_method)
        ref = stats.wilcoxon(d, alternative=alternative, zero_method=zero_method)
        assert ours.statistic == pytest.approx(ref.statistic)
        assert ours.pvalue == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("alternative", ALTS)
@pytest.mark.parametrize("zero_method", ZEROS)
@pytest.mark.parametrize("correction", [False, True])
def test_wilcoxon_asymptotic_matches_scipy(alternative, zero_method, correction):
    rng = np.random.default_rng(11)
    x = rng.integers(0, 6, 90).astype(float)
    y = rng.integers(0, 6, 90).astype(float)  # many ties and zeros
    ours = wilcoxon_signed_rank(x, y, alternative=alternative, zero_method=zero_method, correction=correction,
                                method="asymptotic")
    ref = stats.wilcoxon(x, y, alternative=alternative, zero_method=zero_method, correction=correction,
                         method="asymptotic")
    assert ours.statistic == pytest.approx(ref.statistic)
    assert ours.pvalue == pytest.approx(ref.pvalue, rel=1e-10)


def test_wilcoxon_exact_distribution_small_case():
    # ranks 1, 2, 3: R+ in {0, 1, 2, 3, 3, 4, 5, 6} -> P(R+ = 3) = 2/8
    pmf = wilcoxon_exact_distribution([2, 4, 6])
    assert pmf.sum() == pytest.approx(1.0)
    assert pmf[6] == pytest.approx(2 / 8)
    assert pmf[0] == pytest.approx(1 / 8)


def test_wilcoxon_all_zero_differences():
    x = np.array([0.8, 0.7, 0.9, 0.6])
    r = wilcoxon_signed_rank(x, x)
    assert r.pvalue == 1.0 and r.statistic == 0.0 and "zero" in r.note


def test_wilcoxon_bad_zero_method():
    with pytest.raises(InputError, match="zero_method"):
        wilcoxon_signed_rank([1, 2], [2, 1], zero_method="drop")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=1, max_size=40), st.sampled_from(ALTS))
def test_sign_test_matches_binomtest(pairs, alternative):
    x = np.array([a for a, _ in pairs], float)
    y = np.array([b for _, b in pairs], float)
    r = sign_test(x, y, alternative=alternative, ties="drop")
    wins, losses = int((x > y).sum()), int((x < y).sum())
    if wins + losses == 0:
        assert r.pvalue == 1.0
        return
    assert r.statistic == wins
    assert r.pvalue == pytest.approx(stats.binomtest(wins, wins + losses, 0.5, alternative=alternative).pvalue)


def test_sign_test_demsar_tie_split():
    # 7 wins, 2 losses, 3 ties -> split: one tie each way, the odd one ignored: 8 of 11
    x = np.array([1] * 7 + [0] * 2 + [5] * 3, float)
    y = np.array([0] * 7 + [1] * 2 + [5] * 3, float)
    r = sign_test(x, y)
    assert (r.statistic, r.n) == (8, 11)
    assert r.pvalue == pytest.approx(stats.binomtest(8, 11, 0.5).pvalue)
    assert sign_test(x, x).pvalue == 1.0
