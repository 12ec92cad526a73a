"""The identified set of a classifier's true accuracy: what the annotations allow when the
overlap of the classifier's errors with the annotators' is left open.

Without gold items, how the classifier's errors overlap the annotators' is told by the
priors, not the data (the fit says so: its true accuracy is *prior-dominated*). What the
annotations do tell, through their agreement with each other and with the classifier, is
how often each annotator column is right. This module turns that into a range that does
not depend on the overlap: the smallest and largest accuracy of the classifier over every
assignment of true classes to the items in which every annotator column ``j`` is right on
at least a share ``floor[j]`` of the items it labelled (and every gold item keeps its
class). It is the closed-form range ``A_model -+ (1 - A_annotator)`` of
:func:`~bayeval.annotators.bounds.true_accuracy_bounds`, taken jointly over all annotator
columns (a small linear programme over the distinct observation patterns).

The floors come from the fit: the annotators' accuracies on these items, computed from the
posterior's draws of the true classes, at the quantile level at which all of them hold
together with the interval's probability. See ``docs/models.md`` ("True accuracy without
gold items").
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["IdentifiedAccuracy"]


class IdentifiedAccuracy(NamedTuple):
    """The classifier's true accuracy as far as the annotations identify it
    (``post.identified_accuracy()`` of an annotator-error fit).

    ``lower`` and ``upper`` hold the posterior's interval and the identified set (the
    range of the accuracy over every way the classifier's errors can overlap the
    annotators', each annotator column right on at least ``reference_floor`` of its
    items). ``reported`` says whether the fit's table reports this range (it does
    whenever there are no gold items) or another interval (with gold items, the guarded one).

    Examples
    --------
    >>> from bayeval.annotators import IdentifiedAccuracy
    >>> r = IdentifiedAccuracy(0.81, 0.55, 0.95, 0.74, 0.88, 0.55, 0.95, (0.66,), 0.9, True, 66, "")
    >>> (r.lower, r.upper) == (min(r.posterior_lower, r.set_lower), max(r.posterior_upper, r.set_upper))
    True
    """

    estimate: float
    """Posterior mean of the true accuracy on these items."""
    lower: float
    """Lower end: the lower of the posterior's and the identified set's lower ends."""
    upper: float
    """Upper end: the higher of the two upper ends."""
    posterior_lower: float
    """Lower end of the posterior's interval."""
    posterior_upper: float
    """Upper end of the posterior's interval."""
    set_lower: float
    """Lowest true accuracy consistent with the annotations and the floors, whatever the overlap."""
    set_upper: float
    """Highest such accuracy."""
    reference_floor: tuple
    """Per annotator column, the share of its items it is taken to be right on at least."""
    prob: float
    """Posterior probability of the interval and of the floors (jointly)."""
    reported: bool
    """Whether ``summary()`` reports ``[lower, upper]`` in its ``true_accuracy`` row."""
    gold_to_halve: int
    """Gold items (a random sample) whose own interval would be half as wide as ``[lower, upper]``."""
    reason: str
    """The prior-sensitivity diagnosis of the true accuracy (``"prior-dominated"``...), or ``""``."""


