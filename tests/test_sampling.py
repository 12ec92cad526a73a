"""The sampler entry (``bayeval.core.sampling``): batched importance sampling against
the one-call-per-draw loop, its fallback, and reproducibility per sampler."""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest

from bayeval.models import Calibration, ScoreMixture
from bayeval.core import sampling as _sampling

from _fit_cases import scores

FIT = dict(draws=200, tune=200, chains=2, progressbar=False, warn=False, cores=1)


def _scores(seed=0, n=400, n_vetted=60):
    return scores(seed, n, n_vetted)


@pytest.mark.parametrize("make", [lambda: Calibration("monotone"), lambda: ScoreMixture("gamma", "truncnormal")],
                         ids=["calibration-monotone", "score-mixture"])
def test_batched_importance_sampling_equals_the_loop(make):
    """The vectorized log-density and constrained-value map give the draws of one
    compiled call per proposal, up to floating point, for the same seed."""
    model = make().build(_scores())
    c = _sampling._Compiled(model)
    out = {}
    for batched in (True, False):
        rng = np.random.default_rng(7)
        u, info = _sampling.importance_sample(c, n_draws=300, rng=rng, batched=batched)
        assert u is not None, info.fallback_reason
        assert info.extra["batched"] is batched
        out[batched] = (u, info, _sampling._to_idata(c, u, 2, 150, batched=batched))
    (u1, i1, d1), (u0, i0, d0) = out[True], out[False]
    np.testing.assert_allclose(u1, u0, rtol=1e-10, atol=1e-12)
    assert i1.pareto_k == pytest.approx(i0.pareto_k, rel=1e-8)
    assert i1.ess == pytest.approx(i0.ess, rel=1e-8)
    assert set(d1.posterior.data_vars) == set(d0.posterior.data_vars)
    for v in d0.posterior.data_vars:
        assert d1.posterior[v].dims == d0.posterior[v].dims
        np.testing.assert_allclose(d1.posterior[v].values, d0.posterior[v].values, rtol=1e-10, atol=1e-12)
    # and the proposals' densities themselves, point by point
    pts = u0[:50] + 0.3
    np.testing.assert_allclose(c.f_batch(pts), [c.f(x) for x in pts], rtol=1e-10, atol=1e-9)


def test_batched_chunks_give_the_same_densities(monkeypatch):
    model = Calibration("logistic").build(_scores())
    c = _sampling._Compiled(model)
    assert c.batched()
    u = c.ravel(c.ip) + np.random.default_rng(0).normal(size=(37, len(c.ravel(c.ip))))
    whole = c.f_batch(u)
    monkeypatch.setattr(_sampling, "_BATCH_ELEMENTS", 1)  # one proposal per call
    np.testing.assert_array_equal(c.f_batch(u), whole)
    outs = c.outputs_batch(u)
    assert all(len(o) == 37 for o in outs)


def test_logp_many_measures_and_keeps_the_faster_way(monkeypatch):
    """The first evaluation that can compare times a batched chunk against single
    calls and keeps the faster for the structure; every way gives the same values."""
    model = Calibration("monotone").build(_scores())
    c = _sampling._Compiled(model)
    assert c.batched() and c.batch_faster is None
    u = c.ravel(c.ip) + 0.2 * np.random.default_rng(1).normal(size=(150, len(c.ravel(c.ip))))
    ref = np.array([c.f(x) for x in u])
    monkeypatch.setattr(_sampling, "_BATCH_ELEMENTS", 4 * 200)  # chunks of 4 rows (200 vetted labels)
    seen = []
    got = c.logp_many(u, on_chunk=seen.append)
    assert c.batch_faster in (True, False) and sum(seen) == 150
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-9)
    for faster in (True, False):
        c.batch_faster = faster
        np.testing.assert_allclose(c.logp_many(u), ref, rtol=1e-10, atol=1e-9)


