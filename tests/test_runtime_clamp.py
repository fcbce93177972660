"""The runtime model's predictions stay in a physical range: the learner's observed times, widened by
a factor of 10 and scaled by how far the dataset lies outside the meta-data's sizes."""

from __future__ import annotations

import dataclasses
import logging
import math

import numpy as np
import pytest

from algorank.metadata.snapshot import load_meta
from algorank.recommender.ei import ConditionedStrategy
from algorank.recommender.runtime_model import RuntimeModel, fit_runtime_model, runtime_features

SIX = ["analcatdata_boxing1", "arrhythmia", "backache", "column3C", "haberman", "primary.tumor"]
IRIS = {"n_instances": 150, "n_features": 4, "n_classes": 3}


def _model(intercept: float) -> RuntimeModel:
    """Every learner predicts ``10 ** intercept`` s; observed 0.1 .. 2 s on 100 .. 1,000 rows, 10 .. 100
    features, 2 classes."""
    coef = np.zeros((1, 6))
    coef[0, 0] = intercept
    return RuntimeModel(learners=("a",), coef=coef, sigma=np.array([0.3]), fill=np.array([2.5, 1.5, math.log10(2)]),
                        seconds_range=np.array([[-1.0, math.log10(2.0)]]),
                        size_range=np.array([[2.0, 3.0], [1.0, 2.0], [math.log10(2), math.log10(2)]]))


def test_inside_the_range_unchanged():
    assert _model(0.0).predict(IRIS)[0] == 1.0


def test_upper_bound_hand_computed():
    # 100,000 rows: 2 decades above the largest, power 3; 10 features and 2 classes inside: 2 s x 10 x 100 ** 3
    info = {"n_instances": 1e5, "n_features": 10, "n_classes": 2}
    assert _model(20.0).predict(info)[0] == pytest.approx(2e7, rel=1e-12)
    # 3 classes: also above the most classes (power 1)
    info["n_classes"] = 3
    assert _model(20.0).predict(info)[0] == pytest.approx(2e7 * 1.5, rel=1e-12)
    # 1,000 features: one decade above the most, power 2
    info.update(n_classes=2, n_features=1000)
    assert _model(20.0).predict(info)[0] == pytest.approx(2e7 * 100, rel=1e-12)


def test_lower_bound_hand_computed():
    # 10 rows: one decade below the fewest, power 1: 0.1 s / 10 / 10
    info = {"n_instances": 10, "n_features": 10, "n_classes": 2}
    assert _model(-10.0).predict(info)[0] == pytest.approx(1e-3, rel=1e-12)
    # 150 rows inside; 4 features: 4/10 of the fewest (power 1)
    assert _model(-10.0).predict(IRIS)[0] == pytest.approx(0.1 / 10 * 0.4, rel=1e-12)


def test_nan_coefficients_give_a_bounded_number():
    model = _model(float("nan"))
    assert model.predict(IRIS)[0] == pytest.approx(2.0 * 10 * 1.5)  # the upper bound: 3 classes of at most 2


def test_no_clamping_where_the_model_fits_its_data():
    # time = 1e-5 * rows exactly: predictions from 10 to 10 million rows follow the law, none is clamped
    rows = np.array([100, 200, 500, 1000, 2000, 5000, 10000.0])
    x = runtime_features([{"n_instances": n, "n_features": 10, "n_classes": 2} for n in rows])
    model = fit_runtime_model((1e-5 * rows)[:, None], x, ["lin"], lam=0.0)
    q = runtime_features([{"n_instances": n, "n_features": 10, "n_classes": 2} for n in (10, 1e7)])
    unclamped = dataclasses.replace(model, seconds_range=None, size_range=None)
    np.testing.assert_allclose(model.predict_log10(q), unclamped.predict_log10(q))
    np.testing.assert_allclose(10 ** model.predict_log10(q)[:, 0], [1e-4, 100.0], rtol=1e-6)


def test_six_dataset_meta_data_predicts_seconds_not_1e34(caplog):
    """Six datasets used to extrapolate 2e+34 s for a quadratic discriminant on iris's 150 rows."""
    meta = load_meta("uci").subset(datasets=SIX)
    with caplog.at_level(logging.WARNING, logger="algorank.recommender.runtime_model"):
        strategy = ConditionedStrategy().fit(meta)
        seconds = strategy.runtime_.predict(IRIS)
    runtime = strategy.runtime_
    raw = dataclasses.replace(runtime, seconds_range=None, size_range=None).predict(IRIS)
    qda = runtime.learners.index("sklearn.discriminant_analysis.QuadraticDiscriminantAnalysis")
    assert raw[qda] > 1e30  # what the model says without the range
    seconds_seen = strategy_seconds(meta, runtime.learners)
    assert np.isnan(seconds_seen[:, qda]).all()  # no time of its own on these six: all learners' range
    # iris lies inside the six datasets' sizes (120..452 rows, 3..279 features, 2..21 classes): 10 x the longest
    assert seconds[qda] == pytest.approx(10 * np.nanmax(seconds_seen), rel=1e-9)
    assert np.isfinite(seconds).all() and (seconds <= 10 * np.nanmax(seconds_seen) * (1 + 1e-9)).all()
    assert "extrapolates far outside its meta-data" in caplog.text and "QuadraticDiscriminantAnalysis" in caplog.text


def strategy_seconds(meta, learners) -> np.ndarray:
    from algorank.recommender.kernel.environments import meta_arrays

    arrays = meta_arrays(meta, time_kind=ConditionedStrategy().time_kind)
    assert tuple(arrays.learners) == tuple(learners)
    return arrays.seconds
