"""Vetting for a comparison: the gap between two classifiers and ``P(A better)`` on the page.

``bayeval vet CARD_A CARD_B`` vets the items of two model cards that scored the same
items (joined on item id by :func:`bayeval.cards.join_cards`). The page is the one of a
single card; what changes is the loop behind it:

* the refit is :func:`bayeval.compare` on the store's labels (the joint model of both
  classifiers' scores, every metric on the same label draws);
* the estimate is the gap ``metric(A) - metric(B)``: its posterior mean and HDI,
  ``P(A better)``, ``P(|gap| <= width)`` when a region of practical equivalence is
  given, and :meth:`Comparison.decided <bayeval.compare.Comparison.decided>`'s verdict;
* the next batch is :meth:`Comparison.select <bayeval.compare.Comparison.select>`: the
  unvetted items whose labels would most change the comparison (``P(A better)``, or the gap
  when ``width`` is given). The first batch, before
  anything is vetted, is stratified on both classifiers' scores (half of each design,
  taken in turn), so that the top of both rankings is vetted early; the first estimate
  comes once it is vetted (:attr:`ComparisonSession.first_estimate_at`).

The label store records the two cards, the metric and the width, so ``bayeval vet
STORE`` reopens the comparison; reopening resumes.

Examples
--------
>>> import numpy as np, os, tempfile
>>> from bayeval.vet.comparison import ComparisonSession
>>> rng = np.random.default_rng(0)
>>> y = rng.random(200) < 0.3
>>> scores = {"good": 2 * y + rng.normal(0, 1, 200), "weak": y + rng.normal(0, 1, 200)}
>>> s = ComparisonSession(scores, item_ids=[f"i{j}" for j in range(200)], batch_size=20, draws=100,
...                       store=os.path.join(tempfile.mkdtemp(), "cmp.sqlite"), random_seed=0, progressbar=False)
>>> batch = s.next_batch()                      # designed on both rankings: no fit yet
>>> s.record(batch, [int(y[int(i[1:])]) for i in batch])
20
>>> s.estimate().columns.tolist()
['mean', 'sd', 'hdi_5%', 'hdi_95%', 'p_better', 'decided']
>>> len(s.next_batch())                         # chosen by Comparison.select
20
>>> s.close()
"""

from __future__ import annotations

import itertools
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from ..active.design import check_threshold, design, design_target
from ..active.session import ActiveSession
from ..active.store import decode_item, encode_items
from ..compare.comparison import TRANSFORMS, Comparison, compare, resolve_target
from ..core import _validate as V
from ..core._defaults import HDI_PROB
from ..core._diagnostics import LOGODDS_ON_PROBABILITIES
from ..models.joint import joint_data
from .items import ItemView
from .session import CARD_KEY, COMPARE_KEY, VetSession, find_card

__all__ = ["ComparisonSession", "card_transforms", "comparison_readout", "open_compare", "find_target"]


def _finite(x):
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


