"""True accuracy of a classifier measured against imperfect annotations: closed forms.

A classifier's *measured* accuracy is its agreement with annotator labels that are
themselves wrong on a fraction ``1 - A_gt`` of the items. Its *true* accuracy
(agreement with the unknown true classes) depends on how the classifier's errors
line up with the annotators' errors:

* fully overlapping errors (the classifier is wrong exactly where, and as, the
  annotators are) give the lowest true accuracy, ``A_model - (1 - A_gt)``;
* fully disjoint errors (the classifier is right wherever the annotators are wrong)
  give the highest, ``A_model + (1 - A_gt)``;
* independent errors give a value in between (see :func:`true_accuracy_bounds`).

The generative model that puts a posterior on the true accuracy, with the error
correlation as a parameter, is :class:`bayeval.annotators.model.AnnotatorError`;
:func:`plot_true_accuracy` draws its posterior against these closed forms.
"""

from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np
import pandas as pd
import xarray as xr

from ..core import _validate as V

__all__ = ["TrueAccuracyBounds", "TrueAccuracyInterval", "true_accuracy_bounds", "plot_true_accuracy"]


class TrueAccuracyBounds(NamedTuple):
    """Range of a classifier's true accuracy, and its value under independent errors.

    Fields are floats for scalar inputs and arrays (broadcast shape) otherwise.

    Examples
    --------
    >>> from bayeval.annotators.bounds import TrueAccuracyBounds
    >>> TrueAccuracyBounds(0.8, 0.85, 0.9).independent
    0.85
    """

    lower: float | np.ndarray
    """True accuracy if the classifier's errors coincide with the annotators' errors."""
    independent: float | np.ndarray
    """True accuracy if the two sets of errors are statistically independent."""
    upper: float | np.ndarray
    """True accuracy if the classifier is right wherever the annotators are wrong."""

    @property
    def independent_defined(self) -> bool | np.ndarray:
        """Where the independent value exists (False where it is NaN).

        Examples
        --------
        >>> from bayeval.annotators.bounds import true_accuracy_bounds
        >>> true_accuracy_bounds(0.62, 0.5).independent_defined
        False
        """
        out = np.isfinite(self.independent)
        return bool(out) if np.ndim(out) == 0 else out


class TrueAccuracyInterval(NamedTuple):
    """Bounds on a classifier's true accuracy when the annotator accuracy is measured.

    Returned by :func:`true_accuracy_bounds` when ``n_gold`` is given: the annotator
    accuracy is then known from ``n_gold`` gold items, up to sampling error, and every
    quantity below carries it (Beta(1 + right, 1 + wrong) posterior of the annotator
    accuracy, credible probability ``prob``). Fields are floats for scalar inputs and
    arrays otherwise.

    Examples
    --------
    >>> from bayeval.annotators.bounds import true_accuracy_bounds
    >>> b = true_accuracy_bounds(0.85, 27, n_gold=30)
    >>> round(b.lower, 3), round(b.upper, 3)
    (0.618, 1.0)
    """

    lower: float | np.ndarray
    """Lower end: the ``(1 - prob) / 2`` quantile of ``A_model - (1 - A_gt)``."""
    independent: float | np.ndarray
    """Posterior median of the independent value (NaN where it does not exist)."""
    upper: float | np.ndarray
    """Upper end: the ``(1 + prob) / 2`` quantile of ``A_model + (1 - A_gt)``."""
    independent_interval: tuple
    """Equal-tailed ``prob`` interval of the independent value, ``(lo, hi)``; NaN where
    the annotator accuracy's interval reaches chance level ``1 / K`` (then independence
    pins nothing down) or where no value in [0, 1] fits."""
    annotator_accuracy: tuple
    """Equal-tailed ``prob`` interval of the annotator accuracy, ``(lo, hi)``."""
    prob: float
    """Credible probability of the intervals."""

    @property
    def independent_defined(self) -> bool | np.ndarray:
        """Where the independent value's interval exists.

        Examples
        --------
        >>> from bayeval.annotators.bounds import true_accuracy_bounds
        >>> true_accuracy_bounds(0.9, 16, n_gold=30).independent_defined
        False
        """
        out = np.isfinite(self.independent_interval[0]) & np.isfinite(self.independent_interval[1])
        return bool(out) if np.ndim(out) == 0 else out


