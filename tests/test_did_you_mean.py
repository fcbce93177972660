"""Messages: did-you-mean for flags, commands, choices and embedded meta-data names; a missing file reported early."""

import subprocess
import sys
import textwrap

import pytest

from algorank import cli


def _error(capsys, argv):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
    return err.strip()


def test_misspelt_flags_get_the_closest_option(capsys):
    assert _error(capsys, ["recommend", "sklearn:iris", "--budgt", "8"]) == (
        "error: algorank: unrecognized arguments: --budgt 8; did you mean --budget?")
    assert _error(capsys, ["recommend", "sklearn:iris", "--budgt", "3", "--dry-rn"]).endswith(
        "did you mean --budget or --dry-run?")
    assert _error(capsys, ["rank", "--jsn"]).endswith("did you mean --json?")
    assert _error(capsys, ["info", "--bogus"]) == "error: algorank: unrecognized arguments: --bogus"  # nothing close


def test_misspelt_commands_and_choices(capsys):
    assert _error(capsys, ["recomend", "sklearn:iris"]).endswith("; did you mean 'recommend'?")
    assert _error(capsys, ["recommend", "sklearn:iris", "--time-model", "lve"]).endswith("; did you mean 'live'?")


def test_embedded_meta_data_names(capsys):
    assert _error(capsys, ["rank", "--meta", "lcbd"]) == (
        "error: meta-data file not found: lcbd; did you mean 'lcdb'? embedded sets: modern, lcdb, uci, broad, oboe, rdatasets, regression")
    assert _error(capsys, ["info", "--meta", "zzz.parquet"]).endswith(
        "(embedded sets: modern, lcdb, uci, broad, oboe, rdatasets, regression)")


def test_a_missing_dataset_file_is_reported_before_the_data_libraries_are_imported(tmp_path):
    (tmp_path / "iris.csv").write_text("a,class\n1,x\n2,y\n")
    code = textwrap.dedent(f"""
        import sys
        from algorank import cli
        rc = cli.main(["recommend", {str(tmp_path / "iris.cvs")!r}, "--budget", "5"])
        heavy = sorted(m for m in ("sklearn", "pandas", "scipy", "numpy") if m in sys.modules)
        print(rc, heavy)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip() == "2 []", proc.stderr
    assert proc.stderr == f"error: dataset file not found: {str(tmp_path / 'iris.cvs')!r}; did you mean " \
                          f"{str(tmp_path / 'iris.csv')!r}?\n"


@pytest.mark.parametrize("argv", [["evaluate", "missing.csv", "--learners", "lda"], ["recommend", "missing.arff"]])
def test_both_dataset_commands_check_the_file_early(capsys, argv):
    assert _error(capsys, argv) == f"error: dataset file not found: {argv[1]!r}"


def test_skipped_learners_carry_their_short_name():
    from dataclasses import replace

    from algorank.api import recommend

    rec = recommend("sklearn:iris", dry_run=True, strategy="ar:p=0")
    rec = replace(rec, skipped=({"learner": "SVC_rbf", "predicted_seconds": 3.0, "seconds_left": 1.0},))
    skipped = rec.to_dict()["skipped"]
    assert skipped == [{"learner": "SVC_rbf", "predicted_seconds": 3.0, "seconds_left": 1.0, "short": "svc-rbf"}]


def test_a_misspelt_target_gets_the_closest_column(capsys):
    err = _error(capsys, ["recommend", "sklearn:iris", "--target", "targt", "--dry-run"])
    assert "target 'targt' is not an attribute of dataset 'iris'; did you mean 'target'? attributes:" in err