def test_fallback_to_the_loop_where_the_graph_does_not_vectorize(monkeypatch):
    """A model whose graph cannot be vectorized is sampled one proposal at a time,
    with the same draws."""
    # compilation counted as free: a refit batches from the structure's second fit on
    monkeypatch.setattr(_sampling, "_COMPILE_S_PER_NODE", {"logp": 0.0, "outputs": 0.0})
    data = _scores()
    _sampling._CACHE.clear()
    first = Calibration("logistic").fit(data, random_seed=3, **FIT)
    assert first.sampling.extra["batched"] is False  # a structure's first fit: one call per proposal
    ref = Calibration("logistic").fit(data, random_seed=3, **FIT)  # a refit: batched
    assert ref.sampling.sampler == "importance" and ref.sampling.extra["batched"] is True
    for v in ref.idata.posterior.data_vars:
        np.testing.assert_allclose(first.idata.posterior[v].values, ref.idata.posterior[v].values,
                                   rtol=1e-10, atol=1e-12)

    def fail(*a, **k):
        raise NotImplementedError("no batched form")

    monkeypatch.setattr(_sampling, "_vectorize", fail)
    _sampling._CACHE.clear()
    Calibration("logistic").fit(data, random_seed=3, **FIT)
    post = Calibration("logistic").fit(data, random_seed=3, **FIT)
    assert post.sampling.sampler == "importance" and post.sampling.extra["batched"] is False
    c = next(iter(_sampling._CACHE.values()))
    assert "no batched form" in c.batch_error
    for v in ref.idata.posterior.data_vars:
        np.testing.assert_allclose(post.idata.posterior[v].values, ref.idata.posterior[v].values,
                                   rtol=1e-10, atol=1e-12)
    _sampling._CACHE.clear()


def test_large_data_keep_one_call_per_proposal_and_batch_the_outputs(monkeypatch):
    """Above ``_BATCH_LOGP_MAX_ELEMENTS`` a refit does not compile the vectorized
    log-density (no faster on large data, and its compilation made the first refit
    slow): the proposals are evaluated one call each, the draws are mapped batched,
    and the draws are those of the loop."""
    model = Calibration("logistic").build(_scores())
    c = _sampling._Compiled(model)
    monkeypatch.setattr(_sampling, "_BATCH_LOGP_MAX_ELEMENTS", 10)  # 60 vetted labels count as large
    assert not c.logp_worth_batching()
    u, info = _sampling.importance_sample(c, n_draws=300, rng=np.random.default_rng(7), batched=True)
    assert info.extra["batched"] is False and c._batched is None  # nothing vectorized yet
    d1 = _sampling._to_idata(c, u, 2, 150, batched=True)
    assert c._batched[0] is None and c._batched[1] is not None  # the map only
    u0, _ = _sampling.importance_sample(c, n_draws=300, rng=np.random.default_rng(7), batched=False)
    d0 = _sampling._to_idata(c, u0, 2, 150, batched=False)
    for v in d0.posterior.data_vars:
        np.testing.assert_allclose(d1.posterior[v].values, d0.posterior[v].values, rtol=1e-10, atol=1e-12)
    monkeypatch.setattr(_sampling, "_BATCH_LOGP_MAX_ELEMENTS", 10_000)
    assert c.logp_worth_batching()


def test_batched_refit_with_other_data_lengths(monkeypatch):
    """The cached batched functions read the swapped data containers (other lengths)."""
    monkeypatch.setattr(_sampling, "_COMPILE_S_PER_NODE", {"logp": 0.0, "outputs": 0.0})
    _sampling._CACHE.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        first = ScoreMixture().fit(_scores(0, n=400), random_seed=5, **FIT)
        ScoreMixture().fit(_scores(1, n=700, n_vetted=90), random_seed=5, **FIT)
        again = ScoreMixture().fit(_scores(0, n=400), random_seed=5, **FIT)
    assert again.sampling.extra["batched"] is True
    for v in first.idata.posterior.data_vars:
        np.testing.assert_allclose(first.idata.posterior[v].values, again.idata.posterior[v].values,
                                   rtol=1e-10, atol=1e-12)


