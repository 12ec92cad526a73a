"""Semi-supervised performance estimation (SPE): a two-component score mixture.

The generative story (Welinder, Welling & Perona, 2013): each item is positive with
probability ``pi``; its score is drawn from the positive class-conditional density
``p1`` or the negative one ``p0``, each from a standard parametric family. Vetted
items contribute ``pi^y (1 - pi)^(1 - y) p_y(s)``; unvetted items contribute the
mixture ``(1 - pi) p0(s) + pi p1(s)`` -- their labels are marginalized (the paper's
eq. 2), so NUTS samples only the continuous parameters. Given a parameter draw, each
unvetted label is Bernoulli with ``P(y = 1 | s, theta) = pi p1(s) / ((1 - pi) p0(s) +
pi p1(s))``: those draws (the paper's section 3.1, steps a-c) give the *sample*
performance on this test set. The *population* performance comes from the
parameters alone (eqs. 4-5).

Score scales
------------
The families live on different supports: Gamma, log-normal, truncated Normal and
truncated Student-t (truncated at 0) need positive values, Beta needs (0, 1), Normal,
Student-t and skew-normal take any real value. For probabilities the skew-normal pair
on the logit scale was the most accurate on real classifier scores (docs,
"Validation"); the paper's Gamma / truncated-Normal default suits scores that do not
pile up against 0 and 1. Scores are mapped to a family's support by a
``transform``:

``"identity"``
    Scores used as they are (they must already lie in the support).
``"minmax"``
    ``x = eps + (1 - 2 eps) (s - min) / (max - min)``, into ``[eps, 1 - eps]`` with
    ``eps = 0.001`` -- the paper's normalization to (0, 1]. Any scale, but it keeps the
    shape: probabilities piled up against 0 and 1 stay piled up.
``"logit"``
    ``x = log(s / (1 - s))`` for scores in [0, 1]: unpiles calibrated probabilities,
    whose classes are often close to Normal or Student-t on the logit scale. For
    real-support families. Only exact 0s and 1s are moved, to the smallest positive
    and the largest below-one score of the data: a fixed clip (say at 1e-6) would put
    every more confident probability on one point -- 19-75% of the items of a
    rare-category pool -- a spike no family follows. Many exact 0s or 1s (tree
    ensembles) still make such a spike; ``fit`` warns, and ``minmax`` is then the map
    to use.
``"log"``
    ``x = log(s)`` for positive scores, for real-support families.
``"auto"``
    Real-support families: ``logit`` for scores in [0, 1], else ``identity``.
    Positive families: ``identity`` if all scores are > 0 and not all in [0, 1], else
    ``minmax``. Beta: ``identity`` if all scores are in (0, 1), else ``minmax``.

Likelihoods of different transforms are compared on the *original* score scale (the
log-Jacobian of the map is added), so :meth:`ScoreMixture.auto` can rank mappings as
well as families.
"""

from __future__ import annotations

import sys
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import product

import arviz as az
import numpy as np
import pandas as pd
import pymc as pm
import pytensor.tensor as pt
import xarray as xr
from scipy import special, stats

from ..core import _validate as V
from ..core.data import EvalData, reversed_caveats
from ..core.model import Model
from ..core.posterior import Posterior
from ._scales import TRANSFORMS
from ._scales import Transform as _Transform
from ._scales import histogram as _histogram
from ._scales import make_transform as _make_transform

__all__ = ["ScoreMixture", "FAMILIES", "TRANSFORMS", "AUTO_CANDIDATES", "SPEPosterior"]

#: what a handful of vetted positives leaves to this model (:func:`bayeval.core.data.data_caveats`): it does
#: not take the scores as calibrated, but fits a family to each class's scores
CAVEAT_FEW_POSITIVES = (
    "the share of positives and the positives' score distribution rest largely on the score mixture's prior and "
    "on the unvetted scores, so AP, P@K and precision get wide intervals, and recall the widest. Wide is not "
    "always enough: the mixture does not take the scores as calibrated, but assumes that each class's scores "
    "follow its family (ScoreMixture's negative= and positive=); where the positives' do not, the interval can "
    "miss the truth."
)



# ---------------------------------------------------------------------- families


