"""Thresholds under precision/recall constraints (SPE section 4.4)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, Decimal

import numpy as np
import pandas as pd
import xarray as xr

from .core import _validate as V
from .core._defaults import HDI_PROB, hdi_columns
from .core.evaluate import default_thresholds
from .core.posterior import Posterior

__all__ = ["recalibrate", "Recalibration", "default_min_flagged", "threshold_text", "probability_text"]


@dataclass(frozen=True)
class Recalibration:
    """The probability that a precision/recall constraint holds, per threshold.

    Attributes
    ----------
    probability : xarray.DataArray
        ``P(precision(t) >= min_precision and recall(t) >= min_recall)`` over the
        posterior, dim ``threshold`` (rule: predict positive where ``score >= t``).
    threshold : float
        The recommended threshold, always one that flags at least ``min_flagged``
        items. With ``prob=None``: the highest probability; among equals, the lowest
        threshold (highest recall), unless every probability is 0 (no posterior draw
        meets the constraint anywhere: :attr:`no_draw_meets`), when it is the one closest
        to meeting it, as below. With ``prob``: among the thresholds whose
        probability is at least ``prob``, the one with the highest expected recall (a
        precision floor) or the highest expected precision (a recall floor only); when
        none qualifies, the threshold with the highest probability (``met`` is then
        False), and among equals the one closest to meeting the constraint (the highest
        posterior mean of ``min(precision - min_precision, recall - min_recall)``): with
        a precision floor no threshold can reach, the highest expected precision, not
        the threshold that flags every item.
    curve : xarray.DataArray
        The posterior precision/recall draws at each threshold,
        dims ``(chain, draw, threshold, curve)``.
    min_precision, min_recall : float or None
    prob : float or None
        The probability the constraint must hold with (None: the most probable rule).
    met : bool
        Whether the recommended threshold meets ``prob`` while flagging at least
        ``min_flagged`` items. With ``prob=None``: whether any posterior draw meets the
        constraint at some threshold that flags that many (False exactly when
        :attr:`no_draw_meets`). When False, no threshold meets it: ``threshold`` is the
        best available one, and :attr:`verdict` says so in words.
    n_flagged : xarray.DataArray
        How many items each threshold flags (``score >= t``), dim ``threshold``. On
        this evaluation set the count is exact, not an estimate.
    min_flagged : int
        Thresholds that flag fewer items are never recommended (0: any threshold).
    n_items : int
        The number of items in the evaluation set.
    all_vetted : bool
        Whether every item is vetted (the values are then exact, and more labels cannot
        change the verdict).
    scores : numpy.ndarray or None
        The evaluation set's scores, with which :attr:`threshold_text` writes the
        threshold so that it flags the same items (None for one built by hand).
    caveats : tuple of str
        What the vetted labels and the scores cannot tell the model the posterior came
        from (:meth:`bayeval.EvalData.caveats`: a handful of vetted positives, say), in
        sentences; the precision and recall intervals of :meth:`at_threshold` and
        :meth:`table` can miss the truth for these reasons. ``print(rec)`` ends with them
        and ``repr(rec)`` names them; empty when there is nothing to say (and for one
        built by hand).
    allow_any : str
        How :attr:`verdict` tells the reader to allow thresholds that flag fewer than
        ``min_flagged`` items, in the words of the caller: ``"pass min_flagged=0"`` (a
        keyword of :func:`recalibrate`, the default); ``bayeval threshold`` says
        ``"give --min-flagged 0"``.

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
    n_flagged: xr.DataArray | None = None
    min_flagged: int = 0
    n_items: int | None = None
    all_vetted: bool = False
    scores: np.ndarray | None = field(default=None, repr=False, compare=False)
    caveats: tuple[str, ...] = field(default=(), compare=False)
    allow_any: str = field(default="pass min_flagged=0", repr=False, compare=False)

    @property
    def threshold_text(self) -> str:
        """The recommended threshold as printed: the shortest decimal whose rule ``score >= text``
        flags exactly the items that :attr:`threshold` flags on this evaluation set (see
        :func:`threshold_text`); without :attr:`scores`, the float in full."""
        return threshold_text(self.threshold, self.scores)

    @property
    def probability_at_threshold(self) -> float:
        """Probability that the constraint holds at the recommended threshold."""
        return float(self.probability.sel(threshold=self.threshold))

    @property
    def flagged(self) -> int:
        """How many items the recommended threshold flags (exact on this evaluation set)."""
        return int(self._n_flagged().sel(threshold=self.threshold))

    def _n_flagged(self) -> xr.DataArray:
        if self.n_flagged is not None:
            return self.n_flagged
        # a Recalibration built by hand, without counts: every threshold is allowed
        return xr.full_like(self.probability, -1, dtype=np.int64)

    @property
    def eligible(self) -> xr.DataArray:
        """Per threshold: whether it flags at least ``min_flagged`` items (may be recommended)."""
        return (self._n_flagged() >= self.min_flagged) | (self._n_flagged() < 0)

    @property
    def constraint_text(self) -> str:
        """The constraint in words, e.g. ``"precision >= 0.9 and recall >= 0.5"``."""
        cons = []
        if self.min_precision is not None:
            cons.append(f"precision >= {self.min_precision:g}")
        if self.min_recall is not None:
            cons.append(f"recall >= {self.min_recall:g}")
        return " and ".join(cons)

    @property
    def advice(self) -> str:
        """What to do when the constraint is not met: relax it or vet more items, or, with every
        item vetted (nothing left to vet), relax it or score the items with another classifier."""
        if self.all_vetted:
            return ("every item is vetted, so more labels cannot change this: relax the constraint or "
                    "score the items with another classifier.")
        return "relax the constraint or vet more items."

    @property
    def verdict(self) -> str:
        """One plain sentence: which threshold is recommended, or that none meets the constraint.

        When no threshold meets the constraint with probability ``prob`` while flagging at
        least ``min_flagged`` items, the sentence starts with "No threshold meets" and
        names the best available threshold, its probability, and how many thresholds were
        refused for flagging too few items. With ``prob=None``, when no posterior draw meets
        the constraint at any threshold (:attr:`no_draw_meets`), it starts with "No threshold
        meets" too, says so, and gives the closest threshold's expected precision/recall.
        What the data cannot tell the model is not in it: :attr:`caveats`, with which
        ``print(rec)`` ends.
        """
        t, p = self.threshold_text, self.probability_at_threshold
        flags = self._flags_text()
        if self.prob is None and self.no_draw_meets:
            floor = f" that flags at least {self.min_flagged} items" if self.min_flagged > 0 else ""
            return (f"No threshold meets {self.constraint_text}: no posterior draw meets it at any threshold"
                    f"{floor}. The closest, {t} ({flags}), has {self._expected_text()}; {self.advice}")
        if self.prob is None:
            return (f"Threshold {t} ({flags}) is where {self.constraint_text} most probably holds: "
                    f"with probability {p:.2f}.")
        if self.met:
            return (f"Threshold {t} ({flags}) meets {self.constraint_text} with probability "
                    f"{probability_text(p, self.prob)} (required: {self.prob:g}).")
        floor = f" while flagging at least {self.min_flagged} items" if self.min_flagged > 0 else ""
        text = (f"No threshold meets {self.constraint_text} with probability {self.prob:g}{floor}; "
                f"the best available, {t} ({flags}), reaches {probability_text(p, self.prob)}.")
        refused = self.refused_thresholds
        if refused.size:
            text += (f" {refused.size} threshold(s) above it meet the probability but flag fewer than "
                     f"{self.min_flagged} items (at most {int(self._n_flagged().sel(threshold=refused).max())}), "
                     f"too few to deploy; {self.allow_any} to allow them.")
        return text

    @property
    def no_draw_meets(self) -> bool:
        """True when no posterior draw meets the constraint at any threshold that may be recommended
        (every probability is 0): the recommended threshold is then the one closest to meeting it."""
        return float(self.probability.values[self.eligible.values].max()) == 0.0

    def _expected_text(self) -> str:
        cur = self.curve.sel(threshold=self.threshold)
        parts = [f"expected {q} {float(cur.sel(curve=q).mean()):.2f} (needed: {least:g})"
                 for q, least in (("precision", self.min_precision), ("recall", self.min_recall))
                 if least is not None]
        return " and ".join(parts)

    @property
    def refused_thresholds(self) -> np.ndarray:
        """The thresholds that meet ``prob`` but were refused for flagging fewer than ``min_flagged`` items."""
        if self.prob is None:
            return np.array([], dtype=float)
        ok = (self.probability.values >= self.prob - 1e-12) & ~self.eligible.values
        return self.probability["threshold"].values[ok]

    def _flags_text(self) -> str:
        k = self._n_flagged().sel(threshold=self.threshold)
        if int(k) < 0:
            return "flagged count unknown"
        if self.n_items:
            return f"flags {int(k)} of {self.n_items} items, {100 * int(k) / self.n_items:.1f}%"
        return f"flags {int(k)} items"

    def at_threshold(self, hdi_prob: float = HDI_PROB) -> pd.DataFrame:
        """What the recommended threshold does on this evaluation set, with credible intervals.

        Rows ``flagged`` (the number of items with ``score >= t``: exact, so its interval
        is a single point), ``true positives flagged``, ``precision`` and ``recall``;
        columns as in :meth:`bayeval.Posterior.summary` (``mean``, ``sd`` and the HDI at
        ``hdi_prob``).
        """
        from .core.summary import hdi

        hdi_prob = V.as_probability(hdi_prob, "hdi_prob", open_interval=True)
        lo, hi = hdi_columns(hdi_prob)
        cur = self.curve.sel(threshold=self.threshold)
        prec = cur.sel(curve="precision").values.ravel()
        rec = cur.sel(curve="recall").values.ravel()
        k = self.flagged
        rows = {}
        if k >= 0:
            rows["flagged"] = np.full(prec.size, float(k))
            rows["true positives flagged"] = np.round(prec * k) if k > 0 else np.zeros(prec.size)
        rows["precision"], rows["recall"] = prec, rec
        out = {}
        for name, draws in rows.items():
            b = hdi(draws, hdi_prob)
            out[name] = {"mean": draws.mean(), "sd": draws.std(ddof=1) if draws.size > 1 else np.nan,
                         lo: float(b[0]), hi: float(b[1])}
        return pd.DataFrame.from_dict(out, orient="index").rename_axis("at threshold")

    def table(self, hdi_prob: float = HDI_PROB) -> pd.DataFrame:
        """Per threshold: the constraint probability and posterior precision/recall.

        Columns ``p_constraint``, ``n_flagged`` (items with ``score >= t``), ``eligible``
        (flags at least ``min_flagged`` items) and, for ``precision`` and ``recall``, the
        columns of :meth:`bayeval.Posterior.summary` prefixed by the quantity:
        ``precision_mean``, ``precision_sd``, ``precision_hdi_5%``, ``precision_hdi_95%``
        (for the default ``hdi_prob``), and the same for ``recall``.
        """
        from .core.summary import hdi

        hdi_prob = V.as_probability(hdi_prob, "hdi_prob", open_interval=True)
        lo, hi = hdi_columns(hdi_prob)
        rows = {"threshold": self.probability["threshold"].values, "p_constraint": self.probability.values}
        if self.n_flagged is not None:
            rows["n_flagged"] = self.n_flagged.values
            rows["eligible"] = self.eligible.values
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

    def _at_text(self) -> str:
        at = self.at_threshold()
        lo, hi = at.columns[2], at.columns[3]
        parts = [f"{q} {at.loc[q, 'mean']:.2f} [{at.loc[q, lo]:.2f}, {at.loc[q, hi]:.2f}]"
                 for q in ("precision", "recall")]
        return ", ".join(parts) + f" ({100 * HDI_PROB:g}% HDI)"

    def __repr__(self) -> str:
        text = (
            f"Recalibration({self.constraint_text}: threshold {self.threshold_text} "
            f"holds with probability {probability_text(self.probability_at_threshold, self.prob, digits=3)}; "
            f"{self._flags_text()}; "
            f"{self._at_text()}"
        )
        if self.prob is not None and not self.met:
            floor = f" while flagging at least {self.min_flagged} items" if self.min_flagged > 0 else ""
            text += f"; no threshold meets probability {self.prob:g}{floor}, this is the best available"
        elif self.prob is None and self.no_draw_meets:
            text += "; no posterior draw meets the constraint at any threshold, this is the closest"
        if self.caveats:  # each by its head: the sentences are in .caveats and print(rec)
            text += "; caveats (.caveats): " + "; ".join(c.split(":")[0] for c in self.caveats)
        return text + ")"

    def __str__(self) -> str:
        at = self.at_threshold()
        lo, hi = at.columns[2], at.columns[3]
        lines = [self.verdict, f"  rule: positive where score >= {self.threshold_text}"]
        for q in at.index:
            if q == "flagged":
                lines.append(f"  {q}: {self._flags_text().removeprefix('flags ')} (exact on this set)")
            else:  # a count's HDI bounds are whole draws; its mean is not (0.66 is not "1")
                count = q == "true positives flagged"
                fmt = ".0f" if count else ".3f"
                mean = _count_mean(at.loc[q, "mean"]) if count else f"{at.loc[q, 'mean']:{fmt}}"
                lines.append(f"  {q}: mean {mean}, HDI [{at.loc[q, lo]:{fmt}}, {at.loc[q, hi]:{fmt}}]")
        lines += [f"caveat: {c}" for c in self.caveats]  # why these intervals can miss (EvalData.caveats)
        return "\n".join(lines)


