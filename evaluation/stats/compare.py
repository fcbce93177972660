"""Compare learners over the datasets of a meta-dataset: the omnibus test, post hoc, effect sizes,
intervals and the Bayesian signed-rank test in one result (``algorank compare``).

Each dataset contributes one value per learner: the mean of ``metric`` over its
successful evaluations (:meth:`algorank.metadata.dataset.MetaDataset.matrix`).  Datasets with
fewer than two of the compared learners are dropped (counted); missing cells are
handled by :func:`evaluation.stats.omnibus` (Friedman when complete, Durbin for a
balanced incomplete design, Skillings-Mack otherwise) and the post hoc works on its
standardised differences.

* no ``control``: all pairs, ``posthoc_method`` in :data:`evaluation.stats.POSTHOC_METHODS`;
* a ``control`` learner: the control against every other, ``control_method`` in
  :data:`evaluation.stats.CONTROL_METHODS` (Holm, Hochberg, Finner, Bonferroni-Dunn).

For every compared pair ``(a, b)`` (each pair with the control first, or all pairs),
over the datasets where both have a value: the mean difference ``a - b`` with its
interval (``ci_method`` t or seeded percentile bootstrap), the rank-biserial r and
Wilcoxon p-value (Pratt zeros), Cliff's delta with its magnitude, and (``bayes``) the
Bayesian signed-rank probabilities with the ROPE.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from itertools import combinations
from typing import Sequence

import numpy as np
import pandas as pd

from algorank.evaluation.stats import (
    CONTROL_METHODS,
    DEFAULT_ROPE,
    POSTHOC_METHODS,
    bayesian_signed_rank,
    cliffs_delta,
    control_vs_all,
    magnitude,
    omnibus,
    omnibus_pairwise_z,
    paired_difference_ci,
    posthoc,
    wilcoxon_signed_rank,
)
from algorank.evaluation.stats._validate import check_alpha, check_choice
from algorank.metadata.checks import check_seed
from algorank.metadata.errors import InputError
from algorank.metadata.task import lower_is_better
from algorank.metadata.learners import short_names
from algorank.metadata.progress import progress_bar

__all__ = ["LearnerComparison", "compare_learners"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, eq=False)
class LearnerComparison:
    """Result of :func:`compare_learners`.

    Attributes
    ----------
    labels : tuple of str
        Compared learners (sorted ids).
    metric : str
    scores : DataFrame
        Datasets x learners mean ``metric`` (NaN = not run), the datasets used.
    omnibus : FriedmanResult or IncompleteBlockResult
        ``omnibus.method`` names the test.
    posthoc : PosthocResult or None
        All-pairs post hoc (no control).
    control : ControlResult or None
        Control versus all (with a control).
    pairs : tuple of dict
        Effect sizes, intervals, Wilcoxon and Bayesian results per compared pair.
    alpha : float
    dropped_datasets : int
    notes : tuple of str
    bayes_results : dict
        ``(a, b) -> BayesianResult`` (with samples, for plots).

    Examples
    --------
    >>> import algorank
    >>> c = algorank.compare("uci", learners=["knn", "lda", "svc-rbf"])
    >>> min(c.average_ranks, key=c.average_ranks.get)
    'SVC_rbf'
    """

    labels: tuple
    metric: str
    scores: pd.DataFrame = field(repr=False)
    omnibus: object = field(repr=False)
    posthoc: object = field(repr=False)
    control: object = field(repr=False)
    pairs: tuple = ()
    alpha: float = 0.05
    dropped_datasets: int = 0
    notes: tuple = ()
    bayes_results: dict = field(default_factory=dict, repr=False)
    ci_method: str = "t"
    confidence: float = 0.95
    bayes: bool = True
    rope: float = DEFAULT_ROPE
    task: str = "classification"

    @property
    def omnibus_method(self) -> str:
        """Friedman, Durbin or Skillings-Mack (with its convention)."""
        return str(self.omnibus.method)

    @property
    def average_ranks(self) -> dict:
        """Learner -> average rank (rescaled ranks when cells are missing)."""
        return {l: float(r) for l, r in zip(self.labels, self.omnibus.average_ranks)}

    def to_text(self, *, max_pairs: int = 60) -> str:
        """The ``algorank compare`` report: omnibus test, average ranks, post hoc or control, pairs."""
        from algorank.metadata.learners import short_name as sn
        from algorank.metadata.text import escape, format_table

        fr, ranks = self.omnibus, self.average_ranks
        lines = [f"{len(self.labels)} learners on {fr.n_datasets} datasets ({self.dropped_datasets} left out), "
                 f"metric {escape(self.metric_words())}, alpha = {self.alpha:g}",
                 f"omnibus: {self.omnibus_method}: chi2 = {fr.statistic:.2f}, df = {fr.df}, p = {fr.pvalue:.3g}"
                 + (f", Kendall's W = {fr.kendall_w:.3f}" if fr.kendall_w == fr.kendall_w else ""), "",
                 format_table(["learner", "avg rank"], [(sn(l), f"{ranks[l]:.2f}")
                                                         for l in sorted(self.labels, key=lambda l: (ranks[l], l))])]
        if self.control is not None:
            c = self.control
            lines += ["", f"control {escape(sn(c.control))} versus all ({c.method}):"]
            rows = [(sn(l), f"z = {z:+.2f}", f"adjusted p = {pa:.3g}",
                     ("better than control" if z < 0 else "worse than control") if sig else "not significant")
                    for l, z, pa, sig in zip(c.labels, c.z, c.adjusted, c.significant)]
            lines.append(format_table(["learner", "z", "adjusted p", "verdict"], rows, align="lrrl", indent="  "))
        elif self.posthoc is not None:
            pairs = self.posthoc.significant_pairs()
            lines += ["", f"post hoc ({self.posthoc.method}): {len(pairs)} significant pair(s)"]
            lines += [f"  {escape(sn(a))} > {escape(sn(b))}" for a, b in pairs[:30]]
        level = self.pairs[0].get("confidence", self.confidence) if self.pairs else self.confidence
        lines += ["", f"pairs a - b: mean difference [{level:.0%} {self.ci_method}], Wilcoxon p, rank-biserial r, "
                      "Cliff's delta" + (f"; Bayesian signed-rank P(a) / P(rope {self.rope:g}) / P(b)"
                                         if self.bayes else "")]
        for pr in self.pairs[:max_pairs]:
            head = f"  {escape(sn(pr['a']))} - {escape(sn(pr['b']))}: "
            if "mean_difference" not in pr:
                lines.append(head + escape(pr.get("note", "")))
                continue
            text = (head + f"{pr['mean_difference']:+.4f} [{pr['ci_low']:+.4f}, {pr['ci_high']:+.4f}], "
                    f"p = {pr['wilcoxon_pvalue']:.3g}, r = {pr['rank_biserial']:+.2f}, "
                    f"delta = {pr['cliffs_delta']:+.2f} ({pr['magnitude']})")
            if "bayes" in pr:
                bz = pr["bayes"]
                text += f"; {bz['p_left']:.3f} / {bz['p_rope']:.3f} / {bz['p_right']:.3f}"
            lines.append(text)
        if len(self.pairs) > max_pairs:
            lines.append(f"  ... {len(self.pairs) - max_pairs} more pairs in --json")
        lines += [f"note: {escape(n)}" for n in self.notes]
        import textwrap

        from algorank.metadata.task import score_label

        words = escape(score_label(self.task) if self.metric == "accuracy" else self.metric)
        sign = (f"a - b: a positive difference favours b (lower {words} is better)" if lower_is_better(self.metric)
                else f"a - b: a positive difference favours a (higher {words} is better)")
        lines += textwrap.wrap(f"avg rank: mean rank by {words} over the datasets (1 = best; lower "
                               f"is better); a > b: a ranks significantly better; {sign}", width=110,
                               subsequent_indent="  ", break_on_hyphens=False)
        return "\n".join(lines)

    def metric_words(self) -> str:
        """The metric as the text names it: for regression meta-data the ``accuracy`` column is the score."""
        from algorank.metadata.task import score_label

        if self.metric == "accuracy":
            return score_label(self.task)
        return self.metric + (" (lower is better)" if lower_is_better(self.metric) else "")

    def to_dict(self) -> dict:
        """The comparison as plain data (what the ``compare`` command prints as JSON)."""
        fr = self.omnibus
        kw = getattr(fr, "kendall_w", float("nan"))
        out = {
            "learners": list(self.labels),
            "short": short_names(self.labels),
            "metric": self.metric,
            "task": self.task,
            "n_datasets": int(fr.n_datasets),
            "dropped_datasets": self.dropped_datasets,
            "average_ranks": self.average_ranks,
            "omnibus_method": self.omnibus_method,
            "omnibus": {"method": self.omnibus_method, "statistic": float(fr.statistic), "pvalue": float(fr.pvalue),
                        "df": int(fr.df), "kendall_w": None if kw != kw else float(kw),
                        "missing_cells": int(getattr(fr, "missing_cells", 0)),
                        "rejected": bool(fr.pvalue <= self.alpha)},
            "alpha": self.alpha,
            "pairs": [dict(p) for p in self.pairs],
            "notes": list(self.notes),
        }
        if self.posthoc is not None:
            ph = self.posthoc
            out["posthoc"] = {"method": ph.method, "requested": ph.requested, "exact": ph.exact, "note": ph.note,
                              "critical_difference": ph.critical_difference,
                              "significant_pairs": [list(p) for p in ph.significant_pairs()]}
        if self.control is not None:
            out["control"] = self.control.to_dict()
        return out


def _pair_record(a_name, b_name, a, b, *, confidence, ci_method, n_resamples, random_state, bayes, rope,
                 nsamples) -> tuple[dict, object]:
    both = ~(np.isnan(a) | np.isnan(b))
    a, b = a[both], b[both]
    rec = {"a": a_name, "b": b_name, "n": int(a.size)}
    bres = None
    if a.size < 2:
        rec["note"] = "fewer than 2 datasets with both learners"
        return rec, None
    ci = paired_difference_ci(a, b, confidence=confidence, method=ci_method, n_resamples=n_resamples,
                              random_state=random_state)
    w = wilcoxon_signed_rank(a, b, zero_method="pratt")
    delta = cliffs_delta(a, b)
    rec.update(mean_difference=ci.estimate, ci_low=ci.low, ci_high=ci.high, ci_method=ci.method,
               confidence=ci.confidence, wilcoxon_pvalue=float(w.pvalue), rank_biserial=float(w.effect_size),
               cliffs_delta=delta, magnitude=magnitude(delta))
    if bayes:
        bres = bayesian_signed_rank(a, b, rope=rope, nsamples=nsamples, random_state=random_state)
        rec.update(bayes={"p_left": bres.p_left, "p_rope": bres.p_rope, "p_right": bres.p_right, "rope": rope,
                          "nsamples": bres.nsamples, "decision_95": bres.decision(0.95)})
    return rec, bres


def _disagreements(table, labels, ph, cres, *, metric, lower) -> list[str]:
    """Notes on significant rank differences that the mean difference contradicts (see
    :mod:`algorank.evaluation.stats.disagreement`)."""
    from algorank.evaluation.stats.disagreement import rank_mean_disagreements

    if ph is not None:
        pairs, method = ph.significant_pairs(), ph.method
    elif cres is not None:
        ctrl = cres.control
        pairs = [((l, ctrl) if z < 0 else (ctrl, l)) for l, z, sig in zip(cres.labels, cres.z, cres.significant) if sig]
        method = cres.method
    else:
        return []
    return rank_mean_disagreements(table, pairs, metric=metric, lower_is_better=lower, method=method,
                                   k=len(labels) if ph is not None else None)


def compare_learners(meta, *, learners: Sequence[str] | None = None, metric: str = "accuracy",
                     control: str | None = None, posthoc_method: str = "holm", control_method: str = "holm",
                     alpha: float = 0.05, confidence: float = 0.95, ci_method: str = "t",
                     n_resamples: int = 9999, bayes: bool = True, rope: float = DEFAULT_ROPE,
                     nsamples: int = 10000, random_state: int = 0, progress: bool = False) -> LearnerComparison:
    """Compare learners over the datasets of ``meta`` (see the module docstring).

    Parameters
    ----------
    meta : MetaDataset
    learners : sequence of str, optional
        Learner ids (default: all; at least 2).  The command line also accepts short
        names and resolves them first.
    metric : str
        Higher-is-better metric column (default accuracy).
    control : str, optional
        A control learner: compare it with each other learner (``control_method``)
        instead of all pairs (``posthoc_method``).
    posthoc_method, control_method : str
    alpha, confidence : float
    ci_method : {"t", "bootstrap"}
    n_resamples : int
        Bootstrap resamples.
    bayes : bool
        Run the Bayesian signed-rank test per pair.
    rope : float
        Its ROPE half-width (default 0.01).
    nsamples : int
        Its posterior samples (default 10,000).
    random_state : int
        Seed of the bootstrap and the Bayesian sampling (same seed, same result).
    progress : bool
        A progress bar over pairs on stderr.

    Returns
    -------
    LearnerComparison
    """
    alpha = check_alpha(alpha)
    random_state = check_seed(random_state)
    check_choice("posthoc_method", posthoc_method, POSTHOC_METHODS)
    check_choice("control_method", control_method, CONTROL_METHODS)
    all_learners = list(meta.learner_ids)
    if learners is not None:
        unknown = [str(l) for l in learners if str(l) not in all_learners]
        if unknown:
            raise InputError(f"unknown learner id(s): {', '.join(unknown[:5])}")
    labels = sorted(set(all_learners if learners is None else (str(l) for l in learners)))
    if len(labels) < 2:
        raise InputError(f"learners must name at least 2 distinct learners; got {labels!r}")
    ctrl = None
    if control is not None:
        ctrl = str(control)
        if ctrl not in labels:
            raise InputError(f"control {control!r} is not among the compared learners")
    table = meta.matrix(metric, "mean").reindex(columns=labels)
    keep = table.notna().sum(axis=1) >= 2
    dropped = int((~keep).sum())
    table = table[keep]
    if len(table) < 2:
        raise InputError(f"need at least 2 datasets with 2 or more of the compared learners; found {len(table)}")
    x = table.to_numpy(dtype=float)
    lower = lower_is_better(metric)
    fr = omnibus(x, lower_is_better=lower, labels=labels)
    complete = not np.isnan(x).any()
    z = None if complete else omnibus_pairwise_z(fr)
    notes = []
    if dropped:
        notes.append(f"{dropped} dataset(s) with fewer than 2 of the compared learners left out")
    if not complete:
        notes.append(f"{int(np.isnan(x).sum())} empty cells: {fr.method} on {fr.n_datasets} datasets, post hoc on "
                     "its standardised differences, rescaled average ranks")
    ph = cres = None
    if ctrl is None:
        ph = posthoc(fr.average_ranks, fr.n_datasets, method=posthoc_method, alpha=alpha, labels=labels, z=z)
        if ph.note:
            notes.append(ph.note)
        pair_idx = list(combinations(range(len(labels)), 2))
    else:
        c = labels.index(ctrl)
        cres = control_vs_all(fr.average_ranks, fr.n_datasets, control=c, method=control_method, alpha=alpha,
                              labels=labels, z=z)
        pair_idx = [(c, j) for j in range(len(labels)) if j != c]
    if fr.pvalue > alpha:
        notes.append(f"the omnibus test does not reject at alpha = {alpha:g} (p = {fr.pvalue:.3g}): post hoc "
                     "differences are not supported by it")
    if lower:
        notes.append(f"metric {metric}: lower is better; differences a - b > 0 favour b")
    notes += _disagreements(table, labels, ph, cres, metric=metric, lower=lower)
    records, bayes_results = [], {}
    for i, j in progress_bar(pair_idx, desc="pairs", unit="pair", enabled=progress):
        rec, bres = _pair_record(labels[i], labels[j], x[:, i], x[:, j], confidence=confidence, ci_method=ci_method,
                                 n_resamples=n_resamples, random_state=random_state, bayes=bayes, rope=rope,
                                 nsamples=nsamples)
        records.append(rec)
        if bres is not None:
            bayes_results[(labels[i], labels[j])] = bres
    return LearnerComparison(labels=tuple(labels), metric=metric, scores=table, omnibus=fr, posthoc=ph,
                             control=cres, pairs=tuple(records), alpha=alpha, dropped_datasets=dropped,
                             notes=tuple(notes), bayes_results=bayes_results, ci_method=ci_method,
                             confidence=confidence, bayes=bayes, rope=rope,
                             task=getattr(meta, "task", "classification"))
