"""Map OpenML flow names to runnable learner ids of :mod:`algorank.metadata.learners`.

An OpenML flow is an estimator *class* (its hyperparameters live in setups), named
like ``sklearn.ensemble.forest.RandomForestClassifier(1)`` - import path at upload
time plus a version suffix.  The rule:

* a bare scikit-learn estimator maps to the portfolio id with the same class in the
  same top-level subpackage (``sklearn.tree._classes.DecisionTreeClassifier`` and
  ``sklearn.tree.tree.DecisionTreeClassifier`` -> ``sklearn.tree.DecisionTreeClassifier``);
  ``sklearn.svm.*.SVC`` maps to ``SVC_rbf`` (scikit-learn's default kernel; the flow
  does not fix the kernel);
* a simple ``sklearn.pipeline.Pipeline(...)`` maps like its final step when that is a
  bare estimator of the portfolio and every other step is a bare preprocessing
  component (``sklearn.preprocessing``, ``sklearn.impute``, ``sklearn.compose``
  with bare children, ``sklearn.feature_selection.VarianceThreshold``);
* anything else (search wrappers such as ``GridSearchCV``, ensembles of flows,
  Weka/mlr flows, test-server names) keeps its full flow name as learner id: it
  can be ranked but not run live.

The mapping looks at names only: runs of a mapped flow may use any setup
(hyperparameters), not necessarily scikit-learn's defaults.
"""

from __future__ import annotations

import re

from .learners import LEARNERS

__all__ = ["flow_to_learner", "split_flow_name"]

_VERSION = re.compile(r"\(\d+\)$")
_BARE = re.compile(r"^[A-Za-z_][\w.]*$")
_PREPROCESSING = ("sklearn.preprocessing.", "sklearn.impute.", "sklearn.compose.")
_PREPROCESSING_CLASSES = {"VarianceThreshold", "Imputer", "SimpleImputer", "OneHotEncoder", "StandardScaler",
                          "MinMaxScaler", "RobustScaler", "OrdinalEncoder", "MaxAbsScaler", "Normalizer"}


def split_flow_name(name: str) -> tuple[str, list[tuple[str, str]]]:
    """Split ``"head(k1=v1,k2=v2(...))"`` into ``("head", [("k1", "v1"), ("k2", "v2(...)")])``.

    A name without components returns ``(name, [])``.  The version suffix ``(1)`` must be removed first.
    """
    open_at = name.find("(")
    if open_at < 0 or not name.endswith(")"):
        return name, []
    head, inner = name[:open_at], name[open_at + 1 : -1]
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(inner):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(inner[start:i])
            start = i + 1
    parts.append(inner[start:])
    pairs = []
    for part in parts:
        key, sep, value = part.partition("=")
        if not sep:
            return name, []
        pairs.append((key.strip(), value.strip()))
    return head, pairs


def _bare_estimator(path: str) -> str | None:
    if not _BARE.match(path) or not path.startswith("sklearn."):
        return None
    parts = path.split(".")
    if len(parts) < 3:
        return None
    sub, cls = parts[1], parts[-1]
    if sub == "svm" and cls == "SVC":
        return "SVC_rbf"
    candidate = f"sklearn.{sub}.{cls}"
    return candidate if candidate in LEARNERS else None


def _is_preprocessing(value: str) -> bool:
    head, children = split_flow_name(value)
    if not _BARE.match(head):
        return False
    if head.startswith("sklearn.compose.") and children:
        return all(_is_preprocessing(v) for _, v in children)
    if children:
        return False
    return head.startswith(_PREPROCESSING) or head.split(".")[-1] in _PREPROCESSING_CLASSES


def flow_to_learner(flow_name: str) -> str | None:
    """Runnable learner id for an OpenML flow name, or ``None`` when it has none.

    Parameters
    ----------
    flow_name : str
        The flow's full name as OpenML lists it (with or without the ``(version)`` suffix).

    Examples
    --------
    >>> flow_to_learner("sklearn.ensemble.forest.RandomForestClassifier(1)")
    'sklearn.ensemble.RandomForestClassifier'
    >>> flow_to_learner("weka.J48(2)") is None
    True
    """
    name = _VERSION.sub("", str(flow_name).strip())
    direct = _bare_estimator(name)
    if direct is not None:
        return direct
    head, steps = split_flow_name(name)
    if head.split(".")[-1] != "Pipeline" or not head.startswith("sklearn.") or not steps:
        return None
    *pre, (_, final) = steps
    if not all(_is_preprocessing(v) for _, v in pre):
        return None
    return _bare_estimator(final)
