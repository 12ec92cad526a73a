"""Do the default's intervals hold on real classifiers' scores?

The validation that decides bayeval's default (``bayeval.fit``). Pools are real
classifiers (cross-validated scores) on data bundled with scikit-learn and statsmodels
-- no downloads. For each pool and budget, random label sets are drawn; the default
and each candidate are fitted to them, called as a new user calls them, and their 90%
intervals are checked against the pool's true metrics.

Parts
-----
``pools``  (default) coverage, width and error of AP, P@K (K = 1% of N), precision,
           recall and F1 at a fixed threshold; the vetted-only estimate's error and
           bootstrap width; the precision-floor threshold rule's success rate.
``mixture`` the SPE paper's score mixture (Gamma / truncated Normal, the former
           default) on the same label sets (the first ``--sets`` of each), for
           comparison; NUTS, so slow.
``generated`` where the mixture is right (scores drawn from its own families): its
           coverage and width next to the default's (``--sets`` trials).
``ppi``    against prediction-powered inference (ppi-python's ``ppi_mean_ci``, power
           tuned): accuracy and precision on a synthetic pool (N = 10,000) whose model
           probabilities are calibrated (``q = p``) or not (``q = p**2``).

Run (results in ``benchmarks/results/real_scores.md``)::

    pip install -e ".[bench]"
    python benchmarks/real_scores.py --sets 20 --out benchmarks/results/real_scores.md
    python benchmarks/real_scores.py --part ppi --trials 300 --out benchmarks/results/real_scores_ppi.md

``--quick`` runs a small version (two pools, a few label sets) as the tests do.

``--candidates with-mixture`` (parts ``pools`` and ``generated``) fits, in place of
``bayeval.fit``, a stack of the default candidates and one score mixture chosen from
the scores' scale alone (:func:`mixture_candidate`): the study of whether the mixture
belongs in the default (results in ``real_scores*_with_mixture.md``).
"""

from __future__ import annotations

import argparse
import pathlib
import platform
import sys
import time
import warnings
import zlib
from dataclasses import dataclass

import numpy as np
import pandas as pd

warnings.filterwarnings("ignore", category=FutureWarning)

import bayeval as be  # noqa: E402
from bayeval.core import metrics as M  # noqa: E402
from bayeval.models import ScoreMixture  # noqa: E402

HDI = 0.9

CANDIDATE_SETS = ("current", "with-mixture", "with-gated-mixture", "penalty-auto")
#: the predictive check's p-value below which the gated mixture candidate refuses the scores
GATE_P = 0.05


def mixture_candidate(scores) -> ScoreMixture:
    """The score mixture added to the stack by ``--candidates with-mixture``: from the scale alone.

    Scores with negative values (margins, log-odds): a Normal pair on the scores as they
    are. Non-negative scores: the SPE paper's Gamma / truncated-Normal pair (the former
    default) with ``transform="auto"``, which is ``minmax`` for scores in [0, 1]
    (probabilities) and ``identity`` for positive scores beyond 1. Fixed before any run;
    not tuned on any pool.

    Fitted by importance sampling only (:class:`_ImportanceOnly`): where its Pareto k says
    the draws are unreliable, the stack leaves the mixture out (weight 0) instead of
    falling back to NUTS (digits8 margins, first label set of 30: Pareto k 1.04; with the
    NUTS fallback, six label sets of three pools had not finished after 10 minutes).
    """
    s = np.asarray(scores, dtype=float)
    if s.min() < 0:
        return _ImportanceOnly("normal", "normal", transform="identity")
    return _ImportanceOnly("gamma", "truncnormal", transform="auto")


class _ImportanceOnly(ScoreMixture):
    """A ScoreMixture that is sampled by importance sampling or not at all (a RuntimeError,
    which ``bayeval.fit`` records as a failed candidate with weight 0)."""

    def fit(self, data, **kw):
        kw["sampler"] = "importance"
        return super().fit(data, **kw)


class _GatedMixture(_ImportanceOnly):
    """The Normal pair on margins, refused (a RuntimeError: weight 0 in the stack) where the
    posterior predictive check of the score histogram (:meth:`ScoreMixturePosterior.ppc`, 100
    draws) gives a p-value below :data:`GATE_P`: a check of the model against the scores
    before the labels weigh it."""

    def fit(self, data, **kw):
        post = super().fit(data, **kw)
        p = post.ppc(n_draws=100, random_seed=0)["p_value"]
        if p < GATE_P:
            raise RuntimeError(f"the score histogram's predictive check rejects the mixture (p = {p:.2f})")
        return post


def candidates_for(which: str, data) -> list | None:
    """The stack's candidates for ``--candidates``: None (``bayeval.fit``'s own) or the list.

    ``"with-gated-mixture"``: on margins and log-odds (scores outside [0, 1]) the default's
    curves plus :class:`_GatedMixture`; on probabilities the default's own candidates."""
    if which == "current":
        return None
    from bayeval.models.stacking import default_candidates

    if which == "penalty-auto":  # the default's curves with Jeffreys' penalty where the labels are separable
        return [_with_penalty(c) for c in default_candidates(data)]
    if which == "with-gated-mixture":
        s = np.asarray(data.scores, dtype=float)
        if s.min() >= 0 and s.max() <= 1:
            return None
        return default_candidates(data) + [_GatedMixture("normal", "normal", transform="identity")]
    return default_candidates(data) + [mixture_candidate(data.scores)]


def _with_penalty(candidate):
    """A copy of the default calibration curve ``candidate`` with ``penalty="auto"``."""
    params = candidate.get_params()
    params["penalty"] = "auto"
    return type(candidate)(**params)


def penalized_any(post, data) -> bool:
    """Whether any candidate of the ``penalty-auto`` stack ``post`` resolved its penalty to
    Jeffreys' on ``data`` (else the stack is the current default, fit for fit)."""
    return any(getattr(c.model_spec, "penalty_for", lambda d: "none")(data) != "none"
               for c in post.candidates.values())


def fit_main(data, which: str, random_seed: int):
    """The model under study, fitted as a user fits it (``bayeval.fit`` with these candidates)."""
    return be.fit(data, candidates=candidates_for(which, data), random_seed=random_seed, warn=False)


