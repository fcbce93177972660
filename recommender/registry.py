"""Strategy specs: ``ar:p=1/16``, ``random:seed=0``, ``fastest``, ``best-accuracy``, ``oracle``.

A spec is ``NAME`` or ``NAME:key=value,key=value``.  :data:`STRATEGIES` maps each
name to a factory ``factory(params: dict[str, str], random_state, name: str) -> Strategy``, or
to the ``"module:function"`` path of one (imported when the strategy is first asked for);
adding a strategy is one new file with its class and ``from_spec`` factory, and one entry::

    "knn": "algorank.recommender.knn:from_spec",

Factories ``pop`` the parameters they understand; any parameter left over is an
error naming the strategy and the parameter.  ``name`` is the spec as typed (stripped): the
strategy is built with it and keeps it (strategies derive from
:class:`~algorank.recommender.base.StrategyBase`, whose ``name`` is read-only), so two specs
that differ in any parameter (``at:overhead=0.1`` and ``at:overhead=0.5``) are two strategies.
"""

from __future__ import annotations

from typing import Callable

from algorank.metadata.errors import InputError
from algorank.recommender.average_ranking import AverageRanking
from algorank.recommender.baselines import BestAccuracy, Fastest, Oracle, RandomOrder
from algorank.recommender.spec import (TIME_MODEL_KEYS, int_param, parse_p, pop_number, pop_time_model, seed_from,
                                      split_spec)

__all__ = ["STRATEGIES", "strategy_factory", "parse_p", "parse_strategy", "make_ar", "pop_number", "pop_time_model", "TIME_MODEL_KEYS"]

def make_ar(p, **kwargs) -> AverageRanking:
    """AR-A3R with exponent ``p`` (accepts the :func:`parse_p` forms)."""
    return AverageRanking(p=parse_p(p), **kwargs)


def _ar(params: dict, random_state, name: str | None = None) -> AverageRanking:
    p = parse_p(params.pop("p", "0"))
    kwargs = {}
    if "min_coverage" in params:
        kwargs["min_coverage"] = pop_number(params, "min_coverage", None, strategy="ar", rule="a fraction in [0, 1]")
    if "time" in params:
        kwargs["time_kind"] = params.pop("time")
    kwargs.update(pop_time_model(params, "ar"))
    return AverageRanking(p=p, name=name, **kwargs)


def _random(params: dict, random_state, name: str | None = None) -> RandomOrder:
    seed = int_param(params, "seed", seed_from(random_state), "random")
    return RandomOrder(seed, name=name)


#: Strategy name -> factory(params, random_state, name), or the "module:function" path of one.
STRATEGIES: dict[str, Callable | str] = {
    "ar": _ar,
    "random": _random,
    "fastest": lambda params, rs, name: Fastest(name=name),
    "best-accuracy": lambda params, rs, name: BestAccuracy(name=name),
    "oracle": lambda params, rs, name: Oracle(name=name),
    "multi2test": "algorank.recommender.multitest_strategies:multi2test_factory",
    "at": "algorank.recommender.active_testing:from_spec",
    "lt": "algorank.recommender.lt:from_spec",
    "ei": "algorank.recommender.ei:from_spec",
    "oboe": "algorank.recommender.peers.oboe:from_spec",
    "portfolio": "algorank.recommender.peers.portfolio:from_spec",
    "pmf": "algorank.recommender.peers.pmf:from_spec",
    "zeroshot": "algorank.recommender.peers.zeroshot:from_spec",
    "eit": "algorank.recommender.expected_time:from_spec",
    "pstart": "algorank.recommender.portfolio_start:from_spec",  # a portfolio start, then ei (default study)
    "eiu": "algorank.recommender.unexplained:from_spec",  # ei on the uncertainty tested learners leave
}


def strategy_factory(name: str) -> Callable:
    """The factory registered under ``name`` (a ``"module:function"`` entry is imported here, once)."""
    factory = STRATEGIES[name]
    if isinstance(factory, str):
        import importlib

        module, _, attr = factory.partition(":")
        factory = STRATEGIES[name] = getattr(importlib.import_module(module), attr)
    return factory


def parse_strategy(spec: str, *, random_state=None):
    """Build a strategy from a spec such as ``ar:p=1/16`` or ``random:seed=0``.

    Parameters
    ----------
    spec : str
        ``NAME`` or ``NAME:key=value[,key=value...]``; names are the keys of
        :data:`STRATEGIES`.  A bare word is a flag (``portfolio:rank``): the factory gets it with the
        value ``""``, and a factory that takes no such flag rejects it like any unknown parameter.
    random_state : None, int or numpy Generator
        Seed for strategies with randomness when the spec gives none (default 0).

    Returns
    -------
    Strategy
        Built with ``name=spec`` (stripped), so results are keyed by what the user typed.
    """
    text = str(spec).strip()
    name, params = split_spec(text)
    if name not in STRATEGIES:
        raise InputError(f"unknown strategy {name!r} in spec {text!r}; known strategies: {', '.join(sorted(STRATEGIES))}")
    strategy = strategy_factory(name)(params, random_state, text)
    if params:
        raise InputError(f"strategy {name!r} does not take parameter(s) {', '.join(sorted(params))} (spec {text!r})")
    return strategy
