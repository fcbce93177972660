"""Traces: what happened when a policy was followed on one dataset.

An :class:`Observation` is one test: a learner, its accuracy and the seconds it
took.  A :class:`Trace` is the ordered list of observations of one run of a
policy, with cumulative times; loss curves, loss-time curves, MIL and every plot
are computed from traces, whichever environment produced them.

:func:`run_policy` is the single loop shared by simulation
(:class:`~algorank.recommender.kernel.environments.SimulatedEnvironment`) and live use: ask the
policy for the next learner, let the environment test it, feed the observation
back, stop when the policy says so, when nothing is left, or when the budget is
spent.  A policy that sets a time limit per test (``limit``) has it handed to the
environment, which stops the test there (a *capped* observation); one that sets a first-fold
accuracy bar (``screen``) has it handed to an environment that can stop a test after its first
fold (a *screened* observation, capped too).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol, Sequence

import numpy as np
import pandas as pd

__all__ = ["Observation", "Trace", "Policy", "Environment", "run_policy", "limit_of", "screen_of", "ForwardsLimit",
           "encode", "pack"]


@dataclass(frozen=True)
class Observation:
    """One test of one learner on the dataset at hand.

    Attributes
    ----------
    learner : str
        Learner id.
    accuracy : float
        Estimated accuracy in [0, 1]; NaN when the test failed.
    seconds : float
        Time the test took (>= 0).
    status : str
        ``"ok"``, ``"error"`` or ``"timeout"``.
    message : str
        Why a test failed (empty when it did not).
    capped : bool
        The test was stopped early by a rule its policy gave it: at the time limit (:meth:`Policy.limit`), or
        after its first fold (``screened``).  Status ``"timeout"``, ``seconds`` what it used, accuracy NaN.  The
        policy may test the learner again later.
    screened : bool
        The test was stopped after its first fold because that fold's accuracy was below the bar its policy
        gave it (:meth:`Policy.screen`); ``capped`` too, and the message gives the fold's accuracy and the bar.
    fold_accuracy : float or None
        A screened test's first-fold accuracy (None for any other test).
    """

    learner: str
    accuracy: float
    seconds: float
    status: str = "ok"
    message: str = ""
    capped: bool = False
    screened: bool = False
    fold_accuracy: float | None = None


class Policy(Protocol):
    """Chooses the next learner to test from what has been observed so far.

    A policy may also have ``limit(learner) -> float``: the seconds after which the test of the learner it
    has just chosen is stopped (``inf``: none).  :func:`run_policy` hands a finite limit to the environment.
    It may also have ``screen(learner) -> float | None``: an accuracy bar for the first fold of that test (the
    test stops after its first fold when that fold scores below it; None: run every fold).  :func:`run_policy`
    hands it to an environment that can stop a test after its first fold (``screens`` true).
    """

    def next(self, history: Sequence[Observation]) -> str | None:
        """Return the next learner id, or None to stop."""


class Environment(Protocol):
    """Tests a learner on one dataset and reports what happened."""

    def test(self, learner: str, *, limit: float | None = None) -> Observation:
        """Run (or look up) ``learner`` and return the observation; a test still running after ``limit``
        seconds is stopped there (``capped``).  An environment that cannot stop tests may have no ``limit``.
        One whose ``screens`` is true also takes ``screen``: an accuracy bar for the test's first fold."""


def limit_of(policy, learner: str) -> float:
    """The time limit ``policy`` gives the test of ``learner`` (``inf`` when it sets none)."""
    limit = getattr(policy, "limit", None)
    return math.inf if limit is None else float(limit(learner))


def screen_of(policy, learner: str, *, best: float | None = None) -> float | None:
    """The first-fold accuracy bar ``policy`` gives the test of ``learner`` (None when it sets none); ``best``, when
    given, is the best accuracy found so far to set it from (parallel tests: the policy's own state then holds
    stand-ins for the tests still running)."""
    screen = getattr(policy, "screen", None)
    if screen is None:
        return None
    bar = screen(learner) if best is None else screen(learner, best=best)
    return None if bar is None or not math.isfinite(bar) else float(bar)


class ForwardsLimit:
    """Mixin of a policy wrapper that keeps the wrapped policy in ``policy``: the test of a learner it hands out
    has the wrapped policy's time limit and first-fold bar."""

    def limit(self, learner: str) -> float:
        """The wrapped policy's time limit for ``learner``'s test (``inf`` when it sets none)."""
        return limit_of(self.policy, learner)

    def screen(self, learner: str, *, best: float | None = None) -> float | None:
        """The wrapped policy's first-fold accuracy bar for ``learner``'s test (None when it sets none)."""
        return screen_of(self.policy, learner, best=best)


def encode(trace: "Trace", index) -> tuple[list, list]:
    """``(columns, charges)`` of a trace: the column of each tested learner (``index[learner]``) and, per test,
    the seconds charged for a capped test, screened ones included (NaN for any other): what a benchmark stores
    of a trace."""
    return ([index[o.learner] for o in trace.observations],
            [o.seconds if o.capped else math.nan for o in trace.observations])


