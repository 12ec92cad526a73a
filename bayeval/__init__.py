"""bayeval: Bayesian evaluation of classifiers when labels are scarce or noisy.

The pipeline: an :class:`EvalData` (scores, vetted labels, noisy labels, ...) goes
into a generative model (``bayeval.models``), whose :class:`Posterior` draws the
true labels; :mod:`bayeval.core.metrics` (``be.metrics``) turns every draw into a
metric value, so each metric comes out as a full posterior distribution.

This module is the face of the package: it re-exports names and holds no code of its
own. Everything is imported on first use, so ``import bayeval`` is quick and a name
costs only the modules it needs: ``import bayeval as be`` then ``be.fit``,
``be.models.ScoreMixture``, ``be.active.select``, ``be.plots``, ``be.datasets``...
"""

import importlib as _importlib
import sys as _sys
import types as _types

from ._version import __version__  # noqa: F401  (the face shows it)

#: Each name of the face, and the module it comes from (imported on first access).
_NAMES = {
    "EvalData": "bayeval.core.data",
    "Posterior": "bayeval.core.posterior",
    "hdi": "bayeval.core.summary",
    "naive": "bayeval.core.evaluate",
    "vetted_only": "bayeval.core.evaluate",
    "fit": "bayeval.models.stacking",
    "compare": "bayeval.compare.comparison",
    "Comparison": "bayeval.compare.comparison",
    "AnnotationData": "bayeval.annotators",
    "AnnotatorError": "bayeval.annotators",
    "TrueAccuracyBounds": "bayeval.annotators.bounds",
    "TrueAccuracyInterval": "bayeval.annotators.bounds",
    "plot_true_accuracy": "bayeval.annotators.bounds",
    "true_accuracy_bounds": "bayeval.annotators.bounds",
    "HumanRanking": "bayeval.rankings",
    "PairwiseVotes": "bayeval.rankings",
    "PercentileResult": "bayeval.rankings.percentile",
    "ThetaEstimate": "bayeval.rankings.percentile",
    "estimate_theta": "bayeval.rankings.percentile",
    "ranking_percentile": "bayeval.rankings.percentile",
    "ACISResult": "bayeval.fscore.acis",
    "acis": "bayeval.fscore.acis",
    "ActiveSession": "bayeval.active.session",
    "LabelStore": "bayeval.active.store",
    "expected_change": "bayeval.active.select",
    "select": "bayeval.active.select",
    "simulate": "bayeval.active.simulate",
    "Recalibration": "bayeval.recalibrate",
    "recalibrate": "bayeval.recalibrate",
    "Report": "bayeval.report",
    "report": "bayeval.report",
    "save": "bayeval.persist",
    "load": "bayeval.persist",
}

#: Modules reachable as attributes (``be.plots``), imported on first access;
#: ``be.metrics`` is :mod:`bayeval.core.metrics`.
_SUBMODULES = {
    "active": "bayeval.active",
    "annotators": "bayeval.annotators",
    "cards": "bayeval.cards",
    "cli": "bayeval.cli",
    "core": "bayeval.core",
    "datasets": "bayeval.datasets",
    "fscore": "bayeval.fscore",
    "metrics": "bayeval.core.metrics",
    "models": "bayeval.models",
    "persist": "bayeval.persist",
    "plots": "bayeval.plots",
    "rankings": "bayeval.rankings",
    "vet": "bayeval.vet",
}  # not "report" and "recalibrate": on the face these are the functions of those modules


def __getattr__(name: str):
    if name in _NAMES:
        value = getattr(_importlib.import_module(_NAMES[name]), name)
    elif name in _SUBMODULES:
        value = _importlib.import_module(_SUBMODULES[name])
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_NAMES, *_SUBMODULES})


class _Face(_types.ModuleType):
    """Importing the module ``bayeval.report`` (or ``bayeval.recalibrate``) would bind the
    module to the face's name ``report``; the face keeps that name for the function."""

    def __setattr__(self, name, value):
        if isinstance(value, _types.ModuleType) and name in _NAMES and name not in _SUBMODULES:
            return
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Face

__all__ = sorted(_NAMES) + ["metrics"]
