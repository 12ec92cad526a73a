"""Which classifier is better, and how sure: does ``bayeval.compare`` say it honestly?

Pairs of classifiers that scored the same items, the truth known for every item:

* simulated pairs (``sim_*``): a latent score per classifier, ``d_k * y + rho * shared +
  noise``, given as probabilities; true gaps from 0 to large, the two classifiers'
  errors independent (``rho = 0``) or shared (``rho = 0.8``);
* real pairs (``real_*``): scikit-learn classifiers cross-validated on the same items of
  data bundled with scikit-learn (breast cancer; digits, one digit against the rest).

For each pair and budget, random label sets are drawn and three routes are asked for
the gap in average precision (A - B) on the pool:

``joint``     ``bayeval.compare`` (the default): one label draw per item for both classifiers;
``separate``  ``bayeval.fit`` on each classifier alone, the gap taken between the two
              posteriors' draws (what a user builds by hand);
``bootstrap`` AP of each classifier on the vetted items only, a paired percentile bootstrap.

Reported: the coverage and width of the gap's 90% interval, the mis-ranking rate (the
route's favourite is not the truly better one), the reliability of the stated ``P(A
better)`` in bins, two copies of one classifier, and (``--part active``) the labels a
loop needs to decide a small gap with random, active (``Comparison.select``) and a
disagreement baseline, and (``--part speed``) the cost of comparing 5 models on 10^5
items against one model's fit.

Run (results in ``benchmarks/results/compare.md``)::

    python benchmarks/compare.py --sets 10 --out benchmarks/results/compare.md
    python benchmarks/compare.py --part active --reps 8 --out benchmarks/results/compare_active.md
    python benchmarks/compare.py --part speed --out benchmarks/results/compare_speed.md
"""

from __future__ import annotations

import argparse
import itertools
import pathlib
import sys
import time
import warnings
import zlib
from dataclasses import dataclass

import numpy as np
import pandas as pd

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import bayeval as be  # noqa: E402
from bayeval.core import metrics as M  # noqa: E402
import real_scores as R  # noqa: E402

DRAWS = 250  # per chain, 2 chains


@dataclass
class Pair:
    name: str
    a: np.ndarray
    b: np.ndarray
    truth: np.ndarray
    note: str

    @property
    def gap(self) -> float:
        z = self.truth[None].astype(np.int8)
        return float(M.average_precision(z, self.a)[0] - M.average_precision(z, self.b)[0])


def sim_pair(name, d_a, d_b, rho, n=2000, prevalence=0.2, seed=0) -> Pair:
    rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
    y = (rng.random(n) < prevalence).astype(int)
    shared = rng.normal(0, 1, n)
    noise = np.sqrt(1 - rho ** 2)
    la = d_a * y + rho * shared + noise * rng.normal(0, 1, n) - 1.5
    lb = d_b * y + rho * shared + noise * rng.normal(0, 1, n) - 1.5
    return Pair(name, 1 / (1 + np.exp(-la)), 1 / (1 + np.exp(-lb)), y,
                f"simulated, n={n}, prevalence {prevalence}, separations {d_a} vs {d_b}, shared noise rho={rho}")


def real_pairs() -> list[Pair]:
    from sklearn.datasets import load_breast_cancer, load_digits
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    out = []
    bc = load_breast_cancer()
    xb, yb = bc.data, (bc.target == 0).astype(int)
    lr = R._cv_scores(make_pipeline(StandardScaler(), LogisticRegression(C=0.05, max_iter=2000)), xb, yb,
                      "predict_proba")
    nb = R._cv_scores(GaussianNB(), xb, yb, "predict_proba")
    out.append(Pair("real_bc_logreg_vs_nb", lr, nb, yb, "breast cancer: logistic regression vs Gaussian naive Bayes"))
    dg = load_digits()
    for digit in (8, 3):
        y = (dg.target == digit).astype(int)
        lr = R._cv_scores(make_pipeline(StandardScaler(), LogisticRegression(C=0.05, max_iter=2000)), dg.data, y,
                          "predict_proba")
        nb = R._cv_scores(GaussianNB(), dg.data, y, "predict_proba")
        rf = R._cv_scores(RandomForestClassifier(n_estimators=100, min_samples_leaf=3, random_state=0), dg.data, y,
                          "predict_proba")
        out.append(Pair(f"real_digits{digit}_logreg_vs_nb", lr, nb, y,
                        f"digit {digit} against the rest: logistic regression vs naive Bayes"))
        out.append(Pair(f"real_digits{digit}_rf_vs_logreg", rf, lr, y,
                        f"digit {digit} against the rest: random forest vs logistic regression"))
    return out


def random_pairs(n_pairs: int, seed: int = 0) -> list[Pair]:
    """``n_pairs`` simulated pairs whose settings are drawn at random (separations from
    U(1.5, 3), shared noise rho from U(0, 0.9), prevalence 0.2, 2,000 items): true gaps
    spread over a range instead of sitting at a few fixed values. Over many such pairs,
    one label set each, a ``P(A better)`` whose prior is not far from how the pairs were
    drawn is right about as often as it says in every bin; over a few fixed pairs it need
    not be (a fixed small gap puts its runs in the middle bins whatever the method)."""
    rng = np.random.default_rng([seed, 77])
    out = []
    for i in range(n_pairs):
        d_a, d_b = (round(float(x), 3) for x in rng.uniform(1.5, 3.0, 2))
        rho = round(float(rng.uniform(0.0, 0.9)), 3)
        out.append(sim_pair(f"rnd{i:04d}_{d_a}_{d_b}_rho{rho}", d_a, d_b, rho))
    return out


PANEL_MODELS = ("logreg", "nb", "rf", "knn", "hgb")


