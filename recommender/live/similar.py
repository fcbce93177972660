"""The prior datasets most similar to a new one, for reports (``Recommendation.similar``)."""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np

from algorank.recommender.similarity import feature_center_scale, meta_feature_matrix, similarity_weights

__all__ = ["similar_datasets"]


def similar_datasets(meta, dataset_info: Mapping, *, k: int = 5) -> tuple:
    """The ``k`` prior datasets of ``meta`` most similar to the new one by simple meta-features.

    Returns
    -------
    tuple of dict
        ``dataset``, ``name``, ``similarity`` (kernel weight, 1 = identical meta-features),
        ``n_instances``, ``n_features``, ``n_classes``, ``majority_fraction``, most similar first.
    """
    table = meta.datasets.reset_index(drop=True)
    if not len(table):
        return ()
    feats = meta_feature_matrix(table.to_dict("records"))
    query = meta_feature_matrix([dict(dataset_info)])[0]
    center, scale = feature_center_scale(feats)
    w = similarity_weights(feats, query, h=1.0, center=center, scale=scale)
    out = []
    for i in np.argsort(-w, kind="stable")[: max(0, int(k))]:
        row = table.iloc[int(i)]
        out.append({"dataset": str(row["dataset"]), "name": str(row.get("name", row["dataset"])),
                    "similarity": float(w[i]),
                    **{c: float(row[c]) if c in row and row[c] == row[c] else math.nan
                       for c in ("n_instances", "n_features", "n_classes", "majority_fraction")}})
    return tuple(out)
