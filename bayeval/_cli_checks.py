"""Checks of the command line's model options and of the columns they need, made before
anything is fitted: each error says what was expected, what arrived (by the file's line) and
how to fix it."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator

import numpy as np

from ._cli_store import CLIError
from ._tables import row_place
from .core import _validate as V


def check_inputs_exist(args) -> None:
    """Refuse a scores file that does not exist before any other option is checked: ``bayeval
    fit nofile.csv --score s`` said "fit needs vetted labels" (or, for ``threshold`` and
    ``compare``, another option's complaint) instead of naming the missing file."""
    from pathlib import Path

    cmd = args.command
    paths = []
    if cmd in ("fit", "threshold", "select"):
        paths.append(args.scores)
    elif cmd == "compare" and getattr(args, "score", None) is not None and len(args.inputs) == 1:
        paths.append(args.inputs[0])  # with --score: one scores file (cards are checked as cards)
    for path in paths:
        if path and not Path(path).exists():
            raise CLIError(f"{path}: no such file.")


def check_model_columns(args) -> None:
    """Refuse a ``--model`` whose column was not given (``label_flip`` without ``--noisy-label``),
    before the scores are read or anything is fitted; say on stderr when a ``--noisy-label``
    column will not be used (another ``--model``)."""
    if getattr(args, "model", None) == "label_flip" and getattr(args, "noisy_label", None) is None:
        raise CLIError(
            "--model label_flip needs noisy labels, but no --noisy-label column was given. Pass "
            "--noisy-label COLUMN (the scores file's column holding every item's cheap 1/0 tag, whose "
            "flip rates the model learns from the vetted labels), or choose another --model (default "
            "needs only the vetted labels)."
        )
    model = getattr(args, "model", None)
    if model not in (None, "label_flip") and getattr(args, "noisy_label", None) is not None:
        import sys

        print(f"warning: --noisy-label is read only by --model label_flip; --model {model} fits the vetted "
              "labels alone and ignores the noisy labels (leave --model out to fit label_flip on them).",
              file=sys.stderr)


#: per flag: what a cell holds, why none may be empty, what each cell is, and the way out
_COMPLETE = {
    "--noisy-label": ("a noisy label", "the label-flip model reads every item's tag", "tag",
                      "leave --noisy-label (and --model label_flip) out to fit on the vetted labels alone"),
    "--prediction": ("a 0/1 prediction", "the decision metrics count every item's decision", "decision",
                     "leave --prediction out and give --threshold T to decide by the score"),
}


def complete_label_cells(cells, *, flag: str, path, column: str, csv: bool) -> np.ndarray:
    """The cells of a column that needs a 1/0 on every row (``--noisy-label``, ``--prediction``) as
    1.0/0.0, or a CLIError naming the rows that are empty or hold anything else (by file line in a
    CSV, by 0-based row in Parquet).

    Unlike the vetted labels (empty = not vetted), these are needed on every row. A column of a
    frame read by :func:`bayeval._tables.read_table` names its rows by their own file lines.
    """
    what, why, cell, instead = _COMPLETE[flag]
    column_of = cells if hasattr(cells, "attrs") else None
    cells = list(cells.tolist() if hasattr(cells, "tolist") else cells)
    out, bad = V.parse_label_cells(cells, allow_empty=False)
    if not bad:
        return out

    def shown(v):
        return repr(v.item() if isinstance(v, np.generic) else v)

    def where(i: int) -> str:
        if column_of is not None and "bayeval_rows" in column_of.attrs:
            return row_place(column_of, i)
        return f"line {i + 2}" if csv else f"row {i}"

    def listed(rows, value: bool) -> str:
        text = ", ".join(f"{where(i)}: {shown(cells[i])}" if value else where(i) for i in rows[:10])
        return text + (f" and {len(rows) - 10} more" if len(rows) > 10 else "") + note

    note = "; line 1 is the header" if csv else "; rows counted from 0"
    empty = [i for i in bad if V.label_cell(cells[i]) is not None]  # an empty cell parses as NaN
    other = [i for i in bad if V.label_cell(cells[i]) is None]
    found, fixes = [], []
    if empty:
        found.append(f"{len(empty)} row(s) are empty ({listed(empty, False)})")
        fixes.append(f"fill in the empty cells with each item's {cell}, or remove those rows")
    if other:
        found.append(f"{len(other)} row(s) hold other values ({listed(other, True)})")
        fixes.append(f"write each {cell} as 1/0 (NA, n/a, null, yes/no are not accepted)")
    raise CLIError(
        f"{path}: column {column!r} ({flag}) must hold {what}, 1 or 0 (1.0/0.0 and true/false in any case are "
        f"accepted too), on every row: {why}, so none may be empty (only the vetted labels, --label, may be). "
        f"{'; '.join(found)}. Fix: {'; '.join(fixes)}. Or {instead}."
    )


def check_k(args, data, category: str | None = None, pooled: str = "--category-mode pooled") -> None:
    """Refuse ``--k`` above the number of items for ``precision_at_k`` or ``recall_at_k`` before
    anything is fitted (P@k's missing places would count as negatives, R@k would be 1); with
    ``category`` "each" or "mean" (the metric per category) and data with categories, above a
    category's items too. ``pooled``: how this command computes it over all items instead."""
    metrics = args.metric if isinstance(args.metric, list | tuple) else [args.metric]
    sizes = None
    if data.has_categories and category in ("each", "mean"):
        counts = np.bincount(data.category_codes, minlength=data.category_names.size)
        sizes = dict(zip(data.category_names.tolist(), counts.tolist(), strict=True))
    for metric in V.TOP_K_METRICS:
        if metric in metrics and args.k:
            try:
                V.check_top_k(args.k, data.n_items, name="--k", metric=metric, categories=sizes, pooled=pooled)
            except ValueError as exc:
                raise CLIError(f"{exc} Nothing was fitted.") from exc


def check_fit_size(chains: int, draws: int, model, data, what: str) -> None:
    """Refuse a fit whose estimated peak memory, with the data's size (its items and vetted labels:
    :func:`bayeval.core._validate.fit_memory_gb`), is above ``--max-memory-gb`` (or
    ``BAYEVAL_MAX_MEMORY_GB``, else 4 GB), in the command line's words, before anything is fitted.
    The check of the options alone (:func:`bayeval.core._validate.check_job_size` without the data)
    counts the parameter draws only; ``bayeval.fit`` checks the same again, naming ``max_memory_gb=``."""
    from .models import Stack
    from .models.stacking import default_candidates

    k = 1
    if isinstance(model, Stack):  # as bayeval.fit counts them: the default's on these scores
        k = max(1, len(model.candidates if model.candidates is not None else default_candidates(data, model.transform)))
    try:
        V.check_job_size(chains, draws, bytes_per_draw=V.FIT_BYTES_PER_DRAW * k * 4, what=what,
                         how_to_raise="--max-memory-gb", items=data.n_items, vetted=data.n_vetted, candidates=k,
                         draws_option="--draws ")
    except ValueError as exc:
        raise CLIError(f"{exc} Nothing was fitted.") from exc


def check_min_flagged(args, n_items: int) -> None:
    """Refuse ``--min-flagged`` above the number of items before anything is fitted (no
    threshold can flag that many)."""
    if args.min_flagged is not None and args.min_flagged > n_items:
        raise CLIError(f"--min-flagged {args.min_flagged} is more than the {n_items} items in {args.scores}: no "
                       f"threshold can flag that many. Give --min-flagged {n_items} or less (0 allows any "
                       "threshold). Nothing was fitted.")


def check_transform(args, scores) -> None:
    """The default model's ``--transform`` against the scores, in the command line's words, before
    the fit: ``logit`` on scores outside [0, 1] is refused (the model's own message would give
    Python advice); ``logodds`` on scores that all lie in [0, 1] is warned about (they look like
    probabilities, and would be read as log-odds)."""
    import sys

    lo, hi = float(np.nanmin(scores)), float(np.nanmax(scores))
    where = f"column {args.score!r} (--score) holds scores from {lo:g} to {hi:g}"
    if args.transform == "logit" and not (lo >= 0 and hi <= 1):
        raise CLIError(f"--transform logit reads the scores as probabilities, in [0, 1], but {where}. Give "
                       "--transform logodds for log-odds, --transform standardize for margins or other scores, "
                       "or leave --transform out (auto). Nothing was fitted.")
    if args.transform == "logodds" and lo >= 0 and hi <= 1:
        print(f"warning: --transform logodds reads the scores as log-odds, but {where}, all in [0, 1]: these "
              "look like probabilities. If they are, give --transform logit (or leave --transform out: auto), "
              "which reads them as probabilities.", file=sys.stderr)


#: the models' warning on log-odds read from probabilities (:class:`bayeval.models.Calibration`),
#: silenced while a fit runs once :func:`check_transform` or :func:`check_card_transform` said it
LOGODDS_WARNING = "transform='logodds' reads the scores as log-odds"


@contextlib.contextmanager
def logodds_said() -> Iterator[None]:
    """Inside the block the models' warning on log-odds read from probabilities is not shown: the
    command line said it before the fit, in its own words (:func:`check_transform`,
    :func:`check_card_transform`)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=LOGODDS_WARNING)
        yield


def check_card_transform(card, scores) -> str | None:
    """A card's ``[model] transform`` (and a calibration card's ``curve = "beta"``) against the
    scores, in the card's words, before the fit (``bayeval report CARD``, ``bayeval compare CARD_A
    CARD_B``), as :func:`check_transform` checks ``--transform``: what the model would refuse
    (``"logit"`` or ``"beta"`` on scores outside [0, 1]) is refused, and ``"logodds"`` on scores
    that all lie in [0, 1] (they look like probabilities) is said as a ``warning:`` line
    (:meth:`bayeval.cards.Card.check_scale`), and returned (None: nothing said)."""
    import sys

    from .cards import CardError

    try:
        said = card.check_scale(scores)
    except CardError as exc:
        raise CLIError(f"{exc} Nothing was fitted.") from exc
    if said:
        print(f"warning: {said}", file=sys.stderr)
    return said


#: the commands whose first argument is a scores file, and what each needs besides
_SCORES_COMMANDS = {"fit": "", "threshold": " --min-precision P", "select": " --size N"}


def card_given_as_scores(argv) -> str | None:
    """The error for ``bayeval fit/threshold/select CARD``: a model card folder where a scores
    file goes, said before the arguments are parsed (which would ask for ``--score`` or
    ``--label`` first), with the commands that take cards and this command run on the card's
    scores file; None when no argument is a card folder."""
    import shlex
    from pathlib import Path

    argv = list(argv)
    if not argv or argv[0] not in _SCORES_COMMANDS:
        return None
    folder = next((Path(a) for a in argv[1:] if not a.startswith("-") and (Path(a) / "card.toml").is_file()), None)
    if folder is None:
        return None
    cmd, q = argv[0], shlex.quote
    takes = (f"{folder} is a model card (a folder with card.toml), not a scores file: `bayeval {cmd}` reads a CSV or "
             f"Parquet file with one row per item. The commands that take a card are `bayeval report {q(str(folder))}`, "
             f"`bayeval compare {q(str(folder))} OTHER_CARD` and `bayeval vet {q(str(folder))}` (which also picks "
             "the next items to vet).")
    from .cards import CardError, load_card

    try:
        card = load_card(folder, allow_outside=True)
    except (CardError, OSError, ValueError, TypeError, KeyError):
        return f"{takes} To run {cmd} on the card's scores, give its [data] file with its columns."
    def inside(path):  # a card's file as the user named the card's folder
        try:
            return str(folder / path.relative_to(card.path))
        except ValueError:
            return str(path)

    cols = card.columns
    run = f"bayeval {cmd} {q(inside(card.data_file))} --score {q(cols['score'])}"
    run += f" --label {q(cols['label'])}" * ("label" in cols) + f" --id {q(cols['id'])}" * ("id" in cols)
    if card.store_file.is_file() and cmd != "select":  # read only there; select --store records its batches
        run += f" --store {q(inside(card.store_file))}"
    return f"{takes} To run {cmd} on the card's scores file (columns from its card.toml): `{run}{_SCORES_COMMANDS[cmd]}`."
