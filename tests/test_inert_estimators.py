"""Estimators built from data are inert: no file system, no processes, no code, no terminal control.

A learner id in a shared meta-data file such as
``sklearn.cluster.AgglomerativeClustering{"memory": "/some/dir"}`` names an allowed scikit-learn
class with JSON parameters, but ``memory`` is a joblib cache: scikit-learn writes pickles there and
unpickles whatever ``output.pkl`` it finds on the next run.  The positive controls below show the
attack works when scikit-learn is called directly (so the assertions can fail); the other tests show
no path through algorank (the resolvers, ``recommend`` on CSV, Parquet and ASlib meta-data,
``evaluate --learners``) creates anything in the cache folder or loads the planted pickle.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from algorank import cli
from algorank.evaluation.cv.preprocessing import resolve_learner
from algorank.metadata.aslib import write_aslib
from algorank.metadata.errors import InputError
from algorank.metadata.learners import check_params, estimator_from_path, is_runnable, make_estimator

ROOT = Path(__file__).resolve().parents[1]


class _Planted:
    """Unpickling this creates the sentinel file (what an attacker's ``output.pkl`` would do)."""

    def __init__(self, sentinel: str):
        self.sentinel = sentinel

    def __reduce__(self):
        return (Path.write_text, (Path(self.sentinel), "unpickled"))


def _hostile_forms(cache: str) -> list[str]:
    c = json.dumps(cache)
    ovr = "sklearn.multiclass.OneVsRestClassifier"
    steps = '[["m", {"__class__": "sklearn.tree.DecisionTreeClassifier"}]]'
    return [
        f'sklearn.cluster.AgglomerativeClustering{{"memory": {c}}}',
        f'sklearn.cluster.FeatureAgglomeration{{"memory": {c}}}',
        f'sklearn.cluster.OPTICS{{"memory": {c}}}',
        f'sklearn.pipeline.Pipeline{{"memory": {c}, "steps": {steps}}}',
        # nested, under the key that takes an estimator
        f'{ovr}{{"estimator": {{"__class__": "sklearn.pipeline.Pipeline", "memory": {c}, "steps": {steps}}}}}',
        f'sklearn.ensemble.AdaBoostClassifier{{"estimator": {{"__class__": "sklearn.cluster.AgglomerativeClustering", '
        f'"memory": {c}}}}}',
        f'sklearn.ensemble.BaggingClassifier{{"estimator": {{"__class__": "{ovr}", "estimator": '
        f'{{"__class__": "sklearn.cluster.FeatureAgglomeration", "memory": {c}}}}}}}',
        # a class named under a key inside the parameters, in another form than "__class__"
        f'{ovr}{{"estimator": {{"class": "sklearn.cluster.AgglomerativeClustering", "memory": {c}}}}}',
        f'{ovr}{{"estimator": "sklearn.cluster.AgglomerativeClustering"}}',
        f'sklearn.ensemble.StackingClassifier{{"estimators": [["a", {{"__class__": "sklearn.cluster.OPTICS", '
        f'"memory": {c}}}]]}}',
        # free strings where a classifier takes one: never from data
        f'sklearn.dummy.DummyClassifier{{"strategy": "constant", "constant": {c}}}',
        f'sklearn.neighbors.KNeighborsClassifier{{"metric": "pyfunc", "metric_params": {{"func": {c}}}}}',
    ]


def _cache_writes_and_loads(cache: Path, sentinel: Path) -> None:
    """Positive control: scikit-learn itself writes to ``memory`` and loads a planted pickle from it."""
    from sklearn.cluster import AgglomerativeClustering

    X = np.random.default_rng(0).normal(size=(20, 3))
    AgglomerativeClustering(memory=str(cache)).fit(X)
    pickles = list(cache.rglob("output.pkl"))
    assert pickles, "scikit-learn no longer caches in memory=: the control cannot show the attack"
    for p in pickles:
        p.write_bytes(pickle.dumps(_Planted(str(sentinel))))
    try:
        AgglomerativeClustering(memory=str(cache)).fit(X)
    except TypeError:
        pass  # the planted object is not the tree scikit-learn expected: it ran anyway
    assert sentinel.exists(), "the planted pickle was not loaded: the control cannot show the attack"
    sentinel.unlink()


@pytest.fixture
def planted(tmp_path):
    """A cache folder holding the planted pickle, exactly where scikit-learn would read it."""
    cache, sentinel = tmp_path / "cache", tmp_path / "unpickled"
    _cache_writes_and_loads(cache, sentinel)
    before = sorted(str(p) for p in cache.rglob("*"))
    return cache, sentinel, before


def _untouched(cache: Path, sentinel: Path, before) -> None:
    assert not sentinel.exists(), "a planted pickle was loaded"
    assert sorted(str(p) for p in cache.rglob("*")) == before, "something was written to the cache folder"


def test_every_memory_form_is_refused_by_every_resolver(planted):
    cache, sentinel, before = planted
    for lid in _hostile_forms(str(cache)):
        assert not is_runnable(lid), lid
        with pytest.raises(InputError):
            resolve_learner(lid)
        with pytest.raises(InputError):
            make_estimator(lid)
        path, _, rest = lid.partition("{")
        with pytest.raises(InputError):
            estimator_from_path(path, json.loads("{" + rest))
    _untouched(cache, sentinel, before)


def test_only_classifiers_may_be_built_from_an_id():
    for lid in ["sklearn.cluster.KMeans", "sklearn.linear_model.LinearRegression", "sklearn.preprocessing.StandardScaler",
                "sklearn.pipeline.Pipeline", "sklearn.model_selection.GridSearchCV"]:
        assert not is_runnable(lid), lid
        with pytest.raises(InputError):
            resolve_learner(lid)
    # a regressor may be nested where an estimator is taken (e.g. gradient boosting's init)
    assert is_runnable('sklearn.ensemble.GradientBoostingClassifier{"init": "zero"}')


def test_closed_values_pass_and_forced_params_are_dropped():
    cls = __import__("sklearn.ensemble", fromlist=["RandomForestClassifier"]).RandomForestClassifier
    kept = check_params(cls, {"n_estimators": 10, "criterion": "entropy", "max_features": "sqrt", "max_depth": None,
                              "bootstrap": False, "class_weight": {"0": 1.0, "1": 2.0}, "random_state": 3,
                              "n_jobs": -1, "verbose": 3})
    assert kept == {"n_estimators": 10, "criterion": "entropy", "max_features": "sqrt", "max_depth": None,
                    "bootstrap": False, "class_weight": {"0": 1.0, "1": 2.0}, "random_state": 3}
    est = estimator_from_path("sklearn.ensemble.RandomForestClassifier", {"n_jobs": -1, "verbose": 5, "n_estimators": 3})
    assert est.n_jobs is None and est.verbose == 0 and est.n_estimators == 3
    mlp = estimator_from_path("sklearn.neural_network.MLPClassifier", {"hidden_layer_sizes": [8, 4], "solver": "adam"})
    assert mlp.hidden_layer_sizes == [8, 4]
    for bad in [{"criterion": "gini; rm -rf /"}, {"n_estimators": "10"}, {"n_estimators": 0}, {"max_depth": 1e309},
                {"n_estimators": True}, {"class_weight": {"0": "x"}}, {"no_such": 1}]:
        with pytest.raises(InputError):
            check_params(cls, bad)


@pytest.mark.parametrize("lid", [
    "sklearn.conftest.pytest_collection_modifyitems",
    "sklearn.tests.test_base.K",
    "sklearn.utils._testing.MinimalClassifier",
    "sklearn._build_utils.version.X",
    "sklearn.externals.X",
    "sklearn.experimental.enable_halving_search_cv.X",
    "sklearn.ensemble._forest.RandomForestClassifier",
])
def test_private_test_and_build_modules_are_refused_before_import(lid):
    code = ("import sys, json\n"
            "from algorank.metadata.learners import is_runnable\n"
            f"r = is_runnable({lid!r})\n"
            "mods = sorted(m for m in sys.modules if m.startswith(('pytest', '_pytest', 'sklearn.conftest', "
            "'sklearn.tests', 'sklearn.utils._testing', 'sklearn._build_utils', 'sklearn.experimental')))\n"
            "print(json.dumps([r, mods]))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    runnable, imported = json.loads(proc.stdout.strip().splitlines()[-1])
    assert runnable is False
    assert imported == []  # refused before anything was imported: no pytest, no test or build module


def _meta_with(learners, *, source="shared"):
    from helpers_meta import small_meta

    return small_meta(learners, source=source)


@pytest.mark.parametrize("fmt", ["csv", "parquet", "aslib"])
def test_recommend_with_shared_meta_data_never_touches_the_cache(planted, tmp_path, capsys, fmt):
    cache, sentinel, before = planted
    hostile = _hostile_forms(str(cache))
    meta = _meta_with(hostile + ["sklearn.naive_bayes.GaussianNB"])  # hostile ids ranked first
    if fmt == "aslib":
        path = tmp_path / "scenario"
        write_aslib(meta, path)
    else:
        path = tmp_path / f"shared_runs.{fmt}"
        meta.save(path)
    assert cli.main(["recommend", "sklearn:iris", "--meta", str(path), "--budget", "30", "--cv", "3",
                     "--strategy", "ar:p=0", "--json", "--quiet"]) == 0  # 3 if its only test did not finish
    out = json.loads(capsys.readouterr().out)
    assert [t["learner"] for t in out["trace"]] == ["sklearn.naive_bayes.GaussianNB"]
    assert sorted(out["rank_only"]) == sorted(hostile)
    _untouched(cache, sentinel, before)


def test_evaluate_learners_never_touches_the_cache(planted, capsys):
    cache, sentinel, before = planted
    for lid in _hostile_forms(str(cache))[:5]:
        assert cli.main(["evaluate", "sklearn:iris", "--learners", lid, "--no-store", "--cv", "2"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: ")
    _untouched(cache, sentinel, before)


def test_a_module_that_prints_on_import_cannot_corrupt_json(tmp_path):
    meta = _meta_with(["sklearn._build_utils.version.X", "sklearn.naive_bayes.GaussianNB"])
    path = tmp_path / "runs.csv"
    meta.save(path)
    env = {**os.environ, "MPLBACKEND": "Agg"}
    proc = subprocess.run([sys.executable, "-m", "algorank", "recommend", "sklearn:iris", "--meta", str(path),
                           "--budget", "30", "--cv", "3", "--strategy", "ar:p=0", "--json", "--quiet"],
                          capture_output=True, text=True, timeout=300, env=env)
    # (budget 30, not 10: a first test that does not finish within the budget is now exit code 3)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)  # nothing printed before or after the object
    assert out["rank_only"] == ["sklearn._build_utils.version.X"]


ESC_IDS = ["evil\x1b]0;owned\x07title", "sklearn.tree.DecisionTreeClassifier\x1b[2J", "bidi\u202eoverride\r\x9b"]


def test_no_raw_control_character_from_data_reaches_the_terminal(tmp_path):
    meta = _meta_with(ESC_IDS + ["sklearn.naive_bayes.GaussianNB"], source="src\x1b[31m\nscenario_id: INJECTED")
    path = tmp_path / "runs.parquet"  # Parquet keeps every byte of the ids
    meta.save(path)
    env = {**os.environ, "MPLBACKEND": "Agg"}
    commands = [
        ["recommend", "sklearn:iris", "--meta", str(path), "--budget", "10", "--cv", "3", "--strategy", "ar:p=0"],
        ["recommend", "sklearn:iris", "--meta", str(path), "--budget", "10", "--cv", "3", "--strategy", "ar:p=0",
         "--json"],
        ["rank", "--meta", str(path)],
        ["info", "--meta", str(path)],
        ["benchmark", "--meta", str(path), "--strategy", "ar:p=0"],
        ["evaluate", "sklearn:iris", "--learners", ESC_IDS[1], "--no-store", "--cv", "2"],
    ]
    # one process runs the commands one after the other (as many interpreter start-ups cost seconds), each
    # output stream marked where the next command starts
    proc = subprocess.run([sys.executable, "-c", _RUN_EACH.format(commands=commands)], capture_output=True,
                          timeout=600, env=env)
    for stream in (proc.stdout, proc.stderr):
        parts = stream.decode("utf-8", "replace").split(_NEXT)
        assert len(parts) == len(commands) + 1, parts[-1][-2000:]
        for argv, text in zip(commands, parts[1:]):
            bad = sorted({hex(ord(ch)) for ch in text if (ord(ch) < 32 and ch not in "\n\t") or 0x7f <= ord(ch) < 0xa0
                          or ch == "\u202e"})
            assert not bad, f"{argv[0]}: raw control characters {bad} in output:\n{text[-2000:]}"


_NEXT = "=== next command ===\n"
_RUN_EACH = """
import sys
from algorank.cli import main
for argv in {commands!r}:
    for stream in (sys.stdout, sys.stderr):
        stream.write(%r)
        stream.flush()
    main(argv)
    sys.stdout.flush()
    sys.stderr.flush()
""" % _NEXT


def test_aslib_export_cannot_be_injected(tmp_path):
    import arff
    import yaml

    meta = _meta_with(["a\nb", "sklearn.naive_bayes.GaussianNB"], source="x\nscenario_id: INJECTED\n")
    write_aslib(meta, tmp_path / "s")
    desc = yaml.safe_load((tmp_path / "s" / "description.txt").read_text())
    assert desc["scenario_id"] != "INJECTED" and desc["scenario_id"] == "s"
    runs = arff.loads((tmp_path / "s" / "algorithm_runs.arff").read_text())
    assert {r[2] for r in runs["data"]} == {"a\nb", "sklearn.naive_bayes.GaussianNB"}
