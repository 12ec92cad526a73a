"""MixtureCalibration: a calibration curve whose basis is a normal mixture fitted to all scores."""

import numpy as np
import pytest

from bayeval import EvalData
from bayeval.core import metrics as M
from bayeval.models import MixtureCalibration
from bayeval.models.mixture_calibration import fit_normal_mixture, mixture_check, responsibilities


def _two_clusters(n=1200, pi=0.2, n_vetted=40, seed=0):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < pi).astype(int)
    s = np.where(y == 1, rng.normal(3.0, 1.0, n), rng.normal(-2.0, 1.2, n))
    lab = np.full(n, np.nan)
    idx = rng.choice(n, n_vetted, replace=False)
    lab[idx] = y[idx]
    return EvalData(s, lab), y


def test_em_recovers_a_known_mixture():
    rng = np.random.default_rng(3)
    z = np.r_[rng.normal(-2, 0.5, 3000), rng.normal(1, 1.0, 1000)]
    g = fit_normal_mixture(z, max_components=4)
    assert g["k"] == 2
    np.testing.assert_allclose(g["mean"], [-2, 1], atol=0.1)
    np.testing.assert_allclose(g["sd"], [0.5, 1.0], atol=0.08)
    np.testing.assert_allclose(g["weight"], [0.75, 0.25], atol=0.03)
    r = responsibilities(np.array([-2.0, 3.0]), g)
    assert r[0, 0] > 0.99 and r[1, 1] > 0.99
    np.testing.assert_allclose(r.sum(axis=1), 1.0)


@pytest.mark.parametrize("form", ["split", "bumps"])
def test_recovers_the_prevalence_and_ap_within_its_interval(form):
    data, y = _two_clusters()
    post = MixtureCalibration(form).fit(data, random_seed=1, draws=400)
    prev = post.metric("precision", threshold=data.scores.min() - 1).values.ravel()  # everything flagged
    ap = post.metric("average_precision").values.ravel()
    true_ap = float(M.average_precision(y[None], data.scores)[0])
    # the truth inside the 99% band, and the band far narrower than "anything goes"
    assert np.quantile(prev, 0.005) <= y.mean() <= np.quantile(prev, 0.995)
    assert np.quantile(ap, 0.005) <= true_ap <= np.quantile(ap, 0.995)
    assert np.quantile(prev, 0.95) - np.quantile(prev, 0.05) < 0.06
    # the curve: positives more probable at high scores
    p = post.item_probability().values
    assert p[data.scores > 3].mean() > 0.9 and p[data.scores < -3].mean() < 0.1


def test_curve_and_loo_work_and_the_name_says_the_form():
    data, _ = _two_clusters(n=600, n_vetted=30, seed=2)
    m = MixtureCalibration("bumps", max_components=3)
    assert m.name == "calibration/mixture-bumps"
    post = m.fit(data, random_seed=0, draws=200)
    c = post.curve(scores=[-4.0, 0.0, 5.0])
    assert float(c["mean"][0]) < 0.2 and float(c["mean"][2]) > 0.8
    assert post.idata.log_likelihood["label"].shape == (2, 200, 30)


def test_mixture_check_flags_a_histogram_the_mixture_cannot_follow():
    rng = np.random.default_rng(5)
    ok = mixture_check(EvalData(np.r_[rng.normal(-2, 1, 2000), rng.normal(2, 1, 500)]), MixtureCalibration(max_components=2))
    bad = mixture_check(EvalData(rng.uniform(0, 1, 3000) ** 0.05), MixtureCalibration(max_components=2, transform="standardize"))
    assert ok["p_value"] > 0.01 and ok["max_rel_dev"] < 0.5
    assert bad["p_value"] < 1e-6
    # the worst bin's own ratio (below 1 for a deficit), which the refusal quotes
    assert bad["max_rel_dev"] == pytest.approx(abs(bad["worst_ratio"] - 1))


def test_bad_arguments_are_refused_clearly():
    with pytest.raises(ValueError, match="form"):
        MixtureCalibration("wiggly")
    with pytest.raises(ValueError, match="max_components"):
        MixtureCalibration(max_components=1)
    with pytest.raises(ValueError, match="histogram_check"):
        MixtureCalibration(histogram_check=-1)