def _as_accuracy(x, name: str) -> np.ndarray:
    if isinstance(x, str | bytes) or x is None:
        raise TypeError(f"`{name}` must be a number or an array of numbers in [0, 1], got {x!r}.")
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"`{name}` must be a number or an array of numbers in [0, 1], got {type(x).__name__} "
            f"{x!r:.80}."
        ) from exc
    bad = ~np.isfinite(arr) | (arr < 0) | (arr > 1)
    if bad.any():
        example = float(arr[bad].ravel()[0])
        hint = ("Pass fractions, not percentages (0.96, not 96)." if np.isfinite(example)
                else "NaN or infinity is not an accuracy: check how it was computed.")
        raise ValueError(
            f"`{name}` must be an accuracy in [0, 1], but {int(bad.sum())} value(s) are not "
            f"(e.g. {example!r}). {hint}"
        )
    return arr


def _as_n_classes(n_classes) -> int:
    if isinstance(n_classes, bool) or not isinstance(n_classes, numbers.Integral):
        raise TypeError(f"`n_classes` must be an integer >= 2, got {n_classes!r}.")
    if n_classes < 2:
        raise ValueError(f"`n_classes` must be >= 2 (a classification problem), got {n_classes}.")
    return int(n_classes)


def _as_count(x, n_gold) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(n_gold, bool) or isinstance(n_gold, str | bytes):
        raise TypeError(f"`n_gold` must be a whole number of gold items, got {n_gold!r}.")
    n = np.asarray(n_gold)
    if n.dtype.kind not in "iuf" or np.any(n != np.round(n)) or np.any(n < 1):
        raise ValueError(f"`n_gold` must be a whole number of gold items >= 1, got {n_gold!r}.")
    if isinstance(x, str | bytes) or x is None:
        raise TypeError(
            f"With `n_gold`, `annotator_accuracy` is the number of gold items the annotators "
            f"got right (a count), got {x!r}."
        )
    try:
        c = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`annotator_accuracy` must be a count of right labels, got {x!r:.80}.") from exc
    bad = ~np.isfinite(c) | (c < 0) | (c > n) | (c != np.round(c))
    if bad.any():
        example = c[bad].ravel()[0] if c.ndim else float(c)
        hint = (
            f" It looks like a fraction: pass the count, e.g. {round(example * float(np.max(n)))} of "
            f"{int(np.max(n))}."
            if 0 < example < 1
            else ""
        )
        raise ValueError(
            f"With `n_gold`, `annotator_accuracy` must be the number of gold items the annotators "
            f"got right, a whole number in 0..n_gold; got {example!r}.{hint}"
        )
    return c, n.astype(np.float64)


def _pos0(x):
    """Floats (0-d arrays to float) with -0.0 turned into 0.0."""
    x = np.asarray(x, dtype=np.float64) + 0.0
    return float(x) if x.ndim == 0 else x


def _has_shape(x) -> bool:
    """Whether ``x`` is an array (a Series, a list...) rather than one number (or None)."""
    if x is None or isinstance(x, str | bytes):
        return False
    return isinstance(x, pd.Series | pd.DataFrame) or np.ndim(x) > 0


def _labelled(result, ref):
    """``result`` (a bounds tuple) with each array field labelled like the pandas input ``ref``.

    A field of ``ref``'s shape becomes a Series (or DataFrame) on ``ref``'s index (and
    columns); anything else (a float, another shape after broadcasting) is left as it is.
    """
    if ref is None:
        return result

    def label(x):
        if isinstance(x, tuple):
            return tuple(label(v) for v in x)
        if not isinstance(x, np.ndarray) or x.shape != ref.shape:
            return x
        if isinstance(ref, pd.DataFrame):
            return pd.DataFrame(x, index=ref.index, columns=ref.columns)
        return pd.Series(x, index=ref.index, name=ref.name)

    return type(result)(*(label(v) for v in result))


