"""`algorank evaluate`: JSON contract, --out files, one-line errors with exit 2."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from algorank import cli
from algorank.metadata.dataset import MetaDataset


def _run(capsys, *argv):
    code = cli.main(["evaluate", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_contract_and_out(tmp_path, capsys):
    store = tmp_path / "s.sqlite"
    code, out, err = _run(capsys, "sklearn:iris", "--learners", "lda", "knn", "--cv", "3", "--repeats", "2",
                          "--store", str(store), "--json", "--quiet", "--out", str(tmp_path / "out"))
    assert code == 0, err
    d = json.loads(out)
    assert set(d) >= {"learners", "failures", "store"}
    assert d["store"] == str(store) and d["failures"] == []
    lda = d["learners"]["sklearn.discriminant_analysis.LinearDiscriminantAnalysis"]
    assert set(lda) >= {"accuracy_mean", "accuracy_median", "repetitions", "fit_time_mean", "status"}
    assert lda["repetitions"] == 2 and lda["status"] == "ok" and 0.9 < lda["accuracy_mean"] <= 1
    meta = MetaDataset.load(tmp_path / "out" / "runs.csv")
    assert len(meta) == 2 * 2 * 3 and meta.dataset_ids == ["iris"]
    assert pd.read_csv(tmp_path / "out" / "summary.csv").shape[0] == 2


def test_table_output_names_failures(tmp_path, capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(cli.__file__).rsplit("/", 1)[0] + "/tests")
    code, out, err = _run(capsys, "sklearn:iris", "--learners", "lda", "helpers_estimators.FailingClassifier",
                          "--allow-module", "helpers_estimators",
                          "--cv", "2", "--no-store", "--quiet")
    assert code == 0
    assert "failed: helpers_estimators.FailingClassifier: error: RuntimeError: deliberate failure" in out
    assert "lda" in out
    assert any(line.startswith("learner") and "accuracy (higher better)" in line for line in out.splitlines())


@pytest.mark.parametrize(
    "argv, match",
    [
        (["missing.arff"], "not found"),
        (["sklearn:iris", "--target", "nope"], "not an attribute"),
        (["sklearn:iris", "--target", "petal length (cm)", "--task", "classification"], "not whole numbers"),
        (["sklearn:iris", "--repeats", "0"], "--repeats"),
        (["sklearn:iris", "--repeats", "auto", "--stop", "fixed"], "adaptive"),
        (["sklearn:iris", "--cv", "500"], "at least 500 rows"),
        (["sklearn:iris", "--learners", "bogus"], "unknown learner"),
        (["sklearn:iris", "--scheme", "magic"], "invalid choice"),
        (["sklearn:iris", "--timeout", "-3"], "timeout"),
    ],
)
def test_bad_input_one_line_exit_2(tmp_path, capsys, argv, match):
    out_dir = tmp_path / "out"
    code, out, err = _run(capsys, *argv, "--no-store", "--quiet", "--out", str(out_dir))
    assert code == 2
    assert err.startswith("error: ") and err.count("\n") == 1 and match in err
    assert "Traceback" not in err and not out_dir.exists()


def test_single_class_and_empty_file(tmp_path, capsys):
    one = tmp_path / "one.csv"
    one.write_text("x,class\n1,a\n2,a\n3,a\n")
    code, _, err = _run(capsys, str(one), "--no-store")
    assert code == 2 and "single class" in err
    empty = tmp_path / "e.arff"
    empty.write_text("")
    code, _, err = _run(capsys, str(empty), "--no-store")
    assert code == 2 and "empty" in err
