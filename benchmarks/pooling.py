"""Pooled against separate per-category fits: what fitting categories apart changes.

Simulated data sets (seeds 7, 8, ...): three categories of 400 items (about 10% vetted)
and a rare one of 60 (about 15% vetted), true labels with P(y = 1 | s) = s^1.5; for the
label-flip model, noisy tags that flip a true label with probability 0.15 (positives)
and 0.05 (negatives). For each data set and model, one partially pooled fit across the
categories (``Calibration(categories=True)``, ``LabelFlip(pooling="partial")``) against
one separate fit per category (``fit_categories``, which is what fanning the categories
out to Dask workers does), 2 chains x 500 draws; the 90% equal-tailed interval of each
category's AP under both, its coverage of the true AP over the data sets and its mean
width, and the fit times. Quoted in ``docs/distributed.md`` ("Pooled models").

Run: ``python benchmarks/pooling.py --reps 8 --out benchmarks/results/pooling.md``
(``--models calibration`` or ``label_flip`` for one model; ``--reps 1`` prints the one
data set of seed 7 as before).
"""

import argparse
import pathlib
import subprocess
import time

import numpy as np

from bayeval import EvalData
from bayeval.core.distributed import fit_categories
from bayeval.models import Calibration, LabelFlip

SIZES = {"c0": 400, "c1": 400, "c2": 400, "rare": 60}
MODELS = {
    "calibration": (lambda: Calibration(categories=True), Calibration),
    "label_flip": (lambda: LabelFlip(pooling="partial"), lambda: LabelFlip(pooling="none")),
}


def data_set(seed: int):
    """Scores, true labels, vetted labels, noisy tags and categories of one data set."""
    rng = np.random.default_rng(seed)
    S, Y, T, N, C = [], [], [], [], []
    for name, n in SIZES.items():
        s = rng.uniform(size=n)
        t = (rng.uniform(size=n) < s**1.5).astype(float)
        vet = rng.uniform(size=n) < (0.1 if name != "rare" else 0.15)
        flip = rng.uniform(size=n) < np.where(t == 1, 0.15, 0.05)
        S.append(s), T.append(t), Y.append(np.where(vet, t, np.nan)), N.append(np.where(flip, 1 - t, t))
        C.append(np.repeat(name, n))
    return tuple(map(np.concatenate, (S, T, Y, N, C)))


def true_ap(s, t) -> float:
    z = t[np.argsort(-s)]
    return float(np.sum(z * np.cumsum(z) / np.arange(1, z.size + 1)) / z.sum())


def one(model: str, seed: int) -> list[dict]:
    """Each category's true AP and its 90% interval under the pooled and the separate fits."""
    s, t, y, noisy, c = data_set(seed)
    data = EvalData(s, y, categories=c, noisy_labels=noisy if model == "label_flip" else None)
    make_pooled, make_separate = MODELS[model]
    kw = dict(draws=500, chains=2, progressbar=False, warn=False)
    t0 = time.perf_counter()
    pooled = make_pooled().fit(data, random_seed=seed, **kw)
    t_pooled = time.perf_counter() - t0
    ap = pooled.metric("average_precision", category="each")
    t0 = time.perf_counter()
    sep = fit_categories(make_separate(), data, random_seed=seed, **kw)
    t_sep = time.perf_counter() - t0
    rows = []
    for name in data.category_names:
        m = c == name
        qa = np.quantile(ap.sel(category=name).values.ravel(), [0.05, 0.95])
        qb = np.quantile(sep[name].metric("average_precision").values.ravel(), [0.05, 0.95])
        rows.append(dict(model=model, seed=seed, category=str(name), items=int(m.sum()),
                         vetted=int(np.isfinite(y[m]).sum()), truth=true_ap(s[m], t[m]), pooled=qa, separate=qb,
                         t_pooled=t_pooled, t_separate=t_sep))
    return rows


def table(rows: list[dict]) -> list[str]:
    out = ["| model | category | data sets | pooled: covered, mean width | separate: covered, mean width |",
           "| --- | --- | ---: | --- | --- |"]
    for model in dict.fromkeys(r["model"] for r in rows):
        for cat in SIZES:
            rs = [r for r in rows if r["model"] == model and r["category"] == cat]
            cells = []
            for route in ("pooled", "separate"):
                cov = sum(r[route][0] <= r["truth"] <= r[route][1] for r in rs)
                width = np.mean([r[route][1] - r[route][0] for r in rs])
                cells.append(f"{cov}/{len(rs)}, {width:.3f}")
            out.append(f"| {model} | {cat} | {len(rs)} | {cells[0]} | {cells[1]} |")
        rs = [r for r in rows if r["model"] == model and r["category"] == "c0"]
        out.append(f"| {model} | fit time (mean s) | {len(rs)} | {np.mean([r['t_pooled'] for r in rs]):.1f} "
                   f"| {np.mean([r['t_separate'] for r in rs]):.1f} (4 fits) |")
    return out


def stamp() -> str:
    from bayeval._version import dependency_versions

    root = pathlib.Path(__file__).resolve().parents[1]
    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True)
    versions = ", ".join(f"{k} {v}" for k, v in dependency_versions().items())
    return f"git {rev.stdout.strip() or 'unknown'}; {versions}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=1, help="data sets (seeds 7, 8, ...); default 1")
    ap.add_argument("--models", nargs="+", choices=sorted(MODELS), default=sorted(MODELS))
    ap.add_argument("--out", type=pathlib.Path, default=None, help="write the table here (Markdown)")
    args = ap.parse_args(argv)
    head = stamp()  # the revision the run starts from
    rows = []
    for model in args.models:
        for seed in range(7, 7 + args.reps):
            rows += one(model, seed)
            r = rows[-1]
            print(f"{model} seed {seed}: pooled {r['t_pooled']:.1f} s, separate {r['t_separate']:.1f} s", flush=True)
            if args.reps == 1:
                for r in rows[-len(SIZES):]:
                    print(f"  {r['category']} ({r['items']} items, {r['vetted']} vetted): true AP {r['truth']:.3f}; "
                          f"pooled [{r['pooled'][0]:.3f}, {r['pooled'][1]:.3f}], "
                          f"separate [{r['separate'][0]:.3f}, {r['separate'][1]:.3f}]")
    text = "\n".join(["# Pooled against separate per-category fits", "",
                      f"Output of `python benchmarks/pooling.py --reps {args.reps} --models {' '.join(args.models)}`.",
                      "", head, "", *table(rows), ""])
    print(text)
    if args.out is not None:
        args.out.write_text(text)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
