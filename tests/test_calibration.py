"""Calibration models, the importance sampler, stacking by the vetted labels, the default fit."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import arviz as az
import numpy as np
import pytest
from scipy import special

import bayeval as be
from bayeval import EvalData, Posterior, recalibrate
from bayeval.core import metrics as M
from bayeval.core import sampling as _sampling
from bayeval.core._stacking import bootstrap_stacking_weights
from bayeval.models import Calibration, StackedPosterior
from bayeval.models.stacking import (
    STACKING_REPLICATES,
    _allocate,
    _stacking_weights,
    calibration_check,
    label_loglik,
    label_loo,
)


def _pool(n=2000, n_vet=40, seed=0, a=0.0, b=1.0, prior=(1.0, 3.0)):
    """Probabilities q of a classifier whose true calibration is logit P = a + b logit(q)."""
    rng = np.random.default_rng(seed)
    q = rng.beta(*prior, n).clip(1e-4, 1 - 1e-4)
    p = special.expit(a + b * special.logit(q))
    y = (rng.random(n) < p).astype(float)
    lab = np.full(n, np.nan)
    idx = rng.choice(n, n_vet, replace=False)
    lab[idx] = y[idx]
    return q, y, lab


# ------------------------------------------------------------ calibration


def test_importance_sampler_matches_nuts():
    q, _, lab = _pool(n=800, n_vet=40, seed=1)
    data = EvalData(q, lab)
    fast = Calibration("logistic").fit(data, random_seed=3, draws=1000, chains=2)
    nuts = Calibration("logistic").fit(data, random_seed=3, draws=1000, chains=2, sampler="pymc")
    assert fast.sampling.sampler == "importance" and fast.sampling.pareto_k < 0.7
    assert nuts.sampling.sampler == "pymc"
    for v in ("a", "b"):
        x, y = fast.idata.posterior[v].values.ravel(), nuts.idata.posterior[v].values.ravel()
        # Monte Carlo error of each mean is below sd / sqrt(ESS) with ESS >= 500 for both
        tol = 4 * np.sqrt(x.var() / 500 + y.var() / 500)
        assert abs(x.mean() - y.mean()) < tol, (v, x.mean(), y.mean(), tol)
        assert 0.8 < x.std() / y.std() < 1.25


def test_same_seed_same_draws_and_refit_equals_fresh_fit():
    q, _, lab = _pool(seed=2)
    data = EvalData(q, lab)
    first = Calibration("monotone").fit(data, random_seed=5)
    # another fit with other data goes through the compiled model in between
    Calibration("monotone").fit(EvalData(q, np.where(np.isnan(lab), np.nan, 1 - lab)), random_seed=1, warn=False)
    again = Calibration("monotone").fit(data, random_seed=5)
    _sampling._CACHE.clear()
    fresh = Calibration("monotone").fit(data, random_seed=5)
    for other in (again, fresh):
        for v in ("a", "b", "delta"):
            np.testing.assert_array_equal(first.idata.posterior[v].values, other.idata.posterior[v].values)
    np.testing.assert_array_equal(first.metric("average_precision").values, fresh.metric("average_precision").values)
    other_seed = Calibration("monotone").fit(data, random_seed=6)
    assert not np.array_equal(first.idata.posterior["a"].values, other_seed.idata.posterior["a"].values)


def test_default_learns_a_miscalibration_the_plug_in_trusts():
    """Scores q = p**2 (overconfident negatives): the default learns it from 200 labels."""
    err_fit, err_plug, plug_hits, fit_hits, slopes = [], [], 0, 0, []
    for seed in range(5):
        rng = np.random.default_rng(seed)
        p = rng.beta(1, 2, 3000)
        q = p**2
        y = (rng.random(3000) < p).astype(float)
        lab = np.full(3000, np.nan)
        idx = rng.choice(3000, 200, replace=False)
        lab[idx] = y[idx]
        truth = float(np.mean((q >= 0.5) == y))
        post = be.fit(EvalData(q, lab), random_seed=seed, draws=500)
        plug = Posterior.from_probabilities(EvalData(q, lab), q, draws=500, random_seed=0, check=False)
        for est, errs in ((post, err_fit), (plug, err_plug)):
            acc = est.metric("accuracy", threshold=0.5).values.ravel()
            errs.append(abs(acc.mean() - truth))
            lo, hi = be.hdi(acc, 0.9)
            if est is plug:
                plug_hits += lo <= truth <= hi
            else:
                fit_hits += lo <= truth <= hi
        slopes.append(float(post.candidates["calibration/logistic"].idata.posterior["b"].mean()))
    assert plug_hits == 0  # the plug-in is confidently wrong every time
    assert np.mean(err_fit) < np.mean(err_plug) / 3
    assert fit_hits >= 3  # 5 trials at 90%: P(fewer than 3) < 0.01
    assert np.mean(slopes) < 0.8  # learned a slope below the prior's 1


def test_curves_and_their_errors():
    q, _, lab = _pool(seed=3)
    d = EvalData(q, lab)
    beta = Calibration("beta").fit(d, random_seed=0)
    assert sorted(beta.idata.posterior.data_vars) == ["a", "b", "c"]
    c = beta.curve(n_grid=50)
    assert c["mean"].dims == ("score",) and bool((c["lower"] <= c["upper"]).all())
    # the monotone curve is monotone in every draw
    mono = Calibration("monotone").fit(d, random_seed=0)
    grid = np.linspace(0.001, 0.999, 200)
    p = special.expit(mono._eta_of(mono._flat_params(), mono.calibration._feats(grid, mono.info)))
    assert np.all(np.diff(p, axis=1) >= -1e-12)
    with pytest.raises(ValueError, match="needs scores in \\[0, 1\\]"):
        Calibration("beta").fit(EvalData(np.linspace(-2, 2, 50), np.r_[1, 0, np.full(48, np.nan)]))
    with pytest.raises(ValueError, match="curve"):
        Calibration("isotonic")
    with pytest.raises(TypeError, match="EvalData"):
        Calibration().fit(q)
    with pytest.raises(ValueError, match="sampler"):
        Calibration().fit(d, sampler="hmc")


def test_no_vetted_negatives_warns():
    q, _, _ = _pool(seed=4)
    lab = np.full(q.size, np.nan)
    lab[np.argsort(q)[-10:]] = 1
    with pytest.warns(UserWarning, match="no vetted negatives"):
        Calibration().fit(EvalData(q, lab), random_seed=0)


def test_label_loglik_in_idata_and_az_loo():
    q, _, lab = _pool(seed=5)
    post = Calibration().fit(EvalData(q, lab), random_seed=0)
    assert post.idata.log_likelihood["label"].shape == (2, 1000, 40)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loo = az.loo(post.idata)
    np.testing.assert_allclose(float(loo.elpd_loo), float(label_loo(post).elpd_loo), rtol=1e-4)  # r_eff differs
    # the generic path (item probabilities) agrees with the model's own
    generic = Posterior.__new__(Posterior)
    generic.__dict__.update(post.__dict__)
    generic.__class__ = Posterior
    np.testing.assert_allclose(label_loglik(generic), post.label_loglik(), rtol=1e-6, atol=1e-9)


def test_stack_label_loglik_reads_its_candidates_on_the_vetted_items_only(monkeypatch):
    """The stack's vetted-label log-likelihood: each draw's from its candidate, the same as the
    generic route through every item's probability (which took 25 s of a fit to 10^6 items)."""
    q, _, lab = _pool(n=600, seed=6)
    post = be.fit(EvalData(q, lab), random_seed=0, draws=200, progressbar=False)
    generic = Posterior.label_loglik(post)
    np.testing.assert_allclose(post.idata.log_likelihood["label"].values, generic, rtol=1e-10, atol=1e-12)

    def every_item(self, chain, draws):
        raise AssertionError("the stack computed every item's probability for its vetted labels")

    monkeypatch.setattr(Posterior, "_probabilities", every_item)
    np.testing.assert_allclose(post.label_loglik(), generic, rtol=1e-10, atol=1e-12)


