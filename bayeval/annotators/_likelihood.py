"""The annotator-error likelihood in numpy: ``P(z_i | theta, observations)`` per draw, item
and class (:class:`ClassProbability`, with the difficulty summed out on Gauss--Hermite
nodes), and the classifier's population metrics from the parameters alone
(:class:`Population`). The PyMC graph of :meth:`AnnotatorError.build
<bayeval.annotators.model.AnnotatorError.build>` is the same model in PyTensor."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import xarray as xr
from scipy.special import log_ndtr, ndtr

from ._checks import Observed

_WORK_BYTES = 1 << 25  # working set of one block of the likelihood in numpy (~32 MiB)
#: the model's parameters, whose r_hat and ESS the convergence check reads
PARAM_NAMES = (
    "prevalence",
    "model_class_accuracy",
    "annotator_class_accuracy",
    "model_difficulty_u",
    "annotator_difficulty_u",
    "wrong_class",
)
#: what the convergence warning advises when chains disagree
RHAT_ADVICE = (
    "Without gold items the error correlation is weakly identified and the posterior can have "
    "two modes (in one, a shared item difficulty explains the disagreements; in the other, the "
    "classes' imbalance); chains that settle in different modes give an r_hat well above 1.01, "
    "and the draws then do not weigh the modes right. Label a random gold subset (on real "
    "crowds 319 of 320 fits with 30 or 100 gold items were clean), pool interchangeable "
    "annotator columns (AnnotatorError(annotators='exchangeable')), add annotators, or tune "
    "longer."
)
#: the same, for a fit with gold items (the error correlation is then identified)
GOLD_RHAT_ADVICE = (
    "With gold items the chains usually agree once they have run long enough: tune longer and draw "
    "more (e.g. tune=1000, draws=1000); if r_hat stays above 1.01, pool interchangeable annotator "
    "columns (AnnotatorError(annotators='exchangeable')) or label more gold items."
)


def rhat_advice(post) -> str:
    """What the convergence warning of ``post`` advises: with or without gold items."""
    return GOLD_RHAT_ADVICE if getattr(post, "gold_check", None) is not None else RHAT_ADVICE


def wrong_index(patterns: np.ndarray, n_classes: int) -> np.ndarray:
    """Position of observed class ``l`` among the wrong classes of true class ``k``.

    Shape ``(P, R, K)``; 0 where the rater is missing or right (the term is masked).
    """
    obs = patterns[:, :, None]
    k = np.arange(n_classes)[None, None, :]
    idx = np.where(obs < k, obs, obs - 1)
    return np.where((obs >= 0) & (obs != k), idx, 0)


def normal_nodes(n_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss--Hermite nodes and weights for a standard normal."""
    x, w = np.polynomial.hermite_e.hermegauss(n_nodes)
    return x, w / w.sum()


STRUCT_VARS = ("rater_skill", "rater_loading", "wrong_class", "prevalence")


def _param(params: Mapping[str, np.ndarray], name: str, shape_tail: tuple, m: int) -> np.ndarray:
    return np.asarray(params[name], dtype=np.float64).reshape((m,) + shape_tail)


def flat_draws(posterior, names=None) -> dict[str, np.ndarray]:
    """Posterior variables with chains and draws flattened into one leading axis
    (``names``: those of them present; default all)."""
    m = posterior.sizes["chain"] * posterior.sizes["draw"]
    names = posterior.data_vars if names is None else [n for n in names if n in posterior]
    return {n: posterior[n].values.reshape((m,) + posterior[n].shape[2:]) for n in names}


