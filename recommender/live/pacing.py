"""Pacing the live loop: no test started that cannot finish, no planning that eats the budget.

:class:`SkipOverBudget` wraps a policy so that a learner whose predicted seconds (calibrated on
this dataset, :meth:`~algorank.recommender.live.environment.LiveEnvironment.expected`) exceed
what is left of the budget is never started: the policy sees it as a failed test of zero
seconds and moves on to the next one, and the skip is logged and reported
(``Recommendation.skipped``).  The one exception is the *last chance*: when the policy has
nothing else left and no test has succeeded yet, the skipped learner with the smallest
prediction is run after all (under the budget's deadline like every test), because a
prediction can be wrong and nothing else can give the user a result.  The time limit the wrapped
policy gives a test (``limit``) is handed on unchanged.

:class:`UntilDeadline` wraps a policy so that it stops handing out learners at a deadline: the
dry run that shows the planned order (:func:`~algorank.recommender.live.recommend.plan`) uses it,
together with the budget itself (the plan stops where the expected seconds add up to it), so
planning costs at most ``(tests that fit in the budget) x (one policy step)``, whatever the
number of learners in the meta-data, and never more than its share of the budget.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from typing import Callable, Sequence

import numpy as np

from algorank.recommender.kernel.trace import ForwardsLimit, Observation
from algorank.metadata.text import escape

__all__ = ["Announcing", "SkipOverBudget", "RetryStopped", "UntilDeadline", "fit_within", "PLAN_BUDGET_SHARE", "SKIP_MESSAGE",
           "MAX_CONSECUTIVE_SKIPS"]

logger = logging.getLogger(__name__)

#: Share of the budget the planned-order dry run may take (it is shown, not needed by the live loop).
PLAN_BUDGET_SHARE = 0.1

#: Message of the zero-second observation a skipped learner is to the wrapped policy.
SKIP_MESSAGE = "not started: predicted to take longer than the budget left"

#: After this many skips in a row the wrapper stops asking (nothing left that fits).
MAX_CONSECUTIVE_SKIPS = 50


class SkipOverBudget(ForwardsLimit):
    """Policy wrapper: never start a test predicted to take longer than the budget left.

    A learner whose earlier test was stopped at its time limit (``capped``) is predicted to take at least
    the seconds that test used.

    Parameters
    ----------
    policy : Policy
        The wrapped policy.
    expected : callable
        learner -> predicted seconds of its test (NaN: unknown, never skipped).
    left : callable
        () -> seconds left of the budget.
    needs : callable, optional
        learner -> seconds a full test needs at the pace its stopped tests showed
        (:meth:`~algorank.recommender.live.environment.LiveEnvironment.needs`; NaN: unknown): a learner tested
        again is predicted to take at least that long, so that it is never started again with less time left
        than its first fold already took.

    Attributes
    ----------
    skipped : list of dict
        ``learner``, ``predicted_seconds``, ``seconds_left`` of every skip, in order.
    last_chance : str or None
        The skipped learner run after all because nothing else was left (None when none was).
    """

    def __init__(self, policy, expected: Callable[[str], float], left: Callable[[], float], *,
                 needs: Callable[[str], float] | None = None) -> None:
        self.policy, self.expected, self.left, self.needs = policy, expected, left, needs
        self.skipped: list[dict] = []
        self.last_chance: str | None = None
        self._skips: list = []  # zero-second failed observations the wrapped policy sees for the skips

    def next(self, history: Sequence):
        for _ in range(MAX_CONSECUTIVE_SKIPS):
            learner = self.policy.next(list(history) + self._skips)
            if learner is None:
                return self._last_chance(history)
            predicted = float(self.expected(learner))
            stopped = [o.seconds for o in history if o.learner == learner and getattr(o, "capped", False)]
            if stopped:  # its test was stopped at its limit: it takes at least that long, and its pace may say more
                need = max(stopped)
                if self.needs is not None:
                    need = float(np.fmax(need, self.needs(learner)))
                predicted = need if not math.isfinite(predicted) else max(predicted, need)
            left = float(self.left())
            if not (math.isfinite(predicted) and predicted > left):
                return learner
            self.skipped.append({"learner": learner, "predicted_seconds": predicted, "seconds_left": max(left, 0.0)})
            logger.info("not starting %s: predicted %.3g s, %.3g s left of the budget", escape(learner), predicted,
                        max(left, 0.0))
            self._skips.append(Observation(learner, math.nan, 0.0, "error", SKIP_MESSAGE))
        logger.info("%d learners in a row predicted to take longer than the budget left: stopping",
                    MAX_CONSECUTIVE_SKIPS)
        return self._last_chance(history)

    def _last_chance(self, history: Sequence):
        succeeded = any(o.status == "ok" and o.accuracy == o.accuracy for o in history)
        tested = {o.learner for o in history}
        waiting = [s for s in self.skipped if s["learner"] not in tested]
        if succeeded or self.last_chance is not None or not waiting or self.left() <= 0:
            return None
        pick = min(waiting, key=lambda s: s["predicted_seconds"])
        self.last_chance = pick["learner"]
        logger.warning("nothing else left and nothing succeeded yet: starting %s although it is predicted to take "
                       "%.3g s with %.3g s left", escape(pick["learner"]), pick["predicted_seconds"], self.left())
        return pick["learner"]


class UntilDeadline:
    """Policy wrapper that stops (returns None) once ``clock()`` reaches ``deadline``.

    Attributes
    ----------
    calls : int
        How many times the wrapped policy was asked (its evaluations).
    cut : bool
        Whether the deadline ended it.
    """

    def __init__(self, policy, deadline: float | None, clock: Callable[[], float] = time.perf_counter) -> None:
        self.policy, self.deadline, self.clock = policy, deadline, clock
        self.calls = 0
        self.cut = False

    def next(self, history: Sequence):
        if self.deadline is not None and self.clock() >= self.deadline:
            self.cut = True
            return None
        self.calls += 1
        return self.policy.next(history)


def fit_within(strategy, meta, seconds: float | None) -> bool:
    """Fit ``strategy`` on ``meta``; give up after ``seconds`` (None: no limit).

    Fitting grows with the square of the number of learners (a covariance over learners): 2,000
    learners take seconds.  The fit runs in a daemon thread and the caller waits at most
    ``seconds``; when it is not done by then, False is returned and the fit is abandoned (it
    finishes unobserved).  Errors of the fit are raised here.
    """
    if seconds is None:
        strategy.fit(meta)
        return True
    box: dict = {}

    def work():
        try:
            strategy.fit(meta)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            box["error"] = exc

    thread = threading.Thread(target=work, name="algorank-fit", daemon=True)
    thread.start()
    thread.join(max(float(seconds), 0.0))
    if thread.is_alive():
        return False
    if "error" in box:
        raise box["error"]
    return True


class RetryStopped(ForwardsLimit):
    """Policy wrapper: once the wrapped policy has nothing left, test again a learner that was stopped at its limit,
    when the budget left allows the pace it showed.

    A test stopped at its limit (status ``timeout``: its own limit, a per-fold timeout derived from the budget
    left, the watchdog of a first test) found nothing, yet the learner may be among the best: a per-fold timeout
    of ``budget left / folds`` stops a learner whose folds take a little longer than that, with plenty of budget
    left once the cheaper learners are done.  When the wrapped policy returns None, each learner whose tests so
    far all stopped at their limit (screened ones excepted: their first fold was below the bar) and which this
    wrapper has not retried yet is tested again, in the order they were first stopped, if ``margin`` times the
    seconds its pace says a full test needs (``needs``) fit in the budget left.  The re-test's time limit is
    twice that need (never below what its first test used), so it is a longer limit than before, and it runs
    every fold.  A learner whose need does not fit is recorded in :attr:`declined`.

    Parameters
    ----------
    policy : Policy
        The wrapped policy.
    needs : callable
        learner -> seconds a full test needs at the pace its stopped tests showed (NaN: unknown, then ``folds``
        times the seconds its last test used).
    left : callable
        () -> seconds left of the budget (None: no budget).
    folds : int
        Folds of a test.
    margin : float
        Safety factor on the need.

    Attributes
    ----------
    retried : list of dict
        ``learner``, ``needed_seconds``, ``seconds_left``, ``limit``, ``first_seconds`` of each re-test, in order.
    declined : list of dict
        ``learner``, ``needed_seconds``, ``seconds_left`` of each learner stopped at its limit that was not tested
        again because its need did not fit.
    decisions : list of dict
        One decision per re-test (as :func:`~algorank.recommender.live.explain.explain_choice`, ``text`` saying why).
    """

    def __init__(self, policy, needs: Callable[[str], float], left: Callable[[], float | None], *, folds: int = 5,
                 margin: float = 1.25) -> None:
        self.policy, self.needs, self.left = policy, needs, left
        self.folds, self.margin = int(folds), float(margin)
        self.retried: list[dict] = []
        self.declined: list[dict] = []
        self.decisions: list[dict] = []
        self._current: str | None = None

    def _need(self, learner: str, last) -> float:
        need = float(self.needs(learner))
        if not math.isfinite(need):
            need = float(last.seconds) * self.folds
        return max(need, float(last.seconds))

    def next(self, history: Sequence):
        learner = self.policy.next(history)
        if learner is not None:
            self._current = None
            return learner
        self._current = None
        done = {r["learner"] for r in self.retried}
        by_learner: dict = {}
        for o in history:
            by_learner.setdefault(o.learner, []).append(o)
        self.declined = [d for d in self.declined if d["learner"] not in done]
        for name, tests in by_learner.items():
            last = tests[-1]
            if (name in done or any(t.status == "ok" for t in tests) or last.status != "timeout"
                    or getattr(last, "screened", False) or last.seconds <= 0):
                continue
            need = self._need(name, last)
            left = self.left()
            if left is not None and self.margin * need > left:
                self.declined = [d for d in self.declined if d["learner"] != name]
                self.declined.append({"learner": name, "needed_seconds": need, "seconds_left": max(float(left), 0.0)})
                continue
            limit = max(2.0 * need, float(last.seconds))
            self.retried.append({"learner": name, "needed_seconds": need, "seconds_left": left, "limit": limit,
                                 "first_seconds": float(last.seconds)})
            self.declined = [d for d in self.declined if d["learner"] != name]
            room = "" if left is None else f", {left:.3g} s left"
            self.decisions.append({
                "step": len(history) + 1, "learner": name, "score": math.nan, "runner_up": None,
                "runner_up_score": math.nan, "expected": math.nan, "expected_seconds": need,
                "text": (f"re-test with a longer limit: its first test stopped at {last.seconds:.3g} s; at that "
                         f"pace a full test needs about {need:.3g} s{room}, so it runs again under a limit of "
                         f"{limit:.3g} s")})
            logger.info("testing %s again: stopped at %.3g s, needs about %.3g s%s", escape(name), last.seconds,
                        need, room)
            self._current = name
            return name
        return None

    def limit(self, learner: str) -> float:
        """The re-test's limit (twice its need) for a learner this wrapper tests again, else the wrapped policy's."""
        if learner == self._current:
            return next(r["limit"] for r in reversed(self.retried) if r["learner"] == learner)
        return super().limit(learner)

    def screen(self, learner: str, *, best: float | None = None) -> float | None:
        """No first-fold bar for a re-test (it runs every fold), else the wrapped policy's."""
        if learner == self._current:
            return None
        return super().screen(learner, best=best)


class Announcing(ForwardsLimit):
    """Policy wrapper that reports each learner before it is tested."""

    def __init__(self, policy, hook: Callable) -> None:
        self.policy, self.hook = policy, hook

    def next(self, history):
        learner = self.policy.next(history)
        if learner is not None:
            self.hook(learner)
        return learner
