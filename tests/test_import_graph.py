"""The import graph: no module of bayeval imports a private name (``_x``) from another module.

Private modules of a sub-package (``_base``, ``_sampling``, ``_validate``...) are shared
on purpose and may be imported; the names they export have no leading underscore.
"""

import ast
import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "bayeval"


def _private_imports(root=PACKAGE):
    out = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        out.append(f"{path.relative_to(root.parent)}: from {'.' * node.level}{node.module} "
                                   f"import {alias.name}")
    return out


def test_no_module_imports_a_private_name_of_another():
    found = _private_imports()
    # the shared private modules are imported by name, e.g. "from .. import _validate as V"
    found = [f for f in found if f.split(" import ")[1] not in {"_validate", "_diagnostics", "_defaults", "_progress"}]
    assert not found, "\n".join(found)


def test_the_check_finds_a_private_import(tmp_path):
    """The scanner itself: a module importing a private name is reported, a public one is not."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "a.py").write_text("from .b import _hidden\nfrom .b import shown\n")
    found = _private_imports(pkg)
    assert found == ["pkg/a.py: from .b import _hidden"]
