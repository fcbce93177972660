"""The public Python API: what a notebook user calls (re-exported by ``algorank``).

Each function takes what data scientists hold (a path, a DataFrame with a target column,
``X, y`` arrays, an embedded meta-data name or a :class:`MetaDataset`) and returns a result
object with ``to_frame()`` / ``to_dict()``.  The CLI (:mod:`algorank.cli`) calls the same
functions; ``--json`` prints ``to_dict()``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Sequence

from algorank.metadata.dataset import MetaDataset
from algorank.metadata.errors import InputError

logger = logging.getLogger(__name__)

__all__ = ["load_meta", "recommend", "evaluate", "benchmark", "tune_p", "multitest", "pull", "TuneResult",
           "time_model_arrays"]


def load_meta(source=None, *, default: str = "lcdb") -> MetaDataset:
    """Load meta-data: an embedded set's name (``"lcdb"``, ``"uci"``), a file, a MetaDataset, or a list of these.

    Parameters
    ----------
    source : str, path, MetaDataset or sequence, optional
        What to load; None gives ``default``.  A list joins disjoint sources.
    default : str
        Embedded set used when ``source`` is None.

    Raises
    ------
    InputError
        Unknown name, missing or invalid file, overlapping dataset ids in a list.
    """
    from algorank.metadata.snapshot import load_meta as _load

    if isinstance(source, MetaDataset):
        return source
    if isinstance(source, (list, tuple)) and any(isinstance(s, MetaDataset) for s in source):
        return MetaDataset.concat([load_meta(s, default=default) for s in source])
    return _load(source, default=default)


def recommend(data, target: str | None = None, *, y=None, strategy: str | None = None, budget: float | None = 60.0,
              meta="broad", cv: int = 5, top: int | None = None, random_state: int = 0, refit: bool = True,
              dry_run: bool = False, exclude_datasets: Sequence[str] = (), allow_modules: Sequence[str] = (),
              metric: str | None = None, **hooks):
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
        Strategy spec (default ``recommend``'s default, see :data:`DEFAULT_STRATEGY`).
    budget : float or None
        Wall-clock seconds from this call to the end of the live tests, loading included (None: no
        limit); the refit of the best learner (``refit=True``) comes on top.  For a budget that
        includes the refit use :class:`~algorank.AlgorankClassifier`.
    meta : str, path, MetaDataset or list
        Prior runs (default the embedded ``broad`` set).
    cv : int
        Folds of each live test (stratified, one repetition).
    top : int, optional
        Test at most this many learners.
    random_state : int
        Seed of the live CV and of randomised strategies.
    refit : bool
        Refit the best learner on all the data (``Recommendation.model``).
    dry_run : bool
        Only plan.
    exclude_datasets : sequence of str
        Prior datasets to leave out of the meta-data.
    allow_modules : sequence of str
        Packages besides scikit-learn whose classes learner ids may name.
    metric : str, optional
        Rank, test and choose by ``accuracy``, ``balanced_accuracy``, ``roc_auc`` (one-vs-rest),
        ``log_loss`` (lower is better) or ``f1_macro``, where the meta-data records it (an error
        names the metrics it records); default the one the meta-data ranks by (accuracy for
        ``broad``).  The leaderboard's score column is named after it.
    **hooks
        ``on_plan``, ``on_start``, ``on_observation`` progress callbacks, ``time_model``,
        ``time_overhead``, ``neighbours`` (see :func:`algorank.recommender.live.recommend.recommend`).

    Returns
    -------
    Recommendation
        ``leaderboard`` / ``to_frame()``, ``best``, ``model`` (a fitted Pipeline that predicts the
        labels in their own type: integers for an integer target, the categories' values for a
        categorical), ``notes``, ``to_dict()``.
    """
    from algorank.recommender.live.recommend import DEFAULT_STRATEGY
    from algorank.recommender.live.recommend import recommend as _recommend

    return _recommend(data, y=y, target=target, strategy=strategy or DEFAULT_STRATEGY,
                      meta=load_meta(meta, default="broad"), budget_seconds=budget, top=top, cv=cv,
                      random_state=random_state, refit=refit and not dry_run, dry_run=dry_run,
                      exclude_datasets=exclude_datasets, allow_modules=allow_modules, metric=metric, **hooks)


