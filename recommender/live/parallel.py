"""Parallel live tests: a batch version of the policy over joblib's engines.

:func:`run_parallel` keeps up to ``n_jobs`` tests running at once.  Whenever a slot is free it
asks the policy for the next learner given everything seen so far *and* the tests still
running, each of those standing in as the result the meta-data expects of it (its predicted
accuracy and seconds: the "believer" heuristic of batch Bayesian optimisation), so the policy
never picks a running learner again and spreads the batch over learners it still expects
something from.  As each test finishes, its real result replaces the stand-in and the policy
re-plans with it before the slot is refilled.

The tests run on the engine joblib is configured with (``joblib.parallel_config``):

* by default, or with ``backend="loky"``: one test at a time in this process (a thread: no round
  trip, no start-up, the data already here) and ``n_jobs - 1`` workers of joblib's loky process
  pool (:func:`joblib.externals.loky.get_reusable_executor`) beside it; the dataset goes to the
  workers once, as a file the workers map and cache, written at their first test.  The workers are
  fresh interpreters that import scikit-learn (a CPU second or more each); until one of them is
  ready, this process runs up to ``n_jobs`` tests at once (threads), so that ``n_jobs`` tests run
  from the first one; a test that would have to run in fold processes started just for it waits in
  the pool's queue instead.  Once the pool is ready, this process keeps one slot;
* ``backend="dask"`` (with a ``dask.distributed`` Client, local or on a cluster): the
  Client's futures; the dataset is scattered to the workers once;
* ``backend="threading"``: a thread pool in this process (cheap set-up, little parallelism for
  pure-Python learners);
* any other backend (``ray``, ``multiprocessing``, ...): ``joblib.Parallel`` itself, in rounds
  of ``n_jobs`` tests (the policy re-plans after each round instead of after each test).

Guarantees.  The budget: every test carries the seconds left when it starts as its deadline,
and its folds stop there (timed folds are killed; on Dask every test runs timed, since a task
cannot be stopped from outside); a test whose result has not come back a short grace after the
end of the budget is abandoned (the loky workers are killed; Dask futures are cancelled) and
reported as a timeout.  No orphans: loky workers end with this process (and are killed on
abandon or Ctrl-C), fold processes end with their parent.

A time limit per test: a policy with ``limit(learner)`` (:func:`~algorank.recommender.kernel.trace.limit_of`)
has each finite limit handed to the test of the learner it chose, which honours it as
:meth:`~algorank.recommender.live.environment.LiveEnvironment.test` does (a *capped* observation when it stops
the test), in a worker or in this process alike.  So is a policy's first-fold bar (``screen``,
:func:`~algorank.recommender.kernel.trace.screen_of`), set from the best accuracy of the tests that have
finished: while tests run, the policy's state holds stand-ins with their predicted accuracies, which must
not set a bar.

The start and end of a test (``env.timeline``) are those the test itself recorded where it ran
(:func:`time.time`, so also on another machine of a cluster, as far as its clock agrees): a test
queued in a pool still starting starts when a worker takes it, not when it was handed over.

Results come in the order the tests finish, which depends on the machine: with ``n_jobs > 1``
the same seed gives the same scores for the same tests, but not always the same sequence.
"""

from __future__ import annotations

import concurrent.futures
import logging
import math
import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Callable

from algorank.evaluation.cv.children import forked_fold_server
from algorank.recommender.kernel.trace import Observation, Trace, limit_of, screen_of
from algorank.metadata.errors import InputError
from algorank.metadata.text import escape

__all__ = ["run_parallel", "check_n_jobs", "warm_pool", "stop_pool", "GRACE_SECONDS", "WORKER_NICE"]

logger = logging.getLogger(__name__)

#: Seconds after the end of the budget a running test may still report before it is abandoned.
GRACE_SECONDS = 1.0

#: Priority the loky workers give up (``os.nice``): they use the CPU that the command's own test slot and
#: other programs leave idle, so on a busy machine their start-up (a fresh interpreter importing
#: scikit-learn) does not slow down the tests running here; on idle cores it changes nothing.
WORKER_NICE = 10

_CACHE: dict = {}  # worker side: dataset file -> LoadedDataset (each worker reads it once)
_WARMING: list = []  # main side: the warm-up futures of the local pool (see warm_pool)
_WARM_EXECUTOR: list = []  # main side: the executor they ran on


