"""Strategies and policies (DESIGN.md, contract 2).

A *strategy* is fitted on prior meta-data and yields a *policy* for one new
dataset::

    policy = strategy.fit(meta_train).policy(dataset_info)
    learner = policy.next(history)      # None = stop

``dataset_info`` is a dict of what is known about the new dataset (``dataset``,
``n_instances``, ``n_features``, ``n_classes``, ``majority_fraction`` and any
meta-features; any of them may be missing).  ``history`` is the list of
:class:`~algorank.recommender.kernel.trace.Observation` made so far on that dataset.
"""

from __future__ import annotations

from typing import Mapping, Protocol, Sequence

from algorank.recommender.kernel.trace import Observation

__all__ = ["Strategy", "StrategyBase", "OrderPolicy", "CAPABILITIES", "time_model_spec"]

#: The capabilities a strategy declares as class attributes (all False unless declared; callers read
#: these flags, they never probe for methods):
#:
#: * ``needs_window``: takes the MIL window through ``with_window(tmin, tmax)`` (oracle, lt);
#: * ``sees_held_out``: fitted on the full meta-data, held-out dataset included (the oracle);
#: * ``time_model_aware``: ``with_time_model(time_overhead=, time_scale=, time_kind=)`` returns an
#:   unfitted copy that ranks with live test times;
#: * ``adaptive``: the policy's next choice depends on the observed history (at, ei);
#: * ``predicts``: the policy has ``predictions(history)`` (ei);
#: * ``fast_loo``: ``loo_orders(arrays, *, train=None)``, every leave-one-dataset-out order at once;
#: * ``has_dataset_scores``: ``dataset_scores(accuracy, seconds)``, the key of the ideal order.
CAPABILITIES = ("needs_window", "sees_held_out", "time_model_aware", "adaptive", "predicts", "fast_loo",
                "has_dataset_scores")


def time_model_spec(time_model) -> str:
    """The spec parameters of a live time model: ``""`` for the identity, else ``",overhead=O,scale=S"``
    (only the parts that differ from the identity)."""
    parts = []
    if time_model.overhead != 0:
        parts.append(f"overhead={time_model.overhead:g}")
    if time_model.scale != 1:
        parts.append(f"scale={time_model.scale:g}")
    return "".join("," + x for x in parts)


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


class StrategyBase:
    """Declared capabilities (:data:`CAPABILITIES`, all False here) and a read-only ``name``.

    ``name`` is the spec the strategy was built from (the registry passes what the user typed) or,
    when none was given, :meth:`default_name`: a spec that names every parameter set away from its
    default, the live time model included, so two strategies that differ only there have different
    names.  Copies (``with_time_model``, ``with_window``) pass the name on; nothing assigns it.
    """

    needs_window = False
    sees_held_out = False
    time_model_aware = False
    adaptive = False
    predicts = False
    fast_loo = False
    has_dataset_scores = False

    _name: str | None = None

    @property
    def name(self) -> str:
        """The strategy's spec (read-only)."""
        return self._name if self._name else self.default_name()

    def default_name(self) -> str:
        """The spec of this strategy's parameters (used when no name was given)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


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
