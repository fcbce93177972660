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

import contextlib
import functools
import importlib
import inspect
import io
import json
import logging
import math
import numbers
import re
import warnings
from typing import Any, Callable, Mapping

from .errors import InputError
from .regressors import REGRESSORS, REGRESSORS_BY_SHORT
from .specs import LearnerSpec, kernel_factory, plain_spec
from .text import escape

logger = logging.getLogger(__name__)

__all__ = ["LearnerSpec", "LEARNERS", "DEFAULT_ALLOWED_MODULES", "learner_ids", "make_estimator", "short_name",
           "short_names", "estimator_from_path", "estimator_class", "is_runnable", "check_allow_modules",
           "NESTED_CLASS_KEY", "seed_estimator", "check_params", "FORCED_PARAMS", "portfolio_spec",
           "boosts_per_class"]

#: Packages whose estimator classes a learner id may name (more only by explicit user choice).
DEFAULT_ALLOWED_MODULES: tuple[str, ...] = ("sklearn",)
_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$")
_PACKAGE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
#: Key that marks a JSON object in learner-id parameters as a nested estimator (its class path).
NESTED_CLASS_KEY = "__class__"
_MAX_NESTING = 3
#: Module path components never imported from a learner id: test suites, build helpers, vendored
#: code and opt-in side-effect imports (private ``_x`` components are refused as well).
_REFUSED_COMPONENTS = frozenset({"tests", "test", "testing", "conftest", "externals", "experimental", "setup"})
#: Parameters algorank sets itself (process and console control); a value given in data is dropped.
FORCED_PARAMS = frozenset({"n_jobs", "verbose"})
#: Meta keys of learner-id JSON that algorank reads itself and never passes to an estimator.
META_KEYS = frozenset({"__scaling__"})
#: Parameter names that can point at the file system, processes or code (used for classes that declare
#: no ``_parameter_constraints``, i.e. packages allowed explicitly by the user).
_RISKY_NAME = re.compile(r"memory|cache|path|dir|file|folder|callback|hook|func|command|module|import|url|socket",
                         re.IGNORECASE)
_PLAIN_WORD = re.compile(r"^[A-Za-z0-9_+-]{1,40}$")


def check_allow_modules(allow_modules) -> tuple[str, ...]:
    """Validate extra allowed packages (``allow_modules``) and return them with the defaults.

    Raises
    ------
    InputError
        An entry that is not a dotted Python package name.
    """
    extra = []
    for m in allow_modules or ():
        if not isinstance(m, str) or not _PACKAGE.match(m.strip()):
            raise InputError(f"allow_modules entries must be Python package names such as 'xgboost'; got {m!r}")
        extra.append(m.strip())
    return tuple(dict.fromkeys((*DEFAULT_ALLOWED_MODULES, *extra)))


def _within(module: str, allowed: tuple[str, ...]) -> bool:
    return any(module == a or module.startswith(a + ".") for a in allowed)


