"""Architecture invariants from DESIGN.md: layering without cycles, no print in the library,
explicit __all__, no global seeding, no plt.show()."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("metadata", "evaluation", "recommender")
MODULES = sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _imported_packages(tree: ast.Module) -> set[str]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found & set(PACKAGES + ("cli",))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_layering(path):
    pkg = path.relative_to(ROOT).parts[0]
    used = _imported_packages(_tree(path))
    allowed = {"metadata": {"metadata"}, "evaluation": {"metadata", "evaluation"},
               "recommender": {"metadata", "evaluation", "recommender"}}[pkg]
    assert used <= allowed, f"{path.name} imports {sorted(used - allowed)}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_print_show_or_global_seed(path):
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else (f.attr if isinstance(f, ast.Attribute) else "")
            owner = f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else ""
            assert name != "print", f"{path.name}:{node.lineno} prints; use logging"
            assert not (name == "show" and owner == "plt"), f"{path.name}:{node.lineno} calls plt.show()"
            assert not (name == "seed" and owner in {"random", "np"}), f"{path.name}:{node.lineno} seeds globally"
        if isinstance(node, ast.Attribute) and node.attr == "seed" and isinstance(node.value, ast.Attribute):
            assert node.value.attr != "random", f"{path.name}:{node.lineno} seeds numpy's global generator"


@pytest.mark.parametrize("path", [p for p in MODULES if not p.name.startswith("_") or p.name == "__init__.py"],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_explicit_all(path):
    tree = _tree(path)
    names = {t.id for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
             for t in (node.targets if isinstance(node, ast.Assign) else [node.target]) if isinstance(t, ast.Name)}
    assert "__all__" in names, f"{path.relative_to(ROOT)} has no __all__"
