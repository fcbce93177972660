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
from typing import Sequence

import numpy as np
import pandas as pd

from .dataset import MetaDataset
from .errors import InputError

__all__ = ["lcdb_location", "read_lcdb", "complete_sizes", "growth_exponents", "LARGEST_TRAIN_FRACTION"]

logger = logging.getLogger(__name__)

_RUN_USECOLS = ["openmlid", "learner", "size_train", "outer_seed", "inner_seed", "traintime", "score_test"]
#: LCDB's largest training set is 90 % of the 90 % outer-training part of a dataset: 0.81 of its rows
#: (measured on the snapshot's 197 datasets with ``NumberOfInstances``: median 0.8099, quartiles 0.8097-0.8100).
LARGEST_TRAIN_FRACTION = 0.81

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


def _version(folder: str | Path | None = None) -> str:
    """Installed ``lcdb`` version, or the one in ``PKG-INFO`` next to an unpacked ``folder``."""
    if folder is not None:
        info = Path(folder).parent / "PKG-INFO"
        if info.is_file():
            for line in info.read_text(encoding="utf-8", errors="replace").splitlines():
                if line.startswith("Version:"):
                    return line.split(":", 1)[1].strip()
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
    meta = MetaDataset(runs, datasets, source=f"lcdb {_version(folder)} (largest training size, all seed pairs)")
    return complete_sizes(meta)


def complete_sizes(meta: MetaDataset) -> MetaDataset:
    """Fill ``n_instances`` of LCDB datasets that ``datasets.csv`` does not describe.

    51 of LCDB 0.1's 248 datasets have no row in its ``datasets.csv``, so every meta-feature
    of theirs is NaN, and a runtime model would treat a 1-million-row dataset like an average
    one.  Their rows are known from the runs themselves: the largest ``train_size`` is
    :data:`LARGEST_TRAIN_FRACTION` of the rows.  Filled values are flagged in the column
    ``n_instances_from_train_size``; described datasets are left as they are.

    Returns
    -------
    MetaDataset
        ``meta`` itself when nothing is missing or the runs have no ``train_size``, else a copy.
    """
    table = meta.datasets
    if "train_size" not in meta.runs.columns or "n_instances" not in table.columns:
        return meta
    missing = table["n_instances"].isna()
    if "n_instances_from_train_size" in table.columns or not missing.any():
        return meta
    largest = meta.runs.groupby("dataset", observed=True)["train_size"].max()
    estimate = (largest / LARGEST_TRAIN_FRACTION).round()
    table = table.copy()
    fill = table.loc[missing, "dataset"].map(estimate)
    table.loc[missing, "n_instances"] = fill
    table["n_instances_from_train_size"] = missing & fill.reindex(table.index).notna()
    logger.debug("n_instances of %d LCDB datasets estimated from their largest training size",
                 int(table["n_instances_from_train_size"].sum()))
    return MetaDataset(meta.runs, table, source=meta.source)


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


def growth_exponents(location: str | Path | None = None, *, metric_file: str = "database-accuracy.csv",
                     exclude: Sequence[str] = (), min_rows: int = 1000, min_seconds: float = 0.05) -> pd.DataFrame:
    """How each learner's fit time grows with the training rows, from LCDB's learning curves.

    For every (dataset, learner), the median ``traintime`` over seed pairs at each training size
    of at least ``min_rows`` rows (below that fixed costs dominate) and ``min_seconds`` seconds
    (timer noise) is regressed on the size in log-log; the slope is the exponent ``a`` of
    ``time ~ rows ** a`` within that dataset.  A curve needs 3 such sizes spanning at least a
    factor 2.  Per learner the median over datasets is reported with its quartiles.

    Unlike a slope across datasets (where larger datasets also differ in features, classes and
    difficulty), this compares the same learner on the same data at different sizes: it is how
    the runtime model extrapolates beyond the sizes of its own meta-data
    (:mod:`algorank.recommender.runtime_model`).

    Parameters
    ----------
    location : path, optional
        Folder holding ``database-accuracy.csv`` (default: the installed ``lcdb`` package).
    metric_file : str
        LCDB database file (every one holds the same ``traintime``).
    exclude : sequence of str
        OpenML ids of datasets left out (the embedded table leaves LCDB's frozen held-out split
        out, so no held-out benchmark sees its own curves).
    min_rows : int
        Smallest training size used.
    min_seconds : float
        Smallest median time used.

    Returns
    -------
    DataFrame
        Columns ``learner``, ``exponent`` (median), ``q25``, ``q75``, ``n_datasets``; one row per
        learner with at least one usable curve, sorted by learner.

    Raises
    ------
    InputError
        When the file is missing or has no usable curve.
    """
    folder = Path(location) if location is not None else lcdb_location()
    path = folder / metric_file
    if not path.is_file():
        raise InputError(f"LCDB file not found: {path}")
    raw = pd.read_csv(path, usecols=["openmlid", "learner", "size_train", "traintime"],
                      dtype={"openmlid": np.int64, "learner": str, "size_train": np.int64, "traintime": float})
    raw = raw[~raw["openmlid"].astype(str).isin({str(e) for e in exclude})]
    cells = raw.groupby(["openmlid", "learner", "size_train"], sort=True)["traintime"].median().reset_index()
    cells = cells[(cells["size_train"] >= min_rows) & (cells["traintime"] >= min_seconds)]
    slopes = []
    for (_, learner), curve in cells.groupby(["openmlid", "learner"], sort=True):
        n = curve["size_train"].to_numpy(dtype=float)
        if len(n) < 3 or n.max() < 2 * n.min():
            continue
        slope = np.polyfit(np.log10(n), np.log10(curve["traintime"].to_numpy(dtype=float)), 1)[0]
        slopes.append((learner, float(slope)))
    if not slopes:
        raise InputError(f"no learning curve in {path} has 3 sizes >= {min_rows} rows taking >= {min_seconds} s")
    table = pd.DataFrame(slopes, columns=["learner", "slope"]).groupby("learner")["slope"]
    out = pd.DataFrame({"exponent": table.median(), "q25": table.quantile(0.25), "q75": table.quantile(0.75),
                        "n_datasets": table.size()}).reset_index()
    return out.sort_values("learner", kind="stable").reset_index(drop=True)
