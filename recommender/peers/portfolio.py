"""auto-sklearn 2.0's greedy portfolio and TabRepo's rank-based zero-shot portfolio (specs ``portfolio``
and ``portfolio:rank``).

``portfolio`` -- paper: M. Feurer, K. Eggensperger, S. Falkner, M. Lindauer and F. Hutter,
"Auto-Sklearn 2.0: Hands-free AutoML via Meta-Learning", JMLR 2022.  Code followed:
``automl/ASKL2.0_experiments``, ``experiment_scripts/portfolio/greedy_portfolio.py``
(``build`` and ``_build_portfolio_with_cutoffs``), ``portfolio_util.normalize_matrix`` and the
no-fidelity simulated execution ``pyx/no_fidelities.pyx`` (``play_vectorized``).

* Losses are ``1 - accuracy``, min-max normalised per prior dataset (``normalize_matrix``; a dataset
  whose learners all score the same keeps its losses minus the minimum).
* For every per-learner cutoff ``c`` of the grid ``int(2 ** (e / 2))`` (up to ``budget / 2``), plus
  ``budget / 2``, ``budget`` and the largest recorded time when it is below the budget, skipping the
  cutoffs too small for the portfolio to fill the budget (``c * size < budget`` and the next one too)
  and every cutoff after the first above the largest recorded time: greedily add the learner that
  minimises the mean over the prior datasets of the portfolio's normalised loss, where the portfolio is
  *executed*: its learners run in order, each stopped at ``min(c, budget - time spent)``; a stopped
  (or failed) run costs that time and scores loss 1; execution ends when the budget is spent.  Ties go
  to the first learner in a seeded random permutation (``rng.permutation``, seed 0).  Stop at
  ``size`` learners (auto-sklearn 2.0 uses 32) or when the mean loss reaches 0.  The cutoff whose
  portfolio has the smallest final mean loss wins (first on ties).
* The policy runs the portfolio in its order.

``portfolio:rank`` -- paper: D. Salinas and N. Erickson, "TabRepo: A Large Scale Repository of Tabular
Model Evaluations and its AutoML Applications", AutoML Conference 2024.  Code followed:
``autogluon/tabrepo``, ``tabarena/portfolio/zeroshot_selection.py`` (``zeroshot_configs``) and
``greedy_portfolio_generator.py`` (``filter_configurations_above_budget``, ``zeroshot_results``).

* Learners whose 95th percentile of recorded time over the prior datasets is not below the budget are
  dropped.
* Ranks per prior dataset: 1 for the best learner (ties share the mean rank; missing cells get the
  worst rank, as ``df_rank.fillna(np.nanmin(...))`` does), learners shuffled with a seeded generator
  (``np.random.default_rng(0)``).  Greedily add the learner with the smallest mean over datasets of
  the portfolio's best rank (``ranks.clip(upper=ranks[best])``); stop at ``size`` learners (TabRepo's
  default 200) or when the mean no longer improves.

Deviations, each with its reason:

* **What follows the portfolio.**  auto-sklearn 2.0 continues with Bayesian optimisation and TabRepo
  with ensembling; neither is an order of the remaining learners.  After the portfolio, the remaining
  learners follow by mean normalised loss (``portfolio``) or mean rank (``portfolio:rank``) over the prior
  datasets, the criterion of each method's first greedy step, so the policy covers every learner.
* **Cutoffs are not enforced when testing.**  A simulated or live test runs to completion; the cutoffs
  shape which learners the portfolio picks (a learner that would be stopped on the prior datasets scores
  loss 1 there), as in auto-sklearn 2.0's construction.
* **Budget.**  auto-sklearn 2.0 builds one portfolio per user time limit and TabRepo filters with its
  4 h default.  Here ``budget`` is a spec parameter; by default it is the upper end of the benchmark's
  window ``tmax`` (the time by which the MIL is scored), 100 s when used outside a benchmark.
* **Missing cells.**  A timed-out cell counts with its lower-bound time and the dataset's baseline
  accuracy (as for every strategy); a learner without a result on a prior dataset costs nothing and
  finds nothing there (loss 1 for the greedy portfolio, the worst rank for the rank portfolio).
"""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np

from algorank.metadata.errors import InputError
from algorank.recommender.base import OrderPolicy
from algorank.recommender.peers._common import TimedPeer, pop_choice, time_model_spec, training_arrays, quiet_nan, single_threaded

