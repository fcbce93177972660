"""Tuning P: the leave-one-dataset-out MIL over a grid of P (:func:`p_sweep`) and nested
leave-one-dataset-out tuning (:func:`tune_p_nested`), whose outer MIL is an honest estimate; any
other knob of any strategy (the peers' portfolio budget, rank threshold, warm start...) the same way
(:func:`knob_sweep`)."""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from algorank.evaluation.meta.scoring import (
    _as_arrays,
    _axis_setup,
    _prepare,
    _rows,
    _score,
    _sequences,
    start_seconds,
    MilSummary,
    leave_one_dataset_out,
)
from algorank.metadata.errors import InputError
from algorank.metadata.progress import progress_bar
from algorank.recommender.base import capability
from algorank.recommender.kernel.time_model import live_test_arrays
from algorank.recommender.kernel.trace import pack

__all__ = [
    "PAPER_P_GRID",
    "PSweepResult",
    "p_sweep",
    "NestedTuneResult",
    "tune_p_nested",
    "KnobSweepResult",
    "knob_spec",
    "knob_sweep",
]

logger = logging.getLogger(__name__)

#: The P grid of the A3R paper (Table 2): 1/4 ... 1/256 and 0.
PAPER_P_GRID = (1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256, 0.0)


@dataclass(frozen=True, eq=False)
class PSweepResult:
    """Leave-one-dataset-out results of AR-A3R over a grid of P.

    Attributes
    ----------
    grid : tuple of float
        The P values, in the order run.
    results : tuple of BenchmarkResult
        One per P.
    tmin, tmax : float
        The window.
    """

    grid: tuple
    results: tuple
    tmin: float
    tmax: float

    def table(self) -> pd.DataFrame:
        """Columns p, mean_mil, median_mil, mean_spearman (one row per P)."""
        return pd.DataFrame(
            {
                "p": list(self.grid),
                "mean_mil": [r.mean_mil for r in self.results],
                "median_mil": [r.median_mil for r in self.results],
                "mean_spearman": [r.mean_spearman for r in self.results],
            }
        )

    @property
    def best_p(self) -> float:
        """P with the smallest mean MIL (first in grid order on ties)."""
        means = [r.mean_mil for r in self.results]
        return float(self.grid[int(np.argmin(means))])

    def mil_matrix(self) -> np.ndarray:
        """Per-dataset MIL, shape (n_datasets, len(grid))."""
        return np.column_stack([r.mil for r in self.results])


def _check_grid(grid, upper: float = 1.0) -> tuple:
    grid = tuple(float(p) for p in grid)
    if not grid:
        raise InputError("the P grid is empty")
    bad = [p for p in grid if not (0.0 <= p <= upper)]
    if bad:
        raise InputError(f"every P of the grid must lie in [0, {upper:g}]; got {bad}")
    return grid


def p_sweep(
    meta,
    *,
    make_strategy: Callable[[float], object],
    grid: Sequence[float] = PAPER_P_GRID,
    tmin: float | None = None,
    tmax: float | None = None,
    metric: str = "accuracy",
    time_kind: str = "fit_time",
    fast: bool = True,
    time_model=None,
    upper: float = 1.0,
    progress: bool = False,
) -> PSweepResult:
    """Leave-one-dataset-out MIL for every P of ``grid``.

    Parameters
    ----------
    meta : MetaDataset or MetaArrays
        A MetaDataset when a strategy has no fast path (it is refitted without each dataset).
    make_strategy : callable
        ``make_strategy(p)`` returns the strategy for one P (e.g. ``AverageRanking(p=p)``).
    grid : sequence of float
        P values (default the paper's 1/4 ... 1/256, 0).
    tmin, tmax, metric, time_kind, fast, time_model, progress
        As in :func:`leave_one_dataset_out`.
    upper : float
        Largest P allowed (1 for A3R; 2 for the cost exponent of ``ei``).
    """
    grid = _check_grid(grid, upper)
    arrays = _as_arrays(meta, metric, time_kind)
    if time_model is not None:
        arrays = live_test_arrays(time_model, arrays, meta, metric=metric, time_kind=time_kind)
    _, lo, hi = _axis_setup(arrays, "time", tmin, tmax, None)
    def one(strategy):  # a fast_loo_fit strategy (ei, lt) prepares the MetaDataset itself
        on_arrays = fast and time_model is None and not capability(strategy, "fast_loo_fit")
        return leave_one_dataset_out(strategy, arrays if on_arrays else meta, tmin=lo, tmax=hi, metric=metric,
                                     time_kind=time_kind, fast=fast, time_model=time_model, progress=progress)

    results = tuple(one(make_strategy(p)) for p in grid)
    return PSweepResult(grid=grid, results=results, tmin=lo, tmax=hi)


