"""An interrupted fit is never a result, and no process outlives a command.

* An interrupt that reaches a fit (in-process, in a joblib worker, or a real ``kill -INT`` of
  ``algorank evaluate``) is never stored, even when the estimator swallows the
  ``KeyboardInterrupt`` (scikit-learn's MLP does: it returns a half-trained model); the run
  stops (exit 130) and a resumed run equals an uninterrupted one.
* After an early error, after SIGKILL of ``evaluate --n-jobs 2`` / ``build-meta --n-jobs 2``
  and after SIGKILL while the fold server is still starting, no process of the command is left
  (polled for a few seconds: a process that dies with its parent goes within 0.1 s of it, but a
  loaded machine may take longer to schedule it), also when the kill comes while the workers are
  still importing.
* A command's reaper kills every process that carries the command's token, and only those: a
  descendant that watches nothing is gone after the command's SIGKILL, while processes with
  another token, a longer one, or the token under another name live on.  (The figures, kills
  0.0 to 1.0 s into the workers' start included, are in ``tests/benchmarks/bench_process_lifetimes.py``.)
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from algorank.evaluation.cv.evaluator import Evaluator

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

TESTS = Path(__file__).resolve().parent
ALLOW = ["helpers_estimators"]
#: Seconds allowed for the processes of a command to disappear: the promise is 0.5 s (they watch their parent
#: every 0.05 s), plus a margin for a loaded 2-core machine.  Before, loky workers stayed for more than 22 s and
#: a starting fold server for 1-3 s.


def swallow(**params) -> str:
    return "helpers_estimators.InterruptSwallowingClassifier" + json.dumps(params, sort_keys=True)


@pytest.fixture(scope="module")
def skewed():
    """90 rows: 72 of class a, 18 of class b (a majority-class model scores 0.8, a minority one 0.2)."""
    import numpy as np
    import pandas as pd

    from algorank.evaluation.cv.datasets import dataset_from_frame

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.normal(size=90), "z": rng.normal(size=90), "class": ["a"] * 72 + ["b"] * 18})
    return dataset_from_frame(frame, name="skewed", source="test", target="class")


def _stored(store: Path) -> list[tuple]:
    with sqlite3.connect(store) as con:
        return sorted(con.execute("SELECT learner, repeat, fold, accuracy FROM folds").fetchall())


# ====================================================================== in the library
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_a_swallowed_interrupt_is_not_stored_and_resume_equals_an_uninterrupted_run(skewed, tmp_path, n_jobs):
    from helpers_estimators import new_log

    gate_tag, gate = new_log()
    learner = swallow(gate=gate_tag, self_interrupt=True)
    store = tmp_path / "store.sqlite"
    ev = Evaluator(cv=3, repeats=1, progress=False, allow_modules=ALLOW, store=store, n_jobs=n_jobs)
    with pytest.raises(KeyboardInterrupt):
        ev.evaluate(skewed, ["lda", learner])
    assert [row for row in _stored(store) if row[0] == learner] == []  # the half-trained folds: never stored
    gate.touch()  # the estimator now fits without being interrupted
    resumed = ev.evaluate(skewed, ["lda", learner])
    fresh = Evaluator(cv=3, repeats=1, progress=False, allow_modules=ALLOW,
                      store=tmp_path / "fresh.sqlite", n_jobs=n_jobs).evaluate(skewed, ["lda", learner])
    cols = ["learner", "repeat", "fold", "accuracy", "status"]
    assert resumed.runs[cols].sort_values(cols[:3]).values.tolist() == \
        fresh.runs[cols].sort_values(cols[:3]).values.tolist()
    # the real fit predicts the majority class (0.8 of every stratified test fold); the swallowed one gave 0.2
    assert resumed.summary.loc[learner, "accuracy_mean"] == pytest.approx(0.8)
    assert _stored(store) == _stored(tmp_path / "fresh.sqlite")


def test_the_interrupt_watch_records_an_interrupt_and_gives_the_handler_back():
    from algorank.evaluation.cv.children import interrupt_watch

    with interrupt_watch() as seen:
        pass
    assert seen.hit is False
    with pytest.raises(KeyboardInterrupt), interrupt_watch() as seen:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1)
    assert seen.hit is True
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the handler is given back
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # e.g. a background job: SIGINT stays ignored
    try:
        with interrupt_watch() as seen:
            assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.2)
        assert seen.hit is False
    finally:
        signal.signal(signal.SIGINT, previous)


# ====================================================================== real processes
from helpers_processes import (  # noqa: E402  (tests/ is on the path)
    gone as _gone, kill_and_wait, kill_marked as _cleanup, loky_workers as _loky_workers, marked as _marked,
    marker_env as _env, stop_run)


def _wait_for(predicate, proc, what: str, timeout: float = 120.0, poll: float = 0.05) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        assert proc.poll() is None, f"the command ended before {what}"
        assert time.monotonic() < end, f"no {what}"
        time.sleep(poll)


def test_a_swallowed_kill_int_of_evaluate_exits_130_and_stores_nothing_of_it(tmp_path):
    from helpers_estimators import new_log

    (gate_tag, _), (log_tag, log) = new_log(), new_log()
    store = tmp_path / "store.sqlite"
    learner = swallow(gate=gate_tag, log=log_tag)
    marker = uuid.uuid4().hex
    args = [sys.executable, "-m", "algorank", "evaluate", "sklearn:iris", "--learners", "lda", learner,
            "--allow-module", "helpers_estimators", "--cv", "3", "--store", str(store), "--quiet"]
    proc = subprocess.Popen(args, env=_env(marker), stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    try:
        _wait_for(log.exists, proc, "fit of the swallowing learner")
        proc.send_signal(signal.SIGINT)  # to the process only, as `kill -INT` does: it lands inside the fit
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err.decode()
        assert b"Traceback" not in err, err.decode()
        assert not any(row[0] == learner for row in _stored(store))  # the half-trained fold is not a result
    finally:
        if proc.poll() is None:
            proc.kill()
        _cleanup(marker)


def test_early_errors_leave_no_process_behind(tmp_path):
    marker = uuid.uuid4().hex
    runs = [["recommend", str(tmp_path / "missing.csv"), "--budget", "30"],
            ["evaluate", str(tmp_path / "missing.csv"), "--learners", "knn", "--timeout", "5"],
            ["recommend", "sklearn:iris", "--budget", "1e308"]]
    for args in runs:
        done = subprocess.run([sys.executable, "-m", "algorank", *args], env=_env(marker), capture_output=True,
                              cwd=tmp_path, timeout=120)
        assert done.returncode == 2, done.stderr.decode()
        assert done.stderr.decode().startswith("error:") and b"Traceback" not in done.stderr
    try:
        assert _gone(marker) == []
    finally:
        _cleanup(marker)


def _fold_server_pids(parent: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    if int(f.read().rpartition(b")")[2].split()[1]) == parent:
                        out.append(int(entry))
            except (OSError, ValueError, IndexError):
                continue
    return out


def test_sigkill_while_the_fold_server_starts_leaves_nothing(tmp_path):
    """The fold server spends a second or two importing; its caller's death ends it at once, not after."""
    marker = uuid.uuid4().hex
    code = ("import os, sys, time\n"
            "from algorank.evaluation.cv.children import start_fold_server\n"
            "start_fold_server()\n"
            "print('started', flush=True)\n"
            "time.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], env=_env(marker), stdout=subprocess.PIPE, cwd=tmp_path)
    try:
        assert proc.stdout.readline().strip() == b"started"
        _wait_for(lambda: _fold_server_pids(proc.pid), proc, "fold server")
        assert kill_and_wait(proc, marker) == []
    finally:
        stop_run(proc, marker)


@pytest.mark.parametrize("command", ["evaluate", "evaluate-importing", "build-meta"])
def test_sigkill_with_n_jobs_2_leaves_no_worker_behind(tmp_path, command, request):
    """``evaluate-importing``: killed as soon as the first worker exists, while the workers still import."""
    marker = uuid.uuid4().hex
    slow = 'helpers_estimators.SlowClassifier{"delay": 60}'
    if command.startswith("evaluate"):
        args = ["evaluate", "sklearn:iris", "--learners", slow, "lda", "--allow-module", "helpers_estimators",
                "--n-jobs", "2", "--cv", "3", "--no-store", "--quiet"]
    else:
        shared = request.getfixturevalue("shared_dir")
        args = ["build-meta", "--shared", str(shared), "--datasets", "iris", "wine", "--out", str(tmp_path / "parts"),
                "--n-jobs", "2", "--no-calibrate", "--quiet"]
    proc = subprocess.Popen([sys.executable, "-m", "algorank", *args], env=_env(marker), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, cwd=tmp_path)
    try:
        if command == "evaluate-importing":
            _wait_for(lambda: _loky_workers(marker), proc, "joblib workers", poll=0.005)
        else:
            _wait_for(lambda: len(_loky_workers(marker)) >= 2, proc, "joblib workers")
            time.sleep(1.0)  # let the workers pick up their tasks
        proc.kill()
        proc.wait(timeout=10)
        left = _gone(marker)
        assert left == [], f"left behind: {left}"
        err = proc.stderr.read().decode()  # every writer is gone: the pipe is at its end
        assert "Traceback" not in err and "BrokenPipeError" not in err, err
    finally:
        if proc.poll() is None:
            proc.kill()
        _cleanup(marker)


@pytest.mark.parametrize("delay", [0.3, 1.0, 2.0])
def test_sigint_while_starting_or_loading_exits_130_without_a_traceback(tmp_path, delay):
    """Ctrl-C during the imports, the loading of the data or the start of the fold server: exit 130, one line."""
    marker = uuid.uuid4().hex
    args = [sys.executable, "-m", "algorank", "evaluate", "sklearn:breast_cancer", "--learners", "logreg", "knn",
            "--timeout", "30", "--no-store", "--quiet"]
    proc = subprocess.Popen(args, env=_env(marker), stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    try:
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        if proc.returncode == 0:  # the machine was fast enough to finish first: nothing to check
            pytest.skip("the command finished before the interrupt")
        assert proc.returncode == 130, err.decode()
        assert err.decode().strip().splitlines()[-1:] == ["interrupted"], err.decode()
        assert b"Traceback" not in err and b"Error" not in err, err.decode()
        assert _gone(marker) == []
    finally:
        if proc.poll() is None:
            proc.kill()
        _cleanup(marker)


_COMMAND = ("import os, subprocess, sys, time\n"
            "from algorank.evaluation.cv import children\n"
            "children.end_with_this_process()\n"
            "children._start_reaper()\n"  # as the first fold server or worker pool would
            "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
            "print(os.environ['ALGORANK_RUN_TOKEN'], p.pid, flush=True)\n"
            "time.sleep(120)\n")


def test_the_reaper_kills_the_commands_processes_and_only_those(tmp_path):
    marker, other = uuid.uuid4().hex, uuid.uuid4().hex
    proc = subprocess.Popen([sys.executable, "-c", _COMMAND], env=_env(marker), stdout=subprocess.PIPE, cwd=tmp_path)
    foreign = []
    try:
        token, child = proc.stdout.readline().split()
        token = token.decode()
        assert len(token) == 32
        _wait_for(lambda: int(child) in _marked(marker), proc, "the child's environment")  # readable once exec is done
        sleeper = [sys.executable, "-c", "import time; time.sleep(120)"]
        for env in ({"ALGORANK_RUN_TOKEN": token + "0"}, {"ALGORANK_RUN_TOKEN": uuid.uuid4().hex},
                    {"OTHER": f"ALGORANK_RUN_TOKEN={token}"}, {}):  # near misses: not the command's
            foreign.append(subprocess.Popen(sleeper, env=dict(_env(other), **env)))
        proc.kill()
        proc.wait(timeout=10)
        assert _gone(marker) == []  # the sleeping child watched nothing: the reaper killed it (and ended itself)
        assert [p.poll() for p in foreign] == [None] * 4
    finally:
        if proc.poll() is None:
            proc.kill()
        for p in foreign:
            p.kill()
            p.wait()
        _cleanup(marker)
        _cleanup(other)


def test_no_reaper_without_a_command(monkeypatch):
    """The library used from a program of its own: no token, no reaper (the program's processes are its own)."""
    from algorank.evaluation.cv import children

    monkeypatch.setattr(children, "_TOKEN", None)
    monkeypatch.setattr(children, "_REAPER", None)
    children._start_reaper()
    assert children._REAPER is None and "ALGORANK_RUN_TOKEN" not in os.environ


# ====================================================================== no leaked semaphores
_LEAK = '''import sys
from algorank.evaluation.cv.children import watched_executor


def task(kind):
    if kind == "progress_bar":  # what every evaluation in a worker does (its bar is off there)
        from algorank.metadata.progress import progress_bar
        progress_bar(total=0, enabled=False).close()
    else:  # the positive control: a disabled tqdm still creates a multiprocessing lock
        from tqdm import tqdm
        tqdm(total=0, disable=True).close()
    return "done"


if __name__ == "__main__":
    ex = watched_executor(2)
    print(ex.submit(task, sys.argv[1]).result(), flush=True)
    ex.shutdown(wait=False, kill_workers=True)  # as at the end of a budget with tests still running
'''


@pytest.mark.parametrize("kind, leaks", [("progress_bar", False), ("tqdm", True)])
def test_a_worker_killed_after_an_evaluation_leaves_no_semaphore_to_warn_about(tmp_path, kind, leaks):
    script = tmp_path / "leak.py"
    script.write_text(_LEAK)
    marker = uuid.uuid4().hex
    try:  # capture_output waits for every holder of stderr: the resource trackers have spoken when it returns
        done = subprocess.run([sys.executable, str(script), kind], env=_env(marker), capture_output=True,
                              cwd=tmp_path, timeout=120)
        assert done.returncode == 0 and done.stdout.strip() == b"done", done.stderr.decode()
        assert (b"leaked semaphore" in done.stderr) is leaks, done.stderr.decode()
    finally:
        _cleanup(marker)


def test_recommend_with_n_jobs_2_ends_without_warnings_from_its_workers(tmp_path):
    from sklearn.datasets import load_breast_cancer

    path = tmp_path / "cancer.csv"
    load_breast_cancer(as_frame=True).frame.to_csv(path, index=False)
    marker = uuid.uuid4().hex
    try:
        done = subprocess.run([sys.executable, "-m", "algorank", "recommend", str(path), "--budget", "12", "--n-jobs",
                               "2"], env=_env(marker), capture_output=True, cwd=tmp_path,
                              timeout=180)
        err = done.stderr.decode()
        assert done.returncode in (0, 3), err  # 3: nothing finished (a very loaded machine); the ending is the same
        assert "leaked" not in err and "resource_tracker" not in err and "Traceback" not in err, err
        assert _gone(marker) == []
    finally:
        _cleanup(marker)


def test_the_reaper_removes_only_the_leftovers_named_after_its_command(tmp_path, monkeypatch):
    """What a resource tracker killed while still starting would have removed: the command's semaphores and
    joblib's memory-mapping folders (pid 99999999 is above any pid_max, so it names no real process)."""
    import runpy

    reaper = runpy.run_path(str(TESTS.parent / "evaluation" / "cv" / "_boot" / "algorank_reaper.py"))
    monkeypatch.setenv("JOBLIB_TEMP_FOLDER", str(tmp_path))
    ours, theirs = tmp_path / "joblib_memmapping_folder_99999999_a_b", tmp_path / "joblib_memmapping_folder_9999999_a_b"
    for folder in (ours, theirs):
        folder.mkdir()
        (folder / "x.pkl").write_bytes(b"x")
    shm = Path("/dev/shm")
    sems = [shm / "sem.loky-99999999-test", shm / "sem.loky-999999990-test"]
    if shm.is_dir():
        for sem in sems:
            sem.write_bytes(b"")
    try:
        reaper["remove_leftovers"](99999999)
        assert not ours.exists() and (theirs / "x.pkl").exists()
        if shm.is_dir():
            assert [s.exists() for s in sems] == [False, True]
    finally:
        for sem in sems:
            sem.unlink(missing_ok=True)


def test_no_fold_process_or_fold_server_starts_once_the_process_is_ending(tmp_path):
    """After :func:`stop_processes` (a command about to end) a thread that still asks for a fold process gets an
    error, and no fold server is started: a fresh one would bind its socket in the temporary directory that
    ``multiprocessing`` is removing at exit (which then failed with "Directory not empty" and a traceback)."""
    script = (
        "import math, multiprocessing.forkserver as fs, multiprocessing.util as u\n"
        "from algorank.evaluation.cv import children\n"
        "children.stop_processes()\n"
        "try:\n"
        "    children.run_with_deadline(math.sqrt, (4.0,), timeout=30)\n"
        "    print('started')\n"
        "except ChildProcessError as exc:\n"
        "    print('refused:', exc)\n"
        "print('server:', getattr(fs._forkserver, '_forkserver_pid', None))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["refused: the process is ending: no new fold process is started",
                                       "server: None"], out.stdout


def test_an_interrupt_wrapped_by_an_import_exits_130_and_other_runtime_errors_are_not_hidden(monkeypatch, capsys):
    """Ctrl-C inside a class body's ``__set_name__`` (scikit-learn's import builds dataclasses) reaches the command
    line as a RuntimeError caused by the KeyboardInterrupt (Python 3.11): still "interrupted", exit 130."""
    import algorank.cli as cli

    def wrapped(args):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as exc:
            raise RuntimeError("Error calling __set_name__ on '_Field' instance") from exc

    monkeypatch.setattr(cli, "_run", wrapped)
    assert cli.main(["info"]) == 130
    assert capsys.readouterr().err == "interrupted\n"

    def broken(args):
        raise RuntimeError("a bug of ours")

    monkeypatch.setattr(cli, "_run", broken)
    with pytest.raises(RuntimeError, match="a bug of ours"):
        cli.main(["info"])
    assert not cli._from_interrupt(ValueError("x")) and cli._from_interrupt(KeyboardInterrupt())
