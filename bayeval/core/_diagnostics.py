"""Convergence checks of NUTS fits, shared by the models that sample with PyMC."""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
import warnings
from collections.abc import Iterator, Sequence

import arviz as az
import numpy as np
import pandas as pd

RHAT_MAX = 1.01
ESS_PER_CHAIN = 100
_SMC_ADVICE = ("The independent SMC runs found different posteriors: refit with more particles per run "
               "(draws), or with sampler='pymc' to compare.")
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # bayeval/, above core/


#: a pointwise log-likelihood that varies over the draws by at most this much is exact (see :func:`exact_where_constant`)
CONSTANT_LOGLIK = 1e-9


def exact_where_constant(ll) -> np.ndarray:
    """``ll`` (``(chain, draw, ...)`` pointwise log-likelihoods) with each point whose values vary over
    the draws by at most :data:`CONSTANT_LOGLIK` set to its mean in every draw.

    A label the model predicts with near certainty in every draw has log-likelihoods that differ
    only in their last digits (-1e-40 against -1e-53): leaving it out changes nothing, but the
    Pareto tail fit of PSIS-LOO on such ratios divides by zero, and ``az.loo`` / ``az.compare``
    return NaN. Made exactly constant, the point's leave-one-out density is its log-likelihood.
    """
    ll = np.array(ll, dtype=np.float64)
    if ll.ndim < 3 or ll.size == 0:
        return ll
    flat = ll.reshape(ll.shape[0] * ll.shape[1], -1)
    constant = (flat.max(axis=0) - flat.min(axis=0)) <= CONSTANT_LOGLIK
    if constant.any():
        flat[:, constant] = flat[:, constant].mean(axis=0)
    return flat.reshape(ll.shape)


def put_first(out: dict, findings: list[str], *, warn: bool, stacklevel: int | None = None) -> dict:
    """A check dict (:func:`check_convergence`'s) with ``findings`` about the labels (scores that rank
    the vetted positives low, say) said first in its ``messages`` and ``data_messages``, ``ok`` False,
    and warned (with ``warn``) apart from the sampler's problems. Returns ``out``."""
    if findings:
        out["messages"][:0] = findings
        out["data_messages"] = [*findings, *out.get("data_messages", [])]
        out["ok"] = False
        if warn:
            warnings.warn("bayeval: " + " ".join(findings), UserWarning, stacklevel=stacklevel or user_stacklevel())
    return out


