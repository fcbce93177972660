"""The repeated cross-validation evaluator (Kohavi 1995; Raeder, Hoens and Chawla 2010).

:class:`Evaluator` runs learners on one :class:`~algorank.evaluation.cv.datasets.LoadedDataset`
with a seeded resampling scheme (:mod:`algorank.evaluation.cv.resampling`), repeats it a fixed
or adaptive number of times (:mod:`algorank.evaluation.cv.stopping`), persists every finished
fold (:mod:`algorank.evaluation.cv.store`) and returns an :class:`EvaluationResult` whose
``runs`` table is in the MetaDataset runs schema:
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
With ``timeout`` set, each fold's fit+predict runs in a child process of the fold server
(:mod:`algorank.evaluation.cv.children`: a ``multiprocessing`` forkserver that has preloaded
numpy, pandas and scikit-learn); the parent waits until the timeout or deadline and then kills
the child with SIGKILL, so a stuck fit really is abandoned and its memory returned.  The child costs
time: a fast fold under a timeout takes several times as long as one without.  A child that dies (e.g. killed by the out-of-memory killer, or ``MemoryError``) is
recorded as ``error`` with its exit status.  Run sequentially (``n_jobs=1``), the timed folds
of one evaluation share one such child (:class:`~algorank.evaluation.cv.children.ChildWorker`:
the data is sent once, then one fold at a time under the same per-fold timeout and deadline)
until a fold is killed or the child dies; the next fold then starts a fresh child (a timed
5-fold test of logistic regression on breast_cancer after the first: 0.56 s with a child per
fold, 0.19 s with one per test).  Without ``timeout`` folds run in-process (or in the joblib
worker) with no such overhead, and exceptions (including ``MemoryError``) are still recorded
as ``error``.  Run sequentially, a learner whose fold timed out is abandoned: its remaining
folds of that repetition are recorded as ``timeout`` ("not run: ...") without being started.

First-fold screen.  ``evaluate(..., screen={learner: bar})`` runs the first fold of the first
repetition of each screened learner before any other of its folds; when that fold's accuracy is
below the learner's bar, the learner's other folds are recorded as ``timeout`` (not run, message
:data:`NOT_RUN_SCREENED`) without being started, and never stored (they depend on the bar).  The
adaptive strategies' ``screen=`` rule (:mod:`algorank.recommender.ei`) asks for it.

Deadline.  ``evaluate(..., deadline=t)`` bounds a whole evaluation in wall-clock time
(the live loop's budget): a fold not started by ``t`` is recorded as ``timeout`` (not
run), and a timed fold is killed at ``t`` even if its own timeout is longer.

Processes and interrupts
------------------------
No process started here outlives the evaluation's caller, SIGKILL included: fold children,
the fold server and joblib's loky workers all watch their parent
(:mod:`algorank.evaluation.cv.children`, "Lifetimes").  An interrupt (SIGINT) is never a
result: a fold whose fit it reached is not stored, even when the estimator caught the
``KeyboardInterrupt`` and returned a half-trained model, and the evaluation raises
``KeyboardInterrupt``; a resumed run then computes that fold again.  ``n_jobs`` above the
machine's cores is capped at them (with a note).

Measurements per fold: :func:`~algorank.evaluation.cv.fold.evaluate_fold`.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from algorank.metadata.dataset import MetaDataset
from algorank.metadata.checks import check_bar, check_n_jobs, check_seconds, check_seed
from algorank.metadata.errors import InputError
from algorank.metadata.io import to_plain
from algorank.metadata.learners import DEFAULT_ALLOWED_MODULES, check_allow_modules, short_name
from algorank.metadata.progress import progress_bar

from algorank.evaluation.cv.children import (ChildWorker, Outcome, interrupt_watch, limit_threads, parallel,
                                             run_with_deadline, start_fold_server)
from algorank.evaluation.cv.fold import INTERRUPTED, NOT_RUN_DEADLINE, evaluate_fold, failed_fold, fold_seed
from algorank.evaluation.cv.stopping import STOP_RULES, make_rule, reproducibility
from algorank.evaluation.cv.datasets import LoadedDataset, check_class_sizes
from algorank.evaluation.cv.preprocessing import LearnerRecipe, encode_dataset, resolve_learner
from algorank.evaluation.cv.resampling import SCHEMES, Resampler, Split, make_resampler, wilson_interval
from algorank.evaluation.cv.store import FoldRecord, FoldStore, config_key

__all__ = ["Evaluator", "EvaluationResult", "evaluate_fold", "DEFAULT_REPEATS", "write_runs", "start_fold_server",
           "NOT_RUN_DEADLINE", "NOT_RUN_SCREENED"]

logger = logging.getLogger(__name__)

#: Message of the folds a first-fold screen did not run (``evaluate(..., screen=...)``).
NOT_RUN_SCREENED = "not run: the first fold scored below its bar"
_NOT_RUN_TIMED_OUT = "not run: an earlier fold of this learner timed out"

#: Repetitions of each scheme under ``stop="fixed"`` when ``repeats`` is not given.
DEFAULT_REPEATS = {"cv": 1, "5x2": 5, "holdout": 1, "loo": 1, "bootstrap": 10}
_RUN_COLUMNS = ["dataset", "learner", "repeat", "fold", "accuracy", "fit_time", "predict_time", "status",
                "balanced_accuracy", "auc", "log_loss", "model_bytes", "message", "f1_macro"]
#: Runs columns of a regression: ``accuracy`` holds the score ``max(r2, 0)``; ``r2`` keeps negative values.
_REGRESSION_RUN_COLUMNS = ["dataset", "learner", "repeat", "fold", "accuracy", "fit_time", "predict_time", "status",
                           "model_bytes", "message", "r2", "rmse", "mae"]


# ====================================================================== one fold, here or in a child
def _fold_call(X, y, recipe, split, kwargs) -> FoldRecord:
    """:func:`evaluate_fold` with the data first (the shape :class:`~algorank.evaluation.cv.children.ChildWorker`
    calls: the data is its state, sent once)."""
    return evaluate_fold(recipe, X, y, split, **kwargs)


def _from_outcome(out: Outcome, recipe: LearnerRecipe, split: Split, timeout: float) -> FoldRecord:
    """The fold record of a timed fold's :class:`~algorank.evaluation.cv.children.Outcome`."""
    if out.status == "done":
        return out.value
    if out.status == "timeout":
        limit = (f"the evaluation's time limit ({out.limit:.3g} s left)" if out.cut
                 else f"the {timeout:g} s timeout")
        return failed_fold(recipe, split, "timeout", f"fit+predict exceeded {limit}; the fit process was killed",
                           fit_time=out.elapsed)
    if out.status == "raised":  # pragma: no cover - evaluate_fold records learner faults itself
        return failed_fold(recipe, split, "error", out.message, fit_time=out.elapsed)
    return failed_fold(recipe, split, "error", f"the fit process died ({out.death}; out of memory?)",
                       fit_time=out.elapsed)


