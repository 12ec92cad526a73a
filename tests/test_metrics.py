"""Metric kernels: equal to scikit-learn on 1-D input (ties included), batched = per
slice, degenerate cases as documented, and the active-testing closed forms."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn import metrics as skm

from bayeval.core import metrics as M


@st.composite
def labelled(draw, min_size=1, max_size=40, tie_levels=None):
    """Labels and scores with many ties (scores from a small set of values)."""
    n = draw(st.integers(min_size, max_size))
    levels = tie_levels or draw(st.integers(1, 8))
    scores = draw(arrays(np.int64, n, elements=st.integers(0, levels))).astype(float) / levels
    labels = draw(arrays(np.int8, n, elements=st.integers(0, 1)))
    return labels, scores


def _quiet(fn, *a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*a, **k)


@settings(max_examples=200, deadline=None)
@given(labelled())
def test_average_precision_equals_sklearn(case):
    z, s = case
    assert M.average_precision(z, s) == pytest.approx(_quiet(skm.average_precision_score, z, s), abs=1e-12)


@pytest.mark.parametrize("n", [64, 65, 100, 257])
def test_average_precision_in_item_blocks_carries_the_true_positives(monkeypatch, n):
    """Without ties the kernel sums blocks of items, carrying the true positives across
    them: with blocks of 64 items, every row equals scikit-learn and the one-block sum."""
    rng = np.random.default_rng(n)
    s = rng.permutation(n).astype(float)
    z = (rng.uniform(size=(6, n)) < 0.3).astype(np.int8)
    z[0] = 0
    z[1, :] = 0
    z[1, -1] = 1  # one positive, in the last block
    whole = M.average_precision(z, s)
    monkeypatch.setattr(M, "_AP_ITEM_BLOCK", 64)
    blocked = M.average_precision(z, s)
    assert blocked == pytest.approx(whole, abs=1e-14)
    for row, got in zip(z, blocked, strict=True):
        want = _quiet(skm.average_precision_score, row, s) if row.any() else 0.0
        assert got == pytest.approx(want, abs=1e-12)


def test_average_precision_state_without_ties_keeps_two_arrays():
    """Prepared once per evaluation set (and on every Dask worker): without ties only the
    order and 1/rank are kept, so a worker's memory is not seven arrays of N."""
    st = M.METRICS["average_precision"].prepare(np.array([0.3, 0.9, 0.1, 0.5]))
    assert st.rk.order.tolist() == [1, 3, 0, 2] and st.rk.ends is None and st.inv_counts is None
    assert st.inv_pad[:4].tolist() == [1.0, 0.5, 1 / 3, 0.25] and not st.inv_pad[4:].any()
    tied = M.METRICS["average_precision"].prepare(np.array([0.3, 0.3, 0.1]))
    assert tied.rk.has_ties and tied.inv_counts.tolist() == [0.5, 1 / 3]


@settings(max_examples=200, deadline=None)
@given(labelled())
def test_precision_recall_curve_equals_sklearn(case):
    z, s = case
    p_ref, r_ref, t_ref = _quiet(skm.precision_recall_curve, z, s)
    p, r, t = M.precision_recall_curve(z, s)
    np.testing.assert_allclose(t, t_ref)
    np.testing.assert_allclose(p, p_ref[:-1], atol=1e-12)
    np.testing.assert_allclose(r, r_ref[:-1], atol=1e-12)


@settings(max_examples=200, deadline=None)
@given(labelled())
def test_roc_equals_sklearn(case):
    z, s = case
    fpr_ref, tpr_ref, t_ref = _quiet(skm.roc_curve, z, s, drop_intermediate=False)
    fpr, tpr, t = M.roc_curve(z, s)
    np.testing.assert_array_equal(t, t_ref)
    np.testing.assert_allclose(fpr, fpr_ref, atol=1e-12)
    np.testing.assert_allclose(tpr, tpr_ref, atol=1e-12)
    auc = M.roc_auc(z, s)
    if 0 < z.sum() < z.size:
        assert auc == pytest.approx(skm.roc_auc_score(z, s), abs=1e-12)
    else:
        assert np.isnan(auc)  # sklearn raises: one class only


@settings(max_examples=200, deadline=None)
@given(labelled(), st.floats(0.0, 3.0), st.sampled_from([0.0, 1.0]))
def test_hard_prediction_metrics_equal_sklearn(case, beta, zd):
    z, s = case
    pred = (s >= 0.5).astype(np.int8)
    kw = {"zero_division": zd}
    assert M.precision(z, pred, **kw) == pytest.approx(skm.precision_score(z, pred, **kw))
    assert M.recall(z, pred, **kw) == pytest.approx(skm.recall_score(z, pred, **kw))
    assert M.f_score(z, pred, beta=beta, **kw) == pytest.approx(skm.fbeta_score(z, pred, beta=beta, **kw))
    assert M.accuracy(z, pred) == pytest.approx(skm.accuracy_score(z, pred))


def _slow_precision_at_k(z, s, k):
    # obvious reference: stable sort by descending score, count the first k, divide by k
    order = sorted(range(len(s)), key=lambda i: (-s[i], i))
    return sum(z[i] for i in order[:k]) / k


