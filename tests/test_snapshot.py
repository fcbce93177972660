"""The embedded LCDB snapshot: recorded checksum, counts, default meta-data."""

from __future__ import annotations

import importlib.util

import pytest

from algorank.metadata import snapshot_path, snapshot_record
from algorank.metadata.snapshot import file_sha256, load_meta, load_snapshot


def test_checksum_matches_record():
    record = snapshot_record()
    assert record["file"] == snapshot_path().name
    assert file_sha256(snapshot_path()) == record["sha256"]


def test_counts_match_record_and_issue(snapshot):
    record = snapshot_record()
    d = snapshot.describe()
    assert (d.datasets, d.learners, d.cells, d.runs) == (record["datasets"], record["learners"], record["cells"], record["runs"])
    assert d.datasets == 248 and d.learners == 20
    assert 4200 <= d.cells <= 4300  # issue: ~4,270 non-empty cells
    assert 115_000 <= d.runs <= 125_000  # ~120k run rows
    assert 0.13 < d.missing_fraction < 0.15  # LCDB: 14% missing
    assert snapshot_path().stat().st_size < 5_000_000  # a few MB


def test_snapshot_structure(snapshot):
    runs = snapshot.runs
    assert set(runs["fold"]) == {0}
    assert runs["predict_time"].isna().all()  # LCDB records no prediction time
    assert (runs["status"] == "ok").all()
    per_cell = runs.groupby(["dataset", "learner"]).size()
    assert per_cell.median() == 25  # 25 paired repeated-holdout scores per cell
    ds = snapshot.datasets
    assert ds["majority_fraction"].notna().sum() >= 190
    row = ds.set_index("dataset").loc["3"]  # kr-vs-kp: MajorityClassSize 1669 of 3196
    assert row["name"] == "kr-vs-kp"
    assert row["majority_fraction"] == pytest.approx(1669 / 3196)


def test_default_meta_is_the_broad_set():
    from algorank.metadata.snapshot import DEFAULT_META, load_embedded

    assert DEFAULT_META == "modern" and load_meta(None) is load_embedded("modern")
    assert load_meta(None, default="lcdb") is load_snapshot()


@pytest.mark.skipif(importlib.util.find_spec("lcdb") is None, reason="the lcdb extra is not installed")
def test_rebuild_reproduces_committed_snapshot(tmp_path):
    from algorank.metadata.snapshot import build_snapshot
    from algorank.metadata.dataset import MetaDataset

    record = build_snapshot(tmp_path)
    committed = snapshot_record()
    for key in ("datasets", "learners", "cells", "runs"):
        assert record[key] == committed[key]
    import pandas as pd

    rebuilt = MetaDataset.load(tmp_path / "lcdb_snapshot.parquet")
    pd.testing.assert_frame_equal(rebuilt.runs, load_snapshot().runs)


# ---------------------------------------------------------------- the evaluator-built 'uci' set
def test_uci_checksum_counts_and_provenance():
    from algorank.metadata.snapshot import embedded_path, embedded_record, load_embedded

    record = embedded_record("uci")
    path = embedded_path("uci")
    assert record["file"] == path.name and file_sha256(path) == record["sha256"]
    meta = load_embedded("uci")
    d = meta.describe()
    assert (d.datasets, d.learners, d.cells, d.runs) == (record["datasets"], record["learners"], record["cells"], record["runs"])
    assert d.learners == 20 and d.datasets >= 50
    assert "evaluator" in d.source and "MANIFEST" in record["selection"]


def test_uci_is_measured_like_a_live_test():
    from algorank.recommender.kernel.time_model import meta_time_kind

    meta = load_meta("uci")
    runs = meta.runs
    ok = runs[runs["status"] == "ok"]
    # stratified 5-fold CV, one repetition: five paired folds per cell
    assert set(runs["repeat"]) == {0} and set(runs["fold"]) == set(range(5))
    assert (ok.groupby(["dataset", "learner"]).size() == 5).all()
    # fit AND predict times are recorded, so the live time model ranks with both
    assert (ok["predict_time"] > 0).all() and meta_time_kind(meta) == "fit_predict_time"
    # every dataset carries the simple meta-features the similarity strategies use
    ds = meta.datasets
    assert ds[["n_instances", "n_features", "n_classes", "majority_fraction"]].notna().all().all()
    assert ds["source"].str.startswith("shared/datasets/").all()
    # failures are kept as failures (QDA on collinear data), not dropped
    assert (runs["status"] == "error").any()


def test_embedded_names_and_errors(tmp_path):
    from algorank.metadata.errors import InputError
    from algorank.metadata.snapshot import load_embedded

    assert load_meta("lcdb") is load_snapshot()
    assert load_meta(None, default="uci") is load_embedded("uci")
    with pytest.raises(InputError, match="unknown embedded meta-data"):
        load_embedded("nope")
    load_snapshot().subset(datasets=["3"]).save(tmp_path / "m.parquet")
    assert load_meta(str(tmp_path / "m.parquet")).dataset_ids == ["3"]
    with pytest.raises(InputError, match="not found"):
        load_meta(str(tmp_path / "uci.parquet"))
