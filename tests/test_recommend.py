"""recommend(): planned order, live loop, failures, budget, top, interruption."""

import math

import numpy as np
import pandas as pd
import pytest

from algorank.evaluation.cv.datasets import load_dataset
from algorank.recommender.live.environment import LiveEnvironment
from algorank.recommender.kernel.time_model import LIVE_OVERHEAD
from algorank.recommender.kernel.trace import Observation
from algorank.metadata.dataset import MetaDataset
from algorank.metadata.errors import InputError
from algorank.recommender.base import OrderPolicy
from algorank.recommender.live.recommend import recommend
from helpers_meta import interrupted_at  # tests/ is on the path


def _meta(learners):
    rows = []
    for d in range(4):
        for i, l in enumerate(learners):
            rows.append({"dataset": f"d{d}", "learner": l, "repeat": 0, "fold": 0,
                         "accuracy": 0.9 - 0.1 * i, "fit_time": 0.01 * (i + 1)})
    ds = pd.DataFrame({"dataset": [f"d{d}" for d in range(4)], "n_instances": [150, 300, 600, 1000],
                       "n_features": 4, "n_classes": 3, "majority_fraction": 0.34})
    return MetaDataset(pd.DataFrame(rows), ds)


LEARNERS = ["sklearn.naive_bayes.GaussianNB", "sklearn.tree.DecisionTreeClassifier",
            "sklearn.neighbors.KNeighborsClassifier"]


@pytest.fixture(scope="module")
def iris():
    return load_dataset("sklearn:iris")


def test_live_environment_runs_a_learner(iris):
    env = LiveEnvironment(iris, cv=3)
    o = env.test("sklearn.naive_bayes.GaussianNB")
    assert o.status == "ok" and 0.9 < o.accuracy <= 1.0 and o.seconds > 0
    bad = env.test("no.such.Learner")
    assert bad.status == "error" and math.isnan(bad.accuracy) and bad.message


def test_recommend_follows_the_plan_and_reports_the_best(iris):
    meta = _meta(LEARNERS)
    r = recommend(iris, strategy="ar:p=0", meta=meta, budget_seconds=None, cv=3)
    assert [p.learner for p in r.plan] == LEARNERS  # AR0: by accuracy
    assert r.plan[0].expected_accuracy == pytest.approx(0.9)
    # live time model (default): median fit time x 3 folds + the calibrated per-test overhead
    assert r.plan[0].expected_seconds == pytest.approx(0.03 + LIVE_OVERHEAD)
    assert r.time_model == f"3 x fit + {LIVE_OVERHEAD:g} s"
    assert r.trace.learners == LEARNERS and r.stop_reason == "policy"
    best = max((o for o in r.trace.observations), key=lambda o: o.accuracy)
    assert r.best == best
    d = r.to_dict()
    assert set(d) >= {"order", "trace", "best"}
    assert d["best"]["accuracy"] == pytest.approx(best.accuracy)
    assert d["trace"][-1]["cumulative_seconds"] == pytest.approx(float(np.sum(r.trace.seconds)))
    assert r.dataset_info["n_instances"] == 150 and r.dataset_info["n_classes"] == 3


def test_top_dry_run_and_exclude(iris):
    meta = _meta(LEARNERS)
    r = recommend(iris, strategy="ar:p=0", meta=meta, top=1, cv=3)
    assert len(r.trace.observations) == 1 and r.stop_reason == "top"
    dry = recommend(iris, strategy="ar:p=0", meta=meta, dry_run=True, top=2)
    assert dry.trace is None and len(dry.plan) == 2 and dry.stop_reason == "dry-run"
    ex = recommend(iris, strategy="ar:p=0", meta=meta, dry_run=True, exclude_datasets=["d0"])
    assert ex.excluded == ("d0",)
    with pytest.raises(InputError):
        recommend(iris, meta=meta, dry_run=True, exclude_datasets=["nope"])


