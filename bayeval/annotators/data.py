"""What :class:`~bayeval.annotators.model.AnnotatorError` is fitted to: the classifier's
predictions, the annotators' labels, gold labels and scores (:class:`AnnotationData`), a
long table of crowd labels turned into annotator columns (:func:`annotations_from_long`),
and the checks that read them as class indices."""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import _validate as V

__all__ = ["AnnotationData", "annotations_from_long"]

_MAX_CLASSES = 127  # label draws are int8


def _has_gold(data: AnnotationData) -> bool:
    """Whether ``data`` has a known gold label (False where the gold is malformed: the
    data check reports that)."""
    if data.gold is None:
        return False
    try:
        return bool(np.isfinite(np.asarray(data.gold, dtype=float)).any())
    except (TypeError, ValueError):
        return False


def _to_float_matrix(x, name: str) -> tuple[np.ndarray, np.ndarray | None]:
    """Numbers with NaN for missing (None / pd.NA accepted); column names of a frame."""
    names = None
    if isinstance(x, pd.DataFrame):
        names = np.asarray([str(c) for c in x.columns])
        x = x.to_numpy(dtype=object)
    elif isinstance(x, pd.Series):
        x = x.to_numpy(dtype=object)
    if x is None or isinstance(x, str | bytes):
        raise TypeError(f"`{name}` must be an array of class indices, got {x!r}.")
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged lists
        raise TypeError(f"`{name}` could not be read as an array ({exc}).") from exc
    if arr.dtype == bool:
        arr = arr.astype(np.float64)
    elif arr.dtype == object or arr.dtype.kind in "USV":
        flat = []
        for v in arr.ravel():
            if v is None or v is pd.NA or (isinstance(v, float) and v != v):
                flat.append(np.nan)
            elif isinstance(v, numbers.Real) and not isinstance(v, bool | np.bool_):
                flat.append(float(v))
            elif isinstance(v, bool | np.bool_):
                flat.append(float(v))
            else:
                raise TypeError(
                    f"`{name}` must hold class indices 0..K-1 (and NaN for missing), got "
                    f"{v!r}. Map class names to integers first, e.g. with "
                    "`pd.Categorical(values, categories=classes).codes` (then -1, missing, to NaN)."
                )
        arr = np.asarray(flat, dtype=np.float64).reshape(arr.shape)
    elif arr.dtype.kind not in "iuf":
        raise TypeError(f"`{name}` must be numeric class indices, got dtype {arr.dtype}.")
    return arr.astype(np.float64), names


