"""LabelFlip (active testing's noisy-label model): structure, the marginal likelihood and
Bayes' rule against hand computations, the simulator, recovery of flip rates and P@K
on simulated tags, partial pooling, and input errors."""

import arviz as az
import numpy as np
import pymc as pm
import pytest
from scipy import special

from bayeval import EvalData, naive
from bayeval.core import metrics
from bayeval.models.label_flip import LabelFlip, LabelFlipPosterior, simulate_tags

# sampler settings of the fits below: small, PyMC's NUTS in one process (its C modules
# are cached across runs, unlike nutpie's numba compile, which dominates a small fit),
# and target_accept=0.8 (a third fewer leapfrog steps than the default 0.9). 150 draws per
# chain (bulk ESS about 100-140): the recovery test's tolerances are posterior sds (3.5 of
# them), whose Monte Carlo error at that ESS is a tenth of one; at 150 and at 300 draws, on
# seeds 1-3, the largest |mean - truth| was 1.7-2.4 sd and the other margins the same
FIT = {
    "draws": 150,
    "tune": 150,
    "chains": 2,
    "cores": 1,
    "sampler": "pymc",
    "target_accept": 0.8,
    "progressbar": False,
    "warn": False,
}
K = 10  # P@K cut-off
#: for tests that compare a built graph's values with hand computations (not a fit's compiled
#: code): PyTensor's Python implementations, with no C module to compile for them
FAST = "FAST_COMPILE"


def tiny_data(vetted=True):
    """8 items, 2 categories, one feature; items 0 and 5 vetted."""
    s = np.array([0.9, 0.2, 0.6, 0.05, 0.7, 0.4, 0.8, 0.3])
    y = np.array([1, 0, 1, 0, 0, 1, 0, 1])
    lab = np.full(8, np.nan)
    if vetted:
        lab[[0, 5]] = [1, 0]
    cats = np.array(["a", "a", "a", "a", "b", "b", "b", "b"])
    x = np.array([1.0, 3.0, 2.0, 5.0, 4.0, 1.0, 0.0, 2.0])
    return EvalData(s, lab, noisy_labels=y, categories=cats, features=x[:, None])


def hand_parameters(point, data):
    """Per-category parameters and per-item logits from a point, by the documented formulas."""
    fpr_logit = point["fpr_mu"] + np.exp(point["fpr_sigma_log__"]) * point["fpr_offset"]
    lift_logit = point["lift_mu"] + np.exp(point["lift_sigma_log__"]) * point["lift_offset"]
    a = point["intercept_mu"] + np.exp(point["intercept_sigma_log__"]) * point["intercept_offset"]
    b = point["slope_mu"] + np.exp(point["slope_sigma_log__"]) * point["slope_offset"]
    f, r = special.expit(fpr_logit), special.expit(lift_logit)
    p1 = f + (1 - f) * r  # p(y=1 | z=1)
    p0 = f  # p(y=1 | z=0)
    t = special.logit(data.scores)
    g = (t - t.mean()) / t.std()
    x = data.features[:, 0]
    xs = (x - x.mean()) / x.std()
    c = data.category_codes
    eta = a[c] + b[c] * g + point["w"][0] * xs
    return p1, p0, eta, c


POINT = {
    "fpr_mu": np.array(-2.0),
    "fpr_sigma_log__": np.array(np.log(0.7)),
    "fpr_offset": np.array([0.5, -1.0]),
    "lift_mu": np.array(0.3),
    "lift_sigma_log__": np.array(np.log(0.4)),
    "lift_offset": np.array([-0.2, 1.1]),
    "intercept_mu": np.array(-0.5),
    "intercept_sigma_log__": np.array(np.log(1.2)),
    "intercept_offset": np.array([0.3, -0.4]),
    "slope_mu": np.array(1.4),
    "slope_sigma_log__": np.array(np.log(0.5)),
    "slope_offset": np.array([1.0, -0.5]),
    "w": np.array([-0.6]),
}


# ------------------------------------------------------------------ structure


