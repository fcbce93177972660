"""User-facing metrics of ordering strategies, computed from the same traces as the MIL.

MIL on a log-time window mostly rewards the first fraction of a second.  A user asks
"when do I have a near-best model?" and "how good is what I have when my budget runs
out?".  For one strategy on one dataset (its trace: tests in order with accuracies
``a_k``, NaN for a test that failed or timed out, and seconds ``t_k``; cumulative
``T_k = t_1 + ... + t_k``), with ``best`` the highest accuracy of any learner on the
dataset and ``baseline`` the accuracy known before any test (majority-class fraction,
else the worst learner's; see :mod:`algorank.recommender.kernel.loss_time`):

* **time to eps**: ``T_k`` of the first test with ``a_k >= best - eps`` (``eps`` in
  accuracy points, default 1 point = 0.01 accuracy; a tolerance of 1e-9 absorbs
  rounding).  A strategy that never gets there is *censored*: its value is its total
  time ``T_n`` (a lower bound), flagged ``eps_reached = False``; reports count them.
* **loss at budget B**: ``100 * max(0, best - max(baseline, max{a_k : T_k <= B}))``
  percentage points (a test still running at ``B`` does not count).
* **MIL to B**: the mean interval loss (Abdulrahman, Brazdil, van Rijn and Vanschoren 2018) over ``[t_min, B]``, ``t_min`` the dataset's cheapest
  test (smallest time of any testable learner, at least 1e-6 s).  When ``t_min >= B``
  no test can finish inside the window and the value is the loss at ``B``.
* **MIL**: the benchmark's own window, as before.

A timed-out test (status ``timeout`` in the meta-data) costs its recorded time, a
lower bound, and finds nothing: it is in the trace with accuracy NaN.

Oracle bounds (what knowing the dataset's results gives; no strategy can beat them):
time to eps = the time of the cheapest single learner within ``eps`` of the best; loss
at ``B`` = the loss of the most accurate learner whose own time is ``<= B`` (any set of
tests finished by ``B`` contains its best learner, which alone takes no longer); MIL =
the exact smallest MIL (:func:`~algorank.recommender.kernel.oracle.oracle_order`, for all datasets at once
:func:`~algorank.recommender.kernel.oracle.oracle_mils`).

Comparing strategy S with the reference R over datasets
--------------------------------------------------------------------
* wins / ties / losses per dataset, lower is better; a tie when
  ``|x_S - x_R| <= max(tie_rel * |x_R|, tie_abs)`` with ``tie_rel = 0.05`` and
  ``tie_abs = 0.05`` s for times, ``0.05`` points for losses.  For time to eps, a
  censored value loses against a reached one (two censored values tie).
* sign test on the untied datasets (two-sided binomial, p = 1 with none);
* Wilcoxon signed-rank (Pratt zeros) on ``log(x_S / x_R)`` for time to eps (times
  clipped to 1e-6 s) and on ``x_S - x_R`` for losses and MILs (zeros are common);
* totals: summed time to eps, mean loss / MIL; ``gap closed =
  (total_R - total_S) / (total_R - total_oracle)`` (NaN when the reference already
  equals the oracle).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from algorank.recommender.kernel.environments import MetaArrays
from algorank.recommender.kernel.loss_time import check_window, loss_steps, mil_rows, row_chunks
from algorank.recommender.kernel.oracle import oracle_mils
from algorank.metadata.errors import InputError
from algorank.metadata.task import points_word
from algorank.metadata.text import escape, format_seconds, format_table

__all__ = [
    "DEFAULT_EPS",
    "DEFAULT_BUDGETS",
    "MIN_SECONDS",
    "check_eps",
    "check_budgets",
    "budget_label",
    "seconds_text",
    "time_to_eps_rows",
    "loss_at_rows",
    "mil_to_budget_rows",
    "cheapest_test",
    "UserMetrics",
    "user_metrics",
    "oracle_metrics",
    "MetricComparison",
    "compare_metric",
    "MetricsReport",
    "metrics_report",
]

#: Default eps in accuracy points (1 point = 0.01 accuracy).
DEFAULT_EPS = 1.0
#: Default budgets in seconds of test time (on the benchmark's time axis).
DEFAULT_BUDGETS = (1.0, 10.0, 60.0)
#: Floor on times for log ratios and window starts.
MIN_SECONDS = 1e-6
_TOL = 1e-9
TIE_REL = 0.05
TIE_SECONDS = 0.05
TIE_POINTS = 0.05


def check_eps(eps) -> float:
    """``eps`` in accuracy points: a finite number in [0, 100)."""
    try:
        v = float(eps)
    except (TypeError, ValueError):
        raise InputError(f"eps must be a number of accuracy points in [0, 100); got {eps!r}") from None
    if not (math.isfinite(v) and 0.0 <= v < 100.0):
        raise InputError(f"eps must be a number of accuracy points in [0, 100) (1 = 0.01 accuracy); got {eps!r}")
    return v


def check_budgets(budgets) -> tuple:
    """Budgets in seconds: at least one, each finite and > 0; returned sorted without repeats."""
    if budgets is None:
        return DEFAULT_BUDGETS
    if isinstance(budgets, (int, float)):
        budgets = [budgets]
    out = []
    for b in budgets:
        try:
            v = float(b)
        except (TypeError, ValueError):
            raise InputError(f"budgets must be numbers of seconds > 0; got {b!r}") from None
        if not (math.isfinite(v) and v > 0):
            raise InputError(f"budgets must be finite numbers of seconds > 0; got {b!r}")
        out.append(v)
    if not out:
        raise InputError("give at least one budget (seconds)")
    return tuple(sorted(set(out)))


def budget_label(b: float) -> str:
    """``1s``, ``0.5s``, ``60s``."""
    return f"{b:g}s"


#: Seconds for people (``12.3 ms``, ``4.5 s``, ``3 min``, ``2.1 h``): the one formatter of metadata.text.
seconds_text = format_seconds


def time_to_eps_rows(accuracy, seconds, best, *, eps: float = DEFAULT_EPS) -> tuple[np.ndarray, np.ndarray]:
    """Time to reach ``best - eps`` per row (tests in order; NaN accuracy = found nothing).

    Parameters
    ----------
    accuracy, seconds : array (n_rows, n_tests)
        Per test in order (NaN accuracy and 0 s for padding).
    best : array (n_rows,)
        Best accuracy on each dataset.
    eps : float
        Accuracy points.

    Returns
    -------
    times : ndarray (n_rows,)
        Finish time of the first test within eps; the total time where none is (censored).
    reached : bool ndarray (n_rows,)
    """
    acc = np.atleast_2d(np.asarray(accuracy, dtype=float))
    sec = np.atleast_2d(np.asarray(seconds, dtype=float))
    best = np.atleast_1d(np.asarray(best, dtype=float))
    eps = check_eps(eps)
    n, m = acc.shape
    if m == 0:
        return np.zeros(n), np.zeros(n, dtype=bool)
    cum = np.cumsum(sec, axis=1)
    with np.errstate(invalid="ignore"):
        hit = acc >= (best - eps / 100.0 - _TOL)[:, None]
    reached = hit.any(axis=1)
    first = np.argmax(hit, axis=1)
    times = np.where(reached, cum[np.arange(n), first], cum[:, -1])
    return times, reached


def loss_at_rows(accuracy, seconds, best, baseline, budget: float, *, steps=None) -> np.ndarray:
    """Loss (percentage points) at ``budget`` seconds per row: tests finished by then count.

    ``steps`` is :func:`~algorank.recommender.kernel.loss_time.loss_steps` of the same rows when already computed.
    """
    cum, losses, initial = loss_steps(accuracy, seconds, best, baseline) if steps is None else steps
    done = (cum <= budget).sum(axis=1)  # cum is non-decreasing
    values = np.concatenate([initial[:, None], losses], axis=1)
    return values[np.arange(values.shape[0]), done]


def mil_to_budget_rows(accuracy, seconds, best, baseline, cheapest, budget: float, *, steps=None) -> np.ndarray:
    """Exact MIL over ``[cheapest_i, budget]`` per row (the loss at ``budget`` when ``cheapest_i >= budget``)."""
    steps = loss_steps(accuracy, seconds, best, baseline) if steps is None else steps
    cum, losses, initial = steps
    start = np.maximum(np.atleast_1d(np.asarray(cheapest, dtype=float)), MIN_SECONDS)
    out = loss_at_rows(accuracy, seconds, best, baseline, budget, steps=steps)
    inside = np.flatnonzero(start < budget)
    if inside.size:
        out[inside] = mil_rows(cum[inside], losses[inside], initial[inside], tmin=start[inside], tmax=budget)
    return out


def cheapest_test(arrays: MetaArrays) -> np.ndarray:
    """Per dataset, the smallest positive time of a testable learner (MIN_SECONDS when none is positive)."""
    sec = np.where(arrays.testable & (arrays.seconds > 0), arrays.seconds, np.inf)
    low = sec.min(axis=1) if sec.shape[1] else np.full(sec.shape[0], np.inf)
    return np.where(np.isfinite(low), np.maximum(low, MIN_SECONDS), MIN_SECONDS)


@dataclass(frozen=True, eq=False)
class UserMetrics:
    """The user-facing metrics of one strategy (or the oracle bound) per dataset.

    Attributes
    ----------
    strategy : str
    datasets : tuple of str
    eps : float
        Accuracy points.
    budgets : tuple of float
        Seconds.
    time_to_eps : ndarray (n,)
        Seconds; the total time where eps was not reached.
    eps_reached : bool ndarray (n,)
    loss_at : ndarray (n, n_budgets)
        Percentage points.
    mil_to_budget : ndarray (n, n_budgets)
        MIL over ``[cheapest test, B]``.
    mil : ndarray (n,)
        MIL over the benchmark window.
    total_time : ndarray (n,)
        Seconds of all tests of the trace (NaN for the oracle bound).
    """

    strategy: str
    datasets: tuple
    eps: float
    budgets: tuple
    time_to_eps: np.ndarray = field(repr=False)
    eps_reached: np.ndarray = field(repr=False)
    loss_at: np.ndarray = field(repr=False)
    mil_to_budget: np.ndarray = field(repr=False)
    mil: np.ndarray = field(repr=False)
    total_time: np.ndarray = field(repr=False)

    @property
    def n_censored(self) -> int:
        """Datasets where eps was never reached."""
        return int((~self.eps_reached).sum())

    def columns(self) -> dict:
        """Metric label -> per-dataset values: ``time_to_eps``, ``loss@<B>``, ``mil_to_<B>``, ``mil``."""
        out = {"time_to_eps": self.time_to_eps}
        for i, b in enumerate(self.budgets):
            out[f"loss@{budget_label(b)}"] = self.loss_at[:, i]
        for i, b in enumerate(self.budgets):
            out[f"mil_to_{budget_label(b)}"] = self.mil_to_budget[:, i]
        out["mil"] = self.mil
        return out

    def totals(self) -> dict:
        """Summed and median time to eps, how many are censored, and the mean of every loss metric."""
        out = {"time_to_eps_sum": float(np.sum(self.time_to_eps)),
               "time_to_eps_median": float(np.median(self.time_to_eps)) if self.time_to_eps.size else float("nan"),
               "eps_not_reached": self.n_censored}
        for label, values in self.columns().items():
            if label != "time_to_eps":
                out[f"{label}_mean"] = float(np.mean(values)) if values.size else float("nan")
        return out

    def total(self, label: str) -> float:
        """The total a comparison uses: summed time to eps, mean of a loss metric."""
        values = self.columns()[label]
        return float(np.sum(values)) if label == "time_to_eps" else float(np.mean(values))

    def per_dataset(self) -> pd.DataFrame:
        """One row per dataset: dataset, time_to_eps, eps_reached, loss@B..., mil_to_B..., mil, total_time."""
        frame = pd.DataFrame({"dataset": list(self.datasets)})
        for label, values in self.columns().items():
            frame[label] = values
            if label == "time_to_eps":
                frame["eps_reached"] = self.eps_reached
        frame["total_time"] = self.total_time
        return frame

    def to_dict(self, *, per_dataset: bool = True) -> dict:
        """Totals, plus ``per_dataset`` ({dataset: {metric: value, ..., eps_reached}}) unless ``per_dataset=False``."""
        if not per_dataset:
            return self.totals()
        cols = {k: v.tolist() for k, v in self.columns().items()}
        reached = self.eps_reached.tolist()
        per = {d: {**{k: v[i] for k, v in cols.items()}, "eps_reached": reached[i]}
               for i, d in enumerate(self.datasets)}
        return {**self.totals(), "per_dataset": per}


def user_metrics(result, *, cheapest, eps: float = DEFAULT_EPS, budgets: Sequence[float] = DEFAULT_BUDGETS) -> UserMetrics:
    """The user-facing metrics of one :class:`~algorank.evaluation.meta.benchmark.BenchmarkResult`.

    Parameters
    ----------
    result : BenchmarkResult
        Its traces (``accuracies``, ``seconds`` per test; NaN accuracy = found nothing),
        ``best``, ``baseline``, ``mil`` per dataset.
    cheapest : array (n_datasets,)
        The cheapest test of each dataset (:func:`cheapest_test`), start of the MIL-to-budget window.
    eps, budgets
        Accuracy points; seconds.
    """
    eps = check_eps(eps)
    budgets = check_budgets(budgets)
    seq = result.sequences
    n = seq.shape[0]
    cheapest = np.broadcast_to(np.asarray(cheapest, dtype=float), (n,))
    t_eps, reached, total = np.empty(n), np.empty(n, dtype=bool), np.empty(n)
    loss, mil_b = np.empty((n, len(budgets))), np.empty((n, len(budgets)))
    for c in row_chunks(n, seq.shape[1]):  # rows are independent: a block at a time
        part = result.traces.take(np.arange(n)[c])
        acc, sec = part.accuracies(seq[c]), part.seconds(seq[c])
        best, baseline = result.best[c], result.baseline[c]
        t_eps[c], reached[c] = time_to_eps_rows(acc, sec, best, eps=eps)
        steps = loss_steps(acc, sec, best, baseline)
        for k, b in enumerate(budgets):
            loss[c, k] = loss_at_rows(acc, sec, best, baseline, b, steps=steps)
            mil_b[c, k] = mil_to_budget_rows(acc, sec, best, baseline, cheapest[c], b, steps=steps)
        total[c] = sec.sum(axis=1) if sec.shape[1] else 0.0
    return UserMetrics(strategy=result.strategy, datasets=tuple(result.datasets), eps=eps, budgets=budgets,
                       time_to_eps=t_eps, eps_reached=reached, loss_at=loss, mil_to_budget=mil_b,
                       mil=np.asarray(result.mil, dtype=float), total_time=total)


def oracle_metrics(arrays: MetaArrays, *, cheapest=None, eps: float = DEFAULT_EPS,
                   budgets: Sequence[float] = DEFAULT_BUDGETS, tmin: float, tmax: float,
                   name: str = "oracle") -> UserMetrics:
    """The oracle bound of every metric on every dataset of ``arrays`` (see the module docstring).

    Every dataset of ``arrays`` must have at least one learner with a result.
    """
    eps = check_eps(eps)
    budgets = check_budgets(budgets)
    lo, hi = check_window(tmin, tmax)
    cheapest = cheapest_test(arrays) if cheapest is None else np.asarray(cheapest, dtype=float)
    avail = arrays.available
    if not avail.any(axis=1).all():
        raise InputError("oracle_metrics: every dataset needs a learner with a result")
    acc = np.where(avail, arrays.accuracy, np.nan)
    sec = np.where(avail, arrays.seconds, np.inf)
    best = np.nanmax(np.where(avail, acc, -np.inf), axis=1)
    baseline = arrays.baselines()
    n = len(arrays.datasets)
    with np.errstate(invalid="ignore"):
        near = avail & (acc >= (best - eps / 100.0 - _TOL)[:, None])
    t_eps = np.where(near, sec, np.inf).min(axis=1)
    loss = np.empty((n, len(budgets)))
    for k, b in enumerate(budgets):
        within = avail & (sec <= b)
        top = np.max(np.where(within, acc, -np.inf), axis=1)
        found = np.where(within.any(axis=1), np.maximum(baseline, top), baseline)
        loss[:, k] = 100.0 * np.maximum(0.0, best - found)
    start = np.maximum(np.asarray(cheapest, dtype=float), MIN_SECONDS)
    # the oracle's MIL over [cheapest, B] for every budget, then over the benchmark window: fronts found once
    mils = oracle_mils(acc, np.where(avail, arrays.seconds, np.nan), baseline,
                       [(start, b) for b in budgets] + [(lo, hi)])
    mil_b = np.where(start[:, None] < np.asarray(budgets)[None, :], mils[:, :-1], loss)
    mil = mils[:, -1]
    return UserMetrics(strategy=name, datasets=tuple(arrays.datasets), eps=eps, budgets=budgets,
                       time_to_eps=t_eps, eps_reached=np.ones(n, dtype=bool), loss_at=loss, mil_to_budget=mil_b,
                       mil=mil, total_time=np.full(n, np.nan))


@dataclass(frozen=True)
class MetricComparison:
    """One strategy against the reference on one metric, over datasets (lower is better).

    Attributes
    ----------
    metric, strategy, reference : str
    wins, ties, losses : int
        Datasets where the strategy is better / within the tie tolerance / worse.
    sign : TestResult
        Two-sided sign test on the untied datasets.
    wilcoxon : TestResult
        Wilcoxon signed-rank (Pratt zeros) on ``log(x_S/x_R)`` (time) or ``x_S - x_R`` (losses).
    total, reference_total, oracle_total : float
        Summed time to eps or mean loss.
    gap_closed : float
        ``(reference_total - total) / (reference_total - oracle_total)``; NaN when undefined.
    """

    metric: str
    strategy: str
    reference: str
    wins: int
    ties: int
    losses: int
    sign: object
    wilcoxon: object
    total: float
    reference_total: float
    oracle_total: float
    gap_closed: float

    def to_dict(self) -> dict:
        return {"wins": self.wins, "ties": self.ties, "losses": self.losses,
                "sign_pvalue": float(self.sign.pvalue), "wilcoxon_statistic": float(self.wilcoxon.statistic),
                "wilcoxon_pvalue": float(self.wilcoxon.pvalue), "wilcoxon_method": self.wilcoxon.method,
                "total": self.total, "reference_total": self.reference_total, "oracle_total": self.oracle_total,
                "gap_closed": self.gap_closed}


def compare_metric(x, x_ref, *, time: bool, reached=None, reached_ref=None, tie_rel: float = TIE_REL,
                   tie_abs: float | None = None):
    """Wins / ties / losses, sign test and Wilcoxon of ``x`` against ``x_ref`` (lower is better).

    Parameters
    ----------
    x, x_ref : array (n,)
        Per-dataset values of the strategy and of the reference.
    time : bool
        Times (Wilcoxon on log ratios, ``tie_abs`` default 0.05 s) or losses (differences,
        0.05 points).
    reached, reached_ref : bool array (n,), optional
        For time to eps: whether eps was reached; a censored value loses against a reached one.

    Returns
    -------
    (wins, ties, losses, sign, wilcoxon)
    """
    from algorank.evaluation.stats import sign_test, wilcoxon_signed_rank

    x = np.asarray(x, dtype=float)
    r = np.asarray(x_ref, dtype=float)
    if x.shape != r.shape or x.ndim != 1 or x.size == 0:
        raise InputError(f"compare_metric needs two non-empty vectors of the same length; got {x.shape}, {r.shape}")
    tol = np.maximum(tie_rel * np.abs(r), (TIE_SECONDS if time else TIE_POINTS) if tie_abs is None else tie_abs)
    better = x < r - tol
    worse = x > r + tol
    if reached is not None and reached_ref is not None:
        reached = np.asarray(reached, dtype=bool)
        reached_ref = np.asarray(reached_ref, dtype=bool)
        better = np.where(reached != reached_ref, reached & ~reached_ref, better)
        worse = np.where(reached != reached_ref, ~reached & reached_ref, worse)
        both_censored = ~reached & ~reached_ref
        better, worse = better & ~both_censored, worse & ~both_censored
    score = better.astype(float) - worse.astype(float)
    sign = sign_test(score, np.zeros_like(score), ties="drop")
    if time:
        d = np.log(np.maximum(r, MIN_SECONDS)) - np.log(np.maximum(x, MIN_SECONDS))
        wil = wilcoxon_signed_rank(d, np.zeros_like(d), zero_method="pratt")
    else:
        wil = wilcoxon_signed_rank(r, x, zero_method="pratt")
    return int(better.sum()), int((~better & ~worse).sum()), int(worse.sum()), sign, wil


@dataclass(frozen=True, eq=False)
class MetricsReport:
    """User-facing metrics of several strategies on the same datasets, against a reference and the oracle.

    Attributes
    ----------
    eps : float
        Accuracy points.
    budgets : tuple of float
        Seconds.
    reference : str
        Name of the reference strategy.
    metrics : tuple of UserMetrics
        One per strategy, in the order given.
    oracle : UserMetrics
        The oracle bound of each metric.
    comparisons : tuple of MetricComparison
        Every strategy but the reference, on every metric.
    time_axis : str
        What the seconds are (``recorded fit times``, ``live tests, 5 x fit + 0.017 s``).
    task : str
        The task of the meta-data: the points are accuracy points, or R² points for regression
        (the score ``max(R², 0)``).
    """

    eps: float
    budgets: tuple
    reference: str
    metrics: tuple
    oracle: UserMetrics
    comparisons: tuple
    time_axis: str = ""
    task: str = "classification"

    @property
    def labels(self) -> list:
        return list(self.oracle.columns())

    def get(self, strategy: str) -> UserMetrics:
        for m in self.metrics:
            if m.strategy == strategy:
                return m
        if strategy == self.oracle.strategy:
            return self.oracle
        raise InputError(f"no strategy {strategy!r} in this report; have {', '.join(m.strategy for m in self.metrics)}")

    def summary_table(self) -> pd.DataFrame:
        """One row per strategy plus the oracle bound: the totals of :meth:`UserMetrics.totals`."""
        rows = [{"strategy": m.strategy, **m.totals()} for m in (*self.metrics, self.oracle)]
        return pd.DataFrame(rows)

    def comparison_table(self) -> pd.DataFrame:
        """One row per (strategy, metric): wins, ties, losses, sign / Wilcoxon p, totals, gap closed."""
        rows = [{"strategy": c.strategy, "metric": c.metric, **c.to_dict()} for c in self.comparisons]
        return pd.DataFrame(rows)

    def per_dataset_table(self) -> pd.DataFrame:
        """Long table: strategy, dataset and every metric (oracle bound included)."""
        frames = []
        for m in (*self.metrics, self.oracle):
            f = m.per_dataset()
            f.insert(0, "strategy", m.strategy)
            frames.append(f)
        return pd.concat(frames, ignore_index=True)

    def text_lines(self) -> list[str]:
        """The report as text: totals per strategy and the oracle bound, then the tests against the reference.

        Tables are laid out by :func:`~algorank.metadata.text.format_table`: columns never run together,
        whatever the width of a name or a number (a W/T/L of thousands of datasets included).
        """
        bl = [budget_label(b) for b in self.budgets]
        last = bl[-1]
        lines = ["", f"user-facing metrics (time on the benchmark's axis: {self.time_axis}); eps = {self.eps:g} "
                     f"{points_word(self.task)} point(s); losses in points"]
        header = ["strategy", "t_eps sum", "median", "not reached", *(f"loss@{b}" for b in bl), f"MIL to {last}", "MIL"]
        rows = []
        for m in (*self.metrics, self.oracle):
            t = m.totals()
            rows.append([m.strategy, seconds_text(t["time_to_eps_sum"]), seconds_text(t["time_to_eps_median"]),
                         t["eps_not_reached"], *(f"{t[f'loss@{b}_mean']:.3f}" for b in bl),
                         f"{t[f'mil_to_{last}_mean']:.3f}", f"{t['mil_mean']:.3f}"])
        lines.append(format_table(header, rows))
        shown = [c for c in self.comparisons if not (c.metric.startswith("mil_to_") and c.metric != f"mil_to_{last}")]
        if shown:
            lines += ["", f"against the reference {escape(self.reference)} (lower is better; W/T/L = datasets where the "
                          f"strategy is better / tied / worse; p: sign test, Wilcoxon; gap = share of the reference's "
                          f"distance to the oracle closed)"]
            rows = [[c.strategy, c.metric, f"{c.wins}/{c.ties}/{c.losses}", f"{c.sign.pvalue:.3g}",
                     f"{c.wilcoxon.pvalue:.3g}", "n/a" if c.gap_closed != c.gap_closed else f"{c.gap_closed:.2f}"]
                    for c in shown]
            lines.append(format_table(["strategy", "metric", "W/T/L", "sign p", "Wilcoxon p", "gap"], rows,
                                      align="llrrrr"))
        return lines

    def to_dict(self, *, per_dataset: bool = True) -> dict:
        """Settings, every strategy's and the oracle's totals (with their per-dataset values unless
        ``per_dataset=False``) and the comparisons with the reference."""
        comps: dict = {}
        for c in self.comparisons:
            comps.setdefault(c.strategy, {})[c.metric] = c.to_dict()
        return {
            "eps_points": self.eps,
            "task": self.task,
            "budgets_s": list(self.budgets),
            "time_axis": self.time_axis,
            "reference": self.reference,
            "tie_rule": f"|x - x_ref| <= max({TIE_REL:g} * |x_ref|, {TIE_SECONDS:g} s or {TIE_POINTS:g} points); "
                        "time to eps not reached loses against reached",
            "strategies": {m.strategy: m.to_dict(per_dataset=per_dataset) for m in self.metrics},
            "oracle": self.oracle.to_dict(per_dataset=per_dataset),
            "comparisons": comps,
        }


def metrics_report(results: Sequence, arrays: MetaArrays, *, eps: float = DEFAULT_EPS,
                   budgets: Sequence[float] = DEFAULT_BUDGETS, reference: str | None = None,
                   time_axis: str = "", task: str = "classification") -> MetricsReport:
    """User-facing metrics of benchmark results, the oracle bounds, and comparisons with a reference.

    Parameters
    ----------
    results : sequence of BenchmarkResult
        Same datasets and window (as :func:`~algorank.evaluation.meta.benchmark.benchmark_strategies` gives).
    arrays : MetaArrays
        The arrays the results were scored on (same time axis); must hold their datasets.
    eps, budgets
        Accuracy points; seconds.
    reference : str, optional
        Name of the reference strategy (default the first result).
    time_axis : str
        Words for the seconds, stored in the report.
    task : str
        The meta-data's task, stored in the report (its points are R² points for regression).
    """
    results = list(results)
    if not results:
        raise InputError("metrics_report needs at least one benchmark result")
    eps = check_eps(eps)
    budgets = check_budgets(budgets)
    ds = tuple(results[0].datasets)
    for r in results[1:]:
        if tuple(r.datasets) != ds:
            raise InputError("benchmark results to report together must cover the same datasets")
    names = [r.strategy for r in results]
    ref = names[0] if reference is None else str(reference)
    if ref not in names:
        raise InputError(f"reference must be one of the benchmarked strategies ({', '.join(names)}); got {ref!r}")
    index = {d: i for i, d in enumerate(arrays.datasets)}
    rows = [index[d] if d in index else arrays.row(d) for d in ds]  # row() names an unknown dataset
    sub = arrays if rows == list(range(len(arrays.datasets))) else arrays.take(rows)
    cheapest = cheapest_test(sub)
    metrics = tuple(user_metrics(r, cheapest=cheapest, eps=eps, budgets=budgets) for r in results)
    oracle = oracle_metrics(sub, cheapest=cheapest, eps=eps, budgets=budgets, tmin=results[0].tmin,
                            tmax=results[0].tmax, name="oracle bound")
    refm = metrics[names.index(ref)]
    comps = []
    for m in metrics:
        if m.strategy == ref:
            continue
        for label, values in m.columns().items():
            is_time = label == "time_to_eps"
            w, t, l, sign, wil = compare_metric(
                values, refm.columns()[label], time=is_time,
                reached=m.eps_reached if is_time else None, reached_ref=refm.eps_reached if is_time else None)
            total, rtotal, otot = m.total(label), refm.total(label), oracle.total(label)
            gap = (rtotal - total) / (rtotal - otot) if rtotal - otot > 1e-12 else float("nan")
            comps.append(MetricComparison(metric=label, strategy=m.strategy, reference=ref, wins=w, ties=t, losses=l,
                                          sign=sign, wilcoxon=wil, total=total, reference_total=rtotal,
                                          oracle_total=otot, gap_closed=float(gap)))
    return MetricsReport(eps=eps, budgets=budgets, reference=ref, metrics=metrics, oracle=oracle,
                         comparisons=tuple(comps), time_axis=time_axis, task=str(task))
