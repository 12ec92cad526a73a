"""The state behind the vetting page: leased items, answers kept in the store, background refits.

A :class:`VetSession` wraps an :class:`~bayeval.active.ActiveSession` for several people
at once. Each browser tab is a *client* (a random id the page makes). A client asks for
the next item and gets one the batches proposed (an older unfinished batch's items first) that
nobody else holds: the item is
*leased* to it until it answers, skips, or goes quiet for ``lease_seconds``. An answer is
written to the :class:`~bayeval.active.LabelStore` (committed, fsync-ed) before the call
returns, so what the page acknowledged survives the server being killed; reopening the
same store resumes where the people stopped.

The leases live in the session, so a store has one session at a time: while one runs,
it holds the file ``STORE.vet-server`` beside the store (locked by the operating system,
which lets go when the process ends, however it ends), and a second :class:`VetSession`
on the store is refused with a :class:`VetError` that names the process holding it.
:meth:`VetSession.close` lets go; a session whose process was killed is taken over by
the next one, with a warning that says so.

A background thread owns the model: after answers arrive it re-reads the store, refits,
records the estimate (:meth:`ActiveSession.estimate`, kept in the store's history) and,
when the batch runs out, proposes the next one. People keep vetting the already-proposed
batch while it works; :meth:`VetSession.state` says ``refitting`` meanwhile.

Undo
----
The store is append-only, so an answer is never erased. ``undo`` brings the client's
last answered (or skipped) item back to the screen; the new answer is appended, and the
annotator's latest label is the one that counts (the store's conflict rule). An undone
skip is simply shown again. Skipping an item brought back by undoing an answer keeps
that answer (the item stays vetted, not skipped).

Comparison sessions
-------------------
What the page shows as the estimate comes from ``readout(session, table)``, a callable
returning a JSON-ready dict. The default, :func:`metric_readout`, gives one metric's mean
and credible interval (``kind="metric"``). A comparison of two classifiers passes its own
readout with ``kind="gap"``, the gap's ``mean``, ``lower``, ``upper`` and ``p_better``
(the posterior probability that the first classifier is better); the page then shows the
gap and ``P(A better)`` instead of one metric. :mod:`bayeval.vet.comparison` is that
session for two model cards (``bayeval vet CARD_A CARD_B``): its refit is
:func:`bayeval.compare`, its readout :func:`~bayeval.vet.comparison.comparison_readout`.
A session whose ``first_estimate_at`` attribute says so is first refitted once that
many items are vetted (a comparison: after its first batch).

Examples
--------
>>> import numpy as np, os, tempfile
>>> from bayeval import EvalData, Posterior
>>> from bayeval.active import ActiveSession
>>> from bayeval.vet import ItemView, VetSession
>>> data = EvalData(np.linspace(1, 0, 12), item_ids=[f"i{j}" for j in range(12)])
>>> model = lambda d: Posterior.from_probabilities(d, np.where(d.vetted, 0.5, 0.6), draws=100, random_seed=0)
>>> active = ActiveSession(data, model, batch_size=4, random_seed=0, progressbar=False,
...                        store=os.path.join(tempfile.mkdtemp(), "vet.sqlite"))
>>> vet = VetSession(active, ItemView(data), annotator="ana")
>>> vet.wait_idle(30)
True
>>> a, b = vet.next("tab-one-1")["item"], vet.next("tab-two-2")["item"]
>>> a["item"] != b["item"]          # two browsers never hold the same item
True
>>> vet.answer("tab-one-1", a["item"], "y")["recorded"]["label"]
1
>>> int(active.store.resolved()[a["item"]])   # in the store before the answer returned
1
>>> vet.close()
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import socket
import threading
import time
import traceback
import warnings
from datetime import UTC, datetime
from pathlib import Path

from ..active.session import ActiveSession
from ..active._store_items import labels_for_items
from ..active.store import KnownItems, LabelStore
from ..core._diagnostics import LOGODDS_ON_PROBABILITIES, said_before
from ..core._progress import quiet
from .items import ItemView

__all__ = ["VetSession", "VetError", "metric_readout", "open_vet", "find_card"]

_SKIPPED_KEY = "vet_skipped"
#: the store's record of the card of a single-card session (`bayeval vet CARD`)
CARD_KEY = "vet_card"
#: the store's record of a comparison session (`bayeval vet CARD_A CARD_B`): cards, metric, width
COMPARE_KEY = "vet_compare"
_CLIENT = re.compile(r"^[A-Za-z0-9_-]{8,64}$")
_ANSWERS = {"y": 1, "n": 0, "yes": 1, "no": 0, 1: 1, 0: 0}  # True == 1 and False == 0 as keys


class VetError(ValueError):
    """A request the vetting session refuses; ``status`` is the HTTP status the page gets.

    Examples
    --------
    >>> from bayeval.vet import VetError
    >>> VetError("nothing to undo", status=409).status
    409
    """

    def __init__(self, message: str, *, status: int = 400):
        super().__init__(message)
        self.status = status


#: beside the store ``S``, the file ``S.vet-server``: locked by the one server that uses ``S``
SERVER_SUFFIX = ".vet-server"


def _lock_now(fh) -> bool:
    """Lock the open file ``fh`` for this open file (not only this process), without waiting."""
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt

        try:
            fh.seek(0)  # every server locks the same byte: the first
            msvcrt.locking(fh.fileno(), msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _holder_text(fh) -> str:
    """Who holds the store, as the server file ``fh`` says (empty: nobody, or a clean close)."""
    try:
        fh.seek(0)
        rec = json.loads(fh.read())
        return f"pid {int(rec['pid'])} on host {rec['host']}, started {rec['started']}"
    except (OSError, ValueError, TypeError, KeyError):
        return "a server that has not said who it is yet"


def _hold_store(store: Path):
    """Become the one server of ``store``: lock ``STORE.vet-server``, or raise :class:`VetError`.

    The operating system releases the lock when the process ends, however it ends, so a
    killed server never blocks the next one; the file it leaves says who it was, and taking
    over is announced (a ``UserWarning``). Returns the open, locked file.
    """
    path = store.with_name(store.name + SERVER_SUFFIX)
    while True:
        try:
            fh = open(path, "a+b")  # noqa: SIM115 -- held open while the server runs
        except OSError as exc:
            raise OSError(f"Could not create {str(path)!r}, the file that keeps a second `bayeval vet` off the "
                          f"store ({exc}); the store's folder must be writable.") from exc
        if not _lock_now(fh):
            who = _holder_text(fh)
            fh.close()
            raise VetError(
                f"The label store {str(store)!r} is in use by another `bayeval vet` server ({who}; it holds "
                f"{str(path)!r}). Two servers on one store would offer the same items to two people. Open that "
                "server's page (the address it printed), or stop it (Ctrl-C) and start this one again; to vet "
                "apart from it, give another --store.", status=409)
        try:  # a server closing removes the file: hold the one that is at the path now
            if os.path.samestat(os.fstat(fh.fileno()), os.stat(path)):
                break
        except FileNotFoundError:
            pass
        fh.close()
    fh.seek(0)
    if fh.read():  # a server that did not close: killed, or its machine stopped
        warnings.warn(f"The label store {str(store)!r}: the last `bayeval vet` server on it ({_holder_text(fh)}) "
                      "did not close (killed?); this one takes it over. Every answer it acknowledged is in the "
                      "store.", UserWarning, stacklevel=3)
    fh.truncate(0)
    fh.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                         "started": datetime.now(UTC).isoformat(timespec="seconds")}).encode())
    fh.flush()
    return fh


def _let_go(fh, store: Path) -> None:
    """Stop being ``store``'s server: remove ``STORE.vet-server`` (a clean close), then unlock it."""
    path = store.with_name(store.name + SERVER_SUFFIX)
    with contextlib.suppress(OSError):
        fh.truncate(0)  # empty: closed cleanly (where the file cannot be removed while open)
        fh.flush()
        if os.path.samestat(os.fstat(fh.fileno()), os.stat(path)):
            path.unlink()
    fh.close()


