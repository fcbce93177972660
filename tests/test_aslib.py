"""ASlib scenarios in and out: a synthetic round trip (times, failed runs, gaps, missing features), the
real OPENML-WEKA-2017 scenario read from ../shared (GPLv3: never copied here; skipped when absent),
and the command line (--meta DIR, export --aslib)."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from cli import main
from algorank.recommender.kernel.environments import meta_arrays
from algorank.metadata.aslib import is_aslib_dir, read_aslib, write_aslib
from algorank.metadata.dataset import MetaDataset
from algorank.metadata.errors import InputError
from algorank.recommender.average_ranking import AverageRanking


def _meta(with_time=True):
    rng = np.random.default_rng(0)
    rows = []
    for d in range(7):
        for j, l in enumerate(["algo A", "b.2", "c'3"]):  # names that need ARFF quoting
            if (d, j) == (3, 2):
                continue  # a missing cell
            for r in range(2):
                status = "ok" if (d, j, r) != (1, 0, 1) else "timeout"
                row = {"dataset": f"ds{d}", "learner": l, "repeat": r, "fold": 0,
                       "accuracy": float(rng.uniform(0.5, 1.0)), "status": status}
                if with_time:
                    row["fit_time"] = float(10 ** rng.uniform(-3, 2))
                    row["predict_time"] = 0.0
                rows.append(row)
    rows.append({"dataset": "ds6", "learner": "b.2", "repeat": 2, "fold": 0, "accuracy": 0.7, "status": "error",
                 "message": "aslib:memout", **({"fit_time": 1.0, "predict_time": 0.0} if with_time else {})})
    runs = pd.DataFrame(rows)
    if "message" in runs.columns:
        runs["message"] = runs["message"].fillna("")
    datasets = pd.DataFrame({"dataset": [f"ds{d}" for d in range(7)], "n_instances": np.arange(7) * 100.0 + 50,
                             "n_features": np.arange(7) + 3.0, "majority_fraction": np.linspace(0.3, 0.9, 7),
                             "MeanEntropy": [0.1, np.nan, 0.3, 0.4, 1 / 3, 0.6, 1e-17]})
    return MetaDataset(runs, datasets, source="aslib:SYNTH")


@pytest.mark.parametrize("with_time", [True, False])
def test_round_trip_is_identical(tmp_path, with_time):
    meta = _meta(with_time)
    files = write_aslib(meta, tmp_path / "scen", folds=3, random_state=1)
    assert sorted(p.name for p in files) == ["algorithm_runs.arff", "cv.arff", "description.txt",
                                             "feature_runstatus.arff", "feature_values.arff"]
    assert is_aslib_dir(tmp_path / "scen")
    back = read_aslib(tmp_path / "scen")
    assert back.source == "aslib:SYNTH"
    pd.testing.assert_frame_equal(back.runs.drop(columns=["message"]),
                                  meta.runs.drop(columns=["message"]).sort_values(
                                      ["dataset", "learner", "repeat"], kind="stable").reset_index(drop=True)
                                  .assign(predict_time=0.0 if with_time else np.nan))
    assert back.runs.loc[back.runs["status"] == "error", "message"].tolist() == ["aslib:memout"]
    ds = back.datasets
    np.testing.assert_array_equal(ds["n_instances"], meta.datasets["n_instances"])
    np.testing.assert_array_equal(ds["MeanEntropy"].to_numpy(), meta.datasets["MeanEntropy"].to_numpy())
    assert ds["aslib_fold"].between(1, 3).all() and ds["source"].iloc[0] == "aslib:SYNTH:ds0"
    # a second round trip changes nothing at all (folds now recorded)
    write_aslib(back, tmp_path / "again")
    again = read_aslib(tmp_path / "again")
    pd.testing.assert_frame_equal(again.runs, back.runs)
    pd.testing.assert_frame_equal(again.datasets, back.datasets)


def test_written_files_follow_the_aslib_layout(tmp_path):
    import arff
    import yaml

    write_aslib(_meta(), tmp_path / "s")
    desc = yaml.safe_load((tmp_path / "s" / "description.txt").read_text())
    assert desc["performance_measures"] == ["predictive_accuracy"] and desc["maximize"] == [True]
    assert desc["performance_type"] == ["solution_quality"] and desc["default_steps"] == ["ALL"]
    assert set(desc["metainfo_algorithms"]) == {"algo A", "b.2", "c'3"}
    assert desc["feature_steps"]["ALL"]["provides"] == desc["features_deterministic"]
    runs = arff.load(open(tmp_path / "s" / "algorithm_runs.arff"))
    assert [a[0] for a in runs["attributes"]] == ["instance_id", "repetition", "algorithm", "predictive_accuracy",
                                                  "runtime", "runstatus"]
    assert {r[-1] for r in runs["data"]} == {"ok", "timeout", "memout"}
    assert min(r[1] for r in runs["data"]) == 1  # repetitions start at 1
    cv = arff.load(open(tmp_path / "s" / "cv.arff"))
    assert sorted({r[2] for r in cv["data"]}) == list(range(1, 8))  # 7 datasets, 10 folds -> 7 used


def test_reader_refuses_runtime_scenarios_and_bad_input(tmp_path):
    write_aslib(_meta(), tmp_path / "s")
    text = (tmp_path / "s" / "description.txt").read_text().replace("solution_quality", "runtime")
    (tmp_path / "s" / "description.txt").write_text(text)
    with pytest.raises(InputError, match="runtime"):
        read_aslib(tmp_path / "s")
    with pytest.raises(InputError, match="not an ASlib scenario"):
        read_aslib(tmp_path)
    with pytest.raises(InputError, match="measure 'nope'"):
        write_aslib(_meta(), tmp_path / "t")
        read_aslib(tmp_path / "t", measure="nope")
    code = main(["info", "--meta", str(tmp_path)])
    assert code == 2


# ---------------------------------------------------------------- the real scenario (read from ../shared only)
@pytest.fixture(scope="module")
def weka_dir():
    from conftest import _shared

    shared = _shared()
    path = None if shared is None else shared / "metadata" / "aslib" / "OPENML-WEKA-2017"
    if path is None or not is_aslib_dir(path):
        pytest.skip("../shared/metadata/aslib/OPENML-WEKA-2017 is absent (GPLv3 data, not in the repository)")
    return path


@pytest.fixture(scope="module")
def weka(weka_dir):
    return read_aslib(weka_dir)


def test_openml_weka_2017_is_read_completely(weka):
    assert len(weka.dataset_ids) == 105 and len(weka.learner_ids) == 30 and len(weka.runs) == 3150
    assert weka.source == "aslib:OPENML-WEKA-2017"
    d = weka.describe()
    assert d.cells == 3150 and d.missing_fraction == 0 and d.cells_with_time == 0  # accuracy only
    features = [c for c in weka.datasets.columns
                if c not in ("dataset", "name", "source", "n_instances", "n_features", "n_classes",
                             "majority_fraction", "aslib_fold")]
    assert len(features) == 103 and "MajorityClassPercentage" in features and "J48.001.ErrRate" in features
    row = weka.dataset_info("2097")
    assert row["n_instances"] == row["NumberOfInstances"] and row["n_classes"] == row["NumberOfClasses"]
    assert row["majority_fraction"] == pytest.approx(row["MajorityClassPercentage"] / 100)
    assert weka.datasets["aslib_fold"].value_counts().sort_index().tolist() == [10] * 5 + [11] * 5
    assert "2369_weka.RandomForest" in weka.learner_ids


def test_openml_weka_2017_round_trip(weka, tmp_path):
    write_aslib(weka, tmp_path / "weka")
    back = read_aslib(tmp_path / "weka")
    pd.testing.assert_frame_equal(back.runs, weka.runs)
    pd.testing.assert_frame_equal(back.datasets, weka.datasets)


def test_openml_weka_2017_rank_p0_and_exact_loo_ties(weka, weka_dir, capsys):
    # `rank --p 0` on the scenario folder = the pandas mean-rank order (ties by id)
    code = main(["rank", "--meta", str(weka_dir), "--p", "0", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    mean_rank = weka.matrix("accuracy").rank(axis=1, ascending=False).mean()
    assert json.loads(out)["order"] == sorted(mean_rank.index, key=lambda l: (round(mean_rank[l], 9), l))
    # every leave-one-dataset-out fold (7 of them have exact ties of the mean rank) orders exactly by
    # Fraction mean ranks, ties by learner id
    arrays = meta_arrays(weka)
    orders = AverageRanking(p=0, min_coverage=0).loo_orders(arrays)
    ranks = weka.matrix("accuracy").rank(axis=1, ascending=False)
    doubled = {l: [int(round(2 * v)) for v in ranks[l]] for l in ranks.columns}
    tied_folds = 0
    for i, d in enumerate(arrays.datasets):
        sums = {l: Fraction(sum(v for j, v in enumerate(doubled[l]) if j != i)) for l in ranks.columns}
        expected = sorted(ranks.columns, key=lambda l: (sums[l], l))
        tied_folds += len(set(sums.values())) < len(sums)
        assert [arrays.learners[j] for j in orders[i]] == expected, d
    assert tied_folds == 7


def test_cli_export_aslib_and_benchmark_tests_axis(weka_dir, tmp_path, capsys):
    code = main(["export", "--meta", str(weka_dir), "--aslib", str(tmp_path / "out"), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert len(json.loads(out)["written"]) == 5
    assert read_aslib(tmp_path / "out").runs.shape == (3150, 9)
    code = main(["benchmark", "--meta", str(weka_dir), "--strategy", "ar:p=0", "--strategy", "random",
                 "--axis", "tests", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    d = json.loads(out)
    assert d["strategies"]["ar:p=0"]["n_datasets"] == 105
    assert d["strategies"]["ar:p=0"]["mean_mil"] < d["strategies"]["random"]["mean_mil"]
    code = main(["benchmark", "--meta", str(weka_dir), "--strategy", "ar:p=1/64"])
    _, err = capsys.readouterr()
    assert code == 2 and "'fit_time'" in err
