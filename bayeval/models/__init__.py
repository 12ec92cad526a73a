"""Generative models (PyMC). Each has ``build(data) -> pm.Model`` and ``fit(...) -> Posterior``."""

from .human_ranking import HumanRanking, RankingPosterior
from .score_mixture import FAMILIES, TRANSFORMS, ScoreMixture, SPEPosterior

__all__ = ["FAMILIES", "TRANSFORMS", "HumanRanking", "RankingPosterior", "ScoreMixture", "SPEPosterior"]
