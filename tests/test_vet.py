"""The vetting page (`bayeval vet`): leases, answers in the store before the 200, undo, skip,
background refits, a killed server, bad requests, and the files it may serve."""

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

import numpy as np
import pytest

import bayeval as be
from bayeval import EvalData, Posterior
from bayeval.active import ActiveSession, LabelStore
from bayeval.cards import CardError, load_card
from bayeval.vet import ItemView, VetSession, find_card, open_vet

starlette = pytest.importorskip("starlette", reason="the vet extra: pip install -e '.[vet]'")
from starlette.testclient import TestClient  # noqa: E402

from bayeval.vet.app import create_app  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "test-token-0123456789"
N = 30


def _data(n=N):
    rng = np.random.default_rng(0)
    truth = (rng.random(n) < 0.4).astype(int)
    scores = np.round(truth * 0.5 + rng.random(n), 6)
    return EvalData(scores, item_ids=[f"i{j:02d}" for j in range(n)]), truth


def _model(d: EvalData) -> Posterior:
    """A cheap stand-in estimator (no PyMC): P(z = 1) grows with the score."""
    p = np.clip(d.scores / 1.5, 0.02, 0.98)
    return Posterior.from_probabilities(d, p, draws=200, random_seed=1, check=False)


class _Gate:
    """A model that waits for the test to open the gate: a refit the test can hold open."""

    def __init__(self):
        self.entered = threading.Event()
        self.gate = threading.Event()
        self.calls = 0

    def __call__(self, d):
        self.calls += 1
        self.entered.set()
        assert self.gate.wait(30), "the test never opened the gate"
        return _model(d)


def _vet(tmp_path, model=_model, *, batch_size=5, **kw) -> VetSession:
    data, _ = _data()
    active = ActiveSession(data, model, metric="average_precision", store=tmp_path / "vet.sqlite",
                           batch_size=batch_size, random_seed=0, progressbar=False)
    texts = [f"item {j}" for j in range(N)]
    texts[3] = "<script>alert('x')</script> & <b>bold</b>"
    return VetSession(active, ItemView(data, texts=texts), annotator="ana", **kw)


@pytest.fixture()
def vet(tmp_path):
    v = _vet(tmp_path)
    assert v.wait_idle(30)
    yield v
    v.close()


@pytest.fixture()
def client(vet):
    with TestClient(create_app(vet, token=TOKEN), headers={"X-Bayeval-Token": TOKEN}) as c:
        yield c


def _labels(path):
    with LabelStore(path) as st:
        return st.labels()[["item", "value", "annotator"]].values.tolist()


# ------------------------------------------------------------------- answers


def test_an_answer_is_in_the_store_before_the_200(client, vet, monkeypatch):
    first = client.post("/api/next", json={"client": "tab-aaaaaaaa"}).json()
    assert first["status"] == "item"
    item = first["item"]["item"]
    seen = []
    add = vet.store.add

    def spy(*args, **kwargs):  # the row is committed when add returns, before any response
        n = add(*args, **kwargs)
        seen.append(_labels(vet.store.path))
        return n

    monkeypatch.setattr(vet.store, "add", spy)
    r = client.post("/api/answer", json={"client": "tab-aaaaaaaa", "item": item, "label": "y"})
    assert r.status_code == 200
    assert seen == [[[item, 1, "ana"]]]
    assert r.json()["recorded"] == {"item": item, "label": 1, "annotator": "ana", "batch": 1}
    assert r.json()["next"]["item"]["item"] != item
    # a name typed on the page wins over the server's
    nxt = r.json()["next"]["item"]["item"]
    client.post("/api/answer", json={"client": "tab-aaaaaaaa", "item": nxt, "label": "n", "annotator": "ben"})
    assert _labels(vet.store.path)[-1] == [nxt, 0, "ben"]


