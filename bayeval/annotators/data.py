"""What :class:`~bayeval.annotators.model.AnnotatorError` is fitted to: the classifier's
predictions, the annotators' labels, gold labels and scores (:class:`AnnotationData`), a
long table of crowd labels turned into annotator columns (:func:`annotations_from_long`).
The checks that read them as class indices are in ``_checks.py``."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..core import _validate as V
from ._checks import to_float_matrix

__all__ = ["AnnotationData", "annotations_from_long"]

_POOLS = ("annotator", "slot")


def annotations_from_long(
    data,
    *,
    items=None,
    item: str = "item",
    annotator: str = "annotator",
    label: str = "label",
    pool: str = "annotator",
    max_labels: int | None = None,
) -> pd.DataFrame:
    """Crowd labels in long format ``(item, annotator, label)`` as an annotation matrix.

    Parameters
    ----------
    data : pandas.DataFrame
        One row per label, with columns ``item``, ``annotator`` and ``label`` (names
        set by the keyword arguments). Labels are class indices ``0 .. K - 1``; rows
        with a missing label are dropped.
    items : array_like, optional
        The item ids in the order of the classifier's ``predictions``; the result has
        one row per id, in this order (all NaN for an item nobody labelled). By
        default the sorted ids found in ``data``.
    item, annotator, label : str
        Column names.
    pool : {"annotator", "slot"}, default "annotator"
        ``"annotator"``: one column per annotator, NaN where they did not label the
        item -- every annotator gets their own accuracy and error correlation (right
        when a few annotators label most items). ``"slot"``: column ``j`` holds the
        ``j``-th label each item received (in the order of ``data``), whoever gave it
        -- each column is then "a random crowd worker", which suits crowds of many
        workers who each label a few items (the model's parameters stay few).
        In either pool an annotator labels an item at most once: a repeated
        ``(item, annotator)`` row is an error (keep one answer per annotator).
    max_labels : int, optional
        With ``pool="slot"``: keep at most this many labels per item.

    Returns
    -------
    pandas.DataFrame
        Indexed by item id, one column per annotator (or slot), NaN where missing;
        pass it as ``annotations`` to :meth:`~bayeval.annotators.model.AnnotatorError.fit`.

    Examples
    --------
    >>> import pandas as pd
    >>> from bayeval.annotators import annotations_from_long
    >>> long = pd.DataFrame({"item": ["a", "a", "b", "c", "c", "c"],
    ...                      "annotator": ["x", "y", "x", "x", "y", "z"],
    ...                      "label": [1, 1, 0, 0, 1, 0]})
    >>> annotations_from_long(long, items=["c", "b", "a"])  # doctest: +NORMALIZE_WHITESPACE
          x    y    z
    item
    c   0.0  1.0  0.0
    b   0.0  NaN  NaN
    a   1.0  1.0  NaN
    >>> annotations_from_long(long, pool="slot", max_labels=2).columns.tolist()
    ['label_0', 'label_1']
    """
    if not isinstance(data, pd.DataFrame):
        raise TypeError(
            f"`data` must be a pandas DataFrame with one row per label, got {type(data).__name__}."
        )
    missing = [c for c in (item, annotator, label) if c not in data.columns]
    if missing:
        raise ValueError(
            f"`data` lacks the column(s) {missing}; it has {list(data.columns)[:10]}. Name the "
            "columns with item=, annotator=, label=."
        )
    pool = V.check_choice(pool, "pool", _POOLS)
    if max_labels is not None:
        max_labels = V.as_positive_int(max_labels, "max_labels", minimum=1)
    df = data[[item, annotator, label]].dropna(subset=[label])
    vals, _ = to_float_matrix(df[label], "label")
    df = df.assign(**{label: vals})
    _check_duplicate_pairs(df, item, annotator)
    if pool == "annotator":
        _check_annotator_names(df[annotator], annotator)
        wide = df.pivot(index=item, columns=annotator, values=label)
        wide.columns = [str(c) for c in wide.columns]
    else:
        slot = df.groupby(item, sort=False).cumcount()
        df = df.assign(_slot=slot.to_numpy())
        if max_labels is not None:
            df = df[df["_slot"] < max_labels]
        wide = df.pivot(index=item, columns="_slot", values=label)
        wide.columns = [f"label_{int(c)}" for c in wide.columns]
    if items is not None:
        ids = pd.Index(np.asarray(items).ravel())
        if ids.has_duplicates:
            raise ValueError(f"`items` holds duplicate ids, e.g. {ids[ids.duplicated()][0]!r}.")
        unknown = wide.index.difference(ids)
        if len(unknown):
            raise ValueError(
                f"`data` has labels for {len(unknown)} item(s) not in `items`, e.g. "
                f"{V.preview(np.asarray(unknown))}; check that the ids match (type and spelling)."
            )
        wide = wide.reindex(ids)
    else:
        wide = wide.sort_index()
    wide.index.name = item
    return wide.astype(np.float64)


def _check_duplicate_pairs(df: pd.DataFrame, item: str, annotator: str) -> None:
    """An annotator's label of an item counts once, in either pool: a repeated (item,
    annotator) row would be read as a second, independent label."""
    dup = df.duplicated(subset=[item, annotator])
    if dup.any():
        pairs = df.loc[dup, [item, annotator]].drop_duplicates()
        shown = ", ".join(f"({i!r}, {a!r})" for i, a in pairs.head(3).itertuples(index=False))
        raise ValueError(
            f"{len(pairs)} (item, annotator) pair(s) appear more than once ({int(dup.sum())} extra "
            f"row(s)), e.g. {shown}; one annotator's repeated answer is not an independent label. "
            f"Keep one answer per annotator and item, e.g. "
            f"`data.drop_duplicates(subset=[{item!r}, {annotator!r}], keep='last')`."
        )


def _check_annotator_names(ids, column: str) -> None:
    """Distinct annotator ids must stay distinct as column names (their text)."""
    distinct = pd.Series(pd.unique(ids))
    text = distinct.map(str)
    clash = text[text.duplicated(keep=False)]
    if len(clash):
        same = distinct[text == clash.iloc[0]].tolist()
        raise ValueError(
            f"annotator ids {same} ({', '.join(type(v).__name__ for v in same)}) are different "
            f"ids with one column name {clash.iloc[0]!r}, so their columns could not be told "
            f"apart ({clash.nunique()} such name(s)). Give `data[{column!r}]` one type: "
            f"`data[{column!r}].astype(str)` if they are one annotator, or rename one of them "
            "if they are different annotators."
        )


def _item_ids(item_ids, inputs: list, n: int) -> np.ndarray | None:
    """The ids of an AnnotationData's items: ``item_ids`` when given, else the index of the first pandas
    input (of ``inputs``, ``(name, value)`` after the pairing by index) where it has one label per item,
    else None (positions). An index that repeats an id cannot name the items: a ValueError names it."""
    if item_ids is not None:
        return V.as_item_ids(item_ids, n)
    for name, value in inputs:
        if isinstance(value, pd.Series | pd.DataFrame):
            if len(value.index) != n:  # rows and predictions disagree: the fit's checks say so in its words
                return None
            if value.index.has_duplicates:
                dup = value.index[value.index.duplicated()][0]
                dup = dup.item() if isinstance(dup, np.generic) else dup
                raise ValueError(
                    f"`{name}`'s index repeats ids (e.g. {dup!r}): a pandas input's index names the items "
                    "(the fit's item_probability() and label draws), so each must occur once. Make the index "
                    "unique, give item_ids=, or pass `.to_numpy()` for every input to name the items by their "
                    "positions."
                )
            return V.as_item_ids(value.index.to_numpy(), n, name=f"{name}'s index")
    return None


class AnnotationData:
    """What :class:`~bayeval.annotators.model.AnnotatorError` is fitted to: predictions, annotations, gold, scores.

    Parameters
    ----------
    predictions : array_like of shape (n_items,)
        The classifier's predicted class of each item, integers ``0 .. K - 1``.
    annotations : array_like of shape (n_items,) or (n_items, n_annotators)
        Annotator labels, NaN where an annotator did not label an item (a DataFrame's
        column names name the annotators; :func:`annotations_from_long` builds one from
        a long table). Missing cells are never read as a class.
    gold : array_like of shape (n_items,), optional
        Known true classes, NaN where unknown.
    scores : array_like of shape (n_items,), optional
        Binary case only: the classifier's scores, kept for ranking metrics (AP, ROC);
        by default the 0/1 predictions stand in for them.
    item_ids : array_like of shape (n_items,), optional
        Unique ids of the items, in the order of the predictions: they name the items in the
        fit's results (``post.data.item_ids``, ``item_probability()``, the label draws, the
        log-likelihood's ``item`` coordinate, a saved fit). By default the index of the first
        pandas input (as :func:`bayeval.compare` names its items; an index that repeats an id
        is an error), else the items' positions ``0 .. n-1``.

    The arrays are checked against the number of classes when a model is fitted (or
    built), where the message names the argument and the first bad cell.

    Plain arrays are paired by position. Where two or more of the inputs are pandas
    objects (a Series, or a DataFrame's rows), they are paired by their index: the same
    item ids in another order (``annotations_from_long`` sorts them by default) are put in
    the order of the first of them (the attributes keep that order); indexes naming
    different items, or an order that cannot be told (pandas' default index ``0 .. n-1``
    on one of them, or a plain array beside them), are an error that names the inputs and
    a few ids. Pass ``.to_numpy()`` to pair inputs by position. The first pandas input's index
    (after the pairing: the predictions' order) then names the items, unless ``item_ids`` does.

    Examples
    --------
    >>> from bayeval.annotators import AnnotationData
    >>> AnnotationData([1, 0, 1], [[1, 1], [0, 1], [1, float("nan")]], gold=[1, float("nan"), float("nan")])
    AnnotationData(n_items=3, n_annotators=2, n_gold=1)
    >>> import pandas as pd
    >>> long = pd.DataFrame({"item": ["b", "a", "c"], "annotator": "x", "label": [0, 1, 1]})
    >>> d = AnnotationData(pd.Series([0, 1, 1], index=["b", "c", "a"]), annotations_from_long(long))
    >>> d.annotations["x"].tolist()  # paired with the predictions by item id
    [0.0, 1.0, 1.0]
    >>> d.item_ids.tolist()  # and named by it
    ['b', 'c', 'a']
    """

    def __init__(self, predictions, annotations, *, gold=None, scores=None, item_ids=None):
        inputs = [("predictions", predictions), ("annotations", annotations), ("gold", gold), ("scores", scores)]
        *given, item_ids = V.align_by_index(
            [*inputs, ("item_ids", item_ids)], ids="item_ids",
            hints={"annotations": "(For annotations from annotations_from_long, pass items=predictions.index: its "
                                  "rows then follow the predictions, NaN for an item nobody labelled.)"},
        )
        self.predictions, self.annotations, self.gold, self.scores = given
        #: the items' ids (None: their positions ``0 .. n-1``), see ``item_ids`` above
        self.item_ids = _item_ids(item_ids, list(zip([n for n, _ in inputs], given, strict=True)), self.n_items)

    @property
    def n_items(self) -> int:
        return int(np.asarray(self.predictions).size)

    def __repr__(self) -> str:
        shape = np.shape(self.annotations)
        n_ann = 1 if len(shape) == 1 else shape[1]
        n_gold = 0 if self.gold is None else int(np.isfinite(np.asarray(self.gold, dtype=float)).sum())
        return f"AnnotationData(n_items={self.n_items}, n_annotators={n_ann}, n_gold={n_gold})"
