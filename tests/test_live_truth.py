"""The live loop tells the truth and uses the budget: one word per way a test ends in every output, a second test
says why it runs, a learner stopped at its limit is tested again when its measured pace fits in the budget left,
a re-test never gets less time than its first fold took, and the stop sentence says what happened.

The slow learner is ``helpers_estimators.SlowClassifier`` (sleeps in ``fit``), allowed with ``allow_modules``.
No wall-time assertions beyond generous bounds.
"""

from __future__ import annotations

import io
import json
import math

import pytest

from algorank.evaluation.cv.children import start_fold_server
from algorank.evaluation.cv.datasets import load_dataset
from algorank.recommender.kernel.trace import Observation, Trace
from algorank.recommender.live.environment import LiveEnvironment
from algorank.recommender.live.outcome import OUTCOMES, outcome, retest_reason
from algorank.recommender.live.pacing import RetryStopped, SkipOverBudget
from algorank.recommender.live.recommendation import Recommendation
from algorank.recommender.live.report import Progress, observation_line, results_text

from helpers_meta import meta_for, slow  # noqa: E402  (tests/ is on the path)

NB = "sklearn.naive_bayes.GaussianNB"
KNN = "sklearn.neighbors.KNeighborsClassifier"
MLP = "sklearn.neural_network.MLPClassifier"
ALLOW = ["helpers_estimators"]


@pytest.fixture(scope="module")
def iris():
    start_fold_server()
    return load_dataset("sklearn:iris")


def _screened(learner=KNN, seconds=0.4, fold=0.9211, bar=0.9491):
    return Observation(learner, math.nan, seconds, "timeout",
                       f"stopped after its first fold: accuracy {fold:.4f} below the bar {bar:.4f}", capped=True,
                       screened=True, fold_accuracy=fold)


def _rec(observations, **kwargs) -> Recommendation:
    trace = Trace(dataset="d", observations=tuple(observations), stopped=kwargs.pop("stopped", "policy"))
    expected = {o.learner: (0.9, 1.0) for o in observations}
    return Recommendation(dataset="d", source="test", strategy="fixed", dataset_info={}, plan=(), trace=trace,
                          expected=expected, **kwargs)


# ------------------------------------------------------------------ one word everywhere
def test_outcome_words():
    assert outcome(Observation("a", 0.9, 1.0)) == "ok"
    assert outcome(_screened()) == "screened"
    assert outcome(Observation("a", math.nan, 1.0, "timeout", "stopped at its limit of 1 s", capped=True)) \
        == "stopped at its limit"
    assert outcome(Observation("a", math.nan, 1.0, "timeout", "fit+predict exceeded the 2.55 s timeout")) \
        == "stopped at its limit"
    assert outcome(Observation("a", math.nan, 0.1, "error", "boom")) == "error"
    assert outcome({"status": "timeout", "screened": False}) == "stopped at its limit"
    assert set(OUTCOMES) == {"ok", "screened", "stopped at its limit", "error"}


def test_a_screened_test_reads_screened_in_the_progress_line_the_table_the_json_and_the_report():
    from algorank.report import recommend_report, render

    obs = [Observation(NB, 0.95, 0.2), _screened(), Observation(MLP, math.nan, 2.55, "timeout",
                                                                 "fit+predict exceeded the 2.55 s timeout"),
           Observation("sklearn.svm.SVC", math.nan, 0.1, "error", "boom")]
    line = observation_line(obs[1], total=0.6)
    assert "screened: stopped after its first fold" in line and "timeout" not in line
    assert "stopped at its limit: fit+predict exceeded" in observation_line(obs[2], total=3.0)
    rec = _rec(obs)
    statuses = [t["status"] for t in rec.to_dict()["trace"]]
    assert statuses == ["ok", "screened", "stopped at its limit", "error"]
    assert list(rec.leaderboard["status"]) == statuses
    table = results_text(rec)
    assert "timeout" not in table.split("\n\n")[0]
    assert [w in table for w in ("screened", "stopped at its limit", "error")] == [True] * 3
    html = render(recommend_report(rec))
    assert ">screened<" in html and ">stopped at its limit<" in html and ">timeout<" not in html


