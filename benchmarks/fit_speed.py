"""Fit speed of every model: today's path (a fresh ``pm.sample``) against the public ``fit``.

How close each fit is to its physical limit, and how much faster than a fresh NUTS run
of the same model. For each model -- ``ScoreMixture`` with the
family pairs gamma/truncnormal (the paper's), normal/normal and skewnormal/skewnormal,
``Calibration`` (logistic and monotone curves), ``LabelFlip``, ``AnnotatorError`` and
``HumanRanking`` -- and each size N (10^3 .. 10^6 items; fewer where a model's data do
not grow with N, see each adapter's ``note``), it measures

* **baseline** (today's path): ``M(...).build(...)`` afresh for every fit, then
  ``pm.sample(draws, tune, chains=2, cores=1, discard_tuned_samples=False, ...)`` with
  PyMC's default NUTS;
* **new** (the public API): ``M(...).fit(data, draws, tune, chains=2, ...)``;

each twice in one fresh process (``--one``, run as a subprocess of this script): a
*cold* fit (the first in the process, with the compilation) and a *warm* refit (same
structure, a few more vetted labels / new votes, as in a vetting loop). Per fit it
records the wall time and the number of gradient evaluations (NUTS: the sum of
``n_steps`` over chains and draws, tuning included; the new path reads
``post.sampling.n_grad_evals`` / ``n_logp_evals`` where the posterior has them), and per
(model, N) the time of one gradient and of one log-density evaluation at the initial
point (``model.compile_dlogp()`` / ``compile_logp()``, median of timeit repeats).
From these: *speed-up* = baseline time / new time, and *overhead* = wall time /
(gradient evaluations x time per gradient [+ logp-only evaluations x time per logp]).

Parts (``--part``):

* ``fits``: the tables above and the speed targets (listed in the results file);
* ``auto``: ``ScoreMixture.auto`` on 10^4 items against the sum of the baseline fits of
  its candidates (the candidates' ``pm.sample`` alone, no LOO);
* ``all`` (default): both.

PyTensor caches compiled C code on disk (``~/.pytensor``): a "cold" process still
reuses C modules compiled by earlier runs, so *cold* here means "first fit in a fresh
process". ``--cold-compiledir`` points every subprocess at its own empty
``compiledir`` for a truly cold measurement (minutes per fit).

Run: ``python benchmarks/fit_speed.py`` (results in ``benchmarks/results/fit_speed.md``,
rewritten after every row, marked partial until the run ends; well over an hour on a
shared 2-core machine: sizes run in the order 10^4, 10^6, 10^3, 10^5 so that a run cut
short still has what the targets need). ``--quick``: N = 10^3 and 10^4, draws = tune =
200, one family pair, the ``fits`` part only (the results file then says it is
provisional; 13 minutes on that machine, most of it HumanRanking's 10^4-dimensional
posterior and the exact score-mixture likelihood at 10^4 items: add ``--models
"ScoreMixture gamma/truncnormal"`` for a 2-minute check). ``--models``, ``--sizes``,
``--draws`` pick a subset; the raw rows go to ``fit_speed.json`` beside the results file,
and ``--resume`` keeps them and measures only the (model, N) still missing.
"""

from __future__ import annotations

import os

# Single-threaded BLAS: the machines are 2-core and shared; both paths get the same.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import pathlib  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import timeit  # noqa: E402
import warnings  # noqa: E402
from collections.abc import Callable  # noqa: E402

import numpy as np  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
# measured in this order (the tables sort by N): a run cut short still has the sizes the targets need
SIZES = (10_000, 1_000_000, 1_000, 100_000)
QUICK_SIZES = (10_000, 1_000)
MARK = "FIT_SPEED_JSON:"


# --------------------------------------------------------------------------- adapters
#
# One adapter per model: how to make data of size n (``make(n, seed, more)``: ``more``
# = the vetting loop's next state, a few more labels or new votes, same structure),
# today's model (``build(data) -> pm.Model``) and the public fit
# (``fit(data, draws, tune, chains, seed) -> posterior``). Change these when the fit
# API changes.


@dataclasses.dataclass
class Adapter:
    name: str
    make: Callable  # (n, seed, more: bool) -> data
    build: Callable  # (data) -> pm.Model
    fit: Callable  # (data, draws, tune, chains, seed, **fit_kwargs) -> posterior
    sizes: tuple = SIZES  # measured up to the largest of these (smaller sizes, as in the tests, run too)
    note: str = ""
    binned: Callable | None = None  # (pm.Model) -> bool, for models that bin


def _probability_scores(n, rng, pi=0.3):
    y = (rng.random(n) < pi).astype(int)
    s = np.where(y == 1, rng.beta(6.0, 3.0, n), rng.beta(2.0, 8.0, n))
    return np.clip(s, 1e-4, 1 - 1e-4), y


def _vet(y, n_vetted, rng):
    labels = np.full(y.size, np.nan)
    idx = rng.choice(y.size, n_vetted, replace=False)
    labels[idx] = y[idx]
    return labels


def _eval_data(n, seed, more, n_vetted, extra):
    """Probability scores of n items; ``n_vetted`` labels (``+ extra`` when ``more``)."""
    from bayeval import EvalData

    rng = np.random.default_rng(seed)
    s, y = _probability_scores(n, rng)
    # the same items and the same first labels; the next state vets `extra` more
    order = rng.permutation(n)
    k = min(n_vetted + (extra if more else 0), n - 5)
    labels = np.full(n, np.nan)
    labels[order[:k]] = y[order[:k]]
    return EvalData(s, labels)


def _fit_kwargs(draws, tune, chains, seed, **extra):
    return {"draws": draws, "tune": tune, "chains": chains, "random_seed": seed, "progressbar": False, **extra}


def _score_mixture(neg, pos):
    def model():
        from bayeval.models import ScoreMixture

        return ScoreMixture(neg, pos)

    return Adapter(
        name=f"ScoreMixture {neg}/{pos}",
        make=lambda n, seed, more: _eval_data(n, seed, more, 50, 10),
        build=lambda data: model().build(data),
        fit=lambda data, draws, tune, chains, seed, **kw: model().fit(data, **_fit_kwargs(draws, tune, chains, seed, **kw),
                                                                cores=1, warn=False),
        note="50 vetted labels (+10 for the refit); binned above 20,000 unvetted items (the default)",
        binned=lambda m: bool(m["unvetted_weight"].get_value().max() > 1) if "unvetted_weight" in m.named_vars else False,
    )


def _calibration(curve):
    def model():
        from bayeval.models import Calibration

        return Calibration(curve=curve)

    return Adapter(
        name=f"Calibration {curve}",
        make=lambda n, seed, more: _eval_data(n, seed, more, 200, 20),
        build=lambda data: model().build(data),
        fit=lambda data, draws, tune, chains, seed, **kw: model().fit(data, **_fit_kwargs(draws, tune, chains, seed, **kw),
                                                                cores=1, warn=False),
        note="200 vetted labels (+20 for the refit) at every N: the likelihood has the vetted labels "
        "only, so a gradient costs the same at every N",
    )


