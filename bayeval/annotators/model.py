"""True accuracy of a classifier under (correlated) annotator error: a generative model.

Each item ``i`` has a true class ``z_i`` (one of ``K``; binary is the main case) and
a latent difficulty ``d_i ~ Normal(0, 1)``. The classifier under evaluation and
every annotator are *raters*: rater ``r`` is right about an item of class ``k``
with probability ``Phi((probit(a[r, k]) - rho[r] d_i) / sqrt(1 - rho[r]^2))`` -- its
accuracy ``a[r, k]`` averaged over difficulty, shifted by how strongly its errors
follow the difficulty (``rho[r]``) -- and, when wrong, picks a wrong class from its
own distribution over the ``K - 1`` other classes (a Dawid--Skene confusion row;
nothing to choose for ``K = 2``). Given ``(z_i, d_i)`` the raters are independent;
a hard item makes every rater with a positive ``rho`` err more often, which is what
correlates the classifier's errors with the annotators'. Both ``z_i`` and ``d_i``
are summed out of the likelihood (``d_i`` on Gauss--Hermite nodes), so the
posterior has only global parameters and NUTS samples it quickly; items with the
same observations share one likelihood term, so the cost does not grow with the
number of items.

The true classes are then drawn from ``P(z_i | theta, observations)`` by
:class:`bayeval.Posterior` (``K = 2``) or :class:`CategoricalPosterior`
(``K > 2``), so the classifier's accuracy, precision and recall on *this* item
set come out as posterior distributions; gold (expert-verified) labels are fixed
in every draw.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import NamedTuple

import arviz as az
import numpy as np
import pandas as pd
import xarray as xr
from scipy.optimize import minimize_scalar
from scipy.special import log_ndtr, logsumexp, ndtr

from ..core._defaults import HDI_PROB, hdi_columns
from ..core import _diagnostics as _diag
from ..core import _validate as V
from ..core.data import EvalData
from ..core.model import Model
from ..core.posterior import Posterior
from ..core.summary import hdi, summary_frame, summary_rows

__all__ = [
    "AnnotationData", "AnnotatorError", "CategoricalPosterior", "GuardedAccuracy", "RectifiedAccuracy",
    "annotations_from_long",
]

_MAX_CLASSES = 127  # label draws are int8
_WORK_BYTES = 1 << 25  # working set of one block of the likelihood in numpy (~32 MiB)
_CLASS_METRICS = ("accuracy", "class_accuracy", "precision", "recall", "f_score")
_RHO_MAX = 0.95  # largest |correlation| of a rater's errors with the difficulty
_GOLD_FALLBACKS = ("stack", "off")
_ANNOTATOR_POOLING = ("separate", "exchangeable")
_GOLD_CHECK_LEVEL = 0.05  # two-sided p-value below which the gold items contradict the model
_INTERVAL_KINDS = ("hdi", "equal-tailed")
_PARAM_NAMES = (
    "prevalence",
    "model_class_accuracy",
    "annotator_class_accuracy",
    "model_difficulty_u",
    "annotator_difficulty_u",
    "wrong_class",
)
_RHAT_ADVICE = (
    "Without gold items the error correlation is weakly identified and the posterior can have "
    "two modes (in one, a shared item difficulty explains the disagreements; in the other, the "
    "classes' imbalance); chains that settle in different modes give an r_hat well above 1.01, "
    "and the draws then do not weigh the modes right. Label a random gold subset (on real "
    "crowds 319 of 320 fits with 30 or 100 gold items were clean), pool interchangeable "
    "annotator columns (AnnotatorError(annotators='exchangeable')), add annotators, or tune "
    "longer."
)


# --------------------------------------------------------------------------- input checks


#: Default draws per chain of AnnotatorError.fit, with and without gold items.
_DRAWS_WITH_GOLD, _DRAWS_WITHOUT_GOLD = 1000, 2000


def _has_gold(data: AnnotationData) -> bool:
    """Whether ``data`` has a known gold label (False where the gold is malformed: the
    data check reports that)."""
    if data.gold is None:
        return False
    try:
        return bool(np.isfinite(np.asarray(data.gold, dtype=float)).any())
    except (TypeError, ValueError):
        return False


def _as_prior(x, name: str, *, n: int) -> tuple[float, ...]:
    try:
        vals = tuple(float(v) for v in np.atleast_1d(np.asarray(x, dtype=float)))
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`{name}` must be {n} number(s), got {x!r}.") from exc
    if len(vals) != n or not all(np.isfinite(vals)):
        raise ValueError(f"`{name}` must be {n} finite number(s), got {x!r}.")
    return vals


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
        pass it as ``annotations`` to :meth:`AnnotatorError.fit`.

    Examples
    --------
    >>> import pandas as pd
    >>> from bayeval.annotators.model import annotations_from_long
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
    """What :class:`AnnotatorError` is fitted to: predictions, annotations, gold, scores.

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


def _as_annotation_data(args, kwargs, what: str, stacklevel: int = 3) -> AnnotationData:
    """``build``/``fit``'s data argument: one AnnotationData."""
    if len(args) == 1 and isinstance(args[0], AnnotationData) and "gold" not in kwargs and "scores" not in kwargs:
        return args[0]
    raise TypeError(
        f"AnnotatorError.{what}() takes one AnnotationData(predictions, annotations, gold=..., scores=...), "
        f"got {len(args)} positional argument(s)"
        + (f" of type {type(args[0]).__name__}" if len(args) == 1 else "") + "."
    )


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


# ----------------------------------------------------------------- shared likelihood pieces


def _wrong_index(patterns: np.ndarray, n_classes: int) -> np.ndarray:
    """Position of observed class ``l`` among the wrong classes of true class ``k``.

    Shape ``(P, R, K)``; 0 where the rater is missing or right (the term is masked).
    """
    obs = patterns[:, :, None]
    k = np.arange(n_classes)[None, None, :]
    idx = np.where(obs < k, obs, obs - 1)
    return np.where((obs >= 0) & (obs != k), idx, 0)


