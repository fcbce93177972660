"""Strategies and policies (DESIGN.md, contract 2).

A *strategy* is fitted on prior meta-data and yields a *policy* for one new
dataset::

    policy = strategy.fit(meta_train).policy(dataset_info)
    learner = policy.next(history)      # None = stop

``dataset_info`` is a dict of what is known about the new dataset (``dataset``,
``n_instances``, ``n_features``, ``n_classes``, ``majority_fraction`` and any
meta-features; any of them may be missing).  ``history`` is the list of
:class:`~algorank.evaluation.meta.trace.Observation` made so far on that dataset.
"""

from __future__ import annotations

from typing import Mapping, Protocol, Sequence

from algorank.evaluation.meta.trace import Observation

__all__ = ["Strategy", "OrderPolicy"]


class Strategy(Protocol):
    """An ordering method fitted on prior meta-data.

    Attributes
    ----------
    name : str
        Display name / spec (``"ar:p=1/64"``).
    """

    name: str

    def fit(self, meta) -> "Strategy":
        """Fit on a MetaDataset; return self."""

    def policy(self, dataset_info: Mapping) -> "OrderPolicy":
        """A policy for one new dataset."""


class OrderPolicy:
    """Follow a fixed order, skipping learners already tested; stop when exhausted.

    Parameters
    ----------
    order : sequence of str
        Learner ids, first to test first.
    """

    def __init__(self, order: Sequence[str]) -> None:
        self.order = list(order)

    def next(self, history: Sequence[Observation]) -> str | None:
        tried = {o.learner for o in history}
        for learner in self.order:
            if learner not in tried:
                return learner
        return None
