"""FLAML's zero-shot AutoML: a regret-bounded portfolio and the nearest prior task's preferences (spec ``zeroshot``).

Paper: M. Kayali and C. Wang, "Mining Robust Default Configurations for Resource-constrained AutoML",
arXiv:2202.09927, 2022.  Code followed: ``microsoft/FLAML``, ``flaml/default/greedy.py``
(``construct_portfolio``), ``flaml/default/portfolio.py`` (``build_portfolio``, ``config_predictor_tuple``,
``serialize``, ``_filter``; ``regret_bound = 0.01``), ``flaml/default/regret.py`` (``build_regret``) and
``flaml/default/suggest.py`` (``meta_feature``, ``suggest_config``).

* **Regret** of a learner on a prior dataset: the best accuracy there minus its accuracy.
* **Portfolio** (``construct_portfolio`` with ``meta_features=None``, the ``greedy`` strategy that
  ``portfolio.py`` uses by default): repeatedly add the learner that minimises the *excess regret*
  ``sum over datasets of max(0, r - 0.01)`` of the portfolio (``r`` = its best regret on the dataset).
  When the two smallest excesses tie (within ``1e-5``) the tied learner with the smallest mean regret
  is taken, and the construction stops if that mean did not improve on the previous tie-break's by
  ``1e-5``; it also stops once the excess is ``<= 1e-5`` (every prior dataset within the bound).
* **Per prior dataset**, the portfolio sorted by regret there (ties: portfolio order), learners
  without a result there dropped (``config_predictor_tuple`` and ``_filter``).
* **New dataset**: the meta-features ``(NumberOfInstances, NumberOfFeatures, NumberOfClasses,
  PercentageOfNumericFeatures)`` (``suggest.meta_feature``), scaled with the prior datasets' robust
  scaler (``sklearn.preprocessing.RobustScaler``: median and interquartile range), its nearest prior
  dataset in Euclidean distance (``NearestNeighbors(n_neighbors=1)``), whose list is run in order.

Deviations, each with its reason:

* **After the list.**  FLAML then starts its hyperparameter search from these configurations; there is
  no search over a fixed set of learners, so the policy goes on with the nearest dataset's other
  learners in regret order, then those without a result there in mean-regret order, so it covers
  every learner.
* **No "default" configuration.**  FLAML appends each estimator's default configuration to the
  portfolio and cuts the preferences after it; algorank's learners have no separate default.
* **Missing features.**  FLAML's four features are always known.  Here ``n_classes`` is missing on most
  OBOE datasets and the numeric fraction is only in some meta-data (``1 - nominal_fraction``, or
  ``PercentageOfNumericFeatures / 100``): the distance uses the features the new dataset has, and a
  prior dataset's missing value counts as the median (0 after robust scaling).
* **Missing cells.**  Timed-out cells count with the dataset's baseline accuracy (as for every strategy);
  other missing cells are left out of the per-dataset preferences (as ``_filter`` does) and count as
  the regret of the dataset's baseline in the portfolio construction.
"""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np

from algorank.metadata.errors import InputError
from algorank.recommender.base import OrderPolicy
from algorank.recommender.peers._common import PeerStrategy, dataset_rows, info_number, training_arrays, quiet_nan, single_threaded

__all__ = ["ZeroShot", "construct_portfolio", "flaml_features", "FEATURES", "from_spec"]

#: FLAML's regret bound and tie tolerance.
REGRET_BOUND = 0.01
EPS = 1e-5
#: FLAML's meta-feature names (suggest.meta_feature).
FEATURES = ("NumberOfInstances", "NumberOfFeatures", "NumberOfClasses", "PercentageOfNumericFeatures")


def construct_portfolio(regret: np.ndarray, regret_bound: float = REGRET_BOUND) -> list:
    """``greedy.construct_portfolio`` without meta-features on a learners x datasets regret matrix.

    Returns learner (row) indices in the order they were added.  Candidates are tried in row order
    (FLAML iterates over a set; ties within ``1e-5`` are broken by mean regret, then by row order).
    """
    regret = np.asarray(regret, dtype=float)
    k = regret.shape[0]
    configs: list = []
    prev = math.inf
    best = np.full(regret.shape[1], np.inf)
    while len(configs) < k:
        cand = [j for j in range(k) if j not in configs]
        r = np.minimum(best[None, :], regret[cand])  # each candidate's portfolio regret per dataset
        excess = np.clip(r - regret_bound, 0, None).sum(axis=1)
        avg = r.mean(axis=1)
        srt = np.sort(excess)
        if len(cand) > 1 and srt[1] - srt[0] < EPS:
            tied = np.flatnonzero(excess - np.nanmin(excess) < EPS)
            minloss, ind = min((avg[i], i) for i in tied)
            if minloss > prev - EPS:
                break
            prev = minloss
        else:
            ind = int(np.nanargmin(excess))
        configs.append(cand[ind])
        best = r[ind]
        if srt[0] <= EPS:
            break
    return configs


