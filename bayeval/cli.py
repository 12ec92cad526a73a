"""The ``bayeval`` command.

Subcommands::

    bayeval report CARD_DIR [--out DIR]          render a model card's credible-interval report
                            [--save FIT.nc]      ... and keep the fit
                            [--from-fit FIT.nc]  ... from a kept fit, without sampling again
    bayeval fit SCORES --score COL --label COL   fit a model, print the metric summary table
                            [--save FIT.nc]      ... and keep the fit (bayeval.load reads it)
    bayeval threshold SCORES ... --min-precision P --min-recall R
                                                 the threshold meeting the constraints, with its probability
    bayeval compare CARD_A CARD_B ...            which classifier is better (cards joined on item id;
                                                 or SCORES --score A B --label COL)
    bayeval select SCORES ... --size N           the next items to vet (optionally recorded in a label store)
    bayeval label STORE LABELS.csv --id COL --label COL
                                                 record labels typed by people into a label store
    bayeval export-labels STORE OUT.csv          save the readable rows of a (damaged) label store
    bayeval repair-store STORE --scores SCORES --score COL
                                                 set aside the labels of unknown item ids (keeps them all)
    bayeval vet CARD_OR_STORE [--port 8000]      a local web page to vet items, the interval after each answer
    bayeval vet CARD_A CARD_B [--width W]        ... for a comparison: the gap and P(A better)
    bayeval demo                                 the bundled breast-cancer example

SCORES is a CSV or Parquet file with one row per item. Errors in the inputs are
reported in one paragraph on stderr with a non-zero exit status (2 for bad input); set
``BAYEVAL_DEBUG=1`` for the traceback. Printed tables fit the terminal (80 columns when
piped), each interval as one ``[lo, hi]`` column; ``--format csv|md`` prints them for logs.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import math
import os
import sqlite3
import sys
from pathlib import Path

from ._cli_checks import (card_given_as_scores, check_card_transform, check_fit_size, check_inputs_exist, check_k,
                          check_min_flagged, check_model_columns, check_transform, complete_label_cells, logodds_said)
from ._cli_compare import JOINT_CAVEAT, card_inputs, check_compare_size, refuse_unvetted
from ._cli_output import nothing_to_select, print_compare, print_items, strip_annotator, tell
from ._cli_parser import build_parser
from ._cli_store import (
    CLIError,
    apply_store_labels,
    card_vetted_selection,
    card_with_store,
    check_strays,
    held_items,
    kept_row_numbers,
    label_scores_items,
    not_a_row,
    refuse_foreign_items,
    refuse_unvetted_card,
    repair_refusal,
    say_card_store,
    scores_row_hint,
    store_text_ids,
    store_vetted_selection,
    unrecorded_labels,
    with_store,
)
from ._cli_warnings import report_caveats, say_caveats, say_diagnostics, warnings_as_lines
from ._tables import row_place
from .core._defaults import HDI_PROB

__all__ = ["main"]


# ----------------------------------------------------------------- inputs


def _table(path: str, *, text_columns=(), raw_columns=()):
    """The table at ``path`` (:func:`bayeval._tables.read_table`); its errors as CLIError."""
    from ._tables import TableError, read_table

    try:
        return read_table(path, text_columns=text_columns, raw_columns=raw_columns)
    except TableError as exc:
        raise CLIError(str(exc)) from exc


def _read_table(path: str, *, text_columns=(), label_columns=(), raw_columns=(), required=None):
    """Read a CSV/TSV/Parquet file into a DataFrame (the one reader, :mod:`bayeval._tables`).

    ``text_columns`` (ids, categories) are read as text, so ``007`` and ``7`` stay different ids
    and a category named ``NA`` (``None``, ``null``) is that category, not a missing one.
    ``label_columns`` are read as the raw cells and parsed by the one label parser of
    every entry point (:func:`bayeval.core._validate.label_cell`): ``NA``, ``n/a``, ``null``
    or ``yes`` in a label column is an error with its line number, never "not vetted".
    ``raw_columns`` are read as the cells' text, unparsed (``NA`` stays ``"NA"``).
    ``required`` (``{flag: column}``): columns that must be there (the error names the
    file, the flag and the file's columns).
    """
    from ._tables import TableError

    table = _table(path, text_columns=text_columns, raw_columns=[*label_columns, *raw_columns])
    try:
        table.require(required or {})
    except TableError as exc:
        raise CLIError(str(exc)) from exc
    df = table.frame
    for c in raw_columns:
        if c in table.raw:
            df[c] = table.raw[c]
    for c in label_columns:
        if c and c in df.columns:
            try:
                df[c] = table.labels(c)
            except TableError as exc:
                raise CLIError(str(exc)) from exc
    return df


def _need_labels(args) -> None:
    if args.label is None and not args.store:
        raise CLIError(f"{args.command} needs vetted labels: --label COL (the scores file's column of 1/0, empty = "
                       "not vetted) and/or --store STORE (a label store of `bayeval select --store` / "
                       "`bayeval label`).")


def _fraction(value, flag: str, *, open_interval: bool) -> None:
    import math

    ok = value is not None and math.isfinite(value) and (0 < value < 1 if open_interval else 0 <= value <= 1)
    if value is not None and not ok:
        rng = "between 0 and 1 (exclusive)" if open_interval else "between 0 and 1"
        hint = f"; did you mean {value / 100:g}?" if 1 < value <= 100 else "."
        raise CLIError(f"{flag} must be a probability {rng}, got {value:g}{hint}")


def _check_args(args) -> None:
    """Every option checked before anything is read or fitted, with the flag's name."""
    from .core import _validate as V

    cmd = args.command
    check_inputs_exist(args)  # a missing scores file named as such, before any other option's complaint
    strip_annotator(args)  # "ana" and "ana " are one person; "   " is no one
    for name, value in vars(args).items():  # every numeric option: NaN and inf are never meant
        if isinstance(value, float) and not math.isfinite(value):
            raise CLIError(f"--{name.replace('_', '-')} must be a finite number, got {value}.")
    if getattr(args, "max_memory_gb", None) is not None:
        if not args.max_memory_gb > 0:
            raise CLIError(f"--max-memory-gb must be a positive number of GB, got {args.max_memory_gb:g}.")
        os.environ[V.MAX_MEMORY_ENV] = str(args.max_memory_gb)  # seen by every size check of this run
    if hasattr(args, "random_seed") and args.random_seed is None:
        args.random_seed = 0
    for flag, minimum in (("draws", 1), ("tune", 0), ("chains", 1), ("random_seed", 0), ("size", 1), ("batch", 1),
                          ("batch_size", 1), ("budget", 1)):
        value = getattr(args, flag, None)
        if value is not None and value < minimum:
            raise CLIError(f"--{flag.replace('_', '-')} must be an integer >= {minimum}, got {value}.")
    for k in getattr(args, "k", None) or []:
        if k < 1:
            raise CLIError(f"--k must be a whole number >= 1 (the number of top-ranked items), got {k}.")
    if hasattr(args, "hdi_prob"):
        _fraction(args.hdi_prob, "--hdi-prob", open_interval=True)
    if getattr(args, "width", None) is not None and not args.width > 0:  # before a comparison's fit, not after
        raise CLIError(f"--width must be a positive half-width of the gap (e.g. 0.01), got {args.width:g}.")
    for flag in ("min_precision", "min_recall"):
        if hasattr(args, flag):
            _fraction(getattr(args, flag), "--" + flag.replace("_", "-"), open_interval=False)
    if getattr(args, "prob", None) is not None:
        _fraction(args.prob, "--prob", open_interval=True)
    if getattr(args, "threshold", None) is not None and not abs(args.threshold) < float("inf"):
        raise CLIError(f"--threshold must be a finite score, got {args.threshold}.")
    check_model_columns(args)  # --model label_flip without --noisy-label
    if cmd == "fit":
        needs = [m for m in args.metric if m in ("precision", "recall", "f_score", "accuracy")]
        if needs and args.threshold is None and args.prediction is None:
            raise CLIError(
                f"--metric {' '.join(needs)} needs a decision: give --threshold T (the score "
                "cut-off) or --prediction COL (a column of the classifier's 0/1 decisions)."
            )
    if cmd == "threshold" and args.min_precision is None and args.min_recall is None:
        raise CLIError("Give --min-precision and/or --min-recall.")
    if cmd == "threshold" and args.min_flagged is not None and args.min_flagged < 0:
        raise CLIError(f"--min-flagged must be a whole number >= 0 (0 allows any threshold), got {args.min_flagged}.")
    out = getattr(args, "out", None)
    if out and cmd in ("fit", "report"):
        p = Path(out)
        if cmd == "report" and p.exists() and not p.is_dir():
            raise CLIError(f"--out {out}: is a file; --out names the folder the report is written to.")
        if cmd == "fit" and p.is_dir():
            raise CLIError(f"--out {out}: is a folder; --out names the CSV file to write.")
        if cmd == "fit" and not p.parent.exists():  # (a report creates its folder)
            raise CLIError(f"--out {out}: the folder {str(p.parent)!r} does not exist; create it first.")
    if cmd in ("fit", "threshold", "select", "demo"):
        try:
            V.check_job_size(args.chains, args.draws, bytes_per_draw=V.FIT_BYTES_PER_DRAW,
                             what="--draws", draws_per_second=2000, how_to_raise="--max-memory-gb")
        except ValueError as exc:
            raise CLIError(str(exc)) from exc


def _load_data(args):
    from .core.data import EvalData

    from ._tables import table_kind

    labels = [args.label]  # (noisy labels and predictions: below, none may be empty)
    required = {"--score": args.score, "--label": args.label, "--noisy-label": args.noisy_label,
                "--prediction": getattr(args, "prediction", None), "--category": args.category,
                getattr(args, "id_flag", "--id"): args.item_id}  # `label --scores` names its --scores-id
    df = _read_table(args.scores, text_columns=[args.item_id, args.category], label_columns=labels, required=required,
                     raw_columns=[args.noisy_label, getattr(args, "prediction", None)])
    csv = table_kind(args.scores) != "parquet"
    if args.score in df.columns and df[args.score].dtype.kind not in "fiub":  # text among the scores
        from .core import _validate as V

        bad = V.not_numbers(df[args.score].to_numpy(dtype=object))
        if bad:
            where = ", ".join(f"{row_place(df, i)}: {v!r}" for i, v in bad[:10])
            more = f" and {len(bad) - 10} more" if len(bad) > 10 else ""
            raise CLIError(f"{args.scores}: column {args.score!r} (--score) must hold numbers; "
                           f"{len(bad)} value(s) are not numbers: {where}{more}. Fix or remove those rows.")
    _check_rows(df, args, csv)
    for flag, column in (("--noisy-label", args.noisy_label), ("--prediction", getattr(args, "prediction", None))):
        if column is not None:
            df[column] = complete_label_cells(df[column], flag=flag, path=args.scores, column=column, csv=csv)
    if args.item_id and args.item_id in df.columns and df[args.item_id].dtype.kind in "iu":  # Parquet's ints
        text = store_text_ids(df[args.item_id].tolist(), getattr(args, "store", None),
                              what=f"{args.scores}: column {args.item_id!r} (--id)")
        if text is not None:
            df[args.item_id] = text
    try:
        return EvalData.from_frame(
            df,
            score=args.score,
            label=args.label,
            noisy_label=args.noisy_label,
            prediction=getattr(args, "prediction", None),
            category=args.category,
            item_id=args.item_id,
        )
    except (TypeError, ValueError) as exc:
        raise CLIError(f"{args.scores}: {exc}") from exc


def _check_rows(df, args, csv: bool) -> None:
    """Scores that are missing or infinite, item ids that are empty or repeated: said by column and
    file line (a CSV's line 2 is its first row), before EvalData's own check would say it by position."""
    import numpy as np
    import pandas as pd

    def where(rows) -> str:
        shown = ", ".join(row_place(df, i) for i in rows[:10])
        return shown + (f" and {len(rows) - 10} more" if len(rows) > 10 else "")

    if args.score in df.columns:
        values = pd.to_numeric(df[args.score], errors="coerce").to_numpy(dtype=float)
        bad = np.flatnonzero(~np.isfinite(values)).tolist()
        if bad:
            raise CLIError(f"{args.scores}: column {args.score!r} (--score) must hold a finite number on every row; "
                           f"{len(bad)} row(s) are empty, NaN or infinite ({where(bad)}). Every item needs a score: "
                           "give it, or remove those rows.")
    if args.item_id is not None and args.item_id in df.columns:
        ids, flag = df[args.item_id], getattr(args, "id_flag", "--id")
        empty = np.flatnonzero(ids.isna().to_numpy() | (ids.astype(str).str.strip() == "").to_numpy()).tolist()
        if empty:
            raise CLIError(f"{args.scores}: column {args.item_id!r} ({flag}) is empty on {len(empty)} row(s) "
                           f"({where(empty)}). Every item needs an id: fill them in, or leave {flag} out to number "
                           "the items by row.")
        dup = np.flatnonzero(ids.duplicated(keep=False).to_numpy()).tolist()
        if dup:
            first = ids.iloc[dup[0]]
            raise CLIError(f"{args.scores}: column {args.item_id!r} ({flag}) repeats ids on {len(dup)} row(s) "
                           f"({where(dup)}; e.g. {first!r}). An id names one item: keep one row per item.")


def _import_export(args) -> int:
    from .active.repair import import_export

    given = [flag for flag, v in (("--annotator", args.annotator), ("--batch", args.batch),
                                  ("--scores", args.scores)) if v is not None]
    if given:
        raise CLIError(f"{args.labels} is an export of `bayeval export-labels`: its rows carry their own "
                       f"annotators, so {', '.join(given)} does not apply. Leave it out; the rows are written as "
                       "they were (in order, each with its annotator and its id's kind).")
    try:
        done = import_export(args.labels, args.store)
    except ValueError as exc:
        raise CLIError(str(exc)) from exc
    print(f"restored {done['rows']} label row(s) of {done['items']} item(s) by {done['annotators']} annotator(s) "
          f"from the export {args.labels} into {args.store}, in the order they were written (batches are not "
          "restored: `bayeval select --store` starts new ones).")
    return 0


def _warn_one_class(data) -> None:
    """Say so when the vetted labels hold one class only: the fit cannot anchor the other."""
    if data.n_vetted and data.n_vetted_negative == 0:
        print(f"warning: all {data.n_vetted} vetted labels are positive (no vetted negatives): nothing "
              "anchors where the negatives are, so the intervals rest on the model's assumptions and may "
              "be wide or wrong. Vet a few low-scored items.", file=sys.stderr)
    elif data.n_vetted and data.n_vetted_positive == 0:
        print(f"warning: all {data.n_vetted} vetted labels are negative (no vetted positives): nothing "
              "anchors where the positives are, so the intervals rest on the model's assumptions and may "
              "be wide or wrong. Vet a few high-scored items.", file=sys.stderr)


def _fit(args, data):
    name, model, fit_kw = _build_model(args, data)
    check_fit_size(args.chains, args.draws, model, data, f"bayeval {args.command}")
    print(
        f"Fitting {name} on {data.n_items} items ({data.n_vetted} vetted): {args.chains} chains x "
        f"{args.draws} draws...",
        file=sys.stderr,
        flush=True,
    )
    with logodds_said():  # logodds on probabilities: said before the fit (check_transform)
        post = model.fit(data, draws=args.draws, tune=args.tune, chains=args.chains, random_seed=args.random_seed,
                         progressbar=not args.no_progress, **fit_kw,
                         warn=False)  # reported below as one line on stderr instead of a Python warning
    say_caveats(post, data)  # what the labels and scores cannot tell this model (EvalData.caveats)
    return post


def _build_model(args, data):
    """``(name, model, fit keywords)`` of the options ``--model``, ``--negative``... for ``data``."""
    name = args.model or ("label_flip" if data.noisy_labels is not None else "default")
    if name == "label_flip":
        from .models import LabelFlip

        model = LabelFlip()
        fit_kw = {}
    elif name == "default":
        from .models import Stack

        if args.transform not in ("auto", "logit", "standardize", "logodds"):
            raise CLIError(f"--transform {args.transform} is a score mixture's map; the default model takes auto, "
                           "logit, standardize or logodds (or use --model score_mixture).")
        check_transform(args, data.scores)  # in the command line's words, before the fit
        model = Stack(transform=args.transform)
        fit_kw = {}
    else:
        from .models import ScoreMixture

        model = ScoreMixture(args.negative, args.positive, transform=args.transform)
        fit_kw = {}
    if data.n_vetted == 0 and name in ("score_mixture", "default"):
        raise CLIError(f"No item is vetted (the --label column is empty): the {name} model needs a few vetted labels, "
                       "ideally 30 or more chosen at random.")
    _warn_one_class(data)
    return name, model, fit_kw


def _metric_table(args):
    from .recalibrate import threshold_text

    out = {}
    for m in args.metric:
        if m in ("precision_at_k", "recall_at_k"):
            for k in args.k:
                out[f"{m}[k={k}]"] = (m, {"k": k})
        elif m in ("precision", "recall", "f_score", "accuracy") and args.threshold is not None:
            # the threshold as given: 0.99999996 shown as 1 would read as another rule than the one applied
            out[f"{m}[t={threshold_text(args.threshold, None)}]"] = (m, {"threshold": args.threshold})
        else:
            out[m] = (m, {})
    return out


def _interval_pairs(columns) -> list[tuple[str, str, str]]:
    """``(lower, upper, label)`` for each pair of interval columns of a summary table.

    ``'90% HDI lower'``/``'90% HDI upper'`` (reports), ``'hdi_5%'``/``'hdi_95%'`` (fit) and
    ``'precision_hdi_5%'``/``'precision_hdi_95%'`` (``threshold --table``: one pair per quantity).
    """
    import re

    cols = [str(c) for c in columns]
    pairs = []
    for c in cols:
        if c.endswith(" lower") and c[: -len("lower")] + "upper" in cols:
            pairs.append((c, c[: -len("lower")] + "upper", c[: -len(" lower")]))
    bounds: dict[str, list] = {}  # quantity ('' for fit's table) -> [(column, percent)]
    for c in cols:
        if m := re.fullmatch(r"(?:(.+)_)?hdi_([\d.]+)%", c):
            bounds.setdefault(m.group(1) or "", []).append((c, float(m.group(2))))
    for what, lows in bounds.items():
        if len(lows) == 2:
            (lo, a), (hi, b) = sorted(lows, key=lambda t: t[1])
            pairs.append((lo, hi, f"{what} {b - a:g}% HDI".strip()))
    return pairs


def _format_frame(df, fmt: str = "table", *, floatfmt: str = "{:.4f}", width: int | None = None) -> str:
    """The text of a table as printed: ``table`` (fits ``width``), ``csv`` or ``md``.

    In ``table`` and ``md`` each interval (lower, upper) is one ``[lo, hi]`` column, so
    it is never the part left out, and a ``vetted_only`` value with the vetted items it rests
    on (``vetted_only_n``) is one ``vetted_only (n)`` column (``0.9159 (40)``); a table wider
    than ``width`` (default: the terminal's, ``COLUMNS``, else 80) wraps its columns onto
    further blocks instead of hiding any. ``csv`` keeps every column as it is, at full precision.
    """
    import shutil

    import numpy as np
    import pandas as pd

    if fmt == "csv":
        return df.to_csv().rstrip("\n")
    show = df.copy()
    for lo, hi, label in _interval_pairs(df.columns):
        text = [
            "" if not (np.isfinite(a) and np.isfinite(b)) else f"[{floatfmt.format(a)}, {floatfmt.format(b)}]"
            for a, b in zip(df[lo].to_numpy(dtype=float), df[hi].to_numpy(dtype=float), strict=True)
        ]
        at = list(show.columns).index(lo)
        show = show.drop(columns=[lo, hi])
        show.insert(at, label, text)
    if {"vetted_only", "vetted_only_n"} <= set(show.columns):
        text = [f"{'NaN' if v != v else floatfmt.format(v)} ({int(n)})"
                for v, n in zip(df["vetted_only"].to_numpy(dtype=float), df["vetted_only_n"], strict=True)]
        at = list(show.columns).index("vetted_only")
        show = show.drop(columns=["vetted_only", "vetted_only_n"])
        show.insert(at, "vetted_only (n)", text)
    for c in show.columns:
        if show[c].dtype.kind == "f":
            show[c] = [("NaN" if v != v else floatfmt.format(v)) for v in show[c].to_numpy()]
    if fmt == "md":
        name = str(show.index.name or "")
        head = [name, *map(str, show.columns)]
        lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] * len(head)) + "|"]
        for idx, row in zip(show.index, show.itertuples(index=False), strict=True):
            lines.append("| " + " | ".join([str(idx), *map(str, row)]) + " |")
        return "\n".join(lines)
    width = width or shutil.get_terminal_size((80, 24)).columns
    with pd.option_context("display.max_columns", None, "display.max_colwidth", None,
                           "display.width", max(width, 40), "display.expand_frame_repr", True,
                           "display.max_rows", None):  # never hide a row (select --size 600 lists 600 items)
        return str(show)


