"""Input checks of the F-score estimators (``acis`` and its baselines): the pool, the oracle
and its answers, the budget and the stopping target. Generic array checks come from
:mod:`bayeval.core._validate`."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator

import numpy as np
import pandas as pd

from bayeval.core import _validate as V
from bayeval.core._diagnostics import user_stacklevel
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
    """Checks shared by ``acis`` and the baselines; returns clean arrays and numbers, and the
    oracle as a :class:`PoolOracle`. Pandas ``scores`` and ``predictions`` are paired by their
    index (``align_pool``), not by position."""
    scores, predictions = align_pool(("scores", scores), ("predictions", predictions))
    ids = next((v.index for v in (scores, predictions) if isinstance(v, pd.Series | pd.DataFrame)), None)
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
    return s, yhat, alpha, first_batch, budget, interval_prob, PoolOracle(oracle, ids)


def check_score_spread(s: np.ndarray, yhat: np.ndarray, method: str) -> None:
    """Refuse scores that cannot rank the items: all equal, or two values that split the pool
    exactly as the predictions do (the 0/1 predictions passed as scores)."""
    lo, hi = float(s.min()), float(s.max())
    if lo == hi:
        what = f"are all equal ({lo:g})"
    elif np.all((s == lo) | (s == hi)) and np.array_equal(s == hi, yhat == 1):
        what = f"hold only two values, {lo:g} and {hi:g}, which split the items exactly as `predictions` do"
    else:
        return
    raise ValueError(
        f"`scores` {what}: {method} draws the items by their scores, so scores that do not rank the items "
        "inside each prediction give it nothing to sample by, and its estimate and interval would be wrong. Pass the classifier's continuous scores (e.g. `model.predict_proba(X)[:, 1]` or "
        "`model.decision_function(X)`), not its 0/1 predictions; with no scores at all, use `uniform_sampling`."
    )


def warn_no_true_positive(labeled, minimum: int = 10) -> None:
    """Warn when at least ``minimum`` labelled predicted positives came back and none is a
    positive: the estimate is then 0 with a zero-width interval, which is more often a broken
    oracle (labels looked up by label, not position) than a classifier that is always wrong."""
    pred = labeled["prediction"].to_numpy() == 1
    n_pred = int(pred.sum())
    if n_pred >= minimum and not np.any(labeled["label"].to_numpy()[pred] == 1):
        warnings.warn(
            f"None of the {n_pred} labelled predicted positives came back positive, so the F-score estimate is 0. "
            "If the classifier is not that wrong, check the oracle: "
            f"{BY_POSITION}",
            UserWarning,
            stacklevel=user_stacklevel(),
        )


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


#: How to look labels up by position, for the errors and warnings about an oracle.
BY_POSITION = (
    "The oracle receives positions 0 .. n-1 in the order of `scores`: with the labels in a pandas "
    "Series `y`, `y[idx]` looks `idx` up in its index, not by position; use `y.to_numpy()[idx]` "
    "or `y.iloc[idx]`."
)
#: What an oracle may answer per item (:func:`bayeval.core._validate.label_cell`).
ANSWERS = "1 or 0 (also True/False, 1.0/0.0 and the text '1'/'0'/'true'/'false' in any case)"


class PoolOracle:
    """The user's oracle, with the ids of the pool's items (the pandas index that ``scores``
    or ``predictions`` came with, else None), as :func:`check_fscore_inputs` returns it; a
    PoolOracle passed in again keeps its ids."""

    def __init__(self, oracle, ids=None):
        if isinstance(oracle, PoolOracle):
            oracle, ids = oracle.oracle, oracle.ids if ids is None else ids
        self.oracle, self.ids, self.warned = oracle, ids, False

    def __call__(self, idx):
        return self.oracle(idx)


def answer_values(answers) -> np.ndarray:
    """Each answer as 1.0 / 0.0, or NaN where it is not a label (:data:`ANSWERS`)."""
    arr = answers if isinstance(answers, np.ndarray) else np.asarray(answers, dtype=object)
    if arr.dtype == bool:
        return arr.astype(np.float64)
    if arr.dtype.kind in "iuf":
        lab = arr.astype(np.float64)
        lab[(lab != 0) & (lab != 1)] = np.nan
        return lab
    return V.parse_label_cells(arr, allow_empty=False)[0]


def read_answers(oracle, items: np.ndarray):
    """Call the oracle on ``items``: its output, read one answer at a time when it yields them
    (a generator). On any exception the answers read before it ride on the exception as
    ``bayeval_answers`` (one per item, NaN where none came), and a KeyError or IndexError
    gets a note on looking labels up by position."""
    given = []
    try:
        out = oracle(items.copy())
        if isinstance(out, Iterator):  # a generator: a person answering one item at a time
            for v in out:
                given.append(v)
                if len(given) > items.size:
                    break
            out = given
    except BaseException as exc:
        got = np.full(items.size, np.nan)
        got[: len(given)] = answer_values(given)[: items.size]
        exc.bayeval_answers = got
        if isinstance(exc, KeyError | IndexError):
            exc.add_note(f"(from the oracle, asked for positions such as {V.preview(items, 3)}) {BY_POSITION}")
        raise
    return out


def check_pandas_answers(oracle, out, items: np.ndarray) -> None:
    """Warn once per run when the oracle's pandas output is indexed by the positions it was asked
    while the pool's ids at those positions are other labels: ``y[idx]`` read by label."""
    ids = oracle.ids if isinstance(oracle, PoolOracle) else None
    if ids is None or oracle.warned or not isinstance(out, pd.Series | pd.DataFrame) or len(out) != items.size:
        return
    asked_ids = np.asarray(ids)[items]
    got = out.index.to_numpy()
    if np.array_equal(got, items) and not np.array_equal(got, asked_ids):
        oracle.warned = True
        warnings.warn(
            f"`oracle` returned a pandas object indexed by the positions it was asked ({V.preview(items, 3)}), "
            f"but the items at those positions have the ids {V.preview(asked_ids, 3)} in `scores`' index: it "
            f"likely looked the labels up by label, so they belong to other items. {BY_POSITION}",
            UserWarning,
            stacklevel=user_stacklevel(),
        )