@settings(max_examples=200, deadline=None)
@given(labelled(), st.integers(1, 50))
def test_precision_and_recall_at_k_against_loop(case, k):
    z, s = case
    assert M.precision_at_k(z, s, k=k) == pytest.approx(_slow_precision_at_k(z, s, k))
    n_pos = z.sum()
    expected = _slow_precision_at_k(z, s, k) * k / n_pos if n_pos else 0.0
    assert M.recall_at_k(z, s, k=k) == pytest.approx(expected)


def test_precision_at_k_breaks_ties_by_item_order():
    s = np.array([0.5, 0.5, 0.5, 0.1])
    assert M.precision_at_k(np.array([1, 0, 0, 0]), s, k=1) == 1.0
    assert M.precision_at_k(np.array([0, 1, 0, 0]), s, k=1) == 0.0


def test_precision_at_k_beyond_n_items_divides_by_k():
    assert M.precision_at_k(np.array([1, 1]), np.array([0.2, 0.1]), k=4) == 0.5
    np.testing.assert_allclose(M.precision_at_k(np.array([1, 0, 1]), np.array([3.0, 2, 1]), k=[1, 2, 5]), [1, 0.5, 0.4])


@settings(max_examples=150, deadline=None)
@given(labelled(min_size=2))
def test_precision_at_recall_against_sklearn_curve(case):
    z, s = case
    grid = np.linspace(0, 1, 11)
    got = M.precision_at_recall(z, s, recall=grid)
    got_i = M.precision_at_recall(z, s, recall=grid, interpolate=True)
    p, r, _ = _quiet(skm.precision_recall_curve, z, s)
    p, r = p[:-1][::-1], r[:-1][::-1]  # descending thresholds: recall non-decreasing
    for j, level in enumerate(grid):
        first = np.flatnonzero(r >= level - 1e-12)[0]
        assert got[j] == pytest.approx(p[first])
        assert got_i[j] == pytest.approx(p[first:].max())


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 30), st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_batched_equals_per_slice(n, d, seed):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 5, n) / 5.0
    z = (rng.random((2, d, n)) < 0.4).astype(np.int8)
    pred = (s > 0.3).astype(np.int8)
    grid = np.array([0.0, 0.3, 0.77, 1.0])
    cases = [
        (M.average_precision, (s,), {}),
        (M.precision_at_k, (s,), {"k": [1, 3, 40]}),
        (M.recall_at_k, (s,), {"k": 2}),
        (M.precision_at_recall, (s,), {"recall": grid}),
        (M.roc_auc, (s,), {}),
        (M.precision, (pred,), {}),
        (M.recall, (pred,), {}),
        (M.f_score, (pred,), {"beta": 0.5}),
        (M.accuracy, (pred,), {}),
    ]
    for fn, args, kw in cases:
        batched = fn(z, *args, **kw)
        for i in range(2):
            for j in range(d):
                np.testing.assert_allclose(batched[i, j], fn(z[i, j], *args, **kw), atol=1e-12, err_msg=fn.__name__)
    p, r, t = M.precision_recall_curve(z, s, thresholds=[0.1, 0.5, 2.0])
    for i in range(2):
        for j in range(d):
            p1, r1, _ = M.precision_recall_curve(z[i, j], s, thresholds=[0.1, 0.5, 2.0])
            np.testing.assert_allclose(p[i, j], p1)
            np.testing.assert_allclose(r[i, j], r1)


def test_pr_curve_on_threshold_grid_matches_rule():
    rng = np.random.default_rng(3)
    s = rng.random(50)
    z = (rng.random((7, 50)) < 0.3).astype(np.int8)
    t = np.array([-1.0, 0.2, 0.5, 0.99, 1.5])
    p, r, _ = M.precision_recall_curve(z, s, thresholds=t)
    for j, tj in enumerate(t):
        pred = (s >= tj).astype(np.int8)
        if pred.sum():
            np.testing.assert_allclose(p[:, j], [skm.precision_score(row, pred) for row in z])
        else:
            assert np.all(p[:, j] == 1.0)  # documented zero_division of the curve
        np.testing.assert_allclose(r[:, j], [_quiet(skm.recall_score, row, pred) for row in z])


def test_degenerate_draws():
    s = np.array([0.9, 0.4, 0.4, 0.1])
    none = np.zeros(4, dtype=np.int8)
    assert M.average_precision(none, s) == 0.0  # as sklearn
    assert M.recall_at_k(none, s, k=2) == 0.0
    assert np.isnan(M.recall_at_k(none, s, k=2, zero_division=np.nan))
    assert np.isnan(M.roc_auc(none, s))
    assert M.precision(none, np.zeros(4, dtype=np.int8)) == 0.0
    assert M.f_score(none, np.zeros(4, dtype=np.int8), zero_division=1.0) == 1.0
    np.testing.assert_array_equal(M.precision_at_recall(none, s, recall=[0, 0.5, 1]), [0, 0, 0])


