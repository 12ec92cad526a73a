"""Vectorized metric kernels over label draws (the numpy core).

Every kernel takes ``labels`` of shape ``(..., n_items)`` holding 0/1 (one row per
posterior draw, or a single 1-D label vector) and the item's ``scores`` (or hard
``predictions``) of shape ``(n_items,)``. The leading dimensions are broadcast: the
scores are sorted once, the label rows are cumulated along the item axis, and there
is no Python loop over draws. New dimensions (``k``, ``recall``, ``threshold``) go
last. On a single 1-D label vector every kernel equals scikit-learn's function; the
tests check this on inputs with many ties.

Ranking conventions
-------------------
* Items are ranked by descending score.
* Average precision, the precision-recall curve and the ROC curve step at the
  *distinct* score values, as scikit-learn does: items with equal scores enter the
  predicted-positive set together.
* ``precision_at_k`` and ``recall_at_k`` need an order inside ties: items with equal
  scores keep their input order (a stable sort of descending scores).

Each kernel is split in two phases internally -- ``prepare`` (everything that
depends only on the scores and options) and ``compute`` (the per-draw work) -- so
:class:`bayeval.Posterior` sorts once and then streams chunks of draws through the
same code that the public functions run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.stats import rankdata

from . import _validate as V

__all__ = [
    "precision_at_k",
    "recall_at_k",
    "average_precision",
    "precision_recall_curve",
    "precision_at_recall",
    "roc_curve",
    "roc_auc",
    "precision",
    "recall",
    "f_score",
    "accuracy",
    "METRICS",
    "MetricSpec",
]

# Rows processed together inside a kernel: keeps the working set in cache.
_BLOCK_BYTES = 1 << 21


# --------------------------------------------------------------------------- ranking


@dataclass(frozen=True)
class _Ranking:
    """Everything about the scores that all label draws share."""

    order: np.ndarray  # item indices by descending score, ties in input order
    ends: np.ndarray  # position (in sorted order) of the last item of each distinct score
    counts: np.ndarray  # number of items with score >= each distinct score (= ends + 1)
    thresholds: np.ndarray  # distinct scores, descending
    has_ties: bool
    sorted_scores: np.ndarray = field(repr=False)

    @classmethod
    def from_scores(cls, scores: np.ndarray) -> _Ranking:
        order = np.argsort(-scores, kind="stable")
        s = scores[order]
        last = np.flatnonzero(np.r_[s[1:] != s[:-1], True])
        return cls(
            order=order,
            ends=last,
            counts=(last + 1).astype(np.float64),
            thresholds=s[last],
            has_ties=last.size != s.size,
            sorted_scores=s,
        )

    @property
    def n_items(self) -> int:
        return self.order.size


def _blocks(n_rows: int, n_items: int, itemsize: int = 4):
    step = max(1, _BLOCK_BYTES // max(1, n_items * itemsize))
    for start in range(0, n_rows, step):
        yield slice(start, min(n_rows, start + step))


def _flat(labels: np.ndarray) -> tuple[np.ndarray, tuple[int, ...]]:
    lead = labels.shape[:-1]
    return labels.reshape(-1, labels.shape[-1]), lead


# Width of the segments of the blocked prefix sum below.
_SEG = 32


def _prefix_blocks(labels2d: np.ndarray, rk: _Ranking):
    """Yield ``(rows, z, c)`` per block of rows: labels sorted by descending score and
    their running sum (true positives at each rank), both float of shape
    ``(block, n_pad)`` (zero-padded past ``n_items``; ``c`` stays constant there).

    The running sum is a blocked prefix sum: a matrix product with a triangular matrix
    of ones inside segments of ``_SEG`` items (BLAS), plus each segment's offset. Counts
    are exact (float64). This is faster than ``np.cumsum`` along the item axis, whose
    accumulation is sequential, and the working set of a block stays in cache.
    """
    n = rk.n_items
    n_pad = -(-n // _SEG) * _SEG
    step = max(1, _BLOCK_BYTES // (n_pad * 8))
    zbuf = np.zeros((min(step, labels2d.shape[0]), n_pad), dtype=np.float64)
    for start in range(0, labels2d.shape[0], step):
        sl = slice(start, min(labels2d.shape[0], start + step))
        z = zbuf[: sl.stop - sl.start]
        z[:, :n] = np.take(labels2d[sl], rk.order, axis=1)
        yield sl, z, _running_sum(z, 0.0)


_TRI = np.triu(np.ones((_SEG, _SEG), dtype=np.float64))


def _running_sum(z: np.ndarray, offset) -> np.ndarray:
    """``offset + cumsum(z, axis=1)`` of a ``(rows, multiple of _SEG)`` float64 block, as the
    blocked prefix sum of :func:`_prefix_blocks` (exact for counts)."""
    rows, width = z.shape
    c = (z.reshape(rows * (width // _SEG), _SEG) @ _TRI).reshape(rows, width // _SEG, _SEG)
    seg_total = c[:, :, -1].copy()
    c += (np.cumsum(seg_total, axis=1) - seg_total + np.reshape(offset, (-1, 1)))[:, :, None]
    return c.reshape(rows, width)


#: Items per block of the average-precision kernel without ties (a multiple of _SEG): its
#: working memory is two float64 blocks of this width, whatever the number of items.
_AP_ITEM_BLOCK = 1 << 18


def _ap_sums(labels2d: np.ndarray, order: np.ndarray, inv_pad: np.ndarray):
    """``(sum_k z_k TP_k / k, number of positives)`` per row, labels taken in ``order``
    (scores descending, no ties), one block of ``_AP_ITEM_BLOCK`` items at a time with
    the true positives carried across blocks. With at most ``_AP_ITEM_BLOCK`` items this
    is the one-block sum of the whole row."""
    n = order.size
    rows_all = labels2d.shape[0]
    width = min(_AP_ITEM_BLOCK, inv_pad.size)
    step = max(1, _BLOCK_BYTES // (width * 8))
    num = np.zeros(rows_all)
    n_pos = np.zeros(rows_all)
    zbuf = np.empty((min(step, rows_all), width), dtype=np.float64)
    for start in range(0, rows_all, step):
        sl = slice(start, min(rows_all, start + step))
        rows = sl.stop - sl.start
        tp = np.zeros(rows)
        for a in range(0, n, width):
            b = min(n, a + width)
            w = -(-(b - a) // _SEG) * _SEG
            z = zbuf[:rows, :w]
            z[:, b - a:] = 0.0
            z[:, : b - a] = np.take(labels2d[sl], order[a:b], axis=1)
            c = _running_sum(z, tp)
            tp = c[:, b - a - 1].copy()
            z *= c
            z *= inv_pad[a : a + w]
            num[sl] += z.sum(axis=1)
        n_pos[sl] = tp
    return num, n_pos


def _group_cumsum(labels2d: np.ndarray, rk: _Ranking) -> np.ndarray:
    """True positives at each distinct threshold: (rows, n_thresholds), float64."""
    out = np.empty((labels2d.shape[0], rk.ends.size), dtype=np.float64)
    for sl, _, c in _prefix_blocks(labels2d, rk):
        out[sl] = c[:, rk.ends]
    return out


def _divide(num, den, zero_division):
    """``num / den`` with ``zero_division`` where ``den == 0`` (no warnings)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = num / den
    return np.where(den == 0, zero_division, out)