def _finite(x):
    x = float(x)
    return x if math.isfinite(x) else None


def metric_readout(session: ActiveSession, table) -> dict:
    """The page's estimate: one metric's mean and credible interval (``kind="metric"``).

    Parameters
    ----------
    session : ActiveSession
        The session whose metric it is.
    table : pandas.DataFrame
        :meth:`ActiveSession.estimate`'s table (columns mean, sd, HDI lower, HDI upper).

    Examples
    --------
    >>> import pandas as pd
    >>> from types import SimpleNamespace
    >>> from bayeval.vet import metric_readout
    >>> t = pd.DataFrame({"mean": [0.8], "sd": [0.05], "90% HDI lower": [0.7], "90% HDI upper": [0.9]},
    ...                  index=["average_precision"])
    >>> r = metric_readout(SimpleNamespace(hdi_prob=0.9), t)
    >>> r["kind"], r["label"], r["lower"], r["upper"], r["caveats"]
    ('metric', 'average_precision', 0.7, 0.9, [])
    """
    row = table.iloc[0]
    return {
        "kind": "metric",
        "label": str(table.index[0]),
        "mean": _finite(row["mean"]),
        "sd": _finite(row["sd"]),
        "lower": _finite(row.iloc[2]),
        "upper": _finite(row.iloc[3]),
        "hdi_prob": float(session.hdi_prob),
        "caveats": _caveats(getattr(session, "data", None), getattr(session, "model", None)),
    }