def test_build_coords_variables_and_finite_logp():
    data = tiny_data()
    model = LabelFlip().build(data)
    assert list(model.coords["category"]) == ["a", "b"]
    assert list(model.coords["feature"]) == ["f0"]
    assert list(model.coords["vetted_item"]) == [0, 5]
    assert list(model.coords["unvetted_item"]) == [1, 2, 3, 4, 6, 7]
    assert {v.name for v in model.free_RVs} == {
        f"{p}_{k}" for p in ("fpr", "lift", "intercept", "slope") for k in ("mu", "sigma", "offset")
    } | {"w"}
    assert {v.name for v in model.observed_RVs} == {
        "label_vetted",
        "noisy_vetted",
        "noisy_unvetted",
    }
    for name in ("p_y1_z1", "p_y1_z0", "intercept", "slope"):
        assert model.named_vars_to_dims[name] == ("category",)
    assert model.named_vars_to_dims["w"] == ("feature",)
    assert model.named_vars_to_dims["noisy_unvetted"] == ("unvetted_item",)
    assert model.named_vars_to_dims["unvetted_features"] == ("unvetted_item", "feature")
    logps = model.point_logps(mode=FAST)
    assert all(np.isfinite(v) for v in logps.values()), logps


def test_pooling_variants_and_single_category():
    data = tiny_data()
    none = LabelFlip(pooling="none").build(data)
    assert {v.name for v in none.free_RVs} == {"fpr_logit", "lift_logit", "intercept", "slope", "w"}
    assert none.named_vars_to_dims["intercept"] == ("category",)
    complete = LabelFlip(pooling="complete", feature_names=()).build(data)
    assert {v.name for v in complete.free_RVs} == {"fpr_mu", "lift_mu", "intercept_mu", "slope_mu"}
    assert "feature" not in complete.coords
    # without categories: one pair of rates, no hierarchy whatever the pooling
    flat = EvalData(data.scores, data.labels, noisy_labels=data.noisy_labels)
    model = LabelFlip(pooling="partial").build(flat)
    assert list(model.coords["category"]) == ["all"]
    assert {v.name for v in model.free_RVs} == {"fpr_mu", "lift_mu", "intercept_mu", "slope_mu"}
    # no vetted item: only the marginal likelihood
    assert {v.name for v in LabelFlip().build(tiny_data(vetted=False)).observed_RVs} == {
        "noisy_unvetted"
    }


@pytest.mark.parametrize("lookup", ["onehot", "indexed"])
def test_marginal_and_vetted_loglik_equal_hand_computation(lookup, monkeypatch):
    """Both ways of looking categories up (a one-hot product for small data, indexing
    above items x categories = 2**21) give the hand-computed log-likelihood."""
    import bayeval.models.label_flip as module

    data = tiny_data()
    if lookup == "indexed":
        monkeypatch.setattr(module, "_ONEHOT_MAX", 0)
    model = LabelFlip().build(data)
    assert ("unvetted_onehot" in model.named_vars) == (lookup == "onehot")
    p1, p0, eta, c = hand_parameters(POINT, data)
    y, vet = data.noisy_labels, data.vetted
    pz1 = special.expit(eta)
    py_z1 = np.where(y == 1, p1[c], 1 - p1[c])
    py_z0 = np.where(y == 1, p0[c], 1 - p0[c])
    # unvetted: log sum_z p(y | z) p(z | s, x)
    expected_u = np.log(py_z1 * pz1 + py_z0 * (1 - pz1))[~vet]
    logp = model.compile_logp(
        vars=[model[n] for n in ("noisy_unvetted", "label_vetted", "noisy_vetted")],
        jacobian=False,
        sum=False,
        mode=FAST,
    )
    got_u, got_z, got_y = logp(POINT)
    np.testing.assert_allclose(got_u, expected_u, rtol=1e-10)
    # vetted: log p(z | s, x) + log p(y | z)
    z = data.labels[vet]
    expected_z = np.log(np.where(z == 1, pz1[vet], 1 - pz1[vet]))
    expected_y = np.log(np.where(z == 1, py_z1[vet], py_z0[vet]))
    np.testing.assert_allclose(got_z, expected_z, rtol=1e-10)
    np.testing.assert_allclose(got_y, expected_y, rtol=1e-10)
    # and the deterministic flip rates follow the noisy-OR
    outs = model.replace_rvs_by_values([model["p_y1_z1"], model["p_y1_z0"]])
    rates = model.compile_fn(outs, inputs=model.value_vars, on_unused_input="ignore", mode=FAST)
    got1, got0 = rates(POINT)
    np.testing.assert_allclose(got1, p1, rtol=1e-12)
    np.testing.assert_allclose(got0, p0, rtol=1e-12)


