"""The embedded table of learners' growth exponents (how fit time grows with the rows), from LCDB.

``metadata/data/lcdb_growth.csv`` holds, per LCDB learner, the median within-dataset log-log slope
of fit time in training rows over LCDB's learning curves
(:func:`algorank.metadata.lcdb.growth_exponents`), with the datasets of LCDB's frozen held-out
split left out; ``lcdb_growth.json`` records its checksum, source and rule.  The runtime model
(:mod:`algorank.recommender.runtime_model`) extrapolates along these exponents beyond the sizes
of its meta-data.  ``algorank snapshot build`` rebuilds it with the snapshot.
"""

from __future__ import annotations

import functools
import json
import logging
from importlib import resources
from pathlib import Path

from .io import atomic_write_text, check_out_dir, output_folder
from .lcdb import _version, growth_exponents
from .snapshot import file_sha256
from .splits import heldout

__all__ = ["GROWTH_FILE", "GROWTH_RECORD", "growth_path", "load_growth", "build_growth"]

logger = logging.getLogger(__name__)

GROWTH_FILE = "lcdb_growth.csv"
GROWTH_RECORD = "lcdb_growth.json"


def growth_path() -> Path:
    """Path of the embedded growth table."""
    return Path(str(resources.files(__package__).joinpath("data", GROWTH_FILE)))


@functools.lru_cache(maxsize=1)
def load_growth() -> dict:
    """Learner -> growth exponent of fit time in the training rows (LCDB learning curves).

    Empty when the table is missing: the runtime model then extrapolates with its own slopes.
    """
    import pandas as pd

    path = growth_path()
    if not path.is_file():
        logger.debug("no growth table at %s", path)
        return {}
    table = pd.read_csv(path)
    return {str(l): float(e) for l, e in zip(table["learner"], table["exponent"]) if e == e}


def build_growth(out_dir: str | Path | None = None, *, lcdb_dir: str | Path | None = None) -> dict:
    """Rebuild ``lcdb_growth.csv`` and its JSON record from LCDB's learning curves.

    The datasets of LCDB's frozen held-out split are left out, so that no held-out benchmark
    is scored with exponents measured on its own datasets.

    Parameters
    ----------
    out_dir : path, optional
        Folder to write to (default: the package's data folder).
    lcdb_dir : path, optional
        Folder of LCDB's CSV files (default: the installed ``lcdb`` package).

    Returns
    -------
    dict
        The written record (file, sha256, learners, source, rule, excluded).
    """
    out = Path(out_dir) if out_dir is not None else growth_path().parent
    check_out_dir(out)
    excluded = heldout("lcdb")
    table = growth_exponents(lcdb_dir, exclude=excluded)
    record = {
        "file": GROWTH_FILE,
        "sha256": None,
        "learners": int(len(table)),
        "source": f"lcdb {_version(lcdb_dir)} database-accuracy.csv (traintime of every training size)",
        "rule": "per (dataset, learner): log-log slope of the median traintime over seed pairs on sizes >= 1000 rows "
                "and >= 0.05 s (at least 3 sizes spanning 2x); per learner: median over datasets",
        "excluded": f"the {len(excluded)} datasets of the frozen lcdb held-out split",
    }
    target = out / GROWTH_FILE
    with output_folder(out):
        atomic_write_text(target, table.to_csv(index=False, float_format="%.4f"))
        record["sha256"] = file_sha256(target)
        atomic_write_text(out / GROWTH_RECORD, json.dumps(record, indent=2) + "\n")
    load_growth.cache_clear()
    logger.info("wrote %s (%d learners)", target, len(table))
    return record
