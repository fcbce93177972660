"""Consistent exits: one shared validation of seeds, fold counts and URLs, so every
command gives the same one-line error with exit 2, before any work."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from algorank import AlgorankClassifier, cli
from algorank.evaluation.cv.evaluator import Evaluator
from algorank.recommender.kernel.time_model import live_time_model
from algorank.metadata.checks import check_folds, check_seed, check_url
from algorank.metadata.errors import InputError
from algorank.recommender.live.recommend import recommend


def _run(capsys, argv):
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_the_shared_checks():
    assert check_seed(0) == 0 and check_seed(np.int64(7)) == 7 and check_folds(2) == 2
    for bad in (-1, 1.5, True, "3", None):
        with pytest.raises(InputError, match=r"^random_state must be an integer >= 0; got "):
            check_seed(bad)
    for bad in (1, 0, -2, 2.5, False):
        with pytest.raises(InputError, match=r"^cv \(number of folds\) must be an integer >= 2; got "):
            check_folds(bad)
    with pytest.raises(InputError, match=r"^--cv = 100 folds need at least 100 rows \(one per fold\); the dataset has 30$"):
        check_folds(100, name="--cv", n_rows=30)
    assert check_url("http://localhost:8080/api/v1/xml")
    for bad in ("notaurl", "ftp://x.org", "https://", "www.openml.org"):
        with pytest.raises(InputError, match="server must be an http"):
            check_url(bad)


@pytest.mark.parametrize("argv, message", [
    (["recommend", "sklearn:iris", "--seed", "-1"], "error: --seed must be an integer >= 0; got -1"),
    (["evaluate", "sklearn:iris", "--seed", "-1", "--no-store"], "error: --seed must be an integer >= 0; got -1"),
    (["benchmark", "--strategy", "ar:p=0", "--seed", "-1"], "error: --seed must be an integer >= 0; got -1"),
    (["benchmark", "--strategy", "ar:p=0", "--cv", "1"], "error: --cv (number of folds) must be an integer >= 2; got 1"),
    (["tune-p", "--cv", "1"], "error: --cv (number of folds) must be an integer >= 2; got 1"),
    (["recommend", "sklearn:iris", "--cv", "1"], "error: --cv (number of folds) must be an integer >= 2; got 1"),
    (["evaluate", "sklearn:iris", "--cv", "1", "--no-store"], "error: --cv (number of folds) must be an integer >= 2; got 1"),
    (["pull", "--tasks", "1", "--flows", "2", "--server", "notaurl", "--out", "x.csv", "--offline"],
     "error: --server must be an http(s) URL"),
])
def test_one_line_exit_2(capsys, tmp_path, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(capsys, argv)
    assert code == 2 and out == "" and err.startswith(message) and err.count("\n") == 1, err
    assert list(tmp_path.iterdir()) == []


def test_more_folds_than_rows_is_one_error_before_any_learner_runs(tmp_path, capsys):
    rng = np.random.default_rng(0)
    path = tmp_path / "thirty.csv"
    pd.DataFrame({"a": rng.normal(size=30), "class": ["x", "y"] * 15}).to_csv(path, index=False)
    code, out, err = _run(capsys, ["recommend", str(path), "--cv", "100", "--meta", "uci"])
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err == "error: cv = 100 folds need at least 100 rows (one per fold); the dataset has 30\n"


def test_info_on_a_folder_says_it_is_a_folder(tmp_path, capsys):
    code, out, err = _run(capsys, ["info", "--meta", str(tmp_path)])
    assert code == 2 and err.startswith(f"error: meta-data path is a folder, not a file: {tmp_path}")


def test_the_library_uses_the_same_checks():
    from algorank.evaluation.cv.datasets import load_dataset

    iris = load_dataset("sklearn:iris")
    with pytest.raises(InputError, match=r"random_state must be an integer >= 0; got -1"):
        Evaluator(random_state=-1)
    with pytest.raises(InputError, match=r"random_state must be an integer >= 0; got -1"):
        recommend(iris, random_state=-1, dry_run=True)
    with pytest.raises(InputError, match=r"cv \(number of folds\) must be an integer >= 2; got 1"):
        recommend(iris, cv=1, dry_run=True)
    with pytest.raises(InputError, match=r"folds \(number of folds\) must be an integer >= 2; got 1"):
        live_time_model(1)
    with pytest.raises(InputError, match=r"random_state must be an integer >= 0; got -3"):
        AlgorankClassifier(random_state=-3).fit(iris.X, iris.y)
