"""Why each learner was taken at its step (for the report and ``--json``)."""

from __future__ import annotations

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
    assert d["text"].startswith("highest (1 - p(fail)) x expected improvement / seconds^p")
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
    assert d["text"] == ("tested again without a limit: its test was stopped at 3.5 s, and every other learner "
                         "has been tested")
    assert policy.decisions[0]["text"].startswith("highest ")
