"""CLI skeleton: info output, JSON shape, exit codes, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from algorank import cli

ROOT = Path(__file__).resolve().parents[1]


def test_info_json_shape(capsys):
    assert cli.main(["info", "--meta", "lcdb", "--json"]) == 0
    out = capsys.readouterr().out
    obj = json.loads(out)
    assert obj["datasets"] == 248 and obj["learners"] == 20
    assert obj["cells"] == 4267
    assert 0 < obj["missing_fraction"] < 1
    assert {"fit_time_min", "fit_time_max", "source"} <= set(obj)


def test_info_table(capsys):
    assert cli.main(["info", "--meta", "lcdb"]) == 0
    out = capsys.readouterr().out
    assert "datasets          248" in out and "missing 14.0%" in out and "lcdb" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["info", "--meta", "does-not-exist.parquet"], "error: meta-data file not found"),
        (["frobnicate"], "error: algorank: argument COMMAND: invalid choice"),
        (["info", "--bogus"], "error: algorank: unrecognized arguments: --bogus"),
    ],
)
def test_bad_input_is_one_line_exit_2(argv, message, capsys):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(message)
    assert err.count("\n") == 1 and "Traceback" not in err


def test_invalid_meta_file(tmp_path, capsys):
    bad = tmp_path / "runs.csv"
    pd.DataFrame({"dataset": ["a"], "learner": ["x"], "repeat": [0], "fold": [0], "accuracy": [1.5],
                  "fit_time": [1.0]}).to_csv(bad, index=False)
    assert cli.main(["info", "--meta", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: column 'accuracy' must lie in [0, 1]") and err.count("\n") == 1


def test_info_on_a_csv_meta(tmp_path, capsys):
    path = tmp_path / "runs.csv"
    pd.DataFrame({"dataset": ["a", "a", "b"], "learner": ["x", "y", "x"], "repeat": 0, "fold": 0,
                  "accuracy": [0.5, 0.6, 0.7], "fit_time": [1.0, 2.0, 3.0]}).to_csv(path, index=False)
    assert cli.main(["info", "--meta", str(path), "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert (obj["datasets"], obj["learners"], obj["cells"]) == (2, 2, 3)
    assert obj["missing_fraction"] == pytest.approx(0.25)


def test_cli_py_runs_as_a_script_without_traceback():
    proc = subprocess.run([sys.executable, str(ROOT / "cli.py"), "info", "--meta", "nope.csv"],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2
    assert proc.stderr == ("error: meta-data file not found: nope.csv (embedded sets: modern, lcdb, uci, broad, "
                           "oboe, rdatasets, regression)\n")
    proc = subprocess.run([sys.executable, str(ROOT / "cli.py"), "info", "--json"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0 and json.loads(proc.stdout)["learners"] == 39
