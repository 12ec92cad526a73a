"""The suite's own layout under ``pytest -n``: tests that share a module-scoped fixture run in
one worker (``tests/conftest.py``), so the fixture is computed once. This broke silently once
(pytest 9 renamed node ids internally and pytest-xdist's groups stopped taking effect, so every
fitted fixture was computed once per worker); this test says so when it happens again."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="module")
def shared():
    return object()


def test_tests_sharing_a_module_fixture_form_one_xdist_group(shared, request):
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        pytest.skip("only meaningful under pytest -n (pytest-xdist)")
    if request.config.getoption("dist", "no") != "no" or getattr(request.config.option, "loadgroup", False):
        assert request.node.nodeid.endswith("@tests/test_suite_layout.py"), (
            f"node id {request.node.nodeid!r} has no xdist group: tests sharing a module fixture are "
            "spread over workers and each worker fits the fixture again (check the pytest / "
            "pytest-xdist versions and tests/conftest.py)"
        )