def current_default_from(post, data, random_seed: int):
    """The current default (the two calibration curves stacked) from a with-mixture stack's own
    candidate fits: every candidate gets the same seed, so these are the fits ``bayeval.fit``
    makes; the weights and the label draws are made as ``bayeval.fit`` makes them."""
    from bayeval.models.stacking import STACKING_DEFAULT, StackedPosterior, label_loo, stack_weights

    names = [n for n in post.candidates if not n.startswith("ScoreMixture(")]
    fits = {n: post.candidates[n] for n in names}
    w = stack_weights(np.column_stack([np.asarray(label_loo(p).loo_i) for p in fits.values()]), STACKING_DEFAULT,
                      random_seed)
    tab = pd.DataFrame({"weight": w}, index=names).sort_values("weight", ascending=False, kind="stable")
    return StackedPosterior(data, fits, tab, chains=post.n_chains, draws=post.n_draws, random_seed=random_seed)


def main_label(which: str) -> str:
    return {"current": "default", "with-mixture": "default + mixture",
            "penalty-auto": "default, penalty auto"}.get(which, "default + gated mixture")


def candidate_label(name: str) -> str:
    """Short names for the candidates' rows (a ScoreMixture's repr is long)."""
    if name.startswith("ScoreMixture("):
        return "score mixture"
    return name


def _mixture_info(post) -> dict:
    """The mixture candidate's stacking weight and how it was sampled (NaN without one;
    sampler ``"failed"`` where importance sampling failed and the stack left it out)."""
    comp = getattr(post, "comparison", None)
    for name in ([] if comp is None else comp.index):
        if name.startswith("ScoreMixture(") and name in comp.attrs.get("errors", {}):
            return {"mix_weight": 0.0, "mix_sampler": "failed", "mix_seconds": np.nan, "mix_pareto_k": np.nan,
                    "mix_family": name}
    for name, c in getattr(post, "candidates", {}).items():
        if name.startswith("ScoreMixture("):
            sm = getattr(c, "sampling", None)
            return {"mix_weight": float(post.weights.get(name, np.nan)),
                    "mix_sampler": getattr(sm, "sampler", ""), "mix_seconds": float(getattr(sm, "seconds", np.nan)),
                    "mix_pareto_k": float(getattr(sm, "pareto_k", np.nan)), "mix_family": name}
    return {"mix_weight": np.nan, "mix_sampler": "", "mix_seconds": np.nan, "mix_pareto_k": np.nan, "mix_family": ""}


# ------------------------------------------------------------------------ pools


@dataclass
class Pool:
    name: str
    scores: np.ndarray
    truth: np.ndarray
    kind: str  # probabilities / margins / log-odds
    threshold: float  # the fixed decision threshold for precision/recall/F1
    floor: float  # the precision floor for the threshold rule
    note: str


def _cv_scores(est, X, y, method, seed=0):
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    cv = StratifiedKFold(5, shuffle=True, random_state=seed)
    out = cross_val_predict(est, X, y, cv=cv, method=method)
    return out[:, 1] if out.ndim == 2 else out


def _fair_pools() -> list[Pool]:
    """The three pools on statsmodels' 'fair' (affairs) data."""
    import statsmodels.api as sm
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    pools = []
    fair = sm.datasets.fair.load_pandas().data
    Xf = fair.drop(columns="affairs").to_numpy(float)
    yf = (fair["affairs"] > 0).to_numpy(int)
    lrf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    pools.append(Pool("fair_logreg", _cv_scores(lrf, Xf, yf, "predict_proba"), yf, "probabilities", 0.5, 0.6,
                      "affairs (statsmodels 'fair'), logistic regression probabilities (32%)"))
    gb = GradientBoostingClassifier(n_estimators=300, max_depth=5, learning_rate=0.3, random_state=0)
    pools.append(Pool("fair_gbm_overfit", _cv_scores(gb, Xf, yf, "predict_proba"), yf, "probabilities", 0.5, 0.6,
                      "affairs, an over-fitted gradient-boosting model's raw probabilities (miscalibrated)"))
    yr = (fair["affairs"] > 4).to_numpy(int)  # rarer outcome, weak features only
    weak = fair[["age", "educ", "occupation"]].to_numpy(float)
    rf = RandomForestClassifier(n_estimators=200, min_samples_leaf=20, random_state=0)
    pools.append(Pool("fair_weak_rf", _cv_scores(rf, weak, yr, "predict_proba"), yr, "probabilities", 0.15, 0.3,
                      "affairs > 4 from age/education/occupation only: a weak random forest"))
    return pools


def make_pools(names=None) -> list[Pool]:
    """The real-score pools (deterministic: fixed seeds); ``names``: only these.

    The statsmodels pools (``fair_*``) are built only when asked for, so the quick
    version (the tests') needs scikit-learn alone.
    """
    from sklearn.datasets import load_breast_cancer, load_digits, load_wine
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import LinearSVC

    pools = []
    bc = load_breast_cancer()
    Xb, yb = bc.data, (bc.target == 0).astype(int)  # malignant = positive (37%)
    lr = make_pipeline(StandardScaler(), LogisticRegression(C=0.05, max_iter=2000))
    pools.append(Pool("breast_cancer_logreg", _cv_scores(lr, Xb, yb, "predict_proba"), yb, "probabilities", 0.5, 0.95,
                      "logistic regression, cross-validated probabilities"))
    lp = _cv_scores(GaussianNB(), Xb, yb, "predict_log_proba")
    pools.append(Pool("breast_cancer_nb_logodds", np.clip(lp - np.log(-np.expm1(np.minimum(lp, -1e-12))), -50, 50), yb,
                      "log-odds", 0.0, 0.9, "Gaussian naive Bayes log-odds (overconfident), clipped to +-50"))

    dg = load_digits()
    Xd = dg.data
    y8 = (dg.target == 8).astype(int)
    svm = make_pipeline(StandardScaler(), LinearSVC(C=0.01, max_iter=20000))
    pools.append(Pool("digits8_svm_margin", _cv_scores(svm, Xd, y8, "decision_function"), y8, "margins", 0.0, 0.8,
                      "linear SVM margins, digit 8 against the rest (10%)"))
    rng = np.random.default_rng(3)
    pos = np.flatnonzero(dg.target == 3)
    neg = np.flatnonzero(dg.target != 3)
    keep = np.r_[rng.choice(pos, 17, replace=False), neg]
    y3 = (dg.target[keep] == 3).astype(int)
    lr3 = make_pipeline(StandardScaler(), LogisticRegression(C=0.1, max_iter=2000))
    pools.append(Pool("digits3_rare_logreg", _cv_scores(lr3, Xd[keep], y3, "predict_proba"), y3, "probabilities", 0.5, 0.8,
                      "digit 3 subsampled to 1% (17 of 1,631), logistic regression probabilities"))

    y5 = (dg.target == 5).astype(int)
    pools.append(Pool("digits5_nb_prob", _cv_scores(GaussianNB(), Xd, y5, "predict_proba"), y5, "probabilities", 0.5, 0.6,
                      "Gaussian naive Bayes probabilities, digit 5 against the rest (10%): massively over-confident"))

    if names is None or any(n.startswith("fair") for n in names):
        pools += _fair_pools()

    wn = load_wine()
    yw = (wn.target == 1).astype(int)
    svw = make_pipeline(StandardScaler(), LinearSVC(C=0.01, max_iter=20000))
    pools.append(Pool("wine_svm_margin", _cv_scores(svw, wn.data, yw, "decision_function"), yw, "margins", 0.0, 0.9,
                      "wine cultivar 2 against the rest (40%), linear SVM margins, 178 items"))
    return pools


