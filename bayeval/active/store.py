"""An append-only label store: every vetted label, kept safe in one SQLite file.

The active-testing loop asks a person to vet batches of items. Those labels are the
most expensive data in the whole evaluation, so they go to disk *as they are typed*:
:class:`LabelStore` appends one row per label to an SQLite database (stdlib
:mod:`sqlite3`) and commits before :meth:`LabelStore.add` returns. Nothing is ever
updated or deleted (triggers in the file refuse it); a correction is a new row, and
the rule that turns rows into one label per item (:meth:`LabelStore.resolved`) is
documented on the class.

Durability and concurrency
--------------------------
The file uses write-ahead logging (``PRAGMA journal_mode=WAL``) with
``synchronous=FULL``: a commit is fsync-ed to the log before ``add`` returns, so a
label reported as written survives the process being killed (and a power cut, as far
as the disk honours fsync). Every operation opens its own short-lived connection, so
a store object can be shared by threads and survives ``fork``; two processes can
write to the same file at once -- a writer waits for the other's transaction (up to
``timeout`` seconds, SQLite's ``busy_timeout``) instead of failing. WAL needs shared
memory between the processes, so the file must be on a local disk, not on a network
file system.

File format
-----------
The database header carries an application id (``0x62796C73``, "byls") and a schema
version (``PRAGMA user_version``, currently 1). Opening a file that is not a bayeval
store, or one written by a newer bayeval, raises :class:`StoreFormatError` without
touching the file. Tables: ``labels`` (id, item, kind, value, annotator, batch, time),
``batches`` (id, created, strategy, note), ``batch_items`` (batch, pos, item, kind)
and ``meta`` (id, key, value as JSON, time). Item ids are stored as text with their
kind (``'int'`` or ``'str'``), so ``5`` and ``"5"`` are different items and each
comes back as the type it went in as. Times are UTC, ISO 8601 with microseconds.

Known items
-----------
A store can know the items of its evaluation set (:meth:`LabelStore.register_items`,
kept in ``meta`` under ``"items"``; ``bayeval select --store``, ``bayeval label
--scores`` and :class:`~bayeval.active.ActiveSession` register them). It then refuses
labels and batches of any other id -- a typo -- with a "did you mean", and writes
nothing. A store that already holds labels of unknown ids is repaired by
:func:`repair` (``bayeval repair-store``), which sets those labels aside in a CSV and
keeps a copy of the store as it was as a backup.

Errors
------
Every SQLite error is reported as an error that names the file and what to do: a
damaged file as :class:`StoreDamagedError`, a lock held past ``timeout`` as
:class:`TimeoutError`, a disk or permission problem as :class:`OSError`.
"""

from __future__ import annotations

import contextlib
import json
import numbers
import os
import pathlib
import sqlite3
import time
from collections.abc import Iterator
from datetime import UTC, datetime

__all__ = ["LabelStore", "StoreFormatError", "StoreDamagedError", "KnownItems"]

APPLICATION_ID = 0x62796C73  # "byls": bayeval label store
SCHEMA_VERSION = 1

_SCHEMA = [
    """CREATE TABLE batches (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        created TEXT NOT NULL,
        strategy TEXT,
        note TEXT
    )""",
    """CREATE TABLE batch_items (
        batch INTEGER NOT NULL REFERENCES batches(id),
        pos INTEGER NOT NULL,
        item TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('int', 'str')),
        PRIMARY KEY (batch, pos)
    )""",
    """CREATE TABLE labels (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        item TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('int', 'str')),
        value INTEGER NOT NULL CHECK (value IN (0, 1)),
        annotator TEXT,
        batch INTEGER REFERENCES batches(id),
        time TEXT NOT NULL
    )""",
    "CREATE INDEX labels_by_item ON labels(kind, item)",
    """CREATE TABLE meta (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        time TEXT NOT NULL
    )""",
    "CREATE INDEX meta_by_key ON meta(key, id)",
    *(
        f"""CREATE TRIGGER {table}_no_{op} BEFORE {op.upper()} ON {table}
        BEGIN SELECT RAISE(ABORT, 'the bayeval label store is append-only'); END"""
        for table in ("labels", "batches", "batch_items", "meta")
        for op in ("update", "delete")
    ),
    f"PRAGMA application_id = {APPLICATION_ID}",
    f"PRAGMA user_version = {SCHEMA_VERSION}",
]

_VALUE_RULE = "0 or 1 (ints, bools, floats 0.0/1.0, or the strings '1'/'0'/'1.0'/'0.0'/'true'/'false' in any case)"
_SHOW = 10  # how many offending entries an error message lists


class StoreFormatError(ValueError):
    """The file exists but is not a bayeval label store this version can read.

    Raised by :class:`LabelStore` for a file that is not SQLite at all, an SQLite
    database made by something else, or a store written by a newer bayeval. The file
    is left untouched.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from bayeval.active.store import LabelStore, StoreFormatError
    >>> tmp = tempfile.TemporaryDirectory()
    >>> notes = pathlib.Path(tmp.name) / "notes.txt"
    >>> _ = notes.write_text("not a database, just some notes\\n" * 40)
    >>> try:
    ...     LabelStore(notes)
    ... except StoreFormatError as exc:
    ...     print("not a bayeval label store" in str(exc))
    True
    >>> tmp.cleanup()
    """


class StoreDamagedError(StoreFormatError):
    """The store's file is damaged (SQLite's ``PRAGMA quick_check`` fails): writes are refused.

    Reading may still work for the undamaged part. The message says how to recover:
    keep a copy of the file, save the readable rows with :func:`export_readable`
    (``bayeval export-labels STORE OUT.csv``), and import them into a new store
    (``bayeval label NEW_STORE OUT.csv``).

    Examples
    --------
    >>> import pathlib, random, tempfile
    >>> from bayeval.active.store import LabelStore, StoreDamagedError
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> LabelStore(tmp / "s.db").add([f"w{i}" for i in range(1000)], [i % 2 for i in range(1000)])
    1000
    >>> raw = bytearray((tmp / "s.db").read_bytes())  # a disk error in the middle
    >>> raw[len(raw) // 2:len(raw) // 2 + 4096] = random.Random(0).randbytes(4096)
    >>> _ = (tmp / "s.db").write_bytes(bytes(raw))
    >>> store = LabelStore(tmp / "s.db")
    >>> store.damaged
    True
    >>> try:
    ...     store.add(["x"], [1])
    ... except StoreDamagedError as exc:
    ...     print("export-labels" in str(exc))
    True
    """


def _recovery_hint(path) -> str:
    p = str(path)
    return (
        f"To recover: (1) keep a copy of the damaged file (e.g. `cp {p} {p}.damaged`); "
        f"(2) save the rows that can still be read: `bayeval export-labels {p} labels.csv` "
        "(Python: `bayeval.active.repair.export_readable(path, 'labels.csv')`); "
        "(3) import them into a new store: `bayeval label NEW_STORE.db labels.csv` (every "
        "row in the order it was written, with its annotator; Python: "
        "`bayeval.active.repair.import_export('labels.csv', NEW_STORE)`), and check "
        "the missing items against your own records."
    )


# --------------------------------------------------------------------------- helpers


