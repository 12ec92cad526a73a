"""Figures and tables for the human-ranking percentile Q.

Two views:

- :func:`plot_log_prob_distribution`: the distribution of human-ranking
  log-probabilities with a machine ranking's position marked (the paper's
  Figure 2 view), computed with the same machinery as
  :func:`bayeval.rankings.percentile.ranking_percentile`;
- :func:`percentile_table` / :func:`plot_percentile_table`: Q per attribute and
  system (the paper's Table 1 view), with intervals where Q comes as draws.

Without ``ax``, a function makes its figure with :func:`matplotlib.pyplot.figure`, as
:mod:`bayeval.plots` does, so Jupyter shows it; nothing is shown or saved (no
``pyplot.show``), so the functions work with any backend, Agg included. Close a figure
you no longer need with ``plt.close(fig)``.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from bayeval.core import _validate as V
from bayeval.core._defaults import HDI_PROB, hdi_columns
from bayeval.rankings.percentile import (
    q_stats,
    ranking_log_prob_distribution,
    ranking_log_probability,
    ranking_percentile,
)

__all__ = ["percentile_table", "plot_log_prob_distribution", "plot_percentile_table"]


def _new_axes(ax, figsize):
    if ax is not None:
        return ax.figure, ax
    import matplotlib.pyplot as plt  # a pyplot figure, so that Jupyter displays it

    fig = plt.figure(figsize=figsize, layout="constrained")
    return fig, fig.add_subplot()


def plot_log_prob_distribution(
    theta, ranking=None, *, bins=80, tol=1e-4, epsilon=0.1, ax=None, label="machine"
):
    """Distribution of human-ranking log-probabilities, machine ranking marked.

    Bars show the probability that a human ranking's log-probability falls in
    each bin (most probable rankings on the right). The shaded (blue) part holds
    the rankings strictly more probable than the machine's; its mass is Q, the
    value in the legend (up to the numerical bound in the title). The bin that holds the machine ranking's own
    log-probability is shaded only in part (its lower part, up to Q), since the
    rankings in it may be more or less probable than the machine's. The dotted
    line marks the level below which the least probable ``epsilon`` of human
    rankings lie (the ``1 - epsilon`` percentile). A machine ranking far less
    probable than the bulk of human rankings is drawn dashed at the left end,
    its log-probability given in the legend.

    Parameters
    ----------
    theta : array-like, shape (n_pairs,)
        Probability that a human picks the first item of each pair.
    ranking : array-like of 0/1, shape (n_pairs,), optional
        Machine ranking to mark.
    bins : int, default 80
        Number of bins.
    tol : float, default 1e-4
        Numerical accuracy of the CDF values (see :func:`ranking_percentile`).
    epsilon : float, default 0.1
        Level of the indistinguishability threshold drawn.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; a new pyplot figure is made otherwise.
    label : str, default "machine"
        Legend label of the ranking.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.rankings.plots import plot_log_prob_distribution
    >>> rng = np.random.default_rng(0)
    >>> theta = rng.uniform(size=300)
    >>> fig = plot_log_prob_distribution(theta, (theta > 0.4).astype(int), tol=1e-3)
    >>> fig.axes[0].get_xlabel()
    'log-probability of a human ranking'
    """
    epsilon = V.as_positive_number(epsilon, "epsilon", upper=1.0)
    dist = ranking_log_prob_distribution(theta, bins=bins, tol=tol)
    fig, ax = _new_axes(ax, (7, 3.6))
    edges = dist.edges
    centres = 0.5 * (edges[:-1] + edges[1:])
    widths = edges[:-1] - edges[1:]
    cum = np.cumsum(dist.mass)  # mass from the most probable end
    thr_idx = int(np.searchsorted(cum, 1 - epsilon))
    shaded = np.zeros_like(dist.mass)
    title = f"{dist.method}, bound {dist.bound:.1g}"
    lo, hi = edges[-1], edges[0]
    if ranking is not None:
        lp = float(ranking_log_probability(theta, ranking))
        res = ranking_percentile(theta, ranking, tol=tol, return_bound=True)
        q = float(res.q)
        if np.isfinite(lp):
            # Q of the most probable bins, in order: the bin holding the ranking's own
            # log-probability is shaded only up to Q, so the shaded mass is Q
            shaded = np.clip(q - np.r_[0.0, cum[:-1]], 0.0, dist.mass)
            text = f"{label}: Q = {q:.3f}"
            far = edges[-1] - 0.5 * (hi - lo)  # further out, the bars would be squeezed
            if lp < far:  # drawn dashed at the left end, its value in the legend
                text += f" (log-probability {lp:.4g}, off scale)"
                lp = far
            ax.axvline(lp, color="C3", lw=2, ls="-" if lp != far else "--", label=text)
            lo = min(lo, lp)
        else:
            ax.plot([], [], color="C3", lw=2, label=f"{label}: impossible for humans (Q = 1)")
    ax.bar(centres, dist.mass - shaded, bottom=shaded, width=widths, color="0.75", align="center")
    if shaded.any():
        ax.bar(centres, shaded, width=widths, color="C0", align="center",
               label="more probable human rankings (mass Q)")
    pad = 0.03 * (hi - lo)
    if thr_idx < edges.size - 1:
        ax.axvline(
            edges[thr_idx + 1], color="k", ls=":", lw=1, label=f"{1 - epsilon:.0%} of human mass"
        )
    ax.set_xlim(lo - pad, hi + pad)  # padded: a line on the outermost edge stays visible
    ax.set_xlabel("log-probability of a human ranking")
    ax.set_ylabel("probability per bin")
    ax.set_title(f"Human rankings of {np.size(theta)} pairs, {title}", fontsize=10)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper left", fontsize=8)
    return fig


def _as_q_array(q):
    if isinstance(q, xr.DataArray):
        return q
    if isinstance(q, dict):
        if not q:
            raise ValueError("q dict is empty; pass {(attribute, system): DataArray, ...}.")
        keys = list(q)
        if not all(isinstance(k, tuple) and len(k) == 2 for k in keys):
            raise ValueError(
                f"q dict keys must be (attribute, system) tuples; got e.g. {keys[0]!r}."
            )
        attrs = list(dict.fromkeys(k[0] for k in keys))
        systems = list(dict.fromkeys(k[1] for k in keys))
        first = xr.DataArray(q[keys[0]])
        out = xr.DataArray(
            np.full((len(attrs), len(systems)) + first.shape, np.nan),
            dims=("attribute", "system") + first.dims,
            coords={"attribute": attrs, "system": systems},
        )
        for (a, s), v in q.items():
            v = xr.DataArray(v)
            if v.dims != first.dims or v.shape != first.shape:
                raise ValueError(
                    f"all entries of q must share dims/shape {first.dims}{first.shape}; "
                    f"({a!r}, {s!r}) has {v.dims}{v.shape}."
                )
            out.loc[{"attribute": a, "system": s}] = v.values
        return out.transpose(..., "attribute", "system")
    raise TypeError(
        "q must be an xarray.DataArray with dims (chain, draw, attribute, system) or a "
        f"dict {{(attribute, system): DataArray}}; got {type(q).__name__}."
    )


def percentile_table(q, *, hdi_prob=HDI_PROB, epsilon=0.1, wide=True, percent=True):
    """Table of Q per attribute and system, with intervals where Q has draws (Table 1 view).

    Parameters
    ----------
    q : xarray.DataArray or dict
        Q per attribute and system, dims ``(attribute, system)``: point values
        (e.g. :meth:`RankingPosterior.percentile` of a dict of systems,
        concatenated over attributes, or :func:`ranking_percentile` at point
        estimates), or draws with dims ``(chain, draw, attribute, system)`` (a
        bootstrap of the votes, say), summarized with an interval; or a dict
        ``{(attribute, system): DataArray}`` of either. Point values give the
        verdict (1.0 / 0.0) in ``p_indistinguishable``.
    hdi_prob : float, default 0.9
        Mass of the highest-density interval.
    epsilon : float, default 0.1
        ``p_indistinguishable = P(Q <= 1 - epsilon)``; the paper's Table 1 uses
        the 90 % threshold, ``epsilon = 0.1``.
    wide : bool, default True
        True: attributes as rows, systems as columns, cells formatted as
        ``"mean [low, high]"``. False: one row per (attribute, system) with the
        numeric columns ``mean``, ``sd``, ``hdi_5%``, ``hdi_95%`` (for the
        default ``hdi_prob``; named as in :meth:`bayeval.Posterior.summary`),
        ``p_indistinguishable``.
    percent : bool, default True
        Show Q in percent in the wide table.

    Returns
    -------
    pandas.DataFrame
        ``attrs["undefined"]`` maps each ``(attribute, system)`` with draws where
        Q is undefined (NaN, e.g. a system missing from a dict) to the share of
        such draws; its row summarizes the other draws, as
        :meth:`bayeval.Posterior.summary` does (all NaN where no draw is defined).

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> from bayeval.rankings.plots import percentile_table
    >>> rng = np.random.default_rng(0)
    >>> q = xr.DataArray(rng.beta(2, 5, size=(2, 50, 2, 2)),
    ...                  dims=("chain", "draw", "attribute", "system"),
    ...                  coords={"attribute": ["aged", "wet"], "system": ["A", "B"]})
    >>> percentile_table(q).shape
    (2, 2)
    """
    hdi_prob = V.as_positive_number(hdi_prob, "hdi_prob", upper=1.0)
    epsilon = V.as_positive_number(epsilon, "epsilon", upper=1.0)
    q = _as_q_array(q)
    missing = {"attribute", "system"} - set(q.dims)
    if missing:
        raise ValueError(f"q needs dims 'attribute' and 'system'; missing {sorted(missing)}.")
    sample = {"chain", "draw"} <= set(q.dims)
    if sample:
        stats = q_stats(q, hdi_prob=hdi_prob, epsilon=epsilon)
    else:
        defined = np.isfinite(q)
        stats = xr.Dataset({"mean": q.where(defined),
                            "p_indistinguishable": (q <= 1 - epsilon).where(defined),
                            "undefined": (~defined).astype(float)})
    long = stats.to_dataframe().reset_index().set_index(["attribute", "system"])
    # as in Posterior.summary: each row summarizes the draws where Q is defined; the
    # share of the others, where there are any, goes in attrs["undefined"]
    share = long["undefined"]
    undefined = {key: float(v) for key, v in share[share > 0].items()}
    long = long[[c for c in stats.data_vars if c != "undefined"]]
    if not wide:
        long.attrs.update(hdi_prob=hdi_prob, epsilon=epsilon, undefined=undefined)
        return long
    scale = 100.0 if percent else 1.0
    fmt = "{:.1f}" if percent else "{:.3f}"

    lo, hi = hdi_columns(hdi_prob)

    def cell(row):
        text = fmt.format(scale * row["mean"])
        if sample:
            text += f" [{fmt.format(scale * row[lo])}, {fmt.format(scale * row[hi])}]"
        return text

    table = long.apply(cell, axis=1).unstack("system")
    table = table.reindex(index=q["attribute"].values, columns=q["system"].values)
    table.attrs.update(hdi_prob=hdi_prob, epsilon=epsilon, percent=percent, undefined=undefined)
    return table


def plot_percentile_table(q, *, hdi_prob=HDI_PROB, epsilon=0.1, ax=None):
    """Dot-and-interval chart of Q per attribute (rows) and system (colours).

    The legend of the systems sits outside the axes, on the right, so that it
    covers no point or interval.

    Parameters
    ----------
    q : xarray.DataArray or dict
        As in :func:`percentile_table` (draws needed for intervals).
    hdi_prob : float, default 0.9
        Mass of the intervals drawn.
    epsilon : float, default 0.1
        A vertical line marks ``1 - epsilon``; beyond it a ranking is
        distinguishable from human ones.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; a new pyplot figure is made otherwise.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> from bayeval.rankings.plots import plot_percentile_table
    >>> q = xr.DataArray(np.random.default_rng(1).beta(2, 5, size=(2, 40, 3, 2)),
    ...                  dims=("chain", "draw", "attribute", "system"),
    ...                  coords={"attribute": ["a", "b", "c"], "system": ["X", "Y"]})
    >>> len(plot_percentile_table(q).axes)
    1
    """
    long = percentile_table(q, hdi_prob=hdi_prob, epsilon=epsilon, wide=False)
    attrs = list(dict.fromkeys(long.index.get_level_values("attribute")))
    systems = list(dict.fromkeys(long.index.get_level_values("system")))
    fig, ax = _new_axes(ax, (7, 0.35 * len(attrs) + 1.5))
    offsets = np.linspace(-0.3, 0.3, len(systems)) if len(systems) > 1 else np.zeros(1)
    for j, s in enumerate(systems):
        sub = long.xs(s, level="system").reindex(attrs)
        y = np.arange(len(attrs)) + offsets[j]
        lo, hi = hdi_columns(hdi_prob)
        if lo in sub:
            ax.hlines(y, sub[lo], sub[hi], color=f"C{j}", lw=2)
        ax.plot(sub["mean"], y, "o", color=f"C{j}", label=str(s))
    ax.axvline(1 - epsilon, color="k", ls=":", lw=1)
    ax.set_yticks(np.arange(len(attrs)), [str(a) for a in attrs])
    ax.invert_yaxis()
    ax.set_xlim(-0.02, 1.02)
    has_draws = hdi_columns(hdi_prob)[0] in long
    ax.set_xlabel(f"Q (mean, {hdi_prob:.0%} HDI of its draws); dotted: 1 - epsilon" if has_draws
                  else "Q; dotted: 1 - epsilon")
    # outside the axes, on the right: inside, it would cover the points near Q = 1
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
              title="system", title_fontsize=8)
    return fig
