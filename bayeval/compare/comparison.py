"""Which classifier is better, and with what probability: :func:`compare` and :class:`Comparison`.

Several classifiers scored the same items. :func:`compare` fits one model of the items'
true labels given *all* the classifiers' scores (:class:`bayeval.models.joint.JointCalibration`,
stacked like :func:`bayeval.fit`'s candidates) and computes every classifier's metric on
the same label draws. The gap between two classifiers is then a posterior over paired
differences: the label an item gets in a draw is the one both classifiers are scored
against, so what the classifiers share cancels and the gap is as sure as the labels
make it. Fitting each classifier separately draws the shared items' labels twice,
independently, and the difference of those metrics means nothing.

The method, its validation and a worked example: ``docs/compare.md``.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import itertools
import warnings

import numpy as np
import pandas as pd
import xarray as xr

from ..core import _validate as V
from ..core._defaults import HDI_PROB, hdi_columns
from ..core._diagnostics import FEW_LABELS, is_said, said_before, user_stacklevel
from ..core.data import EvalData
from ..core.evaluate import MetricEvaluator, check_metric_options
from ..core.summary import hdi, threshold_said, warn_threshold
from ..models.joint import (
    JOINT_CURVES,
    JointCalibration,
    joint_caveats,
    joint_data,
    joint_few_labels,
    reversed_classifiers,
)
from ..models.stacking import fit as stack_fit

__all__ = ["compare", "Comparison", "ComparisonModel", "ColumnTransforms", "MODELS", "TRANSFORMS"]

#: what ``compare(model=...)`` takes besides a model object
MODELS = ("default", *JOINT_CURVES)
#: from this many classifiers on, the monotone joint curve shares its segment slopes
#: (``JointCalibration(slopes="shared")``): one set per classifier makes 4 parameters
#: each, and at 5 classifiers (26 parameters) importance sampling failed in 7 of 12 fits
#: (3 of 12 at 3 classifiers, none at 2), each failure a NUTS run many times slower
#: (``docs/compare.md``)
SHARED_SLOPES_FROM = 3
#: where the joint candidates' signed weights' prior is centred
#: (``JointCalibration(weight_centre=...)``): on equal weights per standardized feature.
#: Chosen by a rule fixed before its run: on 600 random simulated pairs it keeps every bin
#: of P(better)'s reliability within 0.05 at the coverage and width of "equal" (which it
#: replaced), and on 110 real pairs it was better in every bin (``docs/compare.md``)
WEIGHT_CENTRE = "standardized"
#: the scale of the joint candidates' signed weights' deviations from that centre
#: (``JointCalibration(weight_sd=...)``; the class's own default is 1). Chosen by a rule
#: fixed before its run (the third of three; ``benchmarks/results/compare_sd_prereg.md``):
#: on fresh label sets of 120 real pairs of tabular data and of 110 real pairs, and on 600
#: fresh random simulated pairs, its stated P(better) was within 0.05 in every bin or
#: better calibrated than with 1 (largest bin misses 0.101 / 0.058 / 0.050 against
#: 0.188 / 0.171 / 0.028) at about the same coverage, with 0.6-0.9x the width. It holds
#: two classifiers near the centre's weights until the labels move them, so a large true
#: gap comes out a little small (``docs/compare.md``)
WEIGHT_SD = 0.25
#: the same scale from three classifiers on: 1, the class's default. The rules that chose
#: ``WEIGHT_SD`` compared pairs only, and on five simulated classifiers of very different
#: quality the scale 0.25 pulled the large gaps in (coverage 0.77 / 0.78 at 30 / 100 labels
#: against 0.98 / 0.93; ``benchmarks/results/compare_sd_five.md``)
WEIGHT_SD_MANY = 1.0


def _frame_columns(frame: pd.DataFrame) -> dict:
    """A DataFrame's columns as ``{name: scores}``, refusing a repeated name and a column of text."""
    names = [str(c) for c in frame.columns]
    twice = list(dict.fromkeys(n for n in names if names.count(n) > 1))
    if twice:
        raise ValueError(
            f"`scores` (a DataFrame) has {len(names)} columns but the name(s) {twice} occur more than once: each "
            "column is one classifier, named by its column. Rename the columns so that each name is unique "
            "(e.g. df.columns = ['prod', 'new'])."
        )
    for c in frame.columns:
        col = frame[c]
        if not (pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col)):
            shown = col.dropna().iloc[0] if col.notna().any() else None
            raise ValueError(
                f"`scores` (a DataFrame): column {str(c)!r} holds {type(shown).__name__} values (e.g. {shown!r}), "
                "not scores; every column is read as one classifier's scores. If it names the items, make it "
                f"the index (df.set_index({str(c)!r})): pandas inputs are paired by their index, and "
                f"Comparison.select returns those ids. Otherwise drop it (df.drop(columns={str(c)!r}))."
            )
    return {n: frame[c].to_numpy(dtype=np.float64, na_value=np.nan) for n, c in zip(names, frame.columns,
                                                                                   strict=True)}


def _score_columns(scores) -> dict:
    if isinstance(scores, pd.DataFrame):
        scores = _frame_columns(scores)
    if not isinstance(scores, dict):
        raise TypeError(
            f"`scores` must be a dict {{name: scores}} (or a DataFrame with one column per classifier), got "
            f"{type(scores).__name__}. E.g. bayeval.compare({{'prod': s1, 'new': s2}}, labels)."
        )
    if len(scores) < 2:
        raise ValueError(
            f"A comparison needs at least two classifiers, got {len(scores)} ({list(scores)}). For one "
            "classifier use bayeval.fit(bayeval.EvalData(scores, labels))."
        )
    names = [str(k) for k in scores]
    if len(set(names)) != len(names):
        raise ValueError(f"The classifiers' names must differ as text; got {list(scores)}.")
    out = {}
    for name, s in zip(names, scores.values(), strict=True):
        try:
            if isinstance(s, str | bytes):
                raise ValueError(f"could not read the text {s!r} as scores")
            arr = np.asarray(s, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"The scores of {name!r} must be numbers, one per item ({exc}). Give each "
                             "classifier's scores as an array or Series of numbers.") from exc
        if arr.ndim != 1:
            raise ValueError(
                f"The scores of {name!r} have the shape {arr.shape}: one 1-D array of scores per classifier is "
                "expected (one number per item). For a classifier that gives several columns, pass each as a "
                f"classifier of its own ({{'{name}_0': s[:, 0], '{name}_1': s[:, 1]}}); a column (n, 1): pass "
                "s.ravel()."
            )
        if np.isnan(arr).any():
            bad = np.flatnonzero(np.isnan(arr))
            raise ValueError(
                f"The scores of {name!r} hold NaN at {bad.size} item(s) (first at position {bad[0]}): every "
                "classifier must score every item. Drop those items from all classifiers and the labels, or "
                "give the missing scores."
            )
        out[name] = s
    return out


def _aligned(cols: dict, labels, scores) -> tuple[dict, object]:
    """The classifiers' scores and the labels with pandas inputs paired by their index
    (:func:`bayeval.core._validate.align_by_index`: the same ids in another order are put
    in the first one's order; other or repeated ids, or an order that cannot be told, are
    an error), in the order of the first classifier given.

    :func:`~bayeval.models.joint.joint_data` pairs them as well, but it sees the classifiers
    sorted by name (the fit's order): paired here first, the items keep the order of the
    user's first classifier whatever the names.
    """
    frame = isinstance(scores, pd.DataFrame)
    inputs = [("scores", scores)] if frame else [(f"scores[{k!r}]", v) for k, v in cols.items()]
    given = V.align_by_index([*inputs, ("labels", labels.labels if isinstance(labels, EvalData) else labels)])
    cols = _score_columns(given[0]) if frame else dict(zip(cols, given[:-1], strict=True))
    return cols, labels if isinstance(labels, EvalData) else given[-1]


def _index_ids(scores, cols: dict, labels):
    """The item ids the pandas inputs name (after :func:`_aligned`): the index of the first
    one (a DataFrame's, a classifier's Series, else the labels Series), or None where no
    input is a pandas object (the items are then named by their positions)."""
    frame = isinstance(scores, pd.DataFrame)
    named = [("scores", scores)] if frame else [(f"scores[{k!r}]", v) for k, v in cols.items()]
    for name, v in [*named, ("labels", labels)]:
        if isinstance(v, pd.Series | pd.DataFrame):
            if v.index.has_duplicates:
                dup = v.index[v.index.duplicated()][0]
                dup = dup.item() if isinstance(dup, np.generic) else dup
                raise ValueError(
                    f"`{name}`'s index repeats ids (e.g. {dup!r}): a pandas input's index names the items "
                    "(Comparison.select returns those ids), so each must occur once. Make the index unique, "
                    "or pass `.to_numpy()` for every input to name the items by their positions."
                )
            return v.index.to_numpy()
    return None


