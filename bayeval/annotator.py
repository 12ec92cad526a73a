"""Moved to :mod:`bayeval.annotators.bounds`; this path keeps working for one release, with a DeprecationWarning."""

from bayeval._deprecate import moved_module

moved_module(__name__, "bayeval.annotators.bounds")
