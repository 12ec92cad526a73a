"""The one table reader (bayeval._tables) and the input checks moved into bayeval.core._validate."""

import ast
import pathlib

import numpy as np
import pandas as pd
import pytest

from bayeval._tables import MissingColumn, TableError, read_table, table_kind
from bayeval.core import _validate as V
from bayeval.core.posterior import check_posterior

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "bayeval"


def test_only_the_table_module_reads_tables():
    """No other module calls pandas' readers or np.loadtxt: every table goes through read_table."""
    readers = {"read_csv", "read_parquet", "read_table", "read_excel", "loadtxt", "genfromtxt"}
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "_tables.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in readers and isinstance(node.value, ast.Name) \
                    and node.value.id in ("pd", "pandas", "np", "numpy"):
                found.append(f"{path.relative_to(PACKAGE.parent)}: {node.value.id}.{node.attr}")
    assert not found, found


def test_read_csv_keeps_ids_as_text_and_labels_as_typed(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("id,s,y\n007,0.9,1\n7,0.2,\n8,0.4,NA\n")
    t = read_table(path, text_columns=["id", "absent"], raw_columns=["y", "absent"])
    assert t.frame["id"].tolist() == ["007", "7", "8"] and t.kind == "csv"
    assert t.raw["y"].tolist() == ["1", "", "NA"] and set(t.raw) == {"y"}
    assert t.where(0) == "line 2" and t.first_line == 2
    with pytest.raises(TableError, match=r"s\.csv: column 'y'.*line 4: 'NA'"):
        t.labels("y")


def test_tsv_parquet_and_the_kind_of_file(tmp_path):
    tsv = tmp_path / "s.tsv"
    tsv.write_text("s\ty\n0.5\t1\n0.1\t0\n")
    t = read_table(tsv, raw_columns=["y"])
    assert t.kind == "tsv" and t.labels("y").tolist() == [1.0, 0.0]
    assert [table_kind(p) for p in ("x.csv", "x.txt", "x.csv.gz", "x.PARQUET", "x.pq", "x.json")] == [
        "csv", "csv", "csv", "parquet", "parquet", None]
    pytest.importorskip("pyarrow")
    pq = tmp_path / "s.parquet"
    pd.DataFrame({"s": [0.5, 0.1], "y": [1.0, np.nan]}).to_parquet(pq)
    t = read_table(pq, raw_columns=["y"])
    assert t.kind == "parquet" and t.first_line is None and t.where(3) == "row 3"
    np.testing.assert_array_equal(t.labels("y"), [1.0, np.nan])


def test_errors_name_the_file_and_the_column(tmp_path):
    with pytest.raises(TableError, match="nope.csv: no such file"):
        read_table(tmp_path / "nope.csv")
    with pytest.raises(TableError, match="is a folder"):
        read_table(tmp_path)
    (tmp_path / "s.json").write_text("{}")
    with pytest.raises(TableError, match="unknown file type '.json'; give a .csv, .tsv or .parquet file"):
        read_table(tmp_path / "s.json")
    bad = tmp_path / "bad.csv"
    bad.write_text('a,b\n1,"2\n')
    with pytest.raises(TableError, match="bad.csv: could not be read as CSV"):
        read_table(bad)
    good = tmp_path / "g.csv"
    good.write_text("s,y\n0.1,1\n")
    t = read_table(good)
    with pytest.raises(MissingColumn, match=r"'score' \(--score\) is not a column of g.csv; its columns are \['s', 'y'\]") \
            as info:
        t.require({"--label": "y", "--score": "score"})
    assert info.value.column == "score" and info.value.role == "--score"
    t.require(["s", None])


def test_moved_checks_keep_their_messages():
    with pytest.raises(TypeError, match="must be a bayeval.Posterior"):
        check_posterior(object())
    assert V.as_category_mode(None, True) == "each" and V.as_category_mode(None, False) == "pooled"
    with pytest.raises(ValueError, match="needs an EvalData with categories; use 'pooled'"):
        V.as_category_mode("mean", False)
    assert V.as_item_mask(np.array([True, False]), 2).tolist() == [True, False]
    with pytest.raises(ValueError, match=r"positions outside 0 \.\. 2: 5"):
        V.as_item_mask([5], 3)
    with pytest.raises(TypeError, match="the string"):
        V.as_item_mask("0", 3)
    with pytest.raises(ValueError, match="`title` is empty: give it one"):
        V.as_text("  ", "title", fix="give it one")
    with pytest.raises(TypeError, match="`description` must be a string or None"):
        V.as_optional_text(3, "description")
    assert V.as_constraints(None) is None
    with pytest.raises(ValueError, match="unknown key"):
        V.as_constraints({"min_f1": 0.5})
    with pytest.raises(ValueError, match="sets no bound"):
        V.as_constraints({"prob": 0.9})
    with pytest.raises(ValueError, match="`truth` has 2 item"):
        V.as_full_labels([1, 0], 3)
    with pytest.raises(ValueError, match="allowed keys are \\['a'\\]"):
        V.check_keys({"b": 1}, ["a"])
    with pytest.raises(ValueError, match=r"finite probabilities in \[0, 1\]"):
        V.as_probability_vector([0.2, 1.5], 2, "p")
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        V.as_probability_vector([0.2, 0.5], 3, "p")
    np.testing.assert_array_equal(V.as_rng(3).random(2), np.random.default_rng(np.random.SeedSequence(3)).random(2))
    th = V.as_probability_array([[0.2, 1.0]], "theta", axis="n_pairs", per="item pair", meaning="m", fix_nonfinite="f")
    assert th.dtype == np.float64
    with pytest.raises(ValueError, match=r"theta must lie in \[0, 1\] \(m\); found 1 value\(s\) outside, e.g. \[2.0\] at 1"):
        V.as_probability_array([0.2, 2.0], "theta", axis="n_pairs", per="item pair", meaning="m", fix_nonfinite="f")
    with pytest.raises(ValueError, match=r"for every pair; found 1 other value\(s\) \(NaN included\).*\(0, 1\)\. Fix"):
        V.as_binary_array([[1, np.nan]], "r", 2, axis="n_pairs", per="pair", match="theta", one="a", zero="b",
                          fix="Fix.")
