"""Choosing what to label, and keeping labels safe.

* :func:`design` -- a first batch to vet, stratified on the score, before any label;
  :func:`explore` -- items that top up the design's least-vetted strata later on;
* :func:`select` / :func:`expected_change` -- which items to vet next;
* :class:`ActiveSession` -- the resumable vetting loop (active testing's Algorithm 1),
  with every label kept in a :class:`LabelStore`;
* :func:`simulate` -- the loop replayed on fully labeled data, against baselines.

The F-scores of rare categories from a labeling budget (ACIS and its baselines, the
Bayesian route, their replay study) are in :mod:`bayeval.fscore`.
"""

from .design import design, explore
from .select import STRATEGIES, expected_change, select
from .session import ActiveSession
from .simulate import ESTIMATORS, simulate
from .store import LabelStore, StoreDamagedError, StoreFormatError

__all__ = [
    "ActiveSession",
    "ESTIMATORS",
    "LabelStore",
    "STRATEGIES",
    "StoreFormatError",
    "StoreDamagedError",
    "design",
    "expected_change",
    "explore",
    "select",
    "simulate",
]
