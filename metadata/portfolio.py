"""The modern portfolio: gradient boosting and tuned forests from published portfolios.

Beyond LCDB's 20 scikit-learn learners (:mod:`algorank.metadata.learners`), algorank knows the
learners practitioners try first: HistGradientBoosting, LightGBM, XGBoost and CatBoost at their
defaults, and configurations taken from three published zero-shot portfolios (FLAML, Wang et al.
2021; AutoGluon's 2023 portfolio learned with TabRepo, Salinas and Erickson 2024; auto-sklearn 2.0,
Feurer et al. 2022).  Each one is a plain learner id such as ``lgbm:flaml-binary-2`` or
``histgb:askl2-2d4a38e``; its estimator, parameters, source file and every deviation from the
published configuration are data, in the packaged ``data/portfolio.json``.

Ids of these learners name the package's own data, so they run without ``allow_modules``.
A LightGBM, XGBoost or CatBoost learner needs its library (``pip install 'algorank[boosting]'``);
where it is missing the learner is rank-only: it can be ranked from meta-data but not run.
"""

from __future__ import annotations

import functools
import json
from importlib import resources

from .boosting import BOOSTING_EXTRA, LIBRARIES, library_available

__all__ = ["portfolio_entries", "portfolio_ids", "portfolio_entry", "requirements", "missing_libraries",
           "missing_library_note"]

_FILE = "portfolio.json"


@functools.lru_cache(maxsize=1)
def _document() -> dict:
    text = resources.files(__package__).joinpath("data", _FILE).read_text(encoding="utf-8")
    return json.loads(text)


def portfolio_entries() -> list[dict]:
    """The entries of the packaged portfolio file, in its order (copies: changing them changes nothing).

    Each entry has ``id``, ``family``, ``estimator`` (a scikit-learn class path, or ``lightgbm``,
    ``xgboost``, ``catboost`` for :class:`~algorank.metadata.boosting.BoostingClassifier`), ``params``,
    ``early_stopping``, ``source`` (the published file, entry and its configuration verbatim) and ``notes``
    (every deviation from the published configuration).
    """
    return json.loads(json.dumps(_document()["learners"]))


def portfolio_ids() -> list[str]:
    """Ids of the modern portfolio beyond LCDB's 20, in the file's order."""
    return [e["id"] for e in _document()["learners"]]


def portfolio_entry(learner_id: str) -> dict | None:
    """The entry of one id (a copy), or None."""
    for e in _document()["learners"]:
        if e["id"] == learner_id:
            return json.loads(json.dumps(e))
    return None


def requirements(learner_id: str) -> tuple[str, ...]:
    """The optional libraries a portfolio learner or regressor needs (``("lightgbm",)``); ``()`` for
    scikit-learn ones and for ids outside the portfolios."""
    for e in _document()["learners"]:
        if e["id"] == learner_id:
            return (e["estimator"],) if e["estimator"] in LIBRARIES else ()
    from .regressors import REGRESSORS, REGRESSORS_BY_SHORT

    spec = REGRESSORS.get(learner_id) or REGRESSORS_BY_SHORT.get(learner_id)
    return tuple(spec.requires) if spec is not None else ()


def missing_libraries(learner_ids) -> dict[str, tuple[str, ...]]:
    """Portfolio learners among ``learner_ids`` whose library is not installed: id -> missing libraries."""
    out = {}
    for lid in learner_ids:
        missing = tuple(r for r in requirements(str(lid)) if not library_available(r))
        if missing:
            out[str(lid)] = missing
    return out


def missing_library_note(learner_ids) -> str | None:
    """One line naming the extra that would make rank-only boosting learners runnable, or None."""
    missing = missing_libraries(learner_ids)
    if not missing:
        return None
    libs = sorted({m for ms in missing.values() for m in ms})
    return (f"{len(missing)} learner(s) need {', '.join(libs)}, not installed: they are ranked but not run; "
            f"{BOOSTING_EXTRA} makes them runnable")
