"""Human pairwise rankings: percentile Q, theta estimates, Bayesian model, plots.

Every fast path is checked against a slow, obvious reference: Q against brute
force over all 2^N rankings, the Fourier bracket against the exact method and
against Monte Carlo, the constrained MLE against scipy's SLSQP on the original
constrained problem, the Bayesian posterior against closed forms / quadrature.
"""

import itertools

import numpy as np
import pytest
from scipy import optimize

from bayeval.rankings import percentile as R
from bayeval.rankings.percentile import (
    UNDECIDED,
    confidence_mle,
    count_votes,
    estimate_theta,
    ranking_log_prob_distribution,
    ranking_log_probability,
    ranking_percentile,
)

# ----------------------------------------------------------------------------------------
# references
# ----------------------------------------------------------------------------------------


def brute_q(theta, rankings, *, ties="strict", rtol=1e-10):
    """Q of each ranking by enumerating all 2^N rankings (sorted by probability)."""
    theta = np.asarray(theta, float)
    rankings = np.atleast_2d(rankings)
    every = (np.arange(2**theta.size)[:, None] >> np.arange(theta.size)) & 1
    with np.errstate(divide="ignore"):
        lt, l1t = np.log(theta), np.log1p(-theta)
    logp = np.sort(np.where(every == 1, lt, l1t).sum(1))
    cum = np.r_[0.0, np.cumsum(np.exp(logp))]  # mass of the i least probable rankings
    d = np.abs(lt - l1t)
    tau = rtol * (1 + d[np.isfinite(d)].sum())
    out = []
    for r in rankings:
        logr = np.where(r == 1, lt, l1t).sum()
        if not np.isfinite(logr):
            out.append(1.0)
        elif ties == "strict":  # rankings with logp > logr + tau
            out.append(cum[-1] - cum[np.searchsorted(logp, logr + tau, side="right")])
        else:  # rankings with logp >= logr - tau
            out.append(cum[-1] - cum[np.searchsorted(logp, logr - tau, side="left")])
    return np.array(out)


