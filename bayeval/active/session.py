"""The vetting loop of active testing (Algorithm 1), as a session a person can stop and resume.

A session ties together an evaluation set, a model, a selection strategy and a
:class:`~bayeval.active.store.LabelStore`. Every label is written to the store
(committed to disk) the moment it is recorded; everything else -- the current
estimate, the proposed batch, the history -- is rebuilt from the store when the
session is reopened, so stopping (or crashing) at any point loses nothing typed.
"""

from __future__ import annotations

import contextlib
import hashlib
import numbers
import os
from datetime import UTC, datetime

import numpy as np
import pandas as pd

from ..core import _validate as V
from ..core._defaults import HDI_PROB
from ..core.data import EvalData
from ..core.evaluate import check_metric_options
from ..core.model import Model
from ..core.posterior import Posterior
from ._store_items import labels_for_items, pending_items, row_count
from .design import check_threshold, design, design_target, resolve_auto
from .select import STRATEGIES, check_top_k, select
from .store import KnownItems, LabelStore, decode_item, encode_items

__all__ = ["ActiveSession"]

_META_KEY = "active_session"
_HISTORY_KEY = "active_session_history"


def _as_int_seed(random_seed) -> int | None:
    """None stays None (unseeded); an int stays itself; a SeedSequence or Generator
    becomes the int it determines, so the session can derive per-batch seeds from it."""
    if random_seed is None:
        return None
    seed = V.as_seed_sequence(random_seed)
    if isinstance(random_seed, numbers.Integral):
        return int(random_seed)
    return int(seed.generate_state(1, np.uint64)[0])


def _fingerprint(data: EvalData, *, ordered: bool = True) -> str:
    """A hash of what identifies an evaluation set: its item ids and scores (in the rows'
    order; ``ordered=False``: in the ids' order, so that a reordered file matches)."""
    ids = list(map(str, data.item_ids.tolist()))
    scores = np.ascontiguousarray(data.scores)
    if not ordered:
        order = sorted(range(len(ids)), key=ids.__getitem__)
        ids, scores = [ids[i] for i in order], np.ascontiguousarray(scores[order])
    h = hashlib.sha256()
    h.update(str(data.n_items).encode())
    h.update("\x1f".join(ids).encode())
    h.update(scores.tobytes())
    return h.hexdigest()[:32]


def _joint_classifiers(post: Posterior) -> list[str]:
    """The classifiers' names where ``post`` is a joint calibration model's posterior (or a
    stack of them) of several score columns (:func:`bayeval.models.joint.joint_data`); else []."""
    from ..models.joint import JointCalibrationPosterior
    from ..models.stacking import StackedPosterior

    parts = list(post.candidates.values()) if isinstance(post, StackedPosterior) else [post]
    if not parts or not all(isinstance(p, JointCalibrationPosterior) for p in parts):
        return []
    return [str(n) for n in post.data.feature_names]


def _label_value(v):
    """0/1 from what a person may type; None when it is not a label.

    The parser every entry point shares (:func:`bayeval.core._validate.label_cell`);
    an empty value is not a label here.
    """
    lab = V.label_cell(v)
    return None if lab is None or lab != lab else int(lab)


