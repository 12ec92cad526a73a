"""Model cards: one folder per classifier under evaluation, described by ``card.toml``.

A model card folder (by convention under the repository's top-level ``models/``)
holds the scores a classifier gave to an evaluation set, the script that made them,
and a ``card.toml`` that says how to evaluate it: which columns hold the scores and
the labels, which generative model to fit with which sampling settings, which
metrics to report and which constraints a threshold must meet. ``bayeval report
models/NAME`` renders the card's report; :func:`load_card` is the loader behind it.

The ``card.toml`` schema
------------------------
::

    title = "..."                   # required: a short name
    description = "..."             # required: one paragraph: classifier, data, how vetted

    [data]                          # required
    file = "scores.csv"             # required: CSV or Parquet, inside the card folder
                                    # (a path out of it needs `--allow-outside`)
    score = "score"                 # required: column of classifier scores
    label = "label"                 # vetted labels: 1 / 0, empty = not vetted
    noisy_label = "noisy"           # optional: cheap 0/1 labels of every item
    prediction = "prediction"       # optional: the classifier's hard 0/1 decisions
    category = "category"           # optional: category (tag, class) of each item
    id = "id"                       # optional: unique item ids
    truth = "truth"                 # optional: known true labels, only for comparison
    features = ["f1", "f2"]         # optional: feature columns (models that use them)
    label_strategy = "random"       # optional: the `label` column's vetted items were drawn
                                    # at random (left out: how they were chosen is not known)

    [model]                         # required
    name = "default"                # "default", "calibration", "score_mixture" or "label_flip"
    # "default" is bayeval.fit's model: calibration curves stacked by leave-one-out.
    # Every other key is passed to the model's constructor, e.g. for default
    # transform = "logodds" (the scores are log-odds), for score_mixture
    # negative = "normal", positive = "studentt", transform = "logit"

    [sampling]                      # optional; defaults shown
    draws = 1000                    # posterior draws per chain (>= 1; chains x draws is
                                    # checked against a memory limit, 4 GB by default:
                                    # BAYEVAL_MAX_MEMORY_GB or --max-memory-gb raise it)
    tune = 1000                     # tuning steps per chain (>= 0)
    chains = 2                      # chains (>= 1)
    random_seed = 0                 # seeds the sampler and the label draws (>= 0)
    # target_accept = 0.9           # optional, passed to the model's fit()

    [report]                        # optional; defaults shown
    hdi_prob = 0.9                  # probability of the highest-density intervals
    metrics = ["average_precision"] # names, or inline tables {name = ..., label = ..., options}
    # e.g. ["average_precision", "roc_auc", { name = "precision_at_k", k = 50 }]

    [constraints]                   # optional: what a threshold must achieve
    min_precision = 0.9             # in [0, 1]
    min_recall = 0.8                # in [0, 1]
    prob = 0.9                      # optional: the threshold must meet them with this probability
    # min_flagged = 0               # optional: the fewest items a recommended threshold may flag
    #                               # (default: the larger of 10 and 1% of the items, at most a
    #                               # tenth of the expected positives; 0 allows any threshold)

    [vet]                           # optional: the vetting page (`bayeval vet CARD`)
    image = "image"                 # column: an image file (a path inside the card folder)
                                    # or an http(s) URL, shown for each item
    text = "text"                   # column: text shown for each item
    metric = "average_precision"    # the label of a [report] metric to estimate and to choose
                                    # items for (default: the first)
    batch_size = 10                 # items proposed per batch (default 10)
    budget = 200                    # optional: how many labels you plan to give
    store = "vet.sqlite"            # the label store, relative to the card folder (default)

Label columns are read strictly, by the same rule as every other entry point
(the ``bayeval`` command, the label store, the active session): a vetted label (and
a noisy label, a prediction, a truth value) must be ``1`` or ``0`` (``1.0``/``0.0``
and ``true``/``false`` in any case are accepted too); an empty cell in the ``label``
column means "not vetted". Anything else (``yes``, ``2``, ``NA``, ``n/a``,
``null``...) is an error that lists the offending lines: labels a person typed are
never silently dropped. Item ids are read as text, so ``007`` and ``7`` are different
items. Every error names the card file and the key at fault.

Examples
--------
>>> import tempfile, pathlib
>>> from bayeval.cards import load_card
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "scores.csv").write_text("score,label\\n0.9,1\\n0.7,\\n0.2,0\\n")
>>> _ = (folder / "card.toml").write_text('''
... title = "toy"
... description = "three scores"
... [data]
... file = "scores.csv"
... score = "score"
... label = "label"
... [model]
... name = "score_mixture"
... ''')
>>> card = load_card(folder)
>>> data, truth = card.load_data()
>>> data.n_vetted, truth is None
(2, True)
"""

from __future__ import annotations

import importlib
import inspect
import math
import numbers
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .core._defaults import HDI_PROB
from .core import _validate as V
from ._card_scales import scale_findings
from ._tables import MissingColumn, Table, TableError, read_table
from .core.data import EvalData
from .core.metrics import METRICS

__all__ = ["Card", "CardError", "JoinedCards", "MODELS", "join_cards", "load_card", "list_cards"]

CARD_FILE = "card.toml"

#: Model names a card may use, and where their classes live.
MODELS: dict[str, tuple[str, str]] = {
    "default": ("bayeval.models.stacking", "Stack"),
    "calibration": ("bayeval.models.calibration", "Calibration"),
    "score_mixture": ("bayeval.models.score_mixture", "ScoreMixture"),
    "label_flip": ("bayeval.models.label_flip", "LabelFlip"),
}

# Columns each model needs besides ``score`` (checked when the card is loaded).
_MODEL_NEEDS = {"label_flip": ("noisy_label",)}

_TOP_KEYS = ("title", "description", "data", "model", "sampling", "report", "constraints", "vet")
_DATA_KEYS = (
    "file",
    "score",
    "label",
    "noisy_label",
    "prediction",
    "category",
    "id",
    "truth",
    "features",
    "label_strategy",
)
#: What ``[data] label_strategy`` may say of the scores file's vetted labels (the strategy
#: names of a label store's batches): "random", every one drawn at random from the items.
LABEL_STRATEGIES = ("random",)
_SAMPLING_KEYS = ("draws", "tune", "chains", "random_seed", "target_accept")
_REPORT_KEYS = ("hdi_prob", "metrics")
_CONSTRAINT_KEYS = ("min_precision", "min_recall", "prob", "min_flagged")
_SAMPLING_DEFAULTS = {"draws": 1000, "tune": 1000, "chains": 2, "random_seed": 0}
_REPORT_DEFAULTS = {"hdi_prob": HDI_PROB, "metrics": ["average_precision"]}
_BINARY_COLUMNS = ("label", "noisy_label", "prediction", "truth")
_VET_KEYS = ("image", "text", "metric", "batch_size", "budget", "store")
_VET_DEFAULTS = {"batch_size": 10, "store": "vet.sqlite"}


class CardError(ValueError):
    """A model card that cannot be read: the message names the card file and the key.

    Examples
    --------
    >>> from bayeval.cards import CardError, load_card
    >>> try:
    ...     load_card("no/such/folder")
    ... except CardError as exc:
    ...     print(str(exc).split(":")[0])
    no/such/folder/card.toml
    """


# ------------------------------------------------------------------ the card


