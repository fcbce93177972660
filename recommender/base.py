"""Strategies and policies.

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

__all__ = ["Strategy", "StrategyBase", "OrderPolicy", "CAPABILITIES", "time_model_spec", "capability",
           "strategy_name"]

#: The capabilities a strategy declares as class attributes (all False unless declared; callers read
#: these flags, they never probe for methods):
#:
#: * ``needs_window``: takes the MIL window through ``with_window(tmin, tmax)`` (oracle, lt);
#: * ``sees_held_out``: fitted on the full meta-data, held-out dataset included (the oracle);
#: * ``time_model_aware``: ``with_time_model(time_overhead=, time_scale=, time_kind=)`` returns an
#:   unfitted copy that ranks with live test times, and ``time_model`` is the TimeModel it ranks with;
#: * ``adaptive``: the policy's next choice depends on the observed history (at, ei);
#: * ``predicts``: the policy has ``predictions(history)`` (ei);
#: * ``fast_loo``: ``loo_orders(arrays, *, train=None)``, every leave-one-dataset-out order at once;
#: * ``fast_loo_fit``: ``loo_sequences(meta, scoring, rows, train)``, every leave-one-dataset-out test
#:   sequence from one preparation of the meta-data, the same as refitting per held-out dataset (ei, lt);
#:   an int array, or ``(it, charges)`` when a test was capped (:func:`~algorank.recommender.kernel.trace.pack`);
#: * ``has_dataset_scores``: ``dataset_scores(accuracy, seconds)``, the key of the ideal order;
#: * ``has_score_ranks``: ``score_ranks(arrays)``, the ranks of ``dataset_scores`` over every dataset's
#:   testable learners that the strategy already holds for these arrays (``(twice ranks, ranked)`` as
#:   :func:`~algorank.recommender.kernel.loss_time.twice_ranks` gives them), or None;
#: * ``conditions_on_landmarks``: the fitted strategy's ``landmarks_`` names the landmarkers its
#:   policy reads from ``dataset_info`` (recommend measures them only then).
#:
#: A strategy with a cost exponent P that ``tune-p`` can sweep declares ``p_upper`` (P's upper
#: bound; None: no tunable P) and may declare ``p_grid`` (its default grid; None: the paper's).
CAPABILITIES = ("needs_window", "sees_held_out", "time_model_aware", "adaptive", "predicts", "fast_loo",
                "fast_loo_fit", "has_dataset_scores", "has_score_ranks", "conditions_on_landmarks")


def capability(strategy, flag: str) -> bool:
    """The declared capability ``flag`` of ``strategy`` (:data:`CAPABILITIES`; False when undeclared).

    The one place capabilities are read: a strategy object written outside algorank that
    declares nothing has none of them.
    """
    if flag not in CAPABILITIES:
        raise ValueError(f"unknown capability {flag!r}; known: {', '.join(CAPABILITIES)}")
    return bool(getattr(strategy, flag, False))


def strategy_name(strategy) -> str:
    """The display name of a strategy: its ``name``, else its class name (objects written outside algorank)."""
    return str(getattr(strategy, "name", None) or type(strategy).__name__)


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

    Every strategy has ``name``, ``fit`` and ``policy``, and declares the capabilities of
    :data:`CAPABILITIES` (True or False) plus ``p_upper`` and ``p_grid``.  The optional methods
    below exist exactly when the matching capability is declared; callers read the flag, never
    probe for the method.

    Attributes
    ----------
    name : str
        Display name / spec (``"ar:p=1/64"``).
    needs_window, sees_held_out, time_model_aware, adaptive, predicts, fast_loo, has_dataset_scores, conditions_on_landmarks : bool
        Declared capabilities (:data:`CAPABILITIES`).
    p_upper : float or None
        Upper bound of the tunable cost exponent P; None when the strategy has none.
    p_grid : tuple of float or None
        Default P grid of ``tune-p`` (None: the paper's grid).
    landmarks_ : tuple of str
        ``conditions_on_landmarks``: the landmarkers the fitted policy reads.
    time_model : TimeModel
        ``time_model_aware``: the test-time model the strategy ranks with.
    """

    name: str
    needs_window: bool
    sees_held_out: bool
    time_model_aware: bool
    adaptive: bool
    predicts: bool
    fast_loo: bool
    fast_loo_fit: bool
    has_dataset_scores: bool
    conditions_on_landmarks: bool
    p_upper: float | None
    p_grid: tuple | None

    def fit(self, meta) -> "Strategy":
        """Fit on a MetaDataset; return self."""

    def policy(self, dataset_info: Mapping) -> "OrderPolicy":
        """A policy for one new dataset (``predicts``: the policy also has ``predictions(history)``)."""

    # optional, declared by a capability
    def with_window(self, tmin: float, tmax: float) -> "Strategy":
        """``needs_window``: an unfitted copy using the MIL window ``[tmin, tmax]``."""

    def with_time_model(self, *, time_overhead: float, time_scale: float, time_kind: str) -> "Strategy":
        """``time_model_aware``: an unfitted copy that ranks with live test times."""

    def loo_orders(self, arrays, *, train=None):
        """``fast_loo``: every leave-one-dataset-out order at once."""

    def loo_sequences(self, meta, scoring, rows, train):
        """``fast_loo_fit``: every leave-one-dataset-out test sequence, as refitting per dataset would give (and the
        charges of capped tests, when there were any)."""

    def dataset_scores(self, accuracy, seconds):
        """``has_dataset_scores``: the key of the ideal order on one dataset."""


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
    fast_loo_fit = False
    has_dataset_scores = False
    has_score_ranks = False
    conditions_on_landmarks = False
    p_upper: float | None = None
    p_grid: tuple | None = None

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
