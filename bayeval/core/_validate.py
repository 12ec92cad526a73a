"""Every input check of bayeval's public boundary, and its message, in one place.

Each checker takes the user's value and the argument's *name*, and either returns a
clean numpy array (or scalar) or raises ``TypeError``/``ValueError`` with a message
that says what was expected, what arrived, and how to fix it.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

__all__ = [
    "as_1d_float",
    "as_scores",
    "as_label_vector",
    "as_binary_vector",
    "as_label_draws",
    "as_item_ids",
    "as_categories",
    "as_features",
    "as_probability",
    "as_positive_int",
    "as_k",
    "as_grid",
    "check_same_length",
    "check_choice",
    "as_seed_sequence",
    "as_real_in",
    "describe",
    "as_positive_number",
    "as_confidence_mapping",
    "LABEL_SPELLINGS",
    "label_cell",
    "parse_label_cells",
    "as_label_cells",
    "check_job_size",
    "MAX_MEMORY_ENV",
    "FIT_BYTES_PER_DRAW",
    "fit_memory_gb",
    "as_rng",
    "as_category_mode",
    "as_item_mask",
    "as_full_labels",
    "as_text",
    "as_optional_text",
    "CONSTRAINT_KEYS",
    "as_constraints",
    "check_keys",
    "as_numeric_array",
    "as_probability_array",
    "as_binary_array",
    "as_probability_vector",
    "positions_text",
    "not_numbers",
    "is_missing",
    "from_pandas_extension",
    "align_by_index",
]

#: Environment variable that raises (or lowers) the memory limit of :func:`check_job_size`.
MAX_MEMORY_ENV = "BAYEVAL_MAX_MEMORY_GB"
_DEFAULT_MAX_MEMORY_GB = 4.0
#: Memory a PyMC fit keeps per draw and chain: the parameters and the sampler's
#: statistics (about 30 float64 values), for the size estimate.
FIT_BYTES_PER_DRAW = 256
#: The working set of one chunk of label draws a posterior generates at a time
#: (``bayeval.core.posterior.CHUNK_BYTES``: a float64 probability and an int8 label each).
LABEL_CHUNK_BYTES = 1 << 27
#: The parts of a fit's memory estimate (:func:`fit_memory_gb`), from the peak RSS (``/usr/bin/time -v``)
#: of ``bayeval.fit`` then ``recalibrate`` on 10^3, 10^4, 10^5 and 10^6 items (2 chains x 1000 draws,
#: 300 at 10^6; 100-5,000 vetted): the process itself with NumPy and PyMC loaded and a fit made
#: (0.49-0.53 GB at 10^3-10^5 items; more with the command line's table reading) ...
PROCESS_GB = 0.55
#: ... the working memory per label of one chunk of label draws (the candidates' probabilities, the
#: draws, a metric's sort: 16-42 bytes measured, the most where the monotone curve has weight) ...
CHUNK_LABEL_BYTES = 40
#: ... what is kept per item (the data, the per-item arrays of a metric pass) ...
ITEM_BYTES = 80
#: ... and per draw and vetted label: kept, each candidate's and the stack's log-likelihood, and
#: while the candidates are weighed by leave-one-out, about 23 bytes more per candidate (5,000
#: vetted of 10^4 items, 2 chains x 1000 draws: 1.20 GB peak).
VETTED_LOO_BYTES = 23

#: What every entry point (CSV reader, card, ``bayeval label``, the label store, the
#: active session) accepts as a typed label. Compared after stripping blanks and
#: ignoring case. Anything else -- ``NA``, ``n/a``, ``null``, ``yes``, ``no``, ``2`` --
#: is an error that lists where it is: a label a person typed is never read as
#: "not vetted". An *empty* cell means "not vetted" where that is allowed (the vetted
#: label column of a scores file), and is an error where a label is required.
LABEL_SPELLINGS = "1 or 0 (also 1.0/0.0 and true/false in any case)"
_TRUE_CELLS = frozenset({"1", "1.0", "true"})
_FALSE_CELLS = frozenset({"0", "0.0", "false"})
_EMPTY = float("nan")


def _describe(x) -> str:
    """A short description of what arrived, for error messages."""
    if isinstance(x, np.ndarray):
        return f"an array of dtype {x.dtype} and shape {x.shape}"
    return f"{type(x).__name__} {x!r}"[:120]


def preview(values, limit: int = 5) -> str:
    """The first ``limit`` values as text for an error message, with ", ..." when there are more.

    Examples
    --------
    >>> preview([1, 2, 3, 4, 5, 6], limit=3)
    '1, 2, 3, ...'
    """
    values = list(values)
    shown = ", ".join(repr(v.item() if hasattr(v, "item") else v) for v in values[:limit])
    return shown + (", ..." if len(values) > limit else "")


def label_cell(v):
    """One typed label as 1.0 / 0.0, NaN for an empty cell, or None when it is not a label.

    Accepted: the numbers 0 and 1 (ints, floats, numpy scalars, bools) and the strings
    ``1``/``0``/``1.0``/``0.0``/``true``/``false`` in any case, with blanks around them.
    Empty: None, NaN, ``pd.NA`` and blank strings. Everything else returns None.

    Examples
    --------
    >>> from bayeval.core._validate import label_cell
    >>> [label_cell(v) for v in ["1", " TRUE ", "false", 0, 1.0, True]]
    [1.0, 1.0, 0.0, 0.0, 1.0, 1.0]
    >>> [label_cell(v) for v in ["NA", "n/a", "null", "yes", 2]]
    [None, None, None, None, None]
    >>> label_cell("")
    nan
    """
    if v is None:
        return _EMPTY
    if isinstance(v, bool | np.bool_):
        return float(v)
    if isinstance(v, str | np.str_):
        t = v.strip().lower()
        if t in _TRUE_CELLS:
            return 1.0
        if t in _FALSE_CELLS:
            return 0.0
        return _EMPTY if t == "" else None
    if isinstance(v, numbers.Real):
        f = float(v)
        if f != f:
            return _EMPTY
        return f if f in (0.0, 1.0) else None
    if str(v) == "<NA>":  # pandas.NA
        return _EMPTY
    return None


def parse_label_cells(values, *, allow_empty: bool) -> tuple[np.ndarray, list[int]]:
    """``(labels, bad)``: 1.0/0.0/NaN per cell and the positions that are not labels.

    With ``allow_empty=False`` an empty cell counts as bad too.
    """
    cells = list(values.tolist() if hasattr(values, "tolist") else values)
    out = np.full(len(cells), np.nan)
    bad = []
    for i, v in enumerate(cells):
        lab = label_cell(v)
        if lab is None or (lab != lab and not allow_empty):
            bad.append(i)
        else:
            out[i] = lab
    return out, bad


def label_cells_message(name: str, values, bad: list[int], *, allow_empty: bool,
                        first_line: int | None = None, limit: int = 10, lines=None, in_python: bool = False) -> str:
    """The error for :func:`parse_label_cells`'s ``bad`` positions, listing where they are.

    ``lines`` (the file line of each value), or ``first_line`` (the file line of the first
    value, 2 for a CSV with a header, the rest following it): positions are then shown as
    file lines; otherwise as 0-based positions. ``in_python``: the labels came as a Python
    array (not a file's cells): the advice is NaN or None for an item not vetted, and a recipe
    mapping two class names to 1/0.
    """
    if in_python:
        return _python_labels_message(name, values, bad, allow_empty=allow_empty, limit=limit)
    cells = list(values.tolist() if hasattr(values, "tolist") else values)
    if lines is not None:
        first_line = 2

    def where(i):
        if lines is not None:
            return f"line {lines[i]}"
        return f"line {i + first_line}" if first_line is not None else f"row {i}"

    def shown(v):
        v = v.item() if isinstance(v, np.generic) else v
        return "an empty cell" if label_cell(v) is not None else repr(v)

    listed = ", ".join(f"{where(i)}: {shown(cells[i])}" for i in bad[:limit])
    more = f" and {len(bad) - limit} more" if len(bad) > limit else ""
    expected = "1, 0 or empty (not vetted)" if allow_empty else "1 or 0 for every item"
    note = " (line 1 is the header)" if first_line == 2 else " (0-based)" if first_line is None else ""
    return (
        f"{name} must hold {expected}, where 1.0/0.0 and true/false in any case are accepted "
        f"too; {len(bad)} row(s) hold other values{note}: {listed}{more}. "
        "Fix them (NA, n/a, null, yes/no are not accepted"
        + ("; leave a cell empty if the item was not vetted)." if allow_empty else ").")
    )


def _python_labels_message(name: str, values, bad: list[int], *, allow_empty: bool, limit: int = 10) -> str:
    """:func:`label_cells_message` for labels given as a Python array ("yes"/"no" and the like)."""
    cells = list(values.tolist() if hasattr(values, "tolist") else values)
    listed = ", ".join(f"position {i}: {cells[i]!r}" for i in bad[:limit])
    more = f" and {len(bad) - limit} more" if len(bad) > limit else ""
    if allow_empty:
        return (
            f"{name} must hold 1 (positive), 0 (negative) or NaN/None (not vetted), where 1.0/0.0, True/False and "
            f"the text '1'/'0'/'true'/'false' in any case are accepted too; {len(bad)} value(s) are other values: "
            f"{listed}{more}. Map your two classes to 1.0/0.0 and the items not vetted to NaN first, e.g. for "
            "'yes'/'no': np.where(l == \"yes\", 1.0, np.where(l == \"no\", 0.0, np.nan)) -- after checking that "
            "every label is one of the two or missing, since anything else would become NaN (not vetted)."
        )
    return (
        f"{name} must hold 1 or 0 for every item, where 1.0/0.0, True/False and the text '1'/'0'/'true'/'false' "
        f"in any case are accepted too; {len(bad)} value(s) are other values: {listed}{more}. Map your two "
        "classes to 1/0 first, e.g. for 'yes'/'no': np.where(l == \"yes\", 1, np.where(l == \"no\", 0, -1)), and "
        "fix any -1 left (a value that is neither)."
    )


def as_label_cells(values, name: str, *, allow_empty: bool = True,
                   first_line: int | None = None, lines=None, in_python: bool = False) -> np.ndarray:
    """Typed labels (strings or numbers) as 1.0/0.0 (NaN = empty); a ValueError lists the rest.

    Examples
    --------
    >>> from bayeval.core._validate import as_label_cells
    >>> as_label_cells(["1", "", "FALSE"], "column 'y'").tolist()
    [1.0, nan, 0.0]
    >>> as_label_cells(["1", "NA"], "column 'y'", first_line=2)
    Traceback (most recent call last):
    ...
    ValueError: column 'y' must hold 1, 0 or empty (not vetted), ...; 1 row(s) hold other values (line 1 is the header): line 3: 'NA'. ...
    """
    out, bad = parse_label_cells(values, allow_empty=allow_empty)
    if bad:
        raise ValueError(label_cells_message(name, values, bad, allow_empty=allow_empty, first_line=first_line,
                                             lines=lines, in_python=in_python))
    return out


def is_missing(v) -> bool:
    """Whether one cell is a missing value: None, NaN, ``pd.NA`` or ``pd.NaT``.

    ``pd.NA`` cannot be compared (``pd.NA != pd.NA`` is ``pd.NA``, whose truth value raises),
    so it is recognised by identity.

    Examples
    --------
    >>> import pandas as pd
    >>> from bayeval.core._validate import is_missing
    >>> [is_missing(v) for v in [None, float("nan"), pd.NA, 0.0, "", "NA"]]
    [True, True, True, False, False, False]
    """
    if v is None or v is pd.NA or v is pd.NaT:
        return True
    return isinstance(v, float | np.floating) and v != v


def from_pandas_extension(x):
    """A pandas nullable numeric or boolean column (``Int64``, ``Float64``, ``boolean``: a Series,
    an Index or an extension array) as float64 with NaN for ``pd.NA``; anything else unchanged.

    Text extension arrays (``string``) are left alone: their cells are read one by one (as
    numbers, or as typed labels), so that a cell that is not a number can be named.

    Examples
    --------
    >>> import pandas as pd
    >>> from bayeval.core._validate import from_pandas_extension
    >>> from_pandas_extension(pd.Series([True, None, False], dtype="boolean")).tolist()
    [1.0, nan, 0.0]
    """
    dtype = getattr(x, "dtype", None)
    if dtype is None or isinstance(dtype, np.dtype) or not hasattr(x, "to_numpy"):
        return x
    if pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_numeric_dtype(dtype):
        return x.to_numpy(dtype=np.float64, na_value=np.nan)
    return x


def not_numbers(arr: np.ndarray) -> list[tuple[int, object]]:
    """Positions and values of the entries of an object/str array that are not numbers."""
    out = []
    for i, v in enumerate(arr.ravel().tolist()):
        if is_missing(v):
            continue
        try:
            float(v)
        except (TypeError, ValueError):
            out.append((i, v))
    return out


def as_1d_float(x, name: str, *, allow_nan: bool = False) -> np.ndarray:
    """Return ``x`` as a 1-D float64 array, rejecting strings, objects and bad shapes."""
    if x is None:
        raise TypeError(f"`{name}` is required: expected a 1-D array of numbers, got None.")
    if isinstance(x, str | bytes):
        raise TypeError(f"`{name}` must be a 1-D array of numbers, got the string {x!r}.")
    x = from_pandas_extension(x)  # nullable numbers and booleans: pd.NA is NaN
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(f"`{name}` could not be read as an array ({exc}).") from exc
    if arr.dtype == object or arr.dtype.kind in "USV":
        # text columns and objects (pd.NA and None among them): missing cells are NaN
        try:
            arr = np.asarray([np.nan if is_missing(v) else v for v in arr.ravel()], dtype=float).reshape(arr.shape)
        except (TypeError, ValueError) as exc:
            bad = not_numbers(np.asarray(x, dtype=object))
            shown = ", ".join(f"position {i}: {v!r}" for i, v in bad[:5])
            more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
            raise TypeError(
                f"`{name}` must hold numbers, but {len(bad)} value(s) are not numbers "
                f"({shown}{more}). Fix or remove them, or convert the column to floats first."
            ) from exc
    if arr.dtype.kind == "c":
        raise TypeError(f"`{name}` must be real-valued, got complex dtype {arr.dtype}.")
    if arr.ndim == 0:
        raise ValueError(f"`{name}` must be a 1-D array, got a scalar {arr!r}.")
    if arr.ndim != 1:
        raise ValueError(
            f"`{name}` must be 1-D (one value per item), got shape {arr.shape}. "
            "Flatten it, or pass one column."
        )
    arr = arr.astype(np.float64, copy=True)
    if not allow_nan and arr.size and not np.all(np.isfinite(arr)):
        bad = np.flatnonzero(~np.isfinite(arr))
        raise ValueError(
            f"`{name}` must be finite, but {bad.size} value(s) are NaN or infinite "
            f"(first at position(s) {preview(bad)}). Remove those items or fix their values."
        )
    return arr


def as_scores(x, name: str = "scores") -> np.ndarray:
    """Finite, non-empty 1-D float scores."""
    arr = as_1d_float(x, name)
    if arr.size == 0:
        raise ValueError(f"`{name}` is empty: an evaluation needs at least one scored item.")
    return arr


def as_label_vector(x, name: str = "labels", *, allow_nan: bool = True, fraction_hint: str | None = None,
                    ids=None) -> np.ndarray:
    """1-D float64 array of 1/0 (and NaN for 'not known' when ``allow_nan``).

    Text labels (a column read from a file) go through the same parser as every other
    entry point (:func:`label_cell`): ``"TRUE"`` is 1, ``"yes"`` or ``"NA"`` is an error.
    ``fraction_hint``: the advice given when the other values all lie strictly between 0
    and 1 (scores where 0/1 were expected), instead of mapping classes to 0/1. ``ids``: the
    items' ids, to name the first NaN ones by (else their positions) when ``allow_nan`` is False.
    """
    if not isinstance(x, str | bytes):
        raw = np.asarray(x) if not hasattr(x, "dtype") else x
        if not hasattr(x, "dtype") and raw.dtype.kind in "US":
            # a list mixing text and NaN: numpy would turn NaN into the text "nan" (an error
            # for every empty row); as objects each cell keeps its type
            raw = np.asarray(x, dtype=object)
        # text of any dtype (object, numpy str, pandas' string dtypes): one typed label per cell
        if getattr(raw, "dtype", None) is not None and raw.dtype.kind in "OUS":
            raw = np.asarray(raw)
            if raw.ndim == 1:
                x = as_label_cells(raw, f"`{name}`", allow_empty=allow_nan, in_python=True)
    arr = as_1d_float(x, name, allow_nan=True)
    if np.isinf(arr).any():
        raise ValueError(f"`{name}` holds infinite values; expected 1, 0" + (" or NaN." if allow_nan else "."))
    known = arr[~np.isnan(arr)]
    bad = known[(known != 0) & (known != 1)]
    if bad.size:
        raise ValueError(
            f"`{name}` must hold 1 (positive), 0 (negative)"
            + (" or NaN (not vetted)" if allow_nan else "")
            + f"; got other values such as {preview(np.unique(bad))}. "
            + (fraction_hint if fraction_hint is not None and np.all((bad > 0) & (bad < 1))
               else "Map your classes to 0/1 first (e.g. `(y == 'cat').astype(float)`).")
        )
    if not allow_nan and np.isnan(arr).any():
        bad = np.flatnonzero(np.isnan(arr))
        named = (f"item ids {preview(np.asarray(ids)[bad])}" if ids is not None and len(ids) == arr.size
                 else f"positions {preview(bad)}")
        raise ValueError(
            f"`{name}` must be fully known (1 or 0), but {bad.size} value(s) are NaN ({named}). Fill them, "
            "or leave those items out."
        )
    return arr


def as_binary_vector(x, name: str, ids=None) -> np.ndarray:
    """1-D int8 array of 0/1 with no missing values (e.g. hard predictions); ``ids``: the items'
    ids, to name NaN ones by (else their positions)."""
    if x is not None and np.asarray(x).dtype == bool:
        arr = np.asarray(x)
        if arr.ndim != 1:
            raise ValueError(f"`{name}` must be 1-D, got shape {arr.shape}.")
        return arr.astype(np.int8)
    hint = (f"These look like scores or probabilities, not 0/1 {name}: threshold them first, e.g. "
            "`(scores >= t).astype(int)`.")
    return as_label_vector(x, name, allow_nan=False, fraction_hint=hint, ids=ids).astype(np.int8)


def as_label_draws(x, name: str = "labels") -> np.ndarray:
    """Label draws of shape ``(..., n_items)`` holding only 0/1, as int8 (bool is accepted)."""
    arr = np.asarray(x)
    if arr.ndim == 0:
        raise ValueError(f"`{name}` must have an item axis (shape (..., n_items)), got a scalar.")
    if arr.dtype == bool:
        return arr.view(np.int8)
    if arr.dtype.kind in "iu":
        if arr.dtype.itemsize == 1:
            if arr.size and (arr.max() > 1 or arr.min() < 0):
                raise ValueError(f"`{name}` must hold only 0 and 1, got values outside that range.")
            return arr.view(np.int8) if arr.dtype == np.uint8 else arr
    elif arr.dtype.kind == "f":
        if arr.size and np.isnan(arr).any():
            raise ValueError(
                f"`{name}` holds NaN. Metric kernels need complete 0/1 label draws; "
                "to use partially vetted labels, build a Posterior (it draws the missing ones)."
            )
    else:
        raise TypeError(f"`{name}` must be a numeric 0/1 array, got {_describe(arr)}.")
    ok = (arr == 0) | (arr == 1)
    if not ok.all():
        raise ValueError(
            f"`{name}` must hold only 0 and 1, got values such as {preview(np.unique(arr[~ok]))}."
        )
    return arr.astype(np.int8)


def _max_memory_gb(max_memory_gb) -> float:
    if max_memory_gb is None:
        env = os.environ.get(MAX_MEMORY_ENV)
        if env is None or env.strip() == "":
            return _DEFAULT_MAX_MEMORY_GB
        try:
            value = float(env)
        except ValueError:
            raise ValueError(
                f"The environment variable {MAX_MEMORY_ENV}={env!r} must be a number of GB "
                "(e.g. 16)."
            ) from None
        name = MAX_MEMORY_ENV
    else:
        value, name = max_memory_gb, "max_memory_gb"
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value > 0:
        raise ValueError(f"`{name}` must be a positive number of GB, got {value!r}.")
    return float(value)


def fit_memory_gb(items: int, vetted: int, chains: int, draws: int, *, candidates: int = 1,
                  bytes_per_draw: float = FIT_BYTES_PER_DRAW) -> dict[str, float]:
    """The estimated peak memory of a fit and the metric passes over its label draws, in GB, by part.

    ``process``: Python with NumPy and PyMC loaded (:data:`PROCESS_GB`); ``work``: the larger of
    one chunk of label draws being worked on (``min(draws, LABEL_CHUNK_BYTES // (9 * items))``
    draws of every item, :data:`CHUNK_LABEL_BYTES` each: it stops growing with the draws past
    about 15 million labels, 0.6 GB) and the candidates' leave-one-out weighing
    (:data:`VETTED_LOO_BYTES` per draw, vetted label and candidate); ``kept``: the data
    (:data:`ITEM_BYTES` per item), the label draws packed as bits (when they fit in 64 MiB),
    each candidate's and the stack's log-likelihood of the vetted labels (8 bytes per draw and
    vetted label each) and the parameter draws (``bytes_per_draw`` per draw); ``total``: their sum.

    Examples
    --------
    >>> from bayeval.core._validate import fit_memory_gb
    >>> {k: round(v, 2) for k, v in fit_memory_gb(10**5, 200, 2, 1000, candidates=2).items()}
    {'process': 0.55, 'work': 0.6, 'kept': 0.04, 'total': 1.19}
    """
    n_draws = chains * draws
    chunk_draws = min(draws, max(1, LABEL_CHUNK_BYTES // (9 * max(1, items))))
    work = max(chunk_draws * items * CHUNK_LABEL_BYTES, n_draws * vetted * candidates * VETTED_LOO_BYTES)
    bits = n_draws * ((items + 7) // 8)
    kept = (items * ITEM_BYTES + (bits if bits <= 1 << 26 else 0) + n_draws * vetted * 8 * (candidates + 1)
            + n_draws * bytes_per_draw)
    parts = {"process": PROCESS_GB, "work": work / 1e9, "kept": kept / 1e9}
    return {**parts, "total": sum(parts.values())}


def check_job_size(chains: int, draws: int, *, bytes_per_draw: float, what: str,
                   max_memory_gb=None, draws_per_second: float | None = None,
                   how_to_raise: str = "pass max_memory_gb=", items: int | None = None, vetted: int = 0,
                   candidates: int = 1, draws_option: str = "draws=") -> float:
    """Estimate a job's memory up front; raise a clear error above the limit.

    The limit is ``max_memory_gb``, else the environment variable
    ``BAYEVAL_MAX_MEMORY_GB``, else 4 GB. Returns the estimate in GB. Without ``items``: the
    parameter draws alone (``chains x draws x bytes_per_draw``), a check that needs no data (an
    option, a card's settings); with the data's ``items`` and ``vetted`` labels: the fit's peak
    (:func:`fit_memory_gb`, with ``candidates`` models fitted), and the error says which part
    fewer draws would shrink (``draws_option``: how the caller names the draws).

    Examples
    --------
    >>> from bayeval.core._validate import check_job_size
    >>> round(check_job_size(2, 1000, bytes_per_draw=256, what="fit"), 6)
    0.000512
    >>> check_job_size(2, 10**8, bytes_per_draw=256, what="the fit")
    Traceback (most recent call last):
    ...
    ValueError: the fit: 2 chains x 100000000 draws would need about 51.2 GB of memory, above the limit of 4 GB. ...
    >>> check_job_size(2, 1000, bytes_per_draw=256, what="the fit", items=10**5, vetted=200, max_memory_gb=0.5)
    Traceback (most recent call last):
    ...
    ValueError: the fit: 2 chains x 1000 draws of 100,000 items (200 vetted) would need about 1.19 GB of memory ...
    """
    limit = _max_memory_gb(max_memory_gb)
    if items is not None:
        return _check_fit_size(chains, draws, limit, bytes_per_draw=bytes_per_draw, what=what,
                               how_to_raise=how_to_raise, items=items, vetted=vetted, candidates=candidates,
                               draws_option=draws_option)
    gb = chains * draws * bytes_per_draw / 1e9
    if gb > limit:
        eta = ""
        if draws_per_second:
            hours = chains * draws / draws_per_second / 3600
            eta = f" and roughly {hours:.1f} hour(s) at {draws_per_second:g} draws per second"
        raise ValueError(
            f"{what}: {chains} chains x {draws} draws would need about {gb:.1f} GB of memory"
            f"{eta}, above the limit of {limit:g} GB. 1000-4000 draws per chain are plenty for "
            f"credible intervals: use fewer draws; or, if you really mean it, raise the limit "
            f"({how_to_raise}, or the environment variable {MAX_MEMORY_ENV})."
        )
    return gb


def _check_fit_size(chains, draws, limit, *, bytes_per_draw, what, how_to_raise, items, vetted, candidates,
                    draws_option) -> float:
    """:func:`check_job_size` with the data's size: the estimate of :func:`fit_memory_gb`, by part."""
    def size(d):
        return fit_memory_gb(items, vetted, chains, d, candidates=candidates, bytes_per_draw=bytes_per_draw)

    est = size(draws)
    if est["total"] <= limit:
        return est["total"]
    lo, hi = 0, draws  # the most draws per chain that fit: the estimate grows with them
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if size(mid)["total"] <= limit else (lo, mid - 1)
    raise_to = math.ceil(est["total"] * 10) / 10
    raise_it = f"raise the limit to {raise_to:g} GB or more ({how_to_raise}, or the environment variable {MAX_MEMORY_ENV})"
    if lo >= 1000:
        fix = (f"Use fewer draws: up to {lo} per chain fit ({draws_option}{lo}; 1000-4000 are plenty for credible "
               f"intervals); or {raise_it}.")
    elif lo >= 100:
        fix = (f"{raise_it[0].upper()}{raise_it[1:]}; fewer draws fit only below 1000 per chain (up to {lo}: "
               f"{draws_option}{lo}), short of the 1000-4000 that give steady credible intervals.")
    else:
        fix = (f"Fewer draws would not bring it under the limit with 100 or more per chain (the process, the data "
               f"and one chunk of label draws need {size(min(draws, 100))['total']:.2f} GB at 100): {raise_it}.")
    raise ValueError(
        f"{what}: {chains} chains x {draws} draws of {items:,} items ({vetted:,} vetted) would need about "
        f"{est['total']:.2f} GB of memory ({est['process']:.2f} GB for Python and PyMC, {est['work']:.2f} GB to work "
        f"on the label draws a chunk at a time and to weigh the candidates, {est['kept']:.2f} GB kept: the data, "
        f"the label draws, the vetted labels' log-likelihoods, the parameters), above the limit of {limit:g} GB. "
        f"{fix}"
    )


def check_same_length(n_items: int, name: str, arr_len: int, reference: str = "scores") -> None:
    if arr_len != n_items:
        raise ValueError(
            f"`{name}` has {arr_len} item(s) but `{reference}` has {n_items}; "
            "they must describe the same items in the same order."
        )


def as_item_ids(x, n_items: int, name: str = "item_ids") -> np.ndarray:
    """Unique, 1-D item identifiers (ints or strings); default ``0..n_items-1``."""
    if x is None:
        return np.arange(n_items)
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be 1-D, got shape {arr.shape}.")
    check_same_length(n_items, name, arr.size)
    if arr.dtype.kind == "f":
        if np.isnan(arr).any():
            raise ValueError(f"`{name}` holds missing values; every item needs an id.")
        if not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)):
            raise ValueError(f"`{name}` holds non-integer floats; use ints or strings as ids.")
        arr = arr.astype(np.int64)
    if arr.dtype == object:
        if any(is_missing(v) for v in arr):
            raise ValueError(f"`{name}` holds missing values; every item needs an id.")
        arr = arr.astype(str)
    uniq, counts = np.unique(arr, return_counts=True)
    if uniq.size != arr.size:
        dup = uniq[counts > 1]
        raise ValueError(
            f"`{name}` must be unique, but {dup.size} id(s) occur more than once "
            f"(e.g. {preview(dup)}). Make them unique (e.g. add a suffix) or drop duplicates."
        )
    return arr


def as_categories(x, n_items: int, name: str = "categories") -> tuple[np.ndarray, np.ndarray]:
    """Return ``(codes, names)``: int codes per item and the sorted category names."""
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise ValueError(
            f"`{name}` must be 1-D (one category per item), got shape {arr.shape}. "
            "For multi-label data, make one item per (example, category) pair."
        )
    check_same_length(n_items, name, arr.size)
    if arr.dtype.kind == "f" and np.isnan(arr).any():
        raise ValueError(f"`{name}` holds NaN: every item needs a category.")
    if arr.dtype == object:
        if any(is_missing(v) for v in arr):
            raise ValueError(f"`{name}` holds missing values: every item needs a category.")
        arr = arr.astype(str)
    names, codes = np.unique(arr, return_inverse=True)
    return codes.astype(np.int64), names


def as_features(x, n_items: int, name: str = "features") -> tuple[np.ndarray, np.ndarray]:
    """Return ``(values, feature_names)`` for a 2-D finite float matrix (items x features)."""
    names = None
    if hasattr(x, "columns") and hasattr(x, "to_numpy"):
        names = np.asarray([str(c) for c in x.columns])
        x = x.to_numpy()
    arr = np.asarray(x)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(
            f"`{name}` must be 2-D with shape (n_items, n_features), got shape {arr.shape}."
        )
    if arr.shape[0] != n_items:
        raise ValueError(
            f"`{name}` has {arr.shape[0]} row(s) but there are {n_items} item(s); "
            "it must have one row per item (shape (n_items, n_features))."
        )
    try:
        arr = arr.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`{name}` must be numeric, got {_describe(arr)}.") from exc
    if not np.all(np.isfinite(arr)):
        raise ValueError(
            f"`{name}` holds {int((~np.isfinite(arr)).sum())} NaN or infinite value(s); "
            "impute or drop them first."
        )
    if names is None:
        names = np.asarray([f"f{j}" for j in range(arr.shape[1])])
    return arr, names


def as_probability(x, name: str, *, open_interval: bool = False) -> float:
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise TypeError(f"`{name}` must be a number in [0, 1], got {_describe(x)}.")
    x = float(x)
    lo_ok = x > 0 if open_interval else x >= 0
    hi_ok = x < 1 if open_interval else x <= 1
    if not (lo_ok and hi_ok and np.isfinite(x)):
        rng = "(0, 1)" if open_interval else "[0, 1]"
        hint = f" Did you mean {x / 100:g} (a percentage given as a share)?" if 1 < x <= 100 else ""
        raise ValueError(f"`{name}` must lie in {rng}, got {x}.{hint}")
    return x


def no_candidate_message(errors: dict[str, str]) -> str:
    """The error when no candidate model could be fitted: one message said once when every
    candidate failed for the same reason (bad data usually), else one line per candidate.

    >>> no_candidate_message({"a": "scores are constant", "b": "scores are constant"})
    'No candidate could be fitted (a, b): scores are constant'
    """
    names = ", ".join(errors)
    reasons = list(dict.fromkeys(errors.values()))
    if len(reasons) == 1:
        return f"No candidate could be fitted ({names}): {reasons[0]}"
    return "No candidate could be fitted:\n" + "\n".join(f"- {n}: {e}" for n, e in errors.items())


def as_positive_int(x, name: str, *, minimum: int = 1, hint: str = "") -> int:
    if isinstance(x, bool) or not isinstance(x, numbers.Integral):
        raise TypeError(f"`{name}` must be an integer >= {minimum}, got {_describe(x)}.{hint}")
    if x < minimum:
        raise ValueError(f"`{name}` must be >= {minimum}, got {x}.{hint}")
    return int(x)


def as_real_in(x, name: str, *, lo: float, hi: float, lo_open: bool, hi_open: bool, hint: str = "") -> float:
    """A real number in the interval from ``lo`` to ``hi`` (each end open or closed)."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise TypeError(f"`{name}` must be a number, got {_describe(x)}.{hint}")
    x = float(x)
    ok = math.isfinite(x) and (x > lo if lo_open else x >= lo) and (x < hi if hi_open else x <= hi)
    if not ok:
        span = f"{'(' if lo_open else '['}{lo:g}, {hi:g}{')' if hi_open else ']'}"
        raise ValueError(f"`{name}` must lie in {span}, got {x!r}.{hint}")
    return x


def describe(x) -> str:
    """A short description of what arrived, for error messages."""
    return _describe(x)


def as_k(k, name: str = "k") -> tuple[np.ndarray, bool]:
    """Return ``(ks, is_scalar)`` for a positive integer or 1-D array of them."""
    if k is None:
        raise TypeError(f"`{name}` is required: the number of top-ranked items, e.g. {name}=10.")
    arr = np.asarray(k)
    if arr.dtype == bool or arr.dtype.kind not in "iuf" or arr.ndim > 1:
        raise TypeError(f"`{name}` must be a positive integer or a 1-D array of them, got {_describe(k)}.")
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)):
            raise ValueError(f"`{name}` must be whole numbers, got {preview(np.atleast_1d(arr))}.")
    if arr.size == 0:
        raise ValueError(f"`{name}` is empty; give at least one value.")
    arr = arr.astype(np.int64)
    if np.any(arr < 1):
        raise ValueError(f"`{name}` must be >= 1, got {preview(np.atleast_1d(arr)[np.atleast_1d(arr) < 1])}.")
    return np.atleast_1d(arr), arr.ndim == 0


#: the metrics of the top ``k`` items: a ``k`` above the items they are computed on is refused
TOP_K_METRICS = ("precision_at_k", "recall_at_k")


def top_k_harm(metric: str, k: int, n_items: int) -> str:
    """What a top of ``k`` places does to ``metric`` on ``n_items`` items (``k > n_items``), for a message.

    Examples
    --------
    >>> top_k_harm("recall_at_k", 12, 10)
    'the top 12 would hold all 10 items and the recall would be 1 in every draw, whatever the ranking'
    """
    if metric == "recall_at_k":
        return f"the top {k} would hold all {n_items} items and the recall would be 1 in every draw, whatever the ranking"
    return f"the top {k} would count {k - n_items} missing items as negatives and the precision would be wrong"


def check_top_k(k, n_items: int, name: str = "k", metric: str = "precision_at_k", categories=None,
                pooled: str = 'category="pooled"') -> None:
    """Refuse a ``k`` of ``precision_at_k`` or ``recall_at_k`` above ``n_items``: the top would
    count its missing places as negatives (P@k at most n_pos / k), or hold every item (R@k 1 in
    every draw), a value about no set of items. ``categories``: ``{category: its number of
    items}`` when the metric is computed per category (each category's top of its own items):
    ``k`` above a category's items is refused too (empty categories are NaN anyway);
    ``pooled``: how the caller computes it over all items instead, for the message.

    Examples
    --------
    >>> check_top_k(3, 10, categories={"a": 8, "b": 2})
    Traceback (most recent call last):
    ...
    ValueError: precision_at_k: `k` = 3 is more than the items of 1 category: 'b' (2 items); ...
    """
    ks, _ = as_k(k, name)
    big = int(ks.max())
    if big > n_items:
        raise ValueError(
            f"{metric}: `{name}` = {big} is more than the {n_items} items, so {top_k_harm(metric, big, n_items)}. "
            f"Give {name} <= {n_items} (the size of the top you act on).")
    small = [(str(c), int(n)) for c, n in (categories or {}).items() if 0 < int(n) < big]
    if small:
        c, n = min(small, key=lambda cn: cn[1])
        listed = ", ".join(f"{c!r} ({n} items)" for c, n in small[:5]) + (
            f", and {len(small) - 5} more" if len(small) > 5 else "")
        raise ValueError(
            f"{metric}: `{name}` = {big} is more than the items of {len(small)} "
            f"{'category' if len(small) == 1 else 'categories'}: {listed}; it is computed per category, and in "
            f"category {c!r} {top_k_harm(metric, big, n)}. Give {name} <= {n} (the smallest category's size), "
            f"or {pooled} for the top of all {n_items} items.")


def as_grid(x, name: str, *, lo: float | None = None, hi: float | None = None) -> np.ndarray:
    """A non-empty 1-D finite grid, optionally inside ``[lo, hi]``."""
    arr = as_1d_float(np.atleast_1d(np.asarray(x, dtype=float)) if not isinstance(x, str) else x, name)
    if arr.size == 0:
        raise ValueError(f"`{name}` is empty; give at least one value.")
    if lo is not None and np.any(arr < lo) or hi is not None and np.any(arr > hi):
        raise ValueError(f"`{name}` must lie in [{lo}, {hi}], got values from {arr.min()} to {arr.max()}.")
    return arr


def check_choice(value, name: str, choices: Sequence[str]) -> str:
    if value not in choices:
        raise ValueError(f"`{name}` must be one of {list(choices)}, got {value!r}.")
    return value


def as_seed_sequence(random_seed, name: str = "random_seed") -> np.random.SeedSequence:
    """The one reading of a seed everywhere in bayeval: ``None``, an int >= 0, a
    :class:`numpy.random.SeedSequence` or a :class:`numpy.random.Generator`.

    ``None`` gives fresh entropy; a ``Generator`` is consumed once (one 63-bit draw),
    so passing the same generator twice gives two different, reproducible streams.
    """
    if random_seed is None:
        return np.random.SeedSequence()
    if isinstance(random_seed, np.random.SeedSequence):
        return random_seed
    if isinstance(random_seed, np.random.Generator):
        return np.random.SeedSequence(int(random_seed.integers(0, 2**63 - 1)))
    if isinstance(random_seed, bool) or not isinstance(random_seed, numbers.Integral):
        raise TypeError(
            f"`{name}` must be None, a non-negative integer, a numpy SeedSequence or a numpy Generator, "
            f"got {_describe(random_seed)}. For example {name}=0."
        )
    if random_seed < 0:
        raise ValueError(f"`{name}` must be >= 0, got {random_seed}.")
    return np.random.SeedSequence(int(random_seed))


def as_positive_number(value, name: str, *, upper=None) -> float:
    """A finite number > 0 (and < ``upper`` when given)."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating | np.integer):
        raise TypeError(f"{name} must be a number; got {type(value).__name__}.")
    if not (math.isfinite(value) and value > 0) or (upper is not None and value >= upper):
        rng = f"in (0, {upper})" if upper is not None else "positive and finite"
        raise ValueError(f"{name} must be {rng}; got {value!r}.")
    return float(value)


def as_confidence_mapping(mapping) -> np.ndarray:
    """Theta implied by each confidence level of a human ranking: increasing, in (0, 1]."""
    try:
        c = np.asarray(mapping, dtype=float)
    except (TypeError, ValueError) as err:
        raise TypeError(f"mapping must be a sequence of numbers; got {mapping!r}.") from err
    if c.ndim != 1 or c.size < 2:
        raise ValueError(
            "mapping must list the theta value of each confidence level, lowest level first, "
            f"e.g. (0.5, 0.75, 1.0); got {mapping!r}."
        )
    if not (np.all(np.isfinite(c)) and np.all(c > 0) and np.all(c <= 1) and np.all(np.diff(c) > 0)):
        raise ValueError(
            "mapping must be strictly increasing values in (0, 1] (theta implied by each "
            f"confidence level, lowest first); got {mapping!r}."
        )
    return c


# ----------------------------------------------------------- seeds, posteriors, items


def as_rng(random_seed, name: str = "random_seed") -> np.random.Generator:
    """A numpy Generator from any seed :func:`as_seed_sequence` reads.

    Examples
    --------
    >>> from bayeval.core._validate import as_rng
    >>> float(as_rng(0).random()) == float(as_rng(0).random())
    True
    """
    return np.random.default_rng(as_seed_sequence(random_seed, name))


def as_category_mode(category, has_categories: bool) -> str:
    """How a metric treats categories: ``"each"``, ``"mean"`` or ``"pooled"``.

    None means ``"each"`` with categories in the data, ``"pooled"`` without.
    """
    if category is None:
        return "each" if has_categories else "pooled"
    check_choice(category, "category", ("each", "mean", "pooled"))
    if category != "pooled" and not has_categories:
        raise ValueError(
            f"category={category!r} needs an EvalData with categories; use 'pooled' (or leave "
            "category unset)."
        )
    return category


def as_item_mask(x, n_items: int, name: str = "exclude") -> np.ndarray:
    """A boolean mask over items from item positions (integers) or a boolean mask; None: none.

    Examples
    --------
    >>> from bayeval.core._validate import as_item_mask
    >>> as_item_mask([0, 2], 4).tolist()
    [True, False, True, False]
    """
    mask = np.zeros(n_items, dtype=bool)
    if x is None:
        return mask
    if isinstance(x, str | bytes):
        raise TypeError(f"`{name}` must be item positions (integers), got the string {x!r}.")
    arr = np.asarray(x)
    if arr.dtype == bool:
        if arr.shape != (n_items,):
            raise ValueError(
                f"A boolean `{name}` mask must have shape ({n_items},) (one entry per item), "
                f"got shape {arr.shape}."
            )
        return arr.copy()
    arr = arr.ravel() if arr.ndim == 0 else arr
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be a 1-D list of item positions, got shape {arr.shape}.")
    if arr.size == 0:
        return mask
    if arr.dtype.kind not in "iu":
        raise TypeError(
            f"`{name}` must hold integer item positions (0 .. {n_items - 1}), got dtype "
            f"{arr.dtype}. To pick items by id, map ids to positions first."
        )
    bad = arr[(arr < 0) | (arr >= n_items)]
    if bad.size:
        raise ValueError(
            f"`{name}` holds positions outside 0 .. {n_items - 1}: "
            f"{', '.join(map(str, bad[:5].tolist()))}{', ...' if bad.size > 5 else ''}."
        )
    mask[arr] = True
    return mask


def as_full_labels(x, n_items: int, name: str = "truth") -> np.ndarray:
    """Every item's 1/0 label (no missing ones), one per item, as int8."""
    arr = as_label_vector(x, name, allow_nan=False)
    check_same_length(n_items, name, arr.size)
    return arr.astype(np.int8)


# ------------------------------------------------------------------------- text


def as_text(x, name: str, *, fix: str) -> str:
    """A non-empty string; ``fix`` says what to give when it is empty."""
    if not isinstance(x, str):
        raise TypeError(f"`{name}` must be a string, got {type(x).__name__}.")
    if not x.strip():
        raise ValueError(f"`{name}` is empty: {fix}")
    return x


def as_optional_text(x, name: str) -> str | None:
    """A string or None."""
    if x is not None and not isinstance(x, str):
        raise TypeError(f"`{name}` must be a string or None, got {type(x).__name__}.")
    return x


# ------------------------------------------------------------------ constraints

#: The keys of a precision/recall constraint (see :func:`as_constraints`).
CONSTRAINT_KEYS = ("min_precision", "min_recall", "prob", "min_flagged")


def as_constraints(constraints, name: str = "constraints") -> dict[str, float | int] | None:
    """``{"min_precision": p, "min_recall": r, "prob": q, "min_flagged": m}`` (any of them, one
    bound at least; ``min_flagged`` is a whole number >= 0).

    Examples
    --------
    >>> from bayeval.core._validate import as_constraints
    >>> as_constraints({"min_recall": 0.5, "min_precision": 0.9})
    {'min_precision': 0.9, 'min_recall': 0.5}
    """
    if constraints is None:
        return None
    if not isinstance(constraints, Mapping):
        raise TypeError(
            f"`{name}` must be a dict such as {{'min_precision': 0.9, 'min_recall': 0.5}}, "
            f"got {type(constraints).__name__}."
        )
    unknown = [k for k in constraints if k not in CONSTRAINT_KEYS]
    if unknown:
        raise ValueError(
            f"`{name}` has unknown key(s) {unknown}; the keys are 'min_precision', 'min_recall', "
            "'prob' (the probability the constraint must hold with) and 'min_flagged' (the fewest items "
            "a recommended threshold may flag)."
        )
    out = {
        k: as_positive_int(v, k, minimum=0) if k == "min_flagged" else as_probability(v, k, open_interval=k == "prob")
        for k, v in constraints.items()
        if v is not None
    }
    if not any(k in out for k in ("min_precision", "min_recall")):
        raise ValueError(
            f"`{name}` sets no bound: give min_precision, min_recall or both, or pass {name}=None."
        )
    return {k: out[k] for k in CONSTRAINT_KEYS if k in out}


def check_keys(mapping, allowed: Sequence[str]) -> None:
    """A ValueError naming the keys of ``mapping`` that are not ``allowed``, and those that are."""
    unknown = [k for k in mapping if k not in allowed]
    if unknown:
        raise ValueError(f"unknown key(s) {unknown}; allowed keys are {list(allowed)}.")


# ----------------------------------------------------------------- numeric arrays


def as_numeric_array(x, name: str, *, expected: str = "") -> np.ndarray:
    """Any array of real numbers (pandas missing values become NaN), as float64.

    Text or other objects that are not numbers are a TypeError naming the first of them
    and where they are; ``expected`` (e.g. the coding the values follow) ends its message.
    """
    if hasattr(x, "to_numpy"):  # pandas objects
        try:
            x = x.to_numpy(dtype=float, na_value=np.nan)
        except (TypeError, ValueError):  # text among them: named below
            x = x.to_numpy(dtype=object, na_value=np.nan)
    try:
        arr = np.asarray(x)
    except Exception as err:  # pragma: no cover - exotic inputs
        raise TypeError(f"{name} must be array-like of numbers; got {type(x).__name__}.") from err
    if arr.dtype == object or arr.dtype.kind in "USV":
        bad = not_numbers(arr.astype(object))
        if bad:
            where = [np.unravel_index(i, arr.shape) if arr.ndim > 1 else (i,) for i, _ in bad[:5]]
            shown = ", ".join(
                f"{tuple(int(j) for j in w) if len(w) > 1 else int(w[0])}: {v!r}" for w, (_, v) in zip(where, bad)
            )
            more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
            hint = f" Expected {expected}." if expected else " Convert them to numbers first."
            raise TypeError(
                f"{name} must hold numbers, but {len(bad)} value(s) are not numbers "
                f"(at {shown}{more}).{hint}"
            )
        arr = np.asarray([np.nan if is_missing(v) else float(v) for v in arr.ravel().tolist()],
                         dtype=float).reshape(arr.shape)
    if not (np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.bool_)):
        raise TypeError(
            f"{name} must hold numbers; got an array of dtype {arr.dtype}. "
            f"Convert it with np.asarray(..., dtype=float)."
        )
    if np.iscomplexobj(arr):
        raise TypeError(f"{name} must be real-valued; got dtype {arr.dtype}.")
    return arr.astype(float)


def positions_text(mask, limit: int = 5) -> str:
    """The first ``limit`` positions where ``mask`` is true: ``3, 7`` or ``(0, 1), (2, 0)``."""
    idx = np.argwhere(mask)[:limit]
    return ", ".join(str(tuple(int(j) for j in i)) if len(i) > 1 else str(int(i[0])) for i in idx)


def as_probability_array(x, name: str, *, axis: str, per: str, meaning: str, fix_nonfinite: str) -> np.ndarray:
    """Probabilities of shape ``(..., n)`` with ``n >= 1``: finite, in [0, 1].

    ``axis`` names the last axis (e.g. ``"n_pairs"``), ``per`` what it indexes, ``meaning``
    what a value is, ``fix_nonfinite`` how to avoid NaN/inf, for the messages.
    """
    arr = as_numeric_array(x, name)
    if arr.ndim == 0 or arr.shape[-1] == 0:
        raise ValueError(
            f"{name} must have shape (..., {axis}) with {axis} >= 1; got shape {arr.shape}. "
            f"Pass one probability per {per} (the last axis indexes {per}s)."
        )
    bad = ~np.isfinite(arr)
    if bad.any():
        raise ValueError(
            f"{name} must be finite; found {int(bad.sum())} NaN/inf value(s) at index "
            f"{positions_text(bad)}. {fix_nonfinite}"
        )
    bad = (arr < 0) | (arr > 1)
    if bad.any():
        raise ValueError(
            f"{name} must lie in [0, 1] ({meaning}); found {int(bad.sum())} value(s) outside, "
            f"e.g. {arr[bad][:3].tolist()} at {positions_text(bad)}."
        )
    return arr


def as_binary_array(x, name: str, n: int, *, axis: str, per: str, match: str, one: str, zero: str,
                    fix: str) -> np.ndarray:
    """A complete 0/1 array of shape ``(..., n)`` (no NaN), as int8.

    ``axis`` names the last axis and ``per`` what it indexes, ``match`` what it must
    match, ``one``/``zero`` what the values mean and ``fix`` how to complete it, for the
    messages.
    """
    arr = as_numeric_array(x, name)
    if arr.ndim == 0 or arr.shape[-1] != n:
        raise ValueError(
            f"{name} must have shape (..., {n}) to match {match} ({axis}={n}); got shape {arr.shape}."
        )
    bad = ~((arr == 0) | (arr == 1))
    if bad.any():
        raise ValueError(
            f"{name} must hold 1 ({one}) or 0 ({zero}) for every {per}; found "
            f"{int(bad.sum())} other value(s) (NaN included), e.g. {arr[bad][:3].tolist()} at "
            f"{positions_text(bad)}. {fix}"
        )
    return arr.astype(np.int8)


def as_probability_vector(p, n: int, name: str) -> np.ndarray:
    """One finite probability in [0, 1] per item, shape ``(n,)``, as float64."""
    arr = np.asarray(p)
    if arr.dtype == object or arr.dtype.kind not in "biuf":
        raise TypeError(f"`{name}` must be a numeric array of probabilities, got {_describe(arr)}.")
    arr = arr.astype(np.float64)
    if arr.shape != (n,):
        raise ValueError(
            f"`{name}` must hold one probability per item, shape ({n},), got shape {arr.shape}."
        )
    finite = np.isfinite(arr)
    if not finite.all() or arr.min() < 0 or arr.max() > 1:
        shown = arr[finite]
        span = f"from {shown.min()!r} to {shown.max()!r}" if shown.size else "none finite"
        raise ValueError(
            f"`{name}` must hold finite probabilities in [0, 1]; got {int((~finite).sum())} "
            f"NaN/inf value(s), finite values {span}. Calibrate or clip them first."
        )
    return arr


# ------------------------------------------------------- pandas inputs matched by index


def _row_numbers(index) -> bool:
    """Whether ``index`` is pandas' default 0 .. n-1 in order: it numbers rows, it names no item."""
    if isinstance(index, pd.RangeIndex):
        return index.start == 0 and index.step == 1
    return index.dtype.kind in "iu" and np.array_equal(index.to_numpy(), np.arange(len(index)))


def _some(labels) -> str:
    return preview(list(labels), limit=3)


def _index_mismatch(ref_name: str, ref: pd.Index, name: str, idx: pd.Index) -> str:
    """Why ``idx`` cannot be matched to ``ref`` by label, or "" when it holds the same labels."""
    for who, index in ((ref_name, ref), (name, idx)):
        if index.has_duplicates:
            return (
                f"`{who}`'s index repeats ids (e.g. {_some(index[index.duplicated()].unique())}), so "
                f"`{name}` cannot be paired with `{ref_name}` by index. Keep one row per item, or pass "
                "`.to_numpy()` for each if they are already in the same order (then positions pair them)."
            )
    missing, extra = ref.difference(idx, sort=False), idx.difference(ref, sort=False)
    if not len(missing) and not len(extra):
        return ""
    parts = []
    if len(missing):
        parts.append(f"{len(missing)} of the {len(ref)} ids in `{ref_name}`'s index are not in `{name}`'s ({_some(missing)})")
    if len(extra):
        parts.append(f"{len(extra)} of `{name}`'s are not in `{ref_name}`'s ({_some(extra)})")
    return (
        f"`{ref_name}` and `{name}` are pandas objects whose indexes name different items: "
        f"{' and '.join(parts)}. bayeval pairs pandas inputs by their index, so it cannot tell which value "
        f"of `{name}` belongs to which item. Select the same items in each (e.g. "
        f"`{name}.loc[{ref_name}.index]` or `{name}.reindex({ref_name}.index)`), or pass `.to_numpy()` for "
        "each if they are already in the same order (then positions pair them)."
    )


def align_by_index(inputs: Sequence[tuple[str, object]], *, ids: str | None = None,
                   hints: Mapping[str, str] | None = None) -> list:
    """The per-item inputs of one call, with pandas objects paired by their index.

    ``inputs`` are ``(name, value)`` pairs (None for an input not given). The pandas
    objects among them (a Series, or a DataFrame's rows) are compared with the first one:

    * the same index (or pandas' default 0 .. n-1 on both): unchanged, paired by position;
    * the same labels in another order: put in the first one's order -- unless an index
      is the default 0 .. n-1 (row numbers: pairing by label and by position disagree, and
      which is meant cannot be told) or a plain array is among the inputs (which order it
      follows cannot be told): then a ValueError says so;
    * other labels (or a repeated label): a ValueError names both inputs, shows a few
      labels that differ and says how to fix it.

    ``ids`` names the input of item ids: a plain array of them that holds the first pandas
    object's index labels in another order is an error (the two say different things about
    which item is where). ``hints`` adds a sentence to the error about an input.

    Returns the values in the order of ``inputs``.

    Examples
    --------
    >>> import pandas as pd
    >>> from bayeval.core._validate import align_by_index
    >>> s = pd.Series([0.9, 0.2], index=["a", "b"])
    >>> y = pd.Series([0, 1], index=["b", "a"])
    >>> align_by_index([("scores", s), ("labels", y)])[1].tolist()
    [1, 0]
    >>> align_by_index([("scores", s), ("labels", y.reset_index(drop=True))])
    Traceback (most recent call last):
    ...
    ValueError: `scores` and `labels` are pandas objects whose indexes name different items: ...
    """
    out = [value for _, value in inputs]
    indexed = [(i, name, v) for i, (name, v) in enumerate(inputs) if isinstance(v, pd.Series | pd.DataFrame)]
    if not indexed:
        return out
    _, ref_name, ref = indexed[0]
    ref_index = ref.index
    hints = hints or {}

    def fail(message: str, *names: str):
        extra = " ".join(hints[n] for n in dict.fromkeys(names) if n in hints)
        raise ValueError(message + (" " + extra if extra else ""))

    plain = [name for name, v in inputs if v is not None and not isinstance(v, pd.Series | pd.DataFrame)]
    for i, name, value in indexed[1:]:
        idx = value.index
        if idx.equals(ref_index) or (_row_numbers(idx) and _row_numbers(ref_index)):
            continue
        why = _index_mismatch(ref_name, ref_index, name, idx)
        if why:
            fail(why, ref_name, name)
        default = next((n for n, x in ((ref_name, ref_index), (name, idx)) if _row_numbers(x)), None)
        if default is not None:
            fail(
                f"`{ref_name}` and `{name}` hold the same ids in their index in another order, and `{default}`'s "
                f"index is pandas' default 0 .. {len(idx) - 1} (row numbers, not item ids): pairing by index "
                "and pairing by position give different answers, and bayeval cannot tell which is meant. If "
                f"they are in the same order, pass `.to_numpy()` for each; if the index names the items, "
                f"put one in the other's order first (`{name}.loc[{ref_name}.index]`).", ref_name, name)
        if plain:
            fail(
                f"`{name}`'s index holds the ids of `{ref_name}`'s in another order, so the two would be paired "
                f"by index; but `{plain[0]}` is a plain array with no index, and bayeval cannot tell which of "
                f"the two orders it follows. Put `{name}` in `{ref_name}`'s order first "
                f"(`{name}.loc[{ref_name}.index]`), or pass `.to_numpy()` for every input to pair them all by "
                "position.", ref_name, name)
        out[i] = value.iloc[idx.get_indexer(ref_index)]
    given = dict(inputs).get(ids) if ids is not None else None
    if given is not None and not isinstance(given, pd.Series | pd.DataFrame) and not _row_numbers(ref_index):
        arr = np.asarray(given)
        if arr.ndim == 1 and arr.size == len(ref_index) and not ref_index.has_duplicates:
            pos = ref_index.get_indexer(arr)
            if (pos >= 0).all() and np.unique(pos).size == pos.size and (pos != np.arange(pos.size)).any():
                fail(
                    f"`{ids}` holds the ids of `{ref_name}`'s index in another order (e.g. position "
                    f"{int(np.flatnonzero(pos != np.arange(pos.size))[0])}): the two disagree on which item "
                    f"is where. Pass `{ids}={ref_name}.index` (or leave it out and put the inputs in "
                    f"`{ids}`'s order first: `{ref_name}.loc[{ids}]`).", ref_name, ids)
    return out