def _normal_nodes(n_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss--Hermite nodes and weights for a standard normal."""
    x, w = np.polynomial.hermite_e.hermegauss(n_nodes)
    return x, w / w.sum()


# ------------------------------------------------------------------------------- the model


class AnnotatorError(Model):
    """Generative model of a classifier's true accuracy under correlated annotator error.

    Raters are the classifier (rater ``"model"``) and the annotators. Item ``i``
    has a true class ``z_i`` and a difficulty ``d_i ~ Normal(0, 1)``; rater ``r``
    gives the true class ``k`` with probability

        P(right | z_i = k, d_i) = Phi((probit(a[r, k]) - rho[r] * d_i) / sqrt(1 - rho[r]^2))

    (a multivariate probit: rater ``r`` errs when ``rho[r] d_i + sqrt(1 - rho[r]^2)
    e_ir`` exceeds a threshold, ``e_ir`` independent standard normal noise). So
    ``a[r, k]`` is the rater's accuracy on items of class ``k`` averaged over
    difficulty, and ``rho[r]`` the correlation of its error propensity with the
    difficulty; two raters' error propensities correlate by ``rho[r] rho[s]``.
    When wrong, a rater picks one of the ``K - 1`` wrong classes with its own
    probabilities (a Dawid--Skene confusion row per rater and true class, with a
    Dirichlet(1) prior; nothing to choose for ``K = 2``). Class prevalences have
    a Dirichlet prior. The true class and the difficulty are summed out of the
    likelihood, the difficulty on ``n_nodes`` Gauss--Hermite nodes (the model is
    exactly the one whose difficulty takes those values with those weights; the
    accuracies it reports are computed on the same nodes, so they can differ
    from the nominal ``a`` by the quadrature error, below 0.01 for ``rho < 0.9``).

    *Correlated errors.* Annotator correlations ``rho`` lie in ``[0, 0.95]``: they
    define what "hard" means. The classifier's lies in ``[-0.95, 0.95]``: positive
    -- it struggles on the items the annotators struggle on (correlated errors,
    true accuracy nearer the lower bound ``A_model - (1 - A_gt)``); zero --
    independent errors given the class; negative -- its errors avoid theirs. The
    ``error_correlation`` reported by :meth:`summary` is the correlation (phi
    coefficient) between the indicators "the classifier is wrong" and "annotator
    j is wrong" on a random item, implied by the parameters (difficulty and
    class integrated out) -- the quantity the independence formula sets to 0.
    Accuracies that differ by class make it slightly non-zero even with
    ``rho = 0``.

    *How much shared error it can represent.* With both ``rho`` at the cap 0.95
    (and the 15 quadrature nodes the model is defined on), the largest error
    correlation is about 0.74, 0.64, 0.72 and 0.56 for two raters that are both
    70%, 80%, 90% and 95% right; for raters of unequal accuracy (80% and 95%) it
    is 0.45, which is 98.5% of the rarer errors shared -- near the most any
    model can give there. Real crowds can share more (a realized error
    correlation of 0.88 between two workers on a product-matching task); with gold items
    :meth:`fit` then leans on the gold-only model (see ``gold_fallback``), and
    the gold check in :meth:`summary` says so. The cap stays because near
    ``rho = 1`` the quadrature and the sampler degrade.

    *Identifiability.* What can be learned about the correlation depends on the data:

    * **With gold labels** (a random subset whose true class is known) the joint
      error pattern of classifier and annotators is observed on those items, so
      the correlation -- and the true accuracy on the other items -- is
      identified, more sharply as the subset grows. Errors are rare, so it takes
      a few hundred gold items to pin down a strong correlation; until then the
      prior still matters. The gold subset must be a random (or at least
      difficulty-blind) sample: gold items picked because they were easy or
      disputed bias every parameter.
    * **Several annotators per item, no gold.** Under the model's assumptions
      (raters independent given class and difficulty) the annotators' mutual
      agreement reveals the latent class, so accuracies are identified (the
      Dawid--Skene argument, up to relabelling the classes, which the priors rule
      out by putting most mass on better-than-chance raters). The correlations
      rest on higher-order agreement patterns: in the binary case there are
      ``2^R - 1`` pattern frequencies for ``1 + 3R`` parameters with ``R`` raters,
      so at least three annotators per item plus the classifier are needed, and
      even then they are weakly identified unless there are many items.
    * **One (or two) annotators per item, no gold** -- the setting of the
      closed-form bounds: the data fix only the agreement rates, not who is wrong
      nor how errors overlap. The correlation, and hence where the true accuracy
      lies between the bounds, comes from the prior (``model_difficulty``,
      ``annotator_difficulty`` and the accuracy priors), and the posterior says so
      with a wide interval. Put what is known into the priors (e.g. annotators
      known to be about 96% right: ``annotator_accuracy=(96, 4)``), or label a
      gold subset.

    Parameters
    ----------
    n_classes : int, default 2
        Number of classes ``K``; classes are the integers ``0 .. K - 1`` and, for
        ``K = 2``, class 1 is "positive" for precision and recall.
    model_accuracy : (float, float), default (3.0, 1.0)
        Beta prior ``(alpha, beta)`` of the classifier's accuracy on the items of
        each true class (mean 0.75).
    annotator_accuracy : (float, float), default (6.0, 1.0)
        The same for each annotator (mean 0.86).
    model_difficulty : (float, float), default (3.0, 1.0)
        Beta prior of ``(rho_model / 0.95 + 1) / 2``, i.e. of the classifier's
        difficulty correlation mapped to (0, 1). The default leans towards
        positive correlation (mean ``rho_model = 0.48``; errors tend to be
        shared, as they usually are) and leaves 12.5% to negative values.
    annotator_difficulty : (float, float), default (2.0, 1.0)
        Beta prior of ``rho_annotator / 0.95`` (density rising linearly on
        [0, 0.95]; mean 0.63).

        Why these two: with one annotator per item only the *product*
        ``rho_model * rho_annotator`` (the correlation of their error
        propensities) is identified, and it is what moves the true accuracy
        between the independence value and the lower bound. The defaults spread
        that product over its range (prior median 0.30, 90% in [-0.15, 0.73]).
        The earlier defaults ``(2, 1)`` and ``(1, 1)`` put half of it below 0.1,
        i.e. near independence, and with 50 gold labels and strongly shared
        errors their 90% intervals covered the true accuracy in only 68% of
        simulated trials (91% with these; ``benchmarks/results/annotator.md``).
    prevalence_concentration : float, default 1.0
        Dirichlet concentration of the class prevalences.
    n_nodes : int, default 15
        Gauss--Hermite nodes for the difficulty.
    independent : bool, default False
        Fix every ``rho`` at 0: errors independent given the true class (then the
        model is Dawid--Skene with the classifier as one more rater).
    gold_fallback : {"stack", "off"}, default "stack"
        With gold items: ``"stack"`` reports a mixture of this model and a
        *gold-only* model (the true class of an unlabelled item drawn from a
        Dirichlet/Beta posterior of the gold items' confusion table given the
        predicted class, ignoring the annotators), weighted by stacking on the gold
        items' leave-one-out predictive densities (PSIS-LOO for this model, exact for
        the gold-only one). When the annotators tell the truth about the gold items
        better than the gold base rate does, the weight goes to this model; when the
        model's picture of shared errors is wrong on the gold items, weight moves to
        the gold-only model, whose interval is honest whatever the annotators do.
        The weight is the stacking weight averaged over Bayesian-bootstrap replicates
        of the gold items (``post.gold_check["weight"]``; the plain stacking weight is
        ``post.gold_check["point_weight"]``): a few dozen gold items seldom decide
        between the models outright, and the average keeps some of the gold-only
        model in the mix unless they do.
        ``"off"``: this model alone. The weights and a check of the gold items
        against the model are in ``post.gold_check`` and in :meth:`summary`. Without
        gold items both settings are this model alone.
    annotators : {"separate", "exchangeable"}, default "separate"
        ``"separate"``: every annotator column has its own accuracies, difficulty
        correlation (and, for ``K > 2``, confusion row). ``"exchangeable"``: all
        annotator columns share one set -- the Dawid--Skene pooling of a crowd whose
        columns are interchangeable, e.g. ``annotations_from_long(df, pool="slot")``
        where column ``j`` holds each item's ``j``-th label from whichever worker gave
        it. Fewer parameters, the same likelihood structure (each column still errs
        with the item's difficulty); the posterior variables
        ``annotator_class_accuracy`` and ``annotator_difficulty_u`` then have no
        ``annotator`` dimension (the per-annotator deterministics keep it).

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.annotators.model import AnnotationData, AnnotatorError
    >>> pred = np.array([1, 0, 1, 1, 0, 0])
    >>> ann = np.array([[1, 1], [0, np.nan], [0, 1], [1, 1], [0, 0], [1, np.nan]])
    >>> m = AnnotatorError().build(AnnotationData(pred, ann, gold=[1, np.nan, np.nan, np.nan, 0, np.nan]))
    >>> sorted(v.name for v in m.free_RVs)  # doctest: +NORMALIZE_WHITESPACE
    ['annotator_class_accuracy', 'annotator_difficulty_u', 'model_class_accuracy',
     'model_difficulty_u', 'prevalence']
    >>> dict(m.coords)["rater"]
    ('model', '0', '1')

    Fitting samples with NUTS (seconds to a minute, whatever the number of items):
    ``post = AnnotatorError().fit(AnnotationData(pred, ann), random_seed=1)``; then
    ``post.metric("accuracy")`` is the posterior of the true accuracy on these
    items and ``AnnotatorError().summary(post)`` tabulates annotator accuracies and
    error correlations.

    Crowd data in long format (one row per ``item, annotator, label``): several
    references per item are the path that identifies the accuracies without
    gold; turn them into annotator columns with :func:`annotations_from_long`,
    aligned to the predictions' items:

    >>> import pandas as pd
    >>> from bayeval.annotators.model import annotations_from_long
    >>> crowd = pd.DataFrame({"item": [1, 1, 1, 2, 2, 3], "annotator": list("abcabc"),
    ...                       "label": [1, 1, 0, 0, 0, 1]})
    >>> ann = annotations_from_long(crowd, items=[1, 2, 3], pool="slot")
    >>> [str(a) for a in AnnotatorError().build(AnnotationData([1, 0, 1], ann)).coords["annotator"]]
    ['label_0', 'label_1', 'label_2']
    """

    def __init__(
        self,
        n_classes: int = 2,
        *,
        model_accuracy=(3.0, 1.0),
        annotator_accuracy=(6.0, 1.0),
        model_difficulty=(3.0, 1.0),
        annotator_difficulty=(2.0, 1.0),
        prevalence_concentration: float = 1.0,
        n_nodes: int = 15,
        independent: bool = False,
        gold_fallback: str = "stack",
        annotators: str = "separate",
    ):
        self.annotators = V.check_choice(annotators, "annotators", _ANNOTATOR_POOLING)
        self.gold_fallback = V.check_choice(gold_fallback, "gold_fallback", _GOLD_FALLBACKS)
        self.n_classes = V.as_positive_int(n_classes, "n_classes", minimum=2)
        if self.n_classes > _MAX_CLASSES:
            raise ValueError(f"`n_classes` must be <= {_MAX_CLASSES}, got {self.n_classes}.")
        self.model_accuracy = _as_prior(model_accuracy, "model_accuracy", n=2)
        self.annotator_accuracy = _as_prior(annotator_accuracy, "annotator_accuracy", n=2)
        self.model_difficulty = _as_prior(model_difficulty, "model_difficulty", n=2)
        self.annotator_difficulty = _as_prior(annotator_difficulty, "annotator_difficulty", n=2)
        (self.prevalence_concentration,) = _as_prior(
            prevalence_concentration, "prevalence_concentration", n=1
        )
        for name in (
            "model_accuracy",
            "annotator_accuracy",
            "model_difficulty",
            "annotator_difficulty",
            "prevalence_concentration",
        ):
            if min(np.atleast_1d(getattr(self, name))) <= 0:
                raise ValueError(
                    f"The Beta/Dirichlet parameters in `{name}` must be > 0, got {getattr(self, name)}."
                )
        self.n_nodes = V.as_positive_int(n_nodes, "n_nodes", minimum=1)
        if not isinstance(independent, bool | np.bool_):
            raise TypeError(f"`independent` must be True or False, got {independent!r}.")
        self.independent = bool(independent)

    def __repr__(self) -> str:
        extra = "" if self.annotators == "separate" else f", annotators={self.annotators!r}"
        return f"AnnotatorError(n_classes={self.n_classes}, independent={self.independent}{extra})"

    # ------------------------------------------------------------------ build

    def build(self, data, *args, **kwargs):
        """The PyMC model for these observations.

        Parameters
        ----------
        data : AnnotationData
            Predictions, annotations and gold labels.

        Returns
        -------
        pymc.Model
            Coords ``class``, ``annotator``, ``rater`` (``"model"`` then the
            annotators), ``pattern`` (distinct observation patterns) and, for
            ``K > 2``, ``other`` (the ``K - 1`` wrong classes). Free variables
            ``prevalence``, ``model_class_accuracy``, ``annotator_class_accuracy``,
            ``model_difficulty_u``, ``annotator_difficulty_u`` (and
            ``wrong_class``); data ``pattern_count`` (items per pattern);
            deterministics ``model_difficulty_corr``,
            ``annotator_difficulty_corr``, ``rater_skill``, ``rater_loading``
            (probit intercept and slope on the difficulty), ``model_accuracy``
            (population true accuracy), ``annotator_accuracy`` and
            ``error_correlation`` (per annotator); the likelihood is the potential
            ``loglik``.

        Examples
        --------
        >>> from bayeval.annotators.model import AnnotatorError
        >>> from bayeval.annotators import AnnotationData
        >>> m = AnnotatorError(3).build(AnnotationData([0, 1, 2, 2], [0, 1, 1, 2]))
        >>> m["wrong_class"].eval().shape, sorted(m.coords)
        ((2, 3, 2), ['annotator', 'class', 'other', 'pattern', 'rater'])
        """
        return self._build(self._observed(_as_annotation_data((data, *args), kwargs, "build")))

    def _observed(self, data: AnnotationData) -> _Observed:
        memo = getattr(self, "_memo", None)
        if memo is not None and memo[0] is data:
            return memo[1]
        obs = _observe(data.predictions, data.annotations, data.gold, self.n_classes)
        self._memo = (data, obs)
        return obs

    def _nodes(self) -> tuple[np.ndarray, np.ndarray]:
        if self.independent:
            return np.zeros(1), np.ones(1)
        return _normal_nodes(self.n_nodes)

    def _build(self, obs: _Observed):
        import pymc as pm
        import pytensor.tensor as pt
        from pymc.distributions.dist_math import normal_lcdf

        k_cls = self.n_classes
        n_ann = obs.annotations.shape[1]
        rater_names = ["model", *obs.annotator_names.tolist()]
        coords = {
            "class": np.arange(k_cls),
            "annotator": obs.annotator_names,
            "rater": rater_names,
            "pattern": np.arange(obs.patterns.shape[0]),
        }
        if k_cls > 2:
            coords["other"] = np.arange(k_cls - 1)
        nodes, node_w = self._nodes()
        pat = obs.patterns
        cls = np.arange(k_cls)
        eq = (pat[:, :, None] == cls).astype(np.float64)  # (P, R, K)
        neq = ((pat[:, :, None] >= 0) & (pat[:, :, None] != cls)).astype(np.float64)
        gold_mask = np.where(
            (obs.pattern_gold[:, None] < 0) | (obs.pattern_gold[:, None] == cls), 0.0, -np.inf
        )
        with pm.Model(coords=coords) as model:
            prevalence = pm.Dirichlet(
                "prevalence", a=np.full(k_cls, self.prevalence_concentration), dims="class"
            )
            m_acc = pm.Beta("model_class_accuracy", *self.model_accuracy, dims="class")
            shared = self.annotators == "exchangeable"
            if shared:  # one accuracy (per class) for every annotator column
                a_acc = pm.Beta("annotator_class_accuracy", *self.annotator_accuracy, dims="class")
                a_acc = pt.broadcast_to(a_acc[None, :], (n_ann, k_cls))
            else:
                a_acc = pm.Beta("annotator_class_accuracy", *self.annotator_accuracy, dims=("annotator", "class"))
            acc_rk = pt.concatenate([m_acc[None, :], a_acc], axis=0)  # (R, K)
            if self.independent:
                rho = pt.zeros(1 + n_ann)
            else:
                m_u = pm.Beta("model_difficulty_u", *self.model_difficulty)
                if shared:
                    a_u = pt.broadcast_to(pm.Beta("annotator_difficulty_u", *self.annotator_difficulty), (n_ann,))
                else:
                    a_u = pm.Beta("annotator_difficulty_u", *self.annotator_difficulty, dims="annotator")
                m_rho = pm.Deterministic("model_difficulty_corr", _RHO_MAX * (2 * m_u - 1))
                a_rho = pm.Deterministic("annotator_difficulty_corr", _RHO_MAX * a_u, dims="annotator")
                rho = pt.concatenate([m_rho[None], a_rho])
            scale = 1 / pt.sqrt(1 - rho**2)
            probit = pt.sqrt(2.0) * pt.erfinv(2 * acc_rk - 1)
            skill = pm.Deterministic("rater_skill", probit * scale[:, None], dims=("rater", "class"))
            loading = pm.Deterministic("rater_loading", rho * scale, dims="rater")
            eta = skill[:, :, None] - loading[:, None, None] * nodes[None, None, :]  # (R, K, Q)
            # log P(observations of pattern p | z = k, d = node q): (P, K, Q)
            ll = (eq[:, :, :, None] * normal_lcdf(0.0, 1.0, eta)[None]).sum(axis=1) + (
                neq[:, :, :, None] * normal_lcdf(0.0, 1.0, -eta)[None]
            ).sum(axis=1)
            if k_cls > 2:
                if shared:
                    w_m = pm.Dirichlet("model_wrong_class", a=np.ones((k_cls, k_cls - 1)), dims=("class", "other"))
                    w_a = pm.Dirichlet("annotator_wrong_class", a=np.ones((k_cls, k_cls - 1)), dims=("class", "other"))
                    wrong = pm.Deterministic(
                        "wrong_class",
                        pt.concatenate([w_m[None], pt.broadcast_to(w_a[None], (n_ann, k_cls, k_cls - 1))], axis=0),
                        dims=("rater", "class", "other"),
                    )
                else:
                    wrong = pm.Dirichlet(
                        "wrong_class", a=np.ones((1 + n_ann, k_cls, k_cls - 1)), dims=("rater", "class", "other")
                    )
                # one-hot of the wrong class each rater picked, (P, R, K, K - 1)
                pick = (_wrong_index(pat, k_cls)[..., None] == np.arange(k_cls - 1)) & (neq[..., None] > 0)
                log_pick = (pick * pt.log(wrong)[None]).sum(axis=(1, 3))  # (P, K)
                ll = ll + log_pick[:, :, None]
            log_w = np.log(node_w)
            joint = ll + (pt.log(prevalence) + gold_mask)[:, :, None] + log_w[None, None, :]
            flat = joint.reshape((joint.shape[0], -1))
            top = pt.max(flat, axis=1, keepdims=True)
            lse = pt.log(pt.exp(flat - top).sum(axis=1)) + top[:, 0]
            counts = pm.Data("pattern_count", obs.counts, dims="pattern")
            pm.Potential("loglik", (counts * lse).sum())

            # population quantities implied by the parameters (on the same nodes)
            p_right = 0.5 * pt.erfc(-eta / np.sqrt(2.0))  # (R, K, Q)
            acc = (prevalence[None, :, None] * p_right * node_w[None, None, :]).sum(axis=(1, 2))
            pm.Deterministic("model_accuracy", acc[0])
            pm.Deterministic("annotator_accuracy", acc[1:], dims="annotator")
            both_wrong = (
                prevalence[None, :, None] * (1 - p_right[0])[None] * (1 - p_right[1:]) * node_w[None, None, :]
            ).sum(axis=(1, 2))
            e_m, e_a = 1 - acc[0], 1 - acc[1:]
            pm.Deterministic(
                "error_correlation",
                (both_wrong - e_m * e_a) / pt.sqrt(e_m * (1 - e_m) * e_a * (1 - e_a)),
                dims="annotator",
            )
        return model

    # ------------------------------------------------------------------ fit

    # ------------------------------------------------------------ the contract

    auto_sampler = "pymc"  # the difficulty correlations' posterior is far from Gaussian
    # Four chains at a cautious step size: without gold items the accuracies, prevalences
    # and correlations trade off along slow directions; with two chains at 0.9, 6% of the
    # fits on real crowds had an r_hat above 1.01 or a divergence.
    default_chains = 4
    target_accept = 0.95
    param_names = _PARAM_NAMES
    #: posterior variables ``_posterior`` adds to the sampled draws (the gold-only mixture):
    #: ``bayeval.load`` drops them before rebuilding, which adds them again, the same
    _posterior_adds = ("structured_component", "gold_only_confusion")

    def _start(self, data) -> dict:
        # chains start (jittered) at a Dawid--Skene estimate, not at the priors' means
        return _dawid_skene_start(self, self._observed(data))

    def _check_data(self, data):
        if not isinstance(data, AnnotationData):
            raise TypeError(
                f"`data` must be an AnnotationData(predictions, annotations, gold=..., scores=...), "
                f"got {type(data).__name__}."
            )
        obs = self._observed(data)
        if data.scores is not None and self.n_classes > 2:
            raise ValueError("`scores` applies to the binary case only (n_classes=2).")
        if data.scores is not None:
            V.check_same_length(obs.n_items, "scores", V.as_scores(data.scores).size, reference="predictions")
        return data

    def _posterior(self, data, idata, *, sampling, random_seed):
        obs = self._observed(data)
        self._memo = None
        score_arr = obs.predictions.astype(np.float64) if data.scores is None else V.as_scores(data.scores)
        post = self._wrap(obs, idata, score_arr, random_seed, gold_fallback=self.gold_fallback)
        post._observed = obs
        return post

    def _log_likelihood(self, post) -> dict:
        """``log p(observations_i | theta)`` per item: the annotations and prediction of each
        item with its true class summed out (gold items: their class fixed)."""
        obs = post._observed
        cp = _ClassProbability(self, obs)
        postd = post.idata.posterior
        n_c, n_d = postd.sizes["chain"], postd.sizes["draw"]
        m = n_c * n_d
        params = _flat_draws(postd, _STRUCT_VARS)
        step = cp.block_draws()
        out = np.concatenate([cp.pattern_loglik({k: v[a:a + step] for k, v in params.items()}, min(step, m - a))
                              for a in range(0, m, step)], axis=0)
        return {"observations": (("chain", "draw", "item"), out[:, obs.inverse].reshape(n_c, n_d, obs.n_items))}

    def _convergence(self, post, *, warn: bool) -> dict:
        return _diag.check_convergence(post.idata, post.sampling, _PARAM_NAMES, warn=warn, advice=_RHAT_ADVICE)

    def _after_fit(self, post, *, warn: bool) -> None:
        import warnings

        _add_log_prior(self, post.idata)
        if warn and not np.isfinite(post._observed.gold).any():
            # without gold the true accuracy may rest on the priors: say so when it does
            sens = _power_scaling(self, post).sensitivity().loc["true_accuracy"]
            if sens["diagnosis"]:
                warnings.warn(
                    f"bayeval: the true accuracy depends on the priors ({sens['diagnosis']}; power-scaling "
                    f"prior sensitivity {sens['prior_sensitivity']:.2f} >= {_SENSITIVITY_THRESHOLD}): without "
                    "gold items the data do not fully say how the classifier's errors overlap the "
                    "annotators', so the interval partly reflects the priors. "
                    "AnnotatorError().prior_sensitivity(post) shows how far it moves; label a random gold "
                    "subset or add references per item to pin it down.",
                    UserWarning, stacklevel=_diag.user_stacklevel(),
                )
        if warn and post.gold_check is not None and post.gold_check["contradicts"]:
            warnings.warn("bayeval: " + post.gold_check["message"], UserWarning, stacklevel=_diag.user_stacklevel())

    def fit(self, data=None, *args, draws: int | None = None, tune: int = 1000, chains: int | None = None,
            cores: int | None = None, random_seed=None, progressbar: bool = True, sampler: str = "auto",
            warn: bool = True, **sample_kwargs) -> Posterior:
        """Sample the posterior (NUTS) and wrap it with draws of the true classes.

        Parameters
        ----------
        data : AnnotationData
            Predictions, annotations, gold labels and (binary case) scores.
        draws : int, optional
            Draws per chain. Default 1000 with gold items, 2000 without: without gold the
            accuracies are identified only through the annotators' agreement, the
            posterior is slower to explore, and with 1000 draws about one fit in ten
            ended with an r_hat just above 1.01 on real crowd data.
        tune : int
            As in :func:`pymc.sample`.
        chains : int, optional
            Default 4 (two chains too often disagree by a little -- r_hat just above
            1.01 -- when there are no gold items). Every chain starts, jittered, at a
            Dawid--Skene EM estimate of the prevalences and class accuracies (gold items
            fixed), not at the priors' means (started there, about one real-crowd fit in
            thirty without gold had a chain stuck in a minor mode).
        cores : int, optional
            Processes for the chains (default: up to 2 at a time).
        random_seed : int, numpy Generator or SeedSequence, optional
            Seeds both the sampler and the label draws.
        progressbar : bool, default True
        sampler : {"auto", "importance", "smc", "pymc", "pymc-numba", "nutpie", "numpyro", "blackjax"}
            ``"auto"``: PyMC's NUTS (the posterior of the difficulty correlations is
            far from Gaussian, so importance sampling from the mode is not offered by
            default). The other NUTS implementations are selectable by name
            (``"numpyro"`` and ``"blackjax"`` need JAX and do not run this model: JAX
            lacks one of its operations).
            ``"smc"``: PyMC's sequential Monte Carlo, each chain an independent run of
            ``draws`` particles tempered from the prior (``tune`` and the NUTS settings
            do not apply): separated modes get their posterior weight, but the
            particles can come out less spread than the posterior -- on real crowds with
            three references and no gold its 90% intervals were 4-27% narrower than
            NUTS's for the same coverage, with fewer clean fits (30/36 against 34/36),
            so NUTS stays the default.
        warn : bool, default True
            Warn when the sampler diagnostics are bad (any r_hat > 1.01, bulk ESS
            below 100 per chain, divergences; see :meth:`check`) and when the gold
            items contradict the structured model (see ``gold_fallback`` in the
            class parameters).
        **sample_kwargs
            NUTS settings: ``target_accept`` (default 0.95; raise it, e.g. to 0.99,
            when the fit reports divergent transitions), ``init``, ``max_treedepth``.

        Returns
        -------
        Posterior or CategoricalPosterior
            For ``K = 2`` a :class:`bayeval.Posterior` whose EvalData has
            ``labels=gold``, ``predictions=predictions`` (and ``noisy_labels`` when
            there is a single, complete annotator column), whose label draws are
            the true classes, so ``post.metric("accuracy")`` is the posterior of
            the classifier's true accuracy on these items and
            ``post.population("accuracy")`` its population accuracy. For
            ``K > 2`` a :class:`CategoricalPosterior`. Either has the attributes
            ``gold_check`` (a dict, None without gold items; see
            :meth:`gold_check`), ``convergence`` (the dict of :meth:`check`) and
            ``sampling``; ``idata.log_likelihood["observations"]`` holds each item's
            log-likelihood, so ``az.loo(post.idata)`` works.

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval.annotators.model import AnnotationData, AnnotatorError
        >>> AnnotatorError().fit(AnnotationData([1, 0], [[1], [0.5]]), draws=10)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: `annotations` must hold whole class indices 0..1, got non-integers such as 0.5.
        """
        data = _as_annotation_data((data, *args) if data is not None else args, {}, "fit", stacklevel=3)
        spec = self
        if draws is None:
            draws = _DRAWS_WITH_GOLD if _has_gold(data) else _DRAWS_WITHOUT_GOLD
        return Model.fit(spec, data, draws=draws, tune=tune, chains=chains, cores=cores, random_seed=random_seed,
                         progressbar=progressbar, sampler=sampler, warn=warn, **sample_kwargs)

    def check(self, posterior: Posterior, *, warn: bool = True) -> dict:
        """Convergence diagnostics of a fit, with a warning when they are bad.

        Bad means: any r_hat > 1.01 (with more than one chain), any bulk ESS below
        100 per chain, or any divergent transition, over the model's parameters
        (accuracies, difficulty correlations, prevalences). :meth:`fit` runs this
        check itself (``warn=True``) and keeps the result as ``post.convergence``.

        Parameters
        ----------
        posterior : Posterior
            Returned by :meth:`fit`.
        warn : bool, default True

        Returns
        -------
        dict
            ``max_rhat``, ``min_ess_bulk``, ``divergences``, ``ok`` and ``messages``.

        Examples
        --------
        >>> import arviz as az
        >>> import numpy as np
        >>> from bayeval import EvalData, Posterior
        >>> from bayeval.annotators.model import AnnotatorError
        >>> rng = np.random.default_rng(0)
        >>> idata = az.from_dict(posterior={"model_class_accuracy": rng.uniform(0.8, 0.9, (2, 500, 2))},
        ...                      sample_stats={"diverging": np.zeros((2, 500), dtype=bool)})
        >>> post = Posterior(EvalData([0.0, 1.0], predictions=[0, 1]), idata, lambda p: [0.1, 0.9])
        >>> AnnotatorError().check(post)["ok"]
        True
        """
        if not isinstance(posterior, Posterior):
            raise TypeError(f"`posterior` must be the Posterior returned by fit(), got {type(posterior).__name__}.")
        sampling = getattr(posterior, "sampling", None)
        return _diag.check_convergence(posterior.idata, sampling, _PARAM_NAMES, warn=warn, advice=_RHAT_ADVICE)

    def _wrap(self, obs: _Observed, idata, score_arr, random_seed, *, gold_fallback: str = "stack",
              weight: str = "weight"):
        gold_check = None
        if np.isfinite(obs.gold).any():
            gold_check = _gold_stacking(self, obs, idata, random_seed)
            if gold_fallback == "stack":
                idata = _mix_gold_only(idata, obs, gold_check[weight], self.n_classes, random_seed)
            else:
                gold_check["weight"] = gold_check["point_weight"] = 1.0
        class_prob = _ClassProbability(self, obs)
        population = _Population(self, idata, obs)
        post = self._wrap_posterior(obs, idata, score_arr, random_seed, class_prob, population)
        post.gold_check = gold_check
        post.convergence = None
        return post

    def _wrap_posterior(self, obs, idata, score_arr, random_seed, class_prob, population):
        if self.n_classes == 2:
            noisy = None
            if obs.annotations.shape[1] == 1 and not np.isnan(obs.annotations).any():
                noisy = obs.annotations[:, 0]
            data = EvalData(score_arr, obs.gold, noisy_labels=noisy, predictions=obs.predictions)

            def probability(params):
                return class_prob(params)[..., 1]

            return Posterior(
                data,
                idata,
                probability,
                random_seed=random_seed,
                model="annotator error",
                population=population,
            )
        return CategoricalPosterior(
            obs.predictions,
            idata,
            class_prob,
            gold=obs.gold,
            n_classes=self.n_classes,
            random_seed=random_seed,
            model="annotator error",
            population=population,
        )

    # ------------------------------------------------------------------ summary

    def rectified_accuracy(self, posterior: Posterior, *, prob: float = HDI_PROB) -> RectifiedAccuracy:
        """The classifier's true accuracy on these items, read the prediction-powered way.

        The structured model predicts, for every item, the probability ``q`` that the
        classifier is right (from the item's annotations and prediction; for a gold item
        leave-one-out, i.e. without its gold label). The gold items measure how wrong
        that prediction is: the estimate is ``mean(q over all items) + mean(c - q over
        the gold items)`` with ``c`` = 1 where the classifier is right. Because the gold
        items are a random sample, the correction removes the model's bias whatever the
        model gets wrong (about shared errors, the priors, ...); the interval is a
        Student t interval with the finite-population factor ``1 - n_gold / n_items``.
        It is as wide as the gold items alone allow when ``q`` predicts nothing, and
        narrower when ``q`` predicts who is right. The residuals' variance counts half a
        right and half a wrong gold item beside the real ones, so that gold items
        without an error (or a model that predicts them all exactly) do not give a
        zero-width interval.

        This is a frequentist interval from the same fit (no new sampling); compare it
        with the posterior's interval (``summary``'s ``true_accuracy`` row, which shows
        this reading as ``true_accuracy_rectified``). It needs at least two gold items,
        drawn at random (or at least blind to difficulty) from the items.

        Parameters
        ----------
        posterior : Posterior
            Returned by :meth:`fit` on data with gold items.
        prob : float, default 0.9
            Coverage probability of the interval.

        Returns
        -------
        RectifiedAccuracy
            ``estimate``, ``lower``, ``upper``, ``std_error``, ``n_gold``, ``prob``.

        Examples
        --------
        >>> from bayeval.annotators.model import RectifiedAccuracy
        >>> RectifiedAccuracy(0.83, 0.78, 0.88, 0.03, 30, 0.9).upper
        0.88
        """
        if not isinstance(posterior, Posterior):
            raise TypeError(f"`posterior` must be the Posterior returned by fit(), got {type(posterior).__name__}.")
        prob = V.as_probability(prob, "prob", open_interval=True)
        check = getattr(posterior, "gold_check", None)
        if not check:
            raise ValueError(
                "The prediction-powered accuracy needs gold items: fit AnnotationData(..., gold=...) with "
                "the true class of a random sample of items (NaN for the others)."
            )
        if "q_mean_all" not in check:
            raise ValueError(
                "This fit's gold check lacks the prediction-powered pieces (it was made by an earlier "
                "bayeval): fit the data again."
            )
        return _rectified(check, prob)

    def guarded_accuracy(self, posterior: Posterior, *, prob: float = HDI_PROB,
                         interval: str = "hdi") -> GuardedAccuracy:
        """The classifier's true accuracy on these items, never claimed more precisely than
        the gold items alone allow.

        The interval is the smallest one that contains both the posterior's interval (the
        fitted model, stacked with the gold-only model) and the gold items' own interval
        (the plain Beta-Binomial reading: the classifier's accuracy ``~ Beta(1 + right,
        1 + wrong)`` from the gold items, the other items' correctness drawn from it,
        computed exactly). It holds probability ``prob`` or more under both readings, so
        it covers the true accuracy whenever the gold items' interval does: however wrong
        the model's picture of the shared errors is, the report is never less honest than
        the gold items alone. The price: it is never narrower than the gold items'
        interval. The estimate is the posterior mean (whose error is below the gold
        items' own when the model fits). This is the interval :meth:`summary` reports in
        its ``true_accuracy`` row when the fit has gold items (``guard=True``, the
        default); the posterior's own interval is its ``true_accuracy_posterior`` row.

        Parameters
        ----------
        posterior : Posterior
            Returned by :meth:`fit` on data with gold items.
        prob : float, default 0.9
            Probability of each of the two intervals.
        interval : {"hdi", "equal-tailed"}, default "hdi"
            Highest-density intervals (as :meth:`summary`) or equal-tailed ones.

        Returns
        -------
        GuardedAccuracy
            ``estimate``, ``lower``, ``upper``, the two intervals it joins
            (``posterior_lower/upper``, ``gold_lower/upper``), ``right``, ``n_gold``,
            ``prob`` and ``interval``.

        Examples
        --------
        >>> from bayeval.annotators.model import GuardedAccuracy
        >>> g = GuardedAccuracy(0.83, 0.78, 0.89, 0.80, 0.86, 0.78, 0.89, 25, 30, 0.9, "hdi")
        >>> (g.lower, g.upper) == (min(g.posterior_lower, g.gold_lower), max(g.posterior_upper, g.gold_upper))
        True
        """
        if not isinstance(posterior, Posterior):
            raise TypeError(f"`posterior` must be the Posterior returned by fit(), got {type(posterior).__name__}.")
        prob = V.as_probability(prob, "prob", open_interval=True)
        if interval not in _INTERVAL_KINDS:
            raise ValueError(f"`interval` must be one of {_INTERVAL_KINDS}, got {interval!r}.")
        check = getattr(posterior, "gold_check", None)
        if not check:
            raise ValueError(
                "The guarded accuracy needs gold items: fit AnnotationData(..., gold=...) with the "
                "true class of a random sample of items (NaN for the others)."
            )
        draws = np.asarray(posterior.metric("accuracy").values, dtype=np.float64).ravel()
        return _guarded(draws, int(check["right"]), int(check["n_gold"]), int(check["n_items"]), prob, interval)

    def summary(self, posterior: Posterior, *, hdi_prob: float = HDI_PROB, sensitivity: bool = True,
                guard: bool = True) -> pd.DataFrame:
        """Annotator accuracies, error correlations and the classifier's accuracy.

        Rows: ``model_accuracy`` (population true accuracy of the classifier),
        ``true_accuracy`` (on these items, from the label draws),
        ``annotator_accuracy[annotator=j]``, ``error_correlation[annotator=j]``
        (phi coefficient between "the classifier is wrong" and "annotator j is
        wrong" on a random item, implied by the parameters; 0 = independent
        errors), the difficulty correlations ``rho`` and the class prevalences; with
        gold items also ``true_accuracy_rectified`` (the prediction-powered reading,
        :meth:`rectified_accuracy`: estimate, standard error and interval at
        ``hdi_prob``), ``structured_weight`` and ``gold_check_p`` (the stacking weight
        and the gold check's p-value).

        With gold items (and ``guard=True``) the intervals of ``true_accuracy`` and
        ``model_accuracy`` are *guarded*: widened where needed to contain the gold
        items' own interval (:meth:`guarded_accuracy`; for the population accuracy the
        gold items' ``Beta(1 + right, 1 + wrong)``), so they never claim more than the
        gold items alone support, whatever the model gets wrong. Their mean and sd stay
        the posterior's; the posterior's own intervals are the rows
        ``true_accuracy_posterior`` and ``model_accuracy_posterior``. On three real
        crowdsourcing data sets (280 trials with 30 or 100 gold items, equal-tailed
        intervals) the guarded interval covered the true accuracy in 264 trials, the
        posterior's own in 258 and the gold items' in 253; it was 3--8% wider than the
        gold items' interval, the posterior's 7--30% narrower.

        Parameters
        ----------
        posterior : Posterior
            Returned by :meth:`fit`.
        hdi_prob : float, default 0.9
        sensitivity : bool, default True
            Add the prior-sensitivity columns of :meth:`prior_sensitivity`
            (``prior_sensitivity``, ``likelihood_sensitivity``, ``diagnosis``) for
            the accuracies and error correlations. A ``"prior-dominated"`` true
            accuracy means the data do not decide where it lies (typically: no gold
            items and one reference per item); :meth:`prior_sensitivity` shows how far
            its interval moves with the priors.
        guard : bool, default True
            With gold items, widen the accuracies' intervals to contain the gold items'
            own (see above). ``False`` reports the posterior's intervals in those rows
            (narrower when the model's picture of the errors is right).

        Returns
        -------
        pandas.DataFrame
            Columns ``mean, sd, hdi_<lo>%, hdi_<hi>%`` (and the sensitivity columns;
            NaN where they do not apply, e.g. for a posterior without the model's
            parameters).

        Examples
        --------
        >>> import arviz as az
        >>> import numpy as np
        >>> from bayeval import EvalData, Posterior
        >>> from bayeval.annotators.model import AnnotatorError
        >>> rng = np.random.default_rng(0)
        >>> idata = az.from_dict(posterior={
        ...     "model_accuracy": rng.uniform(0.8, 0.9, (1, 50)),
        ...     "annotator_accuracy": rng.uniform(0.9, 1, (1, 50, 1)),
        ...     "error_correlation": rng.uniform(0, 0.3, (1, 50, 1))})
        >>> post = Posterior(EvalData([0.0, 1.0], predictions=[0, 1]), idata, lambda p: [0.1, 0.9])
        >>> AnnotatorError().summary(post).index[:2].tolist()
        ['model_accuracy', 'true_accuracy']
        """
        if not isinstance(posterior, Posterior):
            raise TypeError(f"`posterior` must be the Posterior returned by fit(), got {type(posterior).__name__}.")
        hdi_prob = V.as_probability(hdi_prob, "hdi_prob", open_interval=True)
        if not isinstance(sensitivity, bool | np.bool_):
            raise TypeError(f"`sensitivity` must be True or False, got {sensitivity!r}.")
        if not isinstance(guard, bool | np.bool_):
            raise TypeError(f"`guard` must be True or False, got {guard!r}.")
        post = posterior.idata.posterior
        missing = [v for v in ("model_accuracy", "annotator_accuracy", "error_correlation") if v not in post]
        if missing:
            raise ValueError(f"This posterior was not produced by AnnotatorError: it lacks {missing}.")
        rows = []
        sample = ("chain", "draw")
        if "structured_component" in post and posterior._population is not None:
            population = posterior.population("accuracy")
        else:
            population = post["model_accuracy"]
        check = getattr(posterior, "gold_check", None)
        guarded = bool(guard) and check is not None and check["n_gold"] >= 1
        posterior_rows = []
        for name, draws in (("model_accuracy", population), ("true_accuracy", posterior.metric("accuracy"))):
            row = summary_rows(name, draws, hdi_prob, sample)[0]
            if guarded:
                right, n_gold = int(check["right"]), int(check["n_gold"])
                if name == "true_accuracy":
                    g_lo, g_hi = _gold_only_accuracy_interval(right, n_gold, int(check["n_items"]), hdi_prob, "hdi")
                else:
                    g_lo, g_hi = _beta_hdi(1.0 + right, 1.0 + n_gold - right, hdi_prob)
                posterior_rows.append((f"{name}_posterior", *row[1:]))
                row = (name, row[1], row[2], min(row[3], g_lo), max(row[4], g_hi))
            rows.append(row)
        for name in (
            "annotator_accuracy",
            "error_correlation",
            "model_difficulty_corr",
            "annotator_difficulty_corr",
            "prevalence",
        ):
            if name in post:
                da = post[name]
                da = da.rename({d: "annotator" for d in da.dims if d.endswith("_dim_0")})
                rows += summary_rows(name, da, hdi_prob, sample)
        rows += posterior_rows
        if check is not None:
            nan = float("nan")
            if "q_mean_all" in check and check["n_gold"] >= 2:
                r = _rectified(check, hdi_prob)
                rows.append(("true_accuracy_rectified", r.estimate, r.std_error, r.lower, r.upper))
            rows.append(("structured_weight", check["weight"], nan, nan, nan))
            rows.append(("gold_check_p", check["p_value"], nan, nan, nan))
        frame = summary_frame(rows, hdi_prob)
        if sensitivity:
            sens = _power_scaling(self, posterior).sensitivity()
            frame = frame.join(sens[["prior_sensitivity", "likelihood_sensitivity", "diagnosis"]])
            frame["diagnosis"] = frame["diagnosis"].fillna("")
        return frame

    def prior_sensitivity(
        self, posterior: Posterior, *, scales=(0.5, 2.0), hdi_prob: float = HDI_PROB
    ) -> pd.DataFrame:
        """How the reported accuracies move when the priors are made weaker or stronger.

        Without gold items, one reference per item fixes only how often classifier and
        reference agree; how their errors overlap -- and so where the true accuracy lies
        -- comes from the priors (the *difficulty* priors above all). This table says how
        much: every prior density ``p(theta)`` is raised to a power ``s`` (``s < 1``
        weakens it, ``s > 1`` sharpens it) and the posterior is recomputed from the same
        draws by Pareto-smoothed importance weights ``p(theta)^(s - 1)`` (power-scaling,
        Kallioinen et al. 2023; no refit). The draws of the gold-only model that a
        stacked fit mixes in do not depend on these priors and keep weight 1.

        Parameters
        ----------
        posterior : Posterior
            Returned by :meth:`fit`.
        scales : sequence of float, default (0.5, 2.0)
            Powers of the prior to show besides the fitted one (1).
        hdi_prob : float, default 0.9

        Returns
        -------
        pandas.DataFrame
            Index ``(quantity, prior_scale)``: ``true_accuracy`` (on these items),
            ``model_accuracy`` (population), ``annotator_accuracy[...]``,
            ``error_correlation[...]``, each at scale 1 and at each of ``scales``.
            Columns ``mean, sd, hdi_<lo>%, hdi_<hi>%`` (of the reweighted posterior),
            ``pareto_k`` (of the weights; above 0.7 the row is unreliable and is left
            NaN), ``prior_sensitivity`` and ``likelihood_sensitivity`` (the
            power-scaling indices of ``arviz.psens``: the distance between the
            posteriors at scales ``1/1.01`` and ``1.01``, per unit of log2 scale), and
            ``diagnosis``: ``"prior-data conflict"`` (both indices >= 0.05),
            ``"prior-dominated"`` (prior index >= 0.05, likelihood index < 0.05: the
            data say little and the prior decides) or ``""``.

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval.annotators.model import AnnotationData, AnnotatorError
        >>> rng = np.random.default_rng(0)
        >>> z = rng.integers(0, 2, 300)
        >>> pred = np.where(rng.random(300) < 0.85, z, 1 - z)
        >>> ref = np.where(rng.random(300) < 0.9, z, 1 - z)
        >>> spec = AnnotatorError()
        >>> post = spec.fit(AnnotationData(pred, ref), draws=300, tune=300,
        ...                 random_seed=1, progressbar=False, warn=False)
        >>> table = spec.prior_sensitivity(post)
        >>> table.loc[("true_accuracy", 1.0), "diagnosis"]  # no gold, one reference
        'prior-dominated'
        """
        if not isinstance(posterior, Posterior | CategoricalPosterior):
            raise TypeError(f"`posterior` must be the Posterior returned by fit(), got {type(posterior).__name__}.")
        hdi_prob = V.as_probability(hdi_prob, "hdi_prob", open_interval=True)
        scales = [float(x) for x in np.atleast_1d(np.asarray(scales, dtype=np.float64))]
        if not scales or any(not (np.isfinite(x) and x > 0) for x in scales):
            raise ValueError(f"`scales` must be positive numbers (powers of the prior), got {scales}.")
        return _power_scaling(self, posterior).table(scales, hdi_prob)


# ------------------------------------------------------------- prior sensitivity

# log-prior components: (posterior variable, the constructor option holding its prior)
_PRIOR_PARTS = (
    ("prevalence", "prevalence", "prevalence_concentration"),
    ("model_accuracy", "model_class_accuracy", "model_accuracy"),
    ("annotator_accuracy", "annotator_class_accuracy", "annotator_accuracy"),
    ("model_difficulty", "model_difficulty_u", "model_difficulty"),
    ("annotator_difficulty", "annotator_difficulty_u", "annotator_difficulty"),
)
_SENSITIVITY_THRESHOLD = 0.05  # the power-scaling index above which a prior (or likelihood) matters
_SAMPLE = ("chain", "draw")


def _log_prior(spec: AnnotatorError, post: xr.Dataset) -> xr.Dataset | None:
    """Each prior component's log density at every draw (constrained scale, as written in
    the model); None when the draws lack the model's parameters."""
    from scipy.special import betaln, gammaln

    out = {}
    for part, var, option in _PRIOR_PARTS:
        if var not in post:
            if var in ("model_difficulty_u", "annotator_difficulty_u") and spec.independent:
                continue
            return None
        x = post[var].clip(1e-12, 1 - 1e-12)
        other = [d for d in x.dims if d not in _SAMPLE]
        if part == "prevalence":
            a, k = spec.prevalence_concentration, spec.n_classes
            lp = ((a - 1) * np.log(x)).sum(other) + gammaln(k * a) - k * gammaln(a)
        else:
            a, b = getattr(spec, option)
            lp = ((a - 1) * np.log(x) + (b - 1) * np.log1p(-x) - betaln(a, b)).sum(other)
        out[part] = lp
    return xr.Dataset(out)


def _add_log_prior(spec: AnnotatorError, idata) -> None:
    """Store the ``log_prior`` group (what ``arviz.psens`` reads), unless present."""
    import warnings

    if "log_prior" in idata.groups():
        return
    lp = _log_prior(spec, idata.posterior)
    if lp is None:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        idata.add_groups(log_prior=lp)


def _psis_weights(log_w: np.ndarray) -> tuple[np.ndarray, float]:
    """Pareto-smoothed, normalized importance weights of flat log weights, and their k."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lw, k = az.psislw(log_w - log_w.max(), reff=1.0)
    w = np.exp(lw - lw.max())
    return w / w.sum(), float(k)


class _PowerScaling:
    """Power-scaled priors (and likelihood) of a fitted AnnotatorError, from its draws.

    A stacked fit mixes the structured model's draws with the gold-only model's, in
    proportions set by stacking. Power-scaling acts on the structured draws alone: the
    indices are computed on them, and the reweighted posterior keeps the mixture's
    proportions (the gold-only draws keep their weights)."""

    def __init__(self, spec: AnnotatorError, posterior):
        self.posterior = posterior
        idata = posterior.idata
        post = idata.posterior
        n = post.sizes["chain"] * post.sizes["draw"]
        self.mask = np.ones(n, dtype=bool)
        if "structured_component" in post:
            self.mask = post["structured_component"].values.ravel().astype(bool)
        lp = idata["log_prior"] if "log_prior" in idata.groups() else _log_prior(spec, post)
        self.log_prior = None if lp is None else sum(lp[v] for v in lp.data_vars).values.ravel()
        self.log_lik = None
        if "log_likelihood" in idata.groups() and self.log_prior is not None:
            ll = idata.log_likelihood
            total = sum(ll[v].sum([d for d in ll[v].dims if d not in _SAMPLE]) for v in ll.data_vars)
            self.log_lik = total.values.ravel()
        self.quantities = self._quantities(post)

    def _quantities(self, post) -> dict[str, np.ndarray]:
        out = {}
        if "structured_component" in post and self.posterior._population is not None:
            out["model_accuracy"] = self.posterior.population("accuracy").values.ravel()
        elif "model_accuracy" in post:
            out["model_accuracy"] = post["model_accuracy"].values.ravel()
        out["true_accuracy"] = self.posterior.metric("accuracy").values.ravel()
        for name in ("annotator_accuracy", "error_correlation"):
            if name in post:
                da = post[name]
                dim = [d for d in da.dims if d not in _SAMPLE][0]
                for j, label in enumerate(da[dim].values):
                    out[f"{name}[annotator={label}]"] = da.isel({dim: j}).values.ravel()
        return out

    def sensitivity(self) -> pd.DataFrame:
        """``arviz.psens`` of every quantity (on the structured draws), for the prior and
        for the likelihood."""
        import warnings

        names = list(self.quantities)
        m = self.mask
        draws = xr.Dataset({n: (_SAMPLE, x[m][None, :]) for n, x in self.quantities.items()})
        out = pd.DataFrame(index=names, columns=["prior_sensitivity", "likelihood_sensitivity"], dtype=float)
        for column, component, group in (
            ("prior_sensitivity", self.log_prior, "log_prior"),
            ("likelihood_sensitivity", self.log_lik, "log_likelihood"),
        ):
            if component is None or m.sum() < 10:
                continue
            total = xr.Dataset({"total": (_SAMPLE, component[m][None, :])})
            idata = az.InferenceData(posterior=draws, **{group: total})
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = az.psens(idata, component=group.removeprefix("log_"))
            out[column] = [float(res[n]) for n in names]
        out["diagnosis"] = [_diagnosis(p, q) for p, q in zip(out.prior_sensitivity, out.likelihood_sensitivity, strict=True)]
        return out

    def weights(self, scale: float) -> tuple[np.ndarray, float]:
        """Normalized weights of every draw with the priors raised to ``scale``, and the
        Pareto k of the structured draws' weights."""
        m = self.mask
        share = m.mean()
        if not m.any():  # stacking gave the structured model no weight: the priors do not matter
            return np.full(m.size, 1.0 / m.size), float("nan")
        w_struct, k = _psis_weights((scale - 1) * self.log_prior[m])
        w = np.empty(m.size)
        w[m] = share * w_struct
        if not m.all():
            w[~m] = (1 - share) / (~m).sum()
        return w, k

    def table(self, scales, hdi_prob) -> pd.DataFrame:
        lo_col, hi_col = hdi_columns(hdi_prob)
        sens = self.sensitivity()
        weights = {1.0: (None, float("nan"))}
        for s in scales:
            if s != 1.0:
                weights[s] = (None, float("nan")) if self.log_prior is None else self.weights(s)
        rng = np.random.default_rng(0)
        records = []
        for name, x in self.quantities.items():
            for s in sorted(weights):
                w, k = weights[s]
                if s == 1.0:
                    mean, sd = float(x.mean()), float(x.std(ddof=1))
                    lo, hi = hdi(x, hdi_prob)
                elif w is None or not (k < 0.7 or np.isnan(k)):  # NaN k: no structured draw to reweight
                    mean = sd = lo = hi = float("nan")
                else:
                    mean = float(np.sum(w * x))
                    sd = float(np.sqrt(np.sum(w * (x - mean) ** 2)))
                    # systematic resampling by the weights, then the HDI of the resample
                    u = (rng.random() + np.arange(x.size)) / x.size
                    idx = np.minimum(np.searchsorted(np.cumsum(w), u), x.size - 1)
                    lo, hi = hdi(x[idx], hdi_prob)
                records.append((name, s, mean, sd, float(lo), float(hi), k, *sens.loc[name]))
        frame = pd.DataFrame.from_records(
            records,
            columns=["quantity", "prior_scale", "mean", "sd", lo_col, hi_col, "pareto_k",
                     "prior_sensitivity", "likelihood_sensitivity", "diagnosis"],
        )
        return frame.set_index(["quantity", "prior_scale"])


def _diagnosis(prior_sens: float, lik_sens: float) -> str:
    if not prior_sens >= _SENSITIVITY_THRESHOLD:
        return ""
    if lik_sens >= _SENSITIVITY_THRESHOLD:
        return "prior-data conflict"
    return "prior-dominated"


def _power_scaling(spec: AnnotatorError, posterior) -> _PowerScaling:
    return _PowerScaling(spec, posterior)


# ------------------------------------------------------------- the gold items: stacking


def _poisson_binomial(q: np.ndarray) -> np.ndarray:
    """Distribution of the number of successes of independent Bernoulli(q_i)."""
    pmf = np.zeros(q.size + 1)
    pmf[0] = 1.0
    for j, qi in enumerate(q):
        pmf[1 : j + 2] = pmf[1 : j + 2] * (1 - qi) + pmf[: j + 1] * qi
        pmf[0] *= 1 - qi
    return pmf


class RectifiedAccuracy(NamedTuple):
    """The prediction-powered reading of a classifier's true accuracy
    (:meth:`AnnotatorError.rectified_accuracy`).

    Examples
    --------
    >>> from bayeval.annotators.model import RectifiedAccuracy
    >>> RectifiedAccuracy(0.83, 0.78, 0.88, 0.03, 30, 0.9).estimate
    0.83
    """

    estimate: float
    """Mean of the model's probabilities that the classifier is right, corrected by the gold items."""
    lower: float
    """Lower end of the interval (clipped to [0, 1])."""
    upper: float
    """Upper end of the interval (clipped to [0, 1])."""
    std_error: float
    """Standard error of the estimate (finite-population corrected)."""
    n_gold: int
    """Gold items behind the correction."""
    prob: float
    """Coverage probability of the interval."""


class GuardedAccuracy(NamedTuple):
    """The guarded reading of a classifier's true accuracy
    (:meth:`AnnotatorError.guarded_accuracy`): the smallest interval holding both the
    posterior's interval and the gold items' own.

    Examples
    --------
    >>> from bayeval.annotators.model import GuardedAccuracy
    >>> GuardedAccuracy(0.83, 0.78, 0.89, 0.80, 0.86, 0.78, 0.89, 25, 30, 0.9, "hdi").upper
    0.89
    """

    estimate: float
    """Posterior mean of the true accuracy on these items."""
    lower: float
    """Lower end: the lower of the two intervals' lower ends."""
    upper: float
    """Upper end: the higher of the two intervals' upper ends."""
    posterior_lower: float
    """Lower end of the posterior's interval."""
    posterior_upper: float
    """Upper end of the posterior's interval."""
    gold_lower: float
    """Lower end of the gold items' own interval."""
    gold_upper: float
    """Upper end of the gold items' own interval."""
    right: int
    """Gold items the classifier got right."""
    n_gold: int
    """Gold items."""
    prob: float
    """Probability of each of the two intervals."""
    interval: str
    """``"hdi"`` or ``"equal-tailed"``."""


def _discrete_interval(pmf: np.ndarray, prob: float, interval: str) -> tuple[int, int]:
    """Indices of the ends of a ``prob`` interval of a discrete distribution on 0..len-1:
    equal-tailed (the ``(1 - prob) / 2`` and ``(1 + prob) / 2`` quantiles) or the highest-
    density set (the most probable values until their mass reaches ``prob``; contiguous
    for a unimodal ``pmf``, and its hull otherwise)."""
    pmf = np.clip(np.asarray(pmf, dtype=np.float64), 0.0, None)
    pmf = pmf / pmf.sum()
    if interval == "equal-tailed":
        cdf = np.cumsum(pmf)
        tail = (1.0 - prob) / 2.0
        lo = int(np.searchsorted(cdf, tail * (1 - 1e-12)))
        hi = int(np.searchsorted(cdf, (1.0 - tail) * (1 - 1e-12)))
        return lo, min(hi, pmf.size - 1)
    order = np.argsort(-pmf, kind="stable")
    take = order[: int(np.searchsorted(np.cumsum(pmf[order]), prob * (1 - 1e-12))) + 1]
    return int(take.min()), int(take.max())


def _gold_only_accuracy_interval(right: int, n_gold: int, n_items: int, prob: float,
                                 interval: str) -> tuple[float, float]:
    """The gold items' own interval of the true accuracy on ``n_items`` items: ``right`` of
    ``n_gold`` gold items right, accuracy ``~ Beta(1 + right, 1 + n_gold - right)``, each of
    the other items right with that probability (a Beta-Binomial count), exactly."""
    from scipy.stats import betabinom

    rest = n_items - n_gold
    pmf = betabinom.pmf(np.arange(rest + 1), rest, 1 + right, 1 + n_gold - right)
    lo, hi = _discrete_interval(pmf, prob, interval)
    return (right + lo) / n_items, (right + hi) / n_items


def _beta_hdi(a: float, b: float, prob: float) -> tuple[float, float]:
    """Highest-density interval of Beta(a, b) with a, b >= 1 (unimodal): the narrowest
    interval of probability ``prob``."""
    from scipy.stats import beta as beta_dist

    dist = beta_dist(a, b)
    res = minimize_scalar(lambda t: dist.ppf(t + prob) - dist.ppf(t), bounds=(0.0, 1.0 - prob),
                          method="bounded", options={"xatol": 1e-10})
    t = float(res.x)
    return float(dist.ppf(t)), float(dist.ppf(t + prob))


def _guarded(draws: np.ndarray, right: int, n_gold: int, n_items: int, prob: float,
             interval: str) -> GuardedAccuracy:
    if interval == "hdi":
        p_lo, p_hi = (float(v) for v in hdi(draws, prob))
    else:
        p_lo, p_hi = (float(v) for v in np.quantile(draws, [(1 - prob) / 2, (1 + prob) / 2]))
    g_lo, g_hi = _gold_only_accuracy_interval(right, n_gold, n_items, prob, interval)
    return GuardedAccuracy(float(np.mean(draws)), min(p_lo, g_lo), max(p_hi, g_hi), p_lo, p_hi, g_lo, g_hi,
                           right, n_gold, prob, interval)


def _rectified(check: dict, prob: float) -> RectifiedAccuracy:
    from scipy.stats import t as student_t

    n, big_n = int(check["n_gold"]), int(check["n_items"])
    est = min(max(check["q_mean_all"] + check["residual_mean"], 0.0), 1.0)
    if n < 2:
        nan = float("nan")
        return RectifiedAccuracy(est, 0.0, 1.0, nan, n, prob)
    se = float(np.sqrt(max(1.0 - n / big_n, 0.0) * check["residual_var"] / n))
    half = float(student_t.ppf(0.5 + prob / 2.0, n - 1)) * se
    return RectifiedAccuracy(est, max(0.0, est - half), min(1.0, est + half), se, n, prob)


def _gold_stacking(spec: AnnotatorError, obs: _Observed, idata, random_seed=None) -> dict:
    """Stacking weight of the structured model against the gold-only model, and a check.

    Each gold item's true class is predicted leave-one-out: by the structured model from
    the item's annotations (PSIS-LOO: the posterior without the item's gold label is the
    posterior reweighted by ``1 / p(z_i | observations_i, theta)``), and by the gold-only
    model from the other gold items with the same predicted class (Dirichlet(1) prior,
    exact). The stacking weight ``w`` maximizes ``sum_i log(w p_struct_i + (1 - w) p_gold_i)``
    (``point_weight``); the weight used (``weight``) is its average over Bayesian-bootstrap
    replicates of the gold items (see :func:`_bootstrap_stacking_weight`).
    The check compares the number of gold items the classifier gets right with its
    leave-one-out predictive distribution under the structured model (Poisson-binomial);
    ``q_right`` holds each gold item's leave-one-out probability that the classifier is
    right (a tuple, in the order of the gold items' positions).
    """
    k = spec.n_classes
    idx = np.flatnonzero(np.isfinite(obs.gold))
    z = obs.gold[idx].astype(np.int64)
    pred = obs.predictions[idx]
    upat, inv = np.unique(obs.inverse[idx], return_inverse=True)
    reduced = _Observed(
        predictions=pred,
        annotations=obs.annotations[idx],
        gold=np.full(idx.size, np.nan),
        annotator_names=obs.annotator_names,
        patterns=obs.patterns[upat],
        pattern_gold=np.full(upat.size, -1),
        counts=np.ones(upat.size),
        inverse=np.asarray(inv).reshape(-1),
    )
    params = _flat_draws(idata.posterior)
    p = _ClassProbability(spec, reduced)(params)  # (m, n_gold, K), annotations only
    rows = np.arange(idx.size)
    with np.errstate(divide="ignore"):
        ll = np.log(np.maximum(p[:, rows, z], 1e-300)).T  # (n_gold, m)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # arviz's note on few draws / large k
        lw, khat = az.psislw(-ll)
    loo_struct = logsumexp(lw + ll, axis=1)
    q_right = (np.exp(lw) * p[:, rows, pred].T).sum(axis=1).clip(0.0, 1.0)
    counts = np.zeros((k, k))
    np.add.at(counts, (pred, z), 1.0)
    n_c = counts.sum(axis=1)
    loo_gold = np.log(counts[pred, z] / (n_c[pred] - 1 + k))

    point_weight = _stacking_weight(loo_struct, loo_gold)
    weight = _bootstrap_stacking_weight(loo_struct, loo_gold, random_seed)
    # the prediction-powered reading (``AnnotatorError.rectified_accuracy``): the structured
    # model's probability that the classifier is right, over all items (gold items: the
    # leave-one-out value), and the gold items' residuals of it
    q_all = _structured_right_probability(spec, obs, params)
    q_all[idx] = q_right
    resid = (pred == z).astype(np.float64) - q_right

    right = int((pred == z).sum())
    pmf = _poisson_binomial(q_right)
    cdf = np.cumsum(pmf)
    p_value = float(min(1.0, 2 * min(cdf[right], 1 - (cdf[right - 1] if right > 0 else 0.0))))
    lo = int(np.searchsorted(cdf, 0.05))
    hi = int(np.searchsorted(cdf, 0.95))
    expected = float(q_right.sum())
    contradicts = p_value < _GOLD_CHECK_LEVEL
    if contradicts:
        message = (
            f"the gold items contradict the annotator-error model: the classifier is right on "
            f"{right} of {idx.size} gold items, where the model (leave-one-out, from the "
            f"annotations) expects {expected:.1f} (90% range {lo}-{hi}; p = {p_value:.2g}). Its "
            "picture of how the classifier's errors overlap the annotators' does not fit; "
            f"the stacked posterior gives the gold-only model weight {1 - weight:.2f}."
        )
    else:
        message = (
            f"the classifier is right on {right} of {idx.size} gold items; the annotator-error "
            f"model expects {expected:.1f} (90% range {lo}-{hi}; p = {p_value:.2g})."
        )
    return {
        "weight": float(weight),
        "point_weight": float(point_weight),
        "n_gold": int(idx.size),
        "right": right,
        "expected": expected,
        "range_90": (lo, hi),
        "p_value": p_value,
        "contradicts": bool(contradicts),
        "elpd_loo_structured": float(loo_struct.sum()),
        "elpd_loo_gold_only": float(loo_gold.sum()),
        "max_pareto_k": float(np.max(khat)),
        "q_right": tuple(float(v) for v in q_right),
        "q_mean_all": float(q_all.mean()),
        "residual_mean": float(resid.mean()),
        "residual_var": _guarded_residual_variance(resid, float(q_right.mean())),
        "n_items": int(obs.n_items),
        "message": message,
    }


def _flat_draws(posterior, names=None) -> dict[str, np.ndarray]:
    """Posterior variables with chains and draws flattened into one leading axis
    (``names``: those of them present; default all)."""
    m = posterior.sizes["chain"] * posterior.sizes["draw"]
    names = posterior.data_vars if names is None else [n for n in names if n in posterior]
    return {n: posterior[n].values.reshape((m,) + posterior[n].shape[2:]) for n in names}


def _dawid_skene_start(spec: AnnotatorError, obs: _Observed, *, iters: int = 500, tol: float = 1e-8) -> dict:
    """Where the NUTS chains start: an EM (Dawid--Skene) estimate of the prevalences and
    the raters' class accuracies under independent errors, with the model's priors.

    Each rater is right on true class ``k`` with probability ``a[r, k]`` and otherwise
    picks a wrong class uniformly; the E-step gives each observation pattern's
    posterior over the true class (gold items fixed), the M-step the posterior means
    under the model's Beta and Dirichlet priors (annotator columns pooled when they are
    exchangeable). It starts from the vote shares of all raters, the classifier
    included. The difficulty correlations keep their prior starting point. Starting
    there instead of at the priors' means keeps chains out of minor modes near the
    prior (on real crowds without gold, about one fit in thirty had a chain stuck at a
    log density ~7 lower, in a mode where shared difficulty rather than the class
    imbalance explains the disagreements).
    """
    k_cls = spec.n_classes
    pat, cnt, g = obs.patterns, obs.counts, obs.pattern_gold
    n_r = pat.shape[1]
    eq = (pat[:, :, None] == np.arange(k_cls)).astype(np.float64)  # (P, R, K)
    seen = (pat >= 0).astype(np.float64)[:, :, None]  # (P, R, 1)
    known = g >= 0
    fixed = np.eye(k_cls)[np.where(known, g, 0)]
    post = eq.sum(axis=1) + 1e-3
    post /= post.sum(axis=1, keepdims=True)
    post[known] = fixed[known]
    prior_a = np.array([spec.model_accuracy[0]] + [spec.annotator_accuracy[0]] * (n_r - 1))[:, None]
    prior_b = np.array([spec.model_accuracy[1]] + [spec.annotator_accuracy[1]] * (n_r - 1))[:, None]
    shared = spec.annotators == "exchangeable"
    for _ in range(iters):
        w = cnt[:, None] * post  # (P, K) expected items per pattern and true class
        prev = w.sum(axis=0) + spec.prevalence_concentration
        prev /= prev.sum()
        right = (w[:, None, :] * eq).sum(axis=0)  # (R, K)
        total = (w[:, None, :] * seen).sum(axis=0)
        if shared:
            right[1:] = right[1:].sum(axis=0)
            total[1:] = total[1:].sum(axis=0)
        acc = np.clip((right + prior_a) / (total + prior_a + prior_b), 0.02, 0.995)
        log_wrong = np.log((1 - acc) / max(k_cls - 1, 1))
        ll = (np.log(prev)[None] + (eq * np.log(acc)[None]).sum(axis=1)
              + ((seen - eq) * log_wrong[None]).sum(axis=1))
        ll[known] = np.where(fixed[known] > 0, 0.0, -np.inf)
        new = np.exp(ll - ll.max(axis=1, keepdims=True))
        new /= new.sum(axis=1, keepdims=True)
        done = np.abs(new - post).max() < tol
        post = new
        if done:
            break
    return {
        "prevalence": prev,
        "model_class_accuracy": acc[0],
        "annotator_class_accuracy": acc[1] if shared else acc[1:],
    }


def _structured_right_probability(spec: AnnotatorError, obs: _Observed, params: dict) -> np.ndarray:
    """Per item, the structured model's posterior probability that the classifier is
    right (its prediction is the true class), averaged over the draws; gold labels are
    not used for the items that carry them (their annotations and prediction only)."""
    free = _Observed(
        predictions=obs.predictions,
        annotations=obs.annotations,
        gold=np.full(obs.n_items, np.nan),
        annotator_names=obs.annotator_names,
        patterns=obs.patterns,
        pattern_gold=np.full(obs.patterns.shape[0], -1),
        counts=obs.counts,
        inverse=obs.inverse,
    )
    cp = _ClassProbability(spec, free)
    m = int(np.asarray(params["prevalence"]).shape[0])
    step = cp.block_draws()
    total = np.zeros((cp.n_patterns, cp.k))
    for a in range(0, m, step):
        sub = {key: np.asarray(params[key])[a : a + step] for key in _STRUCT_VARS if key in params}
        total += cp.pattern_probabilities(sub, min(step, m - a)).sum(axis=0)
    p = (total / m)[obs.inverse]  # (n, K)
    return p[np.arange(obs.n_items), obs.predictions].clip(0.0, 1.0)


def _guarded_residual_variance(resid: np.ndarray, q_bar: float) -> float:
    """Variance of the gold items' residuals ``c - q``, with half a right and half a wrong
    gold item counted beside them (residuals ``1 - q_bar`` and ``-q_bar``, weight 1/2
    each): when the gold items hold no error, or the model predicts them all exactly, the
    plain variance is near 0 and the interval would be a point."""
    n = resid.size
    if n < 2:
        return float("nan")
    vals = np.r_[resid, 1.0 - q_bar, -q_bar]
    w = np.r_[np.ones(n), 0.5, 0.5]
    mu = float(np.dot(w, vals) / w.sum())
    return float(np.dot(w, (vals - mu) ** 2) / (w.sum() - 1.0))


#: Bayesian-bootstrap replicates of the gold items behind the stacking weight.
_STACKING_REPLICATES = 1000


def _stacking_weight(loo_struct: np.ndarray, loo_gold: np.ndarray) -> float:
    """The weight on the structured model that maximizes the gold items' stacked LOO score."""

    def neg(w):
        return -np.logaddexp(np.log(w) + loo_struct, np.log1p(-w) + loo_gold).sum()

    with np.errstate(divide="ignore"):
        ends = {0.0: -loo_gold.sum(), 1.0: -loo_struct.sum()}
        res = minimize_scalar(neg, bounds=(1e-9, 1 - 1e-9), method="bounded", options={"xatol": 1e-4})
    cands = {**ends, float(res.x): float(res.fun)}
    return float(min(cands, key=cands.get))


def _bootstrap_stacking_weight(loo_struct: np.ndarray, loo_gold: np.ndarray, random_seed=None) -> float:
    """The stacking weight averaged over Bayesian-bootstrap replicates of the gold items.

    Stacking on a few dozen gold items picks a weight from a noisy score: when the two
    models predict the gold items about equally well, a different draw of gold items
    could have put the weight at either end. Each replicate reweights the items'
    leave-one-out log scores by Dirichlet(1, ..., 1) weights and maximizes over a grid of
    weights (step 1/400); the average of the maximizers is the weight used. It is close
    to the plain stacking weight when the gold items clearly favour one model, and
    hedges towards an even mixture when they do not.
    """
    grid = np.linspace(0.0, 1.0, 401)
    with np.errstate(divide="ignore"):
        lw = np.log(grid)[None, :] + loo_struct[:, None]
        lg = np.log1p(-grid)[None, :] + loo_gold[:, None]
    score = np.logaddexp(lw, lg)  # (n_gold, grid)
    score = np.where(np.isfinite(score), score, -1e300)
    entropy = np.random.SeedSequence(random_seed).entropy
    rng = np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(21,)))
    alpha = rng.dirichlet(np.ones(loo_struct.size), size=_STACKING_REPLICATES)
    best = np.argmax(alpha @ score, axis=1)
    return float(grid[best].mean())


