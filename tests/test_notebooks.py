"""Every notebook under notebooks/ runs top to bottom (small data, under a minute each).

The notebooks run one after another in one kernel, as a person who opens them in turn in one
Jupyter session would: starting a kernel costs a new Python process its imports and PyTensor's
compile-cache scan (10-15 CPU seconds each on a 2-core machine), and the models a notebook shares
with an earlier one are compiled once. Before each notebook the kernel's namespace is cleared
(``%reset -f``), figures are closed and matplotlib's settings are restored, so a notebook that
uses a name it does not define itself still fails here; the working folder is the notebook's own,
as in Jupyter.

Some notebooks also get a check run in their kernel after their last cell (:data:`AFTER`), and
the numbers their prose quotes are compared with what their cells show (:data:`PROSE_CHECKED`).
"""

import ast
import importlib.metadata
import json
import re
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

#: run before each notebook's first cell, in the shared kernel
_FRESH = """\
%reset -f
import os as _os, matplotlib as _mpl, matplotlib.pyplot as _plt
_plt.close("all"); _mpl.rcdefaults(); _os.chdir({folder!r})
del _os, _mpl, _plt
"""


#: run in a notebook's kernel after its last cell: an error there fails the test with its message
AFTER = {
    # the figure draws the bounds and the independence value of the annotators' accuracy the
    # notebook computes and prints (a_gt), not of a rounded literal
    "true_accuracy": """\
import matplotlib.pyplot as _plt
from bayeval.annotators.bounds import true_accuracy_bounds as _bounds
_b = _bounds(measured, a_gt)
_axes = [ax for n in _plt.get_fignums() for ax in _plt.figure(n).axes
         if ax.get_legend() and any(t.get_text().startswith("independent") for t in ax.get_legend().get_texts())]
assert len(_axes) == 2, f"expected the two panels of plot_true_accuracy, found {len(_axes)}"
for _ax in _axes:
    _labels = [t.get_text() for t in _ax.get_legend().get_texts()]
    _span = next(p for p in _ax.patches if p.get_label() == "bounds")
    _x = _ax.transData.inverted().transform(_span.get_transform().transform(_span.get_path().vertices))[:, 0]
    assert f"independent {_b.independent:.3g}" in _labels and abs(_x.min() - _b.lower) < 1e-9 and abs(_x.max() - _b.upper) < 1e-9, (
        f"the figure shows {_labels} and bounds {_x.min():.3f}-{_x.max():.3f}; the annotators' accuracy "
        f"printed above ({a_gt:.3f}) gives independent {_b.independent:.3g} and bounds {_b.lower:.3f}-"
        f"{_b.upper:.3f}: pass annotator_accuracy=a_gt to plot_true_accuracy")
# each panel draws the interval that summary(["accuracy"]) reports (without gold items: joined
# with the identified set; with them: guarded), which the prose quotes as the reported one
for _ax, _p in zip(_axes, (post_none, post_gold), strict=True):
    _row = _p.summary(["accuracy"]).loc["accuracy"]
    _bars = [c.get_segments()[0][:, 0] for c in _ax.collections if c.get_label().startswith("reported")]
    assert len(_bars) == 1 and abs(_bars[0][0] - _row["hdi_5%"]) < 1e-9 and abs(_bars[0][1] - _row["hdi_95%"]) < 1e-9, (
        f"{_ax.get_title()}: the figure's reported bars {_bars}; summary(['accuracy']) reports "
        f"{_row['hdi_5%']:.3f}-{_row['hdi_95%']:.3f}")
""",
}
#: notebooks whose prose quotes only numbers (three decimals: 0.875) that a cell prints or a
#: figure shows, up to the differences it works out itself from them (true_accuracy) and the
#: result of a fit it describes but does not run (rare_category_fscore: the Gamma /
#: truncated-Normal pair at score_mixture_fscore's default draws, F1 0.604 [0.596, 0.612])
PROSE_CHECKED = {"true_accuracy": {"0.003", "0.008"}, "rare_category_fscore": {"0.596", "0.612"}}
#: run after the last cell (and after AFTER's check) of a notebook in PROSE_CHECKED
_FIGURE_TEXTS = """\
import json as _json, matplotlib.pyplot as _plt, matplotlib.text as _text
print(_json.dumps([t.get_text() for n in _plt.get_fignums() for t in _plt.figure(n).findobj(_text.Text)]))
"""
_NUMBER = re.compile(r"\d+\.\d+")


