"""Gold items (a random subset whose true class is known) against the annotator-error model.

The stacking of the structured model with the gold-only model (the true class of an
unlabelled item drawn from the gold items' confusion table given the predicted class),
the check of the gold items against the model, and the two readings of the true accuracy
that lean on the gold items: the prediction-powered one (:class:`RectifiedAccuracy`) and
the guarded one (:class:`GuardedAccuracy`), as returned by the posterior's
``rectified_accuracy()`` and ``guarded_accuracy()``."""

from __future__ import annotations

from typing import NamedTuple

import arviz as az
import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import logsumexp

from ..core._stacking import bootstrap_stacking_weights
from ..core.summary import hdi
from ._likelihood import STRUCT_VARS, ClassProbability, flat_draws
from ._checks import Observed

__all__ = ["GuardedAccuracy", "RectifiedAccuracy"]

_GOLD_CHECK_LEVEL = 0.05  # two-sided p-value below which the gold items contradict the model


class RectifiedAccuracy(NamedTuple):
    """The prediction-powered reading of a classifier's true accuracy
    (``post.rectified_accuracy()`` of an annotator-error fit).

    Examples
    --------
    >>> from bayeval.annotators import RectifiedAccuracy
    >>> RectifiedAccuracy(0.83, 0.78, 0.88, 0.03, 30, 0.9).estimate
    0.83
    """

    estimate: float
    """Mean of the model's probabilities that the classifier is right, corrected by the gold items."""
    lower: float
    """Lower end of the interval (clipped to [0, 1])."""
    upper: float
    """Upper end of the interval (clipped to [0, 1])."""
    std_error: float
    """Standard error of the estimate (finite-population corrected)."""
    n_gold: int
    """Gold items behind the correction."""
    prob: float
    """Coverage probability of the interval."""


class GuardedAccuracy(NamedTuple):
    """The guarded reading of a classifier's true accuracy
    (``post.guarded_accuracy()`` of an annotator-error fit): the smallest interval holding both the
    posterior's interval and the gold items' own.

    Examples
    --------
    >>> from bayeval.annotators import GuardedAccuracy
    >>> GuardedAccuracy(0.83, 0.78, 0.89, 0.80, 0.86, 0.78, 0.89, 25, 30, 0.9, "hdi").upper
    0.89
    """

    estimate: float
    """Posterior mean of the true accuracy on these items."""
    lower: float
    """Lower end: the lower of the two intervals' lower ends."""
    upper: float
    """Upper end: the higher of the two intervals' upper ends."""
    posterior_lower: float
    """Lower end of the posterior's interval."""
    posterior_upper: float
    """Upper end of the posterior's interval."""
    gold_lower: float
    """Lower end of the gold items' own interval."""
    gold_upper: float
    """Upper end of the gold items' own interval."""
    right: int
    """Gold items the classifier got right."""
    n_gold: int
    """Gold items."""
    prob: float
    """Probability of each of the two intervals."""
    interval: str
    """``"hdi"`` or ``"equal-tailed"``."""


def _discrete_interval(pmf: np.ndarray, prob: float, interval: str) -> tuple[int, int]:
    """Indices of the ends of a ``prob`` interval of a discrete distribution on 0..len-1:
    equal-tailed (the ``(1 - prob) / 2`` and ``(1 + prob) / 2`` quantiles) or the highest-
    density set (the most probable values until their mass reaches ``prob``; contiguous
    for a unimodal ``pmf``, and its hull otherwise)."""
    pmf = np.clip(np.asarray(pmf, dtype=np.float64), 0.0, None)
    pmf = pmf / pmf.sum()
    if interval == "equal-tailed":
        cdf = np.cumsum(pmf)
        tail = (1.0 - prob) / 2.0
        lo = int(np.searchsorted(cdf, tail * (1 - 1e-12)))
        hi = int(np.searchsorted(cdf, (1.0 - tail) * (1 - 1e-12)))
        return lo, min(hi, pmf.size - 1)
    order = np.argsort(-pmf, kind="stable")
    take = order[: int(np.searchsorted(np.cumsum(pmf[order]), prob * (1 - 1e-12))) + 1]
    return int(take.min()), int(take.max())


