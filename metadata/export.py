"""Writing meta-data out (``algorank export``): an ASlib scenario folder and/or a ``.parquet`` / ``.csv`` file.

Every target is checked before anything is loaded or written (:mod:`algorank.metadata.io`): the
scenario folder can be written and is not an input, the file's name ends in ``.parquet`` or
``.csv`` and an existing file there is meta-data algorank saved (or ``force``), never an input,
a folder or a device.  The scenario is written into a temporary folder next to its target and
moved into place file by file, the file atomically.
"""

from __future__ import annotations

from pathlib import Path

from .dataset import MetaDataset, check_metadata_target
from .errors import InputError
from .io import check_out_dir, protected_inputs, refuse_input_folder, staged_folder, write_error

__all__ = ["export_meta"]


def export_meta(meta=None, *, aslib=None, out=None, scenario_id: str | None = None, folds: int = 10,
                random_state: int = 0, force: bool = False) -> tuple[MetaDataset, list[str]]:
    """Check every target, load ``meta``, write the ASlib scenario ``aslib`` and/or the file ``out``.

    Parameters
    ----------
    meta : str, path, MetaDataset or list, optional
        What to export (:func:`algorank.metadata.snapshot.load_meta`; default the embedded ``broad`` set).
    aslib, out, scenario_id, folds, random_state, force
        See :func:`algorank.api.export`.

    Returns
    -------
    data : MetaDataset
        What was exported.
    written : list of str
        The files written: the scenario's, then ``out``.

    Raises
    ------
    InputError
        A target that may not be written (before anything is loaded), or a path that cannot be written.
    AlgorankError
        A full disk or another I/O error while writing.
    """
    from .snapshot import load_meta

    if aslib is None and out is None:
        raise InputError("export_meta: give aslib and/or out")
    if aslib is not None:
        check_out_dir(aslib, option="--aslib")
        refuse_input_folder(aslib, meta, option="--aslib")
    if out is not None:
        check_metadata_target(out, force=force, inputs=(meta,))
    written: list[str] = []
    with protected_inputs(meta):
        data = load_meta(meta)
        if aslib is not None:
            from .aslib import write_aslib

            name = scenario_id or Path(aslib).resolve().name or None
            with staged_folder(aslib, option="--aslib") as tmp:
                names = [p.name for p in write_aslib(data, tmp, scenario_id=name, folds=folds,
                                                     random_state=random_state)]
            written += [str(Path(aslib) / n) for n in names]
        if out is not None:
            try:
                written.append(str(data.save(out)))
            except OSError as exc:
                raise write_error(exc, out) from None
    return data, written
