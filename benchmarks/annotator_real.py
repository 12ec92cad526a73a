"""True accuracy on real crowds: AnnotatorError against the gold items alone and Dawid--Skene.

Three public crowdsourcing data sets with gold labels (``benchmarks/data/crowd/``, see its
README): textual entailment (RTE, 800 items, 10 labels each), temporal ordering (TEMP, 462
items, 10 labels each) and bird identification (DUCK, 108 items, 39 labels each). Their
errors are real: hard items make many workers wrong at once.

One trial, for a data set and a random seed: every item's crowd labels are shuffled into
slots. The *classifier* under evaluation is the majority vote of slots 0-2 (a "crowd of
three"; its errors follow the item difficulty, as a trained classifier's do). The
*reference* is slot 3 (``refs=1``) or slots 3-5 as three annotator columns (``refs=3``).
A random subset of ``gold`` items (0, 30 or 100; DUCK, with 108 items, 0 and 30) keeps its
gold label; the gold labels of all items give the true accuracy of the classifier on
these items, the target of every interval.

Methods, each giving a 90% interval (equal-tailed) and a point estimate (mean):

* ``stacked``: ``AnnotatorError().fit(AnnotationData(...))`` at every default (priors,
  sampler, chains, draws, ``target_accept``) with ``gold_fallback="stack"`` -- the default of
  ``fit`` -- i.e. the mixture of the annotator-error model and the gold-only model,
  weighted by stacking on the gold items (the weight averaged over Bayesian-bootstrap
  replicates of the gold items); without gold it is the model alone;
* ``structured``: the same fit with ``gold_fallback="off"``;
* ``stacked_point`` (with gold): the same mixture at the plain stacking weight (no
  bootstrap), from the same draws;
* ``exchangeable`` (three references, no gold: the crowd path): ``AnnotatorError(
  annotators="exchangeable")``, one accuracy and difficulty correlation shared by the
  three reference columns (each is a random worker of the crowd);
* ``rectified`` (with gold): the prediction-powered (difference) estimate from the same
  fit, ``post.rectified_accuracy()`` -- the model's probability that the
  classifier is right on each item, corrected by its errors on the gold items
  (leave-one-out there), with a t interval (see ``rectified``);
* ``ppi`` (with gold; a peer): ppi-python's ``ppi_mean_ci`` on the same predictions as
  ``rectified`` (see ``ppi_peer``);
* ``gold_only``: the gold items alone, Beta(1 + right, 1 + wrong) for the classifier's
  accuracy, the unlabelled items' correctness drawn from it (a Beta-Binomial count; its
  quantiles exact -- trials made before the ``guarded`` reading existed drew it 4,000
  times, and the tables recompute it exactly for them by replaying their gold items, see
  ``replay_gold``);
* ``guarded`` (with gold): what ``post.summary()`` reports with gold items, the
  smallest interval holding both the stacked posterior's and the gold items' own
  (``post.guarded_accuracy(interval="equal-tailed")``): it covers
  whenever ``gold_only`` does;
* ``ds_same`` and ``ds_crowd`` (point estimates only): crowd-kit's ``DawidSkene`` (100
  iterations) estimate of the true labels -- from the classifier and the reference
  column(s) (the labels the model sees), and from the whole crowd except the
  classifier's three slots (7 or 36 labels per item: far more than the model sees) --
  with gold items set to their gold label; the accuracy of the classifier against them.

Every trial is one public ``fit`` (the compiled model is reused across trials of the same
structure); the stacked posterior is made from the same draws by the code ``fit`` uses.
Sampler diagnostics are the fit's own (``post.convergence``: r_hat of every parameter,
bulk ESS, divergences); ``worst_param`` names the parameter with the largest r_hat. Trials
go round-robin over the settings until the time budget is spent.

Run: ``python benchmarks/annotator_real.py [--budget SECONDS] [--max-trials N]``; writes
``benchmarks/results/annotator_real.md`` and ``annotator_real.csv`` (``--out``). Pooling
runs: ``--merge`` adds the per-trial CSVs of runs with other seeds, ``--add-table`` the
per-setting counts of a results file whose CSV was not kept (``--max-trials 0`` merges
without new trials). ``--only 3:0`` runs the settings with three references and no gold
only; ``--baseline`` adds a paired comparison with earlier trials of the same seeds
(another revision); ``--sampler`` fits with another sampler than the default (e.g.
``smc``), ``--init`` with another NUTS initialization (e.g. ``jitter+adapt_full``).
Needs crowd-kit and ppi-python (``pip install -e .[bench]``).
"""

from __future__ import annotations

import argparse
import logging
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "crowd"
RESULTS = HERE / "results"
sys.path.insert(0, str(HERE.parent))  # this checkout's bayeval, not an installed one
DATASETS = ("rte", "temp", "duck")
GOLD = {"rte": (0, 30, 100), "temp": (0, 30, 100), "duck": (0, 30)}
REFS = (1, 3)
CLASSIFIER_SLOTS = 3


def load(name: str) -> tuple[list[np.ndarray], np.ndarray]:
    """Per item: its crowd labels (0/1); and the gold labels."""
    df = pd.read_csv(DATA / f"{name}.csv", dtype={"item": str})
    if name == "temp":  # coded 1/2 in the source
        df["label"] -= 1
        df["gold"] -= 1
    labels, gold = [], []
    for _, g in df.groupby("item", sort=True):
        labels.append(g["label"].to_numpy(dtype=np.int64))
        gold.append(int(g["gold"].iloc[0]))
    return labels, np.asarray(gold)


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "not installed"


def _git_rev() -> str:
    import subprocess

    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True,
                             timeout=10)
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "bayeval"], cwd=HERE, capture_output=True,
                               text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() + ("+modified" if dirty else "") if out.returncode == 0 else "unknown"


def majority(votes: np.ndarray, rng) -> np.ndarray:
    ones = votes.sum(axis=1)
    tie = 2 * ones == votes.shape[1]
    return np.where(tie, rng.integers(0, 2, len(ones)), (2 * ones > votes.shape[1]).astype(np.int64))


#: the sampler every fit uses (``--sampler``; default: the library's ``"auto"``) and
#: extra NUTS settings (``--init``)
SAMPLER = "auto"
NUTS = {}


