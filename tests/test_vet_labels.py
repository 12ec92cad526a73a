"""What `api/answer` accepts as a label, and that its error says all of it."""

from __future__ import annotations

import numpy as np
import pytest

from bayeval import EvalData, Posterior
from bayeval.active import ActiveSession
from bayeval.vet import ItemView, VetError, VetSession


def _model(d: EvalData) -> Posterior:
    return Posterior.from_probabilities(d, np.clip(d.scores, 0.02, 0.98), draws=100, random_seed=1, check=False)


@pytest.fixture()
def vet(tmp_path):
    data = EvalData(np.linspace(0.9, 0.1, 8), item_ids=[f"i{j}" for j in range(8)])
    active = ActiveSession(data, _model, store=tmp_path / "vet.sqlite", batch_size=8, random_seed=0,
                           progressbar=False)
    with VetSession(active, ItemView(data), annotator="ana") as v:
        assert v.wait_idle(30)
        yield v


@pytest.mark.parametrize(("label", "value"), [("y", 1), (" No ", 0), ("YES", 1), (1, 1), (0, 0), (True, 1),
                                              (False, 0)])
def test_accepted_labels(vet, label, value):
    assert vet.answer("tab-labels-1", "i0", label)["recorded"]["label"] == value


@pytest.mark.parametrize("label", ["maybe", 0.5, 1.0, 2, None, "", [1]])
def test_a_refused_label_s_error_lists_everything_accepted(vet, label):
    with pytest.raises(VetError) as err:
        vet.answer("tab-labels-1", "i0", label)
    said = str(err.value)
    for accepted in ("'y'", "'n'", "'yes'", "'no'", "1", "0", "true", "false"):
        assert accepted in said, said
    assert f"got {label!r}" in said and len(vet.store.resolved()) == 0


def test_the_page_gets_a_400_for_a_label_of_the_wrong_type(vet):
    pytest.importorskip("starlette", reason="the vet extra: pip install -e '.[vet]'")
    from starlette.testclient import TestClient

    from bayeval.vet.app import create_app

    token = "test-token-0123456789"
    with TestClient(create_app(vet, token=token), headers={"X-Bayeval-Token": token},
                    raise_server_exceptions=False) as c:
        for label in ([1], {"y": 1}, True):
            r = c.post("/api/answer", json={"client": "tab-labels-1", "item": "i1", "label": label})
            if label is True:
                assert r.status_code == 200 and r.json()["recorded"]["label"] == 1
            else:  # was a 500 (unhashable) with no word of what to send
                assert r.status_code == 400 and "true/false" in r.json()["error"], r.text


def test_the_page_counts_a_label_typed_as_text_for_a_row_once_as_that_row(tmp_path):
    """A store holding '261' (typed with `bayeval label` before it knew its items), '5' and the row 5 for data
    numbered by row: the page counted 4 vetted items (the row 261 as vetted by the file, '261', '5' and 5)."""
    from bayeval.active import LabelStore

    path = tmp_path / "typed.sqlite"
    with LabelStore(path) as st:
        st.add(["261", "5"], [1, 0], annotator="ana")
        st.add([5], [1], annotator="ana")
    data = EvalData(np.linspace(0.99, 0.01, 300))
    active = ActiveSession(data, _model, store=path, batch_size=5, random_seed=0, progressbar=False)
    with VetSession(active, ItemView(data), annotator="ana", budget=3) as v:
        assert v.wait_idle(30)
        progress = v.state()["progress"]
        assert (progress["vetted"], progress["vetted_from_file"], progress["vetted_from_store"]) == (2, 0, 2)
        served = v.next("tab-labels-1")["item"]["item"]
        assert served not in (5, 261)
        v.answer("tab-labels-1", served, 1)
        assert v.next("tab-labels-1")["status"] == "budget"  # 3 items vetted: the budget, counted once each
