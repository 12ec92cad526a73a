"""The ``bayeval`` command."""

from __future__ import annotations

import argparse
import sys

import numpy as np

__all__ = ["main"]


def _demo(args: argparse.Namespace) -> int:
    from . import Posterior, metrics, vetted_only
    from .datasets import load_breast_cancer_scores

    frame = load_breast_cancer_scores(as_frame=True)
    data = load_breast_cancer_scores()
    post = Posterior.from_probabilities(data, data.scores, draws=args.draws, random_seed=args.seed)
    wanted = {
        "average precision": "average_precision",
        "precision@20": ("precision_at_k", {"k": 20}),
        "precision (predictions)": "precision",
        "recall (predictions)": "recall",
        "F1 (predictions)": "f_score",
    }
    table = post.summary(wanted, hdi_prob=args.hdi_prob)
    truth = frame["true_label"].to_numpy()
    table["vetted only"] = [float(vetted_only(data, m if isinstance(m, str) else m[0], **({} if isinstance(m, str) else m[1]))) for m in wanted.values()]
    table["truth"] = [
        float(metrics.average_precision(truth, data.scores)),
        float(metrics.precision_at_k(truth, data.scores, k=20)),
        float(metrics.precision(truth, data.predictions)),
        float(metrics.recall(truth, data.predictions)),
        float(metrics.f_score(truth, data.predictions)),
    ]
    print("bayeval demo: a logistic regression on the breast-cancer data")
    print(f"  {data.n_items} items, {data.n_vetted} vetted ({data.n_vetted_positive} malignant).")
    print("  Unvetted labels are drawn from the classifier's own probabilities (assumed calibrated);")
    print(f"  {args.draws} label draws, seed {args.seed}.\n")
    with np.printoptions(precision=3):
        import pandas as pd

        with pd.option_context("display.float_format", "{:.3f}".format, "display.width", 120):
            print(table)
    print("\n'truth' uses every true label (known only because this is an example).")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bayeval", description="Bayesian evaluation of classifiers.")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="credible-interval summary of the bundled example")
    demo.add_argument("--draws", type=int, default=2000, help="label draws (default 2000)")
    demo.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    demo.add_argument("--hdi-prob", type=float, default=0.94, help="HDI probability (default 0.94)")
    demo.set_defaults(func=_demo)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
