"""Calling the ``openml`` package robustly: our retries, backoff, timeouts and errors.

``openml`` has its own retry loop (``openml.config.connection_n_retries``, a
"human" policy sleeping 1, 2, 3... s, or a "robot" policy sleeping up to a
minute) and sends requests *without* a timeout.  During a pull we switch its
loop off (one attempt per call) and wrap every call in :func:`call_with_retries`:

* each attempt runs under a deadline (``RetryPolicy.timeout``); a call that
  has not returned by then counts as a timeout (the stuck request is left to
  finish in a daemon thread, its result is discarded);
* transient failures are retried with exponential backoff and jitter:
  ``wait = min(max_backoff, backoff * 2**(attempt-1)) * (1 + jitter * u)``,
  ``u ~ Uniform(0, 1)`` from a seeded generator.  Transient means: a
  connection error, a timeout, an HTTP 5xx or a response that is not XML, or
  an OpenML error 107 (database connection, sent under load) or any OpenML
  error with a code >= 1000, or an answer ``openml`` cannot parse;
* other OpenML errors (a bad filter, an unknown suite) are raised at once;
* when the server was never reached (every attempt was a connection error),
  :class:`OpenMLUnreachable`, an :class:`~algorank.metadata.errors.InputError` naming
  the server and suggesting the offline mode, is raised.  With the default
  policy this takes about 7-11 s.
"""

from __future__ import annotations

import contextlib
import logging
import random
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from .errors import AlgorankError, InputError

__all__ = [
    "RetryPolicy",
    "OpenMLUnreachable",
    "OpenMLRequestError",
    "OpenMLNoResult",
    "openml_config",
    "call_with_retries",
    "DEFAULT_SERVER",
]

logger = logging.getLogger(__name__)

#: The public OpenML REST API (XML).
DEFAULT_SERVER = "https://www.openml.org/api/v1/xml"
_TRANSIENT_CODES = {107}


class OpenMLUnreachable(InputError):
    """The OpenML server could not be reached at all (no network, DNS failure, refused)."""


class OpenMLRequestError(AlgorankError):
    """OpenML answered with an error that retrying does not cure, or kept failing."""


