"""Small helpers shared by every layer: atomic writes, plain / JSON values of results, output folders
checked up front, write failures as one clean error.

Every command that writes follows the same steps: :func:`check_out_dir` (or
:func:`check_out_file`) before any work, so a bad output path costs nothing; the results are
printed; then the files are written inside :func:`output_folder`, which creates the folder,
turns any :class:`OSError` into one :class:`~algorank.metadata.errors.InputError` (a path that
cannot be written: exit 2) or :class:`~algorank.metadata.errors.AlgorankError` (a full disk, an
I/O error: exit 1) reading ``cannot write ...``, and on failure removes what it created (files
and folders), so nothing half-done is left.  Single files are written with :func:`atomic_path`
(a temporary file renamed into place), so no partial or empty file is ever visible.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from pathlib import Path
from typing import Iterator

from algorank.metadata.errors import AlgorankError, InputError

__all__ = ["atomic_path", "atomic_write_text", "json_dumps", "check_out_dir", "check_out_file", "output_folder",
           "staged_folder", "write_error", "to_plain", "check_dataset_file", "is_dataset_spec", "DATASET_SUFFIXES"]

#: errno values meaning "this path cannot be written" (a user's choice: exit 2); any other
#: OSError while writing (no space left, quota, I/O error) is a failure of the machine (exit 1).
PATH_ERRNOS = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EISDIR, errno.EACCES, errno.EPERM, errno.EROFS,
                         errno.EEXIST, errno.ENAMETOOLONG, errno.ELOOP})


def write_error(exc: OSError, target) -> AlgorankError:
    """One-line error for an OSError met while writing ``target``."""
    where = exc.filename if exc.filename else target
    reason = exc.strerror or str(exc) or type(exc).__name__
    message = f"cannot write {str(where)!r}: {reason}"
    return InputError(message) if exc.errno in PATH_ERRNOS else AlgorankError(message)


def _existing_ancestor(path: Path) -> Path:
    q = path
    while not q.exists() and q != q.parent:
        q = q.parent
    return q


def _probe_writable(folder: Path, option: str, wanted: Path) -> None:
    """Create and remove a temporary file in ``folder`` (permissions, read-only file systems, root)."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=".algorank-probe-", dir=folder)
    except OSError as exc:
        raise InputError(f"{option} {str(wanted)!r} cannot be written: {str(folder)!r}: "
                         f"{exc.strerror or exc}") from None
    os.close(fd)
    os.unlink(tmp)


def check_out_dir(path, *, option: str = "--out") -> Path:
    """Check, before any work, that ``path`` is (or can become) a writable folder.

    Raises
    ------
    InputError
        ``path`` is a file, lies under a file, or its folder (or nearest existing parent)
        cannot be written.
    """
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise InputError(f"{option} must be a folder, but {str(p)!r} is a file")
    base = _existing_ancestor(p)
    if not base.is_dir():
        raise InputError(f"{option} {str(p)!r} cannot be created: {str(base)!r} is a file")
    _probe_writable(base, option, p)
    return p


def check_out_file(path, *, option: str = "--out") -> Path:
    """Check, before any work, that the file ``path`` can be written (not a folder; its folder writable)."""
    p = Path(path)
    if p.is_dir():
        raise InputError(f"{option} must be a file, but {str(p)!r} is a folder")
    check_out_dir(p.parent if str(p.parent) else Path("."), option=option)
    return p


@contextlib.contextmanager
def output_folder(path, *, option: str = "--out") -> Iterator[Path]:
    """Create ``path`` (and missing parents) for writing results; an OSError inside becomes one clean error.

    On an OSError (or an interrupt) the folders this block created are removed again with what
    was written into them; in a folder that existed before, files written with
    :func:`atomic_path` are either complete or absent.  Then :func:`write_error` is raised.
    """
    p = Path(path)
    created: list[Path] = []
    try:
        missing = []
        q = p
        while not q.exists() and q != q.parent:
            missing.append(q)
            q = q.parent
        for d in reversed(missing):
            d.mkdir()
            created.append(d)
        yield p
    except OSError as exc:
        _undo(created)
        raise write_error(exc, p) from None
    except BaseException:
        _undo(created)
        raise


