"""Tests of bayeval.active.select: expected change of the estimate and the strategies.

Three kinds of checks for ``expected_change``:

* exact ones, on a "factorial" posterior whose draws enumerate the product
  distribution of independent labels with probabilities in quarters (every digit
  combination once), so Monte Carlo error is zero and values must match closed forms
  and brute-force enumerations to rounding;
* the identity with the empirical conditional means of any set of draws (exact);
* Monte Carlo ones on ordinary random draws, with tolerances of 5 standard errors of
  the sample covariance, SE(2 Cov(Q, z_i)) ~ 2 sd(Q) sd(z_i) / sqrt(n_draws).
"""

import importlib

import numpy as np
import pytest

from bayeval.active.select import STRATEGIES, expected_change, select
from bayeval.core import metrics
from bayeval.core.data import EvalData
from bayeval.core.posterior import Posterior

# the module itself (bayeval.active re-exports a function of the same name)
S = importlib.import_module("bayeval.active.select")

# ----------------------------------------------------------------- helpers


def factorial_posterior(data, quarters):
    """Posterior whose 4**m draws are exactly the product of Bernoulli(a_i / 4).

    Each of the m uncertain items (0 < a_i < 4) gets one base-4 digit of the draw
    index and is positive when its digit is < a_i; 2-D 0/1 probabilities make the
    label draws deterministic.
    """
    a = np.asarray(quarters)
    unc = np.flatnonzero((a > 0) & (a < 4))
    rows = 4**unc.size
    digits = (np.arange(rows)[:, None] // 4 ** np.arange(unc.size)) % 4
    p = np.tile((a == 4).astype(float), (rows, 1))
    p[:, unc] = digits < a[unc]
    return Posterior.from_probabilities(data, p)


def exact_probabilities(data, quarters):
    p = np.asarray(quarters) / 4.0
    return np.where(data.vetted, data.labels, p)


def brute_force_change(metric_fn, p):
    """E_{z_i} |E[Q | z_i] - E[Q]| by enumerating all 2**n label vectors (independent)."""
    n = p.size
    z = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1).astype(np.int8)
    w = np.prod(np.where(z == 1, p, 1 - p), axis=1)
    q = np.asarray(metric_fn(z), dtype=float)
    eq = w @ q
    out = np.zeros(n)
    for i in range(n):
        for v in (0, 1):
            wv = w * (z[:, i] == v)
            if wv.sum() > 0:
                out[i] += wv.sum() * abs(wv @ q / wv.sum() - eq)
        # the identity the implementation relies on: E|change| = 2 |Cov(Q, z_i)|
        assert out[i] == pytest.approx(2 * abs(w @ (q * z[:, i]) - eq * p[i]), abs=1e-12)
    return out, q, w


def ap_fixed_np(labels, scores, *, n_pos):
    """The paper's AP with a fixed number of positives (no ties): sum_k z_k P@k / N_p."""
    order = np.argsort(-scores, kind="stable")
    z = np.asarray(labels)[:, order].astype(float)
    tp = np.cumsum(z, axis=1)
    return (z * tp / np.arange(1, z.shape[1] + 1)).sum(axis=1) / n_pos


def empirical_change(q, z):
    """sum_v P(z_i=v) |mean(Q | z_i=v) - mean(Q)| over the given draws, item by item."""
    out = np.zeros(z.shape[1])
    for i in range(z.shape[1]):
        for v in (0, 1):
            sel = z[:, i] == v
            if sel.any():
                out[i] += sel.mean() * abs(q[sel].mean() - q.mean())
    return out


def all_labels(post):
    return np.concatenate([c.values.reshape(-1, c.sizes["item"]) for c in post.label_draws()])


SCORES8 = np.array([0.95, 0.9, 0.8, 0.7, 0.6, 0.5, 0.3, 0.2])
QUARTERS8 = np.array([2, 1, 3, 0, 2, 1, 3, 4])
LABELS8 = np.array([np.nan, np.nan, np.nan, 1, np.nan, np.nan, np.nan, 0])  # two vetted


# ------------------------------------------------ expected_change: exact checks


