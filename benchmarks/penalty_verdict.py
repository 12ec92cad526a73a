"""The rule of ``benchmarks/results/penalty_prereg.md``: the default's curves with
Jeffreys' penalty where the vetted labels are separable (``Calibration(penalty="auto")``).

Reads the rows of ``benchmarks/real_scores.py --candidates penalty-auto`` on the tuning
pools and on the held-out pools (each run fits the candidate and the current default on the
same label sets: rows ``default, penalty auto`` and ``default``) and writes, per part, the
four conditions of the rule with their figures, the label sets where the penalty fired, and
the verdict.

Run::

    python benchmarks/penalty_verdict.py --tuning benchmarks/results/penalty_pools.csv \\
        --heldout benchmarks/results/penalty_heldout.csv --out benchmarks/results/penalty.md
"""

from __future__ import annotations

import argparse
import pathlib
import sys

import numpy as np
import pandas as pd

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import real_scores as R  # noqa: E402

CAND, BASE = "default, penalty auto", "default"


def conditions(df: pd.DataFrame) -> tuple[list[dict], pd.DataFrame]:
    """The rule's four conditions on one part's rows, and the per-pool coverage table."""
    iv = df[(df["metric"] != "threshold_rule") & df["model"].isin([CAND, BASE])]
    cov = iv.groupby("model")["covered"].mean()
    by_pool = iv.pivot_table(index="pool", columns="model", values="covered", aggfunc="mean")
    by_pool["change"] = by_pool[CAND] - by_pool[BASE]
    th = df[(df["metric"] == "threshold_rule") & df["model"].isin([CAND, BASE])]
    said = th[th["met"].astype(bool)]
    hold = said.groupby("model")["covered"].mean()
    n_said = said.groupby("model").size()
    ap30 = iv[(iv["metric"] == "AP") & (iv["budget"] == 30)].groupby("model")["width"].mean()
    worst = by_pool["change"].idxmin()
    rows = [
        {"condition": "1. pooled coverage >= the default's - 0.005",
         "default": f"{cov[BASE]:.3f}", "candidate": f"{cov[CAND]:.3f}",
         "met": bool(cov[CAND] >= cov[BASE] - 0.005)},
        {"condition": "2. no pool's coverage falls by more than 0.05",
         "default": "-", "candidate": f"largest fall {-by_pool['change'].min():+.3f} ({worst})",
         "met": bool(by_pool["change"].min() >= -0.05)},
        {"condition": "3. precision-floor threshold: truly met where said, share >= the default's",
         "default": f"{hold[BASE]:.3f} of {int(n_said[BASE])}", "candidate": f"{hold[CAND]:.3f} of {int(n_said[CAND])}",
         "met": bool(hold[CAND] >= hold[BASE])},
        {"condition": "4. mean AP width at 30 labels grows by at most 15%",
         "default": f"{ap30[BASE]:.3f}", "candidate": f"{ap30[CAND]:.3f} ({ap30[CAND] / ap30[BASE] - 1:+.1%})",
         "met": bool(ap30[CAND] <= 1.15 * ap30[BASE])},
    ]
    return rows, by_pool


def fired(df: pd.DataFrame) -> pd.DataFrame:
    """Per pool and budget: the label sets where the candidate's fit differs from the default's
    (the penalty fired in some candidate), and the two models' coverage and width on them."""
    iv = df[(df["metric"] != "threshold_rule") & df["model"].isin([CAND, BASE])]
    key = ["pool", "budget", "set", "metric"]
    c = iv[iv["model"] == CAND].set_index(key)
    d = iv[iv["model"] == BASE].set_index(key)
    diff = ((c["mean"] - d["mean"]).abs() + (c["width"] - d["width"]).abs()).groupby(level=["pool", "budget", "set"]).max()
    keys = diff[diff > 1e-12].index
    if not len(keys):
        return pd.DataFrame()
    pick = lambda x: x[x.index.droplevel("metric").isin(keys)]  # noqa: E731
    c, d = pick(c), pick(d)
    g = ["pool", "budget"]
    out = pd.DataFrame({
        "sets": c.reset_index().groupby(g)["set"].nunique(),
        "default coverage": d.groupby(level=g)["covered"].mean(),
        "candidate coverage": c.groupby(level=g)["covered"].mean(),
        "default width": d.groupby(level=g)["width"].mean(),
        "candidate width": c.groupby(level=g)["width"].mean(),
    })
    return out.round(3)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tuning", required=True, help="rows of real_scores.py --candidates penalty-auto (tuning pools)")
    ap.add_argument("--heldout", default=None, help="the same on the held-out pools (--heldout)")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    parts = [("tuning pools", args.tuning)] + ([("held-out pools", args.heldout)] if args.heldout else [])
    lines = ["# Jeffreys' penalty where the vetted labels are separable: the rule's verdict", "",
             f"Made by `python benchmarks/penalty_verdict.py {' '.join(sys.argv[1:] if argv is None else argv)}` "
             f"with {R._versions()}. The rule: `benchmarks/results/penalty_prereg.md` (written before the runs).", ""]
    verdicts = []
    for name, path in parts:
        df = pd.read_csv(path)
        rows, by_pool = conditions(df)
        ok = all(r["met"] for r in rows)
        verdicts.append(ok)
        n_sets = df.groupby(["pool", "budget"])["set"].nunique()
        lines += [f"## {name} (`{path}`: {df['pool'].nunique()} pools, budgets "
                  f"{', '.join(map(str, sorted(df['budget'].unique())))}, {int(n_sets.min())}-{int(n_sets.max())} "
                  "label sets each)", "", R._md(pd.DataFrame(rows).set_index("condition")), "",
                  f"**{'all four conditions met' if ok else 'not met'}** on the {name}.", "",
                  "Coverage per pool (all metrics and budgets):", "", R._md(by_pool.round(3)), ""]
        f = fired(df)
        if not f.empty:
            lines += ["The label sets where the penalty fired (the candidate's fit differs from the default's), "
                      "with both models' coverage and mean width there:", "", R._md(f), ""]
    adopt = all(verdicts) and len(verdicts) == 2
    lines += ["## Verdict", "", ("**Rule met on both parts: the candidate may become the default.**" if adopt else
              "**Rule not met" + ("" if len(verdicts) == 2 else " (the held-out part is missing)")
              + ": the default does not change; `penalty` stays an option.**"), ""]
    pathlib.Path(args.out).write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