def call_oracle(oracle, items: np.ndarray) -> np.ndarray:
    """Ask the oracle for the labels of ``items`` and check what comes back.

    ``oracle`` is the user's callable or a :class:`PoolOracle`. Whatever breaks the call (the
    oracle raises, is interrupted, or returns answers that are not labels), the answers that
    are labels ride on the exception as ``bayeval_answers`` (``read_answers``)."""
    out = read_answers(oracle, items)
    check_pandas_answers(oracle, out, items)
    if isinstance(out, pd.Series | pd.DataFrame):
        out = out.to_numpy()
    try:
        arr = np.asarray(out, dtype=object) if isinstance(out, list) else np.asarray(out)
    except Exception as exc:  # ragged output and the like
        raise TypeError(f"`oracle` returned something that is not an array ({exc}).") from exc
    if arr.shape != items.shape:
        exc = ValueError(
            f"`oracle` must return one 0/1 label per requested item: it was asked for "
            f"{items.size} item(s) and returned {V.describe(arr)}. Return e.g. "
            "`y_true[idx]` for the int array `idx` it receives, or yield one answer per item."
        )
        if isinstance(out, list) and len(out) < items.size:  # a generator that stopped early
            exc.bayeval_answers = np.r_[answer_values(out), np.full(items.size - len(out), np.nan)]
        raise exc
    lab = answer_values(arr)
    bad = np.flatnonzero(np.isnan(lab))
    if bad.size:
        shown = ", ".join(f"item {items[k]} (answer {k + 1} of {items.size}): {V.preview(arr[k : k + 1])}"
                          for k in bad[:5])
        exc = ValueError(
            f"`oracle` must return labels in {{0, 1}}: {ANSWERS} for each item asked, but {bad.size} of the "
            f"{items.size} answers are not: {shown}{', ...' if bad.size > 5 else ''}. "
            + ("The other answers are kept (see this error's notes). " if bad.size < items.size else "")
            + "Map your classes to 0/1 inside the oracle (e.g. `1 if a == 'yes' "
            "else 0` once `a` is known to be 'yes' or 'no'), and ask again for the items named."
        )
        exc.bayeval_answers = lab
        raise exc
    return lab.astype(np.int8)


@contextlib.contextmanager
def keep_labels(book, method: str):
    """Re-raise any error of a run with the labels bought so far attached.

    The oracle may be a person: whatever fails (the oracle itself, its output, a
    ``probabilities`` callable), the labels of the completed batches and those the oracle
    gave in the batch that broke off (the book's ``ask``) come back on the exception as
    ``exc.labeled`` (the ``labeled`` table of a result).
    """
    try:
        yield
    except BaseException as exc:  # KeyboardInterrupt too: a person stopping mid-run
        exc.labeled = book.labeled_frame()
        extra = 0 if book.partial is None else book.partial[0].size
        exc.add_note(
            f"{method}: stopped with {book.n_labeled + extra} label(s) ({book.n_labeled} in completed batches, "
            f"{extra} given in the batch that broke off); they are in this exception's `.labeled` (a DataFrame: "
            "item, label, prediction, score, batch, ...). To go on, see 'What survives a failure' in docs/acis.md."
        )
        raise
