"""The documentation builds with Sphinx, warnings as errors, and documents the API.

One HTML build (about 20-40 s, most of it importing PyMC) is shared by all tests in
this file. Skipped when Sphinx or myst-parser is not installed (the ``test`` extra
installs them).
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import bayeval

pytest.importorskip("sphinx")
pytest.importorskip("myst_parser")

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _imports(name: str) -> bool:
    try:
        importlib.import_module(name)
    except Exception:
        return False
    return True


# Public modules: the ones tests/test_docstrings.py checks (not private, not the CLI).
PUBLIC_MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(bayeval.__path__, "bayeval.")
    if not any(part.startswith("_") for part in m.name.split("."))
    and m.name not in ("bayeval.cli", "bayeval.metrics")  # the latter: bayeval.core.metrics, documented there
)


@pytest.fixture(scope="module")
def html(tmp_path_factory):
    """Build the HTML docs once; return the output folder."""
    out = tmp_path_factory.mktemp("docs_html")
    cmd = [
        sys.executable,
        "-m",
        "sphinx",
        "-W",
        "--keep-going",
        "-q",
        "-b",
        "html",
        str(DOCS),
        str(out),
    ]
    proc = subprocess.run(
        cmd, capture_output=True, text=True, env={**os.environ, "MPLBACKEND": "Agg"}
    )
    assert proc.returncode == 0, (
        f"sphinx-build failed (warnings are errors):\n{proc.stderr[-6000:]}"
    )
    return out


def _read(html: Path, page: str) -> str:
    path = html / page
    assert path.is_file(), f"{page} was not built"
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "page",
    [
        "index.html",
        "guide.html",
        "models.html",
        "validation.html",
        "api/index.html",
        "genindex.html",
    ],
)
def test_pages_exist(html, page):
    assert len(_read(html, page)) > 1000


def test_index_links_every_page(html):
    text = _read(html, "index.html")
    for target in ("guide.html", "models.html", "validation.html", "api/index.html"):
        assert f'href="{target}' in text, target


@pytest.mark.parametrize(
    ("page", "names"),
    [
        (
            "api/core.html",
            [
                "bayeval.core.data.EvalData",
                "bayeval.core.posterior.Posterior",
                "bayeval.core.evaluate.vetted_only",
            ],
        ),
        (
            "api/metrics.html",
            [
                "bayeval.core.metrics.average_precision",
                "bayeval.core.metrics.precision_at_k",
                "bayeval.core.metrics.roc_auc",
            ],
        ),
        (
            "api/models.html",
            [
                "bayeval.models.score_mixture.ScoreMixture",
                "bayeval.rankings.model.HumanRanking",
                "bayeval.annotators.model.AnnotatorError",
            ],
        ),
        ("api/active.html", ["bayeval.fscore.acis.acis", "bayeval.fscore.acis.ACISResult", "bayeval.fscore.bayesian.score_mixture_fscore"]),
        (
            "api/recalibrate.html",
            ["bayeval.recalibrate.recalibrate", "bayeval.recalibrate.Recalibration"],
        ),
        (
            "api/ranking.html",
            ["bayeval.rankings.percentile.ranking_percentile", "bayeval.rankings.percentile.estimate_theta"],
        ),
        ("api/annotator.html", ["bayeval.annotators.bounds.true_accuracy_bounds"]),
        ("api/plots.html", ["bayeval.plots.pr_curve", "bayeval.rankings.plots.percentile_table"]),
        ("api/datasets.html", ["bayeval.datasets.load_breast_cancer_scores"]),
    ],
)
def test_api_pages_document_key_functions(html, page, names):
    text = _read(html, page)
    for name in names:
        # autodoc gives every documented object an anchor with its full name
        assert f'id="{name}"' in text, f"{name} is not documented on {page}"


def test_every_public_module_that_imports_is_documented(html):
    """Adding a module without its ``.. bayeval-module::`` line in docs/api/ fails here."""
    built = "".join(p.read_text(encoding="utf-8") for p in (html / "api").glob("*.html"))
    missing = [m for m in PUBLIC_MODULES if _imports(m) and f'id="module-{m}"' not in built]
    assert not missing, (
        f"modules without an API section (add `.. bayeval-module:: NAME` in docs/api/): {missing}"
    )


def test_top_level_page_links_every_export(html):
    text = _read(html, "api/bayeval.html")
    for name in bayeval.__all__:
        obj = getattr(bayeval, name)
        target = obj.__name__ if name == "metrics" else f"{obj.__module__}.{obj.__qualname__}"
        assert re.search(rf'href="[^"]*#(module-)?{re.escape(target)}"', text), (
            f"bayeval.{name} -> {target} not linked"
        )


def test_objects_are_documented_once(html):
    """Re-exported names link to one description instead of being documented twice."""
    built = "".join(p.read_text(encoding="utf-8") for p in (html / "api").glob("*.html"))
    assert built.count('id="bayeval.core.posterior.Posterior"') == 1
    assert 'id="bayeval.Posterior"' not in built


def test_models_page_has_math(html):
    text = _read(html, "models.html")
    assert "mathjax" in text.lower()
    assert 'class="math' in text


def test_validation_page_quotes_results_files():
    """The validation page cites every stored benchmark result it summarizes."""
    text = (DOCS / "validation.md").read_text(encoding="utf-8")
    results = DOCS.parent / "benchmarks" / "results"
    for md in sorted(results.glob("*.md")):
        assert f"benchmarks/results/{md.name}" in text, (
            f"{md.name} is not summarized in docs/validation.md"
        )


def test_readme_python_snippets_run_and_point_inside_the_repository():
    import re

    readme = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert blocks
    for code in blocks:  # every name is defined in the snippet itself
        exec(compile(code, "README.md", "exec"), {})
    assert "shared folder" not in readme and "DESIGN.md" not in readme
    assert "pip install -c constraints.txt -e ." in readme and (DOCS.parent / "constraints.txt").is_file()
    assert "chromedriver" in readme
    for path in (DOCS.parent / "bayeval").rglob("*.py"):
        assert "shared/papers" not in path.read_text(encoding="utf-8"), path