def test_binned_likelihood_is_the_exact_one_at_fine_bins_and_close_at_the_default():
    data, truth = simulate_tags(3, items_per_category=150, random_seed=4)
    data = data.with_labels(data.item_ids[:9], truth[:9])
    exact = LabelFlip(binned=False).build(data)
    fine = LabelFlip(binned=True, n_bins=10**7).build(data)  # one item per bin
    coarse = LabelFlip(binned=True, n_bins=20).build(data)
    default = LabelFlip(binned=True).build(data)  # 200 bins per group
    assert "noisy_unvetted" in exact.named_vars and "noisy_unvetted_binned" not in exact.named_vars
    assert "noisy_unvetted_binned" in fine.named_vars and "noisy_unvetted" not in fine.named_vars
    n_unvetted = int((~data.vetted).sum())
    assert len(fine.coords["unvetted_bin"]) == n_unvetted
    assert len(coarse.coords["unvetted_bin"]) <= 3 * 2 * 20
    # the counts add up to the unvetted items of each (category, noisy label) group
    counts = coarse["unvetted_bin_count"].get_value()
    cat = coarse["unvetted_bin_category"].get_value()
    y = coarse["unvetted_bin_noisy_label"].get_value()
    for c in range(3):
        for v in (0, 1):
            want = int(((data.category_codes == c) & (data.noisy_labels == v) & ~data.vetted).sum())
            assert counts[(cat == c) & (y == v)].sum() == want
    rng = np.random.default_rng(0)
    base = exact.initial_point()
    logps = [m.compile_logp(jacobian=False, mode=FAST) for m in (exact, fine, coarse, default)]  # once each
    for _ in range(3):
        point = {k: v + rng.normal(0, 0.5, np.shape(v)) for k, v in base.items()}
        le, lf_, lc, ld = (float(logp(point)) for logp in logps)
        assert lf_ == pytest.approx(le, rel=1e-10)
        # binned: off by a fraction of a nat (of ~250), less with more bins
        assert 0 < abs(lc - le) < 0.5
        assert abs(ld - le) < 0.02


def test_binning_switches_on_above_bin_above_and_never_with_features():
    data, _ = simulate_tags(2, items_per_category=60, random_seed=5)
    assert "unvetted_bin" in LabelFlip(bin_above=100).build(data).coords
    assert "unvetted_bin" not in LabelFlip(bin_above=120).build(data).coords
    with_x = tiny_data()
    assert "unvetted_bin" not in LabelFlip(bin_above=0).build(with_x).coords  # auto: features -> exact
    with pytest.raises(ValueError, match="without features"):
        LabelFlip(binned=True).build(with_x)
    assert "unvetted_bin" in LabelFlip(binned=True, feature_names=()).build(with_x).coords
    for bad in ("yes", 1, None):
        with pytest.raises(ValueError, match="binned"):
            LabelFlip(binned=bad)
    with pytest.raises(ValueError, match="n_bins"):
        LabelFlip(n_bins=1)


