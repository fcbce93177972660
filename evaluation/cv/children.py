"""Child processes and deadlines: the fold server, timed children and worker pools, and their lifetimes.

One module owns every process that algorank starts to run learner code, so that the evaluator
(:mod:`algorank.evaluation.cv.evaluator`) and the meta-data build
(:mod:`algorank.evaluation.cv.metabuild`) share one implementation of the rules below.

The fold server
---------------
Timed work runs in children of a ``multiprocessing`` *forkserver* (POSIX only) that has
preloaded numpy, pandas, scikit-learn and algorank (:data:`PRELOAD`), so that each child is one
fork of a clean process: no OpenMP/BLAS thread state inherited (a plain ``fork`` of a caller that
had used OpenMP deadlocked scikit-learn's kNN), no imports per child.  The server starts on the
first timed child (or :func:`start_fold_server`), never on import.

Three ways to run a function in a child, each with a timeout and an absolute ``deadline`` (a
:func:`time.perf_counter` value), each returning an :class:`Outcome` rather than raising for a
child that is killed or dies:

* :func:`run_with_deadline`: one call in a fresh child;
* :class:`ChildWorker`: one child kept for consecutive calls that share large arguments (sent
  once), until a call is killed or the child dies;
* :class:`ChildStream`: one child that runs a generator and sends each item as it is produced.

Lifetimes (no process outlives the command)
-------------------------------------------
* A child sets the Linux parent-death signal (SIGKILL when the server dies) and closes the
  server's "caller alive" pipe, so that when the caller dies (even by SIGKILL) the server sees
  it, exits, and takes the child with it (:func:`detach_from_caller`).  A child whose caller is
  gone when it wants to send its result exits quietly (no ``BrokenPipeError`` traceback).
* The server watches its caller from its very first import (``_boot/algorank_fold_server_guard``),
  not only after its one to two seconds of preloading, and is stopped explicitly at exit
  (:func:`stop_fold_server`).
* joblib's loky workers started through :func:`parallel` watch their parent from their start
  and exit within 0.1 s of its death (:func:`watch_parent`); loky alone leaves them running for
  minutes after a SIGKILL.
* A command (the command line; :func:`end_with_this_process`) also has a reaper: a tiny process
  that, when the command ends however it ends, kills every process still carrying the command's
  token in its environment, within about 0.05 s (``_boot/algorank_reaper``).  It needs nothing
  from those processes, so a loky worker SIGKILLed-orphaned while it is still importing (before
  its parent watch can start) goes too.  Linux only; the watches above remain the rule elsewhere
  and for the library used from a long-running program, whose other processes are not ours.
* Children ignore SIGINT: a terminal Ctrl-C reaches the caller, which kills the child at once
  and re-raises.  SIGINT is held back while a child is being started, so an interrupt never
  leaves a half-sent child (``UnpicklingError: pickle data was truncated``).

Interrupts and fits
-------------------
:func:`interrupt_watch` records whether SIGINT arrived while in-process code ran: an estimator
that catches ``KeyboardInterrupt`` and returns a half-trained model (scikit-learn's MLP does)
cannot turn an interrupted fit into a result, because the caller re-raises after it returns.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import signal
import sys
import threading
import time
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

__all__ = ["PRELOAD", "REAP_SECONDS", "Outcome", "fold_context", "add_preload", "start_fold_server",
           "forked_fold_server", "forked_pid", "release_forked_server", "close_go",
           "stop_fold_server", "run_with_deadline", "ChildWorker", "ChildStream", "detach_from_caller",
           "limit_threads", "interrupt_watch", "watch_parent", "parallel", "watched_executor", "stop_processes",
           "end_with_this_process"]

logger = logging.getLogger(__name__)

from algorank.evaluation.cv.sigmask import sigint_blocked  # noqa: E402 (re-export)

_BOOT_DIR = Path(__file__).resolve().parent / "_boot"
_GUARD = "algorank_fold_server_guard"
_CALLER_ENV = "ALGORANK_FOLD_SERVER_CALLER"
_TOKEN_ENV = "ALGORANK_RUN_TOKEN"  # as in _boot/algorank_reaper.py

#: Modules the fold server imports once, so that no child pays for importing them; the guard comes
#: first (see "Lifetimes"), the warm-up last (it fits every portfolio learner once on a tiny dataset,
#: so that no child pays for first calls either: a timed 5-fold test on breast_cancer after the
#: first, 0.74 s -> 0.56 s, median of 3).
PRELOAD = [_GUARD, "algorank.evaluation.cv.children", "algorank.evaluation.cv.evaluator", "sklearn.pipeline",
           "sklearn.metrics", "sklearn.dummy", "sklearn.svm", "sklearn.discriminant_analysis", "sklearn.ensemble",
           "sklearn.linear_model", "sklearn.naive_bayes", "sklearn.neighbors", "sklearn.neural_network",
           "sklearn.tree", "algorank.evaluation.cv.forkserver_warmup"]

#: Seconds given to a killed child to be reaped before the caller moves on without waiting.
REAP_SECONDS = 0.5

_CONTEXT = None
_LOCK = threading.RLock()
#: Set by :func:`stop_processes` (the process is about to end): no fold process or fold server starts after it.
_CLOSED = False
_STARTED_PID: int | None = None


# ====================================================================== the command's reaper
_TOKEN: str | None = None
_REAPER = None


def end_with_this_process() -> None:
    """Make every process this one starts from now on, directly or not, end with it, however it ends.

    For a process that *is* one algorank command (the command line): every process it starts is
    its own.  A random token goes into this process's environment, so every process started from
    now on carries it; the first time this process starts one that runs learner code (fold server,
    worker pool), it also starts a reaper (``_boot/algorank_reaper.py``) that, once this process
    has ended (SIGKILL included), kills every process carrying the token.  Linux only; a no-op
    elsewhere and on a second call.  Not for a program that uses algorank as a library: its other
    child processes are its own business.
    """
    global _TOKEN
    if _TOKEN is not None or not sys.platform.startswith("linux"):
        return
    import secrets

    _TOKEN = secrets.token_hex(16)
    os.environ[_TOKEN_ENV] = _TOKEN


def _start_reaper() -> None:
    """Start the reaper of :func:`end_with_this_process` (once; only after that call; best effort)."""
    global _REAPER
    if _TOKEN is None or _REAPER is not None:
        return
    import subprocess

    with _LOCK:
        if _REAPER is not None:
            return
        env = {k: v for k, v in os.environ.items() if k != _TOKEN_ENV}  # the reaper must not sweep itself
        try:
            _REAPER = subprocess.Popen([sys.executable, "-I", "-S", str(_BOOT_DIR / "algorank_reaper.py"),
                                        str(os.getpid()), _TOKEN], env=env, stdin=subprocess.DEVNULL,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        except OSError:  # pragma: no cover - the watches of the processes themselves remain
            logger.debug("could not start the reaper", exc_info=True)
            _REAPER = False


# ====================================================================== the fold server
def fold_context():
    """The forkserver ``multiprocessing`` context of timed children (created once, nothing started)."""
    global _CONTEXT
    if _CONTEXT is None:
        import multiprocessing

        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(list(PRELOAD))
        _CONTEXT = ctx
    return _CONTEXT


def add_preload(module: str) -> None:
    """Have the fold server import ``module`` too (before the warm-up; effective before it starts)."""
    if module not in PRELOAD:
        PRELOAD.insert(len(PRELOAD) - 1, module)
        if _CONTEXT is not None:
            _CONTEXT.set_forkserver_preload(list(PRELOAD))


def _ensure_server() -> None:
    """Start the fold server if it is not running, with its guard on the path and this process as its caller
    (or let the one :func:`~algorank.evaluation.cv.fold_fork.fork_fold_server` forked start its preload)."""
    global _STARTED_PID
    from multiprocessing import forkserver

    fold_context()
    _start_reaper()
    release_forked_server()
    server = forkserver._forkserver
    with _LOCK:
        old = {k: os.environ.get(k) for k in ("PYTHONPATH", _CALLER_ENV)}
        os.environ["PYTHONPATH"] = os.pathsep.join([str(_BOOT_DIR)] + ([old["PYTHONPATH"]] if old["PYTHONPATH"]
                                                                       else []))
        os.environ[_CALLER_ENV] = str(os.getpid())
        try:
            server.ensure_running()
        finally:
            for k, v in old.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        pid = getattr(server, "_forkserver_pid", None)
        if pid is not None and pid != _STARTED_PID:
            if _STARTED_PID is None:
                atexit.register(stop_fold_server)
            _STARTED_PID = pid


def start_fold_server() -> None:
    """Start the fold server now (best effort), so that its start-up overlaps with the caller's own work.

    Call it only once the input is known to be good: a command that fails early should not pay
    for (or leave behind) a process that imports scikit-learn.  A fold server that is a fork of this
    process (:func:`~algorank.evaluation.cv.fold_fork.fork_fold_server`) is already there: it stays
    idle until it is first used, so that a command whose tests all run in-process never pays for its
    preload and warm-up.
    """
    if forked_fold_server():
        return
    try:
        _ensure_server()
    except Exception:  # pragma: no cover - no forkserver here: timed children will say so
        logger.debug("could not start the fold server early", exc_info=True)


def stop_fold_server() -> None:
    """Stop the fold server this process started (its children die with it); a no-op when none runs."""
    global _STARTED_PID
    try:
        from multiprocessing import forkserver

        server = forkserver._forkserver
        with _LOCK:
            close_go()
            pid = getattr(server, "_forkserver_pid", None)
            if pid is None:
                return
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            server._stop()
            _STARTED_PID = None
    except Exception:  # pragma: no cover - other multiprocessing internals: the server exits with its caller
        logger.debug("could not stop the fold server", exc_info=True)


# ====================================================================== a fold server forked from the command
_GO: int | None = None  # write end of the forked server's "start your preload" pipe, until it is sent
_FORKED_PID: int | None = None  # pid of the fold server fold_fork.fork_fold_server made


def forked_fold_server() -> bool:
    """Whether this process's fold server is a fork of it
    (:func:`~algorank.evaluation.cv.fold_fork.fork_fold_server`) that still runs."""
    from multiprocessing import forkserver

    pid = getattr(forkserver._forkserver, "_forkserver_pid", None)
    return pid is not None and pid == _FORKED_PID and _alive(pid)


def forked_pid() -> int | None:
    """Pid of the fold server :func:`~algorank.evaluation.cv.fold_fork.fork_fold_server` made (None: none)."""
    return _FORKED_PID


def release_forked_server() -> None:
    """Tell a forked fold server to start its preload and serve (once; a no-op otherwise)."""
    with _LOCK:
        if _GO is not None:
            with contextlib.suppress(OSError):
                os.write(_GO, b"g")
            close_go()


def close_go() -> None:
    """Close the forked fold server's go pipe: it then exits if it was never told to serve."""
    global _GO
    if _GO is not None:
        with contextlib.suppress(OSError):
            os.close(_GO)
        _GO = None


