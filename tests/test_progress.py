"""Progress bars: one per long fit or study, none when switched off or for a short task.

``_progress.DELAY`` (seconds before a bar appears) is set to 0 to force the slow path.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bayeval import EvalData, Posterior
from bayeval.active.simulate import simulate
from bayeval.cli import main
from bayeval.core import _progress as _progress
from bayeval.core import sampling as _sampling
from bayeval.fscore.study import simulate_fscore
from bayeval.models import Calibration, Stack

FIT = dict(draws=100, tune=100, chains=2, cores=1, warn=False, random_seed=1)
BC = Path(__file__).resolve().parents[1] / "models" / "breast_cancer_logreg"


def _scores(seed=0, n=300, n_vetted=50):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.3).astype(float)
    s = np.clip(np.where(y == 1, rng.normal(0.7, 0.15, n), rng.gamma(2.0, 0.12, n)), 1e-3, 1 - 1e-3)
    lab = np.full(n, np.nan)
    lab[:n_vetted] = y[:n_vetted]
    return EvalData(s, lab)


@pytest.fixture()
def slow(monkeypatch):
    """Every task counts as slow: its bar is drawn at once."""
    monkeypatch.setattr(_progress, "DELAY", 0.0)


def test_no_output_with_progressbar_off(slow, capsys):
    _sampling._CACHE.clear()  # the cold path too (compilation)
    Calibration("logistic").fit(_scores(), progressbar=False, **FIT)
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""


def test_a_slow_importance_sampling_fit_shows_one_bar(slow, capsys):
    post = Calibration("logistic").fit(_scores(), progressbar=True, **FIT)
    assert post.sampling.sampler == "importance"
    err = capsys.readouterr().err
    assert "bayeval: importance sampling" in err and "100%" in err
    assert err.count("bayeval:") == 1  # one bar (stderr is no terminal: its final state, once)


def test_a_short_fit_shows_nothing(monkeypatch, capsys):
    monkeypatch.setattr(_progress, "DELAY", 600.0)
    Calibration("logistic").fit(_scores(), progressbar=True, **FIT)
    assert capsys.readouterr().err == ""


def test_bars_do_not_nest(slow, capsys):
    """A stack shows its own bar; its candidates' fits show none."""
    Stack(candidates=[Calibration("logistic"), Calibration("beta")]).fit(_scores(), progressbar=True, **FIT)
    err = capsys.readouterr().err
    assert "bayeval: candidate 2/2" in err
    assert "importance sampling" not in err


def test_bayeval_fit_shows_its_stages_by_default(slow, monkeypatch, capsys):
    """bayeval.fit (a million items: ~25 s) shows one bar by default: each candidate's
    sampling, then the comparison and stacking; ``progressbar=False`` shows nothing."""
    import bayeval as be

    stages = []
    update = _progress.Bar.update

    def spy(self, description=None, **kw):
        if self.enabled and description is not None:
            stages.append(description)
        return update(self, description, **kw)

    monkeypatch.setattr(_progress.Bar, "update", spy)
    be.fit(_scores(), draws=100, chains=2, random_seed=1, warn=False)
    err = capsys.readouterr().err
    assert err.count("bayeval:") == 1 and "100%" in err  # one bar, finished (its final state, once)
    assert "bayeval: candidate 2/2 done; stacking (LOO)" in err
    assert stages == [
        "bayeval: candidate 1/2 (calibration/logistic), sampling",
        "bayeval: candidate 2/2 (calibration/monotone), sampling",
        "bayeval: candidate 2/2 done; stacking (LOO)",
    ]
    be.fit(_scores(), draws=100, chains=2, random_seed=1, warn=False, progressbar=False)
    assert capsys.readouterr().err == ""


def test_a_short_bayeval_fit_shows_nothing(monkeypatch, capsys):
    import bayeval as be

    monkeypatch.setattr(_progress, "DELAY", 600.0)
    be.fit(_scores(), draws=100, chains=2, random_seed=1, warn=False)
    assert capsys.readouterr().err == ""


