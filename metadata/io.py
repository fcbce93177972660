"""The output protocol of every file algorank writes, and small helpers shared by every layer (plain / JSON
values of results).

Every command that writes follows the same steps: :func:`check_out_dir` (or
:func:`check_out_file`) before any work, so a bad output path costs nothing; the results are
printed; then the files are written inside :func:`output_folder`, which creates the folder,
turns any :class:`OSError` into one :class:`~algorank.metadata.errors.InputError` (a path that
cannot be written: exit 2) or :class:`~algorank.metadata.errors.AlgorankError` (a full disk, an
I/O error: exit 1) reading ``cannot write ...``, and on failure removes what it created (files
and folders), so nothing half-done is left.  Every single file is written with :func:`atomic_path`
(an unnamed or hidden temporary file renamed into place), so no partial or empty file is ever
visible and a killed process leaves none behind.

What is replaced: never an input of the running command (:func:`protected_inputs`), a folder, a
device, pipe or socket; an existing regular file named by the user (``save_model=`` of :func:`algorank.recommend`,
``out=`` of :func:`algorank.export` and :func:`algorank.pull`) only with ``force`` or when it is
recognisably a file algorank wrote
(:func:`is_algorank_model`, :func:`is_algorank_metadata`); the files algorank names itself inside an
output folder (a command's output folder) are replaced.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import signal
import stat
import tempfile
import threading
from pathlib import Path
from typing import Iterator

from algorank.metadata.errors import AlgorankError, InputError

__all__ = ["atomic_path", "atomic_write_text", "json_dumps", "check_out_dir", "check_out_file", "output_folder",
           "staged_folder", "created_folders", "write_error", "to_plain", "protected_inputs", "input_files",
           "is_algorank_model", "is_algorank_metadata", "refuse_input_folder", "check_dataset_file",
           "is_dataset_spec", "DATASET_SUFFIXES"]

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


def check_out_file(path, *, option: str = "--out", force: bool = False, inputs=(), replaces=None) -> Path:
    """Check, before any work, that the file ``path`` may be written.

    Parameters
    ----------
    path : path-like
        The file to write.
    option : str
        What names it in errors (a parameter or flag).
    force : bool
        Replace an existing regular file even when ``replaces`` does not recognise it.
    inputs : sequence of path-like
        The files the work reads (see :func:`input_files`); with those of the running command
        (:func:`protected_inputs`) they are never replaced, ``force`` or not.
    replaces : callable, optional
        ``replaces(path) -> bool``: whether an existing file is one algorank wrote, which is replaced
        without ``force`` (:func:`is_algorank_model`, :func:`is_algorank_metadata`).

    Raises
    ------
    InputError
        ``path`` is a folder, a device, pipe or socket, an input, an existing file not recognised
        (without ``force``), or its folder cannot be written.
    """
    p = Path(path)
    if p.is_dir():
        raise InputError(f"{option} must be a file, but {str(p)!r} is a folder")
    try:
        st = os.stat(p)
    except (OSError, ValueError):  # absent (or under a file: check_out_dir says so)
        st = None
    if st is not None:
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"{option} {str(p)!r} is not a regular file (a device, pipe or socket): "
                             "it is never replaced")
        _refuse_input(p, option, inputs)
        if not force and not (replaces is not None and replaces(p)):
            raise InputError(f"{option} {str(p)!r} already exists and is not a file algorank wrote: "
                             "give force=True to replace it")
    check_out_dir(p.parent if str(p.parent) else Path("."), option=option)
    return p


def created_folders(path) -> "contextlib.AbstractContextManager[Path]":
    """Context manager for a writer that creates the folder ``path`` itself: on any failure inside, the folders
    it created (``path`` and missing parents) are removed again if they are empty."""
    return _CreatedFolders(Path(path))


class _CreatedFolders:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.missing: list[Path] = []

    def __enter__(self) -> Path:
        self.missing = _missing_folders(self.path)
        return self.path

    def __exit__(self, kind, exc, tb) -> None:
        if kind is not None:
            _remove_folders([d for d in self.missing if d.is_dir()])


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


# ---------------------------------------------------------------- what may be replaced
#: Key of the datasets table in the footer of a meta-data Parquet file algorank saved.
PARQUET_DATASETS_KEY = b"algorank.datasets"
#: (device, inode) of the input files of the running commands or calls -> how many hold it (:func:`protected_inputs`)
_PROTECTED: dict = {}
_PROTECT_LOCK = threading.Lock()


def input_files(*sources) -> list[Path]:
    """The existing files among ``sources`` (paths or strings, nested in lists or tuples; other values ignored).

    A ``.csv`` file's sidecar ``<stem>.datasets.csv`` (the datasets table of meta-data saved as CSV) is
    included when it exists: it is read with the file.
    """
    found: list[Path] = []

    def visit(x) -> None:
        if isinstance(x, (list, tuple)):
            for v in x:
                visit(v)
            return
        if not isinstance(x, (str, os.PathLike)):
            return
        try:
            p = Path(x)
            if p.is_file():
                found.append(p)
                side = p.with_name(p.stem + ".datasets.csv")
                if p.suffix.lower() == ".csv" and side.is_file():
                    found.append(side)
        except (OSError, ValueError):  # a name too long for a path, a NUL: not a file
            return

    for s in sources:
        visit(s)
    return found


def _key(path) -> tuple | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


@contextlib.contextmanager
def protected_inputs(*sources) -> Iterator[list[Path]]:
    """While the block runs, no file of this process's :func:`atomic_path` (every file algorank writes)
    replaces one of the existing files among ``sources`` (see :func:`input_files`).

    Yields the protected files.  A file is recognised by its device and inode, so another name
    for it (a relative path, a symbolic or hard link) is recognised too.
    """
    files = input_files(*sources)
    keys = [k for k in map(_key, files) if k is not None]
    with _PROTECT_LOCK:
        for k in keys:
            _PROTECTED[k] = _PROTECTED.get(k, 0) + 1
    try:
        yield files
    finally:
        with _PROTECT_LOCK:
            for k in keys:
                _PROTECTED[k] -= 1
                if not _PROTECTED[k]:
                    del _PROTECTED[k]


def _refuse_input(path: Path, option: str, inputs=()) -> None:
    key = _key(path)
    if key is None:
        return
    if key in _PROTECTED or key in {_key(f) for f in input_files(*inputs)}:
        if option is None:
            raise InputError(f"cannot write {str(path)!r}: it is an input of this command, never overwritten")
        raise InputError(f"{option} {str(path)!r} is an input of this command: an input is never overwritten")


def refuse_input_folder(folder, sources, *, option: str = "--out") -> None:
    """Raise :class:`~algorank.metadata.errors.InputError` when ``folder`` is one of the folders among ``sources``
    (an ASlib scenario read as meta-data): a folder written into is never an input."""
    for source in sources if isinstance(sources, (list, tuple)) else [sources]:
        same = False
        with contextlib.suppress(OSError, TypeError, ValueError):  # not a path, absent
            same = os.path.isdir(source) and os.path.isdir(folder) and os.path.samefile(source, folder)
        if same:
            raise InputError(f"{option} {str(folder)!r} is an input of this command: an input is never overwritten")


def is_algorank_model(path) -> bool:
    """Whether ``path`` is a model file :func:`~algorank.recommender.live.saved_model.save_model` wrote.

    Such a file is a joblib pickle (plain or compressed) of a scikit-learn ``Pipeline`` whose first
    attribute is ``algorank_info_``.  Only the first opcodes are read (decompressed where needed) with
    :func:`pickletools.genops`, which parses and never unpickles: no code of the file runs.
    """
    import pickletools

    head = _head(Path(path), 4096)
    if not head.startswith(b"\x80"):  # pickle protocol 2 or later
        return False
    strings: list[str] = []
    try:
        for op, arg, _ in pickletools.genops(io.BytesIO(head)):
            if isinstance(arg, str):
                strings.append(arg)
            if len(strings) >= 3 or op.name == "STOP":
                break
    except Exception:  # noqa: BLE001 - truncated or not a pickle
        pass
    return strings[:3] in (["sklearn.pipeline", "Pipeline", "algorank_info_"],) or \
        strings[:2] == ["sklearn.pipeline Pipeline", "algorank_info_"]


def _head(path: Path, size: int) -> bytes:
    """The first ``size`` bytes of ``path``, decompressed when it starts with a gzip, bz2, xz, lzma or zlib
    header (the compressions joblib writes); b"" when it cannot be read."""
    import bz2
    import lzma
    import zlib

    try:
        with open(path, "rb") as f:
            raw = f.read(max(size, 65536))
    except OSError:
        return b""
    try:
        if raw[:2] == b"\x1f\x8b":
            return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(raw, size)
        if raw[:3] == b"BZh":
            return bz2.BZ2Decompressor().decompress(raw, size)
        if raw[:6] == b"\xfd7zXZ\x00" or raw[:3] == b"\x5d\x00\x00":
            return lzma.LZMADecompressor().decompress(raw, size)
        if raw[:1] == b"\x78":
            return zlib.decompressobj().decompress(raw, size)
    except (OSError, EOFError, ValueError, zlib.error, lzma.LZMAError):
        return b""
    return raw[:size]


def is_algorank_metadata(path) -> bool:
    """Whether ``path`` is meta-data :meth:`~algorank.metadata.dataset.MetaDataset.save` wrote.

    A ``.parquet`` file whose footer carries the datasets table under algorank's key (only the
    footer is read), or a ``.csv`` file whose header is the runs table's (``dataset,learner,...``)
    with its sidecar ``<stem>.datasets.csv`` beside it.
    """
    p = Path(path)
    suffix = p.suffix.lower()
    try:
        if suffix == ".parquet":
            import pyarrow.parquet as pq

            return PARQUET_DATASETS_KEY in (pq.read_schema(p).metadata or {})
        if suffix == ".csv":
            with open(p, encoding="utf-8", errors="replace") as f:
                header = f.readline().strip().split(",")
            return header[:2] == ["dataset", "learner"] and p.with_name(p.stem + ".datasets.csv").is_file()
    except Exception:  # noqa: BLE001 - unreadable, not Parquet: not ours
        return False
    return False


# ---------------------------------------------------------------- atomic writes
def _missing_folders(folder: Path) -> list[Path]:
    """The folders of ``folder`` (itself included) that do not exist, outermost first."""
    missing = []
    q = folder
    while not q.exists() and q != q.parent:
        missing.append(q)
        q = q.parent
    return missing[::-1]


def _make_folders(missing: list[Path]) -> list[Path]:
    """Create ``missing`` (outermost first); return those this call created."""
    created = []
    for d in missing:
        try:
            d.mkdir()
        except FileExistsError:
            continue
        created.append(d)
    return created


def _remove_folders(created: list[Path]) -> None:
    """Remove the folders of ``created`` that are empty, innermost first."""
    for d in reversed(created):
        with contextlib.suppress(OSError):
            d.rmdir()


def _unnamed_file(folder: Path) -> int | None:
    """A file without a name in ``folder`` (Linux ``O_TMPFILE``), or None where the system has none."""
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None or not os.path.isdir("/proc/self/fd"):
        return None
    try:
        return os.open(folder, flag | os.O_RDWR | getattr(os, "O_CLOEXEC", 0), 0o666)
    except OSError:  # a file system without it (EOPNOTSUPP), an old kernel (EISDIR), ...: a named file
        return None


@contextlib.contextmanager
def _termination_raises() -> Iterator[None]:
    """In the main thread, make SIGTERM an exception (``SystemExit(143)``) while a named temporary file exists,
    so that it is removed; a handler the program set itself is left alone."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return

    def handler(signum, frame):
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, *, suffix: str | None = None, option: str | None = None) -> Iterator[Path]:
    """Yield a temporary path for the writer; put the file at ``path`` in one rename when the block succeeds.

    The output protocol of every file algorank writes:

    * on Linux the data goes to a file without a name in the target folder (``O_TMPFILE``); the
      yielded path is a link to it in a private temporary folder, named with the target's suffix for
      writers that choose a format by it.  A process that dies in the block, SIGKILL included,
      leaves nothing in the target folder.  At the end the file gets a hidden name beside ``path``
      and is renamed onto it (:func:`os.replace`).  Elsewhere (or where the file system has no
      unnamed files) a hidden temporary file beside ``path`` is used, removed on any failure,
      SIGINT and SIGTERM included;
    * folders missing above ``path`` are created only for the final rename, and removed again (when
      empty) if it fails;
    * ``path`` is never an input of a running command (:func:`protected_inputs`).

    Nothing is left at ``path`` when the body raises, so an interrupted or failed write never
    leaves a half-written or empty output file.

    Parameters
    ----------
    path : path-like
        Final destination.
    suffix : str, optional
        Suffix of the temporary path (defaults to the suffix of ``path``).
    option : str, optional
        The parameter or flag that names ``path``, for errors (default: the path alone).
    """
    import shutil

    final = Path(path)
    _refuse_input(final, option)
    sfx = final.suffix if suffix is None else suffix
    parent = final.parent if str(final.parent) else Path(".")
    missing = _missing_folders(parent)
    fd = _unnamed_file(missing[0].parent if missing else parent)
    created: list[Path] = []
    link_dir = tmp_path = None
    if fd is not None:
        try:  # the writer's path: a link, named with the target's suffix, in a private temporary folder
            link_dir = tempfile.mkdtemp(prefix="algorank-write-")
            tmp_path = Path(link_dir) / f"file{sfx}"
            os.symlink(f"/proc/self/fd/{fd}", tmp_path)
        except OSError:  # no usable temporary folder: a named file beside the target instead
            _clean(fd, link_dir, None, [])
            fd = link_dir = tmp_path = None
    try:
        if fd is not None:
            yield tmp_path
            if not tmp_path.is_symlink():  # the writer replaced the link by a file of its own: take its content
                with open(tmp_path, "rb") as src, open(f"/proc/self/fd/{fd}", "wb") as dst:
                    shutil.copyfileobj(src, dst)
            created = _make_folders(missing)
            _refuse_input(final, option)
            _link_into_place(fd, final)
        else:
            created = _make_folders(missing)
            with _termination_raises():
                handle, name = tempfile.mkstemp(prefix=f".{final.name[:100]}.", suffix=sfx, dir=parent)
                os.close(handle)
                tmp_path = Path(name)
                yield tmp_path
                umask = os.umask(0)
                os.umask(umask)
                os.chmod(tmp_path, 0o666 & ~umask)
                _refuse_input(final, option)
                os.replace(tmp_path, final)
    except OSError as exc:  # name the file the caller meant, not the temporary one
        _clean(fd, link_dir, tmp_path, created)
        if _temporary_name(exc.filename, final, link_dir, tmp_path):
            raise OSError(exc.errno, exc.strerror, str(final)) from exc
        raise
    except BaseException:
        _clean(fd, link_dir, tmp_path, created)
        raise
    _clean(fd, link_dir, tmp_path, [])


