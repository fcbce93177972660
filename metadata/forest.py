"""Random forests and extra trees whose feature subset size follows auto-sklearn's rule.

auto-sklearn (Feurer et al., 2015; 2.0: Feurer et al., 2022) tunes ``max_features`` of its random
forests and extra trees as an exponent: a split considers ``int(n_features ** max_features)`` features.
No scikit-learn parameter says that (a float ``max_features`` is a fraction), so
:class:`ExponentFeaturesForest` computes the count from the columns it is fitted on.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

__all__ = ["ExponentFeaturesForest", "FOREST_KINDS"]

#: The forests :class:`ExponentFeaturesForest` builds.
FOREST_KINDS = ("random_forest", "extra_trees")


class ExponentFeaturesForest(ClassifierMixin, BaseEstimator):
    """A random forest or extra-trees classifier with ``max_features = int(n_features ** exponent)``.

    Parameters
    ----------
    kind : {"random_forest", "extra_trees"}
        scikit-learn's ``RandomForestClassifier`` or ``ExtraTreesClassifier``.
    max_features_exponent : float
        The exponent (auto-sklearn's ``max_features``), in [0, 1].
    params : dict, optional
        Other parameters of the forest (``max_features``, ``n_jobs`` and ``random_state`` excluded).
    n_jobs : int, optional
        Passed to the forest (None: one job).
    random_state : int, optional
        Passed to the forest.

    Attributes
    ----------
    estimator_ : RandomForestClassifier or ExtraTreesClassifier
    max_features_ : int
        The feature count used at each split.
    classes_ : ndarray
    """

    def __init__(self, kind: str = "random_forest", max_features_exponent: float = 0.5, params: dict | None = None,
                 n_jobs: int | None = None, random_state: int | None = None):
        self.kind = kind
        self.max_features_exponent = max_features_exponent
        self.params = params
        self.n_jobs = n_jobs
        self.random_state = random_state

    def fit(self, X, y):
        """Fit the forest on ``X`` and ``y``; returns ``self``."""
        from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier

        if self.kind not in FOREST_KINDS:
            raise ValueError(f"kind must be one of {FOREST_KINDS}; got {self.kind!r}")
        exponent = float(self.max_features_exponent)
        if not 0.0 <= exponent <= 1.0:
            raise ValueError(f"max_features_exponent must be in [0, 1]; got {self.max_features_exponent!r}")
        X = np.asarray(X, dtype=float)
        cls = RandomForestClassifier if self.kind == "random_forest" else ExtraTreesClassifier
        self.max_features_ = max(1, int(X.shape[1] ** exponent))
        self.estimator_ = cls(**dict(self.params or {}), max_features=self.max_features_, n_jobs=self.n_jobs,
                              random_state=self.random_state).fit(X, y)
        self.classes_ = self.estimator_.classes_
        self.n_features_in_ = X.shape[1]
        return self

    def predict_proba(self, X):
        """Class probabilities, one column per entry of ``classes_``."""
        return self.estimator_.predict_proba(np.asarray(X, dtype=float))

    def predict(self, X):
        """Predicted class labels."""
        return self.estimator_.predict(np.asarray(X, dtype=float))
