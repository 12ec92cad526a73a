"""The command line's errors and its use of label stores: the labels typed into a store
(`bayeval select --store`, `bayeval label`, the vetting page) over a scores file's, with the
checks every command shares (unknown ids refused with the repair command, disagreements named)."""

from __future__ import annotations

import sys
from pathlib import Path


class CLIError(Exception):
    """An error in the command's input, reported without a traceback."""


def say_overridden_labels(data, resolved, args, *, label=None, scores=None) -> None:
    """The store's labels replace the scores file's: say so where the two disagree (a label
    typed into the store later, or a wrong column in the file), never silently."""
    import numpy as np

    pos = {str(i): j for j, i in enumerate(data.item_ids.tolist())}
    differ = []
    for item, value in resolved.items():
        j = pos.get(str(item))
        if j is not None and not np.isnan(data.labels[j]) and float(data.labels[j]) != float(value):
            differ.append(f"{item} (file {int(data.labels[j])}, store {int(value)})")
    if differ:
        shown = ", ".join(differ[:10]) + (f" and {len(differ) - 10} more" if len(differ) > 10 else "")
        print(f"note: {args.store} holds labels that differ from column {label or args.label!r} of "
              f"{scores or args.scores} for "
              f"{len(differ)} item(s): {shown}. The store's labels are used (they are the ones typed with "
              "`bayeval label` or the vetting page); if the file is right, correct the store with `bayeval label`.",
              file=sys.stderr)


def check_strays(store, data, args, *, scores=None, score=None, doing: str = "Nothing was fitted") -> None:
    """Refuse a store holding labels of items the scores file does not have (a typo'd id, another
    evaluation set): say which, and the command that sets them aside keeping every label."""
    ids = data.item_ids.tolist()
    strays = store.unknown_labels(ids)
    if len(strays) and data.item_ids.dtype.kind == "U":  # 5 written by an older bayeval is item "5"
        text_ids = set(ids)
        strays = strays[[str(i) not in text_ids for i in strays["item"].tolist()]]
    if len(strays):  # '261' typed into a store that did not know its items is row 261
        rows = row_number_ids(store, ids)
        strays = strays[[not (isinstance(i, str) and i in rows) for i in strays["item"].tolist()]]
    if len(strays):
        from .active.store import KnownItems

        items = list(dict.fromkeys(strays["item"].tolist()))
        shown = KnownItems(ids).listing(items)
        found = id_column_of(scores or args.scores, items, besides=getattr(args, "item_id", None))
        if found is not None:  # a forgotten (or wrong) --id: repair-store would move every label out
            column, n = found
            read = (f"with --id {args.item_id}" if getattr(args, "item_id", None)
                    else "without --id, so its items are its row numbers")
            rest = "" if n == len(items) else (f" ({len(items) - n} of them are in no column of it: once --id is "
                                               "right they are named again, with how to set them aside)")
            raise CLIError(
                f"{args.store} holds {len(strays)} label(s) of {len(items)} item(s) that are not in "
                f"{scores or args.scores} as read ({read}): {listing(items)}. {n} of them are ids of its column "
                f"{column!r}{rest}: give `--id {column}`. {doing}; the store is unchanged.")
        rows = row_numbers_among(items, data.n_items) if getattr(args, "item_id", None) else []
        if rows and 2 * len(rows) >= len(items):  # a store of row numbers read with --id: repair would move them all
            raise CLIError(
                f"{args.store} holds {len(strays)} label(s) of {len(items)} item(s) that are not in "
                f"{scores or args.scores} as read (with --id {args.item_id}): {listing(items)}. "
                f"{rows_advice(store, args, rows, items, data.n_items, scores=scores)} {doing}; the store is "
                "unchanged.")
        raise CLIError(
            f"{args.store} holds {len(strays)} label(s) of {len(items)} item(s) that are not in "
            f"{scores or args.scores}: {shown}. {doing}. To go on, keeping every label: "
            f"`{repair_command(args, scores=scores, score=score)}` sets those labels aside (in a CSV beside the "
            "store, and a copy of the store as it was is kept as a backup) and keeps all the others with their batches "
            "and annotators; then fix the ids in the CSV and import it with `bayeval label`."
        )


