"""``report.html`` of recommend, benchmark and compare: one self-contained file, data strings escaped, and
rendered in headless Chromium (tables present, images decoded, no console errors; skipped without Chromium).

Chromium for these tests: ``apt-get install chromium`` (Debian/Ubuntu), or set ``$CHROMIUM`` to a binary.
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from algorank import cli
from algorank.metadata.dataset import MetaDataset

from chromium import find_chromium, inspect_page

HOSTILE = "<script>alert(1)</script>"


def _self_contained(html: str) -> None:
    assert "<script" not in html  # no script at all: a hostile id is text
    for src in re.findall(r'(?:src|href)="([^"]*)"', html):
        assert src.startswith("data:image/png;base64,"), src  # nothing fetched from anywhere


def _meta(tmp_path, *, hostile: bool = False) -> Path:
    """A small accuracy meta-data file: 4 learners (one named like markup) on 8 datasets."""
    rng = np.random.default_rng(0)
    learners = ["sklearn.naive_bayes.GaussianNB", "sklearn.tree.DecisionTreeClassifier",
                "sklearn.neighbors.KNeighborsClassifier", HOSTILE if hostile else "sklearn.linear_model.Perceptron"]
    runs = [{"dataset": f"d{d}", "learner": l, "repeat": 0, "fold": f, "accuracy": 0.7 + 0.05 * i + rng.normal(0, 0.02),
             "fit_time": 0.01 * (i + 1), "predict_time": 0.001} for d in range(8) for i, l in enumerate(learners)
            for f in range(2)]
    path = tmp_path / "meta.csv"
    pd.DataFrame(runs).to_csv(path, index=False)
    return path


def _check_rendered(html_path: Path, tmp_path: Path, *, tables: int, images: int) -> dict:
    if find_chromium() is None:
        pytest.skip("Chromium is not installed (apt-get install chromium, or set $CHROMIUM): the report is "
                    "checked as HTML only")
    pytest.importorskip("tornado", reason="tornado (in the test extra, through distributed) talks to Chromium")
    shot = tmp_path / (html_path.parent.name + "_screenshot.png")
    facts = inspect_page(html_path, shot)
    assert facts["console_errors"] == []
    assert facts["tables"] >= tables and facts["rows"] > 0
    assert len(facts["images"]) >= images
    assert all(i["complete"] and i["width"] > 100 and i["height"] > 100 for i in facts["images"])  # decoded
    assert facts["scripts"] == 0
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert width == 1280 and height > 600  # the whole page, not an empty one
    return facts


def test_recommend_report(tmp_path, capsys):
    out = tmp_path / "rec"
    code = cli.main(["recommend", "sklearn:iris", "--budget", "30", "--top", "3", "--cv", "3", "--quiet",
                     "--exclude-dataset", "iris", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    html = (out / "report.html").read_text(encoding="utf-8")
    _self_contained(html)
    for heading in ("The answer", "Best model:", "Leaderboard", "Why each learner was tested when it was",
                    "The formula and the numbers", "The dataset", "most similar prior datasets", "The plan",
                    "vs best (points)", "why at this step", "The live tests", "Where the time went", "p(fail)",
                    "90 % interval", "landmarkers"):
        assert heading in html
    # the answer comes first, then the leaderboard, the decisions, the plan, the tests
    order = [html.index(f'id="{key}"') for key in ("answer", "leaderboard", "decisions", "plan", "tests", "dataset")]
    assert order == sorted(order)
    facts = _check_rendered(out / "report.html", tmp_path, tables=5, images=2)
    assert "Best model:" in facts["text"] and "live tests" in facts["text"]
    assert "why at this step" not in facts["text"]  # the formula's numbers are folded away


def test_benchmark_report(tmp_path, capsys):
    out = tmp_path / "bench"
    code = cli.main(["benchmark", "--meta", str(_meta(tmp_path)), "--strategy", "ar:p=0", "--strategy", "ar:p=1/16",
                     "--strategy", "random:seed=0", "--quiet", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    html = (out / "report.html").read_text(encoding="utf-8")
    _self_contained(html)
    assert "Strategies" in html and "Critical-difference" in html and "Mean loss against test time" in html
    _check_rendered(out / "report.html", tmp_path, tables=2, images=3)


def test_compare_report_escapes_data_strings(tmp_path, capsys):
    out = tmp_path / "cmp"
    code = cli.main(["compare", "--meta", str(_meta(tmp_path, hostile=True)), "--bayes-samples", "500", "--quiet",
                     "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    html = (out / "report.html").read_text(encoding="utf-8")
    _self_contained(html)
    assert HOSTILE not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "Pairwise effects" in html and "Bayesian posteriors" in html and "Critical-difference" in html
    facts = _check_rendered(out / "report.html", tmp_path, tables=3, images=2)
    assert HOSTILE in facts["text"]  # shown as text


def test_report_renders_without_chromium_and_escapes_everything():
    from algorank.report import Report, Section, Table, render

    html = render(Report(title=HOSTILE, facts=[("a<b", "c&d")], notes=['"quoted"'],
                         sections=[Section(HOSTILE, text=["x < y"], tables=[Table(["h<"], [[HOSTILE], [1.5], [3]])])]))
    assert HOSTILE not in html and "&lt;script&gt;" in html and "a&lt;b" in html and "c&amp;d" in html
    assert "x &lt; y" in html and ">1.5000<" in html and ">3<" in html


#: Layout facts of a rendered report: widths, the tables that scroll sideways, where the answer and the leaderboard are.
LAYOUT = """JSON.stringify({
  docWidth: document.documentElement.scrollWidth, viewWidth: window.innerWidth,
  overflowing: Array.from(document.querySelectorAll('table')).filter(t => t.scrollWidth > t.clientWidth + 1)
                    .map(t => t.id || '?'),
  answerTop: document.getElementById('answer').getBoundingClientRect().top,
  answerText: document.querySelector('#answer .answer').innerText,
  boardTop: document.getElementById('leaderboard-table').getBoundingClientRect().top,
  firstRowBottom: document.querySelector('#leaderboard-table tbody tr').getBoundingClientRect().bottom,
  firstRow: document.querySelector('#leaderboard-table tbody tr').innerText
})"""


def test_recommend_report_reads_top_down_and_fits_1280_px(tmp_path):
    """At 1280 px: no sideways scrolling of the page or of any table (long messages and ids wrap), and the first
    screen (800 px) shows the best model and the top of the leaderboard."""
    from dataclasses import replace

    import algorank
    from algorank.recommender.kernel.trace import Observation, Trace
    from algorank.report import recommend_report, write_report

    r = algorank.recommend("sklearn:iris", budget=30, top=3, cv=3, exclude_datasets=["iris"], refit=False)
    long_id = "sklearn.discriminant_analysis.QuadraticDiscriminantAnalysis" + "{" + '"reg_param": 0.0, ' * 6 + "}"
    message = ("LinAlgError: The covariance matrix of class 0 is not full rank. Increase the value of `reg_param` to "
               "reduce the collinearity. ") * 3
    extra = (Observation(long_id, float("nan"), 0.2, "error", message.strip()),
             Observation("sklearn.neighbors.KNeighborsClassifier", float("nan"), 0.1, "timeout",
                         "stopped after its first fold: accuracy 0.9211 below the bar 0.9491", capped=True,
                         screened=True, fold_accuracy=0.9211))
    obs = tuple(r.trace.observations) + extra
    rec = replace(r, trace=Trace(dataset=r.dataset, observations=obs, stopped="policy"),
                  test_times=tuple(r.test_times) + ((0.0, 0.2), (0.2, 0.3)))
    folder = tmp_path / "wide"
    html_path = Path(write_report(recommend_report(rec), folder))
    if find_chromium() is None:
        pytest.skip("Chromium is not installed (apt-get install chromium, or set $CHROMIUM)")
    pytest.importorskip("tornado", reason="tornado (in the test extra, through distributed) talks to Chromium")
    facts = inspect_page(html_path, tmp_path / "wide.png", width=1280, probe=LAYOUT)
    layout = facts["probe"]
    assert facts["console_errors"] == []
    assert layout["viewWidth"] == 1280 and layout["docWidth"] <= 1280, layout
    assert layout["overflowing"] == [], layout
    best = rec.best
    from algorank.metadata.learners import short_name

    assert layout["answerTop"] < 800 and f"Best model: {short_name(best.learner)}" in layout["answerText"]
    assert layout["boardTop"] < 800 and layout["firstRowBottom"] < 800, layout
    assert layout["firstRow"].split()[:2] == ["1", short_name(best.learner)]
    assert f"{best.accuracy:.4f}" in layout["firstRow"]
    assert "screened" in facts["text"] and "timeout" not in facts["text"]
