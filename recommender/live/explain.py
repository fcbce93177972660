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
from algorank.recommender.live.outcome import retest_reason

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


def _scored(policy, strategy, history: Sequence):
    """``(scores, conditional mean gains)`` of every learner that a policy with scores (``ei``, ``eiu``) chose by: the
    ones it kept (:meth:`~algorank.recommender.ei.EIPolicy.next`), else one call of ``scores(history)``; None for
    any other policy."""
    if not hasattr(policy, "scores") or not hasattr(strategy, "learners_"):
        return None
    score, mean = getattr(policy, "last_scores_", None), getattr(policy, "last_mean_", None)
    if score is None or mean is None:
        score, mean = policy.scores(history)[:2]
    return np.asarray(score, dtype=float), np.asarray(mean, dtype=float)


def _expected(policy, mean: np.ndarray, j: int) -> float:
    """The score (accuracy, or the metric's score) the policy expected of learner ``j`` when it chose it: its
    conditional mean gain (the tests so far included) as a score, clipped to [0, 1]."""
    value = float(from_gain(mean[j], policy.majority))
    return float(np.clip(value, 0.0, 1.0)) if math.isfinite(value) else math.nan


def _expected_seconds(policy, j: int) -> float:
    """The seconds the policy expected learner ``j``'s test to take when it chose it: its point prediction rescaled
    by the measured / predicted ratio of the tests so far (NaN when the policy keeps none)."""
    seconds = getattr(policy, "last_seconds_", None)
    value = math.nan if seconds is None else float(np.asarray(seconds, dtype=float)[j])
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
    cost = getattr(strategy, "p", None)
    if isinstance(cost, (int, float)) and not isinstance(cost, bool) and math.isfinite(cost):
        out["p"] = float(cost)  # the cost exponent of the score, for the formula's explanation
    failed = False
    try:
        scored = _scored(policy, strategy, history)  # one scoring serves the expectations and the text below
        if scored is not None:
            j = list(strategy.learners_).index(learner)
            if hasattr(policy, "majority"):
                out["expected"] = _expected(policy, scored[1], j)
                out["expected_seconds"] = _expected_seconds(policy, j)
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        failed = True
    stopped = [o for o in history if o.learner == learner and getattr(o, "capped", False)]
    if stopped:  # stopped after its first fold or at its time limit: this is its second test
        why = retest_reason(stopped)
        if not getattr(stopped[-1], "screened", False):
            why = why.replace("a longer limit", "no limit but the budget's")
        out["text"] = f"{why}; every other learner has been tested"
        return out
    if failed:
        out["text"] = "chosen by the strategy"
        return out
    try:
        if scored is not None:
            score = scored[0]
            names = list(strategy.learners_)
            rest = [(score[i], names[i]) for i in range(len(names)) if i != j and np.isfinite(score[i])]
            out["score"] = float(score[j])
            p = f"{out['p']:g}" if "p" in out else "p"  # the strategy's cost exponent, not a bare letter
            what = (f"P(within eps of the best) / seconds^{p}" if getattr(strategy, "acq", "ei") == "near"
                    else f"(1 - p(fail)) x expected improvement / seconds^{p}")
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
