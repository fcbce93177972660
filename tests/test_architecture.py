"""Architecture invariants from DESIGN.md: layering without cycles, no print in the library,
explicit __all__, no global seeding, no plt.show()."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("metadata", "evaluation", "recommender", "commands")
MODULES = sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))
#: Everything installed as ``algorank``: the three packages plus the root modules.
ALL_MODULES = MODULES + sorted(p for p in ROOT.glob("*.py") if p.name != "setup.py")

#: Layers, bottom to top, and what each may import.  The base level of evaluation (cv, stats) sits
#: on metadata; the strategy kernel (traces, simulated environments, time models, the loss-time
#: measure, the oracle order, P labels) on the base level; the strategies on the kernel; the
#: benchmark harness (evaluation.meta) above the strategies; the API above everything; the CLI on
#: top.  ``algorank`` (the package __init__) is the API's front door.
_BASE = {"metadata", "evaluation.cv", "evaluation.stats"}
LAYER_DEPS = {
    "metadata": {"metadata"},
    "evaluation.cv": {"metadata", "evaluation.cv", "evaluation.stats"},
    "evaluation.stats": {"metadata", "evaluation.stats"},
    "recommender.kernel": _BASE | {"recommender.kernel"},
    "recommender": _BASE | {"recommender.kernel", "recommender"},
    "evaluation.meta": _BASE | {"recommender.kernel", "recommender", "evaluation.meta"},
    "api": _BASE | {"recommender.kernel", "recommender", "evaluation.meta", "api"},
    "cli": _BASE | {"recommender.kernel", "recommender", "evaluation.meta", "api", "cli"},
}


@functools.lru_cache(maxsize=None)  # each module is parsed once for all the checks (the trees are only read)
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return ".".join(["algorank", *parts])


@functools.lru_cache(maxsize=None)
def _imports(path: Path) -> frozenset[str]:
    """Absolute module names imported anywhere in the file (relative imports resolved)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            found.add(mod)
            found |= {f"{mod}.{a.name}" for a in node.names}  # `from pkg import submodule`
    return frozenset(found)


def _layer(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "algorank" or len(parts) < 2:
        return None
    if parts[1] == "evaluation":
        return "evaluation." + parts[2] if len(parts) > 2 and parts[2] in ("cv", "stats", "meta") else "evaluation"
    if parts[1] == "recommender" and len(parts) > 2 and parts[2] == "kernel":
        return "recommender.kernel"
    if parts[1] in ("metadata", "recommender"):
        return parts[1]
    return "cli" if parts[1] in ("cli", "__main__", "commands") else "api"  # root modules: api.py, report.py, ...


_KNOWN = {_module_name(p) for p in ALL_MODULES}


@pytest.mark.parametrize("path", ALL_MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_go_through_the_algorank_namespace(path):
    # a bare `import metadata` would pick up PyPI's `metadata` package once installed
    bare = {m for m in _imports(path) if m.split(".")[0] in PACKAGES + ("cli",)}
    assert not bare, f"{path.relative_to(ROOT)} imports {sorted(bare)} outside the algorank namespace"


@pytest.mark.parametrize("path", ALL_MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_layering(path):
    name = _module_name(path)
    own = "api" if name == "algorank" else _layer(name)
    if own == "evaluation":  # the evaluation package __init__ only
        return
    used = {_layer(m) for m in _imports(path) if m in _KNOWN} - {None}
    allowed = LAYER_DEPS[own]
    assert used <= allowed, f"{path.relative_to(ROOT)} ({own}) imports {sorted(used - allowed)}"


def test_no_import_cycle():
    graph = {}
    for p in ALL_MODULES:
        mod = _module_name(p)
        deps = set()
        for m in _imports(p):
            if m in _KNOWN and m != mod:
                deps.add(m)
        graph[mod] = deps
    # package __init__ files that re-export their submodules are entry points, not members of a
    # cycle through a submodule importing a sibling by its absolute name: count edges into a
    # package only when the package itself (not a submodule) is imported
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycle = stack[stack.index(nxt):] + [nxt]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)


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


#: What the command line may import: the API, the result and plot modules, the error, I/O and allocator helpers.
CLI_ALLOWED = {"algorank.api", "algorank.results", "algorank.recommender.live.report", "algorank.metadata.errors",
               "algorank.metadata.io", "algorank.metadata.text", "algorank.metadata.allocator"}


COMMAND_MODULES = sorted((ROOT / "commands").glob("*.py"))


def test_the_cli_imports_only_the_api_results_and_helpers():
    used = {m for m in _imports(ROOT / "cli.py") if m in _KNOWN}
    assert used <= CLI_ALLOWED, f"cli.py imports {sorted(used - CLI_ALLOWED)}"
    assert "algorank.api" in used and "algorank.results" in used


@pytest.mark.parametrize("path", COMMAND_MODULES, ids=lambda p: p.name)
def test_a_command_imports_only_the_api_results_helpers_and_shared_options(path):
    allowed = CLI_ALLOWED | {"algorank.commands", "algorank.commands.options"}
    used = {m for m in _imports(path) if m in _KNOWN}
    assert used <= allowed, f"commands/{path.name} imports {sorted(used - allowed)}"


def test_every_registered_command_calls_its_api_function():
    from algorank import cli

    modules = {_module_name(p) for p in COMMAND_MODULES} - {"algorank.commands", "algorank.commands.options"}
    assert sorted(cli.COMMANDS) == sorted(modules)  # every command module is registered, and only those
    for name in cli.COMMANDS:
        tree = _tree(ROOT / "commands" / (name.rpartition(".")[2] + ".py"))
        run = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "run"]
        assert len(run) == 1, f"{name} has no run(args)"
        api = {a.name for node in ast.walk(run[0]) if isinstance(node, ast.ImportFrom)
               and node.module == "algorank.api" for a in node.names}
        assert api, f"{name}.run calls no algorank.api function"


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_the_cli_is_at_most_600_lines():
    assert _lines(ROOT / "cli.py") <= 600


#: Library files over 800 lines that are being split by their own work (each listed with its size cap
#: today, so none may grow); every other module stays within 800 lines.
#: api.py: its public functions' docstrings gained the numpydoc sections they lacked (``load_meta``'s Returns,
#: ``info``'s Parameters); the process plumbing it still holds (``process_start``, ``parse_repeats``, ...) is to
#: move out of the public API, which brings it back under 800.
OVER_800: dict[str, int] = {"api.py": 810}


def _example_lines(path: Path) -> int:
    """Lines of the docstrings' numpydoc ``Examples`` sections: the public API's examples are documentation
    that every public name must have, not code, so they do not count towards a module's size."""
    count = 0
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            start = doc.find("Examples\n") if doc else -1
            if start >= 0 and doc[start:].splitlines()[1].strip().startswith("---"):
                count += len(doc[start:].splitlines())
    return count


@pytest.mark.parametrize("path", ALL_MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_modules_have_one_job_and_at_most_800_lines(path):
    rel = str(path.relative_to(ROOT))
    size = _lines(path) - _example_lines(path)
    assert size <= OVER_800.get(rel, 800), f"{rel} has {size} lines (not counting its docstrings' examples)"


def test_only_examples_sections_are_left_out_of_a_modules_size(tmp_path):
    f = tmp_path / "m.py"
    f.write_text('def f():\n    """Do.\n\n    Examples\n    --------\n    >>> f()\n    """\n    return 1\n\n\n'
                 'def g():\n    """Examples of use are elsewhere.\n\n    Notes\n    -----\n    None.\n    """\n')
    assert _lines(f) == 17 and _example_lines(f) == 4  # "Examples", the rule, the example, the closing line
