"""Credible-interval model-card reports: tables, figures and a plain-language reading.

:func:`report` turns a :class:`~bayeval.Posterior` into a :class:`Report`: what the
evaluation set holds, the metric table (posterior mean, sd and HDI, next to the
vetted-only and naive point estimates, and the true value when it is known), the
precision-recall curve with its credible band, the score-mixture fit and its
posterior predictive check (for a score-mixture posterior), the threshold that meets
a precision/recall constraint and how likely it is to meet it, sampler diagnostics,
and a short reading of the numbers in words.

A :class:`Report` renders to one self-contained HTML page (figures embedded as
PNG, inline CSS, no script, nothing fetched from elsewhere), to Markdown with the
figures as PNG files, or straight into a Jupyter cell. Rendering is deterministic:
the same inputs and seed give byte-identical output.

Everything a user typed (title, description, metric labels, category names) is
stored as plain text in the report and escaped when it is rendered.
"""

from __future__ import annotations

import base64
import html
import io
import math
import numbers
import warnings
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from ._report_text import (at_rank_k, fmt, read_comparison, read_metrics, sd_as_zero, unwidened_note,
                           vetted_only_note, vetted_selection_of, widened_draws_note)
from ._version import DISPLAY, PACKAGES, provenance
from .core import _validate as V
from .core._defaults import HDI_PROB
from .core._diagnostics import sampler_messages
from .core.evaluate import metric_items, naive, point_metric, resolve_metric, vetted_only, vetted_only_n
from .core.posterior import Posterior
from .core.summary import ThresholdWarning, summary_rows, threshold_caveats, undefined_sentence, undefined_share
from .recalibrate import Recalibration, probability_text, recalibrate, threshold_text

__all__ = ["Report", "report"]

_SAMPLE_DIMS = ("chain", "draw")
_DEFAULT_KS = (10, 50, 100, 500, 1000)
_PPC_ALPHA = 0.05
#: The report's names of a stack's per-parameter columns (see StackedPosterior.diagnostics).
_STACK_COLUMNS = {"ess_bulk": "bulk ESS, all its draws", "ess_tail": "tail ESS, all its draws",
                  "stack_draws": "draws in the stack", "stack_ess_bulk": "bulk ESS, draws in the stack"}
_PARETO_K_OK = 0.7  # a leave-one-out Pareto k above this makes the LOO score approximate
_DPI = 100

# Section layout of the rendered page: (id, heading, tables, figures).
_SECTIONS = (
    ("data", "The data", ("data",), ()),
    ("metrics", "Metrics", ("metrics", "metrics_by_category"), ("pr_curve",)),
    ("calibration", "Calibration curve learned from the vetted labels", ("calibration",), ("calibration_curve",)),
    ("fit", "Score-mixture fit and posterior predictive check", ("fit",), ("mixture_fit",)),
    (
        "constraints",
        "Threshold under constraints",
        ("constraints", "at_threshold"),
        ("threshold_probability",),
    ),
    ("comparison", "Which classifier is better", ("comparison_ranking", "comparison_gaps"), ("comparison",)),
    ("vetting", "Vetting progress", ("vetting_progress",), ("vetting_progress",)),
    ("diagnostics", "Sampler diagnostics", ("diagnostics", "diagnostics_by_parameter"), ()),
)

_CAPTIONS = {
    "pr_curve": "Precision-recall curve: posterior median and credible band (black: the true curve, when known).",
    "mixture_fit": (
        "Left: the fitted score mixture over the histogram of the classifier's scores, on their "
        "original scale (vetted items as ticks). "
        "Right: posterior predictive check, observed vs replicated Kolmogorov distance per draw."
    ),
    "threshold_probability": "Probability that the constraint holds, against the threshold.",
    "calibration_curve": (
        "P(positive | score): posterior mean and credible band of the calibration curve, the vetted "
        "labels as ticks at 0 and 1 (red dots: the true share of positives in score bins, when known)."
    ),
    "vetting_progress": "Vetting progress, as recorded by the session.",
}

_TABLE_CAPTIONS = {
    "data": "Items and vetted labels (per category).",
    "metrics": "Posterior of each metric on this evaluation set, next to the point estimates.",
    "metrics_by_category": "The same, per category.",
    "fit": "Score-mixture fit and its posterior predictive check.",
    "calibration": (
        "The candidate curves, scored by how well each predicts the vetted labels it did not see "
        "(leave-one-out, PSIS-LOO; a worst Pareto k above 0.7 means one vetted label is so influential "
        "that its leave-one-out score is approximate), and their stacking weights."
    ),
    "constraints": "Probability that each constraint holds at the recommended threshold.",
    "at_threshold": "Metrics at the recommended threshold.",
    "vetting_progress": "Vetting history of the session.",
    "diagnostics": "Sampler diagnostics (summary).",
    "diagnostics_by_parameter": "Sampler diagnostics per parameter.",
}

_CSS = """
.bayeval-report { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif;
  color: #1a1a1a; max-width: 1100px; margin: 0 auto; padding: 1em 1.5em; line-height: 1.45; }
.bayeval-report h1 { font-size: 1.7em; margin: 0.2em 0 0.4em; }
.bayeval-report h2 { font-size: 1.25em; margin-top: 1.6em; border-bottom: 1px solid #ccc; padding-bottom: 0.2em; }
.bayeval-report p.meta { color: #555; font-size: 0.9em; }
.bayeval-report table.bv-table { border-collapse: collapse; margin: 0.6em 0 1em; font-size: 0.9em; }
.bayeval-report table.bv-table th, .bayeval-report table.bv-table td {
  border: 1px solid #d0d0d0; padding: 0.25em 0.6em; }
.bayeval-report table.bv-table thead th { background: #f0f0f0; }
.bayeval-report table.bv-table td.num { text-align: right; font-variant-numeric: tabular-nums; }
.bayeval-report table.bv-table tbody th { text-align: left; font-weight: normal; background: #fafafa; }
.bayeval-report table.bv-table caption { caption-side: top; text-align: left; color: #444;
  font-size: 0.9em; padding-bottom: 0.2em; }
.bayeval-report figure { margin: 0.8em 0; }
.bayeval-report figure img { max-width: 100%; height: auto; border: 1px solid #e4e4e4; }
.bayeval-report figcaption { color: #444; font-size: 0.88em; }
.bayeval-report .bv-warning { background: #fdecea; border: 2px solid #c62828; color: #7f1010;
  padding: 0.6em 0.9em; margin: 0.8em 0; border-radius: 4px; }
.bayeval-report .bv-warning strong { color: #b71c1c; }
.bayeval-report .bv-ok { background: #edf7ed; border: 1px solid #4caf50; padding: 0.4em 0.9em;
  margin: 0.8em 0; border-radius: 4px; }
.bayeval-report .bv-note { color: #444; font-size: 0.88em; }
.bayeval-report ul.bv-reading li { margin-bottom: 0.35em; }
""".strip()


def _esc(text) -> str:
    return html.escape(str(text), quote=True)


def _md(text) -> str:
    """User text for Markdown: ``&``, ``<`` and ``>`` escaped so no raw HTML gets
    through; quotes stay as they are (they mean nothing to Markdown, and entities
    such as ``&#x27;`` are unreadable in the .md file itself)."""
    return html.escape(str(text), quote=False)


def _cell_texts(df: pd.DataFrame) -> list[list[str]]:
    """The text of each cell of ``df``, row by row: :func:`fmt` of the value, unless
    ``df.attrs["cell_text"]`` gives a column's texts (one per row) as it should be read, e.g.
    a threshold written so that it flags the same items as the float it stands for."""
    given = df.attrs.get("cell_text", {})
    columns = [list(given[c]) if c in given else [fmt(v) for v in df[c]] for c in df.columns]
    return [list(row) for row in zip(*columns, strict=True)] if columns else [[] for _ in df.index]


def _is_num(x) -> bool:
    return isinstance(x, numbers.Number) and not isinstance(x, bool | np.bool_)


# ====================================================================== Report


