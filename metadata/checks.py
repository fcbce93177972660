"""One validation of the numbers every command shares: seeds, fold counts, seconds and workers.

Every layer (the evaluator, ``recommend``, the estimator, the live time model, the command
line's seed and fold count) checks these values with the functions below, so the same
mistake gets the same one-line :class:`~algorank.metadata.errors.InputError` (exit 2)
wherever it is made, before any work starts.
"""

from __future__ import annotations

import logging
import math
import numbers
import os
from urllib.parse import urlparse

from algorank.metadata.errors import InputError

__all__ = ["check_seed", "check_folds", "check_url", "check_seconds", "check_bar", "check_budget", "check_n_jobs",
           "available_cores",
           "MAX_SEED", "MAX_SECONDS"]

logger = logging.getLogger(__name__)

#: Largest seed: numpy's legacy generators and scikit-learn take 32-bit seeds.
MAX_SEED = 2**32 - 1
#: Longest time limit, in seconds (about 31 years): larger values overflow the operating system's timers.
MAX_SECONDS = 1e9


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_seed(value, *, name: str = "random_state") -> int:
    """A seed: an integer from 0 to :data:`MAX_SEED` (numpy's seed sequences are unsigned, scikit-learn's 32-bit).

    Raises
    ------
    InputError
        ``{name} must be an integer >= 0; got ...`` or ``{name} must be at most 4294967295 (a 32-bit
        seed); got ...``
    """
    if not _is_int(value) or value < 0:
        raise InputError(f"{name} must be an integer >= 0; got {_short(value)}")
    if value > MAX_SEED:
        raise InputError(f"{name} must be at most {MAX_SEED} (a 32-bit seed); got {_short(value)}")
    return int(value)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def check_seconds(value, *, name: str = "timeout") -> float:
    """A positive, finite number of seconds, at most :data:`MAX_SECONDS`.

    Raises
    ------
    InputError
        ``{name} must be a positive number of seconds (at most 1e+09); got ...``
    """
    message = f"{name} must be a positive number of seconds (at most {MAX_SECONDS:g}); got {_short(value)}"
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, str)):
        raise InputError(message)
    try:
        seconds = float(value)
    except (TypeError, ValueError, OverflowError):
        raise InputError(message) from None
    if not (math.isfinite(seconds) and 0 < seconds <= MAX_SECONDS):
        raise InputError(message)
    return seconds


def check_bar(value, *, name: str = "screen") -> float:
    """An accuracy bar: a number, not NaN and not a bool (it may lie outside [0, 1]: a bar above 1 stops every test,
    one below 0 none).

    Raises
    ------
    InputError
        ``{name} must be an accuracy (a number); got ...``
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value):
        raise InputError(f"{name} must be an accuracy (a number); got {_short(value)}")
    return float(value)


def available_cores() -> int:
    """CPU cores this process may run on (its affinity mask where the system has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def check_n_jobs(value, *, name: str = "n_jobs", allow_none: bool = False) -> int | None:
    """Parallel workers: a non-zero integer (-1 = all cores, -2 = all but one, ...), capped at the cores.

    A count above :func:`available_cores` would only make the workers compete for them (and
    costs a process each): it is lowered to the number of cores, with a note in the log.

    Raises
    ------
    InputError
        ``{name} must be a non-zero integer (-1 = all cores); got ...``
    """
    if value is None and allow_none:
        return None
    if not _is_int(value) or value == 0:
        raise InputError(f"{name} must be a non-zero integer (-1 = all cores); got {_short(value)}")
    cores = available_cores()
    if value > cores:
        logger.warning("note: %s=%d is more than the %d core(s) of this machine; using %d", name, value, cores, cores)
        return cores
    if value < -cores:
        raise InputError(f"{name} = {int(value)} leaves no core of the {cores} of this machine (-1 = all cores)")
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
    """A budget: None (no limit) when ``none_ok``, else :func:`check_seconds`; the one check of budgets.

    Raises
    ------
    InputError
        Not a number, not finite, not positive, above :data:`MAX_SECONDS`, a bool, or None where a
        limit is needed.
    """
    if value is None and none_ok:
        return None
    return check_seconds(value, name=name)
