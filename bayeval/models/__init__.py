"""Generative models (PyMC). Each has ``build(...) -> pm.Model`` and ``fit(...) -> posterior``."""

from .annotator import AnnotatorError, CategoricalPosterior, annotations_from_long
from .human_ranking import HumanRanking, RankingPosterior
from .label_flip import LabelFlip, LabelFlipPosterior, simulate_tags
from .score_mixture import AUTO_CANDIDATES, FAMILIES, TRANSFORMS, ScoreMixture, SPEPosterior

__all__ = [
    "AUTO_CANDIDATES",
    "FAMILIES",
    "TRANSFORMS",
    "AnnotatorError",
    "CategoricalPosterior",
    "annotations_from_long",
    "HumanRanking",
    "LabelFlip",
    "LabelFlipPosterior",
    "RankingPosterior",
    "ScoreMixture",
    "SPEPosterior",
    "simulate_tags",
]
