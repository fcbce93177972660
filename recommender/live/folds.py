"""How many folds a live test gets: a fixed number, or ``"auto"``, fewer when the data are large for the budget.

Every live test is a K-fold cross-validation, and its cost grows with K: a 5-fold test is five fits on 80 % of
the rows.  On a table that is large for the budget, that cost can keep the strongest but slowest learners (such
as gradient boosting with many trees) out of reach.

``cv="auto"`` follows the rule FLAML uses to choose between cross-validation and a holdout (Wang et al., *FLAML:
A Fast and Lightweight AutoML Library*, MLSys 2021; its ``SMALL_LARGE_THRES``): the data are *large for the
budget* when

    rows × features / 0.9  >=  10⁷ × budget / 3600 s

(about 167,000 cells at 60 s).  Then each test is a :data:`LARGE_FOLDS`-fold cross-validation (two fits on half
of the rows, about a quarter of a 5-fold test's cost for a learner linear in the rows) instead of
:data:`SMALL_FOLDS`-fold; without a budget, or below the threshold, it is :data:`SMALL_FOLDS`.  algorank keeps a
K-fold test where FLAML switches to one holdout split, so that every test is scored on all the rows.
"""

from __future__ import annotations

from algorank.metadata.checks import check_folds
from algorank.metadata.errors import InputError

__all__ = ["AUTO", "SMALL_FOLDS", "LARGE_FOLDS", "CELLS_PER_HOUR", "large_for_budget", "live_folds"]

#: The value of ``cv`` that chooses the folds from the data's size and the budget.
AUTO = "auto"
#: Folds of a live test when the data are not large for the budget (the default of a fixed ``cv``).
SMALL_FOLDS = 5
#: Folds of a live test when they are.
LARGE_FOLDS = 2
#: Cells (rows × features / 0.9) a budget of one hour is taken to cross-validate (FLAML's threshold).
CELLS_PER_HOUR = 10_000_000


def _cells(n_rows: int, n_features: int) -> int:
    return int(n_rows) * max(int(n_features), 1)


def large_for_budget(n_rows: int, n_features: int, budget: float | None) -> bool:
    """Whether ``rows × features / 0.9 >= 10⁷ × budget / 3600`` (never without a budget)."""
    if budget is None:
        return False
    return _cells(n_rows, n_features) / 0.9 >= CELLS_PER_HOUR * float(budget) / 3600.0


def live_folds(cv, *, n_rows: int, n_features: int, budget: float | None) -> tuple[int, str | None]:
    """The folds of each live test, and the reason when ``cv="auto"`` lowered them.

    Parameters
    ----------
    cv : int or "auto"
        A number of folds (returned as it is, checked), or ``"auto"``.
    n_rows, n_features : int
        The dataset's rows and feature columns.
    budget : float or None
        The budget in seconds.

    Returns
    -------
    folds : int
    reason : str or None
        One line for the output when ``"auto"`` chose :data:`LARGE_FOLDS`, else None.

    Raises
    ------
    InputError
        ``cv`` is neither ``"auto"`` nor an integer >= 2.
    """
    if isinstance(cv, str):
        if cv.strip().lower() != AUTO:
            raise InputError(f"cv (number of folds) must be an integer >= 2 or 'auto'; got {cv!r}")
        if large_for_budget(n_rows, n_features, budget):
            return LARGE_FOLDS, (f"{LARGE_FOLDS}-fold tests: {n_rows:,} rows x {n_features} features = "
                                 f"{_cells(n_rows, n_features):,} "
                                 f"cells are large for a {budget:g} s budget (cv='auto')")
        return SMALL_FOLDS, None
    return check_folds(cv), None
