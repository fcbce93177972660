"""Multi2Test's compiled first pass: the same orders as MultiTest's p-value path, Shaffer's sets at scale."""

import numpy as np
import pandas as pd
import pytest
from scipy import special

from algorank.evaluation.stats.multiple import holm_adjust, shaffer_adjust, shaffer_sets
from algorank.metadata.cells import has_duplicate_keys
from algorank.metadata.dataset import MetaDataset
from algorank.metadata.errors import InputError
from algorank.recommender import multitest_fast as fast
from algorank.recommender.multitest import multi2test, multitest

TESTS = ("paired_t", "corrected_resampled_t", "corrected_kfold_t")


def _matrix_order(t, threshold):
    """Reference: MultiTest's counting order straight from the matrix of statistics (learners cheapest
    first; costlier j significantly beats i when ``t[i, j] >= threshold``): repeatedly take the cheapest
    learner not yet taken that no learner still waiting beats."""
    k = t.shape[0]
    left = list(range(k))
    order = []
    while left:
        free = next(i for i in left if not any(t[i, j] >= threshold for j in left if j > i))
        order.append(free)
        left.remove(free)
    return np.array(order)


def _case(rng, trial):
    k = int(rng.integers(2, 30))
    n = int(rng.choice([3, 5, 10]))
    skill = rng.normal(0, rng.choice([0.0, 0.01, 0.05]), k)
    x = (0.7 + skill[:, None] + rng.normal(0, 0.02, (k, n))).round(int(rng.choice([2, 4])))
    if trial % 4 == 0:
        x[1] = x[0]  # equal fold scores: p = 1
    if trial % 5 == 0 and k > 2:
        x[2] = x[0] + 0.01  # a constant difference: t = +-inf
    return x


@pytest.mark.parametrize("seed", range(4))
def test_orders_equal_multitest_on_random_and_degenerate_data(seed):
    rng = np.random.default_rng(seed)
    for trial in range(40):
        x = _case(rng, trial)
        k, n = x.shape
        test = TESTS[trial % 3]
        correction = ("holm", "bonferroni", "none")[(trial // 3) % 3]
        alpha = float(rng.choice([0.01, 0.05, 0.2, 0.6]))
        prior = [int(i) for i in rng.permutation(k)]
        evaluations = [(0, f) for f in range(n)] if test == "corrected_kfold_t" else [(f, 0) for f in range(n)]
        ref = multitest(x, prior, pairwise=test, evaluations=evaluations, correction=correction, alpha=alpha,
                        test_train_ratio=0.25 if test == "corrected_resampled_t" else None, reasons=False)
        got = fast.multitest_order(x[prior], test=test, n_folds=n, test_train_ratio=0.25, correction=correction,
                                   alpha=alpha)
        assert tuple(str(prior[i]) for i in got) == ref.order, (seed, trial, test, correction, alpha)


def test_statistics_are_the_pairwise_t_tests():
    rng = np.random.default_rng(7)
    x = rng.normal(0.7, 0.05, (6, 8))
    x[3] = x[1]
    t = fast._statistics(x, 1 / 8)[0]
    for i in range(6):
        for j in range(i + 1, 6):
            d = x[j] - x[i]
            if np.ptp(d) == 0:
                assert t[i, j] == -np.inf  # all differences 0: p = 1
            else:
                assert t[i, j] == pytest.approx(d.mean() / np.sqrt(d.var(ddof=1) / 8), rel=1e-10)
    assert np.all(np.isneginf(t[np.tril_indices(6)]))


@pytest.mark.skipif(not fast.HAVE_NUMBA, reason="Numba not installed")
def test_compiled_passes_equal_plain_python():
    rng = np.random.default_rng(3)
    x = rng.normal(0.7, 0.05, (25, 10)).round(3)
    x[4] = x[2] + 0.02
    t_py = fast._statistics(x, 0.2)[0]
    t_nb = fast._compiled(fast._statistics)(x, 0.2)[0]
    np.testing.assert_array_equal(t_py, t_nb)
    for floor in (-np.inf, 0.0, 1.5):  # the pairs kept for the correction: those at or above the floor, row by row
        _, i, j, v = fast._compiled(fast._statistics)(x, 0.2, floor, False)
        keep = np.triu(t_py >= floor, 1)
        np.testing.assert_array_equal(i, np.nonzero(keep)[0])
        np.testing.assert_array_equal(j, np.nonzero(keep)[1])
        np.testing.assert_array_equal(v, t_py[keep])
        assert i.tolist() == fast._statistics(x, 0.2, floor, False)[1].tolist()
        for level in (1.5, 4.0):
            if level >= floor:  # the order from the kept pairs is the matrix's order
                np.testing.assert_array_equal(fast._compiled(fast._order_of)(25, i, j, v, level),
                                              _matrix_order(t_py, level))
                np.testing.assert_array_equal(fast._order_of(25, i, j, v, level), _matrix_order(t_py, level))
    iu = np.triu_indices(25, 1)
    for level in (1.5, 4.0):
        counts = fast._compiled(fast._count)(t_nb, 1.0, level)
        assert counts == fast._count(t_py, 1.0, level)
        assert counts == (int((t_py[iu] >= 1.0).sum()), int((t_py[iu] >= level).sum()))  # by hand
        band = fast._compiled(fast._band)(t_nb, 1.0, level, counts[0] - counts[1])
        np.testing.assert_array_equal(band, fast._band(t_py, 1.0, level, counts[0] - counts[1]))
        np.testing.assert_array_equal(band, t_py[iu][(t_py[iu] >= 1.0) & (t_py[iu] < level)])  # row by row


@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.3])
def test_holm_threshold_rejects_what_holm_adjust_rejects(alpha):
    rng = np.random.default_rng(11)
    k, df = 40, 9
    t = np.full((k, k), -np.inf)
    iu = np.triu_indices(k, 1)
    t[iu] = rng.normal(3.0, 3.0, iu[0].size)
    t[0, 5] = np.inf
    threshold = fast._holm_threshold(t, alpha, df)
    p = special.stdtr(df, -t[iu])
    assert np.array_equal(t[iu] >= threshold, holm_adjust(p) <= alpha)