@dataclass(frozen=True, eq=False)
class NestedTuneResult(MilSummary):
    """Nested leave-one-dataset-out tuning of P.

    For each outer held-out dataset ``d``, P is chosen by the mean MIL of an inner
    leave-one-dataset-out over the other datasets only, then ``d`` is scored with the
    strategy fitted on all other datasets with that P.  ``mil`` is therefore an honest
    estimate: no P was chosen on the dataset it is scored on.

    Attributes
    ----------
    grid : tuple of float
    datasets : tuple of str
    chosen_p : ndarray (n_datasets,)
        P chosen for each outer dataset.
    mil : ndarray (n_datasets,)
        Outer MIL per dataset.
    tmin, tmax : float
    result : BenchmarkResult
        The outer traces (each dataset scored with its chosen P), named ``name``; the
        user-facing metrics are computed from it.
    """

    grid: tuple
    datasets: tuple
    chosen_p: np.ndarray
    mil: np.ndarray
    tmin: float
    tmax: float
    result: object = None

    def p_counts(self) -> dict:
        """How often each P was chosen."""
        return {p: int(np.sum(self.chosen_p == p)) for p in self.grid}


def tune_p_nested(
    meta,
    *,
    make_strategy: Callable[[float], object],
    grid: Sequence[float] = PAPER_P_GRID,
    tmin: float | None = None,
    tmax: float | None = None,
    metric: str = "accuracy",
    time_kind: str = "fit_time",
    progress: bool = False,
    name: str = "nested (P tuned per dataset)",
) -> NestedTuneResult:
    """Choose P by nested leave-one-dataset-out and report the outer MIL.

    Ties in the inner mean MIL go to the first P in grid order.  Uses the
    strategies' ``loo_orders(arrays, train=...)`` fast path when present (one call
    per outer dataset and P); otherwise it refits per inner dataset (slow).
    """
    grid = _check_grid(grid)
    arrays = _as_arrays(meta, metric, time_kind)
    _, lo, hi = _axis_setup(arrays, "time", tmin, tmax, None)
    rows = _rows(arrays)
    strategies = [_prepare(make_strategy(p), lo, hi) for p in grid]
    n = len(arrays.datasets)
    in_rows = np.zeros(n, dtype=bool)
    in_rows[rows] = True
    chosen = np.empty(len(rows))
    outer = np.empty(len(rows))
    outer_rows_of = {}  # held-out row -> (columns, charges) of the chosen P's test sequence
    for i, d in enumerate(progress_bar(rows, total=len(rows), desc="nested P tuning", enabled=progress)):
        train = in_rows.copy()
        train[d] = False
        inner_rows = np.flatnonzero(train)
        inner_means = []
        outer_mils = []
        outer_rows = []
        for s in strategies:
            # the inner rows left out one at a time, and the outer row d fitted on all of them (d is not in train)
            both = np.append(inner_rows, d)
            seq, path, charges = _sequences(s, meta, arrays, both, train, fast=True, progress=False)
            r = _score(s, arrays, seq, both, lo, hi, "", path, charges=charges,
                       start=start_seconds(s, meta, arrays, train))
            inner_means.append(float(np.mean(r.mil[:-1])))
            outer_mils.append(float(r.mil[-1]))
            cols = seq[d][seq[d] >= 0]
            outer_rows.append((list(cols), list(charges[d, :len(cols)]) if charges is not None
                               else [math.nan] * len(cols)))
        k = int(np.argmin(inner_means))
        chosen[i] = grid[k]
        outer[i] = outer_mils[k]
        outer_rows_of[int(d)] = outer_rows[k]
    outer_seq, outer_charges = pack(outer_rows_of, *arrays.shape)
    traces = _score(None, arrays, outer_seq, rows, lo, hi, name, "fast", charges=outer_charges,
                    start=start_seconds(strategies[0], meta, arrays) if strategies else None)
    return NestedTuneResult(
        grid=grid,
        datasets=tuple(arrays.datasets[d] for d in rows),
        chosen_p=chosen,
        mil=outer,
        tmin=lo,
        tmax=hi,
        result=traces,
    )


