"""How a live test ended, in the words every output uses, and why a learner was tested again.

A test's observation keeps the status of the runs schema (``ok``, ``error``, ``timeout``); what a
person reads is one of :data:`OUTCOMES`:

* ``ok``: every fold ran;
* ``screened``: the test stopped after its first fold because that fold scored below the bar the
  strategy set (the best score so far less a few standard errors of one fold);
* ``stopped at its limit``: the test ran out of time (its own time limit, the per-fold timeout
  derived from the budget left, the watchdog of a first test, or the end of the budget);
* ``error``: the learner failed.

The progress lines, the results table, the JSON trace and the HTML report all take their word from
:func:`outcome`, so they cannot disagree.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

from algorank.metadata.learners import short_name
from algorank.metadata.text import format_seconds

__all__ = ["OUTCOMES", "outcome", "retest_reason", "earlier_tests"]

#: The words of :func:`outcome`, in the order of the module docstring.
OUTCOMES = ("ok", "screened", "stopped at its limit", "error")


def _get(o, key: str, default=None):
    if isinstance(o, Mapping):
        return o.get(key, default)
    return getattr(o, key, default)


def outcome(o) -> str:
    """The word for how a test ended (one of :data:`OUTCOMES`).

    Parameters
    ----------
    o : Observation or mapping
        An observation, or a record with ``status`` and ``screened``.
    """
    if _get(o, "screened", False) is True:
        return "screened"
    status = str(_get(o, "status", "ok"))
    if status in ("ok", "error", "screened", "stopped at its limit"):
        return status
    if status == "timeout":
        return "stopped at its limit"
    return "error"


def earlier_tests(observations: Sequence, i: int) -> list:
    """The tests of ``observations[i]``'s learner before it, in order."""
    learner = observations[i].learner
    return [o for o in observations[:i] if o.learner == learner]


def retest_reason(earlier: Sequence, *, folds: int | None = None) -> str | None:
    """Why a learner is tested again, in one sentence (None when ``earlier`` is empty: a first test).

    Parameters
    ----------
    earlier : sequence of Observation
        The learner's earlier tests, in order; the last one says why.
    folds : int, optional
        Folds of a test (for the pace of a screened test).
    """
    if not earlier:
        return None
    last = earlier[-1]
    word = outcome(last)
    if word == "screened":
        fold = _get(last, "fold_accuracy", None)
        said = "" if fold is None or not math.isfinite(float(fold)) else f" (accuracy {float(fold):.4f})"
        return (f"re-test with every fold: its first test stopped after its first fold{said}, below the bar "
                "set by the best so far; a first fold can be unlucky")
    if word == "stopped at its limit":
        return (f"re-test with a longer limit: its first test stopped at {format_seconds(last.seconds)}"
                f"{'' if not _get(last, 'capped', False) else ' (the limit the strategy gave it)'}")
    if word == "error":
        return "re-test after an error"
    return f"tested again ({short_name(last.learner)} already has a result)"