def test_fit_refuses_scores_the_mixture_does_not_follow_and_a_stack_leaves_it_out():
    import bayeval as be
    from bayeval.models import Calibration

    rng = np.random.default_rng(4)
    s = np.r_[np.zeros(700), rng.uniform(0, 1, 300) ** 0.2]  # a spike of ties no normal mixture follows
    y = (rng.random(1000) < 0.3).astype(float)
    lab = np.full(1000, np.nan)
    lab[:30] = y[:30]
    data = EvalData(s, lab)
    with pytest.raises(ValueError, match="does not follow the score histogram") as err:
        MixtureCalibration(transform="standardize").fit(data, random_seed=0, draws=100)
    chk = mixture_check(data, MixtureCalibration(transform="standardize"))
    assert f"its worst bin holds {chk['worst_ratio']:.2f} times the items it expects there; the check allows 0.50 to " \
           "1.50 times" in str(err.value)
    post = be.fit(data, candidates=[Calibration("logistic"), MixtureCalibration(transform="standardize")],
                  random_seed=0, draws=100, warn=False)
    assert post.comparison.loc["calibration/mixture-split/standardized", "weight"] == 0.0
    assert "calibration/mixture-split/standardized" in post.comparison.attrs["errors"]


def test_a_stack_with_the_split_uses_it_where_the_scores_separate():
    """Two well-separated clusters of margins, 30 random labels: the default's candidates
    plus the split (the opt-in stack) give the mixture-shaped curve the weight (1.0 on
    seeds 0-3), and its AP interval holds the truth and is under half as wide as the two
    calibration curves' stack on the same fits."""
    import bayeval as be
    from bayeval.models.stacking import StackedPosterior, default_candidates

    rng = np.random.default_rng(0)
    y = (rng.random(800) < 0.2).astype(int)
    s = np.where(y == 1, rng.normal(4.0, 1.0, 800), rng.normal(-2.0, 1.0, 800))
    lab = np.full(800, np.nan)
    idx = rng.choice(800, 30, replace=False)
    lab[idx] = y[idx]
    data = EvalData(s, lab)
    post = be.fit(data, candidates=default_candidates(data) + [MixtureCalibration()], random_seed=0, draws=300,
                  warn=False)
    assert post.weights["calibration/mixture-split"] > 0.9
    true_ap = float(M.average_precision(y[None], s)[0])
    lo, hi = be.hdi(post.metric("average_precision").values.ravel(), 0.9)
    assert lo <= true_ap <= hi
    two = {n: post.candidates[n] for n in ("calibration/logistic", "calibration/monotone")}
    old = StackedPosterior(data, two, post.comparison.loc[list(two)].assign(weight=0.5), chains=post.n_chains,
                           draws=post.n_draws, random_seed=0)
    lo2, hi2 = be.hdi(old.metric("average_precision").values.ravel(), 0.9)
    assert hi - lo < 0.5 * (hi2 - lo2)


def test_bumps_probabilities_equal_the_broadcast_formula():
    """The bumps' weighted sum is a matrix product now: the same values as the broadcast
    product of the features and the bump weights, summed, which it replaced."""
    from scipy import special

    data, _ = _two_clusters(n=800, n_vetted=40, seed=4)
    post = MixtureCalibration("bumps", max_components=3).fit(data, random_seed=0, draws=150)
    pa = post.idata.posterior
    flat = {k: pa[k].values.reshape((-1,) + pa[k].shape[2:]) for k in ("a", "b", "u")}
    f = post.features[None]
    assert f.shape[-1] > 2  # at least two bumps besides the main feature
    eta = flat["a"][:, None] + flat["b"][:, None] * f[..., 0] + (f[..., 1:] * flat["u"][:, None, :]).sum(axis=-1)
    ref = special.expit(eta)
    np.testing.assert_allclose(post.curve_draws(data.scores), ref, rtol=1e-12)
    free = ~data.vetted
    np.testing.assert_allclose(post.item_probability().values[free], ref.mean(axis=0)[free], rtol=1e-12)
