"""MultiTest and Multi2Test: cost-conscious learner orderings (Ulas, Yildiz, Alpaydin 2012), the procedure.

The strategy classes that wrap it (spec ``multi2test``) are in
:mod:`algorank.recommender.multitest_strategies`; the many-dataset result and its text in
:mod:`algorank.recommender.multitest_result`.

**MultiTest** (one dataset).  Learners are first ordered by a cost prior
(cheapest first).  For every pair with i cheaper than j a one-sided test of
``H0: error_i <= error_j`` is run; p-values are corrected for the ``k (k - 1) / 2``
comparisons (Holm by default).  When H0 is rejected, the costlier j is
significantly more accurate and the edge ``i -> j`` is added.  The order is then
built by repeatedly taking, among the remaining learners with no outgoing edge
to a remaining learner, the cheapest (:func:`order_from_significance`).

**Multi2Test** (many datasets, the paper's Table 2).  MultiTest on every dataset
gives ranks ``r_ij``; the prior of the second pass is the average normalised
cost (per dataset divided by that dataset's maximum cost); Friedman's test on the
ranks; if it rejects, a two-sided post hoc test on the average ranks gives the
significant pairs, an edge ``i -> j`` is added when the costlier j has a
significantly lower average rank, and the order follows as above.  If Friedman
does not reject, the order is the average-cost order.

Missing cells (``missing="auto"``, the default): every dataset on which at least
two of the compared learners have at least two shared paired evaluations is
used.  MultiTest runs there on the learners present (ranks 1..m among them; the
evaluations some present learner lacks are dropped), and the second pass uses
the omnibus test that fits the resulting rank matrix
(:func:`evaluation.stats.omnibus`): Friedman when every learner is on every
dataset used, Durbin for a balanced incomplete design, Skillings-Mack otherwise.
The post hoc test then works on the Skillings-Mack standardised differences
(``posthoc(..., z=...)``), which equal Friedman's on complete data, and the
reported average ranks are the rescaled ranks of
:func:`evaluation.stats.rescaled_average_ranks`.  The test used is in
``Multi2TestResult.omnibus_method`` and in the notes.  ``missing="drop"`` keeps
the complete-block analysis: only datasets where every compared learner has
paired runs, with Friedman.  Either way, every dataset left out is reported with
the reason (``Multi2TestResult.dropped``); nothing is imputed.

Pairwise test choice (``pairwise="auto"``) from the evaluation design of a dataset:

* 5 repeats x 2 folds -> combined 5x2 cv t test (signed, t with 5 df);
* r repeats x k >= 2 folds -> corrected repeated k-fold cv t test;
* repeated holdout (all ``fold = 0``, e.g. LCDB's 25 paired splits) -> the corrected
  resampled t test with ``test_train_ratio`` (default :data:`LCDB_TEST_TRAIN_RATIO`).

The combined 5x2 cv F test is two-sided only and therefore refused for
MultiTest's one-sided question.
"""

from __future__ import annotations

import collections
import concurrent.futures
import functools
import logging
import math
import os
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from algorank.evaluation.stats import POSTHOC_METHODS, bonferroni_adjust, holm_adjust, posthoc
from algorank.evaluation.stats.skillings_mack import omnibus, omnibus_pairwise_z
from algorank.evaluation.stats._validate import check_alpha, check_choice
from algorank.evaluation.stats.pairwise import t_test_rows
from algorank.metadata.dataset import COST_KINDS
from algorank.metadata.errors import InputError
from algorank.metadata.task import lower_is_better
from algorank.metadata.learners import short_name
from algorank.metadata.text import escape
from algorank.metadata.progress import progress_bar

from algorank.metadata.fold_runs import FoldRuns, fold_runs_of
from algorank.recommender.multitest_fast import FAST_TESTS, multitest_order
from algorank.recommender.multitest_pairs import paired_array as _paired_array
from algorank.recommender.multitest_result import Multi2TestResult

__all__ = [
    "LCDB_TEST_TRAIN_RATIO",
    "PAIRWISE_TESTS",
    "CORRECTIONS",
    "MISSING_POLICIES",
    "MultiTestResult",
    "Multi2TestResult",
    "order_from_significance",
    "resolve_learners",
    "adjacent_reasons",
    "multitest",
    "multitest_on_meta",
    "multi2test",
    "run_columns",
]

logger = logging.getLogger(__name__)

#: n_test / n_train of LCDB's splits: the test set is 10 % of the data and the
#: largest training anchor uses the 90 % x 90 % = 81 % left after the test and
#: validation splits.  Used by the corrected resampled t test on the snapshot.
LCDB_TEST_TRAIN_RATIO = 0.10 / 0.81

#: Names accepted by ``pairwise``.
PAIRWISE_TESTS = ("auto", "corrected_resampled_t", "corrected_kfold_t", "combined_5x2cv_t",
                  "dietterich_5x2cv_t", "paired_t", "combined_5x2cv_f")
