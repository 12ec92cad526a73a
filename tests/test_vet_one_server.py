"""One `bayeval vet` server per label store: a second one is refused while the first runs.

Two servers on one store each kept their item leases in memory, so both offered the same
items (every one of 20, in a sweep), and people vetted them twice with answers that
disagreed. The first server now holds ``STORE.vet-server`` (an operating-system lock,
released when its process ends however it ends); a second is refused with who holds it,
and a server that was killed is taken over with a line saying so.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import warnings

import numpy as np
import pytest

from bayeval import EvalData, Posterior
from bayeval.active import ActiveSession
from bayeval.vet import ItemView, VetError, VetSession

N = 20


def _model(d: EvalData) -> Posterior:
    """A cheap stand-in estimator (no PyMC): P(z = 1) grows with the score."""
    return Posterior.from_probabilities(d, np.clip(d.scores, 0.02, 0.98), draws=100, random_seed=1, check=False)


def _vet(store, annotator, model=_model) -> VetSession:
    data = EvalData(np.linspace(0.9, 0.1, N), item_ids=[f"i{j:02d}" for j in range(N)])
    active = ActiveSession(data, model, metric="average_precision", store=store, batch_size=N,
                           random_seed=0, progressbar=False)
    try:
        return VetSession(active, ItemView(data), annotator=annotator)
    except BaseException:
        active.close()
        raise


def test_a_second_server_on_a_store_in_use_is_refused_and_the_first_hands_out_each_item_once(tmp_path):
    store = tmp_path / "vet.sqlite"
    first = _vet(store, "one")
    try:
        assert first.wait_idle(30)
        with pytest.raises(VetError) as exc:  # before: a second session, offering the same items
            _vet(store, "two")
        said = str(exc.value)
        assert exc.value.status == 409 and str(store) in said
        assert f"pid {os.getpid()} on host {socket.gethostname()}" in said and "another --store" in said
        offered = []
        for k in range(N):  # two pages of the first server: every item once
            client = f"tab-{'ab'[k % 2] * 8}"
            r = first.next(client)
            assert r["status"] == "item"
            offered.append(r["item"]["item"])
            first.answer(client, offered[-1], "y")
        assert len(set(offered)) == N
    finally:
        first.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a clean close leaves nothing to take over: no line
        second = _vet(store, "two")
    second.close()
    assert not (tmp_path / "vet.sqlite.vet-server").exists()


def test_a_killed_servers_store_is_taken_over_with_a_line_saying_so(tmp_path):
    pytest.importorskip("fcntl", reason="the holder below locks as a POSIX server does")
    store = tmp_path / "vet.sqlite"
    # a server process that holds the store and is killed (no clean close): it leaves its file behind
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, json, sys, time; f = open(sys.argv[1], 'a+b'); "
         "fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB); f.write(json.dumps({'pid': 4242, 'host': 'h', "
         "'started': 'then'}).encode()); f.flush(); print('held', flush=True); time.sleep(60)",
         str(tmp_path / "vet.sqlite.vet-server")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(VetError, match="pid 4242 on host h, started then"):  # alive: refused
            _vet(store, "two")
    finally:
        holder.kill()
        holder.wait(30)
    with pytest.warns(UserWarning, match=r"\(pid 4242 on host h, started then\) did not close .* takes it over"):
        vet = _vet(store, "two")
    try:
        rec = json.loads((tmp_path / "vet.sqlite.vet-server").read_text())
        assert rec["pid"] == os.getpid()
        with pytest.raises(VetError, match="in use by another `bayeval vet` server"):
            _vet(store, "three")
    finally:
        vet.close()


def test_a_refit_still_running_after_close_keeps_the_store_until_it_ends(tmp_path):
    store = tmp_path / "vet.sqlite"
    entered, gate = threading.Event(), threading.Event()

    def slow(d):
        entered.set()
        assert gate.wait(30), "the test never opened the gate"
        return _model(d)

    first = _vet(store, "one", model=slow)
    assert first.wait_idle(30)  # the first batch: chosen on the scores, no fit
    first.answer("tab-aaaaaaaa", first.next("tab-aaaaaaaa")["item"]["item"], "y")  # a refit: the model
    assert entered.wait(30)
    first.close(timeout=0.05)  # the refit outlives close: it may still write a batch to the store
    assert first.refitting_thread_alive()
    with pytest.raises(VetError, match="in use by another"):
        _vet(store, "two")
    gate.set()
    first._worker.join(30)
    assert not first.refitting_thread_alive()
    _vet(store, "two").close()  # the refit ended: the store is free


def test_wait_idle_sleeps_while_a_refit_runs():
    """`VetSession.wait_idle` polled its flags without sleeping while a refit ran: it spun a core and
    held the interpreter the refit needed (a 4 s refit took 75 s in a test). Now it blocks."""
    import threading
    import time
    from types import SimpleNamespace

    from bayeval.vet.session import VetSession

    fake = SimpleNamespace(_idle=threading.Event(), _wake=threading.Event(), _refitting=True)

    def refit_ends():
        time.sleep(0.6)
        fake._refitting = False
        fake._idle.set()

    threading.Thread(target=refit_ends, daemon=True).start()
    cpu, wall = time.thread_time(), time.monotonic()
    assert VetSession.wait_idle(fake, timeout=10) is True
    cpu, wall = time.thread_time() - cpu, time.monotonic() - wall
    assert wall >= 0.5 and cpu < 0.2 * wall, (cpu, wall)  # before: cpu about equal to wall
    fake._idle.clear()
    fake._refitting = True
    assert VetSession.wait_idle(fake, timeout=0.3) is False  # still refitting: the timeout is kept
