"""Plot of a live recommendation run: best accuracy so far against cumulative time."""

from __future__ import annotations

import numpy as np

__all__ = ["plot_recommendation"]


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
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
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
