"""The repeated cross-validation evaluator (issue 5; seeds 000, 001, 003).

:class:`Evaluator` runs learners on one :class:`~algorank.evaluation.cv.datasets.LoadedDataset`
with a seeded resampling scheme (:mod:`algorank.evaluation.cv.resampling`), repeats it a fixed
or adaptive number of times (:mod:`algorank.evaluation.cv.stopping`), persists every finished
fold (:mod:`algorank.evaluation.cv.store`) and returns an :class:`EvaluationResult` whose
``runs`` table is in the MetaDataset runs schema (DESIGN.md contract 4):
``result.to_meta()`` is a :class:`~algorank.metadata.dataset.MetaDataset`.

Execution
---------
Work proceeds in rounds: round ``r`` runs repetition ``r`` (all its folds) for every
learner still active, as independent joblib tasks (``n_jobs``; any joblib backend,
e.g. Dask or Ray, can run them).  Each finished fold is written to the store by the
main process at once.  After the round every learner's stopping rule sees the
repetition; converged learners, learners that reached ``max_repeats`` and learners
that failed on any fold drop out.  Because every fold's result depends only on the
data, the split, the learner and the seed, a resumed run (folds read from the store)
takes the same decisions and returns the same numbers as an uninterrupted one.

Per-fit timeout
---------------
With ``timeout`` set, each fold's fit+predict runs in a child process of a
``multiprocessing`` *forkserver* (POSIX only) that has preloaded this module; the
parent waits on a pipe until the deadline and then kills the child with SIGKILL, so
a stuck fit really is abandoned and its memory returned.  The forkserver is started
once per process (about 1-2 s: it imports numpy/pandas/scikit-learn); each fold then
costs one fork of that clean server (no OpenMP/BLAS thread state inherited, so no
fork-after-threads deadlock) plus pickling the feature matrix to the child and the
small fold result back.  Measured on iris (LDA, 10-fold, this 2-core machine under
load): 43 ms per fold without a timeout, 214 ms with one, i.e. roughly 0.15 s of
overhead per fold; scikit-learn's estimator modules are preloaded in the server so
children do not re-import them.  A plain ``fork``
of the caller was tried first and deadlocked scikit-learn's OpenMP code (kNN) when
the caller had already used OpenMP.  A child that
dies (e.g. killed by the out-of-memory killer, or ``MemoryError``) is recorded as
``error`` with its exit status.  Run sequentially (``n_jobs=1``), the timed folds of one
evaluation share one such child (:class:`_TimedWorker`: the data is sent once, then one fold at a
time under the same per-fold timeout and deadline) until a fold is killed or the child dies; the
next fold then starts a fresh child.  A timed 5-fold test of logistic regression on
breast_cancer after the first: 0.56 s with a child per fold, 0.19 s with one per test.
Without ``timeout`` folds run in-process (or in the
joblib worker) with no such overhead, and exceptions (including ``MemoryError``)
are still recorded as ``error``.  Run sequentially (``n_jobs=1``), a learner whose
fold timed out is abandoned: its remaining folds of that repetition are recorded as
``timeout`` ("not run: ...") without being started.

Deadline.  ``evaluate(..., deadline=t)`` bounds a whole evaluation in wall-clock time
(the live loop's budget): a fold not started by ``t`` is recorded as ``timeout`` (not
run), and a timed fold is killed at ``t`` even if its own timeout is longer.

Orphans and Ctrl-C
------------------
A fold child never outlives the process that wants its result.  It sets the Linux
parent-death signal (SIGKILL when its parent, the forkserver, dies) and closes the
forkserver's "caller alive" pipe that multiprocessing hands every child, so that when
the caller dies (even by SIGKILL) the server sees it, exits, and takes the child with
it.  The child ignores SIGINT: a terminal Ctrl-C reaches the caller, which kills the
child at once (no waiting for the fit, no traceback from the child) and re-raises.

Measurements per fold: accuracy, balanced accuracy (mean recall over the classes
present in the test fold), macro F1 (over the classes in the test fold or predicted),
AUC (one-vs-rest, macro over the classes present in the test fold, from probabilities or
decision values), log loss (probabilities clipped
to [1e-15, 1]; NaN without probabilities), fit and predict wall time, pickled size
of the fitted pipeline, status and message.  For the ``bootstrap`` scheme accuracy
and balanced accuracy are the .632 estimate ``0.632 * out-of-bag + 0.368 *
resubstitution``; AUC and log loss are out-of-bag.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import pickle
import signal
import sys
import time
import types
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from algorank.metadata.dataset import MetaDataset
from algorank.metadata.checks import check_seed
from algorank.metadata.errors import InputError
from algorank.metadata.io import to_plain
from algorank.metadata.learners import DEFAULT_ALLOWED_MODULES, check_allow_modules, short_name
from algorank.metadata.progress import progress_bar

from algorank.evaluation.cv.stopping import STOP_RULES, make_rule, reproducibility
from algorank.evaluation.cv.datasets import LoadedDataset
from algorank.evaluation.cv.preprocessing import LearnerRecipe, encode_dataset, make_pipeline, resolve_learner
from algorank.evaluation.cv.resampling import SCHEMES, Resampler, Split, derive_seed, make_resampler, wilson_interval
from algorank.evaluation.cv.store import FoldRecord, FoldStore, config_key

__all__ = ["Evaluator", "EvaluationResult", "evaluate_fold", "DEFAULT_REPEATS", "write_runs", "start_fold_server",
           "NOT_RUN_DEADLINE"]

logger = logging.getLogger(__name__)

#: Repetitions of each scheme under ``stop="fixed"`` when ``repeats`` is not given.
DEFAULT_REPEATS = {"cv": 1, "5x2": 5, "holdout": 1, "loo": 1, "bootstrap": 10}
_RUN_COLUMNS = ["dataset", "learner", "repeat", "fold", "accuracy", "fit_time", "predict_time", "status",
                "balanced_accuracy", "auc", "log_loss", "model_bytes", "message", "f1_macro"]
_LOG_LOSS_EPS = 1e-15


# ====================================================================== one fold
def _fold_seed(random_state: int, repeat: int, fold: int) -> int:
    return derive_seed(random_state, repeat, fold, 7) >> 1  # 31 bits: any estimator's random_state


def _balanced_accuracy(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    recalls = [np.mean(y_pred[y_true == c] == c) for c in np.unique(y_true)]
    return float(np.mean(recalls))


def _f1_macro(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Macro F1 over the classes present in the fold or predicted (scikit-learn's, zero for an empty class)."""
    from sklearn.metrics import f1_score

    return float(f1_score(y_true, y_pred, average="macro", zero_division=0))


