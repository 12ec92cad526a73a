"""The report's reading of its metric table in words, and the number format of its cells.

:func:`bayeval.report.report` calls :func:`read_metrics` for the sentences of the
"Reading" section about the metrics, :func:`read_comparison` for those of a comparison's
section, and formats every table cell with :func:`fmt`.
"""

from __future__ import annotations

import math
import numbers
import re

import numpy as np
import pandas as pd

from .core import metrics as M
from .core.evaluate import resolve_metric

__all__ = ["at_rank_k", "fmt", "plain_name", "read_comparison", "read_metrics", "sd_as_zero", "unwidened_note", "vetted_choice_kind",
           "vetted_only_line", "vetted_only_note", "vetted_selection_of", "widened_draws_note", "PLAIN_METRICS"]

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


def vetted_choice_kind(selection, n: int) -> tuple[str, int]:
    """``(kind, chosen)``: how the ``n`` vetted items were chosen, from ``selection``
    (``{strategy or None: count}``, as :func:`bayeval.active._store_items.vetted_choice`
    gives it, or None): ``"random"`` (every one drawn at random), ``"chosen"`` (``chosen``
    of them picked on purpose: by design, by active selection) or ``"unknown"``.

    Examples
    --------
    >>> from bayeval._report_text import vetted_choice_kind
    >>> vetted_choice_kind({"random": 5}, 5), vetted_choice_kind({None: 60, "design": 19}, 79)
    (('random', 0), ('chosen', 19))
    >>> vetted_choice_kind({None: 3, "random": 2}, 5), vetted_choice_kind(None, 5)
    (('unknown', 0), ('unknown', 0))
    """
    if not selection:
        return "unknown", 0
    chosen = sum(c for key, c in selection.items() if key not in (None, "random"))
    if chosen:
        return "chosen", chosen
    if selection.get("random", 0) == n:
        return "random", 0
    return "unknown", 0


def vetted_selection_of(selection, session, data) -> dict | None:
    """``vetted_selection`` checked (its counts add up to the vetted items), or, without it, what an
    active-testing session's label store records of how its batches chose the vetted items.

    Examples
    --------
    >>> from bayeval import EvalData
    >>> from bayeval._report_text import vetted_selection_of
    >>> vetted_selection_of({"random": 2, "design": 0}, None, EvalData([0.2, 0.9, 0.5], [0, 1, None]))
    {'random': 2}
    """
    if selection is None:
        store = getattr(session, "store", None)
        if session is None or not callable(getattr(store, "batches", None)):
            return None
        from .active._store_items import vetted_choice

        return vetted_choice(store, data.item_ids.tolist(), data.vetted)
    if not isinstance(selection, dict) or not all(
        (key is None or isinstance(key, str)) and isinstance(c, int | np.integer) and not isinstance(c, bool) and c >= 0
        for key, c in selection.items()
    ):
        raise TypeError(f"`vetted_selection` must be a dict {{strategy (str) or None: number of vetted items (int "
                        f">= 0)}}, e.g. {{'random': 40, 'design': 20}}; got {selection!r}.")
    if sum(selection.values()) != data.n_vetted:
        raise ValueError(f"`vetted_selection` counts {sum(selection.values())} vetted items, but the data has "
                         f"{data.n_vetted}; count every vetted item once (None for those whose choice is not "
                         "recorded).")
    return {key: int(c) for key, c in selection.items() if c}


def at_rank_k(metric) -> bool:
    """Whether ``metric`` (a name) is cut at a rank ``k`` (precision and recall at ``k``): its
    vetted-only value is then that of the vetted items' own top ``k``, no estimate of the
    pool's value at ``k`` even when the vetted items were drawn at random.

    Examples
    --------
    >>> from bayeval._report_text import at_rank_k
    >>> at_rank_k("precision_at_k"), at_rank_k("recall_at_k"), at_rank_k("average_precision")
    (True, True, False)
    """
    spec = M.METRICS.get(metric) if isinstance(metric, str) else None
    return spec is not None and "k" in spec.required()


