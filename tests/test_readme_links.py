"""Every link inside the README to one of its own sections points at a heading that exists (GitHub's anchors)."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation other than ``-`` and ``_`` removed, spaces to ``-``."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _headings(text: str) -> set[str]:
    out, fenced = set(), False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,6} ", line):
            out.add(_anchor(line.lstrip("#")))
    return out


def test_the_anchor_rule_matches_githubs_on_headings_with_code_and_punctuation():
    assert _anchor(" Published methods as baselines (`oboe`, `portfolio`, `pmf`, `zeroshot`)") == \
        "published-methods-as-baselines-oboe-portfolio-pmf-zeroshot"
    assert _anchor(" Cost-conscious orderings with statistics (MultiTest / Multi2Test)") == \
        "cost-conscious-orderings-with-statistics-multitest--multi2test"
    assert _anchor(" Which learners should I try first? (the main job)") == "which-learners-should-i-try-first-the-main-job"


def test_every_internal_link_of_the_readme_has_its_heading():
    text = README.read_text(encoding="utf-8")
    links = re.findall(r"\]\(#([^)]+)\)", text)
    assert links, "the README links to none of its sections"
    missing = sorted(set(links) - _headings(text))
    assert not missing, f"README links to sections that do not exist: {missing}"
