"""The model ``recommend()`` returns predicts the user's own labels: their type and their values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import algorank
from algorank.evaluation.cv.datasets import as_dataset
from algorank.recommender.live.labels import original_labels


@pytest.fixture(scope="module")
def cancer():
    from sklearn.datasets import load_breast_cancer

    return load_breast_cancer(as_frame=True)


def _recommend(X, y):
    return algorank.recommend(X, y=y, budget=30, top=1, cv=3, strategy="ar:p=0", exclude_datasets=["wdbc"])


@pytest.mark.parametrize("kind", ["int", "bool", "str", "category"])
def test_predictions_keep_the_target_type(cancer, kind):
    y = {"int": cancer.target.astype(np.int64) + 10,  # values other than the codes 0/1
         "bool": cancer.target.astype(bool),
         "str": cancer.target.map({0: "malignant", 1: "benign"}),
         "category": cancer.target.map({0: "malignant", 1: "benign"}).astype("category")}[kind]
    pred = _recommend(cancer.data, y).model.predict(cancer.data.head(50))
    if kind in ("str", "category"):  # strings: object, or NumPy's own string type (scikit-learn's MLP returns it)
        assert pred.dtype == object or pred.dtype.kind == "U"
        assert all(isinstance(v, str) for v in pred)
    else:
        assert np.issubdtype(pred.dtype, {"int": np.integer, "bool": np.bool_}[kind])
    assert set(pred) <= set(np.asarray(y)) and (pred == np.asarray(y)[:50]).mean() > 0.8
    if kind == "int":
        assert set(pred) <= {10, 11}


def test_breast_cancer_integer_target_round_trips(cancer):
    df = cancer.frame  # integer column "target"
    rec = algorank.recommend(df, target="target", budget=30, top=2, cv=3, exclude_datasets=["wdbc"])
    pred = rec.model.predict(cancer.data)
    assert pred.dtype.kind == "i"
    assert (pred == cancer.target).mean() > 0.9  # was 0.0 when the model predicted the strings '0'/'1'


def test_labels_align_with_rows_whose_target_is_missing():
    df = pd.DataFrame({"x": [0.0, 1.0, 2.0, 3.0, 4.0, 5.0], "target": pd.array([1, 2, None, 1, 2, 1], dtype="Int64")})
    data = as_dataset(df, "target")
    labels = original_labels(df, data)
    assert labels.tolist() == [1, 2, 1, 2, 1] and labels.dtype == np.int64
    assert [str(v) for v in labels] == data.y.tolist()
    assert original_labels("sklearn:iris", as_dataset("sklearn:iris")) is None  # a file's labels are its text


def test_labels_that_collide_as_text_fall_back_to_text():
    X = pd.DataFrame({"x": np.arange(6.0)})
    y = np.array([1, "1", 2, 2, 1, "1"], dtype=object)  # 1 and "1" are the same text label
    data = as_dataset(X, y=y)
    assert original_labels(X, data, y=y) is None
