"""What the user waits for: phase timings, test start/end times, landmarkers that pay for themselves,
no test started that is predicted to overrun, planning bounded by the budget, a cheap first test under
a watchdog, and parallel tests (loky, threads, a Dask LocalCluster) that keep the budget.

No wall-time assertions beyond the budget promise (budget x 1.1 + 1 s): timings of the fast start are
in tests/benchmarks/bench_first_test.py, bench_live_vs_sim.py and bench_planning_scale.py.
"""

from __future__ import annotations

import math
import time

import pandas as pd
import pytest

from algorank.evaluation.cv.datasets import load_dataset
from algorank.evaluation.cv.children import start_fold_server
from algorank.recommender.kernel.trace import Observation
from algorank.metadata.dataset import MetaDataset
from algorank.metadata.errors import InputError
from algorank.metadata.learners import short_name
from algorank.recommender.live import landmarks as lm
from algorank.recommender.live.environment import FIRST_TEST_GUARD, FIRST_TEST_MIN_WATCH, LiveEnvironment
from algorank.recommender.live.pacing import MAX_CONSECUTIVE_SKIPS, SkipOverBudget, UntilDeadline, fit_within
from algorank.recommender.live.parallel import check_n_jobs, run_parallel
from algorank.recommender.live.recommend import plan, recommend
from algorank.recommender.live.timing import PHASES, PhaseClock

NB = "sklearn.naive_bayes.GaussianNB"
TREE = "sklearn.tree.DecisionTreeClassifier"
LOGREG = "sklearn.linear_model.LogisticRegression"
ALLOW = ["helpers_estimators"]


from helpers_meta import slow  # noqa: E402  (tests/ is on the path)
from helpers_meta import meta_for as _meta_for  # noqa: E402


def meta_for(learners, **kwargs):
    return _meta_for(learners, step=0.05, **kwargs)


@pytest.fixture(scope="module")
def iris():
    start_fold_server()
    return load_dataset("sklearn:iris")


class FixedOrder:
    """A policy that hands out ``order`` in turn, skipping what the history already holds; counts its calls."""

    def __init__(self, order):
        self.order, self.calls = list(order), 0

    def next(self, history):
        self.calls += 1
        seen = {o.learner for o in history}
        return next((l for l in self.order if l not in seen), None)


class FixedStrategy:
    def __init__(self, order):
        self.order = order
        self.last = None

    def policy(self, info):
        self.last = FixedOrder(self.order)
        return self.last


# ------------------------------------------------------------------ phases
def test_phase_clock_charges_each_lap_to_its_phase():
    ticks = iter([10.0, 10.5, 12.0, 12.25, 15.0, 15.0, 16.0])
    clock = PhaseClock(started=9.0, clock=lambda: next(ticks))  # called at 10.0: 1 s of import
    assert clock.lap("load") == 0.5
    assert clock.lap("plan") == 1.5
    assert clock.lap("plan") == 0.25  # phases add up
    assert clock.lap("tests") == 2.75
    d = clock.to_dict()
    assert d == {"import": 1.0, "load": 0.5, "landmark": 0.0, "plan": 1.75, "tests": 2.75, "refit": 0.0,
                 "total": 6.0}
    assert clock.left(10.0) == pytest.approx(10.0 - (15.0 - 9.0))  # the clock read 15.0 here
    assert clock.left(None) is None
    with pytest.raises(ValueError):
        clock.lap("nap")
    assert tuple(d)[:-1] == PHASES