def test_batching_pays_only_once_the_loops_cost_the_compilation(monkeypatch):
    """The rule: a vectorized function is compiled once the one-point loops it would
    replace (earlier fits' and this one's, at their measured time per row) cost at least
    its estimated compilation; never where its graph does not vectorize or, for the
    log-density, where the data are large; always once it is compiled."""
    c = _sampling._Compiled(Calibration("logistic").build(_scores()))
    assert c.compile_estimate("logp") == float("inf")  # nothing compiled to count yet
    c.f(c.ravel(c.ip))  # compiles the one-point log-density
    est = c.compile_estimate("logp")
    assert 0 < est < float("inf")
    assert not c.batching_pays("logp", 2000)  # no loop measured yet: a first refit never compiles
    c.record_loop("logp", 2000, 0.25 * est)  # one fit's loop: a quarter of the compilation
    assert not c.batching_pays("logp", 2000)  # this fit's would make it half
    assert not c.batching_pays("logp", 5999)
    assert c.batching_pays("logp", 6000)  # 0.25 + 0.75: the loops now cost the compilation
    c.record_loop("logp", 6000, 0.75 * est)
    assert c.batching_pays("logp", 1)
    monkeypatch.setattr(_sampling, "_BATCH_LOGP_MAX_ELEMENTS", 10)  # the same data counted as large
    assert not c.batching_pays("logp", 10**6)
    monkeypatch.setattr(_sampling, "_BATCH_LOGP_MAX_ELEMENTS", 10_000)
    assert c._vectorized("logp") and c.batching_pays("logp", 0)  # compiled: always
    c._batched = False  # a graph that does not vectorize
    assert not c.batching_pays("logp", 10**6) and not c.batching_pays("outputs", 10**6)


def test_refits_batch_once_the_loops_have_paid_and_draw_the_same(monkeypatch):
    """Refits of one structure: with a compilation estimated dearer than the loops the
    proposals stay one call each (a one-off comparison's case); with the loops already
    costing more, the log-density is compiled batched; the draws are the same either way."""
    data = _scores()
    draws = {}
    for rate, batched in ((1e6, False), (1e-9, True)):
        monkeypatch.setattr(_sampling, "_COMPILE_S_PER_NODE", {"logp": rate, "outputs": rate})
        _sampling._CACHE.clear()
        first = Calibration("logistic").fit(data, random_seed=3, **FIT)
        c = next(iter(_sampling._CACHE.values()))
        assert first.sampling.extra["batched"] is False and c.loop_rows["logp"] >= 2000 and c.loop_seconds["logp"] > 0
        for _ in range(2):
            post = Calibration("logistic").fit(data, random_seed=3, **FIT)
            assert post.sampling.sampler == "importance"
            assert post.sampling.extra["batched"] is batched and post.sampling.extra["batched_outputs"] is batched
        assert (c._batched is None) is (not batched)
        draws[batched] = post.idata.posterior
    for v in draws[True].data_vars:
        np.testing.assert_allclose(draws[True][v].values, draws[False][v].values, rtol=1e-10, atol=1e-12)
    _sampling._CACHE.clear()


# ------------------------------------------------------------------ NUTS backends

def _nuts_fit(sampler, seed=3):
    return Calibration("logistic").fit(_scores(), random_seed=seed, sampler=sampler,
                                       **{**FIT, "draws": 60, "tune": 60})


@pytest.mark.parametrize("sampler", _sampling.NUTS_SAMPLERS)
def test_every_nuts_backend_is_reproducible_from_its_seed(sampler):
    """Same seed -> same draws for a given sampler; the posterior names its sampler."""
    need = {"nutpie": "nutpie", "numpyro": "numpyro", "blackjax": "blackjax"}.get(sampler)
    if need:
        pytest.importorskip(need)
    if sampler in ("numpyro", "blackjax"):
        pytest.importorskip("jax")
    a, b = _nuts_fit(sampler), _nuts_fit(sampler)
    c = _nuts_fit(sampler, seed=4)
    assert a.sampling.sampler == sampler and a.sampler == sampler
    assert a.idata.posterior.sizes["draw"] == 60 and a.idata.posterior.sizes["chain"] == 2
    np.testing.assert_array_equal(a.idata.posterior["a"].values, b.idata.posterior["a"].values)
    assert not np.array_equal(a.idata.posterior["a"].values, c.idata.posterior["a"].values)
    assert a.sampling.n_grad_evals > 0


