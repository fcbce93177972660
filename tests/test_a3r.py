"""A3R / A3R' scores, P parsing, the time floor, and per-row ranking."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import rankdata

from algorank.evaluation.stats.multiple import rank_rows
from algorank.metadata.errors import InputError
from algorank.evaluation.meta.benchmark import PAPER_P_GRID
from algorank.recommender.a3r import TIME_FLOOR, a3r, a3r_prime, check_p, clip_time
from algorank.recommender.registry import parse_p


def test_a3r_hand_values():
    # (0.9 / 0.8) / (10 / 1) ** 0.5 = 1.125 / 3.16227766 = 0.355756...
    assert a3r(0.9, 10.0, 0.8, 1.0, p=0.5) == pytest.approx(1.125 / math.sqrt(10), rel=1e-15)
    # A3R' = 0.9 / 10 ** (1/64)
    assert a3r_prime(0.9, 10.0, p=1 / 64) == pytest.approx(0.9 / 10 ** (1 / 64), rel=1e-15)


def test_p_zero_is_accuracy_only():
    acc = np.array([0.7, 0.9, 0.8])
    assert np.array_equal(a3r_prime(acc, np.array([1e-3, 50.0, 7.0]), p=0), acc)


def test_time_floor_before_power():
    # t = 0 is raised to TIME_FLOOR = 1e-6 s: 0.5 / (1e-6) ** 0.5 = 500, finite.
    assert a3r_prime(0.5, 0.0, p=0.5) == pytest.approx(500.0)
    assert TIME_FLOOR == 1e-6
    assert np.isnan(clip_time([np.nan])[0])
    assert clip_time([0.0, 2e-7, 3.0]).tolist() == [1e-6, 1e-6, 3.0]
    ratio = a3r(0.8, 0.0, 0.8, 0.0, p=0.25)  # both clipped to the floor: ratio 1
    assert ratio == 1.0
    with pytest.raises(InputError, match="time_floor"):
        clip_time([1.0], time_floor=0)


def test_a3r_and_a3r_prime_rank_alike_on_snapshot_like_data():
    rng = np.random.default_rng(7)
    acc = rng.uniform(0.5, 1.0, size=(50, 12))
    sec = 10 ** rng.uniform(-4, 3, size=(50, 12))
    acc[rng.random(acc.shape) < 0.1] = np.nan
    for p in PAPER_P_GRID:
        prime = a3r_prime(acc, sec, p=p)
        ref = np.nanargmax(acc, axis=1)  # a fixed reference learner per dataset
        full = a3r(acc, sec, acc[np.arange(50), ref][:, None], sec[np.arange(50), ref][:, None], p=p)
        assert np.array_equal(rank_rows(prime), rank_rows(full), equal_nan=True)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 999), st.integers(-40, 40)), min_size=2, max_size=8, unique_by=lambda x: x[0]),
    st.sampled_from(PAPER_P_GRID),
    st.integers(0, 7),
)
def test_a3r_equivalence_property(cells, p, ref):
    # Distinct accuracies, times on a grid of 10**(k/10) s: A3R with any fixed reference
    # ranks like A3R' (the reference only multiplies all scores by one positive constant).
    acc = np.array([c[0] / 1000 for c in cells])
    sec = np.array([10 ** (c[1] / 10) for c in cells])
    ref = ref % len(cells)
    prime = a3r_prime(acc, sec, p=p)
    full = a3r(acc, sec, acc[ref], sec[ref], p=p)
    gaps = np.diff(np.sort(prime))
    if gaps.size and gaps.min() <= 1e-9 * prime.max():
        return  # near-ties may round differently; exact ties are covered by the grid case above
    assert np.array_equal(rank_rows(prime), rank_rows(full))


def test_parse_p_forms():
    assert parse_p("1/64") == 0.015625
    assert parse_p("0.015625") == 0.015625
    assert parse_p("0") == 0.0
    assert parse_p(" 1 / 4 ") == 0.25
    assert parse_p(1) == 1.0
    assert parse_p("1/64") == parse_p("0.015625")


@pytest.mark.parametrize("bad", ["2", "-0.1", "1/0", "abc", "nan", "inf", "", "-1/64", "3/2"])
def test_parse_p_rejects(bad):
    with pytest.raises(InputError, match="P must"):
        parse_p(bad)


def test_check_p_rejects():
    for bad in (1.5, -1e-9, float("nan"), "x"):
        with pytest.raises(InputError):
            check_p(bad)


@pytest.mark.parametrize("bad, numeric", [("2", 2.0), ("-0.1", -0.1), ("nan", float("nan")), ("abc", None),
                                          ("1/0", None)])
def test_parse_p_and_check_p_give_one_message(bad, numeric):
    # parse_p parses the text, check_p validates: the same words, naming the text as typed
    with pytest.raises(InputError) as parsed:
        parse_p(bad)
    assert str(parsed.value).endswith(f"got {bad!r}")
    if numeric is not None:
        with pytest.raises(InputError) as checked:
            check_p(numeric)
        assert str(checked.value).replace(repr(numeric), repr(bad)) == str(parsed.value)
    else:
        with pytest.raises(InputError) as checked:
            check_p(bad)
        assert str(checked.value) == str(parsed.value)
        assert "such as 1/64" in str(parsed.value)


def test_format_p_is_the_one_p_label():
    from algorank.evaluation.meta import plots
    from algorank.recommender.kernel import labels
    from algorank.recommender import average_ranking

    assert average_ranking.format_p is labels.format_p and not hasattr(plots, "p_label")
    assert [labels.format_p(p) for p in (0, 1, 0.5, 1 / 64, 0.3)] == ["0", "1", "1/2", "1/64", "0.3"]


def test_p_sweep_boxplot_labels_p_one_as_1():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from algorank.evaluation.meta.plots import plot_mil_boxplots

    class Sweep:  # what plot_mil_boxplots reads of a PSweepResult
        grid = (0.0, 1 / 64, 1.0)
        results = [type("R", (), {"mil": np.array([1.0, 2.0])})() for _ in grid]
        tmin, tmax = 0.01, 10.0

    ax = plot_mil_boxplots(Sweep())
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "1/64", "1"]  # was "1/1" at P = 1
    plt.close(ax.figure)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from([0.0, 0.1, 0.2, 0.2, 0.5, 1.0, np.inf, np.nan]), min_size=4, max_size=4),
                min_size=1, max_size=5))
def test_rank_rows_matches_scipy(rows):
    v = np.array(rows, dtype=float)
    got = rank_rows(v)
    for i in range(v.shape[0]):
        ok = ~np.isnan(v[i])
        expect = rankdata(-v[i][ok], method="average")
        assert np.array_equal(got[i][ok], expect)
        assert np.isnan(got[i][~ok]).all()
    low = rank_rows(v, lower_is_better=True)
    for i in range(v.shape[0]):
        ok = ~np.isnan(v[i])
        assert np.array_equal(low[i][ok], rankdata(v[i][ok], method="average"))


def test_rank_rows_missing_cells_do_not_tie_with_a_zero():
    # the hand-written version this replaced gave NaN cells the key 0.0, so they tied with a 0
    # score in last place: 0.0 ranked 3.5 instead of 3 here
    assert rank_rows(np.array([[0.5, 0.0, np.nan, 0.7]])).tolist()[0][:2] == [2.0, 3.0]
    assert np.isnan(rank_rows(np.array([[0.5, 0.0, np.nan, 0.7]]))[0, 2])
    assert rank_rows(np.array([np.nan, 1.0, 1.0])).tolist()[1:] == [1.5, 1.5]