@pytest.mark.parametrize(
    "name, kwargs, fn",
    [
        ("average_precision", {}, lambda z: metrics.average_precision(z, SCORES8)),
        ("precision_at_k", {"k": 3}, lambda z: metrics.precision_at_k(z, SCORES8, k=3)),
        ("recall_at_k", {"k": 3}, lambda z: metrics.recall_at_k(z, SCORES8, k=3)),
        (
            "accuracy",
            {"threshold": 0.55},
            lambda z: metrics.accuracy(z, (SCORES8 >= 0.55).astype(int)),
        ),
    ],
)
def test_equals_brute_force_enumeration_on_independent_labels(name, kwargs, fn):
    data = EvalData(SCORES8, LABELS8)
    post = factorial_posterior(data, QUARTERS8)  # 4**6 draws = the exact distribution
    exact, _, _ = brute_force_change(fn, exact_probabilities(data, QUARTERS8))
    got = expected_change(post, name, **kwargs)
    np.testing.assert_allclose(got.values, exact, rtol=1e-9, atol=1e-12)
    assert got.values[data.vetted].tolist() == [0.0, 0.0]
    assert exact[3] == exact[7] == 0.0  # vetted labels change nothing


def test_precision_at_k_matches_the_papers_closed_form_exactly():
    data = EvalData(SCORES8, LABELS8)
    post = factorial_posterior(data, QUARTERS8)
    p = exact_probabilities(data, QUARTERS8)
    k = 4
    closed = np.where(np.arange(8) < k, 2 / k * p * (1 - p), 0.0)  # eq. 11; 0 outside the top K
    np.testing.assert_allclose(
        expected_change(post, "precision_at_k", k=k).values, closed, atol=1e-12
    )


def test_fixed_np_average_precision_matches_the_derived_closed_form_exactly():
    # Q = (1/N_p) sum_k z_k/k sum_{h<=k} z_h with N_p fixed is quadratic in z, so with
    # independent labels Cov(Q, z_j) = v_j/N_p [(1 + sum_{h<j} E z_h)/j + sum_{k>j} E z_k/k]
    data = EvalData(SCORES8, LABELS8)
    post = factorial_posterior(data, QUARTERS8)
    p = exact_probabilities(data, QUARTERS8)  # items already sorted by descending score
    n_pos = 3.0
    j = np.arange(1, 9)
    before = np.r_[0, np.cumsum(p)[:-1]]
    after = np.r_[np.cumsum((p / j)[::-1])[::-1][1:], 0]
    closed = 2 * p * (1 - p) / n_pos * ((1 + before) / j + after)
    got = expected_change(post, ap_fixed_np, n_pos=n_pos)
    np.testing.assert_allclose(got.values, closed, rtol=1e-9, atol=1e-12)
    # the paper's eq. 12, r_j p_j (1 - p_j) / N_p, is not this value (e.g. 0 for the top item)
    assert closed[0] > 0.1


@pytest.mark.parametrize(
    "metric, kwargs",
    [("average_precision", {}), ("precision_at_k", {"k": 5}), (ap_fixed_np, {"n_pos": 4})],
)
def test_equals_the_empirical_conditional_change_of_any_draws(metric, kwargs):
    # Any joint draws, correlated labels included: 2|Cov| with divisor n is exactly the
    # expected absolute change of the mean of the draws, so this holds to rounding.
    rng = np.random.default_rng(3)
    s = rng.normal(size=25)
    a = rng.normal(size=(300, 1))
    p = 1 / (1 + np.exp(-(a + 2 * s)))  # a shared per-draw shift correlates the labels
    data = EvalData(s, np.where(rng.random(25) < 0.2, 1.0, np.nan))
    post = Posterior.from_probabilities(data, p, random_seed=5)
    q = post.metric(metric, **kwargs).values.ravel()
    exact = empirical_change(q, all_labels(post))
    np.testing.assert_allclose(
        expected_change(post, metric, **kwargs).values, exact, rtol=1e-9, atol=1e-13
    )


def test_result_does_not_depend_on_chunk_size():
    rng = np.random.default_rng(0)
    s = rng.normal(size=40)
    cats = np.array(["a", "b", "c"])[rng.integers(0, 3, 40)]
    data = EvalData(s, np.where(rng.random(40) < 0.3, 0.0, np.nan), categories=cats)
    post = Posterior.from_probabilities(
        data, 1 / (1 + np.exp(-s)), draws=60, chains=2, random_seed=1, check=False  # made-up probabilities
    )
    ref = expected_change(post, "average_precision").values
    for cs in (1, 7, 60):
        np.testing.assert_allclose(
            expected_change(post, "average_precision", chunk_size=cs).values,
            ref,
            rtol=1e-12,
            atol=1e-15,
        )
    assert np.all(ref[data.vetted] == 0) and np.all(ref[~data.vetted] > 0)


