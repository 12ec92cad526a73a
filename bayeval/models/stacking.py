"""Choosing and combining models by what they must predict: the vetted labels.

Every candidate -- a calibration curve or a score mixture -- implies a probability that
an item with score ``s`` is positive. :func:`fit` scores each candidate by the
leave-one-out predictive density of every vetted label given its score,
``log p(y_i | s_i, data without y_i)`` (PSIS-LOO on those terms), and combines the
candidates by *stacking* (Yao, Vehtari, Simpson & Gelman, 2018): the weights that make
the mixture of the candidates' leave-one-out predictions best at predicting the vetted
labels. The :class:`StackedPosterior` draws each label draw's parameters from one
candidate, chosen in proportion to its weight, so every metric, ``recalibrate``,
``select`` and the report work on it as on any posterior.

For a score mixture, leaving out item ``i``'s *label* keeps its score as an unvetted
item, so the importance ratio is ``1 / p(y_i | s_i, theta)`` -- the same PSIS-LOO as for a
calibration curve, and the two kinds are comparable. How well a mixture fits the score
histogram is a separate check (its predictive check), not the criterion.

:func:`fit` is the default way to fit: its candidates and their priors were chosen by
measurement on real classifiers' scores (``benchmarks/real_scores.py``; the coverage
it reached is in ``docs/validation.md``).
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Sequence

import arviz as az
import numpy as np
import pandas as pd
import xarray as xr
from scipy import special, stats

from ..core import _validate as V
from ..core._defaults import HDI_PROB
from ..core._diagnostics import exact_where_constant
from ..core._progress import Bar
from ..core._stacking import bootstrap_stacking_weights
from ..core.data import (REVERSED_ASK, EvalData, few_labels_caveats, few_positives_caveat, reversed_caveats,
                         squeezed_range)
from ..core.model import Model, seeds
from ..core.posterior import Posterior
from ..core.sampling import SAMPLERS
from .calibration import Calibration

__all__ = ["fit", "Stack", "StackedPosterior", "default_candidates", "both_readings", "label_loo", "calibration_check"]

#: |z| above which the vetted labels are said to contradict a candidate's probabilities.
CHECK_Z = 2.5
#: Weight above which :meth:`StackedPosterior.check` judges a candidate's diagnostics and
#: calibration check (a candidate with less gives too few of the draws to move a number).
CHECKED_WEIGHT = 0.1
#: How :func:`fit` weighs its candidates: ``"bootstrap"`` averages the stacking optima of
#: Bayesian-bootstrap replicates of the vetted labels, ``"plain"`` takes the optimum of the
#: labels themselves.
STACKING = ("bootstrap", "plain")
#: :func:`fit`'s way (and :class:`Stack`'s).
STACKING_DEFAULT = "bootstrap"
#: Bayesian-bootstrap replicates behind ``stacking="bootstrap"``'s weights.
STACKING_REPLICATES = 400


def default_candidates(data: EvalData, transform: str = "auto") -> list:
    """The candidates :func:`fit` uses by default: the logistic and the monotone curve.

    On probabilities their priors are centred on "calibrated" (on the logit of the
    score); on other scales the score is standardized. Chosen by the validation on real
    classifiers' scores (``benchmarks/real_scores.py``): Beta calibration and a logistic
    curve on the raw probability covered less often (0.81 and 0.67 of the 90% intervals
    with 30 labels, against 0.86 for these two), and weighting them in made the stack
    worse, not better.

    Probabilities squeezed into a narrow band away from 0 and 1
    (:func:`~bayeval.core.data.squeezed_range`) get both readings, four candidates: the
    two curves on the logit with the calibrated prior, and the two on the standardized
    score. The scores alone cannot tell a strongly regularized model (under-confident:
    the standardized reading is right) from a weak but calibrated one (the calibrated
    reading is right); the vetted labels can, and the stacking weighs the readings by
    them (``benchmarks/results/squeezed.md``) -- though 30 labels can also favour the wrong
    one (on a weak calibrated model, in 3 of 10 such label sets). ``transform`` other than
    ``"auto"`` gives every candidate that score feature.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import EvalData
    >>> from bayeval.models.stacking import default_candidates
    >>> default_candidates(EvalData([0.2, 0.9]))
    [Calibration(curve='logistic', transform='auto'), Calibration(curve='monotone', transform='auto')]
    >>> [c.name for c in default_candidates(EvalData(np.linspace(0.05, 0.3, 200)))]
    ['calibration/logistic', 'calibration/monotone', 'calibration/logistic/standardized', 'calibration/monotone/standardized']
    """
    if transform == "auto" and squeezed_range(data.scores) is not None:
        return both_readings()
    return [Calibration("logistic", transform=transform), Calibration("monotone", transform=transform)]


def both_readings() -> list:
    """The logistic and monotone curves on both readings of probability scores: on the
    logit with the calibrated prior, then on the standardized score (what
    :func:`default_candidates` gives squeezed probabilities).

    Examples
    --------
    >>> [c.name for c in both_readings()][2:]
    ['calibration/logistic/standardized', 'calibration/monotone/standardized']
    """
    return [Calibration(curve, transform=t) for t in ("logit", "standardize") for curve in ("logistic", "monotone")]


def _flat(post: Posterior, name: str) -> np.ndarray:
    v = post.idata.posterior[name].values
    return v.reshape((-1,) + v.shape[2:])


def _params_at(post: Posterior, flat_idx: np.ndarray) -> dict:
    out = {name: _flat(post, name)[flat_idx] for name in post.idata.posterior.data_vars}
    out["_draw_index"] = flat_idx
    return out


def label_loglik(post: Posterior) -> np.ndarray:
    """``log p(y_i | s_i, theta)`` of each vetted label, ``(chain, draw, n_vetted)``.

    For any posterior: :meth:`bayeval.Posterior.label_loglik` (from the item probabilities
    it implies at each parameter draw, or the model's own closed form).
    """
    if not isinstance(post, Posterior):
        raise TypeError(f"`post` must be a bayeval Posterior (from a model's fit()), got {type(post).__name__}.")
    return post.label_loglik()


def label_loo(post: Posterior) -> az.ELPDData:
    """PSIS-LOO of the vetted labels given their scores (pointwise, with Pareto k).

    A ValueError where the posterior's data has no vetted label (nothing to leave out: a fit
    to no vetted item, such as a label-flip model fitted to the noisy labels alone, has no
    pointwise log-likelihood, ``label_loglik()`` of shape ``(chain, draw, 0)`` and no
    ``idata.log_likelihood``); :func:`fit` then weighs its candidates equally.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import EvalData, Posterior
    >>> from bayeval.models.stacking import label_loo
    >>> q = np.linspace(0.05, 0.95, 50); y = np.full(50, np.nan); y[::5] = [0, 0, 0, 1, 0, 1, 1, 1, 1, 1]
    >>> loo = label_loo(Posterior.from_probabilities(EvalData(q, y), q, draws=100, random_seed=0))
    >>> loo.loo_i.shape
    (10,)
    """
    if isinstance(post, Posterior) and not post.data.n_vetted:  # ArviZ failed on the empty array in its own words
        raise ValueError(
            f"no vetted labels: PSIS-LOO scores how well the model predicts each vetted label left out, and none "
            f"of the {post.data.n_items} items of this posterior's data is vetted (a fit to the noisy labels or "
            "the scores alone has no pointwise log-likelihood to score). Vet some items (bayeval.active.design, "
            "or a random sample) and refit; bayeval.fit weighs its candidates equally until then."
        )
    # a label predicted with near certainty in every draw: exactly constant, or PSIS's tail fit
    # returns NaN (and a NaN weight then sinks the stack)
    ll = exact_where_constant(label_loglik(post))
    flat = ll.reshape(-1, ll.shape[-1])
    constant = flat.max(axis=0) == flat.min(axis=0)
    idata = az.InferenceData(
        posterior=xr.Dataset({"_": (("chain", "draw"), np.zeros(ll.shape[:2]))}),
        log_likelihood=xr.Dataset({"label": (("chain", "draw", "vetted_item"), ll)}),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loo = az.loo(idata, pointwise=True)
    if constant.any():  # exact for these labels (no importance ratios to smooth): k = 0, not PSIS's inf
        loo.pareto_k.values[constant] = 0.0
    return loo


def calibration_check(post: Posterior, loo: az.ELPDData | None = None) -> dict:
    """Do the vetted labels contradict the probabilities the model gives them?

    Compares the number of vetted positives with the sum of their leave-one-out
    predictive probabilities (each label predicted without itself):
    ``z = (sum y - sum p) / sqrt(sum p (1 - p))``. ``|z| > 2.5`` flags the model.
    Also gives the rank correlation's sign check: whether positives get higher
    predicted probabilities than negatives (the leave-one-out AUC).

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import EvalData, Posterior
    >>> from bayeval.models.stacking import calibration_check
    >>> q = np.full(40, 0.1); y = np.r_[np.ones(20), np.full(20, np.nan)]  # 20 of 20 positive at 10%
    >>> post = Posterior.from_probabilities(EvalData(q, y), q, draws=50, random_seed=0, check=False)
    >>> calibration_check(post)["flagged"]
    True
    """
    if loo is None:
        loo = label_loo(post)
    y = post.data.labels[post.data.vetted]
    p = np.exp(np.asarray(loo.loo_i)).clip(1e-12, 1 - 1e-12)
    p1 = np.where(y == 1, p, 1 - p)  # LOO predictive probability of a positive
    var = float(np.sum(p1 * (1 - p1)))
    z = float((y.sum() - p1.sum()) / np.sqrt(var)) if var > 0 else 0.0
    auc = float("nan")
    if 0 < y.sum() < y.size:
        auc = float(stats.mannwhitneyu(p1[y == 1], p1[y == 0]).statistic / (y.sum() * (y.size - y.sum())))
    return {"z": z, "flagged": bool(abs(z) > CHECK_Z), "expected_positives": float(p1.sum()),
            "vetted_positives": int(y.sum()), "loo_auc": auc}


class StackedPosterior(Posterior):
    """Label draws from several candidate posteriors, in proportion to their stacking weights.

    Created by :func:`fit`. ``candidates`` maps each candidate's name to its fitted
    posterior; ``comparison`` is the table by which they were weighted (one row per
    candidate: ``elpd_loo``, its ``se``, ``weight``, the worst Pareto ``k``, the
    calibration check's ``z`` and ``flagged``). Each draw of this posterior is one draw of
    one candidate: ``idata.posterior`` holds ``candidate`` (its index) and ``source_draw``
    (the flat index of the draw in that candidate's posterior). Each candidate was sampled
    on its own: ``post.candidates[name].sampling`` says how; the stack's own ``sampling``
    is None when there are several (``sampler`` names the samplers used).

    Examples
    --------
    >>> import numpy as np
    >>> import bayeval as be
    >>> rng = np.random.default_rng(2)
    >>> q = rng.beta(1, 3, 300); y = np.full(300, np.nan); y[:40] = rng.random(40) < q[:40]
    >>> post = be.fit(be.EvalData(q, y), random_seed=0, draws=300)
    >>> sorted(post.candidates)
    ['calibration/logistic', 'calibration/monotone']
    >>> post.idata.posterior["candidate"].shape
    (2, 300)
    """

    has_curves = True

    def report_sections(self) -> tuple[str, ...]:
        """The report shows the calibration curve (see :meth:`bayeval.Posterior.report_sections`)."""
        return ("calibration",)

    def check_convergence(self, *, warn: bool = True) -> dict:
        """:meth:`check`."""
        return self.check(warn=warn)

    def __init__(self, data, candidates: dict, comparison: pd.DataFrame, *, chains: int, draws: int, random_seed=None):
        self.candidates = candidates
        self.comparison = comparison
        names = list(candidates)
        w = comparison.loc[names, "weight"].to_numpy(dtype=float)
        total = chains * draws
        counts = _allocate(w, total)
        rng = np.random.default_rng(np.random.SeedSequence(random_seed).spawn(1)[0])
        which = np.repeat(np.arange(len(names)), counts)
        src = np.empty(total, dtype=np.int64)
        for k, name in enumerate(names):
            n_k = candidates[name].n_chains * candidates[name].n_draws
            pick = rng.choice(n_k, size=counts[k], replace=counts[k] > n_k)
            src[which == k] = pick
        order = rng.permutation(total)
        which, src = which[order], src[order]
        coords = {"chain": np.arange(chains), "draw": np.arange(draws)}
        ds = xr.Dataset(
            {"candidate": (("chain", "draw"), which.reshape(chains, draws)),
             "source_draw": (("chain", "draw"), src.reshape(chains, draws))},
            coords=coords,
        )
        ds.attrs["candidates"] = ", ".join(names)
        self._names = names
        label = ", ".join(f"{n} ({wt:.2f})" for n, wt in zip(names, w, strict=True) if wt >= 0.005)
        super().__init__(data, az.InferenceData(posterior=ds), self._prob, random_seed=random_seed,
                         model=f"stacked: {label}" if len(names) > 1 else names[0])

    def _prob(self, params):
        which = np.asarray(params["candidate"])
        src = np.asarray(params["source_draw"])
        out = np.empty((which.size, self.data.n_items))
        for k in np.unique(which):
            rows = which == k
            cand = self.candidates[self._names[k]]
            p = cand._probability(_params_at(cand, src[rows]))
            out[rows] = np.broadcast_to(np.asarray(p, dtype=np.float64), (int(rows.sum()), self.data.n_items))
        return out

    def label_loglik(self) -> np.ndarray:
        """``log p(y_i | s_i, theta)`` of each vetted label, ``(chain, draw, n_vetted)``: each
        draw's from the candidate it came from (the candidate's own, on the vetted items
        alone: the generic route computed every item's probability at every draw, 25 s of
        a fit to a million items)."""
        which = self.idata.posterior["candidate"].values.ravel()
        src = self.idata.posterior["source_draw"].values.ravel()
        out = np.empty((which.size, int(self.data.n_vetted)))
        for k in np.unique(which):
            ll = np.asarray(self.candidates[self._names[k]].label_loglik(), dtype=np.float64)
            out[which == k] = ll.reshape(-1, ll.shape[-1])[src[which == k]]
        return np.maximum(out, -1e3).reshape(self.n_chains, self.n_draws, -1)

    def curve_draws(self, scores, *, category=None) -> np.ndarray:
        """``P(y = 1 | score)`` at ``scores`` for every draw of the stack (each from its candidate).

        ``category``: one of the data's categories, for candidates whose curve is pooled
        across them (default: the shared curve); each candidate gives that category's
        curve and the stack mixes them as it mixes the shared ones.
        """
        which = self.idata.posterior["candidate"].values.ravel()
        src = self.idata.posterior["source_draw"].values.ravel()
        grid = V.as_1d_float(scores, "scores")
        out = np.empty((which.size, grid.size))
        for k in np.unique(which):
            cand = self.candidates[self._names[k]]
            if not cand.has_curves:
                raise NotImplementedError(
                    f"{self._names[k]} defines no calibration curve; use post.item_probability() for its items."
                )
            kw = {} if category is None else {"category": category}
            if kw and "category" not in inspect.signature(cand.curve_draws).parameters:
                raise ValueError(f"{self._names[k]} has no per-category curve; leave `category` out.")
            out[which == k] = cand.curve_draws(grid, **kw)[src[which == k]]
        return out

    def curve(self, scores=None, *, hdi_prob: float = HDI_PROB, n_grid: int = 200, category=None) -> xr.Dataset:
        """The stacked calibration curve ``P(y = 1 | score)``: mean and HDI per score
        (``category``: that category's curve, see :meth:`curve_draws`)."""
        from .calibration import curve_summary

        return curve_summary(self, scores, hdi_prob, n_grid, category=category)

    @property
    def weights(self) -> pd.Series:
        """The stacking weight of each candidate."""
        return self.comparison["weight"]

    def caveat_few_positives(self, data) -> str:
        """What a handful of vetted positives leaves to the priors of the candidates with weight,
        for :func:`bayeval.core.data.data_caveats` (each group's own words where they differ)."""
        w = self.weights
        return _stack_few_positives(data, [(n, self.candidates[n], float(w[n])) for n in self._weighted()])

    def caveat_reversed(self, data) -> list[str]:
        """The sentences on scores that rank the vetted positives low, for
        :func:`bayeval.core.data.reversed_caveats`: the candidates' own (a joint model names each
        classifier), each said once.

        Examples
        --------
        See :func:`bayeval.core.data.reversed_caveats`.
        """
        w = self.weights
        return _stack_reversed(data, [(n, self.candidates[n], float(w[n])) for n in self._weighted()])

    def own_data_caveats(self, data) -> list[str] | None:
        """The candidates' own data caveats where every candidate with weight gives them (the joint
        models of :func:`bayeval.compare`: each classifier named), each sentence once; else None (the
        sentences of :func:`bayeval.core.data.data_caveats`).

        Examples
        --------
        See :func:`bayeval.models.joint.joint_caveats`.
        """
        return _stack_own_caveats(data, [self.candidates[n] for n in self._weighted()])

    def _weighted(self) -> list[str]:
        return [n for n in self._names if self.comparison.loc[n, "weight"] > 0]

    def _checked(self) -> list[str]:
        """The candidates whose diagnostics :meth:`check` judges: weight above
        :data:`CHECKED_WEIGHT` (all those with weight, where none is above it)."""
        weighted = self._weighted()
        return [n for n in weighted if self.comparison.loc[n, "weight"] > CHECKED_WEIGHT] or weighted

    def diagnostics(self) -> pd.DataFrame:
        """The sampler diagnostics of every candidate with weight, one row per parameter.

        Columns ``r_hat``, ``ess_bulk``, ``ess_tail`` (the candidate's own, of all its
        draws: what :meth:`check` judges), ``weight`` (its stacking weight),
        ``stack_draws`` (how many of its draws the stack takes: its weight's share of the
        stack's draws, picked at random) and ``stack_ess_bulk`` (the bulk ESS of those,
        :func:`bayeval.core._diagnostics.subsample_ess`: what the candidate's part of every
        number rests on). The rows of candidates with a weight of at most
        :data:`CHECKED_WEIGHT` are shown, but :meth:`check` does not judge them.
        """
        from ..core._diagnostics import subsample_ess

        taken = np.bincount(self.idata.posterior["candidate"].values.ravel(), minlength=len(self._names))
        frames = []
        for name in self._weighted():
            cand = self.candidates[name]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t = cand.diagnostics().copy()
            t.index = [f"{name}: {i}" for i in t.index]
            t["weight"] = float(self.comparison.loc[name, "weight"])
            m, n = int(taken[self._names.index(name)]), cand.n_chains * cand.n_draws
            t["stack_draws"] = m
            t["stack_ess_bulk"] = [round(subsample_ess(float(e), n, m, replace=m > n), 0) for e in t["ess_bulk"]]
            frames.append(t)
        return pd.concat(frames) if frames else pd.DataFrame(
            columns=["r_hat", "ess_bulk", "ess_tail", "weight", "stack_draws", "stack_ess_bulk"])

    def check(self, *, warn: bool = True) -> dict:
        """The candidates' diagnostics combined, and the calibration check of those with weight.

        Only the candidates with weight above :data:`CHECKED_WEIGHT` (0.1) are judged (all
        those with weight, where none is above it): a candidate that gives a few percent of
        the draws barely moves any number, so its diagnostics neither warn nor enter the
        figures. Returns a dict with ``max_rhat``, ``min_ess_bulk``, ``divergences``,
        ``sampler``, ``pareto_k`` and ``ess`` (over those judged candidates: a maximum the
        check reports is always one that could have warned), ``ok``, ``messages``,
        ``data_messages`` (those of the messages about the vetted labels themselves: a
        contradicted curve, a class not vetted, vetted labels that run against the score direction:
        :func:`bayeval.core.data.reversed_scores`) and ``unchecked`` (the name and weight of each
        candidate with weight that was not judged; its own diagnostics are in
        :meth:`diagnostics` and ``post.candidates[name].check()``). Warns when a judged
        candidate is flagged by the calibration check or its sampler diagnostics are bad.
        """
        msgs, rhats, ess, div, by_msg, samplers, ks = [], [], [], 0, {}, [], []
        data_msgs, data_of = [], set()  # the labels' own problems (see core._diagnostics.sampler_messages)
        reversed_ = reversed_caveats(self.data, self)  # the data's own finding (a joint model: per classifier)
        # each candidate's own words for it: said once above, in the stack's, not again per candidate
        own_reversed = {m for n in self._names for m in reversed_caveats(self.data, self.candidates[n])}
        checked = self._checked()
        for name in checked:
            cand = self.candidates[name]
            res = cand.check(warn=False) if hasattr(cand, "check") else {}
            samplers.append(res.get("sampler") or "unknown")
            ks.append(res.get("pareto_k") if res.get("pareto_k") is not None else np.nan)
            rhats.append(float(res.get("max_rhat", np.nan)))
            ess.append(float(res.get("min_ess_bulk", np.nan)))
            div += int(res.get("divergences", 0))
            if self.comparison.loc[name, "flagged"]:
                msgs.append(
                    f"the vetted labels contradict {name} (calibration z = {self.comparison.loc[name, 'z']:+.1f})."
                )
                data_msgs.append(msgs[-1])
            for m in res.get("messages", []):
                if m not in reversed_ and m not in own_reversed:  # the data's own finding, said once below
                    by_msg.setdefault(m, []).append(name)
            data_of.update(res.get("data_messages") or ())
        joined = {m: f"{', '.join(names)}: {m}" for m, names in by_msg.items()}
        msgs += list(joined.values())
        data_msgs += [joined[m] for m in joined if m in data_of]
        if reversed_:  # positives scoring low: every candidate's curve rises with the score
            msgs[:0] = reversed_
            data_msgs[:0] = reversed_
        if warn and msgs:
            from ..core._diagnostics import user_stacklevel

            warnings.warn("bayeval: " + " ".join(msgs), UserWarning, stacklevel=user_stacklevel())
        finite_r = [r for r in rhats if np.isfinite(r)]
        finite_e = [e for e in ess if np.isfinite(e)]
        out = {"max_rhat": max(finite_r) if finite_r else float("nan"),
               "min_ess_bulk": min(finite_e) if finite_e else float("nan"),
               "divergences": div, "ok": not msgs, "messages": msgs, "data_messages": data_msgs,
               "sampler": "+".join(sorted(set(samplers))) or "none", "pareto_k": None, "ess": None,
               "unchecked": {n: float(self.comparison.loc[n, "weight"]) for n in self._weighted() if n not in checked}}
        if samplers and set(samplers) == {"importance"}:
            out.update(pareto_k=max(ks), ess=min(ess))
        return out


def _allocate(w: np.ndarray, total: int) -> np.ndarray:
    """Integer counts proportional to ``w`` summing to ``total`` (largest remainder)."""
    raw = w / w.sum() * total
    counts = np.floor(raw).astype(int)
    rest = total - counts.sum()
    if rest:
        counts[np.argsort(-(raw - counts), kind="stable")[:rest]] += 1
    return counts


def _stack_few_positives(data, parts) -> str:
    """The sentence on a handful of vetted positives for a stack of ``parts``, ``(name, model or
    posterior, weight or None)``: the candidates' own where they share one (the default's, the
    standardized curves', the label-flip model's), else each group's, named with its share of the
    draws."""
    groups: dict[str, list] = {}
    for name, model, weight in parts:
        groups.setdefault(few_positives_caveat(data, model), []).append((name, weight))
    if len(groups) == 1:
        return next(iter(groups))
    said = []
    for sentence, members in groups.items():
        weights = [w for _, w in members if w is not None]
        share = f" ({sum(weights):.0%} of the draws)" if len(weights) == len(members) else ""
        said.append(f"{', '.join(n for n, _ in members)}{share}: {sentence[:1].upper()}{sentence[1:]}")
    return "the stack's candidates read so few through priors of their own. " + " ".join(said)


def _stack_reversed(data, parts) -> list[str]:
    """The sentences on scores turned round of a stack of ``parts``, ``(name, model or posterior, weight
    or None)``: each finding once (:func:`bayeval.core.data.reversed_caveats`, a joint model's per
    classifier). Candidates that read it alike say their one sentence; where their readings (the words
    after :data:`~bayeval.core.data.REVERSED_ASK`: what the model makes of such scores) differ, the
    finding is said once and each group's reading after it, named with its share of the draws."""
    found: dict[str, dict[str, list]] = {}  # finding -> reading -> [(name, weight)]
    for name, model, weight in parts:
        for sentence in reversed_caveats(data, model):
            head, ask, reading = sentence.partition(REVERSED_ASK)
            found.setdefault(head + ask, {}).setdefault(reading.strip(), []).append((name, weight))
    out = []
    for finding, readings in found.items():
        if len(readings) == 1:
            reading = next(iter(readings))
            out.append(f"{finding} {reading}" if reading else finding)
            continue
        said = []
        for reading, members in readings.items():
            weights = [w for _, w in members if w is not None]
            share = f" ({sum(weights):.0%} of the draws)" if len(weights) == len(members) else ""
            said.append(f"{', '.join(n for n, _ in members)}{share}: {reading}")
        out.append(f"{finding} The stack's candidates read such scores apart. " + " ".join(said))
    return out


def _stack_own_caveats(data, models) -> list[str] | None:
    """The ``own_data_caveats`` of ``models`` (models or posteriors), each sentence once, where every one
    gives them; None where one does not."""
    said = []
    for model in models:
        own = getattr(model, "own_data_caveats", None)
        mine = own(data) if callable(own) else None
        if mine is None:
            return None
        said += mine
    return list(dict.fromkeys(said)) if models else None


def _name(model, used: set) -> str:
    name = getattr(model, "name", None) or repr(model)
    base, j = name, 2
    while name in used:
        name = f"{base}#{j}"
        j += 1
    used.add(name)
    return name


def _same_model(spec, m) -> bool:
    return spec is not None and type(spec) is type(m) and spec.get_params() == m.get_params()


def _previous_fits(previous, cands: list) -> list:
    """Each candidate's own earlier fit (None where there is none), from ``previous``: a
    stacked fit (its candidates' posteriors, matched by model) or one candidate's posterior."""
    if previous is None:
        return [None] * len(cands)
    if not hasattr(previous, "idata") or not hasattr(previous, "data"):
        raise TypeError(f"`previous` must be the posterior of an earlier bayeval.fit (to refit from), got "
                        f"{type(previous).__name__}. Pass the posterior of the last fit, or None.")
    stacked = isinstance(previous, StackedPosterior)
    pool = list(previous.candidates.values()) if stacked else [previous]
    out = [next((p for p in pool if _same_model(getattr(p, "model_spec", None), m)), None) for m in cands]
    if not stacked and all(p is None for p in out):
        raise ValueError(
            f"`previous` is a fit of {getattr(previous, 'model_spec', None)!r}, which is none of the candidates "
            f"{cands!r}. Pass the posterior of an earlier bayeval.fit (each candidate refits from its own part of "
            "it), or previous=None."
        )
    return out


def _fit_on_client(client, data: EvalData, cands: list, used: set, bar, before: list,
                   **fit_kwargs) -> tuple[dict, dict]:
    """The candidates' fits as Dask tasks, one each: ``(fits, errors)`` by candidate name,
    as the loop in :func:`fit` makes them (a single candidate's failure is raised);
    ``before``: each candidate's earlier fit to refit from, or None."""
    from ..core.distributed import check_client, fit_many

    client = check_client(client)
    for m in cands:
        if not isinstance(m, Model):
            raise TypeError(f"With a client every candidate must be a bayeval model (it is fitted on a worker); "
                            f"got {m!r}. Leave `client` out to fit it in this process.")
    names = [_name(m, used) for m in cands]
    done = []

    def said(line: str) -> None:
        done.append(line)
        bar.update(f"bayeval: {line}", completed=len(done))

    got = fit_many({n: (m, data, {**fit_kwargs, "progressbar": False, **({} if b is None else {"previous": b})})
                    for n, m, b in zip(names, cands, before, strict=True)},
                   client=client, what="candidate", errors="keep", progress=said)
    errors = {n: got.failures[n].splitlines()[0] for n in names if n in got.failures}
    if len(cands) == 1 and errors:
        raise RuntimeError(f"The candidate {names[0]} failed on the client: {errors[names[0]]}")
    return {n: got[n] for n in names if n in got}, errors


class Stack(Model):
    """The default model: candidates weighted by the vetted labels (see :func:`fit`).

    A model object with the same ``fit(data, ...)`` form as the others, for model cards
    (``[model] name = "default"``), the CLI and :class:`bayeval.ActiveSession`.

    Parameters
    ----------
    candidates : sequence of models, optional
        Default :func:`default_candidates` for the data's scores.
    transform : str
        The score feature of the default candidates (see :class:`Calibration`), e.g.
        ``"logodds"`` for scores that are a model's log-odds. Default ``"auto"``.
    stacking : {"bootstrap", "plain"}
        How the vetted labels weigh the candidates (see :func:`fit`).

    Examples
    --------
    >>> from bayeval.models import Calibration, Stack
    >>> Stack([Calibration("logistic"), Calibration("monotone")])
    Stack(candidates=[Calibration(curve='logistic', transform='auto'), Calibration(curve='monotone', transform='auto')])
    """

    def __init__(self, candidates: Sequence | None = None, *, transform: str = "auto",
                 stacking: str = STACKING_DEFAULT):
        if candidates is not None and transform != "auto":
            raise ValueError("Give `candidates` or `transform`, not both: the transform applies to the default ones.")
        V.check_choice(transform, "transform", ("auto", "logit", "standardize", "logodds"))
        self.candidates = None if candidates is None else list(candidates)
        self.transform = transform
        self.stacking = V.check_choice(stacking, "stacking", STACKING)

    def __repr__(self) -> str:
        how = "" if getattr(self, "stacking", STACKING_DEFAULT) == STACKING_DEFAULT else f", stacking={self.stacking!r}"
        if self.candidates is None:
            extra = "" if self.transform == "auto" else f", transform={self.transform!r}"
            return f"Stack(candidates=default{extra}{how})"
        return f"Stack(candidates={self.candidates!r}{how})"

    def caveat_few_positives(self, data) -> str:
        """What a handful of vetted positives leaves to the candidates' priors, for
        :func:`bayeval.core.data.data_caveats`: before the fit, every candidate's (each group's own
        words where they differ)."""
        cands = default_candidates(data, self.transform) if self.candidates is None else self.candidates
        used: set = set()
        return _stack_few_positives(data, [(_name(m, used), m, None) for m in cands])

    def caveat_reversed(self, data) -> list[str]:
        """The sentences on scores that rank the vetted positives low, for
        :func:`bayeval.core.data.reversed_caveats`: before the fit, every candidate's (a joint model
        names each classifier), each said once.

        Examples
        --------
        See :func:`bayeval.core.data.reversed_caveats`.
        """
        cands = default_candidates(data, self.transform) if self.candidates is None else self.candidates
        used: set = set()
        return _stack_reversed(data, [(_name(m, used), m, None) for m in cands])

    def own_data_caveats(self, data) -> list[str] | None:
        """Before the fit, the candidates' own data caveats where every candidate gives them (the
        joint models of :func:`bayeval.compare`), each sentence once; else None.

        Examples
        --------
        See :func:`bayeval.models.joint.joint_caveats`.
        """
        return _stack_own_caveats(data, default_candidates(data, self.transform) if self.candidates is None
                                  else self.candidates)

    def build(self, data):
        raise TypeError(
            "A Stack has no single PyMC model: it fits each candidate's own model "
            "(e.g. Stack().candidates or default_candidates(data)) and weights them. Call build() on a candidate."
        )

    def get_params(self) -> dict:
        return {"candidates": self.candidates, "transform": self.transform,
                "stacking": getattr(self, "stacking", STACKING_DEFAULT)}

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
    ) -> StackedPosterior:
        """Fit and stack the candidates (see :func:`fit`); ``tune``, ``cores`` and the NUTS
        settings in ``sample_kwargs`` are used where a candidate falls back to NUTS;
        ``max_memory_gb=`` raises the memory guard."""
        cands = self.candidates
        if cands is None and self.transform != "auto":
            cands = default_candidates(data, self.transform)
        chains = self.default_chains if chains is None else chains
        return fit(data, candidates=cands, draws=draws, chains=chains, random_seed=random_seed, sampler=sampler,
                   progressbar=progressbar, warn=warn, tune=tune, cores=cores,
                   stacking=getattr(self, "stacking", STACKING_DEFAULT), **sample_kwargs)


def fit(
    data: EvalData,
    *,
    candidates: Sequence | None = None,
    transform: str = "auto",
    draws: int = 1000,
    chains: int = 2,
    random_seed=None,
    sampler: str = "auto",
    progressbar: bool = True,
    warn: bool = True,
    client=None,
    stacking: str = STACKING_DEFAULT,
    **fit_kwargs,
) -> StackedPosterior:
    """Fit the candidates, weight them by the vetted labels, and return their stack.

    The default way to get a posterior over the labels of an evaluation set: it needs
    only scores and some vetted labels (random ones give honest intervals; see
    ``docs/validation.md`` for the coverage measured on real classifiers).

    Parameters
    ----------
    data : EvalData
        Scores and vetted labels (NaN = not vetted).
    candidates : sequence of models, optional
        Models with ``fit(data, ...)`` returning a :class:`bayeval.Posterior`, e.g.
        ``Calibration("beta")`` or ``ScoreMixture("skewnormal", "skewnormal")``. Default
        :func:`default_candidates`.
    transform : {"auto", "logit", "standardize", "logodds"}
        The score feature of the default candidates (see :class:`Calibration`):
        ``"standardize"`` for probabilities that are not calibrated (squeezed into a
        narrow range by a strongly regularized model, say), ``"logodds"`` for scores that
        are log-odds. Only with the default candidates.
    draws, chains : int
        Posterior draws of the stack (each candidate is fitted with the same numbers).
    random_seed : int, optional
        Seeds every candidate's sampler, the allocation of draws and the label draws.
    sampler : str
        Passed to every candidate's ``fit``.
    progressbar : bool, default True
        One progress bar on stderr (a line of text in a notebook) for a fit that runs
        more than about 2 s, e.g. on a million items: which candidate is sampling, then
        the comparison and stacking, with the time left. A short fit shows nothing;
        ``False`` shows nothing at all (the command line's ``--no-progress``).
    warn : bool
        Warn when no label is vetted, when the vetted labels run clearly against the score
        direction (positives scoring low: :func:`bayeval.core.data.reversed_scores`; every
        candidate's curve rises with the score), when fewer than 5 of the vetted labels are
        positive (or negative: :func:`bayeval.core.data.few_labels_caveats`; the intervals then
        rest largely on the prior and can miss the truth), or when the diagnostics are bad.
    stacking : {"bootstrap", "plain"}
        How the vetted labels weigh the candidates. Both maximize the labels' leave-one-out
        log score of the mixture (stacking). ``"plain"`` takes the optimum for the labels
        at hand; ``"bootstrap"`` averages the optima of Bayesian-bootstrap replicates of
        the labels (:data:`STACKING_REPLICATES`, seeded by ``random_seed``), so that with a
        few dozen labels a candidate the labels cannot rule out keeps some weight instead
        of one sample of labels giving another all of it; with many labels the two agree.
    client : distributed.Client, optional
        Fit the candidates as Dask tasks on this client, one each
        (:func:`bayeval.core.distributed.fit_many`; bayeval models only): the same
        posterior as fitted here. None (the default): one after another in this process.
    **fit_kwargs
        Passed to every candidate's ``fit`` (e.g. ``tune=``); ``max_memory_gb=`` sets
        the limit of the up-front memory check (default 4 GB, or the environment
        variable ``BAYEVAL_MAX_MEMORY_GB``): the fit is refused, before anything is
        sampled, when its estimated peak memory is above it -- this process with PyMC
        loaded (about 0.55 GB), one chunk of label draws being worked on (it grows with
        the items up to about 0.6 GB), the weighing of the candidates on the vetted labels
        and what is kept per draw and vetted label
        (:func:`bayeval.core._validate.fit_memory_gb`): about 1.0 GB for 10,000 items and
        1.2 GB for 100,000, with 100-200 vetted and 2 chains x 1000 draws.
        ``previous=post``, an earlier fit of this
        function (or of one candidate): each candidate refits from its own earlier fit
        (see the candidates' ``fit``), a candidate without one is fitted afresh.

    Returns
    -------
    StackedPosterior
        With ``comparison`` (the weights and the label-LOO table) and ``candidates``.

    Examples
    --------
    >>> import numpy as np
    >>> import bayeval as be
    >>> rng = np.random.default_rng(0)
    >>> p = rng.beta(1, 4, 2000)
    >>> y = np.full(2000, np.nan); y[:50] = rng.random(50) < p[:50]
    >>> post = be.fit(be.EvalData(p, y), random_seed=0)
    >>> list(post.comparison.columns[:3])
    ['elpd_loo', 'se', 'weight']
    >>> round(float(post.weights.sum()), 6)
    1.0
    """
    if not isinstance(data, EvalData):
        raise TypeError(
            f"`data` must be an EvalData, got {type(data).__name__}. Build one with bayeval.EvalData(scores, labels)."
        )
    draws = V.as_positive_int(draws, "draws")
    chains = V.as_positive_int(chains, "chains")
    if chains * draws < 2:  # the candidates' leave-one-out weights need draws to vary over
        raise ValueError(f"bayeval.fit needs at least 2 posterior draws in all to weigh its candidates by "
                         f"leave-one-out; got chains={chains}, draws={draws}. Ask for more draws (e.g. draws=1000).")
    V.check_choice(sampler, "sampler", SAMPLERS)
    stacking = V.check_choice(stacking, "stacking", STACKING)
    # every candidate gets the same seed: an int as is, anything else read once
    seq, label_seed = seeds(random_seed)
    random_seed = label_seed if isinstance(random_seed, int | np.integer) and not isinstance(random_seed, bool) else seq
    transform = V.check_choice(transform, "transform", ("auto", "logit", "standardize", "logodds"))
    if candidates is not None and transform != "auto":
        raise ValueError("`transform` sets the default candidates' score feature; with your own `candidates`, "
                         "give each its transform (e.g. Calibration('logistic', transform='standardize')).")
    cands = default_candidates(data, transform) if candidates is None else list(candidates)
    # the peak of the fit and of the label draws' passes (core._validate.fit_memory_gb): each candidate
    # keeps its draws (importance sampling proposes 4 per draw), the label draws are worked on a chunk at a time
    V.check_job_size(chains, draws, bytes_per_draw=V.FIT_BYTES_PER_DRAW * max(1, len(cands)) * 4, what="bayeval.fit",
                     max_memory_gb=fit_kwargs.pop("max_memory_gb", None), items=data.n_items,
                     vetted=data.n_vetted, candidates=max(1, len(cands)))
    if not cands:
        raise ValueError("`candidates` is empty: give at least one model, or leave it out for the default.")
    for m in cands:
        if not callable(getattr(m, "fit", None)):
            raise TypeError(f"Every candidate must be a model with a fit(data, ...) method; got {m!r}.")
    before = _previous_fits(fit_kwargs.pop("previous", None), cands)
    used: set = set()
    fits, errors = {}, {}
    # one bar for the whole fit, drawn once it has run ~2 s (a million items): each
    # candidate's sampling, then the label-LOO comparison and the stacking; the
    # candidates' fits show none of their own
    k = len(cands)
    with Bar(f"bayeval: fitting {k} candidates to {data.n_items:,} items", total=k + 1,
             enabled=bool(progressbar)) as bar:
        if client is not None:
            fits, errors = _fit_on_client(client, data, cands, used, bar, before, draws=draws, chains=chains,
                                          random_seed=random_seed, sampler=sampler, warn=False, **fit_kwargs)
        for j, m in enumerate(cands if client is None else (), start=1):
            name = _name(m, used)
            bar.update(f"bayeval: candidate {j}/{k} ({name}), sampling")
            try:
                own = {} if before[j - 1] is None else {"previous": before[j - 1]}
                post = m.fit(data, draws=draws, chains=chains, random_seed=random_seed, sampler=sampler,
                             progressbar=progressbar, warn=False, **own, **fit_kwargs)
            except (ValueError, RuntimeError) as exc:
                if k == 1:
                    raise
                errors[name] = str(exc)
                continue
            finally:
                bar.update(completed=j)
            fits[name] = post
        if not fits:
            raise ValueError(V.no_candidate_message(errors))
        bar.update(f"bayeval: candidate {k}/{k} done; stacking (LOO)")
        post = _stack(data, cands, fits, errors, chains=chains, draws=draws, label_seed=label_seed,
                      stacking=stacking)
        bar.update(completed=k + 1)
    samplings = [getattr(p, "sampling", None) for p in fits.values()]
    post.sampling = samplings[0] if len(samplings) == 1 else None
    # which sampler made the draws (a report names it): the candidates' own, in order
    used = [getattr(p, "sampler", None) or getattr(s, "sampler", None) for p, s in zip(fits.values(), samplings, strict=True)]
    post.sampler = " / ".join(dict.fromkeys(u for u in used if u)) or None
    n_vet = data.n_vetted
    if warn and n_vet == 0:
        from ..core._diagnostics import user_stacklevel

        warnings.warn("bayeval: no vetted labels: every candidate rests on its prior and all get equal weight. "
                      "Vet a first batch (bayeval.active.design, or a random sample) first.", UserWarning, stacklevel=user_stacklevel())
    post.convergence = post.check(warn=warn and n_vet > 0)
    if warn and n_vet:  # not a sampler problem, so not in the check: the intervals can miss (core.data)
        from ..core._diagnostics import FEW_LABELS, is_said, user_stacklevel

        few = [] if is_said(FEW_LABELS) else few_labels_caveats(data, post)
        if few:
            warnings.warn("bayeval: " + " ".join(few), UserWarning, stacklevel=user_stacklevel())
    return post


def _stack(data: EvalData, cands: list, fits: dict, errors: dict, *, chains: int, draws: int,
           label_seed, stacking: str = "plain") -> StackedPosterior:
    """The candidates' label-LOO table, their stacking weights and the stacked posterior."""
    rows = {}
    n_vet = data.n_vetted
    loos = {}
    for name, post in list(fits.items()):
        if n_vet:
            loo = label_loo(post)
            if len(fits) > 1 and not np.all(np.isfinite(np.asarray(loo.loo_i))):
                # no weight can be computed from a NaN: the candidate is left out, and says why
                errors[name] = ("its leave-one-out log density of the vetted labels is not finite "
                                f"for {int((~np.isfinite(np.asarray(loo.loo_i))).sum())} label(s), so the labels "
                                "cannot weigh it")
                del fits[name]
                continue
            chk = calibration_check(post, loo)
            loos[name] = loo
            rows[name] = {"elpd_loo": float(loo.elpd_loo), "se": float(loo.se),
                          "pareto_k_max": float(np.max(loo.pareto_k)), "z": chk["z"], "flagged": chk["flagged"]}
        else:
            rows[name] = {"elpd_loo": np.nan, "se": np.nan, "pareto_k_max": np.nan, "z": np.nan, "flagged": False}
    names = list(fits)
    if len(names) > 1 and n_vet:
        w = stack_weights(np.column_stack([np.asarray(loos[n].loo_i) for n in names]), stacking, label_seed)
    else:
        w = np.full(len(names), 1.0 / len(names))
    for n, wt in zip(names, w, strict=True):
        rows[n]["weight"] = float(wt)
    table = pd.DataFrame.from_dict(rows, orient="index")[["elpd_loo", "se", "weight", "pareto_k_max", "z", "flagged"]]
    table.index.name = "candidate"
    table = table.sort_values("weight", ascending=False, kind="stable")
    for name in errors:
        table.loc[name] = [np.nan, np.nan, 0.0, np.nan, np.nan, False]
    table.attrs["errors"] = errors
    post = StackedPosterior(data, fits, table.loc[names].sort_values("weight", ascending=False, kind="stable"),
                            chains=chains, draws=draws, random_seed=label_seed)
    post.model_spec = Stack(candidates=list(cands), stacking=stacking)
    post.comparison = table
    if n_vet:  # each draw's vetted-label log-likelihood under the candidate it came from
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            post.idata.add_groups(log_likelihood=xr.Dataset(
                {"label": (("chain", "draw", "vetted_item"), label_loglik(post))},
                coords={"chain": post.idata.posterior["chain"].values, "draw": post.idata.posterior["draw"].values}))
    return post


def stack_weights(lpd: np.ndarray, stacking: str, label_seed: int) -> np.ndarray:
    """The candidates' weights from the vetted labels' leave-one-out log densities ``lpd``
    (labels x candidates), as :func:`fit` makes them: ``stacking`` ``"bootstrap"`` (seeded by
    ``label_seed``, the fit's integer seed) or ``"plain"``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.models.stacking import stack_weights
    >>> lpd = np.log([[0.9, 0.2], [0.8, 0.3], [0.7, 0.6]])
    >>> stack_weights(lpd, "plain", 0).round(2).tolist(), stack_weights(lpd, "bootstrap", 0).sum().round(6)
    ([1.0, 0.0], np.float64(1.0))
    """
    V.check_choice(stacking, "stacking", STACKING)
    lpd = np.asarray(lpd, dtype=np.float64)
    if lpd.ndim != 2 or lpd.shape[0] < 1 or lpd.shape[1] < 1:
        raise ValueError(f"`lpd` must be a 2-D array (labels x candidates) with at least one of each; got shape "
                         f"{lpd.shape}. Stack the candidates' pointwise LOO (label_loo(post).loo_i) as columns.")
    if not np.all(np.isfinite(lpd)):
        bad = np.flatnonzero(~np.isfinite(lpd).all(axis=0))
        raise ValueError(f"`lpd` holds NaN or infinite values in column(s) {bad.tolist()} (candidates in that "
                         "order); a weight needs finite log densities. Leave those candidates out.")
    if stacking == "bootstrap":
        return bootstrap_stacking_weights(lpd, label_seed, replicates=STACKING_REPLICATES, spawn_key=22)
    return _stacking_weights(lpd)


def _stacking_weights(lpd: np.ndarray) -> np.ndarray:
    """Stacking weights maximizing ``sum_i log sum_k w_k exp(lpd[i, k])`` over the simplex."""
    from scipy import optimize

    n, k = lpd.shape
    m = lpd.max(axis=1, keepdims=True)
    e = np.exp(lpd - m)

    def obj(v):
        w = special.softmax(np.r_[v, 0.0])
        return -np.sum(np.log(e @ w))

    def grad(v):
        w = special.softmax(np.r_[v, 0.0])
        dens = e @ w
        g_w = -(e / dens[:, None]).sum(axis=0)
        g_v = w * (g_w - w @ g_w)
        return g_v[:-1]

    res = optimize.minimize(obj, np.zeros(k - 1), jac=grad, method="BFGS")
    w = special.softmax(np.r_[res.x, 0.0])
    w[w < 1e-4] = 0.0
    return w / w.sum()
