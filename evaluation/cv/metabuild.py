"""Build the broad evaluator meta-data: every shared classification dataset, resumable.

The embedded ``broad`` set is the ``uci`` protocol (the live-test protocol of
``recommend``) run on every classification dataset of ``../shared/datasets``:
stratified 5-fold CV, one repetition, seed 0, per-fold preprocessing, the 20
portfolio learners of :func:`algorank.metadata.learners.learner_ids`, accuracy and the
other fold metrics, fit and predict times per fold, one thread per process
(run the build with ``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1``).

Selection rule (written down once, here; ``metadata/data/broad/SELECTION.md`` and
the record JSON repeat it)
--------------------------------------------------------------------------------
1. Every row of ``MANIFEST.csv`` under ``uci/``, ``statlib/``, ``keel/`` and
   ``highdim/`` that names a target and has at least two classes; the target is
   the one MANIFEST names; no limit on rows or features.  (All of them load with
   :func:`~algorank.evaluation.cv.datasets.load_dataset`; a file the loader rejects would be
   logged and left out.)
2. Near-copies, i.e. the same records with the same target, only renamed,
   re-encoded, or with the rows that have missing values removed, are kept once:
   the ``uci/`` copy is kept (then ``statlib/``, then ``keel/``).  The dropped files
   and the copy kept for each are :data:`NEAR_COPIES`: the eight that the datasets'
   README names (letter, optdigits, mushroom, iris, wine, tic-tac-toe, tae,
   pendigits = keel/penbased), the four of the ``uci`` set's rule (anneal.orig,
   bridges.version2, prnn_fglass, cars_with_names) and eight more KEEL copies
   of UCI sets found by comparing the data (heart = heart.statlog, pima =
   diabetes, chess = kr.vs.kp, australian and crx = credit.a, breast =
   breast.cancer, housevotes = vote, bands = cylinder.bands).
3. Left out because the loaded data cannot be 5-fold cross-validated (:data:`EXCLUDED`):
   ``statlib/wseries`` (87 of its 90 rows have no target value; 3 labelled rows
   remain, fewer than the 5 folds).
4. *Derived tasks* are kept: KEEL's one-vs-rest imbalanced variants (``kind`` =
   ``one-vs-rest``) and different targets or partitions of the same records
   (colic / colic.orig, hypothyroid / sick, spect(f).train / .test).  Each dataset
   carries a ``family`` (:data:`FAMILIES`, else its own id) naming the base data,
   so that a split or a leave-one-out can hold out a whole family at once.

This gives 151 datasets: 51 from ``uci/``, 42 from ``statlib/``, 45 from ``keel/``
(18 base sets, 27 one-vs-rest variants) and 13 from ``highdim/``.  Datasets are
built from the cheapest (MANIFEST rows x features) to the most expensive, so many
finish early.

Time cap and timing
-------------------
Each test (one learner's 5 folds) is capped at ``cap`` seconds (120) of wall time.
A test runs in one child of the fold server
(:class:`~algorank.evaluation.cv.children.ChildStream`): the child first fits the
learner once, untimed, on at most 100 training rows (a warm-up), then runs the
folds one after the other with :func:`~algorank.evaluation.cv.fold.fold_sequence` (the
evaluator's own measurement: the same splits, fold seeds, preprocessing, metrics
and fit/predict timers) and sends each fold back as it finishes.  When the cap is
reached the child is killed: the running fold and the folds not started are
recorded as ``timeout``, and :func:`censor_timeouts` raises their ``fit_time`` so
that the test's folds sum to at least ``cap`` (``fit_time + predict_time``, NaN as
0): a timed-out test is "at least ``cap`` seconds", a lower bound, never a missing
value.  A child that dies (e.g. out of memory) gives ``error`` rows.

Why not the evaluator's per-fold timeout (one fresh child per fold): the first
fit in a freshly forked child costs extra (copy-on-write page faults of the
interpreter's heap), which would add that cost to every fold of the fast learners,
several times the fit of a small tree, and make the times disagree with the in-process times of the ``uci`` set.  With one child
per test and the warm-up, the times agree with in-process evaluation.  With
``cap=None`` the folds run in-process (after the same warm-up).

Persistence and resume
----------------------
Each dataset is written, as soon as it completes, to ``<out>/<dataset>.parquet``
(a one-dataset :class:`~algorank.metadata.dataset.MetaDataset`: its runs and its row of the
datasets table, written to a temporary file and renamed).  A rerun skips every
dataset whose file exists, so an interrupted build (or one moved to another
machine) resumes where it stopped.  :func:`assemble_broad` concatenates the files
into the embedded ``metadata/data/broad_evaluator.parquet`` and its JSON record
(checksum, counts, selection rule, protocol, calibration).

Datasets table
--------------
The meta-features and landmarkers of :func:`~algorank.evaluation.cv.metafeatures.dataset_meta_features`
plus the provenance: ``collection``, ``family``, ``kind``, ``calibration_s``
(:func:`~algorank.evaluation.cv.calibration.calibrate_machine` at the dataset's start; times from
two machines are put on one scale with :func:`~algorank.evaluation.cv.calibration.rescale_times`),
``build_cap_s``, ``build_folds``, ``build_seed``, ``build_wall_s``, ``build_sklearn``.

Parallel and distributed builds
-------------------------------
Datasets are independent joblib tasks.  On a bigger machine use ``n_jobs``
(``n_jobs=8``: one dataset per process, each single-threaded).
On a Dask cluster, run :func:`build_meta` inside joblib's Dask backend; every worker
needs the shared datasets at the same path and writes to the same ``out_dir`` (a
shared file system), or give each machine its own ``out_dir`` and copy the files
together before :func:`assemble_broad`::

    import joblib
    from distributed import Client
    from algorank.evaluation.cv.metabuild import build_meta

    client = Client("tcp://scheduler:8786")          # or Client(LocalCluster(...))
    with joblib.parallel_backend("dask"):
        build_meta(shared_dir="/data/shared", out_dir="/data/broad", n_jobs=-1)

Record the calibration of every machine (it is stored per dataset) so that the
times can be put on one scale.
"""

