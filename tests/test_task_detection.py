"""Task detection: a numeric target is a regression target unless it looks like class labels."""

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from algorank import cli
from algorank.evaluation.cv.datasets import as_dataset, load_dataset
from algorank.evaluation.cv.task import numeric_target_task
from algorank.metadata.errors import InputError


@pytest.fixture(scope="module")
def diabetes_csv(tmp_path_factory):
    from sklearn.datasets import load_diabetes

    path = tmp_path_factory.mktemp("data") / "diabetes.csv"
    load_diabetes(as_frame=True).frame.to_csv(path, index=False)  # the target: 214 distinct whole numbers
    return path


@pytest.mark.parametrize("values, task", [
    ([0, 1] * 50, "classification"),
    (list(range(1, 21)) * 5, "classification"),  # 20 distinct: the most read as labels whatever their share
    (list(range(21)) * 5, "regression"),  # 21 distinct in 105 rows (20 %)
    (list(range(30)) * 40, "classification"),  # 30 distinct in 1200 rows (2.5 %)
    (list(range(101)) * 100, "regression"),  # 101 distinct: over the cap even at 1 %
    ([0.5, 1.0] * 50, "regression"),  # not whole numbers
    ([1.0, 2.0, np.nan] * 10, "classification"),  # missing values ignored
])
def test_the_rule_on_hand_made_targets(values, task):
    assert numeric_target_task(pd.Series(values))[0] == task


def test_diabetes_whole_number_target_is_regression_not_214_classes(diabetes_csv):
    d = load_dataset(str(diabetes_csv))
    assert d.task == "regression" and d.classes == () and d.y.dtype == float
    assert d.task_detection == ("regression (target 'target' is numeric with 214 distinct values in 442 rows; "
                                "override with --task, task= in Python)")
    assert d.meta_features["n_classes"] == 0 and d.meta_features["majority_fraction"] == 0.0
    forced = load_dataset(str(diabetes_csv), task="classification")  # the old reading, on request
    assert len(forced.classes) == 214 and forced.task_detection.startswith("classification (as asked: the values")
    frame = pd.read_csv(diabetes_csv)
    from algorank.api import recommend

    assert recommend(frame, target="target", dry_run=True).task == "regression"
    assert recommend(frame.drop(columns="target"), y=frame["target"], dry_run=True).task == "regression"  # X and y=


def test_cli_task_classification_forces_the_old_reading(diabetes_csv, capsys):
    assert cli.main(["recommend", str(diabetes_csv), "--dry-run", "--json", "--task", "classification"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["task"] == "classification" and out["dataset_info"]["n_classes"] == 214
    assert out["task_detection"] == ("classification (as asked: the values of the numeric target 'target' read as "
                                     "class labels)")
    assert cli.main(["recommend", str(diabetes_csv), "--task", "regression", "--dry-run", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["task"] == "regression" and out["task_detection"] == "regression (as asked)"


def test_a_continuous_target_is_regression_and_cannot_be_forced_to_labels(tmp_path):
    rng = np.random.default_rng(0)
    path = tmp_path / "prices.csv"
    pd.DataFrame({"x": rng.normal(size=50), "target": rng.normal(size=50) * 10}).to_csv(path, index=False)
    assert load_dataset(str(path)).task_detection == ("regression (target 'target' is numeric with 50 distinct "
                                                      "values, not all whole numbers; override with --task, task= in "
                                                      "Python)")
    with pytest.raises(InputError, match="not whole numbers.*cannot be class labels"):
        load_dataset(str(path), task="classification")


def test_labels_stay_classification_and_say_how(tmp_path):
    path = tmp_path / "codes.csv"
    pd.DataFrame({"x": np.arange(40.0) / 3, "target": [0, 1, 2, 3] * 10}).to_csv(path, index=False)
    d = load_dataset(str(path))
    assert d.classes == ("0", "1", "2", "3") and d.task == "classification"
    assert d.task_detection == ("classification (target 'target' is numeric with 4 distinct whole numbers in 40 "
                                "rows: class labels; override with --task, task= in Python)")
    nominal = load_dataset("sklearn:iris")
    assert nominal.task_detection == "classification (target 'target' is nominal)"
    with pytest.raises(InputError, match="which is nominal"):
        load_dataset("sklearn:iris", task="regression")
    with pytest.raises(InputError, match="task must be one of auto, classification, regression"):
        load_dataset("sklearn:iris", task="clustering")
    # integer class codes given as y stay labels; the estimator reads its codes as labels whatever their number
    assert as_dataset(np.zeros((30, 2)) + np.arange(30)[:, None], y=[0, 1, 2] * 10).classes == ("0", "1", "2")
    many = as_dataset(np.arange(60.0).reshape(30, 2), y=np.repeat(np.arange(15), 2), task="classification")
    assert len(many.classes) == 15


def test_the_text_output_has_the_task_line(tmp_path):
    path = tmp_path / "codes.csv"
    pd.DataFrame({"x": np.arange(40.0), "class": ["a", "b"] * 20}).to_csv(path, index=False)
    proc = subprocess.run([sys.executable, "-m", "algorank", "recommend", str(path), "--dry-run", "--top", "2"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "task: classification (target 'class' is nominal)" in proc.stdout.splitlines()


def test_evaluate_says_the_task_in_its_text_and_json(tmp_path, capsys):
    path = tmp_path / "codes.csv"
    pd.DataFrame({"x": np.arange(40.0), "y": [0, 1] * 20}).to_csv(path, index=False)
    assert cli.main(["evaluate", str(path), "--target", "y", "--learners", "lda", "--cv", "2", "--repeats", "1",
                     "--no-store", "--quiet"]) == 0
    assert ("task: classification (target 'y' is numeric with 2 distinct whole numbers in 40 rows: class labels; "
            "override with --task, task= in Python)") in capsys.readouterr().out.splitlines()
    assert cli.main(["evaluate", str(path), "--target", "y", "--learners", "lda", "--cv", "2", "--repeats", "1",
                     "--no-store", "--quiet", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["task"] == "classification" and [c["action"] for c in d["columns"]] == ["kept"]
