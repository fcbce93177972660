"""Strategy names come from their specs and are never overwritten; capabilities are declared as class
attributes and callers read those (two ``at:`` specs differing only in their time overhead
failed with "strategies must be distinct")."""

from __future__ import annotations

import pandas as pd
import pytest

from algorank.evaluation.meta.benchmark import benchmark_strategies, leave_one_dataset_out
from algorank.metadata.dataset import MetaDataset
from algorank.metadata.errors import InputError
from algorank.recommender.active_testing import ActiveTesting
from algorank.recommender.average_ranking import AverageRanking
from algorank.recommender.base import CAPABILITIES, StrategyBase
from algorank.recommender.ei import ConditionedStrategy
from algorank.recommender.registry import STRATEGIES, parse_strategy

#: One spec per registered strategy name.
SPECS = {"ar": "ar:p=1/16", "random": "random:seed=3", "fastest": "fastest", "best-accuracy": "best-accuracy",
         "oracle": "oracle", "multi2test": "multi2test", "at": "at:p=1/64,sim=tested", "lt": "lt:h=inf",
         "ei": "ei:h=inf", "oboe": "oboe:design=greedy", "portfolio": "portfolio:rank", "pmf": "pmf:per_second",
         "zeroshot": "zeroshot", "eit": "eit:kappa=0.5", "pstart": "pstart:k=2",
         "eiu": "eiu:kappa=1"}

#: capability -> the method a strategy declaring it must have.
METHODS = {"needs_window": "with_window", "time_model_aware": "with_time_model", "fast_loo": "loo_orders",
           "has_dataset_scores": "dataset_scores", "has_score_ranks": "score_ranks"}


def _meta():
    cells = {("d1", "A"): (0.80, 10.0), ("d1", "B"): (0.90, 100.0), ("d1", "C"): (0.60, 0.1),
             ("d2", "A"): (0.70, 1.0), ("d2", "B"): (0.75, 1.0), ("d2", "C"): (0.95, 1000.0),
             ("d3", "A"): (0.85, 2.0), ("d3", "B"): (0.80, 0.5), ("d3", "C"): (0.90, 50.0)}
    rows = [dict(dataset=d, learner=l, repeat=0, fold=0, accuracy=a, fit_time=t, predict_time=0.0, status="ok")
            for (d, l), (a, t) in cells.items()]
    return MetaDataset(pd.DataFrame(rows), pd.DataFrame({"dataset": ["d1", "d2", "d3"],
                                                         "majority_fraction": [0.5, 0.6, 0.4]}))


def test_every_registered_strategy_has_a_spec_here():
    assert set(SPECS) == set(STRATEGIES)


@pytest.mark.parametrize("key", sorted(SPECS))
def test_name_is_the_spec_and_read_only(key):
    spec = f"  {SPECS[key]}  "
    s = parse_strategy(spec)
    assert isinstance(s, StrategyBase)
    assert s.name == spec.strip()
    with pytest.raises(AttributeError):
        s.name = "something else"
    assert s.name == spec.strip()


@pytest.mark.parametrize("key", sorted(SPECS))
def test_capabilities_are_declared_bools_matching_the_methods(key):
    s = parse_strategy(SPECS[key])
    for cap in CAPABILITIES:
        assert isinstance(getattr(type(s), cap), bool), (key, cap)
    for cap, method in METHODS.items():
        assert getattr(s, cap) == callable(getattr(s, method, None)), (key, cap, method)


def test_declared_capabilities_of_the_strategies():
    declared = {key: {c for c in CAPABILITIES if getattr(parse_strategy(spec), c)} for key, spec in SPECS.items()}
    assert declared == {
        "ar": {"time_model_aware", "fast_loo", "has_dataset_scores", "has_score_ranks"},
        "random": {"fast_loo"},
        "fastest": {"fast_loo"},
        "best-accuracy": {"fast_loo"},
        "oracle": {"needs_window", "sees_held_out", "fast_loo"},
        "multi2test": set(),
        "at": {"adaptive", "time_model_aware", "fast_loo"},
        "lt": {"needs_window", "time_model_aware", "fast_loo_fit"},
        "ei": {"adaptive", "predicts", "time_model_aware", "conditions_on_landmarks", "fast_loo_fit"},
        "oboe": {"adaptive", "time_model_aware"},
        "portfolio": {"needs_window", "time_model_aware"},
        "pmf": {"adaptive", "time_model_aware"},
        "zeroshot": set(),
        "eit": {"adaptive", "predicts", "time_model_aware", "conditions_on_landmarks"},
        "pstart": {"needs_window", "adaptive", "time_model_aware", "conditions_on_landmarks"},
        "eiu": {"adaptive", "predicts", "time_model_aware", "conditions_on_landmarks", "fast_loo_fit"},
    }


