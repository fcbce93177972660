"""What the meta-data expects on a new dataset before any test, in terms that hold up: relative to the best learner.

Four simple meta-features (rows, features, classes, majority fraction) say little about how hard a dataset is, so an
absolute accuracy predicted from them is far off on many datasets (an easy dataset looks like a hard one of the same
shape).  How far each learner falls behind the best learner *on the same dataset* varies much less from dataset to
dataset.  :class:`RelativePrior` therefore predicts, for every learner, its *gap* to the best learner (the learner's
score minus the best score on the dataset, in the metric's score, at most 0), and, once, the best score itself.

Prediction.  Each prior dataset gets the similarity weight the strategy uses
(:func:`~algorank.recommender.similarity.similarity_weights` over the standardised meta-features, bandwidth ``h``);
a learner's expected gap is the weighted median of its gaps on the prior datasets; the best score is the majority
fraction plus the weighted median of the best learner's gain over the majority class, times ``1 - majority``.

Intervals.  Each prior dataset (at most :data:`MAX_HELD_OUT`, fewer on large meta-data, evenly spread) is
predicted from the others (leave-one-dataset-out), and the 5 % and 95 % quantiles
of those residuals, per learner, are added to the prediction (the empirical-quantile, or jackknife, prediction
interval: Barber, Candès, Ramdas and Tibshirani, *Predictive inference with the jackknife+*, Annals of Statistics
2021).  Their coverage on datasets left out of the meta-data is checked by ``tests/benchmarks/
bench_prior_calibration.py`` (the project's documentation gives the numbers).

:meth:`RelativePrior.weights` are the similarity weights the strategy uses (its bandwidth,
:func:`strategy_bandwidth`), so the list of the most similar prior datasets
(:func:`~algorank.recommender.live.similar.similar_datasets`) shows the datasets that weigh most in the prior.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from algorank.recommender.similarity import feature_center_scale, meta_feature_matrix, similarity_weights

__all__ = ["RelativePrior", "fit_relative_prior", "relative_prior_for", "strategy_bandwidth", "check_calibration",
           "LEVEL"]

#: Two-sided level of the intervals.
LEVEL = 0.90

#: Prior datasets (evenly spread over the meta-data) whose leave-one-dataset-out residuals give the intervals: enough
#: for the 5 % and 95 % quantiles, and a bounded cost on meta-data with hundreds of datasets.
MAX_HELD_OUT = 200
#: ... fewer where datasets x learners is large (at most this many held-out cells of weights), but at least
#: :data:`MIN_HELD_OUT`.
MAX_CELLS = 5_000_000
MIN_HELD_OUT = 50


def _weighted_median(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Column-wise weighted median of ``values`` (n x m, NaN = missing) under row ``weights`` (n,) or (k, n).

    Returns (m,) for 1-d weights, (k, m) for 2-d; NaN where a column has no value with positive weight.
    """
    w = np.atleast_2d(np.asarray(weights, dtype=float))
    v = np.asarray(values, dtype=float)
    order = np.argsort(np.where(np.isfinite(v), v, np.inf), axis=0, kind="stable")  # NaN last
    sv = np.take_along_axis(v, order, axis=0)  # (n, m)
    ok = np.isfinite(sv)
    sw = w[:, order]  # (k, n, m): each column's weights in its sorted order
    sw[:, ~ok] = 0.0
    cw = np.cumsum(sw, axis=1)
    total = cw[:, -1, :]
    idx = (cw < 0.5 * total[:, None, :]).sum(axis=1)  # first position whose cumulative weight reaches half
    idx = np.minimum(idx, v.shape[0] - 1)
    out = np.take_along_axis(np.broadcast_to(sv, cw.shape), idx[:, None, :], axis=1)[:, 0, :]
    out = np.where(total > 0, out, np.nan)
    return out[0] if np.ndim(weights) == 1 else out