from __future__ import annotations

import logging
import math
import os
import platform
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from algorank.metadata.checks import check_n_jobs, check_seconds
from algorank.metadata.dataset import MetaDataset
from algorank.metadata.errors import InputError

from algorank.evaluation.cv import buildparts
from algorank.evaluation.cv.buildparts import REGRESSION_RUN_ORDER, REGRESSION_SOURCE
from algorank.evaluation.cv.calibration import CALIBRATION_WORKLOAD, calibrate_machine, rescale_times
from algorank.evaluation.cv.children import ChildStream, parallel
from algorank.evaluation.cv.fold import failed_fold, fold_sequence
from algorank.evaluation.cv.metafeatures import dataset_meta_features, expected_landmark_seconds

__all__ = [
    "COLLECTIONS",
    "NEAR_COPIES",
    "EXCLUDED",
    "FAMILIES",
    "SELECTION_RULE",
    "PROTOCOL",
    "BROAD_SOURCE",
    "REGRESSION_SOURCE",
    "DEFAULT_CAP",
    "CALIBRATION_WORKLOAD",
    "BroadDataset",
    "BuildSummary",
    "select_datasets",
    "default_shared_dir",
    "default_out_dir",
    "calibrate_machine",
    "rescale_times",
    "dataset_meta_features",
    "expected_landmark_seconds",
    "censor_timeouts",
    "evaluate_capped",
    "build_dataset",
    "build_meta",
    "assemble_broad",
    "write_embedded",
]

logger = logging.getLogger(__name__)

#: MANIFEST collections the broad set draws from.
COLLECTIONS = ("uci", "statlib", "keel", "highdim")
#: Default per-test time cap in seconds (all folds of one learner together).
DEFAULT_CAP = 120.0
_FOLDS = 5
_SEED = 0

#: Dropped near-copy -> (the file kept instead, why they are the same data).
NEAR_COPIES = {
    # named by ../shared/datasets/README.md
    "keel/letter.csv": ("uci/letter.arff", "README: same data in uci/ and keel/"),
    "keel/optdigits.csv": ("uci/optdigits.arff", "README: same data in uci/ and keel/"),
    "keel/mushroom.csv": ("uci/mushroom.arff", "README: same data (KEEL removed the rows with missing values)"),
    "keel/iris.csv": ("uci/iris.arff", "README: same data in uci/ and keel/"),
    "keel/wine.csv": ("uci/wine.arff", "README: same data in uci/ and keel/"),
    "keel/tic-tac-toe.csv": ("uci/tic-tac-toe.arff", "README: same data in uci/ and keel/"),
    "keel/tae.csv": ("uci/tae.arff", "README: same data in uci/ and keel/"),
    "keel/penbased.csv": ("uci/pendigits.arff", "README: pendigits = keel/penbased"),
    # the near-copies of the uci set's rule (tests/benchmarks/bench_live_recommend.py DUPLICATES)
    "uci/anneal.orig.arff": ("uci/anneal.arff", "same records and target, original encoding"),
    "uci/bridges.version2.arff": ("uci/bridges.version1.arff", "same records and target, discretised attributes"),
    "statlib/prnn_fglass.arff": ("uci/glass.arff", "the glass data (StatLib copy from Ripley's book)"),
    "statlib/cars_with_names.arff": ("statlib/cars.arff", "cars plus a name column"),
    # KEEL copies of UCI sets, found by comparing the data (rows, class counts, column means)
    "keel/heart.csv": ("uci/heart.statlog.arff", "identical: 270 rows, class counts 150/120, same column means"),
    "keel/pima.csv": ("uci/diabetes.arff", "identical: 768 rows, class counts 500/268, same column means"),
    "keel/chess.csv": ("uci/kr.vs.kp.arff", "identical: 3196 rows, class counts 1669/1527, same value counts"),
    "keel/australian.csv": ("uci/credit.a.arff", "Statlog Australian credit: the 690 credit.a records re-encoded"),
    "keel/crx.csv": ("uci/credit.a.arff", "credit.a without its 37 rows with missing values"),
    "keel/breast.csv": ("uci/breast.cancer.arff", "breast.cancer without its 9 rows with missing values"),
    "keel/housevotes.csv": ("uci/vote.arff", "vote without its rows with missing values"),
    "keel/bands.csv": ("uci/cylinder.bands.arff", "cylinder.bands without its rows with missing values"),
}

