"""Text files as users give them: the encoding read from the bytes, the header's names checked.

Every reader of a user's text file (a dataset CSV or ARFF, a runs CSV, an ASlib scenario) asks
:func:`text_encoding` first:

* a byte order mark names the encoding (UTF-8, UTF-16 or UTF-32, either byte order);
* without one, a file whose first bytes hold NUL bytes at every other position (the high bytes of
  ASCII characters) is UTF-16, little- or big-endian by where the NULs are; any other NUL byte
  means the file is not text in an encoding algorank reads, and it is refused;
* anything else is UTF-8 (a file that does not decode is refused by :func:`decode_error`).

A file compressed with gzip, bzip2, xz or zip (``data.csv.gz``) is read as the text it holds (:func:`decompress`).
A CSV file whose header holds no comma but semicolons or tabs (or runs of blanks), and whose first lines all split
into as many fields, has those as its separator; with semicolons, numbers written with a decimal comma (``3,14``, and no ``3.14``
anywhere in those lines) are read as numbers (:func:`csv_dialect`: the convention of spreadsheets in locales that
write decimal commas).  Anything else is read as comma-separated.

A column name that occurs twice in a header is an error naming it (:func:`check_unique_names`):
readers that rename the second copy (pandas calls it ``class.1``) would silently turn a second
target column into a feature.
"""

from __future__ import annotations

import codecs
import os
from collections import Counter
from typing import Sequence

from .errors import InputError
from .text import escape

__all__ = ["text_encoding", "decode_error", "check_unique_names", "header_names", "COMPRESSIONS", "decompress",
           "csv_dialect", "WHITESPACE"]

#: Bytes looked at to find the encoding.
_SAMPLE = 1 << 16
#: Byte order marks, longest first (UTF-32 LE's starts with UTF-16 LE's).
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def text_encoding(path: str | os.PathLike | bytes, *, what: str = "file", label: str | None = None) -> str:
    """The encoding of the text file ``path``, from its byte order mark or its NUL bytes.

    Parameters
    ----------
    path : path-like or bytes
        The file, or its first bytes (a decompressed file's).
    what : str
        What the file is, for the error message (``"dataset file"``).
    label : str, optional
        The name the error message gives the file (default ``path``; needed for bytes).

    Returns
    -------
    str
        A Python codec name: ``utf-8``, ``utf-8-sig``, ``utf-16``, ``utf-16-le``, ``utf-16-be`` or
        ``utf-32`` (the ``-sig``/BOM codecs skip the mark).

    Raises
    ------
    InputError
        The file holds NUL bytes in no UTF-16 pattern (a binary file, or an encoding such as
        UTF-32 without a byte order mark).
    """
    if isinstance(path, (bytes, bytearray)):
        head = bytes(path[:_SAMPLE])
    else:
        with open(path, "rb") as fh:
            head = fh.read(_SAMPLE)
    shown = str(path) if label is None else label
    for bom, codec in _BOMS:
        if head.startswith(bom):
            return codec
    if b"\x00" not in head:
        return "utf-8"
    even, odd = head[0::2], head[1::2]
    for codec, zeros, other in (("utf-16-le", odd, even), ("utf-16-be", even, odd)):
        if zeros and zeros.count(0) >= 0.3 * len(zeros) and other.count(0) <= 0.01 * len(other):
            try:
                text = codecs.getincrementaldecoder(codec)().decode(head, final=False)
            except UnicodeDecodeError:
                continue
            if "\x00" not in text:
                return codec
    raise InputError(f"{what} {escape(shown)!r} holds NUL bytes: not UTF-8 or UTF-16 text (a binary file, or "
                     f"another encoding: save it as UTF-8)")


def decode_error(path: str | os.PathLike, exc: UnicodeError, encoding: str, *, what: str = "file") -> InputError:
    """One-line error for a file that does not decode in ``encoding``."""
    where = ""
    if isinstance(exc, UnicodeDecodeError) and exc.start < len(exc.object):
        where = f" (a byte 0x{exc.object[exc.start]:02x})"  # no offset: readers decode a block at a time
    return InputError(f"{what} {escape(str(path))!r} is not {encoding.upper().replace('-SIG', '')} text{where}: "
                      f"save it as UTF-8")


def check_unique_names(names: Sequence, *, what: str) -> None:
    """Refuse a header in which a column name occurs more than once, naming the names and their columns.

    Empty names are not compared (pandas names such a column ``Unnamed: N``).

    Raises
    ------
    InputError
        ``"<what> has duplicated column names: 'class' (columns 5 and 6)"``; columns count from 1.
    """
    names = [str(n) for n in names]
    counts = Counter(n for n in names if n.strip())  # nameless columns: the reader names each its own way
    dups = [n for n in counts if counts[n] > 1]
    if not dups:
        return
    parts = []
    for n in dups[:5]:
        where = [str(i + 1) for i, m in enumerate(names) if m == n]
        parts.append(f"{escape(n)!r} (columns {', '.join(where[:-1])} and {where[-1]})")
    more = f" and {len(dups) - 5} more" if len(dups) > 5 else ""
    raise InputError(f"{what} has duplicated column names: {'; '.join(parts)}{more}: rename them, so that no "
                     "column is taken for another")


