"""Fold runs read straight from Parquet (metadata.fold_runs): the same Multi2Test result and the same errors
as the MetaDataset loader, on random small files and on bad ones."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import algorank.metadata.fold_runs as fold_runs
from algorank.metadata.cells import has_duplicate_keys
from algorank.metadata.dataset import MetaDataset
from algorank.metadata.errors import InputError
from algorank.metadata.fold_runs import FoldRuns, load_fold_runs, read_fold_runs
from algorank.metadata.io import json_dumps
from algorank.metadata.run_checks import duplicate_rows
from algorank.recommender.multitest import multi2test


def _random_runs(seed: int, *, n_datasets: int = 7, n_learners: int = 6, folds: int = 5, repeats: int = 1,
                 shuffle: bool = True) -> pd.DataFrame:
    """Runs with missing cells, missing folds, failed runs, NaN metrics and times, in a shuffled order."""
    rng = np.random.default_rng(seed)
    rows = []
    skill = rng.normal(0, 0.05, n_learners)
    speed = rng.normal(0, 1, n_learners)
    for d in range(n_datasets):
        base = rng.uniform(0.6, 0.9)
        for j in range(n_learners):
            if rng.random() < 0.15:
                continue  # a missing cell
            for r in range(repeats):
                for f in range(folds):
                    if rng.random() < 0.05:
                        continue  # a missing fold
                    status = "ok" if rng.random() > 0.06 else str(rng.choice(["error", "timeout"]))
                    acc = float(np.clip(base + skill[j] + rng.normal(0, 0.03), 0, 1).round(3))
                    if status != "ok" and rng.random() < 0.5:
                        acc = np.nan
                    fit = float(10 ** (speed[j] + rng.normal(0, 0.2)))
                    if rng.random() < 0.05:
                        fit = np.nan
                    rows.append((f"ds{d}", f"learner_{j}", r, f, acc, fit, 0.01, status))
    runs = pd.DataFrame(rows, columns=["dataset", "learner", "repeat", "fold", "accuracy", "fit_time",
                                       "predict_time", "status"])
    runs["auc"] = np.where(rng.random(len(runs)) < 0.3, np.nan, rng.uniform(0.5, 1, len(runs)))
    if shuffle:
        runs = runs.sample(frac=1.0, random_state=seed).reset_index(drop=True)
    return runs


def _save(tmp_path: Path, runs: pd.DataFrame, name: str = "runs.parquet", datasets=None) -> Path:
    path = tmp_path / name
    MetaDataset(runs, datasets).save(path)
    return path


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("missing", ["auto", "drop"])
def test_fold_runs_give_the_metadataset_result(tmp_path, seed, missing):
    path = _save(tmp_path, _random_runs(seed, n_datasets=9 if missing == "drop" else 7))
    fast = read_fold_runs(path)
    assert isinstance(fast, FoldRuns)  # read as arrays, not through the general loader
    meta = MetaDataset.load(path)
    learners = None if seed % 2 else ["learner_0", "learner_2", "learner_3", "learner_5"]
    compared = 0
    for cost in ("fit_time", "fit_predict_time", "none"):
        for pairwise in ("auto", "paired_t"):  # auto: a dataset with a missing fold is an error, the same one
            kwargs = dict(learners=learners, cost=cost, missing=missing, posthoc_method="holm", n_jobs=1,
                          pairwise=pairwise)
            try:
                want = json_dumps(multi2test(meta, **kwargs).to_dict())
            except InputError as exc:
                with pytest.raises(InputError, match=re.escape(str(exc))):
                    multi2test(fast, **kwargs)
                continue
            assert json_dumps(multi2test(fast, **kwargs).to_dict()) == want
            assert json_dumps(multi2test(path, **kwargs).to_dict()) == want  # a path is loaded as fold runs
            compared += 1
    assert compared >= 3


def test_user_cost_order_and_repeated_folds_match(tmp_path):
    path = _save(tmp_path, _random_runs(11, repeats=3, folds=3))
    order = "learner_5,learner_1,learner_0,learner_4,learner_3,learner_2"
    kwargs = dict(cost=order, posthoc_method="nemenyi", pairwise="paired_t")
    want = json_dumps(multi2test(MetaDataset.load(path), **kwargs).to_dict())
    assert json_dumps(multi2test(load_fold_runs(path), **kwargs).to_dict()) == want


def test_sparse_split_numbers_take_the_sorting_path(tmp_path):
    runs = _random_runs(3)
    runs["repeat"] = runs["repeat"] + 10_000_000 * (runs["fold"] % 2)  # (dataset, repeat, fold) slots far too many
    path = _save(tmp_path, runs)
    want = json_dumps(multi2test(MetaDataset.load(path), posthoc_method="holm", pairwise="paired_t").to_dict())
    assert json_dumps(multi2test(load_fold_runs(path), posthoc_method="holm", pairwise="paired_t").to_dict()) == want


def test_fold_runs_of_a_metadataset_and_of_an_embedded_name_equal_the_file(tmp_path):
    runs = _random_runs(5)
    path = _save(tmp_path, runs)
    a, b = read_fold_runs(path), FoldRuns.from_meta(MetaDataset(runs))
    assert a.dataset_ids == b.dataset_ids and a.learner_ids == b.learner_ids
    for name in ("dataset", "learner", "repeat", "fold", "ok"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    for c in b.columns:
        np.testing.assert_array_equal(a.columns[c], b.columns[c])
    assert isinstance(load_fold_runs("uci"), FoldRuns) and load_fold_runs(["uci"]).learner_ids == \
        load_fold_runs("uci").learner_ids


def test_cost_is_the_metadataset_cost_bit_for_bit(tmp_path, monkeypatch):
    runs = _random_runs(2)
    runs.loc[3, "fit_time"] = -0.0  # a signed zero survives as the general loader keeps it
    path = _save(tmp_path, runs)
    fast, meta = read_fold_runs(path), MetaDataset.load(path)
    monkeypatch.setattr(fold_runs, "_BLOCK_RUNS", 50)  # a few datasets per block
    for kind in ("fit_time", "fit_predict_time"):
        a, b = fast.cost(kind), meta.cost(kind)
        pd.testing.assert_frame_equal(a, b)
        assert np.array_equal(np.signbit(a.to_numpy()), np.signbit(b.to_numpy()))
    with pytest.raises(InputError, match="model_bytes column"):
        fast.cost("model_bytes")


def test_kept_columns_only(tmp_path):
    fast = read_fold_runs(_save(tmp_path, _random_runs(1)), columns=("accuracy", "fit_time"))
    assert sorted(fast.columns) == ["accuracy", "fit_time"]
    with pytest.raises(InputError, match="unknown metric 'auc'"):
        fast.column("auc")


# ---------------------------------------------------------------- bad files: the same errors
def _good_table() -> dict:
    return {"dataset": ["a", "a", "b", "b", "c"], "learner": ["x", "y", "x", "y", "x"], "repeat": [0, 0, 0, 0, 0],
            "fold": [0, 0, 0, 0, 1], "accuracy": [0.5, 0.6, 0.7, 0.8, 0.9], "fit_time": [1.0, 2.0, 3.0, 4.0, 5.0],
            "predict_time": [0.0] * 5, "status": ["ok"] * 5}


def _write(tmp_path: Path, columns: dict, name: str, metadata: dict | None = None) -> Path:
    table = pa.table(columns)
    if metadata:
        table = table.replace_schema_metadata(metadata)
    path = tmp_path / f"{name}.parquet"
    pq.write_table(table, path)
    return path


def _with(**changes) -> dict:
    table = _good_table()
    for k, v in changes.items():
        if v is None:
            table.pop(k)
        else:
            table[k] = v
    return table


BAD = {
    "duplicate": _with(fold=[0, 0, 0, 0, 0], dataset=["a", "a", "b", "b", "b"], learner=["x", "y", "x", "y", "y"]),
    "negative_fold": _with(fold=[0, -1, 0, -3, 0]),
    "unknown_status": _with(status=["ok", "done", "ok", "failed", "error"]),
    "accuracy_range": _with(accuracy=[0.5, 1.5, 0.7, -0.1, 0.9]),
    "accuracy_missing": _with(accuracy=[0.5, None, 0.7, 0.8, 0.9]),
    "negative_time": _with(fit_time=[1.0, -2.0, 3.0, 4.0, 5.0]),
    "infinite_predict": _with(predict_time=[0.0, 0.0, float("inf"), 0.0, 0.0]),
    "bad_auc": _with(auc=[0.5, 0.5, 2.0, 0.5, 0.5]),
    "infinite_log_loss": _with(log_loss=[0.5, float("inf"), 0.1, 0.2, 0.3]),
    "no_accuracy": _with(accuracy=None),
    "no_learner": _with(learner=None),
    "null_dataset": _with(dataset=["a", None, "b", "b", "c"]),
    "null_status": _with(status=["ok", None, "ok", "ok", "ok"]),
    "null_repeat": _with(repeat=[0, None, 0, 0, 0]),
    "float_fold": _with(fold=[0.0, 0.5, 0.0, 0.0, 1.0]),
    "string_auc": _with(auc=["0.5", "high", "0.5", "0.5", "0.5"]),
    "two_errors": _with(fold=[0, -1, 0, 0, 0], status=["ok", "weird", "ok", "ok", "ok"]),
    "empty": {k: v[:0] for k, v in _good_table().items()},
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_files_give_the_general_loaders_error(tmp_path, name):
    path = _write(tmp_path, BAD[name], name)
    with pytest.raises(InputError) as want:
        MetaDataset.load(path)
    with pytest.raises(InputError) as got:
        load_fold_runs(path)
    assert type(got.value) is type(want.value) and str(got.value) == str(want.value)
    if name in CHECKED_HERE:  # found by the fold-runs reader itself, not left to the general loader
        for keep in (None, ("accuracy",)):  # the columns not kept are checked without being kept
            with pytest.raises(InputError) as own:
                read_fold_runs(path, columns=keep)
            assert str(own.value) == str(want.value)


CHECKED_HERE = {"duplicate", "negative_fold", "unknown_status", "accuracy_range", "accuracy_missing", "negative_time",
                "infinite_predict", "bad_auc", "infinite_log_loss", "no_accuracy", "no_learner", "two_errors"}


def test_integer_ids_are_read_as_the_general_loader_reads_them(tmp_path):
    path = _write(tmp_path, _with(dataset=[1, 1, 2, 2, 3], learner=[7, 8, 7, 8, 7]), "integer_ids")
    assert read_fold_runs(path) is None  # not strings: the general loader makes them strings
    runs, meta = load_fold_runs(path), MetaDataset.load(path)
    assert runs.dataset_ids == ("1", "2", "3") == tuple(meta.dataset_ids)
    assert runs.learner_ids == ("7", "8") == tuple(meta.learner_ids)


@pytest.mark.parametrize("datasets", [
    pd.DataFrame({"dataset": ["a", "a"], "name": ["A", "A2"]}),
    pd.DataFrame({"dataset": ["a", "b"], "majority_fraction": [0.5, 1.5]}),
])
def test_bad_datasets_table_gives_the_same_error(tmp_path, datasets):
    meta = {b"algorank.datasets": datasets.to_json(orient="split", index=False).encode()}
    path = _write(tmp_path, _good_table(), "datasets", metadata=meta)
    with pytest.raises(InputError) as want:
        MetaDataset.load(path)
    with pytest.raises(InputError) as got:
        load_fold_runs(path)
    assert str(got.value) == str(want.value)


def test_unreadable_and_csv_files_go_to_the_general_loader(tmp_path):
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1 not really")
    assert read_fold_runs(broken) is None
    with pytest.raises(InputError) as want:
        MetaDataset.load(broken)
    with pytest.raises(InputError) as got:
        load_fold_runs(broken)
    assert str(got.value) == str(want.value) and str(want.value).startswith("cannot read meta-data file")
    csv = tmp_path / "runs.csv"
    MetaDataset(_random_runs(4)).save(csv)
    assert read_fold_runs(csv) is None
    assert load_fold_runs(csv).learner_ids == tuple(MetaDataset.load(csv).learner_ids)


def test_command_line_bad_file_is_one_line_exit_2(tmp_path):
    path = _write(tmp_path, BAD["duplicate"], "dup")
    run = subprocess.run([sys.executable, "-m", "algorank", "multitest", "--meta", str(path), "--json"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 2 and run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: duplicated (dataset, learner, repeat, fold) in rows 3, 4")


# ---------------------------------------------------------------- helpers
def test_duplicate_keys_on_small_integer_types_and_the_byte_map():
    rng = np.random.default_rng(0)
    for _ in range(50):
        n = int(rng.integers(2, 400))
        cols = [rng.integers(0, m, n).astype(t) for m, t in ((30, np.int16), (20, np.int32), (3, np.int8),
                                                                 (10, np.int64))]
        frame = pd.DataFrame({i: c for i, c in enumerate(cols)})
        assert has_duplicate_keys(*cols) == bool(frame.duplicated().any())
        np.testing.assert_array_equal(duplicate_rows(*cols), np.flatnonzero(frame.duplicated(keep=False)))
    a = np.array([0, 0, 1, 1], dtype=np.int16)
    b = np.array([0, 1, 0, 1], dtype=np.int8)
    assert not has_duplicate_keys(a, b, a[::-1].copy())
    assert has_duplicate_keys(np.r_[a, 1], np.r_[b, 0], np.zeros(5, dtype=np.int8))


def test_indented_json_is_json_dumps_byte_for_byte():
    rng = np.random.default_rng(1)
    scalars = [None, True, False, 0, -7, 2 ** 70, 0.1, -0.0, 1e-300, float("nan"), float("inf"), "", "é\u2028\"\\\n",
               np.float64(2.5), np.int64(3), np.bool_(False)]

    def value(depth):
        r = rng.random()
        if depth > 3 or r < 0.35:
            return scalars[int(rng.integers(len(scalars)))]
        if r < 0.6:
            return [value(depth + 1) for _ in range(int(rng.integers(0, 4)))]
        if r < 0.7:
            return tuple(str(rng.integers(9)) for _ in range(int(rng.integers(0, 3))))
        return {(str(i) if i % 2 else i): value(depth + 1) for i in range(int(rng.integers(0, 4)))}

    from algorank.metadata.io import to_plain

    for _ in range(500):
        v = value(0)
        assert json_dumps(v) == json.dumps(to_plain(v, json=True), indent=2, allow_nan=False)
        assert json_dumps(v, indent=None) == json.dumps(to_plain(v, json=True), allow_nan=False)


def test_more_ids_than_int16_holds_across_row_groups(tmp_path):
    n = 40_000
    runs = pd.DataFrame({"dataset": [f"d{i}" for i in range(n)] * 2, "learner": ["a"] * n + ["b"] * n, "repeat": 0,
                         "fold": 0, "accuracy": 0.5, "fit_time": 1.0})
    path = _save(tmp_path, runs)
    pq.write_table(pq.read_table(path), path, row_group_size=10_000)  # 8 row groups, each with its dictionary
    fast, meta = read_fold_runs(path), MetaDataset.load(path)
    assert fast.dataset_ids == tuple(meta.dataset_ids)
    np.testing.assert_array_equal(fast.dataset, meta.id_codes("dataset")[0])
    np.testing.assert_array_equal(fast.learner, meta.id_codes("learner")[0])