#: Files the rule would select but the loaded data cannot be evaluated with 5-fold CV -> why.
EXCLUDED = {
    "statlib/wseries.arff": "87 of its 90 rows have no target value: 3 labelled rows, fewer than the 5 folds",
}

#: File -> family (the base data a derived task comes from); every other dataset is its own family.
FAMILIES = {
    "uci/spect.train.arff": "spect", "uci/spect.test.arff": "spect",
    "uci/spectf.train.arff": "spect", "uci/spectf.test.arff": "spect",
    "uci/colic.arff": "colic", "uci/colic.orig.arff": "colic",
    "uci/hypothyroid.arff": "thyroid-garavan", "uci/sick.arff": "thyroid-garavan",
    "uci/heart.c.arff": "heart-cleveland", "uci/heart.statlog.arff": "heart-cleveland",
    "keel/cleveland-0_vs_4.csv": "heart-cleveland",
    "uci/car.arff": "car", "keel/car-good.csv": "car", "keel/car-vgood.csv": "car",
    "uci/ecoli.arff": "ecoli", "keel/ecoli1.csv": "ecoli", "keel/ecoli3.csv": "ecoli",
    "uci/glass.arff": "glass", "keel/glass1.csv": "glass", "keel/glass4.csv": "glass",
    "uci/lymph.arff": "lymph", "keel/lymphography-normal-fibrosis.csv": "lymph",
    "uci/solar.flare2.arff": "solar.flare2", "keel/flare-F.csv": "solar.flare2",
    "keel/led7digit.csv": "led7digit", "keel/led7digit-0-2-4-5-6-7-8-9_vs_1.csv": "led7digit",
    "keel/zoo-3.csv": "zoo",
    "keel/kr-vs-k-three_vs_eleven.csv": "kr-vs-k", "keel/kr-vs-k-zero-one_vs_draw.csv": "kr-vs-k",
    "keel/abalone19.csv": "abalone", "keel/abalone9-18.csv": "abalone",
    "keel/yeast1.csv": "yeast", "keel/yeast3.csv": "yeast", "keel/yeast4.csv": "yeast",
    "keel/shuttle-2_vs_5.csv": "shuttle", "keel/shuttle-c0-vs-c4.csv": "shuttle",
    "keel/poker-8-9_vs_5.csv": "poker", "keel/poker-9_vs_7.csv": "poker",
    "keel/kddcup-buffer_overflow_vs_back.csv": "kddcup", "keel/kddcup-rootkit-imap_vs_back.csv": "kddcup",
    "keel/winequality-red-4.csv": "winequality-red", "keel/winequality-white-3_vs_7.csv": "winequality-white",
    "keel/new-thyroid1.csv": "new-thyroid",
    "statlib/prnn_virus3.arff": "prnn_viruses", "statlib/prnn_viruses.arff": "prnn_viruses",
}

SELECTION_RULE = (
    "every MANIFEST.csv row under uci/, statlib/, keel/, highdim/ that names a target with >= 2 classes "
    "(target as MANIFEST names it, no row or feature limit), minus near-copies (same records and target, "
    "renamed, re-encoded or without the rows with missing values), the uci/ copy kept, then statlib/, then keel/: "
    + ", ".join(sorted(NEAR_COPIES))
    + "; minus files whose labelled rows are fewer than the 5 folds: " + ", ".join(sorted(EXCLUDED))
    + "; derived tasks (KEEL one-vs-rest variants, other targets or partitions of the same records) kept, "
      "grouped by the datasets table's 'family' column"
)
PROTOCOL = (
    "algorank evaluator's evaluate_fold: stratified 5-fold CV, 1 repetition, seed 0, per-fold preprocessing, the 20 "
    "learners of algorank.metadata.learners.learner_ids(), fit and predict seconds per fold, one thread per process; each "
    "test (a learner's 5 folds) in one forkserver child after an untimed warm-up fit, killed at the cap; the "
    "running and unstarted folds of a killed test are 'timeout' rows whose fit_time is raised so that the test's "
    "folds sum to at least the cap (a lower bound)"
)
BROAD_SOURCE = ("algorank evaluator (stratified 5-fold CV x1, seed 0, 120 s cap per test) on every classification "
                "dataset of shared/datasets (uci, statlib, keel, highdim; evaluation/metabuild.py)")
_EMBEDDED_FILE = "broad_evaluator.parquet"
_EMBEDDED_RECORD = "broad_evaluator.json"