def true_accuracy_bounds(
    model_accuracy, annotator_accuracy, *, n_classes=2, n_gold=None, prob=0.9
) -> TrueAccuracyBounds | TrueAccuracyInterval:
    """Bounds on a classifier's true accuracy, and its value under independent errors.

    Parameters
    ----------
    model_accuracy : float or array_like
        Measured accuracy ``A_model``: the fraction of items on which the classifier
        agrees with the annotator labels, in [0, 1].
    annotator_accuracy : float or array_like
        Accuracy ``A_gt`` of the annotator labels against the truth, in [0, 1].
        Broadcast against ``model_accuracy``.
        With ``n_gold``: the *number* of the ``n_gold`` gold items on which the
        annotator labels are right (a count, not a fraction).
    n_classes : int, default 2
        Number of classes ``K``.
    n_gold : int or array_like, optional
        The annotator accuracy was measured on this many gold items. Then its
        uncertainty is carried through (a Beta(1 + right, 1 + wrong) posterior),
        and a :class:`TrueAccuracyInterval` is returned.
    prob : float, default 0.9
        Credible probability of the intervals when ``n_gold`` is given.

    The pandas inputs (Series, or DataFrames' rows) are paired by their index, as
    bayeval pairs every pandas input: the same labels in another order are put in the
    first one's order; other or repeated labels, or an order that cannot be told
    (pandas' default index ``0 .. n-1`` on one of them, or a plain array beside them),
    are a ``ValueError`` saying how to fix it (``.loc``, ``.reindex``, or ``.to_numpy()``
    to pair by position). Plain arrays are paired by position.

    Returns
    -------
    TrueAccuracyBounds or TrueAccuracyInterval
        Without ``n_gold``: ``(lower, independent, upper)``; floats for scalar
        inputs, arrays of the broadcast shape otherwise -- a Series (DataFrame) on
        the pandas input's labels where one was given. With ``n_gold``: a
        :class:`TrueAccuracyInterval`, whose ``lower`` and ``upper`` widen the
        bounds by the uncertainty of the annotator accuracy (both bounds move
        with ``1 - A_gt``, so both ends use its upper ``(1 + prob) / 2``
        quantile: the true accuracy lies in ``[lower, upper]`` with probability
        at least ``prob`` under the Beta posterior).

        * ``lower = A_model - (1 - A_gt)`` and ``upper = A_model + (1 - A_gt)``,
          clipped to [0, 1]. They hold for any number of classes: an item where
          classifier and annotator agree is either one where both are right or one
          where the annotator is wrong, so ``A_model <= A_true + (1 - A_gt)``; and
          an item where the classifier is right is either one where it agrees with
          the annotator or one where the annotator is wrong, so
          ``A_true <= A_model + (1 - A_gt)``.
        * ``independent``: the true accuracy if the classifier's errors are
          independent of the annotator's and each wrong answer is spread uniformly
          over the ``K - 1`` wrong classes. Then classifier and annotator agree
          either when both are right (probability ``A_true * A_gt``) or when both
          are wrong and pick the same wrong class (probability
          ``(1 - A_true)(1 - A_gt) / (K - 1)``)::

              A_model = A_true * A_gt + (1 - A_true) * (1 - A_gt) / (K - 1)

          which is linear in ``A_true``; solving it gives::

              A_true = ((K - 1) * A_model + A_gt - 1) / (K * A_gt - 1)

          For ``K = 2`` this is ``(A_model + A_gt - 1) / (2 A_gt - 1)``. It is NaN
          where the measured accuracy cannot arise under independence (the
          solution falls outside [0, 1], e.g. a classifier agreeing with the
          annotators more often than they are right) and where ``A_gt = 1 / K``
          (annotators at chance level carry no information: the formula divides
          by zero); the bounds are returned all the same, and
          ``independent_defined`` says where the value exists.

    Raises
    ------
    ValueError
        If an accuracy is outside [0, 1] or not finite, or, with ``n_gold``, if
        the count is not a whole number in ``0..n_gold``.

    Examples
    --------
    The example of a classifier with 90% measured accuracy against labels that
    are 96% right:

    >>> from bayeval.annotators.bounds import true_accuracy_bounds
    >>> b = true_accuracy_bounds(0.90, 0.96)
    >>> round(b.lower, 6), round(b.independent, 4), round(b.upper, 6)
    (0.86, 0.9348, 0.94)

    (the value under independence is 0.86 / 0.92, about 93.5%). With ten classes:

    >>> true_accuracy_bounds([0.8, 0.9], 0.95, n_classes=10).independent.round(4).tolist()
    [0.8412, 0.9471]

    Annotators at chance level: the bounds, and no independent value:

    >>> true_accuracy_bounds(0.62, 0.5)
    TrueAccuracyBounds(lower=0.12, independent=nan, upper=1.0)

    An annotator accuracy measured on 30 gold items (27 right) instead of known
    exactly (where 0.9 would give lower 0.75 and independent 0.9375) widens the
    bounds:

    >>> b = true_accuracy_bounds(0.85, 27, n_gold=30)
    >>> round(b.lower, 3), [round(v, 3) for v in b.independent_interval]
    (0.618, [0.885, 1.0])

    Series are paired by label and the bounds keep the labels:

    >>> import pandas as pd
    >>> a_model = pd.Series([0.9, 0.7], index=["cats", "dogs"])
    >>> a_gt = pd.Series([0.8, 0.99], index=["dogs", "cats"])
    >>> true_accuracy_bounds(a_model, a_gt).lower.round(2).to_dict()
    {'cats': 0.89, 'dogs': 0.5}
    """
    given = {"model_accuracy": model_accuracy, "annotator_accuracy": annotator_accuracy, "n_gold": n_gold}
    per_item = {name: x for name, x in given.items() if _has_shape(x)}  # a number applies to every item
    given.update(zip(per_item, V.align_by_index(list(per_item.items())), strict=True))
    model_accuracy, annotator_accuracy, n_gold = given.values()
    ref = next((x for x in per_item.values() if isinstance(x, pd.Series | pd.DataFrame)), None)
    a_m = _as_accuracy(model_accuracy, "model_accuracy")
    k = _as_n_classes(n_classes)
    if n_gold is not None:
        return _labelled(_bounds_interval(a_m, annotator_accuracy, n_gold, k, prob), ref)
    a_gt = _as_accuracy(annotator_accuracy, "annotator_accuracy")
    try:
        a_m, a_gt = np.broadcast_arrays(a_m, a_gt)
    except ValueError as exc:
        raise ValueError(
            f"`model_accuracy` (shape {a_m.shape}) and `annotator_accuracy` (shape {a_gt.shape}) "
            "must broadcast against each other."
        ) from exc
    err = 1.0 - a_gt
    lower = np.clip(a_m - err, 0.0, 1.0)
    upper = np.clip(a_m + err, 0.0, 1.0)
    independent = _independent(a_m, a_gt, k)
    return _labelled(TrueAccuracyBounds(_pos0(lower), _pos0(independent), _pos0(upper)), ref)