# ====================================================================== in the child
def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - someone else's process under a reused pid
        return True
    return True


def detach_from_caller(caller_pid: int) -> None:
    """Make a child die with the process that wants its result (call it first thing in the child).

    * Ctrl-C belongs to the caller (which kills this child): SIGINT is ignored here, so a
      terminal interrupt never prints a traceback from the child.
    * The kernel sends SIGKILL when the parent (the fold server) dies (``PR_SET_PDEATHSIG``).
    * The server hands every child the write end of its "caller alive" pipe; a child holding it
      would keep the server alive after the caller dies (and with it this child).  Closing it
      lets the server see the caller's death and exit.
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


def _send(conn, message) -> None:
    """Send to the caller; if the caller is gone (killed), end this child quietly."""
    try:
        conn.send(message)
    except (BrokenPipeError, ConnectionResetError, EOFError, OSError):
        os._exit(0)


def _failure(exc: BaseException) -> tuple:
    return ("raised", " ".join(f"{type(exc).__name__}: {exc}".split())[:500])


def _call_main(conn, fn, args, caller_pid, threads) -> None:
    detach_from_caller(caller_pid)
    with limit_threads(threads):
        try:
            message = ("done", fn(*args))
        except Exception as exc:
            message = _failure(exc)
    _send(conn, message)
    conn.close()


def _worker_main(conn, state, caller_pid, threads) -> None:
    detach_from_caller(caller_pid)
    with limit_threads(threads):
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                break
            if message is None:
                break
            fn, args = message
            try:
                reply = ("done", fn(*state, *args))
            except Exception as exc:
                reply = _failure(exc)
            _send(conn, reply)


def _stream_main(conn, fn, args, kwargs, caller_pid, threads) -> None:
    detach_from_caller(caller_pid)
    with limit_threads(threads):
        try:
            for item in fn(*args, **kwargs):
                _send(conn, ("item", item))
        except Exception as exc:
            _send(conn, _failure(exc))
            return
    _send(conn, ("end", None))
    conn.close()


# ====================================================================== in the caller
@dataclass(frozen=True)
class Outcome:
    """What became of work sent to a child.

    Attributes
    ----------
    status : {"done", "timeout", "died", "raised"}
        ``done``: ``value`` holds the result; ``timeout``: killed at the timeout or deadline;
        ``died``: the child ended without a result (``exitcode``); ``raised``: the function
        raised (``message``).
    value : object
    elapsed : float
        Seconds from the start (or the call) to the outcome.
    cut : bool
        A timeout came from the ``deadline``, before the own ``timeout`` would have.
    limit : float
        Seconds the work was allowed (the smaller of timeout and time to the deadline).
    exitcode : int or None
    message : str
    """

    status: str
    value: Any = None
    elapsed: float = 0.0
    cut: bool = False
    limit: float = 0.0
    exitcode: int | None = None
    message: str = ""

    @property
    def death(self) -> str:
        """``killed by signal N`` or ``exit code N`` (for ``died``)."""
        code = self.exitcode
        return f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"


@contextlib.contextmanager
def _main_not_rerun(uses_main: bool):
    """Start a child without making it run the caller's script again.

    multiprocessing has a child import the parent's ``__main__`` (the user's script) before it
    runs its target, so a script that calls ``AlgorankClassifier.fit`` without an
    ``if __name__ == "__main__":`` guard would run again in every child.  Unless the work itself
    needs ``__main__`` (a learner class defined there), it is hidden from multiprocessing's
    preparation data while the child is started.
    """
    main = sys.modules.get("__main__")
    if main is None or uses_main:
        yield
        return
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main


@contextlib.contextmanager
def _sigint_held():
    """Hold SIGINT back (delivered when this ends) while a child is being started."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _start(proc, uses_main: bool) -> None:
    # under the lock of stop_processes: once the process is ending, no thread starts a fold process (nor, through
    # multiprocessing's own ensure_running, a fresh fold server whose socket would appear in the temporary
    # directory the exit is removing)
    with _LOCK:
        if _CLOSED:
            raise ChildProcessError("the process is ending: no new fold process is started")
        _ensure_server()
        with _sigint_held(), _main_not_rerun(uses_main):
            proc.start()


