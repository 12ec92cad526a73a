"""The sampling design of ACIS and the Sawade baseline: doubling batch sizes, the
isotonic calibration and its prior, Sawade's variance-minimizing proposal, inclusion
probabilities and systematic sampling without replacement, and the top-K domain's
order. How they fit together: ``docs/acis.md``."""

from __future__ import annotations

import numpy as np
from scipy.optimize import isotonic_regression

from bayeval.core._defaults import tie_order

#: Lower clip of the F estimate plugged into the proposal, so that predicted
#: negatives (whose proposal weight is proportional to G) never get zero mass.
G_FLOOR = 0.05
#: Inclusion probabilities within this distance of 1 are treated as certainties.
CERTAIN = 1.0 - 1e-12


def batch_sizes(budget: int, first_batch: int) -> list[int]:
    """Doubling batch sizes, the last one cut so that they sum to ``budget``."""
    sizes, b, spent = [], first_batch, 0
    while spent < budget:
        take = min(b, budget - spent)
        sizes.append(take)
        spent += take
        b *= 2
    return sizes


def group_ties(x_sorted: np.ndarray, y_sorted: np.ndarray):
    """Unique x values of a sorted array, their counts and the mean y per value."""
    starts = np.flatnonzero(np.r_[True, x_sorted[1:] != x_sorted[:-1]])
    counts = np.diff(np.r_[starts, x_sorted.size])
    means = np.add.reduceat(y_sorted, starts) / counts
    return x_sorted[starts], counts, means


