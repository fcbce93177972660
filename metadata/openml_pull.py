"""Build a :class:`~algorank.metadata.dataset.MetaDataset` from prior runs on OpenML.

:func:`pull_openml` goes through the real ``openml`` package
(``openml.study.get_suite``, ``openml.tasks.list_tasks``,
``openml.evaluations.list_evaluations``), page by page, caching each page as it
arrives (:mod:`algorank.metadata.openml_cache`) and retrying transient failures
(:mod:`algorank.metadata.openml_http`).  A rerun after an interruption fetches only the
pages it lacks; ``offline=True`` reads the cache only and names what is missing.

What is fetched, in order
-------------------------
1. the task ids (a suite, explicit ids, or a tag), then the task listing
   (``task/list``, supervised classification only): task -> dataset and the
   dataset qualities OpenML lists with it;
2. the run-level evaluations of ``measure`` (``per_fold=False``) of the flows
   (all flows with ``top_flows``: the N flows with runs on most tasks, ties by
   number of runs, then lower flow id);
3. the per-fold evaluations of ``measure`` (``per_fold=True``) for those flows;
4. the per-fold runtime measures (``per_fold=True``), see below.

Rules
-----
* Several runs of one (task, learner): the most recent run, i.e. the highest run
  id, wins; the others are counted in the coverage report (``several_runs``).
  Flows that map to the same learner id pool their runs under the same rule.
* A run with per-fold values gives one row per (repeat, fold) of its task's
  splits; a run with only a run-level value gives one row with
  ``repeat = fold = 0``.
* Runtimes (milliseconds on OpenML, seconds here).  ``runtime_measure="auto"``
  uses, per run, the first measure it has of ``usercpu_time_millis_training``,
  ``wall_clock_time_millis_training``, ``usercpu_time_millis``,
  ``wall_clock_time_millis``; ``*_training`` fills ``fit_time`` and the matching
  ``*_testing`` fills ``predict_time``; the untyped measures (training plus
  testing) fill ``fit_time`` and leave ``predict_time`` NaN.  Measures are
  fetched lazily: the next one only when some selected run lacks the previous.
  A run without any runtime keeps NaN times (and is reported).  For a run-level
  row, the time is the mean of the run's per-fold times.
* Datasets: id = OpenML dataset id (string), source ``openml:<did>``, name from
  the task listing; ``NumberOfInstances`` -> ``n_instances``, ``NumberOfFeatures``
  (OpenML counts the target) -> ``n_features``, ``NumberOfClasses`` ->
  ``n_classes``, ``MajorityClassPercentage / 100`` (else ``MajorityClassSize /
  NumberOfInstances``) -> ``majority_fraction``; every other listed quality is
  kept as a meta-feature column, plus ``task_id``.
* Two tasks on one dataset would break the pairing of (dataset, repeat, fold):
  the task with most learners covered is kept (ties: lower task id), the others
  are dropped and reported.
* Learner ids: :func:`algorank.metadata.openml_flows.flow_to_learner` for scikit-learn
  flows, else the full flow name.
"""

from __future__ import annotations

import logging
import os
import random
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np
import pandas as pd

from .dataset import MetaDataset
from .errors import InputError
from .checks import check_url
from .io import atomic_write_text, check_out_file, json_dumps, output_folder
from .openml_cache import PageCache, default_cache_dir, request_key
from .openml_flows import flow_to_learner
from .openml_http import DEFAULT_SERVER, OpenMLNoResult, RetryPolicy, call_with_retries, openml_config
from .progress import progress_bar

__all__ = [
    "RUNTIME_MEASURES",
    "ACCURACY_MEASURES",
    "PullCoverage",
    "PullResult",
    "OfflineCacheMiss",
    "pull_openml",
]

logger = logging.getLogger(__name__)

#: Runtime measures in the order ``runtime_measure="auto"`` tries them.
RUNTIME_MEASURES = (
    "usercpu_time_millis_training",
    "wall_clock_time_millis_training",
    "usercpu_time_millis",
    "wall_clock_time_millis",
)
_ALL_RUNTIME = RUNTIME_MEASURES + ("usercpu_time_millis_testing", "wall_clock_time_millis_testing")
#: Measures that may fill the ``accuracy`` column (all lie in [0, 1]).
ACCURACY_MEASURES = ("predictive_accuracy", "area_under_roc_curve", "f_measure", "precision", "recall")
_TASK_CHUNK = 100
_FLOW_CHUNK = 50
_MAX_LISTED = 8