def _print_frame(df, fmt: str = "table", *, floatfmt: str = "{:.4f}") -> None:
    print(_format_frame(df, fmt, floatfmt=floatfmt))


def _check_save_args(args) -> None:
    """--save / --from-fit checked before anything is read or fitted."""
    save, from_fit = getattr(args, "save", None), getattr(args, "from_fit", None)
    if save:
        p = Path(save)
        if p.is_dir():
            raise CLIError(f"--save {save}: is a folder; --save names the .nc file to write.")
        if p.exists() and not args.overwrite:
            raise CLIError(f"--save {save}: the file exists; pass --overwrite to replace it.")
        if not p.parent.exists():
            raise CLIError(f"--save {save}: the folder {str(p.parent)!r} does not exist; create it first.")
    if from_fit:
        if save:
            raise CLIError("--from-fit reads a saved fit and --save writes a new one; give one of them.")
        given = [f"--{k}" for k in ("draws", "tune", "chains") if getattr(args, k, None) is not None]
        if given:
            raise CLIError(f"{' '.join(given)} set how to sample, but --from-fit does not sample; drop them.")
        if not Path(from_fit).is_file():
            raise CLIError(f"--from-fit {from_fit}: no such file (save one with --save FIT.nc).")


def _save_fit(post, args) -> None:
    if getattr(args, "save", None):
        from .persist import save

        save(post, args.save, overwrite=args.overwrite)
        print(f"fit saved: {args.save}", file=sys.stderr)


