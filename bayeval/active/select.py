"""Choosing which items to vet next, from a :class:`bayeval.Posterior`.

Six strategies (:data:`STRATEGIES`); the first four after section 3.2 of active testing
(Nguyen, Ramanan and Fowlkes, 2018, "Active Testing: An Efficient and Robust Framework
for Estimating Accuracy", ICML):

``"random"``
    Hierarchical random sampling: draw a category uniformly among the categories that
    still have selectable items, then an item uniformly inside it; repeat without
    replacement. Without categories (or with ``category="pooled"``) it is uniform.
``"most_confident_mistake"``
    Items the current posterior believes negative (``P(z_i = 1) < 0.5``) in order of
    decreasing classifier score ("most-confident negative"). If there are fewer of them
    than requested, the batch continues with the remaining items in order of
    *increasing* ``P(z_i = 1)`` -- the least confident positives, the next most likely
    to be mistakes.
``"uncertainty"``
    Maximum entropy of ``p(z_i)``: items in order of increasing ``|P(z_i = 1) - 0.5|``.
``"expected_change"``
    Maximum expected change of the posterior mean of the metric (the paper's MEEC),
    see below.
``"design"``
    A batch stratified on the score (:func:`bayeval.active.design`): no model is
    needed, the right first batch when (almost) nothing is vetted.
``"auto"`` (the default of :class:`~bayeval.active.ActiveSession` and ``bayeval select``)
    For data without noisy labels (with categories or without), ``"design"`` while fewer
    items are vetted than the batch holds (``size``), then ``"expected_change"`` for three
    quarters of every batch and :func:`bayeval.active.explore` (the design's least-vetted
    strata) for the other quarter (:data:`bayeval.active.design.EXPLORE_SHARE`), so that
    the tails of the ranking keep getting labels; with noisy labels, the same mix from the
    start. All of these choose items by their scores and the labels already
    seen, a design under which the calibration curves, :func:`bayeval.fit` and the score
    mixtures stay valid (see :mod:`bayeval.active.design` for which summaries do not).

Ties are broken deterministically by higher score, then lower position.

Expected change of the estimate
-------------------------------
Let ``Q`` be the metric (one value per posterior draw) and ``z_i`` the label of item
``i``. The posterior gives joint draws of ``(Q, z)``, so conditioning on the outcome
of vetting item ``i`` is exact (up to Monte Carlo error)::

    E[Q | z_i = 1] - E[Q] =  Cov(Q, z_i) / p_i
    E[Q | z_i = 0] - E[Q] = -Cov(Q, z_i) / (1 - p_i)

with ``p_i = P(z_i = 1)``. Weighting the two absolute changes by their probabilities,
the expected absolute change of the estimate is ``2 |Cov(Q, z_i)|``. Computed over
the draws themselves (moments with divisor ``n``), this *equals* the expected absolute
change of the Monte Carlo estimate ``mean(Q)`` under the empirical distribution of the
draws, for every metric and every model -- no closed form is needed. It costs one
pass over the label draws for all items: per chunk, ``sum Q``, ``sum z_i`` and
``sum Q z_i`` (one matrix-vector product), in float64 with ``Q`` centred by its
first-chunk mean.

On independent labels (the paper's learned estimator, eq. 6) the value reduces to
the paper's closed forms where they are right: ``2/K p_i (1 - p_i)`` for the items
in the top ``K`` of P@K (eq. 11) and 0 for the others. For AP with a *fixed* number
of positives ``N_p`` the exact value is ::

    2 p_j (1 - p_j) / N_p * [ (1 + sum_{h<j} E z_h) / j + sum_{k>j} E z_k / k ]

(``j`` = rank by descending score, 1-based). The paper's eq. 12,
``r_j p_j (1 - p_j) / N_p``, keeps only part of the first term (its supplement
averages the signed change, which is zero in expectation, and loses terms); it is
not used here. For scikit-learn's AP, whose ``N_p`` is itself random, only the
generic value is exact; the tests compare it with a brute-force enumeration of all
label vectors.

Categories (``category=``, as in :meth:`bayeval.Posterior.metric`):
``"each"`` (the default with categories) gives each item the expected change of
the metric *of its own category* (its label enters no other category's metric);
``"mean"`` gives the expected change of the mean over categories, computed as the
own-category value divided by the number of non-empty categories (changes of the
other categories' estimates through shared model parameters are not counted: under
conditionally independent labels they are zero and would only add Monte Carlo
noise); ``"pooled"`` uses one metric over all items.

Batches
-------
Taking the ``size`` largest values can spend a batch on items that carry the same
information (e.g. two detections of one object whose labels always agree). For
``size > 1`` the selection is greedy: after item ``j`` is picked, the information
its label brings is removed from ``Q`` by regressing ``Q`` on ``z_j`` across the
draws, ``Q <- Q - b (z_j - mean z_j)`` with ``b`` the slope (``z_j`` first
orthogonalized against the labels already picked in the same category, so ``Q`` is
residualized on all of them jointly); the covariances of the remaining items are
then updated, ``Cov(Q, z_k) <- Cov(Q, z_k) - b Cov(z_j, z_k)``, all vectorized. The
greedy step works in memory on the ``M = min(n_candidates, max(20 size, 200))`` items
with the largest expected change, holding their labels for the draws (all draws if
``draws x M`` float64 values fit in 128 MiB, else an evenly spaced subset). Items
whose label is a copy of an already picked one get an updated value of zero. With
``size > 1`` the label draws are generated twice (a second pass collects the
candidates' labels) unless all of them fit in 32 MiB.
"""

