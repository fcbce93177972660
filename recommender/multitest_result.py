"""What Multi2Test returns over many datasets: the order, the tests behind it, and its text.

Built by :func:`algorank.recommender.multitest.multi2test`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from algorank.metadata.learners import short_name, short_names

__all__ = ["Multi2TestResult"]


@dataclass(frozen=True)
class Multi2TestResult:
    """Result of :func:`multi2test`.

    Attributes
    ----------
    order : tuple of str
        Final order, best first.
    labels : tuple of str
        The compared learners (rows of the matrices, sorted ids).
    prior_order : tuple of str
        Second-pass prior: average normalised cost (or the user order), cheapest first.
    average_cost : ndarray of shape (k,)
        Mean over datasets of cost / max cost on that dataset (NaN for a user order).
    ranks : DataFrame
        Datasets x learners MultiTest ranks (1 = best) of the first pass.
    friedman : FriedmanResult or IncompleteBlockResult
        The omnibus test on ``ranks``: Friedman on complete ranks, Durbin or
        Skillings-Mack when cells are missing (``omnibus_method`` names it; the
        field keeps its name for compatibility).
    posthoc : PosthocResult or None
        None when Friedman did not reject (then ``order == prior_order``).
    better : ndarray of bool, shape (k, k)
        ``better[i, j]``: i has a significantly lower average rank than j.
    reasons : tuple of dict
        For each adjacent pair of ``order`` (see :func:`adjacent_reasons`).
    dropped : tuple of (str, str)
        ``(dataset, why)`` for every dataset left out (missing learner, too few
        paired evaluations, missing cost).
    pairwise_tests : tuple of str
        Distinct pairwise tests used in the first pass.
    cost, correction, posthoc_method : str
    alpha : float
    notes : tuple of str
        Everything the reader must know (fallbacks, dropped datasets).
    missing : str
        The missing-cell policy used (``"auto"`` or ``"drop"``).

    Examples
    --------
    >>> import algorank
    >>> m = algorank.multitest("uci", learners=["knn", "lda", "svc-rbf"])  # doctest: +SKIP
    >>> m.order, m.average_ranks  # doctest: +SKIP
    """

    order: tuple
    labels: tuple
    prior_order: tuple
    average_cost: np.ndarray = field(repr=False)
    ranks: pd.DataFrame = field(repr=False)
    friedman: object = field(repr=False)
    posthoc: object = field(repr=False)
    better: np.ndarray = field(repr=False)
    reasons: tuple = ()
    dropped: tuple = ()
    pairwise_tests: tuple = ()
    cost: str = ""
    correction: str = ""
    posthoc_method: str = ""
    alpha: float = 0.05
    notes: tuple = ()
    missing: str = "auto"

    @property
    def omnibus_method(self) -> str:
        """Name of the omnibus test actually used (Friedman, Durbin or Skillings-Mack)."""
        return str(self.friedman.method)

    @property
    def average_ranks(self) -> dict:
        """Learner -> average MultiTest rank over the datasets used."""
        return {l: float(r) for l, r in zip(self.labels, self.friedman.average_ranks)}

    def significant_pairs(self) -> list[tuple[str, str]]:
        """``(better, worse)`` pairs with a significant difference in average rank."""
        k = len(self.labels)
        return [(self.labels[i], self.labels[j]) for i in range(k) for j in range(k) if self.better[i, j]]

    def to_text(self) -> str:
        """The ``algorank multitest`` report: the tests used, then the order with the reason for each step."""
        from algorank.metadata.text import escape, format_table

        fr = self.friedman
        cost = self.to_dict()["average_cost"]
        rows = []
        for i, l in enumerate(self.order):
            rec = self.reasons[i] if i < len(self.reasons) else None
            reason = "" if rec is None else (
                f"significantly more accurate than {short_name(rec['second'])}" if rec["reason"] == "significant"
                else f"not significantly different from {short_name(rec['second'])}; cheaper"
                if rec["reason"] == "cost" else rec["text"])
            c = cost.get(l)
            rows.append((i + 1, short_name(l), f"{self.average_ranks[l]:.2f}", "" if c is None else f"{c:.3f}", reason))
        lines = [f"Multi2Test on {fr.n_datasets} datasets ({len(self.dropped)} dropped), cost prior: "
                 f"{escape(self.cost)}, alpha = {self.alpha:g}",
                 f"pairwise: {'; '.join(self.pairwise_tests)} ({self.correction})",
                 f"omnibus: {self.omnibus_method} chi2 = {fr.statistic:.2f}, p = {fr.pvalue:.3g}"
                 + (f", Kendall's W = {fr.kendall_w:.3f}" if fr.kendall_w == fr.kendall_w else "")
                 + "; post hoc: " + ("none" if self.posthoc is None else self.posthoc.method), "",
                 format_table(["#", "learner", "avg rank", "avg cost", "reason for the next step"], rows,
                              align="rlrrl")]
        lines += [f"note: {escape(n)}" for n in self.notes]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """JSON-ready summary (what the ``multitest`` command prints as JSON)."""
        ph = self.posthoc
        fr = self.friedman
        omni = {"method": self.omnibus_method, "statistic": fr.statistic, "pvalue": fr.pvalue, "df": int(fr.df),
                "iman_davenport_statistic": fr.iman_davenport_statistic,
                "iman_davenport_pvalue": fr.iman_davenport_pvalue,
                "kendall_w": _finite_or_none(getattr(fr, "kendall_w", float("nan"))),
                "n_datasets": int(fr.n_datasets), "missing_cells": int(getattr(fr, "missing_cells", 0)),
                "rejected": bool(fr.pvalue <= self.alpha)}
        return {
            "order": list(self.order),
            "short": short_names(self.order),
            "average_ranks": self.average_ranks,
            "omnibus_method": self.omnibus_method,
            "omnibus": omni,
            "friedman": dict(omni),  # kept for compatibility: the omnibus test, whatever its method
            "missing": self.missing,
            "significant_pairs": [list(p) for p in self.significant_pairs()],
            "reasons": [dict(r) for r in self.reasons],
            "prior_order": list(self.prior_order),
            "average_cost": {l: (None if not np.isfinite(c) else float(c)) for l, c in zip(self.labels, self.average_cost)},
            "posthoc": None if ph is None else {"requested": ph.requested, "method": ph.method, "exact": ph.exact,
                                                "note": ph.note, "critical_difference": ph.critical_difference},
            "posthoc_method": self.posthoc_method,
            "pairwise_tests": list(self.pairwise_tests),
            "correction": self.correction,
            "cost": self.cost,
            "alpha": self.alpha,
            "n_datasets": int(self.friedman.n_datasets),
            "n_dropped": len(self.dropped),
            "dropped": [{"dataset": d, "reason": why} for d, why in self.dropped],
            "notes": list(self.notes),
        }


def _finite_or_none(v):
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None
