"""True accuracy of a classifier under (correlated) annotator error: a generative model.

Each item ``i`` has a true class ``z_i`` (one of ``K``; binary is the main case) and
a latent difficulty ``d_i ~ Normal(0, 1)``. The classifier under evaluation and
every annotator are *raters*: rater ``r`` is right about an item of class ``k``
with probability ``Phi((probit(a[r, k]) - rho[r] d_i) / sqrt(1 - rho[r]^2))`` -- its
accuracy ``a[r, k]`` averaged over difficulty, shifted by how strongly its errors
follow the difficulty (``rho[r]``) -- and, when wrong, picks a wrong class from its
own distribution over the ``K - 1`` other classes (a Dawid--Skene confusion row;
nothing to choose for ``K = 2``). Given ``(z_i, d_i)`` the raters are independent;
a hard item makes every rater with a positive ``rho`` err more often, which is what
correlates the classifier's errors with the annotators'. Both ``z_i`` and ``d_i``
are summed out of the likelihood (``d_i`` on Gauss--Hermite nodes), so the
posterior has only global parameters and NUTS samples it quickly; items with the
same observations share one likelihood term, so the cost does not grow with the
number of items.

The true classes are then drawn from ``P(z_i | theta, observations)`` by
:class:`~bayeval.annotators.posterior.AnnotatorPosterior` (``K = 2``) or
:class:`~bayeval.annotators.posterior.CategoricalPosterior` (``K > 2``), so the
classifier's accuracy, precision and recall on *this* item set come out as posterior
distributions; gold (expert-verified) labels are fixed in every draw. The posterior
reports the fit (``post.summary()``, ``post.check()``, ``post.guarded_accuracy()``,
``post.rectified_accuracy()``, ``post.prior_sensitivity()``).

The data (:mod:`bayeval.annotators.data`; its checks in ``_checks.py``), the likelihood in numpy
(``_likelihood.py``), the gold items' stacking and readings
(:mod:`bayeval.annotators.gold`) and the prior sensitivity (``_sensitivity.py``) live
beside this module.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

import numpy as np

from ..core import _diagnostics as _diag
from ..core import _validate as V
from ..core.data import EvalData
from ..core.model import Model
from ._checks import MAX_CLASSES, Observed, has_gold, observe
from ._likelihood import (
    PARAM_NAMES,
    STRUCT_VARS,
    ClassProbability,
    Population,
    flat_draws,
    normal_nodes,
    rhat_advice,
    wrong_index,
)
from ._sensitivity import SENSITIVITY_THRESHOLD, add_log_prior, power_scaling
from .data import AnnotationData
from .gold import gold_stacking, mix_gold_only
from .posterior import AnnotatorPosterior, CategoricalPosterior

__all__ = ["AnnotatorError"]

_RHO_MAX = 0.95  # largest |correlation| of a rater's errors with the difficulty
_GOLD_FALLBACKS = ("stack", "off")
_ANNOTATOR_POOLING = ("separate", "exchangeable")

#: Default draws per chain of AnnotatorError.fit, with and without gold items.
_DRAWS_WITH_GOLD, _DRAWS_WITHOUT_GOLD = 1000, 2000


def _as_prior(x, name: str, *, n: int) -> tuple[float, ...]:
    try:
        vals = tuple(float(v) for v in np.atleast_1d(np.asarray(x, dtype=float)))
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`{name}` must be {n} number(s), got {x!r}.") from exc
    if len(vals) != n or not all(np.isfinite(vals)):
        raise ValueError(f"`{name}` must be {n} finite number(s), got {x!r}.")
    return vals


class AnnotatorError(Model):
    """Generative model of a classifier's true accuracy under correlated annotator error.

    Raters are the classifier (rater ``"model"``) and the annotators. Item ``i``
    has a true class ``z_i`` and a difficulty ``d_i ~ Normal(0, 1)``; rater ``r``
    gives the true class ``k`` with probability

        P(right | z_i = k, d_i) = Phi((probit(a[r, k]) - rho[r] * d_i) / sqrt(1 - rho[r]^2))

    (a multivariate probit: rater ``r`` errs when ``rho[r] d_i + sqrt(1 - rho[r]^2)
    e_ir`` exceeds a threshold, ``e_ir`` independent standard normal noise). So
    ``a[r, k]`` is the rater's accuracy on items of class ``k`` averaged over
    difficulty, and ``rho[r]`` the correlation of its error propensity with the
    difficulty; two raters' error propensities correlate by ``rho[r] rho[s]``.
    When wrong, a rater picks one of the ``K - 1`` wrong classes with its own
    probabilities (a Dawid--Skene confusion row per rater and true class, with a
    Dirichlet(1) prior; nothing to choose for ``K = 2``). Class prevalences have
    a Dirichlet prior. The true class and the difficulty are summed out of the
    likelihood, the difficulty on ``n_nodes`` Gauss--Hermite nodes (the model is
    exactly the one whose difficulty takes those values with those weights; the
    accuracies it reports are computed on the same nodes, so they can differ
    from the nominal ``a`` by the quadrature error, below 0.01 for ``rho < 0.9``).

    *Correlated errors.* Annotator correlations ``rho`` lie in ``[0, 0.95]``: they
    define what "hard" means. The classifier's lies in ``[-0.95, 0.95]``: positive
    -- it struggles on the items the annotators struggle on (correlated errors,
    true accuracy nearer the lower bound ``A_model - (1 - A_gt)``); zero --
    independent errors given the class; negative -- its errors avoid theirs. The
    ``error_correlation`` reported by the posterior's ``summary()`` is the correlation (phi
    coefficient) between the indicators "the classifier is wrong" and "annotator
    j is wrong" on a random item, implied by the parameters (difficulty and
    class integrated out) -- the quantity the independence formula sets to 0.
    Accuracies that differ by class make it slightly non-zero even with
    ``rho = 0``.

    *How much shared error it can represent.* With both ``rho`` at the cap 0.95
    (and the 15 quadrature nodes the model is defined on), the largest error
    correlation is about 0.74, 0.64, 0.72 and 0.56 for two raters that are both
    70%, 80%, 90% and 95% right; for raters of unequal accuracy (80% and 95%) it
    is 0.45, which is 98.5% of the rarer errors shared -- near the most any
    model can give there. Real crowds can share more (a realized error
    correlation of 0.88 between two workers on a product-matching task); with gold items
    :meth:`fit` then leans on the gold-only model (see ``gold_fallback``), and
    the gold check in the posterior's ``summary()`` says so. The cap stays because near
    ``rho = 1`` the quadrature and the sampler degrade.

    *Identifiability.* What can be learned about the correlation depends on the data:

    * **With gold labels** (a random subset whose true class is known) the joint
      error pattern of classifier and annotators is observed on those items, so
      the correlation -- and the true accuracy on the other items -- is
      identified, more sharply as the subset grows. Errors are rare, so it takes
      a few hundred gold items to pin down a strong correlation; until then the
      prior still matters. The gold subset must be a random (or at least
      difficulty-blind) sample: gold items picked because they were easy or
      disputed bias every parameter.
    * **Several annotators per item, no gold.** Under the model's assumptions
      (raters independent given class and difficulty) the annotators' mutual
      agreement reveals the latent class, so accuracies are identified (the
      Dawid--Skene argument, up to relabelling the classes, which the priors rule
      out by putting most mass on better-than-chance raters). The correlations
      rest on higher-order agreement patterns: in the binary case there are
      ``2^R - 1`` pattern frequencies for ``1 + 3R`` parameters with ``R`` raters,
      so at least three annotators per item plus the classifier are needed, and
      even then they are weakly identified unless there are many items.
    * **One (or two) annotators per item, no gold** -- the setting of the
      closed-form bounds: the data fix only the agreement rates, not who is wrong
      nor how errors overlap. The correlation, and hence where the true accuracy
      lies between the bounds, comes from the prior (``model_difficulty``,
      ``annotator_difficulty`` and the accuracy priors), and the posterior says so
      with a wide interval. Put what is known into the priors (e.g. annotators
      known to be about 96% right: ``annotator_accuracy=(96, 4)``), or label a
      gold subset.
    * **Without gold, whatever the number of annotators**, the posterior's ``summary()``
      reports the true accuracy as the *identified set* joined with the posterior's
      interval (``post.identified_accuracy()``): the range over every overlap of the
      errors, each annotator right at least as often as the fit's lower bound on its
      accuracy. The model's picture of the overlap can be wrong where the annotators
      share more errors than it represents (on a real crowd with seven references
      its interval was 0.03 wide and missed every time).

    Parameters
    ----------
    n_classes : int, default 2
        Number of classes ``K``; classes are the integers ``0 .. K - 1`` and, for
        ``K = 2``, class 1 is "positive" for precision and recall.
    model_accuracy : (float, float), default (3.0, 1.0)
        Beta prior ``(alpha, beta)`` of the classifier's accuracy on the items of
        each true class (mean 0.75).
    annotator_accuracy : (float, float), default (6.0, 1.0)
        The same for each annotator (mean 0.86).
    model_difficulty : (float, float), default (3.0, 1.0)
        Beta prior of ``(rho_model / 0.95 + 1) / 2``, i.e. of the classifier's
        difficulty correlation mapped to (0, 1). The default leans towards
        positive correlation (mean ``rho_model = 0.48``; errors tend to be
        shared, as they usually are) and leaves 12.5% to negative values.
    annotator_difficulty : (float, float), default (2.0, 1.0)
        Beta prior of ``rho_annotator / 0.95`` (density rising linearly on
        [0, 0.95]; mean 0.63).

        Why these two: with one annotator per item only the *product*
        ``rho_model * rho_annotator`` (the correlation of their error
        propensities) is identified, and it is what moves the true accuracy
        between the independence value and the lower bound. The defaults spread
        that product over its range (prior median 0.30, 90% in [-0.15, 0.73]).
        The earlier defaults ``(2, 1)`` and ``(1, 1)`` put half of it below 0.1,
        i.e. near independence, and with 50 gold labels and strongly shared
        errors their 90% intervals covered the true accuracy in only 68% of
        simulated trials (91% with these; ``benchmarks/results/annotator.md``).
    prevalence_concentration : float, default 1.0
        Dirichlet concentration of the class prevalences.
    n_nodes : int, default 15
        Gauss--Hermite nodes for the difficulty.
    independent : bool, default False
        Fix every ``rho`` at 0: errors independent given the true class (then the
        model is Dawid--Skene with the classifier as one more rater).
    gold_fallback : {"stack", "off"}, default "stack"
        With gold items: ``"stack"`` reports a mixture of this model and a
        *gold-only* model (the true class of an unlabelled item drawn from a
        Dirichlet/Beta posterior of the gold items' confusion table given the
        predicted class, ignoring the annotators), weighted by stacking on the gold
        items' leave-one-out predictive densities (PSIS-LOO for this model, exact for
        the gold-only one). When the annotators tell the truth about the gold items
        better than the gold base rate does, the weight goes to this model; when the
        model's picture of shared errors is wrong on the gold items, weight moves to
        the gold-only model, whose interval is honest whatever the annotators do.
        The weight is the stacking weight averaged over Bayesian-bootstrap replicates
        of the gold items (``post.gold_check["weight"]``; the plain stacking weight is
        ``post.gold_check["point_weight"]``): a few dozen gold items seldom decide
        between the models outright, and the average keeps some of the gold-only
        model in the mix unless they do.
        ``"off"``: this model alone. The weights and a check of the gold items
        against the model are in ``post.gold_check`` and in ``post.summary()``. Without
        gold items both settings are this model alone.
    annotators : {"separate", "exchangeable"}, default "separate"
        ``"separate"``: every annotator column has its own accuracies, difficulty
        correlation (and, for ``K > 2``, confusion row). ``"exchangeable"``: all
        annotator columns share one set -- the Dawid--Skene pooling of a crowd whose
        columns are interchangeable, e.g. ``annotations_from_long(df, pool="slot")``
        where column ``j`` holds each item's ``j``-th label from whichever worker gave
        it. Fewer parameters, the same likelihood structure (each column still errs
        with the item's difficulty); the posterior variables
        ``annotator_class_accuracy`` and ``annotator_difficulty_u`` then have no
        ``annotator`` dimension (the per-annotator deterministics keep it).

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.annotators import AnnotationData, AnnotatorError
    >>> pred = np.array([1, 0, 1, 1, 0, 0])
    >>> ann = np.array([[1, 1], [0, np.nan], [0, 1], [1, 1], [0, 0], [1, np.nan]])
    >>> m = AnnotatorError().build(AnnotationData(pred, ann, gold=[1, np.nan, np.nan, np.nan, 0, np.nan]))
    >>> sorted(v.name for v in m.free_RVs)  # doctest: +NORMALIZE_WHITESPACE
    ['annotator_class_accuracy', 'annotator_difficulty_u', 'model_class_accuracy',
     'model_difficulty_u', 'prevalence']
    >>> dict(m.coords)["rater"]
    ('model', '0', '1')

    Fitting samples with NUTS (seconds to a minute, whatever the number of items):
    ``post = AnnotatorError().fit(AnnotationData(pred, ann), random_seed=1)``; then
    ``post.metric("accuracy")`` is the posterior of the true accuracy on these
    items and ``post.summary()`` tabulates annotator accuracies and
    error correlations.

    Crowd data in long format (one row per ``item, annotator, label``): several
    references per item are the path that identifies the accuracies without
    gold; turn them into annotator columns with :func:`annotations_from_long`,
    aligned to the predictions' items:

    >>> import pandas as pd
    >>> from bayeval.annotators import annotations_from_long
    >>> crowd = pd.DataFrame({"item": [1, 1, 1, 2, 2, 3], "annotator": list("abcabc"),
    ...                       "label": [1, 1, 0, 0, 0, 1]})
    >>> ann = annotations_from_long(crowd, items=[1, 2, 3], pool="slot")
    >>> [str(a) for a in AnnotatorError().build(AnnotationData([1, 0, 1], ann)).coords["annotator"]]
    ['label_0', 'label_1', 'label_2']
    """

    def __init__(
        self,
        n_classes: int = 2,
        *,
        model_accuracy=(3.0, 1.0),
        annotator_accuracy=(6.0, 1.0),
        model_difficulty=(3.0, 1.0),
        annotator_difficulty=(2.0, 1.0),
        prevalence_concentration: float = 1.0,
        n_nodes: int = 15,
        independent: bool = False,
        gold_fallback: str = "stack",
        annotators: str = "separate",
    ):
        self.annotators = V.check_choice(annotators, "annotators", _ANNOTATOR_POOLING)
        self.gold_fallback = V.check_choice(gold_fallback, "gold_fallback", _GOLD_FALLBACKS)
        self.n_classes = V.as_positive_int(n_classes, "n_classes", minimum=2)
        if self.n_classes > MAX_CLASSES:
            raise ValueError(f"`n_classes` must be <= {MAX_CLASSES}, got {self.n_classes}.")
        self.model_accuracy = _as_prior(model_accuracy, "model_accuracy", n=2)
        self.annotator_accuracy = _as_prior(annotator_accuracy, "annotator_accuracy", n=2)
        self.model_difficulty = _as_prior(model_difficulty, "model_difficulty", n=2)
        self.annotator_difficulty = _as_prior(annotator_difficulty, "annotator_difficulty", n=2)
        (self.prevalence_concentration,) = _as_prior(
            prevalence_concentration, "prevalence_concentration", n=1
        )
        for name in (
            "model_accuracy",
            "annotator_accuracy",
            "model_difficulty",
            "annotator_difficulty",
            "prevalence_concentration",
        ):
            if min(np.atleast_1d(getattr(self, name))) <= 0:
                raise ValueError(
                    f"The Beta/Dirichlet parameters in `{name}` must be > 0, got {getattr(self, name)}."
                )
        self.n_nodes = V.as_positive_int(n_nodes, "n_nodes", minimum=1)
        if not isinstance(independent, bool | np.bool_):
            raise TypeError(f"`independent` must be True or False, got {independent!r}.")
        self.independent = bool(independent)

    def __repr__(self) -> str:
        extra = "" if self.annotators == "separate" else f", annotators={self.annotators!r}"
        return f"AnnotatorError(n_classes={self.n_classes}, independent={self.independent}{extra})"

    # ------------------------------------------------------------------ build

    def build(self, data, *args, **kwargs):
        """The PyMC model for these observations.

        Parameters
        ----------
        data : AnnotationData
            Predictions, annotations and gold labels.

        Returns
        -------
        pymc.Model
            Coords ``class``, ``annotator``, ``rater`` (``"model"`` then the
            annotators), ``pattern`` (distinct observation patterns) and, for
            ``K > 2``, ``other`` (the ``K - 1`` wrong classes). Free variables
            ``prevalence``, ``model_class_accuracy``, ``annotator_class_accuracy``,
            ``model_difficulty_u``, ``annotator_difficulty_u`` (and
            ``wrong_class``); data ``pattern_count`` (items per pattern) and what
            each pattern says (``pattern_right``, ``pattern_wrong``,
            ``pattern_gold_mask`` and, for ``K > 2``, ``pattern_pick``: a refit with
            more gold items changes their values, not the graph);
            deterministics ``model_difficulty_corr``,
            ``annotator_difficulty_corr``, ``rater_skill``, ``rater_loading``
            (probit intercept and slope on the difficulty), ``model_accuracy``
            (population true accuracy), ``annotator_accuracy`` and
            ``error_correlation`` (per annotator); the likelihood is the potential
            ``loglik``.

        Examples
        --------
        >>> from bayeval.annotators import AnnotatorError
        >>> from bayeval.annotators import AnnotationData
        >>> m = AnnotatorError(3).build(AnnotationData([0, 1, 2, 2], [0, 1, 1, 2]))
        >>> m["wrong_class"].eval().shape, sorted(m.coords)
        ((2, 3, 2), ['annotator', 'class', 'other', 'pattern', 'rater'])
        """
        return self._build(self._observed(_as_annotation_data((data, *args), kwargs, "build")))

    def _observed(self, data: AnnotationData) -> Observed:
        memo = getattr(self, "_memo", None)
        if memo is not None and memo[0] is data:
            return memo[1]
        obs = observe(data.predictions, data.annotations, data.gold, self.n_classes)
        self._memo = (data, obs)
        return obs

    def _nodes(self) -> tuple[np.ndarray, np.ndarray]:
        if self.independent:
            return np.zeros(1), np.ones(1)
        return normal_nodes(self.n_nodes)

    def _build(self, obs: Observed):
        import pymc as pm
        import pytensor.tensor as pt
        from pymc.distributions.dist_math import normal_lcdf

        from ._probit import probit

        k_cls = self.n_classes
        n_ann = obs.annotations.shape[1]
        rater_names = ["model", *obs.annotator_names.tolist()]
        coords = {
            "class": np.arange(k_cls),
            "annotator": obs.annotator_names,
            "rater": rater_names,
            "pattern": np.arange(obs.patterns.shape[0]),
        }
        if k_cls > 2:
            coords["other"] = np.arange(k_cls - 1)
        nodes, node_w = self._nodes()
        with pm.Model(coords=coords) as model:
            # what the observation patterns say, as data containers: a refit with more gold
            # items (new patterns) swaps their values instead of building another graph
            arrays = _pattern_arrays(obs, k_cls)
            eq = pm.Data("pattern_right", arrays["pattern_right"], dims=("pattern", "rater", "class"))
            neq = pm.Data("pattern_wrong", arrays["pattern_wrong"], dims=("pattern", "rater", "class"))
            gold_mask = pm.Data("pattern_gold_mask", arrays["pattern_gold_mask"], dims=("pattern", "class"))
            prevalence = pm.Dirichlet(
                "prevalence", a=np.full(k_cls, self.prevalence_concentration), dims="class"
            )
            m_acc = pm.Beta("model_class_accuracy", *self.model_accuracy, dims="class")
            shared = self.annotators == "exchangeable"
            if shared:  # one accuracy (per class) for every annotator column
                a_acc = pm.Beta("annotator_class_accuracy", *self.annotator_accuracy, dims="class")
                a_acc = pt.broadcast_to(a_acc[None, :], (n_ann, k_cls))
            else:
                a_acc = pm.Beta("annotator_class_accuracy", *self.annotator_accuracy, dims=("annotator", "class"))
            acc_rk = pt.concatenate([m_acc[None, :], a_acc], axis=0)  # (R, K)
            if self.independent:
                rho = pt.zeros(1 + n_ann)
            else:
                m_u = pm.Beta("model_difficulty_u", *self.model_difficulty)
                if shared:
                    a_u = pt.broadcast_to(pm.Beta("annotator_difficulty_u", *self.annotator_difficulty), (n_ann,))
                else:
                    a_u = pm.Beta("annotator_difficulty_u", *self.annotator_difficulty, dims="annotator")
                m_rho = pm.Deterministic("model_difficulty_corr", _RHO_MAX * (2 * m_u - 1))
                a_rho = pm.Deterministic("annotator_difficulty_corr", _RHO_MAX * a_u, dims="annotator")
                rho = pt.concatenate([m_rho[None], a_rho])
            scale = 1 / pt.sqrt(1 - rho**2)
            skill = pm.Deterministic("rater_skill", probit(acc_rk) * scale[:, None], dims=("rater", "class"))
            loading = pm.Deterministic("rater_loading", rho * scale, dims="rater")
            eta = skill[:, :, None] - loading[:, None, None] * nodes[None, None, :]  # (R, K, Q)
            # log P(observations of pattern p | z = k, d = node q): (P, K, Q)
            ll = (eq[:, :, :, None] * normal_lcdf(0.0, 1.0, eta)[None]).sum(axis=1) + (
                neq[:, :, :, None] * normal_lcdf(0.0, 1.0, -eta)[None]
            ).sum(axis=1)
            if k_cls > 2:
                if shared:
                    w_m = pm.Dirichlet("model_wrong_class", a=np.ones((k_cls, k_cls - 1)), dims=("class", "other"))
                    w_a = pm.Dirichlet("annotator_wrong_class", a=np.ones((k_cls, k_cls - 1)), dims=("class", "other"))
                    wrong = pm.Deterministic(
                        "wrong_class",
                        pt.concatenate([w_m[None], pt.broadcast_to(w_a[None], (n_ann, k_cls, k_cls - 1))], axis=0),
                        dims=("rater", "class", "other"),
                    )
                else:
                    wrong = pm.Dirichlet(
                        "wrong_class", a=np.ones((1 + n_ann, k_cls, k_cls - 1)), dims=("rater", "class", "other")
                    )
                # one-hot of the wrong class each rater picked, (P, R, K, K - 1)
                pick = pm.Data("pattern_pick", arrays["pattern_pick"], dims=("pattern", "rater", "class", "other"))
                log_pick = (pick * pt.log(wrong)[None]).sum(axis=(1, 3))  # (P, K)
                ll = ll + log_pick[:, :, None]
            log_w = np.log(node_w)
            joint = ll + (pt.log(prevalence) + gold_mask)[:, :, None] + log_w[None, None, :]
            flat = joint.reshape((joint.shape[0], -1))
            top = pt.max(flat, axis=1, keepdims=True)
            lse = pt.log(pt.exp(flat - top).sum(axis=1)) + top[:, 0]
            counts = pm.Data("pattern_count", arrays["pattern_count"], dims="pattern")
            pm.Potential("loglik", (counts * lse).sum())

            # population quantities implied by the parameters (on the same nodes)
            p_right = 0.5 * pt.erfc(-eta / np.sqrt(2.0))  # (R, K, Q)
            acc = (prevalence[None, :, None] * p_right * node_w[None, None, :]).sum(axis=(1, 2))
            pm.Deterministic("model_accuracy", acc[0])
            pm.Deterministic("annotator_accuracy", acc[1:], dims="annotator")
            both_wrong = (
                prevalence[None, :, None] * (1 - p_right[0])[None] * (1 - p_right[1:]) * node_w[None, None, :]
            ).sum(axis=(1, 2))
            e_m, e_a = 1 - acc[0], 1 - acc[1:]
            pm.Deterministic(
                "error_correlation",
                (both_wrong - e_m * e_a) / pt.sqrt(e_m * (1 - e_m) * e_a * (1 - e_a)),
                dims="annotator",
            )
        return model

    # ------------------------------------------------------------------ fit

    # ------------------------------------------------------------ the contract

    auto_sampler = "pymc"  # the difficulty correlations' posterior is far from Gaussian
    # Four chains at a cautious step size: without gold items the accuracies, prevalences
    # and correlations trade off along slow directions; with two chains at 0.9, 6% of the
    # fits on real crowds had an r_hat above 1.01 or a divergence.
    default_chains = 4
    target_accept = 0.95
    param_names = PARAM_NAMES
    #: posterior variables ``_posterior`` adds to the sampled draws (the gold-only mixture):
    #: ``bayeval.load`` drops them before rebuilding, which adds them again, the same
    _posterior_adds = ("structured_component", "gold_only_confusion")

    def _structure(self, data) -> tuple:
        # the graph depends on the options, the classes and the raters; the observation
        # patterns (which grow with more gold items) are data containers (_data_values)
        obs = self._observed(data)
        params = tuple(sorted((k, repr(v)) for k, v in self.get_params().items()))
        return (*params, tuple(str(a) for a in obs.annotator_names))

    def _data_values(self, data) -> dict:
        return _pattern_arrays(self._observed(data), self.n_classes)

    def _coords(self, data) -> dict:
        return {"pattern": np.arange(self._observed(data).patterns.shape[0])}

    def _fitted_data(self, post):
        return getattr(post, "_annotation_data", None)

    def _start(self, data) -> dict:
        # chains start (jittered) at a Dawid--Skene estimate, not at the priors' means
        return _dawid_skene_start(self, self._observed(data))

    def _check_data(self, data):
        if not isinstance(data, AnnotationData):
            raise TypeError(
                f"`data` must be an AnnotationData(predictions, annotations, gold=..., scores=...), "
                f"got {type(data).__name__}."
            )
        obs = self._observed(data)
        if data.scores is not None and self.n_classes > 2:
            raise ValueError("`scores` applies to the binary case only (n_classes=2).")
        if data.scores is not None:
            V.check_same_length(obs.n_items, "scores", V.as_scores(data.scores).size, reference="predictions")
        return data

    def _posterior(self, data, idata, *, sampling, random_seed):
        obs = self._observed(data)
        self._memo = None
        if "constant_data" in idata.groups():  # the pattern arrays follow from the data: not kept with the draws
            cd = idata.constant_data.drop_vars([v for v in _PATTERN_ARRAYS if v in idata.constant_data.data_vars])
            used = {d for v in cd.data_vars.values() for d in v.dims}
            idata.constant_data = cd.drop_dims([d for d in cd.dims if d not in used])
        score_arr = obs.predictions.astype(np.float64) if data.scores is None else V.as_scores(data.scores)
        post = self._wrap(obs, idata, score_arr, random_seed, gold_fallback=self.gold_fallback,
                          item_ids=getattr(data, "item_ids", None))
        post._observed = obs
        post._annotation_data = data  # what a refit from this fit (``previous=post``) reweights from
        return post

    def _log_likelihood(self, post) -> dict:
        """``log p(observations_i | theta)`` per item: the annotations and prediction of each
        item with its true class summed out (gold items: their class fixed)."""
        obs = post._observed
        cp = ClassProbability(self, obs)
        postd = post.idata.posterior
        n_c, n_d = postd.sizes["chain"], postd.sizes["draw"]
        m = n_c * n_d
        params = flat_draws(postd, STRUCT_VARS)
        step = cp.block_draws()
        out = np.concatenate([cp.pattern_loglik({k: v[a:a + step] for k, v in params.items()}, min(step, m - a))
                              for a in range(0, m, step)], axis=0)
        return {"observations": (("chain", "draw", "item"), out[:, obs.inverse].reshape(n_c, n_d, obs.n_items))}

    def _convergence(self, post, *, warn: bool) -> dict:
        return _diag.check_convergence(post.idata, post.sampling, PARAM_NAMES, warn=warn, advice=rhat_advice(post))

    def _after_fit(self, post, *, warn: bool) -> None:
        import warnings

        add_log_prior(self, post.idata)
        if warn and not np.isfinite(post._observed.gold).any():
            # without gold the true accuracy may rest on the priors: say so when it does
            sens = power_scaling(self, post).sensitivity().loc["true_accuracy"]
            if sens["diagnosis"]:
                warnings.warn(
                    f"bayeval: the true accuracy depends on the priors ({sens['diagnosis']}; power-scaling "
                    f"prior sensitivity {sens['prior_sensitivity']:.2f} >= {SENSITIVITY_THRESHOLD}): without "
                    "gold items the data do not fully say how the classifier's errors overlap the "
                    "annotators', so the posterior's interval partly reflects the priors. "
                    "post.prior_sensitivity() shows how far it moves; post.summary() reports the "
                    "wider range the annotations allow whatever the overlap, given the annotators' accuracies the "
                    "model estimates (post.identified_accuracy()); "
                    "label a random gold subset or add references per item to pin it down.",
                    UserWarning, stacklevel=_diag.user_stacklevel(),
                )
        if warn and post.gold_check is not None and post.gold_check["contradicts"]:
            warnings.warn("bayeval: " + post.gold_check["message"], UserWarning, stacklevel=_diag.user_stacklevel())

    def fit(self, data=None, *args, draws: int | None = None, tune: int = 1000, chains: int | None = None,
            cores: int | None = None, random_seed=None, progressbar: bool = True, sampler: str = "auto",
            warn: bool = True, **sample_kwargs) -> AnnotatorPosterior | CategoricalPosterior:
        """Sample the posterior (NUTS) and wrap it with draws of the true classes.

        Parameters
        ----------
        data : AnnotationData
            Predictions, annotations, gold labels and (binary case) scores.
        draws : int, optional
            Draws per chain. Default 1000 with gold items, 2000 without: without gold the
            accuracies are identified only through the annotators' agreement, the
            posterior is slower to explore, and with 1000 draws about one fit in ten
            ended with an r_hat just above 1.01 on real crowd data.
        tune : int
            As in :func:`pymc.sample`.
        chains : int, optional
            Default 4 (two chains too often disagree by a little -- r_hat just above
            1.01 -- when there are no gold items). Every chain starts, jittered, at a
            Dawid--Skene EM estimate of the prevalences and class accuracies (gold items
            fixed), not at the priors' means (started there, about one real-crowd fit in
            thirty without gold had a chain stuck in a minor mode).
        cores : int, optional
            Processes for the chains (default: up to 2 at a time).
        random_seed : int, numpy Generator or SeedSequence, optional
            Seeds both the sampler and the label draws.
        progressbar : bool, default True
        sampler : {"auto", "importance", "smc", "pymc", "pymc-numba", "nutpie", "numpyro", "blackjax"}
            ``"auto"``: PyMC's NUTS (the posterior of the difficulty correlations is
            far from Gaussian, so importance sampling from the mode is not offered by
            default). The other NUTS implementations are selectable by name
            (``"numpyro"`` and ``"blackjax"`` need JAX and do not run this model: JAX
            lacks one of its operations).
            ``"smc"``: PyMC's sequential Monte Carlo, each chain an independent run of
            ``draws`` particles tempered from the prior (``tune`` and the NUTS settings
            do not apply): separated modes get their posterior weight, but the
            particles can come out less spread than the posterior -- on real crowds with
            three references and no gold its 90% intervals were 4-27% narrower than
            NUTS's for the same coverage, with fewer clean fits (30/36 against 34/36),
            so NUTS stays the default.
        warn : bool, default True
            Warn when the sampler diagnostics are bad (any r_hat > 1.01, bulk ESS
            below 100 per chain, divergences; see the posterior's ``check()``) and when the gold
            items contradict the structured model (see ``gold_fallback`` in the
            class parameters).
        **sample_kwargs
            NUTS settings: ``target_accept`` (default 0.95; raise it, e.g. to 0.99,
            when the fit reports divergent transitions), ``init``, ``max_treedepth``.

        Returns
        -------
        AnnotatorPosterior or CategoricalPosterior
            For ``K = 2`` an :class:`~bayeval.annotators.posterior.AnnotatorPosterior`
            (a :class:`bayeval.Posterior`) whose EvalData has
            ``labels=gold``, ``predictions=predictions`` (and ``noisy_labels`` when
            there is a single, complete annotator column), whose label draws are
            the true classes, so ``post.metric("accuracy")`` is the posterior of
            the classifier's true accuracy on these items and
            ``post.population("accuracy")`` its population accuracy. For
            ``K > 2`` a :class:`~bayeval.annotators.posterior.CategoricalPosterior`.
            Either has the attributes ``gold_check`` (a dict, None without gold items;
            see ``gold_fallback``), ``convergence`` (the dict of ``post.check()``) and
            ``sampling``; ``idata.log_likelihood["observations"]`` holds each item's
            log-likelihood, so ``az.loo(post.idata)`` works. Either reports the fit:
            ``summary()``, ``check()``, ``guarded_accuracy()``, ``rectified_accuracy()``,
            ``prior_sensitivity()``.

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval.annotators import AnnotationData, AnnotatorError
        >>> AnnotatorError().fit(AnnotationData([1, 0], [[1], [0.5]]), draws=10)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: `annotations` must hold whole class indices 0..1, got non-integers such as 0.5.
        """
        data = _as_annotation_data((data, *args) if data is not None else args, {}, "fit", stacklevel=3)
        spec = self
        if draws is None:
            draws = _DRAWS_WITH_GOLD if has_gold(data) else _DRAWS_WITHOUT_GOLD
        return Model.fit(spec, data, draws=draws, tune=tune, chains=chains, cores=cores, random_seed=random_seed,
                         progressbar=progressbar, sampler=sampler, warn=warn, **sample_kwargs)


    def _wrap(self, obs: Observed, idata, score_arr, random_seed, *, gold_fallback: str = "stack",
              weight: str = "weight", item_ids=None):
        gold_check = None
        if np.isfinite(obs.gold).any():
            gold_check = gold_stacking(self, obs, idata, random_seed)
            if gold_fallback == "stack":
                idata = mix_gold_only(idata, obs, gold_check[weight], self.n_classes, random_seed)
            else:
                gold_check["weight"] = gold_check["point_weight"] = 1.0
        class_prob = ClassProbability(self, obs)
        population = Population(self, idata, obs)
        post = self._wrap_posterior(obs, idata, score_arr, random_seed, class_prob, population, item_ids)
        post.gold_check = gold_check
        post.convergence = None
        post.model_spec = self  # its priors: the posterior's prior-sensitivity reports read them
        return post

    def _wrap_posterior(self, obs, idata, score_arr, random_seed, class_prob, population, item_ids=None):
        if self.n_classes == 2:
            noisy = None
            if obs.annotations.shape[1] == 1 and not np.isnan(obs.annotations).any():
                noisy = obs.annotations[:, 0]
            data = EvalData(score_arr, obs.gold, noisy_labels=noisy, predictions=obs.predictions, item_ids=item_ids)
            return AnnotatorPosterior(
                data,
                idata,
                functools.partial(_positive_class, class_prob),  # not a closure: the posterior pickles
                random_seed=random_seed,
                model="annotator error",
                population=population,
            )
        return CategoricalPosterior(
            obs.predictions,
            idata,
            class_prob,
            gold=obs.gold,
            n_classes=self.n_classes,
            random_seed=random_seed,
            model="annotator error",
            population=population,
            item_ids=item_ids,
        )


def _positive_class(class_prob, params) -> np.ndarray:
    """P(z = 1) per item of a binary annotator model, from its class probabilities."""
    return class_prob(params)[..., 1]


def _as_annotation_data(args, kwargs, what: str, stacklevel: int = 3) -> AnnotationData:
    """``build``/``fit``'s data argument: one AnnotationData."""
    if len(args) == 1 and isinstance(args[0], AnnotationData) and "gold" not in kwargs and "scores" not in kwargs:
        return args[0]
    raise TypeError(
        f"AnnotatorError.{what}() takes one AnnotationData(predictions, annotations, gold=..., scores=...), "
        f"got {len(args)} positional argument(s)"
        + (f" of type {type(args[0]).__name__}" if len(args) == 1 else "") + "."
    )


#: the pattern containers besides ``pattern_count`` (derived from the data, so not kept in a fit's idata)
_PATTERN_ARRAYS = ("pattern_right", "pattern_wrong", "pattern_gold_mask", "pattern_pick")


def _pattern_arrays(obs: Observed, k_cls: int) -> dict[str, np.ndarray]:
    """The values of the model's pattern containers: per pattern, rater and class whether
    the rater said that class (``pattern_right``) or another one (``pattern_wrong``); 0 or
    -inf per pattern and class (``pattern_gold_mask``: -inf where a gold label rules the
    class out); for ``K > 2`` the one-hot of the wrong class each rater picked
    (``pattern_pick``, (P, R, K, K - 1)); the items per pattern (``pattern_count``)."""
    pat = obs.patterns
    cls = np.arange(k_cls)
    eq = (pat[:, :, None] == cls).astype(np.float64)  # (P, R, K)
    neq = ((pat[:, :, None] >= 0) & (pat[:, :, None] != cls)).astype(np.float64)
    gold = obs.pattern_gold[:, None]
    out = {"pattern_right": eq, "pattern_wrong": neq,
           "pattern_gold_mask": np.where((gold < 0) | (gold == cls), 0.0, -np.inf),
           "pattern_count": np.asarray(obs.counts, dtype=np.float64)}
    if k_cls > 2:
        pick = (wrong_index(pat, k_cls)[..., None] == np.arange(k_cls - 1)) & (neq[..., None] > 0)
        out["pattern_pick"] = pick.astype(np.float64)
    return out


def _dawid_skene_start(spec: AnnotatorError, obs: Observed, *, iters: int = 500, tol: float = 1e-8) -> dict:
    """Where the NUTS chains start: an EM (Dawid--Skene) estimate of the prevalences and
    the raters' class accuracies under independent errors, with the model's priors.

    Each rater is right on true class ``k`` with probability ``a[r, k]`` and otherwise
    picks a wrong class uniformly; the E-step gives each observation pattern's
    posterior over the true class (gold items fixed), the M-step the posterior means
    under the model's Beta and Dirichlet priors (annotator columns pooled when they are
    exchangeable). It starts from the vote shares of all raters, the classifier
    included. The difficulty correlations keep their prior starting point. Starting
    there instead of at the priors' means keeps chains out of minor modes near the
    prior (on real crowds without gold, about one fit in thirty had a chain stuck at a
    log density ~7 lower, in a mode where shared difficulty rather than the class
    imbalance explains the disagreements).
    """
    k_cls = spec.n_classes
    pat, cnt, g = obs.patterns, obs.counts, obs.pattern_gold
    n_r = pat.shape[1]
    eq = (pat[:, :, None] == np.arange(k_cls)).astype(np.float64)  # (P, R, K)
    seen = (pat >= 0).astype(np.float64)[:, :, None]  # (P, R, 1)
    known = g >= 0
    fixed = np.eye(k_cls)[np.where(known, g, 0)]
    post = eq.sum(axis=1) + 1e-3
    post /= post.sum(axis=1, keepdims=True)
    post[known] = fixed[known]
    prior_a = np.array([spec.model_accuracy[0]] + [spec.annotator_accuracy[0]] * (n_r - 1))[:, None]
    prior_b = np.array([spec.model_accuracy[1]] + [spec.annotator_accuracy[1]] * (n_r - 1))[:, None]
    shared = spec.annotators == "exchangeable"
    for _ in range(iters):
        w = cnt[:, None] * post  # (P, K) expected items per pattern and true class
        prev = w.sum(axis=0) + spec.prevalence_concentration
        prev /= prev.sum()
        right = (w[:, None, :] * eq).sum(axis=0)  # (R, K)
        total = (w[:, None, :] * seen).sum(axis=0)
        if shared:
            right[1:] = right[1:].sum(axis=0)
            total[1:] = total[1:].sum(axis=0)
        acc = np.clip((right + prior_a) / (total + prior_a + prior_b), 0.02, 0.995)
        log_wrong = np.log((1 - acc) / max(k_cls - 1, 1))
        ll = (np.log(prev)[None] + (eq * np.log(acc)[None]).sum(axis=1)
              + ((seen - eq) * log_wrong[None]).sum(axis=1))
        ll[known] = np.where(fixed[known] > 0, 0.0, -np.inf)
        new = np.exp(ll - ll.max(axis=1, keepdims=True))
        new /= new.sum(axis=1, keepdims=True)
        done = np.abs(new - post).max() < tol
        post = new
        if done:
            break
    return {
        "prevalence": prev,
        "model_class_accuracy": acc[0],
        "annotator_class_accuracy": acc[1] if shared else acc[1:],
    }


def _copy_with(spec: AnnotatorError, **changes) -> AnnotatorError:
    params = spec.get_params()
    params.update(changes)
    return type(spec)(**params)
