"""One fold: fit a learner on a split's training rows and measure it on its test rows.

:func:`evaluate_fold` is the measurement of every algorank evaluation (the evaluator, the
meta-data build, the live loop): accuracy, balanced accuracy (mean recall over the classes
present in the test fold), macro F1 (over the classes in the test fold or predicted), AUC
(one-vs-rest, macro over the classes present in the test fold, from probabilities or decision
values), log loss (probabilities clipped to [1e-15, 1]; NaN
without probabilities), fit and predict wall time, pickled size of the fitted pipeline, status
and message.  For the ``bootstrap`` scheme accuracy and balanced accuracy are the .632 estimate
``0.632 * out-of-bag + 0.368 * resubstitution``; macro F1, AUC and log loss are out-of-bag.

A regression fold (a learner recipe of ``task="regression"``) is measured by R² (scikit-learn's
``r2_score`` on the test rows), RMSE and MAE, and its ``accuracy`` is the score ``max(R², 0)``: predicting
the training mean scores about 0, the role the majority class plays in classification.

A learner fault is a recorded result (status ``error``), never an exception;
:func:`failed_fold` builds the record of a fold that produced no result (``error``,
``timeout``, ``interrupted``), and :func:`fold_seed` the learner seed of a fold.
"""

from __future__ import annotations

import math
import pickle
import time
import warnings

import numpy as np

from algorank.evaluation.cv.preprocessing import LearnerRecipe, make_pipeline
from algorank.evaluation.cv.resampling import Split, derive_seed
from algorank.evaluation.cv.store import FoldRecord

__all__ = ["evaluate_fold", "failed_fold", "fold_seed", "fold_sequence", "NOT_RUN_DEADLINE", "INTERRUPTED",
           "regression_errors"]

_LOG_LOSS_EPS = 1e-15
#: Message of a fold that was not started because the evaluation's deadline had passed.
NOT_RUN_DEADLINE = "not run: the evaluation's time limit was reached"
#: Status of a fold whose fit was interrupted (SIGINT): never a result, never stored.
INTERRUPTED = "interrupted"


def fold_seed(random_state: int, repeat: int, fold: int) -> int:
    """The learner seed of fold ``fold`` of repetition ``repeat`` (31 bits: any estimator's random_state)."""
    return derive_seed(random_state, repeat, fold, 7) >> 1  # 31 bits: any estimator's random_state


