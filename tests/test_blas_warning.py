"""After a plain pip install PyTensor finds no BLAS and warns "... We recommend it be
installed via conda" on the first fit; bayeval's graphs hold no BLAS operation, so the
fit does not show that warning (docs/index.md explains it once)."""

import os
import subprocess
import sys
import textwrap

import pytest

pytensor = pytest.importorskip("pytensor")

SCRIPT = textwrap.dedent(
    """
    import warnings
    warnings.simplefilter("always")
    import numpy as np
    from bayeval import EvalData
    from bayeval.models import ScoreMixture
    rng = np.random.default_rng(0)
    y = (rng.random(200) < 0.3).astype(float)
    s = np.where(y == 1, rng.gamma(8, 0.1, 200), rng.gamma(2, 0.1, 200))
    lab = np.full(200, np.nan); lab[:40] = y[:40]
    ScoreMixture("gamma", "truncnormal").fit(EvalData(s, lab), draws=50, tune=50, chains=1,
                                             random_seed=0, warn=False, progressbar=False)
    import pytensor
    print("ldflags=" + repr(pytensor.config.blas__ldflags))
    """
)


def test_a_fit_does_not_show_pytensors_blas_warning():
    # a fresh process: PyTensor searches for a BLAS once per process (its compiled modules are
    # cached on disk, the search's result is not)
    env = {k: v for k, v in os.environ.items() if k != "PYTENSOR_FLAGS"}
    res = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "ldflags=" in res.stdout
    assert "could not link to a BLAS" not in res.stderr


def test_the_blas_search_still_runs_and_its_result_is_kept():
    """The probe only silences the message: a BLAS PyTensor finds is used as before."""
    from bayeval.core import sampling as _sampling

    _sampling._quiet_blas_probe()
    assert isinstance(pytensor.config.blas__ldflags, str)
