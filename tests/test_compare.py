"""`algorank compare` and algorank.evaluation.stats.compare: the omnibus test that fits the gaps, post hoc or control
versus all, and per pair the effect sizes, intervals and Bayesian probabilities, equal to the
underlying functions; JSON, table, plots and errors."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from cli import main
from algorank.evaluation.stats.compare import compare_learners
from algorank.evaluation.stats import (
    bayesian_signed_rank,
    cliffs_delta,
    control_vs_all,
    friedman,
    posthoc,
    skillings_mack,
    wilcoxon_signed_rank,
)
from algorank.metadata.dataset import MetaDataset
from algorank.metadata.errors import InputError


def _meta(n=25, k=4, holes=0.0, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for d in range(n):
        base = rng.uniform(0.6, 0.9)
        for j in range(k):
            if holes and j > 0 and rng.random() < holes:
                continue
            for f in range(3):
                rows.append({"dataset": f"d{d:02d}", "learner": f"L{j}", "repeat": 0, "fold": f,
                             "accuracy": float(np.clip(base + 0.015 * j + 0.02 * rng.standard_normal(), 0, 1))})
    return MetaDataset(pd.DataFrame(rows))


def test_all_pairs_equal_the_underlying_functions():
    meta = _meta()
    res = compare_learners(meta, nsamples=500, random_state=3)
    x = meta.matrix("accuracy").to_numpy()
    fr = friedman(x)
    assert res.omnibus_method.startswith("Friedman") and res.omnibus.statistic == pytest.approx(fr.statistic)
    ph = posthoc(fr.average_ranks, fr.n_datasets, method="holm", labels=res.labels)
    np.testing.assert_allclose(res.posthoc.adjusted, ph.adjusted)
    assert len(res.pairs) == 6
    p = res.pairs[2]  # L0 - L3
    assert (p["a"], p["b"], p["n"]) == ("L0", "L3", 25)
    assert p["mean_difference"] == pytest.approx(np.mean(x[:, 0] - x[:, 3]))
    ci = stats.ttest_rel(x[:, 0], x[:, 3]).confidence_interval()
    assert (p["ci_low"], p["ci_high"]) == pytest.approx((ci.low, ci.high))
    w = wilcoxon_signed_rank(x[:, 0], x[:, 3], zero_method="pratt")
    assert p["wilcoxon_pvalue"] == pytest.approx(w.pvalue) and p["rank_biserial"] == pytest.approx(w.effect_size)
    assert p["cliffs_delta"] == pytest.approx(cliffs_delta(x[:, 0], x[:, 3]))
    b = bayesian_signed_rank(x[:, 0], x[:, 3], nsamples=500, random_state=3)
    assert (p["bayes"]["p_left"], p["bayes"]["p_rope"], p["bayes"]["p_right"]) == b.probabilities
    d = res.to_dict()
    assert d["omnibus"]["kendall_w"] == pytest.approx(fr.kendall_w) and "posthoc" in d and "control" not in d


def test_control_and_missing_cells_use_skillings_mack():
    meta = _meta(n=30, holes=0.2, seed=1)
    res = compare_learners(meta, control="L3", control_method="finner", bayes=False)
    x = meta.matrix("accuracy").to_numpy()
    sm = skillings_mack(x)
    assert res.omnibus_method == "Skillings-Mack" and res.omnibus.statistic == pytest.approx(sm.statistic)
    ref = control_vs_all(sm.average_ranks, sm.n_datasets, control=3, method="finner", z=sm.pairwise_z,
                         labels=res.labels)
    np.testing.assert_allclose(res.control.adjusted, ref.adjusted)
    assert [(p["a"], p["b"]) for p in res.pairs] == [("L3", "L0"), ("L3", "L1"), ("L3", "L2")]
    assert all("bayes" not in p for p in res.pairs)
    assert any("empty cells" in n for n in res.notes)


def test_bootstrap_interval_is_seeded():
    meta = _meta(seed=2)
    a = compare_learners(meta, ci_method="bootstrap", bayes=False, random_state=5, n_resamples=999)
    b = compare_learners(meta, ci_method="bootstrap", bayes=False, random_state=5, n_resamples=999)
    assert [p["ci_low"] for p in a.pairs] == [p["ci_low"] for p in b.pairs]
    assert "bootstrap" in a.pairs[0]["ci_method"]


def test_cli_json_table_and_plots(capsys, tmp_path):
    path = tmp_path / "runs.csv"
    _meta(seed=4).runs.drop(columns=["fit_time", "predict_time"]).to_csv(path, index=False)  # accuracy only
    code = main(["compare", "--meta", str(path), "--json", "--bayes-samples", "300", "--out", str(tmp_path / "o")])
    out, err = capsys.readouterr()
    assert code == 0, err
    d = json.loads(out)
    assert d["omnibus_method"].startswith("Friedman") and len(d["pairs"]) == 6
    assert all(0 <= p["bayes"]["p_rope"] <= 1 for p in d["pairs"]) and d["pairs"][0]["bayes"]["rope"] == 0.01
    names = sorted(p.rsplit("/", 1)[-1] for p in d["written"])
    assert names[0] == "bayes_L0_vs_L1.png" and "cd_diagram.png" in names and "report.html" in names
    assert len(names) == 8
    code = main(["compare", "--meta", str(path), "--control", "L0", "--no-bayes"])
    out, _ = capsys.readouterr()
    assert code == 0 and "control L0 versus all (holm)" in out and "Kendall's W" in out


def test_errors():
    meta = _meta(n=5)
    with pytest.raises(InputError, match="control"):
        compare_learners(meta, control="L9")
    with pytest.raises(InputError, match="at least 2"):
        compare_learners(meta, learners=["L0"])
    with pytest.raises(InputError, match="unknown learner"):
        compare_learners(meta, learners=["L0", "nope"])
    # a misspelt name gets the closest one, and the names the meta-data knows are listed
    from algorank.recommender.multitest import resolve_learners

    with pytest.raises(InputError, match=r"^unknown learner\(s\) randm-forest \(did you mean 'random-forest'\?\); "
                                         r"learners of this meta-data: knn, random-forest$"):
        resolve_learners(["knn", "randm-forest"], ["sklearn.neighbors.KNeighborsClassifier",
                                                   "sklearn.ensemble.RandomForestClassifier"])
    with pytest.raises(InputError, match=r"^unknown learner\(s\) zz; learners of this meta-data: L0, L1$"):
        resolve_learners(["zz"], ["L1", "L0"])
    code = main(["compare", "--meta", "lcdb", "--control-method", "sidak", "--no-bayes", "--quiet"])
    assert code == 2
