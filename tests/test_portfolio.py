"""The modern portfolio: ids, faithful parameters, inert rules, threads, early stopping, missing libraries."""

import json
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from algorank.evaluation.cv.preprocessing import resolve_learner
from algorank.metadata.boosting import (LIBRARY_PARAMS, BoostingClassifier, _holdout, autogluon_holdout_fraction,
                                        autogluon_patience, check_library_params)
from algorank.metadata.errors import InputError
from algorank.metadata.learners import (LEARNERS, estimator_from_path, is_runnable, learner_ids, make_estimator,
                                        short_name)
from algorank.metadata.portfolio import (missing_libraries, missing_library_note, portfolio_entries,
                                         portfolio_entry, portfolio_ids)

BOOSTING = ("lightgbm", "xgboost", "catboost")


def _tiny(n=60, classes=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    score = X[:, 0] + 0.5 * X[:, 1]
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, classes + 1)[1:-1]))
    return X, y


# ---------------------------------------------------------------- ids and the rule
def test_modern_portfolio_keeps_lcdbs_twenty_and_adds_the_published_configurations():
    lcdb = learner_ids()
    modern = learner_ids(portfolio="modern")
    assert len(lcdb) == 20 and modern[:20] == lcdb
    assert len(modern) == len(set(modern)) == 20 + len(portfolio_ids())
    assert 60 <= len(modern) <= 150
    sources = pd.Series([e["source"]["portfolio"] for e in portfolio_entries()]).value_counts().to_dict()
    # the written rule: 4 defaults, every non-empty FLAML entry less 2 duplicates, 5 per AutoGluon family,
    # the 12 gradient-boosting and 8 forest entries of the auto-sklearn 2.0 file
    assert sources == {"library-default": 4, "flaml": 52, "autogluon-zeroshot-2023": 25, "auto-sklearn-2.0": 20}
    assert {"histgb:default", "lgbm:default", "xgb:default", "catboost:default"} <= set(modern)
    with pytest.raises(InputError, match="portfolio"):
        learner_ids(portfolio="everything")


def test_every_id_resolves_without_allow_modules():
    for lid in portfolio_ids():
        assert is_runnable(lid)  # the package vouches for its own data: no allow_modules
        assert short_name(lid) == lid
        recipe = resolve_learner(lid)
        assert recipe.id == lid and recipe.path is None and recipe.scaling == "none"
        est = make_estimator(lid, random_state=7)
        assert est.get_params()["random_state"] == 7
    assert not set(portfolio_ids()) & set(LEARNERS)


def test_every_id_is_plain_json_data():
    entries = portfolio_entries()
    assert json.loads(json.dumps(entries)) == entries
    for e in entries:
        assert e["id"].split(":")[0] == e["family"]
        assert e["estimator"] in BOOSTING or e["estimator"].startswith("sklearn.ensemble.")
        assert e["early_stopping"] in (None, "autogluon")
        if e["source"]["portfolio"] != "library-default":
            assert e["source"]["file"] and isinstance(e["source"]["published"], dict)


# ---------------------------------------------------------------- faithful to the published files
def _flaml_translation(learner, hp):
    """FLAML's config2params (flaml/automl/model.py), written out independently."""
    hp = {k: v for k, v in hp.items() if k != "FLAML_sample_size"}
    if learner == "lgbm":
        if "log_max_bin" in hp:
            hp["max_bin"] = 2 ** hp.pop("log_max_bin") - 1
    elif learner in ("xgboost", "xgb_limitdepth"):
        hp.setdefault("max_depth", 0)
        if hp["max_depth"] == 0:
            hp.update(grow_policy="lossguide", tree_method="hist")
    elif "max_leaves" in hp:
        hp["max_leaf_nodes"] = hp.pop("max_leaves")
    return hp


def test_flaml_configurations_equal_the_installed_flaml_files():
    flaml = pytest.importorskip("flaml")
    root = Path(os.path.dirname(flaml.__file__)) / "default"
    families = {"lgbm": "lgbm", "rf": "rf", "extra_tree": "extra-trees", "xgboost": "xgb", "xgb_limitdepth": "xgb-depth"}
    by_id = {e["id"]: e for e in portfolio_entries()}
    for alias in list(by_id.values()):
        for other in alias.get("same_as", []):
            by_id[other] = alias
    checked = 0
    for learner, family in families.items():
        for task in ("binary", "multiclass"):
            doc = json.loads((root / learner / f"{task}.json").read_text())
            for i, cfg in enumerate(doc["portfolio"], start=1):
                lid = f"{family}:flaml-{task}-{i}"
                if not cfg["hyperparameters"]:
                    assert lid not in by_id  # FLAML's empty entry is the library default
                    continue
                entry = by_id[lid]
                assert entry["params"] == _flaml_translation(learner, cfg["hyperparameters"]), lid
                est = make_estimator(entry["id"])
                built = est.params if isinstance(est, BoostingClassifier) else {
                    k: est.get_params()[k] for k in entry["params"]}
                assert built == entry["params"]
                checked += 1
    assert checked == 54  # 52 learners, two of them listed in both task files


