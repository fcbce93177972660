"""The embedded OBOE meta-dataset (``--meta oboe``): record, contents, runnable learner ids, CLI.

The checks of the committed file (checksum, counts, metric, every id runnable) run from a fresh
clone; the ones that read OBOE's original files skip when ``../shared`` is absent.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from algorank import cli
from algorank.evaluation.cv.datasets import load_dataset
from algorank.evaluation.cv.preprocessing import encode_features, make_pipeline, resolve_learner
from algorank.metadata.errors import InputError
from algorank.metadata.learners import is_runnable, short_name
from algorank.metadata.oboe import (OBOE_CV_FOLDS, OBOE_FAMILIES, OBOE_LICENSE_FILE, build_oboe, oboe_learner_id,
                           parse_oboe_header, read_oboe)
from algorank.metadata.snapshot import embedded_path, embedded_record, file_sha256, load_meta

ROOT = Path(__file__).resolve().parents[1]
DT2 = 'sklearn.tree.DecisionTreeClassifier{"min_samples_split": 2}'
LOGIT = ('sklearn.multiclass.OneVsRestClassifier{"estimator": {"C": 0.25, "__class__": '
         '"sklearn.linear_model.LogisticRegression", "l1_ratio": 1.0, "solver": "liblinear"}}')


@pytest.fixture(scope="module")
def oboe():
    return load_meta("oboe")


@pytest.fixture(scope="module")
def oboe_dir(shared_dir):
    path = shared_dir / "metadata" / "oboe"
    if not (path / "error_matrix.csv").is_file():
        pytest.skip("../shared/metadata/oboe is absent: test needs OBOE's original matrices")
    return path


# ---------------------------------------------------------------- the committed file (no ../shared needed)
def test_checksum_counts_metric_licence_and_citation(oboe):
    record = embedded_record("oboe")
    path = embedded_path("oboe")
    assert record["file"] == path.name == "oboe.parquet"
    assert file_sha256(path) == record["sha256"]
    d = oboe.describe()
    assert (d.datasets, d.learners, d.cells, d.runs) == (record["datasets"], record["learners"], record["cells"],
                                                         record["runs"]) == (418, 219, 418 * 219, 418 * 219)
    assert d.missing_fraction == 0.0 and d.failed_runs == 0
    assert record["metric"] == "balanced_accuracy"
    assert "Yang" in record["citation"] and "KDD 2019" in record["citation"]
    assert "BSD-3-Clause" in record["licence"]
    licence = path.parent / OBOE_LICENSE_FILE
    assert licence.is_file() and "Chengrun Yang" in licence.read_text() and "Redistribution" in licence.read_text()
    assert path.stat().st_size < 3_000_000  # zstd Parquet, small
    assert "data/*.txt" in (ROOT / "pyproject.toml").read_text()  # the licence ships with the package


def test_runs_hold_balanced_accuracy_and_per_fold_times(oboe):
    runs = oboe.runs
    assert set(runs["repeat"]) == {0} and set(runs["fold"]) == {0} and (runs["status"] == "ok").all()
    # OBOE recorded no plain accuracy: the required column holds the same balanced accuracy
    np.testing.assert_array_equal(runs["accuracy"].to_numpy(), runs["balanced_accuracy"].to_numpy())
    assert runs["balanced_accuracy"].between(0, 1).all()
    assert runs["predict_time"].isna().all() and (runs["fit_time"] > 0).all()
    from algorank.recommender.kernel.time_model import meta_time_kind

    assert meta_time_kind(oboe) == "fit_time"
    ds = oboe.datasets.set_index("dataset")
    assert ds["source"].str.fullmatch(r"openml:\d+").all()
    assert ds["majority_fraction"].isna().all()  # not the default model's balanced accuracy: left unknown
    assert ds[["n_instances", "n_features"]].notna().all().all()
    known = ds["n_classes"].dropna()
    assert 80 <= len(known) <= 100 and (known >= 2).all()
    assert ds.loc["3", "name"] == "kr-vs-kp" and ds.loc["3", "n_classes"] == 2  # from the LCDB snapshot


def test_hand_checked_cells(oboe):
    """Values read by hand from OBOE's CSV files (00061 = iris, 01510 = wdbc)."""
    runs = oboe.runs.set_index(["dataset", "learner"])
    row = runs.loc[("61", DT2)]
    # error_matrix.csv 00061, DT min_samples_split 2: 0.03500000000000002; runtime 0.006708145141601562 s
    assert row["balanced_accuracy"] == 1 - 0.03500000000000002
    assert row["fit_time"] == 0.006708145141601562 / OBOE_CV_FOLDS
    row = runs.loc[("1510", LOGIT)]
    # 01510, Logit C 0.25 liblinear l1: 0.039431875490670114; runtime 0.025077342987060547 s
    assert row["balanced_accuracy"] == pytest.approx(1 - 0.039431875490670114, abs=1e-15)
    assert row["fit_time"] == pytest.approx(0.025077342987060547 / 5, rel=1e-15)
    ds = oboe.datasets.set_index("dataset")
    assert (ds.loc["61", "n_instances"], ds.loc["61", "n_features"]) == (150, 4)  # dataset_sizes: 150, 5 columns
    assert (ds.loc["1510", "n_instances"], ds.loc["1510", "n_features"]) == (569, 30)


