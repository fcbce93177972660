"""The embedded meta-datasets: the LCDB snapshot, the evaluator-built UCI and broad sets, and OBOE's matrices.

Four meta-datasets ship inside the ``metadata`` package, each a Parquet file with a
JSON record of its SHA-256 checksum and basic counts next to it.  ``broad``
(:data:`DEFAULT_META`) is the default of every command and API function:

``lcdb`` (``metadata/data/lcdb_snapshot.parquet``)
    LCDB 0.1.0: 20 learners on 248 datasets, one fit per seed pair, fit times only.
    ``algorank snapshot build`` (``lcdb`` extra) rebuilds it.
``uci`` (``metadata/data/uci_evaluator.parquet``)
    The same 20 learners run by algorank's own evaluator in the live setting
    (stratified 5-fold CV, one repetition, per-fold feature preprocessing, fit and
    predict times) on the public UCI/StatLib classification datasets of
    ``../shared/datasets`` selected by a fixed rule
    (``tests/benchmarks/bench_live_recommend.py``, which also rebuilds it).  Meta-data
    measured the way a live test is run.
``broad`` (``metadata/data/broad_evaluator.parquet``)
    The ``uci`` protocol on every classification dataset of ``../shared/datasets``
    (``uci``, ``statlib``, ``keel``, ``highdim``; about 150 after near-copies, no row
    limit) with a 120 s cap per test, timeouts kept as lower bounds, meta-features
    and a machine-speed calibration per dataset.  Built per dataset into
    ``metadata/data/broad/`` by ``algorank build-meta`` (resumable) and assembled
    by ``build_meta(assemble=True)`` (:mod:`algorank.evaluation.cv.metabuild`).
    The default meta-data until the ``modern`` set, which holds its runs, replaced it.

``oboe`` (``metadata/data/oboe.parquet``)
    OBOE's matrices (Yang et al., KDD 2019; BSD licence in ``OBOE_LICENSE.txt``): 219
    scikit-learn configurations of 12 families on 418 OpenML datasets, one aggregated
    run per cell; the score is OBOE's balanced accuracy (the ``accuracy`` column holds
    the same values, the record names ``"metric": "balanced_accuracy"``), the time its
    cross-validation seconds per fold.  Every configuration is a runnable learner id.
    :func:`algorank.metadata.oboe.build_oboe` (``algorank snapshot build-oboe DIR``) rebuilds it;
    see :mod:`algorank.metadata.oboe`.

``regression`` (``metadata/data/regression_evaluator.parquet``)
    The regression meta-data: the 19 regressors of :mod:`algorank.metadata.regressors` on the
    datasets of the frozen regression list, under the ``broad`` protocol with shuffled k-fold
    (per-fold R², RMSE, MAE; ``accuracy`` holds ``max(R², 0)``).  Built per dataset into
    ``metadata/data/regression/`` by :func:`algorank.build_meta` with ``task="regression"`` and
    assembled with ``assemble=True`` (:mod:`algorank.evaluation.cv.regression_build`); until it is assembled, loading
    it says it is not built yet.

``modern`` (``metadata/data/modern_evaluator.parquet``)
    The ``broad`` datasets and protocol with the modern portfolio's learners added a group at a time
    (:mod:`algorank.evaluation.cv.modern`): LCDB's 20 and, so far, the library defaults of
    histogram gradient boosting, LightGBM, XGBoost and CatBoost.  Its record lists, per group, the
    datasets still without its runs.  The default meta-data of every command.

Next to them, ``metadata/data/lcdb_growth.csv`` holds each LCDB learner's growth exponent of fit
time in the training rows from LCDB's learning curves (:mod:`algorank.metadata.growth`, the held-out LCDB
datasets left out), which the runtime model uses to
extrapolate beyond its meta-data's sizes.

Any of these names is accepted wherever a meta-data path is (``meta="uci"``).
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from importlib import resources
from pathlib import Path

from .dataset import MetaDataset
from .errors import InputError
from .io import atomic_write_text, check_out_dir, output_folder

__all__ = ["SNAPSHOT_FILE", "SNAPSHOT_RECORD", "EMBEDDED", "DEFAULT_META", "snapshot_path", "snapshot_record", "load_snapshot",
           "load_embedded", "embedded_path", "embedded_available", "embedded_record", "load_meta", "build_snapshot", "file_sha256"]

logger = logging.getLogger(__name__)

SNAPSHOT_FILE = "lcdb_snapshot.parquet"
SNAPSHOT_RECORD = "lcdb_snapshot.json"

#: Embedded meta-datasets: name -> (Parquet file, JSON record) in ``metadata/data``.
EMBEDDED = {
    "lcdb": (SNAPSHOT_FILE, SNAPSHOT_RECORD),
    "uci": ("uci_evaluator.parquet", "uci_evaluator.json"),
    "broad": ("broad_evaluator.parquet", "broad_evaluator.json"),
    "oboe": ("oboe.parquet", "oboe.json"),
    "rdatasets": ("fresh_rdatasets.parquet", "fresh_rdatasets.json"),
    "regression": ("regression_evaluator.parquet", "regression_evaluator.json"),
    "modern": ("modern_evaluator.parquet", "modern_evaluator.json"),
}

#: The meta-data every command, API function and the estimator use when none is given.
DEFAULT_META = "modern"


def file_sha256(path: str | Path) -> str:
    """Hex SHA-256 digest of a file."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def snapshot_path() -> Path:
    """Path of the embedded snapshot file (inside the installed package)."""
    return Path(str(resources.files(__package__).joinpath("data", SNAPSHOT_FILE)))


