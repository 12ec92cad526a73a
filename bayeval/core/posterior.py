"""Posterior: parameter draws + reproducible label draws + metric distributions.

Every model returns a :class:`Posterior`. It holds the parameter draws (an
``arviz.InferenceData`` with dims ``chain, draw``) and a function that maps one
chunk of parameter draws to each item's probability of being positive,
``P(z_i = 1 | theta, data)``. Label draws ``(chain, draw, item)`` are generated
from those probabilities in chunks of draws, each draw from its own random stream
derived from the posterior's seed and its ``(chain, draw)`` index -- so every
metric is computed in bounded memory and the same seed gives the same draws
whatever the chunk size. Vetted items equal their vetted label in every draw.

Every posterior of bayeval derives from :class:`BasePosterior`: the parameter draws
(``idata``), how they were sampled (``sampling``, ``convergence``, ``model_spec``), a
summary table with the columns ``mean, sd, hdi_<lo>%, hdi_<hi>%`` and the
hooks :func:`bayeval.report.report` reads (:meth:`BasePosterior.report_sections`,
:meth:`BasePosterior.diagnostics_table`, :meth:`BasePosterior.check_convergence`).
:class:`Posterior` adds the label-draw engine; its ``K``-class counterpart
(:class:`bayeval.annotators.CategoricalPosterior`) draws class indices through
the same engine, and :class:`bayeval.rankings.model.RankingPosterior` (draws of
pairwise preferences, no labels) derives from :class:`BasePosterior` alone.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Iterator, Mapping

import arviz as az
import numpy as np
import pandas as pd
import xarray as xr

from . import _validate as V
from ._defaults import HDI_PROB
from .data import EvalData
from .evaluate import MetricEvaluator, metric_items, resolve_metric
from .summary import (ThresholdWarning, summary_frame, summary_rows, threshold_caveats, undefined_sentence,
                      undefined_share, warn_threshold)

__all__ = ["BasePosterior", "Posterior", "check_posterior"]

CHUNK_BYTES = V.LABEL_CHUNK_BYTES  # target working set of one chunk of label draws (~128 MiB; 1 << 27)
#: Label draws are kept in memory, one bit per label, when they fit in this many bytes
#: (100,000 items x 5,000 draws = 62.5 MB; K-class draws take ceil(log2 K) bits per
#: label): the second and later passes over the draws
#: (a metric after another, expected-change selection after an estimate) unpack them
#: instead of drawing them again (about 50x cheaper: 0.03 s vs 1.49 s at that size).
_CACHE_BYTES = 1 << 26


# -------------------------------------------------------------- the posterior family


class BasePosterior:
    """What every posterior of bayeval shares, whatever it is a posterior of.

    The parameter draws (:attr:`idata`, dims ``chain, draw, ...``), how they were made
    (:attr:`sampling`, :attr:`convergence` and :attr:`model_spec`, set by a model's
    ``fit``; None for a posterior built by hand), a :meth:`summary` table whose columns
    are :func:`summary_columns` (plus any the posterior adds), :meth:`to_inference_data`,
    and the hooks the report reads. Subclasses: :class:`Posterior` (labels
    of an evaluation set, and its metrics), the ``K``-class
    :class:`bayeval.annotators.CategoricalPosterior`, and
    :class:`bayeval.rankings.model.RankingPosterior` (pairwise preferences).

    Parameters
    ----------
    idata : arviz.InferenceData
        Parameter draws in its ``posterior`` group, dims ``(chain, draw, ...)``.

    Examples
    --------
    >>> import arviz as az
    >>> import numpy as np
    >>> from bayeval.core.posterior import BasePosterior
    >>> post = BasePosterior(az.from_dict(posterior={"x": np.zeros((2, 50))}))
    >>> post.n_chains, post.n_draws, post.sampling, post.check_convergence()
    (2, 50, None, None)
    """

    #: how the fit was sampled (a :class:`bayeval.core.sampling.SamplingInfo`)
    sampling = None
    #: the fit's diagnostics dict (:func:`bayeval.core._diagnostics.check_convergence`)
    convergence = None
    #: the model that made the fit
    model_spec = None
    #: whether :meth:`curve_draws` gives the calibration curve ``P(y = 1 | score)``
    has_curves = False
    #: the sampler's name, where the posterior records it (the report's first line says it)
    sampler = None

    def __init__(self, idata: az.InferenceData):
        if not hasattr(idata, "posterior"):
            raise TypeError("`idata` must be an arviz.InferenceData with a `posterior` group.")
        post = idata.posterior
        if "chain" not in post.sizes or "draw" not in post.sizes:
            raise ValueError(f"idata.posterior must have dims chain and draw, got {dict(post.sizes)}.")
        self.idata = idata
        self.n_chains = int(post.sizes["chain"])
        self.n_draws = int(post.sizes["draw"])

    def summary(self, *args, **kwargs) -> pd.DataFrame:
        """Mean, sd and HDI of what the posterior is about (columns: :func:`summary_columns`)."""
        raise NotImplementedError(f"{type(self).__name__} defines no summary().")

    def to_inference_data(self) -> az.InferenceData:
        """A copy of :attr:`idata` (subclasses add groups, e.g. the metrics' draws)."""
        return self.idata.copy()

    # ------------------------------------------------------------ report hooks

    def report_sections(self) -> tuple[str, ...]:
        """The model-specific sections :func:`bayeval.report.report` adds for this posterior.

        ``"calibration"`` (the calibration curve and the candidates' comparison) or
        ``"fit"`` (the score-mixture fit and its posterior predictive check); none by
        default. The sections every report has (data, metrics, constraints, vetting,
        diagnostics) are not listed.
        """
        return ()

    def diagnostics_table(self) -> pd.DataFrame | None:
        """Per-parameter sampler diagnostics for the report, or None where there are none."""
        return None

    def reported_interval(self, metric, options, hdi_prob: float):
        """``((lower, upper), sentence)`` where the interval a model reports for a metric is
        not the HDI of its draws (e.g. an annotator-error fit's guarded or identified true
        accuracy), so that :func:`bayeval.report.report` shows that one and says why; None
        (the default) otherwise.

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval import EvalData, Posterior
        >>> post = Posterior.from_probabilities(EvalData([0.9, 0.1], [1, np.nan]), [1, 0.2], draws=10)
        >>> post.reported_interval("average_precision", {}, 0.9) is None
        True
        """
        return None

    def reported_reading(self, metric, options, hdi_prob: float) -> str | None:
        """How :func:`bayeval.report.report` reads a metric's row where :meth:`reported_interval`
        gives one, that interval not being a posterior probability interval: a sentence with the
        fields ``{metric}`` (e.g. "accuracy on these 400 items"), ``{lower}``, ``{upper}`` and
        ``{mean}`` (the posterior mean); None (the default): the report reads the row's interval
        as the posterior's ("With 90% probability the ... lies between ...").

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval import EvalData, Posterior
        >>> post = Posterior.from_probabilities(EvalData([0.9, 0.1], [1, np.nan]), [1, 0.2], draws=10)
        >>> post.reported_reading("average_precision", {}, 0.9) is None
        True
        """
        return None

    def check_convergence(self, *, warn: bool = True) -> dict | None:
        """The diagnostics dict of this fit, or None when no sampler made it.

        By default :attr:`convergence` (what ``fit`` computed), else
        :func:`bayeval.core._diagnostics.check_convergence` over every parameter when the
        posterior has a :meth:`diagnostics_table`; models with their own checks
        (``post.check()``) return those.
        """
        if self.convergence:
            return dict(self.convergence)
        table = self.diagnostics_table()
        if table is None or not len(table):
            return None
        from ._diagnostics import check_convergence

        return check_convergence(self.idata, self.sampling, list(self.idata.posterior.data_vars), warn=warn)


# ------------------------------------------------------------------- Posterior


def _metric_attrs(ev: MetricEvaluator) -> dict:
    """What a metric's draws were computed with, as attributes a netCDF file keeps: the metric's
    name and each one-value option (``threshold``, ``beta``, ``k``, ``category``...); an option
    with several values is a coordinate of the draws already. True/False are written as text."""
    attrs = {"metric": str(ev.name)}
    given = {"category": ev.args["category"], "threshold": ev.args["threshold"], **ev.args["kwargs"]}
    for key, value in given.items():
        if isinstance(value, np.generic):
            value = value.item()
        if isinstance(value, bool):
            attrs[key] = str(value)
        elif isinstance(value, int | float | str):
            attrs[key] = value
    return attrs


class Posterior(BasePosterior):
    """Posterior over the true labels of an evaluation set, and over its metrics.

    Parameters
    ----------
    data : EvalData
        The evaluation set the model was fitted to.
    idata : arviz.InferenceData
        Parameter draws in its ``posterior`` group, dims ``(chain, draw, ...)``.
    probability : callable
        ``probability(params) -> array`` where ``params`` maps each variable of
        ``idata.posterior`` to its values for a chunk of draws (leading axis = the
        draws of the chunk) and the result, of shape ``(n_chunk, n_items)`` or
        ``(n_items,)``, is ``P(z_i = 1 | theta, data)`` for every item.
    random_seed : None, int, numpy.random.SeedSequence or numpy.random.Generator
        Seed of the label draws: the same seed gives the same draws. None draws fresh
        entropy once (kept on the object); a Generator is drawn from once.
    model : str, optional
        A name for summaries and reports.
    population : callable, optional
        ``population(metric, **kwargs) -> DataArray`` giving the population version of
        a metric from the parameters alone, where the model defines it.

    Notes
    -----
    The label draws are generated on demand, chunk by chunk, from one random stream per
    draw. When all of them fit in 64 MiB at one bit per label (e.g. 100,000 items x
    5,000 draws) they are also kept, packed, after the first pass, so later metrics and
    expected-change selection unpack them instead of drawing them again (about 50 times
    cheaper; ``benchmarks/results/selection_speed.md``). The draws are the same either way.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import EvalData, Posterior
    >>> data = EvalData([0.9, 0.8, 0.3, 0.1], [1, np.nan, np.nan, 0])
    >>> post = Posterior.from_probabilities(data, [1.0, 0.7, 0.2, 0.0], draws=500, random_seed=0)
    >>> ap = post.metric("average_precision")
    >>> ap.dims, ap.shape
    (('chain', 'draw'), (1, 500))
    """

    def __init__(
        self,
        data: EvalData,
        idata: az.InferenceData,
        probability: Callable[[Mapping[str, np.ndarray]], np.ndarray],
        *,
        random_seed: int | np.random.SeedSequence | np.random.Generator | None = None,
        model: str | None = None,
        population: Callable[..., xr.DataArray] | None = None,
    ):
        if not isinstance(data, EvalData):
            raise TypeError(f"`data` must be an EvalData, got {type(data).__name__}.")
        if not hasattr(idata, "posterior"):
            raise TypeError("`idata` must be an arviz.InferenceData with a `posterior` group.")
        if not callable(probability):
            raise TypeError("`probability` must be a callable params -> P(z = 1) per item.")
        super().__init__(idata)
        self.data = data
        self._probability = probability
        self._population = population
        self.model = model or "model"
        seed = V.as_seed_sequence(random_seed)
        # what reproduces these draws: the int as given, a Generator's one draw (an
        # int), a SeedSequence as given; None stays None (fresh entropy, not repeatable)
        if random_seed is None or isinstance(random_seed, np.random.SeedSequence):
            self.random_seed = random_seed
        else:
            self.random_seed = int(seed.entropy)
        self._entropy = seed.entropy
        self._spawn_key = tuple(seed.spawn_key)
        # the items whose label every draw keeps, and that label
        self._fixed, self._fixed_values = self._fixed_labels()
        # the label-draw cache: ceil(log2 K) bit planes of packed labels per draw
        self._planes = max(1, int(np.ceil(np.log2(self.n_classes))))
        row_bytes = self._planes * ((data.n_items + 7) // 8)
        self._bits = None  # (chain, draw, planes x packed items), filled as draws are generated
        self._bits_filled = None
        if self.n_chains * self.n_draws * row_bytes <= _CACHE_BYTES:
            self._bits = np.zeros((self.n_chains, self.n_draws, row_bytes), dtype=np.uint8)
            self._bits_filled = np.zeros((self.n_chains, self.n_draws), dtype=bool)

    #: classes a label takes (the K-class posterior sets its own)
    n_classes = 2

    def _fixed_labels(self) -> tuple[np.ndarray, np.ndarray]:
        """The items whose label every draw keeps (the vetted ones), and their labels."""
        idx = np.flatnonzero(self.data.vetted)
        return idx, self.data.labels[idx].astype(np.int8)

    # ---------------------------------------------------------------- builders

    @classmethod
    def from_probabilities(
        cls,
        data: EvalData,
        p,
        *,
        draws: int = 1000,
        chains: int = 1,
        random_seed: int | np.random.SeedSequence | np.random.Generator | None = None,
        check: bool = True,
        max_memory_gb: float | None = None,
    ) -> Posterior:
        """A plug-in Posterior that *trusts* given per-item probabilities ``p(z_i = 1)``.

        Unvetted labels are independent Bernoulli(``p_i``), vetted labels fixed (the
        active-testing paper's learned estimator). No PyMC involved, so the metrics and
        selection work with probabilities from any source. It never learns from the
        vetted labels: if ``p`` is miscalibrated, the intervals are tight and wrong (on
        pools whose model reported ``q = p**2``, 90% intervals for accuracy covered 0
        of 300 times: ``benchmarks/results/real_scores_ppi.md``). To learn the calibration from the vetted labels, use
        :func:`bayeval.fit` (or :class:`bayeval.models.Calibration`), which is what the
        validation in ``docs/validation.md`` supports.

        Parameters
        ----------
        data : EvalData
        p : array_like of shape (n_items,), or (n_samples, n_items)
            Probabilities in [0, 1]. A 2-D array gives one probability vector per
            draw (e.g. from a bootstrap); then ``draws = n_samples`` and ``chains = 1``.
        draws, chains : int
            Number of label draws per chain (ignored for 2-D ``p``).
        random_seed : None, int, numpy.random.SeedSequence or numpy.random.Generator
            Seed of the label draws (as in :class:`Posterior`).
        check : bool, default True
            Warn when the vetted labels contradict ``p``: a likelihood-ratio test of the
            logistic recalibration ``logit P(y = 1) = a + b logit(p)`` against ``a = 0,
            b = 1`` on the vetted items rejects at level 0.01 (needs 5 or more vetted
            items).
        max_memory_gb : float, optional
            A larger ``chains * draws`` than fits in this much memory (default: the
            environment variable ``BAYEVAL_MAX_MEMORY_GB``, else 4 GB) raises a
            ``ValueError`` up front instead of running out of memory later.

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval import EvalData, Posterior
        >>> data = EvalData([0.9, 0.5, 0.1], [np.nan, np.nan, 0])
        >>> post = Posterior.from_probabilities(data, [0.9, 0.5, 0.1], draws=200, random_seed=1)
        >>> float(post.metric("precision_at_k", k=1).mean()) > 0.8
        True
        """
        if not isinstance(data, EvalData):
            raise TypeError(f"`data` must be an EvalData, got {type(data).__name__}.")
        arr = np.asarray(p, dtype=np.float64)
        if arr.ndim not in (1, 2) or arr.shape[-1] != data.n_items:
            raise ValueError(
                f"`p` must have shape (n_items,) = ({data.n_items},) or (n_samples, {data.n_items}), "
                f"got {arr.shape}."
            )
        if arr.size == 0:
            raise ValueError(f"`p` has shape {arr.shape}: no probabilities. Give one per item, or rows of them "
                             "(one row per sample, at least one row).")
        if not np.all(np.isfinite(arr)) or arr.min() < 0 or arr.max() > 1:
            fin = arr[np.isfinite(arr)]
            got = (f"{int((~np.isfinite(arr)).sum())} NaN or infinite value(s)" if fin.size < arr.size else
                   f"values from {fin.min():g} to {fin.max():g}")
            hint = (" Log-odds? Map them with scipy.special.expit first." if fin.size and fin.min() < 0 else
                    " Percentages? Divide by 100." if fin.size and fin.max() <= 100 else "")
            raise ValueError(f"`p` must hold probabilities in [0, 1] (no NaN), got {got}.{hint}")
        if arr.ndim == 2:
            chains, draws = 1, arr.shape[0]
        else:
            chains = V.as_positive_int(chains, "chains")
            draws = V.as_positive_int(draws, "draws")
            # per draw: its mean probability, its random stream, a few metric values
            V.check_job_size(chains, draws, bytes_per_draw=64, what="Posterior.from_probabilities",
                             max_memory_gb=max_memory_gb)
        arr.setflags(write=False)
        if check and data.n_vetted:
            _warn_if_contradicted(data, arr if arr.ndim == 1 else arr.mean(axis=0))
        coords = {"chain": np.arange(chains), "draw": np.arange(draws)}
        mean_p = np.broadcast_to(arr.mean(axis=-1), (chains, draws)) if arr.ndim == 1 else arr.mean(axis=1)[None]
        ds = xr.Dataset({"mean_probability": (("chain", "draw"), np.array(mean_p))}, coords=coords)
        idata = az.InferenceData(posterior=ds)

        # module-level callables, not closures: the posterior pickles (to a process pool, say)
        probability = functools.partial(_given if arr.ndim == 1 else _given_by_draw, arr)
        post = cls(data, idata, probability, random_seed=random_seed, model="given probabilities")
        post._plugin_p = arr  # what bayeval.save stores to rebuild it
        return post

    # ------------------------------------------------------------ label draws

    def _chunk_plan(self, chunk_size: int | None, work_bytes: int = 9) -> list[tuple[int, slice]]:
        """(chain, draws) chunks; by default about ``CHUNK_BYTES`` at ``work_bytes`` per label."""
        if chunk_size is None:
            chunk_size = max(1, min(self.n_draws, CHUNK_BYTES // (work_bytes * self.data.n_items)))
        else:
            chunk_size = V.as_positive_int(chunk_size, "chunk_size")
        return [
            (c, slice(a, min(self.n_draws, a + chunk_size)))
            for c in range(self.n_chains)
            for a in range(0, self.n_draws, chunk_size)
        ]

    def _params(self, chain: int, draws: slice) -> dict[str, np.ndarray]:
        post = self.idata.posterior
        params = {name: np.asarray(post[name].values[chain, draws]) for name in post.data_vars}
        params["_draw_index"] = np.arange(draws.start, draws.stop) + chain * self.n_draws
        return params

    def _probabilities(self, chain: int, draws: slice) -> np.ndarray:
        m = draws.stop - draws.start
        p = np.asarray(self._probability(self._params(chain, draws)), dtype=np.float64)
        if p.shape not in ((self.data.n_items,), (m, self.data.n_items)):
            raise ValueError(
                f"The model's probability function returned shape {p.shape}; expected "
                f"({m}, {self.data.n_items}) or ({self.data.n_items},)."
            )
        return np.broadcast_to(p, (m, self.data.n_items))

    def _probabilities_of(self, chain: int, draws: slice, items: np.ndarray) -> np.ndarray:
        """``P(y_i = 1 | theta)`` of the given items only, ``(n_draws_in_slice, n_items_given)``.

        Models whose probability can be computed per item override this to skip the rest.
        """
        return self._probabilities(chain, draws)[:, items]

    # The one label-draw engine, for binary labels and class indices alike. Two hooks
    # say what a label is: ``_draw_probabilities`` gives ``P(z_i = 1)`` as ``(m, n)``
    # (binary labels) or ``P(z_i = k)`` as ``(m, n, K)`` (class indices), and
    # ``_label_work_bytes`` the working memory per label that sizes a chunk. Draw
    # ``(c, d)`` always reads the uniforms of its own random stream; the draws are kept,
    # packed, when they fit (``_CACHE_BYTES``).

    def _draw_probabilities(self, chain: int, draws: slice) -> np.ndarray:
        return self._probabilities(chain, draws)

    def _label_work_bytes(self) -> int:
        return 9  # a float64 probability and an int8 label

    def _uniforms(self, chain: int, draw: int) -> np.ndarray:
        """The ``n_items`` float32 uniforms of draw ``(chain, draw)``'s own random stream."""
        seq = np.random.SeedSequence(self._entropy, spawn_key=(*self._spawn_key, chain, draw))
        return np.random.Generator(np.random.PCG64(seq)).random(self.data.n_items, dtype=np.float32)

    def _draw_labels(self, chain: int, draws: slice) -> np.ndarray:
        """Fresh label draws ``(m, n_items)`` (int8), before the fixed items are set."""
        p = self._draw_probabilities(chain, draws)
        if p.ndim == 2:  # z = 1 where u < P(z = 1)
            z = np.empty(p.shape, dtype=np.int8)
            for j, d in enumerate(range(draws.start, draws.stop)):
                np.less(self._uniforms(chain, d), p[j], out=z[j], casting="unsafe")
            return z
        # class indices: z = how many of the first K - 1 cumulative probabilities u reaches
        cdf = np.cumsum(p, axis=2)
        cdf /= cdf[..., -1:]
        z = np.empty(p.shape[:2], dtype=np.int8)
        for j, d in enumerate(range(draws.start, draws.stop)):
            u = self._uniforms(chain, d).astype(np.float64)
            z[j] = (u[:, None] >= cdf[j, :, :-1]).sum(axis=1)
        return z

    def _pack(self, z: np.ndarray) -> np.ndarray:
        """Label rows ``(m, n)`` as ``_planes`` bit planes of packed bits, side by side."""
        u = z.view(np.uint8)
        if self._planes == 1:
            return np.packbits(u, axis=1)
        return np.concatenate([np.packbits((u >> b) & 1, axis=1) for b in range(self._planes)], axis=1)

    def _unpack(self, bits: np.ndarray) -> np.ndarray:
        n = self.data.n_items
        if self._planes == 1:
            return np.unpackbits(bits, axis=1, count=n).view(np.int8)
        width = bits.shape[1] // self._planes
        z = np.zeros((bits.shape[0], n), dtype=np.uint8)
        for b in range(self._planes):
            z |= np.unpackbits(bits[:, b * width : (b + 1) * width], axis=1, count=n) << b
        return z.view(np.int8)

    def _default_chunk_size(self) -> int:
        """Draws per chunk of label draws: about ``CHUNK_BYTES`` of working memory."""
        per_draw = self._label_work_bytes() * self.data.n_items
        return max(1, min(self.n_draws, CHUNK_BYTES // per_draw))

    def _labels_of(self, chain: int, draws: slice) -> np.ndarray:
        """The label draws ``draws`` of chain ``chain``, ``(m, n_items)`` int8 (cached when they fit)."""
        if self._bits is not None and self._bits_filled[chain, draws].all():
            return self._unpack(self._bits[chain, draws])
        z = self._draw_labels(chain, draws)
        z[:, self._fixed] = self._fixed_values
        if self._bits is not None:
            self._bits[chain, draws] = self._pack(z)
            self._bits_filled[chain, draws] = True
        return z

    def _label_chunks(self, chunk_size: int | None = None) -> Iterator[tuple[int, slice, np.ndarray]]:
        if chunk_size is None:
            chunk_size = self._default_chunk_size()
        for chain, draws in self._chunk_plan(chunk_size):
            yield chain, draws, self._labels_of(chain, draws)

    def label_arrays(self, chunk_size: int | None = None) -> Iterator[tuple[int, slice, np.ndarray]]:
        """The label draws as plain arrays: ``(chain, draws, z)`` per chunk.

        The same draws as :meth:`label_draws` without the xarray wrapping, for code
        that loops over many chunks (item selection, custom metrics): ``z`` is an int8
        array ``(len(draws), n_items)`` of chain ``chain``'s draws ``draws`` (a slice).
        Do not modify ``z``: it may be the posterior's cached copy.

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval import EvalData, Posterior
        >>> post = Posterior.from_probabilities(EvalData([0.3, 0.6], [1, np.nan]), [1, 0.5],
        ...                                     draws=4, random_seed=0)
        >>> [(c, d, z.shape) for c, d, z in post.label_arrays(chunk_size=3)]
        [(0, slice(0, 3, None), (3, 2)), (0, slice(3, 4, None), (1, 2))]
        """
        return self._label_chunks(chunk_size)

    def label_draws(self, chunk_size: int | None = None) -> Iterator[xr.DataArray]:
        """Yield label draws in chunks, as int8 DataArrays ``(chain, draw, item)``.

        Each chunk covers one chain and a run of draws. Draw ``(c, d)`` always comes
        from the same random stream, so the draws do not depend on ``chunk_size``.

        Parameters
        ----------
        chunk_size : int, optional
            Draws per chunk; by default chosen so a chunk uses ~128 MiB.

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval import EvalData, Posterior
        >>> post = Posterior.from_probabilities(EvalData([0.3, 0.6], [1, np.nan]), [1, 0.5],
        ...                                     draws=4, random_seed=0)
        >>> [c.shape for c in post.label_draws(chunk_size=3)]
        [(1, 3, 2), (1, 1, 2)]
        """
        for chain, draws, z in self._label_chunks(chunk_size):
            yield xr.DataArray(
                z[None],
                dims=("chain", "draw", "item"),
                coords={
                    "chain": [chain],
                    "draw": np.arange(draws.start, draws.stop),
                    "item": self.data.item_ids,
                },
            )

    def item_probability(self) -> xr.DataArray:
        """Posterior probability that each item is positive (vetted items: their label).

        The mean of ``P(z_i = 1 | theta)`` over the parameter draws -- exact, no label
        sampling.

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval import EvalData, Posterior
        >>> post = Posterior.from_probabilities(EvalData([0.3, 0.6], [1, np.nan]), [0.5, 0.25])
        >>> post.item_probability().values.tolist()
        [1.0, 0.25]
        """
        total = np.zeros(self.data.n_items)
        for chain, draws in self._chunk_plan(None):
            total += self._probabilities(chain, draws).sum(axis=0)
        p = total / (self.n_chains * self.n_draws)
        p[self._fixed] = self._fixed_values
        return xr.DataArray(p, dims=("item",), coords={"item": self.data.item_ids}, name="p_positive")

    # ----------------------------------------------------------------- metrics

    def label_loglik(self) -> np.ndarray:
        """``log p(y_i | s_i, theta)`` of each vetted label, ``(chain, draw, n_vetted)``.

        For any posterior: from the item probabilities it implies at each parameter draw
        (a model with a closed form for it, such as the calibration curves, overrides
        this). ``Model.fit`` stores it in ``idata.log_likelihood``, so that
        ``az.loo(post.idata)`` works; a probability of exactly 0 for an observed label
        counts as ``-1000``.
        """
        vet = np.flatnonzero(self.data.vetted)
        y = self.data.labels[vet]
        out = np.empty((self.n_chains, self.n_draws, vet.size))
        for c in range(self.n_chains):
            step = max(1, (1 << 22) // max(1, self.data.n_items))
            for a in range(0, self.n_draws, step):
                sl = slice(a, min(self.n_draws, a + step))
                p = self._probabilities_of(c, sl, vet)
                with np.errstate(divide="ignore"):
                    out[c, sl] = np.where(y == 1, np.log(p), np.log1p(-p))
        return np.maximum(out, -1e3)

    def metric(
        self,
        metric,
        *,
        category: str | None = None,
        threshold: float | None = None,
        chunk_size: int | None = None,
        progressbar: bool = True,
        client=None,
        **kwargs,
    ) -> xr.DataArray:
        """The posterior distribution of a metric on this evaluation set.

        Label draws are generated chunk by chunk and pushed through the metric kernel;
        memory stays bounded whatever the number of items and draws.

        Parameters
        ----------
        metric : str or callable
            A name from :data:`bayeval.core.metrics.METRICS` (``"average_precision"``,
            ``"precision_at_k"``, ``"recall_at_k"``, ``"precision_at_recall"``,
            ``"precision_recall_curve"``, ``"roc_curve"``, ``"roc_auc"``,
            ``"precision"``, ``"recall"``, ``"f_score"``, ``"accuracy"``), one of the
            functions of :mod:`bayeval.core.metrics`, or a callable
            ``f(labels, scores, **kwargs)`` mapping label rows ``(rows, n_items)`` to
            ``(rows,)`` or ``(rows, m)``.
        category : {"each", "mean", "pooled"}, optional
            With categories in the data: per category (default, dim ``category``),
            the mean over categories, or all items pooled.
        threshold : float, optional
            For metrics of hard predictions: predict positive where
            ``score >= threshold``. Without it the data's ``predictions`` are used. One
            that flags no item or every item warns (:class:`bayeval.core.summary.ThresholdWarning`):
            the metric is then that of a rule predicting every item alike.
        chunk_size : int, optional
            Draws per chunk (memory/speed trade-off only; results do not change).
        progressbar : bool, default True
            Show a progress bar on stderr when the pass takes more than about 2 s (a
            million items and thousands of draws); a short pass shows nothing.
        client : distributed.Client, optional
            Compute the chunks as tasks on this Dask client (the extra ``dask``; see
            :func:`bayeval.core.distributed.metric_on_client`): each task makes one
            chunk of label draws and reduces it, so a worker holds one chunk. The
            numbers are those of the serial pass, whatever ``chunk_size`` and the
            number of workers. None (default): in this process, Dask not imported.
        **kwargs
            Options of the metric (``k=``, ``recall=``, ``beta=``, ``thresholds=``...).
            ``precision_at_k``'s and ``recall_at_k``'s ``k`` must not be more than the
            number of items, nor, computed per category (``category`` "each" or "mean"),
            than a category's (the missing places of a bigger top would count as
            negatives; its recall would be 1).
            Curves without ``thresholds`` use the distinct scores where there are 201
            or fewer; else 201 evenly spaced score quantiles together with the scores at
            201 geometrically spaced ranks from the top (at most 402 thresholds, fewer
            where the two coincide: 278 on 600 distinct scores), as
            :func:`bayeval.core.evaluate.default_thresholds` gives them; the ROC curve
            adds ``inf`` (nothing flagged) in front. The precision of a
            rule that flags no item is NaN in every draw (undefined, as in
            :func:`bayeval.vetted_only`), unless ``zero_division=`` is given.

        Returns
        -------
        xarray.DataArray
            Dims ``(chain, draw, [category], ...)``; curves add ``threshold`` and
            ``curve`` (``precision``/``recall`` or ``fpr``/``tpr``). Its ``attrs`` name
            the metric and the options given with one value (``threshold``, ``beta``,
            ``k``, ``category``...); an option given several values is a coordinate.

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval import EvalData, Posterior
        >>> data = EvalData([0.9, 0.8, 0.3, 0.1], [1, np.nan, np.nan, 0])
        >>> post = Posterior.from_probabilities(data, [1, 0.5, 0.5, 0], draws=100, random_seed=0)
        >>> post.metric("precision_at_k", k=[1, 2]).dims
        ('chain', 'draw', 'k')
        """
        ev = MetricEvaluator(self.data, metric, category=category, threshold=threshold, kwargs=kwargs)
        warn_threshold(self.data.scores, ev.name, threshold)  # above every score: recall 0 in every draw
        ev.check_top_k()  # a top bigger than the items (or a category's): P@k counts missing places, R@k is 1
        coords = {"chain": np.arange(self.n_chains), "draw": np.arange(self.n_draws), **ev.coords}
        if client is not None:
            from .distributed import check_client, metric_on_client

            out = metric_on_client(self, ev, client=check_client(client), chunk_size=chunk_size)
            return xr.DataArray(out, dims=("chain", "draw", *ev.dims), coords=coords, name=ev.name,
                                attrs=_metric_attrs(ev))
        out = np.empty((self.n_chains, self.n_draws) + self._evaluated_shape(ev))
        from ._progress import Bar

        total = self.n_chains * self.n_draws
        with Bar(f"bayeval: {ev.name}, {total} draws of {self.data.n_items} items", total=total,
                 enabled=bool(progressbar)) as bar:
            for chain, draws, z in self._label_chunks(chunk_size):
                out[chain, draws] = ev(z)
                bar.update(advance=draws.stop - draws.start)
        return xr.DataArray(out, dims=("chain", "draw", *ev.dims), coords=coords, name=ev.name,
                            attrs=_metric_attrs(ev))

    @staticmethod
    def _evaluated_shape(ev: MetricEvaluator) -> tuple[int, ...]:
        lead = (len(ev.cat_names),) if ev.category == "each" else ()
        return lead + ev.extra_shape

    def population(self, metric, **kwargs) -> xr.DataArray:
        """The population version of a metric, from the parameters alone.

        Defined only for models that provide it (e.g. the score mixture).
        """
        if self._population is None:
            raise NotImplementedError(
                f"The {self.model!r} posterior defines no population metric; use metric() for the "
                "performance on this evaluation set."
            )
        return self._population(metric, **kwargs)

    def summary(self, metrics=("average_precision",), *, hdi_prob: float = HDI_PROB, client=None,
                **kwargs) -> pd.DataFrame:
        """Mean, sd and HDI of several metrics, one row per metric (and coordinate).

        Parameters
        ----------
        metrics : list, default ``("average_precision",)``
            Each entry a metric name or callable, or ``(metric, {options})``. A dict
            ``{label: metric or (metric, {options})}`` names the rows. ``None`` or an empty
            list is an error (leave the argument out for the default).
        hdi_prob : float, default 0.9 (``bayeval.core._defaults.HDI_PROB``)
        client : distributed.Client, optional
            Compute each metric's chunks on this Dask client (as :meth:`metric`); the
            table is the serial one.
        **kwargs
            Options passed to every metric (e.g. ``category="mean"``, ``threshold=``). A
            threshold for some metrics only goes in their own options:
            ``["average_precision", ("precision", {"threshold": 0.5})]``.

        Returns
        -------
        pandas.DataFrame
            Index: metric (with its coordinates, e.g. ``precision_at_k[k=10]``);
            columns ``mean, sd, hdi_<lo>%, hdi_<hi>%``. ``attrs["caveats"]``: what the
            data cannot tell the model, in sentences (:meth:`bayeval.EvalData.caveats`:
            no vetted label, a handful of vetted positives, squeezed or saturated probabilities; and each
            metric that is undefined in some draws, e.g. ROC AUC where a draw has no
            negative: its row then summarizes the draws where it is defined, and
            ``attrs["undefined"]`` maps it to the share of draws where it is not).
            Printing the table does not show ``attrs``: print the caveats on their own
            (``for c in table.attrs["caveats"]: print(c)``).

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval import EvalData, Posterior
        >>> data = EvalData([0.9, 0.8, 0.3, 0.1], [1, np.nan, np.nan, 0])
        >>> post = Posterior.from_probabilities(data, [1, 0.5, 0.5, 0], draws=200, random_seed=0)
        >>> post.summary(["average_precision", ("precision_at_k", {"k": 2})]).columns.tolist()
        ['mean', 'sd', 'hdi_5%', 'hdi_95%']
        """
        hdi_prob = V.as_probability(hdi_prob, "hdi_prob", open_interval=True)
        items = metric_items(metrics, call="post.summary(", shared=kwargs)
        rows, undefined, flagged_none, thresholds = [], {}, set(), []
        for label, metric, options in items:
            where = {} if client is None else {"client": client}
            with warnings.catch_warnings():  # said among the caveats below, not warned
                warnings.simplefilter("ignore", ThresholdWarning)
                da = self.metric(metric, **where, **{**kwargs, **options})
            thresholds.append((label, {**kwargs, **options}.get("threshold")))
            rows.extend(summary_rows(label, da, hdi_prob, ("chain", "draw")))
            share = undefined_share(da)
            if share > 0:
                undefined[label] = share
                if resolve_metric(metric)[2] == "precision":  # undefined only where its rule flags nothing
                    flagged_none.add(label)
        out = summary_frame(rows, hdi_prob)
        # what the data cannot tell the model (few positives, squeezed scores): shown beside the table
        out.attrs["caveats"] = self.data.caveats(self) + [
            undefined_sentence(m, share, nothing_flagged=m in flagged_none) for m, share in undefined.items()
        ] + threshold_caveats(self.data.scores, thresholds)  # a threshold above every score: recall 0, silently
        out.attrs["undefined"] = undefined
        return out

    def to_inference_data(self, metrics=("average_precision",), **kwargs) -> az.InferenceData:
        """A copy of :attr:`idata` with a ``metrics`` group holding each metric's draws.

        The ArviZ view of the fit: the parameter draws, the log-likelihood and the
        posterior of each metric on this evaluation set side by side, so ``az.summary(
        idata, group="metrics")``, ``az.plot_posterior(idata, group="metrics")`` or
        ``idata.to_netcdf(path)`` work on them. ArviZ's HDI is 94% unless told
        otherwise; pass ``hdi_prob=0.9`` for the 90% HDI of :meth:`summary`. A stack
        of candidates (the default :func:`bayeval.fit`) has only ``candidate`` and
        ``source_draw`` in its posterior group; each candidate's parameters are in
        ``post.candidates[name].idata``.

        Parameters
        ----------
        metrics : list or dict
            As in :meth:`summary`: metric names, ``(name, {options})`` pairs, or
            ``{label: name or (name, {options})}``; each becomes one variable of the
            ``metrics`` group, named as its row in :meth:`summary` (e.g.
            ``precision_at_k[k=10]`` when one metric appears with several options).
        **kwargs
            Options passed to every metric (``category=``, ``threshold=``...).

        Returns
        -------
        arviz.InferenceData
            Every group of :attr:`idata` (copied) plus ``metrics``, dims ``(chain,
            draw, ...)`` with each metric's own dims (``k``, ``category``...); each
            variable's ``attrs`` name the metric and its one-value options
            (``{"metric": "f_score", "threshold": 0.7, "beta": 2}``), kept by
            ``to_netcdf``, as :meth:`metric`'s do. Where two
            metrics use a dim of the same name with different coordinates, the second
            one's dim is renamed ``<metric>_<dim>``; so is a dim named as another
            metric's variable (``precision_at_recall_recall`` beside ``recall``), so
            every metric keeps its own variable. A draw in which a metric is
            undefined (ROC AUC with no negative drawn) holds NaN, so ArviZ's own
            ``az.summary`` gives NaN for that metric; :meth:`summary` summarizes the
            draws where it is defined and says how many are not.

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval import EvalData, Posterior
        >>> data = EvalData([0.9, 0.8, 0.3, 0.1], [1, np.nan, np.nan, 0])
        >>> post = Posterior.from_probabilities(data, [1, 0.5, 0.5, 0], draws=100, random_seed=0)
        >>> idata = post.to_inference_data(["average_precision", ("precision_at_k", {"k": [1, 2]})])
        >>> list(idata.metrics.data_vars), idata.metrics["precision_at_k"].dims
        (['average_precision', 'precision_at_k'], ('chain', 'draw', 'k'))
        >>> "metrics" in post.idata.groups()  # the posterior's own idata is unchanged
        False
        """
        import re
        import warnings

        items = metric_items(metrics, call="post.to_inference_data(", shared=kwargs)
        labels = [label for label, _, _ in items]
        dup = sorted({lab for lab in labels if labels.count(lab) > 1})
        if dup:
            raise ValueError(
                f"Metric name(s) {dup} appear more than once in `metrics`; give each entry a distinct label, "
                "e.g. {'ap': 'average_precision', 'p@10': ('precision_at_k', {'k': 10})}."
            )
        if "metrics" in self.idata.groups():
            raise ValueError("This posterior's idata already has a `metrics` group; drop it first.")
        slash = [lab for lab in labels if "/" in lab]
        if slash:  # netCDF refuses them, half-way through writing the file
            raise ValueError(f"Metric label(s) {slash} hold '/', which netCDF does not allow in a variable name "
                             "(idata.to_netcdf would stop half-way); give labels without it, e.g. 'a_b'.")
        axes = [lab for lab in labels if lab in ("chain", "draw")]
        if axes:
            raise ValueError(f"Metric label(s) {axes} are the names of the draws' own dims (chain, draw); "
                             "give each another label, e.g. {'ap': 'average_precision'}.")
        out, seen = {}, {}
        for label, metric, options in items:
            da = self.metric(metric, **{**kwargs, **options})
            rename = {}
            for dim in da.dims:
                if dim in ("chain", "draw"):
                    continue
                coord = da[dim].values if dim in da.coords else np.arange(da.sizes[dim])
                if dim in labels or (dim in seen and not (seen[dim].shape == coord.shape
                                                          and np.array_equal(seen[dim], coord))):
                    # another metric's variable has this name, or another metric's dim has other coordinates
                    new = base = re.sub(r"\W+", "_", f"{label}_{dim}")
                    n = 2
                    while new in labels or new in seen or new in rename.values():
                        new, n = f"{base}_{n}", n + 1
                    rename[dim] = new
                    seen[new] = coord
                else:
                    seen[dim] = coord
            out[label] = da.rename(rename).rename(None)
        ds = xr.Dataset(out)
        idata = self.idata.copy()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "metrics" is not one of ArviZ's schema groups
            idata.add_groups(metrics=ds)
        return idata

    def diagnostics(self) -> pd.DataFrame:
        """Sampler diagnostics of the parameter draws: r_hat, ESS, divergences.

        Returns an empty frame for posteriors without sampled parameters.
        """
        names = list(self.idata.posterior.data_vars)
        if not names or self.model == "given probabilities":
            return pd.DataFrame(columns=["r_hat", "ess_bulk", "ess_tail"])
        from ._diagnostics import parameter_table

        return parameter_table(self.idata, names)  # r_hat unrounded (ArviZ's default rounds to 2 decimals)

    def diagnostics_table(self) -> pd.DataFrame:
        """:meth:`diagnostics`, the per-parameter table of the report."""
        return self.diagnostics()

    def __repr__(self) -> str:
        return (
            f"Posterior(model={self.model!r}, chains={self.n_chains}, draws={self.n_draws}, "
            f"data={self.data!r})"
        )


# ------------------------------------------------------------------ summaries


def _given(p: np.ndarray, params) -> np.ndarray:
    """:meth:`Posterior.from_probabilities`'s one probability vector, the same for every draw."""
    return p


def _given_by_draw(p: np.ndarray, params) -> np.ndarray:
    """:meth:`Posterior.from_probabilities`'s row of probabilities for each draw."""
    return p[params["_draw_index"]]


def _warn_if_contradicted(data: EvalData, p: np.ndarray, alpha: float = 0.01) -> None:
    """Warn when the vetted labels reject the plug-in probabilities ``p`` (level ``alpha``).

    A likelihood-ratio test of the logistic recalibration ``logit P(y = 1) = a + b logit(p)``
    against ``a = 0, b = 1`` (the probabilities as given), chi-squared with 2 degrees of
    freedom, on the vetted items.
    """
    from scipy import optimize, special, stats

    y = data.labels[data.vetted]
    q = np.clip(p[data.vetted], 1e-9, 1 - 1e-9)
    if y.size < 5:
        return
    x = special.logit(q)

    def nll(ab):
        eta = ab[0] + ab[1] * x
        return float(np.sum(np.logaddexp(0.0, eta) - y * eta))

    fit = optimize.minimize(nll, np.array([0.0, 1.0]), method="BFGS")
    lr = 2.0 * (nll(np.array([0.0, 1.0])) - min(fit.fun, nll(np.array([0.0, 1.0]))))
    p_value = float(stats.chi2.sf(lr, 2))
    if p_value < alpha:
        import warnings

        pos, expect = int(y.sum()), float(q.sum())
        if abs(pos - expect) > 2.0 * np.sqrt(float(np.sum(q * (1.0 - q)))) + 0.5:
            said = f"{pos} of {y.size} vetted items are positive where the probabilities expect {expect:.1f}"
        else:  # the count agrees: the items do not (what the test found is which items are positive)
            said = (f"as many vetted items are positive as the probabilities expect ({pos} of {y.size} against "
                    f"{expect:.1f}), but not the items they expect")
        certain = int(np.sum((q <= 1e-9) & (y == 1)) + np.sum((q >= 1 - 1e-9) & (y == 0)))
        if certain:
            said += f"; {certain} of them given probability 0 or 1 have the other label"
        warnings.warn(
            f"bayeval: the vetted labels contradict the given probabilities: {said}, and a recalibration test "
            f"rejects them (p = {p_value:.2g}). This plug-in posterior trusts the probabilities and will give "
            "tight, wrong intervals; bayeval.fit(data) learns the calibration from the vetted labels instead (or "
            "pass check=False to silence this).",
            UserWarning,
            stacklevel=3,
        )


def check_posterior(post, name: str = "post"):
    """``post`` when it is a :class:`bayeval.Posterior` (label draws of an evaluation set).

    Examples
    --------
    >>> from bayeval.core.posterior import check_posterior
    >>> check_posterior("not a posterior")
    Traceback (most recent call last):
    ...
    TypeError: `post` must be a bayeval.Posterior (from a model's fit() or Posterior.from_probabilities), got str.
    """
    if not isinstance(post, Posterior):
        raise TypeError(
            f"`{name}` must be a bayeval.Posterior (from a model's fit() or "
            f"Posterior.from_probabilities), got {type(post).__name__}."
        )
    return post
