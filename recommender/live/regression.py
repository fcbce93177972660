"""Recommend for a regression target: which regression meta-data ranks the regressors, and the loop without any.

algorank learns its rankings from prior runs of the same task.  :func:`regression_meta` picks the
regression meta-data (the embedded ``regression`` set by default; classification meta-data is refused),
and :func:`~algorank.recommender.live.recommend.recommend` ranks and tests the regressors with it like
classifiers.  Where no regression meta-data is installed, :func:`recommend_regression` does not borrow
classification results (that would be answering another question): it tests the regression portfolio
(:mod:`algorank.metadata.regressors`) in the fixed order
:data:`~algorank.metadata.regressors.PRIOR_FREE_ORDER`, chosen before any result by a written rule,
and says so in one line of the output (:data:`PRIOR_FREE_NOTE`).

Everything else is the live loop of classification: shuffled K-fold CV of each learner (scikit-learn's
``KFold(cv, shuffle=True)`` seeded by ``random_state``; :class:`~algorank.evaluation.cv.evaluator.Evaluator`),
the same per-fold preprocessing (numeric features standardised for the learners that need it, missing
values imputed, nominal features one-hot coded), the same budget promise (a test whose cost is unknown runs
each fold in a child process killed at the end of the budget), the same progress hooks, the same ensemble
selection over the tests' out-of-fold predictions (:mod:`algorank.recommender.live.ensemble`), and the best
learner (or the ensemble) refitted on all the data.

The metric (``metric=``): ``r2`` (default; higher is better), ``rmse`` or ``mae`` (lower is better).
Whatever the metric, each test reports its mean R², RMSE and MAE over the folds
(:attr:`~algorank.recommender.live.recommendation.Recommendation.errors`).
"""

from __future__ import annotations

import logging
import math
import time

import numpy as np
from typing import Callable, Sequence

from algorank.metadata.errors import InputError
from algorank.metadata.learners import DEFAULT_ALLOWED_MODULES, check_allow_modules
from algorank.metadata.metric import check_task_metric
from algorank.metadata.regressors import PRIOR_FREE_ORDER
from algorank.recommender.base import OrderPolicy
from algorank.recommender.kernel.trace import Trace, run_policy
from algorank.recommender.live.ensemble import select_after_tests
from algorank.recommender.live.pacing import Announcing
from algorank.recommender.live.recommendation import PlannedOrder, PlannedTest, Recommendation
from algorank.recommender.live.refit import refit_ensemble, refit_regressor  # refit_regressor: re-export
from algorank.recommender.live.timing import PhaseClock

__all__ = ["recommend_regression", "refit_regressor", "regression_meta", "regression_errors", "PRIOR_FREE_STRATEGY",
           "PRIOR_FREE_NOTE"]

logger = logging.getLogger(__name__)

#: The strategy name of a regression run without regression meta-data.
PRIOR_FREE_STRATEGY = "fixed regression order"
#: The one line that says how the regressors were ordered.
PRIOR_FREE_NOTE = ("no regression meta-data ranks the regressors yet: they are tested in a fixed order "
                   "(ridge first, then the tree ensembles, the other linear models, kNN and single trees, "
                   "SVR and MLP last)")


def _dataset_info(data) -> dict:
    """The dataset's name, source and simple meta-features (as a classification's)."""
    info = {"dataset": data.name, "name": data.name, "source": data.source}
    for key in ("n_instances", "n_features", "n_classes", "majority_fraction"):
        info[key] = data.meta_features.get(key, math.nan)
    for key, value in data.meta_features.items():
        info.setdefault(key, value)
    return info


def regression_meta(meta):
    """The regression meta-data that ranks the regressors, or None when there is none.

    Parameters
    ----------
    meta : str, path, MetaDataset, list or None
        Prior runs as :func:`~algorank.metadata.snapshot.load_meta` reads them; None: the embedded
        ``regression`` set when it is installed, else no meta-data (the fixed order).

    Returns
    -------
    MetaDataset or None

    Raises
    ------
    InputError
        ``meta`` holds classification runs: a regression task is never ranked by them.
    """
    from algorank.metadata.snapshot import embedded_available, load_meta

    if meta is None:
        return load_meta("regression") if embedded_available("regression") else None
    loaded = load_meta(meta)
    if getattr(loaded, "task", "classification") != "regression":
        raise InputError("the meta-data holds classification runs; a regression task is never ranked by them. "
                         "Give regression meta-data, or leave the meta-data out")
    return loaded


def regression_errors(env) -> dict:
    """learner -> its mean R², RMSE and MAE over the folds, from a live environment's results."""
    return {learner: {k: float(row.get(f"{k}_mean", math.nan)) for k in ("r2", "rmse", "mae")}
            for learner, row in env.results.items()}