def check_n_jobs(n_jobs) -> int:
    """``n_jobs`` as a positive number of parallel tests (``-1``: one per core, like joblib).

    On the local engines (loky, the default, and threads) it is at most the cores this process
    may run on (:func:`~algorank.metadata.checks.available_cores`): a larger value is lowered to it, with
    a note in the log (more tests at once than cores only make them compete, and each costs a worker
    process).  A Dask cluster's or another backend's workers are not counted here: no cap.
    """
    from algorank.metadata.checks import available_cores

    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int,)) and not (
            isinstance(n_jobs, float) and n_jobs.is_integer()):
        raise InputError(f"n_jobs must be a positive integer or -1; got {n_jobs!r}")
    n = int(n_jobs)
    cores = available_cores()
    if n == -1:
        return cores
    if n < 1:
        raise InputError(f"n_jobs must be a positive integer or -1; got {n_jobs!r}")
    if n > cores and _backend_kind(_active_backend()) in ("loky", "threading"):
        logger.warning("note: n_jobs=%d is more than the %d core(s) of this machine; using %d", n, cores, cores)
        return cores
    return n


def _active_backend():
    from joblib.parallel import get_active_backend

    backend, _ = get_active_backend()
    return backend


def _backend_kind(backend) -> str:
    name = type(backend).__name__
    if name == "DaskDistributedBackend":
        return "dask"
    if name == "LokyBackend":
        return "loky"
    if name == "ThreadingBackend":
        return "threading"
    return "joblib"


def _warm() -> int:
    """Worker warm-up: import what a test needs (the first test then pays no imports)."""
    import algorank.recommender.live.environment  # noqa: F401
    import sklearn.ensemble  # noqa: F401
    import sklearn.linear_model  # noqa: F401
    import sklearn.pipeline  # noqa: F401

    return os.getpid()


def warm_pool(n_jobs: int) -> bool:
    """Start the local worker pool now, in the background (best effort), so it is warm by the first test.

    Only for the default loky engine, with ``n_jobs - 1`` workers (one test slot is this process);
    Dask clusters are the user's and already running.  The workers start from a thread (loky's
    first submission waits for a worker process to start; the first test need not wait for that).
    Until one worker has finished its warm-up (imports), :func:`run_parallel` runs up to ``n_jobs``
    tests in this process, so a slow pool start never delays the first results; a test that would
    run timed here waits for the pool instead, unless the fold server is a cheap fork of this process.

    Returns
    -------
    bool
        Whether a local pool is warming up: the caller then need not start its own fold server
        early (each fresh process importing scikit-learn costs a CPU second or more, which on a
        machine with few cores delays the first tests).
    """
    try:
        if n_jobs < 2 or _backend_kind(_active_backend()) != "loky":
            return False
        from algorank.evaluation.cv.children import watched_executor

        executor = watched_executor(n_jobs - 1, nice=WORKER_NICE)  # beside this process's slot (run_parallel)
        if _WARM_EXECUTOR and _WARM_EXECUTOR[0] is executor and _WARMING and _WARMING[0].done() \
                and _WARMING[0].exception() is None:
            return True  # a warm pool stays warm
        ready: concurrent.futures.Future = concurrent.futures.Future()
        _WARMING[:], _WARM_EXECUTOR[:] = [ready], [executor]

        def start():  # the first submission waits for a worker process to start: not in this thread
            from algorank.evaluation.cv.children import sigint_blocked

            try:
                with sigint_blocked():  # the workers start with Ctrl-C pending, then ignore it (watched_executor)
                    warm = [executor.submit(_warm) for _ in range(n_jobs - 1)]
                concurrent.futures.wait(warm, return_when=concurrent.futures.FIRST_COMPLETED)
                ready.set_result(True)
            except BaseException as exc:  # noqa: BLE001 - the pool's first test says so
                ready.set_exception(exc)

        threading.Thread(target=start, name="algorank-pool-start", daemon=True).start()
        return True
    except Exception:  # pragma: no cover - a pool that cannot start says so at the first test
        logger.debug("could not start the worker pool early", exc_info=True)
        return False


def stop_pool() -> None:
    """Stop the local worker pool :func:`warm_pool` started, when no test will use it (e.g. the budget ran out
    before the first test)."""
    executor = _WARM_EXECUTOR[0] if _WARM_EXECUTOR else None
    _WARMING.clear()
    _WARM_EXECUTOR.clear()
    if executor is not None:
        try:
            executor.shutdown(wait=False, kill_workers=True)
        except Exception:  # pragma: no cover - workers that are gone already
            logger.debug("could not stop the worker pool", exc_info=True)


