"""Size limits of the package's code: no module over 1,500 lines, no function whose body
is over 150 lines of code.

A function's lines of code are the lines of its body without the docstring, blank lines
and comment-only lines (nested functions count in their parent too, and on their own).
A module's lines are its physical lines. Each room does one job; a function past the
limit does several and is split into helpers that say what each does.
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "bayeval"
MAX_MODULE_LINES = 1500
MAX_FUNCTION_LINES = 150


def code_lines(source: str) -> set[int]:
    """Line numbers that hold code: not blank, not only a comment."""
    lines = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
                            tokenize.DEDENT, tokenize.ENDMARKER):
            lines.update(range(tok.start[0], tok.end[0] + 1))
    return lines


def function_sizes(source: str, module: str = "m") -> dict[str, int]:
    """``{qualified name: lines of code of its body, docstring aside}`` of every function."""
    tree = ast.parse(source)
    code = code_lines(source)
    sizes: dict[str, int] = {}

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                body = child.body
                if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                        and isinstance(body[0].value.value, str)):
                    body = body[1:]
                name = f"{prefix}.{child.name}"
                if body:
                    span = range(body[0].lineno, child.end_lineno + 1)
                    sizes[name] = sum(1 for line in span if line in code)
                else:
                    sizes[name] = 0
                visit(child, name)
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}.{child.name}")
            else:
                visit(child, prefix)

    visit(tree, module)
    return sizes


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        name = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        yield name, path.read_text(encoding="utf-8")


def test_the_scanner_counts_code_not_docstrings_blanks_or_comments():
    src = '''
def f(x):
    """Doc.

    More doc.
    """
    # a comment

    y = (x +
         1)
    def g():
        return 1
    return y


class C:
    def m(self):
        """Only a docstring."""
'''
    sizes = function_sizes(src)
    assert sizes == {"m.f": 5, "m.f.g": 1, "m.C.m": 0}
    long_body = "def h():\n" + "".join(f"    a{i} = {i}\n" for i in range(151))
    assert function_sizes(long_body)["m.h"] == 151 > MAX_FUNCTION_LINES


def test_no_module_over_the_limit():
    over = {name: src.count("\n") for name, src in _modules() if src.count("\n") > MAX_MODULE_LINES}
    assert not over, f"modules over {MAX_MODULE_LINES} lines (split them by job): {over}"


def test_no_function_over_the_limit():
    sizes = {}
    for name, src in _modules():
        sizes.update(function_sizes(src, name))
    over = {name: n for name, n in sizes.items() if n > MAX_FUNCTION_LINES}
    assert not over, f"functions over {MAX_FUNCTION_LINES} lines of code (split them into helpers): {over}"