@dataclass(frozen=True)
class RelativePrior:
    """Expected gaps to the best learner and the expected best score, fitted on prior datasets.

    Attributes
    ----------
    learners : tuple of str
    datasets : tuple of str
        The prior datasets (rows of ``gaps``).
    gaps : ndarray (datasets, learners)
        Score minus the dataset's best score (NaN where a learner has no result).
    best_gain : ndarray (datasets,)
        The best score's gain over the majority class, ``(best - majority) / (1 - majority)``.
    features : ndarray (datasets, 4)
        Meta-features (:func:`~algorank.recommender.similarity.meta_feature_matrix`).
    h : float
        Similarity bandwidth.
    gap_residuals : ndarray (2, learners)
        The ``(1 - LEVEL) / 2`` and ``(1 + LEVEL) / 2`` quantiles of the leave-one-dataset-out residuals of each
        learner's gap.
    best_residuals : ndarray (2,)
        The same for the best score.
    """

    learners: tuple
    datasets: tuple
    gaps: np.ndarray
    best_gain: np.ndarray
    features: np.ndarray
    h: float
    gap_residuals: np.ndarray
    best_residuals: np.ndarray
    center: np.ndarray
    scale: np.ndarray

    def weights(self, dataset_info: Mapping) -> np.ndarray:
        """Similarity weight of each prior dataset for a new one (all 1 when none has a positive weight)."""
        query = meta_feature_matrix([dict(dataset_info)])[0]
        w = similarity_weights(self.features, query, h=self.h, center=self.center, scale=self.scale)
        return w if (w > 0).any() else np.ones(len(w))

    def predict(self, dataset_info: Mapping) -> dict:
        """``{"gaps": {learner: (gap, low, high)}, "best": (score, low, high)}`` for a new dataset (scores of the
        metric, higher is better; gaps at most 0)."""
        w = self.weights(dataset_info)
        gap = _weighted_median(self.gaps, w)
        lo = np.minimum(gap + self.gap_residuals[0], 0.0)
        hi = np.minimum(gap + self.gap_residuals[1], 0.0)
        out = {"gaps": {l: (float(min(gap[j], 0.0)), float(lo[j]), float(hi[j]))
                        for j, l in enumerate(self.learners) if np.isfinite(gap[j])}}
        try:
            maj = float(dataset_info.get("score_baseline", dataset_info.get("majority_fraction", math.nan)))
        except (TypeError, ValueError):
            maj = math.nan
        g = float(_weighted_median(self.best_gain[:, None], w)[0])
        if math.isfinite(maj) and 0 <= maj < 1 and math.isfinite(g):
            best = [maj + (g + r) * (1.0 - maj) for r in (0.0, *self.best_residuals)]
            out["best"] = tuple(float(np.clip(b, 0.0, 1.0)) for b in best)
        else:
            out["best"] = (math.nan, math.nan, math.nan)
        return out


