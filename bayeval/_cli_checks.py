"""Checks of the command line's model options and of the columns they need, made before
anything is fitted: each error says what was expected, what arrived (by the file's line) and
how to fix it."""

from __future__ import annotations

import numpy as np

from ._cli_store import CLIError
from .core import _validate as V


def check_model_columns(args) -> None:
    """Refuse a ``--model`` whose column was not given (``label_flip`` without ``--noisy-label``),
    before the scores are read or anything is fitted."""
    if getattr(args, "model", None) == "label_flip" and getattr(args, "noisy_label", None) is None:
        raise CLIError(
            "--model label_flip needs noisy labels, but no --noisy-label column was given. Pass "
            "--noisy-label COLUMN (the scores file's column holding every item's cheap 1/0 tag, whose "
            "flip rates the model learns from the vetted labels), or choose another --model (default "
            "needs only the vetted labels)."
        )


def noisy_label_cells(cells, *, path, column: str, csv: bool) -> np.ndarray:
    """The ``--noisy-label`` column's cells as 1.0/0.0, or a CLIError naming the rows that are empty
    or hold anything else (by file line in a CSV, by 0-based row in Parquet).

    Unlike the vetted labels (empty = not vetted), a noisy label is needed on every row: the
    label-flip model reads every item's tag.
    """
    cells = list(cells.tolist() if hasattr(cells, "tolist") else cells)
    out, bad = V.parse_label_cells(cells, allow_empty=False)
    if not bad:
        return out

    def shown(v):
        return repr(v.item() if isinstance(v, np.generic) else v)

    def where(i: int) -> str:
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
        fixes.append("fill in the empty cells with each item's tag, or remove those rows")
    if other:
        found.append(f"{len(other)} row(s) hold other values ({listed(other, True)})")
        fixes.append("write the tags as 1/0 (NA, n/a, null, yes/no are not accepted)")
    raise CLIError(
        f"{path}: column {column!r} (--noisy-label) must hold a noisy label, 1 or 0 (1.0/0.0 and true/false in "
        f"any case are accepted too), on every row: the label-flip model reads every item's tag, so none may "
        f"be empty (only the vetted labels, --label, may be). {'; '.join(found)}. Fix: "
        f"{'; '.join(fixes)}. Or leave --noisy-label (and --model label_flip) out to fit on the vetted labels alone."
    )
