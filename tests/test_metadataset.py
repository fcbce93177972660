"""MetaDataset: validation rules, matrix/paired/cost views, subsets, round trips, describe."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from algorank.metadata import InputError, MetaDataset, ValidationError


def _runs(**overrides) -> pd.DataFrame:
    """Two datasets, three learners, two paired repeats; learner C never ran on d2."""
    rows = []
    acc = {("d1", "A"): (0.8, 0.9), ("d1", "B"): (0.7, 0.7), ("d1", "C"): (0.6, 0.5),
           ("d2", "A"): (0.5, 0.6), ("d2", "B"): (0.9, 0.8)}
    time = {"A": 2.0, "B": 1.0, "C": 4.0}
    for (d, l), (a0, a1) in acc.items():
        for r, a in enumerate((a0, a1)):
            rows.append({"dataset": d, "learner": l, "repeat": r, "fold": 0, "accuracy": a,
                         "fit_time": time[l] * (r + 1), "predict_time": 0.5, "status": "ok"})
    df = pd.DataFrame(rows)
    for k, v in overrides.items():
        df[k] = v
    return df


@pytest.fixture
def meta() -> MetaDataset:
    datasets = pd.DataFrame({"dataset": ["d1", "d2"], "name": ["one", "two"], "source": ["test:1", "test:2"],
                             "n_instances": [100, 200], "n_features": [3, 4], "n_classes": [2, 3],
                             "majority_fraction": [0.5, 0.4], "extra_feature": [1.5, 2.5]})
    return MetaDataset(_runs(), datasets, source="unit test")


# ------------------------------------------------------------------ validation, one test per rule
def test_missing_required_column_is_named():
    with pytest.raises(ValidationError, match=r"missing required column\(s\): accuracy"):
        MetaDataset(_runs().drop(columns="accuracy"))


def test_accuracy_outside_unit_interval_names_rows_and_values():
    runs = _runs()
    runs.loc[3, "accuracy"] = 1.2
    with pytest.raises(ValidationError, match=r"'accuracy' must lie in \[0, 1\]; bad values \[1.2\] in rows 3"):
        MetaDataset(runs)


def test_negative_time_names_rows_and_values():
    runs = _runs()
    runs.loc[[1, 4], "fit_time"] = -1.0
    with pytest.raises(ValidationError, match=r"'fit_time' must be finite and >= 0; bad values \[-1.0, -1.0\] in rows 1, 4"):
        MetaDataset(runs)


def test_negative_predict_time_rejected():
    runs = _runs()
    runs.loc[0, "predict_time"] = -0.1
    with pytest.raises(ValidationError, match=r"'predict_time' must be finite and >= 0.*rows 0"):
        MetaDataset(runs)


def test_duplicated_key_names_rows_and_key():
    runs = pd.concat([_runs(), _runs().iloc[[2]]], ignore_index=True)
    with pytest.raises(ValidationError, match=r"duplicated \(dataset, learner, repeat, fold\) in rows 2, 10, e.g. \('d1', 'B', 0, 0\)"):
        MetaDataset(runs)


def test_unknown_status_names_values():
    runs = _runs()
    runs.loc[5, "status"] = "crashed"
    with pytest.raises(ValidationError, match=r"'status' must be one of ok, error, timeout; unknown values \['crashed'\] in rows 5"):
        MetaDataset(runs)


def test_non_integer_repeat_rejected():
    runs = _runs()
    runs["repeat"] = runs["repeat"].astype(float)
    runs.loc[0, "repeat"] = 0.5
    with pytest.raises(ValidationError, match=r"'repeat' must hold non-negative integers; bad values \[0.5\] in rows 0"):
        MetaDataset(runs)


def test_non_numeric_accuracy_rejected():
    runs = _runs()
    runs["accuracy"] = runs["accuracy"].astype(object)
    runs.loc[2, "accuracy"] = "high"
    with pytest.raises(ValidationError, match=r"'accuracy' must be numeric; non-numeric values in rows 2"):
        MetaDataset(runs)


def test_ok_run_needs_accuracy_but_failed_run_does_not():
    runs = _runs()
    runs.loc[0, "accuracy"] = np.nan
    with pytest.raises(ValidationError, match=r"required for status 'ok' but missing in rows 0"):
        MetaDataset(runs)
    runs.loc[0, "status"] = "error"
    meta = MetaDataset(runs)
    assert meta.describe().failed_runs == 1
    # the failed run is not part of the cell mean: only repeat 1 (0.9) is left for (d1, A)
    assert meta.matrix().loc["d1", "A"] == pytest.approx(0.9)


def test_majority_fraction_out_of_range_rejected():
    ds = pd.DataFrame({"dataset": ["d1", "d2"], "majority_fraction": [0.5, 1.5]})
    with pytest.raises(ValidationError, match=r"'majority_fraction'.*\[1.5\] in rows 1"):
        MetaDataset(_runs(), ds)


def test_empty_runs_rejected():
    with pytest.raises(ValidationError, match="runs table is empty"):
        MetaDataset(_runs().iloc[:0])


def test_defaults_for_predict_time_and_status():
    meta = MetaDataset(_runs().drop(columns=["predict_time", "status"]))
    assert (meta.runs["status"] == "ok").all()
    assert (meta.runs["predict_time"] == 0.0).all()


# ------------------------------------------------------------------ views
def test_matrix_has_nan_for_missing_cells(meta):
    m = meta.matrix("accuracy")
    assert list(m.index) == ["d1", "d2"] and list(m.columns) == ["A", "B", "C"]
    assert m.loc["d1", "A"] == pytest.approx(0.85)
    assert m.loc["d2", "B"] == pytest.approx(0.85)
    assert math.isnan(m.loc["d2", "C"])
    assert meta.matrix("accuracy", "median").loc["d1", "C"] == pytest.approx(0.55)
    assert meta.matrix("accuracy", "count").loc["d1", "C"] == 2


def test_cost_kinds(meta):
    assert meta.cost("fit_time").loc["d1", "C"] == pytest.approx(6.0)  # mean of 4 and 8
    assert meta.cost("fit_predict_time").loc["d1", "C"] == pytest.approx(6.5)
    with pytest.raises(InputError, match="model_bytes column"):
        meta.cost("model_bytes")
    with pytest.raises(InputError, match="cost kind must be one of"):
        meta.cost("energy")


def test_paired_aligns_by_split_and_reports_dropped(meta):
    p = meta.paired("d1", learners=["A", "C"])
    assert p.learners == ("A", "C")
    assert p.evaluations == ((0, 0), (1, 0))
    np.testing.assert_allclose(p.values, [[0.8, 0.9], [0.6, 0.5]])
    assert p.dropped == 0
    runs = meta.runs[~((meta.runs["learner"] == "A") & (meta.runs["repeat"] == 1))]
    p2 = MetaDataset(runs).paired("d1", learners=["A", "C"])
    assert p2.evaluations == ((0, 0),) and p2.dropped == 1
    with pytest.raises(InputError, match="learner.*C have no successful run on dataset 'd2'"):
        meta.paired("d2", learners=["A", "C"])


def test_subset_and_exclude(meta):
    sub = meta.subset(learners=["A", "B"])
    assert sub.learner_ids == ["A", "B"] and sub.dataset_ids == ["d1", "d2"]
    ex = meta.exclude(datasets=["d2"])
    assert ex.dataset_ids == ["d1"] and ex.datasets["dataset"].tolist() == ["d1"]
    assert ex.datasets.loc[0, "extra_feature"] == 1.5
    with pytest.raises(InputError, match="unknown dataset id"):
        meta.exclude(datasets=["zzz"])
    with pytest.raises(InputError, match="unknown learner id"):
        meta.subset(learners=["Q"])


def test_describe(meta):
    d = meta.describe()
    assert (d.datasets, d.learners, d.cells, d.runs) == (2, 3, 5, 10)
    assert d.missing_fraction == pytest.approx(1 / 6)
    assert (d.fit_time_min, d.fit_time_max) == (1.0, 8.0)
    assert d.repeats_per_cell_median == 2
    assert d.to_dict()["source"] == "unit test"


def test_dataset_info(meta):
    info = meta.dataset_info("d2")
    assert info["n_classes"] == 3 and info["majority_fraction"] == 0.4 and info["name"] == "two"
    with pytest.raises(InputError):
        meta.dataset_info("nope")


# ------------------------------------------------------------------ persistence
@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_round_trip(meta, tmp_path, suffix):
    path = meta.save(tmp_path / f"m{suffix}")
    back = MetaDataset.load(path)
    pd.testing.assert_frame_equal(back.runs, meta.runs, check_dtype=False)
    pd.testing.assert_frame_equal(back.datasets, meta.datasets, check_dtype=False)
    pd.testing.assert_frame_equal(back.matrix(), meta.matrix())
    if suffix == ".parquet":
        assert back.source == "unit test"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp leftovers


def test_load_errors(tmp_path):
    with pytest.raises(InputError, match="meta-data file not found"):
        MetaDataset.load(tmp_path / "nope.parquet")
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"this is not parquet")
    with pytest.raises(InputError, match="cannot read meta-data file"):
        MetaDataset.load(bad)
    txt = tmp_path / "m.txt"
    txt.write_text("x")
    with pytest.raises(InputError, match="expected a .parquet or .csv"):
        MetaDataset.load(txt)
    csv = tmp_path / "invalid.csv"
    _runs(accuracy=2.0).to_csv(csv, index=False)
    with pytest.raises(ValidationError, match="must lie in"):
        MetaDataset.load(csv)


def test_failed_save_leaves_no_file(meta, tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(pq, "write_table", boom)
    with pytest.raises(OSError):
        meta.save(tmp_path / "m.parquet")
    assert list(tmp_path.iterdir()) == []


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), st.floats(0, 1), st.floats(0, 1e4)),
                min_size=1, max_size=30, unique_by=lambda t: (t[0], t[1])))
def test_matrix_mean_matches_groupby(cells):
    runs = pd.DataFrame([{"dataset": f"d{d}", "learner": f"L{l}", "repeat": 0, "fold": 0,
                          "accuracy": a, "fit_time": t} for d, l, a, t in cells])
    meta = MetaDataset(runs)
    m = meta.matrix()
    assert m.notna().sum().sum() == len(cells)
    for d, l, a, _ in cells:
        assert m.loc[f"d{d}", f"L{l}"] == pytest.approx(a)
    assert meta.describe().missing_fraction == pytest.approx(1 - len(cells) / (m.shape[0] * m.shape[1]))


def test_concat_joins_disjoint_meta_data_and_refuses_shared_ids():
    a = MetaDataset(pd.DataFrame([
        {"dataset": "a1", "learner": "L0", "repeat": 0, "fold": 0, "accuracy": 0.9, "fit_time": 1.0,
         "auc": 0.95, "message": "x"},
        {"dataset": "a1", "learner": "L1", "repeat": 0, "fold": 0, "accuracy": 0.8, "fit_time": 2.0,
         "auc": 0.85, "message": ""},
    ]), pd.DataFrame({"dataset": ["a1"], "n_instances": [100], "n_classes": [2]}), source="A")
    b = MetaDataset(pd.DataFrame([
        {"dataset": "b1", "learner": "L0", "repeat": 0, "fold": 0, "accuracy": 0.7, "fit_time": 3.0},
    ]), source="B")
    ab = MetaDataset.concat([a, b])
    assert ab.dataset_ids == ["a1", "b1"] and ab.source == "A + B" and len(ab) == 3
    m = ab.matrix("accuracy")
    assert m.loc["a1", "L1"] == 0.8 and m.loc["b1", "L0"] == 0.7 and np.isnan(m.loc["b1", "L1"])
    assert np.isnan(ab.matrix("auc").loc["b1", "L0"])  # a metric b lacks is NaN there
    assert ab.dataset_info("a1")["n_instances"] == 100 and np.isnan(ab.dataset_info("b1")["n_instances"])
    assert MetaDataset.concat([a]) is a
    with pytest.raises(InputError, match="a1 occur in more than one"):
        MetaDataset.concat([a, a])
    with pytest.raises(InputError, match="at least one"):
        MetaDataset.concat([])
