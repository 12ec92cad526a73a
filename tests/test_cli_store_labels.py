"""`bayeval fit / threshold / compare SCORES --store STORE`: the labels vetted into a label store
(`bayeval select --store`, `bayeval label`, the vetting page) are used over the scores file's,
read only, with the same checks as `select --store`."""

from __future__ import annotations

import hashlib

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
