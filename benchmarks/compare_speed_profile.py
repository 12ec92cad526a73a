"""Where the time goes when 5 classifiers are compared on 10^5 items, against one model's fit.

The pool of ``compare_active.speed_pool`` (5 simulated classifiers sharing noise, 100
vetted labels), 300 draws per chain (2 chains) to keep a run short on a shared machine.
Both routes are called once at 50 draws first (compiling what a first call compiles),
then timed; the compare call runs under cProfile, whose top lines are printed.

Run::

    python benchmarks/compare_speed_profile.py > benchmarks/results/compare_speed.txt
"""

import argparse
import cProfile
import os
import pathlib
import pstats
import sys
import time
import warnings

import bayeval as be

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from compare_active import speed_pool  # noqa: E402


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="Profile bayeval.compare of 5 classifiers on 10^5 items "
                                                 "against one model's fit (prints the timings and the top "
                                                 "cProfile lines).")
    parser.add_argument("--draws", type=int, default=300, help="draws per chain of the timed fits (default 300)")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    scores, lab = speed_pool()
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
    print(f"bayeval from {pathlib.Path(be.__file__).parent}; load average {os.getloadavg()}")
    for name, cand in getattr(cmp.posterior, "candidates", {"model": cmp.posterior}).items():
        s = cand.sampling
        print(f"  {name}: {s.sampler}, Pareto k {s.pareto_k:.2f}, batched log-density {s.extra.get('batched')}, "
              f"batched map {s.extra.get('batched_outputs')}, {s.seconds:.1f} s {s.fallback_reason}")
    pstats.Stats(pr).sort_stats("cumulative").print_stats(25)


if __name__ == "__main__":
    main()
