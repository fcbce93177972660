"""Column types: id, free-text and date columns of a data file, and the user's keep/drop choices."""

import datetime as dt
import json

import numpy as np
import pandas as pd
import pytest

from algorank import cli
from algorank.evaluation.cv.columns import ColumnPlanTransformer, is_id_name, plan_columns
from algorank.evaluation.cv.datasets import as_dataset, load_dataset
from algorank.metadata.errors import InputError

N = 120


def _frame(n=N, seed=0):
    rng = np.random.default_rng(seed)
    start = dt.date(2021, 1, 4)  # a Monday
    return pd.DataFrame({
        "id": np.arange(1, n + 1),
        "signup": [(start + dt.timedelta(days=3 * i)).isoformat() for i in range(n)],
        "comment": [f"order {i} arrived {'late' if i % 3 else 'on time'} and the box was {'fine' if i % 2 else 'torn'}"
                    for i in range(n)],
        "age": rng.integers(18, 80, n),
        "score": rng.normal(size=n),
        "plan": rng.choice(["basic", "pro", "team"], n),
        "class": rng.choice(["stay", "leave"], n),
    })


@pytest.fixture
def csv(tmp_path):
    path = tmp_path / "customers.csv"
    _frame().to_csv(path, index=False)
    return path


def test_id_date_and_text_columns_of_a_csv_are_read_as_documented(csv, caplog):
    with caplog.at_level("WARNING"):
        d = load_dataset(str(csv))
    actions = {c["column"]: c["action"] for c in d.columns_dict()}
    assert actions == {"id": "dropped-id", "signup": "date-expanded", "comment": "dropped-text", "age": "kept",
                       "score": "kept", "plan": "kept"}
    assert list(d.X.columns) == ["signup_year", "signup_month", "signup_dayofweek", "signup_ordinal", "age", "score",
                                 "plan"]
    # hand-computed: row 0 is 2021-01-04, a Monday; row 10 is 30 days later, 2021-02-03, a Wednesday
    first, tenth = d.X.iloc[0], d.X.iloc[10]
    assert (first["signup_year"], first["signup_month"], first["signup_dayofweek"]) == (2021, 1, 0)
    assert first["signup_ordinal"] == dt.date(2021, 1, 4).toordinal()
    assert (tenth["signup_month"], tenth["signup_dayofweek"]) == (2, 2)
    assert tenth["signup_ordinal"] - first["signup_ordinal"] == 30
    assert d.meta_features["n_features"] == 7 and d.meta_features["n_nominal_features"] == 1
    assert "dropped as id: id" in caplog.text and "free text" in caplog.text and "signup" in caplog.text


def test_splice_instance_name_a_unique_string_per_row_is_dropped(tmp_path):
    # splice's first attribute names each instance (one value per row); as a category it is noise
    rows = [f"INST-{i:05d},{'ACGT'[i % 4]},{'GT'[i % 2]},{'EI' if i % 3 else 'N'}" for i in range(60)]
    path = tmp_path / "splice.arff"
    path.write_text("@relation splice\n@attribute Instance_name string\n@attribute a1 {A,C,G,T}\n"
                    "@attribute a2 {G,T}\n@attribute Class {EI,N}\n@data\n" + "\n".join(rows) + "\n")
    d = load_dataset(str(path))
    assert "Instance_name" not in d.X.columns and list(d.X.columns) == ["a1", "a2"]
    assert d.columns[0].action == "dropped-id" and "one distinct value per row (60)" in d.columns[0].reason


