"""The API's meta-data building functions: :func:`build_meta` (the evaluator's embedded sets, classification
or regression), :func:`build_snapshot` (LCDB) and :func:`build_oboe` (OBOE's matrices).

They are part of :mod:`algorank.api` (imported there); this module keeps the API's module to one job's size.
"""

from __future__ import annotations

from typing import Sequence

from algorank.metadata.errors import InputError
from algorank.results import DatasetSelection, RecordResult

__all__ = ["build_meta", "build_snapshot", "build_oboe"]


def build_meta(*, shared_dir=None, out_dir=None, datasets: Sequence[str] | None = None, cap: float = 120.0,
               folds: int = 5, n_jobs: int = 1, calibrate: bool = True, list_only: bool = False,
               assemble: bool = False, assemble_to=None, progress: bool = False, portfolio: str = "lcdb",
               task: str = "classification"):
    """Build the broad evaluator meta-data (one file per dataset, resumable), list its datasets, or assemble it.

    With ``task="regression"``: the regression meta-data instead (the 19 regressors on the datasets of
    the frozen regression list, each target named and read as a quantity, shuffled k-fold; per-dataset
    files default to ``metadata/data/regression``, assembled into the embedded ``regression`` set;
    :mod:`algorank.evaluation.cv.regression_build`).

    Parameters
    ----------
    shared_dir : path, optional
        Folder with ``datasets/MANIFEST.csv`` (default ``$ALGORANK_SHARED``, else ``../shared``).
    out_dir : path, optional
        Per-dataset files (default ``metadata/data/broad``); datasets whose file exists are skipped.
    datasets : sequence of str, optional
        Build only these dataset ids.
    cap, folds, n_jobs, calibrate, progress, portfolio
        See :func:`~algorank.evaluation.cv.metabuild.build_meta`, :func:`~algorank.evaluation.cv.portfolios.build_args`.
    list_only : bool
        Only select the datasets (:class:`~algorank.results.DatasetSelection`).
    task : {"classification", "regression"}
        Which meta-data to build, list or assemble.
    assemble : bool
        Do not build: concatenate the files under ``out_dir`` into the embedded set, written to
        ``assemble_to`` (:class:`~algorank.results.RecordResult`).

    Returns
    -------
    BuildSummary, DatasetSelection or RecordResult

    Examples
    --------
    List what a build would run, cheapest first, without running it:

    >>> import algorank
    >>> sel = algorank.build_meta(list_only=True)  # doctest: +SKIP
    >>> print(sel.to_text())  # doctest: +SKIP
    """
    import contextlib

    from algorank.evaluation.cv import metabuild, portfolios, regression_build
    from algorank.metadata.io import check_out_dir, created_folders, output_folder, write_error

    if task not in ("classification", "regression"):
        raise InputError(f"task must be 'classification' or 'regression', got {task!r}")
    regression = task == "regression"
    if regression and portfolio != "lcdb":
        raise InputError("portfolio chooses classifiers; the regression build runs the 19 regressors (leave it out)")
    if list_only:
        items = (regression_build.select_regression_datasets(only=datasets)[0] if regression else
                 metabuild.select_datasets(shared_dir, only=datasets))
        return DatasetSelection(items=tuple(items))
    try:
        if assemble:
            if assemble_to is not None:
                check_out_dir(assemble_to, option="assemble_to")
            with output_folder(assemble_to) if assemble_to is not None else contextlib.nullcontext():
                record = (regression_build.assemble_regression(out_dir, assemble_to) if regression else
                          metabuild.assemble_broad(out_dir, assemble_to, shared_dir=shared_dir))
            counts = ("datasets", "learners", "cells", "runs", "ok_runs", "error_runs", "timeout_runs", "timeout_tests")
            keys = (("file", "sha256", "bytes", "task", *counts, "complete") if regression else
                    ("file", "sha256", "bytes", *counts, "collections", "complete"))
            return RecordResult(record=record, keys=keys)
        if out_dir is not None:
            check_out_dir(out_dir)
        if regression:
            out = out_dir if out_dir is not None else regression_build.default_regression_out_dir()
            with created_folders(out):
                return regression_build.build_regression(only=datasets, shared_dir=shared_dir, out_dir=out, cap=cap,
                                                         folds=folds, n_jobs=n_jobs, calibrate=calibrate,
                                                         progress=progress)
        args = portfolios.build_args(portfolio, out_dir)
        # a failure (a full disk) removes the folders the build created while they hold nothing
        with created_folders(args["out_dir"] if args["out_dir"] is not None else metabuild.default_out_dir()):
            return metabuild.build_meta(only=datasets, shared_dir=shared_dir, cap=cap, folds=folds, n_jobs=n_jobs,
                                        calibrate=calibrate, progress=progress, **args)
    except OSError as exc:  # a full disk or a folder that cannot be written while building
        raise write_error(exc, assemble_to if assemble else out_dir) from None


def build_snapshot(*, out_dir=None, lcdb_dir=None) -> RecordResult:
    """Rebuild the embedded LCDB snapshot and its growth table from the ``lcdb`` package (``snapshot build``)."""
    from algorank.metadata.growth import build_growth
    from algorank.metadata.io import check_out_dir
    from algorank.metadata.snapshot import build_snapshot as _build

    if out_dir is not None:
        check_out_dir(out_dir)
    record = _build(out_dir, lcdb_dir=lcdb_dir)
    growth = build_growth(out_dir, lcdb_dir=lcdb_dir)
    return RecordResult(record={**record, "growth": growth})


def build_oboe(source, *, out_dir=None) -> RecordResult:
    """Rebuild the embedded ``oboe`` set from OBOE's matrices in the folder ``source`` (``snapshot build-oboe``)."""
    from algorank.metadata.io import check_out_dir
    from algorank.metadata.oboe import build_oboe as _build

    if out_dir is not None:
        check_out_dir(out_dir)
    return RecordResult(record=_build(source, out_dir))
