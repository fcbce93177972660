"""What algorank writes, and when: inputs, folders and devices are never replaced, another existing file only
with ``--force`` or when it is recognisably algorank's; results are printed before any file is written; a
write that fails, is interrupted or killed (SIGKILL included) leaves nothing behind, not even an empty folder.

A full disk is simulated as in ``test_output_protocol.py``: every :func:`os.replace` into the test's folder
(the last step of every write) fails with ``ENOSPC``.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
import pytest

from algorank import cli
from algorank.metadata.io import atomic_path, check_out_file, is_algorank_metadata, is_algorank_model

TESTS = Path(__file__).resolve().parent
linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc, O_TMPFILE")


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> list[str]:
    """Options of a recommend run as small as it gets: LDA tested, 2 folds (the recorded times generous, so
    that a busy machine's first test stays within its limit)."""
    from algorank.metadata.dataset import MetaDataset

    rows = [dict(dataset=f"d{d}", learner=l, repeat=0, fold=f, accuracy=acc, fit_time=1.0, predict_time=0.1,
                 status="ok") for d in range(5) for f in range(2) for l, acc in (("lda", 0.9), ("knn", 0.8))]
    path = tmp_path_factory.mktemp("meta") / "small.parquet"
    MetaDataset(pd.DataFrame(rows)).save(path)
    return ["--budget", "60", "--top", "1", "--cv", "2", "--meta", str(path), "--strategy", "ar:p=0", "--quiet"]


@pytest.fixture(scope="module")
def iris_csv(tmp_path_factory) -> Path:
    from sklearn.datasets import load_iris

    path = tmp_path_factory.mktemp("data") / "mydata.csv"
    load_iris(as_frame=True).frame.rename(columns={"target": "class"}).to_csv(path, index=False)
    return path


def _run(capsys, argv):
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _full_disk(monkeypatch, base: Path) -> None:
    real = os.replace

    def full(src, dst, *a, **k):
        if str(base) in str(dst):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(dst))
        return real(src, dst, *a, **k)

    monkeypatch.setattr(os, "replace", full)


def _tree(base: Path) -> list[str]:
    return sorted(p.relative_to(base).as_posix() for p in base.rglob("*"))


# ====================================================================== what is replaced
def test_save_model_onto_the_input_dataset_is_refused_and_the_data_kept(iris_csv, capsys, small):
    before = iris_csv.read_bytes()
    code, out, err = _run(capsys, ["recommend", str(iris_csv), *small, "--save-model", str(iris_csv)])
    assert code == 2 and out == "", err
    assert err == f"error: --save-model {str(iris_csv)!r} is an input of this command: an input is never " \
                  "overwritten\n"
    assert iris_csv.read_bytes() == before
    # --force does not change that, nor another name for the same file
    link = iris_csv.parent / "alias.csv"
    link.unlink(missing_ok=True)
    os.symlink(iris_csv, link)
    code, _, err = _run(capsys, ["recommend", str(iris_csv), *small, "--save-model", str(link), "--force"])
    assert code == 2 and "is an input" in err and iris_csv.read_bytes() == before


def test_no_write_of_a_command_replaces_its_input(iris_csv, tmp_path, capsys, small):
    """An ``--out`` folder that holds the dataset under a name algorank writes (``trace.csv``): the dataset is
    kept, one error line after the results."""
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    data = out_dir / "trace.csv"
    data.write_bytes(iris_csv.read_bytes())
    code, out, err = _run(capsys, ["recommend", str(data), *small, "--out", str(out_dir)])
    assert code == 2 and "results on trace" in out, err
    assert err == f"error: cannot write {str(data)!r}: it is an input of this command, never overwritten\n"
    assert data.read_bytes() == iris_csv.read_bytes()


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_save_model_onto_a_fifo_or_device_is_refused_and_it_stays(tmp_path, capsys, kind, small):
    node = tmp_path / "node"
    if kind == "fifo":
        os.mkfifo(node)
    else:
        if os.geteuid() != 0:
            pytest.skip("making a device node needs root")
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a private copy of /dev/null
    for force in ([], ["--force"]):
        code, out, err = _run(capsys, ["recommend", "sklearn:iris", *small, "--save-model", str(node), *force])
        assert code == 2 and out == ""
        assert err == f"error: --save-model {str(node)!r} is not a regular file (a device, pipe or socket): it is " \
                      "never replaced\n"
        mode = os.lstat(node).st_mode
        assert (stat.S_ISFIFO(mode) if kind == "fifo" else stat.S_ISCHR(mode))


