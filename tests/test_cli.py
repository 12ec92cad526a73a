"""The ``bayeval`` command: every subcommand, its --help, and clear failures on bad input."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

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
    label = np.full(n, np.nan)
    label[:40] = y[:40]
    df = pd.DataFrame({"item": [f"i{j}" for j in range(n)], "s": s, "y": label, "truth": y})
    path = tmp_path / "scores.csv"
    df.to_csv(path, index=False)
    return path, df


@pytest.mark.parametrize("command", ["report", "fit", "threshold", "select", "label", "export-labels", "repair-store",
                                     "demo"])
def test_every_command_has_help(command, capsys):
    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: bayeval {command}")


def test_module_entry_point_reports_bad_usage():
    res = subprocess.run([sys.executable, "-m", "bayeval", "nope"], capture_output=True, text=True)
    assert res.returncode != 0 and "invalid choice" in res.stderr


def test_fit_prints_the_summary_table_and_writes_csv(scores_csv, tmp_path, capsys):
    path, _ = scores_csv
    out_csv = tmp_path / "summary.csv"
    code = main(["fit", str(path), "--score", "s", "--label", "y", "--id", "item", "--metric",
                 "average_precision", "precision_at_k", "--k", "20", "--out", str(out_csv), *FAST])
    assert code == 0
    out = capsys.readouterr().out
    assert "average_precision" in out and "precision_at_k[k=20]" in out and "vetted_only" in out
    table = pd.read_csv(out_csv, index_col=0)
    assert list(table.index) == ["average_precision", "precision_at_k[k=20]"]
    assert ((table["hdi_5%"] <= table["mean"]) & (table["mean"] <= table["hdi_95%"])).all()


def test_threshold_recommends_a_threshold(scores_csv, capsys):
    path, _ = scores_csv
    code = main(["threshold", str(path), "--score", "s", "--label", "y", "--min-precision", "0.8", *FAST])
    assert code == 0
    out = capsys.readouterr().out
    t = float(next(line for line in out.splitlines() if line.startswith("threshold:")).split()[1])
    assert 0 < t < 3
    assert "probability the constraint holds" in out


def test_select_and_label_round_trip_through_a_store(scores_csv, tmp_path, capsys):
    path, df = scores_csv
    store = tmp_path / "labels.sqlite"
    code = main(["select", str(path), "--score", "s", "--label", "y", "--id", "item", "--size", "5",
                 "--strategy", "uncertainty", "--store", str(store), *FAST])
    assert code == 0
    out = capsys.readouterr().out
    picked = [line.split()[0] for line in out.splitlines()[2:] if line.strip()]
    assert len(picked) == 5 and all(p.startswith("i") for p in picked)
    assert not set(picked) & set(df["item"][:40])  # never a vetted item
    with LabelStore(store) as st:
        assert st.pending() == picked
    # answer them from a CSV, with one bad row and one unknown id
    answers = pd.DataFrame({"item": picked + ["nope"], "label": [1, 0, 1, "maybe", 0, 1]})
    answers.to_csv(tmp_path / "answers.csv", index=False)
    code = main(["label", str(store), str(tmp_path / "answers.csv"), "--annotator", "me",
                 "--scores", str(path), "--score", "s", "--scores-id", "item"])
    err = capsys.readouterr().err
    assert code == 2 and "line 5" in err and "'maybe'" in err and "unknown item id" in err
    with LabelStore(store) as st:
        labels = st.labels()
    assert labels["item"].tolist() == [picked[0], picked[1], picked[2], picked[4]]  # valid rows kept
    assert labels["value"].tolist() == [1, 0, 1, 0] and set(labels["annotator"]) == {"me"}
    # the next selection resumes the unfinished batch
    code = main(["select", str(path), "--score", "s", "--label", "y", "--id", "item", "--size", "5",
                 "--store", str(store), *FAST])
    assert code == 0 and capsys.readouterr().out.split() == [picked[3]]


@pytest.mark.parametrize(
    "args, message",
    [
        (["fit", "missing.csv", "--score", "s", "--label", "y"], "no such file"),
        (["fit", "{path}", "--score", "nope", "--label", "y"], "not a column"),
        (["fit", "{bad}", "--score", "s", "--label", "y"], "line 3: 'yes'"),  # not "nan"
        (["threshold", "{path}", "--score", "s", "--label", "y"], "--min-precision"),
        (["fit", "{txt}", "--score", "s", "--label", "y"], "unknown file type"),
        (["report", "{tmp}"], "card.toml"),
    ],
)
def test_bad_input_is_one_clear_line_and_exit_2(args, message, scores_csv, tmp_path, capsys):
    path, df = scores_csv
    bad = tmp_path / "bad.csv"
    df.assign(y=df["y"].astype(object).where(df["y"].notna(), "")).assign(y=lambda d: d["y"].replace({1.0: "yes"})).to_csv(bad, index=False)
    txt = tmp_path / "scores.xlsx"
    txt.write_text("x")
    argv = [a.format(path=path, bad=bad, txt=txt, tmp=tmp_path) for a in args]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("bayeval: error:") and message in err


def test_report_renders_a_card(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")  # an 80-column terminal; capsys: the output is piped
    out = tmp_path / "out"
    code = main(["report", str(BC), "--out", str(out), *FAST])
    assert code == 0
    html = (out / "report.html").read_text()
    assert "Breast-cancer logistic regression" in html and "<table" in html
    assert (out / "report.md").exists() and list((out / "figures").glob("*.png"))
    captured = capsys.readouterr()
    assert "report.html" in captured.out
    # the printed metric table keeps its interval (it dropped the HDI columns at 80 columns)
    assert "90% HDI" in captured.out and "..." not in captured.out
    table = captured.out.split("report.html:")[0].splitlines()
    assert len(table) >= 3 and all(len(line) <= 80 for line in table)
    # no silent minute after sampling: each rendering step is announced on stderr
    assert "report: metric table" in captured.err and "report: writing" in captured.err
    md = (out / "report.md").read_text()
    assert "PyMC" in md and "SHA-256" in md and "scores.csv SHA-256" in md  # reproducible


def test_demo_prints_a_summary(capsys):
    assert main(["demo", "--draws", "150", "--random-seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "average precision" in out and "hdi_5%" in out and "truth" in out
    assert "vetted n" in out  # how many vetted items each vetted-only value rests on


def test_fit_gives_each_vetted_only_value_with_the_vetted_items_it_rests_on(scores_csv, tmp_path, capsys,
                                                                           monkeypatch):
    """`bayeval fit` printed `vetted_only` without the count of vetted items behind it (the report's
    table has `vetted_only_n`): precision at a threshold may rest on a handful of flagged items."""
    path, df = scores_csv
    t = float(np.quantile(df["s"], 0.8))
    args = ["fit", str(path), "--score", "s", "--label", "y", "--metric", "average_precision", "precision",
            "recall", "precision_at_k", "--k", "10", "50", "--threshold", str(t), *FAST]
    vetted = df[df["y"].notna()]
    flagged, positives = int((vetted["s"] >= t).sum()), int((vetted["y"] == 1).sum())
    expected = [40, flagged, positives, 10, 0]  # P@50: fewer than 50 vetted, undefined
    out_csv = tmp_path / "t.csv"
    monkeypatch.setenv("COLUMNS", "200")  # one line a row: the threshold's digits make the names long
    assert main([*args, "--out", str(out_csv)]) == 0
    out = capsys.readouterr().out
    table = pd.read_csv(out_csv, index_col=0)
    assert table["vetted_only_n"].tolist() == expected
    assert np.isnan(table["vetted_only"].iloc[-1])
    assert "vetted_only (n)" in out
    for (name, row), n in zip(table.iterrows(), expected, strict=True):  # the value and its count in one cell
        value = "NaN" if np.isnan(row["vetted_only"]) else f"{row['vetted_only']:.4f}"
        assert f"{value} ({n})" in next(line for line in out.splitlines() if line.startswith(name)), name


def test_select_reads_parquet(scores_csv, tmp_path, capsys):
    pytest.importorskip("pyarrow")  # a test dependency (pyproject's `test` extra)
    _, df = scores_csv
    pq = tmp_path / "scores.parquet"
    df.to_parquet(pq)
    code = main(["select", str(pq), "--score", "s", "--label", "y", "--id", "item", "--size", "3",
                 "--strategy", "random", *FAST])
    assert code == 0
    picked = [line.split()[0] for line in capsys.readouterr().out.splitlines()[2:] if line.strip()]
    assert len(picked) == 3 and not set(picked) & set(df["item"][:40])


def test_select_says_how_to_read_its_expected_change_column(scores_csv, capsys):
    """The column is each item's change alone while the batch is chosen greedily: it need not
    decrease down the table, which looked like a bug."""
    path, _ = scores_csv
    for strategy, exploring in (("expected_change", False), ("auto", True)):
        assert main(["select", str(path), "--score", "s", "--label", "y", "--id", "item", "--size", "4",
                     "--strategy", strategy, *FAST]) == 0
        err = capsys.readouterr().err
        assert "the batch is chosen greedily, each item given the ones before it" in err
        assert ("exploring share" in err) == exploring
    assert main(["select", str(path), "--score", "s", "--label", "y", "--id", "item", "--size", "4",
                 "--strategy", "random", *FAST]) == 0
    assert "greedily" not in capsys.readouterr().err


# ------------------------------------------------- labels: one parser, loud failures


def test_na_label_cells_in_a_scores_file_fail_loudly_with_lines(scores_csv, tmp_path, capsys):
    _, df = scores_csv
    bad = tmp_path / "na.csv"
    y = df["y"].map({1.0: "1", 0.0: "0"}).fillna("")
    y[[3, 7, 9]] = ["NA", "n/a", "null"]  # typed by a person: never "not vetted"
    df.assign(y=y).to_csv(bad, index=False)
    assert main(["fit", str(bad), "--score", "s", "--label", "y", *FAST]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bayeval: error:") and "3 row(s)" in err
    assert "line 5: 'NA'" in err and "line 9: 'n/a'" in err and "line 11: 'null'" in err


def test_true_false_in_any_case_are_labels_everywhere(tmp_path):
    from bayeval.cli import _read_table

    path = tmp_path / "s.csv"
    path.write_text("s,y\n0.9,TRUE\n0.8,True\n0.2,false\n0.5,\n0.1,0\n")
    df = _read_table(str(path), label_columns=["y"])
    assert df["y"].tolist()[:3] == [1.0, 1.0, 0.0] and np.isnan(df["y"][3]) and df["y"][4] == 0.0


def _label(store, csv, *extra):
    return main(["label", str(store), str(csv), *extra])


def test_label_command_rejects_na_with_its_line(tmp_path, capsys):
    csv = tmp_path / "answers.csv"
    csv.write_text("item,label\na,1\nb,NA\nc,TRUE\nd,yes\ne,\n")
    assert _label(tmp_path / "s.db", csv) == 2
    err = capsys.readouterr().err
    assert "line 3, item 'b'" in err and "'NA'" in err and "line 5, item 'd'" in err
    assert "line 6, item 'e': empty label" in err
    with LabelStore(tmp_path / "s.db") as st:
        assert st.resolved().to_dict() == {"a": 1, "c": 1}


def test_importing_the_same_file_twice_is_a_no_op(tmp_path, capsys):
    csv = tmp_path / "answers.csv"
    csv.write_text("item,label\na,1\nb,0\nc,1\n")
    store = tmp_path / "s.db"
    assert _label(store, csv, "--annotator", "ana") == 0
    assert _label(store, csv, "--annotator", "ana") == 0
    out = capsys.readouterr().out
    assert "recorded 0 new label(s)" in out and "3 were already in the store" in out
    with LabelStore(store) as st:
        assert len(st) == 3


def test_conflicting_labels_in_one_file_are_an_error_listing_them(tmp_path, capsys):
    csv = tmp_path / "answers.csv"
    csv.write_text("item,label\nw003,1\nw004,1\nw005,0\nw004,0\n")
    assert _label(tmp_path / "s.db", csv) == 2
    err = capsys.readouterr().err
    assert "item 'w004': conflicting labels in this file (line 3: 1, line 5: 0)" in err
    with LabelStore(tmp_path / "s.db") as st:
        assert st.resolved().to_dict() == {"w003": 1, "w005": 0}  # w004 not recorded


def test_ids_are_read_as_strings(tmp_path, capsys):
    csv = tmp_path / "answers.csv"
    csv.write_text("item,label\n007,1\n7,0\n")
    assert _label(tmp_path / "s.db", csv) == 0  # two items, not a conflict on item 7
    with LabelStore(tmp_path / "s.db") as st:
        assert st.resolved().to_dict() == {"007": 1, "7": 0}
    from bayeval.cli import _load_data
    import argparse

    scores = tmp_path / "scores.csv"
    scores.write_text("id,s,y\n007,0.9,1\n7,0.1,0\n")
    data = _load_data(argparse.Namespace(scores=str(scores), score="s", label="y", noisy_label=None,
                                         category=None, item_id="id"))
    assert data.item_ids.tolist() == ["007", "7"]


def test_damaged_store_refuses_label_and_select_and_exports(scores_csv, tmp_path, capsys):
    import random

    store = tmp_path / "labels.db"
    with LabelStore(store) as st:
        st.add([f"w{i:04d}" for i in range(1000)], [i % 2 for i in range(1000)])
    size = store.stat().st_size
    with open(store, "r+b") as fh:
        fh.seek(size // 2)
        fh.write(random.Random(0).randbytes(4096))
    csv = tmp_path / "answers.csv"
    csv.write_text("item,label\nw9999,1\n")
    assert _label(store, csv) == 2
    err = capsys.readouterr().err
    assert "damaged" in err and "export-labels" in err and "recorded" not in err
    path, _ = scores_csv
    # refused before any fit: the sampler's "Fitting" line is never printed
    assert main(["select", str(path), "--score", "s", "--size", "2", "--store", str(store), *FAST]) == 2
    assert "Fitting" not in capsys.readouterr().err
    out = tmp_path / "saved.csv"
    assert main(["export-labels", str(store), str(out)]) == 0
    assert "label row(s)" in capsys.readouterr().out
    saved = pd.read_csv(out)
    assert len(saved) > 0 and {"item", "value", "annotator"} <= set(saved.columns)


def test_the_export_goes_back_into_a_new_store_row_for_row(tmp_path, capsys):
    """The recovery route the damaged-store error prints: `bayeval export-labels`, then `bayeval
    label NEW export.csv`. It used to reject an annotator's own correction as "conflicting labels
    in this file", read int ids as text and give every row one --annotator."""
    old, new = tmp_path / "old.db", tmp_path / "new.db"
    with LabelStore(old) as st:
        st.add([3, 5, "007"], [1, 0, 1], annotator="ana")
        st.add([5], [1], annotator="ana")  # ana corrects herself
        st.add([5], [0], annotator="ben")
    out = tmp_path / "export.csv"
    assert main(["export-labels", str(old), str(out)]) == 0
    capsys.readouterr()
    assert main(["label", str(new), str(out)]) == 0
    assert "restored 5 label row(s) of 3 item(s) by 2 annotator(s)" in capsys.readouterr().out
    with LabelStore(old) as a, LabelStore(new) as b:
        cols = ["item", "value", "annotator"]
        assert b.labels()[cols].values.tolist() == a.labels()[cols].values.tolist()
        assert b.resolved().to_dict() == a.resolved().to_dict() == {3: 1, 5: 0, "007": 1}
    # into a store that holds labels already: refused (no row twice), and --annotator does not apply
    assert main(["label", str(new), str(out)]) == 2
    assert "holds 5 label(s) already" in capsys.readouterr().err
    assert main(["label", str(tmp_path / "other.db"), str(out), "--annotator", "zoe"]) == 2
    assert "--annotator does not apply" in capsys.readouterr().err


