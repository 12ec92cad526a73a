"""SPE score mixture: model structure, score maps, numpy/PyMC agreement, fits on
simulated data (recovery, coverage, binned vs exact), misfit detection, recalibration."""

import matplotlib
import numpy as np
import pymc as pm
import pytest

from bayeval import EvalData, recalibrate
from bayeval.core import metrics
from bayeval.models import FAMILIES, ScoreMixture
from bayeval.models._scales import Transform as _Transform
from bayeval.models._scales import make_transform as _make_transform
from bayeval.models.score_mixture import _em_start

matplotlib.use("Agg")

FIT = {"draws": 300, "tune": 400, "chains": 2, "cores": 1, "progressbar": False, "warn": False}


def simulate(n, n_vetted, seed, pi=0.3, neg=(2.0, 0.1), pos=(0.7, 0.12)):
    """Scores from the model itself: Gamma negatives, truncated-Normal positives."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < pi).astype(int)
    s = np.where(y == 1, np.abs(rng.normal(*pos, n)), rng.gamma(neg[0], neg[1], n))
    s = np.maximum(s, 1e-4)
    labels = np.full(n, np.nan)
    idx = rng.choice(n, n_vetted, replace=False)
    labels[idx] = y[idx]
    return EvalData(s, labels), y


# ------------------------------------------------------------------ structure


def test_build_exposes_named_variables_and_data():
    data, _ = simulate(200, 10, 0)
    model = ScoreMixture("gamma", "truncnormal").build(data)
    assert sorted(v.name for v in model.free_RVs) == ["neg_mean", "neg_sd", "pi", "pos_mu", "pos_sigma"]
    assert {"vetted_score", "vetted_label", "unvetted_score", "unvetted_weight"} <= set(model.named_vars)
    assert sorted(p.name for p in model.potentials) == ["order", "unvetted", "vetted"]
    binned = ScoreMixture(binned=True, n_bins=50).build(data)
    w = binned["unvetted_weight"].get_value()
    assert w.sum() == data.n_unvetted and w.size <= 50


def test_transform_choice_and_errors():
    probs = np.linspace(0.0, 1.0, 50)
    margins = np.linspace(-3, 2, 50)
    assert _make_transform("auto", "positive", probs).name == "minmax"
    assert _make_transform("auto", "real", probs).name == "logit"
    assert _make_transform("auto", "real", margins).name == "identity"
    assert _make_transform("auto", "positive", margins).name == "minmax"
    assert _make_transform("auto", "positive", margins + 10).name == "identity"
    with pytest.raises(ValueError, match="logit.*needs scores in \\[0, 1\\]"):
        _make_transform("logit", "real", margins)
    with pytest.raises(ValueError, match="needs positive values"):
        _make_transform("identity", "positive", margins)
    with pytest.raises(ValueError, match="strictly inside"):
        _make_transform("identity", "unit", probs)
    with pytest.raises(ValueError, match="Unknown score family"):
        ScoreMixture("gauss", "gamma")
    with pytest.raises(ValueError, match="different supports"):
        ScoreMixture("normal", "gamma").build(EvalData(margins))
    with pytest.raises(TypeError, match="EvalData"):
        ScoreMixture().build(margins)


def test_logit_map_moves_only_exact_zeros_and_ones():
    """Confident probabilities keep their logits; a fixed clip would pile them on one point."""
    s = np.array([0.0, 1e-12, 1e-7, 0.3, 0.9, 1 - 1e-10, 1.0])
    with pytest.warns(UserWarning, match="29% of the scores are exactly 0 or 1"):
        t = _make_transform("logit", "real", s)
    x = t(s)
    np.testing.assert_allclose(x[1:6], np.log(s[1:6]) - np.log1p(-s[1:6]))
    assert x[0] == x[1] and x[6] == x[5]  # exact 0/1 go to the most extreme other score
    assert len(np.unique(x)) == 5
    assert np.all(np.isfinite(t.log_jacobian(s)))
    with pytest.warns(UserWarning, match="exactly 0 or 1"):
        _make_transform("logit", "real", np.r_[np.zeros(10), np.linspace(0.1, 0.9, 50)])
    # hard predictions: what to do instead (the scores, or the vetted labels alone)
    with pytest.raises(ValueError, match=r"all scores are exactly 0 or 1\. Hard 0/1 predictions .*vetted_only"):
        _make_transform("logit", "real", np.r_[np.zeros(5), np.ones(5)])
    with pytest.raises(ValueError, match="init"):
        ScoreMixture(init="random")


def logit_like_digits(seed, n=1800, pi=0.09):
    """Scores shaped like a one-vs-rest classifier's logits: wide negatives, a small
    positive class far above them; 20 vetted items with a single positive."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < pi).astype(int)
    x = np.where(y == 1, rng.normal(6.0, 2.7, n), rng.normal(-11.0, 5.0, n))
    labels = np.full(n, np.nan)
    neg_idx = rng.choice(np.flatnonzero(y == 0), 19, replace=False)
    labels[neg_idx] = 0
    labels[rng.choice(np.flatnonzero(y == 1))] = 1
    return x, y, labels


