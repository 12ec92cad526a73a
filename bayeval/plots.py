"""Matplotlib figures: mixture fit, PR curve with credible band, constraint probability,
vetting convergence.

Every function draws on ``ax`` (a new figure when None) and returns the Axes; nothing
is shown or saved, so they work with any backend.
"""

from __future__ import annotations

import math

import numpy as np

from .active.simulate import TIE_TOL
from .core import _validate as V
from .core import metrics as M
from .core._defaults import HDI_PROB
from .core.posterior import Posterior
from .core.summary import hdi

__all__ = ["calibration_curve", "mixture_fit", "pr_curve", "threshold_probability", "vetting_curve"]


def _axes(ax):
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(6, 4))
    return ax


def mixture_fit(post, *, ax=None, bins: int = 50, hdi_prob: float = HDI_PROB, n_grid: int = 300, scale: str = "model"):
    """The fitted score mixture over the score histogram, vetted items marked (SPE Fig. 2A).

    Shows the posterior mean of each class's weighted density and of the mixture, a
    credible band for the mixture, and the vetted items as ticks under the axis
    (positives up, negatives down). A histogram outside the band is the visible sign
    that the families do not fit (see :meth:`SPEPosterior.ppc`).

    Parameters
    ----------
    post : SPEPosterior
    ax : matplotlib Axes, optional
    bins : int
    hdi_prob : float
    n_grid : int
    scale : {"model", "score"}
        Draw on the scale the families describe (the mapped scores, default: the
        shapes are easiest to judge there) or on the original score scale.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> from bayeval.plots import mixture_fit
    >>> callable(mixture_fit)
    True
    """
    if not hasattr(post, "density"):
        raise TypeError("mixture_fit needs a score-mixture posterior (ScoreMixture.fit).")
    ax = _axes(ax)
    s = post.data.scores if scale == "score" else post.transform(post.data.scores)
    dens = post.density(n_grid=n_grid, scale=scale)
    grid = dens["score"].values
    ax.hist(s, bins=bins, density=True, color="0.85", edgecolor="0.6", label=f"scores (N={s.size})")
    flat = {k: dens[k].stack(s_=("chain", "draw")).transpose("score", "s_").values for k in ("negative", "positive", "mixture")}
    band = hdi(flat["mixture"], hdi_prob, axis=1)
    ax.fill_between(grid, band[:, 0], band[:, 1], color="tab:purple", alpha=0.25, label=f"mixture {hdi_prob:.0%} band")
    ax.plot(grid, flat["mixture"].mean(axis=1), color="tab:purple", lw=1.5, label="mixture (mean)")
    ax.plot(grid, flat["negative"].mean(axis=1), color="tab:red", lw=1.2, ls="--", label="negative class")
    ax.plot(grid, flat["positive"].mean(axis=1), color="tab:green", lw=1.2, ls="--", label="positive class")
    vet = post.data.vetted
    lab = post.data.labels
    # the y-range: the histogram's tallest bar, or the curves where they stay near it; a
    # density spike (on the score scale, a logit-mapped family near 0 or 1) is cut, and said
    heights, _ = np.histogram(s, bins=bins, density=True)
    peak = max(float(band[:, 1].max()), float(flat["mixture"].mean(axis=1).max()))
    top = 1.1 * max(float(heights.max()), min(peak, 2.0 * float(heights.max())))
    title = getattr(post, "model", "score mixture")
    if peak > top:
        title += f"\n(y-axis cut at {top:.3g}: the curves reach {peak:.3g})"
    # vetted items as short ticks in a strip under the axis (its height a share of the axes)
    strip = ax.get_xaxis_transform()
    for y_val, row, colour, name in ((1, 0.06, "tab:green", "vetted positive"), (0, 0.025, "tab:red", "vetted negative")):
        pick = vet & (lab == y_val)
        ax.plot(s[pick], np.full(int(pick.sum()), row), "|", color=colour, ms=6, transform=strip, label=name)
    ax.set_ylim(-0.1 * top / 0.9, top)
    mapped = scale == "model" and post.transform.name != "identity"
    ax.set_xlabel(f"score ({post.transform.name}-mapped)" if mapped else "score")
    ax.set_ylabel("density")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="upper center")
    return ax