def test_recommend_reports_phases_and_when_each_test_ran(iris):
    started = time.perf_counter() - 0.2  # as if the command had started 0.2 s earlier
    r = recommend(iris, strategy="ar:p=0", meta=meta_for([NB, TREE, LOGREG]), budget_seconds=30, cv=3,
                  started=started)
    assert set(r.timings) == set(PHASES) | {"total"}
    assert r.timings["import"] >= 0.2 and r.timings["tests"] > 0
    assert r.timings["total"] == pytest.approx(sum(r.timings[p] for p in PHASES))
    # three learners; on a loaded machine one may be stopped at its limit and tested again
    assert len(r.test_times) == len(r.trace.observations) and set(r.trace.learners) == {NB, TREE, LOGREG}
    before = r.timings["import"] + r.timings["load"] + r.timings["landmark"] + r.timings["plan"]
    previous_end = before
    for (start, end), o in zip(r.test_times, r.trace.observations):
        assert previous_end <= start + 1e-6 and start <= end  # one after the other, after the planning
        assert end - start == pytest.approx(o.seconds, abs=0.05)
        previous_end = end
    assert previous_end <= r.timings["total"] + 1e-6
    d = r.to_dict()
    assert [(t["started"], t["ended"]) for t in d["trace"]] == [tuple(map(float, x)) for x in r.test_times]
    assert d["timings"] == r.timings and d["n_jobs"] == 1 and d["skipped"] == []
    board = r.leaderboard
    assert list(board["ended"]) == [e for _, e in r.test_times]


# ------------------------------------------------------------------ no test predicted to overrun
def test_learners_predicted_to_overrun_are_not_started():
    expected = {"a": 1.0, "b": 50.0, "c": 2.0, "d": math.nan}
    left = [10.0]
    inner = FixedOrder(["a", "b", "c", "d"])
    skip = SkipOverBudget(inner, expected.get, lambda: left[0])
    history = []
    assert skip.next(history) == "a"
    history.append(Observation("a", 0.8, 1.0))
    left[0] = 9.0
    assert skip.next(history) == "c"  # b (50 s) would not fit in 9 s: skipped
    assert skip.skipped == [{"learner": "b", "predicted_seconds": 50.0, "seconds_left": 9.0}]
    history.append(Observation("c", 0.7, 2.0))
    left[0] = 1.0
    assert skip.next(history) == "d"  # unknown prediction: never skipped
    history.append(Observation("d", 0.6, 0.5))
    assert skip.next(history) is None  # nothing left; a test succeeded: no last chance
    assert skip.last_chance is None
    # the wrapped policy saw the skip as a failed zero-second test
    assert inner.calls >= 4


def test_the_only_one_left_runs_as_a_last_chance_when_nothing_succeeded():
    expected = {"a": 1.0, "big": 30.0, "bigger": 60.0}
    skip = SkipOverBudget(FixedOrder(["big", "bigger", "a"]), expected.get, lambda: 5.0)
    history = []
    assert skip.next(history) == "a"
    history.append(Observation("a", math.nan, 1.0, "error", "boom"))
    assert skip.next(history) == "big"  # nothing else left, nothing succeeded: the cheapest skipped one
    assert skip.last_chance == "big"
    history.append(Observation("big", math.nan, 4.0, "timeout", "killed"))
    assert skip.next(history) is None  # only one last chance
    assert [s["learner"] for s in skip.skipped] == ["big", "bigger"]


def test_skipping_stops_after_a_bounded_number_of_tries():
    n = 3 * MAX_CONSECUTIVE_SKIPS
    inner = FixedOrder([f"l{i}" for i in range(n)])
    skip = SkipOverBudget(inner, lambda l: 100.0, lambda: 1.0)
    assert skip.next([Observation("x", 0.9, 1.0)]) is None  # a success exists: no last chance
    assert inner.calls == MAX_CONSECUTIVE_SKIPS and len(skip.skipped) == MAX_CONSECUTIVE_SKIPS