def _independent(a_m, a_gt, k):
    """The independence formula; NaN where it has no solution in [0, 1] or A_gt = 1/K."""
    denom = k * a_gt - 1.0
    singular = np.isclose(denom, 0.0, rtol=0.0, atol=1e-12)
    with np.errstate(invalid="ignore", divide="ignore"):
        independent = ((k - 1) * a_m + a_gt - 1.0) / np.where(singular, 1.0, denom)
    tol = 1e-12
    outside = singular | (independent < -tol) | (independent > 1 + tol)
    return np.where(outside, np.nan, np.clip(independent, 0.0, 1.0))


def _bounds_interval(a_m, right, n_gold, k, prob) -> TrueAccuracyInterval:
    from scipy.stats import beta

    prob = V.as_probability(prob, "prob", open_interval=True)
    c, n = _as_count(right, n_gold)
    try:
        a_m, c, n = np.broadcast_arrays(a_m, c, n)
    except ValueError as exc:
        raise ValueError(
            f"`model_accuracy` (shape {a_m.shape}), the count (shape {c.shape}) and `n_gold` "
            f"(shape {n.shape}) must broadcast against each other."
        ) from exc
    a_post = beta(1.0 + c, 1.0 + n - c)
    tail = (1.0 - prob) / 2
    a_lo, a_med, a_hi = a_post.ppf(tail), a_post.ppf(0.5), a_post.ppf(1.0 - tail)
    lower = np.clip(a_m - (1.0 - a_lo), 0.0, 1.0)
    upper = np.clip(a_m + (1.0 - a_lo), 0.0, 1.0)
    independent = _independent(a_m, a_med, k)
    # the independence formula is monotone in A_gt on either side of 1/K: map the ends
    with np.errstate(invalid="ignore", divide="ignore"):
        ends = np.stack([((k - 1) * a_m + a - 1.0) / (k * a - 1.0) for a in (a_lo, a_hi)])
    lo, hi = ends.min(axis=0), ends.max(axis=0)
    straddles = (a_lo <= 1.0 / k) & (a_hi >= 1.0 / k)
    undefined = straddles | (hi < 0.0) | (lo > 1.0)
    lo = np.where(undefined, np.nan, np.clip(lo, 0.0, 1.0))
    hi = np.where(undefined, np.nan, np.clip(hi, 0.0, 1.0))
    return TrueAccuracyInterval(
        _pos0(lower),
        _pos0(independent),
        _pos0(upper),
        (_pos0(lo), _pos0(hi)),
        (_pos0(a_lo), _pos0(a_hi)),
        prob,
    )


