"""Speed and memory of the metric kernels.

Measures, in one run, on D label draws x N items:

* average_precision, precision_at_k and the PR curve on a 101-point recall grid
  over all draws at once, against
  (a) a loop calling the scikit-learn function per draw, and
  (b) the floor: one ``np.cumsum`` along the item axis over the same label array;
* ``Posterior.metric("average_precision")`` for 1,000,000 items x 4,000 draws, with
  its peak memory (tracemalloc of numpy allocations, and the process's peak RSS).

Run: ``python benchmarks/metrics.py`` (``--quick`` for a small version). Ratios are
printed; times are best-of-``--repeat``, since the machines are shared and noisy. The
memory part runs in a fresh process so that its peak RSS is its own.
"""

from __future__ import annotations

import os

# Single-threaded BLAS for every contender: the machines are 2-core and shared, and a
# fair ratio needs the same resources on both sides.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import resource  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402


def best_of(fn, repeat):
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def kernels(n_draws, n_items, repeat, sk_draws):
    from sklearn.metrics import average_precision_score, precision_recall_curve

    from bayeval.core import metrics

    rng = np.random.default_rng(0)
    scores = rng.normal(size=n_items)
    p = 1 / (1 + np.exp(-2 * scores - 1))
    labels = (rng.random((n_draws, n_items)) < p).astype(np.int8)
    grid = np.linspace(0, 1, 101)
    k = 100

    def cumsum_floor():
        np.cumsum(labels, axis=-1)

    # scikit-learn per draw: timed on sk_draws draws and scaled (the loop is linear in D)
    sub = labels[:sk_draws]

    def sk_ap():
        for row in sub:
            average_precision_score(row, scores)

    def sk_pr():
        for row in sub:
            prec, rec, _ = precision_recall_curve(row, scores)
            # precision at the first threshold reaching each recall level
            idx = np.searchsorted(-rec[::-1], -grid)  # rec descending when reversed
            _ = prec[::-1][np.minimum(idx, rec.size - 1)]

    order = np.argsort(-scores, kind="stable")[:k]

    def sk_pak():
        for row in sub:
            row[order].mean()  # sklearn has no P@K for binary labels; the obvious loop

    scale = n_draws / sk_draws
    rows = []
    floors = []
    for name, ours, theirs in [
        ("average_precision", lambda: metrics.average_precision(labels, scores), sk_ap),
        ("precision_at_k (k=100)", lambda: metrics.precision_at_k(labels, scores, k=k), sk_pak),
        ("PR curve, 101 recall levels", lambda: metrics.precision_at_recall(labels, scores, recall=grid), sk_pr),
    ]:
        # alternate floor and kernel so both see the same load; keep the best of each
        t_floor, t_ours = np.inf, np.inf
        for _ in range(repeat):
            t_floor = min(t_floor, best_of(cumsum_floor, 1))
            t_ours = min(t_ours, best_of(ours, 1))
        t_sk = best_of(theirs, 1) * scale
        floors.append(t_floor)
        rows.append((name, t_ours, t_sk, t_sk / t_ours, t_ours / t_floor))
    floor = min(floors)
    print(f"\nKernels on D={n_draws} draws x N={n_items} items "
          f"(floor: np.cumsum over the labels = {floor:.3f} s; "
          f"sklearn loop timed on {sk_draws} draws and scaled)")
    print(f"{'metric':32s} {'ours [s]':>9s} {'sklearn loop [s]':>17s} {'speed-up':>9s} {'/ floor':>8s}")
    for name, a, b, su, fl in rows:
        print(f"{name:32s} {a:9.3f} {b:17.2f} {su:8.1f}x {fl:7.2f}x")
    return rows


def posterior_memory(n_items, n_draws, chains):
    from bayeval import EvalData, Posterior

    rng = np.random.default_rng(1)
    scores = rng.normal(size=n_items)
    p = 1 / (1 + np.exp(-2 * scores - 1))
    labels = np.full(n_items, np.nan)
    vetted = rng.choice(n_items, 1000, replace=False)
    labels[vetted] = (rng.random(vetted.size) < p[vetted]).astype(float)
    data = EvalData(scores, labels)
    post = Posterior.from_probabilities(data, p, draws=n_draws // chains, chains=chains, random_seed=2)
    tracemalloc.start()
    t0 = time.perf_counter()
    ap = post.metric("average_precision")
    elapsed = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB -> GiB
    print(f"\nPosterior.metric('average_precision'): N={n_items:,} items x {n_draws:,} draws "
          f"in {elapsed:.1f} s; peak traced allocations {peak / 2**30:.2f} GiB; "
          f"process peak RSS {rss:.2f} GiB; AP mean {float(ap.mean()):.4f}")
    return peak


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--part", choices=["all", "kernels", "memory"], default="all")
    args = ap.parse_args()
    if args.part in ("all", "kernels"):
        kernels(*((100, 10_000, 2, 20) if args.quick else (1000, 100_000, args.repeat, 100)))
    if args.part == "memory":
        posterior_memory(*((100_000, 200, 2) if args.quick else (1_000_000, 4000, 4)))
    elif args.part == "all":
        # in a fresh process, so that its peak RSS is the posterior's alone
        import subprocess
        import sys

        cmd = [sys.executable, __file__, "--part", "memory"] + (["--quick"] if args.quick else [])
        subprocess.run(cmd, check=True)


if __name__ == "__main__":
    main()
