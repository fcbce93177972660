"""MultiTest and Multi2Test: the paper's worked examples, Section 4.6's synthetic experiment
(reduced), invariants of the ordering, and behaviour on (sparse) meta-data."""

from __future__ import annotations

import collections

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from algorank.evaluation.stats import (
    combined_5x2cv_t,
    corrected_repeated_kfold_t,
    corrected_resampled_t,
    dietterich_5x2cv_t,
    paired_t,
    posthoc,
)
from algorank.metadata.dataset import MetaDataset
from algorank.metadata.errors import InputError
from algorank.recommender.base import OrderPolicy
from algorank.recommender.multitest_strategies import Multi2Test, MultiTest
from algorank.recommender.multitest import (
    LCDB_TEST_TRAIN_RATIO,
    multi2test,
    multitest,
    multitest_on_meta,
    order_from_significance,
)

PAPER = ["c45", "mdt", "mlp", "lnp", "svl", "sv2", "svr", "5nn"]
# Table 1 (optdigits): entry 1 = the row learner is significantly more accurate than the column learner.
TABLE1 = np.array([
    [0, 0, 0, 0, 0, 0, 0, 0],
    [1, 0, 0, 0, 0, 0, 0, 0],
    [1, 1, 0, 1, 0, 0, 0, 0],
    [1, 0, 0, 0, 0, 0, 0, 0],
    [1, 1, 1, 1, 0, 0, 0, 1],
    [1, 1, 1, 1, 0, 0, 0, 1],
    [1, 1, 1, 1, 0, 0, 0, 1],
    [1, 1, 0, 1, 0, 0, 0, 0],
], dtype=bool)
# A training-time prior consistent with Fig. 1 (5nn fastest, mdt slowest) and every step of the
# Fig. 2 walk-through: (a) svr < svl < sv2 < mdt, (d) 5nn < mlp < mdt, (f) lnp < mdt.
OPTDIGITS_PRIOR = ["5nn", "c45", "lnp", "mlp", "svr", "svl", "sv2", "mdt"]


def test_optdigits_table1_gives_the_papers_order():
    order = order_from_significance(TABLE1, OPTDIGITS_PRIOR, labels=PAPER)
    assert order == ["svr", "svl", "sv2", "5nn", "mlp", "lnp", "mdt", "c45"]


def test_table3_example_gives_b_a_d_c():
    better = np.zeros((4, 4), dtype=bool)
    better[1, 0] = better[1, 2] = better[3, 2] = True  # B beats A and C, D beats C (Table 3)
    assert order_from_significance(better, ["A", "B", "C", "D"], labels=list("ABCD")) == ["B", "A", "D", "C"]
    assert order_from_significance(better, [0, 1, 2, 3]) == [1, 0, 3, 2]


@pytest.mark.parametrize("ranks, prior, expected", [
    # Multi2Test second pass of Sections 4.5.1 and 4.5.2: post hoc (Bergmann-Hommel, N = 38) on the
    # average ranks of Tables 7(a) / 8(a) plus the average-cost prior gives the paper's final rankings.
    ([3.11, 5.05, 4.37, 3.13, 5.50, 6.24, 6.11, 2.50], ["5nn", "c45", "lnp", "mlp", "mdt", "svl", "sv2", "svr"],
     ["5nn", "c45", "lnp", "mlp", "mdt", "svl", "sv2", "svr"]),
    ([2.50, 2.95, 2.71, 3.68, 5.71, 6.13, 5.32, 7.00], ["c45", "mdt", "mlp", "lnp", "svl", "svr", "sv2", "5nn"],
     ["c45", "mdt", "mlp", "lnp", "svl", "svr", "sv2", "5nn"]),
])
def test_multi2test_second_pass_reproduces_tables_7_and_8(ranks, prior, expected):
    ph = posthoc(ranks, 38, method="bergmann", labels=PAPER)
    r = np.array(ranks)
    better = ph.significant & (r[:, None] < r[None, :])
    assert order_from_significance(better, prior, labels=PAPER) == expected


@settings(max_examples=80, deadline=None)
@given(st.integers(2, 8), st.data())
def test_ordering_invariants(k, data):
    better = np.array(data.draw(st.lists(st.lists(st.booleans(), min_size=k, max_size=k), min_size=k, max_size=k)))
    np.fill_diagonal(better, False)
    prior = data.draw(st.permutations(list(range(k))))
    order = order_from_significance(better, prior)
    assert sorted(order) == list(range(k))
    pos = {l: i for i, l in enumerate(order)}
    ppos = {l: i for i, l in enumerate(prior)}
    for i in range(k):
        for j in range(k):
            if ppos[i] < ppos[j] and better[j, i]:  # edge i -> j: the costlier, better j comes first
                assert pos[j] < pos[i]
    if not better.any():
        assert order == list(prior)
    # every adjacent pair is explained by a significant test or by the cost prior
    for a, b in zip(order, order[1:]):
        assert better[a, b] or ppos[a] < ppos[b]


