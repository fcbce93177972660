"""Two processes on one fold store: a per-fold claim, so the second process skips the folds the
first is computing and waits for their results; no fold is computed twice.

The fits wait at a gate until each process has started one (however slowly the second process
starts on a loaded machine, the first cannot finish every fold before it): the work is shared
by construction, not by timing."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from algorank.evaluation.cv.store import FoldStore

TESTS = Path(__file__).resolve().parent


def _start(args, tmp_path: Path, name: str):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]))
    return subprocess.Popen([sys.executable, "-m", "algorank", *args], env=env, cwd=tmp_path,
                            stdout=open(tmp_path / f"{name}.out", "wb"), stderr=open(tmp_path / f"{name}.err", "wb"))


def _claims(store: Path) -> int:
    try:
        con = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=1)
        try:
            return con.execute("SELECT COUNT(*) FROM claims").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def test_two_evaluate_processes_share_the_folds_of_one_store(tmp_path):
    from helpers_estimators import new_log

    tag, log = new_log()
    gate_tag, gate = new_log()
    store = tmp_path / "store.sqlite"
    learner = "helpers_estimators.SlowClassifier" + json.dumps({"delay": 0.5, "gate": gate_tag, "log": tag})
    args = ["evaluate", "sklearn:iris", "--learners", learner, "--allow-module", "helpers_estimators", "--cv", "8",
            "--store", str(store), "--json"]
    first = _start(args, tmp_path, "first")
    procs = [first]
    try:
        end = time.monotonic() + 60
        while _claims(store) == 0:  # the first process holds a fold: start the second one now
            assert first.poll() is None and time.monotonic() < end, (tmp_path / "first.err").read_text()
            time.sleep(0.05)
        procs.append(_start(args, tmp_path, "second"))
        while len(set(log.read_text().split()) if log.exists() else ()) < 2:  # each process is in a fit of its own
            assert all(p.poll() is None for p in procs) and time.monotonic() < end + 120, \
                (tmp_path / "first.err").read_text() + (tmp_path / "second.err").read_text()
            time.sleep(0.05)
        gate.touch()
        for p in procs:
            assert p.wait(timeout=120) == 0, (tmp_path / "first.err").read_text() + (tmp_path / "second.err").read_text()
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    fits = log.read_text().split()
    assert len(fits) == 8, fits  # every fold computed exactly once, by one of the two
    assert set(fits) == {str(first.pid), str(procs[1].pid)}  # and the work was shared
    a, b = (json.loads((tmp_path / f"{n}.out").read_text()) for n in ("first", "second"))
    assert a["learners"] == b["learners"]  # the same result from either process
    notes = (tmp_path / "first.err").read_text() + (tmp_path / "second.err").read_text()
    assert "being computed by another process using the same store" in notes
    with FoldStore(store) as s:
        assert s.count() == 8
    assert _claims(store) == 0  # every claim released


def test_claims_of_a_process_that_is_gone_are_taken_over(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    with FoldStore(tmp_path / "s.sqlite") as store:
        key = "k"
        assert store.claim(key, "lda", 0, 0) == "mine" and store.claim(key, "lda", 0, 0) == "mine"  # own claim
        other = FoldStore(tmp_path / "s.sqlite")
        assert other.claim(key, "lda", 0, 0).startswith(f"pid {os.getpid()} on ")  # alive: left to its holder
        # a claim written by a process that has exited is stale
        other._con.execute("UPDATE claims SET pid = ?, owner = 'gone' WHERE learner = 'lda'", (dead.pid,))
        assert store.claim(key, "lda", 0, 0) == "mine"
        other.close()
    # a claim from another host is trusted until it is old
    with FoldStore(tmp_path / "t.sqlite") as store:
        store._con.execute("INSERT INTO claims VALUES ('k', 'lda', 0, 0, 'far', 'elsewhere', 1, NULL, ?)",
                           (time.time(),))
        assert store.claim("k", "lda", 0, 0) == "pid 1 on elsewhere"
        store._con.execute("UPDATE claims SET created = ?", (time.time() - FoldStore.stale_after - 1,))
        assert store.claim("k", "lda", 0, 0) == "mine"
