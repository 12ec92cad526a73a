"""Semi-supervised candidates: does a mixture-shaped calibration curve use the unlabeled scores?

Compares, on the same random label sets, the default (``bayeval.fit``), the default
with :class:`bayeval.models.MixtureCalibration` candidates added to its stack, each
such candidate alone, and the vetted-only estimate.

Parts (``--part``):

* ``digits``: the SPE paper's setting -- scikit-learn's digits, for each digit a
  one-vs-rest logistic regression, cross-validated decision scores (log-odds), 20
  random vetted labels. Per digit: the area between the estimated (posterior median)
  and the true PR curve, against the naive curve of the 20 labels; and whether the
  90% AP interval covers the true AP, with its width.
* ``pools``: the real pools of ``benchmarks/real_scores.py`` (``--pools``; held-out
  pools with ``--heldout``, the second held-out set with ``--fresh``): coverage and width of the 90% intervals of AP, P@K,
  precision and recall at the pool's threshold, and the mean AP width against the
  vetted-only bootstrap's (the issue's width target), per pool and budget.
* ``check``: the histogram check (:func:`~bayeval.models.mixture_calibration.mixture_check`)
  and the purity of the mixture's split on every digit and pool (no fit, seconds).
* ``generated``: scores drawn from a two-class mixture with known families (Normal /
  Normal, Gamma / Gamma): the true-family :class:`~bayeval.models.ScoreMixture` against
  the default and the default with the new candidates.

Run: ``python benchmarks/semisup.py --part digits --sets 3 --out benchmarks/results/semisup_digits.csv``;
the markdown tables are printed and written next to ``--out``.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time
import warnings

import numpy as np
import pandas as pd

warnings.filterwarnings("ignore")

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import real_scores as RS  # noqa: E402

import bayeval as be  # noqa: E402
from bayeval.core import metrics as M  # noqa: E402
from bayeval.models import Calibration, MixtureCalibration, ScoreMixture  # noqa: E402
from bayeval.models.stacking import (  # noqa: E402
    STACKING_DEFAULT, StackedPosterior, both_readings, default_candidates, label_loo, stack_weights)

GRID = np.linspace(0, 1, 101)
FORMS = ("split",)  # the "bumps" form measured no narrower than the default on the first digits (see the results)


def new_candidates(transform="auto"):
    return [MixtureCalibration(f, transform=transform) for f in FORMS]


def fits_for(data, seed, *, transform="auto", draws=1000):
    """Every fit of a label set: the stack of the default's candidates and the new ones
    (``"default + split"``), and from the same candidate fits the default's own stack and
    each new candidate alone."""
    cands = default_candidates(data, transform)  # four on squeezed probabilities (both readings), else two
    big = be.fit(data, candidates=cands + new_candidates(transform), random_seed=seed, warn=False, draws=draws)
    names = list(big.candidates)
    out = {"default + " + "+".join(FORMS): big, "default": substack(big, data, names[:len(cands)], seed)}
    for n in names[len(cands):]:
        out[n.replace("calibration/mixture-", "") + " alone"] = big.candidates[n]
    return out


def sd_fits_for(data, seed, intercept_sds, *, draws=1000):
    """The default stack (``bayeval.fit``'s candidates) with each intercept prior scale:
    ``"default"`` for the scale-dependent default (``None``), ``"default, intercept sd X"``
    otherwise; no split candidate."""
    out = {}
    for sd in intercept_sds:
        cands = [Calibration(c, intercept_sd=sd) for c in ("logistic", "monotone")]
        out["default" if sd is None else f"default, intercept sd {sd:g}"] = be.fit(
            data, candidates=cands, random_seed=seed, warn=False, draws=draws)
    return out


def flat_fits_for(data, seed, *, draws=1000, with_default=False):
    """The default's two curves plus the monotone curve with flat ends
    (``Calibration("monotone", asymptotes=True)``), stacked (``"default + flat"``), and
    that curve alone (``"flat alone"``) from the same fit; with ``with_default``, also the
    two-curve stack rebuilt from the same candidate fits (``"default"``: the draws
    ``bayeval.fit`` makes with its two curves, so the rows pair up)."""
    cands = [Calibration("logistic"), Calibration("monotone"), Calibration("monotone", asymptotes=True)]
    big = be.fit(data, candidates=cands, random_seed=seed, warn=False, draws=draws)
    out = {"default + flat": big, "flat alone": big.candidates["calibration/monotone-flat"]}
    if with_default:
        out["default"] = substack(big, data, list(big.candidates)[:2], seed)
    return out


def both_fits_for(data, seed, *, draws=1000, alphas=()):
    """On probability scores, the four candidates of both readings (the logistic and monotone
    curves on the logit with the calibrated prior, and on the standardized score), stacked
    (``"default, both readings"``), and from the same candidate fits the default's own stack
    (``"default"``: the logit pair, or all four where the probabilities are squeezed, where
    the default already fits both), and the four stacked with a Dirichlet(2) prior on the
    weights (``"both readings, regularized weights"``: with few labels the plain stacking can
    give one reading all the weight), and with each Dirichlet parameter in ``alphas``. On
    other scores all rows are the default."""
    s = data.scores
    if not (s.min() >= 0 and s.max() <= 1):
        post = be.fit(data, random_seed=seed, warn=False, draws=draws)
        return {"default": post, "default, both readings": post, "both readings, regularized weights": post,
                **{f"both readings, Dirichlet({alpha:g})": post for alpha in alphas}}
    big = be.fit(data, candidates=both_readings(), random_seed=seed, warn=False, draws=draws)
    names = list(big.candidates)
    squeezed = len(default_candidates(data)) == 4
    out = {"default": big if squeezed else substack(big, data, names[:2], seed), "default, both readings": big,
           "both readings, regularized weights": substack(big, data, names, seed, dirichlet=2.0)}
    for alpha in alphas:
        out[f"both readings, Dirichlet({alpha:g})"] = substack(big, data, names, seed, dirichlet=alpha)
    return out


def _regularized_weights(lpd, alpha):
    """Stacking weights with a symmetric Dirichlet(alpha) prior on them (alpha > 1 pulls
    towards equal weights; its pull is O(1) against the labels' O(n))."""
    from scipy import optimize, special

    m = lpd.max(axis=1, keepdims=True)
    e = np.exp(lpd - m)

    def obj(v):
        w = special.softmax(np.r_[v, 0.0])
        return -np.sum(np.log(e @ w)) - (alpha - 1.0) * np.sum(np.log(w))

    w = special.softmax(np.r_[optimize.minimize(obj, np.zeros(lpd.shape[1] - 1), method="BFGS").x, 0.0])
    return w / w.sum()


def bb_fits_for(data, seed, *, draws=1000):
    """The default's candidates plus the flat-ended monotone curve, fitted once; from those fits
    the default's candidates weighted as ``bayeval.fit`` does today (``"default"``: Bayesian-
    bootstrap stacking) and by plain stacking (``"plain stacking"``), and the stack with the
    flat curve both ways (``"default + flat"``, ``"default + flat, plain stacking"``).
    ``benchmarks/results/semisup_bb.md`` was made by this option when plain stacking was the
    default (its ``"default"`` rows are this function's ``"plain stacking"``; its ``"BB weights"``
    rows the bootstrap weights, then computed per replicate by BFGS, other replicates)."""
    cands = default_candidates(data)
    big = be.fit(data, candidates=cands + [Calibration("monotone", asymptotes=True)], random_seed=seed,
                 warn=False, draws=draws)
    names = list(big.candidates)
    base = names[:len(cands)]
    return {"default": substack(big, data, base, seed), "plain stacking": substack(big, data, base, seed, how="plain"),
            "default + flat": substack(big, data, names, seed),
            "default + flat, plain stacking": substack(big, data, names, seed, how="plain")}


def margins_fits_for(data, seed, *, draws=1000):
    """On scores that are not probabilities, both readings: the default's two curves on the
    standardized score and the same two on the score read as log-odds (the calibrated prior);
    from one fit of the four, the default's own stack (``"default"``), all four stacked as
    ``bayeval.fit`` stacks (``"margins both readings"``) and with plain stacking (``"margins both
    readings, plain stacking"``). On probabilities every row is the default.
    ``benchmarks/results/semisup_margins.md`` was made when plain stacking was the default (its
    ``"margins both readings"`` rows are plain stacking, its ``"BB weights"`` rows the bootstrap's)."""
    s = data.scores
    if s.min() >= 0 and s.max() <= 1:
        post = be.fit(data, random_seed=seed, warn=False, draws=draws)
        return {"default": post, "margins both readings, plain stacking": post, "margins both readings": post}
    cands = ([Calibration(c, transform="standardize") for c in ("logistic", "monotone")]
             + [Calibration(c, transform="logodds") for c in ("logistic", "monotone")])
    big = be.fit(data, candidates=cands, random_seed=seed, warn=False, draws=draws)
    names = list(big.candidates)
    return {"default": substack(big, data, names[:2], seed), "margins both readings, plain stacking":
            substack(big, data, names, seed, how="plain"), "margins both readings": big}


def substack(post, data, names, seed, dirichlet=None, how=STACKING_DEFAULT):
    """The stack of the candidate fits ``names`` of ``post``, weighted as ``bayeval.fit`` weighs
    them (``how``: ``"bootstrap"`` or ``"plain"``), or with a Dirichlet(``dirichlet``) prior on
    the stacking weights."""
    fits = {n: post.candidates[n] for n in names}
    lpd = np.column_stack([np.asarray(label_loo(p).loo_i) for p in fits.values()])
    w = stack_weights(lpd, how, seed) if dirichlet is None else _regularized_weights(lpd, dirichlet)
    tab = pd.DataFrame({"weight": w}, index=names).sort_values("weight", ascending=False, kind="stable")
    return StackedPosterior(data, fits, tab, chains=post.n_chains, draws=post.n_draws, random_seed=seed)


# ----------------------------------------------------------------------- digits


def digits_scores():
    """Cross-validated one-vs-rest logistic-regression decision scores, one column per digit."""
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, target = load_digits(return_X_y=True)
    cols = []
    for d in range(10):
        y = (target == d).astype(int)
        clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000))
        cv = StratifiedKFold(5, shuffle=True, random_state=0)
        cols.append(cross_val_predict(clf, X, y, cv=cv, method="decision_function"))
    return np.column_stack(cols), target


