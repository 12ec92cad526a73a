"""Why the joint model mis-ranks `real_digits3_rf_vs_logreg`: what the weights' prior centre does to the gap.

The pair of ``benchmarks/compare.py`` whose random forest is truly better (AP gap +0.017)
but which ``bayeval.compare`` mis-ranks in most label sets. On the whole pool (every
label known), for fixed classifier weights ``w`` the intercept and slope of the joint
logistic curve are fitted by maximum likelihood, labels are drawn from that curve 200
times, and the mean gap in AP and the share of draws where the forest wins are printed:
equal weights (the centre of ``JointCalibration``'s weight prior) against the weights the
full pool fits, and equal weights after standardizing each classifier's feature.

Run::

    python benchmarks/compare_weight_prior.py
"""
import sys, warnings; sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent)); warnings.simplefilter("ignore")
import numpy as np
import compare as C
from bayeval.models.joint import JointCalibration, joint_data
p = [q for q in C.real_pairs() if q.name == "real_digits3_rf_vs_logreg"][0]
for nm, s in (("rf", p.a), ("logreg", p.b)):
    print(nm, "n", s.size, "distinct", np.unique(s).size, "exact 0", np.mean(s == 0).round(3), "exact 1", np.mean(s == 1).round(3),
          "AP", round(float(C.M.average_precision(p.truth[None].astype(np.int8), s)[0]), 4))
f, infos = JointCalibration().features(joint_data({"A": p.a, "B": p.b}, np.full(p.a.size, np.nan)))
for j, nm in enumerate(("rf", "logreg")):
    z = f[:, j, 0]
    print(nm, "feature range", z.min().round(2), z.max().round(2), "feature at positives: median", np.median(z[p.truth == 1]).round(2), "negatives median", np.median(z[p.truth == 0]).round(2), infos[j].get("clip"))
# fitted logistic of truth on each feature alone (full pool): how linear in the logit is each classifier?
from sklearn.linear_model import LogisticRegression
for j, nm in enumerate(("rf", "logreg")):
    z = f[:, j, 0][:, None]
    m = LogisticRegression(C=1e6).fit(z, p.truth)
    print(nm, "full-pool logistic slope", m.coef_.round(3), "intercept", m.intercept_.round(3))
m = LogisticRegression(C=1e6).fit(f[:, :, 0], p.truth); print("joint full-pool coefs", m.coef_.round(3), m.intercept_.round(3))
from scipy.special import expit
rng = np.random.default_rng(0)
y = p.truth
def gap_under(w):
    x = f[:, :, 0] @ np.asarray(w)
    m = LogisticRegression(C=1e6).fit(x[:, None], y)  # a, b fitted on the full pool for these weights
    pr = expit(m.intercept_[0] + m.coef_[0, 0] * x)
    z = (rng.random((200, y.size)) < pr).astype(np.int8)
    g = C.M.average_precision(z, p.a) - C.M.average_precision(z, p.b)
    return round(float(g.mean()), 4), round(float((g > 0).mean()), 3)
print("true gap", round(p.gap, 4))
for w in ((0.5, 0.5), (0.85, 0.15), (1.0, 0.0), (0.0, 1.0), (0.7, 0.3)):
    print("weights", w, "-> mean gap, P(rf better) of labels drawn from that curve:", gap_under(w))
sd = f[:, :, 0].std(axis=0); print("feature sd rf, logreg", sd.round(2))
w = (1 / sd) / (1 / sd).sum(); print("equal weights after standardizing ->", w.round(3), gap_under(w))
