"""Library errors and warnings name parameters, never command-line ``--flags``: the command line
(cli.py) is the only place that knows its flags."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = sorted(p for pkg in ("metadata", "evaluation", "recommender") for p in (ROOT / pkg).rglob("*.py"))
FLAG = re.compile(r"(?<![\w-])--[a-z]")
_LOG = {"debug", "info", "warning", "error", "exception", "critical", "warn"}


def _texts(node: ast.AST):
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            yield sub.lineno, sub.value


def _messages(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            yield from _texts(node.exc)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _LOG
              and isinstance(node.func.value, ast.Name) and node.func.value.id in ("logger", "logging")):
            yield from _texts(node)


@pytest.mark.parametrize("path", LIBRARY, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_flag_in_library_messages(path):
    bad = [(line, text) for line, text in _messages(path) if FLAG.search(text)]
    assert not bad, f"{path.relative_to(ROOT)} names command-line flags: {bad}"


def test_the_checker_sees_raise_and_log_messages(tmp_path):
    f = tmp_path / "m.py"
    f.write_text('def f(x):\n    logger.warning("use --x %s", x)\n    raise ValueError(f"bad {x}; use --y")\n')
    assert sorted(t for _, t in _messages(f) if FLAG.search(t)) == ["; use --y", "use --x %s"]
