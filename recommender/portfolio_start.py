"""A coverage-portfolio start, then ``ei`` conditioned on it (spec ``pstart``).

auto-sklearn 2.0 starts every new dataset with a portfolio chosen for coverage of the prior
datasets, and only then lets its model-based search take over.  ``pstart`` does the same with
algorank's parts: the first ``k`` tests are the first ``k`` learners of TabRepo's rank-based
zero-shot portfolio (``portfolio:rank``: greedy on the mean best rank over the prior datasets, the
learners whose 95th-percentile time exceeds the budget left out), then ``ei`` (or ``eit`` with
``then=eit``) chooses every later test, conditioned on what the start measured (``ei``'s policy folds
every observation of the history into its posterior, whoever chose the learner).

A start learner that has no result on a dataset is skipped, like every untestable learner.

Spec: ``pstart`` or ``pstart:k=2,then=eit,budget=60`` (``budget`` is the portfolio's, default the
benchmark window's upper end; ``overhead=``/``scale=`` of the live time model go to both parts).
Studied on the training parts only (leave-one-dataset-out outside the frozen held-out splits);
the benchmark record of the documentation reports what it gave.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from algorank.metadata.errors import InputError
from algorank.recommender.peers._common import PeerStrategy, TimedPeer, time_model_spec

__all__ = ["PortfolioStart", "PortfolioStartPolicy", "from_spec"]


class PortfolioStartPolicy:
    """The first ``start`` learners in order, then ``then``'s choices (given the whole history)."""

    def __init__(self, start: Sequence[str], then) -> None:
        self.start = list(start)
        self.then = then

    def next(self, history: Sequence) -> str | None:
        tried = {o.learner for o in history}
        for learner in self.start:
            if learner not in tried:
                return learner
        return self.then.next(history)


class PortfolioStart(TimedPeer):
    """``k`` tests of TabRepo's portfolio, then ``ei`` or ``eit`` (module docstring).

    Parameters
    ----------
    k : int
        Tests taken from the portfolio (0 is plain ``then``).
    then : {"ei", "eit"}
    budget : float, optional
        The portfolio's budget (default the window's ``tmax``).
    tmin, tmax : float
        The MIL window (set by the benchmark through :meth:`with_window`).
    """

    needs_window = True
    adaptive = True
    #: ``ei`` and ``eit`` read the new dataset's landmarkers, so ``recommend`` measures them and the benchmark
    #: charges them (``landmarks_``, set by :meth:`fit`, names those the model reads).
    conditions_on_landmarks = True
    landmarks = True

    def __init__(self, *, k: int = 1, then: str = "ei", budget: float | None = None, tmin: float = 1e-3,
                 tmax: float = 100.0, **kw) -> None:
        if not (isinstance(k, int) and k >= 0):
            raise InputError(f"strategy 'pstart': k must be an integer >= 0; got {k!r}")
        if then not in ("ei", "eit"):
            raise InputError(f"strategy 'pstart': then must be ei or eit; got {then!r}")
        super().__init__(k=k, then=then, budget=budget, tmin=tmin, tmax=tmax, **kw)
        self.k, self.then, self.budget, self.tmin, self.tmax = k, then, budget, float(tmin), float(tmax)

    def default_name(self) -> str:
        parts = [f"k={self.k}"] + ([f"then={self.then}"] if self.then != "ei" else [])
        if self.budget is not None:
            parts.append(f"budget={self.budget:g}")
        return "pstart:" + ",".join(parts) + time_model_spec(self.time_model)

    def with_window(self, tmin: float, tmax: float) -> "PortfolioStart":
        """A copy for the benchmark's window (its ``tmax`` is the portfolio's default budget)."""
        return self._copy(tmin=tmin, tmax=tmax)

    def _parts(self):
        from algorank.recommender.registry import parse_strategy

        tm = self.time_model
        portfolio = parse_strategy("portfolio:rank" + ("" if self.budget is None else f",budget={self.budget:g}"))
        portfolio = portfolio.with_window(self.tmin, self.tmax).with_time_model(
            time_overhead=tm.overhead, time_scale=tm.scale, time_kind=self.time_kind)
        model = parse_strategy(self.then).with_time_model(time_overhead=tm.overhead, time_scale=tm.scale,
                                                          time_kind=self.time_kind)
        return portfolio, model

    def fit(self, meta) -> "PortfolioStart":
        """Fit the portfolio and the model on the same prior runs."""
        portfolio, model = self._parts()
        self.portfolio_ = portfolio.fit(meta)
        self.model_ = model.fit(meta)
        self.start_ = tuple(self.portfolio_.order_[: self.k])
        self.learners_ = tuple(self.model_.learners_)
        self.landmarks_ = tuple(self.model_.landmarks_)
        return self

    def policy(self, dataset_info: Mapping | None = None) -> PortfolioStartPolicy:
        """The start, then the model's adaptive policy for this dataset."""
        self._check_fitted("model_")
        return PortfolioStartPolicy(self.start_, self.model_.policy(dataset_info))


def from_spec(params: dict, random_state=None, name: str | None = None) -> PeerStrategy:
    """Build from spec parameters ``k``, ``then`` (ei | eit), ``budget``, ``overhead``, ``scale``."""
    from algorank.recommender.peers._common import pop_choice
    from algorank.recommender.spec import pop_number, pop_time_model

    k = pop_number(params, "k", 1, strategy="pstart", kind=int, rule="an integer >= 0", valid=lambda v: v >= 0)
    then = pop_choice(params, "then", "ei", ("ei", "eit"), strategy="pstart")
    budget = pop_number(params, "budget", None, strategy="pstart", rule="a number of seconds > 0",
                        valid=lambda v: v > 0)
    return PortfolioStart(k=k, then=then, budget=budget, **pop_time_model(params, "pstart"), name=name)