def test_em_start_separates_the_classes():
    """With one vetted positive, the vetted-mean start falls back to a score quantile
    inside the negatives; the EM start must find the component above them."""
    x, y, labels = logit_like_digits(0)
    (m0, s0), (m1, s1), pi = _em_start(x, labels)
    assert abs(m1 - x[y == 1].mean()) < 0.5 and abs(s1 - x[y == 1].std()) < 0.5
    assert abs(m0 - x[y == 0].mean()) < 0.5
    assert abs(pi - y.mean()) < 0.02
    # the model starts there
    model = ScoreMixture("normal", "normal", transform="identity").build(EvalData(x, labels))
    assert abs(float(model.initial_point()["pos_mu"]) - m1) < 1e-9
    old = ScoreMixture("normal", "normal", transform="identity", init="labels").build(EvalData(x, labels))
    assert float(old.initial_point()["pos_mu"]) < 0  # the quantile start, among the negatives
    # binned unvetted scores give the same start
    (b0, _), (b1, _), bpi = _em_start(x, labels, n_bins=200)
    assert abs(b1 - m1) < 0.1 and abs(b0 - m0) < 0.1 and abs(bpi - pi) < 0.005


def test_all_chains_find_the_class_separating_mode():
    """The default start keeps every chain out of the spurious mode in which the
    positive component sits inside the negatives (benchmarks/spe.py --part modes)."""
    x, y, labels = logit_like_digits(0)
    post = ScoreMixture("normal", "normal", transform="identity").fit(
        EvalData(x, labels), draws=200, tune=300, chains=4, cores=1, random_seed=1, progressbar=False, warn=False
    )
    pi_chain = post.idata.posterior["pi"].mean("draw").values
    mu_chain = post.idata.posterior["pos_mu"].mean("draw").values
    assert np.all(np.abs(pi_chain - y.mean()) < 0.02), pi_chain
    assert np.all(mu_chain > 4), mu_chain


@pytest.mark.parametrize("name", ["identity", "minmax", "logit", "log"])
def test_log_jacobian_is_the_derivative_of_the_map(name):
    s = np.linspace(0.05, 0.95, 7)
    t = _Transform(name, lo=0.0, hi=1.2)
    h = 1e-6
    numeric = np.log(np.abs((t(s + h) - t(s - h)) / (2 * h)))
    np.testing.assert_allclose(t.log_jacobian(s), numeric, atol=1e-6)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_numpy_density_equals_pymc_density(family):
    """The label draws use scipy; the sampler uses PyMC: they must be the same density."""
    fam = FAMILIES[family]
    x = np.linspace(0.05, 0.95, 9)
    values = {"mean": 0.4, "sd": 0.2, "mu": 0.3, "sigma": 0.25, "nu": 4.0, "concentration": 6.0, "alpha": -2.0}
    params = {k: values[k] for k in fam.params}
    ref = pm.logp(fam.dist(params), x).eval()
    ours = fam.logpdf(x, {k: np.array([v]) for k, v in params.items()})[0]
    np.testing.assert_allclose(ours, ref, rtol=1e-6, atol=1e-8)
    # the survival function is consistent with the density
    sf = fam.sf(np.array([0.2, 0.6]), {k: np.array([v]) for k, v in params.items()})[0]
    grid = np.linspace(0.2, 0.6, 4001)
    dens = np.exp(fam.logpdf(grid, {k: np.array([v]) for k, v in params.items()})[0])
    np.testing.assert_allclose(sf[0] - sf[1], np.trapezoid(dens, grid), rtol=1e-4)


# ------------------------------------------------------------------------ fits