def pr_curve(post: Posterior, *, ax=None, recall=None, hdi_prob: float = HDI_PROB, truth=None, label: str = "posterior",
             color="tab:blue", category=None):
    """Precision-recall curve with a credible band (SPE Fig. 2C).

    The band is the HDI of the precision at each recall level over the label draws
    (sample performance); the line is the posterior median. With ``truth`` (all true
    labels, when known for a study) the true curve is drawn too.

    Parameters
    ----------
    post : Posterior
    ax : matplotlib Axes, optional
    recall : 1-D array_like, optional
        Recall levels (default 101 levels from 0 to 1).
    hdi_prob : float
    truth : array_like of shape (n_items,), optional
    label, color : str
    category : str, optional
        With categories in the data: draw this category's curve (its items alone).
        Default: the curve of all items pooled over the categories, which the title says.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import numpy as np
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from bayeval import EvalData, Posterior
    >>> from bayeval.plots import pr_curve
    >>> s = np.linspace(0, 1, 30)
    >>> ax = pr_curve(Posterior.from_probabilities(EvalData(s), s, draws=100, random_seed=0))
    >>> ax.get_xlabel()
    'recall'
    """
    if truth is not None:  # checked before anything is drawn
        truth = V.as_label_vector(truth, "truth", allow_nan=False)
        if truth.size != post.data.n_items:
            raise ValueError(f"`truth` has {truth.size} labels but the posterior's data has {post.data.n_items} "
                             "items; give one true label (1/0) per item, in the data's order.")
    keep = _category_items(post.data, category)
    ax = _axes(ax)
    grid = np.linspace(0, 1, 101) if recall is None else np.asarray(recall, dtype=float)
    if category is None:
        par = post.metric("precision_at_recall", recall=grid, category="pooled")
    else:
        par = post.metric("precision_at_recall", recall=grid, category="each").sel(category=category)
    draws = par.stack(s_=("chain", "draw")).transpose("recall", "s_").values
    band = hdi(draws, hdi_prob, axis=1)
    ax.fill_between(grid, band[:, 0], band[:, 1], color=color, alpha=0.25, label=f"{label} {hdi_prob:.0%} band")
    ax.plot(grid, np.median(draws, axis=1), color=color, lw=1.5, label=f"{label} median")
    if truth is not None:
        true = M.precision_at_recall(truth[keep], post.data.scores[keep], recall=grid)
        ax.plot(grid, true, color="k", lw=1.2, label="true curve")
    ax.set_xlim(0, 1)
    # zoom the y-axis to the data (down to the nearest 0.05 below the lowest band or curve)
    low = [band[:, 0]] + ([np.asarray(true, dtype=float)] if truth is not None else [])
    finite = np.concatenate(low)[np.isfinite(np.concatenate(low))]
    y0 = max(0.0, math.floor((float(finite.min()) - 0.02) * 20) / 20) if finite.size else 0.0
    ax.set_ylim(y0, 1.02)
    ax.set_xlabel("recall")
    ax.set_ylabel("precision")
    if post.data.has_categories:
        ax.set_title(f"category {category}" if category is not None
                     else "all categories pooled (category= for one)", fontsize=9)
    ax.legend(fontsize=8, loc="lower left")
    return ax


def _category_items(data, category) -> np.ndarray:
    """The items of ``category`` (every item when None); a clear error for an unknown one."""
    if category is None:
        return np.ones(data.n_items, dtype=bool)
    names = [] if not data.has_categories else [str(c) for c in data.category_names]
    if str(category) not in names:
        raise ValueError(f"Unknown category {category!r}: " + (f"the data's categories are {names}." if names else
                         "the data has no categories; leave `category` out."))
    return data.category_codes == names.index(str(category))