def _accuracy_draws(posterior_or_draws) -> np.ndarray:
    from ..core.posterior import Posterior

    if isinstance(posterior_or_draws, Posterior):
        values = posterior_or_draws.metric("accuracy").values
    elif isinstance(posterior_or_draws, xr.DataArray):
        values = posterior_or_draws.values
    else:
        if isinstance(posterior_or_draws, str | bytes) or posterior_or_draws is None:
            raise TypeError(
                "`posterior_or_draws` must be a Posterior, a DataArray or an array of accuracy "
                f"draws, got {posterior_or_draws!r}."
            )
        try:
            values = np.asarray(posterior_or_draws, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                "`posterior_or_draws` must be a Posterior, a DataArray or an array of accuracy "
                f"draws, got {type(posterior_or_draws).__name__}."
            ) from exc
    values = np.asarray(values, dtype=np.float64).ravel()
    if values.size == 0:
        raise ValueError("`posterior_or_draws` holds no draws.")
    finite = np.isfinite(values)
    if not finite.all():
        n_nan = int(np.isnan(values).sum())
        raise ValueError(
            f"The accuracy draws must be finite numbers in [0, 1], but {values.size - int(finite.sum())} "
            f"of {values.size} are not ({n_nan} NaN, {values.size - int(finite.sum()) - n_nan} infinite). "
            "Drop them (draws[np.isfinite(draws)]) or look at what produced them."
        )
    if values.min() < 0 or values.max() > 1:
        n_out = int(((values < 0) | (values > 1)).sum())
        raise ValueError(
            f"The accuracy draws must lie in [0, 1], but {n_out} of {values.size} do not (values from "
            f"{values.min():g} to {values.max():g}). Pass fractions, not percentages (0.96, not 96)."
        )
    return values