def snapshot_record() -> dict:
    """The recorded checksum and counts of the embedded snapshot."""
    text = resources.files(__package__).joinpath("data", SNAPSHOT_RECORD).read_text(encoding="utf-8")
    return json.loads(text)


@functools.lru_cache(maxsize=1)
def load_snapshot() -> MetaDataset:
    """Load the embedded snapshot (cached; treat the result as read-only)."""
    path = snapshot_path()
    if not path.is_file():
        raise InputError(f"the embedded snapshot is missing at {path}; rebuild it with 'algorank snapshot build'")
    from .lcdb import complete_sizes

    return complete_sizes(MetaDataset.load(path))


def _embedded_name(name: str) -> str:
    if name not in EMBEDDED:
        raise InputError(f"unknown embedded meta-data {name!r}; known: {', '.join(EMBEDDED)}")
    return name


def embedded_path(name: str) -> Path:
    """Path of the Parquet file of the embedded meta-dataset ``name`` (see :data:`EMBEDDED`)."""
    file, _ = EMBEDDED[_embedded_name(name)]
    return Path(str(resources.files(__package__).joinpath("data", file)))


def embedded_available(name: str) -> bool:
    """Whether the embedded meta-dataset ``name`` is installed (its file and its record exist)."""
    file, record = EMBEDDED[_embedded_name(name)]
    base = resources.files(__package__).joinpath("data")
    return base.joinpath(file).is_file() and base.joinpath(record).is_file()


def embedded_record(name: str) -> dict:
    """The recorded checksum, counts and provenance of the embedded meta-dataset ``name``."""
    _, record = EMBEDDED[_embedded_name(name)]
    path = resources.files(__package__).joinpath("data", record)
    if not path.is_file():
        raise InputError(f"the embedded meta-data {name!r} is not built yet (no {record}); "
                         "see algorank.evaluation.cv.metabuild.build_meta")
    return json.loads(path.read_text(encoding="utf-8"))


def load_embedded(name: str) -> MetaDataset:
    """Load the embedded meta-dataset ``name`` (cached; treat the result as read-only)."""
    if _embedded_name(name) == "lcdb":
        return load_snapshot()
    return _load_embedded_file(name)


