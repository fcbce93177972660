"""What happens to each feature column before learning: ids and free text dropped, dates expanded.

A table read from a file often holds columns no classifier can learn from as they are: a row
id, a free-text comment, a date.  Read as categories they would only add noise (every row its
own level, capped at the most frequent levels by the preprocessing).  :func:`plan_columns`
decides, column by column and by the rules below, and :func:`apply_plan` carries the decision
out, on the data and (through :class:`ColumnPlanTransformer`) on the data a refitted model
predicts on.

Rules, in this order, for every feature column (the target is never touched):

1. **named by the user**: ``drop_columns`` are dropped (``dropped-user``); ``keep_columns`` are
   kept exactly as read (``kept-user``: no rule below applies to them, so a kept date or text
   column is a category column).  A name that is not a column is an error naming it.
2. **date** (``date-expanded``): a column of datetime type, or a text column where at least
   95 % of the non-missing values are ISO-like dates or timestamps (``2024-03-01``,
   ``2024/03/01``, ``2024-03-01 12:30``, ``2024-03-01T12:30:00Z``) that pandas parses, is replaced
   by the numeric columns ``<name>_year``, ``<name>_month``, ``<name>_dayofweek`` (Monday = 0)
   and ``<name>_ordinal`` (the proleptic Gregorian day number, :meth:`datetime.date.toordinal`),
   plus ``<name>_hour`` when some value has a time of day other than midnight.  Time-zone aware
   values are read in UTC; values that do not parse become missing.  A date column holding a
   single date carries nothing and is dropped instead (``dropped-constant-date``).
3. **free text** (``dropped-text``): a non-numeric column whose non-missing values are mostly
   distinct (at least half of them), mostly contain a space (at least half of them) and have a
   median length of at least 20 characters.  Text needs its own features (bag of words,
   embeddings); as a category every comment is its own level.
4. **id** (``dropped-id``): a non-float column with one distinct value per row (no missing
   value, at least :data:`MIN_ID_ROWS` (20) rows unless its name says id): a text or category
   column (``Instance_name``), or an integer column that is the row number (0, 1, 2, ... or
   1, 2, 3, ... in row order) or whose name says id.  A year or a lottery number that happens
   to be distinct on every row is kept.  In cross-validation the value of a test row is never
   in the training part, so nothing can be learnt from it.  Also
   a column *named* like an id (``id``, ``ID``, ``row_id``, ``customer_id``, ``customerId``,
   ``uuid``, ``index``) when at least half of its values are distinct: a key repeated on a few
   rows (``store_id`` with ten stores) is kept as a category.  Float columns are never ids:
   measurements are naturally distinct.
5. everything else is **kept** as read (``kept``).

A wide table has thousands of columns: the rules 2 and 3 first look at about 200 values spread
over a text column, with slack (80 % dates; 30 % spaced values, half the length), and test every
value only when that look passes.

A matrix of features given together with its labels (``X`` and ``y=``) is taken as the user's
own choice of columns: only ``keep_columns`` / ``drop_columns`` apply to it, not the rules 2-4.
"""

from __future__ import annotations

import difflib
import logging
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin

from algorank.metadata.errors import InputError
from algorank.metadata.text import escape

__all__ = ["ColumnDecision", "plan_columns", "apply_plan", "plan_changes", "log_plan", "ColumnPlanTransformer",
           "ACTIONS", "DATE_SHARE", "TEXT_MIN_LENGTH", "MIN_ID_ROWS", "is_id_name"]

logger = logging.getLogger(__name__)

#: What can happen to a column (the ``action`` of a :class:`ColumnDecision`).
ACTIONS = ("kept", "kept-user", "dropped-user", "dropped-id", "dropped-text", "date-expanded",
           "dropped-constant-date")
#: Fewest rows for a column with one distinct value per row to be an id without a name saying so (on a few rows,
#: distinct values are no evidence).
MIN_ID_ROWS = 20
#: Share of a text column's non-missing values that must be ISO-like dates for it to be a date column.
DATE_SHARE = 0.95
#: Median length in characters from which a mostly distinct column of mostly spaced values is free text.
TEXT_MIN_LENGTH = 20

