"""Frozen held-out splits of the real meta-datasets (made once, before any tuning).

Every claim about a strategy is scored on datasets that no tuning or design choice
touched: for each real meta-dataset a fixed list of held-out datasets is stored in
``metadata/data/splits/<name>_heldout.txt`` (one dataset id per line, ``#`` comments);
all tuning uses the rest.  :func:`heldout` reads a list; :func:`split_meta` splits a
:class:`~algorank.metadata.dataset.MetaDataset` into (training part, held-out ids).

The rule (:func:`choose_heldout`, also in ``metadata/data/splits/README.md``)
-------------------------------------------------------------------------------
1. **Groups.**  Datasets derived from the same data stay on the same side: in the broad
   evaluator set (and ``uci``, a subset of it) a group is the ``family`` of the build's
   selection rule (KEEL one-vs-rest variants with their base set, colic / colic.orig,
   spect(f).train / .test, ...); elsewhere every dataset is its own group.  A group's size
   is the largest number of rows among its datasets.
2. **Size strata.**  Groups with a known size are sorted by (size, group id) and cut into
   ``S = max(1, round(N / 20))`` strata of about 20 datasets each (``N`` = datasets with a
   known size): a group falls in stratum ``floor(S * m / N)`` where ``m`` is the number of
   datasets before it plus half its own.  Groups of unknown size form one more stratum.
3. **Seeded choice.**  Each group gets the key ``sha256("algorank-heldout-v1:" + group id)``;
   in every stratum groups are taken in increasing key order until the held-out datasets
   reach ``ceil(0.25 x`` the stratum's datasets).  So every stratum, and the whole set, is at
   least 25 % held out, and the choice of a group does not depend on which other datasets
   exist (a dataset added later falls in the training part: the lists are frozen, never
   regenerated).

Inputs (:func:`split_table`): ``broad``: ``metadata/data/splits/broad_datasets.csv``, the
selection rule's full list (151 datasets, written from the ``build`` branch's
``evaluation/metabuild.py`` ``select_datasets`` at commit 0bc897d, with MANIFEST rows and
families) - the split does not wait for the build; ``uci``: the ``broad`` split restricted to
the ``uci`` datasets (all 63 are in the broad list), so a dataset is held out in both or in
neither; ``lcdb``: the embedded LCDB snapshot, size = the largest training size (81 % of
the rows; LCDB's own table lacks the row count of 51 datasets; the order is that of the
rows); ``oboe``: OBOE's ``dataset_sizes.csv`` (column ``0`` = rows) for the datasets of its
``error_matrix.csv``; ``regression``: the chosen datasets of
:mod:`algorank.metadata.regression_sets` (``regression_datasets.csv``, with their groups), split by
the same rule before any learner ran on them; ``modern``: the ``broad`` split itself, since the modern set
holds the broad datasets with more learners (a dataset is held out in both or in neither, so no dataset
that tuned a strategy on ``broad`` becomes a held-out one).
"""

from __future__ import annotations

import hashlib
import math
import os
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from .errors import InputError

__all__ = ["SPLIT_NAMES", "SPLITS_DIR", "SALT", "FRACTION", "STRATUM_DATASETS", "heldout", "read_ids",
           "resolve_heldout", "split_meta", "group_key", "choose_heldout", "split_table", "write_split"]

#: Meta-datasets with a frozen split.
SPLIT_NAMES = ("broad", "lcdb", "oboe", "uci", "regression", "modern")
#: Folder of the split files inside the installed package.
SPLITS_DIR = Path(__file__).resolve().parent / "data" / "splits"
#: Salt of the group keys (the "seed" of the rule).
SALT = "algorank-heldout-v1"
#: Fraction of datasets held out in every stratum (at least).
FRACTION = 0.25
#: Datasets per size stratum (about).
STRATUM_DATASETS = 20


