"""The command registry: a command is one module plus one line of ``algorank.cli.COMMANDS``."""

from __future__ import annotations

import importlib
import json
import sys

import pytest

from algorank import cli

TOY = '''"""``algorank toy``: repeat the version (a command written for this test)."""

from algorank.commands.options import add_common

__all__ = ["HELP", "add_arguments", "run"]

HELP = "repeat the version a number of times"


def add_arguments(p) -> None:
    p.add_argument("--times", type=int, default=1, help="how often")
    add_common(p, meta=False)


def run(args):
    from algorank.api import version
    from algorank.metadata.errors import InputError
    from algorank.results import RecordResult

    if args.times < 1:
        raise InputError("--times must be at least 1")
    return RecordResult({"version": " ".join([version()] * args.times)})
'''


@pytest.fixture()
def toy(tmp_path, monkeypatch):
    (tmp_path / "toy.py").write_text(TOY, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "toy", raising=False)  # imported afresh from this test's folder
    monkeypatch.setattr(cli, "COMMANDS", [*cli.COMMANDS, "toy"])  # the one registration line
    return importlib.import_module("toy")


def test_a_new_command_is_one_module_plus_one_registry_line(toy, capsys):
    from algorank.api import version

    with pytest.raises(SystemExit) as exc:
        cli.main(["--help"])
    assert exc.value.code == 0 and "repeat the version a number of times" in capsys.readouterr().out
    assert cli.main(["toy", "--times", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"version": f"{version()} {version()}"}
    assert cli.main(["toy"]) == 0
    assert capsys.readouterr().out == f"version       {version()}\n"
    # the shared protocol: a bad argument or bad input is one line and exit 2
    assert cli.main(["toy", "--times", "many"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: toy: argument --times") and err.count("\n") == 1
    assert cli.main(["toy", "--times", "0"]) == 2
    assert capsys.readouterr().err == "error: --times must be at least 1\n"


def test_every_registered_command_is_in_the_help_and_parses(capsys):
    assert cli.command_name("algorank.commands.tune_p") == "tune-p"
    parser = cli.build_parser()
    text = parser.format_help()
    for module in cli.COMMANDS:
        name = cli.command_name(module)
        assert f"    {name} " in text and importlib.import_module(module).HELP[:30] in " ".join(text.split())
        with pytest.raises(SystemExit) as exc:
            parser.parse_args([name, "--help"])
        assert exc.value.code == 0 and f"usage: algorank {name}" in capsys.readouterr().out
    assert importlib.import_module("algorank.commands.recommend").EXIT_NOTHING_TESTED == cli.EXIT_NOTHING_TESTED


def test_a_command_dispatches_to_its_api_function(monkeypatch, capsys):
    import algorank.api
    from algorank.results import RecordResult

    calls = []

    def fake_rank(meta, *, p, exclude_datasets, min_coverage):
        calls.append((meta, p, tuple(exclude_datasets), min_coverage))
        return RecordResult({"ranked": "yes"})

    monkeypatch.setattr(algorank.api, "rank", fake_rank)
    assert cli.main(["rank", "--meta", "uci", "--p", "0", "--exclude-dataset", "a,b", "c", "--json"]) == 0
    assert calls == [(["uci"], "0", ("a", "b", "c"), 0.5)]
    assert json.loads(capsys.readouterr().out) == {"ranked": "yes"}
