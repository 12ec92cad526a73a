"""Moved to :mod:`bayeval.rankings.plots`; this path keeps working for one release, with a DeprecationWarning."""

from bayeval._deprecate import moved_module

moved_module(__name__, "bayeval.rankings.plots")