def estimator_class(path: str, *, allow_modules=(), role: str | None = None) -> type:
    """The estimator class an import path names, checked BEFORE anything is imported or called.

    A learner id read from meta-data or given on the command line is data, never code.
    The path must be a dotted name inside an allowed package (scikit-learn by default,
    more by ``allow_modules``); only then is that module imported, and the attribute
    must be a class that subclasses :class:`sklearn.base.BaseEstimator`, has ``fit``,
    and is defined inside an allowed package (a re-exported foreign class is refused).
    Nothing is instantiated here.

    Parameters
    ----------
    path : str
        ``package.module.Class``.
    allow_modules : sequence of str
        Packages allowed besides :data:`DEFAULT_ALLOWED_MODULES`.
    role : {None, "classifier", "regressor", "predictor"}
        ``"classifier"``: the class must be a classifier (a learner id of a classification);
        ``"regressor"``: a regressor (a learner id of a regression); ``"predictor"``: a classifier,
        regressor, or a transformer of :mod:`sklearn.preprocessing` (a nested estimator, e.g. the
        target transformer of :class:`sklearn.compose.TransformedTargetRegressor`); ``None``: any
        estimator.

    Before anything is imported, a path with a private (``_x``), test, build or vendored component
    (``tests``, ``conftest``, ``externals``, ``experimental`` ...) is refused, so data can never make
    algorank import a test suite or a module that acts on import.  What an allowed module prints on
    import is swallowed.

    Raises
    ------
    InputError
        The path is refused (the message says why) or does not import.
    """
    allowed = check_allow_modules(allow_modules)
    text = str(path).strip()
    if not _DOTTED.match(text):
        raise InputError(f"learner {path!r} is not a dotted estimator class path such as "
                         "'sklearn.tree.DecisionTreeClassifier'")
    module, _, name = text.rpartition(".")
    if not _within(module, allowed):
        raise InputError(f"learner {text!r} is outside the allowed packages ({', '.join(allowed)}); "
                         "allow more with allow_modules if you trust that package")
    refused = [p for p in text.split(".") if p.startswith("_") or p.lower() in _REFUSED_COMPONENTS]
    if refused:
        raise InputError(f"learner {text!r} names a private, test or build module ({refused[0]!r}); "
                         "only public estimator classes can be run")
    try:
        # a module that prints on import must not corrupt --json or the terminal
        with contextlib.redirect_stdout(io.StringIO()):
            obj = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError, ValueError) as exc:
        raise InputError(f"cannot import estimator {text!r}: {exc}") from exc
    from sklearn.base import BaseEstimator

    if not inspect.isclass(obj) or not issubclass(obj, BaseEstimator) or not callable(getattr(obj, "fit", None)):
        raise InputError(f"learner {text!r} is not a scikit-learn estimator class (a BaseEstimator subclass with fit)")
    if not _within(getattr(obj, "__module__", "") or "", allowed):
        raise InputError(f"learner {text!r} names a class defined in {obj.__module__!r}, outside the allowed "
                         f"packages ({', '.join(allowed)})")
    if role is not None:
        from sklearn.base import ClassifierMixin, RegressorMixin, TransformerMixin

        kinds = {"classifier": (ClassifierMixin,), "regressor": (RegressorMixin,)}.get(
            role, (ClassifierMixin, RegressorMixin, TransformerMixin))
        if role == "predictor" and not issubclass(obj, (ClassifierMixin, RegressorMixin)) \
                and not obj.__module__.startswith("sklearn.preprocessing"):
            kinds = ()  # a nested transformer: scikit-learn's preprocessing ones only (no file readers)
        if not issubclass(obj, kinds):
            what = {"classifier": "a classifier", "regressor": "a regressor"}.get(
                role, "a classifier, regressor or scikit-learn preprocessing transformer")
            raise InputError(f"learner {text!r} is not {what}: a learner id may only build "
                             + {"classifier": "classifiers", "regressor": "regressors"}.get(
                                 role, "predictors and transformers as nested estimators"))
    return obj


def is_runnable(learner_id: str, *, allow_modules=(), task: str = "classification") -> bool:
    """Whether ``learner_id`` can be run: a portfolio id or short name, or an allowed classifier class path
    (optionally followed by JSON parameters that pass :func:`check_params`, nested estimators included).
    With ``task="regression"``: a regression portfolio id or short name
    (:mod:`algorank.metadata.regressors`), or an allowed regressor class path.
    Never executes anything outside the allowed packages and never constructs an estimator."""
    check_allow_modules(allow_modules)  # a bad allow-list is the caller's error, not a "no"
    text = str(learner_id).strip()
    regression = task == "regression"
    if regression:
        spec = _regressor_spec(text)
        if spec is not None:
            from .boosting import library_available

            return all(library_available(r) for r in spec.requires)
    else:
        spec = _lookup(text)
        if spec is not None:
            from .boosting import library_available

            return all(library_available(r) for r in spec.requires)
    path, brace, rest = text.partition("{")
    try:
        cls = estimator_class(path.strip(), allow_modules=allow_modules,
                              role="regressor" if regression else "classifier")
        if brace:
            params = _json_object(brace + rest)
            if params is None:
                return False
            check_params(cls, {k: v for k, v in params.items() if k not in META_KEYS}, allow_modules=allow_modules)
    except InputError:
        return False
    return True


