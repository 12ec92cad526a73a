"""LabelFlip: cost and accuracy of the binned likelihood of unvetted items.

Two measurements, both against the exact (per-item) likelihood in the same run:

1. Cost of one log-density + gradient evaluation (what NUTS pays per leapfrog step)
   at several numbers of items, exact vs binned, as a ratio. This is what fixes
   ``bin_above``: below it the exact likelihood costs about as much as the bins.
2. The posterior: the same data fitted both ways (same seed); for the flip rates and
   for P@K and AP per category, the difference of posterior means in units of the
   exact posterior sd, and the ratio of posterior sds.

Run: ``python benchmarks/label_flip_binning.py`` (``--quick`` for a small version).
Results: ``benchmarks/results/label_flip_binning.md`` (with ``--write``).
"""

from __future__ import annotations

import argparse
import pathlib
import time
import warnings

import numpy as np


def grad_cost(model, repeats: int) -> float:
    f = model.logp_dlogp_function(ravel_inputs=True)
    f.set_extra_values({})
    size = sum(int(np.prod(np.shape(v))) for v in model.initial_point().values())
    x = np.random.default_rng(0).normal(0, 0.3, size)
    f(x)
    best = np.inf
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(repeats):
            f(x)
        best = min(best, (time.perf_counter() - t) / repeats)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--write", action="store_true", help="write results/label_flip_binning.md")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    from bayeval.models.label_flip import LabelFlip, simulate_tags

    lines = []

    def out(text=""):
        print(text, flush=True)
        lines.append(text)

    sizes = (1_000, 5_000) if args.quick else (1_000, 2_000, 5_000, 10_000, 20_000, 50_000)
    out("## Cost of one log-density + gradient (10 categories, 5% vetted)")
    out("")
    out("| items | bins | exact (ms) | binned (ms) | exact / binned |")
    out("|---|---|---|---|---|")
    for n in sizes:
        data, truth = simulate_tags(10, items_per_category=n // 10, random_seed=0)
        k = n // 20
        data = data.with_labels(data.item_ids[:k], truth[:k])
        exact = LabelFlip(binned=False).build(data)
        binned = LabelFlip(binned=True).build(data)
        reps = max(20, 200_000 // n)
        te, tb = grad_cost(exact, reps), grad_cost(binned, reps)
        out(f"| {n:,} | {len(binned.coords['unvetted_bin']):,} | {te * 1e3:.2f} | {tb * 1e3:.2f} | {te / tb:.1f} |")

    n_cat, per = (4, 500) if args.quick else (10, 1_000)
    draws = 300 if args.quick else 1000
    data, truth = simulate_tags(n_cat, items_per_category=per, random_seed=1)
    rng = np.random.default_rng(1)
    pick = rng.choice(data.n_items, size=data.n_items // 20, replace=False)
    data = data.with_labels(data.item_ids[pick], truth[pick])
    fits = {}
    for name, binned in (("exact", False), ("binned", True)):
        t = time.perf_counter()
        fits[name] = LabelFlip(binned=binned).fit(
            data, draws=draws, tune=draws, chains=2, random_seed=5, progressbar=False, warn=False
        )
        fits[name].seconds = time.perf_counter() - t
    out("")
    out(f"## Posterior, exact vs binned ({n_cat} categories x {per:,} items, 5% vetted, 2 x {draws} draws)")
    out("")
    out(f"fit time: exact {fits['exact'].seconds:.0f} s, binned {fits['binned'].seconds:.0f} s")
    out("")
    out("| quantity | max abs(mean diff) / sd | sd ratio binned / exact (range) |")
    out("|---|---|---|")

    def compare(label, a, b):
        a = a.reshape(-1, a.shape[-1]) if a.ndim > 1 else a[:, None]
        b = b.reshape(-1, b.shape[-1]) if b.ndim > 1 else b[:, None]
        z = np.abs(a.mean(0) - b.mean(0)) / a.std(0)
        r = b.std(0) / a.std(0)
        out(f"| {label} | {z.max():.2f} | {r.min():.2f} .. {r.max():.2f} |")

    for rate in ("p_y1_z1", "p_y1_z0"):
        compare(rate, fits["exact"].idata.posterior[rate].values, fits["binned"].idata.posterior[rate].values)
    for metric, kw in (("precision_at_k", {"k": 48}), ("average_precision", {})):
        q = {n: f.metric(metric, category="each", **kw).values for n, f in fits.items()}
        compare(f"{metric} {kw or ''} per category", q["exact"], q["binned"])
    if args.write:
        path = pathlib.Path(__file__).parent / "results" / "label_flip_binning.md"
        head = [
            "# LabelFlip: binned vs exact likelihood of unvetted items",
            "",
            f"Output of `python benchmarks/label_flip_binning.py{' --quick' if args.quick else ''}` "
            "on a shared 2-core machine (times are noisy; the ratios are measured in the same run).",
            "",
        ]
        path.write_text("\n".join(head + lines) + "\n")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
