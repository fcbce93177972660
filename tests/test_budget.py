"""A budget is a promise: deadlines in the evaluator, timed tests in the live loop,
and recommend / AlgorankClassifier ending within budget x 1.1 + 1 s when a learner is far
slower than the meta-data says (no oracle: the prior times are deliberately wrong).

The slow learner is ``helpers_estimators.SlowClassifier`` (sleeps in ``fit``), allowed with
``allow_modules``.  Overrun over real datasets: ``tests/benchmarks/bench_budget_overrun.py``.
"""

from __future__ import annotations

import json
import math
import os
import time

import pytest

from algorank.evaluation.cv.datasets import load_dataset
from algorank.evaluation.cv.evaluator import NOT_RUN_DEADLINE, Evaluator, start_fold_server
from algorank.evaluation.cv.store import FoldStore
from algorank.metadata.dataset import MetaDataset
from algorank.recommender.live.environment import LiveEnvironment
from algorank.recommender.live.recommend import recommend

NB = "sklearn.naive_bayes.GaussianNB"
ALLOW = ["helpers_estimators"]


from helpers_meta import meta_for, slow  # noqa: E402  (tests/ is on the path)


@pytest.fixture(scope="module")
def iris():
    start_fold_server()
    return load_dataset("sklearn:iris")


def test_folds_do_not_start_after_the_deadline_and_deadline_timeouts_are_not_stored(iris, tmp_path):
    ev = Evaluator(cv=3, repeats=1, progress=False, allow_modules=ALLOW, store=tmp_path / "s.sqlite")
    t0 = time.perf_counter()
    res = ev.evaluate(iris, [slow(0.4)], deadline=t0 + 0.6)  # in-process: fold 1 starts, fold 3 cannot
    status = list(res.runs.sort_values("fold")["status"])
    done = status.count("ok")
    assert 1 <= done <= 2 and status == ["ok"] * done + ["timeout"] * (3 - done)
    assert res.runs.sort_values("fold")["message"].iloc[done] == NOT_RUN_DEADLINE
    with FoldStore(tmp_path / "s.sqlite") as store:
        assert store.count() == done  # the deadline's timeouts depend on when it ran: never stored


def test_a_timed_fold_is_killed_at_the_deadline(iris):
    ev = Evaluator(cv=3, repeats=1, timeout=60.0, progress=False, allow_modules=ALLOW)
    res = ev.evaluate(iris, [slow(60)], deadline=time.perf_counter() + 1.0)
    first = res.runs.sort_values("fold").iloc[0]
    # the recorded reason: killed at the evaluation's time limit (not its 60 s timeout), after about 1 s of the
    # 60 s fit (the margin holds on a loaded machine; a fit waited for would record 60 s)
    assert first["status"] == "timeout" and "exceeded the evaluation's time limit" in first["message"]
    assert "the fit process was killed" in first["message"] and first["fit_time"] < 30, first["fit_time"]


def test_which_tests_run_timed(iris):
    env = LiveEnvironment(iris, cv=3, budget_seconds=20.0, expected_seconds={NB: 0.1, "x": math.nan, "y": 6.0},
                          prior_shape=(1000, 10))
    assert env.timing_reason(NB) == "first test"
    env.tests = 1
    assert env.timing_reason(NB) is None
    assert env.timing_reason("x") == "expected time unknown"
    assert env.timing_reason("y") == "expected time close to the budget left"  # 4 x 6 s >= 20 s
    assert LiveEnvironment(iris, cv=3).timing_reason(NB) is None  # no budget: nothing to keep
    # a dataset with more rows (or features) than every prior one: every test is timed
    for shape in ((100, 10), (1000, 3)):
        big = LiveEnvironment(iris, cv=3, budget_seconds=20.0, expected_seconds={NB: 0.1}, prior_shape=shape)
        big.tests = 1
        assert big.timing_reason(NB) == "dataset larger than the prior datasets"
    unknown = LiveEnvironment(iris, cv=3, budget_seconds=20.0, expected_seconds={NB: 0.1},
                              prior_shape=(math.nan, math.nan))
    unknown.tests = 1
    assert unknown.timing_reason(NB) is None
    # an in-process fold cannot be stopped: only folds that end within fold_slack of the deadline even
    # when guard (4) times slower than expected run in-process
    slack = LiveEnvironment(iris, cv=3, budget_seconds=100.0, expected_seconds={NB: 0.3, "z": 4.0}, fold_slack=1.0)
    slack.tests = 1
    assert slack.timing_reason(NB) is None  # 0.3 s / 3 folds x 4 = 0.4 s <= 1 s
    assert slack.timing_reason("z") == "a fold could run past the deadline"  # 4 s / 3 x 4 = 5.3 s > 1 s


