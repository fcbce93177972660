"""Why a rank-based test and the mean difference can disagree about two learners.

The Friedman-type post hoc tests (and the control-versus-all tests) compare *average ranks*:
a learner that beats another on most datasets by a little ranks better, however much it loses
on the others.  The mean difference weighs the margins.  So ``lda > knn`` can be significant
by ranks while lda is worse on average, because knn wins by large margins on a few datasets.
The post hoc rank test also ranks among *all* compared learners, so where the others fall
matters too.  :func:`rank_mean_disagreements` finds such pairs and says why, in one line each.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from algorank.metadata.learners import short_name

__all__ = ["rank_mean_disagreements"]

#: Metrics in [0, 1] whose differences are reported in points (x 100).
_POINT_METRICS = {"accuracy", "balanced_accuracy", "auc", "roc_auc", "f1_macro"}


def _fmt(value: float, metric: str) -> str:
    return f"{abs(value) * 100:.1f} points" if metric in _POINT_METRICS else f"{abs(value):.3g}"


def rank_mean_disagreements(table: pd.DataFrame, better_worse: Sequence[tuple], *, metric: str = "accuracy",
                            lower_is_better: bool = False, method: str = "post hoc", k: int | None = None) -> list[str]:
    """One line per pair that a rank test calls significant while the mean difference favours the other learner.

    Parameters
    ----------
    table : DataFrame
        Datasets x learners values of ``metric`` (NaN = not run).
    better_worse : sequence of (str, str)
        Pairs the rank test found significant, the better learner first.
    metric : str
        Metric name (accuracy-like metrics are reported in points).
    lower_is_better : bool
        True for log loss.
    method : str
        Name of the rank test, for the text.
    k : int, optional
        Number of learners the ranks were taken among (mentioned when above 2).

    Returns
    -------
    list of str
    """
    lines = []
    for a, b in better_worse:
        if a not in table.columns or b not in table.columns:
            continue
        both = table[[a, b]].dropna()
        if len(both) < 2:
            continue
        adv = both[a].to_numpy(dtype=float) - both[b].to_numpy(dtype=float)
        if lower_is_better:
            adv = -adv
        mean = float(np.mean(adv))
        if mean >= 0:
            continue
        wins, losses = int((adv > 0).sum()), int((adv < 0).sum())
        worst = int(np.argmin(adv))
        a_s, b_s = short_name(a), short_name(b)
        margin = _fmt(np.median(adv[adv > 0]), metric) if wins else "none"
        text = (f"{a_s} > {b_s} by ranks ({method}) although {a_s} is on average {_fmt(mean, metric)} worse: "
                f"{a_s} is better on {wins} of {len(adv)} datasets (median margin {margin}), {b_s} on {losses}, "
                f"by up to {_fmt(adv[worst], metric)} (dataset {both.index[worst]}); ranks count wins and ignore "
                "margins, the mean weighs them")
        if k is not None and k > 2:
            text += f"; the post hoc ranks are taken among all {k} learners"
        lines.append(text)
    return lines
