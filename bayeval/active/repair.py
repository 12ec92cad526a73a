"""Getting labels out of a damaged store, and setting aside the labels of unknown items.

:func:`export_readable` saves every label row that can still be read from a damaged
store; :func:`repair` takes the labels of item ids a store does not know (a typo) out of
it, keeping every label it sets aside in a CSV beside the store and in the store's
record. ``bayeval export-labels`` and ``bayeval repair-store`` call them.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import sqlite3
from datetime import UTC, datetime

from .store import (
    LabelStore,
    StoreFormatError,
    decode_item,
    encode_items,
    opt_str,
)

__all__ = ["EXPORT_COLUMNS", "RepairRefused", "export_readable", "import_export", "is_export", "repair"]

#: the columns of :func:`export_readable`'s CSV, in order
EXPORT_COLUMNS = ("id", "item", "kind", "value", "annotator", "batch", "time")


def export_readable(path, out) -> dict:
    """Save every label row that can still be read from a (possibly damaged) store to CSV.

    Reads the ``labels`` table row by row, skipping past rows SQLite cannot read, and
    writes ``id, item, kind, value, annotator, batch, time`` to ``out``. The store's
    file is opened read-only and never changed. Import the result into a new store
    with :func:`import_export` (``bayeval label NEW_STORE OUT.csv``), which keeps every
    row in order with its annotator and each id's kind.

    Parameters
    ----------
    path : str or path-like
        The store's file.
    out : str or path-like
        The CSV file to write (must not exist yet).

    Returns
    -------
    dict
        ``rows`` (how many were saved), ``max_id`` (the highest row id seen, or None)
        and ``errors`` (the read errors met, at most 10).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from bayeval.active.store import LabelStore
    >>> from bayeval.active.repair import export_readable
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> _ = LabelStore(tmp / "s.db").add(["a", "b"], [1, 0], annotator="ana")
    >>> export_readable(tmp / "s.db", tmp / "labels.csv")["rows"]
    2
    >>> (tmp / "labels.csv").read_text().splitlines()[1].split(",")[:5]
    ['1', 'a', 'str', '1', 'ana']
    """
    import csv

    src = pathlib.Path(path).expanduser().absolute()
    dst = pathlib.Path(out).expanduser()
    if not src.is_file():
        raise FileNotFoundError(f"{str(src)!r}: no such store file.")
    if dst.exists():
        raise FileExistsError(f"{str(dst)!r} exists already; give a new file name for the export.")
    if not dst.absolute().parent.is_dir():
        raise FileNotFoundError(
            f"The folder {str(dst.absolute().parent)!r} of the export does not exist; create it first."
        )
    conn = sqlite3.connect(f"{src.as_uri()}?mode=ro", uri=True)
    rows: list[tuple] = []
    errors: list[str] = []
    last = 0
    try:
        try:
            top = conn.execute("SELECT max(id) FROM labels").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            text = str(exc)
            if "not a database" in text or "no such table" in text:  # not damage: not a store
                raise StoreFormatError(
                    f"{str(src)!r} is not a bayeval label store ({text}): there are no labels to "
                    "export, and nothing was written. Check the path."
                ) from exc
            errors.append(text)
            top = None
        while True:
            query = (
                "SELECT id, item, kind, value, annotator, batch, time FROM labels "
                "WHERE id > ? ORDER BY id"
            )
            try:
                for row in conn.execute(query, (last,)):
                    rows.append(row)
                    last = row[0]
                break
            except sqlite3.DatabaseError as exc:
                if len(errors) < 10:
                    errors.append(str(exc))
                # skip past the unreadable part: try further ahead, bounded by max(id)
                step = 1
                while True:
                    probe = last + step
                    if top is not None and probe > top or step > 1 << 40:
                        probe = None
                        break
                    try:
                        conn.execute(query + " LIMIT 1", (probe,)).fetchall()
                        break
                    except sqlite3.DatabaseError:
                        step *= 2
                if probe is None:
                    break
                last = probe
    finally:
        conn.close()
    with open(dst, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(list(EXPORT_COLUMNS))
        w.writerows(rows)
    return {"rows": len(rows), "max_id": top, "errors": errors}


def is_export(path) -> bool:
    """Is ``path`` a CSV written by :func:`export_readable` (``bayeval export-labels``), by its header?

    A spreadsheet's UTF-8 byte-order mark and line ends do not matter.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from bayeval.active.repair import EXPORT_COLUMNS, is_export
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "labels.csv"
    >>> _ = path.write_text("\\ufeff" + ",".join(EXPORT_COLUMNS) + "\\r\\n", encoding="utf-8")
    >>> is_export(path), is_export(path.parent / "missing.csv")
    (True, False)
    """
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:  # a spreadsheet's byte-order mark dropped
            return tuple(c.strip() for c in fh.readline().split(",")) == EXPORT_COLUMNS
    except (OSError, UnicodeDecodeError):
        return False


def import_export(export, store) -> dict:
    """Write every row of an :func:`export_readable` CSV into a new, empty label store.

    Row by row in the order they were written (so an annotator's correction stays her
    latest label), each with its annotator, and each item id with its kind (``5`` stays
    the number 5, ``"007"`` stays text); the rows get the time of the import. Batches are not restored: they belonged to the
    old store's selections (the labels keep their values and annotators; ``bayeval select
    --store`` starts new batches). ``bayeval label STORE EXPORT.csv`` does this when the
    file has the export's columns.

    Parameters
    ----------
    export : str or path-like
        The CSV written by :func:`export_readable` (``bayeval export-labels``).
    store : str or path-like
        The new store's file; created if missing, refused if it already holds labels.

    Returns
    -------
    dict
        ``rows`` written, ``items`` and ``annotators`` (how many distinct ones).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from bayeval.active.store import LabelStore
    >>> from bayeval.active.repair import export_readable, import_export
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> old = LabelStore(tmp / "old.db")
    >>> _ = old.add([3, 5], [1, 0], annotator="ana"); _ = old.add([5], [1], annotator="ana")
    >>> _ = export_readable(tmp / "old.db", tmp / "labels.csv")
    >>> import_export(tmp / "labels.csv", tmp / "new.db")
    {'rows': 3, 'items': 2, 'annotators': 1}
    >>> LabelStore(tmp / "new.db").resolved().to_dict()
    {3: 1, 5: 1}
    """
    import csv

    src = pathlib.Path(export).expanduser()
    with open(src, newline="", encoding="utf-8-sig") as fh:  # a spreadsheet's byte-order mark dropped
        reader = csv.reader(fh)
        header = tuple(next(reader, ()))
        if header != EXPORT_COLUMNS:
            raise ValueError(f"{str(src)!r} is not an export of `bayeval export-labels` (its columns are "
                             f"{list(header)}, expected {list(EXPORT_COLUMNS)}).")
        rows = []
        for line, row in enumerate(reader, start=2):
            rec = dict(zip(EXPORT_COLUMNS, row, strict=False))
            if rec.get("kind") not in ("int", "str") or rec.get("value") not in ("0", "1"):
                raise ValueError(f"{str(src)!r}, line {line}: expected kind int or str and value 0 or 1, got "
                                 f"{rec.get('kind')!r} and {rec.get('value')!r}; the export was changed by hand?")
            rows.append((int(rec["id"]), decode_item(rec["kind"], rec["item"]), int(rec["value"]),
                         rec["annotator"] or None))
    rows.sort(key=lambda r: r[0])  # the order they were written in
    with LabelStore(store) as dst:
        if len(dst):
            raise ValueError(f"{str(store)!r} holds {len(dst)} label(s) already: import the export into a new "
                             "store file, so that no row is written twice.")
        start = 0
        while start < len(rows):  # consecutive rows of one annotator in one transaction, in order
            end, items = start, set()
            while end < len(rows) and rows[end][3] == rows[start][3] and rows[end][1] not in items:
                items.add(rows[end][1])  # an item again (a correction) starts the next transaction
                end += 1
            chunk = rows[start:end]
            dst.add([r[1] for r in chunk], [r[2] for r in chunk], annotator=chunk[0][3])
            start = end
    return {"rows": len(rows), "items": len({r[1] for r in rows}), "annotators": len({r[3] for r in rows})}


class RepairRefused(ValueError):
    """:func:`repair` refused, changing nothing: it would keep none of the store's labels, or the
    store's registered items share none with the ``item_ids`` given -- mostly the data read by
    the wrong ids (a scores file numbered by row against a store of an id column's ids, or the
    other way round), not typos. ``force=True`` repairs all the same.

    Attributes
    ----------
    reason : str
        ``"none kept"`` (every label would be set aside) or ``"other items"`` (the registered
        items and ``item_ids`` share none).
    unknown : list
        The ids whose labels or batch entries would be set aside.
    registered : list or None
        The items the store has registered (None: it never registered any).
    labels : int
        The store's label rows.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from bayeval.active.store import LabelStore
    >>> from bayeval.active.repair import RepairRefused, repair
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> LabelStore(tmp / "s.db").add(["a", "b"], [1, 0])
    2
    >>> try:
    ...     repair(tmp / "s.db", [0, 1, 2])  # the rows of a file, against a store of named ids
    ... except RepairRefused as exc:
    ...     exc.reason, exc.unknown, len(LabelStore(tmp / "s.db"))
    ('none kept', ['a', 'b'], 2)
    """

    def __init__(self, message: str, *, reason: str, unknown: list, registered: list | None, labels: int):
        super().__init__(message)
        self.reason, self.unknown, self.registered, self.labels = reason, unknown, registered, labels


def repair(path, item_ids=None, *, source: str | None = None, set_aside=None, also_known=(),
           force: bool = False) -> dict:
    """Set aside the labels of unknown items in a store, keeping every label; return what moved.

    A store written before it knew its items (or by an older bayeval) may hold labels of
    item ids that are not in the data -- a typo in a labels file. Such a store is
    refused by ``bayeval select --store`` and :class:`~bayeval.active.ActiveSession`.
    This takes those labels out of it, and keeps every one of them:

    * the label rows of unknown items (and unknown items of recorded batches) are
      written to the CSV ``set_aside`` (default ``STORE.set-aside-TIME.csv`` beside the
      store; columns ``record, id, item, kind, value, annotator, batch, time``) and to
      the repaired store's meta under ``"set_aside"``;
    * a copy of the store as the repair found it is kept as ``STORE.before-repair-TIME``;
    * every other row -- labels with their ids, annotators, times and batches, the
      batches, the settings -- stays as it was, and the items of ``item_ids`` become the
      store's items (replacing those it registered before), so that later typos, and the
      ids set aside, are refused.

    A repair that would set every label aside, or data whose items share none with the
    items the store registered, is refused (:class:`RepairRefused`, nothing changed): that
    is mostly the data read by the wrong ids, not typos. ``force=True`` repairs all the same.

    Fix the set-aside ids in the CSV and import it with ``bayeval label STORE FILE.csv
    --id item --label value`` (one run per annotator, with ``--annotator``).

    The repair may run while other programs use the store (``bayeval vet``, ``bayeval
    label``...): it holds the store's write lock from its first read to its last change
    and changes the file in place, so their writes wait for it and then land in the
    repaired store. A writer that waits longer than its ``timeout`` (30 s by default)
    fails with an error saying that nothing was written, and can write again; a label
    written just before the repair starts is read by it, and kept or set aside with the
    others.

    Parameters
    ----------
    path : str or path-like
        The store's file.
    item_ids : sequence of int or str, optional
        The items of the data (e.g. ``data.item_ids``). Default: the items the store
        has registered (an error if it has none).
    source : str, optional
        Where ``item_ids`` came from, kept with them.
    set_aside : str or path-like, optional
        Where to write the set-aside rows (must not exist).
    also_known : sequence of int or str, optional
        Ids whose labels are kept though they are not in ``item_ids``, and not registered
        (``bayeval repair-store``: the text id ``'261'`` typed for row 261 of a scores file
        numbered by row, which the commands read as that row).
    force : bool, default False
        Repair even when no label would be kept, or when the store's registered items share
        none with ``item_ids`` (refused otherwise, with :class:`RepairRefused`). Every label
        set aside is kept, in the CSV and the backup, as always.

    Raises
    ------
    RepairRefused
        A repair that keeps no label, or of data sharing no item with the store's, without ``force``.

    Returns
    -------
    dict
        ``labels`` (label rows set aside), ``batch_items`` (batch entries set aside),
        ``items`` (the distinct unknown ids), ``kept`` (label rows kept), ``set_aside``
        (the CSV's path, or None when nothing was set aside) and ``backup`` (the
        copy of the store as it was, or None when nothing needed repair).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from bayeval.active.store import LabelStore
    >>> from bayeval.active.repair import repair
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> LabelStore(tmp / "s.db").add(["a", "b", "bb"], [1, 0, 1], annotator="ana")  # "bb": a typo
    3
    >>> res = repair(tmp / "s.db", ["a", "b", "c"])
    >>> res["items"], res["kept"], res["set_aside"].endswith(".csv")
    (['bb'], 2, True)
    >>> LabelStore(tmp / "s.db").resolved().to_dict()
    {'a': 1, 'b': 0}
    """
    store = LabelStore(path)
    try:
        store.check_writable()
        given = None if item_ids is None else list(dict.fromkeys(encode_items(item_ids, "item_ids")))
        source = None if item_ids is None else opt_str(source, "source")
        also = list(encode_items(also_known, "also_known"))
        # One write transaction from the first read to the last change, on the store's own file:
        # another program's write waits for it (up to that program's `timeout`, then it fails
        # saying that nothing was written), so no label can land between the read and the change.
        with store._connect() as conn, store._transaction(conn, "EXCLUSIVE"):
            return _repair_locked(store, conn, given, source, also, set_aside, bool(force))
    finally:
        store.close()


def _repair_locked(store: LabelStore, conn, given, source, also, set_aside, force: bool) -> dict:
    """:func:`repair` inside its write transaction ``conn`` on ``store``."""
    src = store.path
    registered = store._known()
    known = dict.fromkeys(given) if given is not None else registered
    if known is None:
        raise ValueError(
            f"The label store {str(src)!r} does not know its items (they were never "
            "registered), so it cannot tell which labels are unknown: pass the data's "
            "item ids (`bayeval repair-store STORE --scores SCORES --score COL`)."
        )
    labels = conn.execute(
        "SELECT id, item, kind, value, annotator, batch, time FROM labels ORDER BY id"
    ).fetchall()
    batch_items = conn.execute("SELECT batch, pos, item, kind FROM batch_items ORDER BY batch, pos").fetchall()
    kept = {**known, **dict.fromkeys(also)}
    bad_labels = [r for r in labels if (r[2], r[1]) not in kept]
    bad_batch = [r for r in batch_items if (r[3], r[2]) not in kept]
    unknown = list(dict.fromkeys([(r[2], r[1]) for r in bad_labels] + [(r[3], r[2]) for r in bad_batch]))
    result = {
        "labels": len(bad_labels),
        "batch_items": len(bad_batch),
        "items": [decode_item(*k) for k in unknown],
        "kept": len(labels) - len(bad_labels),
        "set_aside": None,
        "backup": None,
    }
    if not force:
        _refuse_wrong_ids(src, labels, bad_labels, unknown, registered, given)
    ids = [decode_item(*k) for k in known]
    if not unknown:  # nothing to set aside: registering the items is the whole repair
        store._register_in(conn, ids, source, replace=given is not None)
        return result
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    aside = pathlib.Path(set_aside) if set_aside is not None else src.with_name(f"{src.name}.set-aside-{stamp}.csv")
    backup = src.with_name(f"{src.name}.before-repair-{stamp}")
    for p in (aside, backup):
        if p.exists():
            raise FileExistsError(f"{str(p)!r} exists already; move it away and repair again.")
    records = [("label", *r) for r in bad_labels] + [
        ("batch item", None, item, kind, None, None, batch, None) for batch, _, item, kind in bad_batch
    ]
    _write_set_aside(aside, records)
    _write_backup(store, backup, aside)
    set_aside_meta = {
        "time": datetime.now(UTC).isoformat(timespec="microseconds"),
        "csv": str(aside),
        "backup": str(backup),
        "rows": [list(r) for r in records],
    }
    # the store is append-only: its delete guards are lifted inside this transaction only
    guards = conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name IN "
        "('labels_no_delete', 'batch_items_no_delete')"
    ).fetchall()
    for name, _ in guards:
        conn.execute(f"DROP TRIGGER {name}")
    conn.executemany("DELETE FROM labels WHERE id = ?", [(r[0],) for r in bad_labels])
    touched = sorted({r[0] for r in bad_batch})
    conn.executemany("DELETE FROM batch_items WHERE batch = ?", [(b,) for b in touched])
    renumbered = []
    for batch in touched:  # the batch's other items, in their order, numbered from 0
        good = [(item, kind) for b, _, item, kind in batch_items if b == batch and (kind, item) in kept]
        renumbered += [(batch, pos, item, kind) for pos, (item, kind) in enumerate(good)]
    conn.executemany("INSERT INTO batch_items (batch, pos, item, kind) VALUES (?, ?, ?, ?)", renumbered)
    for _, sql in guards:
        conn.execute(sql)
    store._append_meta(conn, "set_aside", set_aside_meta)
    store._register_in(conn, ids, source, replace=given is not None)
    result.update(set_aside=str(aside), backup=str(backup))
    return result


def _refuse_wrong_ids(src, labels, bad_labels, unknown, registered, given) -> None:
    """Raise :class:`RepairRefused` for a repair that keeps no label, or whose ``given`` items
    share none with the ``registered`` ones (compared as text: ``5`` and ``'5'`` alike)."""
    shown = [decode_item(*k) for k in unknown]
    reg = None if registered is None else [decode_item(*k) for k in registered]
    listed = ", ".join(map(repr, shown[:5])) + (f" and {len(shown) - 5} more" if len(shown) > 5 else "")
    if labels and len(bad_labels) == len(labels):
        raise RepairRefused(
            f"Repairing the label store {str(src)!r} would set aside every one of its {len(labels)} label row(s) "
            f"({len(shown)} item(s): {listed}) and keep none: the item ids given are mostly read the wrong way "
            "(a file numbered by row against a store of an id column's ids, or the other way round). Nothing "
            "was changed. Give the ids the store's labels use; if every label really is of a mistyped id, "
            "repair with force=True (`bayeval repair-store ... --force`).",
            reason="none kept", unknown=shown, registered=reg, labels=len(labels))
    if registered and given is not None and not {t for _, t in registered} & {t for _, t in given}:
        raise RepairRefused(
            f"The label store {str(src)!r} knows {len(registered)} item(s) ({', '.join(map(repr, reg[:5]))}"
            f"{' ...' if len(reg) > 5 else ''}), none of which is among the {len(given)} item id(s) given: "
            "they are another data set's, or the same data read by other ids (row numbers against an id "
            "column's). Nothing was changed. Give the ids the store was made with; to make the given ids "
            "the store's items all the same, repair with force=True (`bayeval repair-store ... --force`).",
            reason="other items", unknown=shown, registered=reg, labels=len(labels))


def _write_set_aside(aside: pathlib.Path, records: list) -> None:
    """The set-aside rows as CSV, on disk (fsync-ed) before the store changes."""
    import csv

    with open(aside, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["record", "id", "item", "kind", "value", "annotator", "batch", "time"])
        w.writerows(records)
        fh.flush()
        os.fsync(fh.fileno())


def _write_backup(store: LabelStore, backup: pathlib.Path, aside: pathlib.Path) -> None:
    """Copy the store, as the repair read it, to ``backup`` (fsync-ed).

    Called while the repair holds the write lock and before it changes anything, so the
    last committed state another connection reads is the one the repair read.
    """
    try:
        with store._connect() as reader:
            reader.execute("VACUUM INTO ?", (str(backup),))
        with open(backup, "rb") as fh:
            os.fsync(fh.fileno())
    except (OSError, sqlite3.Error) as exc:
        with contextlib.suppress(OSError):  # a partial copy: the store itself is intact
            backup.unlink()
        raise OSError(
            f"Could not write the backup {str(backup)!r} of the label store ({exc}); the store was not "
            f"changed ({str(aside)!r} can be deleted). Check the disk space and repair again."
        ) from exc