def make_heldout_pools() -> list[Pool]:
    """Pools kept out of every choice of the default: evaluated once, after it was fixed."""
    import statsmodels.api as sm
    from sklearn.datasets import load_breast_cancer, load_digits, load_iris
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import LinearSVC

    pools = []
    an = sm.datasets.anes96.load_pandas().data
    ya = an["vote"].to_numpy(int)
    Xa = an.drop(columns=["vote"]).to_numpy(float)
    lra = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    pools.append(Pool("anes96_logreg", _cv_scores(lra, Xa, ya, "predict_proba"), ya, "probabilities", 0.5, 0.9,
                      "1996 US election survey (statsmodels 'anes96'): vote, logistic regression probabilities"))
    bc = load_breast_cancer()
    yb = (bc.target == 0).astype(int)
    rf = RandomForestClassifier(n_estimators=200, random_state=0)
    pools.append(Pool("breast_cancer_rf", _cv_scores(rf, bc.data, yb, "predict_proba"), yb, "probabilities", 0.5, 0.95,
                      "breast cancer, random forest probabilities (under-confident)"))
    dg = load_digits()
    y9 = (dg.target == 9).astype(int)
    lr9 = make_pipeline(StandardScaler(), LogisticRegression(C=0.05, max_iter=2000))
    pools.append(Pool("digits9_logreg_logodds", _cv_scores(lr9, dg.data, y9, "decision_function"), y9, "log-odds", 0.0,
                      0.8, "digit 9 against the rest (10%), logistic regression decision function (log-odds)"))
    rng = np.random.default_rng(7)
    pos, neg = np.flatnonzero(dg.target == 7), np.flatnonzero(dg.target != 7)
    keep = np.r_[rng.choice(pos, 33, replace=False), neg]
    y7 = (dg.target[keep] == 7).astype(int)
    rf7 = RandomForestClassifier(n_estimators=200, random_state=0)
    pools.append(Pool("digits7_rare_rf", _cv_scores(rf7, dg.data[keep], y7, "predict_proba"), y7, "probabilities",
                      0.5, 0.8, "digit 7 subsampled to 2% (33 of 1,650), random forest probabilities"))
    ir = load_iris()
    yi = (ir.target == 1).astype(int)
    pools.append(Pool("iris_versicolor_nb", _cv_scores(GaussianNB(), ir.data[:, :2], yi, "predict_proba"), yi,
                      "probabilities", 0.5, 0.6, "iris versicolor against the rest from two sepal features, naive Bayes"))
    fair = sm.datasets.fair.load_pandas().data
    Xf = fair.drop(columns="affairs").to_numpy(float)
    yf = (fair["affairs"] > 0).to_numpy(int)
    svf = make_pipeline(StandardScaler(), LinearSVC(C=0.01, max_iter=20000))
    pools.append(Pool("fair_svm_margin", _cv_scores(svf, Xf, yf, "decision_function"), yf, "margins", 0.0, 0.6,
                      "affairs, linear SVM margins"))
    return pools


def make_fresh_pools() -> list[Pool]:
    """A second set of held-out pools, new data and classifiers no choice of the default ever saw.

    Built for the question whether the mixture-shaped candidate joins the default
    (``benchmarks/semisup.py --fresh``): the decision rule was fixed before these pools
    were first fitted. Deterministic (fixed seeds)."""
    import statsmodels.api as sm
    from sklearn.datasets import load_diabetes, load_digits
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import LinearSVC

    pools = []
    rh = sm.datasets.randhie.load_pandas().data
    rh = rh.iloc[np.random.default_rng(11).choice(len(rh), 5000, replace=False)]
    yr = (rh["mdvis"] >= 8).to_numpy(int)  # frequent doctor visits, from insurance and health covariates
    Xr = rh.drop(columns="mdvis").to_numpy(float)
    lrr = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    pools.append(Pool("randhie_logreg", _cv_scores(lrr, Xr, yr, "predict_proba"), yr, "probabilities", 0.3, 0.5,
                      "RAND health insurance experiment (statsmodels 'randhie', 5,000 of 20,190): 8+ doctor visits, "
                      "logistic regression probabilities (a weak model)"))
    hgb = HistGradientBoostingClassifier(max_iter=300, learning_rate=0.2, max_leaf_nodes=63, random_state=0)
    pools.append(Pool("randhie_hgb_overfit", _cv_scores(hgb, Xr, yr, "predict_proba"), yr, "probabilities", 0.3, 0.5,
                      "the same outcome, an over-fitted histogram gradient-boosting model's raw probabilities"))
    mc = sm.datasets.modechoice.load_pandas().data
    ym = mc["choice"].to_numpy(int)  # the mode this traveller chose (one of four rows per traveller)
    Xm = np.column_stack([mc[["ttme", "invc", "invt", "gc", "hinc", "psize"]].to_numpy(float),
                          np.eye(4)[mc["mode"].to_numpy(int) - 1]])
    pools.append(Pool("modechoice_nb", _cv_scores(GaussianNB(), Xm, ym, "predict_proba"), ym, "probabilities", 0.5,
                      0.6, "travel mode choice (statsmodels 'modechoice', 840 rows): chosen mode, naive Bayes"))
    db = load_diabetes()
    yd = (db.target > np.quantile(db.target, 0.75)).astype(int)
    svd = make_pipeline(StandardScaler(), LinearSVC(C=0.01, max_iter=20000))
    pools.append(Pool("diabetes_svm_margin", _cv_scores(svd, db.data, yd, "decision_function"), yd, "margins", 0.0,
                      0.6, "diabetes progression in the top quarter (scikit-learn 'diabetes', 442), linear SVM margins"))
    dg = load_digits()
    rng = np.random.default_rng(4)
    pos, neg = np.flatnonzero(dg.target == 4), np.flatnonzero(dg.target != 4)
    keep = np.r_[rng.choice(pos, 33, replace=False), neg]
    y4 = (dg.target[keep] == 4).astype(int)
    sv4 = make_pipeline(StandardScaler(), LinearSVC(C=0.01, max_iter=20000))
    pools.append(Pool("digits4_rare_svm_margin", _cv_scores(sv4, dg.data[keep], y4, "decision_function"), y4,
                      "margins", 0.0, 0.8, "digit 4 subsampled to 2% (33 of 1,650), linear SVM margins"))
    y2 = (dg.target == 2).astype(int)
    knn = make_pipeline(StandardScaler(), KNeighborsClassifier(n_neighbors=25))
    pools.append(Pool("digits2_knn_prob", _cv_scores(knn, dg.data, y2, "predict_proba"), y2, "probabilities", 0.5,
                      0.9, "digit 2 against the rest (10%), 25-nearest-neighbour probabilities (heavily tied)"))
    return pools


