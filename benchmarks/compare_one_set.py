"""One label set of one pair of ``benchmarks/compare.py``, refitted and taken apart.

For a pair and label set of ``compare.py`` (same label draw, same seed), the gap's
interval of the ``joint_equal`` route under each ``saturated`` map (and ``penalty``),
and for each joint candidate: its sampler and Pareto k, the posterior of ``b * w_k``
(each classifier's coefficient on its score feature), the feature's range, and what
the label draws say of the items where the second classifier is at its ends (exact 1s,
scores within 1e-7 of 0 or 1) against the truth. ``--nuts``: the logistic candidate
alone under importance sampling and under NUTS. ``--separation``: for every label set,
whether each classifier's feature separates the vetted labels, and by how much.

Run (results in ``benchmarks/results/compare_nb_separation.md``)::

    python benchmarks/compare_one_set.py --budget 30 --set 3 --nuts
    python benchmarks/compare_one_set.py --separation
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import bayeval as be  # noqa: E402
from bayeval.compare.comparison import Comparison  # noqa: E402
from bayeval.core import metrics as M  # noqa: E402
from bayeval.models import Stack  # noqa: E402
from bayeval.models.joint import JointCalibration, joint_data  # noqa: E402
import compare as C  # noqa: E402

SETS = (0, 1, 2, 3, 4, 5, 6, 10)  # the label sets of compare_reliability.md's rows of this pair


def _pair(name):
    return next(p for p in C.real_pairs() + C.sim_pairs() if p.name == name)


def _z(g, truth):
    lo, hi = be.hdi(np.asarray(g).ravel(), 0.9)
    return float(np.mean(g)), float(lo), float(hi), float((np.mean(g) - truth) / ((hi - lo) / 3.29))


def _candidate_lines(c, pair, lab) -> list[str]:
    p = c.idata.posterior
    k = c.features.shape[1]
    bw = p["b"].values.reshape(-1, 1) * p["w"].values.reshape(-1, k)
    out = [f"  {c.joint.name}: {c.sampling.sampler}, Pareto k {c.sampling.pareto_k:.2f}; b*w mean "
           f"{bw.mean(0).round(2).tolist()}, 5% {np.quantile(bw, .05, 0).round(2).tolist()}, 95% "
           f"{np.quantile(bw, .95, 0).round(2).tolist()}; B's feature {c.features[:, 1].sum(1).min():.1f} to "
           f"{c.features[:, 1].sum(1).max():.1f}"]
    prob = c._prob(c._flat_params())
    unl = np.isnan(lab)
    s = pair.b
    for nm, m in (("exact 1", s >= 1), ("within 1e-7 of 1", (s < 1) & (s > 1 - 1e-7)), ("within 1e-7 of 0", (s > 0) & (s < 1e-7))):
        m = m & unl
        if m.any():
            pm = prob[:, m].mean(0)
            out.append(f"    B {nm}: {m.sum()} unvetted, {pair.truth[m].sum()} positive, drawn {prob[:, m].sum(1).mean():.1f}; "
                       f"{(pm > .999).sum()} with P > 0.999, {(pm < .001).sum()} with P < 0.001")
    return out


def one_set(pair, budget, rep, saturated, penalty, nuts) -> str:
    lab = C._labels(pair, budget, rep)
    lines = [f"## {pair.name}, {budget} labels, set {rep} (true gap {pair.gap:+.4f})"]
    for sat in saturated:
        for pen in penalty:
            model = Stack(candidates=[JointCalibration(c, weight_centre="equal", saturated=sat, penalty=pen)
                                      for c in ("logistic", "monotone")])
            t = time.perf_counter()
            cmp = be.compare({"A": pair.a, "B": pair.b}, lab, model=model, random_seed=rep, draws=C.DRAWS, warn=False)
            mean, lo, hi, z = _z(cmp.difference("A", "B").values, pair.gap)
            ap = cmp.metric("average_precision").mean(("chain", "draw")).values
            lines.append(f"* saturated={sat}, penalty={pen}: gap {mean:+.4f} [{lo:+.4f}, {hi:+.4f}], z {z:+.1f}; "
                         f"AP drawn A {ap[0]:.4f}, B {ap[1]:.4f} ({time.perf_counter() - t:.0f} s)")
            for c in cmp.posterior.candidates.values():
                lines += _candidate_lines(c, pair, lab)
            if nuts:
                d = joint_data({"A": pair.a, "B": pair.b}, lab)
                for sampler in ("importance", "pymc"):
                    post = JointCalibration("logistic", saturated=sat, penalty=pen).fit(
                        d, sampler=sampler, draws=500, random_seed=rep, warn=False, progressbar=False)
                    mean, lo, hi, z = _z(Comparison(post).difference("A", "B").values, pair.gap)
                    lines.append(f"  logistic alone, {post.sampling.sampler}: gap {mean:+.4f} [{lo:+.4f}, {hi:+.4f}], z {z:+.1f}")
    z = pair.truth[None].astype(np.int8)
    lines.append(f"True AP: A {M.average_precision(z, pair.a)[0]:.4f}, B {M.average_precision(z, pair.b)[0]:.4f}")
    return "\n".join(lines)


def separation(pair, budgets=(30, 100), sets=SETS) -> str:
    """For each label set: does each classifier's logit (B's with exact 1s at its 'apart' end) separate the labels?"""
    feats, _ = JointCalibration("logistic").features(joint_data({"A": pair.a, "B": pair.b}, None))
    f = feats[:, :, 0]
    errors = ((pair.b >= 1) | ((pair.b > 1 - 1e-7))) & (pair.truth == 0) | ((pair.b < 1e-7) & (pair.truth == 1))
    rows = ["| budget | set | positives | A separates (margin) | B separates (margin) | B's confident errors vetted |",
            "|---|---|---|---|---|---|"]
    for budget in budgets:
        for rep in sets:
            lab = C._labels(pair, budget, rep)
            v = ~np.isnan(lab)
            cells = []
            for j in range(2):
                m = f[v & (lab == 1), j].min() - f[v & (lab == 0), j].max()
                cells.append(f"{'yes' if m > 0 else 'no'} ({m:+.1f})")
            rows.append(f"| {budget} | {rep} | {int(lab[v].sum())} | {cells[0]} | {cells[1]} | {int((v & errors).sum())} |")
    return "\n".join(rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pair", default="real_bc_logreg_vs_nb")
    ap.add_argument("--budget", type=int, default=30)
    ap.add_argument("--set", type=int, default=3)
    ap.add_argument("--saturated", nargs="+", default=["apart", "merged"])
    ap.add_argument("--penalty", nargs="+", default=["none"])
    ap.add_argument("--nuts", action="store_true")
    ap.add_argument("--separation", action="store_true")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    pair = _pair(args.pair)
    print(separation(pair) if args.separation else one_set(pair, args.budget, args.set, args.saturated, args.penalty,
                                                          args.nuts))


if __name__ == "__main__":
    main()
