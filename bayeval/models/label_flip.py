"""Noisy labels with flip rates: the active-testing estimator as a generative model.

The generative story (Nguyen, Ramanan & Fowlkes, 2018, sec. 3.1 and 4.1). Each item
``i`` (an image--tag pair, a detection) has a true label ``z_i`` in {0, 1}, a cheap
noisy label ``y_i`` (a user tag, a coarse annotation), a classifier score ``s_i``,
optionally a category ``c_i`` and features ``x_i``:

* ``z_i | s_i, x_i, c_i ~ Bernoulli(logistic(a_c + b_c g(s_i) + w . x_std_i))``
* ``y_i | z_i, c_i ~ Bernoulli(p(y = 1 | z_i, c))`` -- the *flip rates*: a relevant
  tag is listed with probability ``p(y=1|z=1, c)``, an irrelevant one with
  ``p(y=1|z=0, c)``. Given ``z`` the noisy label does not depend on the score
  (the paper's conditional-independence assumption).

Vetted items (``labels`` not NaN) observe ``z``; for the others ``z`` is summed out,
``p(y_i | theta) = sum_z p(y_i | z) p(z | s_i, x_i)`` (computed on the log scale with
``logaddexp``), so NUTS samples only continuous parameters. On large tag sets without
features the unvetted terms are evaluated on histograms of the scores per (category,
noisy label) group (``LabelFlip(binned=...)``), which makes a gradient cost the number
of bins instead of the number of items. Given a parameter draw,
each unvetted label is Bernoulli with Bayes' rule (the paper's eq. 13)::

    P(z_i = 1 | y_i, s_i, x_i, theta) =
        p(y_i | z=1) p(z=1 | s_i, x_i) / sum_v p(y_i | z=v) p(z=v | s_i, x_i)

and :class:`bayeval.Posterior` turns those draws into P@K, AP, ... per category.

Parametrization and priors
--------------------------
Scores. ``g(s)`` is the standardized score: with ``score_transform="auto"``
(default) scores that all lie in [0, 1] are treated as probabilities and mapped to
their logit (clipped to ``[1e-6, 1 - 1e-6]``), other scores are used as they are;
the result is then centred and scaled by its mean and sd over *all* items (vetted or
not, so the map does not depend on the labels). Features are standardized the same
way, column by column. On these scales the priors below are scale-free.

Flip rates, ordered. The two rates of a category are written as a noisy-OR::

    p(y=1 | z=0, c) = f_c                      f_c = logistic(fpr_logit_c)
    p(y=1 | z=1, c) = f_c + (1 - f_c) r_c      r_c = logistic(lift_logit_c)

an irrelevant tag appears only through noise (``f_c``); a relevant one through the
same noise or because someone noticed it (``r_c``). This forces
``p(y=1|z=1) > p(y=1|z=0)`` in every category, which is what makes ``z = 1`` mean
"relevant": without it the likelihood of unvetted items is unchanged by swapping
``z`` with ``1 - z`` (and the rates with each other, ``a, b`` with ``-a, -b``), a
mirror mode that would make chains disagree.

Score slope. ``b_c`` gets a prior centred at a positive value (a classifier's
scores are expected to rise with relevance) but it is not constrained: a category
where the classifier is useless or inverted stays representable, and the ordering of
the flip rates already fixes the labelling.

Pooling across categories (``pooling=``):

``"partial"`` (default)
    Each of ``fpr_logit``, ``lift_logit``, ``a`` and ``b`` is Normal around a
    population mean with a population sd (non-centred: ``mu + sigma * offset_c``),
    so a rare tag borrows strength from the others.
``"none"``
    Every category has its own parameters with fixed priors (those of the means).
``"complete"``
    One set of parameters for all categories.

With one category (or none) the three are the same model: one pair of rates.

Priors (weakly informative, on the scales above)::

    fpr_mu       ~ Normal(-3, 1.5)   median p(y=1|z=0) = 0.05; 95%: 0.003 .. 0.5
    lift_mu      ~ Normal(0, 1.5)    median r = 0.5;           95%: 0.05 .. 0.95
    intercept_mu ~ Normal(0, 2)      logit prevalence at the average score
    slope_mu     ~ Normal(1.5, 1.5)  per sd of g(s); P(slope_mu < 0) = 0.16
    *_sigma      ~ HalfNormal(1)     (intercept_sigma: HalfNormal(1.5))
    w            ~ Normal(0, 1)      per sd of each feature, shared by categories

Vetted subsets chosen by score, by noisy label or by earlier vetting outcomes (top-K
lists, most-confident mistakes, MEEC) need no correction: the likelihood conditions
on ``s``, ``x`` and ``y`` and models every item, vetted or not, so selection on these
observed quantities is ignorable -- provided the model describes the data.

Without vetted items the flip rates are only weakly identified: the noisy labels
pin down ``p(y=1 | s) = f + (1 - f) r logistic(a + b g(s))``, and a low listing rate
for relevant items trades off against a low prevalence unless the scores separate
the classes well. A few vetted items (or other categories, through pooling) resolve
it; the priors above keep the posterior proper meanwhile.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence

import arviz as az
import numpy as np
import pandas as pd
import pymc as pm
import pytensor.tensor as pt
import xarray as xr
from scipy import special

from ..core import _validate as V
from ..core.data import EvalData, reversed_caveats, reversed_scores_caveat
from ..core.model import Model
from ..core.posterior import Posterior
from ._scales import histogram

__all__ = ["LabelFlip", "LabelFlipPosterior", "simulate_tags"]

POOLINGS = ("partial", "none", "complete")
SCORE_TRANSFORMS = ("auto", "logit", "identity")
_EPS_LOGIT = 1e-6
_ONEHOT_MAX = 1 << 21  # items x categories up to which the category lookup is a dense product

# prior (location, scale) of each population mean, and the scale of its HalfNormal sd
_PRIORS = {
    "fpr": (-3.0, 1.5, 1.0),
    "lift": (0.0, 1.5, 1.0),
    "intercept": (0.0, 2.0, 1.5),
    "slope": (1.5, 1.5, 1.0),
}
_PRIOR_W = 1.0
_RATE_NAMES = ("p_y1_z1", "p_y1_z0")
#: what a handful of vetted positives leaves to this model (:func:`bayeval.core.data.data_caveats`): it does
#: not take the scores as calibrated (they are standardized), and its noisy labels inform the fit
CAVEAT_FEW_POSITIVES = (
    "the share of positives and the flip rates (how often a relevant item is tagged, and an irrelevant one) rest "
    "largely on the noisy labels and on the label-flip model's prior, so AP, P@K and precision get wide intervals, "
    "and recall the widest. Wide is not always enough: the model does not take the scores as calibrated, but reads "
    "the noisy labels through those rates, taking a tag's errors to be the same at every score; where they are not "
    "(relevant items tagged less often at the top, say), the interval can miss the truth."
)

#: what this model makes of scores that rank the vetted positives low
#: (:func:`bayeval.core.data.reversed_scores_caveat`): its score slope can turn negative
REVERSED_READING = (
    "The label-flip model lets the score's slope turn negative, so its intervals can follow these scores, but "
    "they describe the ranking as passed (the positives near the bottom), not the classifier you meant, and its "
    "prior expects a rising slope. Fix the scores and refit."
)


def _reversed(data) -> list[str]:
    said = reversed_scores_caveat(data, REVERSED_READING)
    return [said] if said else []


# ----------------------------------------------------------------------- helpers


def _has_nutpie() -> bool:
    try:
        import nutpie  # noqa: F401
    except ImportError:
        return False
    return True


def _log_rates(fpr_logit, lift_logit):
    """log p(y | z) for the four (y, z) pairs from the noisy-OR logits (PyTensor).

    Returns ``(l_y1_z1, l_y0_z1, l_y1_z0, l_y0_z0)``, computed without forming
    ``1 - p`` explicitly: ``log p(y=0 | z=1) = log(1 - f) + log(1 - r)``.
    """
    l_y1_z0 = -pt.softplus(-fpr_logit)
    l_y0_z0 = -pt.softplus(fpr_logit)
    l_y0_z1 = l_y0_z0 - pt.softplus(lift_logit)
    l_y1_z1 = pt.log1mexp(l_y0_z1)  # log(1 - exp(.))
    return l_y1_z1, l_y0_z1, l_y1_z0, l_y0_z0


def _marginal_logp(value, eta, l11, l01, l10, l00):
    """log p(y | theta) of unvetted items: ``log sum_z p(y | z) p(z | s, x)``.

    ``eta`` is the logit of p(z = 1 | s, x); ``l<y><z>`` are log p(y | z) per item.
    """
    listed = pt.eq(value, 1)
    log_z1, log_z0 = -pt.softplus(-eta), -pt.softplus(eta)
    return pt.logaddexp(log_z1 + pt.switch(listed, l11, l01), log_z0 + pt.switch(listed, l10, l00))


def _marginal_random(eta, l11, l01, l10, l00, rng=None, size=None):
    """Draw noisy labels: z from p(z | s, x), then y from p(y | z)."""
    z = rng.random(size) < special.expit(eta)
    return (rng.random(size) < np.exp(np.where(z, l11, l10))).astype(np.int64)


def _group_histograms(prep: dict, mask: np.ndarray, n_bins: int):
    """Histograms of the standardized scores per (category, noisy label) group.

    Returns the bins' mean scores, category codes, noisy labels and counts (empty
    bins dropped). Within a group every item has the same ``p(y | z)`` and its
    ``p(z | s)`` depends on the score alone, so a bin's items share one likelihood
    term evaluated at their mean score (exact to first order in the bin width).
    """
    g, codes, y = prep["g"][mask], prep["codes"][mask], prep["y"][mask].astype(np.int64)
    key = codes * 2 + y
    out = ([], [], [], [])
    for k in np.unique(key):
        sel = key == k
        pts, counts = histogram(g[sel], n_bins)
        out[0].append(pts)
        out[1].append(np.full(pts.size, k // 2, dtype=np.int64))
        out[2].append(np.full(pts.size, k % 2, dtype=np.int8))
        out[3].append(counts)
    return tuple(np.concatenate(a) for a in out)


def _standardize(x: np.ndarray, what: str, given: str | None = None) -> tuple[np.ndarray, float, float]:
    """``x`` standardized, with its mean and sd; a constant is an error naming its value as
    the user gave it (``given``, where ``x`` is a transform of the user's values)."""
    mean, sd = float(np.mean(x)), float(np.std(x))
    if not np.isfinite(sd) or sd <= 1e-12 * max(1.0, abs(mean)):
        raise ValueError(
            f"All {what} are equal ({given or f'value {mean:g}'}): a constant carries no information about the "
            "true labels and cannot be standardized. "
            + (
                "Drop this feature (feature_names=...)."
                if "feature" in what
                else "Check the scores."
            )
        )
    return (x - mean) / sd, mean, sd


# ----------------------------------------------------------------------- the model


class LabelFlip(Model):
    """Noisy-label model of active testing: flip rates ``p(y | z)`` and a logistic ``p(z | s, x)``.

    See the module documentation for the generative story, the parametrization that
    keeps ``z = 1`` meaning "relevant", and the priors.

    Parameters
    ----------
    pooling : {"partial", "none", "complete"}
        How per-category parameters (flip rates, intercept and slope of ``p(z | s)``)
        share information: hierarchical (default), independent, or one set for all.
    feature_names : sequence of str, optional
        Which columns of ``data.features`` enter ``p(z | s, x)``; default all of them
        (none if the data have no features). ``()`` uses none.
    score_transform : {"auto", "logit", "identity"}
        Map of the scores before standardizing: ``"logit"`` for probabilities,
        ``"identity"`` for margins or logits; ``"auto"`` (default) takes the logit
        when every score lies in [0, 1].
    binned : bool or "auto"
        Evaluate the unvetted items' likelihood on histograms: within each
        (category, noisy label) group the standardized scores are put in ``n_bins``
        equal-width bins, each represented by the mean score of its items and
        weighted by their number. Only possible without features (with features
        every item keeps its own term). ``"auto"`` (default) bins when more than
        ``bin_above`` items are unvetted. The label draws always use each item's own
        score; only the likelihood that the parameters are fitted to is binned.
    n_bins : int
        Bins per (category, noisy label) group (default 200).
    bin_above : int
        Number of unvetted items above which ``binned="auto"`` bins (default
        5,000; ``benchmarks/label_flip_binning.py`` measures speed and accuracy).

    Examples
    --------
    >>> from bayeval.models.label_flip import LabelFlip, simulate_tags
    >>> data, truth = simulate_tags(3, items_per_category=50, random_seed=0)
    >>> model = LabelFlip().build(data)
    >>> sorted(model.coords["category"])
    ['tag0', 'tag1', 'tag2']
    >>> LabelFlip(pooling="none")
    LabelFlip(pooling='none', feature_names=None, score_transform='auto', binned='auto')
    """

    caveat_few_positives = CAVEAT_FEW_POSITIVES  # (data_caveats: this model's prior, not the default's)

    def caveat_reversed(self, data) -> list[str]:
        """The sentence on scores that rank the vetted positives low, in this model's words (its score
        slope can turn negative), for :func:`bayeval.core.data.reversed_caveats`.

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval import EvalData
        >>> from bayeval.models import LabelFlip
        >>> s = np.linspace(0.01, 0.99, 40)
        >>> "slope turn negative" in LabelFlip().caveat_reversed(EvalData(s, (s < 0.3).astype(float)))[0]
        True
        """
        return _reversed(data)

    def __init__(
        self,
        *,
        pooling: str = "partial",
        feature_names: Sequence[str] | None = None,
        score_transform: str = "auto",
        binned: bool | str = "auto",
        n_bins: int = 200,
        bin_above: int = 5_000,
    ):
        self.pooling = V.check_choice(pooling, "pooling", POOLINGS)
        self.score_transform = V.check_choice(score_transform, "score_transform", SCORE_TRANSFORMS)
        if not (isinstance(binned, bool | np.bool_) or (isinstance(binned, str) and binned == "auto")):
            raise ValueError(f"`binned` must be True, False or 'auto', got {binned!r}.")
        self.binned = binned if isinstance(binned, str) else bool(binned)
        self.n_bins = V.as_positive_int(n_bins, "n_bins", minimum=2)
        self.bin_above = V.as_positive_int(bin_above, "bin_above", minimum=0)
        if feature_names is not None:
            if isinstance(feature_names, str):
                feature_names = [feature_names]
            if not all(isinstance(f, str) for f in feature_names):
                raise TypeError(
                    f"`feature_names` must be a sequence of column names (str), got {feature_names!r}."
                )
            feature_names = tuple(feature_names)
        self.feature_names = feature_names

    def __repr__(self) -> str:
        return (
            f"LabelFlip(pooling={self.pooling!r}, feature_names={self.feature_names!r}, "
            f"score_transform={self.score_transform!r}, binned={self.binned!r})"
        )

    def _use_bins(self, prep: dict) -> bool:
        n_unvetted = int((~prep["vetted"]).sum())
        if n_unvetted == 0:
            return False
        if prep["X"].shape[1]:
            if self.binned is True:
                raise ValueError(
                    "binned=True needs a model without features: with features each item's "
                    "p(z | s, x) differs, so items cannot share a bin. Use binned='auto' or "
                    "False, or feature_names=()."
                )
            return False
        if self.binned == "auto":
            return n_unvetted > self.bin_above
        return bool(self.binned)

    # ---------------------------------------------------------------- data prep

    def _check_data(self, data):
        self._prepared(data)
        return data

    def _prepare(self, data) -> dict:
        """Validate ``data`` and compute everything build() and the posterior need."""
        if not isinstance(data, EvalData):
            raise TypeError(
                f"`data` must be an EvalData, got {type(data).__name__}. Build one with "
                "bayeval.EvalData(scores, labels, noisy_labels=..., categories=...)."
            )
        if data.noisy_labels is None:
            raise ValueError(
                "LabelFlip needs noisy labels (the cheap tags whose flip rates it models), but "
                "`data.noisy_labels` is None. Build the EvalData with noisy_labels=..."
            )
        s = np.asarray(data.scores, dtype=np.float64)
        if not np.all(np.isfinite(s)):
            bad = np.flatnonzero(~np.isfinite(s))
            raise ValueError(
                f"`scores` must be finite, but {bad.size} are NaN or infinite (first at position(s) "
                f"{V.preview(bad)}). Remove those items or fix their scores."
            )
        # categories
        if data.has_categories:
            codes = np.asarray(data.category_codes, dtype=np.int64)
            names = np.asarray(data.category_names)
            counts = np.bincount(codes, minlength=names.size)
            if (counts == 0).any():
                empty = names[counts == 0]
                raise ValueError(
                    f"{empty.size} categor{'y has' if empty.size == 1 else 'ies have'} no items "
                    f"(e.g. {V.preview(empty)}); every category needs at least one item. Rebuild the "
                    "EvalData from the items you kept (categories=...) so that empty ones disappear."
                )
        else:
            codes = np.zeros(s.size, dtype=np.int64)
            names = np.array(["all"])
        # scores
        lo, hi = float(s.min()), float(s.max())
        in_unit = lo >= 0 and hi <= 1
        transform = self.score_transform
        if transform == "auto":
            transform = "logit" if in_unit else "identity"
        if transform == "logit":
            if not in_unit:
                outside = int(np.sum((s < 0) | (s > 1)))
                raise ValueError(
                    f"LabelFlip(score_transform='logit') needs scores in [0, 1] (probabilities), read through "
                    f"their logit; got scores from {lo:g} to {hi:g} ({outside} of {s.size} outside [0, 1]). Use "
                    "score_transform='identity' for margins, log-odds or other scores, or leave score_transform "
                    "out ('auto': the logit of scores in [0, 1], other scores as they are)."
                )
            c = np.clip(s, _EPS_LOGIT, 1 - _EPS_LOGIT)
            t = np.log(c) - np.log1p(-c)
        else:
            t = s
        if lo == hi:
            given = f"value {lo:g}"
        else:  # distinct only below the logit's clipping
            given = (f"from {lo:g} to {hi:g}, the same after clipping to [{_EPS_LOGIT:g}, 1 - {_EPS_LOGIT:g}] "
                     "for the logit transform")
        g, g_mean, g_sd = _standardize(t, "scores", given)
        # features
        fnames = np.array([], dtype=str)
        X = np.zeros((s.size, 0))
        f_mean = f_sd = np.zeros(0)
        wanted = self.feature_names
        if wanted is None:
            wanted = () if data.features is None else tuple(str(f) for f in data.feature_names)
        if wanted:
            if data.features is None:
                raise ValueError(
                    f"feature_names={list(wanted)} but the EvalData has no features; build it with "
                    "features=... or use feature_names=None."
                )
            have = [str(f) for f in data.feature_names]
            missing = [f for f in wanted if f not in have]
            if missing:
                raise ValueError(
                    f"Unknown feature name(s) {missing}; the data's features are {have}."
                )
            if len(set(wanted)) != len(wanted):
                raise ValueError(f"`feature_names` lists a feature twice: {list(wanted)}.")
            cols = [have.index(f) for f in wanted]
            raw = np.asarray(data.features, dtype=np.float64)[:, cols]
            if not np.all(np.isfinite(raw)):
                raise ValueError(
                    f"`features` hold {int((~np.isfinite(raw)).sum())} NaN or infinite value(s); "
                    "impute or drop them first."
                )
            X = np.empty_like(raw)
            f_mean, f_sd = np.empty(len(cols)), np.empty(len(cols))
            for j, name in enumerate(wanted):
                X[:, j], f_mean[j], f_sd[j] = _standardize(raw[:, j], f"values of feature {name!r}")
            fnames = np.asarray(wanted)
        n_cat = names.size
        pooling = self.pooling if n_cat > 1 else "complete"
        return {
            "g": g,
            "codes": codes,
            "names": names,
            "X": X,
            "feature_names": fnames,
            "y": np.asarray(data.noisy_labels, dtype=np.int8),
            "vetted": data.vetted,
            "z": np.nan_to_num(data.labels).astype(np.int8),
            "score_transform": transform,
            "score_center": g_mean,
            "score_scale": g_sd,
            "feature_center": f_mean,
            "feature_scale": f_sd,
            "pooling": pooling,
        }

    # --------------------------------------------------------------------- build

    @staticmethod
    def _per_category(name: str, pooling: str, n_cat: int):
        """A per-category parameter (dims "category") under the pooling scheme."""
        loc, scale, sd_scale = _PRIORS[name]
        if pooling == "none":
            return pm.Normal(
                f"{name}_logit" if name in ("fpr", "lift") else name, loc, scale, dims="category"
            )
        mu = pm.Normal(f"{name}_mu", loc, scale)
        if pooling == "complete":
            return pt.zeros(n_cat) + mu
        sigma = pm.HalfNormal(f"{name}_sigma", sd_scale)
        offset = pm.Normal(f"{name}_offset", 0.0, 1.0, dims="category")
        return mu + sigma * offset

    def build(self, data: EvalData) -> pm.Model:
        """The PyMC model for ``data`` (inspect it, change priors, or sample it).

        Coordinates: ``category`` (``["all"]`` without categories), ``feature`` (when
        features are used), ``vetted_item`` and ``unvetted_item`` (item ids).

        Free variables (``pooling="partial"``): ``fpr_mu, fpr_sigma, fpr_offset``,
        ``lift_mu, lift_sigma, lift_offset``, ``intercept_mu, intercept_sigma,
        intercept_offset``, ``slope_mu, slope_sigma, slope_offset`` and ``w`` (per
        feature). ``"complete"`` keeps only the ``*_mu``; ``"none"`` has
        ``fpr_logit, lift_logit, intercept, slope`` per category.

        Deterministics (per category): ``p_y1_z1`` = p(y=1 | z=1), ``p_y1_z0`` =
        p(y=1 | z=0), ``intercept``, ``slope``; with partial pooling also
        ``p_y1_z1_population`` and ``p_y1_z0_population``, the rates of a category
        with every parameter at its population mean.

        Observed: ``label_vetted`` (z of vetted items), ``noisy_vetted`` (their y given
        z) and ``noisy_unvetted`` (y of unvetted items with z summed out). When the
        unvetted likelihood is binned (see ``binned``) the last is replaced by the
        potential ``noisy_unvetted_binned`` (dims ``unvetted_bin``; containers
        ``unvetted_bin_score``, ``unvetted_bin_category``,
        ``unvetted_bin_noisy_label``, ``unvetted_bin_count``). The data
        containers (prefix ``vetted_`` or ``unvetted_``) are ``*_score`` (the
        standardized g(s)), ``*_category`` (category codes), ``*_onehot`` (the same
        as a one-hot matrix, used for the lookup while items x categories stays below
        2**21), ``*_features`` (standardized), ``unvetted_noisy_label``,
        ``vetted_noisy_label`` and ``vetted_label``. Without vetted items this model has
        no vetted-label terms; the model :meth:`fit` samples has them, empty (they add
        nothing to the log-density), so that the fits before and after the first vetted
        labels share one compiled model and a refit (``previous=``) can bridge them.

        Examples
        --------
        >>> from bayeval.models.label_flip import LabelFlip, simulate_tags
        >>> data, truth = simulate_tags(4, items_per_category=30, random_seed=1)
        >>> data = data.with_labels([0, 1, 2], truth[:3])
        >>> model = LabelFlip().build(data)
        >>> sorted(v.name for v in model.observed_RVs)
        ['label_vetted', 'noisy_unvetted', 'noisy_vetted']
        >>> model.named_vars_to_dims["p_y1_z1"]
        ('category',)
        """
        return self._build(data, vetted_terms=False)

    def _build_for_fit(self, data) -> pm.Model:
        # the fits' model carries the vetted-label terms even when nothing is vetted (empty
        # containers add nothing to the log-density): a fit before the first vetted labels and
        # the fits after them are one structure, so the vetting loop's second fit is a refit
        return self._build(data, vetted_terms=True)

    def _build(self, data, *, vetted_terms: bool) -> pm.Model:
        prep = self._prepared(data)
        pooling, names = prep["pooling"], prep["names"]
        n_cat = names.size
        vals, coords, layout = self._containers(data, prep, vetted_terms=vetted_terms)
        n_feat = prep["X"].shape[1]
        with pm.Model(coords=coords) as model:
            fpr_logit = self._per_category("fpr", pooling, n_cat)
            lift_logit = self._per_category("lift", pooling, n_cat)
            a = self._per_category("intercept", pooling, n_cat)
            b = self._per_category("slope", pooling, n_cat)
            if pooling != "none":
                a = pm.Deterministic("intercept", a, dims="category")
                b = pm.Deterministic("slope", b, dims="category")
            w = pm.Normal("w", 0.0, _PRIOR_W, dims="feature") if n_feat else None
            l11, l01, l10, l00 = _log_rates(fpr_logit, lift_logit)
            pm.Deterministic("p_y1_z1", pt.exp(l11), dims="category")
            pm.Deterministic("p_y1_z0", pt.exp(l10), dims="category")
            if pooling == "partial":
                m11, _, m10, _ = _log_rates(model["fpr_mu"], model["lift_mu"])
                pm.Deterministic("p_y1_z1_population", pt.exp(m11))
                pm.Deterministic("p_y1_z0_population", pt.exp(m10))

            # one row per category: a, b and log p(y | z) for the four (y, z) pairs;
            # each item picks its category's row once
            table = pt.stack([a, b, l11, l01, l10, l00], axis=1)

            def rows(part: str, dim: str):
                g = pm.Data(f"{part}_score", vals[f"{part}_score"], dims=dim)
                c = pm.Data(f"{part}_category", vals[f"{part}_category"], dims=dim)
                if f"{part}_onehot" in vals:
                    # small: a dense one-hot product (its gradient is a matrix product too)
                    r = pt.dot(pm.Data(f"{part}_onehot", vals[f"{part}_onehot"], dims=(dim, "category")), table)
                else:
                    r = table[c]
                eta = r[:, 0] + r[:, 1] * g
                if n_feat and f"{part}_features" in vals:
                    x = pm.Data(f"{part}_features", vals[f"{part}_features"], dims=(dim, "feature"))
                    eta = eta + pt.dot(x, w)
                return eta, r

            if layout["vetted"]:
                eta, r = rows("vetted", "vetted_item")
                z = pm.Data("vetted_label", vals["vetted_label"], dims="vetted_item")
                y = pm.Data("vetted_noisy_label", vals["vetted_noisy_label"], dims="vetted_item")
                pm.Bernoulli("label_vetted", logit_p=eta, observed=z, dims="vetted_item")
                # logit p(y = 1 | z) of each vetted item, given its category and true label
                logit_y = pt.switch(pt.eq(z, 1), r[:, 2] - r[:, 3], r[:, 4] - r[:, 5])
                pm.Bernoulli("noisy_vetted", logit_p=logit_y, observed=y, dims="vetted_item")
            if layout["binned"]:
                eta, r = rows("unvetted_bin", "unvetted_bin")
                y = pm.Data("unvetted_bin_noisy_label", vals["unvetted_bin_noisy_label"], dims="unvetted_bin")
                count = pm.Data("unvetted_bin_count", vals["unvetted_bin_count"], dims="unvetted_bin")
                per_bin = _marginal_logp(y, eta, r[:, 2], r[:, 3], r[:, 4], r[:, 5])
                pm.Potential("noisy_unvetted_binned", count * per_bin, dims="unvetted_bin")
            elif layout["unvetted"]:
                eta, r = rows("unvetted", "unvetted_item")
                y = pm.Data("unvetted_noisy_label", vals["unvetted_noisy_label"], dims="unvetted_item")
                pm.CustomDist(
                    "noisy_unvetted",
                    eta,
                    r[:, 2],
                    r[:, 3],
                    r[:, 4],
                    r[:, 5],
                    logp=_marginal_logp,
                    random=_marginal_random,
                    observed=y,
                    dims="unvetted_item",
                )
        return model

    def _prepared(self, data) -> dict:
        """:meth:`_prepare`, memoized for one data object (build, refit and posterior share it)."""
        memo = getattr(self, "_memo", None)
        if memo is not None and memo[0] is data:
            return memo[1]
        prep = self._prepare(data)
        prep["binned"] = self._use_bins(prep)
        self._memo = (data, prep)
        return prep

    def _containers(self, data, prep: dict, *, vetted_terms: bool = True) -> tuple[dict, dict, dict]:
        """The values of the model's data containers, its coords, and which parts exist.

        ``vetted_terms``: the vetted-label containers are there even when nothing is vetted
        (empty; the fits' model), else only where some item is vetted (:meth:`build`)."""
        names = prep["names"]
        n_cat = names.size
        vet = prep["vetted"]
        ids = data.item_ids
        coords = {"category": [str(c) for c in names], "vetted_item": ids[vet].tolist(),
                  "unvetted_item": ids[~vet].tolist()}
        n_feat = prep["X"].shape[1]
        if n_feat:
            coords["feature"] = [str(f) for f in prep["feature_names"]]
        vals = {}

        def rows(part, g_values, codes, x_values=None):
            vals[f"{part}_score"] = g_values
            vals[f"{part}_category"] = codes
            if codes.size * n_cat <= _ONEHOT_MAX:
                vals[f"{part}_onehot"] = (codes[:, None] == np.arange(n_cat)).astype(np.float64)
            if n_feat and x_values is not None:
                vals[f"{part}_features"] = x_values

        layout = {"vetted": bool(vetted_terms or vet.any()), "binned": bool(prep["binned"]), "unvetted": bool((~vet).any())}
        if layout["vetted"]:
            rows("vetted", prep["g"][vet], prep["codes"][vet], prep["X"][vet])
            vals["vetted_label"] = prep["z"][vet]
            vals["vetted_noisy_label"] = prep["y"][vet]
        if layout["binned"]:
            g_bin, c_bin, y_bin, n_bin = _group_histograms(prep, ~vet, self.n_bins)
            coords["unvetted_bin"] = np.arange(g_bin.size)
            rows("unvetted_bin", g_bin, c_bin)
            vals["unvetted_bin_noisy_label"] = y_bin
            vals["unvetted_bin_count"] = n_bin
        elif layout["unvetted"]:
            rows("unvetted", prep["g"][~vet], prep["codes"][~vet], prep["X"][~vet])
            vals["unvetted_noisy_label"] = prep["y"][~vet]
        layout["onehot"] = tuple(sorted(k for k in vals if k.endswith("_onehot")))
        return vals, coords, layout

    def _structure(self, data) -> tuple:
        prep = self._prepared(data)
        _, _, layout = self._containers(data, prep)
        return (prep["pooling"], prep["names"].size, tuple(prep["feature_names"]),
                *sorted(layout.items()))

    def _data_values(self, data) -> dict:
        vals, _, _ = self._containers(data, self._prepared(data))
        return vals

    def _coords(self, data) -> dict:
        _, coords, _ = self._containers(data, self._prepared(data))
        return {k: v for k, v in coords.items() if k != "category"}

    def _posterior(self, data, idata, *, sampling, random_seed):
        prep = self._prepared(data)
        self._memo = None
        return LabelFlipPosterior(data, idata, model=self, prep=prep, sampler=sampling.sampler,
                                  random_seed=random_seed)

    def _convergence(self, post, *, warn: bool) -> dict:
        return post.check(warn=warn)

    def _auto_sampler(self, data) -> str:
        # per-category rates under a hierarchical prior: a funnel the mode does not describe
        # (importance sampling's Pareto k measured 1.2-1.6 with 4-5 categories): NUTS directly
        return "pymc" if self._prepared(data)["pooling"] == "partial" else "auto"

    @property
    def param_names(self) -> tuple[str, ...]:
        return ("p_y1_z1", "p_y1_z0", "intercept", "slope",
                *(f"{p}_{k}" for p in ("fpr", "lift", "intercept", "slope") for k in ("mu", "sigma")), "w")

    # ----------------------------------------------------------------------- fit

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
    ) -> LabelFlipPosterior:
        """Sample the posterior and return a :class:`LabelFlipPosterior`.

        Parameters
        ----------
        data : EvalData
            Scores, noisy labels (required), vetted labels (NaN = not vetted),
            optionally categories and features.
        draws, tune : int
        chains : int, optional
            Default 2.
        cores : int, optional
            Parallel NUTS chains (default: up to 2).
        random_seed : int, numpy Generator or SeedSequence, optional
            Seeds both the sampler and the label draws.
        progressbar : bool
        sampler : {"auto", "importance", "smc", "pymc", "pymc-numba", "nutpie", "numpyro", "blackjax"}
            ``"auto"``: importance sampling from the posterior mode, falling back to
            PyMC's NUTS when its Pareto k exceeds 0.7, for one category or
            ``pooling="complete"`` / ``"none"`` (under a second once compiled; a
            vetting loop's refits reuse the compiled model); PyMC's NUTS directly for
            partially pooled categories, whose funnel the mode does not describe. ``"nutpie"`` is there for large data: its compilation took
            longer than PyMC's whole fit on 1,000-item tag sets (measured).
            ``"smc"``: PyMC's sequential Monte Carlo, each chain an independent run of
            ``draws`` particles tempered from the prior (``tune`` and the NUTS settings
            do not apply): separated modes get their posterior weight, but the
            particles can come out less spread than the posterior (measured on
            ``AnnotatorError``); compare with NUTS before relying on it.
        warn : bool
            Emit a warning when the diagnostics look bad.
        **sample_kwargs
            NUTS settings: ``target_accept`` (default 0.9), ``init``, ``max_treedepth``;
            ``previous``: the posterior of the last fit of this model (a vetting loop's
            refit): with partial pooling its draws are reweighted to the new labels, no
            NUTS run, where the weights are reliable (``post.sampling`` has their Pareto
            k and ESS), else NUTS runs and ``post.sampling.fallback_reason`` says why.

        Returns
        -------
        LabelFlipPosterior

        Examples
        --------
        >>> from bayeval.models.label_flip import LabelFlip, simulate_tags
        >>> data, truth = simulate_tags(1, items_per_category=300, random_seed=2)
        >>> data = data.with_labels(list(range(0, 300, 10)), truth[::10])
        >>> post = LabelFlip().fit(data, draws=200, random_seed=2, progressbar=False)
        >>> post.sampling.sampler
        'importance'
        """
        return super().fit(data, draws=draws, tune=tune, chains=chains, cores=cores, random_seed=random_seed,
                           progressbar=progressbar, sampler=sampler, warn=warn, **sample_kwargs)