def test_recommend_reports_a_skipped_learner(iris):
    # the meta-data predicts the tree to take 1,000 s per fold: it never starts within 20 s
    runs = [{"dataset": f"d{d}", "learner": l, "repeat": 0, "fold": 0, "accuracy": a, "fit_time": t}
            for d in range(4) for l, a, t in ((TREE, 0.95, 1000.0), (NB, 0.9, 0.001))]
    ds = pd.DataFrame({"dataset": [f"d{d}" for d in range(4)], "n_instances": [150, 300, 600, 1000],
                       "n_features": 4, "n_classes": 3, "majority_fraction": 0.34})
    r = recommend(iris, strategy="ar:p=0", meta=MetaDataset(pd.DataFrame(runs), ds), budget_seconds=20, cv=3)
    assert r.trace.learners == [NB]
    assert [s["learner"] for s in r.skipped] == [TREE] and r.skipped[0]["predicted_seconds"] > 20
    # nothing else was left: the sentence says why the loop ended, with the prediction and the seconds left
    left = r.skipped[0]["seconds_left"]
    assert r.stop_reason == "budget" and 0 < left <= 20
    assert r.summary.endswith(f"stopped because the 1 learner(s) left were predicted to take longer than the "
                              f"{left:.3g} s of budget left ({short_name(TREE)} {r.skipped[0]['predicted_seconds']:.3g} s)")
    assert r.to_dict()["skipped"][0]["learner"] == TREE
    assert "not started" not in r.summary  # said once
    # a learner neither tested nor skipped was still left: the budget itself ran out
    from dataclasses import replace

    more = replace(r, expected={**r.expected, "another": (0.5, 1.0)})
    assert more.summary.endswith("stopped because the time budget was used up; "
                                 "1 learner(s) not started (predicted to take longer than the budget left)")
    # a loop that ended for another reason (the requested number of tests) still counts the skip
    r = recommend(iris, strategy="ar:p=0", meta=MetaDataset(pd.DataFrame(runs), ds), budget_seconds=20, cv=3, top=1)
    assert r.stop_reason == "top" and [s["learner"] for s in r.skipped] == [TREE]
    assert r.summary.endswith("stopped because the requested number of learners was tested; "
                              "1 learner(s) not started (predicted to take longer than the budget left)")


# ------------------------------------------------------------------ planning bounded by the budget
def test_planning_asks_the_policy_only_for_what_fits_in_the_budget():
    # 2,000 learners of 1 s each: a 10 s budget plans 10 of them, i.e. 11 policy evaluations
    # (the last one crosses the budget), whatever the number of learners
    for m in (200, 2000):
        learners = [f"l{i}" for i in range(m)]
        strategy = FixedStrategy(learners)
        expected = {l: (0.5, 1.0) for l in learners}
        planned = plan(strategy, {}, expected, budget=10.0)
        assert len(planned) == 10 and strategy.last.calls == 10
        assert len(plan(strategy, {}, expected)) == m  # without a budget: everything


def test_planning_stops_at_its_deadline():
    learners = [f"l{i}" for i in range(2000)]
    ticks = iter(range(100))
    strategy = FixedStrategy(learners)
    planned = plan(strategy, {}, {l: (0.5, 0.0) for l in learners}, deadline=5, clock=lambda: next(ticks))
    assert len(planned) == 5 and strategy.last.calls == 5  # clock 0..4 before the deadline, 5 stops it
    policy = UntilDeadline(FixedOrder(learners), deadline=0.0, clock=lambda: 1.0)
    assert policy.next([]) is None and policy.cut and policy.calls == 0


def test_a_strategy_fit_that_outlasts_the_budget_is_abandoned():
    import threading

    release = threading.Event()

    class Slow:
        fitted = False

        def fit(self, meta):
            release.wait(10)
            self.fitted = True

    class Broken:
        def fit(self, meta):
            raise InputError("bad meta-data")

    slow = Slow()
    assert fit_within(slow, None, 0.05) is False and not slow.fitted  # not waited for
    release.set()
    quick = Slow()
    assert fit_within(quick, None, 5.0) is True and quick.fitted
    assert fit_within(Slow(), None, None) is True  # no limit: fitted here
    with pytest.raises(InputError, match="bad meta-data"):
        fit_within(Broken(), None, 5.0)