def test_an_existing_file_is_replaced_only_with_force_or_when_it_is_an_algorank_model(tmp_path, capsys, small):
    path = tmp_path / "model.joblib"
    path.write_text("my notes")
    code, out, err = _run(capsys, ["recommend", "sklearn:iris", *small, "--save-model", str(path)])
    assert code == 2 and out == "" and path.read_text() == "my notes"
    assert err == f"error: --save-model {str(path)!r} already exists and is not a file algorank wrote: give " \
                  "--force to replace it\n"
    code, out, err = _run(capsys, ["recommend", "sklearn:iris", *small, "--save-model", str(path), "--force"])
    assert code == 0 and out.rstrip().endswith(f"wrote {path}"), err
    assert is_algorank_model(path)
    first = joblib.load(path)
    code, out, err = _run(capsys, ["recommend", "sklearn:iris", *small, "--seed", "1", "--save-model", str(path)])
    assert code == 0, err  # a model algorank wrote: replaced without --force
    assert joblib.load(path).algorank_info_["learner"] == first.algorank_info_["learner"]
    assert sorted(os.listdir(tmp_path)) == ["model.joblib"]  # no temporary file left


@pytest.mark.parametrize("suffix", [".joblib", ".joblib.gz", ".pkl.xz", ".pkl.bz2", ".pkl.z", ".pkl.lzma"])
def test_a_model_file_algorank_wrote_is_recognised_without_unpickling(tmp_path, suffix):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from algorank.recommender.live.saved_model import save_model

    pipe = make_pipeline(StandardScaler()).fit(np.arange(12.0).reshape(6, 2))
    rec = type("Rec", (), {"model": pipe, "best": None, "dataset": "d", "metric": "accuracy"})()
    ours = save_model(rec, tmp_path / f"ours{suffix}")
    assert is_algorank_model(ours) and list(joblib.load(ours).__dict__)[0] == "algorank_info_"
    plain = make_pipeline(StandardScaler()).fit(np.arange(12.0).reshape(6, 2))
    joblib.dump(plain, tmp_path / f"plain{suffix}")  # a Pipeline, but not saved by algorank
    (tmp_path / "text").write_text("algorank_info_ sklearn.pipeline Pipeline")
    joblib.dump({"algorank_info_": 1}, tmp_path / "dict.joblib")
    assert not any(is_algorank_model(tmp_path / n) for n in (f"plain{suffix}", "text", "dict.joblib", "absent"))


def test_meta_data_files_algorank_wrote_are_recognised(tmp_path):
    from algorank.api import load_meta

    meta = load_meta("uci")
    assert is_algorank_metadata(meta.save(tmp_path / "m.parquet"))
    assert is_algorank_metadata(meta.save(tmp_path / "m.csv"))
    pd.DataFrame({"dataset": ["a"], "learner": ["b"]}).to_parquet(tmp_path / "p.parquet")
    pd.DataFrame({"dataset": ["a"], "learner": ["b"]}).to_csv(tmp_path / "c.csv", index=False)  # no sidecar
    assert not is_algorank_metadata(tmp_path / "p.parquet") and not is_algorank_metadata(tmp_path / "c.csv")


