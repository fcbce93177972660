"""Learner ids are data: a meta-data file or ``--learners`` can never make algorank run code.

Each hostile form below would create (or, for the side-effect module, import-time create) a
sentinel file if it were imported or called.  The tests assert the sentinel is NOT there after
``recommend`` ran on meta-data holding the id, after ``evaluate --learners`` was given it, and
after the low-level resolvers saw it; the positive controls show the same machinery does run an
allowed class, so the assertions can fail.
"""

from __future__ import annotations

import json
import logging
import sys

import pytest

from algorank import cli
from algorank.evaluation.cv.datasets import load_dataset
from algorank.evaluation.cv.preprocessing import resolve_learner
from algorank.metadata.errors import InputError
from algorank.metadata.learners import estimator_class, estimator_from_path, is_runnable, make_estimator
from algorank.recommender.live.recommend import recommend

EVIL_MODULE = '''
import pathlib
from sklearn.base import BaseEstimator, ClassifierMixin
pathlib.Path({imported!r}).write_text("imported")

class Evil(ClassifierMixin, BaseEstimator):
    def __init__(self):
        pathlib.Path({called!r}).write_text("called")

    def fit(self, X, y):
        import numpy as np
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return [self.classes_[0]] * len(X)
'''


def _hostile(sentinel: str) -> list[str]:
    s = json.dumps(sentinel)
    return [
        f'os.system{{"command": "touch {sentinel}"}}',
        f'posix.system{{"command": "touch {sentinel}"}}',
        f'subprocess.call{{"args": ["touch", {s}]}}',
        f'subprocess.Popen{{"args": ["touch", {s}]}}',
        f'builtins.exec{{"source": "open({s}, \'w\')"}}',
        f'builtins.eval{{"source": "open({s}, \'w\')"}}',
        f'builtins.open{{"file": {s}, "mode": "w"}}',
        f'pathlib.Path.touch{{"self": {s}}}',
        f'sklearn.base.os.system{{"command": "touch {sentinel}"}}',  # through an allowed package's import
        f'sklearn.datasets.dump_svmlight_file{{"X": [[1.0]], "y": [1], "f": {s}}}',  # a function, not a class
        f'shutil.copyfile{{"src": "/etc/hostname", "dst": {s}}}',
        f'importlib.import_module{{"name": "antigravity"}}',
        "evilmod.Evil",  # a BaseEstimator subclass with side effects, outside the allowed packages
        "__import__('os').system('touch " + sentinel + "')",
    ]


@pytest.fixture
def evil(tmp_path, monkeypatch):
    imported, called = tmp_path / "imported", tmp_path / "called"
    (tmp_path / "evilmod.py").write_text(EVIL_MODULE.format(imported=str(imported), called=str(called)))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    yield tmp_path, imported, called
    sys.modules.pop("evilmod", None)


def _sentinels(tmp_path):
    return sorted(p.name for p in tmp_path.iterdir() if p.name not in ("evilmod.py", "__pycache__"))


def test_hostile_ids_are_refused_by_every_resolver(evil):
    tmp_path, _, _ = evil
    sentinel = str(tmp_path / "pwned")
    for lid in _hostile(sentinel):
        assert not is_runnable(lid), lid
        with pytest.raises(InputError):
            resolve_learner(lid)
        path = lid.partition("{")[0]
        with pytest.raises(InputError):
            estimator_class(path)
        with pytest.raises(InputError):
            estimator_from_path(path, {})
        if "." in lid:
            with pytest.raises(InputError):
                make_estimator(lid)
    assert _sentinels(tmp_path) == []  # nothing imported, nothing called


def test_allowed_classes_still_run_and_params_are_keyword_literals():
    est = estimator_from_path("sklearn.tree.DecisionTreeClassifier", {"max_depth": 3})
    assert type(est).__name__ == "DecisionTreeClassifier" and est.max_depth == 3
    assert is_runnable('sklearn.dummy.DummyClassifier{"strategy": "most_frequent"}')
    with pytest.raises(InputError, match="bad parameters"):
        estimator_from_path("sklearn.tree.DecisionTreeClassifier", {"no_such_param": 1})
    with pytest.raises(InputError, match="JSON literal"):
        estimator_from_path("sklearn.tree.DecisionTreeClassifier", {"max_depth": object()})


def test_allow_module_is_the_explicit_opt_in(evil):
    tmp_path, imported, called = evil
    assert not is_runnable("evilmod.Evil") and not imported.exists()
    assert is_runnable("evilmod.Evil", allow_modules=["evilmod"])  # the user trusts it: imported, not called
    assert imported.exists() and not called.exists()
    est = make_estimator("evilmod.Evil", allow_modules=["evilmod"])
    assert type(est).__name__ == "Evil" and called.exists()
    with pytest.raises(InputError, match="package names"):
        is_runnable("evilmod.Evil", allow_modules=["os; rm -rf /"])