@dataclass(frozen=True)
class _Family:
    """A class-conditional score density: PyMC and numpy versions of one family."""

    name: str
    support: str  # "positive", "unit" or "real"
    params: tuple[str, ...]

    # -- PyMC ------------------------------------------------------------------
    def start(self, init: dict[str, float]) -> dict[str, float]:
        """Starting values of this family's parameters from a location/scale guess."""
        n, loc, scale = self.name, init["loc"], init["scale"]
        if n == "gamma":
            return {"mean": loc, "sd": scale}
        if n == "lognormal":
            return {"mu": float(np.log(loc)), "sigma": min(1.0, scale / loc)}
        if n in ("truncnormal", "normal"):
            return {"mu": loc, "sigma": scale}
        if n in ("truncstudentt", "studentt"):
            return {"nu": 10.0, "mu": loc, "sigma": scale}
        if n == "skewnormal":
            return {"mu": loc, "sigma": scale, "alpha": 0.0}
        if n == "beta":
            return {"mean": float(np.clip(loc, 0.02, 0.98)), "concentration": 10.0}
        raise AssertionError(n)  # pragma: no cover - guarded by FAMILIES

    def priors(self, prefix: str, med, spread, init: dict[str, float]) -> dict[str, pt.TensorVariable]:
        """Weakly informative priors scaled to the mapped scores: ``med`` and ``spread`` are
        their median and standard deviation (data containers, so refits reuse the graph)."""
        n = self.name
        iv = self.start(init)
        v = {}
        if n == "gamma":
            v["mean"] = pm.LogNormal(f"{prefix}_mean", mu=pt.log(pt.maximum(med, 1e-6)), sigma=1.5, initval=iv["mean"])
            v["sd"] = pm.LogNormal(f"{prefix}_sd", mu=pt.log(spread), sigma=1.5, initval=iv["sd"])
        elif n == "lognormal":
            v["mu"] = pm.Normal(f"{prefix}_mu", mu=pt.log(pt.maximum(med, 1e-6)), sigma=3.0, initval=iv["mu"])
            v["sigma"] = pm.HalfNormal(f"{prefix}_sigma", sigma=2.0, initval=iv["sigma"])
        elif n in ("truncnormal", "normal"):
            v["mu"] = pm.Normal(f"{prefix}_mu", mu=med, sigma=3 * spread, initval=iv["mu"])
            v["sigma"] = pm.HalfNormal(f"{prefix}_sigma", sigma=2 * spread, initval=iv["sigma"])
        elif n in ("truncstudentt", "studentt"):
            v["nu"] = pm.Gamma(f"{prefix}_nu", alpha=2.0, beta=0.1, initval=iv["nu"])
            v["mu"] = pm.Normal(f"{prefix}_mu", mu=med, sigma=3 * spread, initval=iv["mu"])
            v["sigma"] = pm.HalfNormal(f"{prefix}_sigma", sigma=2 * spread, initval=iv["sigma"])
        elif n == "skewnormal":
            v["mu"] = pm.Normal(f"{prefix}_mu", mu=med, sigma=3 * spread, initval=iv["mu"])
            v["sigma"] = pm.HalfNormal(f"{prefix}_sigma", sigma=2 * spread, initval=iv["sigma"])
            v["alpha"] = pm.Normal(f"{prefix}_alpha", mu=0.0, sigma=3.0, initval=iv["alpha"])
        elif n == "beta":
            v["mean"] = pm.Beta(f"{prefix}_mean", alpha=1.0, beta=1.0, initval=iv["mean"])
            v["concentration"] = pm.LogNormal(f"{prefix}_concentration", mu=np.log(10.0), sigma=2.0,
                                              initval=iv["concentration"])
        else:  # pragma: no cover - guarded by FAMILIES
            raise AssertionError(n)
        return v

    def dist(self, v):
        n = self.name
        if n == "gamma":
            return pm.Gamma.dist(mu=v["mean"], sigma=v["sd"])
        if n == "lognormal":
            return pm.LogNormal.dist(mu=v["mu"], sigma=v["sigma"])
        if n == "truncnormal":
            return pm.Truncated.dist(pm.Normal.dist(mu=v["mu"], sigma=v["sigma"]), lower=0.0)
        if n == "normal":
            return pm.Normal.dist(mu=v["mu"], sigma=v["sigma"])
        if n == "truncstudentt":
            return pm.Truncated.dist(pm.StudentT.dist(nu=v["nu"], mu=v["mu"], sigma=v["sigma"]), lower=0.0)
        if n == "studentt":
            return pm.StudentT.dist(nu=v["nu"], mu=v["mu"], sigma=v["sigma"])
        if n == "skewnormal":
            return pm.SkewNormal.dist(mu=v["mu"], sigma=v["sigma"], alpha=v["alpha"])
        if n == "beta":
            m, k = v["mean"], v["concentration"]
            return pm.Beta.dist(alpha=m * k, beta=(1 - m) * k)
        raise AssertionError(n)

    def location(self, v):
        """A location statistic used to order the components (positive above negative)."""
        if self.name in ("gamma", "beta"):
            return v["mean"]
        if self.name == "lognormal":
            return pt.exp(v["mu"])
        if self.name == "skewnormal":  # the mean
            return v["mu"] + v["sigma"] * v["alpha"] / pt.sqrt(1 + v["alpha"] ** 2) * np.sqrt(2 / np.pi)
        return v["mu"]

    # -- numpy -----------------------------------------------------------------
    def frozen(self, p: dict[str, np.ndarray]):
        """scipy frozen distribution with parameters shaped (draws, 1)."""
        p = {k: np.asarray(a, dtype=np.float64)[:, None] for k, a in p.items()}
        n = self.name
        if n == "gamma":
            shape = (p["mean"] / p["sd"]) ** 2
            return stats.gamma(a=shape, scale=p["mean"] / shape), None
        if n == "lognormal":
            return stats.lognorm(s=p["sigma"], scale=np.exp(p["mu"])), None
        if n == "normal":
            return stats.norm(loc=p["mu"], scale=p["sigma"]), None
        if n == "studentt":
            return stats.t(df=p["nu"], loc=p["mu"], scale=p["sigma"]), None
        if n == "skewnormal":
            return stats.skewnorm(a=p["alpha"], loc=p["mu"], scale=p["sigma"]), None
        if n == "truncnormal":
            d = stats.norm(loc=p["mu"], scale=p["sigma"])
            return d, d.logsf(0.0)
        if n == "truncstudentt":
            d = stats.t(df=p["nu"], loc=p["mu"], scale=p["sigma"])
            return d, d.logsf(0.0)
        if n == "beta":
            m, k = p["mean"], p["concentration"]
            return stats.beta(a=m * k, b=(1 - m) * k), None
        raise AssertionError(n)

    def logpdf(self, x, p):
        d, log_norm = self.frozen(p)
        out = d.logpdf(x)
        if log_norm is not None:
            out = np.where(x >= 0, out - log_norm, -np.inf)
        return out

    def sf(self, x, p):
        """P(X > x) under the (truncated) density."""
        d, log_norm = self.frozen(p)
        if log_norm is None:
            return d.sf(x)
        return np.where(x >= 0, np.exp(d.logsf(np.maximum(x, 0)) - log_norm), 1.0)

    def rvs(self, p, size, rng):
        d, log_norm = self.frozen(p)
        if log_norm is None:
            return d.rvs(size=size, random_state=rng)
        # inverse-CDF sampling of the part above 0
        u = rng.random(size)
        lo = d.cdf(0.0)
        return d.ppf(lo + u * (1 - lo))


FAMILIES: dict[str, _Family] = {
    "gamma": _Family("gamma", "positive", ("mean", "sd")),
    "truncnormal": _Family("truncnormal", "positive", ("mu", "sigma")),
    "lognormal": _Family("lognormal", "positive", ("mu", "sigma")),
    "truncstudentt": _Family("truncstudentt", "positive", ("nu", "mu", "sigma")),
    "beta": _Family("beta", "unit", ("mean", "concentration")),
    "normal": _Family("normal", "real", ("mu", "sigma")),
    "studentt": _Family("studentt", "real", ("nu", "mu", "sigma")),
    "skewnormal": _Family("skewnormal", "real", ("mu", "sigma", "alpha")),
}


#: Default candidates of :meth:`ScoreMixture.auto`, as (negative, positive) pairs.
AUTO_CANDIDATES: tuple[tuple[str, str], ...] = (
    ("gamma", "truncnormal"),
    ("lognormal", "truncnormal"),
    ("lognormal", "beta"),
    ("normal", "normal"),
    ("studentt", "studentt"),
    ("skewnormal", "skewnormal"),
)


def _family(name) -> _Family:
    if name not in FAMILIES:
        raise ValueError(f"Unknown score family {name!r}; choose from {sorted(FAMILIES)}.")
    return FAMILIES[name]


# ---------------------------------------------------------------- initialization


def _em_start(x: np.ndarray, labels: np.ndarray, *, n_bins: int = 1000, iters: int = 200):
    """Semi-supervised EM for a Gaussian pair on the mapped scores, from several starts.

    Two-component mixtures have local modes in which one component splits a class
    (a narrow component inside a wide one) instead of separating the classes; chains
    started inside such a basin stay there. EM is cheap, so it is run from starts
    that put the positive component at several upper quantiles of the scores (and at
    the vetted positives), keeping the vetted labels fixed, and the start whose
    solution has the highest observed-data log-likelihood (vetted + unvetted) with the
    positive component above the negative one wins. Unvetted scores enter as a
    histogram above ``n_bins`` items, so this costs milliseconds at any size.

    Returns ``((mu0, sd0), (mu1, sd1), pi)``.
    """
    vetted = ~np.isnan(labels)
    xv, yv = x[vetted], labels[vetted]
    xu = x[~vetted]
    if xu.size > n_bins:
        xu, wu = _histogram(xu, n_bins)
    else:
        wu = np.ones_like(xu)
    pts = np.r_[xv, xu]
    w = np.r_[np.ones_like(xv), wu]
    fixed = np.r_[yv, np.full(xu.size, np.nan)]
    is_fixed = ~np.isnan(fixed)
    sd_all = float(np.std(x)) or 1.0
    floor = 1e-3 * sd_all
    starts = [float(q) for q in np.quantile(x, [0.6, 0.8, 0.9, 0.97, 0.99])]
    if np.any(yv == 1):
        starts.append(float(np.mean(xv[yv == 1])))
    neg0 = float(np.mean(xv[yv == 0])) if np.any(yv == 0) else float(np.quantile(x, 0.25))
    best, best_ll = None, -np.inf
    for m1 in starts:
        m0 = min(neg0, m1 - 0.5 * sd_all)
        s0 = s1 = sd_all / 2
        pi = float(np.clip(np.mean(x > m1) * 2, 0.01, 0.5))
        ll = -np.inf
        for _ in range(iters):
            l0 = np.log1p(-pi) + stats.norm.logpdf(pts, m0, s0)
            l1 = np.log(pi) + stats.norm.logpdf(pts, m1, s1)
            r = np.where(is_fixed, np.nan_to_num(fixed), special.expit(l1 - l0))
            mix = np.where(is_fixed, np.where(fixed == 1, l1, l0), np.logaddexp(l0, l1))
            new_ll = float(np.sum(w * mix))
            w1, w0 = w * r, w * (1 - r)
            if w1.sum() < 1e-9 or w0.sum() < 1e-9:
                break
            pi = float(np.clip(w1.sum() / w.sum(), 1e-4, 1 - 1e-4))
            m1, m0 = float(np.sum(w1 * pts) / w1.sum()), float(np.sum(w0 * pts) / w0.sum())
            s1 = max(float(np.sqrt(np.sum(w1 * (pts - m1) ** 2) / w1.sum())), floor)
            s0 = max(float(np.sqrt(np.sum(w0 * (pts - m0) ** 2) / w0.sum())), floor)
            if abs(new_ll - ll) < 1e-6 * abs(new_ll):
                ll = new_ll
                break
            ll = new_ll
        if m1 > m0 and ll > best_ll:
            best, best_ll = ((m0, s0), (m1, s1), pi), ll
    if best is None:  # no start kept the order: fall back to the quantile split
        q0, q1 = np.quantile(x, [0.25, 0.75])
        best = ((float(q0), sd_all / 2), (float(q1), sd_all / 2), 0.25)
    return best