def test_check_out_file_names_the_parameter_and_never_allows_a_folder(tmp_path):
    from algorank.metadata.errors import InputError

    (tmp_path / "f").write_text("x")
    with pytest.raises(InputError, match="^save_model .* already exists .* give force=True to replace it$"):
        check_out_file(tmp_path / "f", option="save_model")
    assert check_out_file(tmp_path / "f", force=True) == tmp_path / "f"
    with pytest.raises(InputError, match="must be a file, but .* is a folder"):
        check_out_file(tmp_path, force=True)
    with pytest.raises(InputError, match="is an input of this command"):
        check_out_file(tmp_path / "f", force=True, inputs=[str(tmp_path / "f")])


# ====================================================================== results first
def test_a_full_disk_while_saving_the_model_loses_no_result_and_leaves_no_folder(tmp_path, capsys, monkeypatch,
                                                                                   small):
    base = tmp_path / "full"
    base.mkdir()
    _full_disk(monkeypatch, base)
    target = base / "sub" / "m.joblib"
    code, out, err = _run(capsys, ["recommend", "sklearn:iris", *small, "--json", "--save-model", str(target)])
    assert code == 1 and err == f"error: cannot write {str(target)!r}: No space left on device\n", err
    d = json.loads(out)  # the whole JSON came out before the write
    assert d["best"]["learner"] and d["saved_model"] == str(target) and d["stop_reason"] == "top"
    assert _tree(base) == []  # no sub/, no temporary file
    code, out, err = _run(capsys, ["recommend", "sklearn:iris", *small, "--save-model", str(target)])
    assert code == 1 and "best: " in out and "wrote" not in out and _tree(base) == []


def test_ctrl_c_during_the_refit_prints_the_best_so_far_and_the_json(capsys, monkeypatch, tmp_path, small):
    from algorank.recommender.live import recommend as live

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(live, "refit_best", interrupted)
    target = tmp_path / "m.joblib"
    code, out, err = _run(capsys, ["recommend", "sklearn:iris", *small, "--json", "--save-model", str(target)])
    assert code == 130, err
    d = json.loads(out)
    assert d["stop_reason"] == "interrupted" and d["best"]["learner"] and d["saved_model"] is None
    assert not target.exists() and os.listdir(tmp_path) == []
    code, out, err = _run(capsys, ["recommend", "sklearn:iris", *small, "--save-model", str(target)])
    assert code == 130 and "best: " in out and "interrupted" in out and not target.exists()


# ====================================================================== export and build-meta
def test_export_checks_every_output_before_writing_any(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(capsys, ["export", "--meta", "uci", "--aslib", "a", "--out", "x.txt"])
    assert code == 2 and out == "" and err == "error: cannot save meta-data to 'x.txt': use a .parquet or .csv " \
                                              "file name\n"
    assert os.listdir(tmp_path) == []  # the ASlib folder was not written first
    Path("x.csv").write_text("mine")
    code, out, err = _run(capsys, ["export", "--meta", "uci", "--aslib", "a", "--out", "x.csv"])
    assert code == 2 and "already exists and is not a file algorank wrote: give --force" in err
    assert sorted(os.listdir(tmp_path)) == ["x.csv"]
    code, out, err = _run(capsys, ["export", "--meta", "uci", "--out", "x.csv", "--force", "--quiet"])
    assert code == 0 and is_algorank_metadata(tmp_path / "x.csv")
    code, out, err = _run(capsys, ["export", "--meta", "uci", "--out", "x.csv", "--quiet"])
    assert code == 0, err  # meta-data algorank wrote: replaced without --force
    code, out, err = _run(capsys, ["export", "--meta", "x.csv", "--out", "x.csv", "--force"])
    assert code == 2 and "is an input of this command" in err
    code, out, err = _run(capsys, ["export", "--meta", "uci", "--aslib", "scen", "--quiet"])
    assert code == 0, err
    before = {p.name: p.read_bytes() for p in Path("scen").iterdir()}
    code, out, err = _run(capsys, ["export", "--meta", "scen", "--aslib", "./scen/", "--folds", "3"])
    assert code == 2 and err == "error: --aslib './scen/' is an input of this command: an input is never " \
                                "overwritten\n"
    assert {p.name: p.read_bytes() for p in Path("scen").iterdir()} == before


@pytest.mark.shared
def test_build_meta_on_a_full_disk_leaves_no_empty_folder(tmp_path, capsys, monkeypatch):
    from algorank.evaluation.cv import metabuild

    if metabuild.default_shared_dir() is None:
        pytest.skip("needs ../shared")

    def full(item, *, out_dir, **kwargs):  # the first dataset's file cannot be written
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(Path(out_dir) / f"{item.dataset}.parquet"))

    monkeypatch.setattr(metabuild, "build_dataset", full)
    target = tmp_path / "full" / "b"
    code, out, err = _run(capsys, ["build-meta", "--datasets", "iris", "--out", str(target), "--quiet"])
    assert code == 1 and err.startswith("error: cannot write ") and "No space left" in err, err
    assert os.listdir(tmp_path) == []  # neither b/ nor full/