class OpenMLNoResult(Exception):
    """OpenML said "no results" for a request (an empty listing, an unknown id)."""

    def __init__(self, code: int | None, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to call OpenML.

    Parameters
    ----------
    attempts : int
        Attempts per request (>= 1).
    backoff : float
        Seconds to wait after the first failed attempt; doubled after each further one.
    max_backoff : float
        Upper bound of one wait before jitter.
    jitter : float
        Each wait is multiplied by ``1 + jitter * u`` with ``u ~ U(0, 1)``.
    timeout : float
        Seconds one attempt may take before it counts as a timeout.
    random_state : int, optional
        Seed of the jitter generator.
    """

    attempts: int = 4
    backoff: float = 1.0
    max_backoff: float = 30.0
    jitter: float = 0.5
    timeout: float = 120.0
    random_state: int | None = 0

    def __post_init__(self) -> None:
        if not isinstance(self.attempts, int) or self.attempts < 1:
            raise InputError(f"retry attempts must be an integer >= 1; got {self.attempts!r}")
        for name in ("backoff", "max_backoff", "jitter", "timeout"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or value < 0 or value != value:
                raise InputError(f"retry {name} must be a number >= 0; got {value!r}")
        if self.timeout <= 0:
            raise InputError(f"retry timeout must be > 0 seconds; got {self.timeout!r}")

    def wait(self, attempt: int, rng: random.Random) -> float:
        """Seconds to sleep after failed attempt number ``attempt`` (1-based)."""
        base = min(self.max_backoff, self.backoff * 2 ** (attempt - 1))
        return base * (1.0 + self.jitter * rng.random())


@contextlib.contextmanager
def openml_config(server: str, cache_dir: str | Path) -> Iterator[Any]:
    """Point ``openml`` at ``server`` with one attempt per call and ``cache_dir`` as its cache.

    Restores the previous configuration on exit.  Yields the ``openml`` module.
    """
    import openml  # lazy: takes ~1.5 s

    cfg = openml.config
    saved = (cfg.server, cfg.connection_n_retries, cfg.retry_policy, cfg.get_cache_directory(), cfg.show_progress)
    saved_root = getattr(cfg, "_root_cache_directory", None)
    cfg.server = server
    cfg.connection_n_retries = 1
    cfg.show_progress = False
    cfg.set_root_cache_directory(Path(cache_dir) / "openml-python")
    try:
        yield openml
    finally:
        cfg.server, cfg.connection_n_retries, cfg.retry_policy = saved[0], saved[1], saved[2]
        cfg.show_progress = saved[4]
        if saved_root is not None:
            cfg.set_root_cache_directory(saved_root)


def _with_deadline(fn: Callable[[], Any], timeout: float) -> Any:
    box: dict = {}
    done = threading.Event()

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = exc
        finally:
            done.set()

    worker = threading.Thread(target=target, name="algorank-openml-call", daemon=True)
    worker.start()
    if not done.wait(timeout):
        raise TimeoutError(f"no answer within {timeout:g} s")
    if "error" in box:
        raise box["error"]
    return box["value"]


def _classify(exc: BaseException) -> str:
    """'noresult', 'unreachable', 'transient' or 'fatal'."""
    import requests
    from openml.exceptions import OpenMLHashException, OpenMLServerError, OpenMLServerException, OpenMLServerNoResult
    from xml.parsers.expat import ExpatError

    if isinstance(exc, OpenMLServerNoResult):
        return "noresult"
    if isinstance(exc, requests.exceptions.ConnectionError) and not isinstance(exc, requests.exceptions.ReadTimeout):
        return "unreachable"
    if isinstance(exc, (TimeoutError, requests.exceptions.Timeout, requests.exceptions.ChunkedEncodingError,
                        OpenMLHashException, ExpatError)):
        return "transient"
    if isinstance(exc, OpenMLServerException):
        code = exc.code or 0
        return "transient" if code in _TRANSIENT_CODES or code >= 1000 else "fatal"
    if isinstance(exc, OpenMLServerError):  # non-XML answer: an HTTP 5xx page from a proxy under load
        return "fatal" if "URI too long" in str(exc) else "transient"
    if isinstance(exc, InputError):
        return "ours"
    return "malformed"  # openml could not parse the answer (e.g. an HTML error page): retry


def _short(exc: BaseException, limit: int = 240) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    text = f"{type(exc).__name__}: {text}"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _connection_reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    for phrase in ("Failed to resolve", "Name or service not known", "Connection refused", "Network is unreachable",
                   "timed out", "No route to host"):
        if phrase in text:
            return phrase.lower()
    cause = re.search(r"Caused by (\w+)\(", text)
    return cause.group(1) if cause else _short(exc, 120)


def call_with_retries(
    fn: Callable[[], Any],
    *,
    what: str,
    server: str,
    policy: RetryPolicy,
    rng: random.Random,
    sleep: Callable[[float], None] = time.sleep,
) -> Any:
    """Call ``fn`` (one ``openml`` request) with retries; see the module docstring.

    Raises
    ------
    OpenMLNoResult
        OpenML answered "no results".
    OpenMLUnreachable
        Every attempt failed to connect.
    OpenMLRequestError
        A non-transient OpenML error, or transient failures on every attempt.
    """
    kinds: list[str] = []
    last: BaseException | None = None
    for attempt in range(1, policy.attempts + 1):
        try:
            return _with_deadline(fn, policy.timeout)
        except Exception as exc:  # noqa: BLE001 - classified below; unknown kinds re-raised
            kind = _classify(exc)
            if kind == "noresult":
                raise OpenMLNoResult(getattr(exc, "code", None), str(exc)) from exc
            if kind == "fatal":
                raise OpenMLRequestError(f"OpenML rejected {what}: {_short(exc)}") from exc
            if kind == "ours":
                raise
            kinds.append(kind)
            last = exc
            if attempt < policy.attempts:
                wait = policy.wait(attempt, rng)
                log = logger.info if kind == "unreachable" else logger.warning
                log("%s failed (attempt %d of %d: %s); retrying in %.2f s",
                               what, attempt, policy.attempts, _short(exc, 160), wait)
                sleep(wait)
    assert last is not None
    if all(k == "unreachable" for k in kinds):
        raise OpenMLUnreachable(
            f"cannot reach the OpenML server at {server} ({_connection_reason(last)}) after {policy.attempts} "
            "attempts; "
            "check the network, or pull offline (offline=True) from a cache (cache_dir) filled by an earlier pull"
        ) from last
    raise OpenMLRequestError(
        f"OpenML kept failing for {what} after {policy.attempts} attempts (last: {_short(last)}); "
        "pages fetched so far are cached: rerun the same command to resume"
    ) from last
