"""The fold server as a fork of the command (``fold_fork.fork_fold_server``): safe, the same results, no orphans.

* In a command process that has run nothing yet, the fold server is a fork of it (its child),
  idle until first needed; timed folds of OpenMP learners (kNN, histogram gradient boosting) then
  work although the command has used OpenMP itself meanwhile (a fork *after* that deadlocked
  kNN), and give the same scores as in-process folds.
* It is not forked outside a command (a library user's program), nor while another Python
  thread runs: the fold server then starts as a fresh interpreter.
* SIGKILL of the command ends the forked server, idle or serving a fold, and the fold process.
* ``recommend`` from the command line forks it and leaves nothing behind.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid

import pytest

from helpers_processes import (gone as _gone, kill_and_wait, kill_marked as _cleanup, marked,
                               marker_env as _env, stop_run)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork server, /proc")


def _run_script(script: str, marker: str, cwd, *, timeout: float) -> str:
    """Run ``python -c script`` as a marked process; its stdout (it must exit 0)."""
    out = subprocess.run([sys.executable, "-c", script], env=_env(marker), capture_output=True, text=True,
                         timeout=timeout, cwd=cwd)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def _ppid(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as f:
        return int(f.read().rpartition(b")")[2].split()[1])


def _children(parent: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if _ppid(int(entry)) == parent:
                    out.append(int(entry))
            except (OSError, ValueError, IndexError):
                continue
    return out


SAME_SCORES = r'''
import json, os
from algorank.evaluation.cv import children, fold_fork
children.end_with_this_process()
forked = fold_fork.fork_fold_server()
server = children.forked_pid()
from sklearn.datasets import make_classification
from sklearn.neighbors import KNeighborsClassifier
X, y = make_classification(2000, 10, random_state=0)
KNeighborsClassifier().fit(X, y).predict(X)  # OpenMP used here, after the fork
from algorank.evaluation.cv.datasets import as_dataset
from algorank.evaluation.cv.evaluator import Evaluator
data = as_dataset("sklearn:breast_cancer")
learners = ["sklearn.neighbors.KNeighborsClassifier", "sklearn.ensemble.HistGradientBoostingClassifier",
            "sklearn.linear_model.LogisticRegression"]
timed = Evaluator(cv=5, timeout=60, progress=False).evaluate(data, learners).summary
here = Evaluator(cv=5, progress=False).evaluate(data, learners).summary
with open(f"/proc/{server}/stat") as f:
    server_parent = int(f.read().rpartition(")")[2].split()[1])
print(json.dumps({"forked": forked, "server_parent": server_parent, "me": os.getpid(),
                  "timed": timed["accuracy_mean"].tolist(), "status": timed["status"].tolist(),
                  "here": here["accuracy_mean"].tolist()}))
'''


def test_forked_fold_server_runs_openmp_learners_with_the_same_scores(tmp_path):
    marker = uuid.uuid4().hex
    try:
        d = json.loads(_run_script(SAME_SCORES, marker, tmp_path, timeout=300).strip().splitlines()[-1])
        assert d["forked"] is True
        assert d["server_parent"] == d["me"]  # a fork of the command itself, not a fresh interpreter
        assert d["status"] == ["ok", "ok", "ok"]
        assert d["timed"] == pytest.approx(d["here"], abs=1e-12)
        assert 0.9 < min(d["here"])  # real scores on breast_cancer
        assert _gone(marker) == []
    finally:
        _cleanup(marker)


NOT_FORKED = r'''
import threading, time
from algorank.evaluation.cv import children, fold_fork
print(fold_fork.fork_fold_server())          # not a command: no fork
children.end_with_this_process()
stop = threading.Event()
t = threading.Thread(target=stop.wait); t.start()
print(fold_fork.fork_fold_server())          # another Python thread runs: no fork
stop.set(); t.join()
print(fold_fork.fork_fold_server())          # a command, one thread: fork
print(fold_fork.fork_fold_server())          # already there: nothing more
'''


def test_no_fork_outside_a_command_or_beside_another_thread(tmp_path):
    marker = uuid.uuid4().hex
    try:
        assert _run_script(NOT_FORKED, marker, tmp_path, timeout=120).split() == ["False", "False", "True", "False"]
        assert _gone(marker) == []
    finally:
        _cleanup(marker)


KILLED = r'''
import sys, time
from algorank.evaluation.cv import children, fold_fork
children.end_with_this_process()
assert fold_fork.fork_fold_server()
print(children.forked_pid(), flush=True)
if sys.argv[1] == "serving":
    from algorank.evaluation.cv.datasets import as_dataset
    from algorank.evaluation.cv.evaluator import Evaluator
    Evaluator(cv=3, timeout=120, progress=False, allow_modules=["helpers_estimators"]).evaluate(
        as_dataset("sklearn:iris"), ['helpers_estimators.SlowClassifier{"delay": 60}'])
time.sleep(120)
'''


@pytest.mark.parametrize("state", ["idle", "serving"])
def test_sigkill_of_the_command_ends_the_forked_server_and_its_folds(tmp_path, state):
    marker = uuid.uuid4().hex
    proc = subprocess.Popen([sys.executable, "-c", KILLED, state], env=_env(marker), stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, cwd=tmp_path)
    try:
        server = int(proc.stdout.readline())
        assert _ppid(server) == proc.pid
        if state == "serving":  # wait for the fold process (a child of the server)
            end = time.monotonic() + 120
            while not _children(server):
                assert proc.poll() is None and time.monotonic() < end, "no fold process"
                time.sleep(0.05)
        assert server in marked(marker)
        assert kill_and_wait(proc, marker) == []
    finally:
        stop_run(proc, marker)


def test_recommend_command_runs_a_timed_first_test_in_the_forked_server_and_leaves_nothing(tmp_path):
    """A first test predicted to take 3 x 10 s (too long to run in-process) runs timed, in a fold process."""
    from helpers_estimators import new_log, slow_meta

    tag, log = new_log()
    slow_meta(tmp_path, 'helpers_estimators.SlowClassifier{"delay": 0.01, "log": "%s"}' % tag)
    marker = uuid.uuid4().hex
    try:
        proc = subprocess.Popen([sys.executable, "-m", "algorank", "--verbose", "recommend", "sklearn:iris", "--meta",
                                 str(tmp_path / "slow.csv"), "--budget", "120", "--cv", "3", "--json",
                                 "--allow-module", "helpers_estimators"],
                                env=_env(marker), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                cwd=tmp_path)
        stdout, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, stderr[-2000:]
        d = json.loads(stdout)
        assert [t["status"] for t in d["trace"]] == ["ok"]
        assert "runs timed: first test" in stderr
        fitted_by = {int(line) for line in log.read_text().split()}
        assert len(fitted_by) >= 1 and proc.pid not in fitted_by  # the folds ran in fold processes
        assert _gone(marker) == []
    finally:
        _cleanup(marker)


POOL = r'''
import os, sys, time
def main():
    from algorank.evaluation.cv import children, fold_fork
    children.end_with_this_process()
    assert fold_fork.fork_fold_server()
    executor = children.watched_executor(2)
    parents = {executor.submit(os.getppid).result() for _ in range(4)}
    print(children.forked_pid(), *sorted(parents), flush=True)
    executor.submit(time.sleep, 120)
    time.sleep(120)
if __name__ == "__main__":
    main()
'''


def test_pool_workers_are_fresh_children_of_the_command_and_die_with_it(tmp_path):
    """Beside a forked fold server, the loky workers are still loky's own fresh processes, children of the
    command (never forks of the fold server), and SIGKILL of the command ends them all."""
    marker = uuid.uuid4().hex
    script = tmp_path / "pool.py"
    script.write_text(POOL)
    proc = subprocess.Popen([sys.executable, str(script)], env=_env(marker), stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, cwd=tmp_path)
    try:
        server, *parents = (int(v) for v in proc.stdout.readline().split())
        assert parents == [proc.pid] and server != proc.pid
        assert _ppid(server) == proc.pid
        workers = [w for w in _children(proc.pid) if w != server]
        assert workers and all(w in marked(marker) for w in workers)
        assert kill_and_wait(proc, marker) == []
    finally:
        stop_run(proc, marker)