# ------------------------------------------------------------------ the posterior


class LabelFlipPosterior(Posterior):
    """Posterior of a :class:`LabelFlip` fit: label draws by Bayes' rule, flip rates, diagnostics.

    Created by :meth:`LabelFlip.fit`; everything of :class:`bayeval.Posterior`
    applies (``metric``, ``summary``, ``label_draws``, ``item_probability``...). The
    label draws of unvetted items come from :meth:`probability`, which uses each
    item's noisy label, score and features; vetted items keep their label.

    Examples
    --------
    >>> from bayeval.models.label_flip import LabelFlipPosterior
    >>> LabelFlipPosterior.flip_rates.__doc__.splitlines()[0]
    'Posterior draws of the flip rates p(y=1 | z=1) and p(y=1 | z=0) per category.'
    """

    caveat_few_positives = CAVEAT_FEW_POSITIVES

    def caveat_reversed(self, data) -> list[str]:
        """:meth:`LabelFlip.caveat_reversed`.

        Examples
        --------
        See :meth:`LabelFlip.caveat_reversed`.
        """
        return _reversed(data)

    def __init__(
        self,
        data: EvalData,
        idata: az.InferenceData,
        *,
        model: LabelFlip,
        prep: Mapping | None = None,
        sampler: str = "unknown",
        random_seed: int | None = None,
    ):
        if not isinstance(model, LabelFlip):
            raise TypeError(
                f"`model` must be the LabelFlip that was fitted, got {type(model).__name__}."
            )
        self.label_flip = model
        self.sampler = sampler
        self._prep = dict(prep) if prep is not None else model._prepare(data)
        self.pooling = self._prep["pooling"]
        super().__init__(data, idata, self.probability, random_seed=random_seed, model=repr(model))

    # ------------------------------------------------------------- label model

    def probability(self, params: Mapping[str, np.ndarray]) -> np.ndarray:
        """``P(z_i = 1 | y_i, s_i, x_i, theta)`` per parameter draw and item (Bayes' rule).

        ``logit P = a_c + b_c g(s_i) + w . x_i + log p(y_i | z=1, c) - log p(y_i | z=0, c)``.

        Parameters
        ----------
        params : mapping
            ``intercept``, ``slope``, ``p_y1_z1``, ``p_y1_z0`` of shape
            ``(n_draws, n_categories)`` (or ``(n_categories,)`` for one draw) and, with
            features, ``w`` of shape ``(n_draws, n_features)``.

        Returns
        -------
        ndarray of shape ``(n_draws, n_items)`` (vetted items included; the label
        draws replace them by their vetted value).
        """
        return self._probability_at(params, None)

    def _probabilities_of(self, chain: int, draws: slice, items: np.ndarray) -> np.ndarray:
        return self._probability_at(self._params(chain, draws), items)

    def _probability_at(self, params, items) -> np.ndarray:
        """:meth:`probability` of the given items only (all with ``items=None``)."""
        sel = slice(None) if items is None else np.asarray(items)
        prep = {k: self._prep[k][sel] for k in ("codes", "y", "g", "X")}
        a = np.atleast_2d(np.asarray(params["intercept"], dtype=np.float64))
        b = np.atleast_2d(np.asarray(params["slope"], dtype=np.float64))
        p1 = np.atleast_2d(np.asarray(params["p_y1_z1"], dtype=np.float64))
        p0 = np.atleast_2d(np.asarray(params["p_y1_z0"], dtype=np.float64))
        codes, y = prep["codes"], prep["y"].astype(bool)
        with np.errstate(divide="ignore"):
            llr1 = np.log(p1) - np.log(p0)  # noisy label 1: evidence for z = 1
            llr0 = np.log1p(-p1) - np.log1p(-p0)  # noisy label 0: evidence for z = 0 (< 0)
        logit = np.take(a, codes, axis=1)
        logit += np.take(b, codes, axis=1) * prep["g"]
        if prep["X"].shape[1]:
            w = np.atleast_2d(np.asarray(params["w"], dtype=np.float64))
            logit += w @ prep["X"].T
        logit += np.where(y, np.take(llr1, codes, axis=1), np.take(llr0, codes, axis=1))
        return special.expit(logit, out=logit)

    # ---------------------------------------------------------------- summaries

    def flip_rates(self) -> xr.Dataset:
        """Posterior draws of the flip rates p(y=1 | z=1) and p(y=1 | z=0) per category.

        Returns
        -------
        xarray.Dataset
            ``p_y1_z1`` (a relevant item is labelled 1) and ``p_y1_z0`` (an irrelevant
            one is), dims ``(chain, draw, category)``; with partial pooling also
            ``p_y1_z1_population`` and ``p_y1_z0_population`` (dims ``(chain, draw)``),
            the rates of a typical category.

        Examples
        --------
        >>> from bayeval.models.label_flip import LabelFlipPosterior
        >>> # post.flip_rates()["p_y1_z1"].mean(("chain", "draw"))
        """
        post = self.idata.posterior
        names = [n for n in (*_RATE_NAMES, "p_y1_z1_population", "p_y1_z0_population") if n in post]
        return post[names]

    def _param_names(self) -> list[str]:
        post = self.idata.posterior
        names = ["p_y1_z1", "p_y1_z0", "intercept", "slope"]
        if self.pooling == "partial":
            names += [
                f"{p}_{k}" for p in ("fpr", "lift", "intercept", "slope") for k in ("mu", "sigma")
            ]
        names += ["w"] if "w" in post else []
        return [n for n in names if n in post]

    def diagnostics(self) -> pd.DataFrame:
        """r_hat, bulk and tail ESS of the model's parameters (one row per scalar).

        Covers the flip rates, intercepts and slopes per category, the feature
        weights and, with partial pooling, the population means and sds.

        Examples
        --------
        >>> from bayeval.models.label_flip import LabelFlipPosterior
        >>> # LabelFlip().fit(data).diagnostics().head()
        """
        from ..core._diagnostics import parameter_table

        return parameter_table(self.idata, self._param_names())  # r_hat unrounded (ArviZ rounds to 2 decimals)

    def check_convergence(self, *, warn: bool = True) -> dict:
        """:meth:`check`."""
        return self.check(warn=warn)

    def check(self, *, warn: bool = True, stacklevel: int | None = None) -> dict:
        """Convergence diagnostics, with a warning when they are bad.

        Importance sampling: bad when the weights' Pareto k >= 0.7 or their ESS is below
        100 per chain. NUTS: any r_hat > 1.01 (with more than one chain), any bulk ESS
        below 100 per chain, or any divergent transition.

        Vetted labels that run clearly against the score direction
        (:func:`bayeval.core.data.reversed_scores`: scores that rank the vetted positives low) are
        also a finding, first in ``messages`` and in ``data_messages`` (the labels' own problems),
        with a warning of their own.

        Returns
        -------
        dict with ``max_rhat``, ``min_ess_bulk``, ``divergences``, ``ok``,
        ``messages``, ``data_messages``, ``sampler``, ``pareto_k`` and ``ess``.

        Examples
        --------
        >>> from bayeval.models.label_flip import LabelFlipPosterior
        >>> # LabelFlip().fit(data, warn=False).check()["ok"]
        """
        from ..core._diagnostics import check_convergence, put_first
        from ..core.sampling import SamplingInfo

        sampling = getattr(self, "sampling", None) or SamplingInfo(self.sampler)
        advice = ("With few vetted labels the flip rates are weakly identified; vet more items, tune longer, "
                  "or pool categories.")
        out = check_convergence(self.idata, sampling, self._param_names(), warn=warn, advice=advice,
                                stacklevel=stacklevel)
        # positives scoring low: said first, not a sampler problem
        return put_first(out, reversed_caveats(self.data, self), warn=warn, stacklevel=stacklevel)