@dataclass(frozen=True)
class Card:
    """One classifier under evaluation, as described by its ``card.toml``.

    Create it with :func:`load_card`; the fields are the validated content of the
    file (see the module documentation for the schema).

    Attributes
    ----------
    path : pathlib.Path
        The card folder.
    title, description : str
    data_file : pathlib.Path
        The scores file (absolute).
    columns : dict
        ``{role: column}`` for the roles present (``score``, ``label``,
        ``noisy_label``, ``prediction``, ``category``, ``id``, ``truth``; ``features``
        maps to a list of columns).
    model_name : str
        A key of :data:`MODELS`.
    model_options : dict
        Keyword arguments of the model's constructor.
    sampling : dict
        ``draws``, ``tune``, ``chains``, ``random_seed`` (and ``target_accept`` if given).
    report_options : dict
        ``hdi_prob`` and ``metrics`` (the entries as written in the file).
    constraints : dict or None
        ``min_precision`` and/or ``min_recall``.
    vet : dict
        The ``[vet]`` table with its defaults: ``batch_size``, ``store`` and whichever of
        ``image``, ``text``, ``metric`` and ``budget`` it gives.
    label_strategy : str or None
        ``[data] label_strategy``: how the scores file's vetted labels were chosen
        (``"random"``), None when the card does not say.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from bayeval.cards import load_card
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "s.csv").write_text("s,y\\n0.9,1\\n0.4,\\n0.1,0\\n0.3,\\n0.8,\\n")
    >>> _ = (folder / "card.toml").write_text('''
    ... title = "toy"
    ... description = "five scores"
    ... data = { file = "s.csv", score = "s", label = "y" }
    ... model = { name = "score_mixture", negative = "normal", positive = "normal" }
    ... report = { metrics = ["average_precision", { name = "precision_at_k", k = 2 }] }
    ... ''')
    >>> card = load_card(folder)
    >>> card.model_name, card.sampling["chains"], card.metrics()
    ('score_mixture', 2, {'average_precision': 'average_precision', 'precision_at_k[k=2]': ('precision_at_k', {'k': 2})})
    >>> card.build_model()
    ScoreMixture(negative='normal', positive='normal', transform='auto')
    >>> post = card.fit(progressbar=False, draws=50, tune=50)  # doctest: +SKIP
    """

    path: Path
    title: str
    description: str
    data_file: Path
    columns: dict
    model_name: str
    model_options: dict = field(default_factory=dict)
    sampling: dict = field(default_factory=lambda: dict(_SAMPLING_DEFAULTS))
    report_options: dict = field(default_factory=lambda: dict(_REPORT_DEFAULTS))
    constraints: dict | None = None
    vet: dict = field(default_factory=lambda: dict(_VET_DEFAULTS))
    label_strategy: str | None = None

    @property
    def card_file(self) -> Path:
        """The ``card.toml`` this card was read from."""
        return self.path / CARD_FILE

    def _error(self, key: str, message: str) -> CardError:
        return CardError(f"{self.card_file}: {key}: {message}")

    # ------------------------------------------------------------------ data

    def load_data(self, *, store: bool = False) -> tuple[EvalData, np.ndarray | None]:
        """Read the scores file into an :class:`~bayeval.EvalData`.

        Parameters
        ----------
        store : bool, default False
            Also use the labels vetted into the card's label store (``[vet] store``: what
            ``bayeval vet CARD`` and ``bayeval label`` write), where that file exists: an item
            the store labels gets the store's label, also where the scores file has another
            (:meth:`store_labels`). :meth:`fit`, :meth:`fit_task` and ``bayeval report CARD``
            do this.

        Returns
        -------
        data : EvalData
            Scores, vetted labels (NaN where not vetted) and whichever of noisy
            labels, predictions, categories, features and ids the card names.
        truth : numpy.ndarray of int8, or None
            The known true label of every item (``[data] truth``), for comparison
            only; None when the card has no truth column.

        Raises
        ------
        CardError
            Missing columns (the message lists the file's columns), label values
            other than 1/0/empty (the message lists the rows), invalid scores or ids.

        Examples
        --------
        >>> import tempfile, pathlib
        >>> from bayeval.cards import load_card
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "s.csv").write_text("s,y,t\\n0.9,1,1\\n0.4,,0\\n0.1,0,0\\n")
        >>> _ = (folder / "card.toml").write_text('''
        ... title = "toy"
        ... description = "three scores"
        ... data = { file = "s.csv", score = "s", label = "y", truth = "t" }
        ... model = { name = "score_mixture" }
        ... ''')
        >>> data, truth = load_card(folder).load_data()
        >>> data.labels.tolist(), truth.tolist()
        ([1.0, nan, 0.0], [1, 0, 0])
        """
        table = _read_table(self)
        df = table.frame
        cols = self.columns
        wanted = [(role, name) for role, name in cols.items() if role != "features"]
        wanted += [("features", name) for name in cols.get("features", [])]
        for role, name in wanted:
            try:
                table.require({f"[data] {role}": name})
            except MissingColumn as exc:
                raise self._error(
                    exc.role, f"{exc} Fix the column name in {CARD_FILE} or in the file."
                ) from None
        parsed = {}
        for role in _BINARY_COLUMNS:
            if role in cols:
                parsed[role] = _binary_column(self, table, role, cols[role], allow_empty=role == "label")
        n = len(df)
        checks = {
            "score": lambda v, what: V.as_scores(v, what),
            "category": lambda v, what: V.as_categories(v, n, what),
            "id": lambda v, what: V.as_item_ids(v, n, what),
            "features": lambda v, what: V.as_features(v, n, what),
        }
        for role, check in checks.items():
            if role in cols:
                values = df[cols[role]] if role == "features" else df[cols[role]].to_numpy()
                try:
                    check(values, f"column {cols[role]!r}")
                except (TypeError, ValueError) as exc:
                    raise self._error(f"[data] {role}", f"in {self.data_file.name}: {exc}") from exc
        data = EvalData(
            df[cols["score"]].to_numpy(),
            parsed.get("label"),
            noisy_labels=parsed.get("noisy_label"),
            predictions=parsed.get("prediction"),
            categories=df[cols["category"]].to_numpy() if "category" in cols else None,
            features=df[list(cols["features"])] if "features" in cols else None,
            item_ids=df[cols["id"]].to_numpy() if "id" in cols else None,
        )
        truth = parsed.get("truth")
        self._check_top_k(data)
        self._check_min_flagged(data.n_items)
        if store:
            data = self._with_store_labels(data)
        return data, None if truth is None else truth.astype(np.int8)

    def _check_top_k(self, data) -> None:
        """Refuse a ``precision_at_k`` or ``recall_at_k`` entry whose ``k`` is more than the items
        (P@k's missing positions would count as negatives, R@k would be 1), or, with categories,
        than a category's items where the report computes it per category (an entry without
        ``category``, in the table by category, or with ``category = "each"``/``"mean"``): said
        when the data is read, not in the report."""
        n_items = data.n_items
        sizes = None
        if data.has_categories:
            counts = np.bincount(data.category_codes, minlength=data.category_names.size)
            sizes = dict(zip(data.category_names.tolist(), counts.tolist(), strict=True))
        for j, entry in enumerate(self.report_options["metrics"]):
            if not isinstance(entry, dict) or entry.get("name") not in V.TOP_K_METRICS or "k" not in entry:
                continue
            name = entry["name"]
            ks = np.atleast_1d(entry.get("k", 0))
            if ks.size and int(ks.max()) > n_items:
                big = int(ks.max())
                raise self._error(f"[report] metrics[{j}]", (
                    f"{name} with k = {big}, but {self.data_file.name} holds {n_items} items: "
                    f"{V.top_k_harm(name, big, n_items)}. Give k = {n_items} or less (the size of the top you "
                    "act on)."))
            if sizes is not None and ks.size and entry.get("category") != "pooled":
                try:
                    V.check_top_k(ks, n_items, metric=name, categories=sizes, pooled='category = "pooled"')
                except ValueError as exc:
                    how = "" if "category" in entry else (
                        " (Without `category`, the report computes the entry over all items and, in its table "
                        "by category, per category.)")
                    raise self._error(f"[report] metrics[{j}]", f"in {self.data_file.name}: {exc}{how}") from None

    def _check_min_flagged(self, n_items: int) -> None:
        """Refuse ``[constraints] min_flagged`` above the number of items (no threshold can flag
        that many): said when the data is read, before the fit, not after it."""
        floor = (self.constraints or {}).get("min_flagged")
        if floor is not None and floor > n_items:
            raise self._error("[constraints] min_flagged", (
                f"{floor}, but {self.data_file.name} holds {n_items} items: no threshold can flag that many. "
                f"Give min_flagged = {n_items} or less (the fewest items a recommended threshold may flag; "
                "0 allows any threshold)."))

    @property
    def store_file(self) -> Path:
        """The card's label store (``[vet] store``, relative to the card folder)."""
        return self.path / self.vet["store"]

    def store_labels(self):
        """The labels in the card's label store, one per item by the store's conflict rule
        (a ``pandas.Series`` indexed by item id), or None when the store file does not exist.

        An item is keyed by the card's id of it: the labels of a text id ``'261'`` typed for
        a scores file numbered by row and those of its row ``261`` are one entry, settled by
        the conflict rule, as :meth:`load_data` reads them; an id that is no item of the
        scores file is listed as stored.

        Examples
        --------
        >>> import tempfile, pathlib
        >>> from bayeval.cards import load_card
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "s.csv").write_text("id,s,y\\na,0.9,1\\nb,0.4,\\nc,0.1,0\\n")
        >>> _ = (folder / "card.toml").write_text('''
        ... title = "toy"
        ... description = "three scores"
        ... data = { file = "s.csv", score = "s", label = "y", id = "id" }
        ... model = { name = "calibration" }
        ... ''')
        >>> card = load_card(folder)
        >>> card.store_labels() is None
        True
        >>> from bayeval.active.store import LabelStore
        >>> with LabelStore(card.store_file) as st:
        ...     _ = st.add(["b"], [1], annotator="ana")
        >>> card.store_labels().to_dict(), card.load_data(store=True)[0].labels.tolist()
        ({'b': 1}, [1.0, 1.0, 0.0])
        """
        if not self.store_file.is_file():
            return None
        return read_store_labels(self.store_file, self.load_data()[0].item_ids.tolist())

    def vetted_selection(self, data: EvalData | None = None) -> dict | None:
        """How the vetted items were chosen, ``{strategy or None: number of vetted items}``, as
        :func:`bayeval.report.report` takes it (``vetted_selection``) to say how far its
        vetted-only numbers can be read.

        The card's label store records the strategy of each batch it proposed (``"random"``,
        ``"design"``, ``"expected_change"``...): a vetted item counts under the first batch that
        proposed it. The scores file's own vetted labels count under ``"random"`` where the card
        says so (``[data] label_strategy = "random"``), else under None (not known). Where the
        store records one of the scores file's items as proposed by a batch chosen on purpose,
        the store's record wins over the card's claim, with a warning; a warning also says when
        the store adds labels chosen on purpose to a card that says its labels are random.

        Parameters
        ----------
        data : EvalData, optional
            The card's data with its store's labels (:meth:`load_data` with ``store=True``,
            the default).

        Returns
        -------
        dict or None
            Without zero counts; None when neither the card nor a label store says anything.

        Examples
        --------
        >>> import tempfile, pathlib
        >>> from bayeval.cards import load_card
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "s.csv").write_text("s,y\\n0.9,1\\n0.4,\\n0.1,0\\n")
        >>> _ = (folder / "card.toml").write_text('''
        ... title = "toy"
        ... description = "three scores, two vetted at random"
        ... data = { file = "s.csv", score = "s", label = "y", label_strategy = "random" }
        ... model = { name = "calibration" }
        ... ''')
        >>> load_card(folder).vetted_selection()
        {'random': 2}
        """
        if data is None:
            data = self.load_data(store=True)[0]
        if not self.store_file.is_file():
            return {self.label_strategy: data.n_vetted} if self.label_strategy and data.n_vetted else None
        from .active import LabelStore
        from .active._store_items import vetted_choice

        file_vetted = self.load_data()[0].vetted if self.label_strategy else np.zeros(data.n_items, bool)
        with LabelStore(self.store_file) as st:
            ids = data.item_ids.tolist()
            record = vetted_choice(st, ids, data.vetted & ~file_vetted)
            from_file = vetted_choice(st, ids, data.vetted & file_vetted)
        if not self.label_strategy:
            return record
        out = dict(record)
        for key, count in from_file.items():
            key = self.label_strategy if key is None else key  # a batch's record wins over the card's claim
            out[key] = out.get(key, 0) + count
        self._warn_chosen(record, from_file)
        return {key: count for key, count in out.items() if count}

    def _warn_chosen(self, record: dict, from_file: dict) -> None:
        """Warn when the label store says that vetted items were chosen on purpose although the
        card says its labels were drawn at random (``[data] label_strategy``)."""
        import warnings

        overruled = {key: c for key, c in from_file.items() if key not in (None, "random")}
        added = {key: c for key, c in record.items() if key not in (None, "random")}
        if not (overruled or added):
            return
        said = []
        if overruled:
            said.append(f"{sum(overruled.values())} of the scores file's vetted items were proposed by its batches "
                        f"chosen on purpose ({', '.join(f'{k}: {c}' for k, c in overruled.items())}), and the "
                        "store's record wins over the card's claim")
        if added:
            said.append(f"it adds {sum(added.values())} vetted item(s) chosen on purpose "
                        f"({', '.join(f'{k}: {c}' for k, c in added.items())})")
        warnings.warn(
            f"{self.card_file}: [data] label_strategy = {self.label_strategy!r} says the scores file's vetted labels "
            f"were drawn at random, but the label store {self.store_file.name} records vetted items chosen on "
            "purpose: "
            f"{'; '.join(said)}. The vetted items are no random sample of the pool, so the report reads the "
            "vetted-only numbers as the metrics of the vetted items, not as estimates of the pool's.",
            UserWarning, stacklevel=3)

    def _with_store_labels(self, data: EvalData) -> EvalData:
        try:
            return with_store_labels(data, self.store_file, self.data_file.name, repair=self._repair_command())
        except ValueError as exc:
            raise self._error("[vet] store", str(exc)) from None

    def _repair_command(self, store=None) -> str:
        """The `bayeval repair-store` command that sets aside the labels of ids its scores file lacks,
        in its label store (or in ``store``: a comparison's, of the same items)."""
        import shlex

        q = shlex.quote
        store = self.store_file if store is None else store
        command = (f"bayeval repair-store {q(str(store))} --scores {q(str(self.data_file))} "
                   f"--score {q(self.columns['score'])}")
        return command + (f" --id {q(self.columns['id'])}" if "id" in self.columns else "")

    def column_text(self, column: str) -> list:
        """The cells of one column of the scores file, as text (None where empty).

        What the vetting page shows of each item: its image path or URL, its text.

        Examples
        --------
        >>> import tempfile, pathlib
        >>> from bayeval.cards import load_card
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "s.csv").write_text("s,note\\n0.9,007\\n0.4,\\n")
        >>> _ = (folder / "card.toml").write_text('''
        ... title = "toy"
        ... description = "two scores"
        ... data = { file = "s.csv", score = "s" }
        ... model = { name = "score_mixture" }
        ... vet = { text = "note" }
        ... ''')
        >>> load_card(folder).column_text("note")
        ['007', None]
        """
        table = _read_table(self, text=[column])
        try:
            table.require({"[vet] column": column})
        except MissingColumn as exc:
            raise self._error("[vet]", f"{exc} Fix the column name in {CARD_FILE} or in the file.") from None
        return [None if v is None or (isinstance(v, float) and v != v) or str(v) == "" else str(v)
                for v in table.frame[column].tolist()]

    # ----------------------------------------------------------------- model

    def check_scale(self, scores) -> str | None:
        """How the card's model reads the scores, checked against them before a fit, in the card's
        words (``bayeval report CARD``, ``bayeval vet CARD``, ``bayeval compare CARD_A CARD_B``): the
        model's own messages give Python advice.

        ``[model] transform = "logit"`` (``default``, ``calibration``, ``score_mixture``), ``curve =
        "beta"`` (``calibration``) or ``score_transform = "logit"`` (``label_flip``) on scores outside
        [0, 1], and a score mixture's ``transform = "log"`` on scores not all above 0, are refused;
        ``transform = "logodds"`` on scores that all lie in [0, 1] (they look like probabilities) is
        returned as a warning.

        Raises
        ------
        CardError
            Naming the key, the scores' range and what to set instead.

        Examples
        --------
        >>> import tempfile, pathlib
        >>> from bayeval.cards import load_card
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "s.csv").write_text("s\\n0.9\\n0.4\\n")
        >>> _ = (folder / "card.toml").write_text('title = "t"\\ndescription = "d"\\n[data]\\nfile = "s.csv"\\n'
        ...                                       'score = "s"\\n[model]\\nname = "default"\\ntransform = "logodds"\\n')
        >>> load_card(folder).check_scale([0.9, 0.4]).split(": ", 1)[1][:70]
        '[model] transform = "logodds" reads the scores as log-odds, but column'
        >>> load_card(folder).check_scale([2.2, -0.4]) is None
        True
        """
        refused, said = scale_findings(self, scores)
        if refused:
            raise CardError(refused)
        return said

    def build_model(self):
        """The ``bayeval.models`` object the card describes (constructed, not fitted).

        Examples
        --------
        >>> import tempfile, pathlib
        >>> from bayeval.cards import load_card
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "s.csv").write_text("s\\n0.9\\n0.4\\n")
        >>> _ = (folder / "card.toml").write_text('''
        ... title = "toy"
        ... description = "two scores"
        ... data = { file = "s.csv", score = "s" }
        ... model = { name = "score_mixture", negative = "beta", positive = "beta" }
        ... ''')
        >>> load_card(folder).build_model()
        ScoreMixture(negative='beta', positive='beta', transform='auto')
        """
        cls = _model_class(self.model_name, self.card_file)
        return _construct(cls, self.model_name, self.model_options, self.card_file)

    def fit(
        self,
        *,
        progressbar: bool = True,
        draws: int | None = None,
        tune: int | None = None,
        chains: int | None = None,
        random_seed: int | None = None,
        **fit_options,
    ):
        """Load the data, build the model and sample it with the card's settings.

        Parameters
        ----------
        progressbar : bool, default True
        draws, tune, chains, random_seed : int, optional
            Override the card's ``[sampling]`` values (e.g. tiny settings for a quick
            look); None keeps the card's value.
        **fit_options
            Passed on to the model's ``fit()`` (e.g. ``sampler="pymc"``, ``cores=1``,
            ``warn=False``).

        Returns
        -------
        Posterior
            The model's posterior (an :class:`~bayeval.models.SPEPosterior` for
            ``score_mixture``).

        Examples
        --------
        >>> from bayeval.cards import load_card
        >>> post = load_card("models/breast_cancer_logreg").fit(progressbar=False)  # doctest: +SKIP
        >>> post.summary(load_card("models/breast_cancer_logreg").metrics())  # doctest: +SKIP
        """
        model, data, kwargs = self.fit_task(progressbar=progressbar, draws=draws, tune=tune, chains=chains,
                                            random_seed=random_seed, **fit_options)
        # every model follows the one fit contract (bayeval.core.model.Model): the same
        # keywords, and a TypeError naming what fit() takes for anything else
        return model.fit(data, **kwargs)

    def fit_task(
        self,
        *,
        progressbar: bool = True,
        draws: int | None = None,
        tune: int | None = None,
        chains: int | None = None,
        random_seed: int | None = None,
        **fit_options,
    ) -> tuple:
        """What :meth:`fit` runs, as ``(model, data, fit_kwargs)``: ``model.fit(data, **fit_kwargs)``
        is the card's fit (the same arguments as :meth:`fit`).

        The form :func:`bayeval.core.distributed.fit_many` takes, to fit many cards
        as tasks on a Dask cluster (``bayeval report CARD CARD ... --workers N``).

        Examples
        --------
        >>> import tempfile, pathlib
        >>> from bayeval.cards import load_card
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "s.csv").write_text("s,y\\n0.9,1\\n0.4,\\n0.2,0\\n")
        >>> _ = (folder / "card.toml").write_text('''
        ... title = "toy"
        ... description = "three scores"
        ... data = { file = "s.csv", score = "s", label = "y" }
        ... model = { name = "calibration" }
        ... ''')
        >>> model, data, kw = load_card(folder).fit_task(draws=200)
        >>> model, data.n_items, kw["draws"]
        (Calibration(curve='logistic', transform='auto'), 3, 200)
        """
        overrides = {"draws": draws, "tune": tune, "chains": chains, "random_seed": random_seed}
        settings = dict(self.sampling)
        for key, value in overrides.items():
            if value is not None:
                settings[key] = value
        settings = _check_sampling(settings, f"{self.card_file}: fit()")
        data, _ = self.load_data(store=True)
        model = self.build_model()
        kwargs = {
            "draws": settings["draws"],
            "tune": settings["tune"],
            "chains": settings["chains"],
            "random_seed": settings["random_seed"],
            "progressbar": progressbar,
        }
        if "target_accept" in settings:
            kwargs["target_accept"] = settings["target_accept"]
        clash = sorted(set(fit_options) & {*kwargs, "data"})
        if clash:
            raise TypeError(
                f"fit() got {clash} as fit options; use the keyword arguments of Card.fit."
            )
        kwargs.update(fit_options)
        return model, data, kwargs

    # --------------------------------------------------------------- metrics

    def metrics(self, category: str | None = None) -> dict:
        """The report's metrics in :meth:`Posterior.summary`'s format.

        Parameters
        ----------
        category : {"pooled", "mean", "each"}, optional
            For a card whose data have categories: the mode given to every entry that
            has no ``category`` option of its own. The report computes such an entry
            over all items pooled in its metrics table (``"pooled"``; so do the vetting
            page and a report's comparison section) and per category in its second
            table (``"each"``); :meth:`Posterior.summary` on its own computes it per
            category. None (the default) leaves the entries as the card writes them.

        Returns
        -------
        dict
            ``{label: name}`` for plain entries and ``{label: (name, {options})}`` for
            entries with options. The label is the entry's ``label`` if it has one,
            else the name followed by its options, e.g. ``precision_at_k[k=50]``.

        Examples
        --------
        >>> import tempfile, pathlib
        >>> from bayeval.cards import load_card
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "s.csv").write_text("s\\n0.9\\n0.4\\n")
        >>> _ = (folder / "card.toml").write_text('''
        ... title = "toy"
        ... description = "two scores"
        ... data = { file = "s.csv", score = "s" }
        ... model = { name = "score_mixture" }
        ... [report]
        ... metrics = ["roc_auc", { name = "recall_at_k", k = 1, label = "R@1" }]
        ... ''')
        >>> load_card(folder).metrics()
        {'roc_auc': 'roc_auc', 'R@1': ('recall_at_k', {'k': 1})}
        >>> load_card(folder).metrics(category="pooled")  # the report's first table, with categories
        {'roc_auc': ('roc_auc', {'category': 'pooled'}), 'R@1': ('recall_at_k', {'k': 1, 'category': 'pooled'})}
        """
        out = _parse_metrics(self.report_options["metrics"], self.card_file)
        if category is None:
            return out
        V.check_choice(category, "category", ("pooled", "mean", "each"))
        filled = {}
        for label, spec in out.items():
            name, options = (spec, {}) if isinstance(spec, str) else (spec[0], dict(spec[1]))
            filled[label] = (name, {**options, "category": options.get("category", category)})
        return filled


