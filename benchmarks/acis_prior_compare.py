"""The rest calibration's prior study (issue 38): the candidates against the default, and the
pre-registered decision (``benchmarks/results/acis_prior_prereg.md``).

Reads the per-run arrays that ``benchmarks/acis.py --intervals --checkpoint DIR/NAME
--rest-prior NAME`` saved for each prior ``NAME`` (default, split, vague, t3), pairs the runs
by trial seed and writes the comparison table and the rule's verdict
(``benchmarks/results/acis_prior.md``)::

    for p in default split vague t3; do
      PYTHONPATH=. python benchmarks/acis.py --intervals --trials 160 --first-trial 300 --jobs 1 \\
        --pools A B C D F R W M I S --rest-prior $p --checkpoint /tmp/acis_prior/$p \\
        --out benchmarks/results/acis_prior_$p.md
    done
    python benchmarks/acis_prior_compare.py /tmp/acis_prior --out benchmarks/results/acis_prior.md

With ``--no-rule`` it tabulates development runs of any priors and pools (no verdict).
"""

from __future__ import annotations

import argparse
import math
import re
from pathlib import Path

import numpy as np
from scipy.stats import norm

#: Interval columns of ``benchmarks/acis.py``'s ``INTERVAL_METHODS`` (the arrays' order).
METHODS = ("jeffreys", "calibrated", "checked", "model", "delta", "evidence")
MODEL_BASED = ("calibrated", "checked", "evidence", "model")
RULE_POOLS = ("A", "B", "C", "D", "F", "R", "W", "M", "I")
BUDGETS = (100, 200, 500)
PRIORS = ("default", "split", "vague", "t3", "vague_fb", "vague_nogate")
COVER_FLOOR = 0.875
Z = float(norm.ppf(0.95))  # the study's 90 % intervals


def load(folder: Path) -> dict:
    """``{(pool, budget): {trial seed: run array}}`` from one prior's checkpoint folder."""
    runs: dict = {}
    for f in folder.glob("*.npy"):
        m = re.fullmatch(r"([A-Z])_(\d+)_False_(?:[a-z][a-z0-9_]*_)?(\d+)_(\d+)\.npy", f.name)
        if m is None:
            continue
        arr = np.load(f)
        for k in range(int(m.group(4))):
            runs.setdefault((m.group(1), int(m.group(2))), {})[int(m.group(3)) + k] = arr[k]
    return runs


def cell(runs: dict) -> dict:
    seeds = sorted(runs)
    out = np.array([runs[s] for s in seeds])
    truth = out[:, -1, 2]
    est = np.where(np.isfinite(out[:, 0, 0]), out[:, 0, 0], 0.0)
    err = est - truth
    res = dict(seeds=seeds, sq=err**2, n=err.size, bias=float(err.mean()),
               bias_se=float(err.std(ddof=1) / math.sqrt(err.size)), rmse=float(np.sqrt(np.mean(err**2))))
    w_act = 2 * Z * res["rmse"]
    for j, m in enumerate(METHODS):
        lo, hi, v = out[:, j, 2], out[:, j, 3], out[:, j, 1]
        res[m] = dict(cover=float(np.mean((lo <= truth) & (truth <= hi))), width=float(np.mean(hi - lo)),
                      wr=float(np.mean(hi - lo) / w_act), vr=float(np.nanmean(v) / err.var(ddof=1)))
    return res


def mse_diff(a: dict, d: dict) -> tuple[float, float]:
    """Mean and s.e. of the per-seed difference of squared errors (``a`` minus ``d``)."""
    ia, idd = ({s: i for i, s in enumerate(c["seeds"])} for c in (a, d))
    diff = np.array([a["sq"][ia[s]] - d["sq"][idd[s]] for s in sorted(set(ia) & set(idd))])
    return float(diff.mean()), float(diff.std(ddof=1) / math.sqrt(diff.size))