def test_prior_keeps_relevant_tags_listed_more_often():
    """Identifiability: p(y=1|z=1) > p(y=1|z=0) in every prior draw, and slopes mostly > 0."""
    data, _ = simulate_tags(3, items_per_category=20, random_seed=0)
    with LabelFlip().build(data):
        prior = pm.sample_prior_predictive(
            draws=500, random_seed=1, var_names=["p_y1_z1", "p_y1_z0", "slope"]
        ).prior
    assert bool((prior["p_y1_z1"] > prior["p_y1_z0"]).all())
    # slope_mu ~ Normal(1.5, 1.5) plus category spread: P(slope > 0) = Phi(1.5 / 1.8) = 0.8;
    # the 3 categories of a draw share slope_mu, so count ~500 independent draws: the
    # share's sd is about 0.02 and the bounds are 5 sd away
    assert 0.7 < float((prior["slope"] > 0).mean()) < 0.92


# ---------------------------------------------------------- Bayes rule, draws


def fake_posterior(data, params, *, random_seed=0):
    """A LabelFlipPosterior over given parameter draws (no sampling)."""
    post = {k: np.asarray(v)[None] for k, v in params.items()}  # add a chain axis
    idata = az.from_dict(posterior=post)
    return LabelFlipPosterior(data, idata, model=LabelFlip(), random_seed=random_seed)


def test_probability_is_bayes_rule_with_the_flip_rates():
    data = tiny_data()
    rng = np.random.default_rng(0)
    n_draws = 3
    params = {
        "intercept": rng.normal(0, 1, (n_draws, 2)),
        "slope": rng.normal(1.5, 0.5, (n_draws, 2)),
        "w": rng.normal(0, 1, (n_draws, 1)),
        "p_y1_z0": rng.uniform(0.01, 0.2, (n_draws, 2)),
    }
    params["p_y1_z1"] = params["p_y1_z0"] + (1 - params["p_y1_z0"]) * rng.uniform(
        0.1, 0.9, (n_draws, 2)
    )
    post = fake_posterior(data, params)
    got = post.probability(params)
    t = special.logit(data.scores)
    g = (t - t.mean()) / t.std()
    x = data.features[:, 0]
    xs = (x - x.mean()) / x.std()
    c, y = data.category_codes, data.noisy_labels
    for d in range(n_draws):
        prior1 = special.expit(
            params["intercept"][d, c] + params["slope"][d, c] * g + params["w"][d, 0] * xs
        )
        p1, p0 = params["p_y1_z1"][d, c], params["p_y1_z0"][d, c]
        like1 = np.where(y == 1, p1, 1 - p1)
        like0 = np.where(y == 1, p0, 1 - p0)
        expected = like1 * prior1 / (like1 * prior1 + like0 * (1 - prior1))
        np.testing.assert_allclose(got[d], expected, rtol=1e-12)
    # a listed item is more likely relevant than the same item unlisted
    flipped = fake_posterior(
        EvalData(
            data.scores,
            data.labels,
            noisy_labels=1 - y,
            categories=data.categories,
            features=data.features,
        ),
        params,
    ).probability(params)
    assert np.all(np.where(y == 1, got > flipped, got < flipped))


def test_label_draws_keep_vetted_items_and_follow_the_probabilities():
    data = tiny_data()
    n_draws = 4000
    params = {
        "intercept": np.tile([0.2, -0.3], (n_draws, 1)),
        "slope": np.tile([1.0, 2.0], (n_draws, 1)),
        "w": np.full((n_draws, 1), 0.5),
        "p_y1_z1": np.tile([0.4, 0.6], (n_draws, 1)),
        "p_y1_z0": np.tile([0.02, 0.05], (n_draws, 1)),
    }
    post = fake_posterior(data, params, random_seed=3)
    p = post.probability({k: v[:1] for k, v in params.items()})[0]
    z = np.concatenate([c.values.reshape(-1, data.n_items) for c in post.label_draws()])
    vet = data.vetted
    assert (z[:, vet] == data.labels[vet]).all()
    # Monte Carlo error of a share over 4000 draws is at most 0.5/sqrt(4000) = 0.008: 5 sd
    np.testing.assert_allclose(z[:, ~vet].mean(axis=0), p[~vet], atol=0.04)
    np.testing.assert_allclose(post.item_probability().values[~vet], p[~vet], rtol=1e-12)