def listing(items) -> str:
    """The first five of ``items`` as typed (``260``, ``'i5'``), and how many more."""
    return ", ".join(map(repr, items[:5])) + (f" and {len(items) - 5} more" if len(items) > 5 else "")


def row_numbers_among(items, n: int) -> list:
    """The ids among ``items`` that are row numbers of data of ``n`` rows: the ints ``0`` to
    ``n - 1`` (a store whose items `bayeval select` registered without ``--id``) and their text
    (``'261'``, as `bayeval label` keeps an id it cannot check)."""
    out = []
    for i in items:
        if isinstance(i, int) and not isinstance(i, bool):
            if 0 <= i < n:
                out.append(i)
        elif isinstance(i, str) and is_row_number(i) and int(i) < n:
            out.append(i)
    return out


def rows_advice(store, args, rows, items, n: int, *, scores=None) -> str:
    """What to do about labels of the row numbers ``rows`` (of ``items``, the store's unknown
    ones) of a scores file of ``n`` rows read with ``--id``: leave ``--id`` out, as the store
    was made; never `repair-store`, which would set every such label aside."""
    known = store.known_items() or []
    made = ("; the store registered its items as those row numbers (it was made by `bayeval select` without "
            "--id)") if known and all(isinstance(i, int) and not isinstance(i, bool) for i in known) else ""
    rest = "" if len(rows) == len(items) else (f" ({len(items) - len(rows)} of them are not row numbers: once --id "
                                               "is left out they are named again, with how to set them aside)")
    return (f"{len(rows)} of them are row numbers of {scores or args.scores} (0 to {n - 1}){made}. Leave out "
            f"`--id {args.item_id}`, so that its items are read as its row numbers{', as the store reads them' * bool(made)}{rest}; "
            "`bayeval repair-store` with --id would set every one of these labels aside.")


def id_column_of(scores, items, *, besides=None):
    """``(column, how many)``: the column of the scores file ``scores`` (other than ``besides``)
    whose cells, as text, are unique and hold at least half of the ids ``items`` (the most of
    them), or None. It tells a forgotten or wrong ``--id`` from a store's labels of unknown
    items."""
    from ._tables import TableError, read_table

    try:
        head = read_table(scores)
        table = read_table(scores, raw_columns=head.columns)  # a CSV's cells as typed: '007' stays '007'
    except TableError:
        return None
    want = {str(i) for i in items}
    best = None
    for column in table.columns:
        if column == besides:
            continue
        cells = [str(v) for v in table.cells(column).tolist() if v is not None and str(v) not in ("", "nan")]
        if len(set(cells)) != len(cells):
            continue
        n = len(want & set(cells))
        if 2 * n >= len(want) and n and (best is None or n > best[1]):
            best = (column, n)
    return best


def refuse_foreign_items(store, data, args) -> None:
    """``bayeval select SCORES --store STORE`` without ``--id``: refused when the store knows item
    ids that are not row numbers (the text ids of an id column), before anything is registered:
    registering the row numbers too would let labels of other items (a typo) through for good."""
    if getattr(args, "item_id", None):
        refuse_row_store(store, data, args)
        return
    foreign = [i for i in store.known_items() or () if not isinstance(i, int)]
    if not foreign:
        return
    found = id_column_of(args.scores, foreign)
    shown = ", ".join(map(repr, foreign[:5])) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
    where = f" (its column {found[0]!r} holds {found[1]} of them)" if found else ", the column of its item ids"
    column = found[0] if found else "COL"
    raise CLIError(
        f"{args.store} knows {len(foreign)} item id(s) that are not row numbers of {args.scores} "
        f"({shown}), the ids of an id column. {args.scores} was read without "
        f"--id, so its items would be its row numbers 0 to {data.n_items - 1}: give `--id {column}`{where}. Nothing was selected, and the store is unchanged.")


