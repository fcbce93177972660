"""``algorank --version``, ``recommend --save-model`` (loaded in a fresh process), and the honest outcome
when nothing was tested within the budget (exit code, ``best: null``, the estimator raises)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from algorank import cli

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]


def test_version(capsys):
    import algorank

    with pytest.raises(SystemExit) as exc:
        cli.main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out.strip() == f"algorank {algorank.__version__}"


def test_saved_model_loads_and_predicts_in_a_fresh_process(tmp_path, capsys):
    path = tmp_path / "model.joblib"
    code = cli.main(["recommend", "sklearn:iris", "--budget", "30", "--top", "2", "--cv", "3", "--quiet",
                     "--exclude-dataset", "iris", "--save-model", str(path), "--out", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert code == 0 and out.count(f"wrote {path}") == 1 and path.is_file()
    # the report, written after the model, names it (it said to run again with --save-model)
    report = (tmp_path / "out" / "report.html").read_text()
    assert f"the model refitted on all the data is saved in {path}" in report and "run with --save-model" not in report
    script = ("import joblib, sklearn, numpy as np\n"
              "from sklearn.datasets import load_iris\n"
              f"m = joblib.load({str(path)!r})\n"
              "b = load_iris()\n"
              "pred = m.predict(b.data)\n"
              "acc = float(np.mean(pred == b.target_names[b.target]))\n"
              "print(acc, m.algorank_info_['sklearn_version'] == sklearn.__version__, m.algorank_info_['learner'])\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          cwd=str(ROOT.parent))
    assert proc.returncode == 0, proc.stderr
    acc, same_version, learner = proc.stdout.split()
    assert float(acc) > 0.9 and same_version == "True" and learner


def test_save_model_path_is_checked_before_any_work(tmp_path, capsys):
    code = cli.main(["recommend", "sklearn:iris", "--save-model", str(tmp_path), "--dry-run"])
    assert code == 2 and "must be a file" in capsys.readouterr().err


def _nothing_meta():
    """Meta-data whose only learner is one whose test always times out."""
    from algorank.metadata.dataset import MetaDataset

    learner = 'helpers_estimators.SlowClassifier{"delay": 60}'
    runs = [{"dataset": f"d{i}", "learner": learner, "repeat": 0, "fold": 0, "accuracy": 0.9, "fit_time": 0.01,
             "predict_time": 0.0} for i in range(3)]
    import pandas as pd

    return MetaDataset(pd.DataFrame(runs)), learner


def test_nothing_tested_is_a_distinct_exit_code_and_best_null(tmp_path, capsys):
    meta, _ = _nothing_meta()
    path = tmp_path / "slow.parquet"
    meta.save(path)
    code = cli.main(["recommend", "sklearn:iris", "--meta", str(path), "--strategy", "ar:p=0", "--budget", "3",
                     "--cv", "3", "--allow-module", "helpers_estimators", "--json", "--quiet"])
    d = json.loads(capsys.readouterr().out)
    assert code == cli.EXIT_NOTHING_TESTED == 3 and d["best"] is None
    code = cli.main(["recommend", "sklearn:iris", "--meta", str(path), "--strategy", "ar:p=0", "--budget", "3",
                     "--cv", "3", "--allow-module", "helpers_estimators", "--quiet"])
    out = capsys.readouterr().out
    assert code == 3 and "nothing was tested successfully" in out


def test_the_estimator_raises_when_nothing_was_tested_unless_asked_to_warn(caplog):
    from sklearn.datasets import load_iris

    from algorank import AlgorankClassifier
    from algorank.recommender.live.estimator import NothingTestedError

    meta, learner = _nothing_meta()
    X, y = load_iris(return_X_y=True)
    clf = AlgorankClassifier(budget=3.0, meta=meta, cv=3, strategy="ar:p=0", allow_modules=("helpers_estimators",))
    with pytest.raises(NothingTestedError, match="no learner finished its test within the budget of 3 s"):
        clf.fit(X, y)
    assert not hasattr(clf, "best_estimator_")
    with pytest.raises(Exception, match="on_untested must be one of raise, warn"):
        clf.set_params(on_untested="ignore").fit(X, y)