def _joint(scores: dict, labels, item_ids=None) -> EvalData:
    lengths = {name: np.size(s) for name, s in scores.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(
            f"Every classifier must score the same items, in the same order; the score arrays' lengths differ: "
            f"{lengths}. Align them on the item ids first."
        )
    n = next(iter(lengths.values()))
    if isinstance(labels, EvalData):
        if labels.n_items != n:
            raise ValueError(f"`labels` (an EvalData) has {labels.n_items} items, the scores have {n}; "
                             "they must describe the same items in the same order.")
        cats = None if not labels.has_categories else labels.category_names[labels.category_codes]
        return joint_data(scores, labels.labels, item_ids=labels.item_ids, categories=cats,
                          noisy_labels=labels.noisy_labels)
    if labels is not None and np.size(labels) != n:
        raise ValueError(f"`labels` has {np.size(labels)} entries, the scores have {n} items: give one label "
                         "(1, 0 or NaN for not vetted) per item, in the scores' order.")
    return joint_data(scores, labels, item_ids=item_ids)


def compare(scores, labels=None, *, model="default", transform="auto", draws: int = 1000, chains: int = 2,
            random_seed=None, progressbar: bool = False, warn: bool = True, client=None,
            max_memory_gb: float | None = None) -> Comparison:
    """Compare classifiers that scored the same items, on the same draws of the items' labels.

    Parameters
    ----------
    scores : dict of str to array_like, or pandas.DataFrame
        Each classifier's scores of the same items, in the same order (at least two
        classifiers; finite numbers, any scale; higher = more likely positive). Pandas
        inputs (each classifier's Series, a DataFrame's rows, a labels Series) are paired
        by their index, as in :class:`~bayeval.EvalData`: the same ids in another order
        are put in the order of the first classifier given; other or repeated ids, or an
        order that cannot be told (a plain array beside them), are an error. Plain arrays
        are paired by position. The index of the first pandas input names the items
        (``Comparison.data.item_ids``, what :meth:`Comparison.select` returns); with plain
        arrays the items are named by their positions 0 .. n-1.
    labels : array_like or EvalData, optional
        The vetted labels: 1, 0 or NaN (not vetted), one per item; or an
        :class:`~bayeval.EvalData` whose labels, item ids and categories are used (its
        own scores are not).
    model : {"default", "logistic", "monotone"} or a model
        ``"default"``: the joint logistic and monotone calibration models
        (:class:`~bayeval.models.joint.JointCalibration`), weighted by stacking on the
        vetted labels as :func:`bayeval.fit` weights its candidates, their classifiers'
        weights' prior centred on equal weights per standardized feature
        (``WEIGHT_CENTRE``) with deviations of scale 0.25 for two classifiers (``WEIGHT_SD``),
        1 for three or more (``WEIGHT_SD_MANY``). ``"logistic"`` or
        ``"monotone"``: that one model. From three classifiers on
        (``SHARED_SLOPES_FROM``) the monotone curve's segment slopes are shared by the
        classifiers (``slopes="shared"``), which keeps its dimension low enough for
        importance sampling. A model object: any model whose ``fit`` takes the
        joint data (:func:`~bayeval.models.joint.joint_data`).
    transform : {"auto", "logit", "standardize", "logodds"} or dict of str to str
        How the joint models read each classifier's scores (``JointCalibration``'s
        ``transform``): one for every classifier, or ``{name: transform}`` per classifier
        (a classifier not named: ``"auto"``). ``"auto"``: the logit of scores in [0, 1],
        other scores standardized; ``"logodds"``: scores that are log-odds, as they are
        (``bayeval compare`` on model cards passes each card's ``[model] transform``).
        Used by the models named by ``model``; a model object keeps its own.
    draws, chains : int
        Posterior draws per chain.
    random_seed : int, numpy Generator or SeedSequence, optional
        The same seed gives the same comparison, whatever the order of the classifiers
        in ``scores``: the model is fitted with them sorted by name, and the results
        (``names``, the ``model`` dim, the tables' ties) keep the order given.
    progressbar : bool
    warn : bool
        Warn, as :func:`bayeval.fit` does, when no label is vetted, when the diagnostics are bad,
        and once when fewer than 5 of the vetted labels are positive (or negative): then the gap
        rests largely on the prior (the sentences of :meth:`Comparison.caveats`, which says them
        with ``warn=False`` too).
    client : distributed.Client, optional
        With the default model, fit its two candidates as Dask tasks on this client (the
        same comparison as without). None: in this process.
    max_memory_gb : float, optional
        The limit of the up-front memory check (default 4 GB, or the environment variable
        ``BAYEVAL_MAX_MEMORY_GB``): the comparison is refused, before anything is sampled,
        when its estimated peak memory (that of :func:`bayeval.fit` on as many items and
        vetted labels, with the joint models as its candidates) is above it.

    Returns
    -------
    Comparison

    Examples
    --------
    >>> import numpy as np
    >>> import bayeval as be
    >>> rng = np.random.default_rng(0)
    >>> y = rng.random(1000) < 0.3
    >>> good = y * 2.0 + rng.normal(0, 1, 1000)
    >>> weak = y * 0.5 + rng.normal(0, 1, 1000)
    >>> labels = np.where(np.arange(1000) < 60, y, np.nan)
    >>> cmp = be.compare({"good": good, "weak": weak}, labels, random_seed=0, draws=300)
    >>> cmp.prob_better("good", "weak") > 0.95
    True
    >>> cmp.metric("average_precision").dims
    ('chain', 'draw', 'model')
    """
    cols = _score_columns(scores)
    cols, labels = _aligned(cols, labels, scores)
    ids = None if isinstance(labels, EvalData) else _index_ids(scores, cols, labels)
    # fitted with the columns in sorted order: the seed gives the same draws whatever the dict's order
    data = _joint({name: cols[name] for name in sorted(cols)}, labels, ids)
    post = _fit_joint(data, model, draws=draws, chains=chains, random_seed=random_seed, progressbar=progressbar,
                      warn=warn, client=client, transform=_transforms(transform, list(cols), cols),
                      max_memory_gb=max_memory_gb)
    cmp = Comparison(post, order=list(cols))
    few = cmp._few_labels() if warn and not is_said(FEW_LABELS) else []
    if few:  # as bayeval.fit warns it (core.data.few_labels_caveats), in the comparison's words
        warnings.warn("bayeval: " + " ".join(few), UserWarning, stacklevel=user_stacklevel())
    return cmp


def _refuse_hard(data: EvalData) -> None:
    """A ValueError naming each classifier whose scores are all exactly 0 or 1 (hard decisions,
    or one value throughout): compare's models read scores as a ranking, and these rank nothing."""
    for j, name in enumerate(map(str, data.feature_names)):
        s = data.features[:, j]
        if np.isin(s, (0.0, 1.0)).all():
            ones = int((s == 1.0).sum())
            what = "one value throughout" if ones in (0, s.size) else "hard decisions"
            raise ValueError(
                f"The scores of {name!r} are all exactly 0 or 1 ({ones} ones, {s.size - ones} zeros): {what}, "
                "not scores. compare ranks the items by each classifier's scores, and a 0/1 column "
                f"ranks nothing within its two groups. Pass {name}'s scores or probabilities (before any "
                "threshold). To compare decisions, estimate each classifier's precision and recall at its "
                "decisions from the vetted labels alone: bayeval.vetted_only(bayeval.EvalData(decisions, "
                "labels), 'precision', threshold=0.5) for each."
            )


#: what ``compare(transform=...)`` takes for a classifier
TRANSFORMS = ("auto", "logit", "standardize", "logodds")


def _transforms(transform, names: list, cols=None) -> dict:
    """``compare``'s ``transform`` as ``{name: transform}`` for every classifier, checked; with the score
    columns ``cols``, ``"logit"`` on a classifier's scores outside [0, 1] is refused in compare's words."""
    if not isinstance(transform, dict):
        out = dict.fromkeys(names, V.check_choice(transform, "transform", TRANSFORMS))
    else:
        unknown = [k for k in transform if str(k) not in names]
        if unknown:
            raise ValueError(f"`transform` names classifiers that are not compared: {unknown}; the classifiers "
                             f"are {names}.")
        given = {str(k): v for k, v in transform.items()}
        out = {n: V.check_choice(given.get(n, "auto"), f"transform[{n!r}]", TRANSFORMS) for n in names}
    for name, how in out.items() if cols is not None else ():
        s = np.asarray(cols[name], dtype=np.float64)
        s = s[np.isfinite(s)]
        if how == "logit" and s.size and (s.min() < 0 or s.max() > 1):
            raise ValueError(
                f"transform 'logit' reads classifier {name!r}'s scores as probabilities in [0, 1], but they run "
                f"from {s.min():.6g} to {s.max():.6g}. Give it transform={{{name!r}: 'standardize'}} (margins or "
                f"other scores) or {{{name!r}: 'logodds'}} (log-odds), or leave it 'auto', e.g. "
                f"bayeval.compare(scores, labels, transform={{{name!r}: 'standardize'}}).")
    return out


class ColumnTransforms(JointCalibration):
    """A :class:`~bayeval.models.joint.JointCalibration` whose classifiers' scores each have their own transform.

    What :func:`compare` fits where its ``transform`` gives the classifiers different
    transforms (a probability beside a log-odds, say). ``transforms``: ``{name: transform}``
    (``"auto"``, ``"logit"``, ``"standardize"`` or ``"logodds"``); a score column not named
    takes ``transform``. The other parameters are ``JointCalibration``'s.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.compare.comparison import ColumnTransforms
    >>> from bayeval.models.joint import joint_data
    >>> d = joint_data({"p": [0.2, 0.7, 0.9], "nb": [-40.0, 3.0, 80.0]})
    >>> _, infos = ColumnTransforms(transforms={"nb": "logodds"}).features(d)
    >>> [i["scale"] for i in infos]
    ['logit', 'logodds']
    """

    def __init__(self, curve: str = "logistic", *, transforms: dict | None = None, **params):
        super().__init__(curve, **params)
        self.transforms = {str(k): V.check_choice(v, f"transforms[{k!r}]", TRANSFORMS)
                           for k, v in (transforms or {}).items()}

    def __repr__(self) -> str:
        return f"ColumnTransforms{super().__repr__()[len('JointCalibration'):-1]}, transforms={self.transforms!r})"

    def get_params(self) -> dict:
        """JointCalibration's parameters and ``transforms`` (what ``ColumnTransforms(**params)`` rebuilds).

        Examples
        --------
        >>> from bayeval.compare.comparison import ColumnTransforms
        >>> ColumnTransforms("monotone", transforms={"nb": "logodds"}).get_params()["transforms"]
        {'nb': 'logodds'}
        """
        names = [n for n in inspect.signature(JointCalibration.__init__).parameters if n != "self"]
        return {**{n: getattr(self, n) for n in names}, "transforms": dict(self.transforms)}

    def features(self, data: EvalData) -> tuple[np.ndarray, list[dict]]:
        """As :meth:`JointCalibration.features <bayeval.models.joint.JointCalibration.features>`, each
        column with its own transform.

        Examples
        --------
        See :class:`ColumnTransforms`.
        """
        if data.features is None or data.feature_names is None:
            return super().features(data)  # its error: the data is not joint data
        cols = np.asarray(data.features, dtype=np.float64)
        parts = []
        for j, name in enumerate(map(str, data.feature_names)):
            one = JointCalibration(self.curve, transform=self.transforms.get(name, self.transform),
                                   saturated=self.saturated)
            parts.append(one.features(joint_data({name: cols[:, j]}, data.labels)))
        out = np.zeros((data.n_items, len(parts), max(f.shape[2] for f, _ in parts)))
        for j, (f, _) in enumerate(parts):
            out[:, j, : f.shape[2]] = f[:, 0]
        return out, [info[0] for _, info in parts]


def _joint_model(curve: str, transforms: dict, **params) -> JointCalibration:
    """The joint model of ``curve`` reading each classifier's scores by ``transforms`` (``{name: transform}``)."""
    kinds = set(transforms.values())
    if len(kinds) <= 1:
        return JointCalibration(curve, transform=next(iter(kinds), "auto"), **params)
    return ColumnTransforms(curve, transforms=transforms, **params)


def _fit_joint(data: EvalData, model, *, draws, chains, random_seed, progressbar, warn, client=None,
               transform=None, max_memory_gb=None):
    """The joint model's posterior of ``data`` (joint data): what :func:`compare` fits.
    ``transform``: ``{name: transform}`` (None: ``"auto"`` for every classifier). Its estimated
    peak memory is checked first, in compare's words (``max_memory_gb=``, ``draws=``)."""
    if isinstance(model, str):
        V.check_choice(model, "model", MODELS)
        _refuse_hard(data)
        slopes = "shared" if len(data.feature_names) >= SHARED_SLOPES_FROM else "each"
        sd = WEIGHT_SD if len(data.feature_names) <= 2 else WEIGHT_SD_MANY
        transforms = transform or dict.fromkeys(map(str, data.feature_names), "auto")
        cands = [_joint_model(c, transforms, slopes=slopes, weight_centre=WEIGHT_CENTRE, weight_sd=sd)
                 for c in (JOINT_CURVES if model == "default" else (model,))]
    elif callable(getattr(model, "fit", None)):
        cands = [model]
    else:
        raise TypeError(f"`model` must be one of {list(MODELS)} or a model with fit(data, ...), got {model!r}.")
    draws, chains = V.as_positive_int(draws, "draws"), V.as_positive_int(chains, "chains")
    # the estimate bayeval.fit makes for as many candidates (core._validate.fit_memory_gb)
    V.check_job_size(chains, draws, bytes_per_draw=V.FIT_BYTES_PER_DRAW * len(cands) * 4, what="bayeval.compare",
                     max_memory_gb=max_memory_gb, items=data.n_items, vetted=data.n_vetted, candidates=len(cands))
    if len(cands) > 1:
        # a handful of vetted labels of a class: said in the comparison's words (Comparison.caveats),
        # not in the stack's about one score's calibration curve
        with said_before(FEW_LABELS):
            return stack_fit(data, candidates=cands, draws=draws, chains=chains, random_seed=random_seed,
                             progressbar=progressbar, warn=warn, client=client, max_memory_gb=max_memory_gb)
    return cands[0].fit(data, draws=draws, chains=chains, random_seed=random_seed, progressbar=progressbar,
                        warn=warn)


def _cache_key(value, held: list):
    """A hashable key that tells apart every two metric requests that can differ.

    A callable is keyed on itself (the key holds it, so its id cannot go to another
    object while the entry lives), an array on its dtype, shape and bytes (its ``repr``
    abbreviates more than 1,000 values), containers on their items. What can be neither
    hashed nor read as an array is keyed on its id and appended to ``held``, which the
    caller keeps with the entry.
    """
    if value is None or isinstance(value, str | bytes | bool | int | float | complex):
        return type(value).__name__, value
    if isinstance(value, np.generic):
        return type(value).__name__, value.item()
    if isinstance(value, np.ndarray | pd.Series | pd.Index | xr.DataArray):
        arr = np.asarray(value)
        if arr.dtype != object:
            return "array", arr.dtype.str, arr.shape, arr.tobytes()
        return "object array", arr.shape, tuple(_cache_key(v, held) for v in arr.ravel())
    if isinstance(value, list | tuple):
        return type(value).__name__, tuple(_cache_key(v, held) for v in value)
    if isinstance(value, dict):
        items = sorted(((repr(k), _cache_key(k, held), _cache_key(v, held)) for k, v in value.items()),
                       key=lambda kv: kv[0])
        return "dict", tuple(kv[1:] for kv in items)
    try:
        hash(value)
    except TypeError:
        held.append(value)
        return "id", id(value)
    return "object", value


def _in_order(data: EvalData, names: list) -> EvalData:
    """Joint data ``data`` with its score columns in the order ``names`` (items unchanged)."""
    cur = [str(n) for n in data.feature_names]
    cats = None if not data.has_categories else data.category_names[data.category_codes]
    return joint_data({n: data.features[:, cur.index(n)] for n in names}, data.labels, item_ids=data.item_ids,
                      categories=cats, noisy_labels=data.noisy_labels)


#: the metrics and thresholds of the comparison's public call under way (None: no call): said
#: once when that call returns, not by each method it calls (``summary`` calls ``ranking`` and
#: ``difference_summary``, each of them ``metric``)
_THRESHOLDS_ASKED: contextvars.ContextVar[list | None] = contextvars.ContextVar("bayeval_comparison_thresholds",
                                                                               default=None)


def _says_thresholds(warn: bool = True):
    """A :class:`Comparison` method that warns once per call (:class:`bayeval.core.summary.ThresholdWarning`)
    where its ``threshold=`` flags no item or every item of a classifier's scores, naming them; with
    ``warn=False`` (``summary``, ``ranking``) it says so among its caveats instead, and does not warn."""
    def decorate(method):
        @functools.wraps(method)
        def wrapped(self, *args, **kwargs):
            if _THRESHOLDS_ASKED.get() is not None:  # called by another of its methods: said by that one
                return method(self, *args, **kwargs)
            asked: list = []
            token = _THRESHOLDS_ASKED.set(asked)
            try:
                out = method(self, *args, **kwargs)
            finally:
                _THRESHOLDS_ASKED.reset(token)
            said: list = []
            for name_thr in asked if warn else ():
                if name_thr not in said:  # once each (summary asks metric for every pair)
                    said.append(name_thr)
                    warn_threshold(self._scores_by_name(), *name_thr)
            return out
        return wrapped
    return decorate


def _one_value_hint(dims) -> str:
    """How to ask for one value of each extra dim of a metric (the fix an error message gives)."""
    out = []
    for d in dims:
        if d == "category":
            out.append("pass category='mean' (the mean over categories) or category='pooled' (every item as one "
                       "pool)")
        else:
            out.append(f"choose one value of {d} (e.g. {d}=10)" if d == "k" else f"choose one value of {d}")
    return "; ".join(out) + "."


class Comparison:
    """Several classifiers' metrics on the same label draws: the gaps, P(better), P(best).

    Made by :func:`compare`. ``posterior`` is the joint model's posterior (its label
    draws are shared by every classifier), ``names`` the classifiers. Every method that
    takes a ``metric`` takes what :meth:`bayeval.Posterior.metric` takes (a name, a
    function of :mod:`bayeval.core.metrics` or a callable, and its options such as
    ``k=``), and ``threshold=`` either one number or ``{name: number}``. Higher values of
    a metric are better. A threshold that flags no item or every item of a classifier's
    scores (a rule predicting every item alike) warns once per call
    (:class:`bayeval.core.summary.ThresholdWarning`), naming the classifier; :meth:`summary`
    and :meth:`ranking` say it in their ``attrs["caveats"]`` instead.

    Examples
    --------
    >>> import numpy as np
    >>> import bayeval as be
    >>> rng = np.random.default_rng(1)
    >>> y = rng.random(800) < 0.2
    >>> s = y * 1.5 + rng.normal(0, 1, 800)
    >>> labels = np.where(np.arange(800) < 50, y, np.nan)
    >>> cmp = be.compare({"a": s, "copy": s.copy()}, labels, random_seed=0, draws=200)
    >>> float(abs(cmp.difference("a", "copy")).max())
    0.0
    >>> cmp.prob_better("a", "copy")
    0.5
    """

    def __init__(self, posterior, *, order=None):
        data = posterior.data
        if data.features is None or data.feature_names is None:
            raise TypeError("A Comparison needs the posterior of a joint model (bayeval.compare makes one).")
        self.posterior = posterior
        fitted = [str(n) for n in data.feature_names]
        if order is not None and [str(n) for n in order] != fitted:
            if sorted(map(str, order)) != sorted(fitted):
                raise ValueError(f"`order` must name the posterior's classifiers {fitted} once each, got {order}.")
            data = _in_order(data, [str(n) for n in order])  # the fit's column order is not the user's
        self.data = data
        self.names = [str(n) for n in data.feature_names]
        cats = None if not data.has_categories else data.category_names[data.category_codes]
        self._data = {n: EvalData(data.features[:, j], data.labels, item_ids=data.item_ids, categories=cats)
                      for j, n in enumerate(self.names)}
        self._cache: dict = {}

    def _scores_by_name(self) -> dict:
        return {n: d.scores for n, d in self._data.items()}

    def _threshold_caveats(self, name: str, threshold) -> list[str]:
        """What :meth:`summary` and :meth:`ranking` say of a ``threshold`` that flags no item or every
        item of a classifier's scores (the other methods warn it): one sentence per such classifier."""
        return [] if threshold is None else threshold_said(self._scores_by_name(), name, self._thresholds(threshold))

    def __repr__(self) -> str:
        return (f"Comparison({', '.join(self.names)}: {self.data.n_items} items, {self.data.n_vetted} vetted, "
                f"{self.posterior.n_chains * self.posterior.n_draws} draws)")

    # ------------------------------------------------------------ the draws

    def _name(self, name) -> str:
        if str(name) not in self.names:
            raise ValueError(f"Unknown classifier {name!r}; this comparison has {self.names}.")
        return str(name)

    def _thresholds(self, threshold) -> dict:
        if isinstance(threshold, dict):
            missing = [n for n in self.names if n not in map(str, threshold)]
            if missing:
                raise ValueError(f"`threshold` as a dict needs a threshold for every classifier; missing {missing}.")
            return {n: threshold[n] if n in threshold else threshold[next(k for k in threshold if str(k) == n)]
                    for n in self.names}
        return {n: threshold for n in self.names}

    @_says_thresholds()
    def metric(self, metric="average_precision", *, threshold=None, category=None, **kwargs) -> xr.DataArray:
        """Every classifier's metric on the shared label draws: dims ``(chain, draw, model, ...)``.

        Computed in one pass over the label draws and kept (a second call is free). An
        option given as one value (``recall=0.5``) adds no dim, so every table and
        ``P(better)`` can use it; a list (``recall=[0.5, 0.8]``) adds one.

        Examples
        --------
        >>> import numpy as np
        >>> import bayeval as be
        >>> rng = np.random.default_rng(2)
        >>> y = rng.random(500) < 0.3
        >>> cmp = be.compare({"a": y + rng.normal(0, 1, 500), "b": y + rng.normal(0, 1, 500)},
        ...                  np.where(np.arange(500) < 40, y, np.nan), random_seed=0, draws=100)
        >>> cmp.metric("precision_at_k", k=[10, 50]).dims
        ('chain', 'draw', 'model', 'k')
        """
        held: list = []  # what the key names by id: kept with the entry, so that the id cannot be reused
        key = _cache_key((metric, threshold, category, kwargs), held)
        thr = self._thresholds(threshold)
        if key in self._cache:
            da = self._cache[key][0]
            _THRESHOLDS_ASKED.get().append((da.name, thr))  # warned once the call returns (_says_thresholds)
            return da
        evs = [MetricEvaluator(self._data[n], metric, category=category, threshold=thr[n], kwargs=kwargs)
               for n in self.names]
        evs[0].check_top_k()  # a top bigger than the items (or a category's)
        coords0 = evs[0].coords
        for n, ev in zip(self.names[1:], evs[1:], strict=True):
            if any(not np.array_equal(np.asarray(ev.coords[c]), np.asarray(coords0[c])) for c in coords0):
                raise ValueError(
                    f"The metric's coordinates differ between {self.names[0]!r} and {n!r} (a curve's default "
                    "thresholds come from each classifier's own scores); give them explicitly, e.g. thresholds=..."
                )
        post = self.posterior
        out = None
        for chain, draws, z in post.label_arrays():
            vals = [np.asarray(ev(z), dtype=np.float64) for ev in evs]
            if out is None:
                out = np.empty((post.n_chains, post.n_draws, len(evs)) + vals[0].shape[1:])
            for j, v in enumerate(vals):
                out[chain, draws, j] = v
        dims = ("chain", "draw", "model", *evs[0].dims)
        coords = {"chain": np.arange(post.n_chains), "draw": np.arange(post.n_draws), "model": self.names,
                  **coords0}
        da = xr.DataArray(out, dims=dims, coords=coords, name=evs[0].name)
        # one value of an option given as a scalar (recall=0.5) is no dim: the tables need one value per draw
        one = [d for d in evs[0].dims if d in kwargs and np.ndim(kwargs[d]) == 0 and da.sizes[d] == 1]
        da = da.isel(dict.fromkeys(one, 0)) if one else da
        self._cache[key] = (da, held)
        _THRESHOLDS_ASKED.get().append((da.name, thr))  # a threshold above every score: recall 0, silently
        return da

    @_says_thresholds()
    def difference(self, a, b, metric="average_precision", **kwargs) -> xr.DataArray:
        """Draws of the gap ``metric(a) - metric(b)``, paired: both on the same label draw.

        Examples
        --------
        >>> import numpy as np
        >>> import bayeval as be
        >>> rng = np.random.default_rng(3)
        >>> y = rng.random(500) < 0.3
        >>> cmp = be.compare({"a": 2 * y + rng.normal(0, 1, 500), "b": y + rng.normal(0, 1, 500)},
        ...                  np.where(np.arange(500) < 40, y, np.nan), random_seed=0, draws=100)
        >>> gap = cmp.difference("a", "b")
        >>> gap.dims, bool(gap.mean() > 0)
        (('chain', 'draw'), True)
        """
        a, b = self._name(a), self._name(b)
        m = self.metric(metric, **kwargs)
        gap = m.sel(model=a, drop=True) - m.sel(model=b, drop=True)
        gap.name = f"{m.name}: {a} - {b}"
        return gap

    @staticmethod
    def _scalar(da: xr.DataArray):
        return float(da) if da.ndim == 0 else da

    @_says_thresholds()
    def prob_better(self, a, b, metric="average_precision", **kwargs):
        """``P(metric(a) > metric(b))``; a tie (the same value in a draw) counts one half.

        A float, or a DataArray over the metric's own dims (e.g. ``k``). Over the draws where
        both metrics are defined (ROC AUC, say, is not in a draw of labels with no positive),
        so ``prob_better(a, b) + prob_better(b, a) == 1``; NaN when none is.
        """
        gap = self.difference(a, b, metric, **kwargs)
        return self._scalar(_share(gap, (gap > 0) + 0.5 * (gap == 0)))

    @_says_thresholds()
    def rope(self, a, b, metric="average_precision", *, width: float = 0.01, **kwargs):
        """Probability that the gap lies in the region of practical equivalence ``[-width, width]``.

        Examples
        --------
        >>> import numpy as np
        >>> import bayeval as be
        >>> rng = np.random.default_rng(4)
        >>> y = rng.random(400) < 0.3; s = y + rng.normal(0, 1, 400)
        >>> cmp = be.compare({"a": s, "b": s}, np.where(np.arange(400) < 40, y, np.nan), random_seed=0, draws=100)
        >>> cmp.rope("a", "b", width=0.01)
        1.0
        """
        width = V.as_real_in(width, "width", lo=0.0, hi=np.inf, lo_open=True, hi_open=True)
        gap = self.difference(a, b, metric, **kwargs)
        return self._scalar(_share(gap, abs(gap) <= width))

    @_says_thresholds()
    def prob_best(self, metric="average_precision", **kwargs) -> pd.Series:
        """Each classifier's probability of having the highest metric (ties shared equally), over
        the draws where every classifier's metric is defined (NaN when there is none)."""
        m = self.metric(metric, **kwargs)
        if m.ndim != 3:
            raise ValueError(f"prob_best needs one value per draw and classifier; {m.name!r} has the extra dims "
                             f"{list(m.dims[3:])}: {_one_value_hint(m.dims[3:])}")
        v = m.values.reshape(-1, len(self.names))
        v = v[np.isfinite(v).all(axis=1)]  # the draws where every classifier's metric is defined
        if not len(v):
            share = np.full(len(self.names), np.nan)
        else:
            top = v == v.max(axis=1, keepdims=True)
            share = (top / top.sum(axis=1, keepdims=True)).mean(axis=0)
        return pd.Series(share, index=pd.Index(self.names, name="model"), name="p_best")

    @_says_thresholds()
    def difference_summary(self, a, b, metric="average_precision", *, hdi_prob: float = HDI_PROB,
                           width: float | None = None, **kwargs) -> pd.Series:
        """The gap ``a - b``: mean, sd, HDI, ``p_better`` and (with ``width``) ``p_rope``.

        Over the draws where both metrics are defined; ``attrs["undefined"]``: the share of
        draws where one is not (then said in :meth:`summary`'s caveats).

        Examples
        --------
        >>> import numpy as np
        >>> import bayeval as be
        >>> rng = np.random.default_rng(5)
        >>> y = rng.random(500) < 0.3
        >>> cmp = be.compare({"a": 2 * y + rng.normal(0, 1, 500), "b": y + rng.normal(0, 1, 500)},
        ...                  np.where(np.arange(500) < 40, y, np.nan), random_seed=0, draws=100)
        >>> cmp.difference_summary("a", "b", width=0.01).index.tolist()
        ['mean', 'sd', 'hdi_5%', 'hdi_95%', 'p_better', 'p_rope']
        """
        gap = self.difference(a, b, metric, **kwargs)
        if gap.ndim != 2:
            raise ValueError(f"difference_summary needs one gap per draw; the metric has the extra dims "
                             f"{list(gap.dims[2:])}: {_one_value_hint(gap.dims[2:])}")
        hdi_prob = V.as_probability(hdi_prob, "hdi_prob", open_interval=True)
        g = gap.values.ravel()
        undefined = float(np.mean(~np.isfinite(g))) if g.size else 0.0
        g = g[np.isfinite(g)]  # the draws where both metrics are defined
        cols = hdi_columns(hdi_prob)
        if width is not None:
            width = V.as_real_in(width, "width", lo=0.0, hi=np.inf, lo_open=True, hi_open=True)
        if g.size:
            lo, hi = hdi(g, hdi_prob)
            out = {"mean": g.mean(), "sd": g.std(ddof=1) if g.size > 1 else np.nan, cols[0]: lo, cols[1]: hi,
                   "p_better": float((g > 0).mean() + 0.5 * (g == 0).mean())}
            if width is not None:
                out["p_rope"] = float((np.abs(g) <= width).mean())
        else:
            out = dict.fromkeys(["mean", "sd", *cols, "p_better"] + (["p_rope"] if width is not None else []),
                                np.nan)
        out = pd.Series(out, name=f"{a} - {b}")
        out.attrs["undefined"] = undefined
        return out

    # ------------------------------------------------------------- caveats

    def caveats(self) -> list[str]:
        """What the shared vetted labels and the classifiers' scores cannot tell the comparison, in sentences
        (:func:`bayeval.models.joint.joint_caveats`).

        Each classifier whose scores rank the vetted positives low (the other class's probability, or a
        distance: :func:`bayeval.models.joint.reversed_classifiers`, said first), no vetted label at all, a
        handful of vetted positives (or negatives; none of a class included), and
        each classifier whose probabilities are saturated at exactly 0 or 1 or squeezed into a narrow band (the
        cases and bounds of :meth:`bayeval.EvalData.caveats`). Each sentence names the classifier it is about
        where it is about one, and says what the
        case does to the gap and what to vet next. :meth:`summary` and :meth:`ranking`
        carry them in ``attrs["caveats"]``; ``bayeval compare`` prints them and the
        report shows them beside the comparison. Empty when nothing applies.

        Examples
        --------
        >>> import numpy as np
        >>> import bayeval as be
        >>> rng = np.random.default_rng(2)
        >>> y = rng.random(600) < 0.1
        >>> labels = np.full(600, np.nan)
        >>> labels[:30] = 0
        >>> labels[int(np.flatnonzero(y)[0])] = 1
        >>> cmp = be.compare({"a": 2 * y + rng.normal(0, 1, 600), "b": y + rng.normal(0, 1, 600)}, labels,
        ...                  random_seed=0, draws=100, warn=False)  # warn=True: compare warns it too
        >>> [c.split(":")[0] for c in cmp.caveats()]
        ['only 1 of the 30 vetted labels are positive']
        """
        return joint_caveats(self.data)

    def _few_labels(self) -> list[str]:
        """The sentences of :meth:`caveats` on a handful of vetted labels of a class: what
        :func:`compare` warns (:func:`bayeval.models.joint.joint_few_labels`)."""
        return joint_few_labels(self.data)

    # ------------------------------------------------------------- tables

    @_says_thresholds(warn=False)
    def ranking(self, metric="average_precision", *, hdi_prob: float = HDI_PROB, **kwargs) -> pd.DataFrame:
        """One row per classifier, best first by the posterior mean: the metric's mean, sd, HDI and ``p_best``.

        Where a posterior is skewed the order by mean and by ``p_best`` can differ (a near
        tie); :meth:`summary` then names as better, in each pair, the one more probably better.

        ``attrs["caveats"]``: what the labels and scores cannot tell the comparison (:meth:`caveats`).

        Examples
        --------
        >>> import numpy as np
        >>> import bayeval as be
        >>> rng = np.random.default_rng(6)
        >>> y = rng.random(500) < 0.3
        >>> cmp = be.compare({"a": 2 * y + rng.normal(0, 1, 500), "b": y + rng.normal(0, 1, 500)},
        ...                  np.where(np.arange(500) < 40, y, np.nan), random_seed=0, draws=100)
        >>> cmp.ranking().index.tolist()
        ['a', 'b']
        """
        hdi_prob = V.as_probability(hdi_prob, "hdi_prob", open_interval=True)
        m = self.metric(metric, **kwargs)
        best = self.prob_best(metric, **kwargs)
        v = m.values.reshape(-1, len(self.names))
        lo, hi = hdi_columns(hdi_prob)
        rows = []
        for j in range(v.shape[1]):  # each classifier over the draws where its metric is defined
            x = v[np.isfinite(v[:, j]), j]
            band = hdi(x, hdi_prob) if x.size else (np.nan, np.nan)
            rows.append({"mean": x.mean() if x.size else np.nan, "sd": x.std(ddof=1) if x.size > 1 else np.nan,
                         lo: band[0], hi: band[1]})
        df = pd.DataFrame(rows, index=pd.Index(self.names, name="model")).assign(p_best=best.to_numpy())
        df = df.sort_values("mean", ascending=False, kind="stable", na_position="last")
        df.attrs["undefined"] = undefined = float(np.mean(~np.isfinite(v).all(axis=1))) if v.size else 0.0
        df.attrs["caveats"] = (self.caveats() + ([_undefined_caveat(m.name, undefined)] if undefined else [])
                               + self._threshold_caveats(m.name, kwargs.get("threshold")))  # flags none or all
        return df

    @_says_thresholds(warn=False)
    def summary(self, metric="average_precision", *, hdi_prob: float = HDI_PROB, width: float | None = None,
                **kwargs) -> pd.DataFrame:
        """Every pair's gap, one row per pair, the more probably better classifier first.

        Columns: ``better``, ``worse``, the gap's ``mean``, ``sd`` and HDI, ``p_better``
        (that ``better`` is better: at least 0.5, so the table never names as better the
        one the posterior says is more probably worse) and, with ``width``, ``p_rope``.
        Pairs come in the order of :meth:`ranking` (by the posterior mean); a skewed
        posterior can put the one with the higher mean second in its pair.
        ``attrs["caveats"]``: what the labels and scores cannot tell the comparison
        (:meth:`caveats`).
        """
        order = list(self.ranking(metric, hdi_prob=hdi_prob, **kwargs).index)
        rows, undefined = [], 0.0
        for a, b in itertools.combinations(order, 2):
            s = self.difference_summary(a, b, metric, hdi_prob=hdi_prob, width=width, **kwargs)
            if s["p_better"] < 0.5:  # the other one is more probably better: it is named first
                a, b = b, a
                s = self.difference_summary(a, b, metric, hdi_prob=hdi_prob, width=width, **kwargs)
            rows.append({"better": a, "worse": b, **s.to_dict()})
            undefined = max(undefined, s.attrs.get("undefined", 0.0))
        out = pd.DataFrame(rows)
        out.attrs["undefined"] = undefined
        out.attrs["caveats"] = (self.caveats() + ([_undefined_caveat(str(metric), undefined)] if undefined else [])
                                + self._threshold_caveats(self.metric(metric, **kwargs).name, kwargs.get("threshold")))
        return out

    @_says_thresholds()
    def decided(self, a, b, metric="average_precision", *, level: float = 0.95, width: float | None = None,
                **kwargs) -> str | None:
        """The stopping rule: ``"a"`` or ``"b"`` (the name of the classifier that is better with
        probability above ``level``), ``"equivalent"`` (the gap lies in ``[-width, width]`` with
        probability above ``level``), or None (keep labelling).

        Examples
        --------
        >>> import numpy as np
        >>> import bayeval as be
        >>> rng = np.random.default_rng(7)
        >>> y = rng.random(500) < 0.3
        >>> cmp = be.compare({"a": 3 * y + rng.normal(0, 1, 500), "b": 0.5 * y + rng.normal(0, 1, 500)},
        ...                  np.where(np.arange(500) < 60, y, np.nan), random_seed=0, draws=200)
        >>> cmp.decided("a", "b")
        'a'
        """
        level = V.as_probability(level, "level", open_interval=True)
        p = self.prob_better(a, b, metric, **kwargs)
        if not isinstance(p, float):
            raise ValueError(f"decided() needs one gap per draw; the metric has the extra dims {list(p.dims)}: "
                             f"{_one_value_hint(p.dims)}")
        if p > level:
            return self._name(a)
        if p < 1.0 - level:
            return self._name(b)
        if width is not None and self.rope(a, b, metric, width=width, **kwargs) > level:
            return "equivalent"
        return None

    # ------------------------------------------------------------ selection

    @_says_thresholds()
    def select(self, n: int = 10, a=None, b=None, metric="average_precision", *, target: str = "auto",
               width: float | None = None, **kwargs) -> np.ndarray:
        """The ``n`` unvetted items whose labels would most change the comparison of ``a`` and ``b``.

        For each unvetted item, the expected squared change of ``P(a better)``
        (``target="prob"``) or of the gap's posterior mean (``target="gap"``) once its
        label is known: ``Cov(z_i, g)^2 / Var(z_i)`` with ``g`` whether ``a`` wins (or the
        gap) in each draw, the covariance taken through the model's probability of the
        label in each draw (:func:`expected_change`). ``target="auto"`` (default):
        ``"prob"``, or ``"gap"`` when a ``width`` of practical equivalence is given (an
        equivalence verdict needs the gap's spread to shrink). ``a``, ``b``: default the
        two classifiers ranked first (:meth:`ranking`: by the posterior mean of ``metric``);
        with only one of them given, it is paired with the best-ranked of the others (``a``
        stays the first of the pair, ``b`` the second). Returns item ids, the most
        informative first: the index labels of pandas inputs, else positions. Once
        ``P(a better)`` is the same (1 or 0) in every draw, no label can move it: ``"prob"``
        then ranks the items by ``"gap"`` instead, with a warning (not by file order). Where
        the gap itself is the same in every draw (two copies of one classifier: 0 in every
        draw), no label can change the comparison; either target then ranks the items by how
        much their labels would move ``a``'s metric, as a single classifier's selection
        does, with a warning that says so (a gap of 0 is decided only as ``"equivalent"``,
        given a ``width``).

        Examples
        --------
        >>> import numpy as np
        >>> import bayeval as be
        >>> rng = np.random.default_rng(8)
        >>> y = rng.random(500) < 0.3
        >>> cmp = be.compare({"a": 2 * y + rng.normal(0, 1, 500), "b": y + rng.normal(0, 1, 500)},
        ...                  np.where(np.arange(500) < 40, y, np.nan), random_seed=0, draws=200)
        >>> ids = cmp.select(5)
        >>> len(ids), bool(np.isnan(cmp.data.labels[cmp.data.index_of(ids)]).all())
        (5, True)
        """
        n = V.as_positive_int(n, "n")
        if width is not None:
            width = V.as_real_in(width, "width", lo=0.0, hi=np.inf, lo_open=True, hi_open=True)
        target = resolve_target(target, width)
        if a is None or b is None:  # the best-ranked, or the best-ranked other than the one given
            given = None if a is None and b is None else self._name(b if a is None else a)
            order = [name for name in self.ranking(metric, **kwargs).index if name != given]
            a, b = (order[0], order[1]) if given is None else (order[0], given) if a is None else (given, order[0])
        elif self._name(a) == self._name(b):
            raise ValueError(f"select() compares two different classifiers; got {a!r} twice. Give another as `b`, "
                             f"or give only `a` to pair it with the best-ranked of the others.")
        g = self.difference(a, b, metric, **kwargs)
        if g.ndim != 2:
            raise ValueError(f"select() needs one gap per draw; the metric has the extra dims {list(g.dims[2:])}: "
                             f"{_one_value_hint(g.dims[2:])}")
        own = self.metric(metric, **kwargs).sel(model=self._name(a)).values
        score = _selection_scores(self.posterior, g.values, target, self._name(a), self._name(b), own)
        free = np.flatnonzero(~self.data.vetted)
        if free.size == 0:
            raise ValueError("Every item is vetted: there is nothing left to select.")
        order = free[np.argsort(-score[free], kind="stable")]
        return self.data.item_ids[order[:n]]

    # --------------------------------------------------------------- plot

    @_says_thresholds()
    def plot(self, metric="average_precision", *, reference=None, ax=None, **kwargs):
        """Two panels: each classifier's gap to ``reference`` (default: the best-ranked), and P(best) as bars.

        The gaps are ``classifier - reference`` (negative: worse than the reference); the
        x-label names the reference and the legend, below the panel, each classifier, so
        that long names stay inside the figure. P(best) is drawn as horizontal bars, best
        on top, the names beside them. ``ax``: two Axes to draw into (default: a new
        figure, taller with more classifiers). Returns the matplotlib Figure.
        """
        import matplotlib.pyplot as plt

        order = list(self.ranking(metric, **kwargs).index)
        ref = order[0] if reference is None else self._name(reference)
        others = [name for name in order if name != ref]
        ncol = 2 if len(others) > 4 and max(map(len, others)) <= 30 else 1  # long names: one column
        if ax is None:
            rows = -(-len(others) // ncol)  # the legend's rows below the gaps' panel
            fig, ax = plt.subplots(1, 2, figsize=(10, 3.6 + 0.22 * rows), width_ratios=(3, 2))
        elif np.size(ax) < 2:
            raise ValueError("Comparison.plot draws two panels (the gaps, and P(best) as bars): pass two Axes, "
                             "e.g. `fig, ax = plt.subplots(1, 2); cmp.plot(ax=ax)`, or leave ax out.")
        else:
            fig = np.ravel(ax)[0].figure
        ax0, ax1 = np.ravel(ax)[:2]
        for name in others:
            g = self.difference(name, ref, metric, **kwargs).values.ravel()
            g = g[np.isfinite(g)]  # the draws where both metrics are defined
            if g.size:
                ax0.hist(g, bins=40, histtype="step", density=True, label=name)
            else:  # undefined in every draw: no density to draw (NumPy would warn dividing by 0 draws)
                ax0.plot([], [], label=f"{name} (gap undefined in every draw)")
        ax0.axvline(0.0, color="k", lw=0.8)
        ax0.set_xlabel(f"gap in {self.metric(metric, **kwargs).name}\n(classifier - {ref})", fontsize=9)
        ax0.set_ylabel("posterior density")
        if others:
            # below the panel (its x-label's two lines above it): long names neither cover the
            # histograms nor run past the figure's edge
            ax0.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=ncol, fontsize=8, frameon=False)
        best = self.prob_best(metric, **kwargs).loc[order]
        ax1.barh(range(len(order)), best.to_numpy(), color="C0")
        ax1.set_yticks(range(len(order)), order, fontsize=8)
        ax1.invert_yaxis()  # the best-ranked on top
        ax1.set_xlim(0, 1)
        ax1.set_xlabel("P(best)")
        fig.tight_layout()
        return fig


class ComparisonModel:
    """The model an :class:`~bayeval.active.ActiveSession` refits to decide a comparison of ``a`` and ``b``.

    Give it as the session's ``model`` with the joint data
    (:func:`~bayeval.models.joint.joint_data`): each refit is :func:`compare`'s fit, each
    batch after the designed first one is the items whose labels would most change the
    gap (:meth:`Comparison.select`), and ``session.decided()`` is the stopping rule of
    :meth:`Comparison.decided` (``a`` or ``b`` better with probability above ``level``,
    or, with ``width``, the gap inside ``[-width, width]`` with probability above
    ``level``). ``session.estimate()`` is the gap ``a - b`` in this model's ``metric``
    (:meth:`estimate`), whatever the session's own ``metric``.

    Parameters
    ----------
    a, b : str
        The two classifiers compared (names of the joint data's score columns).
    metric : str
        The metric whose gap decides, with its options in ``metric_kwargs`` (``{"k": 10}``).
    width : float, optional
        Half-width of the region of practical equivalence; None: no "equivalent" verdict.
    level : float
        The probability the verdict needs.
    target : {"auto", "gap", "prob"}
        What the selection moves (:meth:`Comparison.select`); ``"auto"`` (default):
        ``P(a better)`` without ``width``, the gap with it.
    model : as :func:`compare`'s ``model``

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> from bayeval.active import ActiveSession
    >>> from bayeval.compare import ComparisonModel
    >>> from bayeval.models.joint import joint_data
    >>> rng = np.random.default_rng(0)
    >>> y = rng.random(400) < 0.3
    >>> data = joint_data({"good": 3 * y + rng.normal(0, 1, 400), "weak": 0.3 * y + rng.normal(0, 1, 400)})
    >>> s = ActiveSession(data, ComparisonModel("good", "weak", model="logistic"), batch_size=20,
    ...                   store=os.path.join(tempfile.mkdtemp(), "s.sqlite"), random_seed=0,
    ...                   fit_kwargs={"draws": 200}, progressbar=False)
    >>> while s.decided() is None:
    ...     ids = s.next_batch()
    ...     _ = s.record(ids, y[data.index_of(ids)].astype(int))
    >>> s.decided(), int(s.data.n_vetted) <= 100
    ('good', True)
    >>> s.estimate().columns.tolist()   # the gap good - weak, as the vetting page for a comparison shows it
    ['mean', 'sd', 'hdi_5%', 'hdi_95%', 'p_better', 'decided']
    >>> s.close()
    """

    def __init__(self, a, b, metric="average_precision", *, width: float | None = None, level: float = 0.95,
                 target: str = "auto", model="default", metric_kwargs: dict | None = None):
        self.a, self.b = str(a), str(b)
        if self.a == self.b:
            raise ValueError(f"`a` and `b` must be two different classifiers, got {a!r} twice.")
        self.metric = metric
        self.metric_kwargs = dict(metric_kwargs or {})
        check_metric_options(metric, self.metric_kwargs, how="metric_kwargs={dict}")  # a missing `k` fails here
        self.width = None if width is None else V.as_real_in(width, "width", lo=0.0, hi=np.inf, lo_open=True,
                                                              hi_open=True)
        self.level = V.as_probability(level, "level", open_interval=True)
        self.target = resolve_target(target, self.width)
        if isinstance(model, str):
            V.check_choice(model, "model", MODELS)
        self.model = model

    def __repr__(self) -> str:
        return f"ComparisonModel({self.a!r}, {self.b!r}, metric={self.metric!r}, width={self.width}, level={self.level})"

    def fit(self, data: EvalData, *, draws: int = 1000, chains: int = 2, random_seed=None, progressbar: bool = False,
            warn: bool = True):
        """The joint model's posterior of ``data`` (what :func:`compare` fits).

        As :func:`compare`, the model is fitted with the score columns sorted by name, so
        the same seed gives the same draws whatever the order of the columns in ``data``;
        the posterior's data (and :meth:`comparison`'s ``names``) has them in that sorted
        order, the items in ``data``'s order.
        """
        if not isinstance(data, EvalData) or data.feature_names is None:
            raise TypeError("A ComparisonModel fits joint data: build it with "
                            "bayeval.models.joint.joint_data({name: scores, ...}, labels).")
        names = [str(n) for n in data.feature_names]
        for name in (self.a, self.b):
            if name not in names:
                raise ValueError(f"Unknown classifier {name!r}; the data's score columns are {names}.")
        if names != sorted(names):  # the seed's draws must not depend on the columns' order
            data = _in_order(data, sorted(names))
        return _fit_joint(data, self.model, draws=draws, chains=chains, random_seed=random_seed,
                          progressbar=progressbar, warn=warn)

    def comparison(self, posterior) -> Comparison:
        """The :class:`Comparison` of a posterior this model fitted."""
        return Comparison(posterior)

    def estimate(self, posterior, *, hdi_prob: float = HDI_PROB) -> pd.DataFrame:
        """The gap ``a - b`` in this model's metric: what :meth:`ActiveSession.estimate
        <bayeval.active.ActiveSession.estimate>` reports with this model.

        One row, named ``"{metric}: {a} - {b}"``, with the columns of
        :meth:`Comparison.difference_summary` (``mean``, ``sd``, the HDI, ``p_better``: that
        ``a`` is better, and ``p_rope`` with a ``width``) and ``decided`` (:meth:`decided`:
        ``a``, ``b``, ``"equivalent"`` or None) -- the table of the vetting page for a
        comparison (:class:`bayeval.vet.comparison.ComparisonSession`).
        """
        cmp = Comparison(posterior)
        kw = self.metric_kwargs
        s = cmp.difference_summary(self.a, self.b, self.metric, hdi_prob=hdi_prob, width=self.width, **kw)
        name = self.metric if isinstance(self.metric, str) else getattr(self.metric, "__name__", "metric")
        table = pd.DataFrame([s.to_dict()], index=[f"{name}: {self.a} - {self.b}"])
        table["decided"] = cmp.decided(self.a, self.b, self.metric, level=self.level, width=self.width, **kw)
        return table

    def decided(self, posterior) -> str | None:
        """The stopping rule on this posterior: ``a``, ``b``, ``"equivalent"`` or None (keep labelling)."""
        return Comparison(posterior).decided(self.a, self.b, self.metric, level=self.level, width=self.width,
                                             **self.metric_kwargs)

    def choose(self, posterior, size: int, *, exclude=None, random_seed=None) -> np.ndarray:
        """Positions of the ``size`` unvetted items (not in the mask ``exclude``) that would most change the comparison.

        As :meth:`Comparison.select`: where ``P(a better)`` is the same in every draw, by the gap, and where the gap
        is, by ``a``'s metric, each with a warning.
        """
        del random_seed  # the choice is deterministic given the draws
        cmp = Comparison(posterior)
        g = cmp.difference(self.a, self.b, self.metric, **self.metric_kwargs)
        if g.ndim != 2:
            raise ValueError("The comparison needs one gap per draw: give the metric's options, e.g. {'k': 10}.")
        own = cmp.metric(self.metric, **self.metric_kwargs).sel(model=self.a).values
        score = _selection_scores(posterior, g.values, self.target, self.a, self.b, own)
        free = ~cmp.data.vetted if exclude is None else ~cmp.data.vetted & ~np.asarray(exclude, dtype=bool)
        idx = np.flatnonzero(free)
        return idx[np.argsort(-score[idx], kind="stable")][:size]


TARGETS = ("auto", "gap", "prob")


def resolve_target(target: str, width=None) -> str:
    """What a selection moves: ``"gap"`` (the gap's posterior mean) or ``"prob"``
    (``P(a better)``). ``"auto"``: ``"prob"`` when the comparison stops on ``P(a
    better)`` alone, ``"gap"`` when a region of practical equivalence (``width``) can
    decide it too (an equivalence verdict needs the gap's spread to shrink)."""
    target = V.check_choice(target, "target", TARGETS)
    if target == "auto":
        return "prob" if width is None else "gap"
    return target


def _moved(gap: np.ndarray, target: str) -> np.ndarray:
    """Per draw, what a selection for ``target`` moves: the gap itself (``"gap"``), or
    whether ``a`` wins (``"prob"``: 1, 0, or 1/2 for a tie)."""
    gap = np.asarray(gap, dtype=np.float64)
    return (gap > 0) + 0.5 * (gap == 0) if target == "prob" else gap


def _selection_scores(post, gap: np.ndarray, target: str, a: str, b: str, own: np.ndarray) -> np.ndarray:
    """Per item, what a selection ranks by: :func:`expected_change` of what ``target`` moves.

    Where ``target="prob"`` gives 0 to every unvetted item (``P(a better)`` is the same in
    every draw, 1 or 0: no label can move it, and a stable sort would return the first
    unvetted items in file order), the items are ranked by how much their labels would
    move the gap instead (``target="gap"``), with a warning that says so. Where the gap
    itself is the same in every draw (two copies of one classifier: 0), no label can change
    the comparison at all: the items are ranked by how much their labels would move
    ``own``, ``a``'s metric per draw (the choice of a single classifier's selection), with
    a warning that says so.
    """
    free = ~np.asarray(post.data.vetted, dtype=bool)
    g = np.asarray(gap, dtype=np.float64)
    fin = g[np.isfinite(g)]
    if free.any() and fin.size and fin.min() == fin.max():
        verdict = (f"they are never told apart; decided({a!r}, {b!r}, width=...) calls them 'equivalent'"
                   if fin[0] == 0 else "the comparison is decided (see decided())")
        warnings.warn(
            f"The gap {a} - {b} is {fin[0]:g} in every posterior draw, so no item's label can change the "
            f"comparison ({verdict}). The items are ranked by how much their labels would move {a}'s metric "
            "instead, as a single classifier's selection ranks them.",
            UserWarning,
            stacklevel=user_stacklevel(),  # the caller's line, whatever wraps select
        )
        own = np.asarray(own, dtype=np.float64)
        own = np.where(np.isfinite(own), own, np.nanmean(own) if np.isfinite(own).any() else 0.0)
        return np.nan_to_num(expected_change(post, own), nan=0.0)
    score = expected_change(post, _moved(gap, target))
    if target != "prob" or not free.any() or np.any(score[free] > 0):
        return score
    p = float(np.mean(_moved(gap, "prob")))
    warnings.warn(
        f"P({a} better) is {p:g} in every posterior draw, so no item's label can move it (target='prob' "
        f"gives every item 0 and no order). The items are ranked by how much their labels would move the "
        f"gap {a} - {b} instead (target='gap'). The comparison is decided (see decided()); pass "
        "target='gap' to ask for this order without the warning.",
        UserWarning,
        stacklevel=user_stacklevel(),
    )
    return np.nan_to_num(expected_change(post, _moved(gap, "gap")), nan=0.0)


def expected_change(post, g: np.ndarray) -> np.ndarray:
    """Per item, the expected squared change of ``E[g]`` once the item's label is known.

    ``g``: one value per draw of ``post``, ``(chain, draw)`` (the gap, or whether one
    classifier wins). For a binary label ``z_i``, ``E[(E[g | z_i] - E[g])^2] =
    Cov(z_i, g)^2 / Var(z_i)``. The covariance is estimated through the model's
    probability of the label in each draw, ``Cov(P(z_i = 1 | theta), g)``, not through
    the drawn labels: given the parameters the labels are independent, so what an item's
    label tells about everyone else's goes through ``theta``, and the drawn label adds
    only its Bernoulli noise -- with a few hundred draws, noise large enough to decide
    which items come first. (What the item's own label adds to ``g`` directly, one item
    in the metric of thousands, is left out.) Vetted items, and items whose probability
    is the same in every draw, get 0.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import EvalData, Posterior
    >>> from bayeval.compare.comparison import expected_change
    >>> post = Posterior.from_probabilities(EvalData([0.2, 0.8, 0.5]), [0.5, 0.5, 0.5], draws=400, random_seed=0)
    >>> expected_change(post, np.arange(400.0).reshape(1, -1)).tolist()  # the same probabilities in every draw
    [0.0, 0.0, 0.0]
    """
    g = np.asarray(g, dtype=np.float64)
    if g.shape != (post.n_chains, post.n_draws):
        raise ValueError(f"`g` must have one value per draw, shape {(post.n_chains, post.n_draws)}; got {g.shape}.")
    gc = g - g.mean()
    n = g.size
    sp = np.zeros(post.data.n_items)
    spg = np.zeros(post.data.n_items)
    for chain, draws in post._chunk_plan(None):
        p = post._probabilities(chain, draws)
        sp += p.sum(axis=0)
        spg += gc[chain, draws] @ p
    p = sp / n
    var = p * (1.0 - p)
    cov = spg / n
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore")
        out = np.where(var > 0, cov ** 2 / np.where(var > 0, var, 1.0), 0.0)
    out[np.asarray(post.data.vetted, dtype=bool)] = 0.0
    return out


def _share(gap: xr.DataArray, hit: xr.DataArray) -> xr.DataArray:
    """The share of the draws where ``gap`` is defined in which ``hit`` holds (NaN where none is)."""
    defined = gap.notnull()
    n = defined.sum(("chain", "draw"))
    with np.errstate(invalid="ignore", divide="ignore"):
        return (hit.where(defined, 0).sum(("chain", "draw")) / n).where(n > 0)


def _undefined_caveat(metric: str, share: float) -> str:
    return (f"{metric} is undefined in {share:.1%} of the posterior draws for at least one classifier: in those "
            "draws the labels drawn for the unvetted items leave it no positive or no negative to count. The table "
            "summarizes the draws where it is defined; vet items of the missing class to pin it down.")