# ----------------------------------------------------------------- loading


def load_card(path, *, allow_outside: bool = False) -> Card:
    """Read and validate a model card.

    Parameters
    ----------
    path : str or os.PathLike
        A card folder, or its ``card.toml`` (the file must have that name).
    allow_outside : bool, default False
        A card reads only files inside its own folder: ``[data] file`` that leads
        elsewhere (``../x.csv``, an absolute path, a link out of the folder) is an
        error unless this is True.

    Returns
    -------
    Card

    Raises
    ------
    CardError
        A missing ``card.toml`` or scores file, invalid TOML, unknown or missing keys
        (the message lists the allowed ones), an unknown model name or model option,
        bad sampling, report or constraint values. The message names the card file
        and the key. The scores file's *content* is checked by :meth:`Card.load_data`.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from bayeval.cards import CardError, load_card
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "s.csv").write_text("s\\n0.9\\n0.4\\n")
    >>> _ = (folder / "card.toml").write_text('''
    ... title = "toy"
    ... description = "two scores"
    ... data = { file = "s.csv", score = "s" }
    ... model = { name = "score_mixture" }
    ... sampling = { draw = 100 }
    ... ''')
    >>> try:
    ...     load_card(folder)
    ... except CardError as exc:
    ...     print(str(exc).split(": ", 1)[1])
    [sampling]: unknown key(s) ['draw']; allowed keys are ['draws', 'tune', 'chains', 'random_seed', 'target_accept'].
    """
    p = Path(path)
    if p.is_file() and p.name != CARD_FILE:
        raise CardError(
            f"{p}: not a card file; give a card folder or its {CARD_FILE} (the file must have "
            "that name)."
        )
    card_file = p if p.name == CARD_FILE else p / CARD_FILE
    folder = card_file.parent
    if not card_file.is_file():
        hint = (
            f"the folder {str(folder)!r} does not exist"
            if not folder.exists()
            else f"{folder} has no {CARD_FILE}"
        )
        raise CardError(
            f"{card_file}: no such card file ({hint}). A card is a folder with a {CARD_FILE}."
        )
    try:
        with open(card_file, "rb") as fh:
            doc = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise CardError(f"{card_file}: not valid TOML ({exc}).") from exc

    def err(key: str, message: str) -> CardError:
        return CardError(f"{card_file}: {key}: {message}")

    _check_keys(doc, _TOP_KEYS, "(top level)", err)
    for key in ("title", "description", "data", "model"):
        if key not in doc:
            raise err(key, f"missing; a card needs {['title', 'description', 'data', 'model']}.")
    title = _string(doc["title"], "title", err)
    description = _string(doc["description"], "description", err)

    data = _table(doc["data"], "[data]", err)
    _check_keys(data, _DATA_KEYS, "[data]", err)
    for key in ("file", "score"):
        if key not in data:
            raise err(f"[data] {key}", "missing; [data] needs at least `file` and `score`.")
    columns: dict[str, Any] = {}
    label_strategy = _label_strategy(data, err)
    for key, value in data.items():
        if key in ("file", "label_strategy"):
            continue
        if key == "features":
            if isinstance(value, str):
                value = [value]
            if (
                not isinstance(value, list)
                or not value
                or not all(isinstance(v, str) and v for v in value)
            ):
                raise err("[data] features", f"expected a list of column names, got {value!r}.")
            columns[key] = list(value)
        else:
            columns[key] = _string(value, f"[data] {key}", err)
    file_name = _string(data["file"], "[data] file", err)
    data_file = (folder / file_name).resolve()
    inside = data_file.is_relative_to(folder.resolve())
    if not inside and not allow_outside:
        raise err(
            "[data] file",
            f"{file_name!r} is outside the card folder ({data_file}). A card reads only the "
            "files in its own folder: copy the file there, or, if you trust this card, allow "
            "it explicitly (`bayeval report --allow-outside`, or load_card(..., allow_outside=True)).",
        )
    if not data_file.is_file():
        raise err("[data] file", f"{file_name!r} not found (looked for {data_file}).")
    if _file_kind(data_file) is None:
        raise err("[data] file", f"{file_name!r}: expected a .csv or .parquet file.")

    model = dict(_table(doc["model"], "[model]", err))
    if "name" not in model:
        raise err("[model] name", f"missing; choose one of {sorted(MODELS)}.")
    model_name = model.pop("name")
    if model_name not in MODELS:
        raise err("[model] name", f"unknown model {model_name!r}; choose one of {sorted(MODELS)}.")
    for need in _MODEL_NEEDS.get(model_name, ()):
        if need not in columns:
            raise err(
                f"[data] {need}", f"model {model_name!r} needs this column; name it in [data]."
            )
    cls = _model_class(model_name, card_file, required=False)
    if cls is not None:
        _construct(cls, model_name, model, card_file)  # unknown options and bad values fail now

    sampling_in = dict(_table(doc.get("sampling", {}), "[sampling]", err))
    _check_keys(sampling_in, _SAMPLING_KEYS, "[sampling]", err)
    sampling = _check_sampling({**_SAMPLING_DEFAULTS, **sampling_in}, str(card_file))

    report_in = _table(doc.get("report", {}), "[report]", err)
    _check_keys(report_in, _REPORT_KEYS, "[report]", err)
    report = {**_REPORT_DEFAULTS, **report_in}
    report["hdi_prob"] = _fraction(report["hdi_prob"], "[report] hdi_prob", err, open_interval=True)
    if not isinstance(report["metrics"], list) or not report["metrics"]:
        raise err(
            "[report] metrics", f"expected a non-empty list of metrics, got {report['metrics']!r}."
        )
    _parse_metrics(report["metrics"], card_file, prediction="prediction" in columns)

    constraints = None
    if "constraints" in doc:
        constraints = dict(_table(doc["constraints"], "[constraints]", err))
        _check_keys(constraints, _CONSTRAINT_KEYS, "[constraints]", err)
        if not constraints:
            raise err("[constraints]", f"empty; give {list(_CONSTRAINT_KEYS)} or remove the table.")
        for key, value in constraints.items():
            if key == "min_flagged":
                if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                    raise err("[constraints] min_flagged", f"expected a whole number >= 0, got {value!r}.")
                continue
            # recalibrate requires prob strictly inside (0, 1): refuse it here, naming the card's line
            constraints[key] = _fraction(value, f"[constraints] {key}", err, open_interval=key == "prob")

    vet = _check_vet(doc.get("vet", {}), report["metrics"], card_file, err)

    return Card(
        path=folder.resolve(),
        title=title,
        description=description,
        data_file=data_file,
        columns=columns,
        model_name=model_name,
        model_options=model,
        sampling=sampling,
        report_options=report,
        constraints=constraints,
        vet=vet,
        label_strategy=label_strategy,
    )