# ------------------------------------------------------------------ a second test says why
def test_a_second_test_says_why_in_the_progress_line_the_table_and_the_json():
    first = _screened()
    second = Observation(KNN, 0.93, 1.5)
    assert retest_reason([]) is None
    assert retest_reason([first]).startswith("re-test with every fold: its first test stopped after its first fold "
                                             "(accuracy 0.9211)")
    stopped = Observation(MLP, math.nan, 2.55, "timeout", "fit+predict exceeded the 2.55 s timeout")
    assert retest_reason([stopped]) == "re-test with a longer limit: its first test stopped at 2.55 s"
    progress = Progress(test_stream=io.StringIO())
    progress.on_start(KNN)
    progress.on_observation(first)
    progress.on_start(KNN)
    lines = progress.test_stream.getvalue().splitlines()
    assert lines[0] == "testing knn ..." or lines[0].startswith("testing ") and "again" not in lines[0]
    assert "again (re-test with every fold" in lines[-1]
    rec = _rec([Observation(NB, 0.95, 0.2), first, second])
    trace = rec.to_dict()["trace"]
    assert [t["test"] for t in trace] == [1, 1, 2]
    assert trace[2]["why"].startswith("re-test with every fold")
    text = results_text(rec)
    assert "ok (2nd test)" in text and "tested again:\n  #3 " in text and "re-test with every fold" in text


# ------------------------------------------------------------------ retried when the budget allows its pace
class _Order:
    def __init__(self, order, limits=None):
        self.order, self.limits = list(order), dict(limits or {})

    def next(self, history):
        seen = {o.learner for o in history}
        return next((l for l in self.order if l not in seen), None)

    def limit(self, learner):
        return self.limits.get(learner, math.inf)

    def screen(self, learner, *, best=None):
        return 0.5


def test_a_learner_stopped_by_a_fold_timeout_is_tested_again_when_its_pace_fits_in_the_budget_left():
    # the spambase case: mlp stopped by a per-fold timeout of 2.55 s (no fold finished: a full test of 5 folds
    # needs at least 12.8 s), and 20 s left once everything else was tested
    stopped = Observation(MLP, math.nan, 2.55, "timeout", "fit+predict exceeded the 2.55 s timeout")
    history = [Observation(NB, 0.9, 0.5), stopped, Observation(KNN, 0.92, 0.5)]
    left = {"s": 20.0}
    retry = RetryStopped(_Order([NB, MLP, KNN]), {MLP: 12.75}.get, lambda: left["s"], folds=5)
    assert retry.next(history[:1]) == MLP  # the wrapped policy's own choices come first, with its rules
    assert retry.screen(MLP) == 0.5 and retry.limit(MLP) == math.inf
    assert retry.next(history) == MLP  # nothing else left: 1.25 x 12.75 s fit in 20 s
    assert retry.limit(MLP) == pytest.approx(25.5) and retry.screen(MLP) is None  # a longer limit, every fold
    assert retry.retried == [{"learner": MLP, "needed_seconds": 12.75, "seconds_left": 20.0, "limit": 25.5,
                              "first_seconds": 2.55}]
    assert retry.decisions[0]["text"].startswith("re-test with a longer limit: its first test stopped at 2.55 s; at "
                                                 "that pace a full test needs about 12.8 s, 20 s left")
    assert retry.next(history + [Observation(MLP, math.nan, 25.5, "timeout", "stopped", capped=True)]) is None
    # with 10 s left it does not fit: declined, with the numbers the summary gives
    retry = RetryStopped(_Order([NB, MLP, KNN]), {MLP: 12.75}.get, lambda: 10.0, folds=5)
    assert retry.next(history) is None
    assert retry.declined == [{"learner": MLP, "needed_seconds": 12.75, "seconds_left": 10.0}]
    # an unknown pace: the folds times what the stopped test used; a screened learner is not tested again here
    retry = RetryStopped(_Order([NB, MLP]), lambda l: math.nan, lambda: 100.0, folds=5)
    assert retry.next([Observation(NB, 0.9, 0.5), _screened(MLP)]) is None
    assert retry.next([Observation(NB, 0.9, 0.5), stopped]) == MLP and retry.retried[0]["needed_seconds"] == 12.75


def test_recommend_tests_a_stopped_learner_again_with_a_longer_limit_and_finds_its_score(iris):
    from algorank.recommender.live.recommend import recommend

    class Strategy:
        name = "limited"

        def fit(self, meta):
            return self

        def policy(self, info):  # the slow learner first, under a 1 s limit that its first fold alone exceeds
            return _Order([learner, NB], {learner: 1.0})

    learner = slow(1.2)  # its first fold never ends before the limit: stopped there, never screened, on any machine
    started = []
    r = recommend(iris, strategy=Strategy(), meta=meta_for([learner, NB]), budget_seconds=60, cv=3,
                  allow_modules=ALLOW, on_start=started.append, refit=False)
    tests = [o for o in r.trace.observations if o.learner == learner]
    assert started == [learner, NB, learner]
    assert [outcome(t) for t in tests] == ["stopped at its limit", "ok"] and tests[1].accuracy == pytest.approx(1 / 3,
                                                                                                           abs=0.05)
    assert tests[0].message == "stopped at its limit of 1 s"
    # no fold came back from the first test: a full one needs its seconds times 3 folds, the re-test twice that
    trace = r.to_dict()["trace"]
    assert f"under a limit of {6 * tests[0].seconds:.3g} s" in trace[2]["why"]
    assert trace[2]["test"] == 2
    assert trace[2]["why"].startswith("re-test with a longer limit: its first test stopped at")
    assert r.not_retried == () and "every recommended learner was tested" in r.summary
    assert "not tested again" not in r.summary


