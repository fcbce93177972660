"""Why a policy took each learner when it did: one line per decision, for reports.

:class:`Explaining` wraps a policy and, after each choice, asks the policy what it scored
the candidates at that step (duck-typed, so every strategy works):

* a policy with ``scores(history)`` (``ei``): the chosen learner's score
  ``(1 - p_fail) x expected improvement / predicted seconds ** p`` and the runner-up's;
* a policy with ``gains(history)`` (active testing): the expected gain over the best so far;
* a fixed order (average ranking and the baselines): the position in that order, with the
  strategy's mean rank when it has one.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from algorank.metadata.learners import short_name
from algorank.recommender.accuracy_model import from_gain

__all__ = ["Explaining", "explain_choice"]


def _order_text(policy, strategy, history, learner) -> str:
    order = list(getattr(policy, "order", ()))
    tried = {o.learner for o in history}
    left = [l for l in order if l not in tried]
    text = (f"next in the strategy's fixed order (position {order.index(learner) + 1} of {len(order)}; "
            f"{len(left)} untested)") if learner in order else "next in the strategy's order"
    ranks = getattr(strategy, "average_rank_", None)
    if isinstance(ranks, dict) and learner in ranks:
        text += f"; mean rank {ranks[learner]:.2f} over the prior datasets"
    return text


def _expected(policy, strategy, history: Sequence, learner: str) -> float:
    """The score (accuracy, or the metric's score) the policy expected of ``learner`` when it chose it: the conditional
    mean of a policy with an accuracy model (``ei``, ``eiu``: conditioned on the tests so far), clipped to [0, 1];
    NaN for any other policy."""
    names = getattr(strategy, "learners_", None)
    if not hasattr(policy, "scores") or not hasattr(policy, "majority") or names is None or learner not in names:
        return math.nan
    mean = getattr(policy, "last_mean_", None)  # the means the choice was made on, when kept
    if mean is None:
        mean = policy.scores(history)[1]
    value = float(from_gain(np.asarray(mean, dtype=float)[list(names).index(learner)], policy.majority))
    return float(np.clip(value, 0.0, 1.0)) if math.isfinite(value) else math.nan


def _expected_seconds(policy, strategy, learner: str) -> float:
    """The seconds the policy expected ``learner``'s test to take when it chose it: its point prediction rescaled by
    the measured / predicted ratio of the tests so far (``ei``, ``eiu``); NaN for any other policy."""
    names = getattr(strategy, "learners_", None)
    seconds = getattr(policy, "last_seconds_", None)
    if seconds is None or names is None or learner not in names:
        return math.nan
    value = float(np.asarray(seconds, dtype=float)[list(names).index(learner)])
    return value if math.isfinite(value) and value > 0 else math.nan


def explain_choice(policy, strategy, history: Sequence, learner: str) -> dict:
    """``{"step", "learner", "score", "runner_up", "runner_up_score", "expected", "expected_seconds", "text"}`` for
    ``policy`` choosing ``learner``.

    ``score`` is NaN for policies without scores (fixed orders); ``expected`` is the score the policy expected of the
    learner at that step (the conditional mean of ``ei`` and ``eiu``, the tests before it included) and
    ``expected_seconds`` the seconds it expected the test to take (its prediction rescaled by the tests so far); both
    NaN for a policy without such models.
    """
    step = len(history) + 1
    out = {"step": step, "learner": learner, "score": math.nan, "runner_up": None, "runner_up_score": math.nan,
           "expected": math.nan, "expected_seconds": math.nan}
    try:
        out["expected"] = _expected(policy, strategy, history, learner)
        out["expected_seconds"] = _expected_seconds(policy, strategy, learner)
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        pass
    stopped = [o for o in history if o.learner == learner and getattr(o, "capped", False)]
    if stopped and getattr(stopped[-1], "screened", False):  # stopped after its first fold: tested again in full
        out["text"] = ("tested again with every fold: its first fold scored below the bar, and every other learner "
                       "has been tested")
        return out
    if stopped:  # the learner's earlier test was stopped at its time limit: this is its second test
        out["text"] = (f"tested again without a limit: its test was stopped at {stopped[-1].seconds:.3g} s, "
                       "and every other learner has been tested")
        return out
    try:
        if hasattr(policy, "scores") and hasattr(strategy, "learners_"):
            last = getattr(policy, "last_scores_", None)  # the scores the choice was made on, when kept
            score = np.asarray(policy.scores(history)[0] if last is None else last, dtype=float)
            names = list(strategy.learners_)
            j = names.index(learner)
            rest = [(score[i], names[i]) for i in range(len(names)) if i != j and np.isfinite(score[i])]
            out["score"] = float(score[j])
            what = ("P(within eps of the best) / seconds^p" if getattr(strategy, "acq", "ei") == "near"
                    else "(1 - p(fail)) x expected improvement / seconds^p")
            text = f"highest {what}: {score[j]:.3g}"
            if rest:
                s2, l2 = max(rest)
                out["runner_up"], out["runner_up_score"] = l2, float(s2)
                text += f" (next: {short_name(l2)}, {s2:.3g})"
            out["text"] = text
        elif hasattr(policy, "gains"):
            gains = policy.gains(history)
            if not gains:
                out["text"] = "first untested learner of the time-aware average ranking (nothing succeeded yet)"
            else:
                out["score"] = float(gains.get(learner, math.nan))
                rest = sorted(((g, l) for l, g in gains.items() if l != learner), reverse=True)
                out["text"] = f"highest expected gain over the best so far: {out['score']:.3g}"
                if rest:
                    out["runner_up"], out["runner_up_score"] = rest[0][1], float(rest[0][0])
                    out["text"] += f" (next: {short_name(rest[0][1])}, {rest[0][0]:.3g})"
        else:
            out["text"] = _order_text(policy, strategy, history, learner)
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        out["text"] = "chosen by the strategy"
    return out


class Explaining:
    """Policy wrapper that records :func:`explain_choice` for every learner it hands out.

    Attributes
    ----------
    decisions : list of dict
        In the order of the choices.
    """

    def __init__(self, policy, strategy) -> None:
        self.policy, self.strategy = policy, strategy
        self.decisions: list[dict] = []

    def next(self, history):
        learner = self.policy.next(history)
        if learner is not None:
            self.decisions.append(explain_choice(self.policy, self.strategy, list(history), learner))
        return learner

    def __getattr__(self, name):  # stop_reason and other attributes of the wrapped policy
        return getattr(self.policy, name)