@pytest.mark.parametrize("budget", [2.0, 4.0])
def test_recommend_keeps_the_budget_when_the_prior_times_are_wrong(iris, budget):
    # the meta-data says the slow learner fits in 1 ms; it really sleeps 60 s per fold
    meta = meta_for([slow(60), NB])
    t0 = time.perf_counter()
    r = recommend(iris, strategy="ar:p=0", meta=meta, budget_seconds=budget, cv=3, allow_modules=ALLOW)
    elapsed = time.perf_counter() - t0
    assert elapsed < 30, elapsed  # the 60 s fit was killed (a generous margin: the budget is kept in test_benchmarks)
    assert r.trace.observations[0].status == "timeout"


def test_recommend_on_a_dataset_larger_than_the_prior_ones_times_every_test(iris):
    # every prior dataset has <= 100 rows: after a fast first test, the slow one still runs timed
    meta = meta_for([NB, slow(60)], rows=(50, 80, 100))
    t0 = time.perf_counter()
    r = recommend(iris, strategy="ar:p=0", meta=meta, budget_seconds=4.0, cv=3, allow_modules=ALLOW)
    elapsed = time.perf_counter() - t0
    assert elapsed < 30, elapsed  # the 60 s fit was killed, not waited for (generous margin for a loaded machine)
    assert [o.status for o in r.trace.observations] == ["ok", "timeout"]
    assert r.best.learner == NB


def test_the_estimator_keeps_its_budget_refit_included(iris, caplog):
    from algorank import AlgorankClassifier

    meta = meta_for([slow(60), NB])
    runs = meta.runs.copy()
    # the slow learner is still ranked first, but recorded a little slower than NB: on a loaded machine where
    # no test ends within the 3 s, the fallback refit (the learner expected to be fastest) is NB, not the 60 s fit
    runs.loc[runs["learner"] == slow(60), "fit_time"] = 0.002
    meta = MetaDataset(runs, meta.datasets)
    clf = AlgorankClassifier(budget=3.0, meta=meta, cv=3, strategy="ar:p=0", allow_modules=ALLOW,
                             on_untested="warn")  # the fallback above, rather than NothingTestedError
    t0 = time.perf_counter()
    clf.fit(iris.X, iris.y)
    elapsed = time.perf_counter() - t0
    assert elapsed < 30, elapsed  # the 60 s fit was killed, not waited for (generous margin for a loaded machine)
    assert clf.best_learner_ == NB and clf.score(iris.X, iris.y) > 0.9


def test_the_refit_goes_to_the_best_learner_that_fits_in_the_time_left(caplog):
    from algorank.recommender.kernel.trace import Observation, Trace
    from algorank.recommender.live.estimator import _refit_choice

    trace = Trace("d", (Observation("a", 0.9, 8.0), Observation("b", 0.8, 0.1), Observation("c", float("nan"), 0.1,
                                                                                              "timeout")))
    assert _refit_choice(trace, folds=5, seconds_left=10.0) == "a"  # 8 s x 5 / 16 = 2.5 s fits
    with caplog.at_level("WARNING"):
        assert _refit_choice(trace, folds=5, seconds_left=1.0) == "b"
    assert "instead of the most accurate a" in caplog.text
    assert _refit_choice(trace, folds=5, seconds_left=0.0) == "b"  # nothing fits: the cheapest refit
    assert _refit_choice(Trace("d", ()), folds=5, seconds_left=1.0) is None


