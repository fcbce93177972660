"""The text of ``benchmark`` and ``tune-p`` for people: the user-facing metrics first, one compact comparison with
the reference, what every column means and which direction is better; the detail only when asked (``verbose``).

The default view fits one screen (about 60 lines) for the usual number of strategies: one table row per
strategy, one comparison row per strategy, a footer of definitions.  ``verbose=True`` adds the detail the
default leaves out: the MIL table with the median MIL and the Spearman correlation, the significance tests
over datasets with effect sizes, and every metric of the comparison with its sign test and the gap closed.
"""

from __future__ import annotations

import textwrap

from algorank.evaluation.meta.user_metrics import budget_label, seconds_text
from algorank.metadata.text import escape, format_table

__all__ = ["WIDTH", "wrap", "window_words", "metrics_table", "comparison_table", "metrics_footer",
           "SPEARMAN_WORDS", "GAP_WORDS"]

#: Width the footers are wrapped to.
WIDTH = 110

#: What the Spearman column means (shown with it).
SPEARMAN_WORDS = ("Spearman: rank correlation between the order a strategy tested the learners in and their order "
                  "by accuracy on the dataset (1: the most accurate first). Cost-aware strategies test cheap "
                  "learners first and score lower by design: it describes an order, it does not grade it.")
#: What the gap column means (shown with it).
GAP_WORDS = ("gap: (reference - strategy) / (reference - oracle bound) of the totals: 1 = as good as the oracle "
             "bound, 0 = as good as the reference, below 0 = worse than the reference, in units of the "
             "reference's distance to the bound (gap -27.76: the strategy is 27.76 times that distance further "
             "from the bound than the reference is; large values come from a reference already close to the "
             "bound).")


def wrap(text: str, *, indent: str = "  ") -> list[str]:
    """``text`` wrapped to :data:`WIDTH` columns, continuation lines indented."""
    return textwrap.wrap(text, width=WIDTH, subsequent_indent=indent, break_on_hyphens=False) or [""]


def window_words(tmin: float, tmax: float) -> str:
    """The MIL window as a column title: ``MIL 0.001-1 s``."""
    return f"MIL {tmin:g}-{tmax:g} s"


def metrics_table(report, *, mil_title: str, labels: dict | None = None) -> str:
    """One row per strategy and the oracle bound: time to near-best (total, median, not reached), the loss at
    every budget, and the MIL of the benchmark's window (column ``mil_title``); ``labels`` renames rows."""
    labels = labels or {}
    bl = [budget_label(b) for b in report.budgets]
    header = ["strategy", "to near-best: total", "median", "not reached", *(f"loss@{b}" for b in bl), mil_title]
    rows = []
    for m in (*report.metrics, report.oracle):
        t = m.totals()
        rows.append([labels.get(m.strategy, m.strategy), seconds_text(t["time_to_eps_sum"]),
                     seconds_text(t["time_to_eps_median"]), t["eps_not_reached"],
                     *(f"{t[f'loss@{b}_mean']:.3f}" for b in bl), f"{t['mil_mean']:.3f}"])
    return format_table(header, rows)


def comparison_table(report, *, mil_title: str, labels: dict | None = None) -> str | None:
    """One row per strategy other than the reference: wins / ties / losses and the Wilcoxon p of time to
    near-best, of the loss at the last budget and of the MIL (None when there is nothing to compare)."""
    labels = labels or {}
    last = f"loss@{budget_label(report.budgets[-1])}"
    keys = (("time_to_eps", "to near-best"), (last, last), ("mil", mil_title))
    by = {}
    for c in report.comparisons:
        by.setdefault(c.strategy, {})[c.metric] = c
    if not by:
        return None
    header = ["strategy"]
    for _, title in keys:
        header += [f"{title} W/T/L", "p"]
    rows = []
    for strategy, cs in by.items():
        row = [labels.get(strategy, strategy)]
        for key, _ in keys:
            c = cs.get(key)
            row += ["n/a", ""] if c is None else [f"{c.wins}/{c.ties}/{c.losses}", f"{c.wilcoxon.pvalue:.2g}"]
        rows.append(row)
    return format_table(header, rows, align="l" + "r" * (len(header) - 1))


def metrics_footer(report, *, window: str, verbose: bool) -> list[str]:
    """The definitions under the two tables (``window``: the MIL window in words)."""
    from algorank.metadata.task import points_word

    points = points_word(getattr(report, "task", "classification"))
    eps = f"{report.eps:g} {points} point" + ("" if report.eps == 1 else "s")
    compared = bool(report.comparisons)
    text = [
        "Lower is better in every column of the first table." + (
            " In the comparison, W/T/L counts datasets: more W (wins over the reference) is better." if compared
            else ""),
        f"to near-best: seconds of tests until a learner within {eps} of the dataset's best learner is found "
        "(total over the datasets, and the median); not reached: datasets where it never is (counted with all "
        "their test time).",
        f"loss@B: {points} points below the dataset's best learner after B seconds of tests (mean over the datasets).",
        f"MIL: mean loss over log-time in the window {window} (the area under the loss-time curve; the benchmark's "
        "original score). oracle bound: the best any order can do, knowing every result in advance.",
    ]
    if compared:
        text.append(f"W/T/L: datasets where the strategy does better / the same / worse than the reference "
                    f"{escape(report.reference)}; p: Wilcoxon signed-rank test over the datasets (small: unlikely "
                    "to be chance).")
    if not verbose:
        text.append("The verbose view (--verbose; verbose=True in Python) adds the median MIL, Spearman, the MIL to "
                    "the last budget, the tests over datasets with effect sizes, and every comparison with its sign "
                    "test and gap.")
    lines = []
    for t in text:
        lines += wrap(t)
    return lines