class OfflineCacheMiss(InputError):
    """``offline=True`` and the cache lacks pages; ``missing`` lists every one."""

    def __init__(self, message: str, missing: Sequence[str]) -> None:
        super().__init__(message, parameters=("offline",))
        self.missing = tuple(missing)


@dataclass(frozen=True)
class PullCoverage:
    """What one pull found, per (task, flow), and what was missing and why.

    Attributes
    ----------
    selection : str
        The task selection (``suite 99``, ``tasks 3,31``, ``tag X``).
    measure, runtime_measure : str
        The accuracy measure and the runtime measure setting.
    tasks, flows : tuple of int
        Tasks used and flows selected.
    datasets, learners, cells : int
        Datasets, learners and (dataset, learner) cells with a score in the output.
    with_runtime, with_folds : int
        Cells whose run has a runtime / per-fold values.
    runs : int
        Rows of the runs table.
    pairs, pairs_with_accuracy, pairs_with_runtime, pairs_with_folds : int
        The task x flow grid and how much of it is covered.
    runtime_measures_used : dict
        Runtime measure -> number of cells whose time comes from it.
    several_runs : int
        (task, learner) pairs that had more than one run (the most recent was kept).
    learner_of_flow : dict
        Flow id -> learner id (a runnable portfolio id or the flow name).
    missing : tuple of dict
        ``{"task", "flow", "what", "reason"}`` for every gap (``flow`` is None for task-level gaps).
    pages : dict
        Pages ``fetched`` from OpenML, read from the ``cache``, and ``corrupt`` pages refetched.
    output : str
        The written meta-data file ('' when not saved).
    """

    selection: str
    measure: str
    runtime_measure: str
    tasks: tuple
    flows: tuple
    datasets: int
    learners: int
    cells: int
    with_runtime: int
    with_folds: int
    runs: int
    pairs: int
    pairs_with_accuracy: int
    pairs_with_runtime: int
    pairs_with_folds: int
    runtime_measures_used: dict = field(default_factory=dict)
    several_runs: int = 0
    learner_of_flow: dict = field(default_factory=dict)
    missing: tuple = ()
    pages: dict = field(default_factory=dict)
    output: str = ""

    def to_dict(self) -> dict:
        """JSON-serialisable dict (lists instead of tuples)."""
        d = asdict(self)
        d["tasks"], d["flows"], d["missing"] = list(self.tasks), list(self.flows), [dict(m) for m in self.missing]
        d["learner_of_flow"] = {str(k): v for k, v in self.learner_of_flow.items()}
        return d


@dataclass(frozen=True)
class PullResult:
    """A pulled meta-dataset and its coverage report."""

    meta: MetaDataset
    coverage: PullCoverage


# ---------------------------------------------------------------------------------------------- fetching
class _Fetcher:
    """Pages through openml listing calls with the page cache and the retry policy."""

    def __init__(self, openml_mod, *, cache: PageCache, offline: bool, server: str, policy: RetryPolicy,
                 page_size: int, progress) -> None:
        self.openml = openml_mod
        self.cache = cache
        self.offline = offline
        self.server = server
        self.policy = policy
        self.page_size = page_size
        self.rng = random.Random(policy.random_state)
        self.missing: list[str] = []
        self.fetched = 0
        self.cached = 0
        self.progress = progress

    def one(self, request: dict, call: Callable[[], list]) -> list | None:
        """A single-page request (rows list), ``None`` when offline and not cached."""
        request = {"server": self.server, **request}
        key = request_key(request)
        page = self.cache.get(key)
        if page is not None:
            self.cached += 1
            return page.rows
        if self.offline:
            self.missing.append(_describe(request))
            return None
        rows = call_with_retries(call, what=_describe(request), server=self.server, policy=self.policy, rng=self.rng)
        self.cache.put(key, rows, last=True, request=request)
        self.fetched += 1
        self._tick()
        return rows

    def listing(self, request: dict, call: Callable[[int, int], list]) -> list:
        """All rows of a paged listing; ``call(limit, offset)`` returns one page of rows."""
        rows: list = []
        offset = 0
        while True:
            req = {"server": self.server, **request, "limit": self.page_size, "offset": offset}
            key = request_key(req)
            page = self.cache.get(key)
            if page is not None:
                self.cached += 1
                page_rows, last = page.rows, page.last
            elif self.offline:
                self.missing.append(_describe(req) + (" and any later pages" if offset else ""))
                return rows
            else:
                try:
                    page_rows = call_with_retries(
                        lambda: call(self.page_size, offset), what=_describe(req), server=self.server,
                        policy=self.policy, rng=self.rng,
                    )
                except OpenMLNoResult:
                    page_rows = []
                last = len(page_rows) < self.page_size
                self.cache.put(key, page_rows, last=last, request=req)
                self.fetched += 1
                self._tick()
            rows.extend(page_rows)
            if last:
                return rows
            offset += self.page_size

    def _tick(self) -> None:
        self.progress.update(1)

    def check_offline(self, stage: str) -> None:
        if self.missing:
            shown = "; ".join(self.missing[:_MAX_LISTED])
            more = f"; and {len(self.missing) - _MAX_LISTED} more" if len(self.missing) > _MAX_LISTED else ""
            raise OfflineCacheMiss(
                f"offline: the cache at {self.cache.root} lacks {len(self.missing)} page(s) needed for {stage}: "
                f"{shown}{more}; pull again without offline=True to fetch them",
                self.missing,
            )


