"""Replay an active-testing loop on a fully labeled set, with an oracle.

:func:`simulate` answers "how fast does each vetting strategy, with each estimator,
converge to the true performance on data like mine?" -- the active-testing paper's
Figures 5-8 -- by vetting batches from the true labels and recording, after every
batch, the vetted-only, naive and learned (model) estimates against the truth.
"""

from __future__ import annotations

import math
import time

import numpy as np
import xarray as xr

from ..core import _validate as V
from ..core._defaults import HDI_PROB
from ..core._progress import Bar
from ..core.data import EvalData
from ..core.evaluate import check_metric_options, naive, point_metric, vetted_only
from ..core.model import Model
from ..core.posterior import Posterior
from ..core.summary import hdi
from .select import STRATEGIES, select

__all__ = ["simulate", "ESTIMATORS"]

ESTIMATORS = ("vetted_only", "naive", "learned")
#: two systems' true values this close are a tie (``misranked`` is NaN): the same metric
#: summed in another order can differ in its last bits (``benchmarks/compare.py`` uses the same)
TIE_TOL = 1e-9


def _fit(model, data: EvalData, seed: int, fit_kwargs: dict, progressbar: bool, previous=None) -> Posterior:
    if isinstance(model, Model):  # the model contract: the same keywords for every model
        kwargs = dict(fit_kwargs)
        kwargs.setdefault("random_seed", seed)
        kwargs.setdefault("progressbar", progressbar)
        kwargs.setdefault("warn", False)
        if previous is not None:  # the run's last fit: reweighted to the new labels where reliable
            kwargs.setdefault("previous", previous)
        post = model.fit(data, **kwargs)
    elif callable(getattr(model, "fit", None)):  # another object with a fit(data, ...)
        post = model.fit(data, **fit_kwargs)
    else:
        post = model(data)
    if not isinstance(post, Posterior):
        raise TypeError(f"The model returned {type(post).__name__}, not a bayeval Posterior.")
    return post


def _with_scores(data: EvalData, scores) -> EvalData:
    feats = None
    if data.features is not None:
        import pandas as pd

        feats = pd.DataFrame(data.features, columns=data.feature_names)
    if hasattr(scores, "to_numpy"):  # the other system's scores are the data's items in order
        scores = scores.to_numpy()
    return EvalData(
        scores,
        data.labels,
        noisy_labels=data.noisy_labels,
        predictions=data.predictions,
        categories=data.categories,
        features=feats,
        item_ids=data.item_ids,
    )


def _candidates(data: EvalData, candidates, metric_kwargs) -> np.ndarray:
    n = data.n_items
    if candidates is None:
        mask = np.ones(n, dtype=bool)
    elif isinstance(candidates, str):
        V.check_choice(candidates, "candidates", ("top_k",))
        if "k" not in metric_kwargs:
            raise ValueError("candidates='top_k' needs the metric's k (e.g. k=48) among the options.")
        k = int(np.max(np.atleast_1d(metric_kwargs["k"])))
        mask = np.zeros(n, dtype=bool)
        codes = data.category_codes if data.has_categories else np.zeros(n, dtype=np.int64)
        for c in np.unique(codes):
            idx = np.flatnonzero(codes == c)
            order = idx[np.argsort(-data.scores[idx], kind="stable")]  # ties by item order, as P@K
            mask[order[:k]] = True
    else:
        arr = np.asarray(candidates)
        if arr.dtype == bool:
            if arr.shape != (n,):
                raise ValueError(f"A boolean `candidates` mask must have shape ({n},), got {arr.shape}.")
            mask = arr.copy()
        else:
            if arr.ndim != 1 or arr.dtype.kind not in "iu":
                raise TypeError("`candidates` must be None, 'top_k', a boolean mask or integer positions.")
            if arr.size and (arr.min() < 0 or arr.max() >= n):
                raise ValueError(f"`candidates` positions must lie in [0, {n}).")
            mask = np.zeros(n, dtype=bool)
            mask[arr] = True
    return mask


def _headline(values: np.ndarray) -> float:
    """Mean over categories (NaN categories skipped), or the value itself."""
    v = np.atleast_1d(np.asarray(values, dtype=np.float64))
    if np.all(np.isnan(v)):
        return float("nan")
    return float(np.nanmean(v))