def _caveats(source, model=None) -> list[str]:
    """What the labels and scores cannot tell the estimate (``EvalData.caveats``, read for the session's
    ``model``; ``Comparison.caveats``)."""
    said = getattr(source, "caveats", None)
    if not callable(said):
        return []
    return [str(c) for c in (said(model) if model is not None else said())]


class VetSession:
    """Vetting by several people at once: leases, answers straight to the store, background refits.

    Parameters
    ----------
    session : ActiveSession
        The loop: its store keeps every answer, its model is refitted in the background.
        The VetSession owns it from now on (closes it in :meth:`close`).
    view : ItemView
        What the page shows of each item.
    readout : callable ``(session, table) -> dict``, optional
        The estimate shown on the page; default :func:`metric_readout` (see the module
        docstring for a comparison's readout).
    annotator : str, optional
        Who answers, when the page does not say.
    lease_seconds : float, default 120
        How long an item stays with a client that neither answers nor polls.
    budget : int, optional
        How many vetted items the people plan; at it, no more items are proposed.
    title : str
        Shown at the top of the page.
    clock : callable, default time.monotonic
        Seconds; for the leases (tests pass a fake clock).
    said : iterable of str, optional
        Keys of bayeval's warnings said already, in the words of whoever opened the session
        (:func:`open_vet` says a card's ``[model] transform = "logodds"`` on probabilities in the
        card's words): the refits do not give them again, in the model's words.

    Examples
    --------
    See the module docstring.
    """

    def __init__(self, session: ActiveSession, view: ItemView, *, readout=None, annotator: str | None = None,
                 lease_seconds: float = 120.0, budget: int | None = None, title: str = "", clock=time.monotonic,
                 said=()):
        if not isinstance(session, ActiveSession):
            raise TypeError(f"`session` must be an ActiveSession, got {type(session).__name__}.")
        if not isinstance(view, ItemView):
            raise TypeError(f"`view` must be an ItemView, got {type(view).__name__}.")
        if view.n_items != session.data.n_items:
            raise ValueError(f"`view` shows {view.n_items} items but the session has {session.data.n_items}.")
        if not (isinstance(lease_seconds, int | float) and lease_seconds > 0 and math.isfinite(lease_seconds)):
            raise ValueError(f"`lease_seconds` must be a positive number of seconds, got {lease_seconds!r}.")
        if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int) or budget < 1):
            raise ValueError(f"`budget` must be a whole number >= 1 (labels you plan to give) or None, got {budget!r}.")
        self.session = session
        self.said = frozenset(said)  # before the worker starts: it reads them
        self.store: LabelStore = session.store
        self._server = _hold_store(self.store.path)  # the store's only server: or a clear refusal
        try:
            self._start(view, readout, annotator, lease_seconds, budget, title, clock)
        except BaseException:
            _let_go(self._server, self.store.path)
            raise

    def _start(self, view, readout, annotator, lease_seconds, budget, title, clock) -> None:
        session = self.session
        self.view = view
        self.readout = readout or metric_readout
        self.annotator = self._annotator(annotator)
        self.lease_seconds = float(lease_seconds)
        self.budget = budget
        self.title = str(title)
        self._clock = clock
        self._known = KnownItems(list(view.position))
        self._lock = threading.RLock()
        self._leases: dict = {}  # item -> (client, expiry)
        self._holding: dict = {}  # client -> item on its screen
        self._again: dict = {}  # client -> the earlier label of an undone answer
        self._undo: dict = {}  # client -> [(action, item, label)]
        self._seen: dict = {}  # client -> last time it called
        self._skipped = self._load_skipped()
        # items the card's own label column vetted (the store's labels are applied on top of them)
        in_store = self._in_store()
        ids, done = session.data.item_ids.tolist(), session.data.vetted
        self._file_vetted = {item for item, d in zip(ids, done, strict=True) if d and item not in in_store}
        self._answered = 0
        self._readout: dict | None = None
        self._history: list = self._history_rows()
        self._refitting = False
        self._error: str | None = None
        self._fits = 0
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._idle = threading.Event()
        self._worker = threading.Thread(target=self._work, name="bayeval-vet-refit", daemon=True)
        self._wake.set()  # a batch and a first estimate
        self._worker.start()

    # ------------------------------------------------------------- checking

    @staticmethod
    def _annotator(name):
        if name is None:
            return None
        if not isinstance(name, str) or not name.strip() or len(name) > 100:
            raise VetError(f"annotator: expected a name of 1 to 100 characters, got {name!r:.120}.")
        return name.strip()

    @staticmethod
    def _client(client) -> str:
        if not isinstance(client, str) or not _CLIENT.match(client):
            raise VetError(f"client: expected 8 to 64 letters, digits, '-' or '_' (the page makes one), "
                           f"got {client!r:.80}.")
        return client

    def _item(self, item):
        if isinstance(item, bool) or not isinstance(item, int | str) or item not in self.view.position:
            raise VetError(f"item: {item!r:.80} is not an item of this session{self._known.did_you_mean(item)} "
                           "(ids are as the page received them: 5 and '5' differ).", status=404)
        return item

    # --------------------------------------------------------------- leases

    def _expire(self, now: float) -> None:
        for item, (client, until) in list(self._leases.items()):
            if until <= now:
                del self._leases[item]
                if self._holding.get(client) == item and client not in self._again:
                    del self._holding[client]

    def _release(self, client: str) -> None:
        item = self._holding.pop(client, None)
        self._again.pop(client, None)
        if item is not None and self._leases.get(item, (None,))[0] == client:
            del self._leases[item]

    def _touch(self, client: str, now: float) -> None:
        self._seen[client] = now
        item = self._holding.get(client)
        if item is not None and self._leases.get(item, (None,))[0] == client:
            self._leases[item] = (client, now + self.lease_seconds)

    # ------------------------------------------------------------- the store

    def _load_skipped(self) -> set:
        value = self.store.get_meta(_SKIPPED_KEY, []) or []
        return {v for v in value if v in self.view.position}

    def _save_skipped(self) -> None:
        self.store.set_meta(_SKIPPED_KEY, sorted(self._skipped, key=lambda v: (isinstance(v, str), str(v))))

    def _batch_of(self, item):
        batches = self.store.batches()["batch"].tolist()
        for b in reversed(batches):
            if item in self.store.batch_items(int(b)):
                return int(b)
        return None

    def _in_store(self) -> set:
        """The items the store labels, as the session reads them (a text id '261' of data numbered by row is
        the item 261, counted once with it)."""
        return set(labels_for_items(self.store, self.session.data.item_ids.tolist())[0].index)

    def _vetted(self) -> set:
        """Every vetted item: labelled in the card's file or in the store (by anyone, in any session)."""
        return self._file_vetted | self._in_store()

    # ------------------------------------------------------------- requests

    def next(self, client: str) -> dict:
        """The item this client should vet now, leased to it; or why there is none.

        Returns
        -------
        dict
            ``{"item": shown item or None, "status": ...}``: ``"item"`` (vet this),
            ``"again"`` (an undone answer: ``"earlier"`` holds its label), ``"others"``
            (the rest of the batch is with other people), ``"batch"`` (the next batch is
            being chosen), ``"budget"`` (the budget is reached) or ``"done"`` (every item
            is vetted or skipped).
        """
        client = self._client(client)
        with self._lock:
            now = self._clock()
            self._expire(now)
            self._seen[client] = now
            held = self._holding.get(client)
            pending = self.session.pending()  # every batch's unlabelled items, an older unfinished batch's too
            if held is not None and client in self._again:
                return {"item": self.view.show(self.view.position[held]), "status": "again",
                        "earlier": self._again[client]}
            if held is not None and held in pending and held not in self._skipped:
                self._touch(client, now)
                return {"item": self.view.show(self.view.position[held]), "status": "item"}
            self._release(client)
            vetted = self._vetted()
            if self.budget is not None and len(vetted) >= self.budget:  # as the refit counts: file and store
                return {"item": None, "status": "budget"}
            open_items = [i for i in pending if i not in self._skipped]
            free = [i for i in open_items if i not in self._leases]
            if free:
                item = free[0]
                self._leases[item] = (client, now + self.lease_seconds)
                self._holding[client] = item
                return {"item": self.view.show(self.view.position[item]), "status": "item"}
            if open_items:
                return {"item": None, "status": "others"}
            if len(vetted | self._skipped) >= self.view.n_items:
                return {"item": None, "status": "done"}
            self._wake.set()  # the batch is used up: choose the next one
            return {"item": None, "status": "batch"}

    def answer(self, client: str, item, label, *, annotator: str | None = None) -> dict:
        """Record ``label`` for ``item``: committed to the store before returning.

        ``label`` is ``"y"``/``"n"`` (or ``"yes"``/``"no"``, any case), 1/0 or True/False.

        The answer is kept even when the item's lease had passed to someone else (the
        store's conflict rule settles two answers). Returns the recorded answer and the
        client's next item.
        """
        client = self._client(client)
        item = self._item(item)
        key = label.strip().lower() if isinstance(label, str) else label
        if not isinstance(key, str | int) or key not in _ANSWERS:  # a float, a list, null: refused
            raise VetError(f"label: expected 'y' or 'n' ('yes'/'no' in any case, 1/0 and JSON true/false are "
                           f"accepted too), got {label!r:.80}.")
        value = _ANSWERS[key]
        who = self._annotator(annotator) if annotator is not None else self.annotator
        with self._lock:
            batch = self._batch_of(item)
            self.store.add([item], [value], annotator=who, batch=batch)  # committed (fsync) here
            self._answered += 1
            if self._holding.get(client) == item:
                self._release(client)
            if item in self._skipped:
                self._skipped.discard(item)
                self._save_skipped()
            self._undo.setdefault(client, []).append(("answer", item, value))
            self._wake.set()
            recorded = {"item": item, "label": value, "annotator": who, "batch": batch}
            return {"recorded": recorded, "next": self.next(client)}

    def skip(self, client: str, item) -> dict:
        """Skip ``item`` (no label is written); it is not proposed again. Returns the next item.

        An item brought back by undoing an answer keeps that answer when skipped (the page says
        so: "skip keeps it"): the store is append-only, so the answer stands, and the item counts
        as vetted, not as skipped (``"kept"`` in the reply holds the answer).
        """
        client = self._client(client)
        item = self._item(item)
        with self._lock:
            if client in self._again and self._holding.get(client) == item:
                earlier = self._again[client]
                self._release(client)
                self._undo.setdefault(client, []).append(("answer", item, earlier))
                return {"skipped": item, "kept": earlier, "next": self.next(client)}
            self._skipped.add(item)
            self._save_skipped()
            if self._holding.get(client) == item:
                self._release(client)
            self._undo.setdefault(client, []).append(("skip", item, None))
            return {"skipped": item, "next": self.next(client)}

    def undo(self, client: str) -> dict:
        """Bring back this client's last answered or skipped item (see the module's Undo section)."""
        client = self._client(client)
        with self._lock:
            stack = self._undo.get(client) or []
            if not stack:
                raise VetError("nothing to undo: this page has not answered or skipped anything yet "
                               "(undo reaches back over this page's own answers since the server started).",
                               status=409)
            action, item, value = stack.pop()
            self._release(client)
            self._holding[client] = item
            if action == "skip":
                self._skipped.discard(item)
                self._save_skipped()
                self._leases[item] = (client, self._clock() + self.lease_seconds)
            else:
                self._again[client] = value
            return {"undone": {"action": action, "item": item, "label": value}, "next": self.next(client)}

    def state(self, client: str | None = None) -> dict:
        """What the page shows besides the item: the estimate, its history, progress, refitting.

        A client's call also renews its lease. ``progress["vetted"]`` counts the items with a
        label from the card's label column or from the store (``vetted_from_file`` +
        ``vetted_from_store``; an item with both counts as the store's, whose label wins), as
        the estimate's history and the budget do. ``remaining_in_batch`` counts the newest
        batch's unlabelled, unskipped items, ``remaining_in_earlier_batches`` those of older
        batches left unfinished (:meth:`ActiveSession.pending`): both are offered before a new
        batch is chosen.
        """
        with self._lock:
            if client is not None:
                self._touch(self._client(client), self._clock())
            pending = self.session.pending(by_batch=True)
            batches = self.store.batches()
            size = int(batches["n_items"].iloc[-1]) if len(batches) else 0
            last = int(batches["batch"].iloc[-1]) if len(batches) else None
            left = {b: [i for i in items if i not in self._skipped] for b, items in pending.items()}
            in_store = self._in_store()
            return {
                "title": self.title,
                "estimate": self._readout,
                "history": list(self._history),
                "refitting": self._refitting,
                "error": self._error,
                "fits": self._fits,
                "progress": {
                    "vetted": len(self._file_vetted | in_store),
                    "vetted_from_file": len(self._file_vetted - in_store),  # the card's label column only
                    "vetted_from_store": len(in_store),  # answered on a page (an answer wins over the file)
                    "items": self.view.n_items,
                    "batch": last,
                    "batch_size": size,
                    "remaining_in_batch": len(left.get(last, [])),
                    # items earlier batches proposed and nobody has labelled: offered too, before a new batch
                    "remaining_in_earlier_batches": sum(len(v) for b, v in left.items() if b != last),
                    "skipped": len(self._skipped),
                    "budget": self.budget,
                    "answered_here": self._answered,
                },
            }

    # ----------------------------------------------------------- the worker

    def _history_rows(self) -> list:
        hist = self.session.history()
        return [{"n_vetted": int(r.n_vetted), "mean": _finite(r.mean), "lower": _finite(r.lower),
                 "upper": _finite(r.upper)} for r in hist.itertuples()]

    def _work(self) -> None:
        while not self._stop.is_set():
            if not self._wake.wait(timeout=0.5):
                self._idle.set()
                continue
            self._idle.clear()
            self._wake.clear()
            if self._stop.is_set():
                break
            self._refit()
        self._done_serving()  # stopped: close() asked for it

    def _refit(self) -> None:
        s = self.session
        with self._lock:
            self._refitting = True
            skipped = sorted(self._skipped, key=lambda v: (isinstance(v, str), str(v)))
        try:
            with quiet(), said_before(*self.said):  # no progress bars, nor warnings said at the start
                self._refit_steps(s, skipped)
            with self._lock:
                self._error = None
                self._fits += 1
        except Exception as exc:  # the page shows it; every answer is already in the store
            with self._lock:
                self._error = f"{type(exc).__name__}: {exc}"
            self._last_traceback = traceback.format_exc()
        finally:
            with self._lock:
                self._refitting = False

    def _refit_steps(self, s: ActiveSession, skipped: list) -> None:
        s.refresh()
        open_items = [i for i in s.pending() if i not in skipped]  # every batch's, as next() offers them
        if not open_items and (self.budget is None or int(s.data.n_vetted) < self.budget):
            s.next_batch(exclude=skipped)  # the batch is used up: the next one
        if int(s.data.n_vetted) >= getattr(s, "first_estimate_at", 1):  # a comparison waits for its first batch
            readout = self.readout(s, s.estimate())
            history = self._history_rows()
            with self._lock:
                self._readout, self._history = readout, history

    def wait_idle(self, timeout: float = 60.0) -> bool:
        """Wait until no refit is running or asked for; False if ``timeout`` seconds passed first."""
        end = time.monotonic() + timeout
        while (left := end - time.monotonic()) > 0:
            # blocks while a refit runs (the idle flag is clear then): a loop that only polled the
            # flags spun a core, and took the interpreter from the refit it waited for
            if self._idle.wait(min(0.05, left)):
                if not self._wake.is_set() and not self._refitting:
                    return True
                time.sleep(min(0.01, max(left, 0.0)))  # woken again: the worker is about to start
        return False

    def close(self, timeout: float = 5.0) -> None:
        """Stop the worker and close the session.

        Every answer is already in the store; a refit still running after ``timeout``
        seconds is abandoned (its thread is a daemon: it ends with the process).
        """
        self._stop.set()
        self._wake.set()
        if self._worker.is_alive() and threading.current_thread() is not self._worker:
            self._worker.join(timeout=timeout)
        self.session.close()
        if not self._worker.is_alive():  # else the refit lets go of the store when it ends
            self._done_serving()

    def _done_serving(self) -> None:
        """Let another server use the store (once the refit thread has stopped writing to it)."""
        with self._lock:
            if not self._server.closed:
                _let_go(self._server, self.store.path)

    def refitting_thread_alive(self) -> bool:
        """Whether the background thread still runs (after :meth:`close`: a refit outlasted its timeout)."""
        return self._worker.is_alive()

    def __enter__(self) -> VetSession:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# ------------------------------------------------------------- from a card


