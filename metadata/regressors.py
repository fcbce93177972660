"""Learner ids of the regressors algorank can run, and the estimators they stand for.

The regression portfolio mirrors the classification one: the scikit-learn families with their
default settings, each a :class:`RegressorSpec`.  An id is the dotted
import path of the class (``sklearn.linear_model.Ridge``), except the three SVR kernels, which
use the shorthand ``SVR_linear``, ``SVR_rbf`` and ``SVR_poly`` (``sklearn.svm.SVR`` with that
kernel), as the classification portfolio does for ``SVC``.  Every id has a short name ending in
``-reg`` (``ridge-reg``) or starting with ``svr-``, distinct from the classifiers' short names.

=============================  ======================================================  =========
short name                     id                                                      scaled
=============================  ======================================================  =========
``linear-reg``                 ``sklearn.linear_model.LinearRegression``               yes
``ridge-reg``                  ``sklearn.linear_model.Ridge``                          yes
``lasso-reg``                  ``sklearn.linear_model.Lasso``                          yes
``elastic-net-reg``            ``sklearn.linear_model.ElasticNet``                     yes
``huber-reg``                  ``sklearn.linear_model.HuberRegressor``                 yes
``knn-reg``                    ``sklearn.neighbors.KNeighborsRegressor``               yes
``svr-linear``                 ``SVR_linear``                                          yes
``svr-rbf``                    ``SVR_rbf``                                             yes
``svr-poly``                   ``SVR_poly``                                            yes
``decision-tree-reg``          ``sklearn.tree.DecisionTreeRegressor``                  no
``extra-tree-reg``             ``sklearn.tree.ExtraTreeRegressor``                     no
``random-forest-reg``          ``sklearn.ensemble.RandomForestRegressor``              no
``extra-trees-reg``            ``sklearn.ensemble.ExtraTreesRegressor``                no
``gradient-boosting-reg``      ``sklearn.ensemble.GradientBoostingRegressor``          no
``hist-gradient-boosting-reg`` ``sklearn.ensemble.HistGradientBoostingRegressor``      no
``mlp-reg``                    ``sklearn.neural_network.MLPRegressor``                 yes
``lgbm-reg``                   ``lgbm-reg:default``                                    no
``xgb-reg``                    ``xgb-reg:default``                                     no
``catboost-reg``               ``catboost-reg:default``                                no
=============================  ======================================================  =========

The last three are LightGBM, XGBoost and CatBoost at their library defaults (squared error, one
thread, seed from ``random_state``; :class:`~algorank.metadata.boosting.BoostingRegressor`).  They need
their library (``pip install 'algorank[boosting]'``); where it is missing they are rank-only, as the
boosting classifiers are.

"Scaled" learners get their numeric features standardised within each fold, as in
classification; every learner gets missing values imputed and nominal features one-hot coded.

Any other scikit-learn regressor, with parameters, is a learner id in the same syntax as for
classifiers (``package.module.Class{"json": "parameters"}``, checked before anything is
imported or called: :func:`~algorank.metadata.learners.estimator_class`).  The target is never
transformed behind the user's back: a target transform is a learner of its own, written with
:class:`sklearn.compose.TransformedTargetRegressor`, e.g. a ridge regression on the standardised
target::

    sklearn.compose.TransformedTargetRegressor{"regressor": {"__class__": "sklearn.linear_model.Ridge"},
        "transformer": {"__class__": "sklearn.preprocessing.StandardScaler"}}

(``QuantileTransformer``, ``PowerTransformer`` and the other transformers of
:mod:`sklearn.preprocessing` are accepted the same way; ``func`` and ``inverse_func`` are functions,
so they cannot come from a learner id).

:data:`PRIOR_FREE_ORDER` is the order in which ``recommend`` tests the regressors while there is
no regression meta-data to rank them (see that constant).
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Mapping

from .specs import LearnerSpec, kernel_factory, plain_spec

__all__ = ["RegressorSpec", "REGRESSORS", "REGRESSORS_BY_SHORT", "PRIOR_FREE_ORDER", "regressor_ids",
           "is_regressor_id"]


class RegressorSpec(LearnerSpec):
    """How to build one regressor of the portfolio: the fields of :class:`~algorank.metadata.learners.LearnerSpec`.

    ``needs_nonnegative`` is False for every regressor here; ``requires`` names the library of the boosting
    regressors (``("lightgbm",)`` for ``lgbm-reg``) and is empty for scikit-learn's.
    """


def _boosting(library: str) -> Callable[[], Any]:
    def make():
        from .boosting import BoostingRegressor

        return BoostingRegressor(library=library)

    return make


_plain_spec = functools.partial(plain_spec, spec_class=RegressorSpec)


_SPECS = [
    _plain_spec("sklearn.linear_model.LinearRegression", "linear-reg", needs_scaling=True),
    _plain_spec("sklearn.linear_model.Ridge", "ridge-reg", needs_scaling=True),
    _plain_spec("sklearn.linear_model.Lasso", "lasso-reg", needs_scaling=True),
    _plain_spec("sklearn.linear_model.ElasticNet", "elastic-net-reg", needs_scaling=True),
    _plain_spec("sklearn.linear_model.HuberRegressor", "huber-reg", needs_scaling=True),
    _plain_spec("sklearn.neighbors.KNeighborsRegressor", "knn-reg", needs_scaling=True),
    RegressorSpec("SVR_linear", "svr-linear", kernel_factory("sklearn.svm.SVR", "linear"), needs_scaling=True),
    RegressorSpec("SVR_rbf", "svr-rbf", kernel_factory("sklearn.svm.SVR", "rbf"), needs_scaling=True),
    RegressorSpec("SVR_poly", "svr-poly", kernel_factory("sklearn.svm.SVR", "poly"), needs_scaling=True),
    _plain_spec("sklearn.tree.DecisionTreeRegressor", "decision-tree-reg"),
    _plain_spec("sklearn.tree.ExtraTreeRegressor", "extra-tree-reg"),
    _plain_spec("sklearn.ensemble.RandomForestRegressor", "random-forest-reg"),
    _plain_spec("sklearn.ensemble.ExtraTreesRegressor", "extra-trees-reg"),
    _plain_spec("sklearn.ensemble.GradientBoostingRegressor", "gradient-boosting-reg"),
    _plain_spec("sklearn.ensemble.HistGradientBoostingRegressor", "hist-gradient-boosting-reg"),
    _plain_spec("sklearn.neural_network.MLPRegressor", "mlp-reg", needs_scaling=True),
    RegressorSpec("lgbm-reg:default", "lgbm-reg", _boosting("lightgbm"), requires=("lightgbm",)),
    RegressorSpec("xgb-reg:default", "xgb-reg", _boosting("xgboost"), requires=("xgboost",)),
    RegressorSpec("catboost-reg:default", "catboost-reg", _boosting("catboost"), requires=("catboost",)),
]

#: id -> :class:`RegressorSpec` of every regressor of the portfolio.
REGRESSORS: Mapping[str, RegressorSpec] = {s.id: s for s in _SPECS}
#: short name -> spec.
REGRESSORS_BY_SHORT: Mapping[str, RegressorSpec] = {s.short: s for s in _SPECS}

#: The order of the live tests while no regression meta-data ranks the regressors: a fixed order
#: chosen before any result, by a written rule.  First ridge regression (fast on any size: a
#: baseline within a second), then the tree ensembles that do well on most tabular
#: regression problems (histogram gradient boosting, random forest, extra trees, gradient boosting),
#: then the other linear models, kNN and single trees (cheap, rarely the best), and last the learners
#: whose cost grows fastest with the rows (the SVR kernels, quadratic or worse in them) or that need
#: many iterations (the MLP).  Within a group, the one expected to be cheaper goes first.  The boosting
#: libraries' regressors are not in it: they need an extra, and meta-data ranks them.
PRIOR_FREE_ORDER: tuple[str, ...] = (
    "sklearn.linear_model.Ridge",
    "sklearn.ensemble.HistGradientBoostingRegressor",
    "sklearn.ensemble.RandomForestRegressor",
    "sklearn.ensemble.ExtraTreesRegressor",
    "sklearn.ensemble.GradientBoostingRegressor",
    "sklearn.linear_model.LinearRegression",
    "sklearn.linear_model.ElasticNet",
    "sklearn.linear_model.Lasso",
    "sklearn.linear_model.HuberRegressor",
    "sklearn.neighbors.KNeighborsRegressor",
    "sklearn.tree.DecisionTreeRegressor",
    "sklearn.tree.ExtraTreeRegressor",
    "SVR_linear",
    "SVR_rbf",
    "SVR_poly",
    "sklearn.neural_network.MLPRegressor",
)


def regressor_ids() -> list[str]:
    """Sorted ids of the regression portfolio."""
    return sorted(REGRESSORS)


def is_regressor_id(learner_id: str) -> bool:
    """Whether ``learner_id`` is an id or short name of the regression portfolio."""
    text = str(learner_id).strip()
    return text in REGRESSORS or text in REGRESSORS_BY_SHORT
