"""The fast leave-one-dataset-out path of the refitting strategies (``fast_loo_fit``: ei, lt) gives exactly the
sequences of refitting per held-out dataset, and the incremental pieces it relies on agree with their
direct formulas."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from algorank.evaluation.meta.scoring import leave_one_dataset_out
from algorank.metadata.dataset import MetaDataset
from algorank.recommender.accuracy_model import fit_accuracy_model
from algorank.recommender.kernel.time_model import TimeModel
from algorank.recommender.registry import parse_strategy
from algorank.recommender.runtime_model import _ridge_towards, _ridge_towards_all, fit_runtime_model, observed_ratio


def _meta(seed: int = 0, n: int = 14, k: int = 9) -> MetaDataset:
    """Synthetic meta-data with what a refit sees change from one held-out dataset to the next: missing
    cells, failed and timed-out runs, several folds, landmarkers on most datasets, unknown meta-features, and
    a learner with runs on one dataset only (it leaves the learners when that dataset is held out)."""
    rng = np.random.default_rng(seed)
    runs = []
    for d in range(n):
        base = rng.uniform(0.5, 0.9)
        for j in range(k):
            if rng.random() < 0.15 and j:
                continue
            for fold in range(2):
                status = "ok"
                if (d + j) % 11 == 3:
                    status = "error"
                elif (d * j) % 13 == 5:
                    status = "timeout"
                acc = min(1.0, max(0.0, base + 0.03 * math.sin(j * (d + 1)) + rng.normal(0, 0.01)))
                runs.append({"dataset": f"d{d:02d}", "learner": f"L{j}", "repeat": 0, "fold": fold,
                             "accuracy": acc if status == "ok" else np.nan,
                             "fit_time": float(10 ** rng.normal(j / 4 - 1, 0.3)), "status": status})
    runs.append({"dataset": "d03", "learner": "only_on_d03", "repeat": 0, "fold": 0, "accuracy": 0.99,
                 "fit_time": 0.5, "status": "ok"})
    ds = pd.DataFrame({"dataset": [f"d{d:02d}" for d in range(n)],
                       "n_instances": rng.integers(100, 100_000, n).astype(float),
                       "n_features": rng.integers(2, 300, n).astype(float),
                       "n_classes": rng.integers(2, 10, n).astype(float),
                       "majority_fraction": rng.uniform(0.2, 0.8, n),
                       "landmark_1nn": rng.uniform(0.5, 0.9, n)})
    ds.loc[2, "n_features"] = np.nan
    ds.loc[5, "landmark_1nn"] = np.nan
    ds.loc[7, "majority_fraction"] = np.nan
    return MetaDataset(pd.DataFrame(runs), ds)


def _same(fast, generic):
    assert fast.path == "fast" and generic.path == "generic"
    np.testing.assert_array_equal(fast.sequences, generic.sequences)
    np.testing.assert_allclose(fast.mil, generic.mil, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(fast.datasets, generic.datasets)


@pytest.mark.parametrize("spec", ["ei", "ei:h=inf,p=0.5", "ei:acq=near,draws=64", "ei:landmarks=no,growth=no",
                                  "ei:stop=0.2", "eiu", "eiu:kappa=1,floor=none,vshrink=0.05"])
@pytest.mark.parametrize("seed", [0, 1])
def test_ei_fast_path_gives_the_sequences_of_refitting(spec, seed):
    meta = _meta(seed)
    fast = leave_one_dataset_out(parse_strategy(spec), meta)
    generic = leave_one_dataset_out(parse_strategy(spec), meta, fast=False)
    _same(fast, generic)
    assert fast.n_tests.sum() > len(fast.datasets)


def test_ei_fast_path_with_a_live_time_model_and_test_datasets():
    meta = _meta(2)
    tm = TimeModel(overhead=0.3, scale=2.0)
    _same(leave_one_dataset_out(parse_strategy("ei"), meta, time_model=tm),
          leave_one_dataset_out(parse_strategy("ei"), meta, time_model=tm, fast=False))
    test = ["d01", "d03", "d08"]
    fast = leave_one_dataset_out(parse_strategy("ei"), meta, test_datasets=test)
    _same(fast, leave_one_dataset_out(parse_strategy("ei"), meta, test_datasets=test, fast=False))
    assert fast.datasets == tuple(test)


@pytest.mark.parametrize("spec", ["lt", "lt:h=1", "lt:h=auto,inner=4", "lt:p=0,passes=1,cands=3"])
def test_lt_fast_path_gives_the_sequences_of_refitting(spec):
    meta = _meta(0)
    _same(leave_one_dataset_out(parse_strategy(spec), meta), leave_one_dataset_out(parse_strategy(spec), meta, fast=False))
    tm = TimeModel(overhead=0.3, scale=2.0)
    _same(leave_one_dataset_out(parse_strategy(spec), meta, time_model=tm),
          leave_one_dataset_out(parse_strategy(spec), meta, time_model=tm, fast=False))
    test = ["d01", "d03", "d08"]
    _same(leave_one_dataset_out(parse_strategy(spec), meta, test_datasets=test),
          leave_one_dataset_out(parse_strategy(spec), meta, test_datasets=test, fast=False))


def test_eit_keeps_the_refitting_path():
    meta = _meta(0, n=6, k=5)
    assert leave_one_dataset_out(parse_strategy("eit"), meta).path == "generic"


def test_sequential_posterior_matches_the_joint_conditioning():
    rng = np.random.default_rng(3)
    acc = rng.uniform(0.5, 0.95, (30, 12))
    acc[rng.random(acc.shape) < 0.1] = np.nan
    model = fit_accuracy_model(acc, rng.uniform(0.3, 0.5, 30), [f"L{j}" for j in range(12)])
    mu, cov = model.prior(rng.uniform(0.1, 1.0, 30))
    post = model.posterior(mu, cov)
    seen, values = [], []
    for j in (4, 0, 9, 4, 7):  # a learner seen twice counts as two noisy observations, as in condition
        v = float(rng.uniform(0.0, 0.8))
        post.add(j, v)
        seen.append(j)
        values.append(v)
        mean, sd = model.condition(mu, cov, seen, values)
        free = np.setdiff1d(np.arange(12), seen)
        np.testing.assert_allclose(post.mean[free], mean[free], rtol=0, atol=1e-10)
        np.testing.assert_allclose(np.sqrt(post.var[free]), sd[free], rtol=0, atol=1e-10)
        full_mean, full_cov = model.condition_full(mu, cov, seen, values)
        np.testing.assert_allclose(post.covariance()[np.ix_(free, free)], full_cov[np.ix_(free, free)],
                                   rtol=0, atol=1e-10)


@pytest.mark.parametrize("seed", range(5))
def test_fits_do_not_depend_on_the_memory_layout_of_the_table(seed):
    """A table in Fortran order (as a pandas pivot gives it) and its C-ordered copy give the same models to the
    last bit: the fast path and refitting build the same table in different layouts, and a near-tie between two
    learners turned on the last bit of the imputed gains."""
    rng = np.random.default_rng(seed)
    acc = rng.uniform(0.5, 0.95, (13, 11))
    acc[rng.random(acc.shape) < 0.2] = np.nan
    majority = rng.uniform(0.2, 0.6, 13)
    learners = [f"L{j}" for j in range(11)]
    c, f = fit_accuracy_model(acc, majority, learners), fit_accuracy_model(np.asfortranarray(acc), majority, learners)
    np.testing.assert_array_equal(c.gain, f.gain)
    seconds = 10 ** rng.normal(0, 1, (13, 11))
    seconds[rng.random(seconds.shape) < 0.2] = np.nan
    x = np.column_stack([rng.integers(100, 10_000, 13), rng.integers(2, 300, 13), rng.integers(2, 10, 13)])
    rc = fit_runtime_model(seconds, x.astype(float), learners)
    rf = fit_runtime_model(np.asfortranarray(seconds), np.asfortranarray(x, dtype=float), learners)
    np.testing.assert_array_equal(rc.coef, rf.coef)
    np.testing.assert_array_equal(rc.sigma, rf.sigma)


def test_batched_ridge_matches_one_learner_at_a_time():
    rng = np.random.default_rng(4)
    design = np.column_stack([np.ones(40), rng.normal(size=(40, 5))])
    y = rng.normal(size=(40, 7))
    y[rng.random(y.shape) < 0.3] = np.nan
    y[:, 6] = np.nan  # a learner without any time: the pooled slopes
    w = rng.uniform(0.0, 2.0, 40)
    w[:3] = 0.0
    prior = rng.normal(size=5)
    ok = np.isfinite(y) & (w > 0)[:, None]
    batched = _ridge_towards_all(design, y, ok, w, prior, 1.0)
    for j in range(7):
        one = _ridge_towards(design[ok[:, j]], y[ok[:, j], j], w[ok[:, j]], prior, 1.0)
        np.testing.assert_allclose(batched[j], one, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(batched[6], np.concatenate([[0.0], prior]))


def test_the_policys_running_ratio_is_observed_ratio():
    from algorank.recommender.ei import EIPolicy

    strategy = parse_strategy("ei").fit(_meta(0, n=6, k=5))
    policy = strategy.policy({"n_instances": 500, "n_features": 10, "n_classes": 2, "majority_fraction": 0.5})
    rng = np.random.default_rng(5)
    measured, predicted = [], []
    for count in range(1, 8):
        m, p = float(10 ** rng.normal()), float(10 ** rng.normal())
        measured.append(m)
        predicted.append(p)
        policy._log_ratios = sorted(math.log(a / b) for a, b in zip(measured, predicted))
        assert EIPolicy._ratio(policy) == observed_ratio(measured, predicted)


def test_tune_p_of_ei_and_lt_takes_the_fast_path_with_the_refitted_results():
    import algorank

    meta = _meta(1, n=8, k=6)
    for family, spec in (("ei:h=inf", "ei:h=inf,p=1/2"), ("lt", "lt:h=inf,p=1/2")):
        res = algorank.tune_p(meta, strategy=family, grid=["1/2", "0"])
        assert {r.path for r in res.sweep.results} == {"fast"}
        generic = leave_one_dataset_out(parse_strategy(spec), meta, fast=False, tmin=res.sweep.tmin,
                                        tmax=res.sweep.tmax)
        np.testing.assert_array_equal(res.sweep.results[0].sequences, generic.sequences)
        np.testing.assert_array_equal(res.sweep.results[0].mil, generic.mil)