def accuracy_range(patterns: np.ndarray, counts: np.ndarray, pattern_gold: np.ndarray, floors, k: int
                   ) -> tuple[float, float]:
    """Smallest and largest share of items on which rater 0 (the classifier) is right, over
    every assignment of true classes in which annotator column ``j`` (pattern column
    ``j + 1``) is right on at least ``floors[j]`` of the items it labelled; gold items
    (``pattern_gold >= 0``) keep their class.

    A linear programme in ``x[p, c]``, the items of pattern ``p`` given true class ``c``
    (its relaxation: the integer solution differs by at most one item per annotator
    column). Returns ``(nan, nan)`` when no assignment meets the floors.

    >>> pat = np.array([[1, 1], [1, 0], [0, 0], [0, 1]])
    >>> lo, hi = accuracy_range(pat, np.array([40., 10., 40., 10.]), np.full(4, -1), [0.9], 2)
    >>> round(lo, 3), round(hi, 3)
    (0.7, 0.9)
    """
    from scipy.optimize import linprog

    pat = np.asarray(patterns, dtype=np.int64)
    cnt = np.asarray(counts, dtype=np.float64)
    keep = cnt > 0
    pat, cnt, g = pat[keep], cnt[keep], np.asarray(pattern_gold)[keep]
    n_p, n_ann = pat.shape[0], pat.shape[1] - 1
    floors = np.broadcast_to(np.asarray(floors, dtype=np.float64), (n_ann,))
    cls = np.arange(k)
    ref = pat[:, 1:]
    seen = ref >= 0
    # wrong[j, p, c]: annotator j labelled pattern p and its label is not c
    wrong = (seen[:, :, None] & (ref[:, :, None] != cls[None, None, :])).transpose(1, 0, 2)
    a_ub = wrong.reshape(n_ann, n_p * k).astype(np.float64)
    b_ub = (1.0 - floors) * (cnt[:, None] * seen).sum(axis=0)
    a_eq = np.kron(np.eye(n_p), np.ones((1, k)))
    upper = np.repeat(cnt[:, None], k, axis=1)
    upper[(g[:, None] >= 0) & (g[:, None] != cls[None, :])] = 0.0  # gold items keep their class
    right = (pat[:, :1] == cls[None, :]).astype(np.float64).ravel()
    out = []
    for sign in (1.0, -1.0):
        res = linprog(sign * right, A_ub=a_ub, b_ub=b_ub + 1e-9, A_eq=a_eq, b_eq=cnt,
                      bounds=list(zip(np.zeros(n_p * k), upper.ravel(), strict=True)), method="highs")
        if res.status != 0:
            return float("nan"), float("nan")
        out.append(float(right @ res.x) / cnt.sum())
    return min(max(out[0], 0.0), 1.0), min(max(out[1], 0.0), 1.0)


def joint_floors(acc: np.ndarray, prob: float) -> np.ndarray:
    """Per annotator column, a lower quantile of its accuracy draws (``acc``: draws x
    columns), at the one level at which all columns are at or above their floors together
    in a share ``prob`` of the draws (one column: the ``1 - prob`` quantile)."""
    acc = np.asarray(acc, dtype=np.float64)
    if acc.shape[1] == 1:
        return np.quantile(acc, 1.0 - prob, axis=0)
    levels = np.linspace(1.0 - prob, 0.0, 201)
    for q in levels:
        floors = np.quantile(acc, q, axis=0)
        if np.mean(np.all(acc >= floors[None, :] - 1e-12, axis=1)) >= prob:
            return floors
    return acc.min(axis=0)


def gold_to_width(accuracy: float, n_items: int, width: float, prob: float) -> int:
    """Gold items (a random sample of the ``n_items``) whose own interval of the accuracy on
    all items (``gold_only_accuracy_interval``, equal-tailed) is at most ``width`` wide,
    for a classifier right on a share ``accuracy`` of them: the smallest such number, by
    bisection (``n_items`` when even all items do not narrow it that far)."""
    from .gold import gold_only_accuracy_interval

    def w(n):
        right = int(round(accuracy * n))
        lo, hi = gold_only_accuracy_interval(right, n, n_items, prob, "equal-tailed")
        return hi - lo

    lo, hi = 1, int(n_items)
    if w(hi) > width:
        return hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if w(mid) <= width:
            hi = mid
        else:
            lo = mid
    return hi


def identified_sentence(r: IdentifiedAccuracy) -> str:
    """What the fit's table says about a reported identified set, in one paragraph."""
    floors = ", ".join(f"{f:.2f}" for f in r.reference_floor)
    flag = f" (the fit flags it {r.reason})" if r.reason else ""
    return (
        f"true_accuracy: without gold items the data do not say how the classifier's errors overlap "
        f"the annotators'{flag}, and the posterior's interval [{r.posterior_lower:.3f}, "
        f"{r.posterior_upper:.3f}] rests on the model's answer. Reported instead: [{r.lower:.3f}, "
        f"{r.upper:.3f}], the range the annotations allow whatever the overlap, with each annotator "
        f"column right on at least {floors} of its items (its accuracy's lower bound from the fit)"
        + ("" if (r.lower, r.upper) == (r.set_lower, r.set_upper) else
           f", joined with the posterior's interval (the range alone: [{r.set_lower:.3f}, {r.set_upper:.3f}])")
        + ". An assumption about the overlap would "
        f"narrow it (independent errors, or trusting the priors, give the posterior's interval); "
        f"so would gold items: about {r.gold_to_halve} random gold items give an interval half as wide."
    )