def test_reasons_say_test_or_cost():
    scores = np.array([[0.70, 0.71, 0.69, 0.70, 0.72, 0.70], [0.90, 0.91, 0.89, 0.92, 0.90, 0.91],
                       [0.70, 0.69, 0.71, 0.70, 0.70, 0.71]])
    res = multitest(scores, ["a", "b", "c"], labels=["a", "b", "c"], pairwise="corrected_resampled_t",
                    test_train_ratio=0.2)
    assert res.order == ("b", "a", "c")
    assert [r["reason"] for r in res.reasons] == ["significant", "cost"]
    # only "costlier beats cheaper" is tested (one-sided): b vs a is, b vs c (c costlier) is not
    assert res.better[1, 0] and not res.better[1, 2] and not res.better[2, 0]
    assert np.isnan(res.pvalues[1, 2]) and res.pvalues[1, 0] < 0.05


def _pairwise_reference(test, x, y, **kw):
    fn = {"corrected_resampled_t": corrected_resampled_t, "combined_5x2cv_t": combined_5x2cv_t,
          "dietterich_5x2cv_t": dietterich_5x2cv_t, "paired_t": paired_t,
          "corrected_kfold_t": corrected_repeated_kfold_t}[test]
    return fn(x, y, alternative="greater", **kw).pvalue


