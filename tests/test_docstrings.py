"""Docstring examples run, and every public function or class has one."""

import doctest
import importlib
import inspect
import pkgutil

import pytest

import bayeval

def _is_moved_alias(info) -> bool:
    """A former module path kept for one release (its file only calls ``moved_module``)."""
    import pathlib

    path = getattr(info.module_finder, "path", None)
    f = pathlib.Path(path or "") / (info.name.rsplit(".", 1)[-1] + ".py")
    return path is not None and f.is_file() and "moved_module(" in f.read_text(encoding="utf-8")


MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(bayeval.__path__, "bayeval.")
    if not m.name.rsplit(".", 1)[-1].startswith("_") and m.name not in {"bayeval.cli"} and not _is_moved_alias(m)
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_pass(name, monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
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