def _describe(request: dict) -> str:
    call = request.get("call", "?")
    parts = [call]
    for k, v in request.items():
        if k in ("server", "call", "limit", "offset") or v is None:
            continue
        if isinstance(v, (list, tuple)):
            v = ",".join(str(x) for x in v)
        parts.append(f"{k}/{v}")
    text = "/".join(parts)
    if "offset" in request:
        text += f" (page at offset {request['offset']}, size {request['limit']})"
    return text


def _chunks(values: Sequence[int], size: int) -> list[list[int]]:
    return [list(values[i : i + size]) for i in range(0, len(values), size)] or [[]]


# ---------------------------------------------------------------------------------------------- openml calls
def _suite_rows(openml_mod, suite_id) -> list:
    try:
        suite = openml_mod.study.get_suite(suite_id)
    except (AssertionError, ValueError) as exc:  # openml checks that the study is a task collection
        if isinstance(exc, ValueError) and "entity type" not in str(exc):
            raise
        raise InputError(f"suite {suite_id!r} is an OpenML run study, not a benchmark suite of tasks") from exc
    return [{"tasks": [int(t) for t in (suite.tasks or [])], "name": str(suite.name)}]


def _task_rows(openml_mod, *, tag: str | None, task_ids: list[int] | None, limit: int, offset: int) -> list:
    from openml.tasks import TaskType

    kwargs: dict[str, Any] = {}
    if task_ids:
        kwargs["task_id"] = task_ids
    frame = openml_mod.tasks.list_tasks(task_type=TaskType.SUPERVISED_CLASSIFICATION, tag=tag, size=limit,
                                        offset=offset, output_format="dataframe", **kwargs)
    rows = []
    for rec in frame.to_dict(orient="records"):
        row = {"tid": int(rec["tid"]), "did": int(rec["did"]), "name": str(rec.get("name", "")),
               "estimation_procedure": str(rec.get("estimation_procedure", "") or "")}
        for k, v in rec.items():
            if k[:1].isupper() and isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
                row[k] = float(v)
        rows.append(row)
    return rows


def _evaluation_rows(openml_mod, *, function: str, tasks: list[int], flows: list[int] | None, per_fold: bool,
                     limit: int, offset: int) -> list:
    frame = openml_mod.evaluations.list_evaluations(
        function=function, tasks=tasks, flows=flows, size=limit, offset=offset, per_fold=per_fold,
        sort_order="asc", output_format="dataframe",
    )
    rows = []
    for rec in frame.to_dict(orient="records"):
        value = rec.get("value")
        values = rec.get("values")
        rows.append({
            "run_id": int(rec["run_id"]),
            "task_id": int(rec["task_id"]),
            "flow_id": int(rec["flow_id"]),
            "flow_name": str(rec["flow_name"]),
            "data_id": int(rec["data_id"]) if rec.get("data_id") is not None else None,
            "value": None if value is None or (isinstance(value, float) and np.isnan(value)) else float(value),
            "values": values if isinstance(values, list) else None,
        })
    return rows


# ---------------------------------------------------------------------------------------------- assembling
def _fold_grid(values) -> dict[tuple[int, int], float] | None:
    """``[[v, ...], ...]`` (repeats x folds) -> {(repeat, fold): value}; None if not that shape."""
    if not isinstance(values, list) or not values:
        return None
    grid = {}
    for r, rep in enumerate(values):
        if not isinstance(rep, list):
            return None
        for f, v in enumerate(rep):
            if v is None:
                continue
            grid[(r, f)] = float(v)
    return grid or None