def test_order_is_cheapest_free_first():
    # the paper's Table 3: prior A < B < C < D; B beats A and C, D beats C -> B, A, D, C
    t = np.full((4, 4), -np.inf)
    t[0, 1] = t[2, 3] = 10.0  # B over A, D over C (the costlier one is significantly better)
    assert _matrix_order(t, 5.0).tolist() == [1, 0, 3, 2]
    i, j = np.nonzero(np.isfinite(t))
    assert fast._order_of(4, i, j, t[i, j], 5.0).tolist() == [1, 0, 3, 2]


def test_shaffer_sets_match_the_recursive_definition():
    memo = {0: {0}, 1: {0}}

    def reference(k):
        if k not in memo:
            memo[k] = {j * (j - 1) // 2 + x for j in range(1, k + 1) for x in reference(k - j)}
        return memo[k]

    for k in range(30):
        assert shaffer_sets(k) == tuple(sorted(reference(k)))
    assert shaffer_sets(4) == (0, 1, 2, 3, 6)


def test_shaffer_at_a_thousand_learners():
    s = shaffer_sets(1000)  # was a RecursionError
    # C(1000, 2); C(999, 2) (one learner differs); C(998, 2) + C(2, 2) (998 + 2)
    assert s[-3:] == (497504, 498501, 499500)
    m = 1000 * 999 // 2
    p = np.linspace(1e-9, 1.0, m)
    adj = shaffer_adjust(p, 1000)
    assert adj[0] == pytest.approx(m * 1e-9)  # first step: all m hypotheses may be true
    assert adj[1] == pytest.approx(498501 * p[1])  # then at most C(999, 2)
    assert np.all(adj >= p) and np.all(adj <= 1.0)


def _fold_meta(n_datasets, k, folds, seed=0):
    rng = np.random.default_rng(seed)
    skill = rng.normal(0, 0.03, k)
    rows = []
    for d in range(n_datasets):
        base = rng.uniform(0.6, 0.9)
        for j in range(k):
            if j and rng.random() < 0.1:
                continue
            cell = base + skill[j] + rng.normal(0, 0.02)
            for f in range(folds):
                rows.append((f"d{d}", f"L{j:03d}", 0, f, round(cell + rng.normal(0, 0.01), 4),
                             10 ** rng.normal(0, 1)))
    runs = pd.DataFrame(rows, columns=["dataset", "learner", "repeat", "fold", "accuracy", "fit_time"])
    runs["status"] = "ok"
    return MetaDataset(runs)


def test_multi2test_threads_do_not_change_the_result():
    meta = _fold_meta(12, 15, 5, seed=2)
    one = multi2test(meta, n_jobs=1)
    three = multi2test(meta, n_jobs=3)
    assert one.order == three.order
    pd.testing.assert_frame_equal(one.ranks, three.ranks)
    with pytest.raises(InputError, match="n_jobs"):
        multi2test(meta, n_jobs=0)


def test_multi2test_with_hundreds_of_learners_uses_shaffer():
    meta = _fold_meta(4, 120, 3, seed=5)
    res = multi2test(meta, posthoc_method="shaffer")
    assert len(res.order) == 120 and sorted(res.order) == sorted(res.labels)


def test_duplicate_keys_on_sorted_and_unsorted_tables():
    a = np.array([0, 0, 1, 1, 2])
    b = np.array([0, 1, 0, 1, 0])
    c = np.array([0, 0, 0, 0, 0])
    assert not has_duplicate_keys(a, b, c)  # written in key order
    assert not has_duplicate_keys(a[::-1], b[::-1], c[::-1])
    assert has_duplicate_keys(np.r_[a, 1], np.r_[b, 1], np.r_[c, 0])  # a repeat at the end: unsorted
    assert has_duplicate_keys(np.r_[a[:4], 1, 2], np.r_[b[:4], 1, 0], np.r_[c[:4], 0, 0])  # sorted, not strictly


def test_row_sort_equals_lexsort():
    from algorank.recommender.multitest_pairs import sort_rows as _sort_rows

    rng = np.random.default_rng(4)
    d, rep, fold = rng.integers(0, 50, 5000), rng.integers(0, 3, 5000), rng.integers(0, 10, 5000)
    np.testing.assert_array_equal(_sort_rows(d, rep, fold), np.lexsort((fold, rep, d)))
    neg = fold - 5  # negative values: lexsort itself
    np.testing.assert_array_equal(_sort_rows(d, rep, neg), np.lexsort((neg, rep, d)))