# ------------------------------------------------------------------ simulator


def test_simulate_tags_rates_sizes_and_seed():
    data, z = simulate_tags(40, items_per_category=1000, random_seed=5)
    assert z.dtype == np.int8 and z.shape == (data.n_items,)
    assert data.n_vetted == 0 and data.noisy_labels is not None
    sizes = data.counts()["items"].to_numpy()[:-1]
    assert sizes[0] == 1000 and sizes[-1] == round(1000 / np.sqrt(40))  # long tail, exponent 0.5
    listed = data.noisy_labels == 1
    n1, n0 = int((z == 1).sum()), int((z == 0).sum())
    # binomial sd of the listed shares: sqrt(p (1-p) / n); 4 sd
    assert abs(listed[z == 1].mean() - 0.38) < 4 * np.sqrt(0.38 * 0.62 / n1)
    assert abs(listed[z == 0].mean() - 0.01) < 4 * np.sqrt(0.01 * 0.99 / n0)
    # scores are informative: relevant items score higher
    assert data.scores[z == 1].mean() > data.scores[z == 0].mean() + 0.2
    again, z2 = simulate_tags(40, items_per_category=1000, random_seed=5)
    assert np.array_equal(again.scores, data.scores) and np.array_equal(z, z2)
    assert not np.array_equal(
        simulate_tags(40, items_per_category=1000, random_seed=6)[1][:2000], z[:2000]
    )
    # explicit per-category values: prevalence is hit (E[z] = prevalence by construction)
    d2, z2 = simulate_tags(
        2, items_per_category=[4000, 4000], prevalence=[0.05, 0.3], score_quality=3.0, random_seed=0
    )
    c = d2.category_codes
    assert abs(z2[c == 0].mean() - 0.05) < 4 * np.sqrt(0.05 * 0.95 / 4000)
    assert abs(z2[c == 1].mean() - 0.3) < 4 * np.sqrt(0.3 * 0.7 / 4000)


# ------------------------------------------------------------------- fitting


def recovery_data():
    """5 tags x 200 items (NUS-WIDE rates), 10% of them vetted at random, plus a tiny
    tag (12 items, all vetted) whose relevant items are nearly always listed."""
    sizes = [200] * 5 + [12]
    data, z = simulate_tags(
        6,
        items_per_category=sizes,
        p_relevant_listed=[0.38] * 5 + [0.95],
        prevalence=[0.1, 0.15, 0.1, 0.2, 0.12, 0.5],
        score_quality=2.5,
        random_seed=11,
    )
    rng = np.random.default_rng(11)
    big = np.flatnonzero(data.category_codes < 5)
    ids = np.r_[rng.choice(big, 100, replace=False), np.flatnonzero(data.category_codes == 5)]
    return data.with_labels(ids, z[ids]), z


@pytest.fixture(scope="module")
def fits():
    data, z = recovery_data()
    partial = LabelFlip().fit(data, random_seed=1, **FIT)
    none = LabelFlip(pooling="none").fit(data, random_seed=1, **FIT)
    return data, z, partial, none


