"""The ``modern`` meta-data: broad's files with the portfolio's learner groups joined (:mod:`algorank.evaluation.cv.modern`)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from algorank.evaluation.cv.modern import assemble_modern, compose_modern
from algorank.metadata.dataset import MetaDataset
from algorank.metadata.errors import InputError
from algorank.metadata.snapshot import embedded_available, embedded_record, load_meta
from algorank.metadata.splits import heldout


def _file(folder, dataset, learners, *, calibration=0.5, features=3, fit=1.0):
    runs = pd.DataFrame([{"dataset": dataset, "learner": l, "repeat": 0, "fold": f, "accuracy": 0.6 + 0.1 * f,
                          "fit_time": fit, "predict_time": fit / 10, "status": "ok"}
                         for l in learners for f in range(2)])
    datasets = pd.DataFrame([{"dataset": dataset, "name": dataset, "n_instances": 100, "n_features": features,
                              "n_classes": 2, "majority_fraction": 0.5, "calibration_s": calibration,
                              "build_folds": 2, "build_seed": 0, "build_cap_s": 120, "build_wall_s": 5.0,
                              "collection": "uci", "kind": "base", "family": dataset}])
    folder.mkdir(parents=True, exist_ok=True)
    MetaDataset(runs, datasets).save(folder / f"{dataset}.parquet")


def _layout(tmp_path):
    base, parts = tmp_path / "broad", tmp_path / "parts"
    for d in ("a", "b", "c"):
        _file(base, d, ["l1", "l2"], features=4 if d == "c" else 3)
    _file(parts / "lcdb_rebuilt", "c", ["l1", "l2"], features=3, fit=3.0)  # rebuilt under the current rules
    _file(parts / "defaults", "a", ["lgbm:default"], calibration=0.25, fit=2.0)
    _file(parts / "defaults", "c", ["lgbm:default"])
    return base, parts


def test_compose_replaces_rebuilt_files_and_joins_each_group(tmp_path):
    base, parts = _layout(tmp_path)
    before = {p.name: p.read_bytes() for p in base.glob("*.parquet")}
    out = compose_modern(tmp_path / "out", base_dir=base, parts_dir=parts)
    assert out == {"datasets": 3, "rebuilt": ["c"],
                   "groups": {"defaults": {"learners": ["lgbm:default"], "joined": 2, "missing": ["b"]}}}
    a = MetaDataset.load(tmp_path / "out" / "a.parquet")
    assert sorted(a.learner_ids) == ["l1", "l2", "lgbm:default"]
    # 2.0 s at calibration 0.25 is 4.0 s on the broad file's scale (0.5)
    assert list(a.runs.loc[a.runs.learner == "lgbm:default", "fit_time"]) == pytest.approx([4.0, 4.0])
    c = MetaDataset.load(tmp_path / "out" / "c.parquet")
    assert int(c.datasets["n_features"].iloc[0]) == 3
    assert list(c.runs.loc[c.runs.learner == "l1", "fit_time"]) == pytest.approx([3.0, 3.0])
    assert sorted(MetaDataset.load(tmp_path / "out" / "b.parquet").learner_ids) == ["l1", "l2"]
    assert {p.name: p.read_bytes() for p in base.glob("*.parquet")} == before  # the base is never written


def test_a_file_that_cannot_join_leaves_no_partial_set(tmp_path):
    base, parts = _layout(tmp_path)
    (parts / "lcdb_rebuilt" / "c.parquet").unlink()  # c's broad file has 4 features, the group 3
    with pytest.raises(InputError, match="differ in n_features"):
        compose_modern(tmp_path / "out", base_dir=base, parts_dir=parts)
    assert not list((tmp_path / "out").glob("*.parquet"))


def test_compose_refuses_a_folder_with_files(tmp_path):
    base, parts = _layout(tmp_path)
    _file(tmp_path / "out", "z", ["l1"])
    with pytest.raises(InputError, match="already holds"):
        compose_modern(tmp_path / "out", base_dir=base, parts_dir=parts)


def test_assemble_writes_the_set_and_its_record(tmp_path):
    base, parts = _layout(tmp_path)
    record = assemble_modern(parts, tmp_path / "emb", base_dir=base, shared_dir=tmp_path)
    meta = MetaDataset.load(tmp_path / "emb" / "modern_evaluator.parquet")
    assert sorted(meta.dataset_ids) == ["a", "b", "c"] and len(meta.learner_ids) == 3
    assert record["learner_groups"]["defaults"]["missing"] == ["b"] and record["rebuilt"] == ["c"]
    assert json.loads((tmp_path / "emb" / "modern_evaluator.json").read_text())["datasets"] == 3
    assert "learner groups below" in record["protocol"]


@pytest.mark.skipif(not embedded_available("modern"), reason="the modern set is not assembled")
def test_the_embedded_modern_set_extends_broad_on_the_same_datasets():
    modern, broad = load_meta("modern"), load_meta("broad")
    record = embedded_record("modern")
    assert set(modern.dataset_ids) == set(broad.dataset_ids)
    assert set(broad.learner_ids) < set(modern.learner_ids)
    assert {"histgb:default", "lgbm:default", "xgb:default", "catboost:default"} <= set(modern.learner_ids)
    assert sorted(record["learner_groups"]["defaults"]["learners"]) == sorted(
        ["histgb:default", "lgbm:default", "xgb:default", "catboost:default"])
    # same folds and protocol: a dataset that was not rebuilt keeps broad's LCDB runs exactly
    kept = next(d for d in broad.dataset_ids if d not in record["rebuilt"])
    cols = ["learner", "fold", "accuracy", "status"]
    one = modern.runs[(modern.runs.dataset == kept) & modern.runs.learner.isin(broad.learner_ids)][cols]
    ref = broad.runs[broad.runs.dataset == kept][cols]
    pd.testing.assert_frame_equal(one.sort_values(cols[:2]).reset_index(drop=True),
                                  ref.sort_values(cols[:2]).reset_index(drop=True))
    assert heldout("modern") == heldout("broad")