def test_keep_and_drop_columns_give_the_user_control(csv):
    d = load_dataset(str(csv), keep_columns=["comment"], drop_columns=["AGE"])  # names fold case when unique
    actions = {c.column: c.action for c in d.columns}
    assert actions["comment"] == "kept-user" and actions["age"] == "dropped-user"
    assert isinstance(d.X["comment"].dtype, pd.CategoricalDtype) and "age" not in d.X.columns
    with pytest.raises(InputError, match=r"drop_columns: no column named 'agee'; did you mean 'age'\?"):
        load_dataset(str(csv), drop_columns=["agee"])
    with pytest.raises(InputError, match="keep_columns: no column named 'nope'"):
        load_dataset(str(csv), keep_columns=["nope"])
    with pytest.raises(InputError, match="both in keep_columns and drop_columns"):
        load_dataset(str(csv), keep_columns=["age"], drop_columns=["age"])
    with pytest.raises(InputError, match="names the target"):
        load_dataset(str(csv), drop_columns=["class"])


@pytest.mark.parametrize("name, expected", [("id", True), ("ID", True), ("row_id", True), ("customerId", True),
                                            ("customer id", True), ("uuid", True), ("index", True),
                                            ("idle_time", False), ("valid", False), ("paid", False), ("width", False)])
def test_id_names(name, expected):
    assert is_id_name(name) is expected


def test_id_rule_keeps_measurements_and_repeated_keys():
    n = 100
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({
        "store_id": rng.integers(0, 10, n),  # a key repeated on many rows: a category, kept
        "customer_id": np.r_[np.arange(80), np.arange(20)],  # named id, 80 % distinct: dropped
        "income": rng.permutation(np.arange(n) * 37 + 1000),  # distinct whole numbers, not consecutive: kept
        "weight": rng.normal(size=n),  # floats are never ids
        "code": [f"c{i}" for i in range(n)],  # a string per row: dropped
        "n": np.arange(n) + 1,  # the row number: dropped
        "year": np.arange(n) + 1950,  # distinct, consecutive, but not the row number: kept
        "pick": rng.permutation(n) + 1,  # a permutation of 1..n (a draft number): kept
    })
    actions = {d.column: d.action for d in plan_columns(frame)}
    assert actions == {"store_id": "kept", "customer_id": "dropped-id", "income": "kept", "weight": "kept",
                       "code": "dropped-id", "n": "dropped-id", "year": "kept", "pick": "kept"}


def test_dates_with_times_get_an_hour_and_a_single_date_is_dropped():
    frame = pd.DataFrame({"at": ["2024-03-01T12:30:00Z", "2024-03-02 08:00", "2024/03/03", None],
                          "day": ["2024-03-01"] * 4, "x": [1.0, 2.0, 3.0, 4.0]})
    plan = {d.column: d for d in plan_columns(frame)}
    assert plan["at"].action == "date-expanded" and plan["at"].new_columns[-1] == "at_hour"
    assert plan["day"].action == "dropped-constant-date"
    from algorank.evaluation.cv.columns import apply_plan

    out = apply_plan(frame, tuple(plan.values()))
    assert out["at_hour"].tolist()[:3] == [12.0, 8.0, 0.0] and np.isnan(out["at_hour"].iloc[3])
    assert out["at_dayofweek"].tolist()[:3] == [4.0, 5.0, 6.0]  # Friday, Saturday, Sunday
    assert "day" not in out.columns and list(out.columns)[-1] == "x"
    # a text column with a few non-dates in it is not a date column
    mixed = pd.DataFrame({"d": ["2024-03-01"] * 8 + ["soon", "later"]})
    assert plan_columns(mixed)[0].action == "kept"


def test_features_given_with_y_keep_their_columns():
    f = _frame()
    d = as_dataset(f.drop(columns="class"), y=f["class"])
    assert "id" in d.X.columns and "comment" in d.X.columns and {c.action for c in d.columns} == {"kept"}
    d = as_dataset(f.drop(columns="class"), y=f["class"], drop_columns=["comment"])
    assert "comment" not in d.X.columns


