"""F-scores of rare categories from a small labeling budget: ACIS and its baselines
(:mod:`.acis`), the Bayesian route through a score mixture (:mod:`.bayesian`), and the
replay study of all of them on a fully labeled pool (:mod:`.study`)."""

from .acis import ACISResult, acis, sawade, top_k, uniform_sampling
from .bayesian import score_mixture_fscore
from .study import FSCORE_METHODS, FScoreStudy, simulate_fscore

__all__ = ["ACISResult", "FSCORE_METHODS", "FScoreStudy", "acis", "sawade", "score_mixture_fscore",
           "simulate_fscore", "top_k", "uniform_sampling"]
