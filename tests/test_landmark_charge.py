"""The simulation charges a strategy for the landmarkers it reads, before its first test, and nothing to others.

``recommend`` measures the landmarkers only for a strategy that conditions on them, so a benchmark that did not
charge them gave ``ei``/``eiu`` those seconds for free.  Hand-made meta-data: every number below is computed by
hand from the recorded times.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from algorank.evaluation.meta.benchmark import benchmark_strategies
from algorank.evaluation.meta.scoring import leave_one_dataset_out, start_seconds
from algorank.metadata.dataset import MetaDataset
from algorank.recommender.kernel.environments import meta_arrays
from algorank.recommender.registry import parse_strategy


def _expected(arrays, missing=()):
    """The recorded landmarker seconds of each dataset of ``arrays``, in its order (d<i>: 0.25 + 0.01 i + 0.125)."""
    i = np.array([int(d[1:]) for d in arrays.datasets])
    return np.where(np.isin(i, missing), 0.0, 0.25 + 0.01 * i + 0.125)


def _meta(*, n=12, landmarks=True, missing=()):
    rng = np.random.default_rng(0)
    level = rng.uniform(0.6, 0.9, n)
    runs = []
    for i in range(n):
        for learner, acc, sec in (("cheap", level[i] - 0.03, 0.5), ("good", level[i], 2.0)):
            runs.append({"dataset": f"d{i}", "learner": learner, "repeat": 0, "fold": 0, "accuracy": acc,
                         "fit_time": sec, "status": "ok"})
    table = pd.DataFrame({"dataset": [f"d{i}" for i in range(n)], "n_instances": 500, "n_features": 10,
                          "n_classes": 2, "majority_fraction": 0.5})
    if landmarks:
        table["landmark_1nn"] = level - 0.05
        table["landmark_1nn_time"] = 0.25 + 0.01 * np.arange(n)
        table["landmark_stump"] = level - 0.1
        table["landmark_stump_time"] = 0.125
        for i in missing:  # a dataset whose landmarkers were not measured: nothing to read, nothing charged
            table.loc[i, ["landmark_1nn", "landmark_stump"]] = np.nan
    return MetaDataset(pd.DataFrame(runs), table), level


def test_start_seconds_are_the_recorded_landmarker_seconds_of_what_the_strategy_reads():
    meta, _ = _meta(missing=(3,))
    arrays = meta_arrays(meta)
    start = start_seconds(parse_strategy("eiu:landmarks=yes"), meta, arrays)
    expect = _expected(arrays, missing=(3,))
    assert start[list(arrays.datasets).index("d3")] == 0.0
    assert start == pytest.approx(expect)
    assert start_seconds(parse_strategy("ei"), meta, arrays) == pytest.approx(expect)
    # no landmarkers read: nothing charged
    for spec in ("eiu", "eiu:landmarks=no", "ei:landmarks=no", "lt", "fastest", "ar:p=0", "portfolio"):
        assert start_seconds(parse_strategy(spec), meta, arrays) is None, spec
    plain, _ = _meta(landmarks=False)
    assert start_seconds(parse_strategy("ei"), plain, meta_arrays(plain)) is None


def test_a_landmarker_most_prior_datasets_lack_is_not_read_and_not_charged():
    meta, _ = _meta()
    table = meta.datasets.copy()
    table.loc[table.index[:7], "landmark_stump"] = np.nan  # 7 of 12: fewer than half have it
    meta = MetaDataset(meta.runs, table)
    arrays = meta_arrays(meta)
    start = start_seconds(parse_strategy("eiu:landmarks=yes"), meta, arrays)
    assert start == pytest.approx(_expected(arrays) - 0.125)
    assert parse_strategy("eiu:landmarks=yes").fit(meta).landmarks_ == ("landmark_1nn",)  # the rule it fits by
    assert parse_strategy("eiu").fit(meta).landmarks_ == ()  # the default reads none


def test_the_first_test_finishes_after_the_landmarkers_and_every_later_one_too():
    meta, _ = _meta()
    with_marks = leave_one_dataset_out(parse_strategy("ei"), meta)
    without = leave_one_dataset_out(parse_strategy("ei:landmarks=no"), meta)
    start = _expected(meta_arrays(meta))
    sec_with, sec_without = with_marks.seconds, without.seconds
    # same data, same first learner (the cheap one, at this cost ratio) in both: only the start differs
    assert (with_marks.sequences[:, 0] == without.sequences[:, 0]).all()
    assert sec_with[:, 0] == pytest.approx(sec_without[:, 0] + start)
    assert sec_with[:, 1:] == pytest.approx(sec_without[:, 1:])
    cum, _, _ = with_marks.steps()
    assert cum[:, 0] == pytest.approx(sec_without[:, 0] + start)


def test_benchmark_and_time_to_eps_charge_it_and_the_tests_axis_does_not():
    meta, _ = _meta()
    suite = benchmark_strategies([parse_strategy("ei"), parse_strategy("ei:landmarks=no")], meta, eps=1.0)
    t = {m.strategy: np.asarray(m.time_to_eps) for m in suite.metrics.metrics}
    start = _expected(meta_arrays(meta))
    assert t["ei"] == pytest.approx(t["ei:landmarks=no"] + start)
    assert suite.time_model.endswith("; landmarkers charged before the first test of ei")  # the output says so
    plain = benchmark_strategies([parse_strategy("ei:landmarks=no"), parse_strategy("lt")], meta)
    assert "landmarkers" not in plain.time_model
    tests = leave_one_dataset_out(parse_strategy("ei"), meta, axis="tests")
    assert tests.seconds[:, 0] == pytest.approx(1.0)  # one unit per test, no start


def test_eiu_reads_no_landmarkers_by_default_and_says_so_when_asked_to():
    default, marks = parse_strategy("eiu"), parse_strategy("eiu:landmarks=yes")
    assert default.landmarks is False and marks.landmarks is True
    assert default.default_name() == "eiu:h=0.7,p=0.75"  # the default spec names nothing it does not change
    assert marks.default_name() == "eiu:h=0.7,p=0.75,landmarks=yes"
    assert parse_strategy(marks.default_name()).landmarks is True  # the name parses back to the same strategy
    assert parse_strategy("ei").landmarks is True and parse_strategy("ei").default_name() == "ei:h=1,p=1"
    # the live time model keeps the choice
    assert marks.with_time_model(time_overhead=0.07, time_scale=5.0).landmarks is True
    assert default.with_time_model(time_overhead=0.07, time_scale=5.0).landmarks is False


def test_a_coverage_start_then_ei_pays_for_the_landmarkers_its_model_reads():
    meta, _ = _meta()
    arrays = meta_arrays(meta)
    strategy = parse_strategy("pstart:k=1")
    assert start_seconds(strategy, meta, arrays) == pytest.approx(_expected(arrays))
    assert strategy.fit(meta).landmarks_ == ("landmark_1nn", "landmark_stump")  # what recommend would measure
