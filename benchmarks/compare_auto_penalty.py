"""Jeffreys' penalty only where it is needed: ``JointCalibration(penalty="auto")`` against none.

``penalty="auto"`` applies Jeffreys' penalty of the joint curve's coefficients where the
vetted labels are separable by the classifiers' features (:func:`bayeval.models.joint.separation`:
a threshold on one classifier's feature, or a line through all of them, puts every vetted
positive above every vetted negative) and no penalty elsewhere. On a label set that is not
separable it is the unpenalized model with the same seed, draw for draw (tests/test_compare.py),
so the paired comparison needs fits only where the rule fires:

1. for every pair of ``benchmarks/compare.py`` and every label set (the same label draws), which
   sets are separable (cheap: no fit);
2. on the separable ones, the rows of ``compare.py --routes joint_equal joint_auto
   --separable-only`` (``joint_equal``: ``bayeval.compare``'s joint models without a penalty;
   ``joint_auto``: the same with ``penalty="auto"``; the same label sets and seeds), paired:
   coverage of the gap's 90% interval, its width, the location error ``z = (posterior mean -
   true gap) / sd`` (sd from the interval's width), the candidates that fell back to NUTS.

Run (results in ``benchmarks/results/compare_auto_penalty.md``)::

    python benchmarks/compare.py --only real --routes joint_equal joint_auto --separable-only \\
        --budgets 30 100 --sets 5 --no-identical --out real.md          # and --first-set 5
    python benchmarks/compare.py --only sim --routes joint_equal joint_auto --separable-only \\
        --budgets 30 --sets 10 --no-identical --out sim.md              # at 100 labels none is separable
    python benchmarks/compare_auto_penalty.py --rows sim.csv real.csv --sets 10 \\
        --out benchmarks/results/compare_auto_penalty.md
"""

from __future__ import annotations

import argparse
import pathlib
import sys

import numpy as np
import pandas as pd

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import compare as C  # noqa: E402
import real_scores as R  # noqa: E402


def separation_counts(pairs, budgets, n_sets) -> pd.DataFrame:
    """For each pair and budget, how many of the label sets ``0 .. n_sets - 1`` are separable,
    and how (by A's or B's feature alone, or only by a line through both)."""
    rows = []
    for pair in pairs:
        for budget in budgets:
            seps = [C.separation_of(pair, C._labels(pair, budget, rep)) for rep in range(n_sets)]
            rows.append({"pair": pair.name, "budget": budget, "sets": n_sets,
                         "separable": sum(s != "none" for s in seps),
                         "by_one_feature": sum(s in ("0", "1") for s in seps),
                         "only_by_a_line": sum(s == "linear" for s in seps),
                         "which": " ".join("-" if s == "none" else {"0": "A", "1": "B", "linear": "L"}[s]
                                           for s in seps)})
    return pd.DataFrame(rows).set_index(["pair", "budget"])


