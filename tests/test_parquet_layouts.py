"""Runs tables written by pandas in any layout read back as the same meta-data.

Row order, a stored pandas index (reversed, filtered, sorted, offset, string, MultiIndex), column
order and dtype variants (categorical strings, 32-bit integers and floats) never change which value
belongs to which run: the MetaDataset, ``rank``, ``export`` and ``info`` are the same.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from algorank import api
from algorank.metadata.dataset import MetaDataset
from algorank.metadata.fold_runs import load_fold_runs

KEY = ["dataset", "learner", "repeat", "fold"]


def base_runs() -> pd.DataFrame:
    """3 datasets x 3 learners x 2 folds; every accuracy and time distinct and exact in float32."""
    rows = []
    k = 0
    for d in ("d0", "d1", "d2"):
        for l in ("lda", "knn", "tree"):
            for f in (0, 1):
                k += 1
                rows.append({"dataset": d, "learner": l, "repeat": 0, "fold": f, "accuracy": k / 32,
                             "fit_time": k / 64, "predict_time": k / 256,
                             "status": "error" if k == 7 else "ok"})
    runs = pd.DataFrame(rows)
    runs.loc[runs["status"] != "ok", ["accuracy", "fit_time", "predict_time"]] = np.nan
    return runs


def canonical(meta: MetaDataset) -> pd.DataFrame:
    """The runs in key order, without the extra column some variants add."""
    return meta.runs.sort_values(KEY).reset_index(drop=True).drop(columns="note", errors="ignore")


TRUTH = MetaDataset(base_runs())


def check_same(path: Path, tmp: Path, *, ps=(0, "1/16")) -> None:
    """Everything read from ``path`` equals what the base table gives."""
    meta = MetaDataset.load(path)
    pd.testing.assert_frame_equal(canonical(meta), canonical(TRUTH))
    pd.testing.assert_frame_equal(meta.datasets, TRUTH.datasets)
    pd.testing.assert_frame_equal(meta.matrix(), TRUTH.matrix())
    for p in ps:
        want = api.rank(TRUTH, p=p, min_coverage=0)
        assert api.rank(str(path), p=p, min_coverage=0) == want
    want_info = TRUTH.describe().to_dict()
    got_info = api.info(str(path)).to_dict()
    assert got_info.pop("source") == f"file:{path.name}"
    want_info.pop("source")
    assert got_info == want_info
    out = tmp / "exported.parquet"
    result = api.export(str(path), out=str(out))
    assert (result.datasets, result.learners, result.runs) == (3, 3, 18)
    pd.testing.assert_frame_equal(canonical(MetaDataset.load(out)), canonical(TRUTH))
    folds = load_fold_runs(str(path))
    pd.testing.assert_frame_equal(folds.cost("fit_time"), TRUTH.cost("fit_time"))


# ------------------------------------------------------------------ the layouts pandas gives by default
def test_reversed_rows_keep_their_values(tmp_path):
    """``runs.iloc[::-1].to_parquet(p)`` stores the reversed index: no run takes another's accuracy."""
    p = tmp_path / "runs.parquet"
    base_runs().iloc[::-1].to_parquet(p)
    meta = MetaDataset.load(p)
    row = meta.runs[(meta.runs["learner"] == "lda") & (meta.runs["dataset"] == "d0") & (meta.runs["fold"] == 1)]
    assert row["accuracy"].tolist() == [2 / 32]
    check_same(p, tmp_path)


@pytest.mark.parametrize("how", ["mask", "sort"])
def test_filtered_or_sorted_frames_read(tmp_path, how):
    """``df[mask].to_parquet(p)`` and ``df.sort_values(...).to_parquet(p)`` store an index column."""
    runs = base_runs()
    if how == "mask":
        extra = runs.assign(dataset="gone")
        runs = pd.concat([extra.iloc[:5], runs, extra.iloc[5:]], ignore_index=True)
        frame = runs[runs["dataset"] != "gone"]
    else:
        frame = runs.sort_values(["accuracy", "learner"])
    p = tmp_path / "runs.parquet"
    frame.to_parquet(p)
    check_same(p, tmp_path)


def test_offset_range_index(tmp_path):
    """A RangeIndex from 100 is no reason for 'missing values'."""
    p = tmp_path / "runs.parquet"
    base_runs().set_axis(pd.RangeIndex(100, 118)).to_parquet(p)
    check_same(p, tmp_path)


def test_index_named_like_run_columns(tmp_path):
    """A table written with its key as a (named) MultiIndex reads those levels as the columns."""
    p = tmp_path / "runs.parquet"
    base_runs().set_index(["dataset", "learner"]).to_parquet(p)
    check_same(p, tmp_path)


