"""Similarity of datasets by simple meta-features: shared by the ``lt`` strategy and recommend's expected values.

A prior dataset ``d_i`` gets the weight ``exp(-dist_i ** 2 / (2 h ** 2))`` where ``dist_i`` is the
root mean squared difference of standardised simple meta-features (``log10 n_instances``,
``log10 n_features``, ``log10 n_classes``, ``majority_fraction``) between the new dataset and
``d_i``, over the features known for both (no feature in common: weight 0 unless ``h = inf``).
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np

__all__ = ["META_FEATURES", "meta_feature_matrix", "feature_center_scale", "similarity_weights"]

#: Simple meta-features used for similarity (log10 of the first three).
META_FEATURES = ("n_instances", "n_features", "n_classes", "majority_fraction")


def meta_feature_matrix(rows: Sequence[Mapping]) -> np.ndarray:
    """Meta-feature vectors (log10 n_instances, log10 n_features, log10 n_classes, majority_fraction).

    Missing or non-positive counts become NaN.
    """
    out = np.full((len(rows), len(META_FEATURES)), np.nan)
    for i, row in enumerate(rows):
        for j, key in enumerate(META_FEATURES):
            try:
                v = float(row.get(key, np.nan))
            except (TypeError, ValueError):
                v = np.nan
            if j < 3:
                v = math.log10(v) if v == v and v > 0 else np.nan
            out[i, j] = v
    return out


def feature_center_scale(feats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column means and standard deviations over the finite values, without warnings.

    A column with no finite value gets center 0 and scale 1; a constant column scale 1.
    """
    feats = np.asarray(feats, dtype=float)
    ok = np.isfinite(feats)
    n = ok.sum(axis=0)
    safe = np.maximum(n, 1)
    center = np.where(n > 0, np.where(ok, feats, 0.0).sum(axis=0) / safe, 0.0)
    var = np.where(ok, (feats - center) ** 2, 0.0).sum(axis=0) / safe
    scale = np.sqrt(var)
    return center, np.where((n > 0) & (scale > 0), scale, 1.0)


def similarity_weights(prior: np.ndarray, query: np.ndarray, *, h: float, center: np.ndarray,
                       scale: np.ndarray) -> np.ndarray:
    """Gaussian-kernel weights of prior datasets for one query (see the module docstring)."""
    if math.isinf(h):
        return np.ones(prior.shape[0])
    z = (prior - center) / scale
    q = (query - center) / scale
    d2 = (z - q) ** 2
    ok = ~np.isnan(d2)
    mean_d2 = np.where(ok, d2, 0.0).sum(axis=1) / np.maximum(ok.sum(axis=1), 1)
    return np.where(ok.any(axis=1), np.exp(-0.5 * mean_d2 / h**2), 0.0)