def refuse_row_store(store, data, args) -> None:
    """``bayeval select SCORES --id COL --store STORE`` where the store knows exactly the row
    numbers of SCORES as its items (registered by `select` without ``--id``) and none of COL's
    ids: refused before anything is registered, since registering COL's ids too would make
    every item two, and labels typed under either kind of id would be split between them."""
    known = store.known_items() or []
    if not known or any(not isinstance(i, int) or isinstance(i, bool) for i in known):
        return
    if set(known) != set(range(data.n_items)) or set(known) & set(data.item_ids.tolist()):
        return
    raise CLIError(
        f"{args.store} knows its items as the row numbers 0 to {data.n_items - 1} of {args.scores} (it was made "
        f"by `bayeval select` without --id), not as the ids of its column {args.item_id!r}: leave out "
        f"`--id {args.item_id}`, so that the items are read as row numbers, as the store's labels are. Nothing was "
        "selected, and the store is unchanged.")


def store_text_ids(values, path, *, what: str):
    """Integer ids (a Parquet id column) that the label store ``path`` knows as text (a store
    made from a CSV, whose ids are text): the same ids as text, the store's form, said on
    stderr; None when there is nothing to change (no store, no such text ids, or the store
    knows the integers themselves)."""
    from .active.store import LabelStore, StoreFormatError

    ints = [v for v in values if isinstance(v, int) and not isinstance(v, bool)]
    if not ints or len(ints) != len(values) or not path or not Path(path).is_file():
        return None
    try:
        with LabelStore(path) as store:
            forms = {*(store.known_items() or ()), *store.labels()["item"].tolist()}
    except StoreFormatError:  # said by the command's own reading of the store
        return None
    text = [str(v) for v in values]
    if not {f for f in forms if isinstance(f, str)} & set(text) or {f for f in forms if isinstance(f, int)} & set(ints):
        return None
    print(f"note: {what} holds integer ids, and {path} knows them as text (as a CSV's ids are read): they are "
          "read as that text, the same items.", file=sys.stderr)
    return text


def is_row_number(text: str) -> bool:
    """Whether a text id is a plain decimal integer as a row number prints (``'261'``, ``'0'``;
    not ``'007'``, ``'+5'``, ``' 5'`` or ``'5.0'``)."""
    return text.isascii() and text.isdigit() and str(int(text)) == text


def row_number_ids(store, ids) -> dict:
    """``{text id: row number}`` for the store's text ids that name an item of data numbered by
    row (a scores file without an id column: its ids are the ints 0, 1, ...).

    `bayeval label` without ``--scores`` cannot tell whether ``261`` is a row number or the
    text id of an id column, so it keeps the id as typed, as text. Such an id is read as row
    261 when the data are numbered by row and have that row, unless the store registered
    ``'261'`` as a text item (then it is another data set's id, and stays unknown)."""
    ints = {i for i in ids if isinstance(i, int) and not isinstance(i, bool)}
    if not ints:
        return {}
    text = {i for i in store.known_items() or () if isinstance(i, str)}  # an id column's, not rows
    out = {}
    for item in store.labels()["item"].tolist():
        if isinstance(item, str) and item not in out and is_row_number(item) and int(item) in ints:
            if item not in text:
                out[item] = int(item)
    return out


def kept_row_numbers(path, ids) -> list:
    """The text ids that `repair-store` keeps in the store at ``path`` as rows of data numbered by
    row (``ids``: the scores file's; None: the items the store registered), said on stderr."""
    from .active.store import LabelStore

    with LabelStore(path) as store:
        rows = list(row_number_ids(store, ids if ids is not None else store.known_items() or []))
    if rows:
        print(f"note: {len(rows)} text id(s) of {path} name rows of the items numbered by row "
              f"({', '.join(map(repr, rows[:10]))}{' ...' if len(rows) > 10 else ''}): kept, and read as "
              "those rows by select, fit, threshold and compare.", file=sys.stderr)
    return rows


