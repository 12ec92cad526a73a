"""Parts ``active`` and ``speed`` of ``benchmarks/compare.py`` (run them through it).

``active``: a labelling loop on simulated pairs whose true gap in AP is 0.02-0.03 (shared
noise between the classifiers, rho = 0.8, and independent noise). Every run of a rep starts
from the same 20 random labels; each round adds 20 labels chosen by

* ``random``: unvetted items at random;
* ``active``: ``Comparison.select`` at its defaults (the expected squared change of
  ``P(A better)``, the covariance taken through the model's probability of each label);
* ``active_labels``: the selection before that (the expected squared change of the gap's
  mean, the covariance taken through the drawn labels), kept here to measure against;
* ``disagreement``: the peer, a re-implementation of the simple active-model-selection
  rule "label where the classifiers disagree and the label is uncertain": the items with
  the largest ``p (1 - p) * |rank_A - rank_B|`` (``p``: the joint posterior's probability
  that the item is positive; ranks as shares of the pool);

and stops when ``Comparison.decided`` (``P(A better)`` above 0.95 or below 0.05) or at
300 labels. Reported: the labels needed to decide, and whether the decision was right.

``speed``: 5 classifiers on 10^5 items, ``bayeval.compare`` and the AP of every model,
against one ``bayeval.fit`` and its AP (both after a first call that compiled the models).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import pandas as pd

import bayeval as be
import compare as C
import real_scores as R

START, STEP, MAX_LABELS, LEVEL, DRAWS = 20, 20, 300, 0.95, 250


def _disagreement(cmp, n):
    p = cmp.posterior.item_probability().values
    ra = pd.Series(cmp.data.features[:, 0]).rank(pct=True).to_numpy()
    rb = pd.Series(cmp.data.features[:, 1]).rank(pct=True).to_numpy()
    score = p * (1 - p) * np.abs(ra - rb)
    score[cmp.data.vetted] = -np.inf
    return cmp.data.item_ids[np.argsort(-score, kind="stable")[:n]]


def _active_labels(cmp, n):
    """The earlier ``Comparison.select``: ``Cov(z_i, gap)^2 / Var(z_i)`` over the label draws."""
    post = cmp.posterior
    g = cmp.difference("A", "B").values
    gc = g - g.mean()
    sz, szg = np.zeros(post.data.n_items), np.zeros(post.data.n_items)
    for chain, draws, z in post.label_arrays():
        sz += z.sum(axis=0)
        szg += gc[chain, draws] @ z
    p, cov = sz / g.size, szg / g.size
    var = p * (1 - p)
    with np.errstate(all="ignore"):
        score = np.where(var > 0, cov ** 2 / np.where(var > 0, var, 1.0), 0.0)
    free = np.flatnonzero(~cmp.data.vetted)
    return cmp.data.item_ids[free[np.argsort(-score[free], kind="stable")][:n]]


STRATEGIES = ("random", "active", "active_labels", "disagreement")
PAIRS = (("act_2.2_2.0_0.8", 2.2, 2.0, 0.8), ("act_2.3_2.0_0.0", 2.3, 2.0, 0.0))


def run_loop(pair, strategy, rep, log=print, max_labels=None) -> dict:
    max_labels = MAX_LABELS if max_labels is None else max_labels
    rng = np.random.default_rng([rep, 11])
    n = pair.truth.size
    lab = np.full(n, np.nan)
    first = rng.choice(n, START, replace=False)
    lab[first] = pair.truth[first]
    pick_rng = np.random.default_rng([rep, 12, len(strategy)])
    while True:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cmp = be.compare({"A": pair.a, "B": pair.b}, lab, random_seed=rep, draws=DRAWS, warn=False)
        n_lab = int((~np.isnan(lab)).sum())
        verdict = cmp.decided("A", "B", level=LEVEL)
        if verdict is not None or n_lab >= max_labels:
            break
        if strategy == "random":
            ids = pick_rng.choice(np.flatnonzero(np.isnan(lab)), STEP, replace=False)
        elif strategy == "active":
            ids = cmp.select(STEP, "A", "B")
        elif strategy == "active_labels":
            ids = _active_labels(cmp, STEP)
        else:
            ids = _disagreement(cmp, STEP)
        lab[ids] = pair.truth[ids]
    right = None if verdict is None else (verdict == "A") == (pair.gap > 0)
    log(f"{pair.name} {strategy} rep {rep}: {n_lab} labels, verdict {verdict}, "
        f"P(A better) {cmp.prob_better('A', 'B'):.3f}")
    return {"pair": pair.name, "strategy": strategy, "rep": rep, "labels": n_lab, "decided": verdict is not None, "right": right,
            "p_final": cmp.prob_better("A", "B")}


def active_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per strategy: runs, the share decided by ``MAX_LABELS``, the share of wrong verdicts
    among the decided, and the median and mean labels (``MAX_LABELS`` where undecided)."""
    g = df.groupby("strategy")
    return pd.DataFrame({
        "runs": g.size(), "decided": g["decided"].mean(),
        "wrong_among_decided": g.apply(lambda d: (d["right"] == False).sum() / max(1, d["decided"].sum())),  # noqa: E712
        "median_labels": g["labels"].median(), "mean_labels": g["labels"].mean()}).round(3)