# --------------------------------------------------------------------- metrics


def _metric_specs(pool: Pool):
    n = pool.scores.size
    k = max(1, int(round(0.01 * n)))
    return {
        "AP": ("average_precision", {}),
        f"P@{k}": ("precision_at_k", {"k": k}),
        "precision": ("precision", {"threshold": pool.threshold}),
        "recall": ("recall", {"threshold": pool.threshold}),
        "F1": ("f_score", {"threshold": pool.threshold}),
    }


def _truth(pool: Pool, specs) -> dict:
    post = be.Posterior.from_probabilities(be.EvalData(pool.scores, pool.truth.astype(float)), pool.truth.astype(float),
                                           draws=1, random_seed=0)
    return {lab: float(post.metric(m, **kw).values.ravel()[0]) for lab, (m, kw) in specs.items()}


def _interval(post, specs) -> dict:
    out = {}
    for lab, (m, kw) in specs.items():
        v = post.metric(m, **kw).values.ravel()
        v = v[np.isfinite(v)]
        if v.size == 0:
            out[lab] = (np.nan, np.nan, np.nan)
            continue
        lo, hi = be.hdi(v, HDI)
        out[lab] = (float(v.mean()), float(lo), float(hi))
    return out


def _vetted_only(data, specs, rng, n_boot=200) -> dict:
    """Vetted-only point estimate and its bootstrap 90% interval width (percentile)."""
    return {lab: (point, hi - lo) for lab, (point, lo, hi) in vetted_only_interval(data, specs, rng, n_boot).items()}


def vetted_only_interval(data, specs, rng, n_boot=200) -> dict:
    """Vetted-only point estimate and its percentile bootstrap 90% interval ``(point, lo, hi)``."""
    vet = np.flatnonzero(data.vetted)
    s, y = data.scores[vet], data.labels[vet].astype(np.int8)
    out = {}
    boot_idx = rng.integers(0, vet.size, (n_boot, vet.size))
    for lab, (m, kw) in specs.items():
        kw2 = dict(kw)
        if m == "precision_at_k":
            kw2["k"] = max(1, round(kw["k"] * vet.size / data.n_items))  # the same share of the top
        fn = getattr(M, m)
        if "threshold" in kw2:
            pred = (s >= kw2.pop("threshold")).astype(np.int8)
            point = float(fn(y[None], pred, **kw2)[0])
            b = np.array([fn(y[i][None], pred[i], **kw2)[0] for i in boot_idx])
        else:
            point = float(fn(y[None], s, **kw2)[0])
            b = np.array([fn(y[i][None], s[i], **kw2)[0] for i in boot_idx])
        b = np.asarray(b, dtype=float).ravel()
        b = b[np.isfinite(b)]
        lo, hi = (float(q) for q in np.quantile(b, [0.05, 0.95])) if b.size else (np.nan, np.nan)
        out[lab] = (point, lo, hi)
    return out


def _label_set(pool: Pool, budget: int, rep: int, seed: int):
    """The rep-th random label set of a pool and budget (the same in every part)."""
    rng = np.random.default_rng([seed, budget, rep, zlib.crc32(pool.name.encode())])
    idx = rng.choice(pool.scores.size, budget, replace=False)
    lab = np.full(pool.scores.size, np.nan)
    lab[idx] = pool.truth[idx]
    return be.EvalData(pool.scores, lab), rng


def run_pools(pools, budgets, n_sets, seed=0, log=print, mixture=False, candidates="current") -> pd.DataFrame:
    """Fit every label set; ``mixture=True`` fits the SPE paper's score mixture instead;
    ``candidates``: the default's candidates (``"current"``) or ``"with-mixture"``."""
    main = main_label(candidates)
    rows = []
    for pool in pools:
        specs = _metric_specs(pool)
        truth = _truth(pool, specs)
        log(f"{pool.name}: N={pool.scores.size} prevalence={pool.truth.mean():.3f} "
            + " ".join(f"{k}={v:.3f}" for k, v in truth.items()))
        for budget in budgets:
            if budget >= pool.scores.size:
                continue
            for rep in range(n_sets):
                data, rng = _label_set(pool, budget, rep, seed)
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    if mixture:
                        post = ScoreMixture().fit(data, draws=500, tune=500, chains=2, random_seed=rep,
                                                  progressbar=False, warn=False)
                    else:
                        post = fit_main(data, candidates, rep)
                fit_s = time.perf_counter() - t0
                mix = _mixture_info(post)
                vo = _vetted_only(data, specs, rng)
                if mixture:
                    fits = {"score mixture (gamma/truncnormal)": post}
                else:
                    fits = {main: post}
                    if candidates == "penalty-auto":  # the current default on the same labels, paired
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            fits["default"] = (fit_main(data, "current", rep) if penalized_any(post, data) else post)
                    elif candidates != "current":  # the current default on the same fits, for a paired comparison
                        fits["default"] = current_default_from(post, data, rep)
                    fits.update({candidate_label(name): c for name, c in post.candidates.items()})
                weights = {candidate_label(n): float(w) for n, w in getattr(post, "weights", pd.Series(dtype=float)).items()}
                first_model = next(iter(fits))
                for model, p in fits.items():
                    ints = _interval(p, specs)
                    for mlab, (mean, lo, hi) in ints.items():
                        t = truth[mlab]
                        rows.append({
                            "pool": pool.name, "budget": budget, "set": rep, "model": model, "metric": mlab,
                            "truth": t, "mean": mean, "lo": lo, "hi": hi,
                            "covered": bool(lo - 1e-9 <= t <= hi + 1e-9) if np.isfinite(lo) else np.nan,
                            "width": hi - lo, "abs_err": abs(mean - t),
                            "vo_abs_err": abs(vo[mlab][0] - t) if np.isfinite(vo[mlab][0]) else np.nan,
                            "vo_width": vo[mlab][1], "fit_s": fit_s if model == first_model else np.nan,
                            "weight": weights.get(model, np.nan), **mix,
                        })
                    # the precision-floor threshold rule
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        rec = be.recalibrate(p, min_precision=pool.floor, prob=0.9)
                    pred = pool.scores >= rec.threshold
                    true_prec = float(pool.truth[pred].mean()) if pred.any() else np.nan
                    rows.append({
                        "pool": pool.name, "budget": budget, "set": rep, "model": model, "metric": "threshold_rule",
                        "truth": pool.floor, "mean": true_prec, "lo": np.nan, "hi": np.nan,
                        "covered": (bool(true_prec >= pool.floor) if rec.met else np.nan), "width": np.nan,
                        "abs_err": np.nan, "vo_abs_err": np.nan, "vo_width": np.nan, "fit_s": np.nan,
                        "met": rec.met, "weight": weights.get(model, np.nan), **mix,
                    })
            first = next(iter(fits))
            sub = pd.DataFrame([r for r in rows if r["pool"] == pool.name and r["budget"] == budget
                                and r["model"] == first and r["metric"] != "threshold_rule"])
            log(f"  budget {budget}: {first} coverage {sub['covered'].mean():.3f} over {len(sub)} intervals, "
                f"fit {np.nanmean(sub['fit_s']):.1f} s")
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------ PPI