_SPACED_RE = re.compile(r"\S\s+\S")
_EPOCH_ORDINAL = 719163.0  # datetime.date(1970, 1, 1).toordinal()
_DATE_RE = re.compile(r"^\d{4}[-/]\d{1,2}[-/]\d{1,2}"
                      r"(?:[ T]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?\s*(?:Z|[+-]\d{2}:?\d{2})?)?$")
_ID_NAME_RE = re.compile(r"^(?:id|uuid|guid|index|idx|key|row|rowid|row_?num(?:ber)?)$"
                         r"|(?:^|[_\-\s.])(?:id|uuid|guid)$"   # customer_id, customer-id, customer id
                         r"|[a-z0-9]Id$|[a-z0-9]ID$")           # customerId, customerID


@dataclass(frozen=True)
class ColumnDecision:
    """What was done to one feature column.

    Attributes
    ----------
    column : str
        The column as read.
    action : str
        One of :data:`ACTIONS`.
    reason : str
        Why, in words (empty for ``kept``).
    new_columns : tuple of str
        The columns that replace it (``date-expanded``); ``(column,)`` when kept, ``()`` when dropped.
    """

    column: str
    action: str
    reason: str = ""
    new_columns: tuple = ()

    def to_dict(self) -> dict:
        return {"column": self.column, "action": self.action, "reason": self.reason,
                "new_columns": list(self.new_columns)}


# ------------------------------------------------------------------ rules
def is_id_name(name: str) -> bool:
    """Whether a column's name says it is an id (``id``, ``row_id``, ``customerId``, ``uuid``, ...)."""
    return bool(_ID_NAME_RE.search(str(name).strip())) or str(name).strip().lower() in ("id", "uuid")


def _text_values(s: pd.Series) -> pd.Series | None:
    """The non-missing values of a non-numeric column as strings (None for a numeric or bool column)."""
    numeric = pd.api.types.is_numeric_dtype(s) and not isinstance(s.dtype, pd.CategoricalDtype)
    if pd.api.types.is_bool_dtype(s) or numeric:
        return None
    values = s[s.notna()]
    if isinstance(s.dtype, pd.CategoricalDtype):
        values = values.astype(object)
    return values.map(lambda v: v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v))


def _date_values(s: pd.Series) -> pd.Series | None:
    """The column parsed as UTC-naive timestamps when it is a date column (rule 2), else None."""
    if pd.api.types.is_datetime64_any_dtype(s):
        parsed = pd.to_datetime(s, errors="coerce", utc=True)
        return parsed.dt.tz_localize(None)
    text = _text_values(s)
    if text is None or len(text) == 0:
        return None
    text = text.str.strip()
    iso = text.str.match(_DATE_RE)
    if iso.mean() < DATE_SHARE:
        return None
    parsed = _parse_dates(s)
    if parsed.notna().sum() < DATE_SHARE * len(text):
        return None
    return parsed


def _is_text(text: pd.Series) -> bool:
    n = len(text)
    if n == 0:
        return False
    distinct = text.nunique() / n
    spaced = text.str.contains(r"\S\s+\S", regex=True).mean()
    return distinct >= 0.5 and spaced >= 0.5 and float(text.str.len().median()) >= TEXT_MIN_LENGTH


def _id_reason(name: str, s: pd.Series, n_rows: int) -> str | None:
    """Why ``s`` is an id column (rule 4), or None.  Cheap tests first: a wide table has thousands of columns."""
    if pd.api.types.is_float_dtype(s) or pd.api.types.is_bool_dtype(s) or n_rows < 3:
        return None
    named = is_id_name(name)
    if pd.api.types.is_integer_dtype(s):
        if s.isna().any():
            return None
        v = s.to_numpy(dtype=np.int64)
        consecutive = int(v[0]) in (0, 1) and bool(np.all(np.diff(v) == 1))  # 0, 1, 2, ... or 1, 2, 3, ... in row order
        if not (named or (consecutive and n_rows >= MIN_ID_ROWS)):
            return None
        distinct = int(len(np.unique(v)))
        if distinct == n_rows:
            if consecutive and n_rows >= MIN_ID_ROWS:
                return f"the row number ({int(v[0])} to {int(v[-1])} in row order)"
            return f"named like an id, one distinct value per row ({n_rows})"
        if named and distinct >= 0.5 * n_rows:
            return f"named like an id, {distinct} distinct values in {n_rows} rows"
        return None
    if isinstance(s.dtype, pd.CategoricalDtype) and len(s.cat.categories) < (0.5 * n_rows if named else n_rows):
        return None
    values = s[s.notna()]
    if len(values) == 0:
        return None
    distinct = int(values.astype(object).nunique())
    if distinct == n_rows and len(values) == n_rows and (named or n_rows >= MIN_ID_ROWS):
        return f"one distinct value per row ({n_rows}): a value never seen in training cannot be learnt from"
    if named and distinct >= 0.5 * len(values):
        return f"named like an id, {distinct} distinct values in {len(values)} rows"
    return None