def _panel_models() -> dict:
    """The five classifiers of the real panels (fresh, unfitted), by ``PANEL_MODELS`` name."""
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return {"logreg": make_pipeline(StandardScaler(), LogisticRegression(C=0.05, max_iter=2000)),
            "nb": GaussianNB(),
            "rf": RandomForestClassifier(n_estimators=100, min_samples_leaf=3, random_state=0),
            "knn": make_pipeline(StandardScaler(), KNeighborsClassifier(15)),
            "hgb": HistGradientBoostingClassifier(random_state=0)}


def real_panel() -> list[Pair]:
    """Many real pairs, for a reliability table of real classifiers: five scikit-learn
    classifiers (a regularized logistic regression, Gaussian naive Bayes, a random forest,
    15 nearest neighbours, histogram gradient boosting), cross-validated (5 folds) on each of
    11 tasks of bundled data (each digit against the rest; breast cancer), and every pair of
    two of them on the same task: 110 pairs, their true gaps whatever the classifiers make."""
    from sklearn.datasets import load_breast_cancer, load_digits

    bc = load_breast_cancer()
    dg = load_digits()
    tasks = [("bc", bc.data, (bc.target == 0).astype(int))]
    tasks += [(f"digit{d}", dg.data, (dg.target == d).astype(int)) for d in range(10)]
    out = []
    for task, X, y in tasks:
        scores = {name: R._cv_scores(est, X, y, "predict_proba") for name, est in _panel_models().items()}
        for a, b in itertools.combinations(PANEL_MODELS, 2):
            out.append(Pair(f"real_{task}_{a}_vs_{b}", scores[a], scores[b], y, f"{task}: {a} vs {b}"))
    return out


def tabular_panel() -> list[Pair]:
    """A second panel of real pairs, on data that no choice of ``bayeval.compare``'s defaults
    had seen before it decided the weights' prior scale (``compare_sd_prereg.md``): the five classifiers of :func:`real_panel` cross-validated (5 folds) on 12 tasks of
    tabular data bundled with scikit-learn and statsmodels (each wine cultivar against the
    rest; iris versicolor and virginica from all four features; affairs, any and more than 4,
    from statsmodels' 'fair'; the vote in 'anes96'; 8+ doctor visits in 5,000 rows of
    'randhie'; the chosen travel mode in 'modechoice'; diabetes progression above the median
    and in the top quarter): 120 pairs, their true gaps whatever the classifiers make."""
    import statsmodels.api as sm
    from sklearn.datasets import load_diabetes, load_iris, load_wine

    wn, ir, db = load_wine(), load_iris(), load_diabetes()
    tasks = [(f"wine{c}", wn.data, (wn.target == c).astype(int)) for c in range(3)]
    tasks += [(f"iris{c}", ir.data, (ir.target == c).astype(int)) for c in (1, 2)]
    fair = sm.datasets.fair.load_pandas().data
    xf = fair.drop(columns="affairs").to_numpy(float)
    tasks += [("fair_any", xf, (fair["affairs"] > 0).to_numpy(int)), ("fair_gt4", xf, (fair["affairs"] > 4).to_numpy(int))]
    an = sm.datasets.anes96.load_pandas().data
    tasks.append(("anes96", an.drop(columns=["vote"]).to_numpy(float), an["vote"].to_numpy(int)))
    rh = sm.datasets.randhie.load_pandas().data
    rh = rh.iloc[np.random.default_rng(11).choice(len(rh), 5000, replace=False)]
    tasks.append(("randhie", rh.drop(columns="mdvis").to_numpy(float), (rh["mdvis"] >= 8).to_numpy(int)))
    mc = sm.datasets.modechoice.load_pandas().data
    xm = np.column_stack([mc[["ttme", "invc", "invt", "gc", "hinc", "psize"]].to_numpy(float),
                          np.eye(4)[mc["mode"].to_numpy(int) - 1]])
    tasks.append(("modechoice", xm, mc["choice"].to_numpy(int)))
    tasks += [("diabetes_half", db.data, (db.target > np.median(db.target)).astype(int)),
              ("diabetes_q4", db.data, (db.target > np.quantile(db.target, 0.75)).astype(int))]
    out = []
    for task, X, y in tasks:
        scores = {name: R._cv_scores(est, X, y, "predict_proba") for name, est in _panel_models().items()}
        for a, b in itertools.combinations(PANEL_MODELS, 2):
            out.append(Pair(f"tab_{task}_{a}_vs_{b}", scores[a], scores[b], y, f"{task}: {a} vs {b}"))
    return out


def _with_time_limit(route, seconds):
    """``route`` that gives up after ``seconds`` (SIGALRM; the main thread of a POSIX
    process): the row then has no interval and ``timeout`` set, and the tables leave it out
    and count it."""
    import signal

    def limited(pair, lab, seed):
        def stop(signum, frame):
            raise TimeoutError

        old = signal.signal(signal.SIGALRM, stop)
        signal.alarm(int(seconds))
        try:
            return {**route(pair, lab, seed), "timeout": False}
        except TimeoutError:
            return {"p": np.nan, "mean": np.nan, "lo": np.nan, "hi": np.nan, "timeout": True}
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
    return limited


def sim_pairs() -> list[Pair]:
    out = []
    for rho in (0.0, 0.8):
        for d_a, d_b in ((2.0, 2.0), (2.3, 1.8), (3.0, 1.3)):
            out.append(sim_pair(f"sim_{d_a}_{d_b}_rho{rho}", d_a, d_b, rho))
    return out


# ------------------------------------------------------------------ the routes


