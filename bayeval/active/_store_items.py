"""A label store's labels read for the items of one evaluation set.

The one reading shared by ``Card.load_data(store=True)`` (``bayeval report CARD``,
``Card.fit``), ``Card.store_labels()`` and :class:`~bayeval.active.ActiveSession`
(``bayeval vet``): a store id that is not one of the data's ids but is written like one
(the text ``'261'`` typed for data numbered by row, whose item is the int ``261``; an int
``261`` written by an older bayeval for an id column's ``'261'``) is that item, and the
labels of both kinds of its id are settled together by the store's conflict rule.
:func:`vetted_choice` reads, the same way, how the store's batches chose the vetted items
(the report says whether its vetted-only numbers estimate the pool's metrics), and
:func:`pending_items` which items the batches proposed that nobody has labeled yet, in every
batch (an older batch left unfinished by ``bayeval select --store --new-batch`` included).
"""

from __future__ import annotations

__all__ = ["labels_for_items", "pending_items", "row_count", "vetted_choice"]


def row_count(item_ids) -> int | None:
    """``n`` when ``item_ids`` are the row numbers ``0, 1, ..., n - 1`` (ints, in any order), else None.

    Examples
    --------
    >>> from bayeval.active._store_items import row_count
    >>> row_count([0, 1, 2]), row_count([2, 0, 1]), row_count([1, 2]), row_count(["0", "1"])
    (3, 3, None, None)
    """
    ids = list(item_ids)
    if not ids or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        return None
    return len(ids) if set(ids) == set(range(len(ids))) else None


def labels_for_items(store, item_ids):
    """The labels of ``store``, one per item by its conflict rule, keyed by the ids ``item_ids``.

    A stored id that is not in ``item_ids`` but whose text is one of theirs (``'261'`` for
    the item ``261``, ``261`` for ``'261'``) stands for that item: its labels and those of
    the item's own id are one item's, settled together by the conflict rule
    (:meth:`LabelStore.resolved`). Other stored ids (``'0261'``, ``'abc'`` for items
    ``0, 1, ...``) are kept as they are and listed as strays.

    Parameters
    ----------
    store : LabelStore
        The open store.
    item_ids : sequence of int or str
        The ids of the evaluation set's items (``data.item_ids.tolist()``).

    Returns
    -------
    labels : pandas.Series
        int8 labels indexed by item id (the data's id where one matches), in order of each
        item's first label.
    strays : list
        The stored ids (as stored) that are none of ``item_ids``, in the same order.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from bayeval.active import LabelStore
    >>> from bayeval.active._store_items import labels_for_items
    >>> tmp = tempfile.TemporaryDirectory()
    >>> store = LabelStore(pathlib.Path(tmp.name) / "s.db")
    >>> _ = store.add(["2", "0002"], [1, 1], annotator="ana")  # typed as text
    >>> _ = store.add([2], [0], annotator="ana")                # her correction, as the row
    >>> labels, strays = labels_for_items(store, [0, 1, 2, 3])
    >>> labels.to_dict(), strays
    ({2: 0, '0002': 1}, ['0002'])
    >>> tmp.cleanup()
    """
    ids = list(item_ids)
    known = set(ids)
    labels = store.resolved()
    if all(i in known for i in labels.index):
        return labels, []
    by_text = {str(i): i for i in ids}
    aliases = {i: by_text[str(i)] for i in labels.index if i not in known and str(i) in by_text}
    if aliases:
        labels = store.resolved(aliases=aliases)
    return labels, [i for i in labels.index if i not in known]


