"""Generative models (PyMC). Each has ``build(data) -> pm.Model`` and ``fit(...) -> Posterior``."""

from .score_mixture import FAMILIES, TRANSFORMS, ScoreMixture, SPEPosterior

__all__ = ["FAMILIES", "TRANSFORMS", "ScoreMixture", "SPEPosterior"]
