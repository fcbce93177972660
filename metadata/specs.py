"""How a portfolio learner is built: the spec that the classifiers and the regressors share."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["LearnerSpec", "plain_factory", "kernel_factory", "plain_spec"]


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
    requires : tuple of str
        Optional libraries the learner needs (``lightgbm``, ``xgboost``, ``catboost``); where one is
        missing the learner is rank-only.
    """

    id: str
    short: str
    factory: Callable[[], Any]
    needs_scaling: bool = False
    needs_nonnegative: bool = False
    requires: tuple = ()


def _import(path: str):
    """Import a portfolio class (trusted, fixed paths of the portfolio modules only)."""
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def plain_factory(path: str) -> Callable[[], Any]:
    """A factory of the portfolio class at import path ``path``, built with its defaults."""
    def make():
        return _import(path)()

    return make


def kernel_factory(path: str, kernel: str) -> Callable[[], Any]:
    """A factory of the support-vector class at ``path`` (``sklearn.svm.SVC``, ``sklearn.svm.SVR``) with ``kernel``."""
    def make():
        return _import(path)(kernel=kernel)

    return make


def plain_spec(path: str, short: str, *, spec_class: type = LearnerSpec, **needs: bool) -> LearnerSpec:
    """The spec (a ``spec_class``) of a scikit-learn class built with its defaults (its id is its import path)."""
    return spec_class(path, short, plain_factory(path), **needs)
