"""Saving the refitted best learner of a recommendation (``recommend(..., save_model=path)``).

The file is the fitted scikit-learn Pipeline written by :func:`joblib.dump`; load it with
``joblib.load(PATH)`` and call ``predict`` on raw feature rows.  The pipeline carries
``algorank_info_``: the learner id, the metric and its cross-validated value, the dataset,
and the versions of scikit-learn, algorank, joblib, NumPy and Python it was fitted with
(load it with the same scikit-learn version: scikit-learn warns about others).  Unpickling
runs code: load only files you trust.

``algorank_info_`` is the pipeline's first attribute, so the file's first pickle opcodes name it:
that is how a later save recognises a model file algorank wrote, which it replaces without
``force`` (:func:`algorank.metadata.io.is_algorank_model`, which parses those opcodes and never
unpickles).  Any other existing file is replaced only with ``force``; an input of the run, a
folder, a device, pipe or socket never.
"""

from __future__ import annotations

import platform

from algorank.metadata.errors import InputError
from algorank.metadata.io import atomic_path, check_out_file, is_algorank_model, write_error

__all__ = ["save_model", "model_info", "check_model_path"]


def check_model_path(path, *, option: str = "save_model", force: bool = False, inputs=()):
    """``path`` as a Path after checking, before any work, that the model file may be written there.

    An existing file is replaced only when it is a model algorank saved, or with ``force``; never
    when it is one of ``inputs`` (the dataset file), a folder, a device, pipe or socket
    (:func:`algorank.metadata.io.check_out_file`).
    """
    return check_out_file(path, option=option, force=force, inputs=inputs, replaces=is_algorank_model)


def model_info(recommendation) -> dict:
    """What :func:`save_model` records next to the model (versions, learner, metric and its value)."""
    import joblib
    import numpy
    import sklearn

    from algorank import __version__
    from algorank.metadata.metric import from_score

    best = recommendation.best
    return {"learner": None if best is None else best.learner, "dataset": recommendation.dataset,
            "metric": recommendation.metric, "task": getattr(recommendation, "task", "classification"),
            "cv_value": None if best is None else from_score(recommendation.metric, best.accuracy),
            "ensemble": _ensemble_info(recommendation),
            "sklearn_version": sklearn.__version__, "algorank_version": __version__,
            "joblib_version": joblib.__version__, "numpy_version": numpy.__version__,
            "python_version": platform.python_version()}


def _ensemble_info(recommendation) -> dict | None:
    """The ensemble the model is (learner -> weight and its out-of-fold value), or None for a single learner."""
    from algorank.metadata.metric import from_score

    chosen = getattr(recommendation, "ensemble", None)
    if not chosen or not chosen.get("kept"):
        return None
    return {"weights": dict(chosen["weights"]), "cv_value": from_score(recommendation.metric, chosen["score"])}


def save_model(recommendation, path) -> str:
    """Write ``recommendation.model`` (a fitted Pipeline, with ``algorank_info_``) to ``path`` with joblib.

    Returns
    -------
    str
        The path written (atomically: complete or absent).

    Raises
    ------
    InputError
        There is no refitted model (dry run, nothing succeeded, ``refit=False``).
    """
    import joblib

    model = recommendation.model
    if model is None:
        raise InputError("there is no refitted model to save (nothing was tested successfully)")
    model.__dict__.pop("algorank_info_", None)  # first in the pickle: the mark of a model file algorank wrote
    model.__dict__ = {"algorank_info_": model_info(recommendation), **model.__dict__}
    try:
        with atomic_path(path, option="save_model") as tmp:
            joblib.dump(model, tmp)
    except OSError as exc:
        raise write_error(exc, path) from exc
    return str(path)
