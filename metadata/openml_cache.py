"""On-disk cache of OpenML listing pages: one checksummed JSON file per page.

Every page a pull receives from OpenML (one evaluation-listing page, one task
listing page, one suite description) is written to its own file as soon as it
arrives, atomically (temporary file + rename), so an interrupted pull never
leaves a half-written page and a rerun skips every finished page.

A page file is JSON::

    {"format": 1, "key": "<request key>", "request": {...}, "rows": [...],
     "last": true|false, "sha256": "<hex digest of the canonical payload>"}

``key`` is the full request (server, call, filters, page size and offset);
the file name is a hash of it.  On read, a file that is not valid JSON, whose
key differs, or whose checksum does not match is *corrupt*: it is deleted,
logged, and reported as missing, so the caller refetches it (online) or names
it as missing (offline).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from .io import atomic_write_text, json_dumps

__all__ = ["CachedPage", "PageCache", "default_cache_dir", "request_key"]

logger = logging.getLogger(__name__)

_FORMAT = 1


def default_cache_dir() -> Path:
    """Default cache folder: ``$ALGORANK_CACHE`` or ``$XDG_CACHE_HOME/algorank/openml`` (``~/.cache``)."""
    env = os.environ.get("ALGORANK_CACHE")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or "~/.cache"
    return Path(base).expanduser() / "algorank" / "openml"


def request_key(request: Mapping[str, Any]) -> str:
    """Canonical string of a request description (sorted keys, compact JSON)."""
    return json.dumps(dict(request), sort_keys=True, separators=(",", ":"), default=str)


def _digest(key: str, rows_text: str, last: bool) -> str:
    h = hashlib.sha256()
    for part in (key, rows_text, "1" if last else "0"):
        h.update(part.encode("utf-8"))
        h.update(b"\x00")
    return h.hexdigest()


@dataclass(frozen=True)
class CachedPage:
    """One cached listing page.

    Attributes
    ----------
    key : str
        The canonical request key.
    rows : list of dict
        The parsed rows of the page (JSON values).
    last : bool
        True when this page ended its listing (short page or "no results").
    """

    key: str
    rows: list
    last: bool


class PageCache:
    """Checksummed, atomically written page files under ``root``.

    Parameters
    ----------
    root : path-like
        Cache folder (created on first write).

    Attributes
    ----------
    corrupt : list of str
        Keys of pages found corrupt (and deleted) during this session.
    """

    def __init__(self, root: str | os.PathLike) -> None:
        self.root = Path(root).expanduser()
        self.corrupt: list[str] = []

    def path_for(self, key: str) -> Path:
        """File that holds the page of ``key``."""
        name = hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]
        return self.root / "pages" / name[:2] / f"{name}.json"

    def get(self, key: str) -> CachedPage | None:
        """Return the cached page of ``key``; ``None`` when absent or corrupt (corrupt files are deleted)."""
        path = self.path_for(key)
        if not path.is_file():
            return None
        try:
            payload = json.loads(path.read_text(encoding="utf-8"))
            rows = payload["rows"]
            last = bool(payload["last"])
            stored_key = payload["key"]
            checksum = payload["sha256"]
            if not isinstance(rows, list):
                raise ValueError("rows is not a list")
        except (OSError, ValueError, KeyError, TypeError) as exc:
            return self._drop(key, path, f"unreadable ({type(exc).__name__}: {exc})")
        if stored_key != key:
            return self._drop(key, path, "holds another request (hash collision or tampering)")
        if _digest(key, json_dumps(rows, indent=None), last) != checksum:
            return self._drop(key, path, "checksum mismatch")
        return CachedPage(key=key, rows=rows, last=last)

    def _drop(self, key: str, path: Path, why: str) -> None:
        logger.warning("cached page %s is corrupt (%s); it will be fetched again", path, why)
        self.corrupt.append(key)
        try:
            path.unlink()
        except OSError:  # pragma: no cover - already gone or read-only cache
            pass
        return None

    def put(self, key: str, rows: list, *, last: bool, request: Mapping[str, Any] | None = None) -> Path:
        """Write one page atomically and return its path."""
        rows_text = json_dumps(rows, indent=None)
        rows = json.loads(rows_text)  # canonical JSON values (NaN -> null, numpy -> python)
        payload = {
            "format": _FORMAT,
            "key": key,
            "request": dict(request or {}),
            "rows": rows,
            "last": bool(last),
            "sha256": _digest(key, rows_text, bool(last)),
        }
        return atomic_write_text(self.path_for(key), json_dumps(payload, indent=None))
