"""Active calibration and importance sampling (ACIS) for F-scores of rare categories.

This module estimates the F-score of a binary classifier on a large, unlabeled pool
from a small labeling budget, following the ACIS algorithm of Poms, Sarukkai,
Mullapudi, Sohoni, Mark, Ramanan and Fatahalian (2021, "Low-Shot Validation: Active
Importance Sampling for Estimating Classifier Performance on Rare Categories", ICCV),
together with three baselines that share its interface and result type. Unlike the
paper, ACIS here also samples outside its top-K domain, uses a logistic calibration of
the scores as a control variate, and by default reports an interval that accounts for
the positives that may hide outside the domain (see "The rest stratum" and "Model
assistance" below).

The F-score
-----------
For hard predictions ``yhat`` and true labels ``y`` on the pool, with counts ``tp``,
``fp`` and ``fn``, and a weight ``alpha`` in (0, 1),

    F_alpha = tp / (alpha * (tp + fp) + (1 - alpha) * (tp + fn)),

i.e. the weighted harmonic mean of precision (weight ``alpha``) and recall (weight
``1 - alpha``). ``alpha = 0.5`` is F1; ``alpha -> 1`` tends to precision and
``alpha -> 0`` to recall. It equals scikit-learn's ``fbeta_score`` with
``beta**2 = (1 - alpha) / alpha``. The estimand is the F-score *of this pool* (a
finite population), as everywhere in bayeval.

How a run works (``acis``)
--------------------------
Labels are bought in batches whose sizes double (``first_batch``, twice that, ...;
the last one is cut so that exactly ``budget`` items are labeled). Before each batch:

1. *Calibration.* The calibrated probability ``c(s)`` of a positive at score ``s`` is
   an isotonic regression (``scipy.optimize.isotonic_regression``). Before any label
   exists it is fitted to the *predicted* labels (the calibration prior ``c0``);
   afterwards to the true labels bought so far, blended with the prior as
   ``b * c0 + (1 - b) * c``, where ``b`` starts at ``beta`` and falls linearly to 0
   over ``beta_iterations`` iterations. The result is rescaled linearly from [0, 1]
   to [proposal_floor, 1 - proposal_floor] so that every candidate keeps a positive probability.
2. *Importance distribution.* Sawade's variance-minimizing proposal for F_alpha,
   with ``c`` in place of p(y=1|x) and the previous estimate ``G`` (0.5 at the
   start; clipped below at 0.05 so that predicted negatives keep positive mass):
   ``q ∝ sqrt(c (1 - G)^2 + alpha^2 (1 - c) G^2)`` for predicted positives and
   ``q ∝ (1 - alpha) sqrt(c) G`` for predicted negatives (paper, eq. 4).
3. *Sampling domain* (``top_k_prior=True``, the paper's adaptive top-K prior). Only
   the ``top_k_factor * (i + 1) * n_pred`` highest-scored items (iteration ``i`` =
   1, 2, ..., ``n_pred`` = number of predicted positives) are drawn by importance
   sampling, plus every predicted positive; the domain is widened when it has fewer
   than twice the batch size of unlabeled items. Everything else is the *rest
   stratum* (predicted negatives only): ``ceil(rest_share * batch)`` items of each
   batch (at least one, at most all but one) are drawn from its unlabeled items, with
   probabilities that follow a calibration of the scores (see "The rest stratum").
   With ``rest_share=0`` (the paper's design) the rest is never sampled and is taken
   as negatives, which biases the F estimate upwards when false negatives hide in the
   low scores; no interval can see that bias then.
4. *Sampling design.* The domain's part of the batch is drawn *without replacement* from the unlabeled
   items of the domain, with inclusion probabilities ``pi`` proportional to ``q``
   (capped at 1, summing to the batch size), by systematic sampling in a random
   order. This is the without-replacement counterpart of the paper's i.i.d.
   importance sampling: ``pi ≈ batch_size * q`` when ``q`` is small, the same items
   are preferred, and no oracle call is ever spent on an item twice. The budget
   therefore counts oracle calls on distinct items, exactly.
5. *Estimate with reuse of earlier labels.* All labels bought before the batch form a
   stratum observed in full (inclusion probability 1, weight 1), the batch a
   Horvitz-Thompson sample of the still-unlabeled part (weight ``1 / pi``)::

       G_i = (sum_L y*yhat + sum_S y*yhat / pi) / (sum_L v + sum_S v / pi),
       v = alpha * yhat + (1 - alpha) * y,

   which is Sawade's self-normalized estimator (paper, eq. 2) applied to both parts.
   This is our reading of the paper's rule that reused items enter with the weight
   of a deterministic draw. Numerator and denominator are unbiased for the pool
   totals (within the domain); the ratio is consistent. With ``model_assist=True``
   (the default) the batch estimates the *residuals* of a calibration model instead
   (see "Model assistance"), and the count of positives among the unlabeled rest items
   is added to the denominator (see "The rest stratum").
6. *Averaging* (paper, eq. 5). The reported estimate is the average of the last
   ``average_last`` iteration estimates, weighted by their batch sizes (in the
   paper's with-replacement form an iteration's importance-weight sum ``|W_i|_1`` is
   proportional to its batch size in expectation). If the last batch labeled every
   candidate of the domain (a census), its exact value is reported alone. The
   interval's rest term (below) is taken relative to the same average of the
   iterations' rest counts.

Variance (paper, eq. 6, adapted)
--------------------------------
Per iteration, the delta-method (linearization) variance of the ratio: the
residuals ``r = (y*yhat - G*v) / pi`` of the non-certainty draws (``pi < 1``) are
combined as ``sum (1 - pi) (r - rbar)^2 / (C * V^2)``, with ``V`` the estimated
denominator, ``rbar`` the ``(1 - pi)``-weighted mean of ``r``, and
``C = 1 - sum w^2 / (sum w)^2`` the paper's Bessel-style correction computed from the
importance weights ``w = v / pi`` of the draws (``C = 1 - 1/n`` for equal weights).
The factor ``1 - pi`` is a Hajek-type finite-population correction for sampling
without replacement (exactly the simple-random-sampling correction when all ``pi``
are equal); without it, batches that take a large share of the domain would report
too much variance. With no labeled stratum and all ``pi`` small this is the paper's
eq. 6 divided by ``n`` (eq. 6 is the variance of ``sqrt(n) * G``). Because ``G`` lies
in [0, 1], no variance above 1/4 is reported.

The variance of the averaged estimate is ``sum a_i^2 V_i`` for averaging weights
``a_i``: the paper's assumption of no covariance between iterations, which holds to
first order here because each batch estimates the still-unlabeled part unbiasedly
given the past (the iteration errors are martingale differences; in a simulation
with 400 runs on a 20,000-item pool their correlations were all within +-0.12).

Zero-variance honesty
---------------------
When every residual of an iteration is the same -- typically because no false
positive and no false negative has ever been drawn, so ``G = 1`` -- the formula above
gives 0 although unseen errors may exist. In that case the variance is replaced by
a *Jeffreys floor*: for every kind of item (true positive, false positive, false
negative) that the batch did not draw, the variance that *half* such a draw would
have added -- the Jeffreys Beta(1/2, .) / Poisson(1/2) pseudo-count after zero
observed events -- at a typical inclusion probability for that kind (the
inclusion probabilities of the candidates averaged with weights ``c``, ``1 - c`` and
``c`` for true positives, false positives and false negatives). It shrinks as more
items are labeled without an error and vanishes when the domain has been labeled in
full. ``history["variance_floor"]`` shows it per iteration. The floor applies only in
the degenerate case; when some residuals differ, the delta method is used as is
(which, like the paper's estimator, tends to underestimate the variance when very few
labels have been spent -- see the benchmark's variance ratios).

With ``interval="delta"`` intervals are normal: ``estimate ± z * sqrt(variance)``,
clipped to [0, 1], where the variance adds the variance of the rest stratum's count
(see "The rest stratum"). If no informative item (a predicted or a true
positive) has been labeled, the F-score is not identified: the estimate and variance
are NaN and the interval is [0, 1].

Model assistance (``model_assist``)
-----------------------------------
Before every batch a logistic regression of all labels so far on the scores is fitted
(the *rest calibration*: ``logit P(y=1) = b0 + b1 t`` with ``t`` the logit of
probability scores, or the standardized score otherwise; normal priors centred on
"the scores are calibrated", intercept sd 2 and slope sd 2, posterior mode and
Laplace covariance by Newton steps). Selection depends on the scores only, so
fitting to the labeled items is not distorted by the sampling. With
``model_assist=True`` its probabilities ``m`` serve as a control variate (a
difference estimator): the numerator and denominator over the still-unlabeled domain
are the model's totals ``sum m * yhat`` and ``sum alpha * yhat + (1 - alpha) * m`` plus
the batch's Horvitz-Thompson estimates of the residuals ``y * yhat - m * yhat`` and
``(1 - alpha) (y - m)``. This stays design-consistent whatever the model (the
residuals are estimated without bias), and it is far less variable when the model
is good, because the known number of predicted positives and most of the expected
counts no longer have to be estimated from a few draws. The delta-method variance
is computed from the residuals; estimates are clipped to [0, 1]. On the benchmark's
calibrated pools the defaults (rest stratum and model assistance) had 0.56--1.00 times
the MSE of the paper's design, and they matched or beat OASIS on every pool and budget
(``benchmarks/results/acis.md``).

The rest stratum (``rest_share``, ``rest_uniform``, ``interval``)
-----------------------------------------------------------------
Defensive sampling: a small guaranteed share of every batch goes outside the top-K
domain, so the estimator targets the F-score of the whole pool instead of the
F-score of the domain. The rest is usually most of the pool and its positives are
rare and concentrated just below the domain. The rest items are therefore drawn
without replacement (the same systematic design as the domain) with inclusion
probabilities proportional to ``(1 - rest_uniform) * c / sum(c) + rest_uniform / M``:
``c`` the rest calibration's probabilities, ``M`` the number of unlabeled rest items.
The uniform part keeps every rest item's probability above ``rest_uniform`` times
that of a simple random sample, whatever the calibration says.

*The count of positives among the unlabeled rest items*, ``R``, enters the F
denominator as ``(1 - alpha) * R``. Model: a rest item is positive with probability
``theta * c``, independently, so ``R ~ Poisson(theta * C)`` with ``C`` the sum of
``c`` over those items. The calibration's coefficients carry their Laplace posterior;
the multiplier ``theta`` (mean 1, prior ``Gamma(1, rate=1)``) is room for the
calibration to be wrong in the low scores, and is updated by the rest items labeled
so far (``x`` positives found where the calibration expected ``E``:
``theta ~ Gamma(1 + x, rate=1 + E)``). ``R``'s predictive distribution is sampled (1,000
draws over coefficient draws, ``theta`` and the Poisson count). The estimate uses
the model's count (at the coefficients' posterior mode) where the labels pin it down
-- the standard deviation of ``log C`` over the coefficients' posterior at most 1,
i.e. ``C`` known within about a factor e -- and otherwise the batch's unbiased
Horvitz-Thompson count of its rest draws (usually 0: the positives there are too rare
for a few draws to find, so the estimate is then biased upwards, and the interval
below is what accounts for it).

The model interval (``interval="model"``) reads ``R``'s 2.5 % and 97.5 %
quantiles (for a 95 % interval) from its predictive distribution; F decreases in
``R``, so the interval's ends are F at those quantiles, each combined in quadrature
with the domain's normal half-width. It is narrow where the labels fix the
calibration's tail and wide where they do not (few labels, a narrow score range
labeled). *When it fails:* the model extrapolates a logistic curve from the labeled
scores into the low scores. Positives that sit far below where that curve puts them
-- a heavier tail than logistic, a cluster of positives at very low scores -- are
missed by the estimate and by the interval until a rest draw finds one (``theta``
then grows). On the benchmark's real pool (digit 8 of ``load_digits``, cross-validated
logistic regression) this is what happened: positives at scores of 0.0003 and
0.0007 made the 95 % intervals cover in only 50--65 % of the runs from 100 labels
(``benchmarks/results/acis.md``), where the design-only interval below covered 94--97 %.
On the synthetic pools, whose scores are a logistic transform of the true log-odds,
coverage from 100 labels was 0.87--1.00 (the lowest on an overconfident pool
thresholded at 0.5, and on the weakest 0.1 % pool at 500 labels).

The default interval (``interval="jeffreys"``) is design-only, so that a wrong
calibration tail cannot make it wrong. The count of positives in the whole rest, of
which ``x`` have been found, is read from the Jeffreys posterior ``Gamma(x + 1/2,
rate=e)`` of a Poisson count seen with exposure ``e``, at two exposures: its upper
quantile at the *smallest* probability any rest item has had of being drawn
(``1 - prod(1 - min pi_b)`` over the batches; the uniform part of the design
guarantees it is positive) -- the hidden positives may all sit where the design looked
least -- and its lower quantile at the *largest* (``1 - prod(1 - max pi_b)``) -- they
may all sit where it looked hardest -- never below ``x`` nor above the rest's size.
It holds whatever the rest contains and the calibration says, and it is wide (on
large pools often most of [0, 1]) until many rest items are labeled: the benchmark's
figures are in ``benchmarks/results/acis.md``. Choose
``interval="model"`` when the scores' low tail is known to be well calibrated (the
model interval's failure above is silent). ``interval="delta"`` is a normal interval from the same variance (the
domain's delta-method variance plus the variance of ``R``'s predictive
distribution). All three give the same estimate.
When to stop, and what survives a failure
-----------------------------------------
``target_std_error`` turns the budget into a cap: the run stops after the first batch
(from the third on) whose reported standard error is at most the target, once the
estimate is defined and no zero-variance floor is in play. The history shows how the
standard error fell batch by batch (``res.plot()`` draws it as the interval's width),
which is what a person labeling by hand watches. If anything interrupts a run -- the
oracle raises, a person presses Ctrl-C (``KeyboardInterrupt``), the oracle returns
malformed labels, or a ``probabilities`` callable breaks -- the exception carries the
labels of the completed batches as ``exc.labeled`` (the same table as
``ACISResult.labeled``), so no answer is lost.

Extension point
---------------
``acis(..., probabilities=...)`` replaces the isotonic calibration by per-item
probabilities of a positive: a fixed array (used at every iteration, as the
``sawade`` baseline does with the raw scores) or a callable
``probabilities(labeled_items, labeled_labels) -> ndarray (n_items,)`` called
before every batch with the labels so far (empty arrays before the first).

The calibrated-posterior variant -- each item's posterior probability of being
positive under a score mixture refitted to the labels before every batch -- was
measured through this hook (``benchmarks/acis.py --bayes``, 40 paired runs per
setting at 100 labels) and is not built in: against isotonic calibration its MSE
differed by -0.0024 +- 0.0018 on a 1% pool and +0.0021 +- 0.0026 on a 0.1% pool
(neither distinguishable from zero) while each run cost about 40 s of model fits
instead of 0.05 s. The recipe is ``mixture_calibration`` in that benchmark.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import isotonic_regression
from scipy.stats import gamma, norm

from bayeval.core import _validate as V
from bayeval.core._validate import as_binary_vector, as_scores, as_seed_sequence, check_same_length

__all__ = ["ACISResult", "acis", "sawade", "uniform_sampling", "top_k"]

#: Lower clip of the F estimate plugged into the proposal, so that predicted
#: negatives (whose proposal weight is proportional to G) never get zero mass.
_G_FLOOR = 0.05
#: ``target_std_error`` never stops a run before this many batches (see ``acis``).
_MIN_STOP_BATCHES = 3
#: Inclusion probabilities within this distance of 1 are treated as certainties.
_CERTAIN = 1.0 - 1e-12
#: Ways to compute the interval (``acis(interval=...)``).
_INTERVALS = ("model", "jeffreys", "delta")
#: Bounds of the prior strength ``a`` of the rest stratum's rate multiplier (see
#: ``_rest_model``): the calibration's extrapolation to the rest is never trusted more
#: than a Gamma(a, a) prior with this ``a`` says (coefficient of variation 1/sqrt(a)).
_REST_THETA_PRIOR = 1.0
#: Draws of the rest count's predictive distribution (its quantiles give the interval).
_REST_DRAWS = 1000
#: The model's count of the rest's positives enters the estimate only when the labels
#: pin it down within about a factor e (standard deviation of its log at most this);
#: otherwise the rest's Horvitz-Thompson count does (see ``acis``).
_REST_MODEL_SDLOG = 1.0
#: Prior of the rest calibration (logistic regression of the labels on the logit of
#: probability scores): intercept ~ N(0, 2^2), slope ~ N(1, 2^2), i.e. "the scores are
#: roughly calibrated". For other scores (standardized): both ~ N(0, 10^2).
_PLATT_PRIOR_PROB = (np.array([0.0, 1.0]), np.array([2.0, 2.0]))
_PLATT_PRIOR_OTHER = (np.array([0.0, 0.0]), np.array([10.0, 10.0]))

HISTORY_COLUMNS = [
    "iteration",
    "batch_size",
    "labels_spent",
    "domain_size",
    "iteration_estimate",
    "iteration_variance",
    "variance_floor",
    "rest_labels",
    "rest_positives",
    "estimate",
    "variance",
    "ci_low",
    "ci_high",
]


# ----------------------------------------------------------------------------------
# Result
# ----------------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class ACISResult:
    """Outcome of an F-score estimation run (ACIS or a baseline).

    Attributes
    ----------
    estimate : float
        Estimated F_alpha of the pool (NaN if no informative item was labeled).
    variance : float
        Estimated sampling variance of ``estimate`` (with the zero-variance floor).
    interval : tuple of float
        ``interval_prob`` interval, clipped to [0, 1] (see ``interval_method``).
    labeled : pandas.DataFrame
        One row per labeled item, in the order of labeling: ``item`` (position in
        the pool), ``label`` (0/1 from the oracle), ``prediction``, ``score``,
        ``batch`` (1-based iteration), ``inclusion_probability`` (probability with
        which the item was drawn in its batch; 1 for deterministic choices) and
        ``weight`` (its importance weight in its batch, ``1 / inclusion_probability``,
        in units of items).
    history : pandas.DataFrame
        One row per batch: ``iteration``, ``batch_size``, ``labels_spent``,
        ``domain_size``, ``iteration_estimate`` and ``iteration_variance`` (this
        batch's own estimate), ``variance_floor`` (the zero-variance floor included in
        it), ``rest_labels`` and ``rest_positives`` (items labeled in, and positives
        found in, ACIS's current rest stratum; 0 for the other methods), and the
        reported ``estimate``, ``variance``, ``ci_low``, ``ci_high`` after the batch
        (for ACIS: averaged over the last iterations).
    method : str
        ``"acis"``, ``"sawade"``, ``"uniform"``, ``"top_k"`` or ``"score_mixture"``
        (:func:`bayeval.fscore.bayesian.score_mixture_fscore`).
    alpha : float
        Weight of precision in F_alpha (0.5 is F1).
    interval_prob : float
        Coverage of ``interval``.
    n_items : int
        Size of the pool.
    posterior : Posterior or None
        The fitted score-mixture posterior (``method == "score_mixture"`` only).
    interval_method : str
        How ``interval`` was computed: ``"jeffreys"`` (ACIS's default: the rest
        stratum's count of positives gets a design-only Jeffreys posterior),
        ``"model"`` (that count is read from the calibration model's predictive
        distribution) or ``"delta"`` (the normal interval of the delta-method variance;
        every other method).
    intervals : dict
        Every interval the run supports, by method, from the same estimate: ACIS with
        its rest stratum gives ``"jeffreys"``, ``"model"`` and ``"delta"`` (so the
        design-only interval can be read beside the narrower one that trusts the
        calibration's low tail, without a second run); other runs give their one
        interval. ``intervals[interval_method] == interval``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.fscore.acis import acis
    >>> rng = np.random.default_rng(0)
    >>> y = (rng.random(5000) < 0.02).astype(int)
    >>> scores = np.clip(0.6 * y + rng.normal(0.2, 0.15, 5000), 0, 1)
    >>> res = acis(scores, scores > 0.5, lambda idx: y[idx], budget=60, random_seed=1)
    >>> len(res.labeled), list(res.history["labels_spent"])
    (60, [10, 30, 60])
    >>> res.interval[0] <= res.estimate <= res.interval[1]
    True
    """

    estimate: float
    variance: float
    interval: tuple[float, float]
    labeled: pd.DataFrame
    history: pd.DataFrame
    method: str
    alpha: float
    interval_prob: float
    n_items: int
    posterior: object = None
    interval_method: str = "delta"
    intervals: dict | None = None

    def __post_init__(self):
        if self.intervals is None:
            object.__setattr__(self, "intervals", {self.interval_method: tuple(self.interval)})

    @property
    def std_error(self) -> float:
        """Square root of ``variance``."""
        return float(np.sqrt(self.variance))

    @property
    def n_labels(self) -> int:
        """Number of oracle calls (distinct labeled items)."""
        return len(self.labeled)

    def __repr__(self) -> str:
        lo, hi = self.interval
        others = "".join(
            f", {k}=({a:.4f}, {b:.4f})"
            for k, (a, b) in self.intervals.items()
            if k != self.interval_method
        )
        return (
            f"ACISResult(method={self.method!r}, alpha={self.alpha:g}, "
            f"estimate={self.estimate:.4f}, std_error={self.std_error:.4f}, "
            f"interval=({lo:.4f}, {hi:.4f}) [{self.interval_method}]{others}, "
            f"n_labels={self.n_labels}, n_items={self.n_items})"
        )

    def plot(self, ax=None, *, truth: float | None = None, label: str | None = None, color=None):
        """Draw the estimate and its interval against the number of labels spent.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Axes to draw on; a new figure is created when omitted.
        truth : float, optional
            True F-score, drawn as a dashed horizontal line.
        label : str, optional
            Legend label; defaults to the method name.
        color : optional
            Any matplotlib color.

        Returns
        -------
        matplotlib.axes.Axes

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import numpy as np
        >>> from bayeval.fscore.acis import acis
        >>> rng = np.random.default_rng(0)
        >>> y = (rng.random(5000) < 0.02).astype(int)
        >>> scores = np.clip(0.6 * y + rng.normal(0.2, 0.15, 5000), 0, 1)
        >>> res = acis(scores, scores > 0.5, lambda idx: y[idx], budget=60, random_seed=1)
        >>> ax = res.plot(truth=0.8)
        >>> ax.get_xlabel()
        'labels spent'
        """
        if ax is None:
            import matplotlib.pyplot as plt

            _, ax = plt.subplots(figsize=(5, 3.5))
        h = self.history
        x = h["labels_spent"].to_numpy()
        name = label if label is not None else self.method
        (line,) = ax.plot(x, h["estimate"].to_numpy(), marker="o", ms=3, label=name, color=color)
        ax.fill_between(
            x,
            h["ci_low"].to_numpy(),
            h["ci_high"].to_numpy(),
            color=line.get_color(),
            alpha=0.2,
            linewidth=0,
        )
        if truth is not None:
            ax.axhline(truth, color="0.3", linestyle="--", linewidth=1, label="true F")
        ax.set_xlabel("labels spent")
        f_name = "F1" if self.alpha == 0.5 else f"F (alpha={self.alpha:g})"
        ax.set_ylabel(f"{f_name} estimate, {self.interval_prob:.0%} interval")
        ax.set_ylim(-0.02, 1.02)
        ax.legend(loc="best", fontsize="small")
        return ax


# ----------------------------------------------------------------------------------
# Validation (ACIS-specific; generic array checks come from bayeval.core._validate)
# ----------------------------------------------------------------------------------


def _check_rng(random_seed) -> np.random.Generator:
    """The run's random stream, from any seed :func:`bayeval.core._validate.as_seed_sequence` reads."""
    return np.random.default_rng(as_seed_sequence(random_seed))


def check_fscore_inputs(scores, predictions, oracle, budget, alpha, first_batch, interval_prob):
    """Checks shared by ``acis`` and the baselines; returns clean arrays and numbers."""
    s = as_scores(scores, "scores")
    yhat = as_binary_vector(predictions, "predictions")
    check_same_length(s.size, "predictions", yhat.size)
    if not callable(oracle):
        raise TypeError(
            "`oracle` must be a callable that takes an int array of item positions and "
            f"returns their 0/1 labels (e.g. `lambda idx: y_true[idx]`), got {V.describe(oracle)}."
        )
    n = s.size
    n_pred = int(yhat.sum())
    if n_pred == 0:
        raise ValueError(
            "`predictions` contains no predicted positive, so the F-score is 0 (if the "
            "pool holds any positive) or undefined; there is nothing to estimate. Check "
            "the threshold that produced the predictions."
        )
    alpha = V.as_real_in(
        alpha,
        "alpha",
        lo=0,
        hi=1,
        lo_open=True,
        hi_open=True,
        hint=" It weights precision against recall; 0.5 gives F1.",
    )
    first_batch = V.as_positive_int(first_batch, "first_batch", minimum=1)
    budget = V.as_positive_int(budget, "budget", minimum=1, hint=" It is the number of items to label.")
    if budget < first_batch:
        raise ValueError(
            f"`budget` ({budget}) is smaller than `first_batch` ({first_batch}); lower "
            "`first_batch` or raise the budget."
        )
    if budget > n:
        raise ValueError(
            f"`budget` ({budget}) exceeds the number of items in the pool ({n}); an item "
            "is labeled at most once. Use budget <= len(scores)."
        )
    interval_prob = V.as_real_in(interval_prob, "interval_prob", lo=0, hi=1, lo_open=True, hi_open=True)
    return s, yhat, alpha, first_batch, budget, interval_prob


def _check_target(target_std_error):
    """``target_std_error``: None or a standard error in (0, 0.5]."""
    if target_std_error is None:
        return None
    return V.as_real_in(
        target_std_error,
        "target_std_error",
        lo=0,
        hi=0.5,
        lo_open=True,
        hi_open=False,
        hint=" It is the standard error at which to stop labeling, e.g. 0.05; None labels the whole budget.",
    )


def _check_probability_vector(p, n: int, name: str) -> np.ndarray:
    return V.as_probability_vector(p, n, name)


def _call_oracle(oracle, items: np.ndarray) -> np.ndarray:
    """Ask the oracle for the labels of ``items`` and check what comes back."""
    out = oracle(items.copy())
    try:
        arr = np.asarray(out)
    except Exception as exc:  # ragged output and the like
        raise TypeError(f"`oracle` returned something that is not an array ({exc}).") from exc
    if arr.shape != items.shape:
        raise ValueError(
            f"`oracle` must return one 0/1 label per requested item: it was asked for "
            f"{items.size} item(s) and returned {V.describe(arr)}. Return e.g. "
            "`y_true[idx]` for the int array `idx` it receives."
        )
    if arr.dtype == bool:
        return arr.astype(np.int8)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"`oracle` must return numeric 0/1 labels, got {V.describe(arr)}.")
    ok = (arr == 0) | (arr == 1)
    if not ok.all():
        bad = np.unique(arr[~ok])[:5]
        raise ValueError(
            "`oracle` must return labels in {0, 1} (or booleans), got values such as "
            f"{', '.join(repr(v.item()) for v in bad)}. Map your classes to 0/1 inside the oracle."
        )
    return arr.astype(np.int8)


# ----------------------------------------------------------------------------------
# Numerical building blocks
# ----------------------------------------------------------------------------------


def _batch_sizes(budget: int, first_batch: int) -> list[int]:
    """Doubling batch sizes, the last one cut so that they sum to ``budget``."""
    sizes, b, spent = [], first_batch, 0
    while spent < budget:
        take = min(b, budget - spent)
        sizes.append(take)
        spent += take
        b *= 2
    return sizes


def _group_ties(x_sorted: np.ndarray, y_sorted: np.ndarray):
    """Unique x values of a sorted array, their counts and the mean y per value."""
    starts = np.flatnonzero(np.r_[True, x_sorted[1:] != x_sorted[:-1]])
    counts = np.diff(np.r_[starts, x_sorted.size])
    means = np.add.reduceat(y_sorted, starts) / counts
    return x_sorted[starts], counts, means


def _isotonic(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Isotonic (non-decreasing) fit of y on x; returns knots and fitted values."""
    order = np.argsort(x, kind="stable")
    ux, counts, means = _group_ties(x[order], y[order].astype(np.float64))
    fit = isotonic_regression(means, weights=counts.astype(np.float64), increasing=True).x
    return ux, np.clip(fit, 0.0, 1.0)


def _calibration_prior(s: np.ndarray, yhat: np.ndarray) -> np.ndarray:
    """Isotonic fit of the predicted labels on the scores, evaluated at every item."""
    neg, pos = s[yhat == 0], s[yhat == 1]
    if neg.size == 0 or pos.size == 0 or neg.max() < pos.min():
        # Predictions are a threshold of the scores: the fit is the predictions themselves.
        return yhat.astype(np.float64)
    ux, fit = _isotonic(s, yhat)
    return fit[np.searchsorted(ux, s)]


def _proposal(c: np.ndarray, yhat: np.ndarray, g: float, alpha: float) -> np.ndarray:
    """Sawade's variance-minimizing importance weights for F_alpha (unnormalized).

    ``q^2`` is linear in ``c`` within each prediction cell: for predicted positives
    ``c (1 - g)^2 + alpha^2 (1 - c) g^2``, for predicted negatives
    ``(1 - alpha)^2 c g^2``. Computed for all items as negatives, then fixed up at
    the (usually few) predicted positives.
    """
    g = min(max(g, _G_FLOOR), 1.0)
    a1 = alpha**2 * g**2
    q2 = c * ((1.0 - alpha) ** 2 * g**2)
    pos = np.flatnonzero(yhat)
    q2[pos] = np.maximum(a1 + ((1.0 - g) ** 2 - a1) * c[pos], 0.0)
    return np.sqrt(q2, out=q2)


def _inclusion_probabilities(q: np.ndarray, n: int) -> np.ndarray:
    """Probabilities proportional to ``q``, capped at 1, summing to ``n``."""
    m = q.size
    if n >= m:
        return np.ones(m)
    total = q.sum()
    if n * q.max() < total:  # no probability reaches 1: plain proportional allocation
        return q * (n / total)
    # Largest n weights, descending: some of them may have to be capped at 1.
    top = np.argpartition(-q, n - 1)[:n]
    top = top[np.argsort(-q[top], kind="stable")]
    q_top = q[top]
    k = np.arange(n)
    rest = total - np.r_[0.0, np.cumsum(q_top)[:-1]]  # sum of q outside the k largest
    lam = (n - k) / rest
    # Smallest k such that, with the k largest capped, the next one stays below 1.
    ok = lam * q_top < 1.0
    k_cap = int(np.argmax(ok)) if ok.any() else n
    pi = np.minimum(lam[k_cap] * q, 1.0) if k_cap < n else np.zeros(m)
    pi[top[:k_cap]] = 1.0
    return pi


def _systematic_sample(pi: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """Positions of an exact-size sample with inclusion probabilities ``pi``.

    Certainties are taken; the others are drawn by systematic sampling along the
    order in which they are given (the caller passes the candidates in a random
    order: randomized systematic pips sampling). The first-order inclusion
    probabilities are exactly ``pi`` and no item is drawn twice.
    """
    if pi.max() < _CERTAIN:  # the common case on large pools: no certainties
        certain, rest, m = np.empty(0, dtype=np.intp), None, n
        cum = np.cumsum(pi)
    else:
        uncertain = pi < _CERTAIN
        certain = np.flatnonzero(~uncertain)
        m = n - certain.size
        if m <= 0:
            return certain[:n]
        rest = np.flatnonzero(uncertain)
        cum = np.cumsum(pi[rest])
    cum *= m / cum[-1]
    points = rng.random() + np.arange(m)
    chosen = np.searchsorted(cum, points, side="right")
    if rest is not None:
        chosen = rest[chosen]
    picked = np.r_[certain, chosen]
    if np.unique(picked).size != n:  # pragma: no cover - guards a numerical invariant
        raise RuntimeError("internal error: systematic sampling drew an item twice.")
    return picked


def _typical_draws(pi: np.ndarray, c: np.ndarray, yhat: np.ndarray) -> dict:
    """Typical weight and finite-population factor of a draw of each kind.

    For true positives, false positives and false negatives: the inclusion
    probabilities of the non-certainty candidates that could be of that kind
    (predicted positives, predicted positives, predicted negatives), averaged with
    weights ``c``, ``1 - c`` and ``c`` (the calibrated probability of being of that
    kind). Returned as ``(1 / pbar, 1 - pbar)``, or None if there is no candidate.
    """
    cell = yhat.astype(np.intp) + 2 * (pi >= _CERTAIN)  # 0, 1: uncertain cells
    sums = [np.bincount(cell, weights=w, minlength=4)[:2] for w in (c * pi, c, pi)]
    count = np.bincount(cell, minlength=4)[:2]
    c_pi, c_sum, pi_sum = sums

    def typ(num, den):
        if den <= 0 or num <= 0:
            return None
        pbar = num / den
        return 1.0 / pbar, 1.0 - pbar

    return {
        "tp": typ(c_pi[1], c_sum[1]),
        "fp": typ(pi_sum[1] - c_pi[1], count[1] - c_sum[1]),
        "fn": typ(c_pi[0], c_sum[0]),
    }


def _estimate(
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
    the floor for kinds never drawn.
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
    rand = pi < _CERTAIN
    # Delta-method variance of the ratio (eq. 6 with a Hajek finite-population factor).
    var, degenerate = 0.0, True
    if rand.sum() >= 2:
        w = d[rand] * v_weight[rand]
        sw = w.sum()
        c_bessel = 1.0 - float(np.dot(w, w)) / sw**2 if sw > 0 else 0.0
        if c_bessel > 0:
            r = d[rand] * (a[rand] - g * v[rand])
            f = 1.0 - pi[rand]
            rbar = float(np.dot(f, r) / f.sum()) if f.sum() > 0 else 0.0
            dev = r - rbar
            spread = float(np.max(np.abs(dev))) if dev.size else 0.0
            degenerate = spread <= 1e-9 * max(float(np.max(np.abs(r))), 1e-300)
            var = 0.0 if degenerate else float(np.dot(f, dev**2)) / (c_bessel * den**2)
    if not degenerate:
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


def _interval(est: float, var: float, z: float) -> tuple[float, float]:
    if not (math.isfinite(est) and math.isfinite(var)):
        return 0.0, 1.0
    half = z * math.sqrt(max(var, 0.0))
    return max(0.0, est - half), min(1.0, est + half)


def _platt_feature(s: np.ndarray) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """Feature and prior of the rest calibration (a logistic regression on the scores).

    Probability scores (all in [0, 1]) enter as their logit (clipped at 1e-9 from 0 and
    1), with a prior centred on "the scores are calibrated"; other scores are
    standardized and get a vague prior (see ``_PLATT_PRIOR_*``).
    """
    if s.min() >= 0.0 and s.max() <= 1.0:
        p = np.clip(s, 1e-9, 1.0 - 1e-9)
        return np.log(p) - np.log1p(-p), _PLATT_PRIOR_PROB
    sd = float(s.std())
    return (s - float(s.mean())) / (sd if sd > 0 else 1.0), _PLATT_PRIOR_OTHER


def _platt_fit(t: np.ndarray, y: np.ndarray, prior) -> tuple[np.ndarray, np.ndarray]:
    """Posterior mode and Laplace covariance of ``logit P(y=1) = b0 + b1 t`` (Newton).

    ``prior`` = (means, standard deviations) of independent normal priors on
    ``(b0, b1)``; with no labels the mode is the prior mean. Selection of the labeled
    items depends on the scores only, so the fit is not distorted by the sampling.
    """
    mean, sd = prior
    prec = 1.0 / sd**2
    b = mean.copy()
    y = y.astype(np.float64)
    for _ in range(50):
        eta = b[0] + b[1] * t
        p = 0.5 * (1.0 + np.tanh(0.5 * eta))  # logistic, overflow-free
        w = p * (1.0 - p)
        grad = np.array([np.sum(y - p), np.dot(t, y - p)]) - prec * (b - mean)
        h = np.array(
            [[w.sum(), np.dot(w, t)], [np.dot(w, t), np.dot(w, t * t)]]
        ) + np.diag(prec)
        step = np.linalg.solve(h, grad)
        b = b + step
        if np.max(np.abs(step)) < 1e-8:
            break
    eta = b[0] + b[1] * t
    p = 0.5 * (1.0 + np.tanh(0.5 * eta))
    w = p * (1.0 - p)
    h = np.array([[w.sum(), np.dot(w, t)], [np.dot(w, t), np.dot(w, t * t)]]) + np.diag(prec)
    return b, np.linalg.inv(h)


def _logistic(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _rest_model(
    t_unl, t_drawn, y_drawn, coef, cov, rng, *, prior=_REST_THETA_PRIOR, draws=_REST_DRAWS
):
    """Predictive distribution of the number of positives among the unlabeled rest items.

    Model: a rest item with feature ``t`` (see ``_platt_feature``) is positive with
    probability ``theta * logistic(b0 + b1 t)``, independently of the others, so the
    unlabeled rest holds ``R ~ Poisson(theta * C)`` positives, ``C`` the sum of those
    probabilities over its items. The calibration ``(b0, b1)`` has the Laplace
    posterior ``N(coef, cov)`` of ``_platt_fit`` (all labels so far); the multiplier
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
    c_tot = _logistic(b[:, :1] + b[:, 1:] * tb) @ nb
    e = _logistic(b[:, :1] + b[:, 1:] * t_drawn).sum(axis=1) if t_drawn.size else np.zeros(draws)
    x = float(y_drawn.sum())
    theta = rng.gamma(prior + x, 1.0 / (prior + e))
    r = rng.poisson(theta * c_tot).astype(np.float64)
    c_mode = float(_logistic(coef[0] + coef[1] * tb) @ nb)
    e_mode = float(_logistic(coef[0] + coef[1] * t_drawn).sum()) if t_drawn.size else 0.0
    return dict(
        r_model=c_mode * (prior + x) / (prior + e_mode),
        sdlog=float(np.std(np.log(np.maximum(c_tot, 1e-300)))),
        var_r=float(r.var()),
        r_sorted=np.sort(r),
    )


def _rest_interval(est, var_domain, den, rest, *, alpha, interval_prob, method="model", r_bar=None):
    """Estimate, variance and interval that account for the rest stratum.

    ``rest`` describes the items outside the current top-K domain (see
    ``_importance_sampling_run``): ``r_hat`` (the count of positives among its
    unlabeled items that the estimate uses), ``r_sorted`` and ``var_r`` (draws and
    variance of that count's predictive distribution, see ``_rest_model``) and, for the
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
    down = math.hypot(half, max(est - f_at(r_hi), 0.0))
    up = math.hypot(half, max(f_at(r_lo) - est, 0.0))
    return est, var, max(0.0, est - down), min(1.0, est + up)


class _Book:
    """Labels bought so far, running sums of the labeled stratum, and the history."""

    def __init__(
        self, s, yhat, alpha, interval_prob, average_last, target_std_error=None, interval="delta"
    ):
        self.s, self.yhat, self.alpha = s, yhat, alpha
        self.target_std_error = target_std_error
        self.interval_prob = interval_prob
        self.interval = interval
        self.z = float(norm.ppf(0.5 + interval_prob / 2.0))
        # Rest stratum (outside the top-K domain), see ``_rest_interval``: its current
        # size, the items drawn from it with their labels, and the probability that an
        # item of the current rest has been drawn by now.
        self.rest = None
        self.average_last = average_last
        self.is_labeled = np.zeros(s.size, dtype=bool)
        self.items: list[np.ndarray] = []
        self.labels: list[np.ndarray] = []
        self.pis: list[np.ndarray] = []
        self.batch_ids: list[np.ndarray] = []
        self.a_fixed = 0.0  # sum of y * yhat over labeled items
        self.v_fixed = 0.0  # sum of v over labeled items
        self.rows: list[dict] = []
        self._exact: list[bool] = []
        self.intervals: dict = {}  # every interval after the latest batch (see ``_combined``)

    @property
    def n_labeled(self) -> int:
        return int(sum(x.size for x in self.items))

    def labeled_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        if not self.items:
            return np.empty(0, dtype=np.intp), np.empty(0, dtype=np.int8)
        return np.concatenate(self.items), np.concatenate(self.labels)

    def add(self, items, labels, pi):
        """Record labeled items of the batch being bought (the next ``record``)."""
        batch = len(self.rows) + 1
        self.items.append(items)
        self.labels.append(labels)
        self.pis.append(pi)
        self.batch_ids.append(np.full(items.size, batch, dtype=np.int64))
        self.is_labeled[items] = True
        yh = self.yhat[items].astype(np.float64)
        y = labels.astype(np.float64)
        self.a_fixed += float(np.dot(y, yh))
        self.v_fixed += float((self.alpha * yh + (1.0 - self.alpha) * y).sum())

    def record(
        self, batch_size, domain_size, g_i, var_i, floor_i, *, exact=False, var_rest=0.0,
        den=math.nan,
    ):
        """Store one iteration; ``exact``: it labeled every candidate (a census).

        ``var_i`` is the delta-method variance of the sampled domain, ``var_rest`` that
        of the rest stratum (0 without one), ``den`` the estimated F denominator.
        """
        rest = self.rest
        self.rows.append(
            dict(
                iteration=len(self.rows) + 1,
                batch_size=batch_size,
                labels_spent=self.n_labeled,
                domain_size=domain_size,
                iteration_estimate=g_i,
                iteration_variance=(
                    min(var_i + floor_i + var_rest, 0.25) if math.isfinite(var_i) else math.nan
                ),
                variance_floor=floor_i,
                rest_labels=0 if rest is None else rest["n_drawn"],
                rest_positives=0 if rest is None else rest["x"],
                _var_domain=min(var_i + floor_i, 0.25) if math.isfinite(var_i) else math.nan,
                _den=den,
                _r_hat=math.nan if rest is None else rest["r_hat"],
            )
        )
        self._exact.append(exact)
        est, var, lo, hi = self._combined()
        self.rows[-1].update(estimate=est, variance=var, ci_low=lo, ci_high=hi)

    def _combined(self) -> tuple[float, float, float, float]:
        """Averaged estimate, its variance and interval after the latest batch."""
        rows = self.rows
        if self._exact[-1]:  # a census of the domain is exact: nothing to average
            rows = rows[-1:]
        usable = [r for r in rows if math.isfinite(r["iteration_estimate"])]
        usable = usable[-self.average_last :]
        if not usable:
            self.intervals = {"delta": (0.0, 1.0)}
            return math.nan, math.nan, 0.0, 1.0
        w = np.array([r["batch_size"] for r in usable], dtype=np.float64)
        w /= w.sum()
        est = float(np.dot(w, [r["iteration_estimate"] for r in usable]))
        # Iteration errors are martingale differences (each batch is unbiased for the
        # still-unlabeled part given the past), hence uncorrelated to first order.
        var = float(np.dot(w**2, [r["iteration_variance"] for r in usable]))
        self.intervals = {"delta": _interval(est, var, self.z)}
        if self.rest is None:
            return est, var, *self.intervals["delta"]
        if self.rest["size"] == 0:  # the domain is the whole pool: no count left to bound
            self.intervals = dict.fromkeys(_INTERVALS, self.intervals["delta"])
            return est, var, *self.intervals["delta"]
        var_domain = float(np.dot(w**2, [r["_var_domain"] for r in usable]))
        den = float(np.dot(w, [r["_den"] for r in usable]))
        r_bar = float(np.dot(w, [r["_r_hat"] for r in usable]))
        # Every interval of the run (they share the estimate; ``ACISResult.intervals``).
        for method in ("jeffreys", "model"):
            _, var_m, lo, hi = _rest_interval(
                est,
                var_domain,
                den,
                self.rest,
                alpha=self.alpha,
                interval_prob=self.interval_prob,
                method=method,
                r_bar=r_bar,
            )
            self.intervals[method] = (lo, hi)
        if self.interval == "delta":
            return est, var, *self.intervals["delta"]
        return est, var_m, *self.intervals[self.interval]

    def should_stop(self) -> bool:
        """The stopping rule of ``target_std_error`` (see :func:`acis`)."""
        if self.target_std_error is None or len(self.rows) < _MIN_STOP_BATCHES:
            return False  # early variances rest on a handful of labels: too often too low
        last = self.rows[-1]
        return (
            math.isfinite(last["estimate"])
            and last["variance_floor"] == 0.0
            and math.sqrt(last["variance"]) <= self.target_std_error
        )

    def labeled_frame(self) -> pd.DataFrame:
        """The labeled items so far, one row each, in the order of labeling."""
        items, labels = self.labeled_arrays()
        pi = np.concatenate(self.pis) if self.pis else np.empty(0)
        return pd.DataFrame(
            {
                "item": items.astype(np.int64),
                "label": labels.astype(np.int8),
                "prediction": self.yhat[items].astype(np.int8),
                "score": self.s[items],
                "batch": np.concatenate(self.batch_ids) if self.batch_ids else np.empty(0, int),
                "inclusion_probability": pi,
                "weight": 1.0 / pi,
            }
        )

    def result(self, method: str, interval_prob: float) -> ACISResult:
        labeled = self.labeled_frame()
        history = pd.DataFrame(self.rows, columns=HISTORY_COLUMNS)
        last = self.rows[-1]
        return ACISResult(
            estimate=float(last["estimate"]),
            variance=float(last["variance"]),
            interval=(float(last["ci_low"]), float(last["ci_high"])),
            labeled=labeled,
            history=history,
            method=method,
            alpha=self.alpha,
            interval_prob=interval_prob,
            n_items=int(self.s.size),
            interval_method=self.interval if self.rest is not None else "delta",
            intervals={k: (float(lo), float(hi)) for k, (lo, hi) in self.intervals.items()},
        )


@contextlib.contextmanager
def _keep_labels(book: _Book, method: str):
    """Re-raise any error of a run with the labels bought so far attached.

    The oracle may be a person: whatever fails (the oracle itself, its output, a
    ``probabilities`` callable), the completed batches' labels come back on the
    exception as ``exc.labeled`` (the ``labeled`` table of a result).
    """
    try:
        yield
    except BaseException as exc:  # KeyboardInterrupt too: a person stopping mid-run
        exc.labeled = book.labeled_frame()
        exc.add_note(
            f"{method}: stopped after {book.n_labeled} label(s) in completed batches; they are in "
            "this exception's `.labeled` (a DataFrame: item, label, prediction, score, batch, ...)."
        )
        raise


def _top_order(s: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` highest-scored items, by descending score, ties by position."""
    n = s.size
    if k >= n:
        return np.lexsort((np.arange(n), -s))
    kth = np.partition(s, n - k)[n - k]  # k-th largest value
    above = np.flatnonzero(s > kth)
    tied = np.flatnonzero(s == kth)[: k - above.size]
    top = np.r_[above, tied]
    return top[np.lexsort((top, -s[top]))]


# ----------------------------------------------------------------------------------
# The importance-sampling engine (ACIS and the Sawade baseline)
# ----------------------------------------------------------------------------------


def _importance_sampling_run(
    s,
    yhat,
    oracle,
    *,
    budget,
    alpha,
    first_batch,
    rng,
    proposal_floor,
    probabilities,
    beta,
    beta_iterations,
    top_k_prior,
    top_k_factor,
    average_last,
    initial_estimate,
    interval_prob,
    method,
    target_std_error=None,
    rest_share=0.0,
    rest_uniform=1.0,
    interval="delta",
    model_assist=False,
):
    n = s.size
    n_pred = int(yhat.sum())
    sizes = _batch_sizes(budget, first_batch)
    book = _Book(s, yhat, alpha, interval_prob, average_last, target_std_error, interval)
    use_rest = top_k_prior and rest_share > 0
    if use_rest:
        book.rest = dict(
            size=0, x=0, n_drawn=0, exposure=0.0, exposure_max=0.0, r_hat=0.0, r_model=0.0,
            sdlog=0.0, var_r=0.0, r_sorted=np.zeros(0),
        )
        rest_items: list[np.ndarray] = []
        rest_labels: list[np.ndarray] = []
        # Probability that an item of the current rest has never been drawn: at most
        # ``rest_missed`` (its complement bounds every item's exposure from below) and
        # at least ``rest_missed_best`` (its complement bounds it from above).
        rest_missed = rest_missed_best = 1.0
    if use_rest or model_assist:
        t_feat, platt_prior = _platt_feature(s)

    # Sampling domain per iteration (nested, known in advance).
    ks = []
    if top_k_prior:
        k_prev, spent = 0, 0
        for i, b in enumerate(sizes, start=1):
            k_i = min(n, max(k_prev, math.ceil(top_k_factor * (i + 1) * n_pred), spent + 2 * b))
            ks.append(k_i)
            k_prev, spent = k_i, spent + b
        order = _top_order(s, ks[-1])
        in_domain = yhat == 1
        k_done = 0

    c0 = _calibration_prior(s, yhat) if probabilities is None else None
    fixed_p = probabilities if (probabilities is not None and not callable(probabilities)) else None

    # Candidates are visited in a random order (systematic sampling along it). With
    # the top-K prior the domain is small and is shuffled per batch. Otherwise one
    # shuffle of the whole pool serves every batch (each batch has its own random
    # start), and the loop works on shuffled copies so that memory access stays
    # sequential; ``perm`` maps working positions back to items.
    perm = None
    s_w, yhat_w, c0_w, p_w = s, yhat, c0, fixed_p
    t_feat_w = t_feat if model_assist else None
    if not top_k_prior:
        perm = rng.permutation(n)
        s_w, yhat_w = s[perm], yhat[perm]
        if model_assist:
            t_feat_w = t_feat[perm]
        c0_w = c0[perm] if c0 is not None else None
        p_w = fixed_p[perm] if fixed_p is not None else None
    labeled_w = np.zeros(n, dtype=bool)
    if p_w is not None:
        p_w = proposal_floor + (1.0 - 2.0 * proposal_floor) * p_w

    def take(x, idx):  # x[idx], with idx None meaning "every working position"
        return x if idx is None else x[idx]

    with _keep_labels(book, method):
        g_prev = initial_estimate
        for i, b in enumerate(sizes, start=1):
            b_rest = 0
            if top_k_prior:
                in_domain[order[k_done : ks[i - 1]]] = True
                k_done = ks[i - 1]
                cand = np.flatnonzero(in_domain & ~labeled_w)
                cand = cand[rng.permutation(cand.size)]
                n_cand = cand.size
                if use_rest:
                    rest_pool = np.flatnonzero(~in_domain & ~labeled_w)
                    if b >= 2 and rest_pool.size:
                        b_rest = min(math.ceil(rest_share * b), b - 1, rest_pool.size)
            else:
                # Every working position is a candidate; labeled ones get q = 0 below.
                # (Avoids gathering whole-pool arrays at every batch.)
                cand = None
                n_cand = n - book.n_labeled

            # Probability of a positive for each candidate.
            if c0_w is not None:
                if i == 1:
                    c = take(c0_w, cand)
                else:
                    items, labels = book.labeled_arrays()
                    ux, fit = _isotonic(s[items], labels)
                    c_fit = np.interp(take(s_w, cand), ux, fit)
                    b_i = beta * max(0.0, 1.0 - (i - 2) / beta_iterations)
                    c = b_i * take(c0_w, cand) + (1.0 - b_i) * c_fit
            elif p_w is not None:
                c = take(p_w, cand)  # already rescaled to [proposal_floor, 1 - proposal_floor]
            else:
                items, labels = book.labeled_arrays()
                p_all = _check_probability_vector(
                    probabilities(items.copy(), labels.copy()), n, "probabilities(...) output"
                )
                c = take(p_all if perm is None else p_all[perm], cand)
            if p_w is None:
                c = proposal_floor + (1.0 - 2.0 * proposal_floor) * c

            yhat_c = take(yhat_w, cand)
            # Model assistance: the calibration's expected counts over the unlabeled
            # candidates, plus the batch's Horvitz-Thompson estimate of the residuals.
            a_off = v_off = 0.0
            m_c = None
            if use_rest or model_assist:
                lab_items, lab_labels = book.labeled_arrays()
                coef, cov = _platt_fit(t_feat[lab_items], lab_labels, platt_prior)
            if model_assist:
                m_c = _logistic(coef[0] + coef[1] * take(t_feat_w, cand))
                unl_c = None if cand is not None else ~labeled_w
                m_u, yh_u = take(m_c, unl_c), take(yhat_c, unl_c).astype(np.float64)
                a_off = float(np.dot(m_u, yh_u))
                v_off = alpha * float(yh_u.sum()) + (1.0 - alpha) * float(m_u.sum())
            q = _proposal(c, yhat_c, g_prev, alpha)
            if cand is None:
                q[labeled_w] = 0.0  # never drawn again (zero-width systematic interval)
            b_dom = b - b_rest
            pi = _inclusion_probabilities(q, b_dom)
            pick = _systematic_sample(pi, b_dom, rng)
            pos_b, pi_b = (pick if cand is None else cand[pick]), pi[pick]
            items_b = pos_b if perm is None else perm[pos_b]
            if use_rest and rest_pool.size:
                # Rest calibration: logistic regression of all labels so far on the
                # scores; the rest is sampled in proportion to it, mixed with uniform.
                rest_pool = rest_pool[rng.permutation(rest_pool.size)]
                t_r = t_feat[rest_pool]
                c_r = _logistic(coef[0] + coef[1] * t_r)
            if b_rest:  # the rest stratum: a PPS sample of what is outside
                c_sum = float(c_r.sum())
                q_r = np.full(rest_pool.size, rest_uniform / rest_pool.size)
                if rest_uniform < 1.0 and c_sum > 0:
                    q_r += (1.0 - rest_uniform) * c_r / c_sum
                pi_all = _inclusion_probabilities(q_r, b_rest)
                pick_r = _systematic_sample(pi_all, b_rest, rng)
                items_r, pi_r = rest_pool[pick_r], pi_all[pick_r]
                rest_missed *= 1.0 - float(pi_all.min())
                rest_missed_best *= 1.0 - float(pi_all.max())
                labels_all = _call_oracle(oracle, np.r_[items_b, items_r])
                labels_b, labels_r = labels_all[:b_dom], labels_all[b_dom:]
            else:
                labels_b = _call_oracle(oracle, items_b)

            # Typical inclusion probability of a would-be draw of each kind (for the
            # zero-variance floor): candidates weighted by the calibrated probability
            # of being of that kind. Computed only if needed.
            def typical(pi=pi, c=c, yhat_c=yhat_c, unl=None if cand is not None else ~labeled_w):
                if unl is None:
                    return _typical_draws(pi, c, yhat_c)
                return _typical_draws(pi[unl], c[unl], yhat_c[unl])

            labeled_w[pos_b] = True
            # The rest's positives (all predicted negatives) add (1 - alpha) * their count
            # to the denominator, nothing to the numerator: those drawn in this batch,
            # plus the predicted count among the still-unlabeled rest items.
            v_rest, rest_model = 0.0, None
            if use_rest:
                if b_rest:
                    rest_items.append(items_r)
                    rest_labels.append(labels_r)
                    labeled_w[items_r] = True
                drawn = np.concatenate(rest_items) if rest_items else np.empty(0, np.intp)
                outside = ~in_domain[drawn]
                drawn = drawn[outside]
                found = np.concatenate(rest_labels)[outside] if rest_items else drawn
                if rest_pool.size:
                    unl = np.ones(rest_pool.size, dtype=bool)
                    if b_rest:
                        unl[pick_r] = False
                    rest_model = _rest_model(t_r[unl], t_feat[drawn], found, coef, cov, rng)
                    # The estimate's count of the unlabeled rest's positives: the model's
                    # where the labels pin it down, else this batch's Horvitz-Thompson
                    # count (its rest draws: unbiased, and usually 0).
                    if rest_model["sdlog"] <= _REST_MODEL_SDLOG:
                        rest_model["r_hat"] = rest_model["r_model"]
                    elif b_rest:
                        rest_model["r_hat"] = float(np.sum(labels_r / pi_r) - labels_r.sum())
                    else:
                        rest_model["r_hat"] = 0.0
                    v_rest = (1.0 - alpha) * (
                        (float(labels_r.sum()) if b_rest else 0.0) + rest_model["r_hat"]
                    )
            g_i, var_i, floor_i = _estimate(
                alpha=alpha,
                a_fixed=book.a_fixed + a_off,
                v_fixed=book.v_fixed + v_rest + v_off,
                y=labels_b,
                yhat=yhat[items_b],
                d=1.0 / pi_b,
                pi=pi_b,
                typical=typical,
                m=None if m_c is None else m_c[pick],
            )
            yh_b = yhat[items_b].astype(np.float64)
            if m_c is None:
                den_i = (
                    book.v_fixed
                    + v_rest
                    + float(np.dot(1.0 / pi_b, alpha * yh_b + (1.0 - alpha) * labels_b))
                )
            else:
                den_i = (
                    book.v_fixed
                    + v_rest
                    + v_off
                    + float(np.dot(1.0 / pi_b, (1.0 - alpha) * (labels_b - m_c[pick])))
                )
            var_rest = 0.0
            if rest_model is not None and math.isfinite(g_i) and den_i > 0:
                var_rest = ((1.0 - alpha) * g_i / den_i) ** 2 * rest_model["var_r"]
            book.add(items_b, labels_b, pi_b)
            if b_rest:
                book.add(items_r, labels_r, pi_r)
            exact = b_dom == n_cand
            if use_rest:
                empty = dict(r_hat=0.0, r_model=0.0, sdlog=0.0, var_r=0.0, r_sorted=np.zeros(0))
                book.rest = dict(
                    size=int(np.count_nonzero(~in_domain)),
                    x=int(found.sum()),
                    n_drawn=int(drawn.size),
                    exposure=1.0 - rest_missed,
                    exposure_max=1.0 - rest_missed_best,
                    **(rest_model if rest_model is not None else empty),
                )
                exact = exact and not np.any(~in_domain & ~labeled_w)
            domain_size = int(np.count_nonzero(in_domain)) if top_k_prior else n
            book.record(
                b, domain_size, g_i, var_i, floor_i, exact=exact, var_rest=var_rest, den=den_i
            )
            if math.isfinite(g_i):
                g_prev = g_i
            if book.should_stop():
                break
    return book.result(method, interval_prob)


# ----------------------------------------------------------------------------------
# Public functions
# ----------------------------------------------------------------------------------


def acis(
    scores,
    predictions,
    oracle: Callable[[np.ndarray], np.ndarray],
    *,
    budget: int,
    alpha: float = 0.5,
    first_batch: int = 10,
    random_seed=None,
    proposal_floor: float = 0.02,
    beta: float = 0.5,
    beta_iterations: int = 3,
    top_k_prior: bool = True,
    top_k_factor: float = 3.0,
    average_last: int = 3,
    initial_estimate: float = 0.5,
    interval_prob: float = 0.95,
    probabilities=None,
    target_std_error: float | None = None,
    rest_share: float = 0.05,
    rest_uniform: float = 0.2,
    interval: str = "jeffreys",
    model_assist: bool = True,
) -> ACISResult:
    """Estimate the F-score of a classifier on a pool with active calibration + importance sampling.

    Algorithm 1 of Poms et al. (2021): isotonic calibration of the scores, Sawade's
    variance-minimizing importance distribution for F_alpha, doubling batches drawn
    from the unlabeled items, reuse of all earlier labels, averaging of the last
    iteration estimates and the single-trial variance estimator -- plus a small
    random share of every batch outside the top-K domain, drawn where a logistic
    calibration of the scores expects positives (``rest_share``, ``rest_uniform``),
    that calibration as a control variate (``model_assist``), and an interval that
    accounts for positives that may hide outside the domain (``interval``). See the module
    docstring (``bayeval.fscore.acis``) for the exact estimator, sampling design and
    variance, and for how to plug in other probabilities.

    Parameters
    ----------
    scores : array-like of shape (n_items,)
        Classifier scores (higher = more likely positive); any finite values.
    predictions : array-like of shape (n_items,)
        Hard predictions, 0/1 or bool. At least one must be positive.
    oracle : callable
        ``oracle(idx) -> labels``: takes an int array of item positions (never an
        item labeled before) and returns their true labels, 0/1 or bool, one per
        position.
    budget : int
        Number of items to label (oracle calls on distinct items), at least
        ``first_batch`` and at most ``n_items``.
    alpha : float in (0, 1), default 0.5
        Weight of precision in ``F = tp / (alpha (tp + fp) + (1 - alpha) (tp + fn))``;
        0.5 gives F1.
    first_batch : int, default 10
        Size of the first batch; each next batch is twice the previous one.
    random_seed : None, int, numpy.random.SeedSequence or numpy.random.Generator
        Source of randomness: the same seed labels the same items.
    proposal_floor : float in (0, 0.5), default 0.02
        Calibrated probabilities are rescaled from [0, 1] to [proposal_floor, 1 -
        proposal_floor], so that every candidate keeps a positive probability of
        being drawn.
        (The paper gives no value; 0.02 and ``average_last=3`` did best among the few
        values we tried on synthetic rare-category pools: smaller values leave false
        negatives unsampled more often, which biases F upwards and makes the interval
        too narrow.)
    beta : float in [0, 1], default 0.5
        Initial weight of the calibration prior (isotonic fit to the predictions) in
        the blend with the fit to the true labels.
    beta_iterations : int, default 3
        Number of iterations over which that weight falls linearly to 0.
    top_k_prior : bool, default True
        Restrict sampling to the ``top_k_factor * (i + 1) * n_pred`` top-scored
        items (plus all predicted positives) at iteration ``i``; for rare categories.
        Items outside form the rest stratum (``rest_share``); with ``rest_share=0``
        they are taken as negatives (an upward bias, not in the variance).
    top_k_factor : float, default 3.0
        The factor of that rule (3 in the paper).
    average_last : int, default 3
        Number of final iteration estimates averaged (weighted by batch size).
    initial_estimate : float in (0, 1], default 0.5
        F value plugged into the proposal of the first batch.
    interval_prob : float in (0, 1), default 0.95
        Coverage of the reported interval.
    probabilities : array-like or callable, optional
        Extension point that replaces the isotonic calibration: an array of
        per-item probabilities of a positive (used at every iteration), or a callable
        ``probabilities(labeled_items, labeled_labels) -> array (n_items,)`` called
        before every batch. ``beta`` is then unused.
    target_std_error : float in (0, 0.5], optional
        When to stop labeling: stop after the first batch, from the third on (70
        labels with the default ``first_batch``), whose reported standard error
        (``sqrt(variance)``) is at most this value, provided the estimate is defined
        and no zero-variance floor is in play (a floor means no error of some kind
        has been seen yet, so the variance is a guess). ``budget`` is then a cap.
        E.g. ``0.05`` for a 95% interval about +-0.1 wide. The standard error includes
        the rest stratum's (the variance of its count of positives under the
        calibration model), so it stays large while the calibration's tail is
        uncertain. Not earlier than the third batch: the variance
        of the first batches rests on a few dozen labels and is too often too low
        (on the benchmark's 1% pool, runs allowed to stop at 30 labels had an error
        twice their reported standard error). Stopping on an estimated variance stays
        somewhat optimistic: the benchmark (``benchmarks/acis.py``, "Stopping at a
        target standard error") reports labels spent, RMSE and coverage at the stop.
    rest_share : float in [0, 1), default 0.05
        Share of each batch drawn from the items outside the top-K domain
        (``ceil(rest_share * batch)``, at least one and at most all but one item of
        a batch), so that positives there can be found and the estimate targets the
        whole pool. 0 gives the paper's design (never sampled, taken as negatives).
        Unused with ``top_k_prior=False`` (every item is then in the domain).
    rest_uniform : float in [0, 1], default 0.2
        Uniform share of the rest stratum's sampling distribution; the rest of it is
        proportional to the rest calibration's probabilities (see the module
        docstring). 1 samples the rest uniformly; the uniform part guarantees every
        rest item a probability of being drawn, which ``interval="jeffreys"`` needs.
    interval : {"jeffreys", "model", "delta"}, default "jeffreys"
        How the interval accounts for the rest stratum's unknown count of positives:
        ``"jeffreys"`` gives it a design-only Jeffreys posterior (holds whatever the
        rest contains, and is wide on large pools); ``"model"`` reads it from the
        calibration model's predictive distribution (narrow where the labels fix the
        calibration's tail, but it misses positives hiding far below where a logistic
        curve puts them: on a real pool it covered 50--65 % of its 95 % intervals); ``"delta"`` is a normal interval from the delta-method
        variance plus the model count's variance. All give the same estimate.
        Without a rest stratum (``rest_share=0``) they coincide and
        ``ACISResult.interval_method`` is ``"delta"``.
    model_assist : bool, default True
        Use the rest calibration (a logistic regression of the labels on the scores)
        as a control variate: each batch estimates the residuals of its expected
        counts (a difference estimator; see the module docstring). ``False`` gives
        the paper's pure Horvitz-Thompson estimator.

    Returns
    -------
    ACISResult
        Estimate, variance, interval, labeled items with weights, per-batch history
        (with ``rest_labels`` and ``rest_positives``: items labeled in, and positives
        found in, the current rest stratum).

    Raises
    ------
    TypeError, ValueError
        On malformed input or oracle output, with a message saying how to fix it.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.fscore.acis import acis
    >>> rng = np.random.default_rng(0)
    >>> y = (rng.random(20_000) < 0.01).astype(int)
    >>> scores = 1 / (1 + np.exp(-(3.0 * y + rng.normal(-5.5, 1.0, y.size))))
    >>> predictions = scores > 0.2
    >>> res = acis(scores, predictions, lambda idx: y[idx], budget=100, random_seed=0)
    >>> res.n_labels, res.labeled["item"].is_unique
    (100, True)
    >>> bool(res.interval[0] <= res.estimate <= res.interval[1])
    True
    """
    s, yhat, alpha, first_batch, budget, interval_prob = check_fscore_inputs(
        scores, predictions, oracle, budget, alpha, first_batch, interval_prob
    )
    rng = _check_rng(random_seed)
    proposal_floor = V.as_real_in(proposal_floor, "proposal_floor", lo=0, hi=0.5, lo_open=True, hi_open=True)
    beta = V.as_real_in(beta, "beta", lo=0, hi=1, lo_open=False, hi_open=False)
    beta_iterations = V.as_positive_int(beta_iterations, "beta_iterations", minimum=1)
    if not isinstance(top_k_prior, bool | np.bool_):
        raise TypeError(f"`top_k_prior` must be True or False, got {V.describe(top_k_prior)}.")
    top_k_factor = V.as_real_in(
        top_k_factor, "top_k_factor", lo=0, hi=math.inf, lo_open=True, hi_open=True
    )
    average_last = V.as_positive_int(average_last, "average_last", minimum=1)
    initial_estimate = V.as_real_in(
        initial_estimate, "initial_estimate", lo=0, hi=1, lo_open=True, hi_open=False
    )
    if probabilities is not None and not callable(probabilities):
        probabilities = _check_probability_vector(probabilities, s.size, "probabilities")
    rest_share = V.as_real_in(
        rest_share,
        "rest_share",
        lo=0,
        hi=1,
        lo_open=False,
        hi_open=True,
        hint=" It is the share of each batch drawn outside the top-K domain; 0 turns it off.",
    )
    rest_uniform = V.as_real_in(
        rest_uniform,
        "rest_uniform",
        lo=0,
        hi=1,
        lo_open=False,
        hi_open=False,
        hint=(
            " It is the uniform share of the rest stratum's sampling distribution;"
            " 1 samples the rest uniformly."
        ),
    )
    if not isinstance(model_assist, bool | np.bool_):
        raise TypeError(f"`model_assist` must be True or False, got {V.describe(model_assist)}.")
    if not isinstance(interval, str) or interval not in _INTERVALS:
        raise ValueError(
            f"`interval` must be one of {', '.join(map(repr, _INTERVALS))}, got {V.describe(interval)}."
        )
    return _importance_sampling_run(
        s,
        yhat,
        oracle,
        budget=budget,
        alpha=alpha,
        first_batch=first_batch,
        rng=rng,
        proposal_floor=proposal_floor,
        probabilities=probabilities,
        beta=beta,
        beta_iterations=beta_iterations,
        top_k_prior=bool(top_k_prior),
        top_k_factor=top_k_factor,
        average_last=average_last,
        initial_estimate=initial_estimate,
        interval_prob=interval_prob,
        method="acis",
        target_std_error=_check_target(target_std_error),
        rest_share=rest_share,
        rest_uniform=rest_uniform,
        interval=interval,
        model_assist=bool(model_assist),
    )


def sawade(
    scores,
    predictions,
    oracle: Callable[[np.ndarray], np.ndarray],
    *,
    budget: int,
    alpha: float = 0.5,
    first_batch: int = 10,
    random_seed=None,
    proposal_floor: float = 1e-6,
    interval_prob: float = 0.95,
    target_std_error: float | None = None,
) -> ACISResult:
    """Baseline: Sawade et al.'s importance sampling with the raw scores as probabilities.

    The ablation of calibration in the ACIS paper: the same doubling batches,
    sampling design, reuse of earlier labels and variance estimator as :func:`acis`,
    but p(y=1|x) is the classifier's score itself (no isotonic calibration, no
    top-K prior, no averaging). Scores inside [0, 1] are used as they are; other
    scores are min-max rescaled to [0, 1]. Either way they are rescaled to
    [proposal_floor, 1 - proposal_floor]. The F value in the first proposal is the plug-in F
    implied by those probabilities (expected tp, fp, fn), as in Sawade et al.

    Parameters
    ----------
    scores, predictions, oracle, budget, alpha, first_batch, random_seed, interval_prob, target_std_error
        As in :func:`acis`.
    proposal_floor : float in (0, 0.5), default 1e-6
        Floor of the probabilities, only so that every item keeps a positive
        inclusion probability (Sawade et al. use the model's probabilities as they
        are). ACIS's default of 0.02 would be a handicap here: without the top-K
        domain it gives each of the tens of thousands of clear negatives a share
        ``sqrt(0.02)`` of the proposal, which on the benchmark's calibrated 1% pool
        sends most draws to them (MSE 0.117 at 100 labels against 0.026 with 1e-6,
        100 runs).

    Returns
    -------
    ACISResult
        With ``method == "sawade"``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.fscore.acis import sawade
    >>> rng = np.random.default_rng(0)
    >>> y = (rng.random(20_000) < 0.01).astype(int)
    >>> scores = 1 / (1 + np.exp(-(3.0 * y + rng.normal(-5.5, 1.0, y.size))))
    >>> res = sawade(scores, scores > 0.2, lambda idx: y[idx], budget=100, random_seed=0)
    >>> res.method, res.n_labels
    ('sawade', 100)
    """
    s, yhat, alpha, first_batch, budget, interval_prob = check_fscore_inputs(
        scores, predictions, oracle, budget, alpha, first_batch, interval_prob
    )
    rng = _check_rng(random_seed)
    proposal_floor = V.as_real_in(proposal_floor, "proposal_floor", lo=0, hi=0.5, lo_open=True, hi_open=True)
    lo, hi = float(s.min()), float(s.max())
    if lo >= 0.0 and hi <= 1.0:
        p = s.copy()
    elif hi > lo:
        p = (s - lo) / (hi - lo)
    else:
        p = np.full_like(s, 0.5)
    tp = float(p[yhat == 1].sum())
    fp = float(yhat.sum()) - tp
    fn = float(p[yhat == 0].sum())
    den = alpha * (tp + fp) + (1 - alpha) * (tp + fn)
    g0 = min(max(tp / den if den > 0 else 0.5, _G_FLOOR), 1.0)
    return _importance_sampling_run(
        s,
        yhat,
        oracle,
        budget=budget,
        alpha=alpha,
        first_batch=first_batch,
        rng=rng,
        proposal_floor=proposal_floor,
        probabilities=p,
        beta=0.0,
        beta_iterations=1,
        top_k_prior=False,
        top_k_factor=3.0,
        average_last=1,
        initial_estimate=g0,
        interval_prob=interval_prob,
        method="sawade",
        target_std_error=_check_target(target_std_error),
    )


def _checkpoint_run(
    s, yhat, oracle, order, *, budget, alpha, first_batch, interval_prob, method, srs, target_std_error=None
):
    """Label ``order[:budget]`` in doubling batches; estimate after each batch.

    ``srs=True``: the labeled prefix is a simple random sample of the pool
    (weights ``n_items / n``, finite-population factor ``1 - n / n_items``).
    ``srs=False``: F of the labeled items themselves, with a nominal
    with-replacement variance (weights 1, no population correction).
    """
    n = s.size
    book = _Book(s, yhat, alpha, interval_prob, average_last=1, target_std_error=target_std_error)
    spent = 0
    n_cell = (int(np.count_nonzero(yhat == 0)), int(np.count_nonzero(yhat == 1)))
    with _keep_labels(book, method):
        for b in _batch_sizes(budget, first_batch):
            items_b = order[spent : spent + b]
            labels_b = _call_oracle(oracle, items_b)
            spent += b
            book.add(items_b, labels_b, np.ones(b))
            items, labels = book.labeled_arrays()
            yh = yhat[items]
            if srs:
                f = spent / n
                pi, d = np.full(spent, f), np.full(spent, 1.0 / f)
                left = [n_cell[k] - int(np.count_nonzero(yh == k)) for k in (0, 1)]
                typ = (1.0 / f, 1.0 - f)
            elif spent < n:
                pi, d = np.zeros(spent), np.ones(spent)
                left = [int(np.count_nonzero(yh == k)) for k in (0, 1)]
                typ = (1.0, 1.0)
            else:  # the whole pool is labeled: a census, no sampling variance
                pi, d, left, typ = np.ones(spent), np.ones(spent), [0, 0], None
            typical = {
                "tp": typ if left[1] else None,
                "fp": typ if left[1] else None,
                "fn": typ if left[0] else None,
            }
            g, var, floor = _estimate(
                alpha=alpha, a_fixed=0.0, v_fixed=0.0, y=labels, yhat=yh, d=d, pi=pi, typical=typical
            )
            book.record(b, n, g, var, floor, exact=spent == n)
            if book.should_stop():
                break
    res = book.result(method, interval_prob)
    lab = res.labeled
    if srs:  # inclusion probability of an item in a simple random sample of this size
        lab["inclusion_probability"] = len(lab) / n
        lab["weight"] = n / len(lab)
    return res


def uniform_sampling(
    scores,
    predictions,
    oracle: Callable[[np.ndarray], np.ndarray],
    *,
    budget: int,
    alpha: float = 0.5,
    first_batch: int = 10,
    random_seed=None,
    interval_prob: float = 0.95,
    target_std_error: float | None = None,
) -> ACISResult:
    """Baseline: simple random sampling without replacement, F estimated from the sample.

    Items are labeled in a uniformly random order, in the same doubling batches as
    :func:`acis`; after each batch the labeled items form a simple random sample of
    the pool and ``F = tp_s / (alpha (tp_s + fp_s) + (1 - alpha)(tp_s + fn_s))`` is
    computed from the sample counts. The variance is the delta-method variance of
    this ratio with the finite-population correction, plus the same zero-variance
    floor as :func:`acis`. For rare categories a small sample often holds no
    positive at all; the estimate is then NaN (undefined) and the interval [0, 1].

    Parameters
    ----------
    scores, predictions, oracle, budget, alpha, first_batch, random_seed, interval_prob, target_std_error
        As in :func:`acis` (``scores`` only fill the ``labeled`` table).

    Returns
    -------
    ACISResult
        With ``method == "uniform"``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.fscore.acis import uniform_sampling
    >>> rng = np.random.default_rng(0)
    >>> y = (rng.random(2_000) < 0.2).astype(int)
    >>> scores = np.clip(0.5 * y + rng.normal(0.3, 0.15, y.size), 0, 1)
    >>> res = uniform_sampling(scores, scores > 0.5, lambda idx: y[idx], budget=100, random_seed=0)
    >>> res.method, res.n_labels
    ('uniform', 100)
    """
    s, yhat, alpha, first_batch, budget, interval_prob = check_fscore_inputs(
        scores, predictions, oracle, budget, alpha, first_batch, interval_prob
    )
    rng = _check_rng(random_seed)
    order = rng.choice(s.size, size=budget, replace=False)
    return _checkpoint_run(
        s,
        yhat,
        oracle,
        order,
        budget=budget,
        alpha=alpha,
        first_batch=first_batch,
        interval_prob=interval_prob,
        method="uniform",
        srs=True,
        target_std_error=_check_target(target_std_error),
    )


def top_k(
    scores,
    predictions,
    oracle: Callable[[np.ndarray], np.ndarray],
    *,
    budget: int,
    alpha: float = 0.5,
    first_batch: int = 10,
    random_seed=None,
    interval_prob: float = 0.95,
    target_std_error: float | None = None,
) -> ACISResult:
    """Baseline: label the top-scoring items and compute F on them.

    The information-retrieval habit that the ACIS paper calls TOP-K: items are
    labeled in order of descending score (ties by position), in the same doubling
    batches as :func:`acis`, and the F-score is computed from the labeled items
    alone, as if they were the whole pool -- false negatives among the unlabeled
    items are ignored, so recall (and F) are overestimated while the budget is small
    compared with the number of positives. The reported variance is nominal: the
    with-replacement delta-method variance of the labeled items' F (plus the
    zero-variance floor) as if they were a random sample; it does not measure the
    selection bias, and the method is deterministic (``random_seed`` is accepted for
    a uniform interface and unused).

    Parameters
    ----------
    scores, predictions, oracle, budget, alpha, first_batch, random_seed, interval_prob, target_std_error
        As in :func:`acis` (the stopping rule reads top-K's nominal variance).

    Returns
    -------
    ACISResult
        With ``method == "top_k"``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.fscore.acis import top_k
    >>> rng = np.random.default_rng(0)
    >>> y = (rng.random(20_000) < 0.01).astype(int)
    >>> scores = 1 / (1 + np.exp(-(3.0 * y + rng.normal(-5.5, 1.0, y.size))))
    >>> res = top_k(scores, scores > 0.2, lambda idx: y[idx], budget=100)
    >>> bool(res.labeled["score"].min() >= np.sort(scores)[-100])
    True
    """
    s, yhat, alpha, first_batch, budget, interval_prob = check_fscore_inputs(
        scores, predictions, oracle, budget, alpha, first_batch, interval_prob
    )
    _check_rng(random_seed)
    order = _top_order(s, budget)
    return _checkpoint_run(
        s,
        yhat,
        oracle,
        order,
        budget=budget,
        alpha=alpha,
        first_batch=first_batch,
        interval_prob=interval_prob,
        method="top_k",
        srs=False,
        target_std_error=_check_target(target_std_error),
    )