def _stands_for(pool: int | None, n: int, k="k") -> str:
    """``the pool's top k × N/n (...)``: the top of a pool of ``pool`` items that the top ``k`` of
    ``n`` vetted items drawn at random from it stand for."""
    if pool is None:
        return "a top of the pool about N/n times larger (N items, n of them vetted), not its top k"
    if isinstance(k, int | np.integer):
        return f"roughly the pool's top {round(int(k) * pool / n)} ({k} × {pool}/{n}), not its top {k}"
    ratio = round(pool / n) if pool >= 100 * n else f"{pool / n:.3g}"
    return f"roughly the pool's top k × {pool}/{n} (about k × {ratio}), not its top k"


def vetted_only_note(selection, n: int, *, at_k: bool = False, pool: int | None = None) -> str:
    """The metric table's note on its ``vetted_only`` and ``vetted_only_n`` columns (``n`` vetted
    items; ``at_k``: the table has rows cut at a rank k, precision or recall at k, of a pool of
    ``pool`` items).

    Examples
    --------
    >>> from bayeval._report_text import vetted_only_note
    >>> "no estimate" in vetted_only_note({"design": 5}, 5)
    True
    >>> "not its top k" in vetted_only_note({"random": 5}, 5, at_k=True, pool=50)
    True
    """
    kind, chosen = vetted_choice_kind(selection, n)
    own = ("the vetted items' own value, that of their k highest-scored items, which (with the vetted items "
           f"drawn at random) stand for {_stands_for(pool, n)}, so it is no estimate of the pool's metric at k")
    read = {"random": "the vetted items were drawn at random, so it estimates the pool's metric, uncertain by up "
                      "to about 1/√vetted_only_n" + (f" -- except at a rank k (precision or recall at k): there it "
                                                      f"is {own}" if at_k else ""),
            "chosen": f"{chosen} of the vetted items were chosen on purpose, not drawn at random, so it is no "
                      "estimate of the pool's metric",
            "unknown": "it estimates the pool's metric (uncertain by up to about 1/√vetted_only_n) only if the "
                       "vetted items were drawn at random" + (f", and even then not at a rank k (precision or "
                                                              f"recall at k): there it is {own}" if at_k else "")}
    return (f"vetted_only: the metric on the {n} vetted items alone (– where it is undefined, e.g. fewer vetted "
            f"items than k, or only one class vetted); {read[kind]}. vetted_only_n: the vetted items it rests on "
            "(for precision those flagged, for recall the positives, for precision at k the top k; all of them "
            "for the rest).")


def vetted_only_line(selection, n: int, *, at_k: bool = False, pool: int | None = None) -> str | None:
    """One line on the ``vetted_only`` values of a table printed without the report's reading
    (``bayeval fit``): that they are no estimates of the pool's metrics where some of the ``n``
    vetted items were chosen on purpose (``selection`` as :func:`vetted_choice_kind` reads it),
    or, for rows cut at a rank k (``at_k``; a pool of ``pool`` items), that they are the vetted
    items' own top k; None where neither holds.

    Examples
    --------
    >>> from bayeval._report_text import vetted_only_line
    >>> vetted_only_line({None: 60, "design": 19}, 79)[:58]
    'vetted_only: 19 of the 79 vetted items were chosen on purp'
    >>> vetted_only_line({"random": 40}, 40) is None
    True
    """
    kind, chosen = vetted_choice_kind(selection, n)
    if pool is not None and n >= pool:  # every item vetted: the vetted-only values are the pool's own
        return None
    if kind == "chosen":
        how = ", ".join(f"{key}: {c}" for key, c in selection.items() if key not in (None, "random"))
        return (f"vetted_only: {chosen} of the {n} vetted items were chosen on purpose ({how}), not drawn at "
                "random, so each vetted_only value is the metric of the vetted items alone, no estimate of the "
                "pool's.")
    if at_k:
        return ("vetted_only at a rank k (precision or recall at k): the vetted items' own value, that of their k "
                "highest-scored items, which (with the vetted items drawn at random) stand for "
                f"{_stands_for(pool, n)}: no estimate of the pool's metric at k.")
    return None