def monte_carlo_q(theta, r, n=200_000, seed=0):
    """Share of simulated human rankings strictly more probable than r."""
    rng = np.random.default_rng(seed)
    lt, l1t = np.log(theta), np.log1p(-theta)
    logr = np.where(r == 1, lt, l1t).sum()
    hits = 0
    for _ in range(n // 10_000):
        x = rng.uniform(size=(10_000, theta.size)) < theta
        hits += int((np.where(x, lt, l1t).sum(1) > logr).sum())
    return hits / n


def _theta_cases():
    rng = np.random.default_rng(20240501)
    cases = []
    for n in (1, 2, 5, 9, 12, 16):
        cases.append(("distinct", rng.uniform(0.01, 0.99, size=n)))
    for n in (6, 11, 16):
        cases.append(("repeated", rng.choice([0.2, 0.4, 0.6, 0.8, 0.5, 0.3, 0.7], size=n)))
    for n in (4, 10, 15):
        cases.append(("zero-one", rng.choice([0.0, 1.0, 0.9, 0.25, 0.75, 0.5], size=n)))
    cases.append(("all-half", np.full(7, 0.5)))
    return cases


THETA_CASES = _theta_cases()


def _rankings_for(theta, rng, k=6):
    most = (theta > 0.5).astype(int)
    out = [most, 1 - most]
    out += [rng.integers(0, 2, size=theta.size) for _ in range(k)]
    out += [(rng.uniform(size=theta.size) < theta).astype(int) for _ in range(k)]
    return np.array(out)


# ----------------------------------------------------------------------------------------
# percentile: exact method against brute force
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("ties", ["strict", "inclusive"])
@pytest.mark.parametrize("kind,theta", THETA_CASES, ids=[f"{k}-{t.size}" for k, t in THETA_CASES])
def test_exact_matches_brute_force(kind, theta, ties):
    rng = np.random.default_rng(theta.size)
    rankings = _rankings_for(theta, rng)
    res = ranking_percentile(theta, rankings, ties=ties, method="exact", return_bound=True)
    ref = brute_q(theta, rankings, ties=ties)
    np.testing.assert_allclose(res.q, ref, atol=1e-9, rtol=0)
    assert np.all(res.bound <= 1e-9)
    assert np.all((res.lower <= ref + 1e-12) & (ref <= res.upper + 1e-12))
    # auto picks the exact method here and gives the same values
    np.testing.assert_allclose(ranking_percentile(theta, rankings, ties=ties), res.q, atol=1e-14)


def test_most_probable_is_zero_and_impossible_is_one():
    theta = np.array([0.9, 0.2, 0.65, 1.0, 0.0, 0.5])
    best = np.array([1, 0, 1, 1, 0, 0])
    assert ranking_percentile(theta, best) == 0.0
    # the other answer on a theta = 0.5 pair is tied with the best ranking
    assert ranking_percentile(theta, best ^ np.array([0, 0, 0, 0, 0, 1])) == 0.0
    impossible = best.copy()
    impossible[3] = 0
    res = ranking_percentile(theta, impossible, return_bound=True)
    assert res.q == 1.0 and res.bound == 0.0
    assert ranking_log_probability(theta, impossible) == -np.inf
    # inclusive Q of the best ranking is the mass of its tie class
    incl = ranking_percentile(theta, best, ties="inclusive")
    assert incl == pytest.approx(0.9 * 0.8 * 0.65, abs=1e-12)


def test_ties_absorb_floating_point_noise():
    # 0.3 and 1 - 0.7 differ in the last bit; the two rankings are equally probable
    theta = np.array([0.3, 0.7])
    q1 = ranking_percentile(theta, [1, 1], return_bound=True)  # deficits: pair 0
    q2 = ranking_percentile(theta, [0, 0], return_bound=True)  # deficits: pair 1
    assert q1.q == pytest.approx(q2.q, abs=1e-15)
    assert q1.q == pytest.approx(0.7 * 0.7, abs=1e-12)  # only the best ranking is above
    assert float(ranking_percentile(theta, [1, 1], ties="inclusive")) == pytest.approx(
        0.49 + 2 * 0.21, abs=1e-12
    )


def test_batched_equals_per_slice():
    rng = np.random.default_rng(7)
    theta = rng.uniform(0.05, 0.95, size=(2, 3, 1, 30))
    rankings = rng.integers(0, 2, size=(4, 30))
    res = ranking_percentile(theta, rankings, tol=1e-3, return_bound=True)
    assert res.q.shape == (2, 3, 4)
    for i, j, k in itertools.product(range(2), range(3), range(4)):
        single = ranking_percentile(theta[i, j, 0], rankings[k], tol=1e-3, return_bound=True)
        assert res.q[i, j, k] == pytest.approx(float(single.q), abs=1e-12)
        assert res.method[i, j, k] == single.method


# ----------------------------------------------------------------------------------------
# percentile: Fourier bracket
# ----------------------------------------------------------------------------------------


def test_vaaler_majorant_minorant_inequality():
    # |psi(x) - V_K(x)| <= Fejer_K(x) / (2K + 2): the basis of the Fourier bracket
    x = np.linspace(-1, 1, 40_001)
    psi = x - np.floor(x) - 0.5
    for K in (1, 4, 17, 64):
        k = np.arange(1, K + 1)
        t = k / (K + 1)
        v = -(R._jhat(t) / (np.pi * k)) @ np.sin(2 * np.pi * np.outer(k, x))
        fejer = 1 + 2 * (1 - t) @ np.cos(2 * np.pi * np.outer(k, x))
        assert np.all(np.abs(psi - v) <= fejer / (2 * K + 2) + 1e-12)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("ties", ["strict", "inclusive"])
@pytest.mark.parametrize("kind,theta", THETA_CASES, ids=[f"{k}-{t.size}" for k, t in THETA_CASES])
def test_fourier_bracket_contains_brute_force(kind, theta, ties):
    # small N: probability atoms keep the bracket wide, but it must always hold
    rng = np.random.default_rng(theta.size + 1)
    rankings = _rankings_for(theta, rng, k=3)
    res = ranking_percentile(
        theta, rankings, ties=ties, method="fourier", tol=1e-3, max_terms=2**11, return_bound=True
    )
    ref = brute_q(theta, rankings, ties=ties)
    assert np.all(res.lower <= ref + 1e-12) and np.all(ref <= res.upper + 1e-12)
    assert np.all(np.abs(res.q - ref) <= res.bound + 1e-12)


@pytest.mark.parametrize("n_pairs", [26, 34])
def test_fourier_is_tight_against_exact(n_pairs):
    rng = np.random.default_rng(n_pairs)
    theta = rng.uniform(0.02, 0.98, size=n_pairs)
    rankings = np.array([(rng.uniform(size=n_pairs) < theta).astype(int) for _ in range(5)])
    exact = ranking_percentile(theta, rankings, method="exact", return_bound=True)
    for tol in (1e-3, 1e-4):
        four = ranking_percentile(theta, rankings, method="fourier", tol=tol, return_bound=True)
        assert np.all(four.bound <= tol)  # tol is met ...
        assert np.all(four.bound >= 0.5 * tol * 0.05)  # ... without absurd over-refinement
        assert np.all(np.abs(four.q - exact.q) <= four.bound)  # ... and the bound holds
        assert np.all((four.lower <= exact.q) & (exact.q <= four.upper))


def test_fourier_many_pairs_with_repeated_values_matches_exact():
    # 3 distinct values, 1500 pairs: exact is feasible and Fourier must agree
    rng = np.random.default_rng(11)
    theta = rng.choice([0.15, 0.35, 0.8], size=1500)
    rankings = np.array([(rng.uniform(size=theta.size) < theta).astype(int) for _ in range(4)])
    exact = ranking_percentile(theta, rankings, method="exact", return_bound=True)
    four = ranking_percentile(theta, rankings, method="fourier", tol=1e-4, return_bound=True)
    assert np.all(exact.bound < 1e-9)
    assert np.all(np.abs(four.q - exact.q) <= four.bound) and np.all(four.bound <= 1e-4)


@pytest.mark.parametrize("log_thr", [-2.0, 0.0])
def test_fourier_bound_holds_when_frequencies_are_cut_early(log_thr):
    # A high certification threshold leaves most (log_thr=-2) or all (0) frequencies
    # unfinished: their stored bounds must dominate the true |phi_k|, and the bracket
    # must widen enough to contain the exact CDF at every threshold.
    rng = np.random.default_rng(3)
    theta = rng.uniform(0.05, 0.95, size=30)
    groups = R._groups_of(theta)
    item = R._FourierItem(groups, 1e-3)
    K = 4000
    R._extend_charfn([item], [K], log_thr=log_thr)
    assert np.sum(item.bnd > 0) > 3000
    k = np.arange(1, K + 1)
    omega = 2 * np.pi * k / item.L
    factors = 1 - groups.pi + groups.pi * np.exp(1j * np.outer(omega, groups.d))
    exact_phi = np.prod(factors**groups.n, axis=1) * np.exp(-1j * omega * item.a)
    cut = item.bnd > 0
    assert np.all(np.abs(exact_phi[cut]) <= item.bnd[cut] * (1 + 1e-9))
    np.testing.assert_allclose(item.phi[~cut], exact_phi[~cut], atol=1e-10)
    plan = R._ExactPlan(groups)
    cs = item.mu + item.sigma * np.linspace(-1.6, 1.6, 9)  # across the bulk of S
    exact_cdf, _ = plan.cdf(cs, strict=True)
    lo, up = item.bracket(cs, K)
    assert np.all(lo <= exact_cdf + 1e-12) and np.all(exact_cdf <= up + 1e-12)


def test_fourier_agrees_with_monte_carlo_for_distinct_theta():
    rng = np.random.default_rng(5)
    theta = rng.uniform(size=500)
    r = (rng.uniform(size=theta.size) < theta).astype(int)
    res = ranking_percentile(theta, r, tol=1e-4, return_bound=True)
    assert res.method == "fourier" and res.bound <= 1e-4
    mc = monte_carlo_q(theta, r)
    se = np.sqrt(mc * (1 - mc) / 200_000)
    assert abs(float(res.q) - mc) <= 5 * se + res.bound


def test_large_n_is_fast_and_bounded():
    import time

    rng = np.random.default_rng(9)
    theta = rng.uniform(size=20_000)
    r = (rng.uniform(size=theta.size) < theta).astype(int)
    t0 = time.perf_counter()
    res = ranking_percentile(theta, r, tol=1e-4, return_bound=True)
    assert time.perf_counter() - t0 < 5.0
    assert res.bound <= 1e-4 and 0 < res.q < 1


def test_tol_not_reached_warns_with_a_valid_bound():
    theta = np.array([0.9, 0.8, 0.3, 0.6])
    r = np.array([0, 1, 0, 1])
    with pytest.warns(RuntimeWarning, match="tol"):
        res = ranking_percentile(
            theta, r, method="fourier", tol=1e-6, max_terms=256, return_bound=True
        )
    ref = brute_q(theta, r)[0]
    assert res.lower <= ref <= res.upper and res.bound > 1e-6


def test_exact_refuses_when_too_large():
    theta = np.random.default_rng(0).uniform(size=200)
    with pytest.raises(ValueError, match="method='fourier'"):
        ranking_percentile(theta, (theta < 0.5).astype(int), method="exact")


def test_log_prob_distribution_matches_brute_force():
    theta = np.array([0.9, 0.7, 0.7, 0.6, 0.2, 0.55, 1.0])
    dist = ranking_log_prob_distribution(theta, bins=12)
    assert dist.method == "exact"
    every = (np.arange(2**theta.size)[:, None] >> np.arange(theta.size)) & 1
    with np.errstate(divide="ignore"):
        logp = np.where(every == 1, np.log(theta), np.log1p(-theta)).sum(1)
    p = np.exp(logp)
    assert dist.max_log_prob == pytest.approx(logp.max())
    e = dist.edges
    # no atom sits within 1e-9 of an interior edge, so the bin convention is unambiguous
    assert np.min(np.abs(logp[p > 0][:, None] - e[None, 1:-1])) > 1e-9
    for j in range(dist.mass.size):
        inside = (logp >= e[j + 1] - 1e-9) & ((logp < e[j]) if j else (logp <= e[0] + 1e-9))
        assert dist.mass[j] == pytest.approx(p[inside].sum(), abs=1e-9)
    assert dist.mass.sum() == pytest.approx(1.0, abs=1e-9) and dist.tail < 1e-9


def test_log_prob_distribution_fourier_is_consistent_with_percentile():
    rng = np.random.default_rng(2)
    theta = rng.uniform(size=400)
    dist = ranking_log_prob_distribution(theta, bins=60, tol=1e-4)
    assert dist.method == "fourier"
    assert dist.mass.sum() + dist.tail == pytest.approx(1.0, abs=1e-3)
    r = (rng.uniform(size=theta.size) < theta).astype(int)
    lp = float(ranking_log_probability(theta, r))
    j = int(np.searchsorted(-dist.edges, -lp))  # first edge below lp
    # Q lies between the masses of the bins fully above lp and those touching it
    q = float(ranking_percentile(theta, r, tol=1e-4))
    tol = j * dist.bound + 1e-4
    assert dist.mass[: j - 1].sum() - tol <= q <= dist.mass[:j].sum() + tol


# ----------------------------------------------------------------------------------------
# theta from votes and confidence
# ----------------------------------------------------------------------------------------


def slsqp_mle(m, counts, mapping):
    """Maximise theta^m prod q_s^n_s over (theta, q) with the paper's constraints."""
    c = np.asarray(mapping)
    counts = np.asarray(counts, float)

    def nll(x):
        th, q = x[0], x[1:]
        val = m * np.log(max(th, 1e-300))
        val += sum(n * np.log(max(qq, 1e-300)) for n, qq in zip(counts, q, strict=True) if n > 0)
        return -val

    cons = [
        {"type": "eq", "fun": lambda x: x[1:].sum() - 1},
        {"type": "eq", "fun": lambda x: c @ x[1:] - x[0]},
    ]
    best = None
    rng = np.random.default_rng(0)
    for _ in range(6):
        q0 = rng.dirichlet(np.ones(c.size))
        x0 = np.r_[c @ q0, q0]
        res = optimize.minimize(
            nll,
            x0,
            method="SLSQP",
            bounds=[(0, 1)] * (c.size + 1),
            constraints=cons,
            options={"ftol": 1e-15, "maxiter": 1000},
        )
        if res.success and (best is None or res.fun < best.fun):
            best = res
    return best.x[0], best.x[1:], best.fun


@pytest.mark.parametrize(
    "m,counts",
    [
        (15, [5, 0, 0]),
        (15, [10, 0, 0]),
        (15, [0, 10, 0]),
        (15, [0, 0, 10]),
        (10, [3, 3, 4]),
        (3, [0, 1, 2]),
        (5, [1, 0, 0]),
        (1, [7, 1, 0]),
        (12, [2, 0, 5]),
        (4, [0, 0, 0]),
    ],
)
def test_confidence_mle_matches_constrained_optimizer(m, counts):
    mapping = (0.5, 0.75, 1.0)
    theta, q = confidence_mle([m], [counts], mapping=mapping)
    th_ref, q_ref, fun = slsqp_mle(m, counts, mapping)
    assert theta[0] == pytest.approx(th_ref, abs=2e-6)
    np.testing.assert_allclose(q[0], q_ref, atol=2e-5)
    # our optimum is at least as good as scipy's (concave problem: the same one)
    ours = m * np.log(theta[0]) + sum(
        n * np.log(qq) for n, qq in zip(counts, q[0], strict=True) if n > 0
    )
    assert -ours <= fun + 1e-9
    assert q[0].sum() == pytest.approx(1.0) and q[0] @ np.array(mapping) == pytest.approx(theta[0])


def test_confidence_mle_random_cases_and_other_mappings():
    rng = np.random.default_rng(1)
    mapping = (0.55, 0.7, 0.9, 1.0)
    m = rng.integers(1, 20, size=15)
    counts = rng.integers(0, 6, size=(15, 4)) * (rng.uniform(size=(15, 4)) < 0.7)
    theta, q = confidence_mle(m, counts, mapping=mapping)
    for i in range(15):
        th_ref, _, fun = slsqp_mle(m[i], counts[i], mapping)
        ours = m[i] * np.log(theta[i]) + sum(
            n * np.log(qq) for n, qq in zip(counts[i], q[i], strict=True) if n > 0
        )
        assert -ours <= fun + 1e-8
        assert theta[i] == pytest.approx(th_ref, abs=1e-5)


def test_estimate_theta_votes_confidence_and_undecided():
    votes = np.array(
        [
            [1, 1, 1, 1, 1, np.nan],  # unanimous first, with confidence
            [0, 0, 0, 0, UNDECIDED, 0],  # unanimous second (undecided excluded), confidence
            [1, 0, 1, 1, 0, 1],  # split, confidence given but unused
            [1, 1, 1, np.nan, np.nan, np.nan],  # unanimous, no confidence: vote fraction
            [1, UNDECIDED, UNDECIDED, 0, np.nan, 0],
        ]
    )
    conf = np.full(votes.shape, np.nan)
    conf[0, :5] = [2, 2, 1, 0, 2]
    conf[1, [0, 1, 2, 3, 5]] = [1, 1, 2, 1, 0]
    conf[2, :2] = [2, 0]
    est = estimate_theta(votes, conf)
    th0, _ = confidence_mle([5], [[1, 1, 3]])
    th1, _ = confidence_mle([5], [[1, 3, 1]])
    np.testing.assert_allclose(est.theta, [th0[0], 1 - th1[0], 4 / 6, 1.0, 1 / 3], atol=1e-12)
    assert est.used_confidence.tolist() == [True, True, False, False, False]
    assert est.unanimous.tolist() == [True, True, False, True, False]
    assert est.counts.n_undecided.tolist() == [0, 1, 0, 0, 2]
    assert est.n_undecided == 3
    assert est.n_confidence_unused.tolist() == [0, 0, 2, 0, 0]
    assert est.to_frame()["n_undecided"].sum() == 3
    half = estimate_theta(votes, conf, undecided="half")
    assert half.theta[4] == pytest.approx((1 + 1) / 5)
    assert not half.used_confidence[1]  # an undecided answer breaks unanimity under "half"
    assert half.theta[1] == pytest.approx(0.5 / 6)


def test_count_votes_counts_every_code():
    v = np.array([[1, 0, UNDECIDED, np.nan], [np.nan, np.nan, 1, 1]])
    c = count_votes(v)
    assert c.n_first.tolist() == [1, 2]
    assert c.n_second.tolist() == [1, 0]
    assert c.n_undecided.tolist() == [1, 0]
    assert c.n_missing.tolist() == [1, 2]


# ----------------------------------------------------------------------------------------
# input validation
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "theta,ranking,kwargs,exc,match",
    [
        ([0.2, 1.2], [0, 1], {}, ValueError, r"\[0, 1\]"),
        ([0.2, np.nan], [0, 1], {}, ValueError, "finite"),
        ([], [], {}, ValueError, "n_pairs >= 1"),
        ([0.2, 0.4], [0, 1, 1], {}, ValueError, "shape"),
        ([0.2, 0.4], [0, 2], {}, ValueError, "1 \\(first item picked\\)"),
        ([0.2, 0.4], [0, np.nan], {}, ValueError, "complete"),
        (["a", "b"], [0, 1], {}, TypeError, "numbers"),
        ([0.2, 0.4], [0, 1], {"method": "fft"}, ValueError, "method"),
        ([0.2, 0.4], [0, 1], {"ties": "loose"}, ValueError, "ties"),
        ([0.2, 0.4], [0, 1], {"tol": 0}, ValueError, "tol"),
        ([0.2, 0.4], [0, 1], {"tol": "small"}, TypeError, "tol"),
        ([0.2, 0.4], [0, 1], {"max_terms": 10}, ValueError, "max_terms"),
    ],
)
def test_percentile_rejects_bad_input(theta, ranking, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        ranking_percentile(theta, ranking, **kwargs)


@pytest.mark.parametrize(
    "votes,conf,kwargs,match",
    [
        (np.array([1, 0, 1]), None, {}, "reshape"),
        (np.array([[1, 2]]), None, {}, "may only contain"),
        (np.array([[1, 0]]), np.array([[1, 5]]), {}, "confidence levels"),
        (np.array([[1, UNDECIDED]]), np.array([[1, 1]]), {}, "unable to decide"),
        (np.array([[1, np.nan]]), np.array([[1, 1]]), {}, "missing"),
        (np.array([[1, 0]]), np.array([[1]]), {}, "same shape"),
        (np.array([[np.nan, UNDECIDED]]), None, {}, "no decided answer"),
        (np.array([[1, 0]]), None, {"mapping": (0.75, 0.5, 1.0)}, "increasing"),
        (np.array([[1, 0]]), None, {"mapping": (0.5, 1.5)}, "increasing"),
        (np.array([[1, 0]]), None, {"undecided": "drop"}, "undecided"),
    ],
)
def test_estimate_theta_rejects_bad_input(votes, conf, kwargs, match):
    with pytest.raises(ValueError, match=match):
        estimate_theta(votes, conf, **kwargs)


def test_text_votes_and_unanswered_pairs_are_named():
    """Votes typed as "A"/"B" get an error that says the coding and how to recode, not numpy's
    bare "could not convert string to float"; a DataFrame's unanswered pair is named by its label."""
    import pandas as pd

    from bayeval.rankings import HumanRanking, PairwiseVotes

    votes = pd.DataFrame([[np.nan, np.nan], [1, 0], [1, 1]], index=["p0", "p1", "p2"], columns=["a", "b"])
    text = votes.replace({1.0: "A", 0.0: "B"})
    coding = r"not numbers \(at \(1, 0\): 'A', \(1, 1\): 'B'.*Expected 1 \(first item.*replace"
    with pytest.raises(TypeError, match=coding):
        count_votes(text)
    with pytest.raises(TypeError, match=coding):
        HumanRanking().build(PairwiseVotes(text))
    with pytest.raises(TypeError, match=coding):
        count_votes(text.to_numpy(dtype=str))
    np.testing.assert_array_equal(count_votes(votes.astype(object)).n_first, [0, 1, 2])
    with pytest.raises(ValueError, match=r"no decided answer.*: pairs 'p0'\. Drop"):
        estimate_theta(votes)
    with pytest.raises(ValueError, match=r"pairs \(by position\) 0\. Drop"):
        estimate_theta(votes.to_numpy())


def test_confidence_mle_rejects_bad_input():
    with pytest.raises(ValueError, match="n_votes"):
        confidence_mle([0], [[1, 1, 1]])
    with pytest.raises(ValueError, match="shape"):
        confidence_mle([3], [[1, 1]])
    with pytest.raises(ValueError, match="non-negative"):
        confidence_mle([3], [[1, -1, 0]])


# ----------------------------------------------------------------------------------------
# Bayesian model
# ----------------------------------------------------------------------------------------


def _simulated_votes(seed=0, n_pairs=20, n_ann=40):
    rng = np.random.default_rng(seed)
    theta = rng.uniform(0.15, 0.85, size=n_pairs)
    votes = (rng.uniform(size=(n_pairs, n_ann)) < theta[:, None]).astype(float)
    votes[0, :4] = UNDECIDED
    votes[5, -3:] = np.nan
    conf = np.full(votes.shape, np.nan)
    votes[1] = 1  # unanimous first, confident
    conf[1] = rng.choice(3, size=n_ann, p=[0.2, 0.3, 0.5])
    votes[2] = 0  # unanimous second, less confident
    conf[2] = rng.choice(3, size=n_ann, p=[0.5, 0.3, 0.2])
    conf[3, :5] = 2  # non-unanimous pair: confidence not used
    return votes, conf


def _quadrature_theta_mean(m, counts, mapping, grid=1500):
    """E[c.q] under Dirichlet(1) prior x (c.q)^m x Multinomial(counts | q), on a grid."""
    c = np.asarray(mapping)
    u = (np.arange(grid) + 0.5) / grid
    q0, q1 = np.meshgrid(u, u, indexing="ij")
    q2 = 1 - q0 - q1
    ok = q2 > 0
    q = np.stack([q0[ok], q1[ok], q2[ok]], 1)
    th = q @ c
    logw = m * np.log(th) + (np.asarray(counts) * np.log(q)).sum(1)
    w = np.exp(logw - logw.max())
    return float((w * th).sum() / w.sum())


@pytest.fixture(scope="module", params=["exact", "pymc"])
def fitted(request):
    """The default (exact draws) and NUTS: both must give the analytic posterior."""
    pytest.importorskip("pymc")
    from bayeval.rankings.model import HumanRanking, PairwiseVotes

    votes, conf = _simulated_votes()
    model = HumanRanking(theta_prior=(1.0, 1.0), confidence_prior=1.0)  # the quadrature is of the flat prior
    post = model.fit(
        PairwiseVotes(votes, conf), draws=300, tune=300, chains=2, random_seed=11, progressbar=False, cores=1,
        warn=False, sampler=request.param,
    )
    assert post.sampling.sampler == request.param
    return model, votes, conf, post


def test_model_build_has_named_dims():
    pytest.importorskip("pymc")
    from bayeval.rankings.model import HumanRanking, PairwiseVotes

    votes, conf = _simulated_votes()
    model = HumanRanking().build(PairwiseVotes(votes, conf))
    assert model.named_vars_to_dims["theta"] == ("pair",)
    assert model.named_vars_to_dims["q"] == ("confident_pair", "confidence_level")
    assert model.named_vars_to_dims["q_stick"] == ("confident_pair", "stick")
    assert list(model.coords["confident_pair"]) == [1, 2]
    assert "concentration" in model.named_vars
    assert len(model.coords["vote_pair"]) == 18
    half = HumanRanking(undecided="half", use_confidence=False).build(PairwiseVotes(votes, conf))
    assert "q" not in half.named_vars and "votes" in half.named_vars
    with pytest.raises(TypeError, match="PairwiseVotes"):
        HumanRanking().build(votes, conf)
    with pytest.raises(TypeError, match="PairwiseVotes"):
        HumanRanking().fit(PairwiseVotes(votes), conf)


def test_posterior_means_match_votes_within_monte_carlo_error(fitted):
    import arviz as az

    _, votes, conf, post = fitted
    counts = count_votes(votes, conf)
    vote_pairs = np.setdiff1d(np.arange(20), [1, 2])
    theta = post.theta.isel(pair=vote_pairs)
    mean = theta.mean(("chain", "draw")).values
    sd = theta.std(("chain", "draw")).values
    mcse = az.mcse(theta.to_dataset(name="t"), method="mean")["t"].values
    n1, n0 = counts.n_first[vote_pairs], counts.n_second[vote_pairs]
    # flat prior: the posterior is Beta(n1 + 1, n0 + 1) exactly
    exact_mean = (n1 + 1) / (n1 + n0 + 2)
    exact_sd = np.sqrt(exact_mean * (1 - exact_mean) / (n1 + n0 + 3))
    assert np.all(np.abs(mean - exact_mean) <= 4.5 * mcse)
    assert np.all(np.abs(sd / exact_sd - 1) < 0.25)  # relative MC error of an sd ~ 1/sqrt(2 ESS)
    # hence close to the vote fractions: prior shift <= 1 / (m + 2), plus MC error
    frac = n1 / (n1 + n0)
    assert np.all(np.abs(mean - frac) <= 1 / (n1 + n0 + 2) + 4.5 * mcse)
    assert np.all(mcse < 0.3 * sd)  # the sampler mixed


def test_confident_pairs_match_quadrature(fitted):
    import arviz as az

    _, votes, conf, post = fitted
    counts = count_votes(votes, conf)
    for pair, first in [(1, True), (2, False)]:
        th = post.theta.isel(pair=pair)
        chosen = th if first else 1 - th
        ref = _quadrature_theta_mean(40, counts.confidence_counts[pair], (0.5, 0.75, 1.0))
        mcse = float(az.mcse(chosen.to_dataset(name="t"), method="mean")["t"])
        assert abs(float(chosen.mean()) - ref) <= 4.5 * mcse + 2e-4
        assert float(chosen.min()) >= 0.5  # mapping's lowest level


def test_posterior_reports_undecided_and_unused_confidence(fitted):
    _, votes, conf, post = fitted
    assert post.undecided_total == 4
    frame = post.counts_frame()
    assert frame.loc[0, "n_undecided"] == 4
    assert frame["used_confidence"].sum() == 2
    assert frame.loc[3, "n_confidence_unused"] == 5
    assert int(post.n_undecided.sum()) == 4


def test_posterior_percentile_equals_core_per_draw(fitted):
    """Q is the core percentile at the predictive theta (the posterior mean); per_draw=True
    gives the core percentile at each draw; the verdict and the summary read the former."""
    _, votes, conf, post = fitted
    rng = np.random.default_rng(4)
    systems = {"good": (post.theta.mean(("chain", "draw")).values > 0.5).astype(int)}
    systems["random"] = rng.integers(0, 2, size=20)
    q = post.percentile(systems)
    assert q.dims == ("system",)
    mean_theta = post.theta.values.mean(axis=(0, 1))
    np.testing.assert_allclose(post.theta_predictive.values, mean_theta)
    for s, r in systems.items():
        assert float(q.sel(system=s)) == pytest.approx(float(ranking_percentile(mean_theta, r)), abs=1e-12)
    per_draw = post.percentile(systems, per_draw=True)
    assert per_draw.dims == ("chain", "draw", "system")
    th = post.theta.values
    for c, d in [(0, 0), (1, 123), (0, 299)]:
        for s, r in systems.items():
            ref = ranking_percentile(th[c, d], r, tol=1e-3)
            assert float(per_draw.sel(system=s)[c, d]) == pytest.approx(float(ref), abs=1e-12)
    p = post.indistinguishable(systems, epsilon=0.1)
    np.testing.assert_array_equal(p.values, (q <= 0.9).values.astype(float))
    assert post.indistinguishable(systems["good"], epsilon=0.1) is True
    summ = post.summary(systems, epsilon=0.1)
    assert list(summ.index) == ["good", "random"]
    np.testing.assert_allclose(summ["Q"], q.values)
    np.testing.assert_allclose(summ["p_value"], 1 - q.values)
    assert np.all(summ["Q_lower"] <= summ["Q"]) and np.all(summ["Q"] <= summ["Q_upper"])
    assert np.all(summ["Q_upper"] - summ["Q_lower"] <= 2e-3) and summ["decided"].all()
    np.testing.assert_array_equal(summ["indistinguishable"], (q.values <= 0.9).astype(float))
    assert np.all(summ["n_undecided"] == 4)
    assert summ.loc["good", "Q"] < summ.loc["random", "Q"]


def _held_out_humans(n_pairs, n_votes, reps, seed, a=0.7):
    """Simulated panels (theta ~ Beta(a, a), n_votes votes per pair) and one more human's
    ranking each, left out of the votes; posteriors from the exact conjugate draws."""
    from bayeval.rankings.model import RankingPosterior

    rng = np.random.default_rng(seed)
    for _ in range(reps):
        theta = rng.beta(a, a, n_pairs)
        votes = (rng.random((n_pairs, n_votes)) < theta[:, None]).astype(float)
        human = (rng.random(n_pairs) < theta).astype(int)
        n1 = votes.sum(1)
        draws = rng.beta(a + n1, a + n_votes - n1, size=(1, 200, n_pairs))
        yield RankingPosterior.from_draws(draws, votes), human


def test_a_held_out_humans_q_is_uniform_and_rarely_called_distinguishable():
    """The percentile of a human's ranking that is not among the votes is uniform when the
    model holds, so the verdict calls a human distinguishable at rate <= epsilon. Q used to
    be computed per posterior draw of theta: for 300 pairs x 5 votes the per-draw Q of such
    rankings sat near 1 (its mean over draws above 0.9 in every panel checked here) and
    p_indistinguishable was near 0, calling humans distinguishable from humans."""
    reps = 150
    qs, flagged = [], []
    for k, (post, human) in enumerate(_held_out_humans(300, 5, reps, seed=11)):
        qs.append(float(post.percentile(human, tol=1e-2)))
        flagged.append(not post.indistinguishable(human, epsilon=0.1, tol=1e-2))
        if k < 3:
            assert float(post.percentile(human, tol=1e-2, per_draw=True).mean()) > 0.9
    qs = np.array(qs)
    # uniform Q: mean 0.5 (sd 0.289 / sqrt(reps)); share above 0.9 is 0.1 (binomial sd)
    assert abs(qs.mean() - 0.5) < 3.5 * 0.289 / np.sqrt(reps)
    assert np.mean(flagged) < 0.1 + 3.5 * np.sqrt(0.09 / reps)
    assert np.mean(qs < 0.1) < 0.1 + 3.5 * np.sqrt(0.09 / reps)


@pytest.mark.parametrize("conc", [1.0, 2.5])
def test_model_density_is_the_papers_likelihood_times_prior(conc):
    """The model's density (no Jacobian) is the paper's likelihood (eqs. 12-14 with the
    Binomial votes) times Beta / Dirichlet(conc) priors; q enters through stick-breaking
    variables v, whose density is the Dirichlet density times |dq/dv| = 1 - q0. With
    flat priors the density in (theta, q) is the likelihood, so its mode is the point
    estimate (whose constrained MLE is checked against SLSQP above)."""
    pytest.importorskip("pymc")
    import pytensor
    import pytensor.tensor as pt
    from scipy import stats

    from bayeval.rankings.model import HumanRanking, PairwiseVotes

    votes = np.array(
        [[1, 0, 1, 1, 0, 1], [0, 0, 1, 0, 0, 0], [1, 1, 1, 1, 1, 1], [0, 0, 0, 0, 0, np.nan]]
    )
    conf = np.full(votes.shape, np.nan)
    conf[2] = [0, 1, 2, 2, 1, 2]
    conf[3, :5] = [0, 1, 1, 2, 0]
    model = HumanRanking(theta_prior=(1, 1), confidence_prior=conc)
    m = model.build(PairwiseVotes(votes, conf))
    logp = m.compile_logp(jacobian=False, mode="FAST_COMPILE")
    counts = count_votes(votes, conf)
    c = np.array(model.mapping)
    names = ["theta_votes", "q_stick"]
    inputs = [pt.dvector(), pt.dmatrix()]
    outputs = [
        m.rvs_to_transforms[m[n]].forward(x, *m[n].owner.inputs)
        for n, x in zip(names, inputs, strict=True)
    ]
    forward = pytensor.function(inputs, outputs, mode="FAST_COMPILE")
    value_names = [m.rvs_to_values[m[n]].name for n in names]

    def model_logp(theta_v, q):
        v = np.stack([q[:, 0], q[:, 1] / (1 - q[:, 0])], axis=1)
        return logp(dict(zip(value_names, forward(theta_v, v), strict=True)))

    def loglik(theta_v, q):
        th = np.empty(4)
        th[[0, 1]] = theta_v
        th[2], th[3] = q[0] @ c, 1 - q[1] @ c
        votes_ll = stats.binom.logpmf(counts.n_first, counts.n_first + counts.n_second, th).sum()
        conf_ll = sum(
            stats.multinomial.logpmf(counts.confidence_counts[i], counts.n_confidence[i], q[j])
            for j, i in enumerate([2, 3])
        )
        return votes_ll + conf_ll

    def log_prior_v(q):  # Dirichlet(conc) density of q, times the Jacobian 1 - q0
        return sum(stats.dirichlet.logpdf(qq, np.full(3, conc)) + np.log1p(-qq[0]) for qq in q)

    rng = np.random.default_rng(0)
    for _ in range(5):
        tv, q = rng.uniform(0.05, 0.95, size=2), rng.dirichlet(np.ones(3), size=2)
        assert model_logp(tv, q) == pytest.approx(loglik(tv, q) + log_prior_v(q), abs=1e-8)
    if conc != 1.0:
        return
    est = model.point_estimate(votes, conf)
    t0, q0 = est.theta[[0, 1]], est.q[[2, 3]]

    def density_theta_q(tv, q):  # flat priors: the likelihood, up to a constant
        return model_logp(tv, q) - np.log1p(-q[:, 0]).sum()

    best = density_theta_q(t0, q0)
    for _ in range(40):  # every nearby point is worse
        tv = np.clip(t0 + rng.normal(0, 0.02, size=2), 0.01, 0.99)
        q = np.clip(q0 + rng.normal(0, 0.02, size=(2, 3)), 1e-3, None)
        assert density_theta_q(tv, q / q.sum(1, keepdims=True)) <= best + 1e-10


def test_model_rejects_bad_settings():
    from bayeval.rankings.model import HumanRanking, RankingPosterior

    with pytest.raises(ValueError, match="theta_prior"):
        HumanRanking(theta_prior="flat")
    with pytest.raises(ValueError, match="theta_prior"):
        HumanRanking(theta_prior=(1, 2, 3))
    with pytest.raises(ValueError, match="confidence_prior"):
        HumanRanking(confidence_prior=-1)
    with pytest.raises(TypeError, match="use_confidence"):
        HumanRanking(use_confidence="yes")
    votes = np.array([[1, 0], [1, 1]])
    post = RankingPosterior.from_draws(np.full((1, 5, 2), 0.6), votes)
    with pytest.raises(ValueError, match="n_pairs=2"):
        post.percentile([1, 0, 1])
    with pytest.raises(ValueError, match="shape"):
        RankingPosterior.from_draws(np.full((5, 2), 0.6), votes)


# ----------------------------------------------------------------------------------------
# plots and tables
# ----------------------------------------------------------------------------------------


def test_percentile_table_and_plots():
    import xarray as xr

    from bayeval.rankings.plots import (
        percentile_table,
        plot_log_prob_distribution,
        plot_percentile_table,
    )

    rng = np.random.default_rng(0)
    q = xr.DataArray(
        rng.beta(2, 5, size=(2, 100, 3, 2)),
        dims=("chain", "draw", "attribute", "system"),
        coords={"attribute": ["aged", "wet", "hard"], "system": ["A", "B"]},
    )
    long = percentile_table(q, wide=False, epsilon=0.1)
    sub = q.sel(attribute="wet", system="B")
    assert long.loc[("wet", "B"), "mean"] == pytest.approx(float(sub.mean()))
    assert long.loc[("wet", "B"), "p_indistinguishable"] == pytest.approx(
        float((sub <= 0.9).mean())
    )
    wide = percentile_table(q)
    assert wide.shape == (3, 2) and wide.loc["wet", "B"].startswith(
        f"{100 * float(sub.mean()):.1f} ["
    )
    as_dict = {(a, s): q.sel(attribute=a, system=s) for a in ["aged", "wet", "hard"] for s in "AB"}
    assert percentile_table(as_dict).equals(wide)
    import matplotlib.pyplot as plt

    fig = plot_percentile_table(q)
    assert len(fig.axes) == 1
    plt.close(fig)
    theta = rng.uniform(size=200)
    fig = plot_log_prob_distribution(theta, (theta > 0.5).astype(int), tol=1e-3)
    assert "Q = 0.000" in fig.axes[0].get_legend().get_texts()[0].get_text()
    plt.close(fig)
    with pytest.raises(TypeError, match="DataArray"):
        percentile_table([1, 2, 3])


def test_exact_draws_of_the_hierarchical_model_match_quadrature():
    """The default sampler draws log kappa from its one-dimensional marginal posterior and
    theta given kappa from its conjugate Beta: the draws' moments equal a quadrature of
    the exact posterior (scipy's adaptive quad, per pair, no shared code) within Monte
    Carlo error; the draws carry the variables and dims of a NUTS fit."""
    from scipy import integrate, special

    from bayeval.rankings.model import HumanRanking, PairwiseVotes

    rng = np.random.default_rng(5)
    votes = (rng.random((30, 6)) < rng.beta(4, 4, 30)[:, None]).astype(float)
    votes[0, :2] = UNDECIDED
    post = HumanRanking().fit(PairwiseVotes(votes), draws=5000, chains=2, random_seed=3, progressbar=False)
    assert post.sampling.sampler == "exact" and post.convergence["ok"]
    counts = count_votes(votes)
    k1, k0 = counts.n_first.astype(float), counts.n_second.astype(float)

    def log_dens(x):
        kap = np.exp(x)
        return -0.5 * x**2 + np.sum(special.betaln(kap + k1, kap + k0) - special.betaln(kap, kap))

    top = max(log_dens(x) for x in np.linspace(-6, 8, 281))

    def moment(f):
        return integrate.quad(lambda x: f(x) * np.exp(log_dens(x) - top), -12, 14, limit=200)[0]

    z = moment(lambda x: 1.0)
    mean = moment(lambda x: x) / z
    sd = np.sqrt(moment(lambda x: (x - mean) ** 2) / z)
    lk = post.idata.posterior["log_concentration"].values.ravel()
    n = lk.size
    assert abs(lk.mean() - mean) < 4 * sd / np.sqrt(n)
    assert abs(lk.std() / sd - 1) < 4 / np.sqrt(2 * n)
    np.testing.assert_allclose(post.idata.posterior["concentration"].values, np.exp(post.idata.posterior[
        "log_concentration"].values))
    theta = post.theta.values.reshape(n, -1)
    for i in (0, 7, 19):
        m_i = moment(lambda x: (np.exp(x) + k1[i]) / (2 * np.exp(x) + k1[i] + k0[i])) / z
        assert abs(theta[:, i].mean() - m_i) < 4 * theta[:, i].std() / np.sqrt(n), i
    nuts = HumanRanking().fit(PairwiseVotes(votes), draws=20, tune=20, chains=1, random_seed=3, progressbar=False,
                              warn=False, sampler="pymc", cores=1)
    for v, da in nuts.idata.posterior.data_vars.items():
        assert post.idata.posterior[v].dims == da.dims, v
        for d in da.dims[2:]:
            np.testing.assert_array_equal(post.idata.posterior[d].values, da[d].values)


def test_exact_draws_of_confident_pairs_and_their_limits():
    """A confident pair's q is drawn from the exact mixture of Dirichlets: its mean matches
    a quadrature (``_quadrature_theta_mean``) for a pair of 40 votes; the same seed gives
    the same draws; a pair with too many votes to enumerate falls back to NUTS under
    ``"auto"`` (saying why) and is refused under ``"exact"``."""
    from bayeval.rankings import model as RM

    rng = np.random.default_rng(0)
    counts = np.array([[3.0, 10.0, 27.0], [20.0, 15.0, 5.0]])
    q = RM._confident_q(1.0 + counts, np.array([40, 40]), np.array([0.5, 0.75, 1.0]), 40_000, rng)
    chosen = q @ np.array([0.5, 0.75, 1.0])
    for row in range(2):
        ref = _quadrature_theta_mean(40, counts[row], (0.5, 0.75, 1.0))
        assert abs(chosen[:, row].mean() - ref) < 4 * chosen[:, row].std() / np.sqrt(40_000) + 2e-4, row
    np.testing.assert_allclose(q.sum(axis=-1), 1.0)
    assert RM._compositions(2, 3).tolist() == [[0, 0, 2], [0, 1, 1], [0, 2, 0], [1, 0, 1], [1, 1, 0], [2, 0, 0]]
    votes, conf = _simulated_votes()
    a = RM.HumanRanking().fit(RM.PairwiseVotes(votes, conf), draws=50, chains=2, random_seed=1, progressbar=False)
    b = RM.HumanRanking().fit(RM.PairwiseVotes(votes, conf), draws=50, chains=2, random_seed=1, progressbar=False)
    np.testing.assert_array_equal(a.theta.values, b.theta.values)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(RM, "_MAX_COMPOSITIONS", 100)  # 40 votes over 3 levels: 861 allocations
        with pytest.raises(ValueError, match="sampler='exact' is not available.*40 votes"):
            RM.HumanRanking().fit(RM.PairwiseVotes(votes, conf), sampler="exact", draws=10, progressbar=False)
        post = RM.HumanRanking().fit(RM.PairwiseVotes(votes, conf), draws=20, tune=20, chains=1, cores=1,
                                     random_seed=1, progressbar=False, warn=False)
    assert post.sampling.sampler == "pymc" and "40 votes" in post.sampling.fallback_reason
    with pytest.raises(ValueError, match="sampler='exact' is not available for Calibration"):
        from bayeval import EvalData
        from bayeval.models import Calibration

        Calibration().fit(EvalData([0.2, 0.8], [0.0, 1.0]), sampler="exact", progressbar=False)


def _q_draws(seed=0, attributes=("aged", "wet"), systems=("A", "B")):
    import xarray as xr

    rng = np.random.default_rng(seed)
    return xr.DataArray(
        rng.beta(2, 5, size=(2, 50, len(attributes), len(systems))),
        dims=("chain", "draw", "attribute", "system"),
        coords={"attribute": list(attributes), "system": list(systems)},
    )


def test_ranking_plots_make_pyplot_figures_without_ax():
    """Without ax the figures are pyplot's (as bayeval.plots makes them), so a notebook shows
    them; with ax they draw on the caller's figure and make none."""
    import matplotlib.pyplot as plt

    from bayeval.rankings.plots import plot_log_prob_distribution, plot_percentile_table

    theta = np.random.default_rng(0).uniform(size=30)
    figs = [plot_log_prob_distribution(theta, (theta > 0.5).astype(int), tol=1e-3),
            plot_percentile_table(_q_draws())]
    try:
        for fig in figs:
            assert fig.number in plt.get_fignums()
    finally:
        for fig in figs:
            plt.close(fig)
    fig, ax = plt.subplots()
    try:
        before = plt.get_fignums()
        assert plot_percentile_table(_q_draws(), ax=ax) is fig
        assert plt.get_fignums() == before
    finally:
        plt.close(fig)


def test_labelled_ranking_is_matched_to_the_pairs_by_label():
    """A Series (or labelled DataArray) in another pair order gives the Q of the same choices;
    a different label set is refused, naming the missing and the unknown labels."""
    import pandas as pd
    import xarray as xr

    from bayeval.rankings.model import RankingPosterior

    votes = pd.DataFrame([[1, 1, 0], [0, 0, 1], [1, 1, 1]], index=["a", "b", "c"])
    draws = np.random.default_rng(5).beta([3, 2, 5], [2, 3, 1], size=(1, 40, 3))
    post = RankingPosterior.from_draws(draws, votes)
    ref = post.percentile([1, 0, 1])
    shuffled = pd.Series([1, 1, 0], index=["c", "a", "b"])
    np.testing.assert_array_equal(post.percentile(shuffled).values, ref.values)
    assert post.summary(shuffled).loc["Q", "Q"] == pytest.approx(float(ref))
    as_da = xr.DataArray([0, 1, 1], dims="pair", coords={"pair": ["b", "c", "a"]})
    np.testing.assert_array_equal(post.percentile(as_da).values, ref.values)
    q = post.percentile({"x": shuffled, "y": [1, 0, 1]})
    np.testing.assert_array_equal(q.sel(system="x").values, q.sel(system="y").values)
    with pytest.raises(ValueError, match=r"missing 1 of its 3 pairs \('c'\); 1 unknown label\(s\) \('d'\)"):
        post.percentile(pd.Series([1, 0, 1], index=["a", "b", "d"]))
    with pytest.raises(ValueError, match="repeat"):
        post.percentile(pd.Series([1, 0, 1, 1], index=["a", "b", "c", "c"]))


def test_log_prob_plot_shades_exactly_q_and_shows_every_line():
    """The blue bars hold Q, as the legend says, also where the ranking's own log-probability
    lies below its bin's centre; the threshold and ranking lines lie inside the axes."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_rgba

    from bayeval.rankings.plots import plot_log_prob_distribution

    theta = np.random.default_rng(1).uniform(size=300)
    far_off = (theta < 0.5).astype(int)  # every pair against the majority: far below the bulk
    cases = [([0.7, 0.6], [1, 0]), ([0.7, 0.6], [0, 1]), ([0.9, 0.7, 0.6], [1, 0, 1]),
             (theta, (theta > 0.5).astype(int) ^ (np.arange(300) % 7 == 0)), (theta, far_off)]
    for th, r in cases:
        fig = plot_log_prob_distribution(th, r, tol=1e-3)
        try:
            ax = fig.axes[0]
            q = float(ranking_percentile(th, r, tol=1e-3))
            blue = [p.get_height() for p in ax.patches if p.get_facecolor() == to_rgba("C0")]
            # exact for few pairs; for many, up to the Fourier accuracy (tol) and the tail of
            # rankings less probable than the plotted range
            assert sum(blue) == pytest.approx(q, abs=1e-9 if len(th) <= 3 else 1e-3)
            assert f"Q = {q:.3f}" in ax.get_legend().get_texts()[0].get_text()
            left, right = ax.get_xlim()
            for line in ax.lines:
                assert left < line.get_xdata()[0] < right, line.get_label()
            assert len(ax.lines) == 2  # the ranking and the 90 % line, as in the legend
        finally:
            plt.close(fig)


def test_percentile_table_legend_covers_no_point():
    """The legend sits outside the axes (it used to cover the lower right, where Q is near 1):
    with one attribute and two systems, the second system's point at Q = 0.99 stays visible."""
    import matplotlib.pyplot as plt
    import xarray as xr

    from bayeval.rankings.plots import plot_percentile_table

    rng = np.random.default_rng(2)
    draws = np.stack([rng.beta(2, 5, size=(2, 50)), 0.98 + 0.02 * rng.uniform(size=(2, 50))], -1)
    q = xr.DataArray(draws[..., None, :], dims=("chain", "draw", "attribute", "system"),
                     coords={"attribute": ["wet"], "system": ["A", "B"]})
    for ax in (None, plt.subplots()[1]):
        fig = plot_percentile_table(q) if ax is None else plot_percentile_table(q, ax=ax)
        try:
            fig.canvas.draw()
            ax = fig.axes[0]
            legend = ax.get_legend().get_window_extent()
            assert legend.x0 >= ax.get_window_extent().x1
            points = np.concatenate([line.get_xydata() for line in ax.lines if line.get_marker() == "o"])
            x, y = ax.transData.transform(points).T
            inside = (legend.x0 <= x) & (x <= legend.x1) & (legend.y0 <= y) & (y <= legend.y1)
            assert not inside.any()
        finally:
            plt.close(fig)


def test_ranking_posterior_docstring_names_only_what_it_has():
    """The class docstring listed a ``save`` method it does not have; it names bayeval.save."""
    import re

    from bayeval.rankings.model import RankingPosterior

    post = RankingPosterior.from_draws(np.full((1, 5, 2), 0.6), np.array([[1, 0], [1, 1]]))
    intro = RankingPosterior.__doc__.split("Parameters")[0]
    named = re.findall(r"``(\w+)``", intro)
    assert named and [n for n in named if not hasattr(post, n)] == []
    assert "bayeval.save(post, path)" in intro and "bayeval.load(path)" in intro


def test_percentile_table_summarizes_the_defined_draws_and_counts_the_others():
    """A NaN draw of Q is left out of mean, sd, HDI and p_indistinguishable alike (it was
    counted as distinguishable, and made one HDI end NaN); attrs["undefined"] gives its share."""
    from bayeval.core.summary import hdi
    from bayeval.rankings.plots import percentile_table

    q = _q_draws(3)
    q[0, 7, 0, 0] = np.nan
    long = percentile_table(q, wide=False, epsilon=0.1)
    row = long.loc[("aged", "A")]
    defined = q.sel(attribute="aged", system="A").values.ravel()
    defined = defined[np.isfinite(defined)]
    assert row["mean"] == pytest.approx(defined.mean())
    assert row["sd"] == pytest.approx(defined.std(ddof=1))
    assert [row["hdi_5%"], row["hdi_95%"]] == pytest.approx(hdi(defined, 0.9).tolist())
    assert row["p_indistinguishable"] == pytest.approx((defined <= 0.9).mean())
    assert long.attrs["undefined"] == {("aged", "A"): pytest.approx(0.01)}
    assert long.drop(index=[("aged", "A")]).notna().all().all()
    assert percentile_table(q).attrs["undefined"] == long.attrs["undefined"]
    assert percentile_table(_q_draws(3), wide=False).attrs["undefined"] == {}
    # a system missing for an attribute: every draw undefined, every statistic NaN
    partial = {(a, s): _q_draws(4).sel(attribute=a, system=s) for a, s in [("aged", "A"), ("wet", "B")]}
    long = percentile_table(partial, wide=False)
    assert long.loc[("aged", "B")].isna().all() and long.loc[("aged", "A")].notna().all()
    assert long.attrs["undefined"] == {("aged", "B"): 1.0, ("wet", "A"): 1.0}
    # point values (no draws): NaN is undefined, not "distinguishable"
    point = q.isel(chain=0, draw=7)
    long = percentile_table(point, wide=False)
    assert np.isnan(long.loc[("aged", "A"), "p_indistinguishable"])
    assert long.attrs["undefined"] == {("aged", "A"): 1.0}


def test_ranking_summary_names_undefined_rows(monkeypatch):
    """RankingPosterior.summary reads an undefined (NaN) Q as undefined, not as a verdict:
    its row's indistinguishable is NaN (NaN <= 1 - epsilon would read as distinguishable),
    attrs["undefined"] names it, and the other rows are untouched."""
    import dataclasses

    from bayeval.rankings import model as M

    draws = np.random.default_rng(6).beta([5, 1, 2], [1, 3, 2], size=(2, 50, 3))
    votes = np.array([[1, 1, 1], [0, 0, 1], [1, 0, 1]])
    post = M.RankingPosterior.from_draws(draws, votes)
    assert post.summary([1, 0, 1]).attrs["undefined"] == {}
    exact = M.ranking_percentile

    def nan_for_rankings_starting_with_0(theta, ranking, **kwargs):
        res = exact(theta, ranking, **kwargs)
        bad = np.asarray(ranking)[..., 0] == 0
        return dataclasses.replace(res, **{f: np.where(bad, np.nan, getattr(res, f))
                                           for f in ("q", "lower", "upper")})

    monkeypatch.setattr(M, "ranking_percentile", nan_for_rankings_starting_with_0)
    post = M.RankingPosterior.from_draws(draws, votes)
    summ = post.summary({"ok": [1, 0, 1], "bad": [0, 0, 1]}, epsilon=0.1)
    assert summ.attrs["undefined"] == {"bad": 1.0}
    assert np.isnan(summ.loc["bad", "indistinguishable"]) and np.isnan(summ.loc["bad", "Q"])
    ok = exact(post.theta_predictive.values, [1, 0, 1])
    assert summ.loc["ok", "Q"] == pytest.approx(float(ok))
    assert summ.loc["ok", "indistinguishable"] == float(float(ok) <= 0.9)
    assert np.isnan(post.indistinguishable({"ok": [1, 0, 1], "bad": [0, 0, 1]}).sel(system="bad"))


def test_percentile_cache_tells_arrays_with_the_same_bytes_apart():
    """The percentile cache was keyed by the ranking's bytes and dims, not its dtype and shape:
    one int64 ranking (1, 3) and the eight int8 rankings (8, 3) made of its bytes -- every one
    a valid 0/1 ranking -- shared a key, so the second call got the first call's one row."""
    from bayeval.rankings.model import RankingPosterior

    draws = np.random.default_rng(1).beta([3, 2, 5], [2, 3, 1], size=(2, 50, 3))
    votes = np.array([[1, 1, 0], [0, 0, 1], [1, 1, 1]])
    wide = np.array([[1, 0, 1]], dtype=np.int64)
    rows = wide.view(np.int8).reshape(8, 3)
    assert rows.tobytes() == wide.tobytes() and set(np.unique(rows)) == {0, 1}
    post = RankingPosterior.from_draws(draws, votes)
    first = post.percentile(wide)
    again = post.percentile(rows)
    alone = RankingPosterior.from_draws(draws, votes).percentile(rows)
    assert first.sizes["ranking"] == 1 and again.sizes["ranking"] == 8
    np.testing.assert_array_equal(again.values, alone.values)
    # a cached call with the same ranking still returns the same values
    np.testing.assert_array_equal(post.percentile(wide).values, first.values)


def test_pandas_inputs_of_the_point_estimate_route_are_paired_by_label():
    """ranking_percentile / ranking_log_probability pair a theta Series with a ranking Series
    by label (as RankingPosterior.percentile does); estimate_theta, count_votes and
    PairwiseVotes pair a confidence DataFrame with the votes by index; other labels, or
    row numbers beside labels in another order, are refused; to_frame keeps the pair labels."""
    import pandas as pd

    from bayeval.rankings import HumanRanking, PairwiseVotes

    theta = pd.Series([0.9, 0.2, 0.6], index=["a", "b", "c"])
    ranking = pd.Series([1, 0, 1], index=["a", "b", "c"])
    shuffled = ranking.loc[["b", "c", "a"]]
    assert float(ranking_percentile(theta, ranking)) == 0.0
    assert float(ranking_percentile(theta, shuffled)) == 0.0
    assert float(R.ranking_log_probability(theta, shuffled)) == pytest.approx(
        float(R.ranking_log_probability(theta.to_numpy(), ranking.to_numpy())))
    with pytest.raises(ValueError, match=r"ranking\.loc\[theta\.index\]"):
        ranking_percentile(theta, ranking.rename(index={"c": "d"}))
    with pytest.raises(ValueError, match="default 0 .. 2"):
        ranking_percentile(theta.reset_index(drop=True), pd.Series([1, 1, 0], index=[2, 0, 1]))
    # a DataFrame's columns are its pairs (rows: theta draws or rankings)
    draws = pd.DataFrame([[0.9, 0.2, 0.6], [0.8, 0.3, 0.7]], columns=["a", "b", "c"])
    np.testing.assert_array_equal(ranking_percentile(draws, shuffled), [0.0, 0.0])

    votes = pd.DataFrame([[1, 1, 1], [0, 0, 0], [1, 0, 1]], index=["a", "b", "c"])
    conf = pd.DataFrame([[2, 2, 2], [0, 0, 0], [np.nan] * 3], index=["a", "b", "c"])
    reordered = conf.loc[["b", "a", "c"]]
    ref = estimate_theta(votes, conf)
    np.testing.assert_allclose(estimate_theta(votes, reordered).theta, ref.theta)
    np.testing.assert_allclose(ref.theta, [1.0, 0.5, 2 / 3])
    np.testing.assert_array_equal(count_votes(votes, reordered).confidence_counts,
                                  count_votes(votes.to_numpy(), conf.to_numpy()).confidence_counts)
    frame = ref.to_frame()
    assert frame.index.tolist() == ["a", "b", "c"] and frame.index.name == "pair"
    assert float(ranking_percentile(frame["theta"], pd.Series([1, 1, 0], index=["c", "a", "b"]))) == 0.0
    assert estimate_theta(votes.to_numpy()).to_frame().index.tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match=r"confidence\.loc\[votes\.index\]"):
        estimate_theta(votes, conf.rename(index={"c": "d"}))
    with pytest.raises(ValueError, match="different items"):
        estimate_theta(votes, conf.reset_index(drop=True))

    data = PairwiseVotes(votes, reordered)
    assert data.confidence.index.tolist() == ["a", "b", "c"]
    post = HumanRanking().fit(data, draws=60, tune=60, chains=1, random_seed=1, progressbar=False)
    np.testing.assert_array_equal(post.counts.confidence_counts, ref.counts.confidence_counts)
    with pytest.raises(ValueError, match="different items"):
        PairwiseVotes(votes, conf.rename(index={"c": "d"}))
    # annotator columns in another order are matched by label too
    named = pd.DataFrame([[1, np.nan], [0, 1]], index=["a", "b"], columns=["ann", "bob"])
    named_conf = pd.DataFrame([[np.nan, 2], [1, 0]], index=["a", "b"], columns=["bob", "ann"])
    assert count_votes(named, named_conf).confidence_counts.tolist() == [[0, 0, 1], [1, 1, 0]]


