"""Issue 15's smaller findings: (a) monotone Bergmann-Hommel adjusted p-values by default, (c) the
McNemar continuity convention when b == c.  (b), exact ties of the mean rank, is tested in
test_accuracy_only.py and on OPENML-WEKA-2017 in test_aslib.py."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from algorank.evaluation.stats import bergmann_hommel_adjust, mcnemar_from_counts, posthoc, shaffer_adjust

# k = 4, pairs in combinations order (0,1) (0,2) (0,3) (1,2) (1,3) (2,3)
P = np.array([0.326, 0.059, 0.002, 0.376, 0.145, 0.03])


def test_raw_bergmann_hommel_is_not_monotone_by_hand():
    # (0,2), p = .059: exhaustive sets containing it include {(0,1),(0,2),(1,2)} (learners 0,1,2 equal):
    #   3 * min(.326, .059, .376) = .177, the largest -> .177.
    # (1,3), p = .145: its sets give at most .145 ({(1,3)} alone; {(0,2),(1,3)}: 2 * .059 = .118;
    #   {1,2,3}: 3 * .03 = .09; ...) -> .145 < .177 although its raw p is larger.
    raw = bergmann_hommel_adjust(P, 4, monotone=False)
    np.testing.assert_allclose(raw, [0.326, 0.177, 0.012, 0.376, 0.145, 0.09], atol=1e-12)
    # at alpha = 0.15 the raw version rejects (1,3) (p .145) and keeps (0,2) (p .059)
    assert raw[4] <= 0.15 < raw[1]
    mono = bergmann_hommel_adjust(P, 4)
    np.testing.assert_allclose(mono, [0.326, 0.177, 0.012, 0.376, 0.177, 0.09], atol=1e-12)
    assert not (mono[4] <= 0.15 < mono[1])
    # the default of posthoc is the monotone version; monotone=False gives the raw one
    z = stats.norm.isf(P / 2)  # any ranks giving these p-values: feed them as z
    zm = np.zeros((4, 4))
    for (i, j), v in zip([(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)], z):
        zm[i, j], zm[j, i] = -v, v
    ph = posthoc(np.arange(1, 5.0), 10, method="bergmann", z=zm, alpha=0.15)
    assert ph.adjusted[1, 3] == pytest.approx(0.177) and not ph.significant[1, 3]
    raw_ph = posthoc(np.arange(1, 5.0), 10, method="bergmann", z=zm, alpha=0.15, monotone=False)
    assert raw_ph.significant[1, 3] and not raw_ph.significant[0, 2]


@pytest.mark.parametrize("k", [3, 4, 5])
def test_monotone_version_properties(k):
    rng = np.random.default_rng(k)
    m = k * (k - 1) // 2
    for _ in range(100):
        p = np.round(rng.random(m) ** 3, 3)
        raw = bergmann_hommel_adjust(p, k, monotone=False)
        mono = bergmann_hommel_adjust(p, k)
        order = np.argsort(p, kind="stable")
        assert np.all(np.diff(mono[order]) >= -1e-15)  # non-decreasing in the raw p-values
        assert np.all(mono >= raw - 1e-15)  # never rejects more than the raw version
        assert np.all(mono <= shaffer_adjust(p, k) + 1e-15)  # still at least as powerful as Shaffer
        # equal raw p-values get equal adjusted p-values
        for v in np.unique(p):
            assert np.ptp(mono[p == v]) == 0


def test_mcnemar_continuity_convention_when_b_equals_c():
    # ours: max(|b - c| - 1, 0)^2 / (b + c) = 0 -> p = 1 (documented in mcnemar_from_counts)
    for b in (13, 30):
        r = mcnemar_from_counts(b, b, exact=False)
        assert (r.statistic, r.pvalue) == (0.0, 1.0)
    # statsmodels drops the max: (|b - c| - 1)^2 / (b + c) = 1 / (b + c); the two agree when b != c
    contingency = pytest.importorskip("statsmodels.stats.contingency_tables",
                                      reason="statsmodels (test extra) for the comparison")
    sm = contingency.mcnemar([[0, 2], [2, 0]], exact=False, correction=True)
    assert sm.statistic == pytest.approx(0.25) and sm.pvalue == pytest.approx(0.617, abs=5e-4)
    assert mcnemar_from_counts(2, 2, exact=False).pvalue == 1.0
    for b, c in ((20, 9), (5, 31), (14, 15)):
        ours = mcnemar_from_counts(b, c, exact=False)
        ref = contingency.mcnemar([[0, b], [c, 0]], exact=False, correction=True)
        assert ours.statistic == pytest.approx(ref.statistic) and ours.pvalue == pytest.approx(ref.pvalue)
