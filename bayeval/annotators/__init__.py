"""True accuracy when the annotators err too: closed-form bounds (:mod:`.bounds`, with
their plot) and the Bayesian model of correlated errors (:mod:`.model`)."""

from .bounds import TrueAccuracyBounds, TrueAccuracyInterval, plot_true_accuracy, true_accuracy_bounds
from .model import (
    AnnotationData,
    AnnotatorError,
    CategoricalPosterior,
    GuardedAccuracy,
    RectifiedAccuracy,
    annotations_from_long,
)

__all__ = ["AnnotationData", "AnnotatorError", "CategoricalPosterior", "GuardedAccuracy", "RectifiedAccuracy",
           "TrueAccuracyBounds", "TrueAccuracyInterval", "annotations_from_long", "plot_true_accuracy",
           "true_accuracy_bounds"]