def test_failing_learner_is_skipped_and_loop_goes_on(iris):
    # the meta-data names a learner whose fit fails here: its test fails, the loop goes on
    # (CategoricalNB rejects the negative values of the standardised features)
    learners = ['sklearn.naive_bayes.CategoricalNB{"alpha": 1.0}', "sklearn.naive_bayes.GaussianNB"]
    r = recommend(iris, strategy="ar:p=0", meta=_meta(learners), budget_seconds=None, cv=3)
    assert r.trace.learners == learners and r.rank_only == ()
    assert r.trace.observations[0].status == "error" and "Negative values" in r.trace.observations[0].message
    assert r.best is not None and r.best.learner == "sklearn.naive_bayes.GaussianNB"


def test_a_parameter_outside_its_declared_range_is_rank_only(iris):
    # the class declares C > 0: a value from data outside it is refused before anything is built
    learners = ['sklearn.linear_model.LogisticRegression{"C": -1.0}', "sklearn.naive_bayes.GaussianNB"]
    r = recommend(iris, strategy="ar:p=0", meta=_meta(learners), budget_seconds=None, cv=3)
    assert r.rank_only == ('sklearn.linear_model.LogisticRegression{"C": -1.0}',)
    assert r.trace.learners == ["sklearn.naive_bayes.GaussianNB"]


def test_learner_that_does_not_resolve_is_rank_only(iris):
    # a learner id that names no estimator class here is ranked and shown, never run
    learners = ["sklearn.naive_bayes.NoSuchNB", "sklearn.naive_bayes.GaussianNB"]
    r = recommend(iris, strategy="ar:p=0", meta=_meta(learners), budget_seconds=None, cv=3)
    assert [p.learner for p in r.plan] == learners
    assert r.rank_only == ("sklearn.naive_bayes.NoSuchNB",)
    assert r.trace.learners == ["sklearn.naive_bayes.GaussianNB"]


def test_budget_and_bad_input(iris):
    meta = _meta(LEARNERS)
    r = recommend(iris, strategy="ar:p=0", meta=meta, budget_seconds=1e-6, cv=3)
    # the budget counts from the call: used up by the set-up, no test is started
    assert r.stop_reason == "budget" and r.trace.observations == ()
    for bad in (0, -1, float("nan")):
        with pytest.raises(InputError, match="budget"):
            recommend(iris, meta=meta, budget_seconds=bad)
    with pytest.raises(InputError, match="unknown strategy"):
        recommend(iris, meta=meta, strategy="nope", dry_run=True)
    with pytest.raises(InputError, match="top"):
        recommend(iris, meta=meta, top=0)


def test_nothing_finished_gives_a_clear_summary(iris, monkeypatch):
    meta = _meta(LEARNERS)

    def failing(self, learner):
        return Observation(learner, float("nan"), 2.0, "timeout", "fold took longer than 1 s")

    monkeypatch.setattr(LiveEnvironment, "test", failing)
    r = recommend(iris, strategy="ar:p=0", meta=meta, budget_seconds=1.0, cv=3)
    assert r.best is None and r.stop_reason == "budget"
    assert "no learner finished" in r.summary and "GaussianNB" in r.summary


def test_interrupt_returns_best_so_far(iris, monkeypatch):
    meta = _meta(LEARNERS)
    monkeypatch.setattr(LiveEnvironment, "test", interrupted_at(2))
    r = recommend(iris, strategy="ar:p=0", meta=meta, budget_seconds=None, cv=3)
    assert r.stop_reason == "interrupted" and r.best.learner == LEARNERS[0]


def test_time_model_fit_and_explicit_spec_and_objects(iris):
    meta = _meta(LEARNERS)
    fit = recommend(iris, strategy="ar:p=0", meta=meta, dry_run=True, cv=3, time_model="fit")
    assert fit.plan[0].expected_seconds == pytest.approx(0.03) and fit.time_model == "fit"
    own = recommend(iris, strategy="ar:p=1/4,overhead=1,scale=2", meta=meta, dry_run=True, cv=3, time_overhead=0.5)
    assert own.time_model == "2 x fit + 1 s"  # the spec's own time model is kept
    assert own.plan[0].expected_seconds == pytest.approx(0.03 + 0.5)  # expected live time uses cv and the overhead
    from algorank.recommender.average_ranking import AverageRanking

    given = recommend(iris, strategy=AverageRanking(p=0.25), meta=meta, dry_run=True, cv=3)
    assert given.time_model == "given"
    with pytest.raises(InputError, match="time_model"):
        recommend(iris, strategy="ar:p=0", meta=meta, dry_run=True, time_model="wall")