def _label_strategy(data: dict, err) -> str | None:
    """``[data] label_strategy``, checked: one of :data:`LABEL_STRATEGIES`, and only with a
    ``label`` column (the labels it speaks of)."""
    if "label_strategy" not in data:
        return None
    value = data["label_strategy"]
    if value not in LABEL_STRATEGIES:
        raise err("[data] label_strategy", (
            f"expected {' or '.join(repr(v) for v in LABEL_STRATEGIES)} (every vetted label of the scores file "
            f"drawn at random from its items), got {value!r}. Leave the key out when the vetted items were "
            "chosen otherwise (by score, by hand) or it is not known: the report then reads the vetted-only "
            "numbers as estimates of the pool's only if the labels were drawn at random."))
    if "label" not in data:
        raise err("[data] label_strategy", (
            f"says how the vetted labels were chosen ({value!r}), but [data] names no `label` column; name "
            "it (label = \"COLUMN\") or remove label_strategy."))
    return value


def _check_vet(table, metrics, card_file, err) -> dict:
    """The ``[vet]`` table, checked, with its defaults."""
    vet = dict(_table(table, "[vet]", err))
    _check_keys(vet, _VET_KEYS, "[vet]", err)
    for key in ("image", "text", "store"):
        if key in vet:
            _string(vet[key], f"[vet] {key}", err)
    for key in ("batch_size", "budget"):
        if key in vet:
            _integer(vet[key], f"[vet] {key}", err, 1)
    if "metric" in vet:
        labels = list(_parse_metrics(metrics, card_file))
        if vet["metric"] not in labels:
            raise err("[vet] metric", f"{vet['metric']!r} is not a [report] metric; choose one of {labels}.")
    return {**_VET_DEFAULTS, **vet}