def test_csv_with_written_index(tmp_path):
    """``to_csv`` writes the index as a nameless first column: it is not a column of the runs."""
    p = tmp_path / "runs.csv"
    base_runs().iloc[::-1].to_csv(p)
    check_same(p, tmp_path)
    assert not any(str(c).startswith("Unnamed") for c in MetaDataset.load(p).runs.columns)


def test_csv_trailing_comma_does_not_shift_columns(tmp_path):
    """A row with one field more than the header never moves the first column to an index."""
    p = tmp_path / "runs.csv"
    text = base_runs().to_csv(index=False).splitlines()
    p.write_text("\n".join([text[0]] + [line + "," for line in text[1:]]) + "\n")
    meta = MetaDataset.load(p)
    assert set(meta.dataset_ids) == {"d0", "d1", "d2"}
    pd.testing.assert_frame_equal(canonical(meta), canonical(TRUTH))


def test_csv_duplicated_header_refused(tmp_path):
    p = tmp_path / "runs.csv"
    runs = base_runs()
    runs.insert(5, "accuracy_b", runs["accuracy"][::-1].to_numpy())
    text = runs.to_csv(index=False).replace("accuracy_b", "accuracy", 1)
    p.write_text(text)
    with pytest.raises(Exception, match=r"duplicated column names: 'accuracy' \(columns 5 and 6\)"):
        MetaDataset.load(p)


# ------------------------------------------------------------------ any layout (hypothesis)
LAYOUTS = ["default", "permuted", "filtered", "offset", "string", "multi_named", "multi_unnamed"]


def layout(runs: pd.DataFrame, kind: str, rng_order) -> pd.DataFrame:
    n = len(runs)
    if kind == "default":
        return runs.reset_index(drop=True)
    if kind == "permuted":  # the index travels with the rows (iloc / sample)
        return runs
    if kind == "filtered":
        junk = runs.iloc[:3].assign(dataset="gone")
        both = pd.concat([junk, runs, junk])
        both.index = range(len(both))
        return both[both["dataset"] != "gone"]
    if kind == "offset":
        return runs.set_axis(pd.RangeIndex(100, 100 + n))
    if kind == "string":
        return runs.set_axis([f"r{i}" for i in rng_order])
    if kind == "multi_named":
        return runs.set_index(["dataset", "learner", "repeat", "fold"])
    return runs.set_axis(pd.MultiIndex.from_arrays([np.arange(n)[::-1], [f"x{i}" for i in range(n)]]))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(order=st.permutations(range(18)), kind=st.sampled_from(LAYOUTS), columns=st.randoms(use_true_random=False),
       categorical=st.booleans(), narrow_ints=st.booleans(), float32=st.booleans(), extra=st.booleans(),
       fmt=st.sampled_from(["parquet", "csv"]))
def test_any_layout_same_results(order, kind, columns, categorical, narrow_ints, float32, extra, fmt):
    runs = base_runs()
    if extra:
        runs = runs.assign(note=[f"n{i}" for i in range(len(runs))])
    runs = runs.iloc[list(order)]
    if categorical:
        runs = runs.astype({"dataset": "category", "learner": "category", "status": "category"})
    if narrow_ints:
        runs = runs.astype({"repeat": np.int32, "fold": np.int16})
    if float32:
        runs = runs.astype({"accuracy": np.float32, "fit_time": np.float32, "predict_time": np.float32})
    cols = list(runs.columns)
    columns.shuffle(cols)
    runs = layout(runs[cols], kind, order)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        p = tmp / f"runs.{fmt}"
        if fmt == "parquet":
            runs.to_parquet(p)
        else:
            runs.to_csv(p)
        if extra:  # an extra column is kept with its own run's value
            meta = MetaDataset.load(p)
            got = meta.runs.sort_values(KEY)
            want = base_runs().assign(note=[f"n{i}" for i in range(18)]).sort_values(KEY)
            assert got["note"].tolist() == want["note"].tolist()
        check_same(p, tmp, ps=("1/16",))


def test_parquet_duplicated_column_names_refused(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    runs = base_runs()
    arrays = [pa.array(runs[c]) for c in runs.columns] + [pa.array(runs["accuracy"][::-1].to_numpy())]
    p = tmp_path / "runs.parquet"
    pq.write_table(pa.Table.from_arrays(arrays, names=list(runs.columns) + ["accuracy"]), p)
    with pytest.raises(Exception, match=r"duplicated column names: 'accuracy' \(columns 5 and 9\)"):
        MetaDataset.load(p)
    with pytest.raises(Exception, match=r"duplicated column names: 'accuracy'"):
        load_fold_runs(str(p))


def test_frame_with_repeated_column_refused():
    runs = base_runs()
    twice = pd.concat([runs, runs[["accuracy"]]], axis=1)
    with pytest.raises(Exception, match=r"runs table has duplicated column names: 'accuracy' \(columns 5 and 9\)"):
        MetaDataset(twice)
