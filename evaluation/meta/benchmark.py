"""Benchmarks of several strategies on the same meta-data: leave-one-dataset-out (or train/test)
MIL, the significance test over datasets and the user-facing metrics (:func:`benchmark_strategies`).

The parts live in modules with one job each, and their public names are importable from here too:
leave-one-dataset-out scoring of one strategy in :mod:`algorank.evaluation.meta.scoring`, P sweeps
and nested tuning in :mod:`algorank.evaluation.meta.tuning`, comparison statistics in
:mod:`algorank.evaluation.meta.comparison`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Sequence

import pandas as pd

from algorank.recommender.base import strategy_name
from algorank.evaluation.meta.comparison import ComparisonResult, compare_strategies, pair_effects
from algorank.recommender.kernel.environments import tests_axis
from algorank.recommender.kernel.time_model import live_test_arrays
from algorank.evaluation.meta.scoring import (
    AXES,
    BenchmarkResult,
    _as_arrays,
    _axis_setup,
    _check_axis,
    _run,
    _split_rows,
    default_window,
    join_test_meta,
    leave_one_dataset_out,
    mean_loss_over_tests,
)
from algorank.evaluation.meta.tuning import PAPER_P_GRID, NestedTuneResult, PSweepResult, p_sweep, tune_p_nested
from algorank.evaluation.meta.user_metrics import (
    DEFAULT_BUDGETS,
    DEFAULT_EPS,
    check_budgets,
    check_eps,
    metrics_report,
)
from algorank.metadata.errors import InputError

__all__ = [
    "PAPER_P_GRID",
    "AXES",
    "mean_loss_over_tests",
    "default_window",
    "BenchmarkResult",
    "leave_one_dataset_out",
    "PSweepResult",
    "p_sweep",
    "ComparisonResult",
    "compare_strategies",
    "pair_effects",
    "NestedTuneResult",
    "tune_p_nested",
    "BenchmarkSuite",
    "benchmark_strategies",
    "join_test_meta",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, eq=False)
class BenchmarkSuite:
    """Several strategies benchmarked on the same meta-data and window.

    Attributes
    ----------
    results : tuple of BenchmarkResult
    comparison : ComparisonResult or None
        Significance test over datasets (None for a single strategy).
    tmin, tmax : float
    time_model : str
        How test times were obtained, in words (``recorded fit times``, ``live tests, 5 x fit + 0.017 s``).
    per_dataset : bool
        Whether :meth:`to_dict` includes the values per dataset by default.

    Examples
    --------
    >>> import algorank
    >>> suite = algorank.benchmark(["ar:p=0", "ar:p=1/16"], "uci")
    >>> suite.setting, len(suite.results)
    ('leave-one-dataset-out', 2)
    """

    results: tuple
    comparison: object
    tmin: float
    tmax: float
    axis: str = "time"
    time_model: str = "recorded fit times"
    metrics: object = None
    setting: str = "leave-one-dataset-out"
    n_train: int | None = None
    per_dataset: bool = True
    task: str = "classification"

    def to_frame(self) -> pd.DataFrame:
        """Same as :meth:`per_dataset_table`."""
        return self.per_dataset_table()

    def to_dict(self, *, per_dataset: bool | None = None) -> dict:
        """``{"tmin", "tmax", "axis", "time_model", "setting", "strategies": {name: {mean_mil, median_mil,
        mean_spearman, per_dataset}}, "comparison", "user_metrics"}``; on the tests axis each strategy also has
        ``mean_loss_by_tests`` (after 0, 1, ... tests) and ``mean_mil`` is the mean loss over tests 1..K.

        ``per_dataset`` (default: the suite's ``per_dataset`` attribute) keeps or leaves out every value per
        dataset (the strategies' ``per_dataset`` MILs and those of the user-facing metrics): on thousands of
        datasets they are most of the output."""
        per_dataset = self.per_dataset if per_dataset is None else bool(per_dataset)
        out = {
            "tmin": self.tmin,
            "tmax": self.tmax,
            "task": self.task,
            "time_model": self.time_model,
            "axis": self.axis,
            "setting": self.setting,
            "n_datasets": len(self.results[0].datasets),
            "n_train_datasets": self.n_train,
            "strategies": {
                r.strategy: {
                    "mean_mil": r.mean_mil,
                    "median_mil": r.median_mil,
                    "mean_spearman": r.mean_spearman,
                    "n_datasets": len(r.datasets),
                    "worst_learner_baseline_datasets": int(sum(k == "worst-learner" for k in r.baseline_kind)),
                    "capped_tests": r.capped_tests,
                    **({"per_dataset": dict(zip(r.datasets, r.mil.tolist()))} if per_dataset else {}),
                    **({"mean_loss_by_tests": r.mean_loss_by_tests().tolist()} if self.axis == "tests" else {}),
                }
                for r in self.results
            },
        }
        if self.comparison is not None:
            out["comparison"] = self.comparison.to_dict()
        if self.metrics is not None:
            out["user_metrics"] = self.metrics.to_dict(per_dataset=per_dataset)
        return out

    def per_dataset_table(self) -> pd.DataFrame:
        """Long table: strategy, dataset, mil, spearman, spearman_score, n_tests, baseline_kind, first, and
        the user-facing metrics (time_to_eps, eps_reached, loss@B, mil_to_B, total_time) when computed."""
        frames = []
        for r in self.results:
            f = r.per_dataset()
            if self.metrics is not None:
                m = self.metrics.get(r.strategy).per_dataset().drop(columns=["dataset", "mil"])
                f = pd.concat([f, m], axis=1)
            f.insert(0, "strategy", r.strategy)
            frames.append(f)
        return pd.concat(frames, ignore_index=True)


def benchmark_strategies(
    strategies: Sequence,
    meta,
    *,
    tmin: float | None = None,
    tmax: float | None = None,
    metric: str = "accuracy",
    time_kind: str = "fit_time",
    posthoc_method: str = "holm",
    progress: bool = False,
    time_model=None,
    axis: str = "time",
    max_tests: int | None = None,
    test_datasets: Sequence[str] | None = None,
    eps: float = DEFAULT_EPS,
    budgets: Sequence[float] = DEFAULT_BUDGETS,
    reference: str | None = None,
    time_words: str = "recorded fit times",
    setting: str | None = None,
) -> BenchmarkSuite:
    """Benchmark several strategies on the same datasets: MIL, a significance test, user-facing metrics.

    Leave-one-dataset-out over ``meta`` by default; with ``test_datasets``, every strategy is
    fitted on the other datasets and scored on those (see :func:`leave_one_dataset_out`).
    Two strategies are compared with the Wilcoxon signed-rank test on per-dataset MIL,
    more with Friedman and an all-pairwise post hoc (see :func:`compare_strategies`).
    ``time_model`` simulates live test times, ``axis`` and ``max_tests`` choose the x
    axis, as in :func:`leave_one_dataset_out`.

    The user-facing metrics (:mod:`algorank.evaluation.meta.user_metrics`: time to ``eps``
    accuracy points of the best, loss at each of ``budgets`` seconds, MIL from the cheapest test
    to each budget) are computed from the same traces on the time axis, with the oracle bounds
    and the comparison of every strategy against ``reference`` (a strategy name; default the first).
    """
    strategies = list(strategies)
    if not strategies:
        raise InputError("give at least one strategy to benchmark")
    names = [strategy_name(s) for s in strategies]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InputError(f"strategies must be distinct; repeated: {', '.join(dup)}")
    if reference is not None and str(reference) not in names:
        raise InputError(f"reference must name one of the strategies ({', '.join(names)}); got {reference!r}")
    eps = check_eps(eps)
    budgets = check_budgets(budgets)
    arrays = _as_arrays(meta, metric, time_kind)
    live = arrays if time_model is None else live_test_arrays(time_model, arrays, meta, metric=metric,
                                                              time_kind=time_kind)
    _check_axis(live, axis)
    scoring = tests_axis(live) if axis == "tests" else live
    rows, train = _split_rows(scoring, test_datasets)
    _, lo, hi = _axis_setup(scoring if test_datasets is None else scoring.take(rows), axis, tmin, tmax, max_tests)
    results = []
    for s in strategies:
        logger.info("benchmarking %s (%s)", strategy_name(s),
                    "leave-one-dataset-out" if test_datasets is None else "on the test datasets")
        results.append(_run(s, meta, live, rows, train, lo, hi, fast=True, progress=progress,
                            time_model=time_model, scoring=scoring, axis=axis))
    # the MIL comparison needs two datasets (a single test dataset still gets its metrics)
    comparison = compare_strategies(results, posthoc_method=posthoc_method) if len(results) > 1 and len(rows) > 1 \
        else None
    charged = [r.strategy for r in results if r.traces.start is not None]
    if charged and axis == "time":  # say who paid for landmarkers before the first test (scoring.start_seconds)
        time_words = f"{time_words}; landmarkers charged before the first test of {', '.join(charged)}"
    task = getattr(meta, "task", "classification")  # MetaArrays carry none: classification
    report = (metrics_report(results, live, eps=eps, budgets=budgets, reference=reference, time_axis=time_words,
                             task=task) if axis == "time" else None)
    if setting is None:
        setting = ("leave-one-dataset-out" if test_datasets is None else
                   f"trained on {int(train.sum())} datasets, scored on {len(rows)} test datasets")
    return BenchmarkSuite(results=tuple(results), comparison=comparison, tmin=lo, tmax=hi, axis=axis, task=task,
                          time_model=time_words if axis == "time" else "tests (each test counts 1)",
                          metrics=report, setting=setting,
                          n_train=int(train.sum()) if test_datasets is not None else None)