def threshold_probability(recal, *, ax=None, color="tab:blue"):
    """Probability that the constraint holds, against the threshold (SPE Fig. 5B).

    A step curve that reads as the rule ``score >= t`` does: each candidate threshold's
    probability is drawn from the candidate below it up to that candidate, since where the
    candidates are the distinct scores every ``t`` in between flags the same items as the
    upper one (the candidates are marked with dots where there are 50 or fewer). A black
    dot marks the recommended threshold; the note giving it and its probability sits where
    it covers no part of the curve.

    Parameters
    ----------
    recal : Recalibration
        From :func:`bayeval.recalibrate`.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> from bayeval.plots import threshold_probability
    >>> callable(threshold_probability)
    True
    """
    ax = _axes(ax)
    t = recal.probability["threshold"].values
    p = recal.probability.values
    # "score >= t" flags, for every t between two candidates, the items of the upper one: the
    # value holds from the candidate below up to each candidate (steps-pre; steps-post read the
    # lower one's). Marks at the candidates where they are few enough to be seen apart.
    (curve,) = ax.step(t, p, where="pre", color=color, marker="o" if t.size <= 50 else None, ms=3,
                       label=repr(recal).split(":")[0].replace("Recalibration(", ""))
    ax.axvline(recal.threshold, color="k", ls=":", lw=1)
    p_at = float(recal.probability_at_threshold)
    ax.plot([recal.threshold], [p_at], "o", color="k", ms=4)
    eligible = recal.eligible.values
    if not eligible.all():  # thresholds that flag fewer than min_flagged items: never recommended
        first = t[~eligible].min()
        # in the legend only where the band can be seen (1% of the axis or more)
        seen = t.max() - first >= 0.01 * (t.max() - t.min())
        ax.axvspan(first, t.max(), color="0.85", lw=0, zorder=0,
                   label=f"flags < {recal.min_flagged} items (not recommended)" if seen else None)
    if recal.prob is not None:
        ax.axhline(recal.prob, color="tab:red", ls="--", lw=0.8, label=f"required {recal.prob:g}")
    ax.set_ylim(-0.02, 1.02)
    note = ax.text(0.02, 0.98, f"t = {recal.threshold_text}\nP = {p_at:.2f}" + (
        "" if recal.met and not (recal.prob is None and recal.no_draw_meets) else "\n(does not meet it)"),
        transform=ax.transAxes, fontsize=8)
    # the note where it covers no data: a corner or side of the axes clear of the curve (and of
    # the threshold's and the required probability's lines where possible), else above the axes
    stepped = np.column_stack([np.repeat(t, 2)[:-1], np.repeat(p, 2)[1:]]) if t.size else np.empty((0, 2))
    stepped = ax.transData.transform(stepped)
    others = [line.get_transform().transform(line.get_xydata()) for line in ax.lines if line is not curve]
    if not _place_clear(note, [stepped, *others]) and not _place_clear(note, [stepped]):
        note.set_text(note.get_text().replace("\n", ", ", 1).replace("\n", " "))
        note.set_position((0.5, 1.01))
        note.set_ha("center")
        note.set_va("bottom")
    ax.set_xlabel("threshold (predict positive where score >= t)")
    ax.set_ylabel("P(constraint holds)")
    ax.legend(fontsize=8)
    return ax


#: Where :func:`threshold_probability` tries its note, in axes fractions: (x, y, ha, va).
_NOTE_SPOTS = [(0.02, 0.98, "left", "top"), (0.98, 0.02, "right", "bottom"), (0.98, 0.98, "right", "top"),
               (0.02, 0.02, "left", "bottom"), (0.5, 0.98, "center", "top"), (0.5, 0.02, "center", "bottom"),
               (0.02, 0.5, "left", "center"), (0.98, 0.5, "right", "center")]


def _place_clear(text, polylines) -> bool:
    """Move ``text`` (placed in axes fractions) to the first of :data:`_NOTE_SPOTS` where its
    box, widened by a fifth, crosses none of ``polylines`` (display coordinates); False if none."""
    from matplotlib.path import Path

    paths = [Path(xy) for xy in polylines if len(xy)]
    for x, y, ha, va in _NOTE_SPOTS:
        text.set_position((x, y))
        text.set_ha(ha)
        text.set_va(va)
        box = text.get_window_extent()
        box = box.expanded(1.2, 1.2) if box.width > 0 else box
        if not any(path.intersects_bbox(box, filled=False) or
                   (len(path.vertices) == 1 and box.contains(*path.vertices[0])) for path in paths):
            return True
    return False


_ESTIMATOR_STYLE = {"vetted_only": ":", "naive": "--", "learned": "-"}


