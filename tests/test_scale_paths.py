"""The vectorised paths that make the meta-level commands scale give exactly what the per-row references give:
mid ranks against scipy, the exact mean-rank order of average ranking against brute-force fractions (missing
cells, many distinct denominators, exact ties, training masks), the oracle's fronts and MILs against
``oracle_order`` row by row, the MIL with a per-row window start, the small default JSON of ``tune-p`` and
``benchmark``, and tables whose columns never run together."""

from __future__ import annotations

import dataclasses
import json
import math
import types
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from algorank import cli
from algorank.evaluation.meta.benchmark import benchmark_strategies
from algorank.recommender.kernel.environments import meta_arrays
from algorank.recommender.kernel.loss_time import loss_steps, mil_rows, row_chunks, spearman_rows, twice_ranks
from algorank.recommender.kernel.oracle import oracle_mils, oracle_order, pareto_fronts
from algorank.evaluation.meta.user_metrics import MetricComparison
from algorank.evaluation.stats.multiple import rank_rows
from algorank.metadata.dataset import MetaDataset
from algorank.recommender import average_ranking
from algorank.recommender.average_ranking import AverageRanking, _ordered, exact_mean_orders, rank_unit_fractions
from algorank.recommender.registry import parse_strategy


def random_meta(n, k, seed, *, missing=0.25, ties=True, copies=0):
    """Random meta-data; the last ``copies`` learners repeat learner 0 exactly (exact ties in every mean rank)."""
    rng = np.random.default_rng(seed)
    rows = []
    for d in range(n):
        for j in range(k):
            if j > 0 and rng.random() < missing:
                continue
            acc = float(rng.choice([0.6, 0.7, 0.8])) if ties and rng.random() < 0.5 else round(rng.uniform(0.5, 1), 6)
            t = 0.0 if rng.random() < 0.05 else float(10 ** rng.uniform(-3, 2))
            for name in [f"L{j:02d}"] + ([f"C{c}" for c in range(copies)] if j == 0 else []):
                rows.append(dict(dataset=f"d{d:03d}", learner=name, repeat=0, fold=0, accuracy=acc, fit_time=t,
                                 predict_time=0.0, status="ok"))
    ds = pd.DataFrame({"dataset": [f"d{d:03d}" for d in range(n)],
                       "majority_fraction": [float("nan") if d % 5 == 0 else 0.4 for d in range(n)]})
    return MetaDataset(pd.DataFrame(rows), ds)


# ---------------------------------------------------------------- ranks
@pytest.mark.parametrize("seed", range(6))
def test_twice_ranks_are_scipys_mid_ranks(seed):
    rng = np.random.default_rng(seed)
    for _ in range(50):
        n, k = rng.integers(1, 9), rng.integers(1, 14)
        x = rng.choice([0.1, 0.2, 0.5, np.nan, np.inf, -np.inf], size=(n, k)) if seed % 2 else rng.normal(size=(n, k))
        twice, present = twice_ranks(x)
        ref = stats.rankdata(-x, axis=-1, nan_policy="omit")
        assert np.array_equal(present, ~np.isnan(ref))
        assert np.array_equal(twice[present], 2 * (ref[present] - 1))
        assert (twice[~present] == 0).all()


def test_twice_ranks_by_hand():
    twice, present = twice_ranks([[0.9, np.nan, 0.7, 0.9, 0.1]])
    # 0.9 and 0.9 share positions 1-2 (mid rank 1.5), 0.7 is 3rd, 0.1 4th: 2 (r - 1) = 1, 1, 4, 6
    assert twice.tolist() == [[1, 0, 4, 1, 6]] and present.tolist() == [[True, False, True, True, True]]


def test_spearman_rows_match_the_rank_rows_formula():
    rng = np.random.default_rng(4)
    ideal = rng.choice([0.2, 0.5, 0.9, -np.inf], size=(40, 7))
    valid = np.arange(7)[None, :] < rng.integers(0, 8, 40)[:, None]
    rho = spearman_rows(ideal, valid)
    for i in range(40):
        m = int(valid[i].sum())
        if m < 2 or len(set(ideal[i, :m])) == 1:
            assert np.isnan(rho[i])
        else:
            r = stats.rankdata(-ideal[i, :m])
            assert rho[i] == pytest.approx(np.corrcoef(np.arange(1, m + 1), r)[0, 1], abs=1e-12)