def _kill(proc) -> None:
    if proc.pid is None:  # never started (interrupted or failed in start())
        return
    if proc.is_alive():
        proc.kill()
    proc.join(REAP_SECONDS)


#: Longest single wait on a pipe: the operating system's poll takes milliseconds as a 32-bit integer.
_POLL_CHUNK = 1e6


def _poll(conn, wait: float) -> bool:
    """``conn.poll(wait)`` for any wait (inf: until data comes), in chunks the operating system accepts."""
    if wait == float("inf"):
        return conn.poll(None)
    end = time.monotonic() + max(wait, 0.0)
    while True:
        left = end - time.monotonic()
        if conn.poll(max(0.0, min(left, _POLL_CHUNK))):
            return True
        if left <= _POLL_CHUNK:
            return False


def _wait_limit(timeout: float | None, deadline: float | None) -> tuple[float, bool]:
    """(seconds to wait, whether the deadline is what limits them)."""
    if deadline is None:
        return (float("inf") if timeout is None else timeout), False
    left = deadline - time.perf_counter()
    if timeout is None or left < timeout:
        return left, True
    return timeout, False


def run_with_deadline(fn: Callable, args: tuple, *, timeout: float | None, deadline: float | None = None,
                      threads: int | None = None, uses_main: bool = False) -> Outcome:
    """Run ``fn(*args)`` in a fresh child; kill it at ``timeout`` seconds or at ``deadline``.

    ``fn`` must be importable by name (a module-level function).  The child is killed, never
    waited for, also when the caller is interrupted (Ctrl-C), which is then re-raised.
    """
    ctx = fold_context()
    receive, send = ctx.Pipe(duplex=False)
    start = time.perf_counter()
    wait, cut = _wait_limit(timeout, deadline)
    proc = ctx.Process(target=_call_main, args=(send, fn, args, os.getpid(), threads), daemon=True)
    message = None
    finished = False
    try:
        _start(proc, uses_main)
        send.close()
        wait, cut = _wait_limit(timeout, deadline)  # the deadline is absolute: the server's start-up counts
        if _poll(receive, wait):
            try:
                message = receive.recv()
            except (EOFError, OSError):
                message = None
            finished = True
    finally:
        send.close()
        receive.close()
        if not finished:  # timed out, or interrupted: kill the child now
            _kill(proc)
        else:
            proc.join(REAP_SECONDS if message is None else None)
    elapsed = time.perf_counter() - start
    if not finished:
        return Outcome("timeout", elapsed=elapsed, cut=cut, limit=wait)
    if message is None:
        return Outcome("died", elapsed=elapsed, exitcode=proc.exitcode)
    if message[0] == "raised":
        return Outcome("raised", elapsed=elapsed, message=message[1])
    return Outcome("done", message[1], elapsed=elapsed)