def _zero_division(value, name: str = "zero_division") -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"`{name}` must be 0.0, 1.0 or nan, got {value!r}.")
    value = float(value)
    if not (np.isnan(value) or value in (0.0, 1.0)):
        raise ValueError(f"`{name}` must be 0.0, 1.0 or nan, got {value}.")
    return value


# ------------------------------------------------------------------ metric specs


@dataclass(frozen=True)
class MetricSpec:
    """How a metric is computed in two phases, and the dimensions it adds.

    Attributes
    ----------
    name : str
        Registry name, as accepted by :meth:`bayeval.Posterior.metric`.
    needs : {"scores", "predictions"}
        What the metric reads besides the labels.
    prepare : callable
        ``prepare(x, **options) -> state``: validates options and precomputes
        everything that does not depend on the labels.
    compute : callable
        ``compute(labels_2d, state) -> ndarray`` of shape ``(rows, *extra)``.
    dims : callable
        ``dims(state) -> list of (dim_name, coords)`` for the extra dimensions.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.core.metrics import METRICS
    >>> spec = METRICS["precision_at_k"]
    >>> state = spec.prepare(np.array([0.9, 0.5, 0.1]), k=[1, 2])
    >>> spec.compute(np.array([[1, 0, 1], [0, 1, 1]], dtype=np.int8), state)
    array([[1. , 0.5],
           [0. , 0.5]])
    >>> spec.dims(state)[0][0]
    'k'
    """

    name: str
    needs: str
    prepare: Callable[..., Any]
    compute: Callable[[np.ndarray, Any], np.ndarray]
    dims: Callable[[Any], list[tuple[str, np.ndarray]]]

    def options(self) -> list[str]:
        """The options this metric takes (the keyword arguments of its function).

        Examples
        --------
        >>> from bayeval.core.metrics import METRICS
        >>> METRICS["recall_at_k"].options()
        ['k', 'zero_division']
        """
        import inspect

        public = globals().get(self.name)
        func = public if callable(public) else self.prepare
        params = inspect.signature(func).parameters.values()
        return [p.name for p in params if p.kind is p.KEYWORD_ONLY]

    def required(self) -> list[str]:
        """The options this metric cannot do without (``k`` for precision at k).

        Examples
        --------
        >>> from bayeval.core.metrics import METRICS
        >>> METRICS["precision_at_recall"].required(), METRICS["average_precision"].required()
        (['recall'], [])
        """
        import inspect

        params = inspect.signature(self.prepare).parameters.values()
        return [p.name for p in params if p.kind is p.KEYWORD_ONLY and p.default is p.empty]

    def check_required(self, options, *, how: str | None = None) -> None:
        """Refuse ``options`` that lack one this metric needs (``k``, ``recall``), before any work.

        ``how``: where the caller takes the option, for the message: a format string with
        ``{kw}`` (e.g. ``k=10``) and ``{dict}`` (e.g. ``{'k': 10}``); default: as a keyword
        of ``post.metric``.

        Examples
        --------
        >>> from bayeval.core.metrics import METRICS
        >>> METRICS["recall_at_k"].check_required({}, how="simulate(..., {kw})")
        Traceback (most recent call last):
        ...
        TypeError: Metric 'recall_at_k' needs the option `k`, and none was given ... simulate(..., k=10).
        """
        missing = [o for o in self.required() if o not in options]
        if not missing:
            return
        examples = {"k": 10, "recall": 0.8}
        example = {o: examples.get(o, ...) for o in missing}
        kw = ", ".join(f"{o}={v!r}" for o, v in example.items())
        how = f"post.metric({self.name!r}, {{kw}})" if how is None else how
        raise TypeError(
            f"Metric {self.name!r} needs the option{'s' if len(missing) > 1 else ''} "
            f"{', '.join(f'`{o}`' for o in missing)}, and none was given (got "
            f"{sorted(options) if options else 'no options'}). Pass it with the metric: "
            f"{how.format(kw=kw, dict=example)}."
        )

    def check_options(self, options: dict) -> None:
        """Refuse options this metric does not take, and NaN or infinite numbers.

        The error names the metric and its options (never an internal function).
        ``zero_division`` may be NaN (its meaning: "undefined is NaN"), and a
        ``thresholds`` grid may hold +-inf (predict nothing / everything).
        """
        import difflib
        import inspect

        accepted = [
            p.name for p in inspect.signature(self.prepare).parameters.values() if p.kind is p.KEYWORD_ONLY
        ]
        unknown = [k for k in options if k not in accepted]
        if unknown:
            shown = self.options()
            close = difflib.get_close_matches(unknown[0], shown, n=1)
            hint = f" Did you mean `{close[0]}`?" if close else ""
            takes = (
                f"it takes {', '.join(f'`{o}`' for o in shown)}" if shown else "it takes no options"
            )
            raise TypeError(
                f"Metric {self.name!r} has no option {', '.join(f'`{k}`' for k in unknown)}; "
                f"{takes} (see bayeval.metrics.{self.name}).{hint}"
            )
        for key, value in options.items():
            if key == "zero_division" or value is None or isinstance(value, str | bool):
                continue
            try:
                arr = np.asarray(value, dtype=float)
            except (TypeError, ValueError):
                continue  # not numbers: the metric's own check says what it expects
            bad = np.isnan(arr) if key == "thresholds" else ~np.isfinite(arr)
            if bad.any():
                got = value if arr.ndim == 0 else f"{arr[bad][0]} ({int(bad.sum())} of {arr.size} values)"
                rule = "must not be NaN" if key == "thresholds" else "must be finite"
                raise ValueError(
                    f"`{key}` of metric {self.name!r} {rule}, got {got}: such an option has no "
                    "meaning here and would give a silently wrong answer."
                )

    def __call__(self, labels, x, **options):
        self.check_options(options)
        labels = V.as_label_draws(labels)
        if self.needs == "scores":
            x = V.as_scores(x, "scores")
        else:
            x = V.as_binary_vector(x, "predictions")
        V.check_same_length(labels.shape[-1], self.needs, x.size, reference="labels")
        state = self.prepare(x, **options)
        flat, lead = _flat(labels)
        out = self.compute(flat, state)
        out = out.reshape(lead + out.shape[1:])
        return out[()] if out.ndim == 0 else out


