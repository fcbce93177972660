"""Shared pytest fixtures."""

from __future__ import annotations

import gc
import os
import signal
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # tests run from a checkout without installing too
    sys.path.insert(0, str(ROOT))

os.environ.setdefault("MPLBACKEND", "Agg")

# A runner started from a non-interactive shell in the background inherits SIGINT *ignored*, and so
# would every command the tests start; the tests of interrupts need Ctrl-C to behave as in a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_finish(session):
    """What the collected test modules imported (numpy, pandas, scipy, scikit-learn, ...) lives until the end:
    take it out of the garbage collector's reach, so that each full collection during the tests scans only what
    the tests made.  Nothing a test sees changes; full collections got ~6x cheaper."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(700, 10, 100)  # and a full collection a tenth as often (what survives is mostly long-lived)


def _shared() -> Path | None:
    env = os.environ.get("ALGORANK_SHARED")
    candidates = [Path(env)] if env else []
    candidates.append(ROOT.parent / "shared")
    for c in candidates:
        if (c / "datasets" / "MANIFEST.csv").is_file():
            return c
    return None


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """Path of ../shared (datasets, fixtures); skips the test when it is absent."""
    path = _shared()
    if path is None:
        pytest.skip("../shared is absent (a fresh user clone): test needs the shared datasets/fixtures")
    return path


@pytest.fixture(scope="session")
def snapshot():
    """The embedded LCDB snapshot (read-only)."""
    from algorank.metadata.snapshot import load_snapshot

    return load_snapshot()