class ComparisonSession(ActiveSession):
    """An :class:`~bayeval.active.ActiveSession` whose refit is :func:`bayeval.compare`.

    Parameters
    ----------
    scores : dict of str to array_like
        The two classifiers' scores of the same items, in the same order; the first is
        ``A``, the second ``B`` (the gap is ``metric(A) - metric(B)``).
    labels : array_like, optional
        Vetted labels already known (1, 0, NaN = not vetted); the store's are applied on top.
    item_ids : array_like, optional
        The items' ids (as in the store).
    metric, metric_kwargs : str, dict
        The metric compared and its options (e.g. ``"precision_at_k"``, ``{"k": 50}``);
        one value per draw, so a curve needs its point (``k=``, ``threshold=``). A
        ``threshold`` that flags none of either classifier's items, or all of them, is
        refused here, before any batch (:func:`bayeval.active.design.check_threshold`).
    label : str, optional
        The metric's name on the page (default ``metric``).
    width : float, optional
        Half-width of the region of practical equivalence: adds ``P(|gap| <= width)``
        and lets the comparison be decided as ``"equivalent"``.
    level : float, default 0.95
        :meth:`Comparison.decided`'s level.
    target : {"auto", "gap", "prob"}
        What :meth:`Comparison.select` chooses items for: the gap's mean or ``P(A better)``;
        ``"auto"`` (default): ``P(A better)`` without ``width``, the gap with it.
    draws, chains : int
        Per refit, as in :func:`bayeval.compare`.
    transform : str or dict of str to str, default "auto"
        How each classifier's scores are read, as in :func:`bayeval.compare`
        (:func:`open_compare` passes each card's ``[model] transform``).
    store, batch_size, hdi_prob, random_seed, progressbar
        As in :class:`~bayeval.active.ActiveSession`.

    Examples
    --------
    See the module docstring.
    """

    def __init__(self, scores: dict, labels=None, *, item_ids=None, store, metric: str = "average_precision",
                 metric_kwargs: dict | None = None, label: str | None = None, width: float | None = None,
                 level: float = 0.95, target: str = "auto", batch_size: int = 10, draws: int = 1000,
                 chains: int = 2, hdi_prob: float = HDI_PROB, random_seed=None, progressbar: bool = False,
                 transform="auto"):
        if not isinstance(scores, dict) or len(scores) != 2:
            got = list(scores) if isinstance(scores, dict) else type(scores).__name__
            raise ValueError(f"A comparison session compares two classifiers: `scores` must be a dict of two "
                             f"{{name: scores}}, got {got}. For more than two use bayeval.compare.")
        self.a, self.b = (str(k) for k in scores)
        if self.a == self.b:
            raise ValueError(f"The two classifiers' names must differ, got {list(scores)}.")
        self.scores = {str(k): np.asarray(v, dtype=np.float64) for k, v in scores.items()}
        self.width = None if width is None else V.as_real_in(width, "width", lo=0.0, hi=np.inf, lo_open=True,
                                                             hi_open=True)
        self.level = V.as_probability(level, "level", open_interval=True)
        self.target = resolve_target(target, self.width)
        self.draws = V.as_positive_int(draws, "draws")
        self.chains = V.as_positive_int(chains, "chains")
        self.label = str(label or metric)
        self.transform = transform
        data = joint_data(self.scores, labels, item_ids=item_ids)
        for name in (self.a, self.b):  # each batch compares both rules: refused before any batch, not at the first
            try:
                check_threshold(self.scores[name], metric, dict(metric_kwargs or {}).get("threshold"))
            except ValueError as exc:
                raise ValueError(f"Classifier {name!r}: {exc}") from None
        self._comparison: Comparison | None = None
        super().__init__(data, self._no_model, metric=metric, store=store, batch_size=batch_size,
                         metric_kwargs=metric_kwargs, hdi_prob=hdi_prob, random_seed=random_seed,
                         progressbar=progressbar)

    @property
    def first_estimate_at(self) -> int:
        """How many vetted items the first refit waits for: the first (designed) batch.

        Fewer labels say next to nothing about a gap, and the joint model's fit on one or
        two labels falls back from importance sampling to NUTS, which costs seconds.
        """
        return min(self.batch_size, self.data.n_items)

    @staticmethod
    def _no_model(data):  # the refit is _fit's compare(); ActiveSession needs a model to hold
        raise AssertionError("ComparisonSession fits through bayeval.compare")

    # ------------------------------------------------------------- the fit

    def _fit(self):
        cmp = compare(self.scores, self.data, transform=self.transform, draws=self.draws, chains=self.chains,
                      random_seed=self._fit_seed(), progressbar=self.progressbar, warn=False)
        self._comparison = cmp
        return cmp.posterior

    @property
    def comparison(self) -> Comparison:
        """:func:`bayeval.compare` on the current labels (refitted only when labels changed)."""
        _ = self.posterior
        return self._comparison

    # ------------------------------------------------------------ the loop

    def _designed(self, size: int, mask: np.ndarray, seed) -> list:
        """A first batch: the designs on A's and on B's scores, taken in turn."""
        name, thr = design_target(self.metric, self.metric_kwargs.get("threshold"))
        skip = mask | self.data.vetted
        picks = [design(self.scores[c], size, metric=name, threshold=thr, exclude=skip, random_seed=seed).tolist()
                 for c in (self.a, self.b)]
        out: list = []
        for pair in itertools.zip_longest(*picks):  # both designs hold `size` items: the union has enough
            for p in pair:
                if p is not None and p not in out and len(out) < size:
                    out.append(int(p))
        return out

    def next_batch(self, *, exclude=None) -> list:
        """Item ids to vet next: the unfinished batches' items (:meth:`pending`), else a new batch (see the
        module docstring).

        ``exclude``: items not to propose (those a person skipped).
        """
        excluded = set()
        if exclude is not None:
            excluded = {decode_item(*key) for key in encode_items(exclude, "exclude")}
        pending = [item for item in self.pending() if item not in excluded]  # every batch's, not the newest's alone
        if pending:
            return pending
        # chosen on every label the store holds now: another thread (the vetting page) may have written
        # the answer that finished the batch after the data was last read, and pending() already saw it
        self.refresh()
        mask = np.zeros(self.data.n_items, dtype=bool)
        mask[[self._pos[item] for item in excluded if item in self._pos]] = True
        free = int((~self.data.vetted & ~mask).sum())
        if free == 0:
            return []
        size = min(self.batch_size, free)
        seed = None
        if self.random_seed is not None:
            seed = int(np.random.SeedSequence([int(self.random_seed), int(self.data.n_vetted), 1]).generate_state(1)[0])
        if self.data.n_vetted < size:
            ids = self.data.item_ids[self._designed(size, mask, seed)].tolist()
            strategy = "design"
        else:
            ranked = self.comparison.select(size + len(excluded), self.a, self.b, self.metric, target=self.target,
                                            **self.metric_kwargs).tolist()
            ids = [i for i in ranked if i not in excluded][:size]
            strategy = f"compare_{self.target}"
        self.store.new_batch(ids, strategy=strategy)
        return ids

    def estimate(self) -> pd.DataFrame:
        """Refit (if labels changed) and summarize the gap ``A - B``: one row.

        Columns: ``mean``, ``sd``, the HDI, ``p_better`` (that A is better), ``p_rope``
        (with a width) and ``decided`` (:meth:`Comparison.decided`: A's name, B's,
        ``"equivalent"`` or None). Also appended to the session's history.
        """
        cmp = self.comparison
        kw = self.metric_kwargs
        s = cmp.difference_summary(self.a, self.b, self.metric, hdi_prob=self.hdi_prob, width=self.width, **kw)
        table = pd.DataFrame([s.to_dict()], index=[f"{self.label}: {self.a} - {self.b}"])
        table["decided"] = cmp.decided(self.a, self.b, self.metric, level=self.level, width=self.width, **kw)
        self._append_history(table)
        return table

    def __repr__(self) -> str:
        return (f"ComparisonSession({self.a} vs {self.b}, metric={self.metric!r}, batch_size={self.batch_size}, "
                f"vetted={self.data.n_vetted}/{self.data.n_items}, store={str(self.store.path)!r})")


