"""A ``$`` in a dataset file name, a learner id or a strategy name is text in every plot, never matplotlib
mathtext (two of them used to end ``--out`` in a ``ParseSyntaxException`` traceback)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from algorank import api, cli
from algorank.metadata.dataset import MetaDataset
from algorank.recommender.kernel.trace import Observation, Trace
from algorank.results import write_files

DATASET = "prices_$5_vs_$10"
LEARNER = "cost_$5_vs_$10"


def _drawn(ax) -> list[str]:
    """Draw the figure (where mathtext is parsed) and return every text shown."""
    import matplotlib.pyplot as plt

    fig = ax.figure
    fig.canvas.draw()
    texts = [t.get_text() for t in fig.findobj(lambda a: hasattr(a, "get_text") and a.get_visible())]
    plt.close(fig)
    return texts


def test_recommend_plot_with_dollar_dataset_and_learner():
    from algorank.recommender.live.plot import plot_recommendation

    trace = Trace(DATASET, (Observation(LEARNER, 0.8, 0.5), Observation("lda", 0.9, 0.3)))
    texts = _drawn(plot_recommendation(trace, label=LEARNER))
    assert f"{DATASET}: best accuracy so far" in texts and LEARNER in texts


def _meta() -> MetaDataset:
    rng = np.random.default_rng(0)
    rows = [{"dataset": f"d{d}", "learner": l, "repeat": 0, "fold": 0, "accuracy": float(a + rng.uniform(0, 0.05)),
             "fit_time": 0.01} for d in range(8) for l, a in ((LEARNER, 0.8), ("lda", 0.7), ("$x$", 0.6))]
    return MetaDataset(pd.DataFrame(rows))


def test_compare_plots_with_dollar_learner_ids(tmp_path):
    result = api.compare(_meta(), nsamples=2000)
    written = write_files(result, tmp_path)
    assert any(w.endswith(".png") for w in written) and (tmp_path / "report.html").is_file()


def test_cd_and_posterior_show_the_ids_as_written():
    from algorank.evaluation.stats import plot_posterior
    from algorank.evaluation.stats.cd_plot import plot_cd

    result = api.compare(_meta(), nsamples=2000)
    texts = _drawn(plot_cd(result.posthoc))
    assert any(t.startswith(f"{LEARNER} (") for t in texts) and any(t.startswith("$x$ (") for t in texts)
    (a, b), bres = next(iter(result.bayes_results.items()))
    texts = _drawn(plot_posterior(bres, names=(a, b)))
    assert any(f"p({a})" in t for t in texts)


def test_loss_plots_with_dollar_strategy_label():
    from algorank.evaluation.meta.plots import plot_loss_by_tests, plot_loss_time

    suite = api.benchmark(["ar:p=0"], _meta().exclude(learners=["$x$"]))
    for r in suite.results:
        object.__setattr__(r, "strategy", "ar_$5_vs_$10")
    assert "ar_$5_vs_$10" in " ".join(_drawn(plot_loss_by_tests(suite.results)))
    assert "ar_$5_vs_$10" in " ".join(_drawn(plot_loss_time(suite.results)))


def test_recommend_out_with_dollar_file_name(tmp_path, capsys):
    """``recommend prices_$5_vs_$10.csv --out DIR``: the run's plots and report are written."""
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60), "class": ["x", "y"] * 30})
    data = tmp_path / f"{DATASET}.csv"
    frame.to_csv(data, index=False)
    meta = tmp_path / "meta.parquet"
    runs = [{"dataset": f"d{d}", "learner": l, "repeat": 0, "fold": 0, "accuracy": a, "fit_time": 0.5}
            for d in range(3) for l, a in (("lda", 0.9), ("knn", 0.8))]
    pd.DataFrame(runs).to_parquet(meta)
    out = tmp_path / "out"
    code = cli.main(["recommend", str(data), "--meta", str(meta), "--budget", "120", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 0 and "Traceback" not in err, err
    assert sorted(p.name for p in out.iterdir() if p.suffix == ".png")
    assert (out / "report.html").is_file()
