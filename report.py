"""One self-contained HTML report per run (``report.html`` in the output folder).

:func:`recommend_report`, :func:`benchmark_report` and :func:`compare_report` turn a result
into a :class:`Report` (facts, notes, sections of tables and plots); :func:`render` renders it
with the Jinja2 template ``templates/report.html.j2`` (package data).  The file needs nothing
else: the plots are inlined as base64 PNG, the styles are in the page, and there is no
script.  Every data string (learner ids, dataset names, messages) reaches the page through
Jinja2's autoescaping, so a learner id such as ``<script>`` is shown, never run.
"""

from __future__ import annotations

import base64
import datetime as _dt
import io
import math
import numbers
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from algorank.metadata.learners import short_name
from algorank.metadata.text import escape

__all__ = ["Report", "Section", "Table", "Details", "figure_image", "render", "write_report", "recommend_report",
           "benchmark_report", "compare_report", "REPORT_FILE"]

#: File name of the report in the output folder.
REPORT_FILE = "report.html"
#: Resolution of the inlined plots (dots per inch).
REPORT_DPI = 100
#: Bayesian posterior plots inlined in a compare report at most.
MAX_POSTERIOR_PLOTS = 6


@dataclass
class Table:
    """A table of a report: ``rows`` are lists of cells (numbers are right-aligned when rendered).

    ``fail_rows`` holds the indices of rows shown as failures.
    """

    header: Sequence[str]
    rows: list
    caption: str = ""
    fail_rows: frozenset = frozenset()
    key: str = ""  # the table's id in the page (letters, digits and dashes)


@dataclass
class Section:
    """A titled part of a report: paragraphs, then tables, then images (:func:`figure_image`)."""

    title: str
    text: list = field(default_factory=list)
    tables: list = field(default_factory=list)
    images: list = field(default_factory=list)
    key: str = ""  # the section's id in the page (letters, digits and dashes)
    lead: list = field(default_factory=list)  # paragraphs shown first, highlighted (the answer)
    steps: list = field(default_factory=list)  # a numbered list of sentences
    details: list = field(default_factory=list)  # folded-away parts: Details


@dataclass
class Details:
    """A folded-away part of a :class:`Section` (a ``<details>`` block): a summary line, paragraphs, tables."""

    summary: str
    text: list = field(default_factory=list)
    tables: list = field(default_factory=list)


@dataclass
class Report:
    """What :func:`render` turns into one HTML page."""

    title: str
    subtitle: str = ""
    facts: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    sections: list = field(default_factory=list)


# ---------------------------------------------------------------- rendering
def _version() -> str:
    try:
        from importlib.metadata import version

        return version("algorank")
    except Exception:  # not installed (a checkout on the path)
        return "unknown"


def _cell(value) -> dict:
    """A table cell: text (data strings escaped for control characters) and whether it is a number."""
    if isinstance(value, bool) or value is None:
        return {"text": "" if value is None else str(value), "num": False, "wrap": False}
    if isinstance(value, numbers.Integral):
        return {"text": f"{int(value):,}", "num": True, "wrap": False}
    if isinstance(value, numbers.Real):
        return {"text": _fmt_number(float(value)), "num": True, "wrap": False}
    text = escape(str(value))
    return {"text": text, "num": False, "wrap": len(text) > 30}


def _fmt_number(x: float) -> str:
    if x != x:
        return "n/a"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == int(x) and abs(x) < 1e6:
        return f"{int(x):,}"
    if x != 0 and (abs(x) < 1e-3 or abs(x) >= 1e6):
        return f"{x:.3g}"
    return f"{x:.4f}" if abs(x) < 10 else f"{x:,.1f}"


def _png_size(data: bytes) -> tuple[int, int]:
    """(width, height) of a PNG from its IHDR chunk."""
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


def figure_image(ax_or_fig, *, alt: str, caption: str = "", close: bool = True) -> dict:
    """A matplotlib figure (or an Axes of it) as an inlined PNG for a :class:`Section`."""
    fig = getattr(ax_or_fig, "figure", ax_or_fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=REPORT_DPI, bbox_inches="tight")
    if close:
        import matplotlib.pyplot as plt

        plt.close(fig)
    data = buf.getvalue()
    width, height = _png_size(data)
    return {"data": base64.b64encode(data).decode("ascii"), "alt": escape(alt), "caption": escape(caption),
            "width": width, "height": height}