def _task(recipe, X, y, split, n_classes, random_state, nominal, bootstrap, model_bytes, timeout, deadline=None,
          threads=None, worker: ChildWorker | None = None) -> FoldRecord:
    """One fold: in-process (the caller limits the threads), or in a child process that does
    (``worker``'s, when the caller keeps one, else a child of its own).

    An in-process fit that SIGINT reached gives an ``interrupted`` record even when the
    estimator caught the ``KeyboardInterrupt`` and returned (scikit-learn's MLP does): the
    caller never stores it and stops (:meth:`Evaluator._run`).
    """
    kwargs = dict(n_classes=n_classes, random_state=random_state, nominal=nominal, bootstrap=bootstrap,
                  model_bytes=model_bytes)
    if deadline is not None and deadline - time.perf_counter() <= 0:
        return failed_fold(recipe, split, "timeout", NOT_RUN_DEADLINE)
    if timeout is None:
        with interrupt_watch() as seen:
            record = evaluate_fold(recipe, X, y, split, **kwargs)
        if seen.hit:
            return failed_fold(recipe, split, INTERRUPTED, "the fit was interrupted")
        return record
    uses_main = str(recipe.path or "").startswith("__main__.")
    if worker is not None:
        out = worker.call(_fold_call, (recipe, split, kwargs), timeout=timeout, deadline=deadline,
                          uses_main=uses_main)
    else:
        out = run_with_deadline(_fold_call, (X, y, recipe, split, kwargs), timeout=timeout, deadline=deadline,
                                threads=threads, uses_main=uses_main)
    return _from_outcome(out, recipe, split, timeout)


