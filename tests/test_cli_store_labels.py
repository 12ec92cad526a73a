"""`bayeval fit / threshold / compare SCORES --store STORE`: the labels vetted into a label store
(`bayeval select --store`, `bayeval label`, the vetting page) are used over the scores file's,
read only, with the same checks as `select --store`."""

from __future__ import annotations

import hashlib
import io

import numpy as np
import pandas as pd
import pytest

from bayeval.active import LabelStore
from bayeval.cli import main

QUICK = ["--draws", "40", "--no-progress"]
TUNE = ["--tune", "40", "--chains", "1"]
EXTRA = {"fit": ["--metric", "average_precision", *TUNE], "threshold": ["--min-precision", "0.8", *TUNE],
         "compare": ["--chains", "1"]}


@pytest.fixture()
def pool(tmp_path):
    rng = np.random.default_rng(1)
    n = 200
    y = (rng.random(n) < 0.3).astype(int)
    s = np.where(y == 1, rng.gamma(8, 0.1, n), rng.gamma(2, 0.1, n))
    label = np.full(n, np.nan)
    label[:20] = y[:20]
    ids = [f"i{j}" for j in range(n)]
    path = tmp_path / "scores.csv"
    pd.DataFrame({"item": ids, "s": s, "s2": s + rng.normal(0, 0.2, n), "y": label}).to_csv(path, index=False)
    store = tmp_path / "labels.sqlite"
    with LabelStore(store) as st:
        st.register_items(ids, source=str(path))
        # 30 new labels, and one that contradicts the file's label of item i0
        st.add(ids[20:50], y[20:50].tolist(), annotator="ana")
        st.add([ids[0]], [1 - int(y[0])], annotator="ana")
    return path, store, y


def _args(command, path, *, label=True, store=None):
    score = ["--score", "s", "s2"] if command == "compare" else ["--score", "s"]
    out = [command, str(path), *score, "--id", "item", *QUICK, *EXTRA[command]]
    if label:
        out += ["--label", "y"]
    if store is not None:
        out += ["--store", str(store)]
    return out


@pytest.mark.parametrize("command", ["fit", "threshold", "compare"])
def test_store_labels_are_used_and_said_and_the_store_is_not_written(pool, command, capsys):
    path, store, y = pool
    before = hashlib.sha256(store.read_bytes()).hexdigest()
    assert main(_args(command, path, store=store)) == 0
    out, err = capsys.readouterr()
    if command != "compare":  # the fit itself sees them (compare's header says it below)
        assert "(50 vetted)" in out + err
    else:
        assert "50 vetted" in out
    # 30 new items, 1 replaced: 20 + 30 = 50 vetted
    assert f"31 label(s) from the label store {store} (30 of items the scores file leaves unvetted, 1 replacing " \
           "its labels): 50 vetted in all." in err
    assert f"for 1 item(s): i0 (file {int(y[0])}, store {1 - int(y[0])})" in err
    assert hashlib.sha256(store.read_bytes()).hexdigest() == before


@pytest.mark.parametrize("command", ["fit", "compare"])
def test_store_alone_needs_no_label_column(pool, command, capsys):
    path, store, _ = pool
    assert main(_args(command, path, label=False, store=store)) == 0
    assert "31 vetted in all." in capsys.readouterr().err


@pytest.mark.parametrize("command", ["fit", "threshold", "compare"])
def test_missing_store_or_no_labels_at_all_are_refused(pool, command, tmp_path, capsys):
    path, _, _ = pool
    assert main(_args(command, path, store=tmp_path / "nope.sqlite")) == 2
    assert "nope.sqlite: no such label store file (--store)" in capsys.readouterr().err
    assert main(_args(command, path, label=False)) == 2
    assert "--store STORE" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["fit", "threshold", "compare"])
def test_store_with_labels_of_unknown_items_is_refused_with_the_repair_command(pool, command, tmp_path, capsys):
    path, _, _ = pool
    stray = tmp_path / "stray.sqlite"
    with LabelStore(stray) as st:
        st.add(["i3", "zz9"], [1, 0], annotator="bo")
    assert main(_args(command, path, store=stray)) == 2
    err = capsys.readouterr().err
    assert f"{stray} holds 1 label(s) of 1 item(s) that are not in {path}: 'zz9'" in err
    assert f"bayeval repair-store {stray} --scores {path} --score s --id item" in err


# --------------- ids typed as text for a scores file numbered by row (no id column)


@pytest.fixture()
def by_row(tmp_path):
    """A scores file without an id column (its items are the row numbers 0, 1, ...) and the
    labels of some rows typed into a fresh store by `bayeval label` without --scores."""
    rng = np.random.default_rng(3)
    n = 300
    y = (rng.random(n) < 0.3).astype(int)
    s = np.where(y == 1, rng.gamma(8, 0.1, n), rng.gamma(2, 0.1, n))
    path = tmp_path / "scores.csv"
    pd.DataFrame({"s": s, "s2": s + rng.normal(0, 0.2, n), "y": np.nan}).to_csv(path, index=False)
    rows = [261, 5, 17, 40, 99, 120, 150, 200, 250, 1, 2, 3, 60, 70, 80]
    typed = tmp_path / "typed.csv"
    pd.DataFrame({"item": rows, "label": y[rows]}).to_csv(typed, index=False)
    store = tmp_path / "fresh.sqlite"
    assert main(["label", str(store), str(typed), "--annotator", "bob"]) == 0
    return path, store, rows, y