def _same_model(spec, expected) -> bool:
    """Whether a saved fit's model is the one a card describes (class and parameters)."""
    from .models import Stack
    from .persist import params_json

    if type(spec) is not type(expected):
        return False
    a, b = spec.get_params(), expected.get_params()
    if isinstance(expected, Stack) and b.get("candidates") is None:  # the fit lists the default candidates
        a, b = {}, {}
    return params_json(a, "fit") == params_json(b, "card")


def _load_fit(path: str, data, card):
    """A saved fit, checked to have been made on ``data`` (the card's) with the card's model."""
    from .persist import load

    try:
        post = load(path)
    except (FileNotFoundError, ValueError) as exc:
        raise CLIError(str(exc)) from exc
    fitted = getattr(post, "data", None)
    if fitted is None or not hasattr(fitted, "fingerprint") or fitted.fingerprint() != data.fingerprint():
        what = repr(fitted) if fitted is not None else "no EvalData"
        raise CLIError(f"--from-fit {path}: the fit was made on other data ({what}) than the card's ({data!r}); "
                       "render it with the card it was made from, or refit without --from-fit.")
    expected = card.build_model()
    if not _same_model(getattr(post, "model_spec", None), expected):
        raise CLIError(f"--from-fit {path}: the fit's model ({getattr(post, 'model_spec', None)!r}) is not the card's "
                       f"({expected!r}); a card's report shows the card's model: refit without --from-fit.")
    return post


