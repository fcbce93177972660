"""`algorank multitest`: runs on the embedded snapshot (20 learners with the Shaffer fallback,
a subset of 8), writes the CD diagram, and turns bad input into one-line errors with exit 2."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from cli import main
from algorank.metadata.dataset import MetaDataset

EIGHT = "knn,svc-rbf,logreg,random-forest,decision-tree,lda,qda,mlp"


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_default_twenty_learners_json_reports_fallback(capsys):
    code, out, err = _run(capsys, "multitest", "--meta", "lcdb", "--json", "--quiet")
    assert code == 0, err
    d = json.loads(out)
    assert {"order", "average_ranks", "friedman", "significant_pairs", "reasons"} <= d.keys()
    assert len(d["order"]) == 20 and len(d["average_ranks"]) == 20 and len(d["reasons"]) == 19
    assert set(d["friedman"]) >= {"statistic", "pvalue"} and d["friedman"]["pvalue"] < 0.05
    assert d["posthoc"]["requested"] == "bergmann" and d["posthoc"]["method"] == "shaffer"
    assert any("Shaffer" in n for n in d["notes"])
    # the 14 % empty cells no longer drop datasets: Skillings-Mack on all 248
    assert d["n_dropped"] == 0 and d["n_datasets"] == 248
    assert d["omnibus_method"] == "Skillings-Mack" and d["omnibus"]["missing_cells"] >= 700
    assert any("Skillings-Mack on all 248 datasets" in n for n in d["notes"])
    assert all(r["reason"] in ("significant", "cost") for r in d["reasons"])
    for better, worse in d["significant_pairs"]:
        assert d["average_ranks"][better] < d["average_ranks"][worse]


def test_subset_of_eight_writes_cd_diagram(capsys, tmp_path):
    code, out, err = _run(capsys, "multitest", "--meta", "lcdb", "--learners", EIGHT, "--posthoc", "bergmann", "--out",
                          str(tmp_path), "--quiet")
    assert code == 0, err
    png = tmp_path / "cd_diagram.png"
    assert png.is_file() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "Multi2Test on" in out and "knn" in out and "wrote" in out
    assert [p.name for p in tmp_path.iterdir()] == ["cd_diagram.png"]  # no temp files left behind


def test_user_cost_order_and_nemenyi(capsys):
    code, out, err = _run(capsys, "multitest", "--meta", "lcdb", "--learners", "knn", "lda", "logreg", "--cost", "lda,logreg,knn",
                          "--posthoc", "nemenyi", "--json", "--quiet")
    assert code == 0, err
    d = json.loads(out)
    assert d["prior_order"] == ["sklearn.discriminant_analysis.LinearDiscriminantAnalysis",
                                "sklearn.linear_model.LogisticRegression", "sklearn.neighbors.KNeighborsClassifier"]
    # the snapshot has gaps for these learners: Skillings-Mack z, for which no critical difference exists
    assert d["omnibus_method"] == "Skillings-Mack"
    # only datasets with fewer than 2 of the three learners are left out, each with its reason
    assert d["n_dropped"] == 45 and d["n_datasets"] == 248 - 45
    assert {r["reason"] for r in d["dropped"]} == {"only 1 of the compared learners has runs",
                                                  "no successful run of the compared learners"}
    # Skillings-Mack rejects (p ~ 3e-9), so the Nemenyi post hoc runs, on the Skillings-Mack z: it has
    # no critical difference (a CD needs complete blocks)
    assert d["omnibus"]["rejected"] is True and d["omnibus"]["pvalue"] < 1e-6
    assert d["posthoc"] == {"requested": "nemenyi", "method": "nemenyi", "exact": True, "note": "",
                            "critical_difference": None}
    lda, logreg, knn = d["prior_order"]
    assert d["order"] == [lda, logreg, knn]
    assert sorted(map(tuple, d["significant_pairs"])) == sorted([(lda, logreg), (lda, knn), (logreg, knn)])


def _tiny_meta(path, n_datasets):
    rng = np.random.default_rng(0)
    rows = [{"dataset": f"d{d}", "learner": l, "repeat": r, "fold": 0, "accuracy": 0.7 + 0.05 * rng.random(),
             "fit_time": 0.1 + i} for d in range(n_datasets) for i, l in enumerate(["a", "b", "c"]) for r in range(5)]
    MetaDataset(pd.DataFrame(rows)).save(path)
    return path


@pytest.mark.parametrize("argv, match", [
    (["--alpha", "0"], "alpha"),
    (["--alpha", "1.5"], "alpha"),
    (["--learners", "knn"], "at least 2"),
    (["--learners", "knn", "nosuchlearner"], "unknown learner"),
    (["--pairwise", "combined_5x2cv_t"], "5x2 cv folds"),
    (["--pairwise", "dietterich_5x2cv_t"], "5x2 cv folds"),
    (["--pairwise", "combined_5x2cv_f"], "two-sided only"),
    (["--posthoc", "tukey"], "posthoc"),
    (["--cost", "banana"], "cost"),
])
def test_bad_input_one_line_exit_2(capsys, tmp_path, argv, match):
    out_dir = tmp_path / "out"
    code, out, err = _run(capsys, "multitest", "--meta", "lcdb", "--learners", EIGHT, *argv, "--out", str(out_dir), "--quiet") \
        if "--learners" not in argv else _run(capsys, "multitest", "--meta", "lcdb", *argv, "--out", str(out_dir), "--quiet")
    assert code == 2
    assert err.startswith("error: ") and err.count("\n") == 1 and match in err
    assert "Traceback" not in err and out == ""
    assert not out_dir.exists() or not any(out_dir.iterdir())


def test_fewer_than_two_datasets(capsys, tmp_path):
    meta = _tiny_meta(tmp_path / "one.csv", 1)
    code, out, err = _run(capsys, "multitest", "--meta", str(meta), "--quiet")
    assert code == 2 and "at least 2 datasets" in err and err.count("\n") == 1


def test_tiny_meta_table_output(capsys, tmp_path):
    meta = _tiny_meta(tmp_path / "three.csv", 3)
    code, out, err = _run(capsys, "multitest", "--meta", str(meta), "--test-train-ratio", "0.25", "--quiet")
    assert code == 0, err
    assert "n_test/n_train = 0.25" in out and "a" in out.split("reason for the next step")[1]
