"""Every code block of the README runs as written: the Python API example in this process, the command-line
blocks in subprocesses (all but the two set-up commands, which CI itself runs), and the output the README
shows for the main job is what the command prints."""

from __future__ import annotations

import logging
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
SETUP = "python3 -m venv .venv"


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def _commands(block: str) -> list[list[str]]:
    """The block's commands as argument lists (continuation lines joined, comments dropped)."""
    return [shlex.split(line, comments=True) for line in block.replace("\\\n", " ").splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    assert argv[0] == "algorank", f"README command does not start with algorank: {argv}"
    env = dict(os.environ, MPLBACKEND="Agg", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    return subprocess.run([sys.executable, "-m", "algorank", *argv[1:]], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


def test_readme_python_api_example_runs(capsys):
    text = README.read_text(encoding="utf-8")
    block = re.search(r"<!-- api-example -->\s*```python\n(.*?)```", text, flags=re.S)
    assert block, "README has no api-example block"
    logging.disable(logging.WARNING)
    try:
        scope: dict = {}
        exec(compile(block.group(1), "README.md", "exec"), scope)
    finally:
        logging.disable(logging.NOTSET)
    rec, pred, scores, meta = scope["rec"], scope["pred"], scope["scores"], scope["meta"]
    assert 1 <= len(rec.leaderboard) <= 4 and rec.best is not None and rec.best.accuracy > 0.9
    assert set(pred) <= {"malignant", "benign"} and len(pred) == 5
    assert scores.shape == (3,) and scores.min() > 0.85
    assert meta.describe().datasets == 63 and len(meta.learner_ids) == 20
    out = capsys.readouterr().out
    assert "accuracy" in out  # the leaderboard was printed
    assert "AR-A3R ranking, P = 1/16" in out and "63 datasets" in out  # the ranking was printed


def test_readme_has_the_blocks_this_test_runs():
    bash = _blocks("bash")
    assert sum(SETUP in b for b in bash) == 2  # install + main job, and the test command
    assert len([b for b in bash if SETUP not in b]) == 3, "a new bash block: give it a test here"
    assert len(_blocks("python")) == 1 and len(_blocks("text")) == 1


@pytest.mark.slow
def test_readme_main_job_runs_and_prints_what_the_readme_shows(tmp_path):
    (block,) = [b for b in _blocks("bash") if "recommend" in b and SETUP not in b]
    (argv,) = _commands(block)
    proc = _run(argv, tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    shown = _blocks("text")[0].splitlines()
    out = [" ".join(line.split()) for line in proc.stdout.splitlines()]
    assert shown[0] in proc.stdout.splitlines()  # the results line, word for word
    assert " ".join(shown[1].split()) in out  # the table's columns
    assert any(line.startswith("best: ") and " with accuracy " in line for line in out)
    out_dir = tmp_path / argv[argv.index("--out") + 1]
    assert (out_dir / "report.html").is_file() and (out_dir / "trace.csv").is_file()


@pytest.mark.slow
def test_readme_research_commands_run(tmp_path):
    (block,) = [b for b in _blocks("bash") if "tune-p" in b]
    commands = _commands(block)
    assert [c[1] for c in commands] == ["benchmark", "tune-p", "multitest", "compare"]
    for argv in commands:
        proc = _run(argv, tmp_path)
        assert proc.returncode == 0, (argv, proc.stderr[-2000:])
        assert len(proc.stdout.splitlines()) >= 5, (argv, proc.stdout)
    assert list(tmp_path.iterdir()) == []  # nothing written where none was asked for


def test_readme_regression_claim_reproduces_the_recorded_held_out_numbers(tmp_path):
    (block,) = [b for b in _blocks("bash") if "--meta regression --heldout" in b]
    (argv,) = _commands(block)
    proc = _run(argv, tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows: dict = {}
    for line in proc.stdout.splitlines():  # the first table (the comparison table repeats the names)
        if line.split():
            rows.setdefault(line.split()[0], line.split())
    assert "scored on 15 held-out datasets" in proc.stdout
    # the README's numbers: 164 s (2.74 min) for eiu, 237 s (3.95 min) for lt, 101 s for the oracle bound
    assert rows["eiu"][1:3] == ["2.74", "min"] and rows["lt"][1:3] == ["3.95", "min"]
    assert "101 s" in next(line for line in proc.stdout.splitlines() if line.startswith("oracle bound"))