def test_a_store_that_cannot_be_written_is_not_acknowledged(client, vet, monkeypatch):
    item = client.post("/api/next", json={"client": "tab-aaaaaaaa"}).json()["item"]["item"]

    def full(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(vet.store, "add", full)
    r = client.post("/api/answer", json={"client": "tab-aaaaaaaa", "item": item, "label": "y"})
    assert r.status_code == 503 and r.json()["error"].startswith("NOT SAVED") and "disk full" in r.json()["error"]
    monkeypatch.undo()
    # the item is still this page's, to answer again
    again = client.post("/api/next", json={"client": "tab-aaaaaaaa"}).json()
    assert again["item"]["item"] == item and _labels(vet.store.path) == []


def test_skip_and_undo(client, vet):
    c = {"client": "tab-aaaaaaaa"}
    a = client.post("/api/next", json=c).json()["item"]["item"]
    b = client.post("/api/skip", json={**c, "item": a}).json()["next"]["item"]["item"]
    assert b != a and _labels(vet.store.path) == []  # a skip writes no label ...
    assert vet.state()["progress"]["skipped"] == 1
    r = client.post("/api/answer", json={**c, "item": b, "label": "y"}).json()
    assert r["next"]["item"]["item"] not in (a, b)
    # undo the answer: b comes back with its earlier label; the new answer replaces it
    u = client.post("/api/undo", json=c).json()
    assert u["undone"] == {"action": "answer", "item": b, "label": 1}
    assert u["next"]["status"] == "again" and u["next"]["item"]["item"] == b and u["next"]["earlier"] == 1
    # skipping it now keeps the earlier "yes" (as the page says): vetted, not skipped, nothing written
    r = client.post("/api/skip", json={**c, "item": b}).json()
    assert r["kept"] == 1 and r["next"]["item"]["item"] != b
    assert vet.state()["progress"]["skipped"] == 1 and len(_labels(vet.store.path)) == 1
    u = client.post("/api/undo", json=c).json()  # and undo brings it back once more
    assert u["undone"] == {"action": "answer", "item": b, "label": 1} and u["next"]["status"] == "again"
    client.post("/api/answer", json={**c, "item": b, "label": "n"})
    with LabelStore(vet.store.path) as st:
        assert st.resolved()[b] == 0 and len(st) == 2  # append-only: both rows kept, the latest counts
    # undo the new answer, then the skip: a is back on the screen
    client.post("/api/undo", json=c)
    u = client.post("/api/undo", json=c).json()
    assert u["undone"]["action"] == "skip" and u["next"]["item"]["item"] == a
    assert vet.state()["progress"]["skipped"] == 0
    r = client.post("/api/undo", json=c)
    assert r.status_code == 409 and "nothing to undo" in r.json()["error"]


def test_skipped_items_stay_skipped_and_the_next_batch_leaves_them_out(tmp_path):
    with _vet(tmp_path, batch_size=3) as v:
        assert v.wait_idle(30)
        first = v.store.batch_items(1)
        for _ in first:
            r = v.next("tab-aaaaaaaa")
            v.skip("tab-aaaaaaaa", r["item"]["item"])
        assert v.next("tab-aaaaaaaa")["status"] == "batch"  # asks the worker for the next batch
        assert v.wait_idle(30)
        second = v.store.batch_items(2)
        assert not set(first) & set(second)
    with _vet(tmp_path, batch_size=3) as v:  # reopened: the skips are remembered
        assert v.wait_idle(30)
        assert v.state()["progress"]["skipped"] == 3
        assert v.next("tab-aaaaaaaa")["item"]["item"] in second


# ------------------------------------------------------------ two browsers


def test_two_clients_get_disjoint_items_and_keep_every_label(client, vet):
    _, truth = _data()
    seen = {"tab-aaaaaaaa": [], "tab-bbbbbbbb": []}
    holding = {c: client.post("/api/next", json={"client": c}).json()["item"]["item"] for c in seen}
    assert holding["tab-aaaaaaaa"] != holding["tab-bbbbbbbb"]
    for _ in range(8):  # they answer in turn, each its own item
        for c in seen:
            item = holding[c]
            if item is None:
                continue
            other = [i for k, i in holding.items() if k != c]
            assert item not in other
            seen[c].append(item)
            r = client.post("/api/answer", json={"client": c, "item": item,
                                                 "label": "y" if truth[int(item[1:])] else "n"}).json()
            holding[c] = r["next"]["item"]["item"] if r["next"]["item"] else None
        if not any(holding.values()):
            assert vet.wait_idle(30)
            holding = {c: (client.post("/api/next", json={"client": c}).json()["item"] or {}).get("item")
                       for c in seen}
    a, b = set(seen["tab-aaaaaaaa"]), set(seen["tab-bbbbbbbb"])
    assert a and b and not a & b
    with LabelStore(vet.store.path) as st:
        got = st.resolved()
    assert set(got.index) == a | b
    assert all(got[i] == truth[int(i[1:])] for i in got.index)


def test_a_lease_passes_on_when_its_page_goes_quiet(tmp_path):
    now = [0.0]
    with _vet(tmp_path, lease_seconds=60, clock=lambda: now[0]) as v:
        assert v.wait_idle(30)
        a = v.next("tab-aaaaaaaa")["item"]["item"]
        now[0] = 50
        v.state("tab-aaaaaaaa")  # the page polls: its lease is renewed
        now[0] = 100
        assert v.next("tab-bbbbbbbb")["item"]["item"] != a
        now[0] = 200  # a went quiet
        b_items = {v.next(f"tab-c{k}cccccc")["item"]["item"] for k in range(3)}
        assert a in b_items
        # a's late answer is still kept (the store's conflict rule settles two answers)
        v.answer("tab-aaaaaaaa", a, "y")
        assert _labels(v.store.path) == [[a, 1, "ana"]]


# --------------------------------------------------------- background refit


def test_the_refit_runs_in_the_background_while_people_keep_vetting(tmp_path):
    gate = _Gate()
    with _vet(tmp_path, gate) as v:
        assert v.wait_idle(30) and gate.calls == 0  # the first batch is designed: no fit
        c = "tab-aaaaaaaa"
        item = v.next(c)["item"]["item"]
        v.answer(c, item, "y")
        assert gate.entered.wait(30)  # the refit started ...
        assert v.state()["refitting"] is True and v.state()["estimate"] is None
        answered = [item]
        for _ in range(3):  # ... and the page goes on with the proposed batch meanwhile
            r = v.next(c)
            assert r["status"] == "item"
            v.answer(c, r["item"]["item"], "n")
            answered.append(r["item"]["item"])
        assert len(_labels(v.store.path)) == 4
        gate.gate.set()
        assert v.wait_idle(30)
        s = v.state()
        assert s["refitting"] is False and s["error"] is None
        est = s["estimate"]
        assert est["kind"] == "metric" and est["lower"] <= est["mean"] <= est["upper"]
        # one positive in four answers: the page says what that does to the interval, beside it
        assert est["caveats"] == v.session.data.caveats() and est["caveats"][0].startswith("only 1 of the 4")
        assert s["history"] and s["history"][-1]["n_vetted"] == 4  # the refit after the last answer
        assert s["progress"]["vetted"] == 4


def test_a_failed_refit_is_shown_and_loses_nothing(tmp_path):
    def broken(d):
        raise RuntimeError("the sampler fell over")

    with _vet(tmp_path, broken) as v:
        assert v.wait_idle(30)
        item = v.next("tab-aaaaaaaa")["item"]["item"]
        v.answer("tab-aaaaaaaa", item, "y")
        assert v.wait_idle(30)
        assert "the sampler fell over" in v.state()["error"]
        assert _labels(v.store.path) == [[item, 1, "ana"]]


def test_a_comparison_readout_reaches_the_page(tmp_path):
    def gap(session, table):  # the hook a comparison session uses
        return {"kind": "gap", "label": "AP(A) - AP(B)", "mean": 0.05, "lower": -0.01, "upper": 0.11,
                "hdi_prob": 0.9, "p_better": 0.93}

    with _vet(tmp_path, readout=gap) as v:
        assert v.wait_idle(30)
        v.answer("tab-aaaaaaaa", v.next("tab-aaaaaaaa")["item"]["item"], "y")
        assert v.wait_idle(30)
        with TestClient(create_app(v, token=TOKEN)) as c:
            est = c.get("/api/state", params={"token": TOKEN}).json()["estimate"]
    assert est["kind"] == "gap" and est["p_better"] == 0.93


# ------------------------------------------------------------- a comparison


def _answer_batch(v, truth, client="tab-aaaaaaaa"):
    """Answer every item of the proposed batch with its true label; the ids answered."""
    done = []
    r = v.next(client)
    while r["item"] is not None:
        item = r["item"]["item"]
        v.answer(client, item, "y" if truth[item] else "n")
        done.append(item)
        r = v.next(client)
    return done


def _direct(v):
    """bayeval.compare on the store's labels, with the session's settings: what the page must show."""
    s = v.session
    cmp = be.compare(s.scores, s.data, transform=s.transform, draws=s.draws, chains=s.chains,
                     random_seed=s._fit_seed())
    return cmp, cmp.difference_summary(s.a, s.b, s.metric, width=s.width)


@pytest.mark.xdist_group("tests/test_compare.py")  # after test_compare.py's fits: the joint model is compiled
def test_a_comparison_session_shows_the_gap_of_compare_and_proposes_by_select(tmp_path):
    from test_compare_cards import pair

    from bayeval.vet import comparison_readout, find_target, open_compare

    a, b, truth = pair(tmp_path)
    store = tmp_path / "cmp.sqlite"
    with open_compare([a, b], store=store, width=0.05) as v:
        assert v.wait_idle(120)
        assert v.state()["estimate"] is None and v.store.batches()["strategy"].tolist() == ["design"]
        shown = v.next("tab-aaaaaaaa")["item"]
        assert set(shown["scores"]) == {"good", "weak"} and shown["text"].startswith("item ")
        first = _answer_batch(v, truth)
        assert len(first) == 8 and v.wait_idle(120), v.state()["error"]
        r1 = v.state()["estimate"]
        cmp1, d1 = _direct(v)
        assert r1["kind"] == "gap" and (r1["a"], r1["b"]) == ("good", "weak")
        assert r1 == comparison_readout(v.session, v.session.estimate())
        for key, col in (("mean", "mean"), ("lower", "hdi_5%"), ("upper", "hdi_95%"), ("p_better", "p_better"),
                         ("p_rope", "p_rope")):
            assert r1[key] == pytest.approx(d1[col], rel=1e-12, abs=1e-12), key
        assert r1["decided"] == cmp1.decided("good", "weak", width=0.05)
        assert r1["caveats"] and r1["caveats"] == cmp1.caveats()  # 8 labels: a handful of one class
        # the next batch is the one Comparison.select ranks first on these labels
        second = v.store.batch_items(2)
        assert v.store.batches()["strategy"].tolist()[-1] == "compare_gap"
        assert second == cmp1.select(8, "good", "weak", width=0.05).tolist()  # with a width: the gap
        assert _answer_batch(v, truth) == second and v.wait_idle(120)
        r2 = v.state()["estimate"]
        _, d2 = _direct(v)
        assert (r2["mean"], r2["p_better"]) != (r1["mean"], r1["p_better"])  # the labels moved the gap ...
        assert r2["mean"] == pytest.approx(d2["mean"], abs=1e-12)  # ... to where compare puts it
        assert r2["p_better"] == pytest.approx(d2["p_better"], abs=1e-12)
        # both intervals hold the pool's true gap (0.59; the interval need not narrow from 8 to 16
        # labels: a few labels can leave the weights at their prior's centre, and more can move them)
        z = np.array([[truth[str(i)] for i in v.session.data.item_ids]], dtype=np.int8)
        sa, sb = (v.session.scores[k] for k in ("good", "weak"))
        from bayeval.core import metrics as M

        gap = float(M.average_precision(z, np.asarray(sa))[0] - M.average_precision(z, np.asarray(sb))[0])
        for r in (r1, r2):
            assert r["lower"] <= gap <= r["upper"], (r, gap)
        seen = [h["n_vetted"] for h in v.state()["history"]]  # (a refit may also run between answers)
        assert 8 in seen and seen[-1] == 16
    # the store remembers the comparison: reopened from it, the session resumes
    cards, path, record = find_target([store])
    assert [c.path for c in cards] == [a.resolve(), b.resolve()] and path == store
    assert record == {"cards": [str(a.resolve()), str(b.resolve())], "metric": "average_precision", "width": 0.05}
    with open_compare(cards, store=store, width=record["width"]) as v:
        assert v.wait_idle(120)
        assert v.state()["progress"]["vetted"] == 16 and v.state()["estimate"]["mean"] == pytest.approx(r2["mean"])
    with pytest.raises(ValueError, match="the label store of a comparison"):  # not a single card's store
        find_card(store)
    single = tmp_path / "single.sqlite"
    open_vet(load_card(a), store=single, draws=50, tune=50).close()
    with pytest.raises(ValueError, match="a comparison keeps its own store"):
        open_compare([a, b], store=single)


# ------------------------------------------------------------------ safety


@pytest.mark.parametrize("how", ["none", "wrong", "query"])
def test_the_token_is_required(vet, how):
    with TestClient(create_app(vet, token=TOKEN)) as c:
        if how == "query":
            assert c.get("/", params={"token": TOKEN}).status_code == 200
            return
        params = {} if how == "none" else {"token": "x" * 21}
        for r in (c.get("/", params=params), c.get("/api/state", params=params),
                  c.post("/api/next", json={"client": "tab-aaaaaaaa"}, params=params)):
            assert r.status_code == 403 and "token" in r.json()["error"]
    assert _labels(vet.store.path) == []


@pytest.mark.parametrize(("path", "payload", "status", "words"), [
    ("/api/answer", {"client": "tab-aaaaaaaa", "item": "i99", "label": "y"}, 404, "not an item"),
    ("/api/answer", {"client": "tab-aaaaaaaa", "item": "I01", "label": "y"}, 404, "did you mean 'i01'"),
    ("/api/answer", {"client": "tab-aaaaaaaa", "item": 1, "label": "y"}, 404, "not an item"),
    ("/api/answer", {"client": "tab-aaaaaaaa", "item": "i01", "label": "maybe"}, 400, "'y' or 'n'"),
    ("/api/answer", {"client": "tab-aaaaaaaa", "item": "i01", "label": 0.5}, 400, "'y' or 'n'"),
    ("/api/answer", {"client": "tab-aaaaaaaa", "item": "i01"}, 400, "missing ['label']"),
    ("/api/answer", {"client": "tab-aaaaaaaa", "item": "i01", "label": "y", "x": 1}, 400, "unknown ['x']"),
    ("/api/answer", {"client": "tab-aaaaaaaa", "item": "i01", "label": "y", "annotator": ""}, 400, "annotator"),
    ("/api/next", {"client": "x"}, 400, "client"),
    ("/api/next", ["tab-aaaaaaaa"], 400, "JSON object"),
    ("/api/skip", {"client": "tab-aaaaaaaa", "item": None}, 404, "not an item"),
])
def test_bad_requests_get_a_clear_4xx_and_write_nothing(client, vet, path, payload, status, words):
    r = client.post(path, json=payload)
    assert r.status_code == status and words in r.json()["error"], r.text
    assert _labels(vet.store.path) == []


def test_requests_that_are_not_json(client, vet):
    r = client.post("/api/next", content=b"client=tab-aaaaaaaa",
                    headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert r.status_code == 415  # a form from another site cannot post here
    r = client.post("/api/next", content=b"{not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and "not valid JSON" in r.json()["error"]
    r = client.post("/api/next", content=b"x" * 20_000, headers={"Content-Type": "application/json"})
    assert r.status_code == 413
    assert client.get("/api/answer").status_code == 405


def test_pages_forbid_inline_scripts_and_send_no_referrer(client):
    r = client.get("/")
    csp = r.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp
    assert r.headers["referrer-policy"] == "no-referrer"
    assert "<script src=\"static/vet.js\"" in r.text and "innerHTML" not in client.get("/static/vet.js").text
    assert client.get("/static/../session.py").status_code == 404


def test_hostile_text_is_data_not_markup(client, vet):
    shown = vet.view.show(3)
    assert shown["text"].startswith("<script>")  # kept verbatim as JSON text ...
    page = client.get("/").text
    assert "alert(" not in page  # ... never put into the page's markup; the script sets it as text
    assert "textContent" in client.get("/static/vet.js").text


def _image_card(tmp_path, images, extra=""):
    folder = tmp_path / "card"
    folder.mkdir()
    (folder / "pics").mkdir()
    (folder / "pics" / "a.png").write_bytes(b"\x89PNG\r\n\x1a\nfake")
    (tmp_path / "secret.png").write_bytes(b"\x89PNG\r\n\x1a\nTOP-SECRET-BYTES")
    (folder / "notes.txt").write_text("PRIVATE-NOTES")
    n = len(images)
    rows = "\n".join(f"{0.9 - j / n:.3f},{img}" for j, img in enumerate(images))
    (folder / "s.csv").write_text("score,image\n" + rows + "\n")
    (folder / "card.toml").write_text(f'''
title = "images"
description = "a card with images"
data = {{ file = "s.csv", score = "score" }}
model = {{ name = "calibration" }}
sampling = {{ draws = 100, tune = 100, chains = 1 }}
vet = {{ image = "image", batch_size = 4{extra} }}
''')
    return folder


def test_only_image_files_named_in_the_card_inside_its_folder_are_served(tmp_path):
    images = ["pics/a.png", "../secret.png", "notes.txt", "https://example.org/x.png", "javascript:alert(1)",
              str(tmp_path / "secret.png"), "pics/missing.png", "pics/../pics/a.png"]
    card = load_card(_image_card(tmp_path, images))
    data, _ = card.load_data()
    view = ItemView.from_card(card, data)
    kinds = [(view.show(j)["image"] or {}).get("kind") for j in range(len(images))]
    assert kinds == ["file", "missing", "missing", "url", "missing", "missing", "missing", "file"]
    active = ActiveSession(data, _model, store=tmp_path / "v.sqlite", batch_size=4, progressbar=False)
    with VetSession(active, view) as v, TestClient(create_app(v, token=TOKEN)) as c:
        ok = c.get("/media/0", params={"token": TOKEN})
        assert ok.status_code == 200 and ok.content.endswith(b"fake") and ok.headers["content-type"] == "image/png"
        for j in (1, 2, 3, 4, 5, 6, 99):
            r = c.get(f"/media/{j}", params={"token": TOKEN})
            assert r.status_code == 404 and b"TOP-SECRET" not in r.content and b"PRIVATE" not in r.content
        assert c.get("/media/0").status_code == 403  # the token, for images too
        assert c.get("/media/..%2Fsecret.png", params={"token": TOKEN}).status_code == 404


# ----------------------------------------------------- cards, the command


def test_card_vet_table_is_checked(tmp_path):
    folder = _image_card(tmp_path, ["pics/a.png"] * 3, extra=", batch_sise = 3")
    with pytest.raises(CardError, match=r"\[vet\]: unknown key\(s\) \['batch_sise'\]"):
        load_card(folder)
    (folder / "card.toml").write_text((folder / "card.toml").read_text().replace(
        ", batch_sise = 3", ', metric = "roc_auc"'))
    with pytest.raises(CardError, match=r"\[vet\] metric: 'roc_auc' is not a \[report\] metric"):
        load_card(folder)


def test_the_digits_card_shows_its_images():
    card = load_card(ROOT / "models" / "digits_vet")
    data, truth = card.load_data()
    assert (data.n_items, data.n_vetted, int(truth.sum())) == (899, 0, 87)
    view = ItemView.from_card(card, data)
    assert all(view.show(j)["image"]["kind"] == "file" for j in range(0, data.n_items, 97))
    assert view.media_file(5).read_bytes().startswith(b"\x89PNG")


def test_find_card_reopens_from_the_store(tmp_path):
    folder = _image_card(tmp_path, ["pics/a.png"] * 6)
    store = tmp_path / "elsewhere.sqlite"
    with open_vet(load_card(folder), store=store, draws=50, tune=50) as v:
        assert v.wait_idle(30)
    card, path = find_card(store)
    assert card.path == folder.resolve() and path == store
    with LabelStore(tmp_path / "plain.sqlite"):
        pass
    with pytest.raises(ValueError, match="not one written by `bayeval vet`"):
        find_card(tmp_path / "plain.sqlite")
    # the card folder moved together with a store kept inside it: the card beside the store is used
    inside = folder / "vet.sqlite"
    shutil.copy(store, inside)
    moved = shutil.move(str(folder), str(tmp_path / "moved"))
    said = []
    card, path = find_card(Path(moved) / "vet.sqlite", announce=said.append)
    assert card.path == Path(moved).resolve() and path == Path(moved) / "vet.sqlite"
    assert len(said) == 1 and "no longer there" in said[0]  # which card is used, said
    # a store whose card is gone and has none beside it: the error says how to name the card
    with pytest.raises(ValueError, match=r"not there any more .* `bayeval vet CARD --store"):
        find_card(store)


def _start(args, cwd):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "bayeval", "vet", *args], cwd=cwd, env=env,
                            stderr=subprocess.PIPE, text=True)
    lines = []
    end = time.monotonic() + 120
    while time.monotonic() < end:
        line = proc.stderr.readline()
        if not line:
            break
        lines.append(line)
        m = re.search(r"(http://127\.0\.0\.1:\d+)/\?token=(\S+)", line)
        if m:  # keep reading what the server says, so that it never blocks on a full pipe
            threading.Thread(target=proc.stderr.read, daemon=True).start()
            proc.said = lines  # what it printed up to its address
            return proc, m.group(1), m.group(2)
    proc.kill()
    raise AssertionError("the server did not start:\n" + "".join(lines) + proc.stderr.read())


def test_a_killed_server_loses_nothing_acknowledged_and_resumes(tmp_path):
    import httpx

    t0 = time.monotonic()
    folder = _image_card(tmp_path, ["pics/a.png"] * 12)
    store = tmp_path / "labels.sqlite"
    proc, url, token = _start([str(folder), "--store", str(store), "--port", "0", "--draws", "50",
                               "--tune", "50", "--annotator", "ana"], tmp_path)
    head = {"X-Bayeval-Token": token}
    try:
        with httpx.Client(base_url=url, headers=head, timeout=30) as c:
            r = c.post("/api/next", json={"client": "tab-aaaaaaaa"})
            for _ in range(30):  # the first batch is being chosen
                if r.json()["status"] == "item":
                    break
                time.sleep(0.2)
                r = c.post("/api/next", json={"client": "tab-aaaaaaaa"})
            acked = []
            for k in range(3):
                item = r.json()["item"]["item"] if k == 0 else r.json()["next"]["item"]["item"]
                r = c.post("/api/answer", json={"client": "tab-aaaaaaaa", "item": item, "label": "yn"[k % 2]})
                assert r.status_code == 200
                acked.append((item, 1 - k % 2))
    finally:
        proc.send_signal(signal.SIGKILL)  # no clean shutdown
        proc.wait(30)
    print("first server", time.monotonic() - t0)
    with LabelStore(store) as st:
        assert [(i, int(v)) for i, v in st.resolved().items()] == acked
    proc, url, token = _start([str(store), "--port", "0"], tmp_path)  # reopened from its store
    try:
        # the killed server left its claim on the store behind: taken over, and said so
        assert any(line.startswith("warning:") and "did not close (killed?); this one takes it over" in line
                   for line in proc.said), proc.said
        with httpx.Client(base_url=url, headers={"X-Bayeval-Token": token}, timeout=30) as c:
            print("second up", time.monotonic() - t0)
            s = c.get("/api/state").json()
            assert s["progress"]["vetted"] == 3 and s["progress"]["batch"] == 1
            r = c.post("/api/next", json={"client": "tab-bbbbbbbb"}).json()
            assert r["status"] == "item" and r["item"]["item"] not in {i for i, _ in acked}
    finally:
        proc.send_signal(signal.SIGINT)  # Ctrl-C: a clean stop, without waiting for a refit
        assert proc.wait(30) == 0
    print("second server", time.monotonic() - t0)


# ------------------------------------------------------------ in a browser


def _browser():
    """A headless Chromium driver, or skip (fail when BAYEVAL_REQUIRE_BROWSER=1), as in test_report."""
    required = os.environ.get("BAYEVAL_REQUIRE_BROWSER") == "1"
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        missing = "selenium is not installed"
    else:
        missing = next((f"{p} is missing" for p in ("/usr/bin/chromium", "/usr/bin/chromedriver")
                        if not os.path.exists(p)), None)
    if missing:
        if required:
            pytest.fail(f"BAYEVAL_REQUIRE_BROWSER=1 but {missing}.")
        pytest.skip(f"no headless browser: {missing}")
    import tempfile

    opts = Options()
    for arg in ("--headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run "
                "--disable-background-networking --disable-component-update --disable-sync").split():
        opts.add_argument(arg)
    opts.add_argument(f"--user-data-dir={tempfile.mkdtemp(prefix='bayeval-chrome-')}")
    opts.add_argument("--window-size=1100,760")
    opts.binary_location = "/usr/bin/chromium"
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)


