"""Loss-time optimised order (lt): exact MIL of orders, rollout never worse than its start, nesting."""

import math

import numpy as np
import pandas as pd
import pytest

from algorank.recommender.kernel.loss_time import loss_steps, mil_rows
from algorank.metadata.dataset import MetaDataset
from algorank.metadata.errors import InputError
from algorank.recommender.registry import parse_strategy
from algorank.recommender.lt import LossTimeOrder, batch_mil, rollout_order
from algorank.recommender.similarity import meta_feature_matrix, similarity_weights


def _uniform_problem(rng, n_datasets, n_learners, *, low=0.6, max_exp=2, base=0.55):
    """Accuracies in [low, 1), seconds 10^[-3, max_exp), a constant baseline and each dataset's best accuracy."""
    acc = rng.uniform(low, 1.0, size=(n_datasets, n_learners))
    sec = 10 ** rng.uniform(-3, max_exp, size=(n_datasets, n_learners))
    return acc, sec, np.full(n_datasets, base), acc.max(axis=1)


def test_batch_mil_matches_the_benchmark_mil():
    rng = np.random.default_rng(0)
    acc, sec, base, best = _uniform_problem(rng, 6, 5, low=0.5, max_exp=1, base=0.5)
    orders = np.array([rng.permutation(5) for _ in range(3)])
    got = batch_mil(orders, acc, sec, base, best, lo=-3.0, hi=2.0)
    for b, order in enumerate(orders):
        cum, losses, initial = loss_steps(acc[:, order], sec[:, order], best, base)
        ref = mil_rows(cum, losses, initial, tmin=1e-3, tmax=100.0)
        np.testing.assert_allclose(got[:, b], ref, rtol=1e-12, atol=1e-12)


def test_batch_mil_hand_case():
    # one dataset, baseline 0.5, best 0.9; test 1 (1 s) gives 0.9; window [0.1, 10] s
    acc = np.array([[0.9]])
    sec = np.array([[1.0]])
    m = batch_mil(np.array([[0]]), acc, sec, np.array([0.5]), np.array([0.9]), lo=-1.0, hi=1.0)
    assert m[0, 0] == pytest.approx(100 * 0.4 * 1.0 / 2.0)


def test_rollout_never_worse_than_start():
    acc, sec, base, best = _uniform_problem(np.random.default_rng(1), 30, 6)
    start = list(range(6))
    w = np.ones(30)
    order = rollout_order(start, acc, sec, base, best, w, lo=-3, hi=2, passes=2)
    assert sorted(order) == start
    mean = lambda o: batch_mil(np.array([o]), acc, sec, base, best, lo=-3, hi=2).mean()
    assert mean(order) <= mean(start) + 1e-12


def _random_problem(n_datasets, n_learners, seed):
    rng = np.random.default_rng(seed)
    acc, sec, base, _ = _uniform_problem(rng, n_datasets, n_learners)
    acc[rng.uniform(size=acc.shape) < 0.1] = -np.inf  # missing results: -inf and 0 s, as _prepare makes them
    sec[np.isneginf(acc)] = 0.0
    return acc, sec, base, acc.max(axis=1)


@pytest.mark.parametrize("seed", range(3))
def test_windowed_rollout_with_every_candidate_is_the_full_rollout(seed):
    """The window only skips the loss that every candidate shares: with all learners as candidates it
    picks what the full rollout picks, step by step."""
    from algorank.recommender.lt import _windowed_rollout

    acc, sec, base, best = _random_problem(25, 9, seed)
    w = np.random.default_rng(seed).uniform(0.1, 1.0, 25)
    start = list(range(9))[::-1]
    full = rollout_order(start, acc, sec, base, best, w, lo=-3, hi=2, passes=2)
    windowed = _windowed_rollout(start, acc, sec, base, best, w / w.sum(), lo=-3, hi=2, passes=2, candidates=9)
    assert windowed == full


def test_windowed_rollout_scales_and_never_worsens_the_start():
    import time

    acc, sec, base, best = _random_problem(60, 120, 7)
    start = list(range(120))
    w = np.ones(60)
    t0 = time.perf_counter()
    order = rollout_order(start, acc, sec, base, best, w, lo=-3, hi=2, passes=2, candidates=8)
    elapsed = time.perf_counter() - t0
    assert sorted(order) == start
    mean = lambda o: batch_mil(np.array([o]), acc, sec, base, best, lo=-3, hi=2).mean()
    assert mean(order) < mean(start)
    assert elapsed < 120  # O(learners x candidates^2 x datasets), a few seconds; the full rollout (cubic) takes hours
    # with no more learners than candidates the original rollout runs unchanged
    small = list(range(6))
    assert rollout_order(small, acc[:, :6], sec[:, :6], base, acc[:, :6].max(axis=1), w, lo=-3, hi=2,
                         candidates=20) == rollout_order(small, acc[:, :6], sec[:, :6], base,
                                                         acc[:, :6].max(axis=1), w, lo=-3, hi=2)


