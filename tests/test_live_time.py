"""Live time model: T = scale * t + overhead, its calibration, and its use by ar / at / lt."""

import math

import numpy as np
import pandas as pd
import pytest

from algorank.recommender.kernel.environments import meta_arrays
from algorank.recommender.kernel.time_model import LIVE_OVERHEAD, TimeModel, calibrate_overhead, live_time_model
from algorank.metadata.dataset import MetaDataset
from algorank.metadata.errors import InputError
from algorank.recommender.a3r import a3r_prime
from algorank.recommender.active_testing import ActiveTesting
from algorank.recommender.average_ranking import AverageRanking
from algorank.recommender.registry import parse_strategy
from algorank.recommender.lt import LossTimeOrder

A, B = "learner.A", "learner.B"


def _meta(cells):
    """cells: {dataset: {learner: (accuracy, fit_time)}}."""
    rows = [{"dataset": d, "learner": l, "repeat": 0, "fold": 0, "accuracy": a, "fit_time": t}
            for d, row in cells.items() for l, (a, t) in row.items()]
    return MetaDataset(pd.DataFrame(rows))


# A is fast and a bit worse, B slower and better.  With P = 1/4:
#   recorded times:  A3R'(A) = 0.90 / 0.001 ** 0.25 = 5.061,  A3R'(B) = 0.99 / 0.02 ** 0.25 = 2.633  -> A first
#   live (5 x t + 0.25 s): T_A = 0.255, T_B = 0.35;
#                    A3R'(A) = 0.90 / 0.255 ** 0.25 = 1.2666, A3R'(B) = 0.99 / 0.35 ** 0.25 = 1.2871 -> B first
CELLS = {"d1": {A: (0.90, 0.001), B: (0.99, 0.02)}}


def test_time_model_hand_computed():
    m = TimeModel(overhead=0.25, scale=5)
    np.testing.assert_allclose(m.apply([0.001, 0.02, np.nan]), [0.255, 0.35, np.nan])
    assert m.describe() == "5 x fit + 0.25 s" and not m.is_identity
    assert TimeModel().is_identity and TimeModel().describe() == "fit"
    assert live_time_model(3, overhead=0.1) == TimeModel(overhead=0.1, scale=3)
    assert live_time_model(5).overhead == LIVE_OVERHEAD


@pytest.mark.parametrize("kw", [{"overhead": -0.1}, {"overhead": math.inf}, {"scale": 0}, {"scale": math.nan}])
def test_time_model_rejects_bad_values(kw):
    with pytest.raises(InputError, match="time_(overhead|scale)"):
        TimeModel(**kw)


def test_time_model_arrays():
    arrays = meta_arrays(_meta(CELLS))
    assert TimeModel().arrays(arrays) is arrays  # identity: the same object
    live = TimeModel(overhead=0.25, scale=5).arrays(arrays)
    np.testing.assert_allclose(live.seconds, [[0.255, 0.35]])
    np.testing.assert_array_equal(live.accuracy, arrays.accuracy)
    np.testing.assert_allclose(arrays.seconds, [[0.001, 0.02]])  # the original is untouched


def test_calibrate_overhead_hand_computed():
    # wall seconds minus 5 x mean fit time: 0.30 - 0.05 = 0.25, 1.00 - 0.60 = 0.40, 0.22 - 0.02 = 0.20 -> median 0.25
    assert calibrate_overhead([0.30, 1.00, 0.22, np.nan], [0.01, 0.12, 0.004, 0.1], 5) == pytest.approx(0.25)
    assert calibrate_overhead([0.1], [0.5], 5) == 0.0  # never negative
    with pytest.raises(InputError):
        calibrate_overhead([np.nan], [0.1], 5)
    with pytest.raises(InputError):
        calibrate_overhead([0.1, 0.2], [0.1], 5)