def vetting_curve(ds, *, ax=None, error: str = "abs_error", estimators=None, band: bool = True):
    """Estimate error against the fraction vetted, per strategy and estimator
    (active testing's Figs. 5-8), from :func:`bayeval.active.simulate`.

    Parameters
    ----------
    ds : xarray.Dataset
        The result of :func:`bayeval.active.simulate`.
    ax : matplotlib Axes, optional
    error : {"abs_error", "category_abs_error", "misranked"}
        ``"abs_error"``: ``|estimate - truth|`` of the headline value (mean over
        categories); ``"category_abs_error"``: the mean over categories of each
        category's absolute error; ``"misranked"``: how often two systems are ordered
        wrongly (needs ``other_scores`` in the simulation; refused where their true
        values tie, as there is then no order to get wrong).
    estimators : str or sequence of str, optional
        Subset of ``("vetted_only", "naive", "learned")``; all by default.
    band : bool
        Shade +-1 standard error of the mean over trials.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import numpy as np, matplotlib
    >>> matplotlib.use("Agg")
    >>> from bayeval import EvalData, Posterior
    >>> from bayeval.active import simulate
    >>> from bayeval.plots import vetting_curve
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.integers(0, 2, 30)
    >>> data = EvalData(rng.random(30), noisy_labels=truth)
    >>> model = lambda d: Posterior.from_probabilities(d, np.full(30, 0.5), draws=50, random_seed=0)
    >>> ds = simulate(data, truth, model, k=5, budget=10, batch_size=5, trials=2,
    ...               strategies=("random",), random_seed=0)
    >>> vetting_curve(ds).get_xlabel()
    'fraction of candidates vetted'
    """
    if error not in ("abs_error", "category_abs_error", "misranked"):
        raise ValueError(f"`error` must be 'abs_error', 'category_abs_error' or 'misranked', got {error!r}.")
    if error not in ds:
        raise ValueError(
            f"The simulation has no {error!r}: 'category_abs_error' needs categories, 'misranked' "
            "needs other_scores=... in simulate()."
        )
    if error == "misranked" and abs(float(ds["true_value"]) - float(ds["true_value_other"])) <= TIE_TOL:
        raise ValueError(
            f"The two systems' true values tie ({float(ds['true_value']):g} and {float(ds['true_value_other']):g}): "
            "no order is right or wrong, so 'misranked' is NaN throughout and there is nothing to draw. Draw "
            "error='abs_error' instead."
        )
    known = [str(e) for e in ds["estimator"].values]
    if estimators is None:
        ests = known
    else:
        ests = [estimators] if isinstance(estimators, str) else list(estimators)
        unknown = [e for e in ests if e not in known]
        if unknown:
            raise ValueError(
                f"`estimators` must be among the simulation's estimators {known}, got "
                f"{', '.join(map(repr, unknown))}. Leave `estimators` out to draw them all."
            )
    ax = _axes(ax)
    err = ds[error]
    if error == "category_abs_error":
        err = err.mean("category", skipna=True)
    err = err.astype(float)
    colors = {s: f"C{i}" for i, s in enumerate(ds["strategy"].values)}
    for strategy in ds["strategy"].values:
        x = ds["fraction_vetted"].sel(strategy=strategy).mean("trial").values
        for est in ests:
            e = err.sel(strategy=strategy, estimator=est)
            m = e.mean("trial", skipna=True).values
            if np.all(np.isnan(m)):
                continue
            ax.plot(x, m, ls=_ESTIMATOR_STYLE.get(str(est), "-"), color=colors[strategy], marker="o", ms=3,
                    label=f"{strategy} + {est}")
            if band and ds.sizes["trial"] > 1:
                se = e.std("trial", skipna=True).values / np.sqrt(ds.sizes["trial"])
                ax.fill_between(x, m - se, m + se, color=colors[strategy], alpha=0.12)
    ax.set_xlabel("fraction of candidates vetted")
    ax.set_ylabel({"abs_error": "|estimate - truth|", "category_abs_error": "mean |error| over categories",
                   "misranked": "fraction of trials misranked"}[error])
    ax.set_title(f"{ds.attrs.get('metric', '')} {ds.attrs.get('metric_kwargs', '')}", fontsize=9)
    ax.legend(fontsize=7)
    return ax


