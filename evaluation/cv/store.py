"""Crash-safe persistence of finished folds (SQLite in WAL mode).

Each finished fold is one row, inserted and committed in its own transaction the
moment its result reaches the main process, so killing the process (even with
SIGKILL) loses at most the folds still running.  Rows are keyed by
``(config, learner, repeat, fold)``:

``config``
    a SHA-256 over everything that determines a fold's result: the data
    fingerprint (feature and label content, column names, target), the scheme,
    folds, holdout fraction, random_state, per-fit timeout and a schema version.
    The stopping rule, threshold and repetition bounds are *not* part of it: they
    only decide how many repetitions run, so rerunning with a larger
    ``max_repeats`` reuses every fold already computed.

A rerun of the same command finds its finished folds and computes only the rest;
the primary key makes a duplicate impossible (``INSERT OR IGNORE``).  Per-instance
scores (needed by the rank stopping rule) are stored as float64 bytes, so a resumed
adaptive run takes exactly the decisions of an uninterrupted one.

WAL with ``synchronous=NORMAL`` survives a process crash; a power failure can lose
the last few commits (never corrupt the file).

Two processes on one store.  Before computing a fold, a process *claims* it (a row of the
``claims`` table, inserted in its own transaction): a fold already stored is read instead,
and a fold claimed by another live process is left to it; the evaluator waits for that
result (:meth:`FoldStore.claim`) rather than computing the fold twice.  A claim whose
process is gone (its pid no longer runs on this host, or, from another host, it is older
than ``stale_after`` seconds) is taken over.  Claims are released when the fold is
stored, and all of a process's claims when it stops (also on Ctrl-C).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import socket
import sqlite3
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from algorank.metadata.errors import AlgorankError, InputError

__all__ = ["FoldRecord", "FoldStore", "config_key", "SCHEMA_VERSION"]

#: Bump when the meaning of stored fold results changes.
SCHEMA_VERSION = 1

_METRICS = ("accuracy", "balanced_accuracy", "auc", "log_loss", "fit_time", "predict_time", "model_bytes")
#: Per-fold errors of a regression fold (NULL for classification folds).
_REGRESSION_METRICS = ("r2", "rmse", "mae")


@dataclass(frozen=True, eq=False)
class FoldRecord:
    """The result of one learner on one split.

    Attributes
    ----------
    learner : str
    repeat, fold : int
    status : str
        ``ok``, ``error`` or ``timeout``.
    accuracy, balanced_accuracy, auc, log_loss : float
        NaN when not available (failed fit; AUC/log loss without scores).
    fit_time, predict_time : float
        Wall seconds.
    model_bytes : float
        Size of the pickled fitted pipeline (NaN when it failed).
    message : str
        Why the fold failed ("" when ok).
    scores : ndarray
        Score of the true class for each test instance (in test-index order).
    f1_macro : float
        Macro-averaged F1 over the classes in the test fold or predicted (NaN when it failed, and
        for folds a store kept before it was measured).
    r2, rmse, mae : float
        A regression fold's coefficient of determination, root mean squared error and mean absolute
        error on the test rows (NaN for classification folds and failed ones).  Its ``accuracy`` is
        the score ``max(r2, 0)``.
    proba : ndarray or None
        The fold's predictions on the test rows, in test-index order: a classification's class
        probabilities, ``(n_test, n_classes)`` float32; a regression's predicted values, ``(n_test, 1)``
        float64.  None when the learner gives no probabilities, the fold failed, or the record came from
        a store, which does not keep them.  The out-of-fold predictions of ensemble selection.
    """

    learner: str
    repeat: int
    fold: int
    status: str
    accuracy: float
    balanced_accuracy: float
    auc: float
    log_loss: float
    fit_time: float
    predict_time: float
    model_bytes: float
    message: str
    scores: np.ndarray
    f1_macro: float = math.nan
    r2: float = math.nan
    rmse: float = math.nan
    mae: float = math.nan
    proba: np.ndarray | None = field(default=None, repr=False, compare=False)

    def as_row(self) -> dict:
        """The runs-schema fields of this record (without ``dataset``)."""
        row = {"learner": self.learner, "repeat": self.repeat, "fold": self.fold, "status": self.status,
               "message": self.message}
        row.update({m: getattr(self, m) for m in _METRICS})
        row["f1_macro"] = self.f1_macro
        row.update(r2=self.r2, rmse=self.rmse, mae=self.mae)
        return row


def config_key(parts: dict) -> str:
    """SHA-256 (hex) of the canonical JSON of ``parts`` plus :data:`SCHEMA_VERSION`."""
    text = json.dumps({"schema": SCHEMA_VERSION, **parts}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


#: sqlite messages of a file that is not a fold store of this version, or is damaged (truncated, overwritten).
_DAMAGED = ("malformed", "not a database", "no such column", "no such table", "has no column", "encrypted",
            "datatype mismatch", "constraint failed", "disk image")


def _store_error(path: Path, exc: Exception, *, opening: bool = False):
    """One-line error for a store that cannot be opened (a bad path: exit 2), is damaged or of another schema
    (exit 2, with how to start over), or cannot be written (a full disk: exit 1)."""
    import errno

    text = " ".join(str(exc).split()) or type(exc).__name__
    full = isinstance(exc, sqlite3.Error) and any(w in text for w in ("full", "disk I/O"))
    full = full or (isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EIO))
    if full:
        return AlgorankError(f"cannot write store {str(path)!r}: {text}")
    if isinstance(exc, sqlite3.DatabaseError) and any(w in text for w in _DAMAGED):
        return InputError(f"store {str(path)!r} is damaged or is not an algorank fold store ({text}); to start "
                          f"over, delete it (its folds are computed again) or choose another store file")
    return InputError(f"cannot {'open' if opening else 'write'} store {str(path)!r}: {text}")


def _translated(method):
    """Turn an sqlite error inside a store method into the one-line error of :func:`_store_error`."""
    import functools

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as exc:
            raise _store_error(self.path, exc) from None

    return wrapper


def _pid_start(pid: int) -> str | None:
    """Start time of a process (Linux clock ticks since boot), to tell a reused pid apart."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rpartition(")")[2].split()[19]
    except (OSError, IndexError):
        return None