def _constraints_of(cls) -> dict | None:
    constraints = getattr(cls, "_parameter_constraints", None)
    return constraints if isinstance(constraints, dict) else None


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _is_number_list(value) -> bool:
    return isinstance(value, list) and 0 < len(value) <= 1000 and all(
        _is_number(v) or _is_number_list(v) for v in value)


def _is_number_dict(value) -> bool:
    return (isinstance(value, dict) and NESTED_CLASS_KEY not in value and len(value) <= 1000
            and all(isinstance(k, str) and (_is_number(v) or isinstance(v, bool)) for k, v in value.items()))


def _allowed_by(value, constraints) -> bool:
    """Whether ``value`` satisfies one of the declared constraints of a kind that cannot reach files,
    processes or code: numeric intervals, a fixed set of strings or values, booleans, None, seeds,
    integer CV folds, arrays of numbers and dicts of numbers.  Free strings (``str``), callables,
    objects with methods and every other kind never admit a value from data."""
    from sklearn.utils._param_validation import Hidden, Interval, Options, StrOptions

    for c in constraints:
        if isinstance(c, Hidden):
            c = c.constraint
        if c is None:
            if value is None:
                return True
        elif isinstance(c, StrOptions):
            if isinstance(value, str) and value in c.options:
                return True
        elif isinstance(c, Options):
            if not isinstance(value, (str, bool)) and _is_number(value) and c.is_satisfied_by(value):
                return True
        elif isinstance(c, Interval):
            if _is_number(value) and c.is_satisfied_by(value):
                return True
        elif isinstance(c, str):
            if c in ("boolean", "verbose") and isinstance(value, bool):
                return True
            if c in ("random_state", "cv_object") and (value is None or (isinstance(value, int)
                                                                          and not isinstance(value, bool))):
                return True
            if c == "array-like" and _is_number_list(value):
                return True
        elif c is dict:
            if _is_number_dict(value):
                return True
        elif c in (list, tuple):
            if _is_number_list(value):
                return True
        elif c is bool:
            if isinstance(value, bool):
                return True
        elif inspect.isclass(c) and c in (int, float, numbers.Integral, numbers.Real, numbers.Number):
            if _is_number(value) and (c not in (int, numbers.Integral) or isinstance(value, int)):
                return True
    return False


def _takes_estimator(constraints) -> bool:
    from sklearn.utils._param_validation import HasMethods, Hidden

    return any(isinstance(c.constraint if isinstance(c, Hidden) else c, HasMethods) for c in constraints)


