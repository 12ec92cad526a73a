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

Then the speed of one ACIS run with a budget of 400 on a 1,000,000-item pool, and a
check of the paper's headline (MSE < 0.01 with fewer than 100 labels; lower MSE than
every baseline below 300 labels).

Synthetic classifier: a latent ``x = d' * y + N(0, 1)``; the calibrated score is the
posterior ``P(y = 1 | x)``; a miscalibrated one is ``sigmoid(T * logit + shift)``.
Predictions threshold the score so that there are as many predicted as true
positives. Miscalibration is a monotone transform, so it changes nothing for the
rank-based methods (ACIS's isotonic calibration, top-K, uniform) -- only for Sawade's
baseline, which reads the scores as probabilities.

``--bayes`` runs instead a small study of the Bayesian route
(``bayeval.active.score_mixture_fscore``: a score-mixture posterior fitted to the
labels ACIS buys with the same seed) against ACIS on those same labels: each fit costs
tens of seconds, so it uses few trials (``--trials``, default 10), the settings and
budgets named by ``--settings`` and ``--budgets``, and the families ``--families``
(default the skew-normal pair, on the logit scale of these probabilities).

Run ``python benchmarks/acis.py`` (full study: about 20 minutes on two shared cores;
it writes ``benchmarks/results/acis.md``) or ``python benchmarks/acis.py --quick``
(under a minute, prints only). ``--jobs`` sets the number of
worker processes (default 2).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bayeval.active.acis import acis, sawade, top_k, uniform_sampling

METHODS = {"acis": acis, "sawade": sawade, "uniform": uniform_sampling, "top_k": top_k}
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

    def describe(self) -> str:
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
]
QUICK = [
    Setting("A", 20_000, 0.01, 3.5, seed=1),
    Setting("C", 50_000, 0.001, 3.5, temperature=0.5, shift=-1.0, seed=3),
]


def make_pool(st: Setting):
    rng = np.random.default_rng(st.seed)
    y = (rng.random(st.n) < st.prevalence).astype(np.int8)
    x = st.dprime * y + rng.normal(size=st.n)
    logit = st.dprime * x - st.dprime**2 / 2 + np.log(st.prevalence / (1 - st.prevalence))
    scores = 1.0 / (1.0 + np.exp(-(st.temperature * logit + st.shift)))
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


def summarize(truth: float, out: np.ndarray) -> dict:
    est, var, lo, hi, sec = out.T
    undef = ~np.isfinite(est)
    est = np.where(undef, 0.0, est)
    var = np.where(undef | ~np.isfinite(var), 1 / 12, var)
    sq = (est - truth) ** 2
    emp = est.var(ddof=1)
    return {
        "mse": sq.mean(),
        "mse_se": sq.std(ddof=1) / np.sqrt(len(sq)),
        "bias": est.mean() - truth,
        "ratio": var.mean() / emp if emp > 1e-15 else np.nan,
        "cover": np.mean(undef | ((lo <= truth) & (truth <= hi))),
        "undef": undef.mean(),
        "sec": np.median(sec),
    }


def speed(repeats: int = 5) -> tuple[float, float]:
    scores, predictions, y = make_pool(Setting("speed", 1_000_000, 0.001, 3.0, seed=99))
    times = []
    for seed in range(repeats):
        t0 = time.perf_counter()
        acis(scores, predictions, lambda i: y[i], budget=400, random_seed=seed)
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), float(np.max(times))


