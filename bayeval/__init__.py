"""bayeval: Bayesian evaluation of classifiers when labels are scarce or noisy.

The pipeline: an :class:`EvalData` (scores, vetted labels, noisy labels, ...) goes
into a generative model (``bayeval.models``), whose :class:`Posterior` draws the
true labels; :mod:`bayeval.metrics` turns every draw into a metric value, so each
metric comes out as a full posterior distribution.

Every sub-module is reachable from the package itself, imported on first use:
``import bayeval as be`` then ``be.models.ScoreMixture``, ``be.active.select``,
``be.plots``, ``be.datasets``, ``be.cards``...
"""

import importlib as _importlib

from . import metrics
from .active import ACISResult, ActiveSession, LabelStore, acis, expected_change, select, simulate
from .annotators.bounds import TrueAccuracyBounds, TrueAccuracyInterval, plot_true_accuracy, true_accuracy_bounds
from .data import EvalData
from .models.stacking import fit
from .persist import load
from .posterior import Posterior, hdi, naive, vetted_only
from .rankings.percentile import PercentileResult, ThetaEstimate, estimate_theta, ranking_percentile
from .recalibrate import Recalibration, recalibrate
from .report import Report, report

__version__ = "0.1.0.dev0"

#: Sub-modules imported on first attribute access (``be.plots``), so that
#: ``import bayeval`` stays as light as its eager names allow.
_SUBMODULES = (
    "active",
    "annotators",
    "cards",
    "cli",
    "data",
    "datasets",
    "metrics",
    "models",
    "fscore",
    "persist",
    "plots",
    "posterior",
    "rankings",
    "recalibrate",
)  # not "report": ``be.report`` is the function bayeval.report.report


#: Former module paths, kept for one release (importing them warns).
_MOVED = {"annotator": "annotators.bounds", "plots_ranking": "rankings.plots", "ranking": "rankings.percentile"}


def __getattr__(name: str):
    if name in _SUBMODULES:
        return _importlib.import_module(f"{__name__}.{name}")
    if name in _MOVED:
        return _importlib.import_module(f"{__name__}.{name}")  # the module's alias warns
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_SUBMODULES})


__all__ = [
    "ACISResult",
    "ActiveSession",
    "EvalData",
    "LabelStore",
    "PercentileResult",
    "Posterior",
    "Recalibration",
    "Report",
    "ThetaEstimate",
    "TrueAccuracyBounds",
    "TrueAccuracyInterval",
    "acis",
    "estimate_theta",
    "expected_change",
    "fit",
    "hdi",
    "load",
    "metrics",
    "naive",
    "plot_true_accuracy",
    "ranking_percentile",
    "recalibrate",
    "report",
    "select",
    "simulate",
    "true_accuracy_bounds",
    "vetted_only",
]