def list_cards(root="models") -> list[Card]:
    """Every card under ``root``: its sub-folders that hold a ``card.toml``, by name.

    A broken card raises (see :func:`load_card`) rather than being skipped.

    Parameters
    ----------
    root : str or os.PathLike, default "models"

    Returns
    -------
    list of Card

    Examples
    --------
    >>> import tempfile
    >>> from bayeval.cards import list_cards
    >>> list_cards(tempfile.mkdtemp())
    []
    """
    base = Path(root)
    if not base.is_dir():
        raise CardError(
            f"{base}: not a folder; list_cards(root) needs the folder that holds the cards."
        )
    return [load_card(sub) for sub in sorted(base.iterdir()) if (sub / CARD_FILE).is_file()]


# -------------------------------------------------------- joining cards


@dataclass(frozen=True)
class JoinedCards:
    """Several cards that scored the same items, joined on item id (:func:`join_cards`).

    Attributes
    ----------
    cards : tuple of Card
        The cards, in the order given.
    names : tuple of str
        Each card's name in the comparison: its folder's name.
    scores : dict of str to numpy.ndarray
        Each card's scores, aligned on the first card's item order.
    data : EvalData
        The first card's items (ids, scores, categories) with the vetted labels of all
        the cards together: what :func:`bayeval.compare` takes as ``labels``.
    truth : numpy.ndarray of int8, or None
        The known true labels (the cards' ``truth`` columns, which must agree), or None.

    Examples
    --------
    See :func:`join_cards`.
    """

    cards: tuple
    names: tuple
    scores: dict
    data: EvalData
    truth: np.ndarray | None = None


