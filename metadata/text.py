"""Text that came from data, made safe to show and to name files with; plain-text tables.

Learner ids, dataset names and sources are data: a meta-data file written by someone else can
put anything in them.  Before any of it reaches a terminal, :func:`escape` shows control
characters (ESC, BEL, carriage returns, bidirectional overrides ...) as visible escapes, so a
name can never retitle a window, clear the screen or hide output.  Before any of it names a
file, :func:`safe_filename` keeps a short, portable, sanitised stem with a hash of the original,
so two different ids never share a file and no id is ever a path.  In a plot,
:func:`literal_text` shows it as written, never as matplotlib mathtext.

:func:`format_table` renders rows as aligned columns separated by at least two spaces, whatever
the width of a value: a column is as wide as its widest cell, so cells never run together.
"""

from __future__ import annotations

import hashlib
import logging
import re
import unicodedata
from typing import Iterable, Sequence

__all__ = ["escape", "terminal_text", "safe_filename", "format_table", "format_seconds", "EscapingFormatter",
           "escaping_handler", "literal_text"]

#: Characters shown as escapes: C0/C1 controls, DEL, and the Unicode format characters
#: (bidirectional overrides, zero-width joiners ...) that change how the rest of a line looks.
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\x1b": "\\x1b"}


def _escape_char(match: re.Match) -> str:
    ch = match.group(0)
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape(text) -> str:
    """``text`` as a string with every control or format character shown as an escape.

    Printable text (any script) is unchanged; ``"a\\x1b[2Jb"`` becomes ``"a\\\\x1b[2Jb"``.
    Backslashes are left alone, so escaping is for display only, not reversible.
    """
    s = str(text)
    return _UNSAFE.sub(_escape_char, s) if _UNSAFE.search(s) else s


def terminal_text(text) -> str:
    """Multi-line text for a terminal: like :func:`escape`, but newlines and tabs are kept.

    The last guard of every command's output: whatever a renderer forgot to escape, no control
    sequence from data reaches the terminal.
    """
    return "\n".join("\t".join(escape(part) for part in line.split("\t")) for line in str(text).split("\n"))


class EscapingFormatter(logging.Formatter):
    """A logging formatter whose records are one line with every control character escaped."""

    def format(self, record: logging.LogRecord) -> str:
        return escape(super().format(record))


def escaping_handler(stream) -> logging.Handler:
    """A stream handler writing ``LEVEL logger: message`` lines through :class:`EscapingFormatter`."""
    handler = logging.StreamHandler(stream)
    handler.setFormatter(EscapingFormatter("%(levelname)s %(name)s: %(message)s"))
    return handler


_FILE_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_filename(text, *, max_len: int = 80, suffix: str = "") -> str:
    """A file name made from ``text``: ASCII letters, digits, ``.``, ``_`` and ``-`` only.

    The stem keeps the readable part of ``text`` (other characters become ``_``), never starts with
    a dot, and is cut so the whole name stays within ``max_len`` characters.  When anything was
    changed or cut, 10 hex digits of the SHA-256 of ``text`` are appended, so different texts give
    different names.  ``suffix`` (e.g. ``".png"``) is appended as given.

    Parameters
    ----------
    text : object
        The data string (a learner id, a dataset name).
    max_len : int
        Longest name returned, ``suffix`` included (at least 24).
    suffix : str
        File extension or ending, trusted (written by algorank, not data).
    """
    if max_len < 24:
        raise ValueError(f"max_len must be at least 24, got {max_len}")
    raw = str(text)
    ascii_text = unicodedata.normalize("NFKD", raw).encode("ascii", "ignore").decode("ascii")
    stem = _FILE_UNSAFE.sub("_", ascii_text).strip("._-") or "x"
    room = max_len - len(suffix)
    if stem == raw and len(stem) <= room:
        return stem + suffix
    digest = hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    stem = stem[: max(1, room - 11)].rstrip("._-") or "x"
    return f"{stem}-{digest}{suffix}"


def format_table(header: Sequence[str], rows: Iterable[Sequence], *, align: str | None = None,
                 gap: int = 2, indent: str = "") -> str:
    """Rows as a plain-text table: every column as wide as its widest cell, ``gap`` spaces between.

    Parameters
    ----------
    header : sequence of str
        Column titles.
    rows : iterable of sequences
        One sequence of cells per row, as many as ``header``; cells are shown with ``str`` and
        escaped (:func:`escape`), so data can never break the layout or reach the terminal raw.
    align : str, optional
        One character per column, ``"l"`` (left) or ``"r"`` (right).  By default the first
        column is left-aligned and the others right-aligned.
    gap : int
        Spaces between columns (at least 1).
    indent : str
        Put before every line.

    Returns
    -------
    str
        The lines joined by newlines (no trailing newline).
    """
    header = [escape(h) for h in header]
    body = [[escape("" if c is None else c) for c in row] for row in rows]
    n = len(header)
    for i, row in enumerate(body):
        if len(row) != n:
            raise ValueError(f"row {i} has {len(row)} cells, the header {n}")
    if align is None:
        align = "l" + "r" * (n - 1)
    if len(align) != n or set(align) - {"l", "r"}:
        raise ValueError(f"align must be {n} characters from 'l' and 'r', got {align!r}")
    if gap < 1:
        raise ValueError(f"gap must be at least 1, got {gap}")
    widths = [max([len(header[j]), *(len(r[j]) for r in body)]) for j in range(n)]
    sep = " " * gap

    def line(cells):
        parts = [c.ljust(w) if a == "l" else c.rjust(w) for c, w, a in zip(cells, widths, align)]
        return (indent + sep.join(parts)).rstrip()

    return "\n".join([line(header), *(line(r) for r in body)])


def format_seconds(s: float) -> str:
    """Seconds for people: ``"350 ms"``, ``"4.2 s"``, ``"3.5 min"``, ``"2.1 h"``; ``"n/a"`` for NaN."""
    s = float(s)
    if s != s:  # NaN
        return "n/a"
    for below, unit, per in ((1, "ms", 1e-3), (120, "s", 1), (7200, "min", 60)):
        if s < below:
            return f"{s / per:.3g} {unit}"
    return f"{s / 3600:.3g} h"


def literal_text(ax) -> None:
    """Show the title, axis labels, texts and legend of ``ax`` as written, never as matplotlib mathtext.

    Dataset names, learner ids and strategy names come from data: ``prices_$5_vs_$10.csv`` holds two
    dollar signs, which matplotlib would parse as a formula (and fail on when drawing).  Call it after
    the texts are made; tick labels (numbers we format) are left alone.
    """
    texts = [ax.title, ax.xaxis.label, ax.yaxis.label, *ax.texts]
    legend = ax.get_legend()
    if legend is not None:
        texts += [*legend.get_texts(), legend.get_title()]
    for text in texts:
        text.set_parse_math(False)
