"""The research commands' text for people: the default view fits one screen (60 lines) on the embedded sets,
says which direction is better and what every column means; ``verbose`` adds the detail; multitest says why its
order is not that of the average ranks."""

from __future__ import annotations

import types

import numpy as np
import pandas as pd
import pytest

from algorank import api, cli
from algorank.evaluation.meta.summary_text import GAP_WORDS, SPEARMAN_WORDS
from algorank.recommender.multitest_result import Multi2TestResult
from algorank.results import to_text

SCREEN = 60


@pytest.fixture(scope="module")
def bench():
    return api.benchmark(["ar:p=1/16", "ar:p=0", "fastest"], meta="uci")


@pytest.fixture(scope="module")
def tuned():
    return api.tune_p("uci", nested=True)


def _first_words(text: str, n: int = 40) -> str:
    return " ".join(" ".join(text.split()).split()[:n])


def test_benchmark_default_fits_a_screen_leads_with_the_user_metrics_and_says_what_is_better(bench):
    text = to_text(bench)
    lines = text.splitlines()
    assert len(lines) <= SCREEN, text
    header = next(line for line in lines if line.startswith("strategy"))
    # time to a near-best model and the loss at the budgets come first, the MIL last with its window named
    assert header.index("to near-best") < header.index("loss@1s") < header.index(f"MIL {bench.tmin:g}-{bench.tmax:g} s")
    flat = " ".join(text.split())  # the footer is wrapped
    assert "Lower is better in every column of the first table" in flat
    assert f"log-time in the window {bench.tmin:g} s to {bench.tmax:g} s" in flat
    assert "more W (wins over the reference) is better" in flat
    # detail only with verbose: no Spearman column, no gap column or its definition
    assert not any(line.startswith("strategy") and ("Spearman" in line or "gap" in line) for line in lines)
    assert "gap:" not in text
    body = lines[lines.index(header) + 1:]
    rows = {line.split()[0]: line.split() for line in body[:body.index("")]}
    assert list(rows) == ["ar:p=1/16", "ar:p=0", "fastest", "oracle"]
    m = bench.metrics.get("ar:p=0").totals()
    assert rows["ar:p=0"][-1] == f"{m['mil_mean']:.3f}" == f"{bench.results[1].mean_mil:.3f}"


def test_benchmark_verbose_explains_spearman_and_the_gap(bench):
    text = to_text(bench, verbose=True)
    flat = " ".join(text.split())
    assert _first_words(SPEARMAN_WORDS) in flat and _first_words(GAP_WORDS) in flat
    assert "median MIL" in text and "sign p" in text
    assert len(text.splitlines()) > len(to_text(bench).splitlines())


def test_tune_p_nested_default_fits_a_screen(tuned):
    text = to_text(tuned)
    assert len(text.splitlines()) <= SCREEN, text
    flat = " ".join(text.split())
    assert "Lower is better" in flat and "(best MIL)" in flat and "an honest estimate" in flat
    assert f"ar:p={'1/16' if tuned.best_p == 1 / 16 else ''}" in text
    verbose = tuned.to_text(verbose=True)
    assert "<- best" in verbose and _first_words(GAP_WORDS) in " ".join(verbose.split())


def test_multitest_default_fits_a_screen_and_defines_its_columns():
    res = api.multitest("uci", learners=["knn", "lda", "qda", "logreg", "decision-tree", "bernoulli-nb"], n_jobs=1)
    text = to_text(res)
    assert len(text.splitlines()) <= SCREEN, text
    flat = " ".join(text.split())
    assert "lower is better" in flat and "lower is cheaper" in flat
    assert "significant pairs of the post hoc test" in to_text(res, verbose=True)


def _result(order, ranks, better, prior, method="Skillings-Mack (incomplete blocks)"):
    labels = tuple(sorted(order))
    index = {l: i for i, l in enumerate(labels)}
    frame = pd.DataFrame(ranks, columns=list(labels))
    avg = np.array([np.nanmean(frame[l]) for l in labels])
    b = np.zeros((len(labels), len(labels)), bool)
    for a, c in better:
        b[index[a], index[c]] = True
    fr = types.SimpleNamespace(average_ranks=avg, method=method)
    return Multi2TestResult(order=tuple(order), labels=labels, prior_order=tuple(prior),
                            average_cost=np.zeros(len(labels)), ranks=frame, friedman=fr, posthoc=None, better=b)


def test_a_learner_that_waits_is_explained_with_the_true_reason():
    # q: cheapest, best average rank, runs on 2 of 4 datasets; p beats it by the rank sums (post hoc) and is placed
    # first; on the 2 datasets both have, q comes first on both
    ranks = {"p": [2, 2, 1, 1], "q": [1, 1, np.nan, np.nan], "r": [3, 3, 2, 2]}
    res = _result(["p", "q", "r"], np.array([ranks["p"], ranks["q"], ranks["r"]], float).T,
                  better=[("p", "q"), ("p", "r")], prior=["q", "p", "r"])
    words = res.order_explanations()
    assert words[0].startswith("The order is not that of the average ranks")
    assert words[1] == ("q comes 2nd although it is cheaper than p and has a better average rank (1.00): it waits "
                        "for p (1.50), significantly better ranked by the post hoc test. That test compares "
                        "Skillings-Mack rank sums, which add up over the datasets a learner has runs on: q has runs "
                        "on 2 of 4 datasets, p on 4; on the 2 datasets both have, q comes first on 2.")
    assert len(words) == 2


def test_an_order_that_follows_the_average_ranks_needs_no_explanation():
    res = _result(["a", "b"], np.array([[1, 2], [1, 2]], float), better=[("a", "b")], prior=["a", "b"],
                  method="Friedman")
    assert res.order_explanations() == []


@pytest.mark.parametrize("argv, verbose", [
    (["benchmark", "--strategy", "ar:p=0"], False),
    (["benchmark", "--strategy", "ar:p=0", "--verbose"], True),
    (["--verbose", "benchmark", "--strategy", "ar:p=0"], True),  # not reset by the command's own default
    (["tune-p", "-v"], True),
    (["multitest", "--verbose"], True),
])
def test_verbose_before_or_after_the_command(argv, verbose):
    assert cli.build_parser().parse_args(argv).verbose is verbose


def test_the_command_line_prints_the_detail_with_verbose(capsys):
    argv = ["tune-p", "--meta", "uci", "--p-grid", "1/4", "0", "--quiet"]
    assert cli.main(argv) == 0
    default = capsys.readouterr().out
    assert cli.main([*argv, "--verbose"]) == 0
    verbose = capsys.readouterr().out
    assert "<- best" not in default and "<- best" in verbose
    assert verbose.startswith(default.rstrip("\n").splitlines()[0])


def test_compare_says_which_direction_is_better():
    text = api.compare("uci", learners=["knn", "lda", "logreg"], bayes=False).to_text()
    flat = " ".join(text.split())
    assert "avg rank: mean rank by accuracy over the datasets (1 = best; lower is better)" in flat
    assert "a positive difference favours a (higher accuracy is better)" in flat