def _auc_ovr(y_true: np.ndarray, scores: np.ndarray) -> float:
    from sklearn.metrics import roc_auc_score

    present = np.unique(y_true)
    if len(present) < 2:
        return math.nan
    if scores.shape[1] == 2 and len(present) == 2:
        return float(roc_auc_score(y_true == 1, scores[:, 1]))
    values = [roc_auc_score(y_true == c, scores[:, c]) for c in present]
    return float(np.mean(values))


def _score_matrix(model, X_test, n_classes: int) -> tuple[np.ndarray | None, bool]:
    """(n_test, n_classes) probabilities (True) or decision values (False); None if neither."""
    classes = np.asarray(model.classes_).astype(int)
    try:
        proba = np.asarray(model.predict_proba(X_test), dtype=float)
        full = np.zeros((proba.shape[0], n_classes))
        full[:, classes] = proba
        return full, True
    except (AttributeError, NotImplementedError):
        pass
    try:
        dec = np.asarray(model.decision_function(X_test), dtype=float)
    except (AttributeError, NotImplementedError):
        return None, False
    if dec.ndim == 1:
        dec = np.column_stack([-dec, dec])
    floor = np.nanmin(dec) - 1 if dec.size else 0.0
    full = np.full((dec.shape[0], n_classes), floor)
    full[:, classes[: dec.shape[1]]] = dec
    return full, False


def _failed_fold(recipe: LearnerRecipe, split: Split, status: str, message: str, *, fit_time: float = 0.0,
                 predict_time: float = math.nan) -> FoldRecord:
    """The record of a fold that produced no result: metrics NaN, one NaN score per test instance."""
    return FoldRecord(recipe.id, split.repeat, split.fold, status, *([math.nan] * 4), fit_time, predict_time,
                      math.nan, message, np.full(len(split.test), np.nan))


def evaluate_fold(recipe: LearnerRecipe, X: np.ndarray, y: np.ndarray, split: Split, *, n_classes: int,
                  random_state: int, nominal: tuple = (), bootstrap: bool = False) -> FoldRecord:
    """Fit ``recipe`` on ``split.train`` and measure it on ``split.test`` (never raises for learner faults).

    Parameters
    ----------
    recipe : LearnerRecipe
    X : ndarray
        Feature matrix from :func:`~algorank.evaluation.cv.preprocessing.encode_features`.
    y : ndarray of int
        Class codes ``0 .. n_classes - 1``.
    split : Split
    n_classes : int
    random_state : int
        Seed of the learner (derived per fold by the evaluator).
    nominal : tuple of bool
        Nominal-column mask of ``X``.
    bootstrap : bool
        Score the .632 estimate (see the module docstring).
    """
    y_test = y[split.test]
    fit_time = predict_time = math.nan
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pipe = make_pipeline(recipe, nominal, random_state=random_state)
            X_train = X[split.train]
            X_test = X[split.test]
            t0 = time.perf_counter()
            pipe.fit(X_train, y[split.train])
            fit_time = time.perf_counter() - t0
            t0 = time.perf_counter()
            y_pred = np.asarray(pipe.predict(X_test)).astype(int)
            scores, is_proba = _score_matrix(pipe, X_test, n_classes)
            predict_time = time.perf_counter() - t0
            accuracy = float(np.mean(y_pred == y_test))
            balanced = _balanced_accuracy(y_test, y_pred)
            f1 = _f1_macro(y_test, y_pred)  # out-of-sample only, also for the bootstrap
            if bootstrap:
                y_resub = np.asarray(pipe.predict(X_train)).astype(int)
                accuracy = 0.632 * accuracy + 0.368 * float(np.mean(y_resub == y[split.train]))
                balanced = 0.632 * balanced + 0.368 * _balanced_accuracy(y[split.train], y_resub)
            rows = np.arange(len(y_test))
            if scores is None:
                auc, log_loss = math.nan, math.nan
                true_score = (y_pred == y_test).astype(float)
            else:
                auc = _auc_ovr(y_test, scores)
                true_score = scores[rows, y_test]
                log_loss = (float(-np.mean(np.log(np.clip(true_score, _LOG_LOSS_EPS, 1.0))))
                            if is_proba else math.nan)
            model_bytes = float(len(pickle.dumps(pipe, protocol=pickle.HIGHEST_PROTOCOL)))
    except Exception as exc:  # a learner fault is a recorded result, not a crash (MemoryError included)
        message = f"{type(exc).__name__}: {exc}".strip()
        return _failed_fold(recipe, split, "error", " ".join(message.split())[:500], fit_time=fit_time,
                            predict_time=predict_time)
    return FoldRecord(recipe.id, split.repeat, split.fold, "ok", accuracy, balanced, auc, log_loss, fit_time,
                      predict_time, model_bytes, "", np.asarray(true_score, dtype=float), f1_macro=f1)


