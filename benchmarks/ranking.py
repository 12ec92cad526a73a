"""Speed and certified accuracy of the ranking percentile Q.

Run: ``python benchmarks/ranking.py`` (add ``--quick`` to skip the slowest rows).

Rows:

- distinct theta (uniform on (0, 1)), N = 1e3, 1e4, 1e5, for tol = 1e-3, 1e-4,
  1e-5: wall time, the certified bound, and a consistency check against the
  tightest run (|q_tol - q_ref| must be <= bound_tol + bound_ref);
- theta from 5 and 15 votes per pair (few distinct values, exact method);
- posterior-style batch: 400 draws x 4 rankings of N = 300 pairs.

Each timing is the best of ``--repeat`` runs (default 3).
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np

from bayeval.rankings.percentile import ranking_percentile


def _best_time(fn, repeat):
    best, out = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def distinct(sizes, tols, repeat, seed=0):
    rng = np.random.default_rng(seed)
    print("distinct theta ~ U(0, 1); ranking drawn from the human model (Q ~ uniform)")
    print(f"{'N':>8} {'tol':>7} {'time [s]':>9} {'Q':>11} {'bound':>9} {'method':>8} {'check':>6}")
    for n in sizes:
        theta = rng.uniform(size=n)
        r = (rng.uniform(size=n) < theta).astype(int)
        rows = []
        for tol in tols:
            t, res = _best_time(
                lambda tol=tol, theta=theta, r=r: ranking_percentile(
                    theta, r, tol=tol, return_bound=True
                ),
                repeat,
            )
            rows.append((tol, t, res))
        ref = rows[-1][2]
        for tol, t, res in rows:
            ok = abs(float(res.q) - float(ref.q)) <= float(res.bound) + float(ref.bound)
            print(
                f"{n:>8} {tol:>7.0e} {t:>9.3f} {float(res.q):>11.7f} {float(res.bound):>9.2e} "
                f"{str(res.method):>8} {'ok' if ok else 'FAIL':>6}"
            )


def grouped(sizes, repeat, seed=1):
    rng = np.random.default_rng(seed)
    print("\ntheta from votes (few distinct values; exact method when small enough)")
    print(
        f"{'N':>8} {'votes':>6} {'groups':>7} {'time [s]':>9} {'Q':>11} {'bound':>9} {'method':>8}"
    )
    for n, m in itertools.product(sizes, (5, 15)):
        true = rng.beta(0.6, 0.6, size=n)
        theta = rng.binomial(m, true) / m
        theta = np.clip(theta, 0.5 / m, 1 - 0.5 / m)  # keep every ranking possible
        r = (rng.uniform(size=n) < theta).astype(int)
        t, res = _best_time(
            lambda theta=theta, r=r: ranking_percentile(theta, r, return_bound=True), repeat
        )
        groups = np.unique(np.minimum(theta, 1 - theta)).size
        print(
            f"{n:>8} {m:>6} {groups:>7} {t:>9.3f} {float(res.q):>11.7f} {float(res.bound):>9.2e} "
            f"{str(res.method):>8}"
        )


def batch(repeat, seed=2):
    rng = np.random.default_rng(seed)
    n = 300
    base = rng.beta(0.5, 0.5, size=n)
    theta = np.clip(base + 0.05 * rng.normal(size=(2, 200, 1, n)), 1e-3, 1 - 1e-3)
    rankings = (rng.uniform(size=(4, n)) < base).astype(int)
    print("\nposterior-style batch: theta (2 chains, 200 draws, 300 pairs) x 4 rankings")
    print(f"{'tol':>7} {'time [s]':>9} {'per Q [ms]':>11} {'max bound':>10}")
    for tol in (1e-2, 1e-3):
        t, res = _best_time(
            lambda tol=tol: ranking_percentile(theta, rankings, tol=tol, return_bound=True), repeat
        )
        print(
            f"{tol:>7.0e} {t:>9.3f} {1e3 * t / res.q.size:>11.3f} {float(res.bound.max()):>10.2e}"
        )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="skip tol=1e-5 and grouped N=1e5")
    args = parser.parse_args(argv)
    tols = (1e-3, 1e-4) if args.quick else (1e-3, 1e-4, 1e-5)
    distinct((1_000, 10_000, 100_000), tols, args.repeat)
    grouped((300, 10_000) if args.quick else (300, 100_000), args.repeat)
    batch(args.repeat)


if __name__ == "__main__":
    main()
