"""What the classification and the regression meta-data builds share.

The one-dataset build of :mod:`algorank.evaluation.cv.metabuild` serves both tasks; the pieces that
depend on the task (how a dataset is loaded, its meta-features, the default learners, the extra
columns of its row) are here, as is the assembly of the per-dataset files into one embedded set
(used by :func:`~algorank.evaluation.cv.metabuild.assemble_broad` and
:func:`~algorank.evaluation.cv.regression_build.assemble_regression`).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Sequence

import pandas as pd

from algorank.metadata.dataset import MetaDataset
from algorank.metadata.errors import InputError

from algorank.evaluation.cv.calibration import CALIBRATION_WORKLOAD

__all__ = ["REGRESSION_SOURCE", "REGRESSION_RUN_ORDER", "part_files", "keep_only", "load_item", "item_features", "item_columns",
           "load_parts", "save_within", "run_counts", "column_counts", "cap_record", "calibration_record",
           "write_record"]

REGRESSION_SOURCE = ("algorank evaluator (shuffled 5-fold CV x1, seed 0, 120 s cap per test) on the regression "
                     "datasets of metadata/data/splits/regression_datasets.csv (evaluation/cv/regression_build.py)")
#: Runs columns of a regression test: ``accuracy`` is the score ``max(r2, 0)``, ``r2`` keeps negative values.
REGRESSION_RUN_ORDER = ["dataset", "learner", "repeat", "fold", "accuracy", "fit_time", "predict_time", "status",
                        "model_bytes", "message", "r2", "rmse", "mae"]


# ====================================================================== selection
def keep_only(ids: Sequence[str], only: Sequence[str], *, what: str) -> set[str]:
    """The ids of ``only``, each checked to be among ``ids``.

    Parameters
    ----------
    ids : sequence of str
        The ids that may be kept.
    only : sequence of str
        The ids asked for.
    what : str
        The end of the message naming what the ids must be, and how the unknown ones are called.

    Raises
    ------
    InputError
        ``datasets must be <what>: <the first five unknown ids>``.
    """
    wanted = [str(d) for d in only]
    unknown = [d for d in wanted if d not in ids]
    if unknown:
        raise InputError(f"datasets must be {what}: {', '.join(unknown[:5])}{' ...' if len(unknown) > 5 else ''}")
    return set(wanted)


# ====================================================================== one dataset, by task
def load_item(item, datasets_dir: str | os.PathLike | None):
    """Load a build item (a :class:`~algorank.evaluation.cv.metabuild.BroadDataset`) as its task asks.

    A regression item's named target is read as a quantity, never left to the automatic rule; a
    classification item's target goes through the loader's rule.

    Raises
    ------
    InputError
        A regression item without a target, or a file that loads under another dataset id.
    """
    from algorank.evaluation.cv.datasets import load_dataset

    if item.task == "regression":
        if not item.target:
            raise InputError(f"the regression dataset {item.dataset!r} must name its target")
        data = load_dataset(str(item.location(datasets_dir)), target=item.target, task="regression")
    else:
        data = load_dataset(str(item.location(datasets_dir)), target=item.target)
    if data.name != item.dataset:
        raise InputError(f"dataset id mismatch: {item.file} loads as {data.name!r}, expected {item.dataset!r}")
    return data


def item_features(item, data, *, random_state: int) -> tuple[dict, list[str]]:
    """The meta-features of a loaded build item and its task's default learner ids."""
    if item.task == "regression":
        from algorank.evaluation.cv.metafeatures import regression_meta_features
        from algorank.metadata.regressors import regressor_ids

        return regression_meta_features(data, random_state=random_state), regressor_ids()
    from algorank.evaluation.cv.metafeatures import dataset_meta_features
    from algorank.metadata.learners import learner_ids

    return dataset_meta_features(data, random_state=random_state), learner_ids()


def item_columns(item) -> dict:
    """The datasets-table columns a regression item adds (``task`` and ``target``); none for classification."""
    return {"task": "regression", "target": item.target} if item.task == "regression" else {}


# ====================================================================== assembly
def part_files(folder: str | os.PathLike) -> dict[str, Path]:
    """The per-dataset ``.parquet`` files of a build folder by dataset id (file stem), sorted; hidden files
    (a write in progress) are passed over."""
    return {p.stem: p for p in sorted(Path(folder).glob("*.parquet")) if not p.name.startswith(".")}