#: Multiple-comparison corrections of MultiTest's one-sided pairwise tests.
CORRECTIONS = ("holm", "bonferroni", "none")
#: How Multi2Test treats datasets where some compared learner has no runs.
MISSING_POLICIES = ("auto", "drop")
_FIVE_BY_TWO = tuple((r, f) for r in range(5) for f in range(2))


# ---------------------------------------------------------------- the pure ordering
def _prior_positions(prior_order: Sequence, k: int, labels: Sequence[str] | None) -> np.ndarray:
    prior = list(prior_order)
    if labels is not None and prior and isinstance(prior[0], str):
        index = {l: i for i, l in enumerate(labels)}
        unknown = [p for p in prior if p not in index]
        if unknown:
            raise InputError(f"prior_order names unknown learner(s): {', '.join(unknown)}")
        prior = [index[p] for p in prior]
    if sorted(int(p) for p in prior) != list(range(k)):
        raise InputError(f"prior_order must be a permutation of the {k} learners; got {list(prior_order)!r}")
    pos = np.empty(k, dtype=int)
    pos[np.asarray(prior, dtype=int)] = np.arange(k)
    return pos


def order_from_significance(better, prior_order: Sequence, *, labels: Sequence[str] | None = None) -> list:
    """MultiTest's ordering from a significance matrix and a cost prior (pure function).

    Parameters
    ----------
    better : array_like of bool, shape (k, k)
        ``better[i, j]`` is True when learner i is significantly more accurate
        than learner j (the paper's Table 1 convention: row beats column).
    prior_order : sequence
        Learner indices (or labels, with ``labels``), cheapest / most preferred first.
    labels : sequence of str, optional
        Names of the rows of ``better``; when given, ``prior_order`` may use
        them and the result is a list of labels.

    Returns
    -------
    list
        The order, best first.  Edge ``i -> j`` exists when i is cheaper than j
        and ``better[j, i]``; repeatedly the cheapest remaining learner without
        an outgoing edge to a remaining learner is taken.  (Significant wins of
        a cheaper learner need no edge: the prior already puts it first.)
    """
    b = np.asarray(better, dtype=bool)
    if b.ndim != 2 or b.shape[0] != b.shape[1]:
        raise InputError(f"better must be a square k x k matrix; got shape {b.shape}")
    k = b.shape[0]
    if labels is not None and len(labels) != k:
        raise InputError(f"labels must have {k} entries; got {len(labels)}")
    pos = _prior_positions(prior_order, k, labels)
    edge = (pos[:, None] < pos[None, :]) & b.T  # edge[i, j]: i cheaper, j significantly better
    remaining = np.ones(k, dtype=bool)
    order = []
    for _ in range(k):
        free = remaining & ~(edge[:, remaining].any(axis=1))
        cand = np.flatnonzero(free)
        pick = int(cand[np.argmin(pos[cand])])
        order.append(pick)
        remaining[pick] = False
    return [labels[i] for i in order] if labels is not None else order


def adjacent_reasons(order_idx: Sequence[int], better: np.ndarray, prior_pos: np.ndarray,
                     labels: Sequence[str]) -> tuple[dict, ...]:
    """Why each adjacent pair of an order is in that order (the paper's Section 4.7 asks for it).

    Returns
    -------
    tuple of dict
        One dict per adjacent pair ``(first, second)`` with ``reason``:

        * ``"significant"``: first is significantly more accurate than second;
        * ``"cost"``: no significant difference between them, first is cheaper;
        * ``"indirect"``: first is costlier and not significantly better than
          second (second had to wait for a learner significantly more
          accurate than it, named in ``via``).  This cannot happen for an order
          made by :func:`order_from_significance`: the cheapest free learner is
          always taken, so a cheaper second that follows directly was blocked
          only by first.  It is reported for orders from elsewhere.
    """
    out = []
    placed = set()
    for t in range(len(order_idx) - 1):
        a, b = int(order_idx[t]), int(order_idx[t + 1])
        placed.add(a)
        rec = {"first": labels[a], "second": labels[b]}
        first, second = short_name(labels[a]), short_name(labels[b])  # prose uses the short names, as tables do
        if better[a, b]:
            rec["reason"] = "significant"
            rec["text"] = f"{first} is significantly more accurate than {second}"
        elif prior_pos[a] < prior_pos[b]:
            rec["reason"] = "cost"
            rec["text"] = f"no significant difference; {first} is cheaper"
        else:
            via = [labels[c] for c in range(len(labels))
                   if c not in placed and c != b and better[c, b] and prior_pos[c] > prior_pos[b]]
            rec["reason"] = "indirect"
            rec["via"] = via
            rec["text"] = (f"{second} is cheaper but waits for "
                           f"{', '.join(map(short_name, via)) if via else 'a learner'} (significantly more accurate "
                           "than it)")
        out.append(rec)
    return tuple(out)


