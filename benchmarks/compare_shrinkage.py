"""Why large real gaps come out small: the gap's posterior with a quarter or half of the pool vetted.

On the tabular panel of ``compare.py`` the 90% intervals of ``bayeval.compare`` cover large
true gaps (|gap| >= 0.03 AP) less often than small ones, centred too near 0. This study asks
whether that is the weights' prior (which more labels would overrule) or the model of the
labels itself: for a few pairs with large gaps it vets a random 25% or 50% of the pool (110
to 3,183 labels) and compares the gap's posterior under four models of the labels.

* ``joint_sd0.25``: ``bayeval.compare``'s default (the weights' deviations at scale 0.25);
* ``joint_sd1``: the same at scale 1;
* ``cells_2d``: a model with no curve at all: each item's probability of being positive is
  that of its cell on a grid of both classifiers' score quantiles (B x B cells, each with a
  Beta posterior from the vetted items in it, prior mean the vetted prevalence);
* ``cells_a``: the same with A's quantile bins only.

Every route draws the unvetted items' labels and keeps the vetted ones, as ``compare`` does.
A route whose posterior sits below the true gap with this many labels is biased by its model,
not by its prior.

    python benchmarks/compare_shrinkage.py --out benchmarks/results/compare_shrinkage.md
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time
import warnings

import numpy as np
import pandas as pd
from scipy.stats import rankdata

sys.path.insert(0, str(pathlib.Path(__file__).parent))

import bayeval as be  # noqa: E402
from bayeval.core import metrics as M  # noqa: E402

#: the pairs (of ``compare.tabular_panel()``) and the grid's bins per score for each
PAIRS = {"tab_fair_gt4_logreg_vs_knn": 10, "tab_modechoice_logreg_vs_nb": 6, "tab_diabetes_q4_logreg_vs_knn": 4}
FRACTIONS = (0.25, 0.5)
DRAWS = 500


def _vetted(n: int, frac: float, rep: int) -> np.ndarray:
    rng = np.random.default_rng([rep, 7])
    out = np.zeros(n, dtype=bool)
    out[rng.choice(n, int(frac * n), replace=False)] = True
    return out


def joint_gap(pair, vet: np.ndarray, sd: float, seed: int) -> np.ndarray:
    """Draws of the gap A - B from ``bayeval.compare``'s joint model at weights' scale ``sd``."""
    from bayeval.models import Stack
    from bayeval.models.joint import JointCalibration

    lab = np.where(vet, pair.truth, np.nan)
    model = Stack(candidates=[JointCalibration(c, weight_sd=sd, weight_centre="standardized")
                              for c in ("logistic", "monotone")])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cmp = be.compare({"A": pair.a, "B": pair.b}, lab, model=model, random_seed=seed, draws=DRAWS, warn=False)
    return cmp.difference("A", "B").values.ravel()


def cell_gap(pair, vet: np.ndarray, bins: int, seed: int, both: bool = True, n_draws: int = 2 * DRAWS) -> np.ndarray:
    """Draws of the gap from the grid of score-quantile cells (``both``: A's and B's; else A's only)."""
    rng = np.random.default_rng([seed, 11])
    ba = np.minimum((rankdata(pair.a) / pair.a.size * bins).astype(int), bins - 1)
    cell = ba
    if both:
        bb = np.minimum((rankdata(pair.b) / pair.b.size * bins).astype(int), bins - 1)
        cell = ba * bins + bb
    k = bins * bins if both else bins
    y = pair.truth.astype(np.float64)
    pos = np.bincount(cell[vet], weights=y[vet], minlength=k)
    cnt = np.bincount(cell[vet], minlength=k)
    prev = float(y[vet].mean())
    q = rng.beta(pos[None] + prev, cnt[None] - pos[None] + 1.0 - prev, size=(n_draws, k))
    z = np.tile(pair.truth.astype(np.int8), (n_draws, 1))
    u = ~vet
    z[:, u] = (rng.random((n_draws, int(u.sum()))) < q[:, cell[u]]).astype(np.int8)
    return M.average_precision(z, pair.a) - M.average_precision(z, pair.b)


def run(pairs, reps: int, log=print) -> pd.DataFrame:
    rows = []
    for pair in pairs:
        bins = PAIRS[pair.name]
        for frac in FRACTIONS:
            for rep in range(reps):
                vet = _vetted(pair.truth.size, frac, rep)
                routes = {"joint_sd0.25": (joint_gap, (pair, vet, 0.25, rep), {}),
                          "joint_sd1": (joint_gap, (pair, vet, 1.0, rep), {}),
                          "cells_2d": (cell_gap, (pair, vet, bins, rep), {}),
                          "cells_a": (cell_gap, (pair, vet, bins, rep), {"both": False})}
                for name, (f, f_args, f_kw) in routes.items():
                    t = time.perf_counter()
                    g = f(*f_args, **f_kw)
                    lo, hi = be.hdi(g, 0.9)
                    rows.append({"pair": pair.name, "vetted": frac, "n_vetted": int(vet.sum()), "rep": rep,
                                 "route": name, "true_gap": pair.gap, "mean": float(g.mean()), "lo": float(lo),
                                 "hi": float(hi), "seconds": time.perf_counter() - t})
                log(f"{pair.name} {frac:.0%} rep {rep}: true {pair.gap:+.3f}; "
                    + "; ".join(f"{r['route']} {r['mean']:+.3f} [{r['lo']:+.3f}, {r['hi']:+.3f}]" for r in rows[-4:]))
    df = pd.DataFrame(rows)
    df["covered"] = (df["lo"] <= df["true_gap"]) & (df["true_gap"] <= df["hi"])
    df["share_of_gap"] = df["mean"] / df["true_gap"]
    return df


def table(df: pd.DataFrame) -> pd.DataFrame:
    """Per route and vetted share: the posterior mean as a share of the true gap, and coverage."""
    g = df.groupby(["route", "vetted"])
    return pd.DataFrame({"mean_share_of_gap": g["share_of_gap"].mean(), "lowest_share": g["share_of_gap"].min(),
                         "coverage": g["covered"].mean(), "runs": g.size()}).round(3)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3, help="random vetted sets per pair and share")
    ap.add_argument("--quick", action="store_true", help="one pair, one set (a smoke run)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    import compare as C
    from real_scores import _versions

    panel = {p.name: p for p in C.tabular_panel()}
    names = list(PAIRS)[:1] if args.quick else list(PAIRS)
    t0 = time.time()
    df = run([panel[n] for n in names], 1 if args.quick else args.reps, log=lambda s: print(s, flush=True))
    text = "\n\n".join([
        "# Why large real gaps come out small: the gap's posterior with 25% or 50% of the pool vetted",
        " ".join(__doc__.split("\n\n")[1].split()),
        f"Made by `python benchmarks/compare_shrinkage.py {' '.join(argv or sys.argv[1:])}`; "
        f"{_versions()}; {time.time() - t0:.0f} s. Routes: `joint_sd0.25` (`bayeval.compare`'s default), `joint_sd1` "
        "(weights' scale 1), `cells_2d` (a Beta posterior per cell of both scores' quantile grid), `cells_a` (A's "
        "quantile bins only). Intervals: 90% HDI of each route's draws of the gap.",
        "## The posterior mean as a share of the true gap, and coverage\n\n" + C._md(table(df)),
        "## Every run\n\n" + C._md(df.drop(columns=["seconds"]).round(4).set_index(["pair", "vetted", "rep", "route"])),
    ]) + "\n"
    print(text)
    if args.out:
        pathlib.Path(args.out).write_text(text)
        df.to_csv(pathlib.Path(args.out).with_suffix(".csv"), index=False)


if __name__ == "__main__":
    main()
