"""Runtime model beyond the meta-data's sizes: LCDB growth exponents, LCDB sizes, binarized features."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from algorank import cli
from algorank.metadata.dataset import MetaDataset
from algorank.metadata.errors import InputError
from algorank.metadata.lcdb import LARGEST_TRAIN_FRACTION, complete_sizes, growth_exponents
from algorank.metadata.growth import GROWTH_FILE, GROWTH_RECORD, growth_path, load_growth
from algorank.metadata.snapshot import file_sha256, load_snapshot
from algorank.recommender.runtime_model import fit_runtime_model, runtime_features
from algorank.recommender.kernel.time_model import LIVE_FIXED_OVERHEAD


def _curves_csv(path, laws, sizes=(16, 500, 1000, 2000, 4000, 8000, 16000), datasets=(1, 2, 3)):
    rows = []
    for d in datasets:
        for learner, (c, a) in laws.items():
            for n in sizes:
                for seed in range(3):
                    rows.append({"openmlid": d, "learner": learner, "size_train": n, "size_test": 100,
                                 "outer_seed": 0, "inner_seed": seed, "traintime": c * d * n ** a,
                                 "score_train": 1.0, "score_valid": 0.9, "score_test": 0.9})
    pd.DataFrame(rows).to_csv(path / "database-accuracy.csv", index=False)


def test_growth_exponents_are_the_within_dataset_log_log_slopes(tmp_path):
    # time = c * d * n ** a: the slope in n within each dataset is a, whatever the dataset's constant
    _curves_csv(tmp_path, {"svm": (1e-7, 2.0), "tree": (1e-4, 1.0), "tiny": (1e-9, 1.0)})
    table = growth_exponents(tmp_path).set_index("learner")
    assert table.loc["svm", "exponent"] == pytest.approx(2.0, abs=1e-9)
    assert table.loc["tree", "exponent"] == pytest.approx(1.0, abs=1e-9)
    assert table.loc["svm", "n_datasets"] == 3
    # 'tiny' never reaches 0.05 s at >= 1000 rows: no curve, no row (not a made-up exponent)
    assert "tiny" not in table.index
    assert growth_exponents(tmp_path, exclude=["1", "2"]).set_index("learner").loc["svm", "n_datasets"] == 1
    with pytest.raises(InputError, match="no learning curve"):
        growth_exponents(tmp_path, exclude=["1", "2", "3"])
    with pytest.raises(InputError, match="not found"):
        growth_exponents(tmp_path / "missing")


def test_embedded_growth_table_matches_its_record():
    folder = growth_path().parent
    record = json.loads((folder / GROWTH_RECORD).read_text())
    assert record["sha256"] == file_sha256(folder / GROWTH_FILE)
    assert "held-out" in record["excluded"]
    growth = load_growth()
    assert len(growth) == record["learners"] == 20
    # kernel SVMs grow about quadratically with the rows, naive Bayes about linearly (LCDB's curves)
    assert all(1.7 < growth[k] < 2.3 for k in ("SVC_rbf", "SVC_poly", "SVC_sigmoid"))
    assert 0.8 < growth["sklearn.naive_bayes.MultinomialNB"] < 1.2


def test_model_extrapolates_along_the_growth_exponent_above_the_meta_datas_sizes():
    rng = np.random.default_rng(1)
    n = 10 ** rng.uniform(2, 4, size=60)
    rows = [{"n_instances": a, "n_features": 10, "n_classes": 2} for a in n]
    feats = runtime_features(rows)
    sec = np.column_stack([1e-5 * n, 1e-5 * n])  # linear in the meta-data's range for both learners
    plain = fit_runtime_model(sec, feats, ["a", "b"], lam=0.0)
    grown = fit_runtime_model(sec, feats, ["a", "b"], lam=0.0, growth={"a": 2.0})
    hi = grown.rows_hi
    assert hi == pytest.approx(np.quantile(np.log10(n), 0.95))
    inside = runtime_features([{"n_instances": 10 ** (hi - 0.5), "n_features": 10, "n_classes": 2}])
    assert np.allclose(grown.predict_log10(inside), plain.predict_log10(inside))  # unchanged in range
    far = runtime_features([{"n_instances": 10 ** (hi + 2), "n_features": 10, "n_classes": 2}])
    anchor = runtime_features([{"n_instances": 10 ** hi, "n_features": 10, "n_classes": 2}])
    p_far, p_anchor = grown.predict_log10(far)[0], grown.predict_log10(anchor)[0]
    assert p_far[0] - p_anchor[0] == pytest.approx(4.0, abs=1e-9)  # two decades of rows at exponent 2
    assert p_far[1] == pytest.approx(plain.predict_log10(far)[0][1])  # no exponent: the fitted curve
    assert fit_runtime_model(sec, feats, ["a", "b"], growth={"other": 2.0}).growth is None


def test_binarized_feature_count_is_what_the_model_sees():
    plain = runtime_features([{"n_instances": 50000, "n_features": 231}])
    lcdb = runtime_features([{"n_instances": 50000, "n_features": 231, "NumberOfFeaturesAfterBinarization": 71678}])
    ours = runtime_features([{"n_instances": 50000, "n_features": 231, "n_features_onehot": 500,
                              "NumberOfFeaturesAfterBinarization": 71678}])
    assert plain[0, 1] == pytest.approx(math.log10(231))
    assert lcdb[0, 1] == pytest.approx(math.log10(71678))
    assert ours[0, 1] == pytest.approx(math.log10(500))  # algorank's own count first


def test_complete_sizes_fills_undescribed_lcdb_datasets_from_their_training_size():
    runs = pd.DataFrame({"dataset": ["a", "a", "b", "b"], "learner": ["x", "x", "x", "x"], "repeat": [0, 1, 0, 1],
                         "fold": 0, "accuracy": 0.9, "fit_time": 1.0, "predict_time": np.nan, "status": "ok",
                         "train_size": [810, 810, 8100, 8100]})
    datasets = pd.DataFrame({"dataset": ["a", "b"], "n_instances": [1000.0, np.nan]})
    meta = complete_sizes(MetaDataset(runs, datasets))
    table = meta.datasets.set_index("dataset")
    assert table.loc["a", "n_instances"] == 1000  # described: left alone
    assert table.loc["b", "n_instances"] == 10000  # 8100 / 0.81
    assert table["n_instances_from_train_size"].tolist() == [False, True]
    assert complete_sizes(meta) is meta  # idempotent


def test_lcdb_snapshot_has_every_dataset_size_and_the_fraction_holds():
    meta = load_snapshot()
    table = meta.datasets.set_index("dataset")
    assert table["n_instances"].notna().all()
    assert int(table["n_instances_from_train_size"].sum()) == 51
    described = table[~table["n_instances_from_train_size"]]
    largest = meta.runs.groupby("dataset")["train_size"].max().reindex(described.index)
    assert float(np.median(largest / described["n_instances"])) == pytest.approx(LARGEST_TRAIN_FRACTION, abs=0.002)


@pytest.mark.usefixtures("shared_dir")
def test_dry_run_predicts_seconds_in_the_ratio_measured_times_show(shared_dir, capsys):
    # a 270-row and a 19,020-row dataset, both left out of the meta-data: the planned seconds must grow
    # as the recorded live tests of the same learners did (broad meta-data, times put on one machine
    # speed by each dataset's calibration), and the order must change where it matters
    from algorank.api import load_meta
    from algorank.recommender.kernel.environments import meta_arrays
    from scipy.stats import spearmanr

    plans = {}
    for key, path, extra in (("big", "datasets/keel/magic.csv", ["--target", "class"]),
                             ("small", "datasets/uci/heart.statlog.arff", [])):
        assert cli.main(["recommend", str(shared_dir / path), *extra, "--dry-run", "--json", "--meta", "broad",
                         "--exclude-dataset", "magic", "--exclude-dataset", "heart.statlog"]) == 0
        out = json.loads(capsys.readouterr().out)
        plans[key] = {o["learner"]: o for o in out["order"]}
    meta = load_meta("broad")
    arr = meta_arrays(meta, time_kind="fit_predict_time")
    cal = meta.datasets.set_index("dataset")["calibration_s"]

    def live(d):  # the time model recommend predicts with
        return 5 * arr.seconds[arr.row(d)] * cal.median() / cal[d] + LIVE_FIXED_OVERHEAD

    measured = live("magic") / live("heart.statlog")
    predicted = np.array([plans["big"][l]["expected_seconds"] / plans["small"][l]["expected_seconds"]
                          for l in arr.learners])
    err = np.log10(predicted / measured)
    assert np.median(measured) > 5 and np.median(predicted) > 3  # 70x the rows: several times the seconds
    assert abs(np.median(err)) < math.log10(1.5)  # the typical ratio is right within 1.5x
    assert np.mean(np.abs(err) < math.log10(3)) >= 0.7  # and within 3x for most learners
    assert spearmanr(predicted, measured).statistic > 0.85  # which learners grow fastest
    order = {k: [o for o in v] for k, v in plans.items()}
    rbf = "SVC_rbf"
    # the kernel SVM: among the first 5 of 20 on 270 rows, in the second half on 19,020
    assert order["small"].index(rbf) < 5 and order["big"].index(rbf) >= 10