def test_input_errors_are_clear():
    s = np.array([0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="only 0 and 1"):
        M.average_precision(np.array([0, 2, 1]), s)
    with pytest.raises(ValueError, match="NaN"):
        M.average_precision(np.array([0, np.nan, 1]), s)
    with pytest.raises(ValueError, match="same items"):
        M.average_precision(np.array([0, 1]), s)
    with pytest.raises(ValueError, match="finite"):
        M.average_precision(np.array([0, 1, 1]), np.array([0.1, np.inf, 0.2]))
    with pytest.raises(ValueError, match=">= 1"):
        M.precision_at_k(np.array([0, 1, 1]), s, k=0)
    with pytest.raises(TypeError, match="positive integer"):
        M.precision_at_k(np.array([0, 1, 1]), s, k="3")
    with pytest.raises(ValueError, match=r"\[0.0, 1.0\]"):
        M.precision_at_recall(np.array([0, 1, 1]), s, recall=[0.5, 1.5])
    with pytest.raises(ValueError, match="zero_division"):
        M.precision(np.array([0, 1, 1]), np.array([1, 0, 0]), zero_division=0.5)
    with pytest.raises(ValueError, match="beta"):
        M.f_score(np.array([0, 1, 1]), np.array([1, 0, 0]), beta=-1)


# ---------------------------------------------------------- paper's closed forms


def test_expected_precision_at_k_closed_form():
    """E[P@K] = (1/K)(sum of vetted labels + sum of p_i) over the top K (supplement eq. 4)."""
    rng = np.random.default_rng(11)
    n, draws, k = 60, 40_000, 15
    s = rng.normal(size=n)
    p = rng.uniform(0.05, 0.95, n)
    vetted = rng.random(n) < 0.3
    p[vetted] = rng.integers(0, 2, vetted.sum())  # vetted items: known labels
    z = (rng.random((draws, n)) < p).astype(np.int8)
    values = M.precision_at_k(z, s, k=k)
    top = np.argsort(-s)[:k]
    expected = p[top].sum() / k
    se = values.std() / np.sqrt(draws)
    assert abs(values.mean() - expected) < 4 * se


def test_expected_average_precision_closed_form():
    """E[N_p * AP] = sum_k (1/k) E[z_k sum_{i<=k} z_i] = sum_k (p_k + p_k sum_{i<k} p_i)/k
    under independent labels (supplement, before dividing by N_p)."""
    rng = np.random.default_rng(12)
    n, draws = 50, 40_000
    s = rng.normal(size=n)
    p = rng.uniform(0.05, 0.95, n)
    z = (rng.random((draws, n)) < p).astype(np.int8)
    unnormalized = M.average_precision(z, s) * z.sum(axis=1)
    ps = p[np.argsort(-s)]
    before = np.cumsum(ps) - ps
    expected = np.sum((ps + ps * before) / np.arange(1, n + 1))
    se = unnormalized.std() / np.sqrt(draws)
    assert abs(unnormalized.mean() - expected) < 4 * se
    # and a wrong closed form (the compact p_k * E[P@k], which squares p_k) is rejected
    wrong = np.sum(ps * np.cumsum(ps) / np.arange(1, n + 1))
    assert abs(unnormalized.mean() - wrong) > 4 * se


def test_large_inputs_use_blocks_consistently():
    """Many rows x items (several internal blocks) equal the row-by-row values."""
    rng = np.random.default_rng(5)
    n = 70_001  # not a multiple of the segment width
    s = rng.normal(size=n)
    z = (rng.random((40, n)) < 0.2).astype(np.int8)
    ap = M.average_precision(z, s)
    for i in (0, 17, 39):
        assert ap[i] == pytest.approx(skm.average_precision_score(z[i], s), abs=1e-12)
    par = M.precision_at_recall(z, s, recall=[0.25, 0.9])
    p, r, _ = skm.precision_recall_curve(z[3], s)
    p, r = p[:-1][::-1], r[:-1][::-1]
    assert par[3, 1] == pytest.approx(p[np.flatnonzero(r >= 0.9 - 1e-12)[0]])


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 40), st.integers(0, 2**32 - 1), st.floats(0.0, 1.0))
def test_precision_at_recall_without_ties_against_sklearn(n, seed, prevalence):
    """The no-ties fast path (ranks of the positives) against scikit-learn's curve."""
    rng = np.random.default_rng(seed)
    s = rng.permutation(n).astype(float)  # distinct scores
    z = (rng.random((5, n)) < prevalence).astype(np.int8)
    grid = np.array([0.0, 0.1, 1 / 3, 0.5, 0.9, 1.0])
    for interpolate in (False, True):
        got = M.precision_at_recall(z, s, recall=grid, interpolate=interpolate)
        for i, row in enumerate(z):
            p, r, _ = _quiet(skm.precision_recall_curve, row, s)
            p, r = p[:-1][::-1], r[:-1][::-1]
            for j, level in enumerate(grid):
                first = np.flatnonzero(r >= level - 1e-12)[0]
                want = p[first:].max() if interpolate else p[first]
                assert got[i, j] == pytest.approx(want), (interpolate, i, level)