def check_params(cls, params: Mapping[str, Any], *, allow_modules=(), _depth: int = 0) -> dict:
    """Check the JSON parameters of a learner id against the class signature; return those to pass.

    A learner id is data, so its parameters may only choose among values that cannot reach the file
    system, processes or code.  The rule, by principle rather than by a list of attacks:

    * a key must be a parameter of ``cls.__init__``;
    * ``n_jobs`` and ``verbose`` (:data:`FORCED_PARAMS`) are set by algorank: a value from data is dropped;
    * for classes that declare scikit-learn's ``_parameter_constraints``, a value must satisfy one of the
      declared constraints of a *closed* kind: a numeric interval, a fixed set of strings or values,
      a boolean, None, an integer seed or fold count, a list of numbers, a dict of numbers.  A value
      only a free string (``str``), a callable or an object with methods would admit is refused, which
      covers ``memory=``/cache folders, import strings and callbacks of every class at once;
    * a nested estimator (a JSON object with ``"__class__"``) only where the class declares an
      estimator-valued parameter, naming an allowed classifier or regressor, checked by the same rule
      (at most :data:`_MAX_NESTING` levels);
    * classes of LightGBM and XGBoost (packages the user allowed explicitly) take only the parameters of
      :data:`~algorank.metadata.boosting.LIBRARY_PARAMS`, each of a closed type; their thread and logging
      parameters are set by algorank (one thread);
    * classes without declared constraints (packages the user allowed explicitly) take numbers,
      booleans, None, lists of numbers and short plain words (letters, digits, ``_+-``), never under a
      parameter whose name speaks of files, caches, paths, callbacks, commands or modules.

    Parameters
    ----------
    cls : type
        The estimator class (already checked by :func:`estimator_class`).
    params : mapping
        Parsed JSON parameters (meta keys such as ``__scaling__`` removed).
    allow_modules : sequence of str
        Packages allowed besides scikit-learn, for nested classes.

    Returns
    -------
    dict
        The parameters to pass, forced ones removed; nested estimators still as JSON objects.

    Raises
    ------
    InputError
        The first refused parameter, named with the rule it breaks.
    """
    if _depth >= _MAX_NESTING:
        raise InputError(f"bad parameters for {cls.__name__}: nested estimators deeper than {_MAX_NESTING} levels")
    from .boosting import check_library_params, library_of_class

    library = library_of_class(cls)
    if library is not None:
        return check_library_params(library, {k: v for k, v in params.items() if k not in FORCED_PARAMS},
                                    owner=cls.__name__)
    names = set(cls._get_param_names()) if hasattr(cls, "_get_param_names") else set(
        inspect.signature(cls.__init__).parameters) - {"self"}
    constraints = _constraints_of(cls)
    keep: dict[str, Any] = {}
    for key, value in params.items():
        where = f"bad parameters for {cls.__name__}: {escape(key)!r}"
        if not isinstance(key, str) or key not in names:
            raise InputError(f"{where} is not a parameter of {cls.__name__}")
        if key in FORCED_PARAMS:
            logger.info("learner parameter %s=%s ignored: algorank sets %s itself", escape(key),
                        escape(json.dumps(value)), key)
            continue
        if isinstance(value, dict) and NESTED_CLASS_KEY in value:
            ok = _takes_estimator(constraints.get(key, ())) if constraints is not None else "estimator" in key
            if not ok:
                raise InputError(f"{where} does not take an estimator")
            inner_cls = estimator_class(str(value[NESTED_CLASS_KEY]), allow_modules=allow_modules, role="predictor")
            check_params(inner_cls, {k: v for k, v in value.items() if k != NESTED_CLASS_KEY},
                         allow_modules=allow_modules, _depth=_depth + 1)
            keep[key] = value
            continue
        if constraints is not None:
            declared = constraints.get(key)
            if declared is None:
                raise InputError(f"{where} declares no constraints, so it cannot be set from data")
            if not _allowed_by(value, declared):
                raise InputError(f"{where} = {escape(json.dumps(value))[:80]} is not a number, boolean, None or one "
                                 "of the fixed choices the parameter declares (free strings, paths, callables and "
                                 "objects cannot come from data)")
        else:
            plain = (value is None or isinstance(value, bool) or _is_number(value) or _is_number_list(value)
                     or (isinstance(value, str) and _PLAIN_WORD.match(value)))
            if _RISKY_NAME.search(key) or not plain:
                raise InputError(f"{where} = {escape(json.dumps(value))[:80]} cannot come from data ({cls.__name__} "
                                 "declares no parameter constraints: numbers, booleans and plain words only, never "
                                 "under names of files, caches, paths, callbacks, commands or modules)")
        keep[key] = value
    return keep


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
    LearnerSpec("SVC_linear", "svc-linear", kernel_factory("sklearn.svm.SVC", "linear"), needs_scaling=True),
    LearnerSpec("SVC_poly", "svc-poly", kernel_factory("sklearn.svm.SVC", "poly"), needs_scaling=True),
    LearnerSpec("SVC_rbf", "svc-rbf", kernel_factory("sklearn.svm.SVC", "rbf"), needs_scaling=True),
    LearnerSpec("SVC_sigmoid", "svc-sigmoid", kernel_factory("sklearn.svm.SVC", "sigmoid"), needs_scaling=True),
    plain_spec("sklearn.discriminant_analysis.LinearDiscriminantAnalysis", "lda"),
    plain_spec("sklearn.discriminant_analysis.QuadraticDiscriminantAnalysis", "qda"),
    plain_spec("sklearn.ensemble.ExtraTreesClassifier", "extra-trees"),
    plain_spec("sklearn.ensemble.GradientBoostingClassifier", "gradient-boosting"),
    plain_spec("sklearn.ensemble.RandomForestClassifier", "random-forest"),
    plain_spec("sklearn.linear_model.LogisticRegression", "logreg", needs_scaling=True),
    LearnerSpec("sklearn.linear_model.PassiveAggressiveClassifier", "passive-aggressive", _passive_aggressive,
                needs_scaling=True),
    plain_spec("sklearn.linear_model.Perceptron", "perceptron", needs_scaling=True),
    plain_spec("sklearn.linear_model.RidgeClassifier", "ridge", needs_scaling=True),
    plain_spec("sklearn.linear_model.SGDClassifier", "sgd", needs_scaling=True),
    plain_spec("sklearn.naive_bayes.BernoulliNB", "bernoulli-nb"),
    plain_spec("sklearn.naive_bayes.MultinomialNB", "multinomial-nb", needs_nonnegative=True),
    plain_spec("sklearn.neighbors.KNeighborsClassifier", "knn", needs_scaling=True),
    plain_spec("sklearn.neural_network.MLPClassifier", "mlp", needs_scaling=True),
    plain_spec("sklearn.tree.DecisionTreeClassifier", "decision-tree"),
    plain_spec("sklearn.tree.ExtraTreeClassifier", "extra-tree"),
]