def recommend_regression(data, *, refit: bool = True, budget: float | None = 60.0, top: int | None = None,
                         cv: int = 5, random_state: int = 0, dry_run: bool = False, evaluator=None,
                         on_plan: Callable | None = None, on_start: Callable | None = None,
                         on_observation: Callable | None = None, allow_modules: Sequence[str] = (),
                         metric: str | None = None, started: float | None = None, n_jobs: int = 1,
                         excluded: Sequence[str] = (), learners: Sequence[str] | None = None,
                         ensemble: bool = True) -> Recommendation:
    """Test the regressors on ``data`` live, in :data:`~algorank.metadata.regressors.PRIOR_FREE_ORDER`.

    Called by :func:`algorank.recommender.live.recommend.recommend` for a regression target, with
    its options already checked.

    Parameters
    ----------
    data : LoadedDataset
        A regression dataset (``data.task == "regression"``).
    refit, budget, top, cv, random_state, dry_run, evaluator, on_plan, on_start, on_observation, allow_modules, n_jobs
        As in :func:`~algorank.recommender.live.recommend.recommend` (``budget`` in seconds, None: no limit).
    metric : {"r2", "rmse", "mae"}, optional
        The metric that picks the best learner (default ``r2``).
    started : float, optional
        :func:`time.perf_counter` value the budget counts from.
    excluded : sequence of str
        Prior datasets the caller asked to leave out (recorded only: there is no meta-data).
    learners : sequence of str, optional
        Test these regressor ids (portfolio ids, short names or regressor class paths), in this order,
        instead of :data:`~algorank.metadata.regressors.PRIOR_FREE_ORDER`.
    ensemble : bool
        Greedy ensemble selection over the tests' out-of-fold predictions, as in
        :func:`~algorank.recommender.live.recommend.recommend`.

    Returns
    -------
    Recommendation
        ``task="regression"``, ``strategy`` :data:`PRIOR_FREE_STRATEGY`, the note :data:`PRIOR_FREE_NOTE`,
        and each test's mean R², RMSE and MAE in ``errors``.

    Raises
    ------
    InputError
        A classification metric, a bad ``top`` or ``learners``, or too few rows for the folds.
    """
    from algorank.evaluation.cv.children import start_fold_server
    from algorank.metadata.checks import check_folds
    from algorank.recommender.live.environment import LiveEnvironment
    from algorank.recommender.live.parallel import run_parallel, warm_pool

    if data.task != "regression":
        raise InputError(f"dataset {data.name!r} is a {data.task} task, not a regression")
    metric = check_task_metric(metric, "regression")
    if top is not None and (isinstance(top, bool) or not isinstance(top, (int, np.integer)) or top < 1):
        raise InputError(f"top must be an integer >= 1; got {top!r}")
    allowed = check_allow_modules(allow_modules)[len(DEFAULT_ALLOWED_MODULES):]
    started = time.perf_counter() if started is None else float(started)
    clock = PhaseClock(started)
    if not dry_run:
        check_folds(cv, n_rows=len(data.y))
    info = _dataset_info(data)
    if learners is None:
        order = list(PRIOR_FREE_ORDER)
    else:
        from algorank.evaluation.cv.preprocessing import resolve_learner

        if isinstance(learners, str) or not len(learners):
            raise InputError("learners must be a non-empty list of regressor ids")
        order = list(dict.fromkeys(resolve_learner(str(l), allow_modules=allowed, task="regression").id
                                   for l in learners))
    expected = {learner: (math.nan, math.nan) for learner in order}
    planned = PlannedOrder(PlannedTest(learner, math.nan, math.nan) for learner in order[:top])
    planned.metric = metric
    planned.task_detection = data.task_detection
    planned.source = PRIOR_FREE_NOTE if learners is None else "the learners as given, in their order"
    clock.lap("plan")
    if on_plan is not None:
        on_plan(planned)
    trace, test_times, skipped, errors = None, (), (), {}
    if not dry_run:
        left = clock.left(budget)
        if left is not None and left <= 0:
            logger.warning("the budget of %g s was used up before the first test (loading the data took %.3g s)",
                           budget, clock.elapsed())
            trace = Trace(dataset=data.name, observations=(), stopped="budget")
        else:
            if not warm_pool(n_jobs) and budget is not None:
                start_fold_server()
            env = LiveEnvironment(data, evaluator, cv=int(cv), random_state=random_state, budget_seconds=left,
                                  expected_seconds={}, allow_modules=allowed, origin=started,
                                  fold_slack=None if budget is None else 0.1 * budget + 0.5, metric=metric)
            policy = OrderPolicy(order)  # no predicted times: nothing is skipped, the budget stops the loop
            if n_jobs > 1:
                trace = run_parallel(policy, env, n_jobs=n_jobs, expected=expected, dataset=data.name, budget=left,
                                     max_tests=top, on_start=on_start, on_observation=on_observation)
            else:
                if on_start is not None:
                    policy = Announcing(policy, on_start)
                trace = run_policy(policy, env, dataset=data.name, budget=left, max_tests=top,
                                   on_observation=on_observation, keep_on_interrupt=True)
            test_times = tuple(env.timeline)
            errors = regression_errors(env)
        clock.lap("tests")
    model = chosen = None
    if ensemble and trace is not None and trace.best() is not None:
        chosen, trace, refit = select_after_tests(env, trace, data, metric=metric, budget=budget, refit=refit)
    if refit and trace is not None and trace.best() is not None:
        if chosen is not None and chosen.kept:
            model = refit_ensemble(data, chosen, random_state=random_state, allow_modules=allowed)
        else:
            model = refit_regressor(data, trace.best().learner, random_state=random_state, allow_modules=allowed)
        clock.lap("refit")
    strategy = PRIOR_FREE_STRATEGY if learners is None else "the learners as given"
    notes = (PRIOR_FREE_NOTE,) if learners is None else ()
    return Recommendation(dataset=data.name, source=data.source, strategy=strategy, dataset_info=info,
                          plan=planned, trace=trace, budget_seconds=budget, excluded=tuple(excluded),
                          time_model="measured", model=model, metric=metric, expected=expected, cv=int(cv),
                          notes=notes, timings=clock.to_dict(), test_times=test_times, skipped=skipped,
                          n_jobs=n_jobs, task="regression", task_detection=data.task_detection,
                          columns=tuple(data.columns_dict()), errors=errors,
                          ensemble=None if chosen is None else chosen.to_dict())
