"""Outputs: ``--out`` checked before any work, results printed before files are
written, and every write failure is one ``error: cannot write ...`` line (exit 2 for a path
that cannot be written, 1 for a full disk) that leaves nothing behind.

A full disk is simulated: the writer (``DataFrame.to_csv``, or SQLite for the fold store)
writes a few bytes and then raises ``OSError(ENOSPC)``, as a real full disk does.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from algorank import cli
from algorank.evaluation.cv.store import FoldStore
from algorank.metadata.errors import AlgorankError, InputError
from algorank.metadata.io import check_out_dir, check_out_file, output_folder

FAST = {
    "evaluate": ["evaluate", "sklearn:iris", "--learners", "lda", "--cv", "2", "--no-store", "--quiet"],
    "recommend": ["recommend", "sklearn:iris", "--top", "1", "--cv", "3", "--budget", "30", "--quiet"],
    "benchmark": ["benchmark", "--strategy", "ar:p=0", "--meta", "uci", "--quiet"],
    "tune-p": ["tune-p", "--p-grid", "0", "1/16", "--meta", "uci", "--quiet"],
    "multitest": ["multitest", "--meta", "uci", "--learners", "lda,knn,sklearn.naive_bayes.GaussianNB", "--quiet"],
}


def _run(capsys, argv):
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _full_disk(monkeypatch):
    """Every DataFrame.to_csv writes 10 bytes and then fails like a full disk."""

    def to_csv(self, path=None, *args, **kwargs):
        if path is not None and not hasattr(path, "write"):
            Path(path).write_text("x" * 10)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(pd.DataFrame, "to_csv", to_csv)


@pytest.mark.parametrize("command", sorted(FAST))
def test_out_that_is_a_file_is_refused_before_any_work(tmp_path, capsys, command):
    target = tmp_path / "a-file"
    target.write_text("keep me")
    code, out, err = _run(capsys, FAST[command] + ["--out", str(target)])
    assert code == 2 and out == ""  # nothing ran
    assert err.count("\n") == 1 and err.startswith("error: --out must be a folder") and "a-file" in err
    assert target.read_text() == "keep me"


def test_out_that_cannot_be_written_is_refused_before_any_work(tmp_path, capsys):
    readonly = Path("/sys/algorank-out")  # not writable, even for root
    if os.access("/sys", os.W_OK) and os.geteuid() != 0:  # pragma: no cover - unusual system
        pytest.skip("/sys is writable here")
    code, out, err = _run(capsys, FAST["evaluate"] + ["--out", str(readonly / "results")])
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "cannot be written" in err and "/sys" in err


def test_out_checks_name_the_problem(tmp_path):
    f = tmp_path / "f"
    f.write_text("")
    with pytest.raises(InputError, match="is a file"):
        check_out_dir(f / "below")
    with pytest.raises(InputError, match="must be a file, but .* is a folder"):
        check_out_file(tmp_path)
    assert check_out_dir(tmp_path / "new" / "deeper") == tmp_path / "new" / "deeper"
    assert not (tmp_path / "new").exists() and sorted(os.listdir(tmp_path)) == ["f"]  # the probe left nothing


@pytest.mark.parametrize("json_mode", [False, True])
def test_evaluate_no_store_prints_its_results_before_a_full_disk_fails(tmp_path, capsys, monkeypatch, json_mode):
    _full_disk(monkeypatch)
    out_dir = tmp_path / "new" / "out"
    code, out, err = _run(capsys, FAST["evaluate"] + ["--out", str(out_dir)] + (["--json"] if json_mode else []))
    assert code == 1  # a full disk: not the user's input
    assert err.count("\n") == 1 and err.startswith("error: cannot write ") and "No space left" in err
    assert "Traceback" not in err
    if json_mode:
        d = json.loads(out)
        assert d["learners"]["sklearn.discriminant_analysis.LinearDiscriminantAnalysis"]["status"] == "ok"
    else:
        assert "lda" in out and "wrote" not in out
    assert not (tmp_path / "new").exists()  # the folders it created are gone, with the partial file


@pytest.mark.parametrize("command", ["recommend", "benchmark", "tune-p"])
def test_results_first_then_a_clean_error_on_a_full_disk(tmp_path, capsys, monkeypatch, command):
    _full_disk(monkeypatch)
    existing = tmp_path / "results"
    existing.mkdir()
    code, out, err = _run(capsys, FAST[command] + ["--out", str(existing)])
    assert code == 1 and err.count("\n") == 1 and err.startswith("error: cannot write "), err
    assert out.strip() and "wrote" not in out  # the results were printed
    assert os.listdir(existing) == []  # an existing folder stays as it was: no partial or temporary file


def test_a_write_error_on_a_path_is_input_error_and_removes_what_it_created(tmp_path):
    with pytest.raises(InputError, match="cannot write .*Permission denied"):
        with output_folder(tmp_path / "a" / "b") as folder:
            (folder / "partial.csv").write_text("x")
            raise PermissionError(errno.EACCES, "Permission denied", str(folder / "partial.csv"))
    assert os.listdir(tmp_path) == []
    with pytest.raises(AlgorankError, match="No space left") as info:
        with output_folder(tmp_path / "c"):
            raise OSError(errno.ENOSPC, "No space left on device")
    assert not isinstance(info.value, InputError) and os.listdir(tmp_path) == []


def test_a_store_on_a_full_disk_leaves_no_empty_file_or_folder(tmp_path, monkeypatch):
    real = sqlite3.connect

    class Full:
        def __init__(self, *a, **k):
            self.con = real(*a, **k)  # creates the (empty) file, as SQLite does

        def execute(self, *a):
            raise sqlite3.OperationalError("database or disk is full")

        def close(self):
            self.con.close()

    monkeypatch.setattr(sqlite3, "connect", Full)
    with pytest.raises(AlgorankError, match="cannot write store .*disk is full") as info:
        FoldStore(tmp_path / "cache" / "store.sqlite")
    assert not isinstance(info.value, InputError)
    assert os.listdir(tmp_path) == []


def test_a_store_that_fills_up_during_the_run_is_one_error_line(tmp_path, capsys, monkeypatch):
    def full(self, config, record):
        raise AlgorankError(f"cannot write store {str(self.path)!r}: database or disk is full")

    monkeypatch.setattr(FoldStore, "put", full)
    argv = [a for a in FAST["evaluate"] if a != "--no-store"] + ["--store", str(tmp_path / "s.sqlite")]
    code, out, err = _run(capsys, argv)
    assert code == 1 and err.count("\n") == 1 and "disk is full" in err