def test_nutpie_starts_its_chains_where_the_model_says():
    """``start`` reaches nutpie too (it otherwise starts at the priors' support points):
    without jitter the first tuning draw is the start, with jitter it is near it; the
    compiled model kept for later fits is not changed."""
    pytest.importorskip("nutpie")
    import pymc as pm

    with pm.Model() as model:
        pm.Normal("x", 0.0, 1.0, shape=2)
        pm.HalfNormal("y", 1.0)
    seen = []
    real = _sampling._nutpie_with_start

    def spy(cm, *args):
        out = real(cm, *args)
        seen.append((out.initial_point_func(1), cm.initial_point_func(1)))
        return out

    start = {"x": np.array([40.0, -40.0]), "y": 30.0}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_sampling, "_nutpie_with_start", spy)
        _sampling.sample_model(model, draws=2, tune=1, chains=2, random_seed=1, sampler="nutpie", start=start,
                               jitter=False, key=("nutpie-start-test",))
        _sampling.sample_model(model, draws=2, tune=1, chains=2, random_seed=1, sampler="nutpie", start=start,
                               jitter=True, key=("nutpie-start-test",))
    (fixed, original), (jittered, _) = seen
    np.testing.assert_allclose(fixed, [40.0, -40.0, np.log(30.0)])
    assert np.all(np.abs(jittered - fixed) <= 1.0) and not np.allclose(jittered, fixed)
    assert np.all(np.abs(original) < 5)  # the cached model still starts at the priors
    idata, _ = _sampling.sample_model(model, draws=2, tune=1, chains=2, random_seed=1, sampler="nutpie",
                                      start=start, jitter=False)
    assert np.all(np.abs(idata.posterior["x"].values[..., 0] - 40.0) < 5)


def test_auto_runs_the_default_nuts_and_explicit_names_run_theirs(monkeypatch):
    """A model whose "auto" is NUTS runs DEFAULT_NUTS (and falls back to it); an explicit
    sampler name is passed on as given."""
    from bayeval.core import model as _base

    seen = []

    def fake(model, **kw):
        seen.append((kw["sampler"], kw["fallback"]))
        raise RuntimeError("stop")

    monkeypatch.setattr(_base, "sample_model", fake)
    monkeypatch.setattr(_base, "DEFAULT_NUTS", "pymc-numba")
    data = _scores()
    for sampler in ("auto", "pymc", "nutpie"):
        with pytest.raises(RuntimeError, match="stop"):
            Calibration("logistic").fit(data, sampler=sampler, **FIT)
    assert seen == [("auto", "pymc-numba"), ("pymc", "pymc"), ("nutpie", "pymc")]
    seen.clear()

    class NutsModel(Calibration):
        auto_sampler = "pymc"

    with pytest.raises(RuntimeError, match="stop"):
        NutsModel("logistic").fit(data, **FIT)
    assert seen == [("pymc-numba", "pymc-numba")]


def test_nuts_with_progressbar_off_writes_nothing(capfd):
    """Neither a bar nor PyMC's log lines on stderr when progressbar=False."""
    _nuts_fit("pymc")
    err = capfd.readouterr().err
    assert "NUTS" not in err and "Sampling" not in err and "%" not in err


# ------------------------------------------------------------------ SMC

def test_smc_is_reproducible_and_reports_its_runs():
    """``sampler="smc"`` through a model's fit: the same seed gives the same draws, each
    chain is a run whose stages and marginal likelihood are kept (PyMC's ragged sample
    statistics are not: a netCDF file could not hold them), and the convergence check
    names the sampler and compares the runs."""
    fit = dict(FIT, draws=300)
    a = Calibration("logistic").fit(_scores(), random_seed=3, sampler="smc", **fit)
    b = Calibration("logistic").fit(_scores(), random_seed=3, sampler="smc", **fit)
    c = Calibration("logistic").fit(_scores(), random_seed=4, sampler="smc", **fit)
    assert a.sampler == "smc" and a.sampling.sampler == "smc"
    assert a.idata.posterior.sizes["chain"] == 2 and a.idata.posterior.sizes["draw"] == 300
    np.testing.assert_array_equal(a.idata.posterior["a"].values, b.idata.posterior["a"].values)
    assert not np.array_equal(a.idata.posterior["a"].values, c.idata.posterior["a"].values)
    assert "sample_stats" not in a.idata.groups()
    extra = a.sampling.extra
    assert len(extra["stages"]) == len(extra["log_marginal_likelihood"]) == len(extra["final_accept_rate"]) == 2
    assert all(s >= 1 for s in extra["stages"]) and np.all(np.isfinite(extra["log_marginal_likelihood"]))
    conv = a.convergence
    assert conv["sampler"] == "smc" and conv["divergences"] == 0 and np.isfinite(conv["max_rhat"])
    # the calibration's posterior is near-Gaussian: the runs agree with importance sampling
    ref = Calibration("logistic").fit(_scores(), random_seed=3, sampler="importance", **dict(FIT, draws=2000))
    for v in ("a", "b"):
        x, y = a.idata.posterior[v].values.ravel(), ref.idata.posterior[v].values.ravel()
        assert abs(x.mean() - y.mean()) < 4 * y.std() * np.sqrt(1 / 300 + 1 / 4000)


