"""Parallel live tests overlap from the first test: ``n_jobs`` tests run at once while the worker pool starts.

The overlap is asserted from the start and end times the tests themselves recorded (``Recommendation.test_times``,
``LiveEnvironment.timeline``) and from the order of the progress hooks, never from wall-time thresholds.
"""

from __future__ import annotations

import concurrent.futures
import math
import os
import time

import pytest

from algorank.evaluation.cv.datasets import load_dataset
from algorank.recommender.kernel.trace import Observation
from algorank.recommender.live import parallel
from algorank.recommender.live.environment import FIRST_TEST_MIN_WATCH, LiveEnvironment
from algorank.recommender.live.parallel import run_parallel
from algorank.recommender.live.recommend import recommend

from helpers_estimators import new_log  # noqa: E402  (tests/ is on the path)
from helpers_meta import meta_for  # noqa: E402

ALLOW = ["helpers_estimators"]


def _first_overlap(times):
    """Start of the test that started second, and end of the one that started first."""
    order = sorted(range(len(times)), key=lambda i: times[i][0])
    return times[order[1]][0], times[order[0]][1]


class _Order:
    """A fixed order (the policy of a fixed-order strategy): the next learner not seen yet."""

    def __init__(self, learners):
        self.learners = list(learners)
        self.asked = []

    def next(self, history):
        self.asked.append([o.learner for o in history])
        seen = {o.learner for o in history}
        return next((l for l in self.learners if l not in seen), None)


class _ColdLokyPool:
    """A loky pool that never finishes starting: records what it is given, runs nothing."""

    kind = "loky"

    def __init__(self):
        self.submitted = []

    def submit(self, learner, state):  # pragma: no cover - nothing may be queued here in these tests
        self.submitted.append(learner)
        return concurrent.futures.Future()

    def wait(self, handles, timeout):  # pragma: no cover
        return []

    def abort(self, handles):
        pass

    def close(self):
        pass


def test_while_the_pool_starts_n_jobs_tests_run_here_at_once(monkeypatch):
    """The first two tests overlap although no worker is ready: both run in this process (before, the second
    waited for the first to end, or for the pool)."""
    tag, log = new_log()
    learners = ['helpers_estimators.SlowClassifier{"delay": %s, "log": "%s"}' % (d, tag) for d in (0.2, 0.21, 0.22)]
    pool = _ColdLokyPool()
    monkeypatch.setattr(parallel, "_pool", lambda n, data: pool)
    monkeypatch.setattr(parallel, "_WARMING", [concurrent.futures.Future()])  # never ready
    env = LiveEnvironment(load_dataset("sklearn:iris"), cv=3, budget_seconds=120,
                          expected_seconds={l: 0.6 for l in learners}, allow_modules=ALLOW)
    order = _Order(learners)
    trace = run_parallel(order, env, n_jobs=2, expected={l: (0.9, 0.6) for l in learners}, budget=120)
    assert pool.submitted == []  # every test ran in this process
    assert sorted(trace.learners) == sorted(learners) and {o.status for o in trace.observations} == {"ok"}
    assert {int(p) for p in log.read_text().split()} == {os.getpid()}
    second_start, first_end = _first_overlap(env.timeline)
    assert second_start < first_end  # the first two ran at the same time
    assert order.asked[1] == [learners[0]]  # the second was chosen while the first ran (as its stand-in)
    assert len(env.timeline) == 3 and all(s < e for s, e in env.timeline)


def test_tests_sharing_this_process_count_their_share_in_the_in_process_rules():
    env = LiveEnvironment(load_dataset("sklearn:iris"), cv=3, budget_seconds=60,
                          expected_seconds={"sklearn.naive_bayes.GaussianNB": 0.01})
    one = env.watch_seconds("sklearn.naive_bayes.GaussianNB")
    assert one == FIRST_TEST_MIN_WATCH
    env.sharing = 3
    assert env.watch_seconds("sklearn.naive_bayes.GaussianNB") == pytest.approx(3 * FIRST_TEST_MIN_WATCH)
    env.sharing = 100  # never past the budget
    assert env.watch_seconds("sklearn.naive_bayes.GaussianNB") == pytest.approx(60, abs=1e-6)
    assert env.timing_reason("sklearn.naive_bayes.GaussianNB") == "first test"
    env.tests = 1  # no longer the first test: 100 x 0.01 s, four times over, is close to the 60 s left
    assert env.watch_seconds("sklearn.naive_bayes.GaussianNB") is None
    assert env.timing_reason("sklearn.naive_bayes.GaussianNB") is None
    env.sharing = 1600
    assert env.timing_reason("sklearn.naive_bayes.GaussianNB") == "expected time close to the budget left"
    env.tests, env.sharing = 0, 400  # 400 x 0.01 s, sixteen times over, is more than the 60 s left: timed
    assert env.watch_seconds("sklearn.naive_bayes.GaussianNB") is None