def _labels(pair: Pair, budget: int, rep: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng([seed, budget, rep, zlib.crc32(pair.name.encode())])
    while True:  # a label set with both classes (every route needs one of each)
        idx = rng.choice(pair.truth.size, budget, replace=False)
        if 0 < pair.truth[idx].sum() < budget:
            break
    lab = np.full(pair.truth.size, np.nan)
    lab[idx] = pair.truth[idx]
    return lab


def _hdi(g):
    lo, hi = be.hdi(np.asarray(g).ravel(), 0.9)
    return float(lo), float(hi)


def _gap_of(cmp):
    g = cmp.difference("A", "B").values.ravel()
    cands = list(getattr(cmp.posterior, "candidates", {"one": cmp.posterior}).values())
    ks = [c.sampling.pareto_k for c in cands if c.sampling.sampler == "importance"]
    return {"p": float((g > 0).mean() + 0.5 * (g == 0).mean()), "mean": float(g.mean()), **dict(zip(("lo", "hi"), _hdi(g))),
            "nuts": sum(c.sampling.sampler != "importance" for c in cands),
            "max_pareto_k": float(max(ks)) if ks else float("nan")}


def route_joint(pair, lab, seed):
    return _gap_of(be.compare({"A": pair.a, "B": pair.b}, lab, random_seed=seed, draws=DRAWS, warn=False))


def _joint_route(weights, weight_sd=1.0, **prior):
    """``bayeval.compare`` with the joint models' weights of that kind (logistic and monotone, stacked).

    ``weight_sd`` a tuple: one candidate per curve and scale, all stacked (the data weigh the scales)."""
    from bayeval.models import Stack
    from bayeval.models.joint import JointCalibration

    sds = weight_sd if isinstance(weight_sd, tuple) else (weight_sd,)

    def route(pair, lab, seed):
        model = Stack(candidates=[JointCalibration(c, weights=weights, weight_sd=sd, **prior)
                                  for sd in sds for c in ("logistic", "monotone")])
        return _gap_of(be.compare({"A": pair.a, "B": pair.b}, lab, model=model, random_seed=seed, draws=DRAWS,
                                  warn=False))
    return route


def route_separate(pair, lab, seed):
    ap = []
    for s in (pair.a, pair.b):
        post = be.fit(be.EvalData(s, lab), random_seed=seed, draws=DRAWS, warn=False)
        ap.append(post.metric("average_precision", progressbar=False).values.ravel())
    g = ap[0] - ap[1]
    return {"p": float((g > 0).mean() + 0.5 * (g == 0).mean()), "mean": float(g.mean()), **dict(zip(("lo", "hi"), _hdi(g)))}


def route_bootstrap(pair, lab, seed, n_boot=300):
    vet = np.flatnonzero(~np.isnan(lab))
    y = lab[vet].astype(np.int8)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, vet.size, (n_boot, vet.size))
    sa, sb = pair.a[vet], pair.b[vet]
    g = np.array([M.average_precision(y[i][None], sa[i])[0] - M.average_precision(y[i][None], sb[i])[0] for i in idx])
    g = g[np.isfinite(g)]
    point = float(M.average_precision(y[None], pair.a[vet])[0] - M.average_precision(y[None], pair.b[vet])[0])
    lo, hi = np.quantile(g, [0.05, 0.95])
    return {"p": float((g > 0).mean() + 0.5 * (g == 0).mean()), "mean": point, "lo": float(lo), "hi": float(hi)}


ROUTES = {"joint": route_joint, "joint_simplex": _joint_route("simplex"), "joint_sd0.5": _joint_route("signed", 0.5),
          "joint_sd2": _joint_route("signed", 2.0),
          "joint_jeffreys": _joint_route("signed", 1.0, penalty="jeffreys"),
          "joint_auto": _joint_route("signed", 1.0, penalty="auto"),
          "joint_shared": _joint_route("signed", 1.0, slopes="shared"), "joint_each": _joint_route("signed", 1.0, slopes="each"),
          "joint_equal": _joint_route("signed", 1.0, weight_centre="equal"),
          "joint_std": _joint_route("signed", 1.0, weight_centre="standardized"),
          "joint_std_sd0.5": _joint_route("signed", 0.5, weight_centre="standardized"),
          "joint_std_sd0.25": _joint_route("signed", 0.25, weight_centre="standardized"),
          "joint_std_sd0.125": _joint_route("signed", 0.125, weight_centre="standardized"),
          "joint_std_sdmix": _joint_route("signed", (0.25, 1.0), weight_centre="standardized"),
          "joint_std_t3": _joint_route("signed", 0.25, weight_centre="standardized", weight_df=3.0),
          "joint_std_t1": _joint_route("signed", 0.25, weight_centre="standardized", weight_df=1.0),
          "joint_std_sd0.25_flatauto": _joint_route("signed", 0.25, weight_centre="standardized",
                                                    asymptotes="auto"),
          "separate": route_separate, "bootstrap": route_bootstrap}
for _a in (1.0, 2.0, 2.5, 3.0, 5.0):
    for _b in (1.0, 1.5, 2.0):
        ROUTES[f"joint_a{_a:g}_b{_b:g}"] = _joint_route("signed", 1.0, intercept_sd=_a, slope_sd=_b)


FIVE = (1.3, 1.8, 2.0, 2.3, 3.0)  # the separations of the five classifiers of ``--part five``
#: ``--part five``'s routes: segment slopes per classifier or shared; ``_std``: the weights'
#: prior centred on standardized features (``JointCalibration(weight_centre="standardized")``);
#: ``_sd0.25``: its deviations at scale 0.25 (``bayeval.compare``'s default for five classifiers)
FIVE_ROUTES = ("joint_each", "joint_shared", "joint_shared_std", "joint_shared_std_sd0.25")


def five_pool(rho: float, n: int = 2000, prevalence: float = 0.2, seed: int = 0) -> tuple[dict, np.ndarray]:
    """Five simulated classifiers of one pool (as :func:`sim_pair`, separations ``FIVE``)."""
    rng = np.random.default_rng([seed, 5, int(rho * 10)])
    y = (rng.random(n) < prevalence).astype(int)
    shared = rng.normal(0, 1, n)
    noise = np.sqrt(1 - rho ** 2)
    scores = {f"m{k}": 1 / (1 + np.exp(-(d * y + rho * shared + noise * rng.normal(0, 1, n) - 1.5)))
              for k, d in enumerate(FIVE)}
    return scores, y


