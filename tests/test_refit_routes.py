"""Every route that fits models repeatedly goes through ``Model.fit`` and its
compiled-model cache, and a refit there gives the draws of a fresh fit.

For each route -- the vetting loop (``ActiveSession``), ``ScoreMixture.auto``, the ACIS
Bayesian estimate (``score_mixture_fscore``) and the study runners (``simulate``,
``simulate_fscore``) -- the result with the cache in use (later fits reuse the model
compiled by the first) is compared with the result where every fit builds and
compiles its model afresh (the model's ``_structure`` returns None: no reuse).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from bayeval import EvalData
from bayeval.active.session import ActiveSession
from bayeval.active.simulate import simulate
from bayeval.core import sampling as _sampling
from bayeval.fscore.bayesian import score_mixture_fscore
from bayeval.fscore.study import simulate_fscore
from bayeval.models import Calibration, ScoreMixture

SMALL = dict(draws=100, tune=100, chains=2, cores=1, progressbar=False)


def _pool(seed=0, n=400):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.3).astype(int)
    s = np.clip(np.where(y == 1, rng.normal(0.7, 0.12, n), rng.gamma(2.0, 0.1, n)), 1e-3, 1 - 1e-3)
    return s, y


@pytest.fixture()
def counting(monkeypatch):
    """Count fits through Model.fit and the compilations of the importance sampler."""
    calls = {"fit": 0, "compile": 0}
    from bayeval.core import model as _base

    fit = _base.Model.fit
    init = _sampling._Compiled.__init__

    def counted_fit(self, *a, **k):
        calls["fit"] += 1
        return fit(self, *a, **k)

    def counted_init(self, *a, **k):
        calls["compile"] += 1
        return init(self, *a, **k)

    monkeypatch.setattr(_base.Model, "fit", counted_fit)
    monkeypatch.setattr(_sampling._Compiled, "__init__", counted_init)
    _sampling._CACHE.clear()
    return calls


def _no_reuse(monkeypatch, *classes):
    for cls in classes:
        monkeypatch.setattr(cls, "_structure", lambda self, data: None)
    _sampling._CACHE.clear()


def _same(a, b):
    for v in a.data_vars:
        np.testing.assert_allclose(a[v].values, b[v].values, rtol=1e-9, atol=1e-12, err_msg=v)


def test_vetting_loop_refits_through_the_cache(tmp_path, counting, monkeypatch):
    s, y = _pool()
    data = EvalData(s, np.full(s.size, np.nan), item_ids=[f"i{j}" for j in range(s.size)])
    data = data.with_labels(data.item_ids[:30], y[:30])
    sess = ActiveSession(data, Calibration("logistic"), metric="precision_at_k", metric_kwargs={"k": 20},
                         store=tmp_path / "labels.sqlite", batch_size=10, random_seed=3, fit_kwargs=SMALL)
    with sess:
        for _ in range(2):
            batch = sess.next_batch()
            pos = sess.data.index_of(batch)
            sess.record(batch, y[pos])
        refit = sess.posterior  # the third fit: a refit of the structure compiled by the first
        seed, final = sess._fit_seed(), sess.data
    assert counting["fit"] == 3 and counting["compile"] == 1
    _no_reuse(monkeypatch, Calibration)
    fresh = Calibration("logistic").fit(final, random_seed=seed, **SMALL)
    _same(refit.idata.posterior, fresh.idata.posterior)


def test_score_mixture_auto_refits_through_the_cache(counting, monkeypatch):
    s, y = _pool(1)
    lab = np.full(s.size, np.nan)
    lab[:40] = y[:40]
    data = EvalData(s, lab)
    kw = dict(families=[("gamma", "truncnormal")], draws=100, tune=100, chains=2, random_seed=5, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ScoreMixture.auto(EvalData(s, np.where(np.arange(s.size) < 30, y, np.nan)), **kw)  # compiles
        best, table = ScoreMixture.auto(data, **kw)  # refits the same structure
        assert counting["compile"] == 1 and counting["fit"] == 2
        _no_reuse(monkeypatch, ScoreMixture)
        fresh, table_fresh = ScoreMixture.auto(data, **kw)
    _same(best.idata.posterior, fresh.idata.posterior)
    np.testing.assert_allclose(table["elpd"].to_numpy(), table_fresh["elpd"].to_numpy(), rtol=1e-9)


def test_acis_bayesian_estimate_refits_through_the_cache(counting, monkeypatch):
    s, y = _pool(2, n=2000)
    oracle = lambda idx: y[idx]  # noqa: E731
    kw = dict(budget=40, random_seed=7, model=ScoreMixture("gamma", "truncnormal"),
              fit_kwargs={"draws": 100, "tune": 100, "warn": False})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        score_mixture_fscore(s, s > 0.5, oracle, **{**kw, "random_seed": 8})  # compiles
        again = score_mixture_fscore(s, s > 0.5, oracle, **kw)  # a refit: other labels, same structure
        assert counting["compile"] == 1 and counting["fit"] == 2
        _no_reuse(monkeypatch, ScoreMixture)
        fresh = score_mixture_fscore(s, s > 0.5, oracle, **kw)
    assert again.estimate == pytest.approx(fresh.estimate, rel=1e-9)
    assert again.interval == pytest.approx(fresh.interval, rel=1e-9)


def test_simulate_refits_through_the_cache(counting, monkeypatch):
    s, y = _pool(3, n=300)
    data = EvalData(s)
    kw = dict(metric="average_precision", budget=20, batch_size=10, trials=1, strategies=("random",),
              random_seed=0, fit_kwargs=dict(SMALL))
    ds = simulate(data, y, Calibration("logistic"), **kw)
    assert counting["fit"] == 3 and counting["compile"] == 1  # three steps, one compilation
    _no_reuse(monkeypatch, Calibration)
    fresh = simulate(data, y, Calibration("logistic"), **kw)
    np.testing.assert_allclose(ds["estimate"].values, fresh["estimate"].values, rtol=1e-9, equal_nan=True)
    np.testing.assert_allclose(ds["lower"].values, fresh["lower"].values, rtol=1e-9)


def test_simulate_fits_before_the_first_batch_once_per_trial(counting):
    """The fit before the first batch sees the same data for every strategy: made once per
    trial with the first strategy's seed and shared; it is the fit a strategy would make
    itself with that seed, and the first strategy's records are those of separate fits."""
    from bayeval.active.simulate import _run_seeds
    from bayeval.core import _validate as V

    s, y = _pool(4, n=300)
    data = EvalData(s)
    kw = dict(metric="average_precision", budget=10, batch_size=10, trials=1, strategies=("random", "uncertainty"),
              random_seed=2, fit_kwargs=dict(SMALL))
    shared = simulate(data, y, Calibration("logistic"), **kw)
    assert counting["fit"] == 3  # one fit before the first batch, one after it per strategy
    separate = simulate(data, y, Calibration("logistic"), share_first_fit=False, **kw)
    assert counting["fit"] == 3 + 4
    learned = lambda ds, v="estimate": ds[v].sel(estimator="learned") if "estimator" in ds[v].dims else ds[v]  # noqa: E731
    for v in ("estimate", "lower", "upper"):
        a, b = learned(shared, v), learned(separate, v)
        np.testing.assert_array_equal(a.isel(strategy=1, step=0).values, a.isel(strategy=0, step=0).values)
        xr_equal = np.array_equal(a.isel(strategy=0).values, b.isel(strategy=0).values, equal_nan=True)
        assert xr_equal, v  # the first strategy's path is unchanged
    # separately, the second strategy's first fit had a seed of its own: another fit
    assert learned(separate).isel(strategy=1, step=0).item() != learned(separate).isel(strategy=0, step=0).item()
    # the shared fit is the one the first strategy's seed gives on its own
    seed = int(_run_seeds(V.as_seed_sequence(2).spawn(1)[0], 2, 2, True)[1, 0, 0])
    own = Calibration("logistic").fit(data, random_seed=seed, warn=False, **SMALL)
    mean = float(own.metric("average_precision").mean())
    assert learned(shared).isel(strategy=1, step=0).item() == pytest.approx(mean, rel=1e-12)
    with pytest.raises(TypeError, match="share_first_fit"):
        simulate(data, y, Calibration("logistic"), share_first_fit="yes", **kw)


def test_simulate_fscore_refits_through_the_cache(counting, monkeypatch):
    s, y = _pool(4, n=2000)
    kw = dict(methods=["score_mixture"], budgets=[30], trials=2, random_seed=1,
              method_kwargs={"score_mixture": {"model": ScoreMixture("gamma", "truncnormal"),
                                               "fit_kwargs": {"draws": 100, "tune": 100, "warn": False}}})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        study = simulate_fscore(s, s > 0.5, y, **kw)
        assert counting["fit"] == 2 and counting["compile"] == 1
        _no_reuse(monkeypatch, ScoreMixture)
        fresh = simulate_fscore(s, s > 0.5, y, **kw)
    cols = ["estimate", "variance", "ci_low", "ci_high"]
    np.testing.assert_allclose(study.runs[cols].to_numpy(float), fresh.runs[cols].to_numpy(float), rtol=1e-9)