def test_categories_each_mean_pooled():
    cats = np.array(["a", "b", "a", "b", "a", "b", "a", "b"])
    data = EvalData(SCORES8, LABELS8, categories=cats)
    post = factorial_posterior(data, QUARTERS8)
    p = exact_probabilities(data, QUARTERS8)
    k = 2
    each = expected_change(post, "precision_at_k", k=k).values
    assert expected_change(post, "precision_at_k", k=k, category="each").attrs["category"] == "each"
    # each item: P@2 of its own category (items 0,2 top of "a"; 1,3 top of "b")
    in_top = np.isin(np.arange(8), [0, 2, 1, 3])
    np.testing.assert_allclose(each, np.where(in_top, 2 / k * p * (1 - p), 0), atol=1e-12)
    mean = expected_change(post, "precision_at_k", k=k, category="mean").values
    np.testing.assert_allclose(mean, each / 2, atol=1e-15)
    pooled = expected_change(post, "precision_at_k", k=k, category="pooled").values
    np.testing.assert_allclose(
        pooled, np.where(np.arange(8) < k, 2 / k * p * (1 - p), 0), atol=1e-12
    )
    # AP per category equals the enumeration on that category alone (labels independent)
    ap_each = expected_change(post, "average_precision").values
    for c in ("a", "b"):
        idx = np.flatnonzero(cats == c)
        exact, _, _ = brute_force_change(
            lambda z, idx=idx: metrics.average_precision(z, SCORES8[idx]), p[idx]
        )
        np.testing.assert_allclose(ap_each[idx], exact, rtol=1e-9, atol=1e-12)


def test_mean_divides_by_the_number_of_non_empty_categories():
    cats = np.array(["a", "b", "c", "a", "b", "c", "a", "b"])
    data = EvalData(SCORES8, LABELS8, categories=cats).subset(cats != "c")  # "c" is now empty
    assert data.category_names.size == 3
    quarters = QUARTERS8[cats != "c"]
    post = factorial_posterior(data, quarters)
    each = expected_change(post, "average_precision").values
    mean = expected_change(post, "average_precision", category="mean").values
    np.testing.assert_allclose(mean, each / 2, atol=1e-15)
    assert np.all(np.isfinite(each))


# ---------------------------------------------- expected_change: Monte Carlo checks


def test_precision_at_k_monte_carlo_within_its_standard_error():
    rng = np.random.default_rng(7)
    n, k, draws = 30, 10, 3000
    s = np.sort(rng.normal(size=n))[::-1]
    p = rng.uniform(0.05, 0.95, n)
    post = Posterior.from_probabilities(EvalData(s), p, draws=draws, random_seed=11)
    got = expected_change(post, "precision_at_k", k=k).values
    v = p * (1 - p)
    closed = np.where(np.arange(n) < k, 2 / k * v, 0.0)
    sd_q = np.sqrt(v[:k].sum()) / k
    se = 2 * sd_q * np.sqrt(v) / np.sqrt(draws)  # SE of 2 x sample covariance
    assert np.all(np.abs(got - closed) < 5 * se), np.max(np.abs(got - closed) / se)


def test_average_precision_monte_carlo_against_enumeration():
    rng = np.random.default_rng(8)
    n, draws = 10, 3000
    s = rng.normal(size=n)
    p = rng.uniform(0.1, 0.9, n)
    post = Posterior.from_probabilities(EvalData(s), p, draws=draws, random_seed=12)
    exact, q, w = brute_force_change(lambda z: metrics.average_precision(z, s), p)
    sd_q = np.sqrt(w @ (q - w @ q) ** 2)
    se = 2 * sd_q * np.sqrt(p * (1 - p)) / np.sqrt(draws)
    got = expected_change(post, "average_precision").values
    assert np.all(np.abs(got - exact) < 5 * se), np.max(np.abs(got - exact) / se)


def test_output_format():
    data = EvalData([0.9, 0.5, 0.1], [np.nan, 1, np.nan], item_ids=["x", "y", "z"])
    post = Posterior.from_probabilities(data, [0.5, 1, 0.5], draws=50, random_seed=0)
    ec = expected_change(post, "precision_at_k", k=1)
    assert ec.dims == ("item",) and ec.name == "expected_change"
    assert ec["item"].values.tolist() == ["x", "y", "z"]
    assert ec.sel(item="y").item() == 0.0
    assert ec.attrs["metric"] == "precision_at_k" and ec.attrs["n_samples"] == 50


# ------------------------------------------------------------------ errors