#: id -> :class:`LearnerSpec` for every learner algorank can run from an id.
LEARNERS: Mapping[str, LearnerSpec] = {s.id: s for s in _SPECS}
_BY_SHORT = {s.short: s for s in _SPECS}


def learner_ids(*, portfolio: str = "lcdb") -> list[str]:
    """Ids of a runnable portfolio.

    Parameters
    ----------
    portfolio : {"lcdb", "modern"}
        ``"lcdb"``: LCDB's 20 learners, sorted.  ``"modern"``: those 20 followed by the gradient-boosting
        learners and published configurations of :mod:`algorank.metadata.portfolio`, in its order.
    """
    if portfolio == "lcdb":
        return sorted(LEARNERS)
    if portfolio == "modern":
        from .portfolio import portfolio_ids

        return sorted(LEARNERS) + portfolio_ids()
    raise InputError(f"portfolio must be 'lcdb' or 'modern'; got {escape(repr(portfolio))}")


def _modern_factory(entry: Mapping[str, Any]) -> Callable[[], Any]:
    from .boosting import LIBRARIES

    estimator, params, stop = entry["estimator"], dict(entry["params"]), entry["early_stopping"]
    if estimator in LIBRARIES:
        def make():
            from .boosting import BoostingClassifier

            return BoostingClassifier(library=estimator, params=dict(params), early_stopping=stop)
    elif "max_features_exponent" in entry:  # auto-sklearn's forests (see algorank.metadata.forest)
        exponent = float(entry["max_features_exponent"])
        kind = "random_forest" if estimator.endswith("RandomForestClassifier") else "extra_trees"

        def make():
            from .forest import ExponentFeaturesForest

            checked = check_params(estimator_class(estimator), dict(params))
            return ExponentFeaturesForest(kind=kind, max_features_exponent=exponent, params=checked)
    else:
        def make():
            return estimator_from_path(estimator, dict(params))
    return make


@functools.lru_cache(maxsize=1)
def _modern_specs() -> dict:
    """id -> :class:`LearnerSpec` of the modern portfolio (:mod:`algorank.metadata.portfolio`)."""
    from .portfolio import portfolio_entries, requirements

    return {e["id"]: LearnerSpec(e["id"], e["id"], _modern_factory(e), requires=requirements(e["id"]))
            for e in portfolio_entries()}


