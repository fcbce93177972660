"""The plots' tick labels never overlap and their legends hide no data, over time spans from a fraction of
a decade to six decades (checked on the drawn figures, at the sizes the commands produce; matplotlib's
default log labels collide on 0.2 .. 1.9 s, a typical short run)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from algorank.recommender.kernel.trace import Observation, Trace


def _trace(lo: float, hi: float, n: int = 12) -> Trace:
    seconds = np.diff(np.geomspace(lo, hi, n + 1), prepend=0.0)[1:]
    seconds[0] = lo
    acc = np.linspace(0.6, 0.95, n)
    return Trace("d", tuple(Observation(f"l{i}", float(a), float(s)) for i, (a, s) in enumerate(zip(acc, seconds))))


def _visible_labels(ax, renderer):
    lo, hi = sorted(ax.get_xlim())
    out = []
    for tick in ax.xaxis.get_major_ticks() + ax.xaxis.get_minor_ticks():
        label = tick.label1
        if label.get_visible() and label.get_text() and lo <= tick.get_loc() <= hi:
            out.append(label.get_window_extent(renderer))
    return out


def _check(ax):
    fig = ax.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = _visible_labels(ax, renderer)
    assert len(boxes) >= 2  # the axis is labelled at all
    for a, b in itertools.combinations(boxes, 2):
        assert not a.overlaps(b), (a, b)
    legend = ax.get_legend()
    if legend is not None:
        assert not legend.get_window_extent(renderer).overlaps(ax.get_window_extent(renderer))
    import matplotlib.pyplot as plt

    plt.close(fig)


@pytest.mark.parametrize("span", [(0.2, 1.9), (0.01, 0.05), (2.6, 20.0), (0.1, 30.0), (0.01, 5000.0), (0.001, 1000.0)])
def test_recommend_plots(span):
    from algorank.recommender.live.plot import plot_recommendation

    _check(plot_recommendation(_trace(*span)))
    _check(plot_recommendation(_trace(*span), metric="log_loss"))


def test_predicted_vs_realised_and_loss_time():
    from algorank.api import benchmark, recommend
    from algorank.evaluation.meta.plots import plot_loss_time
    from algorank.recommender.live.plot import plot_predicted_vs_realised

    r = recommend("sklearn:iris", budget=30, top=4, cv=3, refit=False, exclude_datasets=["iris"])
    _check(plot_predicted_vs_realised(r))
    suite = benchmark(["ar:p=0", "ar:p=1/16"], "uci")
    _check(plot_loss_time(suite.results))