def test_expected_change_rejects_bad_input():
    data = EvalData([0.9, 0.5, 0.1], [np.nan, 1, np.nan])
    post = Posterior.from_probabilities(data, [0.5, 1, 0.5], draws=20, random_seed=0)
    with pytest.raises(TypeError, match="Posterior"):
        expected_change(data)
    with pytest.raises(ValueError, match="one value per draw"):
        expected_change(post, "precision_at_k", k=[1, 2])
    with pytest.raises(ValueError, match="one value per draw"):
        expected_change(post, "precision_recall_curve")
    with pytest.raises(ValueError, match="Unknown metric"):
        expected_change(post, "nope")
    with pytest.raises(ValueError, match="category"):
        expected_change(post, category="each")
    with pytest.raises(ValueError, match="category"):
        expected_change(post, category="all")
    with pytest.raises(ValueError, match="chunk_size"):
        expected_change(post, chunk_size=0)
    # roc_auc is NaN on draws with a single class
    few = Posterior.from_probabilities(
        EvalData([0.9, 0.5, 0.1]), [0.1, 0.1, 0.1], draws=50, random_seed=0
    )
    with pytest.raises(ValueError, match="NaN"):
        expected_change(few, "roc_auc")


# ------------------------------------------------------------------ select


def _posterior(n=40, n_vetted=10, seed=0, draws=200, categories=None):
    rng = np.random.default_rng(seed)
    s = rng.normal(size=n)
    labels = np.full(n, np.nan)
    labels[rng.choice(n, n_vetted, replace=False)] = rng.integers(0, 2, n_vetted)
    data = EvalData(s, labels, categories=categories)
    return Posterior.from_probabilities(
        data, 1 / (1 + np.exp(-2 * s)), draws=draws, random_seed=seed, check=False  # made-up probabilities
    )


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_select_never_picks_vetted_or_excluded_and_returns_the_size(strategy):
    post = _posterior()
    vetted = np.flatnonzero(post.data.vetted)
    free = np.flatnonzero(~post.data.vetted)
    exclude = free[:5]
    out = select(post, size=10, strategy=strategy, exclude=exclude, random_seed=0)
    assert out.dtype == np.int64 and out.size == 10 and np.unique(out).size == 10
    assert not set(out) & (set(vetted) | set(exclude))
    everything = select(post, size=100, strategy=strategy, exclude=exclude, random_seed=0)
    assert sorted(everything) == sorted(set(free) - set(exclude))
    mask = np.zeros(post.data.n_items, bool)
    mask[free] = True
    assert select(post, size=3, strategy=strategy, exclude=mask).size == 0


def test_random_is_reproducible_and_the_others_deterministic():
    post = _posterior(n=200)
    for seeded in ("random", "design"):
        a = select(post, size=20, strategy=seeded, random_seed=1)
        assert np.array_equal(a, select(post, size=20, strategy=seeded, random_seed=1))
        assert not np.array_equal(a, select(post, size=20, strategy=seeded, random_seed=2))
    deterministic = [s for s in STRATEGIES if s not in ("random", "design", "auto")]
    assert deterministic == ["most_confident_mistake", "uncertainty", "expected_change"]
    for strategy in deterministic:
        np.testing.assert_array_equal(
            select(post, size=5, strategy=strategy, random_seed=1),
            select(post, size=5, strategy=strategy, random_seed=2),
        )


def test_random_is_hierarchical_over_categories():
    cats = np.array(["rare"] * 2 + ["common"] * 60)
    data = EvalData(np.linspace(1, 0, 62), categories=cats)
    post = Posterior.from_probabilities(data, np.full(62, 0.5), draws=2, random_seed=0)
    trials = 300
    rare = sum(select(post, size=1, strategy="random", random_seed=t)[0] < 2 for t in range(trials))
    # category first: P(rare) = 1/2 (binomial SE 0.029; 5 SE); uniform would give 2/62
    assert abs(rare / trials - 0.5) < 0.15
    pooled = sum(
        select(post, size=1, strategy="random", random_seed=t, category="pooled")[0] < 2
        for t in range(trials)
    )
    assert pooled / trials < 0.15
    # without replacement: once "rare" is used up, every pick comes from "common"
    out = select(post, size=62, strategy="random", random_seed=0)
    assert sorted(out) == list(range(62))
    assert np.flatnonzero(out < 2).max() < 20  # P(a rare item after 20 picks) < 2**-18


