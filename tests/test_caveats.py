"""Caveats: what the labels and scores cannot tell a model, said beside the interval."""

import numpy as np
import pytest

import bayeval as be


def _data(scores, n_vet, n_pos, seed=0):
    rng = np.random.default_rng(seed)
    y = np.full(len(scores), np.nan)
    idx = rng.choice(len(scores), n_vet, replace=False)
    y[idx] = 0
    y[idx[:n_pos]] = 1
    return be.EvalData(scores, y)


def test_no_caveat_for_spread_scores_and_enough_of_each_class():
    s = np.random.default_rng(1).beta(1, 3, 500)
    assert _data(s, 40, 10).caveats() == []


def test_few_positives_and_few_negatives_are_named_with_what_to_vet():
    s = np.random.default_rng(1).beta(1, 3, 500)
    c = _data(s, 30, 2).caveats()
    assert len(c) == 1 and c[0].startswith("only 2 of the 30 vetted labels are positive") and "design" in c[0]
    c = _data(s, 30, 27).caveats()
    assert len(c) == 1 and c[0].startswith("only 3 of the 30 vetted labels are negative")
    # no positive at all is the calibration check's own message, not a caveat twice
    assert _data(s, 30, 0).caveats() == []


def test_squeezed_and_saturated_probabilities():
    rng = np.random.default_rng(2)
    squeezed = rng.uniform(0.15, 0.48, 800)
    c = _data(squeezed, 40, 10).caveats()
    assert len(c) == 1 and "squeezed into [0.15, 0.48]" in c[0] and "transform='standardize'" in c[0]
    sat = rng.uniform(0.01, 0.99, 800)
    sat[rng.choice(800, 160, replace=False)] = 1.0  # exactly 20%
    c = _data(sat, 40, 10).caveats()
    assert len(c) == 1 and c[0].startswith("20% of the scores are exactly 0 or 1")
    # margins are not probabilities: neither check applies
    assert _data(rng.normal(0, 0.05, 800), 40, 10).caveats() == []


def test_summary_carries_the_caveats():
    s = np.random.default_rng(3).beta(1, 3, 300)
    d = _data(s, 30, 2)
    post = be.Posterior.from_probabilities(d, s, draws=50, random_seed=0, check=False)
    tab = post.summary()
    assert tab.attrs["caveats"] == d.caveats() and len(tab.attrs["caveats"]) == 1


def test_fit_transform_sets_the_default_candidates_feature():
    rng = np.random.default_rng(4)
    s = rng.uniform(0.15, 0.48, 400)
    y = np.full(400, np.nan)
    y[:40] = rng.random(40) < (s[:40] - 0.1)
    post = be.fit(be.EvalData(s, y), transform="standardize", random_seed=0, draws=200, warn=False)
    assert all(c.info["scale"] == "standardize" for c in post.candidates.values())
    with pytest.raises(ValueError, match="transform"):
        be.fit(be.EvalData(s, y), transform="probit")
    with pytest.raises(ValueError, match="own `candidates`"):
        be.fit(be.EvalData(s, y), transform="standardize", candidates=[be.models.Calibration()])
