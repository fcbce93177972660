"""The broad evaluator-built meta-data: selection rule, capped tests, per-dataset files,
resume, assembly, calibration and the Dask path."""

from __future__ import annotations

import importlib.util
import json
import math
import time

import numpy as np
import pandas as pd
import pytest

from algorank.evaluation.cv import metabuild
from algorank.evaluation.cv.datasets import dataset_from_frame, load_dataset
from algorank.evaluation.cv.metabuild import (NEAR_COPIES, BroadDataset, assemble_broad, build_meta, calibrate_machine,
                                  censor_timeouts, dataset_meta_features, evaluate_capped, rescale_times,
                                  select_datasets)
from algorank.metadata.dataset import MetaDataset
from algorank.metadata.errors import InputError
from algorank.metadata.snapshot import file_sha256

TREE = "sklearn.tree.DecisionTreeClassifier"
FAST = [TREE, "sklearn.naive_bayes.GaussianNB", "sklearn.discriminant_analysis.LinearDiscriminantAnalysis"]
SLOW_ON_FOLDS = 'helpers_estimators.SlowOnLargeClassifier{"delay": 30, "min_rows": 120}'
TIME_COLUMNS = ["fit_time", "predict_time"]


def _tiny_csv(path, *, n=60, k=2, seed=0):
    """A small mixed-type CSV: two numeric columns (one with missing values), one nominal, class."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, size=n)
    x1 = y + rng.normal(scale=0.7, size=n)
    x2 = rng.normal(size=n)
    x2[::7] = np.nan
    colour = np.where(rng.random(n) < 0.5, "red", "blue")
    pd.DataFrame({"x1": x1, "x2": x2, "colour": colour, "class": [f"c{v}" for v in y]}).to_csv(path, index=False)
    return path


@pytest.fixture()
def tiny_items(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    return [BroadDataset.from_file(_tiny_csv(folder / "alpha.csv", n=60, k=2, seed=1), collection="test"),
            BroadDataset.from_file(_tiny_csv(folder / "beta.csv", n=45, k=3, seed=2), collection="test",
                                   family="alpha")]


def _build(items, out, **kw):
    opts = dict(out_dir=out, cap=None, folds=2, learners=FAST, calibrate=False, progress=False)
    opts.update(kw)
    return build_meta(items, **opts)


# ---------------------------------------------------------------- selection rule on the real MANIFEST
def test_selection_rule_on_manifest(shared_dir):
    items = select_datasets(shared_dir)
    files = {i.file for i in items}
    by_collection = pd.Series([i.collection for i in items]).value_counts().to_dict()
    assert len(items) == 151
    assert by_collection == {"uci": 51, "keel": 45, "statlib": 42, "highdim": 13}
    assert "statlib/wseries.arff" not in files  # 3 labelled rows: fewer than the 5 folds
    assert sum(i.kind == "one-vs-rest" for i in items) == 27
    # near-copies dropped, the copy kept for each selected (the README's eight among them)
    for dropped, (kept, _) in NEAR_COPIES.items():
        assert dropped not in files and kept in files, dropped
    for name in ("letter", "optdigits", "mushroom", "iris", "wine", "tic-tac-toe", "tae"):
        assert f"keel/{name}.csv" in NEAR_COPIES and any(f.startswith(f"uci/{name}.") for f in files)
    assert "keel/penbased.csv" not in files and "uci/pendigits.arff" in files
    # every large and every wide classification dataset is in (itself or the copy kept for it)
    m = pd.read_csv(shared_dir / "datasets" / "MANIFEST.csv")
    big = m[(m["classes"] >= 2) & ((m["instances"] > 10_000) | (m["features"] > 100))]
    assert len(big) >= 16
    for f in big["file"]:
        assert f in files or NEAR_COPIES[f][0] in files, f
    assert {"uci/letter.arff", "uci/nursery.arff", "uci/pendigits.arff", "keel/magic.csv",
            "highdim/arcene.parquet"} <= files
    # ids unique, cheapest first, families group derived tasks with their base data
    ids = [i.dataset for i in items]
    assert len(set(ids)) == len(ids)
    cost = [i.instances * i.features for i in items]
    assert cost == sorted(cost)
    fam = {i.dataset: i.family for i in items}
    assert fam["glass1"] == fam["glass4"] == fam["glass"] == "glass"
    assert fam["sick"] == fam["hypothyroid"] and fam["iris"] == "iris"
    assert {i.target for i in items if i.file == "uci/autos.arff"} == {"symboling"}


def test_selection_only_and_bad_input(shared_dir, tmp_path):
    assert [i.dataset for i in select_datasets(shared_dir, only=["iris", "letter"])] == ["iris", "letter"]
    with pytest.raises(InputError, match="penbased"):
        select_datasets(shared_dir, only=["penbased"])  # a dropped near-copy is not selectable
    with pytest.raises(InputError, match="MANIFEST"):
        select_datasets(tmp_path)


# ---------------------------------------------------------------- timeouts are lower bounds
def test_censor_timeouts_hand_computed():
    rows = [("d", "A", f, "ok", 1.0, 0.1) for f in (0, 1)]
    rows += [("d", "A", 2, "timeout", 20.5, math.nan), ("d", "A", 3, "timeout", 0.0, math.nan),
             ("d", "A", 4, "timeout", 0.0, math.nan)]
    rows += [("d", "B", f, "ok", 2.0, 0.5) for f in range(5)]
    rows += [("d", "C", f, "timeout", math.nan, math.nan) for f in range(5)]
    runs = pd.DataFrame(rows, columns=["dataset", "learner", "fold", "status", "fit_time", "predict_time"])
    out = censor_timeouts(runs, 60.0)
    a = out[out["learner"] == "A"]["fit_time"].to_numpy()
    share = (60.0 - 2.2) / 3
    np.testing.assert_allclose(a, [1.0, 1.0, 20.5, share, share])  # measured 20.5 kept, it is above the share
    assert a.sum() + 0.2 >= 60.0
    np.testing.assert_allclose(out[out["learner"] == "B"]["fit_time"], 2.0)  # finished tests unchanged
    np.testing.assert_allclose(out[out["learner"] == "C"]["fit_time"], 12.0)  # never NaN: cap / 5 each
    assert out["predict_time"].isna().sum() == runs["predict_time"].isna().sum()
    with pytest.raises(InputError, match="cap"):
        censor_timeouts(runs, 0)


def test_capped_test_is_killed_and_matches_in_process(tmp_path):
    data = load_dataset(str(_tiny_csv(tmp_path / "gamma.csv", n=300, k=2, seed=3)))
    # the fold server's start counts against a test's cap (its warm-up may not outlast the test): start it
    # first, with a generous cap, so that 1.5 s is about the folds even where starting takes seconds
    assert (evaluate_capped(data, [TREE], cap=120, folds=2)["status"] == "ok").all()
    capped = evaluate_capped(data, [TREE, SLOW_ON_FOLDS], cap=1.5, folds=2,
                             allow_modules=["helpers_estimators"])
    slow = capped[capped["learner"] == SLOW_ON_FOLDS]
    assert slow["fit_time"].iloc[0] < 20  # the recorded time: killed at the cap, not after the 30 s sleep
    assert list(slow["status"]) == ["timeout", "timeout"]
    assert "exceeded the 1.5 s cap" in slow["message"].iloc[0] and slow["message"].iloc[1].startswith("not run")
    assert slow["fit_time"].notna().all() and slow["fit_time"].sum() >= 1.5
    assert slow["fit_time"].iloc[0] >= 1.4  # the killed fold really ran up to the cap (after the warm-up)
    # the tree's test in its own child gives exactly the in-process numbers (the pickled size differs by a
    # few bytes between a forkserver child and the parent, as in the evaluator's own timeout path)
    plain = evaluate_capped(data, [TREE], cap=None, folds=2)
    tree = capped[capped["learner"] == TREE].reset_index(drop=True)
    assert (tree["status"] == "ok").all()
    np.testing.assert_allclose(tree["model_bytes"], plain["model_bytes"], rtol=0.01)
    cols = [c for c in plain.columns if c not in TIME_COLUMNS + ["model_bytes"]]
    pd.testing.assert_frame_equal(tree[cols], plain[cols])


# ---------------------------------------------------------------- per-dataset files, resume, assemble
def test_per_dataset_file_round_trips(tiny_items, tmp_path):
    summary = _build(tiny_items, tmp_path / "parts")
    assert [b["dataset"] for b in sorted(summary.built, key=lambda b: b["dataset"])] == ["alpha", "beta"]
    assert not summary.failed and not summary.skipped
    path = tmp_path / "parts" / "alpha.parquet"
    meta = MetaDataset.load(path)
    assert meta.dataset_ids == ["alpha"] and meta.learner_ids == sorted(FAST)
    assert len(meta.runs) == 3 * 2 and set(meta.runs["fold"]) == {0, 1} and (meta.runs["status"] == "ok").all()
    row = meta.dataset_info("alpha")
    assert row["n_instances"] == 60 and row["n_features"] == 3 and row["n_classes"] == 2
    assert row["n_features_onehot"] == 4 and row["nominal_fraction"] == pytest.approx(1 / 3)
    assert 0 <= row["landmark_1nn"] <= 1 and 0 <= row["landmark_stump"] <= 1 and row["landmark_rows"] == 60
    assert row["collection"] == "test" and row["family"] == "alpha" and math.isnan(row["calibration_s"])
    assert row["source"] == "file:alpha.csv" and row["build_folds"] == 2
    assert MetaDataset.load(tmp_path / "parts" / "beta.parquet").dataset_info("beta")["family"] == "alpha"
    again = MetaDataset.load(meta.save(tmp_path / "copy.parquet"))
    pd.testing.assert_frame_equal(again.runs, meta.runs)
    pd.testing.assert_frame_equal(again.datasets, meta.datasets)
    assert not list((tmp_path / "parts").glob(".*"))  # no temporary files left behind


def test_rerun_skips_built_datasets(tiny_items, tmp_path, monkeypatch):
    out = tmp_path / "parts"
    _build(tiny_items, out)
    calls = []
    real = metabuild.build_dataset

    def counting(item, **kw):
        calls.append(item.dataset)
        return real(item, **kw)

    monkeypatch.setattr(metabuild, "build_dataset", counting)
    summary = _build(tiny_items, out)
    assert calls == [] and sorted(s["dataset"] for s in summary.skipped) == ["alpha", "beta"]
    (out / "beta.parquet").unlink()
    summary = _build(tiny_items, out)
    assert calls == ["beta"] and [b["dataset"] for b in summary.built] == ["beta"]


def test_assemble_counts(tiny_items, tmp_path):
    parts = tmp_path / "parts"
    _build(tiny_items, parts)
    # a third dataset whose LDA test timed out: two timeout rows censored to the cap
    runs = pd.DataFrame({"dataset": "gamma", "learner": FAST * 2, "repeat": 0, "fold": [0, 0, 0, 1, 1, 1],
                         "accuracy": [0.9, 0.8, np.nan, 0.7, 0.6, np.nan], "fit_time": [0.1, 0.1, 3.0, 0.1, 0.1, 0.0],
                         "predict_time": [0.01, 0.01, np.nan, 0.01, 0.01, np.nan],
                         "status": ["ok", "ok", "timeout", "ok", "ok", "timeout"], "message": ""})
    MetaDataset(censor_timeouts(runs, 10.0), pd.DataFrame([{"dataset": "gamma", "collection": "test",
                                                             "family": "gamma", "calibration_s": 0.3}])
                ).save(parts / "gamma.parquet")
    record = assemble_broad(parts, tmp_path / "embedded", shared_dir=tmp_path)
    target = tmp_path / "embedded" / "broad_evaluator.parquet"
    assert record["sha256"] == file_sha256(target) and record["bytes"] == target.stat().st_size
    assert json.loads((tmp_path / "embedded" / "broad_evaluator.json").read_text()) == record
    assert (record["datasets"], record["learners"], record["runs"]) == (3, 3, 18)
    assert (record["ok_runs"], record["error_runs"], record["timeout_runs"]) == (16, 0, 2)
    assert record["timeout_tests"] == 1 and record["cells"] == 8
    assert record["collections"] == {"test": 3} and record["calibration"]["median_s"] == pytest.approx(0.3)
    assert record["missing"] == [] and record["complete"] and "near-copies" in record["selection"]
    meta = MetaDataset.load(target)
    lda = meta.runs[(meta.runs["dataset"] == "gamma") & (meta.runs["status"] == "timeout")]
    assert lda["fit_time"].sum() >= 10.0 - 0.22  # the test is at least the cap long
    with pytest.raises(InputError, match="no per-dataset"):
        assemble_broad(tmp_path / "empty", tmp_path / "embedded2")
    with pytest.raises(InputError, match="max_bytes"):
        assemble_broad(parts, tmp_path / "embedded3", shared_dir=tmp_path, max_bytes=100)
    assert not (tmp_path / "embedded3" / "broad_evaluator.parquet").exists()


def test_assemble_lists_missing_selected_datasets(shared_dir, tmp_path):
    item = next(i for i in select_datasets(shared_dir) if i.dataset == "analcatdata_esr")
    _build([item], tmp_path / "parts", shared_dir=shared_dir, learners=[TREE])
    record = assemble_broad(tmp_path / "parts", tmp_path / "embedded", shared_dir=shared_dir)
    assert record["datasets"] == 1 and len(record["missing"]) == 150 and not record["complete"]
    meta = MetaDataset.load(tmp_path / "embedded" / "broad_evaluator.parquet")
    assert meta.dataset_info("analcatdata_esr")["source"] == "shared/datasets/statlib/analcatdata_esr.arff"


# ---------------------------------------------------------------- meta-features, calibration
def test_meta_features_hand_computed():
    frame = pd.DataFrame({"a": [0.0, 0.1, 0.2, 5.0, 5.1, 5.2, np.nan, 5.3],
                          "b": ["x", "y", "x", "z", "z", "z", "x", None],
                          "class": ["p", "p", "p", "q", "q", "q", "p", "q"]})
    data = dataset_from_frame(frame, name="hand", source="test")
    mf = dataset_meta_features(data)
    assert mf["n_features_onehot"] == 1 + 3 and mf["nominal_fraction"] == 0.5
    assert mf["class_entropy"] == pytest.approx(1.0) and mf["class_entropy_normalized"] == pytest.approx(1.0)
    assert mf["missing_fraction"] == pytest.approx(2 / 16) and mf["landmark_rows"] == 8
    assert mf["landmark_1nn_time"] > 0 and mf["landmark_stump_time"] > 0
    clean = dataset_from_frame(pd.DataFrame({"a": [0.0, 0.1, 0.2, 0.3, 0.4, 5.0, 5.1, 5.2, 5.3, 5.4],
                                             "class": list("pppppqqqqq")}), name="clean", source="test")
    mf = dataset_meta_features(clean)  # separable by one threshold: both landmarkers are perfect
    assert mf["landmark_1nn"] == 1.0 and mf["landmark_stump"] == 1.0
    big = dataset_from_frame(pd.DataFrame({"a": np.arange(3000.0), "class": ["u", "v", "w"] * 1000}),
                             name="big", source="test")
    assert dataset_meta_features(big, max_rows=500)["landmark_rows"] == 500
    skew = dataset_meta_features(dataset_from_frame(pd.DataFrame({"a": np.arange(4.0), "class": list("pppq")}),
                                                    name="s", source="test"))
    assert skew["class_entropy"] == pytest.approx(-(0.75 * np.log2(0.75) + 0.25 * np.log2(0.25)))


def test_calibration_and_rescale():
    seconds = calibrate_machine(repeats=1)
    assert 0 < seconds < 30 and math.isfinite(seconds)
    runs = pd.DataFrame({"fit_time": [1.0, 2.0], "predict_time": [0.5, np.nan]})
    out = rescale_times(runs, from_calibration=0.2, to_calibration=0.4)
    np.testing.assert_allclose(out["fit_time"], [2.0, 4.0])
    assert out["predict_time"].iloc[0] == 1.0 and np.isnan(out["predict_time"].iloc[1])
    assert runs["fit_time"].iloc[0] == 1.0  # a copy
    with pytest.raises(InputError, match="from_calibration"):
        rescale_times(runs, from_calibration=0, to_calibration=1)
    with pytest.raises(InputError, match="repeats"):
        calibrate_machine(repeats=0)


# ---------------------------------------------------------------- the Dask path
@pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                    reason="distributed is not installed (pip install 'algorank[test]')")
def test_dask_localcluster_gives_the_same_rows(tiny_items, tmp_path):
    import joblib
    from distributed import Client, LocalCluster, get_task_stream

    _build(tiny_items, tmp_path / "seq")
    # two threads: with one, joblib sees n_jobs == 1 and runs everything in the caller, bypassing Dask
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as client, joblib.parallel_backend("dask"), get_task_stream(client) as stream:
        summary = _build(tiny_items, tmp_path / "dask", n_jobs=-1)
    assert len(stream.data) >= 2 and len(summary.built) == 2  # the datasets really ran as Dask tasks
    for name in ("alpha", "beta"):
        seq = MetaDataset.load(tmp_path / "seq" / f"{name}.parquet")
        dsk = MetaDataset.load(tmp_path / "dask" / f"{name}.parquet")
        cols = [c for c in seq.runs.columns if c not in TIME_COLUMNS]
        pd.testing.assert_frame_equal(seq.runs[cols], dsk.runs[cols])
        drop = [c for c in seq.datasets.columns if c.endswith("_time") or c == "build_wall_s"]
        pd.testing.assert_frame_equal(seq.datasets.drop(columns=drop), dsk.datasets.drop(columns=drop))


# ---------------------------------------------------------------- registration and the command line
def test_broad_is_an_embedded_name():
    from algorank.metadata.snapshot import EMBEDDED, embedded_path, embedded_record, load_embedded

    assert EMBEDDED["broad"] == ("broad_evaluator.parquet", "broad_evaluator.json")
    if embedded_path("broad").is_file():
        record = embedded_record("broad")
        d = load_embedded("broad").describe()
        assert file_sha256(embedded_path("broad")) == record["sha256"]
        assert (d.datasets, d.learners, d.runs) == (record["datasets"], record["learners"], record["runs"])
    else:
        with pytest.raises(InputError, match="broad"):
            load_embedded("broad")


def test_cli_build_meta(tiny_items, tmp_path, capsys):
    from cli import main

    assert main(["build-meta", "--cap", "-5", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "cap" in err and len(err.strip().splitlines()) == 1
    assert main(["build-meta", "--assemble", "--out", str(tmp_path / "nothing"), "--quiet"]) == 2
    _build(tiny_items, tmp_path / "parts")
    capsys.readouterr()
    code = main(["build-meta", "--assemble", "--out", str(tmp_path / "parts"), "--assemble-to", str(tmp_path),
                 "--shared", str(tmp_path), "--json", "--quiet"])
    record = json.loads(capsys.readouterr().out)
    assert code == 0 and record["datasets"] == 2 and record["runs"] == 12
    assert main(["info", "--meta", str(tmp_path / "broad_evaluator.parquet"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["datasets"] == 2


def test_cli_list_selection(shared_dir, capsys):
    from cli import main

    assert main(["build-meta", "--list", "--shared", str(shared_dir), "--json"]) == 0
    items = json.loads(capsys.readouterr().out)
    assert len(items) == 151 and items[0]["source"].startswith("shared/datasets/")
    assert main(["build-meta", "--list", "--shared", str(shared_dir), "--datasets", "keel/iris"]) == 2
