"""The parallel-overlap benchmark's scheduling: how many runs go at once, and what each run is filed under."""

import importlib.util
import threading
import time
import types
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_parallel_overlap",
                                                  HERE / "benchmarks" / "bench_parallel_overlap.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _fake_runs(bench, monkeypatch):
    state = {"now": 0, "most": {}, "calls": []}
    lock = threading.Lock()

    def run_once(spec, excluded, n_jobs, budget, strategy, path=None, target=None):
        with lock:
            state["now"] += 1
            state["most"][n_jobs] = max(state["most"].get(n_jobs, 0), state["now"])
            state["calls"].append((spec, n_jobs, target))
        time.sleep(0.05)
        with lock:
            state["now"] -= 1
        return {"n_jobs": n_jobs, "wall": 1.0, "tests": 1, "best": 0.5, "first_test": 0.1, "first_overlap": 0.2,
                "overlap_after_first": 0.1, "to_best": 0.3, "trace": []}

    monkeypatch.setattr(bench, "run_once", run_once)
    return state


def test_runs_go_as_many_at_once_as_the_cores_hold(bench, monkeypatch):
    state = _fake_runs(bench, monkeypatch)
    items = [(f"d{i}", None) for i in range(6)]
    configs = [("this", None, 1), ("this", None, 2)]
    args = types.SimpleNamespace(cores=4, repeats=1, budget=10.0, strategy=None)
    done = bench.run_all(items, configs, args)
    # one-job runs four at a time, two-job runs two at a time; every run filed under its dataset and jobs
    assert state["most"] == {1: 4, 2: 2}
    assert sorted(done) == sorted((f"d{i}", "this", n) for i in range(6) for n in (1, 2))
    assert all(len(v) == 1 for v in done.values())
    # without --cores: one at a time, alternating the configurations between repeats
    state = _fake_runs(bench, monkeypatch)
    args = types.SimpleNamespace(cores=None, repeats=2, budget=10.0, strategy=None)
    bench.run_all([("d0", None)], configs, args)
    assert state["most"] == {1: 1, 2: 1}
    assert [n for _, n, _ in state["calls"]] == [1, 2, 2, 1]


def test_the_large_tables_carry_their_targets(bench, tmp_path):
    from algorank.metadata.large_collection import LARGE_TABLES

    with pytest.raises(SystemExit, match="lacks"):
        bench.large_tables(tmp_path)
    for t in LARGE_TABLES:
        (tmp_path / f"{t[0]}-{t[1]}.parquet").write_bytes(b"")
    specs = bench.large_tables(tmp_path)
    assert len(specs) == len(LARGE_TABLES)
    assert bench.TARGETS[specs[0]] == LARGE_TABLES[0][2]