@contextlib.contextmanager
def staged_folder(path, *, option: str = "--out") -> Iterator[Path]:
    """Yield a temporary folder next to ``path``; on success move its files into ``path`` (created if needed).

    For writers of several files (an ASlib scenario): a failure or an interrupt inside the block
    leaves ``path`` as it was (a folder created for it removed again), and the temporary folder
    is always removed.  Each file is moved with :func:`os.replace`, so none is ever half-written.
    An OSError becomes :func:`write_error`.
    """
    import shutil

    with output_folder(path, option=option) as final:
        tmp = Path(tempfile.mkdtemp(prefix=f".{final.name or 'out'}.", dir=final))
        try:
            yield tmp
            for item in sorted(tmp.iterdir()):
                os.replace(item, final / item.name)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def _undo(created: list) -> None:
    import shutil

    if created:  # the first one created holds all the others
        shutil.rmtree(created[0], ignore_errors=True)


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
    except OSError as exc:  # name the file the caller meant, not the temporary one
        if exc.filename is not None and Path(exc.filename) == tmp_path:
            raise OSError(exc.errno, exc.strerror, str(final)) from exc
        raise
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
        if all(type(v) in _PLAIN for v in obj):  # strings, ints, bools, None: already plain (500,000 pairs of ids)
            return list(obj)
        return [to_plain(v, json=json) for v in obj]
    if isinstance(obj, np.ndarray):
        return to_plain(obj.tolist(), json=json) if json else obj.tolist()
    if isinstance(obj, np.generic):
        obj = obj.item()
    if json and isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


_PLAIN = frozenset({str, int, bool, type(None)})


def json_dumps(obj, *, indent: int | None = 2) -> str:
    """Serialise ``obj`` to strict JSON: numpy scalars and arrays become Python values, NaN/inf become null.

    With ``indent``, the text is what ``json.dumps(..., indent=indent)`` writes, byte for byte, built with
    joins (the standard encoder's indented mode runs in Python, one generator step per value: seconds for
    the 500,000 significant pairs of 1,000 learners).
    """
    import json

    plain = to_plain(obj, json=True)
    if indent is not None and isinstance(indent, int) and not isinstance(indent, bool):
        try:
            return _indented(plain, " " * indent, "\n")
        except _NotPlain:
            pass
    return json.dumps(plain, indent=indent, allow_nan=False)


class _NotPlain(Exception):
    """A value the indented writer leaves to :func:`json.dumps`."""


def _indented(obj, step: str, newline: str) -> str:
    """``json.dumps(obj, indent=len(step), allow_nan=False)`` for dicts with str keys, lists, str, int, float,
    bool and None."""
    from json.encoder import encode_basestring_ascii as quote

    def enc(o, inner: str) -> str:
        t = type(o)
        if t is str:
            return quote(o)
        if o is None:
            return "null"
        if o is True:
            return "true"
        if o is False:
            return "false"
        if t is int:
            return int.__repr__(o)
        if t is float:
            if o != o or o in (float("inf"), float("-inf")):
                raise _NotPlain  # json.dumps raises its own error
            return float.__repr__(o)
        deeper = inner + step
        if t is list:
            if not o:
                return "[]"
            sep = "," + deeper
            if all(type(v) is str for v in o):
                body = sep.join(map(quote, o))
            else:
                body = sep.join([enc(v, deeper) for v in o])
            return "[" + deeper + body + inner + "]"
        if t is dict:
            if not o:
                return "{}"
            if not all(type(k) is str for k in o):
                raise _NotPlain
            return "{" + deeper + ("," + deeper).join(
                [quote(k) + ": " + enc(v, deeper) for k, v in o.items()]) + inner + "}"
        raise _NotPlain

    return enc(obj, newline)


# ---------------------------------------------------------------- dataset files
#: File suffixes the dataset reader understands.
DATASET_SUFFIXES = (".arff", ".csv", ".txt", ".tsv", ".parquet", ".pq")


def is_dataset_spec(text: str) -> bool:
    """Whether ``text`` names a dataset that is not a file (``sklearn:NAME``, ``openml:ID``)."""
    return text.strip().startswith(("sklearn:", "openml:"))


def check_dataset_file(path) -> Path:
    """``path`` as a :class:`~pathlib.Path` when it is a non-empty file; else one :class:`InputError`.

    Needs no data library, so the command line checks its ``DATASET`` before the heavy imports.  A
    missing file's error suggests the closest name in its folder (``did you mean 'iris.csv'?``).
    """
    import difflib

    from algorank.metadata.text import escape

    p = Path(path)
    if not p.exists():
        folder = p.parent
        try:
            names = [c.name for c in folder.iterdir() if c.suffix.lower() in DATASET_SUFFIXES][:5000]
        except OSError:
            names = []
        close = difflib.get_close_matches(p.name, names, n=1, cutoff=0.75)
        hint = f"; did you mean {escape(str(folder / close[0]))!r}?" if close else ""
        raise InputError(f"dataset file not found: {escape(str(p))!r}{hint}")
    if p.is_dir():
        raise InputError(f"dataset path is a directory, not a file: {escape(str(p))!r}")
    if p.stat().st_size == 0:
        raise InputError(f"dataset file is empty: {escape(str(p))!r}")
    return p
