"""Choosing what to label: ACIS importance sampling for rare-category F-scores."""

from .acis import ACISResult, acis, sawade, top_k, uniform_sampling

__all__ = ["ACISResult", "acis", "sawade", "top_k", "uniform_sampling"]