# ---------------------------------------------------------------- one dataset
@dataclass(frozen=True)
class MultiTestResult:
    """Result of MultiTest on one dataset.

    Attributes
    ----------
    order : tuple of str
        Best first.
    prior_order : tuple of str
        Cost prior, cheapest first.
    labels : tuple of str
        Learner names; rows/columns of the matrices.
    better : ndarray of bool, shape (k, k)
        ``better[i, j]``: i significantly more accurate than j (only tested for
        i costlier than j, the one-sided MultiTest question).
    pvalues, adjusted : ndarray, shape (k, k)
        One-sided p-value (raw / corrected) of ``H0: error_j <= error_i`` at
        ``[i, j]`` for i costlier than j; NaN elsewhere.
    test : str
        Pairwise test used (with its parameters).
    correction : str
    alpha : float
    reasons : tuple of dict
        See :func:`adjacent_reasons`.
    n_evaluations : int
        Paired evaluations used.
    """

    order: tuple
    prior_order: tuple
    labels: tuple
    better: np.ndarray = field(repr=False)
    pvalues: np.ndarray = field(repr=False)
    adjusted: np.ndarray = field(repr=False)
    test: str
    correction: str
    alpha: float
    reasons: tuple = ()
    n_evaluations: int = 0

    @property
    def ranks(self) -> dict:
        """Learner -> position in ``order`` (1 = best)."""
        return {l: i + 1 for i, l in enumerate(self.order)}


def _resolve_test(pairwise: str, evaluations: Sequence[tuple], *, dataset: str = "",
                  test_train_ratio: float | None = None) -> tuple[str, int | None, float | None, str]:
    """Pick / check the pairwise test for an evaluation design -> (test, n_folds, ratio, description)."""
    check_choice("pairwise", pairwise, PAIRWISE_TESTS)
    where = f" on dataset {dataset!r}" if dataset else ""
    evs = sorted(set(tuple(e) for e in evaluations))
    folds = sorted({f for _, f in evs})
    repeats = sorted({r for r, _ in evs})
    is_5x2 = tuple(evs) == _FIVE_BY_TWO
    if pairwise == "combined_5x2cv_f":
        raise InputError("pairwise test 'combined_5x2cv_f' is two-sided only and cannot answer MultiTest's "
                         "one-sided question; use combined_5x2cv_t or dietterich_5x2cv_t (5x2 cv folds) or "
                         "corrected_resampled_t")
    if pairwise in ("combined_5x2cv_t", "dietterich_5x2cv_t") and not is_5x2:
        raise InputError(f"pairwise test {pairwise!r} needs 5x2 cv folds (repeats 0-4 x folds 0-1); the runs"
                         f"{where} have {len(evs)} evaluations with folds {folds[:5]} and {len(repeats)} repeats")
    test = pairwise
    if pairwise == "auto":
        test = "combined_5x2cv_t" if is_5x2 else ("corrected_resampled_t" if folds == [0] else "corrected_kfold_t")
    n_folds = None
    ratio = None
    if test_train_ratio is not None:  # checked whichever test uses it: a bad value is never silently ignored
        try:
            given = float(test_train_ratio)
        except (TypeError, ValueError):
            given = math.nan
        if isinstance(test_train_ratio, bool) or not (given > 0 and math.isfinite(given)):
            raise InputError(f"test_train_ratio must be a positive number; got {test_train_ratio!r}")
    if test == "corrected_kfold_t":
        n_folds = len(folds)
        if n_folds < 2 or len(evs) != n_folds * len(repeats):
            raise InputError(f"pairwise test 'corrected_kfold_t' needs complete repeated k-fold cv (k >= 2) results; "
                             f"the runs{where} have folds {folds[:5]} over {len(repeats)} repeats ({len(evs)} evaluations)")
        desc = f"corrected repeated {n_folds}-fold cv t (n_test/n_train = 1/{n_folds - 1})"
    elif test == "corrected_resampled_t":
        ratio = LCDB_TEST_TRAIN_RATIO if test_train_ratio is None else float(test_train_ratio)
        if not ratio > 0 or not math.isfinite(ratio):
            raise InputError(f"test_train_ratio must be a positive number; got {test_train_ratio!r}")
        desc = (f"corrected resampled t (Nadeau-Bengio, n_test/n_train = {ratio:.4g}"
                + (", LCDB's split sizes" if test_train_ratio is None else "") + ")")
    else:
        desc = {"combined_5x2cv_t": "combined 5x2 cv t (5 df)", "dietterich_5x2cv_t": "Dietterich 5x2 cv t (5 df)",
                "paired_t": "paired t (uncorrected; liberal for resampled designs)"}[test]
    return test, n_folds, ratio, desc


