"""OBOE's error and runtime matrices as a meta-dataset (the embedded set ``"oboe"``).

OBOE (C. Yang, Y. Akimoto, D. W. Kim, M. Udell, "OBOE: Collaborative Filtering for AutoML
Model Selection", KDD 2019; BSD-3-Clause, ``metadata/data/OBOE_LICENSE.txt``) ran 219
scikit-learn configurations of 12 algorithm families on 418 OpenML classification datasets.
Its repository (``udellgroup/oboe``, ``oboe/defaults/Oboe/``, snapshot of 2021-10-22; a copy
is in ``../shared/metadata/oboe``) ships four files, read here:

``error_matrix.csv``
    datasets (row index: zero-padded OpenML dataset id) x configurations (column header: a
    Python dict literal ``{'algorithm': ..., 'hyperparameters': {...}}``), OBOE's
    cross-validated *balanced error rate* (BER).  No missing cell.
``runtime_matrix.csv``
    the same shape: wall-clock seconds OBOE measured for that cell.
``dataset_sizes.csv``
    per dataset id, column ``0`` = rows, column ``1`` = columns of OBOE's preprocessed table
    (one-hot encoded features *plus the class column*); its row order differs from the
    matrices' (joined on the id).
``classification.json``
    the configuration grid.

What the runs table holds
-------------------------
One run per (dataset, configuration), ``repeat = fold = 0`` (aggregated values), all ``ok``.

``balanced_accuracy`` = 1 - BER, exactly as OBOE recorded it.  OBOE's BER (``util.error``)
is the mean over the classes ``c`` of the one-vs-rest balanced error
``1 - (TPR_c + TNR_c) / 2``.  On a binary dataset this is ``1 -`` scikit-learn's
``balanced_accuracy_score``; on a dataset with ``k > 2`` classes it is
``(mean recall + mean specificity) / 2``, which is higher than scikit-learn's balanced
accuracy (mean recall).  A constant predictor scores 0.5 on every dataset.
``accuracy`` holds **the same values**: OBOE recorded no plain accuracy, and the runs schema
requires the column, so every strategy and benchmark that ranks by its default metric ranks
this set by OBOE's balanced accuracy; the embedded record says so
(``"metric": "balanced_accuracy"``).  Do not join this set with accuracy-based meta-data
(``load_meta(["oboe", "uci"])``): their ``accuracy`` columns would mean different things.

``fit_time`` = OBOE's seconds / :data:`OBOE_CV_FOLDS`.  OBOE's ``generate_vector.py`` times
the whole ``kfold_fit_validate`` call of a configuration: ``k`` fits *and* predictions (plus
scoring), single-threaded (``mkl.set_num_threads(1)``), on OBOE's machines.  The matrices
do not record ``k``; the ``generate_vector.py`` shipped with these files defaults to 5 (an
earlier version to 10, in which case the per-fold times here are about twice too high).
Divided by 5, a value is the time of one fold (fit + predict), which is what the live time
model multiplies by the folds of a live test (``5 x t + overhead``).  ``predict_time`` is NaN
(included in ``fit_time``, not recorded apart).  A constant factor does not change A3R
rankings (they use time ratios on one dataset).

The datasets table: ``dataset`` = the OpenML id without padding, ``source`` = ``openml:<id>``,
``n_instances`` = rows, ``n_features`` = OBOE's preprocessed columns minus the class
column (i.e. after one-hot encoding).  ``n_classes`` (and ``name``) are filled for the
datasets that are also in the embedded LCDB snapshot with the same OpenML id and the same
number of rows (89 of 418); NaN elsewhere (OBOE's files do not record them).
``majority_fraction`` is NaN everywhere: benchmarks use it as the *score* of the default
model before any test, and in balanced accuracy that score is not the majority-class
fraction; they then use the worst configuration's score instead.

Configurations -> runnable scikit-learn estimators
-------------------------------------------------
Each configuration becomes a learner id ``sklearn.module.Class{"param": value, ...}`` (JSON
parameters, sorted keys; see :mod:`algorank.metadata.learners`) that ``recommend(..., meta="oboe")`` can run.
OBOE's own code (``util.py``) imports ``KNN = KNeighborsClassifier``, ``DT =
DecisionTreeClassifier``, ``RF = RandomForestClassifier``, ``ExtraTrees =
ExtraTreesClassifier``, ``GBT = GradientBoostingClassifier``, ``AB = AdaBoostClassifier``,
``lSVM = LinearSVC``, ``kSVM = SVC``, ``Logit = LogisticRegression``, ``Perceptron``,
``GNB = GaussianNB``, ``MLP = MLPClassifier``, and passes the grid's hyperparameters
unchanged (and ``random_state=0``, which algorank replaces by its own seed).  The matrices
were computed with a scikit-learn older than 0.22 (OBOE's preprocessing used ``Imputer``
and ``OneHotEncoder(categorical_features=...)``, both gone in 0.22, and its random forests
cost ~2.3x a decision tree, as 10 trees do, not ~12x as 100 do).  Defaults that changed since
then are pinned where scikit-learn 1.9 still offers the old behaviour:

* ``RF``, ``ExtraTrees``: ``n_estimators = 10`` (the default before 0.22; 100 since).
* ``kSVM``: ``gamma = "auto"`` (``1 / n_features``, the default before 0.22; ``"scale"``
  since).  OBOE standardised every column, one-hot ones included, so ``"scale"`` equalled
  ``"auto"`` there; algorank's preprocessing leaves one-hot columns unscaled.
* ``Logit``: ``sklearn.multiclass.OneVsRestClassifier`` around ``LogisticRegression``.
  Before 0.22 ``multi_class`` defaulted to ``"ovr"`` for every solver; scikit-learn 1.9
  removed ``multi_class``, fits ``saga`` multinomially and refuses ``liblinear`` on more
  than two classes.  The wrapper restores one-vs-rest (on two classes it fits the one binary
  model).  ``penalty`` is deprecated since 1.8: ``"l1"`` -> ``l1_ratio = 1.0``, ``"l2"`` ->
  ``l1_ratio = 0.0``.

Not reproducible in scikit-learn 1.9 (kept as the closest runnable estimator, noted here):

* ``AB``: OBOE's AdaBoost ran ``algorithm="SAMME.R"`` (the old default); 1.9 has only SAMME.
* ``Perceptron``: scikit-learn 0.19/0.20 stopped after 5 epochs (``max_iter=None``); 0.21+
  and 1.9 default to ``max_iter=1000, tol=1e-3``.  OBOE's version is not known exactly, so the
  current default is kept; the id is the portfolio's ``sklearn.linear_model.Perceptron``.
* ``lSVM``: ``LinearSVC`` defaulted to ``dual=True``; 1.9's ``dual="auto"`` picks the primal
  problem when rows outnumber features: the same optimum, another solver and run time.
* ``GBT``: ``criterion`` (``"friedman_mse"``, unchanged) and ``presort`` are left to the
  defaults.

Scaling: OBOE standardised every column; algorank standardises the numeric columns of
import-path learners by default (:mod:`algorank.evaluation.cv.preprocessing`), which every family gets:
needed by KNN, the SVMs, logistic regression, the perceptron and the MLP, harmless for the
tree ensembles, AdaBoost stumps and Gaussian naive Bayes (invariant to per-feature scaling).

Rebuild the embedded file with :func:`build_oboe` (``algorank snapshot build-oboe DIR``).
"""

