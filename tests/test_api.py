"""The public surface: sub-modules reachable from ``import bayeval``, one reading of a
seed, and the renamed keywords (old spellings still work, with a DeprecationWarning)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import bayeval

ROOT = Path(__file__).resolve().parents[1]


def _run(code: str) -> subprocess.CompletedProcess:
    # a fresh interpreter: the test session has imported every sub-module already,
    # which would hide a missing lazy import
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)


def test_submodules_reachable_after_plain_import():
    code = (
        "import sys; import bayeval as be\n"
        "assert 'bayeval.plots' not in sys.modules and 'bayeval.cards' not in sys.modules\n"
        "be.models.ScoreMixture; be.active.select; be.plots.pr_curve; be.plots_ranking\n"
        "be.datasets.load_breast_cancer_scores; be.cards.load_card; be.Report\n"
        "assert {'plots', 'datasets', 'cards', 'models', 'active'} <= set(dir(be))\n"
        "print(be.__file__)"
    )
    out = _run(code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(ROOT / "bayeval" / "__init__.py")


def test_unknown_attribute_raises_attribute_error():
    with pytest.raises(AttributeError, match="module 'bayeval' has no attribute 'not_a_module'"):
        bayeval.not_a_module  # noqa: B018
    assert callable(bayeval.report)  # the eager function wins over its module's name


def test_eager_names_still_there():
    for name in bayeval.__all__:
        assert getattr(bayeval, name) is not None
