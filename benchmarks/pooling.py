"""Pooled against separate per-category fits: what fitting categories apart changes.

One simulated data set (seed 7): three categories of 400 items (about 10% vetted) and a
rare one of 60 (about 15% vetted), true labels with P(y = 1 | s) = s^1.5. Fits
``Calibration(categories=True)`` (partial pooling across categories, one fit) and
``fit_categories(Calibration())`` (one separate fit per category), 2 chains x 500 draws,
and prints each category's true AP and the 90% equal-tailed interval of its AP under
both, with the fit times. Quoted in ``docs/distributed.md`` ("Pooled models").

Run: ``python benchmarks/pooling.py``.
"""

import argparse

import time
import numpy as np
from bayeval import EvalData
from bayeval.models import Calibration
from bayeval.core.distributed import fit_categories


def main():
    argparse.ArgumentParser(description=__doc__.split("\n")[0]).parse_args()

    rng = np.random.default_rng(7)
    cats, rows = [], []
    sizes = {"c0": 400, "c1": 400, "c2": 400, "rare": 60}
    S, Y, T, C = [], [], [], []
    for name, n in sizes.items():
        s = rng.uniform(size=n); t = (rng.uniform(size=n) < s**1.5).astype(float)
        vet = rng.uniform(size=n) < (0.1 if name != "rare" else 0.15)
        S.append(s); T.append(t); Y.append(np.where(vet, t, np.nan)); C.append(np.repeat(name, n))
    s, t, y, c = map(np.concatenate, (S, T, Y, C))
    data = EvalData(s, y, categories=c)
    kw = dict(draws=500, chains=2, progressbar=False, warn=False)
    t0 = time.time(); pooled = Calibration(categories=True).fit(data, random_seed=0, **kw); tp = time.time() - t0
    ap = pooled.metric("average_precision", category="each")
    t0 = time.time(); sep = fit_categories(Calibration(), data, random_seed=0, **kw); ts = time.time() - t0
    print(f"pooled fit {tp:.1f}s ({pooled.sampler}); unpooled per-category fits {ts:.1f}s")
    print("| category | items (vetted) | true AP | pooled mean [90% interval] width | unpooled mean [90% interval] width |")
    for i, name in enumerate(data.category_names):
        m = c == name
        order = np.argsort(-s[m]); z = t[m][order]
        true_ap = float(np.sum(z * np.cumsum(z) / np.arange(1, z.size + 1)) / z.sum())
        a = ap.sel(category=name).values.ravel(); b = sep[name].metric("average_precision").values.ravel()
        qa, qb = np.quantile(a, [0.05, 0.95]), np.quantile(b, [0.05, 0.95])
        print(f"| {name} | {m.sum()} ({int(np.isfinite(y[m]).sum())}) | {true_ap:.3f} | {a.mean():.3f} [{qa[0]:.3f}, {qa[1]:.3f}] {qa[1]-qa[0]:.3f} | {b.mean():.3f} [{qb[0]:.3f}, {qb[1]:.3f}] {qb[1]-qb[0]:.3f} |")


if __name__ == "__main__":
    main()