# ====================================================================== killed while writing
_DUMP = textwrap.dedent("""
    import os, sys, time
    import numpy as np
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer
    from algorank.recommender.live.saved_model import save_model

    class Slow:
        '''Pickled after 20 MB of the model: says so, then blocks (the model is being dumped).'''
        def __reduce__(self):
            open(sys.argv[2], "w").close()
            time.sleep(120)
            return (Slow, ())

    if sys.argv[3] == "named":  # a system without unnamed files
        import algorank.metadata.io as io
        io._unnamed_file = lambda folder: None
    big = np.random.default_rng(0).random(2_500_000)
    pipe = make_pipeline(FunctionTransformer(kw_args={"big": big, "slow": Slow()}))
    rec = type("Rec", (), {"model": pipe, "best": None, "dataset": "d", "metric": "accuracy"})()
    save_model(rec, sys.argv[1])
""")


@linux
@pytest.mark.parametrize("how", [("unnamed", signal.SIGKILL), ("named", signal.SIGTERM), ("named", signal.SIGINT)])
def test_a_process_killed_while_dumping_a_large_model_leaves_no_file(tmp_path, how):
    mode, sig = how
    folder = tmp_path / "models"
    folder.mkdir()
    started = tmp_path / "dumping"
    proc = subprocess.Popen([sys.executable, "-c", _DUMP, str(folder / "rf.joblib"), str(started), mode],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        end = time.monotonic() + 120
        while not started.exists():
            assert proc.poll() is None and time.monotonic() < end, proc.stderr.read().decode()[-2000:]
            time.sleep(0.05)
        if mode == "unnamed":  # 20 MB written, all of it in a file without a name
            assert os.listdir(folder) == []
        proc.send_signal(sig)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode != 0
    assert os.listdir(folder) == []  # SIGKILL included: no hidden .rf.joblib.* file


def test_a_failed_write_removes_the_folders_it_would_have_created(tmp_path):
    with pytest.raises(ValueError):
        with atomic_path(tmp_path / "a" / "b" / "x.csv") as tmp:
            pd.DataFrame({"x": [1]}).to_csv(tmp)
            raise ValueError("the writer failed")
    assert os.listdir(tmp_path) == []
    with atomic_path(tmp_path / "a" / "b" / "x.csv") as tmp:  # folders made only for the final rename
        pd.DataFrame({"x": [1]}).to_csv(tmp, index=False)
        assert os.listdir(tmp_path) == [] or not sys.platform.startswith("linux")
    assert (tmp_path / "a" / "b" / "x.csv").read_text() == "x\n1\n"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(tmp_path / "a" / "b" / "x.csv").st_mode) == 0o666 & ~umask


# ====================================================================== processes
def test_recommend_caps_n_jobs_at_the_cores_with_a_note(capsys, caplog):
    from algorank.metadata.checks import available_cores
    from algorank.recommender.live.parallel import check_n_jobs

    cores = available_cores()
    assert check_n_jobs(1000) == cores and check_n_jobs(-1) == cores and check_n_jobs(1) == 1
    caplog.clear()
    with caplog.at_level("WARNING", logger="algorank"):
        code, out, err = _run(capsys, ["recommend", "sklearn:iris", "--meta", "uci", "--dry-run", "--json",
                                       "--n-jobs", "1000"])
    assert code == 0 and json.loads(out)["n_jobs"] == cores
    assert f"note: n_jobs=1000 is more than the {cores} core(s) of this machine; using {cores}" in caplog.text