def test_smc_weighs_a_minor_mode_as_the_posterior_does():
    """Two well-separated modes holding 80% and 20% of the mass: every SMC run is
    tempered from the prior, so the pooled runs put about 20% of the draws in the
    minor mode (a NUTS chain stays in the mode it starts in)."""
    import pymc as pm
    import pytensor.tensor as pt

    with pm.Model() as model:
        x = pm.Normal("x", 0.0, 3.0)
        pm.Potential("two_modes", pt.logaddexp(np.log(0.8) + pm.logp(pm.Normal.dist(-3.0, 0.5), x),
                                               np.log(0.2) + pm.logp(pm.Normal.dist(3.0, 0.5), x)))
    idata, info = _sampling.sample_model(model, draws=1000, tune=0, chains=4, random_seed=2, sampler="smc", cores=1)
    per_run = (idata.posterior["x"].values > 0).mean(axis=1)
    # the prior is symmetric and both modes equally wide: the minor mode keeps its 20%.
    # Seeds 0-4 gave 0.199-0.213 pooled (a standard error of about 0.006); NUTS with
    # four chains gives 0.25 here, per chain 1, 0, 0, 0
    assert abs(per_run.mean() - 0.2) < 0.03, per_run
    assert np.all((per_run > 0.1) & (per_run < 0.3)), per_run
    assert info.sampler == "smc" and info.n_grad_evals == 0


def test_sample_model_refuses_exact_which_only_a_model_can_draw():
    import pymc as pm

    with pm.Model() as model:
        pm.Normal("x")
    with pytest.raises(ValueError, match="closed-form posterior, which the model does itself"):
        _sampling.sample_model(model, draws=5, tune=5, chains=1, random_seed=1, sampler="exact")


def test_importance_sampling_adapts_a_poor_proposal_once(monkeypatch):
    """A proposal 5.5x too narrow (the curvature at the mode scaled by 30): the first
    proposals' Pareto k is above 0.7, one adaptation to their weighted mean and
    covariance brings it below, and the draws have the exact (conjugate) posterior's
    mean and sd within Monte Carlo error. Without the adaptation the fit would fall back
    to NUTS."""
    import pymc as pm

    y = np.random.default_rng(0).normal(1.0, 1.0, size=(50, 3))
    with pm.Model() as model:
        mu = pm.Normal("mu", 0.0, 10.0, shape=3)
        pm.Normal("y", mu, 1.0, observed=y)
    c = _sampling._Compiled(model)
    real = _sampling._hessian
    monkeypatch.setattr(_sampling, "_hessian", lambda c_, x: 30.0 * real(c_, x))
    u, info = _sampling.importance_sample(c, n_draws=2000, rng=np.random.default_rng(1))
    assert info.extra["adapted"] and info.extra["first_pareto_k"] >= 0.7 and info.pareto_k < 0.7
    assert info.n_proposals == 4000
    sd = 1.0 / np.sqrt(50 + 1 / 100)
    mean = y.sum(axis=0) / (50 + 1 / 100)
    np.testing.assert_array_less(np.abs(u.mean(axis=0) - mean), 4 * sd / np.sqrt(info.ess))
    np.testing.assert_array_less(np.abs(u.std(axis=0) / sd - 1), 4 / np.sqrt(2 * info.ess))
    monkeypatch.setattr(_sampling, "_ADAPT_MIN_ESS_PER_DIM", 10**9)  # no adaptation
    u, info = _sampling.importance_sample(c, n_draws=2000, rng=np.random.default_rng(1))
    assert u is None and "Pareto k" in info.fallback_reason and "adapted" not in info.extra