def find_card(target, *, announce=None):
    """The model card of ``target``: a card folder, its ``card.toml``, or a vetting store.

    A store written by ``bayeval vet CARD`` remembers its card, so ``bayeval vet
    STORE.sqlite`` reopens the session. A store opened by its path belongs with the card
    next to it: when the store's own folder holds a card (or the folder above holds one
    whose ``[vet] store`` is this file), that card is used, even if the store recorded
    another one (a card folder copied with its store: the copy's store serves the copy;
    moved: the card where it is now). Otherwise the recorded card is used; if it is no
    longer there and none is beside the store, the error says how to name the card.

    Parameters
    ----------
    target : path-like
    announce : callable, optional
        Receives a line saying which card folder is used when it is not the one the store
        recorded (default: a ``UserWarning``).

    Returns
    -------
    (Card, store path or None)

    Examples
    --------
    >>> from bayeval.vet import find_card
    >>> try:
    ...     find_card("no/such/thing")
    ... except ValueError as exc:
    ...     print(str(exc).split(",")[0])
    no/such/thing: not a model card folder
    """
    from ..cards import CARD_FILE, load_card

    p = Path(target)
    if p.is_dir() or p.name == CARD_FILE:
        return load_card(p), None
    if not p.is_file():
        raise ValueError(f"{target}: not a model card folder, its {CARD_FILE}, or a label store written by "
                         "`bayeval vet` (no such file or folder).")
    with LabelStore(p) as store:
        card = store.get_meta(CARD_KEY)
        compared = store.get_meta(COMPARE_KEY)
    if isinstance(compared, dict):
        raise ValueError(f"{target}: the label store of a comparison of {compared.get('cards')}; "
                         "reopen it with `bayeval vet STORE` (bayeval.vet.comparison.find_target).")
    if not isinstance(card, str):
        raise ValueError(f"{target}: a label store, but not one written by `bayeval vet` (it does not say which "
                         "model card it belongs to). Give the card folder instead: `bayeval vet CARD --store "
                         f"{target}`.")
    recorded_there = Path(card).is_dir() or Path(card).is_file()
    beside = _card_beside(p, recorded_there)
    if beside is None:
        if not recorded_there:
            raise ValueError(f"{target}: written for the model card {card}, which is not there any more (moved or "
                             f"renamed?). Give the card's folder where it is now: `bayeval vet CARD --store "
                             f"{target}` (the labels in the store are kept).")
        return load_card(card), p
    found = load_card(beside)
    if Path(card).resolve() != found.path.resolve():
        why = "no longer there" if not recorded_there else "still there, but this store sits with the card beside it"
        line = (f"{target}: using the model card in {found.path} (the store was written for the card in {card}, "
                f"{why}). To vet with that card instead: `bayeval vet {card} --store {target}`.")
        if announce is None:
            import warnings

            warnings.warn(line, UserWarning, stacklevel=2)
        else:
            announce(line)
    return found, p


