"""Recommend learners for the user's dataset, then really run them (the main job).

:func:`recommend` joins the three contracts: a strategy (any spec of
:mod:`algorank.recommender.registry` or a Strategy object) is fitted on the meta-data,
its policy for the new dataset is followed in a
:class:`~algorank.recommender.live.environment.LiveEnvironment` by :func:`~algorank.recommender.kernel.trace.run_policy`,
and the result is the planned order, the trace of what really happened and the
best learner found.

Planned order.  Before anything runs, the policy is followed in a dry run where
each learner "scores" what the meta-data expects on this dataset: the median
accuracy and the median fit time over the ``neighbours`` prior datasets most
similar by simple meta-features (see :mod:`algorank.recommender.similarity`), the time
turned into the time of a live test by the live time model.  For fixed-order
strategies this is exactly the order that will be followed; for active testing
the live order can differ, since it reacts to the real results.

Meta-data (default :data:`DEFAULT_META`, the embedded ``modern`` set).  The prior runs are
those of algorank's own evaluator in the live setting (stratified 5-fold CV, per-fold
preprocessing, fit and predict times) on about 150 public datasets, LCDB's 20 learners and the
library defaults of four gradient-boosting implementations, so what the
ranking expects is measured the way the live test runs.  ``meta=load_meta("lcdb")``
ranks from LCDB instead (unscaled features, single fits, no predict times).

Live time model (default).  A live test is ``cv`` fits and predictions plus a fixed
cost.  With ``time_model="live"`` a strategy given as a spec ranks with
``T = cv x t + time_overhead`` (:mod:`algorank.recommender.kernel.time_model`), where ``t`` is the
meta-data's fit plus predict time when it records predict times and the fit time
otherwise (:func:`~algorank.recommender.kernel.time_model.meta_time_kind`), and ``time_overhead`` defaults
to the calibrated constant for that kind (:func:`~algorank.recommender.kernel.time_model.default_overhead`); a spec that
sets ``overhead=``, ``scale=`` or ``time=`` itself is used as given, and
``time_model="fit"`` ranks with the recorded fit times.  Strategy objects are used as
given.  The default strategy's P is the one nested leave-one-dataset-out picks on the
default meta-data under this time model (``tests/benchmarks/bench_live_time_p.py``).

What the plan shows.  Before any test, the plan also carries what the meta-data expects relative to
the best learner (:mod:`algorank.recommender.live.prior`: each learner's expected gap to the best one,
and the expected best score, with 90 % intervals from leave-one-dataset-out residuals), weighted by the
strategy's own similarity; the most similar prior datasets shown are the ones that weigh most there.

Stopping.  The loop stops when the policy says so (nothing left), after ``top``
tests, when ``budget_seconds`` of wall-clock time are spent, or on Ctrl-C
(``stop_reason="interrupted"``, the best so far is returned; also during the refit, then without
a model).  Before it stops because nothing is
left, a learner whose test was stopped at its limit is tested again when the budget left allows the
pace that test showed (:class:`~algorank.recommender.live.pacing.RetryStopped`); one that could not be
is named in the summary (``Recommendation.not_retried``).

The ensemble.  After the tests, greedy ensemble selection combines the tests' out-of-fold predictions
(class probabilities, or a regression's values; :mod:`algorank.recommender.live.ensemble`); with ``refit``, the refitted ensemble is the model returned when it
beats the best learner out of fold and its refit is cheap enough.  Its selection and refit come after the budget,
like the refit of a single learner.

The budget is a promise.  It counts from the call (or from ``started``, e.g. the
start of the command), so loading the data and the meta-data is paid from it too;
the live loop gets what is left.  Every test has a hard deadline at the end of the
budget, and tests whose cost is uncertain (the first one, every test on a dataset
larger than all prior datasets, unknown or large expected times, folds that could end
more than ``0.1 x budget + 0.5`` s after the deadline if four times slower than expected)
run each fold in a child process that is killed at the deadline (see
:class:`~algorank.recommender.live.environment.LiveEnvironment`).  The overrun is measured by
``tests/benchmarks/bench_budget_overrun.py`` (the benchmark record of the documentation).
"""

from __future__ import annotations

import logging
import math
import time
from typing import Callable, Mapping, Sequence

import numpy as np

