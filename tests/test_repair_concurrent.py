"""`repair` (``bayeval repair-store``) while another program writes to the store: no label is lost.

The repair reads the store, writes the set-aside CSV and a backup, and rewrites the store.
A label written by another process in between must end up in the repaired store (the
writer waits for the repair), or the writer must be told that nothing was written.
"""

from __future__ import annotations

import threading

import pandas as pd
import pytest

from bayeval.active import repair as repair_module
from bayeval.active.store import LabelStore

ITEMS = [f"i{j}" for j in range(100)]


def _poisoned(path):
    """A store written without known items: a typo ('i5O') among good labels, with a batch."""
    st = LabelStore(path)
    b = st.new_batch(["i1", "i2", "i3"], strategy="random")
    st.add(["i1", "i5O"], [1, 0], annotator="ana", batch=b)
    st.add(["i2", "i1"], [0, 0], annotator="ben", batch=b)
    return st.labels()


def _write_meanwhile(monkeypatch, path, writers):
    """Run ``writers`` (store timeout, item, annotator) in threads once the repair has read the
    store: when it opens the set-aside CSV. Each thread gets up to 0.3 s before the repair goes on
    (time enough to write when nothing holds the store). Returns {annotator: result or error}."""
    done: dict = {}
    threads: list = []
    real_open = open

    def write(timeout, item, who):
        try:
            done[who] = LabelStore(path, timeout=timeout).add([item], [1], annotator=who)
        except Exception as exc:  # noqa: BLE001 -- the test looks at what the writer was told
            done[who] = exc

    def open_with_writers(file, *args, **kwargs):
        if not threads:
            for spec in writers:
                threads.append(threading.Thread(target=write, args=spec))
                threads[-1].start()
            for t in threads:
                t.join(0.3)
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(repair_module, "open", open_with_writers, raising=False)
    return done, threads


def test_a_label_written_while_the_repair_runs_is_in_the_repaired_store_or_refused(tmp_path, monkeypatch):
    path = tmp_path / "s.db"
    before = _poisoned(path)
    done, threads = _write_meanwhile(monkeypatch, path, [(20.0, "i7", "cleo"), (0.05, "i8", "dan")])
    res = repair_module.repair(path, ITEMS)
    for t in threads:
        t.join(20)
    assert threads and not any(t.is_alive() for t in threads)
    assert res["items"] == ["i5O"] and res["kept"] == 3
    # the patient writer waited for the repair, and its label is in the repaired store
    assert done["cleo"] == 1
    st = LabelStore(path)
    after = st.labels()
    assert after.loc[after["annotator"] == "cleo", "item"].tolist() == ["i7"]
    # the impatient one was told that nothing was written (the store's own busy error)
    assert isinstance(done["dan"], TimeoutError), done["dan"]
    assert "stayed locked" in str(done["dan"]) and "nothing was written" in str(done["dan"])
    assert "i8" not in set(after["item"])
    # every other label kept; the typo set aside; the backup is the store as the repair read it
    assert after["item"].tolist() == ["i1", "i2", "i1", "i7"]
    pd.testing.assert_frame_equal(LabelStore(res["backup"]).labels(), before)
    assert pd.read_csv(res["set_aside"])["item"].tolist() == ["i5O"]
    assert st.add(["i3"], [1], batch=1) == 1 and st.pending() == []  # the store works on, its batch too


def test_a_write_that_holds_the_store_makes_the_repair_wait_then_it_includes_that_label(tmp_path):
    path = tmp_path / "s.db"
    _poisoned(path)
    other = LabelStore(path)
    result: dict = {}

    def run_repair():
        result["res"] = repair_module.repair(path, ITEMS)

    with other._write() as conn:  # another program's write transaction, still open
        conn.execute("INSERT INTO labels (item, kind, value, annotator, time) VALUES "
                     "('i9', 'str', 1, 'eve', '2026-01-01T00:00:00.000000+00:00')")
        t = threading.Thread(target=run_repair)
        t.start()
        t.join(0.3)
        assert t.is_alive()  # the repair waits for the write to finish
    t.join(20)
    assert result["res"]["kept"] == 4
    assert "i9" in set(LabelStore(path).labels()["item"])


def test_repair_keeps_the_stores_own_file_so_an_open_store_object_goes_on_writing_to_it(tmp_path):
    path = tmp_path / "s.db"
    _poisoned(path)
    held = LabelStore(path)  # a program that opened the store before the repair
    repair_module.repair(path, ITEMS)
    held.add(["i4"], [0], annotator="fay")
    assert LabelStore(path).labels()["item"].tolist()[-1] == "i4"
    with pytest.raises(ValueError, match="did you mean 'i50'"):  # the repair's registration is seen at once
        held.add(["i5O"], [1])