class Report:
    """A rendered-on-demand model-card report: tables, figures and a reading in words.

    Made by :func:`report`; it can also be assembled by hand. Every string it holds
    is plain text, escaped when rendered. Tables and figures with the names that
    :func:`report` uses go into their sections; any others follow at the end.

    Parameters
    ----------
    title : str
    tables : dict of str to pandas.DataFrame, optional
        Each cell is shown as a short number; a table's ``attrs["cell_text"]``, a dict
        of column name to one text per row, shows that column as those texts instead
        (the ``constraints`` table shows its threshold so, as the decimal that flags the
        same items as the float it holds).
    figures : dict of str to matplotlib.figure.Figure, optional
    text : list of str, optional
        The plain-language reading, one paragraph per entry.
    description : str, optional
        Free text shown under the title (blank lines separate paragraphs).
    warnings : dict of str to list of str, optional
        Warnings per section id (``"fit"``, ``"constraints"``, ``"diagnostics"``...);
        each is shown in a red box in its section and counted at the top.
    notes : dict of str to list of str, optional
        Remarks per section id, shown under that section's tables.
    meta : list of str, optional
        Provenance lines shown under the title (model, draws, seed...).

    Attributes
    ----------
    title, tables, figures, text, description, warnings, notes, meta

    Examples
    --------
    >>> import pandas as pd
    >>> from bayeval.report import Report
    >>> r = Report("Demo <b>", tables={"data": pd.DataFrame({"items": [3]}, index=["all"])},
    ...            text=["Three items."])
    >>> "Demo &lt;b&gt;" in r.to_html(), "<script" in r.to_html()
    (True, False)
    """

    def __init__(
        self,
        title: str,
        *,
        tables: Mapping[str, pd.DataFrame] | None = None,
        figures: Mapping | None = None,
        text: list[str] | None = None,
        description: str | None = None,
        warnings: Mapping[str, list[str]] | None = None,
        notes: Mapping[str, list[str]] | None = None,
        meta: list[str] | None = None,
    ):
        self.title = _check_title(title)
        self.description = V.as_optional_text(description, "description")
        self.tables: dict[str, pd.DataFrame] = dict(tables or {})
        for name, df in self.tables.items():
            if not isinstance(df, pd.DataFrame):
                raise TypeError(
                    f"tables[{name!r}] must be a pandas DataFrame, got {type(df).__name__}."
                )
        self.figures: dict = dict(figures or {})
        for name, fig in self.figures.items():
            if not hasattr(fig, "savefig"):
                raise TypeError(
                    f"figures[{name!r}] must be a matplotlib Figure, got {type(fig).__name__}."
                )
        self.text: list[str] = [str(t) for t in (text or [])]
        self.warnings: dict[str, list[str]] = {
            k: [str(m) for m in v] for k, v in (warnings or {}).items()
        }
        self.notes: dict[str, list[str]] = {
            k: [str(m) for m in v] for k, v in (notes or {}).items()
        }
        self.meta: list[str] = [str(m) for m in (meta or [])]

    # ------------------------------------------------------------ internals

    @staticmethod
    def _png(fig) -> bytes:
        buf = io.BytesIO()
        # No "Software" entry (it carries the matplotlib version); Agg output is
        # otherwise a pure function of the figure, so the bytes are stable.
        fig.savefig(buf, format="png", dpi=_DPI, metadata={"Software": None})
        return buf.getvalue()

    def _layout(self) -> list[tuple[str, str, list[str], list[str]]]:
        used_t, used_f = set(), set()
        out = []
        for sid, heading, tnames, fnames in _SECTIONS:
            t = [n for n in tnames if n in self.tables]
            f = [n for n in fnames if n in self.figures]
            used_t.update(t)
            used_f.update(f)
            if t or f or self.warnings.get(sid) or self.notes.get(sid):
                out.append((sid, heading, t, f))
        rest_t = [n for n in self.tables if n not in used_t]
        rest_f = [n for n in self.figures if n not in used_f]
        if rest_t or rest_f or self.warnings.get("other") or self.notes.get("other"):
            out.append(("other", "More", rest_t, rest_f))
        return out

    @staticmethod
    def _heading(sid: str) -> str:
        """The heading a section id is shown under (warnings name sections by heading)."""
        return next((h for i, h, _, _ in _SECTIONS if i == sid), "More")

    def _n_warnings(self) -> int:
        return sum(len(v) for v in self.warnings.values())

    def _verdict(self) -> str:
        """The threshold's bad news for the summary line: the first sentence of the
        constraint section's warning (e.g. that no threshold meets the constraint)."""
        msgs = self.warnings.get("constraints") or []
        if not msgs:
            return ""
        first = msgs[0].split(". ")[0].rstrip(".")
        return f" {first}."

    # ------------------------------------------------------------- HTML

    @staticmethod
    def _table_html(name: str, df: pd.DataFrame) -> str:
        index_name = df.index.name if df.index.name is not None else ""
        head = "".join(f'<th scope="col">{_esc(c)}</th>' for c in df.columns)
        rows = []
        texts = _cell_texts(df)
        for idx, row, shown in zip(df.index, df.itertuples(index=False, name=None), texts, strict=True):
            cells = "".join(
                f'<td class="{"num" if _is_num(v) else "txt"}">{_esc(text)}</td>'
                for v, text in zip(row, shown, strict=True)
            )
            rows.append(f'<tr><th scope="row">{_esc(fmt(idx))}</th>{cells}</tr>')
        tid = _esc("table-" + name)
        return (
            f'<table class="bv-table" id="{tid}"><caption>{_esc(_TABLE_CAPTIONS.get(name, name))}</caption>'
            f'<thead><tr><th scope="col">{_esc(index_name)}</th>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>"
        )

    def _body_html(self, pngs: Mapping[str, bytes] | None = None) -> str:
        pngs = pngs or {}
        parts = [f'<h1 id="report-title">{_esc(self.title)}</h1>']
        for line in self.meta:
            parts.append(f'<p class="meta">{_esc(line)}</p>')
        if self.description:
            for para in _paragraphs(self.description):
                parts.append(f'<p class="description">{_esc(para)}</p>')
        n_warn = self._n_warnings()
        if n_warn:
            where = " and ".join(f"“{_esc(self._heading(sid))}”" for sid, v in self.warnings.items() if v)
            parts.append(
                f'<div class="bv-warning" role="alert" id="warning-summary"><strong>'
                f"{n_warn} warning{'s' if n_warn > 1 else ''}</strong>: read the red boxes below "
                f"(in the section{'s' if ' and ' in where else ''} {where}) before relying on these "
                f"numbers.{_esc(self._verdict())}</div>"
            )
        if self.text:
            parts.append('<section id="reading"><h2>Reading</h2><ul class="bv-reading">')
            parts.extend(f"<li>{_esc(t)}</li>" for t in self.text)
            parts.append("</ul></section>")
        for sid, heading, tnames, fnames in self._layout():
            parts.append(f'<section id="section-{_esc(sid)}"><h2>{_esc(heading)}</h2>')
            for msg in self.warnings.get(sid, []):
                parts.append(
                    f'<div class="bv-warning" role="alert"><strong>Warning:</strong> {_esc(msg)}</div>'
                )
            for name in tnames:
                parts.append(self._table_html(name, self.tables[name]))
            for msg in self.notes.get(sid, []):
                parts.append(f'<p class="bv-note">{_esc(msg)}</p>')
            for name in fnames:
                png = pngs[name] if name in pngs else self._png(self.figures[name])
                data = base64.b64encode(png).decode("ascii")
                cap = _CAPTIONS.get(name, name)
                parts.append(
                    f'<figure id="figure-{_esc(name)}"><img src="data:image/png;base64,{data}" '
                    f'alt="{_esc(cap)}"><figcaption>{_esc(cap)}</figcaption></figure>'
                )
            parts.append("</section>")
        parts.append('<p class="meta">Made with bayeval.</p>')
        return "\n".join(parts)

    def to_html(self) -> str:
        """The report as one self-contained HTML page.

        Figures are embedded as base64 PNG, the CSS is inline, there is no script and
        no external resource. The output depends only on the report's content.

        Returns
        -------
        str

        Examples
        --------
        >>> from bayeval.report import Report
        >>> page = Report("A title").to_html()
        >>> page.startswith("<!DOCTYPE html>"), "<title>A title</title>" in page
        (True, True)
        """
        return self._page()

    def _page(self, pngs: Mapping[str, bytes] | None = None) -> str:
        """The page, reusing already rendered PNGs (save() renders each figure once)."""
        return (
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            '<link rel="icon" href="data:,">\n'
            f"<title>{_esc(self.title)}</title>\n<style>\n{_CSS}\n</style>\n</head>\n<body>\n"
            f'<main class="bayeval-report">\n{self._body_html(pngs)}\n</main>\n</body>\n</html>\n'
        )

    def _repr_html_(self) -> str:
        return f'<div class="bayeval-report"><style>{_CSS}</style>\n{self._body_html()}\n</div>'

    # --------------------------------------------------------- Markdown

    @staticmethod
    def _table_md(df: pd.DataFrame) -> str:
        def cell(v) -> str:
            return text(fmt(v))

        def text(t: str) -> str:
            return _md(t).replace("|", "\\|").replace("\n", " ")

        index_name = df.index.name if df.index.name is not None else ""
        header = [cell(index_name)] + [cell(c) for c in df.columns]
        align = ["---"] + [
            "---:" if pd.api.types.is_numeric_dtype(df[c]) else "---" for c in df.columns
        ]
        lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"]
        for idx, shown in zip(df.index, _cell_texts(df), strict=True):
            lines.append("| " + " | ".join([cell(idx)] + [text(t) for t in shown]) + " |")
        return "\n".join(lines)

    def to_markdown(self, figure_dir="figures") -> str:
        """The report as Markdown; figures are linked as ``<figure_dir>/<name>.png``.

        The PNG files are not written here (:meth:`save` writes them). In user text
        ``&``, ``<`` and ``>`` are HTML-escaped, so a Markdown renderer shows it
        literally and no raw HTML gets through; quotes are left as they are.

        Parameters
        ----------
        figure_dir : str or path-like
            Folder of the figures, as the links should name it (relative to the
            Markdown file).

        Returns
        -------
        str

        Examples
        --------
        >>> from bayeval.report import Report
        >>> Report("A <title>").to_markdown().splitlines()[0]
        '# A &lt;title&gt;'
        """
        fdir = Path(figure_dir).as_posix().rstrip("/")
        out = [f"# {_md(self.title)}", ""]
        for line in self.meta:
            out += [f"*{_md(line)}*", ""]
        if self.description:
            for para in _paragraphs(self.description):
                out += [_md(para), ""]
        n_warn = self._n_warnings()
        if n_warn:
            where = " and ".join(f"“{_md(self._heading(sid))}”" for sid, v in self.warnings.items() if v)
            out += [
                f"> **{n_warn} warning{'s' if n_warn > 1 else ''}**: read the warnings in {where} "
                f"below before relying on these numbers.{_md(self._verdict())}",
                "",
            ]
        if self.text:
            out += ["## Reading", ""]
            out += [f"- {_md(t)}" for t in self.text]
            out.append("")
        for sid, heading, tnames, fnames in self._layout():
            out += [f"## {_md(heading)}", ""]
            for msg in self.warnings.get(sid, []):
                out += [f"> **Warning:** {_md(msg)}", ""]
            for name in tnames:
                out += [self._table_md(self.tables[name]), ""]
            for msg in self.notes.get(sid, []):
                out += [f"*{_md(msg)}*", ""]
            for name in fnames:
                cap = _CAPTIONS.get(name, name)
                out += [f"![{_md(cap)}]({fdir}/{name}.png)", ""]
        return "\n".join(out).rstrip() + "\n"

    # -------------------------------------------------------------- save

    def save(self, out_dir) -> dict[str, Path]:
        """Write ``report.html``, ``report.md`` and ``figures/<name>.png`` into ``out_dir``.

        The folder is created if needed; existing files of the same names are
        overwritten.

        Parameters
        ----------
        out_dir : str or path-like

        Returns
        -------
        dict of str to pathlib.Path
            Keys are the paths relative to ``out_dir`` (``"report.html"``,
            ``"report.md"``, ``"figures/pr_curve.png"``...).

        Examples
        --------
        >>> import tempfile
        >>> from bayeval.report import Report
        >>> with tempfile.TemporaryDirectory() as d:
        ...     sorted(Report("x").save(d))
        ['report.html', 'report.md']
        """
        out = Path(out_dir)
        if out.exists() and not out.is_dir():
            raise ValueError(f"`out_dir` must be a folder, but {str(out)!r} is a file.")
        out.mkdir(parents=True, exist_ok=True)
        paths: dict[str, Path] = {}
        pngs: dict[str, bytes] = {}
        if self.figures:
            fig_dir = out / "figures"
            fig_dir.mkdir(exist_ok=True)
            for name, fig in self.figures.items():
                p = fig_dir / f"{_safe_filename(name)}.png"
                pngs[name] = self._png(fig)
                p.write_bytes(pngs[name])
                paths[f"figures/{p.name}"] = p
        md = out / "report.md"
        md.write_text(self.to_markdown("figures"), encoding="utf-8")
        page = out / "report.html"
        page.write_text(self._page(pngs), encoding="utf-8")
        return {"report.html": page, "report.md": md, **paths}

    def __repr__(self) -> str:
        return (
            f"Report({self.title!r}, tables={list(self.tables)}, figures={list(self.figures)}, "
            f"warnings={self._n_warnings()})"
        )