from algorank.evaluation.cv.children import start_fold_server
from algorank.evaluation.cv.datasets import LoadedDataset, as_dataset
from algorank.recommender.live.ensemble import select_after_tests
from algorank.recommender.live.environment import LiveEnvironment
from algorank.recommender.live.explain import Explaining
from algorank.recommender.live.folds import AUTO, SMALL_FOLDS, live_folds
from algorank.recommender.live.labels import original_labels
from algorank.recommender.live.overlap import describe_matches, overlap_matches
from algorank.recommender.live.landmarks import LANDMARK_BUDGET_SHARE, measure_landmarks  # noqa: F401 (re-export)
from algorank.recommender.live.pacing import Announcing as _Announcing  # noqa: F401 (also the regression loop's)
from algorank.recommender.live.pacing import PLAN_BUDGET_SHARE, RetryStopped, SkipOverBudget, fit_within
from algorank.recommender.live.parallel import check_n_jobs, run_parallel, stop_pool, warm_pool
from algorank.recommender.live.recommendation import PlannedOrder, PlannedTest, Recommendation
from algorank.recommender.live.refit import refit_best, refit_ensemble, refit_regressor  # noqa: F401 (re-export)
from algorank.recommender.live.prior import relative_prior_for
from algorank.recommender.live.regression import regression_errors
from algorank.recommender.live.similar import similar_datasets
from algorank.recommender.live.timing import PhaseClock
from algorank.recommender.kernel.environments import meta_arrays
from algorank.recommender.kernel.time_model import TimeModel, live_model_for
from algorank.recommender.kernel.trace import ForwardsLimit, Observation, Trace, run_policy
from algorank.metadata.checks import check_budget, check_folds, check_seed
from algorank.metadata.errors import InputError
from algorank.metadata.learners import DEFAULT_ALLOWED_MODULES, check_allow_modules, is_runnable
from algorank.metadata.portfolio import missing_libraries, missing_library_note
from algorank.metadata.metric import (METRICS, BASELINE_COLUMN, baseline_warning, check_metric, check_task_metric,
                                      labels_baseline, meta_for_metric)
from algorank.metadata.task import check_meta_task
from algorank.metadata.snapshot import DEFAULT_META, load_meta
from algorank.recommender.base import capability, strategy_name
from algorank.recommender.registry import parse_strategy
from algorank.recommender.similarity import feature_center_scale, meta_feature_matrix, similarity_weights

__all__ = ["PlannedTest", "PlannedOrder", "Recommendation", "recommend", "plan", "expected_performance",
           "prior_matches", "live_strategy", "refit_best", "strategy_expectations", "similar_datasets",
           "DEFAULT_STRATEGY", "DEFAULT_META", "TIME_MODELS"]

logger = logging.getLogger(__name__)

#: Strategy used when none is given: ``eiu``, the dataset-conditioned adaptive strategy of
#: :mod:`algorank.recommender.unexplained` (expected improvement per expected second, conditioned on
#: the results seen on the dataset so far), chosen on the training parts of the embedded meta-data; the
#: benchmark record of the documentation compares it with the other strategies on frozen held-out splits.
DEFAULT_STRATEGY = "eiu"

#: Accepted values of ``time_model``.
TIME_MODELS = ("live", "fit")

def _dataset_info(data: LoadedDataset) -> dict:
    mf = dict(data.meta_features)
    info = {"dataset": data.name, "name": data.name, "source": data.source}
    for key in ("n_instances", "n_features", "n_classes", "majority_fraction"):
        info[key] = mf.get(key, math.nan)
    for key, value in mf.items():
        info.setdefault(key, value)
    return info