def evaluate(data, target: str | None = None, *, y=None, learners: Sequence[str] | None = None, scheme: str = "cv",
             cv: int = 5, repeats: int | None = None, stop: str = "fixed", threshold: float | None = None,
             timeout: float | None = None, n_jobs: int = 1, store=None, random_state: int = 0,
             allow_modules: Sequence[str] = (), progress: bool = False):
    """Evaluate learners on one dataset with repeated cross-validation (resumable with ``store``).

    Parameters
    ----------
    data, target, y
        As in :func:`recommend`.
    learners : sequence of str, optional
        Portfolio ids, short names or estimator class paths with JSON parameters (default: the
        20-learner portfolio).
    scheme, cv, repeats, stop, threshold, timeout, n_jobs, store, random_state
        See :class:`algorank.evaluation.cv.evaluator.Evaluator`.
    allow_modules : sequence of str
        Packages besides scikit-learn whose classes learner ids may name.
    progress : bool
        tqdm bar on stderr.

    Returns
    -------
    EvaluationResult
        ``summary`` / ``to_frame()``, ``runs``, ``to_meta()``, ``to_dict()``.
    """
    from algorank.evaluation.cv.datasets import as_dataset
    from algorank.evaluation.cv.evaluator import Evaluator
    from algorank.metadata.learners import learner_ids

    evaluator = Evaluator(scheme=scheme, cv=cv, repeats=repeats, stop=stop, threshold=threshold, timeout=timeout,
                          n_jobs=n_jobs, store=store, random_state=random_state, progress=progress,
                          allow_modules=allow_modules)
    return evaluator.evaluate(as_dataset(data, target, y=y), list(learners) if learners else learner_ids())


def time_model_arrays(meta: MetaDataset, *, time_model: str = "fit", cv: int = 5, time_overhead: float | None = None):
    """``(meta or arrays, TimeModel or None, time kind, words)`` for a benchmark under ``time_model``.

    ``"fit"``: the recorded fit times; ``"live"``: what a live ``cv``-fold test costs,
    ``cv x t + overhead`` (:func:`algorank.evaluation.meta.time_model.live_arrays`).
    """
    if time_model == "fit":
        return meta, None, "fit_time", "recorded fit times"
    if time_model != "live":
        raise InputError(f"time_model must be 'fit' or 'live'; got {time_model!r}")
    from algorank.evaluation.meta.time_model import live_arrays

    arrays, model, kind = live_arrays(meta, folds=cv, overhead=time_overhead)
    return arrays, model, kind, "live tests, " + model.describe(kind)


def _meta_name(meta) -> str | None:
    """The embedded-set name ``meta`` was given as (``"lcdb"``, ``["uci"]``), for finding its frozen split."""
    if isinstance(meta, (list, tuple)) and len(meta) == 1:
        meta = meta[0]
    if meta is None:
        return "lcdb"
    return meta.strip().lower() if isinstance(meta, str) else None


def _heldout_ids(heldout, meta, meta_name):
    from algorank.metadata.splits import resolve_heldout, split_meta

    return split_meta(meta, resolve_heldout(heldout, meta_name=meta_name))


def _as_list(x) -> list:
    if x is None:
        return []
    return [x] if isinstance(x, (str, MetaDataset)) or not isinstance(x, (list, tuple)) else list(x)


