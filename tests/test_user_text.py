"""The README and every ``--help`` text speak to users: no words of how the work was organised
("seed 004", "issue 15", "this round", "previous round", ...), and the help names the real defaults."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from algorank.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
PROCESS_WORDS = re.compile(r"\bseeds? \d{3}\b|\bissues? \d+|\b(this|previous|last|next|earlier) round\b|"
                           r"\bround (one|two|\d+)\b|\bhelpers?\b|\bproduct owner\b|\bsession\b", re.IGNORECASE)


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


def test_the_readme_has_no_process_words():
    found = [(i, m.group(0)) for i, line in enumerate((ROOT / "README.md").read_text().splitlines(), 1)
             for m in PROCESS_WORDS.finditer(line)]
    assert found == []


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
