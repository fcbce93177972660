"""Build a :class:`~algorank.metadata.dataset.MetaDataset` from the ``lcdb`` package (LCDB).

LCDB (Mohr, Viering, Loog, van Rijn; "LCDB 1.0: An extensive learning curves
database for classification tasks", ECML-PKDD 2022) holds learning curves of 20
scikit-learn classifiers on about 250 OpenML datasets.  For every dataset we keep
its *largest* training size and every ``(outer_seed, inner_seed)`` evaluation at
that size as one paired repeat (``repeat`` = index of the seed pair in sorted
order, ``fold = 0``): ``score_test`` becomes ``accuracy`` and ``traintime``
becomes ``fit_time``.  LCDB records no prediction time, so ``predict_time`` is NaN.

The package's files are located without importing it (``import lcdb`` needs the
undeclared ``func_timeout``, and imports ``openml`` eagerly).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import logging
from pathlib import Path

import numpy as np
import pandas as pd

from .dataset import MetaDataset
from .errors import InputError

__all__ = ["lcdb_location", "read_lcdb"]

logger = logging.getLogger(__name__)

_RUN_USECOLS = ["openmlid", "learner", "size_train", "outer_seed", "inner_seed", "traintime", "score_test"]
_QUALITY_COLUMNS = {
    "NumberOfInstances": "n_instances",
    "NumberOfFeatures": "n_features",
    "NumberOfClasses": "n_classes",
}


def lcdb_location() -> Path:
    """Folder of the installed ``lcdb`` package.

    Raises
    ------
    InputError
        When the package is not installed (``pip install 'algorank[lcdb]'``).
    """
    spec = importlib.util.find_spec("lcdb")
    if spec is None or not spec.submodule_search_locations:
        raise InputError("the lcdb package is not installed: pip install 'algorank[lcdb]'")
    return Path(list(spec.submodule_search_locations)[0])


def _version() -> str:
    try:
        return importlib.metadata.version("lcdb")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - installed from a checkout
        return "unknown"


def read_lcdb(location: str | Path | None = None, *, metric_file: str = "database-accuracy.csv") -> MetaDataset:
    """Read LCDB into a MetaDataset (largest training size per dataset, all seed pairs).

    Parameters
    ----------
    location : path, optional
        Folder holding ``database-accuracy.csv`` and ``datasets.csv``;
        defaults to the installed ``lcdb`` package.
    metric_file : str
        The database file to read (accuracy by default).

    Returns
    -------
    MetaDataset
        Dataset ids are OpenML ids as strings; the datasets table carries every
        OpenML quality LCDB ships plus ``n_instances``, ``n_features``,
        ``n_classes``, ``majority_fraction`` (MajorityClassSize / NumberOfInstances).
        Datasets missing from LCDB's ``datasets.csv`` keep NaN meta-features.
    """
    folder = Path(location) if location is not None else lcdb_location()
    runs_path = folder / metric_file
    if not runs_path.is_file():
        raise InputError(f"LCDB file not found: {runs_path}")
    logger.info("reading %s", runs_path)
    raw = pd.read_csv(
        runs_path,
        usecols=_RUN_USECOLS,
        dtype={"openmlid": np.int64, "learner": "category", "size_train": np.int64,
               "outer_seed": np.int64, "inner_seed": np.int64, "traintime": float, "score_test": float},
    )
    largest = raw.groupby("openmlid")["size_train"].transform("max")
    raw = raw[raw["size_train"] == largest]
    pairs = raw[["openmlid", "outer_seed", "inner_seed"]].drop_duplicates().sort_values(
        ["openmlid", "outer_seed", "inner_seed"]
    )
    pairs["repeat"] = pairs.groupby("openmlid").cumcount()
    raw = raw.merge(pairs, on=["openmlid", "outer_seed", "inner_seed"], how="left")
    runs = pd.DataFrame(
        {
            "dataset": raw["openmlid"].astype(str),
            "learner": raw["learner"].astype(str),
            "repeat": raw["repeat"].astype(np.int64),
            "fold": np.zeros(len(raw), dtype=np.int64),
            "accuracy": raw["score_test"].astype(float),
            "fit_time": raw["traintime"].astype(float),
            "predict_time": np.full(len(raw), np.nan),
            "status": "ok",
            "outer_seed": raw["outer_seed"].astype(np.int16),
            "inner_seed": raw["inner_seed"].astype(np.int16),
            "train_size": raw["size_train"].astype(np.int64),
        }
    ).sort_values(["dataset", "learner", "repeat"], kind="stable")
    datasets = _read_datasets(folder / "datasets.csv", sorted(runs["dataset"].unique()))
    return MetaDataset(runs, datasets, source=f"lcdb {_version()} (largest training size, all seed pairs)")


def _read_datasets(path: Path, ids: list[str]) -> pd.DataFrame:
    table = pd.DataFrame({"dataset": ids})
    if not path.is_file():
        logger.warning("LCDB datasets.csv not found at %s: meta-features left empty", path)
        return table
    meta = pd.read_csv(path)
    meta["dataset"] = meta["openmlid"].astype(int).astype(str)
    meta = meta.rename(columns={"Name": "name", **_QUALITY_COLUMNS})
    meta["majority_fraction"] = meta["MajorityClassSize"] / meta["n_instances"]
    meta["source"] = "lcdb:" + meta["dataset"]
    meta = meta.drop(columns=["openmlid"])
    table = table.merge(meta, on="dataset", how="left")
    table["source"] = table["source"].fillna("lcdb:" + table["dataset"])
    undescribed = int(table["name"].isna().sum())
    if undescribed:
        logger.info("%d of %d LCDB datasets have no row in datasets.csv (meta-features NaN)", undescribed, len(ids))
    return table