def bayes_study(settings, budgets, trials, families) -> str:
    """ACIS and the score-mixture posterior on the same labels: MSE, bias, coverage."""
    import warnings

    from bayeval.active import score_mixture_fscore
    from bayeval.models import ScoreMixture

    warnings.simplefilter("ignore")
    lines = [
        f"Bayesian route (ScoreMixture{families}) vs ACIS on the same labels; {trials} trials "
        "per setting and budget; 95% intervals (posterior interval for the mixture).",
        "",
        "| setting | labels | method | MSE | bias | cover | mean width | s/run |",
        "|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    for st in settings:
        scores, predictions, y = _pool(st)
        truth = f1(y, predictions)
        for b in budgets:
            res = {"acis": [], "score mixture": []}
            for t in range(trials):
                seed = 7_000 + t
                t0 = time.perf_counter()
                r = acis(scores, predictions, lambda i: y[i], budget=b, random_seed=seed)
                res["acis"].append((r.estimate, *r.interval, time.perf_counter() - t0))
                t0 = time.perf_counter()
                r = score_mixture_fscore(
                    scores, predictions, lambda i: y[i], budget=b, random_seed=seed,
                    model=ScoreMixture(*families), fit_kwargs={"draws": 300, "tune": 300, "chains": 2, "cores": 1,
                                                               "progressbar": False, "warn": False},
                )
                res["score mixture"].append((r.estimate, *r.interval, time.perf_counter() - t0))
                print(f"  {st.name} {b} trial {t + 1}: acis {res['acis'][-1][0]:.3f}, mixture "
                      f"{res['score mixture'][-1][0]:.3f} [{res['score mixture'][-1][1]:.3f}, "
                      f"{res['score mixture'][-1][2]:.3f}] (true {truth:.3f})", file=sys.stderr, flush=True)
            for m, rows in res.items():
                est, lo, hi, sec = np.array(rows, dtype=float).T
                est = np.where(np.isfinite(est), est, 0.0)
                sq = (est - truth) ** 2
                lines.append(
                    f"| {st.name} (true F1 {truth:.3f}) | {b} | {m} | {sq.mean():.4f} ± {sq.std(ddof=1) / np.sqrt(trials):.4f} "
                    f"| {est.mean() - truth:+.4f} | {np.mean((lo <= truth) & (truth <= hi)):.2f} | {np.mean(hi - lo):.3f} "
                    f"| {np.median(sec):.1f} |"
                )
    report = "\n".join(lines)
    print(report)
    return report


def main(argv=None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small version (a minute)")
    parser.add_argument(
        "--trials", type=int, default=None, help="trials per setting (default 300; 40 quick)"
    )
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--out", type=Path, default=None, help="write the Markdown report here")
    parser.add_argument("--bayes", action="store_true", help="the Bayesian-route study instead (see the module docs)")
    parser.add_argument("--settings", nargs="+", default=["A", "C"], help="settings of the --bayes study")
    parser.add_argument("--budgets", nargs="+", type=int, default=[100], help="budgets of the --bayes study")
    parser.add_argument("--families", nargs=2, default=["skewnormal", "skewnormal"], help="mixture pair of --bayes")
    args = parser.parse_args(argv)
    if args.bayes:
        chosen = [st for st in FULL if st.name in args.settings]
        return bayes_study(chosen, args.budgets, args.trials or 10, tuple(args.families))
    settings = QUICK if args.quick else FULL
    trials = args.trials or (40 if args.quick else 300)
    out_path = args.out or (None if args.quick else Path(__file__).parent / "results" / "acis.md")

    t_start = time.perf_counter()
    truths = {st.name: f1(_pool(st)[2], _pool(st)[1]) for st in settings}
    chunk = max(1, trials // 4)
    tasks = [
        (st, m, b, np.arange(lo, min(lo + chunk, trials)) + 1_000_003 * i)
        for i, st in enumerate(settings)
        for m in METHODS
        for b in BUDGETS
        for lo in range(0, trials, chunk)
    ]
    parts: dict = {}
    if args.jobs > 1:
        with ProcessPoolExecutor(max_workers=args.jobs) as ex:
            results = list(ex.map(_work, tasks, chunksize=1))
    else:
        results = [_work(t) for t in tasks]
    for name, m, b, out in results:
        parts.setdefault((name, m, b), []).append(out)
    study_s = time.perf_counter() - t_start
    med, worst = speed()

    lines = [
        "# ACIS vs baselines: F1 of synthetic rare categories",
        "",
        f"{trials} trials per setting, method and budget (same pool, new seed per trial); "
        f"study time {study_s / 60:.1f} min with {args.jobs} worker(s) on "
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
            best = min((table[(m, b)]["mse"], m) for m in METHODS if m != "acis")
            wins.append((b, table[("acis", b)]["mse"] < best[0], best[1]))
        headline.append(
            f"| {st.name} | {'yes, at ' + str(min(under_100)) + ' labels' if under_100 else 'no'} | "
            + ", ".join(f"{b}: {'yes' if w else 'no (' + bm + ')'}" for b, w, bm in wins)
            + " |"
        )
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
        print(f"\nwritten to {out_path}", file=sys.stderr)
    return report


if __name__ == "__main__":
    main()
