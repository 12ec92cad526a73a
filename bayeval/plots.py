"""Matplotlib figures: mixture fit, PR curve with credible band, constraint probability.

Every function draws on ``ax`` (a new figure when None) and returns the Axes; nothing
is shown or saved, so they work with any backend.
"""

from __future__ import annotations

import numpy as np

from . import metrics as M
from .posterior import Posterior, hdi

__all__ = ["mixture_fit", "pr_curve", "threshold_probability"]


def _axes(ax):
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(6, 4))
    return ax


def mixture_fit(post, *, ax=None, bins: int = 50, hdi_prob: float = 0.9, n_grid: int = 300, scale: str = "model"):
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
    top = ax.get_ylim()[1]
    ax.plot(s[vet & (lab == 1)], np.full((vet & (lab == 1)).sum(), -0.03 * top), "|", color="tab:green", ms=10, label="vetted positive")
    ax.plot(s[vet & (lab == 0)], np.full((vet & (lab == 0)).sum(), -0.06 * top), "|", color="tab:red", ms=10, label="vetted negative")
    ax.set_ylim(-0.09 * top, top)
    mapped = scale == "model" and post.transform.name != "identity"
    ax.set_xlabel(f"score ({post.transform.name}-mapped)" if mapped else "score")
    ax.set_ylabel("density")
    ax.set_title(getattr(post, "model", "score mixture"), fontsize=9)
    ax.legend(fontsize=7, loc="upper center")
    return ax


def pr_curve(post: Posterior, *, ax=None, recall=None, hdi_prob: float = 0.9, truth=None, label: str = "posterior", color="tab:blue"):
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
    ax = _axes(ax)
    grid = np.linspace(0, 1, 101) if recall is None else np.asarray(recall, dtype=float)
    par = post.metric("precision_at_recall", recall=grid, category="pooled")
    draws = par.stack(s_=("chain", "draw")).transpose("recall", "s_").values
    band = hdi(draws, hdi_prob, axis=1)
    ax.fill_between(grid, band[:, 0], band[:, 1], color=color, alpha=0.25, label=f"{label} {hdi_prob:.0%} band")
    ax.plot(grid, np.median(draws, axis=1), color=color, lw=1.5, label=f"{label} median")
    if truth is not None:
        true = M.precision_at_recall(np.asarray(truth), post.data.scores, recall=grid)
        ax.plot(grid, true, color="k", lw=1.2, label="true curve")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("recall")
    ax.set_ylabel("precision")
    ax.legend(fontsize=8, loc="lower left")
    return ax


def threshold_probability(recal, *, ax=None, color="tab:blue"):
    """Probability that the constraint holds, against the threshold (SPE Fig. 5B).

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
    ax.step(t, recal.probability.values, where="post", color=color, label=repr(recal).split(":")[0].replace("Recalibration(", ""))
    ax.axvline(recal.threshold, color="k", ls=":", lw=1)
    ax.annotate(
        f"t = {recal.threshold:.3g}\nP = {recal.probability_at_threshold:.2f}",
        (recal.threshold, recal.probability_at_threshold),
        textcoords="offset points",
        xytext=(5, -25),
        fontsize=8,
    )
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("threshold (predict positive where score >= t)")
    ax.set_ylabel("P(constraint holds)")
    ax.legend(fontsize=8)
    return ax