@pytest.mark.parametrize("command", ["select", "fit", "threshold", "compare"])
def test_text_ids_of_a_fresh_store_are_the_row_numbers_of_a_file_without_id_column(by_row, command, capsys):
    path, store, rows, y = by_row
    capsys.readouterr()
    with LabelStore(store) as st:
        assert st.labels()["item"].tolist() == [str(r) for r in rows]  # kept as typed: text
    score = ["--score", "s", "s2"] if command == "compare" else ["--score", "s"]
    extra = {"select": ["--size", "5", "--strategy", "random", "--label", "y", *TUNE],
             "fit": ["--metric", "average_precision", *TUNE], "threshold": ["--min-precision", "0.8", *TUNE],
             "compare": ["--chains", "1"]}[command]
    assert main([command, str(path), *score, "--store", str(store), *QUICK, *extra]) == 0
    out, err = capsys.readouterr()
    assert "holds labels of 15 item id(s) kept as text ('261', '5', '17'" in err
    assert "were read as those row numbers" in err and "not in" not in err
    if command == "select":
        picked = [int(line.split()[0]) for line in out.splitlines()[2:] if line.strip()]
        assert len(picked) == 5 and not set(picked) & set(rows)  # the typed rows count as vetted
    else:
        assert "15 vetted in all" in err


def test_row_number_labels_reach_the_right_rows_and_a_later_correction_wins(by_row, capsys):
    import argparse

    from bayeval._cli_store import with_store
    from bayeval.cli import _load_data

    path, store, rows, y = by_row
    with LabelStore(store) as st:  # select registers the rows as ints; bob corrects row 5 as the int 5
        st.register_items(list(range(300)), source=str(path))
        st.add([5], [1 - int(y[5])], annotator="bob")
    args = argparse.Namespace(scores=str(path), score="s", label=None, noisy_label=None, category=None,
                              item_id=None, store=str(store))
    data = with_store(args, _load_data(args))
    assert np.flatnonzero(~np.isnan(data.labels)).tolist() == sorted(rows)
    want = y[rows].astype(float)
    want[rows.index(5)] = 1 - y[5]
    assert data.labels[rows].tolist() == want.tolist()


def test_text_ids_are_not_row_numbers_when_padded_out_of_range_or_registered_as_text(by_row, tmp_path, capsys):
    path, _, _, _ = by_row
    for ids, registered in ((["007"], None), (["300"], None), (["12"], ["12", "13"])):
        store = tmp_path / f"s{ids[0]}{registered is None}.sqlite"
        with LabelStore(store) as st:
            if registered:
                st.register_items(registered)
            st.add(ids, [1], annotator="bo")
        assert main(["fit", str(path), "--score", "s", "--store", str(store), *QUICK, *TUNE]) == 2
        err = capsys.readouterr().err
        assert f"that are not in {path}: {ids[0]!r}" in err and "Nothing was fitted" in err


def test_repair_store_keeps_row_number_ids_and_sets_aside_only_the_typo(by_row, tmp_path, capsys):
    path, store, rows, _ = by_row
    with LabelStore(store) as st:
        st.add(["2x6"], [1], annotator="bob")
    assert main(["fit", str(path), "--score", "s", "--store", str(store), *QUICK, *TUNE]) == 2
    assert "holds 1 label(s) of 1 item(s) that are not in" in capsys.readouterr().err  # the typo alone
    assert main(["repair-store", str(store), "--scores", str(path), "--score", "s"]) == 0
    out, err = capsys.readouterr()
    assert "set aside 1 label row(s) of 1 unknown item(s): '2x6'" in out
    assert "15 text id(s)" in err
    with LabelStore(store) as st:
        assert st.labels()["item"].tolist() == [str(r) for r in rows]
    assert main(["fit", str(path), "--score", "s", "--store", str(store), *QUICK, *TUNE]) == 0
    assert "15 vetted in all" in capsys.readouterr().err


def test_compare_with_no_vetted_item_is_refused_before_the_fit(by_row, tmp_path, capsys):
    path, _, _, _ = by_row
    empty = tmp_path / "empty.sqlite"
    with LabelStore(empty) as st:
        st.register_items(list(range(300)), source=str(path))
    for store in ([], ["--store", str(empty)]):
        assert main(["compare", str(path), "--score", "s", "s2", "--label", "y", *store, *QUICK]) == 2
        out = capsys.readouterr()
        assert out.out == "" and "Fitting" not in out.err
        err = out.err.splitlines()[-1]
        assert err.startswith(f"bayeval: error: No item is vetted (the --label column 'y' of {path} is empty")
        assert ("labels none of its items" in err) == bool(store)
        assert "fill the --label column (1/0)" in err and "`bayeval label STORE LABELS.csv`" in err


# --------------- `bayeval label --scores` with a scores file numbered by row


