"""The identified set of a classifier's true accuracy: what the annotations allow when the
overlap of the classifier's errors with the annotators' is left open.

Without gold items, how the classifier's errors overlap the annotators' is told by the
priors, not the data (the fit says so: its true accuracy is *prior-dominated*). What the
annotations do tell, through their agreement with each other and with the classifier, is
how often each annotator column is right (estimated by the model, so the floors below are
the model's). This module turns that into a range that does not depend on the overlap
given those floors: the smallest and largest accuracy of the classifier over every
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

#: the overlap assumption the fit's table states beside the identified set: on the items an
#: annotator column gets wrong, the classifier's error rate is between 1 and 2 times its
#: error rate over all items (errors shared, at most twice as often as by chance; on three
#: real crowds the realized multiple was 0.78--1.73, see ``docs/models.md``)
ERROR_LIFT = (1.0, 2.0)

#: a reported range narrower than this has no width (the linear programme's tolerance):
#: there is nothing for gold items to halve
ZERO_WIDTH = 1e-6


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
    >>> r.error_lift is None  # no assumption about the overlap
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
    """Gold items (a random sample) whose own interval would be half as wide as ``[lower, upper]``;
    0 where ``[lower, upper]`` has no width (nothing to halve)."""
    reason: str
    """The prior-sensitivity diagnosis of the true accuracy (``"prior-dominated"``...), or ``""``."""
    error_lift: tuple | None = None
    """The overlap assumption the set was computed under (``(low, high)``: on the items an
    annotator column gets wrong, the classifier's error rate is ``low`` to ``high`` times its
    overall rate), or None (any overlap)."""
    assumed_lower: float = float("nan")
    """Without an assumption (``error_lift`` None): the lower end under :data:`ERROR_LIFT`
    (joined with the posterior's interval), the range an overlap assumption would give."""
    assumed_upper: float = float("nan")
    """Its upper end."""


def accuracy_range(patterns: np.ndarray, counts: np.ndarray, pattern_gold: np.ndarray, floors, k: int,
                   lift=None, ceilings=None) -> tuple[float, float]:
    """Smallest and largest share of items on which rater 0 (the classifier) is right, over
    every assignment of true classes in which annotator column ``j`` (pattern column
    ``j + 1``) is right on at least ``floors[j]`` of the items it labelled; gold items
    (``pattern_gold >= 0``) keep their class.

    ``lift=(low, high)`` adds the overlap assumption: on the items annotator column ``j``
    gets wrong, the classifier's error rate is between ``low`` and ``high`` times its error
    rate over all items (1: independent errors; ``low=1`` rules out errors that avoid each
    other, ``high`` caps how much they are shared). Then the range is found by scanning the
    accuracy (each value a feasibility programme; the ends refined by bisection).
    ``ceilings`` (per column) adds that annotator column ``j`` is right on at most
    ``ceilings[j]`` of its items.

    A linear programme in ``x[p, c]``, the items of pattern ``p`` given true class ``c``
    (its relaxation: the integer solution differs by at most one item per annotator
    column). Returns ``(nan, nan)`` when no assignment meets the floors (and the lift).

    >>> pat = np.array([[1, 1], [1, 0], [0, 0], [0, 1]])
    >>> lo, hi = accuracy_range(pat, np.array([40., 10., 40., 10.]), np.full(4, -1), [0.9], 2)
    >>> round(lo, 3), round(hi, 3)
    (0.7, 0.9)
    >>> lo, hi = accuracy_range(pat, np.array([40., 10., 40., 10.]), np.full(4, -1), [0.9], 2, lift=(1, 2))
    >>> round(lo, 3), round(hi, 3)
    (0.8, 0.875)
    """
    lp = _RangeProgramme(patterns, counts, pattern_gold, floors, k, ceilings)
    lo, hi = lp.extreme(1.0), lp.extreme(-1.0)
    if lift is None or not np.isfinite(lo):
        return lo, hi
    return lp.lift_range(lo, hi, *lift)


class _RangeProgramme:
    """The linear constraints of :func:`accuracy_range`, built once."""

    def __init__(self, patterns, counts, pattern_gold, floors, k, ceilings=None):
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
        self.right = (pat[:, :1] == cls[None, :]).astype(np.float64).ravel()
        self.wrong = wrong.reshape(n_ann, n_p * k).astype(np.float64)
        self.both = self.wrong * (1.0 - self.right)[None, :]  # annotator j and the classifier wrong
        labelled = (cnt[:, None] * seen).sum(axis=0)
        self.a_ub = self.wrong
        self.b_ub = (1.0 - floors) * labelled + 1e-9
        if ceilings is not None:  # each column wrong on at least 1 - ceiling of its items
            ceilings = np.broadcast_to(np.asarray(ceilings, dtype=np.float64), (n_ann,))
            self.a_ub = np.vstack([self.wrong, -self.wrong])
            self.b_ub = np.concatenate([self.b_ub, -(1.0 - ceilings) * labelled + 1e-9])
        self.a_eq = np.kron(np.eye(n_p), np.ones((1, k)))
        self.b_eq = cnt
        upper = np.repeat(cnt[:, None], k, axis=1)
        upper[(g[:, None] >= 0) & (g[:, None] != cls[None, :])] = 0.0  # gold items keep their class
        self.bounds = list(zip(np.zeros(n_p * k), upper.ravel(), strict=True))
        self.n = float(cnt.sum())

    def _solve(self, c, a_ub, b_ub, a_eq, b_eq):
        from scipy.optimize import linprog

        return linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=self.bounds, method="highs")

    def extreme(self, sign: float) -> float:
        """The smallest (``sign=1``) or largest (``-1``) accuracy; nan when infeasible."""
        res = self._solve(sign * self.right, self.a_ub, self.b_ub, self.a_eq, self.b_eq)
        if res.status != 0:
            return float("nan")
        return min(max(float(self.right @ res.x) / self.n, 0.0), 1.0)

    def feasible(self, acc: float, low: float, high: float) -> bool:
        """Whether some assignment has accuracy ``acc`` and every column's lift in ``[low, high]``."""
        err = 1.0 - acc
        rows = [self.a_ub, self.both - high * err * self.wrong, low * err * self.wrong - self.both]
        a_ub = np.vstack(rows)
        b_ub = np.concatenate([self.b_ub, np.full(2 * self.wrong.shape[0], 1e-9)])
        a_eq = np.vstack([self.a_eq, self.right[None, :]])
        b_eq = np.concatenate([self.b_eq, [acc * self.n]])
        return self._solve(np.zeros_like(self.right), a_ub, b_ub, a_eq, b_eq).status == 0

    def lift_range(self, lo: float, hi: float, low: float, high: float, *, steps: int = 50,
                   tol: float = 1e-4) -> tuple[float, float]:
        """The lowest and highest feasible accuracy under the lift band, within ``[lo, hi]``
        (the range without it): a grid of ``steps`` values, its outermost feasible points
        moved outwards by bisection to ``tol``."""
        grid = np.linspace(lo, hi, steps + 1)
        ok = np.array([self.feasible(a, low, high) for a in grid])
        if not ok.any():
            return float("nan"), float("nan")
        first, last = np.flatnonzero(ok)[[0, -1]]
        ends = []
        for inside, outside in ((first, first - 1), (last, last + 1)):
            good = grid[inside]
            if 0 <= outside < grid.size:
                bad = grid[outside]
                while abs(good - bad) > tol:
                    mid = 0.5 * (good + bad)
                    good, bad = (mid, bad) if self.feasible(mid, low, high) else (good, mid)
            ends.append(float(good))
        return ends[0], ends[1]


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