def fit(pred, refs, gold, seed, annotators="separate"):
    """The public path at its defaults (only the fallback is switched off: the stacked
    posterior is made from the same draws below, as ``fit`` with the default does)."""
    from bayeval.annotators import AnnotationData, AnnotatorError

    return AnnotatorError(gold_fallback="off", annotators=annotators).fit(
        AnnotationData(pred, refs, gold=gold), random_seed=seed, progressbar=False, warn=False, sampler=SAMPLER,
        **NUTS,
    )


def worst_param(idata) -> str:
    """The parameter (with its index) whose r_hat is largest."""
    import arviz as az

    from bayeval.annotators._likelihood import PARAM_NAMES as _PARAM_NAMES

    names = [v for v in _PARAM_NAMES if v in idata.posterior]
    rh = az.rhat(idata, var_names=names)
    best, name = -np.inf, ""
    for v in names:
        vals = np.atleast_1d(rh[v].values)
        j = int(np.nanargmax(vals))
        if vals.flat[j] > best:
            best, name = float(vals.flat[j]), f"{v}[{j}]" if vals.size > 1 else v
    return name


def dawid_skene(pred, refs, extra, gold, rng):
    from crowdkit.aggregation import DawidSkene

    def run(columns):
        rows = [
            (f"w{j}", i, int(v))
            for j, col in enumerate(columns)
            for i, v in enumerate(col)
            if v >= 0
        ]
        df = pd.DataFrame(rows, columns=["worker", "task", "label"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = DawidSkene(n_iter=100).fit_predict(df)
        z = est.reindex(np.arange(len(pred))).to_numpy().copy()
        known = gold >= 0
        z[known] = gold[known]
        return float((pred == z).mean())

    return run([pred, *refs.T]), run(list(extra.T))


def gold_only(pred, z, known, level=0.90):
    """The gold items' own reading: mean and exact equal-tailed interval of the accuracy on
    all items when it is Beta(1 + right, 1 + wrong) from the gold items and each other
    item is right with that probability (the library's ``_gold_only_accuracy_interval``)."""
    from bayeval.annotators.gold import gold_only_accuracy_interval as _gold_only_accuracy_interval

    right = int((pred[known] == z[known]).sum())
    n_g, n = int(known.sum()), pred.size
    lo, hi = _gold_only_accuracy_interval(right, n_g, n, level, "equal-tailed")
    return (right + (n - n_g) * (1 + right) / (2 + n_g)) / n, lo, hi


def replay_gold(df: pd.DataFrame) -> pd.DataFrame:
    """For trials with gold items that lack the ``guarded`` columns (made before the
    guarded reading existed): replay the trial's random draws up to its choice of gold
    items (the same generator and calls as ``trial``; checked against the recorded true
    and measured accuracies), recompute ``gold_only`` exactly and ``guarded`` from it
    and the recorded stacked interval (both equal-tailed, as ``trial`` computes them)."""
    need = (df.gold > 0) & (df["guarded_lo"].isna() if "guarded_lo" in df else True)
    if not need.any():
        return df
    df = df.copy()
    data = {name: load(name) for name in df.loc[need, "dataset"].unique()}
    for i in df.index[need]:
        r = df.loc[i]
        labels, truth_z = data[r.dataset]
        rng = np.random.default_rng([int(r.seed), DATASETS.index(r.dataset), int(r.refs), int(r.gold)])
        slots = np.stack([rng.permutation(lab) for lab in labels])
        pred = majority(slots[:, :CLASSIFIER_SLOTS], rng)
        ref0 = slots[:, CLASSIFIER_SLOTS]
        pick = rng.choice(pred.size, int(r.gold), replace=False)
        if not (np.isclose((pred == truth_z).mean(), r.truth) and np.isclose((pred == ref0).mean(), r.measured)):
            raise SystemExit(f"replaying {r.dataset} refs={r.refs} gold={r.gold} seed={r.seed} does not give the "
                             "recorded accuracies: the trial's draws changed since; rerun it")
        known = np.zeros(pred.size, dtype=bool)
        known[pick] = True
        m, lo, hi = gold_only(pred, truth_z, known)
        df.loc[i, ["gold_only_mean", "gold_only_lo", "gold_only_hi"]] = m, lo, hi
        df.loc[i, ["guarded_mean", "guarded_lo", "guarded_hi"]] = (
            r.stacked_mean, min(r.stacked_lo, lo), max(r.stacked_hi, hi))
    return df


def rectified(post, level=0.90):
    """The model's prediction-powered reading, ``post.rectified_accuracy()``:
    the structured fit's probability that the classifier is right on each item
    (leave-one-out on the gold items) corrected by its errors on the gold items,
    ``mean_all(q) + mean_gold(c - q)``, with a t interval and the finite-population
    correction ``1 - n/N``; the residuals' variance counts half a right and half a wrong
    gold item beside them. (Trials of git d1d2074 to 42e6b61 computed it here without
    that guard: same estimate, intervals up to a few per cent narrower with 30 gold
    items and about 1% with 100.)
    """
    r = post.rectified_accuracy(prob=level)
    return r.estimate, r.lower, r.upper


def ppi_peer(post, level=0.90):
    """ppi-python's prediction-powered interval (``ppi_mean_ci`` at its defaults, i.e. with
    its power-tuned ``lam``) for the classifier's accuracy on the items without gold,
    from the same predictions as ``rectified``: the structured model's probability that
    the classifier is right (leave-one-out on the gold items). ppi-python targets the
    mean of an infinite population, so its interval is mapped to the accuracy on these
    items as ``(right on gold + n_unlabelled * theta) / n`` (the gold items' part is
    exact); the finite-population factor ``rectified`` uses is not in it.
    """
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

    from bayeval.annotators._likelihood import STRUCT_VARS, flat_draws
    from bayeval.annotators.gold import structured_right_probability

    obs, check = post._observed, post.gold_check
    q = structured_right_probability(post.model_spec, obs, flat_draws(post.idata.posterior, STRUCT_VARS))
    known = np.isfinite(obs.gold)
    c = (obs.predictions[known] == obs.gold[known]).astype(float)
    q_gold, q_rest = np.asarray(check["q_right"]), q[~known]
    theta = float(ppi_mean_pointestimate(c, q_gold, q_rest)[0])
    lo, hi = (float(v[0]) for v in ppi_mean_ci(c, q_gold, q_rest, alpha=1 - level))
    n, n_rest = obs.n_items, int((~known).sum())
    to_acc = lambda t: (c.sum() + n_rest * t) / n  # noqa: E731
    return to_acc(theta), max(to_acc(lo), 0.0), min(to_acc(hi), 1.0)


def interval(draws):
    lo, hi = np.quantile(draws, [0.05, 0.95])
    return float(np.mean(draws)), float(lo), float(hi)


def trial(name, labels, truth_z, n_refs, n_gold, seed):
    from bayeval.annotators import AnnotatorError

    rng = np.random.default_rng([seed, DATASETS.index(name), n_refs, n_gold])
    slots = np.stack([rng.permutation(lab) for lab in labels])  # DUCK: 39 slots, others 10
    pred = majority(slots[:, :CLASSIFIER_SLOTS], rng)
    refs = slots[:, CLASSIFIER_SLOTS : CLASSIFIER_SLOTS + n_refs]
    extra = slots[:, CLASSIFIER_SLOTS:]
    n = pred.size
    gold = np.full(n, np.nan)
    pick = rng.choice(n, n_gold, replace=False)
    gold[pick] = truth_z[pick]
    known = np.isfinite(gold)
    truth = float((pred == truth_z).mean())
    t0 = time.perf_counter()
    structured = fit(pred, refs.astype(float), gold, seed)
    fit_s = time.perf_counter() - t0
    conv = structured.convergence
    worst = worst_param(structured.idata)
    out = dict(
        dataset=name, refs=n_refs, gold=n_gold, seed=seed, n_items=n, truth=truth,
        measured=float((pred == refs[:, 0]).mean()),
        ref_accuracy=float((refs == truth_z[:, None]).mean()),
        error_phi=float(np.corrcoef(pred != truth_z, refs[:, 0] != truth_z)[0, 1]),
        max_rhat=conv["max_rhat"], min_ess=conv["min_ess_bulk"], divergences=conv["divergences"],
        converged=conv["ok"], worst_param=worst, fit_seconds=fit_s, sampler=structured.sampling.sampler,
        grad_evals=structured.sampling.n_grad_evals,
    )
    spec = AnnotatorError()
    stacked = spec._wrap(structured._observed, structured.idata, pred.astype(float), seed)
    methods = [("stacked", stacked), ("structured", structured)]
    if n_gold:  # the plain stacking weight (no bootstrap), from the same draws
        methods.append(("stacked_point", spec._wrap(structured._observed, structured.idata, pred.astype(float), seed,
                                                    weight="point_weight")))
    for method, post in methods:
        m, lo, hi = interval(post.metric("accuracy").values.ravel())
        out.update({f"{method}_mean": m, f"{method}_lo": lo, f"{method}_hi": hi})
        if method == "stacked" and post.gold_check is not None:
            out.update(weight=post.gold_check["weight"], point_weight=post.gold_check["point_weight"],
                       check_p=post.gold_check["p_value"], contradicts=post.gold_check["contradicts"])
    if n_refs > 1 and n_gold == 0:  # the crowd path: the reference slots are interchangeable
        post = fit(pred, refs.astype(float), gold, seed, annotators="exchangeable")
        m, lo, hi = interval(post.metric("accuracy").values.ravel())
        out.update(exchangeable_mean=m, exchangeable_lo=lo, exchangeable_hi=hi,
                   exchangeable_converged=post.convergence["ok"])
    sens = stacked.prior_sensitivity().loc[("true_accuracy", 1.0)]
    out.update(prior_sensitivity=sens["prior_sensitivity"], prior_dominated=sens["diagnosis"] != "")
    if n_gold:
        m, lo, hi = gold_only(pred, truth_z, known)
        out.update(gold_only_mean=m, gold_only_lo=lo, gold_only_hi=hi)
        g = stacked.guarded_accuracy(interval="equal-tailed")
        out.update(guarded_mean=g.estimate, guarded_lo=g.lower, guarded_hi=g.upper)
        m, lo, hi = rectified(structured)
        out.update(rectified_mean=m, rectified_lo=lo, rectified_hi=hi)
        m, lo, hi = ppi_peer(structured)
        out.update(ppi_mean=m, ppi_lo=lo, ppi_hi=hi)
    gz = np.where(known, truth_z, -1)
    out["ds_same_mean"], out["ds_crowd_mean"] = dawid_skene(pred, refs, extra, gz, rng)
    out["seconds"] = time.perf_counter() - t0
    return out


METHODS = ("stacked", "guarded", "structured", "stacked_point", "exchangeable", "gold_only", "rectified", "ppi")

#: the no-gold part (``--nogold``): references per item, and the sampler budget of its fits
NOGOLD_REFS = (1, 3, 7)
NOGOLD_FIT = {}


def nogold_trial(name, labels, truth_z, n_refs, seed):
    """One trial of the no-gold part: the classifier is the majority of slots 0-2, the
    references are the next ``n_refs`` slots (the same draws as ``trial`` with no gold
    items, so ``refs`` 1 and 3 repeat its trials of the same seed). Intervals are HDIs at
    90%, as ``post.summary()`` reports them: ``posterior`` (the posterior's own),
    ``identified`` (the posterior's interval joined with the identified set,
    ``post.identified_accuracy()``: what ``summary()`` reports without gold items),
    ``if_flagged`` (the alternative of reporting ``identified`` only when the true
    accuracy is prior-dominated, else ``posterior``), and ``set`` (the identified set
    alone)."""
    from bayeval.annotators import AnnotationData, AnnotatorError
    from bayeval.annotators._identified import joint_bands

    rng = np.random.default_rng([seed, DATASETS.index(name), n_refs, 0])
    slots = np.stack([rng.permutation(lab) for lab in labels])
    pred = majority(slots[:, :CLASSIFIER_SLOTS], rng)
    refs = slots[:, CLASSIFIER_SLOTS : CLASSIFIER_SLOTS + n_refs]
    truth = float((pred == truth_z).mean())
    ref_acc = (refs == truth_z[:, None]).mean(axis=0)
    t0 = time.perf_counter()
    post = AnnotatorError().fit(AnnotationData(pred, refs.astype(float)), random_seed=seed, progressbar=False,
                                warn=False, sampler=SAMPLER, **NUTS, **NOGOLD_FIT)
    fit_s = time.perf_counter() - t0
    sens = post.prior_sensitivity().loc[("true_accuracy", 1.0)]
    ident = post.identified_accuracy(prob=0.9, diagnosis=sens["diagnosis"])
    flagged = bool(sens["diagnosis"])
    # the annotator columns' accuracy draws: their joint 90% bands, so that the ranges under
    # the stated assumptions (``assumption_ranges``) are recomputed from the CSV without a refit
    _, ref_draws = post._accuracy_draws_by_rater(post._observed)
    band_lo, band_hi = joint_bands(ref_draws, 0.9)
    rep = (ident.lower, ident.upper) if flagged else (ident.posterior_lower, ident.posterior_upper)
    return dict(
        dataset=name, refs=n_refs, gold=0, seed=seed, n_items=pred.size, truth=truth,
        measured=float((pred == refs[:, 0]).mean()), ref_accuracy=float(ref_acc.mean()),
        error_phi=float(np.corrcoef(pred != truth_z, refs[:, 0] != truth_z)[0, 1]),
        mean=ident.estimate, posterior_lo=ident.posterior_lower, posterior_hi=ident.posterior_upper,
        set_lo=ident.set_lower, set_hi=ident.set_upper, identified_lo=ident.lower, identified_hi=ident.upper,
        if_flagged_lo=rep[0], if_flagged_hi=rep[1], prior_sensitivity=sens["prior_sensitivity"],
        prior_dominated=flagged, gold_to_halve=ident.gold_to_halve,
        floor_minus_true=float(np.min(np.asarray(ident.reference_floor) - ref_acc)),
        converged=post.convergence["ok"], max_rhat=post.convergence["max_rhat"], fit_seconds=fit_s,
        seconds=time.perf_counter() - t0, floors=_join(ident.reference_floor), band_lo=_join(band_lo),
        band_hi=_join(band_hi), ref_true=_join(ref_acc),
    )


def _join(values) -> str:
    return ";".join(f"{float(v):.6f}" for v in values)


NOGOLD_METHODS = ("posterior", "identified", "if_flagged", "set")

#: the ranges under stated assumptions, each joined with the posterior's interval, recomputed
#: from each trial's recorded annotator accuracy floors and bands (trials that recorded them):
#: ``lift`` the floors and the overlap assumption ``summary()`` states beside the set
#: (``bayeval.annotators._identified.ERROR_LIFT``: on the items an annotator gets wrong, the
#: classifier's error rate is 1 to 2 times its overall rate); ``bands`` each annotator's accuracy
#: in its joint 90% band from the fit (floor and ceiling), any overlap; ``bands_lift`` both
ASSUMED_METHODS = ("lift", "bands", "bands_lift")


def _split(text) -> list[float]:
    return [float(v) for v in str(text).split(";")]


def assumption_ranges(df: pd.DataFrame, data: dict) -> pd.DataFrame:
    """Add ``{m}_lo``, ``{m}_hi`` for each of ``ASSUMED_METHODS`` to the trials that recorded
    their floors and bands (the data of a trial are rebuilt from its seed, as
    ``nogold_trial`` draws them; no refit)."""
    from bayeval.annotators._checks import observe
    from bayeval.annotators._identified import ERROR_LIFT, accuracy_range

    df = df.copy()
    for m in ASSUMED_METHODS:
        df[f"{m}_lo"] = np.nan
        df[f"{m}_hi"] = np.nan
    if "band_lo" not in df:
        return df
    for i, r in df[df.band_lo.notna()].iterrows():
        labels, truth_z = data[r.dataset]
        rng = np.random.default_rng([int(r.seed), DATASETS.index(r.dataset), int(r.refs), 0])
        slots = np.stack([rng.permutation(lab) for lab in labels])
        pred = majority(slots[:, :CLASSIFIER_SLOTS], rng)
        if abs(float((pred == truth_z).mean()) - r.truth) > 1e-12:
            raise RuntimeError(f"trial {r.dataset} refs={r.refs} seed={r.seed}: the rebuilt data differ")
        refs = slots[:, CLASSIFIER_SLOTS : CLASSIFIER_SLOTS + int(r.refs)].astype(float)
        obs = observe(pred, refs, None, 2)
        args = (obs.patterns, obs.counts, obs.pattern_gold)
        ranges = {
            "lift": accuracy_range(*args, _split(r.floors), 2, lift=ERROR_LIFT),
            "bands": accuracy_range(*args, _split(r.band_lo), 2, ceilings=_split(r.band_hi)),
            "bands_lift": accuracy_range(*args, _split(r.band_lo), 2, lift=ERROR_LIFT, ceilings=_split(r.band_hi)),
        }
        for m, (lo, hi) in ranges.items():
            if not np.isfinite(lo):  # the assumption contradicts the bands: nothing narrower is claimed
                lo, hi = r.identified_lo, r.identified_hi
            df.loc[i, f"{m}_lo"] = min(lo, r.posterior_lo)
            df.loc[i, f"{m}_hi"] = max(hi, r.posterior_hi)
    return df

#: the guarded interval's mean width over the gold items' own, from ``annotator_real_pooled.md``
#: (30 and 100 gold items, one and three references pooled; trials of git 42e6b61 to f4743af)
WITH_GOLD_RATIO = ("RTE 0.236/0.230 = 1.03 (30 gold) and 0.127/0.120 = 1.06 (100), TEMP 0.224/0.209 = "
                   "1.07 and 0.115/0.107 = 1.07, DUCK 0.236/0.228 = 1.04 (30); it covered 264 of 280 trials, "
                   "the gold items' own interval 253 of the same 280")


def nogold_table(df: pd.DataFrame, by: list[str], methods=NOGOLD_METHODS) -> pd.DataFrame:
    """Coverage (trials whose 90% interval holds the true accuracy) and mean width of each
    no-gold interval, grouped by ``by``."""
    rows = []
    for key, g in df.groupby(by, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(by, key, strict=True), trials=len(g), true_acc=g.truth.mean(), error_phi=g.error_phi.mean(),
                   flagged=f"{int(g.prior_dominated.sum())}/{len(g)}")
        for m in methods:
            hit = int(((g[f"{m}_lo"] <= g.truth + 1e-9) & (g.truth <= g[f"{m}_hi"] + 1e-9)).sum())
            row[f"{m}_cover"] = f"{hit}/{len(g)} ({hit / len(g):.0%})"
            row[f"{m}_width"] = float((g[f"{m}_hi"] - g[f"{m}_lo"]).mean())
        row["floor_ok"] = f"{int((g.floor_minus_true <= 1e-9).sum())}/{len(g)}"
        row["gold_to_halve"] = float(g.gold_to_halve.median())
        row["converged"] = f"{int(g.converged.sum())}/{len(g)}"
        rows.append(row)
    return pd.DataFrame(rows)


def realized_lifts(data: dict, seeds=range(7)) -> np.ndarray:
    """Per trial of the no-gold settings (``seeds``, every reference column): the classifier's
    error rate on the items the reference gets wrong over its error rate on all items, from
    the gold labels (the quantity the overlap assumption bounds)."""
    out = []
    for name, (labels, truth_z) in data.items():
        for n_refs in NOGOLD_REFS:
            for seed in seeds:
                rng = np.random.default_rng([seed, DATASETS.index(name), n_refs, 0])
                slots = np.stack([rng.permutation(lab) for lab in labels])
                wrong = majority(slots[:, :CLASSIFIER_SLOTS], rng) != truth_z
                for j in range(n_refs):
                    ref_wrong = slots[:, CLASSIFIER_SLOTS + j] != truth_z
                    out.append(wrong[ref_wrong].mean() / wrong.mean())
    return np.asarray(out)


def assumed_section(df: pd.DataFrame, data: dict) -> str:
    """The table of the ranges under stated assumptions (trials that recorded their floors
    and bands; none: an empty string)."""
    if "band_lo" not in df or df.band_lo.isna().all():
        return ""
    df = assumption_ranges(df[df.band_lo.notna()], data)
    from bayeval.annotators._identified import ERROR_LIFT

    methods = ("posterior", "identified", *ASSUMED_METHODS)
    low, high = ERROR_LIFT
    lifts = realized_lifts(data)
    inside = np.mean((lifts >= low) & (lifts <= high))
    return f"""
## Under stated assumptions ({len(df)} trials that recorded their annotators' accuracy floors and bands)

Each range joined with the posterior's interval, recomputed from the trial's recorded floors and
bands (`assumption_ranges` in the script; no refit): `identified` as above (any overlap); `lift`
the same floors and the overlap assumption `summary()` states beside the set
(`post.identified_accuracy(error_lift=({low:g}, {high:g}))`: on the items an annotator gets wrong, the
classifier's error rate is {low:g} to {high:g} times its overall rate); `bands` each annotator's
accuracy within its joint 90% band from the fit (a ceiling besides the floor), any overlap;
`bands_lift` both. The realized multiple on these crowds, the classifier's error rate on a
reference's errors over its overall rate (from the gold labels, seeds 0--6, every reference
column of every setting, {lifts.size} in all): {lifts.min():.2f}--{lifts.max():.2f}, median
{np.median(lifts):.2f}; {inside:.0%} inside the assumed {low:g}--{high:g}.

{to_markdown(nogold_table(df, ["dataset", "refs"], methods))}

{to_markdown(nogold_table(df, ["refs"], methods))}

{to_markdown(nogold_table(df.assign(all="all"), ["all"], methods))}
"""


def nogold_main(args, data, rev, versions, cmd):
    """The no-gold part: trials round-robin over data sets and references until the budget
    is spent; writes ``{out}.md`` and ``{out}.csv``."""
    rows, rounds, t_start = [], 0, time.perf_counter()
    csv = Path(args.out + ".csv")
    refs = [int(r) for r in args.refs] if args.refs else list(NOGOLD_REFS)
    while rounds < args.max_trials and time.perf_counter() - t_start < args.budget:
        for name in args.datasets:
            for r in refs:
                labels, z = data[name]
                rows.append({**nogold_trial(name, labels, z, r, seed=args.first_seed + rounds), "git": rev})
                pd.DataFrame(rows).to_csv(csv, index=False)
        rounds += 1
        print(f"round {rounds} done, {time.perf_counter() - t_start:.0f} s", flush=True)
    df = pd.concat([*(pd.read_csv(f, dtype={"git": str}) for f in args.merge), pd.DataFrame(rows)],
                   ignore_index=True).sort_values(["dataset", "refs", "seed"], kind="stable")
    # trials made before the rename: `reported` then meant the identified set only when flagged
    df = df.rename(columns={"reported_lo": "if_flagged_lo", "reported_hi": "if_flagged_hi"})
    budget = ", ".join(f"{k}={v}" for k, v in NOGOLD_FIT.items()) or "the defaults"
    seeds = sorted(df.seed.unique())
    text = f"""# True accuracy on real crowds without gold items (`benchmarks/annotator_real.py --nogold`)

Command: `{cmd.strip()}`; {versions}; git revision of the trials: {", ".join(sorted(set(df.git.astype(str))))}.
Fits: `AnnotatorError().fit` at its defaults but for the sampler budget ({budget}); seeds
{seeds[0]}..{seeds[-1]}; {len(df)} trials ({(time.perf_counter() - t_start) / 60:.0f} min wall in this run).{(" " + args.note) if args.note else ""}
Per-trial results: {", ".join(f"`{n}`" for n in dict.fromkeys([Path(f).name for f in args.merge] + ([csv.name] if rows else [])))}. Setup: `nogold_trial` in the script.

Columns: `true_acc` the classifier's mean true accuracy (majority of three crowd labels),
`error_phi` the realized correlation of its errors with the first reference's; `flagged`:
trials whose true accuracy the fit flags prior-dominated; per interval (90%, HDI) `cover` =
trials holding the true accuracy and `width` its mean width: `posterior` the posterior's
own, `identified` the posterior's interval joined with the identified set
(`post.identified_accuracy()`; what `post.summary()` reports without gold items),
`if_flagged` the alternative of reporting `identified` only on flagged trials (else
`posterior`), `set` the identified set alone; `floor_ok`: trials where every reference's floor was at or
below its true accuracy on the items (then the set holds the truth by construction);
`gold_to_halve`: median number of random gold items whose own interval would be half as wide
as the identified one.

By data set and references:

{to_markdown(nogold_table(df, ["dataset", "refs"]))}

By references (data sets pooled):

{to_markdown(nogold_table(df, ["refs"]))}

All trials:

{to_markdown(nogold_table(df.assign(all="all"), ["all"]))}

{assumed_section(df, data)}
With gold items nothing changed: the guarded interval `summary()` reports stays the one of
`annotator_real_pooled.md` (it holds the gold items' own interval, so it covers whenever
that does), whose width over the gold items' own there is {WITH_GOLD_RATIO}.
"""
    Path(args.out + ".md").write_text(text)
    print(text)


def covered(g: pd.DataFrame, method: str, suffix: str = "") -> pd.Series:
    """Per trial: whether ``method``'s interval (columns ``{method}_lo{suffix}``, ``_hi``)
    holds the true accuracy."""
    return (g[f"{method}_lo{suffix}"] <= g.truth) & (g.truth <= g[f"{method}_hi{suffix}"])


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (name, refs, n_gold), g in df.groupby(["dataset", "refs", "gold"], sort=False):
        row = dict(dataset=name, refs=refs, gold=n_gold, trials=len(g), true_acc=g.truth.mean(),
                   error_phi=g.error_phi.mean())
        for m in METHODS:
            if f"{m}_lo" not in g or g[f"{m}_lo"].isna().all():
                continue
            cov = covered(g, m).sum()
            row[f"{m}_cover"] = f"{cov}/{len(g)}"
            row[f"{m}_mae"] = (g[f"{m}_mean"] - g.truth).abs().mean()
            row[f"{m}_width"] = (g[f"{m}_hi"] - g[f"{m}_lo"]).mean()
        for m in ("ds_same", "ds_crowd"):
            row[f"{m}_mae"] = (g[f"{m}_mean"] - g.truth).abs().mean()
        if "weight" in g and g.weight.notna().any():
            row["weight"] = g.weight.mean()
            if "point_weight" in g:
                row["point_weight"] = g.point_weight.mean()
            row["flagged"] = f"{int(g.contradicts.fillna(False).sum())}/{len(g)}"
        if "exchangeable_converged" in g and g.exchangeable_converged.notna().any():
            ok = g.exchangeable_converged.dropna().astype(bool)
            row["exch_converged"] = f"{int(ok.sum())}/{len(ok)}"
        row["prior_sens"] = g.prior_sensitivity.mean()
        row["prior_flag"] = f"{int(g.prior_dominated.sum())}/{len(g)}"
        row["converged"] = f"{int(g.converged.sum())}/{len(g)}"
        row["max_rhat"] = g.max_rhat.max()
        row["div_fits"] = int((g.divergences > 0).sum())
        rows.append(row)
    return pd.DataFrame(rows)


def _sums(df: pd.DataFrame) -> pd.DataFrame:
    """Per setting (data set, references, gold budget): for every method the trials with an
    interval (``n``), those covered (``hit``), and the sums of absolute errors and widths;
    the clean fits (``ok``) of ``trials``."""
    rows = []
    for (name, refs, n_gold), g in df.groupby(["dataset", "refs", "gold"], sort=False):
        row = dict(dataset=name, refs=int(refs), gold=int(n_gold), trials=len(g), ok=int(g.converged.sum()))
        for m in METHODS:
            if f"{m}_lo" not in g or g[f"{m}_lo"].isna().all():
                continue
            h = g[g[f"{m}_lo"].notna()]
            row[f"{m}_n"] = len(h)
            row[f"{m}_hit"] = int(covered(h, m).sum())
            row[f"{m}_err"] = float((h[f"{m}_mean"] - h.truth).abs().sum())
            row[f"{m}_wid"] = float((h[f"{m}_hi"] - h[f"{m}_lo"]).sum())
        rows.append(row)
    return pd.DataFrame(rows)


def sums_from_md(path: str) -> pd.DataFrame:
    """The same sums, read back from the per-setting table of an earlier results file (for
    runs whose per-trial CSV was not kept): counts are exact, error and width sums are
    the printed means (3 decimals) times the trials."""
    lines = Path(path).read_text().splitlines()
    try:
        i = next(k for k, line in enumerate(lines) if line.startswith("| dataset | refs | gold | trials"))
    except StopIteration:
        raise SystemExit(f"{path}: no per-setting table (a line starting '| dataset | refs | gold | trials')") from None
    head = [c.strip() for c in lines[i].strip().strip("|").split("|")]
    rows = []
    for line in lines[i + 2:]:
        if not line.startswith("|"):
            break
        cell = dict(zip(head, [c.strip() for c in line.strip().strip("|").split("|")], strict=True))
        ok, trials = (int(v) for v in cell["converged"].split("/"))
        row = dict(dataset=cell["dataset"], refs=int(cell["refs"]), gold=int(cell["gold"]), trials=trials, ok=ok)
        for m in METHODS:
            if cell.get(f"{m}_cover"):
                hit, n = (int(v) for v in cell[f"{m}_cover"].split("/"))
                row.update({f"{m}_n": n, f"{m}_hit": hit, f"{m}_err": n * float(cell[f"{m}_mae"]),
                            f"{m}_wid": n * float(cell[f"{m}_width"])})
        rows.append(row)
    return pd.DataFrame(rows)


def pooled(sums: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Coverage, error and width pooled over the other settings; and sampler health."""
    rows = []
    for key, g in sums.groupby(by, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        trials, ok = int(g.trials.sum()), int(g.ok.sum())
        row = dict(zip(by, key, strict=True), trials=trials)
        for m in METHODS:
            n = int(g[f"{m}_n"].fillna(0).sum()) if f"{m}_n" in g else 0
            if not n:
                continue
            hit = int(g[f"{m}_hit"].fillna(0).sum())
            row[f"{m}_cover"] = f"{hit}/{n} ({hit / n:.0%})"
            row[f"{m}_mae"] = g[f"{m}_err"].fillna(0).sum() / n
            row[f"{m}_width"] = g[f"{m}_wid"].fillna(0).sum() / n
        row["converged"] = f"{ok}/{trials} ({ok / trials:.1%})"
        rows.append(row)
    return pd.DataFrame(rows)


def paired(df: pd.DataFrame, method: str = "stacked", other: str = "gold_only") -> pd.DataFrame:
    """Per data set and gold budget, the trials where only one of two intervals covered
    (the same trial: same gold items), with the two-sided exact (McNemar) p-value."""
    from scipy.stats import binomtest

    rows = []
    both = df[df[f"{method}_lo"].notna() & df[f"{other}_lo"].notna()]
    for (name, n_gold), g in both.groupby(["dataset", "gold"], sort=False):
        hit = {m: covered(g, m) for m in (method, other)}
        only_m, only_o = int((hit[method] & ~hit[other]).sum()), int((~hit[method] & hit[other]).sum())
        p = binomtest(only_m, only_m + only_o).pvalue if only_m + only_o else 1.0
        rows.append({"dataset": name, "gold": n_gold, "trials": len(g), f"{method}_cover": int(hit[method].sum()),
                     f"{other}_cover": int(hit[other].sum()), f"only_{method}": only_m, f"only_{other}": only_o,
                     "mcnemar_p": p})
    return pd.DataFrame(rows)


def against_baseline(df: pd.DataFrame, base: pd.DataFrame) -> str:
    """Paired comparison with earlier trials of the same settings and seeds."""
    key = ["dataset", "refs", "gold", "seed"]
    both = df.merge(base, on=key, suffixes=("", "_base"))
    if both.empty:
        return "(the baseline shares no setting and seed with this run)"
    revs = ", ".join(sorted(set(both["git_base"].fillna("unrecorded").astype(str)))) if "git_base" in both else "?"
    rows = []
    for (name, refs, n_gold), g in both.groupby(["dataset", "refs", "gold"], sort=False):
        row = {"dataset": name, "refs": refs, "gold": n_gold, "trials": len(g)}
        for tag, sfx in (("now", ""), ("baseline", "_base")):
            row[f"clean_{tag}"] = int(g[f"converged{sfx}"].astype(bool).sum())
            row[f"max_rhat_{tag}"] = float(g[f"max_rhat{sfx}"].max())
            row[f"cover_{tag}"] = int(covered(g, "stacked", sfx).sum())
            row[f"width_{tag}"] = float((g[f"stacked_hi{sfx}"] - g[f"stacked_lo{sfx}"]).mean())
            row[f"fit_s_{tag}"] = float(g[f"fit_seconds{sfx}"].median())
            if f"exchangeable_converged{sfx}" in g and g[f"exchangeable_converged{sfx}"].notna().any():
                row[f"exch_clean_{tag}"] = int(g[f"exchangeable_converged{sfx}"].dropna().astype(bool).sum())
        rows.append(row)
    table = pd.DataFrame(rows)
    for col in ("exch_clean_now", "exch_clean_baseline"):
        if col in table:
            table[col] = table[col].map(lambda v: "" if pd.isna(v) else str(int(v)))
    bad = both[~both.converged_base.astype(bool) | ~both.converged.astype(bool)]
    lines = [
        f"| {r.dataset} | {r.refs} | {r.gold} | {r.seed} | {r.max_rhat_base:.3f} / {int(r.divergences_base)} | "
        f"{r.max_rhat:.3f} / {int(r.divergences)} |"
        for r in bad.itertuples()
    ]
    detail = "\n".join(["| dataset | refs | gold | seed | baseline: max r_hat / divergences | now |", "|---|---|---|---|---|---|",
                         *lines])
    return (f"Baseline trials at git {revs}; `clean`: fits with every r_hat <= 1.01, bulk ESS >= 100 "
            f"per chain and no divergence; `cover`: the default (stacked) 90% interval, `width` its mean "
            f"width; `fit_s`: "
            f"median seconds of a fit (comparable only where both runs had the machine in the same state).\n\n"
            f"{to_markdown(table)}\n\nThe fits that were not clean in either run:\n\n{detail}")


def to_markdown(table: pd.DataFrame) -> str:
    cols = list(table.columns)
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, r in table.iterrows():
        cells = []
        for c in cols:
            v = r[c]
            if isinstance(v, float):
                cells.append("" if np.isnan(v) else f"{v:.3f}")
            else:
                cells.append(str(v))
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=float, default=2400, help="seconds of trials (default 2400)")
    ap.add_argument("--max-trials", type=int, default=20, help="trials per setting (default 20)")
    ap.add_argument("--datasets", nargs="*", default=list(DATASETS))
    ap.add_argument("--out", default=str(RESULTS / "annotator_real"))
    ap.add_argument("--first-seed", type=int, default=0, help="seed of the first round (default 0)")
    ap.add_argument(
        "--merge", nargs="*", default=[],
        help="per-trial CSVs of earlier runs (other seeds) to add to this run's table",
    )
    ap.add_argument(
        "--add-table", nargs="*", default=[],
        help="results files (.md) of earlier runs whose per-trial CSV was not kept: their per-setting "
             "counts are added to the pooled tables",
    )
    ap.add_argument(
        "--only", nargs="*", default=[], metavar="REFS:GOLD",
        help="run these settings only, e.g. 3:0 (three references, no gold); default: all",
    )
    ap.add_argument(
        "--baseline", nargs="*", default=[],
        help="per-trial CSVs of earlier trials (another revision) with the same settings and seeds: "
             "the results file adds a paired comparison of sampler health and coverage",
    )
    ap.add_argument("--sampler", default="auto", help="the sampler of every fit (default: the library's auto)")
    ap.add_argument("--init", default=None, help="PyMC's NUTS initialization for every fit (default: the library's)")
    ap.add_argument("--note", default="", help="a sentence for the results file's header (how the runs were made)")
    ap.add_argument("--nogold", action="store_true",
                    help="the no-gold part: posterior vs identified set, references --refs (default 1 3 7)")
    ap.add_argument("--refs", nargs="*", default=[], help="references per item in the no-gold part")
    ap.add_argument("--draws", type=int, default=None, help="no-gold part: draws per chain (default: fit's)")
    ap.add_argument("--tune", type=int, default=None, help="no-gold part: tuning steps (default: fit's)")
    ap.add_argument("--chains", type=int, default=None, help="no-gold part: chains (default: fit's)")
    ap.add_argument("--cores", type=int, default=None, help="no-gold part: processes per fit (default: fit's)")
    args = ap.parse_args(argv)
    for key in ("draws", "tune", "chains", "cores"):
        if getattr(args, key) is not None:
            NOGOLD_FIT[key] = getattr(args, key)
    global SAMPLER
    SAMPLER = args.sampler
    if args.init:
        NUTS["init"] = args.init
    logging.getLogger("pymc").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", category=FutureWarning)
    import arviz
    import pymc

    import bayeval

    rev = _git_rev()  # recorded per trial: merged runs must have run the same fit code
    data = {name: load(name) for name in args.datasets}
    if args.nogold:
        cmd = "python benchmarks/annotator_real.py " + " ".join(argv if argv is not None else sys.argv[1:])
        versions = (f"bayeval {bayeval.__version__}, pymc {pymc.__version__}, arviz {arviz.__version__}, "
                    f"numpy {np.__version__}, Python {platform.python_version()}; niceness {os.nice(0)}")
        return nogold_main(args, data, rev, versions, cmd)
    import crowdkit  # noqa: F401  (the gold part's Dawid--Skene peer; the no-gold part does not need it)

    t_start = time.perf_counter()
    settings = [(name, r, g) for name in args.datasets for r in REFS for g in GOLD[name]]
    if args.only:
        try:
            only = {tuple(int(v) for v in item.split(":")) for item in args.only}
        except ValueError:
            raise SystemExit(f"--only takes REFS:GOLD pairs such as 3:0, got {args.only}") from None
        settings = [(name, r, g) for name, r, g in settings if (r, g) in only]
        if not settings:
            raise SystemExit(f"--only {args.only}: no such setting (references {REFS}, gold {GOLD})")
    rows, rounds = [], 0
    csv = Path(args.out + ".csv")
    while rounds < args.max_trials and time.perf_counter() - t_start < args.budget:
        for name, r, g in settings:
            labels, z = data[name]
            rows.append({**trial(name, labels, z, r, g, seed=args.first_seed + rounds), "git": rev})
        rounds += 1
        pd.DataFrame(rows).to_csv(csv, index=False)
        print(f"round {rounds} done, {time.perf_counter() - t_start:.0f} s", flush=True)
    earlier = [pd.read_csv(f) for f in args.merge]
    df = replay_gold(pd.concat([*earlier, pd.DataFrame(rows)], ignore_index=True))
    if df.duplicated(subset=["dataset", "refs", "gold", "seed"]).any():
        raise SystemExit("the merged runs share seeds; give each run its own --first-seed")
    # a merge-only run (no trials of its own) writes no CSV: its trials are in the inputs'
    sources = [Path(f).name for f in args.merge] + ([csv.name] if rows else [])
    if rows:
        pd.DataFrame(rows).to_csv(csv, index=False)
    seeds = sorted(df.seed.unique())
    table = summarize(df)
    baseline = ""
    if args.baseline:
        base = pd.concat([pd.read_csv(f) for f in args.baseline], ignore_index=True)
        names = ", ".join(f"`{Path(f).name}`" for f in args.baseline)
        baseline = f"## Against the baseline ({names})\n\n{against_baseline(df, base)}\n\n"
    tables = [sums_from_md(f) for f in args.add_table]
    sums = pd.concat([_sums(df), *tables], ignore_index=True)
    added = ""
    if tables:
        n_add = sum(int(t.trials.sum()) for t in tables)
        added = (f" The pooled tables below also count the {n_add} trials of "
                 + ", ".join(f"`{Path(f).name}`" for f in args.add_table)
                 + " (from their per-setting tables: counts exact, errors and widths from the printed means).")
    wall = (time.perf_counter() - t_start) / 60
    cmd = "python benchmarks/annotator_real.py " + " ".join(argv if argv is not None else sys.argv[1:])
    versions = (
        f"bayeval {bayeval.__version__}, pymc {pymc.__version__}, "
        f"arviz {arviz.__version__}, crowd-kit {crowdkit.__version__}, ppi-python {_version('ppi-python')}, "
        f"numpy {np.__version__}, "
        f"Python {platform.python_version()}"
    )
    revs = sorted(set(df["git"].fillna("unrecorded").astype(str))) if "git" in df else ["unrecorded"]
    settings = [f"sampler={SAMPLER!r}"] if SAMPLER != "auto" else []
    settings += [f"init={NUTS['init']!r}"] if "init" in NUTS else []
    fits_of = f"({', '.join(settings)})" if settings else "default"
    merged = ""
    if earlier:
        merged = f", plus {sum(len(e) for e in earlier)} trials merged from other per-trial files"
    niceness = os.nice(0) if hasattr(os, "nice") else 0
    run_as = f" (run at niceness {niceness})" if niceness else ""
    text = f"""# True accuracy on real crowds (`benchmarks/annotator_real.py`)

Command: `{cmd.strip()}`{run_as}; {versions}; on {platform.node()}
({platform.machine()}), a shared 2-core machine. {wall:.1f} min wall in this run{merged}; every setting once per seed, seeds {seeds[0]}..{seeds[-1]} ({len(seeds)}
rounds); git revision of the trials: {", ".join(revs)}; of this script: {rev}.{(" " + args.note) if args.note else ""}
Per-trial results: {", ".join(f"`{name}`" for name in sources)}. Setup: see the script's docstring.{added}

Columns: `true_acc` mean true accuracy of the classifier (majority of three crowd labels);
`error_phi` mean realized correlation of the classifier's and the first reference's error
indicators; for each method, `cover` = trials whose 90% interval contains the true accuracy,
`mae` = mean absolute error of the point estimate (posterior mean), `width` = mean interval
width (`guarded`: the interval `post.summary()` reports with gold items, holding
the stacked and the gold items' own); `ds_same_mae`, `ds_crowd_mae`: crowd-kit Dawid-Skene point estimates (no interval);
`weight`: mean stacking weight of the annotator-error model (averaged over Bayesian-bootstrap
replicates of the gold items, the default), `point_weight`: the plain stacking weight; `flagged`: trials whose gold
check says the gold items contradict the model (p < 0.05); `converged`: fits with every
r_hat <= 1.01, bulk ESS >= 100 per chain and no divergence (`exch_converged`: the same for
the exchangeable fits); `div_fits`: fits with any divergence; `prior_sens`: mean power-scaling
prior sensitivity of the true accuracy (`post.prior_sensitivity()`), `prior_flag`:
trials where it is >= 0.05, i.e. where the fit says its interval depends on the priors.

{to_markdown(table)}

## Pooled

By references and gold budget (data sets pooled):

{to_markdown(pooled(sums, ["refs", "gold"]))}

By data set and gold budget (one and three references pooled):

{to_markdown(pooled(sums, ["dataset", "gold"]))}

By data set, references and gold budget:

{to_markdown(pooled(sums, ["dataset", "refs", "gold"]))}

Stacked against the gold items alone on the same trials (the per-trial table only): trials
where only one of the two covered, and the exact two-sided McNemar p-value of that split:

{to_markdown(paired(df)) if "gold_only_lo" in df else "(no trials with gold)"}

The guarded interval (what `summary` reports with gold items) against the gold items alone,
the same way (it contains the gold items' interval, so `only_gold_only` is 0 by construction):

{to_markdown(paired(df, "guarded")) if "guarded_lo" in df else "(no trials with gold)"}

{baseline}Sampler health over all {len(df)} {fits_of} fits of the per-trial table: {int(df.converged.sum())} clean
({df.converged.mean():.1%}); without gold {int(df[df.gold == 0].converged.sum())}/{int((df.gold == 0).sum())},
with gold {int(df[df.gold > 0].converged.sum())}/{int((df.gold > 0).sum())}. Largest r_hat
{df.max_rhat.max():.3f}; fits with a divergence: {int((df.divergences > 0).sum())}. Parameters
with the largest r_hat in the unclean fits: {", ".join(sorted(set(df[~df.converged.astype(bool)].worst_param.astype(str)))) or "none"}.
Median fit time {df.fit_seconds.median():.1f} s (4 chains on the machine above, shared with
other jobs).
"""
    Path(args.out + ".md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
