"""Capped tests: a policy's per-test time limit, the simulated environment that stops a test there, the
``cap`` of the ``ei`` family (stopped learners tested again at the end), and how a benchmark charges them."""

from __future__ import annotations

import math

import numpy as np
import pytest

from algorank.evaluation.meta.scoring import leave_one_dataset_out
from algorank.evaluation.meta.tuning import tune_p_nested
from algorank.evaluation.meta.user_metrics import time_to_eps_rows
from algorank.metadata.errors import InputError
from algorank.recommender.ei import CAP_FLOOR
from algorank.recommender.kernel.environments import MetaArrays, SimulatedEnvironment, SkipUnavailable, meta_arrays
from algorank.recommender.kernel.time_model import TimeModel
from algorank.recommender.kernel.trace import Observation, encode, limit_of, pack, run_policy
from algorank.recommender.registry import parse_strategy
from test_fast_loo_fit import _meta


def _arrays() -> MetaArrays:
    acc = np.array([[0.70, 0.90, 0.80, np.nan]])
    sec = np.array([[1.0, 10.0, 3.0, 50.0]])
    censored = np.array([[False, False, False, True]])
    return MetaArrays(datasets=("d",), learners=("a", "b", "c", "t"), accuracy=acc, seconds=sec,
                      majority=np.array([0.5]), censored=censored)


class _Listed:
    """Tests ``order``, then the learners its environment stopped, with the given limits."""

    def __init__(self, order, limits) -> None:
        self.order, self.limits, self.done = list(order), dict(limits), []

    def next(self, history):
        done = self.done = [o.learner for o in history]
        for learner in self.order:
            if learner not in done:
                return learner
        again = [o.learner for o in history if o.capped and done.count(o.learner) == 1]
        return again[0] if again else None

    def limit(self, learner):
        return math.inf if learner in self.done else self.limits.get(learner, math.inf)


class _Recording:
    def __init__(self, env) -> None:
        self.env, self.calls = env, []

    def test(self, learner, **kwargs):
        self.calls.append((learner, kwargs))
        return self.env.test(learner, **kwargs)


def test_the_simulated_environment_stops_a_test_at_its_limit():
    env = SimulatedEnvironment(_arrays(), "d")
    o = env.test("b", limit=2.5)
    assert (o.learner, o.seconds, o.status, o.capped) == ("b", 2.5, "timeout", True) and math.isnan(o.accuracy)
    assert "2.5 s" in o.message
    assert env.test("b", limit=10.0) == Observation("b", 0.9, 10.0)  # not over its limit: the recorded result
    assert env.test("b") == Observation("b", 0.9, 10.0)
    t = env.test("t", limit=20.0)  # a timeout in the meta-data, stopped sooner
    assert (t.seconds, t.status, t.capped) == (20.0, "timeout", True)
    assert env.test("t", limit=60.0).capped is False and env.test("t", limit=60.0).seconds == 50.0


def test_run_policy_hands_each_limit_to_the_environment_and_keeps_the_charges():
    env = _Recording(SimulatedEnvironment(_arrays(), "d"))
    policy = _Listed(["a", "b", "c"], {"b": 2.0})
    trace = run_policy(SkipUnavailable(policy, ["a", "b", "c"]), env, dataset="d")
    assert env.calls == [("a", {}), ("b", {"limit": 2.0}), ("c", {}), ("b", {})]
    assert trace.learners == ["a", "b", "c", "b"]
    np.testing.assert_array_equal(trace.seconds, [1.0, 2.0, 3.0, 10.0])
    assert [o.capped for o in trace.observations] == [False, True, False, False]
    assert limit_of(object(), "a") == math.inf
    assert [r["capped"] for r in trace.to_records()] == [False, True, False, False]
    assert trace.to_frame()["capped"].tolist() == [False, True, False, False]
    cols, charges = encode(trace, {"a": 0, "b": 1, "c": 2, "t": 3})
    assert cols == [0, 1, 2, 1] and charges[1] == 2.0 and np.isnan([charges[i] for i in (0, 2, 3)]).all()
    seq, ch = pack({0: (cols, charges)}, 2, 4)  # 4 tests of 4 learners: the width stays 4
    np.testing.assert_array_equal(seq, [[0, 1, 2, 1], [-1, -1, -1, -1]])
    assert ch[0, 1] == 2.0 and np.isnan(ch).sum() == 7
    seq, ch = pack({1: ([0, 1, 2, 3, 1], [math.nan, 5.0] + [math.nan] * 3)}, 2, 4)
    assert seq.shape == (2, 5) and ch[1, 1] == 5.0
    assert pack({0: ([0, 1], [math.nan, math.nan])}, 1, 4)[1] is None