def _environment():
    import jinja2

    loader = jinja2.FileSystemLoader(str(Path(__file__).resolve().parent / "templates"))
    return jinja2.Environment(loader=loader, autoescape=True, undefined=jinja2.StrictUndefined,
                              keep_trailing_newline=True)


def render(report: Report) -> str:
    """The HTML page of ``report`` (autoescaped: data strings are text, never markup)."""
    def table(t: Table) -> dict:
        return {"caption": escape(t.caption), "header": [escape(str(h)) for h in t.header], "key": _key(t.key),
                "rows": [{"cells": [_cell(c) for c in row], "fail": i in t.fail_rows} for i, row in enumerate(t.rows)]}

    sections = []
    for s in report.sections:
        sections.append({"title": escape(s.title), "text": [escape(p) for p in s.text],
                         "tables": [table(t) for t in s.tables], "images": list(s.images), "key": _key(s.key),
                         "lead": [escape(p) for p in s.lead], "steps": [escape(p) for p in s.steps],
                         "details": [{"summary": escape(d.summary), "text": [escape(p) for p in d.text],
                                      "tables": [table(t) for t in d.tables]} for d in s.details]})
    template = _environment().get_template("report.html.j2")
    return template.render(title=escape(report.title), subtitle=escape(report.subtitle),
                           facts=[(escape(str(k)), escape(str(v))) for k, v in report.facts],
                           notes=[escape(n) for n in report.notes], sections=sections, version=_version(),
                           created=_dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))


def _key(key: str) -> str:
    """An element id: letters, digits and dashes only (anything else is dropped)."""
    return "".join(c for c in str(key) if c.isascii() and (c.isalnum() or c == "-"))


def write_report(report: Report, folder) -> str:
    """Render ``report`` to ``folder/report.html`` (atomically); return the path."""
    from algorank.metadata.io import atomic_path

    target = Path(folder) / REPORT_FILE
    html = render(report)
    with atomic_path(target) as tmp:
        tmp.write_text(html, encoding="utf-8")
    return str(target)


def _agg():
    import matplotlib

    matplotlib.use("Agg", force=False)


def _seconds(s: float) -> str:
    if s != s:
        return "n/a"
    if s < 1:
        return f"{s * 1000:.3g} ms"
    if s < 120:
        return f"{s:.3g} s"
    return f"{s / 60:.3g} min"


# ---------------------------------------------------------------- recommend
_PHASES = (("import", "start-up and imports"), ("load", "loading the data and the meta-data"),
           ("landmark", "landmarkers"), ("plan", "fitting the strategy and planning"), ("tests", "live tests"),
           ("refit", "refit of the best learner"))  # the phases of algorank.recommender.live.timing.PHASES
_INFO_SKIP = {"dataset", "name", "source"}


def _columns_section(result) -> Section:
    """The task as detected, and what was done to each column as read (the columns simply kept are counted)."""
    changed = [c for c in result.columns if c["action"] != "kept"]
    kept = len(result.columns) - len(changed)
    text = [f"Task: {result.task_detection or result.task}."]
    text.append(f"{kept} column(s) kept as read" + (", and the columns below handled by the column rules or by "
                                                    "--keep-columns / --drop-columns." if changed else "."))
    rows = [[c["column"], c["action"], ", ".join(c["new_columns"]) if c["action"] == "date-expanded" else "",
             c["reason"]] for c in changed]
    tables = [Table(["column", "what was done", "new columns", "why"], rows, caption="columns")] if rows else []
    return Section("The columns", text=text, tables=tables)


