"""The one contract every model follows (in the spirit of scikit-learn's check_estimator).

Every model derives from :class:`bayeval.core.model.Model`, takes the same ``fit``
keywords, returns its posterior with ``sampling``, ``convergence`` and a pointwise
log-likelihood (so ``az.loo`` works), is reproducible from its seed, refits through
the compiled-model cache to the same draws as a fresh fit, and rejects bad data with
a TypeError or ValueError at the boundary.
"""

from __future__ import annotations

import inspect
import warnings

import arviz as az
import numpy as np
import pytest
from _fit_cases import annotations as _annotations
from _fit_cases import scores as _scores
from _fit_cases import tags as _tags

from bayeval import EvalData, Posterior
from bayeval.annotators import AnnotationData, AnnotatorError
from bayeval.core import sampling as _sampling
from bayeval.core.model import FIT_KEYWORDS, Model
from bayeval.core.sampling import SamplingInfo
from bayeval.models import Calibration, LabelFlip, ScoreMixture, Stack
from bayeval.models.joint import JointCalibration, joint_data
from bayeval.rankings import HumanRanking, PairwiseVotes, RankingPosterior

# small: the contract is about what a fit returns and how it repeats, not about its accuracy
FIT = dict(draws=50, tune=50, chains=2, progressbar=False, warn=False, cores=1)


def _joint(seed, n=300, n_vetted=40):
    d = _scores(seed, n, n_vetted)
    other = np.clip(d.scores + np.random.default_rng(seed + 100).normal(0, 0.1, n), 1e-3, 1 - 1e-3)
    return joint_data({"a": d.scores, "b": other}, d.labels)


def _votes(seed):
    rng = np.random.default_rng(seed)
    return PairwiseVotes((rng.random((12, 5)) < rng.uniform(0.2, 0.9, (12, 1))).astype(float))


CASES = {
    "ScoreMixture": (lambda: ScoreMixture(), _scores, lambda: EvalData([0.1, 0.2], [0, 1])),
    "Calibration": (lambda: Calibration("logistic", transform="logit"), _scores,
                    lambda: EvalData([-1.0, 0.2, 3.0], [0, 1, np.nan])),
    "Calibration-monotone": (lambda: Calibration("monotone"), _scores, None),
    "LabelFlip": (lambda: LabelFlip(), _tags, lambda: EvalData([0.1, 0.2, 0.3], [0, 1, np.nan])),
    "AnnotatorError": (lambda: AnnotatorError(n_nodes=5, model_accuracy=(4.0, 1.0)), _annotations,
                       lambda: AnnotationData([0, 1, 2], [[0], [1], [1]])),
    "HumanRanking": (lambda: HumanRanking(), _votes, lambda: PairwiseVotes(np.array([[1, 7, 0]]))),
    "Stack": (lambda: Stack(), _scores, None),
    # several classifiers' scores as the data's features; plain scores without them are rejected
    "JointCalibration": (lambda: JointCalibration("monotone"), _joint, lambda: EvalData([0.1, 0.2], [0, 1])),
}


def _fit(name, seed_data=0, **kw):
    make, data, _ = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return make().fit(data(seed_data), **{**FIT, "random_seed": 3, **kw})


@pytest.fixture(scope="module")
def fits():
    # every structure compiled afresh here, whatever ran before in this process: the refit test
    # below compares these fresh fits with fits of swapped data through the cache
    _sampling._CACHE.clear()
    return {name: _fit(name) for name in CASES}


@pytest.mark.parametrize("name", CASES)
def test_one_fit_signature(name):
    model = CASES[name][0]()
    assert isinstance(model, Model)
    params = inspect.signature(model.fit).parameters
    for key in FIT_KEYWORDS:
        assert key in params and params[key].kind is inspect.Parameter.KEYWORD_ONLY, key
    assert any(p.kind is p.VAR_KEYWORD for p in params.values())  # the NUTS settings
    # the configuration round-trips
    again = type(model)(**model.get_params())
    assert repr(again) == repr(model)


