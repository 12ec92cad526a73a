"""The benchmark scripts stay runnable: each answers --help when run as a script.

Running ``python benchmarks/NAME.py`` puts ``benchmarks/`` first on ``sys.path``, so a
script named like a standard-library module (``select.py`` did) breaks every import
of that module in the other scripts (``subprocess`` imports ``select``).
"""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

BENCH = pathlib.Path(__file__).resolve().parents[1] / "benchmarks"
SCRIPTS = sorted(p for p in BENCH.glob("*.py"))


def test_no_script_shadows_a_standard_module():
    clashes = [p.name for p in SCRIPTS if p.stem in sys.stdlib_module_names]
    assert not clashes, f"rename {clashes}: they shadow standard-library modules"


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_script_help(script):
    out = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "usage:" in out.stdout


# ------------------------------------------------------------------ fit_speed.py


def _fit_speed():
    sys.path.insert(0, str(BENCH))
    import fit_speed

    return fit_speed


def test_fit_speed_counts_evaluations():
    """Gradient counts: SamplingInfo counters first, else NUTS n_steps (scaled when tuning was discarded)."""
    import types

    import arviz as az
    import numpy as np

    fs = _fit_speed()
    steps = np.full((2, 10), 7)
    with_warmup = az.from_dict(posterior={"x": np.zeros((2, 10))}, sample_stats={"n_steps": steps},
                               warmup_sample_stats={"n_steps": np.full((2, 30), 3)}, save_warmup=True)
    draws_only = az.from_dict(posterior={"x": np.zeros((2, 10))}, sample_stats={"n_steps": steps})
    info = types.SimpleNamespace(sampler="pymc")
    post = types.SimpleNamespace(sampling=info, idata=with_warmup)
    assert fs.evaluations(post, 10, 30) == {"sampler": "pymc", "n_grad": 140 + 180, "n_logp": 0, "count": "n_steps"}
    post.idata = draws_only
    assert fs.evaluations(post, 10, 30)["n_grad"] == 140 * 4  # (draws + tune) / draws
    post.sampling = types.SimpleNamespace(sampler="nutpie", n_grad_evals=123, n_logp_evals=4)
    assert fs.evaluations(post, 10, 30) == {"sampler": "nutpie", "n_grad": 123, "n_logp": 4, "count": "SamplingInfo"}
    assert fs._overhead({"time": 2.0, "n_grad": 100, "n_logp": 0}, 0.01, 0.5) == 2.0


def test_fit_speed_quick_core():
    """A tiny version of ``fit_speed.py --quick``: every row, finite positive times, counts and ratios."""
    import math

    fs = _fit_speed()
    models = ["ScoreMixture normal/normal", "Calibration logistic"]
    rows = fs.measure(models, [300], draws=30, tune=30, chains=1, timeout=600, log=lambda *a, **k: None)
    assert [(r["model"], r["n"]) for r in rows] == [(m, 300) for m in models]
    for r in rows:
        for key in ("base_cold", "base_warm", "new_cold", "new_warm", "speedup_cold", "speedup_warm", "t_grad",
                    "t_logp", "base_cold_overhead", "base_warm_overhead"):
            assert math.isfinite(r[key]) and r[key] > 0, (r["model"], key, r[key])
        # the baseline keeps its tuning draws: at least one leapfrog step per iteration and chain
        assert r["base_cold_grads"] >= 60 and r["base_warm_grads"] >= 60
        assert r["new_warm_grads"] is not None and r["new_warm_grads"] + r["new_warm_logps"] > 0
        assert math.isfinite(r["new_warm_overhead"]) and r["new_warm_overhead"] > 0
    # --resume: measured (model, N) are kept, not measured again (no subprocess: returns at once)
    assert fs.measure(models, [300], draws=30, tune=30, chains=1, done=rows, log=None) == rows
    text = fs.report(rows, None, cmd="test", settings="tiny", elapsed=1.0, complete=True, cold_compiledir=False)
    assert "### ScoreMixture normal/normal" in text and "### Calibration logistic" in text
    lines = fs.targets(rows, None, ref_n=300)
    assert len(lines) == 5 and all(any(w in ln for w in ("MET", "MISSED", "NOT MEASURED")) for ln in lines)
