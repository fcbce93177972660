"""``eiu``: expected improvement on what the tested learners leave unexplained; hand-computed small cases and
the invariant that, with its three changes switched off, it is ``ei``."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from algorank.evaluation.meta.scoring import leave_one_dataset_out
from algorank.metadata.dataset import MetaDataset
from algorank.metadata.errors import InputError
from algorank.recommender.ei import ConditionedStrategy
from algorank.recommender.expected_time import risk_factor
from algorank.recommender.kernel.trace import Observation
from algorank.recommender.registry import parse_strategy
from algorank.recommender.unexplained import UnexplainedStrategy

INFO = {"n_instances": 300, "n_features": 10, "n_classes": 2, "majority_fraction": 0.5}


def _meta(n: int = 12, seed: int = 0) -> MetaDataset:
    """Learners ``A``, ``A2`` (the same accuracy as ``A`` on every dataset: a duplicate configuration) and
    ``B`` (unrelated to ``A``), 0.1 s each, on ``n`` datasets with majority class 0.5."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        a, b = rng.uniform(0.6, 0.95), rng.uniform(0.6, 0.95)
        for learner, acc in (("A", a), ("A2", a), ("B", b)):
            rows.append({"dataset": f"d{i:02d}", "learner": learner, "repeat": 0, "fold": 0, "accuracy": acc,
                         "fit_time": 0.1, "status": "ok"})
    ds = pd.DataFrame({"dataset": [f"d{i:02d}" for i in range(n)], "n_instances": 300.0, "n_features": 10.0,
                       "n_classes": 2.0, "majority_fraction": 0.5})
    return MetaDataset(pd.DataFrame(rows), ds)


def _obs(learner: str, accuracy: float, seconds: float = 0.1) -> Observation:
    return Observation(learner=learner, accuracy=accuracy, seconds=seconds)


def _plain(**kw):
    return dict(h=math.inf, p=1.0, landmarks=False, growth=False, **kw)


def test_a_duplicate_of_a_tested_learner_has_only_the_noise_left():
    eiu = UnexplainedStrategy(**_plain()).fit(_meta())
    ei = ConditionedStrategy(**_plain()).fit(_meta())
    a, a2 = eiu.learners_.index("A"), eiu.learners_.index("A2")
    pol_u, pol_e = eiu.policy(INFO), ei.policy(INFO)
    history = [_obs("A", 0.8)]
    _, mean_u, sd_u, _ = pol_u.scores(history)
    _, mean_e, sd_e, _ = pol_e.scores(history)
    noise = eiu.accuracy_.noise
    # one Gaussian observation with noise variance nu: var = c22 - c12^2 / (c11 + nu)
    v, c = pol_u.vcov, pol_e.cov
    assert sd_u[a2] == pytest.approx(math.sqrt(v[a2, a2] - v[a, a2] ** 2 / (v[a, a] + noise)), rel=1e-9)
    assert sd_e[a2] == pytest.approx(math.sqrt(c[a2, a2] - c[a, a2] ** 2 / (c[a, a] + noise)), rel=1e-9)
    # unshrunk: the duplicate's variance c (c + nu - c) / (c + nu) is about nu; shrunk by 0.1 it keeps
    # c (1 - 0.9^2) = 0.19 c of it
    assert sd_u[a2] < 1.01 * math.sqrt(noise)
    assert sd_e[a2] ** 2 == pytest.approx(0.19 * c[a2, a2], rel=0.01)
    np.testing.assert_allclose(mean_u, mean_e, rtol=0, atol=1e-12)  # the mean model is ei's
    assert pol_u.next(history) == "B"  # the duplicate has nothing left to find


