"""Is a human's ranking called human? The percentile Q of held-out human rankings.

A ranking drawn like a human's, but not among the votes the model was fitted to, should get
a percentile Q that is uniform on (0, 1): the verdict "distinguishable at epsilon" (Q > 1 -
epsilon) should then fall on a share epsilon of humans, no more. This study measures that
share for three readings of Q, and how often each flags a ranking that is *not* human-like
(the power):

* ``predictive`` (the default of ``RankingPosterior.percentile`` / ``summary``): Q among the
  human rankings predicted from the votes, each pair's choice drawn with the posterior mean
  of theta (theta's uncertainty integrated out);
* ``per_draw`` (``percentile(..., per_draw=True)``, the reading ``summary`` reported before):
  Q under each posterior draw of theta; the ranking is flagged when fewer than half the
  draws have Q <= 1 - epsilon (``p_indistinguishable < 0.5``), and the column ``Q`` is the
  mean over draws;
* ``point``: Q at the paper's point estimate of theta (``estimate_theta``: vote fractions,
  and the constrained MLE for unanimous pairs with confidence scores).

Settings (one held-out human per data set, ``--reps`` data sets each):

* ``beta-fixed``: theta ~ Beta(0.7, 0.7), 5 votes per pair, the model's prior the true one
  (``theta_prior=(0.7, 0.7)``): the model holds exactly;
* ``beta-hier``: the same data, the default hierarchical prior (its concentration learned);
* ``paper-conf`` / ``paper-votes``: data shaped like the ranking paper's (45% clear-cut pairs,
  theta ~ Beta(30, 1), the rest Beta(1.5, 1.5); 5 votes; pairs unanimous among them get 10
  more votes with confidence levels), fitted with a flat Dirichlet prior on each pair's
  confidence levels (``confidence_prior=1.0``, the default before this study), with
  ``use_confidence=False`` and with ``confidence_prior="pooled"`` (``paper-pooled``: one
  Dirichlet prior for all confident pairs, fitted to them; the default since);
* ``temp`` / ``rte``: real crowd votes (``benchmarks/data/crowd``: temporal ordering of two
  events, 462 pairs; textual entailment, 800 items read as pairs; 10 votes per item): one of
  each item's votes, chosen at random, is held out, so the held-out "human" ranking is made
  of real answers of many workers (one per item); the model is fitted to the other 9.

The non-human rankings: the held-out human's with a random 5% or 20% of its choices reversed
(``flip5`` / ``flip20``).

Run: ``python benchmarks/ranking_q.py [--reps N] [--pairs N]``; writes
``benchmarks/results/ranking_q.md``.
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from bayeval.rankings import HumanRanking, PairwiseVotes, ranking_percentile
from bayeval.rankings.percentile import estimate_theta

HERE = Path(__file__).parent
DATA = HERE / "data" / "crowd"
EPSILONS = (0.1, 0.05)
FLIPS = (0.05, 0.2)


def _git_rev() -> str:
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True,
                             text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", "../bayeval", "ranking_q.py"], cwd=HERE,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return rev + (" (with uncommitted changes)" if dirty else "")


def _versions() -> str:
    import arviz
    import pymc

    import bayeval

    return (f"bayeval {bayeval.__version__}, pymc {pymc.__version__}, arviz {arviz.__version__}, "
            f"numpy {np.__version__}, Python {platform.python_version()}")


def beta_data(rng, n_pairs, a=0.7, votes=5):
    theta = rng.beta(a, a, n_pairs)
    v = (rng.random((n_pairs, votes)) < theta[:, None]).astype(float)
    human = (rng.random(n_pairs) < theta).astype(int)
    return v, None, human


def paper_data(rng, n_pairs, first=5, extra=10):
    """The ranking paper's shape (as in notebooks/human_rankings.ipynb)."""
    clear = rng.random(n_pairs) < 0.45
    theta = np.where(clear, rng.beta(30, 1, n_pairs), rng.beta(1.5, 1.5, n_pairs))
    theta = np.where(rng.random(n_pairs) < 0.5, theta, 1 - theta)
    votes = np.full((n_pairs, first + extra), np.nan)
    conf = np.full_like(votes, np.nan)
    votes[:, :first] = rng.random((n_pairs, first)) < theta[:, None]
    head = votes[:, :first]
    unanimous = (head == 1).all(1) | (head == 0).all(1)
    for i in np.flatnonzero(unanimous):
        x = rng.random(extra) < theta[i]
        votes[i, first:] = x
        t = np.maximum(np.where(x, theta[i], 1 - theta[i]), 0.5)
        w = np.clip((t - 0.5) / 0.25, 0, 2)  # confidence levels whose mapped mean is t
        p = np.where(w[:, None] <= 1, np.stack([1 - w, w, 0 * w], 1), np.stack([0 * w, 2 - w, w - 1], 1))
        conf[i, first:] = [rng.choice(3, p=pi) for pi in p]
    human = (rng.random(n_pairs) < theta).astype(int)
    return votes, conf, human


def crowd_votes(name):
    df = pd.read_csv(DATA / f"{name}.csv", dtype={"item": str})
    if name == "temp":  # coded 1/2 in the source
        df["label"] -= 1
    groups = [g["label"].to_numpy(dtype=float) for _, g in df.groupby("item", sort=True)]
    width = max(len(g) for g in groups)
    out = np.full((len(groups), width), np.nan)
    for i, g in enumerate(groups):
        out[i, : len(g)] = g
    return out