def test_flaml_translation_by_hand():
    e = portfolio_entry("lgbm:flaml-binary-2")
    # flaml/default/lgbm/binary.json, 2nd entry: log_max_bin 9 -> max_bin 511
    assert e["params"] == {"n_estimators": 141, "num_leaves": 139, "min_child_samples": 8,
                           "learning_rate": 0.04824748268727149, "max_bin": 511,
                           "colsample_bytree": 0.5261441571042451, "reg_alpha": 0.002896920833899335,
                           "reg_lambda": 0.024463247502165594}
    rf = make_estimator("rf:flaml-binary-1")
    assert (rf.n_estimators, rf.max_leaf_nodes, rf.criterion) == (501, 1156, "entropy")
    assert any("FLAML_sample_size=436899" in n for n in portfolio_entry("lgbm:flaml-binary-1")["notes"])


def test_autogluon_entries_sit_on_autogluons_model_defaults():
    gbm = portfolio_entry("lgbm:ag2023-r131")
    assert gbm["params"] == {"n_estimators": 10000, "learning_rate": 0.012144796373999013, "extra_trees": False,
                             "colsample_bytree": 0.7023601671276614, "min_child_samples": 14, "num_leaves": 53}
    assert gbm["early_stopping"] == "autogluon"
    assert portfolio_entry("lgbm:ag2023-default")["params"] == {"n_estimators": 10000, "learning_rate": 0.05}
    cat = portfolio_entry("catboost:ag2023-r177")
    assert cat["params"] == {"iterations": 10000, "learning_rate": 0.06864209415792857, "depth": 6,
                             "grow_policy": "SymmetricTree", "l2_leaf_reg": 2.1542798306067823,
                             "max_ctr_complexity": 4, "one_hot_max_size": 10}
    xgb = portfolio_entry("xgb:ag2023-r33")
    assert xgb["params"]["max_depth"] == 10 and "enable_categorical" not in xgb["params"]
    assert any("enable_categorical" in n for n in xgb["notes"])
    rf = make_estimator("rf:ag2023-r195")
    assert (rf.n_estimators, rf.max_features, rf.max_leaf_nodes, rf.min_samples_leaf, rf.bootstrap) == (
        300, 0.75, 37308, 1, True)
    xt = make_estimator("extra-trees:ag2023-entr")
    assert (xt.criterion, xt.n_estimators, xt.max_leaf_nodes, xt.bootstrap) == ("entropy", 300, 15000, True)
    for e in portfolio_entries():
        if e["source"]["portfolio"] == "autogluon-zeroshot-2023":
            published = {k: v for k, v in e["source"]["published"].items() if k not in ("ag_args", "enable_categorical")}
            names = {"feature_fraction": "colsample_bytree", "min_data_in_leaf": "min_child_samples"}
            for k, v in published.items():
                assert e["params"][names.get(k, k)] == v, (e["id"], k)


def test_auto_sklearn_entries_are_histgradientboosting_with_their_values():
    est = make_estimator("histgb:askl2-2d4a38e")
    assert (est.learning_rate, est.max_iter, est.max_leaf_nodes, est.min_samples_leaf, est.early_stopping,
            est.validation_fraction, est.n_iter_no_change, est.class_weight, est.l2_regularization) == (
        0.11729787561372715, 512, 9, 14, True, None, 10, "balanced", 0.00011677856836627539)
    for e in portfolio_entries():
        if e["source"]["portfolio"] == "auto-sklearn-2.0" and e["family"] == "histgb":
            p, g = e["params"], e["source"]["published"]
            assert p["learning_rate"] == g["classifier:gradient_boosting:learning_rate"]
            assert p["early_stopping"] == (g["classifier:gradient_boosting:early_stop"] != "off")
            assert (p.get("class_weight") == "balanced") == (g["balancing:strategy"] == "weighting")