from __future__ import annotations


import numpy as np
import xarray as xr

from ..core import _validate as V
from ..core.posterior import Posterior, check_posterior
from ..core.evaluate import MetricEvaluator, resolve_metric
from .design import check_threshold, design, design_target, explore, explore_count, resolve_auto

__all__ = ["STRATEGIES", "check_top_k", "expected_change", "select", "select_with_change"]

STRATEGIES = ("random", "most_confident_mistake", "uncertainty", "expected_change", "design", "auto")

_BLOCK_BYTES = 1 << 22  # float64 working block of the matrix-vector products (~4 MiB)
_KEEP_ALL_BYTES = 1 << 25  # keep every label draw from the first pass below this (int8)
_GREEDY_BYTES = 1 << 27  # float64 labels of the greedy candidates (draws x M)


# ------------------------------------------------------------------ validation


# The checks are bayeval.core._validate's (V.as_category_mode, V.as_item_mask,
# V.as_positive_int and V.as_rng) and bayeval.core.posterior.check_posterior.


def _resolve_category(data, category) -> str:
    return V.as_category_mode(category, data.has_categories)


def check_top_k(data, metric, *, category=None, **metric_kwargs) -> None:
    """Refuse a ``k`` of ``precision_at_k`` or ``recall_at_k`` above the items the metric is
    computed on, as :meth:`bayeval.Posterior.metric` refuses it, before any item is chosen for it.

    A top bigger than the items would count its missing places as negatives (``precision_at_k``)
    or hold every item (``recall_at_k`` is 1 in every draw), so no label could sharpen it. With
    categories and ``category`` other than ``"pooled"`` the metric is computed per category, and
    ``k`` above a category's number of items is refused too. Other metrics pass.

    Parameters
    ----------
    data : EvalData
        The pool.
    metric : str or callable
        The metric (as in :meth:`bayeval.Posterior.metric`).
    category : {"each", "mean", "pooled"}, optional
        How the metric treats the data's categories (None: ``"each"`` with categories).
    **metric_kwargs
        Options of the metric (``k=``, ``threshold=``...).

    Raises
    ------
    ValueError
        Saying which ``k`` is too big for which items, and the largest ``k`` allowed.

    Examples
    --------
    >>> from bayeval import EvalData
    >>> from bayeval.active.select import check_top_k
    >>> data = EvalData([0.9, 0.8, 0.7, 0.6, 0.5], categories=["a", "a", "a", "b", "b"])
    >>> check_top_k(data, "precision_at_k", k=2)     # every category has 2 items or more
    >>> check_top_k(data, "precision_at_k", k=3)
    Traceback (most recent call last):
    ...
    ValueError: precision_at_k: `k` = 3 is more than the items of 1 category: 'b' (2 items); ...
    >>> check_top_k(data, "precision_at_k", k=3, category="pooled")  # the top of all 5 items
    """
    try:
        name = resolve_metric(metric)[2]
    except (TypeError, ValueError):
        return  # an unknown metric is refused where it is evaluated
    if name not in V.TOP_K_METRICS:
        return
    kwargs = dict(metric_kwargs)
    threshold = kwargs.pop("threshold", None)
    category = "pooled" if _resolve_category(data, category) == "pooled" else "each"
    MetricEvaluator(data, metric, category=category, threshold=threshold, kwargs=kwargs).check_top_k()