# ====================================================================== selection
@dataclass(frozen=True)
class BroadDataset:
    """One dataset of the build.

    Attributes
    ----------
    file : str
        Path under ``<shared>/datasets`` (``uci/iris.arff``), or an absolute path.
    dataset : str
        Dataset id in the runs table (the file stem, as :func:`~algorank.evaluation.cv.datasets.load_dataset` names it).
    target : str or None
        Target attribute (None: the loader's rule).
    collection : str
        ``uci``, ``statlib``, ``keel``, ``highdim`` (or any label for other files).
    family : str
        Base data of a derived task (:data:`FAMILIES`), else ``dataset``.
    kind : str
        ``base`` or ``one-vs-rest`` (KEEL's imbalanced variants).
    instances, features : int
        Size as MANIFEST gives it (orders the build, cheapest first).
    task : str
        ``classification`` (the target read by the loader's rule) or ``regression`` (the named target
        read as a quantity, whatever its values look like).
    """

    file: str
    dataset: str
    target: str | None = None
    collection: str = ""
    family: str = ""
    kind: str = "base"
    instances: int = 0
    features: int = 0
    task: str = "classification"

    @classmethod
    def from_file(cls, path: str | os.PathLike, *, target: str | None = None, collection: str = "file",
                  family: str | None = None) -> "BroadDataset":
        """A dataset outside the MANIFEST (any file the loader reads), e.g. for a small test build."""
        p = Path(path).resolve()
        return cls(file=str(p), dataset=p.stem, target=target, collection=collection, family=family or p.stem)

    def location(self, datasets_dir: str | os.PathLike | None) -> Path:
        """Absolute path of the file (``file`` joined to ``datasets_dir`` unless absolute)."""
        p = Path(self.file)
        if p.is_absolute() or datasets_dir is None:
            return p
        return Path(datasets_dir) / p

    @property
    def source(self) -> str:
        """``shared/datasets/<file>`` for MANIFEST files, ``file:<name>`` otherwise."""
        return f"file:{Path(self.file).name}" if Path(self.file).is_absolute() else f"shared/datasets/{self.file}"


def default_shared_dir() -> Path | None:
    """``$ALGORANK_SHARED``, else ``../shared`` next to the working directory or the checkout (None if absent)."""
    env = os.environ.get("ALGORANK_SHARED")
    candidates = [Path(env)] if env else []
    candidates += [Path.cwd().parent / "shared"] + [p / "shared" for p in Path(__file__).resolve().parents]
    for c in candidates:
        if (c / "datasets" / "MANIFEST.csv").is_file():
            return c
    return None


def default_out_dir() -> Path:
    """``metadata/data/broad`` of the checkout (where the per-dataset files are committed)."""
    import algorank.metadata as metadata

    return Path(metadata.__file__).resolve().parent / "data" / "broad"


def _resolve_shared(shared_dir) -> Path:
    shared = Path(shared_dir) if shared_dir is not None else default_shared_dir()
    if shared is None:
        raise InputError("shared_dir is not given and no ../shared/datasets/MANIFEST.csv was found; "
                         "pass shared_dir or set ALGORANK_SHARED")
    if not (shared / "datasets" / "MANIFEST.csv").is_file():
        raise InputError(f"shared_dir must hold datasets/MANIFEST.csv; not found under {str(shared)!r}")
    return shared


def select_datasets(shared_dir: str | os.PathLike | None = None, *,
                    only: Sequence[str] | None = None) -> list[BroadDataset]:
    """The datasets of the broad set by the selection rule (module docstring), cheapest first.

    Parameters
    ----------
    shared_dir : path, optional
        Folder holding ``datasets/MANIFEST.csv`` (default :func:`default_shared_dir`).
    only : list of str, optional
        Keep just these dataset ids (each must be selected by the rule).

    Returns
    -------
    list of BroadDataset
        Ordered by MANIFEST ``instances x features``, then by file.

    Raises
    ------
    InputError
        No MANIFEST, two selected files with the same dataset id, or an id in
        ``only`` that the rule does not select.
    """
    shared = _resolve_shared(shared_dir)
    m = pd.read_csv(shared / "datasets" / "MANIFEST.csv", dtype={"file": str, "target": str, "note": str})
    items = []
    for row in m.itertuples(index=False):
        collection = row.file.split("/", 1)[0]
        target = row.target if isinstance(row.target, str) and row.target.strip() else None
        if (collection not in COLLECTIONS or target is None or not (row.classes >= 2) or row.file in NEAR_COPIES
                or row.file in EXCLUDED):
            continue
        stem = Path(row.file).stem
        note = row.note if isinstance(row.note, str) else ""
        items.append(BroadDataset(file=row.file, dataset=stem, target=target, collection=collection,
                                  family=FAMILIES.get(row.file, stem),
                                  kind="one-vs-rest" if "one-vs-rest" in note else "base",
                                  instances=int(row.instances), features=int(row.features)))
    ids = [i.dataset for i in items]
    dup = sorted({d for d in ids if ids.count(d) > 1})
    if dup:
        raise InputError(f"the selection gives two files the same dataset id: {', '.join(dup)}")
    if only is not None:
        wanted = buildparts.keep_only(ids, only, what="ids the selection rule selects; unknown or excluded")
        items = [i for i in items if i.dataset in wanted]
    return sorted(items, key=lambda i: (i.instances * i.features, i.file))


