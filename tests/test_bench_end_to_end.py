"""The end-to-end benchmark's bookkeeping: results file, resume, W/T/L and the report table (no real runs)."""

import csv
import importlib.util
import json
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_end_to_end", HERE / "benchmarks" / "bench_end_to_end.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _row(dataset, tool, budget, status, accuracy="", wall="1", returned=""):
    return {"collection": "mid", "dataset": dataset, "budget": budget, "tool": tool, "status": status,
            "accuracy": accuracy, "wall_s": wall, "process_s": "2", "returned": returned, "n_train": "75",
            "n_test": "25", "excluded": "", "message": "", "single_accuracy": ""}


def _hand_made(bench, path):
    """Three datasets at budget 20; c has a FLAML timeout; a's algorank row is recorded twice (the last counts)."""
    rows = [
        _row("a", "algorank", "20", "ok", "0.50", "30", "x"),  # superseded by the next row
        _row("a", "algorank", "20", "ok", "0.90", "10", "lgbm-default"),
        _row("a", "flaml", "20", "ok", "0.8994", "20", "lgbm"),  # within 0.001: a tie
        _row("a", "hgb", "", "ok", "0.80", "2"),
        _row("a", "lgbm", "", "ok", "0.95", "1"),
        _row("a", "rf", "", "ok", "0.85", "3"),
        _row("b", "algorank", "20", "ok", "0.70", "20", "rf"),
        _row("b", "flaml", "20", "ok", "0.60", "20", "xgboost"),
        _row("b", "hgb", "", "ok", "0.70", "4"),
        _row("b", "lgbm", "", "ok", "0.65", "1"),
        _row("b", "rf", "", "ok", "0.75", "5"),
        _row("c", "algorank", "20", "ok", "0.40", "20", "knn"),
        _row("c", "flaml", "20", "timeout"),
        _row("c", "hgb", "", "ok", "0.30", "1"),
        _row("c", "lgbm", "", "error"),
        _row("c", "rf", "", "ok", "0.40", "1"),
    ]
    for r in rows:
        bench.append_row(path, r)
    return rows


def test_append_and_read_round_trip(bench, tmp_path):
    path = tmp_path / "r.csv"
    rows = _hand_made(bench, path)
    back = bench.read_results(path)
    assert back == rows
    with open(path) as f:  # one header line only
        assert sum(1 for line in f if line.startswith("collection,")) == 1


def test_wtl_hand_computed(bench):
    # 0.9 vs 0.8995 tie (within 0.001), 0.7 vs 0.6 win, 0.4 vs None (failed) win, None vs 0.3 loss,
    # None vs None tie, 0.5 vs 0.6 loss
    assert bench.wtl([0.9, 0.7, 0.4, None, None, 0.5], [0.8995, 0.6, None, 0.3, None, 0.6]) == (2, 2, 2)
    assert bench.wtl([0.9], [0.898]) == (1, 0, 0)  # 0.002 apart: not a tie


