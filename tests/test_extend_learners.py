"""Adding new learners' runs to built per-dataset files (:mod:`algorank.evaluation.cv.extend`)."""

from __future__ import annotations

import pandas as pd
import pytest

from algorank.evaluation.cv.extend import add_learner_runs
from algorank.metadata.dataset import MetaDataset
from algorank.metadata.errors import InputError


def _file(folder, dataset, learners, *, calibration, fit=1.0, cap=120, seed=0, features=3):
    runs = pd.DataFrame([{"dataset": dataset, "learner": l, "repeat": 0, "fold": f, "accuracy": 0.5 + 0.1 * f,
                          "fit_time": fit, "predict_time": fit / 10, "status": "ok"}
                         for l in learners for f in range(2)])
    datasets = pd.DataFrame([{"dataset": dataset, "name": dataset, "n_instances": 100, "n_features": features,
                              "n_classes": 2, "majority_fraction": 0.5, "calibration_s": calibration,
                              "build_folds": 2, "build_seed": seed, "build_cap_s": cap, "build_wall_s": 7.0}])
    folder.mkdir(exist_ok=True)
    MetaDataset(runs, datasets).save(folder / f"{dataset}.parquet")


def test_runs_are_joined_and_times_put_on_the_files_scale(tmp_path):
    _file(tmp_path / "base", "a", ["l1", "l2"], calibration=0.4)
    _file(tmp_path / "base", "b", ["l1", "l2"], calibration=0.3)
    _file(tmp_path / "new", "a", ["l3"], calibration=0.2, fit=2.0)
    out = add_learner_runs(tmp_path / "base", tmp_path / "new")
    assert out == {"joined": ["a"], "learners": ["l3"], "missing": ["b"], "unmatched": []}
    m = MetaDataset.load(tmp_path / "base" / "a.parquet")
    assert sorted(m.learner_ids) == ["l1", "l2", "l3"] and len(m.runs) == 6
    l3 = m.runs[m.runs.learner == "l3"]
    assert list(l3.fit_time) == pytest.approx([4.0, 4.0])  # 2.0 s x 0.4 / 0.2
    assert list(l3.predict_time) == pytest.approx([0.4, 0.4])
    assert m.datasets["calibration_s"].iloc[0] == 0.4 and m.datasets["added_calibration_s"].iloc[0] == 0.2
    assert list(MetaDataset.load(tmp_path / "base" / "b.parquet").learner_ids) == ["l1", "l2"]


@pytest.mark.parametrize("kwargs, learners, message", [
    ({"cap": 60}, ["l3"], "differ in build_cap_s"),
    ({"seed": 1}, ["l3"], "differ in build_seed"),
    ({"features": 2}, ["l3"], "differ in n_features"),
    ({}, ["l2", "l3"], "are in both files"),
])
def test_mismatches_are_refused_and_nothing_is_written(tmp_path, kwargs, learners, message):
    _file(tmp_path / "base", "a", ["l1", "l2"], calibration=0.4)
    _file(tmp_path / "base", "b", ["l1", "l2"], calibration=0.4)
    _file(tmp_path / "new", "b", ["l3"], calibration=0.4)  # fine, but checked before anything is written
    _file(tmp_path / "new", "a", learners, calibration=0.4, **kwargs)
    before = (tmp_path / "base" / "b.parquet").read_bytes()
    with pytest.raises(InputError, match=message):
        add_learner_runs(tmp_path / "base", tmp_path / "new")
    assert (tmp_path / "base" / "b.parquet").read_bytes() == before