class ClassProbability:
    """``params -> P(z_i = k | theta, observations)``, shape (n_draws, n_items, K).

    ``spec`` is the :class:`~bayeval.annotators.model.AnnotatorError` (its number of
    classes and difficulty nodes); ``obs`` the observations it was fitted to."""

    def __init__(self, spec, obs: Observed):
        self.k = spec.n_classes
        self.n_ann = obs.annotations.shape[1]
        self.nodes, self.node_w = spec._nodes()
        cls = np.arange(self.k)
        pat = obs.patterns
        self.eq = (pat[:, :, None] == cls).astype(np.float64)
        self.neq = ((pat[:, :, None] >= 0) & (pat[:, :, None] != cls)).astype(np.float64)
        self.gold_mask = np.where(
            (obs.pattern_gold[:, None] < 0) | (obs.pattern_gold[:, None] == cls), 0.0, -np.inf
        )
        self.widx = wrong_index(pat, self.k) if self.k > 2 else None
        self.inverse = obs.inverse
        self.predictions = obs.predictions
        self.n_patterns = pat.shape[0]

    def eta(self, params, m):
        """Probit of P(right) per draw, rater, class and node: (m, R, K, Q)."""
        r = 1 + self.n_ann
        skill = _param(params, "rater_skill", (r, self.k), m)
        loading = _param(params, "rater_loading", (r,), m)
        return skill[..., None] - loading[:, :, None, None] * self.nodes

    def pattern_log_joint(self, params, m) -> np.ndarray:
        """``log p(pattern_p, z = k | theta)`` per draw, pattern and class: (m, P, K)."""
        eta = self.eta(params, m)
        ll = np.einsum("prk,mrkq->mpkq", self.eq, log_ndtr(eta)) + np.einsum(
            "prk,mrkq->mpkq", self.neq, log_ndtr(-eta)
        )
        if self.k > 2:
            wrong = _param(params, "wrong_class", (1 + self.n_ann, self.k, self.k - 1), m)
            r_idx = np.arange(1 + self.n_ann)[None, :, None]
            k_idx = np.arange(self.k)[None, None, :]
            with np.errstate(divide="ignore"):
                log_pick = np.log(wrong[:, r_idx, k_idx, self.widx])  # (m, P, R, K)
            log_pick = np.where(self.neq[None] > 0, log_pick, 0.0)
            ll = ll + log_pick.sum(axis=2)[..., None]
        with np.errstate(divide="ignore"):
            log_prev = np.log(_param(params, "prevalence", (self.k,), m))
        ll = ll + (log_prev[:, None, :] + self.gold_mask[None])[..., None] + np.log(self.node_w)
        top = ll.max(axis=(2, 3), keepdims=True)
        with np.errstate(divide="ignore"):  # classes ruled out by a gold label: log 0
            return np.log(np.exp(ll - top).sum(axis=3)) + top[..., 0]  # (m, P, K)

    def pattern_loglik(self, params, m) -> np.ndarray:
        """``log p(pattern_p | theta)`` (the true class summed out) per draw and pattern: (m, P)."""
        lz = self.pattern_log_joint(params, m)
        top = lz.max(axis=2, keepdims=True)
        with np.errstate(divide="ignore"):
            return (np.log(np.exp(lz - top).sum(axis=2)) + top[..., 0])

    def pattern_probabilities(self, params, m) -> np.ndarray:
        lz = self.pattern_log_joint(params, m)
        lz = lz - lz.max(axis=2, keepdims=True)
        p = np.exp(lz)
        return p / p.sum(axis=2, keepdims=True)

    def block_draws(self) -> int:
        """Draws per block of the pattern computations (a working set of ``_WORK_BYTES``)."""
        per_draw = 8 * self.n_patterns * self.k * (self.nodes.size * 3 + (1 + self.n_ann) * 2)
        return max(1, _WORK_BYTES // max(per_draw, 1))

    def __call__(self, params) -> np.ndarray:
        m = int(np.asarray(params["prevalence"]).shape[0])
        step = self.block_draws()
        out = []
        for a in range(0, m, step):
            sub = {key: np.asarray(val)[a : a + step] for key, val in params.items() if key != "_draw_index"}
            out.append(self.pattern_probabilities(sub, min(step, m - a)))
        probs = np.concatenate(out, axis=0)[:, self.inverse, :]
        if "structured_component" in params:  # mixture with the gold-only model (fit's "stack")
            comp = np.asarray(params["structured_component"]).reshape(m) > 0
            conf = np.asarray(params["gold_only_confusion"], dtype=np.float64).reshape(m, self.k, self.k)
            probs = np.where(comp[:, None, None], probs, conf[:, self.predictions, :])
        return probs


class Population:
    """Population metrics of the classifier from the parameters alone."""

    def __init__(self, spec, idata, obs: Observed):
        self.spec = spec
        self.idata = idata
        self.cp = ClassProbability(spec, obs)
        self.pred_share = np.bincount(obs.predictions, minlength=spec.n_classes) / obs.n_items

    def confusion(self) -> np.ndarray:
        """``P(prediction = c | z = k)``, shape (chain, draw, K_true, K_pred)."""
        post = self.idata.posterior
        n_c, n_d = post.sizes["chain"], post.sizes["draw"]
        params = flat_draws(post)
        m = n_c * n_d
        k = self.spec.n_classes
        eta = self.cp.eta(params, m)[:, 0]  # classifier: (m, K, Q)
        right = (ndtr(eta) * self.cp.node_w).sum(axis=2)  # (m, K)
        if k == 2:
            pick = np.ones((m, 2, 1))
        else:
            pick = _param(params, "wrong_class", (1 + self.cp.n_ann, k, k - 1), m)[:, 0]
        conf = np.zeros((m, k, k))
        for t in range(k):
            others = [c for c in range(k) if c != t]
            conf[:, t, t] = right[:, t]
            conf[:, t, others] = (1 - right[:, t])[:, None] * pick[:, t, :]
        return conf.reshape(n_c, n_d, k, k)

    def __call__(self, metric, **kwargs) -> xr.DataArray:
        if kwargs:
            raise TypeError(f"Population metrics take no options, got {sorted(kwargs)}.")
        names = ("accuracy", "precision", "recall")
        if metric not in names:
            raise ValueError(f"Population metrics of this model: {list(names)}; got {metric!r}.")
        post = self.idata.posterior
        prev = post["prevalence"].values  # (chain, draw, K)
        conf = self.confusion()
        joint = prev[..., :, None] * conf  # P(z = k, prediction = c)
        if "structured_component" in post:  # draws of the gold-only model: P(z | c) P(c)
            comp = post["structured_component"].values > 0
            go = np.swapaxes(post["gold_only_confusion"].values, -1, -2) * self.pred_share
            joint = np.where(comp[..., None, None], joint, go)
        diag = np.diagonal(joint, axis1=-2, axis2=-1)
        coords = {"chain": post["chain"].values, "draw": post["draw"].values}
        if metric == "accuracy":
            return xr.DataArray(diag.sum(-1), dims=("chain", "draw"), coords=coords, name="accuracy")
        with np.errstate(invalid="ignore", divide="ignore"):
            if metric == "precision":
                val = diag / joint.sum(axis=-2)
            else:
                val = diag / joint.sum(axis=-1)
        if self.spec.n_classes == 2:
            return xr.DataArray(val[..., 1], dims=("chain", "draw"), coords=coords, name=metric)
        coords["class"] = np.arange(self.spec.n_classes)
        return xr.DataArray(val, dims=("chain", "draw", "class"), coords=coords, name=metric)
