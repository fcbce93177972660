"""Plots of a live recommendation run: the best score so far against cumulative time.

Both plots show the run's metric in its own units (:func:`algorank.metadata.metric.from_score`;
for log loss lower is better and the best so far is the lowest so far).  The time axis uses
plain-number ticks that never collide (:func:`~algorank.recommender.kernel.labels.log_time_axis`),
and the legend sits outside the axes, so it hides no point.
"""

from __future__ import annotations

import numpy as np

from algorank.recommender.kernel.labels import log_time_axis
from algorank.metadata.metric import METRICS, from_score
from algorank.metadata.text import literal_text

__all__ = ["plot_recommendation", "plot_predicted_vs_realised"]


def _best_so_far(scores: np.ndarray) -> np.ndarray:
    """Running maximum of the scores (NaN before the first finite one)."""
    return np.fmax.accumulate(np.where(np.isfinite(scores), scores, np.nan))


def plot_recommendation(trace, *, ax=None, label: str | None = None, metric: str = "accuracy"):
    """Best-so-far value of ``metric`` (step function) and each test's value against cumulative seconds.

    Parameters
    ----------
    trace : Trace
        The live (or simulated) trace; its accuracies are the metric's scores.
    ax : matplotlib Axes, optional
        Axes to draw on (a new figure otherwise).
    label : str, optional
        Legend label of the best-so-far curve.
    metric : str
        The metric the trace's scores are of (default accuracy).

    Returns
    -------
    Axes
    """
    ax = _axes(ax)
    name = METRICS[metric].label
    acc = trace.accuracies
    cum = trace.cumulative_seconds
    ok = np.isfinite(acc)
    if ok.any():
        best = _best_so_far(acc)
        keep = np.isfinite(best)
        ax.step(cum[keep], from_score(metric, best[keep]), where="post", label=label or "best so far")
        ax.scatter(cum[ok], from_score(metric, acc[ok]), s=12, alpha=0.6, label="each test")
    log_time_axis(ax, label="cumulative time (s, log scale)")
    ax.set_ylabel(name + ("" if METRICS[metric].higher_is_better else " (lower is better)"))
    ax.set_title(f"{trace.dataset}: best {name} so far")
    ax.grid(True, alpha=0.3)
    if ok.any():
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize="small")
    literal_text(ax)
    return ax


def plot_predicted_vs_realised(result, *, ax=None):
    """The run's best-so-far curve over time next to the one its models predicted.

    For the tests in the order they ran: the realised curve uses what was measured, the
    predicted one each test's predicted value and predicted seconds (from before the run).
    The loss-time curve is this curve mirrored (loss = best - best so far); the metric is
    shown so that a miscalibrated prediction is visible as a gap between the two.

    Parameters
    ----------
    result : Recommendation
        A finished (not dry-run) recommendation.
    ax : matplotlib Axes, optional

    Returns
    -------
    Axes
    """
    from algorank.metadata.metric import to_score

    ax = _axes(ax)
    metric = getattr(result, "metric", "accuracy")
    name = METRICS[metric].label
    board = result.leaderboard
    if len(board):
        for label, a, s, style in (("realised", board[metric].to_numpy(dtype=float),
                                    board["seconds"].to_numpy(dtype=float), "-"),
                                   ("predicted", board[f"predicted_{metric}"].to_numpy(dtype=float),
                                    board["predicted_seconds"].to_numpy(dtype=float), "--")):
            s = np.where(np.isfinite(s), s, 0.0)
            cum = np.cumsum(s)
            best = _best_so_far(to_score(metric, a))
            keep = np.isfinite(best) & (cum > 0)
            if keep.any():
                ax.step(cum[keep], from_score(metric, best[keep]), where="post", linestyle=style, marker="o",
                        markersize=3, label=label)
    log_time_axis(ax, label="cumulative time of the tests (s, log scale)")
    ax.set_ylabel(f"best {name} so far")
    ax.set_title(f"{result.dataset}: predicted vs realised")
    ax.grid(True, alpha=0.3)
    if len(board):
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize="small")
    literal_text(ax)
    return ax


def _axes(ax):
    """``ax``, or the axes of a new 6 x 4 inch figure (headless backend unless one is chosen)."""
    if ax is not None:
        return ax
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(6, 4))[1]