def _card_beside(store: Path, recorded_there: bool):
    """The folder of the card a store sits with: the store's folder when it holds a card, or the
    folder above when its card's ``[vet] store`` names this file (any card there when the
    recorded card is gone, as before)."""
    from ..cards import CARD_FILE, load_card

    if (store.parent / CARD_FILE).is_file():
        return store.parent
    above = store.parent.parent
    if (above / CARD_FILE).is_file():
        if not recorded_there:
            return above
        try:
            own = load_card(above).vet.get("store")
        except ValueError:  # a card that cannot be read is not taken over the recorded one
            return None
        if own is not None and (above / own).resolve() == store.resolve():
            return above
    return None


def open_vet(card, *, store=None, annotator: str | None = None, batch_size: int | None = None,
             budget: int | None = None, draws: int | None = None, tune: int | None = None,
             lease_seconds: float = 120.0, readout=None) -> VetSession:
    """A :class:`VetSession` for a model card: its data, model, metric and ``[vet]`` settings.

    The card's ``[model]`` is checked against its scores first, in the card's words
    (:meth:`bayeval.cards.Card.check_scale`): a ``transform`` or ``curve`` the scores cannot
    take is refused (a :class:`~bayeval.cards.CardError`) before the store is opened, and
    ``transform = "logodds"`` on probabilities is warned about once, not at every refit.

    Parameters
    ----------
    card : Card
        The card (:func:`bayeval.cards.load_card`).
    store : path-like, optional
        The label store; default the card's ``[vet] store`` (``vet.sqlite`` in its folder).
        It remembers its card, so ``bayeval vet STORE`` reopens the session.
    annotator, budget, lease_seconds, readout
        As in :class:`VetSession` (``budget`` defaults to the card's ``[vet] budget``).
    batch_size : int, optional
        Items per batch (default the card's ``[vet] batch_size``).
    draws, tune : int, optional
        Override the card's sampling settings for the refits (smaller is faster).

    Examples
    --------
    >>> from bayeval.cards import load_card
    >>> from bayeval.vet import open_vet
    >>> vet = open_vet(load_card("models/digits_vet"), store="/tmp/v.sqlite")  # doctest: +SKIP
    >>> vet.next("my-browser-tab")["item"]["image"]  # doctest: +SKIP
    {'kind': 'file', 'src': 'media/412'}
    """
    data, _ = card.load_data()
    said = card.check_scale(data.scores)  # refused (CardError) or warned about in the card's words, before the store
    if said:
        warnings.warn(said, UserWarning, stacklevel=2)
    view = ItemView.from_card(card, data)
    metrics = card.metrics()
    label = card.vet.get("metric", next(iter(metrics)))
    spec = metrics[label]
    name, options = (spec, {}) if isinstance(spec, str) else (spec[0], dict(spec[1]))
    category = options.pop("category", None)
    if category is not None and not data.has_categories:
        category = None
    if data.has_categories:
        # an entry without a category option is the report's: every item pooled (its first table)
        category = category or "pooled"
        if category == "each":
            raise ValueError(
                f"{card.card_file}: the page shows one estimate, but the metric {label!r} is per category "
                "(category = \"each\"). Set [vet] metric to an entry with category = \"pooled\" (every item) "
                "or \"mean\" (the mean over categories), or leave the entry's category out (pooled).")
        if category == "pooled":
            label = f"{label} (all items pooled)"
        elif "mean" not in label.lower():
            label = f"{label} (mean over categories)"
    sampling = dict(card.sampling)
    fit_kwargs = {"draws": draws or sampling["draws"], "tune": sampling["tune"] if tune is None else tune,
                  "chains": sampling["chains"], "cores": 1, "warn": False}
    if "target_accept" in sampling:
        fit_kwargs["target_accept"] = sampling["target_accept"]
    path = Path(store) if store is not None else card.path / card.vet["store"]
    active = ActiveSession(data, card.build_model(), metric=name, metric_kwargs=options, store=path,
                           batch_size=batch_size or card.vet["batch_size"], category=category,
                           hdi_prob=card.report_options["hdi_prob"], fit_kwargs=fit_kwargs,
                           random_seed=sampling["random_seed"], progressbar=False)
    try:
        compared = active.store.get_meta(COMPARE_KEY)
        if compared is not None:
            raise ValueError(f"{path}: the label store of a comparison of {compared.get('cards')}; a single card's "
                             "page keeps its own store (its history is of one metric). Give another --store.")
        if active.store.get_meta(CARD_KEY) != str(card.path):
            active.store.set_meta(CARD_KEY, str(card.path))
        if readout is None:  # the card's name for the metric
            def readout(session, table):
                return {**metric_readout(session, table), "label": label}
        return VetSession(active, view, readout=readout, annotator=annotator, lease_seconds=lease_seconds,
                          budget=budget if budget is not None else card.vet.get("budget"), title=card.title,
                          said=(LOGODDS_ON_PROBABILITIES,) if said else ())
    except BaseException:
        active.close()
        raise