def _label_flip_make(n, seed, more):
    from bayeval.models import simulate_tags

    data, truth = simulate_tags(5, items_per_category=n // 5, size_tail=0.0, random_seed=seed)
    rng = np.random.default_rng(seed + 1)
    order = rng.permutation(data.n_items)
    ids = order[: 100 + 20 * int(more)]
    return data.with_labels(data.item_ids[ids], truth[ids])


def _label_flip(pooling="partial"):
    def model():
        from bayeval.models import LabelFlip

        return LabelFlip(pooling=pooling)

    return Adapter(
        name="LabelFlip" if pooling == "partial" else f"LabelFlip {pooling}",
        make=_label_flip_make,
        build=lambda data: model().build(data),
        fit=lambda data, draws, tune, chains, seed, **kw: model().fit(data, **_fit_kwargs(draws, tune, chains, seed, **kw),
                                                                cores=1, warn=False),
        note=f"simulate_tags: 5 categories of N/5 items, pooling={pooling!r}, 100 vetted (+20 for the refit); "
        "binned above 5,000 unvetted items (the default)",
        binned=lambda m: "noisy_unvetted_binned" in m.named_vars,
    )


def _annotator_make(n, seed, more):
    rng = np.random.default_rng(seed)
    z = (rng.random(n) < 0.4).astype(int)
    d = rng.normal(size=n)

    def rate(skill, loading):
        right = rng.random(n) < 1 / (1 + np.exp(-(skill - loading * d)))
        return np.where(right, z, 1 - z)

    pred = rate(1.5, 1.0)
    ann = np.column_stack([rate(2.5, 0.8), rate(2.0, 0.5), rate(3.0, 1.0)]).astype(float)
    ann[rng.random(ann.shape) < 0.3] = np.nan
    ann[np.isnan(ann).all(axis=1), 0] = z[np.isnan(ann).all(axis=1)]  # every item has one annotation
    gold = np.full(n, np.nan)
    order = rng.permutation(n)
    k = 100 + 20 * int(more)  # the refits' steps 1, 2, 3 vet 20 more each
    gold[order[:k]] = z[order[:k]]
    return {"predictions": pred, "annotations": ann, "gold": gold}


def _annotation_data(d):
    from bayeval.annotators import AnnotationData

    return AnnotationData(d["predictions"], d["annotations"], gold=d["gold"])


def _votes(d):
    from bayeval.rankings import PairwiseVotes

    return PairwiseVotes(d["votes"], d["confidence"])


def _annotator():
    def model():
        from bayeval.annotators import AnnotatorError

        return AnnotatorError()

    return Adapter(
        name="AnnotatorError",
        make=_annotator_make,
        build=lambda d: model().build(_annotation_data(d)),
        fit=lambda d, draws, tune, chains, seed, **kw: model().fit(
            _annotation_data(d), **_fit_kwargs(draws, tune, chains, seed, **kw), cores=1, warn=False),
        sizes=(1_000, 10_000, 100_000),
        note="binary, the classifier + 3 annotators (30% of cells missing), 100 gold items (+20 for the "
        "refit). The likelihood runs over the distinct observation patterns (at most 2 x 3^3 x 3 = 162 at any "
        "N), so a gradient stops costing more once every pattern occurs; 10^6 is left out",
    )


def _ranking_make(n, seed, more):
    rng = np.random.default_rng(seed + (1 if more else 0))
    n_ann = 5
    theta = rng.uniform(0.2, 0.8, size=n)
    votes = (rng.random((n, n_ann)) < theta[:, None]).astype(float)
    conf = np.full(votes.shape, np.nan)
    m = max(1, n // 10)  # the first 10% of pairs: unanimous with confidence scores (fixed structure)
    first = rng.random(m) < 0.5
    votes[:m] = first[:, None].astype(float)
    conf[:m] = rng.choice(3, size=(m, n_ann), p=[0.2, 0.3, 0.5])
    return {"votes": votes, "confidence": conf}


def _ranking():
    def model():
        from bayeval.rankings import HumanRanking

        return HumanRanking()

    return Adapter(
        name="HumanRanking",
        make=_ranking_make,
        build=lambda d: model().build(_votes(d)),
        fit=lambda d, draws, tune, chains, seed, **kw: model().fit(_votes(d), **_fit_kwargs(draws, tune, chains, seed, **kw),
                                                             cores=1, warn=False),
        sizes=(1_000, 10_000),
        note="N = pairs, 5 votes each, 10% unanimous with confidence scores; the refit has new votes. One "
        "theta per pair: the posterior has N dimensions, which the baseline's NUTS cannot sample in minutes "
        "beyond 10^4 pairs, so 10^5 and 10^6 are left out. The new path draws the exact posterior (no MCMC, "
        "no gradient: no overhead ratio)",
    )


def adapters() -> dict[str, Adapter]:
    out = [
        _score_mixture("gamma", "truncnormal"),
        _score_mixture("normal", "normal"),
        _score_mixture("skewnormal", "skewnormal"),
        _calibration("logistic"),
        _calibration("monotone"),
        _label_flip(),
        _label_flip("complete"),
        _annotator(),
        _ranking(),
    ]
    return {a.name: a for a in out}


QUICK_MODELS = ("ScoreMixture gamma/truncnormal", "Calibration logistic", "Calibration monotone", "LabelFlip",
                "AnnotatorError", "HumanRanking")


# ------------------------------------------------------------------ counting and timing


def _steps(idata) -> tuple[int | None, bool]:
    """Sum of NUTS ``n_steps`` over chains and draws; (count, includes tuning)."""
    total, tuned = None, False
    for group in ("sample_stats", "warmup_sample_stats"):
        ds = getattr(idata, group, None) if idata is not None else None
        if ds is None:
            continue
        for name in ("n_steps", "tree_size"):  # PyMC: n_steps; nutpie: n_steps too (tree_size older)
            if name in ds:
                total = (total or 0) + int(np.asarray(ds[name]).sum())
                tuned = tuned or group == "warmup_sample_stats"
                break
    return total, tuned


def evaluations(post, draws: int, tune: int) -> dict:
    """Gradient and logp-only evaluations of a fit, and where the numbers come from."""
    info = getattr(post, "sampling", None)
    sampler = getattr(info, "sampler", None)
    n_grad = getattr(info, "n_grad_evals", None)
    n_logp = getattr(info, "n_logp_evals", None)
    if n_grad is not None:
        return {"sampler": sampler, "n_grad": int(n_grad), "n_logp": int(n_logp or 0), "count": "SamplingInfo"}
    if sampler == "importance":
        # no counters yet: the proposals' logp evaluations (a lower bound: the mode search
        # and the finite-difference Hessian add some gradients)
        return {"sampler": sampler, "n_grad": 0, "n_logp": int(getattr(info, "n_proposals", 0)),
                "count": "proposals only"}
    steps, tuned = _steps(getattr(post, "idata", None))
    if steps is None:
        return {"sampler": sampler, "n_grad": None, "n_logp": 0, "count": "unknown"}
    if not tuned and tune:
        # tuning draws discarded: scaled to draws + tune here; measure() replaces this by the
        # baseline's own ratio (all steps / the draws' steps) of the same model and N
        return {"sampler": sampler, "n_grad": int(round(steps * (draws + tune) / draws)), "n_logp": 0,
                "count": "n_steps, scaled", "draw_steps": steps}
    return {"sampler": sampler, "n_grad": steps, "n_logp": 0, "count": "n_steps"}


def time_per_call(fn, arg, budget: float = 0.5) -> float:
    """Median seconds per ``fn(arg)`` over timeit repeats (about ``budget`` seconds in all)."""
    fn(arg)
    t0 = time.perf_counter()
    fn(arg)
    one = max(time.perf_counter() - t0, 1e-7)
    number = max(1, int(budget / 7 / one))
    return float(np.median(timeit.repeat(lambda: fn(arg), number=number, repeat=7)) / number)


def gradient_cost(model) -> tuple[float, float]:
    ip = model.initial_point()
    dlogp = model.compile_dlogp()
    logp = model.compile_logp()
    return time_per_call(dlogp, ip), time_per_call(logp, ip)


# --------------------------------------------------------------------------- one process


def _baseline_fit(adapter: Adapter, data, draws, tune, chains, seed):
    import pymc as pm

    t0 = time.perf_counter()
    model = adapter.build(data)
    with model, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        idata = pm.sample(draws=draws, tune=tune, chains=chains, cores=1, random_seed=seed, progressbar=False,
                          compute_convergence_checks=False, discard_tuned_samples=False)
    wall = time.perf_counter() - t0
    steps, _ = _steps(idata)
    draw_steps = int(np.asarray(idata.sample_stats["n_steps"]).sum())
    return model, {"time": wall, "sampler": "pymc", "n_grad": steps, "n_logp": 0, "count": "n_steps",
                   "draw_steps": draw_steps}


def _new_fit(adapter: Adapter, data, draws, tune, chains, seed):
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        post = adapter.fit(data, draws, tune, chains, seed)
    wall = time.perf_counter() - t0
    return {"time": wall, **evaluations(post, draws, tune)}


def one(spec: dict) -> dict:
    """In a fresh process: a cold fit, then a warm refit (same structure, next data)."""
    t0 = time.perf_counter()
    import pymc  # noqa: F401

    import bayeval  # noqa: F401

    out = {"import_time": time.perf_counter() - t0}
    adapter = adapters().get(spec["model"])  # None for the auto part
    n, draws, tune, chains, seed = spec["n"], spec["draws"], spec["tune"], spec["chains"], spec["seed"]
    if spec["path"] in ("baseline", "new", "backend"):
        first, second = adapter.make(n, seed, False), adapter.make(n, seed, True)
    if spec["path"] == "baseline":
        model, out["cold"] = _baseline_fit(adapter, first, draws, tune, chains, seed)
        model, out["warm"] = _baseline_fit(adapter, second, draws, tune, chains, seed + 1)
        out["t_grad"], out["t_logp"] = gradient_cost(model)
        out["binned"] = adapter.binned(model) if adapter.binned else None
    elif spec["path"] == "new":
        out["cold"] = _new_fit(adapter, first, draws, tune, chains, seed)
        out["warm"] = _new_fit(adapter, second, draws, tune, chains, seed + 1)
        # and once more: a steady-state refit (what a structure compiles once, at its first
        # refit, is paid by then)
        out["refit"] = _new_fit(adapter, second, draws, tune, chains, seed + 2)
    elif spec["path"] == "backend":
        out.update(_backend_fits(adapter, spec))
    elif spec["path"] == "agree":
        out.update(_agreement(adapter, spec))
    elif spec["path"] == "refits":
        out.update(_refits(adapter, spec))
    elif spec["path"] in ("auto", "auto-baseline"):
        from bayeval.models import AUTO_CANDIDATES, ScoreMixture

        data = _eval_data(n, seed, False, 50, 10)
        if spec["path"] == "auto":
            t1 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _, table = ScoreMixture.auto(data, draws=draws, tune=tune, chains=chains, random_seed=seed,
                                             progress=False)
            out["time"] = time.perf_counter() - t1
            out["candidates"] = int((table["error"].fillna("") == "").sum()) if "error" in table else len(table)
            ok = table[table["error"].fillna("") == ""] if "error" in table else table
            out["per_candidate"] = [
                {"pair": f"{r['negative']}/{r['positive']}", "sampler": str(r.get("sampler", "")),
                 "seconds": float(r.get("seconds", float("nan")))}
                for _, r in ok.iterrows()
            ]
        else:
            total, fitted, per = 0.0, 0, []
            for neg, pos in AUTO_CANDIDATES:
                sm = adapter_for_pair(neg, pos)
                try:
                    _, res = _baseline_fit(sm, data, draws, tune, chains, seed)
                except ValueError:  # e.g. a transform these scores do not allow; auto skips it too
                    continue
                total += res["time"]
                fitted += 1
                per.append({"pair": f"{neg}/{pos}", "seconds": res["time"]})
            out["time"], out["candidates"], out["per_candidate"] = total, fitted, per
    else:
        raise ValueError(spec["path"])
    return out


def adapter_for_pair(neg, pos) -> Adapter:
    return _score_mixture(neg, pos)


# ------------------------------------------------------------------- sampler backends
#
# ``--backends``: the NUTS-bound models (and one score mixture forced to NUTS), each fitted
# through the public ``fit(..., sampler=BACKEND)`` in a fresh process per backend: a cold
# fit, then a warm refit on the next data (as in the vetting loop), timed, with the
# refit's lowest bulk ESS over the model's parameters (``post.convergence``).

BACKENDS = ("pymc", "pymc-numba", "nutpie", "numpyro", "blackjax")
BACKEND_LABELS = {
    "pymc": "PyMC NUTS, C backend (default)",
    "pymc-numba": "PyMC NUTS, Numba backend",
    "nutpie": "nutpie (Numba)",
    "numpyro": "NumPyro NUTS via PyMC (JAX, vectorized chains)",
    "blackjax": "BlackJAX NUTS via PyMC (JAX, vectorized chains)",
}
#: model -> N of the comparison (capped where the posterior grows with N)
BACKEND_MODELS = {"LabelFlip": 10_000, "AnnotatorError": 10_000, "HumanRanking": 1_000,
                  "ScoreMixture gamma/truncnormal": 10_000}
BACKEND_NOTES = {
    "HumanRanking": "1,000 pairs (one theta per pair: a 10^4-dimensional posterior takes minutes per fit and backend)",
    "ScoreMixture gamma/truncnormal": "forced to NUTS (its default is importance sampling)",
}


def _backend_fits(adapter: Adapter, spec: dict) -> dict:
    n, draws, tune, chains, seed = spec["n"], spec["draws"], spec["tune"], spec["chains"], spec["seed"]
    first, second = adapter.make(n, seed, False), adapter.make(n, seed, True)
    out = {}
    for state, data, s in (("cold", first, seed), ("warm", second, seed + 1)):
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            post = adapter.fit(data, draws, tune, chains, s, sampler=spec["backend"])
        wall = time.perf_counter() - t0
        conv = getattr(post, "convergence", {}) or {}
        out[state] = {"time": wall, "sampler": getattr(getattr(post, "sampling", None), "sampler", None),
                      "min_ess_bulk": float(conv.get("min_ess_bulk", float("nan"))),
                      "max_rhat": float(conv.get("max_rhat", float("nan"))),
                      "divergences": int(conv.get("divergences", 0) or 0)}
    return out


def _run_row(spec: dict, row: dict, *, timeout=None, env_extra=None) -> dict:
    """``row`` updated with what ``spec``'s fresh process measured (:func:`run_one`), or
    with ``row["error"]``: the last line of its failure (at most 200 characters)."""
    try:
        row.update(run_one(spec, timeout=timeout, env_extra=env_extra))
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        msg = str(exc).strip().splitlines()
        row["error"] = (msg[-1] if msg else type(exc).__name__)[:200]
    return row


def measure_backends(models, backends, *, draws, tune, chains=2, seed=1, timeout=None, log=print,
                     on_row=None, sizes=None) -> list[dict]:
    """One row per (model, backend): cold and warm wall time, the warm refit's ESS/s and
    ratios to the C backend measured in the same run."""
    rows = []
    for name in models:
        n = (sizes or {}).get(name, BACKEND_MODELS.get(name, 10_000))
        base = None
        for b in backends:
            spec = {"model": name, "n": n, "draws": draws, "tune": tune, "chains": chains, "seed": seed,
                    "path": "backend", "backend": b}
            row = {"model": name, "n": n, "backend": b, "error": ""}
            res = _run_row(spec, {}, timeout=timeout, env_extra=_BACKEND_ENV)
            if res.get("error"):
                row["error"] = res["error"]
                rows.append(row)
                log(f"  {name:32s} {b:11s} failed: {row['error']}", flush=True)
                if on_row:
                    on_row(rows)
                continue
            for state in ("cold", "warm"):
                for k, v in res[state].items():
                    row[f"{state}_{k}"] = v
            row["ess_per_s"] = row["warm_min_ess_bulk"] / row["warm_time"]
            if b == "pymc":
                base = row
            if base is not None:
                row["speedup_warm"] = base["warm_time"] / row["warm_time"]
                row["speedup_cold"] = base["cold_time"] / row["cold_time"]
                row["ess_ratio"] = row["ess_per_s"] / base["ess_per_s"] if base["ess_per_s"] > 0 else math.nan
            rows.append(row)
            log(f"  {name:32s} {b:11s} cold {row['cold_time']:7.1f} s  warm {row['warm_time']:7.1f} s  "
                f"min ESS {row['warm_min_ess_bulk']:7.0f}  ESS/s {row['ess_per_s']:7.1f}", flush=True)
            if on_row:
                on_row(rows)
    return rows


# ------------------------------------------------------------ agreement with NUTS
#
# ``--agreement``: does the public ``fit`` (importance sampling, exact draws or NUTS at
# the model's settings) give the posterior a fresh NUTS run gives, on the same data?
# Per scalar free parameter, the difference of the posterior means and of the 5% and 95%
# quantiles in units of their joint Monte Carlo standard error (z), and the ratio of the
# posterior sds: the evidence that the defaults' fast paths give NUTS's posterior.

#: model -> N of the comparison (HumanRanking: NUTS on 10^4 pairs takes minutes per fit)
AGREE_SIZES = {"HumanRanking": 1_000}


def _param_stats(idata, names, weights_ess=None) -> dict:
    """Per scalar parameter (in ``names``' order, each flattened): mean, sd, 5% / 95%
    quantiles and the Monte Carlo s.e. of the mean and the quantiles (ArviZ's, from the
    chains; for draws resampled from weighted proposals, scaled up to the weights' ESS)."""
    import arviz as az

    ds = idata.posterior[names]
    vals = np.concatenate([np.asarray(ds[n]).reshape(ds.sizes["chain"] * ds.sizes["draw"], -1) for n in names],
                          axis=1)
    s = vals.shape[0]

    def flat(res):
        return np.concatenate([np.asarray(res[n]).reshape(-1) for n in names])

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        se = {"mean": flat(az.mcse(ds, method="mean")),
              "q05": flat(az.mcse(ds, method="quantile", prob=0.05)),
              "q95": flat(az.mcse(ds, method="quantile", prob=0.95))}
        rhat = flat(az.rhat(ds)) if ds.sizes["chain"] > 1 else np.full(vals.shape[1], np.nan)
    if weights_ess is not None and np.isfinite(weights_ess) and weights_ess > 0:
        scale = math.sqrt(s / min(float(weights_ess), s))
        se = {k: v * scale for k, v in se.items()}
    q05, q95 = np.quantile(vals, [0.05, 0.95], axis=0)
    return {"mean": vals.mean(0), "sd": vals.std(0, ddof=1), "q05": q05, "q95": q95, "se": se, "rhat": rhat}


def agreement_stats(base: dict, new: dict) -> dict:
    """z of the differences (means, 5% and 95% quantiles) and sd ratios, from two
    :func:`_param_stats`; ``z_bound``: the 95% bound of the largest of that many |z|
    were both posteriors the same (independent standard normals)."""
    from scipy import stats

    zs = {}
    for key in ("mean", "q05", "q95"):
        den = np.sqrt(base["se"][key] ** 2 + new["se"][key] ** 2)
        diff = new[key] - base[key]
        zs[key] = np.where(den > 0, diff / np.where(den > 0, den, 1.0), np.where(diff == 0, 0.0, np.inf))
    z_all = np.abs(np.concatenate([zs["mean"], zs["q05"], zs["q95"]]))
    m = z_all.size
    ratio = new["sd"] / np.where(base["sd"] > 0, base["sd"], np.nan)
    return {
        "n_params": int(zs["mean"].size),
        "max_z_mean": float(np.max(np.abs(zs["mean"]))),
        "max_z_quantile": float(np.max(np.abs(np.concatenate([zs["q05"], zs["q95"]])))),
        "n_over_3": int(np.sum(z_all > 3)),
        "n_compared": int(m),
        "z_bound": float(stats.norm.ppf((1 + 0.95 ** (1 / m)) / 2)),
        "sd_ratio_min": float(np.nanmin(ratio)), "sd_ratio_median": float(np.nanmedian(ratio)),
        "sd_ratio_max": float(np.nanmax(ratio)),
        "base_max_rhat": float(np.nanmax(base["rhat"])) if np.isfinite(base["rhat"]).any() else math.nan,
    }


def _agreement(adapter: Adapter, spec: dict) -> dict:
    """In a fresh process: a fresh NUTS run (the baseline) and the public fit on the same
    data, with independent seeds; their per-parameter agreement."""
    import pymc as pm

    n, draws, tune, chains, seed = spec["n"], spec["draws"], spec["tune"], spec["chains"], spec["seed"]
    data = adapter.make(n, seed, False)
    model = adapter.build(data)
    names = [rv.name for rv in model.free_RVs]
    t0 = time.perf_counter()
    with model, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        base = pm.sample(draws=draws, tune=tune, chains=chains, cores=1, random_seed=seed, progressbar=False,
                         compute_convergence_checks=False)
    base_time = time.perf_counter() - t0
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        post = adapter.fit(data, draws, tune, chains, seed + 1)
    new_time = time.perf_counter() - t0
    info = getattr(post, "sampling", None)
    sampler = getattr(info, "sampler", None) or "?"
    shared = [v for v in names if v in post.idata.posterior]
    res = agreement_stats(_param_stats(base, shared),
                          _param_stats(post.idata, shared,
                                       weights_ess=getattr(info, "ess", None) if sampler == "importance" else None))
    res.update(base_time=base_time, new_time=new_time, sampler=sampler,
               pareto_k=float(getattr(info, "pareto_k", math.nan)), missing=sorted(set(names) - set(shared)),
               base_divergences=int(np.asarray(base.sample_stats["diverging"]).sum()))
    return res


def measure_agreement(models, *, draws, tune, chains=2, seed=1, timeout=None, log=print, on_row=None,
                      sizes=None) -> list[dict]:
    rows = []
    for name in models:
        n = (sizes or {}).get(name, AGREE_SIZES.get(name, 10_000))
        spec = {"model": name, "n": n, "draws": draws, "tune": tune, "chains": chains, "seed": seed,
                "path": "agree"}
        row = _run_row(spec, {"model": name, "n": n, "error": ""}, timeout=timeout)
        rows.append(row)
        if row["error"]:
            log(f"  {name:32s} failed: {row['error']}", flush=True)
        else:
            log(f"  {name:32s} N={n:>7,}  {row['sampler']:10s} max|z| mean {row['max_z_mean']:5.2f}  quantiles "
                f"{row['max_z_quantile']:5.2f} (95% bound {row['z_bound']:.2f})  sd ratio {row['sd_ratio_min']:.2f}-"
                f"{row['sd_ratio_max']:.2f}", flush=True)
        if on_row:
            on_row(rows)
    return rows


def agreement_verdict(r: dict) -> str:
    if r.get("error"):
        return "failed"
    if r["max_z_mean"] <= r["z_bound"] and r["max_z_quantile"] <= r["z_bound"]:
        return "agree"
    return "differ" if r["base_max_rhat"] <= 1.01 else "differ (baseline r_hat > 1.01)"


def agreement_section(a: dict) -> list[str]:
    """The "Agreement with NUTS" section from the saved run ``a``."""
    lines = [
        "## Agreement with NUTS",
        "",
        ("" if a.get("complete") else "**PARTIAL: the run stopped before every model was compared.**\n\n")
        + f"Made by `{a['cmd']}` on {a['date']} in {a['elapsed']:.0f} s with {a['versions']}; {a['machine']}.",
        "",
        f"Settings: {a['settings']}. Per model, in a fresh process, on the same data: today's path (a fresh "
        "`pm.sample`, PyMC's NUTS at its defaults) and the public `fit` (its default sampler), with independent "
        "seeds. For every scalar free parameter: *z* = the difference of the two posterior means (and of the 5% "
        "and 95% quantiles) over their joint Monte Carlo standard error (ArviZ's `mcse` from the chains; for "
        "importance sampling scaled up to the weights' ESS); *bound*: the 95% bound of the largest |z| among that "
        "many comparisons were the two posteriors the same; *sd ratio*: the fit's posterior sd over NUTS's. "
        "*agree*: every |z| within the bound. Where NUTS itself did not converge (its r_hat > 1.01) the baseline "
        "is the suspect one.",
        "",
        "| model | N | fit's sampler | Pareto k | parameters | max \\|z\\| means | max \\|z\\| 5%/95% quantiles "
        "| \\|z\\| > 3 | bound | sd ratio (min / median / max) | NUTS max r_hat, divergences | NUTS s | fit s "
        "| verdict |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in a["rows"]:
        if r.get("error"):
            lines.append(f"| {r['model']} | {r['n']:,} | failed: {r['error']} |" + " – |" * 11)
            continue
        k = f"{r['pareto_k']:.2f}" if math.isfinite(r["pareto_k"]) else "–"
        lines.append(
            f"| {r['model']} | {r['n']:,} | {r['sampler']} | {k} | {r['n_params']:,} | {r['max_z_mean']:.2f} | "
            f"{r['max_z_quantile']:.2f} | {r['n_over_3']} of {r['n_compared']:,} | {r['z_bound']:.2f} | "
            f"{r['sd_ratio_min']:.2f} / {r['sd_ratio_median']:.2f} / {r['sd_ratio_max']:.2f} | "
            f"{r['base_max_rhat']:.3f}, {r['base_divergences']} | {r['base_time']:.1f} | {r['new_time']:.1f} | "
            f"{agreement_verdict(r)} |")
    lines.append("")
    return lines


# ----------------------------------------------------------------- refits from the previous fit
#
# The vetting loop's refits: ``fit(next data, previous=last posterior)`` reweights the last
# fit's draws where their weights are reliable (no NUTS), NUTS otherwise. Measured in one
# process against plain PyMC fits of the same data, which also serve as the reference
# posteriors of the agreement check.

#: the NUTS-bound models (the refit route applies to them), the exact route (HumanRanking,
#: at 1,000 pairs) and an importance-sampled structure (its first refit against the steady ones)
REFIT_MODELS = ("LabelFlip", "AnnotatorError", "HumanRanking", "ScoreMixture normal/normal")
#: model -> N of the refits (default 10^4)
REFIT_SIZES = {"HumanRanking": 1_000}


def _refits(adapter: Adapter, spec: dict) -> dict:
    """In a fresh process: plain PyMC fits of the loop's 2nd and 3rd data (the first of
    them compiles), then the public path: a first fit and three refits, each from the
    posterior before it, on the 2nd, 3rd and 4th data; per refit its time, sampler,
    Pareto k, ESS, fallback reason, and (2nd and 3rd data) its agreement with PyMC's."""
    import pymc as pm

    n, draws, tune, chains, seed = spec["n"], spec["draws"], spec["tune"], spec["chains"], spec["seed"]
    data = [adapter.make(n, seed, step) for step in range(4)]
    out, base = {"baseline": []}, {}
    for step in (1, 2):
        t0 = time.perf_counter()
        model = adapter.build(data[step])
        names = [rv.name for rv in model.free_RVs]
        with model, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            base[step] = pm.sample(draws=draws, tune=tune, chains=chains, cores=1, random_seed=seed + 10 * step,
                                   progressbar=False, compute_convergence_checks=False)
        out["baseline"].append({"step": step, "time": time.perf_counter() - t0})
    fits, post = [], None
    for step in range(4):
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            kw = {} if post is None else {"previous": post}
            post = adapter.fit(data[step], draws, tune, chains, seed + step, **kw)
        info = post.sampling
        row = {"step": step, "time": time.perf_counter() - t0, "sampler": info.sampler,
               "pareto_k": float(info.pareto_k), "ess": float(info.ess), "fallback": info.fallback_reason,
               "n_grad": int(info.n_grad_evals), "n_logp": int(info.n_logp_evals)}
        if step in base:
            shared = [v for v in names if v in post.idata.posterior]
            row["agreement"] = agreement_stats(
                _param_stats(base[step], shared),
                _param_stats(post.idata, shared, weights_ess=info.ess if info.sampler == "importance" else None))
        fits.append(row)
    out["fits"] = fits
    return out


def measure_refits(models, *, draws, tune, chains=2, seed=1, timeout=None, log=print, on_row=None,
                   sizes=None) -> list[dict]:
    rows = []
    for name in models:
        n = (sizes or {}).get(name, REFIT_SIZES.get(name, 10_000))
        spec = {"model": name, "n": n, "draws": draws, "tune": tune, "chains": chains, "seed": seed,
                "path": "refits"}
        row = _run_row(spec, {"model": name, "n": n, "error": "", "git": _git_rev(), "load": _loadavg()},
                       timeout=timeout)
        rows.append(row)
        if row["error"]:
            log(f"  {name:24s} failed: {row['error']}", flush=True)
        else:
            b = row["baseline"][-1]["time"]
            log(f"  {name:24s} N={n:,}  plain PyMC {b:.1f} s; " + "; ".join(
                f"fit {f['step']} {f['sampler']} {f['time']:.2f} s ({b / f['time']:.1f}x)" for f in row["fits"]),
                flush=True)
        if on_row:
            on_row(rows)
    return rows


def refit_section(a: dict) -> list[str]:
    """The "Refits from the previous fit" section from the saved run ``a``."""
    lines = [
        "## Refits from the previous fit",
        "",
        ("" if a.get("complete") else "**PARTIAL: the run stopped before every model was measured.**\n\n")
        + f"Made by `{a['cmd']}` on {a['date']} in {a['elapsed']:.0f} s with {a['versions']}; {a['machine']}.",
        "",
        f"Settings: {a['settings']}. In one fresh process per model, the vetting loop's data 0..3 (20 more "
        "vetted labels each step): *plain PyMC*: the model built afresh and `pm.sample` (PyMC's NUTS at its "
        "defaults, `cores=1`) on data 1 (the first in the process: it compiles) and data 2; then the public "
        "path: `fit(data 0)` (its default sampler: NUTS for the NUTS-bound models), and `fit(data k, "
        "previous=<the fit of data k-1>)` for k = 1, 2, 3 (`previous` matters to the NUTS-bound models only). "
        "*first refit*: k = 1 (what a structure compiles at its first refit is paid here); *steady*: k = 2, 3. "
        "*ratio*: the plain PyMC fit of data 2 (compiled model, same process) over the refit's time. *agreement* (data 1 and "
        "2, against the plain PyMC fit of the same data): the largest |z| of the means and of the 5%/95% "
        "quantiles over every scalar free parameter (z = difference / joint Monte Carlo s.e., ArviZ's `mcse`; "
        "for reweighted draws scaled up to their ESS) against the 95% bound of the largest of that many |z|. "
        "*first / steady*: the first refit's time over the mean of the steady ones. Rows kept from an earlier run "
        "(`--refits --models` measures the models named and keeps the others' rows) name their git revision "
        "and load average in the last column.",
        "",
    ]
    lines += _refit_targets(a["rows"])
    lines += [
        "| model | N | plain PyMC s (data 1 / data 2) | fit | sampler | s | ratio | Pareto k | ESS | max \\|z\\| "
        "means / quantiles (bound) | sd ratio min / max | NUTS fallback | run |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    kinds = {0: "first fit", 1: "first refit", 2: "steady refit", 3: "steady refit"}
    for r in a["rows"]:
        if r.get("error"):
            lines.append(f"| {r['model']} | {r['n']:,} | failed: {r['error']} |" + " – |" * 10)
            continue
        b = [x["time"] for x in r["baseline"]]
        run = f"git {r.get('git', '?')}, load {r['load']}" if r.get("load") else f"git {r.get('git', '?')}"
        for f in r["fits"]:
            ag = f.get("agreement")
            z = (f"{ag['max_z_mean']:.2f} / {ag['max_z_quantile']:.2f} ({ag['z_bound']:.2f})" if ag else "–")
            sd = f"{ag['sd_ratio_min']:.2f} / {ag['sd_ratio_max']:.2f}" if ag else "–"
            k = f"{f['pareto_k']:.2f}" if math.isfinite(f["pareto_k"]) else "–"
            ess = f"{f['ess']:.0f}" if math.isfinite(f["ess"]) else "–"
            lines.append(
                f"| {r['model']} | {r['n']:,} | {b[0]:.1f} / {b[1]:.1f} | {f['step']}: {kinds[f['step']]} | "
                f"{f['sampler']} | {f['time']:.2f} | {b[1] / f['time']:.1f}× | {k} | {ess} | {z} | {sd} | "
                f"{f['fallback'] or '–'} | {run} |")
    lines.append("")
    return lines


def _refit_targets(rows: list[dict]) -> list[str]:
    """Per measured model: the steady refits' speed-up over the plain PyMC fit and the
    first refit over the steady ones, with the issue's targets."""
    out = []
    for r in rows:
        if r.get("error"):
            continue
        t = {f["step"]: f["time"] for f in r["fits"]}
        steady = (t[2] + t[3]) / 2
        ags = [f["agreement"] for f in r["fits"] if f.get("agreement")]
        agree = all(ag["max_z_mean"] <= ag["z_bound"] and ag["max_z_quantile"] <= ag["z_bound"] for ag in ags)
        want = 10 if r["model"] == "LabelFlip" else 5
        out.append(f"- {r['model']} (N={r['n']:,}): steady refit {r['baseline'][1]['time'] / steady:.1f}× faster "
                   f"than plain PyMC (target ≥ {want}×); first refit / steady = {t[1] / steady:.2f} (target ≤ 1.5 "
                   f"for an importance-sampled structure); agreement with PyMC (data 1 and 2): "
                   f"{'yes' if agree else 'NO'}; run: git {r.get('git', '?')}")
    return out + [""] if out else out


def _main_refits(args, out, raw, cmd, draws):
    """The ``--refits`` part: measured, stored under "refits" in the raw JSON, written into
    the results file with the sections already there."""
    import arviz

    models = args.models or list(REFIT_MODELS)
    meta, write = _part_writer(out, raw, key="refits", heading="## Refits from the previous fit",
                               render=refit_section, cmd=cmd,
                               versions_text=f"{versions()}, ArviZ {arviz.__version__}",
                               settings=f"draws = tune = {draws}, chains = {args.chains}, seed {args.seed}")
    print(f"Refits from the previous fit ({meta['settings']})", flush=True)
    saved = json.loads(raw.read_text()).get("refits") if raw.is_file() else None
    kept = [r for r in (saved or {}).get("rows", []) if r["model"] not in models and not r.get("error")]
    rows = measure_refits(models, draws=draws, tune=draws, chains=args.chains, seed=args.seed,
                          timeout=args.timeout, on_row=lambda rs: write(rs + kept),
                          sizes=_part_sizes(args, models))
    write(rows + kept, complete=True)
    print(f"\nwrote {out}")


# one thread for JAX/XLA as for BLAS: the same single core for every backend
_BACKEND_ENV = {"XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"}


def backend_versions() -> str:
    import importlib.metadata as md

    out = []
    for pkg in ("pymc", "pytensor", "numba", "nutpie", "jax", "jaxlib", "numpyro", "blackjax"):
        try:
            out.append(f"{pkg} {md.version(pkg)}")
        except md.PackageNotFoundError:
            out.append(f"{pkg} not installed")
    return ", ".join(out)


def backend_tables(rows: list[dict]) -> str:
    out = []
    for name in dict.fromkeys(r["model"] for r in rows):
        rs = [r for r in rows if r["model"] == name]
        note = BACKEND_NOTES.get(name, "")
        out.append(f"### {name}, N={rs[0]['n']:,}" + (f" ({note})" if note else "") + "\n")
        out.append("| backend | cold s | warm s | warm min bulk ESS | warm ESS/s | warm time: C / backend | "
                   "ESS/s: backend / C | divergences (warm) | max r_hat (warm) |")
        out.append("|" + "---|" * 9)
        for r in rs:
            label = f"`{r['backend']}`: {BACKEND_LABELS.get(r['backend'], r['backend'])}"
            if r["error"]:
                out.append(f"| {label} | failed: {r['error'].replace('|', '/')} |" + " – |" * 7)
                continue
            out.append(
                f"| {label} | {_fmt_t(r['cold_time'])} | {_fmt_t(r['warm_time'])} | {r['warm_min_ess_bulk']:,.0f} | "
                f"{r['ess_per_s']:.1f} | {_fmt_r(r.get('speedup_warm', math.nan))} | "
                f"{_fmt_r(r.get('ess_ratio', math.nan))} | {r['warm_divergences']} | {r['warm_max_rhat']:.3f} |"
            )
        out.append("")
    return "\n".join(out)


def run_one(spec: dict, *, cold_compiledir: bool = False, timeout: float | None = None,
            env_extra: dict | None = None) -> dict:
    """Run :func:`one` in a fresh Python process (cold = first fit there)."""
    env = dict(os.environ)
    env.update(env_extra or {})
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    tmp = None
    if cold_compiledir:
        tmp = tempfile.mkdtemp(prefix="fit_speed_compiledir_")
        flags = env.get("PYTENSOR_FLAGS", "")
        env["PYTENSOR_FLAGS"] = (flags + "," if flags else "") + f"compiledir={tmp}"
    try:
        res = subprocess.run([sys.executable, str(pathlib.Path(__file__).resolve()), "--one", json.dumps(spec)],
                             capture_output=True, text=True, env=env, timeout=timeout, cwd=str(ROOT))
    finally:
        if tmp:
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith(MARK)]
    if res.returncode != 0 or not lines:
        raise RuntimeError(f"--one {spec} failed (rc {res.returncode}):\n{res.stderr[-3000:]}")
    return json.loads(lines[-1][len(MARK):])


# ------------------------------------------------------------------------------ tables


def _overhead(fit: dict, t_grad: float, t_logp: float) -> float:
    if fit.get("n_grad") is None:
        return math.nan
    work = fit["n_grad"] * t_grad + fit.get("n_logp", 0) * t_logp
    return fit["time"] / work if work > 0 else math.nan


def measure(models, sizes, *, draws, tune, chains=2, seed=1, cold_compiledir=False, timeout=None, log=print,
            on_row=None, done=()) -> list[dict]:
    """One row per (model, N): cold/warm times of both paths, evaluations, t/grad, ratios.

    ``done``: rows of an earlier run (``--resume``); their (model, N) are not measured again.
    """
    table = adapters()
    rows = list(done)
    have = {(r["model"], r["n"]) for r in rows}
    # sizes outer, in the order given: a run cut short still has the first sizes of every model
    for n in sizes:
        for name in [m for m in models if n <= max(table[m].sizes) and (m, n) not in have]:
            spec = {"model": name, "n": n, "draws": draws, "tune": tune, "chains": chains, "seed": seed}
            base = run_one({**spec, "path": "baseline"}, cold_compiledir=cold_compiledir, timeout=timeout)
            new = run_one({**spec, "path": "new"}, cold_compiledir=cold_compiledir, timeout=timeout)
            row = {"model": name, "n": n, "binned": base["binned"], "t_grad": base["t_grad"],
                   "t_logp": base["t_logp"], "import_time": new["import_time"]}
            for state in ("cold", "warm"):
                b, w = base[state], new[state]
                if w["count"] == "n_steps, scaled" and b.get("draw_steps"):
                    # the new path discarded its tuning draws: estimate their steps with the
                    # baseline's ratio (all steps / the draws' steps) on the same model and N
                    w["n_grad"] = int(round(w["draw_steps"] * b["n_grad"] / b["draw_steps"]))
                    w["count"] = "est."
                row[f"base_{state}"] = b["time"]
                row[f"new_{state}"] = w["time"]
                row[f"speedup_{state}"] = b["time"] / w["time"]
                row[f"base_{state}_grads"] = b["n_grad"]
                row[f"new_{state}_grads"] = w["n_grad"]
                row[f"new_{state}_logps"] = w.get("n_logp", 0)
                row[f"new_{state}_count"] = w["count"]
                row[f"new_{state}_sampler"] = w["sampler"]
                row[f"base_{state}_overhead"] = _overhead(b, base["t_grad"], base["t_logp"])
                row[f"new_{state}_overhead"] = _overhead(w, base["t_grad"], base["t_logp"])
            refit = new.get("refit", {}).get("time", math.nan)
            row["new_refit"], row["speedup_refit"] = refit, row["base_warm"] / refit
            rows.append(row)
            log(f"  {name:32s} N={n:>9,}  refit {refit:7.2f} s  baseline {row['base_cold']:7.1f} / {row['base_warm']:7.1f} s   "
                f"new {row['new_cold']:7.1f} / {row['new_warm']:7.1f} s   speed-up {row['speedup_cold']:5.2f}x / "
                f"{row['speedup_warm']:5.2f}x   t/grad {row['t_grad'] * 1e6:8.1f} us", flush=True)
            if on_row:
                on_row(rows)
    return rows


def measure_auto(n, *, draws, tune, chains=2, seed=1, cold_compiledir=False, timeout=None) -> dict:
    spec = {"model": "auto", "n": n, "draws": draws, "tune": tune, "chains": chains, "seed": seed}
    auto = run_one({**spec, "path": "auto"}, cold_compiledir=cold_compiledir, timeout=timeout)
    base = run_one({**spec, "path": "auto-baseline"}, cold_compiledir=cold_compiledir, timeout=timeout)
    return {"n": n, "draws": draws, "auto": auto["time"], "auto_candidates": auto["candidates"], "baseline_sum": base["time"],
            "baseline_candidates": base["candidates"], "speedup": base["time"] / auto["time"],
            "auto_per_candidate": auto.get("per_candidate", []), "baseline_per_candidate": base.get("per_candidate", []),
            "git": _git_rev()}


def _fmt_t(x):
    return "–" if x is None or not np.isfinite(x) else (f"{x:.2f}" if x < 10 else f"{x:.1f}")


def _fmt_n(x):
    return "–" if x is None else f"{int(x):,}"


def _fmt_r(x):
    return "–" if x is None or not np.isfinite(x) else f"{x:.2f}×"


def _fmt_us(x):
    return f"{x * 1e6:.1f} µs" if x < 1e-3 else f"{x * 1e3:.2f} ms"


def model_tables(rows: list[dict]) -> str:
    out = []
    ads = adapters()
    for name in dict.fromkeys(r["model"] for r in rows):
        rs = sorted((r for r in rows if r["model"] == name), key=lambda r: r["n"])
        out.append(f"### {name}\n\n{ads[name].note}.\n")
        out.append("| N | binned | baseline cold s | baseline warm s | new cold s | new warm s | new refit s | "
                   "speed-up cold | speed-up warm | speed-up refit | grads baseline (cold/warm) | grads new (cold/warm) "
                   "| new sampler | t/grad | t/logp | overhead baseline (warm) | overhead new (warm) |")
        out.append("|" + "---|" * 17)
        for r in rs:
            cnt = r["new_warm_count"]
            mark = "" if cnt in ("SamplingInfo", "n_steps") else f" ({cnt})"
            samplers = " / ".join(str(r[f"new_{s}_sampler"] or "–") for s in ("cold", "warm"))
            new_grads = f"{_fmt_n(r['new_cold_grads'])} / {_fmt_n(r['new_warm_grads'])}{mark}"
            if r["new_warm_logps"]:
                new_grads += f"; logp {_fmt_n(r['new_cold_logps'])} / {_fmt_n(r['new_warm_logps'])}"
            out.append(
                f"| {r['n']:,} | {'–' if r['binned'] is None else ('yes' if r['binned'] else 'no')} | "
                f"{_fmt_t(r['base_cold'])} | {_fmt_t(r['base_warm'])} | {_fmt_t(r['new_cold'])} | "
                f"{_fmt_t(r['new_warm'])} | {_fmt_t(r.get('new_refit', math.nan))} | {_fmt_r(r['speedup_cold'])} | "
                f"{_fmt_r(r['speedup_warm'])} | {_fmt_r(r.get('speedup_refit', math.nan))} | "
                f"{_fmt_n(r['base_cold_grads'])} / {_fmt_n(r['base_warm_grads'])} | {new_grads} | "
                f"{samplers} | {_fmt_us(r['t_grad'])} | "
                f"{_fmt_us(r['t_logp'])} | {_fmt_r(r['base_warm_overhead'])} | {_fmt_r(r['new_warm_overhead'])} |"
            )
        out.append("")
    return "\n".join(out)


def targets(rows: list[dict], auto: dict | None, ref_n: int = 10_000, big_n: int = 1_000_000) -> list[str]:
    """The issue's targets, each MET or MISSED with its figures (or NOT MEASURED)."""
    lines = []

    def verdict(ok):
        return "MET" if ok else "MISSED"

    ads = adapters()
    models = list(dict.fromkeys(r["model"] for r in rows))
    at_ref = {r["model"]: r for r in rows if r["n"] == ref_n}
    # 1. warm refit at N = ref_n >= 10x faster than the baseline, every model
    if at_ref:
        figs = [f"{m} {at_ref[m]['speedup_warm']:.1f}×" for m in models if m in at_ref]
        ok = all(at_ref[m]["speedup_warm"] >= 10 for m in at_ref)
        lines.append(f"- warm refit at N={ref_n:,} ≥ 10× faster than baseline, every model: **{verdict(ok)}** "
                     f"({', '.join(figs)})")
    else:
        lines.append(f"- warm refit at N={ref_n:,} ≥ 10×: NOT MEASURED (no N={ref_n:,} rows)")
    if not rows:
        lines = ["- fit targets: NOT MEASURED (part not run)"]
    else:
        lines += _fit_targets(rows, at_ref, models, ads, ref_n, big_n, verdict)
    # 5. auto >= 5x faster
    if auto:
        lines.append(f"- `ScoreMixture.auto` at N={auto['n']:,} ≥ 5× faster than the sum of its candidates' "
                     f"baseline fits: **{verdict(auto['speedup'] >= 5)}** ({auto['baseline_sum']:.1f} s / "
                     f"{auto['auto']:.1f} s = {auto['speedup']:.2f}×)")
    else:
        lines.append("- `ScoreMixture.auto` ≥ 5×: NOT MEASURED (part not run)")
    return lines


def _fit_targets(rows, at_ref, models, ads, ref_n, big_n, verdict) -> list[str]:
    lines = []
    # 2. cold no slower than the baseline (every model and N)
    slow = [f"{r['model']} N={r['n']:,} {r['speedup_cold']:.2f}×" for r in rows if r["speedup_cold"] < 1]
    worst = min(rows, key=lambda r: r["speedup_cold"])
    lines.append(f"- cold fit no slower than baseline (speed-up ≥ 1×, every model and N): **{verdict(not slow)}** "
                 f"(lowest {worst['model']} N={worst['n']:,} {worst['speedup_cold']:.2f}×"
                 + (f"; below 1×: {', '.join(slow)}" if slow else "") + ")")
    # 3. warm overhead <= 3x
    ov = [r for r in rows if np.isfinite(r["new_warm_overhead"])]
    unknown = [f"{r['model']} N={r['n']:,}" for r in rows if not np.isfinite(r["new_warm_overhead"])]
    bad = [f"{r['model']} N={r['n']:,} {r['new_warm_overhead']:.1f}×" for r in ov if r["new_warm_overhead"] > 3]
    if ov:
        worst = max(ov, key=lambda r: r["new_warm_overhead"])
        lines.append(f"- warm overhead (wall / gradient work) ≤ 3×: **{verdict(not bad)}** (highest {worst['model']} "
                     f"N={worst['n']:,} {worst['new_warm_overhead']:.1f}×"
                     + (f"; above 3×: {', '.join(bad)}" if bad else "")
                     + (f"; not countable: {', '.join(unknown)}" if unknown else "") + ")")
    else:
        lines.append("- warm overhead ≤ 3×: NOT MEASURED (no gradient counts)")
    # 4. binned fit at big_n within 2x of ref_n (new path, warm), models that bin
    binners = [m for m in models if ads[m].binned is not None]
    figs, oks = [], []
    for m in binners:
        r_big = next((r for r in rows if r["model"] == m and r["n"] == big_n), None)
        r_ref = at_ref.get(m)
        if r_big is None or r_ref is None:
            continue
        ratio = r_big["new_warm"] / r_ref["new_warm"]
        oks.append(ratio <= 2)
        figs.append(f"{m} {r_big['new_warm']:.1f} s / {r_ref['new_warm']:.1f} s = {ratio:.2f}× "
                    f"(binned at {ref_n:,}: {'yes' if r_ref['binned'] else 'no'})")
    if figs:
        lines.append(f"- binned fit at N={big_n:,} within 2× of N={ref_n:,} (new path, warm): "
                     f"**{verdict(all(oks))}** ({'; '.join(figs)})")
    else:
        lines.append(f"- binned fit at N={big_n:,} within 2× of N={ref_n:,}: NOT MEASURED (no N={big_n:,} rows)")
    return lines


def _git_rev() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=str(ROOT), timeout=10).stdout.strip() or "?"
    except (OSError, subprocess.SubprocessError):
        return "?"


def versions() -> str:
    import pymc
    import pytensor

    import bayeval

    try:
        import nutpie

        nut = f", nutpie {nutpie.__version__}"
    except ImportError:
        nut = ", nutpie not installed"
    return (f"Python {platform.python_version()}, NumPy {np.__version__}, PyMC {pymc.__version__}, "
            f"PyTensor {pytensor.__version__}{nut}, bayeval {bayeval.__version__} (git {_git_rev()})")


def backend_section(b: dict) -> list[str]:
    """The "Sampler backends" section from the saved backend run ``b``."""
    rows = b["rows"]
    lines = [
        "## Sampler backends",
        "",
        ("" if b.get("complete") else "**PARTIAL: the run stopped before every backend was measured.**\n\n")
        + f"Made by `{b['cmd']}` on {b['date']} in {b['elapsed']:.0f} s with {b['versions']}; {b['machine']}.",
        "",
        f"Settings: {b['settings']}. Each (model, backend) in a fresh process: a cold fit, then a warm refit on the "
        "next data of the same structure (as in the vetting loop), both through the public `fit(..., "
        "sampler=BACKEND)`; times are wall seconds of the whole `fit`. *ESS/s*: the warm refit's lowest bulk ESS "
        "over the model's parameters (`post.convergence['min_ess_bulk']`) per wall second. Ratios are to the C "
        "backend (`pymc`) measured in the same run (above 1×: better than C). BLAS and XLA single-threaded, "
        "`cores=1` (PyMC and nutpie run the chains one after the other; NumPyro and BlackJAX vectorize them). "
        "Single timings on a shared 2-core machine vary by tens of percent.",
        "",
    ]
    ok = [r for r in rows if not r["error"] and "speedup_warm" in r]
    if ok:
        lines.append("Summary (warm refit, backend against C in the same run):")
        lines.append("")
        for bk in dict.fromkeys(r["backend"] for r in rows):
            rs = [r for r in ok if r["backend"] == bk]
            if bk == "pymc" or not rs:
                continue
            figs = ", ".join(f"{r['model']} {r['speedup_warm']:.2f}× time, {r['ess_ratio']:.2f}× ESS/s" for r in rs)
            lines.append(f"- `{bk}`: {figs}")
        lines.append("")
    lines.append(backend_tables(rows))
    return lines


def splice_section(text: str, heading: str, section: str) -> str:
    """``text`` with its ``heading`` section (up to the next ``## ``) replaced by ``section``,
    or ``section`` added before the ``ScoreMixture.auto`` section (or at the end)."""
    lines = text.split("\n")
    if heading in lines:
        i = lines.index(heading)
        j = next((k for k in range(i + 1, len(lines)) if lines[k].startswith("## ")), len(lines))
        return "\n".join(lines[:i] + section.rstrip("\n").split("\n") + [""] + lines[j:])
    at = next((k for k, ln in enumerate(lines) if ln.startswith("## `ScoreMixture.auto`")), len(lines))
    return "\n".join(lines[:at] + section.rstrip("\n").split("\n") + [""] + lines[at:])


def report(rows, auto, *, cmd, settings, elapsed, complete, cold_compiledir, quick=False, backends=None,
           agreement=None, refits=None) -> str:
    load = _loadavg()
    head = [
        "# Fit speed: today's path against the public `fit`",
        "",
        ("**PROVISIONAL: a `--quick` run (short chains, small N, one family pair); the full run replaces "
         "it.**\n\n" if quick else "")
        + ("" if complete else "**PARTIAL: the run stopped before every model was measured.**\n\n")
        + f"Made by `{cmd}` on {datetime.date.today().isoformat()} in {elapsed:.0f} s with {versions()}"
        + (" (the git revision of the last of these runs; each run measured what it names)" if " ; " in cmd else "")
        + "; "
        f"{platform.machine()}, {os.cpu_count()} cores, load average {load} at the end.",
        "",
        f"Settings: {settings}. Single-threaded BLAS, `cores=1`.",
        "",
        "How to read it. *Baseline*: `M(...).build(data)` and `pm.sample(..., cores=1, "
        "discard_tuned_samples=False)` with PyMC's NUTS, the model built afresh for every fit. *New*: the public "
        "`M(...).fit(data, ...)`. *Cold*: the first fit in a fresh Python process (the imports excluded, the "
        "compilation included); *warm*: a second fit in the same process with the next data of the same "
        "structure (a few more vetted labels, new votes), as in a vetting loop; *refit*: a third fit in that "
        "process on the same data (the steady state of a vetting loop: what a structure compiles at its first "
        "refit -- importance sampling's batched functions -- is paid by then; – where not measured). "
        + ("Every process had its own empty PyTensor `compiledir`, so *cold* includes compiling the C code. "
           if cold_compiledir else
           "PyTensor keeps compiled C modules on disk (`~/.pytensor`), so a cold process reuses modules compiled "
           "by earlier runs: *cold* is compilation of the graph plus loading cached modules, not a first-ever "
           "compilation (run with `--cold-compiledir` for that). ")
        + "*Grads*: gradient evaluations of the fit (NUTS: sum of `n_steps` over chains and draws, tuning "
        "included; the new path's count comes from `post.sampling.n_grad_evals` where the posterior has it, "
        "else from `n_steps`; where the fit discarded its tuning draws the draws' steps are scaled by the "
        "baseline's ratio of all steps to the draws' steps on the same model and N, marked *est.*; for "
        "importance sampling without counters the proposals' logp evaluations, a lower bound, marked "
        "*proposals only*; *new sampler* is `post.sampling.sampler`, – where the posterior has none). *t/grad*, *t/logp*: median time of one `model.compile_dlogp()` / `compile_logp()` "
        "call at the initial point. *Overhead*: wall time / (grads × t/grad + logp-only evaluations × t/logp): "
        "1× would be a fit that does nothing but evaluate the gradient; below 1× where NUTS's fused "
        "logp-and-gradient call costs less than the separately compiled `compile_dlogp()` function. Single timings on a shared 2-core "
        "machine vary by tens of percent.",
        "",
        "## Targets",
        "",
        *targets(rows, auto),
        "",
        "## Per model",
        "",
        model_tables(rows),
    ]
    if backends:
        head += backend_section(backends)
    if agreement:
        head += agreement_section(agreement)
    if refits:
        head += refit_section(refits)
    if auto:
        head += [
            "## `ScoreMixture.auto`",
            "",
            f"N={auto['n']:,} items, draws = tune = {auto['draws']}: `ScoreMixture.auto(data, draws, tune, chains)` (its fits, LOO and predictive "
            f"checks of {auto['auto_candidates']} candidates) took **{auto['auto']:.1f} s**; the baseline, the sum "
            f"of today's fresh `pm.sample` fits of the {auto['baseline_candidates']} candidates alone (no LOO, no "
            f"check), took **{auto['baseline_sum']:.1f} s**: speed-up {auto['speedup']:.2f}×. Both in fresh "
            "processes" + (f", at git {auto['git']}." if auto.get("git") else "."),
            "",
        ]
        if auto.get("auto_per_candidate"):
            base = {r["pair"]: r["seconds"] for r in auto.get("baseline_per_candidate", [])}
            head += [
                "Per candidate (`auto`'s table: the sampler that drew it and the seconds of its fit and "
                "predictive check; the baseline's fresh `pm.sample` of the same pair):",
                "",
                "| candidate | sampler | auto s | baseline s | speed-up |",
                "|---|---|---:|---:|---:|",
            ]
            for r in auto["auto_per_candidate"]:
                b = base.get(r["pair"], float("nan"))
                head.append(f"| {r['pair']} | {r['sampler']} | {r['seconds']:.1f} | {b:.1f} | {b / r['seconds']:.2f}× |")
            head.append("")
    return "\n".join(head)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=["all", "fits", "auto"], default=None,
                    help="default: all (fits only with --quick)")
    ap.add_argument("--quick", action="store_true",
                    help="N = 10^3 and 10^4, draws = tune = 200, one ScoreMixture pair")
    ap.add_argument("--models", nargs="+", default=None, help="only these adapters (names as in the tables)")
    ap.add_argument("--sizes", type=int, nargs="+", default=None)
    ap.add_argument("--draws", type=int, default=None, help="draws = tune (default 1000, --quick 200)")
    ap.add_argument("--auto-draws", type=int, default=500,
                    help="draws = tune of the auto part (default 500, ScoreMixture.auto's own default)")
    ap.add_argument("--chains", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cold-compiledir", action="store_true",
                    help="give every fresh process an empty PyTensor compiledir (truly cold; slow)")
    ap.add_argument("--timeout", type=float, default=None, help="seconds per subprocess")
    ap.add_argument("--out", default=None, help="Markdown results file (default: benchmarks/results/fit_speed.md)")
    ap.add_argument("--redo-auto", action="store_true",
                    help="with --resume: measure the auto part again (the fits' rows are kept)")
    ap.add_argument("--resume", action="store_true",
                    help="keep the rows (and auto result) of the raw JSON next to --out; measure only the rest "
                         "(the settings must be the same)")
    ap.add_argument("--redo", nargs="+", default=[], metavar="MODEL",
                    help="with --resume: measure these models again (their kept rows are dropped)")
    ap.add_argument("--backends", nargs="*", default=None, metavar="BACKEND",
                    help=f"time the NUTS backends ({', '.join(BACKENDS)}; default all) on the NUTS-bound models "
                         "at N=10^4 (warm refit, ESS/s) and add the 'Sampler backends' section; keeps the other "
                         "sections of the results file")
    ap.add_argument("--agreement", action="store_true",
                    help="compare the public fit's posterior with a fresh NUTS run's on the same data, every model "
                         "(or --models) at N=10^4 (HumanRanking 1,000; --sizes gives one N for all), and add the "
                         "'Agreement with NUTS' section; keeps the other sections of the results file")
    ap.add_argument("--refits", action="store_true",
                    help="the vetting loop's refits from the previous fit (the NUTS-bound models, or --models, at "
                         "N=10^4; --sizes gives one N): a first fit and three refits against plain PyMC fits in "
                         "the same process, with their agreement; adds the 'Refits from the previous fit' section")
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one is not None:
        print(MARK + json.dumps(one(json.loads(args.one))), flush=True)
        return
    cmd = "python benchmarks/fit_speed.py " + " ".join(sys.argv[1:] if argv is None else argv)
    draws = args.draws or (200 if args.quick else 1000)
    sizes = tuple(args.sizes) if args.sizes else (QUICK_SIZES if args.quick else SIZES)
    models = args.models or (list(QUICK_MODELS) if args.quick else list(adapters()))
    unknown = set(models) - set(adapters())
    if unknown:
        ap.error(f"unknown models {sorted(unknown)}; choose from {list(adapters())}")
    part = args.part or ("fits" if args.quick else "all")
    out = pathlib.Path(args.out) if args.out else RESULTS / "fit_speed.md"
    settings = (f"draws = tune = {draws}, chains = {args.chains}, seed {args.seed}, N in "
                f"{', '.join(f'{n:,}' for n in sizes)}")
    t0 = time.time()
    kw = {"draws": draws, "tune": draws, "chains": args.chains, "seed": args.seed,
          "cold_compiledir": args.cold_compiledir, "timeout": args.timeout}
    rows, auto, backends = [], None, None
    raw = out.with_suffix(".json")  # the rows themselves, for --resume
    if args.backends is not None:
        return _main_backends(args, out, raw, cmd, draws)
    if args.agreement:
        return _main_agreement(args, out, raw, cmd, draws)
    if args.refits:
        return _main_refits(args, out, raw, cmd, draws)
    agreement = refits = None
    if raw.is_file():  # the other parts' results: kept
        backends = json.loads(raw.read_text()).get("backends")
        agreement = json.loads(raw.read_text()).get("agreement")
        refits = json.loads(raw.read_text()).get("refits")
    if args.resume and raw.is_file():
        saved = json.loads(raw.read_text())
        if saved["settings"] != {"draws": draws, "chains": args.chains, "seed": args.seed,
                                 "auto_draws": args.auto_draws, "cold_compiledir": args.cold_compiledir}:
            ap.error(f"--resume: {raw} was made with other settings: {saved['settings']}")
        rows, auto = saved["rows"], (None if args.redo_auto else saved["auto"])
        rows = [r for r in rows if r["model"] not in args.redo]
        cmd = saved["cmd"] + " ; " + cmd
        print(f"resuming: {len(rows)} row(s){' and the auto part' if auto else ''} from {raw}", flush=True)

    def write(rs, complete=False):
        if rs or auto:
            out.parent.mkdir(parents=True, exist_ok=True)
            raw.write_text(json.dumps({"cmd": cmd, "rows": rs, "auto": auto, "settings": {
                "draws": draws, "chains": args.chains, "seed": args.seed, "auto_draws": args.auto_draws,
                "cold_compiledir": args.cold_compiledir}, "backends": backends, "agreement": agreement, "refits": refits},
                indent=1))
            ns = sorted({int(r["n"]) for r in rs}) or list(sizes)  # resumed runs: every row's N, not this run's
            shown = settings.split(", N in ")[0] + ", N in " + ", ".join(f"{n:,}" for n in ns)
            out.write_text(report(rs, auto, cmd=cmd, settings=shown, elapsed=time.time() - t0, complete=complete,
                                  cold_compiledir=args.cold_compiledir, quick=args.quick, backends=backends,
                                  agreement=agreement, refits=refits))

    if part in ("all", "auto") and auto is None:  # first: one number, and a run cut short still has it
        print(f"ScoreMixture.auto at N=10,000 (draws = tune = {args.auto_draws}) ...", flush=True)
        auto = measure_auto(10_000, **{**kw, "draws": args.auto_draws, "tune": args.auto_draws})
        print(f"  auto {auto['auto']:.1f} s; sum of baseline candidate fits {auto['baseline_sum']:.1f} s; "
              f"speed-up {auto['speedup']:.2f}x", flush=True)
        write(rows)
    if part in ("all", "fits"):
        print(f"Fit speed ({settings}); baseline cold / warm, new cold / warm", flush=True)
        rows = measure(models, sizes, on_row=write, done=rows, **kw)
    if rows or auto:
        print("\nTargets:\n" + "\n".join(targets(rows, auto)))
        write(rows, complete=True)
        print(f"\nwrote {out}")



def _loadavg() -> str:
    return ", ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"


def _part_writer(out, raw, *, key, heading, render, cmd, versions_text, settings):
    """The record of one separately run part (``--backends``, ``--agreement``) and the
    callback that stores it under ``key`` in the raw JSON (the other parts' results kept)
    and splices its section (``render(meta)``: lines under ``heading``) into the results
    file, each time a row arrives."""
    saved = json.loads(raw.read_text()) if raw.is_file() else {"cmd": "", "rows": [], "auto": None, "settings": {}}
    t0, load = time.time(), _loadavg()
    meta = {"cmd": cmd, "date": datetime.date.today().isoformat(), "versions": versions_text,
            "settings": settings, "rows": [], "complete": False, "elapsed": 0.0}

    def write(rs, complete=False):
        meta.update(rows=rs, complete=complete, elapsed=time.time() - t0,
                    machine=f"{platform.machine()}, {os.cpu_count()} cores, load average {load} at the start and "
                            f"{_loadavg()} at the end (a shared machine)")
        saved[key] = meta
        out.parent.mkdir(parents=True, exist_ok=True)
        raw.write_text(json.dumps(saved, indent=1))
        out.write_text(splice_section(out.read_text() if out.is_file() else "", heading, "\n".join(render(meta))))

    return meta, write


def _part_sizes(args, models):
    return {m: min(args.sizes[0], max(adapters()[m].sizes)) for m in models} if args.sizes else None


def _main_backends(args, out, raw, cmd, draws):
    """The ``--backends`` part: measured, stored under "backends" in the raw JSON, written
    into the results file with the sections already there."""
    names = args.backends or list(BACKENDS)
    bad = set(names) - set(BACKENDS)
    if bad:
        raise SystemExit(f"unknown backends {sorted(bad)}; choose from {list(BACKENDS)}")
    models = args.models or list(BACKEND_MODELS)
    meta, write = _part_writer(out, raw, key="backends", heading="## Sampler backends", render=backend_section,
                               cmd=cmd, versions_text=f"Python {platform.python_version()}, {backend_versions()}, "
                                                     f"bayeval (git {_git_rev()})",
                               settings=f"draws = tune = {draws}, chains = {args.chains}, seed {args.seed}")
    print(f"Sampler backends ({meta['settings']}): {', '.join(names)}", flush=True)
    rows = measure_backends(models, names, draws=draws, tune=draws, chains=args.chains, seed=args.seed,
                            timeout=args.timeout, on_row=write, sizes=_part_sizes(args, models))
    write(rows, complete=True)
    print(f"\nwrote {out}")


def _main_agreement(args, out, raw, cmd, draws):
    """The ``--agreement`` part: measured, stored under "agreement" in the raw JSON, written
    into the results file with the sections already there."""
    import arviz

    models = args.models or list(adapters())
    meta, write = _part_writer(out, raw, key="agreement", heading="## Agreement with NUTS",
                               render=agreement_section, cmd=cmd,
                               versions_text=f"{versions()}, ArviZ {arviz.__version__}",
                               settings=f"draws = tune = {draws}, chains = {args.chains}, seed {args.seed}")
    print(f"Agreement with NUTS ({meta['settings']})", flush=True)
    rows = measure_agreement(models, draws=draws, tune=draws, chains=args.chains, seed=args.seed,
                             timeout=args.timeout, on_row=write, sizes=_part_sizes(args, models))
    write(rows, complete=True)
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
