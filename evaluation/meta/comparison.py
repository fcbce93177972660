"""Comparison statistics of strategies over datasets: paired tests on their per-dataset MIL and
the effect sizes of every pair."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Sequence

import numpy as np

from algorank.evaluation.meta.scoring import BenchmarkResult
from algorank.metadata.errors import InputError

__all__ = [
    "ComparisonResult",
    "compare_strategies",
    "pair_effects",
]


@dataclass(frozen=True, eq=False)
class ComparisonResult:
    """Several strategies compared over the same datasets by their per-dataset MIL.

    Attributes
    ----------
    names : tuple of str
    mean_mil, median_mil : ndarray (k,)
    test : object
        ``wilcoxon_signed_rank`` result for two strategies, ``friedman`` result for more.
    posthoc : object or None
        All-pairwise post hoc on the Friedman average ranks (more than two strategies).
    average_ranks : ndarray (k,)
        Mean rank of each strategy's MIL over datasets (1 = lowest MIL; rescaled
        ranks when some MIL is missing).
    n_datasets : int
    omnibus_method : str
        Friedman, Durbin or Skillings-Mack (missing MILs): the rank test behind
        ``average_ranks`` and the post hoc.
    effects : tuple of dict
        One per pair ``(a, b)`` of strategies (in input order): ``mean_difference``
        of MIL ``a - b`` with its 95 % t interval (``ci_low``, ``ci_high``),
        ``rank_biserial`` r of the paired MILs (positive: a has the larger MIL),
        ``cliffs_delta`` of the two MIL samples and its ``magnitude``, over the
        datasets where both have a MIL (``n``).
    kendall_w : float
        Kendall's W of the strategies' MIL ranks (NaN when some MIL is missing).
    """

    names: tuple
    mean_mil: np.ndarray
    median_mil: np.ndarray
    test: object
    posthoc: object
    average_ranks: np.ndarray
    n_datasets: int
    omnibus_method: str = "Friedman"
    effects: tuple = ()
    kendall_w: float = float("nan")

    def to_dict(self) -> dict:
        out = {
            "strategies": list(self.names),
            "n_datasets": self.n_datasets,
            "mean_mil": dict(zip(self.names, self.mean_mil.tolist())),
            "average_rank": dict(zip(self.names, self.average_ranks.tolist())),
            "omnibus_method": self.omnibus_method,
            "test": {"method": self.test.method, "statistic": float(self.test.statistic),
                     "pvalue": float(self.test.pvalue)},
            "kendall_w": None if not np.isfinite(self.kendall_w) else float(self.kendall_w),
            "effects": [dict(e) for e in self.effects],
        }
        if self.posthoc is not None:
            out["posthoc"] = {
                "method": self.posthoc.method,
                "adjusted_pvalues": {
                    f"{self.names[i]} vs {self.names[j]}": float(self.posthoc.adjusted[i, j])
                    for i in range(len(self.names)) for j in range(i + 1, len(self.names))
                },
            }
        return out


def compare_strategies(results: Sequence[BenchmarkResult], *, posthoc_method: str = "holm",
                       alpha: float = 0.05) -> ComparisonResult:
    """Test whether strategies differ in per-dataset MIL.

    Two strategies: Wilcoxon signed-rank (Pratt zero handling) on the paired MILs.
    More: Friedman (lower MIL = better rank) and an all-pairwise post hoc on the
    average ranks (``posthoc_method``, default Holm).  All results must cover the
    same datasets (same meta-data).  A NaN MIL (a strategy without a score on a
    dataset) is a missing cell: the omnibus test is then Durbin or Skillings-Mack
    (:func:`evaluation.stats.omnibus`), the post hoc works on its standardised
    differences, and ``omnibus_method`` says which test was used.
    """
    from algorank.evaluation.stats import posthoc, wilcoxon_signed_rank
    from algorank.evaluation.stats.skillings_mack import omnibus, omnibus_pairwise_z

    results = list(results)
    if len(results) < 2:
        raise InputError(f"comparing strategies needs at least 2 results; got {len(results)}")
    ds = results[0].datasets
    for r in results[1:]:
        if r.datasets != ds:
            raise InputError("benchmark results to compare must cover the same datasets")
    names = tuple(r.strategy for r in results)
    if len(set(names)) != len(names):
        raise InputError(f"strategy names must be distinct to compare them; got {list(names)}")
    x = np.column_stack([r.mil for r in results])
    fr = omnibus(x, lower_is_better=True, labels=list(names))
    if len(results) == 2:
        test, ph = wilcoxon_signed_rank(x[:, 0], x[:, 1], zero_method="pratt", nan_policy="omit"), None
    else:
        test = fr
        z = None if fr.method.startswith("Friedman") else omnibus_pairwise_z(fr)
        ph = posthoc(fr.average_ranks, fr.n_datasets, method=posthoc_method, alpha=alpha, labels=list(names), z=z)
    with np.errstate(invalid="ignore"):
        return ComparisonResult(
            names=names,
            mean_mil=np.nanmean(x, axis=0),
            median_mil=np.nanmedian(x, axis=0),
            test=test,
            posthoc=ph,
            average_ranks=np.asarray(fr.average_ranks, dtype=float),
            n_datasets=len(ds),
            omnibus_method=str(fr.method),
            effects=tuple(pair_effects(x, names)),
            kendall_w=float(getattr(fr, "kendall_w", float("nan"))),
        )


def pair_effects(x: np.ndarray, names: Sequence[str], *, confidence: float = 0.95) -> list[dict]:
    """Effect sizes of every pair of columns of ``x`` (datasets x compared things), NaN rows skipped per pair.

    Returns one dict per pair ``(a, b)``, ``a`` before ``b`` in ``names``: ``n``,
    ``mean_difference`` (a - b) with its t interval ``ci_low``/``ci_high``,
    ``rank_biserial`` (matched pairs, Wilcoxon zeros dropped), ``cliffs_delta`` and its
    ``magnitude``.
    """
    from algorank.evaluation.stats import cliffs_delta, magnitude, paired_difference_ci, rank_biserial

    out = []
    for i, j in combinations(range(len(names)), 2):
        both = ~(np.isnan(x[:, i]) | np.isnan(x[:, j]))
        a, b = x[both, i], x[both, j]
        rec = {"a": str(names[i]), "b": str(names[j]), "n": int(both.sum())}
        if a.size >= 2:
            ci = paired_difference_ci(a, b, confidence=confidence)
            delta = cliffs_delta(a, b)
            rec.update(mean_difference=ci.estimate, ci_low=ci.low, ci_high=ci.high, confidence=confidence,
                       rank_biserial=rank_biserial(a, b), cliffs_delta=delta, magnitude=magnitude(delta))
        out.append(rec)
    return out
