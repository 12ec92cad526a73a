"""The one contract every bayeval model follows.

A model is a small configuration object (its constructor arguments, nothing learned).
It turns a data container into a PyMC model and a fit into a posterior:

* ``build(data) -> pymc.Model``: the generative model, with no hidden state: the data
  enter through named ``pm.Data`` containers, so that a model of the same *structure*
  (the same families, options and which parts of the data are present) can be refitted
  on new values without compiling again;
* ``fit(data, *, draws, tune, chains, cores, random_seed, progressbar, sampler, warn,
  **sample_kwargs) -> Posterior``: the same keywords for every model. Sampling goes
  through :func:`bayeval.core.sampling.sample_model` (importance sampling from the
  posterior mode where its Pareto k says it is exact enough, NUTS otherwise); the
  result carries ``sampling`` (how it was sampled), ``convergence`` (one diagnostics
  dict) and, in ``idata.log_likelihood``, the pointwise log-likelihood of what the
  model must predict, so that ``az.loo(post.idata)`` and ``az.compare`` work.

A subclass provides ``_check_data``, ``build``, ``_posterior`` and, to refit through the
compiled-model cache, ``_structure`` and ``_data_values``.
"""

from __future__ import annotations

import inspect
import warnings
from typing import Any

import numpy as np
import xarray as xr

from . import _validate as V
from ._diagnostics import check_convergence, exact_where_constant
from .sampling import DEFAULT_NUTS, NUTS_SAMPLERS, SAMPLERS, Previous, cached_model, sample_model

__all__ = ["Model", "FIT_KEYWORDS", "seeds"]

#: The keyword arguments every model's ``fit`` accepts (and their meaning is the same).
FIT_KEYWORDS = ("draws", "tune", "chains", "cores", "random_seed", "progressbar", "sampler", "warn")


def seeds(random_seed) -> tuple[np.random.SeedSequence, int]:
    """The sampler's seed sequence and the integer that seeds a posterior's label draws.

    An int seed is passed on as is; otherwise (None, a Generator, a SeedSequence) one
    number drawn from the seed sequence stands for it, so a fit is reproducible from it.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.core.model import seeds
    >>> seq, label_seed = seeds(7)
    >>> label_seed, seq.entropy
    (7, 7)
    >>> seeds(np.random.SeedSequence(7))[1] == seeds(np.random.SeedSequence(7))[1]
    True
    """
    seq = V.as_seed_sequence(random_seed)
    if isinstance(random_seed, int | np.integer) and not isinstance(random_seed, bool):
        return seq, int(random_seed)
    return seq, int(seq.generate_state(1, np.uint32)[0])


