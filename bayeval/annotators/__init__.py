"""True accuracy when the annotators err too: closed-form bounds (:mod:`.bounds`, with
their plot) and the Bayesian model of correlated errors: its data (:mod:`.data`), the
model (:mod:`.model`), the posterior that reports a fit (:mod:`.posterior`) and the gold
items' readings (:mod:`.gold`)."""

from .bounds import TrueAccuracyBounds, TrueAccuracyInterval, plot_true_accuracy, true_accuracy_bounds
from .data import AnnotationData, annotations_from_long
from .gold import GuardedAccuracy, RectifiedAccuracy
from .model import AnnotatorError
from .posterior import AnnotatorPosterior, CategoricalPosterior, IdentifiedAccuracy

__all__ = ["AnnotationData", "AnnotatorError", "AnnotatorPosterior", "CategoricalPosterior", "GuardedAccuracy",
           "IdentifiedAccuracy", "RectifiedAccuracy", "TrueAccuracyBounds", "TrueAccuracyInterval",
           "annotations_from_long", "plot_true_accuracy", "true_accuracy_bounds"]
