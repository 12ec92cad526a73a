"""Choosing what to label, and keeping labels safe.

* :func:`design` -- a first batch to vet, stratified on the score, before any label;
* :func:`select` / :func:`expected_change` -- which items to vet next;
* :class:`ActiveSession` -- the resumable vetting loop (active testing's Algorithm 1),
  with every label kept in a :class:`LabelStore`;
* :func:`simulate` -- the loop replayed on fully labeled data, against baselines;
* :func:`acis` and its baselines -- importance-sampled F-scores for rare categories,
  and :func:`score_mixture_fscore`, the Bayesian (score-mixture) route beside them;
* :func:`simulate_fscore` -- those methods replayed on a fully labeled pool (MSE, bias,
  variance ratio, coverage per budget).
"""

from ..fscore.acis import ACISResult, acis, sawade, top_k, uniform_sampling
from ..fscore.bayesian import score_mixture_fscore
from ..fscore.study import FSCORE_METHODS, FScoreStudy, simulate_fscore
from .design import design
from .select import STRATEGIES, expected_change, select
from .session import ActiveSession
from .simulate import ESTIMATORS, simulate
from .store import LabelStore, StoreDamagedError, StoreFormatError

__all__ = [
    "ACISResult",
    "ActiveSession",
    "ESTIMATORS",
    "FSCORE_METHODS",
    "FScoreStudy",
    "LabelStore",
    "STRATEGIES",
    "StoreFormatError",
    "StoreDamagedError",
    "acis",
    "design",
    "expected_change",
    "sawade",
    "score_mixture_fscore",
    "select",
    "simulate",
    "simulate_fscore",
    "top_k",
    "uniform_sampling",
]