def resolved_for(store, data, args, *, scores=None):
    """The store's labels, one per item by its conflict rule, with its text ids of row numbers
    (:func:`row_number_ids`) read as those rows -- said on stderr -- so that a label typed as
    ``261`` and one recorded as the row number 261 are one item's labels (and, for data with an
    id column, an int ``261`` written by an older bayeval and the text id ``'261'``)."""
    ids = data.item_ids.tolist()
    rows = row_number_ids(store, ids)
    if not rows:  # an int 261 written by an older bayeval is the text id '261' of an id column
        text = set(ids) if data.item_ids.dtype.kind == "U" else ()
        olds = {i: str(i) for i in dict.fromkeys(store.labels()["item"].tolist())
                if isinstance(i, int) and str(i) in text}
        return store.resolved(aliases=olds or None)
    shown = ", ".join(map(repr, list(rows)[:10])) + (f" and {len(rows) - 10} more" if len(rows) > 10 else "")
    print(f"note: {args.store} holds labels of {len(rows)} item id(s) kept as text ({shown}); "
          f"{scores or args.scores} has no id column (--id), so its items are numbered by row, and these ids "
          "were read as those row numbers. If they are ids of a column of the scores file instead, give "
          "--id COL.", file=sys.stderr)
    return store.resolved(aliases=rows)


def apply_store_labels(store, data, args, *, label=None, scores=None):
    """``data`` with the store's labels over the file's (said where they differ)."""
    res = resolved_for(store, data, args, scores=scores)
    if not len(res):
        return data
    say_overridden_labels(data, res, args, label=label, scores=scores)
    try:
        return data.with_labels(list(res.index), res.to_numpy(), overwrite=True)
    except ValueError as exc:
        raise CLIError(f"{args.store}: {exc}") from exc


def with_store(args, data, *, scores=None, score=None, label=None):
    """The labels of ``--store`` (read only) over the scores file's, for `fit`, `threshold` and
    `compare`: a missing or damaged store and labels of unknown items are refused; how many labels
    the store adds or replaces, and a batch not fully labeled, are said on stderr."""
    import numpy as np

    from .active.store import LabelStore, StoreFormatError

    if not Path(args.store).is_file():
        raise CLIError(f"{args.store}: no such label store file (--store). A store is made by `bayeval select "
                       "SCORES ... --store STORE` and filled by `bayeval label` or `bayeval vet`; check the path, "
                       "or leave --store out to use the scores file's labels alone.")
    try:
        with LabelStore(args.store) as store:
            check_strays(store, data, args, scores=scores, score=score)
            new = apply_store_labels(store, data, args, label=label, scores=scores)
            pending = store.pending()
    except StoreFormatError as exc:
        raise CLIError(f"{args.store}: {exc}") from exc
    added = int(np.sum(new.vetted & ~data.vetted))
    changed = int(np.sum(data.vetted & (data.labels != new.labels)))
    print(f"{added + changed} label(s) from the label store {args.store} ({added} of items the scores file leaves "
          f"unvetted, {changed} replacing its labels): {new.n_vetted} vetted in all.", file=sys.stderr)
    if pending:
        print(f"note: the last batch in {args.store} still has {len(pending)} item(s) nobody has labeled "
              "(`bayeval select --store` lists them); they are fitted as unvetted.", file=sys.stderr)
    return new