METRICS: dict[str, MetricSpec] = {}


def _register(spec: MetricSpec) -> MetricSpec:
    METRICS[spec.name] = spec
    return spec


def _no_dims(state) -> list:
    return []


# ------------------------------------------------------------------ precision@k


@dataclass(frozen=True)
class _TopK:
    top: np.ndarray  # item indices of the top max(k) positions (clipped to n_items)
    k: np.ndarray  # requested k values
    scalar: bool
    zero_division: float = 0.0


def _prepare_topk(scores, *, k, zero_division=0.0):
    ks, scalar = V.as_k(k)
    order = np.argsort(-scores, kind="stable")
    return _TopK(order[: int(min(ks.max(), scores.size))], ks, scalar, _zero_division(zero_division))


def _tp_at_k(labels2d, st: _TopK) -> np.ndarray:
    n_top = st.top.size
    c = np.cumsum(labels2d[:, st.top], axis=1, dtype=np.int64)
    return c[:, np.minimum(st.k, n_top) - 1].astype(np.float64)


def _compute_pak(labels2d, st: _TopK):
    out = _tp_at_k(labels2d, st) / st.k
    return out[:, 0] if st.scalar else out


def _compute_rak(labels2d, st: _TopK):
    n_pos = labels2d.sum(axis=1, dtype=np.int64)[:, None]
    out = _divide(_tp_at_k(labels2d, st), n_pos, st.zero_division)
    return out[:, 0] if st.scalar else out