def test_auto_sklearn_forests_take_max_features_as_an_exponent():
    # auto-sklearn: a split considers int(n_features ** max_features) features
    e = portfolio_entry("rf:askl2-864161c")
    assert e["max_features_exponent"] == 0.7084690355402233
    assert e["params"] == {"n_estimators": 512, "criterion": "entropy", "max_depth": None, "min_samples_split": 14,
                           "min_samples_leaf": 1, "min_weight_fraction_leaf": 0.0, "bootstrap": False,
                           "max_leaf_nodes": None, "min_impurity_decrease": 0.0, "class_weight": "balanced"}
    X, y = _tiny(60)
    est = make_estimator("rf:askl2-864161c", random_state=5).fit(np.hstack([X, X, X, X, X]), y)  # 20 columns
    assert est.max_features_ == int(20 ** 0.7084690355402233) == 8
    assert (est.estimator_.max_features, est.estimator_.random_state, est.estimator_.n_estimators) == (8, 5, 512)
    forests = [x for x in portfolio_entries() if x["source"]["portfolio"] == "auto-sklearn-2.0"
               and x["family"] != "histgb"]
    assert len(forests) == 8
    for x in forests:
        choice = x["source"]["published"]["classifier:__choice__"]
        assert x["max_features_exponent"] == x["source"]["published"][f"classifier:{choice}:max_features"]


# ---------------------------------------------------------------- inert rules
@pytest.mark.parametrize("library,key,value", [
    ("lightgbm", "num_threads", 8), ("lightgbm", "n_jobs", 8), ("lightgbm", "output_model", "x.txt"),
    ("lightgbm", "callbacks", None), ("xgboost", "nthread", 4), ("xgboost", "callbacks", None),
    ("xgboost", "eval_metric", "error"), ("catboost", "train_dir", "/tmp/x"), ("catboost", "allow_writing_files", True),
    ("catboost", "thread_count", -1), ("catboost", "snapshot_file", "s"), ("catboost", "save_snapshot", True),
])
def test_inert_rules_refuse_threads_files_and_callbacks(library, key, value):
    with pytest.raises(InputError, match="cannot be set from data"):
        check_library_params(library, {key: value})


@pytest.mark.parametrize("library,key,value", [
    ("lightgbm", "num_leaves", True), ("lightgbm", "num_leaves", 3.5), ("lightgbm", "learning_rate", float("nan")),
    ("lightgbm", "boosting_type", "goss; rm"), ("xgboost", "grow_policy", "/etc/passwd"),
    ("xgboost", "max_depth", "6"), ("catboost", "grow_policy", "symmetric"), ("catboost", "depth", [6]),
])
def test_inert_rules_take_closed_value_types_only(library, key, value):
    with pytest.raises(InputError, match="must be"):
        check_library_params(library, {key: value})


def test_inert_rules_accept_the_closed_values():
    assert check_library_params("lightgbm", {"num_leaves": 4, "extra_trees": True, "boosting_type": "dart"}) == {
        "num_leaves": 4, "extra_trees": True, "boosting_type": "dart"}
    assert check_library_params("catboost", {"auto_class_weights": None}) == {"auto_class_weights": None}
    with pytest.raises(InputError, match="library"):
        check_library_params("sklearn", {})


def test_boosting_classes_named_by_path_need_allow_module_and_follow_the_rules():
    lgbm = 'lightgbm.LGBMClassifier{"num_leaves": 4}'
    assert not is_runnable(lgbm)  # a user's id needs --allow-module
    assert is_runnable(lgbm, allow_modules=["lightgbm"])
    assert not is_runnable('lightgbm.LGBMClassifier{"num_threads": 8}', allow_modules=["lightgbm"])
    assert not is_runnable('xgboost.XGBClassifier{"callbacks": null}', allow_modules=["xgboost"])
    # XGBClassifier takes its parameters through **kwargs: the table, not the signature, decides
    assert is_runnable('xgboost.XGBClassifier{"max_depth": 3}', allow_modules=["xgboost"])
    # CatBoost's own class is not a scikit-learn estimator: only the portfolio's ids run it
    assert not is_runnable("catboost.CatBoostClassifier", allow_modules=["catboost"])


def test_a_boosting_learner_refuses_risky_params_at_fit():
    X, y = _tiny()
    with pytest.raises(InputError, match="cannot be set from data"):
        BoostingClassifier("catboost", {"train_dir": "/tmp/elsewhere"}).fit(X, y)


