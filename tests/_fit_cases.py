"""Small data sets shared by tests/test_model_contract.py and tests/test_persist.py.

The two modules fit the same model structures to data made here; they run in one pytest-xdist
group (tests/conftest.py), so each structure is compiled once per run, not once per module.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bayeval import EvalData
from bayeval.annotators import AnnotationData
from bayeval.models import simulate_tags


def scores(seed=0, n=300, n_vetted=40):
    """Probability-like scores of a 30%-positive pool, ``n_vetted`` of them vetted."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.3).astype(float)
    s = np.clip(np.where(y == 1, rng.normal(0.7, 0.15, n), rng.gamma(2.0, 0.12, n)), 1e-3, 1 - 1e-3)
    lab = np.full(n, np.nan)
    idx = rng.choice(n, n_vetted, replace=False)
    lab[idx] = y[idx]
    return EvalData(s, lab, item_ids=[f"item{j}" for j in range(n)])


def tags(seed=0, n_vetted=40):
    """Noisy tags of two categories (150 items each), ``n_vetted`` items vetted."""
    data, truth = simulate_tags(2, items_per_category=150, random_seed=seed)
    idx = np.random.default_rng(seed).choice(data.n_items, n_vetted, replace=False)
    return data.with_labels(idx, truth[idx])


def annotations(seed=0, k=2):
    """A classifier and two named annotators (one with gaps) on 120 items, 20 gold; scores when binary."""
    rng = np.random.default_rng(seed)
    z = rng.integers(0, k, 120)
    flip = lambda acc: np.where(rng.random(120) < acc, z, (z + rng.integers(1, k, 120)) % k)  # noqa: E731
    ann = pd.DataFrame({"ann_a": flip(0.9).astype(float), "ann_b": flip(0.85).astype(float)})
    ann.iloc[::7, 1] = np.nan
    gold = np.where(np.arange(120) < 20, z, np.nan)
    scores_ = rng.random(120) if k == 2 else None
    return AnnotationData(flip(0.8), ann, gold=gold, scores=scores_)