def test_summary_hand_computed(bench, tmp_path):
    path = tmp_path / "r.csv"
    _hand_made(bench, path)
    [s] = bench.tables(bench.read_results(path))
    assert s["datasets"] == ["a", "b", "c"]
    assert s["complete"] == 2  # c lacks FLAML's and LightGBM's results
    t = s["tools"]
    # means over a and b (last algorank row of a: 0.90)
    assert t["algorank"]["mean_accuracy"] == pytest.approx((0.90 + 0.70) / 2)
    assert t["flaml"]["mean_accuracy"] == pytest.approx((0.8994 + 0.60) / 2)
    assert t["hgb"]["mean_accuracy"] == pytest.approx(0.75)
    assert t["lgbm"]["mean_accuracy"] == pytest.approx(0.80)
    assert t["rf"]["mean_accuracy"] == pytest.approx(0.80)
    assert t["algorank"]["mean_wall_s"] == pytest.approx(15.0)
    assert t["rf"]["mean_wall_s"] == pytest.approx(4.0)
    # W/T/L over all three datasets: a, b, c
    assert t["flaml"]["wtl"] == (2, 1, 0)  # tie, win, win (FLAML timed out)
    assert t["hgb"]["wtl"] == (2, 1, 0)  # win 0.9>0.8, tie 0.7=0.7, win 0.4>0.3
    assert t["lgbm"]["wtl"] == (2, 0, 1)  # loss 0.9<0.95, win 0.7>0.65, win (LightGBM failed)
    assert t["rf"]["wtl"] == (1, 1, 1)  # win 0.9>0.85, loss 0.7<0.75, tie 0.4=0.4
    assert t["flaml"]["failed"] == 1 and t["lgbm"]["failed"] == 1 and t["algorank"]["failed"] == 0
    assert t["algorank"]["wtl"] is None
    assert s["returned"]["a"] == {"algorank": "lgbm-default", "flaml": "lgbm"}
    text = bench.format_table(s)
    assert "higher is better" in text and "within 0.001" in text
    assert "| algorank (default) | 0.8000 | 15.0 | 0 |  |  |" in text
    assert "| FLAML (default learners) | 0.7497 | 20.0 | 1 | 2/1/0 |  |" in text  # no per-row records: no paired W/T/L
    assert t["flaml"]["paired_wtl"] == (0, 0, 0, 0)
    json.dumps(s)  # --json can print it


def test_resume_skips_done_rows(bench, tmp_path):
    path = tmp_path / "r.csv"
    _hand_made(bench, path)
    rows = bench.read_results(path)
    todo = bench.pending("mid", ["a", "c", "d"], [20.0, 60.0], bench.TOOLS, rows)
    # a and c are done at 20 s (failures count as done); 60 s needs algorank and FLAML on a and c; d needs everything,
    # its single fits once although two budgets are asked
    assert todo == [("a", 60.0, "algorank"), ("a", 60.0, "flaml"),
                    ("c", 60.0, "algorank"), ("c", 60.0, "flaml"),
                    ("d", 20.0, "algorank"), ("d", 20.0, "flaml"), ("d", None, "hgb"), ("d", None, "lgbm"),
                    ("d", None, "rf"), ("d", 60.0, "algorank"), ("d", 60.0, "flaml")]
    retry = bench.pending("mid", ["c"], [20.0], bench.TOOLS, rows, retry_failed=True)
    assert retry == [("c", 20.0, "flaml"), ("c", None, "lgbm")]
    # another collection's rows do not count
    assert len(bench.pending("large", ["a"], [20.0], bench.TOOLS, rows)) == 5


def test_copy_rows_brings_the_other_tools_runs(bench, tmp_path):
    """A rerun of algorank alone: the other tools' runs at its budgets come from earlier files, the first file that
    has a run giving it, with their per-row records; nothing already in the output is replaced."""
    first, second, out = tmp_path / "first.csv", tmp_path / "second.csv", tmp_path / "out.csv"
    _hand_made(bench, first)  # budget 20 on a, b, c; a's algorank row twice
    bench.append_row(first, _row("a", "flaml", "60", "ok", "0.70", "60", "rf"))  # another budget
    bench.append_holdout(bench.holdout_path(first), {"collection": "mid", "dataset": "b", "budget": "20",
                                                     "tool": "flaml", "n_test": "2", "correct": "2:wA=="})
    bench.append_row(second, _row("b", "flaml", "20", "ok", "0.11", "20"))  # first.csv has it: not copied
    bench.append_row(second, _row("d", "flaml", "20", "ok", "0.55", "20"))  # only here: copied
    bench.append_row(second, {**_row("a", "flaml", "20", "ok", "0.99", "20"), "collection": "large"})
    bench.append_row(out, _row("c", "hgb", "", "ok", "0.31", "1"))  # already in the output: kept

    n = bench.copy_rows([first, second], out, collection="mid", budgets=[20.0], run_tools=("algorank",))
    got = bench.latest(bench.read_results(out))
    # flaml on a, b, c and d at 20 s; hgb on a, b; lgbm and rf on a, b, c (c's hgb was there already)
    assert n == 4 + 2 + 3 + 3
    assert not [k for k in got if k[3] == "algorank" or k[2] == "60" or k[0] == "large"]
    assert got[("mid", "b", "20", "flaml")]["accuracy"] == "0.60"  # the first file gives it
    assert got[("mid", "d", "20", "flaml")]["accuracy"] == "0.55"
    assert got[("mid", "c", "", "hgb")]["accuracy"] == "0.31"
    assert got[("mid", "c", "", "lgbm")]["status"] == "error"  # a failed run is a run
    assert bench.read_holdout(bench.holdout_path(out)) == {("mid", "b", "20", "flaml"): "2:wA=="}
    # a second call copies nothing more, and a source that is the output itself is skipped
    assert bench.copy_rows([first, second, out], out, collection="mid", budgets=[20.0], run_tools=("algorank",)) == 0
    assert len(bench.read_results(out)) == 1 + n


