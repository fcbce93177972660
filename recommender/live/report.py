"""Text of a recommendation: the planned order, one progress line per test, the results table.

:meth:`Recommendation.to_text <algorank.recommender.live.recommend.Recommendation.to_text>` and the
command line's progress (:class:`Progress`) render with these; tables go through
:func:`algorank.metadata.text.format_table`, so long learner names never run into the numbers.
Values are the metric's own (:func:`algorank.metadata.metric.from_score`: for log loss lower is
better, and a 90 % interval of scores becomes ``[low, high]`` of log losses).
"""

from __future__ import annotations

from typing import Sequence

from algorank.metadata.learners import short_name
from algorank.metadata.metric import METRICS, from_score
from algorank.metadata.metric import metric_label as _label
from algorank.metadata.text import escape, format_seconds, format_table, terminal_text
from algorank.recommender.live.outcome import outcome, retest_reason

__all__ = ["plan_text", "start_line", "observation_line", "progress_width", "results_text", "metric_label",
           "Progress"]


def metric_label(metric: str) -> str:
    """Short column title of ``metric`` (``bal. acc.`` for balanced accuracy)."""
    return _label(metric, short=True)


def _acc(a: float) -> str:
    return "n/a" if a != a else f"{a:.4f}"


def _value(metric: str, score: float) -> str:
    """A score as the metric's own value, formatted."""
    return _acc(from_score(metric, score))


def _points(gap: float) -> str:
    """A gap to the best learner (a score difference, at most 0) in points."""
    if gap != gap:
        return "n/a"
    value = 100.0 * gap
    return "0.0" if abs(value) < 0.05 else f"{value:.1f}"


def relative_shown(metric: str, relative) -> bool:
    """Whether the plan shows gaps to the best learner in points (a metric whose score is its value)."""
    return bool(relative) and metric in METRICS and METRICS[metric].higher_is_better


def plan_text(plan: Sequence, *, metric: str = "accuracy", relative=None, best=None) -> str:
    """The planned order: expected value and test time of each learner (and the interval, p(fail) when modelled).

    With ``relative`` (learner -> (gap, low, high): the expected score minus the best learner's,
    :mod:`~algorank.recommender.live.prior`) and a metric whose score is its value, the table shows that gap in
    points with its 90 % interval instead of absolute values, and ``best`` (score, low, high) is said once above it:
    how far apart the learners are can be told from prior datasets much better than how hard this dataset is.
    """
    if relative_shown(metric, relative):
        rel = dict(relative)
        header = ["#", "learner", "vs best (points)", "90% interval", "exp. time", "p(fail)"]
        rows = []
        for i, t in enumerate(plan, 1):
            g = rel.get(t.learner, (float("nan"),) * 3)
            rows.append([i, short_name(t.learner), _points(g[0]),
                         "" if g[1] != g[1] else f"[{_points(g[1])}, {_points(g[2])}]",
                         format_seconds(t.expected_seconds),
                         "" if t.fail_probability != t.fail_probability else f"{t.fail_probability:.2f}"])
        head = (f"planned order ({len(plan)} learners; before any test, from the most similar prior datasets: "
                f"each learner's expected {_label(metric)} minus the best learner's, in points, and its test time)")
        b = tuple(best) if best is not None else ()
        if len(b) == 3 and b[0] == b[0]:
            head += (f"\nthe best learner is expected to reach {_label(metric)} {b[0]:.2f} "
                     f"(90% interval [{b[1]:.2f}, {b[2]:.2f}])")
        return head + "\n" + format_table(header, rows, align="rlrrrr")
    modelled = any(t.accuracy_low == t.accuracy_low for t in plan)
    if getattr(plan, "source", None):  # no meta-data: an order, nothing expected
        return (f"planned order ({len(plan)} learners): {plan.source}\n"
                + format_table(["#", "learner"], [[i, short_name(t.learner)] for i, t in enumerate(plan, 1)],
                               align="rl"))
    source = ("the strategy's models for this dataset, before any test: each result updates them" if modelled
              else "the most similar prior datasets")
    lower_better = metric in METRICS and not METRICS[metric].higher_is_better
    header = ["#", "learner", "exp. " + metric_label(metric), "exp. time"]
    rows = []
    for i, t in enumerate(plan, 1):
        row = [i, short_name(t.learner), _value(metric, t.expected_accuracy), format_seconds(t.expected_seconds)]
        if modelled:
            low, high = _value(metric, t.accuracy_low), _value(metric, t.accuracy_high)
            row += [f"[{high}, {low}]" if lower_better else f"[{low}, {high}]", f"{t.fail_probability:.2f}"]
        rows.append(row)
    if modelled:
        header += ["90% interval", "p(fail)"]
    return (f"planned order ({len(plan)} learners; expected {_label(metric)} and test time "
            f"from {source})\n" + format_table(header, rows, align="rl" + "r" * (len(header) - 2)))


def progress_width(plan: Sequence) -> int:
    """Width of the learner column of the progress lines: the longest planned name, at least 20."""
    return max([20] + [len(escape(short_name(t.learner))) for t in plan])


def start_line(learner: str, *, earlier=()) -> str:
    """The progress line before a test; for a learner tested before (``earlier``: its earlier observations), why it
    is tested again."""
    why = retest_reason(list(earlier))
    if why is None:
        return f"testing {escape(short_name(learner))} ..."
    return f"testing {escape(short_name(learner))} again ({why}) ..."