def _validate_args(*, suite, tasks, tag, flows, top_flows, measure, runtime_measure, page_size, out,
                   server=DEFAULT_SERVER, force: bool = False) -> None:
    check_url(server)
    given = [name for name, v in (("suite", suite), ("tasks", tasks), ("tag", tag)) if v not in (None, [], ())]
    if len(given) != 1:
        raise InputError(f"give exactly one of suite, tasks or tag; got {', '.join(given) or 'none'}")
    if (flows in (None, [], ())) == (top_flows is None):
        raise InputError("give exactly one of flows (ids) or top_flows (N)")
    if top_flows is not None and (not isinstance(top_flows, int) or top_flows < 1):
        raise InputError(f"top_flows must be an integer >= 1; got {top_flows!r}")
    for name, ids in (("tasks", tasks), ("flows", flows)):
        for i in ids or ():
            if not isinstance(i, (int, np.integer)) or i < 1:
                raise InputError(f"{name} must be positive integer ids; got {i!r}")
    if measure not in ACCURACY_MEASURES:
        raise InputError(f"measure must be one of {', '.join(ACCURACY_MEASURES)}; got {measure!r}")
    if runtime_measure not in ("auto", "none") + RUNTIME_MEASURES:
        raise InputError(f"runtime_measure must be auto, none or one of {', '.join(RUNTIME_MEASURES)}; "
                         f"got {runtime_measure!r}")
    if not isinstance(page_size, int) or page_size < 1:
        raise InputError(f"page_size must be an integer >= 1; got {page_size!r}")
    if out is not None and Path(out).suffix.lower() not in (".parquet", ".csv"):
        raise InputError(f"out must end in .parquet or .csv; got {str(out)!r}")
    if out is not None:
        from .dataset import check_metadata_target

        check_metadata_target(out, force=force)


def pull_openml(
    *,
    suite: int | str | None = None,
    tasks: Sequence[int] | None = None,
    tag: str | None = None,
    flows: Sequence[int] | None = None,
    top_flows: int | None = None,
    measure: str = "predictive_accuracy",
    runtime_measure: str = "auto",
    cache_dir: str | os.PathLike | None = None,
    offline: bool = False,
    server: str = DEFAULT_SERVER,
    page_size: int = 10000,
    retry: RetryPolicy | None = None,
    out: str | os.PathLike | None = None,
    progress: bool = False,
    force: bool = False,
) -> PullResult:
    """Pull prior runs from OpenML into a MetaDataset (see the module docstring for every rule).

    Parameters
    ----------
    suite : int or str, optional
        A benchmark suite id or alias (e.g. 99, OpenML-CC18).
    tasks : sequence of int, optional
        Task ids.
    tag : str, optional
        A task tag.  Exactly one of ``suite``, ``tasks``, ``tag``.
    flows : sequence of int, optional
        Flow ids.
    top_flows : int, optional
        Use the N flows with runs on most of the tasks.  Exactly one of ``flows``, ``top_flows``.
    measure : str
        Evaluation measure that fills the ``accuracy`` column (:data:`ACCURACY_MEASURES`).
    runtime_measure : str
        ``"auto"`` (the fallback chain), ``"none"`` or one of :data:`RUNTIME_MEASURES`.
    cache_dir : path-like, optional
        Page cache (default :func:`algorank.metadata.openml_cache.default_cache_dir`).
    offline : bool
        Read the cache only; raise :class:`OfflineCacheMiss` naming every missing page.
    server : str
        OpenML API base URL.
    page_size : int
        Rows per listing page (part of the cache key).
    retry : RetryPolicy, optional
        Attempts, backoff, jitter and per-request timeout.
    out : path-like, optional
        Save the meta-data here (``.parquet``/``.csv``) and the coverage report to
        ``<out>.coverage.json``, both atomically.  An existing file there is replaced only
        when it is meta-data algorank saved, or with ``force``.
    progress : bool
        Show a tqdm bar of fetched pages on stderr.
    force : bool
        Let ``out`` replace an existing file that is not meta-data algorank saved.

    Returns
    -------
    PullResult

    Raises
    ------
    InputError
        Bad arguments, an unreachable server (:class:`~algorank.metadata.openml_http.OpenMLUnreachable`),
        missing cache pages offline, or a pull that yields no usable run.
    algorank.metadata.openml_http.OpenMLRequestError
        OpenML rejected a request or kept failing.
    """
    tasks = [int(t) for t in tasks] if tasks else None
    flows = [int(f) for f in flows] if flows else None
    _validate_args(suite=suite, tasks=tasks, tag=tag, flows=flows, top_flows=top_flows, measure=measure,
                   runtime_measure=runtime_measure, page_size=page_size, out=out, server=server, force=force)
    retry = retry or RetryPolicy()
    cache = PageCache(cache_dir if cache_dir is not None else default_cache_dir())
    bar = progress_bar(desc="openml pages", unit="page", enabled=progress)
    try:
        with openml_config(server, cache.root) as openml_mod:
            fx = _Fetcher(openml_mod, cache=cache, offline=offline, server=server, policy=retry,
                          page_size=page_size, progress=bar)
            result = _pull(fx, openml_mod, suite=suite, tasks=tasks, tag=tag, flows=flows, top_flows=top_flows,
                           measure=measure, runtime_measure=runtime_measure)
    finally:
        bar.close()
    if out is not None:
        out = Path(out)
        coverage = _replace(result.coverage, output=str(out))
        with output_folder(out.parent if str(out.parent) else Path(".")):
            result.meta.save(out)
            atomic_write_text(out.with_name(out.name + ".coverage.json"), json_dumps(coverage.to_dict()) + "\n")
        result = PullResult(meta=result.meta, coverage=coverage)
    return result


