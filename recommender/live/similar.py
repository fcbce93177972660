"""The prior datasets most similar to a new one, for reports (``Recommendation.similar``)."""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np

from algorank.recommender.similarity import feature_center_scale, meta_feature_matrix, similarity_weights

__all__ = ["similar_datasets"]


def similar_datasets(meta, dataset_info: Mapping, *, k: int = 5, prior=None) -> tuple:
    """The ``k`` prior datasets of ``meta`` most similar to the new one by simple meta-features.

    Parameters
    ----------
    meta : MetaDataset
    dataset_info : mapping
        The new dataset's meta-features.
    k : int
        How many.
    prior : RelativePrior, optional
        When given, its datasets and weights (:meth:`~algorank.recommender.live.prior.RelativePrior.weights`, the
        strategy's own similarity and bandwidth): the list then shows the datasets that weigh most in what the
        strategy expects.  Else every dataset of ``meta`` with bandwidth 1.

    Returns
    -------
    tuple of dict
        ``dataset``, ``name``, ``similarity`` (kernel weight, 1 = identical meta-features), ``share`` (its weight's
        share of all the weights), ``n_instances``, ``n_features``, ``n_classes``, ``majority_fraction``, most
        similar first.
    """
    table = meta.datasets.reset_index(drop=True)
    if not len(table):
        return ()
    if prior is not None:
        table = meta.datasets.set_index("dataset").reindex(list(prior.datasets)).reset_index()
        w = np.asarray(prior.weights(dataset_info), dtype=float)
    else:
        feats = meta_feature_matrix(table.to_dict("records"))
        query = meta_feature_matrix([dict(dataset_info)])[0]
        center, scale = feature_center_scale(feats)
        w = similarity_weights(feats, query, h=1.0, center=center, scale=scale)
    total = float(w.sum())
    out = []
    for i in np.argsort(-w, kind="stable")[: max(0, int(k))]:
        row = table.iloc[int(i)]
        name = row.get("name", row["dataset"])
        out.append({"dataset": str(row["dataset"]), "name": str(row["dataset"] if name != name else name),
                    "similarity": float(w[i]), "share": float(w[i] / total) if total > 0 else math.nan,
                    **{c: float(row[c]) if c in row and row[c] == row[c] else math.nan
                       for c in ("n_instances", "n_features", "n_classes", "majority_fraction")}})
    return tuple(out)