# ---------------------------------------------------------------- commands


def _cmd_report(args) -> int:
    from ._cli_cluster import ClusterError, client_for

    if len(args.card) > 1 and (args.out or args.from_fit or args.save or args.store):
        raise CLIError("With several cards each report goes to CARD/report and reads its card's own label store: "
                       "leave out --out, --from-fit, --save and --store (they name one card's).")
    try:
        with client_for(args) as client:
            if len(args.card) == 1 and client is None:
                return _report_card(args, *_open_card(args, args.card[0]))
            return _report_cards(args, client)
    except ClusterError as exc:
        raise CLIError(str(exc)) from exc


def _open_card(args, path):
    """``(card, data, truth, out, store)`` of one card, checked as ``bayeval report`` checks it
    (``store``: its label store, with how many labels it added and replaced)."""
    from .cards import load_card

    try:
        card = load_card(path, allow_outside=args.allow_outside)
    except (FileNotFoundError, ValueError, TypeError, KeyError) as exc:
        raise CLIError(str(exc)) from exc
    if getattr(args, "store", None):  # the labels vetted into another store (`bayeval vet CARD --store FILE`)
        card = card_with_store(card, args.store)
    out = Path(args.out) if args.out else Path(card.path) / "report"
    if out.exists() and not out.is_dir():
        raise CLIError(f"{out}: is a file; the report is written to a folder (see --out).")
    from .core import _validate as V

    chains = args.chains or card.sampling["chains"]
    draws = args.draws or card.sampling["draws"]
    try:
        V.check_job_size(chains, draws, bytes_per_draw=V.FIT_BYTES_PER_DRAW, what="--draws/--chains",
                         draws_per_second=2000, how_to_raise="--max-memory-gb")
    except ValueError as exc:
        raise CLIError(str(exc)) from exc
    try:
        data, truth = card.load_data(store=True)  # with the labels vetted into the card's store
        store = say_card_store(card, data)  # named on stderr, recorded in the report
    except (ValueError, TypeError) as exc:
        raise CLIError(str(exc)) from exc
    _warn_one_class(data)
    check_card_transform(card, data.scores)  # in the card's words, before the fit
    refuse_unvetted_card(card, data, getattr(args, "store", None))  # the prior's intervals alone: as fit refuses
    if not data.n_vetted and not card.store_file.is_file():  # the labels may be in a store named nowhere
        print(f"note: {card.path.name}: no item is vetted, and its label store {card.store_file} does not exist; "
              "labels vetted into another store (`bayeval vet CARD --store FILE`) are read with --store FILE.",
              file=sys.stderr)
    if not getattr(args, "from_fit", None):  # the memory check again, with the data's size
        check_fit_size(chains, draws, card.build_model(), data, f"bayeval report {card.path.name}")
    return card, data, truth, out, store


def _report_cards(args, client) -> int:
    """Several cards (or one on a cluster): the fits as tasks, then each card's report here."""
    from ._cli_cluster import say_failures
    from .core.distributed import fit_many

    opened = {str(path): _open_card(args, path) for path in args.card}
    say = None if args.quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))
    if say:
        say(f"fitting {len(opened)} card(s) as {'Dask tasks' if client is not None else 'one after another'}...")
    tasks = {name: c[0].fit_task(progressbar=False, draws=args.draws, tune=args.tune, chains=args.chains, warn=False)
             for name, c in opened.items()}
    with logodds_said():  # logodds on probabilities: said before the fit (check_card_transform)
        posts = fit_many(tasks, client=client, what="card", errors="keep", progress=say)
    for name, post in posts.items():
        _report_card(args, *opened[name], post=post, client=client)
    say_failures(posts.failures, "card")
    return 1 if posts.failures else 0


def _report_card(args, card, data, truth, out, store=None, post=None, client=None) -> int:
    from .report import report

    if post is not None:
        pass
    elif args.from_fit:
        post = _load_fit(args.from_fit, data, card)
        if not args.quiet:
            print(f"{card.title}: {data.n_items} items, {data.n_vetted} vetted; the fit saved in {args.from_fit} "
                  f"({post.n_chains} chains x {post.n_draws} draws)...", file=sys.stderr, flush=True)
    else:
        if not args.quiet:
            chains = args.chains or card.sampling["chains"]
            draws = args.draws or card.sampling["draws"]
            print(f"{card.title}: {data.n_items} items, {data.n_vetted} vetted; fitting {card.model_name} "
                  f"({chains} chains x {draws} draws)...", file=sys.stderr, flush=True)
        # bad diagnostics are shown in the report (a warning box) and said on stderr below, not as a Python warning
        with logodds_said():  # logodds on probabilities: said before the fit (check_card_transform)
            post = card.fit(progressbar=not (args.no_progress or args.quiet), draws=args.draws, tune=args.tune,
                            chains=args.chains, warn=False)
        _save_fit(post, args)
    say = None if args.quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))
    from contextlib import nullcontext

    from .core._progress import quiet

    with warnings_as_lines():  # a label store that says otherwise than the card's [data] label_strategy
        selection = card_vetted_selection(card, data)
    with quiet() if args.quiet else nullcontext():  # --quiet: no progress bar of a metric pass either
        rep = report(
            post,
            progress=say,
            title=card.title,
            description=card.description,
            metrics=card.metrics(),
            constraints=card.constraints,
            hdi_prob=card.report_options.get("hdi_prob", HDI_PROB),
            truth=truth,
            source=card.data_file,
            store=store,
            client=client,
            vetted_selection=selection,
        )
    if say:
        say(f"report: writing {out}...")
    # the caveats at the top of the report's reading, on the terminal too (as `bayeval fit` says them)
    say_caveats(post, data, report_caveats(rep), prefix=f"{card.path.name}: " if len(args.card) > 1 else "")
    paths = rep.save(out)
    for key in ("metrics",):
        if key in rep.tables:
            _print_frame(rep.tables[key], args.table_format)
    for kind, p in paths.items():  # --format csv: stdout holds the metrics table alone
        tell(args, f"{kind}: {p}")
    return 0