def unwidened_note(widened, others) -> str | None:
    """The metric table's note on its rows whose intervals are the posterior's own (``others``)
    where the model reports a wider interval than its posterior's for other rows (``widened``,
    e.g. an annotator-error fit's accuracy, see ``reported_interval``); None where either is empty.

    Examples
    --------
    >>> from bayeval._report_text import unwidened_note
    >>> unwidened_note(["accuracy"], ["precision", "recall"])[:40]
    'precision, recall: not widened -- the po'
    >>> unwidened_note([], ["precision"]) is None
    True
    """
    widened, others = [str(x) for x in widened], [str(x) for x in others]
    if not widened or not others:
        return None
    one = len(others) == 1
    names = ", ".join(others[:6]) + (f" and {len(others) - 6} more" if len(others) > 6 else "")
    row = "row is" if len(widened) == 1 else "rows are"
    return (f"{names}: not widened -- the posterior's own interval{'' if one else 's'}. Only the "
            f"{', '.join(widened)} {row} widened (the reading says why); {'it rests' if one else 'these rest'} on the "
            f"same model and can miss the truth by as much as {'its' if len(widened) == 1 else 'their'} posterior "
            f"interval{'' if len(widened) == 1 else 's'} can.")


def widened_draws_note(attrs) -> str:
    """The words the metric table's note on the posterior draws needs for its widened rows
    (``attrs["widened"]`` of the table): their interval is not the draws' HDI; "" where none is.

    Examples
    --------
    >>> from bayeval._report_text import widened_draws_note
    >>> widened_draws_note({"widened": ["accuracy"]})[:60]
    ' The accuracy row is the exception: its interval is not the '
    >>> widened_draws_note({})
    ''
    """
    widened = [str(x) for x in attrs.get("widened") or ()]
    if not widened:
        return ""
    one = len(widened) == 1
    return (f" The {', '.join(widened)} row{'' if one else 's'} {'is the exception' if one else 'are the exceptions'}: "
            f"{'its' if one else 'their'} interval is not the draws' highest-density interval but the one the "
            f"model reports, widened (the reading says what it is); {'its' if one else 'their'} mean and sd are "
            "the draws'.")


def _vetted_basis(metric: str | None, k: int) -> str:
    """The vetted items a vetted-only number rests on, in words (``k`` of them)."""
    s = "" if k == 1 else "s"
    if metric == "precision":
        return f"the {k} vetted item{s} it flags"
    if metric in ("recall", "recall_at_k"):
        return f"the {k} vetted positive{s}"
    if metric == "f_score":
        return f"the {k} vetted item{s} flagged or positive"
    if metric == "precision_at_k":
        return f"the top {k} vetted item{s}"
    return f"{k} vetted item{s}"


def _vetted_only_text(d, vo: float, k: int, metric: str | None, first: bool, at_k: bool = False) -> str:
    """``; the vetted-only estimate from ...`` of one row, with how far it can be read: the first
    one says why (random vetted items: up to about ±1/√k; chosen ones: not an estimate of the pool's
    value; unknown: both, conditionally), the later ones only their own ± where it applies
    (``at_k``: the table has rows cut at a rank k, whose vetted-only numbers have no ±)."""
    kind, chosen = vetted_choice_kind(getattr(d, "selection", None), d.n)
    basis, bound = _vetted_basis(metric, k), f"±{min(1.0, 1 / math.sqrt(k)):.2f}"
    if kind == "chosen":
        s = f"; the vetted-only value from {basis} is {fmt(vo)}"
        if first:
            how = ", ".join(f"{key}: {c}" for key, c in d.selection.items() if key not in (None, "random"))
            s += (f" (the metric of the vetted items alone, not an estimate of this pool's: {chosen} of the {d.n} "
                  f"vetted items were chosen on purpose ({how}), not drawn at random, so the vetted items are not a "
                  "random sample of the pool; so it is with every vetted-only number below)")
        return s + "."
    s = f"; the vetted-only estimate from {basis} is {fmt(vo)}"
    if not first:
        return s + (f" ({bound})." if kind == "random" else f" ({bound} if the vetted items were drawn at random).")
    below = "each vetted-only number below but those at a rank k" if at_k else "each vetted-only number below"
    if kind == "random":
        return s + (f" (a point estimate from the vetted items alone, not comparable with the interval: the vetted "
                    f"items were drawn at random, and from {k} it is uncertain by up to about {bound} (1/√{k}); "
                    f"{below} is uncertain by 1/√ of its own count, vetted_only_n in the table).")
    return s + (f" (a point estimate from the vetted items alone, not comparable with the interval: if the vetted "
                f"items were drawn at random, from {k} it is uncertain by up to about {bound} (1/√{k}), and "
                f"{below} by 1/√ of its own count, vetted_only_n in the table; if they were chosen "
                "otherwise (by score, by active selection), these are only the metrics of the vetted items, not "
                "estimates of this pool's).")


