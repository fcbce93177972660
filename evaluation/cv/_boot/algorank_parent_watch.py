"""Run in a pool worker at its start (``runpy.run_path``): the worker exits within 0.05 s of its parent's death.

joblib's loky workers outlive a parent killed with SIGKILL (for minutes, until their idle
timeout).  This file is the workers' initializer, run with ``init_globals={"PARENT": pid}`` (and
``"NICE": n`` to lower the worker's priority by ``n``, ``"QUIET": 1`` to ignore Ctrl-C: the command
handles it and stops the worker, which would otherwise print a ``KeyboardInterrupt`` traceback;
the command starts such workers with SIGINT blocked, so that it is pending, never handled, until
the line below ignores it).  It
uses the standard library only, so that it runs before the worker imports anything heavy
(importing any ``algorank`` module would import the whole package first, a second or more on a
loaded machine, during which the worker would not be watching).
"""

import os
import signal
import threading
import time

__all__: list = []


def _watch(parent: int) -> None:
    while True:
        time.sleep(0.05)
        if os.getppid() != parent:
            os._exit(1)


if globals().get("QUIET"):
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # also for the processes this worker starts
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # a pending Ctrl-C is dropped
_NICE = int(globals().get("NICE") or 0)
if _NICE > 0:  # a lower priority: the worker uses CPU its parent's own work leaves idle
    try:
        os.nice(_NICE)
    except OSError:  # pragma: no cover - not allowed here: the default priority
        pass
_PARENT = int(globals().get("PARENT") or 0)
if _PARENT:
    if os.getppid() != _PARENT:
        os._exit(1)
    threading.Thread(target=_watch, args=(_PARENT,), name="algorank-parent-watch", daemon=True).start()
