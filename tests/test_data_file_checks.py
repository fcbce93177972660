"""Dataset and meta-data text files: a repeated column name is an error naming it, and the text encoding
is read from the bytes (a byte order mark, or the NUL bytes of UTF-16) or refused in one line."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from algorank import cli
from algorank.evaluation.cv.datasets import load_dataset
from algorank.metadata.aslib import read_aslib, write_aslib
from algorank.metadata.dataset import MetaDataset
from algorank.metadata.errors import InputError
from algorank.metadata.textfile import check_unique_names, text_encoding


def _frame(n=30) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({"x0": rng.normal(size=n).round(3), "x1": rng.normal(size=n).round(3),
                         "name": ["é", "ü", "ß"] * (n // 3), "class": ["a", "b", "c"] * (n // 3)})


def _one_error(capsys, argv, code=2) -> str:
    assert cli.main(argv) == code
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# ------------------------------------------------------------------ duplicated column names
def test_duplicated_target_header_is_an_error_naming_it(tmp_path, capsys):
    """``x0,x1,x0,x3,class,class``: the second ``class`` used to become the feature ``class.1`` (a label leak)."""
    f = _frame()
    text = "x0,x1,x0,x3,class,class\n" + "\n".join(
        f"{a},{b},{a + 1},{b - 1},{c},{c}" for a, b, c in zip(f["x0"], f["x1"], f["class"])) + "\n"
    path = tmp_path / "leak.csv"
    path.write_text(text)
    with pytest.raises(InputError, match=r"duplicated column names: 'x0' \(columns 1 and 3\); 'class' "
                                         r"\(columns 5 and 6\)"):
        load_dataset(str(path))
    line = _one_error(capsys, ["recommend", str(path), "--budget", "5", "--dry-run"])
    assert "'class' (columns 5 and 6)" in line


def test_check_unique_names_lists_each_name_once():
    check_unique_names(["a", "b", "A"], what="t")  # names differ by case: distinct
    with pytest.raises(InputError, match=r"^t has duplicated column names: 'b' \(columns 2, 3 and 5\)"):
        check_unique_names(["a", "b", "b", "c", "b"], what="t")


@pytest.mark.parametrize("extra,words", [("ALGORITHM", "2 attributes named 'algorithm' .in any case.: algorithm, "
                                                       "ALGORITHM")])
def test_aslib_duplicated_attribute_refused(tmp_path, extra, words):
    runs = pd.DataFrame({"dataset": ["d0", "d0", "d1", "d1"], "learner": ["p", "q"] * 2, "repeat": 0, "fold": 0,
                         "accuracy": [0.5, 0.75, 0.25, 0.125]})
    write_aslib(MetaDataset(runs), tmp_path / "s", folds=2)
    arff = tmp_path / "s" / "algorithm_runs.arff"
    head, data = arff.read_text().split("@DATA\n")
    rows = [line + ",q" for line in data.splitlines()]  # the second copy says another learner
    arff.write_text(head.rstrip("\n") + f"\n@ATTRIBUTE {extra} STRING\n\n@DATA\n" + "\n".join(rows) + "\n")
    with pytest.raises(InputError, match=words):
        read_aslib(tmp_path / "s")


# ------------------------------------------------------------------ encodings
@pytest.mark.parametrize("codec,expected", [("utf-8", "utf-8"), ("utf-8-sig", "utf-8-sig"), ("utf-16", "utf-16"),
                                            ("utf-16-le", "utf-16-le"), ("utf-16-be", "utf-16-be"),
                                            ("utf-32", "utf-32")])
def test_encodings_read_the_same_dataset(tmp_path, codec, expected):
    text = _frame().to_csv(index=False)
    path = tmp_path / "d.csv"
    path.write_bytes(text.encode(codec))
    assert text_encoding(path) == expected
    data = load_dataset(str(path))
    want = load_dataset(str(_write(tmp_path / "plain.csv", text)))
    assert list(data.X.columns) == ["x0", "x1", "name"] and data.target == "class"
    pd.testing.assert_frame_equal(data.X, want.X)
    assert data.y.tolist() == want.y.tolist()
    assert list(data.X["name"].cat.categories) == ["ß", "é", "ü"]


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_utf16_without_bom_is_not_garbage(tmp_path, capsys):
    """A UTF-16 CSV without a byte order mark used to read as NUL-filled names, every feature nominal."""
    path = tmp_path / "u16.csv"
    path.write_bytes(_frame().to_csv(index=False).encode("utf-16-le"))
    data = load_dataset(str(path))
    assert data.meta_features["n_nominal_features"] == 1 and data.X["x0"].dtype == float
    assert all("\x00" not in c for c in data.X.columns)


def test_utf16_arff(tmp_path):
    rows = "\n".join(f"{i},'{'é' if i % 2 else 'ü'}',{'ab'[i % 2]}" for i in range(20))
    text = f"@relation d\n@attribute a numeric\n@attribute s {{é,ü}}\n@attribute class {{a,b}}\n@data\n{rows}\n"
    path = tmp_path / "d.arff"
    path.write_bytes(text.encode("utf-16-be"))
    data = load_dataset(str(path))
    assert set(data.X["s"].dropna()) == {"é", "ü"} and data.classes == ("a", "b")


@pytest.mark.parametrize("payload,words", [
    (_frame().to_csv(index=False).encode("utf-32-le"), "holds NUL bytes"),  # UTF-32 without a mark
    (b"x0,x1,class\n1,\x00\x01,a\n2,3,b\n", "holds NUL bytes"),  # binary
    (_frame().to_csv(index=False).encode("latin-1"), "is not UTF-8 text (a byte 0xe9)"),
])
def test_other_encodings_refused_in_one_line(tmp_path, capsys, payload, words):
    path = tmp_path / "odd.csv"
    path.write_bytes(payload)
    with pytest.raises(InputError, match=words.replace("(", r"\(").replace(")", r"\)")):
        load_dataset(str(path))
    assert words in _one_error(capsys, ["recommend", str(path), "--budget", "5", "--dry-run"])


def test_runs_csv_in_utf16(tmp_path):
    runs = pd.DataFrame({"dataset": ["dé", "dé", "d1", "d1"], "learner": ["p", "q"] * 2, "repeat": 0, "fold": 0,
                         "accuracy": [0.5, 0.75, 0.25, 0.125], "fit_time": 0.5})
    path = tmp_path / "runs.csv"
    path.write_bytes(runs.to_csv(index=False).encode("utf-16-le"))
    meta = MetaDataset.load(path)
    assert meta.dataset_ids == ["d1", "dé"]
    assert meta.matrix().loc["dé", "q"] == 0.75


def test_written_row_index_is_not_a_feature(tmp_path, caplog):
    """``df.sort_values("class").to_csv(p)`` writes the row numbers as a nameless first column: in a file
    sorted by class they would give the label away."""
    frame = _frame().sort_values("class")
    path = tmp_path / "sorted.csv"
    frame.to_csv(path)
    with caplog.at_level("WARNING"):
        data = load_dataset(str(path))
    assert list(data.X.columns) == ["x0", "x1", "name"]
    assert "column 1 has no name and holds distinct whole numbers" in caplog.text
    # a nameless column of measurements stays a feature
    text = frame.to_csv(index=False).replace("x0,", ",", 1)
    path.write_text(text)
    assert list(load_dataset(str(path)).X.columns) == ["Unnamed: 0", "x1", "name"]


# ------------------------------------------------------------------ separators, decimal commas, compression
def _decimal_comma_frame(n=30) -> pd.DataFrame:
    f = _frame(n)
    f["x0"] = f["x0"] + 0.25  # never a whole number: every value is written with a decimal mark
    return f


def test_semicolons_and_decimal_commas_read_as_a_spreadsheet_wrote_them(tmp_path, caplog):
    """A spreadsheet in a decimal-comma locale writes ``x0;x1;name;class`` and ``1,25;-0,5;é;a``: the file used to be
    one column named ``x0;x1;name;class`` and the target was not found."""
    f = _decimal_comma_frame()
    want = load_dataset(str(_write(tmp_path / "plain.csv", f.to_csv(index=False))))
    path = _write(tmp_path / "semi.csv", f.to_csv(index=False, sep=";", decimal=","))
    with caplog.at_level("WARNING"):
        data = load_dataset(str(path))
    assert "read with ';' as the separator and a decimal comma" in caplog.text
    pd.testing.assert_frame_equal(data.X, want.X)
    assert data.y.tolist() == want.y.tolist() and data.X["x0"].dtype == float
    # semicolons with decimal points: the points stay decimal points
    dots = load_dataset(str(_write(tmp_path / "dots.csv", f.to_csv(index=False, sep=";"))))
    pd.testing.assert_frame_equal(dots.X, want.X)
    # tabs in a .csv file
    tabs = load_dataset(str(_write(tmp_path / "tabs.csv", f.to_csv(index=False, sep="\t"))))
    pd.testing.assert_frame_equal(tabs.X, want.X)


def test_fields_separated_by_blanks_as_in_many_uci_files(tmp_path, caplog):
    text = "x1 x2  class\n" + "\n".join(f"{i % 4 + 0.5}   {i % 3} {'ab'[i % 2]}" for i in range(20)) + "\n"
    with caplog.at_level("WARNING"):
        data = load_dataset(str(_write(tmp_path / "ws.txt", text)))
    assert "read with runs of blanks as the separator" in caplog.text
    assert list(data.X.columns) == ["x1", "x2"] and data.X["x1"].tolist()[:3] == [0.5, 1.5, 2.5]
    assert data.y.tolist() == ["ab"[i % 2] for i in range(20)]
    # quoted fields, or lines of other lengths: no such guess (the file stays one column, and says so)
    quoted = '"x 1" x2 class\n' + "\n".join(f"{i} {i} {'ab'[i % 2]}" for i in range(20)) + "\n"
    with pytest.raises(InputError, match=r"target 'class' is not an attribute of dataset 'q'.*attributes: "
                                         r"x 1 x2 class$"):
        load_dataset(str(_write(tmp_path / "q.txt", quoted)), target="class")


def test_a_comma_in_the_header_keeps_commas(tmp_path):
    """The header decides: ``a,b;c`` is two comma-separated columns, whatever the rows hold."""
    text = "a,b;c,class\n" + "\n".join(f"{i % 4 + 0.5},{i % 3};{i % 2},{'xy'[i % 2]}" for i in range(20)) + "\n"
    data = load_dataset(str(_write(tmp_path / "c.csv", text)))
    assert list(data.X.columns) == ["a", "b;c"]


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz", ".zip"])
def test_compressed_csv_and_arff_read_as_the_text_they_hold(tmp_path, suffix):
    import bz2
    import gzip
    import lzma
    import zipfile

    text = _frame().to_csv(index=False)
    want = load_dataset(str(_write(tmp_path / "plain.csv", text)))
    path = tmp_path / f"data.csv{suffix}"
    if suffix == ".zip":
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("data.csv", text)
    else:
        path.write_bytes({".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}[suffix](text.encode()))
    data = load_dataset(str(path))
    assert data.name == "data"
    pd.testing.assert_frame_equal(data.X, want.X)
    assert data.y.tolist() == want.y.tolist()
    rows = "\n".join(f"{i},{'ab'[i % 2]}" for i in range(20))
    arff = tmp_path / "d.arff.gz"
    arff.write_bytes(gzip.compress(f"@relation d\n@attribute a numeric\n@attribute class {{a,b}}\n@data\n{rows}\n"
                                   .encode()))
    assert load_dataset(str(arff)).y.tolist() == ["ab"[i % 2] for i in range(20)]


def test_bad_compressed_files_are_refused_in_one_line(tmp_path, capsys):
    import zipfile

    broken = tmp_path / "broken.csv.gz"
    broken.write_bytes(b"not gzip at all")
    line = _one_error(capsys, ["recommend", str(broken), "--budget", "5", "--dry-run"])
    assert line.startswith("error: dataset file ") and "does not decompress as gzip" in line
    two = tmp_path / "two.csv.zip"
    with zipfile.ZipFile(two, "w") as z:
        z.writestr("a.csv", "x,class\n1,a\n")
        z.writestr("b.csv", "x,class\n1,a\n")
    assert "a zip archive of 2 files: it must hold exactly one" in _one_error(
        capsys, ["recommend", str(two), "--budget", "5", "--dry-run"])
    other = tmp_path / "data.json.gz"
    other.write_bytes(b"x")
    assert "unknown dataset format '.json.gz'" in _one_error(
        capsys, ["recommend", str(other), "--budget", "5", "--dry-run"])


def test_a_row_with_an_extra_field_is_a_logged_warning_not_a_raw_one(tmp_path, caplog):
    import warnings

    path = _write(tmp_path / "extra.csv", "a,b,class\n1,2,x,9\n3,4,y\n5,6,x\n7,8,y\n")
    with warnings.catch_warnings(record=True) as caught, caplog.at_level("WARNING"):
        warnings.simplefilter("always")
        data = load_dataset(str(path))
    assert not [w for w in caught if issubclass(w.category, pd.errors.ParserWarning)]
    assert "extra.csv: some rows have more fields than the header; their extra fields are left out" in caplog.text
    assert data.X.to_numpy().tolist() == [[1, 2], [3, 4], [5, 6], [7, 8]] and data.y.tolist() == ["x", "y", "x", "y"]
