"""The live environment: a test really runs the learner on the user's data.

:class:`LiveEnvironment` is the counterpart of
:class:`~algorank.recommender.kernel.environments.SimulatedEnvironment`: the same policy object,
driven by :func:`~algorank.recommender.kernel.trace.run_policy`, tests learners by running them
with the repeated-CV :class:`~algorank.evaluation.cv.evaluator.Evaluator` (fast default:
stratified 5-fold, one repetition).  The seconds of an observation are the
wall-clock seconds the evaluation took (what the user waits for), not the sum
of fit times.

A learner that fails (any fold with status ``error`` or ``timeout``) becomes an
observation with that status and the evaluator's message (first line); the loop goes
on.  Live tests ask the evaluator not to log its own "learner(s) failed" warning
(``report_failures=False``): the observation is the one note per failed learner (callers report it).

The budget is a promise (no oracle needed).  With a ``budget_seconds``, every test
gets a hard deadline at the end of the budget left: no fold starts after it.  A test
runs *timed* (each fold in a child process that is killed at its per-fold timeout or
at the deadline, whichever comes first) when its cost is not known well enough to
run it in-process:

* it is the first test (nothing measured on this dataset yet), unless it is a cheap one:
  that runs in-process under a watchdog instead (:meth:`LiveEnvironment.watch_seconds`);
* the dataset is larger than every prior dataset (``prior_shape``: the largest
  numbers of rows and features of the meta-data), where learners whose cost grows
  faster than linearly can be far slower than any prior run suggests;
* its expected time is unknown, or more than ``1 / guard`` of the budget left;
* one of its folds, ``guard`` times slower than expected, would end more than
  ``fold_slack`` seconds after the deadline (an in-process fold cannot be stopped: the
  deadline only keeps the next one from starting).

The per-fold timeout is the budget left divided by the test's folds (at least
``min_timeout``, never beyond the deadline), so a learner far slower than the budget
is abandoned after its first fold instead of using up the budget.  The expected times
(``expected_seconds``, from the meta-data) are calibrated on this dataset as tests
finish: they are multiplied by the median ratio of measured to expected seconds of
the tests so far, when that ratio exceeds 1.  Timed folds run in a forked child (see
:mod:`algorank.evaluation.cv.evaluator`), which costs some tens of ms per fold, so tests that
are expected to take less than ``1 / guard`` of the budget left run in-process; even
then the deadline stops them from starting another fold.

A time limit per test.  A policy may give the test of the learner it chose a limit in seconds
(``limit``, handed over by :func:`~algorank.recommender.kernel.trace.run_policy`; ``None`` or
``inf``: none, the behaviour above).  The limit acts like a budget of its own for that one test:
its deadline is the earlier of the end of the budget and ``limit`` seconds after its start (with no
budget, the limit alone gives one); the rules above that look at the budget left look at
``min(budget left, limit)`` (a test expected to take more than ``1 / guard`` of its limit runs timed,
"expected time close to its limit"; the watchdog of a cheap first test never watches past the
limit), and its per-fold timeout is ``min(budget left, limit)`` divided by its folds (at least
``min_timeout``; a learner tested again after a stopped test gets the whole of it per fold, so that a
re-test never stops a fold sooner than the first test did); the fold server's start-up, which the first
timed test in a process would otherwise pay, is waited for before its limit starts (:func:`_await_fold_server`, within the budget).  A test
stopped because of its limit (a fold killed at the limit's deadline or at the per-fold timeout
derived from it, a fold not started after it, or no result by then) becomes a *capped* observation:
status ``timeout``, the seconds it used, the message ``stopped at its limit of ... s`` and
``capped=True``, so that the policy may test the learner again later.  A test that ran out of
budget first is a timeout as before (not capped); a test that finishes, even after its limit (an
in-process fold cannot be stopped), is an ordinary observation.

A first-fold bar per test.  A policy may also give the test an accuracy bar (``screen``, handed over
by ``run_policy`` because :attr:`LiveEnvironment.screens` is true: the metric is accuracy and a test
has several folds).  The evaluator then runs the test's first fold before the others
(``Evaluator.evaluate(..., screen=...)``); when it scores below the bar no other fold runs and the test
is a *screened* observation: status ``timeout``, the seconds it used, the fold's accuracy in
``fold_accuracy``, the message ``stopped after its first fold: accuracy ... below the bar ...``,
``capped=True`` and ``screened=True``.  Its seconds do not enter the calibration of expected times.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import threading
import time
from typing import Callable

import numpy as np

from algorank.evaluation.cv.children import run_with_deadline, stop_fold_server
from algorank.evaluation.cv.datasets import LoadedDataset
from algorank.evaluation.cv.evaluator import NOT_RUN_SCREENED, Evaluator
from algorank.evaluation.cv.resampling import make_resampler
from algorank.recommender.kernel.trace import Observation
from algorank.metadata.checks import MAX_SECONDS, check_bar, check_budget, check_seconds
from algorank.metadata.errors import InputError
from algorank.metadata.metric import METRICS, score_from_runs
from algorank.metadata.text import escape

__all__ = ["LiveEnvironment", "check_limit", "stop_fold_server"]

logger = logging.getLogger(__name__)

#: A cheap first test runs in-process when this many times its expected seconds fit in the budget left.
FIRST_TEST_GUARD = 16.0

#: Least seconds the watchdog gives a cheap first test (a busy machine is several times slower).
FIRST_TEST_MIN_WATCH = 1.0

#: Seconds past its stop a watched test may take to hand back a fold that ended at the stop.
_WATCH_GRACE = 0.05

#: Seconds past the deadline the caller waits for a timed test (its fold process is killed at the deadline).
_TIMED_GRACE = 0.5

#: Longest wait, with no budget, for the fold server's start-up before a timed test under a time limit.
_SERVER_WAIT = 60.0


def _larger_than(dataset: LoadedDataset, prior_shape) -> bool:
    """Whether ``dataset`` has more rows or more features than ``prior_shape`` allows."""
    if prior_shape is None:
        return False
    mf = dataset.meta_features
    rows = float(mf.get("n_instances", len(dataset.y)))
    features = float(mf.get("n_features", dataset.X.shape[1]))
    max_rows, max_features = (float(v) for v in prior_shape)
    return bool(rows > max_rows or features > max_features)  # NaN limits: never larger


def check_limit(limit) -> float | None:
    """A test's time limit in seconds, or None when there is none (``None``, ``inf``, or beyond
    :data:`~algorank.metadata.checks.MAX_SECONDS`).

    Raises
    ------
    InputError
        Not a number, NaN, or not positive.
    """
    if limit is None:
        return None
    if not isinstance(limit, bool) and isinstance(limit, (int, float)) and float(limit) > MAX_SECONDS:
        return None  # inf: no limit
    return check_seconds(limit, name="limit")


def _first_line(text: str, limit: int = 200) -> str:
    line = str(text).strip().splitlines()[0] if str(text).strip() else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


_READY_SERVER: list = []  # pid of the fold server that has forked a process for this one: its start-up is over


def _await_fold_server(until: float) -> None:
    """Wait until the fold server has forked a process for this one (at most until ``until``, a
    ``time.perf_counter()`` value), so that its start-up is over.

    A fresh fold server imports scikit-learn, a forked one runs its preload at its first use: one to several
    seconds on a busy machine, which the first timed test would otherwise pay within its time limit.  Once per
    fold server; best effort (a server that cannot start says so at the test itself).
    """
    from multiprocessing import forkserver

    pid = getattr(forkserver._forkserver, "_forkserver_pid", None)
    if pid is not None and pid in _READY_SERVER:
        return
    box: dict = {}

    def work():
        try:
            box["outcome"] = run_with_deadline(os.getpid, (), timeout=None, deadline=until)
        except Exception:  # noqa: BLE001 - best effort
            logger.debug("the fold server did not answer", exc_info=True)

    thread = threading.Thread(target=work, name="algorank-fold-server-wait", daemon=True)
    thread.start()
    thread.join(max(until - time.perf_counter(), 0.0))
    outcome = box.get("outcome")
    if outcome is not None and outcome.status == "done":
        _READY_SERVER[:] = [getattr(forkserver._forkserver, "_forkserver_pid", None)]


def _kill_fold_processes() -> None:
    """Kill this process's daemonic multiprocessing children (fold processes a watched test started)."""
    import multiprocessing

    for child in multiprocessing.active_children():
        if child.daemon:
            with contextlib.suppress(Exception):
                child.kill()
                child.join(0.5)