# ====================================================================== timeouts
def censor_timeouts(runs: pd.DataFrame, cap: float) -> pd.DataFrame:
    """Make every timed-out test at least ``cap`` seconds long (a lower bound, never NaN).

    For each (dataset, learner) with a ``timeout`` row, the ``fit_time`` of its
    timeout rows is raised so that the test's ``fit_time + predict_time`` (NaN as 0)
    over all its rows is at least ``cap``: each timeout row gets at least an equal
    share of ``cap`` minus the other rows' time, and never less than its measured
    time.  ``predict_time`` of timeout rows stays NaN (never
    measured).  Other tests are unchanged.

    Parameters
    ----------
    runs : DataFrame
        Runs-schema rows (``dataset``, ``learner``, ``fit_time``, ``predict_time``, ``status``).
    cap : float
        The test's time cap in seconds.

    Returns
    -------
    DataFrame
        A copy with the censored times.
    """
    if not isinstance(cap, (int, float, np.floating)) or not math.isfinite(cap) or cap <= 0:
        raise InputError(f"cap must be a positive number of seconds, got {cap!r}")
    out = runs.copy()
    out["fit_time"] = out["fit_time"].astype(float)
    timeout = (out["status"] == "timeout").to_numpy()
    if not timeout.any():
        return out
    measured = (out["fit_time"].fillna(0.0) + out["predict_time"].fillna(0.0)).to_numpy()
    fit = out["fit_time"].to_numpy(copy=True)
    for idx in out.groupby(["dataset", "learner"], sort=False).indices.values():
        hit = idx[timeout[idx]]
        if not len(hit):
            continue
        others = float(measured[idx[~timeout[idx]]].sum())
        share = max(0.0, float(cap) - others) / len(hit)  # the rows' sum reaches cap - others
        fit[hit] = np.maximum(np.nan_to_num(fit[hit], nan=0.0), share)
    out["fit_time"] = fit
    return out


# ====================================================================== one dataset
_RUN_ORDER = ["dataset", "learner", "repeat", "fold", "accuracy", "fit_time", "predict_time", "status",
              "balanced_accuracy", "auc", "log_loss", "model_bytes", "message"]


def _run_test(recipe, X, y, splits, *, n_classes: int, nominal: tuple, random_state: int,
              cap: float | None) -> list:
    """The fold records of one learner's test (see "Time cap and timing" in the module docstring)."""
    kwargs = dict(n_classes=n_classes, nominal=nominal, random_state=random_state)
    if cap is None:
        return [rec for rec in fold_sequence(recipe, X, y, splits, **kwargs) if rec is not None]
    records: list = []
    outcome = "done"
    fold_start = None  # None while the child warms up
    deadline = time.perf_counter() + cap  # the warm-up may not take longer than the whole test
    with ChildStream(fold_sequence, (recipe, X, y, splits), kwargs=kwargs,
                     uses_main=str(recipe.path or "").startswith("__main__.")) as child:
        while len(records) < len(splits):
            got = child.next(deadline - time.perf_counter())
            now = time.perf_counter()
            if got.status != "done":
                outcome = got
                break
            if got.value is None:  # warmed up: the cap counts from here
                deadline = now + cap
            else:
                records.append(got.value)
            fold_start = now
    if outcome == "done":
        return records
    now = time.perf_counter()
    running = splits[len(records)]
    took = 0.0 if fold_start is None else now - fold_start
    if outcome.status == "timeout":
        records.append(failed_fold(recipe, running, "timeout",
                                   f"the test exceeded the {cap:g} s cap; the fit process was killed", fit_time=took))
        why, status = "not run: the test's time cap was reached", "timeout"
    else:
        what = outcome.message if outcome.status == "raised" else f"the fit process died ({outcome.death}; out of memory?)"
        records.append(failed_fold(recipe, running, "error", what, fit_time=took))
        why, status = "not run: the fit process died on an earlier fold", "error"
    records += [failed_fold(recipe, s, status, why) for s in splits[len(records):]]
    return records