def vetted_choice(store, item_ids, vetted) -> dict:
    """How the vetted items were chosen, as far as ``store``'s batches record it.

    Each vetted item counts under the strategy of the first batch that proposed it
    (``"random"``, ``"design"``, ``"expected_change+explore"``...), or under None where
    no batch proposed it or its batch records no strategy (a label of the scores file, one
    typed without a batch). A stored id written like one of ``item_ids`` (``'261'`` for
    ``261``) is that item, as in :func:`labels_for_items`.

    Parameters
    ----------
    store : LabelStore
        The open store.
    item_ids : sequence of int or str
        The ids of the evaluation set's items (``data.item_ids.tolist()``).
    vetted : array_like of bool
        Which of them are vetted (``data.vetted``).

    Returns
    -------
    dict
        ``{strategy or None: number of vetted items}``, without zero counts.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from bayeval.active import LabelStore
    >>> from bayeval.active._store_items import vetted_choice
    >>> tmp = tempfile.TemporaryDirectory()
    >>> store = LabelStore(pathlib.Path(tmp.name) / "s.db")
    >>> _ = store.new_batch(["a", "b"], strategy="random"), store.new_batch(["c"], strategy="design")
    >>> vetted_choice(store, ["a", "b", "c", "d", "e"], [True, True, True, True, False])
    {'random': 2, 'design': 1, None: 1}
    >>> tmp.cleanup()
    """
    ids = list(item_ids)
    known = set(ids)
    by_text = {str(i): i for i in ids}
    first: dict = {}
    batches = store.batches()
    for batch, strategy in sorted(zip(batches["batch"].tolist(), batches["strategy"].tolist(), strict=True),
                                  key=lambda bs: bs[0]):
        for item in store.batch_items(int(batch)):
            item = item if item in known else by_text.get(str(item), item)
            first.setdefault(item, strategy if isinstance(strategy, str) else None)
    out: dict = {}
    for item, is_vetted in zip(ids, vetted, strict=True):
        if is_vetted:
            key = first.get(item)
            out[key] = out.get(key, 0) + 1
    return out


def pending_items(store, item_ids) -> dict:
    """The items every batch of ``store`` proposed that nobody has labeled yet, by batch.

    Unlike :meth:`LabelStore.pending`, which reads one batch (the newest by default), this reads
    them all: a batch left unfinished when a newer one was proposed (``bayeval select --store
    --new-batch``) still holds its items. An item proposed by several batches is listed under the
    newest, the batch its label is filed under. A stored id written like one of ``item_ids``
    (``'261'`` for ``261``) is that item, and it is not pending once a label under either id is
    stored, as in :func:`labels_for_items`; ids that are none of ``item_ids`` are left out.

    Parameters
    ----------
    store : LabelStore
        The open store.
    item_ids : sequence of int or str
        The ids of the evaluation set's items (``data.item_ids.tolist()``).

    Returns
    -------
    dict
        ``{batch: [item ids, in the batch's order]}``, oldest batch first; only batches that
        still hold such items.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from bayeval.active import LabelStore
    >>> from bayeval.active._store_items import pending_items
    >>> tmp = tempfile.TemporaryDirectory()
    >>> store = LabelStore(pathlib.Path(tmp.name) / "s.db")
    >>> b1 = store.new_batch(["a", "b", "c"])
    >>> _ = store.add(["a"], [1], batch=b1)
    >>> b2 = store.new_batch(["d", "e"])         # proposed before batch 1 was finished
    >>> store.pending()                          # the newest batch only
    ['d', 'e']
    >>> pending_items(store, list("abcdefg"))
    {1: ['b', 'c'], 2: ['d', 'e']}
    >>> tmp.cleanup()
    """
    ids = list(item_ids)
    known = set(ids)
    by_text = {str(i): i for i in ids}
    batches = store.batches()
    unfinished = [int(b) for b in batches.loc[batches["n_labeled"] < batches["n_items"], "batch"].tolist()]
    if not unfinished:
        return {}
    labeled = set(labels_for_items(store, ids)[0].index)
    lists = {}
    newest = {}  # item -> the newest batch that proposed it
    for b in unfinished:
        items = [item if item in known else by_text.get(str(item)) for item in store.pending(b)]
        lists[b] = [item for item in items if item is not None and item not in labeled]
        for item in lists[b]:
            newest[item] = b
    out = {}
    for b, items in lists.items():
        mine = list(dict.fromkeys(item for item in items if newest[item] == b))
        if mine:
            out[b] = mine
    return out
