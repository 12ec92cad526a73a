"""SPE score mixture: speed, binned-vs-exact accuracy, interval coverage, digits study.

Parts (``--part``):

* ``speed``: fits at N = 1,000, 10,000, 100,000, 1,000,000 items (exact and binned
  likelihood), timed after a warm-up fit of the same structure (so the C compilation
  is cached), with the ratios against N = 10,000; and, at 100,000 items, how much
  binning moves the posterior (AP and precision at fixed recall levels).
* ``sampler``: nutpie against PyMC's NUTS on the same fits (first fit, with
  compilation, and a second fit of the same structure), for three family pairs on
  the digits probabilities and for 100,000 simulated items (binned).
* ``coverage``: data simulated from the model; how often the 90% intervals of AP and
  of precision at recall 0.25/0.5/0.75 cover the true *sample* value.
* ``modes``: how often chains land in different modes (max r_hat > 1.05) on the
  digits data, for the chains' starting points (``init="labels"`` jittered, EM start
  jittered, EM start without jitter = the default) and without the ordering
  potential, for two family pairs.
* ``mappings``: the bundled model cards' real scores of each kind (probabilities of
  a logistic regression, margins of a linear SVM, log-odds of gradient boosting),
  every candidate family pair on the maps that suit it: AP against the true AP,
  PSIS-LOO (what ``ScoreMixture.auto`` ranks by), the predictive check, r_hat.
* ``digits``: scikit-learn's digits data, one-vs-rest logistic regression with
  cross-validated scores; for each digit as the positive class and several random
  sets of 20 vetted labels, the area between the estimated and the true PR curve, for
  SPE (posterior median curve) and for the naive estimate from the 20 labels alone.

Run: ``python benchmarks/spe.py --part speed`` (``--quick`` for small versions).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from bayeval import EvalData
from bayeval.core import metrics
from bayeval.models import ScoreMixture

FIT = {"progressbar": False, "warn": False, "cores": 1}
GRID = np.linspace(0, 1, 101)


def simulate(n, n_vetted, seed, pi=0.3):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < pi).astype(int)
    s = np.where(y == 1, np.abs(rng.normal(0.7, 0.12, n)), rng.gamma(2.0, 0.1, n))
    s = np.maximum(s, 1e-4)
    labels = np.full(n, np.nan)
    idx = rng.choice(n, n_vetted, replace=False)
    labels[idx] = y[idx]
    return EvalData(s, labels), y


def speed(sizes, draws, chains):
    print(f"\nFit time ({chains} chains x {draws} draws + {draws} tune, after a warm-up fit)")
    ScoreMixture(binned=False).fit(simulate(500, 20, 0)[0], draws=50, tune=50, chains=1, random_seed=0, **FIT)
    ScoreMixture(binned=True).fit(simulate(500, 20, 0)[0], draws=50, tune=50, chains=1, random_seed=0, **FIT)
    times = {}
    for n in sizes:
        data, _ = simulate(n, 50, n)
        for binned in (False, True):
            if not binned and n > 200_000:
                continue  # the exact likelihood at 1e6 items takes far too long on 2 cores
            t0 = time.perf_counter()
            ScoreMixture(binned=binned).fit(data, draws=draws, tune=draws, chains=chains, random_seed=1, **FIT)
            times[(n, binned)] = time.perf_counter() - t0
            print(f"  N={n:>9,}  {'binned' if binned else 'exact ':6s}  {times[(n, binned)]:7.1f} s", flush=True)
    ref = 10_000 if 10_000 in sizes else sizes[0]
    for binned in (False, True):
        base = times.get((ref, binned))
        if base:
            ratios = ", ".join(f"N={n:,}: {times[(n, binned)] / base:.2f}x" for n in sizes if (n, binned) in times)
            print(f"  {'binned' if binned else 'exact'} relative to N={ref:,}: {ratios}")
    return times


def sampler_speed(draws):
    try:
        import nutpie  # noqa: F401
    except ImportError:
        print("\nnutpie is not installed: nothing to compare.")
        return
    proba, target = digits_scores()
    _, _, labels = digit_labels(target, 4, 0)
    digits_data = EvalData(proba[:, 4], labels)
    big, _ = simulate(100_000, 50, 5)
    cases = [
        ("digits 1,797", digits_data, ("gamma", "truncnormal", "auto")),
        ("digits 1,797", digits_data, ("normal", "normal", "logit")),
        ("digits 1,797", digits_data, ("skewnormal", "skewnormal", "logit")),
        ("simulated 100,000", big, ("gamma", "truncnormal", "auto")),
    ]
    print(f"\nnutpie vs PyMC NUTS (2 chains x {draws} draws + {draws} tune, one core; first fit / second fit)")
    for name, data, (neg, pos, tr) in cases:
        cells = []
        for sampler in ("pymc", "nutpie"):
            times = []
            for seed in (0, 1):
                t0 = time.perf_counter()
                ScoreMixture(neg, pos, transform=tr).fit(data, draws=draws, tune=draws, chains=2, random_seed=seed,
                                                         sampler=sampler, **FIT)
                times.append(time.perf_counter() - t0)
            cells.append(f"{sampler} {times[0]:6.1f} / {times[1]:6.1f} s")
        print(f"  {name:18s} {neg + '/' + pos + '/' + tr:30s} " + "   ".join(cells), flush=True)


def binning_accuracy(n, draws, chains):
    data, y = simulate(n, 50, 7)
    out = {}
    for binned in (False, True):
        post = ScoreMixture(binned=binned).fit(data, draws=draws, tune=draws, chains=chains, random_seed=3, **FIT)
        out[binned] = (
            post.metric("average_precision").values.ravel(),
            post.metric("precision_at_recall", recall=[0.25, 0.5, 0.75]).values.reshape(-1, 3),
        )
    ap_e, ap_b = out[False][0], out[True][0]
    pr_e, pr_b = out[False][1], out[True][1]
    print(f"\nBinned vs exact likelihood at N={n:,} (2000 bins):")
    print(f"  AP  exact {ap_e.mean():.4f} +- {ap_e.std():.4f}   binned {ap_b.mean():.4f} +- {ap_b.std():.4f}"
          f"   |diff of means| = {abs(ap_e.mean() - ap_b.mean()):.4f} ({abs(ap_e.mean() - ap_b.mean()) / ap_e.std():.2f} sd)")
    for j, r in enumerate((0.25, 0.5, 0.75)):
        d = abs(pr_e[:, j].mean() - pr_b[:, j].mean())
        print(f"  precision@recall {r}: exact {pr_e[:, j].mean():.4f}  binned {pr_b[:, j].mean():.4f}  "
              f"|diff| = {d:.4f} ({d / pr_e[:, j].std():.2f} sd)")


def coverage(trials, n, n_vetted, draws):
    hits = np.zeros(4)
    for t in range(trials):
        data, y = simulate(n, n_vetted, 1000 + t)
        # the model the data were simulated from
        model = ScoreMixture("gamma", "truncnormal", transform="identity")
        post = model.fit(data, draws=draws, tune=draws, chains=2, random_seed=t, **FIT)
        ap = post.metric("average_precision").values.ravel()
        par = post.metric("precision_at_recall", recall=[0.25, 0.5, 0.75]).values.reshape(-1, 3)
        true = np.r_[metrics.average_precision(y, data.scores), metrics.precision_at_recall(y, data.scores, recall=[0.25, 0.5, 0.75])]
        draws_all = np.column_stack([ap, par])
        lo, hi = np.quantile(draws_all, [0.05, 0.95], axis=0)
        hits += (lo <= true) & (true <= hi)
        print(f"  trial {t + 1}/{trials}: running coverage {np.round(hits / (t + 1), 2)}", flush=True)
    cov = hits / trials
    se = np.sqrt(0.9 * 0.1 / trials)
    print(f"\n90% interval coverage over {trials} trials (N={n}, {n_vetted} vetted; MC s.e. {se:.3f}):")
    for name, c in zip(["AP", "P@R=0.25", "P@R=0.5", "P@R=0.75"], cov, strict=True):
        print(f"  {name:9s} {c:.3f}")


def digits_scores():
    """Cross-validated one-vs-rest logistic-regression probabilities on sklearn's digits."""
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_predict
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, target = load_digits(return_X_y=True)
    clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    return cross_val_predict(clf, X, target, cv=5, method="predict_proba"), target