def evaluate_capped(data, learners: Sequence[str], *, cap: float | None = DEFAULT_CAP, folds: int = _FOLDS,
                    random_state: int = _SEED, allow_modules: Sequence[str] = ()) -> pd.DataFrame:
    """Runs-schema rows of every learner on ``data`` under the broad protocol (one capped child per test).

    A regression dataset (``data.task == "regression"``) is split by shuffled k-fold (not stratified),
    its learners must be regressors, and its rows carry ``r2``, ``rmse`` and ``mae`` per fold with
    ``accuracy = max(r2, 0)``.

    Parameters
    ----------
    data : LoadedDataset
    learners : list of str
        Portfolio ids, short names or import paths with JSON parameters.
    cap : float or None
        Seconds per test (None: in-process, no cap).
    folds : int
        Stratified CV folds, one repetition (the evaluator's splits and fold seeds).
    random_state : int
    allow_modules : sequence of str
        Packages besides scikit-learn whose classes learner ids may name.

    Returns
    -------
    DataFrame
        The evaluator's run columns; timed-out tests censored by :func:`censor_timeouts`.
    """
    from algorank.evaluation.cv.preprocessing import encode_features, resolve_learner
    from algorank.evaluation.cv.resampling import make_resampler

    regression = getattr(data, "task", "classification") == "regression"
    recipes = [resolve_learner(lid, allow_modules=allow_modules, task="regression" if regression else "classification")
               for lid in learners]
    y = data.y.to_numpy(dtype=float) if regression else data.y_codes
    X, nominal = encode_features(data.X)
    splits = make_resampler("cv", cv=folds, n_rows=len(y), random_state=random_state,
                            stratify=not regression).repetition(0, y)
    rows = []
    for recipe in recipes:
        recs = _run_test(recipe, X, y, splits, n_classes=len(data.classes), nominal=nominal,
                         random_state=random_state, cap=cap)
        rows.extend({"dataset": data.name, **r.as_row()} for r in recs)
        bad = [r for r in recs if r.status != "ok"]
        if bad:
            logger.debug("%s on %s: %s", recipe.id, data.name, bad[0].message)
    order = REGRESSION_RUN_ORDER if regression else _RUN_ORDER
    runs = pd.DataFrame(rows, columns=order).astype({"repeat": np.int64, "fold": np.int64})
    runs["message"] = runs["message"].fillna("").astype(str)
    return runs if cap is None else censor_timeouts(runs, float(cap))


def _part_path(out_dir: Path, item: BroadDataset) -> Path:
    return out_dir / f"{item.dataset}.parquet"


def build_dataset(item: BroadDataset, *, out_dir: str | os.PathLike, datasets_dir: str | os.PathLike | None = None,
                  cap: float | None = DEFAULT_CAP, folds: int = _FOLDS, learners: Sequence[str] | None = None,
                  random_state: int = _SEED, calibrate: bool = True) -> dict:
    """Evaluate every learner on one dataset and write ``<out_dir>/<dataset>.parquet`` atomically.

    Parameters
    ----------
    item : BroadDataset
    out_dir : path
        Folder of the per-dataset files.
    datasets_dir : path, optional
        ``<shared>/datasets`` (relative ``item.file`` is joined to it).
    cap : float or None
        Per-test time cap in seconds; None: no cap, folds run in-process (tests).
    folds : int
        CV folds (one repetition): stratified, or shuffled k-fold for a regression item.
    learners : list of str, optional
        Default: the 20 portfolio learners (the 19 regressors of
        :func:`algorank.metadata.regressors.regressor_ids` for a regression item).
    random_state : int
        Seed of the splits and learners.
    calibrate : bool
        Measure :func:`calibrate_machine` at the start (NaN otherwise).

    Returns
    -------
    dict
        ``dataset``, ``path``, ``status`` (``built``), counts of ``ok``/``error``/``timeout``
        runs, ``wall_s``, ``calibration_s``.
    """
    from sklearn import __version__ as sklearn_version

    start = time.perf_counter()
    calibration = calibrate_machine() if calibrate else math.nan
    data = buildparts.load_item(item, datasets_dir)
    features, default_learners = buildparts.item_features(item, data, random_state=random_state)
    runs = evaluate_capped(data, list(learners) if learners is not None else default_learners, cap=cap, folds=folds,
                           random_state=random_state)
    wall = time.perf_counter() - start
    row = {"dataset": item.dataset, "name": item.dataset, "source": item.source, **features,
           **buildparts.item_columns(item), "collection": item.collection, "family": item.family or item.dataset,
           "kind": item.kind,
           "calibration_s": calibration, "build_cap_s": math.nan if cap is None else float(cap),
           "build_folds": int(folds), "build_seed": int(random_state), "build_wall_s": wall,
           "build_sklearn": sklearn_version,
           "build_machine": f"{platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}"}
    meta = MetaDataset(runs, pd.DataFrame([row]),
                       source=REGRESSION_SOURCE if item.task == "regression" else BROAD_SOURCE)
    path = meta.save(_part_path(Path(out_dir), item))
    counts = runs["status"].value_counts()
    return {"dataset": item.dataset, "file": item.file, "path": str(path), "status": "built",
            "ok": int(counts.get("ok", 0)), "error": int(counts.get("error", 0)),
            "timeout": int(counts.get("timeout", 0)), "wall_s": wall, "calibration_s": calibration}


def _build_task(item, out_dir, datasets_dir, cap, folds, learners, random_state, calibrate) -> dict:
    """joblib task: :func:`build_dataset`, with a dataset that cannot be built reported, not raised."""
    try:
        return build_dataset(item, out_dir=out_dir, datasets_dir=datasets_dir, cap=cap, folds=folds,
                             learners=learners, random_state=random_state, calibrate=calibrate)
    except InputError as exc:  # the loader rejects the file, too few rows for the folds, ...
        return {"dataset": item.dataset, "file": item.file, "path": None, "status": "failed",
                "message": " ".join(str(exc).split())[:300]}