def _shown_numbers(cells) -> set[str]:
    """Every number the executed cells print or show as a table, and (from the last cell, which
    ran :data:`_FIGURE_TEXTS`) every number in a figure's texts, to 3 decimals."""
    *shown, last = cells
    texts = [o.get("text", "") if o.get("output_type") == "stream" else o.get("data", {}).get("text/plain", "")
             for c in shown if c.cell_type == "code" for o in c.get("outputs", [])]
    texts += json.loads("".join(o.get("text", "") for o in last.outputs if o.get("name") == "stdout"))
    return {f"{float(x):.3f}" for t in texts for x in _NUMBER.findall(t)}


@pytest.fixture(scope="module")
def kernel():
    """One kernel for the module's notebooks; shut down at the end."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    mp = pytest.MonkeyPatch()
    mp.setenv("MPLBACKEND", "Agg")
    state = {"km": None, "nbformat": nbformat, "nbclient": nbclient}
    yield state
    if state["km"] is not None:
        from nbclient.util import run_sync

        run_sync(state["km"].shutdown_kernel)(now=True)
    mp.undo()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, kernel):
    from nbclient.util import run_sync

    if kernel["km"] is not None and not run_sync(kernel["km"].is_alive)():
        kernel["km"] = None  # an earlier notebook killed the kernel: this one starts its own
    nb = kernel["nbformat"].read(path, as_version=4)
    n_cells = len(nb.cells)
    nb.cells.insert(0, kernel["nbformat"].v4.new_code_cell(_FRESH.format(folder=str(path.parent))))
    added = [AFTER[path.stem]] if path.stem in AFTER else []
    added += [_FIGURE_TEXTS] if path.stem in PROSE_CHECKED else []
    nb.cells.extend(kernel["nbformat"].v4.new_code_cell(code) for code in added)
    # the first notebook starts the kernel (from the notebook's own folder, as Jupyter does: the
    # quick start reads ../models/); the next ones reuse it
    client = kernel["nbclient"].NotebookClient(
        nb, km=kernel["km"], timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    try:
        client.execute(cleanup_kc=False)
    finally:
        if kernel["km"] is None:
            kernel["km"] = client.km
        if client.kc is not None:
            client.kc.stop_channels()
    assert len(nb.cells) == n_cells + 1 + len(added)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, "\n".join(f"{e['ename']}: {e['evalue']}" for e in errors)
    if path.stem in PROSE_CHECKED:
        shown = _shown_numbers(nb.cells) | PROSE_CHECKED[path.stem]
        quoted = {m for c in nb.cells if c.cell_type == "markdown" for m in re.findall(r"(?<![\d.])\d\.\d{3}(?![\d.])", c.source)}
        assert quoted <= shown, (
            f"{path.name}: its prose quotes {sorted(quoted - shown)}, which no cell prints and no figure "
            "shows: write the numbers the cells print into the prose"
        )


#: import names whose distribution is named otherwise, for modules not installed here
_DISTRIBUTION = {"sklearn": "scikit-learn"}


def _dist_name(requirement: str) -> str:
    """``"dask[array]>=2024.1"`` -> ``"dask"``: the normalized distribution name (PEP 503)."""
    return re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9._-]+", requirement).group()).lower()


def _notebook_imports(path: Path) -> set[str]:
    """Top-level modules that the notebook's code cells import (IPython magics and shell lines aside)."""
    modules = set()
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, ast.Import):
                modules |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                modules.add(node.module.split(".")[0])
    return modules


def test_the_notebooks_extra_installs_what_every_notebook_imports():
    """``pip install -e ".[notebooks]"`` (README) gives Jupyter and every module a notebook imports."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extra = project["optional-dependencies"].get("notebooks")
    assert extra, 'pyproject.toml has no `notebooks` extra: README says `pip install -e ".[notebooks]"`'
    listed = {_dist_name(r) for r in extra}
    assert listed & {"jupyterlab", "notebook"}, f"the notebooks extra {extra} installs no Jupyter to open them"
    base = {_dist_name(r) for r in project["dependencies"]} | {_dist_name(project["name"])}
    installed = importlib.metadata.packages_distributions()
    missing = {}
    for path in NOTEBOOKS:
        for module in sorted(_notebook_imports(path) - set(sys.stdlib_module_names)):
            dists = {_dist_name(d) for d in installed.get(module, [])} | {_dist_name(_DISTRIBUTION.get(module, module))}
            if not dists & (base | listed):
                missing.setdefault(path.name, []).append(f"{module} ({' or '.join(sorted(dists))})")
    assert not missing, (
        f"notebooks import modules that neither bayeval's dependencies nor its `notebooks` extra install: "
        f"{missing}; add their distributions to `notebooks` in pyproject.toml's [project.optional-dependencies]"
    )
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert 'pip install -e ".[notebooks]"' in readme and "jupyter lab notebooks/" in readme