def card_with_store(card, path):
    """``card`` reading the labels of the label store ``path`` instead of its ``[vet] store``
    (``bayeval report CARD --store FILE``; read only, as ``fit --store``).

    Refused: a missing file or a folder, a damaged store, a comparison's store, and a store
    ``bayeval vet`` wrote for another model card (the one ``bayeval vet FILE`` would open:
    the card beside the store, else the card it recorded, when that is still there). The
    item ids are checked as for the card's own store (:meth:`bayeval.cards.Card.load_data`)."""
    import dataclasses

    from .active.store import LabelStore, StoreFormatError
    from .vet.session import CARD_KEY, COMPARE_KEY, find_card

    p = Path(path)
    if not p.is_file():
        what = "is a folder" if p.is_dir() else "no such label store file"
        raise CLIError(f"--store {path}: {what}. Give the label store the card's labels were vetted into "
                       "(`bayeval vet CARD --store FILE` writes it), or leave --store out to read the card's "
                       "own store ([vet] store).")
    try:
        with LabelStore(p) as store:
            recorded, compared = store.get_meta(CARD_KEY), store.get_meta(COMPARE_KEY)
    except StoreFormatError as exc:
        raise CLIError(f"--store {path}: {exc}") from exc
    if isinstance(compared, dict):
        raise CLIError(f"--store {path}: the label store of the comparison of {compared.get('cards')}, not of one "
                       "card's page; `bayeval compare CARD_A CARD_B` reads it. Give this card's store.")
    if isinstance(recorded, str):
        try:
            other, _ = find_card(p, announce=lambda line: None)
        except ValueError:  # its card is gone and none is beside it: the ids are still checked
            other = None
        if other is not None and other.path.resolve() != Path(card.path).resolve():
            raise CLIError(f"--store {path}: a label store `bayeval vet` wrote for the model card {other.path}, "
                           f"not for {card.path} (`bayeval vet {path}` opens that card). Report that card with "
                           f"`bayeval report {other.path} --store {path}`; if the labels are this card's (its "
                           f"folder was copied or moved), open the store with this card once (`bayeval vet "
                           f"{card.path} --store {path}`), so that it records it.")
    return dataclasses.replace(card, vet={**card.vet, "store": str(p.resolve())})


#: card models that learn from noisy labels too: with no vetted label their report is still evidence
_READS_NOISY_LABELS = ("label_flip",)


def refuse_unvetted_card(card, data, store_given=None) -> None:
    """A CLIError when no item of a card's data (its scores file's labels and its label store's)
    is vetted and its model learns from vetted labels alone (the default, calibration and score
    mixture models): its report would show the prior's intervals as if they were evidence, where
    ``bayeval fit`` and ``bayeval compare`` refuse. A label-flip card, which reads its noisy
    labels, is reported. ``store_given``: the ``--store FILE`` the labels were read from."""
    import shlex

    if data.n_vetted or card.model_name in _READS_NOISY_LABELS:
        return
    q = shlex.quote
    col = card.columns.get("label")
    store = store_given or card.store_file
    where = [f"the label column {col!r} of {card.data_file.name} is empty" if col
             else "the card names no label column ([data] label)"]
    if store_given or card.store_file.is_file():
        where.append(f"the label store {store} holds no label of its items")
    else:
        where.append(f"its label store {store} does not exist yet")
    vet = f"bayeval vet {q(str(card.path))}" + (f" --store {q(str(store_given))}" if store_given else "")
    select = (f"bayeval select {q(str(card.data_file))} --score {q(card.columns['score'])}"
              + (f" --id {q(card.columns['id'])}" if "id" in card.columns else "") + f" --size 30 --store {q(str(store))}")
    fill = f"; or fill the column {col!r} with 1/0 for a random sample of items" if col else ""
    elsewhere = ("" if store_given else " Labels vetted into another store (`bayeval vet CARD --store FILE`) are read "
                 "with --store FILE.")
    raise CLIError(
        f"{card.path.name}: no item is vetted ({' and '.join(where)}). The card's {card.model_name} model learns "
        "from vetted labels how its scores relate to the truth: with none, every interval of the report would be "
        "the prior's, not evidence about this classifier. Vet some items first, then report: `"
        f"{vet}` shows them one at a time in a browser page and writes each answer to {store}, which `bayeval "
        f"report` reads; or `{select}` picks a first batch, stratified on the score, and `bayeval label "
        f"{q(str(store))} LABELS.csv` records the labels typed for them (columns item, label){fill}.{elsewhere}")