def test_copy_from_names_a_missing_file(bench, tmp_path, capsys):
    code = bench.main(["--collection", "mid", "--tool", "algorank", "--copy-from", str(tmp_path / "nope.csv"),
                       "--out", str(tmp_path / "out.csv")])
    assert code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith("error: --copy-from ")
    assert not (tmp_path / "out.csv").exists()


def test_mid_collection_rule(bench, tmp_path):
    manifest = tmp_path / "MANIFEST.csv"
    with open(manifest, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["file", "target", "instances", "features", "classes", "majority_fraction", "note"])
        w.writerow(["keel/letter.csv", "class", "20000", "16", "26", "0.04", ""])
        w.writerow(["uci/letter.arff", "class", "20000", "16", "26", "0.04", ""])
        w.writerow(["keel/penbased.csv", "class", "10992", "16", "10", "0.1", ""])
        w.writerow(["uci/small.arff", "class", "4999", "3", "2", "0.5", ""])
        w.writerow(["uci/big.arff", "class", "20001", "3", "2", "0.5", ""])
        w.writerow(["uci/broken.arff", "class", "", "", "", "", "does not parse"])
        w.writerow(["keel/five.csv", "class", "5000", "3", "2", "0.5", ""])
    got = [(i["name"], i["file"]) for i in bench.select_mid(manifest)]
    assert got == [("five", "keel/five.csv"), ("letter", "uci/letter.arff"), ("pendigits", "keel/penbased.csv")]


def test_child_past_its_cap_is_recorded_as_timeout(bench):
    spec = {"path": "/nonexistent.csv", "target": "class", "tool": "rf", "budget": None, "excluded": []}
    res = bench.run_child(spec, 0.01)  # killed long before the interpreter has imported anything
    assert res["status"] == "timeout" and "0.01" in res["message"]


def test_child_that_fails_is_recorded_as_error(bench, tmp_path):
    spec = {"path": str(tmp_path / "missing.csv"), "target": "class", "tool": "rf", "budget": None, "excluded": []}
    res = bench.run_child(spec, 300)
    assert res["status"] == "error" and "missing.csv" in res["message"]


@pytest.mark.parametrize("tool", ["hgb", "rf"])
def test_single_fit_encodes_categorical_and_text_columns(bench, tool):
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame({"colour": pd.Categorical(["red", "blue", "red", "blue", None, "red"] * 10),
                      "size": ["s", "l", "s", "l", "s", "l"] * 10,
                      "weight": [1.0, 2.0, 1.5, 2.5, 1.2, 2.2] * 10})
    y = pd.Series(["a", "b", "a", "b", "a", "b"] * 10)
    model = bench._single(tool, X).fit(X, y)
    new = pd.DataFrame({"colour": pd.Categorical(["green", "blue"]), "size": ["l", "s"], "weight": [2.0, 1.0]})
    # "size" (and "weight") separate the classes (60 rows: enough for a leaf of HistGB's default 20 rows);
    # an unseen colour is treated as missing
    assert list(model.predict(new)) == ["b", "a"]


