"""Results render themselves: ``to_text()`` (what a command prints) through the one table helper, whose
columns never run together, whatever the names and numbers."""

from __future__ import annotations

import re

import pytest

from algorank.api import rank
from algorank.metadata.text import format_seconds
from algorank.results import ExportResult, RankResult, to_text


def test_format_seconds_hand_cases():
    assert [format_seconds(x) for x in (0.00123, 0.5, 1, 4.2, 119.9, 121, 7300, float("nan"))] == \
        ["1.23 ms", "500 ms", "1 s", "4.2 s", "120 s", "2.02 min", "2.03 h", "n/a"]


def test_a_long_learner_name_never_runs_into_the_numbers():
    long = "sklearn.ensemble.HistGradientBoostingClassifier" + '{"max_leaf_nodes": 123456789}' * 3
    res = RankResult(p=0.0625, p_text="1/16", n_datasets=3, order=(long, "knn"), scores={long: 1.5, "knn": 123456.25},
                     coverage={long: 3, "knn": 100000})
    lines = res.to_text().splitlines()
    assert lines[0].startswith("AR-A3R ranking, P = 1/16 (0.0625), 3 datasets")
    header, first, second = lines[1:]
    assert re.split(r"\s{2,}", header.strip()) == ["#", "learner", "mean rank", "datasets"]
    assert re.split(r"\s{2,}", first.strip())[2:] == ["1.50", "3"]
    assert re.split(r"\s{2,}", second.strip()) == ["2", "knn", "123456.25", "100000"]
    assert to_text(res) == res.to_text()


def test_control_characters_of_data_are_escaped():
    res = ExportResult(datasets=1, learners=2, runs=3, source="evil\x1b]0;title\x07", written=("a\nb",))
    text = res.to_text()
    assert "\x1b" not in text and "\x07" not in text and "\\x1b" in text and "a\\nb" in text


def test_rank_result_matches_the_average_ranking():
    from algorank.recommender.registry import make_ar
    from algorank.metadata.snapshot import load_meta

    res = rank("uci", p="1/16")
    ar = make_ar("1/16").fit(load_meta("uci"))
    assert list(res.order) == ar.order_ and res.n_datasets == ar.n_datasets_ == 63
    assert res.scores == pytest.approx({l: ar.average_rank_[l] for l in ar.order_})
    assert res.to_dict()["short"][res.order[0]] == "knn" and res.to_frame()["learner"].tolist() == ar.order_