class Model:
    """Base class of bayeval's generative models (see the module docstring).

    Examples
    --------
    >>> from bayeval.core.model import FIT_KEYWORDS, Model
    >>> from bayeval.models import Calibration
    >>> isinstance(Calibration(), Model), FIT_KEYWORDS[:3]
    (True, ('draws', 'tune', 'chains'))
    """

    #: chains when ``fit`` is called without ``chains``
    default_chains: int = 2
    #: what ``sampler="auto"`` means for this model: ``"auto"`` (importance sampling
    #: with a NUTS fallback) or ``"pymc"`` (NUTS straight away, for posteriors that
    #: are far from Gaussian; run by the default NUTS, ``_sampling.DEFAULT_NUTS``)
    auto_sampler: str = "auto"
    #: NUTS target acceptance when the caller gives none
    target_accept: float = 0.9
    #: the free parameters whose r_hat / ESS the convergence check reads
    param_names: tuple[str, ...] = ()
    #: variables ``_posterior`` adds to the idata itself (dropped before a saved fit is
    #: rebuilt, see :mod:`bayeval.persist`)
    _posterior_adds: tuple[str, ...] = ()

    # ------------------------------------------------------------ configuration

    def get_params(self) -> dict[str, Any]:
        """The constructor arguments of this model (what ``type(self)(**params)`` rebuilds).

        Examples
        --------
        >>> from bayeval.models import Calibration
        >>> Calibration(curve="beta").get_params()["curve"]
        'beta'
        """
        out = {}
        for name, p in inspect.signature(type(self).__init__).parameters.items():
            if name == "self" or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
                continue
            value = getattr(self, name, p.default)
            out[name] = getattr(value, "name", value) if hasattr(value, "params") else value
        return out

    # ------------------------------------------------------------------- hooks

    def _check_data(self, data):
        """Return the validated data container, or raise TypeError / ValueError."""
        raise NotImplementedError

    def build(self, data):  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def _structure(self, data) -> tuple | None:
        """What the compiled model depends on besides data values; None: no reuse."""
        return None

    def _build_for_fit(self, data):
        """The PyMC model that ``fit`` samples and caches under ``_structure(data)``
        (default: :meth:`build`). A model whose key joins data sets with and without some
        part builds that part here even where it is empty."""
        return self.build(data)

    def _data_values(self, data) -> dict[str, np.ndarray]:
        """The values of the model's ``pm.Data`` containers for ``data``."""
        return {}

    def _coords(self, data) -> dict | None:
        """New lengths of the dims the data containers use (for a refit), or None."""
        return None

    def _start(self, data) -> dict | None:
        """Where the sampler starts (constrained values by variable name), or None."""
        return None

    def _fitted_data(self, post):
        """The data container a posterior of this model was fitted to (None: not known), for
        a refit from it (``fit(..., previous=post)``)."""
        return getattr(post, "data", None)

    def _exact_posterior(self, data, *, chains: int, draws: int, seed):
        """Independent draws of the exact posterior as ``(idata, SamplingInfo)``, for a
        model whose posterior has a closed form; otherwise (or where it would be too
        slow for this data) a sentence saying why not."""
        return "its posterior has no closed form"

    def _auto_sampler(self, data) -> str:
        """What ``sampler="auto"`` means for this data set (default: ``auto_sampler``)."""
        return self.auto_sampler

    def _nuts_jitter(self) -> bool:
        """Whether NUTS chains start jittered around the starting point."""
        return True

    def _fallback(self) -> str:
        """The NUTS that ``sampler="auto"`` falls back to: ``"pymc"`` or ``"nutpie"``."""
        return "pymc"

    def _convergence(self, post, *, warn: bool) -> dict:
        """The diagnostics dict of a fit (:func:`bayeval.core._diagnostics.check_convergence`)."""
        return check_convergence(post.idata, post.sampling, self.param_names, warn=warn)

    def _posterior(self, data, idata, *, sampling, random_seed):
        raise NotImplementedError

    def _log_likelihood(self, post) -> dict[str, tuple[tuple[str, ...], np.ndarray]]:
        """Pointwise log-likelihood terms ``{name: (dims, array (chain, draw, n))}``.

        By default the vetted labels given their scores: ``post.label_loglik()``.
        """
        if not getattr(post.data, "n_vetted", 0):
            return {}
        return {"label": (("chain", "draw", "vetted_item"), post.label_loglik())}

    def _after_fit(self, post, *, warn: bool) -> None:
        """Model-specific checks run at the end of ``fit`` (warnings go to the user)."""

    # --------------------------------------------------------------------- fit

    def _model(self, data):
        key = self._structure(data)
        if key is None:
            return self._build_for_fit(data), None
        key = (type(self).__name__, *key)
        model = cached_model(key)
        if model is None:
            return self._build_for_fit(data), key
        import pymc as pm

        pm.set_data(self._data_values(data), model=model, coords=self._coords(data))
        return model, key

    def fit(
        self,
        data,
        *,
        draws: int = 1000,
        tune: int = 1000,
        chains: int | None = None,
        cores: int | None = None,
        random_seed=None,
        progressbar: bool = True,
        sampler: str = "auto",
        warn: bool = True,
        **sample_kwargs,
    ):
        """Sample the posterior and return it (a :class:`bayeval.Posterior`).

        Parameters
        ----------
        data
            The model's data container (an :class:`bayeval.EvalData` for the score
            models; see the model's class docstring).
        draws, tune, chains : int
            Posterior draws per chain, NUTS tuning steps (unused by importance
            sampling), chains (default: the model's ``default_chains``).
        cores : int, optional
            Processes for NUTS chains (default: up to 2).
        random_seed : int, numpy Generator or SeedSequence, optional
            Seeds the sampler and the label draws: the same seed gives the same draws.
        progressbar : bool
            One progress bar on stderr, with the time left, for a fit that runs more
            than about 2 s: bayeval's over the compilation and importance sampling,
            the NUTS sampler's own for NUTS (none inside a study or a stack that shows
            its own bar).
        sampler : {"auto", "importance", "smc", "exact", "pymc", "pymc-numba", "nutpie", "numpyro", "blackjax"}
            ``"auto"``: the model's measured choice (``auto_sampler``): exact draws
            where the model's posterior has a closed form (``HumanRanking``), importance
            sampling from the posterior mode, falling back to NUTS when its Pareto k
            exceeds 0.7, or NUTS directly; its NUTS is the measured fastest of those a
            plain install has (``bayeval.core.sampling.DEFAULT_NUTS``). The others
            name a NUTS implementation (``"pymc"``: PyMC's, compiled to C;
            ``"pymc-numba"``: PyMC's, compiled with Numba; ``"nutpie"``, ``"numpyro"``,
            ``"blackjax"``: those packages', where installed).
            ``"smc"``: PyMC's sequential Monte Carlo, each chain an independent run of
            ``draws`` particles tempered from the prior (``tune`` and the NUTS settings
            do not apply): separated modes get their posterior weight, but the
            particles can come out less spread than the posterior (measured on
            ``AnnotatorError``); compare with NUTS before relying on it.
        warn : bool
            Warn when the diagnostics are bad (see ``post.convergence``).
        **sample_kwargs
            NUTS settings, e.g. ``target_accept=0.95``; and ``previous``: the posterior
            of an earlier fit of this model (the vetting loop's last fit). Where
            ``sampler="auto"`` means NUTS, its draws are first reweighted to ``data``
            (no NUTS run) and kept when the weights are reliable (Pareto k < 0.7, ESS
            >= 100 per chain); reliable weights with a smaller ESS (down to 20) are
            resampled and the draws moved by rounds of Hamiltonian Monte Carlo
            (``post.sampling.extra["move"]``); otherwise NUTS runs and
            ``post.sampling.fallback_reason`` says why. Ignored by models sampled otherwise.
        """
        data = self._check_data(data)
        draws = V.as_positive_int(draws, "draws")
        tune = V.as_positive_int(tune, "tune", minimum=0)
        chains = V.as_positive_int(self.default_chains if chains is None else chains, "chains")
        if cores is not None:
            cores = V.as_positive_int(cores, "cores")
        V.check_choice(sampler, "sampler", SAMPLERS)
        if not isinstance(warn, bool | np.bool_):
            raise TypeError(f"`warn` must be True or False, got {warn!r}.")
        target_accept = V.as_probability(
            sample_kwargs.pop("target_accept", self.target_accept), "target_accept", open_interval=True
        )
        previous = self._check_previous(sample_kwargs.pop("previous", None))
        unknown = sorted(set(sample_kwargs) - {"init", "max_treedepth"})
        if unknown:
            what = f"option {unknown[0]!r}" if len(unknown) == 1 else "options " + ", ".join(map(repr, unknown))
            raise TypeError(
                f"{type(self).__name__}.fit() takes no {what}; it takes "
                f"{list(FIT_KEYWORDS)}, the NUTS settings target_accept, init and max_treedepth, "
                "and previous (an earlier fit of this model)."
            )
        seed, label_seed = seeds(random_seed)
        try:
            return self._fit(data, draws=draws, tune=tune, chains=chains, cores=cores, seed=seed,
                             label_seed=label_seed, progressbar=progressbar, sampler=sampler, warn=warn,
                             target_accept=target_accept, previous=previous, **sample_kwargs)
        finally:
            self.__dict__.pop("_memo", None)  # what _prepared() kept for this data set

    def _check_previous(self, previous):
        """``previous`` (the ``fit`` keyword): None, or a posterior this model's class made."""
        if previous is None:
            return None
        spec = getattr(previous, "model_spec", None)
        if not hasattr(previous, "idata") or self._fitted_data(previous) is None or spec is None:
            raise TypeError(
                f"`previous` must be a posterior returned by {type(self).__name__}.fit (an earlier fit to "
                f"refit from), got {type(previous).__name__}. Pass the posterior of the last fit, or None."
            )
        if type(spec) is not type(self) or spec.get_params() != self.get_params():
            raise ValueError(
                f"`previous` is a fit of {spec!r}, not of {self!r}: a refit reweights draws of the same "
                "model. Pass a posterior of this model, or previous=None."
            )
        return previous

    def _previous(self, previous, data, key) -> Previous | str:
        """The earlier fit as :class:`bayeval.core.sampling.Previous`, or why it cannot serve."""
        old = self._fitted_data(previous)
        if key is None or self._structure(old) is None or (type(self).__name__, *self._structure(old)) != key:
            return "the previous fit's data have another structure (other categories, features or parts)"
        ess = float("nan")
        conv = getattr(previous, "convergence", None) or {}
        if conv.get("min_ess_bulk") is not None:
            ess = float(conv["min_ess_bulk"])
        elif getattr(previous, "sampling", None) is not None:
            ess = float(previous.sampling.ess)
        values, coords = self._data_values(old), self._coords(old)
        self._check_data(data)  # back to the current data's memo (a model may keep one per data set)
        return Previous(previous.idata, values, coords, ess)

    def _fit(self, data, *, draws, tune, chains, cores, seed, label_seed, progressbar, sampler, warn,
             target_accept, previous=None, **sample_kwargs):
        chosen, fallback = sampler, self._fallback()
        if sampler == "auto":
            # a model's "pymc" stands for NUTS: "auto" runs the measured default implementation
            chosen = self._auto_sampler(data)
            chosen = DEFAULT_NUTS if chosen == "pymc" else chosen
            fallback = DEFAULT_NUTS if fallback == "pymc" else fallback
        exact, reason = None, ""
        if chosen == "exact":
            exact = self._exact_posterior(data, chains=chains, draws=draws, seed=seed)
            if isinstance(exact, str):
                if sampler == "exact":
                    raise ValueError(f"sampler='exact' is not available for {type(self).__name__} here: {exact}. "
                                     "Use sampler='auto' or a NUTS sampler.")
                chosen, reason, exact = fallback, exact, None
        if exact is not None:
            idata, info = exact
        else:
            model, key = self._model(data)
            prev = None
            if previous is not None and sampler == "auto" and chosen in NUTS_SAMPLERS:
                prev = self._previous(previous, data, key)
                if isinstance(prev, str):
                    reason, prev = f"not refitted from the previous fit: {prev}", None
            idata, info = sample_model(
                model, draws=draws, tune=tune, chains=chains, random_seed=seed, sampler=chosen,
                progressbar=progressbar, target_accept=target_accept, cores=cores, key=key,
                start=self._start(data), jitter=self._nuts_jitter(), fallback=fallback, previous=prev,
                **sample_kwargs,
            )
            if reason:  # the exact route or the refit from the previous fit was not taken: say why
                info.fallback_reason = "; ".join(r for r in (reason, info.fallback_reason) if r)
        post = self._posterior(data, idata, sampling=info, random_seed=label_seed)
        post.sampling = info
        if getattr(post, "sampler", None) is None:  # which sampler made the draws (a report names it)
            post.sampler = info.sampler
        post.model_spec = self
        terms = self._log_likelihood(post)
        if terms and "log_likelihood" not in post.idata.groups():
            # a point predicted with near certainty in every draw is exported exactly constant: az.loo is NaN else
            ds = xr.Dataset({name: (dims, exact_where_constant(arr)) for name, (dims, arr) in terms.items()})
            ds = ds.assign_coords(chain=post.idata.posterior["chain"].values, draw=post.idata.posterior["draw"].values)
            ids = getattr(post.data, "item_ids", None)  # one term per item: named by the items' ids
            if ids is not None and ds.sizes.get("item") == len(ids):
                ds = ds.assign_coords(item=ids)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                post.idata.add_groups(log_likelihood=ds)
        post.convergence = self._convergence(post, warn=warn)
        self._after_fit(post, warn=warn)
        return post
