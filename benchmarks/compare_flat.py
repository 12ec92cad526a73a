"""The rule of ``benchmarks/results/compare_flat_prereg.md``: flat ends of the joint curve where the vetted labels are separable.

Reads the default's committed rows (``bayeval.compare``'s default for two classifiers,
route ``joint_std_sd0.25``) and the candidate's rows on the label sets where it fires
(``joint_std_sd0.25_flatauto``, made with ``benchmarks/compare.py --flat-only``); elsewhere
the candidate is the default's model with the default's seed, so the default's row stands
for it. Writes the four conditions of the rule, each with its figures, and the verdict.

Run (the candidate's rows first; the commands are in the results file's head)::

    python benchmarks/compare_flat.py --default benchmarks/results/compare_sd_fresh.csv \\
        benchmarks/results/compare_sd_third.csv --flat ROWS.csv [ROWS.csv ...] \\
        --out benchmarks/results/compare_flat.md
"""

from __future__ import annotations

import argparse
import pathlib
import sys

import numpy as np
import pandas as pd

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import compare as C  # noqa: E402

DEFAULT, FLAT = "joint_std_sd0.25", "joint_std_sd0.25_flatauto"
KEY = ["pair", "budget", "rep"]


def panel_of(pair: str) -> str:
    return {"tab": "tabular", "real": "real"}.get(pair.split("_")[0], "random")


def load(default_files, flat_files) -> pd.DataFrame:
    """The default's rows and the candidate's (flat rows where it fired, else the default's), one frame."""
    d = pd.concat([pd.read_csv(f, comment="#") for f in default_files], ignore_index=True)
    d = d[d["route"] == DEFAULT].drop_duplicates(KEY, keep="last")
    f = pd.concat([pd.read_csv(x, comment="#") for x in flat_files], ignore_index=True)
    f = f[f["route"] == FLAT].drop_duplicates(KEY, keep="last")
    f = f[f.set_index(KEY).index.isin(d.set_index(KEY).index)]
    fired = f.set_index(KEY).index
    cand = pd.concat([d[~d.set_index(KEY).index.isin(fired)].assign(route=FLAT), f], ignore_index=True)
    cols = ["pair", "budget", "rep", "route", "true_gap", "p", "mean", "lo", "hi"]
    out = C._finish(pd.concat([d[cols], cand[cols]], ignore_index=True))
    out["panel"] = out["pair"].map(panel_of)
    out["fired"] = out.set_index(KEY).index.isin(fired)
    return out


def coverage_table(df: pd.DataFrame, only_fired: bool = False) -> pd.DataFrame:
    d = df[df["fired"]] if only_fired else df
    by = ["panel"] if only_fired else ["panel", "budget"]
    g = d.groupby(by + ["route"])
    t = pd.DataFrame({"coverage": g["covered"].mean(), "median_width": g["width"].median(), "runs": g.size()})
    return t.unstack("route").round(3)