@pytest.mark.parametrize("test, n, kw, mt_kw", [
    ("corrected_resampled_t", 25, {"test_train_ratio": 0.3}, {"test_train_ratio": 0.3}),
    ("combined_5x2cv_t", 10, {}, {}),
    ("dietterich_5x2cv_t", 10, {}, {}),
    ("paired_t", 12, {}, {}),
    ("corrected_kfold_t", 20, {"n_folds": 10}, {}),
])
def test_multitest_pvalues_equal_the_scalar_tests(test, n, kw, mt_kw):
    rng = np.random.default_rng(42)
    scores = 0.8 + 0.03 * rng.standard_normal((4, n)) + np.array([0.0, 0.01, 0.02, -0.01])[:, None]
    evaluations = [(r, f) for r in range(n // 10 if test == "corrected_kfold_t" else n) for f in
                   (range(10) if test == "corrected_kfold_t" else [0])]
    if test in ("combined_5x2cv_t", "dietterich_5x2cv_t"):
        evaluations = None
    res = multitest(scores, [0, 1, 2, 3], pairwise=test, evaluations=evaluations, correction="none", **mt_kw)
    for i in range(4):
        for j in range(i + 1, 4):  # j costlier: H0 score_j <= score_i
            assert res.pvalues[j, i] == pytest.approx(_pairwise_reference(test, scores[j], scores[i], **kw), rel=1e-9)


def _section_4_6(lam: float, trials: int, seed: int) -> collections.Counter:
    """Ulas et al. Section 4.6: errors 0.5 + 2L, 0.5, 0.5 - 2L; each of the 10 folds of a 5x2 cv
    is an error rate from N = 100 uniform draws; MultiTest with the combined 5x2 cv t test."""
    rng = np.random.default_rng(seed)
    p = np.array([0.5 + 2 * lam, 0.5, 0.5 - 2 * lam])
    counts = collections.Counter()
    for _ in range(trials):
        errors = (rng.random((3, 10, 100)) < p[:, None, None]).mean(axis=2)
        res = multitest(errors, [0, 1, 2], labels=["1", "2", "3"], pairwise="combined_5x2cv_t",
                        higher_is_better=False)
        counts["-".join(res.order)] += 1
    return counts


def test_section_4_6_synthetic_reduced():
    equal = _section_4_6(0.0, 200, seed=0)
    assert equal["1-2-3"] / 200 >= 0.85
    apart = _section_4_6(0.1, 200, seed=1)
    assert apart["3-2-1"] / 200 >= 0.95


def test_multitest_refuses_f_test_and_wrong_folds():
    scores = np.random.default_rng(0).random((3, 25))
    with pytest.raises(InputError, match="two-sided only"):
        multitest(scores, [0, 1, 2], pairwise="combined_5x2cv_f")
    with pytest.raises(InputError, match="5x2 cv folds"):
        multitest(scores, [0, 1, 2], pairwise="combined_5x2cv_t")
    with pytest.raises(InputError, match="alpha"):
        multitest(scores, [0, 1, 2], alpha=1.0)
    with pytest.raises(InputError, match="at least 2 learners"):
        multitest(scores[:1], [0])
    with pytest.raises(InputError, match="permutation"):
        multitest(scores, [0, 1, 1])


# ---------------------------------------------------------------- meta-data
def _meta(n_datasets=8, missing=None, five_by_two=True, seed=0):
    """Synthetic meta-data: learner 'slow' is clearly best, 'fast' cheapest; 5x2 folds."""
    rng = np.random.default_rng(seed)
    learners = {"fast": (0.70, 0.01), "mid": (0.72, 0.1), "slow": (0.90, 1.0), "other": (0.71, 0.5)}
    evs = [(r, f) for r in range(5) for f in range(2)] if five_by_two else [(r, 0) for r in range(25)]
    rows = []
    for d in range(n_datasets):
        for name, (acc, t) in learners.items():
            if missing and (f"d{d}", name) in missing:
                continue
            for r, f in evs:
                rows.append({"dataset": f"d{d}", "learner": name, "repeat": r, "fold": f,
                             "accuracy": float(np.clip(acc + 0.01 * rng.standard_normal(), 0, 1)),
                             "fit_time": t * (1 + 0.05 * rng.random())})
    return MetaDataset(pd.DataFrame(rows))


def test_multi2test_on_meta_with_missing_cells_reports_dropped():
    meta = _meta(missing={("d3", "mid"), ("d5", "slow")})
    res = multi2test(meta, posthoc_method="holm", missing="drop")
    assert res.omnibus_method.startswith("Friedman")
    assert res.friedman.n_datasets == 6
    assert dict(res.dropped).keys() == {"d3", "d5"}
    assert "mid" in dict(res.dropped)["d3"]
    assert any("2 of 8 datasets dropped" in n for n in res.notes)
    assert res.pairwise_tests == ("combined 5x2 cv t (5 df)",)
    # first pass: 'slow' wins everywhere, 'mid' (0.72) beats 'fast' (0.70) on most datasets.
    # second pass (N = 6, Holm): slow is significantly better than fast and other only, so with the
    # prior fast < mid < other < slow: mid (free, cheapest), slow (blocks fast, other), fast, other.
    assert res.prior_order == ("fast", "mid", "other", "slow")
    assert set(res.significant_pairs()) == {("slow", "fast"), ("slow", "other")}
    assert res.order == ("mid", "slow", "fast", "other")
    assert [r["reason"] for r in res.reasons] == ["cost", "significant", "cost"]
    d = res.to_dict()
    assert {"order", "average_ranks", "friedman", "significant_pairs", "reasons"} <= d.keys()
    assert d["n_dropped"] == 2 and d["friedman"]["statistic"] == pytest.approx(res.friedman.statistic)


def test_multi2test_user_cost_order_and_no_rejection():
    meta = _meta(n_datasets=3)
    res = multi2test(meta, learners=["fast", "mid"], cost="mid,fast", posthoc_method="nemenyi")
    # on 3 datasets a Friedman test of 2 learners cannot reach 0.05 unless ranks all agree: ranks
    # either agree (p = 0.083) or not -> never rejects -> order = the user's cost order
    assert res.friedman.pvalue > 0.05 and res.posthoc is None
    assert res.order == ("mid", "fast") and res.prior_order == ("mid", "fast")
    assert any("did not reject" in n for n in res.notes)


def test_multi2test_input_errors():
    meta = _meta(n_datasets=3)
    with pytest.raises(InputError, match="alpha"):
        multi2test(meta, alpha=0)
    with pytest.raises(InputError, match="at least 2"):
        multi2test(meta, learners=["fast"])
    with pytest.raises(InputError, match="unknown learner"):
        multi2test(meta, learners=["fast", "nope"])
    with pytest.raises(InputError, match="at least 2 datasets"):
        multi2test(_meta(n_datasets=1))
    with pytest.raises(InputError, match="5x2 cv folds"):
        multi2test(_meta(n_datasets=3, five_by_two=False), pairwise="dietterich_5x2cv_t")
    with pytest.raises(InputError, match="every compared learner"):
        multi2test(meta, cost="fast,mid")


def test_holdout_design_uses_corrected_resampled_t_with_lcdb_ratio():
    meta = _meta(n_datasets=3, five_by_two=False)
    res = multitest_on_meta(meta, "d0")
    assert "corrected resampled t" in res.test and f"{LCDB_TEST_TRAIN_RATIO:.4g}" in res.test
    assert res.order[0] == "slow" and res.prior_order[0] == "fast"


def test_strategies():
    meta = _meta()
    strat = Multi2Test(posthoc_method="shaffer").fit(meta)
    pol = strat.policy({"dataset": "new"})
    assert isinstance(pol, OrderPolicy) and pol.order == list(strat.result_.order)
    assert pol.next([]) == strat.result_.order[0]
    mt = MultiTest().fit(meta)
    assert mt.policy({"dataset": "d0"}).order[0] == "slow"
    with pytest.raises(InputError, match="has none"):
        mt.policy({"dataset": "unseen"})


def test_snapshot_default_twenty_learners_falls_back(snapshot):
    res = multi2test(snapshot)
    assert len(res.order) == 20 and res.friedman.n_datasets >= 50
    assert res.posthoc.method == "shaffer" and not res.posthoc.exact
    assert any("Shaffer" in n for n in res.notes)
    assert len(res.dropped) + res.friedman.n_datasets == len(snapshot.dataset_ids)


def test_snapshot_subset_of_eight_is_exact(snapshot):
    res = multi2test(snapshot, learners=["knn", "svc-rbf", "logreg", "random-forest", "decision-tree", "lda",
                                         "qda", "mlp"])
    assert len(res.order) == 8 and res.posthoc.method == "bergmann" and res.posthoc.exact
    assert res.friedman.pvalue < 0.05