def test_nuts_inside_a_bar_gets_no_bar_of_its_own(slow, monkeypatch):
    """The NUTS sampler's own bar is switched off where an enclosing task shows one."""
    import pymc as pm

    seen = {}

    def fake_sample(**kw):
        seen.update(kw)
        raise RuntimeError("stop here")

    monkeypatch.setattr(pm, "sample", fake_sample)
    with _progress.Bar("outer", enabled=True):
        with pytest.raises(RuntimeError, match="stop here"):
            Calibration("logistic").fit(_scores(), progressbar=True, sampler="pymc", **FIT)
    assert seen["progressbar"] is False
    with pytest.raises(RuntimeError, match="stop here"):
        Calibration("logistic").fit(_scores(), progressbar=True, sampler="pymc", **FIT)
    assert seen["progressbar"] is True


def _cheap_model(d: EvalData) -> Posterior:
    p = np.clip(d.scores / d.scores.max(), 0.01, 0.99)
    return Posterior.from_probabilities(d, p, draws=50, random_seed=1, check=False)


def test_simulate_shows_one_bar_per_study(slow, capsys):
    rng = np.random.default_rng(0)
    truth = (rng.random(60) < 0.4).astype(int)
    data = EvalData(truth * 0.5 + rng.random(60))
    simulate(data, truth, _cheap_model, metric="average_precision", budget=10, batch_size=5, trials=2,
             strategies=("random",), random_seed=0, progressbar=True)
    err = capsys.readouterr().err
    assert "simulate: trial 2/2, random" in err and "100%" in err
    simulate(data, truth, _cheap_model, metric="average_precision", budget=10, batch_size=5, trials=2,
             strategies=("random",), random_seed=0)
    assert capsys.readouterr().err == ""


def test_simulate_fscore_shows_one_bar_per_study(slow, capsys):
    rng = np.random.default_rng(0)
    y = (rng.random(2000) < 0.05).astype(int)
    s = np.clip(0.6 * y + rng.normal(0.2, 0.15, y.size), 0, 1)
    simulate_fscore(s, s > 0.5, y, methods=["uniform"], budgets=[20], trials=2, random_seed=1, progressbar=True)
    err = capsys.readouterr().err
    assert "simulate_fscore: uniform at budget 20" in err and "100%" in err
    simulate_fscore(s, s > 0.5, y, methods=["uniform"], budgets=[20], trials=2, random_seed=1)
    assert capsys.readouterr().err == ""


def test_cli_quiet_shows_no_bar(slow, tmp_path, capsys):
    out = tmp_path / "r"
    assert main(["report", str(BC), "--out", str(out), "--draws", "100", "--tune", "100", "--chains", "2",
                 "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "bayeval:" not in err and "%" not in err


_JUPYTER_CELL = """
import time
from bayeval.core import _progress
_progress.JUPYTER_REFRESH = 0.05
with _progress.Bar("scoring the pool", total=4, delay=0) as bar:
    for i in range(4):
        time.sleep(0.15)
        bar.update(advance=1)
with _progress.Bar("handing over", total=2, delay=0) as bar:
    time.sleep(0.15)
    bar.transient()
"""


def test_in_jupyter_without_ipywidgets_the_bar_is_one_line_of_text_updated_in_place():
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    try:
        import ipywidgets  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("ipywidgets is installed: rich draws its own widget")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(_JUPYTER_CELL)]
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    outputs = nb.cells[0].outputs
    # one display per bar, nothing on stderr (rich alone would warn "install ipywidgets"
    # and draw nothing); the finished bar shows its description and 100 %, the bar that
    # handed over is blanked
    assert [o["output_type"] for o in outputs] == ["display_data", "display_data"], outputs
    done, handed_over = (o["data"]["text/plain"] for o in outputs)
    assert done.startswith("scoring the pool") and "100%" in done and "left" in done
    assert "\n" not in done
    assert handed_over == ""


def test_cli_no_progress_shows_no_bar_of_the_metric_passes_either(slow, tmp_path, capsys):
    """`bayeval fit --no-progress` switched the fit's bar off, but each metric pass after it still drew
    "bayeval: average_precision, 2000 draws of ... items" (on a large pool, where a pass takes seconds)."""
    import pandas as pd

    d = _scores()
    path = tmp_path / "s.csv"
    pd.DataFrame({"s": d.scores, "y": d.labels}).to_csv(path, index=False)
    assert main(["fit", str(path), "--score", "s", "--label", "y", "--draws", "100", "--tune", "100",
                 "--chains", "1", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "draws of" not in err and "%" not in err, err
