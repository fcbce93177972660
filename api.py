"""The public Python API: what a notebook user calls (re-exported by ``algorank``).

Each function takes what data scientists hold (a path, a DataFrame with a target column,
``X, y`` arrays, an embedded meta-data name or a :class:`MetaDataset`) and returns a result
object with ``to_dict()`` and ``to_text()`` (most also ``to_frame()``).  The command line
(:mod:`algorank.cli`) is a thin shell over exactly these functions, one per command: it prints
``to_text()``, or ``to_dict()`` as JSON, and writes the result's files into the output folder the user
names (:mod:`algorank.results`).

Every function that reads meta-data defaults to the embedded ``modern`` set
(:data:`DEFAULT_META`), the same for every command, :func:`recommend` and
:class:`~algorank.AlgorankClassifier`.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from typing import Callable, Sequence

from algorank.evaluation.cv.children import end_with_this_process, stop_processes  # a command's processes end with it
from algorank.evaluation.cv.fold_fork import fork_fold_server  # a command's fold server is a fork of it
from algorank.metadata.dataset import MetaDataset
from algorank.metadata.errors import InputError
from algorank.metadata.snapshot import DEFAULT_META
from algorank.recommender.live.saved_model import check_model_path, save_model  # recommend --save-model
from algorank.results import DatasetSelection, ExportResult, RankResult, RecordResult, TuneResult
from algorank.building import build_meta, build_oboe, build_snapshot  # noqa: F401 (the API's building functions)

logger = logging.getLogger(__name__)

__all__ = ["load_meta", "info", "rank", "recommend", "evaluate", "benchmark", "tune_p", "multitest", "compare",
           "export", "pull", "build_meta", "build_snapshot", "build_oboe", "version", "default_store_path",
           "p_families", "DEFAULT_META", "TuneResult", "RankResult", "ExportResult", "DatasetSelection",
           "RecordResult", "check_model_path", "save_model"]


def load_meta(source=None, *, default: str = DEFAULT_META) -> MetaDataset:
    """Load meta-data: an embedded set's name (``"modern"``, ``"broad"``, ``"uci"``, ``"lcdb"``, ``"oboe"``, ``"rdatasets"``, ``"regression"``), a file, a MetaDataset, or a list of these.

    Parameters
    ----------
    source : str, path, MetaDataset or sequence, optional
        What to load; None gives ``default``.  A list joins disjoint sources.
    default : str
        Embedded set used when ``source`` is None (``modern``).

    Returns
    -------
    MetaDataset
        The runs (one row per dataset, learner, repeat and fold) and the datasets' meta-features.

    Raises
    ------
    InputError
        Unknown name, missing or invalid file, overlapping dataset ids in a list.

    Examples
    --------
    >>> import algorank
    >>> meta = algorank.load_meta("uci")
    >>> meta.describe().datasets, len(meta.learner_ids)
    (63, 20)
    """
    from algorank.metadata.snapshot import load_meta as _load

    return _load(source, default=default)


def info(meta=None):
    """Summary counts of meta-data (``algorank info``).

    Parameters
    ----------
    meta : str, path, MetaDataset or list, optional
        Prior runs (default the embedded ``modern`` set); anything :func:`load_meta` takes.

    Returns
    -------
    MetaDescription
        ``to_text()``, ``to_dict()``.

    Examples
    --------
    >>> import algorank
    >>> d = algorank.info("uci")
    >>> d.datasets, d.learners, d.runs
    (63, 20, 6300)
    """
    return load_meta(meta).describe()


def rank(meta=None, *, p="1/16", exclude_datasets: Sequence[str] = (), min_coverage: float = 0.5) -> RankResult:
    """AR-A3R average ranking of the learners of the meta-data (``algorank rank``).

    Parameters
    ----------
    meta : str, path, MetaDataset or list, optional
        Prior runs (default ``modern``).
    p : float or str
        A3R time exponent in [0, 1] (``"1/64"``, ``0.015625``, ``0`` = accuracy only).
    exclude_datasets : sequence of str
        Datasets left out of the ranking.
    min_coverage : float
        Fraction of datasets a learner needs results on to be ranked on merit.

    Returns
    -------
    RankResult

    Examples
    --------
    >>> import algorank
    >>> r = algorank.rank("uci", p="1/16")
    >>> r.n_datasets, r.order[0]
    (63, 'sklearn.neighbors.KNeighborsClassifier')
    >>> print(r.to_text())  # doctest: +ELLIPSIS
    AR-A3R ranking, P = 1/16 (0.0625), 63 datasets; score = mean rank (1 = best)
    ...
    """
    from algorank.recommender.registry import make_ar

    data = load_meta(meta)
    if exclude_datasets:
        data = data.exclude(datasets=[str(d) for d in exclude_datasets])
    ar = make_ar(p, min_coverage=min_coverage).fit(data)
    return RankResult(p=float(ar.p), p_text=str(p), n_datasets=int(ar.n_datasets_), order=tuple(ar.order_),
                      scores={l: float(ar.average_rank_[l]) for l in ar.order_},
                      coverage={l: int(ar.coverage_[l]) for l in ar.order_})


def recommend(data, target: str | None = None, *, y=None, strategy: str | None = None, budget: float | None = 60.0,
              meta=None, cv: int | str | None = None, top: int | None = None, random_state: int = 0,
              refit: bool = True, dry_run: bool = False, exclude_datasets: Sequence[str] = (),
              allow_modules: Sequence[str] = (),
              time_model: str = "live", time_overhead: float | None = None, metric: str | None = None,
              neighbours: int = 10, on_plan: Callable | None = None, on_start: Callable | None = None,
              on_observation: Callable | None = None, started: float | None = None, save_model=None, n_jobs: int = 1,
              task: str = "auto", keep_columns: Sequence[str] = (), drop_columns: Sequence[str] = (),
              force: bool = False, ensemble: bool = True):
    """Rank learners for ``data`` from the meta-data, test them live within ``budget`` seconds, refit the best.

    Parameters
    ----------
    data : str, path, DataFrame, array-like
        A file / ``sklearn:NAME`` / ``openml:ID``, a DataFrame holding the target column
        ``target``, or the features with ``y=``.
    target : str, optional
        Target column (default: a column named class/target, else the last nominal one).
    y : array-like, optional
        Labels when ``data`` holds the features only.
    strategy : str, optional
        Strategy spec (default ``eiu``, see
        :data:`~algorank.recommender.live.recommend.DEFAULT_STRATEGY`).
    budget : float or None
        Wall-clock seconds from this call (or ``started``) to the end of the live tests, loading
        included (None: no limit); the refit of the best learner (``refit=True``) comes on top.
        For a budget that includes the refit use :class:`~algorank.AlgorankClassifier`.
    meta : str, path, MetaDataset or list, optional
        Prior runs (default the embedded ``modern`` set).
    cv : int, "auto" or None
        Folds of each live test (stratified, one repetition).  ``"auto"``: 5, or 2 when the data are large
        for the budget (:mod:`algorank.recommender.live.folds`).  None (default): ``"auto"`` for a regression
        target, 5 for a classification.
    top : int, optional
        Test at most this many learners.
    random_state : int
        Seed of the live CV and of randomised strategies.
    refit : bool
        Refit the best learner on all the data (``Recommendation.model``).
    ensemble : bool
        Classification: return a weighted ensemble of the tested learners instead when greedy ensemble selection
        over their out-of-fold probabilities beats the best learner (:mod:`algorank.recommender.live.ensemble`;
        ``Recommendation.ensemble`` records what it found, also without ``refit``).  False: no selection.
    dry_run : bool
        Only plan.
    exclude_datasets : sequence of str
        Prior datasets to leave out of the meta-data.
    allow_modules : sequence of str
        Packages besides scikit-learn whose classes learner ids may name.
    time_model : {"live", "fit"}
        Rank with the time of a live test (``cv x t + time_overhead``) or the recorded fit time.
    time_overhead : float, optional
        Seconds a live test costs on top of its fits and predictions (default: calibrated).
    metric : str, optional
        Rank, test and choose by ``accuracy``, ``balanced_accuracy``, ``roc_auc`` (one-vs-rest),
        ``log_loss`` (lower is better) or ``f1_macro``, where the meta-data records it (an error
        names the metrics it records); default the one the meta-data ranks by (accuracy for
        ``modern``).  The leaderboard's score column is named after it.  A regression task chooses
        by ``r2`` (default), ``rmse`` or ``mae``.
    neighbours : int
        Similar prior datasets behind the expected values of strategies without their own model.
    on_plan, on_start, on_observation : callable, optional
        Progress hooks: the planned order, each learner id before its test, each observation.
    started : float, optional
        :func:`time.perf_counter` value the budget counts from (default: this call).
    save_model : path, optional
        Also save the refitted best learner there with joblib (implies ``refit``; the path is
        checked before any work; nothing is saved when nothing was tested successfully).  Load
        it with ``joblib.load``, and only load files you trust: unpickling runs code.  An existing
        file is replaced only if it is a model algorank saved, or with ``force`` (an input never).
    n_jobs : int
        Tests run at once (default 1; ``-1``: one per CPU), re-planning as each finishes, on joblib's engine:
        local loky workers by default, a Dask cluster under ``joblib.parallel_config(backend="dask")``.
        At most the number of cores (a larger value is lowered, with a note in the log).
    force : bool
        Let ``save_model`` replace an existing file that is not a model algorank saved.
    task, keep_columns, drop_columns : str, sequence of str
        How a numeric target is read (``"auto"``, ``"classification"``, ``"regression"``) and the feature
        columns kept as read or dropped: see :func:`algorank.evaluation.cv.datasets.load_dataset`.  A
        regression target runs the regressors, ranked by regression meta-data (``meta``; default the
        embedded ``regression`` set; classification meta-data is an error), with ``metric`` one of ``r2``
        (default), ``rmse``, ``mae``; the leaderboard and ``to_dict()`` carry each test's R², RMSE and MAE.

    Returns
    -------
    Recommendation
        ``leaderboard`` / ``to_frame()``, ``best``, ``model`` (a fitted Pipeline that predicts the
        labels in their own type: integers for an integer target, the categories' values for a
        categorical), ``notes``, ``saved_model`` (the path written, or None), ``to_dict()``, ``to_text()``.

    Examples
    --------
    Test learners on scikit-learn's breast-cancer data for up to 20 seconds and use the best:

    >>> import algorank
    >>> from sklearn.datasets import load_breast_cancer
    >>> X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    >>> rec = algorank.recommend(X, y=y, budget=20)  # doctest: +SKIP
    >>> print(rec.to_text())  # doctest: +SKIP
    >>> rec.model.predict(X.head())  # doctest: +SKIP

    ``dry_run=True`` only plans: the order the strategy would test, with what it expects of each learner.
    """
    from algorank.metadata.io import protected_inputs
    from algorank.recommender.live.recommend import recommend as _recommend
    from algorank.recommender.live.saved_model import save_model as _save

    model_path = None if save_model is None else check_model_path(save_model, force=force, inputs=(data,))
    with protected_inputs(data, meta):  # no file of this call replaces its inputs
        result = _recommend(data, y=y, target=target, strategy=strategy, meta=meta, budget_seconds=budget, top=top,
                            cv=cv, random_state=random_state, refit=(refit or model_path is not None) and not dry_run,
                            dry_run=dry_run, exclude_datasets=exclude_datasets, allow_modules=allow_modules,
                            time_model=time_model, time_overhead=time_overhead, metric=metric, on_plan=on_plan,
                            on_start=on_start, on_observation=on_observation, started=started,
                            neighbours=neighbours, n_jobs=n_jobs, task=task,
                            keep_columns=keep_columns, drop_columns=drop_columns, ensemble=ensemble)
        if model_path is None or result.model is None:
            return result
        return replace(result, saved_model=_save(result, model_path))


def version() -> str:
    """``algorank X.Y.Z``: the name and the installed version."""
    from algorank import __version__

    return f"algorank {__version__}"


def process_start() -> float:
    """:func:`time.perf_counter` value of this process's start (Linux; else now): the command line's budgets count from it."""
    import os

    now = time.perf_counter()
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            start_ticks = float(f.read().rpartition(")")[2].split()[19])  # field 22, starttime
        with open("/proc/uptime", encoding="ascii") as f:
            uptime = float(f.read().split()[0])
        age = uptime - start_ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return now
    return now - min(max(age, 0.0), 60.0)  # a clock oddity never eats more than a minute


def parse_repeats(text: str | int | None, stop: str | None) -> tuple[int | None, str]:
    """Interpret ``repeats`` (``N`` or ``"auto"``) together with ``stop`` -> ``(repeats, stop)`` of the Evaluator.

    ``auto`` means adaptive: ``stop`` defaults to ``rank`` (``fixed`` with ``auto`` is
    an error).  A number with ``fixed`` (the default) is the number of repetitions;
    with ``rank``/``ks`` it is the maximum.
    """
    if text is None:
        return None, stop or "fixed"
    if isinstance(text, str) and text.strip().lower() == "auto":
        if stop == "fixed":
            raise InputError("repeats='auto' (adaptive) needs stop='rank' or stop='ks', not stop='fixed'",
                             parameters=("repeats", "stop"))
        return None, stop or "rank"
    try:
        n = int(str(text))
    except ValueError:
        n = 0
    if n < 1:
        raise InputError(f"repeats= must be a positive integer or 'auto', got {text!r}", parameters=("repeats",))
    return n, stop or "fixed"


def default_store_path():
    """Default fold store of :func:`evaluate`: ``$ALGORANK_STORE`` or ``~/.cache/algorank/evaluate.sqlite``."""
    import os
    from pathlib import Path

    env = os.environ.get("ALGORANK_STORE")
    if env:
        return Path(env)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "algorank" / "evaluate.sqlite"


def evaluate(data, target: str | None = None, *, y=None, learners: Sequence[str] | None = None, scheme: str = "cv",
             cv: int = 5, repeats: int | str | None = None, stop: str | None = None, threshold: float | None = None,
             min_repeats: int | None = None, max_repeats: int | None = None, timeout: float | None = None,
             n_jobs: int = 1, store=None, random_state: int = 0, allow_modules: Sequence[str] = (),
             progress: bool = False, task: str = "auto", keep_columns: Sequence[str] = (), drop_columns=()):
    """Evaluate learners on one dataset with repeated cross-validation (resumable with a fold store, ``store=``).

    Parameters
    ----------
    data, target, y, task, keep_columns, drop_columns
        As in :func:`recommend`.
    learners : sequence of str, optional
        Portfolio ids, short names or estimator class paths with JSON parameters (default: the
        20-learner portfolio; for a regression target the 16 regressors of
        :mod:`algorank.metadata.regressors`).
    repeats : int or "auto", optional
        Repetitions (``stop="fixed"``), their maximum (``rank``/``ks``), or ``"auto"``
        (adaptive; ``stop`` defaults to ``rank``, and ``stop="fixed"`` is an error with it).
    store : bool, str or path, optional
        SQLite fold store that makes a run resumable: None or False (default) writes nothing; True the
        default store :func:`default_store_path` (what the command line's ``evaluate`` uses); a path.
    scheme, cv, stop, threshold, min_repeats, max_repeats, timeout, n_jobs, random_state
        See :class:`algorank.evaluation.cv.evaluator.Evaluator`.
    allow_modules : sequence of str
        Packages besides scikit-learn whose classes learner ids may name.
    progress : bool
        tqdm bar on stderr.

    Returns
    -------
    EvaluationResult
        ``summary`` / ``to_frame()``, ``runs``, ``to_meta()``, ``to_dict()``.

    Examples
    --------
    >>> import algorank
    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True, as_frame=True)
    >>> res = algorank.evaluate(X, y=y, learners=["knn", "lda"], repeats=3)  # doctest: +SKIP
    >>> res.to_meta().matrix("accuracy")  # doctest: +SKIP
    """
    from algorank.evaluation.cv.datasets import as_dataset
    from algorank.evaluation.cv.evaluator import Evaluator
    from algorank.metadata.learners import learner_ids

    repeats, stop = parse_repeats(repeats, stop)
    if store is True:
        store = default_store_path()
    evaluator = Evaluator(scheme=scheme, cv=cv, repeats=repeats, stop=stop, threshold=threshold,
                          min_repeats=min_repeats, max_repeats=max_repeats, timeout=timeout, n_jobs=n_jobs,
                          store=store or None, random_state=random_state, progress=progress,
                          allow_modules=allow_modules)
    data = as_dataset(data, target, y=y, task=task, keep_columns=keep_columns, drop_columns=drop_columns)
    if not learners and data.task == "regression":
        from algorank.metadata.regressors import PRIOR_FREE_ORDER

        learners = PRIOR_FREE_ORDER
    return evaluator.evaluate(data, list(learners) if learners else learner_ids())


def time_model_arrays(meta: MetaDataset, *, time_model: str = "fit", cv: int = 5, time_overhead: float | None = None):
    """``(meta or arrays, TimeModel or None, time kind, words)`` for a benchmark under ``time_model``.

    ``"fit"``: the recorded fit times; ``"live"``: what a live ``cv``-fold test costs,
    ``cv x t + overhead`` (:func:`algorank.recommender.kernel.time_model.live_arrays`).
    """
    if time_model == "fit":
        return meta, None, "fit_time", "recorded fit times"
    if time_model != "live":
        raise InputError(f"time_model must be 'fit' or 'live'; got {time_model!r}")
    from algorank.recommender.kernel.time_model import live_arrays

    arrays, model, kind = live_arrays(meta, folds=cv, overhead=time_overhead)
    return arrays, model, kind, "live tests, " + model.describe(kind)


def _meta_name(meta) -> str | None:
    """The embedded-set name ``meta`` was given as (``"lcdb"``, ``["uci"]``), for finding its frozen split."""
    if isinstance(meta, (list, tuple)) and len(meta) == 1:
        meta = meta[0]
    if meta is None:
        return DEFAULT_META
    return meta.strip().lower() if isinstance(meta, str) else None


def _heldout_ids(heldout, meta, meta_name):
    from algorank.metadata.splits import resolve_heldout, split_meta

    return split_meta(meta, resolve_heldout(heldout, meta_name=meta_name))


def _as_list(x) -> list:
    if x is None:
        return []
    return [x] if isinstance(x, (str, MetaDataset)) or not isinstance(x, (list, tuple)) else list(x)


def benchmark(strategies: Sequence, meta=None, *, test_meta=None, heldout=None,
              exclude_datasets: Sequence[str] = (), reference=None, eps: float = 1.0,
              budgets: Sequence[float] = (1.0, 10.0, 60.0), tmin: float | None = None, tmax: float | None = None,
              time_model: str = "fit", cv: int = 5, time_overhead: float | None = None, random_state: int = 0,
              progress: bool = False, axis: str = "time", max_tests: int | None = None, per_dataset: bool = False):
    """Loss-time benchmark of ordering strategies: leave-one-dataset-out, or train on one set and test on another.

    Parameters
    ----------
    strategies : sequence of str or Strategy
        Specs (``"ar:p=1/16"``, ``"ar:p=0"``, ``"oracle"``, ...) or strategy objects.
    meta : str, path, MetaDataset or list
        Prior runs the strategies are fitted on (default the embedded ``modern`` set).
    test_meta : str, path, MetaDataset or list, optional
        Score the strategies on every dataset of this meta-data (its recorded runs; adaptive
        strategies query them as their environment, as in leave-one-out), fitted on ``meta``.
        A dataset in both is an error unless ``exclude_datasets`` removes it from ``meta``.
    heldout : True, str, path or list of str, optional
        Score on a frozen held-out split and train on the rest of ``meta``: ``True`` = the
        split of the embedded set named by ``meta`` (:func:`algorank.metadata.splits.heldout`),
        a split name, a text file of dataset ids, or the ids.  Not with ``test_meta``.
    exclude_datasets : sequence of str
        Datasets removed from ``meta`` (the training meta-data) first.
    reference : str or Strategy, optional
        The strategy every other one is compared with in the user-facing metrics (default
        the first; a spec not among ``strategies`` is added in front).
    eps : float
        Accuracy points for "time to reach within eps of the best learner" (default 1).
    budgets : sequence of float
        Seconds of test time for the loss at budget and the MIL from the cheapest test to the
        budget (default 1, 10, 60; on the benchmark's time axis, i.e. live-test time with
        ``time_model="live"``).
    tmin, tmax : float, optional
        MIL window in seconds (default: the data-driven rule, stated in the result).
    time_model, cv, time_overhead
        Test times as recorded (``"fit"``) or as a live ``cv``-fold test costs (``"live"``).
    random_state : int
        Seed of randomised strategies whose spec gives none.
    axis : {"time", "tests"}
        x axis: test time (loss-time curves, MIL, user-facing metrics) or number of tests (the
        paper's loss curve; needs no times, so it runs on accuracy-only meta-data).
    max_tests : int, optional
        ``axis="tests"``: K of the mean loss over tests 1..K (default: the number of learners).
    per_dataset : bool
        Whether the result's ``to_dict()`` holds every value per dataset (default False: totals,
        tests and comparisons only; the arrays and ``per_dataset_table()`` have them either way).

    Returns
    -------
    BenchmarkSuite
        ``results`` per strategy, ``comparison`` (Wilcoxon / Friedman + Holm), ``metrics``
        (user-facing metrics with the oracle bounds and tests against the reference),
        ``to_dict()``, ``per_dataset_table()`` / ``to_frame()``.

    Examples
    --------
    Accuracy-only average ranking against A3R with P = 1/16, leave-one-dataset-out:

    >>> import algorank
    >>> suite = algorank.benchmark(["ar:p=0", "ar:p=1/16"], "uci")
    >>> [r.strategy for r in suite.results]
    ['ar:p=0', 'ar:p=1/16']
    >>> suite.to_frame()  # doctest: +SKIP
    """
    from algorank.evaluation.meta.benchmark import benchmark_strategies, join_test_meta
    from algorank.recommender.kernel.time_model import meta_time_kind
    from algorank.metadata.checks import check_folds, check_seed
    from algorank.recommender.base import strategy_name
    from algorank.recommender.registry import parse_strategy

    random_state, cv = check_seed(random_state), check_folds(cv)  # before any work
    if isinstance(strategies, str):
        strategies = [strategies]
    objs = [parse_strategy(s, random_state=random_state) if isinstance(s, str) else s for s in strategies]
    names = [strategy_name(s) for s in objs]
    ref_name = None
    if reference is not None:
        ref_name = reference.strip() if isinstance(reference, str) else strategy_name(reference)
        if ref_name not in names:
            objs.insert(0, parse_strategy(reference, random_state=random_state) if isinstance(reference, str)
                        else reference)
    train = load_meta(meta)
    excluded = [str(d) for d in exclude_datasets]
    if excluded:
        train = train.exclude(datasets=excluded)
    if heldout is not None and heldout is not False and test_meta is not None:
        raise InputError("give either test_meta or heldout, not both")
    test_datasets = None
    setting = None
    if test_meta is not None:
        tests = [load_meta(t) for t in _as_list(test_meta)]
        if not tests:
            raise InputError("test_meta is empty")
        joined, test_datasets = join_test_meta(train, tests)
        kinds = {meta_time_kind(train), *(meta_time_kind(t) for t in tests)}
        if len(kinds) > 1:
            logger.warning("training and test meta-data record different times (%s); the joined set uses %s",
                           ", ".join(sorted(kinds)), meta_time_kind(joined))
        setting = (f"trained on {len(train.dataset_ids)} datasets of the training meta-data, scored on "
                   f"{len(test_datasets)} datasets of the test meta-data")
        full = joined
    elif heldout is not None and heldout is not False:
        _, test_datasets = _heldout_ids(heldout, train, _meta_name(meta))
        name = heldout if isinstance(heldout, str) else (_meta_name(meta) if heldout is True else "given list")
        setting = (f"frozen held-out split ({name}): trained on {len(train.dataset_ids) - len(test_datasets)} "
                   f"datasets, scored on {len(test_datasets)} held-out datasets")
        full = train
    else:
        full = train
    if axis == "tests":
        model, kind, words = None, "fit_time", "tests (each test counts 1)"
    else:
        _, model, kind, words = time_model_arrays(full, time_model=time_model, cv=cv, time_overhead=time_overhead)
    suite = benchmark_strategies(objs, full, tmin=tmin, tmax=tmax, time_kind=kind, time_model=model,
                                 progress=progress, test_datasets=test_datasets, eps=eps, budgets=budgets,
                                 reference=ref_name, time_words=words, setting=setting, axis=axis,
                                 max_tests=max_tests)
    return replace(suite, per_dataset=bool(per_dataset))


def tune_p(meta=None, *, strategy: str = "ar", grid: Sequence[float] | None = None, nested: bool = False,
           tmin: float | None = None, tmax: float | None = None, time_model: str = "fit", cv: int = 5,
           time_overhead: float | None = None, exclude_heldout=None, exclude_datasets: Sequence[str] = (),
           reference=None, eps: float = 1.0, budgets: Sequence[float] = (1.0, 10.0, 60.0),
           progress: bool = False, per_dataset: bool = False) -> TuneResult:
    """Sweep a strategy's cost exponent P by leave-one-dataset-out MIL (``nested=True`` adds the honest estimate).

    Parameters
    ----------
    meta : str, path, MetaDataset or list
        Prior runs (default the embedded ``modern`` set).
    strategy : str
        The strategy family whose P is swept: ``"ar"`` (A3R average ranking, the default),
        ``"at"``, ``"lt"`` or ``"ei"`` (P in [0, 2]: ``EI / seconds ** P``), optionally with its
        other knobs fixed after a colon (``"lt:h=inf"``, ``"ei:h=inf,shrink=0.2"``).
    grid : sequence of float or str, optional
        P values (default: the paper's 1/4 ... 1/256, 0; for ``ei`` 2, 3/2, 1, 1/2, 1/4, 0;
        strings such as ``"1/64"`` are parsed).
    nested : bool
        Also tune P inside each outer fold.  Needs a strategy with a fast leave-one-out path
        (``ar``, ``at``, ``lt``); ``ei`` refits per dataset, so tune it on the training part
        (``exclude_heldout``) and score the choice with ``benchmark(..., heldout=True)``.
    tmin, tmax, time_model, cv, time_overhead
        As in :func:`benchmark`.
    exclude_heldout : True, str, path or list of str, optional
        Leave a frozen held-out split out of all tuning (``True``: the split of the embedded
        set named by ``meta``; or a split name, a file of ids, the ids).
    exclude_datasets : sequence of str
        Further datasets to leave out.
    reference : float or str, optional
        The P the others are compared with in the user-facing metrics (default the first of the grid).
    eps, budgets, per_dataset
        As in :func:`benchmark`.

    Returns
    -------
    TuneResult

    Examples
    --------
    >>> import algorank
    >>> t = algorank.tune_p("uci")
    >>> t.best_p
    0.25
    >>> print(t.to_text())  # doctest: +SKIP
    """
    from algorank.evaluation.meta.benchmark import PAPER_P_GRID, p_sweep, tune_p_nested
    from algorank.evaluation.meta.user_metrics import metrics_report
    from algorank.recommender.base import capability
    from algorank.recommender.kernel.environments import MetaArrays, meta_arrays
    from algorank.recommender.kernel.labels import format_p
    from algorank.recommender.spec import parse_p

    from algorank.metadata.checks import check_folds

    cv = check_folds(cv)  # before any work
    family, make_strategy, upper, default_grid = _p_family(strategy)
    values = (default_grid or PAPER_P_GRID) if grid is None else [parse_p(p, upper=upper) for p in grid]
    fast = capability(make_strategy(values[0]), "fast_loo")
    if nested and not fast:
        raise InputError(f"nested tuning needs a strategy with a fast leave-one-out path (ar, at, lt); "
                         f"{family!r} refits per dataset: tune it with exclude_heldout= and score the choice "
                         "with benchmark(..., heldout=True)", parameters=("exclude_heldout",))
    data = load_meta(meta)
    excluded = [str(d) for d in exclude_datasets]
    if excluded:
        data = data.exclude(datasets=excluded)
    if exclude_heldout is not None and exclude_heldout is not False:
        data, held = _heldout_ids(exclude_heldout, data, _meta_name(meta))
        excluded += held
    arrays, model, kind, words = time_model_arrays(data, time_model=time_model, cv=cv, time_overhead=time_overhead)
    if fast:
        sweep = p_sweep(arrays, make_strategy=make_strategy, grid=values, tmin=tmin, tmax=tmax, upper=upper)
    else:  # refitted without each dataset: needs the MetaDataset, and applies the time model itself
        sweep = p_sweep(data, make_strategy=make_strategy, grid=values, tmin=tmin, tmax=tmax, upper=upper,
                        fast=capability(make_strategy(values[0]), "fast_loo_fit"), time_model=model, time_kind=kind,
                        progress=progress)
    honest = None
    if nested:
        honest = tune_p_nested(arrays, make_strategy=make_strategy, grid=values, tmin=sweep.tmin, tmax=sweep.tmax,
                               progress=progress)
    ref_p = values[0] if reference is None else parse_p(reference, upper=upper)
    names = [r.strategy for r in sweep.results]
    if ref_p not in [float(v) for v in values]:
        raise InputError(f"reference P must be one of the grid ({', '.join(format_p(v) for v in values)}); "
                         f"got {reference!r}")
    ref = names[[float(v) for v in values].index(ref_p)]
    results = list(sweep.results) + ([honest.result] if honest is not None else [])
    scored = arrays if isinstance(arrays, MetaArrays) else meta_arrays(arrays)
    report = metrics_report(results, scored, eps=eps, budgets=budgets, reference=ref, time_axis=words, task=data.task)
    return TuneResult(sweep=sweep, nested=honest, time_model=words, metrics=report, excluded=tuple(excluded),
                      strategy=family, spec=str(strategy).strip(), per_dataset=bool(per_dataset))


def p_families() -> dict:
    """Strategy families with a cost exponent P that :func:`tune_p` can sweep -> P's upper bound.

    Declared by the strategies themselves (``p_upper``, see :data:`algorank.recommender.base.CAPABILITIES`).
    """
    from algorank.recommender.registry import STRATEGIES, parse_strategy

    out = {}
    for name in STRATEGIES:
        try:
            upper = parse_strategy(name).p_upper
        except InputError:  # a strategy whose spec needs parameters
            continue
        if upper is not None:
            out[name] = float(upper)
    return out


def _p_family(spec: str):
    """``(family, make_strategy(p), upper bound of P, default grid or None)`` of a ``tune_p`` strategy family."""
    from algorank.recommender.kernel.labels import format_p
    from algorank.recommender.registry import STRATEGIES, make_ar, parse_strategy
    from algorank.recommender.spec import join_spec, split_spec

    family, fixed = split_spec(spec)
    strategy = parse_strategy(family) if family in STRATEGIES else None
    upper = None if strategy is None else strategy.p_upper
    if upper is None:
        raise InputError(f"tune-p sweeps the P of {', '.join(p_families())}; got strategy {spec!r}")
    if "p" in fixed:
        raise InputError(f"P is what tune-p sweeps: leave p= out of the strategy {spec!r}")
    if family == "ar" and not fixed:
        return family, make_ar, upper, strategy.p_grid

    def make(p):
        return parse_strategy(join_spec(family, {**fixed, "p": format_p(p)}))

    make(0.0)  # a bad fixed knob is an error now, not after the first sweep
    return family, make, upper, strategy.p_grid


def multitest(meta=None, *, learners: Sequence[str] | None = None, cost="fit_time", pairwise: str = "auto",
              correction: str = "holm", posthoc_method: str = "bergmann", alpha: float = 0.05,
              test_train_ratio: float | None = None, missing: str = "auto", progress: bool = False,
              n_jobs: int | None = None):
    """Multi2Test: a cost-conscious order of learners with pairwise tests (Ulas et al. 2012).

    Parameters
    ----------
    meta : str, path, MetaDataset, FoldRuns or list, optional
        Prior runs (default the embedded ``modern`` set); a Parquet file is read as arrays (``load_fold_runs``).
    learners : sequence of str, optional
        Learners to compare: ids or short names (default all).
    cost, pairwise, correction, posthoc_method, alpha, test_train_ratio, missing, progress, n_jobs
        See :func:`algorank.recommender.multitest.multi2test`.

    Returns
    -------
    Multi2TestResult

    Examples
    --------
    >>> import algorank
    >>> m = algorank.multitest("uci", learners=["knn", "lda", "svc-rbf", "decision-tree"])  # doctest: +SKIP
    >>> m.order  # doctest: +SKIP
    ('sklearn.neighbors.KNeighborsClassifier', 'sklearn.tree.DecisionTreeClassifier', 'sklearn.discriminant_analysis.LinearDiscriminantAnalysis', 'SVC_rbf')
    >>> print(m.to_text())  # doctest: +SKIP
    """
    from algorank.metadata.fold_runs import load_fold_runs
    from algorank.recommender.multitest import multi2test, run_columns

    runs = load_fold_runs(meta, columns=run_columns(cost))
    return multi2test(runs, learners=list(learners) if learners else None, cost=cost, pairwise=pairwise,
                      correction=correction, posthoc_method=posthoc_method, alpha=alpha,
                      test_train_ratio=test_train_ratio, missing=missing, progress=progress, n_jobs=n_jobs)


def compare(meta=None, *, learners: Sequence[str] | None = None, metric: str = "accuracy", control: str | None = None,
            posthoc_method: str = "holm", control_method: str = "holm", alpha: float = 0.05,
            confidence: float = 0.95, ci_method: str = "t", bayes: bool = True, rope: float = 0.01,
            nsamples: int = 10000, random_state: int = 0, progress: bool = False):
    """Compare learners over the datasets of the meta-data: omnibus test, post hoc, effect sizes, Bayesian signed-rank.

    Parameters
    ----------
    meta : str, path, MetaDataset or list, optional
        Prior runs (default the embedded ``modern`` set).
    learners : sequence of str, optional
        Learner ids or short names (default all).
    control : str, optional
        Compare this learner (id or short name) with every other one instead of all pairs.
    metric, posthoc_method, control_method, alpha, confidence, ci_method, bayes, rope, nsamples, random_state, progress
        See :func:`algorank.evaluation.stats.compare.compare_learners`.

    Returns
    -------
    LearnerComparison

    Examples
    --------
    >>> import algorank
    >>> c = algorank.compare("uci", learners=["knn", "lda", "svc-rbf"])
    >>> print(c.to_text())  # doctest: +ELLIPSIS
    3 learners on 63 datasets (0 left out), metric accuracy, alpha = 0.05
    omnibus: Friedman chi-square ...
    """
    from algorank.evaluation.stats.compare import compare_learners
    from algorank.metadata.checks import check_seed
    from algorank.recommender.multitest import resolve_learners

    random_state = check_seed(random_state)
    data = load_meta(meta)
    chosen = resolve_learners(list(learners), data.learner_ids) if learners else None
    ctrl = resolve_learners([control], data.learner_ids)[0] if control else None
    return compare_learners(data, learners=chosen, metric=metric, control=ctrl, posthoc_method=posthoc_method,
                            control_method=control_method, alpha=alpha, confidence=confidence, ci_method=ci_method,
                            bayes=bayes, rope=rope, nsamples=nsamples, random_state=random_state, progress=progress)


def export(meta=None, *, aslib=None, out=None, scenario_id: str | None = None, folds: int = 10,
           random_state: int = 0, force: bool = False) -> ExportResult:
    """Write meta-data as an ASlib scenario folder and/or a ``.parquet`` / ``.csv`` file.

    Both targets are checked before anything is loaded or written (an existing file is replaced
    only if it is meta-data algorank saved, or with ``force``; an input never).  The scenario is written into a
    temporary folder next to ``aslib`` and moved into place file by file, and the file is written
    atomically, so a failure leaves no half-written scenario or file behind; any OSError is one
    :class:`~algorank.metadata.errors.InputError` (a path that cannot be written) or
    :class:`~algorank.metadata.errors.AlgorankError` (a full disk).

    Parameters
    ----------
    meta : str, path, MetaDataset or list, optional
        What to export (default the embedded ``modern`` set).
    aslib : path, optional
        ASlib scenario folder to write.
    out : path, optional
        ``.parquet`` or ``.csv`` file to write.
    scenario_id, folds, random_state
        See :func:`algorank.metadata.aslib.write_aslib`.
    force : bool
        Let ``out`` replace an existing file that is not meta-data algorank saved.

    Returns
    -------
    ExportResult

    Examples
    --------
    >>> import os, tempfile
    >>> import algorank
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     res = algorank.export("uci", out=os.path.join(tmp, "uci.parquet"))
    >>> res.datasets, res.runs, len(res.written)
    (63, 6300, 1)
    """
    from algorank.metadata.export import export_meta

    if aslib is None and out is None:
        raise InputError("export needs aslib= (a folder) and/or out= (.parquet or .csv)", parameters=("aslib", "out"))
    data, written = export_meta(meta, aslib=aslib, out=out, scenario_id=scenario_id, folds=folds,
                                random_state=random_state, force=force)
    d = data.describe()
    return ExportResult(datasets=d.datasets, learners=d.learners, runs=d.runs, source=d.source, written=tuple(written))


def pull(*, out, suite: int | str | None = None, tasks: Sequence[int] | None = None, tag: str | None = None,
         flows: Sequence[int] | None = None, top_flows: int | None = None, measure: str = "predictive_accuracy",
         runtime_measure: str = "auto", cache_dir=None, offline: bool = False, server: str | None = None,
         page_size: int = 10000, retries: int = 4, backoff: float = 1.0, timeout: float = 120.0,
         progress: bool = False, force: bool = False):
    """Build a meta-dataset from prior runs on OpenML (cached, resumable, offline mode).

    Parameters
    ----------
    out : str or path
        Meta-data file to write (``.parquet`` or ``.csv``); the coverage report goes next to it
        (``<out>.coverage.json``).
    suite, tasks, tag
        Exactly one: a benchmark suite id or alias, task ids, or a task tag.
    flows, top_flows
        Exactly one: flow ids, or the N flows with runs on most of the tasks.
    measure, runtime_measure, cache_dir, offline, page_size, progress
        See :func:`algorank.metadata.openml_pull.pull_openml`.
    server : str, optional
        OpenML API URL (default www.openml.org).
    retries, backoff, timeout
        Attempts per request, first retry wait in seconds (doubles), seconds per request.
    force : bool
        Let ``out`` replace an existing file that is not meta-data algorank saved.

    Returns
    -------
    PullResult
        ``meta`` (a MetaDataset) and ``coverage`` (``to_text()``, ``to_dict()``).

    Examples
    --------
    Pull the runs of a few scikit-learn flows on the tasks of the OpenML-CC18 suite (needs a network):

    >>> import algorank
    >>> res = algorank.pull(out="cc18.parquet", suite=99, top_flows=8)  # doctest: +SKIP
    >>> print(res.coverage.to_text())  # doctest: +SKIP
    >>> algorank.rank("cc18.parquet")  # doctest: +SKIP
    """
    from algorank.metadata.checks import check_url
    from algorank.metadata.openml_http import DEFAULT_SERVER, RetryPolicy
    from algorank.metadata.openml_pull import pull_openml

    if server is not None:
        check_url(server, name="server")
    if isinstance(suite, str) and suite.isdigit():
        suite = int(suite)
    return pull_openml(suite=suite, tasks=tasks, tag=tag, flows=flows, top_flows=top_flows, measure=measure,
                       runtime_measure=runtime_measure, cache_dir=cache_dir, offline=offline, progress=progress,
                       server=server or DEFAULT_SERVER, page_size=page_size, out=out, force=force,
                       retry=RetryPolicy(attempts=retries, backoff=backoff, timeout=timeout))
