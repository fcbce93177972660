"""Missing cells end to end: Multi2Test, the benchmark's strategy comparison and the CD diagram use
Friedman on complete data and Skillings-Mack (or Durbin) otherwise, and say which."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from algorank.evaluation.meta.benchmark import compare_strategies, leave_one_dataset_out
from algorank.evaluation.stats.cd_plot import _unpack
from algorank.evaluation.stats import friedman, posthoc, skillings_mack
from algorank.metadata.dataset import MetaDataset
from algorank.recommender.multitest import multi2test
from algorank.recommender.registry import make_ar
from test_benchmark import synthetic_meta
from test_multitest import _meta


def test_multi2test_auto_on_complete_data_equals_drop():
    meta = _meta()
    auto, drop = multi2test(meta, posthoc_method="holm"), multi2test(meta, posthoc_method="holm", missing="drop")
    assert auto.omnibus_method == drop.omnibus_method == "Friedman chi-square (no tie correction)"
    assert auto.order == drop.order and auto.friedman.statistic == drop.friedman.statistic
    np.testing.assert_array_equal(auto.posthoc.adjusted, drop.posthoc.adjusted)


def test_multi2test_auto_uses_every_dataset_with_skillings_mack():
    meta = _meta(missing={("d3", "mid"), ("d5", "slow")})
    res = multi2test(meta, posthoc_method="holm")
    assert res.omnibus_method == "Skillings-Mack" and res.missing == "auto"
    assert res.friedman.n_datasets == 8 and res.dropped == ()
    # the rank matrix has exactly the two empty cells; MultiTest ranked the 3 learners present there
    assert int(res.ranks.isna().to_numpy().sum()) == 2
    assert sorted(res.ranks.loc["d3"].dropna().tolist()) == [1.0, 2.0, 3.0]
    # the omnibus test is Skillings-Mack of the first-pass ranks, post hoc on its z
    sm = skillings_mack(res.ranks.to_numpy(), lower_is_better=True)
    assert res.friedman.statistic == pytest.approx(sm.statistic)
    ph = posthoc(sm.average_ranks, sm.n_datasets, method="holm", z=sm.pairwise_z, labels=res.labels)
    np.testing.assert_allclose(res.posthoc.adjusted, ph.adjusted)
    assert ("slow", "fast") in res.significant_pairs()
    d = res.to_dict()
    assert d["omnibus_method"] == "Skillings-Mack" and d["omnibus"]["missing_cells"] == 2
    assert d["n_datasets"] == 8 and d["n_dropped"] == 0
    assert any("Skillings-Mack on all 8 datasets" in n for n in res.notes)


def test_multi2test_sets_aside_a_learner_without_shared_splits():
    meta = _meta(n_datasets=6)
    runs = meta.runs
    # keep one of 'mid''s ten 5x2 evaluations on d2: the four learners share a single split there, too
    # few for MultiTest, so 'mid' (fewest evaluations) is set aside on d2 and the other three are ranked
    keep = ~((runs["dataset"] == "d2") & (runs["learner"] == "mid") & (runs["repeat"] > 0))
    keep &= ~((runs["dataset"] == "d2") & (runs["learner"] == "mid") & (runs["fold"] == 1))
    meta2 = MetaDataset(runs[keep], meta.datasets)
    res = multi2test(meta2, posthoc_method="holm")
    assert res.friedman.n_datasets == 6 and np.isnan(res.ranks.loc["d2", "mid"])
    assert any("1 cell(s) set aside" in n for n in res.notes)


def test_benchmark_comparison_with_missing_mil_uses_skillings_mack():
    meta = synthetic_meta(n_datasets=12, seed=4)
    results = [leave_one_dataset_out(make_ar(p), meta, tmin=0.01, tmax=100) for p in (0, 1 / 16, 1 / 4)]
    full = compare_strategies(results)
    assert full.omnibus_method.startswith("Friedman")
    holed = [dataclasses.replace(results[0], mil=np.where(np.arange(12) == 3, np.nan, results[0].mil)),
             *results[1:]]
    c = compare_strategies(holed)
    assert c.omnibus_method == "Skillings-Mack" and c.test.method == "Skillings-Mack"
    x = np.column_stack([r.mil for r in holed])
    assert c.test.statistic == pytest.approx(skillings_mack(x, lower_is_better=True).statistic)
    assert c.to_dict()["omnibus_method"] == "Skillings-Mack"
    np.testing.assert_allclose(c.posthoc.z, skillings_mack(x, lower_is_better=True).pairwise_z)


def test_cd_diagram_title_names_the_omnibus_test():
    meta = _meta(missing={("d3", "mid"), ("d5", "slow")})
    ranks, sig, labels, cd, title = _unpack(multi2test(meta, posthoc_method="holm"))
    assert "Skillings-Mack" in title and cd is None
    _, _, _, _, title_full = _unpack(multi2test(_meta(), posthoc_method="nemenyi"))
    assert "Skillings-Mack" not in title_full
