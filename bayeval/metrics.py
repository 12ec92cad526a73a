"""``bayeval.metrics``: the metric kernels under their short name.

This module is :mod:`bayeval.core.metrics` itself: importing it puts that module in its
place, so ``import bayeval.metrics``, ``from bayeval.metrics import precision_at_k`` and
``be.metrics`` all give the one module the kernels are defined in (documented there).

Examples
--------
>>> import bayeval.metrics
>>> from bayeval.metrics import precision_at_k
>>> bayeval.metrics.__name__, precision_at_k is bayeval.core.metrics.precision_at_k
('bayeval.core.metrics', True)
"""

import sys

from .core import metrics

sys.modules[__name__] = metrics  # the import statement returns what sys.modules holds under the name
