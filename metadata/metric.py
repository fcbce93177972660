"""The scores a recommendation can rank and test by, and which of them a meta-dataset holds.

The runs schema requires an ``accuracy`` column, and every strategy, trace and benchmark
ranks by it (higher is better, in [0, 1]).  Ranking by another metric therefore means
handing the strategies a meta-dataset whose ``accuracy`` column holds that metric's
*score* (:func:`meta_for_metric`), and having the live tests report the same score
(:func:`score_from_runs`):

=====================  ===================  ==========================================
metric                 runs column          score (higher is better)
=====================  ===================  ==========================================
``accuracy``           ``accuracy``         the accuracy
``balanced_accuracy``  ``balanced_accuracy``  mean recall over the classes
``roc_auc``            ``auc``              one-vs-rest AUC, macro over the classes
``log_loss``           ``log_loss``         ``exp(-log loss)``: the geometric mean of the
                                            probability given to the true class
``f1_macro``           ``f1_macro``         macro-averaged F1
``r2``                 ``r2``               R² (regression)
``rmse``               ``rmse``             ``-RMSE`` (regression; lower RMSE is better)
``mae``                ``mae``              ``-MAE`` (regression; lower MAE is better)
=====================  ===================  ==========================================

The last three are the metrics of a regression task (:func:`check_task_metric`); a
classification metric on a regression task, or the other way round, is an error.  The
``accuracy`` column of regression runs holds ``max(R², 0)``, the score meta-level methods
rank by (predicting the mean scores about 0, the role of the majority class).

The score of a cell (and of a live test) is the mean of the per-fold scores.  Tables and
JSON show the metric's own value, :func:`from_score` (for log loss ``-log`` of the score,
so lower is better there and the best learner is the one with the *lowest* log loss).

A source that recorded only balanced accuracy (OBOE, :mod:`algorank.metadata.oboe`) stores it
in both ``accuracy`` and ``balanced_accuracy``; :func:`primary_metric` tells a live run
which score that meta-data ranks by, and :func:`available_metrics` does not offer
``accuracy`` for it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from algorank.metadata.errors import InputError

__all__ = ["Metric", "METRICS", "METRIC_LABELS", "primary_metric", "available_metrics", "check_metric",
           "meta_for_metric", "to_score", "from_score", "score_from_runs", "metric_label", "baseline_warning",
           "metric_baseline", "labels_baseline", "BASELINE_COLUMN", "REGRESSION_METRICS", "check_task_metric"]

#: Column of the datasets table (and key of a dataset's info) holding the score of the majority-class
#: predictor under the metric a meta-dataset was re-scored by (:func:`meta_for_metric`).
BASELINE_COLUMN = "score_baseline"


@dataclass(frozen=True)
class Metric:
    """One metric a recommendation can rank and test by.

    Attributes
    ----------
    name : str
        The name users give (``metric=``; the command line's metric option).
    label : str
        Display label (table headers, sentences).
    short : str
        Short label for narrow table columns.
    column : str
        Column of the runs table (and of the evaluator's per-fold runs) holding it.
    higher_is_better : bool
        False for log loss, RMSE and MAE.
    task : str
        ``"classification"`` or ``"regression"``: the task the metric measures.
    """

    name: str
    label: str
    short: str
    column: str
    higher_is_better: bool = True
    task: str = "classification"


#: The metrics, by name.
METRICS = {
    "accuracy": Metric("accuracy", "accuracy", "accuracy", "accuracy"),
    "balanced_accuracy": Metric("balanced_accuracy", "balanced accuracy", "bal. acc.", "balanced_accuracy"),
    "roc_auc": Metric("roc_auc", "ROC AUC", "ROC AUC", "auc"),
    "log_loss": Metric("log_loss", "log loss", "log loss", "log_loss", higher_is_better=False),
    "f1_macro": Metric("f1_macro", "macro F1", "macro F1", "f1_macro"),
    "r2": Metric("r2", "R²", "R²", "r2", task="regression"),
    "rmse": Metric("rmse", "RMSE", "RMSE", "rmse", higher_is_better=False, task="regression"),
    "mae": Metric("mae", "MAE", "MAE", "mae", higher_is_better=False, task="regression"),
}

#: The metrics of a regression task; the first is the default.
REGRESSION_METRICS = ("r2", "rmse", "mae")

#: Other spellings accepted for the names above.
_ALIASES = {"auc": "roc_auc", "roc-auc": "roc_auc", "balanced-accuracy": "balanced_accuracy",
            "logloss": "log_loss", "log-loss": "log_loss", "f1": "f1_macro", "macro_f1": "f1_macro",
            "f1-macro": "f1_macro", "r²": "r2", "r2_score": "r2"}

#: Display labels of the metrics.
METRIC_LABELS = {name: m.label for name, m in METRICS.items()}


def metric_label(metric: str, *, short: bool = False) -> str:
    """Display label of ``metric`` (its name when unknown)."""
    m = METRICS.get(metric)
    if m is None:
        return str(metric)
    return m.short if short else m.label


def _name(metric: str) -> str:
    key = str(metric).strip().lower()
    return _ALIASES.get(key, key)


def to_score(metric: str, values):
    """The metric's values as scores (higher is better): ``exp(-v)`` for log loss, ``-v`` for RMSE and MAE, else ``v``."""
    v = np.asarray(values, dtype=float)
    if metric == "log_loss":
        with np.errstate(over="ignore"):
            return np.exp(-v)
    if metric in ("rmse", "mae"):
        return -v
    return v


def from_score(metric: str, score):
    """Inverse of :func:`to_score`: a score back in the metric's own units (a float for a scalar)."""
    s = np.asarray(score, dtype=float)
    if metric == "log_loss":
        with np.errstate(divide="ignore", invalid="ignore"):
            out = -np.log(s) + 0.0  # no -0.0
    elif metric in ("rmse", "mae"):
        out = -s + 0.0
    else:
        out = s
    return float(out) if np.ndim(out) == 0 else out


def primary_metric(meta) -> str:
    """``"balanced_accuracy"`` when ``meta``'s ``accuracy`` column IS its balanced accuracy, else ``"accuracy"``.

    The rule: the runs have a ``balanced_accuracy`` column and, on every successful run, it equals
    ``accuracy`` exactly (e.g. the embedded ``oboe`` set).  Meta-data measured by algorank's
    evaluator records both scores, which differ on most folds; joined with such meta-data, OBOE's
    runs no longer make the columns equal and the answer is ``"accuracy"``.

    Parameters
    ----------
    meta : MetaDataset

    Returns
    -------
    str
    """
    runs = meta.runs
    if "balanced_accuracy" not in runs.columns:
        return "accuracy"
    ok = (runs["status"] == "ok").to_numpy()
    if not ok.any():
        return "accuracy"
    acc = runs["accuracy"].to_numpy(dtype=float)[ok]
    bal = runs["balanced_accuracy"].to_numpy(dtype=float)[ok]
    return "balanced_accuracy" if np.array_equal(acc, bal) else "accuracy"


def available_metrics(meta) -> list[str]:
    """The metrics ``meta`` records: its runs have the column with a value on some successful run.

    ``accuracy`` is left out when the ``accuracy`` column holds balanced accuracy
    (:func:`primary_metric`).
    """
    runs = meta.runs
    ok = (runs["status"] == "ok").to_numpy()
    primary = primary_metric(meta)
    out = []
    for name, m in METRICS.items():
        if name == "accuracy" and primary != "accuracy":
            continue
        if m.column in runs.columns and np.isfinite(runs[m.column].to_numpy(dtype=float)[ok]).any():
            out.append(name)
    return out


def check_metric(meta, metric: str | None) -> str:
    """``metric`` by its canonical name, checked against what ``meta`` records (None: :func:`primary_metric`).

    Raises
    ------
    InputError
        An unknown metric, or one the meta-data does not record (the message names those it has).
    """
    if metric is None:
        return primary_metric(meta)
    name = _name(metric)
    if name not in METRICS:
        raise InputError(f"unknown metric {metric!r}; choose one of {', '.join(METRICS)}")
    if METRICS[name].task == "regression" and getattr(meta, "task", "classification") != "regression":
        raise InputError(f"metric {name!r} measures regression; this is a classification task (its metrics: "
                         f"{', '.join(n for n, m in METRICS.items() if m.task == 'classification')})")
    have = available_metrics(meta)
    if name not in have:
        raise InputError(f"the meta-data does not record {METRICS[name].label} ({name}); it records "
                         f"{', '.join(have) or 'no usable metric'} (the embedded 'broad' set records balanced accuracy, "
                         "ROC AUC and log loss)")
    return name


def check_task_metric(metric: str | None, task: str) -> str:
    """``metric`` by its canonical name for a task with no meta-data to check it against (None: the task's default).

    Parameters
    ----------
    metric : str or None
        A metric name (None: ``r2`` for regression, ``accuracy`` for classification).
    task : {"classification", "regression"}

    Returns
    -------
    str

    Raises
    ------
    InputError
        An unknown metric, or one of the other task (the message names it and the task's metrics).
    """
    default = "r2" if task == "regression" else "accuracy"
    if metric is None:
        return default
    name = _name(metric)
    if name not in METRICS:
        raise InputError(f"unknown metric {metric!r}; choose one of {', '.join(METRICS)}")
    if METRICS[name].task != task:
        own = ", ".join(n for n, m in METRICS.items() if m.task == task)
        raise InputError(f"metric {name!r} measures {METRICS[name].task}; this is a {task} task (its metrics: {own})")
    return name


def metric_baseline(metric: str, *, majority_fraction: float, n_classes: float, class_entropy: float = math.nan) -> float:
    """The score of always predicting the majority class (with the class frequencies as probabilities).

    accuracy: the majority fraction ``p``; balanced accuracy: ``1 / k``; ROC AUC: 0.5; macro F1:
    ``2p / (1 + p) / k``; log loss: ``2 ** -H`` with ``H`` the class entropy in bits (the log loss
    of predicting the class frequencies is ``H ln 2``), or ``1 / k`` when ``H`` is unknown.
    NaN when what it needs is unknown.
    """
    name = _name(metric)
    p, k = float(majority_fraction), float(n_classes)
    if name == "r2":
        return 0.0  # predicting the mean
    if METRICS.get(name) is not None and METRICS[name].task == "regression":
        return math.nan  # in the target's units: no baseline without the target
    if name == "accuracy":
        return p
    if name == "roc_auc":
        return 0.5
    if not (math.isfinite(k) and k >= 2):
        return math.nan
    if name == "balanced_accuracy":
        return 1.0 / k
    if name == "f1_macro":
        return 2.0 * p / (1.0 + p) / k if math.isfinite(p) else math.nan
    if name == "log_loss":
        h = float(class_entropy)
        return 2.0 ** -h if math.isfinite(h) and h >= 0 else 1.0 / k
    return math.nan


def labels_baseline(metric: str, y) -> float:
    """:func:`metric_baseline` of a dataset with class labels ``y`` (the class entropy in bits from their frequencies)."""
    _, counts = np.unique(np.asarray(y, dtype=object).astype(str), return_counts=True)
    freq = counts / counts.sum()
    entropy = float(-(freq * np.log2(freq)).sum())
    return metric_baseline(metric, majority_fraction=float(freq.max()), n_classes=len(counts), class_entropy=entropy)


def meta_for_metric(meta, metric: str):
    """``meta`` with its ``accuracy`` column replaced by ``metric``'s score (``meta`` itself for its primary metric).

    A successful run without a value of the metric (log loss of a learner that gives no
    probabilities) becomes a failed run (``status`` ``"error"``) with a message saying so:
    ranked by that metric, the learner has no result there.  The datasets table gains
    :data:`BASELINE_COLUMN`, each dataset's :func:`metric_baseline`: the score before any test,
    which strategies that model the gain over the majority class use instead of the majority
    fraction.
    """
    name = _name(metric)
    if name == primary_metric(meta):
        return meta
    m = METRICS[name]
    runs = meta.runs.copy()
    score = to_score(name, runs[m.column].to_numpy(dtype=float))
    missing = (runs["status"] == "ok").to_numpy() & ~np.isfinite(score)
    runs["accuracy"] = score
    if missing.any():
        runs.loc[missing, "status"] = "error"
        if "message" in runs.columns:
            runs.loc[missing, "message"] = f"no {m.label} recorded"
    datasets = meta.datasets.copy()
    get = lambda c: datasets[c].to_numpy(dtype=float) if c in datasets.columns else np.full(len(datasets), np.nan)  # noqa: E731
    datasets[BASELINE_COLUMN] = [metric_baseline(name, majority_fraction=p, n_classes=k, class_entropy=h)
                                 for p, k, h in zip(get("majority_fraction"), get("n_classes"), get("class_entropy"))]
    cls = type(meta)
    return cls(runs, datasets, source=f"{meta.source} (ranked by {m.label})")


def score_from_runs(runs, metric: str) -> float:
    """The score of one live test from the evaluator's per-fold ``runs``: the mean of the per-fold scores.

    NaN when a fold failed or has no value of the metric.
    """
    m = METRICS[_name(metric)]
    if m.column not in runs.columns or len(runs) == 0:
        return math.nan
    if (runs["status"].astype(str) != "ok").any():
        return math.nan
    values = to_score(m.name, runs[m.column].to_numpy(dtype=float))
    return float(np.mean(values)) if np.isfinite(values).all() else math.nan


#: Standard errors a best learner must beat the majority class by (two: about a 95 % one-sided margin).
BASELINE_MARGIN_SE = 2.0


def baseline_warning(metric: str, best_score: float, *, majority_fraction: float, n_rows: int) -> str | None:
    """One line when the best ``accuracy`` does not beat always predicting the majority class by more than its noise.

    The noise is the binomial standard error of an accuracy of ``majority_fraction`` over
    ``n_rows`` cross-validated predictions; the best learner must exceed the majority
    fraction by :data:`BASELINE_MARGIN_SE` of them.  Only for ``accuracy`` (the other
    metrics do not reward predicting the majority class); None otherwise or when it does.  The remedy
    is ranking by balanced accuracy (``Recommendation.suggested_metric``).
    """
    if metric != "accuracy":
        return None
    p, n = float(majority_fraction), int(n_rows)
    if not (math.isfinite(p) and math.isfinite(best_score) and n > 0):
        return None
    noise = BASELINE_MARGIN_SE * math.sqrt(max(p * (1.0 - p), 0.0) / n)
    if best_score - p > noise:
        return None
    return (f"the best accuracy {best_score:.4f} does not beat always predicting the majority class "
            f"({p:.4f}) by more than its noise ({noise:.4f}); accuracy cannot tell the learners apart here, "
            "balanced accuracy can")
