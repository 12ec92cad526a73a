"""Every ``bayeval`` command against bad inputs: a one-paragraph error and a non-zero exit, never a traceback.

Also the label store's typo guard as a new user meets it (issue 36): `bayeval label STORE
labels.csv` without --scores on a store made by `bayeval select --store`.
"""

from __future__ import annotations

import random
import traceback
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bayeval.active import LabelStore
from bayeval.cli import _parser, main

ROOT = Path(__file__).resolve().parents[1]
BC = ROOT / "models" / "breast_cancer_logreg"
DV = ROOT / "models" / "digits_vet"
NB = ROOT / "models" / "digits_vet_nb"  # the same items as DV: a pair to compare
SVM = ROOT / "models" / "digits_svm"  # all 1,797 digits: not the same items as DV


@pytest.fixture(scope="module")
def bad(tmp_path_factory):
    """Bad inputs of every kind, made once: paths keyed by name."""
    tmp = tmp_path_factory.mktemp("bad")
    rng = np.random.default_rng(0)
    n = 200
    y = (rng.random(n) < 0.3).astype(int)
    s = np.where(y == 1, rng.gamma(8, 0.1, n), rng.gamma(2, 0.1, n))
    label = np.full(n, np.nan)
    label[:40] = y[:40]
    pd.DataFrame({"item": [f"i{j}" for j in range(n)], "s": s, "y": label}).to_csv(tmp / "scores.csv", index=False)
    (tmp / "wrong.csv").write_text("a,b\n1,2\n3,4\n")  # a CSV with the wrong columns
    (tmp / "empty.csv").write_text("")
    (tmp / "empty.db").write_text("")
    (tmp / "labels.csv").write_text("item,label\ni1,1\n")
    (tmp / "notastore.db").write_text("not a database\n" * 200)
    damaged = tmp / "damaged.db"
    st = LabelStore(damaged)
    for k in range(20):
        ids = [f"i{k * 100 + j}" for j in range(100)]
        st.add(ids, [j % 2 for j in range(100)], batch=st.new_batch(ids))
    st.close()
    raw = bytearray(damaged.read_bytes())
    mid = len(raw) // 2
    raw[mid:mid + 4096] = random.Random(0).randbytes(4096)  # bytes overwritten in the middle
    damaged.write_bytes(bytes(raw))
    (tmp / "exists.csv").write_text("x\n")
    return {
        "tmp": tmp,
        "scores": tmp / "scores.csv",
        "wrong": tmp / "wrong.csv",
        "empty": tmp / "empty.csv",
        "emptydb": tmp / "empty.db",
        "labels": tmp / "labels.csv",
        "notastore": tmp / "notastore.db",
        "damaged": damaged,
        "missing": tmp / "missing.csv",
        "nodir": tmp / "no" / "such" / "folder" / "x.db",
        "exists": tmp / "exists.csv",
    }