def gold_only_accuracy_interval(right: int, n_gold: int, n_items: int, prob: float,
                                 interval: str) -> tuple[float, float]:
    """The gold items' own interval of the true accuracy on ``n_items`` items: ``right`` of
    ``n_gold`` gold items right, accuracy ``~ Beta(1 + right, 1 + n_gold - right)``, each of
    the other items right with that probability (a Beta-Binomial count), exactly."""
    from scipy.stats import betabinom

    rest = n_items - n_gold
    pmf = betabinom.pmf(np.arange(rest + 1), rest, 1 + right, 1 + n_gold - right)
    lo, hi = _discrete_interval(pmf, prob, interval)
    return (right + lo) / n_items, (right + hi) / n_items


def beta_hdi(a: float, b: float, prob: float) -> tuple[float, float]:
    """Highest-density interval of Beta(a, b) with a, b >= 1 (unimodal): the narrowest
    interval of probability ``prob``."""
    from scipy.stats import beta as beta_dist

    dist = beta_dist(a, b)
    res = minimize_scalar(lambda t: dist.ppf(t + prob) - dist.ppf(t), bounds=(0.0, 1.0 - prob),
                          method="bounded", options={"xatol": 1e-10})
    t = float(res.x)
    return float(dist.ppf(t)), float(dist.ppf(t + prob))


def guarded_reading(draws: np.ndarray, right: int, n_gold: int, n_items: int, prob: float,
             interval: str) -> GuardedAccuracy:
    if interval == "hdi":
        p_lo, p_hi = (float(v) for v in hdi(draws, prob))
    else:
        p_lo, p_hi = (float(v) for v in np.quantile(draws, [(1 - prob) / 2, (1 + prob) / 2]))
    g_lo, g_hi = gold_only_accuracy_interval(right, n_gold, n_items, prob, interval)
    return GuardedAccuracy(float(np.mean(draws)), min(p_lo, g_lo), max(p_hi, g_hi), p_lo, p_hi, g_lo, g_hi,
                           right, n_gold, prob, interval)


def rectified_reading(check: dict, prob: float) -> RectifiedAccuracy:
    from scipy.stats import t as student_t

    n, big_n = int(check["n_gold"]), int(check["n_items"])
    est = min(max(check["q_mean_all"] + check["residual_mean"], 0.0), 1.0)
    if n < 2:
        nan = float("nan")
        return RectifiedAccuracy(est, 0.0, 1.0, nan, n, prob)
    se = float(np.sqrt(max(1.0 - n / big_n, 0.0) * check["residual_var"] / n))
    half = float(student_t.ppf(0.5 + prob / 2.0, n - 1)) * se
    return RectifiedAccuracy(est, max(0.0, est - half), min(1.0, est + half), se, n, prob)


def _poisson_binomial(q: np.ndarray) -> np.ndarray:
    """Distribution of the number of successes of independent Bernoulli(q_i)."""
    pmf = np.zeros(q.size + 1)
    pmf[0] = 1.0
    for j, qi in enumerate(q):
        pmf[1 : j + 2] = pmf[1 : j + 2] * (1 - qi) + pmf[: j + 1] * qi
        pmf[0] *= 1 - qi
    return pmf