def threshold_text(threshold: float, scores) -> str:
    """A threshold as the shortest decimal that flags exactly the same items.

    A threshold printed with a fixed number of digits can flag other items than the
    threshold itself: with scores near 1, ``0.9999999`` printed as ``1`` flags none of
    them. This gives the shortest decimal (3 significant digits, or more where needed;
    trailing zeros left out) whose rule
    ``score >= text`` flags the same items as ``score >= threshold``: it lies above the
    largest unflagged score and at or below the smallest flagged one.

    Parameters
    ----------
    threshold : float
        The threshold (rule: positive where ``score >= threshold``).
    scores : array_like or None
        The scores of the items the rule is applied to. None: the float in full (its
        shortest text that reads back as the same float).

    Returns
    -------
    str
        The threshold as text; ``float(text)`` flags the same items as ``threshold``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.recalibrate import threshold_text
    >>> s = np.array([0.99999931, 0.99999962, 0.99999995, 0.2])
    >>> threshold_text(0.99999962, s), f"{0.99999962:.6g}"
    ('0.9999996', '1')
    >>> threshold_text(-1.0221377, np.array([-1.0221377, -1.5, 0.3]))  # -1.022 would flag one item less
    '-1.02214'
    >>> threshold_text(0.5, np.array([0.1, 0.5, 0.9])), threshold_text(1.0, None)
    ('0.5', '1')
    """
    t = float(threshold)
    if scores is None:
        return repr(t).removesuffix(".0")
    values = np.asarray(scores, dtype=np.float64).ravel()
    values = values[~np.isnan(values)]  # a missing score is flagged by no threshold
    if not math.isfinite(t):
        return f"{t}"
    flagged = values >= t
    # any c with largest unflagged < c <= smallest flagged flags the same items
    above = float(values[~flagged].max()) if (~flagged).any() else -math.inf
    at_most = float(values[flagged].min()) if flagged.any() else math.inf
    exact = Decimal(t)
    for digits in range(3, 18):
        step = Decimal(1).scaleb(exact.adjusted() - digits + 1)  # the last of `digits` significant digits
        # rounded to nearest only: a shorter text rounded the other way would flag the same items
        # but read as another threshold than the one plotted and tabulated
        text = f"{float(exact.quantize(step, rounding=ROUND_HALF_EVEN)):.{digits}g}"
        if above < float(text) <= at_most:
            return text
    return repr(t)  # 17 significant digits always give the float itself back