def joint_bands(acc: np.ndarray, prob: float) -> tuple[np.ndarray, np.ndarray]:
    """Per annotator column, a lower and an upper quantile of its accuracy draws (``acc``:
    draws x columns), at the one tail level at which all columns lie between their two
    ends together in a share ``prob`` of the draws."""
    acc = np.asarray(acc, dtype=np.float64)
    for q in np.linspace((1.0 - prob) / 2.0, 0.0, 201):
        lo, hi = np.quantile(acc, q, axis=0), np.quantile(acc, 1.0 - q, axis=0)
        inside = np.all((acc >= lo[None, :] - 1e-12) & (acc <= hi[None, :] + 1e-12), axis=1)
        if np.mean(inside) >= prob:
            return lo, hi
    return acc.min(axis=0), acc.max(axis=0)


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


def lift_words(lift) -> str:
    """The overlap assumption ``lift=(low, high)`` in words."""
    low, high = lift
    return (f"on the items an annotator gets wrong the classifier's error rate is {low:g} to {high:g} "
            f"times its overall rate")


def _shown(lo: float, hi: float) -> tuple[str, str]:
    return f"{lo:.3f}", f"{hi:.3f}"


def _gold_words(r: IdentifiedAccuracy, *, without_assumption: bool) -> str:
    """What gold items would do: halve the range, or, where it has no width, check the floors."""
    if r.upper - r.lower >= ZERO_WIDTH:
        tail = " without any assumption" if without_assumption else ""
        lead = "About" if without_assumption else "Gold items would narrow it: about"
        return f" {lead} {r.gold_to_halve} random gold items give an interval half as wide{tail}."
    return (" The range has no width because the floors take every annotator column to be right on every "
            "item it labelled, and raters who all share their errors would look the same. Random gold items "
            "would check that: an item whose gold class differs from an annotator's label shows that the "
            "annotators are not always right.")