def read_store_labels(path, item_ids=None):
    """The labels in the label store ``path``, one per item by the store's conflict rule (a
    ``pandas.Series`` indexed by item id), or None when the file does not exist.

    ``item_ids``: the items of the data (default: the items the store has registered, if any).
    A stored id written like one of them (``'261'`` for the item ``261``) is that item, its
    labels settled with those of the item's own id by the conflict rule; other ids are listed
    as stored."""
    path = Path(path)
    if not path.is_file():
        return None
    from .active._store_items import labels_for_items
    from .active.store import LabelStore

    with LabelStore(path) as st:
        ids = st.known_items() if item_ids is None else list(item_ids)
        return st.resolved() if ids is None else labels_for_items(st, ids)[0]


def with_store_labels(data: EvalData, path, source: str, *, repair: str | None = None) -> EvalData:
    """``data`` with the labels of the label store ``path`` (where it exists): an item the store
    labels gets the store's label, one per item by the store's conflict rule, also where the
    store holds the item's labels under both kinds of its id (``'261'`` and ``261``). A
    ValueError, and nothing changed, when the store labels ids that ``data`` (read from
    ``source``) does not have: no typed label is left out silently; ``repair``, the
    ``bayeval repair-store`` command that sets those labels aside, is named in it."""
    path = Path(path)
    if not path.is_file():
        return data
    from .active._store_items import labels_for_items
    from .active.store import LabelStore

    with LabelStore(path) as st:
        # one item's labels stored under both kinds of its id ('261' typed as text, 261 as the
        # data's int): resolved together, by the store's conflict rule
        res, strays = labels_for_items(st, data.item_ids.tolist())
    if not len(res):
        return data
    if strays:
        more = f" and {len(strays) - 5} more" if len(strays) > 5 else ""
        raise ValueError(
            f"{path} holds labels of {len(strays)} item(s) that are not in {source} "
            f"({', '.join(repr(i) for i in strays[:5])}{more}); nothing was fitted, so that no typed label is "
            + (f"silently left out. If those ids are typos, set their labels aside in one step, keeping every "
               f"label (they go to a CSV beside the store, with a backup of the store): `{repair}`; then type "
               "them again under the right ids (`bayeval label` or the vetting page). If a scores file is "
               "wrong, fix it instead." if repair else
               f"silently left out. Write the store's labels out with `bayeval export-labels {path} labels.csv`, "
               "fix those ids (or the scores file), and import the file into a new store with `bayeval label`.")
        )
    return data.with_labels(res.index.tolist(), res.to_numpy(), overwrite=True)


def comparison_store_file(joined: JoinedCards) -> Path:
    """Where ``bayeval vet CARD_A CARD_B`` keeps the comparison's labels by default, whichever
    order the two cards are given in: ``vet-compare-Y.sqlite`` in X's folder, X and Y the two
    cards' folder names in sorted order (:func:`comparison_store_files` also finds a store
    named after the order given, as earlier versions named it)."""
    first, second = sorted(range(2), key=lambda j: joined.names[j])
    return joined.cards[first].path / f"vet-compare-{joined.names[second]}.sqlite"


def comparison_repair_command(joined: JoinedCards, store) -> str:
    """The ``bayeval repair-store`` command that sets aside the labels of the comparison's label
    store ``store`` whose ids the cards do not score. The cards score the same items, so the
    first card's scores file (with its score and id columns) lists them."""
    return joined.cards[0]._repair_command(store)


def comparison_stores_source(joined: JoinedCards) -> str:
    """The cards' scores files, for a message on the comparison's label store."""
    files = " and ".join(str(c.data_file) for c in joined.cards)
    return f"the scores files of the cards ({files})"


def comparison_store_files(joined: JoinedCards) -> list[Path]:
    """The label stores of the comparison of two joined cards that exist: the one named by
    :func:`comparison_store_file`, and the one named after the other order of the cards
    (``vet-compare-B.sqlite`` in A's folder for ``bayeval vet A B``: the name before it
    stopped depending on the order), in that order."""
    names = [comparison_store_file(joined)]
    for a, b in ((0, 1), (1, 0)):
        path = joined.cards[a].path / f"vet-compare-{joined.names[b]}.sqlite"
        if path not in names:
            names.append(path)
    return [p for p in names if p.is_file()]