# ------------------------------------------------------------ expected change


class _ChangeSetup:
    """The metric bound to the data, and the item groups each Q column covers."""

    def __init__(self, post: Posterior, metric, category, metric_kwargs):
        data = post.data
        kwargs = dict(metric_kwargs)
        threshold = kwargs.pop("threshold", None)
        self.category = _resolve_category(data, category)
        ev_category = "pooled" if self.category == "pooled" else "each"
        ev = MetricEvaluator(data, metric, category=ev_category, threshold=threshold, kwargs=kwargs)
        ev.check_top_k()  # a top bigger than the items (or a category's), refused as Posterior.metric refuses it
        if ev.extra_shape:
            dims = ", ".join(f"{d}={len(c)}" for d, c in ev.extra)
            raise ValueError(
                f"expected_change needs a metric with one value per draw, but {ev.name!r} gives "
                f"several ({dims}). Pick a single value, e.g. k=10 rather than k=[10, 20], one "
                "recall= for precision_at_recall, or average_precision / roc_auc instead of a curve."
            )
        self.ev = ev
        self.name = ev.name
        n = data.n_items
        # Non-empty groups, in evaluator column order; items permuted so groups are contiguous.
        self.columns = [c for c, g in enumerate(ev.groups) if g.size]
        groups = [ev.groups[c] for c in self.columns]
        self.perm = None if len(groups) == 1 and groups[0].size == n else np.concatenate(groups)
        edges = np.cumsum([0] + [g.size for g in groups])
        self.bounds = list(zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True))
        self.group_of = np.empty(n, dtype=np.int64)  # group index of each item (original order)
        for gi, g in enumerate(groups):
            self.group_of[g] = gi
        self.scale = 1.0 / len(groups) if self.category == "mean" else 1.0
        names = None if ev.cat_names is None else [str(ev.cat_names[c]) for c in self.columns]
        self.unflagged = _unflagged(data, ev, threshold, groups, names)

    def q_columns(self, z: np.ndarray) -> np.ndarray:
        """Metric values (rows, n_groups) for a chunk of label rows, checked finite."""
        q = np.asarray(self.ev(z), dtype=np.float64).reshape(z.shape[0], -1)[:, self.columns]
        if not np.all(np.isfinite(q)):
            bad = int((~np.isfinite(q)).any(axis=1).sum())
            if self.unflagged:  # not the labels' doing: no draw can make it finite, zero_division only hides it
                raise ValueError(
                    f"The metric {self.name!r} is NaN or infinite in {bad} of {z.shape[0]} draws of a chunk: its "
                    f"rule flags no item{self.unflagged}, so it is undefined whatever the labels. zero_division "
                    "would not help (it would make the expected change 0 for every item): choose a threshold "
                    "that flags some items" + (", category='pooled'" if self.category != "pooled" else "")
                    + " or a ranking metric (average_precision, precision_at_k)."
                )
            raise ValueError(
                f"The metric {self.name!r} is NaN or infinite in {bad} of {z.shape[0]} draws of a "
                "chunk (e.g. roc_auc on a draw with a single class, or zero_division=nan). The "
                "expected change needs a finite value per draw: choose zero_division=0.0/1.0 or "
                "another metric."
            )
        return q


def _unflagged(data, ev, threshold, groups, names) -> str:
    """Where a metric of hard predictions has a rule that flags no item: "" (it flags some in
    every group), else words that say where (the rule, the categories or the highest score)."""
    if ev.spec is None or ev.spec.needs != "predictions":
        return ""
    x = data.scores >= float(threshold) if threshold is not None else np.asarray(data.predictions) == 1
    rule = f" (score >= {threshold!r})" if threshold is not None else " (the predictions are all 0)"
    empty = [gi for gi, g in enumerate(groups) if not x[g].any()]
    if not empty:
        return ""
    if names is None:
        return rule + (f"; the highest score is {data.scores.max():.4g}" if threshold is not None else "")
    shown = ", ".join(repr(names[gi]) for gi in empty[:5]) + (f" and {len(empty) - 5} more" if len(empty) > 5 else "")
    return f"{rule} in {len(empty)} of the {len(groups)} categories ({shown})"


