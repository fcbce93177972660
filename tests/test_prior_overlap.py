"""The content check of prior datasets: the same values where the meta-data records their hash, else name AND shape."""

import json

import pandas as pd

from algorank import cli
from algorank.evaluation.cv.datasets import load_dataset
from algorank.metadata.dataset import MetaDataset
from algorank.recommender.live.overlap import describe_matches, overlap_matches


def _meta(rows):
    ds = pd.DataFrame(rows)
    runs = pd.DataFrame([{"dataset": d, "learner": l, "repeat": 0, "fold": 0, "accuracy": 0.8, "fit_time": 0.1}
                         for d in ds["dataset"] for l in ("a", "b")])
    return MetaDataset(runs, ds)


def test_the_name_alone_never_matches():
    # the meta-data's diabetes (Pima: 768 rows, 8 features, 2 classes) is not scikit-learn's diabetes
    meta = _meta([{"dataset": "diabetes", "name": "diabetes", "n_instances": 768, "n_features": 8, "n_classes": 2}])
    assert overlap_matches(meta, {"name": "diabetes", "n_instances": 442, "n_features": 10, "n_classes": 214}) == ()
    found = overlap_matches(meta, {"name": "diabetes", "n_instances": 768, "n_features": 8, "n_classes": 2})
    assert found == ({"dataset": "diabetes", "by": "name and shape", "shape": (768.0, 8.0, 2.0)},)
    assert describe_matches(found).startswith("diabetes (same name and shape: 768 rows, 8 features, 2 classes; the "
                                              "meta-data records no hash")
    # the same shape under another name is not enough either
    assert overlap_matches(meta, {"name": "pima", "n_instances": 768, "n_features": 8, "n_classes": 2}) == ()


def test_a_recorded_hash_decides_whatever_the_names():
    iris = load_dataset("sklearn:iris")
    info = {"name": "flowers", **iris.meta_features}
    meta = _meta([{"dataset": "iris-copy", "name": "iris-copy", "n_instances": 150, "n_features": 4, "n_classes": 3,
                   "fingerprint": iris.fingerprint()},
                  {"dataset": "flowers", "name": "flowers", "n_instances": 150, "n_features": 4, "n_classes": 3,
                   "fingerprint": "0" * 64}])
    found = overlap_matches(meta, info, fingerprint=iris.fingerprint())
    # the hash matches under another name; the same name and shape with another hash is other data
    assert [(m["dataset"], m["by"]) for m in found] == [("iris-copy", "values")]
    assert describe_matches(found) == "iris-copy (same values)"


def test_your_own_evaluate_run_is_recognised_by_its_values(capsys, tmp_path):
    out = tmp_path / "mine"
    assert cli.main(["evaluate", "sklearn:wine", "--learners", "lda", "--cv", "3", "--repeats", "1", "--no-store",
                     "--quiet", "--out", str(out), "--json"]) == 0
    capsys.readouterr()
    assert cli.main(["recommend", "sklearn:wine", "--meta", str(out / "runs.csv"), "--dry-run", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["prior_match_details"] == [{"dataset": "wine", "by": "values"}]


def test_features_count_as_read_or_after_the_column_rules(tmp_path):
    # meta-data built before the column rules counted flags' 'name' column (one value per row) as a feature
    rows = [f"n{i},{i % 3},{'ab'[i % 2]}" for i in range(30)]
    path = tmp_path / "flags.csv"
    path.write_text("name,x,class\n" + "\n".join(rows) + "\n")
    d = load_dataset(str(path))
    assert list(d.X.columns) == ["x"]
    meta = _meta([{"dataset": "flags", "name": "flags", "n_instances": 30, "n_features": 2, "n_classes": 2}])
    info = {"name": "flags", **d.meta_features}
    assert overlap_matches(meta, info) == ()
    assert [m["dataset"] for m in overlap_matches(meta, info, n_features_read=len(d.columns))] == ["flags"]