def test_a_function_kept_from_chains_sampled_in_child_processes_evaluates_the_density():
    """PyMC sets a log-density function's (no) extra values at each NUTS step, in the process
    that samples; when the chains ran in child processes the parent's function never had
    them set, and a cache entry keeping it made the next importance sampling of the same
    structure fail ("Extra values are not set") and fall back to NUTS."""
    import pymc as pm
    from scipy import stats

    from bayeval.core import sampling as _s

    with pm.Model() as m:
        pm.Normal("x", 0.0, 1.0)
    fn = m.logp_dlogp_function(ravel_inputs=True)  # never stepped in this process
    c = _s._Compiled(m, valgrad=fn)
    assert c.density_from_valgrad
    np.testing.assert_allclose(c.f(np.array([0.5])), stats.norm.logpdf(0.5))


def test_a_nuts_refit_through_the_cache_compiles_no_gradient_and_gives_a_fresh_fits_draws():
    """PyMC's NUTS compiles its log-density-and-gradient function on every call; a keyed
    structure's later NUTS fits (data swapped into the cached model) sample with the one
    kept from its first fit -- and draw exactly what a fresh, uncached fit of that data
    draws (and so for a structure first cached by importance sampling)."""
    import pymc as pm

    def build(y):
        with pm.Model() as m:
            data = pm.Data("y", y)
            mu = pm.Normal("mu", 0.0, 10.0)
            pm.Normal("obs", mu, 1.0, observed=data, shape=data.shape)
        return m

    def count_compiles(m):
        calls = []
        own = m.logp_dlogp_function

        def counted(*args, **kwargs):
            calls.append(1)
            return own(*args, **kwargs)

        m.logp_dlogp_function = counted
        return calls

    kw = dict(draws=30, tune=30, chains=1, cores=1, random_seed=3, sampler="pymc")
    y0, y1 = np.array([0.1, 0.4, -0.2]), np.array([1.0, 1.5, 0.7, 1.2])
    key = ("test", "nuts refit")
    _sampling._CACHE.pop(key, None)
    try:
        m = build(y0)
        _sampling.sample_model(m, key=key, **kw)
        kept = _sampling._CACHE[key]._valgrad
        assert kept is not None
        pm.set_data({"y": y1}, model=m)
        calls = count_compiles(m)
        refit, _ = _sampling.sample_model(m, key=key, **kw)
        vars(m).pop("logp_dlogp_function", None)  # (the sampler removes its own wrappers)
        assert calls == [] and _sampling._CACHE[key]._valgrad is kept
        fresh, _ = _sampling.sample_model(build(y1), **kw)  # no key: compiled afresh
        np.testing.assert_array_equal(refit.posterior["mu"].values, fresh.posterior["mu"].values)
        # cached by importance sampling first: NUTS samples with the function its mode search used
        _sampling._CACHE.pop(key)
        m = build(y0)
        _sampling.sample_model(m, key=key, **{**kw, "sampler": "importance"})
        used = _sampling._CACHE[key]._valgrad
        calls = count_compiles(m)
        _sampling.sample_model(m, key=key, **kw)
        assert calls == [] and _sampling._CACHE[key]._valgrad is used
        # an entry without one (a reweighted refit needs the density alone) keeps NUTS's
        vars(m).pop("logp_dlogp_function", None)
        _sampling._CACHE[key]._valgrad = None
        _sampling.sample_model(m, key=key, **kw)
        assert _sampling._CACHE[key]._valgrad is not None
    finally:
        _sampling._CACHE.pop(key, None)


