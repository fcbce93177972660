"""ASlib algorithm-selection scenarios in and out (Bischl et al. 2016, Artificial Intelligence 237).

ASlib is the interchange format of algorithm selection (LLAMA, AutoFolio and
auto-sklearn read it).  A scenario is a folder with

* ``description.txt`` (YAML): ``scenario_id``, ``performance_measures``, ``maximize``,
  ``performance_type``, cut-offs, ``feature_steps``, ``metainfo_algorithms``, ...;
* ``algorithm_runs.arff``: ``instance_id, repetition, algorithm, <measures...>, runstatus``;
* ``feature_values.arff``: ``instance_id, repetition, <features...>``;
* ``feature_runstatus.arff``: ``instance_id, repetition, <one status per feature step>``;
* ``cv.arff`` (optional): ``instance_id, repetition, fold``.

**Reading** (:func:`read_aslib`).  An ASlib *instance* is a dataset and an *algorithm* a
learner.  Each run becomes one row of the runs table with ``repeat = repetition - 1``,
``fold = 0`` (sorted by dataset, learner, repeat); the performance measure (default: the first of
``performance_measures``) must be a solution quality to maximise within [0, 1]
(accuracy-like) and becomes ``accuracy``.  A measure or extra column named ``runtime``
becomes ``fit_time``; without one the meta-data is accuracy-only (every time NaN; see
:mod:`algorank.metadata.dataset`).  ``runstatus`` ok/timeout map to ``status`` ok/timeout; memout,
crash, not_applicable and other become ``error`` with ``message = "aslib:<status>"``.
Feature values (averaged over repetitions) are the meta-features of the datasets
table, under their own names; ``n_instances``, ``n_features``, ``n_classes`` and
``majority_fraction`` are taken from features of those names when present, else
from OpenML's ``NumberOfInstances``, ``NumberOfFeatures``, ``NumberOfClasses`` and
``MajorityClassPercentage / 100``.  The fold of ``cv.arff`` (repetition 1) is the
datasets column ``aslib_fold``.  Runtime scenarios (``performance_type: runtime``, e.g.
SAT solvers) are refused with an InputError: algorank ranks by an accuracy.

**Writing** (:func:`write_aslib`) from any meta-data: one run per (dataset, learner,
repeat) with ``predictive_accuracy`` = the mean accuracy over that repeat's folds,
``runtime`` = the mean ``fit_time`` when the meta-data has times, the status of the
first run (``aslib:<status>`` messages restored); every numeric column of the datasets
table except ``aslib_fold`` is a feature (one feature step ``ALL``); ``cv.arff`` from
``aslib_fold`` when present, else a seeded split into ``folds`` folds.  Files are
written atomically.  A scenario read by :func:`read_aslib` and written back reads back
identically (runs and datasets tables); meta-data with several folds per repeat is
aggregated (written once per repeat).

**Regression** meta-data (:attr:`MetaDataset.task`) is written with the measure
:data:`REGRESSION_MEASURE` (``score_r2``: the score ``max(R², 0)``, maximised, in [0, 1]) in
place of ``predictive_accuracy``; ASlib names measures freely, so the scenario says what it
holds, and reading a scenario whose measure is ``score_r2`` gives regression meta-data again.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from .dataset import MetaDataset
from .errors import InputError
from .text import escape
from .io import atomic_write_text

__all__ = ["ASLIB_STATUSES", "REGRESSION_MEASURE", "read_aslib", "write_aslib", "is_aslib_dir"]

#: The ASlib performance measure of regression meta-data: the score max(R², 0), mean over folds.
REGRESSION_MEASURE = "score_r2"

#: Values of ASlib's ``runstatus``.
ASLIB_STATUSES = ("ok", "timeout", "memout", "not_applicable", "crash", "other")
_REQUIRED = ("description.txt", "algorithm_runs.arff")
_OPENML_NAMES = {"n_instances": ("NumberOfInstances", 1.0), "n_features": ("NumberOfFeatures", 1.0),
                 "n_classes": ("NumberOfClasses", 1.0), "majority_fraction": ("MajorityClassPercentage", 0.01)}


def is_aslib_dir(path) -> bool:
    """Whether ``path`` is a folder with an ASlib ``description.txt`` and ``algorithm_runs.arff``."""
    p = Path(path)
    return p.is_dir() and all((p / f).is_file() for f in _REQUIRED)


def _load_arff(path: Path) -> tuple[pd.DataFrame, list]:
    import arff

    from .textfile import decode_error, text_encoding

    encoding = text_encoding(path, what="ASlib file")
    try:
        with open(path, encoding=encoding) as fh:
            data = arff.load(fh)
    except UnicodeError as exc:
        raise decode_error(path, exc, encoding, what="ASlib file") from None
    except Exception as exc:  # liac-arff raises its own error types
        raise InputError(f"cannot read ASlib file {path}: {type(exc).__name__}: {exc}".splitlines()[0]) from exc
    names = [a[0] for a in data["attributes"]]
    return pd.DataFrame(data["data"], columns=names), data["attributes"]


def _column(frame: pd.DataFrame, name: str, path: Path) -> pd.Series:
    matches = [c for c in frame.columns if c.lower() == name]
    if not matches:
        raise InputError(f"ASlib file {path} has no '{name}' attribute")
    if len(matches) > 1:
        raise InputError(f"ASlib file {path} has {len(matches)} attributes named '{name}' (in any case): "
                         f"{', '.join(matches)}; keep one")
    return frame[matches[0]]


def read_aslib(path, *, measure: str | None = None) -> MetaDataset:
    """Read an ASlib scenario folder into a MetaDataset (see the module docstring).

    Parameters
    ----------
    path : path-like
        The scenario folder.
    measure : str, optional
        Which performance measure is the accuracy (default: the first listed).

    Raises
    ------
    InputError
        Missing files, unreadable ARFF/YAML, a runtime scenario, or a measure that is
        not a solution quality in [0, 1] to maximise.
    """
    import yaml

    root = Path(path)
    if not root.is_dir():
        raise InputError(f"ASlib scenario folder not found: {root}")
    missing = [f for f in _REQUIRED if not (root / f).is_file()]
    if missing:
        raise InputError(f"{root} is not an ASlib scenario: missing {', '.join(missing)}")
    try:
        desc = yaml.safe_load((root / "description.txt").read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise InputError(f"cannot parse {root / 'description.txt'}: {str(exc).splitlines()[0]}") from exc
    if not isinstance(desc, dict):
        raise InputError(f"{root / 'description.txt'} is not a YAML mapping")
    scenario = str(desc.get("scenario_id") or root.name)
    measures = [str(m) for m in (desc.get("performance_measures") or [])]
    maximize = list(desc.get("maximize") or [])
    ptype = [str(t) for t in (desc.get("performance_type") or [])]
    runs_raw, _ = _load_arff(root / "algorithm_runs.arff")
    if measure is None:
        if not measures:
            raise InputError(f"{root / 'description.txt'} lists no performance_measures")
        measure = measures[0]
    if measure not in runs_raw.columns:
        raise InputError(f"measure {measure!r} is not a column of {root / 'algorithm_runs.arff'}; "
                         f"columns: {', '.join(map(str, runs_raw.columns))}")
    i = measures.index(measure) if measure in measures else None
    if i is not None and i < len(ptype) and ptype[i] == "runtime":
        raise InputError(f"ASlib scenario {scenario} measures runtime (performance_type runtime): algorank ranks "
                         "learners by an accuracy-like solution quality; this scenario does not have one")
    if i is not None and i < len(maximize) and not bool(maximize[i]):
        raise InputError(f"measure {measure!r} of scenario {scenario} is minimised; algorank needs an accuracy "
                         "(higher is better, in [0, 1])")
    values = pd.to_numeric(runs_raw[measure], errors="coerce")
    if ((values < 0) | (values > 1)).any():
        raise InputError(f"measure {measure!r} of scenario {scenario} has values outside [0, 1]: not an accuracy")
    status_raw = _column(runs_raw, "runstatus", root / "algorithm_runs.arff").astype(str).str.lower()
    bad = sorted(set(status_raw) - set(ASLIB_STATUSES))
    if bad:
        raise InputError(f"unknown runstatus value(s) {bad[:5]} in {root / 'algorithm_runs.arff'}")
    status = status_raw.where(status_raw.isin(["ok", "timeout"]), "error")
    runtime_col = "runtime" if "runtime" in runs_raw.columns and measure != "runtime" else None
    runs = pd.DataFrame({
        "dataset": _column(runs_raw, "instance_id", root).astype(str),
        "learner": _column(runs_raw, "algorithm", root).astype(str),
        "repeat": pd.to_numeric(_column(runs_raw, "repetition", root), errors="coerce").astype("Int64") - 1,
        "fold": 0,
        "accuracy": values.astype(float),
        "fit_time": (pd.to_numeric(runs_raw[runtime_col], errors="coerce").astype(float) if runtime_col
                     else np.nan),
        "predict_time": np.nan if runtime_col is None else 0.0,
        "status": status,
        "message": np.where(status == "error", "aslib:" + status_raw, ""),
    })
    if runs["repeat"].isna().any():
        raise InputError(f"column 'repetition' of {root / 'algorithm_runs.arff'} must hold integers >= 1")
    runs["repeat"] = runs["repeat"].astype(np.int64)
    runs = runs.sort_values(["dataset", "learner", "repeat"], kind="stable").reset_index(drop=True)
    datasets = pd.DataFrame({"dataset": sorted(runs["dataset"].unique())})
    fpath = root / "feature_values.arff"
    if fpath.is_file():
        feats, _ = _load_arff(fpath)
        iid = _column(feats, "instance_id", fpath).astype(str)
        cols = [c for c in feats.columns if c.lower() not in ("instance_id", "repetition")]
        numeric = feats[cols].apply(pd.to_numeric, errors="coerce").astype(float)
        numeric.insert(0, "dataset", iid.to_numpy())
        per = numeric.groupby("dataset", sort=True).mean()
        datasets = datasets.merge(per.reset_index(), on="dataset", how="left")
    for ours, (openml_name, scale) in _OPENML_NAMES.items():
        if ours not in datasets.columns and openml_name in datasets.columns:
            datasets[ours] = datasets[openml_name] * scale
    if "majority_fraction" in datasets.columns:
        mf = datasets["majority_fraction"]
        datasets["majority_fraction"] = mf.where((mf >= 0) & (mf <= 1))
    cpath = root / "cv.arff"
    if cpath.is_file():
        cv, _ = _load_arff(cpath)
        rep = pd.to_numeric(_column(cv, "repetition", cpath), errors="coerce")
        first = cv[rep == rep.min()]
        folds = pd.Series(pd.to_numeric(_column(first, "fold", cpath), errors="coerce").to_numpy(),
                          index=_column(first, "instance_id", cpath).astype(str).to_numpy())
        datasets["aslib_fold"] = datasets["dataset"].map(folds).astype(float)
    if "source" not in datasets.columns:
        datasets["source"] = "aslib:" + scenario + ":" + datasets["dataset"]
    if "name" not in datasets.columns:
        datasets["name"] = datasets["dataset"]
    if measure == REGRESSION_MEASURE:
        datasets["task"] = "regression"
    return MetaDataset(runs, datasets, source=f"aslib:{scenario}")


def _fmt(v) -> str:
    if v is None:
        return "?"
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if math.isnan(f):
            return "?"
        return repr(f)
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    s = str(v)
    if s == "" or any(ch in s for ch in " ,'\"%{}?\\") or s != s.strip() or _CONTROL.search(s):
        # quoted, with the escapes liac-arff (and every ARFF reader) decodes: a data string can never
        # end a line or start a new attribute
        s = s.replace("\\", "\\\\").replace("'", "\\'")
        return "'" + _CONTROL.sub(lambda m: _ARFF_ESCAPES.get(m.group(0), f"\\{ord(m.group(0)):03o}"), s) + "'"
    return s


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_ARFF_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _arff_text(relation: str, attributes: list[tuple[str, str]], rows) -> str:
    lines = [f"@RELATION {_fmt(relation)}", ""]
    for name, kind in attributes:
        lines.append(f"@ATTRIBUTE {_fmt(name)} {kind}")
    lines += ["", "@DATA"]
    lines += [",".join(_fmt(v) for v in row) for row in rows]
    return "\n".join(lines) + "\n"


def write_aslib(meta: MetaDataset, directory, *, scenario_id: str | None = None, folds: int = 10,
                random_state: int = 0) -> list[Path]:
    """Write ``meta`` as an ASlib scenario folder (see the module docstring).

    Parameters
    ----------
    meta : MetaDataset
    directory : path-like
        Created if needed; existing scenario files in it are replaced.
    scenario_id : str, optional
        Default: the scenario id of meta-data read from ASlib (source ``aslib:<id>``),
        else the folder name.
    folds : int
        Folds of ``cv.arff`` when the datasets table has no ``aslib_fold`` (>= 2).
    random_state : int
        Seed of that split.

    Returns
    -------
    list of Path
        The files written.
    """
    import yaml

    root = Path(directory)
    if root.exists() and not root.is_dir():
        raise InputError(f"directory must name a folder; {root} is a file")
    if isinstance(folds, bool) or not isinstance(folds, (int, np.integer)) or folds < 2:
        raise InputError(f"folds must be an integer >= 2; got {folds!r}")
    source = str(meta.source or "")
    scenario = str(scenario_id or (source[6:] if source.startswith("aslib:") and "+" not in source else "")
                   or root.name or "algorank")
    runs = meta.runs
    has_time = bool(runs["fit_time"].notna().any())
    status = runs["status"].astype(str)
    message = runs["message"].astype(str) if "message" in runs.columns else pd.Series("", index=runs.index)
    aslib_status = np.where(status == "ok", "ok", np.where(status == "timeout", "timeout", "crash"))
    restored = message.str.startswith("aslib:") & message.str[6:].isin(ASLIB_STATUSES)
    aslib_status = np.where((status == "error") & restored, message.str[6:], aslib_status)
    frame = pd.DataFrame({"dataset": runs["dataset"], "learner": runs["learner"], "repeat": runs["repeat"],
                          "accuracy": runs["accuracy"], "fit_time": runs["fit_time"],
                          "runstatus": aslib_status})
    keys = ["dataset", "learner", "repeat"]
    agg = frame.groupby(keys, sort=True).agg(accuracy=("accuracy", "mean"), fit_time=("fit_time", "mean"),
                                             runstatus=("runstatus", "first")).reset_index()
    regression = meta.task == "regression"
    measure = REGRESSION_MEASURE if regression else "predictive_accuracy"
    attrs = [("instance_id", "STRING"), ("repetition", "NUMERIC"), ("algorithm", "STRING"),
             (measure, "NUMERIC")]
    if has_time:
        attrs.append(("runtime", "NUMERIC"))
    attrs.append(("runstatus", "{" + ", ".join(ASLIB_STATUSES) + "}"))
    rows = []
    for r in agg.itertuples(index=False):
        row = [r.dataset, int(r.repeat) + 1, r.learner, r.accuracy]
        if has_time:
            row.append(r.fit_time)
        row.append(r.runstatus)
        rows.append(row)
    written = []
    root.mkdir(parents=True, exist_ok=True)
    written.append(atomic_write_text(root / "algorithm_runs.arff",
                                     _arff_text(f"ALGORITHM_RUNS_{scenario}", attrs, rows)))
    ds = meta.datasets.set_index("dataset").reindex(meta.dataset_ids)
    feature_cols = [c for c in ds.columns if c not in ("name", "source", "aslib_fold")
                    and pd.api.types.is_numeric_dtype(ds[c])]
    frows = [[d, 1] + [ds.at[d, c] for c in feature_cols] for d in ds.index]
    written.append(atomic_write_text(
        root / "feature_values.arff",
        _arff_text(f"FEATURES_{scenario}", [("instance_id", "STRING"), ("repetition", "NUMERIC")]
                   + [(c, "NUMERIC") for c in feature_cols], frows)))
    written.append(atomic_write_text(
        root / "feature_runstatus.arff",
        _arff_text(f"FEATURES_RUNSTATUS_{scenario}", [("instance_id", "STRING"), ("repetition", "NUMERIC"),
                                                      ("ALL", "{" + ", ".join(ASLIB_STATUSES) + "}")],
                   [[d, 1, "ok"] for d in ds.index])))
    if "aslib_fold" in ds.columns and ds["aslib_fold"].notna().all():
        fold_of = {d: int(f) for d, f in ds["aslib_fold"].items()}
    else:
        perm = np.random.default_rng(random_state).permutation(len(ds.index))
        fold_of = {d: int(perm[i] % folds) + 1 for i, d in enumerate(ds.index)}
    written.append(atomic_write_text(
        root / "cv.arff",
        _arff_text(f"CV_{scenario}", [("instance_id", "STRING"), ("repetition", "NUMERIC"), ("fold", "NUMERIC")],
                   [[d, 1, fold_of[d]] for d in ds.index])))
    description = {
        "scenario_id": scenario,
        "performance_measures": [measure],
        "maximize": [True],
        "performance_type": ["solution_quality"],
        "algorithm_cutoff_time": "?",
        "algorithm_cutoff_memory": "?",
        "features_cutoff_time": "?",
        "features_cutoff_memory": "?",
        "features_deterministic": list(feature_cols),
        "features_stochastic": "",
        "algorithms_deterministic": "",
        "algorithms_stochastic": "",
        "number_of_feature_steps": 1,
        "default_steps": ["ALL"],
        "feature_steps": {"ALL": {"provides": list(feature_cols)}},
        "metainfo_algorithms": {l: {"configuration": "", "deterministic": True} for l in meta.learner_ids},
    }
    header = (f"# ASlib scenario written by algorank from {escape(meta.source or 'meta-data')}\n"
              + ("" if has_time else "# no runtimes: the meta-data has no fit times\n")
              + (f"# regression: {measure} is the score max(R^2, 0), mean over the folds of a repetition\n"
                 if regression else ""))
    written.append(atomic_write_text(root / "description.txt",
                                     header + yaml.safe_dump(description, sort_keys=False, default_flow_style=False)))
    return written