def paired(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per label set: ``joint_equal`` (``_none``) and ``joint_auto`` (``_auto``) side by side."""
    d = C._finish(rows.copy())
    d["z"] = (d["mean"] - d["true_gap"]) / ((d["hi"] - d["lo"]) / (2 * 1.6449))
    keys = ["pair", "budget", "rep", "true_gap", "separation"]
    cols = ["covered", "width", "z", "nuts", "p", "lo", "hi", "seconds"]
    out = d[d["route"] == "joint_equal"].set_index(keys)[cols].join(
        d[d["route"] == "joint_auto"].set_index(keys)[cols], lsuffix="_none", rsuffix="_auto", how="inner")
    out = out.reset_index()
    out["kind"] = np.where(out["pair"].str.startswith("sim"), "simulated", "real")
    return out


def summary(p: pd.DataFrame, by) -> pd.DataFrame:
    g = p.groupby(by)
    return pd.DataFrame({
        "sets": g.size(),
        "covered_none": g["covered_none"].sum(), "covered_auto": g["covered_auto"].sum(),
        "width_none": g["width_none"].median(), "width_auto": g["width_auto"].median(),
        "width_ratio": g.apply(lambda x: float(np.median(x["width_auto"] / x["width_none"])), include_groups=False),
        "z_mean_none": g["z_none"].mean(), "z_mean_auto": g["z_auto"].mean(),
        "z_sd_none": g["z_none"].std(), "z_sd_auto": g["z_auto"].std(),
        "abs_z_max_none": g["z_none"].apply(lambda z: z.abs().max()),
        "abs_z_max_auto": g["z_auto"].apply(lambda z: z.abs().max()),
        "nuts_none": g["nuts_none"].sum(), "nuts_auto": g["nuts_auto"].sum(),
    }).round(3)


def one_feature_rule(p: pd.DataFrame) -> pd.DataFrame:
    """The rows as a narrower rule would give them: the penalty only where one classifier's
    feature separates the labels; on the sets separable only by a line, the unpenalized fit."""
    q = p.copy()
    line = q["separation"] == "linear"
    for c in ("covered", "width", "z", "nuts"):
        q.loc[line, f"{c}_auto"] = q.loc[line, f"{c}_none"]
    return q


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", nargs="+", required=True, help="CSV rows of compare.py --separable-only runs")
    ap.add_argument("--sets", type=int, default=10, help="label sets 0 .. sets-1 counted in section 1")
    ap.add_argument("--budgets", type=int, nargs="+", default=[30, 100])
    ap.add_argument("--out", default=None)
    ap.add_argument("--note", default="", help="a paragraph placed after the header (how the rows were made)")
    args = ap.parse_args(argv)
    rows = pd.concat([pd.read_csv(f) for f in args.rows], ignore_index=True)
    rows = rows.drop_duplicates(["pair", "budget", "rep", "route"])
    pairs = C.sim_pairs() + C.real_pairs()
    counts = separation_counts(pairs, args.budgets, args.sets)
    p = paired(rows)
    shown = list(argv or sys.argv[1:])
    if "--note" in shown:  # the note is printed below the command, not in it
        i = shown.index("--note")
        shown[i:i + 2] = ["--note", "NOTE"]
    fitted = p.groupby(["kind", "budget"])["rep"].agg(lambda r: f"{r.min()}-{r.max()}")
    text = "\n\n".join([
        "# Jeffreys' penalty only where the vetted labels are separable (`penalty=\"auto\"`)",
        f"Made by `python benchmarks/compare_auto_penalty.py {' '.join(shown)}` (NOTE: the next paragraph) at git "
        f"{R._git_rev()}; {R._versions()}.",
        args.note,
        "## 1. How often the rule fires (every label set, no fit)\n\n`which`: per label set 0, 1, ...: "
        "`A` / `B` = that classifier's feature alone separates the vetted labels, `L` = only a line through "
        "both does, `-` = not separable (the unpenalized fit).\n\n" + C._md(counts),
        "## 2. Paired on the separable label sets: without a penalty (`_none`, route `joint_equal`) and "
        "with `penalty=\"auto\"` (`_auto`, route `joint_auto`, which is Jeffreys' penalty on these sets)\n\n"
        f"Label sets fitted (set numbers, by kind and budget): "
        + "; ".join(f"{k} {b}: {v}" for (k, b), v in fitted.items())
        + ". `covered`: how many of the sets' 90% intervals hold the true gap; widths: median; "
        "`width_ratio`: the median of the paired ratios; z: location error in posterior sds; "
        "`nuts`: joint candidates that fell back to NUTS (two candidates per fit).\n\n"
        + C._md(summary(p, ["kind", "budget"])),
        "### By pair\n\n" + C._md(summary(p, ["pair", "budget"])),
        "### Every separable set of `real_bc_logreg_vs_nb` (the pair of `compare_nb_separation.md`)\n\n"
        + C._md(p[p["pair"] == "real_bc_logreg_vs_nb"].set_index(["budget", "rep"])[
            ["separation", "lo_none", "hi_none", "z_none", "lo_auto", "hi_auto", "z_auto"]].round(4)),
        "## 3. A narrower rule: the penalty only where one classifier's feature separates\n\n"
        "The same rows, with the sets separable only by a line given their unpenalized fit.\n\n"
        + C._md(summary(one_feature_rule(p), ["kind", "budget"])),
    ]) + "\n"
    print(text)
    if args.out:
        pathlib.Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
