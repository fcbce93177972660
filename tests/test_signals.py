"""No orphans, clean Ctrl-C: real signals sent to real ``algorank`` processes.

Every process started here carries a unique marker in its environment, which the
forkserver and the fold processes inherit; ``/proc/<pid>/environ`` then tells which
processes belong to the run, however they were re-parented.

* SIGKILL of ``evaluate --timeout`` while a fold child is fitting: within 2 s no process of
  the run is left (the fold child dies with its parent).
* SIGINT while a timed fold is running (``evaluate``, ``recommend``) or during the
  benchmark loop: exit code 130 within 1 s, no traceback, nothing left behind.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

TESTS = Path(__file__).resolve().parent
SLOW = 'helpers_estimators.SlowClassifier{"delay": 60}'
#: Seconds allowed for the processes of a run to disappear: they go within 0.5 s of their caller
#: (tests/benchmarks/bench_process_lifetimes.py), plus a margin for a loaded 2-core machine.
GONE_WITHIN = 5.0


from helpers_estimators import slow_meta  # noqa: E402  (tests/ is on the path)
from helpers_processes import marked as _marked  # noqa: E402


def _ppid(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as f:
        return int(f.read().rpartition(b")")[2].split()[1])


def _start(args, tmp_path: Path, *, stderr=None):
    marker = uuid.uuid4().hex
    env = dict(os.environ, ALGORANK_TEST_MARKER=marker, MPLBACKEND="Agg",
               PYTHONPATH=os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]))
    out = open(tmp_path / "stdout.txt", "wb")
    err = open(tmp_path / "stderr.txt", "wb") if stderr is None else stderr
    proc = subprocess.Popen([sys.executable, "-m", "algorank", *args], env=env, stdout=out, stderr=err,
                            cwd=tmp_path)
    return proc, marker


def _wait_for_fold_child(proc, marker: str, timeout: float = 90.0) -> int:
    """Pid of a fold process (a child of the forkserver, itself a child of ``proc``)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        assert proc.poll() is None, "the command ended before its fold process started"
        for pid in _marked(marker):
            try:
                if pid != proc.pid and _ppid(_ppid(pid)) == proc.pid:
                    return pid
            except OSError:
                continue
        time.sleep(0.05)
    raise AssertionError("no fold process started")


def _none_left(marker: str, within: float) -> list[int]:
    end = time.monotonic() + within
    while time.monotonic() < end:
        left = _marked(marker)
        if not left:
            return []
        time.sleep(0.05)
    return _marked(marker)


def _interrupt(proc) -> float:
    """Send SIGINT; return the seconds until the process exited."""
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    return time.monotonic() - t0


def _evaluate_args(tmp_path):
    return ["evaluate", "sklearn:iris", "--learners", SLOW, "--allow-module", "helpers_estimators",
            "--timeout", "30", "--cv", "3", "--store", str(tmp_path / "store.sqlite"), "--quiet"]


def _slow_meta(tmp_path) -> Path:
    return slow_meta(tmp_path, SLOW)


def test_sigkill_of_evaluate_leaves_no_fold_process(tmp_path):
    proc, marker = _start(_evaluate_args(tmp_path), tmp_path)
    try:
        child = _wait_for_fold_child(proc, marker)
        assert child in _marked(marker)
        proc.kill()
        proc.wait(timeout=10)
        left = _none_left(marker, within=GONE_WITHIN)
        assert left == [], f"left behind: {left}"
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in _marked(marker):  # never leave the machine dirty, whatever the assertion said
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("command", ["evaluate", "recommend"])
def test_sigint_during_a_timed_fold_exits_130_at_once(tmp_path, command):
    if command == "evaluate":
        args = _evaluate_args(tmp_path)
    else:
        args = ["recommend", "sklearn:iris", "--meta", str(_slow_meta(tmp_path)), "--allow-module",
                "helpers_estimators", "--budget", "120", "--cv", "3", "--json"]
    proc, marker = _start(args, tmp_path)
    try:
        _wait_for_fold_child(proc, marker)
        seconds = _interrupt(proc)
        stderr = (tmp_path / "stderr.txt").read_text()
        assert proc.returncode == 130, stderr
        assert seconds < 15, seconds  # at once, not after the 60 s fit (a margin for a loaded machine)
        assert "Traceback" not in stderr, stderr
        assert _none_left(marker, within=GONE_WITHIN) == []
        if command == "recommend":  # the partial results are printed: the interrupted test is not one of them
            d = json.loads((tmp_path / "stdout.txt").read_text())
            assert d["stop_reason"] == "interrupted" and d["trace"] == []
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in _marked(marker):
            os.kill(pid, signal.SIGKILL)


def test_sigint_during_the_benchmark_exits_130_at_once(tmp_path):
    proc, marker = _start(["--verbose", "benchmark", "--strategy", "ar:p=0", "--strategy", "lt:h=inf",
                           "--meta", "lcdb"], tmp_path)
    try:
        end = time.monotonic() + 90
        while "benchmarking lt" not in (tmp_path / "stderr.txt").read_text():  # inside the slow strategy
            assert proc.poll() is None and time.monotonic() < end, (tmp_path / "stderr.txt").read_text()
            time.sleep(0.02)
        seconds = _interrupt(proc)
        stderr = (tmp_path / "stderr.txt").read_text()
        assert proc.returncode == 130, stderr[-2000:]
        assert seconds < 15, seconds  # the benchmark stops, it does not run on (a margin for a loaded machine)
        assert "Traceback" not in stderr and stderr.rstrip().endswith("interrupted"), stderr[-2000:]
        assert (tmp_path / "stdout.txt").read_text() == ""  # no result from a benchmark cut short
    finally:
        if proc.poll() is None:
            proc.kill()