def test_a_result_below_the_majority_class_is_a_failed_test():
    eiu = UnexplainedStrategy(**_plain(kappa=0.0)).fit(_meta())
    pol = eiu.policy(INFO)
    _, prior_mean, prior_sd, _ = pol.scores([])
    score, mean, sd, best = pol.scores([_obs("A", 0.45)])  # gain (0.45 - 0.5) / 0.5 = -0.1 < floor 0
    free = [eiu.learners_.index(x) for x in ("A2", "B")]
    np.testing.assert_array_equal(mean[free], prior_mean[free])  # nobody is conditioned on it
    np.testing.assert_array_equal(sd[free], prior_sd[free])
    assert best == 0.0 and score[eiu.learners_.index("A")] == -math.inf  # tested, never the best
    # a result at the majority class or above conditions the others, and floor=none conditions on every result
    _, mean_ok, _, _ = eiu.policy(INFO).scores([_obs("A", 0.5)])
    _, mean_all, _, _ = UnexplainedStrategy(**_plain(floor=None)).fit(_meta()).policy(INFO).scores([_obs("A", 0.45)])
    a2 = eiu.learners_.index("A2")
    assert mean_ok[a2] < prior_mean[a2] and mean_all[a2] < mean_ok[a2]
    # the duplicate moves to the observed value: gain -0.1 with the noise's pull, by the one-observation formula
    v = pol.vcov
    a = eiu.learners_.index("A")
    # the mean model is ei's (shrunk covariance), so use its covariance for the conditional mean
    c = pol.cov
    expected = prior_mean[a2] + c[a2, a] / (c[a, a] + eiu.accuracy_.noise) * (-0.1 - prior_mean[a])
    assert mean_all[a2] == pytest.approx(expected, rel=1e-9)
    assert v.shape == c.shape


def test_cost_is_the_point_prediction_times_the_risk_factor():
    """With the variance model and the floor switched off, eiu's scores are ei's divided by the risk
    factor exp(kappa (sigma ln 10)^2 / 2) of each learner's runtime spread (p = 1)."""
    sigma = np.array([0.0, 0.5, 1.0])
    kappa = 0.5
    eiu = UnexplainedStrategy(**_plain(vshrink=0.1, floor=None, kappa=kappa)).fit(_meta())
    ei = ConditionedStrategy(**_plain()).fit(_meta())
    eiu.runtime_ = replace(eiu.runtime_, sigma=sigma)
    ei.runtime_ = eiu.runtime_
    su, _, _, _ = eiu.policy(INFO).scores([])
    se, _, _, _ = ei.policy(INFO).scores([])
    factor = np.exp(kappa * (sigma * math.log(10)) ** 2 / 2)  # 1, 1.9401 ** 0.5 = 1.3929, 14.1675 ** 0.5 = 3.7640
    np.testing.assert_allclose(factor, [1.0, 1.39287, 3.76398], rtol=1e-5)
    np.testing.assert_allclose(factor, risk_factor(sigma, kappa), rtol=1e-12)
    np.testing.assert_allclose(su, se / factor, rtol=1e-12)
    # the live ratio is taken on the point predictions: a test measured at twice its point prediction
    # doubles every cost, whatever the risk factors
    history = [_obs("B", 0.9, seconds=2 * float(eiu.policy(INFO).seconds[eiu.learners_.index("B")]))]
    pol = eiu.policy(INFO)
    pol.scores(history)
    assert pol._ratio() == pytest.approx(2.0)


@pytest.mark.parametrize("seed", [0, 1])
def test_with_its_changes_off_it_is_ei(seed):
    meta = _meta(n=10, seed=seed)
    off = leave_one_dataset_out(parse_strategy("eiu:vshrink=0.1,floor=none,kappa=0,h=inf,p=1,landmarks=no"), meta)
    ei = leave_one_dataset_out(parse_strategy("ei:h=inf,landmarks=no"), meta)
    np.testing.assert_array_equal(off.sequences, ei.sequences)
    np.testing.assert_allclose(off.mil, ei.mil, rtol=0, atol=1e-12)


def test_spec_names_defaults_and_bad_input():
    s = parse_strategy("eiu")
    assert isinstance(s, UnexplainedStrategy)
    assert (s.vshrink, s.floor, s.kappa, s.shrink, s.h, s.p) == (0.0, 0.0, 0.5, 0.1, 0.7, 0.75)
    assert UnexplainedStrategy().name == "eiu:h=0.7,p=0.75"
    assert UnexplainedStrategy(floor=None, kappa=1, h=1, p=1).name == "eiu:floor=none,kappa=1,h=1,p=1"
    assert (parse_strategy("eiu:h=1,p=1/2").h, parse_strategy("eiu:h=1,p=1/2").p) == (1.0, 0.5)
    assert parse_strategy("eiu:floor=none").floor is None
    copy = s.with_time_model(time_overhead=0.25, time_scale=5)
    assert copy.name == s.name and copy.time_model.overhead == 0.25 and (copy.vshrink, copy.floor, copy.kappa) == (
        0.0, 0.0, 0.5)
    for bad in ("eiu:floor=2", "eiu:kappa=-1", "eiu:vshrink=1.5", "eiu:floor=low", "eiu:wobble=1"):
        with pytest.raises(InputError):
            parse_strategy(bad)
    with pytest.raises(InputError, match="floor"):
        UnexplainedStrategy(floor=True)