def _worker_task(*args) -> FoldRecord:
    """:func:`_task` in a joblib worker, with the fold's thread limit."""
    with limit_threads(args[-1]):
        return _task(*args)


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
        ``balanced_accuracy``, ``auc``, ``log_loss``, ``model_bytes``, ``message``, ``f1_macro``.
    summary : DataFrame
        One row per learner (index: learner id, in the order given): accuracy_mean,
        accuracy_median, accuracy_std (of repetition estimates), interval_low,
        interval_high (Wilson interval at accuracy_mean with h = test predictions per
        repetition, Kohavi), skewness, repetitions, folds, balanced_accuracy_mean,
        auc_mean, log_loss_mean, f1_macro_mean, fit_time_mean, predict_time_mean, model_bytes_mean,
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
        The datasets-table row (name, source, meta-features, ``fingerprint``: the hash of the values).
    task, task_detection : str
        The task that ran and how it was decided.
    columns : tuple of dict
        What was done to each feature column as read.
    oof : dict
        learner -> out-of-fold predictions in row order, averaged over the repetitions: class probabilities
        ``(n_rows, n_classes)`` float32, or a regression's predicted values ``(n_rows, 1)`` float64 (scheme
        ``cv`` only; a learner is left out unless every fold it ran succeeded with predictions).  The
        predictions that ensemble selection combines.

    Examples
    --------
    >>> import algorank
    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True, as_frame=True)
    >>> res = algorank.evaluate(X, y=y, learners=["knn", "lda"])  # doctest: +SKIP
    >>> res.to_meta().describe().learners  # doctest: +SKIP
    2
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
    task: str = "classification"
    task_detection: str = ""
    columns: tuple = field(default=(), repr=False)
    oof: dict = field(default_factory=dict, repr=False)

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
                "store": self.store, "config": dict(self.config), "reproducibility": rep,
                "task": self.task, "task_detection": self.task_detection, "columns": [dict(c) for c in self.columns]}


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
        default on a busy machine a fast fold can take hundreds of times longer (thread
        oversubscription).  None leaves the libraries' default.
    model_bytes : bool
        Measure each fitted model's pickled size (``model_bytes``, default); False records NaN and
        saves the pickling (the live tests of ``recommend``).  Part of :meth:`config` when False, so
        a store never mixes folds with and without it.
    """

    def __init__(self, *, scheme: str = "cv", cv: int = 5, repeats: int | None = None, stop: str = "fixed",
                 threshold: float | None = None, min_repeats: int | None = None, max_repeats: int | None = None,
                 timeout: float | None = None, n_jobs: int = 1, store=None, random_state: int = 0,
                 progress: bool = True, train_fraction: float = 2 / 3, allow_modules=(), threads: int | None = 1,
                 model_bytes: bool = True) -> None:
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
            timeout = check_seconds(timeout, name="timeout")
            import multiprocessing

            if "forkserver" not in multiprocessing.get_all_start_methods():  # pragma: no cover - Windows
                raise InputError("timeout needs the forkserver start method (POSIX); run with timeout=None")
        n_jobs = check_n_jobs(n_jobs)
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
        self.model_bytes = bool(model_bytes)
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
                "train_fraction": self.train_fraction, **({} if self.model_bytes else {"model_bytes": False})}

    # ------------------------------------------------------------------
    def evaluate(self, dataset: LoadedDataset, learners: Sequence[str], *, deadline: float | None = None,
                 report_failures: bool = True, screen=None, on_fold=None) -> EvaluationResult:
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
        report_failures : bool, default True
            Log one warning naming the learners that failed.  False when the caller reports
            each failure itself (a live test's observation).
        screen : mapping, optional
            learner id (as given in ``learners``) -> accuracy bar: that learner's first fold runs
            first, and when it scores below the bar its other folds are not run (module
            docstring, "First-fold screen").
        on_fold : callable, optional
            Called with the record (a :class:`FoldRecord`) of each fold this call runs or reads from the store
            as it goes (folds resumed from the store at the start excepted), in the thread that evaluates: a
            caller that stops waiting before the evaluation ends knows which folds had come back by then.

        Raises
        ------
        InputError
            No or duplicated learners, an unknown learner, fewer rows than folds, a target
            with fewer than two classes or a class too small for the scheme.
        KeyboardInterrupt
            SIGINT reached a fit (the interrupted fold is not stored).
        """
        if isinstance(learners, str) or not learners:
            raise InputError("learners must be a non-empty list of learner ids")
        recipes = [resolve_learner(lid, allow_modules=self.allow_modules, task=dataset.task) for lid in learners]
        ids = [r.id for r in recipes]
        bars = {r.id: check_bar((screen or {})[lid], name=f"screen: the bar of {lid!r}")
                for lid, r in zip(learners, recipes) if (screen or {}).get(lid) is not None}
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise InputError(f"learners must be distinct; repeated: {', '.join(dup)}")
        regression = dataset.task == "regression"
        y = _targets(dataset)
        if regression:
            if self.scheme in ("loo", "bootstrap"):
                raise InputError(f"scheme {self.scheme!r} is not available for regression (R² needs test folds of "
                                 "several rows, and the .632 estimate is defined for accuracy); use cv, 5x2 or holdout")
            n_classes = 0
        else:
            n_classes = len(dataset.classes)
            check_class_sizes(np.bincount(y, minlength=n_classes), name=dataset.name, target=dataset.target)
        resampler = self._resampler(len(y), regression=regression)
        store, own_store = self._open_store()
        key = None
        if store is not None:  # hashing the data costs time (seconds on wide files): only for a store
            parts = {"data": dataset.fingerprint(), "scheme": self.scheme, "folds": resampler.n_splits,
                     "train_fraction": self.train_fraction, "random_state": self.random_state,
                     "timeout": self.timeout}
            if regression:  # never the folds of a classification of the same table
                parts["task"] = "regression"
            notes = encode_dataset(dataset)[2]
            if notes:  # the encoding changed the data (e.g. capped levels): not the folds of older versions
                parts["encoding"] = list(notes)
            key = config_key(parts)
        try:
            if store is not None:
                store.register(key, {"dataset": dataset.source, **self.config()})
            records, states = self._run(dataset, recipes, resampler, y, n_classes, store, key, deadline, bars,
                                        on_fold)
        finally:
            if own_store and store is not None:
                store.close()
        return self._result(dataset, recipes, records, states, resampler, y, report_failures,
                            None if store is None else str(store.path))

    def _open_store(self):
        if self.store is None:
            return None, False
        if isinstance(self.store, FoldStore):
            return self.store, False
        return FoldStore(self.store), True

    def _run(self, dataset, recipes, resampler: Resampler, y, n_classes, store, key, deadline=None, bars=None,
             on_fold=None):
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
        limits = limit_threads(self.threads)
        worker = ChildWorker((X, y), threads=self.threads) if self.timeout is not None and self.n_jobs == 1 else None
        try:
            limits.__enter__()
            while any(s["active"] for s in states.values()):
                splits = resampler.repetition(repeat, y)
                active = [r for r in recipes if states[r.id]["active"]]
                if bars and repeat == 0:  # a screened learner's first fold already in the store may end it now
                    self._screen(bars, records, splits, [r for r in active if (0, splits[0].fold) in records[r.id]])
                todo = [(r, s) for r in active for s in splits if (repeat, s.fold) not in records[r.id]]
                bar.total += len(active) * len(splits)
                bar.update(len(active) * len(splits) - len(todo))
                while todo:
                    batch = todo
                    if bars and repeat == 0:  # a screened learner's first fold runs first, alone
                        batch = [(r, s) for r, s in todo if r.id in bars and s is splits[0]] or todo
                    for rec, fresh in self._execute(batch, X, y, n_classes, nominal, bootstrap, deadline, claims,
                                                    worker):
                        if rec.status == INTERRUPTED:  # never a result: not stored, the evaluation stops
                            raise KeyboardInterrupt
                        if fresh and store is not None:
                            if not (deadline is not None and rec.status == "timeout"):
                                store.put(key, rec)
                            claims.release(rec)
                        records[rec.learner][(rec.repeat, rec.fold)] = rec
                        bar.update(1)
                        if on_fold is not None:
                            on_fold(rec)
                    staged = batch is not todo  # the rest of todo has not been tried yet
                    if staged:
                        bar.update(self._screen(bars, records, splits, list({r.id: r for r, _ in batch}.values())))
                    todo = [(r, s) for r, s in todo if (repeat, s.fold) not in records[r.id]]
                    if todo and not staged and not claims.wait(todo, deadline):  # held elsewhere past the deadline
                        for r, s in todo:
                            records[r.id][(s.repeat, s.fold)] = failed_fold(r, s, "timeout", NOT_RUN_DEADLINE)
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

    @staticmethod
    def _screen(bars: dict, records: dict, splits: list, recipes: list) -> int:
        """Settle the first-fold screen of ``recipes`` (their bars are removed from ``bars``): a learner whose first
        fold scored below its bar gets its other folds recorded as not run; one whose first fold is missing (held
        by another process using the same store) runs every fold.  Returns the folds so recorded."""
        skipped = 0
        for r in recipes:
            bar = bars.pop(r.id, None)
            first = records[r.id].get((0, splits[0].fold))
            if bar is None or first is None:
                continue
            if first.status == "timeout":  # as in a sequential run: a learner whose fold timed out is abandoned
                message = _NOT_RUN_TIMED_OUT
            elif first.status == "ok" and first.accuracy < bar:
                message = NOT_RUN_SCREENED
            else:
                continue
            for s in splits[1:]:
                if (0, s.fold) not in records[r.id]:
                    records[r.id][(0, s.fold)] = failed_fold(r, s, "timeout", message)
                    skipped += 1
        return skipped

    def _execute(self, todo, X, y, n_classes, nominal, bootstrap, deadline=None, claims=None, worker=None):
        """Yield ``(record, fresh)`` for the folds of ``todo`` this process gets to (``fresh``: computed here).

        With ``claims`` (a store), each fold is claimed first: a fold already stored is read
        (``fresh=False``), a fold another process holds is skipped (the caller waits for it).
        """
        args = [(r, X, y, s, n_classes, fold_seed(self.random_state, s.repeat, s.fold), nominal, bootstrap,
                 self.model_bytes, self.timeout, deadline, self.threads)
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
                    yield failed_fold(recipe, split, "timeout", _NOT_RUN_TIMED_OUT), True
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
        from joblib import delayed

        for rec in parallel(self.n_jobs, return_as="generator_unordered")(delayed(_worker_task)(*a) for a in args):
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

    def _resampler(self, n_rows: int, *, regression: bool) -> Resampler:
        """The resampler of this evaluator's tests on ``n_rows`` rows (stratified unless a regression)."""
        return make_resampler(self.scheme, cv=self.cv, n_rows=n_rows, train_fraction=self.train_fraction,
                              random_state=self.random_state, stratify=not regression)

    def test_folds(self, dataset: LoadedDataset) -> np.ndarray:
        """The test fold of each row of ``dataset`` in the first repetition of this evaluator's tests (an int array,
        one entry per row): the grouping by which a regression ensemble is scored as its members' tests were."""
        y = _targets(dataset)
        out = np.zeros(len(y), dtype=int)
        for split in self._resampler(len(y), regression=dataset.task == "regression").repetition(0, y):
            out[split.test] = split.fold
        return out

    # ------------------------------------------------------------------
    def _result(self, dataset, recipes, records, states, resampler, y, report_failures, store_path
                ) -> EvaluationResult:
        from scipy.stats import skew

        rows = []
        summary = []
        failures = []
        estimates = {}
        oof = {}
        regression = dataset.task == "regression"
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
            if self.scheme == "cv" and not st["failed"]:
                pooled = out_of_fold(by_rep, resampler, y)
                if pooled is not None:
                    oof[r.id] = pooled
            status, message = "ok", ""
            if st["failed"]:
                first = st["failed"][0]
                status, message = first.status, first.message
                failures.append({"learner": r.id, "status": status, "message": message,
                                 "failed_folds": len(st["failed"]), "repeat": first.repeat, "fold": first.fold})
            mean = float(np.mean(est)) if len(est) else math.nan
            low, high = (wilson_interval(mean, n_test_per_rep) if len(est) and not regression
                         else (math.nan, math.nan))

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
                **({"r2_mean": avg("r2"), "rmse_mean": avg("rmse"), "mae_mean": avg("mae")} if regression else {}),
            })
        runs = pd.DataFrame(rows, columns=_REGRESSION_RUN_COLUMNS if regression else _RUN_COLUMNS)
        runs = runs.astype({"repeat": np.int64, "fold": np.int64})
        summ = pd.DataFrame(summary).set_index("learner")
        ids = [r.id for r in recipes]
        rep = pd.DataFrame(np.nan, index=ids, columns=ids)
        for i in ids:
            for j in ids:
                m = min(len(estimates[i]), len(estimates[j]))
                if i != j and m:
                    rep.loc[i, j] = reproducibility(estimates[i][:m], estimates[j][:m])
        if failures and report_failures:
            logger.warning("%d learner(s) failed on %s: %s", len(failures), dataset.name,
                           "; ".join(f"{f['learner']} ({f['status']}: {f['message']})" for f in failures))
        row = {"dataset": dataset.name, "name": dataset.name, "source": dataset.source, **dataset.meta_features,
               "fingerprint": dataset.fingerprint()}  # the content check of a later recommend on the same data
        if regression:  # the datasets table's task column (absent: classification)
            row["task"] = "regression"
        return EvaluationResult(dataset=dataset.name, runs=runs, summary=summ, failures=failures,
                                reproducibility=rep, estimates=estimates, store=store_path,
                                config=self.config(), dataset_row=row, task=dataset.task,
                                task_detection=dataset.task_detection, columns=tuple(dataset.columns_dict()),
                                oof=oof)


