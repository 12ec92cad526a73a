"""The labels the rest count's calibration is fitted to (``bayeval.fscore.acis.REST_FIT``;
``benchmarks/results/acis_restfit.md``, ``benchmarks/results/acis_restfit_chosen.md``)."""

import importlib
import warnings

import numpy as np
import pytest

from bayeval import acis
from bayeval.fscore._estimators import predicts_better

A = importlib.import_module("bayeval.fscore.acis")  # the module (the package's name is the function)


def overconfident_tied_pool(seed=0, tied_middle=0.0):
    """A boosted model's shape: predicted positives at logits 3-25 but positive 65% of the time,
    a middle band whose rate rises with the score (a share ``tied_middle`` of it tied at one leaf
    value, logit -6.3), and 18,000 items tied at a lower leaf value (logit -6.4) of which a handful
    (about 0.03%) are positive."""
    rng = np.random.default_rng(seed)
    t_top = rng.uniform(3, 25, 100)
    y_top = rng.random(100) < 0.65
    t_mid = np.where(rng.random(1900) < tied_middle, -6.3, rng.uniform(-6.2, 3, 1900))
    y_mid = rng.random(1900) < 1 / (1 + np.exp(-(-6 + 0.4 * (t_mid + 6.2))))
    t_rest = np.full(18_000, -6.4)
    y_rest = rng.random(18_000) < 0.0003
    t = np.r_[t_top, t_mid, t_rest]
    y = np.r_[y_top, y_mid, y_rest].astype(np.int8)
    s = 1 / (1 + np.exp(-t))
    return s, (s > 0.5).astype(np.int8), y


def _rest_counts(monkeypatch, mode, seeds, tied_middle=0.0):
    """The rest count the estimate uses at each run's last batch."""
    s, pred, y = overconfident_tied_pool(tied_middle=tied_middle)
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
    # negative): about 0.1, so the tied low items read as several percent positive -- 10x the truth or more
    every, truth = _rest_counts(monkeypatch, "all", [0, 1, 2])
    negatives, _ = _rest_counts(monkeypatch, "negatives", [0, 1, 2])
    assert truth == 4
    assert every.min() > 10 * truth, every
    assert negatives.max() < 3 * truth, negatives


def test_the_default_fits_the_predicted_negatives_where_they_say_the_curve_of_every_label_is_off(monkeypatch):
    # most of the middle band tied just above the rest at a low rate: the labeled predicted negatives there
    # contradict the curve of every label (about 10% positive), and the default's choice goes to their own fit
    assert A.REST_FIT == "chosen"
    every, truth = _rest_counts(monkeypatch, "all", [0, 1, 2], tied_middle=0.8)
    chosen, _ = _rest_counts(monkeypatch, "chosen", [0, 1, 2], tied_middle=0.8)
    assert every.min() > 25 * truth, every
    assert np.sum(chosen < 2.5 * truth) >= 2, chosen


def test_the_predicted_negatives_fit_is_chosen_only_where_it_predicts_their_labels_better_than_its_optimism():
    rng = np.random.default_rng(0)
    t = rng.uniform(-8, -4, 200)
    y = (rng.random(200) < 1 / (1 + np.exp(-(t + 2)))).astype(np.int8)  # logit P = t + 2: 2-12% positive
    right = np.array([2.0, 1.0])
    # a curve saying 50% where the labels say a few percent: their own fit wins
    assert predicts_better(right, np.array([0.0, 0.0]), t, y)
    # the same curve (or one as good): no switch, the fit to every label stays
    assert not predicts_better(right, right, t, y)
    assert not predicts_better(right, right + np.array([0.05, 0.0]), t, y)
    assert not predicts_better(right, np.array([0.0, 0.0]), t[:0], y[:0])
