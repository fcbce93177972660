"""The README is short, in the agreed order, and every link in it resolves: to one of its own sections (GitHub's
anchors), to a file of the repository, or to a heading of a documentation page; every number in its prose
links to the page that reproduces it."""

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


def _links(text: str) -> list[str]:
    """Targets of the Markdown links and images outside code blocks."""
    prose = re.sub(r"`[^`\n]*`", "", re.sub(r"```.*?```", "", text, flags=re.S))
    return re.findall(r"\]\(([^)\s]+)\)", prose)


def test_every_link_of_the_readme_resolves():
    text = README.read_text(encoding="utf-8")
    links = [t for t in _links(text) if not t.startswith(("http://", "https://", "mailto:"))]
    assert links, "the README links to nothing in the repository"
    broken = []
    for target in links:
        path, _, anchor = target.partition("#")
        page = README.parent / path if path else README
        if not page.exists():
            broken.append(target)
        elif anchor and anchor not in _headings(page.read_text(encoding="utf-8")):
            broken.append(target)
    assert broken == [], f"README links that do not resolve: {broken}"


def test_the_link_check_catches_a_missing_file_and_a_missing_heading(tmp_path):
    assert _links("[a](docs/x.md) `[b](c.md)`\n```\n[d](e.md)\n```\n![pic](img.png)") == ["docs/x.md", "img.png"]
    assert "a-heading" in _headings("# A heading\n```\n# not one\n```\n")
    assert "not-one" not in _headings("# A heading\n```\n# not one\n```\n")


# --- length, order, numbers -----------------------------------------------------------------------------------

SECTIONS = ["Install", "The main job", "Python API", "Research commands", "How good is the default?",
            "Documentation"]


def test_the_readme_is_short_and_in_order():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 220, f"README has {len(lines)} lines (at most 220)"
    headings = [line[3:] for line in lines if line.startswith("## ")]
    found = [next((i for i, h in enumerate(headings) if h.startswith(s)), None) for s in SECTIONS]
    assert None not in found, dict(zip(SECTIONS, found))
    assert found == sorted(found), headings
    first = "\n".join(lines[: lines.index("## " + headings[0])])
    assert re.search(r"!\[[^\]]*\]\((docs/[^)]+\.png)\)", first), "no picture before the first section"
    for name in ("recommend", "AlgorankClassifier", "load_meta"):  # the Python API section shows these
        assert name in "\n".join(lines[lines.index("## Python API"):]), name


#: A measured number in prose: seconds, hours, percentages, "x" factors, counts of datasets or learners, points.
MEASURE = re.compile(r"(?<![\w.])\d[\d,.]*\s?(ms|s|min|h|%|×|x|datasets?|learners?|points?|runs|times)\b")


def _paragraphs(text: str) -> list[str]:
    """Prose paragraphs and list items, without code blocks, inline code and link targets."""
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    prose = re.sub(r"`[^`]*`", "", prose)
    return [p for p in re.split(r"\n\s*\n|\n(?=\* )", prose) if p.strip()]


def test_every_number_in_the_readme_links_to_the_page_that_reproduces_it():
    unlinked = [p.strip()[:80] for p in _paragraphs(README.read_text(encoding="utf-8"))
                if MEASURE.search(re.sub(r"\]\([^)]*\)", "]", p)) and not re.search(r"\]\(docs/[^)]+\)", p)]
    assert unlinked == [], f"README paragraphs with numbers and no link to the page that reproduces them: {unlinked}"


def test_the_number_check_sees_numbers_outside_code_only():
    paragraphs = _paragraphs("It took 6.32 h.\n\nRun `--budget 60`.\n\n* 40 datasets [x](docs/b.md)\n")
    assert [bool(MEASURE.search(p)) for p in paragraphs] == [True, False, True]
