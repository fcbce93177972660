"""The three packages and the console script work after `pip install .` (not only from a checkout)."""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import subprocess
import sys

import pytest


def _installed() -> bool:
    try:
        importlib.metadata.distribution("algorank")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


@pytest.mark.skipif(not _installed(), reason="algorank is not pip-installed in this environment (running from a checkout)")
def test_packages_import_outside_the_source_tree(tmp_path):
    code = (
        "import metadata, evaluation, recommender, cli, json;"
        "from metadata import load_snapshot, snapshot_path;"
        "assert 'site-packages' in metadata.__file__, metadata.__file__;"
        "from algorank.metadata.snapshot import load_embedded;"
        "print(json.dumps([load_snapshot().describe().to_dict(), load_embedded('uci').describe().to_dict()]))"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    lcdb, uci = json.loads(proc.stdout)
    assert lcdb["datasets"] == 248 and uci["datasets"] == 63  # both embedded sets ship in the wheel


@pytest.mark.skipif(not _installed(), reason="algorank is not pip-installed in this environment (running from a checkout)")
def test_console_script(tmp_path):
    exe = shutil.which("algorank", path=os.path.dirname(sys.executable))
    assert exe is not None, "console script 'algorank' not installed next to the interpreter"
    proc = subprocess.run([exe, "info", "--json"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["learners"] == 20