@functools.lru_cache(maxsize=None)
def _load_embedded_file(name: str) -> MetaDataset:
    path = embedded_path(name)
    if not path.is_file():
        embedded_record(name)  # a set whose build was never assembled says so
        raise InputError(f"the embedded meta-data {name!r} is missing at {path}")
    return MetaDataset.load(path, source=embedded_record(name).get("source"))


def load_meta(path=None, *, default: str = DEFAULT_META) -> MetaDataset:
    """Load meta-data from a file ``path``, an ASlib scenario folder, or an embedded name (``"lcdb"``, ``"uci"``, ``"broad"``, ``"oboe"``,
    ``"rdatasets"``, ``"regression"``, ``"modern"``).

    ``None`` (or an empty list) loads the embedded meta-dataset ``default`` (``modern``); a
    :class:`MetaDataset` is returned as it is; a list of paths, names and MetaDatasets loads
    each and joins them (:meth:`MetaDataset.concat`, dataset ids must not repeat).  A name is
    read as a file when a file of that name exists.  The one loader behind every command, the
    API and :class:`~algorank.AlgorankClassifier`.
    """
    if path is None:
        return load_embedded(default)
    if isinstance(path, MetaDataset):
        return path
    if isinstance(path, (list, tuple)):
        if not path:
            return load_embedded(default)
        return MetaDataset.concat([load_meta(p, default=default) for p in path])
    if isinstance(path, str) and path in EMBEDDED and not Path(path).exists():
        return load_embedded(path)
    if isinstance(path, (str, Path)) and not Path(path).exists():
        raise InputError(f"meta-data file not found: {path}{_embedded_hint(str(path))}")
    if Path(path).is_dir():
        from .aslib import is_aslib_dir, read_aslib

        if is_aslib_dir(path):
            return read_aslib(path)
        raise InputError(f"meta-data path is a folder, not a file: {path} (and not an ASlib scenario: it needs description.txt and "
                         "algorithm_runs.arff)")
    return MetaDataset.load(path)


def _embedded_hint(name: str) -> str:
    """``; did you mean 'lcdb'? embedded sets: ...`` for a meta-data name that is no file (the closest embedded set)."""
    import difflib

    names = [DEFAULT_META, *(n for n in EMBEDDED if n != DEFAULT_META)]
    close = difflib.get_close_matches(name.strip().lower(), names, n=1, cutoff=0.6)
    if close:
        return f"; did you mean {close[0]!r}? embedded sets: {', '.join(names)}"
    return f" (embedded sets: {', '.join(names)})"


def build_snapshot(out_dir: str | Path | None = None, *, lcdb_dir: str | Path | None = None) -> dict:
    """Rebuild the snapshot from the installed ``lcdb`` package.

    Parameters
    ----------
    out_dir : path, optional
        Where to write the Parquet file and its JSON record; defaults to the
        package's own data folder.
    lcdb_dir : path, optional
        Folder of LCDB's files (defaults to the installed package).

    Returns
    -------
    dict
        The written record: file name, sha256, counts and source.
    """
    from .lcdb import read_lcdb

    out = Path(out_dir) if out_dir is not None else snapshot_path().parent
    check_out_dir(out)
    meta = read_lcdb(lcdb_dir)
    target = out / SNAPSHOT_FILE
    desc = meta.describe()
    record = {
        "file": SNAPSHOT_FILE,
        "sha256": None,  # set once written
        "datasets": desc.datasets,
        "learners": desc.learners,
        "cells": desc.cells,
        "runs": desc.runs,
        "source": desc.source,
    }
    with output_folder(out):
        meta.save(target)
        record["sha256"] = file_sha256(target)
        atomic_write_text(out / SNAPSHOT_RECORD, json.dumps(record, indent=2) + "\n")
    load_snapshot.cache_clear()
    logger.info("wrote %s (%d runs, sha256 %s)", target, desc.runs, record["sha256"][:12])
    return record