def probability_text(p: float, required: float | None = None, digits: int = 2) -> str:
    """A probability as printed next to the one it had to reach: never on the wrong side of it,
    and never as certain (1 or 0) when it is not.

    Rounded to ``digits`` decimals, 0.989 prints as 0.99 and would read as meeting a
    required 0.99 that it misses. Below ``required``, this gives a text below it; at or
    above, a text at or above it: more decimals where rounding would cross (up to 6),
    then rounded down (below) or up (at or above) at 6. Likewise a probability that is not
    exactly 1 (or 0) gets more decimals where rounding would print it as 1 (or 0): 0.9996 is
    0.9996, not 1.00; at 6 decimals it stays within 0.000001 of them (0.999999, 0.000001).

    Parameters
    ----------
    p : float
        The probability.
    required : float, optional
        The probability it had to reach. None (or NaN): ``p`` rounded to ``digits``
        (more decimals only where it would print as certain).
    digits : int, default 2
        The fewest decimals.

    Returns
    -------
    str

    Examples
    --------
    >>> from bayeval.recalibrate import probability_text
    >>> probability_text(0.989, 0.99), probability_text(0.9899999, 0.99), probability_text(0.991, 0.99)
    ('0.989', '0.989999', '0.99')
    >>> probability_text(0.9541, 0.9541), probability_text(0.8765)  # met: not "0.95" of a required 0.9541
    ('0.9541', '0.88')
    >>> probability_text(0.9996, 0.9), probability_text(0.0004), probability_text(1.0, 0.9)  # not "1.00", "0.00"
    ('0.9996', '0.0004', '1.00')
    """
    p = float(p)
    if math.isnan(p):
        return f"{p:.{digits}f}"
    check = required is not None and not math.isnan(required)
    met = check and p >= required - 1e-12  # the tolerance with which recalibrate calls a probability met
    for d in range(digits, 7):
        text = f"{p:.{d}f}"
        shown = float(text)
        certain = (shown >= 1 and p < 1) or (shown <= 0 and p > 0)  # 1.00 of 0.9996, 0.00 of 0.0004
        if not certain and (not check or (shown >= required) == met):
            return text
    step = 10.0 ** 6
    shown = (math.ceil(p * step) if met else math.floor(p * step)) / step
    if 0 < p < 1:  # within 0.000001 of certainty, not at it
        shown = min(max(shown, 1 / step), 1 - 1 / step)
    return f"{shown:.6f}"


