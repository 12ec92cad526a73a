"""Where the time goes when 5 classifiers are compared on 10^5 items, against one model's fit.

The pool of ``compare_active.main_speed`` (5 simulated classifiers sharing noise, 100
vetted labels), 300 draws per chain (2 chains) to keep a run short on a shared machine.
Both routes are called once at 50 draws first (compiling what a first call compiles),
then timed; the compare call runs under cProfile, whose top lines are printed.

Run::

    python benchmarks/compare_speed_profile.py > benchmarks/results/compare_speed.txt
"""

import argparse
import cProfile
import pstats
import time
import warnings

import numpy as np

import bayeval as be


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="Profile bayeval.compare of 5 classifiers on 10^5 items "
                                                 "against one model's fit (prints the timings and the top "
                                                 "cProfile lines).")
    parser.add_argument("--draws", type=int, default=300, help="draws per chain of the timed fits (default 300)")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(0)
    n = 100_000
    y = rng.random(n) < 0.1
    shared = rng.normal(0, 1, n)
    scores = {f"m{k}": 1 / (1 + np.exp(-((1.5 + 0.2 * k) * y + 0.7 * shared + rng.normal(0, 0.7, n) - 2.0)))
              for k in range(5)}
    lab = np.full(n, np.nan)
    idx = rng.choice(n, 100, replace=False)
    lab[idx] = y[idx]
    D = args.draws
    be.fit(be.EvalData(scores["m0"], lab), random_seed=0, draws=50, warn=False)  # first calls: compile
    be.compare(scores, lab, random_seed=0, draws=50, warn=False)
    t = time.perf_counter()
    post = be.fit(be.EvalData(scores["m0"], lab), random_seed=1, draws=D, warn=False)
    t1 = time.perf_counter() - t
    post.metric("average_precision", progressbar=False)
    t2 = time.perf_counter() - t
    pr = cProfile.Profile()
    pr.enable()
    t = time.perf_counter()
    cmp = be.compare(scores, lab, random_seed=1, draws=D, warn=False)
    t3 = time.perf_counter() - t
    cmp.metric("average_precision")
    t4 = time.perf_counter() - t
    pr.disable()
    print(f"one fit {t1:.2f} fit+AP {t2:.2f} | compare {t3:.2f} compare+5AP {t4:.2f} ratio {t4 / t2:.2f}")
    pstats.Stats(pr).sort_stats("cumulative").print_stats(25)


if __name__ == "__main__":
    main()