# ====================================================================== many datasets
@dataclass(frozen=True)
class BuildSummary:
    """What :func:`build_meta` did.

    Attributes
    ----------
    out_dir : str
    selected : int
        Datasets asked for.
    built, skipped, failed : list of dict
        Per dataset: built now (with run counts and wall seconds), skipped because
        their file existed, or failed to build (with a message).
    wall_s : float
    notes : list of str
        Datasets of the selection left out before the build, and why (e.g. a missing optional package).
    """

    out_dir: str
    selected: int
    built: list = field(default_factory=list)
    skipped: list = field(default_factory=list)
    failed: list = field(default_factory=list)
    wall_s: float = 0.0
    notes: list = field(default_factory=list)

    def to_dict(self) -> dict:
        """JSON-ready dict."""
        return asdict(self)


def build_meta(datasets: Iterable[BroadDataset] | None = None, *, only: Sequence[str] | None = None,
               shared_dir: str | os.PathLike | None = None,
               out_dir: str | os.PathLike | None = None, cap: float | None = DEFAULT_CAP, folds: int = _FOLDS,
               learners: Sequence[str] | None = None, n_jobs: int | None = None, random_state: int = _SEED,
               calibrate: bool = True, progress: bool = True) -> BuildSummary:
    """Build (or resume) the per-dataset files of the broad meta-data.

    Parameters
    ----------
    datasets : list of BroadDataset, optional
        Default: :func:`select_datasets` (needs ``shared_dir``).
    only : list of str, optional
        Default selection only: keep just these dataset ids (see :func:`select_datasets`).
    shared_dir : path, optional
        Folder with ``datasets/`` (default :func:`default_shared_dir`); needed for
        MANIFEST datasets, not for :meth:`BroadDataset.from_file` ones.
    out_dir : path, optional
        Folder of the per-dataset files (default :func:`default_out_dir`).  A dataset
        whose file exists there is skipped.
    cap : float or None
        Per-test time cap in seconds (default 120; None: no cap).
    folds : int
        CV folds (stratified; shuffled k-fold for regression items).
    learners : list of str, optional
        Default: the 20 portfolio learners (the 19 regressors for regression items).
    n_jobs : int or None
        joblib workers over datasets; None takes the active joblib backend's default
        (1, or every Dask worker inside ``joblib.parallel_backend("dask")``).
    random_state : int
    calibrate : bool
        Time :func:`calibrate_machine` at each dataset's start.
    progress : bool
        tqdm bar on stderr (only when stderr is a terminal).

    Returns
    -------
    BuildSummary
    """
    from joblib import delayed
    from algorank.metadata.progress import progress_bar

    if cap is not None:
        cap = check_seconds(cap, name="cap")
    if isinstance(folds, bool) or not isinstance(folds, (int, np.integer)) or folds < 2:
        raise InputError(f"folds must be an integer >= 2, got {folds!r}")
    n_jobs = check_n_jobs(n_jobs, allow_none=True)
    datasets_dir = None
    if datasets is None:
        shared = _resolve_shared(shared_dir)
        datasets = select_datasets(shared, only=only)
        datasets_dir = shared / "datasets"
    else:
        if only is not None:
            raise InputError("only selects from the default selection; filter the datasets list instead")
        shared = Path(shared_dir) if shared_dir is not None else default_shared_dir()
        datasets_dir = None if shared is None else shared / "datasets"
    items = list(datasets)
    ids = [i.dataset for i in items]
    if len(set(ids)) != len(ids):
        raise InputError(f"datasets must have distinct ids; repeated: {sorted({d for d in ids if ids.count(d) > 1})}")
    out = Path(out_dir) if out_dir is not None else default_out_dir()
    if out.exists() and not out.is_dir():
        raise InputError(f"out_dir must be a folder, but {str(out)!r} is a file")
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    skipped = [{"dataset": i.dataset, "file": i.file, "path": str(_part_path(out, i)), "status": "skipped"}
               for i in items if _part_path(out, i).is_file()]
    done = {s["dataset"] for s in skipped}
    todo = [i for i in items if i.dataset not in done]
    logger.info("build-meta: %d dataset(s) selected, %d already built in %s, %d to build (cap %s s, %d folds)",
                len(items), len(skipped), out, len(todo), "none" if cap is None else f"{cap:g}", folds)
    built, failed = [], []
    bar = progress_bar(total=len(todo), unit="dataset", desc="build-meta", enabled=progress)
    try:
        tasks = (delayed(_build_task)(i, str(out), None if datasets_dir is None else str(datasets_dir), cap, folds,
                                      None if learners is None else list(learners), random_state, calibrate)
                 for i in todo)
        for res in parallel(n_jobs, return_as="generator_unordered")(tasks):
            if res["status"] == "built":
                built.append(res)
                logger.info("built %s (%d/%d): %d ok, %d error, %d timeout runs in %.1f s (calibration %.3f s)",
                            res["dataset"], len(built) + len(failed), len(todo), res["ok"], res["error"],
                            res["timeout"], res["wall_s"], res["calibration_s"])
            else:
                failed.append(res)
                logger.warning("could not build %s: %s", res["dataset"], res["message"])
            bar.update(1)
    finally:
        bar.close()
    return BuildSummary(out_dir=str(out), selected=len(items), built=built, skipped=skipped, failed=failed,
                        wall_s=time.perf_counter() - start)


