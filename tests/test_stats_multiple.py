"""Friedman, Iman-Davenport and the post hoc procedures: scipy cross-checks, hand computations,
the paper's Bergmann-Hommel tables, and the combinatorics behind Shaffer and Bergmann-Hommel."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from algorank.evaluation.stats import (
    bell_number,
    bergmann_hommel_adjust,
    critical_difference,
    exhaustive_sets,
    friedman,
    holm_adjust,
    nemenyi_q,
    pairwise_z,
    posthoc,
    shaffer_adjust,
    shaffer_sets,
)
from algorank.metadata.errors import InputError

PAPER_LEARNERS = ["c45", "mdt", "mlp", "lnp", "svl", "sv2", "svr", "5nn"]


# ---------------------------------------------------------------- Friedman
def test_friedman_equals_scipy_without_ties():
    rng = np.random.default_rng(0)
    scores = rng.random((30, 6))
    ours = friedman(scores)
    ref = stats.friedmanchisquare(*scores.T)
    assert ours.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert ours.pvalue == pytest.approx(ref.pvalue, rel=1e-10)
    # with no ties both conventions agree
    assert friedman(scores, tie_correction=True).statistic == pytest.approx(ours.statistic, rel=1e-12)


def test_friedman_with_ties_tie_correction_matches_scipy_and_default_is_textbook():
    rng = np.random.default_rng(1)
    scores = rng.integers(0, 3, (25, 5)).astype(float)
    ref = stats.friedmanchisquare(*scores.T)
    corrected = friedman(scores, tie_correction=True)
    assert corrected.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert corrected.pvalue == pytest.approx(ref.pvalue, rel=1e-10)
    textbook = friedman(scores)  # the textbook formula without the tie correction (Demšar 2006): smaller under ties
    assert textbook.statistic < corrected.statistic


def test_friedman_hand_example_perfect_agreement():
    # N = 2, k = 3, both datasets rank the learners 1, 2, 3:
    # chi2 = 12*2/(3*4) * (1 + 4 + 9 - 3*16/4) = 2 * 2 = 4 = N (k - 1) -> Iman-Davenport infinite
    scores = np.array([[0.9, 0.8, 0.7], [0.6, 0.5, 0.4]])
    r = friedman(scores)
    assert r.statistic == pytest.approx(4.0)
    assert r.pvalue == pytest.approx(math.exp(-2.0))
    np.testing.assert_allclose(r.average_ranks, [1, 2, 3])
    assert r.iman_davenport_statistic == math.inf and r.iman_davenport_pvalue == 0.0
    assert friedman(scores, lower_is_better=True).average_ranks.tolist() == [3, 2, 1]


def test_friedman_iman_davenport_formula():
    rng = np.random.default_rng(5)
    scores = rng.random((12, 4))
    r = friedman(scores)
    n, k = 12, 4
    ff = (n - 1) * r.statistic / (n * (k - 1) - r.statistic)
    assert r.iman_davenport_statistic == pytest.approx(ff)
    assert r.iman_davenport_pvalue == pytest.approx(stats.f.sf(ff, k - 1, (k - 1) * (n - 1)))


def test_friedman_all_ties():
    scores = np.full((6, 4), 0.5)
    for tc in (False, True):
        r = friedman(scores, tie_correction=tc)
        assert r.statistic == 0.0 and r.pvalue == 1.0
        np.testing.assert_allclose(r.average_ranks, 2.5)


def test_friedman_missing_cells_are_never_dropped_silently():
    scores = np.array([[0.9, 0.8, 0.7], [0.6, np.nan, 0.4], [0.5, 0.6, 0.7], [0.3, 0.2, 0.1]])
    with pytest.raises(InputError, match="nan_policy='omit'"):
        friedman(scores)
    r = friedman(scores, nan_policy="omit")
    assert r.dropped_datasets == 1 and r.n_datasets == 3


@pytest.mark.parametrize("bad, match", [(np.ones((1, 3)), "at least 2 complete rows"), (np.ones((5, 1)), "2 columns"),
                                        (np.ones(4), "2-dimensional")])
def test_friedman_bad_shapes(bad, match):
    with pytest.raises(InputError, match=match):
        friedman(bad)


# ---------------------------------------------------------------- critical differences
def test_nemenyi_q_matches_demsar_table():
    table = [1.960, 2.344, 2.569, 2.728, 2.850, 2.948, 3.031, 3.102, 3.164]
    assert [round(nemenyi_q(k, 0.05), 3) for k in range(2, 11)] == table


def test_bonferroni_dunn_q_matches_demsar_table():
    # Demsar (2006), Table 5(b), except k = 9: the printed 2.724 is a typo for Phi^-1(1 - 0.05/16) = 2.734
    table = [1.960, 2.241, 2.394, 2.498, 2.576, 2.638, 2.690, 2.734, 2.773]
    se = lambda k, n: math.sqrt(k * (k + 1) / (6 * n))  # noqa: E731
    got = [round(critical_difference(k, 10, method="bonferroni-dunn") / se(k, 10), 3) for k in range(2, 11)]
    assert got == table


def test_nemenyi_posthoc_significance_is_the_cd_rule():
    ranks = np.array([1.5, 2.4, 3.0, 3.9, 4.2])
    n = 20
    ph = posthoc(ranks, n, method="nemenyi")
    cd = nemenyi_q(5) * math.sqrt(5 * 6 / (6 * n))
    assert ph.critical_difference == pytest.approx(cd)
    np.testing.assert_array_equal(ph.significant, np.abs(ranks[:, None] - ranks[None, :]) > cd)
    # adjusted p-values agree with the CD decision
    iu = np.triu_indices(5, 1)
    np.testing.assert_array_equal(ph.adjusted[iu] <= 0.05, ph.significant[iu])
    assert ph.significant.any() and not ph.significant.all()


# ---------------------------------------------------------------- Shaffer / Bergmann-Hommel combinatorics
def test_shaffer_sets():
    assert shaffer_sets(4) == (0, 1, 2, 3, 6)
    assert shaffer_sets(3) == (0, 1, 3)
    assert shaffer_sets(2) == (0, 1)
    assert max(shaffer_sets(9)) == 36 and 35 not in shaffer_sets(9)  # only C(k, 2) or <= C(k-1, 2)


def test_exhaustive_sets_count_is_bell_minus_one():
    assert [bell_number(k) for k in range(11)] == [1, 1, 2, 5, 15, 52, 203, 877, 4140, 21147, 115975]
    for k in range(2, 10):
        assert exhaustive_sets(k).shape == (bell_number(k) - 1, k * (k - 1) // 2)
    assert len(exhaustive_sets(9)) == 21146
    # every set is distinct and the full set is among them
    s4 = exhaustive_sets(4)
    assert len({row.tobytes() for row in s4}) == 14 and s4.all(axis=1).sum() == 1


# Hand computation, k = 4, pairs in order (01, 02, 03, 12, 13, 23), p = (.010, .020, .030, .040, .005, .500):
# Holm: sorted 13 .005, 01 .010, 02 .020, 03 .030, 12 .040, 23 .500 times 6,5,4,3,2,1
#   = .030, .050, .080, .090, .080 -> running max .090, .500
# Shaffer: S(4) = {0,1,2,3,6}; t_i for m-i+1 = 6,5,4,3,2,1 is 6,3,3,3,2,1
#   = .030, .030, .060, .090, .080 -> .090, .500
# Bergmann-Hommel: the 14 exhaustive sets and |I| * min p_I:
#   {all six} 6*.005=.03; {01,02,12} 3*.01=.03; {01,03,13} 3*.005=.015; {02,03,23} 3*.02=.06;
#   {12,13,23} 3*.005=.015; {01,23} 2*.01=.02; {02,13} 2*.005=.01; {03,12} 2*.03=.06; singletons p.
#   adjusted = max over the sets containing the pair:
#   01: max(.03,.03,.015,.02,.01)=.03   02: max(.03,.03,.06,.01,.02)=.06   03: max(.03,.015,.06,.06,.03)=.06
#   12: max(.03,.03,.015,.06,.04)=.06   13: max(.03,.015,.015,.01,.005)=.03  23: max(.03,.06,.015,.02,.5)=.5
HAND_P = np.array([0.010, 0.020, 0.030, 0.040, 0.005, 0.500])


def test_holm_hand_example():
    np.testing.assert_allclose(holm_adjust(HAND_P), [0.05, 0.08, 0.09, 0.09, 0.03, 0.5])


def test_shaffer_hand_example():
    np.testing.assert_allclose(shaffer_adjust(HAND_P, 4), [0.03, 0.06, 0.09, 0.09, 0.03, 0.5])


def test_bergmann_hommel_hand_example():
    np.testing.assert_allclose(bergmann_hommel_adjust(HAND_P, 4), [0.03, 0.06, 0.06, 0.06, 0.03, 0.5])


@settings(max_examples=60, deadline=None)
@given(st.integers(3, 6), st.data())
def test_bergmann_le_shaffer_le_holm(k, data):
    m = k * (k - 1) // 2
    p = np.array(data.draw(st.lists(st.floats(1e-6, 1.0), min_size=m, max_size=m)))
    h, s, b = holm_adjust(p), shaffer_adjust(p, k), bergmann_hommel_adjust(p, k)
    assert np.all(p <= b + 1e-15) and np.all(b <= s + 1e-12) and np.all(s <= h + 1e-12)


@pytest.mark.parametrize("table, ranks, expected_rows", [
    # Ulas et al. (2012), N = 38: average ranks (a) and Bergmann-Hommel tables (c) of Tables 5, 7 and 8
    ("5", [5.37, 5.45, 4.57, 4.87, 3.05, 5.07, 2.45, 5.18],
     ["00001010", "00001010", "00000010", "00001010", "11010101", "00001010", "11110101", "00001010"]),
    ("7", [3.11, 5.05, 4.37, 3.13, 5.50, 6.24, 6.11, 2.50],
     ["01001110", "10010001", "00000111", "01001110", "10010001", "10110001", "10110001", "01101110"]),
    ("8", [2.50, 2.95, 2.71, 3.68, 5.71, 6.13, 5.32, 7.00],
     ["00001111", "00001111", "00001111", "00001111", "11110000", "11110000", "11110001", "11110010"]),
])
def test_bergmann_hommel_reproduces_paper_tables(table, ranks, expected_rows):
    ph = posthoc(ranks, 38, method="bergmann", labels=PAPER_LEARNERS)
    expected = np.array([[c == "1" for c in row] for row in expected_rows])
    np.testing.assert_array_equal(ph.significant, expected, err_msg=f"Table {table}(c)")
    assert ph.exact and ph.method == "bergmann"


def test_posthoc_pairwise_procedures_use_the_z_pvalues():
    ranks = np.array([1.8, 2.2, 3.1, 3.5, 4.4])
    z, p = pairwise_z(ranks, 24)
    iu = np.triu_indices(5, 1)
    assert z[0, 1] == pytest.approx((1.8 - 2.2) / math.sqrt(5 * 6 / (6 * 24)))
    for method, fn in (("holm", holm_adjust), ("shaffer", lambda v: shaffer_adjust(v, 5)),
                       ("bergmann", lambda v: bergmann_hommel_adjust(v, 5))):
        ph = posthoc(ranks, 24, method=method)
        np.testing.assert_allclose(ph.adjusted[iu], fn(p[iu]))
        np.testing.assert_array_equal(ph.significant[iu], fn(p[iu]) <= 0.05)
        np.testing.assert_allclose(ph.adjusted, ph.adjusted.T)


def test_bergmann_falls_back_to_shaffer_above_ten_and_says_so():
    ranks = np.linspace(1, 12, 12)
    ph = posthoc(ranks, 40, method="bergmann")
    assert ph.method == "shaffer" and ph.requested == "bergmann" and not ph.exact
    assert "Shaffer" in ph.note and "k = 12" in ph.note
    np.testing.assert_array_equal(ph.adjusted, posthoc(ranks, 40, method="shaffer").adjusted)


def test_bonferroni_dunn_against_control():
    ranks = np.array([1.5, 2.5, 3.0, 3.0])
    ph = posthoc(ranks, 30, method="bonferroni-dunn", control=0)
    _, p = pairwise_z(ranks, 30)
    np.testing.assert_allclose(ph.adjusted[0, 1:], np.minimum(1, 3 * p[0, 1:]))
    assert ph.adjusted[1, 2] == 1.0 and not ph.significant[1, 2]  # not tested
    assert ph.control == 0 and ph.critical_difference == pytest.approx(critical_difference(4, 30, method="bonferroni-dunn"))


@pytest.mark.parametrize("kwargs, match", [
    ({"alpha": 0.0}, "alpha"), ({"alpha": 1.5}, "alpha"), ({"method": "tukey"}, "method"),
    ({"n_datasets": 1}, "n_datasets"), ({"average_ranks": [1.0]}, "at least 2"),
    ({"average_ranks": [0.2, 3.0]}, r"\[1, k\]"),
])
def test_posthoc_bad_input(kwargs, match):
    args = {"average_ranks": [1.0, 2.0, 3.0], "n_datasets": 10, **kwargs}
    with pytest.raises(InputError, match=match):
        posthoc(args.pop("average_ranks"), args.pop("n_datasets"), **args)


# ---------------------------------------------------------------- CD diagram groups (algorank.evaluation.stats.cd_plot)
def test_cd_groups_follow_the_significance_matrix():
    from algorank.evaluation.stats.cd_plot import cd_groups

    sig = np.zeros((4, 4), dtype=bool)
    sig[0, 3] = sig[3, 0] = True  # only the extremes differ
    assert cd_groups([1.0, 2.0, 3.0, 4.0], sig) == [(0, 1, 2), (1, 2, 3)]
    assert cd_groups([4.0, 3.0, 2.0, 1.0], np.zeros((4, 4), bool)) == [(3, 2, 1, 0)]
    assert cd_groups([1.0, 2.0], np.array([[False, True], [True, False]])) == []


def test_plot_cd_uses_the_posthoc_actually_used():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from algorank.evaluation.stats.cd_plot import plot_cd

    ph = posthoc(np.linspace(1, 12, 12), 40, method="bergmann", labels=[f"L{i}" for i in range(12)])
    fig, ax = plt.subplots()
    assert plot_cd(ph, ax=ax) is ax
    assert "shaffer" in ax.get_title() and "bergmann fell back" in ax.get_title()
    texts = [t.get_text() for t in ax.texts]
    assert any(t.startswith("L0 (1.00)") for t in texts) and not any(t.startswith("CD =") for t in texts)
    ax2 = plot_cd(posthoc([1.2, 2.0, 2.8], 30, method="nemenyi"))
    assert any(t.get_text().startswith("CD = ") for t in ax2.texts)
    plt.close("all")
