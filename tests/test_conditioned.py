"""The dataset-conditioned adaptive strategy ``ei``: runtime model, accuracy model, policy."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from algorank.evaluation.meta.benchmark import benchmark_strategies
from algorank.recommender.kernel.trace import Observation
from algorank.metadata.dataset import MetaDataset
from algorank.metadata.errors import InputError
from algorank.recommender.accuracy_model import fit_accuracy_model, from_gain, to_gain
from algorank.recommender.ei import ConditionedStrategy
from algorank.recommender.registry import parse_strategy
from algorank.recommender.runtime_model import fit_runtime_model, observed_ratio, runtime_features


def test_runtime_model_recovers_log_log_laws_and_extrapolates():
    rng = np.random.default_rng(0)
    n = 10 ** rng.uniform(2, 4, size=40)
    d = 10 ** rng.uniform(0.5, 2, size=40)
    rows = [{"n_instances": a, "n_features": b, "n_classes": 2} for a, b in zip(n, d)]
    feats = runtime_features(rows)
    # learner 0 linear in n, learner 1 quadratic in n (an SVM), both linear in d
    sec = np.column_stack([1e-5 * n * d, 1e-8 * n ** 2 * d])
    model = fit_runtime_model(sec, feats, ["lin", "quad"], lam=0.0)
    assert model.coef[0, 1:3] == pytest.approx([1.0, 1.0], abs=1e-6)
    assert model.coef[1, 1:3] == pytest.approx([2.0, 1.0], abs=1e-6)
    big = model.predict({"n_instances": 1e5, "n_features": 10, "n_classes": 2})  # beyond the prior sizes
    assert big == pytest.approx([1e-5 * 1e6, 1e-8 * 1e11], rel=1e-6)


def test_runtime_model_treats_timeouts_as_lower_bounds():
    n = np.array([100, 200, 400, 800, 1600, 3200.0])
    rows = [{"n_instances": a, "n_features": 10, "n_classes": 2} for a in n]
    truth = 1e-4 * n ** 1.5
    cap = 3.0
    sec = np.minimum(truth, cap)[:, None]
    cens = (truth > cap)[:, None]
    assert cens.sum() == 2
    naive = fit_runtime_model(sec, runtime_features(rows), ["x"], lam=0.0)
    censored = fit_runtime_model(sec, runtime_features(rows), ["x"], censored=cens, lam=0.0)
    q = {"n_instances": 3200, "n_features": 10, "n_classes": 2}
    assert censored.predict(q)[0] > cap  # at least the cap: never "missing", never below it
    assert censored.predict(q)[0] > naive.predict(q)[0]


def test_observed_ratio_is_the_geometric_median_and_clipped():
    assert observed_ratio([2, 8, 4], [1, 1, 1]) == pytest.approx(4.0)
    assert observed_ratio([], []) == 1.0
    assert observed_ratio([1000], [1], clip=20) == 20.0


def test_gain_roundtrip_and_meaning():
    assert to_gain(0.9, 0.6) == pytest.approx(0.75)
    assert from_gain(0.75, 0.6) == pytest.approx(0.9)
    assert to_gain(0.8, float("nan")) == pytest.approx(0.8)  # unknown majority: the accuracy itself


def test_conditioning_matches_the_bivariate_normal_formula():
    rng = np.random.default_rng(1)
    base = rng.normal(0.5, 0.1, size=200)
    acc = np.column_stack([base + rng.normal(0, 0.02, 200), base + rng.normal(0, 0.02, 200)]).clip(0.01, 0.99)
    model = fit_accuracy_model(acc, np.zeros(200), ["a", "b"], shrink=0.0, noise=0.0)
    mu, cov = model.prior(np.ones(200))
    mean, sd = model.condition(mu, cov, [0], [0.7])
    expect = mu[1] + cov[1, 0] / cov[0, 0] * (0.7 - mu[0])
    assert mean[1] == pytest.approx(expect)
    assert sd[1] == pytest.approx(math.sqrt(cov[1, 1] - cov[1, 0] ** 2 / cov[0, 0]))
    assert mean[0] == 0.7 and sd[0] == pytest.approx(1e-6)
    assert sd[1] < math.sqrt(cov[1, 1]) / 3  # strongly correlated: observing a says much about b


def test_failure_probability_from_failed_runs():
    acc = np.array([[0.9, np.nan], [0.8, np.nan], [0.7, 0.6], [0.6, np.nan]])
    failed = np.isnan(acc)
    model = fit_accuracy_model(acc, np.full(4, 0.5), ["ok", "flaky"], failed=failed)
    p = model.fail_probability(np.ones(4))
    assert p[0] == pytest.approx(0.05 / 5.0) and p[1] == pytest.approx(3.05 / 5.0)


def _meta(acc, sec, *, status=None, landmark=None):
    rows = []
    for i in range(acc.shape[0]):
        for j, l in enumerate(["cheap", "good", "flaky"][: acc.shape[1]]):
            st = "ok" if status is None else status[i][j]
            rows.append({"dataset": f"d{i}", "learner": l, "repeat": 0, "fold": 0,
                         "accuracy": acc[i, j] if st == "ok" else np.nan, "fit_time": sec[i, j], "status": st})
    ds = pd.DataFrame({"dataset": [f"d{i}" for i in range(acc.shape[0])], "n_instances": 500, "n_features": 10,
                       "n_classes": 2, "majority_fraction": 0.5})
    if landmark is not None:
        ds["landmark_1nn"] = landmark
    return MetaDataset(pd.DataFrame(rows), ds)


def test_policy_trades_expected_improvement_against_cost():
    rng = np.random.default_rng(2)
    good = rng.uniform(0.85, 0.95, 30)
    acc = np.column_stack([good - 0.05, good])
    sec = np.column_stack([np.full(30, 0.1), np.full(30, 10.0)])
    meta = _meta(acc, sec)
    info = {"n_instances": 500, "n_features": 10, "n_classes": 2, "majority_fraction": 0.5}
    per_second = ConditionedStrategy(p=1.0).fit(meta).policy(info)
    accuracy_only = ConditionedStrategy(p=0.0).fit(meta).policy(info)
    assert per_second.next([]) == "cheap"  # 100x cheaper, almost as good
    assert accuracy_only.next([]) == "good"
    # after the cheap test, its result conditions the other: the good one is tested next
    assert per_second.next([Observation("cheap", 0.85, 0.1)]) == "good"


def test_likely_failure_is_ranked_down_and_stop_rule_says_why():
    acc = np.tile([0.80, 0.81, 0.95], (20, 1)) + np.linspace(0, 0.02, 20)[:, None]
    sec = np.ones((20, 3))
    status = [["ok", "ok", "error" if i % 10 else "ok"] for i in range(20)]  # flaky fails on 18 of 20
    meta = _meta(acc, sec, status=status)
    info = {"n_instances": 500, "n_features": 10, "n_classes": 2, "majority_fraction": 0.5}
    strat = ConditionedStrategy(p=1.0, stop=0.2).fit(meta)
    preds = {p.learner: p for p in strat.predictions(info)}
    assert preds["flaky"].fail_probability > 0.8 and preds["good"].fail_probability < 0.1
    assert preds["flaky"].accuracy_low < preds["flaky"].accuracy < preds["flaky"].accuracy_high
    pol = strat.policy(info)
    first = pol.next([])
    assert first != "flaky"
    hist = [Observation("good", 0.83, 1.0), Observation("cheap", 0.82, 1.0)]
    assert pol.next(hist) is None and "probability" in pol.stop_reason


def test_landmarkers_condition_the_prior():
    rng = np.random.default_rng(3)
    level = rng.uniform(0.6, 0.95, 40)
    acc = np.column_stack([level - 0.02, level])
    meta = _meta(acc, np.ones((40, 2)), landmark=level - 0.05)
    strat = ConditionedStrategy().fit(meta)
    assert strat.landmarks_ == ("landmark_1nn",)
    hi = {p.learner: p.accuracy for p in strat.predictions({"majority_fraction": 0.5, "landmark_1nn": 0.9})}
    lo = {p.learner: p.accuracy for p in strat.predictions({"majority_fraction": 0.5, "landmark_1nn": 0.6})}
    assert hi["good"] == pytest.approx(0.95, abs=0.02) and lo["good"] == pytest.approx(0.65, abs=0.02)
    plain = ConditionedStrategy(landmarks=False).fit(meta)
    assert plain.landmarks_ == ()


def test_spec_and_benchmark():
    s = parse_strategy("ei:h=inf,p=0.5,stop=0.05,overhead=0.1")
    assert isinstance(s, ConditionedStrategy) and math.isinf(s.h) and s.p == 0.5 and s.time_model.overhead == 0.1
    assert s.name == "ei:h=inf,p=0.5,stop=0.05,overhead=0.1"  # the spec as typed
    assert ConditionedStrategy(h=math.inf, p=0.5, stop=0.05, time_overhead=0.1).name == s.name
    for bad in ("ei:p=5", "ei:h=0", "ei:landmarks=maybe", "ei:nope=1"):
        with pytest.raises(InputError):
            parse_strategy(bad)
    rng = np.random.default_rng(4)
    acc = rng.uniform(0.6, 0.9, (12, 2))
    meta = _meta(acc, rng.uniform(0.01, 1.0, (12, 2)))
    suite = benchmark_strategies([parse_strategy("ar:p=0"), parse_strategy("ei")], meta)
    assert [r.strategy for r in suite.results] == ["ar:p=0", "ei"]
    assert all(np.isfinite(r.mil).all() for r in suite.results)


def test_recommend_with_ei_shows_predictions_and_predicted_vs_measured(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from algorank.api import recommend
    from algorank.recommender.live.plot import plot_predicted_vs_realised

    r = recommend("sklearn:iris", strategy="ei", meta="uci", budget=20, top=3, cv=3)
    assert len(r.plan) == 3 and all(p.accuracy_low <= p.expected_accuracy <= p.accuracy_high for p in r.plan)
    assert all(0 <= p.fail_probability < 1 and p.expected_seconds > 0 for p in r.plan)
    board = r.leaderboard
    assert len(board) == 3 and board["predicted_seconds"].gt(0).all() and board["predicted_accuracy"].between(0, 1).all()
    d = r.to_dict()
    assert {"predicted_seconds", "predicted_accuracy"} <= set(d["trace"][0]) and "accuracy_low" in d["order"][0]
    ax = plot_predicted_vs_realised(r)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["realised", "predicted"]
    from sklearn.datasets import load_iris

    bunch = load_iris(as_frame=True)
    labels = bunch.target_names[bunch.target]
    assert r.model is not None and r.model.score(bunch.data, labels) > 0.9  # refitted on raw features, labels out


def test_predicted_seconds_scale_with_the_data_like_measured_ones():
    # magic (19,020 rows) held out: the runtime model, fitted on the other 150 broad datasets,
    # must predict how much longer its tests take than those of a 300-row dataset
    from algorank.api import load_meta
    from algorank.recommender.kernel.environments import meta_arrays

    meta = load_meta("broad")
    small = "heart.statlog"  # 270 rows, 13 features
    strat = ConditionedStrategy(time_kind="fit_predict_time").fit(meta.exclude(datasets=["magic", small]))
    arr = meta_arrays(meta, time_kind="fit_predict_time")
    table = meta.datasets.set_index("dataset")
    big_info, small_info = dict(table.loc["magic"]), dict(table.loc[small])
    assert big_info["n_instances"] > 19000 and small_info["n_instances"] < 400
    pred_big, pred_small = strat.runtime_.predict(big_info), strat.runtime_.predict(small_info)
    meas = arr.seconds[arr.row("magic")] / arr.seconds[arr.row(small)]
    pred = pred_big / pred_small
    ok = np.isfinite(meas)
    from scipy.stats import spearmanr

    assert np.median(pred[ok]) > 5 and np.median(meas[ok]) > 5  # far more time on 70x more rows
    # which learners grow fastest is predicted (rank correlation of the ratios over the 20 learners);
    # the size of the jump is underestimated (measured/predicted 2-10x on magic): the live loop rescales
    # its remaining predictions by the measured/predicted ratio of the first tests
    assert spearmanr(np.log(pred[ok]), np.log(meas[ok])).statistic > 0.7
    svc = strat.learners_.index("SVC_rbf")
    tree = strat.learners_.index("sklearn.tree.DecisionTreeClassifier")
    assert pred[svc] > 3 * pred[tree]  # the kernel SVM grows faster than a tree, as measured
    assert meas[svc] > 3 * meas[tree]
    assert strat.predictions(big_info)[svc].seconds > 100 * strat.predictions(small_info)[svc].seconds


def test_tune_p_sweeps_the_cost_exponent_of_ei():
    import algorank
    from algorank import cli

    rng = np.random.default_rng(5)
    meta = _meta(rng.uniform(0.6, 0.9, (10, 3)), rng.uniform(0.01, 2.0, (10, 3)))
    res = algorank.tune_p(meta, strategy="ei:h=inf", grid=["2", "1/2", "0"], reference="1/2")
    assert res.strategy == "ei" and [r.strategy for r in res.sweep.results] == ["ei:h=inf,p=2", "ei:h=inf,p=1/2",
                                                                                "ei:h=inf,p=0"]
    # each row is exactly the leave-one-dataset-out benchmark of that spec
    suite = benchmark_strategies([parse_strategy("ei:h=inf,p=1/2")], meta)
    np.testing.assert_allclose(res.sweep.results[1].mil, suite.results[0].mil)
    assert res.best_p == res.sweep.grid[int(np.argmin([r.mean_mil for r in res.sweep.results]))]
    assert res.to_dict()["user_metrics"]["reference"] == "ei:h=inf,p=1/2"
    for kwargs, needle in (({"strategy": "ei", "nested": True}, "fast leave-one-out path"),
                           ({"strategy": "ei:p=1"}, "leave p= out"),
                           ({"strategy": "random"}, "tune-p sweeps the P of"),
                           ({"strategy": "ei", "grid": ["3"]}, r"P must lie in \[0, 2\]"),
                           ({"strategy": "ar", "grid": ["3/2"]}, r"P must lie in \[0, 1\]"),
                           ({"strategy": "ei:h=0"}, "h out of range|h must")):
        with pytest.raises(InputError, match=needle):
            algorank.tune_p(meta, **kwargs)
    assert cli.main(["tune-p", "--meta", "uci", "--strategy", "ei", "--nested"]) == 2


def test_pooled_slopes_equal_the_one_hot_least_squares_solution():
    from algorank.recommender.runtime_model import _design, _pooled_slopes

    rng = np.random.default_rng(6)
    design = _design(rng.uniform(1, 5, (50, 3)))
    y = rng.normal(size=(50, 6))
    y[rng.uniform(size=y.shape) < 0.3] = np.nan
    w = rng.uniform(0.2, 2.0, 50)
    w[4] = 0.0
    rows, cols = np.nonzero(np.isfinite(y) & (w > 0)[:, None])
    onehot = np.zeros((len(rows), 6))
    onehot[np.arange(len(rows)), cols] = 1.0
    a = np.column_stack([onehot, design[rows, 1:]])
    sw = np.sqrt(w[rows])
    reference = np.linalg.lstsq(a * sw[:, None], y[rows, cols] * sw, rcond=None)[0][6:]
    np.testing.assert_allclose(_pooled_slopes(design, y, w), reference, atol=1e-12)


def test_policy_scores_do_not_depend_on_how_the_history_arrived():
    rng = np.random.default_rng(7)
    meta = _meta(rng.uniform(0.6, 0.9, (12, 3)), rng.uniform(0.01, 2.0, (12, 3)))
    s = ConditionedStrategy(h=math.inf).fit(meta)
    info = meta.dataset_info(meta.dataset_ids[0])
    history = [Observation("cheap", 0.8, 0.3), Observation("flaky", math.nan, 0.5, "error"),
               Observation("good", 0.7, 1.2)]
    grown = s.policy(info)
    for k in range(len(history) + 1):  # the live loop: one list growing
        incremental = grown.scores(history[:k])
        fresh = s.policy(info).scores(list(history[:k]))
        for a, b in zip(incremental, fresh):
            np.testing.assert_allclose(a, b)
    assert np.isinf(grown.scores(history)[0]).all()  # every learner tried
    other = [Observation("good", 0.9, 0.1)]  # a different history on the same policy starts over
    np.testing.assert_allclose(grown.scores(other)[1], s.policy(info).scores(other)[1])
    assert grown.scores(other)[1][s.learners_.index("good")] == pytest.approx(to_gain(0.9, 0.5))


def test_near_best_acquisition_pays_for_the_learner_that_is_surely_near_the_best():
    # 'cheap' gains 0.5 over the majority class for 1 s, 'good' 0.9 for 2 s, on every prior dataset:
    # expected improvement per second picks 'cheap' (0.5 / 1 > 0.9 / 2); the probability of being
    # within 1 point of the best per second picks 'good' (about 1 / 2 against 0 / 1)
    rng = np.random.default_rng(8)
    acc = np.column_stack([0.75 + rng.normal(0, 0.01, 30), 0.95 + rng.normal(0, 0.01, 30)])
    meta = _meta(acc, np.column_stack([np.full(30, 1.0), np.full(30, 2.0)]))
    info = {"n_instances": 500, "n_features": 10, "n_classes": 2, "majority_fraction": 0.5}
    ei = ConditionedStrategy(h=math.inf).fit(meta)
    near = ConditionedStrategy(h=math.inf, acq="near").fit(meta)
    assert ei.policy(info).next([]) == "cheap"
    policy = near.policy(info)
    assert policy.next([]) == "good"
    score = policy.scores([])[0]
    assert score[near.learners_.index("good")] == pytest.approx(1 / 2, abs=0.02)  # q ~ 1 at 2 s
    assert score[near.learners_.index("cheap")] == 0.0
    # once 'good' is tested every draw has its near-best learner: expected improvement per second orders the rest
    history = [Observation("good", 0.95, 2.0)]
    np.testing.assert_allclose(policy.scores(history)[0], ei.policy(info).scores(history)[0])
    assert parse_strategy("ei:acq=near,draws=64,seed=3").name == "ei:acq=near,draws=64,seed=3"
    for bad in ("ei:acq=maybe", "ei:draws=2", "ei:seed=-1"):
        with pytest.raises(InputError):
            parse_strategy(bad)


def test_expected_landmark_seconds_recovers_the_cost_law():
    from algorank.evaluation.cv.metabuild import expected_landmark_seconds

    rng = np.random.default_rng(9)
    rows = rng.integers(50, 2000, 30).astype(float)
    cols = rng.integers(2, 5000, 30).astype(float)
    table = pd.DataFrame({"landmark_rows": rows, "n_features_onehot": cols,
                          "landmark_1nn_time": 0.05 + 2e-10 * rows ** 2 * cols, "landmark_stump_time": 3e-7 * rows * cols})
    assert expected_landmark_seconds(table, 5000, 4000) == pytest.approx(0.05 + 2e-10 * 2000 ** 2 * 4000
                                                                         + 3e-7 * 2000 * 4000, rel=1e-6)
    assert math.isnan(expected_landmark_seconds(table.drop(columns="landmark_1nn_time"), 100, 10))
    assert math.isnan(expected_landmark_seconds(table.head(4), 100, 10))


def test_recommend_skips_landmarkers_that_would_eat_the_budget():
    import algorank

    rng = np.random.default_rng(10)
    meta = _meta(rng.uniform(0.6, 0.9, (8, 2)), rng.uniform(0.001, 0.01, (8, 2)))
    table = meta.datasets.assign(landmark_1nn=0.7, landmark_stump=0.6, landmark_rows=150, n_features_onehot=4,
                                 landmark_stump_time=0.01)
    slow = MetaDataset(meta.runs, table.assign(landmark_1nn_time=30.0))  # priors say: landmarkers take 30 s
    fast = MetaDataset(meta.runs, table.assign(landmark_1nn_time=0.001))
    skipped = algorank.recommend("sklearn:iris", strategy="ei", meta=slow, budget=20, dry_run=True)
    assert "more than 10% of the 20 s budget" in skipped.dataset_info["landmarks_skipped"]
    assert "landmark_1nn" not in skipped.dataset_info and len(skipped.plan) == 2  # it still plans, without them
    measured = algorank.recommend("sklearn:iris", strategy="ei", meta=fast, budget=20, dry_run=True)
    assert "landmarks_skipped" not in measured.dataset_info and 0 < measured.dataset_info["landmark_1nn"] <= 1
    unbounded = algorank.recommend("sklearn:iris", strategy="ei", meta=slow, budget=None, dry_run=True)
    assert "landmark_1nn" in unbounded.dataset_info  # no budget to protect


def test_full_conditioning_agrees_with_the_marginal_one():
    rng = np.random.default_rng(11)
    acc = rng.uniform(0.5, 0.95, (40, 5))
    model = fit_accuracy_model(acc, np.full(40, 0.5), list("abcde"))
    mu, cov = model.prior(np.ones(40))
    mean, sd = model.condition(mu, cov, [1, 3], [0.4, 0.7])
    full_mean, post = model.condition_full(mu, cov, [1, 3], [0.4, 0.7])
    np.testing.assert_allclose(full_mean, mean)
    np.testing.assert_allclose(np.sqrt(np.maximum(np.diag(post), 1e-12)), sd, atol=1e-9)
    np.testing.assert_allclose(post, post.T)
    assert (post[[1, 3]] == 0).all() and np.linalg.eigvalsh(post).min() > -1e-9