__all__ = ["Portfolio", "normalize_losses", "cutoff_grid", "greedy_portfolio", "rank_portfolio", "from_spec"]

#: Portfolio sizes: auto-sklearn 2.0 (32) and TabRepo's ``n_portfolios_default`` (200).
ASKL_SIZE = 32
TABREPO_SIZE = 200
#: TabRepo's runtime quantile for dropping slow learners.
TABREPO_QUANTILE = 0.95


def normalize_losses(loss: np.ndarray) -> np.ndarray:
    """Per row: ``(loss - min) / (max - min)`` over the finite cells (range 0 -> 1), as ``normalize_matrix``."""
    loss = np.asarray(loss, dtype=float)
    with quiet_nan():
        lo = np.nanmin(np.where(np.isfinite(loss), loss, np.nan), axis=1)
        hi = np.nanmax(np.where(np.isfinite(loss), loss, np.nan), axis=1)
    diff = hi - lo
    diff = np.where((diff == 0) | ~np.isfinite(diff), 1.0, diff)
    return (loss - np.nan_to_num(lo)[:, None]) / diff[:, None]


def cutoff_grid(budget: float, max_recorded: float, size: int) -> list:
    """The per-learner cutoffs ``_build_portfolio_with_cutoffs`` tries, after its two skipping rules."""
    factor = 2
    ts = [int(2 ** (e / factor)) for e in range(0, factor * int(math.ceil(math.log2(budget))))
          if 2 ** (e / factor) <= budget / 2] if budget > 1 else []
    ts += [budget / 2, budget]
    if 0 < max_recorded < budget:
        ts.append(max_recorded)
    if size == 1:
        ts.append(budget)
    ts = sorted(set(float(x) for x in ts))
    out, above = [], 0
    for i, t in enumerate(ts):
        if i + 1 < len(ts) and ts[i] * size < budget and ts[i + 1] * size < budget:
            continue
        if above > 0:
            continue
        if t > max_recorded:
            above += 1
        out.append(t)
    return out


def _play(state, loss, sec, cutoff: float, budget: float):
    """Run one more learner on every prior dataset from ``state = (elapsed, best)`` (``play_vectorized``).

    ``loss`` and ``sec`` are ``(n_datasets,)`` or ``(n_datasets, n_candidates)``: every candidate at once.
    """
    elapsed, best = state
    if np.ndim(loss) == 2:
        elapsed, best = elapsed[:, None], best[:, None]
    active = ~(elapsed > budget)
    c = np.minimum(cutoff, budget - elapsed)
    finite = np.isfinite(loss)
    has_time = np.isfinite(sec)
    with np.errstate(invalid="ignore"):
        done = finite & has_time & (c >= sec)
    run_loss = np.where(done, loss, 1.0)
    cost = np.where(done, sec, np.where(finite & has_time, c, np.where(has_time, np.minimum(sec, cutoff), 0.0)))
    new_elapsed = np.where(active, elapsed + cost, elapsed)
    new_best = np.where(active, np.minimum(best, run_loss), best)
    return new_elapsed, new_best


def greedy_portfolio(norm_loss: np.ndarray, seconds: np.ndarray, *, size: int, budget: float,
                     cutoff: float, perm: np.ndarray) -> tuple[list, float]:
    """One greedy portfolio at one cutoff; returns ``(learner indices, final mean loss)``.

    ``norm_loss`` NaN marks a cell without a result (it costs its time, 0 when unknown, and scores 1).
    Candidates are tried in the order ``perm``; the first with the smallest mean loss wins.  Every
    candidate is scored at once: adding learner ``j`` lowers a dataset's best loss ``b`` to ``loss_j``
    where ``j`` finishes within ``min(cutoff, budget - time spent)``, so its mean loss is
    ``mean(b) - mean(max(0, b - loss_j) [j finishes])`` (what :func:`_play` gives, without its costs).
    """
    n, k = norm_loss.shape
    perm = np.asarray(perm, dtype=int)
    L, S = norm_loss[:, perm], seconds[:, perm]
    ok = np.isfinite(L) & np.isfinite(S)
    Lf = np.where(ok, L, 1.0)
    Sf = np.where(ok, S, np.inf)
    state = (np.zeros(n), np.full(n, np.inf))
    chosen = np.zeros(k, dtype=bool)
    portfolio: list = []
    score = math.inf
    for _ in range(min(size, k)):
        elapsed, best = state
        b1 = np.minimum(best, 1.0)
        active = ~(elapsed > budget)
        c = np.where(active, np.minimum(cutoff, budget - elapsed), -np.inf)
        if not np.isfinite(c).any() and portfolio:  # every execution is over: all candidates tie
            rest = [j for j in range(k) if not chosen[j]][: min(size, k) - len(portfolio)]
            portfolio += [int(perm[j]) for j in rest]
            break
        gain = np.where(Sf <= c[:, None], np.maximum(b1[:, None] - Lf, 0.0), 0.0).sum(axis=0)
        scores = (b1.sum() - gain) / n
        scores = np.where(chosen, np.inf, scores)
        b = int(np.argmin(scores))
        if not np.isfinite(scores[b]):
            break
        chosen[b] = True
        portfolio.append(int(perm[b]))
        state = _play(state, L[:, b], S[:, b], cutoff, budget)
        score = float(scores[b])
        if score <= 0:
            break
    return portfolio, score


