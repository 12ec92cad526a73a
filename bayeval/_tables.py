"""The one reader of the tables bayeval reads from files: scores, labels, votes.

A table is a CSV (``.csv``, ``.txt``, also compressed: ``.csv.gz``), a TSV (``.tsv``) or a
Parquet file (``.parquet``, ``.pq``). :func:`read_table` reads it and returns a
:class:`Table`: the frame, the cells of the columns asked for *as typed* (so that a
label column is parsed by the one label parser, :func:`bayeval.core._validate.label_cell`,
and ``NA`` in it is an error with its line, never "not vetted"), and where each row
came from. Every error is a :class:`TableError` whose message names the file (and the
column, and lists the file's columns when one is missing).

What spreadsheets write is read as meant: a UTF-8 byte-order mark is dropped, blank lines
are skipped (each row keeps its own file line, :attr:`Table.lines`, for messages), and
empty fields at the end of rows whose header has none (Excel's trailing commas) are
ignored; a row with more *filled* fields than the header names is an error with its line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from .core import _validate as V

__all__ = ["TableError", "MissingColumn", "Table", "read_table", "table_kind", "TABLE_TYPES", "row_place"]

#: What :func:`read_table` reads, for messages.
TABLE_TYPES = "a .csv, .tsv or .parquet file"
_SHOWN = {"csv": "CSV", "tsv": "TSV", "parquet": "Parquet"}


class TableError(ValueError):
    """A table that cannot be read, or lacks a column; the message names the file."""


class MissingColumn(TableError):
    """A column the caller needs is not in the table (``role``: what it was named for)."""

    def __init__(self, message: str, *, column: str, role: str | None):
        super().__init__(message)
        self.column, self.role = column, role


def table_kind(path) -> str | None:
    """``"csv"``, ``"tsv"``, ``"parquet"``, or None for another kind of file.

    Examples
    --------
    >>> from bayeval._tables import table_kind
    >>> [table_kind(p) for p in ("a.csv", "a.CSV.gz", "a.tsv", "a.pq", "a.xlsx")]
    ['csv', 'csv', 'tsv', 'parquet', None]
    """
    suffixes = [s.lower() for s in Path(path).suffixes]
    last = suffixes[-1] if suffixes else ""
    if last in (".parquet", ".pq"):
        return "parquet"
    if last == ".tsv":
        return "tsv"
    if last in (".csv", ".txt") or ".csv" in suffixes[-2:]:
        return "csv"
    return None


class Table:
    """A table read by :func:`read_table`.

    Attributes
    ----------
    path : pathlib.Path
    kind : {"csv", "tsv", "parquet"}
    frame : pandas.DataFrame
        The table as pandas reads it (the text columns as strings).
    raw : dict of str to pandas.Series
        The cells of the raw columns as typed (CSV/TSV: the text, ``NA`` stays ``"NA"``
        and an empty cell is ``""``; Parquet: the stored values).
    lines : list of int or None
        The file line each row starts on (CSV/TSV; blank lines and quoted line breaks
        counted), None for Parquet. :func:`row_place` finds them from the frame alone.
    """

    def __init__(self, path: Path, kind: str, frame: pd.DataFrame, raw: dict, lines: list | None = None):
        self.path, self.kind, self.frame, self.raw = path, kind, frame, raw
        if lines is None and kind != "parquet":
            lines = list(range(2, len(frame) + 2))
        self.lines = lines
        regular = lines is None or list(lines) == list(range(2, len(lines) + 2))
        # for row_place; kept small (pandas copies attrs with every operation): None when line = row + 2
        frame.attrs["bayeval_rows"] = (kind == "parquet", None if regular else np.asarray(lines, dtype=np.int64))

    @property
    def first_line(self) -> int | None:
        """The file line of the first row (2 when line 1 is the header), None for Parquet."""
        return None if self.lines is None else (self.lines[0] if self.lines else 2)

    @property
    def columns(self) -> list[str]:
        return [str(c) for c in self.frame.columns]

    def where(self, row: int) -> str:
        """Where row ``row`` (0-based) is in the file: ``line 7`` or ``row 5``."""
        return f"line {self.lines[row]}" if self.lines is not None else f"row {row}"

    def require(self, columns) -> None:
        """A :class:`TableError` for the first named column the table lacks.

        ``columns``: column names, or ``{what it is: column name}`` (e.g. ``{"--score": "s"}``),
        for the message.
        """
        pairs = columns.items() if isinstance(columns, Mapping) else ((None, c) for c in columns)
        for role, name in pairs:
            if name is not None and name not in self.frame.columns:
                what = f" ({role})" if role else ""
                raise MissingColumn(
                    f"{self.path}: {name!r}{what} is not a column of {self.path.name}; its columns are "
                    f"{self.columns}.",
                    column=name, role=role,
                )

    def cells(self, column: str):
        """The cells of ``column`` as typed (raw when read raw, else the frame's values)."""
        values = self.raw[column] if column in self.raw else self.frame[column]
        return values.to_numpy(dtype=object)

    def labels(self, column: str, *, allow_empty: bool = True) -> np.ndarray:
        """The 1/0 labels of ``column`` (NaN where empty, when allowed), or a TableError listing
        the rows that hold anything else (by their line in a CSV)."""
        try:
            return V.as_label_cells(self.cells(column), f"{self.path}: column {column!r}",
                                    allow_empty=allow_empty, lines=self.lines)
        except ValueError as exc:
            raise TableError(str(exc)) from None


def row_place(frame, row: int) -> str:
    """Where row ``row`` (0-based) of a frame read by :func:`read_table` is in its file.

    ``line N`` for a CSV/TSV (its own file line, after blank lines and quoted line breaks),
    ``row N`` for Parquet; ``line row + 2`` for a frame read otherwise.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from bayeval._tables import read_table, row_place
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "s.csv"
    >>> _ = path.write_text("id,s\\na,1\\n\\nb,2\\n")
    >>> row_place(read_table(path).frame, 1)
    'line 4'
    """
    parquet, lines = frame.attrs.get("bayeval_rows", (False, None))
    if parquet:
        return f"row {row}"
    return f"line {int(lines[row]) if lines is not None else row + 2}"


def read_table(path, *, text_columns: Iterable = (), raw_columns: Iterable = ()) -> Table:
    """Read a CSV, TSV or Parquet table.

    Parameters
    ----------
    path : str or path-like
    text_columns : iterable of str
        Columns read as text (ids: ``007`` and ``7`` stay different). Absent ones are skipped.
    raw_columns : iterable of str
        Columns whose cells are also kept as typed, in :attr:`Table.raw` (labels, to be
        parsed strictly). Absent ones are skipped.

    Returns
    -------
    Table

    Raises
    ------
    TableError
        No such file, a folder, an unknown kind of file, Parquet without pyarrow, or a
        file pandas cannot parse; the message starts with the path.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from bayeval._tables import read_table
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "s.csv"
    >>> _ = path.write_text("id,s,y\\n007,0.9,1\\n8,0.2,\\n")
    >>> t = read_table(path, text_columns=["id"], raw_columns=["y"])
    >>> t.frame["id"].tolist(), t.raw["y"].tolist(), t.labels("y").tolist()
    (['007', '8'], ['1', ''], [1.0, nan])
    >>> t.require({"--score": "score"})
    Traceback (most recent call last):
    ...
    bayeval._tables.MissingColumn: ...s.csv: 'score' (--score) is not a column of s.csv; its columns are ['id', 's', 'y'].
    """
    p = Path(path)
    if not p.exists():
        raise TableError(f"{path}: no such file.")
    if p.is_dir():
        raise TableError(f"{path}: is a folder; give {TABLE_TYPES}.")
    kind = table_kind(p)
    if kind is None:
        raise TableError(f"{path}: unknown file type {p.suffix.lower()!r}; give {TABLE_TYPES}.")
    text = [c for c in text_columns if c]
    wanted = [c for c in raw_columns if c]
    raw: dict[str, pd.Series] = {}
    try:
        if kind == "parquet":
            try:
                frame = pd.read_parquet(p)
            except ImportError as exc:
                raise TableError(
                    f"{path}: reading Parquet needs a Parquet engine: run `pip install pyarrow` ({exc})."
                ) from exc
            raw = {c: frame[c] for c in wanted if c in frame.columns}
        else:
            sep = "\t" if kind == "tsv" else ","
            source, lines = _delimited_source(p, sep)
            header = pd.read_csv(source(), sep=sep, nrows=0, index_col=False).columns
            as_text = [c for c in dict.fromkeys(text) if c in header]
            frame = pd.read_csv(source(), sep=sep, index_col=False, dtype={c: str for c in as_text} or None)
            present = [c for c in dict.fromkeys([*wanted, *as_text]) if c in header]
            if present:  # as typed: only an empty cell is empty ("NA", "None", "null" are text)
                cells = pd.read_csv(source(), sep=sep, index_col=False, usecols=present, dtype=str,
                                    keep_default_na=False)
                raw = {c: cells[c] for c in present if c in wanted}
                for c in as_text:  # ids are text: "NA" is an id; an empty cell stays missing
                    frame[c] = cells[c].mask(cells[c] == "")
            if lines is not None and len(lines) != len(frame):
                lines = None  # a file the two readers split differently: lines counted as row + 2
    except TableError:
        raise
    except Exception as exc:  # malformed files: pandas' own message, with the path
        raise TableError(f"{path}: could not be read as {_SHOWN[kind]} ({exc}).") from exc
    return Table(p, kind, frame, raw, None if kind == "parquet" else lines)


_OPENERS = {".gz": "gzip", ".bz2": "bz2", ".xz": "lzma"}


def _open_text(p: Path):
    """``p`` opened as text for the csv module (compressed ones too), or None for a compression
    read by pandas alone."""
    import importlib

    suffix = p.suffix.lower()
    if suffix in (".csv", ".tsv", ".txt"):
        return open(p, encoding="utf-8-sig", newline="")
    if suffix in _OPENERS:
        return importlib.import_module(_OPENERS[suffix]).open(p, "rt", encoding="utf-8-sig", newline="")
    return None


def _delimited_source(p: Path, sep: str):
    """``(source, lines)``: what pandas reads the file from (``source()`` a fresh handle or path
    each call), and the file line of each row.

    One pass of the csv module finds the line each row starts on, blank lines, and rows with more
    fields than the header. Fields past the header's that are all empty (a spreadsheet's trailing
    commas) are dropped, by giving pandas the file rewritten without them; a filled field past the
    header is a :class:`TableError` naming the line. ``lines`` is None for a compression the csv
    module cannot open (pandas then reads the file as it is).
    """
    import csv
    import io

    fh = _open_text(p)
    if fh is None:
        return (lambda: p), None

    def rows(handle):  # (line the row starts on, its fields; None for a blank line)
        reader, end = csv.reader(handle, delimiter=sep), 0
        for row in reader:
            start, end = end + 1, reader.line_num
            yield start, (row if row and (len(row) > 1 or row[0].strip()) else None)

    lines, width, clean = [], None, True
    with fh:
        for start, row in rows(fh):
            if row is None:  # a blank line: pandas skips it too; the lines after it keep their numbers
                continue
            if width is None:
                width, head = len(row), start
            else:
                if len(row) > width:
                    extra = [v for v in row[width:] if v.strip()]
                    if extra:
                        raise TableError(
                            f"{p}: line {start} has {len(row)} fields but the header (line {head}) names {width} "
                            f"columns ({extra[0]!r} is past the last column). Remove the extra field(s), or name "
                            "the column in the header.")
                    clean = False
                lines.append(start)
    if clean:
        return (lambda: p), lines
    buffer = io.StringIO()
    write = csv.writer(buffer, delimiter=sep, lineterminator="\n").writerow
    with _open_text(p) as fh:
        for _, row in rows(fh):
            if row is not None:
                write(row[:width])
    text = buffer.getvalue()
    return (lambda: io.StringIO(text)), lines
