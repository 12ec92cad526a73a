"""Why the joint model mis-ranks `real_digits3_rf_vs_logreg`: what the weights' prior centre does to the gap.

The pair of ``benchmarks/compare.py`` whose random forest is truly better (AP gap +0.017)
but which ``bayeval.compare`` mis-ranks in most label sets. On the whole pool (every
label known), for fixed classifier weights ``w`` the intercept and slope of the joint
logistic curve are fitted by maximum likelihood, labels are drawn from that curve 200
times, and the mean gap in AP and the share of draws where the forest wins are printed:
equal weights (the centre of ``JointCalibration``'s weight prior) against the weights the
full pool fits, and equal weights after standardizing each classifier's feature.

With ``--all`` the same three settings on every pair of ``benchmarks/compare.py`` (the
centre from :func:`bayeval.models.joint.standardized_centre`), one table.

Run::

    python benchmarks/compare_weight_prior.py
    python benchmarks/compare_weight_prior.py --all
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--draws", type=int, default=200, help="label sets drawn per weight setting (default 200)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the label draws (default 0)")
    parser.add_argument("--all", action="store_true", help="every pair of benchmarks/compare.py, one table")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    if args.all:
        print(all_pairs(args.draws, args.seed))
        return

    from scipy.special import expit
    from sklearn.linear_model import LogisticRegression

    import compare as C
    from bayeval.models.joint import JointCalibration, joint_data

    p = next(q for q in C.real_pairs() if q.name == "real_digits3_rf_vs_logreg")
    for name, s in (("rf", p.a), ("logreg", p.b)):
        ap = float(C.M.average_precision(p.truth[None].astype(np.int8), s)[0])
        print(name, "n", s.size, "distinct", np.unique(s).size, "exact 0", np.mean(s == 0).round(3),
              "exact 1", np.mean(s == 1).round(3), "AP", round(ap, 4))
    f, infos = JointCalibration().features(joint_data({"A": p.a, "B": p.b}, np.full(p.a.size, np.nan)))
    y = p.truth
    for j, name in enumerate(("rf", "logreg")):
        z = f[:, j, 0]
        print(name, "feature range", z.min().round(2), z.max().round(2), "feature at positives: median",
              np.median(z[y == 1]).round(2), "negatives median", np.median(z[y == 0]).round(2), infos[j].get("clip"))
    # a logistic of the truth on each feature alone (full pool): how linear in the logit is each classifier?
    for j, name in enumerate(("rf", "logreg")):
        m = LogisticRegression(C=1e6).fit(f[:, j, 0][:, None], y)
        print(name, "full-pool logistic slope", m.coef_.round(3), "intercept", m.intercept_.round(3))
    m = LogisticRegression(C=1e6).fit(f[:, :, 0], y)
    print("joint full-pool coefs", m.coef_.round(3), m.intercept_.round(3))
    rng = np.random.default_rng(args.seed)

    def gap_under(w):
        x = f[:, :, 0] @ np.asarray(w)
        fit = LogisticRegression(C=1e6).fit(x[:, None], y)  # intercept and slope for these weights
        pr = expit(fit.intercept_[0] + fit.coef_[0, 0] * x)
        z = (rng.random((args.draws, y.size)) < pr).astype(np.int8)
        g = C.M.average_precision(z, p.a) - C.M.average_precision(z, p.b)
        return round(float(g.mean()), 4), round(float((g > 0).mean()), 3)

    print("true gap", round(p.gap, 4))
    for w in ((0.5, 0.5), (0.85, 0.15), (1.0, 0.0), (0.0, 1.0), (0.7, 0.3)):
        print("weights", w, "-> mean gap, P(rf better) of labels drawn from that curve:", gap_under(w))
    sd = f[:, :, 0].std(axis=0)
    print("feature sd rf, logreg", sd.round(2))
    w = (1 / sd) / (1 / sd).sum()
    print("equal weights after standardizing ->", w.round(3), gap_under(w))


def all_pairs(draws: int, seed: int) -> str:
    """Mean gap and P(A better) of labels drawn at each weight setting, every pair: a markdown table."""
    import pandas as pd
    from scipy.special import expit
    from sklearn.linear_model import LogisticRegression

    import compare as C
    import real_scores as R
    from bayeval.models.joint import JointCalibration, joint_data, standardized_centre

    rows = []
    for p in C.sim_pairs() + C.real_pairs():
        f, _ = JointCalibration().features(joint_data({"A": p.a, "B": p.b}, np.full(p.a.size, np.nan)))
        x2, y = f[:, :, 0], p.truth
        full = LogisticRegression(C=1e6).fit(x2, y).coef_[0]
        rng = np.random.default_rng(seed)
        row = {"pair": p.name, "true_gap": round(p.gap, 4), "sd_A": x2[:, 0].std().round(2),
               "sd_B": x2[:, 1].std().round(2), "w_A_standardized": standardized_centre(f)[0].round(3),
               "w_A_pool": (full[0] / full.sum()).round(3)}
        for label, w in (("equal", (0.5, 0.5)), ("standardized", standardized_centre(f)),
                         ("pool", full / full.sum())):
            x = x2 @ np.asarray(w)
            fit = LogisticRegression(C=1e6).fit(x[:, None], y)
            pr = expit(fit.intercept_[0] + fit.coef_[0, 0] * x)
            z = (rng.random((draws, y.size)) < pr).astype(np.int8)
            g = C.M.average_precision(z, p.a) - C.M.average_precision(z, p.b)
            row[f"gap_{label}"], row[f"P_{label}"] = round(float(g.mean()), 4), round(float((g > 0).mean()), 3)
        rows.append(row)
    return R._md(pd.DataFrame(rows))


if __name__ == "__main__":
    main()
