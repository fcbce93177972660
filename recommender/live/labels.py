"""The user's own class labels, so that a refitted model predicts them (int stays int, ...).

:func:`~algorank.evaluation.cv.datasets.as_dataset` turns every target into text labels (the
evaluator works on codes of those); a model handed back to the user must predict the labels
the user gave instead: integers for an integer target, booleans for a boolean one, the
categories' values for a pandas categorical, strings for strings.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

__all__ = ["original_labels"]

logger = logging.getLogger(__name__)


def original_labels(source, data, *, y=None) -> np.ndarray | None:
    """The user's labels of ``data``'s rows (rows without a label dropped, as ``data`` did), or None.

    Parameters
    ----------
    source : object
        What was given to :func:`~algorank.evaluation.cv.datasets.as_dataset`: a DataFrame
        holding the target column ``data.target``, or the features when ``y`` is given.
    data : LoadedDataset
        The loaded dataset (its ``y`` holds the labels as text).
    y : array-like, optional
        The labels given separately.

    Returns
    -------
    ndarray or None
        Aligned with ``data.y``, in the labels' own dtype (pandas' nullable integers and booleans
        as NumPy ones, a categorical as its categories' values).  None when the labels came
        from a file or spec (their text is theirs), or when they do not map one-to-one onto
        ``data``'s text labels (then the model predicts the text labels).
    """
    if y is not None:
        column = y if isinstance(y, (pd.Series, pd.Categorical)) else pd.Series(np.asarray(y).ravel())
        column = pd.Series(column)
    elif isinstance(source, pd.DataFrame) and data.target in [str(c) for c in source.columns]:
        column = source[[c for c in source.columns if str(c) == data.target][0]]
    else:
        return None
    column = column.reset_index(drop=True)
    kept = column[column.notna().to_numpy()]
    dtype = kept.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        values = np.asarray(kept.astype(dtype.categories.dtype).to_numpy())
    elif isinstance(dtype, pd.api.extensions.ExtensionDtype) and hasattr(dtype, "numpy_dtype"):
        values = kept.to_numpy(dtype=dtype.numpy_dtype)
    else:
        values = kept.to_numpy()
    text = data.y.to_numpy(dtype=object)
    if len(values) != len(text):
        return None
    pairs = pd.DataFrame({"text": text, "value": pd.Series(values, dtype=object)})
    if (pairs.groupby("text")["value"].nunique() != 1).any() or (pairs.groupby("value")["text"].nunique() != 1).any():
        logger.warning("the labels do not map one-to-one onto their text; the model predicts the text labels")
        return None
    return values