class LiveEnvironment:
    """Test learners by really evaluating them on one dataset.

    Parameters
    ----------
    dataset : LoadedDataset
        The user's dataset.
    evaluator : Evaluator, optional
        How to evaluate; default ``Evaluator(scheme="cv", cv=cv, repeats=1,
        random_state=random_state, progress=False, model_bytes=False)``.
    cv : int
        Folds of the default evaluator.
    random_state : int
        Seed of the default evaluator.
    budget_seconds : float, optional
        Total budget; tests then get a per-fold timeout of the budget left.
    min_timeout : float
        Smallest per-fold timeout given to a test (seconds).
    expected_seconds : mapping, optional
        learner -> expected seconds of its test (NaN = unknown).
    guard : float
        Tests expected to take less than ``1 / guard`` of the budget left run without a timeout.
    fold_slack : float, optional
        Seconds an in-process fold may run past the deadline if it is ``guard`` times slower than
        expected; tests whose folds could run longer are timed (None: no such limit).
    prior_shape : (float, float), optional
        Largest numbers of rows and features among the prior datasets; on a larger dataset
        every test runs timed.
    clock : callable
        Time source (seconds), for tests.
    origin : float, optional
        ``clock()`` value that the start and end times of the tests count from (default: the
        start of the first test); :func:`~algorank.recommender.live.recommend.recommend`
        passes the start of the command.
    allow_modules : sequence of str
        Packages allowed besides scikit-learn for import-path learner ids (default
        evaluator only; a given evaluator carries its own).
    metric : str
        The score of an observation, one of :data:`algorank.metadata.metric.METRICS`: the
        mean over the folds of the metric's score (:func:`~algorank.metadata.metric.score_from_runs`;
        ``exp(-log loss)`` for log loss, so that higher is better).  Use the metric the
        meta-data was ranked by.

    Attributes
    ----------
    spent : float
        Wall-clock seconds used by the tests so far.
    results : dict
        learner -> the evaluator's summary row (a dict) of its test.
    time_ratios : list of float
        Measured / expected seconds of the finished tests with a known expectation.
    timeline : list of (float, float)
        Start and end of every test (in :meth:`test` call order), seconds since ``origin``.
    paces : dict
        learner -> seconds a full test needs at the pace its stopped tests showed (:meth:`needs`).
    predictions : dict
        learner -> out-of-fold predictions of its finished test (class probabilities ``(n_rows, n_classes)``
        float32, or a regression's values ``(n_rows, 1)``; see
        :attr:`~algorank.evaluation.cv.evaluator.EvaluationResult.oof`), for ensemble selection.
    """

    def __init__(self, dataset: LoadedDataset, evaluator: Evaluator | None = None, *, cv: int = 5,
                 random_state: int = 0, budget_seconds: float | None = None, min_timeout: float = 1.0,
                 expected_seconds=None, guard: float = 4.0, clock: Callable[[], float] = time.perf_counter,
                 allow_modules=(), metric: str = "accuracy", prior_shape=None,
                 fold_slack: float | None = None, origin: float | None = None) -> None:
        if not isinstance(dataset, LoadedDataset):
            raise InputError(f"dataset must be a LoadedDataset (see algorank.evaluation.cv.datasets.load_dataset); "
                             f"got {type(dataset).__name__}")
        budget_seconds = check_budget(budget_seconds)
        if metric not in METRICS:
            raise InputError(f"metric must be one of {', '.join(METRICS)}; got {metric!r}")
        self.metric = metric
        self.dataset = dataset
        self.evaluator = evaluator if evaluator is not None else Evaluator(
            scheme="cv", cv=cv, repeats=1, random_state=random_state, progress=False, allow_modules=allow_modules,
            model_bytes=False)  # the model's pickled size is not used here: no pickling per fold
        self.budget_seconds = budget_seconds
        self.min_timeout = float(min_timeout)
        self.expected_seconds = dict(expected_seconds or {})
        self.guard = float(guard)
        self.fold_slack = None if fold_slack is None else float(fold_slack)
        self._clock = clock
        self.spent = 0.0
        self.results: dict[str, dict] = {}
        self.time_ratios: list[float] = []
        self.tests = 0
        self.prior_shape = prior_shape
        self.first_in_process = True  # a cheap first test may run in-process under a watchdog
        self.sharing = 1  # tests that may run in this process at once (parallel tests): the watchdog waits as long x
        self.beyond_prior = _larger_than(dataset, prior_shape)
        self.origin = None if origin is None else float(origin)
        self.timeline: list[tuple[float, float]] = []
        self.paces: dict[str, float] = {}
        self.predictions: dict[str, np.ndarray] = {}
        self._done: int | None = None

    @property
    def calibration(self) -> float:
        """Factor applied to the expected times: the median measured/expected ratio so far, at least 1."""
        return max(1.0, float(np.median(self.time_ratios))) if self.time_ratios else 1.0

    def expected(self, learner: str) -> float:
        """Calibrated expected seconds of ``learner``'s test (NaN when unknown)."""
        return float(self.expected_seconds.get(learner, math.nan)) * self.calibration

    def _shared_expected(self, learner: str) -> float:
        """:meth:`expected`, times the tests sharing this process's interpreter (``sharing``): what the rules
        that keep a test in-process within the budget compare."""
        return self.expected(learner) * max(int(self.sharing), 1)

    def _folds(self) -> int:
        """Folds of one test: the evaluator's splits per repetition times its repetitions."""
        ev = self.evaluator
        resampler = make_resampler(ev.scheme, cv=ev.cv, n_rows=len(self.dataset.y), train_fraction=ev.train_fraction)
        return resampler.folds_per_repeat * int(ev.repeats or 1)

    def _room(self, limit: float | None) -> float | None:
        """Seconds a test may take: the budget left, or ``limit`` when that is less (None: neither)."""
        left = None if self.budget_seconds is None else max(self.budget_seconds - self.spent, 0.0)
        if limit is None:
            return left
        return limit if left is None else min(left, limit)

    def timing_reason(self, learner: str, *, limit: float | None = None) -> str | None:
        """Why ``learner``'s next test runs timed (in a child process), or None (in-process).

        Parameters
        ----------
        learner : str
            Learner id.
        limit : float, optional
            The test's time limit in seconds (None or ``inf``: none).
        """
        limit = check_limit(limit)
        if self.budget_seconds is None and limit is None:
            return None
        if self.tests == 0:
            return "first test"
        if self.beyond_prior:
            return "dataset larger than the prior datasets"
        expected = self._shared_expected(learner)
        if not math.isfinite(expected):
            return "expected time unknown"
        if self.budget_seconds is not None and expected * self.guard >= max(self.budget_seconds - self.spent, 0.0):
            return "expected time close to the budget left"
        if limit is not None and expected * self.guard >= limit:
            return "expected time close to its limit"
        if self.fold_slack is not None and expected / self._folds() * self.guard > self.fold_slack:
            return "a fold could run past the deadline"
        return None

    def watch_seconds(self, learner: str, *, limit: float | None = None) -> float | None:
        """Seconds the watchdog gives ``learner``'s test when it runs in-process as a cheap first test, else None.

        The first test (nothing measured on this dataset yet) normally runs timed, in fold
        processes.  Starting them costs the fork server's start-up when it is not warm yet (one to
        several seconds on a busy machine), more than a cheap test itself.  So a first test whose
        expected seconds, :data:`FIRST_TEST_GUARD` times over, still fit in the budget left and in its
        ``limit`` (and on a dataset no larger than the prior ones, with the default per-fold timeout)
        runs in-process in a thread instead; the caller waits at most ``max(FIRST_TEST_GUARD x
        expected, FIRST_TEST_MIN_WATCH)`` seconds (never beyond the budget or the limit) and then
        abandons it: it becomes a timeout, no fold of it starts after that moment, and a fold still
        running finishes unobserved in its daemon thread.  When ``sharing`` tests may run in this
        process at once (parallel tests, each in a thread), they share its interpreter: the expected
        seconds in these rules, and in those of :meth:`timing_reason`, are ``sharing`` times as many,
        and so is the least watch.
        """
        limit = check_limit(limit)
        if ((self.budget_seconds is None and limit is None) or self.tests > 0 or self.beyond_prior
                or not self.first_in_process or self.evaluator.timeout is not None):
            return None
        expected = self._shared_expected(learner)
        left = self._room(limit)
        if not (math.isfinite(expected) and expected > 0) or expected * FIRST_TEST_GUARD > left:
            return None
        return min(max(FIRST_TEST_GUARD * expected, FIRST_TEST_MIN_WATCH * max(int(self.sharing), 1)), left)

    def _watched(self, learner: str, watch: float, deadline: float | None, *, evaluator: Evaluator | None = None,
                 grace: float | None = None, screen=None, on_fold=None):
        """Evaluate ``learner`` in a daemon thread; its result, or None when the watchdog fired.

        The caller waits until ``watch`` seconds from now (never beyond ``deadline``) plus ``grace``.
        """
        stop = time.perf_counter() + watch
        stop = stop if deadline is None else min(stop, deadline)
        evaluator = self.evaluator if evaluator is None else evaluator
        grace = _WATCH_GRACE if grace is None else grace
        box: dict = {}

        def work():
            try:
                box["result"] = evaluator.evaluate(self.dataset, [learner], deadline=stop, report_failures=False,
                                                   screen=screen, on_fold=on_fold)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                box["error"] = exc

        thread = threading.Thread(target=work, name="algorank-watched-test", daemon=True)
        thread.start()
        try:
            thread.join(max(stop - time.perf_counter(), 0.0) + grace)
        except KeyboardInterrupt:  # Ctrl-C reaches this (main) thread: end the test's fold process now
            _kill_fold_processes()
            raise
        if thread.is_alive():  # abandoned: it reports nothing when it ends (report_failures=False)
            return None
        if "error" in box:
            raise box["error"]
        return box["result"]

    def _evaluator_for_test(self, learner: str, limit: float | None = None) -> Evaluator:
        reason = self.timing_reason(learner, limit=limit)
        if reason is None:
            return self.evaluator
        left = max(self._room(check_limit(limit)), self.min_timeout)
        logger.debug("%s runs timed: %s", learner, reason)
        per_fold = max(left / self._folds(), self.min_timeout)
        if learner in self.paces:  # tested again after a stop: its folds may use the whole room, not a share of it
            per_fold = left
        if self.evaluator.timeout is not None:
            per_fold = min(per_fold, self.evaluator.timeout)
        ev = self.evaluator
        return Evaluator(scheme=ev.scheme, cv=ev.cv, repeats=ev.repeats, stop=ev.stop, threshold=ev.threshold,
                         min_repeats=ev.min_repeats, max_repeats=ev.max_repeats, timeout=float(per_fold),
                         n_jobs=ev.n_jobs, store=ev.store, random_state=ev.random_state, progress=False,
                         train_fraction=ev.train_fraction, allow_modules=ev.allow_modules, threads=ev.threads,
                         model_bytes=ev.model_bytes)

    @property
    def screens(self) -> bool:
        """Whether a test can stop after its first fold (:meth:`test`'s ``screen``): the metric is accuracy and a
        test has more than one fold."""
        return self.metric == "accuracy" and self._folds() > 1

    def test(self, learner: str, *, limit: float | None = None, screen: float | None = None) -> Observation:
        """Evaluate ``learner`` and return its observation (failures included, never raised).

        Parameters
        ----------
        learner : str
            Learner id.
        limit : float, optional
            Seconds after which the test is stopped (None or ``inf``: none, only the budget counts); a
            test stopped because of it is a *capped* observation (module docstring).
        screen : float, optional
            An accuracy bar for the test's first fold (:attr:`screens`): the first fold runs first, and when it
            scores below the bar no other fold runs; the observation is then *screened* (and capped, status
            ``timeout``, the seconds it used).

        Returns
        -------
        Observation
            ``capped`` when the limit, not the budget, stopped the test.

        Raises
        ------
        InputError
            ``limit`` is not a positive number of seconds.
        """
        limit = check_limit(limit)
        bar = None if screen is None else check_bar(screen)  # a bad bar is an error even where tests run every fold
        bars = {learner: bar} if bar is not None and self.screens else None
        start = self._clock()
        if self.origin is None:
            self.origin = start
        self._end = start
        self._done = None  # folds that finished, once the evaluator's result is back
        try:
            o = self._test(learner, start, limit, bars)
        finally:
            self.timeline.append((start - self.origin, self._end - self.origin))
        if o.status == "timeout":  # stopped: how long a full test needs at the pace it showed
            running = 0 if o.screened else 1  # a screened test ran its first fold only; else a fold was cut short
            need = float(o.seconds)  # nothing known of its folds: only what it used
            if self._done is not None:
                need = max(float(o.seconds) * self._folds() / max(self._done + running, 1), float(o.seconds))
            self.paces[learner] = max(need, self.paces.get(learner, 0.0))
        return o

    def needs(self, learner: str) -> float:
        """Seconds a full test of ``learner`` needs at the pace its stopped tests showed (NaN when none stopped).

        A test stopped after ``k`` finished folds, one more cut short, used ``s`` seconds: a full test of ``folds``
        folds needs at least ``s x folds / (k + 1)``; a screened test ran its first fold only: ``s x folds``.  A test
        abandoned before its result came back (a watchdog, the end of its limit with no result) counts the folds
        that had come back by then (``evaluate``'s ``on_fold``): abandoned during its first fold, it needs
        ``s x folds``.  Never less than the seconds the stopped test used.
        """
        return float(self.paces.get(learner, math.nan))

    def _charge(self, start: float) -> float:
        """End a test that counts (one more measured test): its seconds, added to ``spent``."""
        self._end = self._clock()
        seconds = float(self._end - start)
        self.spent += seconds
        self.tests += 1
        return seconds

    def _capped(self, learner: str, seconds: float, limit: float, detail: str = "") -> Observation:
        """The observation of a test its limit stopped (a fold that ran past its share of the limit, when the
        test stopped well before the limit itself)."""
        message = f"stopped at its limit of {limit:.3g} s"
        if seconds < 0.9 * limit and learner not in self.paces:
            share = max(limit / self._folds(), self.min_timeout)
            message += f" (a fold ran past its {share:.3g} s share)"
        logger.info("%s: %s%s", escape(learner), message, f" ({escape(detail)})" if detail else "")
        return Observation(learner, float("nan"), seconds, "timeout", message, capped=True)

    def _test(self, learner: str, start: float, limit: float | None, bars=None) -> Observation:
        deadline = None
        if self.budget_seconds is not None:
            deadline = time.perf_counter() + max(self.budget_seconds - self.spent, 0.0)
        finished: list = []  # folds that came back, as they come: all a test abandoned before its result tells

        def on_fold(rec) -> None:
            if rec.status == "ok":
                finished.append(rec.fold)

        try:
            watch = self.watch_seconds(learner, limit=limit)
            # a test not watched gets its evaluator here, which may raise like evaluate (too few rows for the folds)
            evaluator = None if watch is not None else self._evaluator_for_test(learner, limit)
            if limit is not None and evaluator is not None and evaluator.timeout is not None:
                # the fold server's start-up is not the learner's: not counted in its limit
                _await_fold_server(deadline if deadline is not None else time.perf_counter() + _SERVER_WAIT)
            now = time.perf_counter()
            by_limit = limit is not None and (deadline is None or now + limit < deadline)  # the limit ends it first
            if by_limit:
                deadline = now + limit
            if watch is not None:  # a cheap first test: in-process, under a watchdog
                by_limit = by_limit and watch >= limit  # else the watchdog stops it first
                result = self._watched(learner, watch, deadline, screen=bars, on_fold=on_fold)
                if result is None:
                    seconds = self._charge(start)
                    self._done = len(finished)
                    self.time_ratios.append(max(seconds / max(float(self.expected_seconds[learner]), 1e-9), 1.0))
                    if by_limit:
                        return self._capped(learner, seconds, limit, "no result by then")
                    message = (f"fit+predict exceeded the {watch:.3g} s watchdog of a first test run in-process "
                               f"(predicted {self.expected(learner):.3g} s); abandoned")
                    logger.info("%s: %s", learner, message)
                    return Observation(learner, float("nan"), seconds, "timeout", message)
            elif evaluator is not self.evaluator and deadline is not None:
                # timed: its folds are killed at the deadline, but starting a fold process waits for the
                # fork server, which may still be starting on a busy machine: never wait past the deadline
                result = self._watched(learner, max(deadline - time.perf_counter(), 0.0), deadline,
                                       evaluator=evaluator, grace=_TIMED_GRACE, screen=bars, on_fold=on_fold)
                if result is None:
                    seconds = self._charge(start)
                    self._done = len(finished)
                    if by_limit:
                        return self._capped(learner, seconds, limit, "no result by then")
                    message = "no result by the end of the budget (its fold process had not started or finished)"
                    logger.info("%s: %s", learner, message)
                    return Observation(learner, float("nan"), seconds, "timeout", message)
            else:
                result = evaluator.evaluate(self.dataset, [learner], deadline=deadline, report_failures=False,
                                            screen=bars)
        except InputError as exc:  # e.g. unknown learner id: record it and go on
            self._end = self._clock()
            seconds = self._end - start
            self.spent += seconds
            return Observation(learner, float("nan"), float(seconds), "error", str(exc))
        seconds = self._charge(start)
        if "accuracy" in result.runs:
            self._done = int(np.isfinite(result.runs["accuracy"].to_numpy(dtype=float)).sum())
        if bars and (result.runs["message"] == NOT_RUN_SCREENED).any():  # one fold's time: not a test's ratio
            first = float(result.runs["accuracy"].dropna().iloc[0])
            message = f"stopped after its first fold: accuracy {first:.4f} below the bar {bars[learner]:.4f}"
            logger.info("%s: %s", escape(learner), message)
            return Observation(learner, float("nan"), seconds, "timeout", message, capped=True, screened=True,
                               fold_accuracy=first)
        raw = float(self.expected_seconds.get(learner, math.nan))
        if math.isfinite(raw) and raw > 0:
            self.time_ratios.append(seconds / raw)
        row = result.summary.iloc[0].to_dict()
        self.results[learner] = row
        if learner in result.oof:
            self.predictions[learner] = result.oof[learner]
        status = str(row.get("status", "ok"))
        acc = float(row.get("accuracy_mean", np.nan)) if self.metric == "accuracy" else \
            score_from_runs(result.runs, self.metric)
        if status != "ok" or not math.isfinite(acc):
            message = _first_line(row.get("message") or "") or (
                f"{status} on at least one fold" if status != "ok"
                else f"no {METRICS[self.metric].label}: the learner gives no class scores for it")
            own = self.evaluator.timeout  # the user's own per-fold timeout: its timeouts are not the limit's
            if status == "timeout" and by_limit and not (own is not None and f"the {own:g} s timeout" in message):
                return self._capped(learner, seconds, limit, message)
            logger.info("%s failed (%s): %s", learner, status, message)
            return Observation(learner, float("nan"), seconds, status if status in ("error", "timeout") else "error",
                               message)
        return Observation(learner, acc, seconds)
