"""Control versus all: Holm, Hochberg and Bonferroni against statsmodels' multipletests on 60 random
p-value sets, Finner by hand (statsmodels has no Finner), and a hand-computed control comparison."""

from __future__ import annotations

import math
from unittest import mock

import numpy as np
import pytest
from scipy import stats

from algorank.evaluation.stats import friedman, skillings_mack
from algorank.evaluation.stats.control import (
    bonferroni_adjust,
    control_vs_all,
    finner_adjust,
    hochberg_adjust,
)
from algorank.evaluation.stats.multiple import critical_difference, holm_adjust
from algorank.metadata.errors import InputError

_statsmodels = pytest.importorskip("statsmodels.stats.multitest",
                                   reason="statsmodels (test extra) is needed for the cross-checks")


def multipletests(p, *, method):
    """statsmodels' ``multipletests`` without the full garbage collection it runs on every Holm call (a tenth of a
    second in a test process holding the whole suite); the values are the same."""
    with mock.patch("gc.collect"):
        return _statsmodels.multipletests(p, method=method)


SEEDS = range(60)


def _pvalues(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 15))
    p = rng.random(m) ** rng.uniform(1, 4)
    if seed % 4 == 0:
        p = np.round(p, 2)  # ties
    return p


@pytest.mark.parametrize("seed", SEEDS)
def test_against_statsmodels(seed):
    p = _pvalues(seed)
    np.testing.assert_allclose(holm_adjust(p), multipletests(p, method="holm")[1], atol=1e-14)
    np.testing.assert_allclose(hochberg_adjust(p), multipletests(p, method="simes-hochberg")[1], atol=1e-14)
    np.testing.assert_allclose(bonferroni_adjust(p), multipletests(p, method="bonferroni")[1], atol=1e-14)


def _finner_by_bisection(p):
    """Adjusted p-values from Finner's (1993) step-down *rule*, independent of the closed form: the
    smallest alpha at which H_(i) is rejected, where the rule rejects H_(1), ..., H_(s) for the first
    s with p_(s+1) > 1 - (1 - alpha)^((s+1)/m).  Found by bisection on alpha."""
    m = len(p)
    srt = np.sort(p)

    def rejected(alpha):
        s = 0
        while s < m and srt[s] <= 1 - (1 - alpha) ** ((s + 1) / m):
            s += 1
        return s

    out = np.empty(m)
    order = np.argsort(p, kind="stable")
    for rank, i in enumerate(order, start=1):
        lo, hi = 0.0, 1.0
        if rejected(hi) < rank:
            out[i] = 1.0
            continue
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if rejected(mid) >= rank else (mid, hi)
        out[i] = hi
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_finner_against_its_step_down_rule_and_power_ordering(seed):
    p = _pvalues(seed)
    fin = finner_adjust(p)
    np.testing.assert_allclose(fin, _finner_by_bisection(p), atol=1e-12)
    # power ordering: Finner <= Holm <= Bonferroni, Hochberg <= Holm
    assert (fin <= holm_adjust(p) + 1e-15).all()
    assert (holm_adjust(p) <= bonferroni_adjust(p) + 1e-15).all()
    assert (hochberg_adjust(p) <= holm_adjust(p) + 1e-15).all()


def test_hand_example_garcia_style():
    # k = 4, N = 20, average ranks 1.5 (control), 2.3, 2.9, 3.3: SE = sqrt(4 * 5 / 120) = 0.40825
    r = np.array([1.5, 2.3, 2.9, 3.3])
    se = math.sqrt(4 * 5 / 120)
    z = (r[1:] - 1.5) / se
    p = 2 * stats.norm.sf(np.abs(z))
    for method, adj in (("holm", holm_adjust(p)), ("hochberg", hochberg_adjust(p)), ("finner", finner_adjust(p)),
                        ("bonferroni-dunn", np.minimum(1, 3 * p))):
        res = control_vs_all(r, 20, control=0, method=method, labels=["new", "b", "c", "d"])
        np.testing.assert_allclose(res.pvalues, [5.00435212e-02, 6.05172263e-04, 1.03809938e-05], rtol=1e-8)
        np.testing.assert_allclose(res.z, z)
        np.testing.assert_allclose(res.pvalues, p)
        np.testing.assert_allclose(res.adjusted, adj)
        assert res.control == "new" and res.labels == ("b", "c", "d")
    # z = 1.960, 3.429, 4.409 -> p = .05004, .000605, .0000104 (b, c, d); Holm: .05004, .00121, .0000311
    # -> c and d significantly worse than the control, b not (.05004 > .05)
    holm = control_vs_all(r, 20, control="new", method="holm", labels=["new", "b", "c", "d"])
    assert holm.worse_than_control() == ["c", "d"] and holm.better_than_control() == []
    # Bonferroni-Dunn decides like its critical difference
    bd = control_vs_all(r, 20, control=0, method="bonferroni-dunn")
    cd = critical_difference(4, 20, method="bonferroni-dunn")
    assert bd.critical_difference == pytest.approx(cd)
    assert bd.significant.tolist() == (np.abs(r[1:] - r[0]) > cd).tolist()
    d = holm.to_dict()
    assert [c["learner"] for c in d["comparisons"]] == ["b", "c", "d"] and d["control"] == "new"


def test_control_with_skillings_mack_z():
    rng = np.random.default_rng(4)
    s = rng.random((30, 4)) + np.array([0.3, 0.0, 0.1, 0.2])
    s[rng.random(s.shape) < 0.2] = np.nan
    sm = skillings_mack(s)
    res = control_vs_all(sm.average_ranks, sm.n_datasets, control=0, z=sm.pairwise_z, method="finner")
    np.testing.assert_allclose(res.z, sm.pairwise_z[1:, 0])
    assert res.critical_difference is None and "incomplete" in res.note
    # on complete data the given z equal Friedman's: same result
    full = rng.random((15, 4))
    fr, smf = friedman(full), skillings_mack(full)
    a = control_vs_all(fr.average_ranks, 15, control=2, method="hochberg")
    b = control_vs_all(smf.average_ranks, 15, control=2, method="hochberg", z=smf.pairwise_z)
    np.testing.assert_allclose(a.adjusted, b.adjusted, atol=1e-12)


def test_bad_input():
    with pytest.raises(InputError, match="control"):
        control_vs_all([1, 2, 3], 10, control="nope")
    with pytest.raises(InputError, match="method"):
        control_vs_all([1, 2, 3], 10, control=0, method="sidak")
    with pytest.raises(InputError, match="pvalues"):
        hochberg_adjust([0.5, 1.5])
