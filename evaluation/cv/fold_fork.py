"""The fold server as a fork of the command: no fresh interpreter importing scikit-learn.

The fold server (:mod:`algorank.evaluation.cv.children`) is normally ``multiprocessing``'s fork
server: a fresh interpreter that imports numpy, pandas, scikit-learn and algorank and fits every
portfolio learner once, about 1.5 CPU seconds, before it forks its first fold process.  A command
process (the command line) has imported most of that already.  :func:`fork_fold_server` forks it,
right after its imports, into a fold server that waits, using no CPU, until a timed fold first
needs it, imports the rest and serves with ``multiprocessing``'s own fork-server loop.  (Worker
pools are not started by it: see :func:`~algorank.evaluation.cv.children.watched_executor`.)
"""

from __future__ import annotations

import atexit
import importlib
import logging
import os
import signal
import sys
import threading

from algorank.evaluation.cv import children

__all__ = ["fork_fold_server"]

logger = logging.getLogger(__name__)

def fork_fold_server() -> bool:
    """Make the fold server a fork of this process, now, idle until its first use (best effort; Linux).

    A fold server started by :func:`~algorank.evaluation.cv.children.start_fold_server` is a fresh
    interpreter that imports numpy, pandas, scikit-learn and algorank, 1.5 CPU seconds that on a
    machine with few cores slow down the tests running meanwhile.  A command process has imported
    most of that already; this forks it instead (a few milliseconds), and the fork waits, using no
    CPU, until a timed fold first needs it
    (:func:`~algorank.evaluation.cv.children.release_forked_server`); it then
    imports the rest of the fold server's preload list and runs the warm-up
    (:data:`~algorank.evaluation.cv.children.PRELOAD`, about 0.5 CPU seconds), and serves with
    ``multiprocessing``'s own fork-server loop.

    Fork safety.  Forking a process is safe when no other thread of it can hold a lock the child
    needs and no OpenMP thread pool exists in it (a fork of a caller that had used OpenMP
    deadlocked scikit-learn's kNN).  So this forks only

    * in a command process (:func:`~algorank.evaluation.cv.children.end_with_this_process` was
      called: the command line), which calls it right after its imports, before it has run any
      learner, landmarker or other computation: no OpenMP parallel region has run yet;
    * while this process has no Python thread but the main one (otherwise it returns False and the
      fold server starts as a fresh interpreter, as before).

    The only other threads then are OpenBLAS's idle workers (and jemalloc's), which stop and restart
    around a fork (their ``pthread_atfork`` handlers).  ``tests/test_fold_server_fork.py`` runs
    OpenMP learners in timed folds after this process has used OpenMP itself, with the same scores
    as in-process folds.

    Lifetimes.  The fork is this process's child and dies with it (``PR_SET_PDEATHSIG``, SIGKILL,
    set before it does anything), also before its first use; its fold processes die with it as those
    of a fresh fold server do (:func:`~algorank.evaluation.cv.children.detach_from_caller`).  It does
    not carry the command's reaper token in the environment it was started with (a fork is not a new
    program): the parent-death signals are what end it and its children.

    Returns
    -------
    bool
        Whether the fold server is now a fork of this process.
    """
    if children._TOKEN is None or not sys.platform.startswith("linux") or threading.active_count() > 1:
        return False
    try:
        import socket
        from multiprocessing import connection, forkserver, util

        importlib.import_module("algorank.evaluation.cv.evaluator")  # what every fold needs, before the fork

        server = forkserver._forkserver
        with children._LOCK:
            if getattr(server, "_forkserver_pid", None) is not None:
                return False
            children.fold_context()
            # No resource tracker is started here (multiprocessing's fork server starts one first): each fold
            # process gets the caller's tracker with its request, started at the first one.  A command that
            # ends early (bad input) then leaves no tracker behind, a fresh interpreter that, still starting
            # on a busy machine, outlived the command.
            listener = socket.socket(socket.AF_UNIX)
            address = connection.arbitrary_address("AF_UNIX")
            listener.bind(address)
            if not util.is_abstract_socket_namespace(address):
                os.chmod(address, 0o600)
            listener.listen()
            alive_r, alive_w = os.pipe()
            go_r, go_w = os.pipe()
            parent = os.getpid()
            pid = os.fork()
            if pid == 0:  # the fold server
                _forked_server_main(parent, listener, alive_r, alive_w, go_r, go_w)
            os.close(alive_r)
            os.close(go_r)
            listener.close()
            server._forkserver_address = address
            server._forkserver_alive_fd = alive_w
            server._forkserver_pid = pid
            children._GO, children._FORKED_PID = go_w, pid
            if children._STARTED_PID is None:
                atexit.register(children.stop_fold_server)
            children._STARTED_PID = pid
        return True
    except Exception:  # pragma: no cover - the fold server then starts as a fresh interpreter
        logger.debug("could not fork the fold server", exc_info=True)
        return False


def _forked_server_main(parent: int, listener, alive_r: int, alive_w: int, go_r: int, go_w: int) -> None:
    """The forked fold server: die with ``parent``, wait for the go, preload, serve; never return."""
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal Ctrl-C belongs to the command, which stops us
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except Exception:  # pragma: no cover - not Linux
            pass
        if os.getppid() != parent:  # the command ended before the line above
            os._exit(0)
        os.close(alive_w)
        os.close(go_w)
        if os.read(go_r, 1) != b"g":  # the command ended (or stopped the server) before needing it
            os._exit(0)
        os.close(go_r)
        from multiprocessing import forkserver

        forkserver.main(listener.fileno(), alive_r, [m for m in children.PRELOAD if m != children._GUARD])
    except SystemExit:
        pass
    except BaseException:  # pragma: no cover - nothing to report to: the caller's children say so
        code = 1
    finally:
        os._exit(code)