def rank_portfolio(accuracy: np.ndarray, *, size: int, perm: np.ndarray) -> list:
    """TabRepo's ``zeroshot_configs`` on accuracies (higher is better; NaN = worst rank)."""
    from scipy.stats import rankdata

    acc = np.asarray(accuracy, dtype=float)[:, perm]
    # rank 1 = best; missing cells tie with the worst (df_rank.fillna(nanmin) on TabRepo's descending ranks)
    filled = np.where(np.isfinite(acc), acc, -np.inf)
    ranks = rankdata(-filled, axis=1, method="average")
    res: list = []
    best_mean = None
    current = ranks.copy()
    chosen = np.zeros(acc.shape[1], dtype=bool)
    for _ in range(min(size, acc.shape[1])):
        means = current.mean(axis=0)
        means = np.where(chosen, np.inf, means)
        b = int(np.argmin(means))
        if not np.isfinite(means[b]) or (best_mean is not None and means[b] >= best_mean):
            break
        best_mean = means[b]
        current = np.minimum(current, current[:, [b]])
        chosen[b] = True
        res.append(int(perm[b]))
    return res


class Portfolio(TimedPeer):
    """auto-sklearn 2.0's budget-aware greedy portfolio, or TabRepo's rank-based one (module docstring).

    Parameters
    ----------
    kind : {"greedy", "rank"}
    size : int, optional
        Portfolio size (default 32 for ``greedy``, 200 for ``rank``).
    budget : float, optional
        Seconds of testing the portfolio is built for (default: the window's ``tmax``).
    seed : int
        Seed of the tie-breaking permutation (0, as both references).
    tmin, tmax : float
        The MIL window (set by the benchmark through :meth:`with_window`).
    """

    needs_window = True

    def __init__(self, *, kind: str = "greedy", size: int | None = None, budget: float | None = None, seed: int = 0,
                 tmin: float = 1e-3, tmax: float = 100.0, **kw) -> None:
        if kind not in ("greedy", "rank"):
            raise InputError(f"strategy 'portfolio': kind must be greedy or rank; got {kind!r}")
        if size is not None and not (isinstance(size, (int, np.integer)) and size >= 1):
            raise InputError(f"strategy 'portfolio': size must be an integer >= 1; got {size!r}")
        if budget is not None and not (isinstance(budget, (int, float)) and math.isfinite(budget) and budget > 0):
            raise InputError(f"strategy 'portfolio': budget must be a number of seconds > 0; got {budget!r}")
        super().__init__(kind=kind, size=size, budget=budget, seed=int(seed), tmin=tmin, tmax=tmax, **kw)
        self.kind, self.size, self.seed = kind, size, int(seed)
        self.budget, self.tmin, self.tmax = budget, float(tmin), float(tmax)

    def default_name(self) -> str:
        parts = ["rank"] if self.kind == "rank" else []
        if self.size is not None:
            parts.append(f"size={self.size}")
        if self.budget is not None:
            parts.append(f"budget={self.budget:g}")
        if self.seed:
            parts.append(f"seed={self.seed}")
        spec = ",".join(parts) + time_model_spec(self.time_model)
        return "portfolio" + (":" + spec.lstrip(",") if spec else "")

    def with_window(self, tmin: float, tmax: float) -> "Portfolio":
        """A copy for the benchmark's window (its ``tmax`` is the default budget)."""
        return self._copy(tmin=tmin, tmax=tmax)

    @property
    def budget_seconds(self) -> float:
        return float(self.budget if self.budget is not None else self.tmax)

    def fit(self, meta) -> "Portfolio":
        """Build the portfolio on the prior datasets."""
        with single_threaded():
            return self._fit(meta)

    def _fit(self, meta) -> "Portfolio":
        arrays = training_arrays(meta, time_kind=self.time_kind, time_model=self.time_model,
                                 who=f"strategy {self.name!r}")
        known = (arrays.available | np.isfinite(arrays.seconds)).any(axis=0)
        self.learners_ = tuple(l for l, k in zip(arrays.learners, known) if k)
        acc = np.where(arrays.available, arrays.accuracy, np.nan)[:, known]
        sec = arrays.seconds[:, known]
        perm_rng = np.random.RandomState(self.seed) if self.kind == "greedy" else np.random.default_rng(self.seed)
        perm = np.asarray(perm_rng.permutation(len(self.learners_)))
        budget = self.budget_seconds
        if self.kind == "greedy":
            norm = normalize_losses(1.0 - acc)
            size = self.size or ASKL_SIZE
            best = None
            max_rec = float(np.nanmax(sec)) if np.isfinite(sec).any() else 0.0
            for c in cutoff_grid(budget, max_rec, size):
                members, score = greedy_portfolio(norm, sec, size=size, budget=budget, cutoff=c, perm=perm)
                if best is None or score < best[1]:
                    best = (members, score, c)
            self.portfolio_, self.score_, self.cutoff_ = list(best[0]), float(best[1]), float(best[2])
            with quiet_nan():
                rest_key = np.nanmean(np.where(np.isfinite(norm), norm, 1.0), axis=0)
        else:
            with quiet_nan():
                q = np.nanquantile(np.where(np.isfinite(sec), sec, np.nan), TABREPO_QUANTILE, axis=0)
            fast = np.isfinite(q) & (q < budget)
            keep = perm[fast[perm]]
            members = rank_portfolio(acc[:, keep], size=self.size or TABREPO_SIZE, perm=np.arange(len(keep)))
            self.portfolio_ = [int(keep[j]) for j in members]
            self.score_, self.cutoff_ = math.nan, math.nan
            from scipy.stats import rankdata

            filled = np.where(np.isfinite(acc), acc, -np.inf)
            rest_key = rankdata(-filled, axis=1, method="average").mean(axis=0)
        in_p = set(self.portfolio_)
        rest = sorted((j for j in range(len(self.learners_)) if j not in in_p), key=lambda j: (rest_key[j], j))
        self.order_ = [self.learners_[j] for j in self.portfolio_ + rest]
        return self

    def policy(self, dataset_info: Mapping | None = None) -> OrderPolicy:
        """The portfolio, then the remaining learners (the same for every dataset)."""
        self._check_fitted("order_")
        return OrderPolicy(self.order_)