def test_from_draws_matches_a_dataarrays_pair_labels_to_the_votes():
    """A DataArray of theta draws labelled by pair, in another order than the votes' index,
    is matched by label; labels not among the votes' pairs, or pairs without draws, are an
    error naming them; without labels (or beside plain-array votes) pairs go by position."""
    import pandas as pd
    import xarray as xr

    from bayeval.rankings.model import RankingPosterior

    votes = pd.DataFrame([[1, 1, 1], [0, 0, 0], [1, 0, 1]], index=list("abc"))
    da = xr.DataArray(np.broadcast_to([0.95, 0.05, 0.6], (1, 50, 3)).copy(),
                      dims=("chain", "draw", "pair"), coords={"pair": list("abc")})
    post = RankingPosterior.from_draws(da.isel(pair=[2, 0, 1]), votes)
    mean = post.theta.mean(("chain", "draw"))
    assert mean.sel(pair=["a", "b", "c"]).values.tolist() == pytest.approx([0.95, 0.05, 0.6])
    assert post.pair_labels.tolist() == ["a", "b", "c"]
    with pytest.raises(ValueError, match=r"1 not among the votes' pairs \(\['z'\]\).*\['c'\]"):
        RankingPosterior.from_draws(da.assign_coords(pair=["a", "b", "z"]), votes)
    with pytest.raises(ValueError, match="repeat"):
        RankingPosterior.from_draws(da.assign_coords(pair=["a", "a", "c"]), votes)
    by_position = RankingPosterior.from_draws(da.isel(pair=[2, 0, 1]).drop_vars("pair"), votes)
    assert by_position.theta.mean(("chain", "draw")).values.tolist() == pytest.approx([0.6, 0.95, 0.05])
    plain = RankingPosterior.from_draws(da.isel(pair=[2, 0, 1]), votes.to_numpy())
    assert plain.theta.mean(("chain", "draw")).values.tolist() == pytest.approx([0.6, 0.95, 0.05])


