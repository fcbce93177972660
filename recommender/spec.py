"""Parsing of strategy-spec parameters (``ar:p=1/16,overhead=0.1``), shared by every strategy module.

The strategy modules import these helpers and :mod:`algorank.recommender.registry` imports the
strategy modules, so the helpers live here, below both: no import cycle.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from algorank.metadata.checks import check_seed
from algorank.metadata.errors import InputError
from algorank.recommender.a3r import check_p

__all__ = ["TIME_MODEL_KEYS", "split_spec", "join_spec", "parse_p", "pop_number", "int_param", "seed_from", "pop_time_model"]

#: Spec keys of the live time model (``T = scale * t + overhead``) understood by ar, at and lt.
TIME_MODEL_KEYS = ("overhead", "scale")


def split_spec(spec) -> tuple[str, dict]:
    """The one parser of strategy specs: ``"ar:p=1/16,overhead=0.1"`` -> ``("ar", {"p": "1/16", "overhead": "0.1"})``.

    The name and the keys are lower-cased, names and values stripped; values stay strings (each
    strategy's factory converts the ones it understands).  A bare word is a flag:
    ``"portfolio:rank"`` -> ``("portfolio", {"rank": ""})``.

    Raises
    ------
    InputError
        A parameter that is neither ``key=value`` nor a flag (a word of letters, digits and ``_``).
    """
    text = str(spec).strip()
    name, _, rest = text.partition(":")
    params: dict[str, str] = {}
    for item in filter(None, (x.strip() for x in rest.split(","))):
        key, eq, value = item.partition("=")
        if not key.strip() or (not eq and not key.strip().replace("_", "").isalnum()):
            raise InputError(f"strategy spec {text!r}: parameters must look like key=value or a flag; got {item!r}")
        params[key.strip().lower()] = value.strip()
    return name.strip().lower(), params


def join_spec(name: str, params: dict) -> str:
    """The spec of ``name`` with ``params`` (the inverse of :func:`split_spec`)."""
    return name + (":" + ",".join(f"{k}={v}" for k, v in params.items()) if params else "")


def parse_p(text, *, upper: float = 1.0) -> float:
    """Parse an A3R exponent: ``1/64``, ``0.015625``, ``0`` (or a number); must lie in [0, ``upper``].

    Raises
    ------
    InputError
        From :func:`~algorank.recommender.a3r.check_p`, naming the text as given and the rule.
    """
    if isinstance(text, (int, float, np.floating, np.integer)) and not isinstance(text, bool):
        return check_p(text, upper=upper)
    s = str(text).strip()
    try:
        if "/" in s:
            num, den = s.split("/", 1)
            value = float(Fraction(int(num.strip()), int(den.strip())))
        else:
            value = float(s)
    except (ValueError, ZeroDivisionError):
        value = None  # check_p names the rule and the text
    return check_p(value, given=text, upper=upper)


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


def int_param(params: dict, key: str, default: int, strategy: str) -> int:
    return pop_number(params, key, default, strategy=strategy, kind=int, rule="an integer >= 0",
                      valid=lambda v: v >= 0)


def seed_from(random_state) -> int:
    if random_state is None:
        return 0
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**31 - 1))
    return check_seed(random_state)


def pop_time_model(params: dict, strategy: str) -> dict:
    """Pop ``overhead=`` and ``scale=`` from spec parameters -> ``time_overhead``/``time_scale`` kwargs."""
    out = {}
    for key, kw, rule, valid in (("overhead", "time_overhead", "a number >= 0 seconds", lambda v: v >= 0),
                                 ("scale", "time_scale", "a number > 0", lambda v: v > 0)):
        value = pop_number(params, key, None, strategy=strategy, rule=rule, valid=valid)
        if value is not None:
            out[kw] = value
    return out