def run_five(budgets, n_sets, routes, log=print) -> pd.DataFrame:
    """Five classifiers compared at once (``--part five``): each route's 90% interval of
    every classifier's gap to every other, its P(better), and whether its candidates fell
    back to NUTS, on the same label sets."""
    from bayeval.models import Stack
    from bayeval.models.joint import JointCalibration

    rows = []
    for rep in range(n_sets):
        for rho in (0.0, 0.8):
            scores, y = five_pool(rho)
            z = y[None].astype(np.int8)
            ap = {k: float(M.average_precision(z, s)[0]) for k, s in scores.items()}
            pair = Pair(f"five_rho{rho}", scores["m0"], scores["m1"], y, "")
            for budget in budgets:
                lab = _labels(pair, budget, rep)
                for rname in routes:
                    slopes = "shared" if "shared" in rname else "each"
                    centre = "standardized" if "_std" in rname else "equal"
                    sd = 0.25 if rname.endswith("_sd0.25") else 1.0
                    model = Stack(candidates=[JointCalibration(c, slopes=slopes, weight_centre=centre, weight_sd=sd)
                                              for c in ("logistic", "monotone")])
                    t = time.perf_counter()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        cmp = be.compare(scores, lab, model=model, random_seed=rep, draws=DRAWS, warn=False)
                        nuts = sum(c.sampling.sampler != "importance" for c in cmp.posterior.candidates.values())
                        ks = [c.sampling.pareto_k for c in cmp.posterior.candidates.values()
                              if c.sampling.sampler == "importance"]
                        for a, b in itertools.combinations(scores, 2):
                            g = cmp.difference(b, a).values.ravel()
                            rows.append({"pair": f"five_rho{rho}_{b}-{a}", "budget": budget, "rep": rep, "route": rname,
                                         "true_gap": ap[b] - ap[a], "p": float((g > 0).mean() + 0.5 * (g == 0).mean()),
                                         "mean": float(g.mean()), **dict(zip(("lo", "hi"), _hdi(g))),
                                         "nuts": nuts, "max_pareto_k": max(ks) if ks else float("nan"),
                                         "seconds": time.perf_counter() - t})
                    log(f"set {rep} rho {rho} budget {budget} {rname}: {time.perf_counter() - t:.1f} s, "
                        f"{nuts} candidate(s) on NUTS")
    return _finish(pd.DataFrame(rows))


def flat_fires(pair: Pair, lab: np.ndarray) -> bool:
    """Whether ``asymptotes="auto"`` gives the joint curve flat ends on this label set."""
    from bayeval.models.joint import JointCalibration, joint_data

    return JointCalibration(asymptotes="auto").asymptotes_for(joint_data({"A": pair.a, "B": pair.b}, lab))


def separation_of(pair: Pair, lab: np.ndarray) -> str:
    """How the vetted labels of ``lab`` are separable by the pair's features
    (:func:`bayeval.models.joint.separation`: ``"0"`` / ``"1"`` by A's / B's feature alone,
    ``"linear"`` by a line through both), ``"none"`` when they are not: where
    ``penalty="auto"`` applies Jeffreys' penalty."""
    from bayeval.models.joint import JointCalibration, joint_data

    jc = JointCalibration(penalty="auto")
    return jc._prepared(joint_data({"A": pair.a, "B": pair.b}, lab))["separation"] or "none"


def run_pairs(pairs, budgets, n_sets, log=print, routes=ROUTES, partial=None, first_set=0,
              separable_only=False, flat_only=False) -> pd.DataFrame:
    """Every route on the pairs' label sets. With both ``joint_equal`` and ``joint_auto`` asked
    for, ``joint_auto`` on a label set that is not separable is the same model with the same
    seed as ``joint_equal`` (no penalty): its row is a copy (``reused``), not a second fit.
    ``separable_only``: only the label sets that are separable (where the two differ).
    ``flat_only``: only the label sets where ``JointCalibration(asymptotes="auto")`` fits flat
    ends (separable, with ``FLAT_MIN_CLASS`` of each class): elsewhere its route is the
    default's model with the default's seed, so the default's rows stand for it."""
    rows = []
    for rep in range(first_set, first_set + n_sets):  # sets outermost: an interrupted run is balanced over pairs
        for pair in pairs:
            gap = pair.gap
            for budget in budgets:
                lab = _labels(pair, budget, rep)
                sep = separation_of(pair, lab)
                if separable_only and sep == "none":
                    continue
                if flat_only and not flat_fires(pair, lab):
                    continue
                done = {}
                for rname, route in routes.items():
                    t = time.perf_counter()
                    if rname == "joint_auto" and sep == "none" and "joint_equal" in done:
                        r = {**done["joint_equal"], "reused": True}
                    else:
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            r = route(pair, lab, rep)
                    done[rname] = r
                    rows.append({"pair": pair.name, "budget": budget, "rep": rep, "route": rname, "true_gap": gap,
                                 "separation": sep, "n_pos": int(np.nansum(lab)), **r,
                                 "seconds": time.perf_counter() - t})
                if partial:  # what is done so far survives an interrupted run
                    pd.DataFrame(rows).to_csv(partial, index=False)
                log(f"{pair.name} n={budget} set {rep}: gap {gap:+.3f}; "
                    + "; ".join(f"{x['route']} P={x['p']:.2f} [{x['lo']:+.3f}, {x['hi']:+.3f}]" for x in rows[-len(routes):]))
    return _finish(pd.DataFrame(rows))


#: gaps and interval ends are sums of floats computed in different orders: a true gap within
#: this of an interval's end is inside it, and a true gap within this of 0 is a tie
_FLOAT_TOL = 1e-9