@pytest.mark.parametrize("name", CASES)
def test_fit_returns_a_posterior_with_sampling_convergence_and_log_likelihood(name, fits):
    post = fits[name]
    assert isinstance(post, RankingPosterior if name == "HumanRanking" else Posterior)
    assert set(post.convergence) >= {"ok", "messages", "max_rhat", "min_ess_bulk", "divergences"}
    if name != "Stack":
        assert isinstance(post.sampling, SamplingInfo)
        assert post.sampling.seconds > 0
        # exact draws need no gradient (HumanRanking's default); every sampler of the others does
        assert (post.sampling.sampler == "exact") == (name == "HumanRanking")
        assert (post.sampling.n_grad_evals == 0) if name == "HumanRanking" else post.sampling.n_grad_evals > 0
        assert post.convergence["sampler"] == post.sampling.sampler
    assert "log_likelihood" in post.idata.groups()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loo = az.loo(post.idata)
    assert np.isfinite(loo.elpd_loo)


@pytest.mark.parametrize("name", CASES)
def test_same_seed_same_draws_and_other_seed_other_draws(name, fits):
    a = fits[name].idata.posterior
    b = _fit(name).idata.posterior
    c = _fit(name, random_seed=4).idata.posterior
    var = next(v for v in a.data_vars if a[v].dtype.kind == "f") if name != "Stack" else "source_draw"
    np.testing.assert_array_equal(a[var].values, b[var].values)
    assert not np.array_equal(a[var].values, c[var].values)


@pytest.mark.parametrize("name", ["ScoreMixture", "Calibration", "LabelFlip", "JointCalibration", "AnnotatorError"])
def test_refit_through_the_cache_equals_a_fresh_fit(name, fits):
    """The vetting loop's path: a model of the same structure compiled once, its data
    swapped (other items, other vetted labels, other lengths) -- the same draws as a fit
    that compiles afresh (the fixture's)."""
    first = fits[name].idata.posterior
    compiled = dict(_sampling._CACHE)
    _fit(name, seed_data=1)  # other data of the same structure, through the cache
    again = _fit(name, seed_data=0).idata.posterior  # and back: swapped data, no compile
    # nothing compiled or evicted for the refits: the same compiled models, each the same object
    assert compiled and _sampling._CACHE.keys() == compiled.keys()
    assert all(_sampling._CACHE[key] is hit for key, hit in compiled.items())
    for v in first.data_vars:
        np.testing.assert_allclose(first[v].values, again[v].values, rtol=1e-10, atol=1e-12)


def test_az_compare_ranks_models_fitted_to_the_same_labels(fits):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = az.compare({"mixture": fits["ScoreMixture"].idata, "logistic": fits["Calibration"].idata})
    assert set(table.index) == {"mixture", "logistic"}
    assert np.isclose(table["weight"].sum(), 1.0)


@pytest.mark.parametrize("name", CASES)
def test_seeds_of_every_kind_and_bad_seeds(name, fits):  # fits: in its group, so nothing compiles again
    post = _fit(name, random_seed=np.random.default_rng(0), draws=20, tune=20)
    assert post.idata.posterior.sizes["draw"] == 20
    _fit(name, random_seed=np.random.SeedSequence(5), draws=20, tune=20)
    with pytest.raises(TypeError, match="random_seed"):
        _fit(name, random_seed=1.5)


@pytest.mark.parametrize("name", CASES)
def test_bad_data_and_bad_options_are_rejected_at_the_boundary(name):
    make, _, bad = CASES[name]
    model = make()
    wrong = _scores(0) if name in ("AnnotatorError", "HumanRanking") else PairwiseVotes(np.ones((2, 2)))
    with pytest.raises(TypeError, match="PairwiseVotes|AnnotationData|EvalData"):
        model.fit(wrong, **FIT)
    if bad is not None:
        with pytest.raises(ValueError):
            model.fit(bad(), **FIT)
    with pytest.raises((TypeError, ValueError), match="sampler"):
        model.fit(CASES[name][1](0), **{**FIT, "sampler": "gibbs"})
    with pytest.raises(TypeError, match="draws"):
        model.fit(CASES[name][1](0), **{**FIT, "draws": 1.5})
    if name != "Stack":
        with pytest.raises(TypeError, match="takes no option"):
            model.fit(CASES[name][1](0), **FIT, step_size=0.1)


def test_pairwise_votes_as_nested_lists():
    """Votes typed as a list of lists (a list has an .index method: not pair labels)."""
    post = HumanRanking().fit(PairwiseVotes([[1, 0, 1], [0, 0, 1], [1, 1, 1]]), **FIT)
    assert post.theta.sizes["pair"] == 3