class ActiveSession:
    """A resumable active-testing loop: propose a batch, record labels, refit, repeat.

    Parameters
    ----------
    data : EvalData
        The evaluation set (scores, and usually noisy labels and categories). Labels
        already vetted in ``data`` are kept; labels in the store are applied on top
        (the store is the record of what people answered).
    model : object with ``fit(data, **fit_kwargs) -> Posterior``, or a callable ``data -> Posterior``
        The estimator refitted after each batch, e.g. ``bayeval.models.LabelFlip()``.
        A model that also has ``choose(posterior, size, exclude=..., random_seed=...)``
        and ``decided(posterior)`` chooses the batches after the designed first one and
        says when to stop (:meth:`decided`): :class:`bayeval.compare.ComparisonModel`
        decides which of two classifiers is better, and its ``estimate(posterior,
        hdi_prob=...)`` makes :meth:`estimate` the gap between them.
    metric : str
        The metric to estimate and to choose items for (e.g. ``"precision_at_k"``).
    store : LabelStore or path
        Where labels are kept. Reopening a session on the same store resumes it.
    batch_size : int
        Items proposed per batch.
    strategy : str, default "auto"
        One of :data:`bayeval.active.select.STRATEGIES`. ``"auto"``: for data without
        noisy labels, a first batch stratified on the score (:func:`bayeval.active.design`;
        with categories, within each category) while fewer items are vetted than a batch
        holds, then expected change of the metric for three quarters of each batch and
        :func:`bayeval.active.explore` (the design's least-vetted strata) for the last
        quarter; with noisy labels, that mix from the start. The model is not fitted for a
        designed batch.
    metric_kwargs : dict, optional
        Options of the metric (``{"k": 48}``). A metric that needs one (``k`` of
        ``"precision_at_k"``, ``recall`` of ``"precision_at_recall"``) and lacks it is
        refused here, before any batch is served; so is a ``threshold`` that flags no item
        or every item (:func:`bayeval.active.design.check_threshold`), and a ``k`` of
        ``"precision_at_k"`` or ``"recall_at_k"`` above the items or, per category, above a
        category's items (:func:`bayeval.active.select.check_top_k`).
    category : {"mean", "pooled", "each"}, optional
        How categories enter the estimate and the selection; default ``"mean"`` with
        categories, else ``"pooled"``.
    hdi_prob : float
        Probability of the credible intervals in :meth:`estimate` and :meth:`history`.
    fit_kwargs : dict, optional
        Passed to ``model.fit`` (``draws``, ``tune``, ``chains``...).
    random_seed : None, int, numpy.random.SeedSequence or numpy.random.Generator
        Seeds the fits (per number of vetted items, so a resumed session refits
        identically) and the random strategy. Kept as an int (``random_seed``
        attribute): a SeedSequence or Generator is turned into one once.
    progressbar : bool
        Show a refit's progress bar (drawn only when the refit runs more than about 2 s).

    Notes
    -----
    Item ids in the store must belong to ``data``: a store opened with a different
    evaluation set (other ids or scores) is refused, so labels never attach to the
    wrong items. Conflicting labels for one item are all kept in the store and
    resolved by :meth:`LabelStore.resolved`'s rule.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> from bayeval import EvalData, Posterior
    >>> from bayeval.active import ActiveSession
    >>> data = EvalData(np.linspace(1, 0, 20), noisy_labels=[1, 0] * 10)
    >>> model = lambda d: Posterior.from_probabilities(d, np.where(d.vetted, 0.5, 0.6),
    ...                                                draws=200, random_seed=0)
    >>> path = os.path.join(tempfile.mkdtemp(), "labels.sqlite")
    >>> s = ActiveSession(data, model, metric="precision_at_k", metric_kwargs={"k": 5},
    ...                   store=path, batch_size=2, strategy="expected_change")
    >>> batch = s.next_batch()
    >>> s.record(batch, [1, 0], annotator="ann")
    2
    >>> int(s.data.n_vetted)
    2
    >>> s.close()
    >>> s2 = ActiveSession(data, model, metric="precision_at_k", metric_kwargs={"k": 5},
    ...                    store=path, batch_size=2, strategy="expected_change")
    >>> int(s2.data.n_vetted)   # resumed from the store
    2
    >>> s2.close()
    """

    def __init__(
        self,
        data: EvalData,
        model,
        *,
        metric: str = "average_precision",
        store,
        batch_size: int = 20,
        strategy: str = "auto",
        metric_kwargs: dict | None = None,
        category: str | None = None,
        hdi_prob: float = HDI_PROB,
        fit_kwargs: dict | None = None,
        random_seed: int | np.random.SeedSequence | np.random.Generator | None = None,
        progressbar: bool = True,
    ):
        if not isinstance(data, EvalData):
            raise TypeError(f"`data` must be an EvalData, got {type(data).__name__}.")
        if not (callable(model) or callable(getattr(model, "fit", None))):
            raise TypeError(
                "`model` must have a fit(data, ...) method returning a Posterior (e.g. "
                f"bayeval.models.LabelFlip()) or be a callable data -> Posterior; got {type(model).__name__}."
            )
        self.metric = metric
        self.metric_kwargs = dict(metric_kwargs or {})
        # unknown metric names, unknown or NaN options and a missing `k` fail here, not after the first batch
        check_metric_options(metric, self.metric_kwargs, how="metric_kwargs={dict}")
        self.batch_size = V.as_positive_int(batch_size, "batch_size")
        self.strategy = V.check_choice(strategy, "strategy", STRATEGIES)
        if category is None:
            category = "mean" if data.has_categories else "pooled"
        self.category = V.check_choice(category, "category", ("mean", "pooled", "each"))
        # a threshold above every score (or at or below every one): refused before a batch is spent on it
        check_threshold(data, metric, self.metric_kwargs.get("threshold"), category=self.category)
        check_top_k(data, metric, category=self.category,  # and a top bigger than the items (or a category's)
                    **{k: v for k, v in self.metric_kwargs.items() if k != "category"})
        self.hdi_prob = V.as_probability(hdi_prob, "hdi_prob", open_interval=True)
        self.fit_kwargs = dict(fit_kwargs or {})
        self.random_seed = _as_int_seed(random_seed)
        self.progressbar = bool(progressbar)
        self.model = model

        if isinstance(store, LabelStore):
            self.store = store
            self._owns_store = False
        elif isinstance(store, str | os.PathLike):
            self.store = LabelStore(store)
            self._owns_store = True
        else:
            raise TypeError(f"`store` must be a LabelStore or a file path, got {type(store).__name__}.")

        fp, fp_any_order = _fingerprint(data), _fingerprint(data, ordered=False)
        meta = self.store.get_meta(_META_KEY)
        if meta is None:
            self.store.set_meta(
                _META_KEY,
                {"fingerprint": fp, "fingerprint_any_order": fp_any_order, "n_items": int(data.n_items),
                 "created": datetime.now(UTC).isoformat()},
            )
        elif meta.get("fingerprint") != fp and meta.get("fingerprint_any_order") != fp_any_order:
            # the same items and scores in another row order pass: labels are kept by item id
            raise ValueError(self._other_set(meta, data, fp))
        elif "fingerprint_any_order" not in meta and not self.store.damaged:  # a store made before: from now on
            self.store.set_meta(_META_KEY, {**meta, "fingerprint_any_order": fp_any_order})
        self._base = data
        self._pos = {item: i for i, item in enumerate(data.item_ids.tolist())}
        # the store's labels checked against these ids before anything is written to it: a refused
        # session leaves the store as it was
        self.data = self._apply_store(data)
        if not self.store.damaged:  # a damaged store is refused at its first write, with the steps
            with contextlib.suppress(ValueError):  # ids a store cannot hold are refused when written
                self.store.register_items(list(self._pos))  # the store refuses labels of other ids
        self._post: Posterior | None = None
        self._post_key = None

    def _other_set(self, meta: dict, data: EvalData, fp: str) -> str:
        """Why the store does not fit ``data``: which ids differ, and how to carry the labels over."""
        path = str(self.store.path)
        known = self.store.known_items()
        what = ""
        if known is not None:
            have = {str(i) for i in data.item_ids.tolist()}
            old = {str(i) for i in known}
            new, gone = sorted(have - old), sorted(old - have)
            if new or gone:
                parts = []
                if new:
                    parts.append(f"{len(new)} of its ids are not the store's (e.g. {', '.join(map(repr, new[:3]))})")
                if gone:
                    parts.append(f"{len(gone)} of the store's ids are missing (e.g. {', '.join(map(repr, gone[:3]))})")
                what = ": " + "; ".join(parts)
            else:
                what = ": the same ids, with other scores"
        return (
            f"The label store {path!r} belongs to another evaluation set ({meta.get('n_items')} items, "
            f"fingerprint {meta.get('fingerprint')}); this data has {data.n_items} items (fingerprint {fp}){what}. "
            "Open the data the store was made for, or carry its labels over (they are kept by item id): "
            f"`bayeval export-labels {path} labels.csv`, then `bayeval label NEW.sqlite labels.csv` "
            "and use NEW.sqlite as the store (e.g. `bayeval vet CARD --store NEW.sqlite`)."
        )

    # ------------------------------------------------------------------ state

    def _apply_store(self, data: EvalData) -> EvalData:
        """``data`` with the store's labels, read as ``Card.load_data(store=True)`` reads them: a text
        id ``'261'`` of data numbered by row (an int ``261`` of data with text ids) is that item."""
        resolved, unknown = labels_for_items(self.store, list(self._pos))
        if len(resolved) == 0:
            return data
        if unknown:
            n = row_count(self._pos)
            rows = (f" This data has no ids of its own: its items are the row numbers 0 to {n - 1}, and a "
                    "stored id is read as a row only when it is written as one (261 or '261', not '0261')."
                    if n is not None else "")
            keep = ", also_known=[str(i) for i in data.item_ids]" if n is not None else ""  # keeps '261'
            raise ValueError(
                f"The label store {str(self.store.path)!r} holds labels for {len(unknown)} item(s) "
                f"not in this data (e.g. {unknown[:5]!r}).{rows} If it is the store of another data set, "
                "open the data it was made for; if these are mistyped ids, "
                f"`bayeval.active.repair.repair(path, data.item_ids{keep})` (or `bayeval repair-store "
                "STORE --scores SCORES --score COL`) sets their labels aside, keeping every one."
            )
        return data.with_labels(resolved.index.tolist(), resolved.to_numpy(dtype=np.int8), overwrite=True)

    def _fit_seed(self) -> int | None:
        if self.random_seed is None:
            return None
        ss = np.random.SeedSequence([int(self.random_seed), int(self.data.n_vetted)])
        return int(ss.generate_state(1)[0])

    def _chooses(self) -> bool:
        return callable(getattr(self.model, "choose", None)) and callable(getattr(self.model, "decided", None))

    def _fit(self) -> Posterior:
        seed = self._fit_seed()
        if isinstance(self.model, Model) or self._chooses():  # the model contract: the same keywords for every model
            kwargs = dict(self.fit_kwargs)
            kwargs.setdefault("random_seed", seed)
            kwargs.setdefault("progressbar", self.progressbar)
            if self._post is not None and getattr(self._post, "model_spec", None) is self.model:
                # the last fit's draws, reweighted to the new labels where that is reliable
                kwargs.setdefault("previous", self._post)
            post = self.model.fit(self.data, **kwargs)
        elif callable(getattr(self.model, "fit", None)):  # another object with a fit(data, ...)
            post = self.model.fit(self.data, **self.fit_kwargs)
        else:
            post = self.model(self.data)
        if not isinstance(post, Posterior):
            raise TypeError(f"The model returned {type(post).__name__}, not a bayeval Posterior.")
        return post

    @property
    def posterior(self) -> Posterior:
        """The model fitted to the current labels (refitted only when labels changed)."""
        key = self.data.labels.tobytes()
        if self._post is None or self._post_key != key:
            self._post = self._fit()
            self._post_key = key
        return self._post

    # ------------------------------------------------------------------- loop

    def pending(self, *, by_batch: bool = False):
        """Item ids proposed in a batch that nobody has labeled yet, in every batch of the store.

        A batch left unfinished when a newer one was proposed (``bayeval select --store
        --new-batch``, or a session stopped half-way) keeps its items: they are listed here,
        oldest batch first, and :meth:`next_batch` offers them again before it chooses a new
        batch. An item proposed by several batches counts once, under the newest (its label is
        filed there); an item with a label in the data or the store is not pending.

        Parameters
        ----------
        by_batch : bool, default False
            Return ``{batch: [item ids]}`` (only batches that still hold such items) rather
            than one list.

        Examples
        --------
        >>> import numpy as np, tempfile, os
        >>> from bayeval import EvalData
        >>> from bayeval.active import ActiveSession
        >>> data = EvalData(np.linspace(1, 0, 8), item_ids=list("abcdefgh"))
        >>> s = ActiveSession(data, lambda d: None, store=os.path.join(tempfile.mkdtemp(), "s.sqlite"))
        >>> b1 = s.store.new_batch(["a", "b", "c"])
        >>> b2 = s.store.new_batch(["d", "e"])   # a new batch before the first was labelled
        >>> s.record(["a", "d", "e"], [1, 0, 0])
        3
        >>> s.pending(), s.pending(by_batch=True)
        (['b', 'c'], {1: ['b', 'c']})
        >>> s.next_batch()                        # the first batch's items, not a new batch
        ['b', 'c']
        >>> s.close()
        """
        held = pending_items(self.store, list(self._pos))
        held = {b: [item for item in items if not self._base.vetted[self._pos[item]]] for b, items in held.items()}
        held = {b: items for b, items in held.items() if items}
        return held if by_batch else [item for items in held.values() for item in items]

    def next_batch(self, *, exclude=None) -> list:
        """Item ids to vet next.

        If a proposed batch is not fully labeled yet (the session was stopped half-way, or a
        newer batch was proposed before it was finished), the remaining items of every such
        batch are returned again, oldest batch first (:meth:`pending`); otherwise the model is
        refitted if needed and a new batch is chosen with the session's strategy and
        recorded in the store.

        Parameters
        ----------
        exclude : sequence of item ids, optional
            Items not to propose (e.g. those a person skipped): they are left out of the
            unfinished batches, and a new batch is chosen among the other unvetted items
            when nothing else of those batches remains.

        Examples
        --------
        >>> import numpy as np, tempfile, os
        >>> from bayeval import EvalData
        >>> from bayeval.active import ActiveSession
        >>> data = EvalData(np.linspace(1, 0, 10), item_ids=[f"i{j}" for j in range(10)])
        >>> s = ActiveSession(data, lambda d: None, metric="average_precision", batch_size=3,
        ...                   store=os.path.join(tempfile.mkdtemp(), "s.sqlite"), random_seed=0)
        >>> first = s.next_batch()            # designed on the scores: no fit
        >>> rest = s.next_batch(exclude=first[:1])
        >>> rest == first[1:]
        True
        >>> s.close()
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
        unvetted = int((~self.data.vetted & ~mask).sum())
        if unvetted == 0:
            return []
        seed = None
        if self.random_seed is not None:
            seed = int(np.random.SeedSequence([int(self.random_seed), int(self.data.n_vetted), 1]).generate_state(1)[0])
        kwargs = dict(self.metric_kwargs)
        if self.data.has_categories:
            kwargs["category"] = self.category
        size = min(self.batch_size, unvetted)
        strategy = resolve_auto(self.strategy, self.data, size)
        exclude_mask = mask if mask.any() else None
        if strategy == "design":  # chosen by the scores alone: no fit needed
            name, thr = design_target(self.metric, kwargs.get("threshold"))
            positions = design(self.data, size, metric=name, threshold=thr, exclude=exclude_mask,
                               random_seed=seed)
        elif self._chooses():  # the model says which items decide (a comparison: the gap's expected change)
            positions = self.model.choose(self.posterior, size, exclude=exclude_mask, random_seed=seed)
            strategy = type(self.model).__name__
        else:  # "auto" past the first batch: expected change with an exploring share (select's "auto")
            self._refuse_joint(self.posterior, "the batch would be chosen for")
            positions = select(self.posterior, metric=self.metric, size=size,
                               strategy="auto" if self.strategy == "auto" else strategy, random_seed=seed,
                               exclude=exclude_mask, **kwargs)
            if self.strategy == "auto":
                strategy = "expected_change+explore"
        ids = self.data.item_ids[np.asarray(positions, dtype=np.int64)].tolist()
        self.store.new_batch(ids, strategy=strategy)
        return ids

    def decided(self):
        """The model's stopping rule on the current labels: its verdict, or None (keep labelling).

        Needs a model with ``decided(posterior)``, such as
        :class:`bayeval.compare.ComparisonModel` (``"a"``, ``"b"``, ``"equivalent"`` or
        None); refits if labels changed. None while nothing is vetted.
        """
        if not callable(getattr(self.model, "decided", None)):
            raise TypeError(
                f"This session's model ({type(self.model).__name__}) has no stopping rule: decided() needs a model "
                "with decided(posterior), e.g. bayeval.compare.ComparisonModel(a, b). For a metric's interval "
                "use estimate()."
            )
        if self.data.n_vetted == 0:
            return None
        return self.model.decided(self.posterior)

    def refresh(self) -> EvalData:
        """Read the store again: apply labels written since (by another thread or process).

        :meth:`record` applies its own labels; call this when someone else writes to the
        same store (the vetting page writes each answer straight to the store, and its
        background refit calls this first). Returns the updated :attr:`data`.

        Examples
        --------
        >>> import numpy as np, tempfile, os
        >>> from bayeval import EvalData
        >>> from bayeval.active import ActiveSession, LabelStore
        >>> data = EvalData(np.linspace(1, 0, 6), item_ids=list("abcdef"))
        >>> path = os.path.join(tempfile.mkdtemp(), "s.sqlite")
        >>> s = ActiveSession(data, lambda d: None, store=path)
        >>> LabelStore(path).add(["b"], [1])   # written by someone else
        1
        >>> int(s.data.n_vetted), int(s.refresh().n_vetted)
        (0, 1)
        >>> s.close()
        """
        self.data = self._apply_store(self._base)
        return self.data

    def record(self, item_ids, labels, *, annotator: str | None = None) -> int:
        """Record labels for items; returns how many were written.

        Valid labels are written to the store (and applied) first; then, if any
        entry was for an unknown item or had a value other than 0/1, a
        ``ValueError`` lists those entries -- the valid ones in the same call are
        kept.

        Parameters
        ----------
        item_ids : sequence
            Item ids (as in ``data.item_ids``).
        labels : sequence
            1/0 (also ``True``/``False``, ``"1"``/``"0"``, ``"true"``/``"false"`` in
            any case). Anything else (``"NA"``, ``"yes"``, None, NaN) is rejected.
        annotator : str, optional
            Who answered.
        """
        if isinstance(item_ids, str) or np.ndim(item_ids) == 0:
            item_ids = [item_ids]
        if isinstance(labels, str) or np.ndim(labels) == 0:
            labels = [labels]
        ids = list(np.asarray(item_ids, dtype=object).tolist()) if not isinstance(item_ids, list) else list(item_ids)
        vals = list(labels)
        if len(ids) != len(vals):
            raise ValueError(
                f"`item_ids` has {len(ids)} entries but `labels` has {len(vals)}; give one label per item. "
                "Nothing was recorded."
            )
        batch_of = {}
        batches = self.store.batches()
        for b in batches["batch"].tolist() if len(batches) else []:
            for item in self.store.batch_items(int(b)):
                batch_of[item] = int(b)  # later batches win
        good: dict[int | None, tuple[list, list]] = {}
        rejected = []
        for item, v in zip(ids, vals, strict=True):
            key = item.item() if isinstance(item, np.generic) else item
            if key not in self._pos:
                rejected.append((item, v, "unknown item id" + self._did_you_mean(key)))
                continue
            lab = _label_value(v)
            if lab is None:
                rejected.append((item, v, "label must be 0 or 1 (also 1.0/0.0 and true/false in any case)"))
                continue
            b = batch_of.get(key)
            good.setdefault(b, ([], []))
            good[b][0].append(key)
            good[b][1].append(lab)
        written = 0
        for b, (bids, bvals) in good.items():
            written += self.store.add(bids, bvals, annotator=annotator, batch=b)
        if written:
            self.data = self._apply_store(self._base)
        if rejected:
            shown = "; ".join(f"{i!r}: {v!r} ({why})" for i, v, why in rejected[:10])
            more = f" and {len(rejected) - 10} more" if len(rejected) > 10 else ""
            raise ValueError(
                f"{len(rejected)} label(s) were rejected: {shown}{more}. The other {written} label(s) "
                "of this call were recorded. Fix the rejected entries and record them again."
            )
        return written

    def _did_you_mean(self, item) -> str:
        if getattr(self, "_known_items", None) is None:
            self._known_items = KnownItems(list(self._pos))
        return self._known_items.did_you_mean(item)

    def _metric_da(self, post: Posterior):
        kwargs = dict(self.metric_kwargs)
        if self.data.has_categories:
            kwargs["category"] = self.category
        return post.metric(self.metric, **kwargs)

    def _refuse_joint(self, post: Posterior, what: str) -> None:
        """A ValueError where ``post`` is a joint model of several classifiers' scores and this
        session's model does not choose for them: its metric would be the first column's alone."""
        names = _joint_classifiers(post)
        if len(names) > 1:
            raise ValueError(
                f"This session's posterior is a joint model of {len(names)} classifiers' scores ({names}): "
                f"{what} {self.metric!r} of the first column ({names[0]!r}) alone. For the gap "
                "between two of them give the session bayeval.compare.ComparisonModel(a, b) as its model (then "
                "estimate() is the gap a - b with P(a better) and the batches decide it); for every classifier's "
                "metric on the shared draws use bayeval.compare.Comparison(session.posterior).ranking(metric); to "
                "evaluate one classifier, give the session an EvalData of its scores alone."
            )

    def estimate(self) -> pd.DataFrame:
        """Refit (if labels changed) and summarize the metric: mean, sd and HDI.

        Also appends the headline estimate to the session's history (kept in the store).

        With a model that chooses the batches and says when to stop (see ``model``) and has
        its own ``estimate(posterior, hdi_prob=...)``, such as
        :class:`bayeval.compare.ComparisonModel`, the table is the model's: for a
        comparison the gap ``a - b`` in the model's metric, with ``p_better`` and the
        stopping rule's verdict (one row, the history is of the gap). A joint model's
        posterior of several classifiers' scores (:func:`~bayeval.models.joint.joint_data`)
        with any other model is refused with a ValueError: the metric would be that of the
        first score column alone, and the error names what to use instead.

        Examples
        --------
        >>> import numpy as np, tempfile, os
        >>> from bayeval import EvalData, Posterior
        >>> from bayeval.active import ActiveSession
        >>> data = EvalData(np.linspace(1, 0, 20), labels=[1, 0] + [np.nan] * 18)
        >>> model = lambda d: Posterior.from_probabilities(d, np.full(20, 0.5), draws=200, random_seed=0)
        >>> s = ActiveSession(data, model, store=os.path.join(tempfile.mkdtemp(), "s.sqlite"))
        >>> s.estimate().columns.tolist()
        ['mean', 'sd', 'hdi_5%', 'hdi_95%']
        >>> s.close()
        """
        post = self.posterior
        if self._chooses() and callable(getattr(self.model, "estimate", None)):  # a comparison's: the gap
            table = self.model.estimate(post, hdi_prob=self.hdi_prob)
            self._append_history(table)
            return table
        self._refuse_joint(post, "estimate() would measure")
        kwargs = dict(self.metric_kwargs)
        if self.data.has_categories:
            kwargs["category"] = self.category
        table = post.summary({self.metric: (self.metric, kwargs)}, hdi_prob=self.hdi_prob)
        self._append_history(table)
        return table

    def _append_history(self, table: pd.DataFrame) -> None:
        hist = self.store.get_meta(_HISTORY_KEY, []) or []
        n_vetted = int(self.data.n_vetted)
        batches = self.store.batches()
        last_batch = int(batches["batch"].iloc[-1]) if len(batches) else 0
        row = table.iloc[0] if len(table) == 1 else None
        entry = {
            "batch": last_batch,
            "n_vetted": n_vetted,
            "fraction_vetted": n_vetted / self.data.n_items,
            "metric": table.index[0] if row is not None else self.metric,
            "mean": float(row["mean"]) if row is not None else float(table["mean"].mean()),
            "sd": float(row["sd"]) if row is not None else float("nan"),
            "lower": float(row.iloc[2]) if row is not None else float("nan"),
            "upper": float(row.iloc[3]) if row is not None else float("nan"),
            "hdi_prob": self.hdi_prob,
            "time": datetime.now(UTC).isoformat(),
        }
        if hist and hist[-1]["n_vetted"] == n_vetted and hist[-1]["metric"] == entry["metric"]:
            hist[-1] = entry
        else:
            hist.append(entry)
        self.store.set_meta(_HISTORY_KEY, hist)

    def history(self) -> pd.DataFrame:
        """The estimate and its interval after each batch (one row per call of :meth:`estimate`
        with a new number of vetted items)."""
        hist = self.store.get_meta(_HISTORY_KEY, []) or []
        cols = ["batch", "n_vetted", "fraction_vetted", "metric", "mean", "sd", "lower", "upper", "hdi_prob", "time"]
        return pd.DataFrame(hist, columns=cols)

    # -------------------------------------------------------------- lifecycle

    def close(self) -> None:
        """Close the store (if the session opened it)."""
        if self._owns_store:
            self.store.close()

    def __enter__(self) -> ActiveSession:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"ActiveSession(metric={self.metric!r}, strategy={self.strategy!r}, batch_size={self.batch_size}, "
            f"vetted={self.data.n_vetted}/{self.data.n_items}, store={str(self.store.path)!r})"
        )