def _runs_here(env, learner: str, limit: float | None = None, sharing: int = 1) -> bool:
    """Whether ``env`` would run ``learner``'s test (time limit ``limit``) in this process (not timed in fold
    processes), with ``sharing`` tests sharing this process."""
    before = getattr(env, "sharing", 1)
    try:
        env.sharing = sharing
        return env.watch_seconds(learner, limit=limit) is not None or env.timing_reason(learner, limit=limit) is None
    except Exception:  # noqa: BLE001 - e.g. too few rows for the folds: the test itself says so
        return True
    finally:
        env.sharing = before


def _load(source):
    if isinstance(source, str):
        data = _CACHE.get(source)
        if data is None:
            import joblib

            data = _CACHE[source] = joblib.load(source)
        return data
    return source


def _worker_test(source, learner: str, state: dict):
    """Worker side: one live test of ``learner``, as the main process's environment would run it (under the
    time limit ``state["limit"]`` and the first-fold bar ``state["screen"]`` when they are not None)."""
    from algorank.recommender.live.environment import LiveEnvironment

    data = _load(source)
    env = LiveEnvironment(data, state["evaluator"], cv=state["cv"], random_state=state["random_state"],
                          budget_seconds=state["left"], expected_seconds={learner: state["expected"]},
                          allow_modules=state["allow_modules"], metric=state["metric"],
                          prior_shape=state["prior_shape"], fold_slack=state["fold_slack"])
    env.tests = 0 if state["always_timed"] else state["tests"]  # 0: "first test", i.e. timed
    env.first_in_process = not state["always_timed"]
    env.sharing = int(state.get("sharing", 1))
    env.time_ratios = list(state["time_ratios"])
    rules = {k: state[k] for k in ("limit", "screen") if state.get(k) is not None}
    started = time.time()
    obs = env.test(learner, **rules)
    return obs, env.results.get(learner), (started, time.time()), env.predictions.get(learner)


@dataclass
class _Running:
    learner: str
    started: float


class _FuturesPool:
    """concurrent.futures-style engine (loky, threads, Dask futures)."""

    def __init__(self, kind: str, n_jobs: int, data, backend) -> None:
        self.kind, self.n_jobs = kind, n_jobs
        self._tmp = None
        if kind == "dask":
            self.client = backend.client
            self.source = self.client.scatter(data, broadcast=False)
        elif kind == "loky":
            from algorank.evaluation.cv.children import watched_executor

            self._data, self.source = data, None  # written for the workers at their first test, not before
            # workers die with this process; the one warm_pool starts is taken as is (asking loky for it again
            # would wait for the lock its first submission holds while the worker starts)
            warming = _WARM_EXECUTOR[0] if _WARM_EXECUTOR and getattr(_WARM_EXECUTOR[0], "_max_workers", 0) == n_jobs \
                else None
            self.executor = warming if warming is not None else watched_executor(n_jobs, nice=WORKER_NICE)
        else:
            self.executor = concurrent.futures.ThreadPoolExecutor(max_workers=n_jobs)
            self.source = data

    def submit(self, learner: str, state: dict):
        if self.kind == "dask":
            return self.client.submit(_worker_test, self.source, learner, state, pure=False)
        if self.kind == "loky" and self.source is None:
            import joblib

            self._tmp = tempfile.mkdtemp(prefix="algorank-live-")
            self.source = os.path.join(self._tmp, "data.joblib")
            joblib.dump(self._data, self.source)
        if self.kind == "loky":
            from algorank.evaluation.cv.children import sigint_blocked

            with sigint_blocked():  # a worker (re)started here ignores Ctrl-C from its start (watched_executor)
                return self.executor.submit(_worker_test, self.source, learner, state)
        return self.executor.submit(_worker_test, self.source, learner, state)

    def wait(self, futures, timeout: float | None):
        if self.kind == "dask":
            import distributed

            try:
                done, _ = distributed.wait(futures, timeout=timeout, return_when="FIRST_COMPLETED")
            except (TimeoutError, distributed.TimeoutError if hasattr(distributed, "TimeoutError") else TimeoutError):
                return []
            return list(done)
        done, _ = concurrent.futures.wait(futures, timeout=timeout, return_when=concurrent.futures.FIRST_COMPLETED)
        return list(done)

    @staticmethod
    def result(future):
        return future.result()

    def abort(self, futures) -> None:
        if self.kind == "dask":
            self.client.cancel(list(futures))
        elif self.kind == "loky":
            self.executor.shutdown(wait=False, kill_workers=True)
        else:
            for f in futures:
                f.cancel()

    def close(self) -> None:
        if self.kind == "threading":
            self.executor.shutdown(wait=False, cancel_futures=True)
        if self.kind == "loky":
            # the workers end with the loop: idle or still starting, they would keep this process from
            # exiting (past the budget) until they are told to stop
            self.executor.shutdown(wait=False, kill_workers=True)
            _WARMING.clear()
            _WARM_EXECUTOR.clear()
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)


