"""benchmark on other test meta-data: fit on --meta, score every dataset of --test-meta with
its recorded runs, adaptive strategies querying them as in leave-one-out; overlap is an error unless excluded."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import algorank
from algorank import cli
from algorank.evaluation.meta.benchmark import leave_one_dataset_out
from algorank.recommender.kernel.environments import meta_arrays
from algorank.metadata.dataset import MetaDataset
from algorank.metadata.errors import InputError
from algorank.recommender.registry import parse_strategy


def synthetic(prefix, n, seed, *, timeouts=0.1):
    rng = np.random.default_rng(seed)
    rows = []
    for d in range(n):
        for j in range(5):
            t = float(rng.lognormal(-1, 1))
            ok = rng.random() >= timeouts
            rows.append(dict(dataset=f"{prefix}{d}", learner=f"L{j}", repeat=0, fold=0,
                             accuracy=float(rng.uniform(0.5, 1.0)) if ok else np.nan, fit_time=t if ok else 20 * t,
                             predict_time=0.0, status="ok" if ok else "timeout"))
    ds = pd.DataFrame({"dataset": [f"{prefix}{d}" for d in range(n)], "majority_fraction": rng.uniform(0.3, 0.6, n),
                       "n_instances": rng.integers(100, 5000, n), "n_features": rng.integers(2, 50, n),
                       "n_classes": 2})
    return MetaDataset(pd.DataFrame(rows), ds, source=prefix)


@pytest.fixture()
def files(tmp_path):
    train, test, test2 = synthetic("d", 8, 0), synthetic("t", 4, 1), synthetic("u", 3, 2)
    paths = tmp_path / "train.parquet", tmp_path / "test.parquet", tmp_path / "test2.parquet"
    for m, p in zip((train, test, test2), paths):
        m.save(p)
    return paths


def test_scores_every_test_dataset_with_strategies_fitted_on_the_training_meta(files):
    train, test, _ = files
    suite = algorank.benchmark(["ar:p=0", "at:p=0,sim=tested", "oracle"], meta=str(train), test_meta=str(test),
                               tmin=0.01, tmax=100)
    ar, at, oracle = suite.results
    assert ar.datasets == ("t0", "t1", "t2", "t3") and suite.n_train == 8
    assert suite.setting.startswith("trained on 8 datasets")
    # AR: the order fitted on the 8 training datasets, restricted to what the test dataset can test
    order = parse_strategy("ar:p=0").fit(MetaDataset.load(train)).order_
    joined = MetaDataset.concat([MetaDataset.load(train), MetaDataset.load(test)])
    arrays = meta_arrays(joined)
    for i, d in enumerate(ar.datasets):
        testable = {arrays.learners[k] for k in np.flatnonzero(arrays.testable[arrays.row(d)])}
        assert [ar.learners[k] for k in ar.sequences[i] if k >= 0] == [l for l in order if l in testable]
    # active testing queries the test runs exactly as the generic run_policy loop does
    slow = leave_one_dataset_out(parse_strategy("at:p=0,sim=tested"), joined, tmin=0.01, tmax=100,
                                 test_datasets=["t0", "t1", "t2", "t3"], fast=False)
    np.testing.assert_array_equal(at.sequences, slow.sequences)
    assert np.all(oracle.mil <= ar.mil + 1e-12)
    d = suite.to_dict()
    assert d["n_train_datasets"] == 8 and set(d["user_metrics"]["strategies"]) == {"ar:p=0", "at:p=0,sim=tested",
                                                                                    "oracle"}


def test_overlap_is_an_error_unless_excluded(files, tmp_path):
    train, test, _ = files
    both = MetaDataset.concat([MetaDataset.load(test), MetaDataset.load(train).subset(datasets=["d0"])])
    both.save(tmp_path / "both.parquet")
    with pytest.raises(InputError, match="d0 .*both the training and the test.*exclude"):
        algorank.benchmark(["ar:p=0"], meta=str(train), test_meta=str(tmp_path / "both.parquet"))
    suite = algorank.benchmark(["ar:p=0"], meta=str(train), test_meta=str(tmp_path / "both.parquet"),
                               exclude_datasets=["d0"])
    assert suite.n_train == 7 and "d0" in suite.results[0].datasets


def test_cli_test_meta_json_repeatable_and_errors(files, capsys):
    train, test, test2 = files
    code = cli.main(["benchmark", "--meta", str(train), "--test-meta", str(test), "--test-meta", str(test2),
                     "--strategy", "ar:p=0", "--strategy", "ar:p=1/16", "--reference", "ar:p=1/16", "--eps", "2",
                     "--budgets", "0.5,5", "--json", "--per-dataset"])
    out, err = capsys.readouterr()
    assert code == 0, err
    d = json.loads(out)
    assert d["n_datasets"] == 7 and d["n_train_datasets"] == 8
    um = d["user_metrics"]
    assert um["reference"] == "ar:p=1/16" and um["eps_points"] == 2.0 and um["budgets_s"] == [0.5, 5.0]
    c = um["comparisons"]["ar:p=0"]
    assert set(c) == {"time_to_eps", "loss@0.5s", "loss@5s", "mil_to_0.5s", "mil_to_5s", "mil"}
    assert c["time_to_eps"]["wins"] + c["time_to_eps"]["ties"] + c["time_to_eps"]["losses"] == 7
    assert set(um["strategies"]["ar:p=0"]["per_dataset"]) == {"t0", "t1", "t2", "t3", "u0", "u1", "u2"}
    assert "oracle" in um and um["oracle"]["eps_not_reached"] == 0
    # table output
    assert cli.main(["benchmark", "--meta", str(train), "--test-meta", str(test), "--strategy", "ar:p=0",
                     "--strategy", "fastest"]) == 0
    out, _ = capsys.readouterr()
    assert "trained on 8 datasets" in out and "oracle bound" in out and "W/T/L" in out
    # the same dataset in train and test: one line, exit 2
    assert cli.main(["benchmark", "--meta", str(train), "--test-meta", str(train), "--strategy", "ar:p=0"]) == 2
    _, err = capsys.readouterr()
    assert err.startswith("error: ") and "exclude_datasets" in err and err.count("\n") == 1
    assert cli.main(["benchmark", "--meta", str(train), "--test-meta", str(test), "--heldout", "lcdb",
                     "--strategy", "ar:p=0"]) == 2
    assert cli.main(["benchmark", "--meta", str(train), "--strategy", "ar:p=0", "--budgets", "0"]) == 2
    _, err = capsys.readouterr()
    assert "budgets" in err