def _row_k(row_name: str, options: dict):
    """The rank ``k`` of a row of a metric cut at a rank (``precision_at_k[k=100]``, or a label
    with ``{"k": 100}``), None where it cannot be told."""
    found = re.search(r"[\[,\s]k=(\d+)", str(row_name))
    if found:
        return int(found.group(1))
    k = options.get("k")
    return int(k) if isinstance(k, int | np.integer) and not isinstance(k, bool) else None


def _at_k_text(d, vo: float, vn: int, metric: str, said: str, k, per_category: bool) -> str:
    """``; the vetted items' own precision at k is ...`` of a row cut at a rank ``k`` whose vetted
    items were drawn at random or may have been: no estimate of the pool's value at ``k``, since
    the vetted items' top ``k`` stand for the pool's top k × N/n (``vn``: the vetted-only count)."""
    kind = vetted_choice_kind(getattr(d, "selection", None), d.n)[0]
    k_word = k if k is not None else "k"
    of = "vetted items of each category" if per_category else f"of the {d.n} vetted items"
    among = (f"precision among the {k_word} highest-scored {of}" if metric == "precision_at_k" else
             f"the share of the {vn} vetted positive{'' if vn == 1 else 's'} among the {k_word} highest-scored {of}")
    stands = (f"a top of each category larger than {k_word} (about {k_word} × the category's items ÷ its vetted "
              f"items), not its top {k_word}" if per_category else _stands_for(d.N, d.n, k_word))
    s = f"; the vetted items' own {said} is {fmt(vo)} ({among}), no estimate of this pool's {said}"
    if kind == "random":
        return s + f": the vetted items were drawn at random, so their top {k_word} stand for {stands}."
    return s + (f": if the vetted items were drawn at random, their top {k_word} stand for {stands}; if they "
                "were chosen otherwise (by score, by active selection), it is only the vetted items' own.")