def test_label_with_scores_numbered_by_row_takes_row_numbers_that_select_and_fit_find(by_row, tmp_path, capsys):
    """`bayeval label STORE FILE --scores SCORES` insisted on an id column ("'item' (--id) is not a column of
    scores.csv"), so a store for a scores file without one learned its items only through `select --store`."""
    path, _, _, y = by_row
    store = tmp_path / "rows.sqlite"
    typed = tmp_path / "rows.csv"
    pd.DataFrame({"item": ["261", "5", "0261", "300", "abc", "17"], "label": [y[261], y[5], 1, 1, 1, y[17]]}).to_csv(
        typed, index=False)
    assert main(["label", str(store), str(typed), "--scores", str(path), "--score", "s", "--annotator", "bo"]) == 2
    err = capsys.readouterr().err
    assert f"{path} has no column 'item' (--id), so its items are numbered by row (0 to 299)" in err
    for line, item in ((4, "0261"), (5, "300"), (6, "abc")):
        assert f"rejected: line {line}, item {item!r}: unknown item id (not a row of {path}, which has no id " \
               "column: its 300 items are the row numbers 0 to 299" in err
    with LabelStore(store) as st:  # the rows as select registers and prints them: ints
        assert st.labels()["item"].tolist() == [261, 5, 17]
        assert st.known_items() == list(range(300))
    # the round trip: select and fit --store find the labels typed by `label`, with no note about text ids
    assert main(["select", str(path), "--score", "s", "--store", str(store), "--size", "4", "--strategy", "design",
                 "--random-seed", "1"]) == 0
    out, err = capsys.readouterr()
    picked = [int(line.split()[0]) for line in out.splitlines()[2:] if line.strip()]
    assert len(picked) == 4 and not {261, 5, 17} & set(picked) and "kept as text" not in err
    with LabelStore(store) as st:
        assert st.known_items() == list(range(300)) and st.batch_items(1) == picked
    assert main(["fit", str(path), "--score", "s", "--store", str(store), *QUICK, *TUNE]) == 0
    err = capsys.readouterr().err
    assert "3 label(s) from the label store" in err and "3 vetted in all" in err and "kept as text" not in err


def test_a_file_imported_again_after_select_registered_the_rows_adds_no_int_copies(by_row, tmp_path, capsys):
    """The 15 labels typed as text into a fresh store ('261', ...) were written again as the ints 261, ...
    when the same file was imported once `select --store` had registered the rows (30 rows, same values)."""
    path, store, rows, y = by_row
    assert main(["select", str(path), "--score", "s", "--store", str(store), "--size", "4", "--strategy", "design",
                 "--random-seed", "1"]) == 0
    typed = tmp_path / "typed.csv"  # the fixture's file of the 15 labels
    capsys.readouterr()
    assert main(["label", str(store), str(typed), "--annotator", "bob"]) == 0
    assert "recorded 0 new label(s)" in capsys.readouterr().out
    assert main(["label", str(store), str(typed), "--annotator", "bob", "--scores", str(path), "--score", "s"]) == 0
    assert "recorded 0 new label(s)" in capsys.readouterr().out
    with LabelStore(store) as st:
        assert st.labels()["item"].tolist() == [str(r) for r in rows]
    # a correction is a new label, written as the row the store now knows, and wins
    fixed = tmp_path / "fixed.csv"
    pd.DataFrame({"item": ["261"], "label": [1 - y[261]]}).to_csv(fixed, index=False)
    assert main(["label", str(store), str(fixed), "--annotator", "bob"]) == 0
    import argparse

    from bayeval._cli_store import with_store
    from bayeval.cli import _load_data

    args = argparse.Namespace(scores=str(path), score="s", label=None, noisy_label=None, category=None,
                              item_id=None, store=str(store))
    data = with_store(args, _load_data(args))
    assert data.labels[261] == 1 - y[261] and data.n_vetted == 15
    capsys.readouterr()
    assert main(["label", str(store), str(typed), "--annotator", "cy"]) == 0  # another annotator's labels count
    assert "recorded 15 new label(s)" in capsys.readouterr().out
    with LabelStore(store) as st:
        assert st.labels()["item"].tolist() == [str(r) for r in rows] + [261] + rows
    data = with_store(args, _load_data(args))
    assert data.labels[261] == y[261] and data.n_vetted == 15  # bob's correction, cy's label: a tie, the latest


def test_an_id_column_s_text_id_and_an_older_int_label_of_it_are_settled_by_the_conflict_rule(tmp_path, capsys):
    """A store holding an int 7 (written by an older bayeval) and the text id '7' of a scores file's id column
    stopped `fit --store` with "Item '7' is given conflicting labels in one call"."""
    path = tmp_path / "scores.csv"
    pd.DataFrame({"id": [str(j) for j in range(10)], "s": np.linspace(0.05, 0.95, 10)}).to_csv(path, index=False)
    store = tmp_path / "old.sqlite"
    with LabelStore(store) as st:
        st.add([7, 8], [1, 1], annotator="ana")
        st.add(["7", "8"], [0, 1], annotator="bob")
        st.add(["7"], [0], annotator="cy")  # 7: ana 1, bob and cy 0: a majority for 0
        st.add(["8"], [0], annotator="ana")  # 8: ana corrects herself (her latest: 0), bob 1: a tie, the latest
    import argparse

    from bayeval._cli_store import with_store
    from bayeval.cli import _load_data

    args = argparse.Namespace(scores=str(path), score="s", label=None, noisy_label=None, category=None,
                              item_id="id", store=str(store))
    data = with_store(args, _load_data(args))
    assert np.array_equal(data.labels[6:10], [np.nan, 0, 0, np.nan], equal_nan=True) and data.n_vetted == 2