def digit_labels(target, digit, rep, n=20):
    """The rep-th random set of n vetted labels for one digit (same sets in every part)."""
    y = (target == digit).astype(int)
    rng = np.random.default_rng(100 * digit + rep)
    idx = rng.choice(y.size, n, replace=False)
    labels = np.full(y.size, np.nan)
    labels[idx] = y[idx]
    return y, idx, labels


MODE_SETTINGS = {
    "labels start, jittered": {"init": "labels"},
    "EM start, jittered": {"init": "em", "_jitter": True},
    "EM start (default)": {"init": "em"},
    "EM start, no ordering": {"init": "em", "order_components": False},
}


def modes(label_sets, draws, pairs=(("gamma", "truncnormal", "auto"), ("normal", "normal", "logit"))):
    proba, target = digits_scores()
    print(f"\nSpurious modes on digits (4 chains x {draws} draws, {label_sets} label set(s) of 20 per digit):")
    print("fits whose chains disagree (max r_hat > 1.05) and mean area between PR curves")
    for neg, pos, tr in pairs:
        for name, opts in MODE_SETTINGS.items():
            bad, areas = 0, []
            for digit in range(10):
                s = proba[:, digit]
                for rep in range(label_sets):
                    y, _, labels = digit_labels(target, digit, rep)
                    true = metrics.precision_at_recall(y, s, recall=GRID)
                    model = ScoreMixture(neg, pos, transform=tr, **{k: v for k, v in opts.items() if k != "_jitter"})
                    if "_jitter" in opts:
                        model._jitter = opts["_jitter"]
                    post = model.fit(EvalData(s, labels), draws=draws, tune=draws, chains=4, random_seed=rep, **FIT)
                    bad += post.check(warn=False)["max_rhat"] > 1.05
                    est = np.median(post.metric("precision_at_recall", recall=GRID).values.reshape(-1, GRID.size), axis=0)
                    areas.append(np.trapezoid(np.abs(est - true), GRID))
            n = 10 * label_sets
            print(f"  {neg}/{pos}/{tr:6s} {name:24s} disagree {bad:2d}/{n}   area {np.mean(areas):.3f}", flush=True)