def _covariances(post: Posterior, setup: _ChangeSetup, chunk_size, *, keep: bool = False):
    """One pass over the label draws: Cov(Q_{group(i)}, z_i) for every item.

    Returns ``(cov, kept)``: ``cov`` of shape (n_items,) in item order, moments with
    divisor ``n_draws``; ``kept`` the int8 label draws (all of them) when ``keep`` and
    they fit in ``_KEEP_ALL_BYTES``, else None.
    """
    n = post.data.n_items
    n_total = post.n_chains * post.n_draws
    keep = keep and n_total * n <= _KEEP_ALL_BYTES
    kept = [] if keep else None
    # row 0: sum of z_i, row 1: sum of z_i * (Q - q0); items in permuted order
    acc = np.zeros((2, n))
    s_q = None  # sum of (Q - q0) per group
    q0 = None
    rows_total = 0
    for _, _, z in post.label_arrays(chunk_size):
        if keep:
            kept.append(z)
        q = setup.q_columns(z)
        if q0 is None:
            q0 = q.mean(axis=0)
            s_q = np.zeros(q.shape[1])
        qc = q - q0
        s_q += qc.sum(axis=0)
        rows = z.shape[0]
        rows_total += rows
        zp = z if setup.perm is None else np.take(z, setup.perm, axis=1)
        ones = np.ones(rows)
        step = max(1, _BLOCK_BYTES // (8 * rows))  # items per float64 block
        for gi, (a, b) in enumerate(setup.bounds):
            w = np.ascontiguousarray(qc[:, gi])
            for c0 in range(a, b, step):
                c1 = min(b, c0 + step)
                zf = zp[:, c0:c1].astype(np.float64)
                acc[0, c0:c1] += ones @ zf  # exact integer counts
                acc[1, c0:c1] += w @ zf
    m = float(rows_total)
    q_mean = np.repeat(s_q / m, [b - a for a, b in setup.bounds])
    cov_p = acc[1] / m - (acc[0] / m) * q_mean
    cov = np.empty(n)
    if setup.perm is None:
        cov[:] = cov_p
    else:
        cov[setup.perm] = cov_p
    cov[post.data.vetted] = 0.0
    if kept is not None:
        kept = np.concatenate(kept, axis=0)
    return cov, kept


def expected_change(
    post, metric="average_precision", *, category=None, chunk_size=None, **metric_kwargs
):
    """Expected absolute change of the metric's posterior mean if each item were vetted.

    For each item ``i`` this is ``E_{z_i}|E[Q | z_i] - E[Q]| = 2 |Cov(Q, z_i)|``,
    computed from the joint posterior draws of the metric ``Q`` and the labels (exact
    for the draws, any metric, any model), in one pass over the label draws for all
    items. See the module documentation for the derivation and the categories.

    Parameters
    ----------
    post : Posterior
    metric : str or callable, default "average_precision"
        As in :meth:`bayeval.Posterior.metric`; it must give one value per draw
        (no curves, a single ``k``, a single ``recall``).
    category : {"each", "mean", "pooled"}, optional
        With categories in the data: the metric of the item's own category (default),
        the mean over categories (the own-category value divided by the number of
        non-empty categories), or one metric over all items.
    chunk_size : int, optional
        Draws per chunk (memory/speed only; the result does not change).
    **metric_kwargs
        Options of the metric (``k=``, ``recall=``, ``threshold=``...). A ``k`` of
        ``precision_at_k`` or ``recall_at_k`` above the items, or above a category's items
        when the metric is per category, is refused (:func:`check_top_k`).

    Returns
    -------
    xarray.DataArray
        Dims ``("item",)``, coords ``item`` = the data's item ids, name
        ``"expected_change"``; vetted items are 0.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import EvalData, Posterior
    >>> from bayeval.active.select import expected_change
    >>> data = EvalData([0.9, 0.8, 0.7, 0.1], [np.nan, np.nan, 1, np.nan])
    >>> post = Posterior.from_probabilities(data, [0.5, 0.9, 1, 0.5], draws=4000, random_seed=0)
    >>> ec = expected_change(post, "precision_at_k", k=2)
    >>> ec.dims, ec.name
    (('item',), 'expected_change')
    >>> closed_form = [2 / 2 * 0.25, 2 / 2 * 0.09, 0, 0]  # 2/K p(1-p) in the top K, else 0
    >>> bool(np.abs(ec.values - closed_form).max() < 0.02)  # Monte Carlo error ~ 0.005
    True
    """
    check_posterior(post)
    setup = _ChangeSetup(post, metric, category, metric_kwargs)
    cov, _ = _covariances(post, setup, chunk_size)
    return _as_dataarray(post, setup, cov)


def _as_dataarray(post, setup, cov) -> xr.DataArray:
    values = 2.0 * np.abs(cov) * setup.scale
    return xr.DataArray(
        values,
        dims=("item",),
        coords={"item": post.data.item_ids},
        name="expected_change",
        attrs={
            "metric": setup.name,
            "category": setup.category,
            "n_samples": post.n_chains * post.n_draws,
        },
    )


# ------------------------------------------------------------------- select


def _order(primary: np.ndarray, scores: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Indices into ``positions`` sorted by ``primary`` ascending, then score
    descending, then position ascending."""
    return np.lexsort((positions, -scores[positions], primary))


def _select_random(post, candidates, size, rng, category) -> np.ndarray:
    data = post.data
    hierarchical = data.has_categories and _resolve_category(data, category) != "pooled"
    if not hierarchical:
        return rng.permutation(candidates)[:size]
    codes = data.category_codes[candidates]
    pools = [rng.permutation(candidates[codes == c]) for c in np.unique(codes)]
    taken = [0] * len(pools)
    active = list(range(len(pools)))
    out = []
    while len(out) < size and active:
        j = int(rng.integers(len(active)))
        c = active[j]
        out.append(pools[c][taken[c]])
        taken[c] += 1
        if taken[c] == pools[c].size:
            active.pop(j)
    return np.asarray(out, dtype=np.int64)


def _select_mcm(post, candidates, size) -> np.ndarray:
    p = post.item_probability().values[candidates]
    scores = post.data.scores
    neg = p < 0.5
    first = candidates[neg][_order(np.zeros(int(neg.sum())), scores, candidates[neg])]
    rest_pos = candidates[~neg]
    rest = rest_pos[_order(p[~neg], scores, rest_pos)]
    return np.concatenate([first, rest])[:size]


def _select_uncertainty(post, candidates, size) -> np.ndarray:
    p = post.item_probability().values[candidates]
    return candidates[_order(np.abs(p - 0.5), post.data.scores, candidates)][:size]


def _greedy(
    cov: np.ndarray, z: np.ndarray, groups: np.ndarray, tie_rank: np.ndarray, size: int
) -> list[int]:
    """Greedy batch over candidates (the columns of ``z``).

    ``cov``: Cov(Q_group, z_k) per candidate; ``z``: their label draws (draws, M);
    ``groups``: the Q group of each candidate; ``tie_rank``: order among equal values
    (by score, then position). Returns indices into the candidates.
    """
    # columns sorted by group, so each group's labels are one contiguous block
    by_group = np.argsort(groups, kind="stable")
    groups = groups[by_group]
    zc = z[:, by_group].astype(np.float64)
    zc -= zc.mean(axis=0)
    d = zc.shape[0]
    cov = np.asarray(cov, dtype=np.float64)[by_group]
    tie_rank = tie_rank[by_group]
    starts = np.searchsorted(groups, groups, side="left")
    ends = np.searchsorted(groups, groups, side="right")
    avail = np.ones(cov.size, dtype=bool)
    basis: dict[int, list[tuple[np.ndarray, float]]] = {}
    picked = []
    for _ in range(min(size, cov.size)):
        val = np.where(avail, np.abs(cov), -np.inf)
        ties = np.flatnonzero(val == val.max())
        j = int(ties[np.argmin(tie_rank[ties])])
        picked.append(int(by_group[j]))
        avail[j] = False
        g = int(groups[j])
        v = zc[:, j].copy()
        for u, nu in basis.get(g, []):
            v -= (u @ v / nu) * u  # modified Gram-Schmidt against earlier picks of the group
        nv = float(v @ v)
        if nv > 1e-9 * max(float(zc[:, j] @ zc[:, j]), 1e-300):
            b = cov[j] / (nv / d)  # slope of Q on the new (orthogonalized) label
            a, e = starts[j], ends[j]
            cov[a:e] -= b * (v @ zc[:, a:e]) / d  # picked items are masked by `avail`
            basis.setdefault(g, []).append((v, nv))
        cov[j] = 0.0
    return picked


def _select_expected_change(post, candidates, size, metric, category, chunk_size, metric_kwargs):
    """``(positions, change)``: the batch, and :func:`expected_change` of every item, from the
    pass that ranked it."""
    setup = _ChangeSetup(post, metric, category, metric_kwargs)
    scores = post.data.scores
    greedy = size > 1 and candidates.size > 1
    cov, kept = _covariances(post, setup, chunk_size, keep=greedy)
    change = _as_dataarray(post, setup, cov)
    value = np.abs(cov[candidates])
    ranked = candidates[_order(-value, scores, candidates)]
    if not greedy:
        return ranked[:size], change
    m = min(ranked.size, max(20 * size, 200))
    cand = ranked[:m]
    n_total = post.n_chains * post.n_draws
    stride = max(1, -(-(n_total * m * 8) // _GREEDY_BYTES))
    if kept is not None:
        z = kept[::stride][:, cand]
    else:
        z = np.empty((-(-n_total // stride), m), dtype=np.int8)
        for chain, draws, chunk in post.label_arrays(chunk_size):
            idx = np.arange(draws.start, draws.stop) + chain * post.n_draws
            sel = idx % stride == 0
            if sel.any():
                z[idx[sel] // stride] = chunk[sel][:, cand]
    tie_rank = np.empty(m, dtype=np.int64)
    tie_rank[_order(np.zeros(m), scores, cand)] = np.arange(m)
    picked = _greedy(cov[cand], z, setup.group_of[cand], tie_rank, size)
    return cand[picked], change


def select(
    post,
    *,
    metric="average_precision",
    size: int,
    strategy="expected_change",
    random_seed=None,
    category=None,
    exclude=None,
    chunk_size=None,
    **metric_kwargs,
) -> np.ndarray:
    """Positions of the next items to vet, best first.

    Parameters
    ----------
    post : Posterior
        The current posterior (its data says which items are vetted).
    metric : str or callable, default "average_precision"
        The metric whose estimate should improve; used by ``"expected_change"``
        (with ``**metric_kwargs``) and ignored by the other strategies.
    size : int
        How many items to return.
    strategy : {"expected_change", "auto", "design", "random", "most_confident_mistake", "uncertainty"}
        See :data:`STRATEGIES` and the module documentation. ``"auto"``: a designed
        batch while fewer than ``size`` items are vetted, then ``"expected_change"``
        with a quarter of each batch from :func:`bayeval.active.explore` (listed last).
    random_seed : None, int, numpy.random.SeedSequence or numpy.random.Generator
        Seed of the ``"random"`` and ``"design"`` strategies and of ``"auto"``'s exploration
        (the others are deterministic).
    category : {"each", "mean", "pooled"}, optional
        For ``"expected_change"``: as in :func:`expected_change`. For ``"random"``:
        ``"pooled"`` samples uniformly, anything else (the default with
        categories) samples a category first.
    exclude : array_like of int, optional
        Positions (0 .. n_items - 1) never to select, e.g. items already sent to
        annotators; a boolean mask of shape (n_items,) is also accepted.
    chunk_size : int, optional
        Draws per chunk for ``"expected_change"`` (memory/speed only).
    **metric_kwargs
        Options of the metric (``k=``, ``threshold=``...). A ``threshold=`` that flags no
        item or every item is refused (:func:`bayeval.active.design.check_threshold`) by
        the strategies that use the metric. A ``k`` of ``precision_at_k`` or ``recall_at_k``
        above the items or, per category, above a category's items is refused whatever the
        strategy (:func:`check_top_k`), as ``bayeval select --k`` refuses it.

    Returns
    -------
    numpy.ndarray of int64
        ``size`` distinct positions of unvetted, non-excluded items, best first
        (fewer only when fewer such items remain; then all of them).

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import EvalData, Posterior
    >>> from bayeval.active.select import select
    >>> data = EvalData([0.9, 0.8, 0.7, 0.1], [np.nan, np.nan, 1, np.nan])
    >>> post = Posterior.from_probabilities(data, [0.5, 0.9, 1, 0.5], draws=2000, random_seed=0)
    >>> select(post, metric="precision_at_k", k=2, size=2).tolist()
    [0, 1]
    >>> select(post, size=1, strategy="most_confident_mistake").tolist()
    [0]
    >>> select(post, size=3, strategy="random", random_seed=1, exclude=[3]).size
    2
    """
    return select_with_change(post, metric=metric, size=size, strategy=strategy, random_seed=random_seed,
                              category=category, exclude=exclude, chunk_size=chunk_size, **metric_kwargs)[0]


def select_with_change(
    post,
    *,
    metric="average_precision",
    size: int,
    strategy="expected_change",
    random_seed=None,
    category=None,
    exclude=None,
    chunk_size=None,
    **metric_kwargs,
) -> tuple[np.ndarray, xr.DataArray | None]:
    """:func:`select`, and the expected change of the metric that ranked the batch.

    The arguments are :func:`select`'s. Returns ``(positions, change)``: the positions
    :func:`select` returns and, where the batch was ranked by ``"expected_change"`` (also
    within ``"auto"``), :func:`expected_change` of every item with the same metric,
    category and options (the values of the pass that ranked it, before the batch: no
    second pass over the label draws); else None.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import EvalData, Posterior
    >>> from bayeval.active.select import expected_change, select_with_change
    >>> data = EvalData([0.9, 0.8, 0.7, 0.1], [np.nan, np.nan, 1, np.nan])
    >>> post = Posterior.from_probabilities(data, [0.5, 0.9, 1, 0.5], draws=2000, random_seed=0)
    >>> pos, change = select_with_change(post, metric="precision_at_k", k=2, size=2)
    >>> pos.tolist(), bool(np.array_equal(change, expected_change(post, "precision_at_k", k=2)))
    ([0, 1], True)
    >>> select_with_change(post, size=1, strategy="most_confident_mistake")[1] is None
    True
    """
    check_posterior(post)
    size = V.as_positive_int(size, "size", hint=" It is how many items to vet.")
    V.check_choice(strategy, "strategy", STRATEGIES)
    rng = V.as_rng(random_seed)
    data = post.data
    excluded = V.as_item_mask(exclude, data.n_items, "exclude")
    if category is not None:
        _resolve_category(data, category)
    if strategy in ("expected_change", "design", "auto"):  # a rule that flags no item: no label can move it
        check_threshold(data, metric, metric_kwargs.get("threshold"), category=category)
    check_top_k(data, metric, category=category, **metric_kwargs)  # a top bigger than the items: whatever the strategy
    candidates = np.flatnonzero(~data.vetted & ~excluded)
    auto = strategy == "auto"
    strategy = resolve_auto(strategy, data, size)
    name, thr = design_target(metric, metric_kwargs.get("threshold"))
    change = None
    if strategy == "design":
        return design(data, size, metric=name, threshold=thr, exclude=excluded, random_seed=rng), None
    if strategy == "expected_change":
        if candidates.size == 0:
            _ChangeSetup(post, metric, category, metric_kwargs)  # still validate the metric
            return np.empty(0, dtype=np.int64), None
        n_explore = min(explore_count(data.n_vetted, size), candidates.size) if auto else 0
        wide = explore(data, n_explore, metric=name, threshold=thr, exclude=excluded,
                       random_seed=rng) if n_explore else np.empty(0, dtype=np.int64)
        rest = candidates[~np.isin(candidates, wide)]
        greedy = np.empty(0, dtype=np.int64)
        if size > wide.size and rest.size:
            greedy, change = _select_expected_change(
                post, rest, size - wide.size, metric, category, chunk_size, metric_kwargs
            )
        else:
            _ChangeSetup(post, metric, category, metric_kwargs)  # still validate the metric
        out = np.r_[np.asarray(greedy, dtype=np.int64), wide]
    elif candidates.size == 0:
        return np.empty(0, dtype=np.int64), None
    elif strategy == "random":
        out = _select_random(post, candidates, size, rng, category)
    elif strategy == "most_confident_mistake":
        out = _select_mcm(post, candidates, size)
    else:
        out = _select_uncertainty(post, candidates, size)
    return np.asarray(out, dtype=np.int64), change
