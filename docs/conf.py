"""Sphinx configuration for bayeval's documentation.

Build (from the repository root; warnings are errors, as in tests/test_docs.py)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

Pages are Markdown (MyST); the API reference is generated from the numpydoc
docstrings by autodoc + napoleon. Three small additions live in this file:

* the ``bayeval-module`` directive documents one module under a heading of its
  own, or leaves it out (with an info message, not a warning) when the module
  does not import yet -- so an API page can list a module that is still being
  written, and adding a module to the reference is one line;
* the ``bayeval-exports`` directive lists a package's ``__all__`` as a table whose
  entries link to the place where each object is documented (its defining
  module), so every object is documented once;
* a ``missing-reference`` handler resolves cross-references written with a
  re-exported path (``bayeval.Posterior``) to the documented one
  (``bayeval.core.posterior.Posterior``).
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the checkout, also when bayeval is not installed
os.environ.setdefault("MPLBACKEND", "Agg")  # importing bayeval.plots must not need a display

import bayeval  # noqa: E402

logger = logging.getLogger(__name__)

# -- Project -----------------------------------------------------------------

project = "bayeval"
author = "bayeval developers"
copyright = "bayeval developers"
release = bayeval.__version__
version = release

# -- General -----------------------------------------------------------------

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
nitpicky = False
# No suppress_warnings: the build is clean under -W without hiding any category.

# MyST: $...$ / $$...$$ math (rendered by MathJax), ::: fences, and anchors for
# ##-level headings so pages can link to each other's sections.
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# -- autodoc / napoleon ------------------------------------------------------

autodoc_default_options = {
    "members": True,
    "member-order": "bysource",
    "show-inheritance": False,
}
# The numpydoc "Parameters" sections already give every type; annotations in the
# signatures would repeat them (and many are postponed strings).
autodoc_typehints = "none"
autodoc_preserve_defaults = True
autoclass_content = "class"
autosummary_generate = False  # tables only; the objects are documented by automodule

napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_rtype = False
# "Attributes" sections are rendered like "Parameters" (a field list). The default
# (one ``.. attribute::`` per entry) documents properties a second time next to
# autodoc's entries, and ``napoleon_use_ivar`` turns every attribute name into an
# ambiguous cross-reference (``n_undecided`` exists on two classes).
napoleon_custom_sections = [("Attributes", "params_style")]
# Grouped parameters ("label, noisy_label : str") stay one entry instead of being
# repeated with the same text for each name.
napoleon_use_param = False
napoleon_preprocess_types = False

# -- HTML --------------------------------------------------------------------

html_theme = "alabaster"
html_title = f"bayeval {release}"
html_static_path: list[str] = []
html_theme_options = {
    "description": "Bayesian evaluation of classifiers when labels are scarce or noisy",
    "fixed_sidebar": False,
}
html_sidebars = {"**": ["about.html", "navigation.html", "relations.html", "searchbox.html"]}


# -- bayeval-module / bayeval-exports ---------------------------------------


def _import_or_none(modname: str):
    """The module, or None (with the reason) when it does not import."""
    try:
        return importlib.import_module(modname), None
    except Exception as exc:  # a module being written may fail in any way
        return None, f"{type(exc).__name__}: {exc}"


class BayevalModule(SphinxDirective):
    """``.. bayeval-module:: bayeval.x.y`` -- a section with the module's autodoc.

    The section's title is the module name. When the module does not import (it is
    not written yet, or it is broken), nothing is emitted and an info message says
    why; tests/test_docs.py checks that every module that imports has its section.
    """

    required_arguments = 1
    has_content = False
    option_spec = {"no-members": directives.flag}

    def run(self):
        modname = self.arguments[0].strip()
        module, reason = _import_or_none(modname)
        if module is None:
            logger.info(f"[bayeval-module] {modname} left out of the API reference ({reason})")
            return []
        lines = [modname, "=" * len(modname), "", f".. automodule:: {modname}"]
        if "no-members" in self.options:
            lines.append("   :no-members:")
        content = StringList(lines, source=self.get_source_info()[0])
        container = nodes.section()
        container.document = self.state.document
        nested_parse_with_titles(self.state, content, container)
        return container.children


def _canonical(obj, fallback: str) -> str:
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if isinstance(obj, type(bayeval)):
        return obj.__name__
    if module and qualname and module.startswith("bayeval"):
        return f"{module}.{qualname}"
    return fallback


class BayevalExports(SphinxDirective):
    """``.. bayeval-exports:: bayeval.models`` -- a table of the package's ``__all__``.

    Each entry links to the object's documentation in its defining module.
    """

    required_arguments = 1
    has_content = False

    def run(self):
        modname = self.arguments[0].strip()
        module, reason = _import_or_none(modname)
        if module is None:
            logger.warning(
                f"bayeval-exports: cannot import {modname} ({reason})", location=self.get_location()
            )
            return []
        names = []
        for attr in getattr(module, "__all__", []):
            obj = getattr(module, attr)
            if not (callable(obj) or isinstance(obj, type(bayeval))):
                continue  # constants are documented where they are defined
            names.append(f"   ~{_canonical(obj, f'{modname}.{attr}')}")
        content = StringList([".. autosummary::", "", *names], source=self.get_source_info()[0])
        container = nodes.container()
        # autosummary wants names relative to the current module; the entries are
        # full paths into *other* modules, so parse them outside any module.
        saved = self.env.ref_context.pop("py:module", None)
        try:
            self.state.nested_parse(content, self.content_offset, container)
        finally:
            if saved is not None:
                self.env.ref_context["py:module"] = saved
        return container.children


def _lookup(path: str):
    """The object at a dotted path: the longest importable module, then attributes."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        module, _ = _import_or_none(".".join(parts[:i]))
        if module is None:
            continue
        obj = module
        for attr in parts[i:]:
            obj = getattr(obj, attr, None)
            if obj is None:
                return None
        return obj.fget if isinstance(obj, property) else obj
    return None


def _resolve_reexport(app, env, node, contnode):
    """Resolve ``bayeval.Name`` (a re-export) to where ``Name`` is documented."""
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "")
    if not target.startswith("bayeval."):
        return None
    obj = _lookup(target)
    if obj is None:
        return None
    canonical = _canonical(obj, target)
    if canonical == target:
        return None
    domain = env.get_domain("py")
    return domain.resolve_xref(
        env, node["refdoc"], app.builder, node["reftype"], canonical, node, contnode
    )


def setup(app):
    app.add_directive("bayeval-module", BayevalModule)
    app.add_directive("bayeval-exports", BayevalExports)
    app.connect("missing-reference", _resolve_reexport)
    return {"parallel_read_safe": True}