def _stale(row, stale_after: float) -> bool:
    """Whether a claim row (owner, host, pid, pid_start, created) belongs to a process that is gone."""
    _, host, pid, pid_start, created = row
    if host == socket.gethostname() and pid is not None:
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return True
        except PermissionError:  # pragma: no cover - another user's process: alive
            pass
        now_start = _pid_start(int(pid))
        return pid_start is not None and now_start is not None and now_start != pid_start  # pid reused
    return created is None or time.time() - float(created) > stale_after


class FoldStore:
    """SQLite file holding finished folds (see the module docstring).

    Parameters
    ----------
    path : path-like
        Database file (created with its folder when missing).

    Raises
    ------
    InputError
        When the file cannot be opened as a store.
    """

    def __init__(self, path) -> None:
        self.path = Path(path)
        self._con = None
        existed = self.path.exists()
        missing = [q for q in self.path.parents if not q.exists()]
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._con = sqlite3.connect(str(self.path), timeout=30, isolation_level=None)
            self._con.execute("PRAGMA journal_mode=WAL")
            self._con.execute("PRAGMA synchronous=NORMAL")
            self._con.execute(
                """CREATE TABLE IF NOT EXISTS folds (
                    config TEXT NOT NULL, learner TEXT NOT NULL, repeat INTEGER NOT NULL, fold INTEGER NOT NULL,
                    status TEXT NOT NULL, accuracy REAL, balanced_accuracy REAL, auc REAL, log_loss REAL,
                    fit_time REAL, predict_time REAL, model_bytes REAL, message TEXT, scores BLOB,
                    created REAL, f1_macro REAL, r2 REAL, rmse REAL, mae REAL,
                    PRIMARY KEY (config, learner, repeat, fold))"""
            )
            self._con.execute(
                "CREATE TABLE IF NOT EXISTS configs (config TEXT PRIMARY KEY, description TEXT, created REAL)"
            )
            self._con.execute(
                """CREATE TABLE IF NOT EXISTS claims (
                    config TEXT NOT NULL, learner TEXT NOT NULL, repeat INTEGER NOT NULL, fold INTEGER NOT NULL,
                    owner TEXT NOT NULL, host TEXT, pid INTEGER, pid_start TEXT, created REAL,
                    PRIMARY KEY (config, learner, repeat, fold))"""
            )
            self._check_schema(existed)
            self._add_f1_column()  # after the check: never alter the tables of a file of another layout
        except (sqlite3.Error, OSError) as exc:
            if self._con is not None:
                self._con.close()
            if not existed:  # leave nothing behind: no empty store file, no empty folders
                for extra in ("", "-wal", "-shm", "-journal"):
                    Path(str(self.path) + extra).unlink(missing_ok=True)
                for q in missing:  # innermost first
                    try:
                        q.rmdir()
                    except OSError:
                        break
            raise _store_error(self.path, exc, opening=True) from None

    def _check_schema(self, existed: bool) -> None:
        """Fail now, with one clear error, on a damaged file or tables of another layout (not at the first fold)."""
        for table, columns in (("folds", "config, learner, repeat, fold, status, " + ", ".join(_METRICS)
                                + ", message, scores, created"),
                               ("configs", "config, description, created"),
                               ("claims", "config, learner, repeat, fold, owner, host, pid, pid_start, created")):
            self._con.execute(f"SELECT {columns} FROM {table} LIMIT 0")
        if existed:
            row = self._con.execute("PRAGMA quick_check(1)").fetchone()
            if row is None or row[0] != "ok":
                raise sqlite3.DatabaseError(f"database disk image is malformed ({row[0] if row else 'no answer'})")

    def close(self) -> None:
        """Release this process's claims and close the connection."""
        try:
            self.release_all()
        finally:
            self._con.close()

    # ------------------------------------------------------------------ claims
    #: Claims from another host older than this many seconds are taken over.
    stale_after = 6 * 3600.0

    @property
    def owner(self) -> str:
        """This store object's claim owner id (host, pid and a random token)."""
        if getattr(self, "_owner", None) is None:
            self._owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"
        return self._owner

    @_translated
    def claim(self, config: str, learner: str, repeat: int, fold: int) -> str:
        """Claim one fold for this process.

        Returns
        -------
        str
            ``"mine"`` (compute it; a claim of a process that is gone is taken over), ``"done"``
            (already stored: read it), or a description of the live process that holds it.
        """
        key = (config, learner, int(repeat), int(fold))
        try:
            self._con.execute("BEGIN IMMEDIATE")
            try:
                if self._con.execute("SELECT 1 FROM folds WHERE config = ? AND learner = ? AND repeat = ? AND "
                                     "fold = ?", key).fetchone():
                    return "done"
                row = self._con.execute("SELECT owner, host, pid, pid_start, created FROM claims WHERE config = ? "
                                        "AND learner = ? AND repeat = ? AND fold = ?", key).fetchone()
                if row is not None and row[0] != self.owner and not _stale(row, self.stale_after):
                    return f"pid {row[2]} on {row[1]}"
                self._con.execute("INSERT OR REPLACE INTO claims VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                  (*key, self.owner, socket.gethostname(), os.getpid(), _pid_start(os.getpid()),
                                   time.time()))
                return "mine"
            finally:
                self._con.execute("COMMIT")
        except sqlite3.Error as exc:
            raise _store_error(self.path, exc) from None

    def release(self, config: str, learner: str, repeat: int, fold: int) -> None:
        """Drop this process's claim of one fold (after storing it, or giving it up)."""
        try:
            self._con.execute("DELETE FROM claims WHERE config = ? AND learner = ? AND repeat = ? AND fold = ? AND "
                              "owner = ?", (config, learner, int(repeat), int(fold), self.owner))
        except sqlite3.Error as exc:
            raise _store_error(self.path, exc) from None

    def release_all(self) -> None:
        """Drop every claim of this process (it stops)."""
        if getattr(self, "_owner", None) is not None:
            try:
                self._con.execute("DELETE FROM claims WHERE owner = ?", (self._owner,))
            except sqlite3.Error:  # closing anyway; the claims are stale once this process is gone
                pass

    def get_fold(self, config: str, learner: str, repeat: int, fold: int) -> FoldRecord | None:
        """One stored fold, or None."""
        return self.get(config, learner).get((int(repeat), int(fold)))

    def __enter__(self) -> "FoldStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _add_f1_column(self) -> None:
        """Give a store written before macro F1 (or the regression errors) were measured its ``f1_macro`` (``r2``,
        ``rmse``, ``mae``) columns (NULL for the old folds)."""
        columns = {row[1] for row in self._con.execute("PRAGMA table_info(folds)")}
        for name in ("f1_macro", *_REGRESSION_METRICS):
            if name in columns:
                continue
            try:
                self._con.execute(f"ALTER TABLE folds ADD COLUMN {name} REAL")
            except sqlite3.OperationalError as exc:  # another process added it first
                if "duplicate column" not in str(exc).lower():
                    raise

    @_translated
    def register(self, config: str, description: dict) -> None:
        """Remember what a config hash stands for (for humans inspecting the file)."""
        self._con.execute("INSERT OR IGNORE INTO configs VALUES (?, ?, ?)",
                          (config, json.dumps(description, sort_keys=True, default=str), time.time()))

    def put(self, config: str, record: FoldRecord) -> bool:
        """Insert one fold in its own transaction; False when it was already stored."""
        values = [None if (isinstance(v, float) and np.isnan(v)) else v
                  for v in (getattr(record, m) for m in _METRICS)]
        try:
            extra = [None if np.isnan(getattr(record, m)) else float(getattr(record, m))
                     for m in ("f1_macro", *_REGRESSION_METRICS)]
            cur = self._con.execute(
                "INSERT OR IGNORE INTO folds (config, learner, repeat, fold, status, " + ", ".join(_METRICS)
                + ", message, scores, created, f1_macro, " + ", ".join(_REGRESSION_METRICS) + ") VALUES ("
                + ", ".join(["?"] * (5 + len(_METRICS) + 4 + len(_REGRESSION_METRICS))) + ")",
                (config, record.learner, int(record.repeat), int(record.fold), record.status, *values,
                 record.message, np.asarray(record.scores, dtype=np.float64).tobytes(), time.time(), *extra),
            )
        except sqlite3.Error as exc:  # e.g. the disk is full: the folds stored so far stay (a rerun resumes)
            raise _store_error(self.path, exc) from None
        return cur.rowcount == 1

    @_translated
    def get(self, config: str, learner: str) -> dict[tuple[int, int], FoldRecord]:
        """All stored folds of ``learner`` under ``config``, keyed by ``(repeat, fold)``."""
        rows = self._con.execute(
            "SELECT learner, repeat, fold, status, accuracy, balanced_accuracy, auc, log_loss, fit_time, "
            "predict_time, model_bytes, message, scores, f1_macro, r2, rmse, mae FROM folds WHERE config = ? AND "
            "learner = ?",
            (config, learner),
        ).fetchall()
        out = {}
        for r in rows:
            nums = [np.nan if v is None else float(v) for v in r[4:11]]
            rec = FoldRecord(r[0], int(r[1]), int(r[2]), r[3], *nums, r[11] or "",
                             np.frombuffer(r[12] or b"", dtype=np.float64).copy(),
                             f1_macro=np.nan if r[13] is None else float(r[13]),
                             **{m: np.nan if v is None else float(v) for m, v in zip(_REGRESSION_METRICS, r[14:17])})
            out[(rec.repeat, rec.fold)] = rec
        return out

    @_translated
    def count(self, config: str | None = None) -> int:
        """Number of stored folds (of one config, or all)."""
        if config is None:
            return int(self._con.execute("SELECT COUNT(*) FROM folds").fetchone()[0])
        return int(self._con.execute("SELECT COUNT(*) FROM folds WHERE config = ?", (config,)).fetchone()[0])
