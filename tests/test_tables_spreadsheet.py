"""Tables as spreadsheets save them: a byte-order mark, trailing commas, ids spelled like missing
values, blank lines and quoted line breaks (their file lines in messages)."""

import gzip

import numpy as np
import pytest

from bayeval._tables import TableError, read_table, row_place
from bayeval.active import LabelStore
from bayeval.active.repair import export_readable
from bayeval.cli import main

BOM = "\ufeff"


def test_an_export_saved_with_a_byte_order_mark_is_imported_whole(tmp_path, capsys):
    old = tmp_path / "old.sqlite"
    with LabelStore(old) as store:
        store.add(["a", "b", "c"], [1, 0, 1], annotator="ana")
        store.add(["a", "b"], [0, 0], annotator="ben")
        store.add(["c"], [0], annotator="ana")  # a correction
    export_readable(old, tmp_path / "plain.csv")
    saved = tmp_path / "excel.csv"  # what a spreadsheet writes back: BOM and CRLF line ends
    saved.write_bytes((BOM + (tmp_path / "plain.csv").read_text().replace("\r\n", "\n")).replace("\n", "\r\n")
                      .encode("utf-8"))
    assert main(["label", str(tmp_path / "new.sqlite"), str(saved)]) == 0
    assert "restored 6 label row(s) of 3 item(s) by 2 annotator(s)" in capsys.readouterr().out
    before, after = LabelStore(old).labels(), LabelStore(tmp_path / "new.sqlite").labels()
    cols = ["item", "value", "annotator"]
    assert after[cols].values.tolist() == before[cols].values.tolist()


def test_a_byte_order_mark_is_not_part_of_the_first_column(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text(BOM + "id,s,y\nNA,0.5,1\n", encoding="utf-8")
    t = read_table(path, text_columns=["id"], raw_columns=["y"])
    assert t.columns == ["id", "s", "y"] and t.frame["id"].tolist() == ["NA"]


def test_trailing_commas_of_a_spreadsheet_do_not_shift_the_columns(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("id,score,label\na,0.9,1,\nb,0.2,0,\nc,0.5,,\n")
    t = read_table(path, text_columns=["id"], raw_columns=["label"])
    assert t.columns == ["id", "score", "label"]
    assert t.frame["id"].tolist() == ["a", "b", "c"] and t.frame["score"].tolist() == [0.9, 0.2, 0.5]
    assert t.raw["label"].tolist() == ["1", "0", ""] and t.lines == [2, 3, 4]
    packed = tmp_path / "s.csv.gz"
    packed.write_bytes(gzip.compress(path.read_bytes()))
    assert read_table(packed, text_columns=["id"]).frame["score"].tolist() == [0.9, 0.2, 0.5]


def test_a_filled_field_past_the_header_is_an_error_with_its_line(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("id,score\na,0.9,\nb,0.2,7\n")
    with pytest.raises(TableError, match=r"line 3 has 3 fields but the header \(line 1\) names 2 columns \('7'"):
        read_table(path)


def test_the_cli_reads_trailing_commas(tmp_path, capsys):
    path = tmp_path / "s.csv"
    path.write_text("item,label\nb,0,\nc,1,\n")
    assert main(["label", str(tmp_path / "st.sqlite"), str(path), "--annotator", "ana"]) == 0
    assert LabelStore(tmp_path / "st.sqlite").resolved().to_dict() == {"b": 0, "c": 1}


@pytest.mark.parametrize("kind", ["csv", "tsv"])
def test_ids_spelled_like_missing_values_are_ids(tmp_path, kind):
    sep = "," if kind == "csv" else "\t"
    path = tmp_path / f"s.{kind}"
    rows = [["id", "s", "y"], ["NA", "0.9", "1"], ["None", "NA", "0"], ["null", "0.3", ""], ["nan", "0.1", "1"],
            ["", "0.2", "0"]]
    path.write_text("".join(sep.join(r) + "\n" for r in rows))
    t = read_table(path, text_columns=["id"], raw_columns=["y"])
    ids = t.frame["id"].tolist()
    assert ids[:4] == ["NA", "None", "null", "nan"] and ids[4] != ids[4]  # only the empty cell is missing
    s = t.frame["s"].to_numpy(dtype=float)  # a score column keeps its parsing: NA is no number
    assert np.isnan(s[1]) and s[0] == 0.9
    assert t.raw["y"].tolist() == ["1", "0", "", "1", "0"]


def test_the_cli_fits_items_named_na(tmp_path, capsys):
    path = tmp_path / "s.csv"
    path.write_text("id,score,label\nNA,0.9,1\nx,0.2,0\ny,0.7,\n")
    args = ["fit", str(path), "--score", "score", "--label", "label", "--id", "id", "--draws", "50", "--tune",
            "50", "--chains", "1", "--no-progress", "--format", "csv"]
    assert main(args) == 0, capsys.readouterr().err


def test_rows_keep_their_file_lines_after_blank_lines_and_quoted_line_breaks(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text('id,note,y\na,x,1\n\nb,"two\nlines",yes\n\n\nc,z,0\n')
    t = read_table(path, text_columns=["id"], raw_columns=["y"])
    assert t.frame["id"].tolist() == ["a", "b", "c"] and t.lines == [2, 4, 8]
    assert [t.where(i) for i in range(3)] == ["line 2", "line 4", "line 8"]
    assert [row_place(t.frame, i) for i in range(3)] == ["line 2", "line 4", "line 8"]
    with pytest.raises(TableError, match=r"line 4: 'yes'"):
        t.labels("y")


def test_the_cli_names_the_line_after_a_blank_line(tmp_path, capsys):
    path = tmp_path / "s.csv"
    path.write_text("id,score,label\na,0.5,1\n\nb,0.4,yes\nc,,\n")
    assert main(["fit", str(path), "--score", "score", "--label", "label"]) == 2
    assert "line 4: 'yes'" in capsys.readouterr().err
    path.write_text("id,score,label\na,0.5,1\n\nb,0.4,0\nc,,\n")
    assert main(["fit", str(path), "--score", "score", "--label", "label"]) == 2
    assert "(line 5)" in capsys.readouterr().err
    path.write_text("item,label\na,1\n\nb,maybe\n")
    assert main(["label", str(tmp_path / "st.sqlite"), str(path)]) == 2
    assert "rejected: line 4, item 'b'" in capsys.readouterr().err


def test_a_noisy_label_is_named_by_its_line_after_a_blank_line(tmp_path, capsys):
    path = tmp_path / "s.csv"
    path.write_text("id,score,label,tag\na,0.5,1,1\n\nb,0.4,0,\nc,0.3,,0\n")
    assert main(["fit", str(path), "--score", "score", "--label", "label", "--noisy-label", "tag"]) == 2
    assert "1 row(s) are empty (line 4;" in capsys.readouterr().err