def read_metrics(d, table: pd.DataFrame, items) -> None:
    """The metric table in words, one sentence per row (the first ``MAX_READ_ROWS``)."""
    N, n, pct = d.N, d.n, d.pct
    lo_col, hi_col = table.columns[2], table.columns[3]
    label_of = {lab: resolve_metric(m)[2] for lab, m, _ in items}
    options_of = {lab: dict(opts) for lab, _, opts in items}
    any_at_k = any(at_rank_k(m) for m in label_of.values())
    caveat_said = False
    for i, (row_name, row) in enumerate(table.iterrows()):
        if i >= MAX_READ_ROWS:
            extra = len(table) - MAX_READ_ROWS
            d.text.append(f"The metric table has {extra} more row{'s' if extra > 1 else ''}.")
            break
        lo, hi, mean = row[lo_col], row[hi_col], row["mean"]
        said = plain_name(str(row_name))
        lab = next((lab for lab in label_of if str(row_name) == lab or str(row_name).startswith(lab + "[")), None)
        metric, options = label_of.get(lab), options_of.get(lab, {})
        if at_rank_k(metric) and str(row_name) == metric and _row_k(row_name, options) is not None:
            said = f"{said[:-1]}{_row_k(row_name, options)}"  # recall_at_k with k=20: "recall at 20"
        if math.isnan(lo) or math.isnan(hi):  # undefined in every draw: no interval to state, nor to hold the truth
            why = ("its rule flags no item, and precision is the share of positives among the flagged items"
                   if metric == "precision" else "the drawn labels leave it no positive or no negative to count")
            d.text.append(f"The {said} on these {N} items is undefined in every posterior draw ({why}), so it "
                          "has no interval.")
            continue
        reading = (table.attrs.get("readings") or {}).get(str(row_name))
        if n == N:  # every label known: the value itself, no interval nor vetted-only estimate to weigh
            s = f"The {said} on these {N} items is {fmt(mean)}"
        elif reading:  # the model's widened interval: not a posterior probability interval, said as what it is
            s = reading.format(metric=f"{said} on these {N} items", lower=fmt(lo), upper=fmt(hi), mean=fmt(mean))
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
        chosen = vetted_choice_kind(getattr(d, "selection", None), n)[0] == "chosen" if n else False
        if n == N:
            s += "."
        elif n and not math.isnan(vo) and at_rank_k(metric) and not chosen:
            # the vetted items' own top k: no estimate of the pool's top k, drawn at random or not
            per_category = options.get("category") in ("each", "mean") or "category=" in str(row_name)
            s += _at_k_text(d, vo, int(row.get("vetted_only_n", n)), metric, said, _row_k(row_name, options),
                            per_category)
        elif n and not math.isnan(vo):
            # how far it can be read is said once, for the first vetted-only number
            s += _vetted_only_text(d, vo, int(row.get("vetted_only_n", n)) or n, metric, first=not caveat_said,
                                   at_k=any_at_k)
            caveat_said = True
        elif n:
            s += f"; the vetted-only {'value' if chosen or at_rank_k(metric) else 'estimate'} is undefined here."
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


def read_comparison(d, cmp, gaps: pd.DataFrame, said: str, width) -> None:
    """The comparison section's sentence on its top pair (``gaps``: :meth:`Comparison.summary`'s table,
    ``said``: the metric as the sentence names it), and each of its caveats once, boxed in the section.

    The caveats are the gaps table's ``attrs["caveats"]``: the comparison's own
    (:meth:`Comparison.caveats`), draws where the metric is undefined, and a ``threshold`` that flags
    no item or every item of a classifier's scores (the rule then predicts every item alike, whatever
    the labels). One that the reading says at the top already (a handful of vetted positives, from the
    metrics section's box) is not put at the top again. A gap undefined in every draw is said as such
    (not "probability nan")."""
    top = gaps.iloc[0]
    lo, hi, p = top.iloc[4], top.iloc[5], float(top["p_better"])
    if math.isnan(p):
        sentence = (f"On the same label draws, the gap in {said} between {top['better']} and {top['worse']} is "
                    "undefined in every draw: no draw of the labels gives both a value (the comparison section says why).")
    else:
        verdict = ("decided at 95%" if p > 0.95 else "not decided at 95%: vet the items the comparison's select() "
                   "proposes")
        sentence = (f"On the same label draws, {top['better']} has the higher {said} with probability {p:.2f} "
                    f"against {top['worse']} ({verdict}); the gap is {top['mean']:+.3f} ({d.pct} HDI {lo:+.3f} to "
                    f"{hi:+.3f}).")
        if width is not None:
            sentence += f" The gap lies within +/-{width:g} with probability {float(top['p_rope']):.2f}."
    d.text.append(sentence)
    caveats = gaps.attrs.get("caveats")
    if caveats is None:  # a table without them: the comparison's own
        caveats = cmp.caveats() if callable(getattr(cmp, "caveats", None)) else []
    for caveat in dict.fromkeys(caveats):
        # a handful of vetted positives is said once at the top of the reading, by the metrics section's box
        at_top = any(caveat.split(":")[0] in c for c in d.caveats)
        d.warning("comparison", "Read this comparison with care: " + caveat, caveat=not at_top)
