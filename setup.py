"""Build hooks for the ``algorank`` -> repository-root mapping (configuration is in pyproject.toml).

* Start every build from an empty ``build/lib``: setuptools copies whatever is there into the
  wheel, so a ``build/`` folder left by an older layout (top-level ``metadata/``, ``evaluation/``)
  would smuggle those generic names back into the wheel next to ``algorank``.
* The root package holds ``__init__.py``, ``__main__.py`` and ``cli.py``; this file is not part of it.
"""

import shutil

from setuptools import setup
from setuptools.command.build_py import build_py


class CleanBuildPy(build_py):
    """``build_py`` that empties its output folder first (no stale modules in the wheel)."""

    def run(self):
        if not getattr(self, "editable_mode", False):
            shutil.rmtree(self.build_lib, ignore_errors=True)
        super().run()

    def find_package_modules(self, package, package_dir):
        modules = super().find_package_modules(package, package_dir)
        if package == "algorank":
            modules = [m for m in modules if m[1] != "setup"]
        return modules


setup(cmdclass={"build_py": CleanBuildPy})
