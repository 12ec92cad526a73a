"""Score maps and binning shared by the score models (mixtures, calibration, label flips)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ..core import _validate as V

__all__ = ["TRANSFORMS", "Transform", "make_transform", "histogram", "rank_weights", "vetted_prevalence"]

_EPS_MINMAX = 1e-3
_TIES_WARN = 0.05  # share of exact 0/1 probabilities above which the logit map warns


# ------------------------------------------------------------------- transforms


@dataclass(frozen=True)
class Transform:
    """A monotone map of scores. ``lo``/``hi``: the data's range (``minmax``) or the
    clip bounds of the probabilities (``logit``: smallest positive, largest below one)."""

    name: str
    lo: float = 0.0
    hi: float = 1.0

    def __call__(self, s):
        s = np.asarray(s, dtype=np.float64)
        if self.name == "identity":
            return s
        if self.name == "minmax":
            return _EPS_MINMAX + (1 - 2 * _EPS_MINMAX) * (s - self.lo) / (self.hi - self.lo)
        if self.name == "logit":
            c = np.clip(s, self.lo, self.hi)
            return np.log(c) - np.log1p(-c)
        if self.name == "log":
            return np.log(s)
        raise AssertionError(self.name)

    def log_jacobian(self, s):
        """log |dx/ds| per score (added to log p(x) to get log p(s))."""
        s = np.asarray(s, dtype=np.float64)
        if self.name == "identity":
            return np.zeros_like(s)
        if self.name == "minmax":
            return np.full_like(s, np.log((1 - 2 * _EPS_MINMAX) / (self.hi - self.lo)))
        if self.name == "logit":
            c = np.clip(s, self.lo, self.hi)
            return -np.log(c) - np.log1p(-c)
        if self.name == "log":
            return -np.log(s)
        raise AssertionError(self.name)


TRANSFORMS = ("auto", "identity", "minmax", "logit", "log")


def make_transform(name: str, support: str, scores: np.ndarray) -> Transform:
    V.check_choice(name, "transform", TRANSFORMS)
    lo, hi = float(scores.min()), float(scores.max())
    in_unit = lo >= 0 and hi <= 1
    if name == "auto":
        if support == "real":
            name = "logit" if in_unit else "identity"
        elif support == "positive":
            name = "identity" if lo > 0 and not in_unit else "minmax"
        else:
            name = "identity" if lo > 0 and hi < 1 else "minmax"
    if name == "minmax" and hi == lo:
        raise ValueError("All scores are equal: a score mixture cannot separate the classes.")
    t = Transform(name, lo, hi)
    # does the mapped score fit the family's support?
    if name == "logit":
        if not in_unit:
            raise ValueError(
                f"transform='logit' needs scores in [0, 1] (probabilities); got scores from {lo:g} to {hi:g}. "
                "Use 'identity' for logits or margins, or 'minmax'."
            )
        inner = scores[(scores > 0) & (scores < 1)]
        if inner.size == 0:
            raise ValueError(
                "transform='logit' needs some scores strictly between 0 and 1; all scores are exactly 0 or 1. "
                "Hard 0/1 predictions rank nothing within each group, so no calibration curve or score "
                "mixture can be fitted to them: pass the classifier's scores or probabilities, or estimate "
                "precision and recall at the predictions from the vetted labels alone, e.g. "
                "`bayeval.vetted_only(data, 'precision', threshold=0.5)`."
            )
        ties = float(np.mean((scores == 0) | (scores == 1)))
        if ties > _TIES_WARN:
            warnings.warn(
                f"bayeval: {ties:.0%} of the scores are exactly 0 or 1; on the logit scale they sit on one point "
                "(the most extreme other score), a spike no density follows. Use transform='minmax' with "
                "positive-support families (e.g. ScoreMixture('gamma', 'truncnormal')) for such scores.",
                UserWarning,
                stacklevel=4,
            )
        t = Transform(name, float(inner.min()), float(inner.max()))
    if name == "log" and lo <= 0:
        raise ValueError(f"transform='log' needs positive scores; the smallest is {lo:g}. Use 'minmax'.")
    x = t(scores)
    if support == "positive" and x.min() <= 0:
        raise ValueError(
            f"This family needs positive values, but the {name!r}-mapped scores reach {x.min():g}. "
            "Use transform='minmax' (maps any scale into (0, 1))."
        )
    if support == "unit" and (x.min() <= 0 or x.max() >= 1):
        raise ValueError(
            f"The Beta family needs values strictly inside (0, 1), but the {name!r}-mapped scores span "
            f"[{x.min():g}, {x.max():g}]. Use transform='minmax'."
        )
    return t


# ----------------------------------------------------------------------- binning


def histogram(x: np.ndarray, n_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """Equal-width bins over the mapped unvetted scores: (representative points, counts).

    Each bin is represented by the mean of the scores that fall in it, which removes
    the first-order error of the midpoint rule; empty bins are dropped.
    """
    edges = np.linspace(x.min(), x.max(), n_bins + 1)
    idx = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, n_bins - 1)
    counts = np.bincount(idx, minlength=n_bins).astype(np.float64)
    sums = np.bincount(idx, weights=x, minlength=n_bins)
    keep = counts > 0
    return sums[keep] / counts[keep], counts[keep]


# ----------------------------------------------------------- vetted prevalence


def rank_weights(scores: np.ndarray, vetted: np.ndarray) -> np.ndarray:
    """The share of the pool each vetted item stands for, by rank of score.

    Every item of the pool is assigned to the vetted item nearest to it in the
    ranking by score (ties by position); a vetted item's weight is the share of the
    pool assigned to it. The weights sum to 1. With randomly chosen vetted items they
    are close to ``1 / n_vetted`` each; when the vetted items were chosen by their
    scores (more of them at the top of the ranking, say) each stands for fewer items
    where they are dense, so a weighted mean of the vetted labels estimates the
    pool's share of positives under either design.

    Examples
    --------
    >>> import numpy as np
    >>> rank_weights(np.arange(10.0), np.isin(np.arange(10), [0, 9])).round(2).tolist()
    [0.5, 0.5]
    >>> rank_weights(np.arange(10.0), np.isin(np.arange(10), [7, 8, 9])).round(2).tolist()
    [0.8, 0.1, 0.1]
    """
    s = np.asarray(scores, dtype=np.float64)
    v = np.asarray(vetted, dtype=bool)
    n = s.size
    order = np.argsort(s, kind="stable")
    pos = np.empty(n, dtype=np.float64)
    pos[order] = np.arange(n)
    vet = np.flatnonzero(v)
    if vet.size == 0:
        return np.empty(0)
    r = pos[vet]
    o = np.argsort(r, kind="stable")
    rs = r[o]
    edges = np.r_[-0.5, (rs[:-1] + rs[1:]) / 2.0, n - 0.5]
    w_sorted = np.diff(edges) / n
    w = np.empty(vet.size)
    w[o] = w_sorted
    return w


def vetted_prevalence(scores: np.ndarray, vetted: np.ndarray, labels: np.ndarray) -> float:
    """The pool's share of positives from the vetted labels, robust to choosing items by score.

    A rank-weighted mean of the vetted labels (:func:`rank_weights`), smoothed like
    ``(positives + 1) / (vetted + 2)``: it is close to that value when the vetted items
    are spread evenly over the ranking, and does not follow an over-sampled top of the
    ranking (the designed batches of :func:`bayeval.active.design`).
    """
    v = np.asarray(vetted, dtype=bool)
    n = int(v.sum())
    if n == 0:
        return 0.5
    w = rank_weights(scores, v)
    y = np.asarray(labels, dtype=np.float64)[v]
    return (float(n * np.dot(w, y)) + 1.0) / (n + 2.0)
