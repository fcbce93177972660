"""The README's "Python API" example runs as written."""

from __future__ import annotations

import logging
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


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
    rec, pred, scores = scope["rec"], scope["pred"], scope["scores"]
    assert 1 <= len(rec.leaderboard) <= 4 and rec.best is not None and rec.best.accuracy > 0.9
    assert set(pred) <= {"malignant", "benign"} and len(pred) == 5
    assert scores.shape == (3,) and scores.min() > 0.85
    assert "accuracy" in capsys.readouterr().out  # the leaderboard was printed
