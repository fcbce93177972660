"""What :func:`~algorank.recommender.live.recommend.recommend` returns: the planned order and the result.

:class:`PlannedTest` and :class:`PlannedOrder` hold the planned order with what the meta-data
expects of each learner; :class:`Recommendation` the whole result of a run (the trace, the
best learner, the refitted model, the notes, the time spent in each phase and on each test),
with its leaderboard, text and JSON-ready forms.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from algorank.metadata.learners import short_name
from algorank.metadata.metric import METRICS, from_score
from algorank.recommender.kernel.trace import Observation, Trace
from algorank.recommender.live.outcome import earlier_tests, outcome, retest_reason

__all__ = ["PlannedTest", "PlannedOrder", "Recommendation"]

_STOP_TEXT = {
    "policy": "every recommended learner was tested",
    "exhausted": "every recommended learner was tested",
    "budget": "the time budget was used up",
    "top": "the requested number of learners was tested",
    "interrupted": "interrupted by the user",
}


def _finite(value, fallback: float) -> float:
    """``value`` as a float when it is a finite number, else ``fallback``."""
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else fallback


def _no_fit(left: list) -> str:
    """Why the loop ended when the learners left were not started: each was predicted to take longer than the
    budget left (the seconds left at the last skip; the first three learners by name)."""
    names = ", ".join(f"{short_name(s['learner'])} {s['predicted_seconds']:.3g} s" for s in left[:3])
    more = f" and {len(left) - 3} more" if len(left) > 3 else ""
    return (f"the {len(left)} learner(s) left were predicted to take longer than the "
            f"{left[-1]['seconds_left']:.3g} s of budget left ({names}{more})")


def _not_retested(stopped: list, declined) -> str:
    """Which learners stopped at their limit were not tested again, and why (their need against the seconds left)."""
    why = {d["learner"]: d for d in declined}
    parts = []
    for l in stopped[:3]:
        d = why.get(l)
        parts.append(short_name(l) if d is None else
                     f"{short_name(l)} needs about {d['needed_seconds']:.3g} s at its measured pace, "
                     f"{d['seconds_left']:.3g} s were left")
    more = f" and {len(stopped) - 3} more" if len(stopped) > 3 else ""
    return f"stopped at its limit and not tested again: {'; '.join(parts)}{more}"


@dataclass(frozen=True)
class PlannedTest:
    """One learner of the planned order, with what the meta-data expects of it.

    Attributes
    ----------
    learner : str
        Learner id.
    expected_accuracy : float
        Predicted accuracy on this dataset: the strategy's own model when it has one
        (``ei``), else the median accuracy on the most similar prior datasets (NaN if never run there).
    expected_seconds : float
        Predicted seconds of the live test: the strategy's runtime model for this dataset's size
        when it has one, else the median time on the most similar prior datasets turned into a
        live test's time (folds x fit + overhead).
    accuracy_low, accuracy_high : float
        90 % interval of the predicted accuracy (NaN when the strategy has no accuracy model).
    fail_probability : float
        Predicted probability that the test fails (NaN when unknown).
    """

    learner: str
    expected_accuracy: float
    expected_seconds: float
    accuracy_low: float = math.nan
    accuracy_high: float = math.nan
    fail_probability: float = math.nan

    def to_dict(self) -> dict:
        return {"learner": self.learner, "short": short_name(self.learner),
                "expected_accuracy": self.expected_accuracy, "expected_seconds": self.expected_seconds,
                "accuracy_low": self.accuracy_low, "accuracy_high": self.accuracy_high,
                "fail_probability": self.fail_probability}


class PlannedOrder(tuple):
    """The planned order: a tuple of :class:`PlannedTest`, with ``metric``, the score it expects,
    ``task_detection``, how the target was read, and what the meta-data expects relative to the best
    learner: ``relative`` (learner -> (gap, low, high)) and ``best`` (the expected best score, low,
    high); see :mod:`algorank.recommender.live.prior`."""

    metric = "accuracy"
    task_detection = ""
    relative: dict = {}
    best: tuple = (math.nan, math.nan, math.nan)
    #: Where the expected values come from, in words (None: the meta-data).
    source = None

    def to_text(self) -> str:
        """The planned order as a table."""
        from algorank.recommender.live.report import plan_text

        return plan_text(self, metric=self.metric, relative=self.relative, best=self.best)


@dataclass(frozen=True)
class Recommendation:
    """What :func:`recommend` returns.

    Attributes
    ----------
    dataset : str
        Dataset name.
    source : str
        Where it came from.
    strategy : str
        Strategy name/spec.
    dataset_info : dict
        The simple meta-features given to the strategy.
    plan : tuple of PlannedTest
        The planned order (dry run with expected values).
    trace : Trace or None
        What really happened (None for a dry run).
    budget_seconds : float or None
        The budget.
    excluded : tuple of str
        Prior datasets left out of the meta-data.
    time_model : str
        How meta-data times were turned into test times for ranking (e.g. ``5 x fit + 0.25 s``;
        ``fit`` = as recorded; ``given`` = a strategy object used as is).
    prior_matches : tuple of str
        Prior datasets (still in the meta-data) that are this one: the same values where the
        meta-data records their hash, else the same name and the same numbers of rows, features
        and classes (:mod:`algorank.recommender.live.overlap`).  Their results inform the ranking;
        exclude them to test algorank honestly on a dataset it has seen.
    prior_match_details : tuple of dict
        Each match with the rule that found it (``dataset``, ``by``: ``values`` or ``name and shape``).
    rank_only : tuple of str
        Learners of the meta-data that were ranked but not run: neither portfolio ids nor
        estimator classes of an allowed package (learner ids are data, never code).
    expected : dict
        learner -> (predicted accuracy, predicted seconds, ...) for every learner, planned or not.
    model : sklearn Pipeline, EnsembleClassifier or None
        The best learner refitted on all the data (raw features in, class labels out), ready
        to ``predict``, or the ensemble of refitted learners that :attr:`ensemble` chose; None for a dry
        run, when nothing succeeded, or with ``refit=False``.
    metric : str
        The metric of the ranking, the live tests and the expected values (a name of
        :data:`algorank.metadata.metric.METRICS`).  The leaderboard and ``to_dict()`` name their
        columns after it (``balanced_accuracy``, ``predicted_balanced_accuracy``, ...) and hold its
        own values (log loss: lower is better); the trace and the plan hold its *scores*
        (:func:`~algorank.metadata.metric.to_score`, higher is better).
    notes : tuple of str
        One-line cautions about the result, e.g. that the best accuracy does not beat always
        predicting the majority class by more than its noise.
    suggested_metric : str or None
        A metric that would tell the learners apart where this one cannot (``balanced_accuracy``
        when the best accuracy does not beat the majority class by more than its noise).
    timings : dict
        Seconds of each phase counted from the start of the command (or call): ``import``,
        ``load``, ``landmark``, ``plan``, ``tests``, ``refit`` and their ``total``
        (:mod:`algorank.recommender.live.timing`).
    test_times : tuple of (float, float)
        When each test of the trace started and ended, seconds since the start of the command.
    skipped : tuple of dict
        Learners not started because their predicted seconds exceeded the budget left
        (``learner``, ``predicted_seconds``, ``seconds_left``; :mod:`algorank.recommender.live.pacing`).
    n_jobs : int
        Tests that ran at once.
    similar : tuple of dict
        The prior datasets most similar to this one (:func:`similar_datasets`).
    decisions, plan_decisions : tuple of dict
        Why each learner was taken at its step of the live run and of the planned order
        (:func:`~algorank.recommender.live.explain.explain_choice`: ``step``, ``learner``, ``score``,
        ``runner_up``, ``runner_up_score``, ``expected``, ``expected_seconds``, ``text``).
    cv : int
        Folds of each live test.
    saved_model : str or None
        Where :func:`algorank.api.recommend` saved the refitted model (``save_model=``), else None.
    task : str
        The task that ran (``classification`` or ``regression``).
    task_detection : str
        How the task was decided, in words, with the way to override it.
    columns : tuple of dict
        What was done to each feature column as read (``column``, ``action``, ``reason``,
        ``new_columns``; :mod:`algorank.evaluation.cv.columns`).
    no_metric : tuple of dict
        Learners not tested because they cannot give :attr:`metric` (``learner``, ``reason``: e.g. gives
        no class probabilities, which log loss needs; :mod:`algorank.recommender.live.capability`).

    relative_prior : dict
        What the meta-data expects before any test, relative to the best learner
        (:meth:`~algorank.recommender.live.prior.RelativePrior.predict`): ``gaps`` (learner -> expected score minus
        the best learner's, with a 90 % interval, at most 0) and ``best`` (the expected best score, with a 90 %
        interval).
    not_retried : tuple of dict
        Learners stopped at their limit and not tested again because the budget left was less than the pace of
        their first test said a full test needs (``learner``, ``needed_seconds``, ``seconds_left``;
        :class:`~algorank.recommender.live.pacing.RetryStopped`).
    errors : dict
        Regression only: learner -> ``{"r2", "rmse", "mae"}``, the means over the folds of its test (the
        leaderboard's ``r2``, ``rmse`` and ``mae`` columns, and ``best`` in ``to_dict()``).
    ensemble : dict or None
        What ensemble selection over the tests' out-of-fold predictions found
        (:meth:`~algorank.recommender.live.ensemble.EnsembleChoice.to_dict`: ``weights``, ``score``, ``kept``,
        ``reason``, ...); with a refit, ``kept`` says whether :attr:`model` is that ensemble.  None when it did
        not run (``ensemble=False``, fewer than two tests with predictions).

    Examples
    --------
    >>> import algorank
    >>> from sklearn.datasets import load_breast_cancer
    >>> X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    >>> rec = algorank.recommend(X, y=y, budget=20)  # doctest: +SKIP
    >>> rec.best.learner, rec.best.accuracy  # doctest: +SKIP
    >>> rec.to_frame()  # doctest: +SKIP
    """

    dataset: str
    source: str
    strategy: str
    dataset_info: dict = field(repr=False)
    plan: tuple
    trace: Trace | None
    budget_seconds: float | None = None
    excluded: tuple = ()
    time_model: str = "fit"
    prior_matches: tuple = ()
    rank_only: tuple = ()
    model: object = field(default=None, repr=False, compare=False)
    expected: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def leaderboard(self):
        """The tests in the order they ran: learner, short name, the metric's CV value (a column named
        after :attr:`metric`), seconds, cumulative seconds, status (how the test ended, one of
        :data:`~algorank.recommender.live.outcome.OUTCOMES`: ``ok``, ``screened``, ``stopped at its limit``,
        ``error``), capped (stopped early by the strategy's rule, at its time limit or after its first fold, and
        tested again later), screened (stopped after its first fold), message, test (1 for a learner's first test,
        2 for its second), why (why the strategy took it then; for a second test, why it runs again), the
        predicted value and seconds (the planned order's), and the expected value and seconds (what the strategy
        expected of the test when it chose it: ``ei`` and ``eiu`` condition on the tests before it and
        rescale their time predictions by them; a fixed order's are the planned ones)."""
        import pandas as pd

        m = self.metric
        cols = ["learner", "short", m, *[k for k in ("r2", "rmse", "mae") if self.task == "regression" and k != m],
                "seconds", "cumulative_seconds", "status", "capped", "screened", "message",
                "test", "why", f"predicted_{m}", f"expected_{m}", "predicted_seconds", "expected_seconds", "started",
                "ended"]
        if self.trace is None:
            return pd.DataFrame(columns=cols)
        return pd.DataFrame(self._trace_rows()).reindex(columns=cols)

    def _trace_rows(self) -> list[dict]:
        """One dict per test with the metric's own values (see :attr:`leaderboard`)."""
        m = self.metric
        predicted = self._predicted()
        decisions = self.test_decisions()
        rows = []
        observations = list(self.trace.observations)
        for i, (r, o) in enumerate(zip(self.trace.to_records(), observations)):
            row = {k: v for k, v in r.items() if k != "accuracy"}
            row["status"] = outcome(o)  # the same word as the progress line, the table and the report
            earlier = earlier_tests(observations, i)
            row["test"] = len(earlier) + 1
            said = decisions[i].get("text", "")
            row["why"] = (said or retest_reason(earlier)) if earlier else said
            pred_acc, pred_sec = predicted.get(r["learner"], (math.nan, math.nan))
            expected = _finite(decisions[i].get("expected"), pred_acc)
            rows.append({"learner": r["learner"], "short": short_name(r["learner"]), m: from_score(m, r["accuracy"]),
                         **{k: v for k, v in row.items() if k != "learner"}, "message": o.message,
                         f"predicted_{m}": from_score(m, pred_acc), f"expected_{m}": from_score(m, expected),
                         "predicted_seconds": pred_sec,
                         "expected_seconds": _finite(decisions[i].get("expected_seconds"), pred_sec), **self._when(i),
                         **({k: v for k, v in self._errors(r["learner"]).items() if k != m} if o.status == "ok"
                            else {})})
        return rows

    def test_decisions(self) -> list[dict]:
        """The decision (:attr:`decisions`: why it was taken, what was expected of it) of every test, in the
        trace's order; ``{}`` where none was recorded.  Each test takes the first decision for its learner not yet
        taken: a learner tested again has a decision each time."""
        if self.trace is None:
            return []
        pending = list(self.decisions)
        out = []
        for o in self.trace.observations:
            k = next((i for i, d in enumerate(pending) if d.get("learner") == o.learner), None)
            out.append(dict(pending.pop(k)) if k is not None else {})
        return out

    def plan_rows(self) -> list[dict]:
        """The planned order as dicts with the metric's own values: ``expected_<metric>``, ``<metric>_low``,
        ``<metric>_high`` (the 90 % interval of the strategy's model), ``expected_seconds``, ``fail_probability``, and
        ``expected_gap``, ``gap_low``, ``gap_high``: the expected score minus the best learner's, with its 90 %
        interval (:attr:`relative_prior`; NaN where unknown)."""
        m = self.metric
        lower_better = not METRICS[m].higher_is_better
        gaps = dict(self.relative_prior.get("gaps", {})) if self.relative_prior else {}
        out = []
        for p in self.plan:
            low, high = from_score(m, p.accuracy_low), from_score(m, p.accuracy_high)
            if lower_better:
                low, high = high, low
            gap = gaps.get(p.learner, (math.nan, math.nan, math.nan))
            out.append({"learner": p.learner, "short": short_name(p.learner),
                        f"expected_{m}": from_score(m, p.expected_accuracy), "expected_seconds": p.expected_seconds,
                        f"{m}_low": low, f"{m}_high": high, "fail_probability": p.fail_probability,
                        "expected_gap": gap[0], "gap_low": gap[1], "gap_high": gap[2]})
        return out

    def _when(self, i: int) -> dict:
        """``started`` and ``ended`` of the ``i``-th test (seconds since the command started; NaN if unknown)."""
        start, end = self.test_times[i] if i < len(self.test_times) else (math.nan, math.nan)
        return {"started": float(start), "ended": float(end)}

    def _predicted(self) -> dict:
        out = {l: tuple(v)[:2] for l, v in self.expected.items()}
        out.update({p.learner: (p.expected_accuracy, p.expected_seconds) for p in self.plan})
        return out

    def to_frame(self):
        """Same as :attr:`leaderboard` (the planned order is ``pd.DataFrame([p.to_dict() for p in plan])``)."""
        return self.leaderboard
    metric: str = "accuracy"
    cv: int = 5
    notes: tuple = ()
    # -- what the user waited for (recommender/live/timing.py, pacing.py) --
    timings: dict = field(default_factory=dict, compare=False)
    test_times: tuple = field(default=(), compare=False)
    skipped: tuple = field(default=(), compare=False)
    task: str = "classification"
    task_detection: str = field(default="", compare=False)
    columns: tuple = field(default=(), compare=False)
    prior_match_details: tuple = field(default=(), compare=False)
    n_jobs: int = 1
    suggested_metric: str | None = None
    similar: tuple = field(default=(), compare=False)
    decisions: tuple = field(default=(), compare=False)
    plan_decisions: tuple = field(default=(), compare=False)
    saved_model: str | None = field(default=None, compare=False)
    no_metric: tuple = field(default=(), compare=False)
    not_retried: tuple = field(default=(), compare=False)
    relative_prior: dict = field(default_factory=dict, compare=False)
    errors: dict = field(default_factory=dict, compare=False)
    ensemble: dict | None = field(default=None, compare=False)

    def _errors(self, learner: str) -> dict:
        """A regression test's mean R², RMSE and MAE (NaN when unknown); {} for classification."""
        if self.task != "regression":
            return {}
        got = self.errors.get(learner, {})
        return {k: float(got.get(k, math.nan)) for k in ("r2", "rmse", "mae")}

    def to_text(self) -> str:
        """The results table and the summary (a dry run: the planned order)."""
        from algorank.recommender.live.report import plan_text, results_text

        if self.trace is None:
            return plan_text(self.plan, metric=self.metric, relative=self.relative_prior.get("gaps"),
                             best=self.relative_prior.get("best"))
        return results_text(self)

    @property
    def best(self) -> Observation | None:
        """The best successful test (None when nothing finished)."""
        return None if self.trace is None else self.trace.best()

    @property
    def stop_reason(self) -> str:
        """Why the live loop ended (``"dry-run"`` when nothing was run)."""
        return "dry-run" if self.trace is None else self.trace.stopped

    @property
    def summary(self) -> str:
        """One sentence: the best learner, or why there is none."""
        if self.trace is None:
            return "dry run: nothing was run"
        why = _STOP_TEXT.get(self.trace.stopped, self.trace.stopped)
        best = self.best
        n = len(self.trace.observations)
        spent = float(self.trace.cumulative_seconds[-1]) if n else 0.0
        if best is None:
            tried = ", ".join(short_name(o.learner) for o in self.trace.observations) or "nothing"
            budget = f" within the budget of {self.budget_seconds:g} s" if self.budget_seconds else ""
            stopped = self._stopped_not_retested()
            if stopped and self.trace.stopped in ("policy", "exhausted"):
                why = (f"every recommended learner was tested, but {len(stopped)} stopped at its limit and was not "
                       "tested again")
            more = f"; {_not_retested(stopped, self.not_retried)}" if stopped else ""
            return (f"no learner finished successfully{budget} (tried: {tried}; {spent:.3g} s); stopped because {why}"
                    f"{self._start_up_text()}{more}{self._no_metric_text()}")
        label = METRICS[self.metric].label
        tested = set(self.trace.learners)
        left = [s for s in self.skipped if s["learner"] not in tested]
        skipped = ""
        # nothing else was left to start (rank-only learners are never run)
        unable = {u["learner"] for u in self.no_metric}
        ran_out = tested | {s["learner"] for s in left} | set(self.rank_only) | unable >= set(self.expected)
        if left and self.trace.stopped == "budget" and ran_out:  # the loop ended because what was left did not fit
            why = _no_fit(left)
        elif self.skipped:
            skipped = f"; {len(self.skipped)} learner(s) not started (predicted to take longer than the budget left)"
        stopped = self._stopped_not_retested()
        if stopped and self.trace.stopped in ("policy", "exhausted"):
            why = (f"every recommended learner was tested, but {len(stopped)} stopped at its limit and was not "
                   f"tested again")
        if stopped:
            skipped += "; " + _not_retested(stopped, self.not_retried)
        k = next(i for i, o in enumerate(self.trace.observations) if o is best)
        found = float(self.trace.cumulative_seconds[k])
        also = ""
        if self.task == "regression":  # R² and RMSE whatever the metric
            errs = self._errors(best.learner)
            also = " (" + ", ".join(f"{METRICS[k].label} {errs[k]:.4g}" for k in ("r2", "rmse") if k != self.metric) + ")"
        return (f"best: {short_name(best.learner)} with {label} {from_score(self.metric, best.accuracy):.4f}{also}, "
                f"found by test {k + 1} of {n} ({found:.3g} s of the {spent:.3g} s of tests); "
                f"stopped because {why}{skipped}{self._no_metric_text()}{self._ensemble_text()}")

    def _ensemble_text(self) -> str:
        """When the refitted model is an ensemble: which learners, and its out-of-fold value."""
        chosen = self.ensemble
        if not chosen or not chosen.get("kept") or self.model is None:
            return ""
        from algorank.recommender.live.ensemble import weights_text

        label = METRICS[self.metric].label
        return (f"; the model refitted is a weighted ensemble of {len(chosen['weights'])} tested learners "
                f"({weights_text(chosen['weights'])}), {label} {from_score(self.metric, chosen['score']):.4f} "
                "out of fold")

    def _start_up_text(self) -> str:
        """When the budget ran out before any test could finish and the start-up took most of it: how long the
        start-up took, so that a user who asked for a few seconds learns why nothing was tested."""
        if self.trace is None or self.trace.stopped != "budget" or not self.budget_seconds:
            return ""
        start = sum(_finite(self.timings.get(k), 0.0) for k in ("import", "load", "landmark", "plan"))
        if start < 0.5 * float(self.budget_seconds):
            return ""
        return (f"; the start-up (starting Python and importing, loading the data and the meta-data, planning) took "
                f"{start:.3g} s of the {float(self.budget_seconds):g} s: a larger budget leaves time for tests")

    def _no_metric_text(self) -> str:
        """``; N learner(s) not tested: they give no class probabilities, which log loss needs (svc-rbf, ...)``."""
        if not self.no_metric:
            return ""
        from algorank.recommender.live.capability import NEEDS

        names = [short_name(u["learner"]) for u in self.no_metric]
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        what = NEEDS.get(self.metric, ("the scores it needs",))[0]
        return (f"; {len(names)} learner(s) not tested: they give no {what}, which "
                f"{METRICS[self.metric].label} needs ({shown})")

    def _stopped_not_retested(self) -> list:
        """Learners whose tests all stopped at their limit (screened ones excepted), in the order of their last test."""
        tests: dict = {}
        for o in self.trace.observations:
            tests.setdefault(o.learner, []).append(o)
        return [l for l, ts in tests.items()
                if not any(t.status == "ok" for t in ts) and outcome(ts[-1]) == "stopped at its limit"]

    def to_dict(self) -> dict:
        """JSON-ready: ``order`` (planned), ``trace`` (with predicted vs measured), ``best``, plus context."""
        best = self.best
        m = self.metric
        return {
            "dataset": self.dataset,
            "source": self.source,
            "strategy": self.strategy,
            "dataset_info": dict(self.dataset_info),
            "budget_seconds": self.budget_seconds,
            "excluded_datasets": list(self.excluded),
            "time_model": self.time_model,
            "prior_matches": list(self.prior_matches),
            "prior_match_details": [{"dataset": m["dataset"], "by": m["by"]} for m in self.prior_match_details],
            "rank_only": list(self.rank_only),
            "metric": self.metric,
            "higher_is_better": METRICS[m].higher_is_better,
            "order": self.plan_rows(),
            "trace": [] if self.trace is None else self._trace_rows(),
            "skipped": [{**dict(s), "short": short_name(s["learner"])} for s in self.skipped],
            "task": self.task,
            "task_detection": self.task_detection,
            "columns": [dict(c) for c in self.columns],
            "not_retried": [dict(s) for s in self.not_retried],
            "n_jobs": self.n_jobs,
            "best": None if best is None else {"learner": best.learner, "short": short_name(best.learner),
                                               **self._errors(best.learner), m: from_score(m, best.accuracy)},
            "refitted": self.model is not None,
            "ensemble": None if self.ensemble is None else dict(self.ensemble),
            "stop_reason": self.stop_reason,
            "summary": self.summary,
            "notes": list(self.notes),
            "suggested_metric": self.suggested_metric,
            "timings": dict(self.timings),
            "similar_datasets": [dict(d) for d in self.similar],
            "expected_best": (None if not self.relative_prior else
                              dict(zip(("score", "low", "high"), self.relative_prior.get("best", ())))),
            "decisions": [dict(d) for d in self.decisions],
            "saved_model": self.saved_model,
            "not_tested": [dict(u) for u in self.no_metric],
        }
