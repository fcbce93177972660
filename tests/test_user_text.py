"""The README, every ``--help`` text, every docstring and every API error speak to users: no words of how the
work was organised ("seed 004", "issue 15", "this round", "previous round", ...), no files users cannot see, no
measured numbers or machine timings in docstrings, and the help names the real defaults."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from algorank.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
PROCESS_WORDS = re.compile(r"\bseeds? \d{3}\b|\bissues? \d+|\b(this|previous|last|next|earlier) round\b|"
                           r"\bround (one|two|\d+)\b|\bhelpers?\b|\bproduct owner\b|\bsession\b", re.IGNORECASE)


#: Words of the work's own records, in docstrings and messages (``helpers`` and ``session`` are ordinary
#: words in code): seed and issue numbers, rounds, files outside the repository, numbered looks, README sections.
DOC_WORDS = re.compile(r"\bseeds? \d{3}\b|\bissues? \d+|\b(this|previous|last|next|earlier) round\b|"
                       r"\bround (one|two|\d+)\b|\bproduct owner\b|(?-i:DESIGN\.md|METHODS\.md)|\blooks? \(\d+\)|"
                       r"\bdone-when\b|\b(the|see|see the|our) README\b|\(README\b", re.IGNORECASE)
#: Measured numbers and machine timings: a timing against another, "this machine", "N times faster".
MEASURED = re.compile(r"\d+(\.\d+)? ?(h|s|ms|min)\)?,? (vs\.?|instead of|against|to|rather than)( about)? \d|"
                      r"\b(this|the build)( \d-core)? machine\b|\d-core machine|"
                      r"\d+(\.\d+)? ?(x|×|times) (faster|slower|the oracle)")
_SKIP = {"tests", "docs", "build", ".pkgroot", ".venv"}
MODULES = sorted(p for p in ROOT.rglob("*.py") if not (_SKIP & set(p.relative_to(ROOT).parts)) and p.name != "setup.py")


def _docstrings(path: Path):
    """``(line, text)`` of the module's, every class's and every function's docstring, and of ``#:`` comments."""
    source = path.read_text(encoding="utf-8")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                yield getattr(node, "lineno", 1), doc
    for i, line in enumerate(source.splitlines(), 1):
        if line.lstrip().startswith("#:"):
            yield i, line