def _fitted(spec: str, meta, held: str):
    strategy = parse_strategy(spec)
    strategy.fit(meta.subset(datasets=[d for d in meta.dataset_ids if d != held]))
    return strategy, strategy.policy(meta.dataset_info(held))


def test_the_cap_of_ei_limits_each_test_and_retries_the_stopped_learner_last():
    meta = _meta(0)
    strategy, policy = _fitted("eiu:cap=3", meta, "d04")
    assert strategy.name == "eiu:cap=3" and strategy.cap == 3.0
    first = policy.next([])
    j = policy.index[first]
    assert policy.limit(first) == pytest.approx(max(3.0 * float(policy.seconds[j]), CAP_FLOOR))
    stopped = Observation(first, math.nan, policy.limit(first), "timeout", "stopped", capped=True)
    history = [stopped]
    others = [l for l in strategy.learners_ if l != first]
    seen = []
    while len(seen) < len(others):
        learner = policy.next(history)
        assert policy.limit(first) == math.inf  # stopped once: its next test has no limit
        if not seen:
            assert policy._ratio() == 1.0  # a stopped test is a lower bound: not in the live ratio
        assert learner != first
        seen.append(learner)
        history.append(Observation(learner, 0.7, float(policy.seconds[policy.index[learner]]) * 2.0))
    assert sorted(seen) == sorted(others)
    assert policy._ratio() == pytest.approx(2.0)
    assert policy.next(history) == first  # every other learner tested: the stopped one again, uncapped
    history.append(Observation(first, 0.8, 100.0))
    assert policy.next(history) is None
    # without a cap no limit is set
    _, plain = _fitted("eiu:cap=inf", meta, "d04")
    assert plain.limit(plain.next([])) == math.inf


@pytest.mark.parametrize("spec", ["eiu:cap=1", "ei:cap=1.5", "eit:cap=1"])
@pytest.mark.parametrize("seed", [0, 1])
def test_capped_sequences_agree_between_the_fast_and_the_generic_path(spec, seed):
    meta = _meta(seed)
    tm = TimeModel(overhead=0.3, scale=2.0)
    fast = leave_one_dataset_out(parse_strategy(spec), meta, time_model=tm)
    generic = leave_one_dataset_out(parse_strategy(spec), meta, time_model=tm, fast=False)
    np.testing.assert_array_equal(fast.sequences, generic.sequences)
    np.testing.assert_allclose(fast.mil, generic.mil, rtol=0, atol=1e-12)
    np.testing.assert_allclose(fast.seconds, generic.seconds, rtol=0, atol=1e-12)
    charges = generic.traces.charges
    assert charges is not None and np.isfinite(charges).sum() >= 2  # caps fired on this meta-data
    assert fast.capped_tests == generic.capped_tests == np.isfinite(charges).sum()
    assert generic.summary()["capped_tests"] == generic.capped_tests
    # a stopped learner comes back: some row tests a learner twice
    assert any(len(set(r[r >= 0])) < (r >= 0).sum() for r in generic.sequences)


def test_a_benchmark_charges_a_capped_test_what_it_used_and_scores_the_trace():
    meta = _meta(0)
    tm = TimeModel(overhead=0.3, scale=2.0)
    spec = "eiu:cap=1,screen=inf"  # no test stopped after its first fold: only the cap stops tests here
    result = leave_one_dataset_out(parse_strategy(spec), meta, time_model=tm, fast=False)
    rows = np.flatnonzero(np.isfinite(result.traces.charges).any(axis=1))
    arrays = tm.arrays(meta_arrays(meta))
    for i in rows[:3]:
        d = result.datasets[i]
        strategy = parse_strategy(spec).with_time_model(time_overhead=0.3, time_scale=2.0, time_kind="fit_time")
        strategy.fit(meta.subset(datasets=[e for e in meta.dataset_ids if e != d]))
        env = SimulatedEnvironment(arrays, d)
        trace = run_policy(SkipUnavailable(strategy.policy(meta.dataset_info(d)), env.available), env, dataset=d)
        curve = result.curve(d)
        assert list(curve.learners) == trace.learners
        np.testing.assert_allclose(curve.seconds, trace.seconds, rtol=0, atol=1e-12)
        np.testing.assert_array_equal(np.isnan(curve.accuracies), np.isnan(trace.accuracies))
        capped = [k for k, o in enumerate(trace.observations) if o.capped]
        assert capped and all(trace.observations[k].seconds < env.seconds(trace.learners[k]) for k in capped)
        # time to 1 point: the charged seconds up to the first near-best success, by hand
        spent, t = 0.0, math.inf
        for o in trace.observations:
            spent += o.seconds
            if o.status == "ok" and o.accuracy >= env.best_accuracy - 0.01 - 1e-9:
                t = spent
                break
        got, _ = time_to_eps_rows(result.accuracies[i:i + 1], result.seconds[i:i + 1], result.best[i:i + 1],
                                  eps=1.0)
        assert got[0] == pytest.approx(t)
    # the rank correlations count a learner once: the same as the trace without its capped tests
    assert np.isfinite(result.spearman).all() and (np.abs(result.spearman) <= 1 + 1e-12).all()