class ChildWorker:
    """One child kept alive for consecutive calls ``fn(*state, *args)`` under a timeout and deadline.

    ``state`` (e.g. a feature matrix) is sent once, when the child starts.  A call that runs past
    its limits gets the whole child killed (its memory returned) and the next call starts a
    fresh child.  Work that needs the caller's ``__main__`` gets a child of its own.
    """

    def __init__(self, state: tuple, *, threads: int | None = None) -> None:
        self.state, self.threads = tuple(state), threads
        self.proc = None
        self.conn = None
        self.uses_main = False

    def _start(self, uses_main: bool) -> None:
        ctx = fold_context()
        mine, theirs = ctx.Pipe(duplex=True)
        proc = ctx.Process(target=_worker_main, args=(theirs, self.state, os.getpid(), self.threads), daemon=True)
        self.proc, self.conn, self.uses_main = proc, mine, uses_main
        try:
            _start(proc, uses_main)
        finally:
            theirs.close()

    def close(self) -> None:
        """Kill the child (it holds no result anyone waits for) and forget it."""
        if self.conn is not None:
            self.conn.close()
        if self.proc is not None:
            _kill(self.proc)
        self.proc = self.conn = None

    def call(self, fn: Callable, args: tuple, *, timeout: float | None, deadline: float | None = None,
             uses_main: bool = False) -> Outcome:
        """:func:`run_with_deadline` semantics, in this worker's child."""
        if self.proc is None or not self.proc.is_alive() or uses_main != self.uses_main:
            self.close()
            self._start(uses_main)
        start = time.perf_counter()
        wait, cut = _wait_limit(timeout, deadline)
        message = None
        finished = False
        try:
            self.conn.send((fn, args))
            if _poll(self.conn, wait):
                message = self.conn.recv()
                finished = True
        except (EOFError, OSError):  # the child died (out of memory, a crash in native code)
            finished = True
            message = None
        finally:
            if not finished:  # timed out, or interrupted: kill the child now
                self.close()
        elapsed = time.perf_counter() - start
        if not finished:
            return Outcome("timeout", elapsed=elapsed, cut=cut, limit=wait)
        if message is None:
            self.proc.join(REAP_SECONDS)
            code = self.proc.exitcode
            self.close()
            return Outcome("died", elapsed=elapsed, exitcode=code)
        if message[0] == "raised":
            return Outcome("raised", elapsed=elapsed, message=message[1])
        return Outcome("done", message[1], elapsed=elapsed)


