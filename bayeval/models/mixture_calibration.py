"""A calibration curve shaped by the unlabeled scores: a score mixture's components as its basis.

A :class:`~bayeval.models.Calibration` curve learns ``P(y = 1 | score)`` from the
vetted labels alone; the unlabeled scores only say where the items are. A score mixture
(:class:`~bayeval.models.ScoreMixture`) learns the class split from the shape of all
scores, and is confidently wrong when its two families do not fit. This model sits
between them. A mixture of ``K`` normal components (``K`` chosen by BIC, 2 to
``max_components``) is fitted by EM to all scores on the curve's score feature ``z``
(the same ``z`` as :class:`Calibration`: the logit of probabilities, log-odds as they
are, other scores standardized). Each item then has its responsibilities
``g_k(z)``: the probability that it belongs to component ``k``. The curve is

``"split"``
    The components are split into a lower and an upper group where neighbouring
    components are furthest apart (the gap between their means over their pooled
    spread: the density's deepest valley; no label is used). ``f(z)`` is the log-odds
    that an item belongs to the upper group, made non-decreasing in ``z``, and the curve
    is ``logit P(y = 1 | z) = a + b f(z)``: Platt scaling of the mixture's own class
    split, centred on "the split is the class split" (``a ~ Normal(0, 1.5)``,
    ``log b ~ Normal(0, 1)``). Where the scores form separated clusters (a strong
    classifier), ``f`` is steep at the valley, so a few vetted labels pin the curve down
    there -- the information the score mixture takes from the unlabeled scores, without
    its two fixed families; where they do not, ``a`` and ``b`` follow the labels.
``"bumps"``
    ``logit P(y = 1 | z) = a + b z + sum_k g_k(z) u_k``: the logistic curve with a
    bump on each component, so the curve can rise steeply where the score density has
    a valley, and is the logistic curve when ``u = 0``.

For ``"bumps"``, ``a`` and ``b`` have :class:`Calibration`'s priors (centred on
"calibrated" for probabilities and log-odds) and ``u_k ~ Normal(0, 2)``. The vetted labels enter only
through ``P(y | score)``: the model stays valid when the items to vet were chosen by
their scores (the mixture is fitted to all scores, labels aside). The mixture itself is
fixed at its EM fit (with thousands of scores its uncertainty is small next to that of
the curve's parameters); :func:`mixture_check` compares it with the score histogram, and
``fit`` refuses scores it does not follow (``histogram_check``), so that a stack leaves
the candidate out where its split means nothing (saturated or heavily tied scores).

What it measured is in ``docs/models.md`` ("Mixture-shaped calibration") and
``benchmarks/results/semisup_pools_tuning.md`` / ``semisup_pools_heldout.md``.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
from scipy import special, stats

from ..core import _validate as V
from ..core.data import EvalData
from .calibration import SATURATED, Calibration, bernoulli_logit, weighted_columns

__all__ = ["MixtureCalibration", "FORMS", "fit_normal_mixture", "responsibilities", "split_feature", "mixture_check"]

FORMS = ("split", "bumps")
_F_MAX = 25.0  # the split feature f is clipped to [-25, 25] (probabilities beyond 1e-11 say nothing more)
_SPLIT_PRIOR = {"a": (0.0, 1.5), "log_b": (0.0, 1.0)}
_U_SD = 2.0
#: the largest relative departure of a histogram bin from the mixture that ``fit`` accepts
HISTOGRAM_CHECK = 0.5
_EM_MAX_ITEMS = 20_000  # EM on at most this many scores (evenly spaced quantiles beyond)
_EM_ITERS = 300


def fit_normal_mixture(z, max_components: int = 4) -> dict:
    """A one-dimensional normal mixture fitted by EM, the number of components by BIC.

    Deterministic: started from the quantiles of ``z``; components are ordered by their
    means. Returns ``{"weight", "mean", "sd", "k", "bic"}``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.models.mixture_calibration import fit_normal_mixture
    >>> rng = np.random.default_rng(0)
    >>> z = np.r_[rng.normal(-3, 1, 900), rng.normal(3, 1, 100)]
    >>> g = fit_normal_mixture(z, max_components=3)
    >>> g["k"], np.round(g["mean"], 1).tolist()
    (2, [-3.0, 2.8])
    """
    z = np.sort(V.as_1d_float(z, "z"))
    if z.size > _EM_MAX_ITEMS:
        z = np.quantile(z, (np.arange(_EM_MAX_ITEMS) + 0.5) / _EM_MAX_ITEMS)
    max_components = V.as_positive_int(max_components, "max_components", minimum=2)
    floor = max(1e-3, 0.02 * float(np.std(z)))
    best = None
    for k in range(2, max_components + 1):
        w, m, sd, ll = _em(z, k, floor)
        bic = -2 * ll + (3 * k - 1) * np.log(z.size)
        if best is None or bic < best["bic"] - 1e-9:
            best = {"weight": w, "mean": m, "sd": sd, "k": k, "bic": float(bic)}
    return best


_HALF_LOG_2PI = 0.5 * float(np.log(2.0 * np.pi))


def _norm_logpdf(z: np.ndarray, m: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """``log N(z_i | m_k, sd_k)``, ``(n, K)``: scipy's value, without its per-call overhead."""
    u = (z[:, None] - m) / sd
    return -0.5 * u * u - np.log(sd) - _HALF_LOG_2PI


