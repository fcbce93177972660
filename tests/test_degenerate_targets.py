"""Degenerate targets: refused when more than half of the rows are the only row of their class.

Such a row is never in the training part when it is tested, so no learner can get it right; a
target made mostly of them (every class a singleton, an id column with a few repeated values)
gives a ranking that means nothing.  The rule is checked on hand-counted class sizes, then through
every entry point: ``recommend``, ``evaluate`` and ``build-meta`` on the command line, the API and
``AlgorankClassifier`` (all through :func:`~algorank.evaluation.cv.datasets.check_class_sizes`).
A few one-row classes, and classes with fewer rows than folds, still run with the chosen folds.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from algorank import cli
from algorank.evaluation.cv.datasets import check_class_sizes, dataset_from_frame
from algorank.evaluation.cv.resampling import make_resampler
from algorank.metadata.errors import InputError


@pytest.mark.parametrize("counts, refused", [
    ([1, 1], True),              # every class a singleton
    ([1, 1, 1, 2], True),        # 3 of 5 rows alone
    ([1] * 5 + [2, 2], True),    # 5 of 9 (the shape of analcatdata_benford)
    ([1] * 200 + [3], True),     # an id column with one repeated value
    ([1, 1, 2], False),          # 2 of 4: exactly half is not more than half
    ([1, 1, 1, 3], False),       # 3 of 6
    ([1, 20, 20], False),        # one lonely row among 41
    ([2, 2], False),             # no singleton at all
    ([0, 1, 5], False),          # empty classes do not count
])
def test_the_rule_on_hand_counted_class_sizes(counts, refused):
    if refused:
        with pytest.raises(InputError, match="only row of their class|classes of one row each"):
            check_class_sizes(counts, name="d", target="t")
    else:
        check_class_sizes(counts, name="d", target="t")


def test_the_message_says_how_many_rows_and_what_to_do():
    with pytest.raises(InputError) as info:
        check_class_sizes([1] * 5 + [2, 2], name="d", target="t")
    text = str(info.value)
    assert text.startswith("target 't' of dataset 'd': 5 of 9 rows are the only row of their class, more than half")
    assert "drop or merge the classes of one row" in text and "\n" not in text


def _idlike(n_alone: int = 40, n_pair: int = 1) -> pd.DataFrame:
    """``n_alone`` rows each alone in its class, plus ``n_pair`` classes of two rows."""
    labels = [f"id{i}" for i in range(n_alone)] + [f"pair{j}" for j in range(n_pair) for _ in range(2)]
    return pd.DataFrame({"a": np.arange(float(len(labels))), "b": np.arange(float(len(labels))) % 7, "class": labels})


def _one_error(capsys, argv) -> str:
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("command", [["evaluate", "--learners", "knn", "--no-store"],
                                     ["recommend", "--budget", "5"],
                                     ["recommend", "--budget", "5", "--n-jobs", "2"]])
def test_an_id_like_target_is_one_error_exit_2(tmp_path, capsys, command):
    path = tmp_path / "ids.csv"
    _idlike().to_csv(path, index=False)
    line = _one_error(capsys, [command[0], str(path), *command[1:]])
    assert line.startswith("error: target 'class' of dataset 'ids': 40 of 42 rows are the only row of their class")


def test_the_api_and_the_classifier_refuse_it_through_the_same_check():
    from algorank import api
    from algorank.recommender.live.estimator import AlgorankClassifier

    frame = _idlike()
    with pytest.raises(InputError, match="40 of 42 rows are the only row of their class"):
        api.evaluate(frame, "class", learners=["knn"], store=None)
    with pytest.raises(InputError, match="40 of 42 rows are the only row of their class"):
        AlgorankClassifier(5.0).fit(frame[["a", "b"]], frame["class"])


def test_build_meta_reports_such_a_dataset_as_failed(shared_dir, tmp_path, capsys):
    """analcatdata_benford: 9 rows, 7 classes, 5 rows alone in their class."""
    cli.main(["build-meta", "--shared", str(shared_dir), "--datasets", "analcatdata_benford",
              "--out", str(tmp_path / "parts"), "--no-calibrate", "--quiet"])
    captured = capsys.readouterr()
    assert "5 of 9 rows are the only row of their class" in captured.out + captured.err
    assert "Traceback" not in captured.err
    assert not list((tmp_path / "parts").glob("*.parquet"))


def test_a_few_lonely_rows_and_classes_smaller_than_the_folds_still_run_with_the_chosen_folds():
    """60 rows: classes of 28, 28, 2 (fewer than 5 folds) and 2 of one row: 2 of 60 rows alone."""
    rng = np.random.default_rng(0)
    labels = ["x"] * 28 + ["y"] * 28 + ["small"] * 2 + ["lone1", "lone2"]
    frame = pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60), "class": labels})
    data = dataset_from_frame(frame, name="few", source="test", target="class")
    splits = make_resampler("cv", cv=5, n_rows=60, random_state=0).repetition(0, data.y_codes)
    assert len(splits) == 5  # the chosen folds, not fewer
    small = data.classes.index("small")
    assert sum(int((data.y_codes[s.test] == small).any()) for s in splits) == 2  # in 2 of the 5 test folds
    assert sorted(np.concatenate([s.test for s in splits]).tolist()) == list(range(60))  # every row tested once

    from algorank.evaluation.cv.evaluator import Evaluator

    res = Evaluator(cv=5, progress=False).evaluate(data, ["lda"])
    assert (res.summary["status"] == "ok").all()