def _replace(cov: PullCoverage, **changes) -> PullCoverage:
    from dataclasses import replace

    return replace(cov, **changes)


def _pull(fx: _Fetcher, openml_mod, *, suite, tasks, tag, flows, top_flows, measure, runtime_measure) -> PullResult:
    """The pull in its stages (module docstring, "What is fetched"); gaps collect in ``missing``."""
    missing: list[dict] = []
    selection, task_ids = _select_tasks(fx, openml_mod, suite=suite, tasks=tasks, tag=tag)
    task_info, usable_tasks = _list_tasks(fx, openml_mod, task_ids, tag=tag, selection=selection, missing=missing)

    def evals(function: str, per_fold: bool, flow_ids: list[int] | None) -> list:
        return _evaluations(fx, openml_mod, usable_tasks, function=function, per_fold=per_fold, flow_ids=flow_ids)

    agg_rows = evals(measure, False, flows)
    fx.check_offline(f"the {measure} evaluations")
    if top_flows is not None:
        flows = _top_flows(agg_rows, top_flows)
        if not flows:
            raise InputError(f"no flow has {measure} evaluations on {selection}")
        agg_rows = [r for r in agg_rows if r["flow_id"] in set(flows)]
    fold_rows = evals(measure, True, flows)
    fx.check_offline(f"the per-fold {measure} evaluations")

    chosen = _choose_runs(agg_rows, fold_rows, flows, task_info)
    chain, time_of = _runtimes(fx, evals, flows, set(chosen.run.values()), runtime_measure)
    kept_tasks = _one_task_per_dataset(chosen.run, usable_tasks, task_info, missing)
    runs, cell_runtime_measure, cell_folds = _runs_table(chosen, kept_tasks, task_info, time_of)

    bad = runs["accuracy"].isna() | (runs["accuracy"] < 0) | (runs["accuracy"] > 1)
    for rid in sorted(set(runs.loc[bad, "openml_run"])):
        missing.append({"task": None, "flow": int(chosen.run_flow[rid]), "what": "accuracy",
                        "reason": f"run {rid} has {measure} values outside [0, 1]; dropped"})
    runs = runs[~bad]
    if runs.empty:
        fx_pages = {"fetched": fx.fetched, "cache": fx.cached, "corrupt": len(fx.cache.corrupt)}
        raise InputError(f"OpenML has no {measure} evaluations for flows {','.join(map(str, flows))} on {selection} "
                         f"(pages: {fx_pages})")
    pairs = _pair_coverage(chosen, usable_tasks, flows, kept_tasks, cell_runtime_measure, cell_folds, chain,
                           missing)

    datasets = _datasets_table(task_info, kept_tasks)
    import openml

    source = (f"openml {fx.server} ({selection}; flows {','.join(map(str, flows))}; measure {measure}; "
              f"runtime {runtime_measure}; openml-python {openml.__version__})")
    meta = MetaDataset(runs, datasets[datasets["dataset"].isin(runs["dataset"])], source=source)
    used = defaultdict(int)
    for m in cell_runtime_measure.values():
        used[m] += 1
    cells = {(r.dataset, r.learner) for r in runs.itertuples()}
    task_for = {str(task_info[t]["did"]): t for t in kept_tasks}
    coverage = PullCoverage(
        selection=selection,
        measure=measure,
        runtime_measure=runtime_measure,
        tasks=tuple(usable_tasks),
        flows=tuple(flows),
        datasets=len(meta.dataset_ids),
        learners=len(meta.learner_ids),
        cells=len(cells),
        with_runtime=sum(1 for d, l in cells if (task_for[d], l) in cell_runtime_measure),
        with_folds=sum(1 for d, l in cells if (task_for[d], l) in cell_folds),
        runs=len(meta.runs),
        pairs=len(usable_tasks) * len(flows),
        pairs_with_accuracy=pairs[0],
        pairs_with_runtime=pairs[1],
        pairs_with_folds=pairs[2],
        runtime_measures_used=dict(sorted(used.items())),
        several_runs=chosen.several,
        learner_of_flow={int(f): chosen.learner_of[f] for f in flows},
        missing=tuple(missing),
        pages={"fetched": fx.fetched, "cache": fx.cached, "corrupt": len(fx.cache.corrupt)},
    )
    logger.info("pulled %d runs: %d datasets x %d learners (%d cells)", len(meta.runs), coverage.datasets,
                coverage.learners, coverage.cells)
    return PullResult(meta=meta, coverage=coverage)


