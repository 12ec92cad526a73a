"""Squeezed probabilities: which score feature should ``bayeval.fit`` use for them?

A strongly regularized logistic regression ranks well but squeezes its probabilities into a
narrow band away from 0 and 1 (for example 0.15--0.48). ``transform="auto"`` reads
probabilities on the logit scale with a prior centred on *the scores are calibrated*; such
scores are not, and the prior's pull towards a calibration slope of 1 can understate how
well they rank; but a weak, calibrated model squeezes its probabilities too, and for it the
calibrated reading is the right one. This study fits the default with ``transform="logit"``
(the calibrated prior on the logit), with ``transform="standardize"`` (the prior of margins
and log-odds: the score standardized and centred at the quantile that matches the vetted
prevalence, what ``"auto"`` chose for squeezed probabilities up to git d723a47) and with
``"both"`` (``transform="auto"`` since then: both readings, weighed by the stacking), on
the same random label sets, on cross-validated scores of regularized logistic regressions
on real data, on weak but calibrated models on real data (``fair_weak_logreg``, and
``randhie_logreg`` of ``real_scores.make_fresh_pools``) and on a calibrated synthetic
control, and reports the 90% intervals' coverage and mean width for AP, P@K (K = 1% of N),
and precision and recall at the threshold that flags the pool's share of positives
(``randhie_logreg``: its own threshold, 0.3).

Run (results in ``benchmarks/results/squeezed.md``)::

    pip install -e ".[bench]"
    python benchmarks/squeezed.py --sets 10 --out benchmarks/results/squeezed.md
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time
import warnings
import zlib

import numpy as np
import pandas as pd

warnings.filterwarnings("ignore", category=FutureWarning)
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import real_scores as R  # noqa: E402

import bayeval as be  # noqa: E402

# "logit": the calibrated prior on logit(s), what transform="auto" did for all probabilities up to
# git 8884970 (rows made then say "auto"); "standardize": what "auto" did for squeezed ones from then
# to git d723a47; "both": transform="auto" after it (the four candidates of both readings, stacked)
TRANSFORMS = ("logit", "standardize", "both")
BUDGETS = (30, 100)


def make_pools() -> list:
    """Cross-validated probabilities of strongly regularized logistic regressions (squeezed)."""
    import statsmodels.api as sm
    from sklearn.datasets import load_breast_cancer, load_digits
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    def pool(name, X, y, C, note):
        lr = make_pipeline(StandardScaler(), LogisticRegression(C=C, max_iter=5000))
        s = R._cv_scores(lr, X, y, "predict_proba")
        thr = float(np.quantile(s, 1 - y.mean()))
        return R.Pool(name, s, y, "probabilities", thr, 0.8, note)

    out = []
    dg = load_digits()
    for d, C in ((8, 2e-4), (3, 2e-3)):
        y = (dg.target == d).astype(int)
        out.append(pool(f"digits{d}_logreg_C{C:g}", dg.data, y, C, f"digit {d} against the rest (10%), C={C:g}"))
    bc = load_breast_cancer()
    yb = (bc.target == 0).astype(int)
    out.append(pool("breast_cancer_logreg_C1e-4", bc.data, yb, 1e-4, "breast cancer (37%), C=1e-4"))
    fair = sm.datasets.fair.load_pandas().data
    Xf = fair.drop(columns="affairs").to_numpy(float)
    yf = (fair["affairs"] > 0).to_numpy(int)
    out.append(pool("fair_logreg_C1e-4", Xf, yf, 1e-4, "affairs (32%), C=1e-4"))
    # weak but calibrated models whose probabilities are squeezed too (real data, default regularization)
    Xw = fair[["age", "educ", "occupation"]].to_numpy(float)
    out.append(pool("fair_weak_logreg", Xw, yf, 1.0, "affairs (32%) from age, education and occupation only, "
                    "C=1 (weak, calibrated)"))
    fresh = {p.name: p for p in R.make_fresh_pools()}
    out.append(fresh["randhie_logreg"])
    # the control: probabilities in the same narrow band that ARE calibrated (y ~ Bernoulli(s))
    rng = np.random.default_rng(7)
    s = rng.uniform(0.15, 0.48, 2000)
    y = (rng.random(2000) < s).astype(int)
    out.append(R.Pool("calibrated_squeezed", s, y, "probabilities", float(np.quantile(s, 1 - y.mean())), 0.4,
                      "synthetic control: uniform on [0.15, 0.48], y ~ Bernoulli(s) (calibrated)"))
    return out


def run(pools, budgets, n_sets, seed=0, log=print, first=0) -> pd.DataFrame:
    rows = []
    for rep in range(first, first + n_sets):
        for pool in pools:
            t0 = time.perf_counter()
            specs = {k: v for k, v in R._metric_specs(pool).items() if k != "F1"}
            truth = R._truth(pool, specs)
            order = np.random.default_rng([seed, rep, zlib.crc32(pool.name.encode())]).permutation(pool.scores.size)
            for b in budgets:
                lab = np.full(pool.scores.size, np.nan)
                lab[order[:b]] = pool.truth[order[:b]]
                data = be.EvalData(pool.scores, lab)
                for tr in TRANSFORMS:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        post = be.fit(data, transform="auto" if tr == "both" else tr, random_seed=rep, warn=False)
                    for mlab, (mean, lo, hi) in R._interval(post, specs).items():
                        t = truth[mlab]
                        rows.append({"pool": pool.name, "budget": b, "set": rep, "transform": tr, "metric": mlab,
                                     "truth": t, "mean": mean, "lo": lo, "hi": hi,
                                     "covered": bool(lo - 1e-9 <= t <= hi + 1e-9) if np.isfinite(lo) else np.nan,
                                     "width": hi - lo, "err": mean - t, "caveats": len(data.caveats())})
            log(f"  {pool.name} set {rep}: {time.perf_counter() - t0:.0f} s", flush=True)
    return pd.DataFrame(rows)


def write_report(df, pools, out, stamp):
    lines = ["# Squeezed probabilities: the calibrated prior (`transform=\"logit\"`), `\"standardize\"`, or both\n",
             __doc__.split("\n\n")[1].replace("\n", " ") + "\n", f"Made by {stamp}.\n", "## Pools\n",
             "| pool | N | positives | 1st-99th percentile of the scores | caveat says squeezed |",
             "|---|---:|---:|---|---|"]
    for p in pools:
        lo, hi = np.quantile(p.scores, [0.01, 0.99])
        sq = any("squeezed" in c for c in be.EvalData(p.scores).caveats())
        lines.append(f"| {p.name} ({p.note}) | {p.scores.size} | {p.truth.mean():.2f} | [{lo:.3f}, {hi:.3f}] | {sq} |")
    lines += ["", "## Coverage / mean width / mean error of the 90% intervals\n",
              "| metric | budget | " + " | ".join(TRANSFORMS) + " |", "|---|---:|" + "---|" * len(TRANSFORMS)]
    g = df.groupby(["metric", "budget", "transform"]).agg(c=("covered", "mean"), w=("width", "mean"),
                                                          e=("err", "mean"), n=("covered", "count"))
    for (m, b), sub in g.groupby(level=[0, 1]):
        sub = sub.droplevel([0, 1])
        cells = [f"{sub.loc[t, 'c']:.2f} / {sub.loc[t, 'w']:.3f} / {sub.loc[t, 'e']:+.3f}" if t in sub.index else ""
                 for t in TRANSFORMS]
        lines.append(f"| {m} | {b} | " + " | ".join(cells) + " |")
    lines += ["", "## AP per pool (coverage / mean width / mean error)\n",
              "| pool | budget | " + " | ".join(TRANSFORMS) + " |", "|---|---:|" + "---|" * len(TRANSFORMS)]
    ap = df[df.metric == "AP"].groupby(["pool", "budget", "transform"]).agg(
        c=("covered", "mean"), w=("width", "mean"), e=("err", "mean"))
    for (p, b), sub in ap.groupby(level=[0, 1]):
        sub = sub.droplevel([0, 1])
        lines.append(f"| {p} | {b} | " + " | ".join(
            f"{sub.loc[t, 'c']:.2f} / {sub.loc[t, 'w']:.3f} / {sub.loc[t, 'e']:+.3f}" for t in TRANSFORMS) + " |")
    lines += ["", "## Every metric, per pool (coverage / mean width)\n",
              "| pool | squeezed | budget | " + " | ".join(TRANSFORMS) + " |", "|---|---|---:|" + "---|" * len(TRANSFORMS)]
    sq = {p.name: any("squeezed" in c for c in be.EvalData(p.scores).caveats()) for p in pools}
    allm = df.groupby(["pool", "budget", "transform"]).agg(c=("covered", "mean"), w=("width", "mean"))
    for (p, b), sub in allm.groupby(level=[0, 1]):
        sub = sub.droplevel([0, 1])
        lines.append(f"| {p} | {sq.get(p, '')} | {b} | " + " | ".join(
            f"{sub.loc[t, 'c']:.2f} / {sub.loc[t, 'w']:.3f}" if t in sub.index else "" for t in TRANSFORMS) + " |")
    only = df[df.pool.map(sq).fillna(False).astype(bool)]
    if len(only):
        g = only.groupby(["budget", "transform"]).agg(c=("covered", "mean"), w=("width", "mean"))
        lines.append("\nThe squeezed pools only (where `transform=\"auto\"` acts), pooled over metrics: " + "; ".join(
            f"{b} labels: " + ", ".join(f"{t} {g.loc[(b, t), 'c']:.3f} covered, {g.loc[(b, t), 'w']:.3f} wide"
                                          for t in TRANSFORMS if (b, t) in g.index)
            for b in sorted(only.budget.unique())) + "; lowest pool: " + ", ".join(
            f"{t} {only[only['transform'] == t].groupby(['pool', 'budget']).covered.mean().min():.2f}" for t in TRANSFORMS
            if (only["transform"] == t).any()) + ".")
    pooled = df.groupby("transform").agg(c=("covered", "mean"), w=("width", "mean"), n=("covered", "count"))
    lines.append("\nPooled over pools, metrics and budgets: " + "; ".join(
        f"{t} {r.c:.2f} covered, mean width {r.w:.3f} ({int(r.n)} intervals)" for t, r in pooled.iterrows()) + ".\n")
    text = "\n".join(lines) + "\n"
    pathlib.Path(out).write_text(text)
    return text


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", type=int, default=10)
    ap.add_argument("--budgets", type=int, nargs="+", default=list(BUDGETS))
    ap.add_argument("--out", default="benchmarks/results/squeezed.md")
    ap.add_argument("--csv", default=None)
    ap.add_argument("--report", nargs="+", default=None, help="write the tables from these rows files only")
    ap.add_argument("--pools", default=None, help="comma-separated pool names (default: all)")
    args = ap.parse_args(argv)
    cmd = "python benchmarks/squeezed.py " + " ".join(argv if argv is not None else sys.argv[1:])
    pools = make_pools()
    if args.pools:
        pools = [p for p in pools if p.name in args.pools.split(",")]
    csv = pathlib.Path(args.csv) if args.csv else pathlib.Path(args.out).with_suffix(".csv")
    if args.report:
        df = pd.concat([pd.read_csv(p, skiprows=1) for p in args.report], ignore_index=True)
        df["transform"] = df["transform"].replace({"auto": "logit"})  # rows made when auto was logit here
        stamp = "; ".join(open(p).readline().strip("# \n") for p in args.report)
        pools = [p for p in make_pools() if p.name in set(df.pool)]
    else:
        stamp = f"`{cmd}` with {R._versions()}"
        for p in pools:
            print(f"{p.name}: N={p.scores.size} scores {np.quantile(p.scores, [0, 0.01, 0.99, 1]).round(3)}", flush=True)
        with open(csv, "w") as fh:
            fh.write(f"# {stamp}\n")
        header = True
        for rep in range(args.sets):
            df = run(pools, args.budgets, 1, first=rep)  # one set at a time, appended
            df.to_csv(csv, mode="a", header=header, index=False)
            header = False
        df = pd.read_csv(csv, skiprows=1)
    print(write_report(df, pools, args.out, stamp))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
