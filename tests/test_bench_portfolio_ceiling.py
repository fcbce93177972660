"""The portfolio-ceiling benchmark: its learner sets, resume, the hindsight bound and the one-learner child."""

import importlib.util
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def ceiling():
    spec = importlib.util.spec_from_file_location("bench_portfolio_ceiling", HERE / "benchmarks" /
                                                  "bench_portfolio_ceiling.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_learner_sets_partition_the_modern_portfolio(ceiling):
    from algorank.metadata.learners import learner_ids

    sizes = {g: len(ceiling.group_learners(g))
             for g in ("lcdb", "defaults", "ag2023-boosting", "ag2023-trees", "flaml", "askl2")}
    assert sizes == {"lcdb": 20, "defaults": 4, "ag2023-boosting": 15, "ag2023-trees": 10, "flaml": 52, "askl2": 20}
    union = [i for g in sizes for i in ceiling.group_learners(g)]
    assert sorted(union) == sorted(learner_ids(portfolio="modern"))  # each learner in exactly one set
    assert ceiling.group_learners("defaults") == ["histgb:default", "lgbm:default", "xgb:default", "catboost:default"]
    assert all(i.split(":")[0] in ("lgbm", "xgb", "catboost") for i in ceiling.group_learners("ag2023-boosting"))
    with pytest.raises(ValueError, match="group must be one of"):
        ceiling.group_learners("tabrepo")


def _row(dataset, learner, status="ok", accuracy="", wall="1", cv=""):
    return {"collection": "mid", "dataset": dataset, "learner": learner, "status": status, "accuracy": accuracy,
            "wall_s": wall, "cv_accuracy": cv, "cv_s": "5" if cv else "", "process_s": "2", "n_train": "75",
            "n_test": "25", "message": ""}


def test_pending_resumes_and_retries_failures(ceiling):
    rows = [_row("a", "x", accuracy="0.5"), _row("a", "y", status="timeout"), _row("b", "x", accuracy="0.7")]
    assert ceiling.pending("mid", ["a", "b"], ["x", "y"], rows) == [("b", "y")]
    assert ceiling.pending("mid", ["a", "b"], ["x", "y"], rows, retry_failed=True) == [("a", "y"), ("b", "y")]
    assert ceiling.pending("large", ["a"], ["x"], rows) == [("a", "x")]  # another collection's rows do not count
    # with cross-validation asked for, a fit recorded without it is run again; a failed one is not
    rows.append(_row("b", "y", accuracy="0.6", cv="0.61"))
    assert ceiling.pending("mid", ["a", "b"], ["x", "y"], rows, cv=True) == [("a", "x"), ("b", "x")]


def test_hindsight_bound_hand_computed(ceiling):
    rows = [
        _row("a", "x", accuracy="0.80", wall="2"), _row("a", "y", accuracy="0.90", wall="4"),
        _row("a", "z", accuracy="0.8995", wall="6"),  # within 0.001 of y: also best on a
        _row("b", "x", accuracy="0.60", wall="1"), _row("b", "y", status="timeout"),
        _row("b", "z", accuracy="0.55", wall="3"),
        _row("c", "x", accuracy="0.30"), _row("c", "x", accuracy="0.40"),  # the last row of a key counts
    ]
    s = ceiling.summarise(rows, "mid", sets={"xy": ["x", "y"], "z": ["z"]})
    assert s["datasets"] == ["a", "b"]  # c has no z: not complete
    e = s["entries"]
    assert e["best of xy in hindsight"]["mean_accuracy"] == pytest.approx((0.90 + 0.60) / 2)
    assert e["best of z in hindsight"]["mean_accuracy"] == pytest.approx((0.8995 + 0.55) / 2)
    assert e["best of xy in hindsight"]["per_dataset"]["c"] is None  # y not run on c yet: no bound
    assert "xy, chosen by cross-validation" not in e  # no row has a cross-validation accuracy
    assert s["best"] == {"a": ["y", "z"], "b": ["x"], "c": ["x"]}
    x = s["learners"]["x"]
    assert (x["datasets"], x["failed"], x["best_on"]) == (3, 0, 2)
    assert x["mean_accuracy"] == pytest.approx((0.80 + 0.60 + 0.40) / 3)
    y = s["learners"]["y"]
    assert (y["datasets"], y["failed"], y["mean_wall_s"]) == (1, 1, 4.0)
    text = ceiling.format_summary(s)
    assert "| best of xy in hindsight | 0.7500 |" in text and "optimistic bound" in text


def test_choice_by_cross_validation_hand_computed(ceiling):
    rows = [
        _row("a", "x", accuracy="0.80", cv="0.85"), _row("a", "y", accuracy="0.90", cv="0.84"),  # CV picks x
        _row("b", "x", accuracy="0.60", cv="0.70"), _row("b", "y", accuracy="0.65", cv="0.70"),  # a tie: first, x
        _row("c", "x", status="timeout"), _row("c", "y", accuracy="0.50", cv="0.52"),  # only y has a result
    ]
    s = ceiling.summarise(rows, "mid", sets={"xy": ["x", "y"]})
    e = s["entries"]
    assert e["xy, chosen by cross-validation"]["per_dataset"] == pytest.approx({"a": 0.80, "b": 0.60, "c": 0.50})
    assert e["xy, chosen by cross-validation"]["mean_accuracy"] == pytest.approx((0.80 + 0.60 + 0.50) / 3)
    assert e["best of xy in hindsight"]["mean_accuracy"] == pytest.approx((0.90 + 0.65 + 0.50) / 3)
    assert "as recommend would with no time limit" in ceiling.format_summary(s)


def test_compared_with_end_to_end_tools(ceiling):
    e2e = ceiling._e2e()
    e2e_rows = [{"collection": "mid", "dataset": "a", "budget": "60", "tool": "algorank", "status": "ok",
                 "accuracy": "0.85"},
                {"collection": "mid", "dataset": "a", "budget": "20", "tool": "algorank", "status": "ok",
                 "accuracy": "0.10"},  # another budget: not compared
                {"collection": "mid", "dataset": "a", "budget": "60", "tool": "flaml", "status": "ok",
                 "accuracy": "0.95"},
                {"collection": "mid", "dataset": "a", "budget": "", "tool": "lgbm", "status": "ok",
                 "accuracy": "0.88"},
                {"collection": "mid", "dataset": "a", "budget": "", "tool": "hgb", "status": "ok", "accuracy": "0.87"},
                {"collection": "mid", "dataset": "a", "budget": "", "tool": "rf", "status": "ok", "accuracy": "0.86"}]
    rows = [_row("a", "x", accuracy="0.90")]
    s = ceiling.summarise(rows, "mid", e2e_rows=e2e_rows, budget="60")
    means = {k: v["mean_accuracy"] for k, v in s["entries"].items()}
    assert means == pytest.approx({"best of all in hindsight": 0.90, e2e.LABELS["algorank"] + ", 60 s": 0.85,
                                   e2e.LABELS["flaml"] + ", 60 s": 0.95, e2e.LABELS["lgbm"]: 0.88,
                                   e2e.LABELS["hgb"]: 0.87, e2e.LABELS["rf"]: 0.86})


def test_one_learner_child_is_the_refit_recommend_returns(ceiling, tmp_path):
    pd = pytest.importorskip("pandas")
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(3)
    x = rng.normal(size=(240, 3))
    frame = pd.DataFrame(x, columns=["u", "v", "w"])
    frame["colour"] = np.where(x[:, 1] > 0, "red", "blue")
    frame["class"] = np.where(x[:, 0] + 0.3 * rng.normal(size=240) > 0, "yes", "no")
    frame.to_csv(tmp_path / "toy.csv", index=False)
    e2e = ceiling._e2e()
    learner = "sklearn.linear_model.LogisticRegression"
    spec = {"path": str(tmp_path / "toy.csv"), "target": "class", "tool": "learner", "learner": learner,
            "budget": None, "excluded": [], "cv": 3}
    res = e2e.run_child(spec, 300)
    assert res["status"] == "ok", res
    assert (res["n_train"], res["n_test"], res["returned"]) == (180, 60, learner)
    # the same split and fit in this process
    from algorank.evaluation.cv.datasets import as_dataset, load_dataset
    from algorank.recommender.live.recommend import refit_best

    Xtr, Xte, ytr, yte = e2e._split(load_dataset(str(tmp_path / "toy.csv"), target="class"))
    model = refit_best(as_dataset(Xtr, y=ytr, task="classification"), learner, random_state=0)
    assert res["accuracy"] == pytest.approx(float((model.predict(Xte) == yte.astype(str).to_numpy()).mean()))
    assert 0.8 < res["accuracy"] <= 1.0  # u separates the classes up to noise
    import algorank

    cv = algorank.evaluate(as_dataset(Xtr, y=ytr, task="classification"), learners=[learner], cv=3, random_state=0)
    assert res["cv_accuracy"] == pytest.approx(float(cv.runs["accuracy"].mean()))  # the test on the training part


def test_cli_refuses_without_learners_and_unknown_group(ceiling, capsys):
    assert ceiling.main(["--collection", "mid"]) == 2
    assert "--group or --learner" in capsys.readouterr().err
    assert ceiling.main(["--group", "tabrepo"]) == 2
    assert "group must be one of" in capsys.readouterr().err
    assert ceiling.main(["--group", "defaults", "--cv", "1"]) == 2
    assert "--cv must be 0" in capsys.readouterr().err


def test_report_adds_the_union_of_the_sets(ceiling, tmp_path, capsys):
    e2e = ceiling._e2e()
    out = tmp_path / "c.csv"
    accs = {"histgb:default": ("0.70", "0.71"), "lgbm:default": ("0.72", "0.70"), "xgb:default": ("0.69", "0.69"),
            "catboost:default": ("0.71", "0.72"), "lgbm:ag2023-r131": ("0.74", "0.73")}  # (holdout, cv)
    for learner, (acc, cv) in accs.items():
        e2e.append_row(out, _row("a", learner, accuracy=acc, cv=cv), fields=ceiling.FIELDS)
    assert ceiling.main(["--report", "--json", "--out", str(out), "--group", "defaults",
                         "--learner", "lgbm:ag2023-r131"]) == 0
    (s,) = __import__("json").loads(capsys.readouterr().out)
    means = {k: v["mean_accuracy"] for k, v in s["entries"].items()}
    assert means == pytest.approx({
        "best of defaults in hindsight": 0.72, "best of the named learners in hindsight": 0.74,
        "best of all of them in hindsight": 0.74,
        "defaults, chosen by cross-validation": 0.71,  # catboost has the best CV of the four
        "the named learners, chosen by cross-validation": 0.74, "all of them, chosen by cross-validation": 0.74})
