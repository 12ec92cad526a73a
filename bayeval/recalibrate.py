"""Thresholds under precision/recall constraints (SPE section 4.4)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr

from .core._defaults import HDI_PROB, hdi_columns
from .core import _validate as V
from .core.posterior import Posterior
from .core.evaluate import default_thresholds

__all__ = ["recalibrate", "Recalibration"]


@dataclass(frozen=True)
class Recalibration:
    """The probability that a precision/recall constraint holds, per threshold.

    Attributes
    ----------
    probability : xarray.DataArray
        ``P(precision(t) >= min_precision and recall(t) >= min_recall)`` over the
        posterior, dim ``threshold`` (rule: predict positive where ``score >= t``).
    threshold : float
        The recommended threshold. With ``prob=None``: the highest probability; among
        equals, the lowest threshold (highest recall). With ``prob``: among the
        thresholds whose probability is at least ``prob``, the one with the highest
        expected recall (a precision floor) or the highest expected precision (a recall
        floor only); when none qualifies, the threshold with the highest probability
        (``met`` is then False).
    curve : xarray.DataArray
        The posterior precision/recall draws at each threshold,
        dims ``(chain, draw, threshold, curve)``.
    min_precision, min_recall : float or None
    prob : float or None
        The probability the constraint must hold with (None: the most probable rule).
    met : bool
        Whether the recommended threshold meets ``prob`` (always True with
        ``prob=None``).

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import EvalData, Posterior, recalibrate
    >>> s = np.linspace(0, 1, 50)
    >>> post = Posterior.from_probabilities(EvalData(s), s, draws=300, random_seed=0)
    >>> rec = recalibrate(post, min_precision=0.8, min_recall=0.5)
    >>> rec.probability.dims
    ('threshold',)
    >>> bool(rec.probability.sel(threshold=rec.threshold) == rec.probability.max())
    True
    """

    probability: xr.DataArray
    threshold: float
    curve: xr.DataArray
    min_precision: float | None
    min_recall: float | None
    prob: float | None = None
    met: bool = True

    @property
    def probability_at_threshold(self) -> float:
        """Probability that the constraint holds at the recommended threshold."""
        return float(self.probability.sel(threshold=self.threshold))

    def table(self, hdi_prob: float = HDI_PROB) -> pd.DataFrame:
        """Per threshold: the constraint probability and posterior precision/recall.

        Columns ``p_constraint`` and, for ``precision`` and ``recall``, the columns of
        :meth:`bayeval.Posterior.summary` prefixed by the quantity: ``precision_mean``,
        ``precision_sd``, ``precision_hdi_5%``, ``precision_hdi_95%`` (for the default
        ``hdi_prob``), and the same for ``recall``.
        """
        from .core.summary import hdi

        hdi_prob = V.as_probability(hdi_prob, "hdi_prob", open_interval=True)
        lo, hi = hdi_columns(hdi_prob)
        rows = {"threshold": self.probability["threshold"].values, "p_constraint": self.probability.values}
        for q in ("precision", "recall"):
            draws = self.curve.sel(curve=q).stack(s=("chain", "draw")).transpose("threshold", "s").values
            rows[f"{q}_mean"] = draws.mean(axis=1)
            rows[f"{q}_sd"] = draws.std(axis=1, ddof=1) if draws.shape[1] > 1 else np.nan
            b = hdi(draws, hdi_prob, axis=1)
            rows[f"{q}_{lo}"], rows[f"{q}_{hi}"] = b[:, 0], b[:, 1]
        return pd.DataFrame(rows).set_index("threshold")

    def plot(self, ax=None, **kwargs):
        """The constraint-probability curve with the recommended threshold (Figure 5B)."""
        from .plots import threshold_probability

        return threshold_probability(self, ax=ax, **kwargs)

    def __repr__(self) -> str:
        cons = []
        if self.min_precision is not None:
            cons.append(f"precision >= {self.min_precision:g}")
        if self.min_recall is not None:
            cons.append(f"recall >= {self.min_recall:g}")
        text = (
            f"Recalibration({' and '.join(cons)}: threshold {self.threshold:.4g} "
            f"holds with probability {self.probability_at_threshold:.3f}"
        )
        if self.prob is not None and not self.met:
            text += f"; no threshold meets probability {self.prob:g}, this is the best available"
        return text + ")"


def recalibrate(
    post: Posterior,
    *,
    min_precision: float | None = None,
    min_recall: float | None = None,
    prob: float | None = None,
    thresholds=None,
) -> Recalibration:
    """For each threshold, the probability that the precision/recall constraint holds.

    Uses the posterior over the labels of this evaluation set (sample performance):
    for every label draw, precision and recall of the rule ``score >= t`` are computed,
    and the probability is the fraction of draws meeting both constraints (the SPE
    paper's ``E[C(t)]``, with ``>=``).

    Parameters
    ----------
    post : Posterior
    min_precision, min_recall : float in [0, 1], optional
        At least one is required.
    prob : float in (0, 1), optional
        The rule for a model card: "precision >= min_precision with probability at least
        ``prob``". Among the thresholds that meet it, the one with the highest expected
        recall is recommended (with only ``min_recall``: the highest expected
        precision). When none meets it, ``met`` is False and the threshold with the
        highest probability is returned as the best available. Default None: the
        threshold with the highest probability (the SPE paper's rule).
    thresholds : 1-D array_like, optional
        Candidate thresholds; default the distinct scores, or, when there are more
        than 201, 201 evenly spaced score quantiles together with the scores at 201
        geometrically spaced ranks from the top (so that rare positives, whose useful
        thresholds all lie among the top 1-2% of scores, get dozens of candidates).

    Returns
    -------
    Recalibration

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import EvalData, Posterior, recalibrate
    >>> s = np.linspace(0, 1, 40)
    >>> post = Posterior.from_probabilities(EvalData(s), s**2, draws=200, random_seed=1)
    >>> r = recalibrate(post, min_precision=0.7, min_recall=0.5)
    >>> float(r.probability.max()) <= 1.0
    True
    >>> r = recalibrate(post, min_precision=0.5, prob=0.9)
    >>> bool(r.probability.sel(threshold=r.threshold) >= 0.9) == r.met
    True
    """
    if not isinstance(post, Posterior):
        raise TypeError(f"`post` must be a bayeval Posterior, got {type(post).__name__}.")
    if min_precision is None and min_recall is None:
        raise ValueError("Give min_precision=, min_recall= or both: there is no constraint to check.")
    p_min = None if min_precision is None else V.as_probability(min_precision, "min_precision")
    r_min = None if min_recall is None else V.as_probability(min_recall, "min_recall")
    level = None if prob is None else V.as_probability(prob, "prob", open_interval=True)
    t = default_thresholds(post.data.scores) if thresholds is None else V.as_grid(thresholds, "thresholds")
    t = np.unique(t)
    curve = post.metric("precision_recall_curve", thresholds=t, category="pooled")
    ok = xr.ones_like(curve.sel(curve="precision"), dtype=bool)
    if p_min is not None:
        ok &= curve.sel(curve="precision") >= p_min - 1e-12
    if r_min is not None:
        ok &= curve.sel(curve="recall") >= r_min - 1e-12
    p_c = ok.mean(("chain", "draw")).drop_vars("curve", errors="ignore").rename("p_constraint")
    best = float(p_c.max())
    # ties (within one draw's weight) -> lowest threshold, i.e. highest recall
    tol = 0.5 / (post.n_chains * post.n_draws)
    t_vals = p_c["threshold"].values
    choice = float(t_vals[np.flatnonzero(p_c.values >= best - tol)[0]])
    met = True
    if level is not None:
        feasible = np.flatnonzero(p_c.values >= level - 1e-12)
        if feasible.size:
            goal = "recall" if p_min is not None else "precision"
            expected = curve.sel(curve=goal).mean(("chain", "draw")).values
            pick = feasible[np.argmax(np.nan_to_num(expected[feasible], nan=-1.0))]
            choice = float(t_vals[pick])
        else:
            met = False
    return Recalibration(p_c, choice, curve, p_min, r_min, level, met)