def test_the_stop_sentence_names_a_learner_stopped_at_its_limit_and_not_tested_again():
    stopped = Observation(MLP, math.nan, 2.55, "timeout", "fit+predict exceeded the 2.55 s timeout")
    rec = _rec([Observation(NB, 0.9, 0.5), stopped],
               not_retried=({"learner": MLP, "needed_seconds": 12.75, "seconds_left": 4.0},))
    assert rec.summary.endswith("stopped because every recommended learner was tested, but 1 stopped at its limit and "
                                "was not tested again; stopped at its limit and not tested again: mlp needs about "
                                "12.8 s at its measured pace, 4 s were left")
    assert json.loads(json.dumps(rec.to_dict()))["not_retried"][0]["learner"] == MLP
    # nothing succeeded: the same sentence after the list of what was tried
    rec = _rec([stopped], not_retried=({"learner": MLP, "needed_seconds": 12.75, "seconds_left": 4.0},))
    assert rec.summary.endswith("stopped because every recommended learner was tested, but 1 stopped at its limit "
                                "and was not tested again; stopped at its limit and not tested again: mlp needs "
                                "about 12.8 s at its measured pace, 4 s were left")
    # once tested again with a result, nothing is left unsaid
    rec = _rec([Observation(NB, 0.9, 0.5), stopped, Observation(MLP, 0.95, 10.0)])
    assert rec.summary.endswith("stopped because every recommended learner was tested")


# ------------------------------------------------------------------ a re-test never gets less than its first fold
def test_a_screened_test_measures_the_pace_of_a_full_test(iris):
    env = LiveEnvironment(iris, cv=3, allow_modules=ALLOW)
    o = env.test(slow(0.3), screen=0.99)  # the first fold predicts one class: accuracy 1/3, below the bar
    assert outcome(o) == "screened"
    assert env.needs(slow(0.3)) == pytest.approx(3 * o.seconds) and env.needs(slow(0.3)) >= 0.9
    assert math.isnan(env.needs(NB))


def test_a_first_test_abandoned_during_its_first_fold_measures_the_pace_of_a_full_test(iris):
    # a cheap-looking first test runs in-process under a watchdog that ends at its 1 s limit; its first fold alone
    # sleeps 1.2 s, so no fold has come back when it is abandoned, on a fast machine or a slow one.  A full test
    # needs the seconds it used times its 3 folds (before, only the seconds it used: its re-test got a limit of
    # twice that, shorter than one fold and a half, and was stopped again)
    learner = slow(1.2)
    env = LiveEnvironment(iris, cv=3, allow_modules=ALLOW, budget_seconds=60, expected_seconds={learner: 0.003})
    assert env.watch_seconds(learner, limit=1.0) == pytest.approx(1.0)  # the in-process path
    o = env.test(learner, limit=1.0)
    assert outcome(o) == "stopped at its limit" and o.capped and o.message == "stopped at its limit of 1 s"
    assert env.needs(learner) == pytest.approx(3 * o.seconds)
    # the re-test's limit is twice that need: longer than the three folds it runs
    again = RetryStopped(_Order([]), env.needs, lambda: 60.0, folds=3)
    assert again.next([o]) == learner
    assert again.limit(learner) == pytest.approx(6 * o.seconds) and again.limit(learner) > 3 * 1.2


def test_a_timed_first_test_stopped_during_its_first_fold_measures_the_pace_of_a_full_test(iris):
    # no expected seconds: the first test runs timed, its fold process killed at the 1 s limit
    learner = slow(1.2)
    env = LiveEnvironment(iris, cv=3, allow_modules=ALLOW, budget_seconds=60)
    assert env.watch_seconds(learner, limit=1.0) is None
    o = env.test(learner, limit=1.0)
    assert outcome(o) == "stopped at its limit" and o.capped
    assert env.needs(learner) == pytest.approx(3 * o.seconds)


