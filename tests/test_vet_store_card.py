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
        try:  # a first refit compiling on a loaded machine can hold the shutdown for a while
            proc.wait(120)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise
    text = "".join(lines)
    assert "the copy: 8 items" in text and "the original" not in text.replace(str(original), ""), text
    assert f"using the model card in {copy.resolve()}" in text, text


def _scale_card(folder: Path, model: str) -> Path:
    """A card of 60 probabilities (20 vetted) or their log-odds, with the given [model] lines."""
    import numpy as np

    folder.mkdir(parents=True)
    p = np.random.default_rng(0).beta(1, 3, 60)
    rows = "\n".join(f"it{j},{q:.6f},{np.log(q / (1 - q)):.6f},{int(q > 0.3) if j < 20 else ''}"
                     for j, q in enumerate(p))
    (folder / "s.csv").write_text("id,p,lo,y\n" + rows + "\n")
    (folder / "card.toml").write_text('title = "t"\ndescription = "d"\n[data]\nfile = "s.csv"\nid = "id"\n'
                                      f'label = "y"\n{model}\n[sampling]\ndraws = 40\ntune = 40\nchains = 1\n'
                                      '[vet]\nbatch_size = 5\n')
    return folder


def test_vet_says_a_cards_logodds_on_probabilities_in_the_cards_words_once(tmp_path, monkeypatch, capsys):
    """`bayeval vet CARD` (and open_vet) with `[model] transform = "logodds"` on probabilities printed the
    model's Python warning ("threading.py:982: UserWarning: transform='logodds' ... use transform='logit'")
    at every refit, while `bayeval report CARD` said it in the card's words; a calibration card's
    `curve = "beta"` on log-odds failed in the background refit, in the model's words. Now the card's
    words, once, when the session opens; the beta curve is refused before the store is made."""
    import warnings

    import bayeval.vet
    from bayeval.cards import CardError, load_card
    from bayeval.cli import main

    card = _scale_card(tmp_path / "c", 'score = "p"\n[model]\nname = "default"\ntransform = "logodds"')
    said = f'{card / "card.toml"}: [model] transform = "logodds" reads the scores as log-odds, but column \'p\''
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with open_vet(load_card(card), store=tmp_path / "a.sqlite") as v:
            assert v.wait_idle(120) and v.state()["error"] is None and v.state()["fits"] >= 1
    words = [str(w.message) for w in caught if "as log-odds" in str(w.message)]
    assert len(words) == 1 and words[0].startswith(said), words

    def serve(vet, **kw):  # the page is not served: the first refit runs, and the server stops
        assert vet.wait_idle(120) and vet.state()["fits"] >= 1
        vet.close()

    monkeypatch.setattr(bayeval.vet, "serve", serve)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["vet", str(card), "--store", str(tmp_path / "b.sqlite"), "--port", "0"]) == 0
    err = capsys.readouterr().err
    assert f"warning: {said}" in err and err.count("reads the scores as log-odds") == 1, err
    assert "transform='logit'" not in err and not [w for w in caught if "as log-odds" in str(w.message)]

    beta = _scale_card(tmp_path / "b", 'score = "lo"\n[model]\nname = "calibration"\ncurve = "beta"')
    with pytest.raises(CardError, match=r'\[model\] curve = "beta" \(Beta calibration\) reads the scores as '
                                        r"probabilities, in \[0, 1\], but column 'lo'"):
        open_vet(load_card(beta), store=tmp_path / "c.sqlite")
    assert not (tmp_path / "c.sqlite").exists()  # refused before the store was made
    assert main(["vet", str(beta), "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert 'Set curve = "logistic" or "monotone" under [model]' in err and "Calibration(" not in err, err