def read_ids(path: str | os.PathLike) -> tuple[str, ...]:
    """Dataset ids from a text file: one per line, blank lines and ``#`` comments ignored."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"held-out list not found: {p}")
    ids = []
    for line in p.read_text(encoding="utf-8").splitlines():
        item = line.split("#", 1)[0].strip()
        if item:
            ids.append(item)
    if not ids:
        raise InputError(f"held-out list {p} names no dataset")
    return tuple(ids)


def heldout(name: str) -> tuple[str, ...]:
    """The frozen held-out dataset ids of a meta-dataset (``broad``, ``lcdb``, ``oboe``, ``uci``, ``regression``, ``modern``).

    Raises
    ------
    InputError
        Unknown name.
    """
    key = str(name).strip().lower()
    if key not in SPLIT_NAMES:
        raise InputError(f"no frozen split named {name!r}; known: {', '.join(SPLIT_NAMES)} "
                         "(or give a text file of dataset ids)")
    return read_ids(SPLITS_DIR / f"{key}_heldout.txt")


def resolve_heldout(spec, *, meta_name: str | None = None) -> tuple[str, ...]:
    """Held-out ids from ``True`` (the split of ``meta_name``), a split name, a file, or a list of ids."""
    if spec is True:
        if not meta_name:
            raise InputError(f"heldout=True needs an embedded meta-data name ({', '.join(SPLIT_NAMES)}) to find its "
                             "split; give the split name or a file of dataset ids instead")
        return heldout(meta_name)
    if isinstance(spec, (list, tuple)):
        ids = tuple(str(d) for d in spec)
        if not ids:
            raise InputError("the held-out list is empty")
        return ids
    text = str(spec)
    if text.strip().lower() in SPLIT_NAMES:
        return heldout(text)
    if Path(text).is_file():
        return read_ids(text)
    raise InputError(f"heldout must be a split name ({', '.join(SPLIT_NAMES)}) or a file of dataset ids; got {spec!r}")


def split_meta(meta, ids: Iterable[str]):
    """``(training meta-data, held-out ids present in meta)``: the datasets of ``ids`` are removed.

    Ids of the list that ``meta`` does not hold are ignored (a list may cover a superset,
    e.g. the broad split of a partly built set); none present is an error.
    """
    ids = [str(d) for d in ids]
    present = [d for d in ids if d in set(meta.dataset_ids)]
    if not present:
        raise InputError("none of the held-out datasets is in the meta-data: wrong split for this meta-data?")
    if len(present) == len(meta.dataset_ids):
        raise InputError("every dataset of the meta-data is held out: nothing left to train on")
    return meta.exclude(datasets=present), present


def group_key(group: str, *, salt: str = SALT) -> str:
    """The seeded key of a group: ``sha256(salt + ":" + group)`` in hex."""
    return hashlib.sha256(f"{salt}:{group}".encode("utf-8")).hexdigest()


def choose_heldout(table: pd.DataFrame, *, fraction: float = FRACTION, stratum_datasets: int = STRATUM_DATASETS,
                   salt: str = SALT) -> list[str]:
    """Apply the split rule (module docstring) to a table of datasets.

    Parameters
    ----------
    table : DataFrame
        Columns ``dataset``, ``size`` (rows; NaN = unknown) and optionally ``group``
        (default: the dataset itself).
    fraction : float
        At least this fraction of every stratum is held out.
    stratum_datasets : int
        About this many datasets per size stratum.
    salt : str
        Seed of the group keys.

    Returns
    -------
    list of str
        Held-out dataset ids, sorted.
    """
    if not (0 < fraction < 1):
        raise InputError(f"fraction must lie in (0, 1); got {fraction!r}")
    if int(stratum_datasets) < 1:
        raise InputError(f"stratum_datasets must be >= 1; got {stratum_datasets!r}")
    t = table.copy()
    if "group" not in t.columns:
        t["group"] = t["dataset"]
    t["dataset"] = t["dataset"].astype(str)
    t["group"] = t["group"].astype(str)
    if t["dataset"].duplicated().any():
        raise InputError("choose_heldout: duplicated dataset ids")
    t["size"] = pd.to_numeric(t["size"], errors="coerce")
    groups = t.groupby("group").agg(size=("size", "max"), n=("dataset", "size")).reset_index()
    known = groups[groups["size"].notna()].sort_values(["size", "group"], kind="stable")
    unknown = groups[groups["size"].isna()]
    strata = []
    n_known = int(known["n"].sum())
    if n_known:
        s = max(1, int(round(n_known / stratum_datasets)))
        before = known["n"].cumsum().to_numpy() - known["n"].to_numpy()
        mid = before + known["n"].to_numpy() / 2.0
        idx = np.minimum(s - 1, np.floor(s * mid / n_known).astype(int))
        for k in range(s):
            strata.append(known[idx == k])
    if len(unknown):
        strata.append(unknown)
    chosen_groups = []
    for stratum in strata:
        need = math.ceil(fraction * int(stratum["n"].sum()))
        got = 0
        order = sorted(stratum.itertuples(index=False), key=lambda g: group_key(g.group, salt=salt))
        for g in order:
            if got >= need:
                break
            chosen_groups.append(g.group)
            got += int(g.n)
    return sorted(t.loc[t["group"].isin(chosen_groups), "dataset"].tolist())


def _shared_oboe(shared_dir) -> Path:
    base = Path(shared_dir) if shared_dir is not None else Path(os.environ.get("ALGORANK_SHARED", ""))
    for c in ([base / "metadata" / "oboe"] if str(base) else []) + [
            Path.cwd().parent / "shared" / "metadata" / "oboe",
            Path(__file__).resolve().parents[2] / "shared" / "metadata" / "oboe"]:
        if (c / "dataset_sizes.csv").is_file() and (c / "error_matrix.csv").is_file():
            return c
    raise InputError("OBOE's dataset_sizes.csv and error_matrix.csv were not found; pass shared_dir "
                     "(the folder holding metadata/oboe) or set ALGORANK_SHARED")


def split_table(name: str, *, shared_dir: str | os.PathLike | None = None) -> pd.DataFrame:
    """The input of the rule for a meta-dataset: columns dataset, size, group (see the module docstring)."""
    key = str(name).strip().lower()
    if key == "broad":
        b = pd.read_csv(SPLITS_DIR / "broad_datasets.csv", dtype={"dataset": str, "family": str})
        return pd.DataFrame({"dataset": b["dataset"], "size": b["instances"].astype(float), "group": b["family"]})
    if key == "lcdb":
        from .snapshot import load_meta

        runs = load_meta("lcdb").runs
        size = runs.groupby("dataset")["train_size"].max().astype(float)
        return pd.DataFrame({"dataset": size.index.astype(str), "size": size.to_numpy(), "group": size.index.astype(str)})
    if key == "oboe":
        folder = _shared_oboe(shared_dir)
        ids = [str(int(i)) for i in pd.read_csv(folder / "error_matrix.csv", index_col=0, usecols=[0]).index]
        sizes = pd.read_csv(folder / "dataset_sizes.csv", index_col=0)
        sizes.index = [str(int(i)) for i in sizes.index]
        missing = sorted(set(ids) - set(sizes.index))
        if missing:
            raise InputError(f"dataset_sizes.csv lacks OBOE dataset(s) {', '.join(missing[:5])}")
        return pd.DataFrame({"dataset": ids, "size": sizes.loc[ids, "0"].to_numpy(dtype=float), "group": ids})
    raise InputError(f"no split rule input for {name!r}; known: broad, lcdb, oboe (uci derives from broad)")


def _uci_from_broad(broad_heldout: Sequence[str]) -> list[str]:
    from .snapshot import load_meta

    uci = set(load_meta("uci").dataset_ids)
    return sorted(d for d in broad_heldout if d in uci)


def write_split(name: str, *, out_dir: str | os.PathLike | None = None,
                shared_dir: str | os.PathLike | None = None) -> Path:
    """Write ``<name>_heldout.txt`` by the rule (run once; the files are then frozen in the repository)."""
    from .io import atomic_path

    key = str(name).strip().lower()
    if key == "uci":
        ids = _uci_from_broad(choose_heldout(split_table("broad")))
        n_total = len(__import__("algorank.metadata.snapshot", fromlist=["load_meta"]).load_meta("uci").dataset_ids)
        how = "the broad split restricted to the uci datasets"
    elif key == "modern":
        table = split_table("broad")
        ids, n_total = choose_heldout(table), len(table)
        how = "the broad split: the modern set holds the broad datasets"
    else:
        table = split_table(key, shared_dir=shared_dir)
        ids = choose_heldout(table)
        n_total = len(table)
        how = f"choose_heldout on split_table({key!r})"
    out = Path(out_dir) if out_dir is not None else SPLITS_DIR
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{key}_heldout.txt"
    header = (f"# frozen held-out datasets of the {key!r} meta-data: {len(ids)} of {n_total} "
              f"({100.0 * len(ids) / n_total:.1f} %)\n# rule: algorank.metadata.splits ({how}), salt {SALT!r}, "
              f"fraction {FRACTION:g}, about {STRATUM_DATASETS} datasets per size stratum; see README.md\n")
    with atomic_path(target) as tmp:
        Path(tmp).write_text(header + "".join(f"{d}\n" for d in ids), encoding="utf-8")
    return target
