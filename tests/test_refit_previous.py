"""Refits that reweight the previous fit's draws (``fit(..., previous=post)``).

The exactness of the reweighting is checked where the posterior is known in closed
form (a normal mean, seeded: the tolerances are Monte Carlo errors); the model-level
tests check the route is taken, falls back to NUTS and says so, and rejects a wrong
``previous``. The agreement of LabelFlip's reweighted refits with NUTS on 10^4 items
is measured by ``benchmarks/fit_speed.py --refits``; a smaller version is the slow test
at the end.
"""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import arviz as az
import numpy as np
import pymc as pm
import pytest
from scipy import stats

from bayeval.annotators import AnnotationData, AnnotatorError
from bayeval.core import sampling as S
from bayeval.models import LabelFlip, ScoreMixture, simulate_tags

PRIOR_SD = 10.0


def _normal_model(y):
    with pm.Model(coords={"obs": np.arange(len(y))}) as model:
        data = pm.Data("y", y, dims="obs")
        mu = pm.Normal("mu", 0.0, PRIOR_SD)
        pm.Normal("obs_y", mu, 1.0, observed=data, dims="obs")
    return model


def _exact(y):
    """Posterior mean and sd of ``mu`` (normal prior, unit-variance observations)."""
    prec = 1.0 / PRIOR_SD**2 + len(y)
    return float(np.sum(y) / prec), float(1.0 / np.sqrt(prec))