def multitest(scores, prior_order: Sequence, *, labels: Sequence[str] | None = None,
              pairwise: str = "corrected_resampled_t", evaluations: Sequence[tuple] | None = None,
              correction: str = "holm", alpha: float = 0.05, higher_is_better: bool = True,
              test_train_ratio: float | None = None, reasons: bool = True) -> MultiTestResult:
    """MultiTest on one dataset from paired per-evaluation scores.

    Parameters
    ----------
    scores : array_like of shape (k, n_evaluations)
        Row = learner, column = paired split (same split for every learner).
    prior_order : sequence
        Learner indices or labels, cheapest (most preferred) first.
    labels : sequence of str, optional
        Learner names (default ``"0" .. "k-1"``).
    pairwise : str
        One of :data:`PAIRWISE_TESTS` (``"combined_5x2cv_f"`` is refused: two-sided).
    evaluations : sequence of (repeat, fold), optional
        Labels of the columns, used to check / pick the test.  Default:
        ``(j, 0)`` for a holdout design, or the 5x2 layout when a 5x2 test is asked for
        and there are 10 columns.
    correction : {"holm", "bonferroni", "none"}
        Over the ``k (k - 1) / 2`` one-sided tests.
    alpha : float
        Family-wise level in (0, 1).
    higher_is_better : bool
        True for accuracies, False for errors.
    test_train_ratio : float, optional
        For the corrected resampled t test (default :data:`LCDB_TEST_TRAIN_RATIO`).

    reasons : bool
        Explain each adjacent pair of the order (``reasons`` of the result; False leaves it empty, as
        Multi2Test does for the per-dataset passes it only takes the ranks of).

    Returns
    -------
    MultiTestResult
    """
    alpha = check_alpha(alpha)
    check_choice("correction", correction, CORRECTIONS)
    s = np.asarray(scores, dtype=float)
    if s.ndim != 2:
        raise InputError(f"scores must be 2-dimensional (learners x evaluations); got shape {s.shape}")
    k, n = s.shape
    if k < 2:
        raise InputError(f"MultiTest needs at least 2 learners; got {k}")
    if n < 2:
        raise InputError(f"MultiTest needs at least 2 paired evaluations per learner; got {n}")
    if np.isnan(s).any():
        raise InputError("scores contains NaN: keep only the evaluations every learner has")
    labels = tuple(str(i) for i in range(k)) if labels is None else tuple(str(l) for l in labels)
    if len(labels) != k:
        raise InputError(f"labels must have {k} entries; got {len(labels)}")
    if evaluations is None:
        if pairwise in ("combined_5x2cv_t", "dietterich_5x2cv_t") and n == 10:
            evaluations = _FIVE_BY_TWO
        else:
            evaluations = tuple((j, 0) for j in range(n))
    if len(evaluations) != n:
        raise InputError(f"evaluations must label the {n} columns of scores; got {len(evaluations)}")
    test, n_folds, ratio, desc = _resolve_test(pairwise, evaluations, test_train_ratio=test_train_ratio)
    if test in ("combined_5x2cv_t", "dietterich_5x2cv_t"):
        s = s[:, sorted(range(n), key=lambda j: tuple(evaluations[j]))]  # replication-major
    if not higher_is_better:
        s = -s
    pos = _prior_positions(prior_order, k, labels)
    first, second = np.triu_indices(k, 1)  # the pairs of combinations(range(k), 2), in that order
    costly = pos[second] > pos[first]
    pairs = np.column_stack([np.where(costly, second, first), np.where(costly, first, second)])  # (costly, cheap)
    # H0: score_costly <= score_cheap (alternative: the costlier learner scores higher)
    _, p, _ = t_test_rows(s[pairs[:, 0]] - s[pairs[:, 1]], test, alternative="greater", test_train_ratio=ratio,
                          n_folds=n_folds)
    if correction == "holm":
        adj = holm_adjust(p)
    elif correction == "bonferroni":
        adj = bonferroni_adjust(p)
    else:
        adj = p.copy()
    pmat = np.full((k, k), np.nan)
    amat = np.full((k, k), np.nan)
    pmat[pairs[:, 0], pairs[:, 1]] = p
    amat[pairs[:, 0], pairs[:, 1]] = adj
    better = np.zeros((k, k), dtype=bool)
    better[pairs[:, 0], pairs[:, 1]] = adj <= alpha
    prior_idx = list(np.argsort(pos))
    order = order_from_significance(better, prior_idx)
    return MultiTestResult(
        order=tuple(labels[i] for i in order), prior_order=tuple(labels[i] for i in prior_idx), labels=labels,
        better=better, pvalues=pmat, adjusted=amat, test=desc, correction=correction, alpha=alpha,
        reasons=adjacent_reasons(order, better, pos, labels) if reasons else (), n_evaluations=n,
    )


# ---------------------------------------------------------------- costs
def resolve_learners(names: Sequence[str], available: Sequence[str]) -> list[str]:
    """Map learner ids or short names (``knn``, ``svc-rbf``) to the ids in ``available``."""
    available = list(available)
    by_short = {}
    for a in available:
        try:
            by_short.setdefault(short_name(a), a)
        except Exception:  # an id unknown to the learner registry has no short name
            pass
    out, unknown = [], []
    for n in names:
        n = str(n).strip()
        if n in available:
            out.append(n)
        elif n in by_short:
            out.append(by_short[n])
        else:
            unknown.append(n)
    if unknown:
        import difflib

        names_known = sorted(by_short) or sorted(available)
        close = difflib.get_close_matches(unknown[0], names_known, n=1, cutoff=0.6)
        hint = f" (did you mean {escape(close[0])!r}?)" if close else ""
        shown = ", ".join(escape(n) for n in names_known[:40]) + (
            f" and {len(names_known) - 40} more" if len(names_known) > 40 else "")
        raise InputError(f"unknown learner(s) {', '.join(escape(u) for u in unknown[:5])}{hint}; learners of this "
                         f"meta-data: {shown}")
    return out