def test_no_cap_is_the_strategy_as_before_and_bad_caps_are_refused():
    meta = _meta(1)
    a = leave_one_dataset_out(parse_strategy("ei"), meta)
    b = leave_one_dataset_out(parse_strategy("ei:cap=inf"), meta)
    np.testing.assert_array_equal(a.sequences, b.sequences)
    assert a.traces.charges is None and b.traces.charges is None
    assert a.capped_tests == 0 and a.summary()["capped_tests"] == 0
    # eiu stops tests at 50 times their prediction unless told otherwise
    assert parse_strategy("eiu").cap == 50.0 and parse_strategy("eiu").default_name() == "eiu:h=0.7,p=0.75"
    assert parse_strategy("eiu:cap=inf").default_name() == "eiu:h=0.7,p=0.75,cap=inf"
    assert parse_strategy("eiu:cap=none").name == "eiu:cap=none" and math.isinf(parse_strategy("eiu:cap=none").cap)
    assert parse_strategy("ei:cap=50").with_time_model(time_scale=2.0).cap == 50.0
    assert "cap=50" in parse_strategy("ei:cap=50").default_name()
    for bad in ("ei:cap=0.5", "eiu:cap=-1", "ei:cap=abc"):
        with pytest.raises(InputError, match="cap"):
            parse_strategy(bad)


def test_nested_p_tuning_of_a_capped_strategy_scores_the_charged_traces():
    meta = _meta(0, n=10)
    res = tune_p_nested(meta, make_strategy=lambda p: parse_strategy(f"ei:p={p},cap=1"), grid=(1.0, 0.5))
    assert len(res.mil) == len(res.datasets) and np.isfinite(res.mil).all()
    assert res.result.traces.charges is not None


@pytest.mark.parametrize("spec", ["ei:p={p}", "ei:p={p},cap=1", "lt:p={p}"])
def test_nested_tuning_with_one_p_is_leave_one_dataset_out(spec):
    """With a single P the outer test of each dataset is the strategy fitted on all the others: the plain
    leave-one-dataset-out sequence (a refitting strategy's outer row used to be left untested)."""
    meta = _meta(1, n=9)
    nested = tune_p_nested(meta, make_strategy=lambda p: parse_strategy(spec.format(p=p)), grid=(1.0,))
    plain = leave_one_dataset_out(parse_strategy(spec.format(p=1.0)), meta, tmin=nested.tmin, tmax=nested.tmax)
    np.testing.assert_array_equal(nested.result.sequences, plain.sequences)
    np.testing.assert_allclose(nested.mil, plain.mil, rtol=0, atol=1e-12)
    assert (nested.result.n_tests > 0).all()


def test_a_benchmark_reports_how_many_tests_each_strategy_stopped():
    from algorank.evaluation.meta.benchmark import benchmark_strategies

    meta = _meta(0)
    tm = TimeModel(overhead=0.3, scale=2.0)
    suite = benchmark_strategies([parse_strategy("eiu:cap=1,screen=inf"), parse_strategy("eiu:cap=inf,screen=inf")],
                                 meta, time_model=tm)
    capped, plain = suite.results
    out = suite.to_dict()["strategies"]
    assert out["eiu:cap=1,screen=inf"]["capped_tests"] == capped.capped_tests == \
        np.isfinite(capped.traces.charges).sum() > 0
    assert out["eiu:cap=inf,screen=inf"]["capped_tests"] == plain.capped_tests == 0
    # a stopped test is a test: one more per stop than the learners each dataset tested
    assert (capped.n_tests - plain.n_tests).sum() == capped.capped_tests
