"""Frozen held-out splits: the files are what the written rule gives, families stay together,
at least 25 % held out, and benchmark --heldout / tune-p --exclude-heldout use them."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import algorank
from algorank import cli
from algorank.metadata import splits
from algorank.metadata.errors import InputError


@pytest.mark.parametrize("name", ["broad", "lcdb", "uci"])
def test_files_are_what_the_rule_gives(name, tmp_path):
    written = splits.write_split(name, out_dir=tmp_path)
    assert splits.read_ids(written) == splits.heldout(name)
    assert written.read_text() == (splits.SPLITS_DIR / f"{name}_heldout.txt").read_text()


def test_oboe_file_is_what_the_rule_gives(shared_dir, tmp_path):
    if not (shared_dir / "metadata" / "oboe" / "dataset_sizes.csv").is_file():
        pytest.skip("../shared/metadata/oboe is absent")
    written = splits.write_split("oboe", out_dir=tmp_path, shared_dir=shared_dir)
    assert written.read_text() == (splits.SPLITS_DIR / "oboe_heldout.txt").read_text()
    assert len(splits.heldout("oboe")) == 105


@pytest.mark.parametrize("name,total", [("broad", 151), ("lcdb", 248), ("uci", 63)])
def test_at_least_a_quarter_and_families_together(name, total):
    ids = splits.heldout(name)
    assert len(set(ids)) == len(ids) and len(ids) >= 0.25 * total
    if name == "uci":
        assert set(ids) <= set(algorank.load_meta("uci").dataset_ids)
        assert set(ids) == set(splits.heldout("broad")) & set(algorank.load_meta("uci").dataset_ids)
    if name == "lcdb":
        assert set(ids) <= set(algorank.load_meta("lcdb").dataset_ids)
    if name == "broad":
        table = pd.read_csv(splits.SPLITS_DIR / "broad_datasets.csv", dtype=str)
        assert len(table) == total and set(ids) <= set(table["dataset"])
        table["held"] = table["dataset"].isin(ids)
        assert (table.groupby("family")["held"].nunique() == 1).all()
        # e.g. the ecoli family (ecoli, ecoli1, ecoli3) is on one side
        assert table.loc[table["family"] == "ecoli", "held"].nunique() == 1


def test_choose_heldout_rule_on_a_synthetic_table():
    rng = np.random.default_rng(0)
    n = 97
    table = pd.DataFrame({"dataset": [f"x{i}" for i in range(n)], "size": rng.integers(50, 10**5, n).astype(float),
                          "group": [f"g{i // 3}" if i < 30 else f"x{i}" for i in range(n)]})
    table.loc[5, "size"] = np.nan  # unknown size: its group joins the unknown stratum
    held = splits.choose_heldout(table)
    assert held == splits.choose_heldout(table.sample(frac=1.0, random_state=1))  # order of rows is irrelevant
    assert len(held) >= 0.25 * n
    t = table.assign(held=table["dataset"].isin(held))
    assert (t.groupby("group")["held"].nunique() == 1).all()
    # the key depends only on the salt and the group id
    assert splits.group_key("g1") == splits.group_key("g1") != splits.group_key("g1", salt="other")
    assert splits.choose_heldout(table, salt="other") != held


def test_api_errors_and_resolution(tmp_path):
    with pytest.raises(InputError, match="no frozen split named 'nope'"):
        splits.heldout("nope")
    f = tmp_path / "ids.txt"
    f.write_text("# mine\nd1\n\nd2  # second\n")
    assert splits.resolve_heldout(str(f)) == ("d1", "d2")
    assert splits.resolve_heldout(True, meta_name="uci") == splits.heldout("uci")
    with pytest.raises(InputError, match="embedded meta-data name"):
        splits.resolve_heldout(True, meta_name=None)
    with pytest.raises(InputError, match="none of the held-out datasets"):
        splits.split_meta(algorank.load_meta("uci"), ["not-there"])


def test_benchmark_heldout_and_tune_p_exclude_heldout(capsys):
    held = splits.heldout("uci")
    suite = algorank.benchmark(["ar:p=0", "ar:p=1/16"], meta="uci", heldout=True, time_model="live")
    assert suite.results[0].datasets == tuple(sorted(held)) and suite.n_train == 63 - len(held)
    res = algorank.tune_p("uci", grid=["0", "1/16"], exclude_heldout=True, time_model="live")
    assert len(res.sweep.results[0].datasets) == 63 - len(held) and set(res.excluded) == set(held)
    assert not set(res.sweep.results[0].datasets) & set(held)
    d = res.to_dict()
    assert d["user_metrics"]["reference"] == "ar:p=0" and "ar:p=1/16" in d["user_metrics"]["comparisons"]
    assert cli.main(["tune-p", "--meta", "uci", "--exclude-heldout", "--p-grid", "0", "1/16", "--nested",
                     "--reference", "1/16", "--json"]) == 0
    d = json.loads(capsys.readouterr()[0])
    assert d["n_datasets"] == 63 - len(held) and len(d["excluded_datasets"]) == len(held)
    assert "nested (P tuned per dataset)" in d["user_metrics"]["strategies"]
    assert d["user_metrics"]["reference"] == "ar:p=1/16"
    assert cli.main(["benchmark", "--meta", "uci", "--heldout", "--strategy", "ar:p=0", "--json"]) == 0
    d = json.loads(capsys.readouterr()[0])
    assert d["n_datasets"] == len(held) and d["setting"].startswith("frozen held-out split (uci)")


def test_broad_embedded_set_is_covered_by_the_split_list():
    try:
        meta = algorank.load_meta("broad")
    except InputError:
        pytest.skip("the embedded broad set does not exist yet")
    table = pd.read_csv(splits.SPLITS_DIR / "broad_datasets.csv", dtype=str)
    assert set(meta.dataset_ids) <= set(table["dataset"])