def repair_command(args, *, scores=None, score=None) -> str:
    import shlex

    parts = ["bayeval", "repair-store", args.store, "--scores", scores or args.scores, "--score", score or args.score]
    if getattr(args, "item_id", None):
        parts += ["--id", args.item_id]
    return " ".join(shlex.quote(str(p)) for p in parts)


def repair_refusal(refused, args, n_items: int | None) -> str:
    """`bayeval repair-store`'s refusal (``refused``: the :class:`~bayeval.active.repair.RepairRefused`
    of a repair that would keep no label, or of a scores file sharing no item with the store's),
    with the ``--id`` choice that matches the store where one does; ``n_items``: the scores file's
    rows (None without ``--scores``)."""
    store, scores, item_id = args.store, args.scores, getattr(args, "item_id", None)
    pool = refused.registered or refused.unknown  # the store's ids: those it knows, else its labels'
    if scores is None:
        read = "the items it registered"
    else:
        read = (f"{scores} read with --id {item_id}" if item_id else
                f"{scores} read without --id, so that its items are its row numbers 0 to {n_items - 1}")
    if refused.reason == "none kept":
        what = (f"the {refused.labels} label row(s) of {store} and its batches are of {len(refused.unknown)} "
                f"item(s) that are not in {read} ({listing(refused.unknown)}), and of no other: repair-store would "
                "set every label aside and keep none")
    else:
        what = (f"{store} knows {len(refused.registered)} item(s) ({listing(refused.registered)}), none of which is "
                f"in {read}")
    advice = ""
    if scores is not None and item_id:
        rows = row_numbers_among(pool, n_items)
        if rows and 2 * len(rows) >= len(pool):
            some = f"its {len(pool)} item(s)" if len(rows) == len(pool) else f"{len(rows)} of its {len(pool)} item(s)"
            whose = (f"The store knows {some} as row numbers of {scores} (0 to {n_items - 1}), as `bayeval select` "
                     "without --id registers them" if refused.registered else
                     f"{len(rows)} of the {len(pool)} ids of its labels are row numbers of {scores} (0 to {n_items - 1})")
            advice = f"{whose}: leave out `--id {item_id}`, so that the file's items are its row numbers"
    if scores is not None and not advice:
        found = id_column_of(scores, pool, besides=item_id)
        if found is not None:
            whose = "The store knows" if refused.registered else "The store's labels are of"
            advice = (f"{whose} {found[1]} id(s) of the column {found[0]!r} of {scores}: give `--id {found[0]}`"
                      f"{'' if item_id else ' (without --id the items are the row numbers)'}")
    if advice:
        return f"{what}. {advice}. Nothing was changed: {store} is as it was."
    return (f"{what}. Nothing was changed: {store} is as it was. Check that {scores or 'the scores file'} is the "
            "one the store is for, and its --id (an id column, or none for row numbers, as `bayeval select` was "
            "given); if every one of these labels really is of a mistyped id, `--force` sets them aside all the "
            "same (in a CSV beside the store, with a backup of the store, as always).")


def label_scores_items(args, load_data) -> tuple[list, bool]:
    """The items of ``bayeval label --scores SCORES`` (``load_data``: the command line's reader)
    and whether they are its row numbers.

    The ids are those of the scores file's ``--scores-id`` column (default: the column named
    like the labels file's ``--id``). A scores file without that column, when ``--scores-id``
    is not given, has no id column: its items are its row numbers ``0, 1, ...``, the ids
    ``bayeval select`` prints and registers for it (said on stderr)."""
    import argparse

    from ._tables import MissingColumn

    def load(item_id):  # a column named by --scores-id is named so in the errors, not as --id
        flag = "--scores-id" if args.scores_id else "--id"
        return load_data(argparse.Namespace(scores=args.scores, score=args.score, label=None, noisy_label=None,
                                            category=None, item_id=item_id, id_flag=flag,
                                            store=args.store)).item_ids.tolist()

    try:
        return load(args.scores_id or args.item_id), False
    except CLIError as exc:
        missing = exc.__cause__
        if args.scores_id or not (isinstance(missing, MissingColumn) and missing.role == "--id"):
            raise
    ids = load(None)
    print(f"note: {args.scores} has no column {args.item_id!r} (--id), so its items are numbered by row (0 to "
          f"{len(ids) - 1}), as `bayeval select` numbers them, and the ids of {args.labels} are read as those "
          "row numbers. If a column of the scores file holds its ids, give --scores-id COL.", file=sys.stderr)
    return ids, True


