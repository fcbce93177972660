"""Leave-one-dataset-out benchmark: a hand-computed 3-learner 2-dataset case, fast path ==
generic path, the oracle against brute force, P sweep on the snapshot, nested tuning, tests."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from algorank.evaluation.meta.benchmark import (
    PAPER_P_GRID,
    benchmark_strategies,
    compare_strategies,
    default_window,
    leave_one_dataset_out,
    p_sweep,
    tune_p_nested,
)
from algorank.recommender.kernel.environments import SimulatedEnvironment, SkipUnavailable
from algorank.recommender.kernel.loss_time import LossTimeCurve
from algorank.recommender.kernel.trace import run_policy
from algorank.metadata.dataset import MetaDataset
from algorank.metadata.errors import InputError
from algorank.recommender.average_ranking import AverageRanking
from algorank.recommender.baselines import Oracle, oracle_order
from algorank.recommender.base import OrderPolicy
from algorank.recommender.registry import make_ar, parse_strategy


def make_meta(cells, majority):
    rows = [dict(dataset=d, learner=l, repeat=0, fold=0, accuracy=a, fit_time=t, predict_time=0.0, status="ok")
            for (d, l), (a, t) in cells.items()]
    ds = pd.DataFrame({"dataset": list(majority), "majority_fraction": list(majority.values())})
    return MetaDataset(pd.DataFrame(rows), ds)


def hand_meta():
    # d1: majority 0.5;      A .80 in 10 s, B .90 in 100 s, C .60 in 0.1 s
    # d2: majority unknown;  A .70 in 1 s,  B .75 in 1 s,   C .95 in 1000 s
    cells = {("d1", "A"): (0.80, 10.0), ("d1", "B"): (0.90, 100.0), ("d1", "C"): (0.60, 0.1),
             ("d2", "A"): (0.70, 1.0), ("d2", "B"): (0.75, 1.0), ("d2", "C"): (0.95, 1000.0)}
    return make_meta(cells, {"d1": 0.5, "d2": float("nan")})


@pytest.mark.parametrize("fast", [True, False])
def test_hand_computed_mil_p0(fast):
    # Window [1, 1000] s, i.e. u = log10 t in [0, 3].
    # Held out d1, fitted on d2 (P = 0): order C (.95), B (.75), A (.70).
    #   initial loss 100 (0.9 - 0.5) = 40; C done at 0.1 s: loss 100 (0.9 - 0.6) = 30;
    #   B done at 100.1 s: loss 0.  MIL = 30 * log10(100.1) / 3 = 10 log10(100.1) = 20.00434
    # Held out d2, fitted on d1: order B (.9), A (.8), C (.6).  Majority unknown -> baseline
    #   = worst learner .70: initial 25.  B done at 1 s (= tmin): loss 100 (.95 - .75) = 20;
    #   A done at 2 s: still 20; C done at 1002 s > tmax.  MIL = 20 * 3 / 3 = 20
    r = leave_one_dataset_out(AverageRanking(p=0), hand_meta(), tmin=1, tmax=1000, fast=fast)
    assert r.datasets == ("d1", "d2")
    assert r.mil[0] == pytest.approx(10 * math.log10(100.1), rel=1e-13)
    assert r.mil[1] == pytest.approx(20.0, rel=1e-13)
    assert r.mean_mil == pytest.approx((10 * math.log10(100.1) + 20) / 2, rel=1e-13)
    assert r.baseline_kind == ("majority", "worst-learner")
    assert [r.learners[j] for j in r.sequences[0]] == ["C", "B", "A"]
    assert r.curve("d2").initial_loss == pytest.approx(25.0)
    # Spearman with the ideal order by accuracy: d1 tested C, B, A (true ranks 3, 1, 2) -> rho = -0.5
    assert r.spearman[0] == pytest.approx(-0.5)
    assert r.path == ("fast" if fast else "generic")


def test_hand_computed_mil_p_half():
    # P = 1/2.  On d2: A3R' A .70, B .75, C .95/sqrt(1000) = .030 -> order for d1: B, A, C.
    #   d1: B done at 100 s: loss 40 on [0, 2], then 0 -> MIL 80/3 = 26.667
    # On d1: A .8/sqrt(10) = .253, B .9/10 = .09, C .6/sqrt(.1) = 1.897 -> order for d2: C, A, B.
    #   d2: C done at 1000 s = tmax: loss 25 on the whole window -> MIL 25
    r = leave_one_dataset_out(AverageRanking(p=0.5), hand_meta(), tmin=1, tmax=1000)
    assert r.mil.tolist() == pytest.approx([80 / 3, 25.0], rel=1e-13)


def synthetic_meta(n_datasets=12, n_learners=6, seed=0):
    rng = np.random.default_rng(seed)
    cells, majority = {}, {}
    for d in range(n_datasets):
        name = f"d{d:02d}"
        majority[name] = float("nan") if d % 4 == 0 else round(rng.uniform(0.3, 0.6), 3)
        for j in range(n_learners):
            if rng.random() < 0.15 and j > 0:
                continue  # missing cell
            acc = round(float(rng.choice([0.7, 0.8, rng.uniform(0.5, 1.0)])), 4)  # ties
            t = 0.0 if rng.random() < 0.05 else float(10 ** rng.uniform(-3, 3))  # some zero times
            cells[(name, f"L{j}")] = (acc, t)
    return make_meta(cells, majority)


SPECS = ["ar:p=0", "ar:p=1/64", "ar:p=1/4", "fastest", "best-accuracy", "random:seed=4", "oracle"]


@pytest.mark.parametrize("spec", SPECS)
def test_fast_path_equals_generic_path_exactly(spec):
    meta = synthetic_meta(n_datasets=8)
    fast = leave_one_dataset_out(parse_strategy(spec), meta, tmin=0.01, tmax=100)
    slow = leave_one_dataset_out(parse_strategy(spec), meta, tmin=0.01, tmax=100, fast=False)
    assert fast.path == "fast" and slow.path == "generic"
    assert np.array_equal(fast.sequences, slow.sequences)
    assert np.array_equal(fast.mil, slow.mil)
    assert np.array_equal(fast.spearman, slow.spearman, equal_nan=True)


def test_generic_path_matches_a_hand_run_trace():
    # The benchmark's per-dataset MIL equals the MIL of the trace that run_policy produces.
    meta = synthetic_meta(seed=2)
    res = leave_one_dataset_out(AverageRanking(p=1 / 32), meta, tmin=0.01, tmax=100)
    d = res.datasets[3]
    ar = AverageRanking(p=1 / 32).fit(meta.exclude(datasets=[d]))
    env = SimulatedEnvironment(meta, d)
    trace = run_policy(SkipUnavailable(ar.policy({"dataset": d}), env.available), env, dataset=d)
    from algorank.recommender.kernel.loss_time import loss_time_curve

    assert loss_time_curve(trace, env).mil(tmin=0.01, tmax=100) == res.mil[3]
    assert set(trace.learners) == set(env.available)


def test_skip_unavailable_never_tests_missing_learners():
    meta = make_meta({("d1", "A"): (0.8, 1.0), ("d1", "B"): (0.9, 1.0), ("d2", "A"): (0.7, 1.0)},
                     {"d1": 0.5, "d2": 0.5})
    env = SimulatedEnvironment(meta, "d2")
    assert env.available == ("A",)
    with pytest.raises(InputError, match="no result"):
        env.test("B")
    trace = run_policy(SkipUnavailable(OrderPolicy(["B", "A"]), env.available), env, dataset="d2")
    assert trace.learners == ["A"]


def test_random_strategy_is_seeded():
    meta = synthetic_meta(seed=1)
    a = leave_one_dataset_out(parse_strategy("random:seed=3"), meta, tmin=0.01, tmax=100)
    b = leave_one_dataset_out(parse_strategy("random:seed=3"), meta, tmin=0.01, tmax=100)
    c = leave_one_dataset_out(parse_strategy("random:seed=4"), meta, tmin=0.01, tmax=100)
    assert np.array_equal(a.sequences, b.sequences) and np.array_equal(a.mil, b.mil)
    assert not np.array_equal(a.sequences, c.sequences)
    assert parse_strategy("random", random_state=3).seed == 3


def _brute_force_mil(acc, sec, baseline, tmin, tmax):
    best = float(np.max(acc))
    return min(
        LossTimeCurve("x", tuple(map(str, perm)), acc[list(perm)], sec[list(perm)], best, baseline).mil(
            tmin=tmin, tmax=tmax)
        for perm in itertools.permutations(range(len(acc)))
    )


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from([0.5, 0.6, 0.7, 0.8, 0.9, 0.95]), st.sampled_from([0.0, 0.01, 0.1, 1.0, 3.0, 10.0, 100.0, 2000.0])),
             min_size=1, max_size=5),
    st.sampled_from([0.3, 0.65, 0.85]),
    st.sampled_from([(0.01, 100.0), (1.0, 1000.0), (0.5, 20.0)]),
)
def test_oracle_equals_brute_force(cells, baseline, window):
    acc = np.array([a for a, _ in cells])
    sec = np.array([t for _, t in cells])
    order, mil = oracle_order(acc, sec, baseline=baseline, tmin=window[0], tmax=window[1])
    assert sorted(order.tolist()) == list(range(len(acc)))
    brute = _brute_force_mil(acc, sec, baseline, *window)
    realised = LossTimeCurve("x", (), acc[order], sec[order], float(acc.max()), baseline).mil(
        tmin=window[0], tmax=window[1])
    assert mil == pytest.approx(brute, abs=1e-9)
    assert realised == pytest.approx(brute, abs=1e-9)


def test_snapshot_sweep_done_when(snapshot):
    sweep = p_sweep(snapshot, make_strategy=make_ar)
    assert (sweep.tmin, sweep.tmax) == default_window(snapshot) == (0.001, 100.0)
    table = sweep.table()
    mean = table["mean_mil"].to_numpy()
    k = int(np.argmin(mean))
    assert 0 < k < len(PAPER_P_GRID) - 1, table  # interior optimum
    assert mean[-1] > 2.5 * mean[k], table  # AR0 far worse than the best P
    again = p_sweep(snapshot, make_strategy=make_ar)
    assert all(np.array_equal(a.mil, b.mil) and np.array_equal(a.sequences, b.sequences)
               for a, b in zip(sweep.results, again.results))
    oracle = leave_one_dataset_out(Oracle(), snapshot)
    assert (oracle.mil <= sweep.results[k].mil + 1e-9).all()  # a lower bound on every dataset


def test_nested_tuning_matches_brute_force():
    meta = synthetic_meta(n_datasets=8, n_learners=5, seed=6)
    grid = (0.25, 1 / 64, 0.0)
    nested = tune_p_nested(meta, make_strategy=make_ar, grid=grid, tmin=0.01, tmax=100)
    for i, d in enumerate(nested.datasets[:3]):
        inner = p_sweep(meta.exclude(datasets=[d]), make_strategy=make_ar, grid=grid, tmin=0.01, tmax=100)
        p = inner.best_p
        assert nested.chosen_p[i] == p
        outer = leave_one_dataset_out(make_ar(p), meta, tmin=0.01, tmax=100)
        assert nested.mil[i] == outer.mil[list(outer.datasets).index(d)]
    assert sum(nested.p_counts().values()) == len(nested.datasets)


def test_compare_two_strategies_is_wilcoxon():
    meta = synthetic_meta(n_datasets=20, seed=8)
    a = leave_one_dataset_out(make_ar(1 / 16), meta, tmin=0.01, tmax=100)
    b = leave_one_dataset_out(make_ar(0), meta, tmin=0.01, tmax=100)
    c = compare_strategies([a, b])
    d = a.mil - b.mil
    expect = stats.wilcoxon(a.mil, b.mil, zero_method="pratt") if np.any(d != 0) else None
    assert "Wilcoxon" in c.test.method
    if expect is not None:  # same statistic as scipy (p-values differ: evaluation.stats is exact for n <= 50)
        assert c.test.statistic == pytest.approx(expect.statistic)
        assert 0 < c.test.pvalue <= 1
    assert c.posthoc is None and c.names == ("ar:p=1/16", "ar:p=0")


def test_compare_many_strategies_is_friedman_with_posthoc():
    meta = synthetic_meta(n_datasets=20, seed=9)
    suite = benchmark_strategies([parse_strategy(s) for s in ("ar:p=1/16", "ar:p=0", "fastest", "random:seed=0")],
                                 meta, tmin=0.01, tmax=100)
    c = suite.comparison
    x = np.column_stack([r.mil for r in suite.results])
    ranks = np.apply_along_axis(stats.rankdata, 1, x).mean(axis=0)
    n, k = x.shape
    chi2 = 12 * n / (k * (k + 1)) * (np.sum(ranks**2) - k * (k + 1) ** 2 / 4)
    assert c.average_ranks == pytest.approx(ranks)
    assert c.test.statistic == pytest.approx(chi2)
    assert c.posthoc.adjusted.shape == (4, 4)
    d = suite.to_dict()
    assert set(d) >= {"tmin", "tmax", "strategies", "comparison"}
    assert set(d["strategies"]["fastest"]) >= {"mean_mil", "median_mil", "mean_spearman", "per_dataset"}


def test_bad_input():
    one = make_meta({("d1", "A"): (0.8, 1.0), ("d1", "B"): (0.7, 1.0)}, {"d1": 0.5})
    with pytest.raises(InputError, match="at least 2 datasets"):
        leave_one_dataset_out(make_ar(0), one)
    with pytest.raises(InputError, match="tmin must be smaller"):
        leave_one_dataset_out(make_ar(0), hand_meta(), tmin=10, tmax=10)
    with pytest.raises(InputError, match="unknown strategy 'foo'.*known strategies: ar, .*best-accuracy, ei, eit, eiu, fastest"):
        parse_strategy("foo:p=1")
    with pytest.raises(InputError, match="does not take"):
        parse_strategy("fastest:p=1")
    with pytest.raises(InputError, match="P must"):
        parse_strategy("ar:p=3")
    with pytest.raises(InputError, match="grid"):
        p_sweep(hand_meta(), make_strategy=make_ar, grid=())


@pytest.mark.parametrize(
    "spec, message",
    [
        ("ar:p=1/16,min_coverage=lots", "strategy 'ar': min_coverage must be a fraction in [0, 1]; got 'lots'"),
        ("ar:p=1/16,overhead=-1", "strategy 'ar': overhead must be a number >= 0 seconds; got '-1'"),
        ("ar:p=1/16,scale=0", "strategy 'ar': scale must be a number > 0; got '0'"),
        ("at:p=1/16,sharpness=x", "strategy 'at': sharpness must be a positive number; got 'x'"),
        ("lt:passes=2.5", "strategy 'lt': passes must be an integer; got '2.5'"),
        ("multi2test:alpha=nan", "strategy 'multi2test': alpha must be a number in (0, 1); got 'nan'"),
        ("random:seed=-3", "strategy 'random': seed must be an integer >= 0; got '-3'"),
    ],
)
def test_numeric_spec_parameters_give_one_clear_error(spec, message):
    with pytest.raises(InputError) as err:
        parse_strategy(spec)
    assert str(err.value) == message


def test_numeric_spec_parameters_are_parsed():
    from algorank.recommender.registry import pop_number

    params = {"alpha": "0.01", "passes": "3"}
    assert pop_number(params, "alpha", 0.05, strategy="x") == 0.01
    assert pop_number(params, "passes", 2, strategy="x", kind=int) == 3
    assert pop_number(params, "absent", 7, strategy="x") == 7
    assert params == {}


@pytest.mark.parametrize("spec", ["ar:p=1/4", "ar:p=1/64", "at:p=1/4,sim=tested"])
def test_live_time_model_fast_path_equals_generic_path(spec):
    # Under a live time model the fast path ranks on transformed arrays while the generic
    # path fits on the MetaDataset with the strategy's own with_time_model: same orders.
    from algorank.recommender.kernel.time_model import TimeModel

    meta = synthetic_meta(n_datasets=8, seed=3)
    model = TimeModel(overhead=0.5, scale=5)
    fast = leave_one_dataset_out(parse_strategy(spec), meta, tmin=0.1, tmax=1000, time_model=model)
    slow = leave_one_dataset_out(parse_strategy(spec), meta, tmin=0.1, tmax=1000, time_model=model, fast=False)
    assert fast.path == "fast" and slow.path == "generic"
    assert np.array_equal(fast.sequences, slow.sequences) and np.array_equal(fast.mil, slow.mil)
    # the simulated tests cost the live time: 5 x t + 0.5 s each
    plain = leave_one_dataset_out(parse_strategy(spec), meta, tmin=0.1, tmax=1000)
    valid = plain.sequences[0] >= 0
    assert fast.seconds[0][valid].min() >= 0.5


def test_live_time_model_changes_the_a3r_order():
    # two learners: L0 accurate and 10x slower to fit than L1; with an overhead that dwarfs
    # both fit times, the live costs are almost equal and A3R(P=1/4) prefers the accurate one
    cells = {}
    for d in range(4):
        cells[(f"d{d}", "L0")] = (0.90, 0.01)
        cells[(f"d{d}", "L1")] = (0.85, 0.001)
    meta = make_meta(cells, {f"d{d}": 0.5 for d in range(4)})
    from algorank.recommender.kernel.time_model import TimeModel

    plain = leave_one_dataset_out(AverageRanking(p=1 / 4), meta, tmin=1e-4, tmax=10)
    live = leave_one_dataset_out(AverageRanking(p=1 / 4), meta, tmin=1e-4, tmax=10,
                                 time_model=TimeModel(overhead=1.0, scale=5))
    assert list(plain.sequences[0]) == [1, 0] and list(live.sequences[0]) == [0, 1]


def test_ctrl_c_inside_a_simulated_trace_stops_the_benchmark():
    # regression: run_policy used to swallow KeyboardInterrupt for every caller, so a Ctrl-C that
    # landed inside one dataset's simulated trace cut that trace short and the benchmark went on
    class Interrupting:
        name = "interrupting"

        def fit(self, meta):
            return self

        def policy(self, info):
            return self

        def next(self, history):
            raise KeyboardInterrupt

    rows = [{"dataset": d, "learner": l, "repeat": 0, "fold": 0, "accuracy": a, "fit_time": t}
            for d in ("d1", "d2", "d3") for l, a, t in (("A", 0.9, 1.0), ("B", 0.8, 0.1))]
    meta = MetaDataset(pd.DataFrame(rows))
    env = SimulatedEnvironment(meta, "d1")
    with pytest.raises(KeyboardInterrupt):
        run_policy(Interrupting(), env, dataset="d1")
    with pytest.raises(KeyboardInterrupt):
        benchmark_strategies([make_ar(0.0), Interrupting()], meta)
    trace = run_policy(Interrupting(), env, dataset="d1", keep_on_interrupt=True)  # the live loop's choice
    assert trace.stopped == "interrupted" and trace.observations == ()
