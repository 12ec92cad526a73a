"""Input checks of the F-score estimators (``acis`` and its baselines): the pool, the oracle
and its answers, the budget and the stopping target. Generic array checks come from
:mod:`bayeval.core._validate`."""

from __future__ import annotations

import numpy as np

from bayeval.core import _validate as V
from bayeval.core._validate import as_binary_vector, as_scores, as_seed_sequence, check_same_length


def check_rng(random_seed) -> np.random.Generator:
    """The run's random stream, from any seed :func:`bayeval.core._validate.as_seed_sequence` reads."""
    return np.random.default_rng(as_seed_sequence(random_seed))


#: What a pandas mismatch error adds: which order the oracle's positions follow.
ORDER_HINT = (
    "(The oracle receives positions in the order of `scores` -- of the first pandas input -- so "
    "pandas inputs are paired by their index, as everywhere in bayeval.)"
)


def align_pool(*inputs: tuple[str, object]) -> list:
    """The per-item inputs of an F-score call (``(name, value)`` pairs, None for one not
    given), pandas objects paired by their index as :func:`bayeval.core._validate.align_by_index`
    pairs them: the same ids in another order are put in the first pandas input's order,
    anything that cannot be paired is a ValueError that says how to fix it."""
    try:
        return V.align_by_index(list(inputs))
    except ValueError as exc:
        raise ValueError(f"{exc} {ORDER_HINT}") from None


def check_fscore_inputs(scores, predictions, oracle, budget, alpha, first_batch, interval_prob):
    """Checks shared by ``acis`` and the baselines; returns clean arrays and numbers. Pandas
    ``scores`` and ``predictions`` are paired by their index (``align_pool``), not by position."""
    scores, predictions = align_pool(("scores", scores), ("predictions", predictions))
    s = as_scores(scores, "scores")
    yhat = as_binary_vector(predictions, "predictions")
    check_same_length(s.size, "predictions", yhat.size)
    if not callable(oracle):
        raise TypeError(
            "`oracle` must be a callable that takes an int array of item positions and "
            f"returns their 0/1 labels (e.g. `lambda idx: y_true[idx]`), got {V.describe(oracle)}."
        )
    n = s.size
    n_pred = int(yhat.sum())
    if n_pred == 0:
        raise ValueError(
            "`predictions` contains no predicted positive, so the F-score is 0 (if the "
            "pool holds any positive) or undefined; there is nothing to estimate. Check "
            "the threshold that produced the predictions."
        )
    alpha = V.as_real_in(
        alpha,
        "alpha",
        lo=0,
        hi=1,
        lo_open=True,
        hi_open=True,
        hint=" It weights precision against recall; 0.5 gives F1.",
    )
    first_batch = V.as_positive_int(first_batch, "first_batch", minimum=1)
    budget = V.as_positive_int(budget, "budget", minimum=1, hint=" It is the number of items to label.")
    if budget < first_batch:
        raise ValueError(
            f"`budget` ({budget}) is smaller than `first_batch` ({first_batch}); lower "
            "`first_batch` or raise the budget."
        )
    if budget > n:
        raise ValueError(
            f"`budget` ({budget}) exceeds the number of items in the pool ({n}); an item "
            "is labeled at most once. Use budget <= len(scores)."
        )
    interval_prob = V.as_real_in(interval_prob, "interval_prob", lo=0, hi=1, lo_open=True, hi_open=True)
    return s, yhat, alpha, first_batch, budget, interval_prob


def check_target(target_std_error):
    """``target_std_error``: None or a standard error in (0, 0.5]."""
    if target_std_error is None:
        return None
    return V.as_real_in(
        target_std_error,
        "target_std_error",
        lo=0,
        hi=0.5,
        lo_open=True,
        hi_open=False,
        hint=" It is the standard error at which to stop labeling, e.g. 0.05; None labels the whole budget.",
    )


def check_probability_vector(p, n: int, name: str) -> np.ndarray:
    return V.as_probability_vector(p, n, name)


def call_oracle(oracle, items: np.ndarray) -> np.ndarray:
    """Ask the oracle for the labels of ``items`` and check what comes back."""
    out = oracle(items.copy())
    try:
        arr = np.asarray(out)
    except Exception as exc:  # ragged output and the like
        raise TypeError(f"`oracle` returned something that is not an array ({exc}).") from exc
    if arr.shape != items.shape:
        raise ValueError(
            f"`oracle` must return one 0/1 label per requested item: it was asked for "
            f"{items.size} item(s) and returned {V.describe(arr)}. Return e.g. "
            "`y_true[idx]` for the int array `idx` it receives."
        )
    if arr.dtype == bool:
        return arr.astype(np.int8)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"`oracle` must return numeric 0/1 labels, got {V.describe(arr)}.")
    ok = (arr == 0) | (arr == 1)
    if not ok.all():
        bad = np.unique(arr[~ok])[:5]
        raise ValueError(
            "`oracle` must return labels in {0, 1} (or booleans), got values such as "
            f"{', '.join(repr(v.item()) for v in bad)}. Map your classes to 0/1 inside the oracle."
        )
    return arr.astype(np.int8)