class _RoundsPool:
    """Any other joblib backend: ``joblib.Parallel`` over rounds of ``n_jobs`` tests."""

    kind = "joblib"

    def __init__(self, n_jobs: int, data) -> None:
        self.n_jobs, self.data = n_jobs, data
        self._round: list = []
        self._results = None

    def submit(self, learner: str, state: dict):
        handle = object()
        self._round.append((handle, learner, state))
        return handle

    def wait(self, handles, timeout: float | None):
        if self._results is None:
            from joblib import Parallel, delayed

            jobs = self._round
            self._round = []
            out = Parallel(n_jobs=self.n_jobs)(delayed(_worker_test)(self.data, l, s) for _, l, s in jobs)
            self._results = {h: r for (h, _, _), r in zip(jobs, out)}
        done = [h for h in handles if h in self._results]
        return done

    def result(self, handle):
        out = self._results.pop(handle)
        if not self._results:
            self._results = None
        return out

    def abort(self, handles) -> None:  # pragma: no cover - joblib.Parallel returns only when the round is done
        pass

    def close(self) -> None:
        pass


def _pool(n_jobs: int, data):
    """The engine of ``n_jobs`` parallel tests; for loky, ``n_jobs - 1`` workers beside the local slot."""
    backend = _active_backend()
    kind = _backend_kind(backend)
    if kind == "joblib":
        return _RoundsPool(n_jobs, data)
    return _FuturesPool(kind, n_jobs - 1 if kind == "loky" else n_jobs, data, backend)


class _LocalSlots:
    """Tests in this process, each in a daemon thread, beside the loky workers.

    This process has imported and warmed up everything a test needs and holds the data already:
    a test here costs no process round trip and no start-up, and a slot here means one worker
    fewer to start (a CPU second or more each for a fresh interpreter).  One slot is this process's
    own for the whole run; while the workers still start (a fresh interpreter importing
    scikit-learn), the other slots run here too, so that ``n_jobs`` tests run from the first one.
    A test runs exactly as a worker's (:func:`_worker_test`, same state).  A test still running at
    the end of the budget is abandoned like a watched first test: its folds stop at the deadline,
    it reports nothing.
    """

    def __init__(self, data) -> None:
        self.data = data
        self.futures: list[concurrent.futures.Future] = []

    def __len__(self) -> int:
        return len(self.futures)

    def owns(self, handle) -> bool:
        return any(handle is f for f in self.futures)

    def release(self, handle) -> None:
        self.futures = [f for f in self.futures if f is not handle]

    def submit(self, learner: str, state: dict) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()

        def work():
            try:
                future.set_result(_worker_test(self.data, learner, state))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                future.set_exception(exc)

        threading.Thread(target=work, name="algorank-local-test", daemon=True).start()
        self.futures.append(future)
        return future


def _wait_any(local: _LocalSlots | None, pool, handles: list, timeout: float | None) -> list:
    """Handles (local futures among them) of the tests that finished within ``timeout`` seconds."""
    mine = [] if local is None else list(local.futures)
    if not handles:
        done, _ = concurrent.futures.wait(mine, timeout=timeout, return_when=concurrent.futures.FIRST_COMPLETED)
        return list(done)
    if not mine:
        return pool.wait(handles, timeout)
    if all(isinstance(h, concurrent.futures.Future) for h in handles):  # loky: one wait over both
        done, _ = concurrent.futures.wait(mine + handles, timeout=timeout,
                                          return_when=concurrent.futures.FIRST_COMPLETED)
        return list(done)
    end = None if timeout is None else time.perf_counter() + timeout  # pragma: no cover - other handles: poll
    while True:  # pragma: no cover
        finished = [f for f in mine if f.done()]
        if finished:
            return finished
        done = pool.wait(handles, 0.02)
        if done:
            return done
        if end is not None and time.perf_counter() >= end:
            return []


