"""A command's reaper: when the command ends, however it ends (SIGKILL included), its leftover processes are killed.

Run as ``python -I -S algorank_reaper.py COMMAND_PID TOKEN`` by the command itself
(:func:`algorank.evaluation.cv.children.end_with_this_process`), before it starts any process
that runs learner code.  The command put ``ALGORANK_RUN_TOKEN=TOKEN`` (a fresh random token) in
its environment first, so every process it starts, directly or not, carries the token in the
environment it was started with (``/proc/PID/environ``): loky workers and their resource
tracker, the fold server and its children, whatever a learner starts.  The reaper itself is
started without it.

It waits for the command's end (a pidfd, or polling its parent every 20 ms where there is none),
then kills every process that carries the exact token, again and again until none is left.  A
process is recognised by the token alone, and only processes of the same user are readable, so
nothing that is not the command's is ever killed; a pidfd held across the check and the kill
makes a reused pid harmless.  Resource trackers (they unlink the shared semaphores once every
worker is gone) get a short grace first.  This needs no cooperation from the processes: a loky
worker still importing, before any of its own code runs, is killed like any other.

Linux only (``/proc``); the command does not start it elsewhere.  Standard library only, no
site-packages (``-S``), so that it runs within milliseconds of its start.
"""

import os
import select
import signal
import sys
import time

__all__: list = []

#: Environment variable carrying the command's token into every process it starts.
TOKEN_ENV = "ALGORANK_RUN_TOKEN"
#: Seconds a resource tracker gets to clean up by itself once the workers are gone.
TRACKER_GRACE = 0.25
#: Seconds without finding a process that end the sweeping.
QUIET = 0.1
#: Seconds of sweeping at most (a process that keeps forking cannot keep the reaper forever).
SWEEP_LIMIT = 10.0


def _wait_for_end(command: int) -> None:
    """Return once ``command`` (this process's parent at its start) has ended."""
    fd = None
    try:
        fd = os.pidfd_open(command)
    except (AttributeError, OSError):
        pass
    if os.getppid() != command:  # already gone (the pidfd, if any, may name a reused pid)
        return
    if fd is not None:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        while not poller.poll():
            pass
        return
    while os.getppid() == command:  # pragma: no cover - kernels before 5.3
        time.sleep(0.02)


def _carriers(needle: bytes):
    """(pidfd or None, pid, is a resource tracker) of every live process whose start environment holds ``needle``."""
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        pid = int(entry)
        fd = None
        try:
            fd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            pass
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                ours = needle in f.read().split(b"\0")
            if ours:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    tracker = b"resource_tracker" in f.read()
        except OSError:  # gone, a zombie, or another user's
            ours = False
        if ours:
            yield fd, pid, tracker
        elif fd is not None:
            os.close(fd)


def _kill(fd, pid: int) -> None:
    try:
        if fd is not None:
            signal.pidfd_send_signal(fd, signal.SIGKILL)
        else:  # pragma: no cover - kernels before 5.3
            os.kill(pid, signal.SIGKILL)
    except OSError:
        pass


def sweep(token: str) -> bool:
    """Kill every process carrying ``token`` until none is found for :data:`QUIET` seconds; whether a resource tracker
    was killed.  (A process in the middle of its ``exec`` shows no environment for an instant: one empty sweep is not
    enough.)"""
    needle = f"{TOKEN_ENV}={token}".encode()
    start = time.monotonic()
    last_found = time.monotonic()
    killed_tracker = False
    while time.monotonic() - last_found < QUIET and time.monotonic() - start < SWEEP_LIMIT:
        found = False
        grace = time.monotonic() - start < TRACKER_GRACE
        for fd, pid, tracker in _carriers(needle):
            found = True
            if not (tracker and grace):
                _kill(fd, pid)
                killed_tracker = killed_tracker or tracker
            if fd is not None:
                os.close(fd)
        if found:
            last_found = time.monotonic()
        time.sleep(0.01 if found else 0.02)
    return killed_tracker


def remove_leftovers(command: int) -> None:
    """Remove what a killed loky resource tracker would have removed: the command's semaphores and joblib's
    memory-mapping folders, both named after the command's pid (``loky-PID-*``, ``joblib_memmapping_folder_PID_*``).

    A tracker is killed only when it is still starting (importing joblib) past :data:`TRACKER_GRACE`, that is
    before it could read what the command registered with it.
    """
    import glob
    import shutil
    import tempfile

    for path in glob.glob(f"/dev/shm/sem.loky-{command}-*"):
        try:
            os.unlink(path)
        except OSError:
            pass
    roots = {"/dev/shm", tempfile.gettempdir(), os.environ.get("JOBLIB_TEMP_FOLDER") or "/dev/shm"}
    for root in roots:
        for path in glob.glob(os.path.join(glob.escape(root), f"joblib_memmapping_folder_{command}_*")):
            shutil.rmtree(path, ignore_errors=True)


def main(argv) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C to the command's group is the command's
    command, token = int(argv[1]), argv[2]
    if len(token) < 16:  # never sweep for a short (guessable) token
        return
    _wait_for_end(command)
    if sweep(token):
        remove_leftovers(command)


if __name__ == "__main__":
    try:
        main(sys.argv)
    finally:
        os._exit(0)