def _cost_table(meta, cost, learners: Sequence[str]) -> tuple[pd.DataFrame | None, tuple | None, str]:
    """(datasets x learners cost table, None, desc) or (None, user order, desc).

    ``cost="none"``: every learner costs the same, the prior is the learner-id order
    (accuracy-only meta-data; the order then follows the significant differences only).
    A time cost on meta-data without any time is an InputError naming the column.
    """
    if isinstance(cost, str) and cost == "none":
        return None, tuple(sorted(learners)), "none (equal costs, prior by learner id)"
    if isinstance(cost, str) and cost in COST_KINDS:
        table = meta.cost(cost).reindex(columns=list(learners))
        if not np.isfinite(table.to_numpy(dtype=float)).any():
            column = "fit_time" if cost == "fit_predict_time" else cost
            raise InputError(f"cost {cost!r} needs the '{column}' column, which has no values for these learners "
                             "(accuracy-only meta-data?); use cost='none' or a learner order")
        return table, None, cost
    if isinstance(cost, str):
        items = [c.strip() for c in cost.split(",") if c.strip()]
        if len(items) < 2:
            raise InputError(f"cost must be one of {', '.join(COST_KINDS)}, none, or a comma-separated learner "
                             f"order; got {cost!r}")
        cost = items
    user = resolve_learners(cost, learners)
    if sorted(user) != sorted(learners) or len(set(user)) != len(user):
        missing = sorted(set(learners) - set(user))
        extra = sorted(set(user) - set(learners))
        raise InputError("a user cost order must list every compared learner exactly once"
                         + (f"; missing: {', '.join(missing[:5])}" if missing else "")
                         + (f"; not compared: {', '.join(extra[:5])}" if extra else ""))
    return None, tuple(user), "user order"


def run_columns(cost, metric: str = "accuracy") -> tuple[str, ...]:
    """The numeric run columns :func:`multi2test` reads for ``cost`` and ``metric`` (what a loader keeps)."""
    kinds = {"fit_time": ("fit_time",), "fit_predict_time": ("fit_time", "predict_time"),
             "model_bytes": ("model_bytes",)}
    return (metric,) + (kinds.get(cost, ()) if isinstance(cost, str) else ())


def _order_by(values: np.ndarray, labels: Sequence[str]) -> list[int]:
    """Indices sorted by value, ties broken by learner id (documented, deterministic)."""
    return sorted(range(len(labels)), key=lambda i: (values[i], labels[i]))


def multitest_on_meta(meta, dataset: str, *, learners: Sequence[str] | None = None, cost="fit_time",
                      pairwise: str = "auto", correction: str = "holm", alpha: float = 0.05,
                      test_train_ratio: float | None = None, metric: str = "accuracy") -> MultiTestResult:
    """MultiTest on one dataset of a MetaDataset (paired evaluations, cost prior of that dataset).

    ``cost`` is ``"fit_time"``, ``"fit_predict_time"``, ``"model_bytes"`` (the
    dataset's mean cost per learner, ties broken by learner id) or a learner
    list / comma-separated string (a user order, cheapest first).
    """
    if learners is not None:
        learners = resolve_learners(learners, meta.learner_ids)
        if len(set(learners)) < 2:
            raise InputError(f"learners must name at least 2 learners; got {learners!r}")
    ps = meta.paired(dataset, metric, learners=learners)
    labels = list(ps.learners)
    if len(labels) < 2:
        raise InputError(f"dataset {dataset!r} has fewer than 2 learners with runs")
    table, user, _ = _cost_table(meta, cost, labels)
    if user is not None:
        prior = list(user)
    else:
        row = table.loc[str(dataset)].to_numpy(dtype=float)
        if np.isnan(row).any():
            raise InputError(f"cost {cost!r} is missing on dataset {dataset!r} for some learner")
        prior = [labels[i] for i in _order_by(row, labels)]
    return multitest(ps.values, prior, labels=labels, pairwise=pairwise, evaluations=ps.evaluations,
                     correction=correction, alpha=alpha, higher_is_better=not lower_is_better(metric),
                     test_train_ratio=test_train_ratio)


