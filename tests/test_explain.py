"""Why each learner was taken at its step (for the report and ``--json``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from algorank.api import load_meta
from algorank.recommender.kernel.trace import Observation
from algorank.recommender.live.explain import Explaining, explain_choice
from algorank.recommender.registry import parse_strategy


def test_a_fixed_order_names_the_position_and_the_mean_rank():
    strategy = parse_strategy("ar:p=0").fit(load_meta("uci"))
    policy = Explaining(strategy.policy({}), strategy)
    first = policy.next([])
    second = policy.next([Observation(first, 0.9, 1.0)])
    assert [d["learner"] for d in policy.decisions] == [first, second] == strategy.order_[:2]
    n = len(strategy.order_)
    assert policy.decisions[1]["text"].startswith(f"next in the strategy's fixed order (position 2 of {n}; {n - 1} untested)")
    assert f"mean rank {strategy.average_rank_[second]:.2f}" in policy.decisions[1]["text"]
    assert np.isnan(policy.decisions[0]["score"]) and policy.decisions[0]["step"] == 1


def test_ei_reports_the_score_it_chose_by_and_the_runner_up():
    meta = load_meta("broad")
    strategy = parse_strategy("ei").fit(meta)
    info = meta.dataset_info(meta.dataset_ids[0])
    raw = strategy.policy(info)
    history = []
    expected = np.asarray(raw.scores(history)[0], dtype=float)
    policy = Explaining(raw, strategy)
    learner = policy.next(history)
    d = policy.decisions[0]
    assert learner == strategy.learners_[int(np.argmax(expected))]
    assert d["score"] == pytest.approx(expected.max())
    finite = np.sort(expected[np.isfinite(expected)])
    assert d["runner_up_score"] == pytest.approx(finite[-2]) and d["runner_up"] != learner
    assert d["text"].startswith("highest (1 - p(fail)) x expected improvement / seconds^1: ")  # ei's p = 1, said
    assert d["p"] == 1.0
    # the same when the policy keeps no scores of its own
    again = explain_choice(strategy.policy(info), strategy, [], learner)
    assert again["score"] == pytest.approx(d["score"])


def test_a_learner_tested_again_after_its_limit_stopped_it_says_so():
    meta = load_meta("uci")
    strategy = parse_strategy("eiu:cap=2").fit(meta)
    raw = strategy.policy(meta.dataset_info(meta.dataset_ids[0]))
    policy = Explaining(raw, strategy)
    first = policy.next([])
    history = [Observation(first, float("nan"), 3.5, "timeout", "stopped at its limit of 3.5 s", capped=True)]
    while True:
        learner = policy.next(history)
        if learner == first or learner is None:
            break
        history.append(Observation(learner, 0.6, 0.1))
    assert learner == first and len(history) == len(strategy.learners_)  # every other learner came first
    d = policy.decisions[-1]
    assert d["learner"] == first and np.isnan(d["score"])
    assert d["text"] == ("re-test with no limit but the budget's: its first test stopped at 3.5 s (the limit the "
                         "strategy gave it); every other learner has been tested")
    assert policy.decisions[0]["text"].startswith("highest ")


def test_the_expected_value_is_the_conditional_mean_the_choice_was_made_on():
    from algorank.recommender.accuracy_model import from_gain

    meta = load_meta("broad")
    strategy = parse_strategy("eiu").fit(meta.exclude(datasets=[meta.dataset_ids[0]]))
    info = meta.dataset_info(meta.dataset_ids[0])
    policy = Explaining(strategy.policy(info), strategy)
    first = policy.next([])
    # before any test: the prior mean, the planned order's expected accuracy of that learner
    planned = {p.learner: p.accuracy for p in strategy.predictions(info)}
    assert policy.decisions[0]["expected"] == pytest.approx(planned[first])
    history = [Observation(first, 0.97, 0.2)]
    second = policy.next(history)
    # after it: the mean given that result, as a fresh policy computes it from the same history
    fresh = strategy.policy(info)
    mean = fresh.scores(history)[1][list(strategy.learners_).index(second)]
    assert policy.decisions[1]["expected"] == pytest.approx(float(np.clip(from_gain(mean, fresh.majority), 0, 1)))
    assert policy.decisions[1]["expected"] != pytest.approx(planned[second], abs=1e-3)  # the result moved it
    # the same without the policy's kept means
    assert explain_choice(strategy.policy(info), strategy, history, second)["expected"] == \
        pytest.approx(policy.decisions[1]["expected"])
    # the seconds expected: the point prediction, then rescaled by the measured / predicted ratio of the first test
    names = list(strategy.learners_)
    point = strategy.policy(info).seconds
    assert policy.decisions[0]["expected_seconds"] == pytest.approx(point[names.index(first)])
    ratio = min(max(0.2 / point[names.index(first)], 1 / 20), 20)
    assert policy.decisions[1]["expected_seconds"] == pytest.approx(point[names.index(second)] * ratio)
    # a fixed order has no accuracy model: nothing expected at the step
    ar = parse_strategy("ar:p=0").fit(meta)
    fixed = explain_choice(ar.policy({}), ar, [], ar.order_[0])
    assert np.isnan(fixed["expected"]) and np.isnan(fixed["expected_seconds"])


def test_the_results_table_shows_what_was_expected_when_each_test_was_chosen():
    from algorank.api import recommend
    from algorank.recommender.live.report import results_text

    r = recommend("sklearn:iris", strategy="eiu", meta="uci", budget=20, top=3, cv=3, refit=False)
    board = r.leaderboard
    chosen = {d["learner"]: d["expected"] for d in r.decisions}
    assert board["expected_accuracy"].tolist() == pytest.approx([chosen[l] for l in board["learner"]])
    planned = {p.learner: p.expected_accuracy for p in r.plan}
    assert board["expected_accuracy"].iloc[0] == pytest.approx(planned[board["learner"].iloc[0]])
    assert r.to_dict()["trace"][1]["expected_accuracy"] == pytest.approx(board["expected_accuracy"].iloc[1])
    text = results_text(r)
    assert " expected " in text.splitlines()[1] and f"{board['expected_accuracy'].iloc[1]:.4f}" in text
    # the summary says when the best was found: its test and the seconds of tests until then
    k = int(board["accuracy"].fillna(-1).to_numpy().argmax())
    assert f"found by test {k + 1} of 3 ({board['cumulative_seconds'].iloc[k]:.3g} s of the " \
           f"{board['cumulative_seconds'].iloc[-1]:.3g} s of tests); stopped because" in r.summary
    assert board["expected_seconds"].tolist() == pytest.approx(
        [{d["learner"]: d["expected_seconds"] for d in r.decisions}[l] for l in board["learner"]])
    assert board["expected_seconds"].iloc[0] == pytest.approx(board["predicted_seconds"].iloc[0])  # nothing measured yet
    # a fixed order expects what it planned
    r = recommend("sklearn:iris", strategy="ar:p=0", meta="uci", budget=20, top=2, cv=3, refit=False)
    assert r.leaderboard["expected_accuracy"].tolist() == pytest.approx(r.leaderboard["predicted_accuracy"].tolist())
    assert r.leaderboard["expected_seconds"].tolist() == pytest.approx(r.leaderboard["predicted_seconds"].tolist())


def test_each_test_gets_its_own_decision_when_a_learner_is_tested_twice():
    from dataclasses import replace

    from algorank.api import recommend
    from algorank.recommender.kernel.trace import Trace

    r = recommend("sklearn:iris", strategy="eiu", meta="uci", budget=20, top=2, cv=3, refit=False)
    a, b = r.trace.learners
    obs = (Observation(a, float("nan"), 0.01, "timeout", "stopped after its first fold", capped=True, screened=True,
                       fold_accuracy=0.5), Observation(b, 0.9, 0.1), Observation(a, 0.95, 0.1))
    decisions = ({"learner": a, "expected": 0.8, "text": "first"}, {"learner": b, "expected": 0.85, "text": "second"},
                 {"learner": a, "expected": math.nan, "text": "again"})
    twice = replace(r, trace=Trace(dataset=r.dataset, observations=obs, stopped="policy"), decisions=decisions,
                    test_times=())
    assert [d["text"] for d in twice.test_decisions()] == ["first", "second", "again"]
    planned = {p.learner: p.expected_accuracy for p in r.plan}
    # nothing expected at the retry's step: the planned value stands in
    assert twice.leaderboard["expected_accuracy"].tolist() == pytest.approx([0.8, 0.85, planned[a]])
    # the report's table of the live tests: the expected column, and each test's own reason
    from algorank.report import recommend_report

    table = next(t for sec in recommend_report(twice).sections if sec.title == "The live tests" for t in sec.tables)
    assert list(table.header[2:7]) == ["accuracy", "expected", "time", "expected time", "total"]
    assert [row[3] for row in table.rows] == pytest.approx([0.8, 0.85, planned[a]])
    assert [row[7] for row in table.rows] == ["screened", "ok", "ok (test 2)"]
    assert [row[-1] for row in table.rows] == ["stopped after its first fold", "second", "again"]
