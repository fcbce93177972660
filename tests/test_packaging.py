"""One installable package: the wheel holds only ``algorank`` (plus dist-info), it installs next to
the PyPI packages ``metadata`` and ``evaluation``, and the console script works outside the checkout."""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_IGNORE = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache",
                                 ".hypothesis", "tests", "out", "tmp", ".pkgroot", "_build")


def _installed() -> bool:
    try:
        importlib.metadata.distribution("algorank")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel built from a copy of this checkout that carries a stale ``build/`` of the old layout."""
    src = tmp_path_factory.mktemp("src") / "algorank"
    shutil.copytree(ROOT, src, ignore=_IGNORE)
    stale = src / "build" / "lib" / "metadata"
    stale.mkdir(parents=True)
    (stale / "__init__.py").write_text("raise ImportError('stale copy of the old layout')\n")
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "-q", "-w", str(out)],
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0 and ("Could not find" in proc.stderr or "NewConnectionError" in proc.stderr):
        pytest.skip("cannot fetch the build backend (setuptools) from the package index")
    assert proc.returncode == 0, proc.stderr
    (whl,) = out.glob("algorank-*.whl")
    return whl


def test_wheel_has_one_top_level_package(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert {n.split("/")[0] for n in names} == {"algorank", wheel.name.split("-py")[0] + ".dist-info"}
    top = (zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("top_level.txt")))).decode().split()
    assert top == ["algorank"]
    for data in ("lcdb_snapshot.parquet", "uci_evaluator.parquet", "uci_evaluator.json"):
        assert f"algorank/metadata/data/{data}" in names  # the embedded sets ship
    assert "algorank/setup.py" not in names and "algorank/cli.py" in names and "algorank/__main__.py" in names
    assert "algorank/report.py" in names and "algorank/templates/report.html.j2" in names  # the HTML report ships
    for pkg in ("metadata", "evaluation/cv", "evaluation/meta", "evaluation/stats", "recommender/live"):
        assert f"algorank/{pkg}/__init__.py" in names


def test_installs_next_to_pypi_metadata_and_evaluation(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    # make this test environment's dependencies (numpy, pandas, ...) visible without reinstalling them;
    # the new venv's own site-packages (algorank, PyPI's metadata/evaluation) still comes first
    purelib = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    # (--ignore-installed below: the parent environment's own algorank is visible through this path and
    # must neither satisfy the requirement nor be uninstalled)
    (Path(purelib) / "zz_parent_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    proc = subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--ignore-installed", str(wheel),
                           "metadata==0.2"],
                          capture_output=True, text=True, timeout=600)
    if proc.returncode == 0:  # PyPI's `evaluation` with its own dependencies (glog, ...)
        proc = subprocess.run([str(py), "-m", "pip", "install", "-q", "evaluation==0.0.2"], capture_output=True,
                              text=True, timeout=600)
    if proc.returncode != 0 and ("No matching distribution" in proc.stderr or "NewConnectionError" in proc.stderr
                                 or "Could not find" in proc.stderr):
        pytest.skip(f"PyPI's 'metadata'/'evaluation' packages cannot be fetched here: {proc.stderr.splitlines()[-1]}")
    assert proc.returncode == 0, proc.stderr
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # PyPI's `metadata` 0.2 cannot import on Python 3 by itself (it needs the Python 2 package
    # hachoir_core), so for it we check which file `import metadata` would run, not that it runs.
    code = ("import importlib.util, json, algorank, evaluation;"
            "from algorank import load_meta;"
            "spec = importlib.util.find_spec('metadata');"
            "assert 'algorank' not in spec.origin and 'algorank' not in evaluation.__file__, spec.origin;"
            "print(json.dumps([load_meta('lcdb').describe().datasets, load_meta('uci').describe().datasets]))")
    run = subprocess.run([str(py), "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == [248, 63]
    cli = subprocess.run([str(env_dir / "bin" / "algorank"), "--help"], cwd=tmp_path, capture_output=True, text=True,
                         env=env)
    assert cli.returncode == 0 and "recommend" in cli.stdout, cli.stderr


@pytest.mark.skipif(not _installed(), reason="algorank is not pip-installed in this environment")
def test_console_script_and_python_m(tmp_path):
    exe = shutil.which("algorank", path=os.path.dirname(sys.executable))
    assert exe is not None, "console script 'algorank' not installed next to the interpreter"
    proc = subprocess.run([exe, "info", "--json"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    # the default set, modern: LCDB's 20, the 4 boosting defaults and AutoGluon's 15 configurations
    assert json.loads(proc.stdout)["learners"] == 39
    mod = subprocess.run([sys.executable, "-m", "algorank", "info", "--meta", "uci", "--json"], cwd=tmp_path,
                         capture_output=True, text=True)
    assert mod.returncode == 0 and json.loads(mod.stdout)["datasets"] == 63, mod.stderr


# --- the licence, the data the wheel ships, optional dependencies ---------------------------------------------


def test_license_file_is_mit_like_the_project_metadata():
    import tomllib

    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License") and "the algorank developers" in text
    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["license"] == {"text": "MIT"}


def test_wheel_ships_only_the_assembled_data_files(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    data = [n for n in names if n.startswith("algorank/metadata/data/")]
    folders = sorted({n.split("/")[3] for n in data if n.count("/") > 3})
    assert folders == ["splits"], folders  # no per-dataset build folder (broad/, fresh/, reserve*/)
    assert len(data) < 40 and not any(n.endswith("SELECTION.md") for n in data)
    # every embedded set the library loads by name is there, with its record
    from algorank.metadata.snapshot import EMBEDDED

    for name, (parquet, record) in EMBEDDED.items():
        if name == "regression" and not (ROOT / "metadata" / "data" / record).is_file():
            continue  # registered before its build is assembled: loading it says it is not built yet
        assert f"algorank/metadata/data/{parquet}" in names and f"algorank/metadata/data/{record}" in names
    from algorank.metadata.splits import SPLIT_NAMES

    for split in SPLIT_NAMES:
        assert f"algorank/metadata/data/splits/{split}_heldout.txt" in names


def test_numba_is_an_optional_extra_and_only_the_fast_multitest_imports_it():
    import ast
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not [d for d in project["dependencies"] if d.startswith("numba")]
    assert any(d.startswith("numba") for d in project["optional-dependencies"]["fast"])
    assert any(d.startswith("openml") for d in project["dependencies"])  # pulling from OpenML is the core job
    importers = set()
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT)
        if rel.parts[0] in ("tests", "build", "docs", ".venv", ".pkgroot") or "site-packages" in rel.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            mods = ([a.name for a in node.names] if isinstance(node, ast.Import)
                    else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(m.split(".")[0] == "numba" for m in mods):
                importers.add(str(rel))
    assert importers == {"recommender/multitest_fast.py"}


def test_the_fast_multitest_gives_the_same_order_without_numba(monkeypatch):
    import numpy as np

    from algorank.recommender import multitest_fast as fast
    from algorank.recommender.multitest import multitest

    rng = np.random.default_rng(5)
    scores = rng.normal(0.7, 0.05, (8, 10))
    scores[5] += 0.08
    scores[2] += 0.04
    monkeypatch.setattr(fast, "HAVE_NUMBA", False)
    fast._compiled.cache_clear()
    try:
        plain = fast.multitest_order(scores, test="paired_t")
    finally:
        fast._compiled.cache_clear()
    assert sorted(plain.tolist()) == list(range(8))
    ref = multitest(scores, list(range(8)), pairwise="paired_t", reasons=False)  # row 0 the cheapest
    assert tuple(str(i) for i in plain) == ref.order
