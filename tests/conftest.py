"""How the suite spreads over processes (pytest-xdist, ``--dist loadgroup`` in pyproject.toml).

Two rules keep the README's command (``-n auto``) short on a 2-core machine:

* Tests that share a module-scoped fixture (a fitted model, a rendered report) run in one
  process, so the fixture is computed once and not once per process: each such module's
  tests form one ``xdist_group`` (modules that fit the same structures, :data:`SAME_GROUP`,
  share one). The other tests are handed out one at a time.
* The long tests start first (xdist hands out work in collection order after the groups,
  largest group first), so no process is left running a long test alone at the end:
  the notebooks and the tests listed in :data:`LONG` move to the front.

Without ``-n`` none of this matters: the tests run in one process, in this order.

On a busy machine wall times say little; ``BAYEVAL_TEST_CPU_LOG=FILE`` appends one JSON line
per test phase with its wall time and its CPU time (the process's and its finished
children's: the notebook kernels, the C compiler), which is about what the phase takes on
an idle core. ``python tests/conftest.py FILE`` sums them per test and per file.
"""

from __future__ import annotations

import json
import os
import resource
import time

import pytest

#: node-id prefixes of the tests that take longest (tens of seconds on an idle core)
LONG = (
    "tests/test_notebooks.py",
    "tests/test_acis.py::test_model_interval_covers_the_weak_pool_where_the_delta_interval_fails",
    "tests/test_acis.py::test_rest_stratum_makes_false_negatives_unbiased",
    "tests/test_acis.py::test_default_interval_covers_a_miscalibrated_pool_after_a_domain_census",
    "tests/test_acis.py::test_importance_weights_give_unbiased_totals",
    # modules whose tests share a fitted fixture run as one group on one worker: start them early
    "tests/test_model_contract.py",  # before test_persist: its fixture clears the compiled-model cache
    "tests/test_persist.py",
    "tests/test_annotator.py",
    "tests/test_label_flip.py",
    "tests/test_compare.py",
)

@pytest.fixture(scope="session")
def small_default_fit():
    """``get(vetted)``: a default fit (a stack of calibration curves) on 120 items with every
    (``"all"``) or no (``"none"``) item vetted, and the items' true labels; each fitted once per
    process (the report tests of ``test_report.py`` and ``test_report_stack.py`` read them)."""
    import warnings

    import numpy as np

    import bayeval as be

    fits: dict = {}

    def get(vetted: str):
        if vetted not in fits:
            rng = np.random.default_rng(3)
            q = rng.beta(1, 3, 120)
            truth = (rng.random(120) < q).astype(int)
            lab = truth.astype(float) if vetted == "all" else np.full(120, np.nan)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # nothing vetted: the fit warns
                fits[vetted] = (be.fit(be.EvalData(q, lab), random_seed=0, draws=200), truth)
        return fits[vetted]

    return get


_SHARED_SCOPES = ("module", "package", "session")
#: modules that fit the same model structures (to data from tests/_fit_cases.py) share one
#: group, so each structure is compiled once in the run
SAME_GROUP = {
    "tests/test_model_contract.py": "fitted_models",
    "tests/test_persist.py": "fitted_models",
}
#: module-scoped fixtures that cost next to nothing (a simulated pool, files of bad input):
#: their tests are better spread than kept together
CHEAP = {
    "tests/test_acis.py": {"pool"},
    "tests/test_bad_calls.py": {"post"},
    "tests/test_cards.py": {"cards", "loaded"},
    "tests/test_cli_bad_inputs.py": {"bad"},
}


def _shares_a_module_fixture(item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    cheap = CHEAP.get(item.nodeid.split("::", 1)[0], set())
    for name in item.fixturenames:
        defs = info.name2fixturedefs.get(name)
        # a test module's own fixture (pytest's have no baseid), not a cheap one
        if defs and defs[-1].scope in _SHARED_SCOPES and defs[-1].baseid and name not in cheap:
            return True
    return False


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the groups
def pytest_collection_modifyitems(config, items):
    for item in items:
        if _shares_a_module_fixture(item):
            module = item.nodeid.split("::", 1)[0]
            item.add_marker(pytest.mark.xdist_group(SAME_GROUP.get(module, module)))

    def rank(item):
        return next((i for i, prefix in enumerate(LONG) if item.nodeid.startswith(prefix)), len(LONG))

    items.sort(key=rank)  # stable: the rest keep their order


# ------------------------------------------------------------- CPU time per test (opt-in)


def _cpu() -> tuple[float, float]:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def _timed(phase):
    @pytest.hookimpl(hookwrapper=True)
    def hook(item):
        path = os.environ.get("BAYEVAL_TEST_CPU_LOG")
        if not path:
            yield
            return
        t0, (c0, k0) = time.perf_counter(), _cpu()
        yield
        t1, (c1, k1) = time.perf_counter(), _cpu()
        with open(path, "a") as f:
            f.write(json.dumps({"id": item.nodeid, "when": phase, "wall": t1 - t0, "cpu": c1 - c0,
                                "child": k1 - k0, "worker": os.environ.get("PYTEST_XDIST_WORKER")}) + "\n")

    return hook


pytest_runtest_setup = _timed("setup")
pytest_runtest_call = _timed("call")
pytest_runtest_teardown = _timed("teardown")


def _report(path: str, top: int = 30) -> None:
    tests: dict = {}
    files: dict = {}
    for line in open(path):
        r = json.loads(line)
        cpu = r["cpu"] + r["child"]
        t = tests.setdefault(r["id"], [0.0, 0.0])
        t[0] += cpu
        t[1] += r["wall"]
        f = files.setdefault(r["id"].split("::", 1)[0], [0.0, 0.0])
        f[0] += cpu
        f[1] += r["wall"]
    print(f"{len(tests)} tests: CPU {sum(v[0] for v in tests.values()):.0f} s, "
          f"wall {sum(v[1] for v in tests.values()):.0f} s (summed over processes)")
    print(f"\nthe {top} longest tests (CPU s, wall s):")
    for k, v in sorted(tests.items(), key=lambda kv: -kv[1][0])[:top]:
        print(f"{v[0]:8.1f} {v[1]:8.1f}  {k}")
    print("\nper file (CPU s, wall s):")
    for k, v in sorted(files.items(), key=lambda kv: -kv[1][0]):
        print(f"{v[0]:8.1f} {v[1]:8.1f}  {k}")


if __name__ == "__main__":
    import sys

    _report(sys.argv[1], *(int(a) for a in sys.argv[2:3]))