def comparison_readout(session: ComparisonSession, table) -> dict:
    """The page's estimate for a comparison (``kind="gap"``): the gap, its HDI, P(A better), P(in ROPE).

    Parameters
    ----------
    session : ComparisonSession
    table : pandas.DataFrame
        :meth:`ComparisonSession.estimate`'s table.

    Examples
    --------
    >>> import pandas as pd
    >>> from types import SimpleNamespace
    >>> from bayeval.vet.comparison import comparison_readout
    >>> t = pd.DataFrame({"mean": [0.04], "sd": [0.02], "hdi_5%": [0.01], "hdi_95%": [0.07], "p_better": [0.97],
    ...                   "decided": ["new"]}, index=["average_precision: new - old"])
    >>> s = SimpleNamespace(a="new", b="old", hdi_prob=0.9, width=None, level=0.95)
    >>> r = comparison_readout(s, t)
    >>> r["kind"], r["p_better"], r["p_rope"], r["decided"]
    ('gap', 0.97, None, 'new')
    """
    row = table.iloc[0]
    decided = row.get("decided")
    cmp = getattr(session, "comparison", None)  # what the labels cannot tell the comparison
    caveats = [str(c) for c in cmp.caveats()] if callable(getattr(cmp, "caveats", None)) else []
    return {
        "kind": "gap",
        "label": str(table.index[0]),
        "a": session.a,
        "b": session.b,
        "mean": _finite(row["mean"]),
        "sd": _finite(row["sd"]),
        "lower": _finite(row.iloc[2]),
        "upper": _finite(row.iloc[3]),
        "hdi_prob": float(session.hdi_prob),
        "p_better": _finite(row["p_better"]),
        "p_rope": _finite(row["p_rope"]) if "p_rope" in row.index else None,
        "width": session.width,
        "level": float(session.level),
        "decided": None if decided is None or decided != decided else str(decided),
        "caveats": caveats,
    }


def card_transforms(joined) -> dict:
    """Each card's ``[model] transform`` as ``{name: transform}``, as :func:`bayeval.compare`
    takes it: how the comparison reads that card's scores (``"auto"`` for a card that
    declares none, or a transform the joint models do not take, such as a score mixture's
    ``"identity"``).

    Examples
    --------
    >>> from bayeval.cards import join_cards
    >>> card_transforms(join_cards(["models/digits_vet", "models/digits_vet_nb"]))  # doctest: +SKIP
    {'digits_vet': 'auto', 'digits_vet_nb': 'logodds'}
    """
    out = {}
    for name, card in zip(joined.names, joined.cards, strict=True):
        given = card.model_options.get("transform", "auto")
        out[name] = given if given in TRANSFORMS else "auto"
    return out