def _em(z: np.ndarray, k: int, floor: float):
    edges = np.quantile(z, np.linspace(0, 1, k + 1))
    m = 0.5 * (edges[:-1] + edges[1:])
    sd = np.maximum(np.diff(edges) / 2, floor)
    w = np.full(k, 1.0 / k)
    prev = -np.inf
    for _ in range(_EM_ITERS):
        lp = np.log(w) + _norm_logpdf(z, m, sd)
        top = lp.max(axis=1, keepdims=True)
        g = np.exp(lp - top)
        total = g.sum(axis=1, keepdims=True)
        ll = float((top[:, 0] + np.log(total[:, 0])).sum())
        g /= total
        nk = g.sum(axis=0) + 1e-12
        w = np.maximum(nk / z.size, 1e-8)
        m = (g * z[:, None]).sum(axis=0) / nk
        sd = np.maximum(np.sqrt((g * (z[:, None] - m) ** 2).sum(axis=0) / nk), floor)
        if ll - prev < 1e-8 * abs(ll):
            break
        prev = ll
    order = np.argsort(m)
    return w[order] / w.sum(), m[order], sd[order], ll


def responsibilities(z, mixture: dict) -> np.ndarray:
    """``g_k(z)``: the probability that each score belongs to each component, ``(n, K)``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.models.mixture_calibration import responsibilities
    >>> mix = {"weight": np.array([0.5, 0.5]), "mean": np.array([-2.0, 2.0]), "sd": np.array([1.0, 1.0])}
    >>> np.round(responsibilities([-0.5, 0.0, 0.5], mix), 3)[:, 1].tolist()  # expit(4 z)
    [0.119, 0.5, 0.881]
    """
    z = np.asarray(z, dtype=np.float64)
    lp = np.log(mixture["weight"]) + stats.norm.logpdf(z[:, None], mixture["mean"], mixture["sd"])
    return np.exp(lp - special.logsumexp(lp, axis=1, keepdims=True))


def mixture_check(data: EvalData, model: MixtureCalibration | None = None, n_bins: int | None = None) -> dict:
    """Does the fitted score mixture follow the score histogram?

    Bins the score feature ``z`` at the mixture's quantiles (equal expected counts;
    ``n_bins`` default: one bin per 50 items, 5 to 30, so that a bin's count is not
    noise) and
    returns the chi-square statistic, its degrees of freedom, the p-value, the
    largest relative departure of a bin (``max_rel_dev``) and that bin's ratio of observed
    to expected items (``worst_ratio``: below 1 for a deficit). With thousands of scores any parametric
    mixture is rejected by the p-value; ``max_rel_dev`` (a bin holding twice or half
    the items the mixture expects) says whether the departure matters.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import EvalData
    >>> from bayeval.models.mixture_calibration import mixture_check
    >>> rng = np.random.default_rng(1)
    >>> s = np.r_[rng.normal(-3, 1, 900), rng.normal(3, 1, 100)]
    >>> mixture_check(EvalData(s))["p_value"] > 0.01
    True
    """
    model = MixtureCalibration() if model is None else model
    _, info = model.features(data)
    return _departure(model._z(data.scores, info), info["mixture"], n_bins)