def _join_error(cards, message: str) -> CardError:
    files = ", ".join(str(c.card_file) for c in cards)
    return CardError(f"{files}: {message}")


def _aligned(ids0: list, ids: list, name: str, name0: str, cards) -> np.ndarray:
    """Positions in ``ids`` of the items of ``ids0``; a CardError when the item sets differ."""
    pos = {v: j for j, v in enumerate(ids)}
    only0 = [v for v in ids0 if v not in pos]
    first = set(ids0)
    only = [v for v in ids if v not in first]
    if only0 or only:
        parts = []
        if only0:
            parts.append(f"{len(only0)} id(s) only in {name0!r} (e.g. {only0[:3]!r})")
        if only:
            parts.append(f"{len(only)} id(s) only in {name!r} (e.g. {only[:3]!r})")
        raise _join_error(cards, (
            f"the cards {name0!r} ({len(ids0)} items) and {name!r} ({len(ids)} items) do not score the same "
            f"items: {'; '.join(parts)}. A comparison needs every classifier's score of every item: score the "
            "missing items, or drop the items that only some cards have from every card's scores file (ids "
            "are text: '007' and '7' differ)."))
    return np.array([pos[v] for v in ids0], dtype=np.int64)


def _agree(name: str, column: dict, ids0: list, cards) -> np.ndarray | None:
    """One label per item from the cards' columns (NaN = none); a CardError where they disagree."""
    if not column:
        return None
    stacked = np.vstack(list(column.values()))
    lo = np.where(np.isnan(stacked), np.inf, stacked).min(axis=0)
    hi = np.where(np.isnan(stacked), -np.inf, stacked).max(axis=0)
    bad = np.flatnonzero(np.isfinite(lo) & (lo != hi))
    if bad.size:
        shown = "; ".join(f"{ids0[j]!r}: " + ", ".join(f"{k} {'-' if np.isnan(v[j]) else int(v[j])}"
                                                       for k, v in column.items()) for j in bad[:3])
        raise _join_error(cards, (
            f"the cards' {name} columns disagree on {bad.size} item(s) ({shown}). A joined comparison "
            f"keeps one {name} per item: correct the wrong ones in the scores files"
            + (" (a label typed into a card's label store: with `bayeval label` into that store)" * (name == "label"))
            + f", or leave the {name} empty in all but one card."))
    return np.where(np.isfinite(lo), lo, np.nan)


def join_cards(cards, *, store: bool = True) -> JoinedCards:
    """Join two or more cards that scored the same items on their item ids, for a comparison.

    Every card needs an ``[data] id`` column, and every card must score exactly the same
    items (a different set is an error that says how many ids differ, with examples).
    Items are kept in the first card's order. The vetted labels of all cards are pooled:
    an item vetted in one card is vetted for all, and where two cards hold a label (or a
    ``truth`` value) for the same item they must agree. Each card's labels are read as its
    report reads them: with the labels vetted into its label store (``[vet] store``) over
    its scores file's. Categories come from the first card that has them (and must agree
    across cards that have them).

    Parameters
    ----------
    cards : sequence of Card or path-like
        Two or more cards (or their folders); their folder names name the classifiers.
    store : bool, default True
        Read each card's label store too (:meth:`Card.load_data` with ``store=True``), as
        ``bayeval report CARD`` and :meth:`Card.fit` do; False: the scores files' labels only.

    Returns
    -------
    JoinedCards

    Raises
    ------
    CardError
        Fewer than two cards, two cards of the same folder name, a card without an id
        column, item sets that differ, or labels that disagree.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from bayeval.cards import join_cards
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> for name, rows in {"old": "a,0.9,1\\nb,0.3,\\nc,0.2,\\n", "new": "c,0.1,0\\nb,0.8,\\na,0.7,\\n"}.items():
    ...     (root / name).mkdir()
    ...     _ = (root / name / "s.csv").write_text("id,s,y\\n" + rows)
    ...     _ = (root / name / "card.toml").write_text('title = "t"\\ndescription = "d"\\n'
    ...         'data = { file = "s.csv", score = "s", label = "y", id = "id" }\\nmodel = { name = "calibration" }\\n')
    >>> j = join_cards([root / "old", root / "new"])
    >>> j.names, j.scores["new"].tolist(), j.data.labels.tolist()
    (('old', 'new'), [0.7, 0.8, 0.1], [1.0, nan, 0.0])
    """
    if isinstance(cards, str | Path) or not hasattr(cards, "__iter__"):
        raise TypeError(f"`cards` must be a list of two or more cards (or their folders), got {cards!r:.80}.")
    cards = tuple(c if isinstance(c, Card) else load_card(c) for c in cards)
    if len(cards) < 2:
        raise CardError(f"a comparison joins two or more cards, got {len(cards)} "
                        f"({', '.join(str(c.path) for c in cards) or 'none'}). Give a second card that scored "
                        "the same items.")
    names = tuple(c.path.name for c in cards)
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise _join_error(cards, f"two cards have the folder name {dup[0]!r}; a comparison names each "
                                 "classifier by its card's folder, so the folders' names must differ.")
    no_id = [c for c in cards if "id" not in c.columns]
    if no_id:
        raise no_id[0]._error("[data] id", "a comparison joins cards on their item ids, and this card has no id "
                                          'column. Add one (e.g. id = "id") naming the column of unique item ids.')
    loaded = [c.load_data(store=store) for c in cards]
    ids0 = [_plain(v) for v in loaded[0][0].item_ids.tolist()]
    scores, labels, truths, cats = {}, {}, {}, {}
    for name, card, (data, truth) in zip(names, cards, loaded, strict=True):
        order = _aligned(ids0, [_plain(v) for v in data.item_ids.tolist()], name, names[0], cards)
        scores[name] = data.scores[order]
        if "label" in card.columns:
            labels[name] = data.labels[order]
        if truth is not None:
            truths[name] = truth[order].astype(np.float64)
        if data.has_categories:
            cats[name] = data.category_names[data.category_codes[order]].astype(str)
    label = _agree("label", labels, ids0, cards)
    truth = _agree("truth", truths, ids0, cards)
    categories = None
    if cats:
        first = next(iter(cats.values()))
        for name, c in cats.items():
            bad = np.flatnonzero(c != first)
            if bad.size:
                raise _join_error(cards, (
                    f"the cards' category columns disagree on {bad.size} item(s) (e.g. {ids0[bad[0]]!r}: "
                    f"{first[bad[0]]!r} in {next(iter(cats))!r}, {c[bad[0]]!r} in {name!r}). Correct them, or "
                    "drop the category column of all but one card."))
        categories = first
    data = EvalData(scores[names[0]], label, categories=categories, item_ids=loaded[0][0].item_ids)
    return JoinedCards(cards, names, scores, data, None if truth is None else truth.astype(np.int8))


# ----------------------------------------------------------------- helpers


def _check_keys(table: dict, allowed, where: str, err) -> None:
    """:func:`bayeval.core._validate.check_keys`, its message as the card's error at ``where``."""
    try:
        V.check_keys(table, allowed)
    except ValueError as exc:
        raise err(where, str(exc)) from None


def _table(value, where: str, err) -> dict:
    if not isinstance(value, dict):
        raise err(where, f"expected a table, got {type(value).__name__} {value!r}.")
    return value


def _string(value, key: str, err) -> str:
    if not isinstance(value, str) or not value.strip():
        raise err(key, f"expected a non-empty string, got {value!r}.")
    return value


