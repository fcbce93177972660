"""The published peer methods as strategies (oboe, portfolio, pmf, zeroshot): hand-computed cases of
their building blocks, invariants of their policies, the spec syntax, and cross-checks against the
reference implementations where those are importable."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from algorank.evaluation.meta.benchmark import leave_one_dataset_out
from algorank.recommender.kernel.environments import SimulatedEnvironment, SkipUnavailable, meta_arrays
from algorank.recommender.kernel.trace import Observation, run_policy
from algorank.metadata.dataset import MetaDataset
from algorank.metadata.errors import InputError
from algorank.recommender.peers import oboe, pmf, portfolio, zeroshot
from algorank.recommender.registry import parse_strategy

PEER_SPECS = ["oboe", "oboe:design=greedy", "portfolio", "portfolio:rank", "pmf", "pmf:per_second", "zeroshot"]


def _toy_meta(n_datasets=12, seed=0):
    """Learners A (fast, weak), B (medium), C (slow, best on large data), D (fails on d0)."""
    rng = np.random.default_rng(seed)
    rows, ds = [], []
    for d in range(n_datasets):
        n = 100 * (d + 1)
        base = {"A": (0.70, 0.001 * n), "B": (0.80, 0.01 * n), "C": (0.75 + 0.02 * (d % 6), 0.05 * n),
                "D": (0.78, 0.002 * n)}
        for l, (a, t) in base.items():
            if l == "D" and d == 0:
                continue
            rows.append({"dataset": f"d{d}", "learner": l, "repeat": 0, "fold": 0,
                         "accuracy": float(np.clip(a + rng.normal(0, 0.01), 0, 1)), "fit_time": t})
        ds.append({"dataset": f"d{d}", "n_instances": n, "n_features": 5 + d, "n_classes": 2 + d % 3,
                   "majority_fraction": 0.5, "nominal_fraction": 0.1 * (d % 4)})
    return MetaDataset(pd.DataFrame(rows), pd.DataFrame(ds))


# ---------------------------------------------------------------------------------------------- oboe
def test_approx_matrix_rank_counts_singular_values_above_the_threshold():
    a = np.diag([1.0, 0.5, 0.04, 0.01])
    assert oboe.approx_matrix_rank(a, 0.05) == 2
    assert oboe.approx_matrix_rank(a, 0.03) == 3
    assert oboe.approx_matrix_rank(a, 0.01) == 4


def test_impute_recovers_a_rank_one_row_from_one_entry():
    E = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, 1.0, 1.5]])
    vt = np.linalg.svd(E)[2]
    row = np.array([5.0, np.nan, np.nan])
    np.testing.assert_allclose(oboe.impute(vt, np.nan_to_num(row), [0], rank=1), [5.0, 10.0, 15.0])


def test_solve_design_hand_cases():
    Y = np.eye(2)
    # budget inactive: v = 1 without solving
    np.testing.assert_array_equal(oboe.solve_design(np.array([1.0, 1.0]), 10.0, 1, Y), [1.0, 1.0])
    # max log v1 + log v2 s.t. v1 + v2 <= 1: v = (1/2, 1/2)
    np.testing.assert_allclose(oboe.solve_design(np.array([1.0, 1.0]), 1.0, 1, Y), [0.5, 0.5], atol=1e-3)
    # v1 + 3 v2 <= 2, v <= 1: 1/v1 = lam, 1/v2 = 3 lam -> v1 = 3 v2, capped at 1 -> v = (1, 1/3)
    np.testing.assert_allclose(oboe.solve_design(np.array([1.0, 3.0]), 2.0, 1, Y), [1.0, 1 / 3], atol=1e-3)
    # n_cores multiplies the budget
    np.testing.assert_array_equal(oboe.solve_design(np.array([1.0, 3.0]), 2.0, 2, Y), [1.0, 1.0])


def test_solve_design_exact_hand_cases_and_optimality():
    Y = np.eye(2)
    np.testing.assert_array_equal(oboe.solve_design_exact(np.array([1.0, 1.0]), 10.0, 1, Y), [1.0, 1.0])
    np.testing.assert_allclose(oboe.solve_design_exact(np.array([1.0, 1.0]), 1.0, 1, Y), [0.5, 0.5], atol=1e-5)
    np.testing.assert_allclose(oboe.solve_design_exact(np.array([1.0, 3.0]), 2.0, 1, Y), [1.0, 1 / 3], atol=1e-3)
    # two identical columns share the budget: the optimum is a segment, the barrier ends at its centre
    Y2 = np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    np.testing.assert_allclose(oboe.solve_design_exact(np.ones(3), 1.5, 1, Y2), [0.375, 0.375, 0.75], atol=1e-3)
    # a random design: feasible, and its objective matches SLSQP run to convergence (KKT to 1e-6)
    rng = np.random.default_rng(3)
    Y = rng.normal(size=(4, 30))
    t = rng.uniform(0.1, 1.0, size=30)
    v = oboe.solve_design_exact(t, 2.0, 1, Y)
    assert t @ v <= 2.0 + 1e-9 and v.min() >= 0 and v.max() <= 1
    ref = oboe.solve_design(t, 2.0, 1, Y, maxiter=2000)
    obj = lambda w: -np.linalg.slogdet((Y * w) @ Y.T)[1]
    assert obj(v) <= obj(ref) + 1e-6 and obj(v) >= obj(ref) - 1e-3
    # KKT: a multiplier lam with grad_i + lam t_i >= 0 where v_i = 0 and <= 0 where v_i = 1
    g = -np.einsum("ij,ik,kj->j", Y, np.linalg.inv((Y * v) @ Y.T), Y)
    free = (v > 1e-3) & (v < 1 - 1e-3)
    lam = np.median(-g[free] / t[free])
    np.testing.assert_allclose(g[free] + lam * t[free], 0.0, atol=1e-3)
    assert np.all(g[v <= 1e-3] + lam * t[v <= 1e-3] >= -1e-3) and np.all(g[v >= 1 - 1e-3] + lam * t[v >= 1 - 1e-3] <= 1e-3)


def test_tunable_knobs_reach_the_fitted_peers():
    meta = _toy_meta()
    part = meta.subset(datasets=[f"d{d}" for d in range(1, 12)])
    # oboe's threshold sets the initial rank: threshold 1 keeps only the largest singular value
    assert parse_strategy("oboe:threshold=1").fit(part).rank0_ == 1
    assert parse_strategy("oboe:threshold=1").name == "oboe:threshold=1"
    assert parse_strategy("oboe:threshold=0.001").fit(part).rank0_ >= parse_strategy("oboe").fit(part).rank0_
    # pmf's n_init: the warm start is that many learners
    s = parse_strategy("pmf:n_init=2").fit(part)
    first, near = s._warm_start(meta.dataset_info("d0"))
    assert len(near) == 2 and len(first) <= 2 and parse_strategy("pmf:n_init=2").name == "pmf:n_init=2"
    # zeroshot's regret bound: a looser bound never gives a longer portfolio
    tight, loose = (parse_strategy(f"zeroshot:regret={r}").fit(part) for r in (0.0, 0.5))
    assert len(loose.portfolio_) <= len(tight.portfolio_)
    assert parse_strategy("zeroshot:regret=0.5").name == "zeroshot:regret=0.5"


def test_oboe_solver_knob():
    assert parse_strategy("oboe:solver=slsqp").name == "oboe:solver=slsqp"
    assert parse_strategy("oboe").solver == "auto" and parse_strategy("oboe:solver=exact").solver == "exact"
    meta = _toy_meta()
    for spec in ("oboe:solver=slsqp", "oboe:solver=exact"):
        s = parse_strategy(spec).fit(meta.subset(datasets=[f"d{d}" for d in range(1, 12)]))
        env = SimulatedEnvironment(meta_arrays(meta), "d0")
        trace = run_policy(SkipUnavailable(s.policy(meta.dataset_info("d0")), env.available), env, dataset="d0")
        assert sorted(o.learner for o in trace.observations) == sorted(env.available)


def test_pivot_columns_time_qr_and_greedy_cases():
    A = np.array([[1.0, 0.0, 0.7], [0.0, 1.0, 0.7]])
    cols, t_sum, case = oboe.pivot_columns_time(A, np.array([0.1, 0.1, 10.0]), 1.0, rank=2)
    assert case == "qr_initialization" and sorted(cols) == [0, 1] and t_sum == pytest.approx(0.2)
    cols, t_sum, case = oboe.pivot_columns_time(A, np.array([0.3, 0.6, 1.0]), 1.0, rank=2)
    assert case == "greedy_initialization" and cols == [0, 1] and t_sum == pytest.approx(0.9)


def test_greedy_selection_adds_information_per_second_within_the_budget():
    Y = np.array([[1.0, 0.0, 1.0, 0.1], [0.0, 1.0, 1.0, 0.1]])
    t = np.array([0.1, 0.1, 0.5, 0.01])
    # from X = I: y2 gives 2 / 0.5 = 4 per second, y3 gives 0.02 / 0.01 = 2: y2 first, then y3
    assert oboe.greedy_selection_with_time(Y, t, [0, 1], 0.2, 1.0) == [0, 1, 2, 3]
    # y2 no longer fits: only y3
    assert oboe.greedy_selection_with_time(Y, t, [0, 1], 0.2, 0.5) == [0, 1, 3]
    assert oboe.greedy_selection_with_time(Y, t, [0, 1], 1.0, 0.5) == []


def test_runtime_regression_reproduces_a_polynomial_of_rows_and_columns():
    # small sizes keep the raw cubic features well conditioned (OBOE regresses on unscaled sizes)
    rows = np.array([2, 3, 4, 5, 6, 8, 10, 12, 15, 18, 21, 25, 30, 35, 40, 7, 9, 11, 13, 17, 23, 29, 33], dtype=float)
    cols = np.arange(len(rows)) % 7 + 1.0
    log_t = np.column_stack([-3 + 0.01 * rows + 0.05 * cols, 0.5 * np.log(rows) + 0.001 * rows**2 * cols])
    m = oboe.RuntimeRegression(3).fit(np.column_stack([rows, cols]), log_t)
    np.testing.assert_allclose(m.predict([20.0, 5.0]), np.exp([-3 + 0.2 + 0.25, 0.5 * np.log(20.0) + 2.0]),
                               rtol=2e-3)
    # exactly OBOE's construction: PolynomialFeatures(3) of (rows, columns, log rows), LinearRegression
    from sklearn.linear_model import LinearRegression
    from sklearn.preprocessing import PolynomialFeatures

    poly = PolynomialFeatures(3).fit_transform(np.column_stack([rows, cols, np.log(rows)]))
    ref = LinearRegression().fit(poly, log_t[:, 1]).predict(PolynomialFeatures(3).fit_transform([[20.0, 5.0, np.log(20.0)]]))
    assert m.predict([20.0, 5.0])[1] == pytest.approx(math.exp(ref[0]), rel=1e-9)
    # a learner without any recorded time has no model: infinitely slow
    log_t[:, 1] = np.nan
    assert np.isinf(oboe.RuntimeRegression(3).fit(np.column_stack([rows, cols]), log_t).predict([20.0, 5.0])[1])


def test_oboe_first_round_follows_the_design_and_every_learner_is_tested_once():
    meta = _toy_meta()
    s = parse_strategy("oboe").fit(meta.subset(datasets=[f"d{d}" for d in range(1, 12)]))
    assert s.rank0_ >= 1 and set(s.learners_) == {"A", "B", "C", "D"}
    info = meta.dataset_info("d0")
    t_pred = s.predicted_seconds(info)
    arrays = meta_arrays(meta)
    env = SimulatedEnvironment(arrays, "d0")
    trace = run_policy(SkipUnavailable(s.policy(info), env.available), env, dataset="d0")
    tested = [o.learner for o in trace.observations]
    assert sorted(tested) == sorted(env.available) and len(set(tested)) == len(tested)
    # the first round's learners are all predicted to fit in half of its time target
    k = s.rank0_
    first = np.sort(t_pred)[: int(1.1 * k)].sum()
    t0 = max(1.0, 2.0 ** math.floor(math.log2(first)))
    assert t_pred[list(s.learners_).index(tested[0])] <= t0 / 2


def test_oboe_budget_stops_the_doubling():
    meta = _toy_meta()
    s = parse_strategy("oboe:budget=1").fit(meta)
    policy = s.policy(meta.dataset_info("d3"))
    # with a 1 s budget and a first time target of at least 1 s, no round may start
    assert policy.next([]) is None
    assert parse_strategy("oboe:budget=1").name == "oboe:budget=1"


# ------------------------------------------------------------------------------------------ portfolio
def test_normalize_losses_per_dataset():
    out = portfolio.normalize_losses(np.array([[0.1, 0.3, 0.2], [0.4, 0.4, np.nan]]))
    np.testing.assert_allclose(out[0], [0.0, 1.0, 0.5])
    np.testing.assert_allclose(out[1, :2], [0.0, 0.0])
    assert np.isnan(out[1, 2])


def test_cutoff_grid_follows_the_skipping_rules():
    # 2 ** (e / 2) for e < 8 within 5 s: 1, 1, 2, 2, 4; plus 5 and 10; 1 and 2 are too small for 2 learners
    assert portfolio.cutoff_grid(10.0, 100.0, 2) == [4.0, 5.0, 10.0]
    # the largest recorded time (3 s) joins the grid (still too small for 2 learners: 3 and 4 give 6, 8 < 10);
    # 4 s is the first cutoff above it and the last one tried
    assert portfolio.cutoff_grid(10.0, 3.0, 2) == [4.0]
    assert portfolio.cutoff_grid(10.0, 3.0, 4) == [2.0, 3.0, 4.0]


def test_greedy_portfolio_hand_case_with_ties_in_permutation_order():
    norm = np.array([[0.0, 1.0, 0.5], [1.0, 0.0, 0.5]])
    sec = np.ones((2, 3))
    members, score = portfolio.greedy_portfolio(norm, sec, size=32, budget=10, cutoff=10, perm=np.array([2, 0, 1]))
    # step 1: every learner scores 0.5 -> first in the permutation (2); step 2: 0 and 1 tie at 0.25 -> 0
    assert members == [2, 0, 1] and score == 0.0
    # a cutoff below learner 0's time makes its run a timeout (loss 1): learner 1 is preferred to it
    sec = np.array([[5.0, 1.0, 1.0], [5.0, 1.0, 1.0]])
    members, score = portfolio.greedy_portfolio(norm, sec, size=2, budget=10, cutoff=2, perm=np.array([2, 0, 1]))
    assert members == [2, 1] and score == pytest.approx(0.25)


def test_budget_ends_the_simulated_execution():
    norm = np.array([[0.0, 1.0], [1.0, 0.0]])
    sec = np.full((2, 2), 3.0)
    # learner 0 (first in the permutation at 0.5) uses 3 of 4 s; learner 1 is stopped at the remaining 1 s
    members, score = portfolio.greedy_portfolio(norm, sec, size=2, budget=4, cutoff=4, perm=np.array([0, 1]))
    assert members == [0, 1] and score == 0.5
    members, score = portfolio.greedy_portfolio(norm, sec, size=2, budget=10, cutoff=4, perm=np.array([0, 1]))
    assert members == [0, 1] and score == 0.0


def test_rank_portfolio_hand_case():
    acc = np.array([[0.9, 0.8, 0.7], [0.7, 0.8, 0.9], [0.9, 0.7, 0.8]])
    # mean ranks 5/3, 7/3, 2 -> A; best ranks with A: C's mean 1 < B's 4/3 -> C; then no improvement
    assert portfolio.rank_portfolio(acc, size=200, perm=np.arange(3)) == [0, 2]
    assert portfolio.rank_portfolio(acc, size=1, perm=np.arange(3)) == [0]


def test_rank_portfolio_drops_learners_slower_than_the_budget():
    meta = _toy_meta()
    # C's times: 0.05 * 100 * (d + 1) -> 95th percentile well above 10 s
    s = parse_strategy("portfolio:rank,budget=10").fit(meta)
    assert "C" not in [s.learners_[j] for j in s.portfolio_]
    assert s.order_[-1] == "C" or "C" in s.order_  # still run after the portfolio
    assert sorted(s.order_) == ["A", "B", "C", "D"]


def test_portfolio_budget_defaults_to_the_window():
    s = parse_strategy("portfolio")
    assert s.budget_seconds == 100.0 and s.with_window(0.01, 7.0).budget_seconds == 7.0
    assert s.with_window(0.01, 7.0).name == "portfolio"
    assert parse_strategy("portfolio:budget=3").with_window(0.01, 7.0).budget_seconds == 3.0


# ------------------------------------------------------------------------------------------------ pmf
def test_init_l1_ranks_learners_on_the_nearest_datasets():
    acc = np.array([[0.9, 0.8, 0.7], [0.8, 0.9, 0.6], [0.1, 0.2, np.nan]])
    feats = np.array([[0.0], [1.0], [10.0]])
    # nearest two: d0, d1; ranks (best = highest) [3, 2, 1] and [2, 3, 1]; means 2.5, 2.5, 1
    assert pmf.init_l1(acc, feats, np.array([0.4]), n_init=2) == [1, 0]
    # d2 nearest: learner 2 has no result there and is left out
    assert pmf.init_l1(acc, feats, np.array([9.0]), n_init=1) == [1]


def test_expected_improvement_hand_values():
    ei = pmf.expected_improvement(np.array([0.51, 0.0]), np.array([1.0, 1e-30]), ybest=0.5)
    assert ei[0] == pytest.approx(1 / math.sqrt(2 * math.pi), rel=1e-9)
    assert ei[1] == pytest.approx(0.0, abs=1e-12)


def test_gp_posterior_one_observation():
    X = np.array([[0.0], [1.0]])
    ell, sf2, sn2 = 1.0, 2.0, 0.5
    mean, var = pmf.gp_posterior(X, [0], np.array([1.0]), (ell, sf2, sn2))
    k01 = sf2 * math.exp(-0.5)
    denom = sf2 + sn2 + 1e-8
    np.testing.assert_allclose(mean, [sf2 / denom, k01 / denom])
    np.testing.assert_allclose(var, [sf2 - sf2**2 / denom, sf2 - k01**2 / denom])


def test_fit_kernel_finds_the_noise_of_independent_data():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(15, 2)) * 10  # far apart: the RBF part cannot explain anything
    z = rng.normal(size=(200, 15))
    ell, sf2, sn2 = pmf.fit_kernel(X, z)
    assert sf2 * math.exp(-0.5 * 4 / ell**2) < 0.2  # hardly any correlation between learners 2 apart
    assert sf2 + sn2 == pytest.approx(1.0, abs=0.1)  # total variance of standard normal data


def test_pmf_starts_with_the_warm_start_then_covers_every_learner():
    meta = _toy_meta()
    train = meta.subset(datasets=[f"d{d}" for d in range(1, 12)])
    for spec in ("pmf", "pmf:per_second"):
        s = parse_strategy(spec).fit(train)
        info = meta.dataset_info("d0")
        first, near = s._warm_start(info)
        env = SimulatedEnvironment(meta_arrays(meta), "d0")
        trace = run_policy(SkipUnavailable(s.policy(info), env.available), env, dataset="d0")
        tested = [o.learner for o in trace.observations]
        expected = [s.learners_[j] for j in first if s.learners_[j] in env.available]
        assert tested[: len(expected)] == expected
        assert sorted(tested) == sorted(env.available)


# ------------------------------------------------------------------------------------------- zeroshot
def test_construct_portfolio_hand_case():
    regret = np.array([[0.0, 0.05], [0.05, 0.0], [0.02, 0.02]])  # learners x datasets
    # excess over 0.01: .04, .04, .02 -> learner 2; then 0 and 1 tie at .01 (mean regret .01 each) -> 0;
    # then learner 1 brings every dataset within the bound
    assert zeroshot.construct_portfolio(regret) == [2, 0, 1]
    # a learner that is within the bound everywhere ends the construction at once
    assert zeroshot.construct_portfolio(np.array([[0.0, 0.0], [0.5, 0.0]])) == [0]


def test_flaml_features_from_the_tables():
    f = zeroshot.flaml_features({"n_instances": 10, "n_features": 3, "n_classes": 2, "nominal_fraction": 0.25})
    np.testing.assert_allclose(f, [10, 3, 2, 0.75])
    f = zeroshot.flaml_features({"n_instances": 10, "PercentageOfNumericFeatures": 40.0})
    assert f[3] == pytest.approx(0.4) and np.isnan(f[1]) and np.isnan(f[2])


def test_zeroshot_runs_the_nearest_datasets_list_in_regret_order():
    meta = _toy_meta()
    s = parse_strategy("zeroshot").fit(meta.subset(datasets=[f"d{d}" for d in range(1, 12)]))
    info = dict(meta.dataset_info("d6"))
    d = s.nearest(info)
    assert s.datasets_[d] == "d6"  # d6 is a prior dataset here: it is its own nearest neighbour
    order = s.policy(info).order
    acc = meta_arrays(meta).accuracy[meta_arrays(meta).row("d6")]
    learners = meta_arrays(meta).learners
    in_portfolio = [s.learners_[j] for j in s.portfolio_]
    head = [l for l in order if l in in_portfolio]
    assert order[: len(head)] == head
    assert head == sorted(head, key=lambda l: -acc[learners.index(l)])
    assert sorted(order) == ["A", "B", "C", "D"]


def test_zeroshot_cross_checks_flaml_when_installed():
    import importlib.util
    from pathlib import Path

    # flaml.default's __init__ imports xgboost and lightgbm; greedy.py itself needs numpy, pandas, sklearn only
    spec = importlib.util.find_spec("flaml")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("FLAML is not installed (pip install flaml)")
    path = Path(list(spec.submodule_search_locations)[0]) / "default" / "greedy.py"
    if not path.is_file():
        pytest.skip(f"this FLAML version has no {path}")
    loader = importlib.util.spec_from_file_location("_flaml_default_greedy", path)
    greedy = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(greedy)
    rng = np.random.default_rng(3)
    for trial in range(5):
        regret = np.round(rng.uniform(0, 0.08, size=(8, 12)), 4)
        regret[rng.integers(0, 8), :] *= 0.1
        frame = pd.DataFrame(regret, index=[f"c{i}" for i in range(8)], columns=[f"t{j}" for j in range(12)])
        theirs = greedy.construct_portfolio(frame, None, 0.01)
        ours = [f"c{i}" for i in zeroshot.construct_portfolio(regret)]
        assert ours == theirs


def test_oboe_cross_checks_the_reference_when_installed():
    ref_linalg = pytest.importorskip("oboe.linalg", reason="oboe is not installed (pip install oboe)")
    ref_ed = pytest.importorskip("oboe.experiment_design", reason="oboe is not installed (pip install oboe)")
    rng = np.random.default_rng(0)
    E = rng.uniform(0, 1, size=(30, 4)) @ rng.uniform(0, 1, size=(4, 12)) + 0.01 * rng.uniform(size=(30, 12))
    assert oboe.approx_matrix_rank(E, 0.05) == ref_linalg.approx_matrix_rank(E, 0.05)
    row = rng.uniform(0, 1, size=(1, 12))
    vt = np.linalg.svd(E, full_matrices=False)[2]
    np.testing.assert_allclose(oboe.impute(vt, row[0], [0, 3, 5, 7], 4),
                               ref_linalg.impute(E, row, [0, 3, 5, 7], rank=4)[0], atol=1e-8)
    t = rng.uniform(0.1, 1, size=12)
    Y = vt[:4]
    ref_v = ref_ed.solve(t, 1.0, 1, Y)
    ours = oboe.solve_design(t, 1.0, 1, Y)
    assert set(np.flatnonzero(ours > 0.9)) == set(np.flatnonzero(ref_v > 0.9))
    cols, t_sum, case = oboe.pivot_columns_time(Y, t, 4.0, rank=4)
    ref_cols, ref_sum, ref_case = ref_ed.pivot_columns_time(Y, t, 4.0, rank=4)
    assert (cols, case) == ([int(c) for c in ref_cols], ref_case) and t_sum == pytest.approx(ref_sum)
    assert oboe.greedy_selection_with_time(Y, t, cols, t_sum, 4.0) == [
        int(c) for c in ref_ed.greedy_stepwise_selection_with_time(Y, t, list(cols), t_sum, 4.0)]


# ---------------------------------------------------------------------------------- through the registry
@pytest.mark.parametrize("spec", PEER_SPECS)
def test_peers_run_in_the_leave_one_dataset_out_benchmark(spec):
    meta = _toy_meta()
    res = leave_one_dataset_out(parse_strategy(spec), meta, tmin=1e-3, tmax=100.0)
    assert res.strategy == spec
    assert np.all(res.n_tests == [3] + [4] * 11)  # D has no result on d0
    again = leave_one_dataset_out(parse_strategy(spec), meta, tmin=1e-3, tmax=100.0)
    np.testing.assert_array_equal(res.mil, again.mil)  # same seed, same result


@pytest.mark.parametrize("spec", PEER_SPECS)
def test_peers_take_the_live_time_model_when_they_use_times(spec):
    s = parse_strategy(spec + ("," if ":" in spec else ":") + "overhead=0.5,scale=5") if spec != "zeroshot" else None
    if s is None:
        assert not parse_strategy(spec).time_model_aware
        return
    copy = parse_strategy(spec).with_time_model(time_overhead=0.5, time_scale=5)
    assert copy.time_model.overhead == 0.5 and copy.time_model.scale == 5 and copy.name == spec
    assert s.time_model.overhead == 0.5


def test_flags_and_bad_parameters():
    assert parse_strategy("portfolio:rank").kind == "rank"
    assert parse_strategy("portfolio:rank=no").kind == "greedy"
    assert parse_strategy("pmf:per_second").per_second and not parse_strategy("pmf:per_second=no").per_second
    for bad in ("oboe:design=qr", "oboe:budget=-1", "oboe:solver=cvx", "oboe:threshold=0", "pmf:n_init=0", "zeroshot:regret=1", "portfolio:size=0", "pmf:per_second=maybe", "zeroshot:k=3",
                "oboe:rank", "portfolio:a b"):
        with pytest.raises(InputError):
            parse_strategy(bad)


def test_failed_tests_are_not_observations_of_the_models():
    meta = _toy_meta()
    s = parse_strategy("pmf").fit(meta)
    policy = s.policy(meta.dataset_info("d3"))
    first = policy.next([])
    failed = Observation(learner=first, accuracy=float("nan"), seconds=0.5, status="error", message="boom")
    second = policy.next([failed])
    assert second is not None and second != first


def _sklearn_meta():
    learners = ["sklearn.naive_bayes.GaussianNB", "sklearn.tree.DecisionTreeClassifier",
                "sklearn.neighbors.KNeighborsClassifier"]
    rows = []
    for d in range(6):
        for i, l in enumerate(learners):
            rows.append({"dataset": f"d{d}", "learner": l, "repeat": 0, "fold": 0,
                         "accuracy": 0.9 - 0.1 * i + 0.01 * d * (i == 2), "fit_time": 0.01 * (i + 1) * (d + 1)})
    ds = pd.DataFrame({"dataset": [f"d{d}" for d in range(6)], "n_instances": [150, 300, 600, 1000, 2000, 4000],
                       "n_features": [4, 8, 5, 10, 20, 6], "n_classes": 3, "majority_fraction": 0.34})
    return MetaDataset(pd.DataFrame(rows), ds), learners


@pytest.mark.parametrize("spec", PEER_SPECS)
def test_peers_in_recommend_the_api_and_the_estimator(spec):
    from algorank import AlgorankClassifier
    from algorank.api import recommend
    from algorank.evaluation.cv.datasets import load_dataset

    meta, learners = _sklearn_meta()
    iris = load_dataset("sklearn:iris")
    r = recommend(iris, strategy=spec, meta=meta, budget=None, cv=3, refit=False, exclude_datasets=["d0"])
    assert r.strategy == spec
    assert sorted(o.learner for o in r.trace.observations) == sorted(learners)
    clf = AlgorankClassifier(budget=30, strategy=spec, meta=meta, cv=3).fit(iris.X, iris.y)
    assert clf.score(iris.X, iris.y) > 0.8


# ------------------------------------------------------------------------------------- knob tuning
def test_knob_sweep_scores_every_value_like_its_own_benchmark_and_picks_the_smallest_mean_mil():
    from algorank.evaluation.meta.tuning import knob_sweep

    meta = _toy_meta()
    sweep = knob_sweep(meta, family="pmf", knob="n_init", grid=[1, 3], tmin=1e-3, tmax=100.0)
    assert sweep.specs == ("pmf:n_init=1", "pmf:n_init=3")
    for spec, res in zip(sweep.specs, sweep.results):  # the same numbers as a benchmark of that spec alone
        alone = leave_one_dataset_out(parse_strategy(spec), meta, tmin=1e-3, tmax=100.0)
        np.testing.assert_allclose(res.mil, alone.mil)
    means = sweep.table()["mean_mil"].to_numpy()
    assert sweep.best == sweep.grid[int(np.argmin(means))] and sweep.best_spec == f"pmf:n_init={sweep.best}"
    # nested choice: for each dataset, the value with the smaller mean over the other datasets
    mil = np.column_stack([r.mil for r in sweep.results])
    n = mil.shape[0]
    for d in range(n):
        others = np.delete(mil, d, axis=0).mean(axis=0)
        assert sweep.nested_choice()[d] == sweep.grid[int(np.argmin(others))]
        assert sweep.nested_mil()[d] == mil[d, int(np.argmin(others))]


def test_knob_sweep_refuses_a_fixed_knob_and_bad_values_before_any_work():
    from algorank.evaluation.meta.tuning import knob_spec, knob_sweep

    assert knob_spec("portfolio:rank", "budget", 60) == "portfolio:rank,budget=60"
    with pytest.raises(InputError):
        knob_spec("pmf:n_init=2", "n_init", 3)
    with pytest.raises(InputError):
        knob_sweep(_toy_meta(), family="pmf", knob="n_init", grid=[0, 3])


def test_pstart_runs_the_portfolio_start_then_continues_like_ei_on_that_history():
    meta = _toy_meta()
    part = meta.subset(datasets=[f"d{d}" for d in range(1, 12)])
    s = parse_strategy("pstart:k=2").fit(part)
    assert s.start_ == tuple(parse_strategy("portfolio:rank").fit(part).order_[:2])
    env = SimulatedEnvironment(meta_arrays(meta), "d0")
    trace = run_policy(SkipUnavailable(s.policy(meta.dataset_info("d0")), env.available), env, dataset="d0")
    tested = [o.learner for o in trace.observations]
    start = [l for l in s.start_ if l in env.available]
    assert tested[: len(start)] == start
    # every later choice is ei's next testable choice given the history so far
    ei = parse_strategy("ei").fit(part)
    for i in range(len(start), len(tested)):
        nxt = SkipUnavailable(ei.policy(meta.dataset_info("d0")), env.available).next(trace.observations[:i])
        assert nxt == tested[i]
    # k=0 is ei itself
    s0 = parse_strategy("pstart:k=0").fit(part)
    env = SimulatedEnvironment(meta_arrays(meta), "d3")
    t0 = run_policy(SkipUnavailable(s0.policy(meta.dataset_info("d3")), env.available), env, dataset="d3")
    env = SimulatedEnvironment(meta_arrays(meta), "d3")
    t1 = run_policy(SkipUnavailable(ei.policy(meta.dataset_info("d3")), env.available), env, dataset="d3")
    assert [o.learner for o in t0.observations] == [o.learner for o in t1.observations]