@dataclass(frozen=True, eq=False)
class KnobSweepResult:
    """Leave-one-dataset-out results of one strategy over a grid of one knob (any strategy, any knob).

    Attributes
    ----------
    family : str
        The strategy spec without the swept knob (``"portfolio:rank"``).
    knob : str
        The swept parameter (``"budget"``).
    grid : tuple of str
        Its values as written in the specs.
    specs : tuple of str
        One strategy spec per value.
    results : tuple of BenchmarkResult
        One per value, on the same datasets.
    """

    family: str
    knob: str
    grid: tuple
    specs: tuple
    results: tuple

    def table(self) -> pd.DataFrame:
        """Columns value, spec, mean_mil, median_mil (one row per value)."""
        return pd.DataFrame({"value": list(self.grid), "spec": list(self.specs),
                             "mean_mil": [float(np.mean(r.mil)) for r in self.results],
                             "median_mil": [float(np.median(r.mil)) for r in self.results]})

    @property
    def best(self) -> str:
        """The value with the smallest mean MIL (first in grid order on ties), as ``tune-p`` chooses P."""
        return self.grid[int(np.argmin([float(np.mean(r.mil)) for r in self.results]))]

    @property
    def best_spec(self) -> str:
        return self.specs[self.grid.index(self.best)]

    def nested_choice(self) -> np.ndarray:
        """Per scored dataset, the value whose mean MIL over the *other* scored datasets is smallest.

        No dataset's choice uses its own score; the other datasets' scores come from strategies
        fitted with it among their priors (a refit-free approximation of nested leave-one-dataset-out,
        which would refit every strategy once per inner dataset and outer fold).
        """
        mil = np.column_stack([np.asarray(r.mil, dtype=float) for r in self.results])  # datasets x values
        n = mil.shape[0]
        others = (mil.sum(axis=0)[None, :] - mil) / max(n - 1, 1)
        return np.asarray(self.grid, dtype=object)[np.argmin(others, axis=1)]

    def nested_mil(self) -> np.ndarray:
        """The MIL of each scored dataset under its :meth:`nested_choice` (an honest estimate of the tuned knob)."""
        mil = np.column_stack([np.asarray(r.mil, dtype=float) for r in self.results])
        pick = [list(self.grid).index(v) for v in self.nested_choice()]
        return mil[np.arange(mil.shape[0]), pick]


def knob_spec(family: str, knob: str, value) -> str:
    """``family`` with ``knob=value`` added (``knob_spec("portfolio:rank", "budget", 60)`` ->
    ``"portfolio:rank,budget=60"``)."""
    from algorank.recommender.spec import split_spec

    name, fixed = split_spec(family)
    if knob in fixed:
        raise InputError(f"{knob} is what is swept: leave it out of the strategy {family!r}")
    parts = [k if v == "" else f"{k}={v}" for k, v in {**fixed, knob: str(value)}.items()]  # flags stay bare
    return name + ":" + ",".join(parts)


def knob_sweep(
    meta,
    *,
    family: str,
    knob: str,
    grid: Sequence,
    tmin: float | None = None,
    tmax: float | None = None,
    metric: str = "accuracy",
    time_kind: str = "fit_time",
    time_model=None,
    progress: bool = False,
) -> KnobSweepResult:
    """Leave-one-dataset-out MIL of ``family`` for every value of ``knob`` (``tune-p`` for any knob).

    Parameters
    ----------
    meta : MetaDataset
        The datasets to tune on (the training part: exclude a frozen held-out split first).
    family, knob, grid
        The strategy spec, the parameter and its values (``"pmf"``, ``"n_init"``, ``(1, 3, 5)``).
    tmin, tmax, metric, time_kind, time_model, progress
        As in :func:`leave_one_dataset_out`; every value is scored on the same window.
    """
    from algorank.recommender.registry import parse_strategy

    grid = tuple(str(v) for v in grid)
    if not grid:
        raise InputError(f"the grid of {knob} is empty")
    specs = tuple(knob_spec(family, knob, v) for v in grid)
    strategies = [parse_strategy(s) for s in specs]  # a bad value is an error before any work
    arrays = _as_arrays(meta, metric, time_kind)
    if time_model is not None:
        arrays = live_test_arrays(time_model, arrays, meta, metric=metric, time_kind=time_kind)
    _, lo, hi = _axis_setup(arrays, "time", tmin, tmax, None)
    results = tuple(leave_one_dataset_out(s, meta, tmin=lo, tmax=hi, metric=metric, time_kind=time_kind,
                                          time_model=time_model, progress=progress) for s in strategies)
    return KnobSweepResult(family=str(family), knob=str(knob), grid=grid, specs=specs, results=results)
