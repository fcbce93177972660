"""Result objects of the commands, their text and their files.

Every :mod:`algorank.api` function returns a result object with ``to_dict()`` (what the command
prints as JSON) and a text form (what the command prints): ``result.to_text()``, or :func:`to_text` for any
result.  The result classes defined here are the API's own (:class:`TuneResult`,
:class:`RankResult`, :class:`ExportResult`, :class:`DatasetSelection`, :class:`RecordResult`);
the text of the evaluation, benchmark and build results is rendered here too.  Tables go through
:func:`algorank.metadata.text.format_table`, so columns never run together.

:func:`output_files` names the files a result writes into an output folder; :func:`write_files` writes
them (plots with matplotlib's Agg backend, and ``report.html``, :mod:`algorank.report`), each
atomically.  :func:`saved_files` names what the API call itself wrote elsewhere (``recommend``'s
saved model).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

from algorank.metadata.learners import short_name
from algorank.metadata.task import points_word
from algorank.metadata.text import escape, format_seconds, format_table, safe_filename
from algorank.report import REPORT_FILE

__all__ = ["TuneResult", "RankResult", "ExportResult", "DatasetSelection", "RecordResult", "to_text",
           "output_files", "write_files", "saved_files"]


# ---------------------------------------------------------------- the API's own results
@dataclass(frozen=True)
class TuneResult:
    """What :func:`algorank.api.tune_p` returns: the P sweep, optionally the nested estimate, and the user-facing metrics.

    Attributes
    ----------
    sweep : PSweepResult
        Leave-one-dataset-out MIL of each P (chosen on all datasets: in-sample).
    nested : NestedTuneResult or None
        Honest estimate with P tuned without the scored dataset.
    time_model : str
        The test-time model in words.
    metrics : MetricsReport or None
        Time to eps, loss at budgets and MIL to budgets of every P (and of the nested
        estimate), against the reference P, with the oracle bounds.
    excluded : tuple of str
        Datasets left out of all tuning (the frozen held-out split, ``exclude_datasets``).
    strategy : str
        The family whose P was swept (``ar``, ``at``, ``lt``, ``ei``).
    per_dataset : bool
        Whether :meth:`to_dict` holds the user-facing metrics of every dataset (large on big meta-data).

    Examples
    --------
    >>> import algorank
    >>> t = algorank.tune_p("uci")
    >>> t.best_p
    0.25
    """

    sweep: object
    nested: object = None
    time_model: str = "recorded fit times"
    extra: dict = field(default_factory=dict, repr=False)
    metrics: object = None
    excluded: tuple = ()
    strategy: str = "ar"
    spec: str = "ar"
    per_dataset: bool = False

    @property
    def best_p(self) -> float:
        """The P with the smallest mean MIL of the sweep (chosen on all its datasets)."""
        return self.sweep.best_p

    def to_frame(self):
        """One row per P: p, mean_mil, median_mil, mean_spearman (and the user-facing metric totals)."""
        table = self.sweep.table()
        if self.metrics is not None:
            totals = self.metrics.summary_table().drop(columns=["strategy"]).iloc[: len(table)]
            table = table.join(totals.drop(columns=["mil_mean"]).reset_index(drop=True))
        return table

    def to_dict(self, *, per_dataset: bool | None = None) -> dict:
        """Settings, the MIL of each P, the best P, the nested estimate and the user-facing metrics; their
        values per dataset only with ``per_dataset`` (default: the result's ``per_dataset`` attribute)."""
        from algorank.recommender.kernel.labels import format_p

        per_dataset = self.per_dataset if per_dataset is None else bool(per_dataset)
        sweep = self.sweep
        d = {"tmin": sweep.tmin, "tmax": sweep.tmax, "n_datasets": len(sweep.results[0].datasets),
             "results": [{"p": float(r.p), "p_label": format_p(r.p), "mean_mil": float(r.mean_mil),
                          "median_mil": float(r.median_mil), "mean_spearman": float(r.mean_spearman)}
                         for r in sweep.table().itertuples()],
             "best_p": sweep.best_p, "strategy": self.strategy, "time_model": self.time_model,
             "excluded_datasets": list(self.excluded)}
        if self.nested is not None:
            d["nested"] = {"mean_mil": self.nested.mean_mil, "median_mil": self.nested.median_mil,
                           "p_counts": {format_p(p): c for p, c in self.nested.p_counts().items()}}
        if self.metrics is not None:
            d["user_metrics"] = self.metrics.to_dict(per_dataset=per_dataset)
        return d

    def to_text(self, *, verbose: bool = False) -> str:
        """The user-facing metrics of every P (and of the nested estimate) against the oracle bound, the best P,
        a compact comparison with the reference P and what the columns mean; ``verbose`` adds the sweep's MIL
        table (median, Spearman) and every comparison with its sign test and gap."""
        from algorank.evaluation.meta import summary_text as st
        from algorank.recommender.kernel.labels import format_p

        sweep, nested = self.sweep, self.nested
        label = "AR-A3R" if self.strategy == "ar" and self.spec == "ar" else escape(self.spec)
        head = (f"{label} P sweep, leave-one-dataset-out on {len(sweep.results[0].datasets)} datasets "
                f"({self.time_model})")
        lines = [head]
        if self.excluded:
            lines.append(f"left out of all tuning: {len(self.excluded)} datasets (held-out split / "
                         "excluded datasets)")
        choice = [f"best P by MIL (chosen on all datasets, so in-sample): {format_p(sweep.best_p)}"]
        if nested is not None:
            counts = ", ".join(f"{format_p(p)} on {c}" for p, c in nested.p_counts().items() if c)
            choice.append(f"nested leave-one-dataset-out (P tuned without the scored dataset, an honest estimate): "
                          f"mean MIL {nested.mean_mil:.3f}, median {nested.median_mil:.3f}; P chosen: {counts} "
                          "datasets")
        if self.metrics is None:  # no user-facing metrics: the sweep table is all there is
            return "\n".join(lines + [self._sweep_table()] + choice + st.wrap(st.SPEARMAN_WORDS))
        report, mil = self.metrics, st.window_words(sweep.tmin, sweep.tmax)
        best = next((r.strategy for p, r in zip(sweep.grid, sweep.results) if p == sweep.best_p), None)
        labels = {best: f"{best} (best MIL)"} if best is not None else {}
        lines += ["", st.metrics_table(report, mil_title=mil, labels=labels), ""]
        for c in choice:
            lines += st.wrap(c)
        compared = st.comparison_table(report, mil_title=mil)
        if compared is not None:
            lines += ["", f"against the reference {escape(report.reference)}:", compared]
        lines += [""] + st.metrics_footer(report, window=f"{sweep.tmin:g} s to {sweep.tmax:g} s", verbose=verbose)
        if verbose:
            lines += ["", f"MIL over the window tmin = {sweep.tmin:g} s to tmax = {sweep.tmax:g} s "
                          "(lower is better)", self._sweep_table()] + st.wrap(st.SPEARMAN_WORDS)
            lines += _metrics_lines(report) + st.wrap(st.GAP_WORDS)
        return "\n".join(lines)

    def _sweep_table(self) -> str:
        from algorank.recommender.kernel.labels import format_p

        sweep = self.sweep
        rows = [(format_p(r.p), f"{r.mean_mil:.3f}", f"{r.median_mil:.3f}", f"{r.mean_spearman:.3f}",
                 "<- best" if r.p == sweep.best_p else "") for r in sweep.table().itertuples()]
        return format_table(["P", "mean MIL", "median MIL", "Spearman", ""], rows, align="rrrrl")


@dataclass(frozen=True)
class RankResult:
    """What :func:`algorank.api.rank` returns: the AR-A3R average ranking of the learners.

    Attributes
    ----------
    p : float
        The A3R time exponent.
    p_text : str
        P as given (``"1/16"``).
    n_datasets : int
    order : tuple of str
        Learner ids, best first.
    scores : dict
        learner -> mean rank (1 = best).
    coverage : dict
        learner -> datasets it has results on.

    Examples
    --------
    >>> import algorank
    >>> r = algorank.rank("uci")
    >>> r.to_frame().columns.tolist()
    ['learner', 'mean_rank', 'datasets']
    """

    p: float
    p_text: str
    n_datasets: int
    order: tuple
    scores: dict
    coverage: dict

    def to_dict(self) -> dict:
        """The ranking as plain data (what the ``rank`` command prints as JSON)."""
        from algorank.metadata.learners import short_names

        return {"p": self.p, "n_datasets": self.n_datasets, "order": list(self.order),
                "short": short_names(self.order), "scores": {l: self.scores[l] for l in self.order},
                "coverage": {l: self.coverage[l] for l in self.order}}

    def to_frame(self):
        """One row per learner, best first: ``learner``, ``mean_rank`` (1 = best), ``datasets``."""
        import pandas as pd

        return pd.DataFrame({"learner": list(self.order), "mean_rank": [self.scores[l] for l in self.order],
                             "datasets": [self.coverage[l] for l in self.order]})

    def to_text(self) -> str:
        """The ranking as a table (what ``algorank rank`` prints)."""
        rows = [(i, short_name(l), f"{self.scores[l]:.2f}", self.coverage[l]) for i, l in enumerate(self.order, 1)]
        return (f"AR-A3R ranking, P = {escape(self.p_text)} ({self.p:g}), {self.n_datasets} datasets; "
                f"score = mean rank (1 = best)\n" + format_table(["#", "learner", "mean rank", "datasets"], rows,
                                                                 align="rlrr"))


@dataclass(frozen=True)
class ExportResult:
    """What :func:`algorank.api.export` returns: the counts of the exported meta-data and the files written.

    Attributes
    ----------
    datasets, learners, runs : int
        Counts of the exported meta-data.
    source : str
        Where the meta-data came from.
    written : tuple of str
        The files written.

    Examples
    --------
    >>> import os, tempfile
    >>> import algorank
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     res = algorank.export("uci", out=os.path.join(tmp, "uci.csv"))
    >>> res.datasets, res.learners, [os.path.basename(w) for w in res.written]
    (63, 20, ['uci.csv'])
    """

    datasets: int
    learners: int
    runs: int
    source: str
    written: tuple = ()

    def to_dict(self) -> dict:
        """The counts and the files written, as plain data."""
        return {"datasets": self.datasets, "learners": self.learners, "runs": self.runs, "source": self.source,
                "written": list(self.written)}

    def to_text(self) -> str:
        """The counts and the files written, one per line."""
        return "\n".join([f"exported {self.datasets} datasets x {self.learners} learners ({self.runs} runs) from "
                          f"{escape(self.source)}"] + [f"wrote {escape(w)}" for w in self.written])


@dataclass(frozen=True)
class DatasetSelection:
    """What :func:`algorank.api.build_meta` returns with ``list_only=True``: the selected datasets, cheapest first.

    Attributes
    ----------
    items : tuple
        One entry per dataset (``dataset``, ``collection``, ``kind``, ``family``, ``instances``, ``features``,
        ``source``), cheapest first.

    Examples
    --------
    >>> import algorank
    >>> sel = algorank.build_meta(list_only=True)  # doctest: +SKIP
    >>> print(sel.to_text())  # doctest: +SKIP
    """

    items: tuple

    def to_dict(self) -> list:
        """One dict per selected dataset, cheapest first."""
        return [vars(i) | {"source": i.source} for i in self.items]

    def to_text(self) -> str:
        """The selected datasets as a table, cheapest first."""
        rows = [(i.dataset, i.collection, i.kind, i.family, i.instances, i.features) for i in self.items]
        return (format_table(["dataset", "collection", "kind", "family", "rows", "features"], rows, align="llllrr")
                + f"\n{len(self.items)} datasets")


@dataclass(frozen=True)
class RecordResult:
    """A written record of an assembled or rebuilt embedded set: key -> value.

    Attributes
    ----------
    record : dict
        The record as written (counts, checksums, sources).
    keys : tuple of str
        The keys :meth:`to_text` shows, in order (default all but the long lists).

    Examples
    --------
    >>> from algorank import RecordResult
    >>> print(RecordResult({"datasets": 151, "learners": 20}).to_text())
    datasets      151
    learners      20
    """

    record: dict
    keys: tuple = ()

    def to_dict(self) -> dict:
        """The record as a dict."""
        return dict(self.record)

    def to_text(self) -> str:
        """The record, one ``key value`` line per key of :attr:`keys`."""
        keys = self.keys or tuple(k for k in self.record if k not in ("inputs", "missing"))
        lines = [f"{k:<14}{escape(self.record[k])}" for k in keys if k in self.record]
        missing = self.record.get("missing") or []
        if missing:
            lines.append(f"{'missing':<14}{len(missing)}: {escape(', '.join(missing[:10]))}"
                         f"{' ...' if len(missing) > 10 else ''}")
        return "\n".join(lines)


# ---------------------------------------------------------------- text of the lower layers' results
def _metrics_lines(report) -> list[str]:
    """The user-facing metrics: totals per strategy and the oracle, then the tests against the reference."""
    return report.text_lines()


def _benchmark_text(suite, *, verbose: bool = False) -> str:
    """``benchmark``'s text: the user-facing metrics and a compact comparison with the reference first, with the
    meaning of every column; the MIL table, the tests over datasets and every comparison with ``verbose``."""
    from algorank.evaluation.meta import summary_text as st

    where = (f"leave-one-dataset-out on {len(suite.results[0].datasets)} datasets" if suite.n_train is None
             else suite.setting)
    if suite.axis == "tests" or suite.metrics is None:
        lines = [_benchmark_detail(suite, where), ""]
        lines += st.wrap("Lower is better in every column but Spearman. " + st.SPEARMAN_WORDS)
        return "\n".join(lines + _oracle_note(suite))
    report, mil = suite.metrics, st.window_words(suite.tmin, suite.tmax)
    lines = [f"benchmark: {where} ({suite.time_model})", "", st.metrics_table(report, mil_title=mil)]
    compared = st.comparison_table(report, mil_title=mil)
    if compared is not None:
        lines += ["", f"against the reference {escape(report.reference)}:", compared]
    lines += [""] + st.metrics_footer(report, window=f"{suite.tmin:g} s to {suite.tmax:g} s", verbose=verbose)
    if verbose:
        lines += ["", _benchmark_detail(suite, where)] + st.wrap(st.SPEARMAN_WORDS) + _metrics_lines(report)
        lines += st.wrap(st.GAP_WORDS)
    return "\n".join(lines + _oracle_note(suite))


def _oracle_note(suite) -> list[str]:
    if any(r.strategy.strip().startswith("oracle") for r in suite.results):
        return ["note: 'oracle' sees the held-out dataset; it is a lower bound, not a usable strategy"]
    return []


def _benchmark_detail(suite, where: str) -> str:
    """The MIL table (mean, median, Spearman) and the tests over datasets: the verbose detail."""
    if suite.axis == "tests":
        rows = []
        for r in suite.results:
            curve = r.mean_loss_by_tests()
            at = " ".join(f"{curve[min(i, curve.size - 1)]:.2f}" for i in (1, 2, 3, 5, 10))
            rows.append((r.strategy, f"{r.mean_mil:.3f}", f"{r.median_mil:.3f}", f"{r.mean_spearman:.3f}", at))
        lines = [f"{where}, x axis = number of tests; score = mean loss over tests 1..{int(suite.tmax)} "
                 f"({points_word(getattr(suite, 'task', 'classification'))} points)",
                 format_table(["strategy", "mean loss", "median", "Spearman", "loss after 1, 2, 3, 5, 10 tests"],
                              rows, align="lrrrl")]
    else:
        rows = [(r.strategy, f"{r.mean_mil:.3f}", f"{r.median_mil:.3f}", f"{r.mean_spearman:.3f}")
                for r in suite.results]
        lines = [f"MIL over the window tmin = {suite.tmin:g} s to tmax = {suite.tmax:g} s ({suite.time_model}; "
                 f"loss in {points_word(getattr(suite, 'task', 'classification'))} points, lower is better)",
                 format_table(["strategy", "mean MIL", "median MIL", "Spearman"], rows)]
    c = suite.comparison
    if c is not None:
        lines.append(f"{c.test.method}: statistic = {c.test.statistic:.3f}, p = {c.test.pvalue:.3g}"
                     + (f", Kendall's W = {c.kendall_w:.3f}" if c.kendall_w == c.kendall_w else ""))
        lines.append("effect sizes (a - b over datasets): mean difference [95% t interval], rank-biserial r, "
                     "Cliff's delta")
        lines += [f"  {escape(e['a'])} - {escape(e['b'])}: {e['mean_difference']:+.3f} [{e['ci_low']:+.3f}, "
                  f"{e['ci_high']:+.3f}], r = {e['rank_biserial']:+.2f}, delta = {e['cliffs_delta']:+.2f} "
                  f"({e['magnitude']})" for e in c.effects if "mean_difference" in e]
        if c.posthoc is not None:
            lines.append(f"post hoc ({c.posthoc.method}), significant pairs at alpha = {c.posthoc.alpha:g}:")
            k = len(c.names)
            pairs = [f"  {escape(c.names[i])} vs {escape(c.names[j])}: p = {c.posthoc.adjusted[i, j]:.3g}"
                     for i in range(k) for j in range(i + 1, k) if c.posthoc.significant[i, j]]
            lines.extend(pairs or ["  none"])
    return "\n".join(lines)


def _evaluation_tail(result) -> list[str]:
    """The lines after an evaluation's table: each failed learner, then the store."""
    lines = [f"failed: {escape(short_name(f['learner']))}: {f['status']}: {escape(f['message'])}"
             for f in result.failures]
    return lines + ([f"store: {escape(result.store)}"] if result.store else [])


def _regression_evaluation_text(result) -> str:
    """An evaluation of regressors: mean R², RMSE and MAE over the folds, best R² first."""
    row, config = result.dataset_row, result.config
    rows = [(short_name(lid), f"{r.r2_mean:.4f}", f"{r.rmse_mean:.4g}", f"{r.mae_mean:.4g}", int(r.repetitions),
             format_seconds(r.fit_time_mean), r.status)
            for lid, r in result.summary.sort_values("r2_mean", ascending=False, na_position="last").iterrows()]
    lines = [f"{escape(row.get('name', result.dataset))}: {row.get('n_instances')} rows, {row.get('n_features')} "
             f"features, regression; scheme {config.get('scheme')}, stop {config.get('stop')}",
             f"task: {escape(result.task_detection)}",
             format_table(["learner", "R² (higher better)", "RMSE (lower better)", "MAE (lower better)", "reps",
                           "fit time", "status"], rows, align="lrrrrrl")]
    return "\n".join(lines + _evaluation_tail(result))


def _evaluation_text(result) -> str:
    if getattr(result, "task", "classification") == "regression":
        return _regression_evaluation_text(result)
    row, config = result.dataset_row, result.config
    rows = []
    for lid, r in result.summary.sort_values("accuracy_mean", ascending=False, na_position="last").iterrows():
        interval = f"[{r.interval_low:.3f}, {r.interval_high:.3f}]" if r.repetitions else ""
        rows.append((short_name(lid), f"{r.accuracy_mean:.4f}", f"{r.accuracy_median:.4f}", interval,
                     int(r.repetitions), format_seconds(r.fit_time_mean), r.status))
    lines = [f"{escape(row.get('name', result.dataset))}: {row.get('n_instances')} rows, {row.get('n_features')} "
             f"features, {row.get('n_classes')} classes; scheme {config.get('scheme')}, stop {config.get('stop')}",
             format_table(["learner", "accuracy (higher better)", "median", "95% interval", "reps", "fit time",
                           "status"], rows, align="lrrrrrl")]
    if getattr(result, "task_detection", ""):
        lines.insert(1, f"task: {escape(result.task_detection)}")
    return "\n".join(lines + _evaluation_tail(result))


def _build_text(summary) -> str:
    lines = [f"built {len(summary.built)}, skipped {len(summary.skipped)} (already built), failed "
             f"{len(summary.failed)} of {summary.selected} datasets in {format_seconds(summary.wall_s)}; "
             f"files in {escape(summary.out_dir)}"]
    lines += [f"failed: {escape(f['dataset'])}: {escape(f['message'])}" for f in summary.failed]
    lines += [f"note: {escape(n)}" for n in getattr(summary, "notes", ())]  # each note says what was left out
    return "\n".join(lines)


def _pull_text(c) -> str:
    """The coverage report of a pull (at most 20 gaps listed)."""
    lines = [f"wrote             {escape(c.output)} (+ .coverage.json)",
             f"selection         {escape(c.selection)}; flows {', '.join(map(str, c.flows))}",
             f"datasets          {c.datasets}", f"learners          {c.learners}",
             f"cells             {c.cells} ({c.with_runtime} with runtime, {c.with_folds} with per-fold values)",
             f"task x flow       {c.pairs_with_accuracy} of {c.pairs} with {c.measure}, {c.pairs_with_runtime} with "
             f"runtime, {c.pairs_with_folds} with folds",
             f"pages             {c.pages['fetched']} fetched, {c.pages['cache']} from cache, "
             f"{c.pages['corrupt']} corrupt refetched"]
    for m in c.missing[:20]:
        where = f"task {m['task']}" + (f", flow {m['flow']}" if m["flow"] is not None else "")
        lines.append(f"missing {m['what']:<9} {where}: {escape(m['reason'])}")
    if len(c.missing) > 20:
        lines.append(f"... and {len(c.missing) - 20} more gaps (see the .coverage.json)")
    return "\n".join(lines)


def _recommendation_text(rec) -> str:
    """``recommend``'s text: the result's own, the option that would tell the learners apart, the saved model."""
    text = rec.to_text()
    if rec.trace is not None and rec.notes and rec.suggested_metric:
        text += f": try --metric {rec.suggested_metric}"  # the last line is the last note
    if rec.best is not None and rec.model is None:  # the command keeps a model only when asked where to save it
        text += ("\nmodel: not kept; add --save-model PATH to refit the best learner on all the data and save it "
                 "(joblib), or call algorank.recommend(...).model in Python")
    return text + "".join(f"\nwrote {escape(w)}" for w in saved_files(rec))


_TEXT = {"BenchmarkSuite": _benchmark_text, "EvaluationResult": _evaluation_text, "BuildSummary": _build_text,
         "PullCoverage": _pull_text, "Recommendation": _recommendation_text}


def to_text(result, *, verbose: bool = False) -> str:
    """The text a command prints for ``result``: ``result.to_text()``, or its renderer here; ``verbose`` adds the
    detail of the results that have any (benchmark, tune-p, multitest)."""
    import inspect

    render = _TEXT.get(type(result).__name__)
    if render is None:
        render = result.to_text
        if "verbose" not in inspect.signature(render).parameters:
            return render()
    elif "verbose" not in inspect.signature(render).parameters:
        return render(result)
    else:
        render = functools.partial(render, result)
    return render(verbose=bool(verbose))


# ---------------------------------------------------------------- files under --out
def output_files(result) -> list[str]:
    """Names of the files :func:`write_files` writes for ``result`` (what the JSON output lists before writing)."""
    kind = type(result).__name__
    if kind == "Recommendation":
        return [] if result.trace is None else ["trace.csv", "accuracy_vs_time.png", "predicted_vs_realised.png",
                                                REPORT_FILE]
    if kind == "Multi2TestResult":
        return ["cd_diagram.png"]
    if kind == "LearnerComparison":
        names = ["cd_diagram.png"] if result.posthoc is not None else []
        return names + [_bayes_file(a, b) for a, b in list(result.bayes_results)[:20]] + [REPORT_FILE]
    if kind == "BenchmarkSuite":
        names = ["per_dataset.csv"] + (["user_metrics.csv", "user_metrics_tests.csv"] if result.metrics else [])
        return names + (["loss_time.png"] if result.axis == "time" else []) + ["loss_by_tests.png", REPORT_FILE]
    if kind == "TuneResult":
        return ["p_sweep.csv", "mil_boxplots.png", "loss_time.png"]
    if kind == "EvaluationResult":
        return ["runs.csv", "runs.datasets.csv", "summary.csv"]
    return []


def saved_files(result) -> list[str]:
    """Files the API call itself wrote outside the output folder (``recommend``'s saved model): listed first under ``written``."""
    path = getattr(result, "saved_model", None)
    return [str(path)] if path else []


def _bayes_file(a: str, b: str) -> str:
    """The posterior plot of a learner pair, named from the (sanitised, bounded) learner names."""
    return safe_filename(f"bayes_{short_name(a)}_vs_{short_name(b)}", max_len=120, suffix=".png")


def _csv(frame, target: Path, **options) -> str:
    from algorank.metadata.io import atomic_path

    with atomic_path(target) as tmp:
        frame.to_csv(tmp, **options)
    return str(target)


def _png(ax, target: Path) -> str:
    import matplotlib.pyplot as plt

    from algorank.metadata.io import atomic_path

    with atomic_path(target) as tmp:
        ax.figure.savefig(tmp, dpi=150, bbox_inches="tight")
    plt.close(ax.figure)
    return str(target)


def write_files(result, folder) -> list[str]:
    """Write the tables and plots of ``result`` into the existing folder ``folder``; return the paths."""
    import matplotlib

    matplotlib.use("Agg")
    from algorank.report import benchmark_report, compare_report, recommend_report, write_report

    folder = Path(folder)
    kind = type(result).__name__
    names = output_files(result)
    if kind == "Recommendation":
        from algorank.recommender.live.plot import plot_predicted_vs_realised, plot_recommendation

        # a regression's table: the leaderboard, with R², RMSE and MAE in their own units
        table = result.leaderboard if result.task == "regression" else result.trace.to_frame()
        return [_csv(table, folder / names[0], index=False),
                _png(plot_recommendation(result.trace, metric=result.metric), folder / names[1]),
                _png(plot_predicted_vs_realised(result), folder / names[2]),
                write_report(recommend_report(result), folder)]
    if kind in ("Multi2TestResult", "LearnerComparison"):
        from algorank.evaluation.stats.cd_plot import plot_cd

        written = []
        if kind == "Multi2TestResult":
            return [_png(plot_cd(result, label_formatter=short_name), folder / names[0])]
        if result.posthoc is not None:
            written.append(_png(plot_cd(result.posthoc, label_formatter=short_name), folder / names[0]))
        from algorank.evaluation.stats import plot_posterior

        for (a, b), bres in list(result.bayes_results.items())[:20]:
            written.append(_png(plot_posterior(bres, names=(short_name(a), short_name(b))), folder / _bayes_file(a, b)))
        return written + [write_report(compare_report(result), folder)]
    if kind == "BenchmarkSuite":
        from algorank.evaluation.meta.plots import plot_loss_by_tests, plot_loss_time

        tables = [result.per_dataset_table()]
        if result.metrics is not None:
            tables += [result.metrics.summary_table(), result.metrics.comparison_table()]
        written = [_csv(t, folder / n, index=False, float_format="%.10g") for t, n in zip(tables, names)]
        if result.axis == "time":
            written.append(_png(plot_loss_time(result.results, points=points_word(result.task)),
                                folder / "loss_time.png"))
        written.append(_png(plot_loss_by_tests(result.results, points=points_word(result.task)),
                            folder / "loss_by_tests.png"))
        return written + [write_report(benchmark_report(result), folder)]
    if kind == "TuneResult":
        from algorank.evaluation.meta.plots import plot_loss_time, plot_mil_boxplots

        words = points_word(getattr(result.metrics, "task", "classification"))
        return [_csv(result.to_frame(), folder / names[0], index=False, float_format="%.10g"),
                _png(plot_mil_boxplots(result.sweep, points=words), folder / names[1]),
                _png(plot_loss_time(result.sweep.results, points=words), folder / names[2])]
    if kind == "EvaluationResult":
        from algorank.evaluation.cv.evaluator import write_runs

        return write_runs(result, folder)
    return []
