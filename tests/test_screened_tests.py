"""Screened tests: a test that stops after its first fold when that fold scores below the bar its policy gave it
(``screen=`` of the ``ei`` family), in the simulated environment, the benchmark's charges, the evaluator and the
live environment."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from algorank.evaluation.cv.datasets import load_dataset
from algorank.evaluation.cv.evaluator import NOT_RUN_SCREENED, Evaluator
from algorank.evaluation.meta.scoring import leave_one_dataset_out
from algorank.metadata.dataset import MetaDataset
from algorank.metadata.errors import InputError
from algorank.recommender.kernel.environments import MetaArrays, SimulatedEnvironment, SkipUnavailable, meta_arrays
from algorank.recommender.kernel.time_model import TimeModel, first_fold_arrays, live_arrays, live_test_arrays
from algorank.recommender.kernel.trace import Observation, encode, run_policy, screen_of
from algorank.recommender.live.environment import LiveEnvironment
from algorank.recommender.registry import parse_strategy
from test_fast_loo_fit import _meta


def _runs_meta() -> MetaDataset:
    """Two datasets; on d0 learner a has three folds listed out of order, b two, c one run, e a failed fold."""
    rows = [
        ("d0", "a", 0, 2, 0.70, 0.3), ("d0", "a", 0, 0, 0.60, 0.1), ("d0", "a", 0, 1, 0.80, 0.2),
        ("d0", "b", 1, 0, 0.95, 2.0), ("d0", "b", 0, 1, 0.85, 1.5),  # repeat 0 comes first: fold 1 of it
        ("d0", "c", 0, 0, 0.75, 4.0),
        ("d0", "e", 0, 0, 0.65, 1.0), ("d0", "e", 0, 1, np.nan, 1.0),
        ("d1", "a", 0, 0, 0.50, 0.5), ("d1", "a", 0, 1, 0.52, 0.7),
        ("d1", "b", 0, 0, 0.90, 1.0), ("d1", "b", 0, 1, 0.92, 1.2),
    ]
    runs = pd.DataFrame(rows, columns=["dataset", "learner", "repeat", "fold", "accuracy", "fit_time"])
    runs["status"] = np.where(runs["accuracy"].isna(), "error", "ok")
    ds = pd.DataFrame({"dataset": ["d0", "d1"], "n_instances": [500.0, 800.0], "n_features": [5.0, 6.0],
                       "n_classes": [2.0, 2.0], "majority_fraction": [0.5, 0.5]})
    return MetaDataset(runs, ds)


def test_first_fold_arrays_take_each_tests_first_run_and_leave_single_runs_and_failures_out():
    meta = _runs_meta()
    arrays = meta_arrays(meta)
    acc, sec = first_fold_arrays(meta, arrays)
    col = {l: j for j, l in enumerate(arrays.learners)}
    assert (acc[0, col["a"]], sec[0, col["a"]]) == (0.60, 0.1)  # repeat 0, fold 0, however the runs are listed
    assert (acc[0, col["b"]], sec[0, col["b"]]) == (0.85, 1.5)  # the smallest repeat first, then the fold
    assert np.isnan([acc[0, col["c"]], sec[0, col["c"]]]).all()  # one run: nothing to stop early
    assert np.isnan(acc[0, col["e"]]) and np.isnan(sec[0, col["e"]])  # a failed fold: no first-fold screen
    assert (acc[1, col["b"]], sec[1, col["b"]]) == (0.90, 1.0)
    # a live test of 5 folds: the first fold costs its time plus the test's overhead; the tests keep 5 x t + o
    live, model, _ = live_arrays(meta, folds=5, overhead=0.25)
    assert live.first_seconds[0, col["a"]] == pytest.approx(0.1 + 0.25)
    assert live.seconds[0, col["a"]] == pytest.approx(5 * 0.2 + 0.25)
    np.testing.assert_array_equal(np.isnan(live.first_accuracy), np.isnan(acc))
    # kept through take(); one-fold tests (the recorded times) have none
    taken = live.take([1])
    assert taken.first_accuracy.shape == (1, len(live.learners)) and taken.first_accuracy[0, col["b"]] == 0.90
    assert live_test_arrays(TimeModel(), arrays, meta).first_accuracy is None
    assert live_test_arrays(model, arrays, arrays).first_accuracy is None  # no runs: nothing to take them from
    assert live_test_arrays(model, arrays, meta, metric="balanced_accuracy").first_accuracy is None  # as live


def _screen_arrays() -> MetaArrays:
    acc = np.array([[0.70, 0.90, 0.80, np.nan]])
    sec = np.array([[1.0, 10.0, 3.0, 50.0]])
    return MetaArrays(datasets=("d",), learners=("a", "b", "c", "t"), accuracy=acc, seconds=sec,
                      majority=np.array([0.5]), censored=np.array([[False, False, False, True]]),
                      first_accuracy=np.array([[0.72, 0.88, np.nan, np.nan]]),
                      first_seconds=np.array([[0.3, 2.5, np.nan, np.nan]]))


def test_the_simulated_environment_stops_a_test_after_a_first_fold_below_the_bar():
    env = SimulatedEnvironment(_screen_arrays(), "d")
    assert env.screens
    o = env.test("b", screen=0.89)
    assert (o.learner, o.seconds, o.status, o.capped, o.screened) == ("b", 2.5, "timeout", True, True)
    assert math.isnan(o.accuracy) and "0.8800" in o.message and "0.8900" in o.message and o.fold_accuracy == 0.88
    assert env.test("b", screen=0.88) == Observation("b", 0.9, 10.0)  # not below the bar: every fold
    assert env.test("c", screen=0.99) == Observation("c", 0.8, 3.0)  # no first fold recorded: every fold
    assert env.test("b", screen=0.95, limit=2.0).screened is False  # the limit stops it before its first fold ends
    assert env.test("b", screen=0.95, limit=2.0).capped and env.test("b", screen=0.95, limit=2.0).seconds == 2.0
    assert env.test("b", screen=0.95, limit=2.5).screened  # its first fold fits in the limit
    plain = MetaArrays(datasets=("d",), learners=("a",), accuracy=np.array([[0.7]]), seconds=np.array([[1.0]]),
                       majority=np.array([0.5]))
    assert SimulatedEnvironment(plain, "d").screens is False


class _Listed:
    def __init__(self, order, bars) -> None:
        self.order, self.bars, self.done = list(order), dict(bars), []

    def next(self, history):
        self.done = [o.learner for o in history]
        return next((l for l in self.order if l not in self.done), None)

    def screen(self, learner):
        return self.bars.get(learner)


class _Recording:
    def __init__(self, env, screens=True) -> None:
        self.env, self.calls = env, []
        if screens:
            self.screens = True

    def test(self, learner, **kwargs):
        self.calls.append((learner, kwargs))
        return self.env.test(learner, **kwargs)


def test_run_policy_hands_the_bar_only_to_an_environment_that_screens_and_the_benchmark_charges_the_fold():
    env = _Recording(SimulatedEnvironment(_screen_arrays(), "d"))
    trace = run_policy(SkipUnavailable(_Listed(["a", "b", "c"], {"b": 0.95}), ["a", "b", "c"]), env, dataset="d")
    assert env.calls == [("a", {}), ("b", {"screen": 0.95}), ("c", {})]
    assert [o.screened for o in trace.observations] == [False, True, False]
    np.testing.assert_array_equal(trace.seconds, [1.0, 2.5, 3.0])
    assert trace.to_frame()["screened"].tolist() == [False, True, False]
    assert [r["screened"] for r in trace.to_records()] == [False, True, False]
    cols, charges = encode(trace, {"a": 0, "b": 1, "c": 2, "t": 3})
    assert cols == [0, 1, 2] and charges[1] == 2.5 and np.isnan([charges[0], charges[2]]).all()
    blind = _Recording(SimulatedEnvironment(_screen_arrays(), "d"), screens=False)
    run_policy(_Listed(["a", "b"], {"b": 0.95}), blind, dataset="d")
    assert blind.calls == [("a", {}), ("b", {})]  # an environment that cannot stop after a fold runs every fold
    assert screen_of(object(), "a") is None and screen_of(_Listed([], {"a": math.inf}), "a") is None


def _policy(spec: str, meta, held: str):
    strategy = parse_strategy(spec).with_time_model(time_overhead=0.1, time_scale=5.0)
    strategy.fit(meta.subset(datasets=[d for d in meta.dataset_ids if d != held]))
    return strategy, strategy.policy(meta.dataset_info(held))


def test_the_bar_is_the_best_accuracy_so_far_less_z_binomial_standard_errors_of_one_fold():
    meta = _meta(0)
    strategy, policy = _policy("eiu:screen=2", meta, "d04")
    assert strategy.screen == 2.0 and strategy.name == "eiu:screen=2"
    rows = float(meta.dataset_info("d04")["n_instances"])
    first = policy.next([])
    assert policy.screen(first) is None  # nothing found yet: no bar
    others = [l for l in strategy.learners_ if l != first]
    history = [Observation(first, 0.8, 1.0)]
    second = policy.next(history)
    assert policy.screen(second) == pytest.approx(0.8 - 2.0 * math.sqrt(0.8 * 0.2 * 5.0 / rows))
    # a screened learner is not conditioned on, and is tested again in full once every other one has been
    history.append(Observation(second, math.nan, 0.2, "timeout", "stopped after its first fold", capped=True,
                               screened=True))
    rest = []
    while len(rest) < len(others) - 1:
        learner = policy.next(history)
        assert learner not in (first, second)
        rest.append(learner)
        history.append(Observation(learner, 0.6, 1.0))
    assert policy.next(history) == second and policy.screen(second) is None
    assert _policy("eiu:screen=inf", meta, "d04")[1].screen(first) is None  # off


def test_a_screened_fold_conditions_the_others_as_a_noisy_reading_and_never_sets_the_best():
    meta = _meta(1)
    strategy, policy = _policy("eiu:screen=2", meta, "d05")
    rows, maj = float(meta.dataset_info("d05")["n_instances"]), policy.majority
    first = policy.next([])
    history = [Observation(first, 0.9, 1.0)]
    second = policy.next(history)
    fold = maj + 0.6 * (1.0 - maj)  # above the floor (the majority class)
    history.append(Observation(second, math.nan, 0.2, "timeout", "stopped after its first fold", capped=True,
                               screened=True, fold_accuracy=fold))
    policy.next(history)
    assert policy._best_accuracy == 0.9  # the fold found no model
    k = len(policy._seen) - 1
    assert policy._seen[k] == policy.index[second] and policy._values[k] == pytest.approx((fold - maj) / (1 - maj))
    se = math.sqrt(fold * (1 - fold) * 5.0 / rows)
    assert policy._noise[k] == pytest.approx((se / (1 - maj)) ** 2 + strategy.accuracy_.noise)
    # the sequential posterior is the closed-form Gaussian conditioning with a variance per observation
    seen = np.array(policy._seen)
    noise = np.array([strategy.accuracy_.noise if e is None else e for e in policy._noise])
    mu, cov = policy.mu, policy.cov
    k_ss = cov[np.ix_(seen, seen)] + np.diag(noise)
    want = mu + cov[:, seen] @ np.linalg.solve(k_ss, np.array(policy._values) - mu[seen])
    np.testing.assert_allclose(policy._posterior().mean, want, rtol=0, atol=1e-9)
    _, no_rows = _policy("eiu:screen=2", meta, "d04")
    no_rows.rows = math.nan
    no_rows.next([Observation(first, 0.8, 1.0)])
    assert no_rows.screen(second) is None  # the dataset's rows unknown: no standard error, no bar


def test_screen_specs_round_trip_and_bad_values_are_refused():
    assert parse_strategy("eiu").screen == 2.0 and parse_strategy("eiu").default_name() == "eiu:h=0.7,p=0.75"
    assert parse_strategy("eiu:screen=inf").default_name() == "eiu:h=0.7,p=0.75,screen=inf"
    assert math.isinf(parse_strategy("ei").screen) and math.isinf(parse_strategy("eiu:screen=inf").screen)
    assert "screen=1.5" in parse_strategy("ei:screen=1.5").default_name()
    assert parse_strategy("eit:screen=1").with_time_model(time_scale=5.0).screen == 1.0
    assert parse_strategy("eiu:screen=3").with_time_model(time_scale=5.0).screen == 3.0
    for bad in ("ei:screen=-1", "eiu:screen=abc"):
        with pytest.raises(InputError, match="screen"):
            parse_strategy(bad)


@pytest.mark.parametrize("seed", [0, 1])
def test_screened_sequences_agree_between_the_fast_and_the_generic_path_and_are_charged_their_fold(seed):
    meta = _meta(seed)
    tm = TimeModel(overhead=0.3, scale=5.0)
    spec = "eiu:screen=0"
    fast = leave_one_dataset_out(parse_strategy(spec), meta, time_model=tm)
    generic = leave_one_dataset_out(parse_strategy(spec), meta, time_model=tm, fast=False)
    np.testing.assert_array_equal(fast.sequences, generic.sequences)
    np.testing.assert_allclose(fast.seconds, generic.seconds, rtol=0, atol=1e-12)
    charges = generic.traces.charges
    assert charges is not None and np.isfinite(charges).any()  # some first folds were below the bar
    arrays = live_test_arrays(tm, meta_arrays(meta), meta)
    for i in np.flatnonzero(np.isfinite(charges).any(axis=1))[:3]:
        d = generic.datasets[i]
        strategy = parse_strategy(spec).with_time_model(time_overhead=0.3, time_scale=5.0)
        strategy.fit(meta.subset(datasets=[e for e in meta.dataset_ids if e != d]))
        env = SimulatedEnvironment(arrays, d)
        trace = run_policy(SkipUnavailable(strategy.policy(meta.dataset_info(d)), env.available), env, dataset=d)
        np.testing.assert_allclose(generic.curve(d).seconds, trace.seconds, rtol=0, atol=1e-12)
        row = arrays.row(d)
        for o in trace.observations:
            if o.screened:  # the first fold's time plus the overhead, not five folds
                j = arrays.learners.index(o.learner)
                assert o.seconds == pytest.approx(arrays.first_seconds[row, j])
                assert o.seconds < arrays.seconds[row, j]
    plain = leave_one_dataset_out(parse_strategy("eiu:screen=inf"), meta, time_model=tm)
    assert plain.traces.charges is None or not np.isfinite(plain.traces.charges).any()


def _loaded(tmp_path):
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    frame = X.iloc[:, :6].copy()
    frame["target"] = y
    path = tmp_path / "bc.csv"
    frame.to_csv(path, index=False)
    return load_dataset(str(path), target="target")


def test_the_evaluator_runs_no_other_fold_after_a_first_fold_below_the_bar_and_stores_none_of_them(tmp_path):
    data = _loaded(tmp_path)
    store = tmp_path / "folds.sqlite"
    ev = Evaluator(cv=5, repeats=1, progress=False, model_bytes=False, store=str(store))
    res = ev.evaluate(data, ["lda", "bernoulli-nb"], screen={"bernoulli-nb": 1.01, "lda": 0.0},
                      report_failures=False)
    runs = res.runs
    nb = runs[runs["learner"].str.contains("BernoulliNB")].sort_values("fold")
    lda = runs[runs["learner"].str.contains("LinearDiscriminant")]
    assert nb["status"].tolist() == ["ok"] + ["timeout"] * 4
    assert (nb["message"].iloc[1:] == NOT_RUN_SCREENED).all() and np.isfinite(nb["accuracy"].iloc[0])
    assert (lda["status"] == "ok").all() and len(lda) == 5
    # the folds it did not run were not stored: without a bar they run now, the first one read from the store
    again = Evaluator(cv=5, repeats=1, progress=False, model_bytes=False, store=str(store))
    full = again.evaluate(data, ["bernoulli-nb"], report_failures=False).runs
    assert (full["status"] == "ok").all() and len(full) == 5
    assert full.sort_values("fold")["accuracy"].iloc[0] == nb["accuracy"].iloc[0]
    with pytest.raises(InputError, match="screen"):
        ev.evaluate(data, ["lda"], screen={"lda": "high"})


def test_a_live_test_is_screened_after_its_first_fold_and_other_metrics_run_every_fold(tmp_path):
    data = _loaded(tmp_path)
    env = LiveEnvironment(data, cv=5)
    assert env.screens
    o = env.test("bernoulli-nb", screen=1.01)
    assert (o.status, o.capped, o.screened) == ("timeout", True, True) and math.isnan(o.accuracy)
    assert "stopped after its first fold" in o.message and env.time_ratios == [] and 0.0 < o.fold_accuracy < 1.0
    ok = env.test("lda", screen=0.0)
    assert ok.status == "ok" and not ok.screened and 0.5 < ok.accuracy <= 1.0
    assert LiveEnvironment(data, cv=5, metric="balanced_accuracy").screens is False
    assert LiveEnvironment(data, cv=5, metric="balanced_accuracy").test("lda", screen=1.01).screened is False
    with pytest.raises(InputError, match="screen"):
        env.test("lda", screen="x")


class _Screening:
    """Hands out ``order`` in turn; the bar of every test is the best accuracy it is given plus ``margin``."""

    def __init__(self, order, margin):
        self.order, self.margin, self.asked = list(order), margin, []

    def next(self, history):
        seen = {o.learner for o in history}
        return next((l for l in self.order if l not in seen), None)

    def screen(self, learner, *, best=None):
        self.asked.append((learner, best))
        return None if best is None else best + self.margin


def test_parallel_tests_take_the_bar_from_the_finished_tests_only(tmp_path):
    import joblib

    from algorank.recommender.live.parallel import run_parallel

    data = _loaded(tmp_path)
    env = LiveEnvironment(data, cv=5)
    policy = _Screening(["lda", "bernoulli-nb", "decision-tree"], margin=0.5)  # a bar above any accuracy
    with joblib.parallel_config(backend="threading"):
        trace = run_parallel(policy, env, n_jobs=1, expected={})
    by = {o.learner: o for o in trace.observations}
    assert by["lda"].status == "ok" and not by["lda"].screened
    assert by["bernoulli-nb"].screened and by["decision-tree"].screened  # every fold after the first result
    assert policy.asked[0] == ("bernoulli-nb", by["lda"].accuracy)  # the finished test's accuracy, no stand-in
    with joblib.parallel_config(backend="threading"):
        loose = run_parallel(_Screening(["lda", "bernoulli-nb"], margin=-1.0), LiveEnvironment(data, cv=5),
                             n_jobs=2, expected={"lda": (0.99, 0.1), "bernoulli-nb": (0.99, 0.1)})
    assert not any(o.screened for o in loose.observations)  # a bar below any accuracy stops nothing
