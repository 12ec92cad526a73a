"""The estimators and intervals of ACIS: the per-batch Horvitz-Thompson (or
model-assisted) ratio estimate with its delta-method variance and zero-variance floor,
the rest stratum's calibration (a logistic regression on the scores) and its count of
hidden positives, the six intervals (``"model"``, ``"jeffreys"``, ``"delta"``,
``"calibrated"``, ``"checked"``, ``"evidence"``) and what each assumes (``INTERVAL_NOTES``).
The reasoning behind each: ``docs/acis.md``."""

from __future__ import annotations

import math

import numpy as np
from scipy.special import pdtr
from scipy.stats import gamma, norm, poisson

from ._design import CERTAIN

#: Bounds of the prior strength ``a`` of the rest stratum's rate multiplier (see
#: ``fit_rest_model``): the calibration's extrapolation to the rest is never trusted more
#: than a Gamma(a, a) prior with this ``a`` says (coefficient of variation 1/sqrt(a)).
REST_THETA_PRIOR = 1.0
#: Draws of the rest count's predictive distribution (its quantiles give the interval).
REST_DRAWS = 1000
#: Prior of the rest calibration (logistic regression of the labels on the logit of
#: probability scores): intercept ~ N(0, 2^2), slope ~ N(1, 2^2), i.e. "the scores are
#: roughly calibrated". For other scores (standardized): both ~ N(0, 10^2).
PLATT_PRIOR_PROB = (np.array([0.0, 1.0]), np.array([2.0, 2.0]))
PLATT_PRIOR_OTHER = (np.array([0.0, 0.0]), np.array([10.0, 10.0]))
#: Study switch for the rest calibration's prior on probability scores (issue 38, the prior
#: study: ``benchmarks/acis.py --intervals --rest-prior``, ``benchmarks/results/acis_prior_*.md``).
#: ``"default"``: ``PLATT_PRIOR_PROB`` everywhere. ``"vague"``: ``PLATT_PRIOR_VAGUE`` everywhere
#: (design, count, intervals, tail check). ``"split"``: the estimate's rest count (and its gate)
#: from the fit under ``PLATT_PRIOR_VAGUE``; the design, the intervals and the tail check keep
#: ``PLATT_PRIOR_PROB``. ``"t3"``: independent Student-t priors (3 degrees of freedom, the
#: same centres and scales as ``PLATT_PRIOR_PROB``) everywhere. ``"vague_fb"``: ``"vague"``,
#: except that where the vague fit does not pin the estimate's rest count down (its ``sdlog``
#: above the gate) the count of the ``PLATT_PRIOR_PROB`` fit is used if that one is pinned
#: down. ``"vague_nogate"``: ``"vague"``, with the model's count in the estimate whatever its
#: ``sdlog`` (no gate). The last two were measured in development runs only
#: (``benchmarks/results/acis_prior_dev.md``). Not a public setting.
REST_PRIOR = "default"
PLATT_PRIOR_VAGUE = (np.array([0.0, 1.0]), np.array([10.0, 10.0]))
PLATT_PRIOR_T3 = (np.array([0.0, 1.0]), np.array([2.0, 2.0]), 3.0)
#: Whether the calibrated interval's range of the rest count also covers the count that the
#: scores imply when read as probabilities (probability scores only; ``calibrated_offsets``).
#: ``benchmarks/acis.py --intervals --fit-only`` turns it off to measure the difference.
CALIBRATED_COVERS_SCORES = True
#: Points of the tail check's ratio posterior mixed into the ``"checked"`` interval's count
#: (quantile midpoints of ``Gamma(x + 1/2, rate=e)``), and draws of the fitted count kept
#: (weighted quantiles of its mixture) to keep that mixture small.
CHECK_THETA_POINTS = 16
#: Share of the labeled items (the highest-scored) that the tail check fits the curve to; the
#: others are the band it checks the curve's extrapolation on (``extrapolation_check``).
CHECK_UPPER = 0.5
#: Whether a tail check that found no positive still widens: its Jeffreys ratio
#: ``Gamma(1/2, rate=e)`` is wide when ``e`` is small (the check had little power to see an
#: excess, so it cannot vouch for the curve). False: such a check changes nothing.
CHECK_EMPTY_WIDENS = True
CHECK_COUNT_POINTS = 64
#: Whether the ``"evidence"`` interval's domain variance is at least its model-anticipated
#: value (``domain_model_variance``).
EVIDENCE_DOMAIN = True
#: Whether the ``"evidence"`` interval widens the rest count only after the tail check found
#: an excess (``tail_excess``); False: after every check, as the checked interval does.
EVIDENCE_GATE = True
#: Whether ``domain_model_variance`` multiplies the curve's odds by the tail check's ratio
#: after an excess; False: the curve's own probabilities.
EVIDENCE_DOMAIN_RATIO = True