# ---------------------------------------------------------------- exact mean-rank order
def brute_order(units_num, units_den, present, train, *, held, min_coverage):
    """Learners by (unknown out, below coverage last, exact mean rescaled rank, index), with Fractions."""
    k = present.shape[1]
    rows = [d for d in np.flatnonzero(train) if d != held]
    sums = [sum((Fraction(int(units_num[d, j]), int(units_den[d])) for d in rows if present[d, j]), Fraction(0))
            for j in range(k)]
    counts = [sum(1 for d in rows if present[d, j]) for j in range(k)]
    known = [j for j in range(k) if counts[j] > 0]
    return sorted(known, key=lambda j: (counts[j] < min_coverage * len(rows), sums[j] / counts[j], j))


@pytest.mark.parametrize("seed", range(4))
def test_loo_orders_equal_brute_force_fractions(seed):
    # 14 learners and 30% missing cells: many distinct 2 (m - 1), so the common denominator is large
    meta = random_meta(24, 14, seed, missing=0.3, copies=2)
    arrays = meta_arrays(meta)
    rng = np.random.default_rng(seed)
    for p, mc in ((0.0, 0.5), (1 / 16, 0.0), (0.25, 0.9)):
        ar = AverageRanking(p=p, min_coverage=mc)
        units = ar._units(arrays)
        for train in (None, rng.random(len(arrays.datasets)) < 0.7):
            t = np.ones(len(arrays.datasets), dtype=bool) if train is None else train
            loo = ar.loo_orders(arrays, train=train)
            for d in range(len(arrays.datasets)):
                ref = brute_order(units.num, units.den, units.present, t, held=d, min_coverage=mc)
                assert [j for j in loo[d] if j >= 0] == ref, (p, mc, d)


def test_exact_comparison_decides_the_ties(monkeypatch):
    # learners C0, C1 repeat L00: their mean ranks tie exactly on every training set, so the exact integer
    # sums are consulted and the index decides
    asked = []
    numerator = average_ranking._ExactSums.numerator
    monkeypatch.setattr(average_ranking._ExactSums, "numerator",
                        lambda self, j, held=None: asked.append(j) or numerator(self, j, held))
    arrays = meta_arrays(random_meta(20, 9, 1, missing=0.3, copies=2))
    loo = AverageRanking(p=1 / 16, min_coverage=0.0).loo_orders(arrays)
    first = {arrays.learners.index(x) for x in ("C0", "C1", "L00")}
    assert first <= set(asked)
    for row in loo:
        pos = [list(row).index(j) for j in sorted(first)]
        assert pos == sorted(pos) and pos[-1] - pos[0] == 2  # adjacent, in index order


def test_fit_order_and_mean_ranks_are_exact():
    meta = random_meta(30, 9, 7, missing=0.2, copies=1)
    arrays = meta_arrays(meta)
    ar = AverageRanking(p=0.0, min_coverage=0.0).fit(meta)
    num, den, present = rank_unit_fractions(np.where(arrays.has_accuracy, arrays.accuracy, np.nan))
    ref = brute_order(num, den, present, np.ones(len(arrays.datasets), dtype=bool), held=-1, min_coverage=0.0)
    assert ar.order_ == [arrays.learners[j] for j in ref]
    k = len(arrays.learners)
    for j, learner in enumerate(arrays.learners):
        exact = sum(Fraction(int(num[d, j]), int(den[d])) for d in range(len(arrays.datasets)) if present[d, j])
        assert ar.average_rank_[learner] == float(1 + exact / int(present[:, j].sum()) * (k - 1))


