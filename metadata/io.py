"""Small helpers shared by every layer: atomic writes, plain / JSON values of results."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Iterator

__all__ = ["atomic_path", "atomic_write_text", "json_dumps", "to_plain"]


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, *, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; rename it onto ``path`` on success.

    Nothing is left at ``path`` when the body raises, so an interrupted or failed
    write never leaves a half-written output file.

    Parameters
    ----------
    path : path-like
        Final destination.
    suffix : str, optional
        Suffix of the temporary file (defaults to the suffix of ``path``, so that
        writers which dispatch on the extension keep working).
    """
    final = Path(path)
    final.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(
        prefix=f".{final.name}.", suffix=final.suffix if suffix is None else suffix, dir=final.parent
    )
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp_path, 0o666 & ~umask)
        os.replace(tmp_path, final)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` to ``path`` atomically and return the path."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def to_plain(obj, *, json: bool = False):
    """Plain Python values from results: numpy scalars -> ``int``/``float``/``bool``, arrays and tuples ->
    lists, recursively through dicts and lists (the one converter behind every ``to_dict``).

    ``json=True`` also makes it strict JSON: NaN and infinities become ``None`` and dict keys ``str``.
    """
    import math

    import numpy as np

    if isinstance(obj, dict):
        return {(str(k) if json else k): to_plain(v, json=json) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_plain(v, json=json) for v in obj]
    if isinstance(obj, np.ndarray):
        return to_plain(obj.tolist(), json=json) if json else obj.tolist()
    if isinstance(obj, np.generic):
        obj = obj.item()
    if json and isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def json_dumps(obj, *, indent: int | None = 2) -> str:
    """Serialise ``obj`` to strict JSON: numpy scalars and arrays become Python values, NaN/inf become null."""
    import json

    return json.dumps(to_plain(obj, json=True), indent=indent, allow_nan=False)
