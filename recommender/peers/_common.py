"""What every peer strategy shares: the training arrays (with the live time model), the dataset
table rows, the observations so far, and a policy that runs planned batches.

All imports of the strategy kernel (meta-data arrays, observations, time model) of the peer modules
are here, so that they can be re-pointed in one place.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from dataclasses import replace
from typing import Callable, Mapping, Sequence

import numpy as np

from algorank.recommender.kernel.environments import MetaArrays, meta_arrays, require_times
from algorank.recommender.kernel.time_model import TimeModel
from algorank.recommender.kernel.trace import Observation
from algorank.metadata.errors import InputError
from algorank.recommender.base import StrategyBase, time_model_spec

__all__ = ["MetaArrays", "Observation", "TimeModel", "PeerStrategy", "TimedPeer", "PlannedPolicy", "training_arrays",
           "dataset_rows", "history_state", "info_number", "pop_choice", "time_model_spec", "require_times", "quiet_nan", "single_threaded"]


@contextlib.contextmanager
def quiet_nan():
    """Silence numpy's warnings about all-NaN slices and invalid values (the callers handle NaN results)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def single_threaded():
    """Limit BLAS/OpenMP to one thread (``threadpoolctl``), as the live tests run.  The peers' matrices are
    small (at most a few hundred learners); on a busy machine with few cores multi-threaded OpenBLAS makes
    their Cholesky factorisations many times slower than one thread."""
    global _CONTROLLER
    if _CONTROLLER is None:  # finding the loaded BLAS libraries costs ~10 ms: once per process
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1)


_CONTROLLER = None


def training_arrays(meta, *, time_kind: str, time_model: TimeModel, need_times: bool = True,
                    who: str = "strategy") -> MetaArrays:
    """The arrays a peer learns from: timed-out cells as results with the baseline accuracy
    (:meth:`MetaArrays.censored_as_baseline`) and the live time model applied to the seconds."""
    arrays = meta if isinstance(meta, MetaArrays) else meta_arrays(meta, time_kind=time_kind)
    if need_times:
        require_times(arrays, who=who)
    arrays = arrays.censored_as_baseline()
    if not time_model.is_identity:
        arrays = replace(arrays, seconds=time_model.apply(arrays.seconds))
    return arrays


def dataset_rows(meta, datasets: Sequence[str]) -> list[dict]:
    """The datasets-table rows (dicts, ``dataset`` included) of ``datasets``, in that order."""
    table = meta.datasets.set_index("dataset").reindex(list(datasets))
    return [dict(r, dataset=d) for d, r in zip(datasets, table.to_dict("records"))]


def info_number(info: Mapping, key: str) -> float:
    """``info[key]`` as a float; NaN when absent or not a number."""
    try:
        v = float(info.get(key, math.nan))
    except (TypeError, ValueError):
        return math.nan
    return v if math.isfinite(v) else math.nan


def history_state(history: Sequence[Observation], index: Mapping[str, int]) -> tuple[set, dict, float]:
    """``(tried, ok, seconds)``: indices of every learner tried, ``{index: accuracy}`` of the
    successful tests, and the seconds spent so far.  Learners unknown to the strategy are ignored."""
    tried, ok, spent = set(), {}, 0.0
    for o in history:
        spent += float(o.seconds) if math.isfinite(o.seconds) else 0.0
        j = index.get(o.learner)
        if j is None:
            continue
        tried.add(j)
        if o.status == "ok" and math.isfinite(o.accuracy):
            ok[j] = float(o.accuracy)
    return tried, ok, spent


def pop_choice(params: dict, key: str, default: str, choices: Sequence[str], *, strategy: str) -> str:
    """Pop a spec parameter that must be one of ``choices``."""
    value = str(params.pop(key, default)).strip().lower()
    if value not in choices:
        raise InputError(f"strategy {strategy!r}: {key} must be one of {', '.join(choices)}; got {value!r}")
    return value


class PeerStrategy(StrategyBase):
    """Base of the peers: keyword parameters kept in ``_params`` so that copies (``with_time_model``)
    rebuild the strategy with one change; the live time model ``T = scale * t + overhead``."""

    def __init__(self, *, time_kind: str = "fit_time", time_overhead: float = 0.0, time_scale: float = 1.0,
                 name: str | None = None, **params) -> None:
        self.time_kind = time_kind
        self.time_model = TimeModel(overhead=time_overhead, scale=time_scale)
        self._params = dict(params)
        self._name = name

    def _copy(self, **changes):
        kw = dict(self._params, time_kind=self.time_kind, time_overhead=self.time_model.overhead,
                  time_scale=self.time_model.scale, name=self._name)
        kw.update(changes)
        return type(self)(**kw)

    def _check_fitted(self, attr: str = "learners_") -> None:
        if not hasattr(self, attr):
            raise InputError(f"strategy {self.name!r} is not fitted: call fit(meta) first")


class TimedPeer(PeerStrategy):
    """A peer that uses test times: it takes the live time model (``time_model_aware``)."""

    time_model_aware = True

    def with_time_model(self, *, time_overhead: float = 0.0, time_scale: float = 1.0, time_kind: str | None = None):
        """An unfitted copy that learns from live test times ``time_scale * t + time_overhead``."""
        return self._copy(time_overhead=time_overhead, time_scale=time_scale, time_kind=time_kind or self.time_kind)


class PlannedPolicy:
    """Runs batches of learners that ``plan(history)`` returns, one at a time, skipping learners
    already tried; asks for the next batch when one is done; stops when ``plan`` returns None.

    Parameters
    ----------
    learners : sequence of str
        Column labels of the strategy (indices in the batches refer to them).
    plan : callable
        ``plan(history) -> list of indices | None``.
    """

    def __init__(self, learners: Sequence[str], plan: Callable) -> None:
        self.learners = tuple(learners)
        self.index = {l: j for j, l in enumerate(self.learners)}
        self._plan = plan
        self._queue: list[int] = []
        self.stop_reason: str | None = None

    def next(self, history: Sequence[Observation]) -> str | None:
        with single_threaded():
            return self._next(history)

    def _next(self, history: Sequence[Observation]) -> str | None:
        tried = {self.index[o.learner] for o in history if o.learner in self.index}
        for _ in range(10_000):  # every call of plan either returns learners or advances the plan's state
            while self._queue:
                j = self._queue.pop(0)
                if j not in tried:
                    return self.learners[j]
            if len(tried) >= len(self.learners):
                return None
            batch = self._plan(history)
            if batch is None:
                return None
            self._queue = [int(j) for j in batch]
        raise RuntimeError("planned policy made no progress")  # pragma: no cover - guarded by the plans
