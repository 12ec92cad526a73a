"""The score models (PyMC): each has ``build(data) -> pm.Model`` and ``fit(data) -> posterior``.

The other model families stand beside these on the same core: the annotator-error model
in :mod:`bayeval.annotators`, the human-ranking model in :mod:`bayeval.rankings`.
"""

from .calibration import CURVES, Calibration, CalibrationPosterior
from .label_flip import LabelFlip, LabelFlipPosterior, simulate_tags
from .score_mixture import AUTO_CANDIDATES, FAMILIES, TRANSFORMS, ScoreMixture, SPEPosterior
from .mixture_calibration import MixtureCalibration
from .stacking import Stack, StackedPosterior, fit

__all__ = [
    "AUTO_CANDIDATES",
    "FAMILIES",
    "TRANSFORMS",
    "CURVES",
    "Calibration",
    "CalibrationPosterior",
    "LabelFlip",
    "LabelFlipPosterior",
    "MixtureCalibration",
    "ScoreMixture",
    "SPEPosterior",
    "Stack",
    "StackedPosterior",
    "fit",
    "simulate_tags",
]