def _translate(exc: sqlite3.Error, path, timeout: float) -> Exception:
    """An SQLite error met while using the store at ``path``, as an error a user can act on.

    Damage ("malformed", "not a database", a failed read) becomes :class:`StoreDamagedError`
    with the recovery steps; a lock held too long a :class:`TimeoutError`; anything else
    (disk full, read-only file, I/O error) an :class:`OSError`. Each names the file.
    """
    p = str(path)
    text = str(exc)
    low = text.lower()
    if "locked" in low or "busy" in low:
        return TimeoutError(
            f"The label store {p!r} stayed locked by another process for more than "
            f"{timeout:g} s (SQLite: {text}). Wait for the other bayeval command to finish, "
            "or open the store with a longer `timeout`; nothing was written."
        )
    if isinstance(exc, sqlite3.OperationalError) and not ("malformed" in low or "corrupt" in low):
        return OSError(
            f"The label store {p!r} could not be read or written (SQLite: {text}). Check that "
            "the disk is not full, that the file and its folder are writable and on a local "
            "disk; nothing was written."
        )
    return StoreDamagedError(
        f"The label store {p!r} cannot be read: it is damaged (SQLite: {text}). "
        + _recovery_hint(p)
    )


def _plain(v):
    """numpy scalars -> the Python scalar they hold (without importing numpy)."""
    if type(v).__module__ == "numpy" and hasattr(v, "item"):
        try:
            return v.item()
        except (TypeError, ValueError):
            return v
    return v


def _as_list(x, name: str) -> list:
    """A 1-D sequence (list, tuple, array, Series, ...) or a single scalar, as a list."""
    if x is None:
        raise TypeError(f"`{name}` is required: expected a list or 1-D array, got None.")
    if isinstance(x, str | bytes | numbers.Number):
        return [x]
    if isinstance(x, dict | set | frozenset):
        raise TypeError(
            f"`{name}` must be an ordered sequence (list, tuple, 1-D array), got a "
            f"{type(x).__name__}, whose order is not the one you meant. Pass a list."
        )
    ndim = getattr(x, "ndim", None)
    if ndim == 0:
        return [x.item() if hasattr(x, "item") else x]
    if ndim is not None and ndim != 1:
        raise ValueError(
            f"`{name}` must be 1-D (one entry per label), got shape {getattr(x, 'shape', '?')}."
        )
    try:
        return list(x)
    except TypeError as exc:
        raise TypeError(
            f"`{name}` must be a list or 1-D array, got {type(x).__name__} {x!r:.80}."
        ) from exc


def encode_item(v) -> tuple[str, str] | None:
    """``(kind, text)`` for a valid item id, None for an invalid one."""
    v = _plain(v)
    if isinstance(v, bool):
        return None
    if isinstance(v, numbers.Integral):
        return ("int", str(int(v)))
    if isinstance(v, str) and v != "":
        return ("str", str(v))
    return None


def decode_item(kind: str, text: str):
    return int(text) if kind == "int" else text


_TRUE_TEXT = frozenset({"1", "1.0", "true"})
_FALSE_TEXT = frozenset({"0", "0.0", "false"})


def _encode_value(v) -> int | None:
    """0/1 for a label, None for anything else.

    The same spellings as every other entry point (``bayeval.core._validate.label_cell``,
    checked by the tests; this module stays standard-library only): the numbers 0/1,
    bools, and the strings 1/0/1.0/0.0/true/false in any case with blanks around.
    """
    v = _plain(v)
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, str):
        t = v.strip().lower()
        return 1 if t in _TRUE_TEXT else 0 if t in _FALSE_TEXT else None
    if isinstance(v, numbers.Real) and not isinstance(v, bool):
        return int(v) if v in (0, 1) else None
    return None


def _listing(bad: list[tuple[int, object]]) -> str:
    shown = ", ".join(f"position {i}: {v!r}" for i, v in bad[:_SHOW])
    more = len(bad) - _SHOW
    return shown + (f", ... and {more} more" if more > 0 else "")


def encode_items(item_ids, name: str) -> list[tuple[str, str]]:
    raw = _as_list(item_ids, name)
    out, bad = [], []
    for i, v in enumerate(raw):
        enc = encode_item(v)
        if enc is None:
            bad.append((i, _plain(v)))
        else:
            out.append(enc)
    if bad:
        raise ValueError(
            f"`{name}` must hold item ids that are ints (numpy ints are fine) or non-empty "
            f"strings; {len(bad)} of {len(raw)} are not ({_listing(bad)}). Nothing was "
            "written. Convert the ids first, e.g. `int(i)` or `str(i)` -- and use the same "
            "kind everywhere: 5 and '5' are different items."
        )
    return out


_ITEMS_KEY = "items"  # meta key: the items the store's labels may refer to
_LOOKALIKE = str.maketrans({"o": "0", "l": "1"})
_ROW_LOOKALIKE = str.maketrans({"o": "0", "l": "1", "i": "1"})  # in a row number no letter is meant


def _did_you_mean(key: tuple[str, str], known, by_length: dict | None) -> str:
    """" (did you mean 'x'?)" for an unknown item id close to a known one, else "".

    Tried in turn: the same id as the other kind (``'5'`` for ``5``); the same id without
    spaces around it (``'d 86 '`` for ``'d 86'``); for ids that are row numbers ``0..n-1``,
    the row a number with leading zeros or a letter for a digit (``'26l'``: l/I/O) names, else
    the rows' range (an id close in spelling is no closer a row); else the same id up to case
    and look-alike characters (O/0, l/1); the closest id of about the same length
    (:func:`difflib.get_close_matches`, skipped for more than 200,000 candidates).
    """
    import difflib

    kind, text = key
    other = ("str" if kind == "int" else "int", text)
    if other in known:
        return f" (did you mean {decode_item(*other)!r}, the {'number' if kind == 'str' else 'text'}?)"
    bare = text.strip()
    if bare != text:  # a space typed before or after the id
        for key in ((kind, bare), ("str" if kind == "int" else "int", bare)):
            if key in known:
                return f" (did you mean {decode_item(*key)!r}, without the spaces around it?)"
    if by_length is None:
        return ""
    rows = by_length.get("rows")  # ids 0..n-1 (a file numbered by row): no id is "close" to another
    if rows:  # '0261' is the row 261 written with a 0; '26l' and '3O' are 261 and 30 typed with a letter
        n = int(d) if (d := bare.lower().translate(_ROW_LOOKALIKE)).isascii() and d.isdigit() else None
        return f" (did you mean {n}?)" if n is not None and n < rows else f" (the ids are the row numbers 0 to {rows - 1})"
    same = by_length.get("lookalike", {}).get(text.lower().translate(_LOOKALIKE))
    if same is not None:
        return f" (did you mean {same!r}?)"
    for lengths, cutoff in (((len(text),), 0.6), ((len(text) - 1, len(text) + 1), 0.75)):
        pool = [t for n in lengths for t in by_length.get(n, ())]
        close = difflib.get_close_matches(text, pool, n=1, cutoff=cutoff) if len(pool) <= 200_000 else []
        if close:
            return f" (did you mean {by_length[len(close[0])][close[0]]!r}?)"
    return ""


def _length_index(known) -> dict:
    by_length: dict = {"lookalike": {}}
    for kind, text in known:
        item = decode_item(kind, text)
        by_length.setdefault(len(text), {})[text] = item
        by_length["lookalike"].setdefault(text.lower().translate(_LOOKALIKE), item)
    if all(kind == "int" for kind, _ in known) and {int(t) for _, t in known} == set(range(len(known))):
        by_length["rows"] = len(known)
    return by_length