class ChildStream:
    """A child running the generator ``fn(*args, **kwargs)``; :meth:`next` receives its items one by one.

    Use it as a context manager: the child is killed on leaving (also on Ctrl-C).
    """

    def __init__(self, fn: Callable, args: tuple, *, kwargs: dict | None = None, threads: int | None = None,
                 uses_main: bool = False) -> None:
        ctx = fold_context()
        self.conn, send = ctx.Pipe(duplex=False)
        self.proc = ctx.Process(target=_stream_main, args=(send, fn, args, dict(kwargs or {}), os.getpid(), threads),
                                daemon=True)
        try:
            _start(self.proc, uses_main)
        except BaseException:
            self.close()
            raise
        finally:
            send.close()

    def next(self, wait: float) -> Outcome:
        """The next item (``done``, with the item as ``value``); ``end`` when the generator is exhausted;
        ``timeout`` when none came within ``wait`` seconds (the child keeps running); ``died``; ``raised``."""
        start = time.perf_counter()
        try:
            if not _poll(self.conn, wait):
                return Outcome("timeout", elapsed=time.perf_counter() - start, limit=wait)
            kind, value = self.conn.recv()
        except (EOFError, OSError):
            self.proc.join(REAP_SECONDS)
            return Outcome("died", elapsed=time.perf_counter() - start, exitcode=self.proc.exitcode)
        elapsed = time.perf_counter() - start
        if kind == "item":
            return Outcome("done", value, elapsed=elapsed)
        if kind == "raised":
            return Outcome("raised", elapsed=elapsed, message=value)
        return Outcome("end", elapsed=elapsed)

    def close(self) -> None:
        """Kill the child (if still running) and close the pipe."""
        _kill(self.proc)
        self.conn.close()

    def __enter__(self) -> "ChildStream":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# ====================================================================== threads, interrupts, pools