# ---------------------------------------------------------------- many datasets
def _first_pass_threads(n_jobs: int | None) -> int:
    """Threads of Multi2Test's first pass: ``n_jobs``, or (None) the CPUs, at most 8; -1: all CPUs.  A value
    above the cores this process may run on is lowered to them, with a note in the log."""
    from algorank.metadata.checks import available_cores

    cpus = available_cores()
    if n_jobs is None:
        return max(1, min(8, cpus))
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0 or n_jobs < -1:
        raise InputError(f"n_jobs must be a positive integer or -1 (all CPUs); got {n_jobs!r}")
    if n_jobs > cpus:
        logger.warning("note: n_jobs=%d is more than the %d core(s) of this machine; using %d", n_jobs, cpus, cpus)
        return cpus
    return cpus if n_jobs == -1 else int(n_jobs)


@functools.lru_cache(maxsize=64)
def _resolve_design(pairwise: str, evs: tuple, test_train_ratio) -> tuple:
    """:func:`_resolve_test` of one evaluation design (the datasets of a meta-dataset mostly share one)."""
    return _resolve_test(pairwise, evs, test_train_ratio=test_train_ratio)


def _first_pass_order(values: np.ndarray, prior: np.ndarray, labels: Sequence[str], cols: np.ndarray, evs, *,
                      pairwise: str, correction: str, alpha: float, higher_is_better: bool,
                      test_train_ratio: float | None) -> tuple[str, np.ndarray]:
    """MultiTest's order on one dataset of Multi2Test's first pass: ``(test description, rows of values best
    first)``; the rows of ``values`` are the learners ``labels[cols]``, ``prior`` lists them cheapest first.

    The mean-over-deviation t tests go through :func:`~algorank.recommender.multitest_fast.multitest_order`
    (no p-value per pair; the same order); the 5x2 cv tests through :func:`multitest`.
    """
    test, n_folds, ratio, desc = _resolve_design(pairwise, evs, test_train_ratio)
    if test not in FAST_TESTS:
        here = [labels[j] for j in cols]
        res = multitest(values, [here[i] for i in prior], labels=here, pairwise=pairwise, evaluations=evs,
                        correction=correction, alpha=alpha, higher_is_better=higher_is_better,
                        test_train_ratio=test_train_ratio, reasons=False)
        row_of = {l: i for i, l in enumerate(here)}
        return res.test, np.array([row_of[l] for l in res.order], dtype=np.int64)
    x = values[prior] if higher_is_better else -values[prior]
    order = multitest_order(x, test=test, n_folds=n_folds, test_train_ratio=ratio, correction=correction,
                            alpha=alpha)
    return desc, prior[order]


def _paired_blocks(runs: FoldRuns, learners: Sequence[str], metric: str, *, missing: str = "drop"):
    """Yield (dataset, learners used, evaluations, values (m x n) or None, why), one pivot for all datasets.

    The learners used are their positions in ``learners`` (ascending), the rows of ``values``.

    ``missing="drop"``: a dataset counts only when every learner has runs there.
    ``missing="auto"``: the learners with runs there (at least 2) are used; when they share
    fewer than 2 splits, the learner with the fewest evaluations is set aside (repeatedly).
    ``why`` is the reason for a dropped dataset, or the comma-joined learners set aside on a used one.
    """
    learners = list(learners)
    values, evaluations, rows, ds_ids = _paired_array(runs, learners, metric)
    for d, dataset in enumerate(ds_ids):
        lo, hi = rows[d], rows[d + 1]
        block, evs_all = values[lo:hi], evaluations[lo:hi]
        has = ~np.isnan(block)
        present = has.any(axis=0)
        if not present.all() and missing == "drop":
            absent = [l for l, p in zip(learners, present) if not p]
            yield dataset, None, None, None, (f"no run of {len(absent)} learner(s) "
                                              f"({', '.join(absent[:3])}{'...' if len(absent) > 3 else ''})")
            continue
        cols = np.flatnonzero(present)
        complete = has[:, cols].all(axis=1)
        if missing == "auto" and len(cols) > 2 and int(complete.sum()) < 2:
            # learners with few evaluations can leave no split shared by all: set the learner with the
            # fewest evaluations aside (ties: smallest id) until at least 2 splits are shared
            here = cols.tolist()
            counts = has.sum(axis=0)
            while len(here) > 2 and int(has[:, here].all(axis=1).sum()) < 2:
                here.remove(min(here, key=lambda j: (int(counts[j]), learners[j])))
            cols = np.asarray(here, dtype=np.int64)
            complete = has[:, cols].all(axis=1)
        if len(cols) < 2:
            yield dataset, None, None, None, f"only {len(cols)} of the compared learners has runs"
            continue
        if int(complete.sum()) < 2:
            who = "all learners" if len(cols) == len(learners) else f"the {len(cols)} learners present"
            yield dataset, None, None, None, f"only {int(complete.sum())} paired evaluation(s) shared by {who}"
            continue
        evs = tuple(map(tuple, evs_all[complete].tolist()))
        aside = ""
        if len(cols) < int(present.sum()):
            used = set(cols.tolist())
            aside = ",".join(l for j, l in enumerate(learners) if present[j] and j not in used)
        yield dataset, cols, evs, block[complete][:, cols].T.copy(), aside
    for d in sorted(set(runs.dataset_ids) - set(ds_ids)):
        yield d, None, None, None, "no successful run of the compared learners"