def load_parts(parts: Path, *, task: str, source: str, hint: str) -> MetaDataset:
    """The per-dataset files of ``parts`` concatenated, each checked to hold meta-data of ``task``.

    Parameters
    ----------
    parts : Path
        Folder of the per-dataset ``.parquet`` files (hidden files are passed over).
    task : {"classification", "regression"}
    source : str
        The assembled meta-data's source line.
    hint : str
        What the message says to do when the folder holds no file.

    Raises
    ------
    InputError
        No file, or a file of the other task (the classification set is never written from
        regression files, nor the regression set from classification files).
    """
    files = list(part_files(parts).values())
    if not files:
        raise InputError(f"no per-dataset .parquet files in {str(parts)!r}; {hint}")
    metas = [MetaDataset.load(p) for p in files]
    regression = task == "regression"
    other = [p.name for p, m in zip(files, metas) if (m.task == "regression") != regression]
    if other:
        listed = f"{', '.join(other[:3])}{' ...' if len(other) > 3 else ''}"
        raise InputError(f"{str(parts)!r} holds files that are not regression meta-data ({listed}); assemble only "
                         "the regression build's folder" if regression else
                         f"{str(parts)!r} holds regression files ({listed}); assemble them with task='regression'")
    meta = MetaDataset.concat(metas)
    return MetaDataset(meta.runs, meta.datasets, source=source)


def save_within(meta: MetaDataset, target: Path, max_bytes: int) -> int:
    """Save ``meta`` to ``target`` and return its size; a file above ``max_bytes`` is removed and refused."""
    meta.save(target)
    size = target.stat().st_size
    if size > max_bytes:
        target.unlink()
        raise InputError(f"the assembled file is {size} bytes, above max_bytes={max_bytes}")
    return size


def run_counts(meta: MetaDataset) -> dict:
    """The record's counts: ``datasets``, ``learners``, ``cells``, ``runs``, runs by status and timed-out tests."""
    runs = meta.runs
    status = runs["status"].value_counts()
    tests = runs.groupby(["dataset", "learner"])["status"]
    desc = meta.describe()
    return {"datasets": desc.datasets, "learners": desc.learners, "cells": desc.cells, "runs": desc.runs,
            "ok_runs": int(status.get("ok", 0)), "error_runs": int(status.get("error", 0)),
            "timeout_runs": int(status.get("timeout", 0)),
            "timeout_tests": int(tests.apply(lambda s: (s == "timeout").any()).sum())}


def column_counts(ds: pd.DataFrame, column: str) -> dict:
    """Rows of the datasets table per value of ``column``, sorted by value (empty when there is no such column)."""
    return {str(k): int(v) for k, v in ds[column].value_counts().sort_index().items()} if column in ds else {}


def cap_record(ds: pd.DataFrame):
    """The build's time cap in seconds (a list when the datasets were built with different caps)."""
    caps = sorted(set(pd.to_numeric(ds.get("build_cap_s", pd.Series(dtype=float)), errors="coerce").dropna()))
    return caps[0] if len(caps) == 1 else caps


def calibration_record(ds: pd.DataFrame, *, apply: str | None = None) -> dict:
    """The record's ``calibration``: the workload, the median/min/max seconds, ``apply`` (when given), the machines."""
    calib = pd.to_numeric(ds.get("calibration_s", pd.Series(dtype=float)), errors="coerce").dropna()
    return {
        "workload": CALIBRATION_WORKLOAD,
        "median_s": float(calib.median()) if len(calib) else None,
        "min_s": float(calib.min()) if len(calib) else None,
        "max_s": float(calib.max()) if len(calib) else None,
        "per_dataset": "datasets table, column calibration_s",
        **({"apply": apply} if apply is not None else {}),
        "machines": sorted(set(ds["build_machine"].dropna().astype(str))) if "build_machine" in ds else [],
    }


def write_record(record: dict, path: Path, *, target: Path, what: str, log: logging.Logger) -> dict:
    """Write the JSON record of an assembled file and log (on the build's ``log``) what was assembled.

    ``what`` says whose datasets the record's ``missing`` lists (``selected``, ``listed``).
    """
    from algorank.metadata.io import atomic_write_text, json_dumps

    atomic_write_text(path, json_dumps(record) + "\n")
    log.info("wrote %s: %d datasets, %d runs (%d timeout), %d bytes; %d %s dataset(s) missing",
                target, record["datasets"], record["runs"], record["timeout_runs"], record["bytes"],
                len(record["missing"]), what)
    return record