def recommend_report(result) -> Report:
    """The report of a :class:`~algorank.recommender.live.recommend.Recommendation`, top-down for a person: the answer
    (the best model, its score, how to use it), the leaderboard, one sentence per decision (the policy's formula and
    numbers folded away below them), then the plan, the live tests in full, the dataset and where the time went."""
    from algorank.metadata.metric import METRICS, from_score
    from algorank.recommender.live.report import relative_shown
    from algorank.recommender.live.story import answer_lines, decision_sentences, formula_text, leaderboard_rows

    _agg()
    from algorank.recommender.live.plot import plot_predicted_vs_realised, plot_recommendation

    m = result.metric
    label = METRICS[m].label
    better = "higher" if METRICS[m].higher_is_better else "lower"
    notes = list(result.notes)
    if result.suggested_metric and notes:
        notes[0] += (f": try --metric {result.suggested_metric} (metric='{result.suggested_metric}' in Python)")
    if result.prior_matches:
        from algorank.recommender.live.overlap import describe_matches

        found = describe_matches(result.prior_match_details) if result.prior_match_details else \
            ", ".join(result.prior_matches)
        notes.append("this dataset is prior dataset(s) " + found + " of the meta-data, whose results inform the "
                     "ranking")
    if result.rank_only:
        notes.append(f"{len(result.rank_only)} learner(s) of the meta-data are rank-only (ranked, never run)")
    report = Report(title=f"algorank recommend: {result.dataset}", notes=notes)

    # 1. the answer
    ended = result.summary.rsplit("; stopped because ", 1)
    report.sections.append(Section("The answer", key="answer", lead=answer_lines(result),
                                   text=[f"The run stopped because {ended[1]}."] if len(ended) == 2 else []))

    # 2. the leaderboard
    if result.trace is not None:
        rows, fails = [], set()
        for i, r in enumerate(leaderboard_rows(result)):
            if r["rank"] is None:
                fails.add(i)
            rows.append(["" if r["rank"] is None else r["rank"], r["short"], r["score"], _seconds(r["seconds"]),
                         r["status"], r["tests"]])
        report.sections.append(Section(
            "Leaderboard", key="leaderboard",
            tables=[Table(["rank", "learner", label, "test time", "status", "tests"], rows, key="leaderboard-table",
                          caption=f"One row per learner tested, best first ({label}: {better} is better; "
                                  f"{result.cv}-fold cross-validation). Learners without a result follow.",
                          fail_rows=frozenset(fails))]))

        # 3. one sentence per decision, the formula folded away
        details = []
        if result.decisions:
            drows = [[i + 1, short_name(o.learner), d.get("score", math.nan), short_name(d["runner_up"])
                      if d.get("runner_up") else "", d.get("runner_up_score", math.nan),
                      from_score(m, d["expected"]) if isinstance(d.get("expected"), float) else math.nan,
                      _seconds(d.get("expected_seconds", math.nan)), d.get("text", "")]
                     for i, (o, d) in enumerate(zip(result.trace.observations, result.test_decisions()))]
            details.append(Details("The formula and the numbers", text=[formula_text(result)],
                                   tables=[Table(["#", "learner", "score", "runner-up", "its score",
                                                  f"expected {label}", "expected time", "the strategy's reason"],
                                                 drows, key="decision-numbers")]))
        report.sections.append(Section("Why each learner was tested when it was", key="decisions",
                                       steps=decision_sentences(result), details=details))

    # 4. the plan
    relative = result.relative_prior.get("gaps", {}) if result.relative_prior else {}
    reasons = {d["learner"]: d["text"] for d in result.plan_decisions}
    plan_rows = result.plan_rows()
    absolute = []
    for i, p in enumerate(plan_rows, 1):
        interval = ("" if p[f"{m}_low"] != p[f"{m}_low"] else f"[{p[f'{m}_low']:.4f}, {p[f'{m}_high']:.4f}]")
        absolute.append([i, short_name(p["learner"]), p[f"expected_{m}"], interval, _seconds(p["expected_seconds"]),
                         p["fail_probability"], reasons.get(p["learner"], "")])
    absolute_table = Table(["#", "learner", f"predicted {label}", "90 % interval", "predicted time", "p(fail)",
                            "why at this step"], absolute, key="plan-absolute")
    if relative_shown(m, relative):
        best = tuple(result.relative_prior.get("best", ()))
        said = ""
        if len(best) == 3 and best[0] == best[0]:
            said = (f" The best learner is expected to reach {label} {best[0]:.2f} (90 % interval "
                    f"[{best[1]:.2f}, {best[2]:.2f}]).")
        rows = []
        for i, p in enumerate(plan_rows, 1):
            g, lo, hi = p["expected_gap"], p["gap_low"], p["gap_high"]
            fail = p["fail_probability"]
            rows.append([i, short_name(p["learner"]), "n/a" if g != g else f"{100 * g:.1f}",
                         "" if lo != lo else f"[{100 * lo:.1f}, {100 * hi:.1f}]", _seconds(p["expected_seconds"]),
                         "n/a" if fail != fail else f"{fail:.2f}"])
        report.sections.append(Section(
            "The plan", key="plan",
            text=["The order the strategy follows when every learner scores what the meta-data expects. Before any "
                  f"test, how far each learner falls behind the best one on a dataset is known much better than how "
                  f"hard the dataset is, so the table gives each learner's expected {label} minus the best learner's, "
                  "in points (0: expected to be the best), with its 90 % interval, from the prior datasets weighted "
                  "by the strategy's own similarity." + said],
            tables=[Table(["#", "learner", "vs best (points)", "90 % interval", "predicted time", "p(fail)"], rows,
                          key="plan-table")],
            details=[Details("The strategy's own absolute predictions and why each learner comes at its step",
                             text=[f"The strategy's model of this dataset before any test: its predicted {label} with "
                                   "a 90 % interval, the predicted seconds of a live test, the probability that the "
                                   "test fails, and the score that put the learner at its step."],
                             tables=[absolute_table])]))
    else:
        report.sections.append(Section(
            "The plan", key="plan",
            text=[f"The order of the tests: {result.plan.source}." if getattr(result.plan, "source", None)
                  else f"The order the strategy follows when every learner scores what it predicts, with the "
                  f"predicted {label}, its 90 % interval, the predicted seconds of a live test, the probability that "
                  "the test fails, and why the learner was taken at that step (the policy's score then)."],
            tables=[absolute_table]))

    # 5. the live tests in full
    if result.trace is not None:
        board = result.leaderboard
        rows, fails = [], set()
        for i, r in enumerate(board.to_dict("records")):
            if r["status"] != "ok":
                fails.add(i)
            status = r["status"] + ("" if r.get("test", 1) == 1 else f" (test {r['test']})")
            reason = r["message"] if r["status"] != "ok" and r["message"] else (r.get("why") or "")
            if r.get("test", 1) > 1 and r["status"] != "ok" and r.get("why"):
                reason = f"{r['why']}. {reason}"
            rows.append([i + 1, short_name(r["learner"]), r[m], r[f"expected_{m}"], _seconds(r["seconds"]),
                         _seconds(r["expected_seconds"]), _seconds(r["cumulative_seconds"]), status, reason])
        images = []
        if len(board):
            images = [figure_image(plot_recommendation(result.trace, metric=m), alt="best score so far against time",
                                   caption=f"Best {label} so far against the cumulative time of the tests."),
                      figure_image(plot_predicted_vs_realised(result), alt="predicted against realised",
                                   caption=f"Predicted against realised: the best {label} so far as the models "
                                           "predicted it before the run, and as it happened (the loss-time curve "
                                           "is this curve mirrored).")]
        report.sections.append(Section(
            "The live tests", key="tests",
            text=[f"Every test in the order it ran: the measured {label} next to the one the strategy expected when it "
                  "chose the test (given the tests before it, for a strategy that conditions on them), the seconds "
                  "measured and expected, how the test ended (ok; screened: stopped after its first fold, which "
                  "scored below the bar set by the best so far; stopped at its limit: out of time; error), and why: "
                  "a failure's reason, a second test's reason, else why it was taken then."],
            tables=[Table(["#", "learner", label, "expected", "time", "expected time", "total", "status", "reason"],
                          rows, fail_rows=frozenset(fails), key="tests-table")],
            images=images))

    # 6. the dataset
    info = [(k, v) for k, v in result.dataset_info.items() if k not in _INFO_SKIP]
    similar = [[d["dataset"], d["similarity"], d.get("share", math.nan), d["n_instances"], d["n_features"],
                d["n_classes"], d["majority_fraction"]] for d in result.similar]
    report.sections.append(Section(
        "The dataset", key="dataset",
        text=["Simple meta-features, landmarkers, and the prior datasets of the meta-data that weigh most in what the "
              "strategy expects, with the strategy's own similarity (1 = the same meta-features) and each one's share "
              "of all the weights."],
        tables=[Table(["meta-feature", "value"], [[k, v if isinstance(v, (int, float)) else str(v)] for k, v in info],
                      caption="meta-features"),
                Table(["prior dataset", "similarity", "share", "rows", "features", "classes", "majority class"],
                      similar, caption="most similar prior datasets")]))
    report.sections.append(_columns_section(result))

    # 7. where the time went, and the run's settings
    timings = dict(result.timings)
    total = timings.get("total", sum(timings[key] for key, _ in _PHASES if key in timings and timings[key] == timings[key]))
    rows = [[name, _seconds(timings[key]),
             (timings[key] / result.budget_seconds) if result.budget_seconds else math.nan]
            if key != "refit" or result.model is not None or result.best is None else
            [f"{name}: not done (--save-model PATH, or refit=True in Python, refits and keeps it)", "-", math.nan]
            for key, name in _PHASES if key in timings]
    rows.append(["total", _seconds(total), (total / result.budget_seconds) if result.budget_seconds else math.nan])
    report.sections.append(Section(
        "Where the time went", key="time",
        text=["Wall-clock seconds of each phase, counted from the start of the command; the budget covers all but "
              "the refit."],
        tables=[Table(["phase", "seconds", "share of the budget"], rows)]))
    settings = [["source", result.source], ["strategy", result.strategy], ["metric", label],
                ["budget", "none" if result.budget_seconds is None else f"{result.budget_seconds:g} s"],
                ["test time model", result.time_model], ["stopped", result.stop_reason]]
    report.sections.append(Section("The run", key="run", tables=[Table(["setting", "value"], settings)]))
    return report


