"""Input validation shared by the tests: every failure is an InputError naming the parameter."""

from __future__ import annotations

import math

import numpy as np

from algorank.metadata.errors import InputError

__all__ = ["ALTERNATIVES", "NAN_POLICIES", "check_alternative", "check_alpha", "check_nan_policy",
           "paired_arrays", "check_choice", "check_rank_test"]

ALTERNATIVES = ("two-sided", "less", "greater")
NAN_POLICIES = ("propagate", "omit", "raise")


def check_choice(name: str, value, choices) -> str:
    """Return ``value`` if it is one of ``choices``; else raise InputError naming ``name``."""
    if value not in choices:
        raise InputError(f"{name} must be one of {', '.join(map(str, choices))}; got {value!r}")
    return value


def check_alternative(alternative: str) -> str:
    """Validate ``alternative``."""
    return check_choice("alternative", alternative, ALTERNATIVES)


def check_nan_policy(nan_policy: str) -> str:
    """Validate ``nan_policy``."""
    return check_choice("nan_policy", nan_policy, NAN_POLICIES)


def check_alpha(alpha) -> float:
    """``alpha`` must be a number strictly between 0 and 1."""
    try:
        a = float(alpha)
    except (TypeError, ValueError):
        raise InputError(f"alpha must be a number in (0, 1); got {alpha!r}") from None
    if not (0.0 < a < 1.0) or math.isnan(a):
        raise InputError(f"alpha must lie strictly between 0 and 1; got {alpha!r}")
    return a


def as_float_array(name: str, x, *, ndim: int | None = None) -> np.ndarray:
    """Convert to a float ndarray, raising InputError naming ``name`` on failure."""
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be numeric; got {type(x).__name__}") from None
    if ndim is not None and arr.ndim != ndim:
        raise InputError(f"{name} must be {ndim}-dimensional; got shape {arr.shape}")
    if np.isinf(arr).any():
        raise InputError(f"{name} must not contain infinite values")
    return arr


def check_rank_test(method: str, methods, alpha, average_ranks) -> tuple[float, np.ndarray]:
    """The inputs every test on average ranks shares: ``method`` one of ``methods``, ``alpha`` in (0, 1), and
    ``average_ranks`` as a 1-d float array of at least 2 learners without NaN."""
    check_choice("method", method, methods)
    alpha = check_alpha(alpha)
    r = as_float_array("average_ranks", average_ranks, ndim=1)
    if r.size < 2:
        raise InputError(f"average_ranks must hold at least 2 learners; got {r.size}")
    if np.isnan(r).any():
        raise InputError("average_ranks must not contain NaN")
    return alpha, r


def paired_arrays(x, y, *, nan_policy: str = "propagate", min_n: int = 2) -> tuple[np.ndarray, np.ndarray, bool]:
    """Validate two paired 1-d samples.

    Returns
    -------
    x, y : ndarray
        Equal-length float arrays (pairs with a NaN removed under ``"omit"``).
    has_nan : bool
        True when ``nan_policy="propagate"`` and a NaN is present (the caller
        returns a NaN result).
    """
    check_nan_policy(nan_policy)
    x = as_float_array("x", x).ravel()
    y = as_float_array("y", y).ravel()
    if x.shape != y.shape:
        raise InputError(f"x and y must have the same length (paired samples); got {x.size} and {y.size}")
    nan = np.isnan(x) | np.isnan(y)
    if nan.any():
        if nan_policy == "raise":
            raise InputError(f"x or y contains NaN at {int(nan.sum())} position(s) (nan_policy='raise')")
        if nan_policy == "propagate":
            return x, y, True
        x, y = x[~nan], y[~nan]
    if x.size < min_n:
        raise InputError(f"need at least {min_n} paired observations; got {x.size}")
    return x, y, False


def check_confidence(confidence) -> float:
    """A confidence level strictly between 0 and 1, as float."""
    try:
        c = float(confidence)
    except (TypeError, ValueError):
        raise InputError(f"confidence must be a number in (0, 1); got {confidence!r}") from None
    if not 0.0 < c < 1.0:
        raise InputError(f"confidence must lie strictly between 0 and 1; got {confidence!r}")
    return c


def check_n_datasets(n_datasets) -> int:
    """The number of datasets behind average ranks: an integer of at least 2."""
    try:
        n = int(n_datasets)
    except (TypeError, ValueError):
        raise InputError(f"n_datasets must be an integer; got {n_datasets!r}") from None
    if n < 2:
        raise InputError(f"n_datasets must be at least 2; got {n_datasets!r}")
    return n


def check_labels(labels, k: int) -> tuple:
    """One label per learner (``"0".."k-1"`` when None), as a tuple of str."""
    labels = tuple(str(i) for i in range(k)) if labels is None else tuple(str(l) for l in labels)
    if len(labels) != k:
        raise InputError(f"labels must have one entry per learner ({k}); got {len(labels)}")
    return labels