def test_most_confident_mistake_order():
    s = np.array([0.1, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3])
    p = np.array([0.25, 0.125, 0.5, 0.75, 0.375, 0.625, 0.5, 0.0])
    data = EvalData(s, [np.nan] * 7 + [1.0])  # item 7 is vetted
    post = Posterior.from_probabilities(data, p, draws=8, random_seed=0)
    out = select(post, size=7, strategy="most_confident_mistake")
    # believed negative (p < .5) by score: 1 (0.9), 4 (0.6), 0 (0.1); then the rest by
    # increasing p, ties by score: 2 (0.5, s 0.8), 6 (0.5, s 0.4), 5 (0.625), 3 (0.75)
    assert out.tolist() == [1, 4, 0, 2, 6, 5, 3]
    assert select(post, size=2, strategy="most_confident_mistake").tolist() == [1, 4]


def test_uncertainty_order():
    s = np.array([0.1, 0.9, 0.8, 0.7, 0.6, 0.5])
    p = np.array([0.5, 0.375, 0.625, 0.875, 0.125, 0.5625])
    post = Posterior.from_probabilities(EvalData(s), p, draws=8, random_seed=0)
    # |p - .5|: 0, .125, .125, .375, .375, .0625; ties by higher score
    assert select(post, size=6, strategy="uncertainty").tolist() == [0, 5, 1, 2, 3, 4]


def test_expected_change_single_pick_is_the_largest_value():
    post = _posterior(n=60, draws=300, seed=4)
    ec = expected_change(post, "average_precision").values
    out = select(post, size=1, metric="average_precision")
    assert out.tolist() == [int(np.argmax(ec))]
    ex = [int(np.argmax(ec))]
    assert select(post, size=1, exclude=ex).tolist() == [int(np.argsort(-ec)[1])]


def _copies_posterior(draws=400):
    """Items 0 and 1 always share their label (copies); 2 and 3 independent coin flips."""
    rng = np.random.default_rng(2)
    u, w, x = (rng.random((3, draws)) < 0.5).astype(float)
    p = np.zeros((draws, 8))
    p[:, 0] = p[:, 1] = u
    p[:, 2] = w
    p[:, 3] = x  # ranked 4th: outside the top 3, so it cannot change P@3
    p[:, 4] = 1.0
    return Posterior.from_probabilities(EvalData(SCORES8), p)


def test_batch_skips_a_perfectly_correlated_copy(monkeypatch):
    post = _copies_posterior()
    ec = expected_change(post, "precision_at_k", k=3).values
    assert set(np.argsort(-ec, kind="stable")[:2]) == {0, 1}  # naive top-2: both copies
    assert ec[0] == ec[1] > 1.5 * ec[2]
    assert select(post, metric="precision_at_k", k=3, size=2).tolist() == [0, 2]
    assert select(post, metric="precision_at_k", k=3, size=3).tolist()[:2] == [0, 2]
    # same answer with a second pass over the draws, and on a subset of the draws
    monkeypatch.setattr(S, "_KEEP_ALL_BYTES", 0)
    assert select(post, metric="precision_at_k", k=3, size=2).tolist() == [0, 2]
    monkeypatch.setattr(S, "_GREEDY_BYTES", 8 * 200 * 200)  # keep every 2nd draw
    assert select(post, metric="precision_at_k", k=3, size=2).tolist() == [0, 2]


def test_batch_residualizes_only_the_metric_of_the_picked_items_category():
    # items 0, 1 (category A) and 2 (category B) share one random label; P@1 per category.
    # Picking 0 explains all of A's metric (1 drops to 0), but B's metric is another
    # quantity: with category="each" (or "mean") item 2 keeps its value; pooled, it does not.
    rng = np.random.default_rng(4)
    u, w = (rng.random((2, 300)) < 0.5).astype(float)
    p = np.zeros((300, 8))
    p[:, 0] = p[:, 1] = p[:, 2] = u
    p[:, 3] = w
    cats = np.array(["A", "A", "B", "B", "A", "B", "A", "B"])
    post = Posterior.from_probabilities(EvalData(SCORES8, categories=cats), p)
    ec = expected_change(post, "precision_at_k", k=1).values
    assert ec[0] == ec[1] == ec[2] > 0.45 and ec[3] < 0.1  # ec[3]: sample Cov(u, w) only
    assert select(post, metric="precision_at_k", k=1, size=2).tolist() == [0, 2]
    assert select(post, metric="precision_at_k", k=1, size=2, category="mean").tolist() == [0, 2]
    pooled = select(post, metric="precision_at_k", k=1, size=2, category="pooled")
    assert pooled.tolist() == [0, 1]  # every copy is explained; the tie goes to the score


