"""Write ``metadata/data/portfolio.json``: the modern portfolio, translated from the published files.

The rule (docs/guide/portfolio.md says why):

1. the 20 LCDB learners (not in this file: they stay in ``algorank.metadata.learners``);
2. HistGradientBoosting, LightGBM, XGBoost and CatBoost at their library defaults;
3. FLAML's zero-shot configurations: every non-empty entry of ``flaml/default/<learner>/{binary,multiclass}.json``
   for lgbm, rf, extra_tree, xgboost and xgb_limitdepth, translated as FLAML's ``config2params`` does,
   duplicates removed (the first id is kept);
4. AutoGluon's 2023 zero-shot portfolio (``zeroshot_portfolio_2023.py``): the first five classification
   entries of GBM, CAT, XGB, RF and XT in the file's order, with AutoGluon's model defaults under them;
5. auto-sklearn 2.0: every ``gradient_boosting``, ``random_forest`` and ``extra_trees`` entry of
   ``balanced_accuracy/askl2_portfolios/RF_None_holdout_iterative_es_if.json``.

Usage (the sources are read from files; nothing is downloaded)::

    python tests/benchmarks/make_portfolio.py --autogluon zeroshot_portfolio_2023.py --autogluon-commit SHA \\
        --askl2 RF_None_holdout_iterative_es_if.json --askl2-commit SHA [--out metadata/data/portfolio.json]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FLAML_LEARNERS = {"lgbm": "lgbm", "rf": "rf", "extra_tree": "extra-trees", "xgboost": "xgb", "xgb_limitdepth": "xgb-depth"}
AG_FAMILIES = {"GBM": "lgbm", "CAT": "catboost", "XGB": "xgb", "RF": "rf", "XT": "extra-trees"}
AG_PER_FAMILY = 5
AG_PATH = "tabular/src/autogluon/tabular/configs/zeroshot/zeroshot_portfolio_2023.py"
ASKL2_PATH = "autosklearn/experimental/balanced_accuracy/askl2_portfolios/RF_None_holdout_iterative_es_if.json"
RF = "sklearn.ensemble.RandomForestClassifier"
XT = "sklearn.ensemble.ExtraTreesClassifier"
HGB = "sklearn.ensemble.HistGradientBoostingClassifier"
ONE_HOT = ("algorank one-hot encodes nominal columns (at most 100 levels each) and imputes medians before "
           "every learner; the library sees numeric columns only")


def flaml_params(learner: str, hp: dict) -> tuple[str, dict, list]:
    """FLAML's ``config2params`` for one zero-shot entry: (estimator, params, notes)."""
    hp = dict(hp)
    notes = []
    if "FLAML_sample_size" in hp:
        notes.append(f"FLAML_sample_size={hp.pop('FLAML_sample_size')} dropped (FLAML drops it too when it "
                     "suggests a configuration; in its search it trained on a sample of that many rows)")
    if learner == "lgbm":
        if "log_max_bin" in hp:
            hp["max_bin"] = (1 << hp.pop("log_max_bin")) - 1
        return "lightgbm", hp, notes
    if learner in ("xgboost", "xgb_limitdepth"):
        hp["max_depth"] = hp.get("max_depth", 0)
        if hp["max_depth"] == 0:
            hp["grow_policy"] = "lossguide"
            hp["tree_method"] = "hist"
        return "xgboost", hp, notes
    if "max_leaves" in hp:
        hp["max_leaf_nodes"] = hp.pop("max_leaves")
    return (RF if learner == "rf" else XT), hp, notes