def test_every_id_is_runnable_and_instantiates_with_its_parameters(oboe):
    families = set()
    for lid in oboe.learner_ids:
        assert is_runnable(lid), lid
        recipe = resolve_learner(lid)
        assert recipe.scaling == "standard"
        est = recipe.build(random_state=0)
        params = json.loads("{" + lid.partition("{")[2]) if "{" in lid else {}
        if "estimator" in params:  # Logit: one-vs-rest around a seeded LogisticRegression
            inner = {k: v for k, v in params["estimator"].items() if k != "__class__"}
            assert type(est).__name__ == "OneVsRestClassifier"
            assert type(est.estimator).__name__ == "LogisticRegression"
            assert {k: est.estimator.get_params()[k] for k in inner} == inner
            assert est.estimator.random_state == 0
            families.add("Logit")
        else:
            assert {k: est.get_params()[k] for k in params} == params
            families.add(type(est).__name__)
    assert len(families) == 12
    shorts = [short_name(l) for l in oboe.learner_ids]
    assert len(set(shorts)) == 219 and all(len(s) <= 50 for s in shorts)
    assert short_name(DT2) == "decision-tree(mss=2)" and short_name(LOGIT) == "one-vs-rest(logreg(C=0.25,l1=1,liblinear))"


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_one_configuration_of_each_family_fits_three_classes(oboe):
    data = load_dataset("sklearn:iris")
    X, mask = encode_features(data.X)
    y = np.asarray(data.y)
    seen = set()
    for lid in oboe.learner_ids:
        family = lid.partition("{")[0]
        if family in seen:
            continue
        seen.add(family)
        pipe = make_pipeline(resolve_learner(lid), mask, random_state=0).fit(X[::2], y[::2])
        assert pipe.score(X[1::2], y[1::2]) > 0.5, lid  # liblinear runs one-vs-rest on 3 classes
    assert len(seen) == 12


def test_id_mapping():
    assert oboe_learner_id("RF", {"min_samples_split": 2, "criterion": "gini"}) == (
        'sklearn.ensemble.RandomForestClassifier{"criterion": "gini", "min_samples_split": 2, "n_estimators": 10}')
    assert oboe_learner_id("kSVM", {"C": 0.125, "kernel": "poly", "coef0": 10}) == (
        'sklearn.svm.SVC{"C": 0.125, "coef0": 10, "gamma": "auto", "kernel": "poly"}')
    assert oboe_learner_id("Logit", {"C": 0.25, "solver": "liblinear", "penalty": "l1"}) == LOGIT
    assert oboe_learner_id("GNB", {}) == "sklearn.naive_bayes.GaussianNB"
    assert oboe_learner_id("Perceptron", {}) == "sklearn.linear_model.Perceptron"  # the portfolio's id
    assert oboe_learner_id("DT", {"min_samples_split": 1e-05}) == 'sklearn.tree.DecisionTreeClassifier{"min_samples_split": 1e-05}'
    assert set(OBOE_FAMILIES) == {"KNN", "DT", "RF", "GBT", "AB", "lSVM", "kSVM", "Logit", "Perceptron", "GNB", "MLP",
                                  "ExtraTrees"}
    assert parse_oboe_header("{'algorithm': 'GBT', 'hyperparameters': {'learning_rate': 0.1, 'max_depth': 3, "
                             "'max_features': None}}") == ("GBT", {"learning_rate": 0.1, "max_depth": 3,
                                                                    "max_features": None})
    with pytest.raises(InputError, match="not a Python dict literal"):
        parse_oboe_header("__import__('os').system('true')")
    with pytest.raises(InputError, match="unknown algorithm"):
        parse_oboe_header("{'algorithm': 'XGB', 'hyperparameters': {}}")
    with pytest.raises(InputError, match="pinned"):
        oboe_learner_id("RF", {"n_estimators": 100})


