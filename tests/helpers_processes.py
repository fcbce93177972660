"""Finding the processes a test started: each run gets a marker in its environment."""

from __future__ import annotations

import os

__all__ = ["marked", "loky_workers"]


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