def _stand_in(learner: str, expected) -> Observation:
    """What a running test is taken to return while it runs (its predicted accuracy and seconds)."""
    acc, sec = (tuple(expected.get(learner, (math.nan, math.nan))) + (math.nan, math.nan))[:2]
    sec = float(sec) if math.isfinite(sec) else 0.0
    if not math.isfinite(acc):
        return Observation(learner, math.nan, sec, "error", "running")
    return Observation(learner, float(acc), sec)


def run_parallel(policy, env, *, n_jobs: int, expected, dataset: str = "", budget: float | None = None,
                 max_tests: int | None = None, on_start: Callable | None = None,
                 on_observation: Callable | None = None, clock: Callable[[], float] = time.perf_counter):
    """Follow ``policy`` with up to ``n_jobs`` tests at once; the parallel counterpart of ``run_policy``.

    Parameters
    ----------
    policy : Policy
        Gives the next learner from the history (running tests included as stand-ins); its ``limit(learner)``,
        when it has one, is the time limit of that learner's test.
    env : LiveEnvironment
        The main process's environment: its settings are those of every test, its calibration
        (``time_ratios``, ``tests``, ``results``, ``timeline``) is updated as results come in.
    n_jobs : int
        Tests running at once.
    expected : mapping
        learner -> (predicted accuracy, predicted seconds, ...): the stand-ins.
    dataset : str
        Label of the trace.
    budget : float, optional
        Seconds from this call: no test starts after it, and tests still running
        :data:`GRACE_SECONDS` after it are abandoned (timeouts).
    max_tests : int, optional
        Start at most this many tests.
    on_start, on_observation : callable, optional
        Called with each learner when it starts, and with each observation as it arrives.

    Returns
    -------
    Trace
        Observations in the order the tests finished; ``env.timeline`` holds their start and end.
    """
    pool = _pool(n_jobs, env.dataset)
    always_timed = getattr(pool, "kind", "") == "dask"
    local = _LocalSlots(env.dataset) if getattr(pool, "kind", "") == "loky" else None
    begin = clock()
    if env.origin is None:
        env.origin = begin
    history: list[Observation] = []
    running: dict = {}
    stopped = "policy"
    exhausted = False

    def left() -> float | None:
        return None if budget is None else budget - (clock() - begin)

    def state_for(learner: str, limit: float) -> dict:
        found = [o.accuracy for o in history if o.status == "ok" and o.accuracy == o.accuracy]
        bar = screen_of(policy, learner, best=max(found)) if found and getattr(env, "screens", False) else None
        return {"evaluator": None if env.evaluator is None else env.evaluator, "cv": int(env.evaluator.cv),
                "random_state": env.evaluator.random_state, "left": left(),
                "limit": limit if limit < math.inf else None, "screen": bar,
                "expected": float(env.expected_seconds.get(learner, math.nan)),
                "allow_modules": tuple(env.evaluator.allow_modules), "metric": env.metric,
                "prior_shape": getattr(env, "prior_shape", None), "fold_slack": env.fold_slack,
                "tests": env.tests, "time_ratios": tuple(env.time_ratios), "always_timed": always_timed}

    def record(learner: str, started: float, obs: Observation, row, when=None) -> None:
        """Add a finished test; ``when``: the (start, end) :func:`time.time` values the test itself recorded (a test
        the pool queued starts when a worker takes it), else from its submission to now."""
        ended = clock()
        if when is not None:
            shift = ended - time.time()  # this clock's reading of a time.time() value
            started, ended = max(started, when[0] + shift), min(ended, max(when[1] + shift, when[0] + shift))
        env.timeline.append((started - env.origin, ended - env.origin))
        env.spent += obs.seconds
        if row is not None:
            env.tests += 1
            env.results[learner] = row
            raw = float(env.expected_seconds.get(learner, math.nan))
            if math.isfinite(raw) and raw > 0:
                env.time_ratios.append(obs.seconds / raw)
        history.append(obs)
        if on_observation is not None:
            on_observation(obs)

    def cannot_start(in_flight: int) -> str | None:
        """Why no further test may start: ``"top"`` (``max_tests`` reached, ``in_flight`` running tests
        included), ``"budget"`` (none of it left), or None."""
        if max_tests is not None and len(history) + in_flight >= max_tests:
            return "top"
        rest = left()
        return "budget" if rest is not None and rest <= 0 else None

    def pool_ready() -> bool:
        return getattr(pool, "kind", "") != "loky" or not _WARMING or any(f.done() for f in _WARMING)

    def pool_slots() -> int:
        """Tests the pool may run now: none while a local pool still starts (this process runs them)."""
        if local is None:
            return n_jobs
        return n_jobs - 1 if pool_ready() else 0

    def local_slots() -> int:
        """Tests this process may run now: one beside a warm pool, every one while the pool starts."""
        if local is None:
            return 0
        return 1 if pool_ready() else n_jobs

    def local_ok(learner: str, limit: float) -> bool:
        """Whether this process may run ``learner``: yes, unless it would run timed here and the fold server
        is not a cheap fork of this process (a fresh one would start beside the pool: it waits for the pool)."""
        return forked_fold_server() or _runs_here(env, learner, limit if limit < math.inf else None, local_slots())

    try:
        while True:
            while not exhausted:
                here = 0 if local is None else len(local)
                in_pool = len(running) - here
                local_free = here < local_slots()
                if len(running) >= n_jobs or not local_free and in_pool >= pool_slots():
                    break
                reason = cannot_start(len(running))
                if reason is not None:
                    stopped, exhausted = reason, True
                    break
                believed = history + [_stand_in(r.learner, expected) for r in running.values()]
                learner = policy.next(believed)
                if learner is None:
                    # nothing to start now; while tests run, ask again when one ends (its result may call for a
                    # re-test, e.g. of a learner stopped at its limit)
                    exhausted = not running
                    break
                if on_start is not None:
                    on_start(learner)
                limit = limit_of(policy, learner)  # the policy's time limit for this test (inf: none)
                state = state_for(learner, limit)
                if local_free and local_ok(learner, limit):
                    state["sharing"] = local_slots()  # tests that may share this process's interpreter with it
                    handle = local.submit(learner, state)
                elif in_pool < pool_slots() or local_free:  # a timed test while the pool starts: queued there
                    if getattr(pool, "kind", "") == "threading":  # threads of this process: they share it
                        state["sharing"] = n_jobs
                    handle = pool.submit(learner, state)
                else:  # pragma: no cover - the checks above leave a slot
                    break
                running[handle] = _Running(learner, clock())
            if not running:
                break
            rest = left()
            pooled = [h for h in running if local is None or not local.owns(h)]
            done = _wait_any(local, pool, pooled, None if rest is None else max(rest + GRACE_SECONDS, 0.0))
            if not done:  # past the end of the budget and its grace: abandon what still runs
                pool.abort(pooled)
                for handle, r in list(running.items()):
                    record(r.learner, r.started, Observation(r.learner, math.nan, clock() - r.started, "timeout",
                                                             "abandoned at the end of the budget"), None)
                running.clear()
                if local is not None:
                    local.futures = []  # their threads finish unobserved
                stopped = "budget"
                break
            for handle in done:
                r = running.pop(handle)
                when = None
                try:
                    if local is not None and local.owns(handle):
                        local.release(handle)
                        out = handle.result()
                    else:
                        out = pool.result(handle)
                    obs, row = out[:2]
                    when = out[2] if len(out) > 2 else None
                    if len(out) > 3 and out[3] is not None and obs.status == "ok":
                        env.predictions[r.learner] = out[3]
                except Exception as exc:  # noqa: BLE001 - a worker that died is one failed test
                    obs, row = Observation(r.learner, math.nan, clock() - r.started, "error",
                                           f"the worker failed: {type(exc).__name__}: {exc}".splitlines()[0]), None
                record(r.learner, r.started, obs, row, when)
                if obs.status != "ok":
                    logger.info("%s failed (%s): %s", escape(r.learner), obs.status, escape(obs.message))
    except KeyboardInterrupt:
        pool.abort([h for h in running if local is None or not local.owns(h)])
        stopped = "interrupted"
    finally:
        pool.close()
    if stopped == "policy" and budget is not None and left() <= 0 and not exhausted:
        stopped = "budget"
    return Trace(dataset=dataset, observations=tuple(history), stopped=stopped)