def _temporary_name(name, final: Path, link_dir, tmp_path) -> bool:
    """Whether the file name of an error is one of the temporary names of a write of ``final``."""
    if name is None:
        return False
    name = os.fsdecode(name) if isinstance(name, bytes) else str(name)
    p = Path(name)
    return (tmp_path is not None and p == Path(tmp_path)) or name.startswith("/proc/self/fd/") or \
        (link_dir is not None and name.startswith(str(link_dir))) or \
        (p.parent == final.parent and p.name.startswith(f".{final.name[:100]}."))


def _clean(fd, link_dir, tmp_path, created) -> None:
    """Close the unnamed file, remove the link folder or the named temporary file, then empty created folders."""
    import shutil

    if fd is not None:
        with contextlib.suppress(OSError):
            os.close(fd)
    if link_dir is not None:
        shutil.rmtree(link_dir, ignore_errors=True)
    elif tmp_path is not None:
        with contextlib.suppress(OSError):
            os.unlink(tmp_path)
    _remove_folders(created)


def _link_into_place(fd: int, final: Path) -> None:
    """Give the unnamed file ``fd`` a hidden name beside ``final`` and rename it onto ``final``."""
    import secrets

    hidden = final.with_name(f".{final.name[:100]}.{secrets.token_hex(4)}.tmp")
    folder = os.open(hidden.parent if str(hidden.parent) else ".", os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:  # with a folder fd, os.link is linkat(..., AT_SYMLINK_FOLLOW): it links the unnamed file, not /proc's link
        os.link(f"/proc/self/fd/{fd}", hidden.name, dst_dir_fd=folder, follow_symlinks=True)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, str(hidden)) from None
    finally:
        os.close(folder)
    try:
        os.replace(hidden, final)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(hidden)
        raise


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
DATASET_SUFFIXES = (".arff", ".csv", ".txt", ".tsv", ".parquet", ".pq", ".gz", ".bz2", ".xz", ".zip")


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