DATA = ["--score", "s", "--label", "y", "--draws", "20", "--tune", "20", "--no-progress"]
CASES = [
    # report
    ["report", "{missing}"],
    ["report", "{tmp}"],
    ["report", "{emptydb}"],
    ["report", str(BC), "--max-memory-gb", "nan"],
    ["report", str(BC), "--max-memory-gb", "inf"],
    # fit
    ["fit", "{missing}", *DATA],
    ["fit", "{nodir}", *DATA],
    ["fit", "{empty}", *DATA],
    ["fit", "{wrong}", *DATA],
    ["fit", "{damaged}", *DATA],
    ["fit", "{scores}", *DATA, "--metric", "precision", "--threshold", "nan"],
    ["fit", "{scores}", *DATA, "--metric", "precision", "--threshold", "inf"],
    ["fit", "{scores}", *DATA, "--hdi-prob", "nan"],
    ["fit", "{scores}", *DATA, "--max-memory-gb", "nan"],
    ["fit", "{scores}", *DATA, "--out", "{nodir}"],
    ["fit", "{scores}", *DATA, "--save", "{nodir}"],
    # threshold
    ["threshold", "{missing}", *DATA, "--min-precision", "0.9"],
    ["threshold", "{wrong}", *DATA, "--min-precision", "0.9"],
    ["threshold", "{scores}", *DATA, "--min-precision", "nan"],
    ["threshold", "{scores}", *DATA, "--min-recall", "-inf"],
    ["threshold", "{scores}", *DATA, "--min-precision", "0.9", "--prob", "nan"],
    # select
    ["select", "{missing}", *DATA, "--size", "2"],
    ["select", "{wrong}", *DATA, "--size", "2"],
    ["select", "{scores}", *DATA, "--size", "2", "--store", "{nodir}"],
    ["select", "{scores}", *DATA, "--size", "2", "--store", "{damaged}"],
    ["select", "{scores}", *DATA, "--size", "2", "--store", "{emptydb}"],
    ["select", "{scores}", *DATA, "--size", "2", "--store", "{notastore}"],
    ["select", "{scores}", *DATA, "--size", "2", "--store", "{tmp}"],
    ["select", "{scores}", *DATA, "--size", "2", "--max-memory-gb", "inf"],
    # label
    ["label", "{nodir}", "{labels}"],
    ["label", "{damaged}", "{labels}"],
    ["label", "{emptydb}", "{labels}"],
    ["label", "{notastore}", "{labels}"],
    ["label", "{tmp}", "{labels}"],
    ["label", "{tmp}/new.db", "{missing}"],
    ["label", "{tmp}/new.db", "{wrong}"],
    ["label", "{tmp}/new.db", "{empty}"],
    ["label", "{tmp}/new.db", "{damaged}"],
    ["label", "{tmp}/new2.db", "{labels}", "--scores", "{missing}", "--score", "s"],
    ["label", "{tmp}/new3.db", "{labels}", "--scores", "{wrong}", "--score", "s"],
    # export-labels
    ["export-labels", "{missing}", "{tmp}/out1.csv"],
    ["export-labels", "{nodir}", "{tmp}/out2.csv"],
    ["export-labels", "{damaged}", "{exists}"],
    ["export-labels", "{damaged}", "{nodir}"],
    ["export-labels", "{notastore}", "{tmp}/out3.csv"],
    ["export-labels", "{emptydb}", "{tmp}/out4.csv"],
    # repair-store
    ["repair-store", "{missing}", "--scores", "{scores}", "--score", "s", "--id", "item"],
    ["repair-store", "{nodir}"],
    ["repair-store", "{damaged}", "--scores", "{scores}", "--score", "s", "--id", "item"],
    ["repair-store", "{emptydb}", "--scores", "{scores}", "--score", "s"],
    ["repair-store", "{notastore}", "--scores", "{scores}", "--score", "s"],
    ["repair-store", "{tmp}/new.db"],
    ["repair-store", "{tmp}/new.db", "--scores", "{wrong}", "--score", "s"],
    # vet (every one refused before a server starts)
    ["vet", "{missing}"],
    ["vet", "{tmp}"],
    ["vet", "{emptydb}"],
    ["vet", "{notastore}"],
    ["vet", "{damaged}"],
    ["vet", "{labels}"],
    ["vet", str(DV), "--port", "70000"],
    ["vet", str(DV), "--port", "nan"],
    ["vet", str(DV), "--budget", "0"],
    ["vet", str(DV), "--batch-size", "0"],
    ["vet", str(DV), "--draws", "0"],
    ["vet", str(DV), "--token", "short"],
    ["vet", str(DV), "--store", "{tmp}"],
    ["vet", str(DV), "--store", "{nodir}"],
    ["vet", str(DV), "--store", "{notastore}"],
    # vet for a comparison (refused before a server starts)
    ["vet", str(DV), str(SVM)],  # the item sets differ
    ["vet", str(DV), "{missing}"],  # not a card
    ["vet", str(DV), str(NB), str(BC)],  # three cards
    ["vet", str(DV), "--width", "0.01"],  # a width without a comparison
    ["vet", str(DV), str(NB), "--width", "-0.1"],
    ["vet", str(DV), str(NB), "--tune", "10"],
    # compare
    ["compare", "{missing}", "--score", "s", "s2", "--label", "y"],
    ["compare", str(DV)],  # one card
    ["compare", str(DV), str(SVM)],  # the item sets differ
    ["compare", str(DV), "{missing}"],  # not a card
    ["compare", str(DV), str(NB), "--label", "y"],  # a scores file's flag with cards
    ["compare", "{scores}", "{scores}", "--score", "s", "s", "--label", "y"],  # two files with --score
    ["compare", "{scores}", "--score", "s", "s"],  # a scores file without --label
    ["compare", "{scores}", "--score", "s", "--label", "y"],
    ["compare", "{scores}", "--score", "s", "nope", "--label", "y"],
    ["compare", "{wrong}", "--score", "a", "b", "--label", "y"],
    ["compare", "{scores}", "--score", "s", "y", "--label", "y"],
    ["compare", "{scores}", "--score", "s", "s", "--label", "y", "--draws", "0"],
    ["compare", "{scores}", "--score", "s", "s", "--label", "y", "--hdi-prob", "nan"],
    # demo
    ["demo", "--hdi-prob", "nan"],
    ["demo", "--draws", "nan"],
    ["demo", "--draws", "0"],
]