@pytest.fixture(scope="module")
def fitted():
    data, y = simulate(600, 30, seed=3)
    post = ScoreMixture("gamma", "truncnormal").fit(data, random_seed=3, **FIT)
    return data, y, post


def test_fit_recovers_the_simulation(fitted):
    data, y, post = fitted
    pi = post.idata.posterior["pi"].values.ravel()
    assert abs(pi.mean() - y.mean()) < 3 * pi.std() + 0.01
    diag = post.check(warn=False)
    assert diag["ok"] and diag["sampler"] == "importance" and diag["pareto_k"] < 0.7, (diag, post.sampling)
    ap = post.metric("average_precision").values.ravel()
    lo, hi = np.quantile(ap, [0.02, 0.98])
    true_ap = metrics.average_precision(y, data.scores)
    assert lo <= true_ap <= hi
    # every label draw keeps the vetted labels
    z = next(post.label_draws(chunk_size=50)).values[0]
    assert np.all(z[:, data.vetted] == data.labels[data.vetted])
    # population AP (from theta) is close to the sample AP on 600 items
    pop = post.population("average_precision").values.ravel()
    assert abs(pop.mean() - ap.mean()) < 3 * np.hypot(pop.std(), ap.std())
    # the model is true here: the posterior predictive check does not flag it
    assert post.ppc(n_draws=100)["p_value"] > 0.01


def test_population_precision_at_full_recall_is_the_prevalence():
    """Normal classes reach recall 1 only in the limit of flagging every item, past the threshold
    grid: the precision there was read at the grid's top threshold (about 0.9 here) instead of the
    limit, pi."""
    rng = np.random.default_rng(1)
    n = 150
    y = rng.random(n) < 0.3
    m = rng.normal(size=n) + 2 * y - 1
    lab = np.full(n, np.nan)
    i = rng.choice(n, 30, replace=False)
    lab[i] = y[i]
    post = ScoreMixture("normal", "normal").fit(EvalData(m, lab), draws=100, tune=200, chains=2, random_seed=0,
                                                progressbar=False)
    par = post.population("precision_at_recall", recall=[0.9, 0.99, 1.0]).values.reshape(-1, 3)
    pi = post.idata.posterior["pi"].values.ravel()
    np.testing.assert_allclose(par[:, 2], pi)
    assert par[:, 2].mean() < par[:, 1].mean() < par[:, 0].mean()


def test_population_default_grid_is_small_and_within_its_stated_error(monkeypatch):
    """population("average_precision") of a skew-normal pair on the breast-cancer scores ran over 4
    minutes (2,001 grid points, each every draw's survival functions); the default grid is now
    201 points (on the log-odds scale for probabilities) and stays within 1e-3 of a fine grid,
    as its docstring says."""
    rng = np.random.default_rng(3)
    n = 400
    y = rng.random(n) < 0.3
    q = np.where(y, rng.beta(5, 2, n), rng.beta(1, 5, n))
    lab = np.full(n, np.nan)
    lab[:60] = y[:60]
    post = ScoreMixture("normal", "normal").fit(EvalData(q, lab), draws=60, chains=2, random_seed=0,
                                                progressbar=False)
    assert post.transform.name == "logit"
    fam = FAMILIES["normal"]
    sizes = []
    sf = type(fam).sf

    def counted(self, x, p):
        sizes.append(np.size(x))
        return sf(self, x, p)

    monkeypatch.setattr(type(fam), "sf", counted)
    for metric in ("average_precision", "roc_auc"):
        sizes.clear()
        default = post.population(metric).values
        assert max(sizes) <= 201
        fine = post.population(metric, n_grid=4001).values
        assert np.abs(default - fine).max() < 1e-3
    with pytest.raises(ValueError, match="n_grid"):
        post.population("roc_auc", n_grid=1)