def run_ppi(budgets, trials, n=10_000, seed=0, log=print, settings=("calibrated", "miscalibrated")) -> pd.DataFrame:
    from ppi_py import ppi_mean_ci

    rows = []
    for s_i, (setting, power) in enumerate((("calibrated q = p", 1.0), ("miscalibrated q = p^2", 2.0))):
        if setting.split()[0] not in settings:
            continue
        for budget in budgets:
            for t in range(trials):
                # a new pool every trial: p ~ Beta(1, 2), y ~ Bernoulli(p); the classifier reports q = p**power
                rng = np.random.default_rng([seed, s_i, budget, t])
                p = rng.beta(1.0, 2.0, n)
                y = (rng.random(n) < p).astype(float)
                q = p**power
                pred = (q >= 0.5).astype(int)
                acc_true = float(np.mean(pred == y))
                prec_true = float(y[pred == 1].mean())
                f_acc = np.where(pred == 1, q, 1 - q)  # model-implied P(prediction correct)
                idx = rng.choice(n, budget, replace=False)
                unl = np.setdiff1d(np.arange(n), idx)
                lab = np.full(n, np.nan)
                lab[idx] = y[idx]
                data = be.EvalData(q, lab, predictions=pred)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    post = be.fit(data, random_seed=t, warn=False, draws=500)
                    plug = be.Posterior.from_probabilities(data, q, draws=1000, random_seed=t, check=False)
                for metric, truth in (("accuracy", acc_true), ("precision", prec_true)):
                    # PPI++: a mean over items (all for accuracy, predicted positives for precision)
                    if metric == "accuracy":
                        yl, fl, fu = (pred[idx] == y[idx]).astype(float), f_acc[idx], f_acc[unl]
                    else:
                        li, ui = idx[pred[idx] == 1], unl[pred[unl] == 1]
                        yl, fl, fu = y[li], q[li], q[ui]
                    if yl.size >= 2:
                        lo, hi = ppi_mean_ci(yl, fl, fu, alpha=1 - HDI)
                        lo, hi = float(np.ravel(lo)[0]), float(np.ravel(hi)[0])
                    else:
                        lo, hi = np.nan, np.nan
                    rows.append({"setting": setting, "budget": budget, "trial": t, "method": "PPI++", "metric": metric,
                                 "covered": (lo <= truth <= hi) if np.isfinite(lo) else np.nan, "width": hi - lo})
                    each = [("bayeval.fit (default)", post), ("from_probabilities (plug-in)", plug)]
                    each += [(f"candidate {k}", c) for k, c in post.candidates.items()]
                    for name, pp in each:
                        v = pp.metric(metric).values.ravel()
                        v = v[np.isfinite(v)]
                        blo, bhi = be.hdi(v, HDI)
                        rows.append({"setting": setting, "budget": budget, "trial": t, "method": name, "metric": metric,
                                     "covered": bool(blo <= truth <= bhi), "width": float(bhi - blo)})
            sub = pd.DataFrame([r for r in rows if r["setting"] == setting and r["budget"] == budget])
            log(f"{setting} n={budget}: " + "; ".join(
                f"{m}: {g['covered'].mean():.3f}" for m, g in sub.groupby(["method", "metric"])))
    return pd.DataFrame(rows)


# ------------------------------------------------------- data from the mixture