def _cmd_fit(args) -> int:
    from ._cli_cluster import ClusterError, client_for, fit_per_category, say_failures

    _need_labels(args)
    data = _load_data(args)
    check_k(args, data, "each" if args.per_category else args.category_mode,
            pooled="--category-mode pooled" + " without --per-category" * bool(args.per_category))
    if args.store:
        data = with_store(args, data)
    if args.per_category and args.save:
        raise CLIError("--save keeps one fit; with --per-category (one fit per category) leave it out.")
    try:
        with client_for(args) as client:
            if args.per_category:
                _, model, _ = _build_model(args, data)
                table, failed = fit_per_category(args, data, model, client, _metric_table(args), {})
                if table is not None:
                    _write_table(table, args)
                say_failures(failed, "category")
                return 1 if failed else 0
            return _fit_table(args, data, client)
    except ClusterError as exc:
        raise CLIError(str(exc)) from exc


def _write_table(table, args) -> None:
    _print_frame(table, args.table_format)
    if args.out:
        table.to_csv(args.out)
        print(f"written: {args.out}", file=sys.stderr)


def _fit_table(args, data, client) -> int:
    from ._report_text import at_rank_k, vetted_only_line
    from .core.evaluate import vetted_only, vetted_only_n

    post = _fit(args, data)
    _save_fit(post, args)
    kw = {"category": args.category_mode} if data.has_categories else {}
    table = post.summary(_metric_table(args), hdi_prob=args.hdi_prob, client=client, **kw)
    import warnings

    from .core.summary import ThresholdWarning, threshold_caveats, undefined_sentence

    names = {label: m for label, (m, _) in _metric_table(args).items()}
    for metric, share in table.attrs.get("undefined", {}).items():  # the row summarizes the defined draws
        said = undefined_sentence(metric, share, nothing_flagged=names.get(metric) == "precision")
        print(f"caveat: {said}", file=sys.stderr)
    for said in threshold_caveats(data.scores, [(label, o.get("threshold")) for label, (_, o) in
                                                _metric_table(args).items()]):  # --threshold 50 on [0, 1] scores
        print(f"caveat: {said}", file=sys.stderr)
    if data.n_vetted:
        vo, vn = [], []  # each vetted-only value, and the vetted items it rests on (as the report's table)
        for _, (m, opts) in _metric_table(args).items():
            try:
                with warnings.catch_warnings():  # a threshold above every score: said as a caveat above
                    warnings.simplefilter("ignore", ThresholdWarning)
                    v = vetted_only(data, m, **kw, **opts)
                n = vetted_only_n(data, m, **kw, **opts).broadcast_like(v).transpose(*v.dims)
                vo.extend(list(v.values.ravel()) if v.ndim else [float(v)])
                vn.extend(int(c) for c in n.values.ravel())
            except ValueError:
                vo.append(float("nan"))
                vn.append(0)
        if len(vo) == len(table):
            table["vetted_only"] = vo
            table["vetted_only_n"] = vn
            # as the report's reading: chosen on purpose (a designed --store batch), no estimates; at a
            # rank k, the vetted items' own top k
            selection = store_vetted_selection(args.store, data) if args.store else None
            line = vetted_only_line(selection, data.n_vetted, pool=data.n_items,
                                    at_k=any(at_rank_k(m) for m, _ in _metric_table(args).values()))
            if line:
                print(f"note: {line}", file=sys.stderr)
    _write_table(table, args)
    return 0


def _compare_inputs(args):
    """The scores and labels of a comparison: from cards (joined on item id) or one scores file."""
    import numpy as np
    import pandas as pd

    if args.score is None:  # the cards' form: each card's store, and the comparison's
        return card_inputs(args)
    if len(args.inputs) != 1:
        raise CLIError(f"with --score, give one scores file (one column per classifier); got {len(args.inputs)} "
                       f"inputs ({' '.join(args.inputs)}). To compare model cards leave --score out.")
    if args.label is None and not args.store:
        raise CLIError("a scores file needs --label COL (the column of vetted labels: 1/0, empty = not vetted) "
                       "and/or --store STORE (a label store of `bayeval select --store` / `bayeval label`).")
    path = args.inputs[0]
    names = list(dict.fromkeys(args.score))
    if len(names) < 2:
        raise CLIError(f"compare needs at least two score columns (--score A B ...), got {args.score}.")
    required = {"--label": args.label, "--id": args.item_id, **{f"--score {c}": c for c in names}}
    df = _read_table(path, text_columns=[args.item_id], label_columns=[args.label] if args.label else [],
                     required=required)
    scores = {}
    for c in names:
        col = pd.to_numeric(df[c], errors="coerce") if df[c].dtype.kind not in "fiub" else df[c]
        bad = np.flatnonzero(~np.isfinite(np.asarray(col, dtype=float)))
        if bad.size:
            raise CLIError(f"{path}: column {c!r} (--score) must hold a finite number on every row; "
                           f"{bad.size} row(s) do not (first: {row_place(df, bad[0])}). Every classifier must score "
                           "every item: drop those rows or give the scores.")
        scores[c] = np.asarray(col, dtype=float)
    from .core.data import EvalData

    ids = None if args.item_id is None else df[args.item_id].to_numpy()
    if ids is not None and ids.dtype.kind in "iu":  # Parquet's integer ids, known to the store as text
        text = store_text_ids(ids.tolist(), args.store, what=f"{path}: column {args.item_id!r} (--id)")
        ids = ids if text is None else np.array(text)
    try:
        labels = EvalData(scores[names[0]], None if args.label is None else df[args.label].to_numpy(), item_ids=ids)
    except (TypeError, ValueError) as exc:
        raise CLIError(f"{path}: {exc}") from exc
    if args.store:
        labels = with_store(args, labels, scores=path, score=names[0], label=args.label)
    refuse_unvetted(args, labels)
    return scores, labels, "auto", False


def _cmd_compare(args) -> int:
    from .compare.comparison import compare

    scores, labels, transform, said = _compare_inputs(args)  # transform: each card's [model] transform
    check_k(args, labels, args.category_mode)
    check_compare_size(args, labels)  # in the command line's words (--max-memory-gb, --draws), before the fit
    with warnings_as_lines():  # said as warning: lines, as fit says them
        with logodds_said() if said else contextlib.nullcontext():  # a card's logodds: said in its words
            cmp = compare(scores, labels, transform=transform, draws=args.draws, chains=args.chains,
                          random_seed=args.random_seed, progressbar=not args.no_progress, warn=False)
        said = say_diagnostics(cmp.posterior, cmp.data)
        opts = {"k": args.k[0]} if args.metric in ("precision_at_k", "recall_at_k") else {}
        reading = ""
        if cmp.data.has_categories:  # one value per draw, as a card's report reads a metric: pooled by default
            opts["category"] = args.category_mode
            reading = " over all items pooled" if args.category_mode == "pooled" else " (mean over categories)"
        ranking = cmp.ranking(args.metric, hdi_prob=args.hdi_prob, **opts)
        pairs = cmp.summary(args.metric, hdi_prob=args.hdi_prob, width=args.width, **opts)
    tell(args, f"{args.metric}{'' if 'k' not in opts else f' (k={args.k[0]})'}{reading}: {cmp!r}")
    pairs = pairs.set_index(["better", "worse"])
    print_compare(args, ranking, pairs, _format_frame)
    for caveat in cmp.caveats() + [JOINT_CAVEAT] * (args.score is None):  # cards: not their reports' numbers
        if caveat not in said:  # said as a warning already
            print(f"caveat: {caveat}", file=sys.stderr)
    if args.out:
        pairs.to_csv(args.out)
        print(f"written: {args.out}", file=sys.stderr)
    return 0