def test_fit_recovers_flip_rates_and_beats_naive_precision_at_k(fits):
    data, z, post, _ = fits
    rates = post.flip_rates()
    assert rates["p_y1_z1"].dims == ("chain", "draw", "category")
    mean = rates.mean(("chain", "draw"))
    sd = rates.std(("chain", "draw"))
    big = slice(0, 5)
    # prior sds of the rates are about 0.28 (p_y1_z1) and 0.16 (p_y1_z0); the posterior
    # must be much narrower for the comparison to mean something
    for name, truth, max_sd in (("p_y1_z1", 0.38, 0.2), ("p_y1_z0", 0.01, 0.02)):
        m, s = mean[name].values[big], sd[name].values[big]
        # 10 comparisons at 3.5 posterior sd: a calibrated posterior fails ~0.5% of runs.
        # A mirrored labelling (z = 1 meaning irrelevant) puts p_y1_z0 near 0.38: > 15 sd off
        assert np.all(np.abs(m - truth) < 3.5 * s), (name, m, s)
        assert np.all(s < max_sd), (name, s)
    # P@K per tag: the model's posterior mean vs naive (noisy tags taken as truth). Naive
    # misses ~60% of the relevant items (only 38% are tagged); on three data seeds the
    # mean absolute errors were 0.09-0.12 (model) vs 0.36-0.44 (naive)
    pak = post.metric("precision_at_k", k=K).mean(("chain", "draw")).values[big]
    nv = naive(data, "precision_at_k", k=K).values[big]
    codes = data.category_codes
    truth = np.array(
        [metrics.precision_at_k(z[codes == c], data.scores[codes == c], k=K) for c in range(5)]
    )
    err_model, err_naive = np.abs(pak - truth).mean(), np.abs(nv - truth).mean()
    assert err_model < err_naive, (pak, nv, truth)
    # vetted items are fixed in every draw
    first = next(post.label_draws()).values.reshape(-1, data.n_items)
    assert (first[:, data.vetted] == data.labels[data.vetted]).all()
    diag = post.diagnostics()
    assert {"r_hat", "ess_bulk", "ess_tail"} <= set(diag.columns)
    assert any(i.startswith("p_y1_z1[") for i in diag.index)
    res = post.check(warn=False)
    assert set(res) == {"max_rhat", "min_ess_bulk", "divergences", "ok", "messages", "sampler", "pareto_k", "ess", "data_messages"}
    assert res == post.convergence | {"messages": res["messages"]}


def test_partial_pooling_shrinks_a_tiny_category(fits):
    """The 12-item tag lists relevant items far more often than the others; pooled, its
    rate is pulled toward the population's, unpooled it follows its own few items."""
    _, _, partial, none = fits
    pop = float(partial.flip_rates()["p_y1_z1_population"].mean())
    tiny_partial = float(partial.flip_rates()["p_y1_z1"].sel(category="tag5").mean())
    tiny_none = float(none.flip_rates()["p_y1_z1"].sel(category="tag5").mean())
    assert "p_y1_z1_population" not in none.flip_rates()
    assert abs(tiny_partial - pop) < abs(tiny_none - pop)
    assert tiny_partial < tiny_none


def test_check_warns_on_bad_diagnostics(fits):
    _, _, post, _ = fits
    short = post.idata.sel(draw=slice(0, 20))  # 21 draws per chain: ESS far below 100 per chain
    bad = LabelFlipPosterior(post.data, short, model=post.label_flip)
    with pytest.warns(UserWarning, match="ESS"):
        res = bad.check(warn=True)
    assert not res["ok"]


# ---------------------------------------------------------------------- errors


