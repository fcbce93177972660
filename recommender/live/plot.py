"""Plot of a live recommendation run: best accuracy so far against cumulative time."""

from __future__ import annotations

import numpy as np

__all__ = ["plot_recommendation", "plot_predicted_vs_realised"]


def plot_recommendation(trace, *, ax=None, label: str | None = None):
    """Best-so-far accuracy (step function) against cumulative seconds on a log axis.

    Parameters
    ----------
    trace : Trace
        The live (or simulated) trace.
    ax : matplotlib Axes, optional
        Axes to draw on (a new figure otherwise).
    label : str, optional
        Legend label.

    Returns
    -------
    Axes
    """
    ax = _axes(ax)
    acc = trace.accuracies
    cum = trace.cumulative_seconds
    ok = np.isfinite(acc)
    if ok.any():
        best = np.fmax.accumulate(np.where(ok, acc, np.nan))
        keep = np.isfinite(best)
        ax.step(cum[keep], best[keep], where="post", label=label or "best so far")
        ax.scatter(cum[ok], acc[ok], s=12, alpha=0.6, label="each test")
    ax.set_xscale("log")
    ax.set_xlabel("cumulative time (s, log scale)")
    ax.set_ylabel("accuracy")
    ax.set_title(f"{trace.dataset}: best accuracy so far")
    ax.grid(True, alpha=0.3)
    if ok.any():
        ax.legend(loc="lower right")
    return ax


def plot_predicted_vs_realised(result, *, ax=None):
    """The run's best-accuracy-so-far curve over time next to the one its models predicted.

    For the tests in the order they ran: the realised curve uses what was measured, the
    predicted one each test's predicted accuracy and predicted seconds (from before the run).
    The loss-time curve is this curve mirrored (loss = best - best so far); accuracy is shown
    so that a miscalibrated prediction is visible as a gap between the two.

    Parameters
    ----------
    result : Recommendation
        A finished (not dry-run) recommendation.
    ax : matplotlib Axes, optional

    Returns
    -------
    Axes
    """
    ax = _axes(ax)
    board = result.leaderboard
    if len(board):
        acc = board["accuracy"].to_numpy(dtype=float)
        for label, a, s, style in (("realised", acc, board["seconds"].to_numpy(dtype=float), "-"),
                                   ("predicted", board["predicted_accuracy"].to_numpy(dtype=float),
                                    board["predicted_seconds"].to_numpy(dtype=float), "--")):
            s = np.where(np.isfinite(s), s, 0.0)
            cum = np.cumsum(s)
            best = np.fmax.accumulate(np.where(np.isfinite(a), a, -np.inf))
            keep = np.isfinite(best) & (cum > 0)
            if keep.any():
                ax.step(cum[keep], best[keep], where="post", linestyle=style, marker="o", markersize=3, label=label)
    ax.set_xscale("log")
    ax.set_xlabel("cumulative time of the tests (s, log scale)")
    ax.set_ylabel("best accuracy so far")
    ax.set_title(f"{result.dataset}: predicted vs realised (best accuracy so far)")
    ax.grid(True, alpha=0.3)
    if len(board):
        ax.legend(loc="lower right")
    return ax


def _axes(ax):
    """``ax``, or the axes of a new 6 x 4 inch figure (headless backend unless one is chosen)."""
    if ax is not None:
        return ax
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(6, 4))[1]
