"""Which learners a meta-data build runs, and where its files go: LCDB's 20 or the modern portfolio."""

from __future__ import annotations

from pathlib import Path

from algorank.metadata.errors import InputError

__all__ = ["build_args"]


def build_args(portfolio: str, out_dir=None) -> dict:
    """``learners`` and ``out_dir`` of :func:`~algorank.evaluation.cv.metabuild.build_meta` for ``portfolio``.

    ``"lcdb"`` keeps the build's defaults (LCDB's 20 learners; ``out_dir`` as given, None for
    :func:`~algorank.evaluation.cv.metabuild.default_out_dir`).
    ``"modern"`` is LCDB's 20 followed by the modern portfolio, written to ``metadata/data/modern``
    unless ``out_dir`` is given, so its files never mix with, or are skipped because of, the LCDB build's.
    A learner whose library is missing cannot be built: that is refused before anything runs.
    """
    from algorank.evaluation.cv.metabuild import default_out_dir as _default_out_dir
    from algorank.metadata.learners import learner_ids
    from algorank.metadata.portfolio import missing_library_note

    learners = learner_ids(portfolio=portfolio)
    if portfolio == "lcdb":
        return {"learners": None, "out_dir": None if out_dir is None else Path(out_dir)}
    note = missing_library_note(learners)
    if note:
        raise InputError(f"cannot build the {portfolio} portfolio: {note}")
    return {"learners": learners,
            "out_dir": Path(out_dir) if out_dir is not None else _default_out_dir().parent / portfolio}