def _targets(dataset: LoadedDataset) -> np.ndarray:
    """What the folds split and the learners fit: a regression's values (float), else the class codes."""
    return dataset.y.to_numpy(dtype=float) if dataset.task == "regression" else dataset.y_codes


def out_of_fold(by_rep: dict, resampler, y) -> np.ndarray | None:
    """Out-of-fold predictions of one learner from its fold records by repetition (``{repeat: [FoldRecord, ...]}``):
    class probabilities ``(n_rows, n_classes)`` float32, or a regression's predicted values ``(n_rows, 1)``
    float64 (the type of the records' :attr:`~algorank.evaluation.cv.store.FoldRecord.proba`).

    Each repetition whose folds all hold predictions fills every row once; the repetitions are averaged.  None
    when no repetition is complete (a failed or unstarted fold, a learner without probabilities).
    """
    total, used, recs_dtype = None, 0, np.float32
    for rep, recs in sorted(by_rep.items()):
        splits = resampler.repetition(rep, y)
        if len(recs) != len(splits) or any(r.status != "ok" or r.proba is None for r in recs):
            continue
        pooled = np.zeros((len(y), recs[0].proba.shape[1]), dtype=np.float64)
        recs_dtype = recs[0].proba.dtype
        for rec in recs:
            pooled[splits[rec.fold].test] = rec.proba
        total = pooled if total is None else total + pooled
        used += 1
    return None if total is None else (total / used).astype(recs_dtype)


