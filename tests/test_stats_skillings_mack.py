"""Skillings-Mack and Durbin: published worked examples, the exact relations to Friedman and Durbin,
the post hoc z, the automatic choice, and errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from algorank.evaluation.stats import (
    bibd_parameters,
    durbin,
    friedman,
    omnibus,
    omnibus_pairwise_z,
    pairwise_z,
    posthoc,
    rescaled_average_ranks,
    skillings_mack,
)
from algorank.metadata.errors import InputError

NAN = np.nan

# Hollander and Wolfe (1999), from Brady (1969): 8 subjects (blocks), treatments R, A, B; one value missing.
# The example of R's PMCMRplus::skillingsMackTest; its printed result: T = 13.28095, p = 0.001306405.
BRADY = np.array([[3, 5, 15], [1, 3, 18], [5, 4, 21], [2, NAN, 6], [0, 2, 17], [0, 2, 10], [0, 3, 8],
                  [0, 2, 13]], dtype=float)

# Conover (1999, p. 391) ice cream BIBD: 7 judges x 7 varieties, 3 tasted per judge (ranks, 1 = best).
# Printed (R, PMCMRplus::durbinTest): Durbin chi-squared = 12, df = 6, p = 0.06197; F = 8, df (6, 8), p = 0.004904.
ICE = np.array([[2, 3, NAN, 1, NAN, NAN, NAN], [NAN, 3, 1, NAN, 2, NAN, NAN], [NAN, NAN, 2, 1, NAN, 3, NAN],
                [NAN, NAN, NAN, 1, 2, NAN, 3], [3, NAN, NAN, NAN, 1, 2, NAN], [NAN, 3, NAN, NAN, NAN, 1, 2],
                [3, NAN, 1, NAN, NAN, NAN, 2]])

# Skillings and Mack (1981), Table 1: four methods of assembling a product, 9 blocks, 4 values missing
# (the example of R's Skillings.Mack::Ski.Mack; its printed output was not available to check here, so
# this data set is checked against the independent implementation below).
ASSEMBLY = np.array([[3.2, 4.1, 3.8, 4.2], [3.1, 3.9, 3.4, 4.0], [4.3, 3.5, 4.6, 4.8], [3.5, 3.6, 3.9, 4.0],
                     [3.6, 4.2, 3.7, 3.9], [4.5, 4.7, 3.7, NAN], [NAN, 4.2, 3.4, NAN], [4.3, 4.6, 4.4, 4.9],
                     [3.5, NAN, 3.7, 3.9]])


def _sm_reference(y, lower_is_better=True):
    """Independent implementation: loops, and the Moore-Penrose inverse of the whole Sigma."""
    y = np.asarray(y, float)
    n, k = y.shape
    a = np.zeros(k)
    lam = np.zeros((k, k))
    for row in y:
        obs = ~np.isnan(row)
        m = int(obs.sum())
        if m < 2:
            continue
        r = stats.rankdata(row[obs] if lower_is_better else -row[obs])
        a[obs] += math.sqrt(12.0 / (m + 1)) * (r - (m + 1) / 2.0)
        idx = np.flatnonzero(obs)
        for i in idx:
            for j in idx:
                if i != j:
                    lam[i, j] += 1
    sigma = np.diag(lam.sum(axis=1)) - lam
    return float(a @ np.linalg.pinv(sigma) @ a), a, sigma


def test_brady_example_matches_pmcmrplus_printed_values():
    res = skillings_mack(BRADY, lower_is_better=True)
    assert res.statistic == pytest.approx(13.28095, abs=5e-6)
    assert res.pvalue == pytest.approx(0.001306405, abs=5e-10)
    assert res.df == 2 and res.n_datasets == 8 and res.missing_cells == 1 and res.method == "Skillings-Mack"
    # A_j by hand: block 4 has 2 treatments (weight sqrt(12/3) = 2), the others 3 (weight sqrt(3))
    np.testing.assert_allclose(res.adjusted_rank_sums, [-11.39230485, -1.73205081, 13.12435565], atol=1e-8)


def test_five_treatment_example_many_missing():
    # the 5-treatment, 8-block example of tlsfuzzer's test suite (values from R): T = 12.53551, p = 0.01378318
    vals = [3, 5, 15, 4, 1, 3, 5, 4, 21, 5, 2, 6, 0, 2, 17, 0, 2, 10, 0, 3, 5, 0, 2, 13]
    groups = [1, 2, 3, 5, 1, 2, 1, 2, 3, 4, 1, 3, 1, 2, 3, 1, 2, 3, 1, 2, 4, 1, 2, 3]
    blocks = [1, 1, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 5, 5, 5, 6, 6, 6, 7, 7, 7, 8, 8, 8]
    y = np.full((8, 5), NAN)
    for v, g, b in zip(vals, groups, blocks):
        y[b - 1, g - 1] = v
    res = skillings_mack(y, lower_is_better=True)
    assert res.statistic == pytest.approx(12.53551, abs=5e-6)
    assert res.pvalue == pytest.approx(0.01378318, abs=5e-9)
    assert res.df == 4


def test_skillings_mack_1981_table1_against_independent_implementation():
    res = skillings_mack(ASSEMBLY, lower_is_better=True)
    ref, a, sigma = _sm_reference(ASSEMBLY)
    assert res.statistic == pytest.approx(ref, rel=1e-12)
    assert res.statistic == pytest.approx(15.493049, abs=1e-6)  # pinned: our value, reference above
    assert res.pvalue == pytest.approx(stats.chi2.sf(ref, 3), rel=1e-12)
    np.testing.assert_allclose(res.adjusted_rank_sums, a, atol=1e-12)
    np.testing.assert_allclose(res.covariance, sigma, atol=1e-12)
    assert res.missing_cells == 4 and res.design == "incomplete"


def test_durbin_conover_ice_cream_printed_values():
    assert bibd_parameters(~np.isnan(ICE)) == {"b": 7, "k": 7, "m": 3, "r": 3, "lambda": 1}
    d = durbin(ICE, lower_is_better=True)
    assert d.statistic == pytest.approx(12.0, abs=1e-12)
    assert d.pvalue == pytest.approx(0.06197, abs=5e-6)
    assert d.f_statistic == pytest.approx(8.0, abs=1e-12) and d.f_df == (6, 8)
    assert d.f_pvalue == pytest.approx(0.004904, abs=5e-7)
    # no ties in the ranks: Skillings-Mack equals Durbin's T1 exactly (Chatfield and Mander 2009)
    assert skillings_mack(ICE, lower_is_better=True).statistic == pytest.approx(12.0, rel=1e-12)
    assert omnibus(ICE, lower_is_better=True).method.startswith("Durbin")


@pytest.mark.parametrize("seed", range(25))
def test_equals_friedman_without_tie_correction_on_complete_data(seed):
    # exact relation (module docstring): T = chi2_F of the textbook formula, with or without ties
    rng = np.random.default_rng(seed)
    n, k = rng.integers(2, 30), rng.integers(2, 9)
    scores = rng.integers(0, 4, (n, k)).astype(float) if seed % 2 else rng.random((n, k))
    sm = skillings_mack(scores)
    fr = friedman(scores)
    assert sm.statistic == pytest.approx(fr.statistic, rel=1e-10, abs=1e-10)
    assert sm.pvalue == pytest.approx(fr.pvalue, rel=1e-9, abs=1e-12)
    np.testing.assert_allclose(sm.average_ranks, fr.average_ranks, atol=1e-12)
    # and the post hoc z is Friedman's (R_i - R_j) / sqrt(k (k + 1) / (6 N))
    np.testing.assert_allclose(sm.pairwise_z, pairwise_z(fr.average_ranks, n)[0], atol=1e-10)
    assert sm.design == "complete"
    if seed % 2 == 0:  # untied continuous data: scipy's Friedman too
        assert sm.statistic == pytest.approx(stats.friedmanchisquare(*scores.T).statistic, rel=1e-10)


def _random_bibd(rng):
    """A random BIBD from the cyclic (7, 3, 1) or (13, 4, 1) difference sets, permuted."""
    k, base = [(7, (0, 1, 3)), (13, (0, 1, 3, 9))][rng.integers(0, 2)]
    mask = np.zeros((k, k), bool)
    for b in range(k):
        mask[b, [(x + b) % k for x in base]] = True
    mask = mask[rng.permutation(k)][:, rng.permutation(k)]
    return mask


@pytest.mark.parametrize("seed", range(20))
def test_equals_durbin_on_random_bibd(seed):
    rng = np.random.default_rng(100 + seed)
    mask = _random_bibd(rng)
    scores = np.where(mask, rng.random(mask.shape), NAN)
    assert bibd_parameters(mask) is not None
    sm = skillings_mack(scores)
    for tc in (True, False):  # no ties: both Durbin conventions agree
        assert durbin(scores, tie_correction=tc).statistic == pytest.approx(sm.statistic, rel=1e-10)
    # with ties, SM equals Durbin without tie correction
    tied = np.where(mask, rng.integers(0, 2, mask.shape).astype(float), NAN)
    assert durbin(tied, tie_correction=False).statistic == pytest.approx(skillings_mack(tied).statistic,
                                                                       rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("seed", range(30))
def test_random_incomplete_against_reference_and_invariances(seed):
    rng = np.random.default_rng(200 + seed)
    n, k = rng.integers(4, 25), rng.integers(3, 8)
    scores = rng.random((n, k))
    scores[rng.random((n, k)) < 0.3] = NAN
    scores[0] = rng.random(k)  # one complete row keeps the design connected
    res = skillings_mack(scores, lower_is_better=True)
    ref, a, _ = _sm_reference(scores)
    assert res.statistic == pytest.approx(ref, rel=1e-9, abs=1e-10)
    np.testing.assert_allclose(res.adjusted_rank_sums, a, atol=1e-10)
    # A sums to zero; z antisymmetric; permuting rows and columns permutes nothing in T
    assert abs(res.adjusted_rank_sums.sum()) < 1e-9
    np.testing.assert_allclose(res.pairwise_z, -res.pairwise_z.T, atol=1e-12)
    pr, pc = rng.permutation(n), rng.permutation(k)
    perm = skillings_mack(scores[pr][:, pc], lower_is_better=True)
    assert perm.statistic == pytest.approx(res.statistic, rel=1e-9, abs=1e-10)
    np.testing.assert_allclose(perm.pairwise_z, res.pairwise_z[np.ix_(pc, pc)], atol=1e-10)
    # a monotone transformation of the scores changes nothing; flipping the direction flips A
    assert skillings_mack(np.exp(3 * scores), lower_is_better=True).statistic == pytest.approx(res.statistic)
    np.testing.assert_allclose(skillings_mack(scores).adjusted_rank_sums, -res.adjusted_rank_sums, atol=1e-10)


def test_null_calibration_roughly_nominal():
    # under H0 with 30 % random gaps the chi-square reference gives about the nominal rejection rate
    rng = np.random.default_rng(7)
    rejections = 0
    for _ in range(400):
        s = rng.random((30, 5))
        s[rng.random(s.shape) < 0.3] = NAN
        rejections += skillings_mack(s).pvalue <= 0.05
    assert 0.025 <= rejections / 400 <= 0.08


def test_rescaled_average_ranks_by_hand():
    # block 1: 3 present, ranks 1,2,3 -> u = 0, .5, 1; block 2: learners 0 and 2 present, ranks 2, 1 -> u = 1, 0
    ranks = np.array([[1, 2, 3], [2, NAN, 1]])
    np.testing.assert_allclose(rescaled_average_ranks(ranks), [1 + 0.5 * 2, 1 + 0.5 * 2, 1 + 0.5 * 2])
    ranks = np.array([[1, 2, 3], [1, NAN, 2]])
    np.testing.assert_allclose(rescaled_average_ranks(ranks), [1.0, 2.0, 3.0])


def test_omnibus_picks_the_test_and_counts_dropped_rows():
    rng = np.random.default_rng(3)
    complete = rng.random((10, 4))
    assert omnibus(complete).method.startswith("Friedman")
    one = complete.copy()
    one[2, 1] = NAN
    assert omnibus(one).method == "Skillings-Mack"
    single = complete.copy()
    single[5, 1:] = NAN  # only one learner left: no ranking information, dropped
    res = omnibus(single)
    assert res.method.startswith("Friedman") and res.dropped_datasets == 1 and res.n_datasets == 9
    sm = skillings_mack(single)
    assert sm.dropped_datasets == 1 and sm.statistic == pytest.approx(friedman(np.delete(complete, 5, 0)).statistic)


def test_posthoc_on_skillings_mack_z():
    rng = np.random.default_rng(11)
    s = rng.random((40, 5)) + np.array([0.0, 0.1, 0.2, 0.5, 0.6])
    s[rng.random(s.shape) < 0.25] = NAN
    sm = skillings_mack(s)
    ph = posthoc(sm.average_ranks, sm.n_datasets, method="holm", z=omnibus_pairwise_z(sm), labels=list("abcde"))
    np.testing.assert_allclose(ph.z, sm.pairwise_z)
    np.testing.assert_allclose(ph.pvalues[0, 4], 2 * stats.norm.sf(abs(sm.pairwise_z[0, 4])))
    assert ph.critical_difference is None
    # e (best accuracy, most negative A) is better than a
    assert ("e", "a") in ph.significant_pairs()
    nem = posthoc(sm.average_ranks, sm.n_datasets, method="nemenyi", z=sm.pairwise_z)
    assert nem.critical_difference is None and (nem.significant == (nem.adjusted <= 0.05)).all()
    with pytest.raises(InputError, match="antisymmetric"):
        posthoc(sm.average_ranks, sm.n_datasets, z=np.ones((5, 5)))
    with pytest.raises(InputError, match="5 x 5"):
        posthoc(sm.average_ranks, sm.n_datasets, z=np.zeros((4, 4)))


def test_errors_name_the_problem():
    with pytest.raises(InputError, match="disconnected"):
        skillings_mack(np.array([[1, 2, NAN, NAN], [2, 1, NAN, NAN], [NAN, NAN, 1, 2]]))
    with pytest.raises(InputError, match="no dataset shared"):
        skillings_mack(np.array([[1, 2, NAN], [2, 1, NAN], [3, 1, NAN]]), labels=["x", "y", "z"])
    with pytest.raises(InputError, match="at least 2 rows"):
        skillings_mack(np.array([[1, 2, 3], [NAN, NAN, 1]]))
    with pytest.raises(InputError, match="balanced incomplete"):
        durbin(BRADY)
    with pytest.raises(InputError, match="2 columns"):
        skillings_mack(np.ones((3, 1)))


def test_all_tied_gives_p_one():
    s = np.full((5, 3), 0.5)
    s[1, 2] = NAN
    res = skillings_mack(s)
    assert res.statistic == 0.0 and res.pvalue == 1.0
