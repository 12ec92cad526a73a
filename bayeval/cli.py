"""The ``bayeval`` command."""

from __future__ import annotations

import argparse
import sys

__all__ = ["main"]


def _demo(args: argparse.Namespace) -> int:
    import pandas as pd

    from . import metrics, recalibrate, vetted_only
    from .datasets import load_breast_cancer_scores
    from .models import ScoreMixture

    frame = load_breast_cancer_scores(as_frame=True)
    data = load_breast_cancer_scores()
    print("bayeval demo: a logistic regression on the breast-cancer data (positive = malignant)")
    print(f"  {data.n_items} items, {data.n_vetted} vetted ({data.n_vetted_positive} malignant).")
    print("  Model: SPE score mixture, Gamma negatives / truncated-Normal positives (scores min-max mapped).")
    print(f"  Sampling {args.chains} chains x {args.draws} draws (seed {args.seed})...", flush=True)
    post = ScoreMixture("gamma", "truncnormal").fit(
        data, draws=args.draws, tune=args.draws, chains=args.chains, random_seed=args.seed, progressbar=False, warn=False
    )
    wanted = {
        "average precision": ("average_precision", {}),
        "precision@100": ("precision_at_k", {"k": 100}),
        "precision (predictions)": ("precision", {}),
        "recall (predictions)": ("recall", {}),
        "F1 (predictions)": ("f_score", {}),
    }
    table = post.summary(wanted, hdi_prob=args.hdi_prob)
    table["vetted only"] = [float(vetted_only(data, m, **kw)) for m, kw in wanted.values()]
    truth = frame["true_label"].to_numpy()
    x = {"average_precision": data.scores, "precision_at_k": data.scores}
    table["truth"] = [float(getattr(metrics, m)(truth, x.get(m, data.predictions), **kw)) for m, kw in wanted.values()]
    with pd.option_context("display.float_format", "{:.3f}".format, "display.width", 120):
        print()
        print(table)
    rec = recalibrate(post, min_precision=0.95, min_recall=0.9)
    print(f"\nThreshold for precision >= 0.95 and recall >= 0.9: {rec.threshold:.3f} "
          f"(holds with probability {rec.probability_at_threshold:.2f}).")
    diag = post.check(warn=False)
    print(f"Sampler: max r_hat {diag['max_rhat']:.3f}, min bulk ESS {diag['min_ess_bulk']:.0f}, "
          f"{diag['divergences']} divergences.")
    ppc = post.ppc(n_draws=100, random_seed=args.seed)
    verdict = (
        "the families do NOT reproduce the score histogram: intervals may be biased "
        "(compare families with ScoreMixture.auto)"
        if ppc["p_value"] < 0.05
        else "no evidence of misfit"
    )
    print(f"Posterior predictive check of the scores: p = {ppc['p_value']:.2f} ({verdict}).")
    print(f"'vetted only' uses the {data.n_vetted} vetted items alone (NaN: fewer vetted items than k); "
          "'truth' uses every true label (known only because this is an example).")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bayeval", description="Bayesian evaluation of classifiers.")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="credible-interval summary of the bundled example")
    demo.add_argument("--draws", type=int, default=1000, help="posterior draws per chain (default 1000)")
    demo.add_argument("--chains", type=int, default=2, help="chains (default 2)")
    demo.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    demo.add_argument("--hdi-prob", type=float, default=0.94, help="HDI probability (default 0.94)")
    demo.set_defaults(func=_demo)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