def test_average_ranking_default_is_unchanged_and_live_model_reorders():
    meta = _meta(CELLS)
    plain = AverageRanking(p=0.25)
    assert plain.time_model.is_identity
    np.testing.assert_allclose(plain.dataset_scores([0.9, 0.99], [0.001, 0.02]),
                               a3r_prime([0.9, 0.99], [0.001, 0.02], p=0.25))
    assert plain.fit(meta).order_ == [A, B]
    live = AverageRanking(p=0.25, time_overhead=0.25, time_scale=5)
    np.testing.assert_allclose(live.dataset_scores([0.9, 0.99], [0.001, 0.02]),
                               [0.9 / 0.255 ** 0.25, 0.99 / 0.35 ** 0.25])
    assert live.fit(meta).order_ == [B, A]
    copy = plain.with_time_model(time_overhead=0.25, time_scale=5)
    assert copy.fit(meta).order_ == [B, A] and copy.name == plain.name
    # leave-one-dataset-out fast path agrees with refitting under the model
    cells = {**CELLS, "d2": {A: (0.8, 0.002), B: (0.85, 0.01)}, "d3": {A: (0.7, 0.001), B: (0.9, 0.5)}}
    arrays = meta_arrays(_meta(cells))
    loo = live.loo_orders(arrays)
    for d, ds in enumerate(arrays.datasets):
        refit = AverageRanking(p=0.25, time_overhead=0.25, time_scale=5).fit(_meta(cells).exclude(datasets=[ds]))
        assert [arrays.learners[j] for j in loo[d] if j >= 0] == refit.order_


def test_spec_parameters():
    s = parse_strategy("ar:p=1/4,overhead=0.25,scale=5")
    assert (s.time_overhead, s.time_scale) == (0.25, 5.0)
    assert parse_strategy("ar:p=1/4").time_model.is_identity
    at = parse_strategy("at:p=1/4,sim=none,overhead=0.25,scale=5")
    assert at.time_model == TimeModel(0.25, 5)
    lt = parse_strategy("lt:h=inf,overhead=0.25,scale=5")
    assert lt.with_window(0.1, 10).time_model == TimeModel(0.25, 5)
    for bad in ("ar:overhead=-1", "ar:scale=0", "at:overhead=x"):
        with pytest.raises(InputError, match="overhead|scale"):
            parse_strategy(bad)


def test_at_and_lt_use_the_model_like_transformed_meta_data():
    cells = {f"d{i}": {A: (0.9 - 0.01 * i, 0.001), B: (0.99 - 0.02 * i, 0.02 * (i + 1)),
                       "learner.C": (0.85, 0.005)} for i in range(5)}
    arrays = meta_arrays(_meta(cells))
    live = TimeModel(overhead=0.25, scale=5)
    at = ActiveTesting(p=0.25, time_overhead=0.25, time_scale=5)
    np.testing.assert_array_equal(at.loo_orders(arrays), ActiveTesting(p=0.25).loo_orders(live.arrays(arrays)))
    assert at.fit(arrays).order_ == ActiveTesting(p=0.25).fit(live.arrays(arrays)).order_
    lt = LossTimeOrder(h="inf", p=0.25, tmin=0.1, tmax=10, time_overhead=0.25, time_scale=5)
    ref = LossTimeOrder(h="inf", p=0.25, tmin=0.1, tmax=10)
    assert lt.fit(arrays).order_for({}) == ref.fit(live.arrays(arrays)).order_for({})
    assert lt.with_time_model().time_model.is_identity


def test_describe_names_the_time_kind_and_default_overhead_follows_it():
    from algorank.recommender.kernel.time_model import LIVE_FIXED_OVERHEAD, default_overhead

    m = TimeModel(overhead=0.1, scale=5)
    assert m.describe("fit_predict_time") == "5 x (fit+predict) + 0.1 s"
    assert TimeModel().describe("fit_predict_time") == "fit+predict"
    assert default_overhead("fit_time") == LIVE_OVERHEAD
    assert default_overhead("fit_predict_time") == LIVE_FIXED_OVERHEAD
    # the fixed part excludes the predictions, so it is smaller than the fit-only overhead
    assert 0 <= LIVE_FIXED_OVERHEAD < LIVE_OVERHEAD
    with pytest.raises(InputError, match="time_kind"):
        default_overhead("wall")


def test_calibrate_overhead_with_predict_times():
    # hand-computed: seconds - 5 x (fit + predict) = 0.1, 0.3, 0.2 -> median 0.2
    seconds = [1.1, 0.8, 0.45]
    fit = [0.1, 0.05, 0.02]
    predict = [0.1, 0.05, 0.03]
    assert calibrate_overhead(seconds, fit, 5, predict_time_mean=predict) == pytest.approx(0.2)
    # without predict times the predictions count as overhead: 0.6, 0.55, 0.35 -> 0.55
    assert calibrate_overhead(seconds, fit, 5) == pytest.approx(0.55)
    with pytest.raises(InputError, match="predict_time_mean"):
        calibrate_overhead(seconds, fit, 5, predict_time_mean=[0.1])