def test_exclusion_by_name_derived_name_and_shape(bench):
    pd = pytest.importorskip("pandas")
    from algorank.metadata import MetaDataset

    table = pd.DataFrame({
        "dataset": ["ring", "twonorm", "ringnorm", "shuttle-2_vs_5", "shuttlecock", "other", "bigger"],
        "n_instances": [7400, 7400, 7400, 3316, 500, 7000, 10000],
        "n_features": [20, 20, 20, 9, 9, 19, 20],
        "n_classes": [2, 2, 2, 2, 2, 2, 2],
    })

    class Data:  # what the loader gives: features, labels, a hash of the values, the columns as read
        def __init__(self, rows, features):
            self.X = pd.DataFrame({f"x{i}": range(rows) for i in range(features)})
            self.y = pd.Series([i % 2 for i in range(rows)])
            self.columns = ()

        def fingerprint(self):
            return "not-in-the-meta-data"

    meta = MetaDataset._of_valid_rows(pd.DataFrame({"dataset": table["dataset"]}), table, source="hand-made")
    got = dict(bench.excluded_priors(meta, "ring", Data(7400, 20)))
    # ring: same name and shape; twonorm: same shape; ringnorm: an alias of ring (same name);
    # bigger: 20 features, 2 classes, 10,000 rows > 7,400 x 1.35 = 9,990: kept; shuttle*: other names and shapes
    assert got == {"ring": "same name and shape", "twonorm": "near shape (7400 rows, 20 features, 2 classes)",
                   "ringnorm": "same name"}
    got = dict(bench.excluded_priors(meta, "shuttle", Data(58000, 9)))
    assert got == {"shuttle-2_vs_5": "derived from shuttle"}  # "shuttlecock" is another name


def test_summary_of_a_run_narrowed_to_some_tools(bench, tmp_path):
    path = tmp_path / "r.csv"
    for r in (_row("a", "algorank", "20", "ok", "0.90"), _row("a", "lgbm", "", "ok", "0.80"),
              _row("b", "algorank", "20", "ok", "0.50"), _row("b", "lgbm", "", "ok", "0.70")):
        bench.append_row(path, r)
    [s] = bench.tables(bench.read_results(path))
    assert s["complete"] == 2  # the tools that did not run do not empty the table
    assert s["tools"]["algorank"]["mean_accuracy"] == pytest.approx(0.70)
    assert s["tools"]["lgbm"]["mean_accuracy"] == pytest.approx(0.75)
    assert s["tools"]["lgbm"]["wtl"] == (1, 0, 1)
    t = s["tools"]["flaml"]
    assert t["datasets"] == 0 and t["wtl"] is None and t["mean_accuracy"] is None
    assert "| FLAML (default learners) | n/a | n/a | 0 |  |" in bench.format_table(s)


def test_correctness_packs_and_unpacks(bench):
    np = pytest.importorskip("numpy")
    assert bench.pack_correct([True, False, True]) == "3:oA=="  # 101 then zero padding: 0xA0
    rng = np.random.default_rng(0)
    for n in (1, 7, 8, 9, 25_000):
        bits = rng.random(n) < 0.7
        np.testing.assert_array_equal(bench.unpack_correct(bench.pack_correct(bits)), bits)


def test_paired_wtl_hand_computed(bench):
    np = pytest.importorskip("numpy")

    def pair(b, c, both=10):
        """Two runs' correctness with ``b`` rows only the first gets right and ``c`` only the second."""
        x = np.array([True] * both + [True] * b + [False] * c)
        y = np.array([True] * both + [False] * b + [True] * c)
        return x, y

    # b = 8, c = 2: exact two-sided p = 2 (1 + 10 + 45) / 1024 = 0.109: a tie, though 0.6 points apart
    x1, y1 = pair(8, 2)
    # b = 10, c = 0: p = 2 / 1024: a win;  b = 0, c = 9: p = 2 / 512: a loss
    x2, y2 = pair(10, 0)
    x3, y3 = pair(0, 9)
    # a failure loses to a result, two failures tie, a run without a per-row record is skipped
    a = [x1, x2, x3, "failed", x1, "failed", None]
    b = [y1, y2, y3, y1, "failed", "failed", y1]
    assert bench.paired_wtl(a, b) == (2, 2, 2, 6)
    assert bench.paired_wtl([x1], [y1], alpha=0.2) == (1, 0, 0, 1)  # p = 0.109 < 0.2