def open_compare(cards, *, store=None, metric: str | None = None, width: float | None = None,
                 annotator: str | None = None, batch_size: int | None = None, budget: int | None = None,
                 draws: int | None = None, lease_seconds: float = 120.0):
    """A :class:`~bayeval.vet.VetSession` comparing two model cards that scored the same items.

    Parameters
    ----------
    cards : sequence of two Card (or folders), or JoinedCards
        ``A`` and ``B``, joined on item id (:func:`bayeval.cards.join_cards`). The page
        shows A's items (its ``[vet]`` image and text columns); A's card gives the
        metric, the sampling settings and the batch size.
    store : path-like, optional
        The label store; default :func:`bayeval.cards.comparison_store_file`, the same
        for either order of the cards (``vet-compare-Y.sqlite`` in X's folder, X and Y the
        cards' folder names in sorted order), or an existing store named after the order
        given, as earlier versions named it. It records both cards in order, the metric
        and the width, so ``bayeval vet STORE`` reopens the comparison.
    metric : str, optional
        The label of one of A's ``[report]`` metrics (default A's ``[vet] metric``).
    width : float, optional
        Half-width of the region of practical equivalence (adds ``P(in ROPE)``).
    annotator, batch_size, budget, draws, lease_seconds
        As in :func:`bayeval.vet.open_vet` (``budget`` defaults to A's ``[vet] budget``).

    Examples
    --------
    >>> from bayeval.vet.comparison import open_compare
    >>> vet = open_compare(["models/digits_vet", "models/digits_vet_nb"], store="/tmp/c.sqlite")  # doctest: +SKIP
    >>> vet.state()["estimate"]["p_better"]  # doctest: +SKIP
    0.93
    """
    from ..cards import CardError, JoinedCards, join_cards

    joined = cards if isinstance(cards, JoinedCards) else join_cards(cards)
    if len(joined.names) != 2:
        raise CardError(f"the vetting page compares two cards, got {len(joined.names)} ({list(joined.names)}). "
                        "Vet two at a time, or compare them all without vetting: bayeval compare CARD ...")
    said = []  # each card's [model] transform against its scores: refused (CardError) or warned in its words
    for card, name in zip(joined.cards, joined.names, strict=True):
        said.append(card.check_scale(joined.scores[name]))
        if said[-1]:
            warnings.warn(said[-1], UserWarning, stacklevel=2)
    first = joined.cards[0]
    metrics = first.metrics()
    label = metric if metric is not None else first.vet.get("metric", next(iter(metrics)))
    if label not in metrics:
        raise first._error("[report] metrics", f"{label!r} is not one of this card's metrics {list(metrics)}.")
    spec = metrics[label]
    name, options = (spec, {}) if isinstance(spec, str) else (spec[0], dict(spec[1]))
    options.pop("category", None)  # the comparison's metric is pooled over the items
    path = Path(store) if store is not None else _default_store(joined)
    record = {"cards": [str(c.path) for c in joined.cards], "metric": label, "width": width}
    _refuse_other_order(path, record["cards"])
    _refuse_unknown_items(joined, path)
    active = ComparisonSession(joined.scores, joined.data.labels, item_ids=joined.data.item_ids, store=path,
                               metric=name, metric_kwargs=options, label=label, width=width,
                               batch_size=batch_size or first.vet["batch_size"],
                               draws=draws or first.sampling["draws"], chains=first.sampling["chains"],
                               hdi_prob=first.report_options["hdi_prob"],
                               random_seed=first.sampling["random_seed"], progressbar=False,
                               transform=card_transforms(joined))
    try:
        single = active.store.get_meta(CARD_KEY)
        if single is not None:
            raise ValueError(f"{path}: the label store of the single-card page of {single}; a comparison keeps "
                             "its own store (its history is of the gap). Give another --store.")
        before = active.store.get_meta(COMPARE_KEY)
        if before is not None and (before.get("cards"), before.get("metric")) != (record["cards"], label):
            raise ValueError(f"{path}: the label store of the comparison of {before.get('cards')} on "
                             f"{before.get('metric')!r}, not of {record['cards']} on {label!r}. Reopen it with "
                             f"`bayeval vet {path}`, or give another --store.")
        if before != record:
            active.store.set_meta(COMPARE_KEY, record)
        view = ItemView.from_card(first, joined.data, scores=joined.scores)
        title = f"{joined.names[0]} vs {joined.names[1]}: which is better?"
        return VetSession(active, view, readout=comparison_readout, annotator=annotator,
                          lease_seconds=lease_seconds, budget=budget if budget is not None else first.vet.get("budget"),
                          title=title, said=(LOGODDS_ON_PROBABILITIES,) if any(said) else ())
    except BaseException:
        active.close()
        raise