# ====================================================================== assemble
def assemble_broad(parts_dir: str | os.PathLike | None = None, out_dir: str | os.PathLike | None = None, *,
                   shared_dir: str | os.PathLike | None = None, max_bytes: int = 15_000_000) -> dict:
    """Concatenate the per-dataset files into the embedded ``broad`` meta-data and its JSON record.

    Parameters
    ----------
    parts_dir : path, optional
        Folder of the per-dataset files (default :func:`default_out_dir`).
    out_dir : path, optional
        Where ``broad_evaluator.parquet`` and ``broad_evaluator.json`` go (default:
        the ``metadata/data`` folder of the checkout).
    shared_dir : path, optional
        When the MANIFEST is found (default :func:`default_shared_dir`), the record
        lists the selected datasets that have no file yet (``missing``).
    max_bytes : int
        Size limit of the embedded file; a larger file is an error (15 MB).

    Returns
    -------
    dict
        The written record: ``file``, ``sha256``, ``bytes``, counts (``datasets``,
        ``learners``, ``cells``, ``runs``, ``ok_runs``, ``error_runs``,
        ``timeout_runs``, ``timeout_tests``, ``error_tests``), ``collections``,
        ``kinds``, ``families``, ``selection``, ``near_copies``, ``protocol``,
        ``cap_s``, ``calibration`` (workload, median/min/max seconds and how to apply
        it), ``missing``, ``complete`` and ``source``.
    """
    parts = Path(parts_dir) if parts_dir is not None else default_out_dir()
    meta = buildparts.load_parts(parts, task="classification", source=BROAD_SOURCE,
                                 hint="run 'algorank build-meta' first")
    target_dir = Path(out_dir) if out_dir is not None else default_out_dir().parent
    return write_embedded(meta, target_dir, _EMBEDDED_FILE, _EMBEDDED_RECORD, shared_dir=shared_dir,
                          max_bytes=max_bytes)


def write_embedded(meta, target_dir: Path, file: str, record_file: str, *,
                   shared_dir: str | os.PathLike | None = None, max_bytes: int = 15_000_000,
                   extra: dict | None = None) -> dict:
    """Write assembled classification meta-data built from the broad selection, with its JSON record.

    Parameters
    ----------
    meta : MetaDataset
        The assembled set.
    target_dir : Path
        Folder of the two files.
    file, record_file : str
        Names of the Parquet file and of its JSON record.
    shared_dir : path, optional
        As in :func:`assemble_broad`: where the MANIFEST is found to list the selected datasets without runs.
    max_bytes : int
        Size limit of the Parquet file.
    extra : dict, optional
        More entries of the record (placed before ``source``).

    Returns
    -------
    dict
        The written record (see :func:`assemble_broad`).
    """
    from algorank.metadata.snapshot import file_sha256

    target = Path(target_dir) / file
    size = buildparts.save_within(meta, target, max_bytes)
    tests = meta.runs.groupby(["dataset", "learner"])["status"]
    ds = meta.datasets
    missing = []
    shared = Path(shared_dir) if shared_dir is not None else default_shared_dir()
    if shared is not None and (shared / "datasets" / "MANIFEST.csv").is_file():
        have = set(meta.dataset_ids)
        missing = [i.file for i in select_datasets(shared) if i.dataset not in have]

    record = {
        "file": file, "sha256": file_sha256(target), "bytes": int(size), **buildparts.run_counts(meta),
        "error_tests": int(tests.apply(lambda s: (s == "error").any() and not (s == "timeout").any()).sum()),
        "collections": buildparts.column_counts(ds, "collection"), "kinds": buildparts.column_counts(ds, "kind"),
        "families": int(ds["family"].nunique()) if "family" in ds else len(meta.dataset_ids),
        "selection": SELECTION_RULE,
        "near_copies": {k: v[0] for k, v in sorted(NEAR_COPIES.items())},
        "protocol": PROTOCOL,
        "cap_s": buildparts.cap_record(ds),
        "calibration": buildparts.calibration_record(
            ds, apply="times from machine A on machine B's scale: multiply by calib_B / calib_A "
                      "(algorank.evaluation.cv.metabuild.rescale_times)"),
        "missing": missing,
        "complete": not missing,
        **(extra or {}),
        "source": meta.source,
    }
    return buildparts.write_record(record, Path(target_dir) / record_file, target=target, what="selected", log=logger)
