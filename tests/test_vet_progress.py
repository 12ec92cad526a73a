"""The vetting page's progress and its end when the card's file already holds labels: an item is
vetted when it has a label from the card's label column or from the store, and the page says
``done`` (instead of refitting every poll) once every item has one."""

from __future__ import annotations

import numpy as np

from bayeval import EvalData, Posterior
from bayeval.active import ActiveSession
from bayeval.vet import ItemView, VetSession

CLIENT = "tab-progress-1"


def _model(d: EvalData) -> Posterior:
    """A cheap stand-in estimator (no PyMC)."""
    return Posterior.from_probabilities(d, np.clip(d.scores, 0.02, 0.98), draws=100, random_seed=1, check=False)


def _vet(tmp_path, labels, **kw) -> VetSession:
    n = len(labels)
    data = EvalData(np.linspace(0.9, 0.1, n), labels=labels, item_ids=[f"it{j}" for j in range(n)])
    active = ActiveSession(data, _model, store=tmp_path / "vet.sqlite", batch_size=2, random_seed=0,
                           progressbar=False)
    v = VetSession(active, ItemView(data), annotator="ana", **kw)
    assert v.wait_idle(30)
    return v


def _answer_all(v: VetSession) -> list:
    answered = []
    for _ in range(20):
        r = v.next(CLIENT)
        if r["item"] is None:
            if r["status"] != "batch":
                return answered
            assert v.wait_idle(30)
            continue
        v.answer(CLIENT, r["item"]["item"], "n")
        answered.append(r["item"]["item"])
        assert v.wait_idle(30)
    return answered


def test_a_card_with_labels_in_its_file_reaches_done_and_stops_refitting(tmp_path):
    nan = np.nan
    with _vet(tmp_path, [1, nan, 0, nan, nan, nan]) as v:  # it0 and it2 vetted in the file
        start = v.state()["progress"]
        answered = _answer_all(v)
        assert sorted(answered) == ["it1", "it3", "it4", "it5"]
        fits = v.state()["fits"]
        for _ in range(3):  # the page polls every 2 s: nothing left, no refit per poll
            assert v.next(CLIENT) == {"item": None, "status": "done"}
            assert v.wait_idle(30)
        assert v.state()["fits"] == fits
        p = v.state()["progress"]
        assert (p["vetted"], p["vetted_from_file"], p["vetted_from_store"], p["items"]) == (6, 2, 4, 6)
        assert (start["vetted"], start["vetted_from_file"], start["vetted_from_store"]) == (2, 2, 0)
        assert v.state()["history"][-1]["n_vetted"] == p["vetted"]  # the chart and the count agree


def test_an_answer_for_an_item_vetted_in_the_file_is_counted_once(tmp_path):
    nan = np.nan
    with _vet(tmp_path, [1, nan, 0, nan]) as v:
        v.answer(CLIENT, "it0", "n")  # a person's answer for an item the file had labelled
        p = v.state()["progress"]
        assert (p["vetted"], p["vetted_from_file"], p["vetted_from_store"]) == (2, 1, 1)


def test_the_budget_counts_the_labels_in_the_file_as_the_refits_do(tmp_path):
    nan = np.nan
    # 2 labels in the file, budget 4: two answers reach it (the refit stops proposing there too)
    with _vet(tmp_path, [1, nan, 0, nan, nan, nan, nan, nan], budget=4) as v:
        assert len(_answer_all(v)) == 2
        fits = v.state()["fits"]
        for _ in range(3):
            assert v.next(CLIENT) == {"item": None, "status": "budget"}
            assert v.wait_idle(30)
        assert v.state()["fits"] == fits