def calibration_curve(post, *, ax=None, hdi_prob: float = HDI_PROB, n_grid: int = 200, truth=None, bins: int = 10,
                      color="tab:blue", category=None):
    """The posterior calibration curve ``P(positive | score)`` with its band and the vetted labels.

    For a posterior of :func:`bayeval.fit` or :class:`bayeval.models.Calibration`: the
    posterior mean and ``hdi_prob`` band of the curve over the pool's score range, the
    vetted labels as ticks at 0 and 1, and, with ``truth`` (every item's true label, when
    known), the observed share of positives in bins: ``bins`` score-quantile bins split
    further at ``bins`` quantiles of the positives' scores (so that rare positives, all
    near the top of the ranking, still get dots where the curve rises), each bin kept to
    at least 5 items.

    With categories in the data the curve is the shared one (a category at the centre of
    the pooling) and the labels and true shares are those of all categories, which the
    title says; ``category=`` draws one category's curve with its items alone (for a
    posterior whose curve is pooled across categories).

    Examples
    --------
    >>> import numpy as np
    >>> import bayeval as be
    >>> from bayeval.plots import calibration_curve
    >>> rng = np.random.default_rng(0)
    >>> p = rng.beta(1, 3, 300); y = np.full(300, np.nan); y[:30] = rng.random(30) < p[:30]
    >>> ax = calibration_curve(be.fit(be.EvalData(p, y), random_seed=0, draws=200))
    >>> ax.get_ylabel()
    'P(positive | score)'
    """
    if not getattr(post, "has_curves", False):
        raise TypeError(
            f"calibration_curve needs a posterior with a calibration curve (bayeval.fit or Calibration), "
            f"got {type(post).__name__}; for a score mixture use mixture_fit."
        )
    d = post.data
    if truth is not None:  # checked before anything is drawn
        truth = V.as_label_vector(truth, "truth", allow_nan=False)
        if truth.size != d.n_items:
            raise ValueError(f"`truth` has {truth.size} labels but the posterior's data has {d.n_items} items; "
                             "give one true label (1/0) per item, in the data's order.")
        bins = V.as_positive_int(bins, "bins")
    keep = _category_items(d, category)
    ax = _axes(ax)
    c = post.curve(hdi_prob=hdi_prob, n_grid=n_grid) if category is None else \
        post.curve(hdi_prob=hdi_prob, n_grid=n_grid, category=category)
    x = c["score"].values
    ax.fill_between(x, c["lower"].values, c["upper"].values, color=color, alpha=0.25,
                    label=f"{hdi_prob:.0%} band")
    ax.plot(x, c["mean"].values, color=color, label="posterior mean")
    vet = d.vetted & keep
    vs, vy = d.scores[vet], d.labels[vet]
    ax.plot(vs, np.where(vy == 1, 1.0, 0.0), "|", color="k", ms=10, alpha=0.6, label=f"vetted labels ({vs.size})")
    if truth is not None:
        mid, share = _truth_bins(d.scores[keep], np.asarray(truth, dtype=float)[keep], bins)
        ax.plot(mid, share, "o", color="tab:red", ms=4, label="true share (bins by score and by positives)")
    ax.set_xlim(x.min(), x.max())
    ax.set_ylim(-0.04, 1.04)
    ax.set_xlabel("score")
    ax.set_ylabel("P(positive | score)")
    if d.has_categories:
        ax.set_title(f"category {category}" if category is not None else
                     "shared curve; labels of all categories pooled (category= for one)", fontsize=9)
    ax.legend(fontsize=7, loc="upper left")
    return ax


def _truth_bins(scores, truth, bins: int, min_items: int = 5):
    """Score bins for the true share of positives: ``bins`` quantile bins of the scores
    split further at ``bins`` quantiles of the positives' scores, adjacent bins merged
    until each holds at least ``min_items`` items.

    Returns the mean score and the share of positives of each bin.

    Examples
    --------
    >>> import numpy as np
    >>> s = np.linspace(0, 1, 1000); y = (s > 0.98).astype(float)
    >>> mid, share = _truth_bins(s, y, 10)
    >>> bool(share.max() == 1.0)   # the top bins reach the positives
    True
    """
    s = np.asarray(scores, dtype=float)
    t = np.asarray(truth, dtype=float)
    q = np.linspace(0, 1, bins + 1)
    cuts = np.quantile(s, q)
    if np.any(t == 1):
        cuts = np.concatenate([cuts, np.quantile(s[t == 1], q[1:-1])])
    cuts = np.unique(cuts)
    # right-closed bins (lo, hi], the first including the minimum; a bin under min_items
    # items merges with the next, and what is left at the top joins the last bin
    order = np.sort(s)
    kept, base = [cuts[0]], 0
    for hi in cuts[1:]:
        n_le = int(np.searchsorted(order, hi, side="right"))
        if n_le - base >= min_items:
            kept.append(hi)
            base = n_le
    if kept[-1] < cuts[-1]:
        if len(kept) > 1:
            kept[-1] = cuts[-1]
        else:
            kept.append(cuts[-1])
    edges = np.asarray(kept)
    if edges.size < 2:
        return np.array([s.mean()]), np.array([t.mean()])
    idx = np.clip(np.searchsorted(edges, s, side="left") - 1, 0, edges.size - 2)
    mid = np.array([s[idx == b].mean() for b in range(edges.size - 1) if np.any(idx == b)])
    share = np.array([t[idx == b].mean() for b in range(edges.size - 1) if np.any(idx == b)])
    return mid, share