def benchmark(strategies: Sequence, meta="lcdb", *, test_meta=None, heldout=None,
              exclude_datasets: Sequence[str] = (), reference=None, eps: float = 1.0,
              budgets: Sequence[float] = (1.0, 10.0, 60.0), tmin: float | None = None, tmax: float | None = None,
              time_model: str = "fit", cv: int = 5, time_overhead: float | None = None, random_state: int = 0,
              progress: bool = False, axis: str = "time", max_tests: int | None = None):
    """Loss-time benchmark of ordering strategies: leave-one-dataset-out, or train on one set and test on another.

    Parameters
    ----------
    strategies : sequence of str or Strategy
        Specs (``"ar:p=1/16"``, ``"ar:p=0"``, ``"oracle"``, ...) or strategy objects.
    meta : str, path, MetaDataset or list
        Prior runs the strategies are fitted on (default the embedded LCDB snapshot).
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

    Returns
    -------
    BenchmarkSuite
        ``results`` per strategy, ``comparison`` (Wilcoxon / Friedman + Holm), ``metrics``
        (user-facing metrics with the oracle bounds and tests against the reference),
        ``to_dict()``, ``per_dataset_table()`` / ``to_frame()``.
    """
    from algorank.evaluation.meta.benchmark import benchmark_strategies, join_test_meta
    from algorank.evaluation.meta.time_model import meta_time_kind
    from algorank.recommender.registry import parse_strategy

    if isinstance(strategies, str):
        strategies = [strategies]
    objs = [parse_strategy(s, random_state=random_state) if isinstance(s, str) else s for s in strategies]
    names = [str(getattr(s, "name", type(s).__name__)) for s in objs]
    ref_name = None
    if reference is not None:
        ref_name = reference.strip() if isinstance(reference, str) else str(getattr(reference, "name", reference))
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
    return benchmark_strategies(objs, full, tmin=tmin, tmax=tmax, time_kind=kind, time_model=model,
                                progress=progress, test_datasets=test_datasets, eps=eps, budgets=budgets,
                                reference=ref_name, time_words=words, setting=setting, axis=axis,
                                max_tests=max_tests)


@dataclass(frozen=True)
class TuneResult:
    """What :func:`tune_p` returns: the P sweep, optionally the nested estimate, and the user-facing metrics.

    Attributes
    ----------
    sweep : PSweepResult
        Leave-one-dataset-out MIL of each P (chosen on all datasets: in-sample).
    nested : NestedTuneResult or None
        Honest estimate with P tuned without the scored dataset.
    time_model : str
        The test-time model in words.
    metrics : MetricsReport or None
        Time to eps, loss at budgets and MIL to budgets of every P (and of the nested
        estimate), against the reference P, with the oracle bounds.
    excluded : tuple of str
        Datasets left out of all tuning (the frozen held-out split, ``exclude_datasets``).
    strategy : str
        The family whose P was swept (``ar``, ``at``, ``lt``, ``ei``).
    """

    sweep: object
    nested: object = None
    time_model: str = "recorded fit times"
    extra: dict = field(default_factory=dict, repr=False)
    metrics: object = None
    excluded: tuple = ()
    strategy: str = "ar"

    @property
    def best_p(self) -> float:
        return self.sweep.best_p

    def to_frame(self):
        """One row per P: p, mean_mil, median_mil, mean_spearman (and the user-facing metric totals)."""
        table = self.sweep.table()
        if self.metrics is not None:
            totals = self.metrics.summary_table().drop(columns=["strategy"]).iloc[: len(table)]
            table = table.join(totals.drop(columns=["mil_mean"]).reset_index(drop=True))
        return table

    def to_dict(self) -> dict:
        from algorank.recommender.average_ranking import format_p

        sweep = self.sweep
        d = {"tmin": sweep.tmin, "tmax": sweep.tmax, "n_datasets": len(sweep.results[0].datasets),
             "results": [{"p": float(r.p), "p_label": format_p(r.p), "mean_mil": float(r.mean_mil),
                          "median_mil": float(r.median_mil), "mean_spearman": float(r.mean_spearman)}
                         for r in sweep.table().itertuples()],
             "best_p": sweep.best_p, "strategy": self.strategy, "time_model": self.time_model,
             "excluded_datasets": list(self.excluded)}
        if self.nested is not None:
            d["nested"] = {"mean_mil": self.nested.mean_mil, "median_mil": self.nested.median_mil,
                           "p_counts": {format_p(p): c for p, c in self.nested.p_counts().items()}}
        if self.metrics is not None:
            d["user_metrics"] = self.metrics.to_dict()
        return d