def _detach_from_caller(caller_pid: int) -> None:
    """Make a fold child die with the process that wants its result (see "Orphans" above).

    * Ctrl-C belongs to the caller (which kills this child): SIGINT is ignored here, so a
      terminal interrupt never prints a traceback from the child.
    * The kernel sends SIGKILL when the parent (the forkserver) dies (``PR_SET_PDEATHSIG``).
    * The forkserver hands every child the write end of its "caller alive" pipe; a child
      holding it would keep the server alive after the caller dies (and with it this
      child).  Closing it lets the server see the caller's death and exit.
    * If the caller died before all this was in place, exit now.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:  # pragma: no cover - not Linux
        pass
    try:
        from multiprocessing import forkserver

        server = forkserver._forkserver
        fd = getattr(server, "_forkserver_alive_fd", None)
        if fd is not None:
            os.close(fd)
            server._forkserver_alive_fd = None
    except Exception:  # pragma: no cover - other multiprocessing internals
        pass
    if os.getppid() == 1 or not _alive(caller_pid):
        os._exit(1)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - someone else's process under a reused pid
        return True
    return True


def _child_main(conn, recipe, X, y, split, kwargs, caller_pid, threads=None) -> None:
    _detach_from_caller(caller_pid)
    with _limit_threads(threads):
        record = evaluate_fold(recipe, X, y, split, **kwargs)
    conn.send(record)
    conn.close()


_CONTEXT = None
#: Modules the forkserver imports once, so that no child pays for importing them per fold; the last
#: one fits every portfolio learner once on a tiny dataset, so that no child pays for first calls
#: either (a timed 5-fold test on breast_cancer after the first: 0.74 s -> 0.56 s, median of 3).
_PRELOAD = ["algorank.evaluation.cv.evaluator", "sklearn.pipeline", "sklearn.metrics", "sklearn.dummy", "sklearn.svm",
            "sklearn.discriminant_analysis", "sklearn.ensemble", "sklearn.linear_model", "sklearn.naive_bayes",
            "sklearn.neighbors", "sklearn.neural_network", "sklearn.tree", "algorank.evaluation.cv.forkserver_warmup"]


def _deadline_context():
    """A forkserver multiprocessing context that preloads this module (created once)."""
    global _CONTEXT
    if _CONTEXT is None:
        import multiprocessing

        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(_PRELOAD)
        _CONTEXT = ctx
    return _CONTEXT


def start_fold_server() -> None:
    """Start the forkserver of timed folds now, in the background (best effort).

    Its start-up (importing numpy, pandas and scikit-learn: one to two seconds) then
    overlaps with the caller's own work instead of delaying the first timed fold.
    """
    try:
        from multiprocessing import forkserver

        _deadline_context()
        forkserver.ensure_running()
    except Exception:  # pragma: no cover - no forkserver here: timed folds will say so
        logger.debug("could not start the forkserver early", exc_info=True)


@contextlib.contextmanager
def _main_not_rerun(recipe: LearnerRecipe):
    """Start a fold child without making it run the caller's script again.

    multiprocessing has a child import the parent's ``__main__`` (the user's script) before it
    runs its target, so a script that calls ``AlgorankClassifier.fit`` without an
    ``if __name__ == "__main__":`` guard would run again in every fold child.  A fold needs only
    this module, so while the child is started ``__main__`` is hidden from multiprocessing's
    preparation data (unless the learner itself is a class of ``__main__``).
    """
    main = sys.modules.get("__main__")
    if main is None or str(recipe.path or "").startswith("__main__."):
        yield
        return
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main


#: Seconds given to a killed child to be reaped before the caller moves on without waiting.
_REAP_SECONDS = 0.5


def _kill(proc) -> None:
    if proc.pid is None:  # never started (interrupted or failed in start())
        return
    if proc.is_alive():
        proc.kill()
    proc.join(_REAP_SECONDS)


def _run_with_deadline(timeout: float, recipe: LearnerRecipe, X, y, split: Split, *, deadline: float | None = None,
                       threads: int | None = None, **kwargs) -> FoldRecord:
    """Run :func:`evaluate_fold` in a child process; kill it at the timeout or ``deadline``.

    The per-fold ``timeout`` counts from the child's start; ``deadline`` (a
    :func:`time.perf_counter` value) is absolute.  The child is killed, never waited for,
    also when the caller is interrupted (Ctrl-C), which is then re-raised.
    """
    ctx = _deadline_context()
    receive, send = ctx.Pipe(duplex=False)
    start = time.perf_counter()
    proc = ctx.Process(target=_child_main, args=(send, recipe, X, y, split, kwargs, os.getpid(), threads),
                       daemon=True)
    record = None
    finished = False
    try:
        with _main_not_rerun(recipe):
            proc.start()
        send.close()
        wait = timeout
        if deadline is not None:
            wait = min(wait, deadline - time.perf_counter())
        if receive.poll(max(wait, 0.0)):
            try:
                record = receive.recv()
            except (EOFError, OSError):
                record = None
            finished = True
    finally:
        receive.close()
        if not finished:  # timed out, or interrupted: kill the child now
            _kill(proc)
        else:
            proc.join()
    if not finished:
        cut = deadline is not None and deadline - start < timeout
        limit = f"the evaluation's time limit ({deadline - start:.3g} s left)" if cut else f"the {timeout:g} s timeout"
        return _failed_fold(recipe, split, "timeout", f"fit+predict exceeded {limit}; the fit process was killed",
                            fit_time=time.perf_counter() - start)
    if record is None:
        code = proc.exitcode
        how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        return _failed_fold(recipe, split, "error", f"the fit process died ({how}; out of memory?)",
                            fit_time=time.perf_counter() - start)
    return record


#: Message of a fold that was not started because the evaluation's deadline had passed.
NOT_RUN_DEADLINE = "not run: the evaluation's time limit was reached"


def _worker_main(conn, X, y, caller_pid, threads=None) -> None:
    """Body of a :class:`_TimedWorker` child: evaluate the folds it is sent until told to stop."""
    _detach_from_caller(caller_pid)
    with _limit_threads(threads):
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                break
            if message is None:
                break
            recipe, split, kwargs = message
            conn.send(evaluate_fold(recipe, X, y, split, **kwargs))


class _TimedWorker:
    """One fold child kept alive for the consecutive timed folds of a sequential evaluation.

    :func:`_run_with_deadline` forks a child per fold and pickles the feature matrix to each;
    this worker receives the data once and then one fold at a time, with the same per-fold
    timeout and deadline: a fold that runs past them gets the whole child killed (its memory
    returned) and the next fold starts a fresh one.  A fold child pays about 0.1 s of start-up
    and first calls, so a timed 5-fold test saves about four of those.  A learner class defined
    in ``__main__`` gets a worker of its own (the script is then imported in that child only).
    """

    def __init__(self, X, y, threads=None) -> None:
        self.X, self.y, self.threads = X, y, threads
        self.proc = None
        self.conn = None
        self.with_main = False

    def _start(self, recipe: LearnerRecipe) -> None:
        ctx = _deadline_context()
        mine, theirs = ctx.Pipe(duplex=True)
        proc = ctx.Process(target=_worker_main, args=(theirs, self.X, self.y, os.getpid(), self.threads), daemon=True)
        try:
            with _main_not_rerun(recipe):
                proc.start()
        finally:
            theirs.close()
        self.proc, self.conn = proc, mine
        self.with_main = str(recipe.path or "").startswith("__main__.")

    def close(self) -> None:
        """Kill the child (it holds no result anyone waits for) and forget it."""
        if self.conn is not None:
            self.conn.close()
        if self.proc is not None:
            _kill(self.proc)
        self.proc = self.conn = None

    def run(self, timeout: float, recipe: LearnerRecipe, split: Split, *, deadline: float | None = None,
            **kwargs) -> FoldRecord:
        """:func:`_run_with_deadline` semantics, in this worker's child."""
        needs_main = str(recipe.path or "").startswith("__main__.")
        if self.proc is None or not self.proc.is_alive() or needs_main != self.with_main:
            self.close()
            self._start(recipe)
        start = time.perf_counter()
        record = None
        finished = False
        try:
            self.conn.send((recipe, split, kwargs))
            wait = timeout if deadline is None else min(timeout, deadline - time.perf_counter())
            if self.conn.poll(max(wait, 0.0)):
                record = self.conn.recv()
                finished = True
        except (EOFError, OSError):  # the child died (out of memory, a crash in native code)
            finished = True
            record = None
        finally:
            if not finished:  # timed out, or interrupted: kill the child now
                self.close()
        if not finished:
            cut = deadline is not None and deadline - start < timeout
            limit = (f"the evaluation's time limit ({deadline - start:.3g} s left)" if cut
                     else f"the {timeout:g} s timeout")
            return _failed_fold(recipe, split, "timeout", f"fit+predict exceeded {limit}; the fit process was killed",
                                fit_time=time.perf_counter() - start)
        if record is None:
            self.proc.join(_REAP_SECONDS)
            code = self.proc.exitcode
            self.close()
            how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
            return _failed_fold(recipe, split, "error", f"the fit process died ({how}; out of memory?)",
                                fit_time=time.perf_counter() - start)
        return record


