"""Is the joint model's gap off the truth because of importance sampling, or because of the model?

On simulated pairs of ``compare.py`` (the joint logistic curve is the right family there: the
scores' logits are normal given the label with a common spread, so the label's log-odds are
linear in them), the same label sets are fitted by the joint logistic candidate with
importance sampling and with NUTS, and with the weights' prior of scale 1 (the default) and
2, and without or with Jeffreys' penalty of the coefficients (``penalty``): the posterior
mean and spread of the AP gap, against the truth.

Run::

    python benchmarks/compare_sampler_check.py --sets 4 --out benchmarks/results/compare_sampler_check.md
"""

from __future__ import annotations

import argparse
import itertools
import pathlib
import sys
import time
import warnings

import numpy as np
import pandas as pd

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import compare as C  # noqa: E402
import real_scores as R  # noqa: E402
from bayeval.compare import Comparison  # noqa: E402
from bayeval.models.joint import JointCalibration, joint_data  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", type=int, default=4)
    ap.add_argument("--budget", type=int, default=30)
    ap.add_argument("--pairs", nargs="+", default=["sim_3.0_1.3_rho0.8", "sim_2.3_1.8_rho0.0"])
    ap.add_argument("--weight-sd", type=float, nargs="+", default=[1.0])
    ap.add_argument("--samplers", nargs="+", default=["importance", "pymc"])
    ap.add_argument("--penalties", nargs="+", default=["none"], help="JointCalibration(penalty=...) to fit")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    pairs = [p for p in C.sim_pairs() + C.real_pairs() if p.name in args.pairs]
    rows = []
    t0 = time.time()
    for rep in range(args.sets):
        for pair in pairs:
            lab = C._labels(pair, args.budget, rep)
            data = joint_data({"A": pair.a, "B": pair.b}, lab)
            for wsd, pen, sampler in itertools.product(args.weight_sd, args.penalties, args.samplers):
                if True:
                    t = time.perf_counter()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        post = JointCalibration("logistic", weight_sd=wsd, penalty=pen).fit(
                            data, draws=C.DRAWS, chains=2, cores=1, random_seed=rep, sampler=sampler,
                            progressbar=False, warn=False)
                    g = Comparison(post).difference("A", "B").values.ravel()
                    lo, hi = C._hdi(g)
                    w = post.idata.posterior["w"].values[..., 0].ravel()
                    rows.append({"pair": pair.name, "rep": rep, "weight_sd": wsd, "penalty": pen, "sampler": post.sampling.sampler,
                                 "true_gap": pair.gap, "mean": float(g.mean()), "sd": float(g.std()), "lo": lo,
                                 "hi": hi, "w_A": float(w.mean()), "b": float(post.idata.posterior["b"].mean()),
                                 "pareto_k": post.sampling.pareto_k, "seconds": time.perf_counter() - t})
                    r = rows[-1]
                    print(f"{pair.name} set {rep} wsd {wsd} {pen} {r['sampler']}: gap {r['mean']:+.3f} sd {r['sd']:.3f} "
                          f"(true {r['true_gap']:+.3f}) w_A {r['w_A']:.2f} b {r['b']:.2f} k {r['pareto_k']:.2f} "
                          f"{r['seconds']:.0f} s", flush=True)
    df = pd.DataFrame(rows)
    df["z"] = (df["mean"] - df["true_gap"]) / df["sd"]
    df["covered"] = (df["lo"] <= df["true_gap"]) & (df["true_gap"] <= df["hi"])
    tab = df.groupby(["pair", "weight_sd", "penalty", "sampler"]).agg(
        true_gap=("true_gap", "first"), mean_gap=("mean", "mean"), sd=("sd", "median"), z_mean=("z", "mean"),
        covered=("covered", "mean"), w_A=("w_A", "mean"), b=("b", "mean"), runs=("z", "size")).round(3)
    text = "\n\n".join([
        "# The joint logistic curve: importance sampling against NUTS, and the weights' prior scale",
        f"Made by `python benchmarks/compare_sampler_check.py {' '.join(argv or sys.argv[1:])}` at git "
        f"{R._git_rev()}; {R._versions()}; {time.time() - t0:.0f} s. {args.budget} random labels, label sets "
        f"0-{args.sets - 1} of `compare.py` (the same sets and seeds). `z`: (posterior mean gap - true gap) / "
        "posterior sd. `w_A`, `b`: posterior means.",
        R._md(tab)])
    print(text)
    if args.out:
        pathlib.Path(args.out).write_text(text + "\n")
        df.to_csv(pathlib.Path(args.out).with_suffix(".csv"), index=False)


if __name__ == "__main__":
    main()