def test_population_cut_offs_beyond_the_probability_scale_flag_everything_or_nothing():
    """On probabilities (logit map) a cut-off above 1 flagged the items beyond the largest observed
    probability (recall 0.003 at 1.2, as at 1.0) and one below 0 missed those below the smallest:
    the map clips to the observed range. Above 1 nothing is flagged, below 0 everything (precision pi)."""
    rng = np.random.default_rng(0)
    y = rng.random(300) < 0.3
    s = np.clip(np.where(y, rng.beta(5, 2, 300), rng.beta(2, 5, 300)), 1e-4, 1 - 1e-4)
    lab = np.full(300, np.nan)
    lab[:50] = y[:50]
    post = ScoreMixture("normal", "normal", transform="logit").fit(EvalData(s, lab), draws=100, random_seed=0,
                                                                   progressbar=False)
    assert post.transform.name == "logit"
    pi = post.idata.posterior["pi"].values
    assert np.all(post.population("recall", threshold=1.2).values == 0)
    assert np.all(post.population("recall", threshold=-0.1).values == 1)
    np.testing.assert_allclose(post.population("precision", threshold=-0.1).values, pi)
    assert post.population("recall", threshold=1.0).values.mean() > 0  # items at 1 are flagged at 1
    curve = post.population("precision_recall_curve", thresholds=[-0.5, 0.5, 1.5]).values
    assert np.all(curve[..., 0, 1] == 1) and np.all(curve[..., 2, 1] == 0)


def test_population_curves(fitted):
    _, _, post = fitted
    par = post.population("precision_at_recall", recall=[0.1, 0.5, 0.9])
    assert par.dims == ("chain", "draw", "recall")
    sample = post.metric("precision_at_recall", recall=[0.1, 0.5, 0.9])
    # on 600 items the population curve and the sample curve agree closely
    np.testing.assert_allclose(par.mean(("chain", "draw")), sample.mean(("chain", "draw")), atol=0.05)
    f = post.population("f_score", threshold=0.4)
    p = post.population("precision", threshold=0.4)
    r = post.population("recall", threshold=0.4)
    np.testing.assert_allclose(f.values, 2 * p.values * r.values / (p.values + r.values))
    auc = post.population("roc_auc").values
    assert np.all((auc > 0.5) & (auc <= 1))
    with pytest.raises(ValueError, match="No population version"):
        post.population("accuracy")


def test_recalibration_probabilities(fitted):
    data, y, post = fitted
    rec = recalibrate(post, min_precision=0.9, min_recall=0.6)
    prob = rec.probability
    assert prob.dims == ("threshold",) and float(prob.min()) >= 0 and float(prob.max()) <= 1
    # consistency with the draws: at the recommended threshold recompute by hand
    pr = post.metric("precision_recall_curve", thresholds=[rec.threshold])
    ok = (pr.sel(curve="precision") >= 0.9) & (pr.sel(curve="recall") >= 0.6)
    assert float(ok.mean()) == pytest.approx(rec.probability_at_threshold)
    assert float(prob.max()) == pytest.approx(rec.probability_at_threshold)
    # a constraint that is impossible has probability 0 everywhere
    assert float(recalibrate(post, min_precision=1.0, min_recall=1.0).probability.max()) < 0.05
    ax = rec.plot()
    assert ax.get_ylabel() == "P(constraint holds)"
    table = rec.table()
    assert {"p_constraint", "precision_mean", "recall_hdi_5%", "recall_sd"} <= set(table.columns)
    with pytest.raises(ValueError, match="no constraint"):
        recalibrate(post)


def test_plots(fitted):
    from bayeval import plots

    data, y, post = fitted
    ax = plots.mixture_fit(post)
    assert ax.get_ylabel() == "density" and len(ax.lines) >= 3
    ax = plots.pr_curve(post, truth=y)
    assert ax.get_xlabel() == "recall" and len(ax.lines) == 2


def test_mixture_fit_on_the_score_scale_keeps_the_histogram_readable():
    """On probability scores, scale="score" drew a density spike (thousands, at 1) that flattened
    everything, and the vetted ticks (placed at -0.03 / -0.06 of that top) became long bars."""
    import matplotlib.pyplot as plt

    from bayeval import plots

    rng = np.random.default_rng(0)
    n = 600
    y = rng.random(n) < 0.35
    q = np.where(y, rng.beta(8, 0.3, n), rng.beta(0.4, 8, n)).clip(1e-6, 1 - 1e-9)
    lab = np.full(n, np.nan)
    lab[:60] = y[:60]
    post = ScoreMixture("normal", "normal").fit(EvalData(q, lab), draws=60, chains=2, random_seed=0,
                                                progressbar=False)
    ax = plots.mixture_fit(post, scale="score")
    heights, _ = np.histogram(q, bins=50, density=True)
    lo, hi = ax.get_ylim()
    assert hi <= 2.2 * heights.max() + 1e-9 and "y-axis cut at" in ax.get_title()
    # the ticks sit in a strip under the histogram, a fixed share of the axes high
    assert -0.15 * hi < lo < 0
    ticks = [line for line in ax.get_lines() if line.get_label().startswith("vetted")]
    assert len(ticks) == 2
    for line in ticks:
        frac = np.asarray(line.get_ydata(), dtype=float)
        assert line.get_transform() == ax.get_xaxis_transform() and np.all((0 < frac) & (frac < -lo / (hi - lo)))
        assert line.get_markersize() <= 6
    plt.close("all")