# ------------------------------------------------- options checked before any fit


@pytest.mark.parametrize(
    "extra, message",
    [
        (["fit", "--hdi-prob", "94"], "--hdi-prob must be a probability between 0 and 1 (exclusive), got 94; did you mean 0.94?"),
        (["fit", "--metric", "precision"], "--metric precision needs a decision: give --threshold T"),
        (["fit", "--out", "{tmp}"], "--out {tmp}: is a folder"),
        (["fit", "--out", "{tmp}/no/such/x.csv"], "does not exist"),
        (["fit", "--draws", "0"], "--draws must be an integer >= 1"),
        (["fit", "--k", "0", "--metric", "precision_at_k"], "--k must be a whole number >= 1"),
        (["fit", "--draws", "100000000"], "--draws: 2 chains x 100000000 draws would need about"),
        (["threshold", "--min-precision", "95"], "--min-precision must be a probability between 0 and 1, got 95; did you mean 0.95?"),
        (["select", "--size", "0"], "--size must be an integer >= 1"),
    ],
)
def test_options_are_checked_before_the_fit_with_flag_names(extra, message, scores_csv, tmp_path, capsys):
    path, _ = scores_csv
    cmd, *rest = extra
    argv = [cmd, str(path), "--score", "s", "--label", "y", *[a.format(tmp=tmp_path) for a in rest]]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Fitting" not in err  # refused before sampling started
    assert err.startswith("bayeval: error:") and message.format(tmp=tmp_path) in err, err
    for python_name in ("threshold=", "out_dir", "hdi_prob", "new_batch()", "fit()"):
        assert python_name not in err


