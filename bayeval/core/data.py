"""EvalData: the evaluation set (scores, vetted labels, noisy labels, ...), immutable."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import xarray as xr

from . import _validate as V

__all__ = ["EvalData", "data_caveats", "few_labels_caveats", "few_positives_caveat", "reversed_scores",
           "reversed_scores_caveat", "reversed_caveats", "saturated_share", "squeezed_range"]


def frozen_array(a: np.ndarray | None) -> np.ndarray | None:
    if a is not None:
        a.setflags(write=False)
    return a


def _swapped_hint(scores, labels) -> str:
    """The hint added to a refusal of ``scores`` holding NaN when ``labels`` is all finite:
    ``EvalData(labels, scores)``, the arguments swapped ('' otherwise).

    Examples
    --------
    >>> import numpy as np
    >>> _swapped_hint([1.0, np.nan, 0.0], [0.9, 0.5, 0.1]).split(":")[0]
    ' The arguments look swapped'
    >>> _swapped_hint([1.0, np.nan, 0.0], [1.0, np.nan, 0.0]), _swapped_hint([0.9, 0.5], None)
    ('', '')
    """
    if labels is None:
        return ""
    try:
        s = np.asarray(V.as_1d_float(scores, "scores", allow_nan=True))
        lab = np.asarray(V.as_1d_float(labels, "labels", allow_nan=True))
    except (TypeError, ValueError):
        return ""
    if not (np.isnan(s).any() and lab.size and np.isfinite(lab).all()):
        return ""
    return (" The arguments look swapped: these `scores` hold NaN (as vetted labels do where an item is not "
            "vetted) and the `labels` are all finite numbers. The scores come first: EvalData(scores, labels), "
            "or name them: EvalData(scores=..., labels=...).")


def warn_bool_labels(labels, lab: np.ndarray) -> None:
    """Warn that a boolean ``labels`` array (numpy ``bool``, not pandas' nullable ``boolean``,
    which holds ``pd.NA``) marks every item vetted: a boolean cannot be NaN, and a comparison
    such as ``y > 0.5`` turns each NaN (not vetted) into a vetted negative. A warning, not an
    error: every item vetted is a valid evaluation set, and float labels say so silently."""
    dtype = labels.dtype if hasattr(labels, "dtype") else np.asarray(labels).dtype
    if dtype != np.bool_:
        return
    import warnings

    from ._diagnostics import user_stacklevel

    warnings.warn(
        f"bayeval: `labels` is a boolean array, so all {lab.size} items count as vetted "
        f"({int(lab.sum())} True = positive, {int(lab.size - lab.sum())} False = negative); a boolean "
        "cannot be NaN (not vetted), and a comparison such as `y > 0.5` turns NaN into False. If some "
        "items were not vetted, pass float labels with NaN for them, e.g. "
        "`np.where(np.isnan(y), np.nan, y > 0.5)`. If every item was vetted, pass `labels.astype(float)` "
        "to say so (and silence this warning).", UserWarning, stacklevel=user_stacklevel())


class EvalData:
    """The items a classifier scored, with whatever is known about their labels.

    An item is one scored decision (an image-tag pair, a detection). ``labels`` holds
    the *vetted* (trusted) labels: 1 or 0 where a person checked the item, NaN where
    nobody did. Noisy labels (user tags, weak labels) are a separate array. The object
    is immutable: :meth:`with_labels` returns a new one with more items vetted.

    Parameters
    ----------
    scores : array_like of shape (n_items,)
        Classifier scores, any real scale (higher = more likely positive). Finite.
    labels : array_like of shape (n_items,), optional
        1 (positive), 0 (negative) or NaN (not vetted). Default: nothing vetted.
        Booleans cannot be NaN: a boolean array (``y > 0.5``) marks every item vetted, and
        a warning says so (pass ``astype(float)`` where every item was vetted).
    noisy_labels : array_like of shape (n_items,), optional
        Cheap, possibly wrong 0/1 labels for every item.
    predictions : array_like of shape (n_items,), optional
        The classifier's hard 0/1 decisions (for precision, recall, F, accuracy).
    categories : array_like of shape (n_items,), optional
        The category (tag, class) each item belongs to; metrics are then computed
        per category.
    features : array_like of shape (n_items, n_features) or DataFrame, optional
        Finite item features used by some models (e.g. box sizes, noisy IoU).
    item_ids : array_like of shape (n_items,), optional
        Unique ids (ints or strings). Default ``0 .. n_items - 1``.

    Notes
    -----
    Plain arrays are paired by position. Where two or more inputs are pandas objects (a
    Series, or a DataFrame's rows), they are paired by their index, as pandas pairs them:
    the same labels in another order are put in the order of the first of them (as
    :meth:`bayeval.rankings.RankingPosterior.percentile` matches a Series by label), and
    an error names the inputs, and a few labels, where the indexes name different items,
    repeat a label, or where the order cannot be told: one index is pandas' default
    ``0 .. n-1`` (row numbers), or a plain array is given beside them, or ``item_ids`` lists
    the index labels in another order. Pass ``.to_numpy()`` to pair inputs by position. The
    index does not become the item ids: give ``item_ids=scores.index`` for that.
    Nullable pandas columns (``boolean``, ``Int64``, ``Float64``) read ``pd.NA`` as NaN.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import EvalData
    >>> d = EvalData([0.9, 0.4, 0.2], [1, np.nan, 0], item_ids=["a", "b", "c"])
    >>> d.n_items, d.n_vetted, d.vetted.tolist()
    (3, 2, [True, False, True])
    >>> d.with_labels(["b"], [1]).n_vetted
    3
    >>> import pandas as pd
    >>> s = pd.Series([0.9, 0.4, 0.2], index=["a", "b", "c"])
    >>> EvalData(s, pd.Series([0, 1], index=["c", "a"]).reindex(s.index)).labels.tolist()
    [1.0, nan, 0.0]
    >>> EvalData(s, pd.Series([0, np.nan, 1], index=["c", "b", "a"])).labels.tolist()  # paired by label
    [1.0, nan, 0.0]
    """

    __slots__ = (
        "_scores",
        "_labels",
        "_noisy",
        "_pred",
        "_cat_codes",
        "_cat_names",
        "_features",
        "_feature_names",
        "_ids",
        "_id_index",
    )

    def __init__(
        self,
        scores,
        labels=None,
        *,
        noisy_labels=None,
        predictions=None,
        categories=None,
        features=None,
        item_ids=None,
    ):
        scores, labels, noisy_labels, predictions, categories, features, item_ids = V.align_by_index(
            [("scores", scores), ("labels", labels), ("noisy_labels", noisy_labels), ("predictions", predictions),
             ("categories", categories), ("features", features), ("item_ids", item_ids)],
            ids="item_ids",
        )
        try:
            s = V.as_scores(scores, "scores")
        except ValueError as exc:
            raise ValueError(str(exc) + _swapped_hint(scores, labels)) from None
        n = s.size
        if labels is None:
            lab = np.full(n, np.nan)
        else:
            lab = V.as_label_vector(labels, "labels", allow_nan=True)
            V.check_same_length(n, "labels", lab.size)
            warn_bool_labels(labels, lab)
        ids = V.as_item_ids(item_ids, n)
        named = None if item_ids is None else ids  # a NaN noisy label or prediction is named by its item's id
        noisy = None
        if noisy_labels is not None:
            noisy = V.as_binary_vector(noisy_labels, "noisy_labels", ids=named)
            V.check_same_length(n, "noisy_labels", noisy.size)
        pred = None
        if predictions is not None:
            pred = V.as_binary_vector(predictions, "predictions", ids=named)
            V.check_same_length(n, "predictions", pred.size)
        codes = names = None
        if categories is not None:
            codes, names = V.as_categories(categories, n)
        feats = fnames = None
        if features is not None:
            feats, fnames = V.as_features(features, n)
        self._init(s, lab, noisy, pred, codes, names, feats, fnames, ids)

    def _init(self, s, lab, noisy, pred, codes, names, feats, fnames, ids):
        self._scores = frozen_array(s)
        self._labels = frozen_array(lab)
        self._noisy = frozen_array(noisy)
        self._pred = frozen_array(pred)
        self._cat_codes = frozen_array(codes)
        self._cat_names = frozen_array(names)
        self._features = frozen_array(feats)
        self._feature_names = frozen_array(fnames)
        self._ids = frozen_array(ids)
        self._id_index = None

    @classmethod
    def _trusted(cls, **fields) -> EvalData:
        """Build from already-validated arrays (internal: subsets and copies)."""
        obj = cls.__new__(cls)
        obj._init(**fields)
        return obj

    def _fields(self) -> dict:
        return dict(
            s=self._scores,
            lab=self._labels,
            noisy=self._noisy,
            pred=self._pred,
            codes=self._cat_codes,
            names=self._cat_names,
            feats=self._features,
            fnames=self._feature_names,
            ids=self._ids,
        )

    # ------------------------------------------------------------------ builders

    @classmethod
    def from_frame(
        cls,
        df: pd.DataFrame,
        *,
        score: str,
        label: str | None = None,
        noisy_label: str | None = None,
        prediction: str | None = None,
        category: str | None = None,
        features: Sequence[str] | None = None,
        item_id: str | None = None,
    ) -> EvalData:
        """Build from a pandas DataFrame, naming the columns.

        Parameters
        ----------
        df : pandas.DataFrame
        score : str
            Column of classifier scores.
        label, noisy_label, prediction, category : str, optional
            Columns of vetted labels (1/0, empty = not vetted), noisy labels, hard
            predictions and categories.
        features : list of str, optional
            Feature columns.
        item_id : str, optional
            Column of unique item ids; ``"index"`` uses the frame's index.

        Examples
        --------
        >>> import pandas as pd
        >>> from bayeval import EvalData
        >>> df = pd.DataFrame({"s": [0.3, 0.8], "y": [None, 1.0]})
        >>> EvalData.from_frame(df, score="s", label="y").n_vetted
        1
        """
        if not isinstance(df, pd.DataFrame):
            raise TypeError(f"`df` must be a pandas DataFrame, got {type(df).__name__}.")

        def col(name, arg):
            if name is None:
                return None
            if name not in df.columns:
                raise ValueError(
                    f"`{arg}={name!r}` is not a column of the frame; its columns are "
                    f"{list(map(str, df.columns))}."
                )
            return df[name].to_numpy()

        feats = None
        if features is not None:
            if isinstance(features, str):
                features = [features]
            missing = [f for f in features if f not in df.columns]
            if missing:
                raise ValueError(
                    f"`features` names column(s) {missing} that the frame does not have; "
                    f"its columns are {list(map(str, df.columns))}."
                )
            feats = df[list(features)]
        if item_id == "index":
            ids = df.index.to_numpy()
        else:
            ids = col(item_id, "item_id")
        return cls(
            col(score, "score"),
            col(label, "label"),
            noisy_labels=col(noisy_label, "noisy_label"),
            predictions=col(prediction, "prediction"),
            categories=col(category, "category"),
            features=feats,
            item_ids=ids,
        )

    # ---------------------------------------------------------------- properties

    @property
    def scores(self) -> np.ndarray:
        """Classifier scores, shape (n_items,), read-only."""
        return self._scores

    @property
    def labels(self) -> np.ndarray:
        """Vetted labels (1.0, 0.0, or NaN where not vetted), read-only."""
        return self._labels

    @property
    def noisy_labels(self) -> np.ndarray | None:
        """Noisy 0/1 labels (int8) or None."""
        return self._noisy

    @property
    def predictions(self) -> np.ndarray | None:
        """Hard 0/1 predictions (int8) or None."""
        return self._pred

    @property
    def categories(self) -> np.ndarray | None:
        """Category name of each item, or None."""
        return None if self._cat_codes is None else self._cat_names[self._cat_codes]

    @property
    def category_codes(self) -> np.ndarray | None:
        """Integer code of each item's category (index into :attr:`category_names`)."""
        return self._cat_codes

    @property
    def category_names(self) -> np.ndarray | None:
        """Sorted distinct category names, or None."""
        return self._cat_names

    @property
    def features(self) -> np.ndarray | None:
        """Item features, shape (n_items, n_features), or None."""
        return self._features

    @property
    def feature_names(self) -> np.ndarray | None:
        return self._feature_names

    @property
    def item_ids(self) -> np.ndarray:
        return self._ids

    @property
    def n_items(self) -> int:
        return int(self._scores.size)

    def __len__(self) -> int:
        return self.n_items

    @property
    def vetted(self) -> np.ndarray:
        """Boolean mask of vetted items."""
        return ~np.isnan(self._labels)

    @property
    def n_vetted(self) -> int:
        return int(self.vetted.sum())

    @property
    def n_unvetted(self) -> int:
        return self.n_items - self.n_vetted

    @property
    def n_vetted_positive(self) -> int:
        return int(np.nansum(self._labels))

    @property
    def n_vetted_negative(self) -> int:
        return self.n_vetted - self.n_vetted_positive

    def caveats(self, model=None) -> list[str]:
        """What these labels and scores cannot tell a model, in sentences (see :func:`data_caveats`).

        ``model``: the model fitted (or its posterior), whose own reading of a handful of vetted
        positives is said (:func:`data_caveats`); None: the default model's.
        """
        return data_caveats(self, model)

    @property
    def has_categories(self) -> bool:
        return self._cat_codes is not None

    def counts(self) -> pd.DataFrame:
        """Items, vetted, vetted positives/negatives (and noisy positives), per category.

        Returns
        -------
        pandas.DataFrame
            One row per category (a single row "all" without categories), plus a
            "total" row when there are categories.

        Examples
        --------
        >>> from bayeval import EvalData
        >>> c = EvalData([0.1, 0.9, 0.5], [0, 1, float("nan")], categories=["x", "y", "y"]).counts()
        >>> c.index.tolist(), c["vetted"].tolist()
        (['x', 'y', 'total'], [1, 1, 2])
        """
        codes = self._cat_codes if self.has_categories else np.zeros(self.n_items, dtype=np.int64)
        names = self._cat_names if self.has_categories else np.array(["all"])
        k = names.size
        vet = self.vetted
        table = {
            "items": np.bincount(codes, minlength=k),
            "vetted": np.bincount(codes, weights=vet, minlength=k).astype(int),
            "vetted_positive": np.bincount(codes, weights=np.nan_to_num(self._labels), minlength=k).astype(int),
        }
        table["vetted_negative"] = table["vetted"] - table["vetted_positive"]
        if self._noisy is not None:
            table["noisy_positive"] = np.bincount(codes, weights=self._noisy, minlength=k).astype(int)
        out = pd.DataFrame(table, index=pd.Index(names, name="category"))
        if self.has_categories:
            out.loc["total"] = out.sum()
        return out

    # ------------------------------------------------------------------- editing

    def index_of(self, item_ids) -> np.ndarray:
        """Positions of the given item ids; a clear error names any unknown id.

        Examples
        --------
        >>> from bayeval import EvalData
        >>> EvalData([0.1, 0.2], item_ids=["a", "b"]).index_of(["b"]).tolist()
        [1]
        """
        ids = np.atleast_1d(np.asarray(item_ids))
        if self._id_index is None:
            object.__setattr__(self, "_id_index", pd.Index(self._ids))
        query = ids
        if self._ids.dtype.kind in "iu" and ids.dtype.kind == "f" and np.all(ids == np.round(ids)):
            query = ids.astype(np.int64)
        elif self._ids.dtype.kind == "U" and ids.dtype.kind != "U":
            query = ids.astype(str)
        idx = self._id_index.get_indexer(query)
        if (idx < 0).any():
            unknown = ids[idx < 0]
            raise ValueError(
                f"{unknown.size} item id(s) are not in this EvalData (e.g. {V.preview(unknown)}); "
                f"known ids look like {V.preview(self._ids)}."
            )
        return idx

    def with_labels(self, items, values, *, overwrite: bool = False) -> EvalData:
        """A new EvalData with the given items vetted.

        Parameters
        ----------
        items : array_like
            Item ids (as in :attr:`item_ids`).
        values : array_like
            Their vetted labels, 1 or 0 (same length as ``items``).
        overwrite : bool, default False
            An item that is already vetted with a *different* value raises unless
            this is True (a conflicting label is never silently replaced).

        Returns
        -------
        EvalData

        Examples
        --------
        >>> from bayeval import EvalData
        >>> d = EvalData([0.2, 0.7, 0.9])
        >>> d.with_labels([2, 0], [1, 0]).labels.tolist()
        [0.0, nan, 1.0]
        """
        vals = V.as_label_vector(np.atleast_1d(values), "values", allow_nan=False)
        idx = self.index_of(items)
        if idx.size != vals.size:
            raise ValueError(f"`items` has {idx.size} id(s) but `values` has {vals.size}; give one value per item.")
        order = np.argsort(idx, kind="stable")
        si, sv = idx[order], vals[order]
        conflict = (si[1:] == si[:-1]) & (sv[1:] != sv[:-1])
        if conflict.any():
            raise ValueError(
                f"Item {self._ids[si[1:][conflict][0]]!r} is given conflicting labels in one call; "
                "resolve the conflict first (decide which label is right), then call again."
            )
        old = self._labels[idx]
        clash = ~np.isnan(old) & (old != vals)
        if clash.any() and not overwrite:
            raise ValueError(
                f"{int(clash.sum())} item(s) are already vetted with a different label "
                f"(e.g. {self._ids[idx[clash][0]]!r}: {old[clash][0]:g} -> {vals[clash][0]:g}). "
                "Pass overwrite=True to replace them."
            )
        lab = self._labels.copy()
        lab[idx] = vals
        fields = self._fields()
        fields["lab"] = frozen_array(lab)
        return EvalData._trusted(**fields)

    def subset(self, items) -> EvalData:
        """A new EvalData with only some items: a boolean mask or positions.

        Examples
        --------
        >>> from bayeval import EvalData
        >>> EvalData([0.1, 0.5, 0.9]).subset([0, 2]).scores.tolist()
        [0.1, 0.9]
        """
        sel = np.asarray(items)
        if sel.dtype == bool:
            if sel.shape != (self.n_items,):
                raise ValueError(f"A boolean mask must have shape ({self.n_items},), got {sel.shape}.")
            sel = np.flatnonzero(sel)
        if sel.size == 0:
            raise ValueError("The subset is empty: select at least one item.")
        f = self._fields()
        out = {}
        for key, val in f.items():
            if key in ("names", "fnames") or val is None:
                out[key] = val
            else:
                out[key] = frozen_array(np.array(val[sel]))
        return EvalData._trusted(**out)

    def split_categories(self) -> dict[str, EvalData]:
        """One EvalData per category (in the order of :attr:`category_names`), without categories.

        What a fit per category sees (:func:`bayeval.core.distributed.fit_categories`):
        the category's items with all their columns (ids, labels, noisy labels,
        predictions, features) and no category column.

        Examples
        --------
        >>> from bayeval import EvalData
        >>> parts = EvalData([0.1, 0.5, 0.9], [1, None, 0], categories=["b", "a", "b"]).split_categories()
        >>> {name: part.item_ids.tolist() for name, part in parts.items()}
        {'a': [1], 'b': [0, 2]}
        """
        if not self.has_categories:
            raise ValueError("This EvalData has no categories: build it with categories=... to split it.")
        out = {}
        for code, name in enumerate(self.category_names):
            fields = self.subset(self.category_codes == code)._fields()
            fields["codes"] = fields["names"] = None
            out[str(name)] = EvalData._trusted(**fields)
        return out

    # --------------------------------------------------------------------- views

    def fingerprint(self) -> str:
        """SHA-256 of the content: scores, labels, ids and every other column (hex, 64 characters).

        Two EvalData with the same values have the same fingerprint; a report prints it,
        and the command line uses it to tell whether a saved fit was made on this data.

        Examples
        --------
        >>> from bayeval import EvalData
        >>> a, b = EvalData([0.1, 0.9], [0, 1]), EvalData([0.1, 0.9], [0, float("nan")])
        >>> len(a.fingerprint()), a.fingerprint() == EvalData([0.1, 0.9], [0, 1]).fingerprint()
        (64, True)
        >>> a.fingerprint() == b.fingerprint()
        False
        """
        import hashlib

        h = hashlib.sha256()
        h.update(b"bayeval-evaldata-1")
        for name, arr in (
            ("scores", self.scores),
            ("labels", self.labels),
            ("noisy", self.noisy_labels),
            ("predictions", self.predictions),
            ("categories", self.categories),
            ("features", self.features),
            ("ids", self.item_ids),
        ):
            h.update(name.encode())
            if arr is None:
                h.update(b"-")
            elif arr.dtype.kind in "OUS":
                h.update("\x1f".join(map(str, arr.tolist())).encode())
            else:
                h.update(str(arr.dtype).encode() + np.ascontiguousarray(arr).tobytes())
        return h.hexdigest()

    def to_xarray(self) -> xr.Dataset:
        """The data as an ``xarray.Dataset`` along dimension ``item``.

        Examples
        --------
        >>> from bayeval import EvalData
        >>> ds = EvalData([0.2, 0.7], [1, float("nan")]).to_xarray()
        >>> list(ds.data_vars)
        ['score', 'label', 'vetted']
        """
        data_vars = {
            "score": ("item", self._scores),
            "label": ("item", self._labels),
            "vetted": ("item", self.vetted),
        }
        if self._noisy is not None:
            data_vars["noisy_label"] = ("item", self._noisy)
        if self._pred is not None:
            data_vars["prediction"] = ("item", self._pred)
        if self.has_categories:
            data_vars["category"] = ("item", self.categories)
        coords = {"item": self._ids}
        if self._features is not None:
            data_vars["features"] = (("item", "feature"), self._features)
            coords["feature"] = self._feature_names
        return xr.Dataset(data_vars, coords=coords)

    def to_frame(self) -> pd.DataFrame:
        """The data as a pandas DataFrame indexed by item id."""
        ds = self.to_xarray()
        df = pd.DataFrame({k: ds[k].values for k in ds.data_vars if k != "features"}, index=pd.Index(self._ids, name="item"))
        if self._features is not None:
            for j, name in enumerate(self._feature_names):
                df[name] = self._features[:, j]
        return df

    def __repr__(self) -> str:
        parts = [
            f"n_items={self.n_items}",
            f"vetted={self.n_vetted} ({self.n_vetted_positive} positive)",
        ]
        if self._noisy is not None:
            parts.append(f"noisy_positive={int(self._noisy.sum())}")
        if self._pred is not None:
            parts.append(f"predicted_positive={int(self._pred.sum())}")
        if self.has_categories:
            parts.append(f"categories={self._cat_names.size}")
        if self._features is not None:
            parts.append(f"features={list(self._feature_names)}")
        return "EvalData(" + ", ".join(parts) + ")"

    def __setattr__(self, name, value):
        if name in EvalData.__slots__ and not hasattr(self, name):
            object.__setattr__(self, name, value)
        else:
            raise AttributeError("EvalData is immutable; use with_labels() or subset() to derive a new one.")


# ------------------------------------------------------------------ caveats
#
# An interval from 30 labels holding two positives is wide because the labels say little
# about the top of the ranking, and a curve centred on "the scores are calibrated" cannot
# know whether probabilities squeezed into [0.15, 0.48] rank much better than they claim. The
# summary (``summary().attrs["caveats"]``), the report and the command line say so beside
# the interval; these are not sampler diagnostics and do not make a fit "not ok".

#: fewer vetted labels of a class than this is "a handful"
FEW_OF_A_CLASS = 5
#: probabilities whose 1st-99th percentile range is narrower than this, away from 0 and 1, are "squeezed"
SQUEEZED_RANGE = 0.4
#: a share of probabilities at exactly 0 or 1 above this is "saturated"
SATURATED_SHARE = 0.05
#: the level of the one-sided rank test of :func:`reversed_scores`. On correctly oriented scores of a weak
#: classifier (binormal, ROC AUC 0.6) with 20-100 random vetted labels and 5-50% positives it fired in at
#: most 0.28% of the label sets of any cell, and in 0.3-1.2% of those of a useless one (AUC 0.5); on a
#: ranking turned round as in ``P(y = 1 | s) = (1 - s)^2`` in 71%, 92% and 98% of the sets of 20, 30 and
#: 40 random labels (``benchmarks/results/reversed_scores.md``)
REVERSED_LEVEL = 0.01
#: what :func:`reversed_scores_caveat` asks of scores that rank the vetted positives low
REVERSED_ASK = ("Did you pass the other class's probability (use 1 - p, e.g. predict_proba(X)[:, 1] rather than "
                "[:, 0]) or a distance (negate it)?")
#: what the intervals of a model whose curve rises with the score make of such scores
REVERSED_READING = ("The intervals assume that positives rise with the score; on these scores they can be "
                    "confidently wrong. Fix the scores and refit.")
#: the kinds of :func:`data_caveats` sentences: on the vetted labels, on the scores' shape
DATA_CAVEAT_KINDS = ("labels", "scores")
#: said when no item is vetted: the extreme case of a handful, of both classes at once
NO_LABELS = (
    "no vetted labels: every interval is the prior's -- what the model assumes about how the scores relate to "
    "the labels (for probabilities, largely that they are calibrated) -- not evidence about this classifier, "
    "and where that assumption is wrong the interval misses the truth. Vet some items first: a random sample "
    "of 30 or more, or a first batch stratified on the score (bayeval.active.design, or `bayeval select` / "
    "`bayeval vet` on the command line); then refit."
)
#: the same with noisy labels, which the model reads through its assumption about how they err
NO_LABELS_NOISY = (
    "no vetted labels: every interval rests on the noisy labels and on what the model assumes about how they err "
    "(how often a relevant item is listed, and an irrelevant one) -- no vetted item checks that assumption, and "
    "where it is wrong the interval misses the truth. Vet some items first: a random sample of 30 or more, or a "
    "first batch stratified on the score (bayeval.active.design, or `bayeval select` on the command line); then "
    "refit."
)


def few_positives_caveat(data, model=None, *, scale: str | None = None) -> str:
    """What a handful of vetted positives leaves to the prior of the model fitted, in words.

    Parameters
    ----------
    data : EvalData
    model : optional
        The model fitted, or its posterior. Its ``caveat_few_positives`` says how its own prior
        reads so few positives: a sentence (e.g. :class:`bayeval.models.LabelFlip`'s), or a method
        taking the data and giving one (a calibration fit on standardized scores, a stack whose
        candidates read it apart), or None; without one, the default model's sentence.
    scale : {"logit", "standardize"}, optional
        The default curves' score feature: ``"standardize"`` (``transform="standardize"``) says
        that the prior reads probabilities standardized, not as calibrated.

    Returns
    -------
    str

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import EvalData
    >>> from bayeval.core.data import few_positives_caveat
    >>> data = EvalData(np.linspace(0.01, 0.99, 50))
    >>> "takes the probabilities as calibrated" in few_positives_caveat(data)
    True
    >>> "reads them standardized" in few_positives_caveat(data, scale="standardize")
    True
    """
    own = getattr(model, "caveat_few_positives", None)
    if callable(own):
        own = own(data)
    if isinstance(own, str):
        return own
    s = data.scores  # read as calibrated probabilities by the default (not squeezed ones: both readings)
    probabilities = bool(s.size and s.min() >= 0 and s.max() <= 1 and squeezed_range(s) is None)
    head = ("the share of positives and the top of the calibration curve rest largely on the prior, so AP, P@K and "
            "precision get wide intervals, and recall the widest.")
    if not probabilities:
        return head
    if scale == "standardize":
        return head + (
            " Wide is not always enough: the model's calibration curve does not take the probabilities as calibrated "
            "but reads them standardized (transform='standardize'), its prior putting the curve's 0.5 near the score "
            "above which the share of items matches the vetted share of positives; where the probabilities are in fact "
            "calibrated (a weak but calibrated classifier's), P@K, AP and precision can come out too high, and the "
            "interval can miss the truth.")
    return head + (
        " Wide is not always enough: the default model's prior takes the probabilities as calibrated, so where "
        "the classifier's top scores are over-confident (an over-fitted model: its top items right less often "
        "than they claim) P@K, AP and precision come out too high, and where they are under-confident "
        "(right more often than they claim) too low; either way the interval can miss the truth.")


def reversed_scores(data, level: float = REVERSED_LEVEL) -> tuple[float, float] | None:
    """The vetted items' ROC AUC and p-value when the vetted labels run clearly against the
    score direction (positives scoring lower than negatives), else None.

    Every model here takes a higher score as more likely positive (the calibration curves'
    slopes are positive, the score mixture's positive component lies above the negative one).
    Scores that rank positives low -- the other class's probability (``predict_proba[:, 0]``)
    or a distance -- then give confidently wrong intervals. The check is a one-sided
    Mann-Whitney rank test of the vetted scores (positives lower than negatives) at ``level``
    (:data:`REVERSED_LEVEL`, chosen so that correctly oriented scores of a weak classifier
    rarely trip it); it fits nothing.

    Parameters
    ----------
    data : EvalData
    level : float, default :data:`REVERSED_LEVEL`
        The test's level.

    Returns
    -------
    tuple of float or None
        ``(auc, p_value)``: the vetted items' ROC AUC (below 0.5) and the one-sided p-value
        (below ``level``). None without vetted items of both classes, or where the vetted
        scores are all equal, or where the test does not reject.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import EvalData
    >>> s = np.linspace(0.01, 0.99, 40)
    >>> reversed_scores(EvalData(s, (s < 0.3).astype(float)))
    (0.0, ...)
    >>> reversed_scores(EvalData(s, (s > 0.7).astype(float))) is None
    True
    """
    vetted = data.vetted
    y, s = data.labels[vetted], data.scores[vetted]
    pos, neg = s[y == 1], s[y == 0]
    if not pos.size or not neg.size or s.min() == s.max():
        return None
    from scipy import stats

    test = stats.mannwhitneyu(pos, neg, alternative="less")
    auc, p_value = float(test.statistic) / (pos.size * neg.size), float(test.pvalue)
    if auc < 0.5 and p_value < level:
        return auc, p_value
    return None


def reversed_scores_caveat(data, reading: str | None = None) -> str | None:
    """The sentence on scores that rank the vetted positives low (:func:`reversed_scores`), else None.

    Said among the data's caveats (``summary().attrs["caveats"]``, the report, the command line),
    by ``post.check()`` of the default fit, its calibration curves, the score mixture and the
    label-flip model, and as a warning of :func:`bayeval.fit` and of those models' ``fit``.

    Parameters
    ----------
    data : EvalData
    reading : str, optional
        What the model fitted makes of such scores, and what to do, in the sentence's last words
        (a model whose score slope can turn negative says so); None: the intervals assume that
        positives rise with the score.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import EvalData
    >>> s = np.linspace(0.01, 0.99, 40)
    >>> reversed_scores_caveat(EvalData(s, (s < 0.3).astype(float))).split(":")[0]
    'higher scores look less likely positive'
    """
    found = reversed_scores(data)
    if found is None:
        return None
    auc, p_value = found
    vetted = data.vetted
    pos = int(np.sum(data.labels[vetted] == 1))
    return (
        f"higher scores look less likely positive: the {pos} vetted positives mostly score below the "
        f"{int(vetted.sum()) - pos} vetted negatives (ROC AUC {auc:.2f} on the vetted items, one-sided rank "
        f"test p = {p_value:.2g}). {REVERSED_ASK} " + (reading or REVERSED_READING)
    )


def reversed_caveats(data, model=None) -> list[str]:
    """The sentences on scores that rank the vetted positives low, for the model fitted (empty when none).

    A model (or posterior) that reads several score columns says it per column in its own
    ``caveat_reversed(data)`` (a list of sentences: e.g. the joint model of
    :func:`bayeval.compare` names each classifier whose scores are turned round); any other
    gets :func:`reversed_scores_caveat`'s sentence on ``data.scores``. Said first among
    :func:`data_caveats`, and by ``post.check()`` of the models that take a higher score as
    more likely positive.

    Parameters
    ----------
    data : EvalData
    model : optional
        The model fitted, or its posterior.

    Returns
    -------
    list of str

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import EvalData
    >>> s = np.linspace(0.01, 0.99, 40)
    >>> [c.split(":")[0] for c in reversed_caveats(EvalData(s, (s < 0.3).astype(float)))]
    ['higher scores look less likely positive']
    >>> reversed_caveats(EvalData(s, (s > 0.7).astype(float)))
    []
    """
    own = getattr(model, "caveat_reversed", None)
    if callable(own):
        return list(own(data))
    said = reversed_scores_caveat(data)
    return [said] if said else []


def _few_labels(data, model=None) -> list[str]:
    if not data.n_vetted:
        return [NO_LABELS if data.noisy_labels is None else NO_LABELS_NOISY]
    out = few_labels_caveats(data, model)
    if not out:  # the pool as a whole has enough of each class: a category may not
        out += few_by_category(data)
    else:  # every category then has few of that class; one with no vetted item at all is named still
        out += _unvetted_categories(data)
    return out


def few_labels_caveats(data, model=None) -> list[str]:
    """The sentences of :func:`data_caveats` on a handful of vetted labels of a class: fewer than
    :data:`FEW_OF_A_CLASS` vetted positives (none included; in the words of ``model``'s prior, see
    :func:`few_positives_caveat`), fewer than that many vetted negatives. Empty when no item is
    vetted (a case of its own, said by :func:`data_caveats`) or when each class has enough.

    :func:`bayeval.fit` warns them; :func:`bayeval.recalibrate` and a summary's
    ``attrs["caveats"]`` carry them among the others.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import EvalData
    >>> from bayeval.core.data import few_labels_caveats
    >>> y = np.full(200, np.nan); y[:30] = 0; y[0] = 1
    >>> [c.split(":")[0] for c in few_labels_caveats(EvalData(np.linspace(0.01, 0.99, 200), y))]
    ['only 1 of the 30 vetted labels are positive']
    >>> y[:10] = 1
    >>> few_labels_caveats(EvalData(np.linspace(0.01, 0.99, 200), y))
    []
    """
    out = []
    n, pos = int(data.n_vetted), int(data.n_vetted_positive)
    neg = n - pos
    if not n:
        return out
    if pos < FEW_OF_A_CLASS:
        said = f"none of the {n} vetted labels is positive" if pos == 0 else f"only {pos} of the {n} vetted labels are positive"
        out.append(
            f"{said}: {few_positives_caveat(data, model)} Vet items from the top of the ranking next "
            "(bayeval.active.design or bayeval.select, or `bayeval select`) rather than more random ones."
        )
    if neg < FEW_OF_A_CLASS:
        said = f"none of the {n} vetted labels is negative" if neg == 0 else f"only {neg} of the {n} vetted labels are negative"
        out.append(
            f"{said}: how many of the flagged items are false positives "
            "rests largely on the prior, so precision and AP get wide intervals. Vet items from the middle and "
            "bottom of the ranking next (bayeval.active.design)."
        )
    return out


def _unvetted_categories(data) -> list[str]:
    """One sentence naming the categories without a single vetted item (none without categories)."""
    if not data.has_categories or not data.n_vetted:
        return []
    counts = data.counts().drop(index="total", errors="ignore")
    none = [str(c) for c in counts.index[counts["vetted"].to_numpy() == 0]]
    if not none:
        return []
    named = ", ".join(none[:5]) + (f", and {len(none) - 5} more" if len(none) > 5 else "")
    tags = "; in the label-flip model, also on their noisy labels" if data.noisy_labels is not None else ""
    return [
        f"no vetted item in {len(none)} of {len(counts)} categories ({named}): their metrics rest on the prior "
        f"(and, in a model pooled across categories, on the other categories' labels{tags}), not on a label of "
        "their own, so their intervals can miss where those categories differ from the rest. Vet some items of "
        "each of them next (bayeval.active.design, or `bayeval select`)."
    ]


def few_by_category(data, what: str = "the metric") -> list[str]:
    """One sentence naming the categories with fewer than :data:`FEW_OF_A_CLASS` vetted
    positives (one for negatives), empty without categories or when none has so few.

    The pool as a whole can hold plenty of each class while one category holds none:
    its metric then rests on the prior (the pooled curve, or the category's own), not
    on its labels.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import EvalData
    >>> y = np.tile([1.0, 0.0], 20); y[20:] = 0
    >>> few_by_category(EvalData(np.linspace(0, 1, 40), y, categories=["a"] * 20 + ["b"] * 20))[0].split(":")[0]
    'fewer than 5 vetted positives in 1 of 2 categories (b with 0)'
    """
    if not data.has_categories:
        return []
    counts = data.counts().drop(index="total", errors="ignore")
    out = []
    for col, which, where in (("vetted_positive", "positives", "the top"), ("vetted_negative", "negatives",
                                                                           "the middle and bottom")):
        low = counts[counts[col] < FEW_OF_A_CLASS][col].sort_values(kind="stable")
        if low.empty:
            continue
        named = ", ".join(f"{c} with {v}" for c, v in low.iloc[:5].items())
        more = f", and {low.size - 5} more" if low.size > 5 else ""
        out.append(
            f"fewer than {FEW_OF_A_CLASS} vetted {which} in {low.size} of {len(counts)} categories "
            f"({named}{more}): there {what} rests largely on the prior (or, in a model pooled across "
            f"categories, on the other categories), whatever the pool as a whole holds, so its interval is wide "
            f"and can miss where that category's scores are miscalibrated. Vet items from {where} of those "
            f"categories' rankings next."
        )
    return out


def squeezed_range(scores) -> tuple[float, float] | None:
    """The 1st and 99th percentiles of probabilities squeezed into a narrow band away from
    0 and 1 (narrower than :data:`SQUEEZED_RANGE`, above 0.02 and below 0.98), else None.

    Such probabilities come from strongly regularized models and are rarely calibrated:
    the default calibration curves then read them as an uncalibrated score
    (``transform="auto"`` standardizes them, as it does margins) instead of centring the
    prior on "the scores are calibrated".

    Examples
    --------
    >>> import numpy as np
    >>> squeezed_range(np.linspace(0.15, 0.48, 500))
    (0.1533, 0.4767)
    >>> squeezed_range(np.linspace(0.01, 0.9, 500)) is None, squeezed_range(np.linspace(-1, 1, 50)) is None
    (True, True)
    """
    s = np.asarray(scores, dtype=np.float64)
    if s.size < 20 or s.min() < 0 or s.max() > 1:
        return None
    lo, hi = np.quantile(s, [0.01, 0.99])
    if hi - lo < SQUEEZED_RANGE and lo > 0.02 and hi < 0.98:
        return round(float(lo), 4), round(float(hi), 4)
    return None


def saturated_share(scores) -> float | None:
    """The share of probabilities at exactly 0 or 1 when it is above :data:`SATURATED_SHARE`, else None.

    None also for scores that are not probabilities (outside [0, 1]) or fewer than 20.

    Examples
    --------
    >>> import numpy as np
    >>> saturated_share(np.r_[np.zeros(10), np.linspace(0.1, 0.9, 90)])
    0.1
    >>> saturated_share(np.linspace(0.01, 0.99, 100)) is None, saturated_share(np.linspace(-1, 1, 50)) is None
    (True, True)
    """
    s = np.asarray(scores, dtype=np.float64)
    if s.size < 20 or s.min() < 0 or s.max() > 1:
        return None
    share = float(np.mean((s <= 0.0) | (s >= 1.0)))
    return share if share > SATURATED_SHARE else None


def _score_shape(scores: np.ndarray) -> list[str]:
    s = np.asarray(scores, dtype=np.float64)
    if s.size >= 2 and s.min() == s.max():
        return [f"all {s.size} scores are equal ({s[0]:g}): the classifier ranks no item above another, so AP, "
                "P@K and the PR curve are those of a random ordering of the items and no threshold can separate "
                "them; only the share of positives is learned. Check that the right score column was given."]
    if s.size < 20 or s.min() < 0 or s.max() > 1:
        return []
    out = []
    saturated = saturated_share(s)
    if saturated is not None:
        out.append(
            f"{saturated:.0%} of the scores are exactly 0 or 1 (saturated probabilities): the classifier ties "
            "these items, so the metrics cannot rank them apart and the calibration curve sees them as one "
            "score each: the metrics are those of the ranking as given, ties included. A classifier whose "
            "probabilities saturate is usually over-confident well beyond the tied items, and the default's prior "
            "takes probabilities as calibrated: with few vetted labels the intervals can then be too narrow and "
            "miss (too high). Vet a few of the tied items, and more at random, before trusting them."
        )
    band = squeezed_range(s)
    if band is not None:
        lo, hi = band
        out.append(
            f"the probabilities are squeezed into [{lo:.2f}, {hi:.2f}] (1st to 99th percentile): a strongly "
            "regularized model squeezes its probabilities (they then rank much better than they claim), and so does "
            "a weak but calibrated one; the scores cannot tell which. The default fits both readings -- calibrated "
            "probabilities (transform='logit') and an uncalibrated score (standardized, transform='standardize', "
            "as it reads margins) -- and weighs them by the vetted labels; with few labels the interval can span "
            "both readings, or follow the wrong one. Vet items across the whole range of scores to tell them apart. "
            "If you know which it is, say so: bayeval.fit(data, transform='logit') or transform='standardize' "
            "(`--transform logit` on the command line)."
        )
    return out


def data_caveats(data: EvalData, model=None) -> list[str]:
    """Sentences on what the vetted labels and the scores cannot tell the model (empty when nothing).

    Five cases: vetted labels that run clearly against the score direction (:func:`reversed_scores`:
    positives scoring lower than negatives, said first; a model that reads several score columns names
    each column turned round: :func:`reversed_caveats`), no vetted label at all, a handful of vetted
    positives (or negatives; none of a class included), probabilities squeezed into a narrow range away from 0 and 1, and probabilities saturated
    at exactly 0 or 1. With categories, those with a handful of vetted labels of a class are named (when
    the pool as a whole has enough of each), and those with no vetted item at all (when it has not).
    Each sentence says what the case does to the interval and what to vet or do next.

    Parameters
    ----------
    data : EvalData
    model : optional
        The model fitted, or its posterior. A model whose prior reads a handful of vetted positives
        differently from the default's says how in its ``caveat_few_positives`` (e.g.
        :class:`bayeval.models.LabelFlip`, which does not take the scores as calibrated, a
        ``Stack(transform="standardize")``, or a stack whose candidates read it apart; see
        :func:`few_positives_caveat`); without one, the sentence is the default model's. A model
        that reads neither the vetted labels nor the scores as these sentences describe names the
        kinds that apply to it in ``data_caveat_kinds``, a subset of ``("labels", "scores")`` (the
        vetted-label sentences, the score-shape ones; e.g. an annotator-error posterior, which
        says what its gold items and annotations leave open in its own caveats, declares none). A model
        that reads several score columns (the joint model of :func:`bayeval.compare`) gives every
        sentence itself, each naming the column it is about, in its ``own_data_caveats(data)`` (None:
        these sentences).

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import EvalData
    >>> y = np.full(200, np.nan); y[:30] = 0; y[0] = 1
    >>> [c.split(":")[0] for c in data_caveats(EvalData(np.linspace(0.15, 0.45, 200), y))]
    ['only 1 of the 30 vetted labels are positive', 'the probabilities are squeezed into [0.15, 0.45] (1st to 99th percentile)']
    >>> [c.split(":")[0] for c in data_caveats(EvalData(np.linspace(0.01, 0.99, 200), np.full(200, np.nan)))]
    ['no vetted labels']
    """
    kinds = getattr(model, "data_caveat_kinds", None)
    kinds = DATA_CAVEAT_KINDS if kinds is None else tuple(kinds)
    unknown = [k for k in kinds if k not in DATA_CAVEAT_KINDS]
    if unknown:
        raise ValueError(f"`data_caveat_kinds` of {type(model).__name__} names {unknown}; expected a subset of "
                         f"{DATA_CAVEAT_KINDS}.")
    own = getattr(model, "own_data_caveats", None)
    said = own(data) if callable(own) else None
    if said is not None:  # a model that reads several score columns: in its own words, each column named
        return list(said)
    reversed_ = reversed_caveats(data, model) if "labels" in kinds else []
    return reversed_ + (_few_labels(data, model) if "labels" in kinds else []) + (
        _score_shape(data.scores) if "scores" in kinds else [])