def test_nuts_starts_without_pymcs_per_variable_gradient_probe_and_draws_the_same(monkeypatch):
    """PyMC's step assignment builds one symbolic gradient per continuous variable just to
    learn that NUTS applies; bayeval's NUTS fits assign NUTS to all of them without that
    probe (keyed structures: none at all; others: one joint gradient) and draw exactly what
    PyMC's own assignment gives. A ``pm.sample`` of the user's, outside bayeval, still runs
    PyMC's assignment."""
    import types

    import pymc as pm
    import pymc.sampling.mcmc as mcmc

    def build():
        with pm.Model() as m:
            mu = pm.Normal("mu", 0.0, 10.0)
            sd = pm.HalfNormal("sd", 2.0)
            pm.Normal("obs", mu, sd, observed=[0.3, 1.1, -0.4, 0.8])
        return m

    kw = dict(draws=30, tune=30, chains=1, cores=1, random_seed=5, sampler="pymc")
    with monkeypatch.context() as mp:  # PyMC's own assignment, probe included
        mp.setattr(_sampling, "_nuts_only", lambda model, known_gradient: contextlib.nullcontext())
        probed, _ = _sampling.sample_model(build(), **kw)

    def probe(*args, **kwargs):
        raise AssertionError("PyMC's per-variable gradient probe ran")

    class NeverRaised(Exception):
        pass

    monkeypatch.setattr(mcmc, "tg", types.SimpleNamespace(grad=probe, NullTypeGradError=NeverRaised))
    unkeyed, _ = _sampling.sample_model(build(), **kw)
    key = ("test", "nuts without the probe")
    try:
        keyed, _ = _sampling.sample_model(build(), key=key, **kw)
    finally:
        _sampling._CACHE.pop(key, None)
    for idata in (unkeyed, keyed):
        for name in ("mu", "sd"):
            np.testing.assert_array_equal(idata.posterior[name].values, probed.posterior[name].values)
    with build(), pytest.raises(AssertionError, match="probe ran"):
        pm.sample(draws=10, tune=10, chains=1, cores=1, random_seed=5, progressbar=False)


def test_nuts_chains_and_refits_share_pymcs_per_call_functions(monkeypatch):
    """``pm.sample`` compiles a point-to-traced-values function for each chain's trace and an
    initial-point function on every call; bayeval's keyed NUTS fits compile each once and
    reuse them for the other chains and for later fits of the same model (its data swapped),
    drawing exactly what PyMC's own functions give. A ``pm.sample`` of the user's, outside
    bayeval, still compiles them on every call."""
    import pymc as pm
    import pymc.backends.base as backends_base
    import pymc.initial_point as initial_point

    def build():
        with pm.Model() as m:
            y = pm.Data("y", np.array([0.3, 1.1, -0.4, 0.8]))
            mu = pm.Normal("mu", 0.0, 10.0)
            sd = pm.HalfNormal("sd", 2.0)
            pm.Deterministic("shift", mu - y.mean())
            pm.Normal("obs", mu, sd, observed=y, shape=y.shape)
        return m

    kw = dict(draws=30, tune=30, chains=2, cores=1, random_seed=5, sampler="pymc")
    with monkeypatch.context() as mp:  # PyMC's own functions, compiled on every call
        mp.setattr(_sampling, "_reusing_pymc_fns", lambda model, keyed: contextlib.nullcontext())
        other = build()
        pm.set_data({"y": np.array([2.0, 2.5, 1.5])}, model=other)
        plain = [_sampling.sample_model(build(), **kw)[0], _sampling.sample_model(other, **kw)[0]]

    compiles = {"trace": 0, "start": 0}

    def counting(module, what):
        own = module.compile

        def compile(*args, **kwargs):
            compiles[what] += 1
            return own(*args, **kwargs)

        monkeypatch.setattr(module, "compile", compile)

    counting(backends_base, "trace")
    counting(initial_point, "start")
    model, key = build(), ("test", "pymc's per-call functions")
    try:
        first, _ = _sampling.sample_model(model, key=key, **kw)
        # two chains, one trace function; the jittered start's function, and the model's own
        # initial point, which the first compilation of the gradient also asks for
        assert compiles["trace"] == 1 and compiles["start"] >= 1
        after_first = dict(compiles)
        pm.set_data({"y": np.array([2.0, 2.5, 1.5])}, model=model)  # a refit: other data, same model
        again, _ = _sampling.sample_model(model, key=key, **kw)
        assert compiles == after_first  # nothing compiled again
    finally:
        _sampling._CACHE.pop(key, None)
    for ours, theirs in zip((first, again), plain, strict=True):
        for name in ("mu", "sd", "shift"):
            np.testing.assert_array_equal(ours.posterior[name].values, theirs.posterior[name].values)
    assert not np.allclose(first.posterior["shift"].values, again.posterior["shift"].values)
    with build():
        pm.sample(draws=5, tune=5, chains=2, cores=1, random_seed=5, progressbar=False, compute_convergence_checks=False)
    assert compiles["trace"] == 3 and compiles["start"] > after_first["start"]