def _n_budget(budget, n_pool: int, n_left: int) -> int:
    """Labels to spend: a fraction of the candidate pool, or a number; at most what is left."""
    if isinstance(budget, bool) or not isinstance(budget, int | float | np.integer | np.floating):
        raise TypeError(f"`budget` must be a fraction in (0, 1] or a number of labels, got {budget!r}.")
    if isinstance(budget, float | np.floating):
        if not 0 < budget <= 1:
            raise ValueError(f"A fractional `budget` must lie in (0, 1], got {budget}.")
        n_budget = math.ceil(budget * n_pool)
    else:
        n_budget = V.as_positive_int(int(budget), "budget")
    n_budget = min(n_budget, n_left)
    if n_budget == 0:
        raise ValueError("There is nothing left to vet among the candidates.")
    return n_budget


class _Study:
    """What every replay of :func:`simulate` shares: the data, the oracle, the model, the
    metric and its three estimators, and where vetting may happen."""

    def __init__(self, data: EvalData, truth: np.ndarray, model, metric, name: str, metric_kwargs: dict, *,
                 hdi_prob: float, fit_kwargs: dict, progressbar: bool, mask: np.ndarray):
        self.data, self.truth, self.model, self.metric, self.name = data, truth, model, metric, name
        self.metric_kwargs, self.hdi_prob, self.fit_kwargs = metric_kwargs, hdi_prob, fit_kwargs
        self.progressbar, self.mask = progressbar, mask
        self.exclude = np.flatnonzero(~mask)
        self.has_cat = data.has_categories
        self.cat_kw = {"category": "each"} if self.has_cat else {}
        self.n_cat = data.category_names.size if self.has_cat else 1
        self.has_naive = data.noisy_labels is not None

    def point(self, fn, d: EvalData, **kw) -> np.ndarray:
        """A point estimator (vetted-only, naive) of the metric, per category."""
        try:
            value = fn(d, self.metric, **self.cat_kw, **self.metric_kwargs, **kw)
            return np.atleast_1d(value.values).astype(float)
        except ValueError:
            return np.full(self.n_cat, np.nan)  # e.g. vetted_only with nothing vetted

    def true_of(self, d: EvalData) -> np.ndarray:
        """The metric on ``d`` with every label true (per category), by the posterior metrics' own
        conventions (e.g. P@K of a category with fewer than K items divides by K), so that the learned
        estimate is compared with the truth it estimates. (The vetted-only estimator's conventions
        differ: it is not applicable to P@K until K items are vetted.)"""
        value = point_metric(d, np.asarray(self.truth), self.metric, {**self.cat_kw, **self.metric_kwargs})
        return np.atleast_1d(value.values).astype(float)

    def estimates(self, d: EvalData, post: Posterior):
        """The three estimators (headline and per category) and the learned one's HDIs."""
        n_cat, hdi_prob = self.n_cat, self.hdi_prob
        q = post.metric(self.metric, **self.cat_kw, **self.metric_kwargs)
        draws = q.values.reshape(-1, n_cat) if self.has_cat else q.values.reshape(-1, 1)
        if draws.shape[1] != n_cat:
            raise ValueError(f"simulate needs a scalar metric per category; {self.name!r} gave shape {q.shape}.")
        head_draws = draws.mean(axis=1)
        lo, hi = hdi(head_draws, hdi_prob)
        cat_lo, cat_hi = np.array([hdi(draws[:, c], hdi_prob) for c in range(n_cat)]).T
        naive_cat = self.point(naive, d) if self.has_naive else np.full(n_cat, np.nan)
        cat = np.stack([self.point(vetted_only, d), naive_cat, draws.mean(axis=0)])
        head = np.array([_headline(c) for c in cat])
        return head, cat, float(lo), float(hi), cat_lo, cat_hi

    def fit(self, d: EvalData, seed: int, previous: Posterior | None = None) -> Posterior:
        return _fit(self.model, d, seed, self.fit_kwargs, self.progressbar, previous)


class _Records:
    """The estimates of every strategy, trial and step (NaN until recorded)."""

    def __init__(self, n_strategies: int, trials: int, n_steps: int, n_cat: int):
        shape = (n_strategies, trials, n_steps)
        self.est = np.full(shape + (3,), np.nan)
        self.est_cat = np.full(shape + (3, n_cat), np.nan)
        self.est_b = np.full(shape + (3,), np.nan)
        self.lower = np.full(shape, np.nan)
        self.upper = np.full(shape, np.nan)
        self.lower_cat = np.full(shape + (n_cat,), np.nan)
        self.upper_cat = np.full(shape + (n_cat,), np.nan)
        self.n_vetted = np.zeros(shape, dtype=np.int64)


