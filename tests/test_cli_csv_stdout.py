"""With ``--format csv`` stdout holds the table alone (it parses with pandas.read_csv and equals the
table); the sentences around it go to stderr. Also: select with every item vetted, a blank or padded
--annotator, and Ctrl-C."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bayeval.cli as cli
from bayeval.active import LabelStore
from bayeval.cli import main

ROOT = Path(__file__).resolve().parents[1]
BC = ROOT / "models" / "breast_cancer_logreg"
FAST = ["--draws", "150", "--tune", "150", "--chains", "2", "--no-progress"]


@pytest.fixture()
def scores_csv(tmp_path):
    rng = np.random.default_rng(0)
    n = 300
    y = (rng.random(n) < 0.3).astype(int)
    s = np.where(y == 1, rng.gamma(8, 0.1, n), rng.gamma(2, 0.1, n))
    s2 = s + rng.normal(0, 0.3, n)
    label = np.full(n, np.nan)
    label[:40] = y[:40]
    path = tmp_path / "scores.csv"
    pd.DataFrame({"item": [f"i{j}" for j in range(n)], "s": s, "s2": s2, "y": label}).to_csv(path, index=False)
    return path


def _csv(text: str, **kw) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text), **kw)


def test_compare_csv_is_one_table_holding_the_ranking_and_the_pairs(scores_csv, tmp_path, capsys):
    out_file = tmp_path / "pairs.csv"
    code = main(["compare", str(scores_csv), "--score", "s", "s2", "--label", "y", "--id", "item", "--draws", "100",
                 "--no-progress", "--format", "csv", "--out", str(out_file)])
    out = capsys.readouterr()
    assert code == 0
    table = _csv(out.out)  # the whole of stdout
    assert table.columns[0] == "table" and set(table["table"]) == {"ranking", "pairs"}
    ranking = table[table["table"] == "ranking"].dropna(axis=1, how="all")
    assert sorted(ranking["model"]) == ["s", "s2"] and "p_best" in ranking.columns
    pairs = table[table["table"] == "pairs"].dropna(axis=1, how="all").drop(columns="table").reset_index(drop=True)
    written = pd.read_csv(out_file)  # --out: the pairs alone
    assert set(pairs.columns) == set(written.columns)
    pd.testing.assert_frame_equal(pairs[written.columns], written, check_dtype=False)
    assert "average_precision" in out.err  # the title line, for a person


def test_threshold_table_csv_holds_only_the_table(scores_csv, capsys):
    code = main(["threshold", str(scores_csv), "--score", "s", "--label", "y", "--min-precision", "0.8", "--table",
                 "--format", "csv", *FAST])
    out = capsys.readouterr()
    assert code == 0
    table = _csv(out.out, index_col=0)
    assert table.index.name == "threshold" and len(table) > 100 and "p_constraint" in table.columns
    assert "threshold:" in out.err and "probability the constraint holds" in out.err


def test_select_store_csv_lists_the_pending_batch_as_a_csv(scores_csv, tmp_path, capsys):
    store = tmp_path / "st.sqlite"
    argv = ["select", str(scores_csv), "--score", "s", "--label", "y", "--id", "item", "--size", "4",
            "--strategy", "design", "--store", str(store), "--format", "csv", *FAST]
    assert main(argv) == 0
    first = _csv(capsys.readouterr().out)
    assert main(argv) == 0  # the batch is not labeled yet: the same items again
    out = capsys.readouterr()
    again = _csv(out.out)
    assert again.columns.tolist() == ["item"] and again["item"].tolist() == first["item"].tolist()
    assert again["item"].tolist() == LabelStore(store).pending() and "not fully labeled" in out.err


def test_report_csv_holds_only_the_metric_table(tmp_path, capsys):
    out_dir = tmp_path / "out"
    assert main(["report", str(BC), "--out", str(out_dir), "--format", "csv", *FAST]) == 0
    out = capsys.readouterr()
    table = _csv(out.out, index_col=0)
    assert "mean" in table.columns and len(table) >= 1
    assert f"html: {out_dir / 'report.html'}" in out.err


def test_select_with_every_item_vetted_says_so(tmp_path, capsys):
    path = tmp_path / "s.csv"
    path.write_text("id,score,label\na,0.9,1\nb,0.1,0\n")
    store = tmp_path / "st.sqlite"
    assert main(["select", str(path), "--score", "score", "--label", "label", "--id", "id", "--size", "1",
                 "--store", str(store), *FAST]) == 0
    out = capsys.readouterr()
    assert out.out == "" and "every item is vetted: nothing to select" in out.err
    assert len(LabelStore(store).batches()) == 0  # no empty batch recorded


def test_annotator_is_stripped_and_a_blank_one_refused(tmp_path, capsys):
    store, labels = tmp_path / "st.sqlite", tmp_path / "l.csv"
    labels.write_text("item,label\na,1\n")
    assert main(["label", str(store), str(labels), "--annotator", "   "]) == 2
    assert "--annotator must be a name" in capsys.readouterr().err and not store.exists()
    assert main(["label", str(store), str(labels), "--annotator", "ana "]) == 0
    labels.write_text("item,label\na,1\nb,0\n")
    assert main(["label", str(store), str(labels), "--annotator", "ana"]) == 0
    assert "recorded 1 new label(s)" in capsys.readouterr().out  # a's label by ana was there already
    assert LabelStore(store).labels()["annotator"].tolist() == ["ana", "ana"]


def test_ctrl_c_is_one_line_and_exit_130(scores_csv, monkeypatch, capsys):
    def interrupted(args, data):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_fit", interrupted)
    try:
        code = main(["fit", str(scores_csv), "--score", "s", "--label", "y", *FAST])
    except KeyboardInterrupt:
        pytest.fail("Ctrl-C came out of main() as a traceback")
    err = capsys.readouterr().err
    assert code == 130 and err.strip().endswith("bayeval: interrupted") and "Traceback" not in err