def _task(recipe, X, y, split, n_classes, random_state, nominal, bootstrap, timeout, deadline=None,
          threads=None, worker: _TimedWorker | None = None) -> FoldRecord:
    """One fold: in-process (the caller limits the threads), or in a child process that does
    (``worker``'s, when the caller keeps one, else a child of its own)."""
    kwargs = dict(n_classes=n_classes, random_state=random_state, nominal=nominal, bootstrap=bootstrap)
    if deadline is not None and deadline - time.perf_counter() <= 0:
        return _failed_fold(recipe, split, "timeout", NOT_RUN_DEADLINE)
    if timeout is None:
        return evaluate_fold(recipe, X, y, split, **kwargs)
    if worker is not None:
        return worker.run(timeout, recipe, split, deadline=deadline, **kwargs)
    return _run_with_deadline(timeout, recipe, X, y, split, deadline=deadline, threads=threads, **kwargs)


def _worker_task(*args) -> FoldRecord:
    """:func:`_task` in a joblib worker, with the fold's thread limit."""
    with _limit_threads(args[-1]):
        return _task(*args)


def _limit_threads(threads: int | None):
    """Context limiting BLAS/OpenMP threads (``threadpoolctl``); a no-op for None."""
    if threads is None:
        return contextlib.nullcontext()
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=int(threads))