def flaml_entries(flaml_dir: Path, version: str) -> list[dict]:
    out = []
    for learner, family in FLAML_LEARNERS.items():
        for task in ("binary", "multiclass"):
            rel = f"flaml/default/{learner}/{task}.json"
            doc = json.loads((flaml_dir / "default" / learner / f"{task}.json").read_text())
            for i, cfg in enumerate(doc["portfolio"], start=1):
                hp = cfg["hyperparameters"]
                if not hp:
                    continue  # FLAML's empty entry: the library default, already in the portfolio
                estimator, params, notes = flaml_params(learner, hp)
                out.append({"id": f"{family}:flaml-{task}-{i}", "family": family, "estimator": estimator,
                            "params": params, "early_stopping": None,
                            "source": {"portfolio": "flaml", "repository": "microsoft/FLAML",
                                       "version": f"flaml=={version}", "file": rel, "entry": i, "published": hp},
                            "notes": notes + ["one thread (FLAML uses n_jobs cores)"]})
    return out


def ag_entries(path: Path, commit: str) -> list[dict]:
    text = path.read_text()
    portfolio = ast.literal_eval(text.split("=", 1)[1].strip())
    out = []
    for fam, family in AG_FAMILIES.items():
        taken = 0
        for cfg in portfolio[fam]:
            ag_args = cfg.get("ag_args", {})
            if "problem_types" in ag_args and not {"binary", "multiclass"} & set(ag_args["problem_types"]):
                continue
            if taken == AG_PER_FAMILY:
                break
            taken += 1
            hp = {k: v for k, v in cfg.items() if k != "ag_args"}
            suffix = str(ag_args.get("name_suffix", "default")).strip("_").lower() or "default"
            estimator, params, stop, notes = ag_params(fam, hp)
            out.append({"id": f"{family}:ag2023-{suffix}", "family": family, "estimator": estimator, "params": params,
                        "early_stopping": stop,
                        "source": {"portfolio": "autogluon-zeroshot-2023", "repository": "autogluon/autogluon",
                                   "commit": commit, "file": AG_PATH, "entry": f"{fam}[{portfolio[fam].index(cfg)}]",
                                   "published": cfg},
                        "notes": notes})
    return out


def ag_params(fam: str, hp: dict) -> tuple[str, dict, str | None, list]:
    """AutoGluon's model defaults with one portfolio entry on top."""
    notes = []
    stop_note = ("early stopping: AutoGluon's holdout fraction and its minimum patience "
                 "(max(round(300 * min(1, 10000 / n)), 20) rounds) on the classification error; AutoGluon's "
                 "adaptive rule can wait longer (0.3 x best round + 20 when that is larger)")
    if fam == "GBM":
        names = {"learning_rate": "learning_rate", "num_leaves": "num_leaves", "feature_fraction": "colsample_bytree",
                 "min_data_in_leaf": "min_child_samples", "extra_trees": "extra_trees"}
        params = {"n_estimators": 10000, "learning_rate": 0.05}
        params.update({names[k]: v for k, v in hp.items()})
        return "lightgbm", params, "autogluon", [stop_note, "LightGBM names through its scikit-learn interface "
                                                 "(feature_fraction = colsample_bytree, min_data_in_leaf = "
                                                 "min_child_samples)"]
    if fam == "CAT":
        params = {"iterations": 10000, "learning_rate": 0.05}
        params.update(hp)
        if {"max_ctr_complexity", "one_hot_max_size"} & set(hp):
            notes.append("max_ctr_complexity and one_hot_max_size act on categorical columns; " + ONE_HOT
                         + ", so they have no effect here")
        return "catboost", params, "autogluon", [stop_note] + notes
    if fam == "XGB":
        params = {"n_estimators": 10000, "learning_rate": 0.1, "booster": "gbtree"}
        params.update({k: v for k, v in hp.items() if k != "enable_categorical"})
        if "enable_categorical" in hp:
            notes.append(f"enable_categorical={hp['enable_categorical']} dropped: " + ONE_HOT)
        return "xgboost", params, "autogluon", [stop_note] + notes
    params = {"n_estimators": 300, "max_leaf_nodes": 15000, "bootstrap": True}
    params.update(hp)
    return (RF if fam == "RF" else XT), params, None, ["one thread (AutoGluon uses every core)"]


def _none(value):
    return None if value in ("None", None) else value


