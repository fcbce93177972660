"""compare's note when a rank test and the mean difference disagree (hand-computed)."""

from __future__ import annotations

import pandas as pd

from algorank.evaluation.stats.disagreement import rank_mean_disagreements


def test_a_few_large_losses_against_many_small_wins():
    # a beats b by 1 point on d0..d3 and loses by 20 points on d4: mean a - b = (4 - 20) / 5 = -3.2 points
    table = pd.DataFrame({"a": [0.81, 0.81, 0.81, 0.81, 0.60], "b": [0.80, 0.80, 0.80, 0.80, 0.80]},
                         index=[f"d{i}" for i in range(5)])
    (note,) = rank_mean_disagreements(table, [("a", "b")], method="holm", k=20)
    assert note.startswith("a > b by ranks (holm) although a is on average 3.2 points worse: a is better on 4 of 5 "
                           "datasets (median margin 1.0 points), b on 1, by up to 20.0 points (dataset d4)")
    assert note.endswith("the post hoc ranks are taken among all 20 learners")
    assert rank_mean_disagreements(table, [("b", "a")]) == []  # ranks and mean agree: b is better on average
    # log loss: lower is better, so the same numbers favour a on average and no note is due
    assert rank_mean_disagreements(table, [("a", "b")], metric="log_loss", lower_is_better=True) == []
    (ll,) = rank_mean_disagreements(table, [("b", "a")], metric="log_loss", lower_is_better=True)
    assert "b is on average 0.032 worse: b is better on 4 of 5 datasets (median margin 0.01), a on 1, by up to 0.2" in ll
