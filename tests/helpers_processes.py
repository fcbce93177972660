"""Finding the processes a test started: each run gets a marker in its environment."""

from __future__ import annotations

import os

__all__ = ["marked"]


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