# ------------------------------------------------------------------- simulation


def _per_category_values(value, name: str, n_cat: int, *, lo: float, hi: float, draw) -> np.ndarray:
    """A float (same for every category), a sequence (one per category) or None (draw)."""
    if value is None:
        if draw is None:
            raise TypeError(f"`{name}` must be a number or one number per category, got None.")
        return draw()
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        arr = np.full(n_cat, float(value))
    else:
        try:
            arr = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"`{name}` must be a number or one number per category, got {value!r}."
            ) from exc
        if arr.shape != (n_cat,):
            raise ValueError(
                f"`{name}` must be a number or a sequence of {n_cat} numbers (one per category), "
                f"got shape {arr.shape}."
            )
    if not np.all(np.isfinite(arr)) or arr.min() <= lo or arr.max() >= hi:
        raise ValueError(
            f"`{name}` must lie strictly between {lo:g} and {hi:g}, got {V.preview(arr)}."
        )
    return arr


def simulate_tags(
    n_categories: int,
    *,
    items_per_category=200,
    size_tail: float = 0.5,
    p_relevant_listed=0.38,
    p_irrelevant_listed=0.01,
    prevalence=None,
    score_quality=None,
    random_seed: int | None = None,
) -> tuple[EvalData, np.ndarray]:
    """A synthetic NUS-WIDE-like tag set: true labels, noisy user tags, classifier scores.

    For each category (tag) ``c`` with ``n_c`` items (images considered for it):

    1. every item has a latent evidence ``u_i ~ Normal(0, 1)``;
    2. its true label is ``z_i ~ Bernoulli(logistic(a_c + q_c u_i))``, where ``q_c``
       is the category's score quality and ``a_c`` is solved so that the expected
       share of relevant items is the category's prevalence;
    3. the classifier reports the probability ``s_i = logistic(a_c + q_c u_i)``
       (calibrated within the category, so ``p(z | s)`` is exactly logistic in
       ``logit(s)`` -- the link :class:`LabelFlip` assumes);
    4. the user tag is ``y_i ~ Bernoulli(p_relevant_listed)`` if ``z_i = 1`` and
       ``Bernoulli(p_irrelevant_listed)`` otherwise (NUS-WIDE: 38% and 1%, as the
       active-testing paper quotes).

    No item is vetted (``labels`` all NaN); vet some with
    ``data.with_labels(ids, truth[ids])``. Predictions are ``s >= 0.5``.

    Parameters
    ----------
    n_categories : int
        Number of tags, named ``tag0, tag1, ...`` (zero-padded so that the sorted
        names keep this order).
    items_per_category : int or sequence of int, default 200
        An int is the size of the largest category; the others follow a long tail,
        ``n_c = max(5, round(items_per_category * (c + 1) ** -size_tail))``. A
        sequence gives each category's size exactly.
    size_tail : float, default 0.5
        Exponent of that long tail; 0 gives equal sizes.
    p_relevant_listed, p_irrelevant_listed : float or sequence of float
        p(y=1 | z=1) and p(y=1 | z=0), one value for all categories or one per
        category. Must satisfy ``p_relevant_listed > p_irrelevant_listed``.
    prevalence : float, sequence of float, or None
        Expected share of relevant items per category; None (default) draws them
        from a logit-normal with median 0.1 and logit-sd 0.7, clipped to
        [0.01, 0.6] (rare tags are common).
    score_quality : float, sequence of float, or None
        Slope ``q_c`` of the true log-odds on the evidence (higher = scores separate
        the classes better; 2 gives an AUC near 0.85). None (default) draws
        ``q_c = 2 exp(0.35 N(0, 1))``, so quality varies by category.
    random_seed : None, int, numpy.random.SeedSequence or numpy.random.Generator

    Returns
    -------
    data : EvalData
        ``scores``, ``noisy_labels``, ``categories``, ``predictions``; item ids
        ``0 .. N-1`` in category order; nothing vetted.
    truth : ndarray of int8, shape (N,)
        The true labels ``z``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.models.label_flip import simulate_tags
    >>> data, truth = simulate_tags(5, items_per_category=100, size_tail=0, random_seed=0)
    >>> data.n_items, data.n_vetted, truth.dtype
    (500, 0, dtype('int8'))
    >>> data.counts()["items"].tolist()
    [100, 100, 100, 100, 100, 500]
    >>> big, z = simulate_tags(81, items_per_category=2000, random_seed=0)
    >>> listed = big.noisy_labels == 1
    >>> bool(abs(listed[z == 1].mean() - 0.38) < 0.03), bool(abs(listed[z == 0].mean() - 0.01) < 0.003)
    (True, True)
    """
    n_cat = V.as_positive_int(n_categories, "n_categories")
    if (
        isinstance(size_tail, bool)
        or not isinstance(size_tail, numbers.Real)
        or not np.isfinite(size_tail)
        or size_tail < 0
    ):
        raise ValueError(f"`size_tail` must be a finite number >= 0, got {size_tail!r}.")
    rng = np.random.default_rng(V.as_seed_sequence(random_seed))
    # sizes
    if isinstance(items_per_category, numbers.Integral) and not isinstance(
        items_per_category, bool
    ):
        top = V.as_positive_int(int(items_per_category), "items_per_category")
        sizes = np.maximum(
            5, np.round(top * np.arange(1, n_cat + 1, dtype=float) ** -float(size_tail))
        )
        sizes = np.minimum(sizes, top).astype(np.int64)
    else:
        sizes = np.asarray(items_per_category)
        if sizes.shape != (n_cat,) or sizes.dtype.kind not in "iu" or sizes.min() < 1:
            raise ValueError(
                f"`items_per_category` must be a positive int or {n_cat} positive ints (one per "
                f"category), got {items_per_category!r}."
            )
        sizes = sizes.astype(np.int64)
    tpr = _per_category_values(
        p_relevant_listed, "p_relevant_listed", n_cat, lo=0.0, hi=1.0, draw=None
    )
    fpr = _per_category_values(
        p_irrelevant_listed, "p_irrelevant_listed", n_cat, lo=0.0, hi=1.0, draw=None
    )
    if np.any(tpr <= fpr):
        raise ValueError(
            "`p_relevant_listed` must exceed `p_irrelevant_listed` in every category (a relevant tag "
            f"is listed more often than an irrelevant one); got {V.preview(tpr)} vs {V.preview(fpr)}."
        )
    prev = _per_category_values(
        prevalence,
        "prevalence",
        n_cat,
        lo=0.0,
        hi=1.0,
        draw=lambda: np.clip(
            special.expit(special.logit(0.1) + 0.7 * rng.standard_normal(n_cat)), 0.01, 0.6
        ),
    )
    quality = _per_category_values(
        score_quality,
        "score_quality",
        n_cat,
        lo=0.0,
        hi=np.inf,
        draw=lambda: 2.0 * np.exp(0.35 * rng.standard_normal(n_cat)),
    )
    # intercepts: E[logistic(a + q u)] = prevalence, by bisection on Gauss-Hermite nodes
    nodes, weights = np.polynomial.hermite_e.hermegauss(40)
    weights = weights / weights.sum()
    lo, hi = np.full(n_cat, -40.0), np.full(n_cat, 40.0)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        mean = special.expit(mid[:, None] + quality[:, None] * nodes) @ weights
        lo, hi = np.where(mean < prev, mid, lo), np.where(mean < prev, hi, mid)
    a = 0.5 * (lo + hi)
    cat = np.repeat(np.arange(n_cat), sizes)
    u = rng.standard_normal(cat.size)
    logit = a[cat] + quality[cat] * u
    scores = special.expit(logit)
    truth = (rng.random(cat.size) < scores).astype(np.int8)
    listed = rng.random(cat.size) < np.where(truth == 1, tpr[cat], fpr[cat])
    width = len(str(n_cat - 1))
    names = np.array([f"tag{c:0{width}d}" for c in range(n_cat)])
    data = EvalData(
        scores,
        noisy_labels=listed.astype(np.int8),
        predictions=(scores >= 0.5).astype(np.int8),
        categories=names[cat],
    )
    return data, truth
