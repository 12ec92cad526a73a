"""Metric evaluation over label draws: which metric a name means, a metric bound to one
evaluation set (:class:`MetricEvaluator`), the default threshold grid of the curves, and
the two baselines that use no model (:func:`vetted_only`, :func:`naive`).

A :class:`~bayeval.core.posterior.Posterior` applies a :class:`MetricEvaluator` to its
label draws, chunk by chunk; the baselines apply it to one row of labels.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import xarray as xr

from . import _validate as V
from . import metrics as M
from .data import EvalData
from .summary import warn_threshold

__all__ = ["resolve_metric", "check_metric_options", "MetricEvaluator", "default_thresholds", "metric_items",
           "point_metric", "vetted_only", "vetted_only_n", "naive"]

_CURVES = ("precision_recall_curve", "roc_curve")
_MAX_DEFAULT_THRESHOLDS = 201
# metrics undefined on labels without a positive (the kernels give a draw without one 0)
_NEED_POSITIVE = ("average_precision", "precision_at_recall")
# metrics whose undefined case is their zero_division; vetted-only makes it NaN
_ZERO_DIVISION_NAN = ("precision", "recall", "f_score", "recall_at_k")


def resolve_metric(metric) -> tuple[M.MetricSpec | None, Callable | None, str]:
    """(spec, custom_fn, name) for a metric name, kernel function or callable.

    Examples
    --------
    >>> from bayeval.core import metrics
    >>> from bayeval.core.evaluate import resolve_metric
    >>> spec, custom, name = resolve_metric(metrics.precision_at_k)
    >>> spec is metrics.METRICS["precision_at_k"], custom, name
    (True, None, 'precision_at_k')
    >>> resolve_metric(lambda labels, scores: labels.mean(axis=1))[2]
    '<lambda>'
    """
    if isinstance(metric, str):
        if metric not in M.METRICS:
            raise ValueError(
                f"Unknown metric {metric!r}. Known metrics: {sorted(M.METRICS)}; "
                "or pass a callable f(labels, scores, **kwargs)."
            )
        return M.METRICS[metric], None, metric
    if isinstance(metric, M.MetricSpec):
        return metric, None, metric.name
    if callable(metric):
        name = getattr(metric, "__name__", "custom")
        if getattr(metric, "__module__", None) == M.__name__ and name in M.METRICS:
            return M.METRICS[name], None, name
        return None, metric, name
    raise TypeError(f"`metric` must be a metric name, a bayeval.metrics function or a callable, got {metric!r}.")


def check_metric_options(metric, options: Mapping, *, how: str | None = None) -> str:
    """Resolve ``metric`` and check its ``options`` up front (unknown names, NaN values, a
    missing ``k`` or ``recall``), so that a loop fails before its first fit, not after; the
    metric's name. ``threshold`` and ``category`` are the metric pass's, not checked here.
    ``how``: where the caller takes the options, for the message (e.g. ``"k=10"``).

    Examples
    --------
    >>> from bayeval.core.evaluate import check_metric_options
    >>> check_metric_options("precision_at_k", {"k": 10})
    'precision_at_k'
    >>> check_metric_options("precision_at_k", {})
    Traceback (most recent call last):
    ...
    TypeError: Metric 'precision_at_k' needs the option `k`, and none was given (got no options). ...
    """
    spec, _, name = resolve_metric(metric)
    if spec is not None:
        opts = {k: v for k, v in options.items() if k not in ("threshold", "category")}
        spec.check_options(opts)
        spec.check_required(opts, how=how)
    return name


class MetricEvaluator:
    """A metric bound to one EvalData: prepared once, then applied to label rows.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import EvalData
    >>> from bayeval.core.evaluate import MetricEvaluator
    >>> ev = MetricEvaluator(EvalData([0.9, 0.6, 0.2]), "precision_at_k", kwargs={"k": 2})
    >>> ev(np.array([[1, 0, 0], [1, 1, 0]], dtype=np.int8)).tolist(), ev.dims
    ([0.5, 1.0], [])
    """

    def __init__(self, data: EvalData, metric, *, category=None, threshold=None, kwargs=None):
        #: what built this evaluator: ``MetricEvaluator(data, **ev.args)`` builds it again from
        #: the same data (a Dask worker does, rather than receive the prepared arrays)
        self.args = {"metric": metric, "category": category, "threshold": threshold, "kwargs": dict(kwargs or {})}
        kwargs = dict(kwargs or {})
        self.spec, self.custom, self.name = resolve_metric(metric)
        needs = self.spec.needs if self.spec is not None else "scores"
        if threshold is not None:
            if needs != "predictions":
                shown = threshold if isinstance(threshold, int | float | np.floating | np.integer) else 0.5
                raise ValueError(
                    f"`threshold` applies to metrics of hard predictions (precision, recall, "
                    f"f_score, accuracy), not to {self.name!r}. To give it to those metrics alone, put it in "
                    f"their own options: post.summary([\"{self.name}\", (\"precision\", {{\"threshold\": "
                    f"{float(shown):g}}})]) rather than post.summary([...], threshold=...)."
                )
            if isinstance(threshold, bool) or not isinstance(threshold, int | float | np.floating | np.integer):
                raise TypeError(f"`threshold` must be one number, got {threshold!r}." + self._several(threshold))
            if not np.isfinite(threshold):
                raise ValueError(
                    f"`threshold` must be a finite score cut-off, got {threshold}: with it every "
                    f"item would be predicted {'negative' if threshold != -np.inf else 'positive'} "
                    "and the metric would be silently wrong."
                )
            x = (data.scores >= float(threshold)).astype(np.int8)
        elif needs == "predictions":
            if data.predictions is None:
                raise ValueError(
                    f"Metric {self.name!r} needs hard predictions: pass threshold=<score cut-off>, "
                    "or build the EvalData with predictions=..."
                )
            x = data.predictions
        else:
            x = data.scores
        if self.spec is not None:
            self.spec.check_options(kwargs)
            self.spec.check_required(kwargs)  # a missing `k` says so, not an internal function's TypeError
        if self.spec is not None and self.spec.name == "precision" and "zero_division" not in kwargs:
            # its denominator (the items flagged) is the same in every draw: a rule that flags no item
            # has no precision in any draw, NaN as in vetted_only, not the kernel's 0 with an HDI [0, 0]
            kwargs["zero_division"] = np.nan
        if self.spec is not None and self.spec.name in _CURVES and kwargs.get("thresholds") is None:
            kwargs["thresholds"] = default_thresholds(data.scores)
            if self.spec.name == "roc_curve":
                kwargs["thresholds"] = np.r_[np.inf, kwargs["thresholds"][::-1]]
        category = V.as_category_mode(category, data.has_categories)
        self.category = category
        self.n_items = data.n_items
        if category == "pooled":
            self.groups = [np.arange(data.n_items)]
            self.cat_names = None
        else:
            codes = data.category_codes
            self.groups = [np.flatnonzero(codes == c) for c in range(data.category_names.size)]
            self.cat_names = data.category_names
        self.states = []
        for g in self.groups:
            if g.size == 0:
                self.states.append(None)
            elif self.spec is not None:
                self.states.append(self.spec.prepare(x if g.size == self.n_items else x[g], **kwargs))
            else:
                self.states.append((x[g], kwargs))
        # extra dims from the first non-empty group
        first = next((s for s in self.states if s is not None), None)
        if first is None:
            raise ValueError("There are no items to evaluate.")
        if self.spec is not None:
            self.extra = self.spec.dims(first)
        else:
            probe = np.asarray(self.custom(np.zeros((1, self.groups[0].size), dtype=np.int8), first[0], **first[1]))
            self.extra = [(f"{self.name}_dim_{j}", np.arange(m)) for j, m in enumerate(probe.shape[1:])]
        self.extra_shape = tuple(len(c) for _, c in self.extra)

    def _several(self, threshold) -> str:
        """The advice for several thresholds given as one (``threshold=[0.3, 0.5]``), else ''."""
        try:
            values = [float(v) for v in threshold] if not isinstance(threshold, str | bytes | Mapping) else []
        except (TypeError, ValueError):
            values = []
        if len(values) < 2:
            return ""
        a, b = (f"{v:g}" for v in values[:2])
        return (f" For several thresholds give one entry per threshold, e.g. post.summary([(\"{self.name}\", "
                f"{{\"threshold\": {a}}}), (\"{self.name}\", {{\"threshold\": {b}}})]), or read them off the "
                f"curve: post.metric(\"precision_recall_curve\", thresholds=[{a}, {b}]).")

    def check_top_k(self, name: str = "k", pooled: str = 'category="pooled"') -> None:
        """Refuse a ``k`` of ``precision_at_k`` or ``recall_at_k`` above the items the metric is
        computed on: all of them, and with ``category`` "each" or "mean" each category's own;
        nothing for other metrics. Said by the
        public calls (:meth:`bayeval.Posterior.metric`), not here for every evaluation:
        :func:`vetted_only` ranks the vetted items alone, fewer than ``k`` until ``k`` are
        vetted, and says NaN there."""
        if self.spec is None or self.spec.name not in V.TOP_K_METRICS:
            return
        sizes = None if self.cat_names is None else {
            c: g.size for c, g in zip(self.cat_names, self.groups, strict=True)}
        V.check_top_k(self.args["kwargs"]["k"], self.n_items, name, metric=self.spec.name, categories=sizes,
                      pooled=pooled)

    def __call__(self, labels2d: np.ndarray) -> np.ndarray:
        rows = labels2d.shape[0]
        outs = []
        for g, st in zip(self.groups, self.states, strict=True):
            if st is None:
                outs.append(np.full((rows,) + self.extra_shape, np.nan))
                continue
            z = labels2d if g.size == self.n_items else labels2d[:, g]
            if self.spec is not None:
                res = self.spec.compute(z, st)
            else:
                res = np.asarray(self.custom(z, *st[:1], **st[1]), dtype=np.float64)
                if res.shape[:1] != (rows,):
                    raise ValueError(
                        f"Custom metric {self.name!r} returned shape {res.shape}; it must return one "
                        f"value (or one array) per label row, i.e. a leading axis of {rows}."
                    )
            outs.append(np.asarray(res, dtype=np.float64).reshape((rows,) + self.extra_shape))
        if self.cat_names is None:
            return outs[0]
        out = np.stack(outs, axis=1)
        if self.category == "mean":
            return out.mean(axis=1)
        return out

    @property
    def dims(self) -> list[str]:
        lead = ["category"] if self.category == "each" else []
        return lead + [d for d, _ in self.extra]

    @property
    def coords(self) -> dict:
        c = {d: v for d, v in self.extra}
        if self.category == "each":
            c["category"] = self.cat_names
        return c


def default_thresholds(scores: np.ndarray) -> np.ndarray:
    """Candidate thresholds (ascending): the distinct scores if there are few, else
    evenly spaced score quantiles *and* the scores at geometrically spaced ranks from
    the top (ranks 1, 2, 3, ..., N).

    The ranks matter for rare positives: with 0.5% prevalence every threshold worth
    choosing lies among the top 1-2% of the scores, where evenly spaced quantiles
    leave only two or three candidates.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.core.evaluate import default_thresholds
    >>> default_thresholds(np.array([0.3, 0.1, 0.3, 0.7])).tolist()
    [0.1, 0.3, 0.7]
    >>> t = default_thresholds(np.linspace(0, 1, 10_000))
    >>> bool(t.size < 500 and t[-1] == 1.0)
    True
    """
    uniq = np.unique(scores)
    if uniq.size <= _MAX_DEFAULT_THRESHOLDS:
        return uniq
    grid = np.quantile(scores, np.linspace(0, 1, _MAX_DEFAULT_THRESHOLDS), method="inverted_cdf")
    ranks = np.unique(np.round(np.geomspace(1, uniq.size, _MAX_DEFAULT_THRESHOLDS)).astype(np.int64))
    top = uniq[uniq.size - ranks]  # the rank-r largest distinct score
    return np.unique(np.concatenate([grid, top]))


def metric_items(metrics, *, call: str | None = None, shared: Mapping | None = None) -> list[tuple[str, Any, dict]]:
    """``(label, metric, options)`` of each entry of a summary's ``metrics`` argument.

    An entry is a name, a function, or ``(name, {options})``; a mapping gives labels.
    Two unlabelled entries of one metric with different options get distinct labels.
    ``call``: the call that takes the entries, up to where they go (e.g. ``"post.summary("``); an
    entry that lacks an option its metric needs (``k``, ``recall``), given neither in its own
    options nor in ``shared`` (the options the call passes to every metric), is refused up front,
    the message showing the entry in that call's form (``post.summary([('precision_at_k', {'k':
    10})])``).

    Examples
    --------
    >>> from bayeval.core.evaluate import metric_items
    >>> [label for label, _, _ in metric_items(["average_precision", ("precision_at_k", {"k": 10}),
    ...                                         ("precision_at_k", {"k": 100})])]
    ['average_precision', 'precision_at_k[k=10]', 'precision_at_k[k=100]']
    """
    if isinstance(metrics, str | M.MetricSpec) or callable(metrics):
        metrics = [metrics]
    example = ("e.g. [\"average_precision\", (\"precision_at_k\", {\"k\": 10})], or "
               "{\"AP\": \"average_precision\"} to name the rows")
    if metrics is None or not isinstance(metrics, Iterable):
        raise TypeError(f"`metrics` must be a metric name, a list of metrics or a dict naming them ({example}); "
                        f"got {V.describe(metrics)}. Leave it out for the default.")
    if not isinstance(metrics, Mapping):
        metrics = list(metrics)
    if not len(metrics):
        raise ValueError(f"`metrics` is empty: name at least one metric ({example}), or leave it out for the "
                         "default.")
    out = []
    if isinstance(metrics, Mapping):
        pairs = list(metrics.items())
    else:
        pairs = [(None, m) for m in metrics]
    for label, entry in pairs:
        if isinstance(entry, tuple):
            if len(entry) != 2 or not isinstance(entry[1], Mapping):
                raise TypeError(f"A metric entry must be a name or (name, {{options}}), got {entry!r}.")
            metric, options = entry[0], dict(entry[1])
        else:
            metric, options = entry, {}
        spec, _, name = resolve_metric(metric)
        if call is not None and spec is not None:  # a missing `k` said in the form of the call that raised
            entry = "(" + _braces(repr(name)) + ", {dict})"
            form = f"{call}[{entry}])" if label is None else f"{call}{{{{{_braces(repr(label))}: {entry}}}}})"
            given = {k: v for k, v in {**(shared or {}), **options}.items() if k not in _PASS_OPTIONS}
            spec.check_required(given, how=form)
        out.append((label or name, metric, options))
    # two unlabelled entries of one metric with different options (k=10, k=100) get
    # distinct names: "precision_at_k[k=10]", "precision_at_k[k=100]"
    auto = [label is None for label, _ in pairs]
    names = [lab for lab, _, _ in out]
    for i, (lab, metric, options) in enumerate(out):
        if auto[i] and options and names.count(lab) > 1:
            # a float as given where :g would round it (threshold=0.99999996 is not "1")
            shown = ", ".join(f"{k}={v:g}" if isinstance(v, float) and float(f"{v:g}") == v else f"{k}={v}"
                              for k, v in options.items())
            out[i] = (f"{lab}[{shown}]", metric, options)
    return out


#: keywords of a metric pass (``post.metric``), not options of the metric
_PASS_OPTIONS = ("threshold", "category", "chunk_size", "progressbar", "client")


def _braces(text: str) -> str:
    """``text`` kept as it is by ``str.format``."""
    return text.replace("{", "{{").replace("}", "}}")


# ------------------------------------------------------------------ baselines


def point_metric(data: EvalData, labels: np.ndarray, metric, kwargs) -> xr.DataArray:
    """The metric of one row of labels (``kwargs``: its options, ``category=``, ``threshold=``).

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import EvalData
    >>> from bayeval.core.evaluate import point_metric
    >>> float(point_metric(EvalData([0.9, 0.6, 0.2]), np.array([1, 0, 1]), "precision_at_k", {"k": 2}))
    0.5
    """
    category = kwargs.pop("category", None)
    threshold = kwargs.pop("threshold", None)
    ev = MetricEvaluator(data, metric, category=category, threshold=threshold, kwargs=kwargs)
    out = ev(labels[None].astype(np.int8))[0]
    return xr.DataArray(out, dims=tuple(ev.dims), coords=ev.coords, name=ev.name)


def vetted_only(data: EvalData, metric, **kwargs) -> xr.DataArray:
    """The metric on the vetted items alone (active testing's eq. 3).

    For a random vetted subset it estimates the pool's metric, noisily; for ranking metrics
    the vetted items are ranked among themselves. Not so for a metric cut at a rank ``k``
    (precision and recall at ``k``): its value is that of the ``k`` highest-scored vetted
    items, which, with ``n`` of ``N`` items vetted at random, stand for roughly the pool's
    top ``k * N / n``, not its top ``k`` -- the vetted items' own precision at ``k``, no
    estimate of the pool's. Categories without vetted items give NaN, and
    so does precision/recall at ``k`` when fewer than ``k`` items are vetted (the
    paper's "not applicable until K items are vetted"), unless every item is vetted
    (then the vetted items are the pool, and P@K is its value, as :mod:`bayeval.metrics`
    computes it). A metric undefined on the vetted labels is NaN too, not the kernel's
    convention for a draw: average precision and precision at a recall level where no
    vetted item is positive, and precision, recall, F and recall at ``k`` where they
    would divide by zero (unless ``zero_division=`` is given).

    Parameters
    ----------
    data : EvalData
    metric : str or callable
    **kwargs
        Options of the metric, plus ``category=`` and ``threshold=`` as in
        :meth:`Posterior.metric` (a threshold that flags no item or every item of the pool
        warns, :class:`bayeval.core.summary.ThresholdWarning`).

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import EvalData, vetted_only
    >>> d = EvalData([0.9, 0.8, 0.3, 0.1], [1, np.nan, 0, 1])
    >>> round(float(vetted_only(d, "average_precision")), 6)
    0.833333
    """
    if not isinstance(data, EvalData):
        raise TypeError(f"`data` must be an EvalData, got {type(data).__name__}.")
    if data.n_vetted == 0:
        raise ValueError("No item is vetted: vetted_only needs at least one vetted label.")
    spec, _, name = resolve_metric(metric)
    options = dict(kwargs)
    if V.as_category_mode(options.get("category"), data.has_categories) == "mean":
        # each category's own value (NaN where undefined), then their mean
        return vetted_only(data, metric, **{**options, "category": "each"}).mean("category", skipna=False)
    if spec is not None and name in _ZERO_DIVISION_NAN and "zero_division" not in options:
        options["zero_division"] = np.nan  # undefined on the vetted labels: NaN, not the kernel's 0
    sub = data.subset(data.vetted)
    out = point_metric(sub, sub.labels, metric, dict(options))
    warn_threshold(data.scores, name, options.get("threshold"))  # above every score: recall 0, silently
    each = "category" in out.dims

    def per_category(x: np.ndarray):
        if not each:
            return x.sum()
        counts = np.bincount(sub.category_codes, weights=x, minlength=sub.category_names.size)
        return xr.DataArray(counts, dims="category", coords={"category": sub.category_names})

    if spec is not None and name in _NEED_POSITIVE:
        out = out.where(per_category(sub.labels.astype(np.float64)) > 0)
    if name in ("precision_at_k", "recall_at_k"):
        ks = xr.DataArray(np.atleast_1d(kwargs["k"]), dims="k") if "k" in out.dims else kwargs["k"]
        n = per_category(np.ones(sub.n_items))
        if each:
            total = np.bincount(data.category_codes, minlength=data.category_names.size)
            everything = xr.DataArray(n.values == total, dims="category", coords={"category": sub.category_names})
        else:
            everything = n == data.n_items
        out = out.where((ks <= n) | everything)  # every item vetted: the pool's own P@K, as the kernel defines it
    return out


def vetted_only_n(data: EvalData, metric, **kwargs) -> xr.DataArray:
    """How many vetted items the :func:`vetted_only` value of a metric rests on.

    Precision (at ``threshold=``, or of the data's predictions) rests on the vetted items
    flagged positive, recall and recall at ``k`` on the vetted positives, the F score on
    the vetted items flagged or positive, precision at ``k`` on the ``k`` top-scored
    vetted items (none when fewer are vetted: it is undefined, unless every item is
    vetted), and every other metric on all the vetted items. Drawn at random, ``n`` of them
    leave the vetted-only value uncertain by up to about ``1 / sqrt(n)`` -- but at a rank
    ``k`` it estimates the pool's metric at a rank about ``N / n`` times larger, not at ``k``
    (see :func:`vetted_only`); not drawn at random, it is no estimate of the pool's value
    at all. With ``category="each"`` one count per category; with ``"mean"`` their
    sum.

    Parameters
    ----------
    data : EvalData
    metric : str or callable
    **kwargs
        As for :func:`vetted_only`.

    Returns
    -------
    xarray.DataArray
        Integer counts, with the category and ``k`` dimensions of :func:`vetted_only`'s
        value (0 where nothing is vetted).

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import EvalData
    >>> from bayeval.core.evaluate import vetted_only_n
    >>> d = EvalData([0.9, 0.8, 0.6, 0.3, 0.1], [1, np.nan, 0, 1, 0])
    >>> int(vetted_only_n(d, "precision", threshold=0.5)), int(vetted_only_n(d, "recall", threshold=0.5))
    (2, 2)
    >>> int(vetted_only_n(d, "precision_at_k", k=3)), int(vetted_only_n(d, "average_precision"))
    (3, 4)
    """
    if not isinstance(data, EvalData):
        raise TypeError(f"`data` must be an EvalData, got {type(data).__name__}.")
    _, _, name = resolve_metric(metric)
    options = dict(kwargs)
    mode = V.as_category_mode(options.get("category"), data.has_categories)
    if mode == "mean":
        return vetted_only_n(data, metric, **{**options, "category": "each"}).sum("category")
    vetted = np.asarray(data.vetted, dtype=bool)

    def count(mask: np.ndarray) -> xr.DataArray:
        if mode == "each":
            c = np.bincount(data.category_codes[mask], minlength=data.category_names.size)
            return xr.DataArray(c.astype(np.int64), dims="category", coords={"category": data.category_names})
        return xr.DataArray(np.int64(mask.sum()))

    positive = vetted & (np.nan_to_num(np.asarray(data.labels, dtype=np.float64)) == 1)
    if name in ("precision", "f_score"):
        threshold = options.get("threshold")
        if threshold is None and data.predictions is None:
            raise ValueError(f"Metric {name!r} needs hard predictions: pass threshold=<score cut-off>, "
                             "or build the EvalData with predictions=...")
        flagged = (data.scores >= float(threshold)) if threshold is not None else (np.asarray(data.predictions) == 1)
        return count(vetted & flagged) if name == "precision" else count(vetted & (flagged | positive))
    if name in ("recall", "recall_at_k"):
        return count(positive)
    if name == "precision_at_k":  # undefined (0 items) below k vetted items, unless every item is vetted
        ks, scalar = V.as_k(options["k"])
        k = np.int64(ks[0]) if scalar else xr.DataArray(np.asarray(ks, dtype=np.int64), dims="k", coords={"k": ks})
        n, total = count(vetted), count(np.ones(data.n_items, dtype=bool))
        return xr.where((k <= n) | (n == total), np.minimum(k, n), 0)
    return count(vetted)


def naive(data: EvalData, metric, **kwargs) -> xr.DataArray:
    """The metric with noisy labels standing in for unvetted ones (eqs. 4-5).

    Vetted items use their vetted label, the others their noisy label.

    Parameters
    ----------
    data : EvalData
        Must have ``noisy_labels``.
    metric : str or callable
    **kwargs
        As for :func:`vetted_only`.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import EvalData, naive
    >>> d = EvalData([0.9, 0.8, 0.3], [np.nan, 1, np.nan], noisy_labels=[1, 0, 0])
    >>> float(naive(d, "precision_at_k", k=2))
    1.0
    """
    if not isinstance(data, EvalData):
        raise TypeError(f"`data` must be an EvalData, got {type(data).__name__}.")
    if data.noisy_labels is None:
        raise ValueError("naive() needs noisy labels: build the EvalData with noisy_labels=...")
    z = np.where(data.vetted, data.labels, data.noisy_labels)
    return point_metric(data, z, metric, dict(kwargs))
