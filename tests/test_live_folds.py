"""``cv="auto"``: fewer folds per live test when the data are large for the budget."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import algorank
from algorank import cli
from algorank.metadata.errors import InputError
from algorank.recommender.live.folds import LARGE_FOLDS, SMALL_FOLDS, large_for_budget, live_folds


def test_the_threshold_is_flamls_cells_per_budget():
    # 10^7 x 60 / 3600 = 166,666.7 cells after dividing by 0.9: 150,000 rows x features at 60 s
    assert large_for_budget(15_000, 10, 60) and not large_for_budget(14_999, 10, 60)
    assert large_for_budget(150_000, 1, 60) and not large_for_budget(149_999, 1, 60)
    assert large_for_budget(2_500, 1, 1) and not large_for_budget(2_499, 1, 1)  # 2,777.8 cells at 1 s
    assert not large_for_budget(10 ** 9, 100, None)  # no budget: never


def test_auto_chooses_the_folds_and_says_why():
    assert live_folds("auto", n_rows=1_000, n_features=10, budget=60) == (SMALL_FOLDS, None)
    folds, why = live_folds("AUTO", n_rows=20_000, n_features=10, budget=60)
    assert folds == LARGE_FOLDS == 2
    assert why == "2-fold tests: 20,000 rows x 10 features = 200,000 cells are large for a 60 s budget (cv='auto')"
    assert live_folds(3, n_rows=20_000, n_features=10, budget=60) == (3, None)  # a number is used as given
    for bad in ("five", 1, 2.5, True):
        with pytest.raises(InputError, match="cv"):
            live_folds(bad, n_rows=10, n_features=1, budget=60)


def test_recommend_plans_with_the_chosen_folds():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(16_000, 10)), columns=[f"x{i}" for i in range(10)])
    y = np.where(X["x0"] + rng.normal(size=len(X)) > 0, "a", "b")
    big = algorank.recommend(X, y=y, cv="auto", budget=60, dry_run=True, top=3)
    assert big.cv == 2 and big.notes[-1].startswith("2-fold tests: 16,000 rows x 10 features")
    assert big.time_model.startswith("2 x ")  # the live time model charges two fits per test
    unlimited = algorank.recommend(X, y=y, cv="auto", budget=None, dry_run=True, top=3)
    assert unlimited.cv == 5 and not any("fold tests" in n for n in unlimited.notes)


def test_cli_accepts_auto_and_names_a_bad_value(capsys):
    assert cli.main(["recommend", "sklearn:iris", "--cv", "auto", "--dry-run", "--top", "2", "--quiet"]) == 0
    capsys.readouterr()
    assert cli.main(["recommend", "sklearn:iris", "--cv", "x", "--dry-run"]) == 2
    assert "argument --cv: must be an integer >= 2 or 'auto'; got 'x'" in capsys.readouterr().err


def test_the_default_is_auto_for_a_regression_and_five_folds_for_a_classification():
    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(16_000, 10)), columns=[f"x{i}" for i in range(10)])
    quantity = X["x0"] * 3.7 + rng.normal(size=len(X))
    labels = np.where(quantity > 0, "a", "b")
    assert algorank.recommend(X, y=quantity, budget=60, dry_run=True, top=2).cv == 2
    assert algorank.recommend(X, y=labels, budget=60, dry_run=True, top=2).cv == 5
    assert algorank.recommend(X.head(2_000), y=quantity.head(2_000), budget=60, dry_run=True, top=2).cv == 5