def _paragraphs(text: str) -> list[str]:
    return [p.strip() for p in text.replace("\r\n", "\n").split("\n\n") if p.strip()]


def _safe_filename(name: str) -> str:
    keep = "".join(c if c.isalnum() or c in "-_" else "_" for c in str(name))
    return keep or "figure"


def _check_title(title) -> str:
    return V.as_text(title, "title", fix="give the report a title, e.g. title='Tagger v2 on the May sample'.")


# ====================================================================== report()


def _as_posterior(obj) -> tuple[Posterior, object | None]:
    """The Posterior, and the session object when one was given."""
    if isinstance(obj, Posterior):
        return obj, None
    inner = getattr(obj, "posterior", None)
    if callable(inner) and not isinstance(inner, Posterior):
        inner = inner()
    if isinstance(inner, Posterior):
        return inner, obj
    raise TypeError(
        f"report() needs a bayeval Posterior (from a model's fit() or Posterior.from_probabilities), "
        f"or an object with a `.posterior` that is one (an active-testing session); got "
        f"{type(obj).__name__}."
    )


def _default_metrics(data, threshold: float | None) -> dict:
    pooled = {"category": "pooled"} if data.has_categories else {}
    m: dict = {
        "average precision": ("average_precision", dict(pooled)),
        "ROC AUC": ("roc_auc", dict(pooled)),
    }
    if data.has_categories:
        m["mean average precision over categories"] = ("average_precision", {"category": "mean"})
    ks = [k for k in _DEFAULT_KS if k <= data.n_items] or [data.n_items]
    for k in ks:
        m[f"precision@{k}"] = ("precision_at_k", {"k": k, **pooled})
    if data.predictions is not None:
        m["precision (predictions)"] = ("precision", dict(pooled))
        m["recall (predictions)"] = ("recall", dict(pooled))
        m["F1 (predictions)"] = ("f_score", dict(pooled))
    return m


def _threshold_metrics(data, threshold: float) -> dict:
    pooled = {"category": "pooled"} if data.has_categories else {}
    t = threshold_text(threshold, data.scores)  # written so that it flags the same items
    return {
        f"precision at t={t}": ("precision", {"threshold": threshold, **pooled}),
        f"recall at t={t}": ("recall", {"threshold": threshold, **pooled}),
        f"F1 at t={t}": ("f_score", {"threshold": threshold, **pooled}),
    }


def _flat(da, other) -> np.ndarray:
    return np.asarray(da.transpose(*other).values, dtype=np.float64).reshape(-1)