def decide(C: dict, priors) -> tuple[list[str], str]:
    """The pre-registered rule; returns the report lines and the verdict."""
    pools = [p for p in RULE_POOLS if ("default", p, 100) in C]
    lines, verdict1, verdict2 = [], [], []
    lines += ["Per prior and interval over rule 1's 27 cells: the lowest coverage and where, the mean width, the "
              f"cells below {COVER_FLOOR}, and the issue's targets (coverage >= 0.90, variance 0.5--2x and width "
              "<= 1.5x the actual) met in how many of the calibrated pools' (A, D, F, W) 12 cells.", "",
              "| prior | interval | lowest coverage (27 cells) | where | mean width | cells below 0.875 "
              "| targets met (of 12) |",
              "|---|---|---:|---|---:|---:|---:|"]
    for pr in priors:
        for m in ("jeffreys",) + MODEL_BASED:
            cov = {(p, b): C[(pr, p, b)][m]["cover"] for p in pools for b in BUDGETS}
            low = min(cov.values())
            where = ", ".join(f"{p}@{b}" for (p, b), c in cov.items() if c == low)
            width = float(np.mean([C[(pr, p, b)][m]["width"] for p in pools for b in BUDGETS]))
            below = sum(c < COVER_FLOOR for c in cov.values())
            met = sum(C[(pr, p, b)][m]["cover"] >= 0.90 and 0.5 <= C[(pr, p, b)][m]["vr"] <= 2
                      and C[(pr, p, b)][m]["wr"] <= 1.5 for p in ("A", "D", "F", "W") if p in pools for b in BUDGETS)
            lines.append(f"| {pr} | {m} | {low:.3f} | {where} | {width:.3f} | {below} | {met} |")
    lines += [""]
    for pr in priors:
        if pr == "default":
            continue
        passing = [m for m in MODEL_BASED if min(C[(pr, p, b)][m]["cover"] for p in pools for b in BUDGETS)
                   >= COVER_FLOOR]
        worse = []
        for p in pools + ["S"]:
            for b in BUDGETS:
                if (pr, p, b) in C:
                    dm, se = mse_diff(C[(pr, p, b)], C[("default", p, b)])
                    if dm > 2 * se:
                        worse.append(f"{p}@{b} ({dm:+.4f} ± {se:.4f})")
        ok1 = bool(passing) and not worse
        s_ok = []
        for b in (200, 500):
            c, d = C[(pr, "S", b)], C[("default", "S", b)]
            s_ok.append(abs(c["bias"]) <= 2 * c["bias_se"] or abs(c["bias"]) <= 0.5 * abs(d["bias"]))
        r_lost = []
        for m in ("checked", "calibrated"):
            for b in BUDGETS:
                pd_ = C[("default", "R", b)][m]["cover"]
                tol = 2 * math.sqrt(2 * pd_ * (1 - pd_) / C[("default", "R", b)]["n"])
                if C[(pr, "R", b)][m]["cover"] < pd_ - tol:
                    r_lost.append(f"{m}@{b} ({C[(pr, 'R', b)][m]['cover']:.2f} < {pd_:.2f} - {tol:.2f})")
        ok2 = all(s_ok) and not r_lost and not worse
        if ok1:
            verdict1.append(pr)
        if ok2:
            verdict2.append(pr)
        lines.append(
            f"- `{pr}`: rule 1 (a) model-based intervals covering at least {COVER_FLOOR} in all 27 cells: "
            f"{', '.join(passing) or 'none'}; 1(b) mean squared error worse than the default's by more than "
            f"2 s.e. in: {', '.join(worse) or 'no cell'}. Rule 2 (a) S's bias removed at 200 / 500 labels: "
            f"{' / '.join('yes' if x else 'no' for x in s_ok)}; (b) R's coverage lost: {', '.join(r_lost) or 'none'}. "
            f"**Rule 1 {'met' if ok1 else 'not met'}; rule 2 {'met' if ok2 else 'not met'}.**")
    if verdict1:
        best = min(verdict1, key=lambda pr: min(
            float(np.mean([C[(pr, p, b)][m]["width"] for p in pools for b in BUDGETS])) for m in MODEL_BASED
            if min(C[(pr, p, b)][m]["cover"] for p in pools for b in BUDGETS) >= COVER_FLOOR))
        verdict = f"rule 1: adopt `{best}` as the default prior"
    elif verdict2:
        best = min(verdict2, key=lambda pr: sum(C[(pr, p, b)]["rmse"] ** 2 for p in pools + ["S"] for b in BUDGETS))
        verdict = f"rule 2: adopt `{best}` for the estimate's rest count"
    else:
        verdict = "no candidate meets rule 1 or rule 2: keep the default prior"
    return lines, verdict


def _git_revision() -> str:
    import subprocess

    try:
        here = Path(__file__).parent
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=here,
                             check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                               text=True, cwd=here, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return rev + (" (with uncommitted changes)" if dirty else "")


