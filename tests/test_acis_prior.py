"""The prior study's switch of the rest calibration (``_estimators.REST_PRIOR``; issue 38,
``benchmarks/results/acis_prior_prereg.md``): the default is untouched, the Student-t prior
lets go where the labels contradict it, and ``"split"`` moves only the estimate's count."""

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

from bayeval.fscore import _estimators
from bayeval.fscore._estimators import platt_feature, platt_fit, prior_log_density
from bayeval.fscore.acis import acis


def _far_labels():
    """Labels from the docstring pool's true curve, logit P(y=1) = 7.4 + 3 t: far from the
    default prior's centre (0, 1)."""
    rng = np.random.default_rng(3)
    t = rng.uniform(-7, 0, 400)
    y = (rng.random(t.size) < 1 / (1 + np.exp(-(7.4 + 3 * t)))).astype(int)
    return t, y


def test_default_prior_is_the_calibrated_scores_prior():
    assert _estimators.REST_PRIOR == "default"
    _, prior = platt_feature(np.array([0.1, 0.9]))
    assert prior is _estimators.PLATT_PRIOR_PROB


def test_normal_prior_density_is_the_quadratic_penalty():
    b = np.array([[0.5, 2.0], [-1.0, 0.0]])
    mean, sd = _estimators.PLATT_PRIOR_PROB
    assert prior_log_density(b, _estimators.PLATT_PRIOR_PROB) == pytest.approx(-0.5 * (((b - mean) / sd) ** 2).sum(1))


def test_t_prior_mode_has_zero_gradient_and_lets_go_of_the_centre():
    """Newton under the Student-t prior reaches a zero gradient of the log posterior; with the
    same centres and scales the t prior's mode sits closer to the labels' own fit (the prior
    of sd 10) than the normal prior's does."""
    t, y = _far_labels()
    coef_n, _ = platt_fit(t, y, _estimators.PLATT_PRIOR_PROB)
    coef_t, cov_t = platt_fit(t, y, _estimators.PLATT_PRIOR_T3)
    coef_v, _ = platt_fit(t, y, _estimators.PLATT_PRIOR_VAGUE)
    mean, sd, nu = _estimators.PLATT_PRIOR_T3
    p = 1 / (1 + np.exp(-(coef_t[0] + coef_t[1] * t)))
    d = coef_t - mean
    grad = np.array([np.sum(y - p), np.dot(t, y - p)]) - (nu + 1) * d / (nu * sd**2 + d**2)
    assert np.all(np.abs(grad) < 1e-6)
    assert np.all(np.linalg.eigvalsh(cov_t) > 0)
    assert np.linalg.norm(coef_t - coef_v) < np.linalg.norm(coef_n - coef_v)


def test_split_moves_the_estimate_not_the_design(monkeypatch):
    """``"split"``: the rest items drawn (the design, from the default prior's fit) are those
    of the default run with the same seed in the first batches; the estimate differs."""
    rng = np.random.default_rng(0)
    y = (rng.random(20_000) < 0.01).astype(np.int8)
    scores = 1 / (1 + np.exp(-(3.0 * y + rng.normal(-5.5, 1.0, y.size))))
    pred = (scores > 0.2).astype(np.int8)
    base = acis(scores, pred, lambda i: y[i], budget=150, random_seed=1)
    monkeypatch.setattr(_estimators, "REST_PRIOR", "split")
    split = acis(scores, pred, lambda i: y[i], budget=150, random_seed=1)
    first = base.history["batch_size"].iloc[0]
    assert list(split.labeled["item"][:first]) == list(base.labeled["item"][:first])
    assert split.estimate != base.estimate


def test_benchmark_docstring_pool_and_rest_prior_option():
    """``benchmarks/acis.py --intervals --pools S`` runs on the docstring pool (F1 0.2162), and
    ``--rest-prior`` takes the four names of the study only."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    bench = importlib.import_module("acis")
    scores, predictions, y = bench.make_pool(bench.DOCSTRING_POOL)
    assert bench.f1(y, predictions) == pytest.approx(0.2162, abs=5e-5)
    assert bench.DOCSTRING_POOL not in bench.INTERVAL_POOLS  # not run unless named
    with pytest.raises(SystemExit):
        bench.main(["--intervals", "--rest-prior", "nonsense"])


def test_vague_fb_count_falls_back_to_the_pinned_down_fit_only():
    """``fallback = (coef, cov, gate)`` of ``fit_rest_model`` (the study's ``"vague_fb"``): where
    the main fit does not pin the count down (sdlog above the gate), the count is the fallback
    fit's if that one is pinned down; otherwise the main fit's count stays."""
    t_unl = np.linspace(-6.0, -3.0, 2000)
    none = np.empty(0)
    loose = (np.array([0.0, 1.0]), np.eye(2) * 25.0)
    tight = (np.array([-1.0, 1.0]), np.eye(2) * 1e-8)

    def count(fallback):
        return _estimators.fit_rest_model(t_unl, none, none, *loose, np.random.default_rng(0), fallback=fallback)

    base = count(None)
    assert base["sdlog"] > 1.0
    assert base["r_model"] == pytest.approx(_estimators.logistic(t_unl).sum(), rel=1e-3)
    fell = count((*tight, 1.0))
    assert fell["r_model"] == pytest.approx(_estimators.logistic(t_unl - 1.0).sum(), rel=1e-3)
    assert fell["sdlog"] < 1e-3
    # a fallback that is not pinned down either changes nothing
    kept = count((tight[0], np.eye(2) * 25.0, 1.0))
    assert kept["r_model"] == base["r_model"] and kept["sdlog"] == base["sdlog"]


def test_vague_variants_use_the_vague_prior_and_nogate_drops_the_gate(monkeypatch):
    for name in ("vague_fb", "vague_nogate"):
        monkeypatch.setattr(_estimators, "REST_PRIOR", name)
        assert platt_feature(np.array([0.1, 0.9]))[1] is _estimators.PLATT_PRIOR_VAGUE
        assert _estimators.rest_gate() is (name != "vague_nogate")
        assert (_estimators.fallback_prior() is _estimators.PLATT_PRIOR_PROB) is (name == "vague_fb")
    monkeypatch.setattr(_estimators, "REST_PRIOR", "default")
    assert _estimators.rest_gate() and _estimators.fallback_prior() is None