def _finish(df: pd.DataFrame) -> pd.DataFrame:
    """The derived columns of the runs' rows.

    A posterior of the gap can hold a point mass at the true gap (every unvetted label drawn
    as it is), and the interval then ends there: the true gap and that end agree to rounding
    (``_FLOAT_TOL``), and the run counts as covered."""
    df["true_gap"] = df["true_gap"].where(df["true_gap"].abs() > _FLOAT_TOL, 0.0)
    df["covered"] = (df["lo"] - _FLOAT_TOL <= df["true_gap"]) & (df["true_gap"] <= df["hi"] + _FLOAT_TOL)
    df["width"] = df["hi"] - df["lo"]
    df["a_better"] = df["true_gap"] > 0
    # mis-ranked: the route's favourite is the truly worse one (pairs with a true gap of 0 are left out)
    df["misranked"] = np.where(df["true_gap"] == 0, np.nan, (df["p"] > 0.5) != df["a_better"])
    return df


def identical(budgets, n_sets, log=print, centres=(None,)) -> pd.DataFrame:
    """Two copies of one classifier: P(A better) and the ROPE probability (``centres``: the
    weights' prior centres to run, None = ``bayeval.compare``'s default)."""
    from bayeval.models import Stack
    from bayeval.models.joint import JointCalibration

    pair = real_pairs()[1]
    rows = []
    for centre in centres:
        model = "default" if centre is None else Stack(candidates=[
            JointCalibration(c, weight_centre=centre) for c in ("logistic", "monotone")])
        for budget in budgets:
            for rep in range(n_sets):
                lab = _labels(pair, budget, rep)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    cmp = be.compare({"A": pair.a, "copy": pair.a.copy()}, lab, model=model, random_seed=rep,
                                     draws=DRAWS, warn=False)
                rows.append({"centre": centre or "default", "budget": budget, "rep": rep,
                             "p_better": cmp.prob_better("A", "copy"),
                             "p_rope_0.005": cmp.rope("A", "copy", width=0.005)})
    log(f"identical copies: {pd.DataFrame(rows).groupby('centre')[['p_better', 'p_rope_0.005']].mean().to_dict()}")
    return pd.DataFrame(rows)


# ------------------------------------------------------------------ tables


def interval_score(df: pd.DataFrame, alpha: float = 0.1) -> pd.Series:
    """Each run's interval score of its 90% interval: its width plus 2/alpha times the distance
    from the interval to the true gap (0 inside). Lower is better: it rewards a narrow
    interval and charges a miss by how far it misses, so an honest and informative route
    scores lowest."""
    out = np.maximum(df["lo"] - df["true_gap"], 0) + np.maximum(df["true_gap"] - df["hi"], 0)
    return (df["hi"] - df["lo"]) + (2.0 / alpha) * out


def coverage_table(df: pd.DataFrame, by) -> pd.DataFrame:
    g = df.assign(interval_score=interval_score(df)).groupby(by, observed=True)
    return pd.DataFrame({"coverage": g["covered"].mean(), "width": g["width"].median(),
                         "interval_score": g["interval_score"].mean(),
                         "misranked": g["misranked"].mean(), "runs": g.size()}).round(3)


def with_vetted_positives(df: pd.DataFrame, pairs) -> pd.DataFrame:
    """``df`` with ``n_pos``, the vetted positives of each run's label set (recomputed from the
    seeded label sets where a row has none: rows made before the column existed)."""
    by_name = {p.name: p for p in pairs}
    df = df.copy()
    if "n_pos" not in df:
        df["n_pos"] = np.nan
    miss = df["n_pos"].isna() & df["pair"].isin(by_name)
    if not miss.any():  # (an empty list cannot be set into an int column)
        return df
    df.loc[miss, "n_pos"] = [int(np.nansum(_labels(by_name[r.pair], int(r.budget), int(r.rep))))
                             for r in df[miss].itertuples()]
    return df


def positives_table(df: pd.DataFrame, bins=(0, 2, 4, 9, np.inf)) -> pd.DataFrame:
    """Coverage, width and mis-ranking by route and the number of vetted positives of the label set."""
    d = df.dropna(subset=["n_pos"]).copy()
    d["vetted_positives"] = pd.cut(d["n_pos"], bins, labels=[f"{a + 1:g}-{b:g}" if np.isfinite(b) else f"{a + 1:g}+"
                                                           for a, b in zip(bins[:-1], bins[1:], strict=True)])
    return coverage_table(d, ["route", "vetted_positives"])


def reliability(df: pd.DataFrame, bins=(0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0)) -> pd.DataFrame:
    """Stated P(A better) in bins against the share of runs where A is truly better."""
    d = df[df["true_gap"] != 0].copy()
    d["bin"] = pd.cut(d["p"], bins, include_lowest=True)
    g = d.groupby(["route", "bin"], observed=True)
    out = pd.DataFrame({"stated": g["p"].mean(), "observed": g["a_better"].mean(), "runs": g.size()})
    out["observed_minus_stated"] = out["observed"] - out["stated"]
    return out.round(3)


def reliability_both_ways(df: pd.DataFrame, bins=(0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0)) -> pd.DataFrame:
    """:func:`reliability` with every run counted twice, once as stated and once with A and B swapped.

    Which classifier is called A is arbitrary, and 10 of the 11 pairs have A truly better:
    read one way, a bin of stated P(A better) below 0.5 holds mostly runs where A is in fact
    better whatever the method. Counted both ways the table is symmetric about 0.5 and a
    bin's ``observed`` is the share of runs in it whose stated favourite is truly better.
    """
    d = df[df["true_gap"] != 0]
    flipped = d.assign(p=1.0 - d["p"], a_better=~d["a_better"].astype(bool))
    return reliability(pd.concat([d, flipped], ignore_index=True), bins)