def test_point_estimate_follows_the_models_use_confidence():
    """HumanRanking(use_confidence=False).point_estimate gives unanimous pairs their vote
    share (as its fitted model does), not the confidence MLE; estimate_theta takes the flag."""
    import pandas as pd

    from bayeval.rankings import HumanRanking

    votes = pd.DataFrame([[1, 1, 1], [0, 0, 0], [1, 0, 1]], index=list("abc"))
    conf = pd.DataFrame([[2, 2, 1], [2, 2, 2], [np.nan] * 3], index=list("abc"))
    with_conf = HumanRanking().point_estimate(votes, conf)
    assert with_conf.theta[0] < 0.95 and with_conf.used_confidence.tolist() == [True, True, False]
    est = HumanRanking(use_confidence=False).point_estimate(votes, conf)
    np.testing.assert_allclose(est.theta, [1.0, 0.0, 2 / 3])
    assert not est.used_confidence.any() and est.n_confidence_unused.tolist() == [3, 3, 0]
    np.testing.assert_allclose(estimate_theta(votes, conf, use_confidence=False).theta, est.theta)
    with pytest.raises(TypeError, match="use_confidence"):
        estimate_theta(votes, conf, use_confidence="no")


def test_estimate_theta_refuses_repeated_pair_labels():
    """A votes DataFrame labelling two rows with one pair label is refused (as HumanRanking
    refuses it), not turned into a to_frame() with a duplicated index."""
    import pandas as pd

    from bayeval.rankings import HumanRanking, PairwiseVotes

    votes = pd.DataFrame([[1, 1, 1], [0, 0, 0], [1, 0, 1]], index=list("aac"))
    with pytest.raises(ValueError, match=r"label each pair once.*\['a'\].*its own label"):
        estimate_theta(votes)
    with pytest.raises(ValueError, match=r"label each pair once.*\['a'\]"):
        HumanRanking().point_estimate(votes)
    with pytest.raises(ValueError, match=r"label each pair once.*\['a'\]"):
        HumanRanking()._check_data(PairwiseVotes(votes))