def test_a_re_test_is_not_started_with_less_time_left_than_its_first_fold_took():
    # the letter case: svc-rbf screened after a first fold of 5.4 s; its full re-test needs 5 x 5.4 s, and only
    # 3.9 s are left: it is not started (before, the 5.4 s it used was the only floor, and a 3.9 s limit came from
    # elsewhere)
    svc = "sklearn.svm.SVC"
    first = _screened(svc, seconds=5.4)

    class Again:
        def next(self, history):
            done = [o.learner for o in history]
            return svc if done.count(svc) < 2 else None

    skip = SkipOverBudget(Again(), lambda l: 0.5, lambda: 3.9, needs={svc: 27.0}.get)
    assert skip.next([first]) is None
    assert skip.skipped == [{"learner": svc, "predicted_seconds": 27.0, "seconds_left": 3.9}]
    skip = SkipOverBudget(Again(), lambda l: 0.5, lambda: 30.0, needs={svc: 27.0}.get)
    assert skip.next([first]) == svc


# ------------------------------------------------------------------ one plain sentence per decision
def test_each_decision_is_one_plain_sentence_and_the_answer_says_how_to_use_the_model():
    from algorank.recommender.live.story import answer_lines, decision_sentences, formula_text, leaderboard_rows

    obs = [Observation(NB, 0.90, 0.05), Observation(KNN, 0.93, 0.08), Observation(MLP, 0.91, 0.5), _screened(),
           Observation(KNN, 0.95, 0.4)]
    obs[3] = _screened(learner="sklearn.svm.SVC", seconds=0.2)
    obs[4] = Observation("sklearn.svm.SVC", 0.95, 0.4)
    decisions = ({"learner": NB, "expected": 0.6, "expected_seconds": 0.04, "p": 0.75, "text": "highest ..."},
                 {"learner": KNN, "expected": 0.92, "expected_seconds": 0.1, "p": 0.75, "text": "highest ..."},
                 {"learner": MLP, "expected": 0.885, "expected_seconds": 0.6, "p": 0.75, "text": "highest ..."},
                 {"learner": "sklearn.svm.SVC", "expected": 0.94, "expected_seconds": 0.3, "p": 0.75, "text": "h"},
                 {"learner": "sklearn.svm.SVC", "expected": math.nan, "text": ""})
    rec = _rec(obs, decisions=decisions)
    lines = decision_sentences(rec)
    assert lines[0] == (f"{NB} was tested first: with nothing measured yet, it promised the most expected gain "
                        "over the majority class for the time it costs in a test expected to take 40 ms; it scored "
                        "0.9000 in 50 ms.")
    assert " was tested next because it was expected to beat the best so far (0.9000) by 2.0 points in a test " \
           "expected to take 100 ms; it scored 0.9300 in 80 ms." in lines[1]
    assert "expected 4.5 points below the best so far (0.9300), but with the best chance left of beating it" in lines[2]
    assert lines[3].endswith("it was screened: stopped after its first fold: accuracy 0.9211 below the bar 0.9491 "
                             "(200 ms).")
    assert "was tested again (re-test with every fold: its first test stopped after its first fold (accuracy " \
           "0.9211)" in lines[4] and lines[4].endswith("it scored 0.9500 in 400 ms.")
    assert "seconds^0.75" in formula_text(rec) and "cost exponent 0.75" in formula_text(rec)
    board = leaderboard_rows(rec)
    assert [(r["rank"], r["learner"], r["tests"]) for r in board] == [
        (1, "sklearn.svm.SVC", 2), (2, KNN, 1), (3, MLP, 1), (4, NB, 1)]
    answer = answer_lines(rec)
    assert answer[0] == ("Best model: sklearn.svm.SVC, accuracy 0.9500 in 5-fold "
                         "cross-validation (higher is better), found by test 5 of 5 after 1.23 s of tests.")
    assert "--save-model model.joblib" in answer[1]
    from dataclasses import replace

    assert "joblib.load('m.joblib')" in answer_lines(replace(rec, saved_model="m.joblib"))[1]


# ------------------------------------------------------------------ a budget the start-up used up
def test_a_budget_used_up_by_the_start_up_says_so():
    timings = {"import": 3.4, "load": 0.2, "landmark": 0.0, "plan": 0.4, "tests": 0.02, "refit": 0.0}
    rec = _rec([], stopped="budget", budget_seconds=4.0, timings=timings)
    assert rec.best is None
    assert rec.summary.startswith("no learner finished successfully within the budget of 4 s (tried: nothing; 0 s); "
                                  "stopped because the time budget was used up; the start-up ")
    assert "took 4 s of the 4 s: a larger budget leaves time for tests" in rec.summary
    # a start-up under half the budget is not the reason, and a run that stopped otherwise does not blame it
    quick = {**timings, "import": 0.5}
    assert "start-up" not in _rec([], stopped="budget", budget_seconds=4.0, timings=quick).summary
    assert "start-up" not in _rec([], stopped="interrupted", budget_seconds=4.0, timings=timings).summary
