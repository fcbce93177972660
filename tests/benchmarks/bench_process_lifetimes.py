"""Measure how fast algorank's processes stop (run on demand; the unit tests only check reasons and margins).

Three figures, medians over ``--repeats`` runs:

* ``deadline_overshoot_s``: an evaluation with a 60 s fold timeout and a deadline 1 s away; the
  seconds it returns after the deadline (the fold child is killed at the deadline).  The fold
  server is started first: a deadline that passes while the server is still importing (one to
  several seconds on a loaded machine) is only noticed once it has started.
* ``sigkill_workers_gone_s``: ``algorank evaluate --n-jobs 2`` killed with SIGKILL while its two
  loky workers run 60 s fits; the seconds until no process of the command is left.
* ``sigkill_starting_server_gone_s``: a process that starts the fold server and is killed at once,
  while the server is still importing; the seconds until the server is gone.
* ``sigkill_workers_at_<offset>_gone_s``: ``algorank evaluate --n-jobs 2`` killed with SIGKILL
  ``offset`` seconds after its first loky worker process appeared (0.0 to 1.0 s: the workers are
  still importing, before any code of theirs can watch the command); the seconds until no process
  of the command is left.  ``--offsets`` chooses the offsets.

Usage::

    python tests/benchmarks/bench_process_lifetimes.py [--repeats 5] [--offsets 0 0.1 0.2 0.3 0.5 0.75 1]
        [--only NAME ...]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
sys.path.insert(0, str(TESTS))

SLOW = 'helpers_estimators.SlowClassifier{"delay": 60}'


from helpers_processes import loky_workers as _loky_workers, marked as _marked  # noqa: E402  (tests/ is on the path)


def _env(marker: str) -> dict:
    return dict(os.environ, ALGORANK_TEST_MARKER=marker,
                PYTHONPATH=os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]))


def _gone_after_kill(proc, marker: str) -> float:
    proc.kill()
    proc.wait()
    t0 = time.monotonic()
    while _marked(marker) and time.monotonic() - t0 < 60:
        time.sleep(0.01)
    return time.monotonic() - t0


def deadline_overshoot() -> float:
    from algorank.evaluation.cv.datasets import load_dataset
    from algorank.evaluation.cv.evaluator import Evaluator

    from algorank.evaluation.cv.children import start_fold_server

    start_fold_server()
    ev = Evaluator(cv=3, repeats=1, timeout=60.0, progress=False, allow_modules=["helpers_estimators"])
    ev.evaluate(load_dataset("sklearn:iris"), ["lda"])  # wait until the server has started
    deadline = time.perf_counter() + 1.0
    ev.evaluate(load_dataset("sklearn:iris"), [SLOW], deadline=deadline)
    return time.perf_counter() - deadline


def sigkill_workers() -> float:
    marker = uuid.uuid4().hex
    proc = subprocess.Popen([sys.executable, "-m", "algorank", "evaluate", "sklearn:iris", "--learners", SLOW, "lda",
                             "--allow-module", "helpers_estimators", "--n-jobs", "2", "--cv", "3", "--no-store",
                             "--quiet"], env=_env(marker), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while len([p for p in _marked(marker) if p != proc.pid]) < 2:
        time.sleep(0.05)
    time.sleep(2.0)  # the workers run their fits
    return _gone_after_kill(proc, marker)


def sigkill_starting_workers(offset: float) -> float:
    marker = uuid.uuid4().hex
    proc = subprocess.Popen([sys.executable, "-m", "algorank", "evaluate", "sklearn:iris", "--learners", SLOW, "lda",
                             "--allow-module", "helpers_estimators", "--n-jobs", "2", "--cv", "3", "--no-store",
                             "--quiet"], env=_env(marker), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while not _loky_workers(marker):
        if proc.poll() is not None:
            raise RuntimeError("the command ended before its workers started")
        time.sleep(0.005)
    time.sleep(offset)
    return _gone_after_kill(proc, marker)


def sigkill_starting_server() -> float:
    marker = uuid.uuid4().hex
    code = ("import time\nfrom algorank.evaluation.cv.children import start_fold_server\nstart_fold_server()\n"
            "print('started', flush=True)\ntime.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], env=_env(marker), stdout=subprocess.PIPE)
    proc.stdout.readline()
    return _gone_after_kill(proc, marker)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--offsets", type=float, nargs="*", default=[0.0, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0])
    ap.add_argument("--only", nargs="*", default=None, help="figures to measure (name prefixes)")
    args = ap.parse_args(argv)
    figures = [("deadline_overshoot_s", deadline_overshoot), ("sigkill_workers_gone_s", sigkill_workers),
               ("sigkill_starting_server_gone_s", sigkill_starting_server)]
    figures += [(f"sigkill_workers_at_{o:g}s_gone_s", lambda o=o: sigkill_starting_workers(o)) for o in args.offsets]
    for name, fn in figures:
        if args.only is not None and not any(name.startswith(p) for p in args.only):
            continue
        values = [fn() for _ in range(args.repeats)]
        print(f"{name}: median {statistics.median(values):.3f} s (min {min(values):.3f}, max {max(values):.3f}, "
              f"n={len(values)})", flush=True)


if __name__ == "__main__":
    main()