def _select_tasks(fx: _Fetcher, openml_mod, *, suite, tasks, tag) -> tuple[str, list[int] | None]:
    """1. The task ids of a suite or the explicit ids (None for a tag: the listing finds them)."""
    if suite is not None:
        try:
            rows = fx.one({"call": "study", "id": str(suite)}, lambda: _suite_rows(openml_mod, suite))
        except OpenMLNoResult as exc:
            raise InputError(f"suite {suite!r} not found on OpenML ({exc})") from exc
        fx.check_offline("the suite")
        task_ids = sorted(rows[0]["tasks"])
        if not task_ids:
            raise InputError(f"suite {suite!r} has no tasks")
        return f"suite {suite}", task_ids
    if tasks is not None:
        return "tasks " + ",".join(str(t) for t in tasks), sorted(set(tasks))
    return f"tag {tag}", None


def _list_tasks(fx: _Fetcher, openml_mod, task_ids: list[int] | None, *, tag, selection: str,
                missing: list) -> tuple[dict[int, dict], list[int]]:
    """1. The task listing (task -> dataset, qualities) -> (task info, the usable task ids)."""
    task_info: dict[int, dict] = {}
    if task_ids is None:
        for row in fx.listing({"call": "task/list", "type": 1, "tag": tag},
                              lambda limit, offset: _task_rows(openml_mod, tag=tag, task_ids=None, limit=limit,
                                                               offset=offset)):
            task_info[row["tid"]] = row
    else:
        for chunk in _chunks(task_ids, _TASK_CHUNK):
            for row in fx.listing(
                {"call": "task/list", "type": 1, "task_id": chunk},
                lambda limit, offset, chunk=chunk: _task_rows(openml_mod, tag=None, task_ids=chunk, limit=limit,
                                                              offset=offset),
            ):
                task_info[row["tid"]] = row
    fx.check_offline("the task listing")
    if task_ids is None:
        task_ids = sorted(task_info)
        if not task_ids:
            raise InputError(f"no supervised classification task carries the tag {tag!r} on OpenML")
    for t in task_ids:
        if t not in task_info:
            missing.append({"task": t, "flow": None, "what": "task",
                            "reason": "not listed as a supervised classification task on OpenML"})
    usable = [t for t in task_ids if t in task_info]
    if not usable:
        raise InputError(f"none of the tasks ({selection}) is a supervised classification task on OpenML")
    return task_info, usable


def _evaluations(fx: _Fetcher, openml_mod, tasks: list[int], *, function: str, per_fold: bool,
                 flow_ids: list[int] | None) -> list:
    """2.-4. The evaluations of ``function`` on ``tasks`` (all flows when ``flow_ids`` is None), in chunks."""
    out: list = []
    for tchunk in _chunks(tasks, _TASK_CHUNK):
        for fchunk in (_chunks(flow_ids, _FLOW_CHUNK) if flow_ids is not None else [None]):
            req = {"call": "evaluation/list", "function": function, "per_fold": per_fold,
                   "task": tchunk, "flow": fchunk}
            out.extend(fx.listing(req, lambda limit, offset, t=tchunk, f=fchunk: _evaluation_rows(
                openml_mod, function=function, tasks=t, flows=f, per_fold=per_fold, limit=limit, offset=offset)))
    return out


def _top_flows(agg_rows: list, n: int) -> list[int]:
    """The ``n`` flows with runs on most tasks (ties: more runs, then the lower id), sorted by id."""
    tasks_of, runs_of = defaultdict(set), defaultdict(int)
    for r in agg_rows:
        tasks_of[r["flow_id"]].add(r["task_id"])
        runs_of[r["flow_id"]] += 1
    ranked = sorted(tasks_of, key=lambda f: (-len(tasks_of[f]), -runs_of[f], f))
    return sorted(ranked[:n])


