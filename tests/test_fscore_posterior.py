"""score_mixture_fscore: the Bayesian (score-mixture) route beside ACIS and its baselines."""

import numpy as np
import pytest

from bayeval.core import metrics
from bayeval.fscore import acis, score_mixture_fscore
from bayeval.models import ScoreMixture

FIT = {"draws": 300, "tune": 300, "chains": 2, "cores": 1, "warn": False}  # r_hat checked below


def _pool(n=3000, prevalence=0.05, seed=0):
    """Scores drawn from the model's own families (Gamma negatives, truncated-Normal positives)."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < prevalence).astype(int)
    neg = rng.gamma(2.0, 0.08, n)
    pos = rng.normal(0.75, 0.1, n)
    s = np.clip(np.where(y == 1, pos, neg), 1e-3, 1 - 1e-3)
    return s, (s > 0.5).astype(int), y


@pytest.fixture(scope="module")
def runs():
    s, yhat, y = _pool()
    res = score_mixture_fscore(
        s, yhat, lambda i: y[i], budget=60, random_seed=4, model=ScoreMixture("gamma", "truncnormal", transform="minmax"),
        fit_kwargs=FIT,
    )
    return s, yhat, y, res


def test_labels_the_items_acis_labels_and_reports_a_posterior(runs):
    s, yhat, y, res = runs
    plain = acis(s, yhat, lambda i: y[i], budget=60, random_seed=4)
    assert res.method == "score_mixture" and res.n_labels == 60
    assert res.labeled["item"].tolist() == plain.labeled["item"].tolist()
    # estimate, variance and interval are those of the posterior draws of F1
    f = res.posterior.metric("f_score", beta=1.0).values.ravel()
    assert res.estimate == pytest.approx(f.mean())
    assert res.variance == pytest.approx(f.var(ddof=1))
    assert res.interval == pytest.approx(tuple(np.quantile(f, [0.025, 0.975])))
    # and it says so (it was labelled a delta-method interval "plus the model count's variance")
    assert res.interval_method == "posterior" and "posterior draws" in res.interval_reason
    assert "[posterior]" in repr(res) and "delta" not in res.summary()["note"].iloc[0]
    assert len(res.history) == 1 and res.history["labels_spent"].item() == 60
    assert res.posterior.check(warn=False)["ok"]
    assert res.history["estimate"].item() == res.estimate


def test_covers_the_true_f1_when_the_families_fit(runs):
    _, yhat, y, res = runs
    truth = metrics.f_score(y, yhat)
    lo, hi = res.interval
    assert lo <= truth <= hi, (lo, truth, hi)
    # and it is informative: narrower than 0.25
    assert hi - lo < 0.25


def test_alpha_maps_to_f_beta_and_uniform_selection():
    s, yhat, y = _pool(n=800, prevalence=0.2, seed=2)
    res = score_mixture_fscore(
        s, yhat, lambda i: y[i], budget=30, alpha=0.8, selection="uniform", random_seed=1,
        model=ScoreMixture("gamma", "truncnormal", transform="minmax"), fit_kwargs=FIT,
    )
    f = res.posterior.metric("f_score", beta=0.5).values.ravel()  # beta^2 = (1 - 0.8) / 0.8
    assert res.estimate == pytest.approx(f.mean())
    assert res.alpha == 0.8
    # uniform selection: the labeled items are a simple random sample (all inclusion probabilities equal)
    assert res.labeled["inclusion_probability"].nunique() == 1


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"selection": "top"}, ValueError, "selection"),
        ({"model": "gamma"}, TypeError, "model"),
        ({"fit_kwargs": [("draws", 10)]}, TypeError, "fit_kwargs"),
        ({"budget": 0}, ValueError, "budget"),
    ],
)
def test_bad_input(kwargs, error, match):
    s, yhat, y = _pool(n=200, prevalence=0.2)
    args = {"budget": 20, **kwargs}
    with pytest.raises(error, match=match):
        score_mixture_fscore(s, yhat, lambda i: y[i], **args)


def test_same_seed_same_result():
    s, yhat, y = _pool(n=400, prevalence=0.2, seed=3)
    kw = dict(budget=20, random_seed=np.int64(9), model=ScoreMixture("gamma", "truncnormal", transform="minmax"),
              fit_kwargs={**FIT, "draws": 100, "tune": 100})
    a = score_mixture_fscore(s, yhat, lambda i: y[i], **kw)
    b = score_mixture_fscore(s, yhat, lambda i: y[i], **kw)
    assert a.estimate == b.estimate and a.interval == b.interval


def test_labels_survive_a_failing_fit():
    s, yhat, y = _pool(n=300, prevalence=0.2, seed=5)

    class Broken:
        def fit(self, data, **kw):
            raise FloatingPointError("sampler blew up")

    with pytest.raises(FloatingPointError, match="blew up") as info:
        score_mixture_fscore(s, yhat, lambda i: y[i], budget=25, random_seed=2, model=Broken())
    labeled = info.value.labeled
    assert len(labeled) == 25 and (labeled["label"].to_numpy() == y[labeled["item"].to_numpy()]).all()
    assert any("labels were bought" in n for n in info.value.__notes__)


def test_default_model_is_the_skew_normal_pair(monkeypatch):
    s, yhat, y = _pool(n=300, prevalence=0.2, seed=5)
    fitted = []

    def spy(self, data, **kw):
        fitted.append((self.negative, self.positive))
        raise RuntimeError("stop before sampling")

    monkeypatch.setattr(ScoreMixture, "fit", spy)
    with pytest.raises(RuntimeError, match="stop before sampling"):
        score_mixture_fscore(s, yhat, lambda i: y[i], budget=25, random_seed=2)
    assert fitted == [(ScoreMixture("skewnormal", "skewnormal").negative, ScoreMixture("skewnormal", "skewnormal").positive)]
