"""Dataset loading: formats, target choice, clear errors, and a walk over ../shared/datasets."""

from __future__ import annotations

import csv
import time

import numpy as np
import pandas as pd
import pytest

from algorank.evaluation.cv.datasets import load_dataset
from algorank.evaluation.cv.evaluator import Evaluator
from algorank.metadata.errors import InputError


def test_sklearn_iris_meta_features():
    d = load_dataset("sklearn:iris")
    assert d.source == "sklearn:iris"
    assert d.X.shape == (150, 4)
    assert d.classes == ("setosa", "versicolor", "virginica")
    m = d.meta_features
    assert (m["n_instances"], m["n_features"], m["n_classes"]) == (150, 4, 3)
    assert m["majority_fraction"] == pytest.approx(1 / 3)
    assert np.bincount(d.y_codes).tolist() == [50, 50, 50]


def test_csv_class_column_anywhere_and_missing_labels_dropped(tmp_path, caplog):
    p = tmp_path / "toy.csv"
    p.write_text("Class,x,colour\na,1.0,red\nb,2.0,?\n,3.0,blue\na,4.0,red\nb,,blue\n")
    with caplog.at_level("WARNING"):
        d = load_dataset(str(p))
    assert d.target == "Class"
    assert d.meta_features["dropped_rows"] == 1
    assert "dropped 1 row" in caplog.text
    assert list(d.y) == ["a", "b", "a", "b"]
    assert isinstance(d.X["colour"].dtype, pd.CategoricalDtype)
    assert d.X["x"].isna().sum() == 1 and d.X["colour"].isna().sum() == 1


def test_csv_last_nominal_column_and_explicit_integer_target(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("a,b,label\n1,0,x\n2,1,y\n3,0,x\n4,1,y\n")
    assert load_dataset(str(p)).target == "label"
    d = load_dataset(str(p), target="b")  # integer labels named explicitly are accepted
    assert d.classes == ("0", "1")


@pytest.mark.parametrize(
    "content, target, match",
    [
        ("a,b\n1,0\n2,1\n3,0\n", None, "no nominal target"),  # a numeric last column of 0/1 codes
        ("a,b,y\n1,0.5,x\n2,1.5,x\n", None, "single class"),
        ("a,y\n1,x\n2,y\n", "nope", "not an attribute"),
        ("a,b\n0.1,0.5\n0.2,0.5\n", "b", "single value"),  # a fractional target: a quantity, but constant
    ],
)
def test_csv_errors(tmp_path, content, target, match):
    p = tmp_path / "bad.csv"
    p.write_text(content)
    with pytest.raises(InputError, match=match):
        load_dataset(str(p), target=target)


def test_file_errors(tmp_path):
    with pytest.raises(InputError, match="not found"):
        load_dataset(str(tmp_path / "missing.arff"))
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(InputError, match="empty"):
        load_dataset(str(empty))
    bad = tmp_path / "bad.arff"
    bad.write_text("@relation r\n@attribute x integer [1,10]\n@attribute class {a,b}\n@data\n1,a\n")
    with pytest.raises(InputError, match="cannot parse ARFF"):
        load_dataset(str(bad))
    with pytest.raises(InputError, match="unknown dataset format .*save a spreadsheet as CSV$"):
        (tmp_path / "x.xlsx").write_text("x")
        load_dataset(str(tmp_path / "x.xlsx"))
    with pytest.raises(InputError, match="unknown scikit-learn dataset"):
        load_dataset("sklearn:mnist")
    with pytest.raises(InputError, match="positive integer"):
        load_dataset("openml:abc")


def test_arff_numeric_declared_target_rejected_and_nominal_features(tmp_path):
    p = tmp_path / "r.arff"
    p.write_text("@relation r\n@attribute colour {red,blue}\n@attribute size numeric\n@attribute y {p,q}\n"
                 "@data\nred,1,p\nblue,?,q\n?,3,p\nred,4,q\n")
    d = load_dataset(str(p))
    assert d.target == "y" and d.meta_features["n_nominal_features"] == 1
    assert d.meta_features["missing_fraction"] == pytest.approx(2 / 8)
    # a numeric attribute is read by the task rule: 3 distinct whole numbers are labels, each of one row here
    with pytest.raises(InputError, match="3 classes of one row each"):
        load_dataset(str(p), target="size")
    asked = load_dataset(str(p), target="size", task="regression")  # 3 rows with a value: a quantity, as asked
    assert asked.task == "regression" and asked.y.tolist() == [1.0, 3.0, 4.0]


def test_parquet_roundtrip(tmp_path):
    p = tmp_path / "d.parquet"
    pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "target": ["u", "v", "u", "v"]}).to_parquet(p)
    d = load_dataset(str(p))
    assert d.target == "target" and d.classes == ("u", "v")


