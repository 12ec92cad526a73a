"""What ACIS and its baselines do with the oracle's answers and the scores they are given: no
answer a person gave is dropped when a batch breaks off, text labels are read as predictions
are, a broken pandas lookup is pointed out, and scores that cannot rank the items are refused."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from bayeval.fscore.acis import acis, sawade, top_k, uniform_sampling

METHODS = [acis, sawade, uniform_sampling, top_k]


def small_pool(n=5000, seed=0):
    """A 2% pool with logistic scores (the docstring's shape, smaller)."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.02).astype(int)
    scores = 1 / (1 + np.exp(-(3.0 * y + rng.normal(-4.5, 1.0, n))))
    return scores, (scores > 0.2).astype(int), y


@pytest.fixture(scope="module")
def pool():
    return small_pool()


def person_stopping_at(y, typed, stop_at):
    """A person asked one item at a time (a generator oracle) who presses Ctrl-C when asked for
    item number ``stop_at + 1``."""

    def person(idx):
        for i in idx:
            if len(typed) == stop_at:
                raise KeyboardInterrupt
            typed.append((int(i), int(y[i])))
            yield int(y[i])

    return person


# ------------------------------------------------------------------ no answer is lost


@pytest.mark.parametrize("method", METHODS)
def test_answers_typed_before_a_ctrl_c_mid_batch_are_kept(pool, method):
    """(Was: the oracle had to return a whole batch; the 30 answers of the broken batch were lost,
    70 of 100 kept.)"""
    scores, predictions, y = pool
    typed = []
    with pytest.raises(KeyboardInterrupt) as info:
        method(scores, predictions, person_stopping_at(y, typed, 100), budget=300, random_seed=0)
    kept = info.value.labeled
    assert len(typed) == len(kept) == 100
    assert list(zip(kept["item"], kept["label"], strict=True)) == typed
    assert kept["batch"].tolist() == [1] * 10 + [2] * 20 + [3] * 40 + [4] * 30
    assert "30 given in the batch that broke off" in "".join(info.value.__notes__)


def test_a_generator_oracle_gives_the_same_run_as_an_array_oracle(pool):
    scores, predictions, y = pool
    a = acis(scores, predictions, lambda idx: y[idx], budget=150, random_seed=2)
    b = acis(scores, predictions, lambda idx: (int(y[i]) for i in idx), budget=150, random_seed=2)
    pd.testing.assert_frame_equal(a.labeled, b.labeled)
    assert a.estimate == b.estimate and a.intervals == b.intervals


@pytest.mark.parametrize("method", METHODS)
def test_a_batch_holding_a_nan_keeps_its_valid_answers_and_names_the_nan(pool, method):
    """(Was: the batch's 79 valid answers were dropped and the error said "got values such as nan"
    without naming the item.)"""
    scores, predictions, y = pool
    calls = []

    def person(idx):
        calls.append(np.asarray(idx).copy())
        out = y[idx].astype(float)
        if len(calls) == 4:
            out[-1] = np.nan  # the person skipped the last item of batch 4
        return out

    with pytest.raises(ValueError, match=r"1 of the 80 answers are not: item (\d+) \(answer 80 of 80\): nan") as info:
        method(scores, predictions, person, budget=300, random_seed=0)
    skipped = int(calls[3][-1])
    assert f"item {skipped} (answer 80 of 80)" in str(info.value)
    kept = info.value.labeled
    asked = np.concatenate(calls)[:-1]
    assert len(kept) == 149
    np.testing.assert_array_equal(kept["item"], asked)
    np.testing.assert_array_equal(kept["label"], y[asked])
    assert skipped not in set(kept["item"])


def test_a_run_goes_on_from_exc_labeled_with_the_same_seed(pool):
    """The recipe of docs/acis.md ("What survives a failure"): the earlier answers replayed, the
    person asked only for the rest, and the run is the one an uninterrupted person gives."""
    scores, predictions, y = pool
    typed = []
    with pytest.raises(KeyboardInterrupt) as info:
        acis(scores, predictions, person_stopping_at(y, typed, 45), budget=150, random_seed=5)
    known = dict(zip(info.value.labeled["item"], info.value.labeled["label"], strict=True))
    asked_again = []

    def resumed(idx):
        for i in idx:
            if i not in known:
                asked_again.append(int(i))
            yield known[i] if i in known else int(y[i])

    res = acis(scores, predictions, resumed, budget=150, random_seed=5)
    whole = acis(scores, predictions, lambda idx: y[idx], budget=150, random_seed=5)
    pd.testing.assert_frame_equal(res.labeled, whole.labeled)
    assert res.estimate == whole.estimate
    assert len(asked_again) == 150 - 45 and not set(asked_again) & set(known)


# ------------------------------------------------------------------ what an answer may be


@pytest.mark.parametrize(
    "as_given",
    [
        lambda v: [str(x) for x in v],  # what input() gives
        lambda v: np.where(v == 1, "TRUE", "false"),
        lambda v: v.astype(object),
        lambda v: [bool(x) for x in v],
    ],
    ids=["str-list", "true-false", "object-ints", "bool-list"],
)
def test_labels_are_read_as_predictions_are(pool, as_given):
    """(Was: TypeError "oracle must return numeric 0/1 labels, got an array of dtype <U1", and the
    batch was lost.)"""
    scores, predictions, y = pool
    a = acis(scores, predictions, lambda idx: y[idx], budget=70, random_seed=1)
    b = acis(scores, predictions, lambda idx: as_given(y[idx]), budget=70, random_seed=1)
    pd.testing.assert_frame_equal(a.labeled, b.labeled)
    assert a.estimate == b.estimate


def test_a_text_answer_that_is_not_a_label_is_named(pool):
    scores, predictions, y = pool
    answers = lambda idx: ["yes" if v else "no" for v in y[idx]]  # noqa: E731
    with pytest.raises(ValueError, match=r"10 of the 10 answers are not: item \d+ \(answer 1 of 10\): 'no'"):
        acis(scores, predictions, answers, budget=70, random_seed=1)


# ------------------------------------------------------------------ a broken lookup


def shuffled_frame(pool):
    scores, predictions, y = pool
    df = pd.DataFrame(dict(score=scores, pred=predictions, y=y))
    return df.sample(frac=1, random_state=1)  # the index is a permutation of 0 .. n-1


def test_a_label_lookup_on_a_shuffled_frame_is_pointed_out(pool):
    """(Was: estimate exactly 0, every interval (0, 0), std_error 0, no warning.)"""
    df = shuffled_frame(pool)
    with pytest.warns(UserWarning, match=r"indexed by the positions it was asked") as record:
        acis(df.score, df.pred, lambda idx: df.y[idx], budget=150, random_seed=0)
    assert any("y.to_numpy()[idx]" in str(w.message) for w in record)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        good = acis(df.score, df.pred, lambda idx: df.y.to_numpy()[idx], budget=150, random_seed=0)
    assert good.estimate > 0.3


@pytest.mark.parametrize("method", [acis, sawade, top_k])  # uniform labels too few predicted positives here
def test_no_true_positive_among_many_labelled_predicted_positives_is_pointed_out(pool, method):
    scores, predictions, _ = pool
    with pytest.warns(UserWarning, match=r"None of the \d+ labelled predicted positives came back positive"):
        res = method(scores, predictions, lambda idx: np.zeros(len(idx), int), budget=150, random_seed=0)
    assert res.estimate == 0.0


def test_a_key_error_in_the_oracle_says_how_to_look_up_by_position(pool):
    scores, predictions, y = pool
    labels = pd.Series(y, index=np.arange(y.size) + 10_000)
    with pytest.raises(KeyError) as info:
        acis(scores, predictions, lambda idx: labels[idx], budget=70, random_seed=0)
    assert "y.to_numpy()[idx]" in "".join(info.value.__notes__)


# ------------------------------------------------------------------ scores that cannot rank


@pytest.mark.parametrize("method", [acis, sawade])
@pytest.mark.parametrize(
    "make,match",
    [(lambda s, p: np.full(s.size, 0.5), "are all equal \\(0.5\\)"),
     (lambda s, p: p.astype(float), "only two values, 0 and 1, which split the items exactly as `predictions`")],
    ids=["constant", "predictions-as-scores"],
)
def test_scores_that_cannot_rank_the_items_are_refused(pool, method, make, match):
    """(Was: constant scores gave 0.076 [calibrated 0.010, 0.077] where F1 was 0.71, and 0/1
    predictions as scores 0.971, with only numpy's divide-by-zero warnings.)"""
    scores, predictions, y = pool
    with pytest.raises(ValueError, match=match) as info:
        method(make(scores, predictions), predictions, lambda idx: y[idx], budget=70, random_seed=0)
    assert "predict_proba(X)[:, 1]" in str(info.value)


def test_scores_with_two_values_that_are_not_the_predictions_are_accepted(pool):
    scores, predictions, y = pool
    two = (scores > 0.1).astype(float)  # a coarser split than the predictions': it still ranks
    acis(two, predictions, lambda idx: y[idx], budget=70, random_seed=0)
