"""Warm the fork server of timed folds: one tiny fit of every portfolio learner, at import.

Timed folds run in children forked from a ``multiprocessing`` fork server
(:mod:`algorank.evaluation.cv.children`).  A fresh fork pays for every first call its
parent never made (scikit-learn's and SciPy's lazy set-up of solvers, validation and BLAS),
which for a small logistic regression costs more than the fit itself.  The fork server imports this module once (it is in the server's preload list),
so its children start from a process that has already made those first calls.

Importing it anywhere else costs a few tenths of a second and changes nothing else; it is not
imported by the package itself.
"""

from __future__ import annotations

import logging
import sys

import numpy as np

from algorank.evaluation.cv.fold import evaluate_fold
from algorank.evaluation.cv.preprocessing import resolve_learner
from algorank.evaluation.cv.resampling import Split
from algorank.metadata.learners import learner_ids

__all__ = ["warm_up"]

logger = logging.getLogger(__name__)


def warm_up(rows: int = 60) -> int:
    """Fit and score every portfolio learner once on ``rows`` synthetic rows; return how many ran.

    The data has two numeric columns, one nominal column and two classes, so the
    preprocessing's imputation, one-hot and scaling paths run too.  Learner faults are ignored
    (the warm-up is best effort: it must never stop the fork server from starting).
    """
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.normal(size=rows), rng.normal(size=rows), rng.integers(0, 3, rows)]).astype(float)
    X[0, 0] = np.nan
    y = (X[:, 1] > 0).astype(int)
    split = Split(repeat=0, fold=0, train=np.arange(rows // 2, rows), test=np.arange(rows // 2))
    done = 0
    for learner in learner_ids():
        try:
            record = evaluate_fold(resolve_learner(learner), X, y, split, n_classes=2, random_state=0,
                                   nominal=(False, False, True))
            done += record.status == "ok"
        except Exception:  # pragma: no cover - best effort
            logger.debug("warm-up of %s failed", learner, exc_info=True)
    return done


warm_up()

# The server's imports are done: its own watch of its caller takes over from the start-up guard.
_guard = sys.modules.get("algorank_fold_server_guard")
if _guard is not None:
    _guard.stop()