HOSTILE = "<script>document.title='pwned'</script><img src=x onerror=\"document.title='pwned'\"> & <b>b</b>"


def _wait(driver, what, timeout=60):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = driver.execute_script(what)
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for: {what}")


def _shown(driver):
    return _wait(driver, "const b = document.getElementById('yes');"
                         "return !b.disabled && document.getElementById('item-id').textContent;")


def _press(driver, key, before):
    from selenium.webdriver.common.by import By

    driver.find_element(By.TAG_NAME, "body").send_keys(key)
    return _wait(driver, "const b = document.getElementById('yes'); const i = "
                         f"document.getElementById('item-id').textContent; return !b.disabled && i !== {before!r} && i;")


def test_the_page_in_a_browser_keys_two_tabs_hostile_text_screenshot_and_a_killed_server(tmp_path):
    import shutil

    import pandas as pd

    driver = _browser()
    folder = tmp_path / "digits"
    shutil.copytree(ROOT / "models" / "digits_vet", folder, ignore=shutil.ignore_patterns("vet.sqlite*"))
    scores = pd.read_csv(folder / "scores.csv", dtype={"id": str})
    scores["text"] = HOSTILE
    scores.to_csv(folder / "scores.csv", index=False)
    toml = (folder / "card.toml").read_text().replace('image = "image"', 'image = "image"\ntext = "text"')
    (folder / "card.toml").write_text(toml)
    store = tmp_path / "labels.sqlite"
    proc, url, token = _start([str(folder), "--store", str(store), "--port", "0", "--draws", "300",
                               "--annotator", "ana"], tmp_path)
    truth = dict(zip(scores["id"], scores["truth"], strict=True))
    try:
        driver.set_page_load_timeout(60)
        driver.get(f"{url}/?token={token}")
        first = _shown(driver)
        # hostile text is shown as text, and never runs
        assert driver.execute_script("return document.getElementById('text').textContent") == HOSTILE
        assert driver.title != "pwned" and driver.execute_script("return document.scripts.length") == 1
        assert _wait(driver, "const i = document.getElementById('image'); return i.complete && i.naturalWidth") == 8
        # the keyboard: y, n, s, then u brings the skipped item back
        answered = []
        item = first
        for key in ("y", "n"):
            answered.append((item, 1 if key == "y" else 0))
            item = _press(driver, key, item)
        skipped = item
        item = _press(driver, "s", item)
        assert _press(driver, "u", item) == skipped
        with LabelStore(store) as st:
            assert [(i, int(v)) for i, v in st.resolved().items()] == answered
        # a second tab is a second client: never the same item
        one = driver.current_window_handle
        driver.switch_to.new_window("tab")
        driver.get(f"{url}/?token={token}")
        other = _shown(driver)
        assert other != skipped
        for _ in range(3):  # both vet the truth, in turn
            answered.append((other, int(truth[other])))
            other = _press(driver, "y" if truth[other] else "n", other)
            driver.switch_to.window(one)
            assert _shown(driver) != other
            mine = _shown(driver)
            answered.append((mine, int(truth[mine])))
            _press(driver, "y" if truth[mine] else "n", mine)
            driver.switch_to.window(driver.window_handles[1])
        with LabelStore(store) as st:
            got = {i: int(v) for i, v in st.resolved().items()}
        assert len(answered) == len({i for i, _ in answered}) == 8 and got == dict(answered)
        # after the background refit the estimate and its chart are on the page
        driver.switch_to.window(one)
        _wait(driver, "return document.getElementById('estimate').textContent.includes('credible interval')"
                      " && document.getElementById('refit').textContent === '' "
                      " && document.querySelectorAll('#chart circle').length >= 1", timeout=240)
        shot = Path(os.environ.get("BAYEVAL_VET_SCREENSHOT", tmp_path / "vet.png"))
        assert driver.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
        # the server is killed mid-session; restarted on its store, the page resumes
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        proc, url, token = _start([str(store), "--port", "0"], tmp_path)
        driver.get(f"{url}/?token={token}")
        again = _shown(driver)
        assert again not in dict(answered)
        _wait(driver, "return document.getElementById('progress').textContent.startsWith('8 of 899 items vetted')")
        _press(driver, "y", again)
        with LabelStore(store) as st:
            assert len(st.resolved()) == 9 and st.resolved()[again] == 1
    finally:
        driver.quit()
        proc.send_signal(signal.SIGINT)
        proc.wait(30)


