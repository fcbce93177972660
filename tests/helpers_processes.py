"""Finding the processes a test started: each run gets a marker in its environment."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

__all__ = ["marked", "loky_workers", "marker_env", "gone", "kill_marked", "kill_and_wait", "stop_run", "GONE_WITHIN"]

#: Seconds a test waits for the processes of a run to disappear.
GONE_WITHIN = 5.0
_TESTS = Path(__file__).resolve().parent


def marked(marker: str) -> list[int]:
    """Pids of the live (not zombie) processes whose environment holds ``ALGORANK_TEST_MARKER=marker``."""
    found = []
    needle = f"ALGORANK_TEST_MARKER={marker}".encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if needle in f.read():
                    with open(f"/proc/{entry}/stat", "rb") as f:
                        if f.read().rpartition(b")")[2].split()[0] != b"Z":  # zombies are gone already
                            found.append(int(entry))
        except OSError:
            continue
    return found


def loky_workers(marker: str) -> list[int]:
    """The marked processes that are joblib's loky workers (by their command line)."""
    found = []
    for pid in marked(marker):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"popen_loky_posix" in f.read():
                    found.append(pid)
        except OSError:
            continue
    return found


def marker_env(marker: str) -> dict:
    """This environment with ``ALGORANK_TEST_MARKER=marker``, Matplotlib's Agg backend and ``tests/`` on the
    path (for the helper learners)."""
    return dict(os.environ, ALGORANK_TEST_MARKER=marker, MPLBACKEND="Agg",
                PYTHONPATH=os.pathsep.join([str(_TESTS), os.environ.get("PYTHONPATH", "")]))


def gone(marker: str, within: float = GONE_WITHIN) -> list[int]:
    """Poll until no process carries ``marker``; the pids still there after ``within`` seconds."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        if not marked(marker):
            return []
        time.sleep(0.05)
    return marked(marker)


def kill_marked(marker: str) -> None:
    """SIGKILL every process carrying ``marker``: never leave the machine dirty, whatever a test asserted."""
    for pid in marked(marker):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def kill_and_wait(proc, marker: str) -> list[int]:
    """SIGKILL ``proc``, reap it, and return the processes carrying ``marker`` still there after
    :data:`GONE_WITHIN` seconds (a test asserts it is empty)."""
    proc.kill()
    proc.wait(timeout=10)
    return gone(marker)


def stop_run(proc, marker: str) -> None:
    """For a ``finally``: kill ``proc`` if it still runs, and every process carrying ``marker``."""
    if proc.poll() is None:
        proc.kill()
    kill_marked(marker)