def _meta_with(learners):
    from helpers_meta import small_meta

    return small_meta(learners)


def test_recommend_never_runs_hostile_ids_from_meta_data(evil, caplog):
    tmp_path, _, _ = evil
    hostile = _hostile(str(tmp_path / "pwned"))
    meta = _meta_with(hostile + ["sklearn.naive_bayes.GaussianNB"])  # hostile ids ranked FIRST by accuracy
    with caplog.at_level(logging.WARNING):
        r = recommend(load_dataset("sklearn:iris"), strategy="ar:p=0", meta=meta, budget_seconds=None, cv=3)
    assert _sentinels(tmp_path) == []
    assert set(r.rank_only) == set(hostile)
    assert [p.learner for p in r.plan][: len(hostile)] == hostile  # still ranked and shown
    assert r.trace.learners == ["sklearn.naive_bayes.GaussianNB"]  # only the runnable one was tested
    assert r.best.learner == "sklearn.naive_bayes.GaussianNB"
    warnings = [rec.getMessage() for rec in caplog.records if "rank-only" in rec.getMessage()]
    assert len(warnings) == 1 and "\n" not in warnings[0] and f"{len(hostile)} learner(s)" in warnings[0]
    assert r.to_dict()["rank_only"] == list(r.rank_only)


def test_cli_recommend_with_a_hostile_runs_csv(evil, capsys):
    tmp_path, _, _ = evil
    hostile = _hostile(str(tmp_path / "pwned"))
    meta = _meta_with(hostile + ["sklearn.naive_bayes.GaussianNB"])
    path = tmp_path / "shared_runs.csv"
    meta.save(path)
    assert cli.main(["recommend", "sklearn:iris", "--meta", str(path), "--budget", "30", "--cv", "3",
                     "--strategy", "ar:p=0", "--json", "--quiet"]) == 0  # 3 if its only test did not finish
    out = json.loads(capsys.readouterr().out)
    assert [t["learner"] for t in out["trace"]] == ["sklearn.naive_bayes.GaussianNB"]
    assert _sentinels(tmp_path) == ["shared_runs.csv", "shared_runs.datasets.csv"]


@pytest.mark.parametrize("i", range(4))
def test_cli_evaluate_refuses_hostile_learners(evil, capsys, i):
    tmp_path, _, _ = evil
    lid = _hostile(str(tmp_path / "pwned"))[[0, 4, 9, 12][i]]
    assert cli.main(["evaluate", "sklearn:iris", "--learners", lid, "--no-store", "--cv", "2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ")
    assert _sentinels(tmp_path) == []


def test_nested_estimators_are_checked_like_the_outer_class(evil):
    """``{"__class__": ...}`` parameters build nested estimators: the same allow-list, before any import."""
    tmp_path, imported, called = evil
    sentinel = json.dumps(str(tmp_path / "pwned"))
    ovr = "sklearn.multiclass.OneVsRestClassifier"
    hostile = [
        f'{ovr}{{"estimator": {{"__class__": "evilmod.Evil"}}}}',
        f'{ovr}{{"estimator": {{"__class__": "os.system", "command": "touch {tmp_path / "pwned"}"}}}}',
        f'{ovr}{{"estimator": {{"__class__": "builtins.open", "file": {sentinel}, "mode": "w"}}}}',
        f'{ovr}{{"estimator": {{"__class__": "sklearn.base.os.system", "command": "true"}}}}',
        f'{ovr}{{"estimator": {{"__class__": "{ovr}", "estimator": {{"__class__": "evilmod.Evil"}}}}}}',
    ]
    for lid in hostile:
        assert not is_runnable(lid), lid
        with pytest.raises(InputError):
            resolve_learner(lid)
    assert _sentinels(tmp_path) == [] and not imported.exists() and not called.exists()
    deep = '{"__class__": "sklearn.tree.DecisionTreeClassifier"}'
    for _ in range(4):
        deep = f'{{"__class__": "{ovr}", "estimator": {deep}}}'
    with pytest.raises(InputError, match="nested"):
        resolve_learner(f'{ovr}{{"estimator": {deep}}}')
    # the positive control: an allowed nested class is built, and seeded by the evaluator's random_state
    good = f'{ovr}{{"estimator": {{"__class__": "sklearn.linear_model.LogisticRegression", "C": 0.5}}}}'
    assert is_runnable(good)
    est = resolve_learner(good).build(random_state=7)
    assert type(est.estimator).__name__ == "LogisticRegression" and est.estimator.C == 0.5
    assert est.estimator.random_state == 7
    given = f'{ovr}{{"estimator": {{"__class__": "sklearn.linear_model.LogisticRegression", "random_state": 3}}}}'
    assert resolve_learner(given).build(random_state=7).estimator.random_state == 3
