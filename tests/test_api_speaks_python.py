"""The Python API names Python parameters, exports what a user calls, and writes nothing unasked; the command line
turns the parameters its errors name into its flags."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from algorank import api, cli
from algorank.metadata.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
FLAG = re.compile(r"(?<![\w-])--[a-z]")


def test_all_lists_what_a_user_calls_not_process_plumbing():
    plumbing = {"process_start", "stop_processes", "end_with_this_process", "fork_fold_server", "parse_repeats",
                "time_model_arrays"}
    assert not plumbing & set(api.__all__)
    assert {"recommend", "evaluate", "benchmark", "tune_p", "multitest", "load_meta"} <= set(api.__all__)
    for name in api.__all__:
        assert hasattr(api, name), name
    for name in plumbing:  # still importable where the command line uses them
        assert callable(getattr(api, name))


def _raise_messages(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            for sub in ast.walk(node.exc):
                if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                    yield sub.lineno, sub.value


def test_no_api_error_names_a_flag():
    bad = [(line, text) for line, text in _raise_messages(ROOT / "api.py") if FLAG.search(text)]
    assert not bad, bad


@pytest.mark.parametrize("call, names", [
    (lambda: api.parse_repeats("auto", "fixed"), ("repeats='auto'", "stop='rank'")),
    (lambda: api.parse_repeats("0", None), ("repeats=",)),
    (lambda: api.export(), ("aslib=", "out=")),
    (lambda: api.tune_p(strategy="ei", nested=True), ("exclude_heldout=", "heldout=True")),
])
def test_api_errors_name_python_parameters(call, names):
    with pytest.raises(InputError) as err:
        call()
    text = str(err.value)
    assert not FLAG.search(text), text
    for name in names:
        assert name in text


@pytest.mark.parametrize("argv, flags", [
    (["evaluate", "sklearn:iris", "--repeats", "0", "--no-store"], ["--repeats must be a positive integer"]),
    (["evaluate", "sklearn:iris", "--repeats", "auto", "--stop", "fixed", "--no-store"],
     ["--repeats auto (adaptive) needs --stop rank or --stop ks, not --stop fixed"]),
    (["export", "--meta", "uci"], ["--aslib (a folder) and/or --out (.parquet or .csv)"]),
])
def test_the_command_line_names_its_flags(capsys, argv, flags):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ")
    for f in flags:
        assert f in err[0]
    assert "=" not in err[0]


def test_flag_translation_rewrites_only_the_parameters_the_error_names():
    exc = InputError("pull offline (offline=True) from a cache (cache_dir=); layout=2 out='x'",
                     parameters=("offline", "cache_dir"))
    assert cli._one_line(exc) == "pull offline (--offline) from a cache (--cache); layout=2 out='x'"
    assert cli._one_line(InputError("layout=2 out= x out='a b'", parameters=("out",))) == \
        "layout=2 --out x --out 'a b'"


def test_evaluate_stores_nothing_unless_asked(tmp_path, monkeypatch):
    monkeypatch.delenv("ALGORANK_STORE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    result = api.evaluate("sklearn:iris", learners=["lda"], cv=2, repeats=1)
    assert result.store is None
    assert not any(tmp_path.rglob("*")), list(tmp_path.rglob("*"))
    asked = api.evaluate("sklearn:iris", learners=["lda"], cv=2, repeats=1, store=True)
    assert asked.store == str(tmp_path / "cache" / "algorank" / "evaluate.sqlite")
    assert (tmp_path / "cache" / "algorank" / "evaluate.sqlite").is_file()


def test_the_evaluate_command_keeps_its_default_store(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("ALGORANK_STORE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert cli.main(["evaluate", "sklearn:iris", "--learners", "lda", "--cv", "2", "--repeats", "1", "--quiet"]) == 0
    assert f"store: {tmp_path / 'cache' / 'algorank' / 'evaluate.sqlite'}" in capsys.readouterr().out
