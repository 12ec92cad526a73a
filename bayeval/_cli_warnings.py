"""How the command line tells the user what a fit warns about: as one-line ``warning:``
messages on stderr, never a Python warning with a file path (``bayeval fit``,
``bayeval compare``)."""

from __future__ import annotations

import contextlib
import sys
import warnings
from collections.abc import Iterator

from .core._diagnostics import sampler_messages


def say_diagnostics(post, data, *, prefix: str = "") -> list[str]:
    """The fit's convergence problems as ``warning:`` lines (the fit ran with ``warn=False``):
    the sampler's, and those of the vetted labels when both classes are vetted (a class not
    vetted is said on its own, and in the caveats). Returns the labels' messages it said, so
    that a caller printing the caveats does not say one twice (scores that rank the vetted
    positives low are both). ``prefix``: put before each message (a card's name, where one
    command reports several)."""
    diag = post.check_convergence(warn=False)
    said: list[str] = []
    if diag is not None and not diag["ok"]:
        bad = sampler_messages(diag) or ([] if diag.get("messages") else ["outside their targets."])
        if bad:
            print(f"warning: {prefix}sampler diagnostics are bad: " + " ".join(bad), file=sys.stderr)
        if data.n_vetted_positive and data.n_vetted_negative:  # a class not vetted: said above and below
            for m in diag.get("data_messages") or ():  # the labels' problems: more labels fix them
                print(f"warning: {prefix}{m}", file=sys.stderr)
                said.append(m)
    return said


def say_caveats(post, data, more=(), *, prefix: str = "") -> None:
    """What a fit warns about (:func:`say_diagnostics`), then what the labels and scores cannot
    tell its model (:meth:`bayeval.EvalData.caveats`) and the command's ``more`` caveats as
    ``caveat:`` lines on stderr: each once, none that was said as a warning already."""
    said = say_diagnostics(post, data, prefix=prefix)
    for caveat in dict.fromkeys([*data.caveats(post), *more]):
        if caveat not in said:
            print(f"caveat: {prefix}{caveat}", file=sys.stderr)


#: the report's sections whose red boxes :func:`say_caveats` says in its own words: the metrics
#: section's are the data's caveats (``Read these intervals with care: ...``), the diagnostics
#: section's the fit's warnings
_SAID_BY_SAY_CAVEATS = ("metrics", "diagnostics")


def report_caveats(rep) -> list[str]:
    """The caveats a model card's report (:class:`bayeval.report.Report`) says at the top of its
    reading beside the data's and the sampler's, for :func:`say_caveats`: its metric table's
    (a metric undefined in some draws, a threshold that flags no item or every item, an
    interval other than the draws' HDI) and the other sections' red boxes (labels that
    contradict a calibration curve, a score mixture's failed predictive check, constraints no
    threshold meets)."""
    table = rep.tables.get("metrics")
    out = list(table.attrs.get("reported", [])) if table is not None else []
    for section, messages in rep.warnings.items():
        if section not in _SAID_BY_SAY_CAVEATS:
            out.extend(messages)
    return out


_FOR_DEVELOPERS = (DeprecationWarning, PendingDeprecationWarning, FutureWarning, ImportWarning,
                   ResourceWarning)


@contextlib.contextmanager
def warnings_as_lines() -> Iterator[None]:
    """Python warnings raised inside the block are printed after it as ``warning: MESSAGE``
    lines on stderr (each message once, without the ``bayeval:`` prefix, file or line). A
    library's deprecation notices are for developers, not about the user's data: not shown.
    Every warning is recorded whatever the filters outside the block say (one that turns
    bayeval's warnings into errors, as the test suite's, would otherwise raise it); a filter
    set inside the block still applies."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        finally:
            said = [str(w.message).removeprefix("bayeval: ").strip() for w in caught
                    if not issubclass(w.category, _FOR_DEVELOPERS)]
            for message in dict.fromkeys(said):
                if message:
                    print(f"warning: {message}", file=sys.stderr)
