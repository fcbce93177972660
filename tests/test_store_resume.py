"""Each fold is persisted at once; a SIGKILLed run resumes to exactly the uninterrupted result."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from algorank.evaluation.cv.datasets import load_dataset
from algorank.evaluation.cv.evaluator import Evaluator
from algorank.evaluation.cv.store import FoldStore

ROOT = Path(__file__).resolve().parents[1]
SLOW = 'helpers_estimators.SlowClassifier{"delay": 0.25}'
LEARNERS = ["decision-tree", SLOW, "knn"]


def _cmd(store: Path) -> list[str]:
    return [sys.executable, str(ROOT / "cli.py"), "evaluate", "sklearn:iris", "--learners", *LEARNERS,
            "--cv", "3", "--repeats", "3", "--seed", "4", "--store", str(store), "--json", "--quiet",
            "--allow-module", "helpers_estimators"]


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "tests"), env.get("PYTHONPATH", "")])
    return env


def _stored(store: Path) -> int:
    if not store.exists():
        return 0
    try:
        with sqlite3.connect(str(store), timeout=5) as con:
            return con.execute("SELECT COUNT(*) FROM folds").fetchone()[0]
    except sqlite3.OperationalError:  # table not created yet
        return 0


def test_sigkill_then_rerun_resumes_exactly(tmp_path):
    store = tmp_path / "killed.sqlite"
    clean_store = tmp_path / "clean.sqlite"  # the uninterrupted reference runs beside the killed run and its rerun
    clean = subprocess.Popen(_cmd(clean_store), env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             cwd=tmp_path)
    proc = subprocess.Popen(_cmd(store), env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    deadline = time.time() + 60
    while _stored(store) < 5 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.02)
    assert proc.poll() is None, "run finished before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = _stored(store)
    assert 5 <= before < 27
    rerun = subprocess.run(_cmd(store), env=_env(), capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    resumed = json.loads(rerun.stdout)

    clean_out, clean_err = clean.communicate(timeout=120)
    assert clean.returncode == 0, clean_err
    expected = json.loads(clean_out)

    # no duplicated and no missing folds: 3 learners x 3 repeats x 3 folds, each exactly once
    with sqlite3.connect(str(store)) as con:
        rows = con.execute("SELECT learner, repeat, fold, accuracy, fit_time FROM folds ORDER BY 1, 2, 3").fetchall()
    with sqlite3.connect(str(clean_store)) as con:
        ref = con.execute("SELECT learner, repeat, fold, accuracy, fit_time FROM folds ORDER BY 1, 2, 3").fetchall()
    assert len(rows) == 27 and len({r[:3] for r in rows}) == 27
    assert [r[:4] for r in rows] == [r[:4] for r in ref]  # per-fold accuracies exactly equal
    assert all(r[4] is not None and r[4] >= 0 for r in rows)  # times present (they naturally differ)
    for lid, summ in expected["learners"].items():
        got = resumed["learners"][lid]
        assert got["accuracy_mean"] == summ["accuracy_mean"]
        assert got["accuracy_median"] == summ["accuracy_median"]
        assert got["repetitions"] == summ["repetitions"] == 3
        assert got["status"] == "ok" and got["fit_time_mean"] > 0
    assert resumed["store"] == str(store)


def test_rerun_in_process_computes_nothing_new_and_adaptive_resume_is_identical(tmp_path):
    iris = load_dataset("sklearn:iris")
    path = tmp_path / "s.sqlite"
    ev = Evaluator(cv=3, stop="rank", max_repeats=6, store=path, random_state=2, progress=False)
    first = ev.evaluate(iris, ["decision-tree", "lda"])
    with FoldStore(path) as st:
        n = st.count()
    second = ev.evaluate(iris, ["decision-tree", "lda"])
    with FoldStore(path) as st:
        assert st.count() == n  # nothing recomputed, nothing duplicated
    cols = ["learner", "repeat", "fold", "accuracy", "auc", "log_loss"]
    assert first.runs[cols].equals(second.runs[cols])
    assert first.runs["fit_time"].equals(second.runs["fit_time"])  # read back from the store, bit for bit
    assert np.array_equal(first.summary["repetitions"].to_numpy(), second.summary["repetitions"].to_numpy())
    # a larger max_repeats reuses the stored folds and only adds repetitions
    more = Evaluator(cv=3, stop="fixed", repeats=8, store=path, random_state=2, progress=False).evaluate(
        iris, ["lda"])
    lda = "sklearn.discriminant_analysis.LinearDiscriminantAnalysis"
    n_first = int(first.summary.loc[lda, "repetitions"])
    shared = more.runs[more.runs["repeat"] < n_first]
    assert shared["accuracy"].tolist() == first.runs[first.runs["learner"] == lda]["accuracy"].tolist()
    assert more.summary.loc[lda, "repetitions"] == 8


@pytest.mark.parametrize("timeout", [None])
def test_different_configuration_does_not_reuse_folds(tmp_path, timeout):
    iris = load_dataset("sklearn:iris")
    path = tmp_path / "s.sqlite"
    Evaluator(cv=3, store=path, random_state=0, timeout=timeout, progress=False).evaluate(iris, ["lda"])
    Evaluator(cv=3, store=path, random_state=1, timeout=timeout, progress=False).evaluate(iris, ["lda"])
    with FoldStore(path) as st:
        assert st.count() == 6
