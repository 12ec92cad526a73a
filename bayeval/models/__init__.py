"""Generative models (PyMC). Each has ``build(...) -> pm.Model`` and ``fit(...) -> posterior``."""

from ..annotators.data import AnnotationData, annotations_from_long
from ..annotators.model import AnnotatorError
from ..annotators.posterior import CategoricalPosterior
from .calibration import CURVES, Calibration, CalibrationPosterior
from ..rankings.model import HumanRanking, PairwiseVotes, RankingPosterior
from .label_flip import LabelFlip, LabelFlipPosterior, simulate_tags
from .stacking import Stack, StackedPosterior, fit
from .score_mixture import AUTO_CANDIDATES, FAMILIES, TRANSFORMS, ScoreMixture, SPEPosterior

__all__ = [
    "AUTO_CANDIDATES",
    "FAMILIES",
    "TRANSFORMS",
    "AnnotationData",
    "AnnotatorError",
    "CURVES",
    "Calibration",
    "CalibrationPosterior",
    "CategoricalPosterior",
    "annotations_from_long",
    "HumanRanking",
    "LabelFlip",
    "LabelFlipPosterior",
    "PairwiseVotes",
    "RankingPosterior",
    "ScoreMixture",
    "SPEPosterior",
    "Stack",
    "StackedPosterior",
    "fit",
    "simulate_tags",
]