def observation_line(o, *, total: float, width: int = 20, metric: str = "accuracy") -> str:
    """One progress line of a finished test: learner, value or status, seconds, running total."""
    res = _value(metric, o.accuracy) if o.status == "ok" else f"{outcome(o)}: {escape(o.message)}"
    return f"  {escape(short_name(o.learner)):<{width}}  {res:>10}  {format_seconds(o.seconds):>9}  " \
           f"(total {format_seconds(total)})"


def results_text(rec) -> str:
    """The results table of a :class:`~algorank.recommender.live.recommend.Recommendation`, its summary and notes."""
    if rec.trace is None:
        return rec.summary
    m = rec.metric
    # "expected": what the strategy expected of the test when it chose it (ei and eiu: given the tests before it)
    if getattr(rec, "task", "classification") == "regression":
        return _regression_results_text(rec)
    records = rec.leaderboard.to_dict("records")
    rows = [(i, r["short"], _acc(r[m]), _acc(r[f"expected_{m}"]), format_seconds(r["seconds"]),
             format_seconds(r["expected_seconds"]), format_seconds(r["cumulative_seconds"]),
             outcome(r) + (" (2nd test)" if r.get("test", 1) == 2 else f" (test {r['test']})" if r.get("test", 1) > 2
                           else ""))
            for i, r in enumerate(records, 1)]
    table = format_table(["#", "learner", metric_label(m), "expected", "time", "expected", "total", "status"], rows,
                         align="rlrrrrrl")
    lines = [f"results on {escape(rec.dataset)} ({rec.cv}-fold stratified CV, strategy {escape(rec.strategy)}, "
             f"test time model {rec.time_model}, metric {_label(m)}: "
             f"{'higher' if METRICS[m].higher_is_better else 'lower'} is better)", table]
    again = [f"  #{i} {escape(r['short'])}: {escape(r['why'])}" for i, r in enumerate(records, 1)
             if r.get("test", 1) > 1 and r.get("why")]
    if again:
        lines += ["tested again:"] + again
    lines += ["", escape(rec.summary)]
    lines += [f"warning: {escape(n)}" for n in rec.notes]
    if rec.best is None:
        lines.append("nothing was tested successfully: no learner is recommended")
    return "\n".join(lines)


def _regression_results_text(rec) -> str:
    """The results table of a regression: R² (higher is better), RMSE and MAE (lower is better) of each test."""
    def num(v) -> str:
        return "n/a" if v != v else f"{v:.4g}"

    rows = [(i, r["short"], _acc(r["r2"]), num(r["rmse"]), num(r["mae"]), format_seconds(r["seconds"]),
             format_seconds(r["cumulative_seconds"]), r["status"])
            for i, r in enumerate(rec.leaderboard.to_dict("records"), 1)]
    table = format_table(["#", "learner", "R² (higher better)", "RMSE (lower better)", "MAE (lower better)", "time",
                          "total", "status"], rows, align="rlrrrrrl")
    lines = [f"results on {escape(rec.dataset)} ({rec.cv}-fold shuffled CV, strategy {escape(rec.strategy)}, "
             f"best by {_label(rec.metric)})", table, "", escape(rec.summary)]
    lines += [f"note: {escape(n)}" for n in rec.notes]
    if rec.best is None:
        lines.append("nothing was tested successfully: no learner is recommended")
    return "\n".join(lines)


class Progress:
    """Progress of a live run for a terminal: the planned order, then a line before and after each test.

    Its methods are :func:`~algorank.recommender.live.recommend.recommend`'s ``on_plan``,
    ``on_start`` and ``on_observation`` hooks; every line goes through
    :func:`~algorank.metadata.text.terminal_text`.

    Parameters
    ----------
    plan_stream : file, optional
        Where the planned order goes (None: not shown).
    test_stream : file, optional
        Where the lines of the tests go (None: not shown).
    gap : bool
        An empty line after the planned order (before the tests' results).
    """

    def __init__(self, *, plan_stream=None, test_stream=None, gap: bool = True) -> None:
        self.plan_stream, self.test_stream, self.gap = plan_stream, test_stream, gap
        self.width, self.total, self.metric = 20, 0.0, "accuracy"
        self.seen: dict = {}  # learner -> its observations so far (why a learner is tested again)

    def _write(self, stream, text: str) -> None:
        if stream is not None:
            stream.write(terminal_text(text) + "\n")
            stream.flush()

    def on_plan(self, plan) -> None:
        self.width, self.metric = progress_width(plan), getattr(plan, "metric", "accuracy")
        task = getattr(plan, "task_detection", "")  # how the target was read: the first line of the output
        self._write(self.plan_stream, (f"task: {escape(task)}\n" if task else "")
                    + plan_text(plan, metric=self.metric, relative=getattr(plan, "relative", None),
                                best=getattr(plan, "best", None)) + ("\n" if self.gap else ""))

    def on_start(self, learner: str) -> None:
        self._write(self.test_stream, start_line(learner, earlier=self.seen.get(learner, ())))

    def on_observation(self, o) -> None:
        self.seen.setdefault(o.learner, []).append(o)
        self.total += o.seconds
        self._write(self.test_stream, observation_line(o, total=self.total, width=self.width, metric=self.metric))
