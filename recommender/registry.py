"""Strategy specs: ``ar:p=1/16``, ``random:seed=0``, ``fastest``, ``best-accuracy``, ``oracle``.

A spec is ``NAME`` or ``NAME:key=value,key=value``.  :data:`STRATEGIES` maps each
name to a factory ``factory(params: dict[str, str], random_state) -> Strategy``;
adding a strategy is one entry, e.g.::

    STRATEGIES["knn"] = lambda params, rs: KnnRanking(k=int(params.pop("k", "5")))

Factories ``pop`` the parameters they understand; any parameter left over is an
error naming the strategy and the parameter.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Callable

import numpy as np

from algorank.metadata.errors import InputError
from algorank.recommender.a3r import check_p
from algorank.recommender.average_ranking import AverageRanking
from algorank.recommender.baselines import BestAccuracy, Fastest, Oracle, RandomOrder
from algorank.recommender.active_testing import from_spec as active_testing_from_spec
from algorank.recommender.similarity import from_spec as loss_time_from_spec
from algorank.recommender.multitest import multi2test_factory

__all__ = ["STRATEGIES", "parse_p", "parse_strategy", "make_ar", "pop_number", "pop_time_model", "TIME_MODEL_KEYS"]

#: Spec keys of the live time model (``T = scale * t + overhead``) understood by ar, at and lt.
TIME_MODEL_KEYS = ("overhead", "scale")


def parse_p(text) -> float:
    """Parse an A3R exponent: ``1/64``, ``0.015625``, ``0`` (or a number); must lie in [0, 1].

    Raises
    ------
    InputError
        Naming the bad value and the rule.
    """
    if isinstance(text, (int, float, np.floating, np.integer)) and not isinstance(text, bool):
        return check_p(text)
    s = str(text).strip()
    try:
        if "/" in s:
            num, den = s.split("/", 1)
            value = float(Fraction(int(num.strip()), int(den.strip())))
        else:
            value = float(s)
    except (ValueError, ZeroDivisionError):
        raise InputError(f"P must be a number in [0, 1] such as 1/64, 0.015625 or 0; got {text!r}") from None
    if not math.isfinite(value) or not (0.0 <= value <= 1.0):
        raise InputError(f"P must lie in [0, 1]; got {text!r}")
    return value


def pop_number(params: dict, key: str, default, *, strategy: str, kind=float, rule: str = "a number",
               valid=None):
    """Pop spec parameter ``key`` as a number (``default`` when absent).

    Parameters
    ----------
    params : dict
        Spec parameters (strings); ``key`` is removed from it.
    key : str
        Parameter name.
    default
        Returned as is when ``key`` is absent.
    strategy : str
        Strategy name, for the error message.
    kind : {float, int}
        Conversion.
    rule : str
        What a valid value is, for the error message (``"a number in (0, 1)"``).
    valid : callable, optional
        Predicate on the converted value; False raises like a conversion failure.

    Raises
    ------
    InputError
        ``strategy 'X': key must be <rule>; got '<raw>'``.
    """
    raw = params.pop(key, None)
    if raw is None:
        return default
    try:
        value = kind(raw)
    except ValueError:
        value = None
    if value is None or (kind is float and not math.isfinite(value)) or (valid is not None and not valid(value)):
        raise InputError(f"strategy {strategy!r}: {key} must be {rule}; got {raw!r}")
    return value


def _int_param(params: dict, key: str, default: int, strategy: str) -> int:
    return pop_number(params, key, default, strategy=strategy, kind=int, rule="an integer >= 0",
                      valid=lambda v: v >= 0)


def _seed_from(random_state) -> int:
    if random_state is None:
        return 0
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**31 - 1))
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool) and random_state >= 0:
        return int(random_state)
    raise InputError(f"random_state must be None, a non-negative int or a numpy Generator; got {random_state!r}")


def pop_time_model(params: dict, strategy: str) -> dict:
    """Pop ``overhead=`` and ``scale=`` from spec parameters -> ``time_overhead``/``time_scale`` kwargs."""
    out = {}
    for key, kw, rule, valid in (("overhead", "time_overhead", "a number >= 0 seconds", lambda v: v >= 0),
                                 ("scale", "time_scale", "a number > 0", lambda v: v > 0)):
        value = pop_number(params, key, None, strategy=strategy, rule=rule, valid=valid)
        if value is not None:
            out[kw] = value
    return out


def make_ar(p, **kwargs) -> AverageRanking:
    """AR-A3R with exponent ``p`` (accepts the :func:`parse_p` forms)."""
    return AverageRanking(p=parse_p(p), **kwargs)


def _ar(params: dict, random_state) -> AverageRanking:
    p = parse_p(params.pop("p", "0"))
    kwargs = {}
    if "min_coverage" in params:
        kwargs["min_coverage"] = pop_number(params, "min_coverage", None, strategy="ar", rule="a fraction in [0, 1]")
    if "time" in params:
        kwargs["time_kind"] = params.pop("time")
    kwargs.update(pop_time_model(params, "ar"))
    return AverageRanking(p=p, **kwargs)


def _random(params: dict, random_state) -> RandomOrder:
    seed = _int_param(params, "seed", _seed_from(random_state), "random")
    return RandomOrder(seed)


#: Strategy name -> factory(params, random_state).
STRATEGIES: dict[str, Callable] = {
    "ar": _ar,
    "random": _random,
    "fastest": lambda params, rs: Fastest(),
    "best-accuracy": lambda params, rs: BestAccuracy(),
    "oracle": lambda params, rs: Oracle(),
    "multi2test": multi2test_factory,
    "at": active_testing_from_spec,
    "lt": loss_time_from_spec,
}


def parse_strategy(spec: str, *, random_state=None):
    """Build a strategy from a spec such as ``ar:p=1/16`` or ``random:seed=0``.

    Parameters
    ----------
    spec : str
        ``NAME`` or ``NAME:key=value[,key=value...]``; names are the keys of
        :data:`STRATEGIES`.
    random_state : None, int or numpy Generator
        Seed for strategies with randomness when the spec gives none (default 0).

    Returns
    -------
    Strategy
        Its ``name`` is set to ``spec`` (stripped) so results are keyed by what the user typed.
    """
    text = str(spec).strip()
    name, _, rest = text.partition(":")
    name = name.strip().lower()
    if name not in STRATEGIES:
        raise InputError(f"unknown strategy {name!r} in spec {text!r}; known strategies: {', '.join(sorted(STRATEGIES))}")
    params: dict[str, str] = {}
    for item in filter(None, (x.strip() for x in rest.split(","))):
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise InputError(f"strategy spec {text!r}: parameters must look like key=value; got {item!r}")
        params[key.strip().lower()] = value.strip()
    strategy = STRATEGIES[name](params, random_state)
    if params:
        raise InputError(f"strategy {name!r} does not take parameter(s) {', '.join(sorted(params))} (spec {text!r})")
    try:
        strategy.name = text
    except AttributeError:
        pass
    return strategy