def scores_row_hint(args, registered, scores_known, by_row: bool):
    """For `bayeval label` on a store whose items are the row numbers ``0..n-1`` (registered by
    `bayeval select` without ``--id``) with ``--scores`` read by an id column: ``hint(id)``, which
    names the row an id of that column stands on (what the store knows it as), and says that a
    row number is an item of the store that the id column cannot check ("" for other ids; always
    "" in other cases). Typed as row numbers, and without ``--scores``, the labels are taken."""
    rows = len(registered or ())
    if by_row or scores_known is None or len(scores_known) != rows or not rows or \
            any(not isinstance(i, int) or isinstance(i, bool) for i in registered) or \
            set(registered) != set(range(rows)):
        return lambda item: ""
    at: dict = {}
    held = (f"{args.store} holds the row numbers of {args.scores} (0 to {rows - 1}; `bayeval select` without --id "
            "registered them)")
    leave = f"leave out --scores ({args.store} checks the ids itself)"

    def hint(item) -> str:
        if not at:  # built once, and only when an id is refused
            at.update((i, r) for r, i in enumerate(scores_known))
        r = at.get(item)
        if r is not None:
            return f": {item!r} is row {r} of {args.scores}, and {held}: type {r}, and {leave}"
        if isinstance(item, int) and not isinstance(item, bool) and 0 <= item < rows:
            column = args.scores_id or args.item_id
            return (f": {held}, and {item} is one of them; {args.scores} was read by its id column {column!r}, "
                    f"which does not hold it: {leave}")
        return ""
    return hint


def not_a_row(scores, n: int) -> str:
    """Why `bayeval label` refuses an id of a scores file numbered by row that is not one of its rows."""
    return (f"not a row of {scores}, which has no id column: its {n} items are the row numbers 0 to {n - 1}, "
            "written without leading zeros")


def unrecorded_labels(store, ids, values, annotator, known) -> list[tuple]:
    """The ``(id, value)`` pairs of ``bayeval label`` that are not already ``annotator``'s latest
    label of their item, under either kind of its id: a label typed as ``'261'`` before the store
    knew its items and the same label imported again as the row 261 (once ``select`` registered
    the rows) are one label, so a file imported again adds no copy. An id of the other kind that
    is an item of its own (in ``known``: the store's and the scores file's items) is another item."""
    frame = store.labels()
    latest = {}  # item (as stored) -> (row id, value) of the annotator's latest label
    for row, item, value, who in zip(frame["id"].tolist(), frame["item"].tolist(), frame["value"].tolist(),
                                     frame["annotator"].tolist(), strict=True):
        if who == annotator:
            latest[item] = (row, int(value))
    out = []
    for i, v in zip(ids, values, strict=True):
        other = str(i) if isinstance(i, int) else int(i) if is_row_number(i) else None
        forms = [i] if other is None or other in known else [i, other]
        seen = [latest[f] for f in forms if f in latest]
        if not seen or max(seen)[1] != v:
            out.append((i, v))
    return out


