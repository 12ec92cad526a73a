"""Keep a fit: save a posterior to one netCDF file and load it back.

:func:`bayeval.save` writes, and :func:`bayeval.load` reads, one netCDF (HDF5) file
through ArviZ's ``InferenceData.to_netcdf``:

* the root of the file is the posterior's ``InferenceData`` (``posterior``,
  ``log_likelihood``, ``sample_stats``...), so ``arviz.from_netcdf(path)`` reads the
  fit as any other ArviZ file (the extra ``bayeval_*`` groups come along);
* ``bayeval_data`` holds the arrays of the data container the model was fitted to
  (an :class:`~bayeval.EvalData`, :class:`~bayeval.annotators.AnnotationData` or
  :class:`~bayeval.rankings.PairwiseVotes`);
* the root's attributes (all prefixed ``bayeval_``) hold the model's class (module and
  qualified name), its ``get_params()`` as JSON, the seed of the label draws (a
  ``numpy.random.SeedSequence`` as its entropy, spawn key and pool size), the
  :class:`~bayeval.core.sampling.SamplingInfo` and the convergence dict as JSON (a table
  in it, such as a :class:`~bayeval.models.ScoreMixture` fit's ``chains``, by column), and
  the provenance record of :func:`bayeval._version.provenance` (the versions of
  bayeval, PyMC, PyTensor, NumPy, ArviZ and xarray that wrote the file, the date and
  the data's fingerprint);
* the root's ``bayeval_sha256`` attribute holds the SHA-256 of everything else in the
  file (every array, string and attribute, as read back after writing): :func:`load`
  recomputes it and refuses a file whose contents changed since it was saved
  (:class:`DamagedFitError`). Files saved before this attribute existed load unchecked;
* a plug-in posterior (:meth:`~bayeval.Posterior.from_probabilities`) keeps its
  probabilities in ``bayeval_probabilities``;
* a :class:`~bayeval.models.StackedPosterior` keeps its comparison table in
  ``bayeval_comparison`` and each candidate's fit, saved the same way, under
  ``bayeval_candidates/c0``, ``bayeval_candidates/c1``... (its name in that group's
  ``bayeval_name`` attribute);
  ``arviz.InferenceData.from_netcdf(path, base_group="bayeval_candidates/c0")`` reads
  one candidate's InferenceData.

:func:`load` rebuilds the model from its class and parameters and the data container
from its arrays, then asks the model for its posterior
(``model._posterior(data, idata, sampling=..., random_seed=...)``) and restores
``sampling``, ``convergence`` and ``model_spec``: no sampling happens, and the label
draws -- hence every metric -- are the same, draw for draw, as those of the posterior
that was saved. A model whose ``_posterior`` adds variables to the sampled draws names
them in ``_posterior_adds`` (e.g. :class:`~bayeval.annotators.AnnotatorError`'s gold-only
mixture): they are dropped before the hook runs again, and a rebuilt posterior whose
draws differ from the saved ones is an error, never a silent change.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import math
import os
import tempfile
import warnings
from dataclasses import asdict
from pathlib import Path

import arviz as az
import numpy as np
import pandas as pd
import xarray as xr

from ._version import provenance

__all__ = ["save", "load", "DamagedFitError", "FORMAT", "FORMAT_VERSION"]

#: The value of the ``bayeval_format`` attribute that marks a file as a bayeval fit.
FORMAT = "bayeval-fit"
#: Incremented when the layout changes in a way older readers cannot read.
FORMAT_VERSION = 1

_DATA = "bayeval_data"
_PROBS = "bayeval_probabilities"
_COMPARISON = "bayeval_comparison"
_CANDIDATES = "bayeval_candidates"
_OURS = (_DATA, _PROBS, _COMPARISON, _CANDIDATES)
_ENGINE = "h5netcdf"
#: The root attribute holding the SHA-256 of the file's contents (see :func:`file_digest`).
CHECKSUM = "bayeval_sha256"

#: Module paths that earlier versions of bayeval wrote into saved files, and where those
#: classes live now: a fit saved before a module moved still loads.
MOVED_MODULES = {
    "bayeval.models._base": "bayeval.core.model",
    "bayeval.models._sampling": "bayeval.core.sampling",
    "bayeval.posterior": "bayeval.core.posterior",
    "bayeval.data": "bayeval.core.data",
    "bayeval.models.annotator": "bayeval.annotators.model",
    "bayeval.models.human_ranking": "bayeval.rankings.model",
}


# ------------------------------------------------------------------ JSON of parameters


def _encode(value, where: str):
    """A JSON-able form of a model parameter that :func:`_decode` turns back into it."""
    from .core.model import Model

    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        v = float(value)
        return v if math.isfinite(v) else {"__float__": repr(v)}
    if isinstance(value, tuple):
        return {"__tuple__": [_encode(v, f"{where}[{i}]") for i, v in enumerate(value)]}
    if isinstance(value, list):
        return [_encode(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        bad = [k for k in value if not isinstance(k, str)]
        if bad:
            raise TypeError(f"bayeval.save: {where} is a dict with non-string key(s) {bad[:3]}; it cannot be stored.")
        out = {k: _encode(v, f"{where}[{k!r}]") for k, v in value.items()}
        return {"__dict__": out} if any(k.startswith("__") for k in out) else out
    if isinstance(value, np.ndarray):
        return {"__ndarray__": _encode(value.tolist(), where), "dtype": value.dtype.str}
    if isinstance(value, Model):
        cls = type(value)
        return {"__model__": f"{cls.__module__}:{cls.__qualname__}",
                "params": _encode(value.get_params(), f"{where}.get_params()")}
    if isinstance(value, pd.DataFrame):  # a table in a diagnostics dict (ScoreMixture's chain_summary())
        return {"__dataframe__": {
            "columns": _encode(list(value.columns), f"{where}.columns"),
            "dtypes": [str(t) for t in value.dtypes],
            "data": [_encode(value.iloc[:, j].tolist(), f"{where}[{c!r}]") for j, c in enumerate(value.columns)],
            "index": _encode(value.index.tolist(), f"{where}.index"),
            "index_dtype": str(value.index.dtype),
            "index_name": _encode(value.index.name, f"{where}.index.name"),
        }}
    raise TypeError(
        f"bayeval.save: {where} is {_a(type(value).__name__)} ({_short(value)}), which cannot be stored as JSON; "
        f"{_owner(where)} must hold only numbers, strings, None, lists, tuples, dicts, arrays, tables (DataFrames) "
        "or models."
    )


def _a(name: str) -> str:
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def _short(value, limit: int = 80) -> str:
    text = " ".join(repr(value).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _owner(where: str) -> str:
    """Who put the value at ``where`` (``post.convergence['chains']``, ``Calibration.get_params()[...]``)."""
    if ".get_params()" in where:
        return f"{where[: where.index('.get_params()')]}.get_params()"
    return f"`{where.split('[', 1)[0]}`"


def _decode(value):
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "__tuple__" in value:
        return tuple(_decode(v) for v in value["__tuple__"])
    if "__float__" in value:
        return float(value["__float__"])
    if "__dict__" in value:
        return {k: _decode(v) for k, v in value["__dict__"].items()}
    if "__ndarray__" in value:
        return np.asarray(_decode(value["__ndarray__"]), dtype=np.dtype(value["dtype"]))
    if "__model__" in value:
        return _make_model(value["__model__"], _decode(value["params"]))
    if "__dataframe__" in value:
        t = value["__dataframe__"]
        index = pd.Index(_decode(t["index"]), dtype=t["index_dtype"], name=_decode(t["index_name"]))
        frame = pd.DataFrame({j: pd.Series(_decode(col), index=index, dtype=dtype)
                              for j, (col, dtype) in enumerate(zip(t["data"], t["dtypes"], strict=True))}, index=index)
        if t["columns"]:
            frame.columns = pd.Index(_decode(t["columns"]))
        return frame
    return {k: _decode(v) for k, v in value.items()}


#: Parameters a model class gained after fits were first saved, with the value that fits
#: saved before then were made with (not the class's current default): a reloaded fit says
#: which model it was drawn from, not today's default.
FORMER_DEFAULTS = {
    "JointCalibration": {"weights": "simplex", "intercept_sd": 1.0, "slope_sd": 1.0, "slopes": "each",
                         "weight_centre": "equal", "saturated": "merged", "penalty": "none", "asymptotes": False},
    "Calibration": {"intercept_sd": None, "slope_sd": 1.0, "asymptotes": False, "saturated": "merged"},
    "MixtureCalibration": {"saturated": "merged"},
}


def _make_model(spec: str, params: dict):
    """The model ``spec`` names, built from its saved parameters (see :data:`FORMER_DEFAULTS`)."""
    cls = _model_class(spec)
    for key, value in FORMER_DEFAULTS.get(cls.__name__, {}).items():
        params.setdefault(key, value)
    return cls(**params)


def _model_class(spec: str):
    """The Model subclass named ``module:qualname`` (only bayeval models and their subclasses)."""
    from .core.model import Model

    module, _, qualname = spec.partition(":")
    module = MOVED_MODULES.get(module, module)
    # a class moved between the modules of one of bayeval's packages is still exported by its face
    tries = [module] + ([module.rsplit(".", 1)[0]] if module.startswith("bayeval.") and module.count(".") > 1 else [])
    for i, where in enumerate(tries):
        try:
            obj = importlib.import_module(where)
            for part in qualname.split("."):
                obj = getattr(obj, part)
            break
        except (ImportError, AttributeError) as exc:
            if i == len(tries) - 1:
                raise ValueError(
                    f"the model class {spec!r} cannot be imported ({exc}); install the package that defines it."
                ) from exc
    if not (isinstance(obj, type) and issubclass(obj, Model)):
        raise ValueError(f"{spec!r} is not a bayeval model class (a subclass of bayeval.core.model.Model).")
    return obj


def _seed_json(seed) -> str:
    """The JSON of a posterior's ``random_seed``: None, an int, or a SeedSequence's entropy,
    spawn key and pool size (what makes a spawned child's stream its own)."""
    if isinstance(seed, np.random.SeedSequence):
        return json.dumps({"__seed_sequence__": {"entropy": _entropy_json(seed.entropy),
                                                 "spawn_key": [int(k) for k in seed.spawn_key],
                                                 "pool_size": int(seed.pool_size)}})
    return json.dumps(None if seed is None else int(seed))


def _entropy_json(entropy):
    """A SeedSequence's entropy (an int, or a sequence of them) as JSON-able ints."""
    return int(entropy) if np.ndim(entropy) == 0 else [int(e) for e in entropy]


def _seed_from_json(text: str):
    seed = json.loads(text)
    if isinstance(seed, dict) and "__seed_sequence__" in seed:
        s = seed["__seed_sequence__"]
        return np.random.SeedSequence(s["entropy"], spawn_key=tuple(s["spawn_key"]), pool_size=s["pool_size"])
    return seed


def params_json(value, where: str) -> str:
    return json.dumps(_encode(value, where))


def _unjson(text: str):
    return _decode(json.loads(text))


# ------------------------------------------------------------------ data containers


def _data_dataset(container) -> xr.Dataset:
    """The arrays of a data container as a Dataset (attribute ``container`` names its type)."""
    from .core.data import EvalData
    from .rankings.model import PairwiseVotes

    if isinstance(container, EvalData):
        f = container._fields()
        dims = {"s": ("item",), "lab": ("item",), "noisy": ("item",), "pred": ("item",), "codes": ("item",),
                "names": ("category",), "feats": ("item", "feature"), "fnames": ("feature",), "ids": ("item",)}
        ds = xr.Dataset({k: (dims[k], np.asarray(v)) for k, v in f.items() if v is not None})
        ds.attrs["container"] = "EvalData"
        ds.attrs["dtypes"] = json.dumps({k: np.asarray(v).dtype.str for k, v in f.items() if v is not None})
        return ds
    if isinstance(container, PairwiseVotes):
        from .rankings.model import pair_labels
        from .rankings.percentile import numeric_array

        votes = numeric_array(container.votes, "votes")
        labels = pair_labels(container.votes, votes.shape[0])
        cols = getattr(container.votes, "columns", None)
        ann = np.asarray(list(cols)) if cols is not None else np.arange(votes.shape[1])
        if ann.dtype.kind not in "iuU":
            ann = ann.astype(str)
        ds = xr.Dataset({"votes": (("pair", "annotator"), votes)}, coords={"pair": labels, "annotator": ann})
        if container.confidence is not None:
            ds["confidence"] = (("pair", "annotator"), numeric_array(container.confidence, "confidence"))
        ds.attrs["container"] = "PairwiseVotes"
        ds.attrs["dtypes"] = json.dumps({"pair": np.asarray(labels).dtype.str, "annotator": ann.dtype.str})
        ds.attrs["frame"] = int(isinstance(container.votes, pd.DataFrame))
        return ds
    raise TypeError(f"bayeval.save: cannot store a data container of type {type(container).__name__}.")


def _annotation_dataset(obs, scores, item_ids=None) -> xr.Dataset:
    """An AnnotationData's arrays, from the validated form an annotator posterior keeps, with its
    items' ids (``item_ids``, the posterior's ``data.item_ids``)."""
    ds = xr.Dataset(
        {"predictions": ("item", np.asarray(obs.predictions)),
         "annotations": (("item", "annotator"), np.asarray(obs.annotations)),
         "gold": ("item", np.asarray(obs.gold))},
        coords={"annotator": np.asarray(obs.annotator_names).astype(str)},
    )
    if scores is not None:
        ds["scores"] = ("item", np.asarray(scores, dtype=np.float64))
    if item_ids is not None:
        ds["ids"] = ("item", np.asarray(item_ids))
        ds.attrs["dtypes"] = json.dumps({"ids": np.asarray(item_ids).dtype.str})
    ds.attrs["container"] = "AnnotationData"
    return ds


def _restore_dtype(arr: np.ndarray, dtype: str) -> np.ndarray:
    dt = np.dtype(dtype)
    if dt.kind == "U":
        return np.asarray([str(v) for v in np.asarray(arr).ravel()], dtype=dt).reshape(np.shape(arr))
    return np.asarray(arr).astype(dt)


def _container(ds: xr.Dataset, path):
    """The data container stored in ``ds`` (see :func:`_data_dataset`)."""
    kind = ds.attrs.get("container")
    if kind == "EvalData":
        from .core.data import EvalData, frozen_array

        dtypes = json.loads(ds.attrs["dtypes"])
        keys = ("s", "lab", "noisy", "pred", "codes", "names", "feats", "fnames", "ids")
        fields = {k: (frozen_array(_restore_dtype(ds[k].values, dtypes[k])) if k in ds else None) for k in keys}
        return EvalData._trusted(**fields)
    if kind == "AnnotationData":
        from .annotators.data import AnnotationData

        ann = pd.DataFrame(ds["annotations"].values, columns=[str(a) for a in ds["annotator"].values])
        scores = ds["scores"].values if "scores" in ds else None
        ids = _restore_dtype(ds["ids"].values, json.loads(ds.attrs["dtypes"])["ids"]) if "ids" in ds else None
        return AnnotationData(ds["predictions"].values, ann, gold=ds["gold"].values, scores=scores, item_ids=ids)
    if kind == "PairwiseVotes":
        from .rankings.model import PairwiseVotes

        dtypes = json.loads(ds.attrs["dtypes"])
        pairs = _restore_dtype(ds["pair"].values, dtypes["pair"])
        ann = _restore_dtype(ds["annotator"].values, dtypes["annotator"])
        votes, conf = ds["votes"].values, (ds["confidence"].values if "confidence" in ds else None)
        if int(ds.attrs.get("frame", 0)):
            votes = pd.DataFrame(votes, index=pairs, columns=ann)
            conf = None if conf is None else pd.DataFrame(conf, index=pairs, columns=ann)
        return PairwiseVotes(votes, conf)
    raise ValueError(f"{path}: group {_DATA!r} holds an unknown data container {kind!r}.")


# ------------------------------------------------------------------------ saving


def _kind(post) -> str:
    from .core.model import Model
    from .core.posterior import Posterior
    from .models.stacking import StackedPosterior

    if isinstance(post, StackedPosterior):
        return "stack"
    if isinstance(getattr(post, "model_spec", None), Model):
        return "model"
    if isinstance(post, Posterior) and getattr(post, "_plugin_p", None) is not None:
        return "probabilities"
    from .compare.comparison import Comparison

    if isinstance(post, Comparison):
        raise ValueError(
            "bayeval.save: a Comparison is not saved itself; save its joint posterior, "
            "`bayeval.save(cmp.posterior, path)`, and rebuild the comparison from the file with "
            f"`bayeval.Comparison(bayeval.load(path), order={post.names!r})`: the same draws, so the same "
            "P(better) and every other figure."
        )
    raise ValueError(
        f"bayeval.save: this {type(post).__name__} has no `model_spec`: only posteriors returned by a model's "
        "fit() (or bayeval.fit), and Posterior.from_probabilities(...), can be saved and rebuilt."
    )


def _fit_container(post):
    """The data container the model was fitted to, as a Dataset."""
    if hasattr(post, "_observed"):  # AnnotatorError: its Posterior's EvalData is derived from an AnnotationData
        obs = post._observed
        scores = None
        if getattr(post.model_spec, "n_classes", 2) == 2:
            s = post.data.scores
            if not np.array_equal(s, obs.predictions.astype(np.float64)):
                scores = s
        return _annotation_dataset(obs, scores, post.data.item_ids)
    data = getattr(post, "data", None)
    if data is None:
        raise ValueError(
            f"bayeval.save: this {type(post).__name__} does not keep the data it was fitted to (`post.data`); "
            "fit it with the model's fit() to save it."
        )
    return _data_dataset(data)


def _clean(ds: xr.Dataset) -> xr.Dataset:
    ds = ds.copy()
    ds.encoding = {}
    for v in ds.variables.values():
        v.encoding = {}
    return ds


def _meta(post, kind: str) -> dict:
    record = provenance(getattr(post, "data", None))
    entropy = getattr(post, "_entropy", None)
    sampling = getattr(post, "sampling", None)
    meta = {
        "bayeval_format": FORMAT,
        "bayeval_format_version": FORMAT_VERSION,
        "bayeval_kind": kind,
        "bayeval_posterior_class": f"{type(post).__module__}:{type(post).__qualname__}",
        "bayeval_model_name": str(getattr(post, "model", "")),
        "bayeval_random_seed": _seed_json(getattr(post, "random_seed", None)),
        # the label draws' entropy: an int (read as before) or, from a SeedSequence([...]), a list of ints
        "bayeval_entropy": "" if entropy is None else json.dumps(_entropy_json(entropy)),
        "bayeval_sampling": json.dumps(None if sampling is None else _encode(asdict(sampling), "post.sampling")),
        "bayeval_convergence": params_json(getattr(post, "convergence", None), "post.convergence"),
        "bayeval_versions": json.dumps(record["versions"]),
        "bayeval_provenance": json.dumps(record),
    }
    spec = getattr(post, "model_spec", None)
    if spec is not None:
        cls = type(spec)
        params = spec.get_params()
        text = params_json(params, f"{cls.__name__}.get_params()")
        again = params_json(_model_class(f"{cls.__module__}:{cls.__qualname__}")(**_unjson(text)).get_params(), "")
        if again != text:
            raise ValueError(
                f"bayeval.save: {cls.__name__}'s parameters do not survive a round trip: get_params() gave {text}, "
                f"the model rebuilt from them gives {again}."
            )
        meta["bayeval_model_class"] = f"{cls.__module__}:{cls.__qualname__}"
        meta["bayeval_model_params"] = text
    return meta


def _write(post, filename: str, base: str, *, first: bool) -> None:
    kind = _kind(post)
    meta = _meta(post, kind)
    groups = {g: _clean(post.idata[g]) for g in post.idata.groups()}
    clash = sorted(set(groups) & set(_OURS))
    if clash:
        raise ValueError(f"bayeval.save: the posterior's InferenceData has group(s) {clash}, names bayeval reserves.")
    groups[_DATA] = _fit_container(post)
    if kind == "probabilities":
        p = np.asarray(post._plugin_p)
        groups[_PROBS] = xr.Dataset({"p": (("item",) if p.ndim == 1 else ("sample", "item"), p)})
    if kind == "stack":
        table = post.comparison
        ds = xr.Dataset.from_dataframe(table.rename_axis("candidate"))
        ds.attrs["errors"] = json.dumps(table.attrs.get("errors", {}))
        ds.attrs["index_name"] = str(table.index.name)
        groups[_COMPARISON] = ds
        meta["bayeval_candidate_names"] = json.dumps(list(post.candidates))
        meta["bayeval_chains"] = int(post.n_chains)
        meta["bayeval_draws"] = int(post.n_draws)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the bayeval_* groups are not part of ArviZ's schema
        idata = az.InferenceData(attrs=meta, **groups)
        idata.to_netcdf(filename, base_group=base, overwrite_existing=first)
    if kind == "stack":
        for i, (name, cand) in enumerate(post.candidates.items()):
            sub = f"{base.rstrip('/')}/{_CANDIDATES}/c{i}"
            _write(cand, filename, sub, first=False)
            xr.Dataset(attrs={"bayeval_name": name}).to_netcdf(filename, mode="a", engine=_ENGINE, group=sub)


def _has_reference(dt: np.dtype) -> bool:
    """Whether an HDF5 type holds object references (file addresses, not content)."""
    import h5py

    if h5py.check_ref_dtype(dt) is not None:
        return True
    base = h5py.check_vlen_dtype(dt)
    if base is not None and base is not str and base is not bytes:
        return _has_reference(np.dtype(base))
    return dt.fields is not None and any(_has_reference(f[0]) for f in dt.fields.values())


def _feed(h, value) -> None:
    """Add one value (a dataset's or an attribute's, as h5py reads it) to the hash ``h``."""
    import h5py

    if isinstance(value, h5py.Empty):
        h.update(b"E" + np.dtype(value.dtype).str.encode())
        return
    a = np.asarray(value)
    h.update(repr(a.shape).encode())
    if a.dtype.kind in "OSU":  # strings: h5py gives str or bytes, by its version; hash their UTF-8 bytes
        for v in a.ravel():
            b = v.encode("utf-8") if isinstance(v, str) else bytes(v)
            h.update(len(b).to_bytes(8, "little") + b)
    else:
        h.update(a.dtype.str.encode() + np.ascontiguousarray(a).tobytes())


def _file_digest(filename: str) -> str:
    """The SHA-256 of a saved fit's contents: every group's and dataset's name, values and
    attributes (all but :data:`CHECKSUM` and the dimension scales' object references), in name order.

    It is taken on what h5py reads, not on the file's bytes, so it does not depend on where
    HDF5 placed things; a changed byte in any array, string or attribute changes it."""
    import h5py

    h = hashlib.sha256()

    def visit(name, obj):
        h.update(b"\0N" + name.encode("utf-8"))
        if isinstance(obj, h5py.Dataset):
            _feed(h, obj[()])
        for key in sorted(obj.attrs):
            if key == CHECKSUM or _has_reference(obj.attrs.get_id(key).dtype):
                continue
            h.update(b"\0A" + key.encode("utf-8"))
            _feed(h, obj.attrs[key])

    with h5py.File(filename, "r") as f:
        visit("/", f)
        f.visititems(visit)
    return h.hexdigest()


def _seal(filename: str) -> None:
    """Store the file's :func:`_file_digest` in its root attribute :data:`CHECKSUM`."""
    import h5py

    digest = _file_digest(filename)
    with h5py.File(filename, "a") as f:
        f.attrs[CHECKSUM] = digest


def save(post, path, *, overwrite: bool = False) -> Path:
    """Save a posterior (and what rebuilds it) to one netCDF file; see the module docs.

    Parameters
    ----------
    post : Posterior or RankingPosterior
        A fit returned by a model's ``fit()`` or :func:`bayeval.fit`, or a
        :meth:`~bayeval.Posterior.from_probabilities` posterior. For a
        :func:`bayeval.compare` result ``cmp``, save ``cmp.posterior`` and rebuild it with
        ``bayeval.Comparison(bayeval.load(path), order=cmp.names)``.
    path : str or path-like
        The file to write (``.nc`` by convention); a leading ``~`` is the home folder.
    overwrite : bool, default False
        Replace ``path`` if it exists; otherwise an existing file raises
        ``FileExistsError``.

    Returns
    -------
    pathlib.Path
        The file written. It is written to a temporary file first and moved into place,
        so a failed save never leaves a half-written file behind; its last step stores
        the SHA-256 of the contents, which :func:`load` checks.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> import arviz as az
    >>> from bayeval import EvalData, Posterior
    >>> from bayeval.persist import save
    >>> post = Posterior.from_probabilities(EvalData([0.9, 0.2, 0.4], [1, np.nan, np.nan]), [1, 0.2, 0.4],
    ...                                     draws=50, random_seed=0)
    >>> path = save(post, os.path.join(tempfile.mkdtemp(), "fit.nc"))
    >>> az.from_netcdf(path).attrs["bayeval_kind"]
    'probabilities'
    >>> save(post, path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    FileExistsError: bayeval.save: ... already exists; pass overwrite=True to replace it.
    """
    path = Path(os.fspath(path)).expanduser()  # "~/fits/fit.nc" is in the home folder, as in a shell
    if path.is_dir():
        raise IsADirectoryError(f"bayeval.save: {path} is a folder; give a file name such as {path / 'fit.nc'}.")
    if path.exists() and not overwrite:
        raise FileExistsError(f"bayeval.save: {path} already exists; pass overwrite=True to replace it.")
    if not path.parent.exists():
        raise FileNotFoundError(f"bayeval.save: the folder {path.parent} does not exist; create it first.")
    fd, tmp = tempfile.mkstemp(suffix=".nc.tmp", dir=path.parent)
    os.close(fd)
    try:
        _write(post, tmp, "/", first=True)
        _seal(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return path


# ------------------------------------------------------------------------ loading


class DamagedFitError(ValueError):
    """A saved fit that is an HDF5 file but cannot be read through (truncated or damaged bytes).

    Raised by :func:`load` when HDF5 fails to read the file, or when its contents no longer
    match the SHA-256 checksum :func:`save` stored in it (a changed byte in an array, a
    string or an attribute); the message names the file and says to save the fit again.

    Examples
    --------
    >>> import numpy as np, os, tempfile
    >>> from bayeval import EvalData, Posterior
    >>> from bayeval.persist import DamagedFitError, load, save
    >>> post = Posterior.from_probabilities(EvalData([0.9, 0.2, 0.4], [1, np.nan, np.nan]), [1, 0.2, 0.4],
    ...                                     draws=50, random_seed=0)
    >>> path = save(post, os.path.join(tempfile.mkdtemp(), "fit.nc"))
    >>> data = path.read_bytes()
    >>> cut = path.with_name("cut.nc")
    >>> _ = cut.write_bytes(data[: len(data) // 2])
    >>> try:
    ...     load(cut)
    ... except DamagedFitError as exc:
    ...     print("damaged or truncated bayeval fit" in str(exc))
    True
    """


def _damaged(shown, why: str) -> str:
    return (f"{shown} is a damaged or truncated bayeval fit ({why}); "
            "save the fit again (`bayeval report ... --save PATH` or `bayeval.save(post, path)`).")


def _groups_and_attrs(filename: str, base: str) -> tuple[list[str], dict]:
    import h5netcdf

    with h5netcdf.File(filename, mode="r") as f:
        node = f if base == "/" else f[base]
        names = list(node.groups)
    with xr.open_dataset(filename, engine=_ENGINE, group=base) as ds:
        attrs = dict(ds.attrs)
    return names, attrs


def _read_group(filename: str, group: str) -> xr.Dataset:
    with xr.open_dataset(filename, engine=_ENGINE, group=group) as ds:
        return _clean(ds.load())


def _read(filename: str, shown, base: str):
    names, attrs = _groups_and_attrs(filename, base)
    where = "" if base == "/" else f" (group {base})"
    if attrs.get("bayeval_format") != FORMAT:
        raise ValueError(
            f"{shown}{where} is not a bayeval fit: it has no bayeval_format = {FORMAT!r} attribute (its groups: "
            f"{names}). bayeval.load reads files written by bayeval.save(post, path); for a plain ArviZ file use "
            "arviz.from_netcdf."
        )
    version = int(attrs.get("bayeval_format_version", 0))
    if version > FORMAT_VERSION:
        raise ValueError(
            f"{shown}{where} was written in bayeval fit format {version}, newer than this bayeval reads "
            f"({FORMAT_VERSION}); upgrade bayeval (the file was written by {attrs.get('bayeval_versions')})."
        )
    kind = attrs.get("bayeval_kind")
    needed = ["posterior", _DATA] + ({"probabilities": [_PROBS], "stack": [_COMPARISON, _CANDIDATES]}.get(kind, []))
    missing = [g for g in needed if g not in names]
    if kind == "model":
        missing += [a for a in ("bayeval_model_class", "bayeval_model_params") if a not in attrs]
    if kind not in ("model", "probabilities", "stack"):
        missing.append("bayeval_kind (one of 'model', 'probabilities', 'stack')")
    if missing:
        raise ValueError(
            f"{shown}{where} is not a complete bayeval fit: it lacks {missing} (groups found: {names}). "
            "Save the posterior again with bayeval.save(post, path)."
        )
    if base == "/" and CHECKSUM in attrs:  # files saved before bayeval kept a checksum load unchecked
        digest = _file_digest(filename)
        if digest != attrs[CHECKSUM]:
            raise DamagedFitError(_damaged(
                shown, f"its contents do not match the SHA-256 checksum recorded when it was saved: "
                f"{digest[:16]}... now, {str(attrs[CHECKSUM])[:16]}... then"
            ))
    groups = {g: _read_group(filename, f"{base.rstrip('/')}/{g}") for g in names if g not in _OURS}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        idata = az.InferenceData(**groups)
    data = _container(_read_group(filename, f"{base.rstrip('/')}/{_DATA}"), shown)
    seed = _seed_from_json(attrs["bayeval_random_seed"])
    sampling = _sampling_info(json.loads(attrs["bayeval_sampling"]))
    convergence = _unjson(attrs["bayeval_convergence"])

    if kind == "probabilities":
        from .core.posterior import Posterior

        p = _read_group(filename, f"{base.rstrip('/')}/{_PROBS}")["p"].values
        post_ = idata.posterior
        post = Posterior.from_probabilities(data, p, draws=int(post_.sizes["draw"]), chains=int(post_.sizes["chain"]),
                                            random_seed=seed, check=False)
    elif kind == "stack":
        post = _read_stack(filename, shown, base, attrs, data, idata, seed)
    else:
        model = _make_model(attrs["bayeval_model_class"], _unjson(attrs["bayeval_model_params"]))
        saved = idata.posterior
        added = [v for v in getattr(model, "_posterior_adds", ()) if v in saved]
        if added:  # the sampled draws, as the model's hook got them after the fit
            idata = _with_posterior(idata, saved.drop_vars(added))
        post = model._posterior(data, idata, sampling=sampling, random_seed=seed)
        if not post.idata.posterior.equals(saved):
            raise ValueError(
                f"{shown}{where}: rebuilding the {type(model).__name__} posterior from the saved draws changed them "
                f"(variables {sorted(post.idata.posterior.data_vars)} against {sorted(saved.data_vars)} saved); "
                "the model's _posterior() is not reproducible from its own output. Please report this."
            )
        post.model_spec = model
        # groups the fit added after the model's hook (log_likelihood), and any the hook left out
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for g in idata.groups():
                if g not in post.idata.groups():
                    post.idata.add_groups({g: idata[g]})
    if attrs.get("bayeval_entropy"):
        entropy = json.loads(attrs["bayeval_entropy"])
        post._entropy = entropy if isinstance(entropy, int) else [int(e) for e in entropy]
    post.sampling = sampling
    post.convergence = convergence
    if getattr(post, "sampler", None) is None:  # which sampler made the draws, as the fit said
        if kind == "stack":
            used = (getattr(c, "sampler", None) for c in post.candidates.values())
            post.sampler = " / ".join(dict.fromkeys(u for u in used if u)) or None
        elif sampling is not None:
            post.sampler = sampling.sampler
    return post


def _with_posterior(idata, posterior: xr.Dataset):
    groups = {g: idata[g] for g in idata.groups() if g != "posterior"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return az.InferenceData(posterior=posterior, **groups)


def _sampling_info(d):
    from .core.sampling import SamplingInfo

    if d is None:
        return None
    return SamplingInfo(**_decode(d))


def _read_stack(filename, shown, base, attrs, data, idata, seed):
    from .models.stacking import Stack, StackedPosterior

    names = json.loads(attrs["bayeval_candidate_names"])
    cands = {}
    for i, name in enumerate(names):
        cands[name] = _read(filename, shown, f"{base.rstrip('/')}/{_CANDIDATES}/c{i}")
    ds = _read_group(filename, f"{base.rstrip('/')}/{_COMPARISON}")
    table = ds.to_dataframe()
    table.index = pd.Index(table.index.astype(str), name=ds.attrs.get("index_name", "candidate"))
    table["flagged"] = table["flagged"].astype(bool)
    table.attrs["errors"] = json.loads(ds.attrs.get("errors", "{}"))
    ranked = table.loc[names].sort_values("weight", ascending=False, kind="stable")
    post = StackedPosterior(data, cands, ranked, chains=int(attrs["bayeval_chains"]), draws=int(attrs["bayeval_draws"]),
                            random_seed=seed)
    post.comparison = table
    post.idata = idata  # the saved draws (candidate, source_draw) and log-likelihood, as they were
    post.model_spec = Stack(**_unjson(attrs["bayeval_model_params"]))
    return post


def load(path):
    """Load a posterior saved with :func:`bayeval.save`, without sampling again.

    The model is rebuilt from its class and parameters, the data container from its
    arrays, and the posterior from the model, the data and the saved draws; its label
    draws use the saved seed, so every metric equals, draw for draw, that of the
    posterior that was saved.

    Parameters
    ----------
    path : str or path-like
        The file :func:`save` wrote; a leading ``~`` is the home folder.

    Returns
    -------
    Posterior or RankingPosterior
        Of the class the model gives (``SPEPosterior``, ``CalibrationPosterior``,
        ``StackedPosterior``...), with ``model_spec``, ``sampling``, ``convergence``,
        ``random_seed`` and ``data`` as after the fit.

    Raises
    ------
    FileNotFoundError
        ``path`` does not exist.
    ValueError
        ``path`` is not a bayeval fit (not netCDF, or the bayeval attributes and groups
        are missing); the message names the file and what is missing.
    DamagedFitError
        (a ``ValueError``) ``path`` is an HDF5 file that cannot be read through: cut
        short (a copy or download that stopped) or with damaged bytes. The message
        names the file and the HDF5 error, or says that its contents do not match the
        SHA-256 checksum stored at save (so a changed byte in a string, such as an item
        id, or in an attribute, such as the seed, is refused too, not loaded as another
        fit). All of the file is read here, so a damaged file fails at ``load`` and
        never later, when a group is first used. Files saved by a bayeval without the
        checksum load unchecked.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> import bayeval as be
    >>> data = be.EvalData([0.9, 0.8, 0.3, 0.1], [1, np.nan, np.nan, 0])
    >>> post = be.Posterior.from_probabilities(data, [1, 0.6, 0.3, 0], draws=100, random_seed=0)
    >>> path = os.path.join(tempfile.mkdtemp(), "fit.nc")
    >>> _ = be.save(post, path)
    >>> again = be.load(path)
    >>> bool((again.metric("average_precision") == post.metric("average_precision")).all())
    True
    """
    shown = os.path.expanduser(os.fspath(path))
    if not os.path.exists(shown):
        raise FileNotFoundError(f"bayeval.load: {shown} does not exist.")
    if os.path.isdir(shown):
        raise IsADirectoryError(f"bayeval.load: {shown} is a folder; give the .nc file that bayeval.save wrote.")
    try:
        import h5py

        ok = h5py.is_hdf5(shown)
    except OSError:
        ok = False
    if not ok:
        raise ValueError(
            f"{shown} is not a bayeval fit: it is not a netCDF4/HDF5 file. bayeval.load reads files written by "
            "bayeval.save(post, path)."
        )
    try:  # every group is read into memory here (_read_group loads it): damage shows now, not at first use
        return _read(shown, shown, "/")
    except (OSError, RuntimeError, KeyError, UnicodeDecodeError, json.JSONDecodeError) as exc:  # h5py/HDF5 errors
        raise DamagedFitError(_damaged(shown, f"{type(exc).__name__}: {exc}")) from exc