# ---------------------------------------------------------------- benchmark
def benchmark_report(suite) -> Report:
    """The report of a :class:`~algorank.evaluation.meta.benchmark.BenchmarkSuite`."""
    _agg()
    from algorank.evaluation.meta.plots import plot_loss_by_tests, plot_loss_time
    from algorank.metadata.task import points_word

    where = (f"leave-one-dataset-out on {len(suite.results[0].datasets)} datasets" if suite.n_train is None
             else suite.setting)
    facts = [("setting", where), ("time", suite.time_model)]
    if suite.axis == "time":
        facts.append(("MIL window", f"{suite.tmin:g} s to {suite.tmax:g} s"))
    report = Report(title="algorank benchmark", subtitle=f"{len(suite.results)} strategies; {where}", facts=facts)
    from algorank.evaluation.meta.summary_text import SPEARMAN_WORDS

    header = ["strategy", "mean MIL" if suite.axis == "time" else "mean loss", "median", "Spearman"]
    rows = [[r.strategy, r.mean_mil, r.median_mil, r.mean_spearman] for r in suite.results]
    points = points_word(getattr(suite, "task", "classification"))
    window = (f"MIL over {suite.tmin:g} s to {suite.tmax:g} s" if suite.axis == "time"
              else f"mean loss over tests 1 to {int(suite.tmax)}")
    tables = [Table(header, rows, caption=f"{window}, in {points} points (lower is better). {SPEARMAN_WORDS}")]
    if suite.metrics is not None:  # the user-facing metrics lead
        summary = suite.metrics.summary_table()
        tables.insert(0, Table(list(summary.columns), summary.values.tolist(),
                               caption=f"user-facing metrics per strategy and the oracle bound; lower is better in "
                                       f"every column: time_to_eps = seconds of tests until a learner within "
                                       f"{suite.metrics.eps:g} {points} point(s) of the dataset's best is found "
                                       "(sum and median over the datasets), eps_not_reached = datasets where it "
                                       f"never is, loss@B = {points} points below the best after B seconds, "
                                       "mil_to_B and mil = mean loss over log-time to B seconds and over the "
                                       "benchmark's window (means over the datasets)"))
    images = []
    if suite.axis == "time":
        images.append(figure_image(plot_loss_time(suite.results, points=points), alt="loss-time curves",
                                   caption="Mean loss against test time, per strategy."))
    images.append(figure_image(plot_loss_by_tests(suite.results, points=points), alt="loss by number of tests",
                               caption="Mean loss against the number of tests."))
    report.sections.append(Section("Strategies", tables=tables, images=images))
    c = suite.comparison
    if c is not None:
        rows = [[e["a"], e["b"], e.get("mean_difference", math.nan), e.get("ci_low", math.nan),
                 e.get("ci_high", math.nan), e.get("rank_biserial", math.nan), e.get("cliffs_delta", math.nan),
                 e.get("magnitude", "")] for e in c.effects]
        text = [f"{c.test.method}: statistic {c.test.statistic:.3f}, p = {c.test.pvalue:.3g}."]
        images = []
        if c.posthoc is not None:
            from algorank.evaluation.stats.cd_plot import plot_cd

            images.append(figure_image(plot_cd(c.posthoc), alt="critical-difference diagram of the strategies",
                                       caption="Critical-difference diagram: strategies joined by a bar are not "
                                               "significantly different."))
        report.sections.append(Section(
            "Are the differences significant?", text=text,
            tables=[Table(["a", "b", "mean a - b", "low", "high", "rank-biserial r", "Cliff's delta", "magnitude"],
                          rows, caption="effect sizes over datasets (loss: negative favours a)")],
            images=images))
    return report


