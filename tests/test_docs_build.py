"""The documentation site builds with warnings as errors, and its API reference covers every public name."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import algorank

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def test_api_reference_lists_every_public_name():
    text = (DOCS / "api.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^   (\w+)$", text, flags=re.M))
    public = {n for n in algorank.__all__ if n != "__version__"}
    assert listed == public, {"missing": sorted(public - listed), "not public": sorted(listed - public)}


def test_every_guide_page_has_a_title_and_the_guide_globs_them():
    pages = sorted((DOCS / "guide").glob("*.md"))
    assert len(pages) >= 9
    for page in pages:
        assert page.read_text(encoding="utf-8").startswith("# "), page.name
    assert ":glob:" in (DOCS / "guide" / "index.md").read_text(encoding="utf-8")


@pytest.mark.slow
def test_docs_build_with_warnings_as_errors(tmp_path):
    pytest.importorskip("sphinx")
    for extension in ("numpydoc", "myst_parser", "pydata_sphinx_theme"):
        pytest.importorskip(extension)  # the `docs` extra
    out = tmp_path / "html"
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                           "-d", str(tmp_path / "doctrees"), str(DOCS), str(out)],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-4000:]
    for name in algorank.__all__:
        if name != "__version__":
            page = out / "generated" / f"algorank.{name}.html"
            assert page.is_file(), name
            assert "Examples" in page.read_text(encoding="utf-8"), name
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "User guide" in index and "benchmarks/index.html" in index
    assert (out / "guide" / "01-recommending.html").is_file() and (out / "methods.html").is_file()