def gold_stacking(spec, obs: Observed, idata, random_seed=None) -> dict:
    """Stacking weight of the structured model against the gold-only model, and a check.

    Each gold item's true class is predicted leave-one-out: by the structured model from
    the item's annotations (PSIS-LOO: the posterior without the item's gold label is the
    posterior reweighted by ``1 / p(z_i | observations_i, theta)``), and by the gold-only
    model from the other gold items with the same predicted class (Dirichlet(1) prior,
    exact). The stacking weight ``w`` maximizes ``sum_i log(w p_struct_i + (1 - w) p_gold_i)``
    (``point_weight``); the weight used (``weight``) is its average over Bayesian-bootstrap
    replicates of the gold items (see :func:`_bootstrap_stacking_weight`).
    The check compares the number of gold items the classifier gets right with its
    leave-one-out predictive distribution under the structured model (Poisson-binomial);
    ``q_right`` holds each gold item's leave-one-out probability that the classifier is
    right (a tuple, in the order of the gold items' positions).
    """
    k = spec.n_classes
    idx = np.flatnonzero(np.isfinite(obs.gold))
    z = obs.gold[idx].astype(np.int64)
    pred = obs.predictions[idx]
    upat, inv = np.unique(obs.inverse[idx], return_inverse=True)
    reduced = Observed(
        predictions=pred,
        annotations=obs.annotations[idx],
        gold=np.full(idx.size, np.nan),
        annotator_names=obs.annotator_names,
        patterns=obs.patterns[upat],
        pattern_gold=np.full(upat.size, -1),
        counts=np.ones(upat.size),
        inverse=np.asarray(inv).reshape(-1),
    )
    params = flat_draws(idata.posterior)
    p = ClassProbability(spec, reduced)(params)  # (m, n_gold, K), annotations only
    rows = np.arange(idx.size)
    with np.errstate(divide="ignore"):
        ll = np.log(np.maximum(p[:, rows, z], 1e-300)).T  # (n_gold, m)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # arviz's note on few draws / large k
        lw, khat = az.psislw(-ll)
    loo_struct = logsumexp(lw + ll, axis=1)
    q_right = (np.exp(lw) * p[:, rows, pred].T).sum(axis=1).clip(0.0, 1.0)
    counts = np.zeros((k, k))
    np.add.at(counts, (pred, z), 1.0)
    n_c = counts.sum(axis=1)
    loo_gold = np.log(counts[pred, z] / (n_c[pred] - 1 + k))

    point_weight = _stacking_weight(loo_struct, loo_gold)
    weight = _bootstrap_stacking_weight(loo_struct, loo_gold, random_seed)
    # the prediction-powered reading (the posterior's ``rectified_accuracy``): the structured
    # model's probability that the classifier is right, over all items (gold items: the
    # leave-one-out value), and the gold items' residuals of it
    q_all = structured_right_probability(spec, obs, params)
    q_all[idx] = q_right
    resid = (pred == z).astype(np.float64) - q_right

    right = int((pred == z).sum())
    pmf = _poisson_binomial(q_right)
    cdf = np.cumsum(pmf)
    p_value = float(min(1.0, 2 * min(cdf[right], 1 - (cdf[right - 1] if right > 0 else 0.0))))
    lo = int(np.searchsorted(cdf, 0.05))
    hi = int(np.searchsorted(cdf, 0.95))
    expected = float(q_right.sum())
    contradicts = p_value < _GOLD_CHECK_LEVEL
    if contradicts:
        message = (
            f"the gold items contradict the annotator-error model: the classifier is right on "
            f"{right} of {idx.size} gold items, where the model (leave-one-out, from the "
            f"annotations) expects {expected:.1f} (90% range {lo}-{hi}; p = {p_value:.2g}). Its "
            "picture of how the classifier's errors overlap the annotators' does not fit; "
            f"the stacked posterior gives the gold-only model weight {1 - weight:.2f}."
        )
    else:
        message = (
            f"the classifier is right on {right} of {idx.size} gold items; the annotator-error "
            f"model expects {expected:.1f} (90% range {lo}-{hi}; p = {p_value:.2g})."
        )
    return {
        "weight": float(weight),
        "point_weight": float(point_weight),
        "n_gold": int(idx.size),
        "right": right,
        "expected": expected,
        "range_90": (lo, hi),
        "p_value": p_value,
        "contradicts": bool(contradicts),
        "elpd_loo_structured": float(loo_struct.sum()),
        "elpd_loo_gold_only": float(loo_gold.sum()),
        "max_pareto_k": float(np.max(khat)),
        "q_right": tuple(float(v) for v in q_right),
        "q_mean_all": float(q_all.mean()),
        "residual_mean": float(resid.mean()),
        "residual_var": _guarded_residual_variance(resid, float(q_right.mean())),
        "n_items": int(obs.n_items),
        "message": message,
    }