def test_binned_likelihood_matches_exact():
    data, _ = simulate(1500, 40, seed=8)
    exact = ScoreMixture(binned=False).fit(data, random_seed=1, **FIT)
    binned = ScoreMixture(binned=True, n_bins=200).fit(data, random_seed=1, **FIT)
    for name in ("pi", "pos_mu", "neg_mean"):
        a = exact.idata.posterior[name].values.ravel()
        b = binned.idata.posterior[name].values.ravel()
        # same posterior up to Monte Carlo error (ESS ~ a few hundred) and binning error
        assert abs(a.mean() - b.mean()) < 0.25 * a.std() + 3 * a.std() / np.sqrt(200)


def test_misfit_is_flagged_by_the_predictive_check():
    """Negatives from two separated lumps: no single Gamma follows them."""
    rng = np.random.default_rng(5)
    n = 800
    y = (rng.random(n) < 0.25).astype(int)
    lump = rng.random(n) < 0.5
    neg = np.where(lump, rng.normal(0.1, 0.02, n), rng.normal(0.45, 0.02, n))
    s = np.clip(np.where(y == 1, rng.normal(0.8, 0.05, n), neg), 1e-3, None)
    labels = np.full(n, np.nan)
    labels[:20] = y[:20]
    post = ScoreMixture("gamma", "truncnormal").fit(EvalData(s, labels), random_seed=2, **FIT)
    assert post.ppc(n_draws=100)["p_value"] < 0.05


def test_interval_coverage_fast_version():
    """Fast version of benchmarks/spe.py's coverage study: 90% intervals of AP over
    repeated simulations cover the true sample AP most of the time (at the nominal 90%,
    P(at most 3 of 6) = 1.6%)."""
    covered = 0
    for trial in range(6):
        data, y = simulate(300, 20, seed=100 + trial)
        post = ScoreMixture().fit(data, random_seed=trial, **FIT)
        ap = post.metric("average_precision").values.ravel()
        lo, hi = np.quantile(ap, [0.05, 0.95])
        covered += lo <= metrics.average_precision(y, data.scores) <= hi
    assert covered >= 4


def test_auto_ranks_candidates_by_elpd():
    data, _ = simulate(400, 20, seed=21)
    best, table = ScoreMixture.auto(
        data,
        families=[("gamma", "truncnormal"), ("normal", "normal")],
        transforms=("auto", "logit"),
        draws=150,
        tune=250,
        random_seed=0,
    )
    ok = table[table["error"] == ""]
    assert list(ok["elpd"]) == sorted(ok["elpd"], reverse=True)
    assert ok["elpd_diff"].iloc[0] == 0
    assert best.mixture.negative.name == ok["negative"].iloc[0]
    # logit needs scores in [0, 1]; these are not: that candidate is listed with its error
    assert (table["error"] != "").any()
    # the true model (Gamma / truncated Normal on these scores) is the best description
    assert ok.index[0].startswith("gamma/truncnormal")
    # each candidate says what drew its posterior and what it cost
    assert set(ok["sampler"]) <= {"importance", "pymc", "pymc-numba", "nutpie"}
    assert (ok["seconds"] > 0).all() and ok["seconds"].sum() < 3600


