"""Docstring examples run, and every public function or class has one."""

import doctest
import importlib
import inspect
import pkgutil

import pytest

import bayeval

MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(bayeval.__path__, "bayeval.")
    # bayeval.metrics is bayeval.core.metrics under its short name (the same module object)
    if not m.name.rsplit(".", 1)[-1].startswith("_") and m.name not in {"bayeval.cli", "bayeval.metrics"}
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_pass(name, monkeypatch):
    """Whitespace is compared as written (no NORMALIZE_WHITESPACE), as `pytest --doctest-modules`
    compares it: an example whose output ends in a space the docstring cannot show passed here and
    failed there."""
    monkeypatch.setenv("MPLBACKEND", "Agg")
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.failed == 0


def _public(module):
    for attr in getattr(module, "__all__", []):
        obj = getattr(module, attr)
        if inspect.isfunction(obj) or inspect.isclass(obj):
            yield attr, obj


@pytest.mark.parametrize("name", ["bayeval", *MODULES])
def test_public_callables_have_numpydoc_examples(name):
    module = importlib.import_module(name)
    missing = [attr for attr, obj in _public(module) if "Examples" not in (inspect.getdoc(obj) or "")]
    assert not missing, f"{name}: no Examples section in {missing}"