# ------------------------------------------------------------------ landmarkers
def test_landmark_rows_takes_the_largest_subsample_that_fits():
    cost = lambda r: 1e-6 * r * r  # 2,000 rows: 4 s; 1,000: 1 s; 500: 0.25 s; 250: 0.0625 s
    assert lm.landmark_rows(cost, 5000, allowed=10.0) == 2000  # 4 s x 2 <= 10 s
    assert lm.landmark_rows(cost, 5000, allowed=6.0) == 1000  # 8 s > 6 s; 2 s <= 6 s
    assert lm.landmark_rows(cost, 5000, allowed=0.2) == 250
    assert lm.landmark_rows(cost, 5000, allowed=0.1) is None  # not even 250 rows: skipped
    assert lm.landmark_rows(cost, 700, allowed=6.0) == 700  # never more rows than the data has
    assert lm.landmark_rows(cost, 100, allowed=1.0) == 100
    assert lm.landmark_rows(lambda r: math.nan, 5000, allowed=0.0) == 2000  # unknown: the measured cost decides


def test_landmarkers_still_running_at_their_share_of_the_budget_are_abandoned(iris, monkeypatch):
    from algorank.evaluation.cv import metafeatures

    def sluggish(data, **kwargs):
        time.sleep(3.0)
        return {"landmark_1nn": 0.5}

    monkeypatch.setattr(metafeatures, "dataset_meta_features", sluggish)
    monkeypatch.setattr(metafeatures, "expected_landmark_seconds", lambda *a: 0.01)
    info: dict = {}
    t0 = time.perf_counter()
    lm.measure_landmarks(info, iris, meta_for([NB]), budget=5.0)  # share: 0.5 s
    assert time.perf_counter() - t0 < 2.5  # not waited for
    assert "still running" in info["landmarks_skipped"] and "landmark_1nn" not in info
    # predicted too expensive: not even started
    monkeypatch.setattr(metafeatures, "expected_landmark_seconds", lambda *a: 100.0)
    info = {}
    lm.measure_landmarks(info, iris, meta_for([NB]), budget=5.0)
    assert info["landmarks_skipped"].startswith("expected 1e+02 s")


def test_landmarkers_run_on_a_subsample(monkeypatch):
    from algorank.evaluation.cv import metafeatures

    seen = {}

    def record(data, *, max_rows, random_state):
        seen["rows"], seen["max_rows"] = len(data.y), max_rows
        return {"landmark_1nn": 0.5, "n_instances": -1}

    monkeypatch.setattr(metafeatures, "dataset_meta_features", record)
    monkeypatch.setattr(metafeatures, "expected_landmark_seconds", lambda ds, rows, d: 1e-6 * rows * rows)
    data = load_dataset("sklearn:breast_cancer")  # 569 rows
    info = {"n_instances": 569}
    lm.measure_landmarks(info, data, meta_for([NB]), budget=2.0)  # 0.2 s share: 569 rows need 0.65 s x 2
    assert seen == {"rows": 250, "max_rows": 250}
    assert info["landmark_1nn"] == 0.5 and info["landmark_rows"] == 250
    assert info["n_instances"] == 569  # the loader's counts are kept


def test_landmarkers_run_with_one_thread_and_give_the_same_values(monkeypatch):
    """One BLAS/OpenMP thread while they run (their OpenMP threads only spin on a busy machine), the
    thread settings restored after, and the landmarkers the same as with the machine's threads."""
    from threadpoolctl import threadpool_info

    from algorank.evaluation.cv import metafeatures

    data = load_dataset("sklearn:breast_cancer")
    before = {(d["filepath"], d["num_threads"]) for d in threadpool_info()}
    full = metafeatures.dataset_meta_features(data, random_state=0)  # the machine's threads
    real, seen = metafeatures.dataset_meta_features, []

    def record(*args, **kwargs):
        seen.append({d["user_api"]: d["num_threads"] for d in threadpool_info()})
        return real(*args, **kwargs)

    monkeypatch.setattr(metafeatures, "dataset_meta_features", record)
    for budget in (None, 60.0):
        info: dict = {}
        lm.measure_landmarks(info, data, meta_for([NB]), budget=budget)
        assert info["landmark_1nn"] == full["landmark_1nn"] and info["landmark_stump"] == full["landmark_stump"]
    assert len(seen) == 2 and all(set(s.values()) == {1} for s in seen)
    assert {(d["filepath"], d["num_threads"]) for d in threadpool_info()} == before