def main(argv=None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder", type=Path, help="the folder holding one --checkpoint folder per prior (default, ...)")
    parser.add_argument("--out", type=Path, default=None, help="write the Markdown report here")
    parser.add_argument("--no-rule", action="store_true",
                        help="development runs: the per-pool table only, no rule and no verdict (any pools)")
    args = parser.parse_args(argv)
    data = {pr: load(args.folder / pr) for pr in PRIORS if (args.folder / pr).is_dir()}
    priors = [pr for pr in PRIORS if pr in data]
    C = {(pr, p, b): cell(runs) for pr in priors for (p, b), runs in data[pr].items()}
    if args.no_rule:
        rule_lines, verdict = ["Development runs: no rule was fixed for them, and nothing is decided here."], (
            "none (development runs)")
    else:
        rule_lines, verdict = decide(C, priors)
    n = min(c["n"] for c in C.values())
    trials = sorted({s % 4_000_037 for c in C.values() for s in c["seeds"]})  # seed = trial + 4000037 k
    rule = ("no rule (development runs)" if args.no_rule else
            "the rule is the one of `benchmarks/results/acis_prior_prereg.md`, written before the runs")
    source = (f"From the runs of `benchmarks/acis.py --intervals --rest-prior NAME --checkpoint {args.folder}/NAME` "
              f"for NAME in {', '.join(priors)} " if args.no_rule else
              f"From the runs of `benchmarks/results/acis_prior_{{{','.join(priors)}}}.md` ")
    lines = [
        "# ACIS: the rest calibration's prior against the default (issue 38)", "",
        source + f"({n} runs per pool and budget, "
        f"trials {trials[0]}-{trials[-1]}, paired by trial seed; "
        + ("the runs' own reports are not kept: rerun them at this revision" if args.no_rule else
           "each file says the git revision its runs were made at") + "), by "
        f"`python benchmarks/acis_prior_compare.py {args.folder}{' --no-rule' if args.no_rule else ''}` at git "
        f"{_git_revision()}; {rule}. "
        "Priors: `default` intercept N(0, 2^2), slope N(1, 2^2) everywhere; `vague` sd 10 everywhere; `split` the "
        "estimate's rest count (and its gate) from the sd-10 fit, the design and the intervals from the default; "
        "`t3` Student-t (3 df), the default's centres and scales, everywhere; `vague_fb` sd 10 everywhere, the "
        "estimate's rest count from the default's fit where the sd-10 fit does not pin it down; `vague_nogate` sd 10 "
        "everywhere, the model's rest count in the estimate whatever its spread (no gate).", "",
        f"**Verdict: {verdict}.**", "",
        "## The rule", "", *rule_lines, "",
        "## Per pool and budget", "",
        "bias (± its s.e.) and RMSE of the estimate; ΔMSE = mean per-seed difference of squared errors against the default (± its "
        "s.e.); per interval: coverage / mean width over the actual-error width (2 z RMSE) / mean reported variance "
        "over the variance of the estimates. S is the pool of `acis`'s docstring (not in rule 1's 27 cells).", "",
        "| pool | labels | prior | bias | RMSE | ΔMSE vs default | jeffreys cover / width÷actual | checked | calibrated "
        "| evidence |",
        "|---|---:|---|---:|---:|---:|---|---|---|---|",
    ]
    for p in list(RULE_POOLS) + ["S"]:
        for b in BUDGETS:
            for pr in priors:
                if (pr, p, b) not in C:
                    continue
                c = C[(pr, p, b)]
                dm = "" if pr == "default" else "{:+.4f} ± {:.4f}".format(*mse_diff(c, C[("default", p, b)]))
                f = lambda m, c=c: f"{c[m]['cover']:.2f} / {c[m]['wr']:.2f} / {c[m]['vr']:.2f}"  # noqa: E731
                j = c["jeffreys"]
                lines.append(f"| {p} | {b} | {pr} | {c['bias']:+.3f} ± {c['bias_se']:.3f} | {c['rmse']:.3f} | {dm} "
                             f"| {j['cover']:.2f} / {j['wr']:.2f} | {f('checked')} | {f('calibrated')} | {f('evidence')} |")
    report = "\n".join(lines) + "\n"
    print(report)
    if args.out is not None:
        args.out.write_text(report)
    return report


if __name__ == "__main__":
    main()