def test_max_memory_gb_raises_the_limit_for_one_run_only(scores_csv, tmp_path, capsys, monkeypatch):
    import os

    from bayeval.core._validate import MAX_MEMORY_ENV

    monkeypatch.delenv(MAX_MEMORY_ENV, raising=False)
    path, _ = scores_csv
    # passes the size check, then fails on the next check (the missing folder): nothing is fitted
    argv = ["fit", str(path), "--score", "s", "--label", "y", "--draws", "100000000",
            "--max-memory-gb", "1000", "--out", str(tmp_path / "no" / "x.csv")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "does not exist" in err and "GB" not in err
    assert MAX_MEMORY_ENV not in os.environ


def test_report_out_pointing_to_a_file_fails_before_the_fit(tmp_path, capsys):
    f = tmp_path / "report.html"
    f.write_text("x")
    assert main(["report", str(BC), "--out", str(f), *FAST]) == 2
    err = capsys.readouterr().err
    assert "is a file" in err and "fitting" not in err.lower().split("error")[0]


def test_report_refuses_huge_draws_before_the_fit(capsys):
    assert main(["report", str(BC), "--draws", "100000000", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "--draws/--chains" in err and "GB of memory" in err and "--max-memory-gb" in err


def test_one_class_of_vetted_labels_is_named(capsys):
    from bayeval import EvalData
    from bayeval.cli import _warn_one_class

    _warn_one_class(EvalData([0.9, 0.8, 0.1], [1, 1, np.nan]))
    assert "no vetted negatives" in capsys.readouterr().err
    _warn_one_class(EvalData([0.9, 0.8, 0.1], [np.nan, 0, 0]))
    assert "no vetted positives" in capsys.readouterr().err
    _warn_one_class(EvalData([0.9, 0.8, 0.1], [1, 0, np.nan]))
    assert capsys.readouterr().err == ""


def test_label_answers_int_ids_of_an_older_store(tmp_path, capsys):
    store = tmp_path / "s.db"
    with LabelStore(store) as st:  # ids recorded as ints, as older versions did
        st.new_batch([5, 7])
    csv = tmp_path / "answers.csv"
    csv.write_text("item,label\n5,1\n007,0\n")
    assert _label(store, csv) == 0
    with LabelStore(store) as st:
        assert st.resolved().to_dict() == {5: 1, "007": 0} and st.pending() == [7]


def test_text_in_the_score_column_is_shown_with_its_line(tmp_path, capsys):
    bad = tmp_path / "s.csv"
    bad.write_text("s,y\n0.049639,1\n0.2,0\nhigh,\n0.7,\n")
    assert main(["fit", str(bad), "--score", "s", "--label", "y"]) == 2
    err = capsys.readouterr().err
    assert "1 value(s) are not numbers: line 4: 'high'" in err and "0.049639" not in err


def test_threshold_with_prob_uses_the_default_model(scores_csv, capsys):
    path, _ = scores_csv
    code = main(["threshold", str(path), "--score", "s", "--label", "y", "--min-precision", "0.8",
                 "--prob", "0.9", *FAST])
    assert code == 0
    out = capsys.readouterr()
    assert "Fitting default" in out.err
    assert "threshold:" in out.out and "precision >= 0.8" in out.out
    assert "Recalibration(" not in out.out  # the verdict once, in words (the repr said it again)
    assert main(["threshold", str(path), "--score", "s", "--label", "y", "--min-precision", "0.8",
                 "--prob", "90"]) != 0
    err = capsys.readouterr().err
    assert "--prob" in err and "did you mean 0.9" in err and "Fitting" not in err  # checked before the fit


def test_threshold_table_is_the_per_threshold_table_with_intervals_as_one_column(scores_csv, capsys, monkeypatch):
    """`threshold --table` printed each HDI as two columns in pandas' layout, and its help said it
    printed precision/recall at the recommended threshold (it prints one row per threshold)."""
    with pytest.raises(SystemExit):
        main(["threshold", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "one row per candidate threshold" in help_text and "at the recommended threshold" not in help_text
    path, _ = scores_csv
    monkeypatch.setenv("COLUMNS", "200")
    argv = ["threshold", str(path), "--score", "s", "--label", "y", "--min-precision", "0.8", "--table", *FAST]
    assert main([*argv, "--format", "csv"]) == 0
    out = capsys.readouterr().out
    table = pd.read_csv(pd.io.common.StringIO(out[out.index("threshold,"):]), index_col=0)
    assert {"precision_hdi_5%", "precision_hdi_95%", "recall_hdi_5%", "recall_hdi_95%"} <= set(table.columns)
    assert len(table) > 100  # one row per candidate threshold
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    head = next(i for i, line in enumerate(lines) if "p_constraint" in line)
    assert "precision 90% HDI" in lines[head] and "recall 90% HDI" in lines[head] and "hdi_" not in lines[head]
    rows = lines[head + 2:]
    assert len(rows) == len(table) and all(row.count("[") == 2 for row in rows)
    assert all(len(line) <= 200 for line in lines[head:])


def test_help_says_the_token_length_and_selects_metric_and_k(capsys):
    """`vet --help` did not say --token needs 16 characters; `select --help` showed --metric
    without a description or default, and --k as "k for precision_at_k" alone."""
    helps = {}
    for command in ("vet", "select"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        helps[command] = " ".join(capsys.readouterr().out.split())
    assert "at least 16 characters" in helps["vet"].split("--token TOKEN")[-1]
    sel = helps["select"]
    metric = sel.split("--metric {average_precision,precision_at_k,recall_at_k,roc_auc} ")[-1].split("--k K")[0]
    assert "(default average_precision)" in metric and len(metric) > 40
    assert "k for precision_at_k/recall_at_k (default 10)" in sel


def test_select_lists_every_item_of_a_large_batch(scores_csv, capsys):
    """A table longer than pandas' row limit was cut to 10 rows and "...": `select --size 600`
    must list all 600 items it chose (every table prints every row)."""
    path, df = scores_csv
    big = path.with_name("big.csv")
    pd.concat([df] * 3, ignore_index=True).assign(item=lambda d: [f"j{i}" for i in range(len(d))]).to_csv(big, index=False)
    code = main(["select", str(big), "--score", "s", "--label", "y", "--id", "item", "--size", "600",
                 "--strategy", "random", *FAST])
    assert code == 0
    out = capsys.readouterr().out
    listed = [line.split()[0] for line in out.splitlines() if line.startswith("j")]
    assert len(listed) == 600 and len(set(listed)) == 600 and "..." not in out


def test_threshold_no_draw_meets_gives_its_advice_once(scores_csv, capsys):
    """With no posterior draw meeting the constraint the verdict itself says to relax it or vet more;
    the warning line used to repeat that advice."""
    path, _ = scores_csv
    code = main(["threshold", str(path), "--score", "s", "--label", "y", "--min-precision", "0.999",
                 "--min-recall", "0.99", *FAST])
    assert code == 0
    captured = capsys.readouterr()
    warning = next(line for line in captured.err.splitlines() if line.startswith("warning: No threshold meets"))
    assert warning.lower().count("relax the constraint or vet more items") == 1
    assert "does NOT meet the constraint" in captured.out


def test_fit_precision_of_a_rule_that_flags_nothing_is_nan_with_its_caveat(scores_csv, capsys):
    """`fit --metric precision --threshold T` with no score >= T printed 0.0000 [0, 0] while vetted_only was NaN."""
    path, df = scores_csv
    t = float(df["s"].max()) + 1
    code = main(["fit", str(path), "--score", "s", "--label", "y", "--metric", "precision", "recall",
                 "--threshold", str(t), "--format", "csv", *FAST])
    assert code == 0
    out = capsys.readouterr()
    table = pd.read_csv(pd.io.common.StringIO(out.out[out.out.index("metric,"):]), index_col=0)
    shown = repr(t).removesuffix(".0")  # the threshold as given
    row = table.loc[f"precision[t={shown}]"]
    assert row[["mean", "hdi_5%", "hdi_95%", "vetted_only"]].isna().all()
    assert table.loc[f"recall[t={shown}]", "mean"] == 0  # defined: no positive is found
    caveat = next(line for line in out.err.splitlines() if line.startswith(f"caveat: precision[t={shown}]"))
    assert "flags no item" in caveat


def test_fit_labels_its_rows_with_the_threshold_applied_not_a_rounded_one(tmp_path, capsys):
    """`fit --threshold 0.99999996` labelled its rows `precision[t=1]` (and `0.999999996`, which
    flags no item, too), and the caveat read "the threshold 1 flags no item: it lies above every
    score (max 1)"; `post.summary` gave two thresholds one label `recall[threshold=1]`."""
    from bayeval.core.evaluate import metric_items
    from bayeval.core.summary import threshold_caveats

    rng = np.random.default_rng(0)
    s = np.r_[rng.random(57) * 0.9, 0.99999991, 0.99999995, 0.99999999]
    y = np.where(np.arange(60) % 3 == 0, (s > 0.5).astype(int).astype(str), "")
    path = tmp_path / "s.csv"
    path.write_text("s,y\n" + "".join(f"{float(a)!r},{b}\n" for a, b in zip(s, y, strict=True)))
    base = ["fit", str(path), "--score", "s", "--label", "y", "--metric", "precision", "recall", "--format", "csv",
            "--draws", "20", "--tune", "20", "--chains", "1", "--no-progress", "--threshold"]
    assert main([*base, "0.99999996"]) == 0
    out = capsys.readouterr().out
    assert "precision[t=0.99999996]," in out and "recall[t=0.99999996]," in out and "[t=1]" not in out
    assert main([*base, "0.999999996"]) == 0
    err = capsys.readouterr().err
    assert ("the threshold 0.999999996 flags no item: it lies above every score (max 0.99999999)" in err), err
    labels = [lab for lab, _, _ in metric_items([("recall", {"threshold": 0.99999996}),
                                                 ("recall", {"threshold": 0.99999994}), ("recall", {"threshold": 0.5})])]
    assert labels == ["recall[threshold=0.99999996]", "recall[threshold=0.99999994]", "recall[threshold=0.5]"]
    (said,) = threshold_caveats([0.3, 0.5], [("r", 0.2999999)])
    assert "the threshold 0.2999999 flags every item: it lies at or below every score (min 0.3)" in said


def test_fit_at_a_percent_threshold_on_probabilities_says_it_flags_no_item(scores_csv, tmp_path, capsys):
    """`fit --metric f_score recall --threshold 50` on scores in [0, 1] printed 0.0000 [0.0000, 0.0000]
    with no word (only precision had a caveat): the threshold lies above every score. Each metric
    at such a threshold is named, with the top score and the percent it was likely meant as."""
    path, df = scores_csv
    p = df["s"] / (1 + df["s"])  # probabilities: every score below 1
    df.assign(s=p).to_csv(tmp_path / "p.csv", index=False)
    code = main(["fit", str(tmp_path / "p.csv"), "--score", "s", "--label", "y", "--metric", "f_score", "recall",
                 "--threshold", "50", *FAST])
    assert code == 0
    out = capsys.readouterr()
    (caveat,) = [line for line in out.err.splitlines() if line.startswith("caveat:")]
    assert caveat.startswith("caveat: f_score[t=50] and recall[t=50]: the threshold 50 flags no item: it lies "
                             f"above every score (max {p.max():.4g})")
    assert caveat.endswith("did you mean 0.5?")
    assert main(["fit", str(tmp_path / "p.csv"), "--score", "s", "--label", "y", "--metric", "recall",
                 "--threshold", "0.5", *FAST]) == 0
    assert "caveat:" not in capsys.readouterr().err  # a threshold within the scores: nothing to say


def test_fit_compare_and_select_refuse_a_k_above_the_number_of_items_before_fitting(tmp_path, capsys):
    """`--metric precision_at_k --k 5000` on fewer items was fitted, then read with the missing
    places of the top counted as negatives."""
    path = tmp_path / "s.csv"
    path.write_text("s,t,y\n" + "".join(f"{j / 20},{1 - j / 20},{'1' if j > 15 else ('0' if j < 4 else '')}\n"
                                        for j in range(20)))
    for argv in (["fit", str(path), "--score", "s", "--label", "y", "--metric", "precision_at_k", "--k", "10", "50"],
                 ["compare", str(path), "--score", "s", "t", "--label", "y", "--metric", "precision_at_k", "--k", "21"],
                 ["select", str(path), "--score", "s", "--label", "y", "--metric", "precision_at_k", "--k", "30",
                  "--size", "2"]):
        assert main([*argv, "--draws", "20"] if argv[0] != "select" else argv) == 2
        err = capsys.readouterr().err
        assert "is more than the 20 items" in err and "Nothing was fitted" in err, (argv, err)


def test_fit_compare_and_select_refuse_a_recall_at_k_above_the_items_and_a_k_above_a_categorys(tmp_path, capsys):
    """`--metric recall_at_k --k 50` on 20 items was fitted (recall 1 in every draw), and `--k 8` with a
    category of 5 items was fitted per category: only precision_at_k above all the items was refused."""
    path = tmp_path / "s.csv"
    path.write_text("s,t,y,c\n" + "".join(
        f"{j / 20},{1 - j / 20},{'1' if j > 15 else ('0' if j < 4 else '')},{'a' if j < 15 else 'b'}\n"
        for j in range(20)))
    base = [str(path), "--score", "s", "--label", "y"]
    for argv, said in (
            (["fit", *base, "--metric", "recall_at_k", "--k", "50"], "recall_at_k: `--k` = 50 is more than the 20"),
            (["compare", str(path), "--score", "s", "t", "--label", "y", "--metric", "recall_at_k", "--k", "21"],
             "recall_at_k: `--k` = 21 is more than the 20 items"),
            (["select", *base, "--metric", "recall_at_k", "--k", "30", "--size", "2"], "recall would be 1"),
            (["fit", *base, "--category", "c", "--metric", "precision_at_k", "--k", "8"],
             "'b' (5 items); it is computed per category"),
            (["fit", *base, "--category", "c", "--metric", "recall_at_k", "--k", "8", "--category-mode", "mean"],
             "or --category-mode pooled for the top of all 20 items"),
            (["fit", *base, "--category", "c", "--metric", "precision_at_k", "--k", "8", "--per-category"],
             "--category-mode pooled without --per-category"),
            (["select", *base, "--category", "c", "--metric", "precision_at_k", "--k", "8", "--size", "2"],
             "Give --k <= 5 (the smallest category's size), or leave --category out")):
        assert main([*argv, "--draws", "20"] if argv[0] != "select" else argv) == 2, argv
        err = capsys.readouterr().err
        assert said in err and "Nothing was fitted" in err, (argv, err)


def test_a_card_folder_given_as_scores_file_says_it_is_a_card_and_how_to_run_the_command(tmp_path, capsys):
    """`bayeval select CARD --size 5` said "the following arguments are required: --score" and
    `bayeval fit CARD --score score` "fit needs vetted labels: --label COL": neither said that the
    argument is a model card, which commands take cards, or how to run them on its scores."""
    card = tmp_path / "mycard"
    (card / "data").mkdir(parents=True)
    (card / "data" / "s.csv").write_text("item,p,y\na,0.9,1\nb,0.2,0\nc,0.5,\n")
    (card / "card.toml").write_text('title = "t"\ndescription = "d"\n[data]\nfile = "data/s.csv"\nscore = "p"\n'
                                    'label = "y"\nid = "item"\n[model]\nname = "default"\n')
    LabelStore(card / "vet.sqlite").close()
    for argv, run in ((["select", str(card), "--size", "5"],
                       f"`bayeval select {card}/data/s.csv --score p --label y --id item --size N`"),
                      (["fit", str(card), "--score", "score"],
                       f"`bayeval fit {card}/data/s.csv --score p --label y --id item --store {card}/vet.sqlite`"),
                      (["threshold", str(card), "--min-precision", "0.9"],
                       f"--store {card}/vet.sqlite --min-precision P`")):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert f"{card} is a model card (a folder with card.toml), not a scores file" in err, err
        assert f"`bayeval report {card}`" in err and f"`bayeval vet {card}`" in err and "compare" in err
        assert run in err, (run, err)


def test_warnings_as_lines_prints_a_warning_that_an_outer_filter_would_raise(capsys):
    """The block recorded warnings without a filter of its own: under `filterwarnings("error")` (as the
    suite's `error::UserWarning:bayeval`) a bayeval warning inside it was raised, not printed as a
    `warning:` line. A filter set inside the block still applies; developers' notices stay unsaid."""
    import warnings

    from bayeval._cli_warnings import warnings_as_lines

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with warnings_as_lines():
            warnings.warn("bayeval: the labels look odd", UserWarning, stacklevel=1)
            warnings.warn("a file left open", ResourceWarning, stacklevel=1)
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message="hidden on purpose")
                warnings.warn("hidden on purpose", UserWarning, stacklevel=1)
    assert capsys.readouterr().err == "warning: the labels look odd\n"


def test_select_passes_over_the_label_draws_once_for_its_batch_and_its_column(scores_csv, monkeypatch, capsys):
    """The expected_change column comes from the pass that ranked the batch (a second pass
    over the label draws cost as much again at 10^5 items)."""
    import importlib

    S = importlib.import_module("bayeval.active.select")
    passes = []
    covariances = S._covariances
    monkeypatch.setattr(S, "_covariances", lambda *a, **k: passes.append(1) or covariances(*a, **k))
    path, _ = scores_csv
    assert main(["select", str(path), "--score", "s", "--label", "y", "--id", "item", "--size", "4",
                 "--strategy", "expected_change", *FAST]) == 0
    out = capsys.readouterr().out
    assert "expected_change" in out and len(passes) == 1