def _lattice_spacing(values: np.ndarray) -> float | None:
    """The common spacing of the draws' distinct values, or None when they are not on a lattice.

    Accuracy draws of ``n`` items are multiples of ``1/n``; a histogram whose bins ignore
    that spacing holds one or two lattice points per bin by turns and shows false dips.
    """
    u = np.unique(np.round(values, 12))  # k/n computed two ways can differ in the last bit
    if u.size < 2:
        return None
    gaps = np.diff(u)
    smallest = gaps.min()
    for divisor in range(1, 7):  # the observed values may skip lattice points
        d = smallest / divisor
        if d <= 1e-9:
            return None
        steps = gaps / d
        if np.all(np.abs(steps - np.round(steps)) < 1e-6):
            return float(d)
    return None


def _histogram_bins(values: np.ndarray, n_bins: int):
    """``n_bins`` for continuous draws; for lattice draws, edges halfway between lattice
    points, each bin holding the same number of lattice points."""
    d = _lattice_spacing(values)
    if d is None:
        return n_bins
    lo, hi = values.min(), values.max()
    n_points = int(round((hi - lo) / d)) + 1
    per_bin = int(np.ceil(n_points / n_bins))
    n_edges = int(np.ceil(n_points / per_bin)) + 1
    return lo - d / 2 + per_bin * d * np.arange(n_edges)


def _reported_reading(post):
    """``(prob, posterior interval, reported interval, how)`` for a fit of AnnotatorError whose
    ``summary`` reports another interval of the true accuracy than the posterior's; else None."""
    check = getattr(post, "gold_check", None)
    if check and check.get("n_gold", 0) >= 1:  # with gold items: the guarded interval
        g = post.guarded_accuracy()
        return g.prob, (g.posterior_lower, g.posterior_upper), (g.lower, g.upper), "guarded"
    identified = getattr(post, "identified_accuracy", None)
    if check is not None or not callable(identified):
        return None
    try:  # without gold items: the posterior's interval joined with the identified set
        r = identified(diagnosis="")  # the diagnosis is not needed for the interval
    except ValueError:  # a posterior without the fit's annotations has no identified set
        return None
    if not r.reported:
        return None
    return r.prob, (r.posterior_lower, r.posterior_upper), (r.lower, r.upper), "with the identified set"


