"""Tests of the append-only label store (bayeval.active.store)."""

from __future__ import annotations

import math
import random
import sqlite3
import subprocess
import sys
import threading
import time

import numpy as np
import pandas as pd
import pytest

import bayeval.active.repair as repair_module
import bayeval.active.store as store_module
from bayeval.active.store import LabelStore, StoreFormatError

STORE_FILE = store_module.__file__

# Child processes load store.py straight from its file: `import bayeval` pulls in PyMC
# (several seconds per process), and the store needs only the standard library.
LOAD = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("store_under_test", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
store = mod.LabelStore(sys.argv[2])
"""

# Appends `per_call` labels per add() call, forever, printing the call number after
# each commit.
KILLED_CHILD = (
    LOAD
    + """
prefix, per_call = sys.argv[3], int(sys.argv[4])
for i in range(10**9):
    store.add([f"{prefix}:{i}:{j}" for j in range(per_call)],
              [(i + j) % 2 for j in range(per_call)], annotator=prefix)
    print(i, flush=True)
"""
)

# Opens (maybe creates) the store, waits for "go" on stdin, then writes n labels, one
# add() call each.
WRITER_CHILD = (
    LOAD
    + """
name, n = sys.argv[3], int(sys.argv[4])
print("ready", flush=True)
sys.stdin.readline()
for i in range(n):
    store.add([f"{name}-{i}"], [i % 2], annotator=name)
print("done", flush=True)
"""
)


@pytest.fixture
def store(tmp_path):
    with LabelStore(tmp_path / "labels.db") as s:
        yield s


def integrity(path) -> str:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        conn.close()


def reference_resolve(rows):
    """The documented rule, written out plainly: rows are (item, value, annotator) in write order."""
    out = {}
    for item in dict.fromkeys(r[0] for r in rows):
        latest = {}  # annotator -> (write position, value)
        for pos, (it, value, annotator) in enumerate(rows):
            if it == item:
                latest[annotator] = (pos, value)
        ones = sum(v for _, v in latest.values())
        zeros = len(latest) - ones
        if ones != zeros:
            out[item] = int(ones > zeros)
        else:
            out[item] = max(latest.values())[1]  # most recent of the voting labels
    return out


# ------------------------------------------------------------------ round trip


def test_round_trip_of_ids_values_annotator_batch_and_time(tmp_path):
    path = tmp_path / "labels.db"
    s = LabelStore(path)
    b = s.new_batch([5, "5", "img/α 1"], strategy="random", note="first")
    ids = [5, "5", np.int64(2**40), -3, 2**70, "img/α 1", np.str_("np")]
    vals = [1, 0, True, False, 1.0, "0", np.int8(1)]
    assert s.add(ids, vals, annotator="ana", batch=b) == 7
    assert s.add(7, 0) == 1  # a single id and value
    s.close()

    s = LabelStore(str(path))  # reopened from disk
    df = s.labels()
    assert list(df.columns) == ["id", "item", "value", "annotator", "batch", "time"]
    assert df["id"].tolist() == list(range(1, 9))
    items = df["item"].tolist()
    assert items == [5, "5", 2**40, -3, 2**70, "img/α 1", "np", 7]
    assert [type(x) for x in items] == [int, str, int, int, int, str, str, int]
    assert df["value"].dtype == np.int8
    assert df["value"].tolist() == [1, 0, 1, 0, 1, 0, 1, 0]
    assert df["annotator"].tolist() == ["ana"] * 7 + [None]
    assert df["batch"].tolist()[:7] == [1] * 7 and df["batch"].isna().tolist()[7]
    assert str(df["time"].dt.tz) == "UTC"
    assert df["time"].is_monotonic_increasing
    now = pd.Timestamp.now(tz="UTC")
    assert ((now - df["time"]) < pd.Timedelta(minutes=5)).all() and (df["time"] <= now).all()
    # 5 and "5" are different items, and each resolves separately
    r = s.resolved()
    assert r.dtype == np.int8 and r.index.name == "item"
    assert r.loc[5] == 1 and r.loc["5"] == 0 and len(r) == 8
    assert [type(x) for x in r.index] == [type(x) for x in items]
    assert len(s) == 8
    assert "8 labels of 8 items, 1 batches" in repr(s)
    s.close()


def test_times_are_monotone_in_write_order(store, monkeypatch):
    # Even if the clock steps back (e.g. an NTP correction), stored times never decrease.
    store.add([1], [1])
    later = store.labels()["time"].iloc[0]

    class PastClock:
        @staticmethod
        def now(tz):
            return (later - pd.Timedelta(hours=1)).to_pydatetime()

    monkeypatch.setattr(store_module, "datetime", PastClock)
    store.add([2], [0])
    t = store.labels()["time"]
    assert t.iloc[1] >= t.iloc[0]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1, 1), (0, 0), (True, 1), (False, 0), (1.0, 1), (0.0, 0), ("1", 1), ("0", 0),
        (np.int8(1), 1), (np.uint64(0), 0), (np.float32(1.0), 1), (np.bool_(False), 0),
    ],
)  # fmt: skip
def test_accepted_value_forms(store, value, expected):
    store.add(["x"], [value])
    assert store.labels()["value"].tolist() == [expected]


def test_arrays_and_series_are_accepted(store):
    store.add(np.array([3, 4, 5]), np.array([1.0, 0.0, 1.0]))
    store.add(pd.Index(["a", "b"]), pd.Series([False, True]))
    assert store.labels()["item"].tolist() == [3, 4, 5, "a", "b"]
    assert store.labels()["value"].tolist() == [1, 0, 1, 0, 1]


# ------------------------------------------------------------------ validation


@pytest.mark.parametrize(
    "bad", [2, -1, 0.5, math.nan, math.inf, "yes", "no", "NA", "n/a", "null", "", None, b"1"]
)
def test_invalid_value_is_rejected_and_nothing_written(store, bad):
    with pytest.raises(ValueError, match=r"`values` must hold labels 0 or 1") as err:
        store.add(["a", "b", "c"], [1, bad, 0])
    msg = str(err.value)
    assert f"position 1: {bad!r}" in msg
    assert "position 0" not in msg and "position 2" not in msg
    assert "Nothing was written" in msg
    assert len(store) == 0


@pytest.mark.parametrize("typed, value", [("1.0", 1), (" 1", 1), ("TRUE", 1), ("False", 0), ("0.0", 0)])
def test_values_use_the_same_spellings_as_every_entry_point(store, typed, value):
    # the store, the CSV reader, the card and the session share one label parser
    from bayeval.core._validate import label_cell

    assert label_cell(typed) == value
    assert store.add(["a"], [typed]) == 1
    assert store.resolved().to_dict() == {"a": value}


def test_store_and_every_other_entry_point_accept_the_same_spellings():
    import numpy as np

    from bayeval.core._validate import label_cell

    cells = [0, 1, 2, -1, 0.0, 1.0, 0.5, True, False, np.int64(1), np.float32(0), np.bool_(True),
             "1", "0", "1.0", "0.0", " 1 ", "true", "TRUE", "False", "yes", "no", "NA", "n/a",
             "null", "", "  ", None, math.nan, math.inf, b"1", "01", "1e0"]
    for v in cells:
        lab = label_cell(v)
        expected = None if lab is None or lab != lab else int(lab)
        assert store_module._encode_value(v) == expected, v


def test_message_names_every_offending_position(store):
    with pytest.raises(ValueError) as err:
        store.add(list(range(5)), [0, 2, 1, "x", 1.5])
    msg = str(err.value)
    assert "3 of 5 are not" in msg
    assert "position 1: 2" in msg and "position 3: 'x'" in msg and "position 4: 1.5" in msg
    assert len(store) == 0


def test_length_mismatch_is_rejected(store):
    with pytest.raises(ValueError, match=r"`item_ids` has 3 entries but `values` has 2"):
        store.add([1, 2, 3], [1, 0])
    with pytest.raises(ValueError, match=r"has 2 entries but `values` has 1"):
        store.add([1, 2], 1)  # no silent broadcasting
    with pytest.raises(ValueError, match="1-D"):
        store.add(np.zeros((2, 2), dtype=int), [1, 0])
    assert len(store) == 0


@pytest.mark.parametrize("bad", [1.5, 2.0, None, "", True, (1, 2), b"id", np.float64(3)])
def test_invalid_item_id_is_rejected(store, bad):
    with pytest.raises(ValueError, match=r"ints .* or non-empty strings") as err:
        store.add(["ok", bad], [1, 0])
    assert "position 1" in str(err.value) and "position 0" not in str(err.value)
    assert len(store) == 0


def test_annotator_is_stored_without_spaces_around_it(store):
    """"ana " from Python is the "ana" of `bayeval label --annotator` and the vetting page: one
    annotator, so her correction replaces her label instead of tying with it."""
    store.add(["a"], [1], annotator="ana ")
    store.add(["a"], [0], annotator=" ana")
    assert store.labels()["annotator"].tolist() == ["ana", "ana"]
    assert store.resolved().to_dict() == {"a": 0}
    assert len(store.conflicts(counted_only=True)) == 0  # one annotator: her latest label alone votes
    assert store.add(["a"], [0], annotator="ana\t", new_only=True) == 0  # already her latest label
    with pytest.raises(ValueError, match=r"`annotator` must be a name .* only spaces .*Nothing was written"):
        store.add(["b"], [1], annotator="   ")
    assert len(store) == 2


def test_bad_containers_annotator_and_batch(store):
    with pytest.raises(TypeError, match="ordered sequence"):
        store.add({1, 2}, [1, 0])
    with pytest.raises(TypeError, match="required"):
        store.add(None, [1])
    with pytest.raises(TypeError, match="`annotator` must be a non-empty string"):
        store.add([1], [1], annotator=3)
    with pytest.raises(TypeError, match="`batch` must be a batch id"):
        store.add([1], [1], batch="1")
    with pytest.raises(ValueError, match=r"Unknown batch 1: this store has no batches yet"):
        store.add([1], [1], batch=1)
    store.new_batch([1])
    with pytest.raises(ValueError, match=r"Unknown batch 2: this store has batches 1..1"):
        store.add([1], [1], batch=2)
    assert len(store) == 0
    assert store.add([1], [1], batch=np.int64(1)) == 1


def test_empty_add_writes_nothing(store):
    assert store.add([], []) == 0
    assert len(store) == 0 and store.labels().shape == (0, 6)
    assert store.resolved().empty and store.conflicts().empty


def test_store_is_append_only_at_the_sql_level(store):
    store.add([1], [1])
    conn = sqlite3.connect(store.path)
    try:
        for sql in ["UPDATE labels SET value = 0", "DELETE FROM labels"]:
            with pytest.raises(sqlite3.IntegrityError, match="append-only"):
                conn.execute(sql)
    finally:
        conn.close()
    assert store.labels()["value"].tolist() == [1]


# ------------------------------------------------------------------ conflict rule


def test_self_correction_counts_only_the_latest(store):
    store.add(["a", "a"], [1, 0], annotator="ana")  # corrects herself
    store.add(["a"], [1], annotator="ben")
    store.add(["a"], [0], annotator="cai")
    # votes: ana 0 (latest), ben 1, cai 0 -> 0; ana's first label does not vote
    assert store.resolved().to_dict() == {"a": 0}
    c = store.conflicts()
    assert c["counted"].tolist() == [False, True, True, True]
    assert c["resolved"].tolist() == [0, 0, 0, 0]


def test_majority_beats_recency(store):
    store.add(["x"], [1], annotator="ana")
    store.add(["x"], [1], annotator="ben")
    store.add(["x"], [0], annotator="cai")  # latest, but outvoted
    assert store.resolved().to_dict() == {"x": 1}


def test_tie_goes_to_the_most_recent_voting_label(store):
    store.add(["t"], [0], annotator="ana")
    store.add(["t"], [1], annotator="ben")
    assert store.resolved().to_dict() == {"t": 1}
    store.add(["t"], [0], annotator="ben")  # ben corrects: 0 vs 0, no conflict left
    assert store.resolved().to_dict() == {"t": 0}
    store.add(["t"], [1], annotator="ana")  # ana now says 1 -> tie, ana is most recent
    assert store.resolved().to_dict() == {"t": 1}
    assert store.conflicts(counted_only=True)["id"].tolist() == [1, 2, 3, 4]


def test_anonymous_rows_are_one_annotator(store):
    store.add(["n", "n", "n"], [1, 1, 0])  # three anonymous rows = one voter saying 0
    store.add(["n"], [1], annotator="ana")
    # 1 (ana) vs 0 (anonymous): tie -> ana's label is the most recent
    assert store.resolved().to_dict() == {"n": 1}
    store.add(["n"], [0], annotator=None)
    assert store.resolved().to_dict() == {"n": 0}


def test_conflicts_lists_all_rows_of_disputed_items_only(store):
    store.add([1, 2, 3], [1, 1, 0], annotator="ana")
    store.add([2, 1], [0, 1], annotator="ben")
    store.add([3], [0], annotator="ben")
    store.add([4, 4], [1, 0], annotator="cai")  # self-correction only
    c = store.conflicts()
    assert list(c.columns) == [
        *["id", "item", "value", "annotator", "batch", "time"],
        *["counted", "resolved"],
    ]
    assert c["item"].tolist() == [2, 2, 4, 4]  # grouped by item, write order within
    assert c["id"].tolist() == [2, 4, 7, 8]
    assert c["counted"].tolist() == [True, True, False, True]
    assert c["resolved"].tolist() == [0, 0, 0, 0]  # item 2: tie -> ben's later 0
    assert store.conflicts(counted_only=True)["item"].tolist() == [2, 2]
    assert len(store) == 8  # nothing dropped


def test_resolved_matches_the_written_out_rule_on_random_histories(store):
    rng = random.Random(7)
    rows = []
    for _ in range(60):
        n = rng.randint(1, 4)
        items = [rng.choice(["a", "b", 3, 4, "e", 6]) for _ in range(n)]
        values = [rng.randint(0, 1) for _ in range(n)]
        annotator = rng.choice(["ana", "ben", "cai", None])
        store.add(items, values, annotator=annotator)
        rows += [(i, v, annotator) for i, v in zip(items, values, strict=True)]
    expected = reference_resolve(rows)
    got = store.resolved()
    assert list(got.index) == list(expected)  # order of first label
    assert got.to_dict() == expected
    np.testing.assert_array_equal(
        store.label_vector(["a", "zz", 3]), [expected["a"], np.nan, expected[3]]
    )


# ------------------------------------------------------------------ batches, resuming


def test_batches_pending_and_resume(tmp_path):
    path = tmp_path / "labels.db"
    s = LabelStore(path)
    assert s.pending() == [] and s.batches().empty
    assert list(s.batches().columns) == [
        *["batch", "created", "strategy", "note", "n_items", "n_labeled"]
    ]
    b1 = s.new_batch([10, 11, 12], strategy="random", note="warm start")
    s.add([10, 11, 12], [1, 0, 1], annotator="ana", batch=b1)
    b2 = s.new_batch(["p", "q", 13, "r"], strategy="expected_change")
    assert (b1, b2) == (1, 2)
    s.add(["q"], [1], annotator="ana", batch=b2)
    s.add([13], [0], annotator="ben")  # labeled outside any batch still counts
    s.close()  # the session is interrupted here

    s = LabelStore(path)  # and resumed
    assert s.pending() == ["p", "r"]
    assert s.pending(batch=1) == []
    assert s.batch_items(2) == ["p", "q", 13, "r"]
    bt = s.batches()
    assert bt["batch"].tolist() == [1, 2]
    assert bt["strategy"].tolist() == ["random", "expected_change"]
    assert bt["note"].tolist() == ["warm start", None]
    assert bt["n_items"].tolist() == [3, 4]
    assert bt["n_labeled"].tolist() == [3, 2]
    assert str(bt["created"].dt.tz) == "UTC" and bt["created"].is_monotonic_increasing
    s.add(["p", "r"], [0, 0], batch=2)
    assert s.pending() == [] and s.batches()["n_labeled"].tolist() == [3, 4]
    b3 = s.new_batch([])
    assert b3 == 3 and s.pending() == [] and s.batches()["n_items"].tolist() == [3, 4, 0]
    s.close()


def test_new_batch_validation(store):
    with pytest.raises(
        ValueError, match=r"must be unique; 2 repeat .*position 2: 'a'.*position 3: 1"
    ):
        store.new_batch(["a", 1, "a", 1])
    with pytest.raises(ValueError, match="non-empty strings"):
        store.new_batch([1.5])
    assert store.batches().empty  # nothing was created
    assert store.new_batch([1]) == 1  # ids start at 1
    with pytest.raises(ValueError, match="Unknown batch 5"):
        store.batch_items(5)
    with pytest.raises(ValueError, match="Unknown batch 5"):
        store.pending(batch=5)


def test_meta_round_trip(tmp_path):
    path = tmp_path / "labels.db"
    with LabelStore(path) as s:
        s.set_meta("metric", {"name": "ap", "k": np.int64(10), "grid": np.array([0.5, 1.0])})
        s.set_meta("seed", 1)
        s.set_meta("seed", 2)  # latest wins
        with pytest.raises(TypeError, match="JSON-serializable"):
            s.set_meta("bad", object())
        with pytest.raises(TypeError, match="non-empty string"):
            s.set_meta("", 1)
    with LabelStore(path) as s:
        assert s.get_meta("metric") == {"name": "ap", "k": 10, "grid": [0.5, 1.0]}
        assert s.get_meta("seed") == 2 and s.get_meta("bad", "none") == "none"
        assert s.meta() == {"metric": {"name": "ap", "k": 10, "grid": [0.5, 1.0]}, "seed": 2}


def test_closed_store_refuses_work(tmp_path):
    s = LabelStore(tmp_path / "labels.db")
    s.close()
    s.close()  # idempotent
    assert s.closed and "closed" in repr(s)
    with pytest.raises(ValueError, match="is closed"):
        s.add([1], [1])
    with pytest.raises(ValueError, match="is closed"):
        len(s)


# ------------------------------------------------------------------ files


def test_bad_paths(tmp_path):
    with pytest.raises(ValueError, match="in-memory"):
        LabelStore(":memory:")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        LabelStore(tmp_path / "missing" / "labels.db")
    with pytest.raises(IsADirectoryError):
        LabelStore(tmp_path)


@pytest.mark.parametrize(
    "content",
    [b"hello", b"item,value\n" + b"a,1\n" * 500, bytes(range(256)) * 8],
    ids=["short-text", "csv", "binary"],
)
def test_non_sqlite_file_gives_a_clear_error_and_is_untouched(tmp_path, content):
    path = tmp_path / "labels.csv"
    path.write_bytes(content)
    with pytest.raises(
        StoreFormatError, match="is not a bayeval label store: SQLite cannot read it"
    ):
        LabelStore(path)
    assert path.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["labels.csv"]


def test_foreign_sqlite_database_gives_a_clear_error_and_is_untouched(tmp_path):
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE results (x)")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(StoreFormatError, match="an SQLite database but not a bayeval label store"):
        LabelStore(path)
    assert path.read_bytes() == before


def test_newer_schema_is_refused(tmp_path):
    path = tmp_path / "labels.db"
    LabelStore(path).add([1], [1])
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {store_module.SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()
    with pytest.raises(StoreFormatError, match="newer bayeval.*Upgrade bayeval"):
        LabelStore(path)


def test_empty_file_is_refused_not_silently_a_new_store(tmp_path):
    path = tmp_path / "labels.db"
    path.touch()  # e.g. a store truncated by a bad copy: its labels are gone
    with pytest.raises(StoreFormatError, match=r"empty file \(0 bytes\).*Restore it from a backup"):
        LabelStore(path)
    assert path.stat().st_size == 0  # left untouched
    path.unlink()
    LabelStore(path).add([1], [1])  # a new file name is a new store, in WAL mode
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA application_id").fetchone()[0] == store_module.APPLICATION_ID
    finally:
        conn.close()
    assert len(LabelStore(path)) == 1


def _damaged_store(tmp_path, n=1000):
    path = tmp_path / "labels.db"
    st = LabelStore(path)
    st.add([f"w{i:04d}" for i in range(n)], [i % 2 for i in range(n)], annotator="ana")
    st.close()
    assert not (tmp_path / "labels.db-wal").exists() or (tmp_path / "labels.db-wal").stat().st_size == 0
    size = path.stat().st_size
    with open(path, "r+b") as fh:  # damage the middle of the file, as a bad disk would
        fh.seek(size // 2)
        fh.write(random.Random(0).randbytes(4096))
    return path


def test_damaged_store_refuses_writes_and_says_how_to_recover(tmp_path):
    path = _damaged_store(tmp_path)
    before = path.read_bytes()
    store = LabelStore(path)
    assert store.damaged
    with pytest.raises(store_module.StoreDamagedError, match="damaged") as err:
        store.add(["new"], [1])
    msg = str(err.value)
    assert "nothing was written" in msg and "cp " in msg and "export-labels" in msg
    with pytest.raises(store_module.StoreDamagedError):
        store.new_batch(["a"])
    with pytest.raises(store_module.StoreDamagedError):
        store.set_meta("k", 1)
    assert path.read_bytes() == before
    assert isinstance(err.value, StoreFormatError)  # old `except StoreFormatError` still catches it


def test_sound_store_passes_the_check(store):
    store.add(["a"], [1])
    assert not LabelStore(store.path).damaged


def test_export_readable_saves_the_rows_of_a_damaged_store(tmp_path):
    path = _damaged_store(tmp_path)
    out = tmp_path / "saved.csv"
    res = repair_module.export_readable(path, out)
    import pandas as pd

    saved = pd.read_csv(out, dtype={"item": str})
    assert res["rows"] == len(saved) > 0
    assert set(saved["item"]) <= {f"w{i:04d}" for i in range(1000)}
    assert (saved["value"] == saved["item"].str[1:].astype(int) % 2).all()  # rows are intact
    with pytest.raises(FileExistsError):
        repair_module.export_readable(path, out)  # never overwrites


def test_add_new_only_makes_a_reimport_a_no_op(store):
    assert store.add(["a", "b", "b"], [1, 0, 0], annotator="ana", new_only=True) == 2
    assert store.add(["a", "b"], [1, 0], annotator="ana", new_only=True) == 0
    assert len(store) == 2
    # a changed label is written; another annotator's equal label is written
    assert store.add(["a", "b"], [0, 0], annotator="ana", new_only=True) == 1
    assert store.add(["b"], [0], annotator="ben", new_only=True) == 1
    assert store.resolved().to_dict() == {"a": 0, "b": 0} and len(store) == 4


# ------------------------------------------------------------------ crashes and concurrency


def test_killed_writer_loses_no_reported_label(tmp_path):
    path = tmp_path / "labels.db"
    per_call = 40  # several rows per transaction, so kills often land mid-transaction
    rng = random.Random(3)
    expected_rows = 0
    for round_ in range(4):
        prefix = f"child{round_}"
        proc = subprocess.Popen(
            [sys.executable, "-c", KILLED_CHILD, STORE_FILE, str(path), prefix, str(per_call)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        seen = []
        for _ in range(rng.randint(5, 30)):
            line = proc.stdout.readline()
            assert line, f"child died early: {proc.stderr.read()}"
            seen.append(int(line))
        # a random pause first, so the kill lands anywhere in the next call (mid-transaction
        # included) rather than right after a print
        time.sleep(rng.uniform(0.0, 0.03))
        proc.kill()  # SIGKILL
        proc.wait(timeout=10)
        # lines the child printed before it died are still in the pipe; keep whole ones
        tail = proc.stdout.read().split("\n")[:-1]
        proc.stdout.close()
        proc.stderr.close()
        reported = seen + [int(x) for x in tail]
        assert reported == list(range(len(reported)))

        s = LabelStore(path)
        df = s.labels()
        mine = df[df["annotator"] == prefix]
        calls = mine["item"].str.split(":").str[1].astype(int)
        n_calls = calls.nunique()
        # every reported call is there, plus at most the one killed between commit and print
        assert n_calls in (len(reported), len(reported) + 1)
        assert sorted(set(calls)) == list(range(n_calls))
        assert (calls.value_counts() == per_call).all()  # no half-written call
        assert mine["id"].is_monotonic_increasing
        expected_rows += n_calls * per_call
        assert len(s) == expected_rows
        assert integrity(path) == "ok"
    s.add(["after"], [1])  # still writable after the crashes
    assert len(LabelStore(path)) == expected_rows + 1


def test_two_writer_processes(tmp_path):
    path = tmp_path / "labels.db"  # created by the two children racing each other
    n = 200
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER_CHILD, STORE_FILE, str(path), name, str(n)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("w1", "w2")
    ]
    for p in procs:
        assert p.stdout.readline() == "ready\n", p.stderr.read()
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    for p in procs:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0 and out == "done\n", err
    s = LabelStore(path)
    df = s.labels()
    assert len(df) == 2 * n and df["id"].tolist() == list(range(1, 2 * n + 1))
    for name in ("w1", "w2"):
        mine = df[df["annotator"] == name]
        assert mine["item"].tolist() == [f"{name}-{i}" for i in range(n)]
        assert mine["value"].tolist() == [i % 2 for i in range(n)]
    assert df["time"].is_monotonic_increasing
    assert integrity(path) == "ok"


def test_threads_share_one_store(store):
    def work(k):
        for i in range(20):
            store.add([f"{k}-{i}"], [1], annotator=str(k))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    df = store.labels()
    assert len(df) == 80 and df["item"].is_unique
    assert {a: len(g) for a, g in df.groupby("annotator")} == {str(k): 20 for k in range(4)}
    assert integrity(store.path) == "ok"


def test_same_file_two_objects_see_each_other(tmp_path):
    a = LabelStore(tmp_path / "labels.db")
    b = LabelStore(tmp_path / "labels.db")
    a.add([1], [1], annotator="ana")
    b.add([1], [0], annotator="ben")
    assert a.resolved().to_dict() == {1: 0}  # tie -> ben's (written through b) is latest
    assert a.labels()["annotator"].tolist() == ["ana", "ben"]


def test_connections_are_durable_and_patient(tmp_path):
    s = LabelStore(tmp_path / "labels.db", timeout=12.5)
    with s._connect() as conn:  # the settings every operation runs under
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 12500


def test_vanished_file_is_reported_not_recreated(tmp_path):
    path = tmp_path / "odd ?#% name.db"
    s = LabelStore(path)
    assert bool(s) and len(s) == 0  # an empty store is still truthy
    s.add([1], [1])
    assert path.exists() and len(LabelStore(path)) == 1
    for p in tmp_path.iterdir():
        p.unlink()
    with pytest.raises(FileNotFoundError, match="has disappeared"):
        s.add([2], [0])
    assert not path.exists()


# ------------------------------------------- known items: a typo never enters the store


def test_a_store_that_knows_its_items_refuses_a_typo_and_writes_nothing(tmp_path):
    st = LabelStore(tmp_path / "s.db")
    assert st.register_items([f"i{j}" for j in range(100)], source="scores.csv") == 100
    assert st.register_items(["i1", "i2"]) == 0  # nothing new: no new meta row
    with pytest.raises(ValueError) as exc:
        st.add(["i5", "i5O", "i7"], [1, 0, 1], annotator="ana")
    msg = str(exc.value)
    assert "'i5O' (did you mean 'i50'?)" in msg and "registered from scores.csv" in msg
    assert "Nothing was written" in msg and len(st) == 0
    with pytest.raises(ValueError, match="'x9'"):
        st.new_batch(["i1", "x9"])
    assert len(st.batches()) == 0
    numbers = LabelStore(tmp_path / "n.db")
    numbers.register_items([5, 6])
    with pytest.raises(ValueError, match=r"did you mean 5, the number\?"):
        numbers.add(["5"], [1])
    assert st.add(["i5", "i7"], [1, 0]) == 2


def test_an_id_typed_with_a_space_around_it_is_matched_to_the_bare_id(tmp_path):
    """'d 86 ' (a trailing space) got "did you mean 'd 286'?" among ids 'd 0' ... 'd 299'."""
    st = LabelStore(tmp_path / "s.db")
    st.register_items([f"d {j}" for j in range(300)])
    with pytest.raises(ValueError, match=r"'d 86 ' \(did you mean 'd 86', without the spaces around it\?\)"):
        st.add(["d 86 "], [1])
    numbers = LabelStore(tmp_path / "n.db")
    numbers.register_items([5, 6])
    with pytest.raises(ValueError, match=r"did you mean 5, without the spaces around it\?"):
        numbers.add([" 5"], [1])


def test_an_unknown_id_among_row_numbers_is_told_the_range_not_an_id_spelled_alike(tmp_path):
    """Among the row numbers 0..299, 300 got "did you mean 230?": an id spelled like another is no nearer a row.
    The range is said instead, and a row number written with a leading 0 is that row."""
    from bayeval.active.store import KnownItems

    rows = KnownItems(range(300))
    for unknown in (300, "300", -1, 1000, "abc", "3OO"):
        assert rows.did_you_mean(unknown) == " (the ids are the row numbers 0 to 299)", unknown
    assert rows.did_you_mean("0261") == " (did you mean 261?)"
    assert rows.did_you_mean("261") == " (did you mean 261, the number?)"  # the other kind: as before
    assert rows.did_you_mean(" 26") == " (did you mean 26, without the spaces around it?)"
    assert KnownItems(range(1, 301)).did_you_mean(310) == " (did you mean 300?)"  # 1..300: not the rows, as before
    st = LabelStore(tmp_path / "rows.db")
    st.register_items(list(range(300)))
    with pytest.raises(ValueError, match=r"\): 300 \(the ids are the row numbers 0 to 299\)\. Nothing was written"):
        st.add([300], [1])


def test_a_row_number_typed_with_a_letter_for_a_digit_is_told_the_row_meant(tmp_path):
    """Among the row numbers 0..568 (a store `bayeval select` made without --id), `26l` (meant 261) was told
    only "(the items are the rows 0 to 568)", where a named id gets its "did you mean"."""
    from bayeval.active.store import KnownItems

    rows = KnownItems(range(569))
    for typed, meant in (("26l", 261), ("26L", 261), ("1O", 10), ("5o", 50), ("I2", 12), (" 26l", 261)):
        assert rows.did_you_mean(typed) == f" (did you mean {meant}?)", typed
    assert rows.did_you_mean("9l9") == " (the ids are the row numbers 0 to 568)"  # 919 is no row: the range
    assert rows.did_you_mean("abc") == " (the ids are the row numbers 0 to 568)"
    st = LabelStore(tmp_path / "rows.db")
    st.register_items(list(range(569)))
    with pytest.raises(ValueError, match=r"'26l' \(did you mean 261\?\)\. Nothing was written"):
        st.add(["26l"], [1])


def test_sqlite_errors_on_reading_a_damaged_store_name_the_file(tmp_path):
    path = tmp_path / "s.db"
    st = LabelStore(path)
    for k in range(20):
        ids = [f"w{k * 100 + j}" for j in range(100)]
        st.add(ids, [j % 2 for j in range(100)], batch=st.new_batch(ids))
    raw = bytearray(path.read_bytes())
    mid = len(raw) // 2
    raw[mid:mid + 4096] = random.Random(0).randbytes(4096)
    path.write_bytes(bytes(raw))
    damaged = LabelStore(path)
    assert damaged.damaged
    with pytest.raises(StoreFormatError) as exc:  # was a bare sqlite3.DatabaseError
        damaged.batches()
    assert str(path) in str(exc.value) and "export-labels" in str(exc.value)
    for read in (damaged.labels, damaged.resolved, damaged.pending, damaged.meta, damaged.__len__):
        try:  # the part SQLite can read is read; otherwise the same clear error
            read()
        except StoreFormatError as exc:
            assert str(path) in str(exc)


def _poisoned(path):
    """A store written without known items: a typo ('i5O') among good labels, with batches."""
    st = LabelStore(path)
    b = st.new_batch(["i1", "i2", "i3"], strategy="random")
    st.add(["i1", "i5O"], [1, 0], annotator="ana", batch=b)
    st.add(["i2", "i1"], [0, 0], annotator="ben", batch=b)
    st.set_meta("note", "kept")
    return st.labels()


def test_repair_sets_unknown_labels_aside_and_keeps_everything_else(tmp_path):
    path = tmp_path / "s.db"
    before = _poisoned(path)
    items = [f"i{j}" for j in range(100)]
    assert LabelStore(path).unknown_labels(items)["item"].tolist() == ["i5O"]
    res = repair_module.repair(path, items, source="scores.csv")
    assert res["items"] == ["i5O"] and res["labels"] == 1 and res["kept"] == 3
    # every label kept: the set-aside row in the CSV, the whole old file as a backup
    aside = pd.read_csv(res["set_aside"])
    assert aside[["record", "item", "value", "annotator", "batch"]].values.tolist() == [["label", "i5O", 0, "ana", 1]]
    pd.testing.assert_frame_equal(LabelStore(res["backup"]).labels(), before)
    st = LabelStore(path)
    after = st.labels()
    pd.testing.assert_frame_equal(after, before[before["item"] != "i5O"].reset_index(drop=True))
    assert st.batches()[["batch", "strategy", "n_items", "n_labeled"]].values.tolist() == [[1, "random", 3, 2]]
    assert st.pending() == ["i3"] and st.meta()["note"] == "kept"
    assert st.meta()["set_aside"]["rows"][0][:3] == ["label", 2, "i5O"]
    assert st.add(["i3"], [1], batch=1) == 1 and st.labels()["id"].iloc[-1] == 5  # numbering goes on
    with pytest.raises(ValueError, match="did you mean 'i50'"):  # and the store now checks its items
        st.add(["i5O"], [0])
    assert repair_module.repair(path)["items"] == []  # a second repair finds nothing


def test_repair_that_would_keep_no_label_or_of_other_items_is_refused_and_changes_nothing(tmp_path):
    """`repair` given the wrong ids (a store of row numbers against an id column's ids, as `bayeval
    repair-store --id item` on a store made by `select` without --id) set every label aside and
    registered the given ids beside the store's own. It is refused, the store untouched; force=True
    repairs all the same."""
    import hashlib

    path = tmp_path / "rows.db"
    st = LabelStore(path)
    st.register_items(list(range(50)))
    st.add([3, 7, 12], [1, 0, 1], annotator="ana", batch=st.new_batch([3, 7, 12, 20]))
    st.close()
    named = [f"i{j}" for j in range(50)]
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(repair_module.RepairRefused, match="every one of its 3 label row") as err:
        repair_module.repair(path, named)
    assert err.value.reason == "none kept" and err.value.unknown == [3, 7, 12, 20] and err.value.labels == 3
    assert err.value.registered == list(range(50))
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before and sorted(tmp_path.iterdir()) == [path]
    empty = tmp_path / "empty.db"  # no label yet: the registered items and the given ones share none
    LabelStore(empty).register_items(list(range(50)))
    with pytest.raises(repair_module.RepairRefused, match="knows 50 item.*none of which") as err:
        repair_module.repair(empty, named)
    assert err.value.reason == "other items" and LabelStore(empty).known_items() == list(range(50))
    res = repair_module.repair(path, named, force=True)  # asked for: every label set aside, and kept
    assert res["labels"] == 3 and res["kept"] == 0
    assert pd.read_csv(res["set_aside"])["item"].tolist() == [3, 7, 12, 3, 7, 12, 20]
    assert LabelStore(path).known_items() == named  # the given ids alone, not beside the rows


def test_repair_makes_the_datas_ids_the_stores_items_so_an_id_set_aside_is_refused_again(tmp_path):
    """A repair registered the data's ids beside those the store knew: an id whose labels it set aside
    stayed a known item, so `bayeval label` took it again (and the next fit refused it again)."""
    path = tmp_path / "s.db"
    st = LabelStore(path)
    st.register_items(["a", "b", "c", "old"], source="old.csv")
    st.add(["a", "old"], [1, 0], annotator="ana")
    st.close()
    res = repair_module.repair(path, ["a", "b", "c"], source="new.csv")
    assert res["items"] == ["old"] and res["kept"] == 1
    st = LabelStore(path)
    assert st.known_items() == ["a", "b", "c"] and st.meta()["items"]["sources"] == ["new.csv"]
    with pytest.raises(ValueError, match="'old'"):
        st.add(["old"], [1])
    grown = tmp_path / "grown.db"  # data with more items than the store knew: they are added, as before
    LabelStore(grown).register_items(["a"], source="old.csv")
    repair_module.repair(grown, ["a", "b"], source="new.csv")
    assert LabelStore(grown).meta()["items"] == {"ids": ["a", "b"], "sources": ["old.csv", "new.csv"]}


def test_repair_of_a_store_that_does_not_know_its_items_needs_them(tmp_path):
    _poisoned(tmp_path / "s.db")
    with pytest.raises(ValueError, match="does not know its items"):
        repair_module.repair(tmp_path / "s.db")
    assert len(LabelStore(tmp_path / "s.db")) == 4