CARD_CANDIDATES = {
    "probability": (("gamma", "truncnormal", "minmax"), ("lognormal", "beta", "minmax"), ("normal", "normal", "logit"),
                    ("studentt", "studentt", "logit"), ("skewnormal", "skewnormal", "logit")),
    "real": (("gamma", "truncnormal", "minmax"), ("lognormal", "truncnormal", "minmax"), ("normal", "normal", "identity"),
             ("studentt", "studentt", "identity"), ("skewnormal", "skewnormal", "identity")),
}
CARDS = (("breast_cancer_logreg", "probability"), ("digits_svm", "real"), ("rare_fraud_gbm", "real"))


def mappings(draws):
    import pandas as pd
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "models"
    print(f"\nScore maps on real classifier scores (2 chains x {draws} draws); AP median [90% interval]")
    print(f"{'card':22s} {'families / map':36s} {'AP':>22s} {'true':>6s} {'elpd':>10s} {'ppc p':>6s} {'r_hat':>6s}")
    for card, kind in CARDS:
        df = pd.read_csv(root / card / "scores.csv")
        data = EvalData(df["score"].to_numpy(float), df["label"].to_numpy(float))
        true_ap = metrics.average_precision(df["truth"].to_numpy(int), data.scores)
        rows = []
        for neg, pos, tr in CARD_CANDIDATES[kind]:
            try:
                post = ScoreMixture(neg, pos, transform=tr).fit(data, draws=draws, tune=draws, chains=2, random_seed=1, **FIT)
            except Exception as exc:  # noqa: BLE001 - a study: report and go on
                print(f"{card:22s} {neg + '/' + pos + '/' + tr:36s} failed: {exc}")
                continue
            ap = post.metric("average_precision").values.ravel()
            lo, med, hi = np.quantile(ap, [0.05, 0.5, 0.95])
            elpd = float(post.elpd_pointwise(items=np.random.default_rng(0).choice(data.n_items, min(data.n_items, 5000), replace=False))[0].mean()) * data.n_items
            rows.append(elpd)
            print(f"{card:22s} {neg + '/' + pos + '/' + tr:36s} {med:.3f} [{lo:.3f}, {hi:.3f}]{'*' if lo <= true_ap <= hi else ' '} "
                  f"{true_ap:6.3f} {elpd:10.1f} {post.ppc(n_draws=100)['p_value']:6.2f} {post.check(warn=False)['max_rhat']:6.2f}", flush=True)
    print("(* = the interval covers the true AP; elpd on the original score scale, subsampled to 5,000 items and scaled)")


DIGIT_MODELS = (("gamma", "truncnormal", "auto"), ("normal", "normal", "logit"), ("skewnormal", "skewnormal", "logit"))


