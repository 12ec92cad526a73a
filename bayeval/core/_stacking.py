"""Stacking weights averaged over Bayesian-bootstrap replicates of the labels they are fitted to.

Stacking chooses the mixture weights of several models that maximize the labels' summed
leave-one-out log score. With a few dozen labels that optimum jumps: when two models
predict the labels about equally well, another sample of labels could have put all the
weight on the other one. Averaging the optima of Bayesian-bootstrap replicates (each label's
log score reweighted by Dirichlet(1, ..., 1) weights) keeps weight on every model the labels
cannot rule out; with many labels the replicates agree and the average is the plain
optimum. Used by ``bayeval.fit`` (the score models' candidates) and by the annotator
model's gold-item check (the structured model against the gold items' own).
"""

from __future__ import annotations

import numpy as np

#: Weights on the first of two models that the replicates' optima are searched over.
_GRID = np.linspace(0.0, 1.0, 401)
#: Most EM iterations (more than two models). EM is slow only along a ridge of nearly equal
#: scores, where models predict alike and where on the ridge the weights stop changes little.
_EM_ITERATIONS = 300
#: Replicates x labels held in memory at once.
_BLOCK = 2_000_000


def bootstrap_stacking_weights(lpd: np.ndarray, random_seed, *, replicates: int, spawn_key: int) -> np.ndarray:
    """The mean of the stacking optima of ``replicates`` Bayesian-bootstrap replicates.

    ``lpd``: labels x models, each label's leave-one-out log predictive density under each
    model. The replicates' Dirichlet weights come from the seed sequence of ``random_seed``
    with ``spawn_key`` (each caller its own stream). Memory stays within a few
    ``_BLOCK``-sized arrays whatever the number of labels. Two models: each replicate's
    optimum is the best of 401 weights (step 1/400), exactly; more: EM on the mixture weights for
    all replicates at once, until no replicate's score rises by 1e-9 or after
    ``_EM_ITERATIONS`` (where models are alike the weights drift slowly along a ridge of
    equal scores, and where they stop there matters little). Weights below 1e-4 are set to 0.
    """
    lpd = np.asarray(lpd, dtype=np.float64)
    n, k = lpd.shape
    entropy = np.random.SeedSequence(random_seed).entropy
    rng = np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(spawn_key,)))
    if k == 2:
        if replicates * n <= _BLOCK:
            total = rng.dirichlet(np.ones(n), size=replicates) @ _grid_scores(lpd)
        else:  # many labels: the same optima (argmax ignores each replicate's scale) in chunks of labels
            total = np.zeros((replicates, _GRID.size))
            step = max(1, _BLOCK // max(replicates, _GRID.size))
            for lo in range(0, n, step):
                part = lpd[lo:lo + step]
                total += rng.standard_exponential((replicates, part.shape[0])) @ _grid_scores(part)
        first = float(_GRID[np.argmax(total, axis=1)].mean())
        w = np.array([first, 1.0 - first])
    else:
        e = np.exp(lpd - lpd.max(axis=1, keepdims=True))
        total = np.zeros(k)
        block = max(1, min(replicates, _BLOCK // max(n, 1)))
        done = 0
        while done < replicates:
            b = min(block, replicates - done)
            total += _em_optima(e, rng.dirichlet(np.ones(n), size=b)).sum(axis=0)
            done += b
        w = total / replicates
    w[w < 1e-4] = 0.0
    return w / w.sum()


def _grid_scores(lpd: np.ndarray) -> np.ndarray:
    """Each label's log score under each mixture weight of the grid (labels x grid)."""
    with np.errstate(divide="ignore"):
        score = np.logaddexp(np.log(_GRID)[None, :] + lpd[:, :1], np.log1p(-_GRID)[None, :] + lpd[:, 1:])
    return np.where(np.isfinite(score), score, -1e300)


def _em_optima(e: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Each row of ``u``'s (label weights summing to 1) stacking optimum for the densities
    ``e`` (labels x models), by EM from equal weights."""
    w = np.full((u.shape[0], e.shape[1]), 1.0 / e.shape[1])
    dens = w @ e.T
    score = np.sum(u * np.log(dens), axis=1)
    for _ in range(_EM_ITERATIONS):
        w = w * ((u / dens) @ e)  # each row stays on the simplex: the rows of u sum to 1
        dens = w @ e.T
        new = np.sum(u * np.log(dens), axis=1)
        if np.max(new - score) < 1e-9:
            break
        score = new
    return w