#: What each interval assumes about the rest stratum's unknown count of positives, and
#: why ``"jeffreys"`` is the default (``ACISResult.interval_reason``, ``ACISResult.summary``).
INTERVAL_NOTES = {
    "jeffreys": (
        "design-only: the rest's hidden positives bounded by the rest draws alone (Jeffreys), "
        "whatever the scores' calibration; the default, being the only interval that covered at "
        "least 90% in every pool and budget of benchmarks/results/acis_intervals.md; wide while few "
        "rest items are labeled"
    ),
    "calibrated": (
        "the rest's hidden positives from the calibration fitted on every label (its exact "
        "posterior and Bernoulli noise) and, for probability scores, also the count the scores "
        "imply read as probabilities; design-only when the rest draws contradict the calibration; "
        "trusts that the low tail follows one of those two curves"
    ),
    "checked": (
        "the calibrated interval, its count of the rest's hidden positives also multiplied by how "
        "far the calibration fitted on the upper half of the labels under-predicted the positives "
        "of the lower half (the tail check); trusts that the tail errs below the labels no more "
        "than it did one step down"
    ),
    "evidence": (
        "chosen by the run's labels: the calibrated interval when the tail check found no more "
        "positives below the labels' upper half than the curve fitted there expected, the checked "
        "interval when it found more; the domain's variance at least the one the curve (its odds "
        "times that ratio) anticipates for the items rarely drawn"
    ),
    "model": (
        "the rest's hidden positives from the calibration with a rate multiplier updated by the "
        "rest draws; trusts the logistic curve's low tail"
    ),
    "delta": "normal interval from the delta-method variance plus the model count's variance",
    "posterior": "central interval of the score mixture's posterior draws of F (not a normal interval)",
}


def ratio_estimate(
    *,
    alpha: float,
    a_fixed: float,
    v_fixed: float,
    y: np.ndarray,
    yhat: np.ndarray,
    d: np.ndarray,
    pi: np.ndarray,
    typical: dict,
    m: np.ndarray | None = None,
) -> tuple[float, float, float]:
    """One iteration's F estimate, delta-method variance and zero-variance floor.

    ``a_fixed``/``v_fixed`` are the exactly known parts (labeled stratum) of the
    numerator (true positives) and denominator; ``y``, ``yhat``, ``d`` (weights) and
    ``pi`` (inclusion probabilities, for the finite-population factor) describe the
    sampled part. ``typical`` (a dict, or a callable returning one) maps each kind of
    draw -- ``"tp"``, ``"fp"``, ``"fn"`` -- to ``(weight, finite-population factor)``
    of a typical draw of that kind, or None where no such item can be drawn; it sets
    the floor for kinds never drawn. The floor applies where every residual is the same
    and where the random draws (``pi < 1``) hold a single draw of nonzero weight in the ratio
    (the others true negatives): the paper's Bessel-type factor over those draws is 0 there,
    and the design's own, ``1 - sum d^2 / (sum d)^2`` over every random draw, is used.
    Returns ``(estimate, variance_without_floor, floor)``.
    """
    y = y.astype(np.float64)
    yh = yhat.astype(np.float64)
    a = y * yh
    v = alpha * yh + (1.0 - alpha) * y
    v_weight = v  # importance weights w = d * v of the draws (for the Bessel-type factor)
    if m is not None:  # difference estimator: the sample estimates the model's residuals
        a = a - m * yh
        v = (1.0 - alpha) * (y - m)
    num = a_fixed + float(np.dot(d, a))
    den = v_fixed + float(np.dot(d, v))
    if den <= 0:
        return math.nan, math.nan, math.nan
    g = num / den
    if m is not None:
        g = min(max(g, 0.0), 1.0)
    rand = pi < CERTAIN
    # Delta-method variance of the ratio (eq. 6 with a Hajek finite-population factor).
    var, degenerate, single = 0.0, True, False
    if rand.sum() >= 2:
        # The paper's Bessel-type factor, from the importance weights of the draws in the ratio
        # (w = d * v; a true negative weighs 0). With a single draw of nonzero weight it is 0
        # (a weighted variance of one value): the design's own factor over every random draw
        # then, Hajek's n/(n-1) (``1 - 1/n`` for n equal weights), and the floor below on top.
        w = d[rand] * v_weight[rand]
        sw = w.sum()
        c_bessel = 1.0 - float(np.dot(w, w)) / sw**2 if sw > 0 else 0.0
        if c_bessel <= 0 < sw:  # (with no such draw at all, the floor alone, as before)
            single = True
            dw = d[rand]
            c_bessel = 1.0 - float(np.dot(dw, dw)) / float(dw.sum()) ** 2
        if c_bessel > 0:
            r = d[rand] * (a[rand] - g * v[rand])
            f = 1.0 - pi[rand]
            rbar = float(np.dot(f, r) / f.sum()) if f.sum() > 0 else 0.0
            dev = r - rbar
            spread = float(np.max(np.abs(dev))) if dev.size else 0.0
            degenerate = spread <= 1e-9 * max(float(np.max(np.abs(r))), 1e-300)
            var = 0.0 if degenerate else float(np.dot(f, dev**2)) / (c_bessel * den**2)
    if not (degenerate or single):
        return g, var, 0.0
    # Zero-variance case (all residuals equal, e.g. no error ever drawn, so G = 1):
    # floor = half a draw (Jeffreys) of every kind of item that was never drawn.
    drawn = {
        "tp": np.any(rand & (yhat == 1) & (y == 1)),
        "fp": np.any(rand & (yhat == 1) & (y == 0)),
        "fn": np.any(rand & (yhat == 0) & (y == 1)),
    }
    residual = {"tp": 1.0 - g, "fp": -alpha * g, "fn": -(1.0 - alpha) * g}
    floor = 0.0
    if callable(typical):  # computed only when needed (it costs a pass over the pool)
        typical = typical()
    for kind, typ in typical.items():
        if typ is None or drawn[kind]:
            continue
        weight, fpc = typ
        floor += 0.5 * fpc * (weight * residual[kind]) ** 2 / den**2
    return g, var, floor