from __future__ import annotations

import ast
import json
import logging
import shutil
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from .dataset import MetaDataset
from .errors import InputError
from .io import atomic_path, atomic_write_text
from .learners import NESTED_CLASS_KEY

__all__ = ["OBOE_FAMILIES", "OBOE_CV_FOLDS", "OBOE_FILE", "OBOE_RECORD", "OBOE_LICENSE_FILE", "OBOE_CITATION",
           "OBOE_SOURCE", "OBOE_INPUTS", "parse_oboe_header", "oboe_learner_id", "read_oboe", "build_oboe"]

logger = logging.getLogger(__name__)

#: Folds of the cross-validation OBOE timed (the default of its generate_vector.py); see the module notes.
OBOE_CV_FOLDS = 5

#: Embedded file names in ``metadata/data``.
OBOE_FILE = "oboe.parquet"
OBOE_RECORD = "oboe.json"
OBOE_LICENSE_FILE = "OBOE_LICENSE.txt"

#: The files read from an OBOE folder.
OBOE_INPUTS = ("error_matrix.csv", "runtime_matrix.csv", "dataset_sizes.csv", "classification.json", "LICENSE.txt")

OBOE_CITATION = ("C. Yang, Y. Akimoto, D. W. Kim, M. Udell, \"OBOE: Collaborative Filtering for AutoML Model "
                 "Selection\", Proceedings of the 25th ACM SIGKDD International Conference on Knowledge Discovery "
                 "and Data Mining (KDD 2019)")