def test_batch_equals_greedy_least_squares_reference():
    # reference: pick argmax |Cov(Q_res, z_k)|, Q_res = Q minus its least-squares fit on
    # the labels picked so far (with intercept), recomputed from scratch each step
    rng = np.random.default_rng(5)
    n = 30
    s = rng.normal(size=n)
    a = rng.normal(scale=1.5, size=(600, 1))
    p = 1 / (1 + np.exp(-(a + 2 * s)))
    data = EvalData(s, np.where(rng.random(n) < 0.2, 0.0, np.nan))
    post = Posterior.from_probabilities(data, p, random_seed=9)
    q = post.metric("average_precision").values.ravel()
    z = all_labels(post).astype(float)
    picked = []
    for _ in range(6):
        x = np.column_stack([np.ones(q.size), z[:, picked]])
        res = q - x @ np.linalg.lstsq(x, q, rcond=None)[0]
        cov = (res - res.mean()) @ (z - z.mean(axis=0)) / q.size
        cov[data.vetted] = -np.inf
        cov[picked] = -np.inf
        picked.append(int(np.argmax(np.where(np.isinf(cov), -1, np.abs(cov)))))
    assert select(post, size=6).tolist() == picked


def test_select_rejects_bad_input():
    post = _posterior(n=10, n_vetted=2)
    with pytest.raises(TypeError, match="Posterior"):
        select(post.data, size=1)
    for bad in (0, -1):
        with pytest.raises(ValueError, match="size"):
            select(post, size=bad)
    for bad in (1.5, True, "3", None):
        with pytest.raises(TypeError, match="size"):
            select(post, size=bad)
    with pytest.raises(ValueError, match="strategy"):
        select(post, size=1, strategy="greedy")
    with pytest.raises(ValueError, match="outside"):
        select(post, size=1, exclude=[10])
    with pytest.raises(ValueError, match="outside"):
        select(post, size=1, exclude=[-1])
    with pytest.raises(TypeError, match="integer"):
        select(post, size=1, exclude=[0.5])
    with pytest.raises(ValueError, match="shape"):
        select(post, size=1, exclude=np.ones(3, bool))
    with pytest.raises(TypeError, match="random_seed"):
        select(post, size=1, strategy="random", random_seed="abc")
    with pytest.raises(ValueError, match="category"):
        select(post, size=1, strategy="random", category="each")
    with pytest.raises(ValueError, match="one value per draw"):
        select(post, size=2, metric="precision_at_k", k=[1, 2])


def test_auto_designs_while_fewer_are_vetted_than_the_batch_then_expected_change():
    post = _posterior(n=200)
    n_vet = int(post.data.n_vetted)
    big, small = n_vet + 5, max(1, n_vet - 1)
    np.testing.assert_array_equal(select(post, size=big, strategy="auto", random_seed=3),
                                  select(post, size=big, strategy="design", random_seed=3))
    # past the first batch: expected change, with a quarter of the batch (rounded on the running
    # total) from the design's least-vetted strata, listed last
    from bayeval.active.design import explore_count

    n_wide = explore_count(n_vet, small)
    auto = select(post, size=small, strategy="auto", random_seed=3)
    assert auto.size == small and np.unique(auto).size == small
    np.testing.assert_array_equal(auto[:small - n_wide],
                                  select(post, size=small - n_wide, strategy="expected_change"))


def test_auto_keeps_labelling_the_tails_that_expected_change_leaves():
    """Vetted items crowd the top of the ranking (what greedy expected change of AP does):
    "auto" sends a quarter of the next batch to the design's emptiest strata -- the lower
    half of the ranking here -- while "expected_change" alone sends none there."""
    from bayeval.active.design import design_strata

    rng = np.random.default_rng(1)
    n = 1000
    s = rng.normal(size=n)
    top = np.argsort(-s)[:60]
    lab = np.full(n, np.nan)
    lab[top] = rng.integers(0, 2, 60)
    data = EvalData(s, lab)
    post = Posterior.from_probabilities(data, 1 / (1 + np.exp(-(5 * s - 8))), draws=200, random_seed=0, check=False)
    bottom = design_strata(s)[-1]  # the lower half of the ranking
    auto = select(post, size=20, strategy="auto", random_seed=0)
    greedy = select(post, size=20, strategy="expected_change")
    assert np.isin(auto[-5:], bottom).sum() >= 1 and np.isin(auto, np.flatnonzero(data.vetted)).sum() == 0
    assert np.isin(greedy, bottom).sum() == 0