def test_check_names_the_chain_stuck_in_a_spurious_mode():
    """Chain 1 is given the spurious solution (positive component inside the
    negatives, wide negative component): check() must say the chains disagree and
    name chain 1 as the one far below in log-likelihood."""
    import arviz as az

    from bayeval.models.score_mixture import SPEPosterior, _make_transform

    x, y, labels = logit_like_digits(0)
    data = EvalData(x, labels)
    rng = np.random.default_rng(0)
    n = 200
    good = {"pi": 0.09, "neg_mu": -11.0, "neg_sigma": 5.0, "pos_mu": 6.0, "pos_sigma": 2.7}
    bad = {"pi": 0.46, "neg_mu": -9.9, "neg_sigma": 9.5, "pos_mu": -10.2, "pos_sigma": 3.2}
    draws = {k: np.stack([good[k] + 0.01 * rng.standard_normal(n), bad[k] + 0.01 * rng.standard_normal(n)]) for k in good}
    idata = az.from_dict(posterior=draws)
    mix = ScoreMixture("normal", "normal", transform="identity")
    post = SPEPosterior(data, idata, mixture=mix, transform=_make_transform("identity", "real", x), binned=False, sampler="pymc")
    with pytest.warns(UserWarning, match=r"Chain\(s\) \[1\] sit \d+\+ nats below"):
        diag = post.check(warn=True)
    chains = diag["chains"]
    assert chains.loc[0, "loglik"] - chains.loc[1, "loglik"] > 20
    assert chains.loc[0, "population_ap"] > 0.9 > chains.loc[1, "population_ap"]
    np.testing.assert_allclose(chains["pi"], [0.09, 0.46], atol=0.01)
    # a subset of the items gives the same ordering of the chains
    sub = post.chain_summary(max_items=500)
    assert sub.loc[0, "loglik"] - sub.loc[1, "loglik"] > 20
    with pytest.raises(ValueError, match="max_items"):
        post.chain_summary(max_items=0)


def test_auto_sampler_uses_nutpie_only_where_it_was_faster(monkeypatch):
    """sampler='auto' falls back (when importance sampling is not exact enough) to nutpie
    for a skew-normal component when installed, PyMC otherwise (benchmarks/spe.py
    --part sampler measured PyMC faster for the other pairs)."""
    import bayeval.models.score_mixture as sm

    used = []

    class Stop(Exception):
        pass

    def fake_sample(*a, **k):
        used.append("pymc")
        raise Stop

    monkeypatch.setattr(sm.pm, "sample", fake_sample)
    monkeypatch.setattr(sm, "_has_nutpie", lambda: True)

    def fake_compile(*a, **k):
        used.append("nutpie")
        raise Stop

    # a stand-in module: the choice is tested whether or not nutpie is installed
    import sys
    import types

    monkeypatch.setitem(sys.modules, "nutpie", types.SimpleNamespace(compile_pymc_model=fake_compile))
    data = EvalData(np.linspace(0.01, 0.99, 50), np.r_[0, 1, np.full(48, np.nan)])
    for neg, pos in (("gamma", "truncnormal"), ("normal", "normal"), ("skewnormal", "skewnormal"), ("normal", "skewnormal")):
        with pytest.raises(Stop):
            ScoreMixture(neg, pos).fit(data, progressbar=False, warn=False, sampler="pymc")
    assert used == ["pymc"] * 4  # asked for PyMC: PyMC
    used.clear()
    import bayeval.core.sampling as smp

    # importance sampling reports unreliable weights: the fallback is the measured NUTS
    monkeypatch.setattr(smp, "importance_sample", lambda *a, **k: (None, smp.SamplingInfo("importance", fallback_reason="k")))
    for neg, pos in (("gamma", "truncnormal"), ("normal", "normal"), ("skewnormal", "skewnormal"), ("normal", "skewnormal")):
        with pytest.raises(Stop):
            ScoreMixture(neg, pos).fit(data, progressbar=False, warn=False)
    assert used == ["pymc", "pymc", "nutpie", "nutpie"]
    monkeypatch.setattr(sm, "_has_nutpie", lambda: False)
    with pytest.raises(Stop):
        ScoreMixture("skewnormal", "skewnormal").fit(data, progressbar=False, warn=False)
    assert used[-1] == "pymc"


def test_auto_says_which_candidate_it_is_fitting(monkeypatch, capsys):
    """A long model comparison is never silent: one line per candidate on stderr."""
    from bayeval import EvalData
    from bayeval.models import ScoreMixture

    def fail(self, data, **kwargs):
        raise ValueError("not fitted in this test")

    monkeypatch.setattr(ScoreMixture, "fit", fail)
    data = EvalData(np.linspace(0.01, 0.99, 50), np.r_[[0, 1], np.full(48, np.nan)])
    with pytest.raises(ValueError) as err_info:
        ScoreMixture.auto(data, families=[("normal", "normal"), ("studentt", "studentt")])
    # the same reason from every candidate is said once, after the candidates' names
    assert str(err_info.value) == ("No candidate could be fitted (normal/normal/auto, studentt/studentt/auto): "
                                   "not fitted in this test")
    err = capsys.readouterr().err
    assert "candidate 1/2 (normal/normal/auto)" in err and "candidate 2/2 (studentt/studentt/auto)" in err
    with pytest.raises(ValueError):
        ScoreMixture.auto(data, families=[("normal", "normal")], progress=False)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("draws", [500, pytest.param(1000, marks=pytest.mark.slow)])