def tune_p(meta="lcdb", *, strategy: str = "ar", grid: Sequence[float] | None = None, nested: bool = False,
           tmin: float | None = None, tmax: float | None = None, time_model: str = "fit", cv: int = 5,
           time_overhead: float | None = None, exclude_heldout=None, exclude_datasets: Sequence[str] = (),
           reference=None, eps: float = 1.0, budgets: Sequence[float] = (1.0, 10.0, 60.0),
           progress: bool = False) -> TuneResult:
    """Sweep a strategy's cost exponent P by leave-one-dataset-out MIL (``nested=True`` adds the honest estimate).

    Parameters
    ----------
    meta : str, path, MetaDataset or list
        Prior runs (default the embedded LCDB snapshot).
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
    eps, budgets
        As in :func:`benchmark`.

    Returns
    -------
    TuneResult
    """
    from algorank.evaluation.meta.benchmark import PAPER_P_GRID, p_sweep, tune_p_nested
    from algorank.evaluation.meta.environments import MetaArrays, meta_arrays
    from algorank.evaluation.meta.user_metrics import metrics_report
    from algorank.recommender.average_ranking import format_p
    from algorank.recommender.spec import parse_p

    family, make_strategy, upper, default_grid = _p_family(strategy)
    values = (PAPER_P_GRID if family != "ei" else default_grid) if grid is None else [parse_p(p, upper=upper)
                                                                                      for p in grid]
    fast = bool(getattr(make_strategy(values[0]), "fast_loo", False))
    if nested and not fast:
        raise InputError(f"nested tuning needs a strategy with a fast leave-one-out path (ar, at, lt); "
                         f"{family!r} refits per dataset: tune it with exclude_heldout and score the choice "
                         "with benchmark --heldout")
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
                        fast=False, time_model=model, time_kind=kind, progress=progress)
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
    report = metrics_report(results, scored, eps=eps, budgets=budgets, reference=ref, time_axis=words)
    return TuneResult(sweep=sweep, nested=honest, time_model=words, metrics=report, excluded=tuple(excluded),
                      strategy=family)


#: Strategy families with a cost exponent P that :func:`tune_p` can sweep, and P's upper bound.
_P_FAMILIES = {"ar": 1.0, "at": 1.0, "lt": 1.0, "ei": 2.0}
_EI_P_GRID = (2.0, 1.5, 1.0, 0.5, 0.25, 0.0)


def _p_family(spec: str):
    """``(family, make_strategy(p), upper bound of P, default grid)`` of a ``tune_p`` strategy family."""
    from algorank.evaluation.meta.labels import format_p
    from algorank.recommender.registry import make_ar, parse_strategy

    text = str(spec).strip()
    family, _, rest = text.partition(":")
    family = family.strip().lower()
    if family not in _P_FAMILIES:
        raise InputError(f"tune-p sweeps the P of {', '.join(_P_FAMILIES)}; got strategy {spec!r}")
    fixed = [part.strip() for part in rest.split(",") if part.strip()]
    if any(part.split("=", 1)[0].strip().lower() == "p" for part in fixed):
        raise InputError(f"P is what tune-p sweeps: leave p= out of the strategy {spec!r}")
    if family == "ar" and not fixed:
        return family, make_ar, _P_FAMILIES[family], None

    def make(p):
        return parse_strategy(f"{family}:" + ",".join(fixed + [f"p={format_p(p)}"]))

    make(0.0)  # a bad fixed knob is an error now, not after the first sweep
    return family, make, _P_FAMILIES[family], _EI_P_GRID


def multitest(meta="lcdb", *, learners: Sequence[str] | None = None, **options):
    """Multi2Test: a cost-conscious order of learners with pairwise tests (Ulas et al. 2012).

    Parameters
    ----------
    meta : str, path, MetaDataset or list
        Prior runs (default the embedded LCDB snapshot).
    learners : sequence of str, optional
        Learners to compare (default all).
    **options
        ``cost``, ``pairwise``, ``posthoc_method``, ``alpha``, ... of
        :func:`algorank.recommender.multitest.multi2test`.

    Returns
    -------
    Multi2TestResult
    """
    from algorank.recommender.multitest import multi2test

    return multi2test(load_meta(meta), learners=list(learners) if learners else None, **options)


def pull(*, out=None, **options):
    """Build a meta-dataset from prior runs on OpenML (cached, resumable, offline mode).

    Parameters
    ----------
    out : str or path, optional
        Meta-data file to write (``.parquet`` or ``.csv``); the coverage report goes next to it
        (``<out>.coverage.json``).
    **options
        ``suite``, ``tasks``, ``tag``, ``flows``, ``top_flows``, ``measure``, ``cache_dir``,
        ``offline``, ``server``, ... of :func:`algorank.metadata.openml_pull.pull_openml`.

    Returns
    -------
    PullResult
        ``meta`` (a MetaDataset) and ``coverage``.
    """
    from algorank.metadata.openml_pull import pull_openml

    return pull_openml(out=out, **options)
