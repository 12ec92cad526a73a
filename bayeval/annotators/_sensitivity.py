"""Prior sensitivity of an annotator-error fit by power-scaling (Kallioinen et al. 2023):
each prior density raised to a power, the posterior reweighted from the same draws by
Pareto-smoothed importance weights, and ``arviz.psens``'s indices. The tables are read
through the posterior (:meth:`~bayeval.annotators.posterior.AnnotatorPosterior.prior_sensitivity`
and the sensitivity columns of its ``summary()``)."""

from __future__ import annotations

import arviz as az
import numpy as np
import pandas as pd
import xarray as xr

from ..core._defaults import hdi_columns
from ..core.summary import hdi

# log-prior components: (posterior variable, the constructor option holding its prior)
_PRIOR_PARTS = (
    ("prevalence", "prevalence", "prevalence_concentration"),
    ("model_accuracy", "model_class_accuracy", "model_accuracy"),
    ("annotator_accuracy", "annotator_class_accuracy", "annotator_accuracy"),
    ("model_difficulty", "model_difficulty_u", "model_difficulty"),
    ("annotator_difficulty", "annotator_difficulty_u", "annotator_difficulty"),
)
SENSITIVITY_THRESHOLD = 0.05  # the power-scaling index above which a prior (or likelihood) matters
_SAMPLE = ("chain", "draw")


def _log_prior(spec, post: xr.Dataset) -> xr.Dataset | None:
    """Each prior component's log density at every draw (constrained scale, as written in
    the model); None when the draws lack the model's parameters, or when ``spec`` (the
    :class:`~bayeval.annotators.model.AnnotatorError` holding the priors) is None."""
    from scipy.special import betaln, gammaln

    if spec is None:
        return None
    out = {}
    for part, var, option in _PRIOR_PARTS:
        if var not in post:
            if var in ("model_difficulty_u", "annotator_difficulty_u") and spec.independent:
                continue
            return None
        x = post[var].clip(1e-12, 1 - 1e-12)
        other = [d for d in x.dims if d not in _SAMPLE]
        if part == "prevalence":
            a, k = spec.prevalence_concentration, spec.n_classes
            lp = ((a - 1) * np.log(x)).sum(other) + gammaln(k * a) - k * gammaln(a)
        else:
            a, b = getattr(spec, option)
            lp = ((a - 1) * np.log(x) + (b - 1) * np.log1p(-x) - betaln(a, b)).sum(other)
        out[part] = lp
    return xr.Dataset(out)


def add_log_prior(spec, idata) -> None:
    """Store the ``log_prior`` group (what ``arviz.psens`` reads), unless present."""
    import warnings

    if "log_prior" in idata.groups():
        return
    lp = _log_prior(spec, idata.posterior)
    if lp is None:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        idata.add_groups(log_prior=lp)