def identified_sentence(r: IdentifiedAccuracy) -> str:
    """What the fit's table says about a reported identified set, in one paragraph."""
    floors = ", ".join(f"{f:.2f}" for f in r.reference_floor)
    flag = f" (the fit flags it {r.reason})" if r.reason else ""
    floor_words = (f"each annotator column right on at least {floors} of its items (a lower bound on its "
                   f"accuracy from the fit's posterior: the floors rest on the model, not on the annotations alone)")
    if r.error_lift is not None:
        return (
            f"true_accuracy: without gold items the data do not say how the classifier's errors overlap "
            f"the annotators'{flag}. Reported: [{r.lower:.3f}, {r.upper:.3f}], the range the annotations "
            f"allow under the stated assumption that {lift_words(r.error_lift)}, with {floor_words}, joined "
            f"with the posterior's interval [{r.posterior_lower:.3f}, {r.posterior_upper:.3f}]. It holds only "
            f"if the assumption does; without it the range is wider (summary() at its defaults)."
            + _gold_words(r, without_assumption=True)
        )
    narrow = (". An assumption about the overlap would narrow it (independent errors, or trusting the priors, "
              "give the posterior's interval).")
    assumed = ""
    if r.upper - r.lower < ZERO_WIDTH:  # no width: nothing for an assumption to narrow
        narrow = "."
    elif np.isfinite(r.assumed_lower):
        if _shown(r.assumed_lower, r.assumed_upper) == _shown(r.lower, r.upper):
            assumed = (f" Assuming that {lift_words(ERROR_LIFT)} (shared errors, at most twice as often as by "
                       "chance) does not narrow it here.")
        else:
            assumed = (f" Assuming that {lift_words(ERROR_LIFT)} (shared errors, at most twice as often as by "
                       f"chance) narrows it to [{r.assumed_lower:.3f}, {r.assumed_upper:.3f}] "
                       f"(summary(error_lift={ERROR_LIFT!r})).")
    return (
        f"true_accuracy: without gold items the data do not say how the classifier's errors overlap "
        f"the annotators'{flag}, and the posterior's interval [{r.posterior_lower:.3f}, "
        f"{r.posterior_upper:.3f}] rests on the model's answer. Reported instead: [{r.lower:.3f}, "
        f"{r.upper:.3f}], the range the annotations allow whatever the overlap of the classifier's errors "
        f"with the annotators', given {floor_words}"
        + ("" if (r.lower, r.upper) == (r.set_lower, r.set_upper) else
           f", joined with the posterior's interval (the range alone: [{r.set_lower:.3f}, {r.set_upper:.3f}])")
        + narrow
        + assumed
        + _gold_words(r, without_assumption=False)
    )


def _not_widened(rows, guarded: str, posterior: tuple[float, float], allowed: str) -> str:
    """The sentence of :func:`unguarded_sentence` and :func:`unguarded_gold_sentence`: ``rows``
    are not widened, only the accuracy is (``guarded`` says how), and how far the model's
    picture can be off (the accuracy's ``posterior`` interval beside what ``allowed`` quotes)."""
    rows = list(rows)
    names = ", ".join(str(x) for x in rows[:6]) + (f" and {len(rows) - 6} more" if len(rows) > 6 else "")
    these, rest, they = ("this row is the posterior's own interval", "rests", "It") if len(rows) == 1 else (
        "these rows are the posterior's own intervals", "rest", "They")
    return (
        f"{names}: not widened. {guarded}; {these}, which {rest} on the model's picture of how the "
        f"classifier's errors overlap the annotators' -- the picture that gives the accuracy's posterior "
        f"interval [{posterior[0]:.3f}, {posterior[1]:.3f}] where {allowed}. {they} can miss the truth by as "
        f"much as that posterior interval can."
    )


def unguarded_sentence(r: IdentifiedAccuracy, rows) -> str:
    """What a metric table without gold items says about its rows other than the accuracy:
    they are the posterior's, not widened to what the annotations identify."""
    them = "it" if len(list(rows)) == 1 else "them"
    gold = (f" About {r.gold_to_halve} random gold items (refit with gold=...) would check {them}, as they would "
            "halve the accuracy's range." if r.upper - r.lower >= ZERO_WIDTH else
            f" Random gold items (refit with gold=...) would check {them}.")
    return _not_widened(
        rows, "Without gold items only the accuracy is reported as the range the annotations identify",
        (r.posterior_lower, r.posterior_upper), f"the annotations allow [{r.lower:.3f}, {r.upper:.3f}]") + gold


def unguarded_gold_sentence(g, rows) -> str:
    """What a metric table with gold items says about its rows other than the accuracy: only
    the accuracy is guarded (``g``, a :class:`~bayeval.annotators.gold.GuardedAccuracy`); the
    other rows are the posterior's, not widened to what the gold items allow."""
    return _not_widened(
        rows, f"With gold items only the accuracy is guarded (widened to hold the {g.n_gold} gold items' "
        f"own interval as well as the posterior's)", (g.posterior_lower, g.posterior_upper),
        f"the {g.n_gold} gold items alone allow [{g.gold_lower:.3f}, {g.gold_upper:.3f}]")
