"""The labels the rest count's calibration is fitted to (``bayeval.fscore.acis.REST_FIT``;
``benchmarks/results/acis_restfit.md``)."""

import importlib
import warnings

import numpy as np
import pytest

from bayeval import acis

A = importlib.import_module("bayeval.fscore.acis")  # the module (the package's name is the function)


def overconfident_tied_pool(seed=0):
    """A boosted model's shape: predicted positives at logits 3-25 but positive 65% of the time,
    a middle band whose rate rises with the score, and 18,000 items tied at one low leaf value
    (logit -6.4) of which a handful (about 0.03%) are positive."""
    rng = np.random.default_rng(seed)
    t_top = rng.uniform(3, 25, 100)
    y_top = rng.random(100) < 0.65
    t_mid = rng.uniform(-6.2, 3, 1900)
    y_mid = rng.random(1900) < 1 / (1 + np.exp(-(-6 + 0.4 * (t_mid + 6.2))))
    t_rest = np.full(18_000, -6.4)
    y_rest = rng.random(18_000) < 0.0003
    t = np.r_[t_top, t_mid, t_rest]
    y = np.r_[y_top, y_mid, y_rest].astype(np.int8)
    s = 1 / (1 + np.exp(-t))
    return s, (s > 0.5).astype(np.int8), y


def _rest_counts(monkeypatch, mode, seeds):
    """The rest count the estimate uses at each run's last batch."""
    s, pred, y = overconfident_tied_pool()
    monkeypatch.setattr(A, "REST_FIT", mode)
    fit, last = A.fit_rest_model, []

    def recorded(*args, **kwargs):
        out = fit(*args, **kwargs)
        last.append(out["r_model"])
        return out

    monkeypatch.setattr(A, "fit_rest_model", recorded)
    counts = []
    for seed in seeds:
        last.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            acis(s, pred, lambda i: y[i], budget=200, random_seed=seed)
        counts.append(last[-1])
    return np.array(counts), int(y[2000:].sum())


def test_the_rest_count_from_every_label_follows_an_overconfident_top_and_the_predicted_negatives_do_not(monkeypatch):
    # fitted to every label, the curve's slope is set by the predicted positives (logits up to 25, a third
    # negative): about 0.1, so the tied low items read as several percent positive -- 20x the truth or more
    every, truth = _rest_counts(monkeypatch, "all", [0, 1, 2])
    negatives, _ = _rest_counts(monkeypatch, "negatives", [0, 1, 2])
    assert truth == 4
    assert every.min() > 15 * truth, every
    assert negatives.max() < 3 * truth, negatives


def test_rest_fit_is_one_of_the_two_choices():
    assert A.REST_FIT in ("all", "negatives")