def test_clear_errors_for_bad_input():
    data = tiny_data()
    with pytest.raises(TypeError, match="EvalData"):
        LabelFlip().build(data.scores)
    with pytest.raises(ValueError, match="needs noisy labels"):
        LabelFlip().build(EvalData(data.scores, data.labels))
    # a category with no items (e.g. left over after subset())
    with pytest.raises(ValueError, match="no items.*'b'"):
        LabelFlip().build(data.subset([0, 1, 2, 3]))
    fields = data._fields()
    bad_scores = EvalData._trusted(**{**fields, "s": np.r_[np.nan, data.scores[1:]]})
    with pytest.raises(ValueError, match="`scores` must be finite"):
        LabelFlip().build(bad_scores)
    bad_feats = EvalData._trusted(**{**fields, "feats": np.r_[[[np.inf]], data.features[1:]]})
    with pytest.raises(ValueError, match="NaN or infinite"):
        LabelFlip().build(bad_feats)
    # the value the user gave (0.5), not its logit (0)
    with pytest.raises(ValueError, match=r"All scores are equal \(value 0\.5\)"):
        LabelFlip().build(EvalData(np.full(8, 0.5), noisy_labels=data.noisy_labels))
    with pytest.raises(ValueError, match=r"from 0 to 1e-09, the same after clipping"):
        LabelFlip().build(EvalData(np.r_[np.zeros(4), np.full(4, 1e-9)], noisy_labels=data.noisy_labels))
    with pytest.raises(ValueError, match="feature 'f0'"):
        LabelFlip().build(
            EvalData(data.scores, noisy_labels=data.noisy_labels, features=np.ones(8))
        )
    # what was expected, what arrived, and the option that fixes it (it said "Use score_transform='identity' for
    # margins or logits" alone, not naming the model)
    far = data.scores * 3
    with pytest.raises(ValueError) as exc:
        LabelFlip(score_transform="logit").build(EvalData(far, noisy_labels=data.noisy_labels))
    msg = str(exc.value)
    assert msg.startswith("LabelFlip(score_transform='logit') needs scores in [0, 1] (probabilities)"), msg
    assert f"got scores from {far.min():g} to {far.max():g} ({int(np.sum((far < 0) | (far > 1)))} of {far.size} " \
           "outside [0, 1])" in msg
    assert "Use score_transform='identity' for margins, log-odds or other scores" in msg and "('auto'" in msg
    with pytest.raises(ValueError, match="Unknown feature name"):
        LabelFlip(feature_names=["box"]).build(data)
    with pytest.raises(ValueError, match="has no features"):
        LabelFlip(feature_names=["box"]).build(
            EvalData(data.scores, noisy_labels=data.noisy_labels)
        )
    with pytest.raises(ValueError, match="pooling"):
        LabelFlip(pooling="hierarchical")
    with pytest.raises(ValueError, match="sampler"):
        LabelFlip().fit(data, sampler="stan")
    with pytest.raises(ValueError, match="must exceed"):
        simulate_tags(3, p_relevant_listed=0.01, p_irrelevant_listed=0.05)
    with pytest.raises(ValueError, match="one per category"):
        simulate_tags(3, prevalence=[0.1, 0.2])
    with pytest.raises(ValueError, match="items_per_category"):
        simulate_tags(2, items_per_category=[10, 0])
    with pytest.raises(ValueError, match="strictly between"):
        simulate_tags(2, prevalence=1.2)


def test_a_fit_to_no_vetted_item_has_no_label_log_likelihood_and_label_loo_says_why(tmp_path):
    """Fitted to the noisy labels alone, the posterior has no vetted label to score: an empty
    ``label_loglik()``, no ``idata.log_likelihood`` (as every bayeval fit without vetted labels), and
    it saves and loads as such. ``label_loo`` and ``calibration_check`` (stacking's LOO) failed inside
    ArviZ ("cannot reshape array of size 0 into shape (0)"); they now say why and what to do."""
    import bayeval
    from bayeval.models.stacking import calibration_check, label_loo

    post = LabelFlip().fit(tiny_data(vetted=False), random_seed=0, **{**FIT, "draws": 50, "tune": 50, "chains": 1})
    assert post.label_loglik().shape == (1, 50, 0)
    assert "log_likelihood" not in post.idata.groups()
    back = bayeval.load(bayeval.save(post, tmp_path / "flip.nc"))
    assert back.label_loglik().shape == (1, 50, 0) and "log_likelihood" not in back.idata.groups()
    for check in (label_loo, calibration_check):
        with pytest.raises(ValueError, match="no vetted labels: PSIS-LOO .* none of the 8 items .* Vet some items"):
            check(post)


def test_probabilities_of_some_items_equal_those_of_all_items():
    """The label log-likelihood reads only the vetted items' probabilities (at 10^6 items it
    must not compute all of them): the subset path equals the full computation."""
    data, truth = simulate_tags(3, items_per_category=200, random_seed=4)
    ids = np.arange(0, data.n_items, 9)
    data = data.with_labels(data.item_ids[ids], truth[ids])
    post = LabelFlip(pooling="complete").fit(data, draws=50, tune=50, random_seed=1, progressbar=False, warn=False)
    items = np.flatnonzero(data.vetted)
    np.testing.assert_allclose(post._probabilities_of(1, slice(5, 20), items),
                               post._probabilities(1, slice(5, 20))[:, items])
