"""The embedded LCDB snapshot: the default meta-data of every command.

The snapshot is a Parquet file shipped inside the ``metadata`` package
(``metadata/data/lcdb_snapshot.parquet``) with a JSON record of its SHA-256
checksum and basic counts next to it.  ``algorank snapshot build`` (which needs
the ``lcdb`` extra) rebuilds both from the installed ``lcdb`` package.
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
from .io import atomic_write_text

__all__ = ["SNAPSHOT_FILE", "SNAPSHOT_RECORD", "snapshot_path", "snapshot_record", "load_snapshot", "load_meta",
           "build_snapshot", "file_sha256"]

logger = logging.getLogger(__name__)

SNAPSHOT_FILE = "lcdb_snapshot.parquet"
SNAPSHOT_RECORD = "lcdb_snapshot.json"


def file_sha256(path: str | Path) -> str:
    """Hex SHA-256 digest of a file."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def snapshot_path() -> Path:
    """Path of the embedded snapshot file (inside the installed package)."""
    return Path(str(resources.files("metadata").joinpath("data", SNAPSHOT_FILE)))


def snapshot_record() -> dict:
    """The recorded checksum and counts of the embedded snapshot."""
    text = resources.files("metadata").joinpath("data", SNAPSHOT_RECORD).read_text(encoding="utf-8")
    return json.loads(text)


@functools.lru_cache(maxsize=1)
def load_snapshot() -> MetaDataset:
    """Load the embedded snapshot (cached; treat the result as read-only)."""
    path = snapshot_path()
    if not path.is_file():
        raise InputError(f"the embedded snapshot is missing at {path}; rebuild it with 'algorank snapshot build'")
    return MetaDataset.load(path)


def load_meta(path: str | Path | None = None) -> MetaDataset:
    """Load meta-data from ``path``, or the embedded snapshot when ``path`` is None."""
    return load_snapshot() if path is None else MetaDataset.load(path)


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

    meta = read_lcdb(lcdb_dir)
    out = Path(out_dir) if out_dir is not None else snapshot_path().parent
    target = out / SNAPSHOT_FILE
    meta.save(target)
    desc = meta.describe()
    record = {
        "file": SNAPSHOT_FILE,
        "sha256": file_sha256(target),
        "datasets": desc.datasets,
        "learners": desc.learners,
        "cells": desc.cells,
        "runs": desc.runs,
        "source": desc.source,
    }
    atomic_write_text(out / SNAPSHOT_RECORD, json.dumps(record, indent=2) + "\n")
    load_snapshot.cache_clear()
    logger.info("wrote %s (%d runs, sha256 %s)", target, desc.runs, record["sha256"][:12])
    return record
