"""Reading the annotator-error data as class indices: the checks behind
:class:`~bayeval.annotators.data.AnnotationData` and the observations compressed to
distinct patterns (what the model's likelihood is summed over)."""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core import _validate as V

MAX_CLASSES = 127  # label draws are int8


def has_gold(data) -> bool:
    """Whether ``data`` has a known gold label (False where the gold is malformed: the
    data check reports that)."""
    if data.gold is None:
        return False
    try:
        return bool(np.isfinite(np.asarray(data.gold, dtype=float)).any())
    except (TypeError, ValueError):
        return False


def to_float_matrix(x, name: str) -> tuple[np.ndarray, np.ndarray | None]:
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


def check_classes(arr: np.ndarray, name: str, n_classes: int, *, allow_nan: bool) -> None:
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
            f"as {V.preview(np.unique(known[frac]))}."
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
            f"`{name}` holds class indices {V.preview(np.unique(known[out]).astype(int))} outside "
            f"0..{n_classes - 1} (n_classes={n_classes}); {fix}."
        )


@dataclass(frozen=True)
class Observed:
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


def observe(predictions, annotations, gold, n_classes: int, *, all_patterns: bool = False) -> Observed:
    """Validate and compress. ``all_patterns``: list every possible pattern (zero counts
    allowed), so models of data sets of the same shape share one graph (benchmarks)."""
    pred, _ = to_float_matrix(predictions, "predictions")
    if pred.ndim != 1:
        raise ValueError(
            f"`predictions` must be 1-D (one predicted class per item), got shape {pred.shape}."
        )
    if pred.size == 0:
        raise ValueError("`predictions` is empty: the evaluation needs at least one item.")
    check_classes(pred, "predictions", n_classes, allow_nan=False)
    n = pred.size
    ann, names = to_float_matrix(annotations, "annotations")
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
    check_classes(ann, "annotations", n_classes, allow_nan=True)
    empty = np.flatnonzero(np.isnan(ann).all(axis=0))
    if empty.size:
        said = empty.tolist() if names is None else [str(names[j]) for j in empty]
        raise ValueError(
            f"Annotator column(s) {said} hold no label at all (all NaN); drop them."
        )
    if names is None:
        names = np.asarray([str(j) for j in range(ann.shape[1])])
    repeated = pd.Index(names)[pd.Index(names).duplicated()].unique()
    if len(repeated):
        raise ValueError(
            f"`annotations` has {len(repeated)} column name(s) used twice (as text), e.g. "
            f"{repeated[0]!r}: each annotator needs its own column name. Rename the columns, "
            "or merge the columns of one annotator into one."
        )
    if gold is None:
        g = np.full(n, np.nan)
    else:
        g, _ = to_float_matrix(gold, "gold")
        if g.ndim != 1:
            raise ValueError(f"`gold` must be 1-D (NaN where unknown), got shape {g.shape}.")
        V.check_same_length(n, "gold", g.size, reference="predictions")
        check_classes(g, "gold", n_classes, allow_nan=True)
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
    return Observed(
        predictions=pred_i,
        annotations=ann,
        gold=g,
        annotator_names=names,
        patterns=uniq[:, :-1],
        pattern_gold=uniq[:, -1],
        counts=counts.astype(np.float64),
        inverse=np.asarray(inverse).reshape(-1),
    )