def _replay(study: _Study, rec: _Records, at: tuple[int, int], strategy: str, seeds: np.ndarray, *,
            n_steps: int, batch_size: int, n_budget: int, data_b: EvalData | None, first: dict | None = None) -> None:
    """One trial of one strategy: fit, record, select a batch, vet it; ``n_steps`` times.

    ``first``: the trial's fits before the first batch (the same data for every strategy),
    filled by the first strategy's run and taken as they are by the others (None: fit here)."""
    data, mask = study.data, study.mask
    d, post = data, None
    first = {} if first is None else first
    for step in range(n_steps):
        idx = (*at, step)
        rec.n_vetted[idx] = int((d.vetted & mask).sum())
        if step == 0 and "post" in first:
            post = first["post"]
        else:
            post = study.fit(d, int(seeds[step, 0]), previous=post)
        if step == 0:
            first["post"] = post
        head, cat, lo, hi, cat_lo, cat_hi = study.estimates(d, post)
        rec.est[idx], rec.est_cat[idx] = head, cat
        rec.lower[idx], rec.upper[idx] = lo, hi
        rec.lower_cat[idx], rec.upper_cat[idx] = cat_lo, cat_hi
        if data_b is not None:
            db = _with_scores(d, data_b.scores)
            if step == 0 and "post_b" in first:
                post_b = first["post_b"]
            else:
                post_b = study.fit(db, int(seeds[step, 1]))
            if step == 0:
                first["post_b"] = post_b
            rec.est_b[idx] = study.estimates(db, post_b)[0]
        if step == n_steps - 1:
            break
        spent = rec.n_vetted[idx] - int((data.vetted & mask).sum())
        size = min(batch_size, n_budget - spent)
        sel_kw = dict(study.metric_kwargs)
        if study.has_cat:
            sel_kw["category"] = "mean"
        pos = select(
            post,
            metric=study.metric,
            size=size,
            strategy=strategy,
            random_seed=int(seeds[step, 2]),
            exclude=study.exclude,
            **sel_kw,
        )
        pos = np.asarray(pos, dtype=np.int64)
        d = d.with_labels(d.item_ids[pos], study.truth[pos])


def _run(study: _Study, strategy: str, seeds: np.ndarray, n_steps: int, batch_size: int, n_budget: int,
         data_b: EvalData | None, n_cat: int) -> _Records:
    """One trial of one strategy as a task of its own (on a Dask worker): its records."""
    rec = _Records(1, 1, n_steps, n_cat)
    _replay(study, rec, (0, 0), strategy, seeds, n_steps=n_steps, batch_size=batch_size, n_budget=n_budget,
            data_b=data_b)
    return rec


def _run_seeds(trial_seed: np.random.SeedSequence, S: int, K: int, share_first_fit: bool) -> np.ndarray:
    """The seeds of one trial, ``(strategy, step, [fit, fit of other_scores, selection])``;
    with ``share_first_fit`` every strategy's fits before the first batch take the first
    strategy's seeds (the same data and seed: the same fit)."""
    seeds = trial_seed.generate_state(S * K * 3).reshape(S, K, 3)
    if share_first_fit:
        seeds[1:, 0, :2] = seeds[0, 0, :2]
    return seeds


def _fan_out(study: _Study, rec: _Records, strategies, trial_seeds, *, client, bar, progress, share_first_fit: bool,
             **run_kw) -> None:
    """Every trial of every strategy as one task on ``client``; their records into ``rec``.

    Each run has the seeds the serial loop gives it, so the records are the serial ones
    (a fit the serial loop shares between strategies, each task makes itself with the
    same seed)."""
    from ..core.distributed import fan_out

    S, T = len(strategies), len(trial_seeds)
    tasks, where = {}, {}
    for t in range(T):
        seeds = _run_seeds(trial_seeds[t], S, run_kw["n_steps"], share_first_fit)
        for s_i, strategy in enumerate(strategies):
            name = f"trial {t + 1} {strategy}"
            tasks[name] = (study, strategy, seeds[s_i], run_kw["n_steps"], run_kw["batch_size"],
                           run_kw["n_budget"], run_kw["data_b"], study.n_cat)
            where[name] = (s_i, t)
    done = []

    def said(line: str) -> None:
        done.append(line)
        bar.update(f"simulate: {line}", completed=len(done))
        if progress is not None:
            progress(f"simulate: {len(done)}/{S * T} runs; {line}")

    runs = fan_out(_run, tasks, client=client, what="simulation run", progress=said)
    for name, part in runs.items():
        s_i, t = where[name]
        for field, values in vars(part).items():
            getattr(rec, field)[s_i, t] = values[0, 0]