def _k_dims(st: _TopK):
    return [] if st.scalar else [("k", st.k)]


_PAK = _register(MetricSpec("precision_at_k", "scores", _prepare_topk, _compute_pak, _k_dims))
_RAK = _register(MetricSpec("recall_at_k", "scores", _prepare_topk, _compute_rak, _k_dims))


def precision_at_k(labels, scores, *, k):
    """Precision among the ``k`` top-scoring items, for every label draw.

    ``P@k = (number of positives among the k highest scores) / k``. Items with equal
    scores keep their input order (stable sort), so ties at the cut are broken by item
    order. If ``k`` exceeds the number of items, the missing positions count as
    non-relevant (the denominator stays ``k``), as in TREC's P@k.

    Parameters
    ----------
    labels : array_like of shape (..., n_items)
        0/1 labels (one row per draw).
    scores : array_like of shape (n_items,)
        Classifier scores; higher means more likely positive.
    k : int or 1-D array of int
        Cut-off(s). An array adds a trailing dimension of size ``len(k)``.

    Returns
    -------
    ndarray of shape (...) or (..., len(k))

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.core.metrics import precision_at_k
    >>> precision_at_k(np.array([[1, 0, 1], [0, 0, 1]]), np.array([0.9, 0.8, 0.1]), k=2)
    array([0.5, 0. ])
    """
    return _PAK(labels, scores, k=k)


def recall_at_k(labels, scores, *, k, zero_division=0.0):
    """Fraction of the positives found among the ``k`` top-scoring items.

    Ties are broken by item order as in :func:`precision_at_k`. A draw with no
    positives has undefined recall; it gets ``zero_division`` (default 0.0, the value
    scikit-learn's ``recall_score`` returns, without its warning).

    Parameters
    ----------
    labels : array_like of shape (..., n_items)
    scores : array_like of shape (n_items,)
    k : int or 1-D array of int
    zero_division : {0.0, 1.0, nan}

    Returns
    -------
    ndarray of shape (...) or (..., len(k))

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.core.metrics import recall_at_k
    >>> recall_at_k(np.array([1, 0, 1, 1]), np.array([0.9, 0.8, 0.7, 0.1]), k=[1, 3])
    array([0.33333333, 0.66666667])
    """
    return _RAK(labels, scores, k=k, zero_division=zero_division)


# ------------------------------------------------------------ average precision


@dataclass(frozen=True)
class _APState:
    rk: _Ranking
    inv_counts: np.ndarray | None  # 1 / (items at or above each distinct threshold); None without ties
    inv_pad: np.ndarray  # 1 / rank, zero-padded to the prefix-sum width