def _mix_gold_only(idata, obs: _Observed, weight: float, k: int, random_seed):
    """Add the gold-only model's draws and which draws are the structured model's."""
    post = idata.posterior
    n_c, n_d = post.sizes["chain"], post.sizes["draw"]
    entropy = np.random.SeedSequence(random_seed).entropy
    rng = np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(20,)))
    comp = np.zeros((n_c, n_d), dtype=np.int8)
    n_struct = int(round(weight * n_d))
    for c in range(n_c):
        comp[c, rng.permutation(n_d)[:n_struct]] = 1
    idx = np.flatnonzero(np.isfinite(obs.gold))
    counts = np.zeros((k, k))
    np.add.at(counts, (obs.predictions[idx], obs.gold[idx].astype(np.int64)), 1.0)
    conf = np.stack([rng.dirichlet(1.0 + counts[c], size=(n_c, n_d)) for c in range(k)], axis=2)
    new = post.assign(
        structured_component=(("chain", "draw"), comp),
        gold_only_confusion=(("chain", "draw", "predicted_class", "true_class"), conf),
    )
    groups = {g: idata[g] for g in idata.groups() if g != "posterior"}
    return az.InferenceData(posterior=new, **groups)


# ------------------------------------------------------- P(z | theta, observations) in numpy


