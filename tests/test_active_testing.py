"""Active testing: hand-computed gains, similarity, tie-breaking, loo fast path == refit."""

import numpy as np
import pandas as pd
import pytest

from algorank.evaluation.meta.benchmark import leave_one_dataset_out
from algorank.recommender.kernel.trace import Observation
from algorank.metadata.dataset import MetaDataset
from algorank.metadata.errors import InputError
from algorank.recommender.active_testing import ActiveTesting, estimated_gain, pairwise_similarity
from algorank.recommender.registry import parse_strategy


def _meta(acc, sec, learners=("A", "B", "C")):
    rows = []
    for d, (ar, sr) in enumerate(zip(acc, sec)):
        for l, a, s in zip(learners, ar, sr):
            if a == a:
                rows.append({"dataset": f"d{d}", "learner": l, "repeat": 0, "fold": 0, "accuracy": a, "fit_time": s})
    return MetaDataset(pd.DataFrame(rows))


def test_gain_matches_hand_computation():
    acc = np.array([[0.8, 0.9, 0.7], [0.8, 0.7, 0.88]])
    t = np.array([[1.0, 4.0, 1.0], [1.0, 1.0, 2.0]])
    p = 0.5
    g = estimated_gain(acc, t, 0, np.array([1, 2]), np.ones(2), p=p)
    # B vs A: d0 (0.9/0.8)/4**0.5 = 0.5625 -> 0; d1 0.7/0.8 < 1 -> 0
    # C vs A: d0 0.875 -> 0; d1 (0.88/0.8)/2**0.5 = 0.7778 -> 0
    assert g == pytest.approx([0.0, 0.0])
    g0 = estimated_gain(acc, t, 0, np.array([1, 2]), np.array([1.0, 2.0]), p=0.0)
    assert g0 == pytest.approx([0.9 / 0.8 - 1, 2 * (0.88 / 0.8 - 1)])


def test_gain_skips_datasets_missing_either_learner():
    acc = np.array([[0.5, np.nan], [0.5, 0.75]])
    t = np.ones((2, 2))
    assert estimated_gain(acc, t, 0, np.array([1]), np.ones(2), p=0.0) == pytest.approx([0.5])


def test_pairwise_similarity_counts_agreements():
    prior = np.array([[0.9, 0.8, 0.7], [0.7, 0.8, 0.9], [0.9, np.nan, 0.7]])
    observed = np.array([0.95, 0.85, 0.75])  # order A > B > C
    sim = pairwise_similarity(prior, observed)
    # d0 agrees on 3/3 pairs, d1 on 0/3, d2 has one comparable pair (A, C) and agrees
    assert sim == pytest.approx([(3 + 1) / 5, 1 / 5, 2 / 3])
    assert pairwise_similarity(prior, observed, sharpness=2) == pytest.approx(sim**2)
    assert np.all(pairwise_similarity(prior, observed[:1]) == 0.5)


def test_policy_starts_with_ar_then_follows_gain_and_ties_by_ar():
    # A is fast and good everywhere (top of AR); C beats A clearly on both priors.
    meta = _meta([[0.80, 0.70, 0.95], [0.82, 0.71, 0.90]], [[0.01, 0.01, 0.01], [0.01, 0.01, 0.01]])
    s = ActiveTesting(p=0.0).fit(meta)
    pol = s.policy({})
    first = pol.next([])
    assert first == s.learners_[s.order_[0]] == "C"  # AR0 ranks C first
    hist = [Observation("C", 0.6, 1.0)]  # C disappoints on the new dataset
    g = pol.gains(hist)
    # A vs C: d0 0.80/0.95 < 1, d1 0.82/0.90 < 1 -> 0; B also 0 -> tie: AR order (A before B)
    assert g == {"A": 0.0, "B": 0.0}
    assert pol.next(hist) == "A"
    hist.append(Observation("A", 0.9, 1.0))
    assert pol.next(hist) == "B"
    hist.append(Observation("B", 0.5, 1.0))
    assert pol.next(hist) is None


def test_failed_first_test_falls_back_to_ar_order():
    meta = _meta([[0.8, 0.7, 0.9], [0.8, 0.7, 0.9]], [[1, 1, 1], [1, 1, 1]])
    s = ActiveTesting(p=0.0).fit(meta)
    pol = s.policy({})
    hist = [Observation("C", float("nan"), 0.0, "error", "boom")]
    assert pol.next(hist) == "A"


def test_loo_fast_path_equals_refitting(snapshot):
    ids = snapshot.dataset_ids[:12]
    meta = snapshot.subset(datasets=ids)
    for spec in ("at:p=1/16,sim=none", "at:p=0,sim=tested"):
        fast = leave_one_dataset_out(parse_strategy(spec), meta, fast=True)
        slow = leave_one_dataset_out(parse_strategy(spec), meta, fast=False)
        assert fast.path == "fast" and slow.path == "generic"
        np.testing.assert_array_equal(fast.sequences, slow.sequences)
        np.testing.assert_array_equal(fast.mil, slow.mil)


def test_spec_parsing_and_bad_values():
    s = parse_strategy("at:p=1/64,sim=1")
    assert s.sim == "none" and s.p == pytest.approx(1 / 64)
    with pytest.raises(InputError, match="sim"):
        parse_strategy("at:sim=maybe")
    with pytest.raises(InputError, match="P must"):
        parse_strategy("at:p=2")
    with pytest.raises(InputError, match="fit"):
        ActiveTesting().policy({})
