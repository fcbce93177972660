"""One validation of the numbers every command shares: seeds and fold counts.

Every layer (the evaluator, ``recommend``, the estimator, the live time model, the command
line's ``--seed`` and ``--cv``) checks these values with the functions below, so the same
mistake gets the same one-line :class:`~algorank.metadata.errors.InputError` (exit 2)
wherever it is made, before any work starts.
"""

from __future__ import annotations

import numbers
from urllib.parse import urlparse

from algorank.metadata.errors import InputError

__all__ = ["check_seed", "check_folds", "check_url", "check_budget"]


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_seed(value, *, name: str = "random_state") -> int:
    """A seed: an integer >= 0 (numpy's seed sequences are unsigned).

    Raises
    ------
    InputError
        ``{name} must be an integer >= 0; got ...``
    """
    if not _is_int(value) or value < 0:
        raise InputError(f"{name} must be an integer >= 0; got {value!r}")
    return int(value)


def check_folds(value, *, name: str = "cv", n_rows: int | None = None) -> int:
    """A number of cross-validation folds: an integer >= 2, and at most ``n_rows`` when given.

    Raises
    ------
    InputError
        ``{name} (number of folds) must be an integer >= 2; got ...``, or, with ``n_rows``,
        ``{name} = K folds need at least K rows (one per fold); the dataset has N``.
    """
    if not _is_int(value) or value < 2:
        raise InputError(f"{name} (number of folds) must be an integer >= 2; got {value!r}")
    if n_rows is not None and n_rows < value:
        raise InputError(f"{name} = {int(value)} folds need at least {int(value)} rows (one per fold); "
                         f"the dataset has {int(n_rows)}")
    return int(value)


def check_url(value, *, name: str = "server") -> str:
    """An http(s) URL with a host.

    Raises
    ------
    InputError
        ``{name} must be an http(s) URL such as https://www.openml.org/api/v1/xml; got ...``
    """
    parsed = urlparse(str(value))
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise InputError(f"{name} must be an http(s) URL such as https://www.openml.org/api/v1/xml; got {value!r}")
    return str(value)


def check_budget(value, *, name: str = "budget_seconds", none_ok: bool = True) -> float | None:
    """A budget in seconds: a finite number > 0 (or None, no limit, when ``none_ok``); the one check of budgets.

    Raises
    ------
    InputError
        Not a number, not finite, not positive, a bool, or None where a limit is needed.
    """
    import math

    if value is None and none_ok:
        return None
    try:
        b = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError, OverflowError):
        b = math.nan
    if not (math.isfinite(b) and b > 0):
        raise InputError(f"{name} must be a positive number of seconds; got {value!r}")
    return b