def test_a_threshold_that_flags_no_item_or_every_item_is_refused_before_labels_are_spent(tmp_path):
    """ActiveSession(metric="precision", threshold=0.5) on scores all below 0.5 was accepted and
    served a designed batch of 20 (none flagged); the next batch then failed with advice to set
    zero_division=0.0/1.0, which would make every item's expected change 0."""
    from bayeval.active import ActiveSession, design

    rng = np.random.default_rng(0)
    s = rng.uniform(0, 0.45, 300)
    data = EvalData(s)

    def no_fit(d):
        raise AssertionError("nothing is fitted for a refused threshold")

    path = tmp_path / "s.sqlite"
    for thr, said in ((0.5, "flags no item: it lies above every score (max 0.4"), (30, "did you mean 0.3?"),
                      (0.0, "flags every item: it lies at or below every score (min 0")):
        with pytest.raises(ValueError, match="threshold") as err:
            ActiveSession(data, no_fit, metric="precision", metric_kwargs={"threshold": thr}, store=path)
        msg = str(err.value)
        assert said in msg and "scores range from" in msg and "zero_division" not in msg
    assert not path.exists()  # refused before the store was made
    for metric in ("recall", "f_score", "accuracy"):
        with pytest.raises(ValueError, match="flags no item"):
            ActiveSession(data, no_fit, metric=metric, metric_kwargs={"threshold": 0.5}, store=path)
    with pytest.raises(ValueError, match="flags no item"):
        design(s, 5, metric="precision", threshold=0.5)
    post = Posterior.from_probabilities(data, s, draws=100, random_seed=0, check=False)
    for strategy in ("auto", "expected_change", "design"):
        with pytest.raises(ValueError, match="flags no item"):
            select(post, metric="precision", threshold=0.5, size=5, strategy=strategy)
    # an operating point inside the scores' range is accepted
    ActiveSession(data, no_fit, metric="precision", metric_kwargs={"threshold": 0.3}, store=path).close()
    # expected_change itself (no refusal up front): its NaN names the rule, and does not advise zero_division
    with pytest.raises(ValueError, match=r"rule flags no item \(score >= 0.5\); the highest score is 0.4") as err:
        expected_change(post, "precision", threshold=0.5)
    assert "zero_division would not help" in str(err.value) and "choose zero_division" not in str(err.value)

    # per category: precision of a category where nothing is flagged is undefined, so is their mean
    cats = np.where(np.arange(300) < 150, "a", "b")
    s2 = np.where(cats == "a", s + 0.5, s)
    data2 = EvalData(s2, categories=cats)
    with pytest.raises(ValueError, match=r"flags no item of 1 category: 'b' \(highest score 0.4"):
        ActiveSession(data2, no_fit, metric="precision", metric_kwargs={"threshold": 0.5}, store=tmp_path / "c.sqlite")
    ActiveSession(data2, no_fit, metric="precision", metric_kwargs={"threshold": 0.5}, category="pooled",
                  store=tmp_path / "c.sqlite").close()
    post2 = Posterior.from_probabilities(data2, np.clip(s2, 0, 1), draws=100, random_seed=0, check=False)
    with pytest.raises(ValueError, match="category='each'"):
        select(post2, metric="precision", threshold=0.5, size=5)
    with pytest.raises(ValueError, match=r"flags no item \(score >= 0.5\) in 1 of the 2 categories \('b'\)"):
        expected_change(post2, "precision", threshold=0.5, category="mean")


