"""Sphinx configuration of the algorank documentation (``python -m sphinx -W -b html docs docs/_build/html``)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

# the package `algorank` is the repository root; in a checkout without an install, import it through a
# folder that maps the name onto the root (made here, git-ignored)
ROOT = Path(__file__).resolve().parents[1]
try:
    import algorank  # noqa: F401  (installed, e.g. `pip install '.[docs]'`)
except ImportError:  # pragma: no cover - a bare checkout
    shim = ROOT / "docs" / "_build" / "pkgroot"
    shim.mkdir(parents=True, exist_ok=True)
    link = shim / "algorank"
    if not link.exists():
        os.symlink(ROOT, link)
    sys.path.insert(0, str(shim))
    import algorank  # noqa: F401

project = "algorank"
author = "the algorank developers"
copyright = "the algorank developers"
release = version = algorank.__version__

extensions = [
    "myst_parser",
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "generated/*.md"]
templates_path = ["_templates"]

myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 4  # GitHub-style anchors for `[text](page.md#a-heading)`

autosummary_generate = True
autodoc_typehints = "none"  # the numpydoc sections say the types
numpydoc_show_class_members = False  # attributes are listed in each class's docstring
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# the API's docstrings refer to modules and helpers outside the public reference (``:func:`~algorank.x.y```);
# those references are for readers of the source and are not resolved into links here
nitpicky = False
suppress_warnings = ["autosummary.import_cycle"]

html_theme = "pydata_sphinx_theme"
html_title = "algorank"
html_static_path = ["_static"]
html_theme_options = {"navigation_with_keys": False, "show_toc_level": 2}


def _skip_foreign_members(app, what, name, obj, skip, options):
    """Leave out members that scikit-learn generates or defines (``set_fit_request``, ``get_params``, ...):
    their documentation is scikit-learn's."""
    module = getattr(obj, "__module__", None) or ""
    if what == "class" and module and not module.startswith("algorank"):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_foreign_members)