def label_bounds(alpha: float, yhat: np.ndarray, labeled: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    """The lowest and highest F that the pool can have, given the labels bought: every unlabeled
    predicted positive a false positive and every unlabeled predicted negative a false negative,
    or every unlabeled predicted positive a true positive and every unlabeled predicted negative a
    negative. ``labeled``: the labeled items' positions, ``labels`` their labels. Every interval
    may be cut to this range whatever the design and the models (on a large pool it is wide);
    with every item labeled both ends are the pool's F."""
    yh = yhat[labeled].astype(np.int64)
    y = labels.astype(np.int64)
    tp = int(np.sum(y * yh))
    fp, fn = int(yh.sum()) - tp, int(y.sum()) - tp
    n_pred = int(np.count_nonzero(yhat))
    unl_pos = n_pred - int(yh.sum())  # unlabeled predicted positives
    unl_neg = yhat.size - n_pred - (yh.size - int(yh.sum()))  # unlabeled predicted negatives

    def f(tp, fp, fn):
        den = alpha * (tp + fp) + (1.0 - alpha) * (tp + fn)
        return tp / den if den > 0 else math.nan

    return f(tp, fp + unl_pos, fn + unl_neg), f(tp + unl_pos, fp, fn)


def bound_by_labels(est, intervals: dict, variances: dict, lo_s: float, hi_s: float, keep=("domain",)):
    """Cut a run's estimate, intervals and variances to the range ``[lo_s, hi_s]`` that the labels
    leave F (``label_bounds``). An interval is replaced by the range where the range is no wider
    (or the two do not meet): the range holds F for certain; else it is cut to the range. No
    variance exceeds ``((hi_s - lo_s) / 2)^2``, the largest of any distribution on the range.
    ``intervals`` and ``variances`` change in place (``keep``: variances left alone); returns
    the estimate, clipped to the range."""
    if not (math.isfinite(est) and math.isfinite(lo_s) and math.isfinite(hi_s)):
        return est
    for m, (lo, hi) in intervals.items():
        if hi_s - lo_s <= hi - lo or lo > hi_s or hi < lo_s:
            intervals[m] = (lo_s, hi_s)
        else:
            intervals[m] = (max(lo, lo_s), min(hi, hi_s))
    cap = ((hi_s - lo_s) / 2.0) ** 2
    for m, v in variances.items():
        if m not in keep and math.isfinite(v):
            variances[m] = min(v, cap)
    return min(max(est, lo_s), hi_s)


def normal_interval(est: float, var: float, z: float) -> tuple[float, float]:
    if not (math.isfinite(est) and math.isfinite(var)):
        return 0.0, 1.0
    half = z * math.sqrt(max(var, 0.0))
    return max(0.0, est - half), min(1.0, est + half)


def platt_feature(s: np.ndarray) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """Feature and prior of the rest calibration (a logistic regression on the scores).

    Probability scores (all in [0, 1]) enter as their logit (clipped at 1e-9 from 0 and
    1), with a prior centred on "the scores are calibrated"; other scores are
    standardized and get a vague prior (see ``_PLATT_PRIOR_*``).
    """
    if s.min() >= 0.0 and s.max() <= 1.0:
        p = np.clip(s, 1e-9, 1.0 - 1e-9)
        prior = {"vague": PLATT_PRIOR_VAGUE, "vague_fb": PLATT_PRIOR_VAGUE, "vague_nogate": PLATT_PRIOR_VAGUE,
                 "t3": PLATT_PRIOR_T3}.get(
            REST_PRIOR, PLATT_PRIOR_PROB
        )
        return np.log(p) - np.log1p(-p), prior
    sd = float(s.std())
    return (s - float(s.mean())) / (sd if sd > 0 else 1.0), PLATT_PRIOR_OTHER


def split_point_prior():
    """The prior of the estimate's own rest count under the study switch ``REST_PRIOR = "split"``
    (the vague one), else None: the count then comes from the calibration every interval uses."""
    return PLATT_PRIOR_VAGUE if REST_PRIOR == "split" else None


def rest_gate() -> bool:
    """Whether the estimate's rest count is the model's only where its ``sdlog`` passes the
    gate (always, except under the study switch ``REST_PRIOR = "vague_nogate"``)."""
    return REST_PRIOR != "vague_nogate"


def fallback_prior():
    """The prior of the fit whose count the estimate falls back to under the study switch
    ``REST_PRIOR = "vague_fb"`` (the default one), else None."""
    return PLATT_PRIOR_PROB if REST_PRIOR == "vague_fb" else None


def platt_fit(t: np.ndarray, y: np.ndarray, prior) -> tuple[np.ndarray, np.ndarray]:
    """Posterior mode and Laplace covariance of ``logit P(y=1) = b0 + b1 t`` (Newton).

    ``prior`` = (means, standard deviations) of independent normal priors on
    ``(b0, b1)``; with no labels the mode is the prior mean. Selection of the labeled
    items depends on the scores only, so the fit is not distorted by the sampling.
    """
    mean, sd = prior[:2]
    nu = prior[2] if len(prior) > 2 else None  # Student-t priors (the prior study's "t3")
    prec = 1.0 / sd**2
    b = mean.copy()
    y = y.astype(np.float64)

    def log_prior(b):
        return float(prior_log_density(b[None, :], prior)[0])

    def prior_grad_hess(b):
        if nu is None:
            return -prec * (b - mean), prec
        d = b - mean
        q = nu * sd**2 + d**2
        # -d/db log t-density, and its derivative (negative where the density is convex:
        # floored at a small positive value to keep Newton's system positive definite)
        return -(nu + 1.0) * d / q, np.maximum((nu + 1.0) * (q - 2.0 * d**2) / q**2, 1e-6 * prec)

    def log_post(b):
        eta = b[0] + b[1] * t
        # log-likelihood of a logistic regression, overflow-free: y eta - log(1 + e^eta)
        return float(np.dot(y, eta) - np.logaddexp(0.0, eta).sum()) + log_prior(b)

    current = log_post(b)
    for _ in range(100):
        eta = b[0] + b[1] * t
        p = 0.5 * (1.0 + np.tanh(0.5 * eta))  # logistic, overflow-free
        w = p * (1.0 - p)
        g_prior, h_prior = prior_grad_hess(b)
        grad = np.array([np.sum(y - p), np.dot(t, y - p)]) + g_prior
        h = np.array(
            [[w.sum(), np.dot(w, t)], [np.dot(w, t), np.dot(w, t * t)]]
        ) + np.diag(h_prior)
        step = np.linalg.solve(h, grad)
        # Damped Newton: halve the step until the log posterior does not fall (a full
        # step from the prior mean can overshoot far when the labels nearly separate).
        for _ in range(60):
            trial = log_post(b + step)
            if trial >= current - 1e-12 * abs(current):
                break
            step = 0.5 * step
        b, current = b + step, max(trial, current)
        if np.max(np.abs(step)) < 1e-8:
            break
    eta = b[0] + b[1] * t
    p = 0.5 * (1.0 + np.tanh(0.5 * eta))
    w = p * (1.0 - p)
    h = np.array([[w.sum(), np.dot(w, t)], [np.dot(w, t), np.dot(w, t * t)]]) + np.diag(prior_grad_hess(b)[1])
    return b, np.linalg.inv(h)


def prior_log_density(b: np.ndarray, prior) -> np.ndarray:
    """Log density (up to a constant) of the rest calibration's prior at coefficient rows ``b``:
    independent normals ``(means, sds)``, or Student-t ``(means, scales, df)``."""
    mean, sd = prior[:2]
    z2 = ((b - mean) / sd) ** 2
    if len(prior) > 2:
        nu = prior[2]
        return (-0.5 * (nu + 1.0) * np.log1p(z2 / nu)).sum(axis=1)
    return -0.5 * z2.sum(axis=1)


def logistic(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def fit_rest_model(
    t_unl, t_drawn, y_drawn, coef, cov, rng, *, prior=REST_THETA_PRIOR, draws=REST_DRAWS, labeled=None, point=None,
    fallback=None,
):
    """Predictive distribution of the number of positives among the unlabeled rest items.

    Model: a rest item with feature ``t`` (see ``platt_feature``) is positive with
    probability ``theta * logistic(b0 + b1 t)``, independently of the others, so the
    unlabeled rest holds ``R ~ Poisson(theta * C)`` positives, ``C`` the sum of those
    probabilities over its items. The calibration ``(b0, b1)`` has the Laplace
    posterior ``N(coef, cov)`` of ``platt_fit`` (all labels so far); the multiplier
    ``theta`` -- room for the calibration to be wrong in the low scores -- has the
    prior ``Gamma(prior, rate=prior)`` (mean 1) and is updated by the rest items drawn
    so far (``x`` positives found where ``E`` were expected):
    ``theta ~ Gamma(prior + x, rate=prior + E)``. ``R`` is sampled from this mixture
    (``draws`` draws; the unlabeled rest is binned by ``t`` into 256 bins for speed).

    Returns a dict: ``r_model`` (the count at the posterior mode of the calibration,
    times the posterior mean of ``theta``), ``sdlog`` (the standard deviation of
    ``log C`` over the calibration's posterior: how well the labels pin the
    extrapolation down), ``var_r`` (variance of ``R``) and ``r_sorted`` (the sorted
    draws of ``R``, for quantiles).
    """
    counts, edges = np.histogram(t_unl, bins=256)
    keep = counts > 0
    tb = np.histogram(t_unl, bins=edges, weights=t_unl)[0][keep] / counts[keep]
    nb = counts[keep].astype(np.float64)
    try:
        chol = np.linalg.cholesky(cov)
    except np.linalg.LinAlgError:  # pragma: no cover - cov is a prior-regularized inverse
        chol = np.diag(np.sqrt(np.maximum(np.diag(cov), 0.0)))
    b = coef + rng.standard_normal((draws, 2)) @ chol.T
    c_tot = logistic(b[:, :1] + b[:, 1:] * tb) @ nb
    e = logistic(b[:, :1] + b[:, 1:] * t_drawn).sum(axis=1) if t_drawn.size else np.zeros(draws)
    x = float(y_drawn.sum())
    theta = rng.gamma(prior + x, 1.0 / (prior + e))
    r = rng.poisson(theta * c_tot).astype(np.float64)
    c_mode = float(logistic(coef[0] + coef[1] * tb) @ nb)
    e_mode = float(logistic(coef[0] + coef[1] * t_drawn).sum()) if t_drawn.size else 0.0
    sdlog = float(np.std(np.log(np.maximum(c_tot, 1e-300))))
    r_model = c_mode * (prior + x) / (prior + e_mode)
    def count_at(p_coef, p_cov):
        # the count at another fit's mode and its sdlog (the prior study's "split" and
        # "vague_fb"); the intervals below keep ``coef, cov``
        try:
            p_chol = np.linalg.cholesky(p_cov)
        except np.linalg.LinAlgError:  # pragma: no cover
            p_chol = np.diag(np.sqrt(np.maximum(np.diag(p_cov), 0.0)))
        pb = p_coef + rng.standard_normal((draws, 2)) @ p_chol.T
        p_sdlog = float(np.std(np.log(np.maximum(logistic(pb[:, :1] + pb[:, 1:] * tb) @ nb, 1e-300))))
        p_e = float(logistic(p_coef[0] + p_coef[1] * t_drawn).sum()) if t_drawn.size else 0.0
        return float(logistic(p_coef[0] + p_coef[1] * tb) @ nb) * (prior + x) / (prior + p_e), p_sdlog

    if point is not None:
        # the prior study's "split": the estimate's count (and its gate) from another fit
        # ``point = (coef, cov)``
        r_model, sdlog = count_at(*point)
    if fallback is not None and sdlog > fallback[2]:
        # the prior study's "vague_fb": where this fit does not pin the count down, the
        # count of the fit ``fallback = (coef, cov, gate)`` if that one does
        fb_r, fb_sdlog = count_at(fallback[0], fallback[1])
        if fb_sdlog <= fallback[2]:
            r_model, sdlog = fb_r, fb_sdlog
    out = dict(
        r_model=r_model,
        sdlog=sdlog,
        var_r=float(r.var()),
        r_sorted=np.sort(r),
    )
    log_w = None if labeled is None else posterior_log_weights(b, coef, cov, *labeled)
    out.update(calibrated_count(b, tb, nb, log_w))
    # The count if the scores themselves are calibrated (the prior's centre, for probability
    # scores only): the calibrated interval covers it too (see ``calibrated_offsets``).
    prob = labeled is not None and any(labeled[2] is p for p in (PLATT_PRIOR_PROB, PLATT_PRIOR_VAGUE, PLATT_PRIOR_T3))
    out["r_cal_scores"] = float(logistic(tb) @ nb) if prob else math.nan
    # Do the rest items drawn so far agree with the calibration? The chance of finding at
    # least ``x`` positives where its mode expects ``e_mode`` (1 when none was found).
    out["rest_misfit_p"] = float(poisson.sf(x - 1.0, max(e_mode, 1e-300))) if x > 0 else 1.0
    out["rest_expected"] = e_mode
    out["tail_x"], out["tail_e"] = (math.nan, math.nan) if labeled is None else extrapolation_check(*labeled)
    return out


def extrapolation_check(t, y, prior) -> tuple[float, float]:
    """How well the calibration extrapolates to lower scores, measured on the labels.

    The labeled items are split at the middle of their features ``t``: the curve is fitted
    (``platt_fit``, same ``prior``) to the upper half alone and asked how many positives
    the lower half holds. Returns ``(x, e)``: the positives found there and the count the
    fit expects there. Selection depends on the scores and earlier labels only, so
    ``x / e`` estimates how far the fitted curve's extrapolation is off one step below
    its labels (``x`` given ``e`` roughly Poisson with mean ``ratio * e``), the step the
    rest stratum's count takes. ``(nan, nan)`` with fewer than 4 labels or no positive in
    the upper half (nothing to extrapolate from).
    """
    n = t.size
    if n < 4:
        return math.nan, math.nan
    order = np.argsort(-t, kind="stable")
    cut = min(max(math.ceil(CHECK_UPPER * n), 2), n - 1)
    upper, lower = order[:cut], order[cut:]
    if not np.any(y[upper]):
        return math.nan, math.nan
    coef, _ = platt_fit(t[upper], y[upper], prior)
    return float(y[lower].sum()), float(logistic(coef[0] + coef[1] * t[lower]).sum())


def _thin_mixture(c: np.ndarray, w: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``k`` weighted quantile points of a weighted sample ``c`` (sorted), each with weight 1/k."""
    if c.size <= k:
        return c, w
    cum = np.cumsum(w) / w.sum()
    pick = np.searchsorted(cum, (np.arange(k) + 0.5) / k).clip(0, c.size - 1)
    return c[pick], np.full(k, 1.0 / k)


def tail_excess(rest: dict) -> bool:
    """Whether the tail check found more positives than the curve expected (``x > e``, the
    ratio's estimate above 1): the ``"evidence"`` interval's sign that the curve's
    extrapolation fails."""
    x, e = rest.get("tail_x", math.nan), rest.get("tail_e", math.nan)
    return bool(math.isfinite(x) and math.isfinite(e) and e > 0 and x > e)


def ratio_posterior(rest: dict, gated: bool = False) -> tuple[float, float] | None:
    """Shape and rate of the tail check's Jeffreys ratio posterior ``Gamma(x + 1/2, rate=e)``
    (``extrapolation_check``: ``x`` found where ``e`` expected). None when the check could not
    be made, or, with ``CHECK_EMPTY_WIDENS`` off, found no positive (the ``"checked"``
    interval); ``gated=True`` (the ``"evidence"`` interval): None unless it found more than
    expected (``tail_excess``)."""
    x, e = rest.get("tail_x", math.nan), rest.get("tail_e", math.nan)
    if not (math.isfinite(x) and math.isfinite(e) and e > 0) or not (x > 0 or CHECK_EMPTY_WIDENS):
        return None
    if gated and EVIDENCE_GATE and not tail_excess(rest):
        return None
    return x + 0.5, e


def checked_count_range(rest: dict, tail: float, gated: bool = False) -> tuple[float, float] | None:
    """The rest count's ``tail`` and ``1 - tail`` quantiles when the fitted curve's count is
    multiplied by the ratio the tail check measured (``extrapolation_check``; the ratio's
    posterior from ``ratio_posterior``, ``gated`` as there), over the curve's posterior
    draws; the upper end at most the rest's size. None when there is no ratio posterior."""
    post = ratio_posterior(rest, gated)
    draws, w = rest.get("r_cal_draws", np.zeros(0)), rest.get("r_cal_weights")
    if post is None or not draws.size:
        return None
    w = np.full(draws.size, 1.0 / draws.size) if w is None else w
    c, wc = _thin_mixture(draws, w, CHECK_COUNT_POINTS)
    k = CHECK_THETA_POINTS
    theta = gamma.ppf((np.arange(k) + 0.5) / k, post[0], scale=1.0 / max(post[1], 1e-300))
    mix = np.outer(c, theta).ravel()
    mw = np.outer(wc, np.full(k, 1.0 / k)).ravel()
    order = np.argsort(mix)
    mix, mw = mix[order], mw[order]
    size = float(rest.get("size", math.inf))
    return min(count_quantile(mix, tail, mw), size), min(count_quantile(mix, 1.0 - tail, mw), size)


def posterior_log_weights(b, coef, cov, t, y, prior) -> np.ndarray:
    """Log importance weights that turn draws from the Laplace approximation ``N(coef,
    cov)`` into draws from the calibration's exact posterior (the logistic likelihood of
    the labels ``y`` at features ``t`` times the normal ``prior``), truncated above at
    the mean weight times the square root of the number of draws so that no single
    draw rules the mixture. Up to a constant."""
    eta = b[:, :1] + b[:, 1:] * t  # (draws, labels)
    log_post = eta @ y.astype(np.float64) - np.logaddexp(0.0, eta).sum(axis=1)
    log_post += prior_log_density(b, prior)
    d = b - coef
    log_laplace = -0.5 * np.einsum("ij,jk,ik->i", d, np.linalg.inv(cov), d)
    log_w = log_post - log_laplace
    log_w -= log_w.max()
    w = np.exp(log_w)
    cap = w.mean() * math.sqrt(w.size)
    with np.errstate(divide="ignore"):  # a weight that underflows to 0 has log -inf: the draw then weighs 0
        return np.log(np.minimum(w, cap))


def calibrated_count(b: np.ndarray, tb: np.ndarray, nb: np.ndarray, log_w: np.ndarray | None = None) -> dict:
    """The unlabeled rest's count of positives under the calibration alone.

    ``b``: draws of the calibration's coefficients ``(b0, b1)`` (rows); ``tb``/``nb``:
    the rest's feature values and how many unlabeled items have each. Every item is
    positive with probability ``p = logistic(b0 + b1 t)`` independently, so given a
    draw the count has mean ``C = sum p`` and variance ``sum p (1 - p)``; over the
    draws it is a mixture. Returns ``r_cal`` (the mixture's mean), ``var_r_cal`` (its
    variance: the spread of ``C`` over the draws plus the mean Bernoulli variance) and
    ``r_cal_draws`` (the sorted ``C`` of every draw; ``count_quantile`` reads the
    mixture's quantiles from them, each draw's count taken as Poisson with mean ``C``).
    No random numbers are used beyond the coefficient draws, so the run's random
    stream is unchanged.
    """
    p = logistic(b[:, :1] + b[:, 1:] * tb)
    c = p @ nb
    bern = (p * (1.0 - p)) @ nb
    if log_w is None:
        w = np.full(c.size, 1.0 / max(c.size, 1))
    else:
        w = np.exp(log_w - log_w.max())
        w /= w.sum()
    order = np.argsort(c)
    mean = float(np.dot(w, c))
    return dict(
        r_cal=mean,
        var_r_cal=float(np.dot(w, (c - mean) ** 2) + np.dot(w, bern)),
        r_cal_draws=c[order],
        r_cal_weights=w[order],
    )


def count_quantile(c_draws: np.ndarray, q: float, weights: np.ndarray | None = None) -> float:
    """Quantile ``q`` of a mixture of Poisson counts with means ``c_draws`` (equal weights,
    or ``weights`` summing to 1).

    The smallest integer ``k`` whose mixture CDF ``sum_j w_j P(Poisson(c_j) <= k)``
    reaches ``q`` (found by bisection; 0 for an empty mixture).
    """
    if c_draws.size == 0:
        return 0.0
    w = np.full(c_draws.size, 1.0 / c_draws.size) if weights is None else weights

    def cdf(k):  # pdtr: the Poisson CDF itself (scipy's poisson.cdf without its per-call checks)
        return float(np.dot(w, pdtr(k, c_draws)))

    lo, hi = 0, int(np.ceil(c_draws.max() + 10.0 * np.sqrt(c_draws.max()) + 10.0))
    if cdf(lo) >= q:
        return 0.0
    while hi - lo > 1:  # cdf(lo) < q <= cdf(hi)
        mid = (lo + hi) // 2
        if cdf(mid) >= q:
            hi = mid
        else:
            lo = mid
    return float(hi)


def calibrated_offsets(
    est, den, rest, *, alpha, interval_prob, r_hat=None, checked=False, gated=False
) -> tuple[float, float]:
    """How far F falls and rises (``down``, ``up``, both >= 0) when the unlabeled rest's
    count of positives moves from the count the estimate used (``r_hat``, default
    ``rest["r_hat"]``) to the calibrated count's upper and lower quantiles (see
    ``calibrated_count``), for one iteration's estimate ``est`` and denominator ``den``.
    ``checked=True``: the count's range also covers the fitted count times the ratio the
    tail check measured (``checked_count_range``; the ``"checked"`` interval, and with
    ``gated=True`` only after the check found an excess: the ``"evidence"`` interval)."""
    tail = (1.0 - interval_prob) / 2.0
    r_hat = rest["r_hat"] if r_hat is None or not math.isfinite(r_hat) else r_hat
    draws, w = rest.get("r_cal_draws", np.zeros(0)), rest.get("r_cal_weights")
    r_lo, r_hi = count_quantile(draws, tail, w), count_quantile(draws, 1.0 - tail, w)
    c_scores = rest.get("r_cal_scores", math.nan)
    if CALIBRATED_COVERS_SCORES and math.isfinite(c_scores):  # the scores read as probabilities
        r_lo = min(r_lo, float(poisson.ppf(tail, c_scores)))
        r_hi = max(r_hi, float(poisson.ppf(1.0 - tail, c_scores)))
    extra = checked_count_range(rest, tail, gated) if checked else None
    if extra is not None:
        r_lo, r_hi = min(r_lo, extra[0]), max(r_hi, extra[1])

    def f_at(r):
        return est * den / max(den + (1.0 - alpha) * (r - r_hat), 1e-300)

    return max(est - f_at(r_hi), 0.0), max(f_at(r_lo) - est, 0.0)


def rest_interval(
    est, var_domain, den, rest, *, alpha, interval_prob, method="model", r_bar=None, offsets=None
):
    """Estimate, variance and interval that account for the rest stratum.

    ``rest`` describes the items outside the current top-K domain (see
    ``_importance_sampling_run``): ``r_hat`` (the count of positives among its
    unlabeled items that the estimate uses), ``r_sorted`` and ``var_r`` (draws and
    variance of that count's predictive distribution, see ``fit_rest_model``) and, for the
    design-only interval, ``size`` (all its items), ``x`` (positives among its labeled
    items), ``exposure`` and ``exposure_max`` (a lower and an upper bound on the
    probability that any one of its items has been drawn by now). ``r_bar``: the count
    implied by an averaged estimate (the same average of the iterations' ``r_hat``);
    defaults to ``rest["r_hat"]``.

    ``method="model"``: the count ``R`` of unlabeled positives is read from its
    predictive distribution. ``method="jeffreys"``: the count of positives in the whole
    rest gets the Jeffreys posterior ``Gamma(x + 1/2, rate=e)`` of a Poisson count seen
    with exposure ``e``; its upper quantile at ``e = exposure`` (the smallest exposure
    of a rest item), its lower quantile at ``e = exposure_max`` (the largest), kept
    within ``[x, size]``: valid whatever the calibration says, and wide. F is decreasing
    in ``R``: ``F(R) = est * den / (den + (1 - alpha) (R - R_hat))`` with ``R_hat`` the count the
    estimate uses. The interval adds the rest's (asymmetric) quantile offsets and the
    domain's normal half-width in quadrature on each side. The variance is the
    domain's plus the linearized variance of the model's ``R`` (for both methods).
    ``method="calibrated"``: ``R`` is read from the calibration alone (``calibrated_count``:
    the coefficients' posterior draws and Bernoulli noise, no rate multiplier), and the
    variance reported is that of a normal whose interval is as wide (before clipping).
    """
    z = float(norm.ppf(0.5 + interval_prob / 2.0))
    if not (math.isfinite(est) and math.isfinite(var_domain)) or not den > 0:
        return est, var_domain, 0.0, 1.0
    tail = (1.0 - interval_prob) / 2.0
    slope = (1.0 - alpha) * est / den
    var = min(var_domain + slope**2 * rest["var_r"], 0.25)
    if method == "jeffreys":
        size, x, exposure = rest["size"], rest["x"], rest["exposure"]
        r_hat = x + (rest["r_hat"] if r_bar is None or not math.isfinite(r_bar) else r_bar)
        # Upper end: every hidden positive may sit where the design looks least
        # (the smallest exposure); lower end: where it looks most (the largest). The
        # positives already found are a floor.
        exposure_max = rest.get("exposure_max", exposure)
        r_hi = gamma.ppf(1.0 - tail, x + 0.5, scale=1.0 / exposure) if exposure > 0 else size
        r_lo = gamma.ppf(tail, x + 0.5, scale=1.0 / exposure_max) if exposure_max > 0 else 0.0
        r_lo, r_hi = min(max(r_lo, x), size), min(max(r_hi, x), size)
    elif method == "calibrated":
        r_hat = r_lo = r_hi = 0.0  # the offsets below say where F goes
    else:
        r_hat = rest["r_hat"] if r_bar is None or not math.isfinite(r_bar) else r_bar
        r_sorted = rest["r_sorted"]
        if r_sorted.size:
            r_lo, r_hi = np.quantile(r_sorted, [tail, 1.0 - tail])
        else:
            r_lo = r_hi = 0.0

    def f_at(r):
        return est * den / max(den + (1.0 - alpha) * (r - r_hat), 1e-300)

    half = z * math.sqrt(max(var_domain, 0.0))
    rest_down, rest_up = max(est - f_at(r_hi), 0.0), max(f_at(r_lo) - est, 0.0)
    if method == "calibrated":
        if offsets is None:
            offsets = calibrated_offsets(est, den, rest, alpha=alpha, interval_prob=interval_prob, r_hat=r_bar)
        rest_down, rest_up = offsets
    down, up = math.hypot(half, rest_down), math.hypot(half, rest_up)
    if method == "calibrated":
        # The variance of a normal whose interval is as wide (before clipping to [0, 1]):
        # the count's predictive distribution is skewed by the calibration's extrapolation,
        # and its mean-based variance would be ruled by a far tail the interval leaves out.
        # (capped before squaring: where the rest's count leaves almost no room, F's upper offset
        # is ~1e300 and its square overflows a Python float)
        var = min((down + up) / (2.0 * z), 0.5) ** 2
    return est, var, max(0.0, est - down), min(1.0, est + up)



def domain_model_variance(pi, m, yhat, *, g, den, alpha, rest, assisted) -> float:
    """The model-anticipated variance of one batch's estimate over the sampled domain.

    The design-based (delta-method) variance is read from the items drawn; where positives
    hide among items with small inclusion probabilities, most runs draw none of them and
    that estimate is low in most runs (on the real pool R a quarter to a third of the actual
    variance). This is its expectation over the labels as well: every candidate ``i``
    (inclusion probability ``pi``, prediction ``yhat``, fitted curve's probability ``m``)
    contributes ``(1 - pi) / pi * E[(z - pi A)^2] / den^2`` (Hajek's fixed-size form, ``A`` the
    level ``sum (1 - pi) E[z] / sum (1 - pi) pi``), ``z`` its linearized residual (as in
    ``ratio_estimate``, the difference estimator when ``assisted``) at the estimate ``g``,
    with ``y ~ Bernoulli(p)`` and ``p`` the curve's probability, its odds multiplied by the
    tail check's ratio (the mean of ``ratio_posterior(rest, gated=True)``) when the check found
    an excess: the curve as far off below its labels as the check measured. Candidates already labeled
    (``pi = 0``) and certainties add nothing. 0 with ``EVIDENCE_DOMAIN`` off.
    """
    if not EVIDENCE_DOMAIN:
        return 0.0
    keep = (pi > 0) & (pi < CERTAIN)
    pi, m, yh = pi[keep], np.clip(m[keep], 0.0, 1.0), yhat[keep].astype(np.float64)
    post = ratio_posterior(rest, gated=True) if EVIDENCE_DOMAIN_RATIO else None
    theta = 1.0 if post is None else post[0] / post[1]
    p = theta * m / np.maximum(1.0 - m + theta * m, 1e-300)

    def z(y):
        if assisted:
            return (y - m) * yh - g * (1.0 - alpha) * (y - m)
        return y * yh - g * (alpha * yh + (1.0 - alpha) * y)

    z1, z0 = z(1.0), z(0.0)
    mean = p * z1 + (1.0 - p) * z0
    var_z = p * (1.0 - p) * (z1 - z0) ** 2
    # Fixed sample size (Hajek's approximation): each residual is centred on pi_i times the
    # common level A that the design's fixed size removes, as in ``ratio_estimate``.
    f = 1.0 - pi
    level = float(np.dot(f, mean)) / max(float(np.dot(f, pi)), 1e-300)
    return float(np.dot(f / pi, var_z + (mean - pi * level) ** 2)) / den**2


def evidence_reason(rest: dict, model_domain: bool) -> str:
    """What the ``"evidence"`` interval read from this run's labels (``interval_reason``)."""
    x, e = rest.get("tail_x", math.nan), rest.get("tail_e", math.nan)
    post = ratio_posterior(rest, gated=True)
    if not (math.isfinite(x) and math.isfinite(e) and e > 0):
        check = "no tail check could be made, so the calibrated count stands"
    elif post is None:
        check = (f"the tail check found {x:.0f} positive(s) where the curve expected {e:.2g} (no excess), "
                 "so the calibrated count stands")
    else:
        check = (f"the tail check found {x:.0f} positive(s) where the curve expected {e:.2g} (an excess), so "
                 f"the count also covers the curve's times a ratio of mean {post[0] / post[1]:.2g} "
                 f"(Jeffreys, 95% quantile {gamma.ppf(0.95, post[0], scale=1.0 / post[1]):.2g})")
    return (f"; in this run {check}; the domain's variance is the "
            + ("model-anticipated one (above the design-based estimate)" if model_domain else "design-based one"))


def predicts_better(n_coef, coef, t, y) -> bool:
    """Whether the curve fitted to the labeled predicted negatives (``n_coef``) predicts their
    labels better than the curve fitted to every label (``coef``), by more than its two fitted
    parameters' optimism (AIC): the choice of ``bayeval.fscore.acis.REST_FIT = "chosen"`` (its default)."""
    if not t.size:
        return False
    y = y.astype(np.float64)

    def loglik(c):
        eta = c[0] + c[1] * t
        return float(np.dot(y, eta) - np.logaddexp(0.0, eta).sum())

    return loglik(n_coef) - 2.0 > loglik(coef)