def run_digits(sets, log=print, n_vetted=20, with_spe=False, transform="auto", margins=False):
    scores, target = digits_scores()
    rows = []
    for digit in range(10):
        s = scores[:, digit]
        y = (target == digit).astype(int)
        true_pr = M.precision_at_recall(y[None], s, recall=GRID)[0]
        true_ap = float(M.average_precision(y[None], s)[0])
        for rep in range(sets):
            rng = np.random.default_rng([31, digit, rep])
            idx = rng.choice(y.size, n_vetted, replace=False)
            lab = np.full(y.size, np.nan)
            lab[idx] = y[idx]
            data = be.EvalData(s, lab)
            t0 = time.perf_counter()
            fits = margins_fits_for(data, rep) if margins else fits_for(data, rep, transform=transform)
            if with_spe:
                fits["score mixture normal/normal"] = ScoreMixture("normal", "normal", transform="identity").fit(
                    data, draws=500, tune=500, chains=2, random_seed=rep, progressbar=False, warn=False)
            secs = time.perf_counter() - t0
            base = {"digit": digit, "set": rep, "true_ap": true_ap, "vetted_pos": int(y[idx].sum())}
            if y[idx].sum() > 0:
                naive = M.precision_at_recall(y[idx][None], s[idx], recall=GRID)[0]
                rows.append({**base, "model": "naive", "area": float(np.trapezoid(np.abs(naive - true_pr), GRID))})
            for name, post in fits.items():
                pr = post.metric("precision_at_recall", recall=GRID).values.reshape(-1, GRID.size)
                ap = post.metric("average_precision").values.ravel()
                lo, hi = be.hdi(ap, 0.9)
                rows.append({**base, "model": name, "area": float(np.trapezoid(np.abs(np.median(pr, 0) - true_pr), GRID)),
                             "ap_mean": float(ap.mean()), "lo": float(lo), "hi": float(hi), "width": float(hi - lo),
                             "covered": bool(lo - 1e-9 <= true_ap <= hi + 1e-9),
                             "weights": _weights(post)})
            log(f"digit {digit} set {rep}: {secs:.0f} s, positives {int(y[idx].sum())}, "
                + "; ".join(f"{r['model']} {r['area']:.3f}" + (f" [{r['lo']:.2f},{r['hi']:.2f}]" if "lo" in r else "")
                            for r in rows if r["digit"] == digit and r["set"] == rep))
    return pd.DataFrame(rows)