def _lookup(learner_id: str) -> LearnerSpec | None:
    """The spec of a portfolio id or short name (LCDB's or the modern portfolio's), else None."""
    spec = LEARNERS.get(learner_id) or _BY_SHORT.get(learner_id)
    if spec is None and ":" in learner_id and "{" not in learner_id:
        spec = _modern_specs().get(learner_id)
    return spec


@functools.lru_cache(maxsize=1)
def _portfolio_estimators() -> dict:
    """id -> estimator (class path or boosting library) of the modern portfolio's entries."""
    from .portfolio import portfolio_entries

    return {e["id"]: str(e["estimator"]) for e in portfolio_entries()}


def boosts_per_class(learner_id: str) -> bool:
    """Whether a classifier's fit time grows with the number of classes, one boosting round at a time.

    True for scikit-learn's gradient boosting (``GradientBoostingClassifier``,
    ``HistGradientBoostingClassifier``, with or without JSON parameters) and for the LightGBM, XGBoost and
    CatBoost learners of the modern portfolio.  On ``k`` classes, scikit-learn, LightGBM and XGBoost grow
    ``k`` trees per round; CatBoost grows one tree whose leaves hold ``k`` values, and its gradient work
    grows with ``k`` as well.  Regressors and every other learner: False.
    """
    lid = str(learner_id).strip()
    if ":" in lid and "{" not in lid:
        lid = _portfolio_estimators().get(lid, lid)
    from .boosting import LIBRARIES

    return lid in LIBRARIES or lid.split("{", 1)[0].strip().endswith("GradientBoostingClassifier")


def portfolio_spec(learner_id: str) -> LearnerSpec | None:
    """The :class:`LearnerSpec` of a portfolio id or LCDB short name, or None for anything else."""
    return _lookup(str(learner_id).strip())


def _regressor_spec(learner_id: str):
    """The regression portfolio's spec of an id or short name (:mod:`algorank.metadata.regressors`), else None."""
    return REGRESSORS.get(learner_id) or REGRESSORS_BY_SHORT.get(learner_id)


def _resolve(learner_id: str) -> LearnerSpec:
    spec = _lookup(learner_id) or _regressor_spec(learner_id)
    if spec is None:
        raise InputError(
            f"unknown learner id {escape(repr(learner_id))}; known ids: {', '.join(sorted(_BY_SHORT))} "
            "(short names), their full LCDB ids, or the modern portfolio's ids (such as 'lgbm:default')"
        )
    if spec.requires:
        from .boosting import BOOSTING_EXTRA, library_available

        missing = [r for r in spec.requires if not library_available(r)]
        if missing:
            raise InputError(f"learner {learner_id!r} needs {', '.join(missing)}, which is not installed; "
                             f"{BOOSTING_EXTRA} installs it")
    return spec


def short_name(learner_id: str) -> str:
    """Short display name of a learner id.

    A portfolio id gets its portfolio name (``knn``).  A scikit-learn class path with JSON
    parameters gets the portfolio name of the class or its class name in kebab case,
    followed by its parameters: long parameter names abbreviated
    (``min_samples_split`` -> ``mss``, ``n_estimators`` -> ``n``, ``learning_rate`` -> ``lr``,
    ...), the values of categorical choices (``criterion``, ``kernel``, ``solver``, ...)
    alone, nested estimators by their own short name, e.g.
    ``sklearn.ensemble.RandomForestClassifier{"criterion": "entropy", "n_estimators": 10}`` ->
    ``random-forest(entropy,n=10)``.  Anything else is shown as it is, with control characters
    escaped (:func:`~algorank.metadata.text.escape`).  Display only: these names are not resolved
    back to ids.
    """
    spec = _lookup(str(learner_id)) or _regressor_spec(str(learner_id))
    if spec is not None:
        return spec.short
    return escape(_parameterised_short(str(learner_id)) or learner_id)