def test_summary_with_per_row_records(bench, tmp_path):
    np = pytest.importorskip("numpy")
    path = tmp_path / "r.csv"
    _hand_made(bench, path)
    # dataset b: algorank right on 30 more rows than FLAML (p < 0.05: a win); a: 2 rows apart (a tie)
    right = {("a", "algorank"): [True] * 40 + [True, True, False],
             ("a", "flaml"): [True] * 40 + [False, False, True],
             ("b", "algorank"): [True] * 40 + [True] * 30,
             ("b", "flaml"): [True] * 40 + [False] * 30}
    for (d, tool), bits in right.items():
        bench.append_holdout(bench.holdout_path(path), {"collection": "mid", "dataset": d, "budget": "20",
                                                        "tool": tool, "n_test": len(bits),
                                                        "correct": bench.pack_correct(np.array(bits))})
    assert bench.holdout_path(path).name == "r_holdout.csv"
    [s] = bench.tables(bench.read_results(path), bench.read_holdout(bench.holdout_path(path)))
    # a: McNemar b = 2, c = 1 (a tie); b: 30 / 0 (a win); c is skipped: algorank's run there kept no per-row record
    assert s["tools"]["flaml"]["paired_wtl"] == (1, 1, 0, 2)
    assert s["tools"]["hgb"]["paired_wtl"] == (0, 0, 0, 0)  # the single fits kept no record here
    assert "| FLAML (default learners) | 0.7497 | 20.0 | 1 | 2/1/0 | 1/1/0 (2) |" in bench.format_table(s)


def test_child_records_per_row_correctness(bench, tmp_path):
    pd = pytest.importorskip("pandas")
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(1)
    x = rng.normal(size=(200, 3))
    frame = pd.DataFrame(x, columns=["u", "v", "w"])
    frame["class"] = np.where(x[:, 0] + 0.5 * rng.normal(size=200) > 0, "yes", "no")
    frame.to_csv(tmp_path / "toy.csv", index=False)
    spec = {"path": str(tmp_path / "toy.csv"), "target": "class", "tool": "rf", "budget": None, "excluded": []}
    res = bench.run_child(spec, 300)
    assert res["status"] == "ok", res
    bits = bench.unpack_correct(res["correct"])
    assert len(bits) == res["n_test"] == 50
    assert bits.mean() == pytest.approx(res["accuracy"])  # the per-row record is the accuracy, row by row


def test_sigterm_ends_the_running_children(tmp_path):
    """A benchmark ended with ``kill`` ends its children too: they run in sessions of their own and would outlive it."""
    import os
    import signal
    import subprocess
    import sys
    import time

    pid_file = tmp_path / "child.pid"
    script = f"""
import importlib.util, subprocess, sys, threading, time
spec = importlib.util.spec_from_file_location("b", {str(HERE / "benchmarks" / "bench_end_to_end.py")!r})
b = importlib.util.module_from_spec(spec); spec.loader.exec_module(b)
def work(job):
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True)
    with b._LOCK:
        b._RUNNING.add(p)
    open({str(pid_file)!r}, "w").write(str(p.pid))
    p.wait()
sys.exit(b.run_jobs([1], work, workers=1, stopping=threading.Event()))
"""
    proc = subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not pid_file.is_file() or not pid_file.read_text():
        assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read()
        time.sleep(0.05)
    child = int(pid_file.read_text())
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 130
    assert "interrupted" in proc.stderr.read()
    for _ in range(200):  # the child is gone (reaped by its parent's wait, or a zombie no longer running)
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        with open(f"/proc/{child}/stat") as f:
            if f.read().split(")")[-1].split()[0] == "Z":
                break
        time.sleep(0.05)
    else:
        pytest.fail("the child still runs after its benchmark was terminated")


