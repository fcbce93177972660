"""Fast start: ``import algorank``, ``algorank --help`` and argument errors import no scikit-learn, pandas,
scipy (or numpy, matplotlib).  Which modules are loaded is checked in a fresh process; the wall time
itself is measured by ``tests/benchmarks/bench_startup.py`` (README), never asserted here."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("sklearn", "pandas", "scipy", "numpy", "matplotlib", "joblib", "pyarrow")

PROBE = """
import json, sys
{body}
print(json.dumps(sorted({{m.split(".")[0] for m in sys.modules}} & set({heavy!r}))))
"""


def _heavy_after(body: str) -> tuple[list, str]:
    code = PROBE.format(body=body, heavy=HEAVY)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def test_import_algorank_is_lazy():
    loaded, _ = _heavy_after("import algorank\nassert 'recommend' in dir(algorank) and algorank.__version__")
    assert loaded == []


@pytest.mark.parametrize("argv", [["--help"], ["recommend", "--help"], ["benchmark", "--help"]])
def test_help_imports_nothing_heavy(argv):
    body = f"""
from algorank.cli import main
try:
    main({argv!r})
except SystemExit as exc:
    assert exc.code == 0
"""
    loaded, _ = _heavy_after(body)
    assert loaded == []


@pytest.mark.parametrize("argv", [["rank", "--p"], ["nope"], ["recommend"], ["evaluate", "x", "--cv", "many"]])
def test_argument_errors_import_nothing_heavy(argv):
    body = f"""
from algorank.cli import main
assert main({argv!r}) == 2
"""
    loaded, err = _heavy_after(body)
    assert loaded == [] and err.startswith("error: ") and err.count("\n") == 1, err


def test_a_lazy_name_is_the_real_object():
    import algorank
    from algorank.api import recommend
    from algorank.recommender.live.estimator import AlgorankClassifier

    assert algorank.recommend is recommend and algorank.AlgorankClassifier is AlgorankClassifier
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        algorank.nope  # noqa: B018


@pytest.mark.parametrize("module", ["algorank.api", "algorank.metadata.snapshot", "pandas"])
def test_an_interrupt_while_importing_exits_130_without_a_traceback(module):
    code = f"""
import sys

class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == {module!r}:
            raise KeyboardInterrupt
        return None

sys.meta_path.insert(0, Interrupt())
from algorank.cli import main
sys.exit(main(["info", "--meta", "uci"]))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 130 and proc.stdout == "" and proc.stderr == "interrupted\n", proc.stderr
