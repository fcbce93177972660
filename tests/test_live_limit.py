"""A time limit per live test: a policy's ``limit(learner)`` reaches the live environment (serial and
parallel), which stops the test there and returns a *capped* observation; the budget's own timeouts
stay uncapped, and ``limit=None`` / ``inf`` changes nothing.

The slow learner is ``helpers_estimators.SlowClassifier`` (sleeps in ``fit``), allowed with
``allow_modules``.  No wall-time assertions: the seconds of a capped test are only checked to be far
below the learner's real cost (30 s per fold), with a generous slack over the limit.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import uuid

import pytest

from algorank.evaluation.cv.children import start_fold_server
from algorank.evaluation.cv.datasets import load_dataset
from algorank.evaluation.cv.evaluator import NOT_RUN_DEADLINE, Evaluator
from algorank.metadata.errors import InputError
from algorank.recommender.kernel.trace import Observation, run_policy
from algorank.recommender.live import parallel
from algorank.recommender.live.environment import LiveEnvironment, check_limit
from algorank.recommender.live.parallel import run_parallel

from helpers_meta import slow  # noqa: E402  (tests/ is on the path)
from test_live_pacing import _RecordingPool as _PacingPool  # noqa: E402

NB = "sklearn.naive_bayes.GaussianNB"
ALLOW = ["helpers_estimators"]
SLACK = 30.0  # seconds a capped test may use past its limit on a loaded machine (its learner needs 90 s)


@pytest.fixture(scope="module")
def iris():
    start_fold_server()
    return load_dataset("sklearn:iris")


class Limited:
    """A policy that hands out ``order`` in turn and gives each learner the limit ``limits`` names (else inf)."""

    def __init__(self, order, limits):
        self.order, self.limits = list(order), dict(limits)
        self.asked: list[str] = []

    def next(self, history):
        seen = {o.learner for o in history}
        return next((l for l in self.order if l not in seen), None)

    def limit(self, learner):
        self.asked.append(learner)
        return self.limits.get(learner, math.inf)


def _assert_capped(o: Observation, learner: str, limit: float) -> None:
    assert o.learner == learner and o.capped is True and o.status == "timeout", o
    assert math.isnan(o.accuracy)
    assert o.message.startswith(f"stopped at its limit of {limit:.3g} s")
    if o.seconds >= 0.9 * limit:  # stopped at the limit itself: nothing more to say
        assert o.message == f"stopped at its limit of {limit:.3g} s"
    else:  # a fold ran past its share of the limit before the limit itself
        assert o.message.endswith(" s share)") and "a fold ran past its" in o.message
    assert 0 < o.seconds < limit + SLACK, o.seconds


# ------------------------------------------------------------------ the limit's checks and rules
def test_check_limit():
    assert check_limit(None) is None and check_limit(math.inf) is None and check_limit(1e12) is None
    assert check_limit(2.5) == 2.5 and check_limit(3) == 3.0
    for bad in (0, -1.0, math.nan, -math.inf, True, "x", [1]):
        with pytest.raises(InputError, match="limit must be a positive number of seconds"):
            check_limit(bad)


def test_bad_limit_is_refused_before_anything_runs(iris):
    env = LiveEnvironment(iris, cv=3)
    with pytest.raises(InputError):
        env.test(NB, limit=0.0)
    assert env.timeline == [] and env.spent == 0.0 and env.tests == 0


def test_which_tests_run_timed_under_a_limit(iris):
    env = LiveEnvironment(iris, cv=3, expected_seconds={NB: 0.1, "y": 6.0})
    assert env.timing_reason(NB) is None and env.timing_reason(NB, limit=math.inf) is None  # nothing to keep
    assert env.timing_reason(NB, limit=10.0) == "first test"  # the limit alone asks for timed tests
    env.tests = 1
    assert env.timing_reason("unknown", limit=10.0) == "expected time unknown"
    assert env.timing_reason("y", limit=20.0) == "expected time close to its limit"  # 4 x 6 s >= 20 s
    assert env.timing_reason("y", limit=25.0) is None  # 4 x 6 s < 25 s
    budget = LiveEnvironment(iris, cv=3, budget_seconds=100.0, expected_seconds={"y": 6.0})
    budget.tests = 1
    assert budget.timing_reason("y") is None and budget.timing_reason("y", limit=24.0) == \
        "expected time close to its limit"
    small = LiveEnvironment(iris, cv=3, budget_seconds=20.0, expected_seconds={"y": 6.0})
    small.tests = 1
    assert small.timing_reason("y", limit=100.0) == "expected time close to the budget left"


def test_the_first_test_watchdog_never_watches_past_the_limit(iris):
    env = LiveEnvironment(iris, cv=3, budget_seconds=30.0, expected_seconds={NB: 0.05})
    assert env.watch_seconds(NB) == 1.0  # 16 x 0.05 s < the 1 s minimum
    assert env.watch_seconds(NB, limit=0.9) == 0.9  # 16 x 0.05 s fits in 0.9 s: watched up to the limit
    assert env.watch_seconds(NB, limit=0.7) is None  # 16 x 0.05 s > 0.7 s: timed
    assert env.watch_seconds(NB, limit=math.inf) == 1.0
    free = LiveEnvironment(iris, cv=3, expected_seconds={NB: 0.05})
    assert free.watch_seconds(NB) is None and free.watch_seconds(NB, limit=0.9) == 0.9


def test_per_fold_timeout_comes_from_the_budget_left_or_the_limit(iris):
    env = LiveEnvironment(iris, cv=3, budget_seconds=30.0)  # a first test: timed
    assert env._evaluator_for_test(NB).timeout == 10.0  # 30 s / 3 folds
    assert env._evaluator_for_test(NB, 6.0).timeout == 2.0  # 6 s / 3 folds
    assert env._evaluator_for_test(NB, 60.0).timeout == 10.0  # the budget left is less
    assert env._evaluator_for_test(NB, 1.5).timeout == 1.0  # at least min_timeout
    free = LiveEnvironment(iris, cv=3)
    assert free._evaluator_for_test(NB) is free.evaluator
    assert free._evaluator_for_test(NB, 9.0).timeout == 3.0
    own = LiveEnvironment(iris, Evaluator(cv=3, repeats=1, timeout=1.5, progress=False))
    assert own._evaluator_for_test(NB, 30.0).timeout == 1.5  # the evaluator's own timeout when smaller


# ------------------------------------------------------------------ tests stopped at their limit
def test_a_timed_test_is_stopped_at_its_limit_and_capped(iris):
    env = LiveEnvironment(iris, cv=3, allow_modules=ALLOW)  # no budget: only the limit stops it
    o = env.test(slow(30), limit=2.0)  # first test, expected time unknown: timed, 1 s per fold
    _assert_capped(o, slow(30), 2.0)
    assert env.tests == 1 and len(env.timeline) == 1 and env.spent == pytest.approx(o.seconds)
    env.tests = 1
    o = env.test(slow(30), limit=2.0)  # not a first test any more: timed because its time is unknown
    _assert_capped(o, slow(30), 2.0)


def test_an_in_process_test_starts_no_fold_after_its_limit(iris):
    env = LiveEnvironment(iris, cv=3, expected_seconds={slow(0.6): 0.01}, allow_modules=ALLOW)
    env.tests = 1  # expected 4 x 0.01 s < 1 s: in-process; 3 folds of 0.6 s cannot all start within 1 s
    assert env.timing_reason(slow(0.6), limit=1.0) is None
    o = env.test(slow(0.6), limit=1.0)
    _assert_capped(o, slow(0.6), 1.0)
    assert env.results[slow(0.6)]["message"] == NOT_RUN_DEADLINE


def test_a_watched_first_test_is_capped_only_when_the_limit_stops_it(iris):
    env = LiveEnvironment(iris, cv=3, expected_seconds={slow(30): 0.01}, allow_modules=ALLOW)
    assert env.watch_seconds(slow(30), limit=1.0) == 1.0  # the watchdog is the limit
    _assert_capped(env.test(slow(30), limit=1.0), slow(30), 1.0)
    env = LiveEnvironment(iris, cv=3, expected_seconds={slow(30): 0.01}, allow_modules=ALLOW)
    assert env.watch_seconds(slow(30), limit=20.0) == 1.0  # the watchdog (1 s) stops it before its limit
    o = env.test(slow(30), limit=20.0)
    assert o.status == "timeout" and not o.capped and "watchdog" in o.message


def test_the_budget_running_out_first_is_not_capped(iris):
    env = LiveEnvironment(iris, cv=3, budget_seconds=1.0, expected_seconds={slow(0.6): 0.01}, allow_modules=ALLOW)
    env.tests = 1  # in-process; the budget (1 s) ends before the limit (5 s)
    o = env.test(slow(0.6), limit=5.0)
    assert o.status == "timeout" and not o.capped and o.message == NOT_RUN_DEADLINE
    timed = LiveEnvironment(iris, cv=3, budget_seconds=1.5, allow_modules=ALLOW)
    timed.tests = 1  # timed: expected time unknown; killed at the end of the budget
    o = timed.test(slow(30), limit=10.0)
    assert o.status == "timeout" and not o.capped and "limit of" not in o.message


def test_the_evaluators_own_fold_timeout_is_not_the_limit(iris):
    ev = Evaluator(cv=3, repeats=1, timeout=1.0, progress=False, allow_modules=ALLOW)
    env = LiveEnvironment(iris, ev)
    env.tests = 1
    o = env.test(slow(30), limit=20.0)  # per fold min(20 s / 3, its own 1 s): killed at its own timeout
    assert o.status == "timeout" and not o.capped and "the 1 s timeout" in o.message


def test_a_fast_learner_within_its_limit_is_an_ordinary_observation(iris):
    plain = LiveEnvironment(iris, cv=3, expected_seconds={NB: 0.05})
    reference = plain.test(NB)
    for limit in (60.0, math.inf, None):
        env = LiveEnvironment(iris, cv=3, expected_seconds={NB: 0.05})
        o = env.test(NB, limit=limit)
        assert o.status == "ok" and o.capped is False and o.message == ""
        assert 0.9 < o.accuracy <= 1.0 and o.accuracy == reference.accuracy  # same seed, same folds
        env.tests = 1
        o = env.test(NB, limit=limit)  # in-process now
        assert o.status == "ok" and not o.capped and o.accuracy == reference.accuracy


# ------------------------------------------------------------------ the limit handed through
def test_run_policy_hands_each_finite_limit_to_the_environment():
    calls = []

    class Recording:
        def test(self, learner, **kwargs):
            calls.append((learner, kwargs))
            return Observation(learner, 0.5, 0.1)

    policy = Limited(["a", "b", "c"], {"a": 2.5, "c": 0.25})
    trace = run_policy(policy, Recording())
    assert calls == [("a", {"limit": 2.5}), ("b", {}), ("c", {"limit": 0.25})]  # inf: not handed over
    assert trace.learners == ["a", "b", "c"] and policy.asked == ["a", "b", "c"]


def test_run_policy_in_a_live_environment_caps_only_the_limited_test(iris):
    env = LiveEnvironment(iris, cv=3, allow_modules=ALLOW)
    trace = run_policy(Limited([slow(30), NB], {slow(30): 1.5}), env)
    capped, fast = trace.observations
    _assert_capped(capped, slow(30), 1.5)
    assert fast.learner == NB and fast.status == "ok" and not fast.capped and 0.9 < fast.accuracy <= 1.0


class _RecordingPool(_PacingPool):
    """The pacing tests' stand-in pool (each test 'finishes' at once with accuracy 0.5), run as the threading
    engine, recording the state each test is submitted with."""

    kind = "threading"

    def __init__(self):
        super().__init__()
        self.states = []

    def submit(self, learner, state):
        self.states.append((learner, state))
        return super().submit(learner, state)


def test_the_parallel_runner_hands_each_finite_limit_to_its_test(iris, monkeypatch):
    pool = _RecordingPool()
    monkeypatch.setattr(parallel, "_pool", lambda n, data: pool)
    env = LiveEnvironment(iris, cv=3)
    trace = run_parallel(Limited(["a", "b"], {"a": 3.0}), env, n_jobs=2, expected={})
    assert trace.learners == ["a", "b"]
    assert [(l, s["limit"]) for l, s in pool.states] == [("a", 3.0), ("b", None)]


def test_parallel_tests_on_threads_honour_the_limit(iris):
    import joblib

    env = LiveEnvironment(iris, cv=3, allow_modules=ALLOW)
    with joblib.parallel_config(backend="threading"):
        trace = run_parallel(Limited([slow(30), NB], {slow(30): 1.5, NB: 60.0}), env, n_jobs=2, expected={})
    by = {o.learner: o for o in trace.observations}
    _assert_capped(by[slow(30)], slow(30), 1.5)
    assert by[NB].status == "ok" and not by[NB].capped and 0.9 < by[NB].accuracy <= 1.0
    assert len(env.timeline) == 2


class _LimitedStrategy:
    """A strategy object for ``recommend``: its policy hands out ``order`` with the given limits."""

    name = "limited"

    def __init__(self, order, limits):
        self.order, self.limits = order, limits
        self.last = None

    def fit(self, meta):
        return self

    def policy(self, info):
        self.last = Limited(self.order, self.limits)
        return self.last


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_recommend_hands_the_limit_through_its_policy_wrappers(iris, n_jobs):
    import joblib

    from algorank.recommender.live.recommend import recommend
    from helpers_meta import meta_for

    # a limit of 1 s: the first test's watchdog (at least 1 s) cannot stop it before its limit
    strategy = _LimitedStrategy([slow(30), NB], {slow(30): 1.0})
    started = []
    with joblib.parallel_config(backend="threading"):  # n_jobs=2: threads, no process pool to start
        r = recommend(iris, strategy=strategy, meta=meta_for([slow(30), NB]), budget_seconds=120, cv=3,
                      allow_modules=ALLOW, n_jobs=n_jobs, on_start=started.append, refit=False)
    by = {}
    for o in r.trace.observations:
        by.setdefault(o.learner, o)
    assert set(by) == {slow(30), NB} and sorted(started) == sorted(o.learner for o in r.trace.observations)
    _assert_capped(by[slow(30)], slow(30), 1.0)  # through SkipOverBudget (a budget) and the announcing wrapper
    # once nothing else is left, the stopped learner runs again with a longer limit (twice what its first test
    # showed it needs, at least the 1 s it used), and it is stopped there again
    first, *again = [o for o in r.trace.observations if o.learner == slow(30)]
    assert len(again) == 1 and again[0].capped and again[0].seconds > 1.5 * first.seconds
    assert by[NB].status == "ok" and not by[NB].capped
    assert slow(30) in strategy.last.asked


def test_the_live_policy_wrappers_pass_the_limit_on():
    from algorank.recommender.live.pacing import SkipOverBudget
    from algorank.recommender.live.recommend import _Announcing, _SkipRankOnly

    inner = Limited(["a"], {"a": 2.0})
    for wrapper in (SkipOverBudget(inner, lambda l: 0.1, lambda: 10.0), _SkipRankOnly(inner, ["x"]),
                    _Announcing(inner, print)):
        assert wrapper.limit("a") == 2.0 and wrapper.limit("b") == math.inf
    bare = SkipOverBudget(_SkipRankOnly(object(), ()), lambda l: 0.1, lambda: 10.0)
    assert bare.limit("a") == math.inf  # a policy that sets no limit: none


COLD_SERVER = r'''
import json
from algorank.evaluation.cv.datasets import load_dataset
from algorank.recommender.live.environment import LiveEnvironment
env = LiveEnvironment(load_dataset("sklearn:iris"), cv=3)  # no fold server started: the first timed test starts it
env.tests = 1  # expected time unknown: timed, 1 s per fold, deadline 1 s after the start of the test
o = env.test("sklearn.naive_bayes.GaussianNB", limit=1.0)
print(json.dumps({"status": o.status, "capped": o.capped, "accuracy": o.accuracy}))
'''


def test_the_fold_servers_start_up_does_not_count_against_the_limit(tmp_path):
    """A fresh fold server takes about 1.4 s to start on this machine, idle: without the wait for it, a 1 s limit
    capped this 50 ms test."""
    from helpers_processes import kill_marked, marker_env

    marker = uuid.uuid4().hex
    try:
        out = subprocess.run([sys.executable, "-c", COLD_SERVER], env=marker_env(marker), capture_output=True,
                             text=True, timeout=300, cwd=tmp_path)
    finally:
        kill_marked(marker)
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["status"] == "ok" and got["capped"] is False and 0.9 < got["accuracy"] <= 1.0, got


def test_a_learner_stopped_at_its_limit_is_not_started_again_without_the_time_it_proved_it_needs():
    from algorank.recommender.live.pacing import SkipOverBudget

    class Again:  # tests "a", then "a" again after its capped test, then "b"
        def next(self, history):
            done = [o.learner for o in history]
            return "a" if done.count("a") < 2 else ("b" if "b" not in done else None)

    capped = Observation("a", math.nan, 5.0, "timeout", "stopped at its limit of 5 s", capped=True)
    left = {"s": 3.0}
    skipper = SkipOverBudget(Again(), lambda l: 0.5, lambda: left["s"])
    assert skipper.next([capped]) == "b"  # "a" took at least 5 s before: not with 3 s left
    assert skipper.skipped == [{"learner": "a", "predicted_seconds": 5.0, "seconds_left": 3.0}]
    left["s"] = 6.0
    assert SkipOverBudget(Again(), lambda l: 0.5, lambda: left["s"]).next([capped]) == "a"  # 6 s left: again
    assert SkipOverBudget(Again(), lambda l: math.nan, lambda: 3.0).next([capped]) == "b"  # unknown: what it used