def plot_true_accuracy(
    posterior_or_draws,
    *,
    measured,
    annotator_accuracy,
    n_classes=None,
    ax=None,
):
    """Plot the posterior of true accuracy against the measured accuracy and the bounds.

    Draws a histogram (and, with enough distinct draws, a kernel density estimate)
    of the true-accuracy draws, the band between the bounds of
    :func:`true_accuracy_bounds` (shaded), the measured accuracy (dashed) and the
    value under independent errors (dotted). For a fit of
    :class:`~bayeval.annotators.model.AnnotatorError` it also draws, as two bars under
    the density, the posterior's 90% interval and the interval its ``summary`` (and
    ``summary(["accuracy"])``, and the report) reports: with gold items the guarded one of
    :meth:`~bayeval.annotators.posterior.AnnotatorPosterior.guarded_accuracy` (never
    narrower than the gold items' own); without them the posterior's interval joined
    with the identified set of
    :meth:`~bayeval.annotators.posterior.AnnotatorPosterior.identified_accuracy`.

    Parameters
    ----------
    posterior_or_draws : Posterior, DataArray or array_like
        A :class:`bayeval.Posterior` (its ``metric("accuracy")`` is plotted, which
        needs predictions), or draws of the true accuracy.
    measured : float
        Measured accuracy (agreement with the annotator labels).
    annotator_accuracy : float
        Accuracy of the annotator labels used for the bounds: one number (for several
        annotators, the accuracy of the labels ``measured`` was taken against).
    n_classes : int, optional
        Number of classes for the independence value; by default the posterior's
        ``n_classes`` when it has one, else 2.
    ax : matplotlib Axes, optional
        Where to draw; a new figure by default.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.annotators.bounds import plot_true_accuracy
    >>> draws = np.random.default_rng(0).normal(0.91, 0.01, size=400)
    >>> ax = plot_true_accuracy(draws, measured=0.90, annotator_accuracy=0.96)
    >>> ax.get_xlabel()
    'true accuracy'
    """
    import matplotlib.pyplot as plt

    values = _accuracy_draws(posterior_or_draws)
    if n_classes is None:
        n_classes = getattr(posterior_or_draws, "n_classes", 2)
    measured_arr = _as_accuracy(measured, "measured")  # checked here, so its error names `measured`
    if measured_arr.size != 1:
        raise ValueError(f"`measured` must be one accuracy in [0, 1], got {measured_arr.size} values.")
    annotator_arr = _as_accuracy(annotator_accuracy, "annotator_accuracy")
    if annotator_arr.size != 1:
        raise ValueError(
            f"`annotator_accuracy` must be one accuracy (a number in [0, 1]), got {annotator_arr.size} "
            f"values {np.round(annotator_arr.ravel()[:5], 4).tolist()}: the figure draws one set of bounds. "
            "Pass the accuracy of the labels `measured` was taken against, or draw one figure per value "
            "(true_accuracy_bounds takes several at once)."
        )
    bounds = true_accuracy_bounds(measured, annotator_arr.ravel()[0], n_classes=n_classes)
    measured = float(measured_arr.ravel()[0])
    reading = _reported_reading(posterior_or_draws)
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.5), layout="constrained")
    lo = min(values.min(), bounds.lower, measured, reading[2][0] if reading else 1.0)
    hi = max(values.max(), bounds.upper, measured, reading[2][1] if reading else 0.0)
    pad = 0.05 * (hi - lo) + 1e-3
    ax.axvspan(bounds.lower, bounds.upper, color="0.9", zorder=0, label="bounds")
    n_distinct = np.unique(values).size
    bins = _histogram_bins(values, int(np.clip(np.sqrt(values.size), 10, 60)))
    if n_distinct > 1:
        ax.hist(values, bins=bins, density=True, color="C0", alpha=0.45, label="posterior")
    if n_distinct > 5 and values.std() > 0:
        from scipy.stats import gaussian_kde

        grid = np.linspace(values.min() - pad, values.max() + pad, 256)
        ax.plot(grid, gaussian_kde(values)(grid), color="C0")
    elif n_distinct == 1:
        ax.axvline(values[0], color="C0", label="posterior (single value)")
    ax.axvline(measured, color="k", ls="--", label=f"measured {measured:.3g}")
    if np.isfinite(bounds.independent):
        ax.axvline(bounds.independent, color="C1", ls=":", lw=2, label=f"independent {bounds.independent:.3g}")
    if reading is not None:
        prob, (p_lo, p_hi), (r_lo, r_hi), how = reading
        top = ax.get_ylim()[1]  # the two intervals go under the density, where nothing else is
        ax.set_yticks([t for t in ax.get_yticks() if 0 <= t <= top])  # a density: no ticks below 0
        ax.set_ylim(-0.22 * top, top)
        ax.axhline(0, color="0.6", lw=0.8)
        pct = f"{100 * prob:.0f}%"
        ax.hlines(-0.07 * top, p_lo, p_hi, color="C0", lw=3, label=f"posterior {pct} {p_lo:.3f}-{p_hi:.3f}")
        ax.hlines(-0.15 * top, r_lo, r_hi, color="C2", lw=5, label=f"reported {pct} ({how}) {r_lo:.3f}-{r_hi:.3f}")
    ax.set_xlim(lo - pad, hi + pad)
    ax.set_xlabel("true accuracy")
    ax.set_ylabel("density")
    ax.legend(loc="upper left", fontsize="small", frameon=False)
    return ax