def flaml_features(info: Mapping) -> np.ndarray:
    """FLAML's four meta-features of a dataset from its datasets-table row (NaN where unknown)."""
    num = info_number(info, "numeric_fraction")
    if math.isnan(num):
        nominal = info_number(info, "nominal_fraction")
        num = 1.0 - nominal if not math.isnan(nominal) else info_number(info, "PercentageOfNumericFeatures") / 100.0
    return np.array([info_number(info, "n_instances"), info_number(info, "n_features"),
                     info_number(info, "n_classes"), num], dtype=float)


class ZeroShot(PeerStrategy):
    """FLAML's zero-shot portfolio with a nearest-neighbour choice of the prior dataset (module docstring)."""

    def __init__(self, *, regret: float = REGRET_BOUND, name: str | None = None) -> None:
        if not (isinstance(regret, (int, float)) and 0 <= regret < 1):
            raise InputError(f"strategy 'zeroshot': regret must be a number in [0, 1); got {regret!r}")
        super().__init__(regret=float(regret), name=name)
        self.regret = float(regret)

    def default_name(self) -> str:
        return "zeroshot" + ("" if self.regret == REGRET_BOUND else f":regret={self.regret:g}")

    def fit(self, meta) -> "ZeroShot":
        """Regret matrix, portfolio, per-dataset preferences and the robust scaler."""
        with single_threaded():
            return self._fit(meta)

    def _fit(self, meta) -> "ZeroShot":
        from sklearn.preprocessing import RobustScaler

        arrays = training_arrays(meta, time_kind=self.time_kind, time_model=self.time_model, need_times=False)
        known = arrays.has_accuracy.any(axis=0)
        if arrays.shape[0] < 1 or not known.any():
            raise InputError("strategy 'zeroshot' needs prior datasets with results")
        self.learners_ = tuple(l for l, k in zip(arrays.learners, known) if k)
        acc = arrays.accuracy[:, known]
        with quiet_nan():
            best = np.nanmax(acc, axis=1)
        base = np.nan_to_num(arrays.baselines(), nan=0.0)
        regret = best[:, None] - acc  # datasets x learners, NaN = no result
        filled = np.where(np.isfinite(regret), regret, (best - np.minimum(base, best))[:, None])
        filled = np.where(np.isfinite(filled), filled, 1.0)
        self.portfolio_ = construct_portfolio(filled.T, self.regret)
        self.datasets_ = tuple(arrays.datasets)
        self.preferences_ = []
        with quiet_nan():
            mean_regret = np.nanmean(np.where(np.isfinite(regret), regret, np.nan), axis=0)
        mean_regret = np.where(np.isfinite(mean_regret), mean_regret, np.inf)
        pos = {j: i for i, j in enumerate(self.portfolio_)}
        for d in range(len(self.datasets_)):
            r = regret[d]
            has = np.isfinite(r)
            head = sorted((j for j in self.portfolio_ if has[j]), key=lambda j: (r[j], pos[j]))
            rest = sorted((j for j in range(len(self.learners_)) if has[j] and j not in pos), key=lambda j: (r[j], j))
            tail = sorted((j for j in range(len(self.learners_)) if not has[j]), key=lambda j: (mean_regret[j], j))
            self.preferences_.append(head + rest + tail)
        feats = np.array([flaml_features(r) for r in dataset_rows(meta, arrays.datasets)], dtype=float)
        self.features_ = feats
        usable = np.isfinite(feats).any(axis=0)
        scaler = RobustScaler().fit(np.where(usable[None, :], feats, 0.0))
        self.center_, self.scale_ = scaler.center_, scaler.scale_
        return self

    def nearest(self, dataset_info: Mapping | None = None) -> int:
        """Row of the prior dataset nearest to the new one (robust-scaled FLAML features)."""
        self._check_fitted()
        q = flaml_features(dict(dataset_info or {}))
        use = np.isfinite(q) & np.isfinite(self.center_)
        if not use.any():
            return 0
        F = (self.features_[:, use] - self.center_[use]) / self.scale_[use]
        F = np.where(np.isfinite(F), F, 0.0)
        qs = (q[use] - self.center_[use]) / self.scale_[use]
        return int(np.argmin(np.sqrt(((F - qs) ** 2).sum(axis=1))))

    def policy(self, dataset_info: Mapping | None = None) -> OrderPolicy:
        """The nearest prior dataset's list."""
        d = self.nearest(dataset_info)
        return OrderPolicy([self.learners_[j] for j in self.preferences_[d]])


def from_spec(params: dict, random_state=None, name: str | None = None) -> ZeroShot:
    """Build from the spec: ``regret`` (the portfolio's regret bound, FLAML's 0.01 by default)."""
    from algorank.recommender.spec import pop_number

    regret = pop_number(params, "regret", REGRET_BOUND, strategy="zeroshot", rule="a number in [0, 1)",
                        valid=lambda v: 0 <= v < 1)
    return ZeroShot(regret=regret, name=name)