def test_similarity_weights_handle_nan_and_inf():
    feats = meta_feature_matrix([{"n_instances": 100, "n_features": 10, "n_classes": 2, "majority_fraction": 0.5},
                                 {"n_instances": 10000, "n_features": 10, "n_classes": 2},
                                 {}])
    assert math.isnan(feats[1, 3]) and np.isnan(feats[2]).all()
    assert feats[0, 0] == pytest.approx(2.0)
    q = feats[0]
    w = similarity_weights(feats, q, h=1.0, center=np.zeros(4), scale=np.ones(4))
    assert w[0] == pytest.approx(1.0) and 0 < w[1] < 1.0 and w[2] == 0.0
    assert np.all(similarity_weights(feats, q, h=math.inf, center=np.zeros(4), scale=np.ones(4)) == 1.0)


def _toy_meta():
    rows = []
    # slow-but-best learner S and fast-but-weaker learner F on 6 datasets
    for d in range(6):
        rows.append({"dataset": f"d{d}", "learner": "S", "repeat": 0, "fold": 0, "accuracy": 0.9, "fit_time": 50.0})
        rows.append({"dataset": f"d{d}", "learner": "F", "repeat": 0, "fold": 0, "accuracy": 0.88, "fit_time": 0.01})
    ds = pd.DataFrame({"dataset": [f"d{d}" for d in range(6)], "n_instances": [100 * (d + 1) for d in range(6)],
                       "n_features": 5, "n_classes": 2, "majority_fraction": 0.5})
    return MetaDataset(pd.DataFrame(rows), ds)


def test_lt_puts_the_fast_learner_first_on_a_log_time_window():
    s = LossTimeOrder(h="inf", p=0.0, tmin=1e-3, tmax=100.0).fit(_toy_meta())
    assert s.order_for({"n_instances": 300}) == ["F", "S"]


def _two_cluster_meta():
    # small datasets: F (0.01 s, .90) beats S (50 s, .60); large datasets: the reverse.  Only a local
    # similarity (finite h) orders the minority cluster right; h = inf follows the 8 large datasets.
    rows, ds = [], []
    for d in range(12):
        small = d < 4
        (acc_f, t_f), (acc_s, t_s) = ((0.9, 0.01), (0.6, 50.0)) if small else ((0.6, 50.0), (0.95, 0.01))
        rows += [{"dataset": f"d{d}", "learner": "F", "repeat": 0, "fold": 0, "accuracy": acc_f, "fit_time": t_f},
                 {"dataset": f"d{d}", "learner": "S", "repeat": 0, "fold": 0, "accuracy": acc_s, "fit_time": t_s}]
        ds.append({"dataset": f"d{d}", "n_instances": (100 if small else 100000) * (d + 1), "n_features": 5,
                   "n_classes": 2, "majority_fraction": 0.5})
    return MetaDataset(pd.DataFrame(rows), pd.DataFrame(ds))


@pytest.mark.parametrize("grid", [(0.5, math.inf), (math.inf, 0.5)])
def test_lt_auto_chooses_the_h_with_the_lowest_inner_mil(grid):
    from algorank.evaluation.meta.benchmark import leave_one_dataset_out

    meta = _two_cluster_meta()
    s = LossTimeOrder(h="auto", h_grid=grid, inner=12, p=0.0).fit(meta)
    # with inner = every dataset, the inner selection is the leave-one-dataset-out MIL of each fixed h
    mean_mil = {h: leave_one_dataset_out(LossTimeOrder(h=h, p=0.0), meta, tmin=1e-3, tmax=100.0).mean_mil
                for h in grid}
    assert mean_mil[0.5] < mean_mil[math.inf] - 5  # the local h is clearly better here
    assert s.h_ == 0.5 == min(grid, key=mean_mil.get)
    info = {"n_features": 5, "n_classes": 2, "majority_fraction": 0.5}
    assert s.order_for({**info, "n_instances": 200}) == ["F", "S"]
    assert s.order_for({**info, "n_instances": 500000}) == ["S", "F"]
    assert LossTimeOrder(h="inf", p=0.0).fit(meta).order_for({**info, "n_instances": 200}) == ["S", "F"]


def test_lt_spec_and_errors():
    s = parse_strategy("lt:h=2,p=1/8,passes=1")
    assert s.h == 2.0 and s.passes == 1 and s.needs_window
    w = s.with_window(0.01, 10.0)
    assert (w.tmin, w.tmax, w.name) == (0.01, 10.0, s.name)
    with pytest.raises(InputError, match="h must"):
        parse_strategy("lt:h=-1")
    with pytest.raises(InputError, match="passes"):
        parse_strategy("lt:passes=0")
    assert parse_strategy("lt").candidates == 20 and parse_strategy("lt:cands=8").with_window(1, 10).candidates == 8
    with pytest.raises(InputError, match="cands"):
        parse_strategy("lt:cands=1")


def test_feature_center_scale_matches_nan_statistics_without_warnings():
    import warnings

    from algorank.recommender.similarity import feature_center_scale

    f = np.array([[1.0, np.nan, 2.0, 5.0], [3.0, np.nan, 2.0, np.nan], [5.0, np.nan, 2.0, np.nan]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        center, scale = feature_center_scale(f)
    # column 0: mean 3, population std sqrt(8/3); all-NaN column: 0 and 1; constant and single value: scale 1
    np.testing.assert_allclose(center, [3.0, 0.0, 2.0, 5.0])
    np.testing.assert_allclose(scale, [math.sqrt(8 / 3), 1.0, 1.0, 1.0])
