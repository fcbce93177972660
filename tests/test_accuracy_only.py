"""Accuracy-only meta-data: a runs table without times works wherever no time is needed,
and a time-aware request is one clear exit-2 error naming the missing column.  Also the exact
tie rule of the average ranking (ties of the mean rank go to the learner id, never to a rounding)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from cli import main
from algorank.evaluation.meta.benchmark import benchmark_strategies, leave_one_dataset_out, mean_loss_over_tests
from algorank.recommender.kernel.environments import meta_arrays
from algorank.metadata.dataset import MetaDataset
from algorank.metadata.errors import InputError
from algorank.recommender.average_ranking import AverageRanking
from algorank.recommender.multitest import multi2test
from algorank.recommender.registry import parse_strategy


def _runs(n_datasets=12, n_learners=6, seed=0, folds=1):
    rng = np.random.default_rng(seed)
    rows = []
    for d in range(n_datasets):
        for j in range(n_learners):
            base = 0.6 + 0.04 * j + 0.05 * rng.standard_normal()
            for f in range(folds):
                # two decimals: many exact ties of accuracy inside a dataset
                rows.append({"dataset": f"d{d:02d}", "learner": f"L{j}", "repeat": 0, "fold": f,
                             "accuracy": float(np.clip(round(base + 0.02 * rng.standard_normal(), 2), 0, 1))})
    return pd.DataFrame(rows)


@pytest.fixture()
def time_free(tmp_path):
    path = tmp_path / "runs.csv"
    _runs().to_csv(path, index=False)  # no fit_time column at all
    return path


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_runs_without_fit_time_column_load_and_describe():
    meta = MetaDataset(_runs())
    assert meta.runs["fit_time"].isna().all()
    d = meta.describe()
    assert d.cells == 72 and d.cells_with_time == 0 and d.cells_without_time == 72 and d.missing_fraction == 0
    assert d.to_dict()["cells_without_time"] == 72


def test_info_reports_cells_with_and_without_time_separately(capsys, tmp_path):
    runs = _runs(n_datasets=3, n_learners=2)
    runs["fit_time"] = [1.0, np.nan, 2.0, np.nan, np.nan, np.nan]  # 2 cells timed, 4 not
    path = tmp_path / "mixed.csv"
    runs.to_csv(path, index=False)
    code, out, err = _run(capsys, "info", "--meta", path, "--json")
    assert code == 0, err
    d = json.loads(out)
    assert (d["cells"], d["cells_with_time"], d["cells_without_time"], d["runs_with_time"]) == (6, 2, 4, 2)
    code, out, _ = _run(capsys, "info", "--meta", path)
    assert "with time       2" in out and "without time    4" in out


def test_time_only_missing_is_not_a_missing_cell_for_p0():
    runs = _runs(n_datasets=6, n_learners=3)
    runs["fit_time"] = 1.0
    runs.loc[runs["learner"] == "L2", "fit_time"] = np.nan  # L2 (the best) never has a time
    meta = MetaDataset(runs)
    arrays = meta_arrays(meta)
    assert arrays.has_accuracy.all() and not arrays.available[:, 2].any()
    ar0 = AverageRanking(p=0).fit(meta)
    assert ar0.coverage_["L2"] == 6 and "L2" in ar0.order_
    # with P > 0 the cells without time cannot be ranked: L2 is unknown
    ar = AverageRanking(p=1 / 16).fit(meta)
    assert "L2" not in ar.order_ and ar.coverage_["L2"] == 0


def test_rank_p0_equals_pandas_mean_rank_order(capsys, time_free):
    code, out, err = _run(capsys, "rank", "--meta", time_free, "--p", "0", "--json", "--min-coverage", "0")
    assert code == 0, err
    got = json.loads(out)
    runs = pd.read_csv(time_free)
    mean_rank = runs.pivot(index="dataset", columns="learner", values="accuracy").rank(axis=1, ascending=False).mean()
    expected = sorted(mean_rank.index, key=lambda l: (round(mean_rank[l], 9), l))
    assert got["order"] == expected and got["n_datasets"] == 12
    for l in expected:  # the same mean ranks (complete data: rescaled = ordinary)
        assert got["scores"][l] == pytest.approx(mean_rank[l], abs=1e-12)


@pytest.mark.parametrize("argv, column", [
    (["rank", "--p", "1/16"], "fit_time"),
    (["benchmark", "--strategy", "ar:p=0"], "fit_time"),
    (["benchmark", "--strategy", "fastest", "--axis", "tests"], "fit_time"),
    (["benchmark", "--strategy", "at:p=1/16", "--axis", "tests"], "fit_time"),
    (["benchmark", "--strategy", "ar:p=1/4", "--axis", "tests"], "fit_time"),
    (["multitest"], "fit_time"),
    (["multitest", "--cost", "fit_predict_time"], "fit_time"),
    (["tune-p"], "fit_time"),
])
def test_time_aware_request_is_one_line_exit_2_naming_the_column(capsys, time_free, argv, column):
    code, out, err = _run(capsys, *argv, "--meta", time_free)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1 and f"'{column}'" in err, err


def test_benchmark_axis_tests_hand_computed():
    # two datasets, three learners, no times; majority 0.5 on both.
    #   d0: A .9, B .8, C .7     d1: A .6, B .95, C .7
    # ar:p=0 held out d0 -> fitted on d1: B, C, A; held out d1 -> fitted on d0: A, B, C.
    #   d0 losses after 1, 2, 3 tests: 10, 10, 0 (B .8, C .7, A .9) -> mean over K=3: 20/3
    #   d1 losses: 35 (A .6), 0 (B), 0 -> 35/3; before any test: 40 and 45
    rows = [("d0", "A", .9), ("d0", "B", .8), ("d0", "C", .7), ("d1", "A", .6), ("d1", "B", .95), ("d1", "C", .7)]
    runs = pd.DataFrame([{"dataset": d, "learner": l, "repeat": 0, "fold": 0, "accuracy": a} for d, l, a in rows])
    meta = MetaDataset(runs, pd.DataFrame({"dataset": ["d0", "d1"], "majority_fraction": [0.5, 0.5]}))
    r = leave_one_dataset_out(AverageRanking(p=0), meta, axis="tests")
    assert r.axis == "tests" and (r.tmin, r.tmax) == (1.0, 3.0)
    np.testing.assert_allclose(r.mil, [20 / 3, 35 / 3], rtol=1e-12)
    np.testing.assert_allclose(r.mean_loss_by_tests(), [42.5, 22.5, 5.0, 0.0], rtol=1e-12)
    r2 = leave_one_dataset_out(AverageRanking(p=0), meta, axis="tests", max_tests=1)
    np.testing.assert_allclose(r2.mil, [10.0, 35.0])
    # the generic path (fit per held-out dataset) gives the same sequences
    g = leave_one_dataset_out(AverageRanking(p=0), meta, axis="tests", fast=False)
    np.testing.assert_array_equal(g.sequences, r.sequences)
    with pytest.raises(InputError, match="max_tests"):
        leave_one_dataset_out(AverageRanking(p=0), meta, axis="tests", max_tests=0)
    with pytest.raises(InputError, match="axis"):
        leave_one_dataset_out(AverageRanking(p=0), meta, axis="seconds")


def test_mean_loss_over_tests_keeps_the_last_loss():
    losses = np.array([[5.0, 1.0, 0.0], [3.0, 0.0, 0.0]])
    np.testing.assert_allclose(mean_loss_over_tests(losses, np.array([3, 1]), 4), [1.5, 3.0])


def test_benchmark_axis_tests_cli_on_time_free_meta(capsys, time_free, tmp_path):
    code, out, err = _run(capsys, "benchmark", "--meta", time_free, "--strategy", "ar:p=0", "--strategy",
                          "best-accuracy", "--strategy", "oracle", "--axis", "tests", "--json", "--out", tmp_path)
    assert code == 0, err
    d = json.loads(out)
    assert d["axis"] == "tests" and d["tmax"] == 6
    curve = d["strategies"]["ar:p=0"]["mean_loss_by_tests"]
    assert len(curve) == 7 and curve[-1] == 0 and all(a >= b for a, b in zip(curve, curve[1:]))
    assert d["strategies"]["oracle"]["mean_mil"] == 0.0  # the oracle tests the best learner first
    assert (tmp_path / "loss_by_tests.png").is_file() and not (tmp_path / "loss_time.png").exists()
    code, out, err = _run(capsys, "benchmark", "--meta", time_free, "--strategy", "ar:p=0", "--axis", "tests")
    assert code == 0 and "mean loss over tests 1..6" in out


def test_axis_tests_on_timed_meta_ranks_with_time_but_counts_tests():
    runs = _runs(n_datasets=8, n_learners=4, seed=3)
    runs["fit_time"] = [10.0 ** (j % 4 - 2) for j in range(len(runs))]
    meta = MetaDataset(runs)
    suite = benchmark_strategies([parse_strategy("ar:p=0"), parse_strategy("ar:p=1/4")], meta, axis="tests")
    assert suite.axis == "tests" and all(r.axis == "tests" for r in suite.results)
    assert all((r.seconds[r.sequences >= 0] == 1.0).all() for r in suite.results)
    # P = 1/4 ranks with the recorded times, so its first test differs from AR0 (fast L0 preferred)
    first = {r.strategy: r.per_dataset()["first"].iloc[0] for r in suite.results}
    assert first["ar:p=0"] != first["ar:p=1/4"]


def test_multitest_cost_none_on_time_free_folds():
    meta = MetaDataset(_runs(n_datasets=8, n_learners=3, folds=10, seed=5))
    res = multi2test(meta, cost="none", posthoc_method="holm")
    assert res.prior_order == ("L0", "L1", "L2") and res.cost.startswith("none")
    with pytest.raises(InputError, match="'fit_time'"):
        multi2test(meta)


def test_ties_of_the_mean_rank_go_to_the_learner_id_exactly():
    # Four learners on two datasets; rescaled ranks u = (r - 1) / 3:
    #   d1: a 1st, x 2nd, w 3rd, z 4th;   d2: w 1st, x 2nd, a 3rd, z 4th
    #   mean u: a (0 + 2/3) / 2 = 1/3, w (2/3 + 0) / 2 = 1/3, x (1/3 + 1/3) / 2 = 1/3, z 1.
    # Exact ties -> learner id: a, w, x, z.  (Rounding u to multiples of 2**-20, as an earlier version did,
    # made x's sum one unit smaller and put it first.)
    acc = {("d1", "a"): .9, ("d1", "x"): .8, ("d1", "w"): .7, ("d1", "z"): .6,
           ("d2", "w"): .9, ("d2", "x"): .8, ("d2", "a"): .7, ("d2", "z"): .6}
    runs = pd.DataFrame([{"dataset": d, "learner": l, "repeat": 0, "fold": 0, "accuracy": a}
                         for (d, l), a in acc.items()])
    ar = AverageRanking(p=0).fit(MetaDataset(runs))
    assert ar.order_ == ["a", "w", "x", "z"]
    assert ar.average_rank_ == {"a": 2.0, "w": 2.0, "x": 2.0, "z": 4.0}


@pytest.mark.parametrize("seed", range(10))
def test_loo_orders_equal_exact_fraction_orders(seed):
    # random integer-valued accuracies with many ties and missing cells: fast LOO orders equal a
    # brute-force order by exact Fraction means (ties by id)
    from fractions import Fraction

    rng = np.random.default_rng(seed)
    n, k = 9, 5
    acc = rng.integers(0, 3, (n, k)) / 4 + 0.1
    mask = rng.random((n, k)) < 0.25
    rows = [{"dataset": f"d{i}", "learner": f"L{j}", "repeat": 0, "fold": 0, "accuracy": float(acc[i, j])}
            for i in range(n) for j in range(k) if not mask[i, j]]
    meta = MetaDataset(pd.DataFrame(rows))
    arrays = meta_arrays(meta)
    orders = AverageRanking(p=0, min_coverage=0).loo_orders(arrays)
    for d in range(len(arrays.datasets)):
        sums = {j: Fraction(0) for j in range(k)}
        counts = {j: 0 for j in range(k)}
        for e in range(len(arrays.datasets)):
            if e == d:
                continue
            row = arrays.accuracy[e]
            present = [j for j in range(k) if np.isfinite(row[j])]
            m = len(present)
            for j in present:
                r = Fraction(sum(1 for q in present if row[q] > row[j])) + Fraction(
                    sum(1 for q in present if row[q] == row[j]) + 1, 2)
                sums[j] += (r - 1) / (m - 1) if m > 1 else Fraction(1, 2)
                counts[j] += 1
        known = [j for j in range(k) if counts[j]]
        expected = sorted(known, key=lambda j: (sums[j] / counts[j], j))
        assert [j for j in orders[d] if j >= 0] == expected
