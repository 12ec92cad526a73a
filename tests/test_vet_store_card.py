"""Which card a vetting store opened by its path (`bayeval vet STORE`) is used with: the card beside
it, even when the store recorded another (a card folder copied with its store), and a line saying so
whenever the card is not the one the store recorded."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from bayeval.vet import find_card, find_target, open_vet

pytest.importorskip("starlette", reason="the vet extra: pip install -e '.[vet]'")


def _card(folder: Path, title: str, store: str | None = None) -> Path:
    folder.mkdir(parents=True)
    rows = "\n".join(f"it{j},{0.95 - j / 10:.2f}" for j in range(8))
    (folder / "s.csv").write_text("id,score\n" + rows + "\n")
    vet = "{ batch_size = 2 }" if store is None else f'{{ batch_size = 2, store = "{store}" }}'
    (folder / "card.toml").write_text(f'''
title = "{title}"
description = "eight items"
data = {{ file = "s.csv", score = "score", id = "id" }}
model = {{ name = "calibration" }}
sampling = {{ draws = 50, tune = 50, chains = 1 }}
vet = {vet}
''')
    return folder


def _write_store(folder: Path, store: Path | None = None) -> Path:
    from bayeval.cards import load_card

    with open_vet(load_card(folder), store=store, draws=50, tune=50) as v:
        assert v.wait_idle(60)
        return v.store.path


def _copied_card(tmp_path: Path) -> tuple[Path, Path]:
    """A card "the original" with a store, and a copy of its folder (store included) retitled "the copy"."""
    original = _card(tmp_path / "digits3", "the original")
    _write_store(original)
    copy = tmp_path / "elsewhere" / "moved_digits3"
    shutil.copytree(original, copy)
    (copy / "card.toml").write_text((copy / "card.toml").read_text().replace("the original", "the copy"))
    return original, copy


def test_a_copied_card_folder_s_store_serves_the_copy(tmp_path):
    original, copy = _copied_card(tmp_path)
    said = []
    card, store = find_card(copy / "vet.sqlite", announce=said.append)
    assert card.title == "the copy" and card.path == copy.resolve() and store == copy / "vet.sqlite"
    assert len(said) == 1 and str(copy.resolve()) in said[0] and str(original.resolve()) in said[0]
    with pytest.warns(UserWarning, match="using the model card in"):  # said by default too
        find_card(copy / "vet.sqlite")
    cards, _, _ = find_target([copy / "vet.sqlite"], announce=said.append)
    assert cards[0].title == "the copy"
    # once opened with the copy, its store records the copy: nothing more to say
    _write_store(copy)
    said.clear()
    assert find_card(copy / "vet.sqlite", announce=said.append)[0].title == "the copy" and said == []
    # the original's store still serves the original, silently
    assert find_card(original / "vet.sqlite", announce=said.append)[0].title == "the original" and said == []


def test_a_moved_card_folder_still_opens_and_says_so(tmp_path):
    folder = _card(tmp_path / "card", "moved")
    _write_store(folder)
    moved = Path(shutil.move(str(folder), str(tmp_path / "there")))
    said = []
    card, _ = find_card(moved / "vet.sqlite", announce=said.append)
    assert card.path == moved.resolve() and len(said) == 1 and "no longer there" in said[0]


def test_a_store_in_a_subfolder_goes_with_the_card_that_names_it_and_no_other(tmp_path):
    # a card whose [vet] store is stores/vet.sqlite, copied: the copy's store serves the copy
    original = _card(tmp_path / "a", "a", store="stores/vet.sqlite")
    (original / "stores").mkdir()
    _write_store(original)
    copy = tmp_path / "a_copy"
    shutil.copytree(original, copy)
    (copy / "card.toml").write_text((copy / "card.toml").read_text().replace('title = "a"', 'title = "a copy"'))
    said = []
    assert find_card(copy / "stores" / "vet.sqlite", announce=said.append)[0].title == "a copy" and said
    # the store of another card kept in a subfolder of this one (not this card's store): the recorded card
    other = _card(tmp_path / "b", "b")
    kept = _write_store(other, store=copy / "stores" / "b.sqlite")
    said.clear()
    assert find_card(kept, announce=said.append)[0].title == "b" and said == []


def test_the_command_prints_the_copy_s_title_and_which_card_it_uses(tmp_path):
    original, copy = _copied_card(tmp_path)
    root = str(Path(__file__).resolve().parents[1])  # this checkout's bayeval, whatever is installed
    env = {**os.environ, "PYTHONUNBUFFERED": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
    proc = subprocess.Popen([sys.executable, "-m", "bayeval", "vet", str(copy / "vet.sqlite"), "--port", "0"],
                            cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True)
    lines = []
    try:
        end = time.monotonic() + 120
        while time.monotonic() < end:
            line = proc.stderr.readline()
            if not line:
                break
            lines.append(line)
            if re.search(r"http://127\.0\.0\.1:\d+/\?token=", line):
                threading.Thread(target=proc.stderr.read, daemon=True).start()
                break
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(30)
    text = "".join(lines)
    assert "the copy: 8 items" in text and "the original" not in text.replace(str(original), ""), text
    assert f"using the model card in {copy.resolve()}" in text, text