def from_spec(params: dict, random_state=None, name: str | None = None) -> Portfolio:
    """Build from spec parameters: ``rank`` (a flag: ``portfolio:rank``), ``size``, ``budget``, ``seed``,
    ``overhead``, ``scale``."""
    from algorank.recommender.spec import pop_number, pop_time_model

    kind = "greedy"
    if "rank" in params:
        raw = str(params.pop("rank")).strip().lower()
        if raw not in ("", "yes", "no"):
            raise InputError(f"strategy 'portfolio': rank must be yes or no; got {raw!r}")
        kind = "greedy" if raw == "no" else "rank"
    kind = pop_choice(params, "kind", kind, ("greedy", "rank"), strategy="portfolio")
    size = pop_number(params, "size", None, strategy="portfolio", kind=int, rule="an integer >= 1",
                      valid=lambda v: v >= 1)
    budget = pop_number(params, "budget", None, strategy="portfolio", rule="a number of seconds > 0",
                        valid=lambda v: v > 0)
    seed = pop_number(params, "seed", 0, strategy="portfolio", kind=int, rule="an integer >= 0",
                      valid=lambda v: v >= 0)
    return Portfolio(kind=kind, size=size, budget=budget, seed=seed, **pop_time_model(params, "portfolio"), name=name)