def test_pooled_confidence_prior_recovers_the_pairs_dirichlet_and_enters_both_samplers():
    """confidence_prior="pooled": the Dirichlet parameters that make the confident pairs'
    answers most probable. On 400 unanimous pairs whose level probabilities are drawn from
    Dirichlet(0.4, 1.0, 4.0), the estimate is near those (its sampling error at 400 pairs of
    10 answers is about 25%); the exact draws and the PyMC model's stick-breaking prior use it."""
    from bayeval.rankings.model import HumanRanking, PairwiseVotes

    rng = np.random.default_rng(8)
    true = np.array([0.4, 1.0, 4.0])
    q = rng.dirichlet(true, size=400)
    votes = np.ones((400, 10))  # unanimous pairs (the paper's design asks for confidence there)
    conf = np.array([rng.choice(3, size=10, p=qi) for qi in q], dtype=float)
    model = HumanRanking(confidence_prior="pooled")
    alpha = model.pooled_confidence_prior(votes, conf)
    np.testing.assert_allclose(np.log(alpha), np.log(true), atol=0.45)
    # the flat prior's estimate would be (1, 1, 1); the pooled one is not
    assert alpha[2] / alpha[0] > 4
    pymc_model = model.build(PairwiseVotes(votes[:20], conf[:20]))
    a20 = model.pooled_confidence_prior(votes[:20], conf[:20])
    stick = pymc_model["q_stick"].owner.inputs
    np.testing.assert_allclose(np.ravel(stick[-2].eval()), a20[:-1])
    np.testing.assert_allclose(np.ravel(stick[-1].eval()), [a20[1:].sum(), a20[2]])
    post = model.fit(PairwiseVotes(votes[:20], conf[:20]), draws=200, random_seed=1, progressbar=False)
    assert post.sampling.sampler == "exact"
    with pytest.raises(ValueError, match="confidence_prior"):
        HumanRanking(confidence_prior="shared")