def expected_performance(meta, dataset_info: Mapping, *, neighbours: int = 10, folds: int = 5,
                         overhead: float = 0.0, time_kind: str = "fit_time") -> dict:
    """Median accuracy and live test time of each learner on the most similar prior datasets.

    The time is ``folds x`` the median ``time_kind`` time there ``+ overhead`` (seconds).

    Returns
    -------
    dict
        learner -> (expected accuracy, expected seconds); NaN where a learner has
        no result on those datasets.
    """
    acc = meta.matrix("accuracy")
    sec = meta.matrix(time_kind).reindex(index=acc.index, columns=acc.columns)
    a_all = acc.to_numpy(dtype=float, copy=True)
    s_all = sec.to_numpy(dtype=float, copy=True)
    arrays = meta_arrays(meta, time_kind=time_kind)
    if arrays.censored.any():  # a timed-out test: at least that slow, nothing better than the default model
        prior = arrays.censored_as_baseline()
        cens = arrays.censored & np.isfinite(arrays.seconds)
        a_all[cens], s_all[cens] = prior.accuracy[cens], prior.seconds[cens]
    table = meta.datasets.set_index("dataset")
    rows = [table.loc[d].to_dict() if d in table.index else {} for d in acc.index]
    feats = meta_feature_matrix(rows)
    query = meta_feature_matrix([dict(dataset_info)])[0]
    center, scale = feature_center_scale(feats)
    w = similarity_weights(feats, query, h=1.0, center=center, scale=scale)
    near = np.argsort(-w, kind="stable")[: max(1, int(neighbours))]
    a = a_all[near]
    s = s_all[near]
    out = {}
    with np.errstate(all="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            med_a = np.nanmedian(a, axis=0)
            med_s = TimeModel(overhead=overhead, scale=folds).apply(np.nanmedian(s, axis=0))
    for j, l in enumerate(acc.columns):
        out[str(l)] = (float(med_a[j]), float(med_s[j]))
    return out


class _ExpectedEnvironment:
    def __init__(self, expected: Mapping) -> None:
        self.expected = expected

    def test(self, learner: str) -> Observation:
        acc, sec = tuple(self.expected.get(learner, (math.nan, math.nan)))[:2]
        if not math.isfinite(acc):
            return Observation(learner, math.nan, 0.0, "error", "no prior result")
        return Observation(learner, acc, sec if math.isfinite(sec) else 0.0)


def plan(strategy, dataset_info: Mapping, expected: Mapping, *, top: int | None = None,
         decisions: list | None = None, budget: float | None = None, deadline: float | None = None,
         clock: Callable[[], float] = time.perf_counter) -> tuple:
    """The order ``strategy``'s policy follows when every learner scores as expected.

    ``expected`` maps learner -> (accuracy, seconds[, accuracy_low, accuracy_high, fail_probability]).
    ``decisions``, a list, receives why each learner was taken at its step
    (:func:`~algorank.recommender.live.explain.explain_choice`).
    The dry run stops after ``top`` learners, where their expected seconds add up to ``budget``
    (the live loop cannot get further), and at ``deadline`` (a ``clock()`` value), so its cost does
    not grow with the number of learners beyond one policy step each
    (:class:`~algorank.recommender.live.pacing.UntilDeadline`).
    """
    from algorank.recommender.live.pacing import UntilDeadline

    policy = strategy.policy(dataset_info)
    explaining = None
    if decisions is not None:
        policy = explaining = Explaining(policy, strategy)
    policy = UntilDeadline(policy, deadline, clock=clock)
    trace = run_policy(policy, _ExpectedEnvironment(expected), max_tests=top, budget=budget)
    if explaining is not None:
        decisions.extend(explaining.decisions)
    return tuple(PlannedTest(o.learner, *expected.get(o.learner, (math.nan, math.nan))) for o in trace.observations)


def strategy_expectations(strategy, dataset_info: Mapping) -> dict | None:
    """learner -> (accuracy, seconds, low, high, fail probability) from a strategy that predicts
    (declares ``predicts = True``, e.g. ``ei``); None for strategies without models."""
    if not capability(strategy, "predicts"):
        return None
    return {p.learner: (p.accuracy, p.seconds, p.accuracy_low, p.accuracy_high, p.fail_probability)
            for p in strategy.predictions(dataset_info)}


def prior_matches(meta, dataset_info: Mapping, *, fingerprint: str | None = None) -> tuple:
    """Ids of the prior datasets of ``meta`` that are the new dataset: the same values where the meta-data
    records their hash, else the same name and the same numbers of rows, features and classes
    (:func:`algorank.recommender.live.overlap.overlap_matches`, the one rule)."""
    from algorank.recommender.live.overlap import overlap_matches

    return tuple(m["dataset"] for m in overlap_matches(meta, dataset_info, fingerprint=fingerprint))


def recommend(
    dataset,
    *,
    y=None,
    refit: bool = True,
    strategy=None,
    meta=None,
    budget_seconds: float | None = 60.0,
    top: int | None = None,
    exclude_datasets: Sequence[str] = (),
    target: str | None = None,
    cv: int | str | None = None,
    random_state: int = 0,
    dry_run: bool = False,
    evaluator=None,
    neighbours: int = 10,
    time_model: str = "live",
    time_overhead: float | None = None,
    on_plan: Callable | None = None,
    on_start: Callable | None = None,
    on_observation: Callable | None = None,
    allow_modules: Sequence[str] = (),
    metric: str | None = None,
    started: float | None = None,
    n_jobs: int = 1,
    task: str = "auto",
    keep_columns: Sequence[str] = (),
    drop_columns: Sequence[str] = (),
    ensemble: bool = True,
) -> Recommendation:
    """Rank learners for ``dataset`` from the meta-data, then run them live.

    Parameters
    ----------
    dataset : str, path, DataFrame, array-like or LoadedDataset
        A path, ``sklearn:NAME`` or ``openml:ID``, a DataFrame with the target column
        ``target``, or features ``X`` with ``y=`` (see
        :func:`algorank.evaluation.cv.datasets.as_dataset`).
    y : array-like, optional
        Class labels when ``dataset`` holds the features only.
    refit : bool
        Refit the best learner on all the data and return it as ``Recommendation.model``.
    strategy : str or Strategy, optional
        A spec (``ei``, ``ar:p=1/16``, ``at:p=1/16,sim=tested``, ``lt:h=inf``, ...) or a strategy
        object; default :data:`DEFAULT_STRATEGY`.
    meta : str, path, MetaDataset or list, optional
        Prior runs: an embedded set's name, a file, an ASlib folder, a MetaDataset or a list of
        these (:func:`algorank.metadata.snapshot.load_meta`); default :data:`DEFAULT_META`, and for a
        regression target the embedded ``regression`` set.
    budget_seconds : float or None
        Wall-clock budget of the live tests (None: no limit).
    top : int, optional
        Test at most this many learners.
    exclude_datasets : sequence of str
        Prior dataset ids to leave out (e.g. the same dataset when it is in the meta-data).
    target : str, optional
        Target column when ``dataset`` is a spec.
    cv : int, "auto" or None
        Folds of the live evaluation (stratified, one repetition).  ``"auto"``: 5, or 2 when the data are
        large for the budget (:mod:`algorank.recommender.live.folds`; a note says so).  None (default):
        ``"auto"`` for a regression target, 5 for a classification.
    random_state : int
        Seed of the evaluation and of randomised strategies.
    dry_run : bool
        Only plan; run nothing.
    evaluator : Evaluator, optional
        Replaces the default fast evaluator.
    neighbours : int
        Similar prior datasets used for the expected accuracy and time.
    time_model : {"live", "fit"}
        ``"live"``: a strategy spec ranks with the time of a live test,
        ``cv x t + time_overhead`` with ``t`` the fit plus predict time when the meta-data
        records predict times (:func:`~algorank.recommender.kernel.time_model.meta_time_kind`), else the fit time
        (unless the spec sets ``overhead=``/``scale=``/``time=``); ``"fit"``: with the recorded
        fit times.
    time_overhead : float, optional
        Seconds a live test costs on top of ``cv x t`` (default the calibrated
        :func:`~algorank.recommender.kernel.time_model.default_overhead` for that time).
    on_plan, on_start, on_observation : callable, optional
        Progress hooks: called with the plan, with each learner id before its test, and
        with each observation as it arrives.
    allow_modules : sequence of str
        Packages besides scikit-learn whose estimator classes learner ids of the meta-data
        may name.  A learner id that is neither a portfolio id nor such a class is
        *rank-only*: it is ranked and shown, never run (learner ids are data, not code).
    metric : str, optional
        What to rank and test by: ``accuracy``, ``balanced_accuracy``, ``roc_auc`` (one-vs-rest,
        macro over the classes), ``log_loss`` or ``f1_macro``, where the meta-data records it
        (:func:`algorank.metadata.metric.check_metric`; an error names what it records).  Default
        the one the meta-data ranks by (:func:`algorank.metadata.metric.primary_metric`: balanced
        accuracy for the embedded ``oboe`` set, whose ``accuracy`` column holds OBOE's balanced
        accuracy; accuracy otherwise).  The live balanced accuracy is scikit-learn's (mean
        recall); OBOE's is the mean of the one-vs-rest balanced accuracies, the same on two
        classes and higher on more.
    started : float, optional
        A :func:`time.perf_counter` value from which ``budget_seconds`` counts (default: the
        call of this function); the command line passes the start of the process.
    n_jobs : int
        Tests run at once (``-1``: one per CPU): a batch version of the policy keeps that many
        running and re-plans as each finishes, on the engine joblib is configured with (loky
        processes by default, a Dask cluster with ``joblib.parallel_config(backend="dask")``;
        :mod:`algorank.recommender.live.parallel`).
    task : {"auto", "classification", "regression"}
        How a numeric target is read (:mod:`algorank.evaluation.cv.task`): ``auto`` calls it regression
        unless its values look like class labels.  A regression target runs the regressors, ranked by
        regression meta-data (``meta``; default the embedded ``regression`` set) and tested by shuffled
        K-fold CV; ``metric`` is then one of ``r2``, ``rmse``, ``mae`` (every one ranks by the score
        ``max(R², 0)``, the live tests pick the best by it).  Without regression meta-data they run in the
        fixed order of :func:`~algorank.recommender.live.regression.recommend_regression`.  Meta-data of the
        other task is an error.
    keep_columns, drop_columns : sequence of str
        Feature columns kept as read, or dropped; the others follow the rules of
        :mod:`algorank.evaluation.cv.columns` (ids and free text dropped, dates expanded).
    ensemble : bool
        Combine the tested learners' out-of-fold predictions (class probabilities, or a regression's values) by
        greedy ensemble selection (:mod:`algorank.recommender.live.ensemble`; ``Recommendation.ensemble`` records
        the choice).  With ``refit``, the model returned is the refitted ensemble when the rules there keep it.
        False: no selection, the best learner alone.

    Returns
    -------
    Recommendation

    Raises
    ------
    InputError
        Unknown dataset/target/strategy, bad budget, bad ``top`` or ``cv``, unknown excluded id.
    """
    budget = check_budget(budget_seconds)
    asked_strategy = strategy
    strategy = DEFAULT_STRATEGY if strategy is None else strategy
    started = time.perf_counter() if started is None else float(started)
    clock = PhaseClock(started)
    if top is not None and (isinstance(top, bool) or int(top) != top or top < 1):
        raise InputError(f"top must be an integer >= 1; got {top!r}")
    if cv is not None:
        live_folds(cv, n_rows=0, n_features=0, budget=None)  # a bad value is an error before any work
    random_state = check_seed(random_state)
    n_jobs = check_n_jobs(n_jobs)
    data = as_dataset(dataset, target, y=y, task=task, keep_columns=keep_columns, drop_columns=drop_columns)
    regression = data.task == "regression"
    if cv is None:  # the default: "auto" for a regression target, 5 folds for a classification
        cv = AUTO if regression else SMALL_FOLDS
    cv, fold_note = live_folds(cv, n_rows=len(data.y), n_features=data.X.shape[1], budget=budget)
    if fold_note:
        logger.info("%s", fold_note)
    if regression:  # ranked by regression meta-data only; without it, the regressors' own fixed order
        from algorank.recommender.live.regression import recommend_regression, regression_meta

        meta = regression_meta(meta)
        if meta is None:
            if asked_strategy is not None:
                raise InputError("a strategy ranks learners from meta-data, and there is no regression meta-data: "
                                 "leave the strategy out for a regression target (the regressors run in a fixed "
                                 "order), or give regression meta-data (meta)")
            return recommend_regression(data, refit=refit, budget=budget, top=top, cv=cv,
                                        random_state=random_state, dry_run=dry_run, evaluator=evaluator,
                                        on_plan=on_plan, on_start=on_start, on_observation=on_observation,
                                        allow_modules=allow_modules, metric=metric, started=started, n_jobs=n_jobs,
                                        excluded=tuple(str(d) for d in exclude_datasets), ensemble=ensemble)
    labels = original_labels(dataset, data, y=y) if refit and not regression else None
    if not dry_run:
        check_folds(cv, n_rows=len(data.y))  # one error now, not the same error for every learner
    meta = load_meta(meta)
    check_meta_task(meta, data.task)  # a recommendation never turns one task into the other
    excluded = tuple(str(d) for d in exclude_datasets)
    if excluded:
        meta = meta.exclude(datasets=excluded)
    if regression:  # every regression metric ranks by the score max(R², 0); the live tests pick the best by it
        metric = check_task_metric(metric, "regression")
    else:
        metric = check_metric(meta, metric)
        meta = meta_for_metric(meta, metric)  # its accuracy column holds the metric's score: every strategy ranks by it
    strat, used, kind, live = live_strategy(strategy, meta, time_model=time_model, cv=int(cv),
                                            time_overhead=time_overhead, random_state=random_state)
    clock.lap("load")
    # With several tests at once, the worker processes start now, once the input is known to be good: their
    # start-up (a fresh interpreter importing scikit-learn) overlaps with fitting the strategy and planning,
    # and tests run in this process until they are ready (recommender.live.parallel)
    pool_warming = not dry_run and n_jobs > 1 and warm_pool(n_jobs)
    info = _dataset_info(data)
    allowed = check_allow_modules(allow_modules)[len(DEFAULT_ALLOWED_MODULES):]

    def early(why: str, *args) -> Recommendation:  # the budget ran out before the live loop: nothing tested
        logger.warning(why, *args)
        if pool_warming:
            stop_pool()
        return Recommendation(dataset=data.name, source=data.source, strategy=strategy_name(strat),
                              dataset_info=info, plan=(), trace=Trace(dataset=data.name, observations=(),
                                                                      stopped="budget"),
                              budget_seconds=budget, excluded=excluded, time_model=used, metric=metric, cv=int(cv),
                              timings=clock.to_dict(), n_jobs=n_jobs, task=data.task,
                              task_detection=data.task_detection, columns=tuple(data.columns_dict()))

    if budget is not None and not dry_run and clock.left(budget) <= 0:  # nothing left to plan or test with
        return early("the budget of %g s was used up before planning (loading the data and the meta-data took "
                     "%.3g s)", budget, clock.elapsed())
    if not fit_within(strat, meta, None if dry_run else clock.left(budget)):
        clock.lap("plan")
        return early("the budget of %g s was used up while fitting the strategy on the meta-data (%d learners)",
                     budget, len(meta.learner_ids))
    clock.lap("plan")
    if BASELINE_COLUMN in meta.datasets.columns:  # ranked by another metric than the meta-data's own
        info[BASELINE_COLUMN] = labels_baseline(metric, data.y)
    if capability(strat, "conditions_on_landmarks") and strat.landmarks_:  # measure the landmarkers it reads
        measure_landmarks(info, data, meta, budget=budget, random_state=random_state,
                          left=None if dry_run else clock.left(budget))
        clock.lap("landmark")
    found = overlap_matches(meta, info, fingerprint=data.fingerprint(),
                            n_features_read=len(data.columns) if data.columns else None)
    matches = tuple(m["dataset"] for m in found)
    if matches:
        logger.warning("dataset %s is prior dataset(s) %s of the meta-data, whose results inform this "
                       "ranking; leave them out (exclude_datasets) to test algorank honestly on it",
                       data.name, describe_matches(found))
    expected = strategy_expectations(strat, info)
    if expected is None:
        expected = expected_performance(meta, info, neighbours=neighbours, folds=int(cv), overhead=live.overhead,
                                        time_kind=kind)
    plan_decisions: list = []
    plan_until = None if budget is None else clock.clock() + PLAN_BUDGET_SHARE * budget
    planned = PlannedOrder(plan(strat, info, expected, top=top, decisions=plan_decisions,
                                budget=None if dry_run else clock.left(budget), deadline=plan_until))
    planned.metric = metric
    planned.task_detection = data.task_detection
    prior = relative_prior_for(meta, strat)  # what the plan shows: gaps to the best learner, calibrated
    relative = {}
    if METRICS[metric].higher_is_better:  # a score that is the metric's own value (not log loss's exp(-loss))
        relative = prior.predict(info)
        planned.relative, planned.best = relative["gaps"], relative["best"]
    neighbours_found = similar_datasets(meta, info, k=5, prior=prior)
    clock.lap("plan")
    if on_plan is not None:
        on_plan(planned)
    rank_only = tuple(sorted(l for l in meta.learner_ids
                             if not is_runnable(l, allow_modules=allowed, task=data.task)))
    library_note = missing_library_note(rank_only)  # one note naming the extra, not one line per learner
    if library_note:
        logger.warning("%s", library_note)
    unknown = [l for l in rank_only if l not in missing_libraries(rank_only)]
    if unknown:
        logger.warning("%d learner(s) of the meta-data are rank-only (neither portfolio ids nor scikit-learn estimator "
                       "classes of an allowed package): ranked, never run: %s", len(unknown),
                       ", ".join(_clip(l) for l in unknown[:5]) + (", ..." if len(unknown) > 5 else ""))
    from algorank.recommender.live.capability import SkipWithoutMetric, learners_without_metric

    no_metric = {} if regression else learners_without_metric([l for l in meta.learner_ids if l not in set(rank_only)],
                                                              metric, allow_modules=allowed)
    trace = None
    decisions: tuple = ()
    test_times: tuple = ()
    skipped: tuple = ()
    not_retried: tuple = ()
    errors: dict = {}
    if not dry_run:
        left = clock.left(budget)
        if left is not None and left <= 0:
            logger.warning("the budget of %g s was used up before the first test (loading the data and the "
                           "meta-data took %.3g s)", budget, clock.elapsed())
            trace = Trace(dataset=data.name, observations=(), stopped="budget")
            if pool_warming:
                stop_pool()
        else:
            # The fold server starts here (or the parallel workers, when they were not started above): its start-up
            # (a fresh interpreter importing scikit-learn, a CPU second or more) overlaps with the first tests, which
            # run in this process meanwhile; started before the landmarkers and planning, it slowed them down on a
            # machine with few cores (README "Live against simulated").
            if not (pool_warming or warm_pool(n_jobs)) and budget is not None:
                start_fold_server()
            env = LiveEnvironment(data, evaluator, cv=int(cv), random_state=random_state, budget_seconds=left,
                                  expected_seconds={l: v[1] for l, v in expected.items()}, allow_modules=allowed,
                                  prior_shape=_prior_shape(meta), origin=started,
                                  fold_slack=None if budget is None else 0.1 * budget + 0.5, metric=metric)
            explaining = Explaining(strat.policy(info), strat)
            policy = explaining
            if rank_only:
                policy = _SkipRankOnly(policy, rank_only)
            if no_metric:
                policy = SkipWithoutMetric(policy, no_metric)
            loop_start = time.perf_counter()
            skipper = None
            remaining = None if left is None else (lambda: left - (time.perf_counter() - loop_start))
            if left is not None:
                skipper = policy = SkipOverBudget(policy, env.expected, remaining, needs=env.needs)
            retry = policy = RetryStopped(policy, env.needs, remaining or (lambda: None), folds=env._folds())
            if n_jobs > 1:
                trace = run_parallel(policy, env, n_jobs=n_jobs, expected=expected, dataset=data.name, budget=left,
                                     max_tests=top, on_start=on_start, on_observation=on_observation)
            else:
                if on_start is not None:
                    policy = _Announcing(policy, on_start)
                trace = run_policy(policy, env, dataset=data.name, budget=left, max_tests=top,
                                   on_observation=on_observation, keep_on_interrupt=True)
            decisions = tuple(sorted((d for d in list(explaining.decisions) + list(retry.decisions)
                                      if d["learner"] in set(trace.learners)), key=lambda d: d["step"]))
            not_retried = tuple(dict(d) for d in retry.declined)
            test_times = tuple(env.timeline)
            if regression:
                errors = regression_errors(env)
            skipped = () if skipper is None else tuple(skipper.skipped)
            if skipped and trace.stopped == "policy":  # what was left did not fit in the budget
                trace = Trace(dataset=trace.dataset, observations=trace.observations, stopped="budget")
        clock.lap("tests")
    model = None
    chosen = None
    if ensemble and trace is not None and trace.best() is not None:
        chosen, trace, refit = select_after_tests(env, trace, data, metric=metric, budget=budget, refit=refit)
    if refit and trace is not None and trace.best() is not None:
        try:
            if chosen is not None and chosen.kept:
                model = refit_ensemble(data, chosen, random_state=random_state, allow_modules=allowed, labels=labels)
            elif regression:
                model = refit_regressor(data, trace.best().learner, random_state=random_state, allow_modules=allowed)
            else:
                model = refit_best(data, trace.best().learner, random_state=random_state, allow_modules=allowed,
                                   labels=labels)
        except KeyboardInterrupt:  # Ctrl-C during the refit: the tests are done, their best is kept (no model)
            logger.warning("interrupted during the refit of %s: no model", _clip(trace.best().learner))
            chosen = None
            trace = Trace(dataset=trace.dataset, observations=trace.observations, stopped="interrupted")
        clock.lap("refit")
    notes, suggested = (), None
    if trace is not None and trace.best() is not None and not regression:
        note = baseline_warning(metric, trace.best().accuracy, majority_fraction=info.get("majority_fraction", math.nan),
                                n_rows=len(data.y))
        notes = (note,) if note else ()
        suggested = "balanced_accuracy" if note else None
    if library_note:
        notes += (library_note,)
    if fold_note:
        notes += (fold_note,)
    return Recommendation(dataset=data.name, source=data.source, strategy=strategy_name(strat),
                          dataset_info=info, plan=planned, trace=trace, budget_seconds=budget, excluded=excluded,
                          time_model=used, prior_matches=matches, prior_match_details=found, rank_only=rank_only,
                          model=model, metric=metric,
                          expected=dict(expected), cv=int(cv), notes=notes, timings=clock.to_dict(),
                          suggested_metric=suggested, similar=neighbours_found, decisions=decisions,
                          plan_decisions=tuple(plan_decisions), test_times=test_times, skipped=skipped,
                          n_jobs=n_jobs, task=data.task, task_detection=data.task_detection,
                          columns=tuple(data.columns_dict()),
                          no_metric=tuple({"learner": l, "reason": r} for l, r in no_metric.items()),
                          not_retried=not_retried, relative_prior=relative, errors=errors,
                          ensemble=None if chosen is None else chosen.to_dict())


def _prior_shape(meta) -> tuple[float, float]:
    """Largest numbers of rows and features among the meta-data's datasets (NaN when unknown)."""
    table = meta.datasets
    out = []
    for key in ("n_instances", "n_features"):
        values = table[key].to_numpy(dtype=float) if key in table else np.array([])
        values = values[np.isfinite(values)]
        out.append(float(values.max()) if len(values) else math.nan)
    return out[0], out[1]


def live_strategy(strategy, meta, *, time_model: str = "live", cv: int = 5, time_overhead: float | None = None,
                  random_state: int = 0):
    """The unfitted strategy :func:`recommend` runs, ranking with the time of a live test.

    Parameters
    ----------
    strategy : str or Strategy
        A spec or a strategy object (objects are used as given).
    meta : MetaDataset
        The meta-data it will be fitted on (decides the time kind,
        :func:`~algorank.recommender.kernel.time_model.meta_time_kind`).
    time_model, cv, time_overhead, random_state
        As in :func:`recommend`.

    Returns
    -------
    strategy : Strategy
        Unfitted.
    used : str
        The time model in words (``5 x (fit+predict) + 0.1 s``, ``fit``, ``given``).
    time_kind : str
        The meta-data time that, through ``live``, gives the expected cost of a live test
        (and that a spec without its own time model ranks with).
    live : TimeModel
        The live time model (identity for ``time_model="fit"``).
    """
    if time_model not in TIME_MODELS:
        raise InputError(f"time_model must be one of {', '.join(TIME_MODELS)}; got {time_model!r}")
    if time_model == "live":
        live, kind = live_model_for(meta, folds=int(cv), overhead=time_overhead)
    else:
        live, kind = TimeModel(), "fit_time"
    if not isinstance(strategy, str):
        return strategy, "given", kind, live
    strat = parse_strategy(strategy, random_state=random_state)
    if not live.is_identity and not _sets_time_model(strategy) and strat.time_model_aware:
        strat = strat.with_time_model(time_overhead=live.overhead, time_scale=live.scale, time_kind=kind)
        return strat, live.describe(kind), kind, live
    tm = strat.time_model if capability(strat, "time_model_aware") else None
    used = tm.describe() if isinstance(tm, TimeModel) else "fit"
    return strat, used, kind, live


def _sets_time_model(spec: str) -> bool:
    """Whether a strategy spec sets ``overhead=``, ``scale=`` or ``time=`` itself."""
    from algorank.recommender.spec import TIME_MODEL_KEYS, split_spec

    return bool(set(split_spec(spec)[1]) & (set(TIME_MODEL_KEYS) | {"time"}))


def _clip(text: str, limit: int = 60) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _SkipRankOnly(ForwardsLimit):
    """Policy wrapper that never hands out a rank-only learner.

    The wrapped policy sees each skipped learner as a failed test of zero seconds (so it
    moves on); the trace never contains it.
    """

    def __init__(self, policy, rank_only) -> None:
        self.policy, self.rank_only = policy, frozenset(rank_only)

    def next(self, history):
        seen = list(history)
        while True:
            learner = self.policy.next(seen)
            if learner is None or learner not in self.rank_only:
                return learner
            seen.append(Observation(learner, float("nan"), 0.0, "error", "rank-only learner: not run"))