def pack(encoded, n_rows: int, n_learners: int) -> tuple[np.ndarray, np.ndarray | None]:
    """The encoded traces of some rows (``{row: (columns, charges)}``, :func:`encode`) as arrays.

    Returns
    -------
    sequences : int ndarray (n_rows, width)
        Tested columns in order, padded with -1; ``width`` is ``n_learners``, or more when a learner was
        tested twice (capped, then again).
    charges : float ndarray (n_rows, width) or None
        Seconds charged for each capped test (NaN elsewhere); None when no test was capped.
    """
    width = max([n_learners] + [len(c) for c, _ in encoded.values()])
    seq = np.full((n_rows, width), -1, dtype=np.int64)
    charges = None
    for row, (cols, charge) in encoded.items():
        seq[row, : len(cols)] = cols
        if any(c == c for c in charge):
            if charges is None:
                charges = np.full((n_rows, width), np.nan)
            charges[row, : len(charge)] = charge
    return seq, charges


@dataclass(frozen=True)
class Trace:
    """The observations of one policy run on one dataset, in the order they happened.

    Attributes
    ----------
    dataset : str
        Dataset id (or a name for a live dataset).
    observations : tuple of Observation
        In test order.
    stopped : str
        Why the run ended: ``"policy"``, ``"exhausted"``, ``"budget"``, ``"top"`` or ``"interrupted"``.
    """

    dataset: str
    observations: tuple = field(default_factory=tuple)
    stopped: str = "policy"

    @property
    def learners(self) -> list[str]:
        return [o.learner for o in self.observations]

    @property
    def accuracies(self) -> np.ndarray:
        return np.array([o.accuracy for o in self.observations], dtype=float)

    @property
    def seconds(self) -> np.ndarray:
        return np.array([o.seconds for o in self.observations], dtype=float)

    @property
    def cumulative_seconds(self) -> np.ndarray:
        return np.cumsum(self.seconds)

    def best(self) -> Observation | None:
        """The observation with the highest accuracy (first one on ties); None if none succeeded."""
        ok = [o for o in self.observations if o.status == "ok" and o.accuracy == o.accuracy]
        if not ok:
            return None
        return max(ok, key=lambda o: o.accuracy)  # max keeps the first of equal keys

    def to_frame(self) -> pd.DataFrame:
        """One row per test: learner, accuracy, seconds, cumulative_seconds, status, capped, screened, message.

        ``capped`` marks a test stopped early by its policy's rule (status ``timeout``, seconds = what it used):
        at its time limit, or after its first fold (``screened``)."""
        return pd.DataFrame(
            {
                "learner": self.learners,
                "accuracy": self.accuracies,
                "seconds": self.seconds,
                "cumulative_seconds": self.cumulative_seconds,
                "status": [o.status for o in self.observations],
                "capped": [bool(o.capped) for o in self.observations],
                "screened": [bool(o.screened) for o in self.observations],
                "message": [o.message for o in self.observations],
            }
        )

    def to_records(self) -> list[dict]:
        """JSON-friendly list of {learner, accuracy, seconds, cumulative_seconds, status, capped, screened}."""
        cum = self.cumulative_seconds
        return [
            {
                "learner": o.learner,
                "accuracy": o.accuracy,
                "seconds": o.seconds,
                "cumulative_seconds": float(c),
                "status": o.status,
                "capped": bool(o.capped),
                "screened": bool(o.screened),
            }
            for o, c in zip(self.observations, cum)
        ]


def run_policy(
    policy: Policy,
    env: Environment,
    *,
    dataset: str = "",
    budget: float | None = None,
    max_tests: int | None = None,
    on_observation=None,
    keep_on_interrupt: bool = False,
) -> Trace:
    """Follow ``policy`` in ``env`` until it stops, nothing is left, or a limit is hit.

    Parameters
    ----------
    policy : Policy
        Gives the next learner from the history.
    env : Environment
        Tests learners.
    dataset : str
        Label stored in the trace.
    budget : float, optional
        Stop once the cumulative seconds reach this (the test that crosses it is kept:
        it has been paid for).
    max_tests : int, optional
        Stop after this many tests.
    on_observation : callable, optional
        Called with each observation as it arrives (progress display).
    keep_on_interrupt : bool
        A KeyboardInterrupt ends the loop with ``stopped = "interrupted"`` and returns what
        was observed so far (the live loop: "stop and report what was found").  False (the
        default, every simulation and benchmark) lets it propagate, so no trace cut short by
        Ctrl-C is ever scored.

    Returns
    -------
    Trace
        ``stopped`` says why the loop ended.
    """
    history: list[Observation] = []
    spent = 0.0
    stopped = "policy"
    try:
        while True:
            if max_tests is not None and len(history) >= max_tests:
                stopped = "top"
                break
            if budget is not None and spent >= budget:
                stopped = "budget"
                break
            learner = policy.next(history)
            if learner is None:
                stopped = "policy"
                break
            rules = {}
            limit = limit_of(policy, learner)
            if limit < math.inf:
                rules["limit"] = limit
            if getattr(env, "screens", False):
                bar = screen_of(policy, learner)
                if bar is not None:
                    rules["screen"] = bar
            obs = env.test(learner, **rules)
            history.append(obs)
            spent += obs.seconds
            if on_observation is not None:
                on_observation(obs)
    except KeyboardInterrupt:
        if not keep_on_interrupt:
            raise
        stopped = "interrupted"
    return Trace(dataset=dataset, observations=tuple(history), stopped=stopped)
