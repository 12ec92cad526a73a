"""The precision-floor threshold on a few label sets of one pool: what it chooses and why.

For each label set (the same random orders and designed batches as
``benchmarks/label_efficiency.py``), fits the default (``bayeval.fit``) and records:

* the labels vetted among the exact 1.0s and the scores in [1 - 1e-7, 1) (with their positives),
  and the fitted rate of each block (the mean of ``item_probability`` over it);
* the posterior precision (mean, 90% HDI) at threshold 1.0 and at the pool's threshold, and the
  true one;
* for each precision floor: what ``recalibrate(min_precision=floor, prob=0.9)`` says (met or
  not, the threshold, how many items it flags, its probability, the posterior precision there)
  and the true precision of that threshold.

A cheap reproduction (seconds per fit) instead of the whole label-efficiency study. Results:
``benchmarks/results/threshold_floor_digits5.md``. Run::

    python benchmarks/threshold_floor.py --budgets 100 200 --sets 6 --out rows.jsonl
    python benchmarks/threshold_floor.py --report rows.jsonl
"""

from __future__ import annotations

import argparse
import collections
import json
import pathlib
import sys
import time
import warnings
import zlib

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def _blocks(s):
    return {"one": s == 1.0, "near": (s >= 1 - 1e-7) & (s < 1)}


def _row(pool, idx, route, budget, rep, floors) -> dict:
    import bayeval as be
    import label_efficiency as LE

    s, y = pool.scores, pool.truth
    blocks = _blocks(s)
    t0 = time.perf_counter()
    post = LE._fit(LE._labelled(pool, idx), rep)
    secs = time.perf_counter() - t0
    pi = post.item_probability()
    r = {"pool": pool.name, "route": route, "budget": budget, "set": rep, "seconds": round(secs, 1)}
    for name, m in blocks.items():
        r[f"vetted_{name}"] = int(m[idx].sum())
        r[f"vetted_{name}_pos"] = int(y[idx][m[idx]].sum())
        r[f"rate_{name}"] = float(pi[m].mean()) if m.any() else float("nan")
        r[f"true_rate_{name}"] = float(y[m].mean()) if m.any() else float("nan")
    for thr in (1.0, pool.threshold):
        v = post.metric("precision", threshold=thr).values.ravel()
        lo, hi = be.hdi(v, 0.9)
        r[f"precision_at_{thr:g}"] = [float(v.mean()), float(lo), float(hi), float(y[s >= thr].mean())]
    for floor in floors:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rec = be.recalibrate(post, min_precision=floor, prob=0.9)
        f = s >= rec.threshold
        at = rec.at_threshold().loc["precision"].values
        r[f"floor_{floor:g}"] = {
            "met": bool(rec.met), "threshold": float(rec.threshold), "flagged": int(f.sum()),
            "probability": float(rec.probability_at_threshold), "posterior_precision": [float(x) for x in at[[0, 2, 3]]],
            "true_precision": float(y[f].mean()), "holds": bool(y[f].mean() >= floor),
            "reachable": bool(LE.floor_reachable(pool, rec.probability["threshold"].values, rec.min_flagged, floor))}
    return r


def run(pool_name, budgets, sets, routes, floors, out) -> None:
    import real_scores as R
    from bayeval.active import design

    pool = [p for p in R.make_pools([pool_name]) if p.name == pool_name][0]
    n = pool.scores.size
    with open(out, "a") as fh:
        for rep in sets:
            order = np.random.default_rng([0, rep, zlib.crc32(pool.name.encode())]).permutation(n)
            for b in budgets:
                for route in routes:
                    idx = order[:b] if route == "random" else design(pool.scores, b,
                                                                     random_seed=np.random.default_rng([0, rep, b, 1]))
                    r = _row(pool, idx, route, b, rep, floors)
                    fh.write(json.dumps(r) + "\n")
                    fh.flush()
                    print(f"{pool.name} {route} {b} set {rep}: {r['seconds']} s", flush=True)


def report(paths) -> str:
    rows = [json.loads(line) for p in paths for line in open(p) if line.strip()]
    groups = collections.defaultdict(list)
    for r in rows:
        groups[(r["pool"], r["route"], r["budget"])].append(r)
    floors = sorted({k for r in rows for k in r if k.startswith("floor_")})
    lines = ["| pool | route | budget | sets | fitted rate of the 1.0s / near-1s (truth) | precision at 1.0: covered, "
             "mean error | precision at the pool's threshold: covered, mean error | "
             + " | ".join(f"{f.replace('_', ' ')}: met, holds when met, right, flagged (median)" for f in floors) + " |",
             "|---|---|---:|---:|---|---|---|" + "---|" * len(floors)]
    for (pool, route, b), rs in sorted(groups.items()):
        n = len(rs)
        cells = [pool, route, str(b), str(n),
                 f"{np.mean([r['rate_one'] for r in rs]):.3f} / {np.mean([r['rate_near'] for r in rs]):.3f} "
                 f"({rs[0]['true_rate_one']:.3f} / {rs[0]['true_rate_near']:.3f})"]
        keys = [k for k in rs[0] if k.startswith("precision_at_")]
        for k in keys:
            cov = sum(r[k][1] - 1e-9 <= r[k][3] <= r[k][2] + 1e-9 for r in rs)
            err = np.mean([r[k][0] - r[k][3] for r in rs])
            cells.append(f"{cov}/{n}, {err:+.3f}")
        for f in floors:
            met = [r[f]["met"] for r in rs]
            held = [r[f]["holds"] for r in rs if r[f]["met"]]
            right = sum((r[f]["met"] and r[f]["holds"]) or (not r[f]["met"] and not r[f]["reachable"]) for r in rs)
            cells.append(f"{sum(met)}/{n}, {sum(held)}/{len(held)}, {right}/{n}, "
                         f"{int(np.median([r[f]['flagged'] for r in rs]))}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pool", default="digits5_nb_prob")
    ap.add_argument("--budgets", type=int, nargs="+", default=[100, 200])
    ap.add_argument("--sets", type=int, default=6, help="label sets 0 .. sets-1")
    ap.add_argument("--routes", nargs="+", default=["random", "design"], choices=["random", "design"])
    ap.add_argument("--floors", type=float, nargs="+", default=[0.6, 0.3])
    ap.add_argument("--out", default="threshold_floor.jsonl", help="rows, one JSON line each (appended)")
    ap.add_argument("--report", nargs="+", metavar="JSONL", help="print the table of these rows' files and stop")
    a = ap.parse_args(argv)
    if a.report:
        print(report(a.report))
        return
    run(a.pool, a.budgets, range(a.sets), a.routes, a.floors, a.out)


if __name__ == "__main__":
    main()