# ---------------------------------------------------------------- threads
def test_threads_are_forced_to_one(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    X, y = _tiny()
    lgbm = make_estimator("lgbm:default", random_state=0).fit(X, y)
    assert lgbm.model_.get_params()["n_jobs"] == 1
    xgb = make_estimator("xgb:default", random_state=0).fit(X, y)
    assert xgb.model_.get_params()["n_jobs"] == 1
    cat = make_estimator("catboost:ag2023-r137", random_state=0).fit(X, y)
    assert cat.model_.get_params()["thread_count"] == 1
    assert cat.model_.get_params()["allow_writing_files"] is False
    assert list(tmp_path.iterdir()) == []  # no catboost_info folder
    assert BoostingClassifier("lightgbm", n_jobs=3).fit(X, y).model_.get_params()["n_jobs"] == 3
    # a thread count from data is dropped: algorank sets one thread
    assert estimator_from_path("xgboost.XGBClassifier", {"n_jobs": 8}, allow_modules=["xgboost"]).n_jobs == 1
    assert estimator_from_path("lightgbm.LGBMClassifier", {}, allow_modules=["lightgbm"]).n_jobs == 1


# ---------------------------------------------------------------- early stopping
def test_autogluon_holdout_and_patience_rules():
    # AutoGluon's default_holdout_frac and get_early_stopping_rounds("simple"), by hand
    assert autogluon_holdout_fraction(1000) == 0.2
    assert autogluon_holdout_fraction(3000) == pytest.approx(500 / 3000)
    assert autogluon_holdout_fraction(20000) == 0.1
    assert autogluon_holdout_fraction(40000) == pytest.approx(2500 / 40000)
    assert autogluon_holdout_fraction(10 ** 6) == 0.01
    assert autogluon_patience(5000) == 300
    assert autogluon_patience(20000) == 150
    assert autogluon_patience(200000) == 20


def test_holdout_is_stratified_and_keeps_every_class_in_the_fit_part():
    y = np.array([0] * 50 + [1] * 30 + [2])
    fit, stop = _holdout(y, 0.2, np.random.RandomState(0))
    assert sorted(np.concatenate([fit, stop])) == list(range(len(y)))
    assert set(y[fit]) == {0, 1, 2}
    assert np.bincount(y[stop], minlength=3).tolist() == [10, 6, 0]


@pytest.mark.parametrize("library", BOOSTING)
def test_early_stopping_keeps_the_best_round_on_a_holdout(library):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 3))
    y = np.where(X[:, 0] + rng.normal(scale=1.0, size=300) > 0, "yes", "no")  # noisy: stops early
    key = "iterations" if library == "catboost" else "n_estimators"
    est = BoostingClassifier(library, {key: 10000, "learning_rate": 0.3}, early_stopping="autogluon",
                             random_state=0).fit(X, y)
    assert 1 <= est.n_iter_ < 10000
    assert list(est.classes_) == ["no", "yes"]
    proba = est.predict_proba(X)
    assert proba.shape == (300, 2) and np.allclose(proba.sum(axis=1), 1)
    assert set(est.predict(X)) <= {"no", "yes"}


@pytest.mark.parametrize("library", BOOSTING)
def test_labels_are_encoded_by_the_wrapper(library):
    # codes 0, 2, 5 (a training fold that lacks classes 1, 3, 4 of the dataset)
    X, y = _tiny(90, classes=3)
    y = np.array([0, 2, 5])[y]
    est = BoostingClassifier(library, {"iterations" if library == "catboost" else "n_estimators": 5},
                             random_state=0).fit(X, y)
    assert list(est.classes_) == [0, 2, 5] and est.predict_proba(X).shape == (90, 3)
    assert set(est.predict(X)) <= {0, 2, 5}


def test_a_single_class_is_refused():
    X, _ = _tiny()
    with pytest.raises(ValueError, match="single class"):
        BoostingClassifier("lightgbm").fit(X, np.zeros(len(X)))


# ---------------------------------------------------------------- missing library
def test_missing_library_makes_its_learners_rank_only(monkeypatch):
    monkeypatch.setitem(sys.modules, "lightgbm", None)  # Python's mark for "cannot be imported"
    lgbm = [lid for lid in portfolio_ids() if portfolio_entry(lid)["estimator"] == "lightgbm"]
    assert lgbm and not any(is_runnable(lid) for lid in lgbm)
    assert is_runnable("xgb:default") and is_runnable("histgb:default") and is_runnable("knn")
    assert set(missing_libraries(portfolio_ids())) == set(lgbm)
    note = missing_library_note(["knn", *lgbm])
    assert note.count("algorank[boosting]") == 1 and f"{len(lgbm)} learner(s) need lightgbm" in note
    assert missing_library_note(["knn", "xgb:default"]) is None
    with pytest.raises(InputError, match=r"algorank\[boosting\]"):
        make_estimator("lgbm:default")
    with pytest.raises(InputError, match=r"algorank\[boosting\]"):
        resolve_learner("lgbm:flaml-binary-2")
    with pytest.raises(ImportError, match=r"algorank\[boosting\]"):
        BoostingClassifier("lightgbm").fit(*_tiny())