def _balanced_accuracy(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    recalls = [np.mean(y_pred[y_true == c] == c) for c in np.unique(y_true)]
    return float(np.mean(recalls))


def _f1_macro(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Macro F1 over the classes present in the fold or predicted: scikit-learn's ``f1_score(average="macro",
    zero_division=0)``, computed as ``2 TP / (2 TP + FP + FN)`` per class (every class counted has a row or a
    prediction, so no denominator is zero) without scikit-learn's per-call validation."""
    y_true = np.asarray(y_true)
    y_pred = np.asarray(y_pred)
    labels, codes = np.unique(np.concatenate([y_true, y_pred]), return_inverse=True)
    t, p = codes[: len(y_true)], codes[len(y_true):]
    k = len(labels)
    tp = np.bincount(t[t == p], minlength=k).astype(float)
    counted = np.bincount(t, minlength=k) + np.bincount(p, minlength=k)  # 2 TP + FP + FN
    return float(np.mean(2 * tp / counted))


def _binary_auc(positive: np.ndarray, score: np.ndarray) -> float:
    """ROC AUC of ``score`` for the boolean labels ``positive``: the Mann-Whitney statistic with tied scores
    counted half, which is the area under scikit-learn's (trapezoidal) ROC curve."""
    from scipy.stats import rankdata

    n_pos = int(positive.sum())
    n_neg = len(positive) - n_pos
    ranks = rankdata(score)  # ties get their average rank
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def _auc_ovr(y_true: np.ndarray, scores: np.ndarray) -> float:
    """One-vs-rest ROC AUC averaged over the classes present (scikit-learn's ``roc_auc_score`` per class);
    a non-finite score is an error, as there."""
    present = np.unique(y_true)
    if len(present) < 2:
        return math.nan
    columns = [1] if scores.shape[1] == 2 and len(present) == 2 else list(present)
    used = scores[:, columns]
    if not np.all(np.isfinite(used)):
        raise ValueError("Input contains NaN or infinity in the scores.")
    if columns == [1]:
        return _binary_auc(y_true == 1, used[:, 0])
    return float(np.mean([_binary_auc(y_true == c, used[:, i]) for i, c in enumerate(columns)]))


def _score_matrix(model, X_test, n_classes: int) -> tuple[np.ndarray | None, bool]:
    """(n_test, n_classes) probabilities (True) or decision values (False); None if neither."""
    classes = np.asarray(model.classes_).astype(int)
    try:
        proba = np.asarray(model.predict_proba(X_test), dtype=float)
        full = np.zeros((proba.shape[0], n_classes))
        full[:, classes] = proba
        return full, True
    except (AttributeError, NotImplementedError):
        pass
    try:
        dec = np.asarray(model.decision_function(X_test), dtype=float)
    except (AttributeError, NotImplementedError):
        return None, False
    if dec.ndim == 1:
        dec = np.column_stack([-dec, dec])
    floor = np.nanmin(dec) - 1 if dec.size else 0.0
    full = np.full((dec.shape[0], n_classes), floor)
    full[:, classes[: dec.shape[1]]] = dec
    return full, False


def failed_fold(recipe: LearnerRecipe, split: Split, status: str, message: str, *, fit_time: float = 0.0,
                 predict_time: float = math.nan) -> FoldRecord:
    """The record of a fold that produced no result: metrics NaN, one NaN score per test instance."""
    return FoldRecord(recipe.id, split.repeat, split.fold, status, *([math.nan] * 4), fit_time, predict_time,
                      math.nan, message, np.full(len(split.test), np.nan))


def evaluate_fold(recipe: LearnerRecipe, X: np.ndarray, y: np.ndarray, split: Split, *, n_classes: int,
                  random_state: int, nominal: tuple = (), bootstrap: bool = False, model_bytes: bool = True
                  ) -> FoldRecord:
    """Fit ``recipe`` on ``split.train`` and measure it on ``split.test`` (never raises for learner faults).

    Parameters
    ----------
    recipe : LearnerRecipe
    X : ndarray
        Feature matrix from :func:`~algorank.evaluation.cv.preprocessing.encode_features`.
    y : ndarray of int
        Class codes ``0 .. n_classes - 1``.
    split : Split
    n_classes : int
    random_state : int
        Seed of the learner (derived per fold by the evaluator).
    nominal : tuple of bool
        Nominal-column mask of ``X``.
    bootstrap : bool
        Score the .632 estimate (see the module docstring).
    model_bytes : bool
        Measure the fitted model's pickled size (``model_bytes``; NaN when False).  Pickling a
        forest takes a good part of its fit time; the live tests do not need the size.
    """
    if getattr(recipe, "task", "classification") == "regression":
        return _regression_fold(recipe, X, y, split, random_state=random_state, nominal=nominal,
                                model_bytes=model_bytes)
    y_test = y[split.test]
    fit_time = predict_time = math.nan
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pipe = make_pipeline(recipe, nominal, random_state=random_state)
            X_train = X[split.train]
            X_test = X[split.test]
            t0 = time.perf_counter()
            pipe.fit(X_train, y[split.train])
            fit_time = time.perf_counter() - t0
            t0 = time.perf_counter()
            y_pred = np.asarray(pipe.predict(X_test)).astype(int)
            scores, is_proba = _score_matrix(pipe, X_test, n_classes)
            predict_time = time.perf_counter() - t0
            accuracy = float(np.mean(y_pred == y_test))
            balanced = _balanced_accuracy(y_test, y_pred)
            f1 = _f1_macro(y_test, y_pred)  # out-of-sample only, also for the bootstrap
            if bootstrap:
                y_resub = np.asarray(pipe.predict(X_train)).astype(int)
                accuracy = 0.632 * accuracy + 0.368 * float(np.mean(y_resub == y[split.train]))
                balanced = 0.632 * balanced + 0.368 * _balanced_accuracy(y[split.train], y_resub)
            rows = np.arange(len(y_test))
            if scores is None:
                auc, log_loss = math.nan, math.nan
                true_score = (y_pred == y_test).astype(float)
            else:
                auc = _auc_ovr(y_test, scores)
                true_score = scores[rows, y_test]
                log_loss = (float(-np.mean(np.log(np.clip(true_score, _LOG_LOSS_EPS, 1.0))))
                            if is_proba else math.nan)
            size = float(len(pickle.dumps(pipe, protocol=pickle.HIGHEST_PROTOCOL))) if model_bytes else math.nan
    except Exception as exc:  # a learner fault is a recorded result, not a crash (MemoryError included)
        message = f"{type(exc).__name__}: {exc}".strip()
        return failed_fold(recipe, split, "error", " ".join(message.split())[:500], fit_time=fit_time,
                            predict_time=predict_time)
    return FoldRecord(recipe.id, split.repeat, split.fold, "ok", accuracy, balanced, auc, log_loss, fit_time,
                      predict_time, size, "", np.asarray(true_score, dtype=float), f1_macro=f1,
                      proba=scores.astype(np.float32) if scores is not None and is_proba else None)



def regression_errors(y_true: np.ndarray, y_pred: np.ndarray) -> tuple[float, float, float]:
    """``(r2, rmse, mae)`` of predictions ``y_pred`` of ``y_true``: scikit-learn's ``r2_score`` (1 for a perfect
    prediction of a constant fold, 0 for any other prediction of it), root mean squared error, mean absolute error."""
    from sklearn.metrics import mean_absolute_error, mean_squared_error, r2_score

    y_true = np.asarray(y_true, dtype=float)
    y_pred = np.asarray(y_pred, dtype=float).ravel()
    if not np.all(np.isfinite(y_pred)):
        raise ValueError("the predictions hold NaN or infinite values")
    return (float(r2_score(y_true, y_pred)), float(np.sqrt(mean_squared_error(y_true, y_pred))),
            float(mean_absolute_error(y_true, y_pred)))


def _regression_fold(recipe: LearnerRecipe, X: np.ndarray, y: np.ndarray, split: Split, *, random_state: int,
                     nominal: tuple = (), model_bytes: bool = True) -> FoldRecord:
    """A regression fold: R², RMSE and MAE on the test rows, ``accuracy = max(R², 0)`` (the score), per-row scores
    the negated squared errors (higher is better, for the stopping rules)."""
    y_test = np.asarray(y[split.test], dtype=float)
    fit_time = predict_time = math.nan
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pipe = make_pipeline(recipe, nominal, random_state=random_state)
            t0 = time.perf_counter()
            pipe.fit(X[split.train], np.asarray(y[split.train], dtype=float))
            fit_time = time.perf_counter() - t0
            t0 = time.perf_counter()
            y_pred = np.asarray(pipe.predict(X[split.test]), dtype=float).ravel()
            predict_time = time.perf_counter() - t0
            r2, rmse, mae = regression_errors(y_test, y_pred)
            size = float(len(pickle.dumps(pipe, protocol=pickle.HIGHEST_PROTOCOL))) if model_bytes else math.nan
    except Exception as exc:  # a learner fault is a recorded result, not a crash
        message = f"{type(exc).__name__}: {exc}".strip()
        return failed_fold(recipe, split, "error", " ".join(message.split())[:500], fit_time=fit_time,
                           predict_time=predict_time)
    return FoldRecord(recipe.id, split.repeat, split.fold, "ok", max(r2, 0.0), math.nan, math.nan, math.nan,
                      fit_time, predict_time, size, "", -((y_test - y_pred) ** 2), r2=r2, rmse=rmse, mae=mae,
                      proba=y_pred.reshape(-1, 1))


def _warm_up(recipe: LearnerRecipe, X, y, split: Split, **kwargs) -> None:
    """One untimed fit+predict on at most 100 training and 20 test rows (class-proportional), result dropped."""

    def spread(rows, m):
        order = rows[np.argsort(y[rows], kind="stable")]
        return np.unique(order[np.linspace(0, len(order) - 1, min(m, len(order))).astype(int)])

    mini = Split(split.repeat, split.fold, spread(split.train, 100), spread(split.test, 20))
    evaluate_fold(recipe, X, y, mini, **kwargs)


def fold_sequence(recipe: LearnerRecipe, X: np.ndarray, y: np.ndarray, splits, *, n_classes: int,
                  random_state: int, nominal: tuple = (), warm_up: bool = True):
    """Evaluate ``recipe`` on ``splits`` one after the other (a "test"), after an untimed warm-up fit.

    A generator (it runs as is in a :class:`~algorank.evaluation.cv.children.ChildStream`): it
    yields None once the warm-up (one fit on at most 100 training rows of the first split, result
    dropped) is done, then each fold's :class:`~algorank.evaluation.cv.store.FoldRecord` as it
    finishes.  Fold ``k`` uses the learner seed :func:`fold_seed` of ``random_state``, as the
    evaluator does.
    """
    kwargs = dict(n_classes=n_classes, nominal=nominal)
    if warm_up and len(splits):
        _warm_up(recipe, X, y, splits[0], random_state=random_state, **kwargs)
    yield None
    for s in splits:
        yield evaluate_fold(recipe, X, y, s, random_state=fold_seed(random_state, s.repeat, s.fold), **kwargs)
