"""Comparing classifiers that scored the same items: :func:`compare` and :class:`Comparison`.

One model of the items' labels given every classifier's score, and every classifier's
metric on the same label draws: paired gaps, ``P(a better)``, ``P(best)``, the region of
practical equivalence, a stopping rule and the items whose labels decide the comparison.
See ``docs/compare.md``.

Examples
--------
>>> import numpy as np
>>> from bayeval.compare import compare
>>> rng = np.random.default_rng(0)
>>> y = rng.random(600) < 0.3
>>> cmp = compare({"a": 2 * y + rng.normal(0, 1, 600), "b": y + rng.normal(0, 1, 600)},
...               np.where(np.arange(600) < 50, y, np.nan), random_seed=0, draws=200)
>>> cmp.names
['a', 'b']
"""

from .comparison import MODELS, Comparison, ComparisonModel, compare, expected_change

__all__ = ["MODELS", "Comparison", "ComparisonModel", "compare", "expected_change"]