def askl2_entries(path: Path, commit: str) -> list[dict]:
    portfolio = json.loads(path.read_text())["portfolio"]
    out = []
    for key, cfg in portfolio.items():
        if cfg["classifier:__choice__"] != "gradient_boosting":
            continue
        g = {k.split(":", 2)[2]: v for k, v in cfg.items() if k.startswith("classifier:gradient_boosting:")}
        early = g["early_stop"]
        params = {"loss": "log_loss", "learning_rate": float(g["learning_rate"]), "max_iter": 512,
                  "min_samples_leaf": int(g["min_samples_leaf"]), "max_depth": _none(g["max_depth"]),
                  "max_leaf_nodes": _none(g["max_leaf_nodes"]), "max_bins": int(g["max_bins"]),
                  "l2_regularization": float(g["l2_regularization"]), "tol": float(g["tol"]),
                  "scoring": _none(g["scoring"]), "early_stopping": early != "off",
                  "n_iter_no_change": int(g.get("n_iter_no_change", 0)) if early != "off" else 10}
        if params["scoring"] == "loss":
            del params["scoring"]  # scikit-learn's default, and a free string that data may not set
        if params["max_leaf_nodes"] is not None:
            params["max_leaf_nodes"] = int(params["max_leaf_nodes"])
        if params["max_depth"] is not None:
            params["max_depth"] = int(params["max_depth"])
        params["validation_fraction"] = float(g["validation_fraction"]) if early == "valid" else None
        if cfg.get("balancing:strategy") == "weighting":
            params["class_weight"] = "balanced"
        prefix = next(p for p in ("data_preprocessor:feature_type:", "data_preprocessing:") if
                      any(k.startswith(p) for k in cfg))
        rescaling = cfg.get(prefix + "numerical_transformer:rescaling:__choice__")
        imputation = cfg.get(prefix + "numerical_transformer:imputation:strategy")
        notes = ["max_iter=512 is auto-sklearn's fixed budget for this learner; loss 'auto' is scikit-learn's "
                 "'log_loss'", "n_iter_no_change=10 (scikit-learn's default) is unused with early stopping off"
                 if early == "off" else f"early_stop={early!r}: scikit-learn's own early stopping "
                 + ("on a validation fraction" if early == "valid" else "on the training loss"),
                 f"auto-sklearn's preprocessing is not reproduced: imputation {imputation!r} (algorank: median), "
                 f"rescaling {rescaling!r} (no effect on trees unless row-wise 'normalize'), categorical encoding "
                 "and coalescence (" + ONE_HOT + ")"]
        if cfg.get("balancing:strategy") == "weighting":
            notes.append("balancing 'weighting' as class_weight='balanced' (auto-sklearn passes the same "
                         "balanced sample weights)")
        out.append({"id": f"histgb:askl2-{key}", "family": "histgb", "estimator": HGB, "params": params,
                    "early_stopping": None,
                    "source": {"portfolio": "auto-sklearn-2.0", "repository": "automl/auto-sklearn", "commit": commit,
                               "file": ASKL2_PATH, "entry": key, "published": cfg},
                    "notes": notes})
    return out


def _bool(value) -> bool:
    return value in (True, "True")