def crowd_data(rng, all_votes):
    """One vote per item held out (a random one): the held-out human; the rest are the votes."""
    votes = all_votes.copy()
    n = votes.shape[0]
    human = np.empty(n, dtype=int)
    for i in range(n):
        answered = np.flatnonzero(np.isfinite(votes[i]))
        j = rng.choice(answered)
        human[i] = int(votes[i, j])
        votes[i, j] = np.nan
    return votes, None, human


def readings(post, votes, conf, ranking, eps, model):
    pred = float(post.percentile(ranking, tol=1e-2))
    draws = post.percentile(ranking, tol=1e-2, per_draw=True).values.ravel()
    point_theta = estimate_theta(votes, conf, mapping=model.mapping).theta
    point = float(ranking_percentile(point_theta, ranking, tol=1e-2))
    out = {"predictive": (pred, {e: pred > 1 - e for e in eps}),
           "per_draw": (float(draws.mean()), {e: np.mean(draws <= 1 - e) < 0.5 for e in eps}),
           "point": (point, {e: point > 1 - e for e in eps})}
    return out


def run_setting(name, make, model, reps, seed):
    rows = []
    rng = np.random.default_rng(seed)
    for rep in range(reps):
        votes, conf, human = make(rng)
        others = {}
        for f in FLIPS:
            machine = human.copy()
            flip = rng.random(human.size) < f
            machine[flip] = 1 - machine[flip]
            others[f"flip{round(100 * f)}"] = machine
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            post = model.fit(PairwiseVotes(votes, conf), draws=500, chains=2, random_seed=seed + rep,
                             progressbar=False)
        for who, r in (("human", human), *others.items()):
            for reading, (q, flagged) in readings(post, votes, conf, r, EPSILONS, model).items():
                rows.append({"setting": name, "rep": rep, "ranking": who, "reading": reading, "Q": q,
                             **{f"flag_{e}": bool(f) for e, f in flagged.items()}})
    return rows


def table(df):
    flips = [f"flip{round(100 * f)}" for f in FLIPS]
    lines = ["| setting | reading | human: mean Q | human: share Q < 0.1 | human flagged at 0.1 "
             "| human flagged at 0.05 | " + " | ".join(f"{m} flagged at 0.1 | {m} flagged at 0.05" for m in flips)
             + " |", "|---|---|---|---|---|---|" + "---|---|" * len(flips)]
    for (setting, reading), g in df.groupby(["setting", "reading"], sort=False):
        h = g[g.ranking == "human"]
        cells = [f"{g[g.ranking == m][f'flag_{e}'].mean():.2f}" for m in flips for e in EPSILONS]
        lines.append(
            f"| {setting} | {reading} | {h.Q.mean():.2f} | {np.mean(h.Q < 0.1):.2f} "
            f"| {h['flag_0.1'].mean():.2f} | {h['flag_0.05'].mean():.2f} | " + " | ".join(cells) + " |"
        )
    se = np.sqrt(0.1 * 0.9 / df[df.ranking == "human"].groupby(["setting", "reading"]).size().min())
    return lines, se


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--pairs", type=int, default=300)
    ap.add_argument("--only", nargs="*", default=None, help="settings to run (default: all)")
    ap.add_argument("--out", default=str(HERE / "results" / "ranking_q.md"))
    args = ap.parse_args(argv)
    t0, revision = time.perf_counter(), _git_rev()
    n = args.pairs
    settings = {
        "beta-fixed": (lambda rng: beta_data(rng, n), HumanRanking(theta_prior=(0.7, 0.7))),
        "beta-hier": (lambda rng: beta_data(rng, n), HumanRanking()),
        "paper-conf": (lambda rng: paper_data(rng, n), HumanRanking(confidence_prior=1.0)),
        "paper-votes": (lambda rng: paper_data(rng, n), HumanRanking(use_confidence=False)),
        "paper-pooled": (lambda rng: paper_data(rng, n), HumanRanking(confidence_prior="pooled")),
    }
    temp, rte = crowd_votes("temp"), crowd_votes("rte")
    settings["temp"] = (lambda rng: crowd_data(rng, temp), HumanRanking())
    settings["rte"] = (lambda rng: crowd_data(rng, rte), HumanRanking())
    rows = []
    for k, (name, (make, model)) in enumerate(settings.items()):
        if args.only and name not in args.only:
            continue
        t = time.perf_counter()
        rows += run_setting(name, make, model, args.reps, seed=1000 * (k + 1))
        print(f"{name}: {time.perf_counter() - t:.0f} s", file=sys.stderr, flush=True)
    df = pd.DataFrame(rows)
    lines, se = table(df)
    command = "python benchmarks/ranking_q.py " + " ".join(sys.argv[1:] if argv is None else argv)
    head = [
        "# The percentile Q of held-out human rankings: called human?",
        "",
        f"Made by `{command.strip()}` at git {revision} with {_versions()}; "
        f"{(time.perf_counter() - t0) / 60:.1f} min. {args.reps} data sets per setting, "
        f"{n} pairs in the simulated ones (see the script's docstring for the settings and readings).",
        "",
        "A human's ranking should be flagged (called distinguishable from humans) at a rate of at most "
        f"epsilon: 0.10 at 0.1 and 0.05 at 0.05 (Monte Carlo sd of a rate near 0.1: {se:.3f}); its mean Q "
        "should be near 0.5 and its share of Q below 0.1 near 0.1 (at least 0.1 where many pairs share a "
        "predicted theta: Q counts only strictly more probable rankings, so ties push it down). The non-human "
        "rankings (the human's with 5% or 20% of its choices reversed: flip5, flip20) should be flagged as "
        "often as possible.",
        "",
    ]
    Path(args.out).write_text("\n".join(head + lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