class _Claims:
    """This evaluation's fold claims in a shared store (see :mod:`algorank.evaluation.cv.store`)."""

    #: Seconds between two looks at the store while another process computes folds this one needs.
    poll = 0.2

    def __init__(self, store: FoldStore, key: str) -> None:
        self.store, self.key = store, key
        self.holders: set = set()
        self.noted = False

    def take(self, recipe: LearnerRecipe, split: Split):
        """True: compute the fold here; a FoldRecord: already stored; None: another process computes it."""
        got = self.store.claim(self.key, recipe.id, split.repeat, split.fold)
        if got == "mine":
            return True
        if got == "done":
            rec = self.store.get_fold(self.key, recipe.id, split.repeat, split.fold)
            return rec if rec is not None else True
        self.holders.add(got)
        return None

    def release(self, rec: FoldRecord) -> None:
        self.store.release(self.key, rec.learner, rec.repeat, rec.fold)

    def release_all(self) -> None:
        self.store.release_all()

    def wait(self, todo, deadline) -> bool:
        """Pause before looking again at folds another process holds (noted once); False past the deadline."""
        if not self.noted:
            logger.warning("note: %d fold(s) of this evaluation are being computed by another process using the "
                           "same store (%s); waiting for its results instead of computing them twice",
                           len(todo), ", ".join(sorted(self.holders)))
            self.noted = True
        if deadline is not None and time.perf_counter() >= deadline:
            return False
        time.sleep(self.poll)
        return True


# ====================================================================== result
@dataclass(frozen=True, eq=False)
class EvaluationResult:
    """What :meth:`Evaluator.evaluate` returns.

    Attributes
    ----------
    dataset : str
        Dataset id (``runs["dataset"]``).
    runs : DataFrame
        One row per (learner, repeat, fold) in the MetaDataset runs schema, plus
        ``balanced_accuracy``, ``auc``, ``log_loss``, ``model_bytes``, ``message``.
    summary : DataFrame
        One row per learner (index: learner id, in the order given): accuracy_mean,
        accuracy_median, accuracy_std (of repetition estimates), interval_low,
        interval_high (Wilson interval at accuracy_mean with h = test predictions per
        repetition, Kohavi), skewness, repetitions, folds, balanced_accuracy_mean,
        auc_mean, log_loss_mean, fit_time_mean, predict_time_mean, model_bytes_mean,
        status, message, stop_reason, stop_statistic.
    failures : list of dict
        One entry per failed learner: learner, status, message, failed_folds.
    reproducibility : DataFrame
        Learners x learners, Raeder's R over paired repetition estimates.
    estimates : dict
        learner -> ndarray of repetition estimates (mean fold accuracy per repetition).
    store : str or None
        Path of the fold store used.
    config : dict
        The evaluation settings.
    dataset_row : dict
        The datasets-table row (name, source, meta-features).
    """

    dataset: str
    runs: pd.DataFrame = field(repr=False)
    summary: pd.DataFrame = field(repr=False)
    failures: list = field(default_factory=list)
    reproducibility: pd.DataFrame = field(default=None, repr=False)
    estimates: dict = field(default_factory=dict, repr=False)
    store: str | None = None
    config: dict = field(default_factory=dict)
    dataset_row: dict = field(default_factory=dict, repr=False)

    def to_meta(self) -> MetaDataset:
        """The runs as a :class:`~algorank.metadata.dataset.MetaDataset` (one dataset)."""
        return MetaDataset(self.runs, pd.DataFrame([self.dataset_row]),
                           source=f"algorank evaluate ({self.config.get('scheme')})")

    def to_dict(self) -> dict:
        """JSON-ready dict: ``dataset``, ``learners`` {full id: summary with its ``short`` name}, ``failures``
        (records with ``learner`` and ``short``), ``store``, ``config``, ``reproducibility``."""
        learners = {str(lid): {"short": short_name(str(lid)), **to_plain(row.to_dict())}
                    for lid, row in self.summary.iterrows()}
        rep = ({} if self.reproducibility is None else
               {str(i): {str(j): self.reproducibility.loc[i, j] for j in self.reproducibility.columns if j != i}
                for i in self.reproducibility.index})
        return {"dataset": self.dataset, "learners": learners,
                "failures": [{**f, "short": short_name(f["learner"])} for f in self.failures],
                "store": self.store, "config": dict(self.config), "reproducibility": rep}