def structured_right_probability(spec, obs: Observed, params: dict) -> np.ndarray:
    """Per item, the structured model's posterior probability that the classifier is
    right (its prediction is the true class), averaged over the draws; gold labels are
    not used for the items that carry them (their annotations and prediction only)."""
    free = Observed(
        predictions=obs.predictions,
        annotations=obs.annotations,
        gold=np.full(obs.n_items, np.nan),
        annotator_names=obs.annotator_names,
        patterns=obs.patterns,
        pattern_gold=np.full(obs.patterns.shape[0], -1),
        counts=obs.counts,
        inverse=obs.inverse,
    )
    cp = ClassProbability(spec, free)
    m = int(np.asarray(params["prevalence"]).shape[0])
    step = cp.block_draws()
    total = np.zeros((cp.n_patterns, cp.k))
    for a in range(0, m, step):
        sub = {key: np.asarray(params[key])[a : a + step] for key in STRUCT_VARS if key in params}
        total += cp.pattern_probabilities(sub, min(step, m - a)).sum(axis=0)
    p = (total / m)[obs.inverse]  # (n, K)
    return p[np.arange(obs.n_items), obs.predictions].clip(0.0, 1.0)


def _guarded_residual_variance(resid: np.ndarray, q_bar: float) -> float:
    """Variance of the gold items' residuals ``c - q``, with half a right and half a wrong
    gold item counted beside them (residuals ``1 - q_bar`` and ``-q_bar``, weight 1/2
    each): when the gold items hold no error, or the model predicts them all exactly, the
    plain variance is near 0 and the interval would be a point."""
    n = resid.size
    if n < 2:
        return float("nan")
    vals = np.r_[resid, 1.0 - q_bar, -q_bar]
    w = np.r_[np.ones(n), 0.5, 0.5]
    mu = float(np.dot(w, vals) / w.sum())
    return float(np.dot(w, (vals - mu) ** 2) / (w.sum() - 1.0))


#: Bayesian-bootstrap replicates of the gold items behind the stacking weight.
_STACKING_REPLICATES = 1000


def _stacking_weight(loo_struct: np.ndarray, loo_gold: np.ndarray) -> float:
    """The weight on the structured model that maximizes the gold items' stacked LOO score."""

    def neg(w):
        return -np.logaddexp(np.log(w) + loo_struct, np.log1p(-w) + loo_gold).sum()

    with np.errstate(divide="ignore"):
        ends = {0.0: -loo_gold.sum(), 1.0: -loo_struct.sum()}
        res = minimize_scalar(neg, bounds=(1e-9, 1 - 1e-9), method="bounded", options={"xatol": 1e-4})
    cands = {**ends, float(res.x): float(res.fun)}
    return float(min(cands, key=cands.get))


def _bootstrap_stacking_weight(loo_struct: np.ndarray, loo_gold: np.ndarray, random_seed=None) -> float:
    """The stacking weight on the structured model averaged over Bayesian-bootstrap
    replicates of the gold items (:func:`bayeval.core._stacking.bootstrap_stacking_weights`):
    close to the plain stacking weight when the gold items clearly favour one model, and
    hedging towards an even mixture when they do not."""
    return float(bootstrap_stacking_weights(np.column_stack([loo_struct, loo_gold]), random_seed,
                                            replicates=_STACKING_REPLICATES, spawn_key=21)[0])


def mix_gold_only(idata, obs: Observed, weight: float, k: int, random_seed):
    """Add the gold-only model's draws and which draws are the structured model's."""
    post = idata.posterior
    n_c, n_d = post.sizes["chain"], post.sizes["draw"]
    entropy = np.random.SeedSequence(random_seed).entropy
    rng = np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(20,)))
    comp = np.zeros((n_c, n_d), dtype=np.int8)
    n_struct = int(round(weight * n_d))
    for c in range(n_c):
        comp[c, rng.permutation(n_d)[:n_struct]] = 1
    idx = np.flatnonzero(np.isfinite(obs.gold))
    counts = np.zeros((k, k))
    np.add.at(counts, (obs.predictions[idx], obs.gold[idx].astype(np.int64)), 1.0)
    conf = np.stack([rng.dirichlet(1.0 + counts[c], size=(n_c, n_d)) for c in range(k)], axis=2)
    new = post.assign(
        structured_component=(("chain", "draw"), comp),
        gold_only_confusion=(("chain", "draw", "predicted_class", "true_class"), conf),
    )
    groups = {g: idata[g] for g in idata.groups() if g != "posterior"}
    return az.InferenceData(posterior=new, **groups)