OBOE_SOURCE = ("OBOE error and runtime matrices (udellgroup/oboe, oboe/defaults/Oboe, snapshot of 2021-10-22): "
               "1 - balanced error rate as balanced_accuracy (also in the accuracy column), runtime / 5 as fit_time")

#: OBOE algorithm name -> (scikit-learn class path, parameters pinned on top of the grid's).
OBOE_FAMILIES: Mapping[str, tuple[str, dict]] = {
    "KNN": ("sklearn.neighbors.KNeighborsClassifier", {}),
    "DT": ("sklearn.tree.DecisionTreeClassifier", {}),
    "RF": ("sklearn.ensemble.RandomForestClassifier", {"n_estimators": 10}),
    "ExtraTrees": ("sklearn.ensemble.ExtraTreesClassifier", {"n_estimators": 10}),
    "GBT": ("sklearn.ensemble.GradientBoostingClassifier", {}),
    "AB": ("sklearn.ensemble.AdaBoostClassifier", {}),
    "lSVM": ("sklearn.svm.LinearSVC", {}),
    "kSVM": ("sklearn.svm.SVC", {"gamma": "auto"}),
    "Logit": ("sklearn.linear_model.LogisticRegression", {}),  # wrapped one-vs-rest, see oboe_learner_id
    "Perceptron": ("sklearn.linear_model.Perceptron", {}),
    "GNB": ("sklearn.naive_bayes.GaussianNB", {}),
    "MLP": ("sklearn.neural_network.MLPClassifier", {}),
}

_OVR = "sklearn.multiclass.OneVsRestClassifier"
_L1_RATIO = {"l1": 1.0, "l2": 0.0}


def parse_oboe_header(header: str) -> tuple[str, dict]:
    """``(algorithm, hyperparameters)`` of one column header of OBOE's matrices.

    The header is a Python dict literal, read with :func:`ast.literal_eval` (literals only,
    nothing is executed).

    Raises
    ------
    InputError
        When the header is not such a literal or names an unknown algorithm.
    """
    try:
        value = ast.literal_eval(str(header))
    except (ValueError, SyntaxError) as exc:
        raise InputError(f"OBOE column header {header!r} is not a Python dict literal: {exc}") from None
    if not isinstance(value, dict) or not isinstance(value.get("hyperparameters", {}), dict) or "algorithm" not in value:
        raise InputError(f"OBOE column header {header!r} must be {{'algorithm': ..., 'hyperparameters': {{...}}}}")
    if value["algorithm"] not in OBOE_FAMILIES:
        raise InputError(f"OBOE column header {header!r}: unknown algorithm {value['algorithm']!r}; "
                         f"known: {', '.join(OBOE_FAMILIES)}")
    return str(value["algorithm"]), dict(value.get("hyperparameters") or {})


def _json_id(path: str, params: Mapping[str, Any]) -> str:
    if not params:
        return path
    return path + json.dumps(dict(params), sort_keys=True, allow_nan=False)


def oboe_learner_id(algorithm: str, hyperparameters: Mapping[str, Any]) -> str:
    """The algorank learner id of one OBOE configuration (a runnable scikit-learn estimator).

    Parameters
    ----------
    algorithm : str
        OBOE's algorithm name (a key of :data:`OBOE_FAMILIES`).
    hyperparameters : mapping
        OBOE's hyperparameters of the configuration (JSON literals).

    Returns
    -------
    str
        ``sklearn.module.Class{"param": value, ...}`` with sorted keys, the grid's values (types
        kept: ``2`` and ``2.0`` mean different things for ``min_samples_split``) plus the pinned
        parameters of :data:`OBOE_FAMILIES`; ``Logit`` becomes a one-vs-rest wrapper around
        ``LogisticRegression`` with ``penalty`` turned into ``l1_ratio``; a configuration
        without parameters is the bare class path.

    Examples
    --------
    >>> oboe_learner_id("RF", {"min_samples_split": 2, "criterion": "gini"})
    'sklearn.ensemble.RandomForestClassifier{"criterion": "gini", "min_samples_split": 2, "n_estimators": 10}'
    """
    if algorithm not in OBOE_FAMILIES:
        raise InputError(f"unknown OBOE algorithm {algorithm!r}; known: {', '.join(OBOE_FAMILIES)}")
    path, pinned = OBOE_FAMILIES[algorithm]
    params = dict(hyperparameters)
    clash = sorted(set(params) & set(pinned))
    if clash:
        raise InputError(f"OBOE {algorithm} configuration sets pinned parameter(s) {', '.join(clash)}")
    params.update(pinned)
    if algorithm == "Logit":
        penalty = params.pop("penalty", "l2")
        if penalty not in _L1_RATIO:
            raise InputError(f"OBOE Logit penalty must be l1 or l2; got {penalty!r}")
        params["l1_ratio"] = _L1_RATIO[penalty]
        return _json_id(_OVR, {"estimator": {NESTED_CLASS_KEY: path, **params}})
    return _json_id(path, params)


