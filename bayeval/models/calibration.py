"""Calibration models: a Bayesian curve ``P(y = 1 | score)`` fitted to the vetted labels.

A score mixture learns the class split from the *shape* of all scores, and is
confidently wrong when its families do not fit. A calibration model learns only what
the vetted labels say: the probability that an item with a given score is positive.
Unvetted items are not modelled as a density; they are the items whose labels are drawn,
each Bernoulli with the curve's probability at its score (vetted items keep their
labels). The resulting :class:`CalibrationPosterior` is a :class:`bayeval.Posterior`, so
every metric, :func:`bayeval.recalibrate`, :func:`bayeval.select` and the report work on
it unchanged.

Curves (``eta`` is the log-odds of being positive)
--------------------------------------------------
``"logistic"`` (Platt scaling)
    ``eta = a + b * z``.
``"beta"`` (Beta calibration; Kull, Silva Filho & Flach, 2017; probabilities only)
    ``eta = c + a * log(s) - b * log(1 - s)``, ``a, b > 0``; ``a = b`` is the logistic
    curve on ``logit(s)``, ``a != b`` bends it differently near 0 and near 1.
``"monotone"``
    A monotone piecewise-linear curve in ``z``: the slope ``b`` is multiplied by
    ``exp(delta_k)`` in each of the segments between knots at score quantiles 0.5,
    0.9 and 0.99 (ranks that matter for rare positives), with ``delta_k ~ Normal(0,
    0.7)``: it shrinks towards the logistic curve, so 20-30 labels still give a sensible
    curve, and bends where the labels ask for it.

The score feature ``z``
-----------------------
For probabilities (all scores in [0, 1]) ``z = logit(s)``, with the probabilities
clipped to [1e-7, 1 - 1e-7]; exact 0s and 1s sit beyond every other score: one step of
the scores' own grid beyond the most extreme other score's logit, taken before the clip
(an exact 1.0 of a random forest one vote beyond 199 of 200; a naive-Bayes 1.0 beyond its
1 - 7e-15, far from the 1 - 1e-7 where the clip puts the scores before it), since a
classifier's exact 1.0s can be much surer than its 1 - 1e-8s (``saturated="merged"``, the
map of fits saved before, gave them one value). The
prior is centred on *the scores are calibrated*: ``a ~ Normal(0, 1)``, ``log b ~
Normal(0, 1)`` -- intercept 0 and slope 1, with room for the slopes of 0.1-0.2 that
over-confident models (boosted trees, naive Bayes) need. For any other scale (margins, log-odds,
similarities) ``z`` is the score standardized by the pool's standard deviation and
centred at the pool's ``1 - pi`` quantile, ``pi`` being the pool's share of positives
estimated from the vetted labels, each weighted by the share of the ranking it stands for
(:func:`~bayeval.models._scales.vetted_prevalence`; smoothed like ``(positives + 1) /
(vetted + 2)``), so that items chosen by their scores (a designed batch that over-samples
the top) do not move the centre: the prior says the curve crosses 0.5
near the share of top scores that matches the prevalence, ``a ~ Normal(0, 1.5)``, and
``log b ~ Normal(log 2, 1)`` (a standardized slope between 0.3 and 14 with 95%
probability: from weak to near-perfect classifiers). The slope is positive: a higher
score never means a lower probability of being positive. Probabilities squeezed into a
narrow band away from 0 and 1 (a strongly regularized model's) are read on this second
scale too by ``transform="auto"``: a strongly regularized model's are rarely calibrated,
and the calibrated prior understated their AP by 0.1 to 0.6; but a weak, calibrated
model's probabilities are squeezed too, and there the standardized prior overstated
precision (``benchmarks/results/squeezed.md``). ``bayeval.fit``'s default therefore fits
both readings of squeezed probabilities and weighs them by the vetted labels
(:func:`bayeval.models.stacking.default_candidates`).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pymc as pm
import pytensor.tensor as pt
import xarray as xr
from scipy import special

from ..core import _validate as V
from ..core._defaults import HDI_PROB
from ..core._diagnostics import LOGODDS_ON_PROBABILITIES, is_said
from ..core.data import EvalData, few_positives_caveat, reversed_scores_caveat, squeezed_range
from ..core.model import Model
from ..core.posterior import Posterior
from ..core.sampling import SamplingInfo
from ._scales import make_transform, vetted_prevalence
from .penalty import jeffreys_potential, separation

__all__ = ["Calibration", "CalibrationPosterior", "CURVES", "PENALTIES"]

CURVES = ("logistic", "beta", "monotone")
#: the small-sample penalty of the curve's intercept and slope (``Calibration(penalty=...)``):
#: none, Jeffreys' prior of them (Firth's penalty), or Jeffreys' where the vetted labels are
#: separable by the score (:func:`~bayeval.models.penalty.separation`), else none
PENALTIES = ("none", "jeffreys", "auto")
_KNOT_QUANTILES = (0.5, 0.9, 0.99)
DELTA_SD = 0.7
INTERCEPT_SD = None  # the intercept prior's scale: None = 1 on the calibrated scales, 1.5 on standardized scores
SLOPE_SD = 1.0  # the scale of log b's prior
ASYMPTOTE_PRIOR = (3.0, 1.0)  # lo ~ Beta(1, 3), (hi - lo) / (1 - lo) ~ Beta(3, 1) (Calibration(asymptotes=True))
_P_CLIP = 1e-7  # probabilities are clipped to [1e-7, 1 - 1e-7] for the logit feature (|logit| <= 16.1)
_LOGIT_MAX = float(np.log((1 - _P_CLIP) / _P_CLIP))  # the bound for scores given as log-odds
_P_FLOOR = 2.0**-53  # float64's resolution below 1 (|logit| <= 36.7): where exact 0s and 1s are placed from
SATURATED = ("apart", "merged")


_ETA_MAX = 36.0  # the likelihood's log-odds are clipped here: beyond ~37 PyMC's Bernoulli(logit_p) gradient is NaN


def bernoulli_logit(name: str, eta, observed, wide: bool = True):
    """``pm.Bernoulli(name, logit_p=eta)``; ``wide`` (features beyond +-16.1: exact 0s and 1s
    placed apart) clips the log-odds to +-36 (inside, values and gradients are the same;
    beyond, PyMC's gradient is NaN, which stalls the mode search and NUTS; the
    probabilities there are within 3e-16 of 0 or 1). Without ``wide`` the graph is the
    one fits were drawn from before, so their draws are unchanged."""
    return pm.Bernoulli(name, logit_p=pt.clip(eta, -_ETA_MAX, _ETA_MAX) if wide else eta, observed=observed)


def _logit_ends(s: np.ndarray) -> tuple[float, float]:
    """The feature values of exact 0s and 1s (``saturated="apart"``): one step beyond the most
    extreme other score on the scores' own logit scale, before the clip at 1e-7 (the clip at
    float64's resolution, 2**-53, only), a step being the gap between that score and the
    next distinct one: 200 of 200 trees voting sits one vote beyond 199; a naive-Bayes 1.0
    sits beyond its 1 - 7e-15, far from the 1 - 1e-7 where the clip puts the scores before
    it. One log-odds unit when the other scores take a single value."""
    inner = np.clip(s[(s > 0) & (s < 1)], _P_FLOOR, 1.0 - _P_FLOOR)
    u = np.unique(np.log(inner) - np.log1p(-inner))
    if u.size < 2:
        return float(u[0] - 1.0), float(u[-1] + 1.0)
    return float(u[0] - (u[1] - u[0])), float(u[-1] + (u[-1] - u[-2]))


def _eta(curve: str, params: dict, feats, exp):
    """The log-odds of the curve, written once for numpy and PyTensor.

    ``params`` values have a leading draw axis (numpy) or are scalars / vectors
    (PyTensor); ``feats`` has a trailing feature axis; the broadcasting is the caller's.
    """
    if curve == "logistic":
        return _plus_times(params["a"], params["b"], feats[..., 0])
    if curve == "beta":
        return params["c"] + params["a"] * feats[..., 0] - params["b"] * feats[..., 1]
    # monotone: feats[..., k] = the part of (z - pivot) lying in segment k
    slopes = exp(params["delta"])
    return _plus_times(params["a"], params["b"], weighted_columns(feats, slopes), fresh=True)


def _plus_times(a, b, x, fresh: bool = False):
    """``a + b * x``; for a numpy ``x`` without a second array of the result's size (the values
    are the same to the bit: ``b * x + a`` is ``a + b * x``). ``fresh``: ``x`` is a new array
    that may hold the result."""
    if not isinstance(x, np.ndarray):
        return a + b * x
    shape = np.broadcast_shapes(np.shape(a), np.shape(b), x.shape)
    if fresh and x.shape == shape and x.dtype == np.float64:
        out = np.multiply(b, x, out=x)
    else:
        out = np.multiply(b, x)
    if out.shape != shape or out.dtype != np.float64:
        return a + out
    out += a
    return out


def weighted_columns(feats, weights):
    """``(feats * weights).sum(axis=-1)``: each row's feature columns weighted and summed.

    In numpy, features ``(1, n, K)`` (or ``(n, K)``) against one weight vector per draw
    ``(m, 1, K)`` (or ``(K,)``) are one matrix product, ``(m, n)``: the broadcast product
    would first build an ``m x n x K`` array (at 10^5 items, most of a metric pass). The
    values are the same up to the order of the floating-point sums. Other shapes, and
    PyTensor variables (a model's graph, which holds no BLAS operation), take the
    broadcast product.

    Examples
    --------
    >>> import numpy as np
    >>> f = np.arange(6.0).reshape(1, 3, 2); w = np.array([[[1.0, 10.0]], [[2.0, 0.0]]])
    >>> weighted_columns(f, w).tolist()
    [[10.0, 32.0, 54.0], [0.0, 4.0, 8.0]]
    """
    if isinstance(feats, np.ndarray) and isinstance(weights, np.ndarray):
        if feats.ndim == 3 and weights.ndim == 3 and feats.shape[0] == 1 and weights.shape[1] == 1:
            return weights[:, 0, :] @ feats[0].T
        if feats.ndim == 2 and weights.ndim == 1:
            return feats @ weights
    return (feats * weights).sum(axis=-1)


class Calibration(Model):
    """A Bayesian calibration curve ``P(y = 1 | score)`` fitted to the vetted labels.

    Parameters
    ----------
    curve : {"logistic", "beta", "monotone"}
        The family of the curve (see the module docs). ``"beta"`` needs scores in
        [0, 1].
    transform : {"auto", "logit", "standardize", "logodds"}
        The score feature ``z``. ``"auto"``: ``logit`` for scores in [0, 1], else
        ``standardize`` -- also for probabilities squeezed into a narrow band away from 0
        and 1 (:func:`bayeval.core.data.squeezed_range`), which strongly regularized
        models give and which are then rarely calibrated (``benchmarks/results/squeezed.md``;
        ``bayeval.fit``'s default weighs this reading against the logit's by the vetted
        labels, since weak calibrated models squeeze theirs too). ``"logodds"``: the scores *are* log-odds (a logistic model's
        decision function, a boosted model's raw output): ``z = s`` with the prior
        centred on "calibrated", as for probabilities. Say so when you know it: on rare
        positives the difference is large (the standardized prior cannot know that a
        log-odds of -10 means one positive in 20,000).
    categories : {"auto", True, False}
        Partially pool the curve across the data's categories: category ``c`` has the
        log-odds ``alpha_c + exp(beta_c) * eta(s)``, with ``alpha_c ~ Normal(0, tau_a)``,
        ``beta_c ~ Normal(0, tau_b)``, ``tau_a ~ HalfNormal(1)``, ``tau_b ~
        HalfNormal(0.5)`` (a shift and a stretch of the shared curve, shrunk to it when
        the categories agree). ``"auto"``: when the data has categories.
    intercept_sd : float or None
        The scale of the normal prior of the intercept (``a``; ``c`` of the Beta curve).
        ``None`` (default): 1 on the "calibrated" scales (probabilities, log-odds), 1.5 on
        standardized scores (module docs). A wider prior lets the labels move the curve
        off "calibrated" further, for a classifier that is under- or over-confident
        throughout.
    slope_sd : float
        The scale of the normal prior of ``log b`` (and of ``log a``, ``log b`` of the
        Beta curve); default 1.
    asymptotes : bool
        Flat ends: ``P(y = 1 | s) = lo + (hi - lo) * expit(eta)``, with the floor ``lo ~
        Beta(1, 3)`` and the ceiling ``hi = lo + (1 - lo) * u``, ``u ~ Beta(3, 1)`` -- for classifiers whose most extreme scores are no surer
        than the ones before them (an over-fitted model's raw probabilities). Not with
        ``curve="beta"``. Default False.
    saturated : {"apart", "merged"}
        Exact 0s and 1s in the probability feature: ``"apart"`` (default) places them one
        step of the scores' grid beyond the most extreme other score (module docs);
        ``"merged"`` moves them to the most extreme other score before the clip at 1e-7,
        so that a 1.0 and a 1 - 1e-8 share one value (fits saved before this option
        existed reload with it). Scores strictly inside (1e-7, 1 - 1e-7) are mapped alike.
    penalty : {"none", "jeffreys", "auto"}
        ``"jeffreys"`` multiplies the prior by Jeffreys' prior of the curve's intercept and
        slope over the vetted items (Firth's penalty; the monotone curve's segment slopes
        are held as they are in each draw): where every vetted positive lies above every
        vetted negative the likelihood favours an ever steeper curve, which says every
        item above the boundary is positive, and only the prior holds it; the penalty
        keeps the curve as steep as the labels support. ``"auto"``: Jeffreys' where the
        vetted labels are separable by the score (:meth:`penalty_for`), else none. Not
        with ``curve="beta"`` nor with categories pooled. Default ``"none"``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import EvalData
    >>> from bayeval.models import Calibration
    >>> rng = np.random.default_rng(0)
    >>> p = rng.beta(1, 3, 500)
    >>> y = np.full(500, np.nan); y[:40] = rng.random(40) < p[:40]
    >>> post = Calibration("logistic").fit(EvalData(p, y), random_seed=0)
    >>> post.sampling.sampler
    'importance'
    >>> float(post.metric("average_precision").mean()) > 0.3
    True
    """

    target_accept = 0.95

    def __init__(self, curve: str = "logistic", *, transform: str = "auto", categories="auto",
                 intercept_sd: float | None = INTERCEPT_SD, slope_sd: float = SLOPE_SD, asymptotes: bool = False,
                 saturated: str = "apart", penalty: str = "none"):
        self.curve = V.check_choice(curve, "curve", CURVES)
        self.transform = V.check_choice(transform, "transform", ("auto", "logit", "standardize", "logodds"))
        if categories not in ("auto", True, False):
            raise ValueError(f"`categories` must be 'auto', True or False, got {categories!r}.")
        self.categories = categories
        self.intercept_sd = None if intercept_sd is None else V.as_real_in(
            intercept_sd, "intercept_sd", lo=0.0, hi=np.inf, lo_open=True, hi_open=True,
            hint=" Leave it out (None) for the default: 1 for probabilities and log-odds, 1.5 for other scores.")
        self.slope_sd = V.as_real_in(slope_sd, "slope_sd", lo=0.0, hi=np.inf, lo_open=True, hi_open=True)
        if asymptotes not in (True, False):
            raise TypeError(f"`asymptotes` must be True or False, got {asymptotes!r}.")
        if asymptotes and self.curve == "beta":
            raise ValueError("asymptotes=True needs curve='logistic' or 'monotone', not 'beta'.")
        self.asymptotes = bool(asymptotes)
        self.saturated = V.check_choice(saturated, "saturated", SATURATED)
        self.penalty = V.check_choice(penalty, "penalty", PENALTIES)
        if self.penalty != "none" and self.curve == "beta":
            raise ValueError(f"penalty={penalty!r} needs curve='logistic' or 'monotone', not 'beta'.")

    def __repr__(self) -> str:
        extra = "" if self.categories == "auto" else f", categories={self.categories!r}"
        for name, default in (("intercept_sd", INTERCEPT_SD), ("slope_sd", SLOPE_SD)):
            if getattr(self, name) != default:
                extra += f", {name}={getattr(self, name)!r}"
        if self.asymptotes:
            extra += ", asymptotes=True"
        if getattr(self, "saturated", "apart") != "apart":
            extra += f", saturated={self.saturated!r}"
        if getattr(self, "penalty", "none") != "none":
            extra += f", penalty={self.penalty!r}"
        return f"Calibration(curve={self.curve!r}, transform={self.transform!r}{extra})"

    def _n_groups(self, data: EvalData) -> int:
        """Number of categories pooled over (0: one curve for all items)."""
        if self.categories is False or (self.categories == "auto" and not data.has_categories):
            return 0
        if not data.has_categories:
            raise ValueError("categories=True needs an EvalData with categories=...; or use categories='auto'.")
        return int(data.category_names.size)

    def caveat_few_positives(self, data) -> str:
        """What a handful of vetted positives leaves to this curve's prior, for
        :func:`bayeval.core.data.data_caveats`: with ``transform="standardize"`` it does not take
        probabilities as calibrated."""
        return few_positives_caveat(data, scale=self.transform)

    @property
    def name(self) -> str:
        """A short name for tables: ``calibration/<curve>`` (``/standardized`` when forced)."""
        suffix = {"standardize": "/standardized", "logodds": "/logodds"}.get(self.transform, "")
        flat = "-flat" if getattr(self, "asymptotes", False) else ""
        return f"calibration/{self.curve}{flat}{suffix}"

    # ------------------------------------------------------------- features

    def _scale(self, scores: np.ndarray) -> str:
        in_unit = scores.min() >= 0 and scores.max() <= 1
        t = self.transform
        if t == "auto":  # squeezed probabilities are rarely calibrated: read them as a plain score
            t = "logit" if in_unit and squeezed_range(scores) is None else "standardize"
        if (t == "logit" or self.curve == "beta") and not in_unit:
            raise ValueError(
                f"{self!r} needs scores in [0, 1] (probabilities); got scores from {scores.min():g} to "
                f"{scores.max():g}. Use Calibration('logistic') or Calibration('monotone') with "
                "transform='standardize' for margins or log-odds."
            )
        if t == "logodds" and in_unit and not is_said(LOGODDS_ON_PROBABILITIES):  # said in a card's words
            from ..core._diagnostics import user_stacklevel

            warnings.warn(
                f"transform='logodds' reads the scores as log-odds, but every score lies in [0, 1] (from "
                f"{scores.min():g} to {scores.max():g}): these look like probabilities. If they are, use "
                "transform='logit' (or 'auto'), which reads them as probabilities.",
                UserWarning, stacklevel=user_stacklevel())
        return t

    def features(self, data: EvalData) -> tuple[np.ndarray, dict]:
        """Per-item features of the curve ``(n_items, n_features)`` and what they rest on.

        The second value holds the score feature's definition: ``scale`` (``"logit"``
        or ``"standardize"``), the standardization ``center``/``sd``, the logit map's
        ``clip`` bounds and the feature values of exact 0s and 1s (``ends``), and the monotone
        curve's ``knots``; :meth:`CalibrationPosterior.curve`
        reuses it for new scores.
        """
        s = data.scores
        scale = self._scale(s)
        if scale == "logit":
            with warnings.catch_warnings():
                # the score mixtures' warning about exact 0s and 1s is for a density; the curve
                # gives them feature values of their own (saturated="apart")
                warnings.filterwarnings("ignore", message=".*exactly 0 or 1.*")
                tr = make_transform("logit", "real", s)
            if getattr(self, "saturated", "apart") == "merged":  # the map of fits saved before
                clip = (max(tr.lo, _P_CLIP), min(tr.hi, 1.0 - _P_CLIP))
                info = {"scale": "logit", "center": 0.0, "sd": 1.0, "clip": clip}
            else:
                clip = (max(tr.lo, _P_CLIP), min(tr.hi, 1.0 - _P_CLIP))
                info = {"scale": "logit", "center": 0.0, "sd": 1.0, "clip": clip, "ends": _logit_ends(s),
                        "wide": bool(((s <= 0) | (s >= 1)).any())}
        elif scale == "logodds":
            info = {"scale": "logodds", "center": 0.0, "sd": 1.0}
        else:
            pi = vetted_prevalence(s, data.vetted, data.labels)
            info = {"scale": "standardize", "center": float(np.quantile(s, 1.0 - pi)), "sd": float(np.std(s)) or 1.0}
        if self.curve == "monotone":
            z = self._z(s, info)
            knots = np.quantile(z, _KNOT_QUANTILES)
            if "ends" in info and ((s <= 0) | (s >= 1)).any() and ((s > 0) & (s < 1)).any():
                # a knot on an exact end (over 1% of the scores are exact 1s, half are exact 0s) moves
                # to the most extreme other score: the ends get a segment of their own
                zi = z[(s > 0) & (s < 1)]
                knots = np.where(knots >= info["ends"][1], zi.max(), np.where(knots <= info["ends"][0], zi.min(), knots))
            info["knots"] = np.unique(knots)
        return self._feats(s, info), info

    @staticmethod
    def _z(s: np.ndarray, info: dict) -> np.ndarray:
        if info["scale"] == "logit":
            c = np.clip(s, *info["clip"])
            z = np.log(c) - np.log1p(-c)
            if "ends" in info:  # exact 0s and 1s beyond every other score (saturated="apart")
                z = np.where(s <= 0.0, info["ends"][0], np.where(s >= 1.0, info["ends"][1], z))
            return z
        if info["scale"] == "logodds":
            return np.clip(s, -_LOGIT_MAX, _LOGIT_MAX)
        return (s - info["center"]) / info["sd"]

    def _feats(self, s: np.ndarray, info: dict) -> np.ndarray:
        if self.curve == "beta":
            c = np.clip(s, *info["clip"])
            log_c, log_1c = np.log(c), np.log1p(-c)
            if "ends" in info:  # log s and log(1 - s) of the probability an exact 0 or 1 stands for
                z, end = self._z(s, info), (s <= 0.0) | (s >= 1.0)
                log_c, log_1c = np.where(end, special.log_expit(z), log_c), np.where(end, special.log_expit(-z), log_1c)
            feats = np.column_stack([log_c, log_1c])
        elif self.curve == "logistic":
            feats = self._z(s, info)[:, None]
        else:  # the part of z (pivot 0) lying in each segment between knots
            edges = np.r_[-np.inf, info["knots"], np.inf]
            lo, hi = edges[:-1], edges[1:]
            feats = np.clip(self._z(s, info)[:, None], lo, hi) - np.clip(0.0, lo, hi)
        return np.ascontiguousarray(feats, dtype=np.float64)

    def _eta_numpy(self, params: dict, feats: np.ndarray, info: dict) -> np.ndarray:
        """The curve's log-odds in numpy (draw axis first in ``params``; see ``_eta``);
        ``info`` is what the features rest on (:meth:`features`)."""
        return _eta(self.curve, params, feats, np.exp)

    def _prior(self, info: dict) -> dict:
        """``(mean, sd)`` of the intercept ``a`` (``c``: the Beta curve's), of ``log b`` and of ``c``."""
        if info["scale"] in ("logit", "logodds"):
            a_mu, a_sd, logb_mu = 0.0, 1.0, 0.0
        else:
            a_mu, a_sd, logb_mu = 0.0, 1.5, float(np.log(2.0))
        a_sd = getattr(self, "intercept_sd", None) or a_sd
        b_sd = getattr(self, "slope_sd", SLOPE_SD)
        return {"a": (a_mu, a_sd), "log_b": (logb_mu, b_sd), "c": (0.0, a_sd)}

    # ---------------------------------------------------------------- build

    def build(self, data: EvalData) -> pm.Model:
        """The PyMC model of the vetted labels given their scores.

        Free variables: the curve's parameters (``a``, ``b`` for the logistic curve;
        ``a``, ``b``, ``c`` for Beta calibration; ``a``, ``b``, ``delta`` for the
        monotone curve). Data containers ``features`` and ``vetted_label`` hold the vetted
        items; the observed variable ``label`` is Bernoulli with log-odds ``eta``.

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval import EvalData
        >>> from bayeval.models import Calibration
        >>> d = EvalData([0.1, 0.4, 0.8, 0.9], [0, np.nan, 1, np.nan])
        >>> sorted(v.name for v in Calibration("beta").build(d).free_RVs)
        ['a', 'b', 'c']
        """
        data = _check_data(data)
        feats, info = self.features(data)
        k = self._n_groups(data)
        codes = data.category_codes[data.vetted] if k else None
        return self._build(feats[data.vetted], data.labels[data.vetted].astype(np.int64), info, k, codes,
                           penalty=self.penalty_for(data))

    def penalty_for(self, data: EvalData) -> str:
        """The penalty this curve fits ``data`` with: ``"none"`` or ``"jeffreys"``.

        ``penalty="auto"`` resolves here: ``"jeffreys"`` where
        :func:`~bayeval.models.penalty.separation` finds the vetted labels separable by the
        score feature (every vetted positive on one side of a threshold, every vetted
        negative on the other), else ``"none"``; always ``"none"`` with categories pooled.

        Examples
        --------
        >>> from bayeval import EvalData
        >>> from bayeval.models import Calibration
        >>> d = EvalData([0.1, 0.2, 0.8, 0.9, 0.5], [0, 0, 1, 1, float("nan")])
        >>> Calibration(penalty="auto").penalty_for(d), Calibration().penalty_for(d)
        ('jeffreys', 'none')
        """
        penalty = getattr(self, "penalty", "none")
        if penalty == "none":
            return "none"
        if self._n_groups(data):
            if penalty == "jeffreys":
                raise ValueError("penalty='jeffreys' is not available with categories pooled; pass "
                                 "categories=False, or penalty='none'.")
            return "none"
        if penalty == "jeffreys":
            return "jeffreys"
        v = self._prepared(data)
        z = self._z(data.scores[data.vetted], v["info"])
        return "jeffreys" if separation(z[:, None], data.labels[data.vetted]) is not None else "none"

    def _build(self, fv: np.ndarray, yv: np.ndarray, info: dict, n_groups: int = 0, codes=None, *,
               penalty: str = "none") -> pm.Model:
        pr = self._prior(info)
        with pm.Model() as model:
            f = pm.Data("features", fv)
            y = pm.Data("vetted_label", yv)
            a_mu = pm.Data("a_mu", pr["a"][0])
            logb_mu = pm.Data("log_b_mu", pr["log_b"][0])
            if self.curve == "beta":
                a = pm.LogNormal("a", mu=0.0, sigma=pr["log_b"][1])
                b = pm.LogNormal("b", mu=0.0, sigma=pr["log_b"][1])
                c = pm.Normal("c", mu=0.0, sigma=pr["c"][1])
                params = {"a": a, "b": b, "c": c}
            else:
                a = pm.Normal("a", mu=a_mu, sigma=pr["a"][1])
                b = pm.LogNormal("b", mu=logb_mu, sigma=pr["log_b"][1])
                params = {"a": a, "b": b}
                if self.curve == "monotone":
                    params["delta"] = pm.Normal("delta", 0.0, DELTA_SD, shape=fv.shape[1])
            eta = _eta(self.curve, params, f, pt.exp)
            if n_groups:
                g = pm.Data("vetted_category", np.asarray(codes, dtype=np.int64))
                tau_a = pm.HalfNormal("tau_a", 1.0)
                tau_b = pm.HalfNormal("tau_b", 0.5)
                z_a = pm.Normal("z_a", 0.0, 1.0, shape=n_groups)
                z_b = pm.Normal("z_b", 0.0, 1.0, shape=n_groups)
                eta = tau_a * z_a[g] + pt.exp(tau_b * z_b[g]) * eta
            if self.asymptotes:
                lo = pm.Beta("lo", *ASYMPTOTE_PRIOR[::-1])
                u = pm.Beta("u_hi", *ASYMPTOTE_PRIOR)
                pm.Bernoulli("label", p=lo + (1.0 - lo) * u * pm.math.sigmoid(eta), observed=y)
            else:
                bernoulli_logit("label", eta, y, info.get("wide", False))
            if penalty == "jeffreys":  # the coefficients of eta = a + b * x: x is the score feature
                x = f[:, 0] if self.curve == "logistic" else (f * pt.exp(params["delta"])[None, :]).sum(axis=1)
                jeffreys_potential("jeffreys", x[:, None], eta)
        return model

    # ------------------------------------------------------------------ fit

    def _check_data(self, data):
        return _check_data(data)

    def _prepared(self, data) -> dict:
        memo = getattr(self, "_memo", None)
        if memo is not None and memo[0] is data:
            return memo[1]
        feats, info = self.features(data)
        n_groups = self._n_groups(data)
        codes = data.category_codes if n_groups else None
        out = {"feats": feats, "info": info, "n_groups": n_groups, "codes": codes}
        self._memo = (data, out)
        return out

    def _structure(self, data) -> tuple:
        v = self._prepared(data)
        pr = self._prior(v["info"])  # the prior scales are constants of the compiled model
        return (self.curve, v["info"]["scale"], v["feats"].shape[1], v["n_groups"], pr["a"][1], pr["log_b"][1],
                getattr(self, "asymptotes", False), v["info"].get("wide", False), self.penalty_for(data))

    def _data_values(self, data) -> dict:
        v = self._prepared(data)
        pr = self._prior(v["info"])
        new = {"features": v["feats"][data.vetted], "vetted_label": data.labels[data.vetted].astype(np.int64),
               "a_mu": pr["a"][0], "log_b_mu": pr["log_b"][0]}
        if v["n_groups"]:
            new["vetted_category"] = v["codes"][data.vetted].astype(np.int64)
        return new

    def _posterior(self, data, idata, *, sampling, random_seed):
        v = self._prepared(data)
        self._memo = None
        return CalibrationPosterior(data, idata, calibration=self, features=v["feats"], info=v["info"],
                                    sampling=sampling, random_seed=random_seed, codes=v["codes"])

    def _log_likelihood(self, post) -> dict:
        return {}  # CalibrationPosterior stores its own (with the vetted items' ids)

    def _convergence(self, post, *, warn: bool) -> dict:
        return post.check(warn=warn)

    @property
    def param_names(self) -> tuple[str, ...]:
        return ("a", "b", "c", "delta", "tau_a", "tau_b", "lo", "u_hi")

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
    ) -> CalibrationPosterior:
        """Sample the curve's posterior; return a :class:`CalibrationPosterior`.

        Parameters
        ----------
        data : EvalData
        draws, tune : int
            Posterior draws per chain (``tune`` only for NUTS).
        chains : int, optional
            Default 2.
        cores : int, optional
            Parallel NUTS chains.
        random_seed : int, numpy Generator or SeedSequence, optional
            Seeds the sampler and the label draws: the same seed gives the same draws.
        progressbar : bool, default True
            One bar on stderr for a fit that runs more than about 2 s (none for a short
            one, none inside a stack or a study that shows its own).
        sampler : {"auto", "importance", "smc", "pymc", "pymc-numba", "nutpie", "numpyro", "blackjax"}
            ``"auto"``: importance sampling from the posterior mode (exact up to Monte
            Carlo error, a fraction of a second), falling back to NUTS when its Pareto
            k exceeds 0.7.
            ``"smc"``: PyMC's sequential Monte Carlo, each chain an independent run of
            ``draws`` particles tempered from the prior (``tune`` and the NUTS settings
            do not apply): separated modes get their posterior weight, but the
            particles can come out less spread than the posterior (measured on
            ``AnnotatorError``); compare with NUTS before relying on it.
        warn : bool
            Warn when the vetted labels hold no positive or no negative (the curve then
            rests on its prior) or the sampler's diagnostics are bad.
        **sample_kwargs
            NUTS settings: ``target_accept`` (default 0.95), ``init``, ``max_treedepth``.
        """
        return super().fit(data, draws=draws, tune=tune, chains=chains, cores=cores, random_seed=random_seed,
                           progressbar=progressbar, sampler=sampler, warn=warn, **sample_kwargs)


def curve_summary(post, scores, hdi_prob: float, n_grid: int, category=None) -> xr.Dataset:
    from ..core.summary import hdi

    s = post.data.scores
    grid = np.linspace(s.min(), s.max(), V.as_positive_int(n_grid, "n_grid", minimum=2)) if scores is None \
        else V.as_1d_float(scores, "scores")
    p = post.curve_draws(grid) if category is None else post.curve_draws(grid, category=category)
    band = hdi(p, hdi_prob, axis=0)
    return xr.Dataset(
        {"mean": ("score", p.mean(axis=0)), "lower": ("score", band[:, 0]), "upper": ("score", band[:, 1])},
        coords={"score": grid},
    )


def _check_data(data) -> EvalData:
    if not isinstance(data, EvalData):
        raise TypeError(
            f"`data` must be an EvalData, got {type(data).__name__}. Build one with bayeval.EvalData(scores, labels)."
        )
    if data.n_items < 2:
        raise ValueError(f"A calibration model needs at least 2 items, got {data.n_items}.")
    return data


class CalibrationPosterior(Posterior):
    """Posterior of a :class:`Calibration` fit.

    Everything of :class:`bayeval.Posterior` applies. In addition: :meth:`curve` (the
    calibration curve with its band), :meth:`label_loglik` (the vetted labels'
    pointwise log-likelihood, also stored in ``idata.log_likelihood`` so that
    ``az.loo(post.idata)`` works), :meth:`check`, and ``sampling`` (how it was sampled).

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import EvalData
    >>> from bayeval.models import Calibration
    >>> rng = np.random.default_rng(1)
    >>> q = rng.beta(1, 3, 300); y = np.full(300, np.nan); y[:40] = rng.random(40) < q[:40]
    >>> post = Calibration("monotone").fit(EvalData(q, y), random_seed=0, draws=300)
    >>> post.idata.log_likelihood["label"].shape
    (2, 300, 40)
    >>> c = post.curve(n_grid=5)
    >>> bool((c["lower"] <= c["mean"]).all() and (c["mean"] <= c["upper"]).all())
    True
    """

    has_curves = True

    def report_sections(self) -> tuple[str, ...]:
        """The report shows the calibration curve (see :meth:`bayeval.Posterior.report_sections`)."""
        return ("calibration",)

    def check_convergence(self, *, warn: bool = True) -> dict:
        """:meth:`check`."""
        return self.check(warn=warn)

    def __init__(self, data, idata, *, calibration: Calibration, features, info, sampling: SamplingInfo,
                 random_seed=None, codes=None):
        self.calibration = calibration
        self.features = features
        self.codes = codes  # category code per item when the curve is pooled across categories
        self.info = info
        self.sampling = sampling
        super().__init__(data, idata, self._prob, random_seed=random_seed, model=calibration.name)
        if "log_likelihood" not in self.idata.groups():
            ll = self.label_loglik()
            self.idata.add_groups(
                log_likelihood=xr.Dataset(
                    {"label": (("chain", "draw", "vetted_item"), ll)},
                    coords={"chain": np.arange(self.n_chains), "draw": np.arange(self.n_draws),
                            "vetted_item": data.item_ids[data.vetted]},
                )
            )

    def caveat_few_positives(self, data) -> str:
        """What a handful of vetted positives leaves to the fitted curve's prior, for
        :func:`bayeval.core.data.data_caveats`: on standardized scores it did not take
        probabilities as calibrated."""
        return few_positives_caveat(data, scale=self.info.get("scale"))

    def _eta_of(self, params, feats, codes=None) -> np.ndarray:
        """Log-odds ``(n_draws, n_rows)`` for a chunk of parameter draws and feature rows.

        ``codes``: the rows' categories, for a curve pooled across categories (None: the
        shared curve, i.e. a category at the centre of the pooling distribution).
        """
        p = {k: np.asarray(params[k], dtype=np.float64)[:, None] for k in ("a", "b", "c") if k in params}
        for k in ("delta", "u"):  # vector parameters: one value per feature column
            if k in params:
                p[k] = np.asarray(params[k], dtype=np.float64)[:, None, :]
        eta = self.calibration._eta_numpy(p, feats[None], self.info)
        if codes is not None and "z_a" in params:
            shift = np.asarray(params["tau_a"])[:, None] * np.asarray(params["z_a"])[:, codes]
            stretch = np.exp(np.asarray(params["tau_b"])[:, None] * np.asarray(params["z_b"])[:, codes])
            eta = shift + stretch * eta
        return eta

    def _p_of(self, params, feats, codes=None) -> np.ndarray:
        """``P(y = 1)`` ``(n_draws, n_rows)``: the curve's log-odds mapped through its ends."""
        eta = self._eta_of(params, feats, codes)
        p = special.expit(eta, out=eta if eta.flags.owndata and eta.flags.writeable else None)
        if "lo" in params:
            lo = np.asarray(params["lo"], dtype=np.float64)[:, None]
            p = lo + (1.0 - lo) * np.asarray(params["u_hi"], dtype=np.float64)[:, None] * p
        return p

    def _prob(self, params):
        return self._p_of(params, self.features, self.codes)

    def _flat_params(self) -> dict:
        post = self.idata.posterior
        out = {}
        for name in post.data_vars:
            v = post[name].values
            out[name] = v.reshape((-1,) + v.shape[2:])
        return out

    def label_loglik(self) -> np.ndarray:
        """``log p(y_i | s_i, theta)`` of each vetted label, ``(chain, draw, n_vetted)``."""
        fv = self.features[self.data.vetted]
        y = self.data.labels[self.data.vetted]
        codes = None if self.codes is None else self.codes[self.data.vetted]
        params = self._flat_params()
        if "lo" in params:
            p = self._p_of(params, fv, codes)
            ll = np.where(y == 1, np.log(p), np.log1p(-p))
        else:
            eta = self._eta_of(params, fv, codes)
            ll = np.where(y == 1, -np.logaddexp(0.0, -eta), -np.logaddexp(0.0, eta))
        return ll.reshape(self.n_chains, self.n_draws, -1)

    def curve_draws(self, scores, *, category=None) -> np.ndarray:
        """``P(y = 1 | score)`` at ``scores`` for every draw, ``(n_chains * n_draws, n_scores)``.

        ``category``: one of the data's categories, for a curve pooled across them
        (default: the shared curve).
        """
        grid = V.as_1d_float(scores, "scores")
        codes = None
        if category is not None:
            if self.codes is None:
                raise ValueError("This curve is not pooled across categories; leave `category` out.")
            names = list(self.data.category_names)
            if category not in names:
                raise ValueError(f"Unknown category {category!r}; the data's categories are {names}.")
            codes = np.full(grid.size, names.index(category))
        return self._p_of(self._flat_params(), self.calibration._feats(grid, self.info), codes)

    def curve(self, scores=None, *, hdi_prob: float = HDI_PROB, n_grid: int = 200, category=None) -> xr.Dataset:
        """The calibration curve ``P(y = 1 | score)``: posterior mean and HDI per score.

        ``scores`` default: a grid over the pool's score range. ``category``: that
        category's curve (see :meth:`curve_draws`). Returns a Dataset with ``mean``,
        ``lower`` and ``upper`` along dim ``score``.
        """
        return curve_summary(self, scores, hdi_prob, n_grid, category=category)

    def diagnostics(self) -> pd.DataFrame:
        """Per parameter: r_hat, bulk and tail ESS (NUTS), or the importance sampler's ESS
        of the kept draws (:func:`bayeval.core._diagnostics.kept_ess`: the weights' ESS, at
        most the number of draws kept; r_hat is then undefined: the draws are not chains)."""
        if self.sampling.sampler != "importance":
            return super().diagnostics()
        from ..core._diagnostics import kept_ess

        names = list(self.idata.posterior.data_vars)
        ess = kept_ess(self.sampling, self.idata)
        return pd.DataFrame({"r_hat": np.nan, "ess_bulk": ess, "ess_tail": ess},
                            index=pd.Index(names, name="parameter"))

    def check(self, *, warn: bool = True) -> dict:
        """Diagnostics and whether the vetted labels hold both classes; warns when something is off.

        Returns the dict of :func:`bayeval.core._diagnostics.check_convergence` (``max_rhat``,
        ``min_ess_bulk``, ``divergences`` for NUTS; the importance sampler's
        ``pareto_k`` and ``ess``; ``sampler``, ``ok`` and ``messages``), with a message
        added (to ``messages`` and to ``data_messages``, the labels' own problems) when the
        vetted labels hold only one class, or when they run clearly against the score direction
        (:func:`bayeval.core.data.reversed_scores`: the curve rises with the score).
        """
        from ..core._diagnostics import check_convergence, user_stacklevel

        out = check_convergence(self.idata, self.sampling, self.calibration.param_names, warn=False)
        d = self.data
        if d.n_vetted_positive == 0 or d.n_vetted_negative == 0:
            which = "positives" if d.n_vetted_positive == 0 else "negatives"
            out["messages"].insert(0,
                f"no vetted {which} among the {d.n_vetted} vetted labels: the calibration curve rests on its prior. "
                f"Vet a few more items (e.g. bayeval.select) before trusting the interval."
            )
            out["data_messages"] = [out["messages"][0]]
            out["ok"] = False
        reversed_ = reversed_scores_caveat(d)  # positives scoring low: the curve cannot fall with the score
        if reversed_:
            out["messages"].insert(0, reversed_)
            out["data_messages"] = [reversed_, *out.get("data_messages", [])]
            out["ok"] = False
        if warn and out["messages"]:
            warnings.warn("bayeval: " + " ".join(out["messages"]), UserWarning, stacklevel=user_stacklevel())
        return out