def limit_threads(threads: int | None):
    """Context limiting BLAS/OpenMP threads (``threadpoolctl``); a no-op for None."""
    if threads is None:
        return contextlib.nullcontext()
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=int(threads))


class _Seen:
    hit = False


@contextlib.contextmanager
def interrupt_watch():
    """Record whether SIGINT arrives while the block runs (``with interrupt_watch() as seen: ...; seen.hit``).

    The interrupt itself is delivered as usual (``KeyboardInterrupt``); the record survives code
    that catches it.  Outside the main thread, or where SIGINT is ignored or left to the system
    (no Python handler), nothing is watched and ``hit`` stays False.
    """
    seen = _Seen()
    if threading.current_thread() is not threading.main_thread():
        yield seen
        return
    previous = signal.getsignal(signal.SIGINT)
    if not callable(previous):  # SIGINT ignored (SIG_IGN) or left to the system (SIG_DFL): nothing to watch
        yield seen
        return

    def handler(signum, frame):
        seen.hit = True
        previous(signum, frame)

    try:
        signal.signal(signal.SIGINT, handler)
    except ValueError:  # pragma: no cover - not the main interpreter
        yield seen
        return
    try:
        yield seen
    finally:
        signal.signal(signal.SIGINT, previous)


def watch_parent(parent: int) -> None:
    """Exit this process within 0.05 s of ``parent``'s death (a thread polls it); for pool workers."""
    import runpy

    runpy.run_path(str(_BOOT_DIR / "algorank_parent_watch.py"), init_globals={"PARENT": int(parent)})