def _weights(post):
    w = getattr(post, "weights", None)
    if w is None:
        return ""
    return ", ".join(f"{n.replace('calibration/', '')}={v:.2f}" for n, v in w.items() if v > 0.005)


def digits_table(df):
    per = df.groupby(["digit", "model"])["area"].mean().unstack()
    models = [m for m in per.columns if m != "naive"]
    lines = ["| model | digits beating naive (mean area over sets) | median area | mean area | AP covers (sets) | "
             "digits whose AP covers in most sets | mean AP width |", "|---|---|---|---|---|---|---|"]
    for m in ["naive"] + models:
        d = df[df["model"] == m]
        if m == "naive":
            lines.append(f"| naive (20 labels) | - | {per[m].median():.3f} | {per[m].mean():.3f} | - | - | - |")
            continue
        beats = int((per[m] < per["naive"]).sum())
        cov = d.groupby("digit")["covered"].mean()
        lines.append(f"| {m} | {beats} of 10 | {per[m].median():.3f} | {per[m].mean():.3f} | "
                     f"{int(d['covered'].sum())} of {len(d)} | {int((cov > 0.5).sum())} of 10 | {d['width'].mean():.3f} |")
    per_digit = per.round(3).to_markdown() if hasattr(per, "to_markdown") else per.round(3).to_string()
    return "\n".join(lines) + "\n\nMean area between PR curves, per digit:\n\n" + per_digit


