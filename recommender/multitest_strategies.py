"""MultiTest and Multi2Test (Ulas, Yildiz and Alpaydin 2012) as strategies: fitted on prior meta-data, they recommend one order.

The procedure itself (pairwise tests, the ordering, the statistics) is
:mod:`algorank.recommender.multitest`; this module only wraps it in the Strategy protocol and
registers the ``multi2test:...`` spec.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from algorank.evaluation.stats import POSTHOC_METHODS
from algorank.evaluation.stats._validate import check_alpha, check_choice
from algorank.metadata.errors import InputError
from algorank.recommender.base import OrderPolicy, StrategyBase
from algorank.recommender.multitest import (CORRECTIONS, MISSING_POLICIES, PAIRWISE_TESTS, Multi2TestResult,
                                            multi2test, multitest_on_meta)

__all__ = ["MultiTest", "Multi2Test", "multi2test_factory"]


def _set_options(strategy, *, cost, pairwise, correction, alpha, learners, test_train_ratio, name) -> None:
    """The options MultiTest and Multi2Test share, checked and set on ``strategy``."""
    strategy.cost = cost
    strategy.pairwise = pairwise
    strategy.correction = correction
    strategy.alpha = check_alpha(alpha)
    strategy.learners = None if learners is None else list(learners)
    strategy.test_train_ratio = test_train_ratio
    strategy._name = name


class Multi2Test(StrategyBase):
    """Multi2Test as a strategy: fitted on prior meta-data, it recommends one fixed order.

    Parameters
    ----------
    cost, pairwise, correction, posthoc_method, alpha, test_train_ratio, missing
        As in :func:`multi2test`.
    learners : sequence of str, optional
        Learners to order (default: all in the meta-data given to ``fit``).

    Notes
    -----
    Datasets with missing learners are used through Skillings-Mack unless
    ``missing="drop"`` (see :func:`multi2test`); the policy then follows ``result_.order`` on the new dataset, skipping
    learners already tried.
    """

    def __init__(self, *, cost="fit_time", pairwise: str = "auto", correction: str = "holm",
                 posthoc_method: str = "bergmann", alpha: float = 0.05, learners: Sequence[str] | None = None,
                 test_train_ratio: float | None = None, missing: str = "auto", name: str | None = None) -> None:
        self.missing = check_choice("missing", missing, MISSING_POLICIES)
        self.posthoc_method = posthoc_method
        _set_options(self, cost=cost, pairwise=pairwise, correction=correction, alpha=alpha, learners=learners,
                     test_train_ratio=test_train_ratio, name=name)
        self.result_: Multi2TestResult | None = None

    def default_name(self) -> str:
        return f"multi2test:cost={self.cost if isinstance(self.cost, str) else 'user'},posthoc={self.posthoc_method}"

    def fit(self, meta) -> "Multi2Test":
        """Run Multi2Test on ``meta``; the result is kept in ``result_``."""
        self.result_ = multi2test(meta, learners=self.learners, cost=self.cost, pairwise=self.pairwise,
                                  correction=self.correction, posthoc_method=self.posthoc_method, alpha=self.alpha,
                                  test_train_ratio=self.test_train_ratio, missing=self.missing)
        return self

    def policy(self, dataset_info: Mapping) -> OrderPolicy:
        """The fitted order (the same for every new dataset)."""
        if self.result_ is None:
            raise InputError("Multi2Test must be fitted before asking for a policy")
        return OrderPolicy(self.result_.order)


class MultiTest(StrategyBase):
    """MultiTest as a strategy for a dataset that already has paired runs in the meta-data.

    Typical use: the evaluator's own results on the user's dataset
    (:meth:`EvaluationResult.to_meta`) are the meta-data; the policy orders those learners by cost
    with statistically significant overrides.  A dataset without runs in the
    fitted meta-data cannot be ordered by MultiTest (use :class:`Multi2Test`).
    """

    def __init__(self, *, cost="fit_time", pairwise: str = "auto", correction: str = "holm",
                 alpha: float = 0.05, learners: Sequence[str] | None = None,
                 test_train_ratio: float | None = None, name: str | None = None) -> None:
        _set_options(self, cost=cost, pairwise=pairwise, correction=correction, alpha=alpha, learners=learners,
                     test_train_ratio=test_train_ratio, name=name)
        self._meta = None

    def default_name(self) -> str:
        return f"multitest:cost={self.cost if isinstance(self.cost, str) else 'user'}"

    def fit(self, meta) -> "MultiTest":
        """Keep the meta-data (MultiTest works per dataset, at policy time)."""
        self._meta = meta
        return self

    def policy(self, dataset_info: Mapping) -> OrderPolicy:
        """Order of MultiTest on ``dataset_info['dataset']``, which must have runs in the fitted meta-data."""
        if self._meta is None:
            raise InputError("MultiTest must be fitted before asking for a policy")
        dataset = str(dataset_info.get("dataset", ""))
        if dataset not in set(self._meta.dataset_ids):
            raise InputError(f"MultiTest orders learners on a dataset with runs in the meta-data; "
                             f"dataset {dataset!r} has none (use Multi2Test for a new dataset)")
        res = multitest_on_meta(self._meta, dataset, learners=self.learners, cost=self.cost,
                                pairwise=self.pairwise, correction=self.correction, alpha=self.alpha,
                                test_train_ratio=self.test_train_ratio)
        return OrderPolicy(res.order)


def multi2test_factory(params: dict, random_state=None, name: str | None = None) -> Multi2Test:
    """Registry factory for specs like ``multi2test:cost=fit_time,posthoc=shaffer,alpha=0.05``.

    Pops the keys it understands (``cost``, ``posthoc``, ``pairwise``, ``correction``,
    ``alpha``, ``ratio``, ``missing``); ``random_state`` is unused (Multi2Test is deterministic).
    A user cost order in a spec uses ``+`` between learners (``cost=knn+lda+...``)
    because ``,`` separates spec parameters.
    """
    cost = params.pop("cost", "fit_time")
    if "+" in cost:
        cost = cost.replace("+", ",")
    from algorank.recommender.spec import pop_number

    alpha = pop_number(params, "alpha", 0.05, strategy="multi2test", rule="a number in (0, 1)")
    ratio = pop_number(params, "ratio", None, strategy="multi2test", rule="a positive number")
    posthoc_method = check_choice("posthoc", params.pop("posthoc", "bergmann"), POSTHOC_METHODS)
    pairwise = check_choice("pairwise", params.pop("pairwise", "auto"), PAIRWISE_TESTS)
    correction = check_choice("correction", params.pop("correction", "holm"), CORRECTIONS)
    missing = check_choice("missing", params.pop("missing", "auto"), MISSING_POLICIES)
    return Multi2Test(cost=cost, pairwise=pairwise, correction=correction, posthoc_method=posthoc_method,
                      alpha=alpha, test_train_ratio=ratio, missing=missing, name=name)
