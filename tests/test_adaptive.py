"""Adaptive repetitions (Raeder et al.): stopping rules and reproducibility R."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import ks_2samp

from algorank.evaluation.cv.stopping import (KSConvergence, RankConvergence, make_rule, ks_odd_even, reproducibility,
                                 running_mean_rho)
from algorank.metadata.errors import InputError


def test_reproducibility_hand_cases():
    assert reproducibility([0.9, 0.9, 0.9], [0.8, 0.8, 0.8]) == 1.0  # always wins
    assert reproducibility([0.8, 0.8], [0.9, 0.9]) == 1.0  # always loses: still reproducible
    assert reproducibility([0.9, 0.7], [0.8, 0.8]) == 0.0  # wins half the time
    assert reproducibility([0.8, 0.8], [0.8, 0.8]) == 0.0  # ties count 1/2
    # R' = (1 + 1 + 0 + 0.5) / 4 = 0.625 -> R = 0.25
    assert reproducibility([0.9, 0.9, 0.7, 0.8], [0.8, 0.8, 0.8, 0.8]) == pytest.approx(0.25)
    with pytest.raises(InputError):
        reproducibility([1, 2], [1])


def test_ks_odd_even_matches_scipy():
    e = [0.81, 0.79, 0.85, 0.80, 0.83, 0.78, 0.84]
    assert ks_odd_even(e) == pytest.approx(ks_2samp(e[0::2], e[1::2]).statistic)
    assert np.isnan(ks_odd_even([0.8]))


def test_rank_rule_stops_when_running_means_stop_moving():
    rule = RankConvergence(min_repeats=2, max_repeats=100, threshold=1 - 1e-4)
    base = np.linspace(0, 1, 50)
    assert not rule.update(base, 0.8)  # first repetition: nothing to compare
    assert np.isnan(rule.statistic)
    assert rule.update(base, 0.8)  # identical running mean -> rho = 1
    assert rule.statistic == 1.0 and rule.repeats == 2


def test_rank_rule_noisy_scores_need_more_repetitions():
    rng = np.random.default_rng(0)
    truth = rng.random(200)

    def reps_until_stop(noise):
        rule = RankConvergence(min_repeats=2, max_repeats=500, threshold=1 - 1e-4)
        while not rule.update(truth + noise * rng.standard_normal(200), 0.0):
            pass
        return rule.repeats

    stable, unstable = reps_until_stop(0.01), reps_until_stop(0.3)
    assert stable < unstable


def test_rank_rule_ignores_unscored_instances_and_running_mean_rho():
    a = np.array([0.1, 0.5, np.nan, 0.9])
    b = np.array([0.2, 0.4, 0.3, 0.8])
    assert running_mean_rho(a, b) == pytest.approx(1.0)
    assert np.isnan(running_mean_rho(np.array([0.5, 0.5, 0.5]), np.array([0.1, 0.2, 0.3])))


def test_min_max_and_fixed():
    rule = make_rule("fixed", repeats=3)
    assert [rule.update(np.zeros(3), 0.5) for _ in range(3)] == [False, False, True]
    ks = make_rule("ks", threshold=0.1, min_repeats=4, max_repeats=6)
    assert isinstance(ks, KSConvergence)
    stops = [ks.update(np.zeros(3), 0.5) for _ in range(4)]
    assert stops == [False, False, False, True]  # identical estimates: D = 0 once min_repeats is reached
    capped = make_rule("rank", min_repeats=2, max_repeats=3)
    rng = np.random.default_rng(1)
    assert [capped.update(rng.random(30), 0.5) for _ in range(3)][-1] is True
    with pytest.raises(InputError, match="min_repeats"):
        make_rule("rank", min_repeats=5, max_repeats=3)
    with pytest.raises(InputError, match="stop must be one of"):
        make_rule("forever")


def test_stable_learners_stop_before_unstable_ones_on_real_data(shared_dir):
    """Raeder: at the same threshold naive Bayes / LDA converge in fewer repetitions than a tree / kNN."""
    from algorank.evaluation.cv.datasets import load_dataset
    from algorank.evaluation.cv.evaluator import Evaluator

    ev = Evaluator(cv=5, stop="rank", threshold=1 - 1e-4, max_repeats=30, random_state=0, progress=False)
    stable = ["sklearn.naive_bayes.GaussianNB", "lda"]
    unstable = ["decision-tree", "knn"]
    for name in ("uci/diabetes.arff", "uci/heart.statlog.arff"):
        res = ev.evaluate(load_dataset(str(shared_dir / "datasets" / name)), stable + unstable)
        reps = res.summary["repetitions"]
        ids = list(res.summary.index)
        assert max(reps[ids[0]], reps[ids[1]]) < min(reps[ids[2]], reps[ids[3]]), (name, reps.to_dict())
