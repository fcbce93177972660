"""Plots of benchmark results (matplotlib, Agg; nothing is computed here, nothing is shown).

* :func:`plot_loss_time` - mean loss-time curves of several strategies on one log-x axis.
* :func:`plot_mil_boxplots` - per-dataset MIL for each P of a sweep (the paper's Fig. 4).
* :func:`plot_loss_by_tests` - mean loss against the number of tests.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from algorank.metadata.text import literal_text
from algorank.recommender.kernel.labels import format_p, log_time_axis

__all__ = ["plot_loss_time", "plot_mil_boxplots", "plot_loss_by_tests", "log_time_axis"]


def _axes(ax):
    if ax is None:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(7, 4.5))
    return ax


def plot_loss_time(results: Sequence, *, ax=None, points: str = "accuracy"):
    """Mean loss-time curves (exact step functions) of several benchmark results.

    Parameters
    ----------
    results : sequence of BenchmarkResult
        Each must carry ``tmin``/``tmax`` (the window is shaded by its bounds).
    ax : Axes, optional
        Drawn into a new figure when omitted.  The steps are drawn exactly.
    points : str
        Unit of the loss in the axis label: ``"accuracy"`` points, or ``"R²"`` for regression.

    Returns
    -------
    Axes
    """
    ax = _axes(ax)
    lo = min(r.tmin for r in results)
    hi = max(r.tmax for r in results)
    for r in results:
        mean = r.mean_curve()
        inside = (mean.times > lo) & (mean.times < hi)
        xs = np.concatenate([[lo], mean.times[inside], [hi]])
        ys = mean.loss_at(xs)
        ax.step(xs, ys, where="post", label=f"{r.strategy} (MIL {r.mean_mil:.2f})")
    ax.set_xscale("log")
    ax.set_xlim(lo, hi)
    log_time_axis(ax)
    ax.set_ylabel(f"mean loss ({points} points)")
    ax.set_title(f"Mean loss-time curves, window [{lo:g} s, {hi:g} s]")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    literal_text(ax)  # strategy names from the user: a `$` is a dollar sign
    return ax


def plot_mil_boxplots(sweep, *, ax=None, points: str = "accuracy"):
    """Boxplots of per-dataset MIL for each P of a :class:`~algorank.evaluation.meta.benchmark.PSweepResult`."""
    ax = _axes(ax)
    data = [r.mil for r in sweep.results]
    ax.boxplot(data, showmeans=True)
    ax.set_xticks(range(1, len(data) + 1))
    ax.set_xticklabels([format_p(p) for p in sweep.grid])
    ax.set_xlabel("P")
    ax.set_ylabel(f"MIL per dataset ({points} points)")
    ax.set_title(f"AR-A3R: MIL per dataset, window [{sweep.tmin:g} s, {sweep.tmax:g} s]")
    ax.grid(True, axis="y", alpha=0.3)
    literal_text(ax)  # strategy names from the user: a `$` is a dollar sign
    return ax


def plot_loss_by_tests(results: Sequence, *, ax=None, points: str = "accuracy"):
    """Mean loss after 0, 1, 2, ... tests for several benchmark results."""
    ax = _axes(ax)
    for r in results:
        curve = r.mean_loss_by_tests()
        ax.plot(np.arange(curve.size), curve, marker="o", markersize=3, label=r.strategy)
    ax.set_xlabel("number of tests")
    ax.set_ylabel(f"mean loss ({points} points)")
    ax.set_title("Mean loss by number of tests")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    literal_text(ax)  # strategy names from the user: a `$` is a dollar sign
    return ax