def test_fingerprint_depends_on_content():
    a = load_dataset("sklearn:iris")
    assert a.fingerprint() == load_dataset("sklearn:iris").fingerprint()
    assert a.fingerprint() != load_dataset("sklearn:wine").fingerprint()


# ---------------------------------------------------------------- shared datasets
def test_target_choice_on_quirky_shared_files(shared_dir):
    base = shared_dir / "datasets"
    assert load_dataset(str(base / "uci/spectf.train.arff")).target == "OVERALL_DIAGNOSIS"  # class is first
    assert load_dataset(str(base / "uci/wine.arff")).target == "class"  # class is not last
    aids = load_dataset(str(base / "statlib/analcatdata_aids.arff"))  # Sex, Age, Race, then numeric counts
    assert aids.task == "regression" and aids.target == "Total" and list(aids.X.columns) == ["Sex", "Age", "Race", "AIDS"]
    with pytest.raises(InputError, match="BadAttributeType"):
        load_dataset(str(base / "uci/zoo.arff"))


def test_every_manifest_file_evaluates_or_fails_with_one_line(shared_dir):
    """Walk MANIFEST.csv: each file loads and evaluates a fast learner on a 2-fold cv, or fails clearly."""
    base = shared_dir / "datasets"
    rows = list(csv.DictReader(open(base / "MANIFEST.csv")))
    assert len(rows) > 100
    ev = Evaluator(scheme="cv", cv=2, repeats=1, progress=False)
    outcomes = {}
    regression = set()
    start = time.perf_counter()
    for r in rows:
        path = str(base / r["file"])
        try:
            d = load_dataset(path, target=r["target"] or None)
            # keep the walk fast: evaluate big files on a sample of their rows, wide files on a sample of their
            # features (every file is still loaded whole)
            keep = np.arange(len(d.y))
            if len(keep) > 3000:
                keep = np.random.default_rng(0).choice(len(keep), 1500, replace=False)
            columns = np.arange(d.X.shape[1])
            if len(columns) > 500:
                columns = np.sort(np.random.default_rng(0).choice(len(columns), 500, replace=False))
            if len(keep) < len(d.y) or len(columns) < d.X.shape[1]:
                d = type(d)(d.name, d.source, d.X.iloc[keep, columns].reset_index(drop=True),
                            d.y.iloc[keep].reset_index(drop=True), d.target,
                            () if d.task == "regression" else tuple(sorted(d.y.iloc[keep].unique())),
                            d.meta_features, task=d.task)
            if d.task == "regression":  # a numeric last attribute read as a quantity: a regressor runs
                res = ev.evaluate(d, ["decision-tree-reg"])
                assert res.summary["status"].iloc[0] == "ok", (r["file"], res.failures)
                assert np.isfinite(res.summary["r2_mean"].iloc[0])
                regression.add(r["file"])
            else:
                res = ev.evaluate(d, ["sklearn.tree.DecisionTreeClassifier"])
                assert res.summary["status"].iloc[0] == "ok", (r["file"], res.failures)
            assert 0 <= res.summary["accuracy_mean"].iloc[0] <= 1
            outcomes[r["file"]] = "ok"
        except InputError as exc:
            msg = str(exc)
            assert "\n" not in msg and len(msg) < 400, msg
            outcomes[r["file"]] = msg
    elapsed = time.perf_counter() - start
    failed = {f: m for f, m in outcomes.items() if m != "ok"}
    # the manifest's notes say exactly which files cannot be classification data
    for r in rows:
        note = r["note"]
        if "does not parse" in note:
            assert "cannot parse ARFF" in failed[r["file"]]
        elif "no nominal class" in note:
            if r["file"] in ("statlib/confidence.arff", "statlib/lupus.arff"):
                # exactly one nominal attribute: rule 3 of algorank.evaluation.cv.datasets takes it (with a warning)
                assert outcomes[r["file"]] == "ok"
            else:  # a regression now, unless its values look like class labels (then no target is chosen)
                assert (r["file"] in regression or "no nominal target" in failed[r["file"]]
                        or "nothing to predict" in failed[r["file"]])  # cjs: its last attribute has one value
        elif "only one class" in note:
            assert "single class" in failed[r["file"]]
    assert "fewer" in failed.get("statlib/wseries.arff", "fewer") or "needs at least" in failed["statlib/wseries.arff"]
    assert len(outcomes) - len(failed) >= 80
    assert elapsed < 600  # a margin for a loaded machine: the loader is linear in the cells