def _oboe_folder(folder: str | Path) -> Path:
    path = Path(folder)
    missing = [f for f in OBOE_INPUTS if not (path / f).is_file()]
    if missing:
        raise InputError(f"{path} is not an OBOE folder: missing {', '.join(missing)} "
                         "(expected OBOE's oboe/defaults/Oboe files, e.g. ../shared/metadata/oboe)")
    return path


def _lcdb_facts() -> pd.DataFrame:
    """name, n_instances, n_classes of the embedded LCDB snapshot's datasets (OpenML ids)."""
    from .snapshot import load_snapshot

    return load_snapshot().datasets.set_index("dataset")[["name", "n_instances", "n_classes"]]


def _read_matrix(file, what: str) -> pd.DataFrame:
    """One OBOE matrix as floats, each cell the correctly rounded value of its decimal text.

    Read as text and converted by Python's ``float``: pandas' own CSV float parser is not correctly
    rounded before pandas 3.1 (a last-bit difference in a fifth of the cells), which would make the
    embedded file depend on the pandas version that built it.
    """
    frame = pd.read_csv(file, index_col=0, dtype=str, keep_default_na=False)
    try:
        values = np.asarray(frame.to_numpy(dtype=object), dtype=object).astype(float)
        index = [int(i) for i in frame.index]
    except (TypeError, ValueError):
        raise InputError(f"OBOE {what} matrix must hold a number in every cell, under integer dataset ids") from None
    return pd.DataFrame(values, index=index, columns=frame.columns)


def read_oboe(folder: str | Path) -> MetaDataset:
    """Read OBOE's matrices into a :class:`~algorank.metadata.dataset.MetaDataset` (see the module notes).

    Parameters
    ----------
    folder : path
        Folder holding :data:`OBOE_INPUTS` (e.g. ``../shared/metadata/oboe``).

    Returns
    -------
    MetaDataset
        418 datasets x 219 learners, one run per cell.

    Raises
    ------
    InputError
        Missing files, matrices of different shapes or labels, missing or out-of-range
        values, a header that does not parse, or two configurations with the same id.
    """
    path = _oboe_folder(folder)
    errors = _read_matrix(path / "error_matrix.csv", "error")
    runtimes = _read_matrix(path / "runtime_matrix.csv", "runtime")
    sizes = pd.read_csv(path / "dataset_sizes.csv", index_col=0)
    if errors.shape != runtimes.shape or list(errors.columns) != list(runtimes.columns) \
            or list(errors.index) != list(runtimes.index):
        raise InputError(f"OBOE error and runtime matrices differ in shape or labels: {errors.shape} vs {runtimes.shape}")
    e, t = errors.to_numpy(), runtimes.to_numpy()
    if not np.isfinite(e).all() or (e < 0).any() or (e > 1).any():
        raise InputError("OBOE error matrix must hold balanced error rates in [0, 1] in every cell")
    if not np.isfinite(t).all() or (t < 0).any():
        raise InputError("OBOE runtime matrix must hold finite seconds >= 0 in every cell")
    configs = [parse_oboe_header(h) for h in errors.columns]
    grid = json.loads((path / "classification.json").read_text(encoding="utf-8"))
    unknown = sorted({a for a, _ in configs} - set(grid.get("algorithms", [])))
    if unknown:
        raise InputError(f"OBOE matrices hold algorithm(s) {', '.join(unknown)} that classification.json lacks")
    learners = [oboe_learner_id(a, h) for a, h in configs]
    if len(set(learners)) != len(learners):
        raise InputError("two OBOE configurations map to the same learner id")
    datasets = [str(int(i)) for i in errors.index]
    n_d, n_l = e.shape
    runs = pd.DataFrame({
        "dataset": np.repeat(datasets, n_l),
        "learner": np.tile(learners, n_d),
        "repeat": 0,
        "fold": 0,
        "accuracy": 1.0 - e.ravel(),
        "fit_time": t.ravel() / OBOE_CV_FOLDS,
        "predict_time": np.nan,
        "status": "ok",
        "balanced_accuracy": 1.0 - e.ravel(),
    })
    sizes.index = [str(int(i)) for i in sizes.index]
    absent = sorted(set(datasets) - set(sizes.index))
    if absent:
        raise InputError(f"dataset_sizes.csv lacks OBOE dataset(s) {', '.join(absent[:5])}")
    table = pd.DataFrame({
        "dataset": datasets,
        "name": datasets,
        "source": [f"openml:{d}" for d in datasets],
        "n_instances": sizes.loc[datasets, "0"].to_numpy(dtype=float),
        "n_features": sizes.loc[datasets, "1"].to_numpy(dtype=float) - 1.0,
        "n_classes": np.nan,
        "majority_fraction": np.nan,
    }).set_index("dataset")
    lcdb = _lcdb_facts()
    same = [d for d in datasets if d in lcdb.index and lcdb.at[d, "n_instances"] == table.at[d, "n_instances"]]
    table.loc[same, "n_classes"] = lcdb.loc[same, "n_classes"].to_numpy(dtype=float)
    table.loc[same, "name"] = lcdb.loc[same, "name"].astype(str).to_numpy()
    logger.info("read OBOE: %d datasets x %d configurations; n_classes from the LCDB snapshot for %d datasets",
                n_d, n_l, int(table.loc[same, "n_classes"].notna().sum()))
    return MetaDataset(runs, table.reset_index(), source=OBOE_SOURCE)