def test_a_script_without_a_main_guard_is_not_rerun_by_the_fold_processes(tmp_path):
    import subprocess
    import sys

    runs = tmp_path / "runs.txt"
    script = tmp_path / "noguard.py"
    script.write_text(
        "import pathlib\n"
        f"pathlib.Path({str(runs)!r}).open('a').write('run\\n')\n"
        "from sklearn.datasets import load_iris\n"
        "from algorank import AlgorankClassifier\n"
        "X, y = load_iris(return_X_y=True)\n"
        "clf = AlgorankClassifier(budget=60, top=1, cv=3, strategy='ar:p=0').fit(X, y)\n"  # top=1: ends after one test
        "print(clf.leaderboard_['status'].tolist())\n")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert runs.read_text() == "run\n"  # the first test ran timed, in fold processes, without re-running the script
    assert "Traceback" not in proc.stderr and proc.stdout.strip() == "['ok']"


def test_folds_run_single_threaded_in_process_and_in_fold_processes(iris, tmp_path):
    from helpers_estimators import new_log

    tag, log = new_log()
    learner = "helpers_estimators.ThreadCountClassifier" + json.dumps({"log": tag})
    for timeout in (None, 30.0):
        Evaluator(cv=2, repeats=1, timeout=timeout, progress=False, allow_modules=ALLOW).evaluate(iris, [learner])
    assert log.read_text().split() == ["1"] * 4
    with pytest.raises(Exception, match="threads must be None or an integer >= 1"):
        Evaluator(threads=0)


def test_fold_server_is_warmed_with_every_portfolio_learner():
    from algorank.evaluation.cv.children import PRELOAD
    from algorank.evaluation.cv.forkserver_warmup import warm_up
    from algorank.metadata.learners import learner_ids

    assert PRELOAD[0] == "algorank_fold_server_guard"  # the guard first: the server dies with its caller at once
    assert PRELOAD[-1] == "algorank.evaluation.cv.forkserver_warmup"
    # every learner but QDA (singular covariance on 30 training rows is fine to fail) fits the tiny data
    assert warm_up() >= len(learner_ids()) - 1


def test_timed_folds_share_one_child_until_one_is_killed(iris, tmp_path):
    from algorank.evaluation.cv.evaluator import Evaluator

    from helpers_estimators import new_log

    (t1, first), (t2, second), (t3, third) = new_log(), new_log(), new_log()
    learners = ["helpers_estimators.SlowClassifier" + json.dumps({"delay": 0.01, "log": t1}),
                "helpers_estimators.SlowClassifier" + json.dumps({"delay": 5.0, "log": t2}),
                "helpers_estimators.SlowClassifier" + json.dumps({"delay": 0.01, "log": t3})]
    ev = Evaluator(cv=3, repeats=1, timeout=1.0, progress=False, allow_modules=ALLOW)
    res = ev.evaluate(iris, learners)
    assert [res.summary.loc[l, "status"] for l in learners] == ["ok", "timeout", "ok"]
    pids = [set(f.read_text().split()) for f in (first, second, third)]
    # the three folds of the first learner and the killed fold of the second ran in one child, not here;
    # the third learner needed a fresh child (the second's was killed)
    assert len(pids[0]) == 1 and pids[0] == pids[1] and str(os.getpid()) not in pids[0]
    assert len(first.read_text().split()) == 3
    assert len(pids[2]) == 1 and pids[2] != pids[0]


def test_a_fold_child_that_dies_is_an_error_and_the_next_fold_gets_a_new_child(iris):
    from algorank.evaluation.cv.evaluator import Evaluator

    crash = "helpers_estimators.ExitingClassifier" + json.dumps({"code": 3})
    ev = Evaluator(cv=3, repeats=1, timeout=10.0, progress=False, allow_modules=ALLOW)
    res = ev.evaluate(iris, [crash, NB])
    assert res.summary.loc[crash, "status"] == "error"
    assert "the fit process died (exit code 3" in res.summary.loc[crash, "message"]
    assert res.summary.loc[NB, "status"] == "ok" and res.summary.loc[NB, "accuracy_mean"] > 0.9