def _metric_table(post, items, hdi_prob, truth, client=None) -> pd.DataFrame:
    """Summary rows of every metric, with the vetted-only, naive and true values (a threshold
    that flags no item or every item is said in the table's notes, not warned)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ThresholdWarning)
        return _metric_rows(post, items, hdi_prob, truth, client)


def _metric_rows(post, items, hdi_prob, truth, client=None) -> pd.DataFrame:
    data = post.data
    rows, vo, vn, nv, tr, notes, widened, readings = [], [], [], [], [], [], [], {}
    on = {} if client is None else {"client": client}
    for label, metric, options in items:
        da = post.metric(metric, **on, **options)
        other = [d for d in da.dims if d not in _SAMPLE_DIMS]
        new = summary_rows(label, da, hdi_prob, _SAMPLE_DIMS)
        reported = post.reported_interval(metric, options, hdi_prob) if len(new) == 1 else None
        if reported is not None:  # the model reports another interval than the draws' HDI, and says why
            (r_lo, r_hi), sentence = reported
            new = [(*new[0][:3], r_lo, r_hi)]
            notes.append(sentence)
            widened.append(label)
            readings[label] = post.reported_reading(metric, options, hdi_prob)  # not a probability interval
        rows.extend(new)
        share = undefined_share(da, _SAMPLE_DIMS)
        if share > 0:  # summarized over the draws where it is defined: say how many are not
            notes.append(undefined_sentence(label, share, nothing_flagged=resolve_metric(metric)[2] == "precision"))
        n = len(new)
        if data.n_vetted:
            value = vetted_only(data, metric, **options)
            vo.extend(_flat(value, other))
            vn.extend(_flat(vetted_only_n(data, metric, **options).broadcast_like(value), other))
        else:
            vo.extend([np.nan] * n)
            vn.extend([0] * n)
        if data.noisy_labels is not None:
            nv.extend(_flat(naive(data, metric, **options), other))
        if truth is not None:
            tr.extend(_flat(point_metric(data, truth, metric, dict(options)), other))
    lo = f"{100 * hdi_prob:g}% HDI lower"
    hi = f"{100 * hdi_prob:g}% HDI upper"
    df = sd_as_zero(pd.DataFrame(rows, columns=["metric", "mean", "sd", lo, hi]).set_index("metric"))
    df["vetted_only"] = np.asarray(vo, dtype=np.float64)
    df["vetted_only_n"] = np.asarray(vn, dtype=np.int64)  # the vetted items it rests on
    if data.noisy_labels is not None:
        df["naive"] = np.asarray(nv, dtype=np.float64)
    if truth is not None:
        df["truth"] = np.asarray(tr, dtype=np.float64)
    notes += threshold_caveats(data.scores, [(label, options.get("threshold")) for label, _, options in items])
    df.attrs["reported"] = notes
    df.attrs["unwidened"] = unwidened_note(widened, [r for r in df.index if r not in widened])
    df.attrs["widened"], df.attrs["readings"] = widened, readings
    return df


def _diagnostics(post) -> tuple[dict | None, pd.DataFrame | None]:
    """(the fit's convergence dict, per-parameter table) or (None, None) without a sampler.

    The posterior's hooks :meth:`~bayeval.core.posterior.BasePosterior.check_convergence` (the
    dict of :func:`bayeval.core._diagnostics.check_convergence`, or the model's own check)
    and :meth:`~bayeval.core.posterior.BasePosterior.diagnostics_table`.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = post.diagnostics_table()
        d = post.check_convergence(warn=False)
    if d is None:
        return None, None
    return d, table


def _new_figure(width: float, height: float, ncols: int = 1):
    # A bare Figure (not pyplot): nothing is registered globally, nothing to close.
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    axes = fig.subplots(1, ncols)
    return fig, axes


def _ppc_axes(ax, ppc: dict) -> None:
    d_obs = np.asarray(ppc["ks_draws"])
    d_rep = np.asarray(ppc["ks_replicated"])
    ax.scatter(d_obs, d_rep, s=8, alpha=0.5, color="tab:purple")
    hi = float(max(d_obs.max(), d_rep.max())) * 1.05 if d_obs.size else 1.0
    ax.plot([0, hi], [0, hi], color="k", lw=1, ls=":")
    ax.set_xlim(0, hi)
    ax.set_ylim(0, hi)
    ax.set_xlabel("KS distance of the observed scores")
    ax.set_ylabel("KS distance of replicated scores")
    ax.set_title(f"posterior predictive check: {_p_text(ppc['p_value'], d_obs.size)}", fontsize=9)


def _provenance(data, source, store=None) -> str:
    record = provenance(data)
    v = record["versions"]
    line = (
        f"Made on {record['date']} with "
        + ", ".join(f"{DISPLAY[k]} {v[k]}" for k in PACKAGES)
        + f". Data SHA-256: {record['data_sha256']}"
    )
    if source is not None:
        import hashlib

        path = Path(source)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        line += f"; file {path.name} SHA-256: {digest}"
    if store is not None:  # the labels typed into a label store, used over the file's
        path, added, replaced = store
        line += (f"; vetted labels also read from the label store {Path(path).as_posix()} ({added} added to the "
                 f"file's, {replaced} replacing the file's label)")
    return line + "."


def _mc_se(p: float, n: int) -> float:
    """Monte Carlo standard error of a probability estimated from ``n`` draws."""
    if not n:
        return float("nan")
    q = min(max(p, 1 / n), 1 - 1 / n) if n > 1 else p
    return math.sqrt(q * (1 - q) / n)


def _p_text(p: float, n: int) -> str:
    """``p = 0.045 ± 0.015`` (Monte Carlo error), or ``p < 1/n`` when no replicate reached it."""
    if p == 0 and n:
        return f"p < {1 / n:.2g}"
    return f"p = {p:.3f} ± {_mc_se(p, n):.3f}" if n else f"p = {p:.3f}"


def _ppc_verdict(p: float, n: int, alpha: float = _PPC_ALPHA) -> str:
    """"misfit", "borderline" (within two Monte Carlo errors of ``alpha``) or "fine"."""
    se = _mc_se(p, n) if n else 0.0
    if p + 2 * se < alpha:
        return "misfit"
    if p - 2 * se < alpha:
        return "borderline"
    return "fine"


def _progress_figure(hist: pd.DataFrame):
    numeric = [
        c
        for c in hist.columns
        if pd.api.types.is_numeric_dtype(hist[c]) and not pd.api.types.is_bool_dtype(hist[c])
    ]
    xcol = next(
        (
            c
            for c in (
                "n_vetted",
                "vetted",
                "n_labels",
                "labels",
                "labels_spent",
                "step",
                "iteration",
                "round",
            )
            if c in numeric
        ),
        None,
    )
    ys = [c for c in numeric if c != xcol][:6]
    if not ys or len(hist) == 0:
        return None
    fig, ax = _new_figure(6, 3.6)
    x = hist[xcol].to_numpy() if xcol is not None else np.arange(len(hist))
    for c in ys:
        ax.plot(x, hist[c].to_numpy(dtype=float), marker="o", ms=3, lw=1.2, label=str(c))
    ax.set_xlabel(str(xcol) if xcol is not None else "step")
    ax.legend(fontsize=8)
    return fig


def report(
    posterior,
    *,
    title: str,
    metrics=None,
    constraints=None,
    hdi_prob: float = HDI_PROB,
    truth=None,
    description: str | None = None,
    thresholds=None,
    source=None,
    store=None,
    progress=None,
    comparison=None,
    comparison_metric="average_precision",
    rope_width: float | None = None,
    client=None,
    vetted_selection=None,
) -> Report:
    """A credible-interval model-card report of a posterior.

    The report holds: the data (items, vetted positives/negatives, per category);
    the metric table (posterior mean, sd and HDI at ``hdi_prob``, next to the
    vetted-only estimate, the naive estimate when the data has noisy labels, and the
    true value when ``truth`` is given); the precision-recall curve with its credible
    band; for a score-mixture posterior, the mixture fit and its posterior predictive
    check; with ``constraints``, the recommended threshold, the probability that each
    constraint (and both) holds there, and the metrics at that threshold; sampler
    diagnostics; and a short reading of these numbers in words, which says so when an
    interval is wide, the diagnostics are bad or the predictive check rejects the fit.

    The numbers are the metrics *of this evaluation set* (the unvetted items' labels
    are drawn from the posterior). The same posterior (same seed) gives the same
    report, byte for byte.

    Parameters
    ----------
    posterior : Posterior
        Any model's posterior (a :class:`~bayeval.models.SPEPosterior` adds the
        mixture-fit section), or an object with a ``.posterior`` that is a Posterior,
        such as an active-testing session; if that object has a ``history()`` method
        returning a DataFrame, a vetting-progress table and figure are added.
    title : str
    metrics : list or dict, optional
        As in :meth:`Posterior.summary`: names, ``(name, {options})`` pairs, or
        ``{label: name or (name, {options})}``. With categories in the data, an
        entry without a ``category`` option is computed over all items pooled (and,
        in a second table, per category). Default: average precision, ROC AUC,
        precision@K for K in 10, 50, 100, 500, 1000 (those not above the number of
        items), precision/recall/F1 of the data's predictions when it has them,
        and precision/recall/F1 at the recommended threshold when ``constraints``
        are given.
    constraints : dict, optional
        ``{"min_precision": p, "min_recall": r}`` (either or both), optionally with
        ``"prob"`` and ``"min_flagged"``, passed to :func:`bayeval.recalibrate`.
    hdi_prob : float in (0, 1), default 0.9
    truth : array_like of shape (n_items,), optional
        All true labels (1/0), when known (bundled examples, simulations).
    description : str, optional
        Free text under the title.
    thresholds : 1-D array_like, optional
        Candidate thresholds for ``constraints`` (default as in :func:`recalibrate`).
    source : str or path-like, optional
        The file the data was read from; its name and SHA-256 are recorded too.
    store : (path, int, int), optional
        The label store whose labels were used over ``source``'s, with how many labels
        it added to the file's and how many of the file's it replaced (``bayeval report
        CARD`` gives the card's store): recorded next to the file.
    progress : callable, optional
        Called with a short message (e.g. ``"report: posterior predictive check..."``)
        as each step starts, so a long report is not silent; ``print`` works. Default:
        silent.
    client : distributed.Client, optional
        Compute the metric tables' passes over the label draws on this Dask client
        (:meth:`bayeval.Posterior.metric` with ``client=``): the same numbers, the same
        report. None (the default): in this process.
    comparison : Comparison, optional
        A :func:`bayeval.compare` result: adds the section *Which classifier is better*
        (the ranking with P(best), every pair's gap with its HDI, P(better) and, with
        ``rope_width``, P(in the ROPE), the gaps' figure and a sentence on the top pair).
        Giving the comparison as ``posterior`` does the same, with its joint posterior
        (whose metrics are those of the first classifier) as the report's posterior.
    comparison_metric : str or (str, dict)
        The metric the comparison section compares, with its options (``("precision_at_k",
        {"k": 10})``). With categories in the data and no ``category`` option, every item as one
        pool (``category="pooled"``), as in the metrics table; give ``"mean"`` for the mean
        over categories.
    rope_width : float, optional
        Half-width of the region of practical equivalence of the gaps.
    vetted_selection : dict, optional
        How the vetted items were chosen, ``{strategy: number of vetted items}``:
        ``"random"`` for items drawn at random, another name (``"design"``,
        ``"expected_change"``...) for items chosen on purpose, None for items whose choice
        is not recorded; the counts add up to the vetted items. The reading says from it
        how far the vetted-only numbers can be read: with every vetted item random, as
        estimates of this pool's metrics uncertain by up to about 1/√n (n: the vetted items
        each rests on, column ``vetted_only_n``), except precision and recall at k, the
        vetted items' own top k, which stands for the pool's top k × N/n, not its top k
        (no estimate of the pool's value at k); with some chosen on purpose, as the
        metrics of the vetted items only; otherwise, each way, conditionally. Default:
        for an active-testing session, what its label store's batches record (each
        vetted item under the strategy of the first batch that proposed it), else not
        recorded.
        ``bayeval report CARD`` gives :meth:`bayeval.cards.Card.vetted_selection`: what the
        card's label store records, the scores file's own labels counted as drawn at random
        where the card says so (``[data] label_strategy = "random"``), else as not recorded.

    Every report records how to reproduce it, under the title: the versions of
    bayeval, PyMC, PyTensor, NumPy and ArviZ, the date it was made, and a SHA-256 of
    the evaluation data (scores, labels, ids and the other columns the model saw).

    Returns
    -------
    Report

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import EvalData, Posterior
    >>> from bayeval.report import report
    >>> s = np.linspace(0, 1, 60)
    >>> y = np.full(60, np.nan); y[[5, 50, 55]] = [0, 1, 1]
    >>> post = Posterior.from_probabilities(EvalData(s, y), s, draws=200, random_seed=0)
    >>> r = report(post, title="Toy classifier", constraints={"min_precision": 0.8})
    >>> sorted(r.tables)
    ['at_threshold', 'constraints', 'data', 'metrics']
    >>> r.tables["metrics"].columns.tolist()
    ['mean', 'sd', '90% HDI lower', '90% HDI upper', 'vetted_only', 'vetted_only_n']
    """
    if comparison is None and callable(getattr(posterior, "prob_best", None)):
        comparison, posterior = posterior, posterior.posterior
    post, session = _as_posterior(posterior)
    if progress is not None and not callable(progress):
        raise TypeError(f"`progress` must be a function taking one message (e.g. print), got {progress!r}.")
    if client is not None:
        import inspect

        from .core.distributed import check_client

        client = check_client(client)
        if "client" not in inspect.signature(post.metric).parameters:
            raise TypeError(f"A {type(post).__name__} computes its metrics in this process; leave `client` out.")
    title = _check_title(title)
    description = V.as_optional_text(description, "description")
    hdi_prob = V.as_probability(hdi_prob, "hdi_prob", open_interval=True)
    cons = V.as_constraints(constraints)
    if thresholds is not None and cons is None:
        raise ValueError(
            "`thresholds` only applies with `constraints`; pass constraints= too, or drop thresholds."
        )
    truth_arr = None if truth is None else V.as_full_labels(truth, post.data.n_items, "truth")
    user_items = None if metrics is None else metric_items(metrics, call="report(post, title=..., metrics=")
    if user_items is not None and not user_items:
        raise ValueError(
            "`metrics` is empty; give at least one metric, or leave it out for the default set."
        )

    d = _Draft(post, session, hdi_prob, truth_arr, progress)
    d.client = client
    d.selection = vetted_selection_of(vetted_selection, session, post.data)
    _data_section(d)
    if cons is not None:
        d.step("choosing the threshold under the constraints...")
        d.rec = recalibrate(post, thresholds=thresholds, **cons)
        d.cons = {k: v for k, v in cons.items() if k in ("min_precision", "min_recall")}
    _metrics_section(d, user_items)
    _pr_curve_figure(d)
    sections = post.report_sections()
    for sid, render in _MODEL_SECTIONS.items():  # in the page's order
        if sid in sections:
            render(d)
    if d.rec is not None:
        _constraints_section(d)
    if comparison is not None:
        _comparison_section(d, comparison, comparison_metric, rope_width)
    if session is not None:
        _vetting_section(d)
    _diagnostics_section(d)
    if post.random_seed is None:
        d.text.append(
            "The label draws were not seeded (random_seed=None): re-running gives slightly different numbers."
        )
    # a failed sampler makes every other number provisional: that is said first
    first = [c for c in d.caveats if c.startswith(_BAD_SAMPLER)]
    d.text[d.n_head:d.n_head] = first + [c for c in d.caveats if c not in first]
    return Report(
        title,
        tables=d.tables,
        figures=d.figures,
        text=d.text,
        description=description,
        warnings=d.warn,
        notes=d.notes,
        meta=_meta(d, source, store),
    )


# ------------------------------------------------------------- section renderers


_BAD_SAMPLER = "The sampler diagnostics are bad: "


class _Draft:
    """What the section renderers of :func:`report` read and fill in."""

    def __init__(self, post, session, hdi_prob: float, truth, progress):
        import time

        self.post, self.session, self.data = post, session, post.data
        self.hdi_prob, self.truth = hdi_prob, truth
        self.pct = f"{100 * hdi_prob:g}%"
        self.N, self.n = self.data.n_items, self.data.n_vetted
        self.rec: Recalibration | None = None
        self.cons: dict | None = None
        self.tables: dict[str, pd.DataFrame] = {}
        self.figures: dict = {}
        self.text: list[str] = []
        self.warn: dict[str, list[str]] = {}
        self.notes: dict[str, list[str]] = {}
        self.caveats: list[str] = []  # bad news goes right after the data sentence
        self.n_head = 0
        self._progress = progress
        self._t_start = time.perf_counter()
        self.client = None  # a Dask client for the metric tables' passes
        self.selection: dict | None = None  # how the vetted items were chosen: {strategy or None: count}

    def step(self, message: str) -> None:
        if self._progress is not None:
            import time

            self._progress(f"report: {message} ({time.perf_counter() - self._t_start:.0f} s so far)")

    def warning(self, section: str, message: str, *, caveat: bool = True) -> None:
        """A red box in ``section``; with ``caveat``, also said at the top of the reading."""
        self.warn.setdefault(section, []).append(message)
        if caveat:
            self.caveats.append(message)


def _data_section(d: _Draft) -> None:
    data, N, n = d.data, d.N, d.n
    d.tables["data"] = data.counts()
    sent = (
        f"The evaluation set has {N} items; {n} are vetted ({data.n_vetted_positive} positive, "
        f"{data.n_vetted_negative} negative)"
    )
    if data.has_categories:
        sent += f", in {data.category_names.size} categories"
    if data.noisy_labels is not None:
        sent += f"; {int(data.noisy_labels.sum())} items carry a noisy positive label"
    d.text.append(sent + ".")  # nothing vetted: the metrics section's caveat box says more, right after this
    if n == N:
        d.text.append("Every item is vetted: the metrics are the exact values of this pool, with no uncertainty.")
    d.n_head = len(d.text)


def _metric_items(d: _Draft, user_items) -> list:
    data = d.data
    if user_items is None:
        items = metric_items(_default_metrics(data, None))
        if d.rec is not None:
            items += metric_items(_threshold_metrics(data, d.rec.threshold))
        return items
    return [
        (lab, m, {**opts, "category": "pooled"} if data.has_categories and "category" not in opts else opts)
        for lab, m, opts in user_items
    ]


def _metrics_section(d: _Draft, user_items) -> None:
    post, data = d.post, d.data
    items = _metric_items(d, user_items)
    d.step(f"metric table ({len(items)} metric(s))...")
    table = _metric_table(post, items, d.hdi_prob, d.truth, d.client)
    d.tables["metrics"] = table
    d.caveats.extend(table.attrs.get("reported", []))  # an interval other than the draws' HDI, and why
    if data.has_categories:
        if user_items is None:
            by_cat = metric_items({"average precision": "average_precision", "ROC AUC": "roc_auc"})
        else:
            by_cat = [(lab, m, opts) for lab, m, opts in user_items if "category" not in opts]
        if by_cat:
            by_cat = [(lab, m, {**opts, "category": "each"}) for lab, m, opts in by_cat]
            d.tables["metrics_by_category"] = _metric_table(post, by_cat, d.hdi_prob, d.truth, d.client)
    d.notes.setdefault("metrics", []).extend(_metric_notes(d, items))
    if table.attrs["unwidened"]:  # beside the table: rows the model did not widen as it did another
        d.notes["metrics"].insert(1, table.attrs["unwidened"])
    for caveat in data.caveats(post):  # what the labels and scores cannot tell the model, beside its numbers
        d.warning("metrics", "Read these intervals with care: " + caveat)
    read_metrics(d, table, items)


def _metric_notes(d: _Draft, items) -> list[str]:
    data, N, n = d.data, d.N, d.n
    at_k = any(at_rank_k(resolve_metric(m)[2]) for _, m, _ in items)  # rows cut at a rank k
    out = [
        f"mean, sd and the {d.pct} highest-density interval are over {d.post.n_chains * d.post.n_draws} "
        f"posterior draws of the labels of these {N} items." + widened_draws_note(d.tables["metrics"].attrs)
    ]
    if n:
        out.append(vetted_only_note(d.selection, n, at_k=at_k, pool=N))
    else:
        out.append("vetted_only: undefined, no item is vetted.")
    if data.noisy_labels is not None:
        out.append("naive: the metric with noisy labels standing in for the unvetted ones.")
    else:
        out.append("naive: not shown, the data has no noisy labels to stand in for the unvetted ones.")
    if d.truth is not None:
        out.append("truth: the metric on every true label (known only because this is a study or example).")
    if data.has_categories:
        out.append("With categories, the metric table pools all items; the second table is per category.")
    return out


def _pr_curve_figure(d: _Draft) -> None:
    from .plots import pr_curve

    d.step("precision-recall curve...")
    fig, ax = _new_figure(6, 4)
    pr_curve(d.post, ax=ax, hdi_prob=d.hdi_prob, truth=d.truth)
    pooled = "; all categories pooled" if d.post.data.has_categories else ""
    ax.set_title(f"precision-recall curve ({d.N} items, {d.n} vetted{pooled})", fontsize=9)
    d.figures["pr_curve"] = fig


def _calibration_section(d: _Draft) -> None:
    """The calibration curve, and the comparison of the candidate curves of a stack."""
    from .plots import calibration_curve

    post, n = d.post, d.n
    d.step("calibration curve...")
    fig, ax = _new_figure(6, 4)
    try:
        calibration_curve(post, ax=ax, hdi_prob=d.hdi_prob, truth=d.truth)
        shared = "; the shared curve, labels of all categories" if post.data.has_categories else ""
        ax.set_title(f"calibration curve ({n} vetted labels{shared})", fontsize=9)
        d.figures["calibration_curve"] = fig
    except NotImplementedError:  # a stack with a candidate that has no curve (a score mixture)
        import matplotlib.pyplot as plt

        plt.close(fig)
    comp = getattr(post, "comparison", None)  # a stack's candidates, weighted
    if not isinstance(comp, pd.DataFrame):
        return
    if n == 0:  # no label to weigh the candidates: equal weights, no LOO score; a table of them would read as learned
        names = [c for c in comp.index if comp.loc[c, "weight"] > 0]
        listed = _and(names)
        d.notes.setdefault("calibration", []).append(
            f"No item is vetted, so no label weighs the candidate curves: the stack draws "
            + (f"equally from {listed}, each resting on its prior." if len(names) > 1
               else f"from {listed}, resting on its prior."))
        return
    d.tables["calibration"] = comp.rename(columns={
        "elpd_loo": "LOO log score", "se": "its se", "pareto_k_max": "worst Pareto k",
        "z": "calibration z", "flagged": "contradicted by the labels"})
    if n == d.N:  # no unvetted label to draw from the curves
        return
    flagged = [c for c in comp.index if comp.loc[c, "flagged"] and comp.loc[c, "weight"] > 0.1]
    if flagged:
        d.warning(
            "calibration",
            f"The vetted labels contradict {', '.join(flagged)} (more or fewer positives than its "
            "leave-one-out probabilities predict, |z| > 2.5), yet it carries weight: vet more items "
            "at random, or add other candidates (bayeval.fit(data, candidates=...)).",
        )
    else:
        best = comp.index[0]
        d.text.append(
            f"The labels of the unvetted items are drawn from calibration curves learned from the "
            f"{n} vetted labels; {best} carries the most weight ({comp.loc[best, 'weight']:.2f}), and "
            "the vetted labels contradict none of the weighted curves."
        )
    high = _high_pareto_k(d.tables["calibration"])
    if high:
        listed = "; ".join(f"{name} {k:.2f} (weight {fmt(w)})" for name, k, w in high)
        d.text.append(
            f"The leave-one-out scores that weigh the candidates are approximate: the worst Pareto k is "
            f"above {_PARETO_K_OK} for {listed}. One vetted label is so influential that leaving it out "
            "changes the curve a lot, so the weights between the candidates are uncertain; vetting more "
            "items, at random, makes them reliable."
        )


def _fit_section(d: _Draft) -> None:
    """The score-mixture fit over the scores, and its posterior predictive check."""
    from .plots import mixture_fit

    post = d.post
    d.step("posterior predictive check and mixture plot...")
    ppc = post.ppc()
    n_ppc = int(np.size(ppc["ks_draws"]))
    fig, (ax1, ax2) = _new_figure(11, 4, ncols=2)
    mixture_fit(post, ax=ax1, hdi_prob=d.hdi_prob, scale="score")  # the classifier's own scores
    _ppc_axes(ax2, ppc)
    d.figures["mixture_fit"] = fig
    d.tables["fit"] = pd.DataFrame(
        {
            "value": [
                str(post.model),
                str(post.transform.name),
                bool(post.binned),
                float(ppc["ks_observed"]),
                float(ppc["p_value"]),
                _mc_se(float(ppc["p_value"]), n_ppc),
                n_ppc,
            ]
        },
        index=pd.Index(
            [
                "families",
                "score map",
                "binned likelihood",
                "Kolmogorov distance (observed, mean)",
                "PPC p-value",
                "PPC p-value, Monte Carlo error (±)",
                "PPC draws",
            ],
            name="score mixture",
        ),
    )
    p_txt = _p_text(ppc["p_value"], n_ppc)
    verdict = _ppc_verdict(float(ppc["p_value"]), n_ppc)
    if verdict == "misfit":
        d.warning(
            "fit",
            f"The posterior predictive check rejects the score-mixture fit ({p_txt}, clearly below "
            f"{_PPC_ALPHA} given its Monte Carlo error): the chosen families do not reproduce the "
            "score distribution, so the intervals and the recommended threshold may be biased. "
            "Compare other families (ScoreMixture.auto) before relying on them.",
        )
    elif verdict == "borderline":
        d.warning(
            "fit",
            f"The posterior predictive check is borderline ({p_txt}: within two Monte Carlo "
            f"errors of the {_PPC_ALPHA} cut-off, so another seed or dependency version may land "
            "on either side). The families may not reproduce the score distribution well; "
            "compare other families (ScoreMixture.auto) before relying on the intervals and "
            "the recommended threshold.",
        )
    else:
        d.text.append(
            f"The posterior predictive check finds no evidence that the score mixture misfits "
            f"({p_txt})."
        )


def _high_pareto_k(table: pd.DataFrame | None) -> list[tuple[str, float, float]]:
    """``(candidate, worst Pareto k, weight)`` for every row of the calibration table with k > 0.7."""
    if table is None or "worst Pareto k" not in table.columns:
        return []
    return [
        (str(name), float(row["worst Pareto k"]), float(row["weight"]))
        for name, row in table.iterrows()
        if np.isfinite(row["worst Pareto k"]) and row["worst Pareto k"] > _PARETO_K_OK
    ]


#: The model-specific sections, by the id a posterior's ``report_sections()`` names,
#: in the order of the page.
_MODEL_SECTIONS = {"calibration": _calibration_section, "fit": _fit_section}


def _constraints_section(d: _Draft) -> None:
    """The recommended threshold, how probably each constraint holds there, the metrics at it.

    The sentences in the reading are computed from the ``constraints`` table alone
    (:func:`_constraint_sentences`, with the threshold as the table shows it), so they
    cannot say something the table does not.
    """
    from .plots import threshold_probability

    rec, cons, post = d.rec, d.cons, d.post
    t = rec.threshold
    cur = rec.curve.sel(threshold=t)
    names, probs = [], []
    if "min_precision" in cons:
        p = cons["min_precision"]
        names.append(f"precision >= {p:g}")
        probs.append(float((cur.sel(curve="precision") >= p - 1e-12).mean()))
    if "min_recall" in cons:
        r = cons["min_recall"]
        names.append(f"recall >= {r:g}")
        probs.append(float((cur.sel(curve="recall") >= r - 1e-12).mean()))
    if len(names) == 2:
        names.append("both")
        probs.append(rec.probability_at_threshold)
    k = len(names)
    d.tables["constraints"] = pd.DataFrame(
        {
            "threshold": [t] * k,
            "probability": probs,
            "required probability": [np.nan if rec.prob is None else rec.prob] * k,
            "flagged items": [rec.flagged] * k,
            "fewest allowed": [rec.min_flagged] * k,
            "items": [d.N] * k,
        },
        index=pd.Index(names, name="constraint"),
    )
    # the float stays in the table; it is shown (and read out) as the decimal that flags the same items
    d.tables["constraints"].attrs["cell_text"] = {"threshold": [rec.threshold_text] * k}
    at = metric_items(_threshold_metrics(d.data, t))
    d.tables["at_threshold"] = _metric_table(post, at, d.hdi_prob, d.truth, d.client)
    if rec.prob is None and rec.no_draw_meets:
        rule = ("no posterior draw meets the constraint at any threshold; this is the one closest to "
                "meeting it (the highest posterior mean of its worse shortfall)")
    elif rec.prob is None:
        rule = ("the threshold where the constraint most probably holds (the lowest such threshold "
                "among ties)")
    elif rec.met:
        goal = "recall" if rec.min_precision is not None else "precision"
        rule = (f"among the thresholds where the constraint holds with probability at least "
                f"{rec.prob:g}, the one with the highest expected {goal}")
    else:
        rule = (f"no threshold meets the constraint with probability {rec.prob:g}; this is the one "
                "where it most probably holds")
    d.notes.setdefault("constraints", []).append(
        f"Rule: predict positive where score >= t. Recommended t = {rec.threshold_text}: {rule}, among the thresholds "
        f"that flag at least {rec.min_flagged} items (fewer is too few to deploy; to allow any: min_flagged = 0 "
        'under [constraints] in the model card, or constraints={"min_flagged": 0} of bayeval.report). The second '
        "table is the metrics at t."
    )
    n_total = post.n_chains * post.n_draws
    sentences, problem = _constraint_sentences(d.tables["constraints"], n_total, all_vetted=d.n == d.N)
    d.text.extend(x for x in sentences if x != problem)
    if problem is not None:  # a red box, and read first (right after the data sentence)
        d.warning("constraints", problem)
    fig, ax = _new_figure(6, 3.6)
    threshold_probability(rec, ax=ax)
    d.figures["threshold_probability"] = fig


def _constraint_sentences(table: pd.DataFrame, n_draws: int, *, all_vetted: bool = False
                          ) -> tuple[list[str], str | None]:
    """The reading's sentences about the threshold, from the ``constraints`` table alone.

    Returns the sentences and, when the constraint is not met (with ``prob``: below the
    required probability; without: below one half), the message for a red box (also
    one of the sentences). ``all_vetted``: every item is vetted, so the precision and recall
    at each threshold are exact and no label is left to vet: the red box says the items
    cannot meet the constraint and what could (a looser constraint, another classifier).
    """
    row = table.iloc[-1]  # "both" when there are two constraints, else the only one
    both = float(row["probability"])
    shown = table.attrs.get("cell_text", {}).get("threshold")  # the threshold as a person applies it
    t = shown[-1] if shown is not None else threshold_text(float(row["threshold"]), None)
    required = float(row["required probability"])
    flagged, fewest, n_items = int(row["flagged items"]), int(row["fewest allowed"]), int(row["items"])
    # each probability printed on its own side of the required one (0.989 is not "0.99" of a required 0.99)
    need = None if math.isnan(required) else required
    parts = [f"{name.replace('>=', '≥')} with probability {probability_text(p, need)}"
             for name, p in table["probability"].items() if name != "both"]
    holds = " and ".join(parts) + (f", and both with probability {probability_text(both, need)}"
                                   if "both" in table.index else "")
    flags = f"it flags {flagged} of {n_items} items ({100 * flagged / n_items:.1f}%)"
    mc = (f"Monte Carlo error ± {_mc_se(both, n_draws):.2f} from {n_draws} draws; "
          "thresholds whose probabilities differ by less than that are equally good")
    floor = f" among the thresholds that flag at least {fewest} items" if fewest > 0 else ""
    problem = None
    if math.isnan(required) and both == 0.0:  # the most probable threshold holds in no draw: none does
        s = None
        that = f" that flags at least {fewest} items" if fewest > 0 else ""
        problem = (f"No posterior draw meets the constraint at any candidate threshold{that} (0 of {n_draws} "
                   f"draws: its probability is below about {1 / max(n_draws, 1):.2g}, within Monte Carlo error). "
                   "The closest, "
                   f"t = {t}, is shown; {flags}. Do not deploy it as meeting the constraint: relax the "
                   "constraint or vet more items.")
    elif math.isnan(required):
        s = f"Threshold {t} meets {holds}, the most probable{floor} ({mc}); {flags}."
        if both < 0.5:
            problem = (f"No candidate threshold meets the constraint with probability above one half (the "
                       f"best, t = {t}, reaches {probability_text(both, 0.5)}): relax the constraint or vet more items.")
    elif both >= required - 1e-12:
        s = f"Threshold {t} meets {holds}, at least the required {required:g} ({mc}); {flags}."
    else:
        s = None
        problem = (f"No threshold meets the constraint with probability {required:g}"
                   + (f" while flagging at least {fewest} items" if fewest > 0 else "")
                   + f". The best available, t = {t}, holds {holds}; {flags}. Do not deploy it as "
                   "meeting the constraint: relax the constraint or vet more items.")
    if problem is not None and all_vetted:  # nothing left to vet: the items' own, exact, verdict
        that = f" that flags at least {fewest} items" if fewest > 0 else ""
        fewer = f", or fewer than {fewest} flagged items" if fewest > 0 else ""
        problem = (f"No candidate threshold{that} meets the constraint on these items. The closest, t = {t}, "
                   f"is shown; {flags}. Every item is vetted, so more labels cannot change this. Relax the "
                   f"constraint (a lower minimum precision or recall{fewer}) or score the items with another "
                   "classifier.")
    out = [s] if s is not None else []
    if problem is not None:
        out.append(problem)
    return out, problem


def _comparison_section(d: _Draft, cmp, metric, width) -> None:
    """The ranking, every pair's gap and the gaps' figure of a comparison; the top pair in words."""
    if not callable(getattr(cmp, "prob_best", None)) or not callable(getattr(cmp, "summary", None)):
        raise TypeError(f"`comparison` must be a bayeval.compare result (a Comparison), got {type(cmp).__name__}.")
    name, opts = (metric, {}) if isinstance(metric, str) else (metric[0], dict(metric[1]))
    if width is not None:
        width = V.as_real_in(width, "rope_width", lo=0.0, hi=np.inf, lo_open=True, hi_open=True)
    data = getattr(cmp, "data", None)
    if data is not None and data.has_categories and "category" not in opts:
        opts["category"] = "pooled"  # every item as one pool, as the first metrics table
    said = {"mean": f"mean {name} over categories", "pooled": f"{name} over all items pooled"}.get(
        opts.get("category"), name)
    d.step("comparing the classifiers...")
    with warnings.catch_warnings():  # a threshold that flags no item or every item: said in a box (read_comparison)
        warnings.simplefilter("ignore", ThresholdWarning)
        ranking = cmp.ranking(name, hdi_prob=d.hdi_prob, **opts)
        gaps = cmp.summary(name, hdi_prob=d.hdi_prob, width=width, **opts)
        d.figures["comparison"] = cmp.plot(name, **opts)
    d.tables["comparison_ranking"] = ranking
    d.tables["comparison_gaps"] = gaps
    read_comparison(d, cmp, gaps, said, width)
    d.notes.setdefault("comparison", []).append(
        f"The other sections describe the first classifier ({cmp.names[0]}) on the shared label draws.")


def _vetting_section(d: _Draft) -> None:
    """The session's vetting history, when it keeps one (``session.history()``)."""
    history = getattr(d.session, "history", None)
    if not callable(history):
        return
    hist = history()
    if isinstance(hist, pd.DataFrame):
        d.tables["vetting_progress"] = hist
        fig = _progress_figure(hist)
        if fig is not None:
            d.figures["vetting_progress"] = fig


def _diagnostics_section(d: _Draft) -> None:
    post = d.post
    d.step("sampler diagnostics...")
    diag, per_param = _diagnostics(post)
    if diag is None:
        d.notes.setdefault("diagnostics", []).append(
            "No sampler was run for this posterior (e.g. it comes from given probabilities): there are "
            "no convergence diagnostics to show."
        )
        return
    target_ess = 100 * post.n_chains
    if diag.get("sampler") == "exact":
        d.text.append(
            f"The posterior was drawn exactly ({diag['ess']:.0f} independent draws, no MCMC): there is no "
            "convergence to check."
        )
        return
    if diag.get("sampler") == "importance":
        d.tables["diagnostics"] = pd.DataFrame(
            {"value": [diag["pareto_k"], diag["ess"]], "target": ["< 0.7", f">= {target_ess}"]},
            index=pd.Index(["importance sampling: Pareto k", "importance sampling: ESS of the kept draws"],
                           name="diagnostic"),
        )
    else:
        d.tables["diagnostics"] = pd.DataFrame(
            {
                "value": [diag["max_rhat"], diag["min_ess_bulk"], int(diag["divergences"])],
                "target": [
                    "<= 1.01" if post.n_chains > 1 else "(needs 2+ chains)",
                    f">= {target_ess}",
                    "0",
                ],
            },
            index=pd.Index(["max r_hat", "min bulk ESS", "divergences"], name="diagnostic"),
        )
    if per_param is not None and len(per_param):
        d.tables["diagnostics_by_parameter"] = per_param.rename_axis("parameter")
        if "stack_draws" in per_param.columns:  # a stack takes a share of each candidate's draws
            d.tables["diagnostics_by_parameter"] = d.tables["diagnostics_by_parameter"].rename(columns=_STACK_COLUMNS)
            d.notes.setdefault("diagnostics", []).append(
                "Per parameter, a candidate's bulk and tail ESS are those of all its draws (what the check "
                "judges); the stack takes only its weight's share of them, at random: how many, and their bulk "
                "ESS, are the last two columns.")
    unchecked = diag.get("unchecked") or {}
    if unchecked:  # a stack's candidates with too little weight to count: why their rows do not warn
        from .models.stacking import CHECKED_WEIGHT

        one = len(unchecked) == 1
        d.notes.setdefault("diagnostics", []).append(
            f"{_and([f'{c} (weight {fmt(w)})' for c, w in unchecked.items()])} {'is' if one else 'are'} not "
            f"judged by the check: {'it gives' if one else 'they give'} only "
            f"{_and([f'{100 * w:.2g}%' for w in unchecked.values()])} of the stack's draws (the check judges "
            f"candidates above {100 * CHECKED_WEIGHT:.0f}%), too few to move a number, so "
            f"{'its' if one else 'their'} diagnostics in the table above do not warn.")
    # the candidates' leave-one-out diagnostics (the calibration table) are diagnostics too:
    # the sentence never calls everything fine while that table shows a Pareto k above 0.7
    high = _high_pareto_k(d.tables.get("calibration"))
    loo = ""
    if high:
        worst = max(high, key=lambda h: (h[2], h[1]))  # the candidate with the most weight among them
        loo = (f"; the candidates' leave-one-out diagnostics do not: worst Pareto k {worst[1]:.2f} "
               f"(above {_PARETO_K_OK}) for {worst[0]} (weight {fmt(worst[2])}), see the calibration table")
    # the labels' own problems (no vetted positives, a contradicted curve) are said by the data
    # caveats and the calibration section with what to vet: a longer run does not fix them
    sampler_msgs = sampler_messages(diag)
    if not diag["ok"]:  # the box keeps every finding of the check, in its words
        d.warn.setdefault("diagnostics", []).extend(
            diag.get("messages") or ["the sampler diagnostics are outside their targets."])
        if not diag.get("messages"):
            sampler_msgs = ["the sampler diagnostics are outside their targets."]
    if not sampler_msgs:
        labels = ("; the check's other findings are about the vetted labels, not the sampler (said above)"
                  if not diag["ok"] else "")
        if diag.get("sampler") == "importance":
            d.text.append(
                f"Sampler diagnostics look fine (importance sampling from the posterior mode: Pareto k "
                f"{fmt(diag['pareto_k'])}, effective sample size {diag['ess']:.0f}){loo}{labels}."
            )
        else:
            d.text.append(
                f"Sampler diagnostics look fine (max r_hat {fmt(diag['max_rhat'])}, min bulk ESS "
                f"{diag['min_ess_bulk']:.0f}, {diag['divergences']} divergences){loo}{labels}."
            )
    else:
        d.caveats.append(
            _BAD_SAMPLER
            + " ".join(sampler_msgs)
            + " Treat every number in this report as provisional until a longer or "
            "better-tuned run fixes them."
        )


def _and(items: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _meta(d: _Draft, source, store=None) -> list[str]:
    post, pct = d.post, d.pct
    sampled_by = (
        f" sampled by {post.sampler} (the same inputs and seed give the same numbers with the same sampler;"
        " PyMC's and nutpie's NUTS give different draws)"
        if post.sampler
        else ""
    )
    return [
        f"Model: {post.model}. {post.n_chains} chain(s) x {post.n_draws} draws{sampled_by}; label draws "
        f"seeded with {post.random_seed}. Each interval is a {pct} highest-density interval: the "
        f"narrowest range that holds the metric with {pct} probability.",
        _provenance(d.data, source, store),
    ]