def header_names(path, *, sep: str, encoding: str) -> list[str]:
    """The header of a CSV file (a path or a fresh binary buffer) as written (no renaming of repeated names; an
    empty name is ``""``)."""
    import pandas as pd

    first = pd.read_csv(path, sep=sep, header=None, nrows=1, dtype=str, keep_default_na=False,
                        skipinitialspace=True, encoding=encoding)
    return [str(v) for v in first.iloc[0].tolist()] if len(first) else []


#: Compressed-file suffixes and the codec that reads them.
COMPRESSIONS = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz", ".zip": "zip"}


def decompress(path: str | os.PathLike, *, what: str = "file") -> bytes:
    """The bytes a file compressed with gzip, bzip2, xz or zip holds (a zip archive must hold exactly one file).

    Raises
    ------
    InputError
        An unknown suffix, a file that does not decompress, or a zip archive of zero or several files.
    """
    import bz2
    import gzip
    import lzma
    import zipfile

    suffix = os.path.splitext(str(path))[1].lower()
    codec = COMPRESSIONS.get(suffix)
    shown = escape(str(path))
    if codec is None:
        raise InputError(f"{what} {shown!r} is not compressed in a way algorank reads "
                         f"({', '.join(COMPRESSIONS)})")
    try:
        if codec == "zip":
            with zipfile.ZipFile(path) as archive:
                members = [m for m in archive.infolist() if not m.is_dir()]
                if len(members) != 1:
                    raise InputError(f"{what} {shown!r} is a zip archive of {len(members)} files: it must hold "
                                     f"exactly one")
                return archive.read(members[0])
        opener = {"gzip": gzip.open, "bzip2": bz2.open, "xz": lzma.open}[codec]
        with opener(path, "rb") as fh:
            return fh.read()
    except InputError:
        raise
    except (OSError, EOFError, lzma.LZMAError, zipfile.BadZipFile, ValueError) as exc:
        raise InputError(f"{what} {shown!r} does not decompress as {codec}: {type(exc).__name__}: "
                         f"{' '.join(str(exc).split())}") from None


#: The separator of fields separated by runs of spaces or tabs (pandas' regular expression).
WHITESPACE = r"\s+"
#: Lines of a CSV file looked at to find its separator and decimal mark.
_DIALECT_LINES = 50
_DECIMAL_COMMA = r"[+-]?\d+,\d+"
_DECIMAL_POINT = r"[+-]?\d*\.\d+(?:[eE][+-]?\d+)?"


def csv_dialect(text: str, *, sep: str = ",") -> tuple[str, str]:
    """``(separator, decimal mark)`` of a CSV file from its first lines (``text``, decoded).

    The separator is ``sep`` unless the header holds no ``sep`` but semicolons or tabs, and each of the next lines
    (up to :data:`_DIALECT_LINES`) splits into as many fields with that character: then it is that character.
    Failing that, a comma-separated file without quotes whose lines all split into as many (more than one) fields
    at runs of blanks has :data:`WHITESPACE` as its separator (``x1 x2 class``, as many UCI files are).  The
    decimal mark is ``,`` when the separator is a semicolon and some field of those lines is a number written with
    a decimal comma while none is written with a decimal point; else ``.``.
    """
    import csv
    import io
    import re

    every = text.splitlines()
    lines = every[:_DIALECT_LINES + 1]
    if len(every) > _DIALECT_LINES + 1 or not text.endswith(("\n", "\r")):
        lines = lines[:-1] or lines[:1]  # the last line of a sample may be cut
    lines = [line for line in lines if line.strip()]
    if not lines or sep in lines[0]:
        return sep, "."
    chosen, fields = sep, []
    for other in (";", "\t"):
        if other == sep or other not in lines[0]:
            continue
        rows = list(csv.reader(io.StringIO("\n".join(lines)), delimiter=other))
        if len(rows[0]) > 1 and all(len(r) == len(rows[0]) for r in rows[1:]):
            chosen, fields = other, [f.strip() for r in rows[1:] for f in r]
            break
    if chosen == sep and sep == "," and '"' not in text:  # fields separated by runs of blanks, unquoted
        counts = [len(line.split()) for line in lines]
        if counts[0] > 1 and all(c == counts[0] for c in counts[1:]):
            return WHITESPACE, "."
    decimal = "."
    if chosen == ";":
        comma = any(re.fullmatch(_DECIMAL_COMMA, f) for f in fields)
        point = any(re.fullmatch(_DECIMAL_POINT, f) for f in fields)
        if comma and not point:
            decimal = ","
    return chosen, decimal