def askl2_forest_entries(path: Path, commit: str) -> list[dict]:
    """auto-sklearn 2.0's random forests and extra trees (512 trees, max_features as an exponent)."""
    portfolio = json.loads(path.read_text())["portfolio"]
    out = []
    for key, cfg in portfolio.items():
        choice = cfg["classifier:__choice__"]
        if choice not in ("random_forest", "extra_trees"):
            continue
        g = {k.split(":", 2)[2]: v for k, v in cfg.items() if k.startswith(f"classifier:{choice}:")}
        params = {"n_estimators": 512, "criterion": g["criterion"], "max_depth": _none(g["max_depth"]),
                  "min_samples_split": int(g["min_samples_split"]), "min_samples_leaf": int(g["min_samples_leaf"]),
                  "min_weight_fraction_leaf": float(g["min_weight_fraction_leaf"]),
                  "bootstrap": _bool(g["bootstrap"]), "max_leaf_nodes": _none(g["max_leaf_nodes"]),
                  "min_impurity_decrease": float(g["min_impurity_decrease"])}
        if cfg.get("balancing:strategy") == "weighting":
            params["class_weight"] = "balanced"
        prefix = next(p for p in ("data_preprocessor:feature_type:", "data_preprocessing:") if
                      any(k.startswith(p) for k in cfg))
        family = "rf" if choice == "random_forest" else "extra-trees"
        notes = ["n_estimators=512 is auto-sklearn's fixed budget for this learner",
                 "max_features is auto-sklearn's exponent: a split considers int(n_features ** max_features) "
                 "features, n_features counted after algorank's one-hot encoding",
                 f"auto-sklearn's preprocessing is not reproduced: imputation "
                 f"{cfg.get(prefix + 'numerical_transformer:imputation:strategy')!r} (algorank: median), rescaling "
                 f"{cfg.get(prefix + 'numerical_transformer:rescaling:__choice__')!r} (no effect on trees unless "
                 "row-wise 'normalize'), categorical encoding and coalescence (" + ONE_HOT + ")"]
        if cfg.get("balancing:strategy") == "weighting":
            notes.append("balancing 'weighting' as class_weight='balanced', as auto-sklearn does for forests")
        out.append({"id": f"{family}:askl2-{key}", "family": family,
                    "estimator": RF if choice == "random_forest" else XT, "params": params,
                    "max_features_exponent": float(g["max_features"]), "early_stopping": None,
                    "source": {"portfolio": "auto-sklearn-2.0", "repository": "automl/auto-sklearn", "commit": commit,
                               "file": ASKL2_PATH, "entry": key, "published": cfg},
                    "notes": notes})
    return out


def defaults() -> list[dict]:
    src = {"portfolio": "library-default"}
    return [
        {"id": "histgb:default", "family": "histgb", "estimator": HGB, "params": {}, "early_stopping": None,
         "source": dict(src), "notes": ["scikit-learn's own default early stopping ('auto': on above 10,000 rows)"]},
        {"id": "lgbm:default", "family": "lgbm", "estimator": "lightgbm", "params": {}, "early_stopping": None,
         "source": dict(src), "notes": ["one thread"]},
        {"id": "xgb:default", "family": "xgb", "estimator": "xgboost", "params": {}, "early_stopping": None,
         "source": dict(src), "notes": ["one thread"]},
        {"id": "catboost:default", "family": "catboost", "estimator": "catboost", "params": {},
         "early_stopping": None, "source": dict(src),
         "notes": ["one thread; no catboost_info folder is written"]},
    ]


def dedupe(entries: list[dict]) -> list[dict]:
    seen: dict[str, dict] = {}
    out = []
    for e in entries:
        key = json.dumps([e["estimator"], e["params"], e["early_stopping"]], sort_keys=True)
        if key in seen:
            seen[key].setdefault("same_as", []).append(e["id"])
            continue
        seen[key] = e
        out.append(e)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--autogluon", type=Path, required=True)
    ap.add_argument("--autogluon-commit", required=True)
    ap.add_argument("--askl2", type=Path, required=True)
    ap.add_argument("--askl2-commit", required=True)
    ap.add_argument("--out", type=Path, default=ROOT / "metadata" / "data" / "portfolio.json")
    args = ap.parse_args(argv)
    import flaml

    flaml_dir = Path(os.path.dirname(flaml.__file__))
    entries = dedupe(defaults() + flaml_entries(flaml_dir, flaml.__version__)
                     + ag_entries(args.autogluon, args.autogluon_commit) + askl2_entries(args.askl2, args.askl2_commit)
                     + askl2_forest_entries(args.askl2, args.askl2_commit))
    ids = [e["id"] for e in entries]
    if len(set(ids)) != len(ids):
        raise SystemExit("error: duplicate ids")
    doc = {"format": 1, "description": "algorank's modern portfolio beyond the 20 LCDB learners; "
                                       "docs/guide/portfolio.md gives the rule and the sources",
           "learners": entries}
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{len(entries)} learners -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