# --------------------------------------------------------------------- the model


class ScoreMixture(Model):
    """Two-component mixture of class-conditional score densities (SPE).

    Parameters
    ----------
    negative, positive : str
        Families of the negative and positive class-conditional densities: one of
        ``"gamma"``, ``"truncnormal"``, ``"lognormal"``, ``"truncstudentt"``
        (positive support), ``"beta"`` (unit interval), ``"normal"``, ``"studentt"``
        (real line). Gamma and truncated Normal fit best in the paper's survey.
    transform : str or (str, str)
        How scores are mapped to each family's support (see the module docs); one
        value for both components, which must then share it (a mixture needs one
        density of the same score). Default ``"auto"``.
    prior_pi : (float, float)
        Beta prior on the prevalence ``pi``. Default ``(1, 1)``.
    binned : bool or "auto"
        Evaluate the unvetted scores' likelihood on a histogram weighted by counts.
        ``"auto"`` (default) bins above ``bin_above`` unvetted items.
    n_bins : int
        Bins of the histogram (default 2000).
    bin_above : int
        Size above which ``binned="auto"`` bins (default 20,000; see
        ``benchmarks/spe.py`` for the measured cost and accuracy).
    order_components : bool
        Softly require the positive component's location to lie above the negative
        one's (prevents label switching). Default True.
    init : {"em", "labels"}
        Where the chains start. ``"em"`` (default): every chain starts, without
        jitter, at the best of several semi-supervised EM fits of a Gaussian pair to
        the mapped scores -- in the basin that separates the classes rather than in a
        spurious mode where one component splits a class (measured in
        ``benchmarks/spe.py --part modes``). ``"labels"``: the vetted items' class
        means (score quantiles for a class with < 2 vetted items), jittered per chain.

    Examples
    --------
    >>> from bayeval.models import ScoreMixture
    >>> m = ScoreMixture(negative="gamma", positive="truncnormal")
    >>> m
    ScoreMixture(negative='gamma', positive='truncnormal', transform='auto')
    """

    caveat_few_positives = CAVEAT_FEW_POSITIVES  # (data_caveats: this model's prior, not the default's)

    def __init__(
        self,
        negative: str = "gamma",
        positive: str = "truncnormal",
        *,
        transform: str = "auto",
        prior_pi: tuple[float, float] = (1.0, 1.0),
        binned: bool | str = "auto",
        n_bins: int = 2000,
        bin_above: int = 20_000,
        order_components: bool = True,
        init: str = "em",
    ):
        self.negative = _family(negative)
        self.positive = _family(positive)
        self.transform = transform
        if (
            not isinstance(prior_pi, Sequence)
            or len(prior_pi) != 2
            or not all(isinstance(a, int | float) and a > 0 for a in prior_pi)
        ):
            raise ValueError(f"`prior_pi` must be two positive numbers (Beta a, b), got {prior_pi!r}.")
        self.prior_pi = (float(prior_pi[0]), float(prior_pi[1]))
        if binned not in (True, False, "auto"):
            raise ValueError(f"`binned` must be True, False or 'auto', got {binned!r}.")
        self.binned = binned
        self.n_bins = V.as_positive_int(n_bins, "n_bins", minimum=10)
        self.bin_above = V.as_positive_int(bin_above, "bin_above")
        self.order_components = bool(order_components)
        V.check_choice(init, "init", ("em", "labels"))
        self.init = init
        self._jitter = init == "labels"  # benchmarks/spe.py --part modes separates the two effects

    def __repr__(self) -> str:
        return (
            f"ScoreMixture(negative={self.negative.name!r}, positive={self.positive.name!r}, "
            f"transform={self.transform!r})"
        )

    # ---------------------------------------------------------------- helpers

    def _transforms(self, scores) -> _Transform:
        sup = {self.negative.support, self.positive.support}
        if len(sup) > 1:
            # mixed supports: a common map must satisfy both (e.g. positive & unit -> minmax)
            if "real" in sup:
                raise ValueError(
                    f"{self.negative.name!r} and {self.positive.name!r} live on different supports "
                    f"({', '.join(sorted(sup))}); pair real-line families with real-line families."
                )
            support = "unit"
        else:
            support = sup.pop()
        return _make_transform(self.transform, support, scores)

    def _use_bins(self, n_unvetted: int) -> bool:
        if self.binned == "auto":
            return n_unvetted > self.bin_above
        return bool(self.binned) and n_unvetted > 0

    @staticmethod
    def _check_data(data) -> EvalData:
        if not isinstance(data, EvalData):
            raise TypeError(
                f"`data` must be an EvalData, got {type(data).__name__}. "
                "Build one with bayeval.EvalData(scores, labels)."
            )
        if data.n_items < 5:
            raise ValueError(f"A score mixture needs at least 5 items, got {data.n_items}.")
        return data

    def _init(self, x: np.ndarray, labels: np.ndarray) -> tuple[dict, dict, float]:
        """Starting point of the chains: (negative loc/scale, positive loc/scale, pi).

        ``init="em"``: the best of several semi-supervised EM fits of a Gaussian pair to
        the mapped scores (see :func:`_em_start`); ``init="labels"``: the vetted items'
        class means (score quantiles when a class has fewer than 2 vetted items).
        """
        vetted = ~np.isnan(labels)
        if self.init == "em":
            (m0, s0), (m1, s1), pi = _em_start(x, labels)
            out = [{"loc": m0, "scale": s0}, {"loc": m1, "scale": s1}]
        else:
            out = []
            for cls, q in ((0, 0.25), (1, 0.75)):
                xs = x[vetted & (labels == cls)]
                loc = float(np.mean(xs)) if xs.size >= 2 else float(np.quantile(x, q))
                scale = float(np.std(xs)) if xs.size >= 3 else float(np.std(x)) / 2
                out.append({"loc": loc, "scale": scale})
            yv = labels[vetted]
            pi = (float(yv.sum()) + 1) / (yv.size + 2)
        sd = float(np.std(x)) or 1.0
        for o in out:
            o["scale"] = max(o["scale"], 1e-3 * sd, 1e-6)
            if self.negative.support != "real":
                o["loc"] = max(o["loc"], 1e-6)
        return out[0], out[1], float(np.clip(pi, 0.02, 0.98))

    # ------------------------------------------------------------------ build

    def build(self, data: EvalData) -> pm.Model:
        """The PyMC model for ``data`` (inspect it, change priors, or sample it).

        Free variables: ``pi`` and each component's parameters, prefixed ``neg_`` and
        ``pos_``. Deterministic ``prevalence`` equals ``pi``. The vetted items'
        likelihood and the unvetted (marginalized, optionally binned) likelihood are
        the potentials ``vetted`` and ``unvetted``; the mapped scores are the data
        containers ``vetted_score``, ``vetted_label``, ``unvetted_score`` and
        ``unvetted_weight`` (1 per item, or the bin counts when binned).

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval import EvalData
        >>> from bayeval.models import ScoreMixture
        >>> rng = np.random.default_rng(0)
        >>> s = np.r_[rng.gamma(2, 0.1, 80), rng.normal(0.7, 0.1, 20).clip(0.01)]
        >>> y = np.r_[np.zeros(80), np.ones(20)]; y[5:] = np.nan
        >>> model = ScoreMixture().build(EvalData(s, np.r_[y[:5], np.full(95, np.nan)]))
        >>> sorted(v.name for v in model.free_RVs)
        ['neg_mean', 'neg_sd', 'pi', 'pos_mu', 'pos_sigma']
        """
        data = self._check_data(data)
        v = self._prepared(data)
        init0, init1, pi_init = v["init"]
        with pm.Model() as model:
            med = pm.Data("score_median", v["score_median"])
            spread = pm.Data("score_spread", v["score_spread"])
            pi = pm.Beta("pi", alpha=self.prior_pi[0], beta=self.prior_pi[1], initval=pi_init)
            neg = self.negative.priors("neg", med, spread, init0)
            pos = self.positive.priors("pos", med, spread, init1)
            d0, d1 = self.negative.dist(neg), self.positive.dist(pos)
            log_pi, log_1m = pt.log(pi), pt.log1p(-pi)
            # data as pm.Data: the compiled graph does not depend on the values, so a
            # refit of the same structure swaps them and pays no compilation
            if v["vetted_score"].size:
                xv_d = pm.Data("vetted_score", v["vetted_score"])
                yv_d = pm.Data("vetted_label", v["vetted_label"])
                lp = pt.switch(pt.eq(yv_d, 1), log_pi + pm.logp(d1, xv_d), log_1m + pm.logp(d0, xv_d))
                pm.Potential("vetted", lp.sum())
            if v["unvetted_score"].size:
                pts_d = pm.Data("unvetted_score", v["unvetted_score"])
                w_d = pm.Data("unvetted_weight", v["unvetted_weight"])
                mix = pt.logaddexp(log_1m + pm.logp(d0, pts_d), log_pi + pm.logp(d1, pts_d))
                pm.Potential("unvetted", (w_d * mix).sum())
            if self.order_components:
                loc0, loc1 = self.negative.location(neg), self.positive.location(pos)
                # ~0 when the positive component sits above the negative one, steep otherwise
                pm.Potential("order", -pt.softplus(-50.0 * (loc1 - loc0) / spread))
            pm.Deterministic("prevalence", pi)
        return model

    # -------------------------------------------------------------------- fit

    @property
    def param_names(self) -> tuple[str, ...]:
        return ("pi", *(f"neg_{k}" for k in self.negative.params), *(f"pos_{k}" for k in self.positive.params))

    @property
    def default_chains(self) -> int:
        # NUTS: four chains, so that a spurious mode shows as disagreeing chains
        return 4

    @property
    def auto_sampler(self) -> str:
        return "auto"

    def _fallback(self) -> str:
        # measured (benchmarks/spe.py --part sampler): nutpie is faster for skew-normal pairs
        return "nutpie" if {self.negative.name, self.positive.name} & _NUTPIE_FASTER and _has_nutpie() else "pymc"

    def _nuts_jitter(self) -> bool:
        return self._jitter

    def _prepared(self, data: EvalData) -> dict:
        """Everything the model graph reads from the data (memoized for one data object)."""
        memo = getattr(self, "_memo", None)
        if memo is not None and memo[0] is data:
            return memo[1]
        t = self._transforms(data.scores)
        x = t(data.scores)
        vetted = data.vetted
        xu = x[~vetted]
        use_bins = self._use_bins(xu.size)
        if use_bins:
            pts, counts = _histogram(xu, self.n_bins)
        else:
            pts, counts = xu, np.ones_like(xu)
        out = {
            "transform": t, "binned": use_bins, "init": self._init(x, data.labels),
            "score_median": float(np.median(x)), "score_spread": float(np.std(x)) or 1.0,
            "vetted_score": x[vetted], "vetted_label": data.labels[vetted].astype(np.int8),
            "unvetted_score": pts, "unvetted_weight": counts,
        }
        self._memo = (data, out)
        return out

    def _structure(self, data) -> tuple:
        v = self._prepared(data)
        return (self.negative.name, self.positive.name, self.prior_pi, self.order_components,
                bool(v["vetted_score"].size), bool(v["unvetted_score"].size))

    def _data_values(self, data) -> dict:
        v = self._prepared(data)
        names = ["score_median", "score_spread"]
        if v["vetted_score"].size:
            names += ["vetted_score", "vetted_label"]
        if v["unvetted_score"].size:
            names += ["unvetted_score", "unvetted_weight"]
        return {k: v[k] for k in names}

    def _start(self, data) -> dict:
        init0, init1, pi = self._prepared(data)["init"]
        out = {"pi": pi}
        out.update({f"neg_{k}": val for k, val in self.negative.start(init0).items()})
        out.update({f"pos_{k}": val for k, val in self.positive.start(init1).items()})
        return out

    def _posterior(self, data, idata, *, sampling, random_seed):
        v = self._prepared(data)
        self._memo = None
        return SPEPosterior(data, idata, mixture=self, transform=v["transform"], binned=v["binned"],
                            sampler=sampling.sampler, random_seed=random_seed)

    def _convergence(self, post, *, warn: bool) -> dict:
        return post.check(warn=warn)

    def fit(
        self,
        data: EvalData,
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
    ) -> SPEPosterior:
        """Sample the posterior and return an :class:`SPEPosterior`.

        Parameters
        ----------
        data : EvalData
        draws, tune : int
        chains : int, optional
            Default 4 (with NUTS, a spurious mode shows as chains that disagree).
        cores : int, optional
            Parallel NUTS chains (default: up to 2).
        random_seed : int, numpy Generator or SeedSequence, optional
            Seeds both the sampler and the label draws.
        progressbar : bool
        sampler : {"auto", "importance", "smc", "pymc", "pymc-numba", "nutpie", "numpyro", "blackjax"}
            ``"auto"``: importance sampling from the posterior mode found from the EM
            start (exact up to Monte Carlo error when its Pareto k is below 0.7; about
            a second on 10,000 items once the model is compiled), else NUTS: nutpie
            for a skew-normal component when installed (measured faster: 24.5 s
            against 39.0 s on the digits), PyMC's NUTS otherwise.
            ``"smc"``: PyMC's sequential Monte Carlo, each chain an independent run of
            ``draws`` particles tempered from the prior (``tune`` and the NUTS settings
            do not apply): separated modes get their posterior weight, but the
            particles can come out less spread than the posterior (measured on
            ``AnnotatorError``); compare with NUTS before relying on it.
        warn : bool
            Emit a warning when the diagnostics look bad.
        **sample_kwargs
            NUTS settings: ``target_accept`` (default 0.9), ``init``, ``max_treedepth``.

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval import EvalData
        >>> from bayeval.models import ScoreMixture
        >>> rng = np.random.default_rng(1)
        >>> s = np.r_[rng.gamma(3, 0.08, 300), rng.normal(0.75, 0.1, 100).clip(0.01)]
        >>> y = np.full(400, np.nan); y[[0, 1, 2, 300, 301]] = [0, 0, 0, 1, 1]
        >>> post = ScoreMixture().fit(EvalData(s, y), draws=200, random_seed=1, progressbar=False)
        >>> post.sampling.sampler
        'importance'
        """
        return super().fit(data, draws=draws, tune=tune, chains=chains, cores=cores, random_seed=random_seed,
                           progressbar=progressbar, sampler=sampler, warn=warn, **sample_kwargs)

    # --------------------------------------------------------------- selection

    @classmethod
    def auto(
        cls,
        data: EvalData,
        *,
        families: Sequence[str] | Sequence[tuple[str, str]] = AUTO_CANDIDATES,
        transforms: Sequence[str] = ("auto",),
        criterion: str = "loo",
        max_items: int = 5000,
        draws: int = 500,
        tune: int = 500,
        chains: int = 2,
        random_seed: int | None = None,
        progressbar: bool = False,
        progress: bool = True,
        **model_kwargs,
    ) -> tuple[SPEPosterior, pd.DataFrame]:
        """Fit several (negative, positive, transform) combinations; rank them by PSIS-LOO.

        Each candidate is scored by its expected log predictive density of the *scores
        on the original scale* (vetted items: joint score-and-label; unvetted: the
        mixture), so different families and different score mappings are comparable.
        Above ``max_items`` items the criterion is computed on a fixed random subset of
        that size and scaled up (documented approximation; the ranking's standard error
        grows accordingly).

        Parameters
        ----------
        data : EvalData
        families : sequence
            Family names (every ordered pair with matching support is tried) or explicit
            ``(negative, positive)`` pairs. Default :data:`AUTO_CANDIDATES`: the
            paper's Gamma / truncated-Normal pair, log-normal negatives with
            truncated-Normal or Beta positives (min-max or identity maps), and Normal,
            Student-t and skew-normal pairs (logit map for probabilities, identity
            for margins and log-odds).
        transforms : sequence of str
            Score mappings to try (see module docs); each is paired with each family pair
            whose support it can serve.
        criterion : {"loo", "waic"}
        max_items, draws, tune, chains, random_seed, progressbar
            Sampling settings of each candidate fit.
        progress : bool, default True
            Print one line per candidate on stderr (which one, how long it took, how
            many are left): the candidates' fits take minutes in all.
        **model_kwargs
            Passed to :class:`ScoreMixture` (e.g. ``binned=``).

        Returns
        -------
        best : SPEPosterior
        ranking : pandas.DataFrame
            One row per candidate, best first: ``elpd``, ``se``, ``elpd_diff``,
            ``dse`` (standard error of the difference), ``p_eff``, ``weight`` (stacking
            weight), all from :func:`arviz.compare` on the scores' pointwise
            log-likelihood; ``max_rhat``, ``divergences``, ``ppc_p`` (the predictive
            check's p-value, see :meth:`SPEPosterior.ppc`); ``sampler`` (what drew the
            candidate's posterior: ``"importance"`` or a NUTS implementation) and
            ``seconds`` (its fit and check); failed candidates are listed with their
            error.
            A high ``elpd`` says the mixture describes the score *histogram* well; it
            does not guarantee the class split is right, so look at ``ppc_p``,
            ``max_rhat`` and the mixture plot too. Measured on real scores
            (``benchmarks/spe.py --part digits`` and ``--part mappings``, docs
            "Validation"): on the digits probabilities LOO picked the skew-normal pair
            on the logit scale, the most accurate candidate, in most label sets.

        Examples
        --------
        >>> from bayeval.models import ScoreMixture
        >>> # best, table = ScoreMixture.auto(data, families=["gamma", "truncnormal"])
        """
        V.check_choice(criterion, "criterion", ("loo", "waic"))
        if isinstance(data, EvalData) is False:
            raise TypeError(f"`data` must be an EvalData, got {type(data).__name__}.")
        if not families:
            raise ValueError("`families` is empty.")
        if all(isinstance(f, str) for f in families):
            pairs = [(a, b) for a, b in product(families, repeat=2)]
        else:
            pairs = [tuple(p) for p in families]
        rng = np.random.default_rng(V.as_seed_sequence(random_seed))
        subset = None
        if data.n_items > max_items:
            subset = np.sort(rng.choice(data.n_items, max_items, replace=False))
        rows, fits = [], {}
        todo = [(np_, tr) for np_, tr in product(pairs, transforms)
                if (_family(np_[0]).support == "real") == (_family(np_[1]).support == "real")]
        started = time.perf_counter()
        for j, ((neg, pos), tr) in enumerate(todo, start=1):
            key = f"{neg}/{pos}/{tr}"
            if progress:
                spent = time.perf_counter() - started
                left = f", about {spent / (j - 1) * (len(todo) - j + 1):.0f} s left" if j > 1 else ""
                print(f"ScoreMixture.auto: fitting candidate {j}/{len(todo)} ({key}); {spent:.0f} s so far{left}",
                      file=sys.stderr, flush=True)
            model = cls(neg, pos, transform=tr, **model_kwargs)
            t_fit = time.perf_counter()
            try:
                post = model.fit(
                    data, draws=draws, tune=tune, chains=chains, random_seed=random_seed,
                    progressbar=progressbar, warn=False,
                )
            except ValueError as exc:  # e.g. transform incompatible with these scores
                rows.append({"model": key, "error": str(exc)})
                continue
            diag = post.check(warn=False)
            rows.append(
                {
                    "model": key,
                    "negative": neg,
                    "positive": pos,
                    "transform": post.transform.name,
                    "max_rhat": diag["max_rhat"],
                    "divergences": diag["divergences"],
                    "ppc_p": post.ppc(n_draws=100, random_seed=0)["p_value"],
                    "sampler": post.sampler,
                    "seconds": time.perf_counter() - t_fit,
                    "error": "",
                }
            )
            # the scores' pointwise log-likelihood (original scale, map's Jacobian included)
            ll = xr.DataArray(post.pointwise_loglik(items=subset), dims=("chain", "draw", "item"))
            fits[key] = (post, az.InferenceData(posterior=post.idata.posterior,
                                                log_likelihood=xr.Dataset({"scores": ll})))
        ok = [r for r in rows if not r.get("error")]
        if not ok:
            raise ValueError(V.no_candidate_message({r["model"]: r["error"] for r in rows}))
        # az.compare ranks them (PSIS-LOO or WAIC of the scores), on the subset when there is one
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            comp = az.compare({k: v[1] for k, v in fits.items()}, ic=criterion, var_name="scores")
        n_used = data.n_items if subset is None else subset.size
        scale = data.n_items / n_used
        by_key = {r["model"]: r for r in ok}
        for key, c in comp.iterrows():
            r = by_key[key]
            r["elpd"] = float(c[f"elpd_{criterion}"]) * scale
            r["se"] = float(c["se"]) * scale
            r["elpd_diff"] = -float(c["elpd_diff"]) * scale  # this candidate minus the best (<= 0)
            r["dse"] = float(c["dse"]) * scale
            r["p_eff"] = float(c[f"p_{criterion}"]) * scale
            r["weight"] = float(c["weight"])
        ok = [by_key[k] for k in comp.index]
        best_key = ok[0]["model"]
        table = pd.DataFrame(ok + [r for r in rows if r.get("error")]).set_index("model")
        cols = ["negative", "positive", "transform", "elpd", "se", "elpd_diff", "dse", "p_eff", "weight", "max_rhat",
                "divergences", "ppc_p", "sampler", "seconds", "error"]
        return fits[best_key][0], table[[c for c in cols if c in table.columns]]


