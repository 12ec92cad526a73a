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