# ====================================================================== output files
def write_runs(result: EvaluationResult, out_dir) -> list[str]:
    """Write ``runs.csv`` (+ ``runs.datasets.csv``) in the runs schema and ``summary.csv``, all or nothing.

    The three files are written to a temporary folder inside ``out_dir`` and moved into place
    only when all are complete, so a full disk or an interrupt never leaves a partial set.

    Raises
    ------
    InputError
        ``out_dir`` is a file, or cannot be written (a bad path).
    AlgorankError
        The machine refused the write (no space left, quota, I/O error): nothing new is left.
    """
    import os
    import shutil
    import tempfile

    from algorank.metadata.io import write_error

    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InputError(f"out_dir must be a folder, but {str(out)!r} is a file")
    missing = [q for q in [out, *out.parents] if not q.exists()]
    names = ["runs.csv", "runs.datasets.csv", "summary.csv"]
    staging = None
    done = False
    try:
        out.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".algorank-runs-", dir=out))
        result.to_meta().save(staging / "runs.csv")
        result.summary.to_csv(staging / "summary.csv", float_format="%.17g")
        for name in names:
            os.replace(staging / name, out / name)
        done = True
    except OSError as exc:
        raise write_error(exc, out) from None
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        if not done:
            for q in missing:  # the folders this call created, innermost first
                try:
                    q.rmdir()
                except OSError:
                    break
    return [str(out / name) for name in names]