def _clear_cache() -> None:
    from . import snapshot

    snapshot._load_embedded_file.cache_clear()  # a rebuilt file in the package folder is read afresh


def build_oboe(folder: str | Path, out_dir: str | Path | None = None) -> dict:
    """Rebuild the embedded ``oboe`` meta-dataset from an OBOE folder.

    Writes :data:`OBOE_FILE` (zstd Parquet), its JSON record :data:`OBOE_RECORD` (checksum,
    counts, metric, time, licence, citation, the SHA-256 of every input file) and
    :data:`OBOE_LICENSE_FILE` (OBOE's BSD licence text, copied unchanged), atomically.

    Parameters
    ----------
    folder : path
        Folder holding :data:`OBOE_INPUTS` (e.g. ``../shared/metadata/oboe``).
    out_dir : path, optional
        Where to write; defaults to the package's own data folder.

    Returns
    -------
    dict
        The written record.
    """
    from .snapshot import embedded_path, file_sha256

    path = _oboe_folder(folder)
    meta = read_oboe(path)
    out = Path(out_dir) if out_dir is not None else embedded_path("oboe").parent
    target = out / OBOE_FILE
    meta.save(target)
    with atomic_path(out / OBOE_LICENSE_FILE) as tmp:
        shutil.copyfile(path / "LICENSE.txt", tmp)
    desc = meta.describe()
    record = {
        "file": OBOE_FILE,
        "sha256": file_sha256(target),
        "datasets": desc.datasets,
        "learners": desc.learners,
        "cells": desc.cells,
        "runs": desc.runs,
        "source": desc.source,
        "metric": "balanced_accuracy",
        "accuracy_column": "the same values as balanced_accuracy (1 - OBOE's balanced error rate); OBOE recorded "
                           "no plain accuracy",
        "balanced_error": "OBOE's BER: mean over classes of the one-vs-rest balanced error 1 - (TPR + TNR) / 2 "
                          "(= 1 - sklearn balanced_accuracy_score on two classes)",
        "time": f"fit_time = OBOE's seconds for its whole k-fold cross-validation of the configuration "
                f"(fits and predictions) / {OBOE_CV_FOLDS}; predict_time NaN",
        "datasets_table": "n_instances and n_features (after one-hot encoding, class column excluded) from "
                          "dataset_sizes.csv; n_classes and name from the embedded LCDB snapshot where the OpenML "
                          "id and row count agree, else NaN; majority_fraction NaN",
        "licence": f"BSD-3-Clause, Copyright (c) 2021, Chengrun Yang ({OBOE_LICENSE_FILE})",
        "citation": OBOE_CITATION,
        "inputs": {f: file_sha256(path / f) for f in OBOE_INPUTS},
    }
    atomic_write_text(out / OBOE_RECORD, json.dumps(record, indent=2) + "\n")
    _clear_cache()
    logger.info("wrote %s (%d runs, sha256 %s)", target, desc.runs, record["sha256"][:12])
    return record