def test_info_json_counts(capsys):
    assert cli.main(["info", "--meta", "oboe", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert (d["datasets"], d["learners"], d["cells"]) == (418, 219, 91542)


def test_recommend_iris_runs_oboe_configurations(capsys):
    code = cli.main(["recommend", "sklearn:iris", "--meta", "oboe", "--top", "3", "--budget", "20", "--json",
                     "--quiet"])
    assert code == 0
    d = json.loads(capsys.readouterr().out)
    assert len(d["order"]) == 3 and d["rank_only"] == []
    assert all("{" in o["learner"] or o["learner"].startswith("sklearn.") for o in d["order"])
    assert 1 <= len(d["trace"]) <= 3
    ok = [t for t in d["trace"] if t["status"] == "ok"]
    assert ok and all(0.5 < t["balanced_accuracy"] <= 1 for t in ok)  # keys named after the metric
    # the default strategy (ei) re-plans after every test: the best is one of the tested configurations
    assert d["best"]["learner"] in {t["learner"] for t in ok} and d["best"]["learner"] in set(load_meta("oboe").learner_ids)
    # live tests measure the score the set ranks by
    assert d["metric"] == "balanced_accuracy" and "with balanced accuracy" in d["summary"]


def test_primary_metric_follows_what_the_accuracy_column_holds(oboe):
    from algorank.metadata.dataset import MetaDataset
    from algorank.metadata.metric import primary_metric

    uci = load_meta("uci")
    assert primary_metric(oboe) == "balanced_accuracy"
    assert primary_metric(uci) == "accuracy" and primary_metric(load_meta("lcdb")) == "accuracy"
    assert primary_metric(MetaDataset.concat([oboe.subset(datasets=["3"]), uci])) == "accuracy"  # mixed: no


# ---------------------------------------------------------------- against OBOE's original files (../shared)
def test_reader_matches_the_csv_files(oboe_dir, oboe):
    # each cell parsed by Python's float (correctly rounded, whatever pandas' CSV float parser does)
    errors = pd.read_csv(oboe_dir / "error_matrix.csv", index_col=0, dtype=str).map(float)
    runtimes = pd.read_csv(oboe_dir / "runtime_matrix.csv", index_col=0, dtype=str).map(float)
    errors.index = runtimes.index = [int(i) for i in errors.index]
    ids = [oboe_learner_id(*parse_oboe_header(h)) for h in errors.columns]
    errors.columns = runtimes.columns = ids
    errors.index = runtimes.index = [str(i) for i in errors.index]
    ba = oboe.matrix("balanced_accuracy").loc[errors.index, ids]
    ft = oboe.matrix("fit_time").loc[errors.index, ids]
    np.testing.assert_array_equal(ba.to_numpy(), 1.0 - errors.to_numpy())
    np.testing.assert_array_equal(ft.to_numpy(), runtimes.to_numpy() / OBOE_CV_FOLDS)


def test_rebuild_reproduces_the_committed_file(oboe_dir, tmp_path):
    import pyarrow.parquet as pq

    record = build_oboe(oboe_dir, tmp_path)
    committed = embedded_record("oboe")
    assert (tmp_path / OBOE_LICENSE_FILE).read_bytes() == (oboe_dir / "LICENSE.txt").read_bytes()
    assert {k: v for k, v in record.items() if k != "sha256"} == {k: v for k, v in committed.items() if k != "sha256"}
    # the same tables, value for value; the same bytes when the same Parquet writer wrote them
    rebuilt, embedded = pq.read_table(tmp_path / "oboe.parquet"), pq.read_table(embedded_path("oboe"))
    assert rebuilt.equals(embedded)  # values and types (the schema metadata names the pandas version that wrote it)
    writer = [pq.ParquetFile(f).metadata.created_by for f in (tmp_path / "oboe.parquet", embedded_path("oboe"))]
    if writer[0] == writer[1]:
        assert record["sha256"] == committed["sha256"] == file_sha256(tmp_path / "oboe.parquet")


def test_reader_rejects_a_broken_folder(oboe_dir, tmp_path):
    with pytest.raises(InputError, match="not an OBOE folder"):
        read_oboe(tmp_path)
    for f in ("error_matrix.csv", "runtime_matrix.csv", "dataset_sizes.csv", "classification.json", "LICENSE.txt"):
        (tmp_path / f).write_bytes((oboe_dir / f).read_bytes())
    text = (tmp_path / "runtime_matrix.csv").read_text().splitlines()
    (tmp_path / "runtime_matrix.csv").write_text("\n".join(text[:-1]) + "\n")  # one dataset short
    with pytest.raises(InputError, match="differ in shape"):
        read_oboe(tmp_path)
    row = text[1].split(",")
    (tmp_path / "runtime_matrix.csv").write_text("\n".join([text[0], ",".join(row[:1] + ["fast"] + row[2:])]
                                                           + text[2:]) + "\n")  # a cell that is no number
    with pytest.raises(InputError, match="^OBOE runtime matrix must hold a number in every cell"):
        read_oboe(tmp_path)
