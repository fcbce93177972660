"""Prior runs: the MetaDataset model, readers (LCDB, OBOE, OpenML, files), the embedded meta-data.

This package imports nothing else of algorank.
"""

import importlib

#: Public name -> submodule that defines it, imported on first access (importing the package, e.g.
#: for its error classes, stays cheap: no pandas, numpy or scikit-learn).
_LAZY = {
    **{n: "dataset" for n in ("COST_KINDS", "DATASET_COLUMNS", "OPTIONAL_RUN_COLUMNS", "RUN_COLUMNS", "STATUSES",
                              "MetaDataset", "MetaDescription", "PairedScores")},
    **{n: "errors" for n in ("AlgorankError", "InputError", "ValidationError")},
    **{n: "learners" for n in ("LEARNERS", "LearnerSpec", "estimator_from_path", "learner_ids", "make_estimator",
                               "short_name")},
    **{n: "snapshot" for n in ("build_snapshot", "load_meta", "load_snapshot", "snapshot_path", "snapshot_record")},
}


def __getattr__(name: str):
    if name == "splits":
        return importlib.import_module(f"{__name__}.splits")
    sub = _LAZY.get(name)
    if sub is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{sub}"), name)
    globals()[name] = value
    return value


__all__ = [
    "splits",
    "COST_KINDS",
    "DATASET_COLUMNS",
    "OPTIONAL_RUN_COLUMNS",
    "RUN_COLUMNS",
    "STATUSES",
    "MetaDataset",
    "MetaDescription",
    "PairedScores",
    "AlgorankError",
    "InputError",
    "ValidationError",
    "LEARNERS",
    "LearnerSpec",
    "estimator_from_path",
    "learner_ids",
    "make_estimator",
    "short_name",
    "build_snapshot",
    "load_meta",
    "load_snapshot",
    "snapshot_path",
    "snapshot_record",
]