def reliability_misses(df: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for panel, g in df.groupby("panel"):
        r = C.reliability_both_ways(g)
        for route, rr in r.groupby(level="route"):
            rows.append({"panel": panel, "route": route, "largest_bin_miss": float(rr["observed_minus_stated"].abs().max()),
                         "bins": "; ".join(f"{b}: {m:+.3f} ({n})" for (_, b), m, n in
                                           zip(rr.index, rr["observed_minus_stated"], rr["runs"], strict=True))})
    return pd.DataFrame(rows).set_index(["panel", "route"])


def misranked_table(df: pd.DataFrame) -> pd.DataFrame:
    d = df[df["true_gap"].abs() >= 0.02]
    return d.groupby(["panel", "budget", "route"])["misranked"].mean().unstack("route").round(3)


def disagreements(df: pd.DataFrame) -> pd.DataFrame:
    """Where the candidate fires, per panel and budget: the label sets that only the default
    covers and those that only the candidate covers (with their true gaps' sizes), and the
    candidate's median width over the default's."""
    d = df[df["fired"]]
    w = d.pivot_table(index=KEY, columns="route", values=["covered", "width", "true_gap"], aggfunc="first")
    w = w.reset_index()
    w["panel"] = w["pair"].map(panel_of)
    rows = []
    for (panel, budget), g in w.groupby(["panel", "budget"]):
        cov_d, cov_f = g[("covered", DEFAULT)].astype(bool), g[("covered", FLAT)].astype(bool)
        gap = g[("true_gap", DEFAULT)].abs()
        lost, gained = gap[cov_d & ~cov_f], gap[~cov_d & cov_f]
        rows.append({"panel": panel, "budget": budget, "fired": len(g),
                     "lost": len(lost), "lost_abs_gap": f"{lost.min():.3f}-{lost.max():.3f}" if len(lost) else "-",
                     "gained": len(gained), "gained_abs_gap": f"{gained.min():.3f}-{gained.max():.3f}" if len(gained) else "-",
                     "width_ratio": round(float(g[("width", FLAT)].median() / g[("width", DEFAULT)].median()), 2)})
    return pd.DataFrame(rows).set_index(["panel", "budget"])


def verdict(df: pd.DataFrame) -> tuple[list[tuple[str, bool, str]], bool]:
    cov = df.groupby(["panel", "budget", "route"])["covered"].mean().unstack("route")
    c1 = bool(((cov[FLAT] >= cov[DEFAULT] - 0.01).all())
              and (cov.loc["tabular", FLAT] >= 0.85).all()) if "tabular" in cov.index.get_level_values(0) else False
    rel = reliability_misses(df)["largest_bin_miss"].unstack("route")
    c2 = bool(("random" not in rel.index or rel.loc["random", FLAT] <= 0.05)
              and all(rel.loc[p, FLAT] <= rel.loc[p, DEFAULT] + 0.02 for p in rel.index if p != "random"))
    fc = df[df["fired"]].groupby(["panel", "route"])["covered"].mean().unstack("route")
    c3 = bool((fc[FLAT] >= fc[DEFAULT]).all())
    mr = misranked_table(df)
    c4 = bool((mr[FLAT] <= mr[DEFAULT] + 0.02).all())
    conds = [
        ("1. coverage per panel and budget >= the default's - 0.01, tabular >= 0.85", c1,
         "; ".join(f"{p} {b}: {r[FLAT]:.3f} vs {r[DEFAULT]:.3f}" for (p, b), r in cov.iterrows())),
        ("2. random pairs' bins within 0.05; panels' largest miss <= the default's + 0.02", c2,
         "; ".join(f"{p}: {r[FLAT]:.3f} vs {r[DEFAULT]:.3f}" for p, r in rel.iterrows())),
        ("3. where it fires, coverage >= the default's (per panel)", c3,
         "; ".join(f"{p}: {r[FLAT]:.3f} vs {r[DEFAULT]:.3f}" for p, r in fc.iterrows())),
        ("4. mis-ranked (|gap| >= 0.02) <= the default's + 0.02", c4,
         "; ".join(f"{p} {b}: {r[FLAT]:.3f} vs {r[DEFAULT]:.3f}" for (p, b), r in mr.iterrows())),
    ]
    return conds, all(c for _, c, _ in conds)


def report(df: pd.DataFrame, header: str) -> str:
    conds, ok = verdict(df)
    lines = [f"# Flat ends of the joint curve where the vetted labels are separable (issue 32) -- "
             f"rule {'met: adopted' if ok else 'not met: stays an option'}", "", header, "",
             "The rule: `benchmarks/results/compare_flat_prereg.md` (written before these runs). `joint_std_sd0.25` is "
             "`bayeval.compare`'s default for two classifiers before this decision, `joint_std_sd0.25_flatauto` the "
             "same with `asymptotes=\"auto\"` (flat ends where the vetted labels are separable and hold 10 or more of "
             "each class). Label sets where the candidate does not fire are the default's rows for both.", "",
             "## The rule's conditions", ""]
    lines += [f"- **{name}: {'met' if c else 'NOT met'}** ({figs})" for name, c, figs in conds]
    lines += ["", "## Coverage and median width of the gap's 90% interval, per panel and budget", "",
              coverage_table(df).to_markdown(), "",
              "## The label sets where the candidate fires (budgets pooled)", "",
              coverage_table(df, only_fired=True).to_markdown(), "",
              "## Where it fires: label sets only the default covers (`lost`) and only the candidate covers "
              "(`gained`), with their true gaps' sizes, and the median width ratio", "",
              disagreements(df).to_markdown(), "",
              "## Reliability of P(A better), counted both ways (observed minus stated per bin, runs)", "",
              reliability_misses(df).to_markdown(), "",
              "## Mis-ranked, pairs with |gap| >= 0.02", "", misranked_table(df).to_markdown(), ""]
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--default", nargs="+", required=True, help="CSV rows holding the default's route")
    ap.add_argument("--flat", nargs="+", required=True, help="CSV rows of the candidate where it fires")
    ap.add_argument("--note", default="", help="a paragraph for the results file's head (how the rows were made)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    df = load(args.default, args.flat)
    import real_scores as R

    header = (f"Made by `python benchmarks/compare_flat.py --default {' '.join(args.default)} --flat "
              f"{' '.join(args.flat)}` with {R._versions()}." + (f"\n\n{args.note}" if args.note else ""))
    text = report(df, header)
    if args.out:
        pathlib.Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