def test_pooled_confidence_prior_stays_near_flat_with_few_confident_pairs():
    """Two unanimous, very confident pairs would send the unpenalized estimate to an extreme
    (alpha of the top level at its bound, a near point-mass prior); the hyperprior on log alpha
    keeps it within a few units of the flat prior's 1."""
    from bayeval.rankings.model import HumanRanking

    votes = np.ones((2, 5))
    conf = np.full((2, 5), 2.0)
    alpha = HumanRanking(confidence_prior="pooled").pooled_confidence_prior(votes, conf)
    assert np.all(alpha > 0.2) and np.all(alpha < 6.0)
    assert alpha[2] > alpha[0]  # still learns the direction


def test_percentile_chart_of_point_values_claims_no_interval():
    """RankingPosterior.percentile gives one Q per ranking now: the chart of such point values
    draws no interval and its axis no longer says "posterior mean, 90% HDI"."""
    import matplotlib.pyplot as plt

    from bayeval.rankings.model import RankingPosterior
    from bayeval.rankings.plots import plot_percentile_table

    draws = np.random.default_rng(3).beta([5, 1, 2], [1, 3, 2], size=(2, 100, 3))
    post = RankingPosterior.from_draws(draws, np.array([[1, 1, 1], [0, 0, 1], [1, 0, 1]]))
    q = post.percentile({"A": [1, 0, 1], "B": [0, 1, 0]}).expand_dims(attribute=["wet"])
    fig = plot_percentile_table(q)
    try:
        ax = fig.axes[0]
        assert ax.get_xlabel().startswith("Q; ") and not ax.collections
    finally:
        plt.close(fig)