def paired_table(df: pd.DataFrame, against: str = "active") -> pd.DataFrame:
    """Each other strategy against ``against`` on the same reps (same first labels): the
    mean difference of the labels needed (other minus ``against``, undecided counted at
    ``MAX_LABELS``), its standard error over reps, and how often each needed fewer."""
    wide = df.pivot(index="rep", columns="strategy", values="labels")
    rows = []
    for s in wide.columns:
        if s == against:
            continue
        d = (wide[s] - wide[against]).dropna()
        rows.append({"strategy": s, "reps": d.size, "mean_extra_labels": d.mean(),
                     "se": d.std(ddof=1) / np.sqrt(d.size) if d.size > 1 else np.nan,
                     f"{against}_fewer": int((d > 0).sum()), "tie": int((d == 0).sum()),
                     "other_fewer": int((d < 0).sum())})
    return pd.DataFrame(rows).set_index("strategy").round(2)


def main_active(args, versions) -> str:
    pairs = [C.sim_pair(name, da, db, rho, n=3000) for name, da, db, rho in PAIRS]
    t0 = time.time()
    first = getattr(args, "first_set", 0)
    if args.from_csv:
        paths = args.from_csv.split(",")
        df = pd.concat([pd.read_csv(p) for p in paths], ignore_index=True)
        made = f"Tables from the rows of {', '.join(f'`{p}`' for p in paths)}, made by `python benchmarks/compare.py " \
               f"--part active --reps R --first-set F --out ...` (split over processes)"
    else:
        cap = getattr(args, "max_labels", None) or MAX_LABELS
        strategies = getattr(args, "strategies", None) or STRATEGIES
        if getattr(args, "only", None):
            pairs = [p for p in pairs if p.name.startswith(tuple(args.only))]
        rows = [dict(run_loop(pair, s, rep, log=lambda x: print(x, flush=True), max_labels=cap), max_labels=cap)
                for rep in range(first, first + args.reps) for pair in pairs for s in strategies]
        df = pd.DataFrame(rows)
        if args.out:
            df.to_csv(args.out.replace(".md", ".csv"), index=False)
        made = (f"Made by `python benchmarks/compare.py --part active --reps {args.reps}"
                + (f" --first-set {first}" if first else "") + f"` in {time.time() - t0:.0f} s")
    caps = sorted({int(c) for c in df["max_labels"].dropna()}) if "max_labels" in df else []
    cap = " or ".join(str(c) for c in caps) + " (the row's `max_labels`)" if len(caps) > 1 else (
        caps[0] if caps else MAX_LABELS)
    parts = [
        "# Labels that decide a comparison: random, active and a disagreement baseline",
        f"{made}; git {R._git_rev()}; {versions}.",
        f"Start: {START} random labels (the same for every strategy of a rep); rounds of {STEP}; stop when "
        f"P(A better) > {LEVEL} or < {1 - LEVEL:.2f}, or at {cap} labels (`labels` is then {cap}: "
        f"not decided, and the means count it so: a floor for `random`). {2 * DRAWS} posterior draws per round. "
        "`wrong_among_decided`: verdicts against the true sign of the gap.",
    ]
    for pair in pairs:
        d = df[df["pair"] == pair.name]
        if d.empty:
            continue
        parts += [f"## {pair.name}: {pair.note}; true gap in AP {pair.gap:+.4f} (A better); "
                  f"reps {int(d['rep'].min())}-{int(d['rep'].max())}",
                  R._md(active_table(d))]
        if "disagreement" in set(d["strategy"]) and d["strategy"].nunique() > 1:
            parts += ["Paired on the reps (each strategy minus `disagreement`, labels needed):",
                      R._md(paired_table(d, against="disagreement"))]
    return "\n\n".join(parts) + "\n"


def speed_pool(n: int = 100_000, n_models: int = 5, n_vetted: int = 100, seed: int = 0) -> tuple[dict, np.ndarray]:
    """The speed part's pool: ``n_models`` simulated classifiers sharing noise, ``n_vetted`` random labels.

    Returns ``(scores, labels)``: ``{"m0": ..., ...}`` (probabilities) and labels with NaN
    for the unvetted items.
    """
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.1
    shared = rng.normal(0, 1, n)
    scores = {f"m{k}": 1 / (1 + np.exp(-((1.5 + 0.2 * k) * y + 0.7 * shared + rng.normal(0, 0.7, n) - 2.0)))
              for k in range(n_models)}
    lab = np.full(n, np.nan)
    idx = rng.choice(n, n_vetted, replace=False)
    lab[idx] = y[idx]
    return scores, lab


def main_speed(args, versions) -> str:
    scores, lab = speed_pool()
    rows = []
    for attempt in ("first call (compiles)", "second call"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = time.perf_counter()
            post = be.fit(be.EvalData(scores["m0"], lab), random_seed=int(attempt == "second call"), warn=False)
            t_fit = time.perf_counter() - t
            post.metric("average_precision", progressbar=False)
            t_one = time.perf_counter() - t
            t = time.perf_counter()
            cmp = be.compare(scores, lab, random_seed=int(attempt == "second call"), warn=False)
            t_cfit = time.perf_counter() - t
            cmp.metric("average_precision")
            t_cmp = time.perf_counter() - t
        rows.append({"call": attempt, "one model: fit (s)": t_fit, "one model: fit + AP (s)": t_one,
                     "5 models: compare (s)": t_cfit, "5 models: compare + 5 APs (s)": t_cmp,
                     "ratio (with AP)": t_cmp / t_one})
        print(rows[-1], flush=True)
    return "\n\n".join([
        "# The cost of comparing 5 classifiers on 100,000 items",
        f"Made by `python benchmarks/compare.py --part speed` at git {R._git_rev()}; {versions}. "
        "100 vetted labels, 2 chains x 1000 draws; wall-clock seconds on a shared machine (other jobs ran).",
        R._md(pd.DataFrame(rows).set_index("call").round(2)),
    ]) + "\n"


if __name__ == "__main__":  # the parts run through compare.py; its options apply
    C.main()
