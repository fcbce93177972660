"""algorank.metadata.openml_pull through the real ``openml`` package against a loopback server of recorded XML."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import xmltodict

from algorank.metadata.errors import InputError
from algorank.metadata.openml_cache import PageCache
from algorank.metadata.openml_http import OpenMLRequestError, OpenMLUnreachable, RetryPolicy
from algorank.metadata.openml_pull import OfflineCacheMiss, pull_openml
from openml_fixture_server import FIXTURES, FixtureServer, closed_port_url

ROOT = Path(__file__).resolve().parents[1]
FLOWS = [100, 101, 102, 103]
FAST = RetryPolicy(attempts=3, backoff=0.01, max_backoff=0.02, jitter=0.5, timeout=5.0)
RF, DT, J48 = "sklearn.ensemble.RandomForestClassifier", "sklearn.tree.DecisionTreeClassifier", "weka.J48(2)"
ACC_RUNS = "evaluation/list/function/predictive_accuracy/per_fold/false"
ACC_FOLDS = "evaluation/list/function/predictive_accuracy/per_fold/true"
FOLD_PAGE_1 = ACC_FOLDS + "/limit/4/offset/4/task/3,31,37/flow/100,101,102,103/sort_order/asc"


@pytest.fixture()
def server(monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    srv = FixtureServer()
    yield srv
    srv.close()
    assert srv.unknown == [], f"requests without a fixture: {srv.unknown}"


def _pull(server_url, cache, **kw):
    args = dict(suite=99, flows=FLOWS, page_size=4, server=server_url, cache_dir=cache, retry=FAST)
    args.update(kw)
    return pull_openml(**args)


def _fixture_values(run_id: int, measure: str, per_fold: bool = True) -> list:
    """The values of one run in the fixture XML, read independently of openml."""
    for path in sorted(FIXTURES.glob(f"eval_{measure}_{'folds' if per_fold else 'runs'}_t3_f4_p*.xml")):
        doc = xmltodict.parse(path.read_text(), force_list=("oml:evaluation",))
        for e in doc["oml:evaluations"]["oml:evaluation"]:
            if int(e["oml:run_id"]) == run_id:
                return json.loads(e["oml:values"])[0] if per_fold else float(e["oml:value"])
    raise KeyError(run_id)


def test_full_pull_values_pagination_and_coverage(server, tmp_path):
    res = _pull(server.url, tmp_path / "cache")
    meta, cov = res.meta, res.coverage
    assert (cov.datasets, cov.learners, cov.cells, cov.with_runtime, cov.with_folds) == (3, 4, 11, 9, 10)
    assert cov.runs == len(meta.runs) == 10 * 10 + 1
    assert (cov.pairs, cov.pairs_with_accuracy, cov.pairs_with_runtime, cov.pairs_with_folds) == (12, 11, 9, 10)
    assert cov.runtime_measures_used == {"usercpu_time_millis": 1, "usercpu_time_millis_training": 7,
                                         "wall_clock_time_millis_training": 1}
    assert cov.several_runs == 1
    assert cov.learner_of_flow[100] == RF and cov.learner_of_flow[102] == DT and cov.learner_of_flow[101] == J48
    # pagination: 12 run-level rows at 4 per page -> 3 full pages + OpenML's "no results" (code 542)
    assert server.count(ACC_RUNS) == 4
    # 11 per-fold rows -> 4 + 4 + 3 (a short page ends the listing)
    assert server.count(ACC_FOLDS) == 3
    runs = meta.runs.set_index(["dataset", "learner", "repeat", "fold"]).sort_index()
    # task 31 / RandomForest has runs 1010 and 1015: the most recent (1015) wins
    got = runs.loc[("31", RF), "accuracy"].to_numpy()
    np.testing.assert_allclose(got, _fixture_values(1015, "predictive_accuracy"))
    assert set(runs.loc[("31", RF), "openml_run"]) == {1015}
    # per-fold runtimes in seconds: usercpu training -> fit_time, testing -> predict_time
    np.testing.assert_allclose(runs.loc[("31", RF), "fit_time"].to_numpy(),
                               np.array(_fixture_values(1015, "usercpu_time_millis_training")) / 1000)
    np.testing.assert_allclose(runs.loc[("31", RF), "predict_time"].to_numpy(),
                               np.array(_fixture_values(1015, "usercpu_time_millis_testing")) / 1000)
    # J48 on task 3 has no CPU times: wall-clock training/testing is the fallback
    wall = [v for p in sorted(FIXTURES.glob("eval_wall_clock_time_millis_training_folds_t3_f4_p*.xml"))
            for e in xmltodict.parse(p.read_text(), force_list=("oml:evaluation",))["oml:evaluations"]["oml:evaluation"]
            if e["oml:run_id"] == "1002" for v in json.loads(e["oml:values"])[0]]
    np.testing.assert_allclose(runs.loc[("3", J48), "fit_time"].to_numpy(), np.array(wall) / 1000)
    # J48 on task 37 has only usercpu_time_millis (training + testing): fit_time set, predict_time NaN
    assert runs.loc[("37", J48), "fit_time"].notna().all() and runs.loc[("37", J48), "predict_time"].isna().all()
    # J48 on task 31: an old run with a run-level value only -> one row, repeat = fold = 0, no runtime
    j48_31 = runs.loc[("31", J48)]
    assert list(j48_31.index) == [(0, 0)] and j48_31["accuracy"].iloc[0] == pytest.approx(0.705)
    assert np.isnan(j48_31["fit_time"].iloc[0])
    # missing: GridSearchCV on task 31 has no run; reasons are stated
    gaps = {(m["task"], m["flow"], m["what"]) for m in cov.missing}
    assert gaps == {(31, 103, "accuracy"), (3, 103, "runtime"), (31, 101, "runtime"), (31, 101, "folds")}
    # datasets table from the task listing's qualities
    info = meta.dataset_info("3")
    assert info["source"] == "openml:3" and info["name"] == "kr-vs-kp" and info["task_id"] == 3
    assert (info["n_instances"], info["n_features"], info["n_classes"]) == (3196, 37, 2)
    assert info["majority_fraction"] == pytest.approx(1669 / 3196)
    assert ((meta.runs["accuracy"] >= 0) & (meta.runs["accuracy"] <= 1)).all()


def test_second_pull_reads_only_the_cache_and_is_identical(server, tmp_path):
    first = _pull(server.url, tmp_path / "cache")
    n = len(server.hits)
    second = _pull(server.url, tmp_path / "cache")
    assert len(server.hits) == n  # nothing refetched
    assert second.coverage.pages["fetched"] == 0 and second.coverage.pages["cache"] == first.coverage.pages["fetched"]
    assert second.meta.runs.equals(first.meta.runs)


def test_interrupted_pull_resumes_without_refetching(server, tmp_path):
    server.inject(FOLD_PAGE_1, "500", "500", "500")  # every attempt of the first pull fails on this page
    with pytest.raises(OpenMLRequestError, match="rerun the same command to resume"):
        _pull(server.url, tmp_path / "cache")
    before = {h: server.hits.count(h) for h in set(server.hits)}
    assert before[FOLD_PAGE_1] == FAST.attempts
    res = _pull(server.url, tmp_path / "cache")
    assert res.coverage.cells == 11
    for h, c in before.items():
        if h.startswith("evaluation") and h != FOLD_PAGE_1:
            assert server.hits.count(h) == c, f"finished page refetched: {h}"
    assert server.hits.count(FOLD_PAGE_1) == FAST.attempts + 1


@pytest.mark.parametrize("failure", ["412:107", "500"])
def test_server_error_then_success_is_retried(server, tmp_path, failure):
    server.inject(FOLD_PAGE_1, failure)
    res = _pull(server.url, tmp_path / "cache")
    assert res.coverage.cells == 11 and server.hits.count(FOLD_PAGE_1) == 2


def test_non_transient_openml_error_is_not_retried(server, tmp_path):
    server.inject(FOLD_PAGE_1, "412:541")  # e.g. "illegal filter": retrying cannot help
    with pytest.raises(OpenMLRequestError, match="OpenML rejected"):
        _pull(server.url, tmp_path / "cache")
    assert server.hits.count(FOLD_PAGE_1) == 1


def test_timeout_then_success(server, tmp_path):
    server.inject(FOLD_PAGE_1, "sleep:1.5")
    policy = RetryPolicy(attempts=3, backoff=0.01, timeout=0.4)
    t0 = time.monotonic()
    res = _pull(server.url, tmp_path / "cache", retry=policy)
    assert time.monotonic() - t0 < 30  # the 1.5 s page was cut at the 0.4 s timeout, not waited for 3 times over
    assert res.coverage.cells == 11 and server.hits.count(FOLD_PAGE_1) == 2


def test_corrupt_cached_page_is_detected_and_refetched(server, tmp_path):
    cache_dir = tmp_path / "cache"
    first = _pull(server.url, cache_dir)
    files = sorted((cache_dir / "pages").rglob("*.json"))
    target = next(f for f in files if json.loads(f.read_text())["request"].get("offset") == 4
                  and json.loads(f.read_text())["request"].get("per_fold") is True
                  and json.loads(f.read_text())["request"].get("function") == "predictive_accuracy")
    text = target.read_text()
    i = text.index("0.", text.index('"rows"'))
    target.write_text(text[:i] + "0.1" + text[i + 3:])  # still valid JSON, different value: checksum fails
    hits = server.hits.count(FOLD_PAGE_1)
    second = _pull(server.url, cache_dir)
    assert second.coverage.pages == {"fetched": 1, "cache": first.coverage.pages["fetched"] - 1, "corrupt": 1}
    assert server.hits.count(FOLD_PAGE_1) == hits + 1
    assert second.meta.runs.equals(first.meta.runs)
    target.write_text("{not json")  # a truncated file is corrupt too
    assert PageCache(cache_dir).get(json.loads(text)["key"]) is None and not target.exists()


def test_offline_full_cache_needs_no_server(server, tmp_path):
    first = _pull(server.url, tmp_path / "cache")
    server.close()
    offline = _pull(server.url, tmp_path / "cache", offline=True)
    assert offline.meta.runs.equals(first.meta.runs)
    assert offline.coverage.pages["fetched"] == 0


def test_offline_partial_cache_names_what_is_missing(server, tmp_path):
    cache_dir = tmp_path / "cache"
    _pull(server.url, cache_dir)
    for f in (cache_dir / "pages").rglob("*.json"):
        req = json.loads(f.read_text())["request"]
        if req.get("function") == "predictive_accuracy" and req.get("per_fold") and req.get("offset") == 4:
            f.unlink()
    with pytest.raises(OfflineCacheMiss) as err:
        _pull(server.url, cache_dir, offline=True)
    assert err.value.missing == (
        "evaluation/list/function/predictive_accuracy/per_fold/True/task/3,31,37/flow/100,101,102,103 "
        "(page at offset 4, size 4) and any later pages",)
    assert "pull again without offline" in str(err.value) and "--" not in str(err.value)  # names the parameter


def test_no_network_and_no_cache_is_one_clear_error_quickly(tmp_path):
    url = closed_port_url()
    t0 = time.monotonic()
    with pytest.raises(OpenMLUnreachable, match=r"cannot reach the OpenML server .* \(offline=True\)") as err:
        _pull(url, tmp_path / "cache")
    assert "--" not in str(err.value)  # the library names parameters; the command line adds its flags
    assert time.monotonic() - t0 < 30  # no long retry loop (a margin for a loaded machine)
    assert isinstance(OpenMLUnreachable("x"), InputError)


def test_cli_no_network_one_line_exit_2_within_30s(tmp_path):
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, str(ROOT / "cli.py"), "pull", "--suite", "99", "--flows", "100", "--server", closed_port_url(),
         "--cache", str(tmp_path / "c"), "--backoff", "0.05", "--out", str(tmp_path / "m.parquet")],
        capture_output=True, text=True, timeout=60, env={"NO_PROXY": "127.0.0.1", "PATH": "/usr/bin:/bin",
                                                        "HOME": str(tmp_path)},
    )
    assert time.monotonic() - t0 < 30
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: cannot reach the OpenML server")
    assert "--offline" in lines[0] and "Traceback" not in proc.stderr
    assert not (tmp_path / "m.parquet").exists()


def test_default_retry_policy_gives_up_on_an_unreachable_server_well_within_30s():
    policy = RetryPolicy()
    worst = sum(min(policy.max_backoff, policy.backoff * 2 ** (k - 1)) * (1 + policy.jitter)
                for k in range(1, policy.attempts))
    assert worst == pytest.approx(10.5)  # 1 + 2 + 4 s, each up to +50% jitter; connection refusals are instant
    import random

    rng = random.Random(0)
    waits = [policy.wait(k, rng) for k in (1, 2, 3)]
    assert all(b <= w <= 1.5 * b for w, b in zip(waits, (1, 2, 4)))
    rng2 = random.Random(0)
    assert waits == [policy.wait(k, rng2) for k in (1, 2, 3)]  # seeded jitter: same seed, same waits


def test_two_tasks_on_one_dataset_keep_the_better_covered(server, tmp_path):
    res = _pull(server.url, tmp_path / "cache", suite=None, tasks=[3, 31, 37, 7592])
    dropped = [m for m in res.coverage.missing if m["task"] == 7592]
    assert dropped == [{"task": 7592, "flow": None, "what": "task",
                        "reason": "dropped: shares dataset 31 with task 31 (kept)"}]
    assert res.meta.dataset_info("31")["task_id"] == 31
    assert 1030 not in set(res.meta.runs["openml_run"])


def test_top_flows_ranks_by_tasks_then_runs(server, tmp_path):
    res = _pull(server.url, tmp_path / "cache", flows=None, top_flows=3)
    # flows 100, 101, 102 have runs on all 3 tasks, 103 on 2 only
    assert res.coverage.flows == (100, 101, 102)
    assert res.meta.learner_ids == sorted([RF, DT, J48])


def test_recorded_openml_listing_study_157(server, tmp_path):
    """The real recorded listing of ../shared: run-level values only, no runtimes, tasks 115/119 share dataset 20."""
    res = pull_openml(tasks=[11, 19, 115, 119, 1196], flows=[44, 54, 64, 65, 67, 70, 73, 469], page_size=10,
                      server=server.url, cache_dir=tmp_path / "c", retry=FAST)
    cov = res.coverage
    assert cov.with_folds == 0 and cov.with_runtime == 0
    assert (res.meta.runs[["repeat", "fold"]] == 0).all().all()
    assert {"task": 115, "flow": None, "what": "task",
            "reason": "dropped: shares dataset 20 with task 119 (kept)"} in cov.missing
    # runs 95 and 96 are two runs of flow 469 on task 19: the later one is kept
    assert set(res.meta.runs.loc[res.meta.runs["dataset"] == "4", "openml_run"]) == {96}
    assert cov.several_runs == 2  # (19, 469): runs 95, 96 and (115, 67): runs 7, 8
    # flow -> learner, against the flow names as recorded: a portfolio learner inside an imputer /
    # variance-threshold pipeline becomes its portfolio id (65 and 67 pool into one learner); dummy,
    # grid/randomized-search and GaussianNB flows are not portfolio learners and keep their full names
    name = dict(re.findall(r"<oml:flow_id>(\d+)</oml:flow_id>\s*<oml:flow_name>([^<]*)</oml:flow_name>",
                           (FIXTURES / "evaluation_list_predictive_accuracy.xml").read_text()))
    assert name["65"].startswith("sklearn.pipeline.Pipeline(imputer=") and name["469"].startswith("sklearn.neighbors")
    expected = {f: name[str(f)] for f in (44, 54, 64, 70, 73)}
    expected.update({65: "sklearn.tree.DecisionTreeClassifier", 67: "sklearn.tree.DecisionTreeClassifier",
                     469: "sklearn.neighbors.KNeighborsClassifier"})
    assert cov.learner_of_flow == expected
    assert sorted(res.meta.learner_ids) == sorted(set(expected.values()))  # 7 learners from 8 flows
    acc = res.meta.runs.set_index("openml_run")["accuracy"]
    assert acc[5] == pytest.approx(0.7193675889328063)


def test_a_run_study_is_not_a_suite(server, tmp_path):
    with pytest.raises(InputError, match="not a benchmark suite"):
        _pull(server.url, tmp_path / "c", suite=157)


@pytest.mark.parametrize("kwargs, match", [
    (dict(suite=99, tasks=[3]), "exactly one of suite, tasks or tag"),
    (dict(suite=None), "exactly one of suite, tasks or tag"),
    (dict(flows=None), "exactly one of flows"),
    (dict(top_flows=0, flows=None), "top_flows must be an integer >= 1"),
    (dict(measure="log_loss"), "measure must be one of"),
    (dict(runtime_measure="cpu"), "runtime_measure must be"),
    (dict(out="x.txt"), "out must end in .parquet or .csv"),
    (dict(tasks=[-3], suite=None), "tasks must be positive integer ids"),
])
def test_bad_arguments_are_input_errors(tmp_path, kwargs, match):
    with pytest.raises(InputError, match=match):
        _pull("http://127.0.0.1:9/api/v1/xml", tmp_path / "c", **kwargs)


def test_cli_pull_json_writes_meta_and_coverage(server, tmp_path):
    out = tmp_path / "cc18.parquet"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "cli.py"), "pull", "--suite", "99", "--flows", "100", "101", "102", "103",
         "--server", server.url, "--cache", str(tmp_path / "c"), "--page-size", "4", "--backoff", "0.01",
         "--out", str(out), "--json"],
        capture_output=True, text=True, timeout=120, env={"NO_PROXY": "127.0.0.1", "PATH": "/usr/bin:/bin",
                                                         "HOME": str(tmp_path)},
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert {k: report[k] for k in ("datasets", "learners", "cells", "with_runtime", "with_folds")} == \
        {"datasets": 3, "learners": 4, "cells": 11, "with_runtime": 9, "with_folds": 10}
    saved = json.loads((tmp_path / "cc18.parquet.coverage.json").read_text())
    assert saved == report
    from algorank.metadata.dataset import MetaDataset

    meta = MetaDataset.load(out)
    assert len(meta.runs) == 101 and meta.dataset_info("37")["source"] == "openml:37"


def _has_command(name: str) -> bool:
    from algorank import cli

    return f"algorank.commands.{name.replace('-', '_')}" in cli.COMMANDS


@pytest.mark.parametrize("argv", [["rank", "--json"],
                                  ["benchmark", "--strategy", "ar:p=1/64", "--strategy", "ar:p=0", "--json"]])
def test_pulled_meta_flows_through_rank_and_benchmark(server, tmp_path, argv):
    if not _has_command(argv[0]):
        pytest.skip(f"`algorank {argv[0]}` does not exist yet (written concurrently in another issue)")
    out = tmp_path / "pulled.parquet"
    _pull(server.url, tmp_path / "c", out=out)
    cmd = [sys.executable, str(ROOT / "cli.py"), argv[0], "--meta", str(out), *argv[1:]]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    payload = json.loads(proc.stdout)
    learners = sorted([RF, DT, J48, "sklearn.model_selection._search.GridSearchCV(estimator=sklearn.svm._classes.SVC)(1)"])
    if argv[0] == "rank":
        assert sorted(payload["order"]) == learners and payload["n_datasets"] == 3
    else:
        assert all(v["n_datasets"] == 3 for v in payload["strategies"].values())