def _departure(z: np.ndarray, mix: dict, n_bins: int | None = None) -> dict:
    n_bins = int(np.clip(z.size // 50, 5, 30)) if n_bins is None else V.as_positive_int(n_bins, "n_bins", minimum=2)
    grid = np.linspace(z.min() - 1, z.max() + 1, 4001)
    cdf = (mix["weight"] * stats.norm.cdf(grid[:, None], mix["mean"], mix["sd"])).sum(axis=1)
    cuts = np.interp((np.arange(1, n_bins)) / n_bins, cdf, grid)
    counts = np.bincount(np.searchsorted(cuts, z), minlength=n_bins)
    expected = z.size / n_bins
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    dof = n_bins - 1 - (3 * mix["k"] - 1)
    ratio = counts / expected
    worst = int(np.argmax(np.abs(ratio - 1)))
    return {"chi2": chi2, "dof": dof, "p_value": float(stats.chi2.sf(chi2, max(dof, 1))),
            "max_rel_dev": float(abs(ratio[worst] - 1)), "worst_ratio": float(ratio[worst]), "k": int(mix["k"])}


class MixtureCalibration(Calibration):
    """A calibration curve whose basis is a normal mixture fitted to all scores (module docs).

    Parameters
    ----------
    form : {"split", "bumps"}
        ``"split"``: Platt scaling of the mixture's split of the scores into two groups;
        ``"bumps"``: the logistic curve plus a bump per component.
    transform : {"auto", "logit", "standardize", "logodds"}
        The score feature, as for :class:`Calibration`.
    max_components : int
        The most mixture components BIC may choose (at least 2).
    histogram_check : float or None
        ``fit`` refuses (``ValueError``) data whose score histogram the mixture does not
        follow: a bin of :func:`mixture_check` holding more than ``1 + histogram_check``
        times, or less than ``1 - histogram_check`` times, the items the mixture expects
        (default 0.5). In a :func:`bayeval.fit` stack the candidate is then left out
        (weight 0). ``None``: no check.
    saturated : {"apart", "merged"}
        How exact 0s and 1s and probabilities within 1e-7 of them enter the score
        feature, as for :class:`Calibration`.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import EvalData
    >>> from bayeval.models import MixtureCalibration
    >>> rng = np.random.default_rng(0)
    >>> y = rng.random(600) < 0.2
    >>> s = np.where(y, rng.normal(3, 1, 600), rng.normal(-3, 1, 600))
    >>> lab = np.full(600, np.nan); lab[:30] = y[:30]
    >>> post = MixtureCalibration().fit(EvalData(s, lab), random_seed=0, draws=300)
    >>> share = post.metric(lambda labels, scores: labels.mean(axis=1))  # the share of positives in each draw
    >>> bool(abs(float(share.mean()) - y.mean()) < 0.03)
    True
    """

    def __init__(self, form: str = "split", *, transform: str = "auto", max_components: int = 4,
                 histogram_check: float | None = HISTOGRAM_CHECK, saturated: str = "apart"):
        self.form = V.check_choice(form, "form", FORMS)
        self.transform = V.check_choice(transform, "transform", ("auto", "logit", "standardize", "logodds"))
        self.max_components = V.as_positive_int(max_components, "max_components", minimum=2)
        if histogram_check is not None and not (isinstance(histogram_check, int | float) and histogram_check > 0):
            raise ValueError(f"`histogram_check` must be a positive number or None, got {histogram_check!r}.")
        self.histogram_check = histogram_check
        self.saturated = V.check_choice(saturated, "saturated", SATURATED)
        self.curve = "mixture"
        self.categories = False

    def __repr__(self) -> str:
        extra = "" if self.histogram_check == HISTOGRAM_CHECK else f", histogram_check={self.histogram_check!r}"
        if getattr(self, "saturated", "apart") != "apart":
            extra += f", saturated={self.saturated!r}"
        return (f"MixtureCalibration(form={self.form!r}, transform={self.transform!r}, "
                f"max_components={self.max_components}{extra})")

    @property
    def name(self) -> str:
        """``calibration/mixture-<form>`` (``/standardized`` or ``/logodds`` when forced)."""
        suffix = {"standardize": "/standardized", "logodds": "/logodds"}.get(self.transform, "")
        return f"calibration/mixture-{self.form}{suffix}"

    def _check_data(self, data):
        data = super()._check_data(data)
        if self.histogram_check is not None:
            info = self._prepared(data)["info"]
            chk = _departure(self._z(data.scores, info), info["mixture"])
            if chk["max_rel_dev"] > self.histogram_check:
                raise ValueError(
                    f"{self.name}: the {chk['k']}-component normal mixture does not follow the score histogram "
                    f"(its worst bin holds {chk['worst_ratio']:.2f} times the items it expects there; the check allows "
                    f"{1 - self.histogram_check:.2f} to {1 + self.histogram_check:.2f} times): its split of the scores "
                    "cannot be trusted. Use the default bayeval.fit, or MixtureCalibration(histogram_check=None) to "
                    "fit it anyway."
                )
        return data

    @property
    def param_names(self) -> tuple[str, ...]:
        return ("a", "b", "u") if self.form == "bumps" else ("a", "b")

    def features(self, data: EvalData) -> tuple[np.ndarray, dict]:
        """Per-item features and what they rest on (as :meth:`Calibration.features`, plus
        the fitted ``mixture`` and, for ``"split"``, the ``split`` feature's grid):
        ``"split"``: ``(n_items, 1)``, the upper group's log-odds ``f``; ``"bumps"``:
        ``(n_items, 1 + K)``, the score feature ``z`` and the responsibilities."""
        return super().features(data)

    def _feats(self, s: np.ndarray, info: dict) -> np.ndarray:
        z = self._z(np.asarray(s, dtype=np.float64), info)
        if "mixture" not in info:  # first called by features() on all the data's scores
            info["mixture"] = fit_normal_mixture(z, self.max_components)
            if self.form == "split":
                info["split"] = split_feature(z, info["mixture"])
        if self.form == "split":
            grid, f = info["split"]["grid"], info["split"]["f"]
            return np.ascontiguousarray(np.interp(z, grid, f)[:, None])
        return np.ascontiguousarray(np.column_stack([z, responsibilities(z, info["mixture"])]))

    def _structure(self, data) -> tuple:
        return (self.form, *super()._structure(data))

    def _prior(self, info: dict) -> dict:
        return _SPLIT_PRIOR if self.form == "split" else super()._prior(info)

    def _build(self, fv: np.ndarray, yv: np.ndarray, info: dict, n_groups: int = 0, codes=None, *,
               penalty: str = "none") -> pm.Model:  # (no penalty option: always "none")
        pr = self._prior(info)
        with pm.Model() as model:
            f = pm.Data("features", fv)
            y = pm.Data("vetted_label", yv)
            a_mu = pm.Data("a_mu", pr["a"][0])
            logb_mu = pm.Data("log_b_mu", pr["log_b"][0])
            p = {"a": pm.Normal("a", mu=a_mu, sigma=pr["a"][1]),
                 "b": pm.LogNormal("b", mu=logb_mu, sigma=pr["log_b"][1])}
            if self.form == "bumps":
                p["u"] = pm.Normal("u", 0.0, _U_SD, shape=fv.shape[1] - 1)
            bernoulli_logit("label", self._eta_any(p, f), y, info.get("wide", False))
        return model

    def _eta_any(self, p: dict, feats):
        """The log-odds, for numpy (draw axis first) or PyTensor."""
        if self.form == "split":
            return p["a"] + p["b"] * feats[..., 0]
        return p["a"] + p["b"] * feats[..., 0] + weighted_columns(feats[..., 1:], p["u"])

    def _eta_numpy(self, params: dict, feats: np.ndarray, info: dict) -> np.ndarray:
        return self._eta_any(params, feats)


def split_feature(z, mixture: dict, n_grid: int = 4001) -> dict:
    """The ``"split"`` form's feature: the log-odds of the upper group, on a grid.

    The cut falls between the neighbouring components (ordered by mean) whose means are
    furthest apart relative to their pooled spread. The log-odds of the upper group is
    made non-decreasing over the grid (a running maximum) and clipped to +-25. Returns
    ``{"grid", "f", "cut"}`` (``cut``: the index of the first upper component).

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.models.mixture_calibration import split_feature
    >>> mix = {"weight": np.array([0.6, 0.3, 0.1]), "mean": np.array([-2.0, -1.0, 3.0]), "sd": np.array([1.0, 1.0, 1.0])}
    >>> sf = split_feature(np.array([-4.0, 4.0]), mix)
    >>> sf["cut"], bool(np.all(np.diff(sf["f"]) >= 0))
    (2, True)
    """
    z = np.asarray(z, dtype=np.float64)
    m, sd, w = mixture["mean"], mixture["sd"], mixture["weight"]
    gap = np.diff(m) / np.sqrt(sd[1:] ** 2 + sd[:-1] ** 2)
    cut = int(np.argmax(gap)) + 1
    pad = float(np.std(z)) or 1.0
    grid = np.linspace(z.min() - pad, z.max() + pad, n_grid)
    lp = np.log(w) + stats.norm.logpdf(grid[:, None], m, sd)
    f = special.logsumexp(lp[:, cut:], axis=1) - special.logsumexp(lp[:, :cut], axis=1)
    f = np.clip(np.maximum.accumulate(f), -_F_MAX, _F_MAX)
    return {"grid": grid, "f": f, "cut": cut}