# ---------------------------------------------------------------- compare
def compare_report(res, *, rope: float | None = None) -> Report:
    """The report of a :class:`~algorank.evaluation.stats.compare.LearnerComparison`."""
    _agg()
    fr = res.omnibus
    facts = [("learners", str(len(res.labels))), ("datasets", f"{fr.n_datasets} ({res.dropped_datasets} left out)"),
             ("metric", res.metric_words()),
             ("omnibus", f"{res.omnibus_method}: chi2 = {fr.statistic:.2f}, p = {fr.pvalue:.3g}"),
             ("alpha", f"{res.alpha:g}")]
    report = Report(title="algorank compare", subtitle=f"{len(res.labels)} learners on {fr.n_datasets} datasets",
                    facts=facts, notes=list(res.notes))
    ranks = res.average_ranks
    order = sorted(res.labels, key=lambda l: (ranks[l], l))
    images = []
    if res.posthoc is not None:
        from algorank.evaluation.stats.cd_plot import plot_cd

        images.append(figure_image(plot_cd(res.posthoc, label_formatter=short_name),
                                   alt="critical-difference diagram",
                                   caption="Critical-difference diagram: learners joined by a bar are not "
                                           "significantly different."))
    tables = [Table(["learner", "average rank"], [[short_name(l), ranks[l]] for l in order])]
    if res.posthoc is not None:
        pairs = res.posthoc.significant_pairs()
        tables.append(Table(["better", "worse"], [[short_name(a), short_name(b)] for a, b in pairs],
                            caption=f"significant pairs ({res.posthoc.method})"))
    report.sections.append(Section("Ranks", tables=tables, images=images))
    rows = []
    for p in res.pairs:
        bz = p.get("bayes", {})
        rows.append([short_name(p["a"]), short_name(p["b"]), p.get("n", 0), p.get("mean_difference", math.nan),
                     p.get("ci_low", math.nan), p.get("ci_high", math.nan), p.get("wilcoxon_pvalue", math.nan),
                     p.get("rank_biserial", math.nan), p.get("cliffs_delta", math.nan), p.get("magnitude", ""),
                     bz.get("p_left", math.nan), bz.get("p_rope", math.nan), bz.get("p_right", math.nan)])
    report.sections.append(Section(
        "Pairwise effects",
        text=["Per pair over the datasets where both have a value: mean difference a - b with its interval, "
              "Wilcoxon p, rank-biserial r, Cliff's delta, and the Bayesian signed-rank probabilities that a is "
              "better, that they are practically equivalent (ROPE), and that b is better."],
        tables=[Table(["a", "b", "datasets", "mean a - b", "low", "high", "Wilcoxon p", "r", "delta", "magnitude",
                       "P(a)", "P(rope)", "P(b)"], rows)]))
    if res.bayes_results:
        from algorank.evaluation.stats import plot_posterior

        images = []
        for (a, b), bres in list(res.bayes_results.items())[:MAX_POSTERIOR_PLOTS]:
            images.append(figure_image(plot_posterior(bres, names=(short_name(a), short_name(b))),
                                       alt=f"posterior {short_name(a)} against {short_name(b)}",
                                       caption=f"Bayesian signed-rank posterior: {short_name(a)} against "
                                               f"{short_name(b)}."))
        more = len(res.bayes_results) - len(images)
        report.sections.append(Section(
            "Bayesian posteriors",
            text=[f"The first {len(images)} pairs" + (f" ({more} more in --json)" if more > 0 else "") + "."],
            images=images))
    return report