def test_runs_too_close_for_the_floats_are_sorted_exactly():
    # floats within the error bound say b < a < c; the exact values say c < a < b (and d, far above, stays last)
    mean = np.array([[0.5, 0.5 - 1e-12, 0.5 + 1e-12, 0.9]])
    exact_values = {0: Fraction(1, 2), 1: Fraction(1, 2) + Fraction(1, 10**9), 2: Fraction(1, 2) - Fraction(1, 10**9),
                    3: Fraction(9, 10)}
    order = _ordered(mean, np.array([1e-11]), np.ones((1, 4), dtype=bool), np.zeros((1, 4), dtype=bool),
                     lambda row, cols: [exact_values[int(j)] for j in cols])
    assert order.tolist() == [[2, 0, 1, 3]]
    # exact ties go to the index, whatever order the floats came in
    order = _ordered(np.array([[0.3, 0.3, 0.1]]), np.array([0.0]), np.ones((1, 3), dtype=bool),
                     np.array([[False, False, True]]), lambda row, cols: [Fraction(3, 10)] * len(cols))
    assert order.tolist() == [[0, 1, 2]]  # the below-coverage learner last despite its smaller mean


def test_exact_mean_orders_with_python_integers():
    big = 10**30
    sums = np.array([[big + 1, big, 2 * big + 2, 5]], dtype=object)
    counts = np.array([[1, 1, 2, 0]])
    below = np.zeros((1, 4), dtype=bool)
    # means: big + 1, big, big + 1 (exact tie with column 0), unknown last
    assert exact_mean_orders(sums, counts, below).tolist() == [[1, 0, 2, 3]]


# ---------------------------------------------------------------- oracle and MIL
def test_pareto_fronts_and_oracle_mils_equal_the_row_by_row_search():
    rng = np.random.default_rng(11)
    n, k = 40, 12
    acc = rng.choice([0.6, 0.7, 0.8, 0.9, np.nan], size=(n, k))
    acc[:, 0] = 0.65
    sec = 10 ** rng.uniform(-3, 2, size=(n, k))
    sec[rng.random((n, k)) < 0.05] = 0.0
    baseline = rng.uniform(0.3, 0.7, n)
    for i, front in enumerate(pareto_fronts(acc, sec)):
        ok = np.flatnonzero(np.isfinite(acc[i]))
        by_time = sorted(ok, key=lambda j: (sec[i, j], -acc[i, j], j))
        ref, top = [], -math.inf
        for j in by_time:
            if acc[i, j] > top:
                ref.append(j)
                top = acc[i, j]
        assert front.tolist() == ref
    starts = 10 ** rng.uniform(-3, 0, n)
    windows = [(0.01, 100.0), (starts, 5.0), (1e-3, 1.0)]
    mils = oracle_mils(acc, sec, baseline, windows)
    for i in range(n):
        for w, (lo, hi) in enumerate(windows):
            lo_i = lo[i] if np.ndim(lo) else lo
            assert mils[i, w] == oracle_order(acc[i], sec[i], baseline=baseline[i], tmin=lo_i, tmax=hi)[1]


def test_oracle_mils_mark_empty_windows():
    out = oracle_mils([[0.8, 0.9]], [[1.0, 2.0]], [0.5], [(np.array([3.0]), 2.0)])
    assert np.isnan(out[0, 0])


def test_mil_rows_with_a_start_per_row_equals_one_row_at_a_time():
    rng = np.random.default_rng(2)
    acc = rng.uniform(0.5, 1.0, (25, 6))
    sec = 10 ** rng.uniform(-2, 1, (25, 6))
    cum, losses, initial = loss_steps(acc, sec, acc.max(axis=1), np.full(25, 0.4))
    starts = 10 ** rng.uniform(-3, 0, 25)
    together = mil_rows(cum, losses, initial, tmin=starts, tmax=10.0)
    for i in range(25):
        assert together[i] == mil_rows(cum[i:i + 1], losses[i:i + 1], initial[i:i + 1], tmin=starts[i], tmax=10.0)[0]