def test_a_top_bigger_than_a_categorys_items_is_refused_as_posterior_metric_refuses_it(tmp_path):
    """select() and expected_change() took precision_at_k / recall_at_k with k above a category's
    items (k=3 where category 'b' holds 2) and chose a batch for a metric Posterior.metric and the
    command line refuse; ActiveSession served a designed batch and failed only at estimate()."""
    from bayeval.active import ActiveSession
    from bayeval.active.select import check_top_k

    data = EvalData(np.linspace(1, 0, 10), [1] + [np.nan] * 4 + [0] + [np.nan] * 4, categories=["a"] * 8 + ["b"] * 2)
    post = Posterior.from_probabilities(data, np.full(10, 0.5), draws=50, random_seed=0)
    with pytest.raises(ValueError) as ref:
        post.metric("precision_at_k", k=3)
    said = str(ref.value)
    assert "'b' (2 items)" in said and "Give k <= 2" in said
    for call in (lambda: select(post, metric="precision_at_k", k=3, size=2),
                 lambda: select(post, metric="precision_at_k", k=3, size=2, strategy="auto"),
                 lambda: select(post, metric="precision_at_k", k=3, size=2, strategy="design"),
                 lambda: select(post, metric="precision_at_k", k=3, size=2, category="mean"),
                 lambda: expected_change(post, "precision_at_k", k=3),
                 lambda: check_top_k(data, "precision_at_k", k=3)):
        with pytest.raises(ValueError) as err:
            call()
        assert str(err.value) == said  # the same words as Posterior.metric
    with pytest.raises(ValueError, match=r"recall_at_k: `k` = 3 .* would hold all 2 items and the recall would be 1"):
        expected_change(post, "recall_at_k", k=3, category="mean")
    with pytest.raises(ValueError, match=r"`k` = 11 is more than the 10 items"):  # pooled: the top of all items
        expected_change(post, "precision_at_k", k=11, category="pooled")
    # pooled, k=3 is a top of all 10 items: accepted
    assert expected_change(post, "precision_at_k", k=3, category="pooled").shape == (10,)
    assert select(post, metric="precision_at_k", k=3, size=2, category="pooled").size == 2
    # the strategies that ignore the metric took any k; `bayeval select --k` refuses it whatever the strategy
    for strategy in ("random", "most_confident_mistake", "uncertainty"):
        with pytest.raises(ValueError) as err:
            select(post, metric="precision_at_k", k=3, size=2, strategy=strategy, random_seed=0)
        assert str(err.value) == said, strategy
        with pytest.raises(ValueError, match=r"`k` = 11 is more than the 10 items"):
            select(post, metric="recall_at_k", k=11, size=2, strategy=strategy, category="pooled", random_seed=0)
        assert select(post, metric="precision_at_k", k=3, size=2, strategy=strategy, category="pooled",
                      random_seed=0).size == 2

    def no_fit(d):
        raise AssertionError("nothing is fitted for a refused k")

    path = tmp_path / "s.sqlite"
    with pytest.raises(ValueError) as err:
        ActiveSession(data, no_fit, metric="precision_at_k", metric_kwargs={"k": 3}, category="each", store=path)
    assert str(err.value) == said
    with pytest.raises(ValueError, match=r"more than the items of 1 category: 'b'"):  # the default: their mean
        ActiveSession(data, no_fit, metric="precision_at_k", metric_kwargs={"k": 3}, store=path)
    assert not path.exists()  # refused before the store was made
    ActiveSession(data, no_fit, metric="precision_at_k", metric_kwargs={"k": 3}, category="pooled",
                  store=path).close()


@pytest.mark.parametrize("strategy,cats,kwargs", [
    ("expected_change", None, {}),
    ("expected_change", None, {"metric": "precision_at_k", "k": 5}),
    ("auto", ["a", "b"] * 100, {"category": "mean"}),
    ("expected_change", None, {"size": 1}),
])
def test_select_with_change_gives_selects_batch_and_expected_change_in_one_pass(strategy, cats, kwargs, monkeypatch):
    """``bayeval select`` reads its expected_change column from the pass that ranked the batch: the
    positions of :func:`select` and the values of :func:`expected_change`, in one pass over the
    label draws (it made a second, the whole cost again)."""
    from bayeval.active.select import select_with_change

    post = _posterior(n=200, categories=cats)
    kw = {"size": 6, **kwargs}
    metric_kw = {k: v for k, v in kw.items() if k not in ("size",)}
    passes = []
    covariances = S._covariances
    monkeypatch.setattr(S, "_covariances", lambda *a, **k: passes.append(1) or covariances(*a, **k))
    pos, change = select_with_change(post, strategy=strategy, random_seed=3, **kw)
    assert len(passes) == 1
    np.testing.assert_array_equal(pos, select(post, strategy=strategy, random_seed=3, **kw))
    ref = expected_change(post, **metric_kw)
    np.testing.assert_array_equal(change.values, ref.values)
    assert change.attrs == ref.attrs and change.name == ref.name


def test_select_with_change_has_no_change_where_no_metric_ranked_the_batch():
    from bayeval.active.select import select_with_change

    post = _posterior(n=60)
    for strategy in ("random", "most_confident_mistake", "uncertainty", "design"):
        pos, change = select_with_change(post, size=4, strategy=strategy, random_seed=1)
        assert change is None
        np.testing.assert_array_equal(pos, select(post, size=4, strategy=strategy, random_seed=1))