def _date_columns(name: str, parsed: pd.Series) -> dict:
    """The numeric columns replacing a date column (rule 2)."""
    days = (parsed.dt.normalize() - pd.Timestamp("1970-01-01")).dt.days.astype(float)
    return {
        f"{name}_year": parsed.dt.year.astype(float),
        f"{name}_month": parsed.dt.month.astype(float),
        f"{name}_dayofweek": parsed.dt.day_of_week.astype(float),
        f"{name}_ordinal": days + _EPOCH_ORDINAL,  # datetime.date.toordinal(): 1970-01-01 is day 719163
    }


def _has_time(parsed: pd.Series) -> bool:
    p = parsed[parsed.notna()]
    return bool(len(p)) and bool((p != p.dt.normalize()).any())


# ------------------------------------------------------------------ the plan
def resolve_names(names, columns, *, option: str, what: str = "column") -> list[str]:
    """``names`` as columns of ``columns`` (exact, else case-insensitive when unique); an unknown one is an error."""
    out = []
    columns = [str(c) for c in columns]
    for n in names or ():
        n = str(n)
        if n in columns:
            out.append(n)
            continue
        folded = [c for c in columns if c.lower() == n.lower()]
        if len(folded) == 1:
            out.append(folded[0])
            continue
        close = difflib.get_close_matches(n, columns, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        shown = ", ".join(columns[:8]) + (f" and {len(columns) - 8} more" if len(columns) > 8 else "")
        raise InputError(f"{option}: no {what} named {escape(n)!r}{hint} (columns: {escape(shown)})")
    return out


def plan_columns(frame: pd.DataFrame, *, target: str | None = None, keep_columns=(), drop_columns=(),
                 rules: bool = True) -> tuple:
    """Decide what happens to each feature column of ``frame`` (the rules of the module docstring).

    Parameters
    ----------
    frame : DataFrame
        The table as read (features, and the target column ``target`` when given).
    target : str, optional
        The target column: never touched, never named in ``drop_columns``.
    keep_columns, drop_columns : sequence of str
        Columns kept as read, columns dropped (names as in the file; case-insensitive when unique).
    rules : bool
        Apply the automatic rules (dates, free text, ids); False: only the user's choices, and the expansion of
        a column of a datetime dtype (a timestamp is no feature any estimator fits).

    Returns
    -------
    tuple of ColumnDecision
        One per feature column, in the frame's order.

    Raises
    ------
    InputError
        A named column that does not exist, a column both kept and dropped, or the target dropped.
    """
    features = [str(c) for c in frame.columns if str(c) != target]
    keep = resolve_names(keep_columns, frame.columns, option="keep_columns")
    drop = resolve_names(drop_columns, frame.columns, option="drop_columns")
    both = sorted(set(keep) & set(drop))
    if both:
        raise InputError(f"column(s) {escape(', '.join(both))} are both in keep_columns and drop_columns")
    if target is not None and target in drop:
        raise InputError(f"drop_columns names the target {escape(target)!r}; choose another target to drop it")
    n_rows = len(frame)
    out = []
    dtypes = frame.dtypes
    kinds = {dt: _kind(dt) for dt in set(dtypes)}  # decided once per distinct dtype (tables with 1000s of columns)
    plain = _plain_columns(frame, [c for c in features if kinds[dtypes[c]] == "int"], n_rows) if rules else set()
    for c in features:
        kind = kinds[dtypes[c]]
        if c in drop:
            out.append(ColumnDecision(c, "dropped-user", "named in drop_columns"))
            continue
        if c in keep:
            out.append(ColumnDecision(c, "kept-user", "named in keep_columns", (c,)))
            continue
        # floats, booleans; integers that cannot be ids; without the rules every column but a datetime one, which
        # no estimator fits as it is (its expansion is a conversion of its type, not a guess about its meaning)
        if (not rules and kind != "date") or kind == "number" or c in plain:
            out.append(ColumnDecision(c, "kept", "", (c,)))
            continue
        s = frame[c]
        sample = _sample(s) if kind == "text" else []
        parsed = _date_values(s) if kind == "date" or (kind == "text" and _may_be_dates(sample)) else None
        if parsed is not None:
            if parsed.nunique() <= 1:
                out.append(ColumnDecision(c, "dropped-constant-date", "a date column holding a single date"))
            else:
                new = tuple(_date_columns(c, parsed)) + ((f"{c}_hour",) if _has_time(parsed) else ())
                out.append(ColumnDecision(c, "date-expanded", "dates or timestamps: year, month, day of week, "
                                          "ordinal day" + (", hour" if len(new) > 4 else ""), new))
            continue
        text = _text_values(s) if kind == "text" and _may_be_text(sample) else None
        if text is not None and _is_text(text):
            out.append(ColumnDecision(c, "dropped-text", f"free text ({text.nunique()} distinct values, median "
                                      f"{int(text.str.len().median())} characters); keep_columns keeps it as a "
                                      "category"))
            continue
        unnamed_repeats = kind == "text" and len(set(sample)) < len(sample) and not is_id_name(c)
        reason = None if unnamed_repeats else _id_reason(c, s, n_rows)  # a repeated value: not one per row
        if reason is not None:
            out.append(ColumnDecision(c, "dropped-id", reason))
            continue
        out.append(ColumnDecision(c, "kept", "", (c,)))
    return tuple(out)


def _kind(dtype) -> str:
    """``number`` (float, bool: never a date, text or id), ``int``, ``date`` (datetime) or ``text`` (anything else)."""
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "date"
    if pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_float_dtype(dtype) or pd.api.types.is_complex_dtype(dtype):
        return "number"
    if pd.api.types.is_integer_dtype(dtype):
        return "int"
    return "text"


def _plain_columns(frame: pd.DataFrame, columns: list, n_rows: int) -> set:
    """The integer ``columns`` that cannot be ids (rule 4), found in one pass over their block: no id-like name, and
    values that are not the row number (or too few rows for that to mean anything)."""
    unnamed = [c for c in columns if not is_id_name(c)]
    if not unnamed:
        return set()
    if n_rows < MIN_ID_ROWS:
        return set(unnamed)
    block = frame[unnamed]
    if any(str(dt) != str(dt).lower() for dt in block.dtypes):  # nullable integers (Int64): one by one
        return set()
    values = block.to_numpy(dtype=np.int64)
    counter = np.isin(values[0], (0, 1)) & (values.max(axis=0) - values.min(axis=0) == n_rows - 1)
    return {c for c, k in zip(unnamed, counter) if not k}  # the candidates are checked one by one


def _sample(s: pd.Series, size: int = 200) -> list:
    """About ``size`` non-missing values spread over the whole column, as stripped strings (a cheap first look)."""
    if isinstance(s.dtype, pd.CategoricalDtype):  # its distinct values: a repeated category is no text
        if len(s.cat.categories) < 0.5 * s.notna().sum():
            return ["x"] * 2  # no date, no text, a repeated value
        values = s.cat.categories.to_numpy(dtype=object)
    else:
        values = s.to_numpy(dtype=object)
    step = max(1, len(values) // size)
    return [str(v).strip() for v in values[::step] if not (v is None or (isinstance(v, float) and v != v)
                                                           or v is pd.NA or v is pd.NaT)]


def _may_be_dates(sample: list) -> bool:
    """A first look at a sample (rule 2's full test follows): most sampled values are ISO-like dates."""
    return bool(sample) and sum(bool(_DATE_RE.match(v)) for v in sample) >= 0.8 * len(sample)


def _may_be_text(sample: list) -> bool:
    """A first look at a sample (rule 3's full test follows, on every value): spaced, long values."""
    if not sample:
        return False
    spaced = sum(bool(_SPACED_RE.search(v)) for v in sample) / len(sample)
    return spaced >= 0.3 and float(np.median([len(v) for v in sample])) >= 0.5 * TEXT_MIN_LENGTH


def plan_changes(plan) -> bool:
    """Whether ``plan`` drops or replaces any column."""
    return any(d.action not in ("kept", "kept-user") for d in plan)


def apply_plan(frame: pd.DataFrame, plan) -> pd.DataFrame:
    """``frame`` with the plan carried out (columns not in the plan, e.g. the target, are kept where they are)."""
    if not plan_changes(plan):
        return frame
    decided = {d.column: d for d in plan}
    parts: dict = {}
    for c in frame.columns:
        d = decided.get(str(c))
        if d is None or d.action in ("kept", "kept-user"):
            parts[c] = frame[c]
        elif d.action == "date-expanded":
            parsed = _parse_dates(frame[c])
            cols = _date_columns(str(c), parsed)
            if f"{c}_hour" in d.new_columns:
                cols[f"{c}_hour"] = parsed.dt.hour.astype(float)
            for name in d.new_columns:
                parts[name] = cols[name]
    return pd.DataFrame(parts, index=frame.index)


def _parse_dates(s: pd.Series) -> pd.Series:
    if pd.api.types.is_datetime64_any_dtype(s):
        return pd.to_datetime(s, errors="coerce", utc=True).dt.tz_localize(None)
    text = [None if pd.isna(v) else str(v).strip() for v in s.astype(object)]
    iso = pd.Series([v.replace("/", "-") if v is not None and _DATE_RE.match(v) else None for v in text],
                    index=s.index, dtype=object)
    return pd.to_datetime(iso, errors="coerce", utc=True, format="ISO8601").dt.tz_localize(None)


def log_plan(plan, name: str) -> None:
    """One warning naming the columns dropped or expanded (nothing when every column is kept)."""
    changed = [d for d in plan if d.action not in ("kept", "kept-user")]
    if not changed:
        return
    groups: dict = {}
    for d in changed:
        groups.setdefault(d.action, []).append(d.column)
    words = {"dropped-id": "dropped as id", "dropped-text": "dropped as free text (keep_columns keeps it)",
             "dropped-user": "dropped as asked", "date-expanded": "dates expanded into year, month, day of week and "
             "ordinal day", "dropped-constant-date": "dropped as a single date"}
    text = "; ".join(f"{words[a]}: {', '.join(escape(c) for c in cols[:5])}" + (" ..." if len(cols) > 5 else "")
                     for a, cols in groups.items())
    logger.warning("dataset %s: column(s) %s", escape(name), text)


class ColumnPlanTransformer(TransformerMixin, BaseEstimator):
    """Carry a column plan out on new raw features (the first step of a refitted model).

    Parameters
    ----------
    plan : tuple of ColumnDecision
        What :func:`plan_columns` decided on the training data.
    """

    def __init__(self, plan=()):
        self.plan = plan

    def fit(self, X, y=None):
        self.columns_in_ = [d.column for d in self.plan]
        self.n_features_in_ = len(self.columns_in_)
        return self

    def transform(self, X):
        if isinstance(X, pd.DataFrame):
            frame = X.copy()
            frame.columns = [str(c) for c in frame.columns]
        else:
            arr = np.asarray(X, dtype=object)
            if arr.ndim != 2 or arr.shape[1] != len(self.columns_in_):
                raise ValueError(f"X has {arr.shape[-1] if arr.ndim else 0} features, but the model was fitted on "
                                 f"{len(self.columns_in_)} columns")
            frame = pd.DataFrame(arr, columns=self.columns_in_)
        missing = [c for c in self.columns_in_ if c not in frame.columns
                   and next(d for d in self.plan if d.column == c).action not in ("dropped-user", "dropped-id",
                                                                                    "dropped-text",
                                                                                    "dropped-constant-date")]
        if missing:
            raise ValueError(f"X lacks the column(s) the model was fitted on: {missing[:5]}")
        present = [d for d in self.plan if d.column in frame.columns]
        return apply_plan(frame, present)