def _cmd_threshold(args) -> int:
    import pandas as pd

    from .recalibrate import probability_text, recalibrate, threshold_text

    if args.min_precision is None and args.min_recall is None:
        raise CLIError("Give --min-precision and/or --min-recall.")
    _need_labels(args)
    data = _load_data(args)
    if args.store:
        data = with_store(args, data)
    check_min_flagged(args, data.n_items)
    post = _fit(args, data)
    try:
        rec = recalibrate(post, min_precision=args.min_precision, min_recall=args.min_recall, prob=args.prob,
                          min_flagged=args.min_flagged)
    except ValueError as exc:
        raise CLIError(str(exc)) from exc
    # in this command's words (--min-flagged), and without the caveats: said on stderr after the fit
    rec = dataclasses.replace(rec, allow_any="give --min-flagged 0", caveats=())
    unmet = not rec.met  # also False where no posterior draw meets the constraint anywhere
    if unmet:  # a verdict of no draw meeting it already says what to do
        advice = "" if rec.no_draw_meets else f" {rec.advice[0].upper()}{rec.advice[1:]}"
        print(f"warning: {rec.verdict}{advice}", file=sys.stderr)
    tell(args, str(rec))  # the verdict in words, then what the threshold flags (stderr with --format csv)
    # as the shortest decimal that flags the same items (0.99999996 printed as "1" would flag none)
    tell(args, f"threshold: {rec.threshold_text}{' (best available; does NOT meet the constraint)' if unmet else ''}")
    tell(args, f"probability the constraint holds at it: {probability_text(rec.probability_at_threshold, rec.prob, 3)}")
    if args.table:
        table = rec.table()
        if args.table_format != "csv":  # csv keeps the full float; the others show what to apply
            table.index = pd.Index([threshold_text(t, data.scores) for t in table.index], name="threshold")
        _print_frame(table, args.table_format)
    return 0


def _cmd_select(args) -> int:
    import numpy as np
    import pandas as pd

    from .active import LabelStore, expected_change
    from .active.design import design, design_target, resolve_auto
    from .active.select import select_with_change

    store = held = None
    if args.store:  # a store path that cannot work is refused before the data are read
        store = LabelStore(args.store)
        store.check_writable()  # a damaged store is refused before the fit, not after it
    data = _load_data(args)
    check_k(args, data, "mean", pooled="leave --category out")  # select reads a metric per category as their mean
    if store is not None:
        refuse_foreign_items(store, data, args)  # a forgotten --id, before the store learns the row numbers
        check_strays(store, data, args)
        store.register_items(data.item_ids.tolist(), source=args.scores)  # `bayeval label` checks ids against them
        pending = store.pending()
        if pending and not args.new_batch:
            print(f"The last batch is not fully labeled yet; its remaining {len(pending)} item(s):", file=sys.stderr)
            print_items(args, pending)
            store.close()
            return 0
        data = apply_store_labels(store, data, args)
        held = held_items(store, data, args)  # earlier batches' unlabeled items: never proposed twice
    if nothing_to_select(data, store, held):  # every item vetted (or held): no fit, no empty batch recorded
        return 0
    kw = {"k": args.k[0]} if args.metric in ("precision_at_k", "recall_at_k") else {}
    if data.has_categories:
        kw["category"] = "mean"
    strategy = resolve_auto(args.strategy, data, args.size)
    post = change = None
    try:
        if strategy == "design":  # chosen by the scores alone: nothing to fit
            pos = design(data, args.size, metric=design_target(args.metric)[0], random_seed=args.random_seed,
                         exclude=held)
        else:
            post = _fit(args, data)
            pos, change = select_with_change(post, metric=args.metric, size=args.size, random_seed=args.random_seed,
                                             exclude=held, strategy="auto" if args.strategy == "auto" else strategy,
                                             **kw)
    except ValueError as exc:
        raise CLIError(str(exc)) from exc
    pos = np.asarray(pos, dtype=np.int64)
    table = pd.DataFrame({"item": data.item_ids[pos], "score": data.scores[pos]})
    if post is not None:
        table["p_positive"] = post.item_probability().values[pos]
    if strategy == "expected_change":  # the values that ranked the batch (one pass over the label draws, not two)
        if change is None:
            change = expected_change(post, args.metric, **kw)
        table["expected_change"] = change.values[pos]
    if data.has_categories:
        table["category"] = data.categories[pos]
    _print_frame(table.set_index("item"), args.table_format, floatfmt="{:.4g}")
    if strategy == "expected_change":  # the column is each item's change alone; the batch was chosen as a whole
        print("expected_change: each item's expected change of the metric on its own, before the batch; the batch "
              "is chosen greedily, each item given the ones before it, so the column need not decrease"
              + (", and the exploring share of the batch (the design's least-vetted strata) is chosen for coverage, "
                 "not for this column" if args.strategy == "auto" else "") + ".", file=sys.stderr)
    if store is not None:
        recorded = "expected_change+explore" if strategy == "expected_change" and args.strategy == "auto" else strategy
        batch = store.new_batch(table["item"].tolist(), strategy=recorded)
        print(f"recorded as batch {batch} in {args.store}", file=sys.stderr)
        store.close()
    return 0