def _unknown_text(keys, known, *, limit: int = _SHOW) -> str:
    """The unknown ids ``keys`` (``(kind, text)``), each with a "did you mean" when one is close."""
    by_length = _length_index(known)
    shown = ", ".join(f"{decode_item(*k)!r}{_did_you_mean(k, known, by_length)}" for k in keys[:limit])
    more = len(keys) - limit
    return shown + (f", ... and {more} more" if more > 0 else "")


class KnownItems:
    """The item ids of an evaluation set, to tell a mistyped id and suggest the one meant.

    Ids are ints or strings, as in a :class:`LabelStore` (``5`` and ``"5"`` differ).
    The index for suggestions is built on first use.

    Examples
    --------
    >>> from bayeval.active.store import KnownItems
    >>> known = KnownItems(["i49", "i50", "i51", 7])
    >>> "i5O" in known, known.did_you_mean("i5O"), known.did_you_mean("7")
    (False, " (did you mean 'i50'?)", ' (did you mean 7, the number?)')
    >>> known.listing(["i5O", "zzz"])
    "'i5O' (did you mean 'i50'?), 'zzz'"
    """

    def __init__(self, item_ids):
        self._keys = dict.fromkeys(k for k in map(encode_item, _as_list(item_ids, "item_ids")) if k is not None)
        self._index: dict | None = None

    def __contains__(self, item) -> bool:
        key = encode_item(item)
        return key is not None and key in self._keys

    def __len__(self) -> int:
        return len(self._keys)

    def did_you_mean(self, item) -> str:
        """``" (did you mean 'x'?)"`` when a known id is close to ``item``, else ``""``."""
        key = encode_item(item)
        if key is None:
            return ""
        if self._index is None:
            self._index = _length_index(self._keys)
        return _did_you_mean(key, self._keys, self._index)

    def listing(self, items, *, limit: int = _SHOW) -> str:
        """``items`` as a list for a message, each with its "did you mean"."""
        items = list(items)
        shown = ", ".join(f"{i!r}{self.did_you_mean(i)}" for i in items[:limit])
        more = len(items) - limit
        return shown + (f", ... and {more} more" if more > 0 else "")


def opt_str(x, name: str) -> str | None:
    x = _plain(x)
    if x is None:
        return None
    if not isinstance(x, str) or x == "":
        raise TypeError(
            f"`{name}` must be a non-empty string or None, got {type(x).__name__} {x!r:.80}."
        )
    return str(x)


def _annotator_name(x) -> str | None:
    """``annotator`` without the spaces around it: "ana " and "ana" are one annotator."""
    x = opt_str(x, "annotator")
    if x is None:
        return None
    name = x.strip()
    if not name:
        raise ValueError(
            f"`annotator` must be a name (who labeled); it holds only spaces ({x!r:.80}). Give the name, "
            "or annotator=None to record the labels without one. Nothing was written."
        )
    return name


def _opt_batch(x) -> int | None:
    x = _plain(x)
    if x is None:
        return None
    if isinstance(x, bool) or not isinstance(x, numbers.Integral):
        raise TypeError(
            f"`batch` must be a batch id (an int returned by new_batch()) or None, "
            f"got {type(x).__name__} {x!r:.80}."
        )
    return int(x)


def _json_default(obj):
    if hasattr(obj, "tolist"):  # numpy arrays and scalars
        return obj.tolist()
    raise TypeError(f"{type(obj).__name__} {obj!r:.80} is not JSON serializable")


def _now(conn: sqlite3.Connection, table: str, column: str) -> str:
    """UTC time now, but never earlier than the table's latest row (times are monotone)."""
    now = datetime.now(UTC).isoformat(timespec="microseconds")
    last = conn.execute(f"SELECT {column} FROM {table} ORDER BY id DESC LIMIT 1").fetchone()
    return last[0] if last is not None and last[0] > now else now


# --------------------------------------------------------------------------- the store