def test_recommend_ranks_but_does_not_run_a_learner_whose_library_is_missing(monkeypatch, caplog):
    from algorank.evaluation.cv.datasets import load_dataset
    from algorank.metadata.dataset import MetaDataset
    from algorank.recommender.live.recommend import recommend

    learners = ["lgbm:default", "sklearn.naive_bayes.GaussianNB"]
    rows = [{"dataset": f"d{d}", "learner": l, "repeat": 0, "fold": 0, "accuracy": 0.9 - 0.1 * i,
             "fit_time": 0.01 * (i + 1)} for d in range(4) for i, l in enumerate(learners)]
    ds = pd.DataFrame({"dataset": [f"d{d}" for d in range(4)], "n_instances": [150, 300, 600, 1000],
                       "n_features": 4, "n_classes": 3, "majority_fraction": 0.34})
    monkeypatch.setitem(sys.modules, "lightgbm", None)
    with caplog.at_level("WARNING"):
        r = recommend(load_dataset("sklearn:iris"), strategy="ar:p=0", meta=MetaDataset(pd.DataFrame(rows), ds),
                      budget_seconds=None, cv=3)
    assert [p.learner for p in r.plan] == learners
    assert r.rank_only == ("lgbm:default",)
    assert r.trace.learners == ["sklearn.naive_bayes.GaussianNB"]
    notes = [n for n in r.notes if "algorank[boosting]" in n]
    assert len(notes) == 1
    assert sum("algorank[boosting]" in m for m in caplog.messages) == 1


# ---------------------------------------------------------------- every learner runs
def _one_of_each_kind() -> list[str]:
    """The first id of each way the portfolio builds an estimator: its class, with or without the library's
    own early stopping, and auto-sklearn's exponent forests (every configuration goes through one of these)."""
    kinds: dict = {}
    for e in portfolio_entries():
        kinds.setdefault((e["estimator"], bool(e["early_stopping"]), "max_features_exponent" in e), e["id"])
    return list(kinds.values())


def test_every_portfolio_learner_builds_and_one_of_each_kind_fits_a_tiny_dataset(tmp_path, monkeypatch):
    # every id builds (its checked parameters); one configuration of each kind is fitted as published
    # (thousands of rounds where it says so, early stopping included) on 60 rows; fitting all of them is
    # tests/benchmarks/check_portfolio_fits.py (minutes of CPU)
    monkeypatch.chdir(tmp_path)
    for lid in portfolio_ids():
        assert make_estimator(lid, random_state=0).get_params() is not None, lid
    kinds = _one_of_each_kind()
    assert len(kinds) >= 10  # 4 libraries' defaults, early stopping, the forests, the exponent forests
    for classes in (2, 3):
        X, y = _tiny(60, classes=classes)  # balanced classes
        for lid in kinds:
            est = make_estimator(lid, random_state=0).fit(X, y)
            proba = est.predict_proba(X)
            assert proba.shape == (60, classes) and np.allclose(proba.sum(axis=1), 1), lid
            assert (est.predict(X) == y).mean() >= 1 / classes, lid
    assert list(tmp_path.iterdir()) == []  # no library wrote a file (CatBoost's catboost_info/ among them)


# ---------------------------------------------------------------- the meta-data build
def test_build_over_the_modern_portfolio_has_its_own_folder(tmp_path):
    from algorank.evaluation.cv.portfolios import build_args as portfolio_build
    from algorank.evaluation.cv.metabuild import default_out_dir

    assert portfolio_build("lcdb") == {"learners": None, "out_dir": None}
    assert portfolio_build("modern") == {"learners": learner_ids(portfolio="modern"),
                                         "out_dir": default_out_dir().parent / "modern"}
    assert portfolio_build("modern", tmp_path)["out_dir"] == tmp_path
    with pytest.raises(InputError, match="portfolio"):
        portfolio_build("all")


def test_build_over_the_modern_portfolio_refuses_a_missing_library(monkeypatch, tmp_path, capsys):
    from cli import main

    monkeypatch.setitem(sys.modules, "catboost", None)
    code = main(["build-meta", "--portfolio", "modern", "--shared", str(tmp_path), "--out", str(tmp_path / "o"),
                 "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("error: ") and "algorank[boosting]" in err[0]
    assert not (tmp_path / "o").exists()