def test_live_tests_skip_the_model_size_and_score_the_same(iris):
    """The live tests do not pickle every fitted fold model (its size is not used there): the same scores
    as the evaluator that measures it, ``model_bytes`` NaN; a store never mixes the two (its config key)."""
    from algorank.evaluation.cv.evaluator import Evaluator

    learners = [LOGREG, "sklearn.ensemble.RandomForestClassifier"]
    full = Evaluator(cv=3, progress=False).evaluate(iris, learners)
    env = LiveEnvironment(iris, cv=3)
    assert env.evaluator.model_bytes is False
    live = [env.test(l) for l in learners]
    assert [o.accuracy for o in live] == list(full.summary["accuracy_mean"])
    assert (full.summary["model_bytes_mean"] > 1000).all()  # a fitted forest pickles to kilobytes
    assert all(math.isnan(env.results[l]["model_bytes_mean"]) for l in learners)
    fresh = LiveEnvironment(iris, cv=3, budget_seconds=30.0)
    timed = fresh._evaluator_for_test(LOGREG)  # a first test runs timed, in a copy that keeps the setting
    assert timed is not fresh.evaluator and timed.timeout is not None and timed.model_bytes is False
    assert Evaluator(model_bytes=False).config() != Evaluator().config()
    assert "model_bytes" not in Evaluator().config()  # stores written before keep their key


# ------------------------------------------------------------------ a cheap first test under a watchdog
def test_a_cheap_first_test_runs_in_process_and_a_slow_one_is_abandoned(iris):
    env = LiveEnvironment(iris, cv=3, budget_seconds=30.0, expected_seconds={NB: 0.05, "x": 5.0, slow(30): 0.01},
                          allow_modules=ALLOW)
    assert env.watch_seconds(NB) == FIRST_TEST_MIN_WATCH  # 16 x 0.05 s < the 1 s minimum
    assert env.watch_seconds("x") is None  # 16 x 5 s > 30 s: timed, in fold processes
    t0 = time.perf_counter()
    o = env.test(slow(30))  # the meta-data is wrong: it sleeps 30 s per fold
    assert time.perf_counter() - t0 < 5.0
    assert o.status == "timeout" and "watchdog" in o.message
    assert env.tests == 1 and env.watch_seconds(NB) is None  # only the first test
    fresh = LiveEnvironment(iris, cv=3, budget_seconds=30.0, expected_seconds={NB: 0.05})
    o = fresh.test(NB)
    assert o.status == "ok" and 0.9 < o.accuracy <= 1.0
    assert fresh.results[NB]["accuracy_mean"] == pytest.approx(o.accuracy)
    big = LiveEnvironment(iris, cv=3, budget_seconds=30.0, expected_seconds={NB: 0.05}, prior_shape=(100, 4))
    assert big.watch_seconds(NB) is None  # larger than every prior dataset: timed
    assert FIRST_TEST_GUARD > 4


# ------------------------------------------------------------------ parallel tests
def test_check_n_jobs():
    assert check_n_jobs(2) == 2 and check_n_jobs(-1) >= 1
    for bad in (0, -2, 1.5, True, "2"):
        with pytest.raises(InputError):
            check_n_jobs(bad)


def _serial_scores(iris, learners):
    r = recommend(iris, strategy="ar:p=0", meta=meta_for(learners), budget_seconds=None, cv=3)
    return {o.learner: o.accuracy for o in r.trace.observations}


def test_parallel_tests_on_threads_give_the_serial_scores(iris):
    import joblib

    learners = [NB, TREE, LOGREG]
    with joblib.parallel_config(backend="threading"):
        r = recommend(iris, strategy="ar:p=0", meta=meta_for(learners), budget_seconds=60, cv=3, n_jobs=2)
    assert sorted(r.trace.learners) == sorted(learners) and r.n_jobs == 2
    assert {o.learner: o.accuracy for o in r.trace.observations} == pytest.approx(_serial_scores(iris, learners))
    starts = sorted(s for s, _ in r.test_times)
    assert starts[1] < min(e for _, e in r.test_times)  # the first two ran at the same time