def _count_mean(mean: float) -> str:
    """A posterior mean of a count: one decimal, two significant digits below 0.1 (0.04, not 0.0)."""
    return f"{mean:.2g}" if 0 < abs(mean) < 0.1 else f"{mean:.1f}"


def default_min_flagged(n_items: int, expected_positives: float) -> int:
    """The default ``min_flagged`` of :func:`recalibrate`.

    The larger of 10 and 1% of the items, but never more than a tenth of the expected
    number of positives (rounded up, and at least 10): a threshold that flags fewer
    items rests its precision on a handful of items and finds almost none of the
    positives, while with a rare class (0.5% positives) a 1% floor would rule out every
    high-precision threshold.

    Examples
    --------
    >>> from bayeval.recalibrate import default_min_flagged
    >>> default_min_flagged(2699, 400.0), default_min_flagged(40000, 200.0), default_min_flagged(300, 90.0)
    (27, 20, 10)
    """
    one_percent = math.ceil(n_items / 100)
    tenth_of_positives = math.ceil(expected_positives / 10)
    return max(10, min(one_percent, tenth_of_positives))


def recalibrate(
    post: Posterior,
    *,
    min_precision: float | None = None,
    min_recall: float | None = None,
    prob: float | None = None,
    thresholds=None,
    min_flagged: int | None = None,
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
        highest probability is returned as the best available (among equals, the
        closest to meeting the constraint: with a precision floor none can reach, the
        highest expected precision). Default None: the
        threshold with the highest probability (the SPE paper's rule); among equals the
        lowest, except when no posterior draw meets the constraint at any threshold
        (every probability 0): then the closest to meeting it, as above, ``met`` is
        False and :attr:`Recalibration.verdict` says that no draw meets it.
    thresholds : 1-D array_like, optional
        Candidate thresholds; default the distinct scores, or, when there are more
        than 201, 201 evenly spaced score quantiles together with the scores at 201
        geometrically spaced ranks from the top (so that rare positives, whose useful
        thresholds all lie among the top 1-2% of scores, get dozens of candidates). With
        every item vetted (the values are exact), every distinct score is weighed, and the
        one this rule picks among them is added to that grid: the recommended threshold is
        then the best of all the distinct scores.
    min_flagged : int >= 0, optional
        A threshold that flags fewer items (``score >= t``) is never recommended: its
        precision rests on a handful of items and it finds almost none of the
        positives. Default: the larger of 10 and 1% of the items, capped at a tenth of
        the posterior expected number of positives (but at least 10; see
        :func:`default_min_flagged`). ``min_flagged=0`` allows any threshold. When
        every threshold that meets ``prob`` flags too few items, ``met`` is False and
        :attr:`Recalibration.verdict` says so.

    Returns
    -------
    Recalibration
        With the data's :attr:`~Recalibration.caveats` (:meth:`bayeval.EvalData.caveats` in the
        words of ``post``'s model), which ``print`` shows after the threshold's numbers.

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
    n_items = post.data.n_items
    if min_flagged is None:
        expected_pos = float(post.item_probability().sum())
        floor = min(default_min_flagged(n_items, expected_pos), n_items)
    else:
        floor = V.as_positive_int(
            min_flagged, "min_flagged", minimum=0,
            hint=" It is the fewest items a recommended threshold may flag; 0 allows any threshold.",
        )
        if floor > n_items:
            raise ValueError(
                f"`min_flagged` is {floor}, more than the {n_items} items in the data: no threshold can "
                f"flag that many. Give at most {n_items}, or 0 to allow any threshold."
            )
    scores = np.sort(post.data.scores)
    if thresholds is None and post.data.n_vetted == n_items and t.size < np.unique(scores).size:
        # every item vetted: the values are exact, so every distinct score is weighed (cheaply, from the
        # labels) and the one the rule picks joins the grid, which would otherwise skip it
        t = np.union1d(t, _best_distinct_score(post.data, scores, floor, p_min, r_min, level))
    counts = n_items - np.searchsorted(scores, t, side="left")  # items with score >= t
    eligible = counts >= floor
    if not eligible.any():
        raise ValueError(
            f"None of the {t.size} candidate thresholds flags at least min_flagged={floor} items (the "
            f"lowest, {threshold_text(t[0], scores)}, flags {int(counts[0])}); give lower thresholds, or a smaller min_flagged "
            "(0 allows any threshold)."
        )
    curve = post.metric("precision_recall_curve", thresholds=t, category="pooled")
    p_c = _constraint_probability(curve, counts, p_min, r_min)
    n_flagged = xr.DataArray(counts, dims=("threshold",), coords={"threshold": p_c["threshold"].values},
                             name="n_flagged")
    # ties (within one draw's weight) -> lowest threshold, i.e. highest recall
    choice, met = _choose(curve, p_c, eligible, p_min, r_min, level, tol=0.5 / (post.n_chains * post.n_draws))
    return Recalibration(p_c, choice, curve, p_min, r_min, level, met, n_flagged, floor, n_items,
                         all_vetted=bool(post.data.n_vetted == n_items), scores=scores,
                         caveats=tuple(post.data.caveats(post)))


def _constraint_probability(curve, counts, p_min, r_min) -> xr.DataArray:
    """Per threshold, the fraction of draws meeting the constraint (``p_constraint``)."""
    ok = xr.ones_like(curve.sel(curve="precision"), dtype=bool)
    if p_min is not None:
        ok &= curve.sel(curve="precision") >= p_min - 1e-12
        # a rule that flags nothing has no precision: it cannot meet a precision floor (whatever min_flagged)
        ok &= xr.DataArray(counts > 0, dims=("threshold",), coords={"threshold": curve["threshold"].values})
    if r_min is not None:
        ok &= curve.sel(curve="recall") >= r_min - 1e-12
    return ok.mean(("chain", "draw")).drop_vars("curve", errors="ignore").rename("p_constraint")


def _choose(curve, p_c, eligible, p_min, r_min, level, tol) -> tuple[float, bool]:
    """``(threshold, met)``: the rule of :func:`recalibrate` among the ``eligible`` thresholds
    (those that flag at least ``min_flagged`` items); ``tol``: probabilities closer than that tie."""
    best = float(p_c.values[eligible].max())
    t_vals = p_c["threshold"].values
    choice = float(t_vals[np.flatnonzero(eligible & (p_c.values >= best - tol))[0]])
    if best == 0.0:  # no draw meets it anywhere: the lowest threshold would flag every item
        choice = _closest_of_the_most_probable(curve, p_c.values, eligible, best - tol, p_min, r_min)
    met = best > 0.0  # no draw meets it at any eligible threshold: not met, whatever `prob`
    if level is not None:
        feasible = np.flatnonzero(eligible & (p_c.values >= level - 1e-12))
        if feasible.size:
            goal = "recall" if p_min is not None else "precision"
            expected = curve.sel(curve=goal).mean(("chain", "draw")).values
            pick = feasible[np.argmax(np.nan_to_num(expected[feasible], nan=-1.0))]
            choice = float(t_vals[pick])
        else:
            met = False
            choice = _closest_of_the_most_probable(curve, p_c.values, eligible, best - tol, p_min, r_min)
    return choice, met


def _best_distinct_score(data, scores, floor, p_min, r_min, level) -> np.ndarray:
    """With every item vetted: the threshold the rule of :func:`recalibrate` picks among all the
    distinct scores (``scores`` sorted), from the labels themselves (exact, one "draw"), as an array
    of one (empty when no distinct score flags ``floor`` items). Linear in the items: no draws."""
    from .core.metrics import precision_recall_curve

    uniq = np.unique(scores)
    counts = scores.size - np.searchsorted(scores, uniq, side="left")
    eligible = counts >= floor
    if not eligible.any():
        return np.array([], dtype=float)
    prec, rec, _ = precision_recall_curve(data.labels, data.scores, thresholds=uniq)
    curve = xr.DataArray(np.stack([prec, rec], axis=-1)[None, None], dims=("chain", "draw", "threshold", "curve"),
                         coords={"threshold": uniq, "curve": ["precision", "recall"]})
    p_c = _constraint_probability(curve, counts, p_min, r_min)
    return np.array([_choose(curve, p_c, eligible, p_min, r_min, level, tol=0.5)[0]])


def _closest_of_the_most_probable(curve, p_c, eligible, cut, p_min, r_min) -> float:
    """When no threshold meets ``prob``: among the eligible thresholds of the highest probability
    (``p_c >= cut``), the one closest to meeting the constraint, by the posterior mean of its worse
    shortfall ``min(precision - min_precision, recall - min_recall)``. With a precision floor that
    no threshold can reach, every probability is 0, and the lowest threshold (flag every item, at
    the base rate) would otherwise win the tie: this gives the highest expected precision instead.
    With a recall floor alone it is the lowest of the tied thresholds, as before."""
    slack = None
    for q, least in (("precision", p_min), ("recall", r_min)):
        if least is not None:
            gap = curve.sel(curve=q).fillna(-1.0) - least  # precision of an empty rule: NaN, never closest
            slack = gap if slack is None else np.minimum(slack, gap)
    expected = slack.mean(("chain", "draw")).values
    tied = np.flatnonzero(eligible & (p_c >= cut))
    return float(curve["threshold"].values[tied[np.argmax(expected[tied])]])
