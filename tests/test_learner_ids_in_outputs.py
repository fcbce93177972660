"""One learner id style in every output: full ids in ``learner`` fields and keys, the short name in a
``short`` field, short names in tables and prose (LCDB's ``SVC_rbf`` never sits next to
``sklearn.linear_model.RidgeClassifier`` in a table)."""

from __future__ import annotations

import json

import pytest

from algorank.cli import main
from algorank.metadata.learners import short_names

FOUR = ["svc-rbf", "ridge", "knn", "lda"]
FULL = {"svc-rbf": "SVC_rbf", "ridge": "sklearn.linear_model.RidgeClassifier",
        "knn": "sklearn.neighbors.KNeighborsClassifier", "lda": "sklearn.discriminant_analysis.LinearDiscriminantAnalysis"}


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def _no_full_ids(text: str) -> bool:
    return all(full not in text for full in FULL.values())


def test_short_names_maps_full_ids_and_keeps_unknown_ones():
    assert short_names([FULL["svc-rbf"], FULL["ridge"], "my.Own"]) == {
        "SVC_rbf": "svc-rbf", "sklearn.linear_model.RidgeClassifier": "ridge", "my.Own": "my.Own"}


def test_rank(capsys):
    d = json.loads(_run(capsys, "rank", "--p", "1/16", "--json"))
    assert d["short"] == short_names(d["order"]) and d["short"]["SVC_rbf"] == "svc-rbf"
    assert set(d["scores"]) == set(d["order"])  # keys: full ids
    table = _run(capsys, "rank", "--p", "1/16")
    assert "svc-rbf" in table and "ridge" in table and "SVC_" not in table and "sklearn." not in table


def test_multitest(capsys):
    d = json.loads(_run(capsys, "multitest", "--learners", *FOUR, "--json", "--quiet"))
    assert sorted(d["order"]) == sorted(FULL.values())
    assert d["short"] == {FULL[s]: s for s in FOUR}
    assert set(d["average_ranks"]) == set(FULL.values())
    for r in d["reasons"]:
        assert r["first"] in FULL.values() and r["second"] in FULL.values()
        assert _no_full_ids(r["text"]) and d["short"][r["first"]] in r["text"]
    table = _run(capsys, "multitest", "--learners", *FOUR, "--quiet")
    assert _no_full_ids(table) and all(s in table for s in FOUR)


def test_compare(capsys):
    d = json.loads(_run(capsys, "compare", "--learners", *FOUR, "--json", "--quiet", "--no-bayes"))
    assert d["short"] == {FULL[s]: s for s in FOUR} and sorted(d["learners"]) == sorted(FULL.values())
    assert all(p["a"] in FULL.values() and p["b"] in FULL.values() for p in d["pairs"])
    table = _run(capsys, "compare", "--learners", *FOUR, "--quiet", "--no-bayes")
    assert _no_full_ids(table)


def test_evaluate_to_dict():
    from sklearn.datasets import load_iris

    from algorank.api import evaluate

    iris = load_iris(as_frame=True).frame
    res = evaluate(iris, "target", learners=["svc-rbf", "lda"], cv=2, repeats=1, progress=False)
    d = res.to_dict()
    assert {k: v["short"] for k, v in d["learners"].items()} == {"SVC_rbf": "svc-rbf", FULL["lda"]: "lda"}
    assert all(isinstance(v["accuracy_mean"], float) for v in d["learners"].values())


@pytest.mark.parametrize("rec", [{"learner": "SVC_rbf", "status": "error", "message": "boom"}])
def test_evaluate_failure_records_carry_short(rec):
    import pandas as pd

    from algorank.evaluation.cv.evaluator import EvaluationResult

    res = EvaluationResult(dataset="x", runs=pd.DataFrame(), summary=pd.DataFrame(), failures=[rec],
                           reproducibility=None)
    assert res.to_dict()["failures"] == [{**rec, "short": "svc-rbf"}]