def test_the_tunable_p_is_declared_by_the_strategies():
    from algorank.api import p_families

    declared = {key: parse_strategy(spec).p_upper for key, spec in SPECS.items()}
    assert declared == {"ar": 1.0, "random": None, "fastest": None, "best-accuracy": None, "oracle": None,
                        "multi2test": None, "at": 1.0, "lt": 1.0, "ei": 2.0, "oboe": None, "portfolio": None,
                        "pmf": None, "zeroshot": None, "eit": 2.0, "pstart": None, "eiu": 2.0}
    assert p_families() == {k: v for k, v in declared.items() if v is not None}
    assert parse_strategy("ei").p_grid == (2.0, 1.5, 1.0, 0.5, 0.25, 0.0) and parse_strategy("ar").p_grid is None


def test_conditioned_strategy_declares_its_capabilities():
    s = ConditionedStrategy()
    assert (s.needs_window, s.sees_held_out, s.adaptive, s.predicts, s.time_model_aware) == (
        False, False, True, True, True)
    copy = s.with_time_model(time_overhead=0.3, time_scale=5)
    assert copy.name == s.name == "ei:h=1,p=1" and copy.time_model.overhead == 0.3


@pytest.mark.parametrize("key", ["ar", "at", "lt", "ei", "eit", "eiu"])
def test_copies_keep_the_name(key):
    s = parse_strategy(SPECS[key])
    copy = s.with_time_model(time_overhead=0.25, time_scale=5)
    assert copy.name == s.name and copy is not s
    if s.needs_window:
        assert s.with_window(0.01, 10.0).name == s.name


def test_two_at_specs_differing_only_in_overhead_are_two_strategies():
    specs = ["at:p=1/64,overhead=0.1", "at:p=1/64,overhead=0.5"]
    strategies = [parse_strategy(s) for s in specs]
    assert [s.name for s in strategies] == specs
    assert [s.time_model.overhead for s in strategies] == [0.1, 0.5]
    suite = benchmark_strategies(strategies, _meta(), tmin=0.1, tmax=1000)
    assert [r.strategy for r in suite.results] == specs


@pytest.mark.parametrize("make", [
    lambda o: ActiveTesting(time_overhead=o),
    lambda o: AverageRanking(p=1 / 16, time_overhead=o),
    lambda o: ConditionedStrategy(time_overhead=o),
])
def test_default_names_include_the_time_model(make):
    a, b = make(0.1), make(0.5)
    assert a.name != b.name and "overhead=0.1" in a.name and "overhead=0.5" in b.name
    assert "overhead" not in make(0.0).name


def test_same_spec_twice_is_still_refused():
    with pytest.raises(InputError, match="strategies must be distinct"):
        benchmark_strategies([parse_strategy("at:overhead=0.1"), parse_strategy("at:overhead=0.1")], _meta())


class _UndeclaredFastPath(StrategyBase):
    """Has a ``loo_orders`` method but does not declare ``fast_loo``: the benchmark must not use it."""

    def __init__(self):
        self.inner = AverageRanking(p=0)

    def default_name(self):
        return "undeclared"

    def loo_orders(self, arrays, *, train=None):  # pragma: no cover - must never be called
        raise AssertionError("probed for loo_orders")

    def fit(self, meta):
        self.inner.fit(meta)
        return self

    def policy(self, dataset_info):
        return self.inner.policy(dataset_info)


def test_benchmark_reads_declared_capabilities_instead_of_probing():
    r = leave_one_dataset_out(_UndeclaredFastPath(), _meta(), tmin=0.1, tmax=1000)
    ref = leave_one_dataset_out(AverageRanking(p=0), _meta(), tmin=0.1, tmax=1000)
    assert r.path == "generic" and r.strategy == "undeclared"
    assert r.mil.tolist() == pytest.approx(ref.mil.tolist())


def test_random_and_lt_take_random_state_the_same_way():
    import numpy as np

    assert parse_strategy("lt", random_state=5).random_state == parse_strategy("random", random_state=5).seed == 5
    a = parse_strategy("lt", random_state=np.random.default_rng(1)).random_state
    b = parse_strategy("random", random_state=np.random.default_rng(1)).seed
    assert a == b  # was 0 for lt: a Generator was ignored
    for spec in ("lt", "random"):
        with pytest.raises(InputError, match="random_state"):
            parse_strategy(spec, random_state=-1)
