"""``eit``: expected improvement per expected second (risk-aware cost), hand-computed small cases."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from algorank.recommender.kernel.trace import Observation
from algorank.metadata.dataset import MetaDataset
from algorank.metadata.errors import InputError
from algorank.recommender.ei import ConditionedStrategy
from algorank.recommender.expected_time import ExpectedTimeStrategy, risk_factor
from algorank.recommender.registry import parse_strategy


def test_risk_factor_is_the_lognormal_mean_over_the_median():
    assert float(risk_factor(0.0)) == 1.0
    # sigma = 0.5 log10 units = 0.5 ln 10 natural-log units: exp((0.5 ln 10)^2 / 2) = exp(0.66275) = 1.94010
    assert float(risk_factor(0.5)) == pytest.approx(math.exp((0.5 * math.log(10)) ** 2 / 2))
    assert float(risk_factor(0.5)) == pytest.approx(1.94010, rel=1e-5)
    assert float(risk_factor(0.5, kappa=2)) == pytest.approx(1.94010 ** 2, rel=1e-5)
    assert float(risk_factor(0.5, kappa=0)) == 1.0
    assert float(risk_factor(np.nan)) == 1.0  # no spread known: no penalty
    # the lognormal mean, checked by simulation: E[10^(s Z)] for Z standard normal
    z = np.random.default_rng(0).standard_normal(400_000)
    assert float(np.mean(10 ** (0.5 * z))) == pytest.approx(float(risk_factor(0.5)), rel=0.02)


def _meta():
    """Two learners, ``steady`` and ``wild``, on 4 datasets of 100..800 rows (10 features, 2 classes),
    0.001 * rows seconds each, equally accurate."""
    rows = []
    sizes = [100, 200, 400, 800]
    for i, n in enumerate(sizes):
        for learner in ("steady", "wild"):
            rows.append({"dataset": f"d{i}", "learner": learner, "repeat": 0, "fold": 0,
                         "accuracy": 0.8 + 0.01 * i, "fit_time": 1e-3 * n, "status": "ok"})
    ds = pd.DataFrame({"dataset": [f"d{i}" for i in range(4)], "n_instances": sizes, "n_features": 10,
                       "n_classes": 2, "majority_fraction": 0.5})
    return MetaDataset(pd.DataFrame(rows), ds)


def _fit(strategy, sigma=(0.0, 1.0)):
    """Fit on :func:`_meta`, then pin the runtime model by hand: log10 s = -3 + log10 rows for both
    learners (0.001 s per row), residual spread ``sigma`` (``steady`` exact, ``wild`` +-1 log10 unit)."""
    strategy.fit(_meta())
    assert strategy.risk_ == pytest.approx(risk_factor(strategy.runtime_.sigma, strategy.kappa))  # what fit sets
    coef = np.zeros((2, 6))
    coef[:, 0], coef[:, 1] = -3.0, 1.0
    strategy.runtime_ = replace(strategy.runtime_, coef=coef, sigma=np.array(sigma, dtype=float), growth=None)
    strategy.risk_ = risk_factor(strategy.runtime_.sigma, strategy.kappa)
    return strategy


INFO = {"n_instances": 300, "n_features": 10, "n_classes": 2, "majority_fraction": 0.5}


def test_cost_is_the_point_prediction_times_the_risk_factor():
    eit = _fit(ExpectedTimeStrategy(kappa=1.0, landmarks=False, growth=False))
    # steady: 0.3 s exactly; wild: 0.3 s times exp((ln 10)^2 / 2) = 14.1675
    assert eit._seconds(INFO) == pytest.approx([0.3, 0.3 * 14.1675], rel=1e-4)
    ei = ConditionedStrategy(landmarks=False, growth=False).fit(_meta())
    ei.runtime_ = eit.runtime_
    assert ei._seconds(INFO) == pytest.approx([0.3, 0.3], rel=1e-9)  # ei charges the point prediction
    flat = _fit(ExpectedTimeStrategy(kappa=0.0, landmarks=False, growth=False))
    assert flat._seconds(INFO) == pytest.approx([0.3, 0.3], rel=1e-9)  # kappa = 0 is ei's cost


def test_live_time_model_applies_scale_and_overhead_outside_the_risk():
    eit = _fit(ExpectedTimeStrategy(landmarks=False, growth=False).with_time_model(time_overhead=0.25, time_scale=5))
    assert eit._seconds(INFO) == pytest.approx([5 * 0.3 + 0.25, 5 * 0.3 * 14.1675 + 0.25], rel=1e-4)
    assert eit.name == "eit:kappa=1,h=1,p=1,landmarks=no,growth=no"  # copies keep the name, as ei's do


def test_unknown_sizes_are_averaged_over_the_prior_datasets():
    """Rows unknown: the mean of the predictions at the four prior sizes, 0.001 * mean(100, 200, 400, 800)
    = 0.375 s, not ei's prediction at the mean log size, 0.001 * geometric mean = 0.2828 s."""
    eit = _fit(ExpectedTimeStrategy(landmarks=False, growth=False))
    assert eit._seconds({"n_features": 10, "n_classes": 2})[0] == pytest.approx(0.375, rel=1e-9)
    ei = ConditionedStrategy(landmarks=False, growth=False).fit(_meta())
    ei.runtime_ = eit.runtime_
    assert ei._seconds({"n_features": 10, "n_classes": 2})[0] == pytest.approx(1e-3 * (100 * 200 * 400 * 800) ** 0.25,
                                                                               rel=1e-9)


def test_policy_prefers_the_predictable_learner():
    """Same accuracy prior; ``wild`` 10 % cheaper at the point prediction: ``ei`` takes it, ``eit`` takes
    ``steady`` (expected cost 0.3 s against 0.27 * 14.17 = 3.8 s)."""
    ei = ConditionedStrategy(landmarks=False, growth=False).fit(_meta())
    eit = _fit(ExpectedTimeStrategy(landmarks=False, growth=False))
    ei.runtime_ = replace(eit.runtime_, coef=eit.runtime_.coef - np.array([[0, 0, 0, 0, 0, 0],
                                                                              [math.log10(1 / 0.9), 0, 0, 0, 0, 0]]))
    eit.runtime_ = ei.runtime_
    pe, pt = ei.policy(INFO), eit.policy(INFO)
    assert pt.expected == pytest.approx([0.3, 0.27 * 14.1675], rel=1e-4)
    assert pe.next([]) == "wild"
    assert pt.next([]) == "steady"
    # a test that took 4 x its point prediction rescales every cost by 4, as in ei, the risk on top
    assert pt.cost(4.0) == pytest.approx(4.0 * pt.expected, rel=1e-9)
    assert pt.next([Observation("steady", 0.8, 1.2)]) == "wild"  # the only one left


def test_spec_parsing_and_errors():
    s = parse_strategy("eit:kappa=0.5,p=1/2")
    assert isinstance(s, ExpectedTimeStrategy) and s.kappa == 0.5 and s.p == 0.5 and s.name == "eit:kappa=0.5,p=1/2"
    assert parse_strategy("eit").kappa == 1.0
    with pytest.raises(InputError, match="kappa"):
        parse_strategy("eit:kappa=9")
    with pytest.raises(InputError, match="does not take"):
        parse_strategy("eit:bogus=1")