def _prepare_ap(scores):
    n_pad = -(-scores.size // _SEG) * _SEG
    order = np.argsort(-scores, kind="stable")
    s = scores[order]
    if (s[1:] == s[:-1]).any():
        rk = _Ranking.from_scores(scores)
        return _APState(rk, 1.0 / rk.counts, np.zeros(n_pad))
    # without ties the kernel reads the order and 1/rank only: nothing else is made or
    # kept (at 10^7 items each per-item array is 80 MB of a worker's memory)
    del s
    inv_pad = np.zeros(n_pad)
    inv_pad[: scores.size] = 1.0 / np.arange(1, scores.size + 1, dtype=np.float64)
    slim = _Ranking(order=order, ends=None, counts=None, thresholds=None, has_ties=False, sorted_scores=None)
    return _APState(slim, None, inv_pad)


def _compute_ap(labels2d, st: _APState):
    rk = st.rk
    if not rk.has_ties:
        # sum_k z_k * TP_k / k: contractions with the precomputed 1/k, block by block
        num, n_pos = _ap_sums(labels2d, rk.order, st.inv_pad)
        return _divide(num, n_pos, 0.0)
    num = np.empty(labels2d.shape[0], dtype=np.float64)
    n_pos = np.empty(labels2d.shape[0], dtype=np.float64)
    for sl, _, c in _prefix_blocks(labels2d, rk):
        n_pos[sl] = c[:, rk.n_items - 1]
        # positives entering at each distinct threshold x precision there
        cg = c[:, rk.ends].astype(np.float64)
        gain = np.diff(cg, axis=1, prepend=0)
        num[sl] = (gain * cg) @ st.inv_counts
    # No positives: sklearn returns 0 (recall is constant, so no precision is counted).
    return _divide(num, n_pos, 0.0)


_AP = _register(MetricSpec("average_precision", "scores", _prepare_ap, _compute_ap, _no_dims))


def average_precision(labels, scores):
    """Average precision (area under the step PR curve), for every label draw.

    ``AP = sum_t (R_t - R_{t-1}) P_t`` over the distinct score thresholds ``t`` in
    descending order, exactly as scikit-learn's ``average_precision_score`` (no
    interpolation; tied items enter together). Without ties this is the paper's
    ``(1/N_p) sum_k z_k P@k``. A draw with no positives gets 0.0, as scikit-learn
    returns (it also warns; this kernel does not).

    Parameters
    ----------
    labels : array_like of shape (..., n_items)
    scores : array_like of shape (n_items,)

    Returns
    -------
    ndarray of shape (...)

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.core.metrics import average_precision
    >>> average_precision(np.array([[1, 0, 1], [1, 1, 0]]), np.array([0.9, 0.5, 0.2]))
    array([0.83333333, 1.        ])
    """
    return _AP(labels, scores)


# ----------------------------------------------------------- precision-recall curve


@dataclass(frozen=True)
class _CurveState:
    rk: _Ranking
    # positions into the per-threshold arrays for each requested threshold (-1: none)
    where: np.ndarray | None
    counts: np.ndarray  # predicted positives at each requested threshold
    thresholds: np.ndarray  # requested thresholds (output order)
    zero_division: float


def _prepare_curve(scores, *, thresholds=None, zero_division=1.0, ascending=True):
    rk = _Ranking.from_scores(scores)
    zd = _zero_division(zero_division)
    if thresholds is None:
        idx = np.arange(rk.ends.size)
        if ascending:
            idx = idx[::-1]
        return _CurveState(rk, idx, rk.counts[idx], rk.thresholds[idx], zd)
    t = np.atleast_1d(np.asarray(thresholds, dtype=np.float64))
    if t.ndim != 1 or t.size == 0 or np.isnan(t).any():
        raise ValueError(
            f"`thresholds` must be a non-empty 1-D array of numbers without NaN, got {thresholds!r}."
        )
    # number of items with score >= t, then the last distinct threshold that is >= t
    n_ge = np.searchsorted(-rk.sorted_scores, -t, side="right")
    where = np.searchsorted(rk.ends, n_ge - 1, side="left")
    where = np.where(n_ge == 0, -1, where)
    return _CurveState(rk, where, n_ge.astype(np.float64), t, zd)


def _curve_counts(labels2d, st: _CurveState):
    tp_g = _group_cumsum(labels2d, st.rk)
    n_pos = tp_g[:, -1:]
    tp = np.where(st.where >= 0, tp_g[:, np.maximum(st.where, 0)], 0.0)
    return tp, n_pos


def _compute_pr(labels2d, st: _CurveState):
    tp, n_pos = _curve_counts(labels2d, st)
    prec = _divide(tp, np.broadcast_to(st.counts, tp.shape), st.zero_division)
    # sklearn: recall is 1 at every threshold when a draw has no positives
    rec = np.where(n_pos == 0, 1.0, _divide(tp, n_pos, 1.0))
    return np.stack([prec, rec], axis=-1)


def _pr_dims(st: _CurveState):
    return [("threshold", st.thresholds), ("curve", np.array(["precision", "recall"]))]


_PR = _register(MetricSpec("precision_recall_curve", "scores", _prepare_curve, _compute_pr, _pr_dims))


def precision_recall_curve(labels, scores, *, thresholds=None, zero_division=1.0):
    """Precision and recall at each threshold, for every label draw.

    The thresholds are shared by all draws because the scores are fixed. By default
    they are the distinct score values in ascending order, and ``precision[..., i]``,
    ``recall[..., i]`` describe the rule "positive if score >= thresholds[i]" -- the
    same arrays as scikit-learn's ``precision_recall_curve`` without its final
    ``(precision=1, recall=0)`` point. With a ``thresholds`` grid, they are evaluated
    at those values instead; where no item scores at or above a threshold the
    precision is ``zero_division`` (1.0, the value of scikit-learn's end point).
    A draw with no positives has recall 1 at every threshold, as scikit-learn sets it.

    For curves over many items and draws, :func:`precision_at_recall` on a recall
    grid keeps memory small.

    Parameters
    ----------
    labels : array_like of shape (..., n_items)
    scores : array_like of shape (n_items,)
    thresholds : 1-D array_like, optional
    zero_division : {1.0, 0.0, nan}

    Returns
    -------
    precision, recall : ndarray of shape (..., n_thresholds)
    thresholds : ndarray of shape (n_thresholds,)

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.core.metrics import precision_recall_curve
    >>> p, r, t = precision_recall_curve(np.array([0, 1, 1]), np.array([0.2, 0.6, 0.9]))
    >>> p, r, t
    (array([0.66666667, 1.        , 1.        ]), array([1. , 1. , 0.5]), array([0.2, 0.6, 0.9]))
    """
    labels = V.as_label_draws(labels)
    scores = V.as_scores(scores)
    V.check_same_length(labels.shape[-1], "scores", scores.size, reference="labels")
    st = _prepare_curve(scores, thresholds=thresholds, zero_division=zero_division)
    flat, lead = _flat(labels)
    out = _compute_pr(flat, st)
    out = out.reshape(lead + out.shape[1:])
    return out[..., 0], out[..., 1], st.thresholds.copy()


# ------------------------------------------------------------ precision at recall


@dataclass(frozen=True)
class _PaRState:
    rk: _Ranking
    recall: np.ndarray
    interpolate: bool


def _prepare_par(scores, *, recall, interpolate=False):
    grid = V.as_grid(recall, "recall", lo=0.0, hi=1.0)
    if not isinstance(interpolate, bool):
        raise TypeError(f"`interpolate` must be True or False, got {interpolate!r}.")
    return _PaRState(_Ranking.from_scores(scores), grid, interpolate)


def _par_no_ties(labels2d, st: _PaRState):
    """Precision at recall levels without tied scores, from the positives' ranks.

    The m-th positive's rank ``pos_m`` is the first threshold reaching ``m`` true
    positives, so the precision there is ``m / (pos_m + 1)``; only the positives are
    touched after one sort of the labels.
    """
    rk = st.rk
    n = rk.n_items
    out = np.empty((labels2d.shape[0], st.recall.size))
    for sl in _blocks(labels2d.shape[0], n, 8):
        z = np.take(labels2d[sl], rk.order, axis=1)
        rows = z.shape[0]
        n_pos = np.count_nonzero(z, axis=1)
        start = np.cumsum(n_pos) - n_pos
        row_of = np.repeat(np.arange(rows), n_pos)
        pos = np.flatnonzero(z) - row_of * n  # ranks (0-based) of the positives, per row
        q = (np.arange(pos.size) - start[row_of] + 1) / (pos + 1.0)  # precision at each positive
        if st.interpolate and q.size:
            # suffix maximum within each row: offset later segments of the reversed array
            seg = 2.0 * (rows - 1 - row_of[::-1])
            q = (np.maximum.accumulate(q[::-1] + seg) - seg)[::-1]
        m = np.ceil(st.recall[None, :] * n_pos[:, None] - 1e-9).astype(np.int64)
        if st.interpolate:
            m = np.maximum(m, 1)
        safe = np.where(n_pos[:, None] > 0, start[:, None] + np.maximum(m, 1) - 1, 0)
        res = q[safe] if q.size else np.zeros(safe.shape)
        res = np.where(m == 0, z[:, :1].astype(np.float64), res)  # level 0: the top threshold
        out[sl] = np.where(n_pos[:, None] > 0, res, 0.0)
    return out


def _compute_par(labels2d, st: _PaRState):
    rk = st.rk
    if not rk.has_ties:
        return _par_no_ties(labels2d, st)
    n_groups = rk.ends.size
    out = np.empty((labels2d.shape[0], st.recall.size))
    for sl in _blocks(labels2d.shape[0], rk.n_items, 16):
        tp = _group_cumsum(labels2d[sl], rk)  # (rows, G), nondecreasing along G
        rows = tp.shape[0]
        n_pos = tp[:, -1]
        prec = tp / rk.counts
        if st.interpolate:
            prec = np.maximum.accumulate(prec[:, ::-1], axis=1)[:, ::-1]
        # smallest number of true positives that reaches each recall level (no
        # positives: recall is 1 everywhere, so the first threshold qualifies)
        need = np.ceil(st.recall[None, :] * n_pos[:, None] - 1e-9)
        # one searchsorted for all rows: offset each row so the flat array is sorted
        offset = (np.arange(rows) * (rk.n_items + 1.0))[:, None]
        pos = np.searchsorted((tp + offset).ravel(), (need + offset).ravel(), side="left")
        pos = pos.reshape(rows, -1) - np.arange(rows)[:, None] * n_groups
        out[sl] = np.take_along_axis(prec, np.minimum(pos, n_groups - 1), axis=1)
    return out


def _par_dims(st: _PaRState):
    return [("recall", st.recall)]


_PAR = _register(MetricSpec("precision_at_recall", "scores", _prepare_par, _compute_par, _par_dims))


def precision_at_recall(labels, scores, *, recall, interpolate=False):
    """Precision at a grid of recall levels, for every label draw.

    For each level ``r`` this is the precision at the highest distinct score threshold
    whose recall is at least ``r`` -- the operating point a user would pick to reach
    recall ``r``. With ``interpolate=True`` it is the interpolated precision
    ``max_{r' >= r} P(r')`` (the monotone PR envelope of PASCAL VOC). A draw with no
    positives has recall 1 everywhere (scikit-learn's convention), so every level reads
    the precision at the highest threshold, 0.

    Memory is ``O(rows x n_thresholds)`` inside a block of rows and
    ``O(rows x len(recall))`` out, so thousands of draws over 100,000 items fit.

    Parameters
    ----------
    labels : array_like of shape (..., n_items)
    scores : array_like of shape (n_items,)
    recall : 1-D array_like in [0, 1]
        Recall levels; a new trailing dimension.
    interpolate : bool, default False

    Returns
    -------
    ndarray of shape (..., len(recall))

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.core.metrics import precision_at_recall
    >>> precision_at_recall(np.array([1, 0, 1, 0]), np.array([0.9, 0.8, 0.7, 0.1]),
    ...                     recall=[0.5, 1.0])
    array([1.        , 0.66666667])
    """
    return _PAR(labels, scores, recall=recall, interpolate=interpolate)


# -------------------------------------------------------------------------- ROC


def _compute_roc(labels2d, st: _CurveState):
    tp, n_pos = _curve_counts(labels2d, st)
    fp = st.counts - tp
    n_neg = st.rk.n_items - n_pos
    tpr = _divide(tp, n_pos, np.nan)
    fpr = _divide(fp, n_neg, np.nan)
    return np.stack([fpr, tpr], axis=-1)


def _prepare_roc(scores, *, thresholds=None):
    return _prepare_curve(scores, thresholds=thresholds, zero_division=1.0, ascending=False)


def _roc_dims(st: _CurveState):
    return [("threshold", st.thresholds), ("curve", np.array(["fpr", "tpr"]))]


_ROC = _register(MetricSpec("roc_curve", "scores", _prepare_roc, _compute_roc, _roc_dims))


def roc_curve(labels, scores, *, thresholds=None):
    """False- and true-positive rates at each threshold, for every label draw.

    By default the thresholds are ``inf`` followed by the distinct scores in
    descending order, the same points as scikit-learn's
    ``roc_curve(..., drop_intermediate=False)`` (which points are "intermediate"
    differs between draws, so none are dropped). A draw without positives has
    ``tpr = nan``; one without negatives has ``fpr = nan`` (scikit-learn also warns).

    Parameters
    ----------
    labels : array_like of shape (..., n_items)
    scores : array_like of shape (n_items,)
    thresholds : 1-D array_like, optional
        Evaluate at these thresholds ("positive if score >= t") instead.

    Returns
    -------
    fpr, tpr : ndarray of shape (..., n_thresholds)
    thresholds : ndarray of shape (n_thresholds,)

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.core.metrics import roc_curve
    >>> fpr, tpr, t = roc_curve(np.array([0, 1, 1]), np.array([0.2, 0.6, 0.9]))
    >>> fpr, tpr
    (array([0., 0., 0., 1.]), array([0. , 0.5, 1. , 1. ]))
    """
    labels = V.as_label_draws(labels)
    scores = V.as_scores(scores)
    V.check_same_length(labels.shape[-1], "scores", scores.size, reference="labels")
    if thresholds is None:
        thresholds = np.r_[np.inf, np.unique(scores)[::-1]]
    st = _prepare_roc(scores, thresholds=thresholds)
    flat, lead = _flat(labels)
    out = _compute_roc(flat, st).reshape(lead + (st.thresholds.size, 2))
    return out[..., 0], out[..., 1], st.thresholds.copy()


@dataclass(frozen=True)
class _AUCState:
    ranks: np.ndarray  # mid-ranks of the scores (ascending, ties averaged)


def _prepare_auc(scores):
    return _AUCState(rankdata(scores, method="average"))


def _compute_auc(labels2d, st: _AUCState):
    n = st.ranks.size
    rank_sum = np.empty(labels2d.shape[0])
    n_pos = np.empty(labels2d.shape[0])
    for sl in _blocks(labels2d.shape[0], n, 8):
        z = labels2d[sl].astype(np.float64)
        rank_sum[sl] = z @ st.ranks
        n_pos[sl] = z.sum(axis=1)
    n_neg = n - n_pos
    # Mann-Whitney U with mid-ranks = trapezoidal area under the tied ROC steps
    u = rank_sum - n_pos * (n_pos + 1) / 2
    return _divide(u, n_pos * n_neg, np.nan)


_AUC = _register(MetricSpec("roc_auc", "scores", _prepare_auc, _compute_auc, _no_dims))


def roc_auc(labels, scores):
    """Area under the ROC curve, for every label draw.

    Computed as the Mann-Whitney statistic with mid-ranks, which equals the
    trapezoidal area under scikit-learn's ROC curve, ties included, in one
    contraction per draw. A draw with only one class has no ROC curve: where
    scikit-learn's ``roc_auc_score`` raises, this returns ``nan`` for that draw.

    Parameters
    ----------
    labels : array_like of shape (..., n_items)
    scores : array_like of shape (n_items,)

    Returns
    -------
    ndarray of shape (...)

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.core.metrics import roc_auc
    >>> roc_auc(np.array([[0, 1, 1, 0], [1, 1, 1, 1]]), np.array([0.1, 0.8, 0.4, 0.4]))
    array([0.875,   nan])
    """
    return _AUC(labels, scores)


# ---------------------------------------------------------- hard-prediction metrics


@dataclass(frozen=True)
class _PredState:
    positive: np.ndarray  # indices of predicted positives
    n_pred: float
    n_items: int
    beta2: float = 1.0
    zero_division: float = 0.0


def _prepare_pred(predictions, *, zero_division=0.0):
    pos = np.flatnonzero(predictions)
    return _PredState(pos, float(pos.size), predictions.size, 1.0, _zero_division(zero_division))


def _tp_npos(labels2d, st: _PredState):
    tp = labels2d[:, st.positive].sum(axis=1, dtype=np.int64).astype(np.float64)
    n_pos = labels2d.sum(axis=1, dtype=np.int64).astype(np.float64)
    return tp, n_pos


def _compute_precision(labels2d, st):
    tp, _ = _tp_npos(labels2d, st)
    return _divide(tp, np.full_like(tp, st.n_pred), st.zero_division)


def _compute_recall(labels2d, st):
    tp, n_pos = _tp_npos(labels2d, st)
    return _divide(tp, n_pos, st.zero_division)


def _compute_f(labels2d, st):
    tp, n_pos = _tp_npos(labels2d, st)
    # F_beta = (1 + b^2) TP / ((1 + b^2) TP + b^2 FN + FP) = (1 + b^2) TP / (b^2 N_p + N_pred)
    return _divide((1 + st.beta2) * tp, st.beta2 * n_pos + st.n_pred, st.zero_division)


def _compute_accuracy(labels2d, st):
    tp, n_pos = _tp_npos(labels2d, st)
    tn = (st.n_items - n_pos) - (st.n_pred - tp)
    return (tp + tn) / st.n_items


def _prepare_acc(predictions):
    return _prepare_pred(predictions)


def _prepare_f(predictions, *, beta=1.0, zero_division=0.0):
    if isinstance(beta, bool) or not isinstance(beta, int | float) or not beta >= 0:
        raise ValueError(f"`beta` must be a number >= 0, got {beta!r}.")
    st = _prepare_pred(predictions, zero_division=zero_division)
    return _PredState(st.positive, st.n_pred, st.n_items, float(beta) ** 2, st.zero_division)


_PREC = _register(MetricSpec("precision", "predictions", _prepare_pred, _compute_precision, _no_dims))
_REC = _register(MetricSpec("recall", "predictions", _prepare_pred, _compute_recall, _no_dims))
_F = _register(MetricSpec("f_score", "predictions", _prepare_f, _compute_f, _no_dims))
_ACC = _register(MetricSpec("accuracy", "predictions", _prepare_acc, _compute_accuracy, _no_dims))


def precision(labels, predictions, *, zero_division=0.0):
    """Precision ``TP / (TP + FP)`` of hard predictions, for every label draw.

    With no predicted positives precision is undefined and gets ``zero_division``
    (0.0 by default, scikit-learn's value, without its warning).

    Parameters
    ----------
    labels : array_like of shape (..., n_items)
    predictions : array_like of shape (n_items,), 0/1 or bool
    zero_division : {0.0, 1.0, nan}

    Returns
    -------
    ndarray of shape (...)

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.core.metrics import precision
    >>> precision(np.array([[1, 0, 1], [1, 1, 1]]), np.array([1, 1, 0]))
    array([0.5, 1. ])
    """
    return _PREC(labels, predictions, zero_division=zero_division)


def recall(labels, predictions, *, zero_division=0.0):
    """Recall ``TP / (TP + FN)`` of hard predictions, for every label draw.

    A draw with no positives gets ``zero_division`` (0.0, as scikit-learn).

    Parameters
    ----------
    labels : array_like of shape (..., n_items)
    predictions : array_like of shape (n_items,), 0/1 or bool
    zero_division : {0.0, 1.0, nan}

    Returns
    -------
    ndarray of shape (...)

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.core.metrics import recall
    >>> recall(np.array([[1, 0, 1], [0, 0, 0]]), np.array([1, 1, 0]))
    array([0.5, 0. ])
    """
    return _REC(labels, predictions, zero_division=zero_division)


def f_score(labels, predictions, *, beta=1.0, zero_division=0.0):
    """F-beta score of hard predictions, for every label draw.

    ``F_beta = (1 + beta^2) TP / ((1 + beta^2) TP + beta^2 FN + FP)``, as scikit-learn's
    ``fbeta_score``; ``beta < 1`` favours precision. When ``TP + FN + FP = 0`` (no
    positives and none predicted) it is ``zero_division``.

    Parameters
    ----------
    labels : array_like of shape (..., n_items)
    predictions : array_like of shape (n_items,), 0/1 or bool
    beta : float >= 0, default 1.0
    zero_division : {0.0, 1.0, nan}

    Returns
    -------
    ndarray of shape (...)

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.core.metrics import f_score
    >>> float(f_score(np.array([1, 0, 1, 1]), np.array([1, 1, 0, 1])))
    0.6666666666666666
    """
    return _F(labels, predictions, beta=beta, zero_division=zero_division)


def accuracy(labels, predictions):
    """Fraction of items whose hard prediction equals the label, for every draw.

    Parameters
    ----------
    labels : array_like of shape (..., n_items)
    predictions : array_like of shape (n_items,), 0/1 or bool

    Returns
    -------
    ndarray of shape (...)

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.core.metrics import accuracy
    >>> accuracy(np.array([[1, 0, 1, 1], [1, 1, 0, 1]]), np.array([1, 1, 0, 1]))
    array([0.5, 1. ])
    """
    return _ACC(labels, predictions)