@dataclass(frozen=True)
class _ChosenRuns:
    """One run per (task, learner) and what it came from."""

    run: dict              # (task, learner) -> run id (the highest)
    several: int           # (task, learner) pairs that had more than one run
    run_flow: dict         # run id -> flow id
    learner_of: dict       # flow id -> learner id
    flow_name: dict        # flow id -> flow name (flows with any evaluation)
    agg_by_run: dict       # run id -> run-level evaluation row
    fold_by_run: dict      # run id -> per-fold evaluation row


def _choose_runs(agg_rows: list, fold_rows: list, flows: list[int], task_info: dict) -> _ChosenRuns:
    """Learner ids of the flows and the most recent run of every (task, learner)."""
    flow_name: dict[int, str] = {}
    for r in agg_rows + fold_rows:
        flow_name.setdefault(r["flow_id"], r["flow_name"])
    learner_of = {f: (flow_to_learner(flow_name[f]) or flow_name[f]) if f in flow_name else f"openml-flow:{f}"
                  for f in flows}
    candidates: dict[tuple[int, str], set] = defaultdict(set)
    agg_by_run = {r["run_id"]: r for r in agg_rows if r["task_id"] in task_info}
    fold_by_run = {r["run_id"]: r for r in fold_rows if r["task_id"] in task_info}
    for r in list(agg_by_run.values()) + list(fold_by_run.values()):
        if r["flow_id"] in learner_of:
            candidates[(r["task_id"], learner_of[r["flow_id"]])].add(r["run_id"])
    chosen = {key: max(runs) for key, runs in candidates.items()}
    return _ChosenRuns(
        run=chosen,
        several=sum(1 for runs in candidates.values() if len(runs) > 1),
        run_flow={rid: (agg_by_run.get(rid) or fold_by_run[rid])["flow_id"] for rid in chosen.values()},
        learner_of=learner_of, flow_name=flow_name, agg_by_run=agg_by_run, fold_by_run=fold_by_run,
    )


def _runtimes(fx: _Fetcher, evals: Callable, flows: list[int], wanted: set,
              runtime_measure: str) -> tuple[tuple[str, ...], dict[int, tuple[str, Any, Any]]]:
    """4. Runtimes, lazily along the chain -> (chain, run -> (measure, fit record, predict record))."""
    chain: tuple[str, ...] = () if runtime_measure == "none" else (
        RUNTIME_MEASURES if runtime_measure == "auto" else (runtime_measure,))
    time_of: dict[int, tuple[str, Any, Any]] = {}
    for m in chain:
        if not wanted - set(time_of):
            break
        got = {r["run_id"]: r for r in evals(m, True, flows) if r["run_id"] in wanted}
        fx.check_offline(f"the {m} evaluations")
        new = [rid for rid in wanted - set(time_of) if rid in got]
        if not new:
            continue
        testing = {}
        if m.endswith("_training"):
            tm = m[: -len("_training")] + "_testing"
            testing = {r["run_id"]: r for r in evals(tm, True, flows) if r["run_id"] in wanted}
            fx.check_offline(f"the {tm} evaluations")
        for rid in new:
            time_of[rid] = (m, got[rid], testing.get(rid))
    return chain, time_of


def _one_task_per_dataset(chosen: dict, usable_tasks: list[int], task_info: dict, missing: list) -> list[int]:
    """Keep one task per dataset: the one with most learners (ties: the lower task id)."""
    learners_per_task = defaultdict(set)
    for (t, l) in chosen:
        learners_per_task[t].add(l)
    task_of_dataset: dict[int, int] = {}
    for t in sorted(usable_tasks, key=lambda t: (-len(learners_per_task[t]), t)):
        did = task_info[t]["did"]
        if did in task_of_dataset:
            missing.append({"task": t, "flow": None, "what": "task",
                            "reason": f"dropped: shares dataset {did} with task {task_of_dataset[did]} (kept)"})
        else:
            task_of_dataset[did] = t
    return sorted(task_of_dataset.values())