def test_row_chunks_cover_every_row_once():
    chunks = row_chunks(1000, 700)
    assert chunks[0].start == 0 and chunks[-1].stop == 1000
    assert all(a.stop == b.start for a, b in zip(chunks, chunks[1:]))
    assert row_chunks(3, 10**9) == [slice(0, 1), slice(1, 2), slice(2, 3)]


def test_blocks_do_not_change_the_scores(monkeypatch):
    from algorank.recommender.kernel import loss_time

    meta = random_meta(30, 8, 5)
    specs = ["ar:p=1/16", "fastest", "oracle"]
    whole = benchmark_strategies([parse_strategy(s) for s in specs], meta, tmin=0.01, tmax=100)
    monkeypatch.setattr(loss_time, "CHUNK_CELLS", 8)  # one row per block
    rowwise = benchmark_strategies([parse_strategy(s) for s in specs], meta, tmin=0.01, tmax=100)
    for a, b in zip(whole.results, rowwise.results):
        assert np.array_equal(a.sequences, b.sequences)
        for name in ("mil", "spearman", "spearman_score"):
            assert np.array_equal(getattr(a, name), getattr(b, name), equal_nan=True)
    assert whole.metrics.to_dict() == rowwise.metrics.to_dict()


# ---------------------------------------------------------------- output size and tables
def test_default_json_leaves_out_the_per_dataset_values(tmp_path, capsys):
    path = tmp_path / "meta.parquet"
    random_meta(12, 5, 3).save(path)
    assert cli.main(["tune-p", "--meta", str(path), "--p-grid", "0", "1/16", "--json"]) == 0
    small = capsys.readouterr().out
    assert cli.main(["tune-p", "--meta", str(path), "--p-grid", "0", "1/16", "--json", "--per-dataset"]) == 0
    full = capsys.readouterr().out
    assert "per_dataset" not in small and len(small) < len(full)
    d, f = json.loads(small), json.loads(full)
    assert set(f["user_metrics"]["strategies"]["ar:p=0"]["per_dataset"]) == {f"d{i:03d}" for i in range(12)}
    totals = {k: v for k, v in f["user_metrics"]["strategies"]["ar:p=0"].items() if k != "per_dataset"}
    assert d["user_metrics"]["strategies"]["ar:p=0"] == totals
    assert cli.main(["benchmark", "--meta", str(path), "--strategy", "ar:p=0", "--strategy", "fastest",
                     "--json"]) == 0
    b = json.loads(capsys.readouterr().out)
    assert "per_dataset" not in b["strategies"]["fastest"] and b["strategies"]["fastest"]["n_datasets"] == 12


def test_four_digit_wins_ties_losses_never_run_into_the_p_value():
    meta = random_meta(6, 4, 1)
    suite = benchmark_strategies([parse_strategy("ar:p=0"), parse_strategy("fastest")], meta, tmin=0.01, tmax=100)
    wide = MetricComparison(metric="time_to_eps", strategy="a-strategy-with-a-long-name:p=1/16", reference="ar:p=0",
                            wins=1418, ties=319, losses=2632, sign=types.SimpleNamespace(pvalue=2.76e-191),
                            wilcoxon=types.SimpleNamespace(pvalue=1.5e-300), total=1.0, reference_total=2.0,
                            oracle_total=0.5, gap_closed=0.6667)
    report = dataclasses.replace(suite.metrics, comparisons=(wide,))
    lines = "\n".join(report.text_lines()).splitlines()
    row = next(line for line in lines if "1418/319/2632" in line)
    assert row.split() == ["a-strategy-with-a-long-name:p=1/16", "time_to_eps", "1418/319/2632", "2.76e-191",
                           "1.5e-300", "0.67"]
    header = lines[lines.index(row) - 1]
    assert header.split() == ["strategy", "metric", "W/T/L", "sign", "p", "Wilcoxon", "p", "gap"]
    # every column ends (right-aligned) or starts (left-aligned) at the same place in the header and the row
    assert header.index("W/T/L") + len("W/T/L") == row.index("1418/319/2632") + len("1418/319/2632")
    assert header.index("sign p") + len("sign p") == row.index("2.76e-191") + len("2.76e-191")
