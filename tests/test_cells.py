"""Vectorised loading helpers (metadata.cells): the same numbers as pandas' groupby, the same ids as sorted()."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from algorank.metadata.cells import cell_means, has_duplicate_keys, read_parquet_runs, sorted_codes
from algorank.metadata.dataset import MetaDataset
from algorank.metadata.errors import ValidationError


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("runs_per_cell", [1, 3, 25])
def test_cell_means_are_the_groupby_means_of_the_id_strings_bit_for_bit(seed, runs_per_cell):
    rng = np.random.default_rng(seed)
    n_d, n_l = 30, 20
    d, l = np.divmod(rng.permutation(np.repeat(np.arange(n_d * n_l), runs_per_cell)), n_l)
    keep = rng.random(len(d)) > 0.1
    d, l = d[keep], l[keep]
    values = np.round(rng.uniform(0.5, 0.99, len(d)), 5) * 10.0 ** rng.integers(-3, 4, len(d))
    values[rng.random(len(d)) < 0.05] = np.nan
    values[:2] = -0.0
    frame = pd.DataFrame({"dataset": [f"d{i}" for i in d], "learner": [f"L{j}" for j in l], "v": values})
    (dc, ds), (lc, ls) = sorted_codes(frame["dataset"]), sorted_codes(frame["learner"])
    ref = frame.groupby(["dataset", "learner"], sort=True)["v"].mean().unstack("learner")
    ref = ref.reindex(index=ds, columns=ls).to_numpy().ravel()
    got = cell_means(dc * len(ls) + lc, values, len(ds) * len(ls))
    assert np.array_equal(np.isnan(ref), np.isnan(got))
    fin = ~np.isnan(ref)
    assert np.array_equal(ref[fin].view(np.int64), got[fin].view(np.int64))  # same bits, signed zeros too


def test_sorted_codes_follow_python_sorting():
    values = pd.Series(["b", "a", "Zeta", "a", "é", "b10", "b9"], dtype="str")
    codes, ids = sorted_codes(values)
    assert ids == sorted(set(values))
    assert [ids[c] for c in codes] == list(values)


def test_duplicate_keys():
    d = np.array([0, 0, 1, 1])
    l = np.array([0, 1, 0, 1])
    assert not has_duplicate_keys(d, l, np.zeros(4), np.zeros(4))
    assert not has_duplicate_keys(np.zeros(4), np.zeros(4), np.zeros(4), np.arange(4))
    assert has_duplicate_keys(np.zeros(4), np.zeros(4), np.zeros(4), np.array([0, 1, 2, 1]))


def _runs(n=6, k=5, folds=2):
    rows = [{"dataset": f"d{d}é" if d % 2 else f"D{d}", "learner": f"L{j}", "repeat": 0, "fold": f,
             "accuracy": 0.5 + 0.01 * ((d * 7 + j * 3 + f) % 40), "fit_time": 0.1 * (j + 1) + 0.001 * f,
             "predict_time": 0.0, "status": "timeout" if (d, j) == (1, 2) else "ok"}
            for d in range(n) for j in range(k) for f in range(folds) if (d + j) % 4]
    frame = pd.DataFrame(rows)
    frame.loc[frame["status"] == "timeout", "accuracy"] = np.nan
    return frame


def test_parquet_load_reads_codes_from_chunked_dictionaries(tmp_path):
    runs = _runs()
    path = tmp_path / "runs.parquet"
    pq.write_table(pa.Table.from_pandas(runs, preserve_index=False), path, row_group_size=7)
    loaded, codes, _ = read_parquet_runs(path)
    pd.testing.assert_frame_equal(loaded.astype({"dataset": object, "learner": object, "status": object}),
                                  runs.astype({"dataset": object, "learner": object, "status": object}))
    for col in ("dataset", "learner"):
        ref_codes, ref_ids = sorted_codes(runs[col])
        assert codes[col][1] == ref_ids
        np.testing.assert_array_equal(codes[col][0], ref_codes)
    meta = MetaDataset.load(path)
    built = MetaDataset(runs)
    for metric in ("accuracy", "fit_time", "fit_predict_time"):
        pd.testing.assert_frame_equal(meta.matrix(metric), built.matrix(metric))
        ok = runs[runs["status"] == "ok"]
        frame = pd.DataFrame({"dataset": ok["dataset"], "learner": ok["learner"],
                              "v": ok["fit_time"] + ok["predict_time"] if metric == "fit_predict_time"
                              else ok[metric]})
        ref = frame.groupby(["dataset", "learner"])["v"].mean().unstack("learner")
        ref = ref.reindex(index=meta.dataset_ids, columns=meta.learner_ids)
        np.testing.assert_array_equal(meta.matrix(metric).to_numpy(), ref.to_numpy())
    assert meta.dataset_ids == sorted(set(runs["dataset"])) and meta.learner_ids == sorted(set(runs["learner"]))


def test_a_duplicated_run_is_still_reported_when_loading(tmp_path):
    runs = _runs()
    runs = pd.concat([runs, runs.iloc[[3]]], ignore_index=True)
    path = tmp_path / "dup.parquet"
    pq.write_table(pa.Table.from_pandas(runs, preserve_index=False), path)
    with pytest.raises(Exception, match="duplicated"):
        MetaDataset.load(path)
    with pytest.raises(ValidationError, match="duplicated"):
        MetaDataset(runs)