class _RecordingPool:
    """A stand-in worker pool: records what is submitted; each test 'finishes' at once with accuracy 0.5."""

    def __init__(self):
        self.submitted = []

    def submit(self, learner, state):
        self.submitted.append(learner)
        return learner

    def wait(self, handles, timeout):
        return [handles[0]]

    def result(self, handle):
        return Observation(handle, 0.5, 0.1), {"status": "ok"}

    def abort(self, handles):
        pass

    def close(self):
        pass


def test_batch_policy_sees_running_tests_as_their_predictions():
    calls = []

    class Recording:
        def next(self, history):
            calls.append([(o.learner, o.accuracy) for o in history])
            seen = {o.learner for o in history}
            return next((l for l in ("a", "b", "c") if l not in seen), None)

    class Env:  # the threading engine runs _worker_test; here a stand-in evaluator is not needed
        pass

    from algorank.recommender.live import parallel

    class FakePool(_RecordingPool):
        kind = "threading"

    pool = FakePool()
    env = LiveEnvironment(load_dataset("sklearn:iris"), cv=3, budget_seconds=None, expected_seconds={})
    original = parallel._pool
    parallel._pool = lambda n, data: pool
    try:
        trace = run_parallel(Recording(), env, n_jobs=2, expected={"a": (0.9, 1.0), "b": (0.7, 2.0)})
    finally:
        parallel._pool = original
    assert pool.submitted == ["a", "b", "c"] and trace.learners == ["a", "b", "c"]
    assert calls[1] == [("a", 0.9)]  # a running: seen as its predicted accuracy
    assert calls[2] == [("a", 0.5), ("b", 0.7)]  # a finished (its real 0.5), b still running
    assert len(env.timeline) == 3 and env.tests == 3


def test_the_fold_server_starts_after_planning_and_the_pool_before(iris, monkeypatch):
    from algorank.recommender.live import recommend as rec

    events = []
    monkeypatch.setattr(rec, "start_fold_server", lambda: events.append("server"))
    monkeypatch.setattr(rec, "warm_pool", lambda n: events.append(f"pool {n}") or n > 1)
    for n_jobs in (1, 2):
        events.clear()
        recommend(iris, strategy="ar:p=0", meta=meta_for([NB, TREE]), budget_seconds=60, cv=3, top=1, n_jobs=n_jobs,
                  on_plan=lambda planned: events.append("plan"))
        # one job: the fold server after planning (its start-up slowed planning down); several: the workers before
        # (their start-up, at a lower priority, overlaps with planning, so that they are ready for the first tests)
        assert events == ["plan", "pool 1", "server"] if n_jobs == 1 else ["pool 2", "plan"], events
    events.clear()
    recommend(iris, strategy="ar:p=0", meta=meta_for([NB, TREE]), budget_seconds=60, cv=3, dry_run=True,
              on_plan=lambda planned: events.append("plan"))
    assert events == ["plan"]  # a dry run starts no process


def test_while_the_pool_warms_cheap_tests_run_here_and_a_timed_one_waits_for_the_pool(monkeypatch):
    import concurrent.futures

    from algorank.recommender.live import parallel

    class Order:  # NB first (cheap: in-process), then TREE (no expected time: would run timed here)
        def next(self, history):
            seen = {o.learner for o in history}
            return next((l for l in (NB, TREE) if l not in seen), None)

    class WarmingLokyPool(_RecordingPool):
        kind = "loky"

    pool = WarmingLokyPool()
    monkeypatch.setattr(parallel, "_pool", lambda n, data: pool)
    monkeypatch.setattr(parallel, "_WARMING", [concurrent.futures.Future()])  # never ready
    env = LiveEnvironment(load_dataset("sklearn:iris"), cv=3, budget_seconds=60, expected_seconds={NB: 0.01})
    assert env.watch_seconds(NB) is not None and env.timing_reason(TREE) is not None
    trace = run_parallel(Order(), env, n_jobs=2, expected={NB: (0.9, 0.01)}, budget=60)
    assert sorted(trace.learners) == sorted([NB, TREE])
    assert pool.submitted == [TREE]  # NB ran in this process, TREE went to the (warming) pool at once
    nb = trace.observations[trace.learners.index(NB)]
    assert nb.status == "ok" and nb.accuracy > 0.8  # a real test of NB