def test_importance_sampler_matches_nuts(draws):
    """The default sampler (importance sampling from the EM mode) against NUTS on the same
    data: posterior means within Monte Carlo error, spreads alike (500 draws and tuning steps
    per chain in the default run, 1,000 under ``-m slow``; the tolerances follow the ESS)."""
    data, _ = simulate(2000, 40, seed=8)
    fast = ScoreMixture().fit(data, random_seed=3, draws=draws, chains=2, progressbar=False)
    nuts = ScoreMixture().fit(data, random_seed=3, draws=draws, tune=draws, chains=2, cores=1, progressbar=False,
                              sampler="pymc")
    assert fast.sampling.sampler == "importance" and fast.sampling.pareto_k < 0.7
    assert nuts.sampling.sampler == "pymc" and nuts.convergence["ok"]
    ess = min(fast.sampling.ess, float(nuts.convergence["min_ess_bulk"]))
    for v in ("pi", "neg_mean", "pos_mu", "pos_sigma"):
        x, y = fast.idata.posterior[v].values.ravel(), nuts.idata.posterior[v].values.ravel()
        tol = 4 * np.sqrt(x.var() / ess + y.var() / ess)
        assert abs(x.mean() - y.mean()) < tol, (v, x.mean(), y.mean(), tol)
        assert 0.75 < x.std() / y.std() < 1.33, (v, x.std(), y.std())
    ap_f, ap_n = fast.metric("average_precision").values.ravel(), nuts.metric("average_precision").values.ravel()
    assert abs(ap_f.mean() - ap_n.mean()) < 4 * np.sqrt(ap_f.var() / ess + ap_n.var() / ess)


def test_ppc_on_many_scores_interpolates_the_cdf_within_1e4_of_the_exact_check(monkeypatch):
    import bayeval.models.score_mixture as sm

    data, _ = simulate(9000, 40, seed=31)
    post = ScoreMixture("gamma", "truncnormal").fit(data, draws=200, tune=200, chains=2, random_seed=3, warn=False)
    approx = post.ppc(n_draws=40, random_seed=5)
    monkeypatch.setattr(sm, "_PPC_EXACT_MAX", 10**9)
    exact = post.ppc(n_draws=40, random_seed=5)
    # same draws, same replicated scores: only the CDF evaluation differs
    np.testing.assert_allclose(approx["ks_draws"], exact["ks_draws"], atol=1e-4, rtol=0)
    np.testing.assert_allclose(approx["ks_replicated"], exact["ks_replicated"], atol=1e-4, rtol=0)
    assert abs(approx["p_value"] - exact["p_value"]) <= 1 / 40


def test_az_loo_of_a_fit_whose_labels_are_predicted_with_near_certainty_is_finite():
    """Well separated classes: a vetted label's log-likelihood is -1e-30 in one draw and -1e-45 in
    another, and ArviZ's PSIS tail fit on such ratios divided by zero: ``az.loo(post.idata)`` was NaN
    (and ``az.compare`` ranked the model with a NaN), though bayeval's own stacking read it finite.
    The exported log-likelihood now holds such points exactly constant, as the stacking does."""
    import warnings

    import arviz as az

    rng = np.random.default_rng(0)
    y = rng.random(300) < 0.3
    s = np.where(y, rng.normal(6, 1, 300), rng.normal(-6, 1, 300))
    lab = np.where(np.arange(300) < 30, y, np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        post = ScoreMixture("normal", "normal").fit(EvalData(s, lab), draws=100, chains=2, random_seed=0,
                                                   progressbar=False)
        loo = az.loo(post.idata)
    (ll,) = post.idata.log_likelihood.data_vars.values()
    assert ll.shape[-1] == 30 and float(ll.max()) <= 0.0
    assert np.isfinite(loo.elpd_loo) and loo.elpd_loo == pytest.approx(float(ll.mean(("chain", "draw")).sum()), abs=0.5)