def _runs_table(chosen: _ChosenRuns, kept_tasks: list[int], task_info: dict,
                time_of: dict) -> tuple[pd.DataFrame, dict, set]:
    """The runs table -> (runs, (task, learner) -> runtime measure used, cells with per-fold values)."""
    rows: list[dict] = []
    cell_runtime_measure: dict[tuple[int, str], str] = {}
    cell_folds: set = set()
    kept = set(kept_tasks)
    for (t, learner), rid in sorted(chosen.run.items()):
        if t not in kept:
            continue
        did = str(task_info[t]["did"])
        grid = _fold_grid(chosen.fold_by_run[rid]["values"]) if rid in chosen.fold_by_run else None
        timing = time_of.get(rid)
        fit_grid = _fold_grid(timing[1]["values"]) if timing else None
        pred_grid = _fold_grid(timing[2]["values"]) if timing and timing[2] else None
        if grid is not None:
            cell_folds.add((t, learner))
            for (r, f), v in sorted(grid.items()):
                rows.append(_row(did, learner, r, f, v, fit_grid.get((r, f)) if fit_grid else None,
                                 pred_grid.get((r, f)) if pred_grid else None, rid))
        else:
            value = chosen.agg_by_run[rid]["value"] if rid in chosen.agg_by_run else None
            if value is None:
                continue
            fit = np.mean(list(fit_grid.values())) if fit_grid else (timing[1]["value"] if timing else None)
            pred = np.mean(list(pred_grid.values())) if pred_grid else None
            rows.append(_row(did, learner, 0, 0, value, fit, pred, rid))
        if timing and (fit_grid or timing[1]["value"] is not None):
            cell_runtime_measure[(t, learner)] = timing[0]
    runs = pd.DataFrame(rows, columns=["dataset", "learner", "repeat", "fold", "accuracy", "fit_time",
                                       "predict_time", "status", "openml_run"])
    return runs, cell_runtime_measure, cell_folds


def _pair_coverage(chosen: _ChosenRuns, usable_tasks: list[int], flows: list[int], kept_tasks: list[int],
                   cell_runtime_measure: dict, cell_folds: set, chain: tuple, missing: list) -> tuple[int, int, int]:
    """Coverage per (task, flow) -> pairs with accuracy, with runtime, with folds; gaps go to ``missing``."""
    pair_acc = pair_rt = pair_folds = 0
    kept = set(kept_tasks)
    for t in usable_tasks:
        for f in flows:
            learner = chosen.learner_of[f]
            rid = chosen.run.get((t, learner))
            if t not in kept:
                continue
            if rid is None:
                reason = ("flow has no run on any of these tasks" if f not in chosen.flow_name
                          else "no run of this flow on this task")
                missing.append({"task": t, "flow": f, "what": "accuracy", "reason": reason})
                continue
            if chosen.run_flow[rid] != f:
                # the cell is served by another flow mapped to the same learner
                continue
            pair_acc += 1
            if (t, learner) in cell_runtime_measure:
                pair_rt += 1
            elif chain:
                missing.append({"task": t, "flow": f, "what": "runtime",
                                "reason": f"run {rid} has none of {', '.join(chain)}"})
            if (t, learner) in cell_folds:
                pair_folds += 1
            else:
                missing.append({"task": t, "flow": f, "what": "folds",
                                "reason": f"run {rid} has only a run-level value (rows use repeat = fold = 0)"})
    return pair_acc, pair_rt, pair_folds


def _row(dataset, learner, repeat, fold, accuracy, fit_ms, predict_ms, run_id) -> dict:
    return {
        "dataset": dataset,
        "learner": learner,
        "repeat": int(repeat),
        "fold": int(fold),
        "accuracy": float(accuracy),
        "fit_time": np.nan if fit_ms is None else float(fit_ms) / 1000.0,
        "predict_time": np.nan if predict_ms is None else float(predict_ms) / 1000.0,
        "status": "ok",
        "openml_run": int(run_id),
    }


def _datasets_table(task_info: dict, kept_tasks: Iterable[int]) -> pd.DataFrame:
    records = []
    for t in kept_tasks:
        info = task_info[t]
        q = {k: v for k, v in info.items() if k[:1].isupper()}
        n = q.pop("NumberOfInstances", np.nan)
        pct = q.get("MajorityClassPercentage")
        if pct is not None:
            majority = pct / 100.0
        elif q.get("MajorityClassSize") is not None and n and n == n:
            majority = q["MajorityClassSize"] / n
        else:
            majority = np.nan
        records.append({
            "dataset": str(info["did"]),
            "name": info.get("name") or str(info["did"]),
            "source": f"openml:{info['did']}",
            "n_instances": n,
            "n_features": q.pop("NumberOfFeatures", np.nan),
            "n_classes": q.pop("NumberOfClasses", np.nan),
            "majority_fraction": majority,
            "task_id": int(t),
            "estimation_procedure": info.get("estimation_procedure", ""),
            **q,
        })
    return pd.DataFrame.from_records(records)