def _cmd_label(args) -> int:
    from .core import _validate as V
    from .active import LabelStore

    from ._tables import TableError

    from .active.repair import is_export

    if is_export(args.labels):  # `bayeval export-labels`'s file: every row back, in order, as it was
        return _import_export(args)

    table = _table(args.labels, text_columns=[args.item_id], raw_columns=[args.label])
    try:
        table.require({"--id": args.item_id, "--label": args.label})
    except TableError as exc:
        raise CLIError(str(exc)) from exc
    where = table.where
    ids = table.frame[args.item_id].tolist()
    ids = store_text_ids(ids, args.store, what=f"{args.labels}: column {args.item_id!r} (--id)") or ids
    raw = table.cells(args.label)
    values, not_labels = V.parse_label_cells(raw, allow_empty=False)
    not_labels = set(not_labels)
    bad = []  # (row index or None, item, why)
    for j in not_labels:
        v = raw[j]
        why = "empty label" if V.label_cell(v) is not None else f"label {v!r} is not {V.LABEL_SPELLINGS}"
        bad.append((j, ids[j], why))
    rows: dict = {}  # item -> [(row, value)]
    for j, (i, v) in enumerate(zip(ids, values, strict=True)):
        if j in not_labels:
            continue
        if i is None or (isinstance(i, float) and i != i) or str(i).strip() == "":
            bad.append((j, i, "empty item id"))
            continue
        rows.setdefault(i.item() if hasattr(i, "item") else i, []).append((j, int(v)))
    good_ids, good_vals = [], []
    for i, seen in rows.items():
        if len({v for _, v in seen}) > 1:
            listed = ", ".join(f"{where(j)}: {v}" for j, v in seen)
            bad.append((seen[0][0], i, f"conflicting labels in this file ({listed}); decide which is right"))
        else:
            good_ids.append(i)
            good_vals.append(seen[0][1])
    scores_known, by_row = label_scores_items(args, _load_data) if args.scores else (None, False)
    with LabelStore(args.store) as store:
        store.check_writable()  # a damaged store is refused before anything is read from it
        if args.batch is not None and args.batch not in store.batches()["batch"].tolist():
            n_b = len(store.batches())
            have = f"batches 1..{n_b}" if n_b else "no batches yet"
            raise CLIError(f"--batch {args.batch}: {args.store} has {have}; give one of those "
                           "(`bayeval select --store` records batches) or leave --batch out.")
        if scores_known is not None and store.known_items() is None:
            store.register_items(scores_known, source=args.scores)  # later runs check without --scores
        registered = store.known_items()
        # a store written before ids were read as text holds numeric ids as ints: keep
        # answering those items (exactly "5" -> 5; "007" stays "007")
        known_ints = {str(i): i for i in store.labels()["item"].tolist() if isinstance(i, int)}
        for b in store.batches()["batch"].tolist():
            known_ints.update({str(i): i for i in store.batch_items(int(b)) if isinstance(i, int)})
        for i in [*(registered or ()), *(scores_known or ())]:
            if isinstance(i, int):
                known_ints[str(i)] = i
            else:  # the data know this id as text: write it as text
                known_ints.pop(i, None)
        good_ids = [known_ints.get(i, i) if isinstance(i, str) else i for i in good_ids]
        why = not_a_row(args.scores, len(scores_known)) if by_row else "not in --scores"
        checks = [(set(scores_known), why)] if scores_known is not None else []
        if registered is not None:
            checks.append((set(registered), f"not an item of {args.store}"))
        if checks:
            from .active.store import KnownItems

            row_of = {known_ints.get(i, i) if isinstance(i, str) else i: seen[0][0] for i, seen in rows.items()}
            as_row = scores_row_hint(args, registered, scores_known, by_row)  # 'i260' is row 260 of --scores
            keep, index = [], {}
            for i, v in zip(good_ids, good_vals, strict=True):
                failed = next(((known, why) for known, why in checks if i not in known), None)
                if failed is None:
                    keep.append((i, v))
                    continue
                known, why = failed
                if why not in index:  # built once, and only when an id is unknown
                    index[why] = KnownItems(list(known))
                hint = as_row(i) or index[why].did_you_mean(i)
                if by_row and why == checks[0][1] and " are the row numbers " in hint:
                    hint = ""  # `why` (not_a_row) says the range already
                bad.append((row_of.get(i), i, f"unknown item id ({why}){hint}"))
            good_ids, good_vals = [i for i, _ in keep], [v for _, v in keep]
        else:
            print(f"bayeval: warning: {args.store} does not know its items yet (it was not made by "
                  "`bayeval select --store` and no --scores was given), so the item ids could not be "
                  "checked for typos. Give --scores SCORES --score COL once: the store remembers its "
                  "items and checks every later label.", file=sys.stderr)
        known = {*(registered or ()), *(scores_known or ())}
        fresh = unrecorded_labels(store, good_ids, good_vals, args.annotator, known)  # '261' and 261: one item
        n = store.add(*zip(*fresh), annotator=args.annotator, batch=args.batch) if fresh else 0
        skipped = len(good_ids) - n
        again = f"; {skipped} were already in the store and were not added again" if skipped else ""
        print(f"recorded {n} new label(s) in {args.store}{again} ({len(store)} in all).")
    if bad:
        bad.sort(key=lambda b: (b[0] is None, b[0] if b[0] is not None else 0))
        for row, i, why in bad[:20]:
            at = f"{where(row)}, " if row is not None else ""
            print(f"rejected: {at}item {i!r}: {why}", file=sys.stderr)
        if len(bad) > 20:
            print(f"... and {len(bad) - 20} more", file=sys.stderr)
        print(f"bayeval: error: {len(bad)} row(s) rejected; the {n} valid new label(s) were recorded. "
              "Fix the rejected rows and run the same command again: labels already recorded are "
              "not added twice.", file=sys.stderr)
        return 2
    return 0


def _cmd_repair_store(args) -> int:
    from .active.repair import RepairRefused, repair
    from .active.store import KnownItems, LabelStore

    if not Path(args.store).is_file():
        raise CLIError(f"{args.store}: no such label store file.")
    ids = None
    if args.scores:
        data = _load_data(argparse.Namespace(scores=args.scores, score=args.score, label=None, noisy_label=None,
                                             category=None, item_id=args.item_id))
        ids = data.item_ids.tolist()
    elif LabelStore(args.store).known_items() is None:
        raise CLIError(f"{args.store} does not know its items: give the scores file it is for "
                       "(--scores SCORES --score COL, and --id COL if it has an id column).")
    try:
        res = repair(args.store, ids, source=args.scores, also_known=kept_row_numbers(args.store, ids), force=args.force)
    except RepairRefused as exc:  # every label set aside, or other items: a wrong --id, said with the right one
        raise CLIError(repair_refusal(exc, args, None if ids is None else len(ids))) from exc
    if not res["items"]:
        print(f"every label in {args.store} is of a known item: nothing was set aside "
              f"({res['kept']} label row(s); the store now checks new labels against its items).")
        return 0
    known = KnownItems(ids if ids is not None else LabelStore(args.store).known_items() or [])
    shown = known.listing(res["items"], limit=20)
    batch = f" and {res['batch_items']} batch entr{'y' if res['batch_items'] == 1 else 'ies'}" if res["batch_items"] else ""
    print(f"set aside {res['labels']} label row(s){batch} of {len(res['items'])} unknown item(s): {shown}.")
    print(f"  they are in {res['set_aside']} (and in the store's meta, key 'set_aside');")
    print(f"  a copy of the store as it was before the repair is kept as {res['backup']};")
    print(f"  {res['kept']} label row(s) kept in {args.store}, with their batches, annotators and times.")
    print(f"Fix the ids in {res['set_aside']} and import it: bayeval label {args.store} "
          f"{res['set_aside']} --id item --label value --annotator NAME (one run per annotator).")
    return 0


def _cmd_export_labels(args) -> int:
    from .active.repair import export_readable

    try:
        res = export_readable(args.store, args.out)
    except (FileNotFoundError, FileExistsError) as exc:
        raise CLIError(str(exc)) from exc
    top = res["max_id"]
    of = f" of at most {top}" if top is not None else ""
    print(f"saved {res['rows']}{of} label row(s) to {args.out}.")
    for err in res["errors"]:
        print(f"warning: unreadable part of {args.store}: {err}", file=sys.stderr)
    return 0


def _cmd_vet(args) -> int:
    import importlib.util

    from .vet.app import EXTRA_HINT

    if not 0 <= args.port <= 65535:
        raise CLIError(f"--port must be a port number from 1 to 65535 (0: any free port), got {args.port}.")
    missing = [m for m in ("starlette", "uvicorn") if importlib.util.find_spec(m) is None]
    if missing:
        raise CLIError(f"{EXTRA_HINT}; missing: {', '.join(missing)}.")
    if args.token is not None and len(args.token) < 16:
        raise CLIError("--token must be at least 16 characters (leave it out for a random one).")
    from .vet import find_target, serve

    try:
        cards, store, record = find_target(args.target, announce=lambda line: print(line, file=sys.stderr))
    except (FileNotFoundError, ValueError, TypeError, KeyError) as exc:
        raise CLIError(str(exc)) from exc
    if args.store and store is not None and Path(args.store).resolve() != store.resolve():
        raise CLIError(f"{args.target[0]} is itself a label store; leave --store out, or give the card folder.")
    store = args.store or store
    if store is not None and Path(store).is_dir():
        raise CLIError(f"--store {store}: is a folder; give the label store's file (created if missing).")
    if len(cards) == 1 and args.width is not None:
        raise CLIError("--width (the region of practical equivalence of a gap) applies to a comparison: give two "
                       "cards (bayeval vet CARD_A CARD_B --width W).")
    if len(cards) == 2 and args.tune is not None:
        raise CLIError("--tune applies to one card's refits; a comparison refits with bayeval.compare, which "
                       "takes --draws only. Leave --tune out.")
    try:
        with warnings_as_lines():  # e.g. taking over the store from a server that was killed
            vet = _open_vet_or_compare(args, cards, store, record)
    except (ValueError, TypeError) as exc:
        raise CLIError(str(exc)) from exc
    host = args.host or "127.0.0.1"  # serve() warns when another host makes the page reachable from afar
    title = cards[0].title if len(cards) == 1 else vet.title
    print(f"{title}: {vet.view.n_items} items; labels go to {vet.store.path}", file=sys.stderr)
    try:
        serve(vet, host=host, port=args.port, token=args.token,
              announce=lambda line: print(line, file=sys.stderr, flush=True))
    except OSError as exc:
        raise CLIError(str(exc)) from exc
    if vet.refitting_thread_alive():  # a refit (or its compilation) still runs: it holds nothing unsaved
        print("bayeval: a refit was still running and is abandoned; every answer is in the store.",
              file=sys.stderr, flush=True)
        sys.stdout.flush()
        os._exit(0)
    return 0