def test_an_error_about_the_scores_files_id_column_names_scores_id_when_it_was_given(by_row, tmp_path, capsys):
    """`bayeval label --scores SCORES --scores-id COL` with no column COL said "'COL' (--id) is not a column",
    naming a flag that was not given (--id names the labels file's id column)."""
    path, _, _, y = by_row
    store, typed = tmp_path / "s.sqlite", tmp_path / "typed.csv"
    pd.DataFrame({"item": ["1"], "label": [1]}).to_csv(typed, index=False)
    args = ["label", str(store), str(typed), "--scores", str(path), "--score", "s"]
    assert main([*args, "--scores-id", "id"]) == 2
    err = capsys.readouterr().err
    assert "'id' (--scores-id) is not a column of scores.csv; its columns are" in err and "(--id)" not in err
    holed = tmp_path / "holed.csv"  # an id column with an empty cell: named by its flag too
    pd.DataFrame({"key": ["a", "", "c"], "s": [0.1, 0.2, 0.3]}).to_csv(holed, index=False)
    assert main(["label", str(store), str(typed), "--scores", str(holed), "--score", "s", "--scores-id", "key"]) == 2
    err = capsys.readouterr().err
    assert "column 'key' (--scores-id) is empty on 1 row(s) (line 3)" in err and "leave --scores-id out" in err
    assert not store.exists() or len(LabelStore(store)) == 0  # nothing recorded


def test_label_tells_an_id_out_of_the_rows_their_range_not_an_id_spelled_alike(by_row, tmp_path, capsys):
    """`bayeval label` on a store that knows the rows 0..299 (registered by `select --store`) suggested
    "did you mean 230?" for the id 300."""
    path, store, _, _ = by_row
    assert main(["select", str(path), "--score", "s", "--store", str(store), "--size", "4", "--strategy", "design",
                 "--random-seed", "1"]) == 0
    typed = tmp_path / "more.csv"
    pd.DataFrame({"item": ["300", "0007", "8"], "label": [1, 1, 0]}).to_csv(typed, index=False)
    capsys.readouterr()
    assert main(["label", str(store), str(typed), "--annotator", "bob"]) == 2
    err = capsys.readouterr().err
    assert f"line 2, item '300': unknown item id (not an item of {store}) (the ids are the row numbers 0 to 299)" in err
    assert f"line 3, item '0007': unknown item id (not an item of {store}) (did you mean 7?)" in err
    assert "230" not in err
    # with --scores numbered by row, the reason already says the range: it is not said twice
    assert main(["label", str(store), str(typed), "--annotator", "bob", "--scores", str(path), "--score", "s"]) == 2
    err = capsys.readouterr().err
    assert err.count("0 to 299") == 3 and "the ids are the row numbers" not in err  # the note and the two lines


def _card(folder, n=60):
    """A small card folder with an id column and nothing vetted in its scores file."""
    rng = np.random.default_rng(5)
    y = (rng.random(n) < 0.4).astype(int)
    folder.mkdir()
    pd.DataFrame({"id": [f"d{j:03d}" for j in range(n)], "s": np.round(y + rng.normal(0, 0.7, n), 4),
                  "y": pd.array([pd.NA] * n, dtype="Int64")}).to_csv(folder / "s.csv", index=False)
    (folder / "card.toml").write_text('title = "toy"\ndescription = "d"\n'
                                      'data = { file = "s.csv", score = "s", label = "y", id = "id" }\n'
                                      'model = { name = "calibration" }\n[report]\nmetrics = ["average_precision"]\n')
    return folder, y


