"""Why one real pool's default intervals miss: the family, the label sets, and many more label sets.

Three questions about a pool of ``benchmarks/real_scores.py`` (written for ``fair_logreg`` and
``fair_gbm_overfit``, where ``benchmarks/results/label_efficiency.md`` has the default with
random labels below 0.75 coverage):

``family POOL``
    Does a candidate's family hold the pool's truth? The logistic curve on ``logit(score)``,
    an isotonic curve and the monotone candidate's family (piecewise linear in
    ``logit(score)``, knots at the 0.5 / 0.9 / 0.99 quantiles) are fitted by maximum
    likelihood on ALL the pool's labels; labels are drawn from each fitted curve (2,000
    times) and AP, P@K (K = 1% of N), precision and recall at the pool's threshold are
    computed: where the truth falls in that spread (its percentile), and the fitted rate of
    the top 1% and 5% against the true one.
``misses POOL``
    The committed default intervals that miss: which metrics, budgets and label sets, how far
    off-centre, how narrow, and whether the two candidates agree.
``sets POOL``
    What the committed nested label sets' labels say (the random orders of
    ``label_efficiency.py``): share of positives, the maximum-likelihood logistic curve,
    the vetted items' own AP, beside the committed default's AP and whether it covered.
``reproduce POOL --rows CSV``
    A fresh ``label_efficiency.py`` run's rows against the committed ones (same sets and seeds).
``groups POOL --rows CSV --groups N``
    From a nested surrogate run's rows: the per-pool coverage a run with N label sets per pool reads.
``surrogate POOL``
    The logistic candidate's posterior computed on a grid (its prior: ``a ~ Normal(0, 1)``,
    ``log b ~ Normal(0, 1)`` on ``logit(score)``), the unvetted labels drawn from it, 90%
    HDIs of the four metrics: seconds per label set instead of minutes, so that hundreds of
    label sets can be run. ``--mode committed`` uses ``label_efficiency.py``'s nested label
    sets (to check the surrogate against the committed default rows: ``--compare``);
    ``nested`` and ``independent`` new random ones; ``--simtruth`` replaces the pool's
    labels by labels drawn from the scores (a new pool per label set, where "calibrated",
    the prior's centre, is exactly true).

Results: ``benchmarks/results/pool_miss_fair.md``. Run::

    python benchmarks/pool_miss.py family fair_logreg
    python benchmarks/pool_miss.py sets fair_logreg
    python benchmarks/pool_miss.py surrogate fair_logreg --mode committed --sets 16 --draws 400 \\
        --budgets 20 30 50 100 200 --out sur_committed.csv --compare
    python benchmarks/pool_miss.py surrogate fair_logreg --mode independent --sets 200 --draws 400 \\
        --budgets 30 100 --out sur_independent.csv
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import warnings
import zlib

import numpy as np
import pandas as pd

HERE = pathlib.Path(__file__).resolve().parent
RESULTS = HERE / "results"
NAMES = ("AP", "P@K", "precision", "recall")


def _pool(name):
    sys.path.insert(0, str(HERE))
    import real_scores as R

    pools = [p for p in R.make_pools([name]) if p.name == name]
    pools = pools or [p for p in R.make_heldout_pools() if p.name == name]
    if not pools:
        raise SystemExit(f"no pool named {name!r} in benchmarks/real_scores.py")
    return pools[0]


def _logit(s):
    from scipy import special

    return special.logit(np.clip(s, 1e-7, 1 - 1e-7))


class Metrics:
    """AP, P@K, precision and recall at the threshold for label draws (rows) of one pool."""

    def __init__(self, pool):
        self.n = pool.scores.size
        self.k = max(1, round(0.01 * self.n))
        self.order = np.argsort(-pool.scores, kind="stable")
        self.flag = pool.scores >= pool.threshold

    def __call__(self, lab):
        lab = np.atleast_2d(lab)
        ls = lab[:, self.order]
        cum = np.cumsum(ls, 1)
        ap = (cum / np.arange(1, self.n + 1) * ls).sum(1) / np.maximum(ls.sum(1), 1)
        return np.c_[ap, ls[:, :self.k].mean(1), lab[:, self.flag].mean(1),
                     lab[:, self.flag].sum(1) / np.maximum(lab.sum(1), 1)]


def _monotone_ml(x, y):
    """The monotone candidate's family by maximum likelihood: intercept at the median knot,
    segment slopes ``b * exp(delta_k)`` between knots at the 0.5 / 0.9 / 0.99 quantiles."""
    from scipy import optimize, special

    kn = np.quantile(x, (0.5, 0.9, 0.99))
    seg = np.stack([np.clip(x, None, kn[0]) - kn[0], np.clip(x, kn[0], kn[1]) - kn[0],
                    np.clip(x, kn[1], kn[2]) - kn[1], np.clip(x, kn[2], None) - kn[2]])

    def eta(th):
        return th[0] + (np.exp(th[1]) * np.exp(np.r_[0.0, th[2:]])) @ seg

    def nll(th):
        e = eta(th)
        return -(y * -np.logaddexp(0, -e) + (1 - y) * -np.logaddexp(0, e)).sum()

    th = optimize.minimize(nll, np.zeros(5), method="Nelder-Mead",
                           options=dict(maxiter=20000, xatol=1e-6, fatol=1e-6)).x
    return special.expit(eta(th)), np.exp(th[1]) * np.exp(np.r_[0.0, th[2:]])


def family(name):
    from sklearn.isotonic import IsotonicRegression
    from sklearn.linear_model import LogisticRegression

    pool = _pool(name)
    s, y = pool.scores, pool.truth.astype(float)
    met = Metrics(pool)
    x = _logit(s)
    truth = met(y)[0]
    print(f"{name}: N {s.size}, positives {y.mean():.3f}, K {met.k}, threshold {pool.threshold}")
    print("truth: " + ", ".join(f"{m} {v:.3f}" for m, v in zip(NAMES, truth)))
    lr = LogisticRegression(C=1e6, max_iter=1000).fit(x[:, None], y)
    print(f"logistic on all labels: intercept {lr.intercept_[0]:.3f}, slope {lr.coef_[0, 0]:.3f}")
    mono, slopes = _monotone_ml(x, y)
    print("monotone family on all labels: segment slopes " + ", ".join(f"{b:.3f}" for b in slopes))
    curves = {"scores as probabilities": s, "logistic, all labels": lr.predict_proba(x[:, None])[:, 1],
              "monotone family, all labels": mono,
              "isotonic, all labels": IsotonicRegression(out_of_bounds="clip").fit(x, y).predict(x)}
    rng = np.random.default_rng(0)
    print("| curve | " + " | ".join(NAMES) + " |\n|---|" + "---|" * len(NAMES))
    for lab, p in curves.items():
        m = met((rng.random((2000, s.size)) < p).astype(float))
        q = np.quantile(m, [0.05, 0.5, 0.95], axis=0)
        pct = (m < truth).mean(0)
        print(f"| {lab} | " + " | ".join(f"{q[1, j]:.3f} [{q[0, j]:.3f}, {q[2, j]:.3f}], truth at {pct[j]:.2f}"
                                         for j in range(len(NAMES))) + " |")
    o = met.order
    qs = np.quantile(s, np.linspace(0, 1, 11))
    dec = np.clip(np.searchsorted(qs, s, side="right") - 1, 0, 9)
    print("score deciles, mean score / true rate: " + ", ".join(f"{s[dec == i].mean():.2f} / {y[dec == i].mean():.2f}"
                                                               for i in range(10)))
    for top in (met.k, 5 * met.k):
        print(f"top {top}: mean score {s[o[:top]].mean():.3f}, true rate {y[o[:top]].mean():.3f}, "
              + ", ".join(f"{lab} {p[o[:top]].mean():.3f}" for lab, p in curves.items() if lab != "scores as probabilities"))


def sets(name, csvs):
    from sklearn.linear_model import LogisticRegression

    pool = _pool(name)
    s, y = pool.scores, pool.truth.astype(float)
    n, x = s.size, _logit(s)
    res = pd.concat([pd.read_csv(RESULTS / c, skiprows=1) for c in csvs])
    res = res[(res.pool == name) & (res.method == "default/random")]
    rows = []
    for rep in sorted(res.set.unique()):
        order = np.random.default_rng([0, rep, zlib.crc32(name.encode())]).permutation(n)
        for b in sorted(res[res.set == rep].budget.unique()):
            idx = order[:b]
            a = sl = np.nan
            if 0 < y[idx].sum() < b:
                m = LogisticRegression(C=1e6, max_iter=1000).fit(x[idx, None], y[idx])
                a, sl = m.intercept_[0], m.coef_[0, 0]
            o = idx[np.argsort(-s[idx])]
            c = np.cumsum(y[o]) / np.arange(1, b + 1)
            r = res[(res.set == rep) & (res.budget == b)].set_index("metric")
            pk = [m for m in r.index if m.startswith("P@")][0]
            rows.append(dict(set=rep, budget=b, positives=y[idx].mean(), z_positives=(y[idx].sum() - b * y.mean())
                             / np.sqrt(b * y.mean() * (1 - y.mean())), ml_intercept=a, ml_slope=sl,
                             vetted_AP=(c * y[o]).sum() / max(y[o].sum(), 1), default_AP=r.loc["AP", "mean"],
                             AP_covered=r.loc["AP", "covered"], PK_covered=r.loc[pk, "covered"],
                             precision_covered=r.loc["precision", "covered"], recall_covered=r.loc["recall", "covered"]))
    d = pd.DataFrame(rows)
    with pd.option_context("display.width", 200, "display.max_rows", None):
        print(d.round(3).to_string(index=False))
    miss = d.AP_covered.astype(str) == "False"
    print(f"AP missed in {int(miss.sum())} of {len(d)}: median ML slope {d.ml_slope[miss].median():.2f} "
          f"(covered: {d.ml_slope[~miss].median():.2f}), mean |z| of the positives' count "
          f"{d.z_positives[miss].abs().mean():.2f} (covered: {d.z_positives[~miss].abs().mean():.2f}); "
          f"correlation of the default's AP with the vetted items' own AP {np.corrcoef(d.default_AP, d.vetted_AP)[0, 1]:.3f}")
    # are the random orders random? the share of positives among the first b labels over 2,000 orders
    pi = y.mean()
    orders = [np.random.default_rng([0, rep, zlib.crc32(name.encode())]).permutation(n) for rep in range(2000)]
    for b in (20, 50, 100, 200):
        z = np.array([(y[o[:b]].sum() - b * pi) / np.sqrt(b * pi * (1 - pi)) for o in orders])
        print(f"first {b} labels of 2,000 orders: sd of the positives' z {z.std():.2f}, |z| > 2.5 in {(abs(z) > 2.5).mean():.3f}")


def misses(name, csvs):
    """Which of the committed default intervals miss, how (off-centre or narrow), and whether the candidates agree."""
    d = pd.concat([pd.read_csv(RESULTS / c, skiprows=1) for c in csvs])
    d = d[(d.pool == name) & (d.metric != "threshold_rule")]
    x = d[d.method == "default/random"].copy()
    x["cov"] = x.covered.astype(str) == "True"
    x["z"] = (x["mean"] - x.truth) / (x.width / 3.29)  # the centre's distance from the truth, in the interval's sds
    x["rel_w"] = x.width / x.groupby(["budget", "metric"]).width.transform("median")
    m = x[~x["cov"]]
    print(f"{name}: {x.set.nunique()} label sets, {len(x)} intervals, covered {x['cov'].mean():.3f}; "
          f"per set {x.groupby('set')['cov'].mean().round(2).to_dict()}")
    print(f"per budget {x.groupby('budget')['cov'].mean().round(2).to_dict()}")
    print(f"{len(m)} missed, {int((m['mean'] > m.truth).sum())} above the truth; per metric "
          f"{m.metric.value_counts().to_dict()}; per set {m.set.value_counts().sort_index().to_dict()}")
    print(f"median |centre - truth| in the interval's sds: missed {m.z.abs().median():.2f}, covered "
          f"{x[x['cov']].z.abs().median():.2f}; width / the median width of its budget and metric: missed "
          f"{m.rel_w.median():.2f}, covered {x[x['cov']].rel_w.median():.2f}")
    c = d[d.method.isin(["logistic/random", "monotone/random"])]
    piv = c.pivot_table(index=["set", "budget", "metric"], columns="method", values="mean")
    gap = (piv["logistic/random"] - piv["monotone/random"]).abs()
    print(f"the candidates' interval centres differ by {gap.mean():.4f} on average (at most {gap.max():.4f}); "
          f"alone they cover {(c.assign(cv=c.covered.astype(str) == 'True').groupby('method').cv.mean().round(3).to_dict())}")


def _hdi(v, p=0.9):
    v = np.sort(v)
    m = int(np.floor(p * v.size))
    i = np.argmin(v[m:] - v[:v.size - m])
    return v[i], v[i + m]


def surrogate(name, n_sets, budgets, mode, draws, simtruth, out, first_set=0):
    from scipy import special

    pool = _pool(name)
    s, y = pool.scores, pool.truth.astype(float)
    n, x = s.size, _logit(s)
    met = Metrics(pool)
    A = np.linspace(-4, 4, 121)
    LB = np.linspace(-4, 3, 141)
    AA, LBB = np.meshgrid(A, LB, indexing="ij")
    BB = np.exp(LBB)
    logprior = -0.5 * AA**2 - 0.5 * LBB**2
    truth = met(y)[0]
    rows = []
    for rep in range(first_set, first_set + n_sets):
        rng = np.random.default_rng([7, rep])
        if simtruth:
            y = (rng.random(n) < s).astype(float)
            truth = met(y)[0]
        if mode == "committed":
            perm = np.random.default_rng([0, rep, zlib.crc32(name.encode())]).permutation(n)
        else:
            perm = rng.permutation(n)
        for b in budgets:
            idx = perm[:b] if mode != "independent" else rng.choice(n, b, replace=False)
            eta = AA[..., None] + BB[..., None] * x[idx]
            ll = (y[idx] * -np.logaddexp(0, -eta) + (1 - y[idx]) * -np.logaddexp(0, eta)).sum(-1)
            w = np.exp(ll + logprior - (ll + logprior).max())
            g = rng.choice(w.size, draws, p=(w / w.sum()).ravel())
            a, bb = AA.ravel()[g], BB.ravel()[g]
            p = special.expit(a[:, None] + bb[:, None] * x[None])
            lab = (rng.random(p.shape) < p).astype(float)
            lab[:, idx] = y[idx]
            m = met(lab)
            for j, nm in enumerate(NAMES):
                lo, hi = _hdi(m[:, j])
                rows.append(dict(set=rep, budget=b, metric=nm, truth=truth[j], mean=m[:, j].mean(), lo=lo, hi=hi,
                                 covered=bool(lo - 1e-9 <= truth[j] <= hi + 1e-9), width=hi - lo,
                                 positives=y[idx].mean(), post_a=a.mean(), post_b=bb.mean()))
    d = pd.DataFrame(rows)
    print(f"{name}: {mode} label sets {first_set}-{first_set + n_sets - 1}, {draws} draws"
          + (", labels drawn from the scores" if simtruth else ""))
    for col in ("covered", "width"):
        print(f"\n{col} (90% HDI)")
        print(d.pivot_table(index="metric", columns="budget", values=col, aggfunc="mean").round(3))
    print(f"\nmean error\n{d.assign(e=d['mean'] - d.truth).pivot_table(index='metric', columns='budget', values='e').round(3)}")
    print(f"\npooled coverage {d.covered.mean():.3f} over {len(d)} intervals")
    if out:
        d.to_csv(out, index=False)
    return d


def compare(name, d, csvs):
    """The surrogate against the committed default rows, interval by interval."""
    res = pd.concat([pd.read_csv(RESULTS / c, skiprows=1) for c in csvs])
    res = res[(res.pool == name) & (res.method == "default/random") & (res.metric != "threshold_rule")].copy()
    res["metric"] = res.metric.where(~res.metric.str.startswith("P@"), "P@K")
    m = res.merge(d, on=["set", "budget", "metric"], suffixes=("_default", "_surrogate"))
    cov = m.covered_default.astype(str) == "True"
    print(f"\n{len(m)} paired intervals: coverage agrees in {(cov == m.covered_surrogate).sum()}; the default covers "
          f"{cov.sum()}, the surrogate {m.covered_surrogate.sum()}")
    for c in ("mean", "width"):
        diff = m[f"{c}_default"] - m[f"{c}_surrogate"]
        print(f"{c}: correlation {np.corrcoef(m[f'{c}_default'], m[f'{c}_surrogate'])[0, 1]:.3f}, "
              f"mean difference (default - surrogate) {diff.mean():+.4f}, mean absolute {diff.abs().mean():.4f}")


def groups(d, size, reading=0.65):
    """Per-pool coverage (all metrics and budgets) of groups of ``size`` nested label sets: how a
    label-efficiency run with that many sets per pool would read this pool. Consecutive groups, and
    200,000 groups resampled from the sets' own coverages (seeded)."""
    per = d.groupby("set").covered.mean()
    print(f"\n{per.size} nested label sets: per-set coverage mean {per.mean():.3f} (standard error "
          f"{per.std() / np.sqrt(per.size):.3f}); counts per value {per.round(2).value_counts().sort_index().to_dict()}")
    g = per.groupby(np.arange(per.size) // size).mean()
    g = g[per.groupby(np.arange(per.size) // size).size() == size]
    print(f"{g.size} consecutive groups of {size}: per-pool coverage median {g.median():.3f}, "
          f"5-95% [{g.quantile(0.05):.3f}, {g.quantile(0.95):.3f}], below 0.75 in {(g < 0.75).mean():.3f}, "
          f"at most {reading} in {(g <= reading + 1e-9).mean():.3f}")
    r = np.random.default_rng(0).choice(per.to_numpy(), (200_000, size)).mean(1)
    print(f"resampled groups of {size}: below 0.75 in {(r < 0.75).mean():.4f}, at most {reading} in "
          f"{(r <= reading + 1e-9).mean():.4f}; 1% and 5% quantiles {np.quantile(r, 0.01):.3f}, {np.quantile(r, 0.05):.3f}")


def reproduce(name, rows, csvs):
    """A fresh ``label_efficiency.py`` rows file against the committed rows of the same pool and label sets."""
    new = pd.read_csv(rows, skiprows=1)
    old = pd.concat([pd.read_csv(RESULTS / c, skiprows=1) for c in csvs])
    old = old[(old.pool == name) & old.set.isin(new.set.unique())]
    key = ["set", "budget", "method", "metric"]
    m = old.merge(new[new.pool == name], on=key, suffixes=("_old", "_new"))
    m = m[m.metric != "threshold_rule"]
    diff = max(float((m[f"{c}_old"] - m[f"{c}_new"]).abs().max()) for c in ("mean", "lo", "hi"))
    print(f"{len(m)} rows matched on {key}; largest difference of a mean or an interval end: {diff:.3g}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("part", choices=("family", "sets", "misses", "surrogate", "reproduce", "groups"))
    ap.add_argument("pool")
    ap.add_argument("--csv", nargs="+", default=["label_efficiency_A.csv", "label_efficiency_B.csv",
                                                   "label_efficiency_fair_logreg.csv"],
                    help="committed rows (in benchmarks/results/) for `sets` and --compare")
    ap.add_argument("--mode", choices=("committed", "nested", "independent"), default="independent")
    ap.add_argument("--sets", type=int, default=200)
    ap.add_argument("--first-set", type=int, default=0)
    ap.add_argument("--budgets", type=int, nargs="+", default=[30, 100])
    ap.add_argument("--draws", type=int, default=400)
    ap.add_argument("--simtruth", action="store_true", help="labels drawn from the scores, a new pool per set")
    ap.add_argument("--compare", action="store_true", help="with --mode committed: against the committed rows")
    ap.add_argument("--groups", type=int, default=0, help="per-pool coverage of groups of this many nested sets")
    ap.add_argument("--out", default=None, help="the surrogate's rows (csv)")
    ap.add_argument("--rows", default=None, help="for `reproduce`: a fresh label_efficiency.py rows file")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    if args.part == "family":
        family(args.pool)
    elif args.part == "sets":
        sets(args.pool, args.csv)
    elif args.part == "misses":
        misses(args.pool, args.csv)
    elif args.part == "groups":  # from a nested surrogate run's rows (--rows)
        if not args.rows or not args.groups:
            raise SystemExit("groups needs --rows (a surrogate's --out of --mode nested) and --groups N")
        groups(pd.read_csv(args.rows), args.groups)
    elif args.part == "reproduce":
        if not args.rows:
            raise SystemExit("reproduce needs --rows (a rows file from benchmarks/label_efficiency.py)")
        reproduce(args.pool, args.rows, args.csv)
    else:
        d = surrogate(args.pool, args.sets, args.budgets, args.mode, args.draws, args.simtruth, args.out,
                      args.first_set)
        if args.compare:
            compare(args.pool, d, args.csv)
        if args.groups:
            groups(d, args.groups)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
