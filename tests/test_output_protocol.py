"""One output protocol for every command that writes: ``--out`` / ``--aslib`` / ``--assemble-to`` checked
before any work, results printed first, any OSError while writing one ``error:`` line (exit 2 for a path
that cannot be written, 1 for a full disk), nothing half-written left behind; output files named from data
through :func:`algorank.metadata.text.safe_filename`.

A full disk is simulated: every :func:`os.replace` (the last step of every atomic write) fails with
``ENOSPC``, as a real full disk does.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from algorank import cli
from algorank.metadata.dataset import MetaDataset

META = ["--meta", "uci"]
#: command -> (argv without the target, the option naming the target, kind of target, prints before writing)
WRITERS = {
    "evaluate": (["evaluate", "sklearn:iris", "--learners", "lda", "--cv", "2", "--no-store", "--quiet"],
                 "--out", "dir", True),
    "recommend": (["recommend", "sklearn:iris", "--top", "1", "--cv", "3", "--budget", "30", "--quiet", *META],
                  "--out", "dir", True),
    "benchmark": (["benchmark", "--strategy", "ar:p=0", "--quiet", *META], "--out", "dir", True),
    "tune-p": (["tune-p", "--p-grid", "0", "1/16", "--quiet", *META], "--out", "dir", True),
    "multitest": (["multitest", "--learners", "lda,knn,logreg", "--quiet", *META], "--out", "dir", True),
    "compare": (["compare", "--learners", "lda,knn,logreg", "--bayes-samples", "200", "--quiet", *META], "--out",
                "dir", True),
    "export-aslib": (["export", "--quiet", *META], "--aslib", "dir", False),
    "export-out": (["export", "--quiet", *META], "--out", "file", False),
    "build-meta": (["build-meta", "--datasets", "uci/iris", "--quiet"], "--out", "dir", False),
    "snapshot-build-oboe": (["snapshot", "build-oboe", "/nonexistent-oboe", "--quiet"], "--out", "dir", False),
    "pull": (["pull", "--tasks", "1", "--flows", "1", "--offline", "--quiet"], "--out", "file", False),
}
#: the commands whose files are written after a computation that runs here in a second or two
FULL_DISK = ["evaluate", "recommend", "benchmark", "tune-p", "multitest", "compare", "export-aslib", "export-out"]


def _target(base: Path, kind: str) -> Path:
    return base / "results" if kind == "dir" else base / "meta.parquet"


def _run(capsys, argv):
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("command", sorted(WRITERS))
def test_a_target_under_a_file_is_refused_before_any_work(tmp_path, capsys, command):
    argv, option, kind, _ = WRITERS[command]
    blocker = tmp_path / "a-file"
    blocker.write_text("keep me")
    code, out, err = _run(capsys, argv + [option, str(_target(blocker, kind)), "--cache", str(tmp_path)]
                          if command == "pull" else argv + [option, str(_target(blocker, kind))])
    assert code == 2 and out == "", err
    assert err.count("\n") == 1 and err.startswith("error: ") and "a-file" in err and "is a file" in err, err
    assert blocker.read_text() == "keep me" and sorted(os.listdir(tmp_path)) == ["a-file"]


@pytest.mark.parametrize("command", sorted(WRITERS))
def test_an_unwritable_target_is_refused_before_any_work(tmp_path, capsys, command):
    if os.access("/sys", os.W_OK) and os.geteuid() != 0:  # pragma: no cover - unusual system
        pytest.skip("/sys is writable here")
    argv, option, kind, _ = WRITERS[command]
    code, out, err = _run(capsys, argv + [option, str(_target(Path("/sys/algorank-out"), kind))]
                          + (["--cache", str(tmp_path)] if command == "pull" else []))
    assert code == 2 and out == "", err
    assert err.count("\n") == 1 and err.startswith("error: ") and "/sys" in err, err


@pytest.mark.parametrize("folder_exists", [False, True])
@pytest.mark.parametrize("command", FULL_DISK)
def test_a_full_disk_is_one_error_line_after_the_results_and_leaves_nothing(tmp_path, capsys, monkeypatch,
                                                                             command, folder_exists):
    argv, option, kind, prints_first = WRITERS[command]
    base = tmp_path / "work"
    base.mkdir()
    target = _target(base, kind)
    if folder_exists and kind == "dir":
        target.mkdir()
    real = os.replace

    def full(src, dst, *a, **k):
        if str(base) in str(dst):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(dst))
        return real(src, dst, *a, **k)

    monkeypatch.setattr(os, "replace", full)
    code, out, err = _run(capsys, argv + [option, str(target)])
    assert code == 1, err
    assert err.count("\n") == 1 and err.startswith("error: cannot write ") and "No space left" in err, err
    assert "Traceback" not in err and "wrote" not in out
    if prints_first:
        assert out.strip()  # the results were printed before the files failed
    left = sorted(p.relative_to(base).as_posix() for p in base.rglob("*"))
    assert left == (["results"] if folder_exists and kind == "dir" else []), left  # nothing half-written


def _long_id_meta(tmp_path) -> Path:
    rng = np.random.default_rng(1)
    learners = ["x" * 300 + "/../" + str(j) for j in range(3)]
    rows = [dict(dataset=f"d{d}", learner=l, repeat=0, fold=0, accuracy=float(rng.uniform(0.5, 1)), fit_time=1.0,
                 predict_time=0.0, status="ok") for d in range(8) for l in learners]
    path = tmp_path / "long.parquet"
    MetaDataset(pd.DataFrame(rows)).save(path)
    return path


def test_files_named_from_learner_ids_are_bounded_and_stay_in_the_folder(tmp_path, capsys):
    out_dir = tmp_path / "out"
    code, out, err = _run(capsys, ["compare", "--meta", str(_long_id_meta(tmp_path)), "--bayes-samples", "200",
                                   "--out", str(out_dir), "--json", "--quiet"])
    assert code == 0, err
    written = json.loads(out)["written"]
    names = sorted(os.listdir(out_dir))
    assert sorted(Path(w).name for w in written) == names and len(names) == 5  # cd diagram + 3 pairs + report.html
    assert all(len(n) <= 120 and "/" not in n and not n.startswith(".") for n in names)
    assert sorted(os.listdir(tmp_path)) == ["long.parquet", "out"]  # no id became a path


def test_export_writes_a_complete_scenario_and_file(tmp_path, capsys):
    code, out, err = _run(capsys, ["export", "--meta", "uci", "--aslib", str(tmp_path / "scen"), "--out",
                                   str(tmp_path / "m.csv"), "--json"])
    assert code == 0, err
    d = json.loads(out)
    assert d["datasets"] == 63 and (tmp_path / "m.csv").is_file()
    assert sorted(os.listdir(tmp_path / "scen")) == sorted(Path(w).name for w in d["written"][:-1])
    assert len(MetaDataset.load(tmp_path / "m.csv").dataset_ids) == 63
    assert "scenario_id: scen" in (tmp_path / "scen" / "description.txt").read_text()


@pytest.mark.parametrize("folder_exists", [False, True])
def test_build_meta_assemble_on_a_full_disk_is_one_error_line_and_leaves_nothing(tmp_path, capsys, monkeypatch,
                                                                                 folder_exists):
    from algorank.evaluation.cv.metabuild import BroadDataset, build_meta

    data = tmp_path / "data"
    data.mkdir()
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, size=40)
    pd.DataFrame({"x": y + rng.normal(size=40), "class": [f"c{v}" for v in y]}).to_csv(data / "a.csv", index=False)
    build_meta([BroadDataset.from_file(data / "a.csv", collection="test")], out_dir=tmp_path / "parts", cap=None,
               folds=2, learners=["sklearn.naive_bayes.GaussianNB"], calibrate=False, progress=False)
    target = tmp_path / "work" / "embedded"
    if folder_exists:
        target.mkdir(parents=True)
    real = os.replace

    def full(src, dst, *a, **k):
        if str(tmp_path / "work") in str(dst):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(dst))
        return real(src, dst, *a, **k)

    monkeypatch.setattr(os, "replace", full)
    code, out, err = _run(capsys, ["build-meta", "--assemble", "--out", str(tmp_path / "parts"), "--assemble-to",
                                   str(target), "--shared", str(tmp_path), "--quiet"])
    assert code == 1 and err.count("\n") == 1 and err.startswith("error: cannot write ") and "No space" in err, err
    left = sorted(p.relative_to(tmp_path / "work").as_posix() for p in (tmp_path / "work").rglob("*")) \
        if (tmp_path / "work").exists() else []
    assert left == (["embedded"] if folder_exists else []), left
