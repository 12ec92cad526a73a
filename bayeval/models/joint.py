"""The joint calibration model: ``P(y = 1 | s_1, ..., s_K)`` from several classifiers' scores.

Several classifiers scored the same items. Each item has one true label, whichever
classifier is asked; a comparison is fair only when every classifier's metric is computed
on the *same* draws of those labels. :class:`JointCalibration` is the calibration model of
:class:`~bayeval.models.Calibration` extended to several score columns: it learns, from the
vetted labels only, the probability that an item is positive given all the scores it got,
and its posterior draws one label per item for all the classifiers at once
(:func:`bayeval.compare` builds on it).

The curve
---------
Each classifier's score is mapped to its feature ``z_k`` exactly as
:class:`~bayeval.models.Calibration` maps one score (the logit of a probability, the
score itself for log-odds, the standardized score otherwise), and

``eta = a + b * sum_k w_k * g_k(z_k)``

is the log-odds of being positive, with ``b > 0`` the overall slope and ``a`` the
intercept, and ``w`` the classifiers' weights (how much each classifier's score says
about the label, the others given), summing to one. The priors of ``a`` and ``b`` are
centred where the one-score curve centres them (on *the scores are calibrated* for
probabilities and log-odds: ``a = 0``, ``b = 1``), ``log b`` with scale ``slope_sd`` (1,
as the one-score curve) and ``a`` with scale ``intercept_sd`` (5, wider than the
one-score curve's 1 or 1.5). The wider intercept is the measured fix of an error: with a
few dozen labels an intercept held near 0 is compensated by the weights, the drawn labels
follow the classifiers' rankings less than the truth does, and the gap between a strong
and a weak classifier comes out too small (``docs/compare.md``). The weights:

* ``weights="signed"`` (the default): ``w_k = 1/K + u_k`` with ``u`` a zero-sum normal of
  scale ``weight_sd`` (1 by default; :func:`bayeval.compare` uses 0.25; Student-t with
  ``weight_df``). A weight can be negative: when two classifiers share an error (both
  scores are high on the same negatives), the better one's score minus part of the
  other's tells the label best, and the model can say so;
  With ``weight_centre="standardized"`` the centre ``1/K`` becomes ``c_k``, proportional to
  one over the spread (standard deviation over all the pool's items, labelled or not) of
  classifier ``k``'s curve feature ``g_k(z_k)`` (segment slopes at 1) and summing to one:
  equal weights on the features divided by their spread, so a classifier whose logits
  spread less is not outweighed at the prior's centre (:func:`standardized_centre`);
* ``weights="simplex"``: ``w ~ Dirichlet(1, ..., 1)``, every weight in [0, 1] (the first
  version's model): a higher score never lowers the probability of being positive, and
  a shared error cannot be subtracted.

The two were measured side by side in ``benchmarks/results/compare.md`` (``docs/compare.md``
says what that showed, and the pair on which both fail). ``g_k`` is the identity
(``curve="logistic"``) or a monotone piecewise-linear map with knots at the score's
quantiles 0.5, 0.9 and 0.99 and slope multipliers ``exp(delta_kj)``, ``delta_kj ~
Normal(0, 0.7)`` (``curve="monotone"``), as in the one-score monotone curve: increasing
in each score. With ``slopes="shared"`` one multiplier per segment serves every classifier
(each at its own score's quantiles): 4 parameters instead of 4 per classifier.

Two copies of one classifier give the one-score curve whatever ``w`` (the weights sum to
one): the model does not invent a difference that the scores do not have.

The data is an :class:`~bayeval.EvalData` whose ``features`` are the score columns, one
per classifier (:func:`joint_data` builds it); its ``scores`` are the first column.
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
from ..core.data import (FEW_OF_A_CLASS, REVERSED_ASK, EvalData, few_by_category, reversed_scores, saturated_share,
                         squeezed_range)
from ..core.model import Model
from ..core.posterior import Posterior
from .calibration import ASYMPTOTE_PRIOR, DELTA_SD, SATURATED, Calibration, bernoulli_logit
from .penalty import jeffreys_potential, separation

__all__ = ["JointCalibration", "JointCalibrationPosterior", "JOINT_CURVES", "JOINT_WEIGHTS", "JOINT_SLOPES",
           "JOINT_CENTRES", "JOINT_PENALTIES", "JOINT_ASYMPTOTES", "FLAT_MIN_CLASS", "joint_data", "separation", "standardized_centre",
           "reversed_classifiers", "joint_caveats", "joint_few_labels"]

JOINT_CURVES = ("logistic", "monotone")
JOINT_WEIGHTS = ("signed", "simplex")
#: the monotone curve's segment-slope multipliers: one set per classifier, or one set for all
JOINT_SLOPES = ("each", "shared")
#: where the signed weights' prior is centred: equal weights on the features as they are, or
#: equal weights on the features divided by their spread over the pool (``weight_centre``)
JOINT_CENTRES = ("equal", "standardized")
#: the small-sample penalty of the curve's coefficients (``penalty``): none, or Jeffreys'
#: (Firth's bias-reducing penalty: half the log-determinant of the vetted items' Fisher
#: information of the intercept and the classifiers' coefficients ``b * w_k``), or
#: ``"auto"``: Jeffreys' where the vetted labels are separable (:func:`separation`), else none
JOINT_PENALTIES = ("none", "jeffreys", "auto")
#: flat ends of the curve (``asymptotes``): never, always, or where the vetted labels are separable
JOINT_ASYMPTOTES = (False, True, "auto")
#: ``asymptotes="auto"`` gives flat ends only where the separable vetted labels hold at least
#: this many of each class: with fewer, separation says little about the classifiers (a handful
#: of positives is separable by most scores), and a floor that can explain those few positives as
#: noise cuts the labels loose from the scores and pulls a large gap towards 0
FLAT_MIN_CLASS = 10
#: the default scale of the intercept's prior (``benchmarks/results/compare.md`` measured 1, 2.5 and 5)
INTERCEPT_SD = 5.0


def joint_data(scores: dict, labels=None, *, item_ids=None, categories=None, noisy_labels=None) -> EvalData:
    """The :class:`~bayeval.EvalData` a :class:`JointCalibration` takes: one score column per classifier.

    Parameters
    ----------
    scores : dict of str to array_like
        Each classifier's scores of the same items, in the same order (finite numbers).
    labels : array_like, optional
        Vetted labels: 1, 0 or NaN (not vetted).
    item_ids, categories, noisy_labels : array_like, optional
        As for :class:`~bayeval.EvalData`.

    pandas inputs (the score Series among them) are paired by their index, as in
    :class:`~bayeval.EvalData`.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.models.joint import joint_data
    >>> d = joint_data({"a": [0.9, 0.2, 0.4], "b": [0.7, 0.1, 0.6]}, [1, 0, np.nan])
    >>> d.feature_names.tolist(), d.features.shape
    (['a', 'b'], (3, 2))
    """
    if not isinstance(scores, dict) or not scores:
        raise TypeError(f"`scores` must be a non-empty dict {{name: scores}}, got {type(scores).__name__}.")
    names = [str(k) for k in scores]
    given = V.align_by_index(
        [(f"scores[{k!r}]", v) for k, v in scores.items()]
        + [("labels", labels), ("noisy_labels", noisy_labels), ("categories", categories), ("item_ids", item_ids)],
        ids="item_ids",
    )
    # paired now: the score columns below are one frame with the default index, so the rest
    # goes on by position (a length that differs is then named by EvalData's length check)
    given = [v.reset_index(drop=True) if isinstance(v, pd.Series) else v for v in given]
    labels, noisy_labels, categories, item_ids = given[len(names):]
    cols = [V.as_scores(v, f"scores[{k!r}]") for k, v in zip(scores, given, strict=False)]
    for k, c in zip(names[1:], cols[1:], strict=True):
        if c.size != cols[0].size:
            raise ValueError(
                f"Every classifier must score the same items: {names[0]!r} has {cols[0].size} scores, "
                f"{k!r} has {c.size}. Align the score arrays on the same items (same order) first."
            )
    feats = pd.DataFrame(np.column_stack(cols), columns=names)
    return EvalData(cols[0], labels, features=feats, item_ids=item_ids, categories=categories,
                    noisy_labels=noisy_labels)


def reversed_classifiers(data: EvalData) -> list[str]:
    """A sentence for each classifier of joint data whose scores rank the vetted positives low.

    Each score column (classifier) is checked against the shared vetted labels as
    :func:`bayeval.core.data.reversed_scores` checks one classifier's scores (a one-sided rank
    test at :data:`bayeval.core.data.REVERSED_LEVEL`; it fits nothing): the other class's
    probability (``predict_proba[:, 0]``) or a distance passed as one classifier's scores.
    :func:`bayeval.compare` ranks the items by each classifier's scores as given, higher
    first, and the joint model expects each classifier's scores to rise towards the
    positives. Said by ``Comparison.caveats()`` (so by ``bayeval compare`` and the vetting
    page), by the joint posterior's ``check()`` (so as a warning of :func:`bayeval.compare`)
    and among the joint posterior's data caveats, each naming its classifier.

    Parameters
    ----------
    data : EvalData
        Joint data (:func:`joint_data`): one score column per classifier.

    Returns
    -------
    list of str
        In the order of the columns; empty when no classifier's scores run against the labels.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.models.joint import joint_data, reversed_classifiers
    >>> s = np.linspace(0.01, 0.99, 40)
    >>> y = (s > 0.7).astype(float)
    >>> [c.split(":")[0] for c in reversed_classifiers(joint_data({"p1": s, "p0": 1 - s}, y))]
    ["p0's higher scores look less likely positive"]
    """
    out = []
    for name, col in zip(map(str, data.feature_names), _columns(data).T, strict=True):
        found = reversed_scores(EvalData(col, data.labels))
        if found is None:
            continue
        auc, p_value = found
        pos, n = int(data.n_vetted_positive), int(data.n_vetted)
        out.append(
            f"{name}'s higher scores look less likely positive: {name} scores the {pos} vetted positives "
            f"mostly below the {n - pos} vetted negatives (ROC AUC {auc:.2f} on the vetted items, one-sided "
            f"rank test p = {p_value:.2g}). {REVERSED_ASK} The comparison ranks the items by each classifier's "
            f"scores as given, higher first, so {name}'s metric, and every gap and P(better) it enters, is that "
            "of a ranking with the positives near the bottom, not of the classifier you meant; and the joint "
            f"model expects each classifier's scores to rise towards the positives. Fix {name}'s scores and "
            "compare again."
        )
    return out


def joint_few_labels(data: EvalData) -> list[str]:
    """The sentences of :func:`joint_caveats` on a handful of vetted labels of a class (fewer than
    ``FEW_OF_A_CLASS`` vetted positives or negatives, none included): what :func:`bayeval.compare`
    warns, as :func:`bayeval.fit` warns :func:`bayeval.core.data.few_labels_caveats`. Empty when
    nothing is vetted (a case of its own) or each class has enough.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.models.joint import joint_data, joint_few_labels
    >>> s = np.linspace(0.01, 0.99, 100)
    >>> y = np.full(100, np.nan); y[:30] = 0.0; y[99] = 1.0
    >>> [c.split(":")[0] for c in joint_few_labels(joint_data({"a": s, "b": s[::-1]}, y))]
    ['only 1 of the 31 vetted labels are positive']
    """
    n, pos = int(data.n_vetted), int(data.n_vetted_positive)
    neg = n - pos
    out: list[str] = []
    if n and pos < FEW_OF_A_CLASS:
        said = (f"none of the {n} vetted labels is positive" if pos == 0
                else f"only {pos} of the {n} vetted labels are positive")
        out.append(
            f"{said}: which classifier puts the positives higher "
            f"rests on {'that item' if pos == 1 else 'the prior alone' if pos == 0 else 'these items'}"
            f"{'' if pos == 0 else ' and on the prior'}, so the gap's interval is "
            "wide and the stated favourite is often the worse one (in a quarter to two fifths of such runs in "
            "the validation of docs/compare.md). "
            "Where a classifier's top scores are over-confident (its top items positive less often than it "
            "claims), its metric and its lead can come out too high. Vet items from the top of both rankings "
            "next (the comparison's select(), or `bayeval vet CARD_A CARD_B`) rather than more random ones."
        )
    if n and neg < FEW_OF_A_CLASS:
        said = (f"none of the {n} vetted labels is negative" if neg == 0
                else f"only {neg} of the {n} vetted labels are negative")
        out.append(
            f"{said}: how many of each classifier's top items are "
            "false positives rests largely on the prior, so the gap's interval is wide. Vet items from the "
            "middle and bottom of the rankings next."
        )
    return out


def joint_caveats(data: EvalData) -> list[str]:
    """What the shared vetted labels and the classifiers' scores of joint data cannot tell a comparison,
    in sentences (empty when nothing applies).

    Each classifier whose scores rank the vetted positives low (:func:`reversed_classifiers`, said
    first), no vetted label at all, a handful of vetted positives (or negatives; none of a class
    included), categories with a handful of a class, and each classifier whose probabilities are
    saturated at exactly 0 or 1 or squeezed into a narrow band (the cases and bounds of
    :meth:`bayeval.EvalData.caveats`). Each sentence about one classifier's scores names it, and
    every classifier is checked (not only the first column, the data's ``scores``); each says what
    the case does to the gap and what to vet next. ``Comparison.caveats()`` gives them, and so do
    the joint posterior's own data caveats (its ``summary``'s ``attrs["caveats"]``, the report).

    Parameters
    ----------
    data : EvalData
        Joint data (:func:`joint_data`): one score column per classifier.

    Returns
    -------
    list of str

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.models.joint import joint_caveats, joint_data
    >>> s = np.linspace(0.01, 0.99, 100)
    >>> y = np.where(np.arange(100) % 3 == 0, (s > 0.5).astype(float), np.nan)
    >>> [c.split(":")[0] for c in joint_caveats(joint_data({"a": s, "b": 0.3 + 0.1 * s}, y))]
    ["b's probabilities are squeezed into [0.30, 0.40] (1st to 99th percentile)"]
    """
    n, pos = int(data.n_vetted), int(data.n_vetted_positive)
    neg = n - pos
    out = reversed_classifiers(data)  # a classifier's scores turned round: the gap is of the wrong ranking
    if not n:
        out.append(
            "no vetted labels: every metric, gap and P(better) is the prior's -- what the models assume about "
            "how each classifier's scores relate to the labels -- not evidence about which classifier is "
            "better, and where that assumption is wrong the favourite it names can be the worse one. Vet some "
            "items first: a random sample of 30 or more, or `bayeval vet CARD_A CARD_B` (its first batch is "
            "stratified on the scores); then compare again."
        )
    out += joint_few_labels(data)
    if n and pos >= FEW_OF_A_CLASS and neg >= FEW_OF_A_CLASS:  # enough of each class: a category may hold too few
        out += few_by_category(data, "the gap")
    for name, s in zip(map(str, data.feature_names), _columns(data).T, strict=True):
        share = saturated_share(s)
        if share is not None:
            out.append(
                f"{share:.0%} of {name}'s scores are exactly 0 or 1 (saturated probabilities): {name} ties "
                "these items, so its metric cannot rank them apart and the joint curve reads them as one score "
                f"each: the gap is that of the rankings as given, ties included. Probabilities that saturate are "
                f"usually over-confident, so with few vetted labels {name}'s metric (and its lead) can come out "
                "too high. Vet a few of the tied items, and more at random, before trusting it."
            )
        band = squeezed_range(s)
        if band is not None:
            out.append(
                f"{name}'s probabilities are squeezed into [{band[0]:.2f}, {band[1]:.2f}] (1st to 99th "
                "percentile): compare's default models read them as an uncalibrated score (standardized, as "
                f"they read margins) and learn how {name}'s scores relate to the labels from the vetted items "
                f"alone, so with few labels {name}'s metric and its gaps get wide intervals. Vet items across "
                "its whole range of scores."
            )
    return out


def zero_sum_basis(k: int) -> np.ndarray:
    """An orthonormal basis ``(k, k - 1)`` of the vectors of length ``k`` that sum to zero.

    Normal coordinates of scale ``s`` in it give :class:`pymc.ZeroSumNormal` of scale ``s``
    (each entry's variance ``s**2 (1 - 1/k)``); ``JointCalibration(weight_df=...)`` puts
    Student-t coordinates in it instead.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.models.joint import zero_sum_basis
    >>> h = zero_sum_basis(3)
    >>> np.allclose(h.sum(axis=0), 0), np.allclose(h.T @ h, np.eye(2))
    (True, True)
    """
    k = int(k)
    q, _ = np.linalg.qr(np.eye(k) - 1.0 / k)
    return np.ascontiguousarray(q[:, : k - 1])


def standardized_centre(features: np.ndarray) -> np.ndarray:
    """The weights' prior centre of ``weight_centre="standardized"``: equal weights on standardized features.

    ``features`` is :meth:`JointCalibration.features`' array ``(n_items, K, S)``, of every
    item of the pool (labelled or not), so the centre is a function of the scores alone.
    Each classifier's curve feature (its segments summed: ``g_k`` with the slope
    multipliers at 1) has a standard deviation ``sd_k`` over the items; the centre is
    ``c_k = (1 / sd_k) / sum_j (1 / sd_j)``, the weights that give each standardized
    feature the same coefficient while summing to one. Classifiers whose features
    spread alike get ``1/K`` each (two copies of one classifier: exactly ``1/K``); the
    ratio ``c_k sd_k / (c_j sd_j)`` is 1 whatever the scale of each classifier's feature.
    A constant feature (no spread) counts as spreading like the others' mean.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.models.joint import standardized_centre
    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(0, 1, (500, 1, 1))
    >>> standardized_centre(np.concatenate([z, 3 * z], axis=1)).round(3).tolist()
    [0.75, 0.25]
    """
    g = np.asarray(features, dtype=np.float64)
    g = g.sum(axis=2) if g.ndim == 3 else g
    sd = g.std(axis=0)
    ok = np.isfinite(sd) & (sd > 0)
    if not ok.any():
        return np.full(g.shape[1], 1.0 / g.shape[1])
    sd = np.where(ok, sd, sd[ok].mean())
    inv = 1.0 / sd
    return inv / inv.sum()


class JointCalibration(Model):
    """A Bayesian calibration model of the label given several classifiers' scores.

    Parameters
    ----------
    curve : {"logistic", "monotone"}
        ``g_k`` of the module docs: the identity of each score feature, or a monotone
        piecewise-linear map of it.
    transform : {"auto", "logit", "standardize", "logodds"}
        The score feature of every column, as for :class:`~bayeval.models.Calibration`
        (``"auto"``: ``logit`` for a column in [0, 1], else ``standardize``).
    weights : {"signed", "simplex"}
        The classifiers' weights ``w`` (module docs): summing to one and free in sign
        (``"signed"``), or on the simplex.
    weight_sd : float
        The scale of the signed weights' deviations from their centre (``weights="signed"``);
        :func:`bayeval.compare` uses 0.25, which holds two classifiers near the centre's
        weights until the labels move them (calibrated ``P(better)`` on near-ties; large gaps
        come out a little small).
    weight_df : float, optional
        Degrees of freedom of a Student-t prior of the signed weights' deviations (same scale
        ``weight_sd``, in an orthonormal basis of the zero-sum vectors: :func:`zero_sum_basis`);
        ``None`` (the default): the zero-sum normal. Heavy tails hold near-ties near the centre
        as the normal does but let a clear winner's weight move far from it.
    intercept_sd : float
        The scale of the normal prior of the intercept ``a`` (centred on 0).
    slope_sd : float
        The scale of the normal prior of ``log b`` (centred on 0 for probabilities and
        log-odds, on ``log 2`` for standardized scores).
    slopes : {"each", "shared"}
        The monotone curve's segment-slope multipliers ``exp(delta)``: one set per
        classifier (``"each"``: ``delta`` is classifier x segment) or one set shared by
        all the classifiers (``"shared"``: ``delta`` has one value per segment, each
        segment at each classifier's own score quantiles). ``"shared"`` keeps the curve's
        dimension at 2 + (K - 1) + 4 for K classifiers instead of 2 + (K - 1) + 4K
        (``docs/compare.md``). No effect with ``curve="logistic"``.
    weight_centre : {"equal", "standardized"}
        Where the signed weights' prior is centred: ``1/K`` each on the features as they
        are (``"equal"``, the first versions' model), or equal weights on each feature
        divided by its spread over the pool (``"standardized"``:
        :func:`standardized_centre`, computed from every item's scores, labelled or not).
        With ``"equal"`` a classifier whose logits spread less (a random forest's, say)
        counts for less at the prior's centre than one whose logits spread more, and with
        a few dozen labels the weights stay near that centre (``docs/compare.md``). No
        effect with ``weights="simplex"`` or one classifier.
    saturated : {"apart", "merged"}
        How exact 0s and 1s and probabilities within 1e-7 of them enter a probability
        column's feature, as for :class:`~bayeval.models.Calibration`.
    penalty : {"none", "jeffreys"}
        ``"jeffreys"`` multiplies the priors by Jeffreys' prior of the linear predictor's
        coefficients (the intercept and each classifier's ``b * w_k``, the monotone curve's
        slope multipliers held where they are): the square root of the determinant of
        their Fisher information over the vetted items (Firth's penalty). With a few
        positives the labelled items are often nearly separable, the likelihood keeps
        rising with ``b``, and the drawn labels follow the scores more closely than the
        truth does, which exaggerates the gap in whichever direction those labels lean;
        the penalty holds the coefficients back there and fades as labels accrue.
        ``"auto"`` applies it only where the vetted labels are separable (:func:`separation`:
        a threshold on one classifier's feature, or a line through all the features, puts
        every vetted positive on one side and every vetted negative on the other; the
        unpenalized likelihood then rises without end along that direction) and fits without
        it otherwise (:meth:`penalty_for` says which for a data set).
    asymptotes : {False, True, "auto"}
        Flat ends, as for :class:`~bayeval.models.Calibration`: ``P(y = 1 | s) = lo + (1 -
        lo) * u_hi * expit(eta)`` with ``lo ~ Beta(1, 3)`` and ``u_hi ~ Beta(3, 1)``: however
        far an item's scores lie beyond the vetted ones, it keeps a chance ``lo`` of being
        positive (and ``1 - lo - (1 - lo) * u_hi`` of being negative) that the vetted labels
        bound from the error they show. Where the vetted labels are separable the logistic
        curve has no such floor: its slope grows until the prior stops it, every unvetted
        item's label is drawn as its score says, and two near-perfect classifiers' gap comes
        out a few thousandths wide around a value the unvetted items' few errors move.
        ``"auto"``: flat ends only where the vetted labels are separable (:func:`separation`)
        and hold at least :data:`FLAT_MIN_CLASS` (10) positives and as many negatives, as
        :meth:`asymptotes_for` says for a data set: with a handful of positives, separable
        labels are what most classifiers give, and a floor that can call those few positives
        noise pulls a large gap towards 0.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.models.joint import JointCalibration, joint_data
    >>> rng = np.random.default_rng(0)
    >>> y = rng.random(400) < 0.3
    >>> a = 1 / (1 + np.exp(-(2.5 * y - 1.5 + rng.normal(0, 1, 400))))
    >>> b = 1 / (1 + np.exp(-(1.0 * y - 1.0 + rng.normal(0, 1, 400))))
    >>> lab = np.where(np.arange(400) < 60, y, np.nan)
    >>> post = JointCalibration().fit(joint_data({"a": a, "b": b}, lab), random_seed=0, draws=300)
    >>> post.idata.posterior["w"].shape
    (2, 300, 2)
    >>> bool(post.idata.posterior["w"].values[..., 0].mean() > 0.5)
    True
    """

    target_accept = 0.95

    def __init__(self, curve: str = "logistic", *, transform: str = "auto", weights: str = "signed",
                 weight_sd: float = 1.0, intercept_sd: float = INTERCEPT_SD, slope_sd: float = 1.0,
                 slopes: str = "each", weight_centre: str = "equal", saturated: str = "apart",
                 penalty: str = "none", weight_df: float | None = None, asymptotes: bool | str = False):
        self.curve = V.check_choice(curve, "curve", JOINT_CURVES)
        self.transform = V.check_choice(transform, "transform", ("auto", "logit", "standardize", "logodds"))
        self.weights = V.check_choice(weights, "weights", JOINT_WEIGHTS)
        self.weight_sd = V.as_real_in(weight_sd, "weight_sd", lo=0.0, hi=np.inf, lo_open=True, hi_open=True)
        self.intercept_sd = V.as_real_in(intercept_sd, "intercept_sd", lo=0.0, hi=np.inf, lo_open=True,
                                         hi_open=True)
        self.slope_sd = V.as_real_in(slope_sd, "slope_sd", lo=0.0, hi=np.inf, lo_open=True, hi_open=True)
        self.slopes = V.check_choice(slopes, "slopes", JOINT_SLOPES)
        self.weight_centre = V.check_choice(weight_centre, "weight_centre", JOINT_CENTRES)
        self.saturated = V.check_choice(saturated, "saturated", SATURATED)
        self.penalty = V.check_choice(penalty, "penalty", JOINT_PENALTIES)
        self.weight_df = None if weight_df is None else V.as_real_in(
            weight_df, "weight_df", lo=0.0, hi=np.inf, lo_open=True, hi_open=True)
        if not any(asymptotes is c or (isinstance(c, str) and asymptotes == c) for c in JOINT_ASYMPTOTES):
            raise ValueError(f"`asymptotes` must be True, False or 'auto', got {asymptotes!r}.")
        self.asymptotes = asymptotes

    def __repr__(self) -> str:
        extra = "" if self.weights == "signed" else f", weights={self.weights!r}"
        for name, default in (("weight_sd", 1.0), ("intercept_sd", INTERCEPT_SD), ("slope_sd", 1.0)):
            if getattr(self, name) != default and (name != "weight_sd" or self.weights == "signed"):
                extra += f", {name}={getattr(self, name)!r}"
        if self.slopes != "each" and self.curve == "monotone":
            extra += f", slopes={self.slopes!r}"
        if self.weight_centre != "equal" and self.weights == "signed":
            extra += f", weight_centre={self.weight_centre!r}"
        if getattr(self, "saturated", "apart") != "apart":
            extra += f", saturated={self.saturated!r}"
        if getattr(self, "penalty", "none") != "none":
            extra += f", penalty={self.penalty!r}"
        if getattr(self, "weight_df", None) is not None and self.weights == "signed":
            extra += f", weight_df={self.weight_df!r}"
        if getattr(self, "asymptotes", False) is not False:
            extra += f", asymptotes={self.asymptotes!r}"
        return f"JointCalibration(curve={self.curve!r}, transform={self.transform!r}{extra})"

    @property
    def name(self) -> str:
        """A short name for tables: ``joint/<curve>``."""
        suffix = {"standardize": "/standardized", "logodds": "/logodds"}.get(self.transform, "")
        return f"joint/{self.curve}{suffix}"

    @property
    def param_names(self) -> tuple[str, ...]:
        return ("a", "b", "w", "delta", "lo", "u_hi")

    def caveat_reversed(self, data: EvalData) -> list[str]:
        """Each classifier whose scores rank the vetted positives low, named
        (:func:`reversed_classifiers`), for :func:`bayeval.core.data.reversed_caveats`.

        Examples
        --------
        See :func:`reversed_classifiers`.
        """
        return reversed_classifiers(data)

    def own_data_caveats(self, data: EvalData) -> list[str]:
        """Every sentence of :func:`bayeval.core.data.data_caveats` for this model, in the comparison's
        words, each classifier named (:func:`joint_caveats`): the joint model reads every score column,
        not only the first.

        Examples
        --------
        See :func:`joint_caveats`.
        """
        return joint_caveats(data)

    # ------------------------------------------------------------- features

    def features(self, data: EvalData) -> tuple[np.ndarray, list[dict]]:
        """The features ``(n_items, K, S)`` (classifier, segment; zero-padded) and each column's definition.

        Each column is mapped by :meth:`bayeval.models.Calibration.features` of the same
        curve and transform; the second value lists those definitions, one per classifier.
        """
        cols = _columns(data)
        one = Calibration(self.curve, transform=self.transform, saturated=getattr(self, "saturated", "apart"))
        feats, infos = [], []
        for j in range(cols.shape[1]):
            try:
                f, info = one.features(EvalData(cols[:, j], data.labels))
            except ValueError as exc:  # say which classifier's scores
                raise ValueError(f"Classifier {str(data.feature_names[j])!r}: {exc}") from exc
            feats.append(f)
            infos.append(info)
        s = max(f.shape[1] for f in feats)
        out = np.zeros((data.n_items, len(feats), s))
        for j, f in enumerate(feats):
            out[:, j, : f.shape[1]] = f
        return out, infos

    def _prior(self, infos: list[dict]) -> dict:
        calibrated = all(i["scale"] in ("logit", "logodds") for i in infos)
        pr = Calibration()._prior({"scale": "logit" if calibrated else "standardize"})
        return {"a": (pr["a"][0], self.intercept_sd), "log_b": (pr["log_b"][0], self.slope_sd)}

    # ---------------------------------------------------------------- build

    def build(self, data: EvalData) -> pm.Model:
        """The PyMC model of the vetted labels given all their scores.

        Free variables ``a``, ``b``, with two or more classifiers ``u`` (the signed
        weights' deviations; ``w`` is kept as a deterministic) or ``w`` (simplex), and, for the
        monotone curve, ``delta`` (classifier x segment). Data containers ``features``
        (vetted items x classifier x segment) and ``vetted_label``.

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval.models.joint import JointCalibration, joint_data
        >>> d = joint_data({"a": [0.1, 0.4, 0.8, 0.9], "b": [0.2, 0.3, 0.9, 0.6]}, [0, np.nan, 1, np.nan])
        >>> sorted(v.name for v in JointCalibration("monotone").build(d).free_RVs)
        ['a', 'b', 'delta', 'u']
        """
        data = self._check_data(data)
        feats, infos = self.features(data)
        return self._build(feats[data.vetted], data.labels[data.vetted].astype(np.int64), infos,
                           self._centre(feats), penalty=self.penalty_for(data), flat=self.asymptotes_for(data))

    def penalty_for(self, data: EvalData) -> str:
        """The penalty this model fits ``data`` with: ``"none"`` or ``"jeffreys"``.

        ``penalty="auto"`` resolves here: ``"jeffreys"`` where :func:`separation` finds the
        vetted labels separable by the classifiers' features, else ``"none"``.

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval.models.joint import JointCalibration, joint_data
        >>> d = joint_data({"a": [0.1, 0.2, 0.8, 0.9], "b": [0.3, 0.6, 0.4, 0.7]}, [0, 0, 1, 1])
        >>> JointCalibration(penalty="auto").penalty_for(d), JointCalibration().penalty_for(d)
        ('jeffreys', 'none')
        """
        penalty = getattr(self, "penalty", "none")
        if penalty != "auto":
            return penalty
        v = self._prepared(data)
        return "jeffreys" if v["separation"] is not None else "none"

    def asymptotes_for(self, data: EvalData) -> bool:
        """Whether this model fits ``data`` with flat ends (``asymptotes="auto"``: where
        :func:`separation` finds the vetted labels separable and they hold at least
        :data:`FLAT_MIN_CLASS` of each class).

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval.models.joint import JointCalibration, joint_data
        >>> a = np.linspace(0, 1, 40); y = (a > 0.5).astype(float)
        >>> d = joint_data({"a": a, "b": a[::-1]}, y)
        >>> JointCalibration(asymptotes="auto").asymptotes_for(d), JointCalibration().asymptotes_for(d)
        (True, False)
        >>> JointCalibration(asymptotes="auto").asymptotes_for(joint_data({"a": a[:8], "b": a[:8]}, y[:8] * 0 + (a[:8] > 0.1)))
        False
        """
        flat = getattr(self, "asymptotes", False)
        if flat != "auto":
            return bool(flat)
        enough = min(data.n_vetted_positive, data.n_vetted_negative) >= FLAT_MIN_CLASS
        return enough and self._prepared(data)["separation"] is not None

    def _centre(self, feats: np.ndarray) -> np.ndarray:
        """The signed weights' prior centre for the pool's features ``(n_items, K, S)``."""
        k = feats.shape[1]
        if self.weight_centre == "standardized" and self.weights == "signed" and k > 1:
            return standardized_centre(feats)
        return np.full(k, 1.0 / k)

    def _build(self, fv: np.ndarray, yv: np.ndarray, infos: list[dict], centre: np.ndarray | None = None,
               *, penalty: str = "none", flat: bool = False) -> pm.Model:
        pr = self._prior(infos)
        k = fv.shape[1]
        with pm.Model() as model:
            f = pm.Data("features", fv)
            y = pm.Data("vetted_label", yv)
            a_mu = pm.Data("a_mu", pr["a"][0])
            logb_mu = pm.Data("log_b_mu", pr["log_b"][0])
            a = pm.Normal("a", mu=a_mu, sigma=pr["a"][1])
            b = pm.LogNormal("b", mu=logb_mu, sigma=pr["log_b"][1])
            if k == 1:
                w = pt.ones(1)
            elif self.weights == "simplex":
                w = pm.Dirichlet("w", a=np.ones(k))
            else:
                df = getattr(self, "weight_df", None)
                if df is None:
                    u = pm.ZeroSumNormal("u", sigma=self.weight_sd, shape=k)
                else:  # the same zero-sum subspace, Student-t coordinates in an orthonormal basis of it
                    r = pm.StudentT("u_basis", nu=df, mu=0.0, sigma=self.weight_sd, shape=k - 1)
                    u = pm.Deterministic("u", pt.dot(pt.as_tensor_variable(zero_sum_basis(k)), r))
                c = pm.Data("w_centre", np.full(k, 1.0 / k) if centre is None else centre)
                w = pm.Deterministic("w", c + u)
            if self.curve == "monotone" and self.slopes == "shared":
                delta = pm.Normal("delta", 0.0, DELTA_SD, shape=fv.shape[2:])
                per_col = (f * pt.exp(delta)[None, None, :]).sum(axis=2)
            elif self.curve == "monotone":
                delta = pm.Normal("delta", 0.0, DELTA_SD, shape=fv.shape[1:])
                per_col = (f * pt.exp(delta)[None]).sum(axis=2)
            else:
                per_col = f[:, :, 0]
            eta = a + b * (per_col * w[None, :]).sum(axis=1)
            if flat:
                lo = pm.Beta("lo", *ASYMPTOTE_PRIOR[::-1])
                u = pm.Beta("u_hi", *ASYMPTOTE_PRIOR)
                pm.Bernoulli("label", p=lo + (1.0 - lo) * u * pm.math.sigmoid(eta), observed=y)
            else:
                bernoulli_logit("label", eta, y, any(i.get("wide", False) for i in infos))
            if penalty == "jeffreys":
                jeffreys_potential("jeffreys", per_col, eta)
        return model

    # ------------------------------------------------------------------ fit

    def _check_data(self, data):
        if not isinstance(data, EvalData):
            raise TypeError(
                f"`data` must be an EvalData, got {type(data).__name__}. Build one with "
                "bayeval.models.joint.joint_data({name: scores, ...}, labels)."
            )
        _columns(data)
        if data.n_items < 2:
            raise ValueError(f"A calibration model needs at least 2 items, got {data.n_items}.")
        return data

    def _prepared(self, data) -> dict:
        memo = getattr(self, "_memo", None)
        if memo is not None and memo[0] is data:
            return memo[1]
        feats, infos = self.features(data)
        out = {"feats": feats, "infos": infos, "centre": self._centre(feats), "separation": None}
        if "auto" in (getattr(self, "penalty", "none"), getattr(self, "asymptotes", False)):
            z = np.column_stack([Calibration._z(c, i) for c, i in zip(_columns(data).T, infos, strict=True)])
            out["separation"] = separation(z[data.vetted], data.labels[data.vetted])
        self._memo = (data, out)
        return out

    def _structure(self, data) -> tuple:
        v = self._prepared(data)
        return (self.curve, self.weights, self.weight_sd, getattr(self, "weight_df", None), self.intercept_sd,
                self.slope_sd, self.slopes,
                self.weight_centre, self.penalty_for(data), self.asymptotes_for(data),
                tuple(i["scale"] for i in v["infos"]),
                any(i.get("wide", False) for i in v["infos"]),
                v["feats"].shape[1:])

    def _data_values(self, data) -> dict:
        v = self._prepared(data)
        pr = self._prior(v["infos"])
        out = {"features": v["feats"][data.vetted], "vetted_label": data.labels[data.vetted].astype(np.int64),
               "a_mu": pr["a"][0], "log_b_mu": pr["log_b"][0]}
        if self.weights == "signed" and v["feats"].shape[1] > 1:
            out["w_centre"] = v["centre"]
        return out

    def _posterior(self, data, idata, *, sampling, random_seed):
        v = self._prepared(data)
        self._memo = None
        return JointCalibrationPosterior(data, idata, joint=self, features=v["feats"], infos=v["infos"],
                                         random_seed=random_seed)

    def _log_likelihood(self, post) -> dict:
        return {}  # the posterior stores its own

    def _convergence(self, post, *, warn: bool) -> dict:
        return post.check(warn=warn)


def _columns(data: EvalData) -> np.ndarray:
    if data.features is None:
        raise ValueError(
            "A JointCalibration needs the classifiers' scores as the data's features (one column per "
            "classifier); build the data with bayeval.models.joint.joint_data({name: scores, ...}, labels)."
        )
    return np.asarray(data.features, dtype=np.float64)


class JointCalibrationPosterior(Posterior):
    """Posterior of a :class:`JointCalibration` fit: one label draw per item for all classifiers.

    Everything of :class:`bayeval.Posterior` applies (its metrics are those of the first
    classifier, the data's ``scores``); :func:`bayeval.compare` computes every
    classifier's metric on these draws. :meth:`weights` summarizes ``w``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.models.joint import JointCalibration, joint_data
    >>> rng = np.random.default_rng(1)
    >>> q = rng.beta(1, 3, 300); y = np.full(300, np.nan); y[:40] = rng.random(40) < q[:40]
    >>> post = JointCalibration().fit(joint_data({"a": q, "b": q}, y), random_seed=0, draws=200)
    >>> post.idata.log_likelihood["label"].shape
    (2, 200, 40)
    """

    def __init__(self, data, idata, *, joint: JointCalibration, features, infos, random_seed=None):
        self.joint = joint
        self.features = features
        self._flat_feats = np.ascontiguousarray(features.reshape(features.shape[0], -1))
        self.infos = infos
        super().__init__(data, idata, self._prob, random_seed=random_seed, model=joint.name)
        if "log_likelihood" not in self.idata.groups():
            self.idata.add_groups(log_likelihood=xr.Dataset(
                {"label": (("chain", "draw", "vetted_item"), self.label_loglik())},
                coords={"chain": np.arange(self.n_chains), "draw": np.arange(self.n_draws),
                        "vetted_item": data.item_ids[data.vetted]}))

    def _coef(self, params) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``a (m,)``, ``b (m,)`` and the per-feature coefficients ``(m, K * S)``."""
        a = np.asarray(params["a"], dtype=np.float64).reshape(-1)
        b = np.asarray(params["b"], dtype=np.float64).reshape(-1)
        k, s = self.features.shape[1:]
        w = np.asarray(params["w"], dtype=np.float64).reshape(-1, k) if "w" in params else np.ones((a.size, 1))
        if "delta" in params:  # classifier x segment, or one value per segment shared by the classifiers
            delta = np.asarray(params["delta"], dtype=np.float64).reshape(a.size, -1)
            scale = np.exp(delta.reshape(a.size, 1 if delta.shape[1] == s and k > 1 else k, s))
            scale = np.broadcast_to(scale, (a.size, k, s))
        else:
            scale = np.ones((a.size, k, s))
        return a, b, (w[:, :, None] * scale).reshape(a.size, k * s)

    def _eta(self, params, rows=None) -> np.ndarray:
        a, b, c = self._coef(params)
        f = self._flat_feats if rows is None else self._flat_feats[rows]
        return a[:, None] + b[:, None] * (c @ f.T)

    @staticmethod
    def _flat(params, p: np.ndarray) -> np.ndarray:
        """The curve's probabilities with its flat ends (``asymptotes``), where the fit has them."""
        if "lo" not in params:
            return p
        lo = np.asarray(params["lo"], dtype=np.float64).reshape(-1, 1)
        return lo + (1.0 - lo) * np.asarray(params["u_hi"], dtype=np.float64).reshape(-1, 1) * p

    def _prob(self, params):
        return self._flat(params, special.expit(self._eta(params)))

    def _probabilities_of(self, chain: int, draws: slice, items: np.ndarray) -> np.ndarray:
        params = self._params(chain, draws)
        return self._flat(params, special.expit(self._eta(params, items)))

    def _flat_params(self) -> dict:
        post = self.idata.posterior
        return {n: post[n].values.reshape((-1,) + post[n].shape[2:]) for n in post.data_vars}

    def label_loglik(self) -> np.ndarray:
        """``log p(y_i | s_i, theta)`` of each vetted label, ``(chain, draw, n_vetted)``."""
        vet = np.flatnonzero(self.data.vetted)
        y = self.data.labels[vet]
        params = self._flat_params()
        eta = self._eta(params, vet)
        if "lo" in params:
            p = self._flat(params, special.expit(eta))
            ll = np.where(y == 1, np.log(p), np.log1p(-p))
        else:
            ll = np.where(y == 1, -np.logaddexp(0.0, -eta), -np.logaddexp(0.0, eta))
        return ll.reshape(self.n_chains, self.n_draws, -1)

    def weights(self) -> dict:
        """Posterior mean of each classifier's weight ``w_k`` (how much its score tells, the others given).

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval.models.joint import JointCalibration, joint_data
        >>> q = np.linspace(0.05, 0.95, 100); y = np.full(100, np.nan); y[::4] = (q[::4] > 0.5)
        >>> post = JointCalibration().fit(joint_data({"a": q, "b": np.random.default_rng(0).permutation(q)}, y),
        ...                             random_seed=0, draws=200)
        >>> w = post.weights(); bool(w["a"] > w["b"])
        True
        """
        names = [str(n) for n in self.data.feature_names]
        if "w" not in self.idata.posterior:
            return {names[0]: 1.0}
        w = self.idata.posterior["w"].values.reshape(-1, len(names)).mean(axis=0)
        return {n: float(v) for n, v in zip(names, w, strict=True)}

    def caveat_reversed(self, data: EvalData) -> list[str]:
        """Each classifier whose scores rank the vetted positives low, named
        (:func:`reversed_classifiers`), for :func:`bayeval.core.data.reversed_caveats`.

        Examples
        --------
        See :func:`reversed_classifiers`.
        """
        return reversed_classifiers(data)

    def own_data_caveats(self, data: EvalData) -> list[str]:
        """Every sentence of :func:`bayeval.core.data.data_caveats` for this model, in the comparison's
        words, each classifier named (:func:`joint_caveats`): the joint model reads every score column,
        not only the first.

        Examples
        --------
        See :func:`joint_caveats`.
        """
        return joint_caveats(data)

    def check(self, *, warn: bool = True) -> dict:
        """The sampler's diagnostics, whether the vetted labels hold both classes, and each classifier
        whose scores rank the vetted positives low (:func:`reversed_classifiers`, named); warns when
        something is off. Those findings about the labels are also in ``data_messages``.

        Examples
        --------
        See :class:`JointCalibrationPosterior`.
        """
        from ..core._diagnostics import check_convergence, user_stacklevel

        out = check_convergence(self.idata, self.sampling, self.joint.param_names, warn=False)
        d = self.data
        if d.n_vetted_positive == 0 or d.n_vetted_negative == 0:
            which = "positives" if d.n_vetted_positive == 0 else "negatives"
            out["messages"].insert(0, f"no vetted {which} among the {d.n_vetted} vetted labels: the joint "
                                      "calibration rests on its prior. Vet a few more items before trusting it.")
            out["data_messages"] = [out["messages"][0]]
            out["ok"] = False
        reversed_ = reversed_classifiers(d)  # a classifier's scores turned round: named, said first
        if reversed_:
            out["messages"][:0] = reversed_
            out["data_messages"] = [*reversed_, *out.get("data_messages", [])]
            out["ok"] = False
        if warn and out["messages"]:
            warnings.warn("bayeval: " + " ".join(out["messages"]), UserWarning, stacklevel=user_stacklevel())
        return out

    def check_convergence(self, *, warn: bool = True) -> dict:
        """:meth:`check`."""
        return self.check(warn=warn)
