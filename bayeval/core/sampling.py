"""Sampling a PyMC model: NUTS, or importance sampling where that is exact enough.

Low-dimensional models whose posterior is close to Gaussian on the unconstrained scale
(a 2-3 parameter calibration curve; a score mixture on thousands of scores) do not need
NUTS. :func:`importance_sample` finds the posterior mode, takes the curvature there,
draws from a multivariate Student-t proposal centred on it and reweights by the exact
posterior density (Pareto-smoothed importance sampling). The draws are then exact up
to Monte Carlo error *when the weights are well behaved*, which the Pareto shape
``k_hat`` says (Vehtari et al., "Pareto smoothed importance sampling", 2015/2024): below
0.7 the estimate is reliable. Where the first proposal's k is not, the proposal is
adapted once to the weighted draws' mean and covariance (a skewed posterior's mean is
off its mode) and drawn again. ``sampler="auto"`` uses it and falls back to NUTS
otherwise, so a user never gets a worse posterior for the speed.

A refit of a NUTS-bound model can reuse its previous fit (``previous=``): the earlier
draws are weighted by the ratio of the new posterior density to the earlier one (the
earlier posterior is the proposal), checked by the same Pareto k and an effective sample
size. Where the weights are reliable but too few draws carry them, the draws are
resampled and moved by a few rounds of Hamiltonian Monte Carlo under the new posterior
(resample-move); NUTS runs only where neither will do.

The compiled log-density of a model is cached by the model's *structure* (a key the
model class gives): refits with new data (the vetting loop, a study) swap the values of
the ``pm.Data`` containers and pay no compilation.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import time
import warnings
from dataclasses import dataclass, field

import arviz as az
import numpy as np
import pymc as pm
import pytensor
import xarray as xr
from pymc.blocking import DictToArrayBijection, RaveledVars
from scipy import optimize, special, stats

from . import _validate as V
from ._diagnostics import ESS_PER_CHAIN
from ._progress import Bar, covered

__all__ = ["SamplingInfo", "Previous", "sample_model", "cached_model", "SAMPLERS", "NUTS_SAMPLERS", "DEFAULT_NUTS"]

#: the NUTS implementations: PyMC's NUTS with the log-density compiled to C (``"pymc"``)
#: or with Numba (``"pymc-numba"``), nutpie (the ``fast`` extra), and NumPyro's and
#: BlackJAX's NUTS through PyMC's JAX backend (vectorized chains; need jax and numpyro
#: or blackjax, not installed with bayeval)
NUTS_SAMPLERS = ("pymc", "pymc-numba", "nutpie", "numpyro", "blackjax")
#: ``"smc"``: PyMC's sequential Monte Carlo (:func:`pymc.sample_smc`): each chain is an
#: independent run of ``draws`` particles tempered from the prior to the posterior, so a
#: posterior with a minor mode gets that mode at its weight instead of a chain stuck in it
#: (but its particles can be less spread than the posterior: measured on AnnotatorError).
#: ``"exact"``: independent draws of the exact posterior, for models whose posterior has a
#: closed form up to a one-dimensional integral (the model draws them, not this module)
SAMPLERS = ("auto", "importance", "smc", "exact", *NUTS_SAMPLERS)
#: the NUTS that ``sampler="auto"`` runs where a model needs NUTS: the fastest of those
#: a plain install has (PyMC and its PyTensor, which requires Numba), as measured by
#: ``benchmarks/fit_speed.py --backends`` (results in ``benchmarks/results/fit_speed.md``):
#: the Numba backend was faster for one NUTS-bound model, slower for another, even for
#: two, and compiled longer, so PyMC's C backend stays
DEFAULT_NUTS = "pymc"
_K_MAX = 0.7  # Pareto k above which importance weights are not trusted
_PROPOSAL_DF = 5.0
_PROPOSAL_INFLATE = 1.3
#: the first proposals' ESS per dimension below which their weighted covariance is not
#: trusted to adapt the proposal
_ADAPT_MIN_ESS_PER_DIM = 10
#: effective draws per chain below which a reweighted refit is not trusted (as the
#: convergence check's floor, ``_diagnostics.ESS_PER_CHAIN``)
_ESS_PER_CHAIN_MIN = ESS_PER_CHAIN
#: resample-move: a reweighted refit whose weights are reliable (Pareto k < 0.7) but whose
#: effective sample size is short of the floor resamples its draws and moves each with a
#: few rounds of Hamiltonian Monte Carlo (:func:`_move`). ``_MOVE_MIN_ESS``: the fewest
#: effective draws to start from (below it NUTS runs); ``_MOVE_MAX_ROUNDS``: the most
#: rounds before NUTS runs instead; ``_MOVE_PATH``: the length of a trajectory, in
#: posterior standard deviations; ``_MOVE_ACCEPT``: the acceptance rate the step size is
#: steered to. The moves stop once the effective sample size they give reaches
#: ``_MOVE_ESS_FRACTION`` of the draws (about what NUTS's draws of the loop's models have),
#: or once ``_MOVE_CORR`` bounds the correlation (over draws, of every coordinate) between
#: where the draws started and where they are
_MOVE_MIN_ESS = 20.0
_MOVE_MAX_ROUNDS = 12
_MOVE_PATH = 1.5
_MOVE_ACCEPT = 0.75
_MOVE_CORR = 0.1
_MOVE_ESS_FRACTION = 0.5
#: the pilot that sizes the moves' first step (:func:`_pilot_step`): trajectories of a
#: subset of the draws (``_PILOT_FRACTION`` of them, at least ``_PILOT_MIN``), at most
#: ``_PILOT_TRIES`` of them, until one accepts at least ``_PILOT_ACCEPT`` on average
_PILOT_FRACTION = 0.125
_PILOT_MIN = 64
_PILOT_TRIES = 5
_PILOT_ACCEPT = 0.5
#: whether the moves' first step is sized by the pilot (False: ``d^-1/4``, the route before it)
_MOVE_PILOT = True


@dataclass
class SamplingInfo:
    """How a fit was sampled, and the sampler's own diagnostics (a posterior's ``sampling``).

    Examples
    --------
    >>> from bayeval.core.sampling import SamplingInfo
    >>> info = SamplingInfo("importance", pareto_k=0.31, ess=1650.0, n_proposals=2000)
    >>> info.sampler, info.fallback_reason == "", info.extra
    ('importance', True, {})
    """

    sampler: str
    pareto_k: float = float("nan")
    ess: float = float("nan")
    n_proposals: int = 0
    fallback_reason: str = ""
    #: evaluations the fit made: of the log-density alone (importance sampling's
    #: proposals, the mode search's function values) and of its gradient (the mode
    #: search, the curvature, NUTS's leapfrog steps with tuning included -- each of
    #: those computes the density too); 0 for SMC, whose steps PyMC does not record
    n_logp_evals: int = 0
    n_grad_evals: int = 0
    #: wall time of the sampling, seconds (compilation included)
    seconds: float = float("nan")
    extra: dict = field(default_factory=dict)


#: elements per batch of the batched functions (about 32 MB per float64 intermediate):
#: the proposals are evaluated in chunks of ``_BATCH_ELEMENTS // (largest data container)``
_BATCH_ELEMENTS = 2**22
#: the largest data container (elements) at which a refit compiles the vectorized
#: log-density. One call per proposal costs a fixed overhead (tens of microseconds) plus
#: the work on the data, and batching saves only the overhead: with a few hundred vetted
#: labels it was 3x faster, but on 10^4 scores (a score mixture) or binned label-flip
#: counts no faster than the loop, while its compilation (one to a few seconds) made a
#: structure's first refit several times slower than the next ones. Above this size the
#: proposals are evaluated one call each and only the cheap constrained-value map is
#: vectorized.
_BATCH_LOGP_MAX_ELEMENTS = 2_000
#: seconds of compilation of a vectorized function per node of its one-point counterpart's
#: optimized graph (``"logp"``: the log-density, ``"outputs"``: the constrained-value
#: map), the estimate :meth:`_Compiled.batching_pays` weighs the one-point loops against.
#: Measured on the joint and one-score calibration models (2 cores, load about 8: 0.08 to
#: 0.10 for the log-density, about 0.06 for the map); each vectorized compilation in the
#: process moves its part's rate halfway (geometrically) to the one it took (the machine's
#: own speed).
_COMPILE_S_PER_NODE = {"logp": 0.09, "outputs": 0.06}


class _Compiled:
    """A model's log-density, gradient and constrained-value map, compiled once.

    Besides the one-point functions (the mode search, the curvature, a fallback) it
    holds the same log-density and constrained-value map *vectorized* over a leading
    batch dimension (:func:`pytensor.graph.replace.vectorize_graph`), each compiled on
    first use: importance sampling evaluates its proposals, and maps its draws to
    constrained values, in a few calls instead of one per draw. :func:`sample_model`
    uses them from a structure's second fit on (a refit through the cache), so a
    one-off fit does not pay their compilation, and then only once the one-point loops
    they replace have cost as much as their compilation would (:meth:`batching_pays`);
    the log-density only where the data are small enough for batching to pay
    (``_BATCH_LOGP_MAX_ELEMENTS``).
    """

    def __init__(self, model: pm.Model, valgrad=None):
        self.model = model
        self.value_vars = model.value_vars
        self._logp = None  # the one-point log-density, compiled on first use
        keep = {v.name for v in model.free_RVs} | {v.name for v in model.deterministics}
        self._outs = [v for v in model.unobserved_value_vars if v.name in keep]  # constrained, as NUTS stores them
        self.out_names = [v.name for v in self._outs]
        # the gradient and the constrained-value map are compiled on first use: a refit
        # that reweights a previous fit's draws needs the log-density alone
        self._dlogp = self._outputs = None
        # PyMC's joint log-density-and-gradient of the raveled value, the function its NUTS
        # compiles: the mode search's gradient comes from it, and a NUTS fallback reuses it
        # instead of compiling the same graph again (all-continuous models)
        self._valgrad = valgrad
        if valgrad is not None:
            # PyMC sets the (no) extra values at each NUTS step, in the process that samples:
            # a function kept from chains sampled in child processes never had them set here
            valgrad.set_extra_values({})
        self.continuous = len(model.continuous_value_vars) == len(model.value_vars)
        #: the log-density from the joint log-density-and-gradient function, not a compiled
        #: function of its own: the cache entry of a structure first fitted by PyMC's NUTS,
        #: whose function it keeps (a reweighted refit then compiles nothing)
        self.density_from_valgrad = valgrad is not None and self.continuous
        self.ip = model.initial_point()
        self.names = [v.name for v in self.value_vars]
        self.point_map = DictToArrayBijection.map({k: self.ip[k] for k in self.names}).point_map_info
        self.n_f = 0
        self.n_g = 0
        #: importance samplings that succeeded with these functions (the batched ones are
        #: used from the second on: a refit through the cache)
        self.n_fits = 0
        self._batched = None  # [logp, outputs] vectorized (each None until compiled), False where vectorizing failed
        self.batch_error = ""
        #: whether a batched chunk of proposals costs less per proposal than one call
        #: each (measured on the first importance sampling that can compare; None: not yet)
        self.batch_faster: bool | None = None
        #: seconds and rows of the one-point loops that a vectorized function would
        #: replace (the proposals' log-density, the draws' constrained values), over this
        #: structure's fits: what :meth:`batching_pays` weighs against a compilation
        self.loop_seconds = {"logp": 0.0, "outputs": 0.0}
        self.loop_rows = {"logp": 0, "outputs": 0}

    @property
    def logp(self):
        if self._logp is None:
            self._logp = self.model.compile_logp(jacobian=True)
        return self._logp

    @property
    def dlogp(self):
        if self._dlogp is None:
            self._dlogp = self.model.compile_dlogp(jacobian=True)
        return self._dlogp

    def valgrad(self):
        """PyMC's ``logp_dlogp_function`` of the raveled value, compiled on first use."""
        if self._valgrad is None:
            fn = self.model.logp_dlogp_function(ravel_inputs=True)
            fn.trust_input = True
            fn.set_extra_values({})
            self._valgrad = fn
        return self._valgrad

    @property
    def outputs(self):
        if self._outputs is None:
            self._outputs = self.model.compile_fn(self._outs, inputs=self.value_vars, on_unused_input="ignore",
                                                  point_fn=False)
        return self._outputs

    def unravel(self, u: np.ndarray) -> dict:
        return DictToArrayBijection.rmap(RaveledVars(u, self.point_map))

    def ravel(self, point: dict) -> np.ndarray:
        return DictToArrayBijection.map({k: point[k] for k in self.names}).data

    def f(self, u):
        self.n_f += 1
        if self.density_from_valgrad and self._logp is None:
            return float(self._valgrad(np.ascontiguousarray(u, dtype=pytensor.config.floatX))[0])
        return float(self.logp(self.unravel(u)))

    def g(self, u):
        self.n_g += 1
        if self.continuous:
            x = np.ascontiguousarray(u, dtype=pytensor.config.floatX)
            return np.asarray(self.valgrad()(x)[1], dtype=np.float64)
        return np.asarray(self.dlogp(self.unravel(u)), dtype=np.float64)

    # ------------------------------------------------------------- batched

    def _vectorized(self, part: str) -> bool:
        """Whether the vectorized ``part`` (``"logp"`` or ``"outputs"``) is there,
        compiled now on first call."""
        i = ("logp", "outputs").index(part)
        if self._batched is None:
            self._batched = [None, None]
        if self._batched is not False and self._batched[i] is None:
            try:
                t0 = time.perf_counter()
                self._batched[i] = _vectorize(self.model, self.value_vars, self._outs, part)
                nodes = self._one_point_nodes(part)
                if nodes:  # toward this machine's own rate (damped: one compile's time is noisy)
                    rate = (time.perf_counter() - t0) / nodes
                    _COMPILE_S_PER_NODE[part] = float(np.sqrt(_COMPILE_S_PER_NODE[part] * rate))
            except Exception as exc:  # an Op without a batched form: the one-point functions serve
                self._batched = False
                self.batch_error = f"{type(exc).__name__}: {exc}"
        return self._batched is not False

    def batched(self) -> bool:
        """Whether the vectorized log-density and constrained-value map are there
        (compiled now on first call)."""
        return self._vectorized("logp") and self._vectorized("outputs")

    def batched_outputs(self) -> bool:
        """Whether the vectorized constrained-value map is there (compiled now on first call)."""
        return self._vectorized("outputs")

    def logp_worth_batching(self) -> bool:
        """Whether the data are small enough for the vectorized log-density to pay
        (``_BATCH_LOGP_MAX_ELEMENTS``), or it is compiled already."""
        if self._batched and self._batched[0] is not None:
            return True
        sizes = [np.size(v.get_value(borrow=True)) for v in self.model.data_vars]
        return max([0, *sizes]) <= _BATCH_LOGP_MAX_ELEMENTS

    def record_loop(self, part: str, rows: int, seconds: float) -> None:
        """Count a one-point loop of ``part`` (``"logp"`` or ``"outputs"``) over ``rows`` rows."""
        self.loop_seconds[part] += seconds
        self.loop_rows[part] += rows

    def _one_point_nodes(self, part: str) -> int:
        """Nodes of ``part``'s one-point compiled graph (the log-density: half of the joint
        density-and-gradient's where only that one is compiled); 0 where none is compiled."""
        fn = self._logp.f if part == "logp" and self._logp is not None else (
            self._outputs if part == "outputs" else None)
        if fn is not None:
            return len(fn.maker.fgraph.apply_nodes)
        if part == "logp" and self._valgrad is not None:
            inner = getattr(self._valgrad, "_pytensor_function", None)
            return len(inner.maker.fgraph.apply_nodes) // 2 if inner is not None else 0
        return 0

    def compile_estimate(self, part: str) -> float:
        """Seconds the vectorized ``part`` would take to compile (``_COMPILE_S_PER_NODE``
        times its one-point graph's nodes); inf where no one-point graph is there to count."""
        nodes = self._one_point_nodes(part)
        return nodes * _COMPILE_S_PER_NODE[part] if nodes else float("inf")

    def batching_pays(self, part: str, rows: int) -> bool:
        """Whether to evaluate ``rows`` rows of ``part`` with its vectorized function.

        Yes where it is compiled already; no where it cannot be (its graph does not
        vectorize, or, for the log-density, the data are too large for batching to pay:
        ``_BATCH_LOGP_MAX_ELEMENTS``); otherwise yes once this structure's one-point
        loops of ``part`` -- those already run and this one, at their measured time per
        row -- cost at least the compilation's estimate (:meth:`compile_estimate`).
        Paying for a compilation only when the loops it replaces have cost as much keeps
        a structure's total at most about twice the better of always and never batching,
        whichever it turns out to be (a one-off comparison, or a labelling loop's
        hundred refits). Batched or not, the values are the same up to floating point.
        """
        i = ("logp", "outputs").index(part)
        if self._batched is False:
            return False
        if self._batched is not None and self._batched[i] is not None:
            return True
        if part == "logp" and not self.logp_worth_batching():
            return False
        seen = self.loop_rows[part]
        per_row = self.loop_seconds[part] / seen if seen else 0.0
        # (a relative 1e-9: loops that cost exactly the estimate pay, whatever the rounding of the sum)
        return self.loop_seconds[part] + rows * per_row >= self.compile_estimate(part) * (1.0 - 1e-9)

    def _split(self, u: np.ndarray) -> list[np.ndarray]:
        """Rows of raveled points -> one ``(batch, *shape)`` array per value variable."""
        out, off = [], 0
        for _name, shape, size, dtype in self.point_map:
            out.append(np.ascontiguousarray(u[:, off:off + size].reshape((u.shape[0], *shape)), dtype=dtype))
            off += size
        return out

    def _chunk(self) -> int:
        sizes = [np.size(v.get_value(borrow=True)) for v in self.model.data_vars]
        return max(1, _BATCH_ELEMENTS // max([1, *sizes]))

    def f_batch(self, u: np.ndarray, on_chunk=None) -> np.ndarray:
        """The log-density at every row of ``u`` (``(batch, d)``, unconstrained);
        ``on_chunk(n)`` is called after each chunk of ``n`` rows."""
        self._vectorized("logp")
        fn = self._batched[0]
        step = self._chunk()
        out = np.empty(len(u))
        for i in range(0, len(u), step):
            part = u[i:i + step]
            out[i:i + len(part)] = np.asarray(fn(*self._split(part)), dtype=np.float64).reshape(-1)
            self.n_f += len(part)
            if on_chunk is not None:
                on_chunk(len(part))
        return out

    def logp_many(self, u: np.ndarray, on_chunk=None) -> np.ndarray:
        """The log-density at every row of ``u``, the faster way for this structure.

        Batched chunks, except where the vectorized graph computes more slowly than
        one call per point (a graph whose batched form reads its data with strides):
        the first chunk is evaluated batched and the next few rows one at a time, and
        the cheaper per row is used for the rest and kept for later fits. Both give the
        same values up to floating point.
        """
        n = len(u)
        out = np.empty(n)
        step = self._chunk()

        def loop(lo, hi):
            t0 = time.perf_counter()
            for j in range(lo, hi):
                out[j] = self.f(u[j])
            self.record_loop("logp", hi - lo, time.perf_counter() - t0)
            if on_chunk is not None:
                on_chunk(hi - lo)

        i = 0
        if self.batch_faster is None and n > step:
            t0 = time.perf_counter()
            out[:step] = self.f_batch(u[:step], on_chunk)
            per_batched = (time.perf_counter() - t0) / step
            k = min(32, n - step)
            t0 = time.perf_counter()
            loop(step, step + k)
            self.batch_faster = per_batched <= (time.perf_counter() - t0) / k
            i = step + k
        if self.batch_faster is False:
            for lo in range(i, n, 100):
                loop(lo, min(n, lo + 100))
        elif i < n:
            out[i:] = self.f_batch(u[i:], on_chunk)
        return out

    def valgrad_many(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The log-density and its gradient at every row of ``u`` (``(batch, d)``), one
        call of :meth:`valgrad` (the function NUTS uses) per row; all-continuous models.
        (A vectorized gradient was measured on LabelFlip: twice the time per row, and
        8 s to compile.)"""
        n, d = u.shape
        lp, g = np.empty(n), np.empty((n, d))
        fn = self.valgrad()
        for j in range(n):
            v, gj = fn(np.ascontiguousarray(u[j], dtype=pytensor.config.floatX))
            lp[j], g[j] = float(v), gj
        self.n_g += n
        return lp, g

    def outputs_batch(self, u: np.ndarray) -> list[np.ndarray]:
        """The constrained values (``out_names``) at every row of ``u``, batch first."""
        self._vectorized("outputs")
        fn = self._batched[1]
        step = self._chunk()
        parts = [fn(*self._split(u[i:i + step])) for i in range(0, len(u), step)]
        return [np.concatenate([np.asarray(p[j]) for p in parts]) for j in range(len(self.out_names))]


def _cores(cores: int | None, chains: int) -> int:
    """Processes for PyMC's chains: ``cores`` (default: up to two), but one inside a daemonic
    process (a Dask worker, a multiprocessing pool's worker), which may not start children:
    PyMC then runs the chains one after another, with the same draws."""
    import multiprocessing

    if multiprocessing.current_process().daemon:
        return 1
    return cores or min(chains, 2)


def _vectorize(model: pm.Model, value_vars, outs, part: str):
    """``model``'s log-density (``part="logp"``) or ``outs`` (``"outputs"``), vectorized
    over a leading batch dimension and compiled."""
    import pytensor.tensor as pt
    from pytensor.graph.replace import vectorize_graph

    batch = [pt.tensor(name=v.name, dtype=v.dtype, shape=(None, *v.type.shape)) for v in value_vars]
    repl = dict(zip(value_vars, batch, strict=True))
    if part == "logp":
        out = vectorize_graph(model.logp(jacobian=True), replace=repl)
        if out.ndim != 1:
            raise ValueError(f"the vectorized log-density has {out.ndim} dimensions, not 1")
    else:
        out = vectorize_graph(list(outs), replace=repl)
    return model.compile_fn(out, inputs=batch, on_unused_input="ignore", point_fn=False)


_CACHE: dict = {}
_CACHE_MAX = 32


def _quiet_blas_probe() -> None:
    """Let PyTensor look for a BLAS (once per process) without its "use conda" warning.

    After a plain ``pip install`` PyTensor finds no BLAS it can link and warns, the first
    time a graph is compiled, that "operations that might benefit from BLAS will be
    severely degraded". bayeval's model graphs hold no BLAS operation (no Dot, Gemm or
    Gemv in the compiled log-density and gradient of the calibration curves and the
    score mixtures), so a BLAS would not speed them up and the warning only confuses;
    ``docs/index.md`` (Install) says so once. The search runs here, under a filter for
    that one message; PyTensor keeps its result for the rest of the process, and a BLAS
    it does find is used as before.
    """
    import pytensor

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS", category=UserWarning)
        pytensor.config.blas__ldflags  # noqa: B018 -- the search runs on first access


def compiled(model: pm.Model, key=None) -> _Compiled:
    """The compiled functions of ``model``; cached under ``key`` when one is given.

    With a key, the *first* model built for that structure is compiled and kept; later
    calls with the same key must set its data containers (``pm.set_data``) before use.
    """
    if key is None:
        return _Compiled(model)
    hit = _CACHE.get(key)
    if hit is None:
        if len(_CACHE) >= _CACHE_MAX:
            _CACHE.pop(next(iter(_CACHE)))
        hit = _CACHE[key] = _Compiled(model)
    return hit


def cached_model(key):
    """The PyMC model compiled earlier under ``key`` (set its data before use), or None.

    Examples
    --------
    >>> from bayeval.core.sampling import cached_model
    >>> cached_model(("NoSuchModel", "no structure")) is None
    True
    """
    hit = _CACHE.get(key)
    return None if hit is None else hit.model


def _mode(c: _Compiled, start: np.ndarray) -> tuple[np.ndarray, bool]:
    res = optimize.minimize(lambda u: -c.f(u), start, jac=lambda u: -c.g(u), method="BFGS",
                            options={"gtol": 1e-6, "maxiter": 2000})
    ok = bool(np.all(np.isfinite(res.x))) and np.isfinite(res.fun)
    return res.x, ok


def _hessian(c: _Compiled, u: np.ndarray) -> np.ndarray:
    d = u.size
    h = np.empty((d, d))
    for j in range(d):
        e = np.zeros(d)
        step = 1e-4 * max(1.0, abs(u[j]))
        e[j] = step
        h[:, j] = (c.g(u + e) - c.g(u - e)) / (2 * step)
    return 0.5 * (h + h.T)


def importance_sample(c: _Compiled, *, n_draws: int, rng: np.random.Generator, start: np.ndarray | None = None,
                      oversample: int = 1, batched: bool = True,
                      progress=None) -> tuple[np.ndarray | None, SamplingInfo]:
    """Equally weighted draws (unconstrained, ``(n_draws, d)``) or None with the reason.

    ``batched``: evaluate the proposals with the vectorized log-density in a few calls
    (the default; one call per proposal where the model's graph does not vectorize,
    or with ``batched=False``). Both give the same draws up to floating point.
    ``progress``: a :meth:`bayeval.core._progress.Bar.update` told each stage and the
    proposals evaluated. Where the first proposals' Pareto k is 0.7 or more, and their
    ESS is at least 10 per dimension, the proposal is adapted once to their weighted mean
    and covariance and drawn again; the second proposals alone make the draws, and
    ``info.extra`` records ``adapted`` and the first ``k``.
    """
    say = progress or (lambda *a, **k: None)
    u0 = c.ravel(c.ip) if start is None else start
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        say("bayeval: finding the posterior mode", total=None)
        mode, ok = _mode(c, u0)
        if not ok:
            return None, SamplingInfo("importance", fallback_reason="no posterior mode found")
        say("bayeval: the curvature at the mode")
        neg_h = -_hessian(c, mode)
        if not np.all(np.isfinite(neg_h)):
            return None, SamplingInfo("importance", fallback_reason="the posterior curvature at the mode is not finite")
        try:
            np.linalg.cholesky(neg_h)  # raises unless the curvature is positive definite
        except np.linalg.LinAlgError:
            return None, SamplingInfo("importance", fallback_reason="the posterior curvature at the mode is not positive definite")
        cov = np.linalg.inv(neg_h) * _PROPOSAL_INFLATE**2
        cov = 0.5 * (cov + cov.T)
        d = mode.size
        m = max(2000, oversample * n_draws)
        fast = batched and c.logp_worth_batching() and c._vectorized("logp")
        u, w, k, ess, reason = _weighted_proposals(c, mode, cov, m, rng, fast, say)
        if reason:
            return None, SamplingInfo("importance", fallback_reason=reason)
        extra = {"batched": bool(fast) and c.batch_faster is not False}
        n_prop = m
        if not k < _K_MAX and ess >= _ADAPT_MIN_ESS_PER_DIM * d:
            # one adaptation: a proposal with the weighted draws' mean and covariance (the
            # posterior's skew moves its mean off the mode, and its spread off the curvature
            # there); the weights of the new proposals alone make the draws
            loc = w @ u
            dev = u - loc
            shape = (w[:, None] * dev).T @ dev * _PROPOSAL_INFLATE**2
            shape = 0.5 * (shape + shape.T)
            try:
                np.linalg.cholesky(shape)
            except np.linalg.LinAlgError:
                shape = None
            if shape is not None:
                say("bayeval: importance sampling, adapted proposal")
                u2, w2, k2, ess2, reason2 = _weighted_proposals(c, loc, shape, m, rng, fast, say)
                n_prop += m
                extra.update(adapted=True, first_pareto_k=float(k))
                if not reason2:
                    u, w, k, ess = u2, w2, k2, ess2
    info = SamplingInfo("importance", pareto_k=float(k), ess=ess, n_proposals=n_prop, extra=extra)
    if not k < _K_MAX:
        info.fallback_reason = f"importance weights unreliable (Pareto k = {float(k):.2f} > {_K_MAX})"
        return None, info
    # systematic resampling: equally weighted draws, order randomized
    pos = (rng.random() + np.arange(n_draws)) / n_draws
    idx = np.searchsorted(np.cumsum(w), pos, side="left").clip(0, m - 1)
    return u[rng.permutation(idx)], info


def _weighted_proposals(c: _Compiled, loc, shape, m: int, rng, fast: bool, say):
    """``m`` proposals from a multivariate t at ``loc``/``shape`` and their normalized
    Pareto-smoothed weights: ``(u, w, k, ess, "")``, or a reason in the last place when
    too many proposals fall where the density is zero."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prop = stats.multivariate_t(loc=loc, shape=shape, df=_PROPOSAL_DF, seed=rng)
        u = np.atleast_2d(prop.rvs(size=m)).reshape(m, len(loc))
        logq = prop.logpdf(u)
        say(f"bayeval: importance sampling ({m:,} proposals)", total=m, completed=0)
        if fast:
            logp = c.logp_many(u, on_chunk=lambda n: say(advance=n))
        else:
            logp = np.empty(m)
            t0 = time.perf_counter()
            for i, x in enumerate(u):
                logp[i] = c.f(x)
                if i % 100 == 99:
                    say(advance=100)
            c.record_loop("logp", m, time.perf_counter() - t0)
    finite = np.isfinite(logp)
    if finite.mean() < 0.9:
        return u, None, np.inf, 0.0, "the proposal reached regions of zero density"
    lw = np.where(finite, logp - logq, -np.inf)
    lw = lw - np.max(lw[finite])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lw_s, k = az.psislw(lw[finite])
    full = np.full(m, -np.inf)
    full[finite] = lw_s
    w = np.exp(full - special.logsumexp(full))
    return u, w, float(k), float(1.0 / np.sum(w**2)), ""


def _to_idata(c: _Compiled, u: np.ndarray, chains: int, draws: int, batched: bool = True) -> az.InferenceData:
    if batched and c.batched_outputs():
        arrays = c.outputs_batch(u)
    else:
        t0 = time.perf_counter()
        outs = [c.outputs(**c.unravel(x)) for x in u]
        c.record_loop("outputs", len(u), time.perf_counter() - t0)
        arrays = [np.stack([np.asarray(o[j]) for o in outs]) for j in range(len(c.out_names))]
    model = c.model
    dims = model.named_vars_to_dims
    data = {}
    for name, arr in zip(c.out_names, arrays, strict=True):
        data[name] = arr.reshape((chains, draws) + arr.shape[1:])
    coords = {k: np.asarray(v) for k, v in model.coords.items() if v is not None}
    ds = {}
    for name, arr in data.items():
        d = ["chain", "draw"] + list(dims.get(name, [f"{name}_dim_{i}" for i in range(arr.ndim - 2)]))
        ds[name] = xr.DataArray(arr, dims=d)
    used = {dd for v in ds.values() for dd in v.dims}
    post = xr.Dataset(ds, coords={k: v for k, v in coords.items() if k in used})
    post = post.assign_coords(chain=np.arange(chains), draw=np.arange(draws))
    return az.InferenceData(posterior=post)


@dataclass
class Previous:
    """An earlier fit of the same model structure, for a refit that reweights its draws.

    ``idata``: the earlier fit's draws (its ``posterior`` group, constrained values);
    ``data_values`` / ``coords``: the values of the model's data containers and the
    lengths of their dims for the earlier data (what ``Model._data_values`` and
    ``Model._coords`` give); ``ess``: the earlier draws' effective sample size (NUTS:
    the lowest bulk ESS; a reweighted fit: its own ESS).

    Examples
    --------
    >>> import arviz as az, numpy as np
    >>> from bayeval.core.sampling import Previous
    >>> prev = Previous(az.from_dict(posterior={"mu": np.zeros((2, 50))}), {}, None, ess=80.0)
    >>> prev.ess, dict(prev.idata.posterior.sizes)
    (80.0, {'chain': 2, 'draw': 50})
    """

    idata: az.InferenceData
    data_values: dict
    coords: dict | None
    ess: float


def _unconstrained(c: _Compiled, idata: az.InferenceData) -> np.ndarray:
    """The draws of ``idata`` on the sampler's unconstrained scale, ``(draws, d)`` in
    ``c``'s order; ValueError where they do not fit the model's parameters."""
    model, post = c.model, idata.posterior
    cols = []
    for vv, (_name, shape, size, _dtype) in zip(c.value_vars, c.point_map, strict=True):
        rv = model.values_to_rvs[vv]
        if rv.name not in post:
            raise ValueError(f"the previous fit has no {rv.name!r}")
        x = np.asarray(post[rv.name].values, dtype=np.float64)
        x = x.reshape(x.shape[0] * x.shape[1], *x.shape[2:])
        tr = model.rvs_to_transforms.get(rv)
        if tr is not None:  # (a transform may change the shape: a simplex of K has K - 1 free values)
            kind = type(tr).__name__
            if kind == "LogTransform":
                x = np.log(x)
            elif kind == "LogOddsTransform":
                x = special.logit(x)
            else:
                x = np.asarray(tr.forward(x, *rv.owner.inputs).eval(), dtype=np.float64)
        if x.shape[1:] != tuple(shape):
            raise ValueError(f"{rv.name!r} has shape {x.shape[1:]} in the previous fit (on the sampler's scale), "
                             f"{tuple(shape)} now")
        cols.append(x.reshape(len(x), size))
    u = np.concatenate(cols, axis=1) if cols else np.zeros((post.sizes["chain"] * post.sizes["draw"], 0))
    if not np.all(np.isfinite(u)):
        raise ValueError("the previous fit's draws are not finite on the sampler's scale")
    return u


def _data_free_outputs(model: pm.Model, names) -> bool:
    """Whether none of the variables ``names`` depends on the model's data containers
    (so a draw's values can be copied from an earlier fit of other data)."""
    from pytensor.graph.traversal import ancestors

    data = set(model.data_vars)
    return not any(a in data for a in ancestors([model[n] for n in names]))


def _logp_rows(c: _Compiled, u: np.ndarray, batched: bool) -> np.ndarray:
    if batched and c._vectorized("logp"):
        return c.logp_many(u)
    return np.array([c.f(x) for x in u])


def _reweight_previous(c: _Compiled, previous: Previous, *, n_draws: int, rng: np.random.Generator,
                      batched: bool = False, say=None, move: bool = False) -> tuple[np.ndarray | None, SamplingInfo]:
    """Indices into the previous fit's draws making ``n_draws`` equally weighted draws of
    the posterior given ``c``'s current data, or None with the reason.

    The earlier fit's draws are a sample of the earlier posterior; weighted by the ratio
    of the new posterior density to the earlier one (both evaluated with the compiled
    log-density, the earlier data swapped in for the second), they are a weighted
    sample of the new posterior (importance sampling with the earlier posterior as the
    proposal). Repeated draws (an earlier reweighted fit) are evaluated once and weigh
    as many draws as they stand for. Reliable when the Pareto k of the smoothed weights
    is below 0.7 and the effective sample size -- Kish's of the weights, times the
    earlier draws' own ESS per distinct draw -- is at least 100 per chain. With
    ``move``, weights that are reliable but fall short of that ESS (by no more than down
    to ``_MOVE_MIN_ESS``) still give the resampled rows, ``info.extra["move"]`` set: the
    caller moves them (:func:`_move`).
    """
    say = say or (lambda *a, **k: None)
    u_all = _unconstrained(c, previous.idata)
    u, first, counts = np.unique(u_all, axis=0, return_index=True, return_counts=True)
    model = c.model
    now_vals = {v.name: v.get_value() for v in model.data_vars}
    now_coords = None
    if previous.coords:
        now_coords = {k: model.coords[k] for k in previous.coords if k in model.coords}
    say(f"bayeval: reweighting the previous fit ({len(u):,} draws)", total=None)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lp_new = _logp_rows(c, u, batched)
        try:
            pm.set_data(previous.data_values, model=model, coords=previous.coords)
            lp_old = _logp_rows(c, u, batched)
        finally:
            pm.set_data(now_vals, model=model, coords=now_coords)
        finite = np.isfinite(lp_new) & np.isfinite(lp_old)
        info = SamplingInfo("importance", n_proposals=len(u), n_logp_evals=2 * len(u),
                            extra={"proposal": "previous fit", "distinct_draws": int(len(u))})
        if finite.mean() < 0.99:
            info.fallback_reason = "the previous fit's draws fall where the new posterior has no density"
            return None, info
        lw = np.where(finite, lp_new - lp_old + np.log(counts), -np.inf)
        lw = lw - np.max(lw[finite])
        lw_s, k = az.psislw(lw[finite])
    full = np.full(len(u), -np.inf)
    full[finite] = lw_s
    w = np.exp(full - special.logsumexp(full))
    kish = float(1.0 / np.sum(w**2))
    per_draw = min(1.0, float(previous.ess) / len(u)) if np.isfinite(previous.ess) and previous.ess > 0 else 1.0
    ess = kish * per_draw
    info.pareto_k, info.ess = float(k), ess
    info.extra.update(kish_ess=kish, previous_ess=float(previous.ess))
    need = _ESS_PER_CHAIN_MIN * max(1, previous.idata.posterior.sizes["chain"])
    if not k < _K_MAX:
        info.fallback_reason = (f"reweighting the previous fit: weights unreliable (Pareto k = {float(k):.2f} "
                                f">= {_K_MAX})")
        return None, info
    if not ess >= need:
        if not (move and c.continuous and ess >= _MOVE_MIN_ESS):
            info.fallback_reason = f"reweighting the previous fit: effective sample size {ess:.0f} < {need}"
            return None, info
        info.extra["move"] = True  # too few effective draws to keep as they are: resampled, then moved
    pos = (rng.random() + np.arange(n_draws)) / n_draws
    idx = np.searchsorted(np.cumsum(w), pos, side="left").clip(0, len(u) - 1)
    return first[idx[rng.permutation(n_draws)]], info  # rows of the previous draws


def _corr_with(x0: np.ndarray, x: np.ndarray) -> float:
    """The largest correlation, over the coordinates, between the rows of ``x0`` and of
    ``x`` (where the draws started and where they are)."""
    a, b = x0 - x0.mean(axis=0), x - x.mean(axis=0)
    den = np.sqrt((a**2).sum(axis=0) * (b**2).sum(axis=0))
    with np.errstate(all="ignore"):
        r = np.where(den > 0, (a * b).sum(axis=0) / np.where(den > 0, den, 1.0), 1.0)
    return float(np.max(np.abs(r))) if r.size else 0.0


def _trajectory(c: _Compiled, x, lp, g, var, eps: float, rng: np.random.Generator):
    """One Hamiltonian trajectory of about ``_MOVE_PATH`` posterior sds from every row of
    ``x`` (log-density ``lp``, gradient ``g``; inverse mass matrix ``var``; the step ``eps``
    jittered per row by +-20%): the proposed rows, their log-density and gradient, the
    log acceptance probabilities and the number of leapfrog steps."""
    n, d = x.shape
    steps = max(1, int(np.ceil(_MOVE_PATH / eps)))
    e = eps * rng.uniform(0.8, 1.2, size=(n, 1))
    p = rng.standard_normal((n, d)) / np.sqrt(var)  # momentum ~ N(0, diag(1 / var))
    h0 = -lp + 0.5 * np.sum(p**2 * var, axis=1)
    xn, pn = x.copy(), p + 0.5 * e * g
    for s in range(steps):
        xn = xn + e * var * pn
        lpn, gn = c.valgrad_many(xn)
        pn = pn + (e if s < steps - 1 else 0.5 * e) * gn
    h1 = -lpn + 0.5 * np.sum(pn**2 * var, axis=1)
    return xn, lpn, gn, np.where(np.isfinite(h1), h0 - h1, -np.inf), steps


def _steer(eps: float, rate: float) -> float:
    """The step size after a round (or pilot) that accepted ``rate`` on average: moved
    towards an acceptance of ``_MOVE_ACCEPT`` (at most e-fold down, 1.65-fold up)."""
    return eps * float(np.exp(np.clip(2.0 * (rate - _MOVE_ACCEPT), -1.0, 0.5)))


def _pilot_step(c: _Compiled, x, lp, g, var, eps: float, rng: np.random.Generator) -> tuple[float, dict]:
    """The step size the moves start from: trajectories of a random subset of the draws
    (none of them moved) at the step ``eps``, steered after each as a round steers it,
    until one accepts at least ``_PILOT_ACCEPT`` on average. A round of all the draws at a
    step that accepts a few per cent moves almost none of them; the pilot's trajectories
    cost ``_PILOT_FRACTION`` of a round's each. ``(step, {"accept": rates, "step_sizes":
    the steps tried})``."""
    n = len(x)
    m = min(n, max(_PILOT_MIN, int(np.ceil(_PILOT_FRACTION * n))))
    sub = rng.choice(n, size=m, replace=False) if m < n else np.arange(n)
    rates, tried = [], []
    for _ in range(_PILOT_TRIES):
        *_, log_a, _steps = _trajectory(c, x[sub], lp[sub], g[sub], var, eps, rng)
        rate = float(np.mean(np.exp(np.minimum(log_a, 0.0))))
        rates.append(rate)
        tried.append(eps)
        eps = _steer(eps, rate)
        if rate >= _PILOT_ACCEPT:
            break
    return eps, {"accept": rates, "step_sizes": tried, "draws": int(m)}


def _move(c: _Compiled, u: np.ndarray, rng: np.random.Generator, *, ess_in: float,
          say=None, pilot: bool = True) -> tuple[np.ndarray | None, dict]:
    """Resample-move: HMC moves of the resampled draws ``u`` (rows, unconstrained) that
    leave the current posterior invariant, until the draws no longer remember where
    they started. ``(moved draws, statistics)``, the draws None where ``_MOVE_MAX_ROUNDS``
    rounds did not get there.

    Each round gives every draw one Hamiltonian trajectory of about ``_MOVE_PATH``
    posterior standard deviations (leapfrog steps with the resampled draws' variances as
    the inverse mass matrix, the step size jittered per draw) and a Metropolis accept or
    reject, so every round is a valid MCMC step for the posterior; between rounds the
    step size is steered to an acceptance rate of ``_MOVE_ACCEPT`` (it depends on the
    past rounds only). The effective sample size of the moved draws is taken to
    interpolate, by the largest correlation ``r`` between a coordinate's starting and
    current values, between the resampled draws' ``ess_in`` and the number of draws
    ``n``: ``1 / (r^2 / ess_in + (1 - r^2) / n)``; the rounds stop once it reaches
    ``_MOVE_ESS_FRACTION * n``, or ``r`` is below ``max(_MOVE_CORR, 3 / sqrt(n))`` (the
    noise of a correlation over ``n`` draws). With ``pilot`` the first round's step is
    sized by :func:`_pilot_step` (without, it is ``d^-1/4``, which on LabelFlip accepted
    a few per cent of the first round's trajectories).
    """
    say = say or (lambda *a, **k: None)
    n, d = u.shape
    var = u.var(axis=0)
    var = np.where(var > 0, var, 1e-8)
    x0, x = u, u.copy()
    with np.errstate(all="ignore"):
        lp, g = c.valgrad_many(x)
        if not np.all(np.isfinite(lp)):
            return None, {"reason": "the resampled draws have no finite density"}
        eps = min(1.0, d ** -0.25)
        pilot_stats = None
        if pilot:
            say("bayeval: sizing the moves' step", total=None)
            eps, pilot_stats = _pilot_step(c, x, lp, g, var, eps, rng)
        goal = max(_MOVE_CORR, 3.0 / np.sqrt(n))
        accept_rates, r = [], 1.0
        for rnd in range(_MOVE_MAX_ROUNDS):
            say(f"bayeval: moving the resampled draws (round {rnd + 1})", total=None)
            xn, lpn, gn, log_a, steps = _trajectory(c, x, lp, g, var, eps, rng)
            take = np.log(rng.random(n)) < log_a
            x[take], lp[take], g[take] = xn[take], lpn[take], gn[take]
            rate = float(np.mean(np.exp(np.minimum(log_a, 0.0))))
            accept_rates.append(rate)
            eps = _steer(eps, rate)
            r = _corr_with(x0, x)
            ess = float(min(n, 1.0 / (r**2 / max(ess_in, 1.0) + (1.0 - r**2) / n)))
            if r < goal or ess >= _MOVE_ESS_FRACTION * n:
                break
    stats = {"rounds": rnd + 1, "accept": accept_rates, "corr": r, "step_size": eps, "steps": steps, "ess": ess}
    if pilot_stats is not None:
        stats["pilot"] = pilot_stats
    if not (r < goal or ess >= _MOVE_ESS_FRACTION * n):
        stats["reason"] = (f"the moved draws still correlate {r:.2f} with where they started after "
                           f"{_MOVE_MAX_ROUNDS} rounds")
        return None, stats
    return x, stats


def _resampled_idata(c: _Compiled, previous: Previous, rows: np.ndarray, chains: int, draws: int,
                     batched: bool) -> az.InferenceData:
    """The draws ``rows`` (flat indices of the previous fit's draws) as a posterior of
    ``chains`` x ``draws``: copied where no output depends on the data, else mapped anew."""
    post = previous.idata.posterior
    if all(n in post for n in c.out_names) and _data_free_outputs(c.model, c.out_names):
        ds = {}
        for n in c.out_names:
            a = np.asarray(post[n].values)
            a = a.reshape(a.shape[0] * a.shape[1], *a.shape[2:])[rows]
            ds[n] = xr.DataArray(a.reshape(chains, draws, *a.shape[1:]),
                                 dims=("chain", "draw", *post[n].dims[2:]))
        coords = {d: post.coords[d].values for d in {d for v in ds.values() for d in v.dims[2:]} if d in post.coords}
        out = xr.Dataset(ds, coords=coords).assign_coords(chain=np.arange(chains), draw=np.arange(draws))
        return az.InferenceData(posterior=out)
    u = _unconstrained(c, previous.idata)[rows]
    return _to_idata(c, u, chains, draws, batched=batched)


_NUTPIE_CACHE: dict = {}


def _value_space(model: pm.Model, start: dict) -> dict:
    """Constrained starting values by variable name -> the sampler's unconstrained values."""
    out = {}
    for name, val in start.items():
        rv = model[name]
        vv = model.rvs_to_values[rv]
        tr = model.rvs_to_transforms.get(rv)
        val = np.asarray(val, dtype=np.float64)
        if tr is None:
            out[vv.name] = val
        elif type(tr).__name__ == "LogTransform":
            out[vv.name] = np.log(val)
        elif type(tr).__name__ == "LogOddsTransform":
            out[vv.name] = special.logit(val)
        else:
            out[vv.name] = np.asarray(tr.forward(val, *rv.owner.inputs).eval())
    return out


def _nutpie_with_start(cm, model: pm.Model, start: dict, jitter: bool):
    """nutpie's compiled model with its chains starting at ``start`` (constrained values
    by variable name, jittered as PyMC jitters when ``jitter``). nutpie otherwise starts
    at the initial values of the model it compiled -- under the cache, the first data
    set's -- so the data-dependent start is set on a copy, for this fit only."""
    import dataclasses
    import threading

    from pymc.initial_point import make_initial_point_fn

    fn = make_initial_point_fn(model=model, overrides=start, jitter_rvs=set(model.free_RVs) if jitter else set(),
                               return_transformed=True)
    names = [model.rvs_to_values[v].name for v in model.free_RVs]  # nutpie's order of the flat vector
    lock = threading.Lock()  # nutpie may ask for the chains' starts from several threads

    def flat(seed=None):
        with lock:
            point = fn(seed)
        return np.concatenate([np.asarray(point[n], dtype=np.float64).ravel() for n in names])

    return dataclasses.replace(cm, initial_point_func=flat)


def _smc(model: pm.Model, *, draws: int, chains: int, cores: int, seed: int, show: bool):
    """PyMC's SMC: the draws (particles) of ``chains`` independent runs, and per run its
    number of tempering stages, its final acceptance rate and its estimate of the log
    marginal likelihood. PyMC's own sample statistics (one ragged list per run) are
    replaced by these, which a netCDF file can hold."""
    log = logging.getLogger("pymc")
    level = log.level
    if not show:  # PyMC logs its start ("Initializing SMC sampler..."), as pm.sample(quiet=False) does
        log.setLevel(logging.WARNING)
    try:
        with model:
            idata = pm.sample_smc(draws=draws, chains=chains, cores=cores, random_seed=seed, progressbar=show,
                                  compute_convergence_checks=False)
    finally:
        log.setLevel(level)
    stats = idata.sample_stats

    def per_run(name):  # one array per run (PyMC stores ragged lists, or a block when they are not)
        a = np.asarray(stats[name].values)
        rows = a.ravel() if a.size == chains else a.reshape(chains, -1)
        return [np.asarray(r, dtype=float).ravel() for r in rows]

    betas, accept = per_run("beta"), per_run("accept_rate")
    lml = [float(v[-1]) for v in per_run("log_marginal_likelihood")]
    del idata["sample_stats"]
    extra = {"stages": [len(b) for b in betas], "final_accept_rate": [float(a[-1]) for a in accept],
             "log_marginal_likelihood": lml}
    return idata, extra


def _nuts_steps(idata) -> int:
    n = 0
    for group in ("warmup_sample_stats", "sample_stats"):
        if hasattr(idata, group) and "n_steps" in idata[group]:
            n += int(np.asarray(idata[group]["n_steps"].values).sum())
    return n


def _refit_previous(model, key, previous: Previous, *, chains, draws, seed_seq, show, t0, move=True):
    """The reweighted refit of :func:`sample_model`: ``(idata, info)``, idata None where
    the weights are unreliable (``info.fallback_reason`` says why)."""
    with Bar("bayeval: reweighting the previous fit", enabled=show) as bar:
        if key is None or key not in _CACHE:
            bar.update("bayeval: compiling the model")
        c = compiled(model, key)
        rng = np.random.default_rng(seed_seq)
        try:
            # one call per draw: the one-point log-density is all this route compiles
            rows, info = _reweight_previous(c, previous, n_draws=chains * draws, rng=rng, say=bar.update,
                                            move=move)
            if rows is not None and info.extra.get("move"):
                g0 = c.n_g
                u, stats = _move(c, _unconstrained(c, previous.idata)[rows], rng, ess_in=info.ess, say=bar.update,
                                 pilot=_MOVE_PILOT)
                info.n_grad_evals = c.n_g - g0
                info.extra["move"] = stats
                if u is None:
                    rows, info.fallback_reason = None, f"resample-move: {stats['reason']}"
                else:
                    info.ess = stats["ess"]
        except Exception as exc:  # noqa: BLE001 -- whatever stops the fast route, NUTS is the answer
            rows, info = None, SamplingInfo("importance", fallback_reason=f"reweighting the previous fit failed "
                                                                          f"({type(exc).__name__}: {exc})")
        if rows is None:
            info.fallback_reason += "; NUTS was run instead"
            bar.transient()
            return None, info
        if info.extra.get("move"):
            info.extra["proposal"] = "previous fit, resampled and moved"
            idata = _to_idata(c, u, chains, draws, batched=True)
        else:
            idata = _resampled_idata(c, previous, rows, chains, draws, batched=False)
        info.seconds = time.perf_counter() - t0
        return idata, info


def _same_vars(a, b) -> bool:
    a, b = list(a), list(b)
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


def _default_valgrad_call(model: pm.Model, grad_vars, tempered, ravel_inputs, kwargs) -> bool:
    """Whether a ``model.logp_dlogp_function`` call asks for the joint log-density and
    gradient of all the (continuous) value variables, raveled: the function PyMC's NUTS
    compiles (``(vars, dtype=..., ravel_inputs=True, initial_point=...)``, the initial
    point setting only variables outside the gradient, of which there are none) and the
    one :meth:`_Compiled.valgrad` compiles."""
    return (not tempered and bool(ravel_inputs) and set(kwargs) <= {"dtype"}
            and kwargs.get("dtype") in (None, pytensor.config.floatX)
            and (grad_vars is None or _same_vars(grad_vars, model.continuous_value_vars)))


@contextlib.contextmanager
def _keeping_valgrad(model: pm.Model, key):
    """While PyMC's NUTS starts on a structure not yet in the cache (or cached without
    one, by importance sampling), keep the log-density-and-gradient function it compiles
    (its default call, all-continuous models) in the cache entry for ``key``: a later
    refit that reweights this fit's draws evaluates the log-density with it instead of
    compiling one, and a later NUTS refit samples with it (:func:`_reusing_valgrad`)."""
    entry = _CACHE.get(key) if key is not None else None
    if key is None or len(model.continuous_value_vars) != len(model.value_vars) or (
            entry is not None and (entry.model is not model or entry._valgrad is not None)):
        yield
        return
    own, kept = model.logp_dlogp_function, []

    def logp_dlogp_function(grad_vars=None, tempered=False, initial_point=None, ravel_inputs=None, **kwargs):
        fn = own(grad_vars, tempered, initial_point, ravel_inputs, **kwargs)
        if _default_valgrad_call(model, grad_vars, tempered, ravel_inputs, kwargs):
            kept.append(fn)
        return fn

    model.logp_dlogp_function = logp_dlogp_function
    try:
        yield
    finally:
        del model.logp_dlogp_function
    if not kept:
        return
    entry = _CACHE.get(key)
    if entry is None:
        if len(_CACHE) >= _CACHE_MAX:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = _Compiled(model, valgrad=kept[0])
    elif entry.model is model and entry._valgrad is None:
        kept[0].set_extra_values({})  # see _Compiled.__init__
        entry._valgrad = kept[0]


@contextlib.contextmanager
def _reusing_valgrad(model: pm.Model, c: "_Compiled | None"):
    """While PyMC's NUTS starts, hand it the log-density-and-gradient function already
    compiled for ``model`` (the function PyMC would compile: :func:`_default_valgrad_call`):
    the one a failed importance sampling compiled, so a fallback compiles it once, or the
    one kept from the structure's earlier NUTS fit, so a refit through the cache (its
    data swapped into the same model) compiles no gradient at all."""
    fn = None if c is None or c.model is not model or not c.continuous else c._valgrad
    if fn is None:
        yield
        return
    own = model.logp_dlogp_function

    def logp_dlogp_function(grad_vars=None, tempered=False, initial_point=None, ravel_inputs=None, **kwargs):
        if _default_valgrad_call(model, grad_vars, tempered, ravel_inputs, kwargs):
            return fn
        return own(grad_vars, tempered, initial_point, ravel_inputs, **kwargs)

    model.logp_dlogp_function = logp_dlogp_function
    try:
        yield
    finally:
        del model.logp_dlogp_function


_NUTS_ONLY: contextvars.ContextVar = contextvars.ContextVar("bayeval_nuts_only", default=None)


def _assign_nuts_without_probing():
    """Make PyMC's step assignment skip its gradient probe for the model in :data:`_NUTS_ONLY`.

    Before NUTS starts, :func:`pymc.sample` asks :func:`pymc.sampling.mcmc.assign_step_methods`
    which step method suits each value variable; for each continuous one it builds the
    symbolic gradient of the whole log-density with respect to that variable, only to learn
    that a gradient exists (1--3 s per fit for the models here, on every fit and refit), and
    then samples every continuous variable with NUTS, whose own gradient it builds again.
    Inside :func:`_nuts_only` (a model whose variables are all continuous and whose gradient
    is known to exist) the assignment is NUTS for all of them at once, without the probe:
    the same choice, hence the same draws. Elsewhere, PyMC's own function runs unchanged.
    """
    import pymc.sampling.mcmc as mcmc

    own = mcmc.assign_step_methods
    if getattr(own, "_bayeval_nuts_only", False):
        return

    def assign_step_methods(model, step=None, methods=None):
        if step is None and _NUTS_ONLY.get() is model:
            return [], {pm.NUTS: list(model.value_vars)}
        return own(model, step, methods)

    assign_step_methods._bayeval_nuts_only = True
    assign_step_methods.__wrapped__ = own
    mcmc.assign_step_methods = assign_step_methods


@contextlib.contextmanager
def _nuts_only(model: pm.Model, known_gradient: bool):
    """While PyMC's NUTS starts on ``model``, assign NUTS to every variable without PyMC's
    per-variable gradient probe (:func:`_assign_nuts_without_probing`), where the model's
    variables are all continuous and its gradient is known to exist: ``known_gradient``
    (one already compiled, or a model bayeval built), else one joint gradient is built here
    (a fraction of the per-variable probes); a model without one keeps PyMC's assignment."""
    if len(model.continuous_value_vars) != len(model.value_vars) or not model.value_vars:
        yield
        return
    if not known_gradient:
        try:
            pytensor.gradient.grad(model.logp(), model.value_vars)
        except (NotImplementedError, pytensor.gradient.NullTypeGradError):
            yield
            return
    _assign_nuts_without_probing()
    token = _NUTS_ONLY.set(model)
    try:
        yield
    finally:
        _NUTS_ONLY.reset(token)


_KEPT_FNS: contextvars.ContextVar = contextvars.ContextVar("bayeval_kept_fns", default=None)


def _pymc_fns_reuse():
    """Make :func:`pymc.sample` reuse two functions it compiles on every call, for the model
    in :data:`_KEPT_FNS`.

    Each chain's trace (``pymc.backends._init_trace``) compiles its own copy of the function
    that maps a point to the traced values, and the jittered start compiles the initial-point
    function (``make_initial_point_fns_per_chain``): 0.2--1.5 s each for the models here, on
    every fit and refit. Inside :func:`_reusing_pymc_fns` the first compiled copy is kept on
    the model and handed to the other chains and to later fits of the same model (its data
    are swapped in place; the functions read them when called; the initial-point function
    only where no starting values are set, which it would hold as constants): the same
    functions, hence the same draws. Elsewhere, PyMC's own functions run unchanged.
    """
    import pymc.backends as backends
    import pymc.sampling.mcmc as mcmc

    own_trace, own_start = backends._init_trace, mcmc.make_initial_point_fns_per_chain
    if getattr(own_trace, "_bayeval_reuse", False):
        return

    def _init_trace(*, expected_length, chain_number, stats_dtypes, trace, model, trace_vars=None,
                    initial_point=None):
        kept = _KEPT_FNS.get()
        if trace is not None or kept is None or kept[0] is not model:
            return own_trace(expected_length=expected_length, chain_number=chain_number, stats_dtypes=stats_dtypes,
                             trace=trace, model=model, trace_vars=trace_vars, initial_point=initial_point)
        fns = kept[1]
        names = ("trace", None if trace_vars is None else tuple(v.name for v in trace_vars))
        strace = backends.NDArray(model=model, vars=trace_vars, test_point=initial_point, fn=fns.get(names))
        fns.setdefault(names, strace.fn)
        strace.setup(expected_length, chain_number, stats_dtypes)
        return strace

    def make_initial_point_fns_per_chain(*, model, overrides, jitter_rvs, chains):
        kept = _KEPT_FNS.get()
        if overrides is not None or kept is None or kept[0] is not model:
            return own_start(model=model, overrides=overrides, jitter_rvs=jitter_rvs, chains=chains)
        fns = kept[1]
        names = ("initial point", tuple(sorted(v.name for v in jitter_rvs or ())))
        if names not in fns:
            fns[names] = own_start(model=model, overrides=None, jitter_rvs=jitter_rvs, chains=1)[0]
        return [fns[names]] * chains

    for fn, own in ((_init_trace, own_trace), (make_initial_point_fns_per_chain, own_start)):
        fn._bayeval_reuse = True
        fn.__wrapped__ = own
    backends._init_trace = _init_trace
    mcmc.make_initial_point_fns_per_chain = make_initial_point_fns_per_chain


@contextlib.contextmanager
def _reusing_pymc_fns(model: pm.Model, keyed: bool):
    """While PyMC's NUTS starts on ``model`` (one bayeval built and keeps under its
    structure's key, ``keyed``), its chains share one compiled trace function and one
    initial-point function, kept on the model for its later fits (:func:`_pymc_fns_reuse`)."""
    if not keyed:
        yield
        return
    _pymc_fns_reuse()
    fns = model.__dict__.setdefault("_bayeval_kept_fns", {})
    token = _KEPT_FNS.set((model, fns))
    try:
        yield
    finally:
        _KEPT_FNS.reset(token)


def sample_model(
    model: pm.Model,
    *,
    draws: int,
    tune: int,
    chains: int,
    random_seed,
    sampler: str = "auto",
    progressbar: bool = False,
    target_accept: float = 0.9,
    cores: int | None = None,
    key=None,
    start: dict | None = None,
    jitter: bool = True,
    fallback: str = "pymc",
    previous: Previous | None = None,
    **nuts_kwargs,
) -> tuple[az.InferenceData, SamplingInfo]:
    """Sample ``model``'s posterior: ``(chains, draws)`` draws and how they were made.

    ``sampler``: ``"importance"`` (importance sampling from the mode, error when the
    weights are unreliable), ``"pymc"`` (PyMC's NUTS), ``"nutpie"``, ``"smc"`` (PyMC's
    sequential Monte Carlo: ``chains`` independent runs of ``draws`` particles each,
    started from the prior; ``tune``, ``start``, ``target_accept`` and the NUTS settings
    do not apply), or ``"auto"`` (importance sampling, falling back to PyMC's NUTS when
    its Pareto k exceeds 0.7).
    ``random_seed``: anything :func:`bayeval.core._validate.as_seed_sequence` reads. ``key``:
    the model's structure; with a key, the compiled log-density (importance sampling)
    and nutpie's compiled model are kept and reused by later fits under the same key.
    ``start``: starting values (constrained, by variable name). ``nuts_kwargs``: more
    settings for :func:`pymc.sample` (``init``, ``max_treedepth``; NumPyro and BlackJAX
    take ``max_treedepth`` only). ``fallback``: the NUTS that ``"auto"`` falls back to
    (one of :data:`NUTS_SAMPLERS`). ``previous``: an earlier fit of the same structure
    (:class:`Previous`); with a NUTS ``sampler``, its draws are first reweighted to the
    current data (:func:`_reweight_previous`: no gradient, no warm-up), resampled and
    moved by HMC rounds where the weights are reliable but their ESS is short
    (:func:`_move`), and NUTS runs only where neither will do, ``fallback_reason``
    saying why. Every sampler
    gives the same draws for the same seed.

    Examples
    --------
    >>> import pymc as pm
    >>> from bayeval.core.sampling import sample_model
    >>> with pm.Model() as model:
    ...     mu = pm.Normal("mu", 0.0, 1.0)
    ...     _ = pm.Normal("y", mu, 1.0, observed=[0.3, 0.5, 0.4])
    >>> idata, info = sample_model(model, draws=200, tune=0, chains=2, random_seed=1)
    >>> info.sampler, dict(idata.posterior.sizes)
    ('importance', {'chain': 2, 'draw': 200})
    >>> abs(float(idata.posterior["mu"].mean()) - 0.3) < 0.1  # posterior mean 1.2 / 4
    True
    """
    if sampler not in SAMPLERS:
        raise ValueError(f"`sampler` must be one of {SAMPLERS}, got {sampler!r}.")
    if sampler == "exact":
        raise ValueError("sampler='exact' draws a closed-form posterior, which the model does itself "
                         "(Model.fit); sample_model has only the model's graph. Use another sampler here.")
    t0 = time.perf_counter()
    _quiet_blas_probe()
    seed_seq = V.as_seed_sequence(random_seed)
    n_f = n_g = 0
    # one bar per fit: ours over the compilation and importance sampling, the NUTS
    # sampler's own over NUTS; none where an enclosing task (a study, a stack) shows one
    show = bool(progressbar) and not covered()
    reason = ""
    c = None  # the compiled functions, where importance sampling ran first
    if previous is not None and sampler in NUTS_SAMPLERS:
        idata, info = _refit_previous(model, key, previous, chains=chains, draws=draws, seed_seq=seed_seq,
                                      show=show, t0=t0)
        if idata is not None:
            return idata, info
        reason = info.fallback_reason
    if sampler in ("auto", "importance"):
        with Bar("bayeval: importance sampling", enabled=show) as bar:
            if key is None or key not in _CACHE:
                bar.update("bayeval: compiling the model")
            c = compiled(model, key)
            f0, g0 = c.n_f, c.n_g
            rng = np.random.default_rng(seed_seq)
            st = None if start is None else c.ravel({**c.ip, **_value_space(model, start)})
            # the batched functions cost a compilation of their own: never for a one-off
            # fit, and on a refit (the vetting loop's) once the one-point loops they would
            # replace have cost as much (batching_pays)
            batched = c.n_fits > 0 and c.batching_pays("logp", max(2000, chains * draws))
            batched_out = c.n_fits > 0 and c.batching_pays("outputs", chains * draws)
            try:
                u, info = importance_sample(c, n_draws=chains * draws, rng=rng, start=st, progress=bar.update,
                                            batched=batched)
            except (ValueError, np.linalg.LinAlgError, FloatingPointError) as exc:  # numerical trouble: use NUTS
                u, info = None, SamplingInfo("importance", fallback_reason=f"importance sampling failed ({exc})")
            n_f, n_g = c.n_f - f0, c.n_g - g0
            if u is not None:
                c.n_fits += 1
                bar.update("bayeval: importance sampling, constrained draws")
                idata = _to_idata(c, u, chains, draws, batched=batched_out)
                info.extra["batched_outputs"] = bool(batched_out) and c._batched is not False
                info.n_logp_evals, info.n_grad_evals = n_f, n_g
                info.seconds = time.perf_counter() - t0
                bar.update("bayeval: importance sampling done")
                return idata, info
            bar.transient()  # NUTS takes over, with its own bar
        if sampler == "importance":
            raise RuntimeError(f"bayeval: importance sampling failed: {info.fallback_reason}. Use sampler='pymc'.")
        reason = info.fallback_reason
        sampler = fallback
    nuts_seed = int(seed_seq.generate_state(1)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("ignore", FutureWarning)
        if sampler == "smc":
            idata, extra = _smc(model, draws=draws, chains=chains, cores=_cores(cores, chains), seed=nuts_seed,
                                show=show)
            # (PyMC does not record how many mutation steps each stage took: no counts)
            return idata, SamplingInfo("smc", extra=extra, seconds=time.perf_counter() - t0)
        if sampler == "nutpie":
            import nutpie

            cm = _NUTPIE_CACHE.get(key) if key is not None else None
            if cm is None:
                cm = nutpie.compile_pymc_model(model, **({} if jitter else {"jitter_rvs": set()}))
                if key is not None:
                    if len(_NUTPIE_CACHE) >= _CACHE_MAX:
                        _NUTPIE_CACHE.pop(next(iter(_NUTPIE_CACHE)))
                    _NUTPIE_CACHE[key] = cm
            else:
                # the values the compiled model reads (containers it optimized away are left out)
                data = {v.name: v.get_value() for v in model.data_vars if v.name in cm.shared_data}
                cm = cm.with_data(**data)
            if start is not None:
                cm = _nutpie_with_start(cm, model, start, jitter)
            extra = {"maxdepth": nuts_kwargs["max_treedepth"]} if "max_treedepth" in nuts_kwargs else {}
            idata = nutpie.sample(cm, draws=draws, tune=tune, chains=chains, seed=nuts_seed,
                                  progress_bar=show, target_accept=target_accept,
                                  cores=cores or min(chains, 2), save_warmup=True, **extra)
        elif sampler in ("numpyro", "blackjax"):
            depth = nuts_kwargs.get("max_treedepth")
            kw = {"chain_method": "vectorized", "jitter": jitter}
            if depth is not None:
                kw["nuts_kwargs"] = {"max_tree_depth" if sampler == "numpyro" else "max_num_doublings": depth}
            with model:
                idata = pm.sample(draws=draws, tune=tune, chains=chains, random_seed=nuts_seed, progressbar=show,
                                  target_accept=target_accept, initvals=start, compute_convergence_checks=False,
                                  nuts_sampler=sampler, nuts_sampler_kwargs=kw, quiet=not show)
        else:
            init = nuts_kwargs.pop("init", "jitter+adapt_diag" if jitter else "adapt_diag")
            if sampler == "pymc-numba":
                nuts_kwargs["compile_kwargs"] = {"mode": "NUMBA"}
            keep = key if sampler == "pymc" and c is None else None
            # PyMC's NUTS compiles its log-density-and-gradient function afresh on every call:
            # hand it the one compiled for this model already (a failed importance sampling's,
            # or the one kept from this structure's first NUTS fit: a refit through the cache)
            reuse = c if reason and sampler == "pymc" else None
            if reuse is None and keep is not None and "compile_kwargs" not in nuts_kwargs:
                reuse = _CACHE.get(keep)
            # a model bayeval built (``key``) or one with a compiled gradient needs no probe
            with model, _reusing_valgrad(model, reuse), _keeping_valgrad(model, keep), \
                    _nuts_only(model, known_gradient=key is not None or reuse is not None), \
                    _reusing_pymc_fns(model, keyed=key is not None):
                idata = pm.sample(draws=draws, tune=tune, chains=chains, cores=_cores(cores, chains),
                                  random_seed=nuts_seed, progressbar=show, target_accept=target_accept,
                                  init=init, initvals=start, compute_convergence_checks=False,
                                  discard_tuned_samples=False, quiet=not show, **nuts_kwargs)
    steps = _nuts_steps(idata)
    for group in ("warmup_posterior", "warmup_sample_stats"):
        if group in idata.groups():
            del idata[group]
    info = SamplingInfo(sampler, fallback_reason=reason, n_logp_evals=n_f, n_grad_evals=n_g + steps,
                        seconds=time.perf_counter() - t0)
    return idata, info
