"""Inputs that used to end in a traceback or a wrong exit code: one ``error:`` line (exit 2), or a clean run.

Each case is a regression test of a failure found by an audit of crafted inputs: numbers beyond the
float range, a file with only the target, nested Parquet columns, overflowing flags, a damaged
fold store, degenerate targets, too many workers, a full disk under ``evaluate --out``.
"""

from __future__ import annotations

import errno
import logging
import sqlite3

import numpy as np
import pandas as pd
import pytest

from algorank import cli
from algorank.evaluation.cv.datasets import MAX_ABS_VALUE, load_dataset
from algorank.evaluation.cv.evaluator import Evaluator, write_runs
from algorank.evaluation.cv.preprocessing import encode_dataset
from algorank.evaluation.cv.store import FoldStore
from algorank.metadata.checks import MAX_SEED, available_cores, check_n_jobs, check_seconds, check_seed
from algorank.metadata.errors import AlgorankError, InputError


def _frame(n=60, seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n), "class": ["x", "y", "z"] * (n // 3)})


def _one_error(capsys, argv, code=2) -> str:
    assert cli.main(argv) == code
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# ====================================================================== data files
def test_numbers_beyond_the_float_range_are_missing_values_with_a_warning(tmp_path, caplog):
    path = tmp_path / "huge.csv"
    text = _frame().to_csv(index=False).splitlines()
    text[1] = "1e309,-2e400,x"  # beyond the float range: read as +-inf
    text[2] = "1e308,5,y"  # finite, but its square overflows
    text[3] = "-1e200,1e-300,z"  # tiny values are fine
    path.write_text("\n".join(text) + "\n")
    with caplog.at_level(logging.WARNING):
        data = load_dataset(str(path))
        encoded = encode_dataset(data)[0]
    X = data.X.to_numpy(dtype=float)
    assert np.isinf(X[0]).all() and np.isnan(X[1, 0]) and X[1, 1] == 5.0 and np.isnan(X[2, 0])
    assert X[2, 1] == 1e-300 and np.isfinite(X[3:]).all()
    assert "2 value(s) beyond +-1e+150 (too large to compute with) in 1 column(s) (a)" in caplog.text
    assert np.isnan(encoded[0]).all() and "+-inf" in caplog.text  # beyond the float range: the preprocessing's rule
    res = Evaluator(cv=3, progress=False).evaluate(data, ["lda", "logreg", "mlp", "knn"])
    assert (res.summary["status"] == "ok").all()  # before: "Input X contains NaN" after the overflow
    assert MAX_ABS_VALUE ** 2 < np.finfo(float).max


def test_a_file_with_only_the_target_is_one_error(tmp_path, capsys):
    path = tmp_path / "only.csv"
    pd.DataFrame({"class": ["a", "b"] * 10}).to_csv(path, index=False)
    line = _one_error(capsys, ["evaluate", str(path), "--learners", "knn", "--no-store"])
    assert line == "error: dataset 'only' has no feature columns, only the target 'class': there is nothing to learn from"


def test_a_parquet_file_with_nested_list_columns_is_one_error(tmp_path, capsys):
    path = tmp_path / "nested.parquet"
    pd.DataFrame({"a": [[1, 2], [3]] * 10, "b": range(20), "class": ["x", "y"] * 10}).to_parquet(path)
    line = _one_error(capsys, ["evaluate", str(path), "--learners", "knn", "--no-store"])
    assert line.startswith("error: column 'a' of dataset 'nested' holds lists or other nested values")


@pytest.mark.parametrize("command", [["evaluate", "--learners", "knn", "--no-store"], ["recommend", "--budget", "5"]])
def test_a_target_of_singleton_classes_is_one_error(tmp_path, capsys, command):
    path = tmp_path / "ids.csv"
    pd.DataFrame({"a": np.arange(300.0), "class": [f"id{i}" for i in range(300)]}).to_csv(path, index=False)
    line = _one_error(capsys, [command[0], str(path), *command[1:]])
    assert line.startswith("error: target 'class' of dataset 'ids' has 300 classes of one row each")


def test_a_target_with_some_singleton_classes_still_runs(tmp_path):
    frame = _frame()
    frame.loc[0, "class"] = "lonely"  # one class of one row among classes of 20: cross-validation still works
    frame.to_csv(tmp_path / "x.csv", index=False)
    res = Evaluator(cv=3, progress=False).evaluate(load_dataset(str(tmp_path / "x.csv")), ["lda"])
    assert (res.summary["status"] == "ok").all()


# ====================================================================== flags
@pytest.mark.parametrize("argv, expected", [
    (["recommend", "sklearn:iris", "--budget", "1e308"], "error: --budget must be a positive number of seconds "
                                                          "(at most 1e+09); got 1e+308"),
    (["recommend", "sklearn:iris", "--seed", "18446744073709551616"],
     "error: --seed must be at most 4294967295 (a 32-bit seed); got 18446744073709551616"),
    (["evaluate", "sklearn:iris", "--learners", "knn", "--timeout", "1e300", "--no-store"],
     "error: --timeout must be a positive number of seconds (at most 1e+09); got 1e+300"),
    (["compare", "--seed", "-1"], "error: --seed must be an integer >= 0; got -1"),
])
def test_overflowing_and_negative_flags_are_one_error(capsys, argv, expected):
    assert _one_error(capsys, argv) == expected


def test_multitest_refuses_a_negative_test_train_ratio(capsys):
    line = _one_error(capsys, ["multitest", "--test-train-ratio", "-1"])
    assert "test_train_ratio must be a positive number; got -1.0" in line


def test_the_shared_checks_of_seconds_seeds_and_workers(caplog):
    assert check_seconds(2) == 2.0 and check_seconds("0.5") == 0.5 and check_seconds(1e9) == 1e9
    for bad in (0, -1, float("nan"), float("inf"), 1e9 + 1, 1e308, True, None, "x", 10**400):
        with pytest.raises(InputError, match=r"^timeout must be a positive number of seconds \(at most 1e\+09\)"):
            check_seconds(bad)
    assert check_seed(MAX_SEED) == 2**32 - 1
    with pytest.raises(InputError, match=r"must be at most 4294967295"):
        check_seed(MAX_SEED + 1)
    cores = available_cores()
    assert check_n_jobs(1) == 1 and check_n_jobs(-1) == -1 and check_n_jobs(None, allow_none=True) is None
    with caplog.at_level(logging.WARNING):
        assert check_n_jobs(1000) == cores
    assert f"note: n_jobs=1000 is more than the {cores} core(s) of this machine; using {cores}" in caplog.text
    for bad in (0, 1.5, True, None):
        with pytest.raises(InputError, match=r"^n_jobs must be a non-zero integer"):
            check_n_jobs(bad)
    with pytest.raises(InputError, match="leaves no core"):
        check_n_jobs(-cores - 1)


def test_evaluate_caps_n_jobs_at_the_cores_with_a_note(caplog):
    with caplog.at_level(logging.WARNING):
        assert cli.main(["evaluate", "sklearn:iris", "--learners", "lda", "--n-jobs", "1000", "--no-store"]) == 0
    assert f"note: n_jobs=1000 is more than the {available_cores()} core(s)" in caplog.text


# ====================================================================== the fold store
def _a_store(tmp_path):
    path = tmp_path / "good.sqlite"
    Evaluator(cv=3, progress=False, store=path).evaluate(load_dataset("sklearn:iris"), ["lda"])
    return path


@pytest.mark.parametrize("damage", ["truncated", "wrong schema", "not a database"])
def test_a_damaged_store_is_one_error_naming_the_file_and_how_to_start_over(tmp_path, capsys, damage):
    path = tmp_path / "store.sqlite"
    if damage == "truncated":
        data = _a_store(tmp_path).read_bytes()
        path.write_bytes(data[: len(data) // 2])
    elif damage == "wrong schema":
        with sqlite3.connect(path) as con:
            con.execute("CREATE TABLE folds (config TEXT, x INTEGER)")
    else:
        path.write_bytes(b"not a database " * 100)
    line = _one_error(capsys, ["evaluate", "sklearn:iris", "--learners", "lda", "--store", str(path)])
    # the command line names its flag (the library error names the parameter, store=)
    assert line.startswith(f"error: --store {str(path)!r} is damaged or is not an algorank fold store (")
    assert line.endswith("to start over, delete it (its folds are computed again) or choose another store file")
    with pytest.raises(InputError, match="is damaged"):
        FoldStore(path)


# ====================================================================== evaluate --out on a full disk
def test_write_runs_on_a_full_disk_leaves_nothing(tmp_path, monkeypatch):
    result = Evaluator(cv=3, progress=False).evaluate(load_dataset("sklearn:iris"), ["lda"])
    out = tmp_path / "new" / "out"
    real = pd.DataFrame.to_csv

    def full(self, path=None, *args, **kwargs):
        if str(path).endswith("summary.csv"):  # the last file: the runs are already written
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real(self, path, *args, **kwargs)

    monkeypatch.setattr(pd.DataFrame, "to_csv", full)
    with pytest.raises(AlgorankError, match="No space left on device") as err:
        write_runs(result, out)
    assert not isinstance(err.value, InputError)  # exit 1: the machine's failure, not bad input
    assert not (tmp_path / "new").exists()  # nothing half-written, not even the folders it created
    monkeypatch.setattr(pd.DataFrame, "to_csv", real)
    written = write_runs(result, out)
    assert sorted(p.name for p in out.iterdir()) == ["runs.csv", "runs.datasets.csv", "summary.csv"]
    assert [str(out / n) for n in ("runs.csv", "runs.datasets.csv", "summary.csv")] == written


def test_the_longest_timeout_allowed_runs(tmp_path):
    """1e9 s passes the check, and no wait on a fold child overflows the operating system's timers."""
    res = Evaluator(cv=3, timeout=1e9, progress=False).evaluate(load_dataset("sklearn:iris"), ["lda"])
    assert (res.summary["status"] == "ok").all()
    from algorank.evaluation.cv.children import _poll

    import multiprocessing

    a, b = multiprocessing.Pipe()
    b.send(1)
    assert _poll(a, 1e9) is True and a.recv() == 1
    assert _poll(a, 0.01) is False