def _raised(path: Path):
    """``(line, text)`` of the string constants in every ``raise`` of the module (the error messages)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Raise) and node.exc is not None:
            for sub in ast.walk(node.exc):
                if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                    yield sub.lineno, sub.value


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_docstrings_speak_to_users(path):
    words = [(line, m.group(0)) for line, doc in _docstrings(path) for m in DOC_WORDS.finditer(" ".join(doc.split()))]
    assert words == [], f"{path.relative_to(ROOT)}: internal words in docstrings"
    measured = [(line, m.group(0)) for line, doc in _docstrings(path) for m in MEASURED.finditer(" ".join(doc.split()))]
    assert measured == [], f"{path.relative_to(ROOT)}: measured numbers or machine timings in docstrings"


#: A command-line flag (``--json``); only the command line (cli.py, commands/) documents its flags.
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]*")
LIBRARY_MODULES = [p for p in MODULES if p.name not in ("cli.py", "__main__.py") and "commands" not in
                   p.relative_to(ROOT).parts]


@pytest.mark.parametrize("path", LIBRARY_MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_library_docstrings_name_parameters_not_flags(path):
    flags = [(line, m.group(0)) for line, doc in _docstrings(path) for m in FLAG.finditer(doc)]
    assert flags == [], f"{path.relative_to(ROOT)}: docstrings name command-line flags"


def test_the_flag_check_sees_flags_only():
    assert FLAG.findall("use ``--json`` or --out DIR") == ["--json", "--out"]
    assert FLAG.findall("a -- b, x--y, 1e-3, ``n_jobs=-1``, <!-- x -->") == []


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_error_messages_speak_to_users(path):
    bad = [(line, m.group(0)) for line, text in _raised(path) for m in DOC_WORDS.finditer(text)]
    assert bad == [], f"{path.relative_to(ROOT)}: internal words in error messages"


def test_the_docstring_checks_catch_what_they_are_for(tmp_path):
    f = tmp_path / "m.py"
    f.write_text('"""Loss curves of seed 004 (DESIGN.md, contract 3)."""\n'
                 '#: chosen in look (13)\nX = 1\n\n'
                 'def f():\n    """Faster: 2.1 h vs 6.2 h on this 2-core machine, 3 x faster."""\n'
                 '    raise ValueError("see issue 5")\n')
    words = [m.group(0) for _, doc in _docstrings(f) for m in DOC_WORDS.finditer(doc)]
    assert words == ["seed 004", "DESIGN.md", "look (13)"]
    assert [m.group(0) for _, doc in _docstrings(f) for m in MEASURED.finditer(doc)] == \
        ["2.1 h vs 6", "this 2-core machine", "3 x faster"]
    assert [m.group(0) for _, t in _raised(f) for m in DOC_WORDS.finditer(t)] == ["issue 5"]
    for fine in ("capped at 120 s", "5 x fit + 0.013 s", "the datasets' README.md names them", "seed 0"):
        assert not DOC_WORDS.search(fine) and not MEASURED.search(fine), fine


def _help_texts() -> dict[str, str]:
    parser = build_parser()
    texts = {"algorank": parser.format_help()}
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    for name, p in sub.choices.items():
        texts[name] = p.format_help()
        for a in p._actions:
            if a.__class__.__name__ == "_SubParsersAction":
                texts.update({f"{name} {n}": q.format_help() for n, q in a.choices.items()})
    return texts


#: In the README and the documentation: the machine a number was measured on is named, never "this machine".
THIS_MACHINE = re.compile(r"\bthis (\d-core |busy |shared )*machine\b|\bdone-when\b", re.IGNORECASE)
PAGES = [ROOT / "README.md"] + sorted(p for p in (ROOT / "docs").rglob("*.md") if "_build" not in p.parts
                                      and "generated" not in p.parts)


def test_the_readme_has_no_process_words():
    found = [(i, m.group(0)) for i, line in enumerate((ROOT / "README.md").read_text().splitlines(), 1)
             for m in PROCESS_WORDS.finditer(line)]
    assert found == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_readme_and_docs_pages_speak_to_users(page):
    text = " ".join(page.read_text(encoding="utf-8").split())  # words split over two lines count too
    found = [m.group(0) for pattern in (DOC_WORDS, THIS_MACHINE) for m in pattern.finditer(text)]
    assert found == [], f"{page.relative_to(ROOT)}: internal words"


def test_the_page_check_catches_the_words_it_is_for():
    assert [m.group(0) for m in THIS_MACHINE.finditer("timed on this 2-core machine; The done-when targets")] == \
        ["this 2-core machine", "done-when"]
    assert DOC_WORDS.search(" ".join("in looks\n(1) to (10)".split()))
    assert DOC_WORDS.search("These are look (13): rescored") and not DOC_WORDS.search("see [Methods](methods.md)")
    assert not THIS_MACHINE.search("a 2-core AMD EPYC machine")


@pytest.mark.parametrize("command", sorted(_help_texts()))
def test_help_has_no_process_words(command):
    assert PROCESS_WORDS.findall(_help_texts()[command]) == []


def test_the_pattern_catches_the_words_it_is_for():
    for text in ("AR-A3R (seed 004)", "fixed by issue 15", "rerun this round", "the previous round's list"):
        assert PROCESS_WORDS.search(text), text
    assert not PROCESS_WORDS.search("--seed 4; random:seed=0; seed of the bootstrap")


def test_help_names_the_real_defaults():
    from algorank.metadata.snapshot import DEFAULT_META
    from algorank.recommender.live.recommend import DEFAULT_STRATEGY

    texts = _help_texts()
    assert f"{DEFAULT_STRATEGY} (default)" in " ".join(texts["recommend"].split())
    for name in ("info", "rank", "benchmark", "tune-p", "multitest", "compare", "export", "recommend"):
        assert f"(default: {DEFAULT_META})" in " ".join(texts[name].split()), name
