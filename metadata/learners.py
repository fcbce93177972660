"""Learner ids of the embedded LCDB portfolio and the scikit-learn estimators they stand for.

LCDB (Mohr et al.) ran 20 scikit-learn classifiers with their default settings.
Its learner ids are either a dotted import path (``sklearn.tree.DecisionTreeClassifier``)
or one of four SVC shorthands (``SVC_linear``, ``SVC_poly``, ``SVC_rbf``,
``SVC_sigmoid``: ``sklearn.svm.SVC`` with that kernel).  :func:`make_estimator`
turns an id into a fresh, unfitted estimator with the same settings, so that a
recommendation made from LCDB meta-data can be executed.

``sklearn.linear_model.PassiveAggressiveClassifier`` is deprecated since
scikit-learn 1.8 and removed in 1.10.  Where it is gone (or deprecated) the id
maps to the replacement its deprecation message names,
``SGDClassifier(loss="hinge", penalty=None, learning_rate="pa1", eta0=1.0)``;
the id itself is kept so the meta-data stays valid.
"""

from __future__ import annotations

import importlib
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from .errors import InputError

__all__ = ["LearnerSpec", "LEARNERS", "learner_ids", "make_estimator", "short_name", "estimator_from_path"]


@dataclass(frozen=True)
class LearnerSpec:
    """How to build one portfolio learner.

    Attributes
    ----------
    id : str
        The learner id used in meta-data.
    short : str
        A short display name.
    factory : callable
        Returns a fresh, unfitted estimator.
    needs_scaling : bool
        The learner is sensitive to feature scale (the evaluator standardises for it).
    needs_nonnegative : bool
        The learner rejects negative inputs (the evaluator min-max scales for it).
    """

    id: str
    short: str
    factory: Callable[[], Any]
    needs_scaling: bool = False
    needs_nonnegative: bool = False


def _import(path: str):
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _svc(kernel: str) -> Callable[[], Any]:
    def make():
        from sklearn.svm import SVC

        return SVC(kernel=kernel)

    return make


def _plain(path: str) -> Callable[[], Any]:
    def make():
        return _import(path)()

    return make


def _passive_aggressive():
    """PassiveAggressiveClassifier with defaults, or its named replacement where deprecated."""
    import sklearn.linear_model as lm

    cls = getattr(lm, "PassiveAggressiveClassifier", None)
    if cls is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("error", FutureWarning)
            try:
                return cls()
            except FutureWarning:
                pass
    return lm.SGDClassifier(loss="hinge", penalty=None, learning_rate="pa1", eta0=1.0)