def parallel(n_jobs: int | None, **kwargs):
    """A :class:`joblib.Parallel` whose loky workers die with this process (other backends unchanged).

    The workers' initializer is :func:`runpy.run_path` of a standard-library-only file, so that
    they watch their parent from their start, before they import algorank for their first task.
    """
    import runpy

    from joblib import Parallel
    from joblib._parallel_backends import LokyBackend
    from joblib.parallel import get_active_backend

    _start_reaper()
    backend, _ = get_active_backend()
    extra = {}
    if type(backend) is LokyBackend:
        extra = {"initializer": runpy.run_path,
                 "initargs": (str(_BOOT_DIR / "algorank_parent_watch.py"), {"PARENT": os.getpid()})}
    return Parallel(n_jobs=n_jobs, **kwargs, **extra)


#: Executors handed out by :func:`watched_executor` (ended by :func:`stop_processes`).
_EXECUTORS: list = []


def watched_executor(n_jobs: int, *, nice: int = 0):
    """joblib's reusable loky executor with ``n_jobs`` workers that die with this process (as in :func:`parallel`),
    their priority lowered by ``nice`` (``os.nice``; 0: unchanged).

    The workers ignore Ctrl-C (SIGINT): this process handles it and stops them.  Submit tasks inside
    :func:`sigint_blocked` (workers start, or restart, at a submission), so that a Ctrl-C while a
    worker starts, before it ignores SIGINT, stays pending in it: never a ``KeyboardInterrupt``
    traceback of a worker.

    The workers are fresh interpreters (loky's own start method), never forks of the fold server: a
    loky worker forked from a fold server that had run its warm-up hung in a gradient-boosting test
    (one run in two on ``bridges.version1``), and loky does not support forked workers.
    """
    import runpy

    from joblib.externals.loky import get_reusable_executor

    _start_reaper()
    with contextlib.suppress(Exception):  # started now, outside the block: starting it unblocks SIGINT (Python 3.11)
        from multiprocessing import resource_tracker

        resource_tracker.ensure_running()
    watch = {"PARENT": os.getpid(), "QUIET": 1, **({"NICE": int(nice)} if nice else {})}
    with sigint_blocked():  # workers it starts now begin with a Ctrl-C pending, which they then ignore
        executor = get_reusable_executor(max_workers=n_jobs, initializer=runpy.run_path,
                                         initargs=(str(_BOOT_DIR / "algorank_parent_watch.py"), watch))
    if not any(e is executor for e in _EXECUTORS):
        _EXECUTORS.append(executor)
    return executor


def stop_processes() -> None:
    """Stop the processes this one started to run learner code, now: the workers of :func:`watched_executor`
    (killed, so that none is left half-started) and the fold server (:func:`stop_fold_server`).

    For a command about to end with :func:`os._exit`: a worker pool or fold server still warming up
    would otherwise hold the command's output pipes open, or warn about leaked semaphores.

    A thread may hold the lock that guards starting fold processes while it waits for a fold server still
    starting (a busy machine, or tests running in several threads): this waits for the lock at most
    :data:`STOP_LOCK_WAIT` seconds, then kills the fold server without it (which ends that wait), so that the
    command ends within its budget.
    """
    global _CLOSED
    locked = _LOCK.acquire(timeout=STOP_LOCK_WAIT)
    try:
        _CLOSED = True  # a thread that gets the lock later starts no fold process
        while _EXECUTORS:
            with contextlib.suppress(Exception):
                _EXECUTORS.pop().shutdown(wait=False, kill_workers=True)
        if locked:
            stop_fold_server()
        else:
            _kill_fold_servers()
    finally:
        if locked:
            _LOCK.release()


#: Seconds :func:`stop_processes` waits for a thread that is starting a fold process.
STOP_LOCK_WAIT = 0.1


def _kill_fold_servers() -> None:
    """SIGKILL the fold server (and a forked one), without the lock and without ``multiprocessing``'s own: for a
    process about to end (:func:`stop_processes`)."""
    from multiprocessing import forkserver

    for pid in {getattr(forkserver._forkserver, "_forkserver_pid", None), _FORKED_PID}:
        if pid is not None and pid != os.getpid():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