def _loo_predictions(gaps: np.ndarray, best_gain: np.ndarray, features: np.ndarray, h: float, center, scale):
    """Each prior dataset's gaps and best gain predicted from the others (the same weights, its own left out)."""
    n = len(features)
    k = min(n, MAX_HELD_OUT, max(MIN_HELD_OUT, int(MAX_CELLS // max(n * gaps.shape[1], 1))))
    held = np.unique(np.linspace(0, n - 1, k).round().astype(int)) if n else np.zeros(0, int)
    w = np.stack([similarity_weights(features, features[d], h=h, center=center, scale=scale) for d in held]) \
        if n else np.zeros((0, 0))
    w[np.arange(len(held)), held] = 0.0
    none = ~(w > 0).any(axis=1)
    w[none] = 1.0
    w[np.arange(len(held)), held] = 0.0
    step = max(1, int(4_000_000 // max(n * gaps.shape[1], 1)))  # bounded memory: (step, n, learners) at once
    pred = np.vstack([_weighted_median(gaps, w[i:i + step]) for i in range(0, len(held), step)]) if n else gaps[:0]
    return held, pred, _weighted_median(best_gain[:, None], w)[:, 0]


def fit_relative_prior(accuracy: np.ndarray, majority: np.ndarray, features: np.ndarray, learners, datasets, *,
                       h: float = 1.0) -> RelativePrior:
    """Fit a :class:`RelativePrior` on prior scores.

    Parameters
    ----------
    accuracy : ndarray (datasets, learners)
        Each learner's score on each prior dataset (NaN: no result).
    majority : ndarray (datasets,)
        The score of always predicting the majority class there.
    features : ndarray (datasets, 4)
        Meta-features (:func:`~algorank.recommender.similarity.meta_feature_matrix`).
    learners, datasets : sequence of str
    h : float
        Similarity bandwidth (the strategy's).
    """
    acc = np.asarray(accuracy, dtype=float)
    maj = np.asarray(majority, dtype=float)
    features = np.asarray(features, dtype=float)
    with np.errstate(all="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            best = np.nanmax(acc, axis=1)
        gaps = acc - best[:, None]
        best_gain = np.where((maj < 1) & np.isfinite(maj), (best - maj) / (1.0 - maj), np.nan)
    center, scale = feature_center_scale(features)
    q = ((1.0 - LEVEL) / 2.0, (1.0 + LEVEL) / 2.0)
    gap_res = np.zeros((2, acc.shape[1]))
    best_res = np.zeros(2)
    if len(acc) >= 3:
        held, pred_gap, pred_best = _loo_predictions(gaps, best_gain, features, float(h), center, scale)
        res = gaps[held] - pred_gap
        for j in range(acc.shape[1]):
            r = res[:, j][np.isfinite(res[:, j])]
            if len(r):
                gap_res[:, j] = np.quantile(r, q)
        r = (best_gain[held] - pred_best)[np.isfinite(best_gain[held] - pred_best)]
        if len(r):
            best_res = np.quantile(r, q)
    return RelativePrior(tuple(str(l) for l in learners), tuple(str(d) for d in datasets), gaps, best_gain,
                         features, float(h), gap_res, best_res, center, scale)


def strategy_bandwidth(strategy) -> float:
    """The similarity bandwidth ``strategy`` weighs prior datasets with (its ``h``; 1 for a strategy without one)."""
    h = getattr(strategy, "h", 1.0)
    try:
        h = float(h)
    except (TypeError, ValueError):
        h = 1.0
    return h if h > 0 else 1.0


def relative_prior_for(meta, strategy=None) -> RelativePrior:
    """:func:`fit_relative_prior` on ``meta`` (its ``accuracy`` column: the metric's score) with ``strategy``'s
    bandwidth (:func:`strategy_bandwidth`)."""
    from algorank.recommender.kernel.environments import meta_arrays

    arrays = meta_arrays(meta)
    table = meta.datasets.set_index("dataset").reindex(list(arrays.datasets))
    rows = [dict(r) for r in table.to_dict("records")]
    return fit_relative_prior(arrays.accuracy, arrays.majority, meta_feature_matrix(rows), arrays.learners,
                              arrays.datasets, h=strategy_bandwidth(strategy))


def check_calibration(meta, strategy=None) -> dict:
    """Leave-one-dataset-out check of :class:`RelativePrior` on ``meta``: each dataset is predicted by a prior fitted
    on the others (with ``strategy``'s bandwidth).

    Returns
    -------
    dict
        ``gap_mae`` and ``gap_coverage`` (mean absolute error of the gap to the best learner, and the share of the
        true gaps inside their 90 % interval, over every (dataset, learner) with a result; ``gap_cells`` of them),
        ``best_mae``, ``best_coverage``, ``best_datasets`` (the same for the best score of each dataset), ``h``.
    """
    from algorank.recommender.kernel.environments import meta_arrays

    arrays = meta_arrays(meta)
    acc, maj = arrays.accuracy, arrays.majority
    table = meta.datasets.set_index("dataset").reindex(list(arrays.datasets))
    infos = [dict(r) for r in table.to_dict("records")]
    feats = meta_feature_matrix(infos)
    h = strategy_bandwidth(strategy)
    n = len(acc)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        best = np.nanmax(acc, axis=1)
    gap_err, gap_in, best_err, best_in = [], [], [], []
    for d in range(n):
        keep = np.arange(n) != d
        prior = fit_relative_prior(acc[keep], maj[keep], feats[keep], arrays.learners,
                                   [arrays.datasets[i] for i in np.flatnonzero(keep)], h=h)
        pred = prior.predict(infos[d])
        for j, learner in enumerate(arrays.learners):
            if np.isfinite(acc[d, j]) and learner in pred["gaps"]:
                g, lo, hi = pred["gaps"][learner]
                truth = acc[d, j] - best[d]
                gap_err.append(abs(g - truth))
                gap_in.append(lo - 1e-12 <= truth <= hi + 1e-12)
        b, lo, hi = pred["best"]
        if np.isfinite(b) and np.isfinite(best[d]):
            best_err.append(abs(b - best[d]))
            best_in.append(lo - 1e-12 <= best[d] <= hi + 1e-12)
    mean = lambda x: float(np.mean(x)) if len(x) else math.nan  # noqa: E731
    return {"gap_mae": mean(gap_err), "gap_coverage": mean(gap_in), "gap_cells": len(gap_err),
            "best_mae": mean(best_err), "best_coverage": mean(best_in), "best_datasets": len(best_err), "h": h}
