"""CLI: rank, benchmark, tune-p (JSON keys, tables with the window, files, one-line errors)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from algorank import cli
from algorank.metadata.dataset import MetaDataset


def _run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def small_meta(tmp_path):
    rng = np.random.default_rng(0)
    rows = []
    for d in range(6):
        for j in range(4):
            rows.append(dict(dataset=f"d{d}", learner=f"L{j}", repeat=0, fold=0, accuracy=float(rng.uniform(0.5, 1)),
                             fit_time=float(10 ** rng.uniform(-2, 2)), predict_time=0.0, status="ok"))
    path = tmp_path / "meta.parquet"
    MetaDataset(pd.DataFrame(rows)).save(path)
    return path


@pytest.fixture()
def one_dataset_meta(tmp_path):
    rows = [dict(dataset="d0", learner=l, repeat=0, fold=0, accuracy=a, fit_time=1.0, predict_time=0.0, status="ok")
            for l, a in (("A", 0.8), ("B", 0.7))]
    path = tmp_path / "one.csv"
    MetaDataset(pd.DataFrame(rows)).save(path)
    return path


def test_rank_json_on_snapshot(capsys):
    code, out, err = _run(capsys, "rank", "--meta", "lcdb", "--p", "1/64", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert set(d) >= {"order", "scores"}
    assert len(d["order"]) == 20 and d["p"] == 0.015625 and d["n_datasets"] == 248
    scores = [d["scores"][l] for l in d["order"]]
    assert scores == sorted(scores)


def test_rank_exclude_dataset_and_table(capsys):
    code, out, _ = _run(capsys, "rank", "--meta", "lcdb", "--p", "0", "--exclude-dataset", "1000", "--json")
    assert code == 0 and json.loads(out)["n_datasets"] == 247
    code, out, _ = _run(capsys, "rank", "--meta", "lcdb", "--p", "0.015625")
    assert code == 0 and "P = 0.015625" in out and "mean rank" in out


def test_benchmark_json_and_files(capsys, small_meta, tmp_path):
    out_dir = tmp_path / "out"
    code, out, err = _run(capsys, "benchmark", "--meta", str(small_meta), "--strategy", "ar:p=1/16",
                          "--strategy", "ar:p=0", "--strategy", "oracle", "--tmin", "0.01", "--tmax", "1000",
                          "--json", "--per-dataset", "--out", str(out_dir))
    assert code == 0, err
    d = json.loads(out)
    assert d["tmin"] == 0.01 and d["tmax"] == 1000
    assert set(d["strategies"]) == {"ar:p=1/16", "ar:p=0", "oracle"}
    for v in d["strategies"].values():
        assert set(v) >= {"mean_mil", "median_mil", "mean_spearman", "per_dataset"}
        assert set(v["per_dataset"]) == {f"d{i}" for i in range(6)}
        assert v["mean_mil"] == pytest.approx(np.mean(list(v["per_dataset"].values())))
    assert d["strategies"]["oracle"]["mean_mil"] <= d["strategies"]["ar:p=0"]["mean_mil"]
    assert "Friedman" in d["comparison"]["test"]["method"]
    assert sorted(p.name for p in out_dir.iterdir()) == ["loss_by_tests.png", "loss_time.png", "per_dataset.csv",
                                                        "report.html", "user_metrics.csv", "user_metrics_tests.csv"]
    table = pd.read_csv(out_dir / "per_dataset.csv")
    assert len(table) == 18 and {"strategy", "dataset", "mil"} <= set(table.columns)


def test_benchmark_table_prints_window(capsys, small_meta):
    code, out, _ = _run(capsys, "benchmark", "--meta", str(small_meta), "--strategy", "fastest",
                        "--strategy", "random:seed=1")
    assert code == 0
    assert "log-time in the window " in out and "Wilcoxon" in out
    code, out, _ = _run(capsys, "benchmark", "--meta", str(small_meta), "--strategy", "fastest",
                        "--strategy", "random:seed=1", "--verbose")
    assert code == 0
    assert "tmin = " in out and "tmax = " in out and "Wilcoxon signed-rank" in out


def test_tune_p_json(capsys, small_meta):
    code, out, err = _run(capsys, "tune-p", "--meta", str(small_meta), "--p-grid", "1/4", "1/64", "0",
                          "--nested", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert [r["p"] for r in d["results"]] == [0.25, 0.015625, 0.0]
    assert all(set(r) >= {"p", "mean_mil", "median_mil"} for r in d["results"])
    best = min(d["results"], key=lambda r: r["mean_mil"])["p"]
    assert d["best_p"] == best
    assert {"tmin", "tmax", "nested"} <= set(d)


def test_live_time_model_flags(capsys, small_meta):
    from algorank.evaluation.meta.benchmark import p_sweep
    from algorank.recommender.kernel.time_model import TimeModel
    from algorank.recommender.kernel.environments import meta_arrays
    from algorank.recommender.registry import make_ar

    code, out, err = _run(capsys, "tune-p", "--meta", str(small_meta), "--p-grid", "1/4", "0", "--json",
                          "--time-model", "live", "--cv", "3", "--time-overhead", "0.5")
    assert code == 0, err
    d = json.loads(out)
    assert d["time_model"] == "live tests, 3 x fit + 0.5 s"
    # the same numbers as sweeping the transformed times directly
    arrays = TimeModel(overhead=0.5, scale=3).arrays(meta_arrays(MetaDataset.load(small_meta)))
    direct = p_sweep(arrays, make_strategy=make_ar, grid=[0.25, 0.0])
    assert [r["mean_mil"] for r in d["results"]] == pytest.approx([r.mean_mil for r in direct.results])
    assert (d["tmin"], d["tmax"]) == (direct.tmin, direct.tmax)
    code, out, err = _run(capsys, "benchmark", "--meta", str(small_meta), "--strategy", "ar:p=1/4",
                          "--strategy", "lt:h=inf", "--time-model", "live")
    assert code == 0, err
    from algorank.recommender.kernel.time_model import LIVE_OVERHEAD

    assert f"(live tests, 5 x fit + {LIVE_OVERHEAD:g} s)" in out
    code, out, err = _run(capsys, "tune-p", "--meta", str(small_meta), "--time-model", "live", "--time-overhead", "-1")
    assert code == 2 and err.startswith("error: ") and "time_overhead" in err


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["benchmark", "--strategy", "magic"], "unknown strategy 'magic'"),
        (["benchmark", "--strategy", "ar:p=2"], "P must lie in [0, 1]"),
        (["rank", "--p", "1.5"], "P must lie in [0, 1]"),
        (["tune-p", "--p-grid", "1/64", "3/2"], "P must lie in [0, 1]"),
        (["benchmark", "--strategy", "fastest", "--tmin", "10", "--tmax", "1"], "tmin must be smaller than tmax"),
    ],
)
def test_bad_input_is_one_line_exit_2(capsys, argv, needle):
    code, out, err = _run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err.startswith("error: ") and err.count("\n") == 1 and needle in err


def test_one_dataset_meta_is_exit_2_and_writes_nothing(capsys, one_dataset_meta, tmp_path):
    out_dir = tmp_path / "never"
    for argv in (["benchmark", "--strategy", "ar:p=0", "--out", str(out_dir)], ["tune-p", "--out", str(out_dir)]):
        code, out, err = _run(capsys, *argv, "--meta", str(one_dataset_meta))
        assert code == 2 and err.count("\n") == 1 and "at least 2 datasets" in err
    assert not out_dir.exists()
