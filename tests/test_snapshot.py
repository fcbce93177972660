"""The embedded LCDB snapshot: recorded checksum, counts, default meta-data."""

from __future__ import annotations

import importlib.util

import pytest

from metadata import snapshot_path, snapshot_record
from metadata.snapshot import file_sha256, load_meta, load_snapshot


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


def test_default_meta_is_the_snapshot():
    assert load_meta(None) is load_snapshot()


@pytest.mark.skipif(importlib.util.find_spec("lcdb") is None, reason="the lcdb extra is not installed")
def test_rebuild_reproduces_committed_snapshot(tmp_path):
    from metadata.snapshot import build_snapshot
    from metadata.dataset import MetaDataset

    record = build_snapshot(tmp_path)
    committed = snapshot_record()
    for key in ("datasets", "learners", "cells", "runs"):
        assert record[key] == committed[key]
    import pandas as pd

    rebuilt = MetaDataset.load(tmp_path / "lcdb_snapshot.parquet")
    pd.testing.assert_frame_equal(rebuilt.runs, load_snapshot().runs)