def location_table(df: pd.DataFrame) -> pd.DataFrame:
    """Where the gap's posterior sits against the truth: ``z = (posterior mean - true gap) / sd``
    (``sd`` from the 90% interval's width, as if normal), by route, kind and budget.

    ``z_mean``: the runs' mean z (0 for an unbiased posterior); ``z_sd``: the spread of z
    over all runs (1 for intervals of the right width); ``z_sd_within``: the spread after each
    pair's own mean z is taken out (what is left when the location errors, which differ from
    pair to pair, are removed); ``pair_bias_sd``: the spread of the pairs' mean z (0 when no
    pair is systematically off). A ``z_sd`` above 1 with ``z_sd_within`` near 1 says the
    intervals have the right width but sit off the truth, by an amount that depends on the
    pair (a prior's pull), not that they are too narrow (an approximation's).
    """
    d = df[df["true_gap"] != 0].copy()
    d["z"] = (d["mean"] - d["true_gap"]) / ((d["hi"] - d["lo"]) / (2 * 1.6449))
    d["z_within"] = d["z"] - d.groupby(["route", "pair", "budget"])["z"].transform("mean")
    g = d.groupby(["route", "kind", "budget"])
    pair_means = d.groupby(["route", "kind", "budget", "pair"])["z"].mean().groupby(["route", "kind", "budget"])
    return pd.DataFrame({"z_mean": g["z"].mean(), "z_sd": g["z"].std(), "z_sd_within": g["z_within"].std(),
                         "pair_bias_sd": pair_means.std(), "runs": g.size()}).round(2)


def reliability_reference(df: pd.DataFrame, n_rep: int = 200, seed: int = 0, pair_bias: bool = False) -> pd.DataFrame:
    """:func:`reliability_both_ways` of an ideal posterior on the same runs: for each run a
    normal posterior of the run's own spread (from its 90% interval), centred on a draw
    around the true gap with that spread (right width, no bias), ``n_rep`` times.

    What a calibrated posterior would show on these pairs: fixed pools with a small gap fill
    the middle bins, and a favourite there is right only a little more often than not
    whatever the method, so the reference's bins need not match their stated values.

    ``pair_bias``: centred instead on the true gap plus each pair's (and budget's) mean
    location error of the runs (:func:`location_table`'s z, in units of the run's spread), the
    spread around it that of the runs' z within their pair: what the route's own location
    errors, and nothing else, would do to the bins.
    """
    from scipy.stats import norm

    d = df[df["true_gap"] != 0]
    sd = ((d["hi"] - d["lo"]) / (2 * 1.6449)).to_numpy()
    shift, spread = np.zeros(len(d)), np.ones(len(d))
    if pair_bias:
        z = (d["mean"] - d["true_gap"]) / ((d["hi"] - d["lo"]) / (2 * 1.6449))
        keys = [d[c] for c in ("route", "pair", "budget")]
        shift = z.groupby(keys).transform("mean").to_numpy()
        spread = (z - shift).groupby(d["route"]).transform("std").to_numpy()
    rng = np.random.default_rng(seed)
    reps = [d.assign(p=norm.cdf((d["true_gap"].to_numpy() + sd * (shift + spread * rng.normal(size=len(d)))) / sd))
            for _ in range(n_rep)]
    out = reliability_both_ways(pd.concat(reps, ignore_index=True))
    out["runs"] = (out["runs"] / n_rep).round(1)
    return out


def _md(df: pd.DataFrame) -> str:
    return R._md(df)


def main_five(args, argv, rev, versions) -> str:
    """``--part five``: the monotone joint curve's segment slopes per classifier or shared, five classifiers."""
    t0 = time.time()
    routes = [r for r in args.routes if r in FIVE_ROUTES] or ["joint_each", "joint_shared"]
    df = run_five(args.budgets, args.sets, routes, log=lambda s: print(s, flush=True))
    if args.out:
        df.to_csv(pathlib.Path(args.out).with_suffix(".csv"), index=False)
    fits = df.drop_duplicates(["pair", "budget", "rep", "route"]).copy()
    fits["pool"] = fits["pair"].str.split("_m").str[0]
    per_fit = fits.drop_duplicates(["pool", "budget", "rep", "route"]).groupby(["route", "budget"])
    speed = pd.DataFrame({"fits": per_fit.size(), "candidates_on_nuts": per_fit["nuts"].sum(),
                          "largest_pareto_k": per_fit["max_pareto_k"].max().round(2),
                          "median_seconds": per_fit["seconds"].median().round(1)})
    return "\n\n".join([
        "# Five classifiers compared at once: the monotone joint curve's segment slopes",
        f"Made by `python benchmarks/compare.py {' '.join(argv or sys.argv[1:])}` at git {rev}; {versions}; "
        f"{time.time() - t0:.0f} s. Five simulated classifiers (separations {FIVE}, n = 2000, prevalence 0.2, "
        "shared noise rho 0 or 0.8) compared by `bayeval.compare` with its two stacked joint candidates, the "
        "monotone one's segment slopes one set per classifier (`joint_each`) or one set shared "
        "(`joint_shared`; `joint_shared_std`: with the weights' prior centred on standardized features; "
        "`joint_shared_std_sd0.25`: and its deviations at scale 0.25, `bayeval.compare`'s default); the same "
        "label sets and seeds for every route. Every one of the 10 gaps of a fit is a row "
        "(the 10 gaps of one fit are not independent). Intervals are 90% HDIs; width: median.",
        "## Coverage, width and mis-ranking of the gaps\n\n" + _md(coverage_table(df, ["route", "budget"])),
        "## Reliability of the stated P(better)\n\n" + _md(reliability(df)),
        "## Fits that fell back to NUTS, and time per fit (wall-clock, shared machine)\n\n" + _md(speed),
    ])