def _integer(value, key: str, err, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise err(key, f"expected an integer >= {minimum}, got {value!r}.")
    if value < minimum:
        raise err(key, f"expected an integer >= {minimum}, got {value}.")
    return int(value)


def _fraction(value, key: str, err, *, open_interval: bool = False) -> float:
    rng = "(0, 1)" if open_interval else "[0, 1]"
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise err(key, f"expected a number in {rng}, got {value!r}.")
    ok = 0 < value < 1 if open_interval else 0 <= value <= 1
    if not ok:
        raise err(key, f"expected a number in {rng}, got {value}.")
    return float(value)


def _check_sampling(settings: dict, where: str) -> dict:
    def err(key, message):
        return CardError(f"{where}: {key}: {message}")

    out = {
        "draws": _integer(settings["draws"], "[sampling] draws", err, 1),
        "tune": _integer(settings["tune"], "[sampling] tune", err, 0),
        "chains": _integer(settings["chains"], "[sampling] chains", err, 1),
        "random_seed": _integer(settings["random_seed"], "[sampling] random_seed", err, 0),
    }
    try:
        V.check_job_size(out["chains"], out["draws"], bytes_per_draw=V.FIT_BYTES_PER_DRAW,
                         what="[sampling] draws", draws_per_second=2000,
                         how_to_raise="`bayeval report --max-memory-gb`")
    except ValueError as exc:
        raise CardError(f"{where}: {exc}") from exc
    if "target_accept" in settings:
        out["target_accept"] = _fraction(
            settings["target_accept"], "[sampling] target_accept", err, open_interval=True
        )
    return out


def _parse_metrics(entries, card_file, *, prediction: bool | None = None) -> dict:
    """``{label: name or (name, options)}`` of the ``[report] metrics`` entries, each checked;
    ``prediction``: whether the card has a ``[data] prediction`` column (None: not checked),
    which a metric of hard decisions without a ``threshold`` needs."""
    def err(key, message):
        return CardError(f"{card_file}: {key}: {message}")

    out: dict[str, Any] = {}
    for j, entry in enumerate(entries):
        key = f"[report] metrics[{j}]"
        if isinstance(entry, str):
            name, options, label = entry, {}, entry
        elif isinstance(entry, dict):
            options = dict(entry)
            if "name" not in options:
                raise err(
                    key,
                    f'an inline table needs `name` (e.g. {{ name = "precision_at_k", k = 50 }}), got {entry!r}.',
                )
            name = options.pop("name")
            label = options.pop("label", None)
            if not isinstance(name, str):
                raise err(key, f"`name` must be a string, got {name!r}.")
            if label is None:
                label = name + (
                    "[" + ", ".join(f"{k}={v}" for k, v in options.items()) + "]" if options else ""
                )
            elif not isinstance(label, str) or not label:
                raise err(key, f"`label` must be a non-empty string, got {label!r}.")
        else:
            raise err(key, f"expected a metric name or an inline table, got {entry!r}.")
        if name not in METRICS:
            raise err(key, f"unknown metric {name!r}; known metrics are {sorted(METRICS)}.")
        _check_metric_options(name, options, lambda message, key=key: err(key, message))
        if prediction is False and METRICS[name].needs == "predictions" and "threshold" not in options:
            raise err(key, f"metric {name!r} counts the classifier's hard 0/1 decisions, and this entry gives "
                           "no `threshold` while the card has no [data] prediction column, so it could not be "
                           f'computed. Add a score cut-off to the entry (e.g. {{ name = "{name}", threshold = '
                           '0.5 }: an item is flagged when its score is at or above it), or name the column of '
                           'the 0/1 decisions in [data] (prediction = "COLUMN").')
        if label in out:
            raise err(key, f"the label {label!r} is used twice; give one of the entries a `label`.")
        out[label] = (name, options) if options else name
    return out


def _check_metric_options(name: str, options: dict, err) -> None:
    """A metric's options checked when the card is read (unknown names, bad values, a missing
    ``k``), not after the fit: the metric prepares itself on a few dummy scores."""
    import inspect

    spec = METRICS[name]
    # `threshold` and `category` are read by the metric pass, not by the metric itself
    options = {k: v for k, v in options.items() if k not in ("threshold", "category")}
    try:
        spec.check_options(options)  # unknown names first: a typo of `k` is not a missing `k`
    except (TypeError, ValueError) as exc:
        raise err(str(exc)) from exc
    needed = [p.name for p in inspect.signature(spec.prepare).parameters.values()
              if p.kind is p.KEYWORD_ONLY and p.default is p.empty and p.name not in options]
    if needed:
        example = ", ".join(f"{o} = 50" if o == "k" else f"{o} = ..." for o in needed)
        raise err(f"metric {name!r} needs {', '.join(f'`{o}`' for o in needed)}: write it as an inline table, "
                  f'e.g. {{ name = "{name}", {example} }}.')
    try:
        spec.prepare(np.linspace(0.0, 1.0, 16), **options)
    except (TypeError, ValueError) as exc:
        message = str(exc)
        raise err(message if message.startswith("Metric ") else f"metric {name!r}: {message}") from exc


def _model_class(name: str, card_file, *, required: bool = True):
    module_name, class_name = MODELS[name]
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        if not required:
            return None
        raise CardError(
            f"{card_file}: [model] name: model {name!r} needs {module_name}, which cannot be imported ({exc})."
        ) from exc
    return getattr(module, class_name)


def _construct(cls, name: str, options: dict, card_file):
    params = inspect.signature(cls).parameters
    if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        allowed = [
            k for k, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        ]
        unknown = [k for k in options if k not in allowed]
        if unknown:
            raise CardError(
                f"{card_file}: [model]: unknown option(s) {unknown} for model {name!r}; "
                f"allowed keys are {['name', *allowed]}."
            )
    try:
        return cls(**options)
    except (TypeError, ValueError) as exc:
        raise CardError(f"{card_file}: [model]: invalid options for model {name!r}: {exc}") from exc


def _file_kind(path: Path) -> str | None:
    """What a card may name: a .csv (also compressed, e.g. .csv.gz) or a .parquet file."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in (".parquet", ".pq"):
        return "parquet"
    if ".csv" in suffixes[-2:]:
        return "csv"
    return None


def _read_table(card: Card, text=()) -> Table:
    """The scores file (:func:`bayeval._tables.read_table`), its binary columns kept as typed."""
    path = card.data_file
    if not path.is_file():
        raise card._error("[data] file", f"{path} not found.")
    binary = sorted({card.columns[r] for r in _BINARY_COLUMNS if r in card.columns} - set(text))
    ids = [card.columns["id"]] if "id" in card.columns else []  # "007" and "7" are different items
    ids += [card.columns["category"]] if "category" in card.columns else []  # a category "NA" is a category
    try:
        return read_table(path, text_columns=sorted({*ids, *text}), raw_columns=binary)
    except TableError as exc:
        raise card._error("[data] file", str(exc)) from exc


def _plain(value):
    """A numpy scalar as the Python value it holds (for readable messages)."""
    return value.item() if isinstance(value, np.generic) else value


def _binary_column(card: Card, table: Table, role: str, name: str, *, allow_empty: bool) -> np.ndarray:
    """1.0 / 0.0 (/ NaN for empty cells when allowed); anything else lists its rows.

    The same parser as every other entry point (:func:`bayeval.core._validate.label_cell`).
    """
    values = table.cells(name)
    out, bad = V.parse_label_cells(values, allow_empty=allow_empty)
    if bad:
        message = V.label_cells_message(
            f"column {name!r} of {card.data_file.name}",
            values,
            bad,
            allow_empty=allow_empty,
            lines=table.lines,
        )
        raise card._error(f"[data] {role}", message)
    return out