def _refuse_unknown_items(joined, path: Path) -> None:
    """A ValueError when the store at ``path`` labels ids the cards do not score (a typo), naming
    the ``bayeval repair-store`` command for this store and these cards' items (the session's own
    check can only name placeholders)."""
    from ..cards import comparison_repair_command, comparison_stores_source, with_store_labels

    if path.is_file():
        with_store_labels(joined.data, path, comparison_stores_source(joined),
                          repair=comparison_repair_command(joined, path))


def _refuse_other_order(path: Path, cards: list) -> None:
    """A ValueError when the store at ``path`` is of the comparison of these cards in the other
    order: its history is of the gap of its first card minus its second."""
    from ..active.store import LabelStore

    if not path.is_file():
        return
    with LabelStore(path) as st:
        before = st.get_meta(COMPARE_KEY)
    order = before.get("cards") if isinstance(before, dict) else None
    if order and order != cards and sorted(order) == sorted(cards):
        raise ValueError(f"{path}: the label store of the comparison of these two cards in the other order "
                         f"({order}: its history is of the gap of the first minus the second). Give the cards "
                         f"in that order (`bayeval vet {' '.join(order)}`), or reopen it with `bayeval vet {path}`.")


def _default_store(joined) -> Path:
    """The comparison's store when no ``store`` is given: of the ones that exist
    (:func:`bayeval.cards.comparison_store_files`), the one recorded for the cards in this
    order, else the first; else the order-free name (:func:`bayeval.cards.comparison_store_file`)."""
    from ..active.store import LabelStore
    from ..cards import comparison_store_file, comparison_store_files

    found = comparison_store_files(joined)
    wanted = [str(c.path) for c in joined.cards]
    for path in found:
        with LabelStore(path) as st:
            record = st.get_meta(COMPARE_KEY)
        if isinstance(record, dict) and record.get("cards") == wanted:
            return path
    return found[0] if found else comparison_store_file(joined)


def find_target(targets, *, announce=None):
    """What ``bayeval vet TARGET ...`` opens: one card, two cards to compare, or a store either wrote.

    Parameters
    ----------
    targets : sequence of path-like
        One card folder (or its ``card.toml``), one label store written by ``bayeval
        vet``, or two card folders.
    announce : callable, optional
        As in :func:`~bayeval.vet.find_card` (which card folder a store is used with).

    Returns
    -------
    (cards, store, record)
        The cards (a tuple of one or two), the store's path when a store was given (else
        None), and for a comparison store its record (``cards``, ``metric``, ``width``).

    Examples
    --------
    >>> from bayeval.vet.comparison import find_target
    >>> cards, store, record = find_target(["models/digits_vet", "models/digits_vet_nb"])
    >>> [c.path.name for c in cards], store, record
    (['digits_vet', 'digits_vet_nb'], None, None)
    """
    from ..active.store import LabelStore
    from ..cards import CARD_FILE, load_card

    targets = [targets] if isinstance(targets, str | Path) else list(targets)
    if not targets:
        raise ValueError("give a model card folder, two card folders to compare, or a label store `bayeval vet` "
                         "wrote.")
    if len(targets) > 2:
        raise ValueError(f"the vetting page takes one card, or two to compare; got {len(targets)} "
                         f"({', '.join(map(str, targets))}). Compare more without vetting: bayeval compare CARD ...")
    if len(targets) == 2:
        for t in targets:
            p = Path(t)
            if not (p.is_dir() or p.name == CARD_FILE):
                raise ValueError(f"{t}: not a model card folder (a folder with a {CARD_FILE}); a comparison "
                                 "takes two card folders (`bayeval vet CARD_A CARD_B`), a store reopens alone "
                                 "(`bayeval vet STORE`).")
        return tuple(load_card(t) for t in targets), None, None
    p = Path(targets[0])
    if p.is_file() and p.name != CARD_FILE:
        with LabelStore(p) as store:
            record = store.get_meta(COMPARE_KEY)
        if isinstance(record, dict):
            return tuple(load_card(c) for c in record["cards"]), p, record
    card, store = find_card(targets[0], announce=announce)
    return (card,), store, None