#: Abbreviations of long parameter names in :func:`short_name`.
_PARAM_SHORT = {"min_samples_split": "mss", "min_samples_leaf": "msl", "n_estimators": "n", "learning_rate": "lr",
                "learning_rate_init": "lr0", "max_depth": "depth", "max_features": "mf", "n_neighbors": "k",
                "l1_ratio": "l1", "hidden_layer_sizes": "hidden"}
#: Parameters whose (string) value is shown alone in :func:`short_name`.
_CHOICE_PARAMS = frozenset({"criterion", "kernel", "solver", "penalty", "loss", "algorithm", "weights", "metric"})


def _class_short(path: str) -> str | None:
    if path in LEARNERS:
        return LEARNERS[path].short
    if _regressor_spec(path) is not None:
        return _regressor_spec(path).short
    if not _DOTTED.match(path) or not _within(path.rpartition(".")[0], DEFAULT_ALLOWED_MODULES):
        return None
    name = path.rpartition(".")[2]
    if name.endswith("Classifier") and name != "Classifier":
        name = name[: -len("Classifier")]
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "-", name).lower()


def _short_value(key: str, value) -> str:
    if isinstance(value, dict) and NESTED_CLASS_KEY in value:
        inner = {k: v for k, v in value.items() if k != NESTED_CLASS_KEY}
        family = _class_short(str(value[NESTED_CLASS_KEY])) or str(value[NESTED_CLASS_KEY])
        return _with_params(family, inner)
    label = _PARAM_SHORT.get(key, key)
    if isinstance(value, str):
        return value if key in _CHOICE_PARAMS else f"{label}={value}"
    if value is None or isinstance(value, bool):
        return f"{label}={json.dumps(value)}"
    if isinstance(value, (int, float)):
        return f"{label}={value:g}"
    return f"{label}={json.dumps(value, separators=(',', ':'))}"


def _json_object(text: str) -> dict | None:
    """``text`` parsed as a JSON object; None when it is not valid JSON or not an object."""
    try:
        params = json.loads(text)
    except json.JSONDecodeError:
        return None
    return params if isinstance(params, dict) else None


def _with_params(family: str, params: Mapping[str, Any]) -> str:
    return family + ("(" + ",".join(_short_value(k, v) for k, v in params.items()) + ")" if params else "")


def _parameterised_short(learner_id: str) -> str | None:
    path, brace, rest = learner_id.strip().partition("{")
    family = _class_short(path.strip())
    if family is None:
        return None
    if not brace:
        return None  # a bare class path is shown as it is
    params = _json_object(brace + rest)
    if params is None:
        return None
    return _with_params(family, {k: v for k, v in params.items() if k != "__scaling__"})


def short_names(learner_ids) -> dict[str, str]:
    """Full id -> short name of every id: the ``short`` field of JSON outputs.

    One style in every output: ``learner`` fields and keys hold the full ids (as in the meta-data,
    e.g. LCDB's ``SVC_rbf`` next to ``sklearn.linear_model.RidgeClassifier``), ``short`` maps them
    to the short names (``svc-rbf``, ``ridge``) that tables show.
    """
    return {str(l): short_name(str(l)) for l in learner_ids}


def make_estimator(learner_id: str, *, random_state: int | None = None, allow_modules=()):
    """Return a fresh, unfitted estimator for ``learner_id``.

    Parameters
    ----------
    learner_id : str
        A portfolio id (``LEARNERS``), its short name (``"knn"``), a modern-portfolio id
        (``"lgbm:flaml-binary-2"``, :mod:`algorank.metadata.portfolio`; no ``allow_modules`` needed),
        or the import path of an estimator class in an allowed package (built with its default
        settings; see :func:`estimator_class`).
    random_state : int, optional
        Set on estimators that take a ``random_state`` (others are unchanged),
        so that a seeded evaluation is reproducible.  ``None`` keeps the default.
    allow_modules : sequence of str
        Packages allowed besides scikit-learn for import-path ids.
    """
    if _lookup(learner_id) is None and _regressor_spec(learner_id) is None and "." in learner_id:
        est = estimator_from_path(learner_id, allow_modules=allow_modules)
    else:
        est = _resolve(learner_id).factory()
    if random_state is not None and "random_state" in est.get_params():
        est.set_params(random_state=random_state)
    return est