_SPECS = [
    LearnerSpec("SVC_linear", "svc-linear", _svc("linear"), needs_scaling=True),
    LearnerSpec("SVC_poly", "svc-poly", _svc("poly"), needs_scaling=True),
    LearnerSpec("SVC_rbf", "svc-rbf", _svc("rbf"), needs_scaling=True),
    LearnerSpec("SVC_sigmoid", "svc-sigmoid", _svc("sigmoid"), needs_scaling=True),
    LearnerSpec("sklearn.discriminant_analysis.LinearDiscriminantAnalysis", "lda",
                _plain("sklearn.discriminant_analysis.LinearDiscriminantAnalysis")),
    LearnerSpec("sklearn.discriminant_analysis.QuadraticDiscriminantAnalysis", "qda",
                _plain("sklearn.discriminant_analysis.QuadraticDiscriminantAnalysis")),
    LearnerSpec("sklearn.ensemble.ExtraTreesClassifier", "extra-trees", _plain("sklearn.ensemble.ExtraTreesClassifier")),
    LearnerSpec("sklearn.ensemble.GradientBoostingClassifier", "gradient-boosting",
                _plain("sklearn.ensemble.GradientBoostingClassifier")),
    LearnerSpec("sklearn.ensemble.RandomForestClassifier", "random-forest",
                _plain("sklearn.ensemble.RandomForestClassifier")),
    LearnerSpec("sklearn.linear_model.LogisticRegression", "logreg", _plain("sklearn.linear_model.LogisticRegression"),
                needs_scaling=True),
    LearnerSpec("sklearn.linear_model.PassiveAggressiveClassifier", "passive-aggressive", _passive_aggressive,
                needs_scaling=True),
    LearnerSpec("sklearn.linear_model.Perceptron", "perceptron", _plain("sklearn.linear_model.Perceptron"),
                needs_scaling=True),
    LearnerSpec("sklearn.linear_model.RidgeClassifier", "ridge", _plain("sklearn.linear_model.RidgeClassifier"),
                needs_scaling=True),
    LearnerSpec("sklearn.linear_model.SGDClassifier", "sgd", _plain("sklearn.linear_model.SGDClassifier"),
                needs_scaling=True),
    LearnerSpec("sklearn.naive_bayes.BernoulliNB", "bernoulli-nb", _plain("sklearn.naive_bayes.BernoulliNB")),
    LearnerSpec("sklearn.naive_bayes.MultinomialNB", "multinomial-nb", _plain("sklearn.naive_bayes.MultinomialNB"),
                needs_nonnegative=True),
    LearnerSpec("sklearn.neighbors.KNeighborsClassifier", "knn", _plain("sklearn.neighbors.KNeighborsClassifier"),
                needs_scaling=True),
    LearnerSpec("sklearn.neural_network.MLPClassifier", "mlp", _plain("sklearn.neural_network.MLPClassifier"),
                needs_scaling=True),
    LearnerSpec("sklearn.tree.DecisionTreeClassifier", "decision-tree", _plain("sklearn.tree.DecisionTreeClassifier")),
    LearnerSpec("sklearn.tree.ExtraTreeClassifier", "extra-tree", _plain("sklearn.tree.ExtraTreeClassifier")),
]

#: id -> :class:`LearnerSpec` for every learner algorank can run from an id.
LEARNERS: Mapping[str, LearnerSpec] = {s.id: s for s in _SPECS}
_BY_SHORT = {s.short: s for s in _SPECS}


def learner_ids() -> list[str]:
    """Sorted ids of the runnable portfolio."""
    return sorted(LEARNERS)


def _resolve(learner_id: str) -> LearnerSpec:
    spec = LEARNERS.get(learner_id) or _BY_SHORT.get(learner_id)
    if spec is None:
        raise InputError(
            f"unknown learner id {learner_id!r}; known ids: {', '.join(sorted(_BY_SHORT))} "
            "(short names) or their full LCDB ids"
        )
    return spec


def short_name(learner_id: str) -> str:
    """Short display name of a learner id (the id itself when it is not in the portfolio)."""
    spec = LEARNERS.get(learner_id) or _BY_SHORT.get(learner_id)
    return spec.short if spec is not None else learner_id


def make_estimator(learner_id: str, *, random_state: int | None = None):
    """Return a fresh, unfitted estimator for ``learner_id``.

    Parameters
    ----------
    learner_id : str
        A portfolio id (``LEARNERS``), its short name (``"knn"``), or the import
        path of any estimator class (built with its default settings).
    random_state : int, optional
        Set on estimators that take a ``random_state`` (others are unchanged),
        so that a seeded evaluation is reproducible.  ``None`` keeps the default.
    """
    if learner_id not in LEARNERS and learner_id not in _BY_SHORT and "." in learner_id:
        est = estimator_from_path(learner_id)  # any importable estimator class with its defaults
    else:
        est = _resolve(learner_id).factory()
    if random_state is not None and "random_state" in est.get_params():
        est.set_params(random_state=random_state)
    return est


def estimator_from_path(path: str, params: Mapping[str, Any] | None = None):
    """Build an estimator from an import path and keyword parameters.

    Raises
    ------
    InputError
        When the path cannot be imported or the parameters are rejected.
    """
    try:
        cls = _import(path)
    except (ImportError, AttributeError, ValueError) as exc:
        raise InputError(f"cannot import estimator {path!r}: {exc}") from exc
    try:
        return cls(**dict(params or {}))
    except TypeError as exc:
        raise InputError(f"bad parameters for {path}: {exc}") from exc