class _LateStartPool:
    """Threading-kind pool whose test 'starts' 0.2 s after it is submitted and ends 0.25 s after (as a queued test
    does), and is received 0.3 s after."""

    kind = "threading"

    def __init__(self):
        self.submitted = {}

    def submit(self, learner, state):
        self.submitted[learner] = (time.perf_counter(), time.time())
        return learner

    def wait(self, handles, timeout):
        time.sleep(0.3)
        return [handles[0]]

    def result(self, handle):
        _, wall = self.submitted[handle]
        return Observation(handle, 0.5, 0.05), {"status": "ok"}, (wall + 0.2, wall + 0.25)

    def abort(self, handles):
        pass

    def close(self):
        pass


def test_a_test_records_its_own_start_and_end_not_its_submission(monkeypatch):
    pool = _LateStartPool()
    monkeypatch.setattr(parallel, "_pool", lambda n, data: pool)
    env = LiveEnvironment(load_dataset("sklearn:iris"), cv=3, budget_seconds=None, expected_seconds={})
    trace = run_parallel(_Order(["a"]), env, n_jobs=2, expected={})
    assert trace.learners == ["a"]
    (start, end), = env.timeline
    submitted = pool.submitted["a"][0] - env.origin
    assert start == pytest.approx(submitted + 0.2, abs=0.02)
    assert end == pytest.approx(submitted + 0.25, abs=0.02)


def test_recommend_with_two_jobs_overlaps_from_the_first_test():
    """A cold loky pool (started by this call): the first two tests of the default strategy on a scikit-learn
    dataset run at once, and the budget holds."""
    events = []
    budget = 60.0
    t0 = time.perf_counter()
    r = recommend("sklearn:digits", n_jobs=2, budget_seconds=budget, top=3, refit=False,
                  on_start=lambda learner: events.append(("start", learner)),
                  on_observation=lambda o: events.append(("end", o.learner)))
    assert time.perf_counter() - t0 <= budget * 1.1 + 1
    assert len(r.trace.observations) == 3 and len(r.test_times) == 3
    assert [kind for kind, _ in events[:2]] == ["start", "start"]  # the second started before the first ended
    second_start, first_end = _first_overlap(r.test_times)
    assert second_start < first_end
    assert all(0 <= s < e and not math.isnan(e) for s, e in r.test_times)


def test_stopping_the_processes_does_not_wait_for_a_thread_starting_a_fold_process(monkeypatch):
    """At the end of a command, a test thread may hold the lock that guards starting fold processes while it waits
    for a fold server still starting; the stop kills the server without waiting for that thread (it waited for
    it, seconds past the budget on a busy machine)."""
    import threading

    from algorank.evaluation.cv import children

    monkeypatch.setattr(children, "_CLOSED", False)
    monkeypatch.setattr(children, "_EXECUTORS", [])
    stops = []
    monkeypatch.setattr(children, "_kill_fold_servers", lambda: stops.append("killed"))
    monkeypatch.setattr(children, "stop_fold_server", lambda: stops.append("stopped"))
    holding, release = threading.Event(), threading.Event()

    def starting_a_fold_process():
        with children._LOCK:
            holding.set()
            release.wait(60)

    thread = threading.Thread(target=starting_a_fold_process, daemon=True)
    thread.start()
    assert holding.wait(60)
    try:
        children.stop_processes()
        assert stops == ["killed"] and children._CLOSED  # without the lock; no fold process starts after it
    finally:
        release.set()
        thread.join(60)
    stops.clear()
    children.stop_processes()
    assert stops == ["stopped"]  # the lock free: the orderly stop


def test_tests_on_threads_are_told_how_many_share_this_process(monkeypatch):
    class ThreadsPool(_LateStartPool):
        def __init__(self):
            super().__init__()
            self.states = []

        def submit(self, learner, state):
            self.states.append(dict(state))
            return super().submit(learner, state)

        def wait(self, handles, timeout):
            return [handles[0]]

    pool = ThreadsPool()
    monkeypatch.setattr(parallel, "_pool", lambda n, data: pool)
    env = LiveEnvironment(load_dataset("sklearn:iris"), cv=3, budget_seconds=None, expected_seconds={})
    run_parallel(_Order(["a", "b", "c", "d"]), env, n_jobs=3, expected={})
    assert [s["sharing"] for s in pool.states] == [3, 3, 3, 3]