def _dataset(study: _Study, rec: _Records, strategies, *, true_cat, true_b, n_pool: int, n_budget: int,
             batch_size: int) -> xr.Dataset:
    """The study's results as the Dataset :func:`simulate` returns."""
    true_value = _headline(true_cat)
    lower, upper, est = rec.lower, rec.upper, rec.est
    S, T, K = rec.n_vetted.shape
    coords = {"strategy": list(strategies), "trial": np.arange(T), "step": np.arange(K), "estimator": list(ESTIMATORS)}
    dims4 = ("strategy", "trial", "step", "estimator")
    dims3 = ("strategy", "trial", "step")
    ds = xr.Dataset(
        {
            "n_vetted": (dims3, rec.n_vetted),
            "fraction_vetted": (dims3, rec.n_vetted / max(n_pool, 1)),
            "estimate": (dims4, est),
            "abs_error": (dims4, np.abs(est - true_value)),
            "true_value": ((), true_value),
            "lower": (dims3, lower),
            "upper": (dims3, upper),
            "covered": (dims3, (lower <= true_value) & (true_value <= upper)),
        },
        coords=coords,
        attrs={
            "metric": study.name,
            "metric_kwargs": repr(study.metric_kwargs),
            "hdi_prob": study.hdi_prob,
            "n_candidates": n_pool,
            "budget": n_budget,
            "batch_size": batch_size,
        },
    )
    if study.has_cat:
        ds = ds.assign_coords(category=study.data.category_names)
        ds["estimate_category"] = (dims4 + ("category",), rec.est_cat)
        ds["true_category"] = (("category",), true_cat)
        ds["category_abs_error"] = np.abs(ds["estimate_category"] - ds["true_category"])
        ds["lower_category"] = (dims3 + ("category",), rec.lower_cat)
        ds["upper_category"] = (dims3 + ("category",), rec.upper_cat)
        ds["covered_category"] = (ds["lower_category"] <= ds["true_category"]) & (
            ds["true_category"] <= ds["upper_category"]
        )
    if true_b is not None:
        tb = _headline(true_b)
        ds["estimate_other"] = (dims4, rec.est_b)
        ds["true_value_other"] = ((), tb)
        # 1.0 / 0.0 where both estimates exist, NaN where either does not (naive without noisy
        # labels, vetted-only before anything is vetted) and where the true values tie (within
        # rounding, as benchmarks/compare.py): no order to get right or wrong
        wrong = (np.sign(est - rec.est_b) != np.sign(true_value - tb)).astype(np.float64)
        tie = bool(np.isfinite(true_value) and np.isfinite(tb) and abs(true_value - tb) <= TIE_TOL)
        ds["misranked"] = (dims4, np.where(np.isnan(est) | np.isnan(rec.est_b) | tie, np.nan, wrong))
    return ds