def estimator_from_path(path: str, params: Mapping[str, Any] | None = None, *, allow_modules=(),
                        task: str = "classification", _depth: int = 0):
    """Build an estimator from an import path and keyword parameters.

    The class is checked by :func:`estimator_class` before anything is called (the outer one must
    be a classifier, or a regressor with ``task="regression"``; nested ones classifiers, regressors
    or transformers); the parameters must be JSON literals
    that pass :func:`check_params` (nothing that can reach files, processes or code; ``n_jobs`` and
    ``verbose`` are dropped) and are passed as keyword arguments to that class only.

    A parameter value that is a JSON object with the key ``"__class__"``
    (:data:`NESTED_CLASS_KEY`) is a nested estimator, built the same way from that
    class path and the object's other keys, e.g. a one-vs-rest logistic regression::

        sklearn.multiclass.OneVsRestClassifier{"estimator": {"__class__":
            "sklearn.linear_model.LogisticRegression", "C": 0.5, "solver": "liblinear"}}

    Every nested class is checked by :func:`estimator_class` like the outer one
    (at most :data:`_MAX_NESTING` levels).

    Raises
    ------
    InputError
        When the path is refused or cannot be imported, or the parameters are rejected.
    """
    outer = "regressor" if task == "regression" else "classifier"
    cls = estimator_class(path, allow_modules=allow_modules, role=outer if _depth == 0 else "predictor")
    params = dict(params or {})
    for key, value in params.items():
        if not isinstance(key, str) or not _is_literal(value):
            raise InputError(f"bad parameters for {path}: {key!r} must be a JSON literal; got {type(value).__name__}")
    params = check_params(cls, params, allow_modules=allow_modules, _depth=_depth)
    from .boosting import forced_values, library_of_class

    library = library_of_class(cls)
    if library is not None:
        params.update(forced_values(library, 1))
    for key, value in params.items():
        if isinstance(value, dict) and NESTED_CLASS_KEY in value:
            inner = {k: v for k, v in value.items() if k != NESTED_CLASS_KEY}
            params[key] = estimator_from_path(str(value[NESTED_CLASS_KEY]), inner, allow_modules=allow_modules,
                                              _depth=_depth + 1)
    try:
        return cls(**params)
    except (TypeError, ValueError) as exc:
        raise InputError(f"bad parameters for {path}: {escape(exc)}") from exc


def seed_estimator(est, params: Mapping[str, Any] | None, random_state):
    """Set ``random_state`` on ``est`` and on its nested estimators wherever ``params`` gives none.

    ``params`` are the JSON parameters ``est`` was built from (:func:`estimator_from_path`);
    a ``random_state`` given there, at any nesting level, is kept.  Returns ``est``.
    """
    if random_state is None:
        return est
    given = set(_given_seeds(dict(params or {})))
    try:
        names = [k for k in est.get_params(deep=True) if k == "random_state" or k.endswith("__random_state")]
        todo = {k: random_state for k in names if k not in given}
        if todo:
            est.set_params(**todo)
    except Exception:  # not a scikit-learn estimator: leave it alone
        pass
    return est


def _given_seeds(params: Mapping[str, Any], prefix: str = ""):
    for key, value in params.items():
        if key == "random_state":
            yield prefix + key
        if isinstance(value, dict) and NESTED_CLASS_KEY in value:
            yield from _given_seeds({k: v for k, v in value.items() if k != NESTED_CLASS_KEY}, f"{prefix}{key}__")


def _is_literal(value) -> bool:
    if value is None or isinstance(value, (str, bool, int, float)):
        return True
    if isinstance(value, list):
        return all(_is_literal(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_literal(v) for k, v in value.items())
    return False