_STRUCT_VARS = ("rater_skill", "rater_loading", "wrong_class", "prevalence")


def _param(params: Mapping[str, np.ndarray], name: str, shape_tail: tuple, m: int) -> np.ndarray:
    return np.asarray(params[name], dtype=np.float64).reshape((m,) + shape_tail)


class _ClassProbability:
    """``params -> P(z_i = k | theta, observations)``, shape (n_draws, n_items, K)."""

    def __init__(self, spec: AnnotatorError, obs: _Observed):
        self.k = spec.n_classes
        self.n_ann = obs.annotations.shape[1]
        self.nodes, self.node_w = spec._nodes()
        cls = np.arange(self.k)
        pat = obs.patterns
        self.eq = (pat[:, :, None] == cls).astype(np.float64)
        self.neq = ((pat[:, :, None] >= 0) & (pat[:, :, None] != cls)).astype(np.float64)
        self.gold_mask = np.where(
            (obs.pattern_gold[:, None] < 0) | (obs.pattern_gold[:, None] == cls), 0.0, -np.inf
        )
        self.widx = _wrong_index(pat, self.k) if self.k > 2 else None
        self.inverse = obs.inverse
        self.predictions = obs.predictions
        self.n_patterns = pat.shape[0]

    def eta(self, params, m):
        """Probit of P(right) per draw, rater, class and node: (m, R, K, Q)."""
        r = 1 + self.n_ann
        skill = _param(params, "rater_skill", (r, self.k), m)
        loading = _param(params, "rater_loading", (r,), m)
        return skill[..., None] - loading[:, :, None, None] * self.nodes

    def pattern_log_joint(self, params, m) -> np.ndarray:
        """``log p(pattern_p, z = k | theta)`` per draw, pattern and class: (m, P, K)."""
        eta = self.eta(params, m)
        ll = np.einsum("prk,mrkq->mpkq", self.eq, log_ndtr(eta)) + np.einsum(
            "prk,mrkq->mpkq", self.neq, log_ndtr(-eta)
        )
        if self.k > 2:
            wrong = _param(params, "wrong_class", (1 + self.n_ann, self.k, self.k - 1), m)
            r_idx = np.arange(1 + self.n_ann)[None, :, None]
            k_idx = np.arange(self.k)[None, None, :]
            with np.errstate(divide="ignore"):
                log_pick = np.log(wrong[:, r_idx, k_idx, self.widx])  # (m, P, R, K)
            log_pick = np.where(self.neq[None] > 0, log_pick, 0.0)
            ll = ll + log_pick.sum(axis=2)[..., None]
        with np.errstate(divide="ignore"):
            log_prev = np.log(_param(params, "prevalence", (self.k,), m))
        ll = ll + (log_prev[:, None, :] + self.gold_mask[None])[..., None] + np.log(self.node_w)
        top = ll.max(axis=(2, 3), keepdims=True)
        with np.errstate(divide="ignore"):  # classes ruled out by a gold label: log 0
            return np.log(np.exp(ll - top).sum(axis=3)) + top[..., 0]  # (m, P, K)

    def pattern_loglik(self, params, m) -> np.ndarray:
        """``log p(pattern_p | theta)`` (the true class summed out) per draw and pattern: (m, P)."""
        lz = self.pattern_log_joint(params, m)
        top = lz.max(axis=2, keepdims=True)
        with np.errstate(divide="ignore"):
            return (np.log(np.exp(lz - top).sum(axis=2)) + top[..., 0])

    def pattern_probabilities(self, params, m) -> np.ndarray:
        lz = self.pattern_log_joint(params, m)
        lz = lz - lz.max(axis=2, keepdims=True)
        p = np.exp(lz)
        return p / p.sum(axis=2, keepdims=True)

    def block_draws(self) -> int:
        """Draws per block of the pattern computations (a working set of ``_WORK_BYTES``)."""
        per_draw = 8 * self.n_patterns * self.k * (self.nodes.size * 3 + (1 + self.n_ann) * 2)
        return max(1, _WORK_BYTES // max(per_draw, 1))

    def __call__(self, params) -> np.ndarray:
        m = int(np.asarray(params["prevalence"]).shape[0])
        step = self.block_draws()
        out = []
        for a in range(0, m, step):
            sub = {key: np.asarray(val)[a : a + step] for key, val in params.items() if key != "_draw_index"}
            out.append(self.pattern_probabilities(sub, min(step, m - a)))
        probs = np.concatenate(out, axis=0)[:, self.inverse, :]
        if "structured_component" in params:  # mixture with the gold-only model (fit's "stack")
            comp = np.asarray(params["structured_component"]).reshape(m) > 0
            conf = np.asarray(params["gold_only_confusion"], dtype=np.float64).reshape(m, self.k, self.k)
            probs = np.where(comp[:, None, None], probs, conf[:, self.predictions, :])
        return probs


class _Population:
    """Population metrics of the classifier from the parameters alone."""

    def __init__(self, spec: AnnotatorError, idata, obs: _Observed):
        self.spec = spec
        self.idata = idata
        self.cp = _ClassProbability(spec, obs)
        self.pred_share = np.bincount(obs.predictions, minlength=spec.n_classes) / obs.n_items

    def confusion(self) -> np.ndarray:
        """``P(prediction = c | z = k)``, shape (chain, draw, K_true, K_pred)."""
        post = self.idata.posterior
        n_c, n_d = post.sizes["chain"], post.sizes["draw"]
        params = _flat_draws(post)
        m = n_c * n_d
        k = self.spec.n_classes
        eta = self.cp.eta(params, m)[:, 0]  # classifier: (m, K, Q)
        right = (ndtr(eta) * self.cp.node_w).sum(axis=2)  # (m, K)
        if k == 2:
            pick = np.ones((m, 2, 1))
        else:
            pick = _param(params, "wrong_class", (1 + self.cp.n_ann, k, k - 1), m)[:, 0]
        conf = np.zeros((m, k, k))
        for t in range(k):
            others = [c for c in range(k) if c != t]
            conf[:, t, t] = right[:, t]
            conf[:, t, others] = (1 - right[:, t])[:, None] * pick[:, t, :]
        return conf.reshape(n_c, n_d, k, k)

    def __call__(self, metric, **kwargs) -> xr.DataArray:
        if kwargs:
            raise TypeError(f"Population metrics take no options, got {sorted(kwargs)}.")
        names = ("accuracy", "precision", "recall")
        if metric not in names:
            raise ValueError(f"Population metrics of this model: {list(names)}; got {metric!r}.")
        post = self.idata.posterior
        prev = post["prevalence"].values  # (chain, draw, K)
        conf = self.confusion()
        joint = prev[..., :, None] * conf  # P(z = k, prediction = c)
        if "structured_component" in post:  # draws of the gold-only model: P(z | c) P(c)
            comp = post["structured_component"].values > 0
            go = np.swapaxes(post["gold_only_confusion"].values, -1, -2) * self.pred_share
            joint = np.where(comp[..., None, None], joint, go)
        diag = np.diagonal(joint, axis1=-2, axis2=-1)
        coords = {"chain": post["chain"].values, "draw": post["draw"].values}
        if metric == "accuracy":
            return xr.DataArray(diag.sum(-1), dims=("chain", "draw"), coords=coords, name="accuracy")
        with np.errstate(invalid="ignore", divide="ignore"):
            if metric == "precision":
                val = diag / joint.sum(axis=-2)
            else:
                val = diag / joint.sum(axis=-1)
        if self.spec.n_classes == 2:
            return xr.DataArray(val[..., 1], dims=("chain", "draw"), coords=coords, name=metric)
        coords["class"] = np.arange(self.spec.n_classes)
        return xr.DataArray(val, dims=("chain", "draw", "class"), coords=coords, name=metric)


# --------------------------------------------------------------- K > 2: categorical labels


def _class_counts(z: np.ndarray, pred: np.ndarray, k: int):
    """Per draw and class: true count, predicted count, true positives. z: (rows, n)."""
    true_n = np.stack([(z == c).sum(axis=1) for c in range(k)], axis=1).astype(np.float64)
    pred_n = np.bincount(pred, minlength=k).astype(np.float64)
    tp = np.stack([(z[:, pred == c] == c).sum(axis=1) for c in range(k)], axis=1).astype(np.float64)
    return true_n, np.broadcast_to(pred_n, true_n.shape), tp


def _ratio(num, den, zero_division):
    with np.errstate(invalid="ignore", divide="ignore"):
        out = num / den
    return np.where(den > 0, out, zero_division)


class CategoricalPosterior(Posterior):
    """Posterior over ``K``-class true labels and the classifier's metrics on them.

    The multi-class counterpart of :class:`bayeval.Posterior`: parameter draws plus
    a function giving ``P(z_i = k | theta)`` for every item and class; label
    draws ``(chain, draw, item)`` hold class indices (int8), generated chunk by
    chunk by :class:`bayeval.Posterior`'s label-draw engine, each draw ``(chain, d)``
    from its own random stream derived from the seed -- so results do not depend on
    the chunk size, and the draws are kept (``ceil(log2 K)`` bits per label) when they
    fit, as there. Gold items keep their
    class in every draw. ``data`` holds only the predictions (as scores); gold
    and predictions are the attributes :attr:`gold` and :attr:`predictions`.

    Parameters
    ----------
    predictions : array_like of shape (n_items,)
        The classifier's predicted classes, ``0 .. n_classes - 1``.
    idata : arviz.InferenceData
        Parameter draws (``posterior`` group, dims ``chain, draw, ...``).
    class_probability : callable
        ``class_probability(params) -> (n_chunk, n_items, n_classes)``, ``params``
        as for :class:`bayeval.Posterior`.
    gold : array_like of shape (n_items,), optional
        Known classes, NaN where unknown.
    n_classes : int
    random_seed : int, optional
    model : str, optional
    population : callable, optional
        ``population(metric) -> DataArray``.

    Examples
    --------
    >>> import arviz as az
    >>> import numpy as np
    >>> from bayeval.annotators.model import CategoricalPosterior
    >>> idata = az.from_dict(posterior={"x": np.zeros((2, 100))})
    >>> p = np.array([[0.9, 0.05, 0.05], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6]])
    >>> post = CategoricalPosterior([0, 1, 1], idata, lambda params: p, gold=[0, np.nan, np.nan],
    ...                             n_classes=3, random_seed=0)
    >>> post.metric("recall").dims
    ('chain', 'draw', 'class')
    >>> round(float(post.metric("accuracy").mean()), 1)
    0.6
    """

    def __init__(
        self,
        predictions,
        idata: az.InferenceData,
        class_probability: Callable[[Mapping[str, np.ndarray]], np.ndarray],
        *,
        gold=None,
        n_classes: int,
        random_seed: int | None = None,
        model: str | None = None,
        population: Callable[..., xr.DataArray] | None = None,
    ):
        k = V.as_positive_int(n_classes, "n_classes", minimum=2)
        if k > _MAX_CLASSES:
            raise ValueError(f"`n_classes` must be <= {_MAX_CLASSES}, got {k}.")
        pred, _ = _to_float_matrix(predictions, "predictions")
        if pred.ndim != 1 or pred.size == 0:
            raise ValueError(f"`predictions` must be a non-empty 1-D array, got shape {pred.shape}.")
        _check_classes(pred, "predictions", k, allow_nan=False)
        if gold is None:
            g = np.full(pred.size, np.nan)
        else:
            g, _ = _to_float_matrix(gold, "gold")
            if g.ndim != 1:
                raise ValueError(f"`gold` must be 1-D, got shape {g.shape}.")
            V.check_same_length(pred.size, "gold", g.size, reference="predictions")
            _check_classes(g, "gold", k, allow_nan=True)
        if not callable(class_probability):
            raise TypeError("`class_probability` must be a callable params -> (n, n_items, K).")
        self.n_classes = k  # read by the engine's set-up (the bit planes of its cache)
        self.predictions = pred.astype(np.int64)
        self.gold = g
        for a in (self.predictions, self.gold):
            a.setflags(write=False)
        super().__init__(
            EvalData(pred), idata, class_probability, random_seed=random_seed, model=model, population=population
        )

    # ------------------------------------------------------------ label draws

    def _class_probabilities(self, chain: int, draws: slice) -> np.ndarray:
        m, n, k = draws.stop - draws.start, self.data.n_items, self.n_classes
        p = np.asarray(self._probability(self._params(chain, draws)), dtype=np.float64)
        if p.shape not in ((n, k), (m, n, k)):
            raise ValueError(
                f"The class probability function returned shape {p.shape}; expected ({m}, {n}, {k}) "
                f"or ({n}, {k})."
            )
        if not np.all(np.isfinite(p)) or p.min() < 0:
            raise ValueError("The class probabilities must be finite and >= 0.")
        return np.broadcast_to(p, (m, n, k))

    # the label draws: Posterior's engine, on class probabilities (m, n, K)

    def _fixed_labels(self) -> tuple[np.ndarray, np.ndarray]:
        """The gold items, and their classes."""
        idx = np.flatnonzero(~np.isnan(self.gold))
        return idx, self.gold[idx].astype(np.int8)

    def _draw_probabilities(self, chain: int, draws: slice) -> np.ndarray:
        return self._class_probabilities(chain, draws)

    def _label_work_bytes(self) -> int:
        return 16 * self.n_classes + 9  # float64 probabilities and their cumulative sums, int8 label

    def item_probability(self) -> xr.DataArray:
        """Posterior probability of each class for each item (gold items: their class).

        Returns
        -------
        xarray.DataArray
            Dims ``(item, class)``.

        Examples
        --------
        >>> import arviz as az
        >>> import numpy as np
        >>> from bayeval.annotators.model import CategoricalPosterior
        >>> idata = az.from_dict(posterior={"x": np.zeros((1, 4))})
        >>> post = CategoricalPosterior([0, 2], idata, lambda params: np.full((2, 3), 1 / 3),
        ...                             gold=[np.nan, 2], n_classes=3)
        >>> post.item_probability().values.round(2).tolist()
        [[0.33, 0.33, 0.33], [0.0, 0.0, 1.0]]
        """
        n, k = self.data.n_items, self.n_classes
        total = np.zeros((n, k))
        for chain, draws in self._chunk_plan(None):
            total += self._class_probabilities(chain, draws).sum(axis=0)
        p = total / total.sum(axis=1, keepdims=True)
        p[self._fixed] = 0.0
        p[self._fixed, self._fixed_values] = 1.0
        return xr.DataArray(
            p,
            dims=("item", "class"),
            coords={"item": self.data.item_ids, "class": np.arange(k)},
            name="p_class",
        )

    # --------------------------------------------------------------- metrics

    def metric(self, metric, *, chunk_size: int | None = None, zero_division: float = 0.0, **kwargs) -> xr.DataArray:
        """The posterior of a multi-class metric of the predictions on these items.

        Parameters
        ----------
        metric : str or callable
            ``"accuracy"`` (dims ``chain, draw``); per class (dims ``chain, draw,
            class``): ``"precision"`` (of predicting class c), ``"recall"`` (the
            accuracy on the items whose true class is c), ``"f_score"`` (F1) and
            ``"class_accuracy"`` (one-vs-rest accuracy: agreement of "predicted
            c" with "is c" over all items). Or a callable
            ``f(labels, predictions, **kwargs)`` mapping class draws
            ``(rows, n_items)`` to ``(rows,)`` or ``(rows, m)``.
        chunk_size : int, optional
            Draws per chunk (memory only; results do not change).
        zero_division : float, default 0.0
            Value of precision/recall/F when the denominator is 0.
        **kwargs
            Options of a callable metric.

        Returns
        -------
        xarray.DataArray

        Examples
        --------
        >>> import arviz as az
        >>> import numpy as np
        >>> from bayeval.annotators.model import CategoricalPosterior
        >>> idata = az.from_dict(posterior={"x": np.zeros((1, 3))})
        >>> post = CategoricalPosterior([0, 1, 2, 2], idata, lambda params: np.eye(3)[[0, 1, 2, 1]],
        ...                             n_classes=3)
        >>> post.metric("precision").values[0, 0].tolist()
        [1.0, 1.0, 0.5]
        """
        k = self.n_classes
        if isinstance(metric, str):
            V.check_choice(metric, "metric", _CLASS_METRICS)
            if kwargs:
                raise TypeError(f"Metric {metric!r} takes no options besides zero_division; got {sorted(kwargs)}.")
            name, fn = metric, None
        elif callable(metric):
            name, fn = getattr(metric, "__name__", "custom"), metric
        else:
            raise TypeError(f"`metric` must be one of {list(_CLASS_METRICS)} or a callable, got {metric!r}.")
        pred = self.predictions
        n = self.data.n_items
        results = {}
        for chain, draws, z in self._label_chunks(chunk_size):
            if fn is not None:
                val = np.asarray(fn(z, pred, **kwargs), dtype=np.float64)
                if val.shape[:1] != (z.shape[0],):
                    raise ValueError(
                        f"Custom metric {name!r} returned shape {val.shape}; it must return one value "
                        f"(or one array) per label row, i.e. a leading axis of {z.shape[0]}."
                    )
            elif name == "accuracy":
                val = (z == pred).mean(axis=1)
            else:
                true_n, pred_n, tp = _class_counts(z, pred, k)
                if name == "precision":
                    val = _ratio(tp, pred_n, zero_division)
                elif name == "recall":
                    val = _ratio(tp, true_n, zero_division)
                elif name == "f_score":
                    val = _ratio(2 * tp, true_n + pred_n, zero_division)
                else:
                    val = (n - true_n - pred_n + 2 * tp) / n
            results[(chain, draws.start)] = val
        first = next(iter(results.values()))
        out = np.empty((self.n_chains, self.n_draws) + first.shape[1:])
        for (chain, start), val in results.items():
            out[chain, start : start + val.shape[0]] = val
        coords = {"chain": np.arange(self.n_chains), "draw": np.arange(self.n_draws)}
        if fn is None and name != "accuracy":
            dims = ("chain", "draw", "class")
            coords["class"] = np.arange(k)
        else:
            dims = ("chain", "draw") + tuple(f"{name}_dim_{j}" for j in range(out.ndim - 2))
        return xr.DataArray(out, dims=dims, coords=coords, name=name)

    def summary(self, metrics=("accuracy",), *, hdi_prob: float = HDI_PROB, **kwargs) -> pd.DataFrame:
        """Mean, sd and HDI of multi-class metrics (one row per metric and class).

        Parameters
        ----------
        metrics : str or list of str or callables
            Names accepted by :meth:`metric`.
        hdi_prob : float, default 0.9
        **kwargs
            Passed to :meth:`metric`.

        Returns
        -------
        pandas.DataFrame

        Examples
        --------
        >>> import arviz as az
        >>> import numpy as np
        >>> from bayeval.annotators.model import CategoricalPosterior
        >>> idata = az.from_dict(posterior={"x": np.zeros((1, 20))})
        >>> post = CategoricalPosterior([0, 1, 2], idata, lambda params: np.full((3, 3), 1 / 3),
        ...                             n_classes=3, random_seed=0)
        >>> post.summary(["accuracy", "recall"]).index.tolist()
        ['accuracy', 'recall[class=0]', 'recall[class=1]', 'recall[class=2]']
        """
        hdi_prob = V.as_probability(hdi_prob, "hdi_prob", open_interval=True)
        if isinstance(metrics, str) or callable(metrics):
            metrics = [metrics]
        rows = []
        for metric in metrics:
            da = self.metric(metric, **kwargs)
            rows.extend(summary_rows(da.name, da, hdi_prob, ("chain", "draw")))
        return summary_frame(rows, hdi_prob)

    def to_inference_data(self, metrics=("accuracy",), **kwargs) -> az.InferenceData:
        """A copy of :attr:`idata` with a ``metrics`` group (as :meth:`bayeval.Posterior.to_inference_data`),
        by default the accuracy's draws.

        Examples
        --------
        >>> import arviz as az
        >>> import numpy as np
        >>> from bayeval.annotators.model import CategoricalPosterior
        >>> idata = az.from_dict(posterior={"x": np.zeros((1, 20))})
        >>> post = CategoricalPosterior([0, 1, 2], idata, lambda params: np.full((3, 3), 1 / 3), n_classes=3)
        >>> list(post.to_inference_data(["accuracy", "recall"]).metrics.data_vars)
        ['accuracy', 'recall']
        """
        return super().to_inference_data(metrics, **kwargs)

    def __repr__(self) -> str:
        return (
            f"CategoricalPosterior(model={self.model!r}, n_classes={self.n_classes}, "
            f"chains={self.n_chains}, draws={self.n_draws}, items={self.data.n_items}, "
            f"gold={self._fixed.size})"
        )
