"""The report's reading of its metric table in words, and the number format of its cells.

:func:`bayeval.report.report` calls :func:`read_metrics` for the sentences of the
"Reading" section about the metrics, and formats every table cell with :func:`fmt`.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import pandas as pd

from .core import metrics as M
from .core.evaluate import resolve_metric

__all__ = ["fmt", "plain_name", "read_metrics", "sd_as_zero", "PLAIN_METRICS"]

WIDE = 0.2  # an HDI wider than this (on a [0, 1] metric) is called wide in the reading
MAX_READ_ROWS = 8  # metric rows read out in words (the table has them all)
_SD_ZERO = 1e-12  # a standard deviation below this, relative to the metric's scale, is rounding: 0

def fmt(x) -> str:
    """A number (or other cell) as short text; NaN as an en dash."""
    if x is None:
        return "–"
    if isinstance(x, bool | np.bool_):
        return "yes" if x else "no"
    if isinstance(x, numbers.Integral):
        return str(int(x))
    if isinstance(x, numbers.Real):
        v = float(x)
        if math.isnan(v):
            return "–"
        if math.isinf(v):
            return "∞" if v > 0 else "-∞"
        if v == 0:
            return "0"
        if v.is_integer() and abs(v) >= 10:
            return str(int(v))
        if abs(v) >= 1000 or abs(v) < 0.001:
            return f"{v:.3g}"
        return f"{v:.3f}"
    return str(x)


PLAIN_METRICS = {
    "average_precision": "average precision",
    "roc_auc": "ROC AUC",
    "precision_at_k": "precision at {k}",
    "recall_at_k": "recall at {k}",
    "f_score": "F1 score",
}


def plain_name(label: str) -> str:
    """A metric label as prose: ``precision_at_k[k=100]`` -> ``precision at 100``.

    Labels a user chose (anything that is not a metric name with options) are kept.
    """
    base, _, rest = label.partition("[")
    opts = {}
    if rest.endswith("]"):
        for part in rest[:-1].split(","):
            key, eq, value = part.strip().partition("=")
            if not eq:
                return label
            opts[key] = value
    if base not in M.METRICS:
        return label
    template = PLAIN_METRICS.get(base, base.replace("_", " "))
    if "{k}" in template:
        if "k" not in opts:
            return template.replace(" at {k}", " at k")
        template = template.format(k=opts.pop("k"))
    extra = []
    for key, value in opts.items():
        if key in ("t", "threshold"):
            extra.append(f"at threshold {value}")
        elif key == "category":
            extra.append(f"for category {value}")
        else:
            extra.append(f"with {key} = {value}")
    return " ".join([template, *extra])


def sd_as_zero(table: pd.DataFrame) -> pd.DataFrame:
    """The table with a standard deviation that is floating-point rounding (below 1e-12
    of the metric's scale, as when every label is known) shown as 0."""
    scale = np.maximum(1.0, table["mean"].abs().fillna(0.0))
    return table.assign(sd=table["sd"].mask(table["sd"].abs() < _SD_ZERO * scale, 0.0))


def read_metrics(d, table: pd.DataFrame, items) -> None:
    """The metric table in words, one sentence per row (the first ``MAX_READ_ROWS``)."""
    N, n, pct = d.N, d.n, d.pct
    lo_col, hi_col = table.columns[2], table.columns[3]
    label_of = {lab: resolve_metric(m)[2] for lab, m, _ in items}
    caveat_said = False
    for i, (row_name, row) in enumerate(table.iterrows()):
        if i >= MAX_READ_ROWS:
            extra = len(table) - MAX_READ_ROWS
            d.text.append(f"The metric table has {extra} more row{'s' if extra > 1 else ''}.")
            break
        lo, hi, mean = row[lo_col], row[hi_col], row["mean"]
        said = plain_name(str(row_name))
        if math.isnan(lo) or math.isnan(hi):  # undefined in every draw: no interval to state, nor to hold the truth
            metric = next((m for lab, m in label_of.items()
                           if str(row_name) == lab or str(row_name).startswith(lab + "[")), None)
            why = ("its rule flags no item, and precision is the share of positives among the flagged items"
                   if metric == "precision" else "the drawn labels leave it no positive or no negative to count")
            d.text.append(f"The {said} on these {N} items is undefined in every posterior draw ({why}), so it "
                          "has no interval.")
            continue
        if n == N:  # every label known: the value itself, no interval nor vetted-only estimate to weigh
            s = f"The {said} on these {N} items is {fmt(mean)}"
        elif lo == hi:
            s = (
                f"With at least {pct} probability the {said} on these {N} items is exactly "
                f"{fmt(lo)} (posterior mean {fmt(mean)})"
            )
        else:
            s = (
                f"With {pct} probability the {said} on these {N} items lies between {fmt(lo)} "
                f"and {fmt(hi)} (posterior mean {fmt(mean)})"
            )
        vo = row["vetted_only"]
        if n == N:
            s += "."
        elif n and not math.isnan(vo):
            s += f"; the vetted-only estimate from {n} labels is {fmt(vo)}"
            if not caveat_said:  # said once, for the first vetted-only number
                s += (
                    f" (a point estimate from the vetted items alone, not comparable with the "
                    f"interval: from so few labels it is uncertain by up to about "
                    f"±{min(1.0, 1 / math.sqrt(n)):.2f}; so are the vetted-only numbers below)"
                )
                caveat_said = True
            s += "."
        elif n:
            s += "; the vetted-only estimate is undefined here."
        else:
            s += "."
        if "naive" in row.index and not math.isnan(row["naive"]):
            s += f" The naive estimate (noisy labels for the unvetted items) is {fmt(row['naive'])}."
        base = label_of.get(str(row_name).split("[")[0])
        if base in M.METRICS and hi - lo >= WIDE:
            s += f" The interval is wide ({fmt(hi - lo)}): vetting more items would narrow it."
        if d.truth is not None and not math.isnan(row["truth"]):
            t = row["truth"]
            where = "inside" if lo - 1e-12 <= t <= hi + 1e-12 else "OUTSIDE"
            near = lo if t < lo else hi
            if where == "OUTSIDE" and fmt(t) == fmt(near):  # a miss the rounding would hide: more digits
                digits = next((k for k in range(4, 10) if f"{t:.{k}f}" != f"{near:.{k}f}"), 10)
                side, end = ("below", "lower") if t < lo else ("above", "upper")
                s += (f" The true value, known for this example, is {t:.{digits}f} (OUTSIDE the interval, just "
                      f"{side} its {end} end {near:.{digits}f}).")
            elif n == N:  # no interval was stated, the value is exact
                s += f" The true value, known for this example, is {fmt(t)}."
            else:
                s += f" The true value, known for this example, is {fmt(t)} ({where} the interval)."
        d.text.append(s)
