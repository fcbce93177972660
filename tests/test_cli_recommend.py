"""CLI: algorank recommend (table, --json, --dry-run, --out, bad input -> exit 2)."""

import json

import pandas as pd
import pytest

from algorank import cli
from algorank.metadata.dataset import MetaDataset

LEARNERS = ["sklearn.naive_bayes.BernoulliNB", "sklearn.tree.DecisionTreeClassifier"]


@pytest.fixture()
def meta_file(tmp_path):
    rows = [{"dataset": f"d{d}", "learner": l, "repeat": 0, "fold": 0, "accuracy": 0.9 - 0.1 * i,
             "fit_time": 0.01 * (i + 1)} for d in range(3) for i, l in enumerate(LEARNERS)]
    path = tmp_path / "meta.parquet"
    MetaDataset(pd.DataFrame(rows)).save(path)
    return str(path)


def test_json_output(meta_file, capsys, tmp_path):
    out = tmp_path / "out"
    rc = cli.main(["recommend", "sklearn:iris", "--meta", meta_file, "--strategy", "ar:p=0", "--cv", "3",
                   "--budget", "60", "--json", "--quiet", "--out", str(out)])
    assert rc == 0
    d = json.loads(capsys.readouterr().out)
    assert [o["learner"] for o in d["order"]] == LEARNERS
    assert [t["learner"] for t in d["trace"]] == LEARNERS
    assert set(d["trace"][0]) >= {"learner", "accuracy", "seconds", "cumulative_seconds"}
    assert d["best"]["accuracy"] == max(t["accuracy"] for t in d["trace"])
    frame = pd.read_csv(out / "trace.csv")
    assert list(frame["learner"]) == LEARNERS
    assert (out / "accuracy_vs_time.png").stat().st_size > 1000


def test_table_and_dry_run(meta_file, capsys):
    assert cli.main(["recommend", "sklearn:iris", "--meta", meta_file, "--strategy", "ar:p=0", "--dry-run"]) == 0
    text = capsys.readouterr().out
    assert "planned order (2 learners" in text and "bernoulli-nb" in text and "results on" not in text
    assert cli.main(["recommend", "sklearn:iris", "--meta", meta_file, "--strategy", "ar:p=0", "--cv", "3",
                     "--top", "1"]) == 0
    cap = capsys.readouterr()
    assert "results on iris" in cap.out and "best: bernoulli-nb" in cap.out
    assert "testing bernoulli-nb" in cap.err


@pytest.mark.parametrize("argv, needle", [
    (["recommend", "no/such/file.csv"], "not found"),
    (["recommend", "sklearn:iris", "--target", "nope"], "target"),
    (["recommend", "sklearn:iris", "--budget", "0"], "budget"),
    (["recommend", "sklearn:iris", "--strategy", "nope"], "unknown strategy"),
])
def test_bad_input_exit_2(argv, needle, capsys, meta_file):
    assert cli.main(argv + ["--meta", meta_file]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and needle in err and "\n" not in err


def test_default_is_eiu_on_the_evaluator_built_modern_set(capsys):
    from algorank.recommender.kernel.time_model import LIVE_FIXED_OVERHEAD
    from algorank.metadata.learners import learner_ids
    from algorank.recommender.live.recommend import DEFAULT_STRATEGY

    assert cli.main(["recommend", "sklearn:wine", "--dry-run", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    # LCDB's 20, the four library defaults of the modern portfolio and AutoGluon's 15 boosting configurations
    defaults = ["histgb:default", "lgbm:default", "xgb:default", "catboost:default"]
    autogluon = [i for i in learner_ids(portfolio="modern") if i.split(":")[0] in ("lgbm", "xgb", "catboost")
                 and i.split(":")[1].startswith("ag2023-")]
    assert len(autogluon) == 15
    assert sorted(o["learner"] for o in d["order"]) == sorted(learner_ids() + defaults + autogluon)
    assert d["strategy"] == DEFAULT_STRATEGY == "eiu"
    assert all(o["accuracy_low"] <= o["expected_accuracy"] <= o["accuracy_high"] for o in d["order"])
    assert "landmark_1nn" not in d["dataset_info"]  # the default reads no landmarkers, so none are measured
    assert cli.main(["recommend", "sklearn:wine", "--dry-run", "--json", "--strategy", "eiu:landmarks=yes"]) == 0
    assert json.loads(capsys.readouterr().out)["dataset_info"]["landmark_1nn"] > 0.5  # measured on wine
    assert d["time_model"] == f"5 x (fit+predict) + {LIVE_FIXED_OVERHEAD:g} s"
    # every expected test time is at least the fixed overhead, and known for every learner
    assert all(o["expected_seconds"] >= LIVE_FIXED_OVERHEAD for o in d["order"])
    # --meta lcdb ranks from LCDB (fit times only: the fit-only overhead)
    assert cli.main(["recommend", "sklearn:wine", "--dry-run", "--json", "--meta", "lcdb"]) == 0
    assert json.loads(capsys.readouterr().out)["time_model"].startswith("5 x fit + ")


def test_meta_can_be_repeated_to_join_your_own_runs(capsys, tmp_path):
    # the runs.csv that 'algorank evaluate' writes joins the embedded uci set
    out = tmp_path / "mine"
    assert cli.main(["evaluate", "sklearn:breast_cancer", "--learners", "lda", "knn", "--cv", "3", "--repeats", "1",
                     "--no-store", "--quiet", "--out", str(out), "--json"]) == 0
    capsys.readouterr()
    assert cli.main(["recommend", "sklearn:breast_cancer", "--meta", "uci", "--meta", str(out / "runs.csv"),
                     "--dry-run", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["prior_matches"] == ["breast_cancer"]  # the user's own earlier run is recognised as this dataset
    assert cli.main(["recommend", "sklearn:wine", "--meta", "uci", "--meta", "uci", "--dry-run"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "more than one meta-data source" in err and "\n" not in err


def test_interrupted_recommend_prints_what_it_kept_and_exits_130(meta_file, capsys, monkeypatch):
    from helpers_meta import interrupted_at  # tests/ is on the path

    from algorank.recommender.live.environment import LiveEnvironment

    monkeypatch.setattr(LiveEnvironment, "test", interrupted_at(2))
    rc = cli.main(["recommend", "sklearn:iris", "--meta", meta_file, "--strategy", "ar:p=0", "--cv", "3",
                   "--json", "--quiet"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 130 and out["stop_reason"] == "interrupted"
    assert [t["learner"] for t in out["trace"]] == LEARNERS[:1] and out["best"]["learner"] == LEARNERS[0]