def _previous(y, rng, n=2000, repeat=1):
    m, s = _exact(y)
    draws = np.repeat(rng.normal(m, s, n // repeat), repeat)
    rng.shuffle(draws)
    idata = az.from_dict(posterior={"mu": draws.reshape(2, -1)})
    return S.Previous(idata, {"y": y}, {"obs": np.arange(len(y))}, ess=float(n // repeat))


def _refit(y_old, y_new, key, *, seed=3, repeat=1, draws=1000):
    rng = np.random.default_rng(seed)
    model = _normal_model(y_old)  # compiled for the old data, refitted on the new (as through the cache)
    pm.set_data({"y": y_new}, model=model, coords={"obs": np.arange(len(y_new))})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return S.sample_model(model, draws=draws, tune=100, chains=2, random_seed=seed, sampler="pymc",
                              key=key, previous=_previous(y_old, rng, repeat=repeat))


@pytest.mark.parametrize("repeat", [1, 2])
def test_reweighted_draws_match_the_exact_posterior_within_mc_error(repeat):
    """Ten new observations move the posterior by about one sd: the reweighted draws have
    the new posterior's mean and 5% / 95% quantiles within 4 Monte Carlo s.e. (with
    repeated draws, as an earlier reweighted fit has, too); unweighted draws (the old
    posterior) would be about 30 s.e. off."""
    rng = np.random.default_rng(0)
    y_old = rng.normal(0.0, 1.0, 50)
    y_new = np.concatenate([y_old, rng.normal(1.0, 1.0, 10)])
    idata, info = _refit(y_old, y_new, ("test-normal", repeat), repeat=repeat)
    assert info.sampler == "importance" and info.fallback_reason == ""
    assert info.pareto_k < 0.7 and 200 <= info.ess <= 2000 / repeat
    mu = idata.posterior["mu"].values.ravel()
    m, s = _exact(y_new)
    se = s / np.sqrt(info.ess)
    assert abs(mu.mean() - m) < 4 * se
    for p in (0.05, 0.95):
        q = stats.norm.ppf(p, m, s)
        se_q = np.sqrt(p * (1 - p) / info.ess) / stats.norm.pdf(q, m, s)
        assert abs(np.quantile(mu, p) - q) < 4 * se_q
    m_old, _ = _exact(y_old)
    assert abs(m_old - m) > 20 * se  # the check above could tell the old posterior from the new


def test_resample_move_draws_match_the_exact_posterior_within_mc_error():
    """Reliable weights but too few effective draws (the previous draws repeat ten times
    each: Kish ESS about 110 < 200): the draws are resampled and moved by HMC until they
    no longer correlate with where they started. The moved draws are distinct, and their
    mean and 5% / 95% quantiles are those of the new posterior within 4 Monte Carlo s.e.
    at the ESS the refit reports; the old posterior's mean is about 20 s.e. away."""
    rng = np.random.default_rng(0)
    y_old = rng.normal(0.0, 1.0, 50)
    y_new = np.concatenate([y_old, rng.normal(1.0, 1.0, 10)])
    idata, info = _refit(y_old, y_new, ("test-normal-move",), repeat=10, draws=300)
    assert info.sampler == "importance" and info.fallback_reason == ""
    assert info.extra["kish_ess"] < 200 and info.extra["proposal"] == "previous fit, resampled and moved"
    moved = info.extra["move"]
    assert 1 <= moved["rounds"] <= S._MOVE_MAX_ROUNDS and info.n_grad_evals > 0
    mu = idata.posterior["mu"].values.ravel()
    assert len(np.unique(mu)) > 0.9 * mu.size  # the ~200 distinct previous draws moved apart
    assert info.extra["kish_ess"] <= info.ess <= mu.size
    m, s = _exact(y_new)
    se = s / np.sqrt(info.ess)
    assert abs(mu.mean() - m) < 4 * se
    assert abs(mu.std() / s - 1) < 4 * np.sqrt(1 / (2 * info.ess))
    for p in (0.05, 0.95):
        q = stats.norm.ppf(p, m, s)
        se_q = np.sqrt(p * (1 - p) / info.ess) / stats.norm.pdf(q, m, s)
        assert abs(np.quantile(mu, p) - q) < 4 * se_q
    m_old, _ = _exact(y_old)
    assert abs(m_old - m) > 15 * se


def test_resample_move_keeps_a_two_dimensional_posterior():
    """The moves with a diagonal mass matrix on a correlated two-parameter posterior (a
    regression line, slope and intercept correlated): means, sds and the correlation of
    the moved draws match the exact Gaussian posterior within Monte Carlo error."""
    rng = np.random.default_rng(4)
    x_old = rng.uniform(1.0, 3.0, 40)  # x far from 0: intercept and slope correlate strongly
    x_new = np.concatenate([x_old, rng.uniform(1.0, 3.0, 10)])
    y_new = 0.5 + 1.0 * x_new + rng.normal(0.0, 1.0, x_new.size)
    y_old = y_new[:40]

    def exact(x, y):
        X = np.column_stack([np.ones_like(x), x])
        prec = X.T @ X + np.eye(2) / PRIOR_SD**2
        cov = np.linalg.inv(prec)
        return cov @ X.T @ y, cov

    def build(x, y):
        with pm.Model(coords={"obs": np.arange(len(y))}) as model:
            xd = pm.Data("x", x, dims="obs")
            yd = pm.Data("y", y, dims="obs")
            a = pm.Normal("a", 0.0, PRIOR_SD)
            b = pm.Normal("b", 0.0, PRIOR_SD)
            pm.Normal("obs_y", a + b * xd, 1.0, observed=yd, dims="obs")
        return model

    m_old, cov_old = exact(x_old, y_old)
    draws = np.repeat(rng.multivariate_normal(m_old, cov_old, 200), 10, axis=0)
    rng.shuffle(draws)
    prev = S.Previous(az.from_dict(posterior={"a": draws[:, 0].reshape(2, -1), "b": draws[:, 1].reshape(2, -1)}),
                      {"x": x_old, "y": y_old}, {"obs": np.arange(40)}, ess=200.0)
    model = build(x_old, y_old)
    pm.set_data({"x": x_new, "y": y_new}, model=model, coords={"obs": np.arange(50)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        idata, info = S.sample_model(model, draws=500, tune=100, chains=2, random_seed=5, sampler="pymc",
                                     key=("test-line-move",), previous=prev)
    assert info.sampler == "importance" and isinstance(info.extra.get("move"), dict), info.fallback_reason
    ab = np.column_stack([idata.posterior[v].values.ravel() for v in ("a", "b")])
    m, cov = exact(x_new, y_new)
    sd = np.sqrt(np.diag(cov))
    n = info.ess
    assert np.all(np.abs(ab.mean(0) - m) < 4 * sd / np.sqrt(n))
    assert np.all(np.abs(ab.std(0) / sd - 1) < 4 * np.sqrt(1 / (2 * n)))
    rho, rho_hat = cov[0, 1] / (sd[0] * sd[1]), np.corrcoef(ab.T)[0, 1]
    assert rho < -0.8 and abs(np.arctanh(rho_hat) - np.arctanh(rho)) < 4 / np.sqrt(n - 3)
    S._CACHE.pop(("test-line-move",), None)


class _Gaussian:
    """A stand-in for the compiled model of ``_move``: a correlated Gaussian's
    log-density and gradient per row, counting the gradient evaluations."""

    def __init__(self, cov):
        self.prec, self.n_g = np.linalg.inv(cov), 0

    def valgrad_many(self, u):
        self.n_g += len(u)
        return -0.5 * np.einsum("ij,jk,ik->i", u, self.prec, u), -u @ self.prec


def test_resample_move_pilot_sizes_the_first_step():
    """Four coordinates in two pairs correlated 0.995: the draws' marginal variances (the
    moves' mass matrix) are ten times the conditional sds, and the step d^-1/4 = 0.71 is
    far beyond what the leapfrog tolerates, so without the pilot the first round accepts
    almost nothing. With it the first round accepts near the target, the moves take
    fewer gradient evaluations in all (pilot included), and the moved draws still have
    the Gaussian's means, sds and correlation within Monte Carlo error."""
    rho = 0.995
    block = np.array([[1.0, rho], [rho, 1.0]])
    cov = np.block([[block, np.zeros((2, 2))], [np.zeros((2, 2)), 4.0 * block]])
    n = 1000
    # resampled draws: 250 distinct draws of the posterior, repeated four times each
    u = np.repeat(np.random.default_rng(0).multivariate_normal(np.zeros(4), cov, n // 4), 4, axis=0)
    out = {}
    for pilot in (False, True):
        c = _Gaussian(cov)
        x, st = S._move(c, u.copy(), np.random.default_rng(1), ess_in=n / 4, pilot=pilot)
        assert x is not None, st
        out[pilot] = (x, st, c.n_g)
    _, st_off, grads_off = out[False]
    x, st, grads = out[True]
    assert st_off["accept"][0] < 0.1 and "pilot" not in st_off
    assert st["accept"][0] >= 0.5 and st["pilot"]["accept"][-1] >= S._PILOT_ACCEPT
    assert st["pilot"]["draws"] == 125 and st["pilot"]["step_sizes"][0] == pytest.approx(4 ** -0.25)
    assert grads < grads_off
    sd = np.sqrt(np.diag(cov))
    ess = st["ess"]
    assert np.all(np.abs(x.mean(0)) < 4 * sd / np.sqrt(ess))
    assert np.all(np.abs(x.std(0) / sd - 1) < 4 * np.sqrt(1 / (2 * ess)))
    r = np.corrcoef(x.T)
    for i, j in ((0, 1), (2, 3)):
        assert abs(np.arctanh(r[i, j]) - np.arctanh(rho)) < 4 / np.sqrt(ess - 3)
    assert abs(r[0, 2]) < 4 / np.sqrt(ess)


def test_refit_falls_back_to_nuts_and_says_why():
    """New data far from the old posterior: the weights are unreliable, NUTS runs, and
    ``fallback_reason`` says so."""
    rng = np.random.default_rng(1)
    y_old = rng.normal(0.0, 1.0, 50)
    y_new = np.concatenate([y_old, rng.normal(8.0, 1.0, 40)])
    idata, info = _refit(y_old, y_new, ("test-normal-far",), draws=200)
    assert info.sampler == "pymc"
    assert "reweighting the previous fit" in info.fallback_reason and "NUTS was run instead" in info.fallback_reason
    m, s = _exact(y_new)
    assert abs(float(idata.posterior["mu"].mean()) - m) < 5 * s / np.sqrt(100)


def test_a_first_nuts_fit_keeps_its_function_for_the_reweighted_refit():
    """A keyed structure's first NUTS fit keeps PyMC's log-density-and-gradient function
    in the cache: the reweighted refit evaluates the density with it (no compilation of
    its own), the same density as the compiled one, and the draws match the posterior."""
    rng = np.random.default_rng(0)
    y_old = rng.normal(0.0, 1.0, 50)
    y_new = np.concatenate([y_old, rng.normal(1.0, 1.0, 10)])
    key = ("test-normal-kept",)
    S._CACHE.pop(key, None)
    model = _normal_model(y_old)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first, info = S.sample_model(model, draws=500, tune=300, chains=2, random_seed=1, sampler="pymc", key=key)
    assert info.sampler == "pymc"
    c = S._CACHE[key]
    assert c.model is model and c.density_from_valgrad and c._logp is None
    pm.set_data({"y": y_new}, model=model, coords={"obs": np.arange(len(y_new))})
    prev = S.Previous(first, {"y": y_old}, {"obs": np.arange(len(y_old))},
                      ess=float(az.ess(first)["mu"].min()))
    idata, info = S.sample_model(model, draws=500, tune=300, chains=2, random_seed=2, sampler="pymc", key=key,
                                 previous=prev)
    assert info.sampler == "importance" and info.fallback_reason == "" and info.n_grad_evals == 0
    assert c._logp is None  # nothing compiled for the refit
    u = np.array([[0.1], [0.7], [-0.4]])
    np.testing.assert_allclose([c.f(x) for x in u], [float(c.logp(c.unravel(x))) for x in u], rtol=1e-12)
    m, s = _exact(y_new)
    assert abs(float(idata.posterior["mu"].mean()) - m) < 4 * s / np.sqrt(info.ess)
    S._CACHE.pop(key, None)


def test_previous_draws_of_a_simplex_map_to_its_free_values():
    """A Dirichlet's K values are K - 1 free values on the sampler's scale: the previous
    fit's draws are transformed before their shape is checked, and map back."""
    with pm.Model() as model:
        pm.Dirichlet("p", a=np.ones(3))
    c = S._Compiled(model)
    draws = np.random.default_rng(0).dirichlet(np.ones(3), size=(2, 4))
    u = S._unconstrained(c, az.from_dict(posterior={"p": draws}))
    assert u.shape == (8, 2)
    back = np.stack([c.unravel(x)["p_simplex__"] for x in u])
    tr = model.rvs_to_transforms[model["p"]]
    np.testing.assert_allclose(tr.backward(back, *model["p"].owner.inputs).eval(), draws.reshape(8, 3), rtol=1e-10)


def _tags(n_vetted, seed=0):
    data, truth = simulate_tags(3, items_per_category=120, random_seed=seed)
    idx = np.random.default_rng(seed).permutation(data.n_items)[:n_vetted]
    return data.with_labels(data.item_ids[idx], truth[idx])


FIT = dict(draws=300, tune=300, chains=2, cores=1, progressbar=False, warn=False)


@pytest.fixture(scope="module")
def first_fit():
    return LabelFlip().fit(_tags(40), random_seed=1, **FIT)


@pytest.mark.slow  # two NUTS fits of a hierarchical model: tens of seconds on a shared machine
def test_label_flip_refit_reweights_the_previous_fit(first_fit):
    model = LabelFlip()
    post = model.fit(_tags(44), random_seed=2, previous=first_fit, **FIT)
    assert first_fit.sampling.sampler == "pymc"  # a first fit is NUTS, as before
    info = post.sampling
    if info.sampler == "importance":
        assert info.pareto_k < 0.7 and info.ess >= 200 and info.n_grad_evals == 0
        assert info.extra["proposal"] == "previous fit"
        assert post.convergence["ok"]
    else:  # the weights were not trusted: NUTS, and the reason is on the posterior
        assert "reweighting the previous fit" in info.fallback_reason
    assert post.idata.posterior.sizes["draw"] == 300
    # the draws are the previous fit's draws (reweighted), and every label draw works
    assert set(np.unique(post.idata.posterior["fpr_mu"].values)) <= set(
        np.unique(first_fit.idata.posterior["fpr_mu"].values)) or info.sampler != "importance"
    assert np.isfinite(post.metric("precision").values).all()


@pytest.mark.slow
def test_label_flip_refit_with_another_structure_runs_nuts_and_says_why(first_fit):
    data, truth = simulate_tags(2, items_per_category=120, random_seed=0)  # two categories, not three
    data = data.with_labels(data.item_ids[:30], truth[:30])
    post = LabelFlip().fit(data, random_seed=2, previous=first_fit, **{**FIT, "draws": 50, "tune": 50})
    assert post.sampling.sampler == "pymc"
    assert "another structure" in post.sampling.fallback_reason


def _flip_loop_data():
    data, truth = simulate_tags(3, items_per_category=60, random_seed=0)
    return data, data.with_labels(data.item_ids[:6], truth[:6])


def test_label_flip_fits_before_and_after_the_first_vetted_labels_are_one_structure():
    """The model a LabelFlip fit samples carries the vetted-label terms even when nothing
    is vetted (empty; ``build`` leaves them out, as before): the vetting loop's first fit
    (no labels) and its second (the first batch) share a structure and so a compiled model."""
    data, vetted = _flip_loop_data()
    spec = LabelFlip()
    assert spec._structure(data) == spec._structure(vetted)
    assert spec._structure(data) != LabelFlip(pooling="none")._structure(data)
    plain, for_fit = spec.build(data), spec._build_for_fit(data)
    assert {v.name for v in plain.observed_RVs} == {"noisy_unvetted"}
    assert {v.name for v in for_fit.observed_RVs} == {"label_vetted", "noisy_vetted", "noisy_unvetted"}
    assert {v.name for v in for_fit.free_RVs} == {v.name for v in plain.free_RVs}
    assert len(for_fit.coords["vetted_item"]) == 0 and for_fit["vetted_label"].get_value().shape == (0,)
    # the containers a refit swaps in: the same names, holding the first vetted labels
    assert set(spec._data_values(data)) == set(spec._data_values(vetted)) == {v.name for v in for_fit.data_vars}
    np.testing.assert_array_equal(spec._data_values(vetted)["vetted_label"], vetted.labels[:6])
    assert list(spec._coords(vetted)["vetted_item"]) == list(vetted.item_ids[:6])


@pytest.mark.slow  # compiles four log-densities and two gradients: tens of seconds on a shared machine
def test_label_flip_empty_vetted_terms_change_no_log_density():
    """The empty vetted-label terms add nothing: the fits' model and ``build``'s have the
    same log-density and gradient to the last bit (so a seed gives the draws it gave
    before the terms were carried), and with the first labels swapped in the fits' model
    is the model of those data."""
    data, vetted = _flip_loop_data()
    spec = LabelFlip()
    plain, for_fit = spec.build(data), spec._build_for_fit(data)
    lp_fit, lp_plain = for_fit.compile_logp(), plain.compile_logp()
    dlp_fit, dlp_plain = for_fit.compile_dlogp(), plain.compile_dlogp()
    rng = np.random.default_rng(1)
    points = [{k: v + rng.normal(0, 0.5, np.shape(v)) for k, v in plain.initial_point().items()} for _ in range(3)]
    for point in points:
        assert float(lp_fit(point)) == float(lp_plain(point))
        np.testing.assert_array_equal(dlp_fit(point), dlp_plain(point))
    pm.set_data(spec._data_values(vetted), model=for_fit, coords=spec._coords(vetted))
    assert list(for_fit.coords["vetted_item"]) == list(vetted.item_ids[:6])
    fresh = spec.build(vetted).compile_logp()
    for point in points:
        assert float(lp_fit(point)) == pytest.approx(float(fresh(point)), rel=1e-12)
        assert float(lp_fit(point)) != pytest.approx(float(lp_plain(point)), rel=1e-6)  # the labels count


@pytest.mark.slow  # a NUTS fit of a hierarchical model and a refit: tens of seconds on a shared machine
def test_label_flip_loop_second_fit_is_a_refit(tmp_path):
    """In the vetting loop, the fit after the first batch of labels refits from the first
    fit (no labels): the route recorded on the posterior is the reweighting, not NUTS
    because the structure changed."""
    from bayeval.active import ActiveSession

    data, truth = simulate_tags(3, items_per_category=100, random_seed=2)
    sess = ActiveSession(data, LabelFlip(), metric="precision_at_k", metric_kwargs={"k": 20},
                         store=tmp_path / "labels.sqlite", batch_size=4, strategy="random", random_seed=1,
                         fit_kwargs=dict(draws=300, tune=300, chains=2, cores=1, warn=False), progressbar=False)
    with sess:
        first = sess.posterior
        assert first.sampling.sampler == "pymc" and first.data.n_vetted == 0
        batch = sess.next_batch()
        sess.record(batch, truth[sess.data.index_of(batch)])
        second = sess.posterior
    assert second.data.n_vetted == 4
    info = second.sampling
    assert info.sampler == "importance", info.fallback_reason
    assert info.extra["proposal"].startswith("previous fit") and info.pareto_k < 0.7
    assert second.idata.posterior.sizes["draw"] == 300
    assert np.isfinite(second.metric("precision").values).all()


def test_previous_of_another_model_is_rejected():
    # checked before anything is fitted: a stand-in with a posterior's attributes serves
    other = SimpleNamespace(idata=az.from_dict(posterior={"fpr_mu": np.zeros((2, 5))}), data=_tags(40),
                            model_spec=LabelFlip())
    with pytest.raises(ValueError, match="previous"):
        LabelFlip(pooling="none").fit(_tags(44), previous=other, **FIT)
    with pytest.raises(TypeError, match="previous"):
        LabelFlip().fit(_tags(44), previous=other.idata, **FIT)
    with pytest.raises(TypeError, match="previous"):
        ScoreMixture().fit(_tags(44), previous="last fit", **FIT)


def _annotations(n_gold, n=300, seed=0, n_classes=2):
    rng = np.random.default_rng(seed)
    z = rng.integers(0, n_classes, n)

    def rater(acc):
        return np.where(rng.random(n) < acc, z, (z + rng.integers(1, n_classes, n)) % n_classes)

    ann = np.column_stack([rater(0.9), rater(0.8)]).astype(float)
    ann[rng.random(ann.shape) < 0.3] = np.nan
    gold = np.where(np.arange(n) < n_gold, z, np.nan)
    return AnnotationData(rater(0.75), ann, gold=gold)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_annotator_error_with_more_gold_is_the_same_structure(n_classes):
    """More gold items add observation patterns: the same structure (the pattern arrays
    are data containers), and the model compiled for the fewer gold items, its data
    swapped, has the log-density of a model built for the more."""
    spec = AnnotatorError(n_classes, n_nodes=5)
    few, more = _annotations(20, n_classes=n_classes), _annotations(60, n_classes=n_classes)
    assert spec._structure(few) == spec._structure(more)
    assert spec._coords(few)["pattern"].size < spec._coords(more)["pattern"].size
    model = spec.build(few)
    pm.set_data(spec._data_values(more), model=model, coords=spec._coords(more))
    fresh = spec.build(more)
    point = fresh.initial_point()
    # the two models' log densities (Python mode: no C module compiled just for this check)
    logp = model.compile_logp(mode="FAST_COMPILE")(point)
    assert logp == pytest.approx(fresh.compile_logp(mode="FAST_COMPILE")(point), rel=1e-12)
    assert spec._structure(few) != AnnotatorError(n_classes, n_nodes=7)._structure(few)  # options count


@pytest.mark.slow  # two NUTS fits of AnnotatorError: tens of seconds on a shared machine
def test_annotator_error_refit_with_more_gold_reweights_the_previous_fit():
    spec = AnnotatorError(n_nodes=5)
    fit = {**FIT, "draws": 1000, "tune": 500}
    first = spec.fit(_annotations(20), random_seed=1, **fit)
    post = spec.fit(_annotations(22), random_seed=2, previous=first, **fit)  # two more gold items
    info = post.sampling
    assert info.sampler == "importance", info.fallback_reason
    assert info.extra["proposal"] == "previous fit" and info.n_grad_evals == 0
    assert info.pareto_k < 0.7 and info.ess >= 200
    assert np.isfinite(post.metric("accuracy").values).all()


def test_default_fit_refits_from_a_previous_default_fit(monkeypatch):
    """docs/models.md shows fit(data, previous=post); be.fit(d2, previous=be.fit(d)) failed with
    "No candidate could be fitted: `previous` is a fit of Stack(...)". Each candidate now gets
    its own part of the earlier stacked fit."""
    import bayeval as be
    from bayeval import EvalData
    from bayeval.models import Calibration

    rng = np.random.default_rng(0)
    n = 400
    q = rng.beta(1, 3, n)
    y = (rng.random(n) < q).astype(float)
    lab = np.full(n, np.nan)
    lab[:40] = y[:40]
    small = dict(draws=100, random_seed=0, warn=False, progressbar=False)
    first = be.fit(EvalData(q, lab), **small)
    seen = []
    fit = Calibration.fit

    def spy(self, data, **kw):
        seen.append((self, kw.get("previous")))
        return fit(self, data, **kw)

    monkeypatch.setattr(Calibration, "fit", spy)
    lab[40:60] = y[40:60]
    post = be.fit(EvalData(q, lab), previous=first, **small)
    assert post.data.n_vetted == 60 and len(seen) == len(first.candidates)
    for model, prev in seen:  # every candidate got its own earlier fit
        assert any(prev is p for p in first.candidates.values())
        assert type(prev.model_spec) is type(model) and prev.model_spec.get_params() == model.get_params()
    # one candidate's posterior serves its candidate; one of no candidate is refused, saying what to pass
    seen.clear()
    be.fit(EvalData(q, lab), previous=next(iter(first.candidates.values())), **small)
    assert sum(prev is not None for _, prev in seen) == 1
    other = Calibration("beta").fit(EvalData(q, lab), **{k: v for k, v in small.items() if k != "warn"})
    with pytest.raises(ValueError, match="none of the candidates .* an earlier bayeval.fit"):
        be.fit(EvalData(q, lab), previous=other, **small)
    with pytest.raises(TypeError, match="`previous` must be the posterior of an earlier bayeval.fit"):
        be.fit(EvalData(q, lab), previous="last fit", **small)
