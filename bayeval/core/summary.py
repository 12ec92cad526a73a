"""Summaries of posterior draws: the HDI and the ``mean, sd, hdi_<lo>%, hdi_<hi>%`` table.

Every posterior's summary table has the columns :func:`summary_columns`; its rows are
made by :func:`summary_rows` (one per coordinate of a draws array) and put together by
:func:`summary_frame`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from . import _validate as V
from ._defaults import HDI_PROB, hdi_columns

__all__ = ["hdi", "summary_columns", "summary_rows", "summary_frame", "undefined_share", "undefined_sentence",
           "threshold_caveats", "looks_like_percent", "ThresholdWarning", "threshold_said",
           "warn_threshold"]


def hdi(samples, prob: float = HDI_PROB, axis: int = 0) -> np.ndarray:
    """Highest-density interval of samples along ``axis`` (vectorized over the rest).

    The narrowest interval spanning ``floor(prob * n) + 1`` of the sorted samples, as
    ArviZ computes it for unimodal distributions. NaN where any sample is NaN.

    Parameters
    ----------
    samples : array_like
    prob : float in (0, 1)
    axis : int

    Returns
    -------
    ndarray with ``axis`` replaced by a trailing axis of size 2 (lower, upper).

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import hdi
    >>> hdi(np.arange(101.0), 0.9).tolist()
    [0.0, 90.0]
    """
    prob = V.as_probability(prob, "hdi_prob", open_interval=True)
    x = np.moveaxis(np.asarray(samples, dtype=np.float64), axis, -1)
    n = x.shape[-1]
    if n == 0:
        raise ValueError("hdi needs at least one sample.")
    has_nan = np.isnan(x).any(axis=-1)
    x = np.sort(x, axis=-1)
    keep = min(n, int(np.floor(prob * n)) + 1)  # ArviZ's window
    widths = x[..., keep - 1 :] - x[..., : n - keep + 1]
    start = np.argmin(widths, axis=-1)[..., None]
    lo = np.take_along_axis(x, start, axis=-1)[..., 0]
    hi = np.take_along_axis(x, start + keep - 1, axis=-1)[..., 0]
    out = np.stack([lo, hi], axis=-1)
    out[has_nan] = np.nan
    return out


def summary_columns(hdi_prob: float = HDI_PROB) -> list[str]:
    """The columns of every posterior's summary table: ``mean, sd, hdi_<lo>%, hdi_<hi>%``.

    Examples
    --------
    >>> from bayeval.core.summary import summary_columns
    >>> summary_columns()
    ['mean', 'sd', 'hdi_5%', 'hdi_95%']
    """
    return ["mean", "sd", *hdi_columns(hdi_prob)]


def summary_rows(label: str, da: xr.DataArray, hdi_prob: float, sample_dims) -> list[tuple]:
    """``(name, mean, sd, hdi_lo, hdi_hi)`` of each coordinate of ``da`` over ``sample_dims``.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> from bayeval.core.summary import summary_rows
    >>> da = xr.DataArray(np.arange(200.0).reshape(2, 100), dims=("chain", "draw"))
    >>> name, mean, sd, lo, hi = summary_rows("x", da, 0.9, ("chain", "draw"))[0]
    >>> name, float(mean), float(lo), float(hi)
    ('x', 99.5, 0.0, 180.0)
    """
    other = [d for d in da.dims if d not in sample_dims]
    stacked = da.stack(_sample=sample_dims).transpose(*other, "_sample")
    values = stacked.values.reshape(-1, stacked.sizes["_sample"])
    # a metric undefined in some draws (ROC AUC where a draw has no negative or no positive):
    # summarize the draws where it is defined (:func:`undefined_share` says how many are not)
    if np.isfinite(values).all():  # every draw defined: all rows at once
        means = values.mean(axis=1)
        sds = values.std(axis=1, ddof=1) if values.shape[1] > 1 else np.full(values.shape[0], np.nan)
        bounds = hdi(values, hdi_prob, axis=1)
    else:
        means = np.full(values.shape[0], np.nan)
        sds = np.full(values.shape[0], np.nan)
        bounds = np.full((values.shape[0], 2), np.nan)
        for j, row in enumerate(values):
            row = row[np.isfinite(row)]
            if row.size:
                means[j] = row.mean()
                sds[j] = row.std(ddof=1) if row.size > 1 else np.nan
                bounds[j] = hdi(row, hdi_prob)
    names = []
    if other:
        grids = np.meshgrid(*[da[d].values for d in other], indexing="ij")
        digits = {d: _distinct_digits(da[d].values) for d in other}
        for idx in range(values.shape[0]):
            parts = []
            for d, g in zip(other, grids, strict=True):
                v = g.ravel()[idx]
                parts.append(f"{d}={v:.{digits[d]}g}" if isinstance(v, float | np.floating) else f"{d}={v}")
            names.append(f"{label}[{', '.join(parts)}]")
    else:
        names = [label]
    return [(n, m, s, b[0], b[1]) for n, m, s, b in zip(names, means, sds, bounds, strict=True)]


def _distinct_digits(values, least: int = 4) -> int:
    """The fewest significant digits (at least ``least``) at which the distinct values of a
    float coordinate print distinct, so that no two summary rows share a name (17 at most:
    every float64 prints distinct there)."""
    v = np.unique(np.asarray(values))
    if v.dtype.kind != "f" or v.size < 2:
        return least
    for digits in range(least, 18):
        if len({f"{x:.{digits}g}" for x in v}) == v.size:
            return digits
    return 17


def undefined_share(da: xr.DataArray, sample_dims=("chain", "draw")) -> float:
    """The largest share, over the other coordinates, of draws in which the metric is undefined
    (NaN: e.g. ROC AUC in a draw of labels with no negative); 0.0 when it is defined in every draw.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> from bayeval.core.summary import undefined_share
    >>> undefined_share(xr.DataArray(np.r_[np.nan, np.ones(3)].reshape(1, 4), dims=("chain", "draw")))
    0.25
    """
    other = [d for d in da.dims if d not in sample_dims]
    values = da.stack(_sample=sample_dims).transpose(*other, "_sample").values
    values = values.reshape(-1, values.shape[-1])
    return float(np.max(np.mean(~np.isfinite(values), axis=1))) if values.size else 0.0


def undefined_sentence(metric: str, share: float, *, nothing_flagged: bool = False) -> str:
    """What a summary says of a metric that is undefined in ``share`` of the draws.

    ``nothing_flagged``: the metric is a precision, undefined because its rule flags no
    item (in every draw, whatever the labels).

    Examples
    --------
    >>> from bayeval.core.summary import undefined_sentence
    >>> undefined_sentence("roc_auc", 0.004).split(":")[0]
    'roc_auc is undefined in 0.4% of the posterior draws'
    >>> undefined_sentence("precision[t=2]", 1.0, nothing_flagged=True).split(":")[0]
    'precision[t=2] is undefined'
    """
    if nothing_flagged:
        return (f"{metric} is undefined: its rule flags no item{' in some category' if share < 1 else ''} (no "
                "score reaches the threshold, or no prediction is positive), and precision is the share of "
                "positives among the flagged items. Its row is NaN, as the vetted-only value is; a rule that "
                "flags at least one item (a lower threshold) has a precision.")
    return (f"{metric} is undefined in {share:.1%} of the posterior draws: in those draws the labels drawn for the "
            "unvetted items leave it no positive or no negative to count. Its row summarizes the other draws (the "
            "metric given that it is defined); vet items of the class that is missing to pin it down.")


def threshold_caveats(scores, rows) -> list[str]:
    """What a summary says of metrics at a score threshold that flags no item (it lies above
    every score) or every item (at or below every score): their rows then describe a rule that
    predicts every item alike, whatever the labels (recall and F 0 where nothing is flagged),
    not an operating point of the classifier. Scores in [0, 1] with a threshold that reads as a
    percent (:func:`looks_like_percent`: 2 to 100, and an operating point once divided by 100)
    are asked about it: ``threshold=50`` for ``0.5``, but not ``threshold=1.5`` for ``0.015``.

    Parameters
    ----------
    scores : array_like
        The evaluation set's scores.
    rows : iterable of (str, float or None)
        Each metric row's label and its threshold (None: no threshold, nothing said).

    Returns
    -------
    list of str
        One sentence per such threshold, naming its rows.

    Examples
    --------
    >>> from bayeval.core.summary import threshold_caveats
    >>> threshold_caveats([0.2, 0.7, 0.999], [("recall[t=50]", 50.0), ("recall[t=0.5]", 0.5)])[0].split(";")[0]
    'recall[t=50]: the threshold 50 flags no item: it lies above every score (max 0.999)'
    """
    s = np.asarray(scores, dtype=np.float64)
    by_threshold: dict[float, list[str]] = {}
    for label, threshold in rows:
        if threshold is not None:
            by_threshold.setdefault(float(threshold), []).append(str(label))
    out = []
    for t, labels in by_threshold.items():
        flagged = int(np.sum(s >= t))
        if 0 < flagged < s.size:
            continue
        named = ", ".join(labels[:-1]) + (" and " if len(labels) > 1 else "") + labels[-1]
        if flagged == 0:
            said = (f"flags no item: it lies above every score (max {_apart(s.max(), t)}); the rule predicts every item "
                    "negative, so recall and F are 0 and precision is undefined whatever the labels")
        else:
            said = (f"flags every item: it lies at or below every score (min {_apart(s.min(), t)}); the rule predicts "
                    "every item positive, so recall is 1 and precision is the share of positives whatever "
                    "the ranking")
        hint = (f" The scores lie in [0, 1]: did you mean {t / 100:g}?" if looks_like_percent(s, t)
                else " A threshold within the scores' range is an operating point of the classifier.")
        # the threshold as given (0.99999996, not 1) and the scores' end told apart from it
        out.append(f"{named}: the threshold {repr(t).removesuffix('.0')} {said}.{hint}")
    return out


def looks_like_percent(scores, threshold: float) -> bool:
    """Whether a threshold that flags no item of scores in [0, 1] reads as a percent.

    It does when it lies in [2, 100] and, divided by 100, flags some items but not all (an
    operating point of the classifier). A value between 1 and 2 (``1.5``) is not read so: a
    typo or a cut-off on another scale is as likely as 1.5%.

    Examples
    --------
    >>> from bayeval.core.summary import looks_like_percent
    >>> s = [0.01, 0.2, 0.7, 0.999]
    >>> looks_like_percent(s, 50), looks_like_percent(s, 1.5), looks_like_percent(s, 100), looks_like_percent(s, 0.5)
    (True, False, False, False)
    """
    s = np.asarray(scores, dtype=np.float64)
    t = float(threshold)
    if not s.size or s.min() < 0 or s.max() > 1 or not 2 <= t <= 100:
        return False
    return 0 < int(np.sum(s >= t / 100)) < s.size


class ThresholdWarning(UserWarning):
    """Warned by ``Posterior.metric``, :func:`bayeval.vetted_only` and a comparison's methods
    (``Comparison.metric``, ``difference``, ``prob_better``...: once per call, naming the classifiers)
    for a metric at a score threshold that flags no item or every item (the sentence of
    :func:`threshold_caveats`). ``summary`` (a posterior's, a comparison's, and ``ranking``), the
    report and the command line say it among their caveats instead.

    Examples
    --------
    >>> import warnings
    >>> from bayeval.core.summary import ThresholdWarning
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", ThresholdWarning)  # e.g. where the caveat is said otherwise
    ...     warnings.warn("ignored", ThresholdWarning)
    """


def threshold_said(scores, name: str, threshold) -> list[str]:
    """What :func:`warn_threshold` warns, as sentences: one where ``threshold`` flags no item or
    every item of ``scores`` (:func:`threshold_caveats`' words), none otherwise.

    Parameters
    ----------
    scores : array_like or dict
        The scores; or ``{classifier: scores}`` (a :class:`bayeval.compare.Comparison`'s), each
        classifier named in its sentence.
    name : str
        The metric's name.
    threshold : float, dict or None
        One number, or (with a dict of scores) ``{classifier: number}``; None: nothing said.

    Returns
    -------
    list of str

    Examples
    --------
    >>> from bayeval.core.summary import threshold_said
    >>> threshold_said({"a": [0.2, 0.7], "b": [0.1, 3.0]}, "recall", 1.5)[0].split(";")[0]
    'recall of a at threshold=1.5: the threshold 1.5 flags no item: it lies above every score (max 0.7)'
    >>> threshold_said([0.2, 0.7], "recall", 0.5)
    []
    """
    if not isinstance(scores, dict):
        scores, threshold = {None: scores}, {None: threshold}
    elif not isinstance(threshold, dict):
        threshold = dict.fromkeys(scores, threshold)
    out = []
    for who, s in scores.items():
        t = threshold.get(who)
        if t is not None:
            of = "" if who is None else f" of {who}"
            out += threshold_caveats(s, [(f"{name}{of} at threshold={repr(float(t)).removesuffix('.0')}", t)])
    return out


def warn_threshold(scores, name: str, threshold) -> None:
    """Warn (:class:`ThresholdWarning`) where ``threshold`` flags no item or every item of
    ``scores``, in the words of :func:`threshold_caveats`; nothing otherwise. With
    ``{classifier: scores}`` (:func:`threshold_said`), one warning names each classifier whose
    scores the threshold flags none or all of.

    Examples
    --------
    >>> import warnings
    >>> from bayeval.core.summary import warn_threshold
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     warn_threshold([0.2, 0.7], "recall", 1.5)
    >>> str(w[0].message).split(";")[0]
    'bayeval: recall at threshold=1.5: the threshold 1.5 flags no item: it lies above every score (max 0.7)'
    """
    said = threshold_said(scores, name, threshold)
    if said:
        import warnings

        from ._diagnostics import user_stacklevel

        warnings.warn("bayeval: " + " ".join(said), ThresholdWarning, stacklevel=user_stacklevel())


def _apart(x: float, t: float) -> str:
    """``x`` with 4 significant digits, or as many more as put it on its side of ``t`` (a
    largest score 0.99999999 below a threshold 0.999999996 is not "1")."""
    x = float(x)
    for digits in range(4, 18):
        text = f"{x:.{digits}g}"
        if (float(text) >= t) == (x >= t) and (float(text) == t) == (x == t):
            return text
    return repr(x)


def summary_frame(rows, hdi_prob) -> pd.DataFrame:
    """The summary table of :func:`summary_rows`' rows, indexed by ``metric``.

    Examples
    --------
    >>> from bayeval.core.summary import summary_frame
    >>> summary_frame([("x", 0.5, 0.1, 0.3, 0.7)], 0.9).columns.tolist()
    ['mean', 'sd', 'hdi_5%', 'hdi_95%']
    """
    lo, hi = hdi_columns(hdi_prob)
    df = pd.DataFrame(rows, columns=["metric", "mean", "sd", lo, hi]).set_index("metric")
    return df