class LabelStore:
    """Append-only SQLite store of every vetted label, safe to stop and resume.

    Each call to :meth:`add` appends one row per label -- item id, value 0/1,
    annotator, batch, UTC time -- in a single transaction that is committed (and
    fsync-ed) before it returns. Rows are never updated or deleted. Batches of items
    proposed for vetting are recorded with :meth:`new_batch`, so an interrupted
    session resumes with :meth:`pending`. Several processes may open and write the
    same file at once. See the module docstring for the file format.

    Parameters
    ----------
    path : str or path-like
        The store's file. Created (with its parent folder required to exist) if it
        does not exist; otherwise it must be a bayeval label store. An existing empty
        (0-byte) file is refused, not silently made a new store: its labels were
        probably lost.
    timeout : float, default 30.0
        Seconds to wait for another process's write transaction before giving up
        (SQLite ``busy_timeout``).

    Attributes
    ----------
    path : pathlib.Path
        Absolute path of the store's file.

    Notes
    -----
    **One label per item (the conflict rule).** Per item, each annotator's *most
    recent* label counts (an annotator may correct themself; rows written with
    ``annotator=None`` count as one anonymous annotator). Those labels are put to a
    majority vote across annotators; a tie goes to the most recent of the tied
    labels (i.e. the latest of the labels that voted). "Most recent" is write order
    (the row id, equivalently the monotone ``time``). :meth:`conflicts` shows every
    row of the items whose labels disagree; nothing is ever dropped from the file.

    **Damage.** Opening runs SQLite's ``PRAGMA quick_check``. A store that fails it is
    opened read-only in effect: every write raises :class:`StoreDamagedError`, whose
    message says how to recover (keep a copy, :func:`export_readable`, import the
    export into a new store). :attr:`damaged` tells whether this happened.

    **Items** are ints (numpy ints are converted) or non-empty strings, and come back
    as the type they went in as; ``5`` and ``"5"`` are different items. An item
    counts as *labeled* once it has at least one label row, whatever its batch.

    Raises
    ------
    StoreFormatError
        If ``path`` exists but is not a bayeval label store, is an empty file, or was
        written by a newer bayeval (upgrade bayeval to read it).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from bayeval.active.store import LabelStore
    >>> tmp = tempfile.TemporaryDirectory()
    >>> store = LabelStore(pathlib.Path(tmp.name) / "labels.db")
    >>> b = store.new_batch(["img1", "img2", "img3"], strategy="random")
    >>> store.add(["img1", "img2"], [1, 0], annotator="ana", batch=b)
    2
    >>> store.pending()  # interrupted here: resume with the rest of the batch
    ['img3']
    >>> store.add(["img3", "img1"], ["1", 0.0], annotator="ben", batch=b)
    2
    >>> store.resolved().to_dict()  # img1: ana says 1, ben says 0, tie -> ben (latest)
    {'img1': 0, 'img2': 0, 'img3': 1}
    >>> store.conflicts()[["item", "value", "annotator"]].to_dict("list")
    {'item': ['img1', 'img1'], 'value': [1, 0], 'annotator': ['ana', 'ben']}
    >>> len(store), store.batches()[["batch", "n_items", "n_labeled"]].values.tolist()
    (4, [[1, 3, 3]])
    >>> store.close()
    >>> tmp.cleanup()
    """

    def __init__(self, path, *, timeout: float = 30.0):
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not isinstance(path, str | os.PathLike):
            raise TypeError(
                f"`path` must be a file path (str or pathlib.Path), got {type(path).__name__}."
            )
        if str(path) in ("", ":memory:") or str(path).startswith("file:"):
            raise ValueError(
                f"`path` must name a file on disk, got {str(path)!r}: an in-memory "
                "database would lose every label when the process ends."
            )
        if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real) or not 0 <= timeout < float("inf"):
            raise ValueError(f"`timeout` must be a finite number of seconds >= 0, got {timeout!r}.")
        self._path = pathlib.Path(path).expanduser().absolute()
        self._timeout = float(timeout)
        self._closed = False
        if self._path.is_dir():
            raise IsADirectoryError(
                f"`path` {str(self._path)!r} is a folder; pass a file name inside it."
            )
        if not self._path.parent.is_dir():
            raise FileNotFoundError(
                f"The folder {str(self._path.parent)!r} does not exist; create it first "
                "(the store creates only its own file)."
            )
        if self._empty_file():
            raise StoreFormatError(
                f"{str(self._path)!r} is an empty file (0 bytes), not a label store: a store "
                "is never empty once created, so its content was probably lost (truncated, "
                "or an interrupted copy). Restore it from a backup; to start a new store, "
                "delete the empty file or give another file name. The file was left untouched."
            )
        self._damage: str | None = None
        self._known_cache: tuple[int, dict] | None = None
        self._open_or_create()
        self._damage = self._quick_check()

    def _empty_file(self) -> bool:
        """True for an existing 0-byte file that no other process is creating a store in.

        Another process that is creating the store at this path holds a 0-byte file for
        a moment (until its first write); that is waited for (up to 2 s or ``timeout``),
        not refused.
        """
        deadline = time.monotonic() + min(2.0, self._timeout)
        companions = [self._path.with_name(self._path.name + s) for s in ("-wal", "-journal")]
        while True:
            try:
                size = self._path.stat().st_size
            except FileNotFoundError:
                return False
            if size > 0 or any(c.exists() for c in companions):
                return False
            if time.monotonic() > deadline:
                return True
            time.sleep(0.02)

    def _quick_check(self) -> str | None:
        """None if SQLite's ``PRAGMA quick_check`` finds the file sound, else its findings."""
        try:
            with self._connect() as conn:
                rows = conn.execute("PRAGMA quick_check(20)").fetchall()
        except StoreFormatError as exc:
            return str(exc.__cause__ or exc)
        found = [" ".join(str(r[0]).split()) for r in rows]
        return None if found == ["ok"] else "; ".join(found[:5])

    @property
    def damaged(self) -> bool:
        """Whether the file failed SQLite's integrity check when it was opened."""
        return self._damage is not None

    def check_writable(self) -> None:
        """Raise :class:`StoreDamagedError` (with the recovery steps) if the store is damaged.

        Every write does this check itself; call it to refuse early, before a long
        computation whose result would be written.
        """
        if self._damage is not None:
            raise StoreDamagedError(
                f"The label store {str(self._path)!r} is damaged (SQLite integrity check: "
                f"{self._damage}); nothing was written, so the damage cannot spread. "
                + _recovery_hint(self._path)
            )

    # ---------------------------------------------------------------- connections

    @property
    def path(self) -> pathlib.Path:
        """Absolute path of the store's file."""
        return self._path

    @contextlib.contextmanager
    def _connect(self, *, create: bool = False) -> Iterator[sqlite3.Connection]:
        if self._closed:
            raise ValueError(f"This LabelStore ({str(self._path)!r}) is closed; open it again.")
        # mode=rw: a store whose file vanished must not be silently recreated empty
        uri = f"{self._path.as_uri()}?mode={'rwc' if create else 'rw'}"
        try:
            conn = sqlite3.connect(uri, uri=True, timeout=self._timeout, isolation_level=None)
        except sqlite3.OperationalError as exc:
            if not create and not self._path.exists():
                raise FileNotFoundError(
                    f"The label store file {str(self._path)!r} has disappeared (deleted or "
                    "moved) since it was opened. Restore it, or open a store at its new path."
                ) from exc
            raise _translate(exc, self._path, self._timeout) from exc
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self._timeout * 1000)}")
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA foreign_keys = ON")
            yield conn
        except sqlite3.Error as exc:
            if create:  # opening: _open_or_create says what kind of file this is
                raise
            raise _translate(exc, self._path, self._timeout) from exc
        finally:
            conn.close()

    @staticmethod
    @contextlib.contextmanager
    def _transaction(conn: sqlite3.Connection, mode: str) -> Iterator[sqlite3.Connection]:
        conn.execute(f"BEGIN {mode}")
        try:
            yield conn
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, holding the write lock from its start."""
        self.check_writable()
        with self._connect() as conn, self._transaction(conn, "IMMEDIATE"):
            yield conn

    @contextlib.contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """One read transaction: a consistent snapshot across several queries."""
        with self._connect() as conn, self._transaction(conn, "DEFERRED"):
            yield conn

    def _state(self, conn: sqlite3.Connection) -> str:
        app = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        n_objects = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if app == APPLICATION_ID:
            if version > SCHEMA_VERSION:
                raise StoreFormatError(
                    f"{str(self._path)!r} is a bayeval label store of schema version "
                    f"{version}, written by a newer bayeval; this one reads versions up to "
                    f"{SCHEMA_VERSION}. Upgrade bayeval to open it (the file was not changed)."
                )
            if version < 1:
                raise StoreFormatError(
                    f"{str(self._path)!r} has the bayeval label store id but no schema "
                    f"version ({version}); it is damaged or was not made by LabelStore."
                )
            return "store"
        if app == 0 and version == 0 and n_objects == 0:
            return "empty"
        raise StoreFormatError(
            f"{str(self._path)!r} is an SQLite database but not a bayeval label store "
            f"(application id {app:#x}, {n_objects} schema object(s)); it was left "
            "untouched. Pass the path of a store made by LabelStore, or a new file name."
        )

    def _open_or_create(self) -> None:
        try:
            self._init_file()
        except sqlite3.OperationalError as exc:  # locked, I/O error, ...: not a format problem
            raise _translate(exc, self._path, self._timeout) from exc
        except sqlite3.DatabaseError as exc:  # "file is not a database", "malformed", ...
            if "malformed" in str(exc):
                raise StoreDamagedError(
                    f"{str(self._path)!r} is a damaged SQLite file ({exc}). "
                    + _recovery_hint(self._path)
                ) from exc
            raise StoreFormatError(
                f"{str(self._path)!r} is not a bayeval label store: SQLite cannot read it "
                f"({exc}). Pass the path of a store made by LabelStore, or a new file name."
            ) from exc

    def _set_wal(self, conn: sqlite3.Connection) -> str:
        """Switch the file to WAL, retrying while another process holds it.

        Changing the journal mode needs an exclusive lock and SQLite may answer "database
        is locked" at once instead of calling the busy handler (seen when two processes
        create the same store together), so the wait is done here, up to ``timeout``.
        """
        deadline = time.monotonic() + self._timeout
        delay = 0.005
        while True:
            try:
                return conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            except sqlite3.OperationalError as exc:
                busy = "locked" in str(exc) or "busy" in str(exc)
                if not busy or time.monotonic() > deadline:
                    raise
                time.sleep(delay)
                delay = min(0.1, delay * 2)

    def _init_file(self) -> None:
        with self._connect(create=True) as conn:
            if self._state(conn) == "empty":
                # WAL is a property of the file; it cannot be switched inside a transaction.
                self._set_wal(conn)
                with self._transaction(conn, "IMMEDIATE"):
                    if self._state(conn) == "empty":  # another process may have won the race
                        for statement in _SCHEMA:
                            conn.execute(statement)
            mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
            if mode.lower() != "wal":
                mode = self._set_wal(conn)
            if mode.lower() != "wal":
                raise OSError(
                    f"Could not switch {str(self._path)!r} to write-ahead logging (journal "
                    f"mode is {mode!r}). Is the file on a network or read-only file system? "
                    "Put the store on a local disk."
                )

    def close(self) -> None:
        """Mark the store closed; later calls raise. Idempotent.

        Every operation commits and closes its own connection, so there is nothing to
        flush: closing only guards against use after ``with`` or ``close()``.

        Examples
        --------
        >>> import pathlib, tempfile
        >>> from bayeval.active.store import LabelStore
        >>> tmp = tempfile.TemporaryDirectory()
        >>> with LabelStore(pathlib.Path(tmp.name) / "s.db") as store:
        ...     store.add([1], [1])
        1
        >>> store.closed
        True
        >>> tmp.cleanup()
        """
        self._closed = True

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def __enter__(self) -> LabelStore:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def __bool__(self) -> bool:
        # an empty store is still a store: ``if store:`` must not depend on len()
        return True

    def __len__(self) -> int:
        with self._connect() as conn:
            return conn.execute("SELECT count(*) FROM labels").fetchone()[0]

    def __repr__(self) -> str:
        if self._closed:
            return f"LabelStore({str(self._path)!r}, closed)"
        try:
            with self._read() as conn:
                n, items = conn.execute(
                    "SELECT count(*), count(DISTINCT kind || ':' || item) FROM labels"
                ).fetchone()
                n_batches = conn.execute("SELECT count(*) FROM batches").fetchone()[0]
        except (sqlite3.Error, OSError) as exc:
            return f"LabelStore({str(self._path)!r}, unreadable: {exc})"
        return f"LabelStore({str(self._path)!r}: {n} labels of {items} items, {n_batches} batches)"

    # ---------------------------------------------------------------- writing

    def add(
        self,
        item_ids,
        values,
        *,
        annotator: str | None = None,
        batch: int | None = None,
        new_only: bool = False,
    ) -> int:
        """Append one label per item, all in one transaction, committed before returning.

        Everything is validated first; if anything is wrong nothing is written.

        Parameters
        ----------
        item_ids : sequence of int or str, or a single id
            The labeled items (numpy ints are converted to int).
        values : sequence, or a single value
            One label per item: 0 or 1 as ints, bools, floats 0.0/1.0 or the strings
            ``"0"``/``"1"``.
        annotator : str, optional
            Who labeled them, stored without the spaces around it (``"ana "`` is ``"ana"``,
            as ``bayeval label --annotator`` and the vetting page store it). ``None`` rows
            count as one anonymous annotator.
        batch : int, optional
            The id of the batch (from :meth:`new_batch`) these labels answer.
        new_only : bool, default False
            Skip every label that is already this annotator's latest label for the
            item (and repeats within the call), so that importing the same file twice
            writes nothing the second time. A label that *changes* the annotator's
            latest label is written. Used by ``bayeval label``.

        Returns
        -------
        int
            The number of rows written (``len(item_ids)``, fewer with ``new_only``).

        Raises
        ------
        ValueError
            Values not 0/1 (the message lists their positions and values), item ids
            that are not ints or strings, lengths that differ, an unknown batch, or an
            annotator that holds only spaces.

        Examples
        --------
        >>> import pathlib, tempfile
        >>> from bayeval.active.store import LabelStore
        >>> tmp = tempfile.TemporaryDirectory()
        >>> store = LabelStore(pathlib.Path(tmp.name) / "s.db")
        >>> store.add([3, 7], [True, 0], annotator="ana")
        2
        >>> store.add([8, 9], [1, 2])
        Traceback (most recent call last):
        ...
        ValueError: `values` must hold labels 0 or 1 (...); 1 of 2 are not (position 1: 2). ...
        >>> len(store)
        2
        >>> tmp.cleanup()
        """
        items = encode_items(item_ids, "item_ids")
        raw = _as_list(values, "values")
        if len(raw) != len(items):
            raise ValueError(
                f"`item_ids` has {len(items)} entries but `values` has {len(raw)}; pass "
                "exactly one value per item. Nothing was written."
            )
        encoded = [_encode_value(v) for v in raw]
        bad = [
            (i, _plain(v)) for i, (v, e) in enumerate(zip(raw, encoded, strict=True)) if e is None
        ]
        if bad:
            raise ValueError(
                f"`values` must hold labels {_VALUE_RULE}; {len(bad)} of {len(raw)} are not "
                f"({_listing(bad)}). Nothing was written: fix those values and call add() again."
            )
        annotator = _annotator_name(annotator)
        batch = _opt_batch(batch)
        if not items:
            return 0
        self._check_known(items, "item_ids")
        with self._write() as conn:
            if batch is not None:
                self._check_batch(conn, batch)
            pairs = list(zip(items, encoded, strict=True))
            if new_only:
                latest = dict(
                    ((kind, item), value)
                    for kind, item, value in conn.execute(
                        "SELECT kind, item, value FROM labels WHERE annotator IS ? ORDER BY id",
                        (annotator,),
                    )
                )
                fresh = []
                for key, v in pairs:
                    if latest.get(key) != v:
                        fresh.append((key, v))
                        latest[key] = v
                pairs = fresh
            now = _now(conn, "labels", "time")
            conn.executemany(
                "INSERT INTO labels (item, kind, value, annotator, batch, time) VALUES (?, ?, ?, ?, ?, ?)",
                [(text, kind, v, annotator, batch, now) for (kind, text), v in pairs],
            )
        return len(pairs)

    def new_batch(self, item_ids, *, strategy: str | None = None, note: str | None = None) -> int:
        """Record a batch of items proposed for vetting; return its id (1, 2, ...).

        Parameters
        ----------
        item_ids : sequence of int or str
            The proposed items, in the order they will be shown; no duplicates.
        strategy : str, optional
            How they were chosen (e.g. ``"random"``, ``"expected_change"``).
        note : str, optional
            Free text (e.g. the metric the batch was chosen for).

        Returns
        -------
        int
            The batch id, to pass to :meth:`add`.

        Examples
        --------
        >>> import pathlib, tempfile
        >>> from bayeval.active.store import LabelStore
        >>> tmp = tempfile.TemporaryDirectory()
        >>> store = LabelStore(pathlib.Path(tmp.name) / "s.db")
        >>> store.new_batch([4, 2, 9], strategy="random"), store.new_batch([5])
        (1, 2)
        >>> store.batch_items(1)
        [4, 2, 9]
        >>> tmp.cleanup()
        """
        items = encode_items(item_ids, "item_ids")
        seen, dup = set(), []
        for i, key in enumerate(items):
            if key in seen:
                dup.append((i, decode_item(*key)))
            seen.add(key)
        if dup:
            raise ValueError(
                f"`item_ids` of a batch must be unique; {len(dup)} repeat an earlier id "
                f"({_listing(dup)}). Drop the duplicates. Nothing was written."
            )
        strategy = opt_str(strategy, "strategy")
        note = opt_str(note, "note")
        self._check_known(items, "item_ids")
        with self._write() as conn:
            now = _now(conn, "batches", "created")
            cur = conn.execute(
                "INSERT INTO batches (created, strategy, note) VALUES (?, ?, ?)",
                (now, strategy, note),
            )
            batch = cur.lastrowid
            conn.executemany(
                "INSERT INTO batch_items (batch, pos, item, kind) VALUES (?, ?, ?, ?)",
                [(batch, pos, text, kind) for pos, (kind, text) in enumerate(items)],
            )
        return int(batch)

    def set_meta(self, key: str, value) -> None:
        """Store a small JSON-serializable setting (appended; the latest value wins).

        Parameters
        ----------
        key : str
            Name of the setting.
        value : JSON-serializable
            Numbers, strings, bools, None, lists and dicts of those (numpy scalars and
            arrays are converted). Tuples come back as lists.

        Examples
        --------
        >>> import pathlib, tempfile
        >>> from bayeval.active.store import LabelStore
        >>> tmp = tempfile.TemporaryDirectory()
        >>> store = LabelStore(pathlib.Path(tmp.name) / "s.db")
        >>> store.set_meta("metric", {"name": "precision_at_k", "k": 10})
        >>> store.get_meta("metric")["k"], store.get_meta("missing", default=0)
        (10, 0)
        >>> tmp.cleanup()
        """
        if not isinstance(key, str) or key == "":
            raise TypeError(
                f"`key` must be a non-empty string, got {type(key).__name__} {key!r:.80}."
            )
        try:
            json.dumps(value, default=_json_default)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"The value for meta key {key!r} must be JSON-serializable (numbers, strings, "
                f"bools, None, lists, dicts): {exc}. Convert it first."
            ) from exc
        with self._write() as conn:
            self._append_meta(conn, key, value)

    @staticmethod
    def _append_meta(conn: sqlite3.Connection, key: str, value) -> None:
        """Append a meta row inside the caller's write transaction (``value`` as JSON)."""
        text = json.dumps(value, default=_json_default)
        now = _now(conn, "meta", "time")
        conn.execute("INSERT INTO meta (key, value, time) VALUES (?, ?, ?)", (key, text, now))

    # ---------------------------------------------------------------- reading

    def get_meta(self, key: str, default=None):
        """The latest value stored under ``key`` by :meth:`set_meta`, or ``default``.

        Examples
        --------
        >>> import pathlib, tempfile
        >>> from bayeval.active.store import LabelStore
        >>> tmp = tempfile.TemporaryDirectory()
        >>> store = LabelStore(pathlib.Path(tmp.name) / "s.db")
        >>> store.set_meta("seed", 1); store.set_meta("seed", 2)
        >>> store.get_meta("seed"), store.meta()
        (2, {'seed': 2})
        >>> tmp.cleanup()
        """
        if not isinstance(key, str):
            raise TypeError(f"`key` must be a string, got {type(key).__name__} {key!r:.80}.")
        with self._connect() as conn:
            row = conn.execute(
                "SELECT value FROM meta WHERE key = ? ORDER BY id DESC LIMIT 1", (key,)
            ).fetchone()
        return default if row is None else json.loads(row[0])

    def meta(self) -> dict:
        """Every setting's latest value, as a dict (see :meth:`set_meta`).

        Examples
        --------
        >>> import pathlib, tempfile
        >>> from bayeval.active.store import LabelStore
        >>> tmp = tempfile.TemporaryDirectory()
        >>> store = LabelStore(pathlib.Path(tmp.name) / "s.db")
        >>> store.set_meta("a", [1, 2])
        >>> store.meta()
        {'a': [1, 2]}
        >>> tmp.cleanup()
        """
        with self._connect() as conn:
            rows = conn.execute("SELECT key, value FROM meta ORDER BY id").fetchall()
        return {key: json.loads(value) for key, value in rows}

    # ---------------------------------------------------------------- known items

    def register_items(self, item_ids, *, source: str | None = None) -> int:
        """Record the items this store's labels may refer to; returns how many are new.

        Once a store knows its items, :meth:`add` and :meth:`new_batch` refuse any other
        id (a typo, an id from another data set) with the list of unknown ids and a
        "did you mean" where one is close, and write nothing. Registering again adds the
        new ids to the known ones (the set only grows). ``bayeval select --store``,
        ``bayeval label --scores`` and :class:`~bayeval.active.ActiveSession` register
        the items of their data; a store that never had its items registered accepts any
        id, as before.

        Parameters
        ----------
        item_ids : sequence of int or str
            The ids of the evaluation set's items (e.g. ``data.item_ids``).
        source : str, optional
            Where they came from (e.g. the scores file), shown in error messages.

        Examples
        --------
        >>> import pathlib, tempfile
        >>> from bayeval.active.store import LabelStore
        >>> tmp = tempfile.TemporaryDirectory()
        >>> store = LabelStore(pathlib.Path(tmp.name) / "s.db")
        >>> store.register_items(["apple", "banana", "cherry"])
        3
        >>> store.add(["apple", "banan"], [1, 0])
        Traceback (most recent call last):
        ...
        ValueError: 1 item id(s) are not items of this store ...: 'banan' (did you mean 'banana'?). ...
        >>> len(store), store.known_items()
        (0, ['apple', 'banana', 'cherry'])
        >>> tmp.cleanup()
        """
        value, n_new = self._registration(item_ids, source)
        if value is not None:
            self.set_meta(_ITEMS_KEY, value)
        return n_new

    def _register_in(self, conn: sqlite3.Connection, item_ids, source, *, replace: bool = False) -> int:
        """:meth:`register_items` in the write transaction ``conn``; ``replace``: ``item_ids`` alone (a repair)."""
        value, n_new = self._registration(item_ids, source, replace=replace)
        if value is not None:
            self._append_meta(conn, _ITEMS_KEY, value)
        return n_new

    def _registration(self, item_ids, source, *, replace: bool = False) -> tuple[dict | None, int]:
        """The items record :meth:`register_items` would append (None: nothing new), and how many are new."""
        keys = list(dict.fromkeys(encode_items(item_ids, "item_ids")))
        source = opt_str(source, "source")
        known = self._known()
        new = [k for k in keys if known is None or k not in known]
        if replace and known is not None and set(known) - set(keys):  # ids dropped: the record is replaced
            sources = [source] if source is not None else (self._known_meta() or {}).get("sources", [])
            return {"ids": [decode_item(*k) for k in keys], "sources": sources}, len(new)
        if known is not None and not new:
            return None, 0
        old = self._known_meta()
        sources = list(old.get("sources", [])) if old else []
        if source is not None and source not in sources:
            sources.append(source)
        ids = list(old.get("ids", [])) if old else []
        ids += [decode_item(*k) for k in new]
        return {"ids": ids, "sources": sources}, len(new)

    def known_items(self) -> list | None:
        """The items registered with :meth:`register_items`, or None if none were."""
        known = self._known()
        return None if known is None else [decode_item(*k) for k in known]

    def _known_meta(self) -> dict | None:
        value = self.get_meta(_ITEMS_KEY)
        return value if isinstance(value, dict) else None

    def _known(self) -> dict | None:
        """``{(kind, text): None}`` of the registered items (cached), or None."""
        with self._connect() as conn:
            row = conn.execute(
                "SELECT id FROM meta WHERE key = ? ORDER BY id DESC LIMIT 1", (_ITEMS_KEY,)
            ).fetchone()
            if row is None:
                return None
            if self._known_cache is not None and self._known_cache[0] == row[0]:
                return self._known_cache[1]
            text = conn.execute("SELECT value FROM meta WHERE id = ?", (row[0],)).fetchone()[0]
        value = json.loads(text)
        keys = {}
        for v in value.get("ids", []) if isinstance(value, dict) else []:
            enc = encode_item(v)
            if enc is not None:
                keys[enc] = None
        self._known_cache = (row[0], keys)
        return keys

    def _sources_text(self) -> str:
        meta = self._known_meta() or {}
        sources = meta.get("sources") or []
        return f", registered from {', '.join(map(str, sources))}" if sources else ""

    def _check_known(self, keys: list[tuple[str, str]], name: str) -> None:
        known = self._known()
        if known is None:
            return
        unknown = [k for k in dict.fromkeys(keys) if k not in known]
        if unknown:
            raise ValueError(
                f"{len(unknown)} item id(s) are not items of this store ({len(known)} known "
                f"items{self._sources_text()}): {_unknown_text(unknown, known)}. Nothing "
                f"was written. Fix the ids in `{name}` (5 and '5' are different items); if "
                "they are new items, add them with register_items() first."
            )

    def unknown_labels(self, item_ids=None):
        """The label rows whose item is not one of ``item_ids`` (default: the registered items).

        A store written before its items were registered (or by an older bayeval) may hold
        labels of mistyped ids; :func:`repair` sets them aside.

        Returns
        -------
        pandas.DataFrame
            The rows, with the columns of :meth:`labels`; empty when every labeled item
            is known, or when the store knows no items and ``item_ids`` is None.
        """
        known = self._known() if item_ids is None else dict.fromkeys(encode_items(item_ids, "item_ids"))
        rows = self._label_rows()
        if known is None:
            rows = []
        return self._labels_frame([r for r in rows if (r[1], r[2]) not in known])

    def _check_batch(self, conn: sqlite3.Connection, batch: int) -> None:
        if conn.execute("SELECT 1 FROM batches WHERE id = ?", (batch,)).fetchone() is None:
            n = conn.execute("SELECT count(*) FROM batches").fetchone()[0]
            have = f"batches 1..{n}" if n else "no batches yet"
            raise ValueError(
                f"Unknown batch {batch}: this store has {have} (see batches()). Create the "
                "batch with new_batch() first, or pass batch=None. Nothing was written."
            )

    def _label_rows(self) -> list[tuple]:
        with self._connect() as conn:
            return conn.execute(
                "SELECT id, kind, item, value, annotator, batch, time FROM labels ORDER BY id"
            ).fetchall()

    def labels(self):
        """Every label row ever written, in write order.

        Returns
        -------
        pandas.DataFrame
            Columns ``id`` (int64, the write order), ``item`` (the id as it was given:
            int or str), ``value`` (int8), ``annotator`` (str or None), ``batch``
            (nullable Int64), ``time`` (datetime64, UTC).

        Examples
        --------
        >>> import pathlib, tempfile
        >>> from bayeval.active.store import LabelStore
        >>> tmp = tempfile.TemporaryDirectory()
        >>> store = LabelStore(pathlib.Path(tmp.name) / "s.db")
        >>> store.add([7, "x"], [1, 0], annotator="ana")
        2
        >>> store.labels()[["id", "item", "value", "annotator"]].values.tolist()
        [[1, 7, 1, 'ana'], [2, 'x', 0, 'ana']]
        >>> tmp.cleanup()
        """
        return self._labels_frame(self._label_rows())

    @staticmethod
    def _labels_frame(rows: list[tuple]):
        import pandas as pd

        cols = list(zip(*rows, strict=True)) if rows else [()] * 7
        return pd.DataFrame(
            {
                "id": pd.Series(cols[0], dtype="int64"),
                "item": pd.Series(
                    [decode_item(k, t) for k, t in zip(cols[1], cols[2], strict=True)],
                    dtype=object,
                ),
                "value": pd.Series(cols[3], dtype="int8"),
                "annotator": pd.Series(cols[4], dtype=object),
                "batch": pd.Series(cols[5], dtype="Int64"),
                "time": pd.to_datetime(
                    pd.Series(cols[6], dtype=object), utc=True, format="ISO8601"
                ),
            }
        )

    @staticmethod
    def _resolve(rows: list[tuple]) -> tuple[dict, set]:
        """Apply the conflict rule to label rows ordered by id.

        Returns ``{(kind, item): value}`` in order of each item's first label, and the
        set of row ids that voted (each annotator's latest label per item).
        """
        latest: dict[tuple, tuple[int, int]] = {}
        order: dict[tuple, None] = {}
        for row_id, kind, item, value, annotator, *_ in rows:
            key = (kind, item)
            order.setdefault(key, None)
            latest[(key, annotator)] = (row_id, value)  # rows come in id order: last wins
        tally: dict[tuple, list[int]] = {}  # key -> [votes for 1, votes, last id, last value]
        for (key, _), (row_id, value) in latest.items():
            t = tally.setdefault(key, [0, 0, -1, 0])
            t[0] += value
            t[1] += 1
            if row_id > t[2]:
                t[2], t[3] = row_id, value
        resolved = {}
        for key in order:
            ones, n, _, last = tally[key]
            resolved[key] = 1 if 2 * ones > n else 0 if 2 * ones < n else last
        return resolved, {row_id for row_id, _ in latest.values()}

    def resolved(self, *, aliases=None):
        """One label per labeled item, by the conflict rule (see the class Notes).

        Parameters
        ----------
        aliases : dict, optional
            ``{stored item id: the item id it stands for}``: the labels of both are one
            item's, under the conflict rule together (``bayeval select/fit --store`` read the
            text id ``'261'``, typed for a scores file numbered by row, as the row 261).

        Returns
        -------
        pandas.Series
            int8 values, indexed by item id (an object index holding the ids as given),
            in order of each item's first label.

        Examples
        --------
        >>> import pathlib, tempfile
        >>> from bayeval.active.store import LabelStore
        >>> tmp = tempfile.TemporaryDirectory()
        >>> store = LabelStore(pathlib.Path(tmp.name) / "s.db")
        >>> _ = store.add(["a", "b"], [1, 1], annotator="ana")
        >>> _ = store.add(["a"], [0], annotator="ana")      # ana corrects herself
        >>> _ = store.add(["b", "b"], [0, 0], annotator="ben")  # ben's latest counts once
        >>> store.resolved().to_dict()                     # b: ana 1, ben 0 -> tie -> ben
        {'a': 0, 'b': 0}
        >>> tmp.cleanup()
        """
        import pandas as pd

        rows = self._label_rows()
        if aliases:
            keys = {encode_item(k): encode_item(v) for k, v in aliases.items()}
            rows = [(r[0], *keys.get((r[1], r[2]), (r[1], r[2])), *r[3:]) for r in rows]
        resolved, _ = self._resolve(rows)
        index = pd.Index([decode_item(*key) for key in resolved], dtype=object, name="item")
        return pd.Series(list(resolved.values()), index=index, dtype="int8", name="value")

    def conflicts(self, *, counted_only: bool = False):
        """Every label row of the items whose labels disagree.

        Parameters
        ----------
        counted_only : bool, default False
            If False, an item is listed when any two of its rows differ (including an
            annotator's own correction). If True, only when the labels that vote
            (each annotator's latest) still differ.

        Returns
        -------
        pandas.DataFrame
            The columns of :meth:`labels` plus ``counted`` (bool: the row is its
            annotator's latest for the item, so it votes) and ``resolved`` (int8: the
            item's label under the conflict rule), grouped by item (in order of first
            label) and in write order within an item.

        Examples
        --------
        >>> import pathlib, tempfile
        >>> from bayeval.active.store import LabelStore
        >>> tmp = tempfile.TemporaryDirectory()
        >>> store = LabelStore(pathlib.Path(tmp.name) / "s.db")
        >>> _ = store.add([1, 2], [1, 1], annotator="ana")
        >>> _ = store.add([1, 2], [0, 1], annotator="ben")
        >>> _ = store.add([1], [1], annotator="cai")
        >>> store.conflicts()[["item", "annotator", "value", "resolved"]].values.tolist()
        [[1, 'ana', 1, 1], [1, 'ben', 0, 1], [1, 'cai', 1, 1]]
        >>> tmp.cleanup()
        """
        rows = self._label_rows()
        resolved, counted = self._resolve(rows)
        values: dict[tuple, set] = {}
        for row_id, kind, item, value, *_ in rows:
            if not counted_only or row_id in counted:
                values.setdefault((kind, item), set()).add(value)
        disputed = {key for key, seen in values.items() if len(seen) > 1}
        rank = {key: r for r, key in enumerate(resolved)}
        keep = sorted(
            (r for r in rows if (r[1], r[2]) in disputed), key=lambda r: (rank[(r[1], r[2])], r[0])
        )
        frame = self._labels_frame(keep)
        frame["counted"] = [r[0] in counted for r in keep]
        frame["counted"] = frame["counted"].astype(bool)
        frame["resolved"] = [resolved[(r[1], r[2])] for r in keep]
        frame["resolved"] = frame["resolved"].astype("int8")
        return frame

    def label_vector(self, item_ids):
        """Resolved labels aligned to ``item_ids``: 1.0/0.0, NaN where not labeled.

        The ``labels`` argument of :class:`bayeval.EvalData` for items in this order.

        Examples
        --------
        >>> import pathlib, tempfile
        >>> from bayeval.active.store import LabelStore
        >>> tmp = tempfile.TemporaryDirectory()
        >>> store = LabelStore(pathlib.Path(tmp.name) / "s.db")
        >>> _ = store.add(["b", "c"], [1, 0])
        >>> store.label_vector(["a", "b", "c"]).tolist()
        [nan, 1.0, 0.0]
        >>> tmp.cleanup()
        """
        import numpy as np

        keys = encode_items(item_ids, "item_ids")
        resolved, _ = self._resolve(self._label_rows())
        return np.array([resolved.get(key, np.nan) for key in keys], dtype=np.float64)

    def batches(self):
        """Every batch recorded by :meth:`new_batch`, with its progress.

        Returns
        -------
        pandas.DataFrame
            Columns ``batch`` (id), ``created`` (datetime64, UTC), ``strategy``,
            ``note``, ``n_items`` (items proposed) and ``n_labeled`` (of those, how many
            have at least one label, from any batch or annotator).

        Examples
        --------
        >>> import pathlib, tempfile
        >>> from bayeval.active.store import LabelStore
        >>> tmp = tempfile.TemporaryDirectory()
        >>> store = LabelStore(pathlib.Path(tmp.name) / "s.db")
        >>> b = store.new_batch(["a", "b"], strategy="random")
        >>> _ = store.add(["a"], [1], batch=b)
        >>> store.batches()[["batch", "strategy", "n_items", "n_labeled"]].values.tolist()
        [[1, 'random', 2, 1]]
        >>> tmp.cleanup()
        """
        import pandas as pd

        with self._connect() as conn:
            rows = conn.execute(
                """SELECT b.id, b.created, b.strategy, b.note, count(bi.pos),
                          coalesce(sum(EXISTS (SELECT 1 FROM labels l
                                               WHERE l.kind = bi.kind AND l.item = bi.item)), 0)
                   FROM batches b LEFT JOIN batch_items bi ON bi.batch = b.id
                   GROUP BY b.id ORDER BY b.id"""
            ).fetchall()
        cols = list(zip(*rows, strict=True)) if rows else [()] * 6
        return pd.DataFrame(
            {
                "batch": pd.Series(cols[0], dtype="int64"),
                "created": pd.to_datetime(
                    pd.Series(cols[1], dtype=object), utc=True, format="ISO8601"
                ),
                "strategy": pd.Series(cols[2], dtype=object),
                "note": pd.Series(cols[3], dtype=object),
                "n_items": pd.Series(cols[4], dtype="int64"),
                "n_labeled": pd.Series(cols[5], dtype="int64"),
            }
        )

    def batch_items(self, batch: int) -> list:
        """The items proposed in ``batch``, in their order.

        Examples
        --------
        >>> import pathlib, tempfile
        >>> from bayeval.active.store import LabelStore
        >>> tmp = tempfile.TemporaryDirectory()
        >>> store = LabelStore(pathlib.Path(tmp.name) / "s.db")
        >>> store.batch_items(store.new_batch(["z", "a"]))
        ['z', 'a']
        >>> tmp.cleanup()
        """
        batch = _opt_batch(batch)
        if batch is None:
            raise TypeError(
                "`batch` must be a batch id (an int returned by new_batch()), got None."
            )
        with self._read() as conn:
            self._check_batch(conn, batch)
            rows = conn.execute(
                "SELECT kind, item FROM batch_items WHERE batch = ? ORDER BY pos", (batch,)
            ).fetchall()
        return [decode_item(k, t) for k, t in rows]

    def pending(self, batch: int | None = None) -> list:
        """Items of the most recent batch (or of ``batch``) that nobody has labeled yet.

        After an interruption, label these to finish the batch. An empty list when
        there is no batch or it is complete.

        Examples
        --------
        >>> import pathlib, tempfile
        >>> from bayeval.active.store import LabelStore
        >>> tmp = tempfile.TemporaryDirectory()
        >>> store = LabelStore(pathlib.Path(tmp.name) / "s.db")
        >>> store.pending()
        []
        >>> b = store.new_batch([10, 11, 12])
        >>> _ = store.add([11], [0], batch=b)
        >>> store.pending()
        [10, 12]
        >>> tmp.cleanup()
        """
        batch = _opt_batch(batch)
        with self._read() as conn:
            if batch is None:
                batch = conn.execute("SELECT max(id) FROM batches").fetchone()[0]
                if batch is None:
                    return []
            else:
                self._check_batch(conn, batch)
            rows = conn.execute(
                """SELECT bi.kind, bi.item FROM batch_items bi
                   WHERE bi.batch = ? AND NOT EXISTS
                       (SELECT 1 FROM labels l WHERE l.kind = bi.kind AND l.item = bi.item)
                   ORDER BY bi.pos""",
                (batch,),
            ).fetchall()
        return [decode_item(k, t) for k, t in rows]