def isotonic_fit(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Isotonic (non-decreasing) fit of y on x; returns knots and fitted values."""
    order = np.argsort(x, kind="stable")
    ux, counts, means = group_ties(x[order], y[order].astype(np.float64))
    fit = isotonic_regression(means, weights=counts.astype(np.float64), increasing=True).x
    return ux, np.clip(fit, 0.0, 1.0)


def calibration_prior(s: np.ndarray, yhat: np.ndarray) -> np.ndarray:
    """Isotonic fit of the predicted labels on the scores, evaluated at every item."""
    neg, pos = s[yhat == 0], s[yhat == 1]
    if neg.size == 0 or pos.size == 0 or neg.max() < pos.min():
        # Predictions are a threshold of the scores: the fit is the predictions themselves.
        return yhat.astype(np.float64)
    ux, fit = isotonic_fit(s, yhat)
    return fit[np.searchsorted(ux, s)]


def sawade_proposal(c: np.ndarray, yhat: np.ndarray, g: float, alpha: float) -> np.ndarray:
    """Sawade's variance-minimizing importance weights for F_alpha (unnormalized).

    ``q^2`` is linear in ``c`` within each prediction cell: for predicted positives
    ``c (1 - g)^2 + alpha^2 (1 - c) g^2``, for predicted negatives
    ``(1 - alpha)^2 c g^2``. Computed for all items as negatives, then fixed up at
    the (usually few) predicted positives.
    """
    g = min(max(g, G_FLOOR), 1.0)
    a1 = alpha**2 * g**2
    q2 = c * ((1.0 - alpha) ** 2 * g**2)
    pos = np.flatnonzero(yhat)
    q2[pos] = np.maximum(a1 + ((1.0 - g) ** 2 - a1) * c[pos], 0.0)
    return np.sqrt(q2, out=q2)


def inclusion_probabilities(q: np.ndarray, n: int) -> np.ndarray:
    """Probabilities proportional to ``q``, capped at 1, summing to ``n``."""
    m = q.size
    if n >= m:
        return np.ones(m)
    total = q.sum()
    if n * q.max() < total:  # no probability reaches 1: plain proportional allocation
        return q * (n / total)
    # Largest n weights, descending: some of them may have to be capped at 1.
    top = np.argpartition(-q, n - 1)[:n]
    top = top[np.argsort(-q[top], kind="stable")]
    q_top = q[top]
    k = np.arange(n)
    rest = total - np.r_[0.0, np.cumsum(q_top)[:-1]]  # sum of q outside the k largest
    lam = (n - k) / rest
    # Smallest k such that, with the k largest capped, the next one stays below 1.
    ok = lam * q_top < 1.0
    k_cap = int(np.argmax(ok)) if ok.any() else n
    pi = np.minimum(lam[k_cap] * q, 1.0) if k_cap < n else np.zeros(m)
    pi[top[:k_cap]] = 1.0
    return pi


def systematic_sample(pi: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """Positions of an exact-size sample with inclusion probabilities ``pi``.

    Certainties are taken; the others are drawn by systematic sampling along the
    order in which they are given (the caller passes the candidates in a random
    order: randomized systematic pips sampling). The first-order inclusion
    probabilities are exactly ``pi`` and no item is drawn twice.
    """
    if pi.max() < CERTAIN:  # the common case on large pools: no certainties
        certain, rest, m = np.empty(0, dtype=np.intp), None, n
        cum = np.cumsum(pi)
    else:
        uncertain = pi < CERTAIN
        certain = np.flatnonzero(~uncertain)
        m = n - certain.size
        if m <= 0:
            return certain[:n]
        rest = np.flatnonzero(uncertain)
        cum = np.cumsum(pi[rest])
    cum *= m / cum[-1]
    points = rng.random() + np.arange(m)
    chosen = np.searchsorted(cum, points, side="right")
    if rest is not None:
        chosen = rest[chosen]
    picked = np.r_[certain, chosen]
    if np.unique(picked).size != n:  # pragma: no cover - guards a numerical invariant
        raise RuntimeError("internal error: systematic sampling drew an item twice.")
    return picked


def typical_draws(pi: np.ndarray, c: np.ndarray, yhat: np.ndarray) -> dict:
    """Typical weight and finite-population factor of a draw of each kind.

    For true positives, false positives and false negatives: the inclusion
    probabilities of the non-certainty candidates that could be of that kind
    (predicted positives, predicted positives, predicted negatives), averaged with
    weights ``c``, ``1 - c`` and ``c`` (the calibrated probability of being of that
    kind). Returned as ``(1 / pbar, 1 - pbar)``, or None if there is no candidate.
    """
    cell = yhat.astype(np.intp) + 2 * (pi >= CERTAIN)  # 0, 1: uncertain cells
    sums = [np.bincount(cell, weights=w, minlength=4)[:2] for w in (c * pi, c, pi)]
    count = np.bincount(cell, minlength=4)[:2]
    c_pi, c_sum, pi_sum = sums

    def typ(num, den):
        if den <= 0 or num <= 0:
            return None
        pbar = num / den
        return 1.0 / pbar, 1.0 - pbar

    return {
        "tp": typ(c_pi[1], c_sum[1]),
        "fp": typ(pi_sum[1] - c_pi[1], count[1] - c_sum[1]),
        "fn": typ(c_pi[0], c_sum[0]),
    }


def top_order(s: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` highest-scored items, by descending score; equal scores in the fixed
    pseudo-random order of :func:`bayeval.core._defaults.tie_order`, not by position.

    The domain grows along this order, so a tied group straddling a cut (the domain's
    end, or an iteration's) would otherwise send its first items in the file inside:
    in a label-sorted file, its positives. Without ties the order is the plain ranking.
    """
    n = s.size
    if k >= n:
        top = np.arange(n)
    else:
        kth = np.partition(s, n - k)[n - k]  # k-th largest value
        top = np.r_[np.flatnonzero(s > kth), np.flatnonzero(s == kth)]  # the whole tied group at the cut
    ranked = top[np.argsort(-s[top], kind="stable")]
    if np.any(s[ranked[1:]] == s[ranked[:-1]]):  # equal scores: by the fixed order instead
        ranked = top[np.lexsort((tie_order(n)[top], -s[top]))]  # (drawn only then: O(n))
    return ranked[:k]