def _psis_weights(log_w: np.ndarray) -> tuple[np.ndarray, float]:
    """Pareto-smoothed, normalized importance weights of flat log weights, and their k."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lw, k = az.psislw(log_w - log_w.max(), reff=1.0)
    w = np.exp(lw - lw.max())
    return w / w.sum(), float(k)


class _PowerScaling:
    """Power-scaled priors (and likelihood) of a fitted AnnotatorError, from its draws.

    A stacked fit mixes the structured model's draws with the gold-only model's, in
    proportions set by stacking. Power-scaling acts on the structured draws alone: the
    indices are computed on them, and the reweighted posterior keeps the mixture's
    proportions (the gold-only draws keep their weights)."""

    def __init__(self, spec, posterior):
        self.posterior = posterior
        idata = posterior.idata
        post = idata.posterior
        n = post.sizes["chain"] * post.sizes["draw"]
        self.mask = np.ones(n, dtype=bool)
        if "structured_component" in post:
            self.mask = post["structured_component"].values.ravel().astype(bool)
        lp = idata["log_prior"] if "log_prior" in idata.groups() else _log_prior(spec, post)
        self.log_prior = None if lp is None else sum(lp[v] for v in lp.data_vars).values.ravel()
        self.log_lik = None
        if "log_likelihood" in idata.groups() and self.log_prior is not None:
            ll = idata.log_likelihood
            total = sum(ll[v].sum([d for d in ll[v].dims if d not in _SAMPLE]) for v in ll.data_vars)
            self.log_lik = total.values.ravel()
        self.quantities = self._quantities(post)

    def _quantities(self, post) -> dict[str, np.ndarray]:
        out = {}
        if "structured_component" in post and self.posterior._population is not None:
            out["model_accuracy"] = self.posterior.population("accuracy").values.ravel()
        elif "model_accuracy" in post:
            out["model_accuracy"] = post["model_accuracy"].values.ravel()
        out["true_accuracy"] = self.posterior.metric("accuracy").values.ravel()
        for name in ("annotator_accuracy", "error_correlation"):
            if name in post:
                da = post[name]
                dim = [d for d in da.dims if d not in _SAMPLE][0]
                for j, label in enumerate(da[dim].values):
                    out[f"{name}[annotator={label}]"] = da.isel({dim: j}).values.ravel()
        return out

    def sensitivity(self) -> pd.DataFrame:
        """``arviz.psens`` of every quantity (on the structured draws), for the prior and
        for the likelihood."""
        import warnings

        names = list(self.quantities)
        m = self.mask
        draws = xr.Dataset({n: (_SAMPLE, x[m][None, :]) for n, x in self.quantities.items()})
        out = pd.DataFrame(index=names, columns=["prior_sensitivity", "likelihood_sensitivity"], dtype=float)
        for column, component, group in (
            ("prior_sensitivity", self.log_prior, "log_prior"),
            ("likelihood_sensitivity", self.log_lik, "log_likelihood"),
        ):
            if component is None or m.sum() < 10:
                continue
            total = xr.Dataset({"total": (_SAMPLE, component[m][None, :])})
            idata = az.InferenceData(posterior=draws, **{group: total})
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = az.psens(idata, component=group.removeprefix("log_"))
            out[column] = [float(res[n]) for n in names]
        out["diagnosis"] = [_diagnosis(p, q) for p, q in zip(out.prior_sensitivity, out.likelihood_sensitivity, strict=True)]
        return out

    def weights(self, scale: float) -> tuple[np.ndarray, float]:
        """Normalized weights of every draw with the priors raised to ``scale``, and the
        Pareto k of the structured draws' weights."""
        m = self.mask
        share = m.mean()
        if not m.any():  # stacking gave the structured model no weight: the priors do not matter
            return np.full(m.size, 1.0 / m.size), float("nan")
        w_struct, k = _psis_weights((scale - 1) * self.log_prior[m])
        w = np.empty(m.size)
        w[m] = share * w_struct
        if not m.all():
            w[~m] = (1 - share) / (~m).sum()
        return w, k

    def table(self, scales, hdi_prob) -> pd.DataFrame:
        lo_col, hi_col = hdi_columns(hdi_prob)
        sens = self.sensitivity()
        weights = {1.0: (None, float("nan"))}
        for s in scales:
            if s != 1.0:
                weights[s] = (None, float("nan")) if self.log_prior is None else self.weights(s)
        rng = np.random.default_rng(0)
        records = []
        for name, x in self.quantities.items():
            for s in sorted(weights):
                w, k = weights[s]
                if s == 1.0:
                    mean, sd = float(x.mean()), float(x.std(ddof=1))
                    lo, hi = hdi(x, hdi_prob)
                elif w is None or not (k < 0.7 or np.isnan(k)):  # NaN k: no structured draw to reweight
                    mean = sd = lo = hi = float("nan")
                else:
                    mean = float(np.sum(w * x))
                    sd = float(np.sqrt(np.sum(w * (x - mean) ** 2)))
                    # systematic resampling by the weights, then the HDI of the resample
                    u = (rng.random() + np.arange(x.size)) / x.size
                    idx = np.minimum(np.searchsorted(np.cumsum(w), u), x.size - 1)
                    lo, hi = hdi(x[idx], hdi_prob)
                records.append((name, s, mean, sd, float(lo), float(hi), k, *sens.loc[name]))
        frame = pd.DataFrame.from_records(
            records,
            columns=["quantity", "prior_scale", "mean", "sd", lo_col, hi_col, "pareto_k",
                     "prior_sensitivity", "likelihood_sensitivity", "diagnosis"],
        )
        return frame.set_index(["quantity", "prior_scale"])


def _diagnosis(prior_sens: float, lik_sens: float) -> str:
    if not prior_sens >= SENSITIVITY_THRESHOLD:
        return ""
    if lik_sens >= SENSITIVITY_THRESHOLD:
        return "prior-data conflict"
    return "prior-dominated"


def power_scaling(spec, posterior) -> _PowerScaling:
    return _PowerScaling(spec, posterior)