def _open_vet_or_compare(args, cards, store, record):
    """The session of ``bayeval vet``: one card's, or a comparison of two."""
    from .vet import open_compare, open_vet

    if len(cards) == 1:
        return open_vet(cards[0], store=store, annotator=args.annotator, batch_size=args.batch_size,
                        budget=args.budget, draws=args.draws, tune=args.tune)
    width = args.width if args.width is not None else (record or {}).get("width")
    return open_compare(cards, store=store, metric=(record or {}).get("metric"), width=width,
                        annotator=args.annotator, batch_size=args.batch_size, budget=args.budget,
                        draws=args.draws)


def _cmd_demo(args) -> int:
    import pandas as pd

    from .core import metrics
    from .core.evaluate import vetted_only, vetted_only_n
    from .recalibrate import recalibrate
    from .datasets import load_breast_cancer_scores
    from .models import Stack

    frame = load_breast_cancer_scores(as_frame=True)
    data = load_breast_cancer_scores()
    print("bayeval demo: a logistic regression on the breast-cancer data (positive = malignant)")
    print(f"  {data.n_items} items, {data.n_vetted} vetted ({data.n_vetted_positive} malignant).")
    print("  Model: the default -- calibration curves P(malignant | score) learned from the vetted labels.")
    print(f"  Sampling {args.chains} chains x {args.draws} draws (random seed {args.random_seed})...", flush=True)
    post = Stack().fit(
        data, draws=args.draws, tune=args.draws, chains=args.chains, random_seed=args.random_seed, progressbar=False, warn=False
    )
    wanted = {
        "average precision": ("average_precision", {}),
        "precision@100": ("precision_at_k", {"k": 100}),
        "precision (predictions)": ("precision", {}),
        "recall (predictions)": ("recall", {}),
        "F1 (predictions)": ("f_score", {}),
    }
    table = post.summary(wanted, hdi_prob=args.hdi_prob)
    table["vetted only"] = [float(vetted_only(data, m, **kw)) for m, kw in wanted.values()]
    table["vetted n"] = [int(vetted_only_n(data, m, **kw)) for m, kw in wanted.values()]
    truth = frame["true_label"].to_numpy()
    x = {"average_precision": data.scores, "precision_at_k": data.scores}
    table["truth"] = [float(getattr(metrics, m)(truth, x.get(m, data.predictions), **kw)) for m, kw in wanted.values()]
    with pd.option_context("display.float_format", "{:.3f}".format, "display.width", 120,
                           "display.max_columns", None):  # wrap, never hide a column
        print()
        print(table)
    rec = recalibrate(post, min_precision=0.95, prob=0.9)
    state = "" if rec.met else " -- NO threshold reaches 0.9; the best available"
    print(f"\nThreshold for precision >= 0.95 with probability >= 0.9: {rec.threshold_text} "
          f"(holds with probability {rec.probability_at_threshold:.2f}{state}; flags {rec.flagged} of "
          f"{data.n_items} items).")
    diag = post.check(warn=False)
    rhat = "not applicable (importance sampling)" if diag["max_rhat"] != diag["max_rhat"] else f"{diag['max_rhat']:.3f}"
    print(f"Sampler: max r_hat {rhat}, min ESS {diag['min_ess_bulk']:.0f}, {diag['divergences']} divergences.")
    comp = post.comparison
    flagged = [c for c in comp.index if comp.loc[c, "flagged"] and comp.loc[c, "weight"] > 0.1]
    weights = ", ".join(f"{c} {comp.loc[c, 'weight']:.2f}" for c in comp.index)
    print(f"Calibration curves weighted by the vetted labels: {weights}; "
          + ("the vetted labels contradict " + ", ".join(flagged) + "." if flagged
             else "the vetted labels contradict none of them."))
    print(f"'vetted only' uses the {data.n_vetted} vetted items alone (NaN: fewer vetted items than k); 'vetted n': "
          "those it rests on (for precision the flagged, for recall the positives, for precision@100 the top 100); "
          "'truth' uses every true label (known only because this is an example).")
    return 0


def _parser():
    """The command's parser (:func:`bayeval._cli_parser.build_parser`), each subcommand run by its ``_cmd_``."""
    return build_parser({"report": _cmd_report, "fit": _cmd_fit, "compare": _cmd_compare, "threshold": _cmd_threshold,
                         "select": _cmd_select, "label": _cmd_label, "export-labels": _cmd_export_labels,
                         "repair-store": _cmd_repair_store, "vet": _cmd_vet, "demo": _cmd_demo})


def main(argv: list[str] | None = None) -> int:
    """Run the ``bayeval`` command; returns the exit status.

    Examples
    --------
    >>> from bayeval.cli import main
    >>> main(["fit", "no-such-file.csv", "--score", "s", "--label", "y"])
    2
    """
    card = card_given_as_scores(sys.argv[1:] if argv is None else argv)  # before argparse asks for --score
    if card:
        print(f"bayeval: error: {card}", file=sys.stderr)
        return 2
    parser = _parser()
    args = parser.parse_args(argv)
    if getattr(args, "scores", None) and args.command == "label" and not args.score:
        parser.error("label: --scores needs --score (the score column of that file).")
    if args.command == "repair-store" and args.scores and not args.score:
        parser.error("repair-store: --scores needs --score (the score column of that file).")
    from .core._validate import MAX_MEMORY_ENV

    saved_limit = os.environ.get(MAX_MEMORY_ENV)
    try:
        _check_args(args)
        _check_save_args(args)
        from .core._progress import quiet

        # --no-progress / --quiet: no bar of any step, the metric passes' after the fit included
        silent = getattr(args, "no_progress", False) or getattr(args, "quiet", False)
        with quiet() if silent else contextlib.nullcontext():
            return int(args.func(args) or 0)
    except CLIError as exc:
        print(f"bayeval: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: what was written stays written (each label is committed as it is added)
        print("\nbayeval: interrupted", file=sys.stderr)
        return 130
    except (ValueError, TypeError, OSError) as exc:  # OSError: a missing folder, a locked store, ...
        if os.environ.get("BAYEVAL_DEBUG"):
            raise
        print(f"bayeval: error: {exc}", file=sys.stderr)
        return 2
    except sqlite3.Error as exc:  # the label store translates these; this is the last guard
        if os.environ.get("BAYEVAL_DEBUG"):
            raise
        print(f"bayeval: error: SQLite: {exc}. Set BAYEVAL_DEBUG=1 for the details.", file=sys.stderr)
        return 2
    finally:  # --max-memory-gb applies to this run only
        if saved_limit is None:
            os.environ.pop(MAX_MEMORY_ENV, None)
        else:
            os.environ[MAX_MEMORY_ENV] = saved_limit


if __name__ == "__main__":
    sys.exit(main())