def digits(label_sets, draws, models=DIGIT_MODELS):
    """Area between estimated and true PR curves per digit; AP interval coverage; and
    the candidate PSIS-LOO prefers (what ``ScoreMixture.auto`` would return)."""
    proba, target = digits_scores()
    names = ["/".join(m) for m in models]
    print(f"\nDigits, one-vs-rest logistic regression, {label_sets} set(s) of 20 random labels per digit")
    print("area between the estimated (posterior median) and the true PR curve, mean over label sets")
    print(f"{'digit':>5s} " + " ".join(f"{n:>28s}" for n in names) + f" {'best elpd':>10s} {'naive':>8s}")
    area = {n: [] for n in names + ["best elpd", "naive"]}
    cover = {n: [] for n in names + ["best elpd"]}
    picks = {n: 0 for n in names}
    for digit in range(10):
        s = proba[:, digit]
        row = {n: [] for n in area}
        for rep in range(label_sets):
            y, idx, labels = digit_labels(target, digit, rep)
            true = metrics.precision_at_recall(y, s, recall=GRID)
            true_ap = metrics.average_precision(y, s)
            data = EvalData(s, labels)
            best, best_elpd = None, -np.inf
            for name, (neg, pos, tr) in zip(names, models, strict=True):
                post = ScoreMixture(neg, pos, transform=tr).fit(data, draws=draws, tune=draws, chains=2, random_seed=rep, **FIT)
                est = np.median(post.metric("precision_at_recall", recall=GRID).values.reshape(-1, GRID.size), axis=0)
                a = float(np.trapezoid(np.abs(est - true), GRID))
                lo, hi = np.quantile(post.metric("average_precision").values, [0.05, 0.95])
                c = bool(lo <= true_ap <= hi)
                row[name].append(a)
                cover[name].append(c)
                elpd = float(post.elpd_pointwise()[0].sum())
                if elpd > best_elpd:
                    best, best_elpd = (name, a, c), elpd
            picks[best[0]] += 1
            row["best elpd"].append(best[1])
            cover["best elpd"].append(best[2])
            if y[idx].sum() > 0:  # the naive curve needs a vetted positive
                naive = metrics.precision_at_recall(y[idx], s[idx], recall=GRID)
                row["naive"].append(float(np.trapezoid(np.abs(naive - true), GRID)))
        for n in area:
            area[n] += row[n]
        cells = " ".join(f"{np.mean(row[n]):28.3f}" for n in names)
        naive = f"{np.mean(row['naive']):8.3f}" if row["naive"] else f"{'n/a':>8s}"
        print(f"{digit:>5d} {cells} {np.mean(row['best elpd']):10.3f} {naive}", flush=True)
    print(f"{'mean':>5s} " + " ".join(f"{np.mean(area[n]):28.3f}" for n in names)
          + f" {np.mean(area['best elpd']):10.3f} {np.mean(area['naive']):8.3f}")
    print("90% AP interval covers the true AP: "
          + ", ".join(f"{n} {np.mean(cover[n]):.2f}" for n in cover) + f" (of {10 * label_sets})")
    print("LOO picks: " + ", ".join(f"{n} {k}" for n, k in picks.items()))
    print(f"naive undefined (no vetted positive) in {10 * label_sets - len(area['naive'])} label sets")
    return area


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--part", choices=["speed", "sampler", "coverage", "modes", "mappings", "digits", "all"], default="all")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--model", nargs=3, action="append", default=None, metavar=("NEG", "POS", "TRANSFORM"),
                    help="a candidate for the digits part (repeat for several); default: "
                    + "; ".join(" ".join(m) for m in DIGIT_MODELS))
    ap.add_argument("--label-sets", type=int, default=None, help="label sets per digit (default 3; 1 quick)")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    if args.part in ("speed", "all"):
        sizes = [1_000, 10_000] if args.quick else [1_000, 10_000, 100_000, 1_000_000]
        speed(sizes, 200 if args.quick else 500, 2)
        binning_accuracy(10_000 if args.quick else 100_000, 300 if args.quick else 500, 2)
    if args.part in ("sampler", "all"):
        sampler_speed(200 if args.quick else 500)
    if args.part in ("coverage", "all"):
        coverage(6 if args.quick else 100, 500, 20, 300 if args.quick else 500)
    if args.part in ("modes", "all"):
        modes(1 if args.quick else 2, 200 if args.quick else 300)
    if args.part in ("mappings", "all"):
        mappings(300 if args.quick else 1000)
    if args.part in ("digits", "all"):
        sets = args.label_sets or (1 if args.quick else 3)
        digits(sets, 300 if args.quick else 500, tuple(tuple(m) for m in args.model) if args.model else DIGIT_MODELS)


if __name__ == "__main__":
    main()