def test_all_nan_meta_features_give_no_warning(iris):
    import warnings

    from algorank.recommender.live.recommend import expected_performance

    meta = _meta(LEARNERS)
    meta = MetaDataset(meta.runs, meta.datasets.assign(majority_fraction=np.nan, n_classes=np.nan))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = expected_performance(meta, {"n_instances": 150, "n_features": 4}, neighbours=1, folds=2, overhead=0.1)
    # the nearest prior dataset by the known features is d0 (150 rows): its values
    acc, sec = out[LEARNERS[1]]
    assert acc == pytest.approx(0.8) and sec == pytest.approx(2 * 0.02 + 0.1)


def test_failed_learner_is_one_note_not_an_evaluator_warning(iris, caplog):
    import logging

    caplog.set_level(logging.WARNING)
    env = LiveEnvironment(iris, cv=3, allow_modules=["helpers_estimators"])
    o = env.test("helpers_estimators.FailingClassifier")
    assert o.status == "error" and "deliberate failure" in o.message and "\n" not in o.message
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    # only live tests ask for no failure warning (report_failures=False): the evaluator still warns elsewhere
    from algorank.evaluation.cv.evaluator import Evaluator

    Evaluator(scheme="cv", cv=3, repeats=1, progress=False, allow_modules=["helpers_estimators"]).evaluate(
        iris, ["helpers_estimators.FailingClassifier"])
    assert any("failed on" in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)


def _meta_with_predict(learners, predict):
    meta = _meta(learners)
    runs = meta.runs.assign(predict_time=predict)
    return MetaDataset(runs, meta.datasets)


def test_time_kind_follows_the_meta_data(iris):
    from algorank.recommender.kernel.time_model import LIVE_FIXED_OVERHEAD
    from algorank.recommender.kernel.time_model import meta_time_kind

    lcdb_like = _meta(LEARNERS)  # no predict times
    assert meta_time_kind(lcdb_like) == "fit_time"
    evaluator_like = _meta_with_predict(LEARNERS, 0.02)
    assert meta_time_kind(evaluator_like) == "fit_predict_time"
    r = recommend(iris, strategy="ar:p=0", meta=evaluator_like, dry_run=True, cv=3)
    # expected test time: 3 x (median fit + predict) + the fixed overhead
    assert r.plan[0].expected_seconds == pytest.approx(3 * (0.01 + 0.02) + LIVE_FIXED_OVERHEAD)
    assert r.time_model == f"3 x (fit+predict) + {LIVE_FIXED_OVERHEAD:g} s"
    own = recommend(iris, strategy="ar:p=1/4,time=fit_time", meta=evaluator_like, dry_run=True, cv=3)
    assert own.time_model == "fit"  # a spec that names its time kind is used as given


def test_predict_time_changes_the_time_aware_order(iris):
    # learner 0 is the most accurate and the fastest to fit, but predicting with it is slow
    # (like kNN): with fit times only it goes first, with fit + predict it goes last
    rows = []
    for d in range(4):
        for i, (acc, fit, pred) in enumerate([(0.90, 0.001, 2.0), (0.88, 0.01, 0.001), (0.87, 0.02, 0.001)]):
            rows.append({"dataset": f"d{d}", "learner": LEARNERS[i], "repeat": 0, "fold": 0, "accuracy": acc,
                         "fit_time": fit, "predict_time": pred})
    meta = MetaDataset(pd.DataFrame(rows))
    with_predict = recommend(iris, strategy="ar:p=1/4", meta=meta, dry_run=True, cv=3)
    assert [p.learner for p in with_predict.plan][-1] == LEARNERS[0]
    fit_only = recommend(iris, strategy="ar:p=1/4", meta=meta, dry_run=True, cv=3, time_model="fit")
    assert fit_only.plan[0].learner == LEARNERS[0]


