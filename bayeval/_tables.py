"""The one reader of the tables bayeval reads from files: scores, labels, votes.

A table is a CSV (``.csv``, ``.txt``, also compressed: ``.csv.gz``), a TSV (``.tsv``) or a
Parquet file (``.parquet``, ``.pq``). :func:`read_table` reads it and returns a
:class:`Table`: the frame, the cells of the columns asked for *as typed* (so that a
label column is parsed by the one label parser, :func:`bayeval.core._validate.label_cell`,
and ``NA`` in it is an error with its line, never "not vetted"), and where each row
came from. Every error is a :class:`TableError` whose message names the file (and the
column, and lists the file's columns when one is missing).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from .core import _validate as V

__all__ = ["TableError", "MissingColumn", "Table", "read_table", "table_kind", "TABLE_TYPES"]

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
    """

    def __init__(self, path: Path, kind: str, frame: pd.DataFrame, raw: dict):
        self.path, self.kind, self.frame, self.raw = path, kind, frame, raw

    @property
    def first_line(self) -> int | None:
        """The file line of the first row (2: line 1 is the header), None for Parquet."""
        return None if self.kind == "parquet" else 2

    @property
    def columns(self) -> list[str]:
        return [str(c) for c in self.frame.columns]

    def where(self, row: int) -> str:
        """Where row ``row`` (0-based) is in the file: ``line 7`` or ``row 5``."""
        return f"line {row + self.first_line}" if self.first_line is not None else f"row {row}"

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
                                    allow_empty=allow_empty, first_line=self.first_line)
        except ValueError as exc:
            raise TableError(str(exc)) from None


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
            header = pd.read_csv(p, sep=sep, nrows=0).columns
            frame = pd.read_csv(p, sep=sep, dtype={c: str for c in text if c in header} or None)
            present = [c for c in dict.fromkeys(wanted) if c in header]
            if present:
                cells = pd.read_csv(p, sep=sep, usecols=present, dtype=str, keep_default_na=False)
                raw = {c: cells[c] for c in present}
    except TableError:
        raise
    except Exception as exc:  # malformed files: pandas' own message, with the path
        raise TableError(f"{path}: could not be read as {_SHOWN[kind]} ({exc}).") from exc
    return Table(p, kind, frame, raw)
