"""AverageRanking (AR-A3R): hand-computed ranks, ties, missing cells, coverage rule, fast path."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from algorank.recommender.kernel.environments import meta_arrays
from algorank.metadata.dataset import MetaDataset
from algorank.metadata.errors import InputError
from algorank.recommender.average_ranking import AverageRanking, format_p, rescaled_rank_units


def make_meta(cells, majority=None):
    """cells: {(dataset, learner): (accuracy, seconds)} -> MetaDataset with one run per cell."""
    rows = [dict(dataset=d, learner=l, repeat=0, fold=0, accuracy=a, fit_time=t, predict_time=0.0, status="ok")
            for (d, l), (a, t) in cells.items()]
    ds = None
    if majority is not None:
        ds = pd.DataFrame({"dataset": list(majority), "majority_fraction": list(majority.values())})
    return MetaDataset(pd.DataFrame(rows), ds)


def test_hand_computed_average_ranks_p0():
    # d1: A .9  B .8  C .7  -> ranks 1 2 3
    # d2: A .6  B .8  C .7  -> ranks 3 1 2
    # d3: A .9  B .9  C .5  -> ranks 1.5 1.5 3
    # mean: A (1+3+1.5)/3 = 1.8333, B (2+1+1.5)/3 = 1.5, C (3+2+3)/3 = 2.6667
    acc = {"d1": (0.9, 0.8, 0.7), "d2": (0.6, 0.8, 0.7), "d3": (0.9, 0.9, 0.5)}
    meta = make_meta({(d, l): (a, 1.0) for d, v in acc.items() for l, a in zip("ABC", v)})
    ar = AverageRanking(p=0).fit(meta)
    assert ar.order_ == ["B", "A", "C"]
    assert ar.average_rank_["A"] == pytest.approx(5.5 / 3, abs=1e-5)
    assert ar.average_rank_["B"] == pytest.approx(1.5, abs=1e-5)
    assert ar.average_rank_["C"] == pytest.approx(8 / 3, abs=1e-5)


def test_time_changes_the_order():
    # A slightly more accurate but 10_000 times slower than B on both datasets.
    meta = make_meta({("d1", "A"): (0.90, 100.0), ("d1", "B"): (0.89, 0.01),
                      ("d2", "A"): (0.80, 100.0), ("d2", "B"): (0.79, 0.01)})
    assert AverageRanking(p=0).fit(meta).order_ == ["A", "B"]
    # P = 1/64: A3R' = 0.90 / 100**(1/64) = 0.8352 < 0.89 / 0.01**(1/64) = 0.9591
    assert AverageRanking(p=1 / 64).fit(meta).order_ == ["B", "A"]


def test_ties_broken_by_learner_id():
    meta = make_meta({(d, l): (0.8, 1.0) for d in ("d1", "d2") for l in ("Z", "M", "A")})
    ar = AverageRanking(p=0.25).fit(meta)
    assert ar.order_ == ["A", "M", "Z"]
    assert set(ar.average_rank_.values()) == {2.0}


def test_missing_cells_rescaled_and_coverage_rule():
    # L is present only on d1, where it is best of two: rescaled rank 0 -> mean rank 1.
    cells = {("d1", "L"): (0.99, 1.0), ("d1", "A"): (0.5, 1.0)}
    for d in ("d2", "d3", "d4"):
        cells.update({(d, "A"): (0.9, 1.0), (d, "B"): (0.8, 1.0)})
    cells[("d1", "B")] = (0.4, 1.0)
    meta = make_meta(cells)
    # Without a coverage requirement L wins on one lucky dataset.
    assert AverageRanking(p=0, min_coverage=0).fit(meta).order_[0] == "L"
    # Default rule: L has results on 1 of 4 datasets (< 0.5): placed after A and B.
    ar = AverageRanking(p=0).fit(meta)
    assert ar.order_ == ["A", "B", "L"]
    assert ar.coverage_ == {"A": 4, "B": 4, "L": 1}
    # A: d1 rank 2 of 3 -> u = 0.5; d2..d4 rank 1 of 2 -> u = 0: mean u = 0.125 -> 1 + 0.125 * 2 = 1.25
    assert ar.average_rank_["A"] == pytest.approx(1.25)


def test_rescaled_units_exact():
    units, present, denominator = rescaled_rank_units(np.array([[0.9, np.nan, 0.7, 0.8],
                                                                [0.5, np.nan, np.nan, np.nan]]))
    assert present.tolist() == [[True, False, True, True], [True, False, False, False]]
    assert denominator == 4  # lcm of 2 (m - 1) = 4 over the rows with m >= 2
    assert units[0].tolist() == [0, 0, denominator, denominator // 2]
    assert units[1, 0] == denominator // 2  # alone on a dataset: the middle


def test_loo_orders_equal_refitting_exactly():
    rng = np.random.default_rng(3)
    cells = {}
    for d in range(15):
        for j in range(7):
            if rng.random() < 0.2:
                continue  # missing cell
            acc = round(rng.choice([0.6, 0.7, 0.8, rng.uniform(0.5, 1)]), 6)  # many ties
            cells[(f"d{d:02d}", f"L{j}")] = (acc, float(10 ** rng.uniform(-3, 2)))
    meta = make_meta(cells)
    arrays = meta_arrays(meta)
    configs = [(p, mc) for p in (0.0, 1 / 64, 0.25) for mc in (0.0, 0.5, 0.9)]
    loo = {c: AverageRanking(p=c[0], min_coverage=c[1]).loo_orders(arrays) for c in configs}
    for i, d in enumerate(arrays.datasets):
        train = meta.exclude(datasets=[d])
        for c in configs:
            refit = AverageRanking(p=c[0], min_coverage=c[1]).fit(train).order_
            fast = [arrays.learners[j] for j in loo[c][i] if j >= 0]
            assert fast == refit, (c, d)


def test_snapshot_rank_is_reproducible(snapshot):
    a = AverageRanking(p=1 / 16).fit(snapshot)
    b = AverageRanking(p=1 / 16).fit(snapshot)
    assert a.order_ == b.order_ and a.average_rank_ == b.average_rank_
    assert len(a.order_) == 20 and a.n_datasets_ == 248
    ranks = [a.average_rank_[l] for l in a.order_]
    assert ranks == sorted(ranks)  # every learner covers >= 50% of the snapshot's datasets


def test_bad_parameters():
    with pytest.raises(InputError, match="P must"):
        AverageRanking(p=2)
    with pytest.raises(InputError, match="min_coverage"):
        AverageRanking(min_coverage=1.5)
    with pytest.raises(InputError, match="before fit"):
        AverageRanking().policy({})
    assert format_p(1 / 64) == "1/64" and format_p(0) == "0" and format_p(0.3) == "0.3"
