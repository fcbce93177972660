"""Text of a recommendation: the planned order, one progress line per test, the results table.

:meth:`Recommendation.to_text <algorank.recommender.live.recommend.Recommendation.to_text>` and the
command line's progress hooks render with these; tables go through
:func:`algorank.metadata.text.format_table`, so long learner names never run into the numbers.
"""

from __future__ import annotations

from typing import Sequence

from algorank.metadata.learners import short_name
from algorank.metadata.metric import METRIC_LABELS
from algorank.metadata.text import escape, format_seconds, format_table

__all__ = ["plan_text", "start_line", "observation_line", "progress_width", "results_text", "metric_label"]


def metric_label(metric: str) -> str:
    """Short column title of ``metric`` (``bal. acc.`` for balanced accuracy)."""
    return "bal. acc." if metric == "balanced_accuracy" else METRIC_LABELS.get(metric, metric)


def _acc(a: float) -> str:
    return "n/a" if a != a else f"{a:.4f}"


def plan_text(plan: Sequence, *, metric: str = "accuracy") -> str:
    """The planned order: expected score and test time of each learner (and the interval, p(fail) when modelled)."""
    modelled = any(t.accuracy_low == t.accuracy_low for t in plan)
    source = "the strategy's models for this dataset" if modelled else "the most similar prior datasets"
    header = ["#", "learner", "exp. " + metric_label(metric), "exp. time"]
    rows = []
    for i, t in enumerate(plan, 1):
        row = [i, short_name(t.learner), _acc(t.expected_accuracy), format_seconds(t.expected_seconds)]
        if modelled:
            row += [f"[{_acc(t.accuracy_low)}, {_acc(t.accuracy_high)}]", f"{t.fail_probability:.2f}"]
        rows.append(row)
    if modelled:
        header += ["90% interval", "p(fail)"]
    return (f"planned order ({len(plan)} learners; expected {METRIC_LABELS.get(metric, metric)} and test time "
            f"from {source})\n" + format_table(header, rows, align="rl" + "r" * (len(header) - 2)))


def progress_width(plan: Sequence) -> int:
    """Width of the learner column of the progress lines: the longest planned name, at least 20."""
    return max([20] + [len(escape(short_name(t.learner))) for t in plan])


def start_line(learner: str) -> str:
    """The progress line before a test."""
    return f"testing {escape(short_name(learner))} ..."


def observation_line(o, *, total: float, width: int = 20) -> str:
    """One progress line of a finished test: learner, score or status, seconds, running total."""
    res = _acc(o.accuracy) if o.status == "ok" else f"{o.status}: {escape(o.message)}"
    return f"  {escape(short_name(o.learner)):<{width}}  {res:>10}  {format_seconds(o.seconds):>9}  " \
           f"(total {format_seconds(total)})"


def results_text(rec) -> str:
    """The results table of a :class:`~algorank.recommender.live.recommend.Recommendation` and its summary."""
    if rec.trace is None:
        return rec.summary
    label = metric_label(rec.metric)
    rows = [(i, r["short"], _acc(r["accuracy"]), _acc(r["predicted_accuracy"]), format_seconds(r["seconds"]),
             format_seconds(r["predicted_seconds"]), format_seconds(r["cumulative_seconds"]), r["status"])
            for i, r in enumerate(rec.leaderboard.to_dict("records"), 1)]
    table = format_table(["#", "learner", label, "predicted", "time", "predicted", "total", "status"], rows,
                         align="rlrrrrrl")
    return (f"results on {escape(rec.dataset)} ({rec.cv}-fold stratified CV, strategy {escape(rec.strategy)}, "
            f"test time model {rec.time_model})\n{table}\n\n{escape(rec.summary)}")
