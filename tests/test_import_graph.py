"""The import graph of bayeval: one-way layers, no cycles, no private names across modules.

Every import is read from the source with ``ast``: module-level and inside functions,
absolute and relative, and ``importlib.import_module("...")`` with a literal name. Each
module sits on a floor (:data:`FLOORS`); an import may go down or stay on its floor,
never up, and the modules import each other without a cycle. ``docs/architecture.md``
draws the floors.

Private modules of a sub-package (``core._validate``, ``models._scales``...) are shared on
purpose and may be imported; the names they export have no leading underscore.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "bayeval"

#: The floor of each part of bayeval (the longest matching prefix decides). The core is
#: the contract everything stands on; the model families stand on it side by side; the
#: studies use the families; the outputs and files (reports, figures, saved fits, model
#: cards, the table reader, the bundled data) use everything below; the command line and
#: the package's face are on top.
FLOORS = {
    "bayeval._version": 0,
    "bayeval.core": 0,
    "bayeval.models": 1,
    "bayeval.annotators": 1,
    "bayeval.rankings": 1,
    "bayeval.fscore": 2,
    "bayeval.active": 2,
    "bayeval.compare": 2,
    "bayeval.recalibrate": 3,
    "bayeval.plots": 3,
    "bayeval.report": 3,
    "bayeval._report_text": 3,  # the report's reading of its metric table, and its cell format
    "bayeval.persist": 3,
    "bayeval.cards": 3,
    "bayeval._card_scales": 3,  # a card's [model] reading of its scores checked in the card's words
    # The one reader of users' files (CSV/TSV/Parquet): it depends on the core only, and
    # only the file-facing modules above it (cards, datasets, cli) read tables. Placed with
    # them, the core stays about arrays in memory and no model or study reads a file.
    "bayeval._tables": 3,
    "bayeval.datasets": 3,
    # The vetting page: a session over active/ for a model card, and its web app.
    "bayeval.vet": 3,
    "bayeval.cli": 4,
    "bayeval.__main__": 4,
    "bayeval.metrics": 4,  # with the face: `import bayeval.metrics` gives bayeval.core.metrics itself
    "bayeval": 4,  # the face: bayeval/__init__.py re-exports names from every floor
}

#: Packages on one floor whose modules must not import each other: the model families
#: stand on the core side by side, and the two studies likewise.
SIBLINGS = (
    ("bayeval.models", "bayeval.annotators", "bayeval.rankings"),
    ("bayeval.fscore", "bayeval.active", "bayeval.compare"),
)


# ------------------------------------------------------------------ the scanner


def modules(root: pathlib.Path) -> dict[str, tuple[pathlib.Path, bool]]:
    """``{dotted name: (file, is_package)}`` of every module under the package ``root``."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        out[".".join(parts)] = (path, is_pkg)
    return out


def _resolve(name: str, is_pkg: bool, level: int, module: str | None) -> str:
    if level == 0:
        return module or ""
    base = name.split(".") if is_pkg else name.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def _literal_import_module(node: ast.Call) -> str | None:
    """The module of ``importlib.import_module("x")`` / ``import_module("x")`` with a literal name."""
    fn = node.func
    called = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else None
    if called in ("import_module", "__import__") and node.args:
        arg = node.args[0]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and not arg.value.startswith("."):
            return arg.value
    return None


def imports(root: pathlib.Path) -> list[tuple[str, str, int, bool]]:
    """Every import of one module of the package by another: ``(importer, imported, line,
    inside_a_function)``. ``from pkg import name`` counts as importing the module
    ``pkg.name`` where that is a module, else ``pkg`` itself."""
    mods = modules(root)
    top = root.name
    out = []
    for name, (path, is_pkg) in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        nested = set()
        for fn in ast.walk(tree):
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                nested.update(id(n) for n in ast.walk(fn) if n is not fn)
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(name, is_pkg, node.level, node.module)
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            elif isinstance(node, ast.Call):
                lit = _literal_import_module(node)
                targets = [lit] if lit else []
            for target in targets:
                if target != top and not target.startswith(top + "."):
                    continue
                while target not in mods and "." in target:  # import a.b.c where c is a name
                    target = target.rsplit(".", 1)[0]
                if target != name:
                    out.append((name, target, node.lineno, id(node) in nested))
    return sorted(set(out))


def floor_of(name: str, floors: dict[str, int]) -> int:
    best = max((p for p in floors if name == p or name.startswith(p + ".")), key=len, default=None)
    if best is None:
        raise KeyError(f"{name} has no floor: add it (or its package) to FLOORS")
    return floors[best]


def upward(edges, floors) -> list[str]:
    """The imports that go up a floor, as ``importer:line -> imported``."""
    return [f"{a}:{line} -> {b} (floor {floor_of(a, floors)} -> {floor_of(b, floors)}"
            f"{', inside a function' if inner else ''})"
            for a, b, line, inner in edges if floor_of(b, floors) > floor_of(a, floors)]


def between_siblings(edges, siblings) -> list[str]:
    def family(name, group):
        return next((p for p in group if name == p or name.startswith(p + ".")), None)

    out = []
    for a, b, line, _ in edges:
        for group in siblings:
            fa, fb = family(a, group), family(b, group)
            if fa and fb and fa != fb:
                out.append(f"{a}:{line} -> {b}")
    return out


def cycles(edges) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), sorted."""
    graph: dict[str, set[str]] = {}
    for a, b, _, _ in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


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


def _module_aliases(path: pathlib.Path, tree) -> set[str]:
    """The names a module binds to other modules of its package (``from ..core import _validate as V``)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level > 0:
            base = path.parent
            for _ in range(node.level - 1):
                base = base.parent
            if node.module:
                base = base.joinpath(*node.module.split("."))
            for alias in node.names:
                if (base / f"{alias.name}.py").is_file() or (base / alias.name / "__init__.py").is_file():
                    out.add(alias.asname or alias.name)
    return out


