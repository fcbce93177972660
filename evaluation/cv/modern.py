"""The ``modern`` meta-data: the broad build's 20 LCDB learners with the modern portfolio's learner groups.

The modern portfolio (:func:`algorank.metadata.learners.learner_ids` with ``portfolio="modern"``) costs tens
of CPU hours to build on every dataset, so it is built a group of learners at a time, each group under the
broad build's protocol into a folder of its own (``metadata/data/modern_parts/<group>``), and joined into
the broad build's per-dataset files with :func:`~algorank.evaluation.cv.extend.add_learner_runs`.

Some of the broad build's files predate column rules added later (an id or free-text column is now
dropped), so their learners saw one more feature than a new group does, and the join refuses them. For
those datasets the 20 LCDB learners were rebuilt under the current rules
(``modern_parts/lcdb_rebuilt``), and the rebuilt file takes the place of the broad one.

:func:`compose_modern` writes the joined per-dataset files into a folder; :func:`assemble_modern` composes
them in a temporary folder and writes the embedded ``modern_evaluator.parquet`` with its JSON record.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from pathlib import Path
from typing import Sequence

from algorank.evaluation.cv import buildparts
from algorank.evaluation.cv.extend import add_learner_runs
from algorank.evaluation.cv.metabuild import PROTOCOL, default_out_dir, write_embedded
from algorank.metadata.errors import InputError

__all__ = ["MODERN_GROUPS", "REBUILT_GROUP", "MODERN_SOURCE", "default_parts_dir", "compose_modern",
           "assemble_modern"]

logger = logging.getLogger(__name__)

#: The learner groups joined into the modern set, in join order (folders of ``modern_parts``; the learners of a
#: group are those its files hold).
MODERN_GROUPS = ("defaults", "ag2023_boosting")
#: Folder of the LCDB 20 rebuilt under the current column rules (they replace the broad files).
REBUILT_GROUP = "lcdb_rebuilt"
MODERN_SOURCE = ("algorank evaluator (stratified 5-fold CV x1, seed 0, 120 s cap per test) on every classification "
                 "dataset of shared/datasets (uci, statlib, keel, highdim): the 20 LCDB learners of the broad build and "
                 "the modern portfolio's learner groups, joined per dataset (evaluation/cv/modern.py)")
_FILE = "modern_evaluator.parquet"
_RECORD = "modern_evaluator.json"


def default_parts_dir() -> Path:
    """``metadata/data/modern_parts`` of the checkout (one folder per learner group)."""
    return default_out_dir().parent / "modern_parts"


def compose_modern(out_dir: str | os.PathLike, *, base_dir: str | os.PathLike | None = None,
                   parts_dir: str | os.PathLike | None = None, groups: Sequence[str] | None = None) -> dict:
    """Write the modern set's per-dataset files into ``out_dir`` (which must be empty or absent).

    Parameters
    ----------
    out_dir : path
        Folder to write; an existing folder must hold no ``.parquet`` file.
    base_dir : path, optional
        The broad build's per-dataset files (default ``metadata/data/broad``).
    parts_dir : path, optional
        Folder of the learner groups and of ``lcdb_rebuilt`` (default ``metadata/data/modern_parts``).
    groups : list of str, optional
        Learner groups to join, in order (default: every group of :data:`MODERN_GROUPS` whose folder exists).

    Returns
    -------
    dict
        ``datasets`` (files written), ``rebuilt`` (datasets whose broad file was replaced), and per group
        ``joined`` (datasets that gained its runs) and ``missing`` (datasets without its runs yet).

    Raises
    ------
    InputError
        ``out_dir`` already holds files, a folder is missing, or a group's file cannot be joined (different
        protocol or data); then ``out_dir`` holds no partial set.
    """
    out = Path(out_dir)
    base = Path(base_dir) if base_dir is not None else default_out_dir()
    parts = Path(parts_dir) if parts_dir is not None else default_parts_dir()
    if out.exists() and buildparts.part_files(out):
        raise InputError(f"out_dir {str(out)!r} already holds .parquet files; give an empty folder")
    base_files = buildparts.part_files(base)
    if not base_files:
        raise InputError(f"no per-dataset .parquet files in base_dir {str(base)!r}")
    rebuilt = buildparts.part_files(parts / REBUILT_GROUP) if (parts / REBUILT_GROUP).is_dir() else {}
    unknown = sorted(set(rebuilt) - set(base_files))
    if unknown:
        raise InputError(f"{REBUILT_GROUP} holds datasets the base build lacks: {', '.join(unknown[:3])}")
    if groups is None:
        groups = [g for g in MODERN_GROUPS if (parts / g).is_dir()]
    for g in groups:
        if not (parts / g).is_dir():
            raise InputError(f"no folder for learner group {g!r} in {str(parts)!r}")
    out.mkdir(parents=True, exist_ok=True)
    summary = {"datasets": len(base_files), "rebuilt": sorted(rebuilt), "groups": {}}
    try:
        for name, path in base_files.items():
            shutil.copyfile(rebuilt.get(name, path), out / path.name)
        for g in groups:
            result = add_learner_runs(out, parts / g)
            summary["groups"][g] = {"learners": result["learners"], "joined": len(result["joined"]),
                                    "missing": result["missing"]}
            logger.info("group %s: joined on %d datasets, %d without its runs", g, len(result["joined"]),
                        len(result["missing"]))
    except BaseException:
        for p in out.glob("*.parquet"):
            p.unlink()
        raise
    return summary


def assemble_modern(parts_dir: str | os.PathLike | None = None, out_dir: str | os.PathLike | None = None, *,
                    base_dir: str | os.PathLike | None = None, shared_dir: str | os.PathLike | None = None,
                    max_bytes: int = 15_000_000) -> dict:
    """Compose the modern set and write the embedded ``modern_evaluator.parquet`` with its JSON record.

    Parameters
    ----------
    parts_dir, base_dir : path, optional
        As in :func:`compose_modern`.
    out_dir : path, optional
        Where the two files go (default: the ``metadata/data`` folder of the checkout).
    shared_dir : path, optional
        Where the MANIFEST is found, to list the selected datasets without runs.
    max_bytes : int
        Size limit of the Parquet file.

    Returns
    -------
    dict
        The written record: that of :func:`~algorank.evaluation.cv.metabuild.assemble_broad`, plus
        ``learner_groups`` (per group: its learners and the datasets still without its runs) and ``rebuilt``.
    """
    target_dir = Path(out_dir) if out_dir is not None else default_out_dir().parent
    with tempfile.TemporaryDirectory(prefix="algorank-modern-") as tmp:
        summary = compose_modern(Path(tmp) / "parts", base_dir=base_dir, parts_dir=parts_dir)
        meta = buildparts.load_parts(Path(tmp) / "parts", task="classification", source=MODERN_SOURCE,
                                     hint="the broad build's files are missing")
    extra = {
        "protocol": PROTOCOL + "; the learner groups below were built under the same protocol and joined per dataset",
        "learner_groups": {g: {"learners": v["learners"], "missing": v["missing"]}
                           for g, v in summary["groups"].items()},
        "rebuilt": summary["rebuilt"],
    }
    return write_embedded(meta, target_dir, _FILE, _RECORD, shared_dir=shared_dir, max_bytes=max_bytes,
                          extra=extra)
