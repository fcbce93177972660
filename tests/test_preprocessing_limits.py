"""Preprocessing limits: high-cardinality nominal columns are capped to the most
frequent levels (bounded memory, one warning), identically in the CV path and the final model."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from algorank.evaluation.cv.datasets import as_dataset
from algorank.evaluation.cv.preprocessing import (MAX_LEVELS, FrameEncoder, encode_dataset, encode_features,
                                                  make_preprocessor)


def _high_cardinality(n_levels=250, seed=0):
    rng = np.random.default_rng(seed)
    # level i appears (n_levels - i) // 50 + 1 times: the first levels are the most frequent
    values = [f"L{i:03d}" for i in range(n_levels) for _ in range((n_levels - i) // 50 + 1)]
    rng.shuffle(values)
    n = len(values)
    return pd.DataFrame({"x": rng.normal(size=n), "city": pd.Categorical(values), "small": rng.choice(["a", "b"], n)})


def test_high_cardinality_columns_keep_their_most_frequent_levels(caplog):
    X = _high_cardinality()
    with caplog.at_level(logging.WARNING):
        M, nominal = encode_features(X)
    assert nominal == (False, True, True)
    codes = M[:, 1]
    kept = codes < MAX_LEVELS
    # the 100 most frequent levels are L000..L099 (in category order): their own codes; the rest "other"
    expected = np.array([int(v[1:]) if int(v[1:]) < MAX_LEVELS else MAX_LEVELS for v in X["city"]])
    assert np.array_equal(codes, expected) and kept.sum() < len(codes)
    assert set(np.unique(M[:, 2])) == {0.0, 1.0}  # small columns untouched
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1 and "city (250 levels)" in lines[0] and "small" not in lines[0]
    # the one-hot block of the column is bounded: numeric + (MAX_LEVELS + 1) + 2 columns
    out = make_preprocessor(nominal).fit(M).transform(M)
    assert out.shape[1] == 1 + (MAX_LEVELS + 1) + 2


def test_the_dataset_encoding_warns_once_and_the_final_model_codes_like_the_cv_path(caplog):
    X = _high_cardinality()
    data = as_dataset(X.assign(y=np.arange(len(X)) % 2), "y")
    with caplog.at_level(logging.WARNING):
        first = encode_dataset(data)
        second = encode_dataset(data)
    assert first is second and first[2] == (f"levels<={MAX_LEVELS}",)
    assert sum("most frequent" in r.getMessage() for r in caplog.records) == 1
    enc = FrameEncoder().fit(data.X)
    assert enc.capped_ == ["city"]
    np.testing.assert_array_equal(enc.transform(data.X), first[0])
    # a rare level and a level never seen in fit both go to "other"; a kept level keeps its code
    new = pd.DataFrame({"x": [0.0, 0.0, 0.0], "city": ["L249", "never-seen", "L007"], "small": ["a", "a", "b"]})
    assert list(enc.transform(new)[:, 1]) == [MAX_LEVELS, MAX_LEVELS, 7.0]


def test_few_levels_are_not_touched():
    X = pd.DataFrame({"c": pd.Categorical(["u", "v", "w", None])})
    M, _ = encode_features(X)
    assert np.array_equal(M[:3, 0], [0.0, 1.0, 2.0]) and np.isnan(M[3, 0])
    assert FrameEncoder().fit(X).capped_ == []


def test_infinite_values_are_missing_values_with_one_warning(caplog):
    X = pd.DataFrame({"a": [1.0, np.inf, 3.0, 5.0], "b": [-np.inf, 2.0, np.inf, 4.0], "c": [1.0, 2.0, 3.0, 4.0]})
    data = as_dataset(X.assign(y=["p", "q", "p", "q"]), "y")
    with caplog.at_level(logging.WARNING):
        M, _, notes = encode_dataset(data)
        encode_dataset(data)
    assert np.isnan(M[1, 0]) and np.isnan(M[0, 1]) and np.isnan(M[2, 1]) and np.isfinite(M[:, 2]).all()
    lines = [r.getMessage() for r in caplog.records if "inf" in r.getMessage()]
    assert len(lines) == 1 and "a (1 values)" in lines[0] and "b (2 values)" in lines[0] and "c (" not in lines[0]
    assert notes == ("inf=missing",)
    # imputed with the training median like NaN, so the fold matrix is finite
    out = make_preprocessor((False, False, False), scaling="none").fit(M).transform(M)
    assert np.isfinite(out).all() and out[1, 0] == 3.0  # median of 1, 3, 5
    # also when a fitted preprocessor meets inf directly
    raw = np.array([[np.inf, 1.0, 1.0]])
    assert np.isfinite(make_preprocessor((False, False, False)).fit(M).transform(raw)).all()


def test_infinite_values_no_longer_fail_every_learner(tmp_path, capsys, caplog):
    from algorank import cli

    rng = np.random.default_rng(0)
    x = rng.normal(size=60)
    x[::7] = np.inf
    x[3] = -np.inf
    path = tmp_path / "inf.csv"
    pd.DataFrame({"x": x, "z": rng.normal(size=60), "class": np.where(rng.normal(size=60) > 0, "a", "b")}).to_csv(
        path, index=False)
    with caplog.at_level(logging.WARNING):
        code = cli.main(["evaluate", str(path), "--learners", "lda", "sklearn.naive_bayes.GaussianNB", "--cv", "3",
                         "--no-store"])
    out, err = capsys.readouterr()
    assert code == 0 and "failed" not in out and out.count(" ok") == 2, out
    warned = [r.getMessage() for r in caplog.records if "+-inf" in r.getMessage()]
    assert len(warned) == 1 and "x (10 values)" in warned[0]