@pytest.mark.xdist_group("tests/test_compare.py")  # after test_compare.py's fits: the joint model is compiled
def test_the_comparison_page_in_a_browser_shows_the_gap_and_p_better_after_a_refit(tmp_path):
    import socket

    import uvicorn
    from test_compare_cards import pair

    from bayeval.vet import open_compare

    driver = _browser()
    a, b, truth = pair(tmp_path)
    v = open_compare([a, b], store=tmp_path / "cmp.sqlite", width=0.05)
    sock = socket.create_server(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(create_app(v, token=TOKEN), log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/?token={TOKEN}"
        driver.set_page_load_timeout(60)
        driver.get(url)
        # both classifiers' scores are shown with the item
        item = _shown(driver)
        assert driver.execute_script("return document.getElementById('score').textContent").startswith("good ")
        from selenium.webdriver.common.by import By

        for k in range(8):  # the first (designed) batch, answered with the keyboard
            item = _shown(driver) if k else item
            driver.find_element(By.TAG_NAME, "body").send_keys("y" if truth[item] else "n")
            _wait(driver, f"return document.getElementById('message').textContent === "
                          f"'saved: {item} = {'yes' if truth[item] else 'no'}'")
        assert len(v.store.resolved()) == 8
        text = _wait(driver, "const e = document.getElementById('estimate').textContent;"
                             "return document.getElementById('refit').textContent === '' && e.includes('P(good better)')"
                             " && document.querySelectorAll('#chart circle').length >= 1 && e", timeout=240)
        est = v.state()["estimate"]
        direct = be.compare(v.session.scores, v.session.data, draws=v.session.draws, chains=v.session.chains,
                            random_seed=v.session._fit_seed()).difference_summary("good", "weak", width=0.05)
        assert est["p_better"] == pytest.approx(direct["p_better"]) and est["mean"] == pytest.approx(direct["mean"])
        assert f"P(good better) = {direct['p_better']:.3f}" in text and f"{direct['mean']:.3f}  [" in text
        assert f"P(|gap| ≤ 0.05) = {direct['p_rope']:.3f}" in text
        label = driver.execute_script("return document.getElementById('estimate-label').textContent")
        assert label == "gap: average_precision: good - weak"
        verdict = driver.execute_script("return document.getElementById('verdict').textContent")
        assert verdict == ("not decided yet: keep vetting." if est["decided"] is None else
                           f"decided: {est['decided']} is better (probability > 0.95). You may stop here.")
        shown = driver.execute_script("return [...document.querySelectorAll('#caveats li')].map(e => e.textContent)")
        assert est["caveats"] and shown == est["caveats"]  # 8 labels: a handful of one class, said beside the gap
        shot = Path(os.environ.get("BAYEVAL_VET_COMPARE_SCREENSHOT", tmp_path / "vet-compare.png"))
        assert driver.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
    finally:
        driver.quit()
        server.should_exit = True
        thread.join(30)
        sock.close()
        v.close()


def test_a_comparison_s_store_is_found_in_either_order_and_under_its_older_name(tmp_path):
    """`bayeval vet A B` then `bayeval vet B A` kept the labels in two stores (named after the
    order given), so each page and `bayeval compare` saw only part of them. The default store
    is now the same for both orders; the other order is refused (the store's history is of A's
    gap over B), and a store named after the order given, as before, is still reopened."""
    from test_compare_cards import pair

    from bayeval.vet import open_compare

    a, b, _ = pair(tmp_path, n=40)
    with open_compare([a, b]) as v:
        assert v.wait_idle(120)
        canonical = v.store.path
    assert canonical.resolve() == (a / "vet-compare-weak.sqlite").resolve()
    with pytest.raises(ValueError, match="in the other order") as err:
        open_compare([b, a])
    assert f"give the cards in that order (`bayeval vet {a.resolve()} {b.resolve()}`)" in str(err.value).lower()
    canonical.rename(tmp_path / "elsewhere.sqlite")
    older = b / "vet-compare-good.sqlite"  # what `bayeval vet weak good` wrote before
    with open_compare([b, a], store=older) as v:
        assert v.wait_idle(120)
    with open_compare([b, a]) as v:
        assert v.wait_idle(120)
        assert v.store.path.resolve() == older.resolve()
    assert not (a / "vet-compare-weak.sqlite").exists()


def test_the_comparison_page_reads_each_card_s_transform_as_bayeval_compare_does(tmp_path):
    """`bayeval vet A B` fitted both cards' scores with transform "auto" while `bayeval compare`
    reads each card's `[model] transform` (a log-odds card standardized on the page, read as it
    is by the command): the two could show different gaps for the same labels."""
    from bayeval.cards import join_cards
    from bayeval.vet import open_compare
    from bayeval.vet.comparison import card_transforms

    root = Path(__file__).resolve().parents[1] / "models"
    joined = join_cards([root / "digits_vet", root / "digits_vet_nb"])
    assert card_transforms(joined) == {"digits_vet": "auto", "digits_vet_nb": "logodds"}
    with open_compare(joined, store=tmp_path / "cmp.sqlite") as v:
        assert v.session.transform == {"digits_vet": "auto", "digits_vet_nb": "logodds"}


def test_the_page_offers_every_unfinished_batch_s_items_before_a_new_batch(tmp_path):
    """With two unfinished batches the page read the newest alone: it showed e and f, then chose a
    new batch that proposed the older batch's b and c again (batches [a b c], [d e f], [b c h g])."""
    from bayeval.vet.comparison import ComparisonSession

    data = EvalData(np.linspace(1, 0, 8), item_ids=list("abcdefgh"))
    path = tmp_path / "vet.sqlite"
    with LabelStore(path) as st:
        b1 = st.new_batch(["a", "b", "c"], strategy="design")
        st.add(["a"], [1], batch=b1)
        b2 = st.new_batch(["d", "e", "f"], strategy="design")
        st.add(["d"], [1], batch=b2)
    active = ActiveSession(data, _model, batch_size=4, strategy="design", store=path, random_seed=0, progressbar=False)
    with VetSession(active, ItemView(data), annotator="ana") as v:
        assert v.wait_idle(30)
        progress = v.state()["progress"]
        assert (progress["batch"], progress["remaining_in_batch"], progress["remaining_in_earlier_batches"]) == (2, 2, 2)
        shown = []
        for _ in range(12):
            r = v.next("tab-aaaaaaaa")
            if r["status"] == "batch":
                assert v.wait_idle(30)
                continue
            if r["item"] is None:
                break
            shown.append(r["item"]["item"])
            assert v.answer("tab-aaaaaaaa", r["item"]["item"], "n")["recorded"]["batch"] == (
                1 if shown[-1] in "bc" else 2 if shown[-1] in "ef" else 3)
        assert shown[:4] == ["b", "c", "e", "f"] and sorted(shown[4:]) == ["g", "h"]
        proposed = [v.store.batch_items(int(b)) for b in v.store.batches()["batch"]]
        assert proposed[2:] == [shown[4:]]  # the new batch holds no item proposed before
    # a comparison's session offers them the same way (no fit is needed to offer them)
    cpath = tmp_path / "cmp.sqlite"
    with LabelStore(cpath) as st:
        b1 = st.new_batch(["a", "b", "c"], strategy="design")
        st.add(["a"], [1], batch=b1)
        st.add(["d", "e", "f"], [1, 0, 0], batch=st.new_batch(["d", "e", "f"], strategy="design"))
    scores = {"x": np.linspace(1, 0, 8), "y": np.linspace(0, 1, 8)}
    with ComparisonSession(scores, item_ids=list("abcdefgh"), store=cpath, batch_size=4, draws=50) as s:
        assert s.next_batch() == ["b", "c"]


def test_a_comparison_refuses_a_threshold_that_flags_none_of_either_classifier_s_items_before_any_batch(tmp_path):
    """The comparison's page refused precision at a threshold above every score of its second
    classifier only when it designed the first batch: with the first batch's labels already given,
    the next batch was chosen by Comparison.select for a precision undefined in every draw."""
    from bayeval.vet.comparison import ComparisonSession

    rng = np.random.default_rng(0)
    y = (rng.random(60) < 0.4).astype(float)
    scores = {"a": np.clip(0.5 * y + 0.5 * rng.random(60), 0, 1), "b": 0.4 * rng.random(60)}  # b: all below 0.5
    ids = [f"i{j}" for j in range(60)]
    labels = np.where(np.arange(60) < 10, y, np.nan)  # past the first batch of 5
    for given in (None, labels):
        store = tmp_path / "cmp.sqlite"
        with pytest.raises(ValueError, match=r"Classifier 'b': precision at threshold=0.5: the threshold 0.5 flags "
                                             r"no item: it lies above every score \(max 0.3"):
            ComparisonSession(scores, given, item_ids=ids, batch_size=5, draws=50, chains=1, metric="precision",
                              metric_kwargs={"threshold": 0.5}, store=store)
        assert not store.exists()  # refused before the store was made
    with pytest.raises(ValueError, match=r"Classifier 'a': recall at threshold=0.0: the threshold 0 flags every item"):
        ComparisonSession(scores, labels, item_ids=ids, batch_size=5, draws=50, chains=1, metric="recall",
                          metric_kwargs={"threshold": 0.0}, store=tmp_path / "cmp.sqlite")
    ComparisonSession(scores, labels, item_ids=ids, batch_size=5, draws=50, chains=1, metric="precision",
                      metric_kwargs={"threshold": 0.2}, store=tmp_path / "ok.sqlite").close()  # flags some of each