def multi2test(meta, *, learners: Sequence[str] | None = None, cost="fit_time", pairwise: str = "auto",
               correction: str = "holm", posthoc_method: str = "bergmann", alpha: float = 0.05,
               test_train_ratio: float | None = None, metric: str = "accuracy",
               progress: bool = False, missing: str = "auto", n_jobs: int | None = None) -> Multi2TestResult:
    """Multi2Test over the datasets of a MetaDataset (Table 2 of the paper).

    Parameters
    ----------
    meta : MetaDataset, FoldRuns, str or path
        The runs: a :class:`~algorank.metadata.dataset.MetaDataset`, the same runs as arrays
        (:class:`~algorank.metadata.fold_runs.FoldRuns`: what a large Parquet file is best read as,
        with :func:`~algorank.metadata.fold_runs.load_fold_runs`), or what ``load_fold_runs`` takes (a
        file, an embedded set's name).  The result is the same for all of them.
    learners : sequence of str, optional
        Learners to compare (default: all in ``meta``; at least 2).
    cost : str or sequence of str
        ``"fit_time"``, ``"fit_predict_time"``, ``"model_bytes"``, or a user order
        (list or comma-separated string, cheapest first) used in both passes.
    pairwise : str
        First-pass test, one of :data:`PAIRWISE_TESTS` (``"auto"`` picks it
        from each dataset's evaluation design; see the module docstring).
    correction : {"holm", "bonferroni", "none"}
        Correction of the first-pass one-sided tests.
    posthoc_method : {"nemenyi", "bonferroni-dunn", "holm", "shaffer", "bergmann"}
        Second-pass two-sided post hoc test on the average ranks
        (Bergmann-Hommel falls back to Shaffer above 10 learners; noted).
    alpha : float
        Level of every test, in (0, 1).
    test_train_ratio : float, optional
        For the corrected resampled t test (default :data:`LCDB_TEST_TRAIN_RATIO`).
    progress : bool
        Show a tqdm bar over datasets on stderr (terminals only).
    missing : {"auto", "drop"}
        ``"auto"`` (default): use every dataset with at least two compared
        learners, with Friedman, Durbin or Skillings-Mack as the pattern requires;
        ``"drop"``: only datasets where every compared learner has runs, with
        Friedman (see the module docstring).
    n_jobs : int, optional
        Threads of the first pass (datasets in parallel; the result does not depend on it).  None:
        the machine's CPUs, at most 8; -1: all of them.

    Returns
    -------
    Multi2TestResult

    Raises
    ------
    InputError
        Bad alpha, fewer than 2 learners, fewer than 2 usable datasets, a test
        that does not fit the evaluation design.
    """
    alpha = check_alpha(alpha)
    check_choice("posthoc_method", posthoc_method, POSTHOC_METHODS)
    check_choice("correction", correction, CORRECTIONS)
    check_choice("pairwise", pairwise, PAIRWISE_TESTS)
    check_choice("missing", missing, MISSING_POLICIES)
    workers = _first_pass_threads(n_jobs)
    runs = fold_runs_of(meta, columns=run_columns(cost, metric))
    all_learners = list(runs.learner_ids)
    learners = all_learners if learners is None else resolve_learners(learners, all_learners)
    if len(set(learners)) < 2:
        raise InputError(f"learners must name at least 2 distinct learners; got {learners!r}")
    if len(set(learners)) != len(learners):
        raise InputError("learners must not repeat a learner")
    labels = sorted(learners)
    k = len(labels)
    table, user, cost_desc = _cost_table(runs, cost, labels)
    position = {l: j for j, l in enumerate(labels)}
    user_cols = None if user is None else [position[l] for l in user]
    if table is not None:  # one array, a row per dataset (a pandas lookup per dataset costs seconds at 10,000)
        cost_row = {d: i for i, d in enumerate(table.index)}
        table = table.to_numpy(dtype=float)
    dropped: list[tuple[str, str]] = []
    norm_cost: list[np.ndarray] = []
    tests_used: set[str] = set()
    blocks = _paired_blocks(runs, labels, metric, missing=missing)
    blocks = progress_bar(blocks, total=len(runs.dataset_ids), desc="MultiTest per dataset", unit="dataset",
                          enabled=progress)
    aside = 0
    rank_rows: dict[str, np.ndarray] = {}
    pending: collections.deque = collections.deque()

    def collect(dataset: str, cols: np.ndarray, job) -> None:
        try:
            desc, order = job.result()
        except InputError as exc:
            raise InputError(f"dataset {dataset!r}: {exc}") from None
        tests_used.add(desc)
        row = np.full(k, np.nan)
        row[cols[order]] = np.arange(1, len(order) + 1, dtype=float)
        rank_rows[dataset] = row

    # the compiled passes release the GIL: datasets run on threads, their ranks are kept in dataset order
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        try:
            for dataset, cols, evs, values, why in blocks:
                if values is None:
                    dropped.append((dataset, why))
                    continue
                aside += len(why.split(",")) if why else 0
                if user is not None:
                    row_of = {j: i for i, j in enumerate(cols.tolist())}
                    prior = np.array([row_of[j] for j in user_cols if j in row_of], dtype=np.int64)
                else:
                    sub = table[cost_row[dataset], cols]
                    if np.isnan(sub).any():
                        dropped.append((dataset, f"{cost} missing for some learner"))
                        continue
                    prior = np.argsort(sub, kind="stable")  # ties: the learner ids' order (_order_by)
                    mx = sub.max()
                    full = np.full(k, np.nan)
                    full[cols] = sub / mx if mx > 0 else 0.0
                    norm_cost.append(full)
                pending.append((dataset, cols, pool.submit(
                    _first_pass_order, values, prior, labels, cols, evs, pairwise=pairwise, correction=correction,
                    alpha=alpha, higher_is_better=not lower_is_better(metric), test_train_ratio=test_train_ratio)))
                while len(pending) > 2 * workers:
                    collect(*pending.popleft())
            while pending:
                collect(*pending.popleft())
        finally:
            for *_, job in pending:
                job.cancel()
    if len(rank_rows) < 2:
        who = f"all {k} learners" if missing == "drop" else "at least 2 of the learners"
        hint = ""
        if dropped and all("paired evaluation" in why for _, why in dropped):
            hint = ("; MultiTest tests learners per dataset on paired folds, and these runs have at most one "
                    "evaluation per split (aggregated results): compare such learners over datasets instead "
                    "(algorank compare)")
        raise InputError(f"Multi2Test needs at least 2 datasets on which {who} have paired runs; "
                         f"found {len(rank_rows)} ({len(dropped)} dropped){hint}")
    ranks = pd.DataFrame.from_dict(rank_rows, orient="index", columns=labels)
    ranks.index.name = "dataset"
    fr = omnibus(ranks.to_numpy(), lower_is_better=True, labels=labels)
    notes = []
    if dropped:
        why = ("not every compared learner has paired successful runs there (complete-block analysis, "
               "missing='drop'; no imputation)" if missing == "drop"
               else "fewer than 2 compared learners with 2 shared paired evaluations, or a missing cost (no imputation)")
        notes.append(f"{len(dropped)} of {len(dropped) + len(ranks)} datasets dropped: {why}")
    n_missing = int(ranks.isna().to_numpy().sum())
    if n_missing:
        notes.append(f"{n_missing} of {ranks.size} (dataset, learner) cells are empty: omnibus test "
                     f"{fr.method} on all {fr.n_datasets} datasets, post hoc on its standardised rank-sum "
                     "differences, average ranks rescaled to the learners present")
    if aside:
        notes.append(f"{aside} cell(s) set aside: a learner with too few evaluations to share 2 paired splits "
                     "with the other learners on a dataset is left out there")
    if user is not None:
        prior_idx = [labels.index(l) for l in user]
        avg_cost = np.full(k, np.nan)
    else:
        with np.errstate(invalid="ignore"):
            stacked = np.vstack(norm_cost)
            cnt = (~np.isnan(stacked)).sum(axis=0)
            avg_cost = np.where(cnt > 0, np.nansum(stacked, axis=0) / np.maximum(cnt, 1), np.nan)
        if np.isnan(avg_cost).any():
            absent = [labels[j] for j in np.flatnonzero(np.isnan(avg_cost))]
            raise InputError(f"learner(s) {', '.join(absent[:5])} have no dataset with both runs and a {cost}; "
                             "leave them out or give a user cost order")
        prior_idx = _order_by(avg_cost, labels)
    prior_pos = np.empty(k, dtype=int)
    prior_pos[prior_idx] = np.arange(k)
    better = np.zeros((k, k), dtype=bool)
    ph = None
    if fr.pvalue <= alpha:
        ph = posthoc(fr.average_ranks, fr.n_datasets, method=posthoc_method, alpha=alpha, labels=labels,
                     z=None if n_missing == 0 else omnibus_pairwise_z(fr))
        better = ph.significant & (ph.z < 0)
        if ph.note:
            notes.append(ph.note)
        order_idx = order_from_significance(better, prior_idx)
    else:
        notes.append(f"{fr.method.split(' (')[0]} test did not reject (p = {fr.pvalue:.3g} > alpha = {alpha}): "
                     "order by average cost, no post hoc test")
        order_idx = list(prior_idx)
    return Multi2TestResult(
        order=tuple(labels[i] for i in order_idx), labels=tuple(labels),
        prior_order=tuple(labels[i] for i in prior_idx), average_cost=avg_cost, ranks=ranks, friedman=fr,
        posthoc=ph, better=better, reasons=adjacent_reasons(order_idx, better, prior_pos, labels),
        dropped=tuple(dropped), pairwise_tests=tuple(sorted(tests_used)), cost=cost_desc, correction=correction,
        posthoc_method=posthoc_method, alpha=alpha, notes=tuple(notes), missing=missing,
    )
