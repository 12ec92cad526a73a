"""Every notebook under notebooks/ runs top to bottom (small data, under a minute each).

The notebooks run one after another in one kernel, as a person who opens them in turn in one
Jupyter session would: starting a kernel costs a new Python process its imports and PyTensor's
compile-cache scan (10-15 CPU seconds each on a 2-core machine), and the models a notebook shares
with an earlier one are compiled once. Before each notebook the kernel's namespace is cleared
(``%reset -f``), figures are closed and matplotlib's settings are restored, so a notebook that
uses a name it does not define itself still fails here; the working folder is the notebook's own,
as in Jupyter.
"""

from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))

#: run before each notebook's first cell, in the shared kernel
_FRESH = """\
%reset -f
import os as _os, matplotlib as _mpl, matplotlib.pyplot as _plt
_plt.close("all"); _mpl.rcdefaults(); _os.chdir({folder!r})
del _os, _mpl, _plt
"""


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
    assert len(nb.cells) == n_cells + 1
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