def run_generated(trials, n=2000, n_vetted=30, seed=0, log=print, candidates="current") -> pd.DataFrame:
    """Where the score mixture is right: scores drawn from its own families.

    Negatives Gamma(2, 0.1), positives |Normal(0.7, 0.12)|, 30% positive (the SPE coverage
    study's setting); the mixture fitted with the true families, and the default, on the
    same random labels; ``candidates="with-mixture"`` adds the stack with the mixture
    candidate (:func:`mixture_candidate`) on the same labels.
    """
    rows = []
    for t in range(trials):
        rng = np.random.default_rng([seed, 7, t])
        y = (rng.random(n) < 0.3).astype(int)
        s = np.maximum(np.where(y == 1, np.abs(rng.normal(0.7, 0.12, n)), rng.gamma(2.0, 0.1, n)), 1e-4)
        lab = np.full(n, np.nan)
        idx = rng.choice(n, n_vetted, replace=False)
        lab[idx] = y[idx]
        data = be.EvalData(s, lab)
        pool = Pool("generated", s, y, "scores", 0.5, 0.9, "")
        specs = _metric_specs(pool)
        truth = _truth(pool, specs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fits = {
                "score mixture (the true families)": ScoreMixture("gamma", "truncnormal", transform="identity").fit(
                    data, draws=500, tune=500, chains=2, random_seed=t, progressbar=False, warn=False),
                "default": be.fit(data, random_seed=t, warn=False),
            }
            fit_s = {}
            if candidates != "current":
                t0 = time.perf_counter()
                fits[main_label(candidates)] = fit_main(data, candidates, t)
                fit_s[main_label(candidates)] = time.perf_counter() - t0
        for model, post in fits.items():
            mix = _mixture_info(post)
            for mlab, (mean, lo, hi) in _interval(post, specs).items():
                rows.append({"trial": t, "model": model, "metric": mlab, "truth": truth[mlab], "mean": mean,
                             "covered": bool(lo - 1e-9 <= truth[mlab] <= hi + 1e-9), "width": hi - lo,
                             "abs_err": abs(mean - truth[mlab]), "fit_s": fit_s.get(model, np.nan), **mix})
        sub = pd.DataFrame(rows)
        log(f"trial {t + 1}/{trials}: " + "; ".join(f"{m} {g['covered'].mean():.2f}" for m, g in sub.groupby("model")))
    return pd.DataFrame(rows)


# --------------------------------------------------------------------- tables


def _versions() -> str:
    import arviz
    import pymc
    import pytensor
    import scipy
    import sklearn

    return (f"bayeval {be.__version__}, PyMC {pymc.__version__}, PyTensor {pytensor.__version__}, "
            f"ArviZ {arviz.__version__}, NumPy {np.__version__}, SciPy {scipy.__version__}, "
            f"scikit-learn {sklearn.__version__}, statsmodels {_statsmodels_version()}, "
            f"Python {platform.python_version()}, git {_git_rev()}")


def _git_rev() -> str:
    """The short git revision of the code that made a result ("?" outside a checkout),
    with "+changes" where tracked files other than the results differ from it; read once,
    when the run starts (the run itself rewrites results files)."""
    global _GIT_REV
    if _GIT_REV is None:
        _GIT_REV = _read_git_rev()
    return _GIT_REV


_GIT_REV: str | None = None


def _read_git_rev() -> str:
    import subprocess
    from pathlib import Path

    here = Path(__file__).resolve().parent
    try:
        run = lambda *a: subprocess.run(["git", *a], capture_output=True, text=True, cwd=here, timeout=10)  # noqa: E731
        rev = run("rev-parse", "--short", "HEAD").stdout.strip()
        dirty = run("status", "--porcelain", "--untracked-files=no", "--", ":/", ":(exclude,top)benchmarks/results").stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "?"
    return (rev + ("+changes" if dirty else "")) if rev else "?"


def _statsmodels_version() -> str:
    try:
        import statsmodels
    except ImportError:
        return "not installed"
    return statsmodels.__version__


def side_by_side(mix: pd.DataFrame, default: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The mixture part's rows against the default's on the same label sets (pool, budget,
    set): coverage, width and absolute error per pool and pooled; and a sentence on the
    threshold rule of both."""
    key = ["pool", "budget", "set"]
    sets = mix[key].drop_duplicates()
    d = default[default["model"] == "default"].merge(sets, on=key)
    m = mix[mix["model"] != "default"]
    if d.empty:
        raise SystemExit("--against: the file has no rows of the default on these label sets")
    iv = {"default": d[d["metric"] != "threshold_rule"], "mixture": m[m["metric"] != "threshold_rule"]}
    cols = {}
    for what, col in (("coverage", "covered"), ("width", "width"), ("MAE", "abs_err")):
        for who, x in iv.items():
            cols[f"{who}: {what}"] = x.groupby("pool")[col].mean()
    table = pd.DataFrame(cols)
    table.loc["**pooled**"] = [iv[c.split(":")[0]][{"coverage": "covered", "width": "width", "MAE": "abs_err"}[
        c.split(": ")[1]]].mean() for c in table.columns]
    table.index.name = "pool"
    rule = {who: x[x["metric"] == "threshold_rule"] for who, x in (("default", d), ("mixture", m))}
    held = {who: (r["covered"].mean(), r["met"].mean()) for who, r in rule.items()}
    text = (f"The threshold rule (precision floor with probability 0.9) held in {held['mixture'][0]:.3f} of the "
            f"label sets where the mixture said it was met (met in {held['mixture'][1]:.2f}), against "
            f"{held['default'][0]:.2f} for the default (met in {held['default'][1]:.2f}).\n")
    return table.round(3), text


def summarize_pools(df: pd.DataFrame, main: str | None = None) -> dict[str, pd.DataFrame]:
    iv = df[df["metric"] != "threshold_rule"]
    out = {}
    g = iv.groupby(["model", "budget"])
    out["by_model"] = pd.DataFrame({
        "coverage": g["covered"].mean(), "n_intervals": g["covered"].count(), "mean_width": g["width"].mean(),
        "vetted_only_boot_width": g["vo_width"].mean(), "mae": g["abs_err"].mean(), "vetted_only_mae": g["vo_abs_err"].mean(),
    }).round(3)
    if main is None:
        main = "default" if (iv["model"] == "default").any() else iv["model"].iloc[0]
    d = iv[iv["model"] == main]
    g = d.groupby(["pool", "budget"])
    closer = d.assign(closer=d["abs_err"] < d["vo_abs_err"]).groupby(["pool", "budget"])["closer"].mean()
    out["default_by_pool"] = pd.DataFrame({
        "coverage": g["covered"].mean(), "n": g["covered"].count(), "mean_width": g["width"].mean(),
        "vetted_only_boot_width": g["vo_width"].mean(), "mae": g["abs_err"].mean(),
        "vetted_only_mae": g["vo_abs_err"].mean(), "closer_than_vetted_only": closer,
    }).round(3)
    g = d.groupby(["metric", "budget"])
    out["default_by_metric"] = pd.DataFrame({"coverage": g["covered"].mean(), "n": g["covered"].count(),
                                             "mean_width": g["width"].mean()}).round(3)
    tr = df[df["metric"] == "threshold_rule"]
    g = tr.groupby(["model", "budget"])
    out["threshold_rule"] = pd.DataFrame({
        "holds_when_met": g["covered"].mean(), "met": g["met"].mean(), "n": g["met"].count(),
    }).round(3)
    if "mix_weight" in d.columns and d["mix_weight"].notna().any():
        out["mixture"] = _mixture_table(d, ["pool", "budget"])
        cov = d.groupby(["pool", "budget"])["covered"].mean()
        out["worst_pool"] = cov.groupby("budget").agg(["min", "idxmin"]).rename(
            columns={"min": "worst_pool_coverage", "idxmin": "pool"})
        out["worst_pool"]["pool"] = [i[0] for i in out["worst_pool"]["pool"]]
    return out


def _mixture_table(d: pd.DataFrame, by: list) -> pd.DataFrame:
    """Per group: the mixture candidate's mean stacking weight, how often it got > 0.5, its
    sampler (share importance sampling), its Pareto k, and the stack's fit time per label set."""
    one = d.drop_duplicates([c for c in ("pool", "budget", "set", "trial") if c in d.columns])
    g = one.groupby(by)
    return pd.DataFrame({
        "mixture_weight_mean": g["mix_weight"].mean(), "mixture_weight_median": g["mix_weight"].median(),
        "share_weight_over_0.5": g["mix_weight"].apply(lambda w: float(np.mean(w > 0.5))),
        "share_importance": g["mix_sampler"].apply(lambda x: float(np.mean(x == "importance"))),
        "mixture_fit_s": g["mix_seconds"].mean(), "stack_fit_s": g["fit_s"].mean(), "n_sets": g["mix_weight"].count(),
    }).round(3)


def figure(df: pd.DataFrame, path: str, extra: pd.DataFrame | None = None) -> None:
    """Coverage of the 90% intervals per pool and budget, for every model (one panel per budget)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    iv = df[df["metric"] != "threshold_rule"]
    if extra is not None:
        iv = pd.concat([iv, extra[extra["metric"] != "threshold_rule"]])
    budgets = sorted(iv["budget"].unique())
    fig, axes = plt.subplots(1, len(budgets), figsize=(6 * len(budgets), 4.2), sharey=True, squeeze=False)
    models = list(dict.fromkeys(iv["model"]))
    pools = list(dict.fromkeys(iv["pool"]))
    width = 0.8 / len(models)
    for ax, b in zip(axes[0], budgets, strict=True):
        sub = iv[iv["budget"] == b]
        cov = sub.groupby(["pool", "model"])["covered"].mean()
        for j, m in enumerate(models):
            y = [cov.get((p, m), np.nan) for p in pools]
            ax.bar(np.arange(len(pools)) + (j - (len(models) - 1) / 2) * width, y, width,
                   label=m, color="k" if m == "default" else f"C{j}", alpha=0.9 if m == "default" else 0.6)
        ax.axhline(0.9, color="k", ls="--", lw=1)
        ax.axhline(0.75, color="tab:red", ls=":", lw=1)
        ax.set_xticks(np.arange(len(pools)), pools, rotation=35, ha="right", fontsize=8)
        ax.set_title(f"{b} random vetted labels", fontsize=10)
        ax.set_ylim(0, 1.02)
    axes[0][0].set_ylabel("coverage of the 90% intervals")
    axes[0][0].legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _md(df: pd.DataFrame) -> str:
    df = df.reset_index()
    cols = list(df.columns)
    lines = ["| " + " | ".join(map(str, cols)) + " |", "|" + "---|" * len(cols)]
    for _, r in df.iterrows():
        lines.append("| " + " | ".join(f"{v:.3f}" if isinstance(v, float) else str(v) for v in r.values) + " |")
    return "\n".join(lines)


def _candidates_note(which: str) -> str:
    if which == "current":
        return ""
    if which == "with-gated-mixture":
        return ("**Candidates: `default + gated mixture`**: on scores outside [0, 1] (margins, log-odds) the "
                "default's two calibration curves plus a Normal pair on the scores as they are, fitted by importance "
                f"sampling and left out (weight 0) where the posterior predictive check of the score histogram gives "
                f"p < {GATE_P:g} (`ScoreMixturePosterior.ppc`, 100 draws); on probabilities the default alone. The "
                "question: does a generative model of the scores, let in only where it reproduces their histogram, "
                "sharpen the default without making it less honest? Rows named `default` are the current default "
                "rebuilt from the same candidate fits, the others the candidates alone.\n")
    return ("**Candidates: `default + mixture`** = `bayeval.fit(data, candidates=default_candidates(data) + "
            "[mixture_candidate(data.scores)])`: the logistic and the monotone calibration curve, and a score "
            "mixture chosen from the scores' scale alone -- a Normal pair on the scores as they are when any score "
            "is negative (margins, log-odds), else the SPE paper's Gamma / truncated-Normal pair with "
            "`transform='auto'` (min-max mapped for scores in [0, 1], as they are for positive scores beyond 1). "
            "Everything else (pools, label sets, seeds, metrics) as in the committed runs with `bayeval.fit`; "
            "rows named `default + mixture` are the stack, `default` the current default (the two curves "
            "stacked: in the pools part rebuilt from the same candidate fits as `bayeval.fit` makes it, in the "
            "generated part `bayeval.fit` itself), the others the candidates alone.\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=["pools", "mixture", "ppi", "generated"], default="pools")
    ap.add_argument("--sets", type=int, default=20, help="label sets per pool and budget")
    ap.add_argument("--budgets", type=int, nargs="+", default=None)
    ap.add_argument("--trials", type=int, default=300, help="PPI part: trials per setting and budget")
    ap.add_argument("--setting", choices=["calibrated", "miscalibrated"], nargs="+",
                    default=["calibrated", "miscalibrated"], help="PPI part: which settings (default both)")
    ap.add_argument("--pools", nargs="+", default=None, help="only these pools")
    ap.add_argument("--heldout", action="store_true", help="the held-out pools (evaluated once the default was fixed)")
    ap.add_argument("--quick", action="store_true", help="two pools, 3 label sets (the tests' version)")
    ap.add_argument("--out", default=None, help="write a Markdown results file here")
    ap.add_argument("--csv", default=None, help="write the raw rows here")
    ap.add_argument("--figure", default=None, help="pools part: write the coverage figure (PNG) here")
    ap.add_argument("--with-mixture", default=None,
                    help="pools part: the mixture part's CSV, added to the tables and the figure")
    ap.add_argument("--from-csv", default=None, help="make the tables from an earlier run's --csv instead of running")
    ap.add_argument("--against", default=None,
                    help="mixture part: the pools part's --csv (the default on the same label sets), for a side-by-side "
                         "table")
    ap.add_argument("--candidates", choices=CANDIDATE_SETS, default="current",
                    help="pools/generated parts: the default's own candidates (bayeval.fit), or those plus one score "
                         "mixture chosen from the scores' scale (mixture_candidate)")
    args = ap.parse_args(argv)
    t0 = time.time()
    _git_rev()  # the code as the run starts
    cmd = "python benchmarks/real_scores.py " + " ".join(sys.argv[1:] if argv is None else argv)
    if args.part in ("pools", "mixture"):
        quick = ["breast_cancer_logreg", "wine_svm_margin"]
        pools = make_heldout_pools() if args.heldout else make_pools(quick if args.quick else args.pools)
        if args.quick:
            pools = [p for p in pools if p.name in quick]
            args.sets = min(args.sets, 3)
        if args.pools:
            pools = [p for p in pools if p.name in args.pools]
        budgets = args.budgets or [30, 100]
        if args.from_csv:
            df = pd.read_csv(args.from_csv)
        else:
            df = run_pools(pools, budgets, args.sets, mixture=args.part == "mixture", candidates=args.candidates)
        extra = pd.read_csv(args.with_mixture) if args.with_mixture else None
        if args.figure:
            figure(df, args.figure, extra)
        main_name = main_label(args.candidates) if args.part == "pools" else None
        tables = summarize_pools(df if extra is None else pd.concat([df, extra]), main_name)
        heading = "The default" if main_name in (None, "default") else f"The stack `{main_name}`"
        title, intro = "# Real classifiers' scores: does the default's 90% interval hold?\n", ""
        if args.part == "mixture":
            heading = "The score mixture"
            title = "# The SPE score mixture on the same real classifiers' label sets\n"
            intro = ("The SPE paper's pair (Gamma negatives, truncated-Normal positives, min-max mapped scores: "
                     "bayeval's default before `bayeval.fit`), fitted with NUTS (2 chains x 500 draws after 500 tuning "
                     f"steps) to the first {args.sets} of the 20 label sets of {', '.join(map(str, budgets))} labels of "
                     "each pool of `real_scores.md` -- the same labels the default saw.\n")
        whole = args.part == "pools" and not args.pools and not args.quick and args.candidates == "current"
        if whole and args.heldout:
            title = "# Held-out real classifiers: does the default's 90% interval hold?\n"
            intro = ("These six pools were defined before the default was fixed and evaluated only after it was: no "
                     "choice of model, prior or candidate looked at them.\n")
        elif whole:
            title = "# Real classifiers' scores (the pools that chose the default): does its 90% interval hold?\n"
            intro = ("The default's priors and candidates were chosen on these nine pools (see docs/validation.md); "
                     "the held-out pools are in real_scores_heldout.md.\n")
        text = [title, *([intro] if intro else []),
                f"Made by `{cmd}` in {time.time() - t0:.0f} s with {_versions()}.\n",
                _candidates_note(args.candidates) if args.part == "pools" else "",
                "## Pools\n", _md(pd.DataFrame([{"pool": p.name, "N": p.scores.size, "prevalence": round(float(p.truth.mean()), 3),
                                                 "scores": p.kind, "threshold": p.threshold, "precision floor": p.floor,
                                                 "classifier": p.note} for p in pools]).set_index("pool")),
                f"\n## {heading}, pool by pool (all metrics pooled)\n", _md(tables["default_by_pool"]),
                f"\n## {heading}, metric by metric (all pools pooled)\n", _md(tables["default_by_metric"]),
                "\n## Every model (the default and each of its candidates alone)\n", _md(tables["by_model"]),
                "\n## The threshold rule: precision >= floor with probability 0.9\n",
                "`holds_when_met`: share of label sets whose recommended threshold truly has precision >= floor, "
                "among those where the rule said a threshold meets it; `met`: share where one did.\n",
                _md(tables["threshold_rule"])]
        if "mixture" in tables:
            text += ["\n## The stack with the mixture: worst pool, the mixture's weight, fit time\n",
                     "Worst pool: the lowest coverage of `" + main_name + "` over the pools (all metrics pooled).\n",
                     _md(tables["worst_pool"]),
                     "\n`mixture_weight_*`: the mixture candidate's stacking weight per label set; "
                     "`share_importance`: share of its fits done by importance sampling (in the rest its Pareto k "
                     "was above 0.7 and the stack left the mixture out, weight 0: no NUTS fallback); `mixture_fit_s`: its sampling time; `stack_fit_s`: the whole stack's fit per label "
                     "set (wall time, on a shared 2-core machine).\n",
                     _md(tables["mixture"])]
        if args.part == "mixture" and args.against:
            side, rule = side_by_side(df, pd.read_csv(args.against))
            text += [f"\n## Side by side with the default on the same {args.sets} label sets per pool\n",
                     f"The default's rows are those of `{pathlib.Path(args.against).name}` (the pools part's per-set rows) "
                     "on the same pools, budgets and label sets.\n", _md(side), "\n" + rule]
    elif args.part == "generated":
        df = run_generated(args.sets, candidates=args.candidates)
        g = df.groupby(["model", "metric"])
        tab = pd.DataFrame({"coverage": g["covered"].mean(), "n": g["covered"].count(), "mean_width": g["width"].mean(),
                            "mae": g["abs_err"].mean()}).round(3)
        g2 = df.groupby("model")
        pooled = pd.DataFrame({"coverage": g2["covered"].mean(), "n": g2["covered"].count(),
                               "mean_width": g2["width"].mean(), "mae": g2["abs_err"].mean()}).round(3)
        text = ["# Where the score mixture is right: scores drawn from its own families\n",
                f"Made by `{cmd}` in {time.time() - t0:.0f} s with {_versions()}.\n",
                f"{args.sets} trials: 2,000 items, 30% positive, negatives Gamma(2, 0.1), positives |Normal(0.7, 0.12)|, "
                "30 random vetted labels; the mixture with the true families (NUTS, 2 x 500 draws) and the default on the "
                "same labels. Metrics: AP, P@20, and precision, recall and F1 at 0.5.\n",
                _candidates_note(args.candidates),
                "## Pooled over metrics\n", _md(pooled), "\n## By metric\n", _md(tab)]
        if args.candidates != "current":
            d = df[df["model"] == main_label(args.candidates)]
            text += ["\n## The stack with the mixture: the mixture's weight and fit time\n",
                     "Columns as in `real_scores_with_mixture.md`: the mixture candidate's stacking weight, the share "
                     "of its fits done by importance sampling (the rest: left out), its sampling time, and the "
                     "stack's fit time per trial (s).\n",
                     _md(_mixture_table(d.assign(all="all trials"), ["all"]))]
    else:
        budgets = args.budgets or [50, 100, 200]
        if args.from_csv:
            df = pd.concat([pd.read_csv(f) for f in args.from_csv.split(",")])
        else:
            df = run_ppi(budgets, args.trials, settings=tuple(args.setting))
        g = df.groupby(["setting", "metric", "budget", "method"])
        tab = pd.DataFrame({"coverage": g["covered"].mean(), "n": g["covered"].count(), "mean_width": g["width"].mean()}).round(3)
        text = ["# The default against prediction-powered inference (PPI++)\n",
                f"Made by `{cmd}` in {time.time() - t0:.0f} s with {_versions()}, ppi-python.\n",
                "90% intervals for the accuracy and the precision of the rule q >= 0.5 on a pool of 10,000 items, "
                "drawn anew in every trial (p ~ Beta(1, 2), y ~ Bernoulli(p)); the classifier reports q; the labels "
                "are a random sample of `budget` items. PPI++ (ppi-python's `ppi_mean_ci`, power-tuned) targets "
                "the mean over items: of 1[prediction correct] (accuracy) and of y among predicted positives "
                "(precision), with q as its prediction.\n", _md(tab)]
    if args.csv:
        df.to_csv(args.csv, index=False)
    out = "\n".join(t for t in text if t) + "\n"  # an empty part (no note) leaves no blank line
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(out)
    print(out)
    return df


if __name__ == "__main__":
    main()