def test_append_keeps_the_header_of_an_older_file(bench, tmp_path):
    # a results file written before the single_accuracy column existed keeps its columns: rows stay aligned
    path = tmp_path / "old.csv"
    old = bench.FIELDS[:-1]
    assert bench.FIELDS[-1] == "single_accuracy"
    bench.append_row(path, _row("a", "hgb", "", "ok", "0.5", "1"), fields=old)
    bench.append_row(path, {**_row("b", "algorank", "20", "ok", "0.75", "19"), "single_accuracy": 0.7})
    rows = bench.read_results(path)
    assert [r["accuracy"] for r in rows] == ["0.5", "0.75"]
    assert all(set(r) == set(old) for r in rows)
    fresh = tmp_path / "new.csv"
    bench.append_row(fresh, {**_row("b", "algorank", "20", "ok", "0.75", "19"), "single_accuracy": 0.7})
    assert bench.read_results(fresh)[0]["single_accuracy"] == "0.7"


def test_paired_difference_hand_computed(bench):
    import numpy as np

    # dataset 1: a right on 3 of 4 rows, b on 1: differences (1, 1, 0, 0), mean 0.5, sample variance 1/3
    # dataset 2: a and b right on the same rows: differences 0, variance 0; a failure and a missing record skipped
    a = [np.array([1, 1, 1, 0], bool), np.array([1, 0], bool), "failed", None]
    b = [np.array([0, 0, 1, 0], bool), np.array([1, 0], bool), np.array([1, 1], bool), np.array([0, 0], bool)]
    mean, se, n = bench.paired_difference(a, b)
    assert n == 2 and mean == pytest.approx(0.25)
    assert se == pytest.approx(np.sqrt((1 / 3) / 4 + 0.0) / 2)
    assert bench.paired_difference(["failed"], [None]) is None


def test_regression_rows_give_the_r2_and_its_paired_test(bench):
    np = pytest.importorskip("numpy")
    from sklearn.metrics import r2_score

    rng = np.random.default_rng(3)
    y = rng.normal(size=500)
    good, bad = y + rng.normal(scale=0.3, size=500), y + rng.normal(scale=0.6, size=500)
    # the per-row terms average to scikit-learn's R², and survive packing (float32)
    for pred in (good, bad):
        rows = bench.row_r2(y, pred)
        assert rows.mean() == pytest.approx(r2_score(y, pred))
        back = bench.unpack_correct(bench.pack_row_scores(rows))
        assert back.dtype == np.float64 and back.mean() == pytest.approx(r2_score(y, pred), abs=1e-6)
    # a constant holdout: 1 when predicted exactly, else 0, as r2_score
    assert list(bench.row_r2([2.0, 2.0], [2.0, 2.0])) == [1.0, 1.0]
    assert list(bench.row_r2([2.0, 2.0], [2.0, 3.0])) == [0.0, 0.0]
    a, b = bench.row_r2(y, good), bench.row_r2(y, bad)
    # the difference in R² is the mean per-row difference; its standard error is that of the per-row differences
    mean, se, n = bench.paired_difference([a], [b])
    assert mean == pytest.approx(r2_score(y, good) - r2_score(y, bad)) and n == 1
    assert se == pytest.approx(np.std(a - b, ddof=1) / np.sqrt(500))
    # 0.3 against 0.6 noise on 500 rows: far apart (a win, and the loss the other way round); the same run ties
    assert bench.paired_wtl([a, b, a], [b, a, a]) == (1, 1, 1, 3)
    from scipy.stats import ttest_rel

    near = bench.row_r2(y, good + rng.normal(scale=0.01, size=500))
    p = ttest_rel(a, near).pvalue
    assert bench.paired_wtl([a], [near], alpha=p * 1.01)[:3] in ((1, 0, 0), (0, 0, 1))
    assert bench.paired_wtl([a], [near], alpha=p * 0.99)[:3] == (0, 1, 0)
