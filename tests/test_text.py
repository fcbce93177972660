"""Data strings shown on a terminal or used as file names, and plain-text tables."""

from __future__ import annotations

import pytest

from algorank.metadata.text import escape, format_table, safe_filename


def test_escape_shows_control_and_format_characters():
    assert escape("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert escape("x\x07\x00y") == "x\\x07\\x00y"
    assert escape("line\nnext\r\t") == "line\\nnext\\r\\t"
    assert escape("\u202eevil") == "\\u202eevil"  # right-to-left override
    assert escape("\x9b31m") == "\\x9b31m"  # C1 control sequence introducer
    assert escape("random-forest(gini,n=10) ärger 数据") == "random-forest(gini,n=10) ärger 数据"
    assert escape(3.5) == "3.5"
    assert not any(ord(c) < 32 or 127 <= ord(c) < 160 for c in escape("".join(map(chr, range(200)))))


def test_safe_filename_is_portable_bounded_and_injective():
    assert safe_filename("knn") == "knn"
    assert safe_filename("knn", suffix=".png") == "knn.png"
    a = safe_filename("../../etc/passwd")
    assert "/" not in a and not a.startswith(".") and a.startswith("etc_passwd-")
    long = "sklearn.ensemble.RandomForestClassifier" + '{"n_estimators": 10}' * 50
    name = safe_filename(long, max_len=80, suffix=".csv")
    assert len(name) <= 80 and name.endswith(".csv")
    assert safe_filename(long + "x") != safe_filename(long)
    assert safe_filename("a/b") != safe_filename("a_b")  # the changed one carries a hash
    assert safe_filename("\x1b]0;pwned\x07") .startswith("0_pwned-")
    assert safe_filename("") .startswith("x-")
    with pytest.raises(ValueError):
        safe_filename("x", max_len=5)


def test_format_table_never_runs_columns_together():
    text = format_table(["strategy", "W/T/L", "sign p"],
                        [["ei", "1418/319/263", "2.76e-191"], ["ar:p=1/16", "9999/9999/9999", "1"]])
    lines = text.splitlines()
    # widths 9, 14 and 9; first column left-aligned, the others right-aligned, two spaces between
    assert lines[0] == "strategy " + "  " + " " * 9 + "W/T/L" + "  " + "   sign p"
    assert lines[1] == "ei       " + "  " + "  1418/319/263" + "  " + "2.76e-191"
    assert lines[2] == "ar:p=1/16" + "  " + "9999/9999/9999" + "  " + "        1"
    # every cell is separated from the next by at least two spaces
    for line in lines[1:]:
        assert "1418/319/2632" not in line and "9999/99991" not in line


def test_format_table_escapes_and_checks_shape():
    text = format_table(["learner"], [["evil\x1b[2J"]])
    assert "\x1b" not in text and "evil\\x1b[2J" in text
    assert format_table(["a", "b"], [["x", 1]], align="rl", indent="  ") == "  a  b\n  x  1"
    with pytest.raises(ValueError):
        format_table(["a", "b"], [["only one"]])
    with pytest.raises(ValueError):
        format_table(["a"], [["x"]], align="c")
