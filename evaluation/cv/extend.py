"""Add the runs of new learners to meta-data that is already built, one dataset at a time.

A portfolio grows: new learners are built under the same protocol (same folds, seed and cap per test)
into a folder of their own, by the same ``build-meta`` code with ``learners=``.  :func:`add_learner_runs`
then joins each dataset's new runs into that dataset's existing file, so the assembled set holds every
learner on every dataset without rebuilding the old learners.

The two builds ran at different times, possibly on a machine under a different load.  Both measured
the same calibration workload at their start (:func:`~algorank.evaluation.cv.calibration.calibrate_machine`),
so the new runs' fit and predict times are put on the existing file's scale with
:func:`~algorank.evaluation.cv.calibration.rescale_times` (multiplied by ``calibration of the file /
calibration of the new build``); the datasets table keeps the file's row, with the new build's
calibration and wall time in ``added_calibration_s`` and ``added_wall_s``.
"""

from __future__ import annotations

import logging
import math
import os
from pathlib import Path

import pandas as pd

from algorank.evaluation.cv.buildparts import part_files
from algorank.evaluation.cv.calibration import rescale_times
from algorank.metadata.dataset import MetaDataset
from algorank.metadata.errors import InputError

__all__ = ["add_learner_runs", "PROTOCOL_COLUMNS"]

logger = logging.getLogger(__name__)

#: Columns of the datasets table that must agree between the two builds: the protocol, and the data as
#: the learners saw it (a change in how columns are read changes the features a learner gets).
PROTOCOL_COLUMNS = ("build_folds", "build_seed", "build_cap_s", "n_instances", "n_features")


def _value(table: pd.DataFrame, column: str) -> float:
    if column not in table.columns or not len(table):
        return math.nan
    return float(pd.to_numeric(table[column], errors="coerce").iloc[0])


def _joined(base: MetaDataset, extra: MetaDataset, name: str) -> MetaDataset:
    """``base`` with ``extra``'s runs added (checked, times rescaled)."""
    if tuple(base.dataset_ids) != tuple(extra.dataset_ids) or len(base.dataset_ids) != 1:
        raise InputError(f"{name}: each file must hold the same one dataset (got {list(base.dataset_ids)} and "
                         f"{list(extra.dataset_ids)})")
    if base.task != extra.task:
        raise InputError(f"{name}: the files hold different tasks ({base.task} and {extra.task})")
    for column in PROTOCOL_COLUMNS:
        a, b = _value(base.datasets, column), _value(extra.datasets, column)
        if not (a == b or (math.isnan(a) and math.isnan(b))):
            raise InputError(f"{name}: the builds differ in {column} ({a:g} and {b:g}); only runs of the same "
                             "protocol on the same data can be joined")
    both = sorted(set(base.learner_ids) & set(extra.learner_ids))
    if both:
        raise InputError(f"{name}: learner(s) {', '.join(both[:3])} are in both files; add only new learners")
    runs = extra.runs
    to_c, from_c = _value(base.datasets, "calibration_s"), _value(extra.datasets, "calibration_s")
    if math.isfinite(to_c) and math.isfinite(from_c) and to_c > 0 and from_c > 0:
        runs = rescale_times(runs, from_calibration=from_c, to_calibration=to_c)
    datasets = base.datasets.copy()
    datasets["added_calibration_s"] = from_c
    datasets["added_wall_s"] = _value(extra.datasets, "build_wall_s")
    columns = list(dict.fromkeys(list(base.runs.columns) + list(runs.columns)))
    joined = pd.concat([base.runs.reindex(columns=columns), runs.reindex(columns=columns)], ignore_index=True)
    return MetaDataset(joined, datasets, source=base.source)


def add_learner_runs(base_dir: str | os.PathLike, added_dir: str | os.PathLike) -> dict:
    """Join the per-dataset files of ``added_dir`` (new learners) into those of ``base_dir``, in place.

    Parameters
    ----------
    base_dir : path
        Folder of per-dataset ``.parquet`` files (one dataset each) of the existing build.
    added_dir : path
        Folder of per-dataset files of the new learners, same dataset ids, same protocol.

    Returns
    -------
    dict
        ``joined`` (dataset ids whose file gained runs), ``learners`` (the learners added),
        ``missing`` (datasets of ``base_dir`` without new runs) and ``unmatched`` (files of
        ``added_dir`` without a file in ``base_dir``, left alone).

    Raises
    ------
    InputError
        A folder without files, or a pair of files that cannot be joined (different dataset, task or
        protocol, or a learner in both); nothing is written then.
    """
    base, added = Path(base_dir), Path(added_dir)
    base_files, added_files = part_files(base), part_files(added)
    if not base_files:
        raise InputError(f"no per-dataset .parquet files in {str(base)!r}")
    if not added_files:
        raise InputError(f"no per-dataset .parquet files in {str(added)!r}")
    pairs, learners = {}, set()
    for stem, path in added_files.items():  # every pair checked before any file is written
        if stem in base_files:
            added_meta = MetaDataset.load(path)
            pairs[stem] = _joined(MetaDataset.load(base_files[stem]), added_meta, stem)
            learners.update(added_meta.learner_ids)
    for stem, meta in pairs.items():
        meta.save(base_files[stem])  # atomic: renamed into place
        logger.info("joined the new learners' runs into %s", base_files[stem])
    return {"joined": sorted(pairs), "learners": sorted(learners),
            "missing": sorted(set(base_files) - set(added_files)),
            "unmatched": sorted(set(added_files) - set(base_files))}
