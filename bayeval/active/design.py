"""A designed first batch: which items to vet before any label is known.

Random labels waste most of a small budget where the metric is already decided: with
3% positives, 30 random labels hold about one positive, and an AP interval from them is
as wide as the unit interval. :func:`design` stratifies the pool on the classifier's
score and spends the labels where the metric is decided:

* ranking metrics (AP, P@K, PR and ROC curves): strata by share of the ranking from
  the top -- 0-1%, 1-2%, 2-5%, 5-10%, 10-20%, 20-50%, 50-100% (strata of fewer than
  two items are merged into the next) -- with the same number of labels in each: the
  top of the ranking is over-sampled, and every part of it is still seen;
* metrics at a threshold (precision, recall, F, accuracy): the flagged items
  (``score >= threshold``) in two strata split at their median score, and the
  unflagged ones by distance in rank below the threshold -- the nearest 10%, 10-30%,
  30-60% and 60-100% -- the same number of labels in each.

Within a stratum the items are drawn uniformly at random, so the design depends on the
scores alone. With categories (an :class:`~bayeval.EvalData` with ``categories=``) the
strata are each category's own, and the batch is split equally among the categories (a
category with too few items passing its share on), so that every category's metric gets
labels from its top and its tail: the design then depends on the scores and the
categories. Later batches of strategy ``"auto"`` keep a quarter of their items
(:data:`EXPLORE_SHARE`) on these strata: :func:`explore` tops up the strata that hold the
fewest vetted items, so that greedy expected change does not leave the tails of the
ranking without labels.

Which models stay valid
-----------------------
A design that depends only on the scores (and, later, on the labels already seen) is
*ignorable* for a model of the labels given the scores (with categories: given the
scores and the categories, as the curves pooled across categories are): the calibration
curves and the default :func:`bayeval.fit` (their likelihood is a product over the
vetted items of ``p(y_i | s_i)``; their one label-dependent prior setting, the centre of the
standardized score, uses the rank-weighted prevalence that does not follow an
over-sampled top: each vetted item stands for the part of the ranking nearest to it,
whichever rule chose it, so mixed designed, greedy and exploring batches need no
sampling rates). The score mixtures (:class:`~bayeval.models.ScoreMixture`) model
every item's score and the vetted items' labels jointly, so they are valid too, given
that all items' scores enter their likelihood, which they do. Summaries that treat the
vetted items as a random sample are *not* valid under a design: the vetted-only and
naive baselines (``bayeval.vetted_only``, ``bayeval.naive``), the vetted items' share
of positives, and peers such as prediction-powered inference. A design that depends on
anything the model does not see (features, the annotators' hunches) is not ignorable
for any of them; the categories' equal shares are such a thing for a model blind to the
categories (the score mixtures, a calibration curve with ``categories=False``) where a
category's labels at a given score differ from the others'.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..core import _validate as V
from ..core._defaults import tie_order
from ..core.data import EvalData
from ..core.evaluate import resolve_metric
from ..core.summary import threshold_caveats

__all__ = ["design", "explore", "explore_count", "EXPLORE_SHARE", "RANK_STRATA", "THRESHOLD_METRICS", "design_strata",
           "design_target", "resolve_auto", "check_threshold"]

#: Stratum edges for ranking metrics, as shares of the ranking counted from the top.
RANK_STRATA = (0.0, 0.01, 0.02, 0.05, 0.10, 0.20, 0.50, 1.0)
#: Share of every batch that strategy ``"auto"`` spends on :func:`explore` once the first
#: (designed) batch is in; the rest goes to expected change.
EXPLORE_SHARE = 0.25
#: Stratum edges below a threshold, as shares of the unflagged items counted from the threshold.
_BELOW_STRATA = (0.0, 0.10, 0.30, 0.60, 1.0)

THRESHOLD_METRICS = ("precision", "recall", "f_score", "accuracy")
_RANKING_METRICS = ("average_precision", "precision_at_k", "recall_at_k", "precision_recall_curve",
                    "precision_at_recall", "roc_curve", "roc_auc")


def _split(order: np.ndarray, edges) -> list[np.ndarray]:
    """Cut ``order`` (positions, best first) at the shares ``edges``; merge strata under 2 items."""
    n = order.size
    cuts = np.unique(np.clip(np.round(np.asarray(edges) * n).astype(np.int64), 0, n))
    parts = [order[a:b] for a, b in zip(cuts[:-1], cuts[1:], strict=True) if b > a]
    out: list[np.ndarray] = []
    carry = np.empty(0, dtype=np.int64)
    for p in parts:
        p = np.r_[carry, p]
        if p.size < 2:
            carry = p
            continue
        out.append(p)
        carry = np.empty(0, dtype=np.int64)
    if carry.size:
        if out:
            out[-1] = np.r_[out[-1], carry]
        else:
            out.append(carry)
    return out


def design_strata(scores, *, metric: str = "average_precision", threshold: float | None = None) -> list[np.ndarray]:
    """The strata of :func:`design` as arrays of positions (best scores first in each;
    equal scores in a fixed pseudo-random order, not in the order of the file).

    Examples
    --------
    >>> import numpy as np
    >>> [s.size for s in design_strata(np.linspace(0, 1, 1000))]
    [10, 10, 30, 50, 100, 300, 500]
    >>> [s.size for s in design_strata(np.linspace(0, 1, 1000), metric="precision", threshold=0.9)]
    [50, 50, 90, 180, 270, 360]
    """
    s = V.as_scores(scores, "scores")
    metric = V.check_choice(metric, "metric", _RANKING_METRICS + THRESHOLD_METRICS)
    order = np.lexsort((tie_order(s.size), -s))  # best first
    if metric in _RANKING_METRICS:
        return _split(order, RANK_STRATA)
    if threshold is None:
        raise ValueError(f"metric={metric!r} is computed at a threshold: pass threshold=, e.g. threshold=0.5.")
    threshold = V.as_real_in(threshold, "threshold", lo=-np.inf, hi=np.inf, lo_open=True, hi_open=True)
    flagged = order[s[order] >= threshold]
    rest = order[s[order] < threshold]
    out = _split(flagged, (0.0, 0.5, 1.0)) if flagged.size else []
    return out + (_split(rest, _BELOW_STRATA) if rest.size else [])


def design(
    data,
    size: int,
    *,
    metric: str = "average_precision",
    threshold: float | None = None,
    exclude=None,
    random_seed=None,
) -> np.ndarray:
    """Positions of a first batch of items to vet, stratified on the score.

    Parameters
    ----------
    data : EvalData or array_like of scores
        The pool. With an :class:`~bayeval.EvalData`, items already vetted are not chosen;
        with its categories, each category is stratified on its own and gets the same
        share of the batch (see the module documentation).
    size : int
        How many items to vet.
    metric : str, default "average_precision"
        The metric the labels are for: a ranking metric (AP, P@K, curves, ROC AUC) or
        one at a threshold (``"precision"``, ``"recall"``, ``"f_score"``,
        ``"accuracy"``; then ``threshold=`` is required). See the module documentation.
    threshold : float, optional
        The decision threshold of a metric at a threshold. One that flags no item or every
        item is refused (:func:`check_threshold`).
    exclude : array_like of int or boolean mask, optional
        Positions never to choose (e.g. items already sent to annotators).
    random_seed : None, int, SeedSequence or Generator
        The draws inside the strata.

    Returns
    -------
    numpy.ndarray of int64
        ``size`` distinct positions (fewer only when fewer items can be chosen), in
        stratum order, best-scored stratum first (with categories: category by category).

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.active import design
    >>> s = np.linspace(0, 1, 1000)
    >>> pos = design(s, 14, random_seed=0)
    >>> int((s[pos] >= np.quantile(s, 0.99)).sum())   # 2 of 14 from the top 1%
    2
    """
    if isinstance(data, EvalData):
        scores, vetted = data.scores, data.vetted
    else:
        scores = V.as_scores(data, "data")
        vetted = np.zeros(scores.size, dtype=bool)
    size = V.as_positive_int(size, "size", hint=" It is how many items to vet.")
    check_threshold(scores, metric, threshold)  # a rule that flags no item (or every item): no labels for it
    rng = V.as_rng(random_seed)
    blocked = vetted | V.as_item_mask(exclude, scores.size, "exclude")
    if isinstance(data, EvalData) and data.has_categories:  # each category's own strata
        groups = [np.flatnonzero(data.category_codes == c) for c in range(data.category_names.size)]
    else:
        groups = [np.arange(scores.size)]
    by_group = []
    for g in groups:
        strata = [g[st] for st in design_strata(scores[g], metric=metric, threshold=threshold)] if g.size else []
        by_group.append([f for f in (st[~blocked[st]] for st in strata) if f.size])
    shares = _equal_shares(np.array([sum(f.size for f in fs) for fs in by_group], dtype=np.int64), size)
    picks = []
    for free, share in zip(by_group, shares, strict=True):
        alloc = _equal_shares(np.array([f.size for f in free], dtype=np.int64), int(share))
        picks += [rng.choice(f, a, replace=False) for f, a in zip(free, alloc, strict=True) if a]
    return np.concatenate(picks).astype(np.int64) if picks else np.empty(0, dtype=np.int64)


def _equal_shares(room: np.ndarray, size: int) -> np.ndarray:
    """``size`` items (at most ``room.sum()``) over places that hold ``room`` each: the same
    number in each, a full one passing its share on, the first places taking what is left over."""
    alloc = np.zeros(room.size, dtype=np.int64)
    left = min(size, int(room.sum()))
    while left > 0:
        open_ = np.flatnonzero(alloc < room)
        share = max(1, left // open_.size)
        for k in open_:
            add = min(share, room[k] - alloc[k], left)
            alloc[k] += add
            left -= add
            if left == 0:
                break
    return alloc


def explore(
    data,
    size: int,
    *,
    metric: str = "average_precision",
    threshold: float | None = None,
    exclude=None,
    random_seed=None,
) -> np.ndarray:
    """Positions of ``size`` items that top up the design's least-vetted strata.

    The strata are those of :func:`design` (:func:`design_strata`). Each item goes to
    the stratum that holds the fewest vetted (or already chosen) items and still has an
    item to choose, ties in a random order; inside a stratum the item is drawn uniformly.
    Mixed into the batches of expected change (strategy ``"auto"``), this keeps labels
    coming from every part of the ranking -- the tails that greedy expected change
    stops looking at, where a calibration curve would otherwise be extrapolated. The
    choice depends on the scores and on which items are vetted alone, so it leaves the
    calibration models and :func:`bayeval.fit` valid (see the module documentation).

    Parameters
    ----------
    data : EvalData
        The pool and its vetted items.
    size : int
        How many items to choose.
    metric, threshold
        As in :func:`design`.
    exclude : array_like of int or boolean mask, optional
        Positions never to choose.
    random_seed : None, int, SeedSequence or Generator
        Tie order and the draws inside the strata.

    Returns
    -------
    numpy.ndarray of int64
        ``size`` distinct positions (fewer only when fewer items can be chosen).

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import EvalData
    >>> from bayeval.active import explore
    >>> s = np.linspace(1, 0, 1000)                 # best first
    >>> lab = np.full(1000, np.nan); lab[:40] = 1   # the top 4% vetted
    >>> pos = explore(EvalData(s, lab), 4, random_seed=0)
    >>> sorted(np.digitize(pos, [50, 100, 200, 500]).tolist())  # one in each stratum below the top 5%
    [1, 2, 3, 4]
    """
    if not isinstance(data, EvalData):
        raise TypeError(f"explore() needs an EvalData (it tops up the strata its vetted items leave thin); "
                        f"got {type(data).__name__}. Wrap the scores: EvalData(scores, labels).")
    size = V.as_positive_int(size, "size", hint=" It is how many items to choose.")
    rng = V.as_rng(random_seed)
    blocked = data.vetted | V.as_item_mask(exclude, data.n_items, "exclude")
    strata = design_strata(data.scores, metric=metric, threshold=threshold)
    have = np.array([int(data.vetted[st].sum()) for st in strata], dtype=np.int64)
    free = [st[~blocked[st]] for st in strata]
    room = np.array([f.size for f in free], dtype=np.int64)
    tie = rng.permutation(len(strata))
    alloc = np.zeros(len(strata), dtype=np.int64)
    for _ in range(min(size, int(room.sum()))):
        open_ = np.flatnonzero(alloc < room)
        k = open_[np.lexsort((tie[open_], (have + alloc)[open_]))[0]]
        alloc[k] += 1
    picks = [rng.choice(f, a, replace=False) for f, a in zip(free, alloc, strict=True) if a]
    return np.concatenate(picks).astype(np.int64) if picks else np.empty(0, dtype=np.int64)


def explore_count(n_vetted: int, size: int, share: float = EXPLORE_SHARE) -> int:
    """How many of a batch of ``size`` that strategy ``"auto"`` gives to :func:`explore`
    when ``n_vetted`` items are vetted: ``share`` of the labels, rounded on the running
    total, so that batches of one item still explore once in every ``1 / share``.

    Examples
    --------
    >>> explore_count(20, 20), explore_count(20, 10), explore_count(30, 10)
    (5, 3, 2)
    >>> [explore_count(n, 1) for n in range(20, 28)]
    [0, 1, 0, 0, 0, 1, 0, 0]
    """
    def total(n):
        return int(np.floor(share * n + 0.5))

    return total(n_vetted + size) - total(n_vetted)


def resolve_auto(strategy: str, data: EvalData, size: int) -> str:
    """The strategy ``"auto"`` stands for: ``"design"`` while fewer than ``size`` items are
    vetted and the data has no noisy labels (with categories or without: the design
    stratifies each category), else ``"expected_change"`` (which ``"auto"`` mixes with
    :func:`explore`: see :func:`explore_count`). With noisy labels the model already has
    more to go on than the scores, and expected change chooses from the start. Other
    strategies are returned as they are.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import EvalData
    >>> resolve_auto("auto", EvalData(np.linspace(0, 1, 50)), 10)
    'design'
    >>> resolve_auto("auto", EvalData(np.linspace(0, 1, 50), categories=["a", "b"] * 25), 10)
    'design'
    >>> resolve_auto("auto", EvalData(np.linspace(0, 1, 50), noisy_labels=[0, 1] * 25), 10)
    'expected_change'
    """
    if strategy != "auto":
        return strategy
    return "design" if data.noisy_labels is None and data.n_vetted < size else "expected_change"


def design_target(metric, threshold=None) -> tuple[str, float | None]:
    """The strata a loop's designed batch uses for ``metric``: its own where :func:`design`
    knows it (a metric at a threshold needs the threshold), else the ranking's.

    Examples
    --------
    >>> design_target("precision", 0.5)
    ('precision', 0.5)
    >>> design_target("precision"), design_target(len)
    (('average_precision', None), ('average_precision', None))
    """
    if not isinstance(metric, str) or metric not in _RANKING_METRICS + THRESHOLD_METRICS:
        return "average_precision", None
    if metric in THRESHOLD_METRICS:
        return (metric, threshold) if threshold is not None else ("average_precision", None)
    return metric, None


def check_threshold(data, metric, threshold, *, category: str | None = "pooled") -> None:
    """Refuse a metric at a threshold whose rule flags no item (the threshold lies above every
    score) or every item (at or below every score), before a loop spends labels on it: the
    metric then describes a rule that predicts every item alike, whatever the labels (precision
    is undefined in every draw where nothing is flagged), and no label can sharpen it. With
    categories and ``category`` other than ``"pooled"``, precision is also refused where the
    threshold flags no item of some category (that category's precision is undefined). Nothing
    is said of other metrics, of ``threshold=None``, or of a threshold that is not a number.

    Parameters
    ----------
    data : EvalData or array_like of scores
        The pool.
    metric : str or callable
        The metric (as in :meth:`bayeval.Posterior.metric`).
    threshold : float or None
        Its decision threshold.
    category : {"pooled", "each", "mean"} or None, default "pooled"
        How the metric treats the data's categories (None: ``"each"`` with categories).

    Raises
    ------
    ValueError
        Saying what the threshold flags, the scores' range, and what to pass instead.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.active.design import check_threshold
    >>> check_threshold(np.linspace(0, 0.45, 50), "recall", 0.2)   # an operating point: nothing said
    >>> check_threshold(np.linspace(0, 0.45, 50), "precision", 0.5)
    Traceback (most recent call last):
    ...
    ValueError: precision at threshold=0.5: the threshold 0.5 flags no item: it lies above every score (max 0.45); ...
    """
    try:
        name = resolve_metric(metric)[2]
    except (TypeError, ValueError):
        return  # an unknown metric is refused where it is evaluated
    if (name not in THRESHOLD_METRICS or isinstance(threshold, bool) or not isinstance(threshold, numbers.Real)
            or np.isnan(threshold)):
        return
    s = data.scores if isinstance(data, EvalData) else V.as_scores(data, "data")
    said = threshold_caveats(s, [(f"{name} at threshold={threshold!r}", threshold)])
    if said:
        raise ValueError(
            f"{said[0]} The {s.size} scores range from {s.min():.4g} to {s.max():.4g}: give a threshold above the "
            f"lowest and at most the highest (their median is {np.median(s):.4g}), or a ranking metric "
            "(average_precision, precision_at_k). Nothing was chosen."
        )
    if name != "precision" or not isinstance(data, EvalData) or not data.has_categories:
        return
    category = V.as_category_mode(category, True)
    if category == "pooled":
        return
    codes, names = data.category_codes, data.category_names
    empty = [(str(c), float(s[codes == j].max())) for j, c in enumerate(names)
             if (codes == j).any() and not (s[codes == j] >= threshold).any()]
    if empty:
        shown = ", ".join(f"{c!r} (highest score {hi:.4g})" for c, hi in empty[:5])
        more = f" and {len(empty) - 5} more" if len(empty) > 5 else ""
        raise ValueError(
            f"precision at threshold={threshold!r} with category={category!r}: the threshold flags no item of "
            f"{len(empty)} categor{'y' if len(empty) == 1 else 'ies'}: {shown}{more}; there the rule predicts every "
            "item negative, and its precision (and so the metric) is undefined whatever the labels. Give "
            "category='pooled' (one precision over all items) or a threshold at most the lowest of these highest "
            "scores. Nothing was chosen."
        )
