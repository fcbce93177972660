"""Prior runs: the MetaDataset model, readers (LCDB, OBOE, OpenML, files), the embedded meta-data.

This package imports nothing else of algorank.
"""

from .dataset import (
    COST_KINDS,
    DATASET_COLUMNS,
    OPTIONAL_RUN_COLUMNS,
    RUN_COLUMNS,
    STATUSES,
    MetaDataset,
    MetaDescription,
    PairedScores,
)
from .errors import AlgorankError, InputError, ValidationError
from .learners import LEARNERS, LearnerSpec, estimator_from_path, learner_ids, make_estimator, short_name
from .snapshot import build_snapshot, load_meta, load_snapshot, snapshot_path, snapshot_record
from . import splits

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