# ====================================================================== evaluator
class Evaluator:
    """Repeated cross-validation with adaptive repetitions, fault isolation and resumable storage.

    Parameters
    ----------
    scheme : {"cv", "5x2", "holdout", "loo", "bootstrap"}
        Resampling scheme (:mod:`algorank.evaluation.cv.resampling`).
    cv : int
        Folds per repetition of ``cv``.
    repeats : int, optional
        ``stop="fixed"``: number of repetitions (default :data:`DEFAULT_REPEATS`
        of the scheme); adaptive rules: default of ``max_repeats``.
    stop : {"fixed", "rank", "ks"}
        Stopping rule (:mod:`algorank.evaluation.cv.stopping`).
    threshold : float, optional
        Rule threshold (default 1 - 1e-4 for rank, 0.1 for ks).
    min_repeats, max_repeats : int, optional
        Bounds for the adaptive rules (defaults 2 (rank) / 4 (ks) and 50).
    timeout : float, optional
        Seconds allowed per fold (fit + predict); the fold is then recorded as
        ``timeout`` and its process killed, and (``n_jobs=1``) the learner's other folds
        of that repetition are not run.  None: no limit, no subprocess.
    n_jobs : int
        joblib workers (-1: all cores).
    store : str, Path, FoldStore or None
        Where finished folds are persisted (resumable); None keeps nothing.
    random_state : int
        The one seed of splits and learners.
    progress : bool
        tqdm bar on stderr (shown only when stderr is a terminal).
    train_fraction : float
        Training share of a holdout split (2/3).
    allow_modules : sequence of str
        Packages whose estimator classes import-path learners may name besides
        scikit-learn (:func:`algorank.metadata.learners.estimator_class`); default none.
    threads : int or None
        BLAS/OpenMP threads of a fold's fit and predict (``threadpoolctl``).  1 (the default) is
        how the prior meta-data was measured and keeps times predictable: with the libraries'
        default on a busy machine a logistic regression fold took 15 s instead of 0.05 s (thread
        oversubscription).  None leaves the libraries' default.
    """

    def __init__(self, *, scheme: str = "cv", cv: int = 5, repeats: int | None = None, stop: str = "fixed",
                 threshold: float | None = None, min_repeats: int | None = None, max_repeats: int | None = None,
                 timeout: float | None = None, n_jobs: int = 1, store=None, random_state: int = 0,
                 progress: bool = True, train_fraction: float = 2 / 3, allow_modules=(), threads: int | None = 1
                 ) -> None:
        if scheme not in SCHEMES:
            raise InputError(f"scheme must be one of {', '.join(SCHEMES)}, got {scheme!r}")
        if stop not in STOP_RULES:
            raise InputError(f"stop must be one of {', '.join(STOP_RULES)}, got {stop!r}")
        for name, v in (("repeats", repeats), ("min_repeats", min_repeats), ("max_repeats", max_repeats)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1):
                raise InputError(f"{name} must be an integer >= 1, got {v!r}")
        if scheme == "loo" and (stop != "fixed" or (repeats or 1) != 1):
            raise InputError("scheme 'loo' is deterministic: it allows only stop='fixed' with repeats=1")
        if timeout is not None:
            if not isinstance(timeout, (int, float)) or not timeout > 0 or not math.isfinite(timeout):
                raise InputError(f"timeout must be a positive number of seconds, got {timeout!r}")
            import multiprocessing

            if "forkserver" not in multiprocessing.get_all_start_methods():  # pragma: no cover - Windows
                raise InputError("timeout needs the forkserver start method (POSIX); run with timeout=None")
        if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0:
            raise InputError(f"n_jobs must be a non-zero integer (-1 = all cores), got {n_jobs!r}")
        check_seed(random_state)
        self.scheme = scheme
        self.cv = cv
        self.repeats = repeats
        self.stop = stop
        self.threshold = threshold
        self.min_repeats = min_repeats
        self.max_repeats = max_repeats
        self.timeout = None if timeout is None else float(timeout)
        self.n_jobs = int(n_jobs)
        self.store = store
        self.random_state = int(random_state)
        self.progress = progress
        self.train_fraction = train_fraction
        self.allow_modules = check_allow_modules(allow_modules)[len(DEFAULT_ALLOWED_MODULES):]
        if threads is not None and (isinstance(threads, bool) or not isinstance(threads, (int, np.integer))
                                    or threads < 1):
            raise InputError(f"threads must be None or an integer >= 1, got {threads!r}")
        self.threads = None if threads is None else int(threads)
        if stop == "fixed" and repeats is None:
            self.repeats = DEFAULT_REPEATS[scheme]
        self._new_rule()  # validates threshold and bounds now

    def _new_rule(self):
        return make_rule(self.stop, repeats=self.repeats, threshold=self.threshold,
                         min_repeats=self.min_repeats, max_repeats=self.max_repeats)

    def config(self) -> dict:
        """The settings as a dict (goes into results and the store's description)."""
        rule = self._new_rule()
        return {"scheme": self.scheme, "cv": self.cv, "stop": self.stop,
                "threshold": getattr(rule, "threshold", None), "min_repeats": rule.min_repeats,
                "max_repeats": rule.max_repeats, "timeout": self.timeout, "random_state": self.random_state,
                "train_fraction": self.train_fraction}

    # ------------------------------------------------------------------
    def evaluate(self, dataset: LoadedDataset, learners: Sequence[str], *, deadline: float | None = None
                 ) -> EvaluationResult:
        """Evaluate ``learners`` on ``dataset``.

        Parameters
        ----------
        dataset : LoadedDataset
        learners : list of str
            Portfolio ids, short names or import paths with JSON parameters
            (:func:`~algorank.evaluation.cv.preprocessing.resolve_learner`).
        deadline : float, optional
            A :func:`time.perf_counter` value: folds not started by then are recorded as
            ``timeout`` ("not run"), and with a ``timeout`` a running fold is killed at it.
            Timeouts of an evaluation with a deadline are not stored (they depend on when
            it was called); finished folds are.

        Raises
        ------
        InputError
            No or duplicated learners, an unknown learner, fewer rows than folds.
        """
        if isinstance(learners, str) or not learners:
            raise InputError("learners must be a non-empty list of learner ids")
        recipes = [resolve_learner(lid, allow_modules=self.allow_modules) for lid in learners]
        ids = [r.id for r in recipes]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise InputError(f"learners must be distinct; repeated: {', '.join(dup)}")
        y = dataset.y_codes
        n_classes = len(dataset.classes)
        resampler = make_resampler(self.scheme, cv=self.cv, n_rows=len(y), train_fraction=self.train_fraction,
                                   random_state=self.random_state)
        store, own_store = self._open_store()
        key = None
        if store is not None:  # hashing the data costs time (seconds on wide files): only for a store
            parts = {"data": dataset.fingerprint(), "scheme": self.scheme, "folds": resampler.n_splits,
                     "train_fraction": self.train_fraction, "random_state": self.random_state,
                     "timeout": self.timeout}
            notes = encode_dataset(dataset)[2]
            if notes:  # the encoding changed the data (e.g. capped levels): not the folds of older versions
                parts["encoding"] = list(notes)
            key = config_key(parts)
        try:
            if store is not None:
                store.register(key, {"dataset": dataset.source, **self.config()})
            records, states = self._run(dataset, recipes, resampler, y, n_classes, store, key, deadline)
        finally:
            if own_store and store is not None:
                store.close()
        return self._result(dataset, recipes, records, states, resampler, y,
                            None if store is None else str(store.path))

    def _open_store(self):
        if self.store is None:
            return None, False
        if isinstance(self.store, FoldStore):
            return self.store, False
        return FoldStore(self.store), True

    def _run(self, dataset, recipes, resampler: Resampler, y, n_classes, store, key, deadline=None):
        X, nominal, _ = encode_dataset(dataset)
        records: dict[str, dict] = {r.id: (store.get(key, r.id) if store is not None else {}) for r in recipes}
        states = {r.id: {"rule": self._new_rule(), "active": True, "reason": "", "failed": None}
                  for r in recipes}
        resumed = sum(len(v) for v in records.values())
        if resumed:
            logger.info("resuming: %d fold(s) already in the store", resumed)
        bar = progress_bar(total=0, unit="fold", desc=f"evaluate {dataset.name}", enabled=self.progress)
        bootstrap = self.scheme == "bootstrap"
        claims = None if store is None else _Claims(store, key)
        repeat = 0
        limits = _limit_threads(self.threads)
        worker = _TimedWorker(X, y, self.threads) if self.timeout is not None and self.n_jobs == 1 else None
        try:
            limits.__enter__()
            while any(s["active"] for s in states.values()):
                splits = resampler.repetition(repeat, y)
                active = [r for r in recipes if states[r.id]["active"]]
                todo = [(r, s) for r in active for s in splits if (repeat, s.fold) not in records[r.id]]
                bar.total += len(active) * len(splits)
                bar.update(len(active) * len(splits) - len(todo))
                while todo:
                    for rec, fresh in self._execute(todo, X, y, n_classes, nominal, bootstrap, deadline, claims,
                                                    worker):
                        if fresh and store is not None:
                            if not (deadline is not None and rec.status == "timeout"):
                                store.put(key, rec)
                            claims.release(rec)
                        records[rec.learner][(rec.repeat, rec.fold)] = rec
                        bar.update(1)
                    todo = [(r, s) for r, s in todo if (repeat, s.fold) not in records[r.id]]
                    if todo and not claims.wait(todo, deadline):  # held elsewhere past the deadline: not run
                        for r, s in todo:
                            records[r.id][(s.repeat, s.fold)] = _failed_fold(r, s, "timeout", NOT_RUN_DEADLINE)
                        todo = []
                for r in active:
                    self._advance(states[r.id], [records[r.id][(repeat, s.fold)] for s in splits], splits, len(y))
                repeat += 1
        finally:
            if worker is not None:
                worker.close()
            limits.__exit__(None, None, None)
            bar.close()
            if claims is not None:
                claims.release_all()
        return records, states

    def _execute(self, todo, X, y, n_classes, nominal, bootstrap, deadline=None, claims=None, worker=None):
        """Yield ``(record, fresh)`` for the folds of ``todo`` this process gets to (``fresh``: computed here).

        With ``claims`` (a store), each fold is claimed first: a fold already stored is read
        (``fresh=False``), a fold another process holds is skipped (the caller waits for it).
        """
        args = [(r, X, y, s, n_classes, _fold_seed(self.random_state, s.repeat, s.fold), nominal, bootstrap,
                 self.timeout, deadline, self.threads)
                for r, s in todo]
        if not args:
            return
        if self.n_jobs == 1 or len(args) == 1:
            timed_out: set = set()
            for a in args:
                recipe, split = a[0], a[3]
                if claims is not None:
                    got = claims.take(recipe, split)
                    if got is not True:
                        if got is not None:
                            yield got, False
                        continue
                if recipe.id in timed_out:  # the learner is abandoned: its other folds would time out too
                    yield _failed_fold(recipe, split, "timeout",
                                       "not run: an earlier fold of this learner timed out"), True
                    continue
                rec = _task(*a, worker=worker)
                if rec.status == "timeout":
                    timed_out.add(recipe.id)
                yield rec, True
            return
        if claims is not None:
            mine = []
            for a in args:
                got = claims.take(a[0], a[3])
                if got is True:
                    mine.append(a)
                elif got is not None:
                    yield got, False
            args = mine
        from joblib import Parallel, delayed

        for rec in Parallel(n_jobs=self.n_jobs, return_as="generator_unordered")(delayed(_worker_task)(*a)
                                                                                 for a in args):
            yield rec, True

    @staticmethod
    def _advance(state: dict, recs: list[FoldRecord], splits: list[Split], n: int) -> None:
        bad = [r for r in recs if r.status != "ok"]
        if bad:
            state["active"] = False
            state["failed"] = bad
            state["reason"] = "failed"
            return
        scores = np.full(n, np.nan)
        for rec, s in zip(recs, splits):
            if len(rec.scores) == len(s.test):
                if np.isnan(scores[s.test]).all():
                    scores[s.test] = rec.scores
                else:  # pragma: no cover - folds of one repetition never overlap
                    scores[s.test] = np.nanmean([scores[s.test], rec.scores], axis=0)
        estimate = float(np.mean([r.accuracy for r in recs]))
        if state["rule"].update(scores, estimate):
            rule = state["rule"]
            state["active"] = False
            if rule.repeats >= rule.max_repeats and not (rule.repeats >= rule.min_repeats and rule._converged()):
                state["reason"] = "fixed" if type(rule).__name__ == "FixedRepetitions" else "max_repeats"
            else:
                state["reason"] = "converged"

    # ------------------------------------------------------------------
    def _result(self, dataset, recipes, records, states, resampler, y, store_path) -> EvaluationResult:
        from scipy.stats import skew

        rows = []
        summary = []
        failures = []
        estimates = {}
        n_test_per_rep = sum(len(s.test) for s in resampler.repetition(0, y))
        for r in recipes:
            st = states[r.id]
            used = st["rule"].repeats + (1 if st["failed"] else 0)
            recs = [rec for (rep, _), rec in sorted(records[r.id].items()) if rep < used]
            rows.extend({"dataset": dataset.name, **rec.as_row()} for rec in recs)
            ok = [rec for rec in recs if rec.status == "ok"]
            by_rep: dict[int, list] = {}
            for rec in recs:
                by_rep.setdefault(rec.repeat, []).append(rec)
            est = np.array([np.mean([x.accuracy for x in v]) for _, v in sorted(by_rep.items())
                            if all(x.status == "ok" for x in v)], dtype=float)
            estimates[r.id] = est
            status, message = "ok", ""
            if st["failed"]:
                first = st["failed"][0]
                status, message = first.status, first.message
                failures.append({"learner": r.id, "status": status, "message": message,
                                 "failed_folds": len(st["failed"]), "repeat": first.repeat, "fold": first.fold})
            mean = float(np.mean(est)) if len(est) else math.nan
            low, high = wilson_interval(mean, n_test_per_rep) if len(est) else (math.nan, math.nan)

            def avg(attr, pool=ok):
                vals = np.array([getattr(x, attr) for x in pool], dtype=float)
                return float(np.nanmean(vals)) if len(vals) and not np.isnan(vals).all() else math.nan

            summary.append({
                "learner": r.id, "accuracy_mean": mean,
                "accuracy_median": float(np.median(est)) if len(est) else math.nan,
                "accuracy_std": float(np.std(est, ddof=1)) if len(est) > 1 else math.nan,
                "interval_low": low, "interval_high": high,
                "skewness": float(skew(est)) if len(est) > 2 and np.ptp(est) > 0 else math.nan,
                "repetitions": int(len(est)), "folds": len(ok),
                "balanced_accuracy_mean": avg("balanced_accuracy"), "auc_mean": avg("auc"),
                "log_loss_mean": avg("log_loss"), "f1_macro_mean": avg("f1_macro"), "fit_time_mean": avg("fit_time"),
                "predict_time_mean": avg("predict_time"), "model_bytes_mean": avg("model_bytes"),
                "status": status, "message": message, "stop_reason": st["reason"],
                "stop_statistic": float(st["rule"].statistic),
            })
        runs = pd.DataFrame(rows, columns=_RUN_COLUMNS)
        runs = runs.astype({"repeat": np.int64, "fold": np.int64})
        summ = pd.DataFrame(summary).set_index("learner")
        ids = [r.id for r in recipes]
        rep = pd.DataFrame(np.nan, index=ids, columns=ids)
        for i in ids:
            for j in ids:
                m = min(len(estimates[i]), len(estimates[j]))
                if i != j and m:
                    rep.loc[i, j] = reproducibility(estimates[i][:m], estimates[j][:m])
        if failures:
            logger.warning("%d learner(s) failed on %s: %s", len(failures), dataset.name,
                           "; ".join(f"{f['learner']} ({f['status']}: {f['message']})" for f in failures))
        row = {"dataset": dataset.name, "name": dataset.name, "source": dataset.source, **dataset.meta_features}
        return EvaluationResult(dataset=dataset.name, runs=runs, summary=summ, failures=failures,
                                reproducibility=rep, estimates=estimates, store=store_path,
                                config=self.config(), dataset_row=row)


# ====================================================================== output files
def write_runs(result: EvaluationResult, out_dir) -> list[str]:
    """Write ``runs.csv`` (+ ``runs.datasets.csv``) in the runs schema and ``summary.csv`` atomically."""
    from algorank.metadata.io import atomic_path

    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InputError(f"out_dir must be a folder, but {str(out)!r} is a file")
    runs_path = result.to_meta().save(out / "runs.csv")
    summary_path = out / "summary.csv"
    with atomic_path(summary_path) as tmp:
        result.summary.to_csv(tmp, float_format="%.17g")
    return [str(runs_path), str(runs_path.with_name("runs.datasets.csv")), str(summary_path)]