def simulate(
    data: EvalData,
    truth,
    model,
    *,
    metric: str = "precision_at_k",
    strategies=("random", "expected_change"),
    budget: float | int = 0.5,
    batch_size: int | None = None,
    trials: int = 3,
    candidates=None,
    hdi_prob: float = HDI_PROB,
    other_scores=None,
    fit_kwargs: dict | None = None,
    random_seed: int | np.random.SeedSequence | np.random.Generator | None = None,
    progressbar: bool = False,
    progress=None,
    client=None,
    share_first_fit: bool = True,
    **metric_kwargs,
) -> xr.Dataset:
    """Replay the vetting loop with the true labels as oracle, for several strategies.

    For each trial and strategy the loop starts from the labels vetted in ``data``,
    and after every batch records the three estimators of the metric: vetted-only
    (eq. 3 of the active-testing paper), naive (noisy labels for unvetted items,
    eq. 5; needs noisy labels) and learned (the model's posterior mean, with its
    HDI). With categories the metric is computed per category and the headline
    value is the mean over categories (categories where vetted-only is not yet
    defined are skipped in its mean).

    Parameters
    ----------
    data : EvalData
        Scores (and noisy labels, categories, features as the model needs).
    truth : array_like of 0/1, shape (n_items,)
        The true labels: the oracle, and the reference for the errors.
    model : object with ``fit(data, ...) -> Posterior`` or callable ``data -> Posterior``
    metric : str
        A scalar metric (``"precision_at_k"``, ``"average_precision"``...). The default,
        ``"precision_at_k"``, needs ``k`` among ``metric_kwargs`` (``k=48``): there is no
        default ``k``, and a call without one is refused before any fit.
    strategies : sequence of str
        From :data:`bayeval.active.select.STRATEGIES`.
    budget : float in (0, 1] or int
        Labels to spend: a fraction of the candidate pool, or a number.
    batch_size : int, optional
        Labels per batch (default: a tenth of the budget).
    trials : int
        Independent replays (different seeds for the fits and random choices).
    candidates : None, "top_k", boolean mask or positions
        Items eligible for vetting. ``"top_k"`` = the top-k list of each category
        (for P@K only those items matter; the paper vets "% of the top-k lists").
    hdi_prob : float
        Probability of the learned estimator's credible interval.
    other_scores : array_like, optional
        Scores of a second system on the same items: its estimates are computed on
        the same vetted labels (a second model fit per step), and ``misranked``
        records whether each estimator orders the two systems wrongly (Figure 8):
        1.0 (wrongly) or 0.0 (rightly), a float array, NaN where either system's
        estimate is undefined (the naive estimator without noisy labels, vetted-only
        before anything is vetted), which ``ds.misranked.mean("trial")`` skips. Where
        the two systems' true values tie (``true_value`` and ``true_value_other`` within
        ``TIE_TOL``) there is no right order, and ``misranked`` is NaN throughout.
    fit_kwargs : dict, optional
        Passed to ``model.fit``.
    random_seed : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
    progressbar : bool
        One progress bar for the whole study (runs of a trial and strategy done, the
        time left), drawn once it has run about 2 s; the fits inside show none of
        their own. Off by default.
    progress : callable, optional
        Called with a one-line message after each trial of each strategy (how many
        are done, the time so far and an estimate of the time left); ``print`` works.
    client : distributed.Client, optional
        Run every trial of every strategy as one Dask task on this client
        (:func:`bayeval.core.distributed.open_client`); each run has the seeds the
        serial loop gives it, so the records are the serial ones. None (the default):
        one run after another in this process. The model (and ``fit_kwargs``) are sent to
        the workers, so they must be picklable (a lambda is, through cloudpickle).
    share_first_fit : bool, default True
        Fit the model before the first batch once per trial and start every strategy
        from that fit (it sees the same data whatever the strategy; made with the
        first strategy's seed). False: each strategy fits it with a seed of its own,
        as before this option existed (one more fit per strategy after the first; the
        other strategies' records then differ by Monte Carlo error, not in
        distribution). On a ``client`` each run makes the shared fit itself, with the
        same seed, so the records are the serial ones.
    **metric_kwargs
        Options of the metric (``k=48``).

    Returns
    -------
    xarray.Dataset
        Dims ``strategy, trial, step, estimator`` (and ``category`` with categories).
        Variables: ``n_vetted``, ``fraction_vetted`` (of the candidate pool),
        ``estimate``, ``abs_error``, ``true_value``; for the learned estimator
        ``lower``, ``upper``, ``covered``; with categories ``estimate_category``,
        ``true_category``, ``category_abs_error`` and the learned estimator's
        per-category interval ``lower_category``, ``upper_category``,
        ``covered_category``; with ``other_scores`` ``estimate_other``,
        ``true_value_other`` and ``misranked``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import EvalData, Posterior
    >>> from bayeval.active import simulate
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.integers(0, 2, 40)
    >>> data = EvalData(rng.random(40), noisy_labels=truth)
    >>> model = lambda d: Posterior.from_probabilities(d, np.full(40, 0.5), draws=100, random_seed=0)
    >>> ds = simulate(data, truth, model, metric="precision_at_k", k=10, budget=10, batch_size=5,
    ...               trials=2, strategies=("random",), random_seed=0)
    >>> ds["estimate"].dims
    ('strategy', 'trial', 'step', 'estimator')
    >>> float(ds["abs_error"].sel(estimator="naive").max())   # noisy labels = truth here
    0.0
    """
    if not isinstance(data, EvalData):
        raise TypeError(f"`data` must be an EvalData, got {type(data).__name__}.")
    truth = V.as_binary_vector(truth, "truth").astype(np.int8)
    V.check_same_length(data.n_items, "truth", truth.size)
    vet = data.vetted
    if np.any(data.labels[vet] != truth[vet]):
        raise ValueError("Some vetted labels in `data` disagree with `truth`; the oracle must agree with them.")
    if not (callable(model) or callable(getattr(model, "fit", None))):
        raise TypeError("`model` must have fit(data, ...) -> Posterior or be a callable data -> Posterior.")
    # a missing `k` (the default metric needs one) fails here, before any fit
    name = check_metric_options(metric, metric_kwargs, how=(
        f"simulate(..., metric={metric!r}, {{kw}}), or a metric that needs none (metric='average_precision')"
        if isinstance(metric, str) else "simulate(..., {kw})"))
    if isinstance(strategies, str):
        strategies = (strategies,)
    strategies = tuple(V.check_choice(s, "strategies", STRATEGIES) for s in strategies)
    if not strategies:
        raise ValueError("Give at least one strategy.")
    trials = V.as_positive_int(trials, "trials")
    if not isinstance(share_first_fit, bool | np.bool_):
        raise TypeError(f"`share_first_fit` must be True or False, got {share_first_fit!r}.")
    if client is not None:
        from ..core.distributed import check_client

        client = check_client(client)
    hdi_prob = V.as_probability(hdi_prob, "hdi_prob", open_interval=True)
    fit_kwargs = dict(fit_kwargs or {})
    mask = _candidates(data, candidates, metric_kwargs)
    pool = mask & ~data.vetted
    n_pool = int(mask.sum())
    n_budget = _n_budget(budget, n_pool, int(pool.sum()))
    batch_size = V.as_positive_int(batch_size, "batch_size") if batch_size is not None else max(1, round(n_budget / 10))
    n_steps = math.ceil(n_budget / batch_size) + 1

    study = _Study(data, truth, model, metric, name, metric_kwargs, hdi_prob=hdi_prob, fit_kwargs=fit_kwargs,
                   progressbar=progressbar, mask=mask)
    data_b = _with_scores(data, other_scores) if other_scores is not None else None
    true_cat = study.true_of(data)
    true_b = study.true_of(data_b) if data_b is not None else None
    S, T, K = len(strategies), trials, n_steps
    rec = _Records(S, T, K, study.n_cat)
    trial_seeds = V.as_seed_sequence(random_seed).spawn(T)

    if progress is not None and not callable(progress):
        raise TypeError(f"`progress` must be a function taking one message (e.g. print), got {progress!r}.")
    t_start = time.perf_counter()
    with Bar(f"simulate: {T * S} runs", total=T * S, enabled=bool(progressbar)) as bar:
        if client is not None:
            _fan_out(study, rec, strategies, trial_seeds, client=client, bar=bar, progress=progress, n_steps=K,
                     batch_size=batch_size, n_budget=n_budget, data_b=data_b, share_first_fit=share_first_fit)
        for t in range(T if client is None else 0):
            seeds = _run_seeds(trial_seeds[t], S, K, share_first_fit)
            first = {} if share_first_fit else None  # the trial's fits before the first batch
            for s_i, strategy in enumerate(strategies):
                if progress is not None and (t or s_i):
                    done = t * S + s_i
                    spent = time.perf_counter() - t_start
                    progress(
                        f"simulate: {done}/{T * S} runs done ({spent:.0f} s; about "
                        f"{spent / done * (T * S - done):.0f} s left); now trial {t + 1}, {strategy}"
                    )
                bar.update(f"simulate: trial {t + 1}/{T}, {strategy}")
                _replay(study, rec, (s_i, t), strategy, seeds[s_i], n_steps=K, batch_size=batch_size,
                        n_budget=n_budget, data_b=data_b, first=first)
                bar.update(completed=t * S + s_i + 1)
    return _dataset(study, rec, strategies, true_cat=true_cat, true_b=true_b, n_pool=n_pool, n_budget=n_budget,
                    batch_size=batch_size)
