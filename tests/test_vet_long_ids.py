"""Every id the card accepts can be answered and skipped on the vetting page: the request-size limit
makes room for the card's longest id (a 20 KB id was shown but every answer got 413)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bayeval import EvalData, Posterior
from bayeval.active import ActiveSession, LabelStore
from bayeval.vet import ItemView, VetSession

pytest.importorskip("starlette", reason="the vet extra: pip install -e '.[vet]'")
from starlette.testclient import TestClient  # noqa: E402

from bayeval.vet.app import create_app  # noqa: E402

TOKEN = "test-token-0123456789"
C = "tab-longids-1"


def _model(d: EvalData) -> Posterior:
    return Posterior.from_probabilities(d, np.clip(d.scores, 0.02, 0.98), draws=100, random_seed=1, check=False)


def test_an_item_with_a_very_long_id_can_be_answered_and_skipped(tmp_path):
    long_a = "a" * 20_000
    long_b = "é«»\u2028\"\\" * 4_000  # 24,000 characters, 112 KB as JSON with \u escapes
    ids = [long_a, long_b, "short"]
    data = EvalData(np.array([0.9, 0.8, 0.1]), item_ids=ids)
    active = ActiveSession(data, _model, store=tmp_path / "vet.sqlite", batch_size=3, random_seed=0,
                           progressbar=False)
    with VetSession(active, ItemView(data), annotator="ana") as v, \
            TestClient(create_app(v, token=TOKEN), headers={"X-Bayeval-Token": TOKEN}) as c:
        assert v.wait_idle(30)
        shown = {c.post("/api/next", json={"client": f"{C}{k}"}).json()["item"]["item"] for k in range(3)}
        assert shown == set(ids)
        r = c.post("/api/answer", json={"client": f"{C}0", "item": long_a, "label": "y"})
        assert r.status_code == 200, r.text
        # the page sends non-ASCII as UTF-8; another client may send \u escapes: both fit
        raw = json.dumps({"client": f"{C}1", "item": long_b, "label": "n"}).encode()  # ensure_ascii: escapes
        r = c.post("/api/answer", content=raw, headers={"Content-Type": "application/json"})
        assert r.status_code == 200, r.text
        assert c.post("/api/skip", json={"client": f"{C}2", "item": long_b}).status_code == 200
        with LabelStore(tmp_path / "vet.sqlite") as st:
            assert dict(st.resolved()) == {long_a: 1, long_b: 0}
        # still a limit: a body far beyond the longest id is refused, and the error says why
        r = c.post("/api/answer", json={"client": f"{C}0", "item": "x" * 200_000, "label": "y"})
        assert r.status_code == 413 and "at most" in r.json()["error"]