def _private_attributes(root=PACKAGE):
    """Private names of another module reached as an attribute of it (``V._preview``), which
    ``from`` imports do not show."""
    out = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        aliases = _module_aliases(path, tree)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
                    and node.attr.startswith("_") and not node.attr.startswith("__")):
                out.append(f"{path.relative_to(root.parent)}:{node.lineno}: {node.value.id}.{node.attr}")
    return out


# ------------------------------------------------------------------ bayeval


@pytest.fixture(scope="module")
def edges():
    """The package's imports, read once for the tests below (about 1 CPU s a reading)."""
    return imports(PACKAGE)


def test_no_import_cycle(edges):
    assert len(edges) > 100  # the scanner sees the package
    found = cycles(edges)
    assert not found, "import cycles among bayeval modules:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_no_upward_import(edges):
    found = upward(edges, FLOORS)
    assert not found, "imports that go up a floor (see FLOORS):\n" + "\n".join(found)
    assert all(floor_of(name, FLOORS) >= 0 for name in modules(PACKAGE))  # every module has a floor


def test_siblings_do_not_import_each_other(edges):
    found = between_siblings(edges, SIBLINGS)
    assert not found, "imports between sibling packages of one floor:\n" + "\n".join(found)


def test_core_imports_nothing_of_bayeval_outside_core(edges):
    out = [f"{a}:{line} -> {b}" for a, b, line, _ in edges
           if a.startswith("bayeval.core") and not b.startswith("bayeval.core")]
    assert not out, "\n".join(out)


def test_no_module_imports_a_private_name_of_another():
    found = _private_imports()
    # the shared private modules are imported by name, e.g. "from ..core import _validate as V"
    found = [f for f in found if f.split(" import ")[1] not in {"_validate", "_diagnostics", "_defaults", "_progress"}]
    assert not found, "\n".join(found)


def test_no_module_reaches_a_private_name_of_another_module_as_an_attribute():
    found = _private_attributes()
    assert not found, "\n".join(found)


# ------------------------------------------------------------------ the scanner itself


def _package(tmp_path, files: dict[str, str]) -> pathlib.Path:
    root = tmp_path / "pkg"
    for rel, text in files.items():
        f = root / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
    return root


_FLOORS = {"pkg.low": 0, "pkg.high": 1, "pkg": 2}


def test_the_scanner_finds_a_cycle_closed_inside_a_function(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "",
        "low/__init__.py": "",
        "low/a.py": "from .b import x\n",
        "low/b.py": "x = 1\n\ndef f():\n    from pkg.low import a\n    return a\n",
        "high/__init__.py": "",
    })
    edges = imports(root)
    assert ("pkg.low.b", "pkg.low.a", 4, True) in edges and ("pkg.low.a", "pkg.low.b", 1, False) in edges
    assert cycles(edges) == [["pkg.low.a", "pkg.low.b"]]
    assert upward(edges, _FLOORS) == []


def test_the_scanner_finds_an_upward_import_inside_a_function(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "",
        "low/__init__.py": "",
        "low/a.py": "import importlib\n\ndef f():\n    from ..high import c\n\n"
                    "def g():\n    return importlib.import_module('pkg.high.d')\n",
        "high/__init__.py": "",
        "high/c.py": "from ..low import a\n",
        "high/d.py": "",
    })
    edges = imports(root)
    assert upward(edges, _FLOORS) == [
        "pkg.low.a:4 -> pkg.high.c (floor 0 -> 1, inside a function)",
        "pkg.low.a:7 -> pkg.high.d (floor 0 -> 1, inside a function)",
    ]
    assert cycles(edges) == [["pkg.high.c", "pkg.low.a"]]


def test_the_scanner_passes_a_clean_package(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "from .high import c\n",
        "low/__init__.py": "",
        "low/a.py": "import os\n",
        "low/b.py": "from . import a\nfrom .a import os\n\ndef f():\n    import pkg.low.a\n",
        "high/__init__.py": "",
        "high/c.py": "from ..low import b\nfrom pkg.low.a import os\n",
    })
    edges = imports(root)
    assert ("pkg.high.c", "pkg.low.b", 1, False) in edges and ("pkg.low.b", "pkg.low.a", 5, True) in edges
    assert cycles(edges) == [] and upward(edges, _FLOORS) == []
    assert between_siblings(edges, (("pkg.low", "pkg.high"),)) == [
        "pkg.high.c:2 -> pkg.low.a", "pkg.high.c:1 -> pkg.low.b"]


def test_the_check_finds_a_private_import(tmp_path):
    """The private-name scanner: a module importing a private name is reported, a public one is not."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "a.py").write_text("from .b import _hidden\nfrom .b import shown\n")
    found = _private_imports(pkg)
    assert found == ["pkg/a.py: from .b import _hidden"]


def test_the_check_finds_a_private_name_reached_through_a_module_alias(tmp_path):
    """``from . import b as B`` then ``B._hidden`` is reported; ``B.shown``, and a private
    attribute of a class imported from that module, are not."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "b.py").write_text("def _hidden(): pass\ndef shown(): pass\nclass K:\n    def _m(self): pass\n")
    (pkg / "a.py").write_text("from . import b as B\nfrom .b import K\nB._hidden()\nB.shown()\nK._m\n")
    assert _private_attributes(pkg) == ["pkg/a.py:3: B._hidden"]
