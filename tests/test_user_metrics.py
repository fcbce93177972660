"""User-facing metrics on a hand-computed trace (time to eps, loss at budget, MIL to budget, a censored
timeout, eps never reached), the oracle bounds, the comparison tests against scipy, and timeouts as
"at least that slow" in the arrays, the environment and the strategies."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from algorank.evaluation.meta.benchmark import benchmark_strategies, leave_one_dataset_out
from algorank.recommender.kernel.environments import SimulatedEnvironment, meta_arrays
from algorank.evaluation.meta.user_metrics import (
    check_budgets,
    check_eps,
    compare_metric,
    loss_at_rows,
    mil_to_budget_rows,
    time_to_eps_rows,
)
from algorank.metadata.dataset import MetaDataset
from algorank.metadata.errors import InputError
from algorank.recommender.base import OrderPolicy
from algorank.recommender.registry import parse_strategy

LOG2 = math.log10(2)


class FixedOrder:
    """A strategy that tests learners in a given order whatever the prior data (generic path only)."""

    def __init__(self, name, order):
        self.name, self.order = name, list(order)

    def fit(self, meta):
        return self

    def policy(self, dataset_info=None):
        return OrderPolicy(self.order)


def run(d, l, a, t, status="ok", fold=0):
    return dict(dataset=d, learner=l, repeat=0, fold=fold, accuracy=a, fit_time=t, predict_time=0.0, status=status)


def hand_meta():
    # "new" (majority 0.5): A .80 in 2 s, B times out after 5 s (a lower bound), C .895 in 3 s,
    # D .90 in 10 s, E .60 in 1 s.  "old" is only there to train on.
    rows = [run("new", "A", 0.80, 2.0), run("new", "B", np.nan, 5.0, "timeout"), run("new", "C", 0.895, 3.0),
            run("new", "D", 0.90, 10.0), run("new", "E", 0.60, 1.0)]
    rows += [run("old", l, a, 1.0) for l, a in zip("ABCDE", (0.7, 0.8, 0.75, 0.9, 0.6))]
    ds = pd.DataFrame({"dataset": ["new", "old"], "majority_fraction": [0.5, 0.5]})
    return MetaDataset(pd.DataFrame(rows), ds)


BUDGETS = (1.0, 5.0, 10.0, 100.0)


def hand_suite():
    full = FixedOrder("full", "ABCDE")
    short = FixedOrder("short", "EAB")  # stops before any learner within eps of the best
    return benchmark_strategies([full, short], hand_meta(), test_datasets=["new"], tmin=1, tmax=100, eps=1.0,
                                budgets=BUDGETS)


def test_timeout_is_a_censored_test_in_the_arrays_and_the_environment():
    arrays = meta_arrays(hand_meta())
    i, j = arrays.row("new"), arrays.learners.index("B")
    assert arrays.censored[i, j] and math.isnan(arrays.accuracy[i, j]) and arrays.seconds[i, j] == 5.0
    assert arrays.testable[i, j] and not arrays.available[i, j]
    env = SimulatedEnvironment(arrays, "new")
    assert "B" in env.available and env.censored == ("B",) and env.best_accuracy == 0.90
    obs = env.test("B")
    assert (obs.status, obs.seconds) == ("timeout", 5.0) and math.isnan(obs.accuracy)
    # strategies see it as "at least 5 s, nothing better than the majority class"
    prior = arrays.censored_as_baseline()
    assert prior.accuracy[i, j] == 0.5 and prior.available[i, j] and not prior.censored.any()


def test_partly_timed_out_test_costs_all_its_folds():
    # 4 folds ok in 1 s each, the 5th killed at the cap: its share raised to 16 s -> mean 4 s, no accuracy
    rows = [run("d", "X", 0.9, 1.0, fold=f) for f in range(4)] + [run("d", "X", np.nan, 16.0, "timeout", fold=4)]
    rows += [run("d", "Y", 0.8, 2.0, fold=f) for f in range(5)]
    arrays = meta_arrays(MetaDataset(pd.DataFrame(rows)))
    assert arrays.censored[0].tolist() == [True, False]
    assert arrays.seconds[0, 0] == pytest.approx(4.0) and math.isnan(arrays.accuracy[0, 0])
    assert meta_arrays(MetaDataset(pd.DataFrame(rows)), time_kind="fit_predict_time").seconds[0, 0] == pytest.approx(4.0)


def test_metrics_on_a_hand_computed_trace():
    suite = hand_suite()
    full = suite.metrics.get("full")
    # the timed-out B is in the trace: it costs 5 s and finds nothing
    r = suite.results[0]
    assert [r.learners[k] for k in r.sequences[0]] == list("ABCDE")
    assert r.seconds[0].tolist() == [2.0, 5.0, 3.0, 10.0, 1.0] and math.isnan(r.accuracies[0, 1])
    # time to eps (0.89): C finishes at 2 + 5 + 3 = 10 s
    assert full.time_to_eps.tolist() == [10.0] and full.eps_reached.tolist() == [True]
    # loss at 1 s: nothing finished, 100 (.9 - .5) = 40; at 5 s: A (.8) -> 10; at 10 s: C (.895, finished at
    # exactly 10 s) -> 0.5; at 100 s: D -> 0
    assert full.loss_at[0].tolist() == pytest.approx([40.0, 10.0, 0.5, 0.0], abs=1e-12)
    # MIL from the cheapest test (E, 1 s) to B: [1, 1]: empty window -> the loss at 1 s;
    # [1, 5]: 40 on [1, 2), 10 on [2, 5] over log10 5; [1, 100]: 40, 10, .5, 0 on log10 2, 5, 2, 5
    mil5 = (40 * LOG2 + 10 * (math.log10(5) - LOG2)) / math.log10(5)
    mil100 = (40 * LOG2 + 10 * math.log10(5) + 0.5 * LOG2) / 2
    assert full.mil_to_budget[0].tolist() == pytest.approx([40.0, mil5, 10 * (1 - LOG2) / 1 + 40 * LOG2, mil100],
                                                           rel=1e-12)
    assert full.mil[0] == pytest.approx(mil100, rel=1e-12)  # the benchmark window is [1, 100] too
    assert full.total_time.tolist() == [21.0]


def test_eps_never_reached_is_censored_at_the_total_time_and_loses():
    suite = hand_suite()
    short = suite.metrics.get("short")
    assert short.time_to_eps.tolist() == [8.0] and short.eps_reached.tolist() == [False]  # 1 + 2 + 5 s
    assert short.n_censored == 1
    assert short.loss_at[0].tolist() == pytest.approx([30.0, 10.0, 10.0, 10.0])
    d = suite.to_dict()["user_metrics"]
    assert d["strategies"]["short"]["eps_not_reached"] == 1
    assert d["strategies"]["short"]["per_dataset"]["new"]["eps_reached"] is False
    c = d["comparisons"]["short"]["time_to_eps"]
    assert (c["wins"], c["ties"], c["losses"]) == (0, 0, 1)  # 8 s < 10 s, but never reached: a loss
    assert d["reference"] == "full"


def test_oracle_bounds_by_hand():
    o = hand_suite().metrics.oracle
    assert o.time_to_eps.tolist() == [3.0]  # C alone is within 1 point of D
    # loss at 1 s: E (.6, 1 s) -> 30; at 5 s: C (.895, 3 s) -> .5; at 10 s: D -> 0
    assert o.loss_at[0].tolist() == pytest.approx([30.0, 0.5, 0.0, 0.0])
    # smallest MIL on [1, 100]: A (done at 2 s), C (5 s), D (15 s): 40 on [1, 2), 10 on [2, 5), .5 on [5, 15);
    # e.g. E, A, C, D gives 8.77 and C, D gives 9.70
    assert o.mil[0] == pytest.approx((40 * LOG2 + 10 * math.log10(2.5) + 0.5 * math.log10(3)) / 2, rel=1e-12)
    assert o.mil[0] < hand_suite().metrics.get("full").mil[0]


def test_row_functions_vectorised():
    acc = np.array([[0.5, np.nan, 0.9], [0.95, 0.2, np.nan]])
    sec = np.array([[1.0, 2.0, 3.0], [0.5, 0.5, 0.0]])
    best = np.array([0.9, 0.95])
    t, reached = time_to_eps_rows(acc, sec, best, eps=1.0)
    assert t.tolist() == [6.0, 0.5] and reached.all()
    t, reached = time_to_eps_rows(acc, sec, np.array([0.99, 0.96]), eps=1.0)  # 0.95 >= 0.96 - 0.01
    assert t.tolist() == [6.0, 0.5] and reached.tolist() == [False, True]
    t, reached = time_to_eps_rows(acc, sec, np.array([0.99, 0.97]), eps=1.0)
    assert t.tolist() == [6.0, 1.0] and not reached.any()  # never within eps: the total time
    assert loss_at_rows(acc, sec, best, np.array([0.5, 0.5]), 2.0).tolist() == pytest.approx([40.0, 0.0])
    m = mil_to_budget_rows(acc, sec, best, np.array([0.5, 0.5]), np.array([1.0, 20.0]), 10.0)
    assert m[0] == pytest.approx(40 * math.log10(6))  # 40 on [1, 6) (the .5 and the failed test find nothing)
    assert m[1] == 0.0  # cheapest test (20 s) after the budget: the loss at 10 s


def test_compare_metric_matches_scipy():
    rng = np.random.default_rng(3)
    ref = rng.uniform(1, 10, size=30)
    x = ref * np.exp(rng.normal(0.2, 0.5, size=30))
    x[:3] = ref[:3] * 1.01  # ties within 5 %
    w, t, l, sign, wil = compare_metric(x, ref, time=True)
    assert (w, t, l) == (int((x < ref * 0.95).sum()), 3 + int(((abs(x - ref) <= 0.05 * ref))[3:].sum()),
                         int((x > ref * 1.05).sum()))
    assert sign.pvalue == pytest.approx(stats.binomtest(w, w + l, 0.5).pvalue, rel=1e-12)
    expected = stats.wilcoxon(np.log(ref) - np.log(x), zero_method="pratt", method="exact").pvalue
    assert wil.pvalue == pytest.approx(expected, rel=1e-9)
    losses = np.array([0.0, 1.0, 2.0, 0.0, 5.0])
    w, t, l, sign, wil = compare_metric(losses, np.array([0.0, 2.0, 1.0, 0.04, 7.0]), time=False)
    assert (w, t, l) == (2, 2, 1)  # 0 vs 0.04 is within 0.05 points


def test_bad_eps_and_budgets():
    with pytest.raises(InputError, match="eps"):
        check_eps(-1)
    with pytest.raises(InputError, match="budgets"):
        check_budgets([10, 0])
    assert check_budgets([60, 1, 10, 10]) == (1.0, 10.0, 60.0)
    with pytest.raises(InputError, match="reference"):
        benchmark_strategies([FixedOrder("a", "AB")], hand_meta(), test_datasets=["new"], reference="b")


def censored_meta(seed=0, n_datasets=8, n_learners=5):
    rng = np.random.default_rng(seed)
    rows = []
    for d in range(n_datasets):
        for j in range(n_learners):
            if rng.random() < 0.1:
                continue  # missing cell
            t = float(rng.lognormal(0, 1))
            if rng.random() < 0.15:
                rows.append(run(f"d{d}", f"L{j}", np.nan, 10 * t, "timeout"))
            else:
                rows.append(run(f"d{d}", f"L{j}", float(rng.uniform(0.5, 1.0)), t))
    ds = pd.DataFrame({"dataset": [f"d{d}" for d in range(n_datasets)],
                       "majority_fraction": rng.uniform(0.3, 0.6, n_datasets),
                       "n_instances": rng.integers(100, 5000, n_datasets)})
    return MetaDataset(pd.DataFrame(rows), ds)


@pytest.mark.parametrize("spec", ["ar:p=0", "ar:p=1/4", "at:p=1/16,sim=none", "at:p=0,sim=tested", "fastest",
                                  "best-accuracy", "random:seed=2"])
@pytest.mark.parametrize("test", [None, ["d1", "d5"]])
def test_fast_path_equals_generic_path_with_timeouts(spec, test):
    meta = censored_meta()
    assert meta_arrays(meta).censored.sum() >= 3
    fast = leave_one_dataset_out(parse_strategy(spec), meta, tmin=0.01, tmax=100, test_datasets=test)
    slow = leave_one_dataset_out(parse_strategy(spec), meta, tmin=0.01, tmax=100, test_datasets=test, fast=False)
    assert (fast.path, slow.path) == ("fast", "generic")
    np.testing.assert_array_equal(fast.sequences, slow.sequences)
    np.testing.assert_array_equal(fast.mil, slow.mil)
    # a censored learner is tested (it is testable) and costs its time
    arrays = meta_arrays(meta)
    for i, d in enumerate(fast.datasets):
        tested = [fast.learners[k] for k in fast.sequences[i] if k >= 0]
        row = arrays.row(d)
        assert set(tested) <= {arrays.learners[k] for k in np.flatnonzero(arrays.testable[row])}


def test_timeouts_make_a_learner_slow_not_missing():
    # X is fastest where it runs, but timed out (>= 50 s) on two of three prior datasets; Y takes 1 s
    rows = [run("p1", "X", 0.9, 0.1), run("p2", "X", np.nan, 50.0, "timeout"), run("p3", "X", np.nan, 50.0, "timeout")]
    rows += [run(d, "Y", 0.8, 1.0) for d in ("p1", "p2", "p3")]
    meta = MetaDataset(pd.DataFrame(rows), pd.DataFrame({"dataset": ["p1", "p2", "p3"], "majority_fraction": 0.5}))
    assert parse_strategy("fastest").fit(meta).order_ == ["Y", "X"]  # mean time (0.1 + 50 + 50) / 3 > 1
    assert parse_strategy("best-accuracy").fit(meta).order_[0] == "Y"
    assert parse_strategy("ar:p=0").fit(meta).order_ == ["Y", "X"]


def test_live_plan_expects_a_timed_out_learner_to_be_slow():
    from algorank.recommender.live.recommend import expected_performance

    rows = [run("p1", "X", np.nan, 50.0, "timeout"), run("p1", "Y", 0.8, 1.0)]
    meta = MetaDataset(pd.DataFrame(rows), pd.DataFrame({"dataset": ["p1"], "majority_fraction": [0.6],
                                                         "n_instances": [100]}))
    exp = expected_performance(meta, {"n_instances": 100}, folds=5, overhead=0.0)
    assert exp["X"] == (0.6, 250.0) and exp["Y"] == (0.8, 5.0)
