"""Is the user's dataset one of the meta-data's prior datasets?  A check on content, not on the name alone.

When the dataset being ranked is in the meta-data, its own recorded results inform the
ranking, and a test of algorank on it is not honest.  A name is weak evidence: a user's
``diabetes.csv`` (442 rows, a numeric target) is not the ``diabetes`` of the meta-data
(768 rows, two classes).  :func:`overlap_matches` is the one rule:

1. where the meta-data records a hash of a prior dataset's values (the ``fingerprint``
   column: SHA-256 of the features, labels and column names as
   :meth:`~algorank.evaluation.cv.datasets.LoadedDataset.fingerprint` computes it; ``algorank
   evaluate`` and ``build-meta`` record it), the prior dataset matches when the hashes are equal,
   whatever the names;
2. where it records no hash, only its numbers of rows, features and classes, the prior dataset
   matches when the name (its id or its name) **and** those three numbers are all equal (the
   features counted after the column rules of :mod:`algorank.evaluation.cv.columns`, or as read);
   a number the meta-data does not record (or that is unknown for the new dataset) never matches.

Each match says which rule found it (``by``: ``"values"`` or ``"name and shape"``).
"""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np

__all__ = ["overlap_matches", "SHAPE_KEYS", "describe_matches"]

#: The numbers compared when the meta-data records no hash of the values.
SHAPE_KEYS = ("n_instances", "n_features", "n_classes")


def _number(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def overlap_matches(meta, dataset_info: Mapping, *, fingerprint: str | None = None,
                    n_features_read: int | None = None) -> tuple:
    """Prior datasets of ``meta`` that are the new dataset, by the rule of the module docstring.

    Parameters
    ----------
    meta : MetaDataset
        The meta-data (its ``datasets`` table).
    dataset_info : mapping
        The new dataset's ``name`` (or ``dataset``) and ``n_instances``, ``n_features``, ``n_classes``.
    fingerprint : str, optional
        The hash of the new dataset's values (:meth:`LoadedDataset.fingerprint`).
    n_features_read : int, optional
        The number of feature columns as read, before the column rules dropped or expanded some
        (meta-data built before those rules counted them so): either number matches.

    Returns
    -------
    tuple of dict
        ``{"dataset": id, "by": "values" | "name and shape", "shape": (rows, features, classes)}``
        in the meta-data's order.
    """
    table = meta.datasets
    if len(table) == 0:
        return ()
    name = str(dataset_info.get("name", dataset_info.get("dataset", "")))
    ids = table["dataset"].astype(str).to_numpy()
    names = table["name"].astype(str).to_numpy() if "name" in table else ids
    same_name = (ids == name) | (names == name)
    shape = np.ones(len(table), dtype=bool)
    for key in SHAPE_KEYS:
        recorded = table[key].to_numpy(dtype=float) if key in table else np.full(len(table), np.nan)
        same = recorded == _number(dataset_info.get(key, math.nan))  # NaN never matches
        if key == "n_features" and n_features_read is not None:
            same |= recorded == _number(n_features_read)
        shape &= same
    hashed = np.zeros(len(table), dtype=bool)
    same_values = np.zeros(len(table), dtype=bool)
    if "fingerprint" in table:
        recorded = table["fingerprint"]
        hashed = recorded.notna().to_numpy() & (recorded.astype(str).str.len() > 0).to_numpy()
        if fingerprint:
            same_values = hashed & (recorded.astype(str).to_numpy() == str(fingerprint))
    by_shape = ~hashed & same_name & shape
    out = []
    for i in np.flatnonzero(same_values | by_shape):
        row = table.iloc[i]
        out.append({"dataset": str(ids[i]), "by": "values" if same_values[i] else "name and shape",
                    "shape": tuple(_number(row.get(k)) for k in SHAPE_KEYS)})
    return tuple(out)


def describe_matches(matches) -> str:
    """The matches in words: ``d (same values), e (same name and shape: 150 rows, 4 features, 3 classes)``."""
    parts = []
    for m in matches:
        if m["by"] == "values":
            parts.append(f"{m['dataset']} (same values)")
        else:
            r, f, c = (int(x) if x == x else x for x in m["shape"])
            parts.append(f"{m['dataset']} (same name and shape: {r} rows, {f} features, {c} classes; the meta-data "
                         "records no hash of its values to confirm it)")
    return ", ".join(parts)