def test_a_datetime_column_given_with_y_is_expanded_not_taken_as_categories():
    """A datetime64 feature given with ``y=`` used to become a nominal column of one level per day (300 levels
    here, one-hot encoded); it is expanded as in a table holding the target, while a date written as text stays."""
    when = pd.date_range("2021-01-04", periods=300, freq="D")
    X = pd.DataFrame({"when": when, "as_text": when.strftime("%Y-%m-%d"), "x": np.arange(300) % 7 + 0.5})
    y = np.where(np.arange(300) % 2, "a", "b")
    d = as_dataset(X, y=y)
    actions = {c.column: c.action for c in d.columns}
    assert actions == {"when": "date-expanded", "as_text": "kept", "x": "kept"}
    assert list(d.X.columns)[:4] == ["when_year", "when_month", "when_dayofweek", "when_ordinal"]
    assert (d.X["when_year"].iloc[0], d.X["when_month"].iloc[0], d.X["when_dayofweek"].iloc[0]) == (2021, 1, 0)
    assert d.X["when_ordinal"].iloc[30] - d.X["when_ordinal"].iloc[0] == 30
    assert d.meta_features["n_nominal_features"] == 1  # as_text, the user's choice
    same = as_dataset(X.drop(columns="as_text").assign(target=y), target="target")
    pd.testing.assert_frame_equal(d.X.drop(columns="as_text"), same.X)


def test_the_refitted_model_takes_the_columns_as_read(csv):
    from algorank.recommender.live.recommend import refit_best

    d = load_dataset(str(csv))
    model = refit_best(d, "sklearn.discriminant_analysis.LinearDiscriminantAnalysis")
    raw = pd.read_csv(csv).drop(columns="class")
    assert isinstance(model.steps[0][1], ColumnPlanTransformer)
    assert list(model.predict(raw.head(7))) == list(model.steps[-1][1].predict(
        model[1:-1].transform(d.X.head(7))))  # the same as the model on the columns it was fitted on


def test_recommend_json_and_report_list_what_was_done_to_each_column(csv, capsys):
    assert cli.main(["recommend", str(csv), "--dry-run", "--json", "--drop-columns", "plan"]) == 0
    out = json.loads(capsys.readouterr().out)
    actions = {c["column"]: c["action"] for c in out["columns"]}
    assert actions == {"id": "dropped-id", "signup": "date-expanded", "comment": "dropped-text", "age": "kept",
                       "score": "kept", "plan": "dropped-user"}
    assert out["task"] == "classification" and out["dataset_info"]["n_features"] == 6
    assert cli.main(["recommend", str(csv), "--dry-run", "--keep-columns", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --keep-columns: no column named 'nope'") and err.count("\n") == 1

    from algorank.api import recommend
    from algorank.report import recommend_report

    rec = recommend(str(csv), dry_run=True, strategy="ar:p=0")
    section = next(s for s in recommend_report(rec).sections if s.title == "The columns")
    assert section.text[0] == "Task: classification (target 'class' is nominal)."
    assert [r[:2] for r in section.tables[0].rows] == [["id", "dropped-id"], ["signup", "date-expanded"],
                                                      ["comment", "dropped-text"]]


def test_the_refit_keeps_the_learners_warnings_off_stderr(caplog):
    """The live tests silence a learner's warnings; the refit of the chosen learner printed them raw (an MLP that
    did not converge wrote a ConvergenceWarning with its source line under the results)."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    from algorank.recommender.live.recommend import refit_best

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(100, 3)), columns=["a", "b", "c"])
    y = np.where(rng.random(100) > 0.5, "p", "q")  # noise: the solver stops at its iteration limit
    data = as_dataset(X, y=y)
    with warnings.catch_warnings(record=True) as caught, caplog.at_level("INFO"):
        warnings.simplefilter("always")
        model = refit_best(data, "sklearn.neural_network.MLPClassifier")
    assert not [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert "refitting sklearn.neural_network.MLPClassifier on all the data: 1 warning(s) from the learner, the first: " \
           "ConvergenceWarning: Stochastic Optimizer: Maximum iterations (200) reached" in caplog.text
    assert set(model.predict(X)) <= {"p", "q"}