def _check_classes(arr: np.ndarray, name: str, n_classes: int, *, allow_nan: bool) -> None:
    if np.isinf(arr).any():
        raise ValueError(f"`{name}` holds infinite values; expected class indices 0..{n_classes - 1}.")
    nan = np.isnan(arr)
    if nan.any() and not allow_nan:
        raise ValueError(
            f"`{name}` must be complete, but {int(nan.sum())} value(s) are NaN "
            f"(first at position {int(np.flatnonzero(nan.ravel())[0])}). Every item needs one."
        )
    known = arr[~nan]
    frac = known != np.round(known)
    if frac.any():
        raise ValueError(
            f"`{name}` must hold whole class indices 0..{n_classes - 1}, got non-integers such "
            f"as {V._preview(np.unique(known[frac]))}."
        )
    out = (known < 0) | (known > n_classes - 1)
    if out.any():
        top, bottom = int(known.max()), int(known.min())
        if (known == -1).any() and allow_nan:
            fix = "-1 is not a class: use NaN (np.nan) for unknown or missing labels, not -1"
        elif (known == -1).any():
            fix = f"-1 is not a class; `{name}` needs a class index 0..{n_classes - 1} for every item"
        elif bottom >= 1 and top == n_classes:
            fix = (
                f"the labels look coded 1..{n_classes}: shift them to 0..{n_classes - 1} "
                "(subtract 1)"
            )
        elif top >= n_classes:
            fix = f"if there really are {top + 1} classes, build AnnotatorError(n_classes={top + 1})"
        else:
            fix = "use indices from 0"
        raise ValueError(
            f"`{name}` holds class indices {V._preview(np.unique(known[out]).astype(int))} outside "
            f"0..{n_classes - 1} (n_classes={n_classes}); {fix}."
        )


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
    vals, _ = _to_float_matrix(df[label], "label")
    df = df.assign(**{label: vals})
    if pool == "annotator":
        dup = df.duplicated(subset=[item, annotator])
        if dup.any():
            first = df[dup].iloc[0]
            raise ValueError(
                f"{int(dup.sum())} (item, annotator) pair(s) appear more than once, e.g. item "
                f"{first[item]!r} by annotator {first[annotator]!r}; keep one label per pair, or "
                "use pool='slot'."
            )
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
                f"{V._preview(np.asarray(unknown))}; check that the ids match (type and spelling)."
            )
        wide = wide.reindex(ids)
    else:
        wide = wide.sort_index()
    wide.index.name = item
    return wide.astype(np.float64)


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

    The arrays are checked against the number of classes when a model is fitted (or
    built), where the message names the argument and the first bad cell.

    Examples
    --------
    >>> from bayeval.annotators import AnnotationData
    >>> AnnotationData([1, 0, 1], [[1, 1], [0, 1], [1, float("nan")]], gold=[1, float("nan"), float("nan")])
    AnnotationData(n_items=3, n_annotators=2, n_gold=1)
    """

    def __init__(self, predictions, annotations, *, gold=None, scores=None):
        self.predictions = predictions
        self.annotations = annotations
        self.gold = gold
        self.scores = scores

    @property
    def n_items(self) -> int:
        return int(np.asarray(self.predictions).size)

    def __repr__(self) -> str:
        shape = np.shape(self.annotations)
        n_ann = 1 if len(shape) == 1 else shape[1]
        n_gold = 0 if self.gold is None else int(np.isfinite(np.asarray(self.gold, dtype=float)).sum())
        return f"AnnotationData(n_items={self.n_items}, n_annotators={n_ann}, n_gold={n_gold})"


@dataclass(frozen=True)
class _Observed:
    """Validated data, compressed to distinct observation patterns."""

    predictions: np.ndarray  # (n,) int
    annotations: np.ndarray  # (n, J) float, NaN = missing
    gold: np.ndarray  # (n,) float, NaN = unknown
    annotator_names: np.ndarray
    patterns: np.ndarray  # (P, R) int, -1 = missing; R = 1 + J (rater 0 = the classifier)
    pattern_gold: np.ndarray  # (P,) int, -1 = unknown
    counts: np.ndarray  # (P,)
    inverse: np.ndarray  # (n,) pattern of each item

    @property
    def n_items(self) -> int:
        return int(self.predictions.size)


def _observe(predictions, annotations, gold, n_classes: int, *, all_patterns: bool = False) -> _Observed:
    """Validate and compress. ``all_patterns``: list every possible pattern (zero counts
    allowed), so models of data sets of the same shape share one graph (benchmarks)."""
    pred, _ = _to_float_matrix(predictions, "predictions")
    if pred.ndim != 1:
        raise ValueError(
            f"`predictions` must be 1-D (one predicted class per item), got shape {pred.shape}."
        )
    if pred.size == 0:
        raise ValueError("`predictions` is empty: the evaluation needs at least one item.")
    _check_classes(pred, "predictions", n_classes, allow_nan=False)
    n = pred.size
    ann, names = _to_float_matrix(annotations, "annotations")
    if ann.ndim == 1:
        ann = ann[:, None]
    if ann.ndim != 2:
        raise ValueError(
            f"`annotations` must have shape (n_items,) or (n_items, n_annotators), got {ann.shape}."
        )
    if ann.shape[0] != n:
        hint = " (did you pass it transposed?)" if ann.shape[1] == n else ""
        raise ValueError(
            f"`annotations` has {ann.shape[0]} row(s) but `predictions` has {n} item(s){hint}; "
            "give one row per item, NaN where an annotator did not label it."
        )
    if ann.shape[1] == 0:
        raise ValueError("`annotations` has no annotator column; give at least one.")
    _check_classes(ann, "annotations", n_classes, allow_nan=True)
    empty = np.flatnonzero(np.isnan(ann).all(axis=0))
    if empty.size:
        raise ValueError(
            f"Annotator column(s) {empty.tolist()} hold no label at all (all NaN); drop them."
        )
    if names is None:
        names = np.asarray([str(j) for j in range(ann.shape[1])])
    if gold is None:
        g = np.full(n, np.nan)
    else:
        g, _ = _to_float_matrix(gold, "gold")
        if g.ndim != 1:
            raise ValueError(f"`gold` must be 1-D (NaN where unknown), got shape {g.shape}.")
        V.check_same_length(n, "gold", g.size, reference="predictions")
        _check_classes(g, "gold", n_classes, allow_nan=True)
    obs = np.column_stack([pred, ann])
    obs = np.where(np.isnan(obs), -1, obs).astype(np.int64)
    gcode = np.where(np.isnan(g), -1, g).astype(np.int64)
    keys = np.column_stack([obs, gcode])
    uniq, inverse, counts = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
    if all_patterns:
        values = [np.arange(n_classes)] + [np.arange(-1, n_classes)] * obs.shape[1]
        grid = np.stack(np.meshgrid(*values, indexing="ij"), axis=-1).reshape(-1, len(values))
        where = {tuple(row): j for j, row in enumerate(grid.tolist())}
        full = np.zeros(grid.shape[0])
        full[[where[tuple(row)] for row in uniq.tolist()]] = counts
        inverse = np.array([where[tuple(row)] for row in uniq.tolist()])[np.asarray(inverse).reshape(-1)]
        uniq, counts = grid, full
    pred_i = pred.astype(np.int64)
    for a in (pred_i, ann, g, uniq, counts):
        a.setflags(write=False)
    return _Observed(
        predictions=pred_i,
        annotations=ann,
        gold=g,
        annotator_names=names,
        patterns=uniq[:, :-1],
        pattern_gold=uniq[:, -1],
        counts=counts.astype(np.float64),
        inverse=np.asarray(inverse).reshape(-1),
    )
