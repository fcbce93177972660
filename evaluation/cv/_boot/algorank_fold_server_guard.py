"""First module the fold server imports: it dies with its caller, even while it is still starting.

The fold server (a ``multiprocessing`` fork server) spends one to two seconds importing its
preload list (numpy, pandas, scikit-learn, algorank) before it starts watching its caller.  A
caller that dies in that window (SIGKILL, an early error that ends the process) would leave it
running until the imports are done.  This module is imported first, from a plain folder put on
the server's ``PYTHONPATH`` (importing anything under ``algorank`` would import the whole package
first).  It

* ignores SIGINT: a terminal Ctrl-C belongs to the caller, which stops the server itself;
* exits at once if the caller is already gone;
* polls the caller every 50 ms from a thread until :func:`stop` is called at the end of the
  preload list, after which the server's own watch of its caller takes over;
* makes the server's exit immediate (``os._exit`` at exit: no teardown of numpy, pandas and
  scikit-learn, which takes seconds on a loaded machine).  Fold processes never run exit handlers.

It must not import anything beyond the standard library.
"""

import atexit
import os
import signal
import threading

__all__ = ["stop", "CALLER_ENV"]

#: Environment variable carrying the caller's pid into the server.
CALLER_ENV = "ALGORANK_FOLD_SERVER_CALLER"

_stopped = threading.Event()


def _caller() -> int:
    try:
        return int(os.environ.get(CALLER_ENV, "0"))
    except ValueError:
        return 0


def _watch(caller: int) -> None:
    while not _stopped.wait(0.05):
        if os.getppid() != caller:
            os._exit(0)


def stop() -> None:
    """End the watch (the server's main loop now watches its caller)."""
    _stopped.set()


signal.signal(signal.SIGINT, signal.SIG_IGN)
atexit.register(os._exit, 0)
_CALLER = _caller()
if _CALLER:
    if os.getppid() != _CALLER:
        os._exit(0)
    threading.Thread(target=_watch, args=(_CALLER,), name="algorank-caller-watch", daemon=True).start()
