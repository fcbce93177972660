"""What the plan expects before any test: gaps to the best learner from the strategy's similar datasets, with
leave-one-dataset-out empirical-quantile intervals; the similar-datasets list uses the same weights."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from algorank.metadata.dataset import MetaDataset
from algorank.recommender.live.prior import _weighted_median, fit_relative_prior, relative_prior_for, strategy_bandwidth
from algorank.recommender.live.recommendation import PlannedTest
from algorank.recommender.live.report import plan_text
from algorank.recommender.live.similar import similar_datasets
from algorank.recommender.similarity import meta_feature_matrix


def test_weighted_median_by_hand():
    v = np.array([[1.0, 5.0], [2.0, np.nan], [3.0, 1.0], [10.0, 2.0]])
    # equal weights: the lower median (first value whose cumulative weight reaches half)
    np.testing.assert_allclose(_weighted_median(v, np.ones(4)), [2.0, 2.0])
    # one heavy row decides; a NaN cell carries no weight
    np.testing.assert_allclose(_weighted_median(v, np.array([0.1, 5.0, 0.1, 0.1])), [2.0, 2.0])
    np.testing.assert_allclose(_weighted_median(v, np.array([0.1, 0.1, 0.1, 5.0])), [10.0, 2.0])
    # several weight rows at once; no positive weight: NaN
    out = _weighted_median(v, np.array([[1.0, 0, 0, 0], [0, 0, 0, 0.0]]))
    np.testing.assert_allclose(out[0], [1.0, 5.0]) and np.testing.assert_equal(np.isnan(out[1]), [True, True])


def _toy(n=6):
    """n datasets, learners a, b, c: c is always best, a is 2 points behind, b 10 points behind, but on the last
    dataset b is 30 points behind."""
    acc = np.array([[0.88, 0.80, 0.90]] * n)
    acc[-1, 1] = 0.60
    maj = np.full(n, 0.5)
    feats = meta_feature_matrix([{"n_instances": 100 * (i + 1), "n_features": 5, "n_classes": 2,
                                  "majority_fraction": 0.5} for i in range(n)])
    return acc, maj, feats


def test_gaps_are_weighted_medians_and_intervals_are_loo_residual_quantiles():
    acc, maj, feats = _toy()
    prior = fit_relative_prior(acc, maj, feats, ["a", "b", "c"], [f"d{i}" for i in range(6)], h=1.0)
    np.testing.assert_allclose(prior.gaps[0], [-0.02, -0.10, 0.0])
    np.testing.assert_allclose(prior.best_gain, 0.8)  # (0.9 - 0.5) / 0.5
    # every left-out prediction of a is -0.02 and of c 0: no spread; b's residuals are 0 but one -0.2
    np.testing.assert_allclose(prior.gap_residuals[:, 0], [0, 0], atol=1e-12)
    np.testing.assert_allclose(prior.gap_residuals[:, 2], [0, 0], atol=1e-12)
    assert prior.gap_residuals[0, 1] == pytest.approx(np.quantile([0, 0, 0, 0, 0, -0.2], 0.05))
    pred = prior.predict({"n_instances": 300, "n_features": 5, "n_classes": 2, "majority_fraction": 0.6})
    assert pred["gaps"]["a"] == pytest.approx((-0.02, -0.02, -0.02))
    g, lo, hi = pred["gaps"]["b"]
    assert g == pytest.approx(-0.10) and hi == pytest.approx(-0.10)
    assert lo == pytest.approx(-0.10 + prior.gap_residuals[0, 1])
    # the best score: the majority fraction plus the median gain times what is left above it
    assert pred["best"] == pytest.approx((0.6 + 0.8 * 0.4,) * 3)
    # unknown majority: no absolute number
    assert all(math.isnan(x) for x in prior.predict({"n_instances": 300})["best"])


def test_a_prior_on_two_datasets_has_no_spread_to_learn_and_says_zero_width():
    acc, maj, feats = _toy(2)
    prior = fit_relative_prior(acc, maj, feats, ["a", "b", "c"], ["d0", "d1"])
    assert (prior.gap_residuals == 0).all() and (prior.best_residuals == 0).all()


def _meta():
    rows, ds = [], []
    for d, (n, mf) in enumerate([(100, 0.5), (1000, 0.5), (120, 0.9), (5000, 0.6)]):
        ds.append({"dataset": f"d{d}", "n_instances": n, "n_features": 4, "n_classes": 2, "majority_fraction": mf})
        for l, a in (("x", 0.9 - 0.01 * d), ("y", 0.8)):
            rows.append({"dataset": f"d{d}", "learner": l, "repeat": 0, "fold": 0, "accuracy": a, "fit_time": 0.1})
    return MetaDataset(pd.DataFrame(rows), pd.DataFrame(ds))


def test_the_similar_datasets_are_the_ones_that_weigh_most_in_the_prior():
    class H:  # a strategy's bandwidth is what the prior uses
        h = 0.35

    meta = _meta()
    assert strategy_bandwidth(H()) == 0.35 and strategy_bandwidth(object()) == 1.0
    prior = relative_prior_for(meta, H())
    info = {"n_instances": 110, "n_features": 4, "n_classes": 2, "majority_fraction": 0.85}
    w = prior.weights(info)
    listed = similar_datasets(meta, info, k=4, prior=prior)
    assert [d["dataset"] for d in listed] == [prior.datasets[i] for i in np.argsort(-w, kind="stable")]
    assert listed[0]["dataset"] == "d2"  # 120 rows, majority 0.9
    assert sum(d["share"] for d in listed) == pytest.approx(1.0)
    assert [d["similarity"] for d in listed] == pytest.approx(sorted(w, reverse=True))


def test_the_plan_shows_gaps_in_points_and_the_best_once():
    plan = (PlannedTest("x", 0.7, 0.2, 0.1, 1.0, 0.0), PlannedTest("y", 0.6, 1.5, 0.1, 1.0, 0.05))
    text = plan_text(plan, metric="accuracy", relative={"x": (0.0, -0.05, 0.0), "y": (-0.123, -0.3, -0.01)},
                     best=(0.91, 0.8, 0.99))
    assert "the best learner is expected to reach accuracy 0.91 (90% interval [0.80, 0.99])" in text
    assert "vs best (points)" in text and "-12.3" in text and "[-30.0, -1.0]" in text
    assert "0.7000" not in text  # no absolute value per learner
    # a metric whose score is not its value (log loss): the absolute table as before
    assert "vs best" not in plan_text(plan, metric="log_loss", relative={"x": (0.0, 0.0, 0.0)})
    assert "vs best" not in plan_text(plan, metric="accuracy")


@pytest.mark.slow
def test_on_broad_left_out_datasets_fall_inside_the_90_percent_intervals_about_90_percent_of_the_time():
    """The calibration the documentation reports, checked: leave-one-dataset-out on the embedded broad meta-data."""
    from algorank.metadata.snapshot import load_meta
    from algorank.recommender.live.prior import check_calibration
    from algorank.recommender.live.recommend import live_strategy

    meta = load_meta("broad")
    check = check_calibration(meta, live_strategy("eiu", meta)[0])
    assert check["h"] == 0.7 and check["gap_cells"] > 2000 and check["best_datasets"] > 100
    assert 0.80 <= check["gap_coverage"] <= 0.95 and 0.80 <= check["best_coverage"] <= 0.95, check
    assert check["gap_mae"] < 0.5 * check["best_mae"]  # the gap is told far better than the absolute best score