def _centres(routes) -> tuple:
    """The weights' prior centres the two-copies part runs: those of the routes asked for, else the default."""
    out = tuple(c for r, c in (("joint_equal", "equal"), ("joint_std", "standardized")) if r in routes)
    return out or (None,)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=("pairs", "active", "speed", "five"), default="pairs")
    ap.add_argument("--sets", type=int, default=10)
    ap.add_argument("--budgets", type=int, nargs="+", default=[30, 100])
    ap.add_argument("--reps", type=int, default=8)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--random-pairs", type=int, default=0, metavar="N",
                    help="instead of the fixed pairs: N simulated pairs with random settings (random_pairs), "
                         "for the reliability of P(A better); use with --sets 1")
    ap.add_argument("--first-pair", type=int, default=0,
                    help="with --random-pairs or --real-panel: the first pair's number")
    ap.add_argument("--real-panel", type=int, default=0, metavar="N",
                    help="instead of the fixed pairs: N pairs (from --first-pair) of real_panel()'s 110 real pairs; "
                         "use with --sets 1")
    ap.add_argument("--tabular-panel", type=int, default=0, metavar="N",
                    help="instead of the fixed pairs: N pairs (from --first-pair) of tabular_panel()'s 120 real pairs "
                         "on tabular data; use with --sets 1")
    ap.add_argument("--time-limit", type=float, default=None, metavar="S",
                    help="give up a fit after S seconds (the row is counted as timed out, not covered)")
    ap.add_argument("--routes", nargs="+", default=["joint", "separate", "bootstrap"],
                    choices=list(ROUTES) + ["joint_shared_std", "joint_shared_std_sd0.25"],
                    help="joint = bayeval.compare's default; joint_simplex / joint_sd0.5 / joint_sd2 = its weights of that kind; joint_jeffreys = with Jeffreys' penalty; "
                         "joint_auto = with it only where the vetted labels are separable (penalty='auto'); "
                         "joint_shared / joint_each = the monotone curve's segment slopes shared or per classifier; "
                         "joint_equal / joint_std = the weights' prior centred on equal weights on the features as "
                         "they are / on standardized features (--part five: joint_shared_std)")
    ap.add_argument("--identical", action="store_true", help="with --from-csv: run the two-copies part too")
    ap.add_argument("--no-identical", action="store_true", help="without --from-csv: skip the two-copies part")
    ap.add_argument("--flat-only", action="store_true",
                    help="only the label sets where asymptotes='auto' fits flat ends (separable, 10+ of each class)")
    ap.add_argument("--separable-only", action="store_true",
                    help="only the label sets that the pair's features separate (where joint_auto applies Jeffreys' "
                         "penalty; elsewhere it is joint_equal's fit)")
    ap.add_argument("--first-set", type=int, default=0, help="the first label set's number (to split a run)")
    ap.add_argument("--max-labels", type=int, default=None,
                    help="--part active: label at most this many items before giving up (default 300)")
    ap.add_argument("--strategies", nargs="+", default=None,
                    choices=("random", "active", "active_labels", "disagreement"),
                    help="--part active: only these strategies (default all four)")
    ap.add_argument("--only", nargs="+", default=None,
                    help="only the pairs whose name starts with one of these (e.g. real sim_3.0)")
    ap.add_argument("--out", default=None)
    ap.add_argument("--from-csv", default=None,
                    help="make the tables from the rows of an earlier (possibly interrupted) run, fitting nothing")
    args = ap.parse_args(argv)
    rev, versions = R._git_rev(), R._versions()
    if args.part == "active":
        import compare_active as A

        text = A.main_active(args, versions)
    elif args.part == "speed":
        import compare_active as A

        text = A.main_speed(args, versions)
    elif args.part == "five":
        text = main_five(args, argv, rev, versions)
    else:
        if args.random_pairs:
            pairs = random_pairs(args.first_pair + args.random_pairs)[args.first_pair:]
        elif args.real_panel:
            pairs = real_panel()[args.first_pair:args.first_pair + args.real_panel]
        elif args.tabular_panel:
            pairs = tabular_panel()[args.first_pair:args.first_pair + args.tabular_panel]
        else:
            pairs = sim_pairs() + real_pairs()
        if args.quick:
            pairs = [pairs[3], pairs[-1]]
        if args.only:
            pairs = [p for p in pairs if p.name.startswith(tuple(args.only))]
        t0 = time.time()
        partial = None if not args.out else pathlib.Path(args.out).with_suffix(".partial.csv")
        if args.from_csv:
            df = _finish(pd.read_csv(args.from_csv))
            pairs = [p for p in pairs if p.name in set(df["pair"])]
            same = (identical(args.budgets, 3, log=lambda s: print(s, flush=True), centres=_centres(args.routes))
                    if args.identical else None)
        else:
            routes = {r: ROUTES[r] if args.time_limit is None else _with_time_limit(ROUTES[r], args.time_limit)
                      for r in args.routes}
            df = run_pairs(pairs, args.budgets, args.sets, log=lambda s: print(s, flush=True), partial=partial,
                           routes=routes, first_set=args.first_set, separable_only=args.separable_only,
                           flat_only=args.flat_only)
            same = None if args.no_identical else identical(
                args.budgets, max(3, args.sets // 2), log=lambda s: print(s, flush=True), centres=_centres(args.routes))
        if args.out:
            df.to_csv(pathlib.Path(args.out).with_suffix(".csv"), index=False)
        df["kind"] = np.where(df["pair"].str.startswith(("sim", "rnd")), "simulated", "real")
        timed_out = ""
        if "timeout" in df and df["timeout"].fillna(False).astype(bool).any():
            t_o = df["timeout"].fillna(False).astype(bool)
            cov_all = df.groupby(["kind", "budget"])["covered"].mean().round(3).to_dict()
            timed_out = (f"**{int(t_o.sum())} of {len(df)} fits gave up at the time limit** "
                         f"({', '.join(sorted(set(df.loc[t_o, 'pair'])))}); the tables leave them out. Counted as "
                         f"misses, the coverage by kind and budget would be {cov_all}.")
            df = df[~t_o].copy()
        text = "\n\n".join([
            "# Comparing two classifiers on one pool: the gap in average precision",
            f"Made by `python benchmarks/compare.py {' '.join(argv or sys.argv[1:])}` at git {rev}; {versions}. "
            f"{len(df) // df['route'].nunique()} label sets ({df.groupby(['pair', 'budget']).rep.nunique().min()} to "
            f"{df.groupby(['pair', 'budget']).rep.nunique().max()} per pair and budget)"
            + (f" (the rows of `{args.from_csv}`, an interrupted run)." if args.from_csv else f", {time.time() - t0:.0f} s."),
            "Routes: `joint` = `bayeval.compare` (one label draw per item shared by both classifiers; its default "
            "joint models: signed weights of scale 1, the intercept's prior of scale 5); `joint_aA_bB` = the same "
            "with the intercept's prior of scale A and log-slope's of scale B (`joint_a1_b1`: the former default); "
            "`joint_simplex` = the weights on the simplex (the first version); `joint_sd0.5` = signed weights of "
            "scale 0.5 (`joint_sd2`: 2); `joint_jeffreys` = with Jeffreys' penalty of the curve's coefficients "
            "(`penalty=\"jeffreys\"`; `joint_auto`: only where the vetted labels are separable, `penalty=\"auto\"`); `joint_shared` / `joint_each` = the monotone joint curve's segment slopes shared by the "
            "classifiers / one set per classifier; `joint_equal` / `joint_std` = the weights' prior centred on equal "
            "weights / on equal weights per standardized feature (`weight_centre`); "
            "`separate` = `bayeval.fit` on each classifier, gap between the two posteriors' draws; "
            "`bootstrap` = AP on the vetted items only, paired percentile bootstrap. Intervals are 90% "
            "(the joint and separate routes' HDI). `misranked`: the route's P(A better) is on the wrong side of "
            "0.5 (pairs with a true gap of exactly 0 left out). `width`: median.",
            *([timed_out] if timed_out else []),
            "## Pairs\n\n" + ("\n".join(f"* `{p.name}` (true gap {p.gap:+.4f}): {p.note}" for p in pairs)
                                if not (args.random_pairs or args.real_panel or args.tabular_panel) else
                                f"{len(pairs)} pairs of `tabular_panel()` (numbers {args.first_pair} to "
                                f"{args.first_pair + len(pairs) - 1}): five scikit-learn classifiers cross-validated on "
                                f"12 tasks of tabular data (wine, iris, fair, anes96, randhie, modechoice, diabetes), "
                                f"every pair on a task; true gaps from {min(p.gap for p in pairs):+.4f} to "
                                f"{max(p.gap for p in pairs):+.4f}, |gap| below 0.02 in "
                                f"{sum(abs(p.gap) < 0.02 for p in pairs)}."
                                if args.tabular_panel else
                                f"{len(pairs)} pairs of `real_panel()` (numbers {args.first_pair} to "
                                f"{args.first_pair + len(pairs) - 1}): five scikit-learn classifiers cross-validated on "
                                f"11 tasks (each digit against the rest, breast cancer), every pair on a task; true gaps "
                                f"from {min(p.gap for p in pairs):+.4f} to {max(p.gap for p in pairs):+.4f}."
                                if args.real_panel else
                                f"{len(pairs)} pairs of `random_pairs()` (numbers {args.first_pair} to "
                                f"{args.first_pair + len(pairs) - 1}): n=2000, prevalence 0.2, separations from "
                                f"U(1.5, 3), shared noise rho from U(0, 0.9); true gaps from "
                                f"{min(p.gap for p in pairs):+.4f} to {max(p.gap for p in pairs):+.4f}, "
                                f"|gap| below 0.02 in {sum(abs(p.gap) < 0.02 for p in pairs)}."),
            "## Coverage, width and mis-ranking by route, kind and budget\n\n"
            "`interval_score`: the mean interval score of the 90% intervals (width plus 20 times the distance "
            "by which an interval misses the true gap; lower is better).\n\n"
            + _md(coverage_table(df, ["route", "kind", "budget"])),
            "## By the number of vetted positives (all budgets)\n\n"
            + _md(positives_table(with_vetted_positives(df, pairs))),
            "## By pair (all budgets)\n\n" + (_md(coverage_table(df, ["pair", "route"]))
                                                 if not (args.random_pairs or args.real_panel or args.tabular_panel)
                                                 else "(one label set per pair and budget: see the rows' file)"),
            "## Reliability of the stated P(A better) (all pairs with a non-zero gap, all budgets)\n\n"
            + _md(reliability(df)),
            "## The same, each run counted both ways (A and B swapped)\n\n" + reliability_both_ways.__doc__.split(
                "\n\n")[1].replace("\n    ", " ").strip() + "\n\n" + _md(reliability_both_ways(df)),
            "## What an ideal posterior would show on the same runs (counted both ways)\n\n"
            + " ".join(" ".join(reliability_reference.__doc__.split("\n\n")[:2]).split()) + "\n\n"
            + _md(reliability_reference(df)),
            "## The same with each pair's own location error kept (counted both ways)\n\n"
            "The ideal posterior above moved by each pair's (and budget's) mean z of the table below, its "
            "spread around that the runs' spread within their pair: what the route's location errors alone do "
            "to the bins (each cell's mean z has its own noise, about 1/sqrt(runs) units).\n\n"
            + _md(reliability_reference(df, pair_bias=True)),
            "## Where the gap's posterior sits against the truth\n\n"
            + " ".join(location_table.__doc__.split("\n\n", 1)[1].split()) + "\n\n"
            + _md(location_table(df)),
        ] + ([] if "nuts" not in df or df["nuts"].isna().all() else [
            "## Importance sampling of the joint candidates (fits per route and budget; candidates that fell back "
            "to NUTS; Pareto k of the importance-sampled candidates)\n\n"
            + _md(df.dropna(subset=["nuts"]).groupby(["route", "budget"]).agg(
                fits=("nuts", "size"), candidates_on_nuts=("nuts", "sum"),
                median_pareto_k=("max_pareto_k", "median"), largest_pareto_k=("max_pareto_k", "max")).round(2))
        ]) + ([] if same is None else [
            "## Two copies of one classifier (digits 8, logistic regression)\n\n"
            + _md(same.groupby(["centre", "budget"])[["p_better", "p_rope_0.005"]].agg(["mean", "min"]).round(3))
        ])) + "\n"
    print(text)
    if args.out:
        pathlib.Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
