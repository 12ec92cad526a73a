"""Convergence checks of NUTS fits, shared by the models that sample with PyMC."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import arviz as az
import numpy as np
import pandas as pd

RHAT_MAX = 1.01
ESS_PER_CHAIN = 100


def parameter_diagnostics(idata, var_names: Sequence[str]) -> pd.DataFrame:
    """r_hat, bulk and tail ESS of the named variables (one row per scalar)."""
    names = [v for v in var_names if v in idata.posterior]
    if not names:
        return pd.DataFrame(columns=["r_hat", "ess_bulk", "ess_tail"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        summ = az.summary(idata, var_names=names, kind="diagnostics", round_to="none")
    return summ[["r_hat", "ess_bulk", "ess_tail"]]


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