def test_calibration_check_z():
    rng = np.random.default_rng(0)
    q = rng.uniform(0.05, 0.3, 400)
    lab = np.full(400, np.nan)
    lab[:100] = 1.0 * (rng.random(100) < 0.8)  # far more positives than q says
    bad = Posterior.from_probabilities(EvalData(q, lab), q, draws=200, random_seed=0, check=False)
    assert calibration_check(bad)["flagged"] and calibration_check(bad)["z"] > 5
    lab[:100] = 1.0 * (rng.random(100) < q[:100])
    good = Posterior.from_probabilities(EvalData(q, lab), q, draws=200, random_seed=0)
    assert not calibration_check(good)["flagged"]


def test_from_probabilities_warns_when_labels_contradict():
    rng = np.random.default_rng(1)
    p = rng.beta(1, 2, 2000)
    y = (rng.random(2000) < p).astype(float)
    lab = np.full(2000, np.nan)
    lab[:200] = y[:200]
    with pytest.warns(UserWarning, match="contradict the given probabilities"):
        Posterior.from_probabilities(EvalData(p**2, lab), p**2, draws=10, random_seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Posterior.from_probabilities(EvalData(p, lab), p, draws=10, random_seed=0)


def test_coverage_of_a_well_specified_curve():
    """40 seeded pools from a logistic truth: the 90% AP interval covers within MC error."""
    hits = 0
    trials = 40
    for t in range(trials):
        q, y, lab = _pool(n=600, n_vet=30, seed=100 + t, a=0.3, b=1.4)
        post = Calibration("logistic").fit(EvalData(q, lab), random_seed=t, draws=500, warn=False)
        lo, hi = be.hdi(post.metric("average_precision").values.ravel(), 0.9)
        truth = M.average_precision(y[None].astype(np.int8), q)[0]
        hits += lo <= truth <= hi
    # binomial sd at 0.9 over 40 trials is 0.047; 3 sd below nominal
    assert hits / trials >= 0.9 - 3 * np.sqrt(0.09 / trials), hits


# --------------------------------------------------------------- stacking


def test_stacking_weights_maximize_the_log_score():
    rng = np.random.default_rng(0)
    lpd = np.column_stack([rng.normal(-0.5, 0.3, 60), rng.normal(-0.6, 0.5, 60), rng.normal(-0.9, 0.2, 60)])
    w = _stacking_weights(lpd)
    # the same objective maximized by a generic constrained optimizer on the simplex
    from scipy.optimize import minimize

    e = np.exp(lpd)
    res = minimize(lambda v: -np.sum(np.log(e @ v)), np.full(3, 1 / 3), method="SLSQP",
                   bounds=[(0, 1)] * 3, constraints={"type": "eq", "fun": lambda v: v.sum() - 1})
    np.testing.assert_allclose(w, res.x, atol=5e-3)
    dom = np.column_stack([np.full(50, -0.1), np.full(50, -2.0)])
    np.testing.assert_allclose(_stacking_weights(dom), [1.0, 0.0])


def _bootstrap_weights(lpd, seed):
    return bootstrap_stacking_weights(lpd, seed, replicates=STACKING_REPLICATES, spawn_key=22)


@pytest.mark.parametrize("k, n", [(2, 4000), (2, 6000), (3, 4000)])  # 2 x 6,000: the label-chunked path
def test_bootstrap_stacking_weights_agree_with_plain_stacking_given_many_labels(k, n):
    # thousands of labels: every Bayesian-bootstrap replicate's optimum is near the labels' own,
    # so the mean of the replicates' optima is the plain (BFGS) optimum; an interior optimum
    rng = np.random.default_rng(1)
    good = rng.integers(0, k, n)  # each candidate predicts its share of the labels well
    lpd = np.where(good[:, None] == np.arange(k), np.log(0.8), np.log(0.3)) + rng.normal(0, 0.05, (n, k))
    plain = _stacking_weights(lpd)
    assert 0.05 < plain.min() and plain.max() < 0.95
    boot = _bootstrap_weights(lpd, 3)
    np.testing.assert_allclose(boot, plain, atol=0.02)  # two: the grid's step is 1/400; three: EM
    np.testing.assert_array_equal(boot, _bootstrap_weights(lpd, 3))  # seeded
    # a candidate every label prefers by far gets all the weight either way
    dom = np.column_stack([np.full(50, -0.1) + rng.normal(0, 0.01, 50), np.full(50, -2.0)])
    np.testing.assert_allclose(_bootstrap_weights(dom, 0), [1.0, 0.0])


def test_bootstrap_stacking_keeps_weight_on_a_candidate_few_labels_cannot_rule_out():
    # two nearly identical candidates (as nested curves are), 25 labels: plain stacking puts all
    # the weight on whichever this sample favours; the bootstrap mean keeps both in
    rng = np.random.default_rng(4)
    spread = []
    for rep in range(20):
        base = np.log(rng.uniform(0.2, 0.9, 25))
        lpd = np.column_stack([base, base + rng.normal(0, 0.1, 25)])
        spread.append((_stacking_weights(lpd).min(), _bootstrap_weights(lpd, rep).min()))
    plain_min, boot_min = np.array(spread).T
    assert np.median(plain_min) < 0.05  # plain: one candidate takes it all in most samples
    assert np.median(boot_min) > 0.15 and np.sum(boot_min > plain_min) >= 15


def test_fit_rejects_an_unknown_stacking():
    from bayeval.models.stacking import stack_weights

    data = EvalData(np.linspace(0.05, 0.95, 40), np.r_[np.zeros(10), np.ones(10), np.full(20, np.nan)])
    with pytest.raises(ValueError, match="stacking"):
        be.fit(data, stacking="bma", random_seed=0)
    with pytest.raises(ValueError, match="stacking"):
        stack_weights(np.zeros((5, 2)), "bma", 0)
    with pytest.raises(ValueError, match="2-D array"):
        stack_weights(np.zeros(5), "plain", 0)


def test_a_label_predicted_with_near_certainty_gets_a_finite_leave_one_out_density(monkeypatch):
    """A score mixture gives a far-out vetted item log-likelihoods of -1e-20 to -1e-40 in every
    draw; PSIS returned NaN for them, and the NaN weight crashed ``bayeval.fit`` (numpy's
    "repeats may not contain negative values")."""
    rng = np.random.default_rng(3)
    n_draws, n = 400, 30
    q = np.linspace(0.1, 0.9, n)
    lab = (rng.random(n) < q).astype(float)
    lab[0] = 0.0
    p = (np.tile(q, (n_draws, 1)) + rng.normal(0, 0.02, (n_draws, n))).clip(1e-6, 1 - 1e-6)
    p[:, 0] = np.exp(-rng.uniform(40, 100, n_draws))  # a vetted negative at P(positive) = e^-40 ... e^-100
    post = Posterior.from_probabilities(EvalData(q, lab), p, check=False)
    loo = label_loo(post)
    assert np.all(np.isfinite(loo.loo_i.values)) and np.isfinite(float(loo.elpd_loo))
    assert abs(float(loo.loo_i.values[0])) < 1e-12 and float(loo.pareto_k.values[0]) == 0.0
    # and if a candidate's LOO is not finite anyway, the fit leaves it out and says why
    from bayeval.models import stacking as S

    real = S.label_loo

    def broken_for_the_monotone_curve(post):
        loo = real(post)
        if post.model_spec.curve == "monotone":
            loo.loo_i.values[0] = np.nan
        return loo

    monkeypatch.setattr(S, "label_loo", broken_for_the_monotone_curve)
    q2, _, lab2 = _pool(n=600, n_vet=40, seed=5)
    fit = be.fit(EvalData(q2, lab2), random_seed=0, draws=200)
    assert list(fit.candidates) == ["calibration/logistic"]
    assert fit.comparison.loc["calibration/monotone", "weight"] == 0.0
    assert "not finite" in fit.comparison.attrs["errors"]["calibration/monotone"]
    with pytest.raises(ValueError, match="NaN or infinite"):
        S.stack_weights(np.array([[-0.1, np.nan], [-0.2, -0.3]]), "plain", 0)


def test_allocate_counts():
    assert _allocate(np.array([0.5, 0.25, 0.25]), 10).tolist() == [5, 3, 2]
    assert _allocate(np.array([1.0, 0.0]), 7).tolist() == [7, 0]
    assert _allocate(np.array([0.3, 0.7]), 1000).sum() == 1000


def test_default_fit_stacks_candidates():
    q, y, lab = _pool(n=1500, n_vet=60, seed=6)
    post = be.fit(EvalData(q, lab), random_seed=0)
    assert isinstance(post, StackedPosterior)
    assert set(post.candidates) == {"calibration/logistic", "calibration/monotone"}
    assert abs(post.weights.sum() - 1) < 1e-9
    which = post.idata.posterior["candidate"].values.ravel()
    counts = np.bincount(which, minlength=2)
    w = post.comparison.loc[post._names, "weight"].to_numpy()
    np.testing.assert_array_equal(counts, _allocate(w, which.size))
    # every draw is its candidate's draw: item probabilities agree with the candidates', weighted
    ip = post.item_probability().values
    mix = sum(wt * post.candidates[n].item_probability().values for n, wt in zip(post._names, w, strict=True))
    assert np.max(np.abs(ip - mix)) < 0.06
    diag = post.check(warn=False)
    assert {"max_rhat", "min_ess_bulk", "divergences", "ok", "messages"} <= set(diag)
    assert diag["ok"] and diag["min_ess_bulk"] > 500  # importance sampling: ESS of the weights
    table = post.diagnostics()
    assert all(i.split(": ")[0] in post.candidates for i in table.index)
    again = be.fit(EvalData(q, lab), random_seed=0)
    np.testing.assert_array_equal(post.metric("average_precision").values, again.metric("average_precision").values)
    margins = be.fit(EvalData(special.logit(q) * 3 + 1, lab), random_seed=0)
    assert margins.candidates["calibration/logistic"].info["scale"] == "standardize"
    three = be.fit(EvalData(q, lab), candidates=[Calibration("beta"), Calibration(), Calibration("monotone")],
                   random_seed=0, draws=300)
    assert list(three.comparison.index) != [] and set(three.candidates) == {
        "calibration/beta", "calibration/logistic", "calibration/monotone"}


def test_fit_boundary_errors():
    q, _, lab = _pool(seed=7)
    with pytest.raises(TypeError, match="EvalData"):
        be.fit(q)
    with pytest.raises(ValueError, match="empty"):
        be.fit(EvalData(q, lab), candidates=[])
    with pytest.raises(TypeError, match="fit"):
        be.fit(EvalData(q, lab), candidates=["logistic"])
    with pytest.warns(UserWarning, match="no vetted labels"):
        be.fit(EvalData(q), random_seed=0, draws=200)
    with pytest.raises(TypeError, match="Posterior"):
        label_loo(q)
    # one draw in all: PSIS-LOO failed with an IndexError inside ArviZ
    with pytest.raises(ValueError, match="at least 2 posterior draws in all"):
        be.fit(EvalData(q, lab), draws=1, chains=1, random_seed=0)


# --------------------------------------------------------------- threshold rule


def test_recalibrate_prob_rule():
    rng = np.random.default_rng(0)
    s = np.sort(rng.uniform(0, 1, 400))
    post = Posterior.from_probabilities(EvalData(s), s**0.5, draws=400, random_seed=0)
    rec = recalibrate(post, min_precision=0.85, prob=0.9)
    assert rec.met
    table = rec.table()
    feasible = table[table["p_constraint"] >= 0.9]
    assert rec.threshold == feasible["recall_mean"].idxmax()
    assert rec.threshold == feasible.index.min()  # recall falls with the threshold
    best = recalibrate(post, min_precision=0.85)
    assert best.probability_at_threshold >= rec.probability_at_threshold
    none = recalibrate(post, min_precision=0.95, min_recall=0.95, prob=0.95)
    assert not none.met and "no threshold meets" in repr(none)
    # the best available has the highest probability (here 0 everywhere); among equals the closest to
    # the constraint, no longer the lowest threshold (issue 31: that flagged every item)
    assert none.probability_at_threshold == float(none.probability.max())
    c = none.curve  # the posterior mean of the worse shortfall, per draw
    short = np.minimum(c.sel(curve="precision") - 0.95, c.sel(curve="recall") - 0.95).mean(("chain", "draw"))
    short = short.to_series()[none.eligible.values]
    assert none.threshold == short.idxmax() and none.flagged < s.size
    rec_r = recalibrate(post, min_recall=0.5, prob=0.9)
    feas = rec_r.table()[rec_r.table()["p_constraint"] >= 0.9]
    assert rec_r.threshold == feas["precision_mean"].idxmax()
    with pytest.raises(ValueError, match="prob"):
        recalibrate(post, min_precision=0.8, prob=1.0)


# ------------------------------------------------------------------ the study


def test_quick_real_scores_study():
    """The fast version of benchmarks/real_scores.py: two real pools, 2 label sets, 2 budgets."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import real_scores

    df = real_scores.main(["--quick", "--sets", "2"])  # each set ~3 CPU s; 0.90 covered of 40 (0.92 of 60 at 3 sets)
    iv = df[(df["model"] == "default") & (df["metric"] != "threshold_rule")]
    assert len(iv) == 2 * 2 * 2 * 5
    # 40 intervals, correlated within a label set: require well above chance, not the nominal 0.9
    # (at 0.9 a binomial 40 has sd 0.05, so 0.7 is 4 sd below; intervals that cover half the time fail)
    assert iv["covered"].mean() >= 0.7
    tr = df[(df["model"] == "default") & (df["metric"] == "threshold_rule")]
    assert tr["met"].all() and tr["covered"].mean() >= 0.8


def test_categories_partially_pooled():
    rng = np.random.default_rng(0)
    n = 3000
    cats = rng.choice(["a", "b", "c"], n)
    q = rng.beta(1, 3, n)
    shift = {"a": -1.0, "b": 0.0, "c": 1.0}
    p = special.expit(special.logit(q) + np.vectorize(shift.get)(cats))
    y = (rng.random(n) < p).astype(float)
    lab = np.full(n, np.nan)
    idx = rng.choice(n, 300, replace=False)
    lab[idx] = y[idx]
    data = EvalData(q, lab, categories=cats)
    small = dict(draws=300, tune=300, chains=2)  # NUTS on a partially pooled curve; 600 draws do here
    post = Calibration("logistic").fit(data, random_seed=0, **small)
    assert {"tau_a", "z_a", "z_b"} <= set(post.idata.posterior.data_vars)
    # each category's curve at q = 0.5 recovers its shift's ordering
    mid = [float(post.curve_draws([0.5], category=c).mean()) for c in ("a", "b", "c")]
    assert mid[0] < mid[1] < mid[2]
    prec = post.metric("precision", threshold=0.3, category="each")
    assert prec.dims == ("chain", "draw", "category")
    truth = [y[(cats == c) & (q >= 0.3)].mean() for c in prec["category"].values]
    lo_hi = be.hdi(prec.values.reshape(-1, 3), 0.99, axis=0)
    assert np.all((lo_hi[:, 0] <= truth) & (truth <= lo_hi[:, 1]))
    shared = Calibration("logistic", categories=False).fit(data, random_seed=0, **small)
    assert "tau_a" not in shared.idata.posterior
    with pytest.raises(ValueError, match="categories"):
        Calibration(categories="yes")


def test_logodds_transform_uses_the_calibrated_prior():
    """Scores that are log-odds: z = s with the 'calibrated' prior; on a rare pool it matters."""
    rng = np.random.default_rng(0)
    n = 20000
    s = rng.normal(-9.0, 2.0, n)  # calibrated log-odds: about 0.1% positives
    y = (rng.random(n) < special.expit(s)).astype(float)
    lab = np.full(n, np.nan)
    idx = rng.choice(n, 60, replace=False)
    lab[idx] = y[idx]
    data = EvalData(s, lab)
    with pytest.warns(UserWarning, match="no vetted positives"):  # 60 labels at 0.1%: none positive
        post = be.models.Stack(transform="logodds").fit(data, random_seed=0, draws=500)
    assert set(post.candidates) == {"calibration/logistic/logodds", "calibration/monotone/logodds"}
    cand = post.candidates["calibration/logistic/logodds"]
    assert cand.info["scale"] == "logodds"
    prev = post.metric(lambda z, s: z.mean(axis=-1)).values.ravel()
    lo, hi = be.hdi(prev, 0.9)
    assert lo <= y.mean() <= hi
    with pytest.raises(ValueError, match="not both"):
        be.models.Stack([Calibration()], transform="logodds")
    with pytest.raises(ValueError, match="transform"):
        Calibration(transform="probit")



@pytest.mark.slow
def test_a_wide_intercept_prior_follows_an_under_confident_classifier():
    """An under-confident classifier (true intercept +3 on the logit scale) pulls a wide
    intercept prior further from 0 than the default N(0, 1) does."""
    q, _, lab = _pool(n=1500, n_vet=40, seed=2, a=3.0, b=1.0, prior=(1.0, 6.0))
    d = EvalData(q, lab)
    narrow = Calibration("logistic").fit(d, random_seed=0, draws=300)
    wide = Calibration("logistic", intercept_sd=5.0).fit(d, random_seed=0, draws=300)
    a_narrow, a_wide = (float(p.idata.posterior["a"].mean()) for p in (narrow, wide))
    assert a_wide > a_narrow + 0.3, (a_narrow, a_wide)


def test_intercept_and_slope_prior_scales():
    """``intercept_sd`` / ``slope_sd`` set the priors' scales (None: the scale's own
    default); they enter the built model, the structure key, the repr and get_params."""
    import pymc as pm

    d = EvalData(np.linspace(0.01, 0.99, 50), np.r_[1, 0, np.full(48, np.nan)])
    m = Calibration("monotone", intercept_sd=2.5, slope_sd=0.5)
    assert m._prior({"scale": "logit"})["a"] == (0.0, 2.5) and m._prior({"scale": "standardize"})["log_b"][1] == 0.5
    assert Calibration()._prior({"scale": "standardize"})["a"] == (0.0, 1.5)
    assert Calibration()._prior({"scale": "logit"})["a"] == (0.0, 1.0)
    a = pm.draw(Calibration(intercept_sd=5.0).build(d)["a"], draws=4000, random_seed=0)
    assert abs(a.std() - 5.0) < 0.3
    assert Calibration()._structure(d) != Calibration(intercept_sd=5.0)._structure(d)
    assert "intercept_sd=2.5, slope_sd=0.5" in repr(m) and "_sd" not in repr(Calibration())
    assert type(m)(**m.get_params()).get_params() == m.get_params()
    with pytest.raises(ValueError, match="intercept_sd"):
        Calibration(intercept_sd=0.0)
    with pytest.raises(TypeError, match="slope_sd"):
        Calibration(slope_sd="wide")


def test_asymptotes_give_a_curve_with_flat_ends():
    """``asymptotes=True``: the probability lies between the floor ``lo`` and the ceiling
    ``lo + (1 - lo) u_hi`` whatever the log-odds; the option names the candidate and is
    refused with the Beta curve."""
    import pymc as pm

    d = EvalData(np.linspace(0.01, 0.99, 50), np.r_[1, 0, np.full(48, np.nan)])
    m = Calibration("monotone", asymptotes=True)
    model = m.build(d)
    assert {"lo", "u_hi"} <= {v.name for v in model.free_RVs}
    lo = pm.draw(model["lo"], draws=4000, random_seed=0)
    assert abs(lo.mean() - 0.25) < 0.02  # Beta(1, 3)
    assert m.name == "calibration/monotone-flat" and "asymptotes=True" in repr(m)
    assert "asymptotes" not in repr(Calibration()) and Calibration().name == "calibration/logistic"
    assert m._structure(d) != Calibration("monotone")._structure(d)
    with pytest.raises(ValueError, match="beta"):
        Calibration("beta", asymptotes=True)
    with pytest.raises(TypeError, match="asymptotes"):
        Calibration(asymptotes="yes")


@pytest.mark.slow
def test_asymptotes_follow_a_flat_top():
    """Scores whose top is over-confident (true P(y | s) levels off at 0.6): the flat-ended
    curve's probability at the top is near 0.6, the plain monotone curve's above it."""
    rng = np.random.default_rng(0)
    n = 4000
    q = rng.beta(1, 2, n)
    p = 0.6 * special.expit(4 * special.logit(q.clip(1e-4, 1 - 1e-4)) + 1)
    y = (rng.random(n) < p).astype(float)
    lab = np.full(n, np.nan)
    idx = rng.choice(n, 200, replace=False)
    lab[idx] = y[idx]
    d = EvalData(q, lab)
    flat = Calibration("monotone", asymptotes=True).fit(d, random_seed=0, draws=500)
    plain = Calibration("monotone").fit(d, random_seed=0, draws=500)
    top = [float(post.curve_draws([0.99]).mean()) for post in (flat, plain)]
    assert abs(top[0] - 0.6) < 0.1 and top[1] > top[0], top


def _saturated_pool(seed=0):
    """Naive-Bayes-like probabilities: 150 exact 1.0s (half positive), 150 at 1 - 1e-8 and
    1 - 1e-9 (none positive), 300 spread lower scores (5% positive); 40 of each group vetted."""
    rng = np.random.default_rng(seed)
    rest = special.expit(rng.normal(-2.0, 3.0, 300))
    s = np.r_[np.ones(150), np.where(np.arange(150) % 2, 1 - 1e-8, 1 - 1e-9), rest]
    y = np.r_[np.arange(150) % 2, np.zeros(150), rng.random(300) < 0.05].astype(float)
    lab = np.full(s.size, np.nan)
    for lo in (0, 150, 300):
        lab[lo:lo + 40] = y[lo:lo + 40]
    return s, y, lab


def test_exact_ones_keep_a_feature_of_their_own_and_a_fit_reads_them_apart():
    """The curves' logit feature clipped probabilities at 1e-7 and moved exact 1s to the largest
    other score, so 1.0 and 1 - 1e-8 shared one value and one fitted probability (a naive-Bayes
    pool's 1.0s were 35% positive, its 1 - 1e-8s 1%); now the 1.0s sit beyond every other
    score (and the exact 0s below), the feature still monotone in the score."""
    s, _, lab = _saturated_pool()
    data = EvalData(np.r_[s, 0.0, 1e-12], np.r_[lab, np.nan, np.nan])
    z = Calibration("logistic").features(data)[0][:, 0]
    order = np.argsort(data.scores, kind="stable")
    assert np.all(np.diff(z[order]) >= 0)  # monotone in the score
    assert z[0] > z[150:300].max() > z[300:600].max() and z[-2] < z[-1] <= z[300:600].min()
    old = Calibration("logistic", saturated="merged").features(data)[0][:, 0]
    assert old[0] == old[150] and old[-2] == old[-1]  # the former map: one value for both
    for curve in ("logistic", "monotone"):
        p = Calibration(curve).fit(EvalData(s, lab), random_seed=0, draws=300).item_probability().values
        one, near = p[40:150].mean(), p[190:300].mean()  # the unvetted 1.0s and 1 - 1e-8s
        assert one > near + 0.1, (curve, one, near)  # truth 0.5 and 0; the former map: equal
        merged = Calibration(curve, saturated="merged").fit(EvalData(s, lab), random_seed=0, draws=300)
        p = merged.item_probability().values
        assert abs(p[40:150].mean() - p[190:300].mean()) < 1e-9


def test_saturated_is_checked_and_shown():
    with pytest.raises(ValueError, match="saturated"):
        Calibration(saturated="clip")
    assert "saturated='merged'" in repr(Calibration(saturated="merged"))
    assert Calibration().get_params()["saturated"] == "apart"


def test_default_fit_on_hard_predictions_says_why_once():
    """Hard 0/1 predictions: every candidate fails for the same reason, said once (it was
    repeated once per candidate) with what to do instead."""
    s = np.r_[np.zeros(50), np.ones(50)]
    y = np.full(100, np.nan)
    y[:10], y[50:60] = 0, 1
    with pytest.raises(ValueError) as err:
        be.fit(EvalData(s, y), random_seed=0)
    msg = str(err.value)
    assert msg.startswith("No candidate could be fitted (calibration/logistic, calibration/monotone): ")
    assert msg.count("Hard 0/1 predictions") == 1 and "vetted_only" in msg


def test_calibration_curve_checks_its_truth_before_drawing():
    """A truth of the wrong length failed with numpy's boolean-index IndexError inside the plot;
    bins=0 or an all-NaN truth drew nothing, silently."""
    import matplotlib

    matplotlib.use("Agg")
    from bayeval.plots import calibration_curve

    q, y, lab = _pool(n=200, n_vet=30, seed=9)
    post = be.fit(EvalData(q, lab), random_seed=0, draws=100)
    with pytest.raises(ValueError, match="`truth` has 10 labels but the posterior's data has 200 items"):
        calibration_curve(post, truth=np.ones(10))
    with pytest.raises(ValueError, match="truth"):
        calibration_curve(post, truth=np.full(200, np.nan))
    with pytest.raises(ValueError, match="bins"):
        calibration_curve(post, truth=y, bins=0)
    ax = calibration_curve(post, truth=y, bins=5)
    assert any(line.get_label() == "true share (bins by score and by positives)" for line in ax.get_lines())
    # pr_curve: its truth said "`scores` has 200 item(s) but `labels` has 10" (neither is an argument
    # of pr_curve) or advised building a Posterior for a NaN, after an empty figure was made
    import matplotlib.pyplot as plt

    from bayeval.plots import pr_curve

    before = len(plt.get_fignums())
    with pytest.raises(ValueError, match="`truth` has 10 labels but the posterior's data has 200 items"):
        pr_curve(post, truth=np.ones(10))
    with pytest.raises(ValueError, match="`truth` must be fully known"):
        pr_curve(post, truth=np.full(200, np.nan))
    assert len(plt.get_fignums()) == before  # nothing drawn
    assert any(line.get_label() == "true curve" for line in pr_curve(post, truth=y).get_lines())
    plt.close("all")


def test_default_fit_gives_each_category_its_curve_and_the_figures_say_pooled():
    """docs/models.md documents post.curve_draws(grid, category=c) for the default fit, which
    raised TypeError; calibration_curve and pr_curve drew the shared/pooled curve on category
    data without saying so."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bayeval.plots import calibration_curve, pr_curve

    rng = np.random.default_rng(0)
    n = 600
    q = rng.beta(1, 3, n)
    cats = np.where(rng.random(n) < 0.5, "a", "b")
    y = (rng.random(n) < special.expit(special.logit(q) + np.where(cats == "a", 1.0, -1.0))).astype(float)
    lab = np.full(n, np.nan)
    lab[:150] = y[:150]
    post = be.fit(EvalData(q, lab, categories=cats), random_seed=0, draws=200, warn=False, progressbar=False)
    grid = np.linspace(0.05, 0.95, 7)
    cb = post.curve_draws(grid, category="b")
    # the stack's draws of category b are its candidates' category-b draws, mixed as before
    which = post.idata.posterior["candidate"].values.ravel()
    src = post.idata.posterior["source_draw"].values.ravel()
    for k, name in enumerate(post._names):
        if np.any(which == k):
            own = post.candidates[name].curve_draws(grid, category="b")[src[which == k]]
            np.testing.assert_array_equal(cb[which == k], own)
    assert cb.mean() < post.curve_draws(grid).mean() < post.curve_draws(grid, category="a").mean()
    np.testing.assert_allclose(post.curve(grid, category="b")["mean"].values, cb.mean(axis=0))
    with pytest.raises(ValueError, match="Unknown category 'z'"):
        post.curve_draws(grid, category="z")
    ax = calibration_curve(post, truth=y)
    assert "pooled" in ax.get_title()
    ax = calibration_curve(post, truth=y, category="b")
    assert ax.get_title() == "category b"
    ticks = next(line for line in ax.get_lines() if line.get_label().startswith("vetted labels"))
    assert ticks.get_label() == f"vetted labels ({int(np.sum(~np.isnan(lab) & (cats == 'b')))})"
    assert "pooled" in pr_curve(post, truth=y).get_title()
    ax = pr_curve(post, truth=y, category="b")
    true = next(line for line in ax.get_lines() if line.get_label() == "true curve")
    np.testing.assert_allclose(true.get_ydata(), M.precision_at_recall(y[cats == "b"], q[cats == "b"],
                                                                       recall=np.linspace(0, 1, 101)))
    with pytest.raises(ValueError, match="the data's categories are"):
        pr_curve(post, category="z")
    plt.close("all")


def test_calibration_figure_shows_the_true_share_where_rare_positives_are():
    """Quantile bins put all ten dots at the bottom on rare positives (models/rare_fraud_gbm's
    report): none where the curve rises. Bins split at the positives' scores reach it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bayeval.plots import calibration_curve

    q, y, lab = _pool(n=4000, n_vet=200, seed=3, a=-3.0, b=2.0, prior=(1.0, 6.0))
    assert y.mean() < 0.02
    post = be.fit(EvalData(q, lab), random_seed=0, draws=200, warn=False, progressbar=False)
    ax = calibration_curve(post, truth=y)
    dots = next(line for line in ax.get_lines() if line.get_label().startswith("true share"))
    share, mid = np.asarray(dots.get_ydata()), np.asarray(dots.get_xdata())
    # quantile bins gave one dot above the 90th percentile of the scores (the top bin's mean);
    # the positives' bins give several, up to the top 1%, where the share is no longer near 0
    assert np.sum(mid > np.quantile(q, 0.9)) >= 4 and mid.max() > np.quantile(q, 0.99)
    assert share[np.argmax(mid)] > 4 * y.mean()
    assert np.sum(mid < np.quantile(q, 0.9)) >= 5  # the bulk of the pool still binned
    assert np.all(np.diff(mid) > 0) and mid.size <= 20
    plt.close("all")


def test_importance_sampling_reports_the_ess_its_kept_draws_carry():
    """2,000 weighted proposals with an ESS of about 1,100 are resampled to 2 x 200 draws: the
    check, the per-parameter table and the report say at most 400, the draws kept."""
    from bayeval.core._diagnostics import check_convergence

    q, _, lab = _pool(n=300, n_vet=40, seed=2)
    post = Calibration().fit(EvalData(q, lab), draws=200, tune=200, chains=2, random_seed=0, progressbar=False)
    assert post.sampling.sampler == "importance" and post.sampling.ess > 400  # the proposals' ESS, kept as it was
    diag = post.check(warn=False)
    assert diag["ess"] == diag["min_ess_bulk"] == 400.0
    assert (post.diagnostics()["ess_bulk"] <= 400).all() and (post.diagnostics()["ess_tail"] <= 400).all()
    # fewer effective proposals than draws: the weights' ESS limits, and the check fails on it
    info = _sampling.SamplingInfo("importance", pareto_k=0.3, ess=150.0, n_proposals=2000)
    low = check_convergence(post.idata, info, [], warn=False)
    assert low["ess"] == 150.0 and not low["ok"] and "ESS of the kept draws 150 (< 200)" in low["messages"][0]


def test_a_stack_reports_the_diagnostics_of_the_candidates_that_can_warn():
    """A candidate of weight 0.03 whose chains disagree (r_hat 1.02) neither warns nor sets the
    stack's max r_hat; the per-parameter table shows it, with its weight and r_hat unrounded."""
    import pandas as pd

    rng = np.random.default_rng(0)
    q = rng.uniform(0.05, 0.95, 200)
    lab = np.where(np.arange(200) < 60, 1.0 * (rng.random(200) < q), np.nan)
    data = EvalData(q, lab)
    shift = {"good": [[0.0], [0.0]], "shaky": [[0.0], [0.25]]}  # the second's chains disagree

    class Cand(Posterior):
        def check(self, *, warn=True):
            from bayeval.core._diagnostics import check_convergence

            return check_convergence(self.idata, _sampling.SamplingInfo("pymc"), ["a"], warn=False)

    cands = {}
    for name in ("good", "shaky"):
        a = rng.normal(size=(2, 1000)) + np.asarray(shift[name])
        cands[name] = Cand(data, az.from_dict(posterior={"a": a}), lambda p: np.broadcast_to(q, (len(p["a"]), 200)),
                           random_seed=0, model=name)
    assert cands["shaky"].check(warn=False)["max_rhat"] > 1.01 >= cands["good"].check(warn=False)["max_rhat"]
    comp = pd.DataFrame({"weight": [0.97, 0.03], "flagged": [False, False], "z": [0.0, 0.0]},
                        index=pd.Index(["good", "shaky"], name="candidate"))
    post = StackedPosterior(data, cands, comp, chains=2, draws=200, random_seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        diag = post.check()
    assert diag["ok"] and diag["max_rhat"] == cands["good"].check(warn=False)["max_rhat"] <= 1.01
    assert diag["unchecked"] == {"shaky": 0.03}
    table = post.diagnostics()
    shaky = table.loc["shaky: a"]
    assert shaky["weight"] == 0.03 and shaky["r_hat"] > 1.01 and shaky["r_hat"] != round(shaky["r_hat"], 2)
    assert float(shaky["ess_bulk"]).is_integer()
    # with the weights the other way round, the shaky candidate is judged, warns and sets the maximum
    comp["weight"] = [0.03, 0.97]
    post = StackedPosterior(data, cands, comp, chains=2, draws=200, random_seed=0)
    diag = post.check(warn=False)
    assert not diag["ok"] and diag["max_rhat"] == shaky["r_hat"] and "shaky: r_hat up to" in diag["messages"][0]


def test_penalty_auto_resolves_by_separation_and_refuses_what_it_cannot_do():
    s = np.array([0.1, 0.2, 0.3, 0.7, 0.8, 0.9, 0.5, 0.6])
    separable = EvalData(s, [0, 0, 0, 1, 1, 1, np.nan, np.nan])
    mixed = EvalData(s, [0, 1, 0, 1, 0, 1, np.nan, np.nan])
    for curve in ("logistic", "monotone"):
        assert Calibration(curve, penalty="auto").penalty_for(separable) == "jeffreys"
        assert Calibration(curve, penalty="auto").penalty_for(mixed) == "none"
        assert Calibration(curve, penalty="jeffreys").penalty_for(mixed) == "jeffreys"
        assert Calibration(curve).penalty_for(separable) == "none"
    assert "penalty='auto'" in repr(Calibration(penalty="auto"))
    assert Calibration(**Calibration(penalty="auto").get_params()).penalty == "auto"
    with pytest.raises(ValueError, match="not 'beta'"):
        Calibration("beta", penalty="auto")
    with pytest.raises(ValueError, match="penalty"):
        Calibration(penalty="firth")
    grouped = EvalData(s, [0, 0, 0, 1, 1, 1, np.nan, np.nan], categories=list("aabbaabb"))
    assert Calibration(penalty="auto").penalty_for(grouped) == "none"
    with pytest.raises(ValueError, match="categories"):
        Calibration(penalty="jeffreys").penalty_for(grouped)


def test_penalty_keeps_the_curve_as_steep_as_separable_labels_support():
    """Vetted labels that a threshold separates leave the slope to the prior: without the
    penalty the posterior steepens and reads the items above the boundary as all positive;
    with it the slope and the precision above the boundary stay lower."""
    rng = np.random.default_rng(3)
    p = rng.beta(2, 5, 1500)
    y = np.full(p.size, np.nan)
    idx = rng.choice(p.size, 30, replace=False)
    y[idx] = (p[idx] > np.quantile(p[idx], 0.8)).astype(float)  # separable: the top fifth positive
    data = EvalData(p, y)
    plain = Calibration("logistic").fit(data, random_seed=0, draws=400)
    pen = Calibration("logistic", penalty="auto").fit(data, random_seed=0, draws=400)
    b_plain = float(plain.idata.posterior["b"].mean())
    b_pen = float(pen.idata.posterior["b"].mean())
    assert b_pen < 0.75 * b_plain, (b_pen, b_plain)
    t = float(np.quantile(p, 0.9))
    prec = [float(q.metric("precision", threshold=t).mean()) for q in (plain, pen)]
    assert prec[1] < prec[0] - 0.02, prec


# ------------------------------------------------- the probability pass: a matrix product


def _broadcast_probabilities(post, feats, codes=None):
    """``P(y = 1)`` per draw and row by the formula the probability pass used before it became
    a matrix product: the broadcast product of the features and the segment slopes, summed."""
    flat = {k: v.values.reshape((-1,) + v.shape[2:]) for k, v in post.idata.posterior.data_vars.items()}
    a, b, f = flat["a"][:, None], flat["b"][:, None], feats[None]
    curve = post.calibration.curve
    if curve == "logistic":
        eta = a + b * f[..., 0]
    elif curve == "beta":
        eta = flat["c"][:, None] + a * f[..., 0] - b * f[..., 1]
    else:
        eta = a + b * (f * np.exp(flat["delta"])[:, None, :]).sum(axis=-1)
    if codes is not None and "z_a" in flat:
        eta = flat["tau_a"][:, None] * flat["z_a"][:, codes] + np.exp(flat["tau_b"][:, None] * flat["z_b"][:, codes]) * eta
    p = special.expit(eta)
    if "lo" in flat:
        lo = flat["lo"][:, None]
        p = lo + (1.0 - lo) * flat["u_hi"][:, None] * p
    return p


def test_weighted_columns_equals_the_broadcast_sum():
    from bayeval.models.calibration import weighted_columns

    rng = np.random.default_rng(0)
    for m, n, k in [(1, 1, 1), (7, 300, 1), (5, 1000, 4), (149, 2000, 4), (3, 50, 9)]:
        f = np.abs(rng.normal(size=(1, n, k)))  # the monotone features of one row share a sign
        w = np.exp(rng.normal(size=(m, 1, k)))
        out = weighted_columns(f, w)
        assert out.shape == (m, n)
        np.testing.assert_allclose(out, (f * w).sum(axis=-1), rtol=1e-12)
        np.testing.assert_allclose(weighted_columns(-f, w), (-f * w).sum(axis=-1), rtol=1e-12)
        np.testing.assert_allclose(weighted_columns(f[0], w[0, 0]), (f[0] * w[0, 0]).sum(axis=-1), rtol=1e-12)
        g = rng.normal(size=(m, n, k))  # other shapes: the broadcast product itself
        np.testing.assert_array_equal(weighted_columns(g, w), (g * w).sum(axis=-1))
        mixed = weighted_columns(g[:1], w)  # mixed signs: equal up to rounding of the sum
        np.testing.assert_allclose(mixed, (g[:1] * w).sum(axis=-1), rtol=0, atol=1e-12 * np.abs(g[:1] * w).sum(-1).max())


@pytest.mark.parametrize("curve,kw", [("monotone", {}), ("logistic", {}), ("beta", {}),
                                      ("monotone", {"asymptotes": True})])
def test_curve_probabilities_equal_the_broadcast_formula(curve, kw):
    q, _, lab = _pool(n=1500, n_vet=60, seed=2)
    post = Calibration(curve, **kw).fit(EvalData(q, lab), random_seed=0, draws=150, warn=False, progressbar=False)
    ref = _broadcast_probabilities(post, post.features)
    np.testing.assert_allclose(post.curve_draws(q), ref, rtol=1e-12)
    free = ~post.data.vetted
    np.testing.assert_allclose(post.item_probability().values[free], ref.mean(axis=0)[free], rtol=1e-12)


def test_pooled_curve_probabilities_equal_the_broadcast_formula():
    rng = np.random.default_rng(4)
    n = 600
    q = rng.beta(1, 3, n)
    y = (rng.random(n) < q).astype(float)
    lab = np.full(n, np.nan)
    lab[:150] = y[:150]
    data = EvalData(q, lab, categories=rng.choice(["a", "b", "c"], n))
    post = Calibration("monotone", asymptotes=True).fit(data, random_seed=0, draws=100, warn=False,
                                                         progressbar=False)
    assert post.codes is not None and "z_a" in post.idata.posterior
    ref = _broadcast_probabilities(post, post.features, post.codes)
    free = ~data.vetted
    np.testing.assert_allclose(post.item_probability().values[free], ref.mean(axis=0)[free], rtol=1e-12)
    np.testing.assert_allclose(post.curve_draws(q), _broadcast_probabilities(post, post.features), rtol=1e-12)


def test_the_probability_pass_holds_no_draws_x_items_x_segments_array():
    """The monotone curve's pass over the items holds about one array of draws x items (it
    built one of draws x items x segments, 4x as large, and three more of draws x items)."""
    import tracemalloc

    q, _, lab = _pool(n=5000, n_vet=60, seed=3)
    post = Calibration("monotone").fit(EvalData(q, lab), random_seed=0, draws=200, warn=False, progressbar=False)
    assert post.features.shape[1] == 4
    one = post.n_draws * post.data.n_items * 8  # bytes of one chunk's draws x items (one chain per chunk)
    tracemalloc.start()
    try:
        post.item_probability()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1.6 * one, (peak, one)