def test_report_reads_the_store_a_card_was_vetted_into_with_store_and_refuses_another_card_s(tmp_path, capsys):
    """`bayeval vet CARD --store FILE` then `bayeval report CARD`: the report read the card's
    [vet] store alone, so it said '0 vetted' without a word about the labels typed into FILE
    (and `report` had no --store)."""
    from bayeval.vet.session import CARD_KEY

    card, y = _card(tmp_path / "card")
    other, _ = _card(tmp_path / "other")
    store = tmp_path / "mine.sqlite"
    with LabelStore(store) as st:  # what the page writes: the answers, and the card it vets
        st.set_meta(CARD_KEY, str(card))
        st.add([f"d{j:03d}" for j in range(12)], y[:12].tolist(), annotator="ana")
    before = hashlib.sha256(store.read_bytes()).hexdigest()
    run = ["--draws", "60", "--tune", "60", "--chains", "1", "--no-progress", "--out", str(tmp_path / "rep")]
    assert main(["report", str(card), *run]) == 2  # the card's own store: none, nothing vetted; said
    err = " ".join(capsys.readouterr().err.split())
    assert "12 vetted" not in err and "read with --store FILE" in err
    assert main(["report", str(card), "--store", str(store), *run]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "12 label(s) from its label store mine.sqlite" in err and "60 items, 12 vetted" in err
    assert hashlib.sha256(store.read_bytes()).hexdigest() == before  # read only
    assert main(["report", str(other), "--store", str(store), *run]) == 2  # written for another card
    err = " ".join(capsys.readouterr().err.split())
    assert f"a label store `bayeval vet` wrote for the model card {card}, not for {other}" in err
    assert main(["report", str(card), "--store", str(tmp_path / "nope.sqlite"), *run]) == 2
    assert "no such label store file" in capsys.readouterr().err
    assert main(["report", str(card), str(other), "--store", str(store)]) == 2
    assert "--store (they name one card's)" in " ".join(capsys.readouterr().err.split())


def test_report_of_a_card_with_nothing_vetted_is_refused_with_how_to_vet_unless_it_reads_noisy_labels(tmp_path,
                                                                                                       capsys):
    """`bayeval report` on a card with no vetted label (models/digits_vet_nb before vetting) printed a
    table of tight intervals that were the prior's alone (average precision 0.9885 [0.9797, 1.0000]
    against a truth of 0.7222), where `bayeval fit` on its scores and `bayeval compare` refuse. It is
    refused before the fit, with how to vet; a label-flip card, which reads its noisy labels, is reported."""
    card, y = _card(tmp_path / "card")
    out = tmp_path / "rep"
    run = ["--draws", "60", "--tune", "60", "--chains", "1", "--no-progress", "--out", str(out)]
    assert main(["report", str(card), *run]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert err.startswith("bayeval: error: card: no item is vetted (the label column 'y' of s.csv is empty and its "
                          f"label store {card / 'vet.sqlite'} does not exist yet)")
    assert "every interval of the report would be the prior's" in err and f"`bayeval vet {card}`" in err
    assert (f"`bayeval select {card / 's.csv'} --score s --id id --size 30 --store {card / 'vet.sqlite'}`" in err
            and f"`bayeval label {card / 'vet.sqlite'} LABELS.csv`" in err and "read with --store FILE" in err)
    assert "fitting" not in err and not out.exists()  # refused before the fit
    empty = tmp_path / "empty.sqlite"
    with LabelStore(empty) as st:
        st.register_items([f"d{j:03d}" for j in range(60)])
    assert main(["report", str(card), "--store", str(empty), *run]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"the label store {empty} holds no label of its items" in err and f"`bayeval vet {card} --store {empty}`" \
        in err and "read with --store FILE" not in err
    with LabelStore(empty) as st:  # one label: reported
        st.add(["d000"], [int(y[0])], annotator="ana")
    assert main(["report", str(card), "--store", str(empty), *run]) == 0
    capsys.readouterr()
    noisy = tmp_path / "noisy"  # a label-flip card on its noisy labels alone
    noisy.mkdir()
    frame = pd.read_csv(card / "s.csv")
    frame["tag"] = np.where(y == 1, np.arange(60) % 3 > 0, np.arange(60) % 20 == 0).astype(int)
    frame.to_csv(noisy / "s.csv", index=False)
    (noisy / "card.toml").write_text((card / "card.toml").read_text().replace(
        'id = "id" }', 'id = "id", noisy_label = "tag" }').replace('"calibration"', '"label_flip"'))
    assert main(["report", str(noisy), *run]) == 0
    err = capsys.readouterr().err
    assert "60 items, 0 vetted; fitting label_flip" in err and "caveat: no vetted labels: every interval rests on " \
        "the noisy labels" in err and (out / "report.md").is_file()


@pytest.mark.parametrize("command", ["fit", "threshold", "compare", "select"])
def test_a_forgotten_id_is_said_as_give_id_not_as_repair_store(pool, command, tmp_path, capsys):
    """`bayeval fit SCORES --store STORE` without `--id` (the ids in the file's `item` column) said
    the store's labels were of unknown items and to run `bayeval repair-store`, which moved every
    label out of the live store. The column holding the ids is named: give `--id item`."""
    path, store, _ = pool
    args = [a for a in _args(command if command != "select" else "fit", path, store=store) if a not in ("--id",
                                                                                                        "item")]
    if command == "select":
        args = ["select", str(path), "--score", "s", "--size", "3", "--strategy", "random", "--store", str(store),
                *QUICK, *TUNE]
        with LabelStore(store) as st:  # a store whose items are not registered (made by `bayeval label`)
            st.set_meta("items", None)
    before = hashlib.sha256(store.read_bytes()).hexdigest()
    assert main(args) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "31 item(s) that are not in" in err and "(without --id, so its items are its row numbers)" in err
    assert "31 of them are ids of its column 'item': give `--id item`" in err
    assert "repair-store" not in err
    assert hashlib.sha256(store.read_bytes()).hexdigest() == before


def test_select_without_id_leaves_a_store_of_an_id_column_unchanged_and_says_give_id(pool, tmp_path, capsys):
    """`bayeval select SCORES --store STORE` once without `--id` registered the row numbers 0..n-1
    as items of a store that knew the file's `item` ids, before any check: the store knew 2n ids
    for good, and a later label typed as a row number ('12') was accepted."""
    path, store, _ = pool
    with LabelStore(store) as st:
        known = st.known_items()
    assert main(["select", str(path), "--score", "s", "--size", "3", "--strategy", "random", "--store", str(store),
                 *QUICK, *TUNE]) == 2
    out = capsys.readouterr()
    err = " ".join(out.err.split())
    assert out.out == "" and "knows 200 item id(s) that are not row numbers of" in err
    assert "give `--id item` (its column 'item' holds 200 of them)" in err
    with LabelStore(store) as st:
        assert st.known_items() == known and len(st.batches()) == 0
    typed = tmp_path / "typo.csv"
    pd.DataFrame({"item": ["12"], "label": [1]}).to_csv(typed, index=False)
    assert main(["label", str(store), str(typed)]) == 2  # still refused: not an item of the store
    assert "unknown item id" in capsys.readouterr().err


def test_parquet_integer_ids_are_the_text_ids_of_a_store_made_from_a_csv(tmp_path, capsys):
    """A store made from a CSV knows its ids as text ('102'); the same ids from a Parquet file are
    integers. `bayeval label STORE LABELS.parquet` rejected every row ("did you mean '102', the
    text?"), and `bayeval fit SCORES.parquet --id id --store STORE` suggested `repair-store`, which
    would have moved every label out. They are the same items: read as the store's text."""
    pytest.importorskip("pyarrow")
    rng = np.random.default_rng(2)
    n = 60
    ids = list(range(101, 101 + n))
    y = (rng.random(n) < 0.4).astype(int)
    frame = pd.DataFrame({"id": ids, "s": np.round(y + rng.normal(0, 0.6, n), 4),
                          "y": np.where(np.arange(n) < 10, y, np.nan)})
    frame.to_csv(tmp_path / "s.csv", index=False)
    frame.to_parquet(tmp_path / "s.parquet")
    store = tmp_path / "st.sqlite"
    with LabelStore(store) as st:  # as `bayeval label --scores s.csv` leaves it: text ids
        st.register_items([str(i) for i in ids], source="s.csv")
        st.add([str(i) for i in ids[10:20]], y[10:20].tolist(), annotator="ana")
    pd.DataFrame({"item": ids[20:25], "label": y[20:25]}).to_parquet(tmp_path / "l.parquet")
    assert main(["label", str(store), str(tmp_path / "l.parquet"), "--annotator", "ana"]) == 0
    out = capsys.readouterr()
    assert "recorded 5 new label(s)" in out.out and "read as that text, the same items" in out.err
    with LabelStore(store) as st:
        assert st.labels()["item"].tolist() == [str(i) for i in ids[10:25]]
    for command in ("fit", "select"):
        extra = ["--size", "3", "--strategy", "random"] if command == "select" else ["--metric", "average_precision"]
        assert main([command, str(tmp_path / "s.parquet"), "--score", "s", "--label", "y", "--id", "id",
                     "--store", str(store), *QUICK, *TUNE, *extra]) == 0
        err = " ".join(capsys.readouterr().err.split())
        assert "repair-store" not in err and "not in" not in err
        if command == "fit":
            assert "15 label(s) from the label store" in err and "25 vetted in all" in err
    with LabelStore(store) as st:  # select registered nothing new: the parquet's ids are the store's
        assert st.known_items() == [str(i) for i in ids]


@pytest.mark.parametrize("command", ["fit", "threshold", "compare", "select"])
def test_a_store_of_row_numbers_read_with_id_says_leave_out_id_not_repair_store(pool, command, tmp_path, capsys):
    """A store made by `bayeval select SCORES --store STORE` without `--id` knows the rows 0..n-1;
    labels typed as the row numbers it printed and read with `--id item` were called labels of
    unknown items, with `repair-store ... --id item` advised, which set every one of them aside.
    The ids are this file's row numbers: the advice is to leave out --id; `select --id` is refused
    before it registers the file's ids beside the rows."""
    path, _, y = pool
    store = tmp_path / "rows.sqlite"
    with LabelStore(store) as st:
        st.register_items(list(range(200)), source=str(path))
        st.new_batch(list(range(60, 80)))
    typed = tmp_path / "typed.csv"
    pd.DataFrame({"item": [str(i) for i in range(60, 80)], "label": y[60:80]}).to_csv(typed, index=False)
    assert main(["label", str(store), str(typed), "--id", "item", "--label", "label", "--annotator", "a"]) == 0
    capsys.readouterr()
    before = hashlib.sha256(store.read_bytes()).hexdigest()
    args = _args(command if command != "select" else "fit", path, store=store)
    if command == "select":
        args = ["select", str(path), "--score", "s", "--size", "3", "--strategy", "random", "--id", "item",
                "--store", str(store), "--new-batch", *QUICK, *TUNE]
    assert main(args) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "repair-store" not in err.replace("`bayeval repair-store` with --id would set every one", "")
    if command == "select":
        assert "knows its items as the row numbers 0 to 199" in err and "leave out `--id item`" in err
    else:
        assert "20 label(s) of 20 item(s) that are not in" in err and "60, 61, 62, 63, 64 and 15 more" in err
        assert "20 of them are row numbers of" in err and "(it was made by `bayeval select` without --id)" in err
        assert "Leave out `--id item`" in err
    assert hashlib.sha256(store.read_bytes()).hexdigest() == before
    if command == "fit":  # the advice works: every typed label is used
        assert main([a for a in args if a not in ("--id", "item")]) == 0
        assert "20 label(s) from the label store" in capsys.readouterr().err


def test_repair_store_with_the_wrong_id_is_refused_naming_the_id_that_matches_the_store(pool, tmp_path, capsys):
    """The guide's steps -- `select` without --id (the store knows the rows 0..n-1), `label --id item`,
    then `repair-store ... --id item` -- set every label aside ("0 label row(s) kept") and left the store
    knowing the rows and the id column's ids at once, so that `label` took the set-aside rows again.
    The repair is refused, the store untouched, with the --id choice that matches the store, either
    way round; --force repairs all the same, and the store then knows the file's ids alone."""
    path, _, y = pool
    rows = tmp_path / "rows.sqlite"  # as `bayeval select` without --id makes it
    with LabelStore(rows) as st:
        st.register_items(list(range(200)), source=str(path))
        st.new_batch(list(range(60, 80)))
    typed = tmp_path / "typed.csv"
    pd.DataFrame({"item": [str(i) for i in range(60, 70)], "label": y[60:70]}).to_csv(typed, index=False)
    assert main(["label", str(rows), str(typed), "--id", "item", "--label", "label", "--annotator", "a"]) == 0
    named = tmp_path / "named.sqlite"  # as `bayeval select --id item` makes it
    with LabelStore(named) as st:
        st.register_items([f"i{j}" for j in range(200)], source=str(path))
        st.add(["i3", "i4"], [1, 0], annotator="a")
    capsys.readouterr()
    for store, id_args, right in ((rows, ["--id", "item"], "leave out `--id item`"), (named, [], "give `--id item`")):
        before = hashlib.sha256(store.read_bytes()).hexdigest()
        assert main(["repair-store", str(store), "--scores", str(path), "--score", "s", *id_args]) == 2
        err = " ".join(capsys.readouterr().err.split())
        assert "repair-store would set every label aside and keep none" in err and right in err, err
        assert f"Nothing was changed: {store} is as it was." in err and "--force" not in err
        assert hashlib.sha256(store.read_bytes()).hexdigest() == before
        assert sorted(tmp_path.glob(f"{store.name}.*")) == []  # no set-aside CSV, no backup
    # the advice works: nothing to set aside
    assert main(["repair-store", str(rows), "--scores", str(path), "--score", "s"]) == 0
    assert "nothing was set aside (10 label row(s)" in capsys.readouterr().out
    assert main(["repair-store", str(named), "--scores", str(path), "--score", "s", "--id", "item"]) == 0
    # --force: every label set aside (kept in the CSV), and the store knows the file's ids alone
    assert main(["repair-store", str(rows), "--scores", str(path), "--score", "s", "--id", "item", "--force"]) == 0
    assert "0 label row(s) kept" in capsys.readouterr().out
    assert len(pd.read_csv(next(tmp_path.glob("rows.sqlite.set-aside-*.csv")))) == 10 + 20
    with LabelStore(rows) as st:
        assert st.known_items() == [f"i{j}" for j in range(200)] and len(st) == 0
    assert main(["label", str(rows), str(typed), "--id", "item", "--label", "label", "--annotator", "a"]) == 2
    assert "line 2, item '60': unknown item id" in capsys.readouterr().err  # the rows are no longer its items


def test_label_suggests_the_row_of_a_row_number_typed_with_a_letter(pool, tmp_path, capsys):
    """On a store made by `bayeval select` without --id (the rows 0..n-1), `bayeval label` rejected `26l`
    (meant 261) with only "(the items are the rows 0 to 568)": the "did you mean" named ids get was
    missing. The row meant is suggested; an id that is no row is told the ids are the row numbers."""
    path, _, _ = pool
    store = tmp_path / "rows.sqlite"
    with LabelStore(store) as st:
        st.register_items(list(range(200)), source=str(path))
    typed = tmp_path / "typed.csv"
    pd.DataFrame({"item": ["16l", "1O7", "abc", "12"], "label": [1, 0, 1, 0]}).to_csv(typed, index=False)
    assert main(["label", str(store), str(typed), "--id", "item", "--label", "label", "--annotator", "a"]) == 2
    err = capsys.readouterr().err
    assert f"line 2, item '16l': unknown item id (not an item of {store}) (did you mean 161?)" in err
    assert f"line 3, item '1O7': unknown item id (not an item of {store}) (did you mean 107?)" in err
    assert f"line 4, item 'abc': unknown item id (not an item of {store}) (the ids are the row numbers 0 to 199)" in err
    with LabelStore(store) as st:
        assert st.resolved().to_dict() == {12: 0}  # the valid row is recorded


def test_label_names_the_row_of_an_id_of_the_scores_file_on_a_store_of_row_numbers(pool, tmp_path, capsys):
    """A store made by `bayeval select` without --id knows the rows 0..n-1; `bayeval label --scores`
    read by the file's id column refused its id 'i160' with "(the items are the rows 0 to 199)" and the
    row 5 with "(not in --scores)", naming neither the row of i160 nor a way on. Both now say what the
    store holds and what to type, and the advice works."""
    path, _, y = pool
    store = tmp_path / "rows.sqlite"
    with LabelStore(store) as st:
        st.register_items(list(range(200)), source=str(path))
    typed = tmp_path / "typed.csv"
    pd.DataFrame({"item": ["i160", "5", "i2O"], "label": [1, 0, 1]}).to_csv(typed, index=False)
    assert main(["label", str(store), str(typed), "--scores", str(path), "--score", "s"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    held = f"{store} holds the row numbers of {path} (0 to 199; `bayeval select` without --id registered them)"
    leave = f"leave out --scores ({store} checks the ids itself)"
    assert f"item 'i160': unknown item id (not an item of {store}): 'i160' is row 160 of {path}, and {held}: " \
           f"type 160, and {leave}" in err
    assert f"item 5: unknown item id (not in --scores): {held}, and 5 is one of them; {path} was read by its id " \
           f"column 'item', which does not hold it: {leave}" in err
    assert "item 'i2O': unknown item id (not in --scores) (did you mean 'i20'?)" in err  # a typo, as before
    fixed = tmp_path / "fixed.csv"
    pd.DataFrame({"item": ["160", "5"], "label": [1, 0]}).to_csv(fixed, index=False)
    assert main(["label", str(store), str(fixed)]) == 0
    with LabelStore(store) as st:
        assert st.resolved().to_dict() == {160: 1, 5: 0}


def test_new_batch_leaves_out_the_unfinished_batchs_items_and_says_where_they_are(pool, tmp_path, capsys):
    """`select --store --new-batch` on a half-labelled batch proposed some of its unlabelled items
    again (3 of 10 in two batches) and said nothing of the others, which dropped out of `pending()`.
    The new batch leaves every earlier batch's unlabelled items out and says where they are."""
    path, _, y = pool
    store = tmp_path / "nb.sqlite"
    base = ["select", str(path), "--score", "s", "--id", "item", "--size", "20", "--store", str(store),
            "--format", "csv", *QUICK]
    assert main([*base, "--strategy", "design"]) == 0
    first = pd.read_csv(io.StringIO(capsys.readouterr().out))["item"].tolist()
    with LabelStore(store) as st:
        st.add(first[10:], [int(y[int(i[1:])]) for i in first[10:]], annotator="ana", batch=1)
    unlabelled = set(first[:10])  # the best-scored strata: the design takes them first (the top 1% is 2 items)
    assert main([*base, "--strategy", "design", "--new-batch"]) == 0
    out, err = capsys.readouterr()
    second = pd.read_csv(io.StringIO(out))["item"].tolist()
    err = " ".join(err.split())
    assert len(second) == 20 and not unlabelled & set(second)
    assert "10 item(s) proposed in earlier batches are not labeled yet (10 of batch 1)" in err
    assert "no item is proposed twice" in err and f"bayeval label {store} LABELS.csv" in err
    # expected change (a fit) leaves out both unfinished batches' items too
    assert main([*base, "--strategy", "random", "--new-batch", *TUNE]) == 0
    out, err = capsys.readouterr()
    third = set(pd.read_csv(io.StringIO(out))["item"])
    assert len(third) == 20 and not third & (unlabelled | set(second))
    assert "30 item(s) proposed in earlier batches are not labeled yet (10 of batch 1, 20 of batch 2)" in " ".join(
        err.split())
    with LabelStore(store) as st:  # every unlabelled item is still in its batch, none in two
        assert set(st.pending(1)) == unlabelled and st.pending(2) == second and len(st.pending()) == 20
    # --help says what happens to the unfinished batch's items
    with pytest.raises(SystemExit):
        main(["select", "--help"])
    assert "no item is proposed twice" in " ".join(capsys.readouterr().out.split())


def test_new_batch_with_every_unvetted_item_waiting_in_an_earlier_batch_records_nothing(tmp_path, capsys):
    path = tmp_path / "six.csv"
    pd.DataFrame({"item": [f"i{j}" for j in range(6)], "s": np.linspace(0.1, 0.9, 6)}).to_csv(path, index=False)
    store = tmp_path / "six.sqlite"
    argv = ["select", str(path), "--score", "s", "--id", "item", "--size", "6", "--store", str(store), *QUICK]
    assert main(argv) == 0
    with LabelStore(store) as st:
        st.add(["i0", "i5"], [0, 1], annotator="ana", batch=1)
    capsys.readouterr()
    assert main([*argv, "--new-batch"]) == 0
    out, err = capsys.readouterr()
    assert out == "" and "every item not vetted (4) was proposed in an earlier batch" in " ".join(err.split())
    with LabelStore(store) as st:
        assert len(st.batches()) == 1 and len(st.pending()) == 4


def test_fit_with_a_designed_store_batch_says_its_vetted_only_values_are_no_estimates(pool, tmp_path, capsys):
    # labels of a batch `bayeval select --strategy design` proposed: the table printed their vetted_only values
    # with no word that they are the vetted items' metrics, not the pool's (the report says so)
    path, _, y = pool
    ids = [f"i{j}" for j in range(len(y))]
    store = tmp_path / "designed.sqlite"
    with LabelStore(store) as st:
        st.register_items(ids, source=str(path))
        st.new_batch(ids[20:50], strategy="design")
        st.add(ids[20:50], y[20:50].tolist(), annotator="ana")
    assert main(_args("fit", path, store=store)) == 0
    err = capsys.readouterr().err
    assert ("note: vetted_only: 30 of the 50 vetted items were chosen on purpose (design: 30), not drawn at random, "
            "so each vetted_only value is the metric of the vetted items alone, no estimate of the pool's.") in err
    # a store whose labels no batch chose (typed by `bayeval label`): nothing to say of average precision
    assert main(_args("fit", path, store=pool[1])) == 0
    assert "note: vetted_only" not in capsys.readouterr().err


def test_fit_says_its_vetted_only_precision_at_k_is_the_vetted_items_own_top_k(pool, capsys):
    # 20 of 200 vetted: their top 10 stand for the pool's top ~100, not its top 10
    path, _, _ = pool
    args = [a if a != "average_precision" else "precision_at_k" for a in _args("fit", path)]
    assert main([*args, "--k", "10"]) == 0
    out, err = capsys.readouterr()
    assert "precision_at_k[k=10]" in out
    assert ("note: vetted_only at a rank k (precision or recall at k): the vetted items' own value, that of their k "
            "highest-scored items, which (with the vetted items drawn at random) stand for roughly the pool's top "
            "k × 200/20 (about k × 10), not its top k: no estimate of the pool's metric at k.") in err
