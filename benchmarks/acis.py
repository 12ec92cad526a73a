"""Label efficiency of ACIS against its baselines on synthetic rare categories.

For each setting a pool is generated once; each trial reruns a method on the same
pool with a new seed (so the spread across trials is the sampling variability of
the method, the quantity its variance estimator predicts). Reported per setting,
method and budget:

* ``MSE`` of the F1 estimate against the pool's true F1 (with its Monte Carlo SE),
  and the bias;
* ``var ratio``: mean predicted variance / empirical variance across trials (1 is
  ideal; top-K is deterministic, so it has none);
* ``cover``: share of trials whose 95 % interval contains the true F1;
* ``undef``: share of trials without any informative label (no predicted and no true
  positive among them: frequent for uniform sampling in rare categories). The library
  then returns NaN; here such a run is scored as F1 = 0, as scikit-learn's ``f1_score``
  reports by default, with variance 1/12 (no information) and interval [0, 1].

Then ACIS with a stopping rule (``target_std_error`` 0.1 and 0.05, budget cap 1,000):
labels spent, error and coverage at the stop. Then the speed of one ACIS run with a
budget of 400 on a 1,000,000-item pool, and a check of the paper's headline (MSE < 0.01 with fewer than 100 labels; lower MSE than
every baseline below 300 labels).

Synthetic classifier: a latent ``x = d' * y + N(0, 1)``; the calibrated score is the
posterior ``P(y = 1 | x)``; a miscalibrated one is ``sigmoid(T * logit + shift)``.
Predictions threshold the score so that there are as many predicted as true
positives. Miscalibration is a monotone transform, so it changes nothing for the
rank-based methods (ACIS's isotonic calibration, top-K, uniform) -- only for Sawade's
baseline, which reads the scores as probabilities.

``--bayes`` runs instead a paired study of three estimators per seed: ACIS; ACIS with
the calibrated-posterior variant (``mixture_calibration``: the importance distribution
built from a score mixture's per-item posterior probabilities, refitted before every
batch, instead of isotonic regression); and the Bayesian route
(``bayeval.fscore.score_mixture_fscore``: a score-mixture posterior fitted to the labels
ACIS buys with the same seed). Model fits cost seconds each, so it uses few trials
(``--trials``, default 10), the settings and budgets named by ``--settings`` and
``--budgets``, and the families ``--families`` (default the Normal pair, on the logit
scale of these probabilities: the true class-conditional family of the synthetic pools).
``--out`` writes its table (``benchmarks/results/acis_bayes.md``: 40 trials, 42 minutes).

``--peers`` adds the study of the interval and against OASIS (Marchant & Rubinstein,
2017, "In search of an entity resolution OASIS: optimal asymptotic sequential
importance sampling", the ``oasis`` package): on settings A-D and F and on three hard
pools -- R, a real rare pool (digit 8 of scikit-learn's bundled ``load_digits``
subsampled to 1 % against the other digits, 5-fold cross-validated logistic
regression); W, a weak classifier (F1 0.25); M, an overconfident classifier
thresholded at 0.5 -- every trial runs, with the same seed, ACIS with its default
(design-only, Jeffreys) interval, the same runs with the model and the delta
intervals, ACIS without the rest stratum and model assistance (the paper's design),
and OASIS until it has labeled as many *distinct* items as the budget (budgets 50,
100, 200, 500; ``--peer-trials`` paired trials,
default ``--trials``). E is left out: OASIS takes about 45 s a run on its 1,000,000
items. ``--peers-only`` runs this study alone (same seeds; the first N trials of a
longer run are those of a shorter one). OASIS is a benchmark-only dependency::

    pip install --no-deps oasis   # its metadata requires the retired ``sklearn`` package

(``_import_oasis`` supplies ``scipy.percentile``/``scipy.ptp``, which it calls and
current SciPy lacks, and skips its unused PyTables import.) Run from a checkout
where ``import bayeval`` resolves to that checkout (``pip install -e .``, or
``PYTHONPATH=.``).

``--intervals`` runs instead the study of ACIS's six intervals against the actual error
of a run (issue 38): 90 % intervals, ``--trials`` runs (default 100) per pool and budget
(100, 200, 500 labels) on A-D, F, the hard pools and the issue's pool I (0.3 % of
100,000 items, miscalibrated); per interval its coverage, mean width over the width the
runs' actual error calls for (``2 z RMSE``) and mean reported variance over the actual
variance, the targets per cell, and the narrowest interval covering at least 90 % in
every cell (``--pools`` picks pools; ``benchmarks/results/acis_intervals.md``: 40 runs,
14--26 minutes on two busy cores; with the checked interval
``benchmarks/results/acis_intervals_checked.md``; with the evidence interval
``benchmarks/results/acis_intervals_evidence.md``, 2.4 minutes on one core).
``--first-trial N`` runs trials N, N+1, ... instead of 0, 1, ... (seeds the tables have not
used, for a development check). ``--checkpoint DIR`` works for it too.
``--tail-census`` prints, without runs, what each of its pools' rest holds against the
curves (``benchmarks/results/acis_tail_census.md``).

``--vs-paper`` compares the defaults with the paper's design (paired seeds, 1,000 per
cell by default) on the cells where the paper's own interval held, where the rest
stratum and model assistance must cost little (``benchmarks/results/acis_vs_paper.md``).

Run ``python benchmarks/acis.py`` (full study: about 13 minutes on two cores; it writes
``benchmarks/results/acis.md`` and ``acis.png``) or ``python benchmarks/acis.py --quick``
(under a minute, prints only). ``--jobs`` sets the number of
worker processes (default 2). ``--pools`` picks settings of the full study (each keeps its
seeds), and ``--checkpoint DIR`` saves every task's runs in ``DIR`` as it finishes and reuses
those already there: rerunning the same command resumes a killed run, and a run with
``--pools`` over the finished settings reports them from the saved runs
(``--stopping-pools`` limits the stopping-rule table, the costliest part on E, likewise). The report's header
names the git revision (or revisions, for a resumed run) and the versions that made it.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import math
import os
import platform
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from bayeval.fscore.acis import acis, sawade, top_k, uniform_sampling
from bayeval.fscore.study import summarize_runs

#: ACIS as the paper designed it: top-K domain only, design-based estimate, delta interval.
PAPER_KW = {"rest_share": 0.0, "interval": "delta", "model_assist": False}
METHODS = {
    "acis": acis,
    "acis (paper)": functools.partial(acis, **PAPER_KW),
    "sawade": sawade,
    "uniform": uniform_sampling,
    "top_k": top_k,
}
#: Methods the paper compared ACIS with (the headline's "every baseline").
BASELINES = ("sawade", "uniform", "top_k")
BUDGETS = (25, 50, 100, 200, 400)


@dataclass(frozen=True)
class Setting:
    name: str
    n: int
    prevalence: float
    dprime: float
    temperature: float = 1.0
    shift: float = 0.0
    seed: int = 0
    #: "latent" (synthetic, predictions = as many as positives), "threshold" (synthetic,
    #: predictions = score >= 0.5), "digits" (real data, see ``make_digits_pool``) or "gbm"
    #: (a gradient-boosting model's held-out probabilities, see ``make_gbm_pool``).
    kind: str = "latent"

    def describe(self) -> str:
        if self.kind == "digits":
            return (
                f"real: digit {self.seed} of scikit-learn's load_digits against the rest, "
                f"digit subsampled to {self.prevalence:.0%}; logistic regression, 5-fold "
                "cross-validated probabilities, predictions p >= 0.5"
            )
        if self.kind == "gbm":
            return (f"gradient boosting: make_classification({2 * self.n:,} items, 20 features, 6 informative, "
                    f"{self.prevalence:.1%} positives, class_sep {self.dprime:g}, random_state {self.seed}), "
                    "HistGradientBoostingClassifier trained on half, its probabilities on the other half, "
                    "predictions p > 0.5")
        if self.kind == "docstring":
            return (f"the pool of acis's docstring: {self.n:,} items, {self.prevalence:.0%} positives, scores "
                    "sigmoid(3 y + N(-5.5, 1)), predictions score > 0.2")
        if self.kind == "threshold":
            return (
                f"prevalence {self.prevalence:.1%}, {self.n:,} items, d'={self.dprime:g}, "
                f"overconfident (T={self.temperature:g}, shift={self.shift:g}), predictions "
                "score >= 0.5"
            )
        cal = (
            "calibrated"
            if (self.temperature, self.shift) == (1.0, 0.0)
            else f"miscalibrated (T={self.temperature:g}, shift={self.shift:g})"
        )
        return f"prevalence {self.prevalence:.1%}, {self.n:,} items, d'={self.dprime:g}, {cal}"


FULL = [
    Setting("A", 50_000, 0.01, 3.5, seed=1),
    Setting("B", 50_000, 0.01, 2.5, temperature=2.0, seed=2),
    Setting("C", 50_000, 0.001, 3.5, temperature=0.5, shift=-1.0, seed=3),
    Setting("D", 200_000, 0.001, 2.5, seed=4),
    Setting("E", 1_000_000, 0.001, 3.0, temperature=2.0, shift=1.0, seed=5),
    Setting("F", 200_000, 0.001, 4.5, seed=6),
]
#: Pools that are hard in the ways that matter for the interval (``--peers``): a real
#: rare pool, a weak classifier and an overconfident, 0.5-thresholded one.
HARD = [
    Setting("R", 1_639, 0.01, 0.0, seed=8, kind="digits"),
    Setting("W", 50_000, 0.01, 1.75, seed=7),
    Setting("M", 50_000, 0.01, 2.5, temperature=3.0, shift=3.0, seed=8, kind="threshold"),
]
PEER_BUDGETS = (50, 100, 200, 500)
#: Methods of the ``--peers`` study, run on the same pool with the same seed.
PEER_METHODS = (
    "acis",
    "acis (model interval)",
    "acis (delta interval)",
    "acis (no rest, paper)",
    "oasis",
)
#: The ACIS rows of ``PEER_METHODS``: the keywords of the run, and which of its
#: ``intervals`` the row reports (the first three rows are one run: same estimate).
PEER_ACIS_KW = (
    ({}, "jeffreys"),
    ({}, "model"),
    ({}, "delta"),
    (PAPER_KW, "delta"),
)
_OASIS = len(PEER_METHODS) - 1
_NO_REST = PEER_METHODS.index("acis (no rest, paper)")
QUICK = [
    Setting("A", 20_000, 0.01, 3.5, seed=1),
    Setting("C", 50_000, 0.001, 3.5, temperature=0.5, shift=-1.0, seed=3),
]


def make_digits_pool(digit: int, prevalence: float):
    """A real rare pool: one digit of ``load_digits`` (bundled with scikit-learn) vs the rest.

    All other digits are kept and the digit is subsampled (seeded) to ``prevalence``;
    the scores are 5-fold cross-validated probabilities of a standardized logistic
    regression, the predictions ``score >= 0.5``.
    """
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    x, t = load_digits(return_X_y=True)
    rng = np.random.default_rng(0)
    pos, neg = np.flatnonzero(t == digit), np.flatnonzero(t != digit)
    k = round(prevalence * neg.size / (1 - prevalence))
    keep = np.sort(np.r_[neg, rng.choice(pos, k, replace=False)])
    y = (t[keep] == digit).astype(np.int8)
    clf = make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=5000))
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    scores = cross_val_predict(clf, x[keep], y, cv=cv, method="predict_proba")[:, 1]
    return scores, (scores >= 0.5).astype(np.int8), y


def make_gbm_pool(st: Setting):
    """A gradient-boosting model's held-out probabilities on a rare category: tied and
    saturated scores (most items share a few leaf values), over-confident at the top."""
    from sklearn.datasets import make_classification
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.model_selection import train_test_split

    x, t = make_classification(n_samples=2 * st.n, n_features=20, n_informative=6, weights=[1.0 - st.prevalence],
                               flip_y=0.0, class_sep=st.dprime, random_state=st.seed)
    x_tr, x_te, y_tr, y_te = train_test_split(x, t, test_size=0.5, random_state=st.seed, stratify=t)
    scores = HistGradientBoostingClassifier(random_state=0).fit(x_tr, y_tr).predict_proba(x_te)[:, 1]
    return scores, (scores > 0.5).astype(np.int8), y_te.astype(np.int8)


def make_pool(st: Setting):
    if st.kind == "digits":
        return make_digits_pool(st.seed, st.prevalence)
    if st.kind == "gbm":
        return make_gbm_pool(st)
    rng = np.random.default_rng(st.seed)
    if st.kind == "docstring":  # the pool of acis's docstring (see DOCSTRING_POOL)
        y = (rng.random(st.n) < st.prevalence).astype(np.int8)
        scores = 1 / (1 + np.exp(-(st.dprime * y + rng.normal(-5.5, 1.0, y.size))))
        return scores, (scores > 0.2).astype(np.int8), y
    y = (rng.random(st.n) < st.prevalence).astype(np.int8)
    x = st.dprime * y + rng.normal(size=st.n)
    logit = st.dprime * x - st.dprime**2 / 2 + np.log(st.prevalence / (1 - st.prevalence))
    scores = 1.0 / (1.0 + np.exp(-(st.temperature * logit + st.shift)))
    if st.kind == "threshold":
        return scores, (scores >= 0.5).astype(np.int8), y
    n_pos = max(int(y.sum()), 1)
    threshold = np.sort(scores)[-n_pos]
    predictions = (scores >= threshold).astype(np.int8)
    return scores, predictions, y


def f1(y, yhat) -> float:
    tp = int(np.sum((y == 1) & (yhat == 1)))
    return 2 * tp / (int(yhat.sum()) + int(y.sum()))


_POOLS: dict = {}


def _pool(st: Setting):
    if st not in _POOLS:
        _POOLS.clear()  # keep one pool per worker in memory
        _POOLS[st] = make_pool(st)
    return _POOLS[st]


def _work(task):
    st, method, budget, seeds = task
    scores, predictions, y = _pool(st)
    fn = METHODS[method]
    out = np.empty((len(seeds), 5))
    for k, seed in enumerate(seeds):
        t0 = time.perf_counter()
        r = fn(scores, predictions, lambda i: y[i], budget=budget, random_seed=int(seed))
        out[k] = (r.estimate, r.variance, r.interval[0], r.interval[1], time.perf_counter() - t0)
    return st.name, method, budget, out


STOP_TARGETS = (0.1, 0.05)
STOP_CAP = 1000


def _stop_work(task):
    """ACIS with ``target_std_error``: labels spent, estimate, interval per seed."""
    st, target, seeds = task
    scores, predictions, y = _pool(st)
    out = np.empty((len(seeds), 4))
    for k, seed in enumerate(seeds):
        r = acis(scores, predictions, lambda i: y[i], budget=STOP_CAP, random_seed=int(seed),
                 target_std_error=target)
        out[k] = (r.n_labels, r.estimate, *r.interval)
    return st.name, target, out


def _stopping_table(settings, truths, stops) -> list[str]:
    lines = [
        "## Stopping at a target standard error",
        "",
        f"ACIS with `target_std_error` (budget cap {STOP_CAP}); labels = labels spent "
        "(median and 90th percentile); |err| <= 2 target = share of runs whose error is "
        "within twice the target; cover = coverage of the 95 % interval at the stop.",
        "",
        "| setting | target SE | labels (median / p90) | hit the cap | RMSE | bias | abs err <= 2 target | cover |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for st in settings:
        truth = truths[st.name]
        for target in STOP_TARGETS:
            n_lab, est, lo, hi = np.concatenate(stops[(st.name, target)]).T
            est = np.where(np.isfinite(est), est, 0.0)
            err = est - truth
            lines.append(
                f"| {st.name} | {target:g} | {np.median(n_lab):.0f} / {np.quantile(n_lab, 0.9):.0f} "
                f"| {np.mean(n_lab >= STOP_CAP):.2f} | {np.sqrt(np.mean(err**2)):.3f} | {err.mean():+.3f} "
                f"| {np.mean(np.abs(err) <= 2 * target):.2f} | {np.mean((lo <= truth) & (truth <= hi)):.2f} |"
            )
    return lines + [""]


def _import_oasis():
    """Import the ``oasis`` package (Marchant & Rubinstein, 2017), a benchmark-only peer.

    Install it with ``pip install --no-deps oasis`` (its metadata requires the retired
    ``sklearn`` placeholder package). It calls ``scipy.percentile`` and ``scipy.ptp``,
    which current SciPy lacks (numpy's are the same functions), and its ``experiments``
    module imports PyTables, which its samplers do not use.
    """
    import types

    import scipy

    for name in ("percentile", "ptp"):
        if not hasattr(scipy, name):
            setattr(scipy, name, getattr(np, name))
    sys.modules.setdefault("tables", types.ModuleType("tables"))
    import oasis

    return oasis


#: OASIS's automatic stratification picks the number of score bins by the
#: Freedman-Diaconis rule, which exhausts memory on the 1,000,000-item pool; it is
#: capped here (the number of strata is still chosen automatically).
OASIS_MAX_BINS = 20_000
_STRATA: dict = {}


def oasis_strata(scores):
    """OASIS's automatic stratification of a pool (cached: it depends on the scores only)."""
    import contextlib
    import io
    import warnings

    key = (scores.size, float(scores.sum()))
    if key not in _STRATA:
        _STRATA.clear()
        from oasis.stratification import stratify_by_scores

        _import_oasis()
        fd = np.histogram_bin_edges(scores, bins="fd").size - 1
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "Failed to create N strata": it uses fewer
            _STRATA[key] = stratify_by_scores(scores, "auto", n_bins=min(fd, OASIS_MAX_BINS))
    return _STRATA[key]


def run_oasis(scores, predictions, y, budget, seed):
    """OASIS until ``budget`` distinct items are labeled (it samples with replacement).

    Default settings of ``OASISSampler`` (epsilon 1e-3, prior strength twice the number
    of strata, stratification by the scores as in its automatic mode, see
    ``oasis_strata``; scores read as probabilities when they lie in [0, 1]); seeded
    through numpy's global generator, which the package uses. Returns (estimate, draws).
    """
    import contextlib
    import io

    oasis = _import_oasis()
    strata = oasis_strata(scores)
    np.random.seed(seed)
    proba = bool(scores.min() >= 0 and scores.max() <= 1)
    with contextlib.redirect_stdout(io.StringIO()):
        smp = oasis.OASISSampler(0.5, predictions, scores, lambda i: int(y[i]), proba=proba,
                                 strata=strata, max_iter=max(100 * budget, 20_000))
        smp.sample_distinct(budget)
    est = float(smp.estimate_[-1])
    return (est if np.isfinite(est) else np.nan), int(smp.t_)


def _peer_work(task):
    """All ``PEER_METHODS`` on one pool, budget and block of seeds (paired)."""
    st, budget, seeds = task
    scores, predictions, y = _pool(st)
    oracle = lambda i: y[i]  # noqa: E731
    out = np.full((len(seeds), len(PEER_METHODS), 6), np.nan)
    for k, seed in enumerate(seeds):
        seed = int(seed)
        runs = {}
        for j, (kw, which) in enumerate(PEER_ACIS_KW):
            key = tuple(sorted(kw.items()))
            if key not in runs:
                t0 = time.perf_counter()
                runs[key] = (acis(scores, predictions, oracle, budget=budget, random_seed=seed, **kw),
                             time.perf_counter() - t0)
            r, sec = runs[key]
            out[k, j] = (r.estimate, r.variance, *r.intervals[which], sec, budget)
        t0 = time.perf_counter()
        est, draws = run_oasis(scores, predictions, y, budget, seed)
        out[k, _OASIS] = (est, np.nan, np.nan, np.nan, time.perf_counter() - t0, draws)
    print(f"  peers: {st.name} {budget} seeds {seeds[0]}..{seeds[-1]} done", file=sys.stderr, flush=True)
    return st.name, budget, out


def peers_study(settings, budgets, trials, jobs) -> tuple[list[str], float]:
    """ACIS (both intervals, with and without the rest stratum) against OASIS, paired."""
    chunk = max(1, min(25, trials // 4))
    tasks = [
        (st, b, np.arange(lo, min(lo + chunk, trials)) + 3_000_017 * (i + 1))
        for i, st in enumerate(settings)
        for b in budgets
        for lo in range(0, trials, chunk)
    ]
    t0 = time.perf_counter()
    if jobs > 1:
        with ProcessPoolExecutor(max_workers=jobs) as ex:
            results = list(ex.map(_peer_work, tasks, chunksize=1))
    else:
        results = [_peer_work(t) for t in tasks]
    minutes = (time.perf_counter() - t0) / 60
    parts: dict = {}
    for name, b, out in results:
        parts.setdefault((name, b), []).append(out)
    return _peer_tables(settings, budgets, trials, {k: np.concatenate(v) for k, v in parts.items()}), minutes


def _peer_tables(settings, budgets, trials, runs) -> list[str]:
    lines = [
        "## ACIS against OASIS, and its three intervals",
        "",
        f"{trials} paired trials per pool and budget: per trial (seed) every method runs on the same "
        "pool. `acis` = the defaults (rest share 0.05, calibrated rest sampling, the design-only "
        "interval `interval=\"jeffreys\"`); `acis (model interval)` and `acis (delta interval)` = the same "
        "runs with the calibration model's interval and with the delta-method normal interval (same "
        "estimates); `acis (no rest, "
        "paper)` = `rest_share=0, interval=\"delta\", model_assist=False`, the paper's top-K-only "
        "sampling and design-based estimate; `oasis` = the `oasis` package's `OASISSampler` (defaults), stopped at the "
        "budget in *distinct* labels (`draws` = its median number of draws with replacement; it "
        "reports no interval). MSE ± Monte Carlo s.e.; cover = share of 95 % intervals holding "
        "the true F1 (s.e. at most 0.5/sqrt(trials)); width = mean interval width; "
        "d vs OASIS = mean paired difference of squared errors, ACIS minus OASIS, ± its s.e. "
        "(negative: ACIS better). Undefined estimates (no informative label) are scored as F1 = 0.",
        "",
    ]
    for st in settings:
        _, predictions, y = _pool(st)
        truth = f1(y, predictions)
        lines += [
            f"### Pool {st.name}: {st.describe()}",
            "",
            f"{predictions.size:,} items, {int(y.sum())} positives, {int(predictions.sum())} "
            f"predicted positives, true F1 = {truth:.4f}.",
            "",
            "| labels | method | MSE | bias | cover | width | d vs OASIS | s/run |",
            "|---:|---|---:|---:|---:|---:|---:|---:|",
        ]
        for b in budgets:
            out = runs[(st.name, b)]
            est = np.where(np.isfinite(out[:, :, 0]), out[:, :, 0], 0.0)
            sq = (est - truth) ** 2
            n = sq.shape[0]
            for j, m in enumerate(PEER_METHODS):
                lo, hi = out[:, j, 2], out[:, j, 3]
                if m == "oasis":
                    cover = width = "—"
                    diff = f"{np.median(out[:, j, 5]):.0f} draws"
                else:
                    cover = f"{np.mean((lo <= truth) & (truth <= hi)):.2f}"
                    width = f"{np.mean(hi - lo):.3f}"
                    d = sq[:, j] - sq[:, _OASIS]
                    diff = f"{d.mean():+.4f} ± {d.std(ddof=1) / np.sqrt(n):.4f}"
                lines.append(
                    f"| {b} | {m} | {sq[:, j].mean():.4f} ± {sq[:, j].std(ddof=1) / np.sqrt(n):.4f} "
                    f"| {est[:, j].mean() - truth:+.4f} | {cover} | {width} | {diff} "
                    f"| {np.median(out[:, j, 4]):.3f} |"
                )
        lines.append("")
    lines += _peer_summary(settings, budgets, runs)
    return lines


def _paired_ratio(sq: np.ndarray, sq_ref: np.ndarray) -> tuple[float, float]:
    """Ratio of the mean squared errors of two paired sets of runs, and its s.e.
    (delta method over the pairs)."""
    m1, m0 = sq.mean(), sq_ref.mean()
    g = sq / m0 - m1 * sq_ref / m0**2
    return m1 / m0, g.std(ddof=1) / np.sqrt(g.size)


def _peer_summary(settings, budgets, runs) -> list[str]:
    """One line per pool and budget: the issue's targets at a glance."""
    lines = [
        "### Summary against the targets",
        "",
        "Coverage and mean width of ACIS's default (design-only, Jeffreys) and model intervals, coverage "
        "of its delta interval and of the paper's design (no rest stratum, delta interval); MSE of "
        "ACIS and OASIS; 'ACIS <= OASIS' = the paired difference of squared errors is below 2 s.e.; "
        "'vs paper' = MSE of ACIS's defaults / MSE of the paper's design (no rest stratum, no model "
        "assistance; paired runs), ± s.e. of the ratio (delta method).",
        "",
        "| pool | labels | cover (jeffreys, default) | width (jeffreys) | cover (model) | width (model) | cover (delta) | cover (no rest) | MSE acis | MSE oasis | ACIS <= OASIS | vs paper |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for st in settings:
        _, predictions, y = _pool(st)
        truth = f1(y, predictions)
        for b in budgets:
            out = runs[(st.name, b)]
            est = np.where(np.isfinite(out[:, :, 0]), out[:, :, 0], 0.0)
            sq = (est - truth) ** 2
            n = sq.shape[0]
            cov = [np.mean((out[:, j, 2] <= truth) & (truth <= out[:, j, 3])) for j in range(_OASIS)]
            width = [np.mean(out[:, j, 3] - out[:, j, 2]) for j in (0, 1)]
            d = sq[:, 0] - sq[:, _OASIS]
            ok = d.mean() <= 2 * d.std(ddof=1) / np.sqrt(n)
            m1 = sq[:, 0].mean()
            ratio, ratio_se = _paired_ratio(sq[:, 0], sq[:, _NO_REST])
            lines.append(
                f"| {st.name} | {b} | {cov[0]:.2f} | {width[0]:.3f} | {cov[1]:.2f} | {width[1]:.3f} | {cov[2]:.2f} "
                f"| {cov[3]:.2f} | {m1:.4f} | {sq[:, _OASIS].mean():.4f} | {'yes' if ok else 'no'} "
                f"| {ratio:.2f} ± {ratio_se:.2f} |"
            )
    return lines + [""]


def summarize(truth: float, out: np.ndarray) -> dict:
    est, var, lo, hi, sec = out.T
    s = summarize_runs(est, var, lo, hi, truth)  # the library's own study summary
    return {
        "mse": s["mse"],
        "mse_se": s["mse_se"],
        "bias": s["bias"],
        "ratio": s["var_ratio"],
        "cover": s["coverage"],
        "undef": s["undefined"],
        "sec": np.median(sec),
    }


def _summary_tables(settings, truths, parts) -> list[str]:
    """Compact tables for the docs: ACIS per budget; every method's MSE per budget."""
    cols = " | ".join(st.name for st in settings)
    rule = "|---|" + "---:|" * len(settings)
    out = [
        "## Summary",
        "",
        "ACIS: MSE / var ratio / coverage of the 95 % interval, by budget and setting.",
        "",
        f"| labels | {cols} |",
        rule,
    ]
    summ = {
        (st.name, m, b): summarize(truths[st.name], np.concatenate(parts[(st.name, m, b)]))
        for st in settings
        for m in METHODS
        for b in BUDGETS
    }
    for b in BUDGETS:
        cells = []
        for st in settings:
            s = summ[(st.name, "acis", b)]
            cells.append(f"{s['mse']:.4f} / {s['ratio']:.2f} / {s['cover']:.2f}")
        out.append(f"| {b} | " + " | ".join(cells) + " |")
    out += [
        "",
        "MSE of every method (best per setting and budget in bold).",
        "",
        f"| labels | method | {cols} |",
        "|---|---|" + "---:|" * len(settings),
    ]
    for b in BUDGETS:
        for m in METHODS:
            cells = []
            for st in settings:
                best = min(summ[(st.name, mm, b)]["mse"] for mm in METHODS)
                v = summ[(st.name, m, b)]["mse"]
                cells.append(f"**{v:.4f}**" if v == best else f"{v:.4f}")
            out.append(f"| {b} | {m} | " + " | ".join(cells) + " |")
    return out + [""] + _paper_table(settings, truths, parts)


def _paper_table(settings, truths, parts) -> list[str]:
    """ACIS's defaults against the paper's design, paired runs (same seeds) on A-F."""
    out = [
        "## Defaults against the paper's design",
        "",
        "Same seeds, same pool: `acis` (defaults: rest stratum, model assistance, design-only "
        "interval) against `acis (paper)` (`rest_share=0, interval=\"delta\", model_assist=False`). "
        "ratio = MSE of the defaults / MSE of the paper's design ± its s.e. (delta method over the "
        "paired runs); cover = coverage of the 95 % interval; 'held' = the paper's interval "
        "covered at least 0.90.",
        "",
        "| setting | labels | MSE defaults | MSE paper | ratio | cover defaults | cover paper | held |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for st in settings:
        truth = truths[st.name]
        for b in BUDGETS:
            runs = {m: np.concatenate(parts[(st.name, m, b)]) for m in ("acis", "acis (paper)")}
            sq = {m: (np.where(np.isfinite(r[:, 0]), r[:, 0], 0.0) - truth) ** 2 for m, r in runs.items()}
            cov = {m: np.mean((r[:, 2] <= truth) & (truth <= r[:, 3])) for m, r in runs.items()}
            m1, m0 = sq["acis"].mean(), sq["acis (paper)"].mean()
            ratio, se = _paired_ratio(sq["acis"], sq["acis (paper)"])
            out.append(
                f"| {st.name} | {b} | {m1:.4f} | {m0:.4f} | {ratio:.2f} ± {se:.2f} "
                f"| {cov['acis']:.2f} | {cov['acis (paper)']:.2f} | "
                f"{'yes' if cov['acis (paper)'] >= 0.90 else 'no'} |"
            )
    return out + [""]


def speed(repeats: int = 5) -> tuple[float, float]:
    scores, predictions, y = make_pool(Setting("speed", 1_000_000, 0.001, 3.0, seed=99))
    times = []
    for seed in range(repeats):
        t0 = time.perf_counter()
        acis(scores, predictions, lambda i: y[i], budget=400, random_seed=seed)
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), float(np.max(times))


def mixture_calibration(scores, predictions, families, *, n_bins=300, draws=200, seed=0):
    """The calibrated-posterior variant's probabilities: a callable for ``acis(probabilities=)``.

    Before the first label it returns ACIS's calibration prior (the isotonic fit to the
    predictions); afterwards the posterior probability that each item is positive
    under a score mixture (``families``, binned) fitted to all scores and the labels so far.
    """
    from bayeval import EvalData
    from bayeval.fscore._design import calibration_prior as _calibration_prior
    from bayeval.models import ScoreMixture

    prior = _calibration_prior(np.asarray(scores, float), np.asarray(predictions))

    def probabilities(items, labels):
        if items.size == 0:
            return prior
        lab = np.full(len(scores), np.nan)
        lab[items] = labels
        post = ScoreMixture(*families, binned=True, n_bins=n_bins).fit(
            EvalData(scores, lab, predictions=predictions), draws=draws, tune=draws, chains=2,
            cores=1, progressbar=False, random_seed=seed + items.size,
        )
        return post.item_probability().values

    return probabilities


def _bayes_work(task):
    import warnings

    from bayeval.fscore import score_mixture_fscore
    from bayeval.models import ScoreMixture

    warnings.simplefilter("ignore")
    st, budget, seed, families = task
    scores, predictions, y = _pool(st)
    oracle = lambda i: y[i]  # noqa: E731
    rows = {}
    t0 = time.perf_counter()
    r = acis(scores, predictions, oracle, budget=budget, random_seed=seed)
    rows["acis"] = (r.estimate, *r.interval, time.perf_counter() - t0)
    t0 = time.perf_counter()
    r = acis(scores, predictions, oracle, budget=budget, random_seed=seed,
             probabilities=mixture_calibration(scores, predictions, families, seed=seed))
    rows["acis, mixture calibration"] = (r.estimate, *r.interval, time.perf_counter() - t0)
    t0 = time.perf_counter()
    r = score_mixture_fscore(
        scores, predictions, oracle, budget=budget, random_seed=seed, model=ScoreMixture(*families),
        fit_kwargs={"draws": 300, "tune": 300, "chains": 2, "cores": 1, "progressbar": False, "warn": False},
    )
    rows["score mixture (Bayesian route)"] = (r.estimate, *r.interval, time.perf_counter() - t0)
    print(f"  {st.name} {budget} seed {seed}: " + ", ".join(f"{m} {v[0]:.3f}" for m, v in rows.items()),
          file=sys.stderr, flush=True)
    return st.name, budget, rows


def bayes_study(settings, budgets, trials, families, jobs) -> str:
    """ACIS, ACIS with mixture calibration, and the mixture posterior on the same labels."""
    tasks = [(st, b, 7_000 + t, families) for st in settings for b in budgets for t in range(trials)]
    t_start = time.perf_counter()
    if jobs > 1:
        with ProcessPoolExecutor(max_workers=jobs) as ex:
            results = list(ex.map(_bayes_work, tasks, chunksize=1))
    else:
        results = [_bayes_work(t) for t in tasks]
    minutes = (time.perf_counter() - t_start) / 60
    lines = [
        "# ACIS, its calibrated-posterior variant and the Bayesian route, on the same labels",
        "",
        f"Output of `python benchmarks/acis.py --bayes --trials {trials} --settings "
        f"{' '.join(st.name for st in settings)} --budgets {' '.join(map(str, budgets))} "
        f"--families {' '.join(families)}` ({minutes:.0f} min with {jobs} worker(s) on "
        f"{os.cpu_count()} CPUs). Mixture: ScoreMixture{families}. Per trial (seed) the three "
        "methods label the same first batch; ACIS and the Bayesian route the same items throughout. "
        "95% intervals (the posterior interval for the Bayesian route). "
        "'d SE vs ACIS' = mean paired difference of squared errors against ACIS ± its SE "
        "(negative = better than ACIS).",
        "",
        "| setting | labels | method | MSE | d SE vs ACIS | bias | cover | mean width | s/run |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for st in settings:
        truth = f1(_pool(st)[2], _pool(st)[1])
        for b in budgets:
            mine = [rows for name, bb, rows in results if name == st.name and bb == b]
            sq_acis = None
            for m in mine[0]:
                est, lo, hi, sec = np.array([r[m] for r in mine], dtype=float).T
                est = np.where(np.isfinite(est), est, 0.0)
                sq = (est - truth) ** 2
                if sq_acis is None:
                    sq_acis, diff = sq, "--"
                else:
                    d = sq - sq_acis
                    diff = f"{d.mean():+.4f} ± {d.std(ddof=1) / np.sqrt(d.size):.4f}"
                lines.append(
                    f"| {st.name} (true F1 {truth:.3f}) | {b} | {m} | {sq.mean():.4f} ± "
                    f"{sq.std(ddof=1) / np.sqrt(sq.size):.4f} | {diff} | {est.mean() - truth:+.4f} "
                    f"| {np.mean((lo <= truth) & (truth <= hi)):.2f} | {np.mean(hi - lo):.3f} "
                    f"| {np.median(sec):.1f} |"
                )
    report = "\n".join(lines) + "\n"
    print(report)
    return report


# ----------------------------------------------------------------------------------
# --intervals: every interval of one ACIS run, against the runs' actual error
# ----------------------------------------------------------------------------------

#: The issue-38 pool: 0.3 % of 100,000 items, a miscalibrated classifier.
ISSUE_POOL = Setting("I", 100_000, 0.003, 3.0, temperature=2.0, shift=1.0, seed=9)
#: Pools of ``--intervals``: the calibrated and miscalibrated synthetic pools but E (its
#: 1,000,000 items cost a second a run), the hard pools and the issue's pool.
INTERVAL_POOLS = [st for st in FULL if st.name != "E"] + HARD + [ISSUE_POOL]
#: ``--intervals --pools S`` only (not in the default list): the pool of ``acis``'s docstring,
#: where the rest calibration's prior biases the estimate downward (the prior study).
DOCSTRING_POOL = Setting("S", 20_000, 0.01, 3.0, seed=0, kind="docstring")
#: ``--intervals --pools G H ...`` only: gradient-boosting pools (tied, saturated, over-confident
#: probabilities), G and H the two a review found the rest count off on, J and K fresh seeds.
GBM_POOLS = [Setting(name, 30_000, 0.005, 1.5, seed=seed, kind="gbm")
             for name, seed in (("G", 1), ("H", 0), ("J", 2), ("K", 3), ("L", 4), ("N", 5))]
INTERVAL_BUDGETS = (100, 200, 500)
INTERVAL_METHODS = ("jeffreys", "calibrated", "checked", "model", "delta", "evidence")
#: Nominal coverage of the intervals of ``--intervals`` (the issue's 90 %).
INTERVAL_PROB = 0.90


def realization(st: Setting, r: int) -> Setting:
    """Pool realization ``r`` of a synthetic setting (0: the setting's own pool; others: the
    same generating model with the pool seed ``st.seed + 1000 r``). The real pool has one."""
    return st if r == 0 or st.kind == "digits" else replace(st, seed=st.seed + 1000 * r)


def _interval_work(task):
    """One ACIS run per seed (``interval_prob=0.90``): its estimate, and per interval
    method its reported variance and ends; plus the domain's own variance and the pool's
    true F1 (the last row's third column). ``mode``: False, True (``--fit-only``) or
    ``"ungated"`` (``--evidence-ungated``)."""
    st, budget, mode, *rest_prior, seeds = task  # rest_prior: [] (the default) or [name]
    from bayeval.fscore import _estimators

    _estimators.REST_PRIOR = rest_prior[0] if rest_prior else "default"
    importlib.import_module("bayeval.fscore.acis").REST_FIT = os.environ.get("BAYEVAL_ACIS_REST_FIT", "chosen")
    _estimators.CALIBRATED_COVERS_SCORES = mode is not True
    _estimators.EVIDENCE_GATE = _estimators.EVIDENCE_DOMAIN_RATIO = mode != "ungated"
    scores, predictions, y = _pool(st)
    truth = f1(y, predictions)
    out = np.full((len(seeds), len(INTERVAL_METHODS) + 1, 4), np.nan)
    for k, seed in enumerate(seeds):
        r = acis(scores, predictions, lambda i: y[i], budget=budget, random_seed=int(seed),
                 interval_prob=INTERVAL_PROB)
        for j, m in enumerate(INTERVAL_METHODS):
            out[k, j] = (r.estimate, r.variances[m], *r.intervals[m])
        out[k, -1, :3] = (r.estimate, r.variances.get("domain", np.nan), truth)
    print(f"  intervals: {st.name} (pool seed {st.seed}) {budget} seeds {seeds[0]}..{seeds[-1]} done",
          file=sys.stderr, flush=True)
    return st.name, budget, out


def interval_rows(settings, budgets, runs) -> list[dict]:
    """Per pool, budget and interval: coverage, width, and both against the actual error.

    ``actual width`` = ``2 z RMSE`` (``z`` of the nominal coverage; RMSE over the runs,
    bias included): the width a run would need if it knew its typical error.
    ``var / actual`` = mean reported variance / variance of the estimates over the runs;
    ``var / MSE`` = the same over their mean squared error.
    """
    from scipy.stats import norm

    z = float(norm.ppf(0.5 + INTERVAL_PROB / 2))
    rows = []
    for st in settings:
        for b in budgets:
            out = runs[(st.name, b)]
            truth = out[:, -1, 2]  # each run's own pool (several with ``--realizations``)
            est = np.where(np.isfinite(out[:, 0, 0]), out[:, 0, 0], 0.0)
            err = est - truth
            var_act, mse = err.var(ddof=1), np.mean(err**2)
            w_act = 2 * z * np.sqrt(mse)
            for j, m in enumerate(INTERVAL_METHODS + ("domain",)):
                lo, hi, v = out[:, j, 2], out[:, j, 3], out[:, j, 1]
                width = np.mean(hi - lo) if m != "domain" else np.nan
                rows.append(dict(
                    pool=st.name, labels=b, method=m, truth=float(truth.mean()), n=est.size,
                    bias=float(err.mean()), sd=np.sqrt(var_act), rmse=np.sqrt(mse),
                    cover=np.mean((lo <= truth) & (truth <= hi)) if m != "domain" else np.nan,
                    width=width, actual_width=w_act, width_ratio=width / w_act,
                    var_ratio=np.nanmean(v) / var_act, var_mse_ratio=np.nanmean(v) / mse,
                ))
    return rows


def choose_interval(rows, floor: float = 0.90):
    """The narrowest interval (mean width over every pool and budget) whose coverage is at
    least ``floor`` in every pool and budget; None if none is."""
    ok = {}
    for m in INTERVAL_METHODS:
        mine = [r for r in rows if r["method"] == m]
        ok[m] = (min(r["cover"] for r in mine), float(np.mean([r["width"] for r in mine])))
    passing = [(w, m) for m, (c, w) in ok.items() if c >= floor]
    return (min(passing)[1] if passing else None), ok


def interval_study(args, argv) -> str:
    """``--intervals``: ACIS's six intervals on ``INTERVAL_POOLS`` (see the module docs)."""
    known = INTERVAL_POOLS + [DOCSTRING_POOL] + GBM_POOLS  # seeds by the place in this list
    settings = [st for st in known if (st.name in args.pools if args.pools is not None else st in INTERVAL_POOLS)]
    trials = args.trials or 100
    n_real = max(1, args.realizations)
    chunk = max(1, min(25, trials // 2))
    # Seeds by the pool's place in INTERVAL_POOLS (then S), so that --pools picks the same runs; with
    # --realizations K, trial j runs on pool realization j mod K.
    tasks = []
    for st in settings:
        i = known.index(st)
        for b in INTERVAL_BUDGETS:
            for lo in range(0, trials, chunk):
                trial = np.arange(lo, min(lo + chunk, trials)) + args.first_trial
                for r in range(n_real if st.kind != "digits" else 1):
                    mine = trial[trial % n_real == r] if st.kind != "digits" else trial
                    if mine.size:
                        tasks.append((realization(st, r), b, "ungated" if args.evidence_ungated else args.fit_only,
                                      *(() if args.rest_prior == "default" else (args.rest_prior,)),
                                      mine + 4_000_037 * (i + 1)))
    t0, revision = time.perf_counter(), _git_revision()  # the code that runs, not the code at the end
    revisions = _checkpoint_revisions(args.checkpoint, revision)
    results, reused = _run_tasks(_interval_work, tasks, args.jobs, args.checkpoint)
    parts: dict = {}
    for name, b, *_, out in results:
        parts.setdefault((name, b), []).append(out)
    runs = {k: np.concatenate(v) for k, v in parts.items()}
    rows = interval_rows(settings, INTERVAL_BUDGETS, runs)
    chosen, summary = choose_interval(rows)
    command = "python benchmarks/acis.py " + " ".join(argv if argv is not None else sys.argv[1:])
    lines = [
        "# ACIS: its intervals against the actual error of a run",
        "",
        f"Made by `{command.strip()}` at git {', '.join(revisions)} with {_versions(False)}; "
        f"{trials} runs per pool and budget, {(time.perf_counter() - t0) / 60:.1f} min with "
        f"{args.jobs} worker(s)" + (f" ({reused} of {len(tasks)} tasks read from the checkpoint)" if reused else "")
        + "."
        + (f" Synthetic pools: {n_real} realizations each (run j on realization j mod {n_real}: the "
           "setting's pool seed + 1000 (j mod K)); errors against each run's own pool's F1 (true F1 = their "
           "mean)." if n_real > 1 else "")
        + (" `calibrated` here is the fitted curve alone (`--fit-only`: the scores read as "
           "probabilities not covered)." if args.fit_only else "")
        + (" `evidence` here is the second attempt's variant (`--evidence-ungated`: the checked interval's "
           "count in every run, the domain term with the curve's own probabilities; `benchmarks/results/acis_evidence_prereg.md`)."
           if args.evidence_ungated else "")
        + (f" Trials {args.first_trial}-{args.first_trial + trials - 1} (not the usual 0-{trials - 1})."
           if args.first_trial else "")
        + (f" Rest count's calibration fitted to the labeled predicted negatives only (`--rest-fit negatives`; "
           "`bayeval.fscore.acis.REST_FIT`)." if args.rest_fit == "negatives" else "")
        + (" Rest count's calibration fitted to every label (`--rest-fit all`: the choice before "
           "`bayeval.fscore.acis.REST_FIT = \"chosen\"`)." if args.rest_fit == "all" else "")
        + (f" Rest calibration prior: `{args.rest_prior}` (`--rest-prior`; `bayeval.fscore._estimators.REST_PRIOR`)."
           if args.rest_prior != "default" else ""),
        "",
        f"Every run reports all {len(INTERVAL_METHODS)} {INTERVAL_PROB:.0%} intervals from one estimate (`ACISResult.intervals`, "
        "`ACISResult.variances`). cover = share of runs whose interval holds the true F1; width = mean "
        "width; actual width = 2 z RMSE over the runs (the width a run would need if it knew its "
        "typical error); var/actual = mean reported variance / variance of the estimates over the runs; "
        "var/MSE = the same over their mean squared error. The `domain` rows are the sampled domain's "
        "design-based variance alone (no term for the rest stratum's unknown count): how well the "
        "design-based part is estimated.",
        "",
        "| pool | labels | true F1 | bias | sd | actual width | interval | cover | width | width / actual | var / actual | var / MSE |",
        "|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        cov = "—" if np.isnan(r["cover"]) else f"{r['cover']:.2f}"
        wid = "—" if np.isnan(r["width"]) else f"{r['width']:.3f}"
        wr = "—" if np.isnan(r["width_ratio"]) else f"{r['width_ratio']:.2f}"
        lines.append(
            f"| {r['pool']} | {r['labels']} | {r['truth']:.3f} | {r['bias']:+.3f} | {r['sd']:.3f} "
            f"| {r['actual_width']:.3f} | {r['method']} | {cov} | {wid} | {wr} "
            f"| {r['var_ratio']:.2f} | {r['var_mse_ratio']:.2f} |"
        )
    lines += ["", "## Against the targets", "",
              "Calibrated pools (A, D, F, W): reported variance within 0.5--2x the actual variance, mean "
              "width at most 1.5x the actual width; every pool: coverage at least 0.90. Per cell: "
              "cover / width over actual / variance over actual, for the default, the calibrated, the "
              "checked and the evidence interval.",
              "", "| pool | labels | jeffreys (default) | calibrated | checked | evidence | calibrated meets the "
              "targets | checked meets the targets | evidence meets the targets |",
              "|---|---:|---|---|---|---|---|---|---|"]
    by = {(r["pool"], r["labels"], r["method"]): r for r in rows}
    calibrated_pools = {st.name for st in settings if st.kind == "latent" and (st.temperature, st.shift) == (1.0, 0.0)}
    for st in settings:
        for b in INTERVAL_BUDGETS:
            cells = []
            for m in ("jeffreys", "calibrated", "checked", "evidence"):
                r = by[(st.name, b, m)]
                cells.append(f"{r['cover']:.2f} / {r['width_ratio']:.2f} / {r['var_ratio']:.2f}")
            for m in ("calibrated", "checked", "evidence"):
                r = by[(st.name, b, m)]
                miss = [] if r["cover"] >= 0.90 else ["coverage"]
                if st.name in calibrated_pools:
                    miss += [] if 0.5 <= r["var_ratio"] <= 2 else ["variance"]
                    miss += [] if r["width_ratio"] <= 1.5 else ["width"]
                cells.append("yes" if not miss else "no: " + ", ".join(miss))
            lines.append(f"| {st.name} | {b} | " + " | ".join(cells) + " |")
    lines += ["", "## Choice by coverage and width", "",
              "| interval | lowest coverage (any pool, budget) | mean width |", "|---|---:|---:|"]
    lines += [f"| {m} | {c:.2f} | {w:.3f} |" for m, (c, w) in summary.items()]
    lines += ["", f"Narrowest interval covering at least 0.90 in every pool and budget: "
              f"**{chosen or 'none'}**.", ""]
    lines += ["Pools: " + "; ".join(f"{st.name}: {st.describe()}" for st in settings) + ".", ""]
    report = "\n".join(lines)
    print(report)
    if args.out is not None:
        args.out.write_text(report)
    return report


def final_domain_size(n: int, n_pred: int, budget: int, first_batch: int = 10, factor: float = 3.0) -> int:
    """Size of ACIS's top-K domain after its last batch (``acis``'s defaults; the plan does not
    depend on the labels)."""
    from bayeval.fscore._design import batch_sizes

    k, spent = 0, 0
    for i, b in enumerate(batch_sizes(budget, first_batch), start=1):
        k = min(n, max(k, math.ceil(factor * (i + 1) * n_pred), spent + 2 * b))
        spent += b
    return k


def tail_census(settings, budgets) -> str:
    """``--tail-census``: per pool and budget, what the rest stratum outside the final top-K
    domain holds against what the curves expect, from the pool's true labels (no runs).

    ``rest``: positives outside the domain; ``scores``: the sum of their scores (probability
    scores: the count if the scores are calibrated); ``fit``: the count the rest calibration
    (``platt_fit``, the prior ``acis`` uses) fitted to *every* domain item's label expects there
    -- the most a run's labels of the domain could tell it; ``check``: the tail check on the
    same census (the curve fitted to the domain's upper half by score, the positives of its
    lower half against that fit's count), i.e. what ``interval="checked"`` measures when the
    domain is labeled in full.
    """
    from bayeval.fscore._estimators import extrapolation_check, logistic, platt_feature, platt_fit

    lines = ["| pool | labels | domain | rest items | rest positives | scores expect | fit on the domain expects "
             "| check: found / expected | ratio |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for st in settings:
        scores, predictions, y = make_pool(st)
        t, prior = platt_feature(scores)
        order = np.argsort(-scores, kind="stable")
        for b in budgets:
            k = final_domain_size(scores.size, int(predictions.sum()), b)
            dom = np.zeros(scores.size, bool)
            dom[order[:k]] = True
            dom |= predictions == 1
            rest = ~dom
            coef, _ = platt_fit(t[dom], y[dom], prior)
            fit = float(logistic(coef[0] + coef[1] * t[rest]).sum())
            x, e = extrapolation_check(t[dom], y[dom], prior)
            lines.append(f"| {st.name} | {b} | {int(dom.sum()):,} | {int(rest.sum()):,} | {int(y[rest].sum())} "
                         f"| {scores[rest].sum():.2f} | {fit:.2f} | {x:.0f} / {e:.2f} | {x / e:.2f} |")
    return "\n".join(lines)


def _git_revision() -> str:
    import subprocess

    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                             cwd=Path(__file__).parent, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                               text=True, cwd=Path(__file__).parent, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return rev + (" (with uncommitted changes)" if dirty else "")


def main(argv=None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small version (a minute)")
    parser.add_argument(
        "--trials", type=int, default=None, help="trials per setting (default 300; 40 quick)"
    )
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--out", type=Path, default=None, help="write the Markdown report here")
    parser.add_argument("--stopping-pools", nargs="+", default=None,
                        help="settings of the full study's stopping-rule table (default: every setting run)")
    parser.add_argument("--checkpoint", type=Path, default=None,
                        help="full study: save each task's runs in this folder and reuse those already "
                        "there (rerun the same command to resume a killed run)")
    parser.add_argument("--bayes", action="store_true", help="the Bayesian-route study instead (see the module docs)")
    parser.add_argument("--settings", nargs="+", default=["A", "C"], help="settings of the --bayes study")
    parser.add_argument("--budgets", nargs="+", type=int, default=[100], help="budgets of the --bayes study")
    parser.add_argument("--families", nargs=2, default=["normal", "normal"], help="mixture pair of --bayes")
    parser.add_argument("--peers", action="store_true",
                        help="add the study against OASIS on settings A-F and the hard pools R, W, M")
    parser.add_argument("--peers-only", action="store_true",
                        help="only the --peers study (its Markdown to --out, or printed)")
    parser.add_argument("--peer-trials", type=int, default=None,
                        help="paired trials per pool and budget of --peers (default: --trials)")
    parser.add_argument("--vs-paper", action="store_true",
                        help="only the defaults against the paper's design on --cells (default: "
                        "where the paper's interval held), --trials paired runs (default 1000)")
    parser.add_argument("--cells", nargs="+", default=list(HELD_CELLS), help="SETTING@LABELS cells of --vs-paper")
    parser.add_argument("--intervals", action="store_true",
                        help="only the study of ACIS's six intervals against the actual error (see the module docs)")
    parser.add_argument("--pools", nargs="+", default=None,
                        help="pools of --intervals, or settings of the full study (default all; same seeds)")
    parser.add_argument("--first-trial", type=int, default=0,
                        help="--intervals: first trial index (default 0; e.g. 40 for runs disjoint from the tables')")
    parser.add_argument("--evidence-ungated", action="store_true",
                        help="--intervals: the evidence interval's second-attempt variant (no gate, the domain term "
                             "with the curve's own probabilities; benchmarks/results/acis_evidence_prereg.md)")
    parser.add_argument("--realizations", type=int, default=1,
                        help="pool realizations per synthetic pool of --intervals (default 1: the setting's pool)")
    parser.add_argument("--fit-only", action="store_true",
                        help="--intervals with the calibrated interval's count from the fitted curve alone "
                        "(not also covering the scores read as probabilities): the interval before that change")
    parser.add_argument("--rest-fit", choices=("all", "negatives", "chosen"), default="chosen",
                        help="--intervals: the labels the rest count's calibration is fitted to (bayeval.fscore.acis.REST_FIT; "
                             "default 'chosen', the package's; 'all' the choice before)")
    parser.add_argument("--rest-prior", choices=("default", "vague", "split", "t3", "vague_fb", "vague_nogate"), default="default",
                        help="--intervals: the rest calibration's prior on probability scores (the prior study, "
                        "benchmarks/results/acis_prior_prereg.md): default N(0, 2^2), N(1, 2^2); vague: sd 10; "
                        "split: the estimate's rest count from the sd-10 fit, design and intervals from the "
                        "default; t3: Student-t (3 df) with the default's centres and scales; vague_fb: vague, with the "
                        "estimate's rest count from the default's fit where the vague one does not pin it down; "
                        "vague_nogate: vague, the model's count whatever its sdlog (the last two: development "
                        "runs, benchmarks/results/acis_prior_dev.md)")
    parser.add_argument("--tail-census", action="store_true",
                        help="only the table of what each --intervals pool's rest holds against the curves "
                        "(true labels, no runs; see tail_census)")
    args = parser.parse_args(argv)
    os.environ["BAYEVAL_ACIS_REST_FIT"] = args.rest_fit  # read by the workers (_interval_work)
    if args.tail_census:
        settings = [st for st in INTERVAL_POOLS if args.pools is None or st.name in args.pools]
        command = "python benchmarks/acis.py " + " ".join(argv if argv is not None else sys.argv[1:])
        report = "\n".join([
            "# ACIS: what the rest stratum holds against the curves (the pools' true labels)", "",
            f"Made by `{command.strip()}` at git {_git_revision()} with {_versions(False)}. No runs: "
            "each pool's final top-K domain at each budget (``acis``'s defaults) and its true labels.",
            "", tail_census.__doc__.split("\n\n", 1)[1].strip().replace("\n    ", " "), "",
            tail_census(settings, INTERVAL_BUDGETS), ""])
        print(report)
        if args.out is not None:
            args.out.write_text(report)
        return report
    if args.intervals:
        return interval_study(args, argv)
    if args.vs_paper:
        return vs_paper(args, argv)
    if args.bayes:
        chosen = [st for st in FULL if st.name in args.settings]
        report = bayes_study(chosen, args.budgets, args.trials or 10, tuple(args.families), args.jobs)
        if args.out is not None:
            args.out.write_text(report)
        return report
    every = QUICK if args.quick else FULL
    settings = [st for st in every if args.pools is None or st.name in args.pools]
    trials = args.trials or (40 if args.quick else 300)
    if args.peers_only:
        return _peers_only(args, argv, trials)
    out_path = args.out or (None if args.quick else Path(__file__).parent / "results" / "acis.md")

    t_start = time.perf_counter()
    truths = {st.name: f1(_pool(st)[2], _pool(st)[1]) for st in settings}
    chunk = max(1, trials // 4)
    # Seeds by the setting's place in the full list, so that --pools picks the same runs.
    tasks = [
        (st, m, b, np.arange(lo, min(lo + chunk, trials)) + 1_000_003 * every.index(st))
        for st in settings
        for m in METHODS
        for b in BUDGETS
        for lo in range(0, trials, chunk)
    ]
    stop_settings = [st for st in settings if args.stopping_pools is None or st.name in args.stopping_pools]
    stop_tasks = [
        (st, target, np.arange(lo, min(lo + chunk, trials)) + 2_000_003 * every.index(st))
        for st in stop_settings
        for target in STOP_TARGETS
        for lo in range(0, trials, chunk)
    ]
    parts: dict = {}
    revision = _git_revision()  # the code that runs, not the code at the end
    revisions = _checkpoint_revisions(args.checkpoint, revision)
    results, reused = _run_tasks(_work, tasks, args.jobs, args.checkpoint)
    stop_results, stop_reused = _run_tasks(_stop_work, stop_tasks, args.jobs, args.checkpoint)
    reused += stop_reused
    stops: dict = {}
    for name, target, out in stop_results:
        stops.setdefault((name, target), []).append(out)
    for name, m, b, out in results:
        parts.setdefault((name, m, b), []).append(out)
    study_s = time.perf_counter() - t_start
    peer_lines, peer_min = [], 0.0
    if args.peers:
        # E is left out: OASIS takes about 45 s per run on its 1,000,000 items.
        peer_settings = (QUICK[:1] + HARD[:1]) if args.quick else [
            st for st in FULL + HARD if st.name != "E"
        ]
        peer_trials = args.peer_trials or trials
        peer_lines, peer_min = peers_study(peer_settings, PEER_BUDGETS, peer_trials, args.jobs)
    med, worst = speed()

    versions = _versions(args.peers)
    command = "python benchmarks/acis.py " + " ".join(argv if argv is not None else sys.argv[1:])
    lines = [
        "# ACIS vs baselines: F1 of synthetic rare categories",
        "",
        f"Made by `{command.strip()}` at git {', '.join(revisions)} with {versions}.",
        "",
        f"{trials} trials per setting, method and budget (same pool, new seed per trial); "
        f"study time {study_s / 60:.1f} min"
        + (f" (this invocation; {reused} of {len(tasks) + len(stop_tasks)} tasks read from its checkpoint)"
           if reused else "")
        + (f" (+ {peer_min:.1f} min for the study against OASIS)" if args.peers else "")
        + f" with {args.jobs} worker(s) on "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs.",
        "MSE ± its Monte Carlo SE; var ratio = mean predicted variance / empirical variance; "
        "cover = coverage of the 95 % interval; undef = share of runs without an informative "
        "label (scored as F1 = 0, scikit-learn's convention). s/run = median seconds per run.",
        "",
    ]
    headline = []
    for st in settings:
        truth = truths[st.name]
        _, predictions, y = _pool(st)
        lines += [
            f"## Setting {st.name}: {st.describe()}",
            "",
            f"true F1 = {truth:.4f}; {int(y.sum())} positives, {int(predictions.sum())} predicted positives.",
            "",
            "| method | labels | MSE | bias | var ratio | cover | undef | s/run |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        table = {}
        for m in METHODS:
            for b in BUDGETS:
                s = summarize(truth, np.concatenate(parts[(st.name, m, b)]))
                table[(m, b)] = s
                ratio = "—" if not np.isfinite(s["ratio"]) else f"{s['ratio']:.2f}"
                lines.append(
                    f"| {m} | {b} | {s['mse']:.4f} ± {s['mse_se']:.4f} | {s['bias']:+.4f} | {ratio} "
                    f"| {s['cover']:.2f} | {s['undef']:.2f} | {s['sec']:.3f} |"
                )
        lines.append("")
        under_100 = [b for b in BUDGETS if b < 100 and table[("acis", b)]["mse"] < 0.01]
        wins = []
        for b in [b for b in BUDGETS if b < 300]:
            best = min((table[(m, b)]["mse"], m) for m in BASELINES)
            wins.append((b, table[("acis", b)]["mse"] < best[0], best[1]))
        headline.append(
            f"| {st.name} | {'yes, at ' + str(min(under_100)) + ' labels' if under_100 else 'no'} | "
            + ", ".join(f"{b}: {'yes' if w else 'no (' + bm + ')'}" for b, w, bm in wins)
            + " |"
        )
    lines += _summary_tables(settings, truths, parts)
    lines += peer_lines
    lines += _stopping_table(stop_settings, truths, stops)
    lines += [
        "## Paper's headline",
        "",
        "| setting | ACIS MSE < 0.01 with < 100 labels | ACIS MSE below every baseline (labels: yes/no (best baseline)) |",
        "|---|---|---|",
        *headline,
        "",
        "## Speed",
        "",
        f"One ACIS run, budget 400, 1,000,000 items: median {med:.2f} s, max {worst:.2f} s (5 runs).",
        "",
    ]
    report = "\n".join(lines)
    print(report)
    if out_path is not None:
        out_path.parent.mkdir(parents=True, exist_ok=True)
        out_path.write_text(report)
        figure(settings, truths, parts, out_path.with_suffix(".png"))
        print(f"\nwritten to {out_path} and {out_path.with_suffix('.png')}", file=sys.stderr)
    return report


def _task_key(task) -> str:
    """A file name for one task of the full study: setting, method (or target), budget, seeds."""
    st, *what, seeds = task
    tag = "_".join(str(x) for x in (st.name, *what, int(seeds[0]), len(seeds)))
    return "".join(c if c.isalnum() or c in "-." else "_" for c in tag) + ".npy"


def _run_tasks(fn, tasks, jobs: int, checkpoint: Path | None) -> tuple[list, int]:
    """``fn`` over ``tasks`` with ``jobs`` processes, as ``(setting name, *task middle, out)``,
    and the number of tasks read from the checkpoint instead of run.

    With a ``checkpoint`` folder each task's array is saved there as it finishes and a saved
    one is read instead of rerun, so a killed run resumes where it stopped."""
    saved = {} if checkpoint is None else {
        i: np.load(checkpoint / _task_key(t)) for i, t in enumerate(tasks) if (checkpoint / _task_key(t)).exists()
    }
    todo, reused = [i for i in range(len(tasks)) if i not in saved], len(saved)
    ex = ProcessPoolExecutor(max_workers=jobs) if jobs > 1 else None
    try:
        results = ex.map(fn, [tasks[i] for i in todo], chunksize=1) if ex else map(fn, (tasks[i] for i in todo))
        for i, res in zip(todo, results):
            saved[i] = res[-1]
            if checkpoint is not None:
                np.save(checkpoint / _task_key(tasks[i]), res[-1])
    finally:
        if ex is not None:
            ex.shutdown()
    return [(t[0].name, *t[1:-1], saved[i]) for i, t in enumerate(tasks)], reused


def _checkpoint_revisions(checkpoint: Path | None, revision: str) -> list[str]:
    """The git revisions whose results the report holds: this run's, and those of earlier runs
    that wrote to the same checkpoint folder (recorded there in ``revisions.txt``)."""
    if checkpoint is None:
        return [revision]
    checkpoint.mkdir(parents=True, exist_ok=True)
    log = checkpoint / "revisions.txt"
    seen = log.read_text().splitlines() if log.exists() else []
    if revision not in seen:
        log.write_text("\n".join([*seen, revision]) + "\n")
    return [*seen, revision] if revision not in seen else seen


def _versions(peers: bool) -> str:
    import scipy

    import bayeval

    out = (
        f"bayeval {bayeval.__version__}, numpy {np.__version__}, scipy {scipy.__version__}, "
        f"Python {platform.python_version()}"
    )
    if peers:
        from importlib.metadata import version

        out += f", oasis {version('oasis')}, scikit-learn {version('scikit-learn')}"
    return out


def _peers_only(args, argv, trials) -> str:
    """``--peers-only``: the study against OASIS alone (same seeds as within the full study)."""
    peer_settings = (QUICK[:1] + HARD[:1]) if args.quick else [
        st for st in FULL + HARD if st.name != "E"
    ]
    peer_trials = args.peer_trials or trials
    lines, minutes = peers_study(peer_settings, PEER_BUDGETS, peer_trials, args.jobs)
    command = "python benchmarks/acis.py " + " ".join(argv if argv is not None else sys.argv[1:])
    head = [
        f"Made by `{command.strip()}` with {_versions(True)}; {minutes:.1f} min with "
        f"{args.jobs} worker(s) on {os.cpu_count()} CPUs.",
        "",
    ]
    report = "\n".join([lines[0][1:], "", *head, *lines[2:]]) + "\n"
    print(report)
    if args.out is not None:
        args.out.write_text(report)
    return report


#: Cells of the full study where the paper's own interval held (coverage >= 0.90 in
#: ``acis.md``): where the defaults' extra machinery has to be nearly free (``--vs-paper``).
HELD_CELLS = ("A@50", "A@200", "A@400", "A@500", "B@50", "B@400", "B@500", "C@50", "F@200", "F@400", "F@500")
#: Seeds of ``--vs-paper`` (none shared with the full study's).
VS_PAPER_SEED = 50_000_000


def _vs_paper_work(task):
    st, budget, seeds = task
    scores, predictions, y = _pool(st)
    out = np.empty((len(seeds), 2))
    for k, seed in enumerate(seeds):
        for j, kw in enumerate(({}, PAPER_KW)):
            r = acis(scores, predictions, lambda i: y[i], budget=budget, random_seed=int(seed), **kw)
            out[k, j] = r.estimate if np.isfinite(r.estimate) else 0.0
    return st.name, budget, out


def vs_paper(args, argv) -> str:
    """``--vs-paper``: the defaults against the paper's design on many fresh paired seeds."""
    by_name = {st.name: st for st in FULL + HARD}
    cells = []
    for c in args.cells:
        name, _, labels = c.partition("@")
        if name not in by_name or not labels.isdigit() or int(labels) < 1:
            raise SystemExit(
                f"--cells: expected SETTING@LABELS with a setting among {', '.join(by_name)} and a "
                f"positive number of labels (e.g. B@500), got {c!r}"
            )
        cells.append((name, int(labels)))
    which = (
        "those of the full study (`acis.md`) whose paper-design interval covered at least 0.90"
        if tuple(args.cells) == HELD_CELLS
        else "chosen with `--cells`"
    )
    trials, block = args.trials or 1000, 250
    t0 = time.perf_counter()
    tasks = [
        (by_name[name], b, np.arange(lo, min(lo + block, trials)) + VS_PAPER_SEED + 100_000 * i)
        for i, (name, b) in enumerate(cells)
        for lo in range(0, trials, block)
    ]
    with ProcessPoolExecutor(max_workers=args.jobs) as ex:
        results = list(ex.map(_vs_paper_work, tasks, chunksize=1))
    est: dict = {}
    for name, b, out in results:
        est.setdefault((name, b), []).append(out)
    command = "python benchmarks/acis.py " + " ".join(argv if argv is not None else sys.argv[1:])
    lines = [
        "# ACIS's defaults against the paper's design where the paper's interval held",
        "",
        f"Made by `{command.strip()}` with {_versions(False)}; {(time.perf_counter() - t0) / 60:.1f} min "
        f"with {args.jobs} worker(s) on {os.cpu_count()} CPUs.",
        "",
        f"{trials} paired runs per cell (seeds from {VS_PAPER_SEED:,}, none shared with `acis.md`): "
        "`acis` at its defaults and with `rest_share=0, interval=\"delta\", model_assist=False` "
        f"(the paper's design) on the same pool and seed. Cells: {which}. ratio = MSE of the "
        "defaults / MSE of the paper's design ± its s.e. (delta method over the paired runs); "
        "target: at most 1.10.",
        "",
        "| setting | labels | MSE defaults | MSE paper | bias defaults | bias paper | ratio | ratio <= 1.10 |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for name, b in cells:
        e = np.concatenate(est[(name, b)])
        _, predictions, y = _pool(by_name[name])
        truth = f1(y, predictions)
        sq = (e - truth) ** 2
        m1, m0 = sq[:, 0].mean(), sq[:, 1].mean()
        ratio, se = _paired_ratio(sq[:, 0], sq[:, 1])
        verdict = "yes" if ratio <= 1.10 else ("within 2 s.e." if ratio - 2 * se <= 1.10 else "no")
        lines.append(
            f"| {name} | {b} | {m1:.5f} | {m0:.5f} | {e[:, 0].mean() - truth:+.4f} | "
            f"{e[:, 1].mean() - truth:+.4f} | {ratio:.3f} ± {se:.3f} | {verdict} |"
        )
    report = "\n".join(lines) + "\n"
    print(report)
    if args.out is not None:
        args.out.write_text(report)
    return report


def figure(settings, truths, parts, path: Path) -> None:
    """MSE (top) and predicted vs empirical variance (bottom) per setting, via FScoreStudy."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    from bayeval.fscore import FScoreStudy

    fig, axes = plt.subplots(2, len(settings), figsize=(3.6 * len(settings), 7), squeeze=False)
    for j, st in enumerate(settings):
        frames = []
        for m in METHODS:
            for b in BUDGETS:
                est, var, lo, hi, sec = np.concatenate(parts[(st.name, m, b)]).T
                frames.append(pd.DataFrame({
                    "method": m, "budget": b, "trial": np.arange(est.size), "estimate": est, "variance": var,
                    "ci_low": lo, "ci_high": hi, "n_labels": b, "seconds": sec,
                }))
        study = FScoreStudy(runs=pd.concat(frames, ignore_index=True), truth=truths[st.name], alpha=0.5,
                            interval_prob=0.95)
        study.plot(axes[0, j])
        axes[0, j].set_title(f"{st.name}: true F1 {truths[st.name]:.2f}", fontsize=9)
        study.plot(axes[1, j], kind="variance")
        for ax in axes[:, j]:
            if j:
                ax.get_legend().remove()
            else:
                ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
