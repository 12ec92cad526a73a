"""Generative models (PyMC). Each has ``build(...) -> pm.Model`` and ``fit(...) -> posterior``."""

from .annotator import AnnotatorError, CategoricalPosterior
from .human_ranking import HumanRanking, RankingPosterior
from .score_mixture import FAMILIES, TRANSFORMS, ScoreMixture, SPEPosterior

__all__ = [
    "FAMILIES",
    "TRANSFORMS",
    "AnnotatorError",
    "CategoricalPosterior",
    "HumanRanking",
    "RankingPosterior",
    "ScoreMixture",
    "SPEPosterior",
]
