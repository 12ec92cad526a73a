"""The verdict of ``benchmarks/results/acis_restfit_prereg.md``: ACIS's rest count fitted to every
label (``--rest-fit all``) against the predicted negatives only (``--rest-fit negatives``).

Reads the two ``--intervals`` tables the rule names and writes the verdict table::

    python benchmarks/acis.py --intervals --trials 40 --pools A B C D F R W M I G H J K --rest-fit all \\
        --out benchmarks/results/acis_restfit_all.md
    python benchmarks/acis.py --intervals --trials 40 --pools A B C D F R W M I G H J K --rest-fit negatives \\
        --out benchmarks/results/acis_restfit_negatives.md
    python benchmarks/acis_restfit_verdict.py benchmarks/results/acis_restfit_all.md \\
        benchmarks/results/acis_restfit_negatives.md --out benchmarks/results/acis_restfit.md
"""

from __future__ import annotations

import argparse
import math

import pandas as pd

STANDARD = list("ABCDFRWMI")
GBM = list("GHJKLN")
Z90 = 1.6448536269514722
CAND = "negatives"  # the candidate's name in the tables (--candidate)


def read_table(path: str) -> pd.DataFrame:
    """The per-pool rows of an ``--intervals`` table (pool, labels, interval, cover, width, RMSE ...)."""
    rows = []
    for line in open(path, encoding="utf-8"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 12 and cells[0] not in ("pool", "---") and not cells[0].startswith("-"):
            try:
                labels = int(cells[1])
            except ValueError:
                continue
            rows.append({"pool": cells[0], "labels": labels, "truth": float(cells[2]), "bias": float(cells[3]),
                         "sd": float(cells[4]), "actual_width": float(cells[5]), "interval": cells[6],
                         "cover": float(cells[7]) if cells[7] not in ("—", "-") else math.nan,
                         "width": float(cells[8]) if cells[8] not in ("—", "-") else math.nan,
                         "width_actual": float(cells[9]) if cells[9] not in ("—", "-") else math.nan,
                         "var_actual": float(cells[10]) if cells[10] not in ("—", "-") else math.nan})
    df = pd.DataFrame(rows)
    df["rmse"] = df["actual_width"] / (2 * Z90)
    return df


def verdict(all_: pd.DataFrame, neg: pd.DataFrame) -> tuple[str, bool]:
    key = ["pool", "labels"]
    cols = ["bias", "rmse", "cover", "width"]
    a = all_[all_.interval == "jeffreys"][key + ["truth"] + cols]
    n = neg[neg.interval == "jeffreys"][key + cols]
    est = a.merge(n, on=key, suffixes=("_all", "_neg")).set_index(key)
    est["rmse_ratio"] = est["rmse_neg"] / est["rmse_all"]
    est["cover_change"] = est["cover_neg"] - est["cover_all"]
    std = est[est.index.get_level_values(0).isin(STANDARD)]
    gbm = est[est.index.get_level_values(0).isin(GBM)]
    c1a = float(std["rmse_ratio"].mean())
    c1b = float(std["rmse_ratio"].max())
    c2a = float(std["cover_neg"].min())
    c2b = float(std["cover_change"].min())
    c3a = int((gbm["rmse_neg"] < gbm["rmse_all"]).sum())
    need = len(gbm) - 2 if len(gbm) <= 12 else len(gbm) - 3  # 10 of 12 (first rule), 15 of 18 (second)
    c3b = float(gbm["cover_neg"].min()) if len(gbm) else math.nan
    checks = [
        ("1a. standard pools: mean RMSE ratio <= 1.10", f"{c1a:.3f}", c1a <= 1.10),
        ("1b. standard pools: no cell's RMSE up by more than 25%", f"largest ratio {c1b:.3f}", c1b <= 1.25),
        ("2a. standard pools: jeffreys covers >= 0.875 in every cell", f"lowest {c2a:.3f}", c2a >= 0.875),
        ("2b. standard pools: no cell's jeffreys coverage falls by more than 0.05", f"largest fall {-c2b:+.3f}",
         c2b >= -0.05 - 1e-9),
        (f"3a. gradient-boosting pools: RMSE lower in >= {need} of {len(gbm)} cells", f"{c3a} of {len(gbm)}", c3a >= need),
        ("3b. gradient-boosting pools: jeffreys covers >= 0.875 in every cell", f"lowest {c3b:.3f}", c3b >= 0.875),
    ]
    met = all(ok for *_, ok in checks)
    lines = ["| condition | measured | met |", "|---|---|---|"]
    lines += [f"| {name} | {value} | {'yes' if ok else '**no**'} |" for name, value, ok in checks]
    lines += ["", f"**Rule {'met' if met else 'not met'}.**", "",
              "Per cell (the estimate, and the default `jeffreys` 90% interval; RMSE over the 40 runs, bias included):", "",
              f"| pool | labels | true F1 | bias all | bias {CAND} | RMSE all | RMSE {CAND} | ratio | jeffreys cover all | "
              f"cover {CAND} | width all | width {CAND} |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for (pool, labels), r in est.iterrows():
        lines.append(f"| {pool} | {labels} | {r.truth:.3f} | {r.bias_all:+.3f} | {r.bias_neg:+.3f} | {r.rmse_all:.3f} | "
                     f"{r.rmse_neg:.3f} | {r.rmse_ratio:.2f} | {r.cover_all:.2f} | {r.cover_neg:.2f} | {r.width_all:.3f} | "
                     f"{r.width_neg:.3f} |")
    return "\n".join(lines), met


def other_intervals(all_: pd.DataFrame, neg: pd.DataFrame) -> str:
    """Per interval: lowest coverage and mean width over every cell, both runs (for information)."""
    lines = [f"| interval | lowest coverage, all | lowest coverage, {CAND} | mean width, all | mean width, {CAND} | "
             f"cells meeting issue 38's targets (calibrated pools A, C, D, F), all / {CAND} |",
             "|---|---:|---:|---:|---:|---|"]
    for m in ("jeffreys", "calibrated", "checked", "evidence", "model", "delta"):
        a, n = all_[all_.interval == m], neg[neg.interval == m]

        def targets(d):
            c = d[d.pool.isin(list("ACDF"))]
            ok = ((c.var_actual >= 0.5) & (c.var_actual <= 2.0) & (c.width_actual <= 1.5) & (c.cover >= 0.90))
            return f"{int(ok.sum())} of {len(c)}"

        lines.append(f"| {m} | {a.cover.min():.2f} | {n.cover.min():.2f} | {a.width.mean():.3f} | {n.width.mean():.3f} | "
                     f"{targets(a)} / {targets(n)} |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("all_table")
    ap.add_argument("negatives_table", help="the candidate's table (--rest-fit negatives or chosen)")
    ap.add_argument("--out", default=None)
    ap.add_argument("--candidate", default="negatives", help="the candidate's name in the tables")
    args = ap.parse_args(argv)
    global CAND
    CAND = args.candidate
    all_, neg = read_table(args.all_table), read_table(args.negatives_table)
    text, met = verdict(all_, neg)
    out = "\n".join([
        f"# ACIS: the rest count's calibration, {CAND} against every label -- the verdict", "",
        "The rule: `benchmarks/results/acis_restfit_prereg.md` (`negatives`) or "
        "`benchmarks/results/acis_restfit_chosen_prereg.md` (`chosen`), written before the runs. The runs: "
        f"`{args.all_table}` and `{args.negatives_table}` (the same seeds; their heads say the command, the "
        "git revision and the versions). Made by `python benchmarks/acis_restfit_verdict.py "
        f"{args.all_table} {args.negatives_table}"
        + (f" --candidate {args.candidate}" if args.candidate != "negatives" else "")
        + (f" --out {args.out}`." if args.out else "`."), "",
        text, "", "## Every interval (for information)", "", other_intervals(all_, neg), ""])
    if args.out:
        open(args.out, "w", encoding="utf-8").write(out)
    print(out)


if __name__ == "__main__":
    main()
