"""How often the reversed-scores check fires: false alarms on correctly oriented scores, detection on reversed ones.

Every model of bayeval takes a higher score as more likely positive. Scores that rank
positives low (the other class's probability, a distance) give confidently wrong
intervals, so ``bayeval.core.data.reversed_scores`` tests the vetted items: a one-sided
Mann-Whitney rank test that the vetted positives score below the vetted negatives, at
level ``bayeval.core.data.REVERSED_LEVEL``. No model is fitted; this script draws label
sets and counts how often the test fires.

* **False alarms**: correctly oriented scores of a weak classifier (binormal, ROC AUC 0.6:
  positives' latent score N(0.358, 1), negatives' N(0, 1), passed through a logistic), and of
  a useless one (AUC 0.5), with 20, 30, 50 and 100 random vetted labels and 5-50% positives.
* **Detection**: scores uniform on [0, 1] with ``P(y = 1 | s) = (1 - s)^2`` (a ranking turned
  round; its pool ROC AUC is about 0.17), and binormal scores of AUC 0.3 and 0.4.

A label set without a vetted item of each class is skipped (the test needs both); the
tables give the number of sets kept. Run (results in ``benchmarks/results/reversed_scores.md``)::

    python benchmarks/reversed_scores.py --out benchmarks/results/reversed_scores.md
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

import numpy as np
import pandas as pd

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

#: the vetted labels per set, and the shares of positives of the binormal pools
BUDGETS = (20, 30, 50, 100)
PREVALENCES = (0.05, 0.1, 0.3, 0.5)


def binormal(rng, auc: float, prev: float, n: int):
    """``n`` scores and labels of a binormal classifier of ROC AUC ``auc`` (``prev`` positives on average)."""
    from scipy import stats

    d = np.sqrt(2.0) * stats.norm.ppf(auc)
    y = (rng.random(n) < prev).astype(float)
    return 1.0 / (1.0 + np.exp(-(rng.normal(size=n) + d * y - 1.0))), y


def turned_round(rng, n: int):
    """``n`` scores uniform on [0, 1] and labels with ``P(y = 1 | s) = (1 - s)^2``."""
    s = rng.random(n)
    return s, (rng.random(n) < (1.0 - s) ** 2).astype(float)


def rate(draw, sets: int, seed: int, level: float) -> tuple[float, int]:
    """The share of ``sets`` label sets (both classes vetted) on which the check fires, and how many were kept."""
    from bayeval import EvalData
    from bayeval.core.data import reversed_scores

    rng = np.random.default_rng(seed)
    fired = kept = 0
    for _ in range(sets):
        s, y = draw(rng)
        if y.min() == y.max():
            continue
        kept += 1
        fired += reversed_scores(EvalData(s, y), level=level) is not None
    return fired / max(kept, 1), kept


def run(sets: int, level: float) -> pd.DataFrame:
    rows, seed = [], 0
    for auc in (0.6, 0.5, 0.4, 0.3):
        for prev in PREVALENCES:
            for n in BUDGETS:
                seed += 1
                r, kept = rate(lambda rng, a=auc, p=prev, m=n: binormal(rng, a, p, m), sets, seed, level)
                rows.append({"scores": f"binormal AUC {auc}", "positives": prev, "labels": n, "sets": kept,
                             "fired": r})
    for n in (20, 30, 40, 50, 100):
        seed += 1
        r, kept = rate(lambda rng, m=n: turned_round(rng, m), sets, seed, level)
        rows.append({"scores": "(1 - s)^2 turned round", "positives": np.nan, "labels": n, "sets": kept, "fired": r})
    return pd.DataFrame(rows)


def _cells(d: pd.DataFrame, index: list[str]) -> str:
    """One row per ``index``, one column per number of vetted labels: the share fired (and the sets kept)."""
    d = d.assign(cell=[f"{f:.4f} ({k:,})" for f, k in zip(d["fired"], d["sets"], strict=True)])
    wide = d.pivot(index=index, columns="labels", values="cell")
    wide.columns = [f"{c} labels" for c in wide.columns]
    return wide.reset_index().to_markdown(index=False)


def report(d: pd.DataFrame, level: float, header: str) -> str:
    weak = d[d["scores"] == "binormal AUC 0.6"]
    binormal_rows = d[d["scores"].str.startswith("binormal")].assign(
        auc=lambda x: x["scores"].str.removeprefix("binormal AUC ").astype(float))
    lines = [
        "# The reversed-scores check: false alarms and detection", "", header, "",
        f"Level {level:g} (one-sided Mann-Whitney test that the vetted positives score below the vetted "
        "negatives; the check fires where it rejects and the vetted ROC AUC is below 0.5). Each cell: the share "
        "of label sets on which it fired, and in brackets the sets kept (both classes vetted). See the script's "
        "docstring.", "",
        f"Correctly oriented weak classifier (AUC 0.6): fired in at most {weak['fired'].max():.2%} of the sets "
        "of any cell.", "",
        "## Binormal scores: AUC 0.6 and 0.5 (false alarms), 0.4 and 0.3 (detection)", "",
        _cells(binormal_rows.rename(columns={"positives": "share of positives"}), ["auc", "share of positives"]),
        "", "## Scores turned round: P(y = 1 | s) = (1 - s)^2, s uniform (detection)", "",
        _cells(d[~d["scores"].str.startswith("binormal")], ["scores"]),
    ]
    return "\n".join(lines) + "\n"


def main(argv=None):
    from bayeval.core.data import REVERSED_LEVEL

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", type=int, default=2000, help="label sets per cell (default 2000)")
    ap.add_argument("--level", type=float, default=REVERSED_LEVEL, help=f"the test's level (default {REVERSED_LEVEL})")
    ap.add_argument("--out", default=None, help="write the report here")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    d = run(args.sets, args.level)
    import real_scores as R

    cmd = "python benchmarks/reversed_scores.py" + (f" --sets {args.sets}" if args.sets != 2000 else "") + (
        f" --level {args.level:g}" if args.level != REVERSED_LEVEL else "") + (f" --out {args.out}" if args.out else "")
    text = report(d, args.level, f"Made by `{cmd}` in {time.perf_counter() - t0:.0f} s with {R._versions()}.")
    if args.out:
        pathlib.Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