def test_the_cases_cover_every_command():
    commands = set(_parser()._subparsers._group_actions[0].choices)
    assert {c[0] for c in CASES} == commands


def _case_id(case):
    words = [w for w in case if not w.startswith("--draws") and w not in DATA]
    return " ".join(Path(w).name if "/" in w else w for w in words)


@pytest.mark.parametrize("case", CASES, ids=[f"{i:02d} {_case_id(c)}" for i, c in enumerate(CASES)])
def test_bad_input_gives_one_paragraph_and_no_traceback(case, bad, capsys):
    argv = [a.format(**bad) for a in case]
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse: usage and one error line
        code = exc.code
    except BaseException:
        pytest.fail(f"bayeval {' '.join(argv)} raised:\n{traceback.format_exc()}")
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert code not in (0, None), (out, err)
    assert "error" in err, err
    assert "\n\n" not in err.strip(), err  # one paragraph
    assert "Fitting" not in err  # refused before any sampling


@pytest.mark.parametrize("argv", [
    ["fit", "{missing}", "--score", "s"],  # said "fit needs vetted labels: --label COL ..."
    ["fit", "{missing}", "--score", "s", "--metric", "precision"],  # said "--metric precision needs a decision"
    ["fit", "{missing}", "--score", "s", "--label", "y", "--out", "{nodir}"],  # said the --out folder
    ["threshold", "{missing}", "--score", "s"],  # said "Give --min-precision and/or --min-recall."
    ["threshold", "{missing}", "--score", "s", "--min-precision", "0.9"],  # said "threshold needs vetted labels"
    ["select", "{missing}", "--score", "s", "--size", "0"],  # said "--size must be an integer >= 1"
    ["compare", "{missing}", "--score", "s", "s2"],  # said "a scores file needs --label COL"
], ids=lambda a: " ".join(w for w in a if not w.startswith("{")))
def test_a_missing_scores_file_is_named_before_any_option_is_asked_for(argv, bad, capsys):
    """`bayeval fit nofile.csv --score s` said "fit needs vetted labels: --label COL ..." (with --label y
    it said "nofile.csv: no such file"): the missing file is now said first, by every command reading one."""
    argv = [a.format(**bad) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"bayeval: error: {bad['missing']}: no such file.", err


@pytest.mark.parametrize("command", ["fit", "select", "threshold"])
def test_missing_scores_and_bad_ids_are_said_by_column_and_file_line(bad, tmp_path, command, capsys):
    """A NaN or infinite score, an empty or repeated id: the error names the column and the file's
    lines (it used to give 0-based positions of an unnamed "scores" array, or no place at all)."""
    df = pd.read_csv(bad["scores"])
    cases = {"nan": ("s", 3, np.nan, "column 's' (--score)", "line 5"),
             "inf": ("s", 10, np.inf, "column 's' (--score)", "line 12"),
             "empty_id": ("item", 7, np.nan, "column 'item' (--id) is empty", "line 9"),
             "dup_id": ("item", 4, "i3", "column 'item' (--id) repeats ids", "line 5, line 6; e.g. 'i3'")}
    extra = {"fit": [], "select": ["--size", "3"], "threshold": ["--min-precision", "0.9"]}[command]
    for name, (col, row, value, said, where) in cases.items():
        bad_df = df.astype({col: object}) if col == "item" else df.copy()
        bad_df.loc[row, col] = value  # row r of the frame is line r + 2 of the file
        path = tmp_path / f"{name}.csv"
        bad_df.to_csv(path, index=False)
        capsys.readouterr()
        code = main([command, str(path), "--score", "s", "--label", "y", "--id", "item", "--no-progress", *extra])
        err = capsys.readouterr().err
        assert code == 2 and said in err and where in err and "position" not in err, (name, err)


@pytest.mark.parametrize("command", ["fit", "select", "threshold"])
def test_bad_noisy_labels_and_label_flip_without_them_are_refused_with_lines_and_the_fix(bad, tmp_path, command,
                                                                                         capsys):
    """--noisy-label (and --prediction): an empty cell or a 'yes' is named by column and file line, as a
    noisy label (never "empty = not vetted", which a noisy label may not be); --model label_flip without
    --noisy-label says to pass it. All before anything is fitted (these used to fit first, or name no line)."""
    df = pd.read_csv(bad["scores"])
    df["tag"] = (df["s"] > 0.5).astype(int)
    extra = {"fit": [], "select": ["--size", "3"], "threshold": ["--min-precision", "0.9"]}[command]
    base = ["--score", "s", "--label", "y", "--draws", "20", "--tune", "20", "--no-progress", *extra]
    empty, text = df.astype({"tag": object}), df.astype({"tag": object})
    empty.loc[3, "tag"] = np.nan  # line 5 of the file
    text.loc[[0, 6], "tag"] = "yes"  # lines 2 and 8
    for name, frame, flags, said in [
        ("empty", empty, ["--noisy-label", "tag"], ["column 'tag' (--noisy-label)", "1 row(s) are empty (line 5",
                                                    "fill in the empty cells"]),
        ("text", text, ["--noisy-label", "tag", "--model", "label_flip"],
         ["column 'tag' (--noisy-label)", "line 2: 'yes', line 8: 'yes'", "write each tag as 1/0"]),
        ("none", df, ["--model", "label_flip"], ["--model label_flip needs noisy labels", "--noisy-label COLUMN"]),
        # --prediction likewise needs a 0/1 on every row (it said "`predictions` must be fully known", no line)
        ("prediction", text, ["--prediction", "tag"], ["column 'tag' (--prediction) must hold a 0/1 prediction",
                                                      "line 2: 'yes', line 8: 'yes'", "--threshold T"]),
    ]:
        path = tmp_path / f"{name}.csv"
        frame.to_csv(path, index=False)
        capsys.readouterr()
        code = main([command, str(path), *base, *flags])
        err = capsys.readouterr().err
        assert code == 2 and all(s in err for s in said), (name, err)
        assert "Fitting" not in err and "not vetted" not in err and "Build the EvalData" not in err, (name, err)


def test_noisy_labels_another_model_ignores_are_said(bad, tmp_path, capsys):
    """--noisy-label with --model default: the column was silently unused."""
    df = pd.read_csv(bad["scores"])
    df["tag"] = (df["s"] > 0.5).astype(int)
    path = tmp_path / "tags.csv"
    df.to_csv(path, index=False)
    capsys.readouterr()
    code = main(["fit", str(path), "--score", "s", "--label", "y", "--noisy-label", "tag", "--model", "default",
                 "--draws", "20", "--tune", "20", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 0
    assert "warning: --noisy-label is read only by --model label_flip; --model default fits" in err


def test_a_store_label_that_differs_from_the_scores_file_is_said_not_silently_used(selected_store, bad, tmp_path,
                                                                                    capsys):
    """`bayeval select --store` fits on the store's labels where the store has one; where it differs
    from the scores file's own label column, it says so (it used to replace it silently)."""
    df = pd.read_csv(bad["scores"])
    first = df.loc[0, "item"]
    file_label = int(df.loc[0, "y"])
    pending = LabelStore(selected_store).pending()
    rows = [(i, 1) for i in pending] + [(first, 1 - file_label)]
    labels = tmp_path / "typed.csv"
    pd.DataFrame(rows, columns=["item", "label"]).to_csv(labels, index=False)
    assert main(["label", str(selected_store), str(labels), "--annotator", "a2"]) == 0
    capsys.readouterr()
    code = main(["select", str(bad["scores"]), "--score", "s", "--label", "y", "--id", "item", "--size", "3",
                 "--strategy", "random", "--store", str(selected_store), "--draws", "30", "--tune", "30",
                 "--no-progress"])
    err = capsys.readouterr().err
    assert code == 0
    assert f"differ from column 'y' of {bad['scores']} for 1 item(s): {first} (file {file_label}, store " \
           f"{1 - file_label})" in err


def test_damaged_store_in_label_is_the_store_error_not_sqlite(bad, capsys):
    assert main(["label", str(bad["damaged"]), str(bad["labels"])]) == 2
    err = capsys.readouterr().err
    assert "damaged" in err and str(bad["damaged"]) in err and "DatabaseError" not in err


# ------------------------------------------------ a typo in a labels file (issue 36, point 1)


@pytest.fixture()
def selected_store(bad, tmp_path):
    """A store made by `bayeval select --store` (which registers the scores' items)."""
    store = tmp_path / "labels.sqlite"
    code = main(["select", str(bad["scores"]), "--score", "s", "--label", "y", "--id", "item", "--size", "3",
                 "--strategy", "random", "--store", str(store), "--draws", "30", "--tune", "30", "--no-progress"])
    assert code == 0
    return store


def test_label_without_scores_refuses_an_unknown_id_of_a_selected_store(selected_store, tmp_path, capsys):
    capsys.readouterr()
    typed = tmp_path / "typed.csv"
    typed.write_text("item,label\ni50,1\ni5O,0\n")  # the guide's command, without --scores
    assert main(["label", str(selected_store), str(typed), "--annotator", "ana"]) == 2
    err = capsys.readouterr().err
    assert "line 3, item 'i5O': unknown item id" in err and "did you mean 'i50'?" in err
    with LabelStore(selected_store) as st:
        assert st.labels()["item"].tolist() == ["i50"]  # the typo never entered the store
    # and the next selection works (it used to refuse the store for good)
    assert main(["select", _scores_of(selected_store), "--score", "s", "--label", "y", "--id",
                 "item", "--size", "2", "--new-batch", "--strategy", "random", "--store", str(selected_store),
                 "--draws", "30", "--tune", "30", "--no-progress"]) == 0



def _scores_of(store):
    with LabelStore(store) as st:
        return st._known_meta()["sources"][0]


def test_select_on_a_store_with_an_unknown_id_says_how_to_repair_and_repair_store_keeps_every_label(
        bad, tmp_path, capsys):
    store = tmp_path / "old.sqlite"
    with LabelStore(store) as st:  # written before stores knew their items (or by hand)
        b = st.new_batch(["i1", "i2"], strategy="random")
        st.add(["i1", "i5O"], [1, 0], annotator="ana", batch=b)
    scores = str(bad["scores"])
    argv = ["select", scores, "--score", "s", "--label", "y", "--id", "item", "--size", "2", "--store", str(store),
            "--new-batch", "--strategy", "random", "--draws", "30", "--tune", "30", "--no-progress"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "'i5O' (did you mean 'i50'?)" in err
    assert f"bayeval repair-store {store} --scores {scores} --score s --id item" in err
    assert main(["repair-store", str(store), "--scores", scores, "--score", "s", "--id", "item"]) == 0
    out = capsys.readouterr().out
    assert "set aside 1 label row(s) of 1 unknown item(s): 'i5O' (did you mean 'i50'?)" in out
    aside = next(tmp_path.glob("old.sqlite.set-aside-*.csv"))
    backup = next(tmp_path.glob("old.sqlite.before-repair-*"))
    assert str(aside) in out and str(backup) in out
    assert pd.read_csv(aside)["item"].tolist() == ["i5O"] and len(LabelStore(backup)) == 2
    with LabelStore(store) as st:
        assert st.labels()[["item", "annotator", "batch"]].values.tolist() == [["i1", "ana", 1]]
    assert main(argv) == 0


# ------------------------------------------- the printed table shows the interval (point 4)


REPORT_TABLE = pd.DataFrame(
    {"mean": [0.9565, 0.9951, 0.436], "sd": [0.0248, 0.0136, 0.0377],
     "90% HDI lower": [0.924, 0.98, 0.3745], "90% HDI upper": [0.9908, 1.0, 0.4926],
     "vetted_only": [0.9702, np.nan, np.nan], "truth": [0.9937, 1.0, 0.4717]},
    index=pd.Index(["average precision", "precision@100", "recall@100 (a long name)"], name="metric"),
)


@pytest.mark.parametrize("columns", ["80", "60"])
def test_printed_report_table_keeps_the_interval_at_80_columns_and_piped(columns, monkeypatch, capsys):
    from bayeval.cli import _print_frame

    monkeypatch.setenv("COLUMNS", columns)  # capsys: output is piped, not a terminal
    _print_frame(REPORT_TABLE)
    out = capsys.readouterr().out
    assert "..." not in out and "columns]" not in out
    assert all(len(line) <= int(columns) for line in out.splitlines()), out
    for name in ("mean", "sd", "90% HDI", "vetted_only", "truth"):
        assert name in out
    assert "[0.9240, 0.9908]" in out and "[0.3745, 0.4926]" in out


def test_table_formats_for_logs():
    from bayeval.cli import _format_frame

    csv = _format_frame(REPORT_TABLE, "csv").splitlines()
    assert csv[0] == "metric,mean,sd,90% HDI lower,90% HDI upper,vetted_only,truth"
    assert csv[1].startswith("average precision,0.9565,0.0248,0.924,0.9908,")
    md = _format_frame(REPORT_TABLE, "md").splitlines()
    assert md[0] == "| metric | mean | sd | 90% HDI | vetted_only | truth |" and md[1] == "|---|---|---|---|---|---|"
    assert md[2] == "| average precision | 0.9565 | 0.0248 | [0.9240, 0.9908] | 0.9702 | 0.9937 |"
    fit = pd.DataFrame({"mean": [0.5], "sd": [0.1], "hdi_5%": [0.3], "hdi_95%": [0.7]}, index=["ap"])
    assert "90% HDI" in _format_frame(fit, "table", width=80) and "[0.3000, 0.7000]" in _format_frame(fit, "md")


def test_a_vetted_only_value_is_printed_with_its_count_in_one_column():
    """The printed tables of `fit` and `report` give each vetted-only value with the vetted items it
    rests on, in one column (`0.9702 (30)`); csv keeps the two columns."""
    from bayeval.cli import _format_frame

    table = REPORT_TABLE.assign(vetted_only_n=[30, 0, 11])[[*REPORT_TABLE.columns[:5], "vetted_only_n", "truth"]]
    md = _format_frame(table, "md").splitlines()
    assert md[0] == "| metric | mean | sd | 90% HDI | vetted_only (n) | truth |"
    assert md[2] == "| average precision | 0.9565 | 0.0248 | [0.9240, 0.9908] | 0.9702 (30) | 0.9937 |"
    assert "| NaN (0) |" in md[3]
    text = _format_frame(table, "table", width=80)
    assert "vetted_only (n)" in text and "0.9702 (30)" in text and "NaN (11)" in text
    assert all(len(line) <= 80 for line in text.splitlines())
    assert _format_frame(table, "csv").splitlines()[0] == ("metric,mean,sd,90% HDI lower,90% HDI upper,vetted_only,"
                                                            "vetted_only_n,truth")


@pytest.mark.parametrize("command", ["compare", "vet"])
def test_cards_of_other_items_are_refused_with_what_differs_and_how_to_fix(command, capsys):
    assert main([command, str(DV), str(SVM)]) == 2
    err = capsys.readouterr().err
    assert "do not score the same items" in err and "898 id(s) only in 'digits_svm' (e.g. ['digit-0001'" in err
    assert "drop the items that only some cards have" in err
    assert not list(DV.glob("vet-compare-*"))  # refused before a store was made
    assert main([command, str(DV)] + (["--width", "0.01"] if command == "vet" else [])) == 2
    assert ("two or more model cards" if command == "compare" else "--width") in capsys.readouterr().err


def test_transform_errors_speak_the_command_lines_words(tmp_path, capsys):
    """``--transform logit`` on log-odds said "Use Calibration('logistic') ... with
    transform='standardize'", Python advice, after starting the fit; ``--transform logodds`` on
    probabilities read them as log-odds without a word. The Python API warns of the latter too."""
    import warnings

    from bayeval import EvalData
    from bayeval.models import Calibration

    rng = np.random.default_rng(0)
    p = rng.beta(1, 3, 200)
    y = np.full(200, np.nan)
    y[:40] = rng.random(40) < p[:40]
    path = tmp_path / "scores.csv"
    pd.DataFrame({"p": p, "logodds": np.log(p) - np.log1p(-p), "y": y}).to_csv(path, index=False)
    fast = ["--draws", "40", "--tune", "40", "--chains", "1", "--no-progress"]
    argv = ["threshold", str(path), "--label", "y", "--min-precision", "0.5", *fast]
    assert main([*argv, "--score", "logodds", "--transform", "logit"]) == 2
    err = capsys.readouterr().err
    assert "--transform logit reads the scores as probabilities, in [0, 1], but column 'logodds' (--score)" in err
    assert "--transform logodds" in err and "--transform standardize" in err and "Nothing was fitted" in err
    assert "Calibration(" not in err and "transform=" not in err and "Fitting" not in err
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main([*argv, "--score", "p", "--transform", "logodds"]) == 0
    err = capsys.readouterr().err
    assert "warning: --transform logodds reads the scores as log-odds, but column 'p' (--score)" in err
    assert "look like probabilities. If they are, give --transform logit" in err
    assert err.index("warning: --transform logodds") < err.index("Fitting")  # said before the fit
    assert not [w for w in caught if "logodds" in str(w.message)]  # not again in Python's words
    data = EvalData(p, y)
    with pytest.warns(UserWarning, match=r"transform='logodds' reads the scores as log-odds.*look like "
                                         r"probabilities.*transform='logit'"):
        Calibration("logistic", transform="logodds").features(data)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Calibration("logistic", transform="logodds").features(EvalData(np.log(p) - np.log1p(-p), y))


def test_a_cards_transform_is_checked_in_the_cards_words(tmp_path, capsys):
    """A card's ``[model] transform = "logodds"`` on probabilities got, in ``bayeval report CARD``, the
    model's Python warning ("<frozen runpy>:88: UserWarning: transform='logodds' ... use transform='logit'"),
    twice; ``transform = "logit"`` on log-odds failed after starting the fit with "Use Calibration('logistic')
    ... with transform='standardize'". Both are now said before the fit, naming the card's key."""
    import warnings

    rng = np.random.default_rng(0)
    p = rng.beta(1, 3, 200)
    y = np.where(np.arange(200) < 40, (rng.random(200) < p).astype(float), np.nan)
    card = tmp_path / "card"
    card.mkdir()
    pd.DataFrame({"p": p, "lo": np.log(p) - np.log1p(-p), "y": y}).to_csv(card / "s.csv", index=False)

    def write(score, transform):
        (card / "card.toml").write_text(f'title = "t"\ndescription = "d"\n[data]\nfile = "s.csv"\nscore = "{score}"\n'
                                        f'label = "y"\n[model]\nname = "default"\ntransform = "{transform}"\n')

    fast = ["--draws", "40", "--tune", "40", "--chains", "1", "--no-progress", "--out", str(tmp_path / "out")]
    write("lo", "logit")
    assert main(["report", str(card), *fast]) == 2
    err = capsys.readouterr().err
    assert f'{card / "card.toml"}: [model] transform = "logit" reads the scores as probabilities, in [0, 1], but ' \
           "column 'lo' ([data] score) holds scores from" in err
    assert 'Set transform = "logodds" under [model]' in err and "Nothing was fitted" in err
    assert "Calibration(" not in err and "transform=" not in err and "fitting" not in err
    write("p", "logodds")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["report", str(card), *fast]) == 0
    err = capsys.readouterr().err
    said = f'warning: {card / "card.toml"}: [model] transform = "logodds" reads the scores as log-odds, but column ' \
           "'p' ([data] score) holds scores from"
    assert said in err and 'If they are, set transform = "logit" under [model]' in err
    assert err.index(said) < err.index("fitting default")  # before the fit
    assert "transform=" not in err and not [w for w in caught if "logodds" in str(w.message)]  # not in Python's words


def test_a_calibration_cards_beta_curve_on_log_odds_is_refused_in_the_cards_words(tmp_path, capsys):
    """`[model] curve = "beta"` on scores outside [0, 1] failed after "fitting calibration" with the model's
    words ("Calibration(curve='beta', transform='auto') needs scores in [0, 1] ... Use Calibration('logistic')").
    It is now refused before the fit, naming the card's key and what to set."""
    rng = np.random.default_rng(0)
    p = rng.beta(1, 3, 100)
    card = tmp_path / "card"
    card.mkdir()
    pd.DataFrame({"lo": np.log(p) - np.log1p(-p), "y": np.where(np.arange(100) < 20, 1.0 * (p > 0.3), np.nan)}
                 ).to_csv(card / "s.csv", index=False)
    (card / "card.toml").write_text('title = "t"\ndescription = "d"\n[data]\nfile = "s.csv"\nscore = "lo"\n'
                                    'label = "y"\n[model]\nname = "calibration"\ncurve = "beta"\n')
    assert main(["report", str(card), "--draws", "40", "--tune", "40", "--chains", "1", "--no-progress",
                 "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert f'{card / "card.toml"}: [model] curve = "beta" (Beta calibration) reads the scores as probabilities, in ' \
           "[0, 1], but column 'lo' ([data] score) holds scores from" in err, err
    assert 'Set curve = "logistic" or "monotone" under [model]' in err and "Nothing was fitted" in err
    assert "Calibration(" not in err and "fitting" not in err


def test_a_label_flip_cards_logit_score_transform_on_margins_is_refused_in_the_cards_words(tmp_path, capsys):
    """`[model] score_transform = "logit"` of a label_flip card on scores outside [0, 1] failed after "fitting
    label_flip" with the model's words ("score_transform='logit' needs scores in [0, 1] ... Use
    score_transform='identity'"): Card.check_scale knew only `transform` and `curve`. It is now refused before
    the fit, naming the card's key, the scores' range and what to set, by `bayeval report CARD` and `bayeval vet
    CARD` alike (both check a card's scale first)."""
    from bayeval.cards import CardError, load_card

    rng = np.random.default_rng(0)
    y = (rng.random(60) < 0.3).astype(float)
    margins = np.round(2 * y + rng.normal(0, 1, 60), 4)
    card = tmp_path / "card"
    card.mkdir()
    pd.DataFrame({"s": margins, "noisy": y, "y": np.where(np.arange(60) < 20, y, np.nan)}).to_csv(card / "s.csv",
                                                                                                 index=False)

    def write(transform):
        (card / "card.toml").write_text('title = "t"\ndescription = "d"\n[data]\nfile = "s.csv"\nscore = "s"\n'
                                        'label = "y"\nnoisy_label = "noisy"\n[model]\nname = "label_flip"\n'
                                        f'score_transform = "{transform}"\n')

    write("logit")
    assert main(["report", str(card), "--draws", "40", "--tune", "40", "--chains", "1", "--no-progress",
                 "--out", str(tmp_path / "out")]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f'{card / "card.toml"}: [model] score_transform = "logit" reads the scores as probabilities, in [0, 1], ' \
           f"but column 's' ([data] score) holds scores from {margins.min():g} to {margins.max():g}." in err, err
    assert 'Set score_transform = "identity" under [model]' in err and "or remove the key (auto" in err
    assert "Nothing was fitted" in err and "fitting" not in err and "score_transform='" not in err
    for fine in ("identity", "auto"):  # the options that read margins: nothing said
        write(fine)
        assert load_card(card).check_scale(margins) is None
    write("logit")
    assert load_card(card).check_scale(1 / (1 + np.exp(-margins))) is None  # probabilities: read as such
    with pytest.raises(CardError, match='score_transform = "logit" reads the scores as probabilities'):
        load_card(card).check_scale(margins)


def test_max_memory_gb_counts_the_items_before_the_fit(tmp_path, capsys, monkeypatch):
    """`bayeval threshold ... --max-memory-gb 0.5` on 100,000 items ran and peaked at 1.16 GB: the
    limit was checked against chains x draws x 256 bytes, whatever the number of items."""
    import bayeval.cli as cli
    from bayeval.core._validate import MAX_MEMORY_ENV

    monkeypatch.delenv(MAX_MEMORY_ENV, raising=False)
    n = 20_000
    label = np.full(n, np.nan)
    label[:100] = np.tile([1.0, 0.0], 50)
    path = tmp_path / "scores.csv"
    pd.DataFrame({"s": np.linspace(0.001, 0.999, n), "y": label}).to_csv(path, index=False)
    fitted = []
    real_fit = cli._fit
    monkeypatch.setattr(cli, "_fit", lambda args, data: fitted.append(1) or real_fit(args, data))
    argv = ["threshold", str(path), "--score", "s", "--label", "y", "--min-precision", "0.9", "--draws", "200",
            "--no-progress", "--max-memory-gb", "0.65"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("bayeval: error: bayeval threshold: 2 chains x 200 draws of 20,000 items (100 vetted) "
                          "would need about 0.71 GB"), err
    assert "above the limit of 0.65 GB. Raise the limit to 0.8 GB or more (--max-memory-gb, or the environment " \
           "variable BAYEVAL_MAX_MEMORY_GB)" in err and "Nothing was fitted." in err
    assert "Fitting" not in err and "max_memory_gb=" not in err and fitted == [1]  # refused before sampling



def test_compare_takes_max_memory_gb_and_refuses_in_the_command_lines_words(bad, capsys, monkeypatch):
    """`bayeval compare` had no --max-memory-gb (`bayeval fit`/`report` have one): a comparison too big
    for the limit was refused by bayeval.fit's check, in Python words ("bayeval.fit: ... draws=410906 ...
    pass max_memory_gb="), naming a keyword the command line cannot pass. It is now checked before the
    fit, in the command line's words, and --max-memory-gb sets its limit for this run."""
    import os

    from bayeval.compare import comparison
    from bayeval.core._validate import MAX_MEMORY_ENV

    monkeypatch.delenv(MAX_MEMORY_ENV, raising=False)
    monkeypatch.setattr(comparison, "compare", lambda *a, **k: pytest.fail("compare() called: nothing is fitted"))
    frame = pd.read_csv(bad["scores"]).assign(t=lambda f: f.s * 2 + 0.1)
    frame.to_csv(bad["tmp"] / "two.csv", index=False)
    argv = ["compare", str(bad["tmp"] / "two.csv"), "--score", "s", "t", "--label", "y", "--id", "item",
            "--no-progress"]
    assert main([*argv, "--draws", "10000000"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert err.startswith("bayeval: error: bayeval compare: 2 chains x 10000000 draws of 200 items (40 vetted) "
                          "would need about"), err
    assert "above the limit of 4 GB. Use fewer draws: up to" in err and "(--draws " in err, err
    assert "(--max-memory-gb, or the environment variable BAYEVAL_MAX_MEMORY_GB). Nothing was fitted." in err, err
    assert "max_memory_gb=" not in err and "draws=" not in err and "bayeval.fit" not in err, err
    assert main([*argv, "--draws", "100", "--max-memory-gb", "0.5"]) == 2  # the option sets this run's limit
    err = " ".join(capsys.readouterr().err.split())
    assert "above the limit of 0.5 GB" in err and "raise the limit to 0.6 GB or more (--max-memory-gb" in err, err
    assert MAX_MEMORY_ENV not in os.environ  # for this run only
    assert main([*argv, "--max-memory-gb", "-1"]) == 2
    assert "--max-memory-gb must be a positive number of GB, got -1." in capsys.readouterr().err