def card_store_changes(card, data):
    """What a card's label store changed in its scores file's labels (``data``: the card's data
    read with its store): ``(added, replaced)``, the ids the store labels that the file leaves
    unvetted, and ``"id (file 1, store 0)"`` for each label it replaces, as ``fit --store`` names them."""
    import numpy as np

    plain = card.load_data()[0]
    ids = data.item_ids.tolist()
    added = [ids[j] for j in np.flatnonzero(data.vetted & ~plain.vetted)]
    replaced = [f"{ids[j]} (file {int(plain.labels[j])}, store {int(data.labels[j])})"
                for j in np.flatnonzero(plain.vetted & data.vetted & (plain.labels != data.labels))]
    return added, replaced


def say_card_store(card, data) -> tuple:
    """Say on stderr how many labels a card's label store added to its scores file's, naming the
    ones it replaces; returns ``(store file, labels added, labels replaced)`` for the report's record,
    or None when the card has no label store."""
    if not card.store_file.is_file():
        return None
    added, replaced = card_store_changes(card, data)
    if added or replaced:
        shown = ", ".join(replaced[:10]) + (f" and {len(replaced) - 10} more" if len(replaced) > 10 else "")
        print(f"{card.path.name}: {len(added) + len(replaced)} label(s) from its label store {card.store_file.name} "
              f"({len(added)} of items the scores file leaves unvetted"
              + (f", {len(replaced)} replacing the file's label: {shown}" if replaced else "") + "): "
              f"{data.n_vetted} vetted in all.", file=sys.stderr)
    try:  # the report names a store in the card's folder by its path there: the same report wherever it is made
        path = card.store_file.relative_to(card.path)
    except ValueError:
        path = card.store_file
    return path, len(added), len(replaced)


def card_vetted_selection(card, data) -> dict | None:
    """How a card's vetted items were chosen (:meth:`bayeval.cards.Card.vetted_selection`: its
    label store's batches, and ``[data] label_strategy`` for the scores file's own labels), for
    the report's reading of its vetted-only numbers; None when nothing says."""
    return card.vetted_selection(data)


def store_vetted_selection(path, data) -> dict:
    """How the vetted items of ``data`` were chosen, as far as the label store ``path``'s batches
    record it (:func:`bayeval.active._store_items.vetted_choice`; the scores file's own labels,
    proposed by no batch, under None), for `fit --store`'s note on its vetted-only values."""
    from .active._store_items import vetted_choice
    from .active.store import LabelStore

    with LabelStore(path) as store:
        return vetted_choice(store, data.item_ids.tolist(), data.vetted)


def unanswered_items(store, data) -> dict:
    """``{batch: positions in data}`` of the items the store's batches proposed that nobody has
    labeled yet (and that ``data``, with the store's labels applied, holds unvetted); a stored
    id written as text (``'261'``) stands for the item ``261``, as when labels are read."""
    pos = {item: i for i, item in enumerate(data.item_ids.tolist())}
    text = {str(item): i for item, i in pos.items()}
    out = {}
    for b in store.batches()["batch"].tolist():
        idx = [pos.get(item, text.get(str(item))) for item in store.pending(int(b))]
        idx = [i for i in idx if i is not None and not data.vetted[i]]
        if idx:
            out[int(b)] = idx
    return out


def held_items(store, data, args):
    """A mask of the items earlier batches of ``--store`` proposed and nobody has labeled (None:
    there are none), said on stderr: `bayeval select` leaves them out of a new batch, so that no
    item is proposed twice, and says where they still are (their batch takes their labels)."""
    import numpy as np

    held = unanswered_items(store, data)
    if not held:
        return None
    mask = np.zeros(data.n_items, dtype=bool)
    for idx in held.values():
        mask[idx] = True
    where = ", ".join(f"{len(idx)} of batch {b}" for b, idx in held.items())
    print(f"note: {int(mask.sum())} item(s) proposed in earlier batches are not labeled yet ({where}); the new batch "
          "leaves them out, so that no item is proposed twice. They stay in their batch: label them any time "
          f"(`bayeval label {args.store} LABELS.csv`); `bayeval select --store` lists the unlabeled items of the "
          "newest batch only (`bayeval vet` offers every batch's before it chooses a new one).", file=sys.stderr)
    return mask