def test_multitest_caps_its_threads_at_the_cores_with_a_note(caplog):
    from algorank.metadata.checks import available_cores
    from algorank.recommender.multitest import _first_pass_threads

    cores = available_cores()
    with caplog.at_level("WARNING"):
        assert _first_pass_threads(1000) == cores and _first_pass_threads(-1) == cores
    assert f"note: n_jobs=1000 is more than the {cores} core(s) of this machine; using {cores}" in caplog.text


@linux
def test_a_worker_ignores_ctrl_c_while_it_starts_and_while_it_waits(tmp_path):
    """A loky worker of recommend gets SIGINT first while it is still starting (importing), then while it
    waits for a task: it stays (the same process answers both tasks) and prints nothing."""
    script = textwrap.dedent("""
        import contextlib, os, signal, time
        from algorank.evaluation.cv import children
        from algorank.evaluation.cv.children import watched_executor
        sigint_blocked = getattr(children, "sigint_blocked", contextlib.nullcontext)
        ex = watched_executor(1)
        with sigint_blocked():
            first = ex.submit(os.getpid)
        pids = list(ex._processes)
        os.kill(pids[0], signal.SIGINT)
        pid = first.result(timeout=120)
        os.kill(pid, signal.SIGINT)
        time.sleep(0.5)
        with sigint_blocked():
            again = ex.submit(os.getpid).result(timeout=120)
        print(pids == [pid] and pid == again)
        ex.shutdown(wait=True, kill_workers=True)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=180, cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.strip() == "True", done.stderr[-3000:]
    assert "KeyboardInterrupt" not in done.stderr and "Traceback" not in done.stderr, done.stderr[-3000:]


@linux
def test_ctrl_c_of_recommend_with_two_jobs_is_quiet(tmp_path):
    """Ctrl-C from the terminal (SIGINT to the whole process group) 1.5 s into ``recommend --n-jobs 2``."""
    from helpers_processes import kill_marked, marker_env

    marker = os.urandom(8).hex()
    proc = subprocess.Popen([sys.executable, "-m", "algorank", "recommend", "sklearn:digits", "--n-jobs", "2",
                             "--budget", "20", "--meta", "uci"], env=marker_env(marker), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=tmp_path, start_new_session=True)
    try:
        time.sleep(1.5)
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        kill_marked(marker)
    text = err.decode()
    assert proc.returncode == 130 and "interrupted" in text, text[-3000:]
    assert "Traceback" not in text and "KeyboardInterrupt" not in text, text[-3000:]


@linux
@pytest.mark.slow
def test_no_process_is_left_half_a_second_after_an_early_error_beside_two_busy_processes(tmp_path):
    """20 early errors in a row (each forks the fold server first) on a machine kept busy by two CPU-bound
    processes: half a second after each command ends, none of its processes is alive.  Before, the fork
    started multiprocessing's resource tracker, a fresh interpreter still starting when the command ended."""
    from helpers_processes import kill_marked, marked, marker_env

    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    left = []
    try:
        for i in range(20):
            marker = f"{os.urandom(8).hex()}-{i}"
            done = subprocess.run([sys.executable, "-m", "algorank", "recommend", str(tmp_path / "missing.csv"),
                                   "--budget", "30"], env=marker_env(marker), stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, cwd=tmp_path, timeout=120)
            assert done.returncode == 2 and done.stderr.startswith(b"error:"), done.stderr.decode()
            time.sleep(0.5)
            for pid in marked(marker):
                try:
                    left.append((i, Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")[:120]))
                except OSError:
                    pass
            kill_marked(marker)
    finally:
        for s in spinners:
            s.kill()
            s.wait()
    assert left == []