# ------------------------------------------------------------------------ pools


METRICS = ("AP", "P@K", "precision", "recall")


def _write_csv(df, out, header=None):
    """The rows, with the command and the versions that made them as a first comment line."""
    with open(out, "w") as fh:
        if header:
            fh.write("# " + header.replace("\n", " ") + "\n")
        df.to_csv(fh, index=False)


def read_rows(paths, models=None) -> pd.DataFrame:
    """The rows of one or more CSVs written by this script (first line: its stamp).

    A row that a later file has too (same pool, budget, label set, model and metric) is
    taken from the later file: a rerun replaces the earlier one. ``models``: keep only
    these models' rows."""
    rows = pd.concat([pd.read_csv(p, comment="#") for p in paths], ignore_index=True)
    rows = rows.drop_duplicates(["pool", "budget", "set", "model", "metric"], keep="last")
    if models is not None:
        rows = rows[rows["model"].isin(models)]
    return rows.reset_index(drop=True)


def complete_rounds(df: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Only the label sets that every pool, budget and model of the rows has (a run stopped
    in a round leaves it incomplete; joined runs may hold different models); returns the
    rows and the number of sets dropped."""
    cells = df.groupby(["pool", "budget", "model"])["set"].apply(set)
    keep = set.intersection(*cells) if len(cells) else set()
    dropped = df["set"].nunique() - len(keep)
    return df[df["set"].isin(keep)], dropped


def run_pools(pools, budgets, sets, log=print, out=None, first_set=0, header=None, intercept_sds=None,
              flat=False, with_default=False, both=False, alphas=(), bb=False, margins=False):
    """Every label set of every pool and budget; ``out``: a CSV rewritten after each set.

    The label sets are taken in rounds: set ``first_set`` of every pool and budget, then
    the next, so that a run stopped early has as many sets in every pool (the label sets
    are those of ``benchmarks/real_scores.py``: set ``rep`` is the same in both).
    ``intercept_sds``: instead of the split comparison, the default with each of these
    intercept prior scales (:func:`sd_fits_for`); ``flat``: the default with a flat-ended
    curve added (:func:`flat_fits_for`; ``with_default``: the default's rows from the same
    candidate fits too); ``both``: the default against the stack of both readings of
    probability scores (:func:`both_fits_for`)."""
    rows = []
    prepared = []
    for pool in pools:
        specs = RS._metric_specs(pool)
        specs = {("P@K" if k.startswith("P@") else k): v for k, v in specs.items() if k != "F1"}
        prepared.append((pool, specs, RS._truth(pool, specs)))
    for rep in range(first_set, first_set + sets):
        for pool, specs, truth in prepared:
            for budget in budgets:
                data, rng = RS._label_set(pool, budget, rep, 0)
                t0 = time.perf_counter()
                if margins:
                    fits = margins_fits_for(data, rep)
                elif bb:
                    fits = bb_fits_for(data, rep)
                elif both:
                    fits = both_fits_for(data, rep, alphas=alphas)
                elif flat:
                    fits = flat_fits_for(data, rep, with_default=with_default)
                else:
                    fits = fits_for(data, rep) if intercept_sds is None else sd_fits_for(data, rep, intercept_sds)
                secs = time.perf_counter() - t0
                vo = RS.vetted_only_interval(data, specs, rng)
                for name, post in fits.items():
                    for mlab, (mean, lo, hi) in RS._interval(post, specs).items():
                        t = truth[mlab]
                        rows.append({"pool": pool.name, "budget": budget, "set": rep, "model": name, "metric": mlab,
                                     "truth": t, "mean": mean, "lo": lo, "hi": hi, "width": hi - lo,
                                     "covered": bool(lo - 1e-9 <= t <= hi + 1e-9) if np.isfinite(lo) else np.nan,
                                     "vo_width": vo[mlab][2] - vo[mlab][1], "weights": _weights(post)})
                if out is not None:
                    _write_csv(pd.DataFrame(rows), out, header)
                d = pd.DataFrame([r for r in rows if r["pool"] == pool.name and r["budget"] == budget and r["set"] == rep])
                log(f"{pool.name} b={budget} set {rep} ({secs:.0f} s): "
                    + "; ".join(f"{m} cov {g['covered'].mean():.2f} APw {g.loc[g.metric == 'AP', 'width'].iloc[0]:.2f}"
                                for m, g in d.groupby("model", sort=False))
                    + f"; vo APw {d.loc[d.metric == 'AP', 'vo_width'].iloc[0]:.2f}; weights {_weights(next(iter(fits.values())))}")
    return pd.DataFrame(rows)


def pools_table(df):
    out = []
    for budget, b in df.groupby("budget"):
        g = b.groupby(["model"])
        ap = b[b.metric == "AP"]
        vo = ap.groupby("model")["vo_width"].mean()
        per_pool = b.groupby(["model", "pool"])["covered"].mean()
        # the interval score of a 90% interval (Gneiting & Raftery): its width plus 20 times how far
        # outside it the truth lies; lower is better, and it charges both a wide and a wrong interval
        iscore = b["width"] + 20 * ((b["lo"] - b["truth"]).clip(lower=0) + (b["truth"] - b["hi"]).clip(lower=0))
        tab = pd.DataFrame({
            "coverage (pooled)": g["covered"].mean(),
            "worst pool coverage": per_pool.groupby("model").min(),
            "pools below 0.75": (per_pool < 0.75).groupby("model").sum(),
            "interval score": iscore.groupby(b["model"]).mean(),
            "mean AP width": ap.groupby("model")["width"].mean(),
            "AP width / vetted-only": ap.groupby("model")["width"].mean() / vo,
        }).round(3)
        out.append(f"Budget {budget} ({b['set'].nunique()} label sets per pool, {b['pool'].nunique()} pools):\n\n"
                   + tab.to_markdown())
        per = b.groupby(["pool", "model"]).agg(coverage=("covered", "mean")).unstack().round(2)
        apw = ap.groupby(["pool", "model"])["width"].mean().unstack()
        ratio = (apw.T / ap.groupby("pool")["vo_width"].mean()).T.round(2)
        out.append("Coverage per pool:\n\n" + per.to_markdown() + "\n\nMean AP width per pool:\n\n"
                   + apw.round(3).to_markdown() + "\n\nAP width / vetted-only per pool:\n\n" + ratio.to_markdown())
        by_metric = b.groupby(["metric", "model"]).agg(coverage=("covered", "mean"), width=("width", "mean"))
        out.append("Coverage and mean width per metric (pooled over pools):\n\n" + by_metric.unstack().round(3).to_markdown())
        piv = b.pivot_table(index=["pool", "set", "metric"], columns="model", values="covered")
        others = [m for m in piv.columns if m.startswith("default") and m != "default"] if "default" in piv.columns else []
        for other in others:
            gain = int(((piv[other] == 1) & (piv["default"] == 0)).sum())
            loss = int(((piv[other] == 0) & (piv["default"] == 1)).sum())
            out.append(f"Paired, same label sets: `{other}` covers where `default` does not in {gain} of "
                       f"{len(piv)} intervals, the reverse in {loss}.")
    return "\n\n".join(out)


# -------------------------------------------------------------------- generated


def run_generated(trials, n=2000, n_vetted=30, log=print, out=None):
    """Scores from known families; ``out``: a CSV rewritten after each trial."""
    rows = []
    settings = {"normal/normal": ("normal", "normal"), "gamma/gamma": ("gamma", "gamma")}
    for setting, (neg, pos) in settings.items():
        for t in range(trials):
            rng = np.random.default_rng([41, t, len(setting)])
            y = (rng.random(n) < 0.2).astype(int)
            if setting == "normal/normal":
                s = np.where(y == 1, rng.normal(1.5, 1.0, n), rng.normal(-1.0, 1.2, n))
            else:
                s = np.where(y == 1, rng.gamma(6.0, 0.5, n), rng.gamma(2.0, 0.5, n))
            lab = np.full(n, np.nan)
            idx = rng.choice(n, n_vetted, replace=False)
            lab[idx] = y[idx]
            data = be.EvalData(s, lab)
            pool = RS.Pool("generated", s, y, "scores", float(np.quantile(s, 0.8)), 0.8, "")
            specs = {("P@K" if k.startswith("P@") else k): v for k, v in RS._metric_specs(pool).items() if k != "F1"}
            truth = RS._truth(pool, specs)
            fits = fits_for(data, t)
            fits["true-family mixture"] = ScoreMixture(neg, pos, transform="identity").fit(
                data, draws=500, tune=500, chains=2, random_seed=t, progressbar=False, warn=False)
            for name, post in fits.items():
                for mlab, (mean, lo, hi) in RS._interval(post, specs).items():
                    rows.append({"setting": setting, "trial": t, "model": name, "metric": mlab, "truth": truth[mlab],
                                 "width": hi - lo, "covered": bool(lo - 1e-9 <= truth[mlab] <= hi + 1e-9)})
            if out is not None:
                pd.DataFrame(rows).to_csv(out, index=False)
            d = pd.DataFrame([r for r in rows if r["setting"] == setting and r["trial"] == t])
            log(f"{setting} trial {t}: " + "; ".join(f"{m} cov {g['covered'].mean():.2f} w {g['width'].mean():.3f}"
                                                     for m, g in d.groupby("model", sort=False)))
    return pd.DataFrame(rows)


def generated_table(df):
    tab = df.groupby(["setting", "model"]).agg(coverage=("covered", "mean"), mean_width=("width", "mean")).round(3)
    ap = df[df.metric == "AP"].groupby(["setting", "model"])["width"].mean().rename("AP width")
    tab = tab.join(ap.round(3))
    ref = tab.xs("true-family mixture", level="model")["mean_width"]
    tab["width / true family"] = (tab["mean_width"] / ref.reindex(tab.index.get_level_values(0)).to_numpy()).round(2)
    return tab.to_markdown()


# ------------------------------------------------------------------------ check


def split_purity(scores, truth):
    """K, the cut, the share of positives in the upper and in the lower group (weighted by
    the responsibilities), the upper group's share of items, and the prevalence."""
    from bayeval.models.mixture_calibration import responsibilities

    m = MixtureCalibration()
    _, info = m.features(be.EvalData(scores))
    z = m._z(scores, info)
    up = responsibilities(z, info["mixture"])[:, info["split"]["cut"]:].sum(axis=1)
    return (info["mixture"]["k"], info["split"]["cut"], (up * truth).sum() / up.sum(),
            ((1 - up) * truth).sum() / (1 - up).sum(), up.mean(), truth.mean())


def run_check(log=print):
    """The histogram check and the split's purity on every digit and pool (no fit)."""
    from bayeval.models.mixture_calibration import mixture_check

    scores, target = digits_scores()
    named = [(f"digit{d}", scores[:, d], (target == d).astype(int)) for d in range(10)]
    named += [(p.name, p.scores, p.truth) for p in RS.make_pools() + RS.make_heldout_pools()]
    rows = []
    for name, s, y in named:
        c = mixture_check(be.EvalData(s))
        k, cut, up, low, share, prev = split_purity(s, y)
        rows.append({"scores": name, "K": k, "cut": cut, "max_rel_dev": round(c["max_rel_dev"], 2),
                     "refused": c["max_rel_dev"] > 0.5, "upper purity": round(up, 3), "lower positives": round(low, 3),
                     "upper share": round(share, 3), "prevalence": round(prev, 3)})
        log(str(rows[-1]))
    return pd.DataFrame(rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--part", choices=["digits", "pools", "generated", "check"], default="digits")
    ap.add_argument("--sets", type=int, default=2)
    ap.add_argument("--budgets", type=int, nargs="+", default=[30, 100])
    ap.add_argument("--pools", nargs="+", default=None)
    ap.add_argument("--all-pools", action="store_true", help="pools: the tuning, held-out and fresh pools together")
    ap.add_argument("--heldout", action="store_true", help="pools: the held-out pools instead of the tuning ones")
    ap.add_argument("--fresh", action="store_true",
                    help="pools: the second held-out set (real_scores.make_fresh_pools) instead of the tuning ones")
    ap.add_argument("--first-set", type=int, default=0, help="pools: the first label set (to extend a run)")
    ap.add_argument("--intercept-sd", type=str, nargs="+", default=None,
                    help="pools: the default with these intercept prior scales ('default': the model's own) "
                         "instead of the split comparison")
    ap.add_argument("--flat", action="store_true",
                    help="pools: the default with the flat-ended monotone curve added, instead of the split comparison")
    ap.add_argument("--both", action="store_true",
                    help="pools: the default against both readings of probabilities (logit and standardized) stacked")
    ap.add_argument("--alphas", type=float, nargs="+", default=[],
                    help="with --both: also the Dirichlet(alpha)-regularized stacking for each alpha")
    ap.add_argument("--bb", action="store_true",
                    help="pools: the default against Bayesian-bootstrap stacking weights, with and without the "
                         "flat-ended curve (all from one fit of the candidates)")
    ap.add_argument("--margins", action="store_true",
                    help="pools: on scores that are not probabilities, the default against both readings "
                         "(standardized and log-odds), plainly stacked and with Bayesian-bootstrap weights")
    ap.add_argument("--with-default", action="store_true",
                    help="pools, with --flat: also the default's rows, rebuilt from the same candidate fits")
    ap.add_argument("--transform", default="auto",
                    help="digits: the candidates' score feature (e.g. 'logodds': the decision scores read as log-odds)")
    ap.add_argument("--spe", action="store_true", help="digits: also the Normal/Normal score mixture (NUTS, slow)")
    ap.add_argument("--out", type=pathlib.Path, required=True, help="CSV of every interval; the tables go to .md")
    ap.add_argument("--report", type=pathlib.Path, nargs="+", default=None,
                    help="pools: no fit; the tables of these CSVs (of earlier runs) joined, written to --out's .md")
    ap.add_argument("--models", nargs="+", default=None,
                    help="with --report: only these models' rows (a row a later CSV has too comes from that CSV; "
                         "--pools keeps only those pools)")
    ap.add_argument("--report-sets", type=int, default=None,
                    help="with --report: only label sets 0 to N - 1 (to compare runs on the sets both have)")
    args = ap.parse_args(argv)
    stamp = RS._versions()
    command = f"python benchmarks/semisup.py {' '.join(argv if argv is not None else sys.argv[1:])}"
    if args.report:
        heads = [pathlib.Path(p).read_text().splitlines()[0].lstrip("# ") for p in args.report]
        rows = read_rows(args.report, args.models)
        if args.pools:
            rows = rows[rows["pool"].isin(args.pools)]
        if args.report_sets is not None:
            rows = rows[rows["set"] < args.report_sets]
        rows, dropped = complete_rounds(rows)
        note = (f"\n\nThe run stopped within a round: the {dropped} label set(s) that not every pool and budget has "
                "are left out." if dropped else "")
        md = (f"`{command}` ({stamp})\n\nThe rows of:\n\n"
              + "\n".join(f"* `{p}`: {h}" for p, h in zip(args.report, heads)) + note
              + "\n\n" + pools_table(rows) + "\n")
        args.out.with_suffix(".md").write_text(md)
        print(md)
        return
    if args.part == "digits":
        df = run_digits(args.sets, with_spe=args.spe, transform=args.transform, margins=args.margins)
        text = digits_table(df)
    elif args.part == "pools":
        pools = (RS.make_pools() + RS.make_heldout_pools() + RS.make_fresh_pools() if args.all_pools
                 else RS.make_fresh_pools() if args.fresh else RS.make_heldout_pools() if args.heldout
                 else RS.make_pools(args.pools))
        if args.pools:
            pools = [p for p in pools if p.name in args.pools]
        sds = None if args.intercept_sd is None else [None if v == "default" else float(v) for v in args.intercept_sd]
        df = run_pools(pools, args.budgets, args.sets, out=args.out, first_set=args.first_set,
                       header=f"`{command}` with {stamp}", intercept_sds=sds, flat=args.flat,
                       with_default=args.with_default, both=args.both, alphas=args.alphas,
                       bb=args.bb, margins=args.margins)
        text = pools_table(df)
    elif args.part == "generated":
        df = run_generated(args.sets, out=args.out)
        text = generated_table(df)
    else:
        df = run_check()
        text = df.to_markdown(index=False)
    if args.part == "pools":
        _write_csv(df, args.out, f"`{command}` with {stamp}")
    else:
        df.to_csv(args.out, index=False)
    md = f"`{command}`\n\n{stamp}\n\n{text}\n"
    args.out.with_suffix(".md").write_text(md)
    print(md)


if __name__ == "__main__":
    main()