#: The predictive check computes the mixture CDF exactly up to this many scores, above
#: it on this many nodes (interpolated).
_PPC_EXACT_MAX, _PPC_NODES = 4096, 1024

#: Families whose fits nutpie ran faster than PyMC (benchmarks/spe.py --part sampler).
_NUTPIE_FASTER = frozenset({"skewnormal"})


def _has_nutpie() -> bool:
    try:
        import nutpie  # noqa: F401
    except ImportError:
        return False
    return True


# ------------------------------------------------------------------ the posterior


class SPEPosterior(Posterior):
    """Posterior of a :class:`ScoreMixture` fit: label draws, population metrics,
    diagnostics and the posterior predictive check of the score distribution.

    Created by :meth:`ScoreMixture.fit`; everything of :class:`bayeval.Posterior`
    applies (``metric``, ``summary``, ``label_draws``...).

    Examples
    --------
    >>> from bayeval.models import SPEPosterior
    >>> SPEPosterior.population.__doc__.splitlines()[0]
    'The population version of a metric, from the mixture parameters alone (eqs. 4-5).'
    """

    caveat_few_positives = CAVEAT_FEW_POSITIVES

    def report_sections(self) -> tuple[str, ...]:
        """The report shows the mixture fit and its posterior predictive check."""
        return ("fit",)

    def __init__(self, data, idata, *, mixture: ScoreMixture, transform: _Transform, binned: bool, sampler: str, random_seed=None):
        self.mixture = mixture
        self.transform = transform
        self.binned = binned
        self.sampler = sampler
        self._x = transform(data.scores)
        super().__init__(data, idata, self._prob, random_seed=random_seed, model=repr(mixture))

    # -------------------------------------------------------------- internals

    def _split(self, params) -> tuple[np.ndarray, dict, dict]:
        neg = {k: params[f"neg_{k}"] for k in self.mixture.negative.params}
        pos = {k: params[f"pos_{k}"] for k in self.mixture.positive.params}
        return np.asarray(params["pi"], dtype=np.float64), neg, pos

    def _log_components(self, params, x):
        pi, neg, pos = self._split(params)
        with np.errstate(divide="ignore"):
            l0 = np.log1p(-pi)[:, None] + self.mixture.negative.logpdf(x, neg)
            l1 = np.log(pi)[:, None] + self.mixture.positive.logpdf(x, pos)
        return l0, l1

    def _probabilities_of(self, chain: int, draws: slice, items: np.ndarray) -> np.ndarray:
        return np.asarray(self._prob(self._params(chain, draws), items), dtype=np.float64)

    def _prob(self, params, items=None):
        l0, l1 = self._log_components(params, self._x if items is None else self._x[items])
        with np.errstate(invalid="ignore"):
            p = special.expit(l1 - l0)
        # both densities zero (far outside both supports): fall back to the prior pi
        bad = ~np.isfinite(l1 - l0) & ~(np.isinf(l1) ^ np.isinf(l0))
        if bad.any():
            p = np.where(bad, np.asarray(params["pi"])[:, None], p)
        return p

    def _all_params(self) -> dict[str, np.ndarray]:
        post = self.idata.posterior
        names = ["pi"] + [f"neg_{k}" for k in self.mixture.negative.params] + [f"pos_{k}" for k in self.mixture.positive.params]
        return {n: post[n].values.reshape(-1) for n in names}

    def pointwise_loglik(self, items=None) -> np.ndarray:
        """log p(score_i [, label_i] | theta) per draw and item, on the original score scale.

        Vetted items: ``log pi_y + log p_y(s_i)``; unvetted: the mixture. Includes the
        log-Jacobian of the score map. Shape ``(chain, draw, n_selected_items)``.
        """
        sel = np.arange(self.data.n_items) if items is None else np.asarray(items)
        x, s = self._x[sel], self.data.scores[sel]
        lab = self.data.labels[sel]
        out = np.empty((self.n_chains * self.n_draws, sel.size))
        params = self._all_params()
        step = max(1, (1 << 24) // max(1, sel.size))
        for a in range(0, out.shape[0], step):
            chunk = {k: v[a : a + step] for k, v in params.items()}
            l0, l1 = self._log_components(chunk, x)
            mix = np.logaddexp(l0, l1)
            out[a : a + step] = np.where(np.isnan(lab), mix, np.where(lab == 1, l1, l0))
        out += self.transform.log_jacobian(s)
        return out.reshape(self.n_chains, self.n_draws, sel.size)

    def elpd_pointwise(self, items=None, *, criterion: str = "loo") -> tuple[np.ndarray, float]:
        """Expected log predictive density per item (PSIS-LOO or WAIC) of the scores
        on the original scale, and the effective number of parameters.

        The quantity :meth:`ScoreMixture.auto` ranks candidates by; comparable across
        families and score maps (the map's log-Jacobian is included).
        """
        V.check_choice(criterion, "criterion", ("loo", "waic"))
        ll = self.pointwise_loglik(items=items)
        ll_da = xr.DataArray(ll, dims=("chain", "draw", "item"))
        idata = az.InferenceData(posterior=self.idata.posterior, log_likelihood=xr.Dataset({"scores": ll_da}))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = az.loo(idata, pointwise=True) if criterion == "loo" else az.waic(idata, pointwise=True)
        return np.asarray(res[f"{criterion}_i"]).ravel(), float(res[f"p_{criterion}"])

    # -------------------------------------------------------------- diagnostics

    def check_convergence(self, *, warn: bool = True) -> dict:
        """:meth:`check`."""
        return self.check(warn=warn)

    def check(self, *, warn: bool = True, stacklevel: int | None = None) -> dict:
        """Convergence diagnostics, with a warning when they are bad.

        Importance sampling: bad when the weights' Pareto k >= 0.7 or their ESS is
        below 100 per chain. NUTS: any r_hat > 1.01, any bulk ESS < 100 per chain, or
        any divergent transition. Two-component mixtures have spurious modes (a
        component splitting one class, label switching); under NUTS they show up as
        chains that disagree (high r_hat).

        Returns
        -------
        dict
            With keys ``max_rhat``, ``min_ess_bulk``, ``divergences``, ``ok``,
            ``messages``, ``data_messages``, ``sampler``, ``pareto_k``, ``ess`` and ``chains``
            (:meth:`chain_summary` when NUTS chains disagree, else None). The message
            then names the chains whose log-likelihood lies far below the best
            chain's: stuck in a worse mode. Vetted labels that run clearly against the
            score direction (:func:`bayeval.core.data.reversed_scores`; the model's positive
            component lies above its negative one) are a finding too, first in
            ``messages`` and in ``data_messages`` (the labels' own problems), with a
            warning of their own.

        Examples
        --------
        >>> from bayeval.models.score_mixture import SPEPosterior
        >>> # ScoreMixture().fit(data, warn=False).check()["ok"]
        """
        from ..core._diagnostics import RHAT_MAX, check_convergence

        sampling = getattr(self, "sampling", None)
        if sampling is None:
            from ..core.sampling import SamplingInfo

            sampling = SamplingInfo(self.sampler)
        out = check_convergence(self.idata, sampling, self.mixture.param_names, warn=False)
        out["chains"] = None
        if out["sampler"] != "importance" and self.n_chains > 1 and not out["max_rhat"] <= RHAT_MAX:
            chains = self.chain_summary()
            gap = chains["loglik"].max() - chains["loglik"]
            low = chains.index[gap > 5].tolist()
            msg = "possibly a spurious mode (a component splitting one class). Try more tuning, another family, or more vetted labels."
            if low:
                msg += (
                    f" Chain(s) {low} sit {gap[low].min():.0f}+ nats below the best chain's log-likelihood "
                    f"(prevalence by chain: {', '.join(f'{v:.3f}' for v in chains['pi'])}); "
                    "see post.chain_summary()."
                )
            out["messages"] = [m + " " + msg if m.startswith("r_hat") else m for m in out["messages"]]
            out["chains"] = chains
        from ..core._diagnostics import put_first, user_stacklevel

        if warn and out["messages"]:
            warnings.warn("bayeval: sampler diagnostics are bad: " + " ".join(out["messages"]), UserWarning,
                          stacklevel=stacklevel or user_stacklevel())
        # positives scoring low: said first, not a sampler problem
        return put_first(out, reversed_caveats(self.data, self), warn=warn, stacklevel=stacklevel)

    def chain_summary(self, *, max_items: int = 5000) -> pd.DataFrame:
        """Per chain: mean prevalence, mean log-likelihood of the data and the AP of the
        mixture's own split (population AP), to tell which chains found which mode.

        The log-likelihood (vetted and unvetted items, original score scale) is the
        posterior mean over the chain's draws; above ``max_items`` items it is computed
        on a fixed random subset and scaled up. A chain far below the best one (many
        nats) is stuck in a spurious mode: its draws describe the data worse.
        """
        max_items = V.as_positive_int(max_items, "max_items")
        n = self.data.n_items
        items = None
        if n > max_items:
            items = np.sort(np.random.default_rng(0).choice(n, max_items, replace=False))
        ll = self.pointwise_loglik(items=items).sum(axis=2) * (n / (max_items if items is not None else n))
        post = self.idata.posterior
        return pd.DataFrame(
            {
                "pi": post["pi"].mean("draw").values,
                "loglik": ll.mean(axis=1),
                "population_ap": self.population("average_precision", n_grid=401).mean("draw").values,
            },
            index=pd.Index(np.arange(self.n_chains), name="chain"),
        )

    def diagnostics(self) -> pd.DataFrame:
        names = ["pi"] + [f"neg_{k}" for k in self.mixture.negative.params] + [f"pos_{k}" for k in self.mixture.positive.params]
        from ..core._diagnostics import parameter_table

        return parameter_table(self.idata, names)  # r_hat unrounded (ArviZ's default rounds to 2 decimals)

    # --------------------------------------------------------------- densities

    def density(self, grid=None, *, n_grid: int = 400, scale: str = "score") -> xr.Dataset:
        """Posterior draws of the mixture's density of the scores.

        Parameters
        ----------
        grid : 1-D array_like, optional
            Where to evaluate (on the chosen scale); default an even grid over the data.
        n_grid : int
        scale : {"score", "model"}
            ``"score"``: density of the original scores (with the map's Jacobian);
            ``"model"``: density of the mapped scores the families describe.

        Returns
        -------
        xarray.Dataset
            ``negative`` and ``positive`` (each weighted by its class prior) and
            ``mixture``, dims ``(chain, draw, score)``.
        """
        V.check_choice(scale, "scale", ("score", "model"))
        ref = self.data.scores if scale == "score" else self._x
        if grid is None:
            grid = np.linspace(ref.min(), ref.max(), n_grid)
        grid = np.asarray(grid, dtype=np.float64)
        if scale == "score":
            x, jac = self.transform(grid), np.exp(self.transform.log_jacobian(grid))
        else:
            x, jac = grid, np.ones_like(grid)
        params = self._all_params()
        l0, l1 = self._log_components(params, x)
        shape = (self.n_chains, self.n_draws, grid.size)
        d0 = (np.exp(l0) * jac).reshape(shape)
        d1 = (np.exp(l1) * jac).reshape(shape)
        dims = ("chain", "draw", "score")
        coords = {"score": grid}
        return xr.Dataset({"negative": (dims, d0), "positive": (dims, d1), "mixture": (dims, d0 + d1)}, coords=coords)

    def _mixture_cdf(self, x, pi, neg, pos):
        """CDF of the mapped scores under one parameter draw (arrays of length 1)."""
        return (1 - pi[0]) * (1 - self.mixture.negative.sf(x, neg)[0]) + pi[0] * (1 - self.mixture.positive.sf(x, pos)[0])

    def ppc(self, *, n_draws: int = 200, random_seed: int | np.random.SeedSequence | np.random.Generator | None = 0) -> dict:
        """Posterior predictive check of the score distribution (Kolmogorov distance).

        For ``n_draws`` parameter draws, N scores are simulated from the mixture and
        their Kolmogorov distance to the draw's mixture CDF is compared with the
        observed scores' distance. A small p-value (< 0.05) says the families cannot
        reproduce the score histogram: curves from this fit are biased (the paper's
        logres8 case). Above 4,096 scores the mixture CDF is computed on 1,024 nodes
        (half at the observed scores' quantiles, half evenly spaced) and interpolated
        linearly: the distances change by less than 1e-4 (tested), and the check costs
        the same at any N (a skew-normal CDF is slow to evaluate: 10^4 scores took
        over 30 s exactly).

        Returns
        -------
        dict with ``ks_observed`` (mean over draws), ``p_value`` and the per-draw arrays.
        """
        rng = np.random.default_rng(V.as_seed_sequence(random_seed))
        params = self._all_params()
        total = params["pi"].size
        pick = rng.choice(total, size=min(n_draws, total), replace=False)
        x_obs = np.sort(self._x)
        n = x_obs.size
        d_obs, d_rep = [], []
        ecdf_hi = np.arange(1, n + 1) / n
        ecdf_lo = np.arange(0, n) / n
        exact = n <= _PPC_EXACT_MAX
        if not exact:  # the CDF on nodes, interpolated: dense where the scores are
            at_quantiles = x_obs[np.linspace(0, n - 1, _PPC_NODES // 2).round().astype(np.int64)]
        for j in pick:
            p = {k: v[[j]] for k, v in params.items()}
            pi, neg, pos = self._split(p)
            y = rng.random(n) < pi[0]
            xr_ = np.empty(n)
            xr_[y] = self.mixture.positive.rvs(pos, (1, int(y.sum())), rng)[0]
            xr_[~y] = self.mixture.negative.rvs(neg, (1, int((~y).sum())), rng)[0]
            xr_.sort()
            if exact:
                c_obs = self._mixture_cdf(x_obs, pi, neg, pos)
                c_rep = self._mixture_cdf(xr_, pi, neg, pos)
            else:
                lo, hi = min(x_obs[0], xr_[0]), max(x_obs[-1], xr_[-1])
                nodes = np.union1d(at_quantiles, np.linspace(lo, hi, _PPC_NODES // 2))
                c_nodes = self._mixture_cdf(nodes, pi, neg, pos)
                c_obs, c_rep = np.interp(x_obs, nodes, c_nodes), np.interp(xr_, nodes, c_nodes)
            d_obs.append(max(np.max(ecdf_hi - c_obs), np.max(c_obs - ecdf_lo)))
            d_rep.append(max(np.max(ecdf_hi - c_rep), np.max(c_rep - ecdf_lo)))
        d_obs, d_rep = np.array(d_obs), np.array(d_rep)
        return {"ks_observed": float(d_obs.mean()), "p_value": float(np.mean(d_rep >= d_obs)), "ks_draws": d_obs, "ks_replicated": d_rep}

    # -------------------------------------------------------------- population

    def population(self, metric: str, *, thresholds=None, recall=None, threshold=None, n_grid: int = 201) -> xr.DataArray:
        """The population version of a metric, from the mixture parameters alone (eqs. 4-5).

        ``R(t) = P(s > t | y = 1)``, ``FPR(t) = P(s > t | y = 0)``,
        ``P(t) = pi R(t) / (pi R(t) + (1 - pi) FPR(t))``.

        Parameters
        ----------
        metric : str
            ``"precision_recall_curve"`` (at ``thresholds``), ``"precision_at_recall"``
            (at ``recall`` levels, by inverting ``R``), ``"average_precision"``
            (``integral of P dR``), ``"roc_curve"``, ``"roc_auc"``, and
            ``"precision"``, ``"recall"``, ``"f_score"`` at ``threshold``.
        thresholds, recall, threshold : optional
            As the metric needs; thresholds are on the original score scale.
        n_grid : int, default 201
            Thresholds of the grid used for integrals and inversions (even on the model's
            scale: in log-odds for probability scores, where the families live). At the
            default, ``"average_precision"`` and ``"roc_auc"`` are within 1e-3 of their
            limit on a fine grid, far inside their posterior spread: on three fits
            (breast-cancer probabilities and simulated ones, skew-normal and normal pairs)
            the largest error of a draw was 1.0e-4 against a 4,001-point grid. Each point
            costs every draw's two survival functions (about 0.1 s for 2,000 draws of a
            skew-normal pair), so the earlier default of 2,001 took minutes.

        Returns
        -------
        xarray.DataArray with dims ``(chain, draw, ...)``.
        """
        params = self._all_params()
        pi, neg, pos = self._split(params)
        shape = (self.n_chains, self.n_draws)
        s = self.data.scores

        def rates(t_orig):
            t = np.asarray(t_orig, dtype=np.float64)
            x = self.transform(t)
            r = self.mixture.positive.sf(x, pos)
            f = self.mixture.negative.sf(x, neg)
            if self.transform.name == "logit":
                # the logit map clips to the observed probabilities (exact 0s and 1s sit on the most
                # extreme others); a cut-off below 0 flags every item and one above 1 flags none,
                # not the items beyond the clip
                r = np.where(t < 0, 1.0, np.where(t > 1, 0.0, r))
                f = np.where(t < 0, 1.0, np.where(t > 1, 0.0, f))
            return r, f

        def prec(r, f):
            num = pi[:, None] * r
            den = num + (1 - pi)[:, None] * f
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.where(den > 0, num / den, 1.0)

        base = {"chain": np.arange(self.n_chains), "draw": np.arange(self.n_draws)}
        if metric in ("precision", "recall", "f_score"):
            if threshold is None:
                raise ValueError(f"population({metric!r}) needs threshold=<score cut-off>.")
            r, f = rates(np.array([float(threshold)]))
            p = prec(r, f)[:, 0]
            r = r[:, 0]
            val = {"precision": p, "recall": r}.get(metric)
            if val is None:
                with np.errstate(invalid="ignore", divide="ignore"):
                    val = np.where(p + r > 0, 2 * p * r / (p + r), 0.0)
            return xr.DataArray(val.reshape(shape), dims=("chain", "draw"), coords=base, name=metric)
        n_grid = V.as_positive_int(n_grid, "n_grid", minimum=2)
        if self.transform.name == "logit":
            # even on the model's scale, where the families live (an even grid of probabilities
            # puts few points where the mapped scores spread out, near 0 and 1); the map clips at
            # the observed range, so the grid spans it
            grid = special.expit(np.linspace(self.transform(s.min()), self.transform(s.max()), n_grid))
        else:
            # a grid of thresholds over (and slightly beyond) the observed scores
            pad = 0.05 * (s.max() - s.min())
            grid = np.linspace(s.min() - pad, s.max() + pad, n_grid)
        if self.transform.name == "log":
            grid = grid[grid > 0]
        r, f = rates(grid)
        p = prec(r, f)
        if metric == "precision_recall_curve":
            t = np.asarray(thresholds if thresholds is not None else np.unique(np.quantile(s, np.linspace(0, 1, 101))), dtype=float)
            rt, ft = rates(t)
            out = np.stack([prec(rt, ft), rt], axis=-1).reshape(shape + (t.size, 2))
            return xr.DataArray(out, dims=("chain", "draw", "threshold", "curve"), coords={**base, "threshold": t, "curve": ["precision", "recall"]}, name=metric)
        if metric == "roc_curve":
            t = np.asarray(thresholds if thresholds is not None else np.unique(np.quantile(s, np.linspace(0, 1, 101)))[::-1], dtype=float)
            rt, ft = rates(t)
            out = np.stack([ft, rt], axis=-1).reshape(shape + (t.size, 2))
            return xr.DataArray(out, dims=("chain", "draw", "threshold", "curve"), coords={**base, "threshold": t, "curve": ["fpr", "tpr"]}, name=metric)
        # grid is increasing in t, so r and f decrease along it; integrate from t = max down
        if metric == "average_precision":
            dr = -np.diff(r, axis=1)
            ap = np.sum(dr * 0.5 * (p[:, 1:] + p[:, :-1]), axis=1) + r[:, -1] * p[:, -1]
            return xr.DataArray(ap.reshape(shape), dims=("chain", "draw"), coords=base, name=metric)
        if metric == "roc_auc":
            auc = np.sum(-np.diff(f, axis=1) * 0.5 * (r[:, 1:] + r[:, :-1]), axis=1) + f[:, -1] * r[:, -1] + (1 - f[:, 0]) * (1 + r[:, 0]) / 2
            return xr.DataArray(auc.reshape(shape), dims=("chain", "draw"), coords=base, name=metric)
        if metric == "precision_at_recall":
            if recall is None:
                raise ValueError("population('precision_at_recall') needs recall=<levels>.")
            levels = V.as_grid(recall, "recall", lo=0.0, hi=1.0)
            out = np.empty((r.shape[0], levels.size))
            for j, level in enumerate(levels):  # loop over recall levels, vectorized over draws
                # highest threshold whose recall reaches the level
                ok = r >= level - 1e-12
                last = ok.shape[1] - 1 - np.argmax(ok[:, ::-1], axis=1)
                # a level no threshold of the grid reaches (recall 1 where a class's support is unbounded):
                # the limit of flagging every item, precision pi (argmax of all-False picked the top threshold)
                out[:, j] = np.where(ok.any(axis=1), p[np.arange(p.shape[0]), last], pi)
            return xr.DataArray(out.reshape(shape + (levels.size,)), dims=("chain", "draw", "recall"), coords={**base, "recall": levels}, name=metric)
        raise ValueError(
            f"No population version of {metric!r}; available: precision_recall_curve, precision_at_recall, "
            "average_precision, roc_curve, roc_auc, precision, recall, f_score."
        )