@pytest.mark.parametrize("spec", ["ar:p=1/4", "at:p=1/4,sim=tested", "lt:h=inf"])
def test_every_registered_strategy_gets_the_live_time_model(iris, spec):
    # regression: the live time model used to assign .name on the strategy, which
    # ActiveTesting exposes as a read-only property (recommend --strategy at:... crashed)
    from algorank.recommender.live.recommend import live_strategy

    meta = _meta_with_predict(LEARNERS, 0.02)
    strat, used, kind, live = live_strategy(spec, meta, cv=3, time_overhead=0.5)
    assert strat.name == spec and kind == "fit_predict_time" and used == "3 x (fit+predict) + 0.5 s"
    assert live.scale == 3 and live.overhead == 0.5
    r = recommend(iris, strategy=spec, meta=meta, dry_run=True, cv=3)
    assert sorted(p.learner for p in r.plan) == sorted(LEARNERS)


def test_prior_matches_flag_a_dataset_the_meta_data_has_seen(iris, caplog):
    from algorank.recommender.live.recommend import prior_matches

    meta = _meta(LEARNERS)  # d0 has iris's shape: 150 rows, 4 features, 3 classes, but another name
    assert recommend(iris, strategy="ar:p=0", meta=meta, dry_run=True).prior_matches == ()  # the shape alone: no
    runs, ds = meta.runs.copy(), meta.datasets.copy()
    runs["dataset"] = runs["dataset"].replace({"d0": "iris"})
    ds["dataset"] = ds["dataset"].replace({"d0": "iris"})
    ds["name"] = ds["dataset"]
    named = MetaDataset(runs, ds)
    with caplog.at_level("WARNING", logger="algorank.recommender.live.recommend"):
        r = recommend(iris, strategy="ar:p=0", meta=named, dry_run=True)
    assert r.prior_matches == ("iris",) and r.to_dict()["prior_matches"] == ["iris"]
    assert r.to_dict()["prior_match_details"] == [{"dataset": "iris", "by": "name and shape"}]
    assert "is prior dataset(s) iris (same name and shape: 150 rows, 4 features, 3 classes" in caplog.text
    assert recommend(iris, strategy="ar:p=0", meta=named, dry_run=True, exclude_datasets=["iris"]).prior_matches == ()
    # the name alone never matches, and NaN shapes never match
    assert prior_matches(meta, {"name": "d2", "n_instances": float("nan")}) == ()
    assert prior_matches(meta, {"name": "d2", "n_instances": 600, "n_features": 4, "n_classes": 3}) == ("d2",)
    assert prior_matches(meta, {"name": "new", "n_instances": 151, "n_features": 4, "n_classes": 3}) == ()


def test_live_expectations_are_calibrated_and_the_budget_is_shared_by_folds(iris):
    # the first test takes 10x its expected time (a larger dataset than the prior ones):
    # later expectations are scaled up, and a test at risk gets a per-fold timeout of the
    # budget left divided by the number of folds
    ticks = iter([0.0, 10.0])
    nb, tree = LEARNERS[0], LEARNERS[1]
    env = LiveEnvironment(iris, cv=3, budget_seconds=30.0, expected_seconds={nb: 1.0, tree: 1.0},
                          clock=lambda: next(ticks))
    assert env.timing_reason(tree) == "first test"  # nothing measured yet: timed, whatever is expected
    ev = env._evaluator_for_test(tree)
    assert ev is not env.evaluator and ev.timeout == pytest.approx(10.0)  # 30 s left / 3 folds
    o = env.test(nb)
    assert o.seconds == 10.0 and env.time_ratios == [10.0] and env.calibration == 10.0
    assert env.expected(tree) == 10.0
    ev = env._evaluator_for_test(tree)
    assert ev is not env.evaluator and ev.timeout == pytest.approx(20.0 / 3)
    # faster than expected never lowers the expectations
    env.time_ratios = [0.1]
    assert env.calibration == 1.0
    assert env.timing_reason(tree) is None and env._evaluator_for_test(tree) is env.evaluator  # 4 x 1 s < 20 s
