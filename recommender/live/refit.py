"""Refitting what the live tests chose on all the data: the best learner, the best regressor, or an ensemble.

Each refit uses the live tests' preprocessing (:func:`~algorank.evaluation.cv.preprocessing.final_pipeline`) and one
thread, as the tests did, so that its time is what the tests predict.  The fitted pipeline takes the features as
read: when the column rules dropped or expanded columns, its first step does the same to new data.
"""

from __future__ import annotations

from algorank.evaluation.cv.datasets import LoadedDataset
from algorank.evaluation.cv.preprocessing import final_pipeline, fit_quietly, resolve_learner

__all__ = ["refit_best", "refit_regressor", "refit_ensemble"]


def refit_best(data: LoadedDataset, learner: str, *, random_state: int = 0, allow_modules=(), labels=None):
    """Fit ``learner`` on all of ``data`` with the live test's preprocessing; return the fitted Pipeline.

    The pipeline takes raw features (a DataFrame with the columns as read, or an array in
    that column order; when ``data.columns`` dropped or expanded columns, its first step does
    the same to new data) and predicts ``labels`` (the user's own labels, aligned with ``data.y``:
    see :func:`~algorank.recommender.live.labels.original_labels`), or ``data.y``'s text labels
    when ``labels`` is None.
    """
    target = data.y.to_numpy(dtype=object) if labels is None else labels
    return _refit(data, learner, target, task="classification", random_state=random_state,
                  allow_modules=allow_modules)


def refit_regressor(data, learner: str, *, random_state: int = 0, allow_modules=()):
    """Fit the regressor ``learner`` on all of ``data`` with the live test's preprocessing; the fitted Pipeline.

    The pipeline takes raw features (a DataFrame with the columns as read, or an array in that
    column order; when the column rules dropped or expanded columns, its first step does the same to
    new data) and predicts the target as float.
    """
    return _refit(data, learner, data.y.to_numpy(dtype=float), task="regression", random_state=random_state,
                  allow_modules=allow_modules)


def _refit(data, learner: str, target, *, task: str, random_state: int, allow_modules):
    """``learner``'s pipeline fitted on ``data.X`` and ``target``, one thread, behind the column plan's step when the
    column rules changed the columns as read."""
    from threadpoolctl import threadpool_limits

    from algorank.evaluation.cv.columns import ColumnPlanTransformer, plan_changes

    recipe = resolve_learner(learner, allow_modules=allow_modules, task=task)
    with threadpool_limits(limits=1):  # single-threaded like the live tests
        model = fit_quietly(final_pipeline(recipe, random_state=random_state), data.X, target,
                            what=f"refitting {learner} on all the data")
    if plan_changes(data.columns):  # the model takes the columns as read: ids, text dropped, dates expanded first
        from sklearn.pipeline import Pipeline

        model = Pipeline([("columns", ColumnPlanTransformer(data.columns).fit(None)), *model.steps])
    return model


def refit_ensemble(data: LoadedDataset, chosen, *, random_state: int = 0, allow_modules=(), labels=None):
    """Refit the members of ensemble ``chosen`` (an :class:`~algorank.recommender.live.ensemble.EnsembleChoice`)
    on all of ``data`` like :func:`refit_best` (a regression: like :func:`refit_regressor`), and combine them with its
    weights (:func:`~algorank.recommender.live.ensemble.ensemble_model`)."""
    from algorank.recommender.live.ensemble import ensemble_model

    if data.task == "regression":
        return ensemble_model(chosen.weights, lambda learner: refit_regressor(
            data, learner, random_state=random_state, allow_modules=allow_modules), regression=True)
    return ensemble_model(chosen.weights, lambda learner: refit_best(
        data, learner, random_state=random_state, allow_modules=allow_modules, labels=labels))