def user_stacklevel() -> int:
    """The ``stacklevel`` for :func:`warnings.warn` that points at the caller's own code:
    the first frame outside the bayeval package, counted from the caller of this function."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    return level


#: the keys of the warnings the caller said in its own words (:func:`said_before`)
_SAID: contextvars.ContextVar[frozenset] = contextvars.ContextVar("bayeval_said_before", default=frozenset())
#: the key of :class:`bayeval.models.Calibration`'s warning on log-odds read from probabilities
LOGODDS_ON_PROBABILITIES = "logodds_on_probabilities"
#: the key of :func:`bayeval.fit`'s warning on a handful of vetted labels of a class
#: (:func:`bayeval.core.data.few_labels_caveats`)
FEW_LABELS = "few_labels"


@contextlib.contextmanager
def said_before(*keys: str) -> Iterator[None]:
    """Inside the block bayeval does not give the warnings with these keys: the caller said them
    before, in its own words (a model card's key). A context variable, not the warning filters: it
    holds in this thread only, so a server's background refits (``bayeval vet``) can use it
    without changing what another thread's warnings do."""
    token = _SAID.set(_SAID.get() | frozenset(keys))
    try:
        yield
    finally:
        _SAID.reset(token)


def is_said(key: str) -> bool:
    """Whether the warning with this key was said by the caller (:func:`said_before`)."""
    return key in _SAID.get()


def parameter_diagnostics(idata, var_names: Sequence[str]) -> pd.DataFrame:
    """r_hat, bulk and tail ESS of the named variables (one row per scalar)."""
    names = [v for v in var_names if v in idata.posterior]
    if not names:
        return pd.DataFrame(columns=["r_hat", "ess_bulk", "ess_tail"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        summ = az.summary(idata, var_names=names, kind="diagnostics", round_to="none")
    return summ[["r_hat", "ess_bulk", "ess_tail"]]


def parameter_table(idata, var_names: Sequence[str]) -> pd.DataFrame:
    """:func:`parameter_diagnostics` as the posteriors' ``diagnostics()`` give it: r_hat
    unrounded (ArviZ's default rounds it to 2 decimals, so an r_hat of 1.023 read 1.02, and
    the report printed "1.020" against a target of 1.01), ESS to whole draws.

    Examples
    --------
    >>> import arviz as az, numpy as np
    >>> rng = np.random.default_rng(0)
    >>> idata = az.from_dict(posterior={"a": rng.normal(size=(2, 200)) + [[0.0], [0.1]]})
    >>> t = parameter_table(idata, ["a"])
    >>> bool(t.loc["a", "r_hat"] != round(t.loc["a", "r_hat"], 2)), float(t.loc["a", "ess_bulk"]).is_integer()
    (True, True)
    """
    return parameter_diagnostics(idata, var_names).round({"ess_bulk": 0, "ess_tail": 0})


def convergence_check(
    idata, var_names: Sequence[str], *, warn: bool, advice: str = "", stacklevel: int = 3
) -> dict:
    """Bad means: r_hat > 1.01 (more than one chain), bulk ESS < 100 per chain, divergences.

    Returns a dict with ``max_rhat``, ``min_ess_bulk``, ``divergences``, ``ok`` and
    ``messages``; warns (``UserWarning``, prefixed "bayeval:") when ``warn`` and bad.
    ``advice`` is appended to the r_hat message (what to do about disagreeing chains);
    ``stacklevel`` is that of :func:`warnings.warn`, counted from here.
    """
    summ = parameter_diagnostics(idata, var_names)
    n_chains = int(idata.posterior.sizes["chain"])
    div = 0
    if hasattr(idata, "sample_stats") and "diverging" in idata.sample_stats:
        div = int(np.asarray(idata.sample_stats["diverging"].values).sum())
    max_rhat = float(summ["r_hat"].max()) if len(summ) else float("nan")
    min_ess = float(summ["ess_bulk"].min()) if len(summ) else float("nan")
    msgs = []
    if n_chains > 1 and not max_rhat <= RHAT_MAX:
        msgs.append(f"r_hat up to {max_rhat:.3f} (> {RHAT_MAX}): chains disagree. {advice}".rstrip())
    if not min_ess >= ESS_PER_CHAIN * n_chains:
        msgs.append(f"bulk ESS as low as {min_ess:.0f} (< {ESS_PER_CHAIN * n_chains}): draw more samples.")
    if div:
        msgs.append(f"{div} divergent transitions: the posterior may be biased; raise target_accept.")
    if warn and msgs:
        warnings.warn("bayeval: sampler diagnostics are bad: " + " ".join(msgs), UserWarning, stacklevel=stacklevel)
    return {"max_rhat": max_rhat, "min_ess_bulk": min_ess, "divergences": div, "ok": not msgs, "messages": msgs}


def kept_ess(sampling, idata) -> float:
    """The effective sample size that the kept draws of an importance-sampled fit carry.

    Importance sampling weighs ``sampling.n_proposals`` proposals (their effective sample
    size is ``sampling.ess``, e.g. 1,096 of 2,000) and resamples them to the fit's
    ``chains x draws`` equally weighted draws (e.g. 400): every number the posterior
    gives is computed from those kept draws, which cannot carry more than that many
    independent draws. So this is ``min(sampling.ess, chains * draws)``: the weights'
    ESS where fewer effective proposals than kept draws limit the fit, the number of kept
    draws otherwise (the systematic resampling adds little variance of its own). It is
    the number that the ``>= 100 per chain`` check and the report's "ESS" compare: a
    weights' ESS above the number of draws would pass a target the draws cannot reach.
    The weights' own ESS stays in ``post.sampling.ess``.

    Examples
    --------
    >>> import arviz as az, numpy as np
    >>> from bayeval.core.sampling import SamplingInfo
    >>> idata = az.from_dict(posterior={"a": np.zeros((2, 200))})
    >>> kept_ess(SamplingInfo("importance", ess=1096.0, n_proposals=2000), idata)
    400.0
    >>> kept_ess(SamplingInfo("importance", ess=150.0, n_proposals=2000), idata)
    150.0
    """
    n_kept = int(idata.posterior.sizes["chain"] * idata.posterior.sizes["draw"])
    ess = float(sampling.ess)
    return min(ess, float(n_kept)) if ess == ess else ess


def subsample_ess(ess: float, n: int, m: int, *, replace: bool = False) -> float:
    """The effective sample size of ``m`` draws picked at random from ``n`` draws whose ESS is ``ess``.

    A stacked posterior takes each candidate's weight's share of its draws, picked at random
    (:class:`bayeval.models.StackedPosterior`): the mean of those ``m`` draws varies as that
    of all ``n`` draws (``sigma^2 / ess``) plus the random pick's own variance
    (``sigma^2 (1/m - 1/n)`` without replacement, ``sigma^2 / m`` with it), so their ESS is
    ``1 / (1/ess + 1/m - 1/n)`` (without the ``1/n`` with replacement): ``m`` for independent
    draws (``ess == n``), at most ``ess`` (and ``m`` where ``ess <= n``). NaN where ``ess`` is NaN.

    Examples
    --------
    >>> round(subsample_ess(400.0, 400, 107), 6)  # independent draws: the draws taken
    107.0
    >>> round(subsample_ess(111.0, 1000, 300), 1)  # autocorrelated: fewer than the ESS of all 1,000
    88.2
    """
    if m <= 0 or ess != ess:
        return 0.0 if m <= 0 else float("nan")
    inv = 1.0 / ess + 1.0 / m - (0.0 if replace else 1.0 / n)
    return float(1.0 / inv) if inv > 0 else float(m)


def check_convergence(idata, sampling, var_names: Sequence[str], *, warn: bool, advice: str = "",
                      stacklevel: int | None = None) -> dict:
    """The one convergence check of a fit, whatever sampled it.

    Importance sampling (``sampling.sampler == "importance"``): bad when the Pareto k
    of the weights is >= 0.7 or the effective sample size of the kept draws
    (:func:`kept_ess`: the weights' ESS, at most the number of draws kept) is below 100
    per chain; that is the ``ess`` and ``min_ess_bulk`` returned.
    NUTS: :func:`convergence_check` (r_hat, bulk ESS, divergences). SMC
    (``"smc"``): the same, its chains being independent runs (r_hat says whether they
    found the same posterior; there are no divergences). Exact draws (``"exact"``:
    independent draws of the exact posterior): nothing to check, ``ok`` with an ESS of
    the number of draws. Returns the same
    dict in both cases, with ``sampler``, ``pareto_k`` and ``ess`` added (the last two
    None for NUTS), and an empty ``data_messages``, where a model's own check lists the
    findings about its labels (:func:`sampler_messages`).
    """
    sampler = getattr(sampling, "sampler", "pymc")
    if sampler == "exact":  # independent draws of the exact posterior: nothing to converge
        n = int(idata.posterior.sizes["chain"] * idata.posterior.sizes["draw"])
        return {"max_rhat": float("nan"), "min_ess_bulk": float(n), "divergences": 0, "ok": True, "messages": [],
                "sampler": sampler, "pareto_k": None, "ess": float(n), "data_messages": []}
    if sampler == "importance":
        n_chains = int(idata.posterior.sizes["chain"])
        k, ess = float(sampling.pareto_k), kept_ess(sampling, idata)
        msgs = []
        if not k < 0.7:
            msgs.append(f"importance weights unreliable (Pareto k = {k:.2f} >= 0.7): refit with sampler='pymc'.")
        if not ess >= ESS_PER_CHAIN * n_chains:
            msgs.append(f"importance-sampling ESS of the kept draws {ess:.0f} (< {ESS_PER_CHAIN * n_chains}): "
                        "draw more samples.")
        if warn and msgs:
            warnings.warn("bayeval: sampler diagnostics are bad: " + " ".join(msgs), UserWarning,
                          stacklevel=stacklevel or user_stacklevel())
        out = {"max_rhat": float("nan"), "min_ess_bulk": ess, "divergences": 0, "ok": not msgs, "messages": msgs}
    else:
        if sampler == "smc":  # the NUTS advice does not apply
            advice = _SMC_ADVICE
        out = convergence_check(idata, var_names, warn=warn, advice=advice,
                                stacklevel=stacklevel + 1 if stacklevel else user_stacklevel())
    if sampler == "importance":
        out.update(sampler=sampler, pareto_k=float(sampling.pareto_k), ess=kept_ess(sampling, idata))
    else:  # not applicable
        out.update(sampler=sampler, pareto_k=None, ess=None)
    out["data_messages"] = []  # a model's check adds the labels' own problems (see sampler_messages)
    return out


def sampler_messages(diag: dict) -> list[str]:
    """The messages of a model's ``check()`` that a longer or better-tuned run can fix.

    ``check()`` lists every finding in ``messages``; those about the vetted labels
    themselves (no vetted positives, labels contradicting a weighted curve) are also in
    ``data_messages``: more labels fix them, more draws do not, so a report must not call
    them sampler problems.

    Examples
    --------
    >>> sampler_messages({"messages": ["no vetted negatives ...", "r_hat up to 1.2"],
    ...                   "data_messages": ["no vetted negatives ..."]})
    ['r_hat up to 1.2']
    """
    data = set(diag.get("data_messages") or ())
    return [m for m in diag.get("messages") or () if m not in data]