def test_with_loky_one_test_slot_is_this_process_beside_the_workers(iris):
    """n_jobs=2 on loky: one worker process (at a lower priority) plus a slot in this process (no second
    worker to start); both run tests at once, with the serial scores."""
    import os

    from helpers_estimators import new_log

    from algorank.recommender.live import parallel

    tag, log = new_log()
    learners = ['helpers_estimators.SlowClassifier{"delay": %s, "log": "%s"}' % (d, tag)
                for d in (0.3, 0.31, 0.32, 0.33)]
    try:
        assert parallel.warm_pool(2)
        assert len(parallel._WARMING) == 1  # one worker beside this process's slot
        parallel._WARMING[0].result(timeout=120)  # warm: the pool takes tests from the first one on
        worker_nice = parallel._WARM_EXECUTOR[0].submit(os.nice, 0).result(timeout=60)
        assert worker_nice == min(os.nice(0) + parallel.WORKER_NICE, 19)  # it yields to this process's slot
        # recorded at their real 0.3 s per fit: the first test's watchdog (16 x expected, at least 1 s) must not
        # abandon a 3 x 0.3 s test on a loaded machine (it did at 1 s, under 16 parallel test processes)
        r = recommend(iris, strategy="ar:p=0", meta=meta_for(learners, fit_time=0.3), budget_seconds=120, cv=3,
                      n_jobs=2, allow_modules=ALLOW)
        fitted_by = {int(line) for line in log.read_text().split()}
    finally:
        parallel._WARMING.clear()
        parallel._WARM_EXECUTOR.clear()
    assert sorted(r.trace.learners) == sorted(learners) and {o.status for o in r.trace.observations} == {"ok"}
    assert os.getpid() in fitted_by and len(fitted_by) == 2  # this process and one worker
    starts = sorted(s for s, _ in r.test_times)
    assert starts[1] < min(e for _, e in r.test_times)  # the first two ran at the same time
    serial = recommend(iris, strategy="ar:p=0", meta=meta_for(learners), budget_seconds=None, cv=3,
                       allow_modules=ALLOW)
    assert {o.learner: o.accuracy for o in r.trace.observations} == \
        pytest.approx({o.learner: o.accuracy for o in serial.trace.observations})


def _two_at_once(iris, learners, *, budget):
    """``recommend`` running two tests at once: its result and each learner's status, once it kept the budget."""
    t0 = time.perf_counter()
    r = recommend(iris, strategy="ar:p=0", meta=meta_for(learners), budget_seconds=budget, cv=3, n_jobs=2,
                  allow_modules=ALLOW)
    elapsed = time.perf_counter() - t0
    assert elapsed <= budget * 1.1 + 1, elapsed
    return r, {o.learner: o.status for o in r.trace.observations}


def test_parallel_tests_on_a_dask_local_cluster_keep_the_budget(iris):
    import joblib
    from distributed import Client, LocalCluster

    learners = [slow(30), NB, TREE]
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as client, joblib.parallel_config(backend="dask"):
        assert client.status == "running"
        r, status = _two_at_once(iris, learners, budget=6.0)
    assert status[slow(30)] == "timeout"  # killed at the deadline (every Dask test runs timed)
    assert status[NB] == "ok" and status[TREE] == "ok"
    assert {l: a for l, a in ((o.learner, o.accuracy) for o in r.trace.observations) if l != slow(30)} == \
        pytest.approx(_serial_scores(iris, [NB, TREE]))


def test_parallel_tests_in_loky_processes_keep_the_budget(iris):
    r, status = _two_at_once(iris, [slow(30), NB], budget=8.0)
    assert status.get(slow(30)) == "timeout"
